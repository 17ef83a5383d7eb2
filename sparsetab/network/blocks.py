"""Building blocks of TabNet's feature transformer: ghost batch norm and GLU layers.

References
----------
Arik, S. O. and Pfister, T. (2021). TabNet: Attentive Interpretable Tabular Learning.
AAAI 35(8), 6679-6687. Section 3 ("Feature transformer") and Fig. 4.

Hoffer, E., Hubara, I. and Soudry, D. (2017). Train longer, generalize better: closing the
generalization gap in large batch training of neural networks. NeurIPS. (Ghost batch norm.)
"""

import contextlib
import functools
import math

import torch
from torch import nn

from .host_copies import host_to_device
from .seeded import seeded_linear

__all__ = ["GhostBatchNorm", "GLULayer", "FeatureTransformer"]

_SQRT_HALF = math.sqrt(0.5)
# Training steps whose running-statistics updates a GhostBatchNorm may hold before applying them. The
# held statistics are small long-lived tensors among each step's large short-lived ones; holding many
# fragments the heap: 64 steps raised a fit's peak memory from about 30 to 47 MiB, while 16 cost
# about 1% of training time more than 64 (benchmarks/speed.py configuration).
_MAX_PENDING_STEPS = 16


class GhostBatchNorm(nn.Module):
    """Batch normalisation with statistics computed per virtual batch.

    In training mode the batch is split into ``k = ceil(batch / virtual_batch_size)`` virtual
    batches whose sizes differ by at most one row, and each is normalised with its own mean
    and (biased) variance. The split is interleaved: with ``e = batch mod k``, the first
    ``e * (r + 1)`` rows (``r = batch // k``) form ``e`` virtual batches of ``r + 1`` rows,
    row ``i`` going to virtual batch ``i mod e``, and the other rows form ``k - e`` virtual
    batches of ``r`` rows in the same way. Training batches are shuffled, so this is a random
    split like any other; it lets a plain reshape put the virtual batches side by side, so one
    native batch norm per group normalises them all with no copy and no Python loop. No
    virtual batch has a single row unless the whole batch has. In evaluation mode the running
    statistics are used, as in :class:`torch.nn.BatchNorm1d`.

    Parameters
    ----------
    num_features : int
        Number of features (columns) of the input.
    virtual_batch_size : int or None, default=128
        Target number of rows per virtual batch; None normalises the whole batch at once
        (plain batch norm, used for TabNet's input).
    momentum : float, default=0.02
        Weight of the new batch statistics in the running statistics (PyTorch convention;
        the TabNet paper's ``m_B`` in TensorFlow convention equals ``1 - momentum``). The
        first ``1 / momentum`` updates use the cumulative average instead (weight
        ``1 / t`` at update ``t``), so the running statistics do not stay near their initial
        (0, 1) on a small data set that gives few optimisation steps; the exponential average
        takes over afterwards. The statistics of an update are the averages, over the virtual
        batches, of their means and unbiased variances. The updates of training steps are
        recorded and applied together, in order, with the same result, when the running
        statistics are needed (evaluation mode, ``state_dict``, or 16 pending steps): see
        :meth:`flush_running_stats`.
    epsilon : float, default=1e-5
        Added to the variance for numerical stability.

    References
    ----------
    Hoffer, Hubara and Soudry (2017), section 4; Arik and Pfister (2021), section 3.
    """

    # The sum over processes of a whole-batch normalisation in training mode (see statistics_across); a class
    # attribute, so that modules pickled before it existed, and every module outside that block, have None.
    _all_reduce = None
    # Whether training steps update the running statistics at once, on the device (see updating_on_device); a
    # class attribute for the same reason.
    _updates_on_device = False

    def __init__(self, num_features, virtual_batch_size=128, momentum=0.02, epsilon=1e-5):
        super().__init__()
        self.num_features = num_features
        self.virtual_batch_size = virtual_batch_size
        self.momentum = momentum
        self.epsilon = epsilon
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))
        self.register_buffer("num_batches_tracked", torch.tensor(0, dtype=torch.long))
        # Statistics of training steps not yet applied to the running buffers (see flush_running_stats).
        self._pending = []
        # num_batches_tracked mirrored on the host, so that a flush does not wait for the device to read it;
        # None: unknown (after a state dict was loaded), read once from the buffer.
        self._tracked_on_host = 0
        # Bound methods, not lambdas: the module must stay picklable.
        self.register_state_dict_pre_hook(self._flush_before_state_dict)
        self._register_load_state_dict_pre_hook(self._drop_pending_before_load)

    def _flush_before_state_dict(self, module, prefix, keep_vars):
        self.flush_running_stats()

    def _drop_pending_before_load(self, *args, **kwargs):
        self._pending.clear()
        self._tracked_on_host = None

    def train(self, mode=True):
        """Set training mode; leaving it applies the pending running-statistics updates.

        Parameters
        ----------
        mode : bool, default=True

        Returns
        -------
        GhostBatchNorm
            ``self``.
        """
        if not mode:
            self.flush_running_stats()
        return super().train(mode)

    def forward(self, x):
        """Normalise ``x``.

        In training mode, each virtual batch (see the class description) is normalised with
        its own mean and biased variance, then scaled by ``weight`` and shifted by ``bias``
        (Hoffer, Hubara and Soudry, 2017, section 4); the statistics are recorded for the
        running buffers. In evaluation mode, the running statistics are used instead.

        Parameters
        ----------
        x : torch.Tensor of shape (batch, num_features), float32
            The rows to normalise, in the dtype and on the device of the module's parameters.

        Returns
        -------
        torch.Tensor of shape (batch, num_features)
            The normalised rows, in the dtype of ``x``. In training mode a virtual batch of a
            single row normalises to ``bias``.

        Raises
        ------
        ValueError
            In training mode, if ``x`` is not 2-D (its shape is unpacked into rows and width).
        RuntimeError
            From torch, if the width of ``x`` is not ``num_features`` (in evaluation mode,
            an ``x`` that does not broadcast against the parameters).
        """
        if not self.training:
            if self._pending:  # checked here: tracing (torch.export) must not see the no_grad flush
                self.flush_running_stats()
            # The affine map folded into one multiply-add, x * scale + shift (as inference engines fold batch
            # norm): one pass over x instead of three, about a tenth of predict's time. Its rounding differs
            # from (x - mean) * scale + bias by eps * |mean| * scale, which is small here because the inputs
            # are standardised columns and linear maps of batch-normalised features.
            scale = torch.rsqrt(self.running_var + self.epsilon) * self.weight
            return torch.addcmul(self.bias - self.running_mean * scale, x, scale)
        n_rows, width = x.shape
        if self._all_reduce is not None and self.virtual_batch_size is None:
            return self._normalise_across(x)
        n_virtual = 1 if self.virtual_batch_size is None else max(1, math.ceil(n_rows / self.virtual_batch_size))
        rows, n_large = divmod(n_rows, n_virtual)
        if n_large == 0:  # equal virtual batches, the common case
            output, record = self._normalise(x, n_virtual, rows, width)
            records = (n_virtual, record)
        else:  # n_large virtual batches of rows + 1 rows, then the others of rows rows
            split = n_large * (rows + 1)
            large, large_record = self._normalise(x[:split], n_large, rows + 1, width)
            small, small_record = self._normalise(x[split:], n_virtual - n_large, rows, width)
            output = torch.cat([large, small])
            records = (n_virtual, large_record, small_record)
        if self._updates_on_device:
            self._update_on_device(*records)
            return output
        self._pending.append(records)
        if len(self._pending) >= _MAX_PENDING_STEPS:
            self.flush_running_stats()
        return output

    @contextlib.contextmanager
    def updating_on_device(self):
        """Within the block, each training step updates the running statistics at once, with device operations only.

        Outside it, a step's statistics are recorded and applied in groups (:meth:`flush_running_stats`), which
        costs fewer operators a step but keeps Python-side state and copies host-made coefficients to the device.
        Inside it, step ``t`` takes its weight ``max(momentum, 1 / t)`` from ``num_batches_tracked`` on the device
        and moves the buffers at once (the same values up to rounding): the step then reads and copies nothing
        from the host, and can be captured in a CUDA graph and replayed (:mod:`sparsetab._training.step_graphs`).
        Pending updates are applied on entering.

        Yields
        ------
        GhostBatchNorm
            ``self``.
        """
        self.flush_running_stats()
        outermost = "_updates_on_device" not in vars(self)  # a compiled step inside a captured one enters twice
        self._updates_on_device = True
        try:
            yield self
        finally:
            if outermost:
                del self._updates_on_device  # back to the class attribute, so that pickles do not change
                self._tracked_on_host = None  # counted on the device meanwhile: read once at the next flush

    @torch.no_grad()
    def _update_on_device(self, n_virtual, *records):
        # The statistics of one step, as flush_running_stats combines them: the averages over the virtual batches
        # of their means and unbiased variances (a single-row virtual batch has variance 0).
        width = self.num_features
        means = variances = None
        for chunk_rows, mean, inverse_std in records:
            part_means = mean.view(-1, width).sum(dim=0)
            means = part_means if means is None else means + part_means
            if inverse_std is not None:
                part_variances = (inverse_std.pow(-2) - self.epsilon) * (chunk_rows / (chunk_rows - 1))
                part_variances = part_variances.view(-1, width).sum(dim=0)
                variances = part_variances if variances is None else variances + part_variances
        self.num_batches_tracked += 1
        weight = torch.clamp(self.num_batches_tracked.double().reciprocal(), min=self.momentum)
        weight = weight.to(self.running_mean.dtype)
        self.running_mean.lerp_(means / n_virtual, weight)
        if variances is None:
            variances = torch.zeros_like(means)
        self.running_var.lerp_(variances / n_virtual, weight)

    @contextlib.contextmanager
    def statistics_across(self, all_reduce):
        """Within the block, a whole-batch normalisation takes its statistics over the rows of all processes.

        For training one network in several processes, each with its own rows: in training mode, a
        module with ``virtual_batch_size=None`` normalises its rows with the mean and biased variance
        of the union of every process's batch (as :class:`torch.nn.SyncBatchNorm`), so that its output
        and its running statistics are those of one process normalising the union. Modules with
        virtual batches are not changed: their virtual batches stay local. Evaluation mode is not
        changed either.

        Parameters
        ----------
        all_reduce : callable
            ``all_reduce(tensor) -> tensor``: the sum of ``tensor`` over the processes, differentiable
            (its gradient is the sum of the gradients over the processes); every process must enter
            the block and run the same forward passes.

        Yields
        ------
        GhostBatchNorm
            ``self``.
        """
        self._all_reduce = all_reduce
        try:
            yield self
        finally:
            del self._all_reduce  # back to the class attribute, so that pickles do not change

    def _normalise_across(self, x):
        # One reduction for the column sums and the row count, one for the centred squares (two passes, as
        # native batch norm, rather than the cancellation-prone mean of squares).
        n_rows = x.shape[0]
        sums = self._all_reduce(torch.cat([x.sum(dim=0), x.new_full((1,), n_rows)]))
        total_rows = sums[-1]
        mean = sums[:-1] / total_rows
        centred = x - mean
        variance = self._all_reduce((centred * centred).sum(dim=0)) / total_rows
        inverse_std = torch.rsqrt(variance + self.epsilon)
        output = centred * (inverse_std * self.weight) + self.bias
        rows = int(total_rows.item())
        if rows == 1:  # a single row has zero variance, as in _normalise
            self._pending.append((1, (1, mean.detach(), None)))
        else:
            self._pending.append((1, (rows, mean.detach(), inverse_std.detach())))
        if len(self._pending) >= _MAX_PENDING_STEPS:
            self.flush_running_stats()
        return output

    def _normalise(self, part, n_chunks, chunk_rows, width):
        # Returns the normalised rows after the affine map and a record of this group's statistics
        # for the running buffers: (chunk_rows, per-channel means, per-channel 1 / sqrt(biased
        # variance + epsilon) or None for zero variance). Training spends most of its time in
        # per-operation overhead at TabNet's sizes, so the statistics are only recorded here.
        if chunk_rows == 1:
            # A single row has zero variance: it normalises to 0, hence to the bias.
            return (part - part) * self.weight + self.bias, (1, part.detach().reshape(-1), None)
        # (chunk_rows, n_chunks * width): virtual batch v of this group is column block v, one
        # channel per (virtual batch, feature); native_batch_norm also returns each channel's
        # mean and 1 / sqrt(biased variance + epsilon). The affine map is done by the same kernel,
        # with the weight and bias repeated per virtual batch: a separate affine pass wrote one
        # more batch-sized tensor per layer, about 2% of a training step. Repeated by expand and
        # reshape, whose forward and backward cost about half of Tensor.repeat's (2% of a step).
        normalised, mean, inverse_std = torch.native_batch_norm(
            part.reshape(chunk_rows, n_chunks * width),
            self.weight.expand(n_chunks, width).reshape(-1),
            self.bias.expand(n_chunks, width).reshape(-1),
            None,
            None,
            True,
            0.0,
            self.epsilon,
        )
        # mean and inverse_std are not differentiable outputs: no detach needed.
        return normalised.reshape(-1, width), (chunk_rows, mean, inverse_std)

    @torch.no_grad()
    def flush_running_stats(self):
        """Apply the recorded running-statistics updates of the training steps since the last flush.

        Step ``t`` (counted by ``num_batches_tracked``) moves each buffer towards that step's
        statistics with weight ``w_t = max(momentum, 1 / t)``:
        ``running = (1 - w_t) running + w_t stat_t``. The steps are applied at once with the
        closed form ``running_K = running_0 prod_t (1 - w_t) + sum_t w_t prod_{s > t} (1 - w_s) stat_t``,
        the same values as one update per step up to rounding. Called by evaluation-mode forward
        passes, ``eval()``, ``state_dict()``, and every 16 training steps.
        """
        if not self._pending:
            return
        width = self.num_features
        steps = len(self._pending)
        # Records of the same shape (usually all of them, one per step) are processed together, a few
        # operations in all.
        groups = {}
        for step, (n_virtual, *records) in enumerate(self._pending):
            for chunk_rows, mean, inverse_std in records:
                key = (chunk_rows, mean.numel(), inverse_std is None)
                groups.setdefault(key, []).append((step, n_virtual, mean, inverse_std))
        self._pending.clear()
        statistics = None if len(groups) == 1 else self.running_mean.new_zeros(2, steps, width)
        for (chunk_rows, _, zero_variance), members in groups.items():
            # Made on the host and copied without waiting for the device, as the index and coefficients below.
            scale = torch.tensor([1.0 / member[1] for member in members], dtype=self.running_mean.dtype)
            scale = host_to_device(scale, self.running_mean.device)[:, None]
            means = torch.stack([member[2] for member in members]).view(len(members), -1, width).sum(dim=1)
            if zero_variance:
                variances = torch.zeros_like(means)
            else:
                inverse_std = torch.stack([member[3] for member in members])
                variances = (inverse_std.pow(-2) - self.epsilon) * (chunk_rows / (chunk_rows - 1))
                variances = variances.view(len(members), -1, width).sum(dim=1)
            if statistics is None:  # one record per step, in step order
                statistics = torch.stack([means * scale, variances * scale])
            else:
                index = host_to_device(torch.tensor([member[0] for member in members]), statistics.device)
                statistics[0].index_add_(0, index, means * scale)
                statistics[1].index_add_(0, index, variances * scale)
        tracked = getattr(self, "_tracked_on_host", None)  # modules pickled before the mirror existed have none
        if tracked is None:
            tracked = int(self.num_batches_tracked)
        coefficients, remaining = _running_average_coefficients(tracked + 1, steps, self.momentum)
        coefficients = host_to_device(coefficients.to(dtype=statistics.dtype), statistics.device)
        self.running_mean.mul_(remaining).add_(coefficients @ statistics[0])
        self.running_var.mul_(remaining).add_(coefficients @ statistics[1])
        self.num_batches_tracked += steps
        self._tracked_on_host = tracked + steps


@contextlib.contextmanager
def batch_norms_updating_on_device(network):
    """Within the block, every :class:`GhostBatchNorm` of ``network`` updates its running statistics on the device.

    :meth:`GhostBatchNorm.updating_on_device` for each of them (a captured or compiled training step needs it), left
    in reverse order however the block ends.

    Parameters
    ----------
    network : torch.nn.Module
        The module whose ghost batch norms (``network.modules()``) are switched.

    Yields
    ------
    torch.nn.Module
        ``network``.
    """
    with contextlib.ExitStack() as stack:
        for module in network.modules():
            if isinstance(module, GhostBatchNorm):
                stack.enter_context(module.updating_on_device())
        yield network


@functools.lru_cache(maxsize=64)
def _running_average_coefficients(first, steps, momentum):
    # Update t = first, ..., first + steps - 1 has weight w_t = max(momentum, 1 / t). Returns the weight of
    # each step's statistics in the final running value, w_t prod_{s > t} (1 - w_s) (float64, CPU, shared:
    # read only), and prod_t (1 - w_t), the weight left on the initial value. Every batch norm of a network
    # flushes the same steps, so the cache computes this once per flush of the network.
    counts = torch.arange(first, first + steps, dtype=torch.float64)
    weights = torch.clamp(1.0 / counts, min=momentum)
    keep = 1.0 - weights
    later = torch.cat([torch.flip(torch.cumprod(torch.flip(keep[1:], [0]), 0), [0]), keep.new_ones(1)])
    # A host tensor on every device: numpy() reads it with no device to wait for (a device tensor has no numpy()).
    return weights * later, float(torch.prod(keep).numpy())


class GLULayer(nn.Module):
    """Fully connected layer, ghost batch norm and gated linear unit.

    Computes ``GLU(GBN(x W))`` where ``W`` maps ``input_dim`` to ``2 * output_dim`` columns
    and ``GLU(h) = h[:, :output_dim] * sigmoid(h[:, output_dim:])``.

    Parameters
    ----------
    input_dim : int
        Width of the input.
    output_dim : int
        Width of the output.
    fc : torch.nn.Linear or None, default=None
        A fully connected layer to use (shared across decision steps); a new one without bias
        is created when None.
    virtual_batch_size : int, default=128
        See :class:`GhostBatchNorm`.
    momentum : float, default=0.02
        See :class:`GhostBatchNorm`.
    generator : torch.Generator or None, default=None
        Source of the initial weights (:mod:`sparsetab.network.seeded`), so that a seeded fit
        does not depend on what other threads draw; None: torch's global generator.

    References
    ----------
    Arik and Pfister (2021), section 3 and Fig. 4; Dauphin et al. (2017), "Language modeling
    with gated convolutional networks", ICML (the GLU).
    """

    def __init__(self, input_dim, output_dim, fc=None, virtual_batch_size=128, momentum=0.02, generator=None):
        super().__init__()
        self.output_dim = output_dim
        self.fc = fc if fc is not None else seeded_linear(input_dim, 2 * output_dim, bias=False, generator=generator)
        self.bn = GhostBatchNorm(2 * output_dim, virtual_batch_size, momentum)

    def forward(self, x):
        """Apply the layer: ``GLU(GBN(x W))``.

        The gated linear unit of Dauphin et al. (2017), eq. 1, as used in the feature
        transformer of Arik and Pfister (2021), section 3 and Fig. 4.

        Parameters
        ----------
        x : torch.Tensor of shape (batch, input_dim), float32
            Input rows, in the dtype and on the device of the layer's parameters.

        Returns
        -------
        torch.Tensor of shape (batch, output_dim)
            ``h[:, :output_dim] * sigmoid(h[:, output_dim:])`` with ``h = GBN(x W)``, in the
            dtype of ``x``.

        Raises
        ------
        ValueError
            In training mode, if ``x`` is not 2-D (see :meth:`GhostBatchNorm.forward`).
        RuntimeError
            From torch, if the width of ``x`` is not ``input_dim``.
        """
        # The sub-modules' forward is called directly, not through nn.Module.__call__: with 16 or
        # more layers per training step, __call__'s hook checks took about 4% of the step (see
        # FeatureTransformer). Forward hooks registered on fc or bn are therefore not run.
        value, gate = self.bn.forward(nn.functional.linear(x, self.fc.weight, self.fc.bias)).chunk(2, dim=-1)
        # Elementwise ops on a strided half run several times slower on CPU than on a
        # contiguous copy (torch 2.x; nn.functional.glu included): copy both halves first.
        # The gate's copy is a temporary the sigmoid may overwrite; a single row's gate is already
        # contiguous, a view of the batch norm's output that autograd forbids overwriting.
        sigmoid = torch.sigmoid(gate) if gate.is_contiguous() else torch.sigmoid_(gate.contiguous())
        return value.contiguous() * sigmoid


class FeatureTransformer(nn.Module):
    """TabNet's feature transformer: a shared block followed by a step-dependent block.

    Each block is a stack of :class:`GLULayer`. Every layer after the very first adds its
    input and scales the sum by ``sqrt(0.5)`` (the residual normalisation of the paper, which
    keeps the variance of the sum stable). The fully connected layers of the shared block are
    passed in, so that all decision steps use the same weights; the batch norms are per step.

    Parameters
    ----------
    input_dim : int
        Width of the input (the number of embedded input columns).
    output_dim : int
        Width of the output, ``n_d + n_a``.
    shared_fcs : torch.nn.ModuleList of torch.nn.Linear
        The shared fully connected layers (may be empty).
    n_independent : int
        Number of step-dependent GLU layers.
    virtual_batch_size : int
        See :class:`GhostBatchNorm`.
    momentum : float
        See :class:`GhostBatchNorm`.
    generator : torch.Generator or None, default=None
        Source of the initial weights (:mod:`sparsetab.network.seeded`), so that a seeded fit
        does not depend on what other threads draw; None: torch's global generator.

    References
    ----------
    Arik and Pfister (2021), section 3 ("Feature transformer") and Fig. 4.
    """

    def __init__(self, input_dim, output_dim, shared_fcs, n_independent, virtual_batch_size, momentum, generator=None):
        super().__init__()
        layers = []
        for fc in shared_fcs:
            layers.append(GLULayer(input_dim, output_dim, fc, virtual_batch_size, momentum))
        for index in range(n_independent):
            width = input_dim if not layers and index == 0 else output_dim
            layers.append(GLULayer(width, output_dim, None, virtual_batch_size, momentum, generator=generator))
        if not layers:
            raise ValueError("A feature transformer needs at least one layer: n_shared + n_independent >= 1.")
        self.layers = nn.ModuleList(layers)

    def forward(self, x):
        """Transform ``x``.

        The first GLU layer maps ``x`` to ``output_dim`` columns; each later layer ``l`` computes
        ``x = (x + l(x)) * sqrt(0.5)`` (Arik and Pfister, 2021, section 3, "Feature
        transformer", and Fig. 4).

        Parameters
        ----------
        x : torch.Tensor of shape (batch, input_dim), float32
            Input rows, in the dtype and on the device of the layers' parameters.

        Returns
        -------
        torch.Tensor of shape (batch, output_dim)
            The transformed rows, in the dtype of ``x``; in TabNet the first ``n_d`` columns
            are ``d_i`` and the last ``n_a`` are ``a_i``.

        Raises
        ------
        ValueError
            In training mode, if ``x`` is not 2-D (see :meth:`GhostBatchNorm.forward`).
        RuntimeError
            From torch, if the width of ``x`` is not ``input_dim``.
        """
        # layer.forward, not layer(x): see GLULayer.forward (hooks on the layers are not run).
        first, *others = self.layers
        x = first.forward(x)
        for layer in others:
            x = torch.add(x, layer.forward(x)).mul_(_SQRT_HALF)  # in place on the fresh sum: one allocation less
        return x
