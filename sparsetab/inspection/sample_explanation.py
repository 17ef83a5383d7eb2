"""One sample's feature mask per decision step, as grouped bars."""

import numpy as np

from ._common import explain, feature_names, is_int, mode_label, n_rows, single_axes, take_rows, unwrap_estimator

__all__ = ["SampleExplanationDisplay"]


class SampleExplanationDisplay:
    """One sample's feature mask per decision step, as grouped bars.

    For each feature, one bar per decision step (its mask value) and, optionally, one for the
    aggregate mask. The legend gives each step's contribution ``eta`` when known.

    Parameters
    ----------
    step_masks : numpy.ndarray of float of shape (n_steps, n_features)
        The sample's mask of each decision step.
    feature_names : array-like of str of shape (n_features,)
        Group labels.
    importances : numpy.ndarray of float of shape (n_features,) or None, default=None
        The sample's aggregate mask; None draws no aggregate bars.
    step_importance : numpy.ndarray of float of shape (n_steps,) or None, default=None
        The sample's ``eta`` per step, shown in the legend.
    title : str, default="sample explanation"
        Axes title.

    Attributes
    ----------
    figure_ : matplotlib.figure.Figure
        The figure.
    ax_ : matplotlib.axes.Axes
        The Axes with the bars.
    bars_ : list of matplotlib.container.BarContainer of shape (n_steps,)
        One container per decision step, each with one bar per feature.
    aggregate_bars_ : matplotlib.container.BarContainer or None
        The aggregate mask's bars, one per feature.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import numpy as np
    >>> from sparsetab import SparseTabNetRegressor
    >>> from sparsetab.inspection import SampleExplanationDisplay
    >>> X = np.random.default_rng(0).normal(size=(64, 3))
    >>> model = SparseTabNetRegressor(max_epochs=2, random_state=0).fit(X, X[:, 0])
    >>> display = SampleExplanationDisplay.from_estimator(model, X, index=0)
    >>> len(display.bars_), len(display.bars_[0])  # one container per step, one bar per feature
    (3, 3)
    >>> plt.close(display.figure_)
    """

    def __init__(
        self, step_masks, feature_names, *, importances=None, step_importance=None, title="sample explanation"
    ):
        self.step_masks = step_masks
        self.feature_names = feature_names
        self.importances = importances
        self.step_importance = step_importance
        self.title = title

    def plot(self, ax=None, *, xticks_rotation="vertical"):
        """Draw the grouped bars.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, default=None
            Where to draw; None makes a new figure.
        xticks_rotation : {"vertical", "horizontal"} or float, default="vertical"
            Rotation of the feature names.

        Returns
        -------
        SampleExplanationDisplay
            ``self``, with the artists stored as attributes.

        Raises
        ------
        ValueError
            If ``step_masks`` is not 2-D.
        """
        masks = np.asarray(self.step_masks, dtype=np.float64)
        if masks.ndim != 2:
            raise ValueError(f"step_masks must have shape (n_steps, n_features), got shape {masks.shape}.")
        n_steps, n_features = masks.shape
        names = [str(name) for name in self.feature_names]
        n_series = n_steps + (self.importances is not None)
        width = 0.8 / n_series
        figure, ax = single_axes(
            ax, "SampleExplanationDisplay.plot", figsize=(max(5.0, 0.22 * n_features * n_series**0.5 + 2), 4.0)
        )
        centres = np.arange(n_features)
        # The series of a group sit side by side, centred on the group's tick.
        offsets = (np.arange(n_series) - (n_series - 1) / 2) * width
        self.bars_ = []
        for step in range(n_steps):
            label = f"step {step + 1}"
            if self.step_importance is not None:
                label += f" (eta={float(self.step_importance[step]):.2f})"
            self.bars_.append(ax.bar(centres + offsets[step], masks[step], width, label=label))
        self.aggregate_bars_ = None
        if self.importances is not None:
            self.aggregate_bars_ = ax.bar(
                centres + offsets[-1],
                np.asarray(self.importances, dtype=np.float64),
                width,
                label="aggregate",
                color="0.25",
            )
        ax.set_xticks(centres, labels=names, rotation=xticks_rotation)
        ax.set_ylabel("mask value")
        ax.set_title(self.title)
        ax.legend(fontsize="small")
        self.figure_, self.ax_ = figure, ax
        return self

    @classmethod
    def from_estimator(cls, estimator, X, index, *, aggregate=True, ax=None):
        """Explain one row of ``X`` and draw its masks.

        Parameters
        ----------
        estimator : SparseTabNetClassifier, SparseTabNetRegressor or Pipeline
            A fitted sparsetab estimator, or a fitted Pipeline whose last step is one.
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)
            Rows as the estimator (or pipeline) takes them.
        index : int
            Position of the row in ``X`` (negative counts from the end).
        aggregate : bool, default=True
            Also draw the row's aggregate mask.
        ax : matplotlib.axes.Axes, default=None
            Passed to :meth:`plot`.

        Returns
        -------
        SampleExplanationDisplay
            The drawn display.

        Raises
        ------
        TypeError
            If ``estimator`` is not a sparsetab estimator or a Pipeline ending in one.
        sklearn.exceptions.NotFittedError
            If the estimator is not fitted.
        ValueError
            If ``index`` is not an int in ``-n_samples..n_samples - 1``; and as
            ``estimator.explain``.
        """
        model, preprocessing = unwrap_estimator(estimator)
        n_samples = n_rows(X)
        if not is_int(index) or not -n_samples <= index < n_samples:
            raise ValueError(
                f"index must be an int in {-n_samples}..{n_samples - 1} (a row position in X), got {index!r}."
            )
        position = int(index) % n_samples
        explanation = explain(model, preprocessing, take_rows(X, [position]))
        return cls(
            explanation.step_masks[0],
            feature_names(model, preprocessing),
            importances=explanation.importances[0] if aggregate else None,
            step_importance=explanation.step_importance[0],
            title=f"row {position} ({mode_label(model)})",
        ).plot(ax=ax)
