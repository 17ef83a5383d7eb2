"""The training step captured once per batch shape and replayed: one CUDA graph a step on CUDA (issue 34, item 3).

An eager step on a GPU is about 900 operator calls from the host, each a kernel launch of some microseconds, while
the kernels themselves take a fraction of that at TabNet's sizes: the device waits for the host. A CUDA graph
records the step's kernels once and replays them with one call (torch.cuda.CUDAGraph; NVIDIA's CUDA Graphs). A
replayed step runs the recorded kernels on the recorded memory and runs no Python, so the step must:

- read nothing from the host and copy nothing to the device in a blocking way (``sparsetab._host_syncs`` counts
  both; the tests assert none in a step);
- take everything that changes from step to step from device memory: the batch is copied into fixed input
  buffers, the learning rate is read from a table of the run's rates by a step counter on the device, the batch
  norms update their running statistics on the device at once (``GhostBatchNorm.updating_on_device``), the
  moving average of the weights counts its updates on the device, and Adam(W) runs with ``capturable=True``
  (its step count on the device) and a learning rate held in a device tensor.

Each batch shape (an epoch's batches differ by at most one row) runs :data:`WARMUP_STEPS` steps eagerly (which
initialise the optimizer's state and the libraries' workspaces, on a side stream as CUDA requires), is captured,
and is replayed from then on. Everything is per call of ``train_network``: a ``partial_fit`` or ``warm_start`` call,
a changed learning rate or a new network gets new graphs.

Where there is no CUDA graph (the CPU, in the tests) the same body runs as a plain function: "capture" records
nothing and "replay" calls the body on the fixed buffers. That is how the tests check, on the CPU, that the body
reproduces the eager step (up to rounding) with none of the Python-side state that a replay would not see.
"""

import collections
import contextlib

import torch

from .._warnings import warn
from ..network.blocks import batch_norms_updating_on_device
from ..network.host_copies import host_to_device

__all__ = ["CAPTURE_DEVICES", "WARMUP_STEPS", "StepGraphs", "captures_steps"]

#: Device types whose training steps are captured in CUDA graphs; the tests add "cpu" to run the graph-ready body
#: as a plain function there.
CAPTURE_DEVICES = frozenset({"cuda"})

#: Eager steps of each batch shape before it is captured (torch's CUDA graph examples use three).
WARMUP_STEPS = 3


def captures_steps(device, flat, schedule, in_memory, single_process):
    """Whether a training run's steps are captured (see the module description).

    Parameters
    ----------
    device : torch.device
        Where the network is.
    flat : FlatParameters or None
        The parameters' one buffer; None when they could not share one.
    schedule : LearningRateSchedule
        The run's learning-rate schedule.
    in_memory : bool
        Whether the batches come from tensors in memory (not streamed from a source).
    single_process : bool
        Whether the run trains in one process (not :mod:`sparsetab.distributed`).

    Returns
    -------
    bool
        True on a device of :data:`CAPTURE_DEVICES`, for a run with one parameter buffer, a per-step schedule
        (not the first release's exponential one), batches in memory and one process; the others run eagerly.
    """
    return device.type in CAPTURE_DEVICES and flat is not None and schedule.per_step and in_memory and single_process


class _PlainGraph:
    """Where there is no CUDA graph: the body, called again at each replay."""

    def __init__(self, body):
        self.replay = body


class StepGraphs:
    """A training step whose body is captured per batch shape and replayed (see the module description).

    Called like the eager step: ``step_graphs(X_batch, y_batch, weight) -> (objective, batch_weight)``, both 0-d
    tensors on the device, overwritten by the next call (read them, or copy them, before it).

    Parameters
    ----------
    step : sparsetab._training.loop._TrainingStep
        The eager step: its network, loss, optimizer and weight average.
    schedule : LearningRateSchedule
        The run's schedule, whose rates (``schedule.rates(epochs)``) become the device table.
    epochs : int
        Epochs of the run (``max_epochs`` of the call).
    device : torch.device
        The network's device; a CUDA device captures, any other runs the body as a plain function.

    Notes
    -----
    Used as a context manager around the run: entering makes the network and optimizer ready for captured steps,
    leaving puts them back.
    """

    def __init__(self, step, schedule, epochs, device):
        self.step, self.schedule, self.device = step, schedule, device
        self.network, self.optimizer, self.average = step.network, step.optimizer, step.average
        self.rate_list = schedule.rates(epochs)
        # The dtype of the learning-rate tensor: CUDA's fused Adam kernels read it as float; on the CPU only a
        # float64 rate trained as the eager step's Python float did (a float32 one did not, in the tests).
        self.rate_dtype = torch.float32 if device.type == "cuda" else torch.float64
        self.rates = host_to_device(torch.tensor(self.rate_list, dtype=self.rate_dtype), device)
        self.counter = torch.zeros(1, dtype=torch.long, device=device)
        self.average_updates = None
        self.steps_taken = 0  # the host's count of this run's steps (a replay runs no Python)
        self.graphs = {}
        self.eager_calls = collections.Counter()
        self.failed = False
        self._pool = None
        self._cuda = device.type == "cuda"
        self._side_stream = torch.cuda.Stream(device) if self._cuda else None
        self._exit_stack = None
        self._saved_groups = None

    def __enter__(self):
        """Make the network and optimizer ready for captured steps (see :meth:`__exit__` for the way back).

        The batch norms update their running statistics on the device, each optimizer group's ``lr`` is a 0-d
        device tensor and its ``capturable`` flag is set, the weight average counts on the device, and the schedule
        leaves the rates to the step.

        Returns
        -------
        StepGraphs
            ``self``.
        """
        stack = contextlib.ExitStack()
        stack.enter_context(batch_norms_updating_on_device(self.network))
        self._saved_groups = [(group["lr"], group.get("capturable", False)) for group in self.optimizer.param_groups]
        for group in self.optimizer.param_groups:
            group["lr"] = torch.full((), float(group["lr"]), dtype=self.rate_dtype, device=self.device)
            group["capturable"] = True
        if self.average is not None:
            self.average_updates = torch.full((), float(self.average.updates), dtype=torch.float64, device=self.device)
        self.schedule.on_device = True
        self._exit_stack = stack
        return self

    def __exit__(self, *exc_info):
        """Put the network, optimizer and schedule back as an eager run leaves them, however the block ends.

        Each group gets a float ``lr`` again (the rate of the last step taken, from the host's table: nothing is
        read from the device) and its ``capturable`` flag back, so the optimizer's state dict is what an eager run
        saves; the batch norms go back to grouped updates.

        Parameters
        ----------
        *exc_info
            The exception that ends the block, if any; it is not suppressed.

        Returns
        -------
        bool
            False.
        """
        del self.schedule.on_device  # back to the class attribute
        for group, (rate, capturable) in zip(self.optimizer.param_groups, self._saved_groups, strict=True):
            group["lr"] = self.rate_list[self.steps_taken - 1] if self.steps_taken else rate
            group["capturable"] = capturable
        self._exit_stack.close()
        return False

    def _body(self, X_batch, y_batch, weight, outputs=None):
        """One step from device state only: the rate from the table, the step, the average's update."""
        rate = self.rates.index_select(0, self.counter).squeeze(0)
        for group in self.optimizer.param_groups:
            group["lr"].copy_(rate)
        self.counter.add_(1)
        objective, batch_weight = self.step.train(X_batch, y_batch, weight)
        if self.average is not None:
            self.average.update_on_device(self.average_updates)
        if outputs is None:
            return objective, batch_weight
        outputs[0].copy_(objective.detach())
        outputs[1].copy_(batch_weight.detach())
        return outputs

    def _eager(self, X_batch, y_batch, weight):
        if not self._cuda:
            return self._body(X_batch, y_batch, weight)
        # CUDA runs the warm-up steps of a capture on a side stream (torch.cuda.graphs' requirement).
        side = self._side_stream
        side.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(side):
            result = self._body(X_batch, y_batch, weight)
        torch.cuda.current_stream(self.device).wait_stream(side)
        return result

    def _capture(self, X_batch, y_batch, weight):
        # Fixed buffers: a replay reads its batch from, and writes its objective and weight to, the memory that
        # was recorded (float64 outputs hold a float32 objective exactly, as the loop widens it anyway).
        inputs = [X_batch.clone(), y_batch.clone(), weight.clone()]
        outputs = [torch.zeros((), dtype=torch.float64, device=self.device) for _ in range(2)]
        if not self._cuda:
            return inputs, outputs, _PlainGraph(lambda: self._body(*inputs, outputs))
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, pool=self._pool):  # recorded, not run: the replay below runs it
            self._body(*inputs, outputs)
        self._pool = graph.pool()
        return inputs, outputs, graph

    def __call__(self, X_batch, y_batch, weight):
        """Train on one batch; return its objective and weight (0-d device tensors, overwritten by the next call).

        Parameters
        ----------
        X_batch, y_batch, weight : torch.Tensor
            The batch, as the eager step takes it.

        Returns
        -------
        objective, batch_weight : torch.Tensor, 0-d

        Warns
        -----
        RuntimeWarning
            Once, if a capture fails: the run goes on with the same body called eagerly.
        """
        key = (X_batch.shape, y_batch.shape, weight.shape)
        captured = self.graphs.get(key)
        if captured is None and not self.failed and self.eager_calls[key] >= WARMUP_STEPS:
            try:
                captured = self.graphs[key] = self._capture(X_batch, y_batch, weight)
            except Exception as error:  # a capture that fails costs speed, not the fit
                self.failed = True
                warn(
                    f"The training step could not be captured in a CUDA graph ({type(error).__name__}: {error}); "
                    "training goes on without one, more slowly.",
                    RuntimeWarning,
                )
        if captured is None:
            self.eager_calls[key] += 1
            result = self._eager(X_batch, y_batch, weight)
        else:
            inputs, outputs, graph = captured
            for buffer, value in zip(inputs, (X_batch, y_batch, weight), strict=True):
                buffer.copy_(value)
            graph.replay()
            result = tuple(outputs)
        self.steps_taken += 1
        if self.average is not None:
            self.average.updates += 1  # the host's count, which use_average reads
        return result
