"""Heatmaps of the feature masks of each decision step and of the aggregate mask."""

import numbers

import numpy as np
import pandas as pd

from ._common import (
    check_feature_names,
    check_finite,
    check_positive_int,
    explain,
    feature_names,
    group_features,
    is_int,
    labelled_features,
    mode_label,
    n_rows,
    panel_axes,
    sized_feature_count,
    take_rows,
    unwrap_estimator,
)

__all__ = ["FeatureMaskDisplay"]


class FeatureMaskDisplay:
    """Heatmaps of the feature masks of each decision step and of the aggregate mask.

    One panel per shown decision step, plus one for the aggregate mask ``M_agg``; in every
    panel the rows are samples and the columns are features. The panels share one colour scale
    and one colour bar. Build it with :meth:`from_estimator`, or from arrays (for example those
    of ``estimator.explain(X)``) and then call :meth:`plot`.

    Parameters
    ----------
    step_masks : numpy.ndarray of float of shape (n_samples, n_shown_steps, n_features)
        Feature mask of each shown decision step, one row per sample.
    importances : numpy.ndarray of float of shape (n_samples, n_features) or None
        Aggregate mask of each sample; None draws no aggregate panel.
    feature_names : array-like of str of shape (n_features,)
        Column labels.
    steps : array-like of int of shape (n_shown_steps,), default=None
        Zero-based index of each shown step (titles say ``step steps[i] + 1``); None means
        ``0, 1, ...``.
    entmax_mode : str, default=None
        Map of the attentive transformers, named in the titles; None names none.
    step_labels : list of str of shape (n_shown_steps,), default=None
        Text in brackets after each step's title (for example the mode and learned alpha);
        overrides ``entmax_mode`` in the step titles.
    sample_label : str, default="sample"
        Label of the vertical axis.

    Attributes
    ----------
    figure_ : matplotlib.figure.Figure
        The figure holding the panels.
    axes_ : numpy.ndarray of matplotlib.axes.Axes of shape (n_panels,)
        One Axes per panel, the steps first, the aggregate last.
    ax_ : matplotlib.axes.Axes
        The first panel.
    ims_ : list of matplotlib.image.AxesImage of shape (n_panels,)
        The heatmap of each panel; ``ims_[i].get_array()`` is the drawn
        (n_samples, n_features) matrix.
    im_ : matplotlib.image.AxesImage
        The last heatmap (the aggregate one when drawn).
    colorbar_ : matplotlib.colorbar.Colorbar or None
        The shared colour bar.
    sample_indices_ : numpy.ndarray of int of shape (n_samples,)
        Set by :meth:`from_estimator` only: the position in ``X`` of each drawn row, top to
        bottom.
    feature_order_ : numpy.ndarray of int of shape (n_drawn_features,)
        Set by :meth:`from_estimator` only: the position of each drawn column, left to right,
        among the explained columns (the input columns, or with ``groups`` the grouped ones).

    See Also
    --------
    StepSummaryDisplay : Each step's mean mask over the rows, one row per step.
    FeatureImportanceDisplay : Mean importances as sorted bars.
    SampleExplanationDisplay : One sample's masks as grouped bars.

    References
    ----------
    Arik and Pfister (2021), TabNet, AAAI; section 4 ("Interpretability"), Figure 5.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import numpy as np
    >>> from sparsetab import SparseTabNetRegressor
    >>> from sparsetab.inspection import FeatureMaskDisplay
    >>> X = np.random.default_rng(0).normal(size=(64, 3))
    >>> model = SparseTabNetRegressor(max_epochs=2, random_state=0).fit(X, X[:, 0])
    >>> display = FeatureMaskDisplay.from_estimator(model, X, max_samples=20)
    >>> len(display.axes_)  # the 3 decision steps and the aggregate mask
    4
    >>> display.ims_[0].get_array().shape
    (20, 3)
    >>> plt.close(display.figure_)
    """

    def __init__(
        self,
        step_masks,
        importances,
        feature_names,
        *,
        steps=None,
        entmax_mode=None,
        step_labels=None,
        sample_label="sample",
    ):
        self.step_masks = step_masks
        self.importances = importances
        self.feature_names = feature_names
        self.steps = steps
        self.entmax_mode = entmax_mode
        self.step_labels = step_labels
        self.sample_label = sample_label

    def _panels(self):
        step_masks = np.asarray(self.step_masks)
        if step_masks.ndim != 3:
            raise ValueError(
                f"step_masks must have shape (n_samples, n_shown_steps, n_features), got shape {step_masks.shape}."
            )
        check_finite(step_masks.astype(np.float64), "step_masks")
        steps = range(step_masks.shape[1]) if self.steps is None else list(self.steps)
        for values, argument in ((steps, "steps"), (self.step_labels, "step_labels")):
            if values is not None and len(values) != step_masks.shape[1]:
                raise ValueError(
                    f"{argument} must have one entry per shown step of step_masks ({step_masks.shape[1]}), got "
                    f"{len(values)}."
                )
        mode = "" if self.entmax_mode is None else f" ({self.entmax_mode})"
        panels = []
        for position, step in enumerate(steps):
            detail = mode if self.step_labels is None else f" ({self.step_labels[position]})"
            panels.append((f"step {int(step) + 1} mask{detail}", step_masks[:, position]))
        if self.importances is not None:
            importances = np.asarray(self.importances, dtype=np.float64)
            expected = (step_masks.shape[0], step_masks.shape[2])
            if importances.shape != expected:
                raise ValueError(
                    f"importances must have shape (n_samples, n_features) = {expected}, the rows and features of "
                    f"step_masks; got shape {importances.shape}."
                )
            check_finite(importances, "importances")
            panels.append((f"aggregate mask{mode}", importances))
        return panels

    def plot(self, ax=None, *, cmap="viridis", vmax=None, colorbar=True, xticks_rotation="vertical"):
        """Draw the heatmaps.

        Parameters
        ----------
        ax : matplotlib.axes.Axes or array-like of Axes of shape (n_panels,), default=None
            Where to draw: one Axes per panel (the shown steps, then the aggregate). None makes a
            new figure with one row of panels.
        cmap : str or matplotlib.colors.Colormap, default="viridis"
            Colour map of the heatmaps.
        vmax : float, default=None
            Top of the shared colour scale (the bottom is 0); None takes the largest drawn value
            (1 when every drawn value is 0).
        colorbar : bool, default=True
            Draw one colour bar for all panels.
        xticks_rotation : {"vertical", "horizontal"} or float, default="vertical"
            Rotation of the feature names.

        Returns
        -------
        FeatureMaskDisplay
            ``self``, with the artists stored as attributes.

        Raises
        ------
        ValueError
            If ``step_masks`` is not 3-D or not finite, ``importances`` is not a finite array of
            shape (n_samples, n_features), ``feature_names`` does not hold one name per feature,
            ``steps`` or ``step_labels`` not one entry per shown step, there is nothing to draw
            (no step and no ``importances``), ``ax`` does not hold one Axes per panel, or
            ``vmax`` is not None or a positive number.

        Notes
        -----
        A new figure is sized for at most 60 features, and at most 60 get a tick label: with more,
        every k-th, ``k = ceil(n_features / 60)``, the first included. On Axes you pass, every feature
        is labelled; to read every name on a new figure, draw fewer features (``from_estimator``'s
        ``top_k``).
        """
        panels = self._panels()
        if not panels:
            raise ValueError("Nothing to draw: no step selected and no aggregate mask (importances is None).")
        names = check_feature_names(self.feature_names, np.shape(self.step_masks)[2], "step_masks")
        if vmax is None:
            vmax = max(float(np.max(values)) if values.size else 0.0 for _, values in panels)
            vmax = vmax if vmax > 0 else 1.0
        elif not isinstance(vmax, numbers.Real) or not vmax > 0:
            raise ValueError(f"vmax must be None or a positive number, got {vmax!r}.")
        new_figure = {}
        if ax is None:  # only a new figure is sized to the data
            n_samples = panels[0][1].shape[0]
            width = max(3.0, 0.24 * sized_feature_count(len(names)) + 1.0)
            height = max(3.0, min(0.12 * n_samples + 2.2, 9.0))
            new_figure = dict(figsize=(width * len(panels) + 1.0, height), sharey=True)
        figure, axes = panel_axes(ax, len(panels), "FeatureMaskDisplay.plot", **new_figure)
        ims = []
        labelled = labelled_features(len(names), new_figure=ax is None)
        for panel_ax, (title, values) in zip(axes, panels):
            im = panel_ax.imshow(values, aspect="auto", cmap=cmap, vmin=0.0, vmax=vmax, interpolation="nearest")
            panel_ax.set_xticks(labelled, labels=[names[i] for i in labelled], rotation=xticks_rotation)
            panel_ax.set_title(title)
            panel_ax.set_xlabel("feature")
            ims.append(im)
        axes[0].set_ylabel(self.sample_label)
        self.colorbar_ = figure.colorbar(ims[-1], ax=list(axes), label="mask value") if colorbar else None
        self.figure_, self.axes_, self.ax_ = figure, np.asarray(axes, dtype=object), axes[0]
        self.ims_, self.im_ = ims, ims[-1]
        return self

    @classmethod
    def from_estimator(
        cls,
        estimator,
        X,
        *,
        steps="all",
        aggregate=True,
        max_samples=50,
        sort_features=False,
        top_k=None,
        sort_samples_by=None,
        groups=None,
        ax=None,
        cmap="viridis",
        colorbar=True,
    ):
        """Explain rows of ``X`` and draw their masks.

        With step gates, each step's title also gives the drawn rows' mean gate of the step.

        Parameters
        ----------
        estimator : SparseTabNetClassifier, SparseTabNetRegressor or Pipeline
            A fitted sparsetab estimator, or a fitted Pipeline whose last step is one (``X``
            then goes through the earlier steps, and the feature names come from their
            ``get_feature_names_out`` when they have it).
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)
            Rows to explain, as the estimator (or pipeline) takes them.
        steps : "all", int or array-like of int of shape (n_shown_steps,), default="all"
            Zero-based decision steps to draw (0 is the first step, titled "step 1").
        aggregate : bool, default=True
            Also draw the aggregate mask ``M_agg`` (``explain(X).importances``).
        max_samples : int or None, default=50
            Draw the first ``max_samples`` rows of ``X``; None draws every row.
        sort_features : bool, default=False
            Order the columns by their mean aggregate importance over the drawn rows, most
            important first; False keeps the input order.
        top_k : int or None, default=None
            Draw only the ``top_k`` columns of highest mean aggregate importance over the drawn
            rows, most important first (every column when there are fewer); None draws every
            column, in the order ``sort_features`` says.
        sort_samples_by : str, int or None, default=None
            Order the drawn rows by the values of this column of ``X`` (a column name of a
            DataFrame, or a column position; for an array also its name ``x0, x1, ...``),
            ascending (an ordered categorical in its categories' order), missing values last,
            top to bottom; None keeps the input order.
        groups : dict of str to list of (str or int), default=None
            ``{group name: member columns}``: draw one column per group, the sum of its
            members' masks (so each row of a panel still sums to 1), for example the one-hot
            columns of one source column
            (:func:`~sparsetab.inspection.feature_groups_from_transformer` builds the dict from
            a fitted pipeline). Members are named as the drawn columns are (after the
            pipeline's earlier steps) or given by position; columns in no group stay their
            own. Grouped columns sit where their first member was. None draws one column per
            input column.
        ax : matplotlib.axes.Axes or array-like of Axes of shape (n_panels,), default=None
            Passed to :meth:`plot`.
        cmap : str or matplotlib.colors.Colormap, default="viridis"
            Passed to :meth:`plot`.
        colorbar : bool, default=True
            Passed to :meth:`plot`.

        Returns
        -------
        FeatureMaskDisplay
            The drawn display; ``display.sample_indices_`` of shape (n_drawn,) holds the
            positions in ``X`` of the drawn rows, top to bottom, and
            ``display.feature_order_`` of shape (n_drawn_features,) the position of each drawn
            column among the explained (input or grouped) columns.

        Raises
        ------
        TypeError
            If ``estimator`` is not a sparsetab estimator or a Pipeline ending in one, or
            ``groups`` is not None or a dict.
        sklearn.exceptions.NotFittedError
            If the estimator is not fitted.
        ValueError
            If ``steps`` names no step or one outside ``0..n_steps - 1``, ``max_samples`` or
            ``top_k`` is not None or an int >= 1, ``sort_samples_by`` is not a column of ``X``,
            ``X`` has no rows, ``groups`` is bad (as ``estimator.explain`` says), or ``ax``
            does not hold one Axes per panel; and as ``estimator.explain``.
        """
        model, preprocessing = unwrap_estimator(estimator)
        shown_steps = _check_steps(steps, model.n_steps)
        max_samples = check_positive_int(max_samples, "max_samples")
        top_k = check_positive_int(top_k, "top_k")
        names, _, _ = group_features(feature_names(model, preprocessing), groups)  # checked before explaining
        n_samples = n_rows(X)
        if n_samples < 1:
            raise ValueError("X must have at least one row.")
        positions = np.arange(n_samples)
        if max_samples is not None:
            positions = positions[:max_samples]
        sample_label = "sample"
        if sort_samples_by is not None:
            key = _column_values(X, sort_samples_by).iloc[positions].reset_index(drop=True)
            positions = positions[_sample_order(key, sort_samples_by)]
            sample_label = f"sample, sorted by {sort_samples_by}"
        explanation = explain(model, preprocessing, take_rows(X, positions))
        names, (all_masks, all_importances), _ = group_features(
            feature_names(model, preprocessing), groups, explanation.step_masks, explanation.importances
        )
        order = np.arange(len(names))
        if sort_features or top_k is not None:
            order = np.argsort(-all_importances.astype(np.float64).mean(axis=0), kind="stable")[:top_k]
        step_masks = all_masks[:, shown_steps][:, :, order]
        importances = all_importances[:, order] if aggregate else None
        step_labels = [mode_label(model, step) for step in shown_steps]
        if explanation.step_gates is not None:  # the rows' mean gate of each step, beside its map
            mean_gates = explanation.step_gates.mean(axis=0, dtype=np.float64)
            step_labels = [
                f"{label}, mean gate {mean_gates[step]:.2f}" for label, step in zip(step_labels, shown_steps)
            ]
        display = cls(
            step_masks,
            importances,
            names[order],
            steps=shown_steps,
            entmax_mode=mode_label(model),
            step_labels=step_labels,
            sample_label=sample_label,
        )
        display.sample_indices_ = positions
        display.feature_order_ = order
        return display.plot(ax=ax, cmap=cmap, colorbar=colorbar)


def _check_steps(steps, n_steps):
    """``steps`` as a list of zero-based step indices; ValueError naming ``steps``."""
    if isinstance(steps, str):
        if steps != "all":
            raise ValueError(f"steps must be 'all', an int or a list of ints in 0..{n_steps - 1}, got {steps!r}.")
        return list(range(n_steps))
    values = [steps] if isinstance(steps, numbers.Integral) else list(np.ravel(np.asarray(steps, dtype=object)))
    if not values or not all(is_int(step) and 0 <= step < n_steps for step in values):
        raise ValueError(f"steps must be 'all', an int or a list of ints in 0..{n_steps - 1}, got {steps!r}.")
    return [int(step) for step in values]


def _column_values(X, column):
    """Values of one column of ``X`` as a pandas Series (an ordered categorical keeps its order).

    ValueError naming ``sort_samples_by`` where ``X`` has no such column, or several of that name.
    """
    if hasattr(X, "columns"):
        if column in X.columns:
            n_named = int((X.columns == column).sum())
            if n_named > 1:
                raise ValueError(f"sort_samples_by={column!r} names {n_named} columns of X.")
            return pd.Series(X[column].array)
        if is_int(column) and 0 <= column < X.shape[1]:
            return pd.Series(X.iloc[:, int(column)].array)
        raise ValueError(f"sort_samples_by must be a column of X, got {column!r}; X has columns {list(X.columns)}.")
    array = np.asarray(X)
    n_columns = array.shape[1] if array.ndim == 2 else 0
    if isinstance(column, str) and column.startswith("x") and column[1:].isdigit():
        column = int(column[1:])  # the name explain() and the displays give an array's column
    if not is_int(column) or array.ndim != 2 or not 0 <= column < array.shape[1]:
        raise ValueError(
            f"sort_samples_by must be a column position in 0..{n_columns - 1} (or its name x0..x{n_columns - 1}) "
            f"for X without column names, got {column!r}."
        )
    return pd.Series(array[:, int(column)])


def _sample_order(key, column):
    """Positions that sort ``key`` (stable, missing values last); ValueError naming ``sort_samples_by``."""
    # pandas orders text with missing values (None, NaN, pd.NA) where numpy's argsort compares str with float.
    try:
        return key.sort_values(kind="stable", na_position="last").index.to_numpy()
    except TypeError as error:
        kinds = sorted({type(value).__name__ for value in key if not pd.isna(value)})
        what = f"they mix the types {', '.join(kinds)}" if len(kinds) > 1 else f"{kinds[0]} values that do not compare"
        raise ValueError(
            f"sort_samples_by={column!r} names a column whose values cannot be ordered: {what} ({error}). Convert "
            "the column to one type first (for example with .astype(str))."
        ) from error
