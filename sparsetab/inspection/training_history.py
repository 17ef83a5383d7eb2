"""Training loss and validation score per epoch, the restored best epoch, and learned alphas."""

import numpy as np

from ._common import panel_axes, unwrap_estimator

__all__ = ["TrainingHistoryDisplay"]


class TrainingHistoryDisplay:
    """Training loss and validation score per epoch, the best epoch, and learned alphas.

    Panels, left to right: the training loss; the validation score when there is one; the
    alpha of each decision step when ``alpha_history`` is given (``entmax_mode="adaptive"``).
    Epochs are numbered from 1. The restored best epoch is marked by a dashed vertical line on
    every panel.

    Parameters
    ----------
    loss_curve : array-like of float of shape (n_epochs,)
        Training loss after each epoch (``loss_curve_``).
    validation_scores : array-like of float of shape (n_epochs,) or None, default=None
        Validation score after each epoch (``validation_scores_``); None, or all NaN, draws no
        panel.
    best_iteration : int or None, default=None
        Zero-based epoch whose weights were restored (``best_iteration_``); None marks none.
    alpha_history : numpy.ndarray of float of shape (n_epochs, n_steps) or None, default=None
        Alpha of each step after each epoch (``entmax_alpha_history_``); None draws no panel.
    score_label : str, default="validation score"
        Label of the validation panel's vertical axis.

    Attributes
    ----------
    figure_ : matplotlib.figure.Figure
        The figure.
    axes_ : numpy.ndarray of matplotlib.axes.Axes of shape (n_panels,)
        The panels.
    ax_ : matplotlib.axes.Axes
        The loss panel.
    loss_line_ : matplotlib.lines.Line2D
        The training loss.
    validation_line_ : matplotlib.lines.Line2D or None
        The validation score.
    best_iteration_lines_ : list of matplotlib.lines.Line2D of shape (n_panels,) or (0,)
        The best-epoch marker of each panel (empty when there is no best epoch).
    alpha_lines_ : list of matplotlib.lines.Line2D of shape (n_steps,) or (0,)
        One line per decision step (empty without ``alpha_history``).

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import numpy as np
    >>> from sparsetab import SparseTabNetRegressor
    >>> from sparsetab.inspection import TrainingHistoryDisplay
    >>> X = np.random.default_rng(0).normal(size=(64, 3))
    >>> model = SparseTabNetRegressor(max_epochs=2, random_state=0).fit(X, X[:, 0])
    >>> display = TrainingHistoryDisplay.from_estimator(model)
    >>> len(display.loss_line_.get_xdata())  # one point per epoch
    2
    >>> display.validation_line_ is None  # no early stopping, no validation score
    True
    >>> plt.close(display.figure_)
    """

    def __init__(
        self,
        loss_curve,
        *,
        validation_scores=None,
        best_iteration=None,
        alpha_history=None,
        score_label="validation score",
    ):
        self.loss_curve = loss_curve
        self.validation_scores = validation_scores
        self.best_iteration = best_iteration
        self.alpha_history = alpha_history
        self.score_label = score_label

    def plot(self, ax=None):
        """Draw the panels.

        Parameters
        ----------
        ax : matplotlib.axes.Axes or array-like of Axes of shape (n_panels,), default=None
            Where to draw, one Axes per panel; None makes a new figure with one row of panels.

        Returns
        -------
        TrainingHistoryDisplay
            ``self``, with the artists stored as attributes.

        Raises
        ------
        ValueError
            If ``ax`` does not hold one Axes per panel, or ``alpha_history`` is not 2-D.
        """
        # Lazy like pyplot, so that importing sparsetab does not import matplotlib; the ticker
        # module does not import pyplot, so drawing on given Axes stays free of it too.
        from matplotlib.ticker import MaxNLocator

        loss = np.asarray(self.loss_curve, dtype=np.float64)
        epochs = np.arange(1, loss.size + 1)
        has_validation = self.validation_scores is not None and not np.all(
            np.isnan(np.asarray(self.validation_scores, dtype=np.float64))
        )
        alpha = None
        if self.alpha_history is not None:
            alpha = np.asarray(self.alpha_history, dtype=np.float64)
            if alpha.ndim != 2:
                raise ValueError(f"alpha_history must have shape (n_epochs, n_steps), got shape {alpha.shape}.")
        n_panels = 1 + has_validation + (alpha is not None)
        figure, axes = panel_axes(ax, n_panels, "TrainingHistoryDisplay.plot", figsize=(4.5 * n_panels, 3.5))
        panels = iter(axes)
        loss_ax = next(panels)
        (self.loss_line_,) = loss_ax.plot(epochs, loss, marker="o", markersize=3, label="training loss")
        loss_ax.set_ylabel("training loss")
        loss_ax.set_title("training loss")
        self.validation_line_ = None
        if has_validation:
            score_ax = next(panels)
            scores = np.asarray(self.validation_scores, dtype=np.float64)
            (self.validation_line_,) = score_ax.plot(
                np.arange(1, scores.size + 1), scores, marker="o", markersize=3, color="C1", label=self.score_label
            )
            score_ax.set_ylabel(self.score_label)
            score_ax.set_title("validation")
        self.alpha_lines_ = []
        if alpha is not None:
            alpha_ax = next(panels)
            alpha_epochs = np.arange(1, alpha.shape[0] + 1)
            for step in range(alpha.shape[1]):
                (line,) = alpha_ax.plot(alpha_epochs, alpha[:, step], label=f"step {step + 1}")
                self.alpha_lines_.append(line)
            alpha_ax.set_ylabel("alpha")
            alpha_ax.set_title("learned entmax alpha per step")
            alpha_ax.legend(fontsize="small")
        self.best_iteration_lines_ = []
        for panel_ax in axes:
            panel_ax.set_xlabel("epoch")
            panel_ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            if self.best_iteration is not None:
                line = panel_ax.axvline(
                    self.best_iteration + 1,
                    color="0.3",
                    linestyle="--",
                    linewidth=1,
                    label=f"best epoch ({self.best_iteration + 1})",
                )
                self.best_iteration_lines_.append(line)
        if self.best_iteration is not None:
            axes[0].legend(fontsize="small")
        self.figure_, self.axes_, self.ax_ = figure, np.asarray(axes, dtype=object), axes[0]
        return self

    @classmethod
    def from_estimator(cls, estimator, *, ax=None):
        """Draw the training history of a fitted estimator.

        Parameters
        ----------
        estimator : SparseTabNetClassifier, SparseTabNetRegressor or Pipeline
            A fitted sparsetab estimator, or a fitted Pipeline whose last step is one. Its
            ``loss_curve_``, ``validation_scores_``, ``best_iteration_`` and, for
            ``entmax_mode="adaptive"``, ``entmax_alpha_history_`` are drawn.
        ax : matplotlib.axes.Axes or array-like of Axes of shape (n_panels,), default=None
            Passed to :meth:`plot`.

        Returns
        -------
        TrainingHistoryDisplay
            The drawn display.

        Raises
        ------
        TypeError
            If ``estimator`` is not a sparsetab estimator or a Pipeline ending in one.
        sklearn.exceptions.NotFittedError
            If the estimator is not fitted.
        ValueError
            If ``ax`` does not hold one Axes per panel.
        """
        model, _ = unwrap_estimator(estimator)
        scoring = model.scoring
        if scoring == "loss":
            score_label = "validation score (negative loss)"
        elif isinstance(scoring, str):
            score_label = f"validation score ({scoring})"
        elif scoring is None:
            score_label = "validation score (accuracy)" if hasattr(model, "classes_") else "validation score (R2)"
        else:
            score_label = "validation score"
        alpha_history = model.entmax_alpha_history_ if model.entmax_mode == "adaptive" else None
        display = cls(
            model.loss_curve_,
            validation_scores=model.validation_scores_,
            best_iteration=model.best_iteration_,
            alpha_history=alpha_history,
            score_label=score_label,
        )
        return display.plot(ax=ax)
