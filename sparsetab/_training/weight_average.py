"""A moving average of the weights along a training run, the network that is scored and kept.

Early stopping keeps the weights of the best epoch. On a large table that epoch often comes while the
learning rate is still high (bank_marketing's best epoch was the 11th to 17th of 100 under the cosine
schedule), so the kept weights are one noisy point of the trajectory. Averaging the weights of the last
steps (Polyak and Juditsky, 1992; the exponential form of Izmailov et al., 2018, section 3) gives a
point nearer the middle of the region the optimiser wanders in, at the cost of one in-place pass over
the weights a step. Training itself is unchanged: the optimiser moves the trained weights; the average
is swapped in to score an epoch and to be kept, and swapped out before the next epoch trains.

References
----------
Polyak, B. T. and Juditsky, A. B. (1992). Acceleration of stochastic approximation by averaging.
SIAM Journal on Control and Optimization 30(4), 838-855.

Izmailov, P., Podoprikhin, D., Garipov, T., Vetrov, D. and Wilson, A. G. (2018). Averaging weights
leads to wider optima and better generalization. UAI.
"""

import torch

__all__ = ["WeightAverage"]


class WeightAverage:
    """Exponential moving average of tensors updated in place by an optimiser.

    After update ``t`` (counted from 1) the average is ``a_t = (1 - w_t) a_{t-1} + w_t x_t`` with
    ``w_t = max(1 / t, 1 / time_constant_steps)``, where ``x_t`` are the tensors' values: the plain
    mean of the first ``time_constant_steps`` updates (so the initial weights, drawn at random, carry
    no weight once one step is done), an exponential average with that time constant afterwards. The
    same warm-up rule as the running statistics of :class:`~sparsetab.network.GhostBatchNorm`.

    Parameters
    ----------
    tensors : list of torch.Tensor
        The trained values (parameters, or the one flat buffer holding them), floating point.
    time_constant_steps : float
        Number of updates over which the average forgets by a factor ``e``; at least 1.

    Raises
    ------
    ValueError
        If ``time_constant_steps`` is below 1.
    """

    def __init__(self, tensors, time_constant_steps):
        if not time_constant_steps >= 1:
            raise ValueError(f"time_constant_steps must be at least 1, got {time_constant_steps!r}.")
        self.tensors = list(tensors)
        self.minimum_weight = 1.0 / time_constant_steps
        self.updates = 0
        with torch.no_grad():
            self.average = [tensor.detach().clone() for tensor in self.tensors]
        # The trained values while the average is in place (use_average); None while training.
        self._trained = None

    def update(self):
        """Move the average towards the tensors' current values (after an optimiser step)."""
        self.updates += 1
        weight = max(1.0 / self.updates, self.minimum_weight)
        with torch.no_grad():
            for average, tensor in zip(self.average, self.tensors, strict=True):
                average.lerp_(tensor.detach(), weight)

    def update_on_device(self, updates):
        """:meth:`update` with the update count held on the device, so that a captured step can replay it.

        The caller keeps :attr:`updates` (the host's count) in step, after each call.

        Parameters
        ----------
        updates : torch.Tensor, 0-d, float64
            The number of updates so far, on the tensors' device; incremented here, in place.
        """
        updates.add_(1)
        weight = torch.clamp(updates.reciprocal(), min=self.minimum_weight)
        with torch.no_grad():
            for average, tensor in zip(self.average, self.tensors, strict=True):
                average.lerp_(tensor.detach(), weight.to(average.dtype))

    @property
    def in_use(self):
        """Whether the tensors currently hold the average (between :meth:`use_average` and :meth:`use_trained`)."""
        return self._trained is not None

    def use_average(self):
        """Put the average into the tensors, keeping the trained values aside; no-op before any update."""
        if self.in_use or self.updates == 0:
            return
        with torch.no_grad():
            self._trained = [tensor.detach().clone() for tensor in self.tensors]
            for tensor, average in zip(self.tensors, self.average, strict=True):
                tensor.copy_(average)

    def keep(self):
        """Forget the trained values set aside: the tensors keep what they hold (the end of the run)."""
        self._trained = None

    def use_trained(self):
        """Put the trained values back into the tensors, so that training continues from them."""
        if not self.in_use:
            return
        with torch.no_grad():
            for tensor, trained in zip(self.tensors, self._trained, strict=True):
                tensor.copy_(trained)
        self._trained = None
