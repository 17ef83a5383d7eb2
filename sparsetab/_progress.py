"""What a fit tells while it runs: the ``verbose`` lines, the progress bar, scikit-learn's callbacks.

All three are :class:`~sparsetab._training.loop.TrainingObserver` objects that the fit loop reports
to; :func:`training_observer` builds the ones an estimator's settings ask for.

``verbose=1`` prints one line per epoch and one closing line, in this shape::

    [12/100] train loss: 0.3291, val loss: 0.3410 (best), in 0.9s
    Stopped after epoch 32: no improvement of the val loss for 20 epochs; kept the weights of epoch 12.

``verbose=2`` adds a progress bar within each epoch, drawn by ``rich`` (the optional extra
``progress``). Where the installed scikit-learn has the experimental callback API
(``sklearn.callback``), every epoch is one task of the fit's callback context, and a callback
whose ``on_fit_task_end`` returns True stops training after that epoch.
"""

import importlib.util
import sys

from ._training.loop import ObserverGroup, TrainingObserver
from ._warnings import warn

try:  # scikit-learn >= 1.9; older versions have no callbacks, and the estimators no set_callbacks
    from sklearn.callback import CallbackSupportMixin
except ImportError:  # pragma: no cover - depends on the installed scikit-learn
    CallbackSupportMixin = None

__all__ = ["CallbackSupportMixin", "EpochPrinter", "EpochTasks", "epoch_tasks", "metric_label", "training_observer"]


def _kept_weights(history):
    # Histories pickled before the weight average existed have no kept_average.
    return "the average of the weights" if getattr(history, "kept_average", False) else "the weights"


_REASONS = {
    "max_epochs": "max_epochs reached",
    "chosen_epochs": "the number of epochs the held-out rows chose",
    "non_finite": "the training loss or the weights became non-finite",
    "interrupted": "interrupted by Ctrl-C",
    "callback": "a callback asked to stop",
}


def metric_label(scoring):
    """The name of the validation score in the progress lines, and whether to print it negated.

    Parameters
    ----------
    scoring : "loss", str or callable
        The estimator's ``scoring``.

    Returns
    -------
    label : str
        ``"loss"`` for ``"loss"``, the scorer's name for a string, the function's name (else
        ``"score"``) for a callable.
    negate : bool
        True for ``"loss"``: the score is the negative loss, printed as the loss itself.
    """
    if scoring == "loss":
        return "loss", True
    if isinstance(scoring, str):
        return scoring, False
    return getattr(scoring, "__name__", "score"), False


class EpochPrinter(TrainingObserver):
    """The ``verbose`` output: one line per epoch, a closing line, and a bar at ``verbose >= 2``.

    Parameters
    ----------
    verbose : int
        1: the lines; 2 or more: also a progress bar within each epoch, when standard output
        is a terminal (with ``rich``; without it a UserWarning says so once and the lines are
        printed alone).
    metric : str
        Name of the validation score (see :func:`metric_label`).
    negate : bool
        Print the negated validation score (a loss kept as a score, higher is better).
    early_stopping : bool
        Whether the validation score decides when to stop and which weights are kept (else
        the training loss decides).
    """

    def __init__(self, verbose, metric, *, negate, early_stopping):
        self.metric, self.negate, self.early_stopping = metric, negate, early_stopping
        # A bar redraws itself in place: only on a terminal (in a log or a pipe it would leave blank lines).
        self.bar_wanted = verbose >= 2 and _rich_installed() and _on_a_terminal()
        if verbose >= 2 and not _rich_installed():
            warn(
                "verbose=2 draws a progress bar within each epoch with rich, which is not installed (pip install "
                '"sparsetab[progress]"); printing the epoch lines only.',
                UserWarning,
            )
        self.bar, self.epoch, self.completed = None, 0, 0

    def epoch_begin(self, epoch, n_steps):
        self.epoch = epoch
        if self.bar_wanted:
            from rich.progress import Progress  # optional extra, imported only when drawing

            self.bar = Progress(transient=True)
            self.bar.start()
            self.bar_task = self.bar.add_task(f"epoch {epoch}", total=n_steps)

    def step_end(self):
        if self.bar is not None:
            self.bar.advance(self.bar_task)

    def _close_bar(self):
        if self.bar is not None:
            self.bar.stop()
            self.bar = None

    def epoch_end(self, record):
        self._close_bar()
        self.completed = record.epoch
        print(self.line(record), flush=True)
        return False

    def epoch_abandoned(self):
        self._close_bar()

    def line(self, record):
        """The line of one epoch, e.g. ``[12/100] train loss: 0.3291, val loss: 0.3410 (best), in 0.9s``.

        Parameters
        ----------
        record : sparsetab._training.loop.EpochRecord
            The epoch.

        Returns
        -------
        str
        """
        position = f"[{record.epoch}/{record.last_epoch}]" if record.last_epoch is not None else f"[{record.epoch}]"
        text = f"{position} train loss: {record.train_loss:.4f}"
        if record.validation_score is not None:
            value = -record.validation_score if self.negate else record.validation_score
            text += f", val {self.metric}: {value:.4f}"
        return text + (" (best)" if record.best else "") + f", in {record.seconds:.1f}s"

    def closing_line(self, history, patience):
        """Why training stopped and which epoch's weights the model keeps.

        Parameters
        ----------
        history : sparsetab._training.loop.TrainingHistory
            The ended call's history.
        patience : int
            The patience in epochs that applied.

        Returns
        -------
        str or None
            None after a ``partial_fit`` epoch, which has no end of training to report.
        """
        if history.stop_reason == "partial_fit":
            return None
        if history.stop_reason == "no_improvement":
            monitored = f"val {self.metric}" if self.early_stopping else "train loss"
            reason = f"no improvement of the {monitored} for {patience} epochs"
        else:
            reason = _REASONS[history.stop_reason]
        if history.kept_epoch is None:
            kept = "kept the current weights, part-way through an epoch"
        elif history.kept_epoch == self.completed and not self.early_stopping:
            kept = f"kept {_kept_weights(history)} of the last epoch ({history.kept_epoch})"
        elif history.kept_epoch == 0:
            kept = "kept the initial weights"
        else:
            kept = f"kept {_kept_weights(history)} of epoch {history.kept_epoch}"
        where = (
            f"during epoch {self.epoch}"
            if history.stop_reason in ("interrupted", "non_finite")
            else (f"after epoch {self.completed}")
        )
        return f"Stopped {where}: {reason}; {kept}."

    def training_end(self, history, patience):
        self._close_bar()
        line = self.closing_line(history, patience)
        if line is not None:
            print(line, flush=True)


class EpochTasks(TrainingObserver):
    """Every epoch one sub-task of a fit's scikit-learn callback context.

    Parameters
    ----------
    estimator : sklearn.base.BaseEstimator
        The estimator being fitted (given to the callbacks' hooks).
    context : sklearn.callback.CallbackContext
        The fit's root context (from ``estimator._init_callback_context``).
    X, y : array-like
        The training data as the user passed it, for callbacks that score the estimator.
    metadata : dict or None
        Training metadata such as ``{"sample_weight": ...}``.
    fitted_copies : bool
        Whether a callback may ask for a ``fitted_estimator`` at each epoch: a shallow copy of
        the estimator, which predicts with the network as trained so far (the supervised
        estimators are usable during fit; the pretrainer is not).
    """

    def __init__(self, estimator, context, X, y, metadata, *, fitted_copies):
        self.estimator, self.context, self.X, self.y, self.metadata = estimator, context, X, y, metadata
        self.reconstruction = {} if fitted_copies else None
        self.task = None

    def _hook_arguments(self):
        return dict(
            estimator=self.estimator,
            X=self.X,
            y=self.y,
            metadata=self.metadata,
            reconstruction_attributes=self.reconstruction,
        )

    def fit_end(self):
        """Close the fit's root task (after the fitted attributes are complete)."""
        self.context.call_on_fit_task_end(**dict(self._hook_arguments(), reconstruction_attributes={}))

    def epoch_begin(self, epoch, n_steps):
        self.task = self.context.subcontext(task_name="epoch")
        self.task.call_on_fit_task_begin(**self._hook_arguments())

    def epoch_end(self, record):
        task, self.task = self.task, None
        return bool(task.call_on_fit_task_end(**self._hook_arguments()))

    def epoch_abandoned(self):
        if self.task is not None:  # an epoch that did not complete is an empty task
            self.task.call_on_fit_task_end(estimator=self.estimator)
            self.task = None


def epoch_tasks(estimator, X, y, sample_weight, max_epochs, *, fitted_copies=True):
    """Open the fit's root callback task and return its :class:`EpochTasks` (None without callback support).

    Parameters
    ----------
    estimator : sklearn.base.BaseEstimator
        The estimator being fitted; it must have ``_init_callback_context``
        (:class:`CallbackSupportMixin`) where scikit-learn has callbacks.
    X, y : array-like
        The training data as the user gave it.
    sample_weight : array-like or None
        The training weights, passed to the callbacks as metadata.
    max_epochs : int
        The most epoch tasks the fit can have (every member's, for an ensemble).
    fitted_copies : bool, default=True
        See :class:`EpochTasks`.

    Returns
    -------
    EpochTasks or None
    """
    if CallbackSupportMixin is None:
        return None
    context = estimator._init_callback_context(max_subtasks=max_epochs)
    metadata = None if sample_weight is None else {"sample_weight": sample_weight}
    context.call_on_fit_task_begin(estimator=estimator, X=X, y=y, metadata=metadata)
    return EpochTasks(estimator, context, X, y, metadata, fitted_copies=fitted_copies)


def _on_a_terminal():
    return sys.stdout.isatty()


def _rich_installed():
    return importlib.util.find_spec("rich") is not None


def training_observer(printer=None, tasks=None):
    """One observer of the printer and the callback tasks that exist (None when neither does).

    Parameters
    ----------
    printer : EpochPrinter or None
    tasks : EpochTasks or None

    Returns
    -------
    sparsetab._training.loop.TrainingObserver or None
    """
    observers = [observer for observer in (printer, tasks) if observer is not None]
    if not observers:
        return None
    return observers[0] if len(observers) == 1 else ObserverGroup(observers)
