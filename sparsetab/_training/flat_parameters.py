"""A network's parameters as views of one buffer, so that clipping and Adam take one tensor, not dozens.

TabNet has many small parameter tensors (56 in the reference configuration of benchmarks/speed.py, about
7,000 numbers in all). Per-tensor overheads then dominate the optimizer: gradient clipping and a fused
Adam step over the separate tensors took about 0.5 ms of a 10 ms training step, over one flat tensor
about 0.17 ms (measured on 2 CPU cores, torch 2.13).

The optimizer's state is stored outside training in the layout of ``torch.optim.Adam`` over the
separate parameters (as model files written before this module existed hold it);
:meth:`FlatParameters.to_flat_state` and :meth:`FlatParameters.from_flat_state` convert between that
layout and the flat one.
"""

import torch

__all__ = ["FlatParameters"]


class FlatParameters:
    """Make ``parameters`` views of one flat leaf tensor for the duration of training.

    While the object is active, every parameter's data lives in ``flat`` (one contiguous buffer in
    parameter order); an in-place update of ``flat`` (Adam's) updates the parameters and a copy into
    a parameter (``load_state_dict``) writes into ``flat``. :meth:`release` gives each parameter
    storage of its own again, so that nothing outside training sees shared storage (model files,
    pickles, exports); leaving a ``with`` block on the object calls it.

    Parameters
    ----------
    parameters : list of torch.nn.Parameter
        Dense parameters of one dtype and device, all requiring gradients (see :meth:`supports`).

    Attributes
    ----------
    flat : torch.Tensor of shape (n_numbers,)
        The leaf tensor the optimizer updates. Its ``grad`` is one buffer that lives as long as the
        object, and every parameter's ``grad`` is a view of it (see :meth:`zero_gradients`), so that
        backward passes accumulate straight into the buffer the optimizer reads.
    """

    def __init__(self, parameters):
        self.parameters = list(parameters)
        self.shapes = [parameter.shape for parameter in self.parameters]
        self.sizes = [parameter.numel() for parameter in self.parameters]
        with torch.no_grad():
            flat = torch.cat([parameter.reshape(-1) for parameter in self.parameters])
        for parameter, view in zip(self.parameters, flat.split(self.sizes), strict=True):
            parameter.data = view.view(parameter.shape)
        self.flat = flat.requires_grad_()
        # The gradients live in one buffer for the whole run: a gradient concatenated afresh each step was one
        # large allocation a step, which glibc returned to the system and faulted back in, page by page; with a
        # 990-wide embedded input (breast_cancer) the concatenation took about 0.7 ms of a 16 ms step.
        self.flat.grad = torch.zeros_like(flat)
        self._attach_gradients()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.release()

    @staticmethod
    def supports(parameters):
        """Whether the parameters can share one buffer.

        Parameters
        ----------
        parameters : list of torch.nn.Parameter

        Returns
        -------
        bool
            True when there is at least one, all are dense, require gradients, and have one dtype and
            device.
        """
        if not parameters:
            return False
        first = parameters[0]
        return all(
            parameter.requires_grad
            and parameter.layout == torch.strided
            and parameter.dtype == first.dtype
            and parameter.device == first.device
            for parameter in parameters
        )

    def _attach_gradients(self):
        for parameter, view in zip(self.parameters, self.flat.grad.split(self.sizes), strict=True):
            parameter.grad = view.view(parameter.shape)

    def zero_gradients(self):
        """Set every gradient to zero before a backward pass, in the buffer the optimizer reads.

        Each parameter's ``grad`` is (again) a view of ``flat.grad``, so that a backward pass, which
        adds into a gradient that exists (autograd's accumulation outside grad mode), fills
        ``flat.grad`` with no copy; a parameter the pass does not use keeps a zero gradient. A
        ``grad`` replaced or set to None in between (by a hook, or by ``optimizer.zero_grad``) is
        re-attached.
        """
        if self.flat.grad is None:  # optimizer.zero_grad(set_to_none=True) on the flat tensor
            self.flat.grad = torch.zeros_like(self.flat)
        else:
            self.flat.grad.zero_()
        buffer = self.flat.grad
        if any(parameter.grad is None or parameter.grad._base is not buffer for parameter in self.parameters):
            self._attach_gradients()

    def release(self):
        """Give every parameter storage of its own again (with its current values); drop the gradients."""
        for parameter in self.parameters:
            parameter.data = parameter.data.clone()
            parameter.grad = None
        self.flat.grad = None

    def to_flat_state(self, state):
        """Convert an Adam ``state_dict`` over the separate parameters to one over ``flat``.

        Parameters
        ----------
        state : dict
            ``torch.optim.Adam.state_dict()`` of an optimizer over the parameters, in order, in one
            parameter group.

        Returns
        -------
        dict
            The state for an Adam optimizer over ``[flat]``: moments concatenated in parameter order
            (zeros for a parameter that has no state yet), step count the largest of the parameters'.
        """
        (group,) = state["param_groups"]
        per_parameter = [state["state"].get(index) for index in group["params"]]
        flat_group = {**group, "params": [0]}
        present = [entry for entry in per_parameter if entry is not None]
        if not present:
            return {"state": {}, "param_groups": [flat_group]}
        flat_state = {"step": max(present, key=lambda entry: float(entry["step"]))["step"].clone()}
        for key in ("exp_avg", "exp_avg_sq"):
            flat_state[key] = torch.cat(
                [
                    entry[key].reshape(-1) if entry is not None else self.flat.new_zeros(size)
                    for entry, size in zip(per_parameter, self.sizes, strict=True)
                ]
            )
        return {"state": {0: flat_state}, "param_groups": [flat_group]}

    def from_flat_state(self, state):
        """Convert an Adam ``state_dict`` over ``flat`` to one over the separate parameters.

        Parameters
        ----------
        state : dict
            ``torch.optim.Adam.state_dict()`` of the optimizer over ``[flat]``.

        Returns
        -------
        dict
            The same state in the layout of an Adam optimizer over the parameters, in order: what
            :meth:`to_flat_state` reads.
        """
        (group,) = state["param_groups"]
        per_parameter_group = {**group, "params": list(range(len(self.parameters)))}
        if not state["state"]:
            return {"state": {}, "param_groups": [per_parameter_group]}
        flat_state = state["state"][0]
        moments = {key: flat_state[key].split(self.sizes) for key in ("exp_avg", "exp_avg_sq")}
        per_parameter = {
            index: {
                "step": flat_state["step"].clone(),
                **{key: moments[key][index].view(shape).clone() for key in moments},
            }
            for index, shape in enumerate(self.shapes)
        }
        return {"state": per_parameter, "param_groups": [per_parameter_group]}
