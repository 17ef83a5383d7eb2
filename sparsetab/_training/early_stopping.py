"""The monitored score of a training call: patience, the best epoch, the weights kept, the warning at the end.

Early stopping monitors the validation score; without it, as scikit-learn's MLP, the training loss
decides convergence (:class:`EarlyStopping` watches either).
"""

import math

from sklearn.exceptions import ConvergenceWarning

from .._warnings import warn

__all__ = ["MIN_PATIENCE_STEPS", "EarlyStopping", "patience_epochs", "snapshot", "warn_at_max_epochs"]

# Early stopping waits at least this many optimiser steps without improvement, whatever the epoch size:
# counted in epochs alone, a patience of 10 stops a data set of 4 batches after 40 steps, before it has learned.
MIN_PATIENCE_STEPS = 200


def snapshot(network):
    """A copy of the network's weights and buffers, to restore with ``load_state_dict``.

    Parameters
    ----------
    network : torch.nn.Module

    Returns
    -------
    collections.OrderedDict of str to torch.Tensor
        Clones of the state dict's tensors (several times faster than ``copy.deepcopy``), with its
        version metadata, which ``load_state_dict`` reads.
    """
    state = network.state_dict()
    copied = type(state)((name, value.clone()) for name, value in state.items())
    copied._metadata = getattr(state, "_metadata", None)
    return copied


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


def warn_at_max_epochs(history, config, early_stopping, patience):
    """The warning of a fit that ran all ``max_epochs`` without stopping on its own criterion.

    More epochs are advised (a ConvergenceWarning, as scikit-learn's MLP) only when no held-out
    score says they would not help. Whenever validation scores were recorded, that needs the
    validation score to have improved within the last ``n_iter_no_change`` epochs (the user's
    patience, not the patience stretched to :data:`MIN_PATIENCE_STEPS` steps on tables of a few
    batches, which reaches 50 epochs on 120 rows). When it peaked earlier (held-out error rising
    while the training loss still falls: the model overfits its training rows), there is no advice
    to train longer: under early stopping the best epoch's weights were kept and nothing is said;
    with ``early_stopping=False`` and ``X_val``, a UserWarning says the last epoch's weights were
    kept and points to early stopping. The advice names the monitored score's best epoch, so it
    never calls a score "still improving" that last improved some epochs before the end.

    Parameters
    ----------
    history : TrainingHistory
        The call's ``loss_curve`` and ``validation_scores`` (None or empty without validation).
    config : TrainingConfig
        Its ``max_epochs``, ``n_iter_no_change`` and ``epoch_offset`` (the epochs of earlier calls).
    early_stopping : bool
        Whether the validation score was monitored and its best epoch's weights kept.
    patience : int
        The patience training ran with (:func:`patience_epochs`); the advice threshold is the
        smaller of it and ``n_iter_no_change``.

    Warns
    -----
    ConvergenceWarning
        More epochs may help.
    UserWarning
        Without early stopping, the validation score peaked ``n_iter_no_change`` epochs or more
        before the end.
    """
    threshold = min(int(patience), int(config.n_iter_no_change))
    scores = history.validation_scores
    if scores:
        finite = [score if math.isfinite(score) else -math.inf for score in scores]
        peak = max(range(len(finite)), key=finite.__getitem__)  # the first epoch of the best score
        if len(scores) - 1 - peak >= threshold:
            if not early_stopping:
                warn(
                    f"max_epochs={config.max_epochs} reached with the training loss still improving, but the "
                    f"validation score peaked at epoch {config.epoch_offset + peak + 1} and has not improved for "
                    f"{len(scores) - 1 - peak} epochs (the model overfits its training rows); the last epoch's "
                    "weights were kept. Set early_stopping=True to keep the best epoch's weights.",
                    UserWarning,
                )
            return
    if early_stopping and scores:
        monitored, epochs, best = "validation score", len(scores), peak
    else:
        losses = [loss if math.isfinite(loss) else math.inf for loss in history.loss_curve]
        monitored, epochs = "training loss", len(losses)
        best = min(range(epochs), key=losses.__getitem__) if losses else None
    if best is None or best == epochs - 1:
        state = f"the {monitored} was still improving"
    else:
        state = (
            f"the {monitored} last improved at epoch {config.epoch_offset + best + 1}, {epochs - 1 - best} epoch(s) "
            f"before the end (training stops after {patience} epochs without improvement)"
        )
    warn(f"max_epochs={config.max_epochs} reached and {state}. Consider raising max_epochs.", ConvergenceWarning)


class EarlyStopping:
    """The monitored score of one training call, epoch by epoch.

    As scikit-learn's MLP, patience counts the epochs without an improvement of at least ``tol``,
    while the best epoch is the one of the best score, however small its lead. Under early stopping
    (``restore_best``) the best epoch's weights are copied when it ends, to be restored at the end.

    Parameters
    ----------
    restore_best : bool
        Whether the score is a validation score whose best epoch's weights are kept (early
        stopping), rather than the negative training loss (convergence only).
    patience : int
        Epochs without improvement after which training stops (:func:`patience_epochs`).
    tol : float
        The least improvement of the score that resets the patience.

    Attributes
    ----------
    best_score : float
        The best score so far (``-inf`` before the first epoch).
    best_state : collections.OrderedDict or None
        The best epoch's weights, under ``restore_best``; None before the first epoch or without it.
    epochs_without_improvement : int
        Epochs since the score last improved by at least ``tol``.
    """

    def __init__(self, restore_best, patience, tol):
        self.restore_best, self.patience, self.tol = restore_best, patience, tol
        self.best_score, self.best_state, self.epochs_without_improvement = -math.inf, None, 0

    def update(self, score, network):
        """Record an epoch's score (higher is better; NaN is no improvement).

        Parameters
        ----------
        score : float
            The epoch's monitored score.
        network : torch.nn.Module
            The network as the epoch left it; copied when the epoch is the best so far, under
            ``restore_best``.

        Returns
        -------
        bool
            Whether the epoch's score is the best so far.
        """
        lead = score > self.best_score + self.tol
        self.epochs_without_improvement = 0 if lead else self.epochs_without_improvement + 1
        improved = score > self.best_score
        if improved:
            self.best_score = score
            if self.restore_best:
                self.best_state = snapshot(network)
        return improved

    @property
    def out_of_patience(self):
        """Whether ``patience`` epochs have passed without improvement (bool)."""
        return self.epochs_without_improvement >= self.patience

    @property
    def has_best(self):
        """Whether best weights are held to restore (bool): under ``restore_best``, after an epoch."""
        return self.restore_best and self.best_state is not None
