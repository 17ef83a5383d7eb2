"""The fit loop: balanced mini-batches, Adam(W), a learning-rate schedule, clipping, early stopping.

Nothing here knows about scikit-learn; the estimator passes tensors, a per-sample loss and,
when early stopping or validation is on, a function that scores the current network.
"""

import contextlib
import math
import time
from dataclasses import dataclass, field

import torch
from sklearn.exceptions import ConvergenceWarning

from .._warnings import warn
from .flat_parameters import FlatParameters

__all__ = [
    "LEARNING_RATE_SCHEDULES",
    "MIN_PATIENCE_STEPS",
    "STOP_REASONS",
    "EpochRecord",
    "ObserverGroup",
    "SingleProcess",
    "TensorBatches",
    "TrainingConfig",
    "TrainingHistory",
    "TrainingObserver",
    "learning_rate_factor",
    "patience_epochs",
    "train_network",
]

LEARNING_RATE_SCHEDULES = ("constant", "exponential", "cosine")
# Early stopping waits at least this many optimiser steps without improvement, whatever the epoch size:
# counted in epochs alone, a patience of 10 stops a data set of 4 batches after 40 steps, before it has learned.
MIN_PATIENCE_STEPS = 200


@dataclass
class TrainingConfig:
    """Training hyperparameters (see the estimators for their meaning)."""

    batch_size: int
    max_epochs: int
    learning_rate: float
    learning_rate_decay: float
    max_grad_norm: float | None
    lambda_sparse: float
    n_iter_no_change: int
    tol: float
    early_stopping: bool
    verbose: int
    learning_rate_schedule: str = "exponential"
    warmup_epochs: float = 0
    weight_decay: float = 0.0
    lambda_gate: float = 0.0
    """Weight of the step-gate regulariser (used only by a network with step gates)."""
    incremental: bool = False
    """One epoch of ``partial_fit``: no convergence test, no ConvergenceWarning."""
    epoch_offset: int = 0
    """Epochs run by earlier calls (``warm_start``, ``partial_fit``), for the verbose epoch numbers."""
    schedule_epochs: int | None = None
    """Length of the learning-rate schedule in epochs (the estimator's ``max_epochs``; None: ``max_epochs``)."""
    schedule_offset: int = 0
    """Epochs of the schedule already run (``partial_fit`` continues it; a new ``fit`` restarts it)."""
    fixed_epochs: bool = False
    """``max_epochs`` is a count chosen on held-out rows (the refit on all rows of ``early_stopping="auto"``):
    reaching it says nothing about more epochs, so no warning is given at the end."""


@dataclass
class TrainingHistory:
    """What happened during training.

    Attributes
    ----------
    loss_curve : list of float
        Mean training objective (weighted loss + ``lambda_sparse`` * sparsity loss, + ``lambda_gate``
        * gate loss with step gates) per epoch.
    validation_scores : list of float or None
        Validation score per epoch (higher is better), None without validation data.
    alpha_history : list of list of float
        Alpha of each decision step's map at the end of each epoch.
    best_iteration : int or None
        Zero-based index (in this call's epochs) of the epoch with the best monitored score:
        the validation score under early stopping, else the negative training loss. Under
        early stopping its weights are the ones kept.
    converged : bool
        Whether training stopped on its own criterion before ``max_epochs``.
    diverged : bool
        Whether training stopped on a non-finite loss.
    interrupted : bool
        Whether a KeyboardInterrupt stopped training; the epoch it interrupted is not recorded.
    optimizer_state : dict or None
        The optimizer's ``state_dict()`` at the end (Adam moments, decayed learning rate), to
        continue with the next ``partial_fit`` call.
    """

    loss_curve: list = field(default_factory=list)
    validation_scores: list | None = None
    alpha_history: list = field(default_factory=list)
    best_iteration: int | None = None
    converged: bool = False
    diverged: bool = False
    interrupted: bool = False
    optimizer_state: dict | None = None
    stop_reason: str = "max_epochs"
    """Why training ended: one of :data:`STOP_REASONS`."""
    kept_epoch: int | None = None
    """1-based epoch number (counting earlier calls) whose weights the network holds at the end (0: the
    weights it started with); None after an interrupt that kept the weights part-way through an epoch."""


#: Why a training call ends: patience ran out, ``max_epochs`` was reached, the loss or weights became
#: non-finite, the user pressed Ctrl-C, an observer (a scikit-learn callback) asked to stop, or the one
#: epoch of ``partial_fit`` is done.
STOP_REASONS = ("no_improvement", "max_epochs", "non_finite", "interrupted", "callback", "partial_fit")


@dataclass
class EpochRecord:
    """One completed epoch, as :func:`train_network` reports it to its observer.

    Attributes
    ----------
    epoch : int
        1-based epoch number, counting the epochs of earlier calls (``warm_start``,
        ``partial_fit``).
    last_epoch : int or None
        The epoch number at which this call stops at the latest (``epoch_offset + max_epochs``);
        None for ``partial_fit``, whose calls have no end.
    train_loss : float
        Mean training objective of the epoch (weighted loss + ``lambda_sparse`` * sparsity loss).
    validation_score : float or None
        The epoch's validation score (higher is better), None without validation rows.
    best : bool
        Whether the monitored score (the validation score under early stopping, else the
        negative training loss) is the best of this call so far.
    seconds : float
        Wall-clock duration of the epoch, validation included, in seconds.
    """

    epoch: int
    last_epoch: int | None
    train_loss: float
    validation_score: float | None
    best: bool
    seconds: float


class TrainingObserver:
    """What :func:`train_network` tells about its progress; the methods here do nothing.

    Subclasses (the verbose printer, the scikit-learn callback bridge) override what they need.
    """

    def epoch_begin(self, epoch, n_steps):
        """An epoch starts: its 1-based number and its count of optimiser steps."""

    def step_end(self):
        """One optimiser step of the current epoch is done."""

    def epoch_end(self, record):
        """An epoch is complete (an :class:`EpochRecord`); return True to stop training after it."""
        return False

    def epoch_abandoned(self):
        """The current epoch ends without a record (non-finite loss, interrupt)."""

    def training_end(self, history, patience):
        """Training ended: the :class:`TrainingHistory` and the patience in epochs that applied."""


class ObserverGroup(TrainingObserver):
    """Several observers as one: every call goes to each, and any one of them can stop training."""

    def __init__(self, observers):
        self.observers = [observer for observer in observers if observer is not None]

    def epoch_begin(self, epoch, n_steps):
        for observer in self.observers:
            observer.epoch_begin(epoch, n_steps)

    def step_end(self):
        for observer in self.observers:
            observer.step_end()

    def epoch_end(self, record):
        # Every observer hears of the epoch, even after one has asked to stop.
        return any([observer.epoch_end(record) for observer in self.observers])

    def epoch_abandoned(self):
        for observer in self.observers:
            observer.epoch_abandoned()

    def training_end(self, history, patience):
        for observer in self.observers:
            observer.training_end(history, patience)


def learning_rate_factor(schedule, progress, *, warmup_epochs, schedule_epochs, decay):
    """The learning rate of a step, as a multiple of ``learning_rate``.

    Parameters
    ----------
    schedule : {"constant", "exponential", "cosine"}
        The schedule.
    progress : float
        Epochs completed when the step ends (step ``s`` of ``S`` in epoch ``k``, counted from 0,
        ends at ``k + (s + 1) / S``), in epochs.
    warmup_epochs : float
        Length of the linear warm-up, in epochs: the factor grows linearly from 0 to 1 over them
        (Goyal et al., 2017, "Accurate, large minibatch SGD", section 2.2, gradual warm-up); at
        most ``schedule_epochs / 2`` (a longer one is cut to that).
    schedule_epochs : int
        Length of the schedule (``max_epochs``), in epochs, warm-up included.
    decay : float
        Per-epoch factor of the exponential schedule.

    Returns
    -------
    float
        ``warmup * base``, where ``warmup = min(1, progress / w)`` with ``w = min(warmup_epochs,
        schedule_epochs / 2)`` (1 without warm-up)
        and ``base`` is 1 (constant), ``decay ** floor(completed epochs)`` (exponential), or
        ``(1 + cos(pi * t)) / 2`` with ``t`` the share of the post-warm-up epochs done,
        clipped to [0, 1] (cosine: Loshchilov and Hutter, 2017, "SGDR", Eq. 5 with
        ``eta_min = 0`` and no restart).
    """
    # A warm-up longer than half the schedule is cut to half of it, so a short fit (max_epochs=1 with
    # the default 5 warm-up epochs) still reaches the full rate and, with the cosine, anneals.
    warmup_epochs = min(warmup_epochs, schedule_epochs / 2)
    warmup = min(1.0, progress / warmup_epochs) if warmup_epochs > 0 else 1.0
    if schedule == "constant":
        return warmup
    if schedule == "exponential":
        # The rate of a step is fixed within its epoch: the epoch it belongs to is the one it ends in.
        return warmup * decay ** math.floor(progress - 1e-9)
    span = schedule_epochs - warmup_epochs
    done = min(1.0, max(0.0, (progress - warmup_epochs) / span)) if span > 0 else 1.0
    return warmup * 0.5 * (1.0 + math.cos(math.pi * done))


def patience_epochs(n_iter_no_change, steps_per_epoch):
    """Epochs without improvement after which training stops.

    Parameters
    ----------
    n_iter_no_change : int
        The estimator's patience, in epochs.
    steps_per_epoch : int
        Optimiser steps per epoch.

    Returns
    -------
    int
        ``max(n_iter_no_change, ceil(MIN_PATIENCE_STEPS / steps_per_epoch))``: at least
        :data:`MIN_PATIENCE_STEPS` (200) optimiser steps without improvement, so a small data
        set of a few batches is not stopped before it has learned.
    """
    return max(int(n_iter_no_change), math.ceil(MIN_PATIENCE_STEPS / steps_per_epoch))


def _warn_at_max_epochs(history, config, early_stopping, patience):
    """The warning of a fit that ran all ``max_epochs`` without stopping on its own criterion.

    More epochs are advised (a ConvergenceWarning, as scikit-learn's MLP) only when no held-out
    score says they would not help: the monitored score was still improving and, whenever
    validation scores were recorded, the validation score peaked within the last ``patience``
    epochs. When it peaked earlier (held-out error rising while the training loss still falls:
    the model overfits its training rows), there is no advice to train longer: under early
    stopping whose patience outlasts ``max_epochs`` the best epoch's weights were kept and nothing
    is said; with ``early_stopping=False`` and ``X_val``, a UserWarning says the last epoch's
    weights were kept and points to early stopping.
    """
    scores = history.validation_scores
    if scores:
        finite = [score if math.isfinite(score) else -math.inf for score in scores]
        peak = max(range(len(finite)), key=finite.__getitem__)  # the first epoch of the best score
        if len(scores) - 1 - peak >= patience:
            if not early_stopping:
                warn(
                    f"max_epochs={config.max_epochs} reached with the training loss still improving, but the "
                    f"validation score peaked at epoch {config.epoch_offset + peak + 1} and has not improved for "
                    f"{len(scores) - 1 - peak} epochs (the model overfits its training rows); the last epoch's "
                    "weights were kept. Set early_stopping=True to keep the best epoch's weights.",
                    UserWarning,
                )
            return
    monitored = "validation score" if early_stopping else "training loss"
    warn(
        f"max_epochs={config.max_epochs} reached and the {monitored} was still improving. Consider raising max_epochs.",
        ConvergenceWarning,
    )


def _batches(n_rows, batch_size, generator, device):
    # Batches of near-equal size (they differ by at most one row), so no small last batch: a
    # single-row batch, which batch norm maps to its bias, needs one training row or batch_size 1 or 2.
    n_batches = max(1, math.ceil(n_rows / batch_size))
    order = torch.randperm(n_rows, generator=generator).to(device)
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


_SINGLE_PROCESS = SingleProcess()


def _snapshot(network):
    # A copy of the weights and buffers to restore later: clones, several times faster than deepcopy;
    # load_state_dict reads the version metadata, which is kept.
    state = network.state_dict()
    copied = type(state)((name, value.clone()) for name, value in state.items())
    copied._metadata = getattr(state, "_metadata", None)
    return copied


def _all_finite(network):
    # One check over every floating weight and buffer (integer buffers cannot hold inf or NaN).
    values = [value.reshape(-1) for value in network.state_dict().values() if value.is_floating_point()]
    return bool(torch.isfinite(torch.cat(values)).all())


def _rebase_exponential(group, config):
    # A loaded rate continues the exponential schedule at the current learning_rate: ExponentialLR
    # records its base as initial_lr, so a new learning_rate rescales the decayed rate (instead of
    # being ignored), and a rate left by another schedule restarts the exponential one where it stands.
    base = group.get("initial_lr")
    if base is None:
        group["lr"] = config.learning_rate * config.learning_rate_decay**config.schedule_offset
    elif base != config.learning_rate:
        group["lr"] *= config.learning_rate / base
    group["initial_lr"] = config.learning_rate


def _optimizer(optimized, config, fused):
    """Adam, or AdamW (decoupled weight decay: Loshchilov and Hutter, 2019) when ``weight_decay > 0``."""
    # The fused kernel updates all parameters in one call (on CPU about 4x faster than the
    # per-tensor loop, which was a tenth of a training step); other devices keep the default.
    if config.weight_decay > 0:
        return torch.optim.AdamW(optimized, lr=config.learning_rate, weight_decay=config.weight_decay, fused=fused)
    return torch.optim.Adam(optimized, lr=config.learning_rate, fused=fused)


def member_mean_loss(loss_function, output, target, n_members):
    """Per-row losses of a network's output, averaged over its efficient members.

    Each efficient member is trained on its own loss, and the objective is their mean (TabM,
    Gorishniy et al., ICLR 2025, section 3), not the loss of the averaged prediction.

    Parameters
    ----------
    loss_function : callable
        ``loss_function(output, target) -> torch.Tensor of shape (rows,)``, per-row losses.
    output : torch.Tensor of shape (n_members * batch, output_dim)
        The network's output, member-major (see :class:`~sparsetab.network.TabNet`).
    target : torch.Tensor of shape (batch, ...)
        The targets of the batch's rows, in the form ``loss_function`` expects.
    n_members : int
        The network's ``n_efficient_members``; 1 is ``loss_function(output, target)`` itself.

    Returns
    -------
    torch.Tensor of shape (batch,)
        Each row's loss, the mean over the members of their loss on it.
    """
    if n_members == 1:
        return loss_function(output, target)
    repeated = target.repeat(n_members, *([1] * (target.dim() - 1)))
    return loss_function(output, repeated).reshape(n_members, -1).mean(dim=0)


def train_network(
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
    batches=None,
    replicas=None,
):
    """Train ``network`` in place and return its history.

    Parameters
    ----------
    network : sparsetab.network.TabNet
        The model; its forward returns ``(output, masks, sparsity_loss)``, or
        ``(output, masks, sparsity_loss, gate_loss)`` with step gates.
    loss_function : callable
        ``loss_function(output, target) -> torch.Tensor of shape (batch,)``, per-sample losses.
    X : torch.Tensor of shape (n_samples, n_columns), float32, or None
        The training rows; None when ``batches`` is given.
    y : torch.Tensor of shape (n_samples, ...) or None
        Targets in the form ``loss_function`` expects; None when ``batches`` is given.
    sample_weight : torch.Tensor of shape (n_samples,), float32, or None
        Positive weights; each batch's loss is the weighted mean of its per-sample losses. None
        when ``batches`` is given.
    config : TrainingConfig
    generator : torch.Generator
        Source of the shuffling order (its state advances, so a later call continues the stream).
    score_function : callable or None
        ``score_function() -> float``, the validation score of the current network (higher is
        better); it must leave the network in evaluation mode or training mode, either is fine.
    optimizer_state : dict or None
        A ``TrainingHistory.optimizer_state`` of an earlier call to continue from (Adam's
        moments and the decayed learning rate); None starts a fresh optimizer at
        ``config.learning_rate``.
    observer : TrainingObserver or None
        Told of every epoch and step (the verbose lines, scikit-learn callbacks); its
        ``epoch_end`` may stop training. None: nothing is reported.
    batches : object or None
        Where the batches come from when the rows are not tensors in memory: an object with
        the methods of :class:`TensorBatches` (``steps_per_epoch(batch_size)`` and
        ``epoch(batch_size, generator)``). None: ``TensorBatches(X, y, sample_weight)``.
    replicas : SingleProcess or None
        How the steps combine with other processes training the same network on other rows (an
        object with the methods of :class:`SingleProcess`): the loss normalisers of a local batch,
        the reduction of the gradients, the sum of the epoch's loss totals, and the
        synchronisation of the network before each evaluation. None: one process.

    Returns
    -------
    TrainingHistory

    Warns
    -----
    sklearn.exceptions.ConvergenceWarning
        When ``max_epochs`` is reached while the monitored quantity still improves (not for
        ``config.incremental``).
    RuntimeWarning
        When the loss or the weights become non-finite; the last finite weights are restored.
    UserWarning
        When a KeyboardInterrupt stops training: the epochs done so far are kept (and the best
        weights restored under early stopping) instead of raising; or when a continued
        ``partial_fit`` epoch starts after the end of a cosine schedule (learning rate 0).
    """
    data = TensorBatches(X, y, sample_weight) if batches is None else batches
    n_members = getattr(network, "n_efficient_members", 1)
    replicas = _SINGLE_PROCESS if replicas is None else replicas
    # Listed once: walking the module tree for every step's zero_grad and clipping cost about 4% of a step.
    parameters = list(network.parameters())
    # One flat tensor for clipping and Adam where the parameters allow it (see _flat_parameters); the
    # parameters get storage of their own again when training ends, however it ends.
    flat_parameters = FlatParameters(parameters) if FlatParameters.supports(parameters) else contextlib.nullcontext()
    with flat_parameters as flat:
        optimized = parameters if flat is None else [flat.flat]
        device_type = parameters[0].device.type
        optimizer = _optimizer(optimized, config, device_type in ("cpu", "cuda"))
        # The first release's schedule, kept step for step: ExponentialLR multiplies the optimizer's
        # current rate once an epoch, so a loaded (decayed) rate continues. The others set each step's rate.
        legacy_schedule = (
            config.learning_rate_schedule == "exponential" and config.warmup_epochs == 0 and config.weight_decay == 0
        )
        if optimizer_state is not None:
            optimizer.load_state_dict(optimizer_state if flat is None else flat.to_flat_state(optimizer_state))
            for group in optimizer.param_groups:  # the saved hyperparameters replace ours on loading
                group["weight_decay"] = config.weight_decay
                if legacy_schedule:
                    _rebase_exponential(group, config)
        scheduler = (
            torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=config.learning_rate_decay)
            if legacy_schedule
            else None
        )
        history = TrainingHistory(validation_scores=[] if score_function is not None else None)
        observer = observer if observer is not None else TrainingObserver()
        history.kept_epoch = config.epoch_offset
        last_epoch = None if config.incremental else config.epoch_offset + config.max_epochs
        early_stopping = config.early_stopping and not config.incremental
        best_score, best_state, epochs_without_improvement = -math.inf, None, 0
        steps_per_epoch = data.steps_per_epoch(config.batch_size)
        patience = patience_epochs(config.n_iter_no_change, steps_per_epoch)
        schedule_epochs = config.schedule_epochs if config.schedule_epochs is not None else config.max_epochs
        if config.learning_rate_schedule == "cosine" and config.schedule_offset >= schedule_epochs:
            warn(
                f"The cosine learning-rate schedule ended after max_epochs={schedule_epochs} epochs; its learning "
                "rate is now 0, so this epoch does not change the weights. Raise max_epochs to continue the "
                "schedule, or use learning_rate_schedule='constant' or 'exponential' for open-ended partial_fit.",
                UserWarning,
            )
        try:
            for epoch in range(config.max_epochs):
                started = time.perf_counter()
                observer.epoch_begin(config.epoch_offset + epoch + 1, steps_per_epoch)
                epoch_start_state = _snapshot(network)
                network.train()
                total, total_weight = 0.0, 0.0
                for step, (X_batch, y_batch, weight) in enumerate(data.epoch(config.batch_size, generator)):
                    if scheduler is None:
                        progress = config.schedule_offset + epoch + (step + 1) / steps_per_epoch
                        rate = config.learning_rate * learning_rate_factor(
                            config.learning_rate_schedule,
                            progress,
                            warmup_epochs=config.warmup_epochs,
                            schedule_epochs=schedule_epochs,
                            decay=config.learning_rate_decay,
                        )
                        for group in optimizer.param_groups:
                            group["lr"] = rate
                    # A network with step gates also returns its gate regulariser.
                    output, _, sparsity_loss, *gate_loss = network(X_batch)
                    batch_weight, row_share = replicas.batch_normalisers(weight.sum(), X_batch.shape[0])
                    loss = (member_mean_loss(loss_function, output, y_batch, n_members) * weight).sum() / batch_weight
                    if row_share is not None:
                        sparsity_loss = sparsity_loss * row_share
                        gate_loss = [term * row_share for term in gate_loss]
                    objective = loss + config.lambda_sparse * sparsity_loss
                    if gate_loss:
                        objective = objective + config.lambda_gate * gate_loss[0]
                    for parameter in parameters:  # what optimizer.zero_grad(set_to_none=True) does, without its hooks
                        parameter.grad = None
                    objective.backward()
                    if flat is not None:
                        flat.gather_gradients()
                    replicas.reduce_gradients(optimized)
                    if config.max_grad_norm is not None:
                        torch.nn.utils.clip_grad_norm_(optimized, config.max_grad_norm, foreach=True)
                    optimizer.step()
                    # Kept on the device and read once an epoch: reading a value each step would make the host
                    # wait for the device at every step. A non-finite step poisons the sum, so the check
                    # below also catches it (the epoch's weights are then dropped for its start's).
                    total = total + objective.detach().double() * batch_weight.double()
                    total_weight = total_weight + batch_weight.double()
                    observer.step_end()
                replicas.synchronise(network)
                epoch_loss = float(replicas.sum_over_processes(total) / total_weight)
                # A finite loss can still leave overflowed weights or batch norm statistics behind.
                history.diverged = not math.isfinite(epoch_loss) or not _all_finite(network)
                if history.diverged:
                    observer.epoch_abandoned()
                    history.stop_reason = "non_finite"
                    if best_state is None:
                        history.kept_epoch = config.epoch_offset + epoch  # the weights the epoch started from
                    network.load_state_dict(best_state if best_state is not None else epoch_start_state)
                    warn(
                        "The training loss or the weights became non-finite at epoch "
                        f"{config.epoch_offset + epoch + 1}; training stopped and the last finite weights were "
                        "restored. Lower learning_rate or set max_grad_norm.",
                        RuntimeWarning,
                    )
                    break
                if scheduler is not None:
                    scheduler.step()
                # The epoch is recorded only once complete, so an interrupt leaves consistent lists.
                epoch_score = float(score_function()) if score_function is not None else None
                history.loss_curve.append(epoch_loss)
                history.alpha_history.append(network.alphas)
                if score_function is not None:
                    history.validation_scores.append(epoch_score)
                # Early stopping monitors the validation score; otherwise, as scikit-learn's MLP, the
                # training loss decides convergence.
                score = epoch_score if early_stopping else -epoch_loss
                if math.isnan(score):
                    warn(
                        f"The validation score is NaN at epoch {config.epoch_offset + epoch + 1} (e.g. a metric "
                        "undefined on the validation rows); it counts as no improvement.",
                        RuntimeWarning,
                    )
                # As scikit-learn's MLP: patience counts epochs without an improvement of at least tol
                # (and at least MIN_PATIENCE_STEPS steps), while the kept weights are those of the best
                # score, however small its lead.
                epochs_without_improvement = 0 if score > best_score + config.tol else epochs_without_improvement + 1
                improved = score > best_score
                if improved:
                    best_score = score
                    history.best_iteration = epoch
                    if early_stopping:
                        best_state = _snapshot(network)
                if not early_stopping or improved:
                    history.kept_epoch = config.epoch_offset + epoch + 1
                record = EpochRecord(
                    epoch=config.epoch_offset + epoch + 1,
                    last_epoch=last_epoch,
                    train_loss=epoch_loss,
                    validation_score=epoch_score,
                    best=improved,
                    seconds=time.perf_counter() - started,
                )
                if observer.epoch_end(record):
                    history.converged, history.stop_reason = True, "callback"
                    break
                if not config.incremental and epochs_without_improvement >= patience:
                    history.converged, history.stop_reason = True, "no_improvement"
                    break
        except KeyboardInterrupt:
            observer.epoch_abandoned()
            history.interrupted, history.stop_reason = True, "interrupted"
            if not (early_stopping and best_state is not None):
                history.kept_epoch = None  # the weights as they were, part-way through an epoch
            done = len(history.loss_curve)
            kept = (
                f"the weights of epoch {config.epoch_offset + history.best_iteration + 1} (best validation score) were "
                "restored"
                if early_stopping and best_state is not None
                else "the current weights were kept"
            )
            warn(
                f"Training interrupted by the user (KeyboardInterrupt) after {done} complete epoch(s) of this call; "
                f"{kept} and the model is usable. Call fit again to train from scratch.",
                UserWarning,
            )
        if early_stopping and best_state is not None and not history.diverged:
            network.load_state_dict(best_state)
        if config.incremental and history.stop_reason == "max_epochs":
            history.stop_reason = "partial_fit"
        network.eval()
        history.optimizer_state = (
            optimizer.state_dict() if flat is None else flat.from_flat_state(optimizer.state_dict())
        )
        if not (
            history.converged or history.diverged or history.interrupted or config.incremental or config.fixed_epochs
        ):
            _warn_at_max_epochs(history, config, early_stopping, patience)
        observer.training_end(history, patience)
        return history
