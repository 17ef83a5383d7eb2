"""Training across processes: one estimator fitted by every rank of a ``torch.distributed`` process group.

:func:`fit` is called on every rank, each with its own shard of the rows. It does not start
processes: ``torchrun``, Ray Train's ``TorchTrainer`` or any other launcher does, and initialises
the process group (gloo on CPU, nccl on GPU) before :func:`fit` is called.

How the work is shared (data parallelism, as ``torch.nn.parallel.DistributedDataParallel``):

- Rank 0 gathers the shards and prepares the fit on their union, as a one-process ``fit``
  would: the target kind (classes, target scaling), the tabular encoding (categories, missing
  values, the numeric transform), the bin edges of a numerical embedding and the initial weights.
  It sends each rank the network, the training settings and its own encoded rows.
- Every step, each rank runs its local batch; the local batches of a step form the global batch.
  Each rank divides its weighted loss by the global sum of weights and weights its sparsity loss
  (a mean over rows) by its share of the global rows, so that the sum of the ranks' gradients,
  all-reduced over the flat gradient buffer, is the gradient of the global batch. Clipping and
  Adam then run on every rank on the same gradient, so the weights stay identical.
- The input batch norm (a whole-batch normalisation) takes its statistics over the global batch,
  with a differentiable all-reduce; the ghost batch norms keep their virtual batches local, and
  their running statistics are averaged over the ranks before every evaluation and at the end.
- Rank 0 scores the validation rows and broadcasts the score, so every rank takes the same early
  stopping decision; a callback's request to stop is rank 0's too. Rank 0 then sends the fitted
  estimator to every rank and, given a path, writes the model file.

References
----------
Li, S. et al. (2020). PyTorch Distributed: Experiences on Accelerating Data Parallel Training.
PVLDB 13(12). (The all-reduce of gradients.)

Ioffe, S. and Szegedy, C. (2015). Batch Normalization. ICML, section 3 (the statistics of the
whole mini-batch); Hoffer, E., Hubara, I. and Soudry, D. (2017), NeurIPS, section 4 (ghost batch norm).
"""

import contextlib
import copy
import functools
import math

import numpy as np
import pandas as pd
import torch
import torch.distributed as dist
from sklearn.utils.validation import _num_samples

from ._params import resolve_early_stopping
from ._training.loop import SingleProcess, TrainingObserver, train_network
from .network import GhostBatchNorm

__all__ = ["ProcessGroupReplicas", "ShardBatches", "fit"]


def _check_process_group(group):
    # The group's size and this process's rank in it, after checking that there is one to use.
    if not (dist.is_available() and dist.is_initialized()):
        raise RuntimeError(
            "sparsetab.distributed.fit needs an initialised torch.distributed process group, and none is: "
            "launch the script with torchrun (or Ray Train's TorchTrainer) and call "
            "torch.distributed.init_process_group('gloo') ('nccl' on GPUs) on every rank before fit."
        )
    return dist.get_world_size(group), dist.get_rank(group)


def _source_rank(group):
    # The global rank of the group's rank 0: collectives name their source and destination globally.
    return 0 if group is None else dist.get_global_rank(group, 0)


class _SumOverProcesses(torch.autograd.Function):
    # The sum of a tensor over the ranks, differentiable: every rank's output is the same sum, so the gradient
    # of the total objective (the sum of the ranks' objectives) with respect to one rank's input is the sum of
    # the ranks' output gradients.

    @staticmethod
    def forward(ctx, tensor, group):
        ctx.group = group
        total = tensor.clone()
        dist.all_reduce(total, group=group)
        return total

    @staticmethod
    def backward(ctx, gradient):
        total = gradient.clone()
        dist.all_reduce(total, group=ctx.group)
        return total, None


def _sum_over_processes(tensor, group=None):
    return _SumOverProcesses.apply(tensor, group)


class ProcessGroupReplicas(SingleProcess):
    """The combination of a training step's work over the ranks of a process group.

    The ``replicas`` of :func:`sparsetab._training.loop.train_network` when every rank trains the same
    network on its own rows (data parallelism). Every rank must run the same number of steps.

    Parameters
    ----------
    group : torch.distributed.ProcessGroup or None
        The process group; None: the default (world) group.
    """

    def __init__(self, group=None):
        self.group = group
        self.world_size, self.rank = _check_process_group(group)

    def batch_normalisers(self, batch_weight, n_rows):
        """The global batch's sum of weights, and the local batch's share of its rows.

        The global objective of a step is ``sum_r sum_i w_ri l_ri / W + lambda * sum_r n_r s_r / N``,
        with ``W`` the global sum of weights, ``N`` the global rows and ``s_r`` rank ``r``'s sparsity
        loss (a mean over its rows): each rank's term uses ``W`` and ``n_r / N``.

        Parameters
        ----------
        batch_weight : torch.Tensor, scalar, float
            Sum of the local batch's sample weights.
        n_rows : int
            Rows of the local batch.

        Returns
        -------
        weight_total : torch.Tensor, scalar
            ``W``, in the dtype of ``batch_weight`` (summed in float64).
        row_share : torch.Tensor, scalar
            ``n_r / N``, in the dtype of ``batch_weight``.
        """
        totals = torch.stack(
            [batch_weight.detach().to(torch.float64), batch_weight.new_tensor(n_rows, dtype=torch.float64)]
        )
        dist.all_reduce(totals, group=self.group)
        return totals[0].to(batch_weight.dtype), (n_rows / totals[1]).to(batch_weight.dtype)

    def reduce_gradients(self, tensors):
        """Sum the gradients of ``tensors`` over the ranks, in place (one all-reduce per tensor).

        Parameters
        ----------
        tensors : list of torch.Tensor
            The optimizer's tensors: the flat parameter buffer, or the parameters when they cannot
            share one. A tensor without a gradient counts as a zero gradient.
        """
        for tensor in tensors:
            if tensor.grad is None:  # unused by this rank's batch: every rank must still take part
                tensor.grad = torch.zeros_like(tensor)
            dist.all_reduce(tensor.grad, group=self.group)

    def sum_over_processes(self, value):
        """The sum of ``value`` over the ranks.

        Parameters
        ----------
        value : torch.Tensor, scalar
            A local total.

        Returns
        -------
        torch.Tensor, scalar
            A new tensor, the same on every rank.
        """
        total = torch.as_tensor(value).clone()
        dist.all_reduce(total, group=self.group)
        return total

    def synchronise(self, network):
        """Average the running statistics of the ghost batch norms over the ranks.

        Each rank's pending updates are applied first. The update of a running statistic is linear
        in the step's statistics (see :meth:`sparsetab.network.GhostBatchNorm.flush_running_stats`)
        and a rank's statistics are the mean over its own virtual batches, so with the same
        number of virtual batches on every rank the average is the running statistic of one
        process with all the virtual batches. Whole-batch normalisations (the input batch norm),
        whose statistics are already global, are left as they are.

        Parameters
        ----------
        network : torch.nn.Module
            The network; its modules are searched for :class:`~sparsetab.network.GhostBatchNorm`.
        """
        buffers = []
        for module in network.modules():
            if isinstance(module, GhostBatchNorm) and module.virtual_batch_size is not None:
                module.flush_running_stats()
                buffers += [module.running_mean, module.running_var]
        if not buffers:
            return
        with torch.no_grad():
            flat = torch.cat([buffer.reshape(-1) for buffer in buffers])
            dist.all_reduce(flat, group=self.group)
            flat /= self.world_size
            for buffer, average in zip(buffers, flat.split([buffer.numel() for buffer in buffers]), strict=True):
                buffer.copy_(average.view_as(buffer))


class ShardBatches:
    """One rank's rows, split into the local batches of the global batches of every step.

    The batch source of :func:`sparsetab._training.loop.train_network` on one rank: an epoch has
    ``max(1, ceil(total_rows / batch_size))`` steps on every rank, and each rank splits a new
    random order of its own rows into that many local batches of near-equal size (they differ by
    at most one row). The local batches of a step form its global batch of about ``batch_size``
    rows.

    Parameters
    ----------
    X : torch.Tensor of shape (n_local, n_columns), float
        This rank's encoded rows.
    y : torch.Tensor of shape (n_local, ...)
        Their targets, in the form the loss expects.
    sample_weight : torch.Tensor of shape (n_local,), float
        Their positive weights.
    total_rows : int
        Rows of all the ranks together.

    Raises
    ------
    ValueError
        When ``total_rows`` is smaller than the local rows.
    """

    def __init__(self, X, y, sample_weight, total_rows):
        if total_rows < X.shape[0]:
            raise ValueError(f"total_rows={total_rows} is smaller than this rank's {X.shape[0]} rows.")
        self.X, self.y, self.sample_weight, self.total_rows = X, y, sample_weight, int(total_rows)

    def steps_per_epoch(self, batch_size):
        """Optimiser steps of one epoch, the same on every rank: ``max(1, ceil(total_rows / batch_size))``.

        Parameters
        ----------
        batch_size : int
            Rows of the global batch.

        Returns
        -------
        int
            The number of global batches (and of this rank's local batches) of an epoch.
        """
        return max(1, math.ceil(self.total_rows / batch_size))

    def epoch(self, batch_size, generator):
        """The local batches of one epoch, in a new random order of this rank's rows.

        Parameters
        ----------
        batch_size : int
            Rows of the global batch.
        generator : torch.Generator
            Source of the order; one permutation of the local rows is drawn from it.

        Yields
        ------
        tuple of torch.Tensor
            ``(X, y, sample_weight)`` of one local batch.

        Raises
        ------
        ValueError
            When this rank has fewer rows than the epoch has steps (some local batch would be empty).
        """
        n_steps = self.steps_per_epoch(batch_size)
        n_local = self.X.shape[0]
        if n_local < n_steps:
            raise ValueError(
                f"This rank's shard has {n_local} training rows, fewer than the {n_steps} steps of an epoch "
                f"(ceil({self.total_rows} rows / batch_size={batch_size})): give every rank at least {n_steps} "
                "rows (shards of equal size are best) or raise batch_size."
            )
        order = torch.randperm(n_local, generator=generator).to(self.X.device)
        for index in torch.tensor_split(order, n_steps):
            yield (
                self.X.index_select(0, index),
                self.y.index_select(0, index),
                self.sample_weight.index_select(0, index),
            )


def _input_statistics_across(network, group):
    # The input batch norm of a TabNet normalises with the global batch's statistics while the block is active.
    input_norm = getattr(network, "input_bn", None)
    if not isinstance(input_norm, GhostBatchNorm):
        return contextlib.nullcontext()
    return input_norm.statistics_across(functools.partial(_sum_over_processes, group=group))


def _train_replica(
    network,
    loss_function,
    X,
    y,
    sample_weight,
    config,
    generator,
    total_rows,
    *,
    score_function=None,
    optimizer_state=None,
    observer=None,
    group=None,
):
    # One rank's part of a fit: train_network on its shard, its steps combined with the other ranks'. Every rank
    # must call it with the same network, config and generator state. Also the float64 hook of the test suite.
    batches = ShardBatches(X, y, sample_weight, total_rows)
    with _input_statistics_across(network, group):
        return train_network(
            network,
            loss_function,
            None,
            None,
            None,
            config,
            generator,
            score_function,
            optimizer_state=optimizer_state,
            observer=observer,
            batches=batches,
            replicas=ProcessGroupReplicas(group),
        )


class _Failure:
    # An exception raised on rank 0, sent to the other ranks so that they raise it too instead of waiting.
    def __init__(self, error):
        self.error = error


def _send_failure(error, group):
    # Rank 0: send an exception once (it may pass through several handlers on its way out of fit).
    if not getattr(error, "_sent_to_ranks", False):
        error._sent_to_ranks = True
        _broadcast(_Failure(error), group)


def _broadcast(value, group):
    # Rank 0's value on every rank; a _Failure received is raised.
    objects = [value]
    dist.broadcast_object_list(objects, src=_source_rank(group), group=group)
    if isinstance(objects[0], _Failure):
        raise objects[0].error
    return objects[0]


def _broadcast_result(function, group):
    # Rank 0: call function and send its result (or its exception) to the other ranks.
    try:
        value = function()
    except Exception as error:
        _send_failure(error, group)
        raise
    return _broadcast(value, group)


class _DecidingObserver(TrainingObserver):
    # Rank 0's observer: the user's (verbose lines, callbacks), whose request to stop is sent to every rank.
    def __init__(self, observer, group):
        self.observer = observer if observer is not None else TrainingObserver()
        self.group = group

    def epoch_begin(self, epoch, n_steps):
        self.observer.epoch_begin(epoch, n_steps)

    def step_end(self):
        self.observer.step_end()

    def epoch_end(self, record):
        return _broadcast_result(lambda: bool(self.observer.epoch_end(record)), self.group)

    def epoch_abandoned(self):
        self.observer.epoch_abandoned()

    def training_end(self, history, patience):
        self.observer.training_end(history, patience)


class _FollowingObserver(TrainingObserver):
    # The observer of the other ranks: rank 0's decision to stop.
    def __init__(self, group):
        self.group = group

    def epoch_end(self, record):
        return _broadcast(None, self.group)


def _to_cpu(value):
    return value.cpu() if isinstance(value, torch.Tensor) else value


class _Rank0Trainer:
    # train_network's signature, on rank 0: sends the network, the settings and each rank's rows, then trains
    # its own shard with the other ranks. The union's rows are in rank order, shard_rows[r] of them from rank r.

    def __init__(self, shard_rows, group):
        self.shard_rows, self.group = shard_rows, group

    def __call__(
        self,
        network,
        loss_function,
        X,
        y,
        sample_weight,
        config,
        generator,
        score_function=None,
        optimizer_state=None,
        observer=None,
    ):
        total_rows = sum(self.shard_rows)
        if X.shape[0] != total_rows:
            raise ValueError(
                f"distributed.fit trains {X.shape[0]} rows where the shards hold {total_rows} rows of positive "
                "sample_weight: rows dropped by the fit (a class_weight of 0) cannot be traced back to their rank. "
                "Give such rows sample_weight 0 in the shards instead."
            )
        n_steps = max(1, math.ceil(total_rows / config.batch_size))
        if min(self.shard_rows) < n_steps:
            raise ValueError(
                f"The shards hold {self.shard_rows} training rows (by rank), and an epoch has {n_steps} steps "
                f"(ceil({total_rows} rows / batch_size={config.batch_size})): every rank needs at least one row per "
                "step. Give the ranks shards of about equal size, or raise batch_size."
            )
        pieces = [
            tuple(_to_cpu(part) for part in piece)
            for piece in zip(X.split(self.shard_rows), y.split(self.shard_rows), sample_weight.split(self.shard_rows))
        ]
        setup = {
            "network": copy.deepcopy(network).cpu(),
            "loss_function": loss_function,
            "config": config,
            "generator_state": generator.get_state(),
            "total_rows": total_rows,
            "optimizer_state": None if optimizer_state is None else _state_to_cpu(optimizer_state),
            "scored": score_function is not None,
        }
        _broadcast(("train", setup), self.group)
        received = [None]
        dist.scatter_object_list(received, pieces, src=_source_rank(self.group), group=self.group)
        local_rows = self.shard_rows[0]
        score = None
        if score_function is not None:
            score = functools.partial(_broadcast_result, score_function, self.group)
        return _train_replica(
            network,
            loss_function,
            X[:local_rows],
            y[:local_rows],
            sample_weight[:local_rows],
            config,
            generator,
            total_rows,
            score_function=score,
            optimizer_state=optimizer_state,
            observer=_DecidingObserver(observer, self.group),
            group=self.group,
        )


def _state_to_cpu(state):
    return {key: _state_to_cpu(value) if isinstance(value, dict) else _to_cpu(value) for key, value in state.items()}


def _follow(setup, device, group):
    # A rank other than 0: train its rows (sent by rank 0) with the network and settings of rank 0.
    received = [None]
    dist.scatter_object_list(received, None, src=_source_rank(group), group=group)
    X, y, sample_weight = (part.to(device) for part in received[0])
    network = setup["network"].to(device)
    generator = torch.Generator()
    generator.set_state(setup["generator_state"])
    score = functools.partial(_broadcast, None, group) if setup["scored"] else None
    _train_replica(
        network,
        setup["loss_function"],
        X,
        y,
        sample_weight,
        setup["config"],
        generator,
        setup["total_rows"],
        score_function=score,
        optimizer_state=setup["optimizer_state"],
        observer=_FollowingObserver(group),
        group=group,
    )


def _concatenate(parts, name):
    # The union of the shards' X, y or sample_weight, in rank order.
    if all(isinstance(part, pd.DataFrame) for part in parts) or all(isinstance(part, pd.Series) for part in parts):
        return pd.concat(parts, ignore_index=True)
    if any(isinstance(part, pd.DataFrame) for part in parts):
        kinds = ", ".join(f"rank {rank}: {type(part).__name__}" for rank, part in enumerate(parts))
        raise TypeError(f"{name} must be a DataFrame on every rank or on none; got {kinds}.")
    return np.concatenate([np.asarray(part) for part in parts])


def _union(shards):
    # shards: (X, y, sample_weight) of each rank. Returns the union and each shard's rows of positive weight.
    for rank, (X, y, weight) in enumerate(shards):
        n_rows = _num_samples(X)
        if y is None or _num_samples(y) != n_rows or (weight is not None and _num_samples(weight) != n_rows):
            raise ValueError(
                f"The shard of rank {rank} has inconsistent numbers of samples: X_shard has {n_rows} rows, "
                f"y_shard {None if y is None else _num_samples(y)}, sample_weight "
                f"{None if weight is None else _num_samples(weight)}."
            )
    X = _concatenate([X for X, _, _ in shards], "X_shard")
    y = _concatenate([y for _, y, _ in shards], "y_shard")
    if all(weight is None for _, _, weight in shards):
        return X, y, None, [_num_samples(X) for X, _, _ in shards]
    weights = [
        np.ones(_num_samples(X)) if weight is None else np.asarray(weight, dtype=np.float64) for X, _, weight in shards
    ]
    return X, y, np.concatenate(weights), [int(np.count_nonzero(weight > 0)) for weight in weights]


def _fit_on_rank_0(estimator, shards, X_val, y_val, sample_weight_val, group):
    X, y, sample_weight, shard_rows = _union(shards)
    if X_val is None and resolve_early_stopping(estimator.early_stopping, sum(shard_rows), False):
        raise ValueError(
            f"early_stopping={estimator.early_stopping!r} needs validation rows, and distributed.fit does not hold "
            "out part of the shards: pass X_val and y_val on rank 0, or set early_stopping=False."
        )
    estimator._fit_with_trainer(
        _Rank0Trainer(shard_rows, group),
        X,
        y,
        sample_weight,
        X_val=X_val,
        y_val=y_val,
        sample_weight_val=sample_weight_val,
    )
    return estimator


def _take_fitted_state(estimator, fitted):
    # The fitted attributes of rank 0's estimator; this rank's parameters stay its own objects.
    parameters = set(estimator.get_params(deep=False))
    for name, value in vars(fitted).items():
        if name not in parameters:
            setattr(estimator, name, value)


def fit(
    estimator,
    X_shard,
    y_shard,
    sample_weight=None,
    *,
    X_val=None,
    y_val=None,
    sample_weight_val=None,
    path=None,
    group=None,
):
    """Fit ``estimator`` on the union of the shards of every rank of a process group.

    Call it on every rank of an initialised ``torch.distributed`` process group (gloo on CPU,
    nccl on GPU: then each rank calls ``torch.cuda.set_device(local_rank)`` first and the
    estimator has ``device="cuda"``), each rank with its own shard. Rank 0 gathers the shards
    and prepares the fit on their union as a one-process ``fit`` would (target kind, tabular
    encoding, bin edges, initial weights); every rank then trains the network on its own rows,
    the ranks' gradients summed each step (see the module description), and rank 0 scores the
    validation rows and takes the stopping decisions. Every rank returns the same fitted estimator.

    Parameters
    ----------
    estimator : SparseTabNetClassifier or SparseTabNetRegressor
        The estimator to fit, in place, on every rank. Rank 0's parameters are the ones used.
    X_shard : pandas.DataFrame or array-like of shape (n_shard_samples, n_features)
        This rank's rows: a DataFrame on every rank or on none, with the same columns.
    y_shard : array-like of shape (n_shard_samples,) or (n_shard_samples, n_outputs)
        Their targets.
    sample_weight : array-like of shape (n_shard_samples,), default=None
        Non-negative weights of this rank's rows (None: 1 for each row).
    X_val : pandas.DataFrame or array-like of shape (n_val_samples, n_features), default=None
        Validation rows for early stopping and ``validation_scores_``, read on rank 0 only (the
        other ranks' are ignored). The shards are not split: without validation rows,
        ``early_stopping`` must resolve to False.
    y_val : array-like of shape (n_val_samples,) or (n_val_samples, n_outputs), default=None
        Validation targets, on rank 0; required with ``X_val``.
    sample_weight_val : array-like of shape (n_val_samples,), default=None
        Weights of the validation rows, on rank 0.
    path : str or os.PathLike, default=None
        Where rank 0 writes the fitted model (:meth:`save_model`) before every rank returns;
        None writes nothing.
    group : torch.distributed.ProcessGroup, default=None
        The process group; None: the default group.

    Returns
    -------
    object
        ``estimator``, fitted, on every rank.

    Raises
    ------
    RuntimeError
        If no process group is initialised.
    ValueError
        On every rank, for whatever rank 0's ``fit`` of the union refuses (see ``fit``), a shard
        whose X, y and sample_weight differ in length, ``early_stopping`` that would need a
        validation split (no ``X_val`` on rank 0), a class weight of 0 (which would drop rows of
        unknown rank), or a shard with fewer rows than an epoch has steps.
    TypeError
        On every rank, for ``X_shard`` that is a DataFrame on some ranks only, or what rank 0's
        ``fit`` refuses.

    Notes
    -----
    The steps equal those of one process whose batch of each step is the union of the ranks'
    local batches, the global row ``i`` being row ``i // W`` of rank ``i mod W``'s local batch
    (``W`` ranks), when the ghost batch norms split the global batch as the ranks split it. Ghost
    batch norm interleaves its virtual batches (row ``i`` to virtual batch ``i mod k``), so a
    rank's virtual batches are global virtual batches when every rank's local batch has ``b`` rows
    and ``k = ceil(W b / virtual_batch_size)`` is a multiple of ``W`` that divides ``W b``: for
    example equal shards of ``n`` rows, ``batch_size`` dividing ``W n`` and a multiple of
    ``W * virtual_batch_size``. Otherwise each rank's virtual batches are as large as a
    one-process fit's but drawn within the rank, and the running statistics are averages over
    ranks of slightly different splits. Rank 0 holds the union of the shards while it prepares
    the fit (the encoding is fitted on all the rows). A failure on one rank during training
    (other than rank 0's validation score) leaves the others waiting until the process group's
    timeout. ``partial_fit`` across processes is not supported.
    """
    world_size, rank = _check_process_group(group)
    shards = [None] * world_size if rank == 0 else None
    dist.gather_object((X_shard, y_shard, sample_weight), shards, dst=_source_rank(group), group=group)
    if rank == 0:
        try:
            _fit_on_rank_0(estimator, shards, X_val, y_val, sample_weight_val, group)
            if path is not None:
                estimator.save_model(path)
        except Exception as error:
            _send_failure(error, group)
            raise
        _broadcast(("done", estimator), group)
    else:
        device = torch.device("cuda", torch.cuda.current_device()) if dist.get_backend(group) == "nccl" else None
        while True:
            message, payload = _broadcast(None, group)
            if message == "done":
                _take_fitted_state(estimator, payload)
                break
            _follow(payload, device or torch.device("cpu"), group)
    dist.barrier(group=group)
    return estimator
