"""Where the loop's batches come from, and how one process's steps combine with other processes'.

:class:`TensorBatches` (rows in memory) and :class:`SingleProcess` (no other process) are the
defaults of :func:`sparsetab._training.loop.train_network`; :mod:`sparsetab.streaming` and
:mod:`sparsetab.distributed` supply objects with the same methods.
"""

import math

import torch

from ..network.host_copies import host_to_device

__all__ = ["SINGLE_PROCESS", "SingleProcess", "TensorBatches"]


def _batches(n_rows, batch_size, generator, device):
    # Batches of near-equal size (they differ by at most one row), so no small last batch: a
    # single-row batch, which batch norm maps to its bias, needs one training row or batch_size 1 or 2.
    n_batches = max(1, math.ceil(n_rows / batch_size))
    # Drawn on the host, where the generator lives, and copied without waiting for the device.
    order = host_to_device(torch.randperm(n_rows, generator=generator), device)
    return torch.tensor_split(order, n_batches)


class TensorBatches:
    """Training rows held in memory: shuffled every epoch and split into batches of near-equal size.

    The source of :func:`train_network`'s batches; another source (rows streamed from disk, one
    process's shard) has the same two methods.

    Parameters
    ----------
    X : torch.Tensor of shape (n_samples, n_columns), float32
        The encoded rows.
    y : torch.Tensor of shape (n_samples, ...)
        Targets in the form the loss function expects.
    sample_weight : torch.Tensor of shape (n_samples,), float32
        Positive weights.
    """

    def __init__(self, X, y, sample_weight):
        self.X, self.y, self.sample_weight = X, y, sample_weight

    def steps_per_epoch(self, batch_size):
        """Optimiser steps of one epoch: ``max(1, ceil(n_samples / batch_size))``.

        Parameters
        ----------
        batch_size : int
            Rows per batch.

        Returns
        -------
        int
        """
        return max(1, math.ceil(self.X.shape[0] / batch_size))

    def epoch(self, batch_size, generator):
        """The batches of one epoch, in a new random order.

        Parameters
        ----------
        batch_size : int
            Rows per batch; the batches differ in size by at most one row.
        generator : torch.Generator
            Source of the order; one permutation of the rows is drawn from it.

        Yields
        ------
        tuple of torch.Tensor
            ``(X, y, sample_weight)`` of one batch.
        """
        for index in _batches(self.X.shape[0], batch_size, generator, self.X.device):
            # index_select: several times faster than advanced indexing for a batch of rows on CPU.
            weight = self.sample_weight.index_select(0, index)
            yield self.X.index_select(0, index), self.y.index_select(0, index), weight


class SingleProcess:
    """How :func:`train_network` combines its work with other processes': here, with none.

    The default of ``train_network(replicas=...)``; every method leaves its input as it is, so a
    one-process fit computes exactly what it would without this object. Training across processes
    (:mod:`sparsetab.distributed`) replaces it with one whose methods reduce over the process group,
    so that each process's gradient is its share of the gradient of the global batch (the union of
    the processes' local batches of a step).
    """

    def batch_normalisers(self, batch_weight, n_rows):
        """What the local batch's weighted loss and sparsity loss are divided by and scaled with.

        Parameters
        ----------
        batch_weight : torch.Tensor, scalar
            Sum of the local batch's sample weights.
        n_rows : int
            Rows of the local batch.

        Returns
        -------
        weight_total : torch.Tensor, scalar
            The sum of weights of the global batch: ``batch_weight`` itself here.
        row_share : torch.Tensor, scalar, or None
            The local batch's share of the global batch's rows, which weights its sparsity loss (a
            mean over rows); None here: the sparsity loss is used as it is.
        """
        return batch_weight, None

    def reduce_gradients(self, tensors):
        """Sum the gradients of ``tensors`` over the processes, in place; nothing to do here.

        Parameters
        ----------
        tensors : list of torch.Tensor
            The tensors the optimizer updates (their ``grad`` is set).
        """

    def sum_over_processes(self, value):
        """The sum of ``value`` over the processes: ``value`` itself here.

        Parameters
        ----------
        value : torch.Tensor, scalar
            A local total (the epoch's weighted training objective).

        Returns
        -------
        torch.Tensor, scalar
        """
        return value

    def synchronise(self, network):
        """Make the network's state the same on every process before it is evaluated; nothing to do here.

        Parameters
        ----------
        network : torch.nn.Module
            The network being trained.
        """


#: The one-process default of ``train_network(replicas=None)``.
SINGLE_PROCESS = SingleProcess()
