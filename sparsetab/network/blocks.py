"""Building blocks of TabNet's feature transformer: ghost batch norm and GLU layers.

References
----------
Arik, S. O. and Pfister, T. (2021). TabNet: Attentive Interpretable Tabular Learning.
AAAI 35(8), 6679-6687. Section 3 ("Feature transformer") and Fig. 4.

Hoffer, E., Hubara, I. and Soudry, D. (2017). Train longer, generalize better: closing the
generalization gap in large batch training of neural networks. NeurIPS. (Ghost batch norm.)
"""

import math

import torch
from torch import nn

__all__ = ["GhostBatchNorm", "GLULayer", "FeatureTransformer"]

_SQRT_HALF = math.sqrt(0.5)


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
        batches, of their means and unbiased variances.
    epsilon : float, default=1e-5
        Added to the variance for numerical stability.

    References
    ----------
    Hoffer, Hubara and Soudry (2017), section 4; Arik and Pfister (2021), section 3.
    """

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

    def forward(self, x):
        """Normalise ``x``.

        Parameters
        ----------
        x : torch.Tensor of shape (batch, num_features), floating dtype

        Returns
        -------
        torch.Tensor of shape (batch, num_features)
        """
        if not self.training:
            scale = torch.rsqrt(self.running_var + self.epsilon) * self.weight
            return (x - self.running_mean) * scale + self.bias
        n_rows, width = x.shape
        n_virtual = 1 if self.virtual_batch_size is None else max(1, math.ceil(n_rows / self.virtual_batch_size))
        rows, n_large = divmod(n_rows, n_virtual)
        if n_large == 0:  # equal virtual batches, the common case
            normalised, statistics = self._normalise(x, n_virtual, rows, width)
        else:  # n_large virtual batches of rows + 1 rows, then the others of rows rows
            split = n_large * (rows + 1)
            large, large_statistics = self._normalise(x[:split], n_large, rows + 1, width)
            small, small_statistics = self._normalise(x[split:], n_virtual - n_large, rows, width)
            normalised, statistics = torch.cat([large, small]), large_statistics + small_statistics
        self._update_running_stats(statistics, n_virtual)
        return torch.addcmul(self.bias, normalised, self.weight)

    def _normalise(self, part, n_chunks, chunk_rows, width):
        # Returns the normalised rows (before the affine map), and the sums over the virtual
        # batches of their means and unbiased variances, shape (2, width). Training spends most of
        # its time in per-operation overhead at TabNet's sizes, so this keeps the operation count low.
        if chunk_rows == 1:
            # A single row has zero variance: it normalises to 0.
            statistics = torch.stack([part.detach().sum(dim=0), torch.zeros_like(part[0]).detach()])
            return part - part, statistics
        # (chunk_rows, n_chunks * width): virtual batch v of this group is column block v, one
        # channel per (virtual batch, feature); native_batch_norm also returns each channel's
        # mean and 1 / sqrt(biased variance + epsilon).
        normalised, mean, inverse_std = torch.native_batch_norm(
            part.reshape(chunk_rows, n_chunks * width), None, None, None, None, True, 0.0, self.epsilon
        )
        with torch.no_grad():
            unbiased_var = (inverse_std.pow(-2) - self.epsilon) * (chunk_rows / (chunk_rows - 1))
            statistics = torch.stack([mean, unbiased_var]).reshape(2, n_chunks, width).sum(dim=1)
        return normalised.reshape(-1, width), statistics

    @torch.no_grad()
    def _update_running_stats(self, sums, n_virtual):
        # sums: (2, width), the sums over the virtual batches of their means and unbiased variances.
        self.num_batches_tracked += 1
        weight = max(self.momentum, 1.0 / int(self.num_batches_tracked))
        self.running_mean.lerp_(sums[0] / n_virtual, weight)
        self.running_var.lerp_(sums[1] / n_virtual, weight)


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

    References
    ----------
    Arik and Pfister (2021), section 3 and Fig. 4; Dauphin et al. (2017), "Language modeling
    with gated convolutional networks", ICML (the GLU).
    """

    def __init__(self, input_dim, output_dim, fc=None, virtual_batch_size=128, momentum=0.02):
        super().__init__()
        self.output_dim = output_dim
        self.fc = fc if fc is not None else nn.Linear(input_dim, 2 * output_dim, bias=False)
        self.bn = GhostBatchNorm(2 * output_dim, virtual_batch_size, momentum)

    def forward(self, x):
        """Apply the layer.

        Parameters
        ----------
        x : torch.Tensor of shape (batch, input_dim)

        Returns
        -------
        torch.Tensor of shape (batch, output_dim)
        """
        value, gate = self.bn(self.fc(x)).chunk(2, dim=-1)
        # Elementwise ops on a strided half run several times slower on CPU than on a
        # contiguous copy (torch 2.x; nn.functional.glu included): copy both halves first.
        return value.contiguous() * torch.sigmoid(gate.contiguous())


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

    References
    ----------
    Arik and Pfister (2021), section 3 ("Feature transformer") and Fig. 4.
    """

    def __init__(self, input_dim, output_dim, shared_fcs, n_independent, virtual_batch_size, momentum):
        super().__init__()
        layers = []
        for fc in shared_fcs:
            layers.append(GLULayer(input_dim, output_dim, fc, virtual_batch_size, momentum))
        for index in range(n_independent):
            width = input_dim if not layers and index == 0 else output_dim
            layers.append(GLULayer(width, output_dim, None, virtual_batch_size, momentum))
        if not layers:
            raise ValueError("A feature transformer needs at least one layer: n_shared + n_independent >= 1.")
        self.layers = nn.ModuleList(layers)

    def forward(self, x):
        """Transform ``x``.

        Parameters
        ----------
        x : torch.Tensor of shape (batch, input_dim)

        Returns
        -------
        torch.Tensor of shape (batch, output_dim)
        """
        x = self.layers[0](x)
        for layer in self.layers[1:]:
            x = (x + layer(x)) * _SQRT_HALF
        return x
