"""Horizontal bars of the feature importances, most important on top."""

import numpy as np

from ._common import (
    check_feature_names,
    check_finite,
    check_positive_int,
    explain,
    feature_names,
    group_features,
    labelled_features,
    single_axes,
    sized_feature_count,
    unwrap_estimator,
)

__all__ = ["FeatureImportanceDisplay"]


class FeatureImportanceDisplay:
    """Horizontal bar chart of feature importances, most important on top.

    Parameters
    ----------
    importances : numpy.ndarray of float of shape (n_features,)
        Importance of each feature (``feature_importances_``, or the mean of
        ``explain(X).importances``).
    feature_names : array-like of str of shape (n_features,)
        Bar labels.
    std : numpy.ndarray of float of shape (n_features,) or None, default=None
        Half-width of each bar's error bar: the standard deviation of each importance across
        samples, or its standard error (say which in ``error_label``). The lower bar is clipped
        at zero, since importances are not negative. None draws no error bars.
    title : str, default="feature importance"
        Axes title.
    error_label : str or None, default=None
        What the error bars are, written under the horizontal axis label; None writes
        ``"error bars: standard deviation"``. Unused without ``std``.

    Attributes
    ----------
    figure_ : matplotlib.figure.Figure
        The figure.
    ax_ : matplotlib.axes.Axes
        The Axes with the bars.
    bars_ : matplotlib.container.BarContainer
        The bars, most important first (top to bottom); ``bars_.errorbar`` holds the error
        bars when ``std`` is given.
    error_label_ : str or None
        What the error bars are, written under the horizontal axis label (``"importance"``);
        None without error bars.
    order_ : numpy.ndarray of int of shape (n_drawn,)
        Position in ``importances`` of each drawn bar, most important first.

    See Also
    --------
    FeatureMaskDisplay : The masks behind the importances, per sample and step.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import numpy as np
    >>> from sparsetab import SparseTabNetRegressor
    >>> from sparsetab.inspection import FeatureImportanceDisplay
    >>> X = np.random.default_rng(0).normal(size=(64, 3))
    >>> model = SparseTabNetRegressor(max_epochs=2, random_state=0).fit(X, X[:, 0])
    >>> display = FeatureImportanceDisplay.from_estimator(model, top_k=2)
    >>> len(display.bars_)  # the two most important of the three features
    2
    >>> plt.close(display.figure_)
    """

    def __init__(self, importances, feature_names, *, std=None, title="feature importance", error_label=None):
        self.importances = importances
        self.feature_names = feature_names
        self.std = std
        self.title = title
        self.error_label = error_label

    def plot(self, ax=None, *, top_k=None, color="C0"):
        """Draw the bars.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, default=None
            Where to draw; None makes a new figure.
        top_k : int or None, default=None
            Draw only the ``top_k`` most important features (all of them when there are fewer);
            None draws every feature.
        color : color, default="C0"
            Bar colour.

        Returns
        -------
        FeatureImportanceDisplay
            ``self``, with the artists stored as attributes.

        Raises
        ------
        ValueError
            If ``top_k`` is not None or an int >= 1, ``importances`` is not 1-D or not finite,
            ``feature_names`` does not hold one name per importance, or ``std`` is not of the
            importances' shape, finite and >= 0.

        Notes
        -----
        A new figure is as tall as 60 bars at most, and at most 60 bars are named: with more, every
        k-th bar from the top, ``k = ceil(n_bars / 60)``. On an Axes you pass, every bar is named; to
        read every name on a new figure, draw fewer bars (``top_k``).
        """
        top_k = check_positive_int(top_k, "top_k")
        importances = np.asarray(self.importances, dtype=np.float64)
        if importances.ndim != 1:
            raise ValueError(f"importances must be 1-D, got shape {importances.shape}.")
        check_finite(importances, "importances")
        all_names = check_feature_names(self.feature_names, importances.size, "importances")
        std = None
        if self.std is not None:
            std = np.asarray(self.std, dtype=np.float64)
            if std.shape != importances.shape:
                raise ValueError(f"std must have the shape of importances {importances.shape}, got shape {std.shape}.")
            check_finite(std, "std")
            if (std < 0).any():
                raise ValueError(f"std must be >= 0, got {float(std.min())!r}.")
        order = np.argsort(-importances, kind="stable")[:top_k]
        names = [all_names[i] for i in order]
        labelled = labelled_features(len(order), new_figure=ax is None)
        figure, ax = single_axes(
            ax,
            "FeatureImportanceDisplay.plot",
            figsize=(6.0, 0.3 * sized_feature_count(len(order)) + 1.5 + 0.3 * (self.std is not None)),
        )
        xerr = None
        if std is not None:  # importances are >= 0: the lower bar stops at zero
            std = std[order]
            xerr = np.vstack([np.minimum(std, np.clip(importances[order], 0.0, None)), std])
        positions = np.arange(len(order))
        self.bars_ = ax.barh(
            positions, importances[order], xerr=xerr, color=color, capsize=3 if xerr is not None else 0
        )
        ax.set_yticks(labelled, labels=[names[i] for i in labelled])
        # barh draws the first bar at the bottom; the most important belongs on top. Set, not flipped: a second
        # draw on the same Axes, or Axes already inverted, keeps it on top.
        ax.yaxis.set_inverted(True)
        self.error_label_ = None
        if xerr is not None:  # under the axis: a legend would cover the bars of a short chart
            self.error_label_ = "error bars: standard deviation" if self.error_label is None else str(self.error_label)
        ax.set_xlabel("importance" if self.error_label_ is None else f"importance\n{self.error_label_}")
        ax.set_title(self.title)
        self.figure_, self.ax_, self.order_ = figure, ax, order
        return self

    @classmethod
    def from_estimator(cls, estimator, X=None, *, top_k=None, error_bars=False, groups=None, ax=None, color="C0"):
        """Compute feature importances and draw them.

        Parameters
        ----------
        estimator : SparseTabNetClassifier, SparseTabNetRegressor or Pipeline
            A fitted sparsetab estimator, or a fitted Pipeline whose last step is one.
        X : pandas.DataFrame, array-like of shape (n_samples, n_features) or None, default=None
            None draws ``feature_importances_`` (the mean over the training rows); otherwise
            the mean of ``explain(X).importances`` over the rows of ``X`` (through the
            pipeline's earlier steps).
        top_k : int or None, default=None
            Passed to :meth:`plot`.
        error_bars : bool or {"std", "sem"}, default=False
            Error bars, and the axis text saying what they are: ``"std"`` (or True), the standard
            deviation of each feature's importance across the rows of ``X``, how much the rows
            differ; ``"sem"``, the standard error of the mean importance (the sample standard
            deviation over the square root of the number of rows), how precisely the bar's
            length is known. The lower bar is clipped at zero. False draws none.
        groups : dict of str to list of (str or int), default=None
            ``{group name: member columns}``: one bar per group, the sum of its members'
            importances (for example the one-hot columns of one source column;
            :func:`~sparsetab.inspection.feature_groups_from_transformer` builds the dict from
            a fitted pipeline). Members are named as the bars are (after the pipeline's earlier
            steps) or given by position; columns in no group stay their own. None draws one
            bar per input column.
        ax : matplotlib.axes.Axes, default=None
            Passed to :meth:`plot`.
        color : color, default="C0"
            Passed to :meth:`plot`.

        Returns
        -------
        FeatureImportanceDisplay
            The drawn display.

        Raises
        ------
        TypeError
            If ``estimator`` is not a sparsetab estimator or a Pipeline ending in one, or
            ``groups`` is not None or a dict.
        sklearn.exceptions.NotFittedError
            If the estimator is not fitted.
        ValueError
            If ``error_bars`` is not one of the accepted values, asks for error bars without
            ``X``, or is ``"sem"`` with fewer than 2 rows; if ``top_k`` is not None or an
            int >= 1, or ``groups`` is bad (as ``estimator.explain`` says); and as
            ``estimator.explain``.
        """
        model, preprocessing = unwrap_estimator(estimator)
        # Checked before explain(X), which can take long, rather than only in plot.
        check_positive_int(top_k, "top_k")
        kind = _check_error_bars(error_bars)
        names = feature_names(model, preprocessing)
        if X is None:
            if kind is not None:
                raise ValueError(
                    f"error_bars={error_bars!r} needs X: feature_importances_ holds no per-row spread; pass the rows "
                    "to explain."
                )
            names, (importances,), _ = group_features(names, groups, np.asarray(model.feature_importances_))
            display = cls(importances, names, title="feature importance (training rows)")
        else:
            group_features(names, groups)
            importances = explain(model, preprocessing, X).importances.astype(np.float64)
            names, (importances,), _ = group_features(names, groups, importances)
            n_samples = importances.shape[0]
            std, label = None, None
            if kind == "std":
                std, label = importances.std(axis=0), f"error bars: standard deviation over the {n_samples} rows"
            elif kind == "sem":
                if n_samples < 2:
                    raise ValueError(f"error_bars='sem' needs at least 2 rows in X, got {n_samples}.")
                std = importances.std(axis=0, ddof=1) / np.sqrt(n_samples)
                label = f"error bars: standard error of the mean ({n_samples} rows)"
            display = cls(
                importances.mean(axis=0),
                names,
                std=std,
                title=f"feature importance ({n_samples} rows)",
                error_label=label,
            )
        return display.plot(ax=ax, top_k=top_k, color=color)


def _check_error_bars(error_bars):
    """``error_bars`` as None, "std" or "sem"; ValueError naming ``error_bars``."""
    if isinstance(error_bars, (bool, np.bool_)):
        return "std" if error_bars else None
    if isinstance(error_bars, str) and error_bars in ("std", "sem"):
        return error_bars
    raise ValueError(f"error_bars must be True, False, 'std' or 'sem', got {error_bars!r}.")
