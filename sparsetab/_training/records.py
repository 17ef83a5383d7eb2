"""What a training call is given and what it tells: its configuration, its history, its epochs, its observers.

Plain records, shared by the loop (:mod:`.loop`), the estimators that configure it, and the
observers that report its progress (:mod:`sparsetab._progress`).
"""

from dataclasses import dataclass, field

__all__ = ["STOP_REASONS", "EpochRecord", "ObserverGroup", "TrainingConfig", "TrainingHistory", "TrainingObserver"]


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
    weight_averaging_epochs: float | None = None
    """Time constant, in epochs, of the moving average of the weights that is scored and kept (None: none)."""
    incremental: bool = False
    """One epoch of ``partial_fit``: no convergence test, no ConvergenceWarning."""
    epoch_offset: int = 0
    """Epochs run by earlier calls (``warm_start``, ``partial_fit``), for the verbose epoch numbers."""
    schedule_epochs: int | None = None
    """Length of the learning-rate schedule in epochs (the estimator's ``max_epochs``; None: ``max_epochs``)."""
    schedule_offset: int = 0
    """Epochs of the schedule already run (``partial_fit`` continues it; a new ``fit`` restarts it)."""
    torch_compile: bool = False
    """Run the training step's forward through ``torch.compile`` (:mod:`sparsetab._training.compiled`)."""
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
    kept_average: bool = False
    """Whether the weights kept are the moving average of the weights at the end of ``kept_epoch``
    (``weight_averaging_epochs``), not the trained weights of that epoch."""


#: Why a training call ends: patience ran out, ``max_epochs`` was reached, a run of ``fixed_epochs``
#: (the refit of ``early_stopping="auto"``) trained the count it was given, the loss or weights became
#: non-finite, the user pressed Ctrl-C, an observer (a scikit-learn callback) asked to stop, or the one
#: epoch of ``partial_fit`` is done.
STOP_REASONS = ("no_improvement", "max_epochs", "chosen_epochs", "non_finite", "interrupted", "callback", "partial_fit")


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
