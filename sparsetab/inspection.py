"""Pictures of what a fitted sparsetab model looked at: feature masks, importances, training.

Four display objects in the style of scikit-learn's ``ConfusionMatrixDisplay``: ``__init__``
stores the data to draw, ``plot(ax=None, ...)`` draws it with matplotlib and keeps the artists
as attributes, and the ``from_estimator`` class method computes the data from a fitted
:class:`~sparsetab.SparseTabNetClassifier` or :class:`~sparsetab.SparseTabNetRegressor` (or a
:class:`~sklearn.pipeline.Pipeline` ending in one) and plots it.

- :class:`FeatureMaskDisplay`: heatmaps of each decision step's feature mask and of the
  aggregate mask, one row per sample.
- :class:`FeatureImportanceDisplay`: horizontal bars of the features sorted by importance.
- :class:`TrainingHistoryDisplay`: loss and validation score per epoch, the restored best epoch,
  and the learned alpha of each step for ``entmax_mode="adaptive"``.
- :class:`SampleExplanationDisplay`: one row's mask per decision step as grouped bars.

matplotlib is imported only when a figure is drawn; nothing is shown (no ``plt.show()``).
"""

import numbers

import numpy as np
from sklearn.pipeline import Pipeline
from sklearn.utils.validation import check_is_fitted

from ._base import BaseSparseTabNet

__all__ = [
    "FeatureImportanceDisplay",
    "FeatureMaskDisplay",
    "SampleExplanationDisplay",
    "TrainingHistoryDisplay",
]


# ---------------------------------------------------------------------------------------------
# Shared helpers
# ---------------------------------------------------------------------------------------------


def _pyplot():
    """``matplotlib.pyplot``, imported on first use."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as error:  # pragma: no cover - matplotlib is a dependency
        raise ImportError("sparsetab.inspection needs matplotlib to draw figures: pip install matplotlib") from error
    return plt


def _unwrap(estimator):
    """The fitted sparsetab model and the preprocessing steps in front of it (or None).

    Raises TypeError when ``estimator`` is neither a sparsetab estimator nor a Pipeline ending in
    one, and NotFittedError when the model is not fitted.
    """
    if isinstance(estimator, Pipeline):
        model = estimator.steps[-1][1]
        if not isinstance(model, BaseSparseTabNet):
            raise TypeError(
                "estimator must be a SparseTabNetClassifier, a SparseTabNetRegressor or a Pipeline whose last step "
                f"is one; got a Pipeline ending in {type(model).__name__}."
            )
        check_is_fitted(model)
        preprocessing = estimator[:-1] if len(estimator.steps) > 1 else None
        return model, preprocessing
    if not isinstance(estimator, BaseSparseTabNet):
        raise TypeError(
            "estimator must be a SparseTabNetClassifier, a SparseTabNetRegressor or a Pipeline whose last step is "
            f"one; got {type(estimator).__name__}."
        )
    check_is_fitted(estimator)
    return estimator, None


def _feature_names(model, preprocessing):
    """Names of the model's input columns: from the preprocessing steps when they give them."""
    names = model._feature_names()
    if preprocessing is not None and hasattr(preprocessing, "get_feature_names_out"):
        try:
            out = np.asarray(preprocessing.get_feature_names_out(), dtype=object)
        except (AttributeError, TypeError, ValueError):  # a step without get_feature_names_out
            out = None
        if out is not None and out.shape == names.shape:
            names = out
    return np.asarray([str(name) for name in names], dtype=object)


def _n_rows(X):
    if hasattr(X, "shape") and len(X.shape) >= 1:
        return int(X.shape[0])
    return len(X)


def _take_rows(X, positions):
    """Rows of ``X`` at integer ``positions``, keeping a DataFrame a DataFrame."""
    if hasattr(X, "iloc"):
        return X.iloc[positions]
    return np.asarray(X)[positions]


def _explain(model, preprocessing, X):
    """``model.explain`` on ``X`` after the preprocessing steps."""
    if preprocessing is not None:
        X = preprocessing.transform(X)
    return model.explain(X)


def _mode_label(model, step=None):
    """``"sparsemax"``, or ``"adaptive, alpha=1.42"`` for a learned alpha."""
    if model.entmax_mode == "adaptive" and step is not None:
        return f"adaptive, alpha={float(model.entmax_alphas_[step]):.2f}"
    if model.entmax_mode == "constant":
        return f"constant, alpha={float(model.entmax_alpha):g}"
    return str(model.entmax_mode)


def _check_axes(ax, n_panels, argument="ax"):
    """Figure and flat array of ``n_panels`` Axes: new ones when ``ax`` is None."""
    if ax is None:
        return None, None
    axes = np.ravel(np.asarray(ax, dtype=object))
    if axes.size != n_panels:
        raise ValueError(f"{argument} must hold {n_panels} Axes for this display (one per panel), got {axes.size}.")
    return axes[0].figure, axes


def _check_positive_int(value, argument, allow_none=True):
    if value is None and allow_none:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or value < 1:
        accepted = "None or an int >= 1" if allow_none else "an int >= 1"
        raise ValueError(f"{argument} must be {accepted}, got {value!r}.")
    return int(value)


# ---------------------------------------------------------------------------------------------
# FeatureMaskDisplay
# ---------------------------------------------------------------------------------------------


class FeatureMaskDisplay:
    """Heatmaps of the feature masks of each decision step and of the aggregate mask.

    One panel per shown decision step, plus one for the aggregate mask ``M_agg``; in every
    panel the rows are samples and the columns are features. The panels share one colour scale
    and one colour bar. Build it with :meth:`from_estimator`, or from arrays (for example those
    of ``estimator.explain(X)``) and then call :meth:`plot`.

    Parameters
    ----------
    step_masks : numpy.ndarray of shape (n_samples, n_shown_steps, n_features)
        Feature mask of each shown decision step, one row per sample.
    importances : numpy.ndarray of shape (n_samples, n_features) or None
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
    ims_ : list of matplotlib.image.AxesImage
        The heatmap of each panel; ``ims_[i].get_array()`` is the drawn
        (n_samples, n_features) matrix.
    im_ : matplotlib.image.AxesImage
        The last heatmap (the aggregate one when drawn).
    colorbar_ : matplotlib.colorbar.Colorbar or None
        The shared colour bar.

    See Also
    --------
    FeatureImportanceDisplay : Mean importances as sorted bars.
    SampleExplanationDisplay : One sample's masks as grouped bars.

    References
    ----------
    Arik and Pfister (2021), TabNet, AAAI; section 4 ("Interpretability"), Figure 5.

    Examples
    --------
    >>> from sparsetab.inspection import FeatureMaskDisplay
    >>> display = FeatureMaskDisplay.from_estimator(model, X_test, max_samples=20)  # doctest: +SKIP
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
        steps = range(step_masks.shape[1]) if self.steps is None else list(self.steps)
        panels = []
        for position, step in enumerate(steps):
            if self.step_labels is not None:
                detail = f" ({self.step_labels[position]})"
            else:
                detail = "" if self.entmax_mode is None else f" ({self.entmax_mode})"
            panels.append((f"step {int(step) + 1} mask{detail}", step_masks[:, position]))
        if self.importances is not None:
            mode = "" if self.entmax_mode is None else f" ({self.entmax_mode})"
            panels.append((f"aggregate mask{mode}", np.asarray(self.importances)))
        return panels

    def plot(self, ax=None, *, cmap="viridis", vmax=None, colorbar=True, xticks_rotation="vertical"):
        """Draw the heatmaps.

        Parameters
        ----------
        ax : matplotlib Axes or array-like of Axes of shape (n_panels,), default=None
            Where to draw: one Axes per panel (the shown steps, then the aggregate). None makes a
            new figure with one row of panels.
        cmap : str or matplotlib.colors.Colormap, default="viridis"
            Colour map of the heatmaps.
        vmax : float, default=None
            Top of the shared colour scale (the bottom is 0); None takes the largest drawn value.
        colorbar : bool, default=True
            Draw one colour bar for all panels.
        xticks_rotation : {"vertical", "horizontal"} or float, default="vertical"
            Rotation of the feature names.

        Returns
        -------
        display : FeatureMaskDisplay
            ``self``, with the artists stored as attributes.

        Raises
        ------
        ValueError
            If ``step_masks`` is not 3-D, there is nothing to draw, ``ax`` does not hold one Axes
            per panel, or ``vmax`` is not a positive number.
        """
        panels = self._panels()
        if not panels:
            raise ValueError("Nothing to draw: no step selected and no aggregate mask (importances is None).")
        names = [str(name) for name in self.feature_names]
        if vmax is None:
            vmax = max(float(np.max(values)) if values.size else 0.0 for _, values in panels)
            vmax = vmax if vmax > 0 else 1.0
        elif not isinstance(vmax, numbers.Real) or not vmax > 0:
            raise ValueError(f"vmax must be None or a positive number, got {vmax!r}.")
        figure, axes = _check_axes(ax, len(panels))
        if axes is None:
            plt = _pyplot()
            n_samples = panels[0][1].shape[0]
            width = max(3.0, 0.24 * len(names) + 1.0)
            height = max(3.0, min(0.12 * n_samples + 2.2, 9.0))
            figure, axes = plt.subplots(
                1,
                len(panels),
                figsize=(width * len(panels) + 1.0, height),
                sharey=True,
                squeeze=False,
                layout="constrained",
            )
            axes = axes.ravel()
        ims = []
        for panel_ax, (title, values) in zip(axes, panels):
            im = panel_ax.imshow(values, aspect="auto", cmap=cmap, vmin=0.0, vmax=vmax, interpolation="nearest")
            panel_ax.set_xticks(np.arange(len(names)), labels=names, rotation=xticks_rotation)
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
        sort_samples_by=None,
        ax=None,
        cmap="viridis",
        colorbar=True,
    ):
        """Explain rows of ``X`` and draw their masks.

        Parameters
        ----------
        estimator : SparseTabNetClassifier, SparseTabNetRegressor or Pipeline
            A fitted sparsetab estimator, or a fitted Pipeline whose last step is one (``X``
            then goes through the earlier steps, and the feature names come from their
            ``get_feature_names_out`` when they have it).
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)
            Rows to explain, as the estimator (or pipeline) takes them.
        steps : "all", int or array-like of int, default="all"
            Zero-based decision steps to draw (0 is the first step, titled "step 1").
        aggregate : bool, default=True
            Also draw the aggregate mask ``M_agg`` (``explain(X).importances``).
        max_samples : int or None, default=50
            Draw the first ``max_samples`` rows of ``X``; None draws every row.
        sort_features : bool, default=False
            Order the columns by their mean aggregate importance over the drawn rows, most
            important first; False keeps the input order.
        sort_samples_by : str, int or None, default=None
            Order the drawn rows by the values of this column of ``X`` (a column name of a
            DataFrame, or a column position), ascending, top to bottom; None keeps the input
            order.
        ax : matplotlib Axes or array-like of Axes, default=None
            Passed to :meth:`plot`.
        cmap : str or matplotlib.colors.Colormap, default="viridis"
            Passed to :meth:`plot`.
        colorbar : bool, default=True
            Passed to :meth:`plot`.

        Returns
        -------
        display : FeatureMaskDisplay
            The drawn display; ``display.sample_indices_`` holds the positions in ``X`` of the
            drawn rows, top to bottom, and ``display.feature_order_`` the input position of each
            drawn column.

        Raises
        ------
        TypeError
            If ``estimator`` is not a sparsetab estimator or a Pipeline ending in one.
        sklearn.exceptions.NotFittedError
            If the estimator is not fitted.
        ValueError
            If ``steps`` names no step or one outside ``0..n_steps - 1``, ``max_samples`` is
            not None or an int >= 1, ``sort_samples_by`` is not a column of ``X``, ``X`` has no
            rows, or ``ax`` does not hold one Axes per panel; and as ``estimator.explain``.
        """
        model, preprocessing = _unwrap(estimator)
        shown_steps = _check_steps(steps, model.n_steps)
        max_samples = _check_positive_int(max_samples, "max_samples")
        n_rows = _n_rows(X)
        if n_rows < 1:
            raise ValueError("X must have at least one row.")
        positions = np.arange(n_rows)
        if max_samples is not None:
            positions = positions[:max_samples]
        sample_label = "sample"
        if sort_samples_by is not None:
            key = _column_values(X, sort_samples_by)[positions]
            positions = positions[np.argsort(key, kind="stable")]
            sample_label = f"sample, sorted by {sort_samples_by}"
        explanation = _explain(model, preprocessing, _take_rows(X, positions))
        names = _feature_names(model, preprocessing)
        order = np.arange(len(names))
        if sort_features:
            order = np.argsort(-explanation.importances.astype(np.float64).mean(axis=0), kind="stable")
        step_masks = explanation.step_masks[:, shown_steps][:, :, order]
        importances = explanation.importances[:, order] if aggregate else None
        display = cls(
            step_masks,
            importances,
            names[order],
            steps=shown_steps,
            entmax_mode=_mode_label(model),
            step_labels=[_mode_label(model, step) for step in shown_steps],
            sample_label=sample_label,
        )
        display.sample_indices_ = positions
        display.feature_order_ = order
        return display.plot(ax=ax, cmap=cmap, colorbar=colorbar)


def _check_steps(steps, n_steps):
    if isinstance(steps, str):
        if steps != "all":
            raise ValueError(f"steps must be 'all', an int or a list of ints in 0..{n_steps - 1}, got {steps!r}.")
        return list(range(n_steps))
    values = [steps] if isinstance(steps, numbers.Integral) else list(np.ravel(np.asarray(steps, dtype=object)))
    if not values or any(
        isinstance(step, (bool, np.bool_)) or not isinstance(step, numbers.Integral) or not 0 <= step < n_steps
        for step in values
    ):
        raise ValueError(f"steps must be 'all', an int or a list of ints in 0..{n_steps - 1}, got {steps!r}.")
    return [int(step) for step in values]


def _column_values(X, column):
    """Values of one column of ``X`` as a 1-D array; ValueError naming ``sort_samples_by``."""
    if hasattr(X, "columns"):
        if column in X.columns:
            return np.asarray(X[column])
        if isinstance(column, numbers.Integral) and not isinstance(column, bool) and 0 <= column < X.shape[1]:
            return np.asarray(X.iloc[:, int(column)])
        raise ValueError(f"sort_samples_by must be a column of X, got {column!r}; X has columns {list(X.columns)}.")
    array = np.asarray(X)
    if (
        isinstance(column, (bool, np.bool_))
        or not isinstance(column, numbers.Integral)
        or array.ndim != 2
        or not 0 <= column < array.shape[1]
    ):
        n_columns = array.shape[1] if array.ndim == 2 else 0
        raise ValueError(
            f"sort_samples_by must be a column position in 0..{n_columns - 1} for X without column names, "
            f"got {column!r}."
        )
    return array[:, int(column)]


# ---------------------------------------------------------------------------------------------
# FeatureImportanceDisplay
# ---------------------------------------------------------------------------------------------


class FeatureImportanceDisplay:
    """Horizontal bar chart of feature importances, most important on top.

    Parameters
    ----------
    importances : numpy.ndarray of shape (n_features,)
        Importance of each feature (``feature_importances_``, or the mean of
        ``explain(X).importances``).
    feature_names : array-like of str of shape (n_features,)
        Bar labels.
    std : numpy.ndarray of shape (n_features,) or None, default=None
        Standard deviation of each importance across samples, drawn as error bars (the lower
        bar clipped at zero, since importances are not negative); None draws none.
    title : str, default="feature importance"
        Axes title.

    Attributes
    ----------
    figure_ : matplotlib.figure.Figure
        The figure.
    ax_ : matplotlib.axes.Axes
        The Axes with the bars.
    bars_ : matplotlib.container.BarContainer
        The bars, most important first (top to bottom).
    order_ : numpy.ndarray of int of shape (n_drawn,)
        Position in ``importances`` of each drawn bar, most important first.

    See Also
    --------
    FeatureMaskDisplay : The masks behind the importances, per sample and step.

    Examples
    --------
    >>> from sparsetab.inspection import FeatureImportanceDisplay
    >>> display = FeatureImportanceDisplay.from_estimator(model, top_k=10)  # doctest: +SKIP
    """

    def __init__(self, importances, feature_names, *, std=None, title="feature importance"):
        self.importances = importances
        self.feature_names = feature_names
        self.std = std
        self.title = title

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
        display : FeatureImportanceDisplay
            ``self``, with the artists stored as attributes.

        Raises
        ------
        ValueError
            If ``top_k`` is not None or an int >= 1, or ``importances`` is not 1-D.
        """
        top_k = _check_positive_int(top_k, "top_k")
        importances = np.asarray(self.importances, dtype=np.float64)
        if importances.ndim != 1:
            raise ValueError(f"importances must be 1-D, got shape {importances.shape}.")
        order = np.argsort(-importances, kind="stable")[:top_k]
        names = [str(self.feature_names[i]) for i in order]
        if ax is None:
            plt = _pyplot()
            figure, ax = plt.subplots(figsize=(6.0, 0.3 * len(order) + 1.5), layout="constrained")
        else:
            figure = ax.figure
        xerr = None
        if self.std is not None:  # importances are >= 0: the lower bar stops at zero
            std = np.asarray(self.std, dtype=np.float64)[order]
            xerr = np.vstack([np.minimum(std, np.clip(importances[order], 0.0, None)), std])
        positions = np.arange(len(order))
        self.bars_ = ax.barh(
            positions, importances[order], xerr=xerr, color=color, capsize=3 if xerr is not None else 0
        )
        ax.set_yticks(positions, labels=names)
        ax.invert_yaxis()  # most important on top
        ax.set_xlabel("importance")
        ax.set_title(self.title)
        self.figure_, self.ax_, self.order_ = figure, ax, order
        return self

    @classmethod
    def from_estimator(cls, estimator, X=None, *, top_k=None, error_bars=False, ax=None, color="C0"):
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
        error_bars : bool, default=False
            Draw the standard deviation of the importances across the rows of ``X`` (the
            lower bar clipped at zero).
        ax : matplotlib.axes.Axes, default=None
            Passed to :meth:`plot`.
        color : color, default="C0"
            Passed to :meth:`plot`.

        Returns
        -------
        display : FeatureImportanceDisplay
            The drawn display.

        Raises
        ------
        TypeError
            If ``estimator`` is not a sparsetab estimator or a Pipeline ending in one.
        sklearn.exceptions.NotFittedError
            If the estimator is not fitted.
        ValueError
            If ``error_bars`` is True without ``X``, ``top_k`` is not None or an int >= 1; and
            as ``estimator.explain``.
        """
        model, preprocessing = _unwrap(estimator)
        _check_positive_int(top_k, "top_k")
        names = _feature_names(model, preprocessing)
        if X is None:
            if error_bars:
                raise ValueError(
                    "error_bars=True needs X: feature_importances_ holds no per-row spread; pass the rows to explain."
                )
            display = cls(np.asarray(model.feature_importances_), names, title="feature importance (training rows)")
        else:
            importances = _explain(model, preprocessing, X).importances.astype(np.float64)
            std = importances.std(axis=0) if error_bars else None
            display = cls(
                importances.mean(axis=0), names, std=std, title=f"feature importance ({importances.shape[0]} rows)"
            )
        return display.plot(ax=ax, top_k=top_k, color=color)


# ---------------------------------------------------------------------------------------------
# TrainingHistoryDisplay
# ---------------------------------------------------------------------------------------------


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
        Validation score after each epoch (``validation_scores_``); None draws no panel.
    best_iteration : int or None, default=None
        Zero-based epoch whose weights were restored (``best_iteration_``); None marks none.
    alpha_history : numpy.ndarray of shape (n_epochs, n_steps) or None, default=None
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
    best_iteration_lines_ : list of matplotlib.lines.Line2D
        The best-epoch marker of each panel (empty when there is no best epoch).
    alpha_lines_ : list of matplotlib.lines.Line2D
        One line per decision step (empty without ``alpha_history``).

    Examples
    --------
    >>> from sparsetab.inspection import TrainingHistoryDisplay
    >>> display = TrainingHistoryDisplay.from_estimator(model)  # doctest: +SKIP
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
        ax : matplotlib Axes or array-like of Axes of shape (n_panels,), default=None
            Where to draw, one Axes per panel; None makes a new figure with one row of panels.

        Returns
        -------
        display : TrainingHistoryDisplay
            ``self``, with the artists stored as attributes.

        Raises
        ------
        ValueError
            If ``ax`` does not hold one Axes per panel, or ``alpha_history`` is not 2-D.
        """
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
        figure, axes = _check_axes(ax, n_panels)
        if axes is None:
            plt = _pyplot()
            figure, axes = plt.subplots(1, n_panels, figsize=(4.5 * n_panels, 3.5), squeeze=False, layout="constrained")
            axes = axes.ravel()
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
        from matplotlib.ticker import MaxNLocator

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
        ax : matplotlib Axes or array-like of Axes, default=None
            Passed to :meth:`plot`.

        Returns
        -------
        display : TrainingHistoryDisplay
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
        model, _ = _unwrap(estimator)
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


# ---------------------------------------------------------------------------------------------
# SampleExplanationDisplay
# ---------------------------------------------------------------------------------------------


class SampleExplanationDisplay:
    """One sample's feature mask per decision step, as grouped bars.

    For each feature, one bar per decision step (its mask value) and, optionally, one for the
    aggregate mask. The legend gives each step's contribution ``eta`` when known.

    Parameters
    ----------
    step_masks : numpy.ndarray of shape (n_steps, n_features)
        The sample's mask of each decision step.
    feature_names : array-like of str of shape (n_features,)
        Group labels.
    importances : numpy.ndarray of shape (n_features,) or None, default=None
        The sample's aggregate mask; None draws no aggregate bars.
    step_importance : numpy.ndarray of shape (n_steps,) or None, default=None
        The sample's ``eta`` per step, shown in the legend.
    title : str, default="sample explanation"
        Axes title.

    Attributes
    ----------
    figure_ : matplotlib.figure.Figure
        The figure.
    ax_ : matplotlib.axes.Axes
        The Axes with the bars.
    bars_ : list of matplotlib.container.BarContainer
        One container per decision step, each with one bar per feature.
    aggregate_bars_ : matplotlib.container.BarContainer or None
        The aggregate mask's bars.

    Examples
    --------
    >>> from sparsetab.inspection import SampleExplanationDisplay
    >>> display = SampleExplanationDisplay.from_estimator(model, X_test, index=0)  # doctest: +SKIP
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
        display : SampleExplanationDisplay
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
        if ax is None:
            plt = _pyplot()
            figure, ax = plt.subplots(
                figsize=(max(5.0, 0.22 * n_features * n_series**0.5 + 2), 4.0), layout="constrained"
            )
        else:
            figure = ax.figure
        centres = np.arange(n_features)
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
        display : SampleExplanationDisplay
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
        model, preprocessing = _unwrap(estimator)
        n_rows = _n_rows(X)
        if (
            isinstance(index, (bool, np.bool_))
            or not isinstance(index, numbers.Integral)
            or not -n_rows <= index < n_rows
        ):
            raise ValueError(f"index must be an int in {-n_rows}..{n_rows - 1} (a row position in X), got {index!r}.")
        position = int(index) % n_rows
        explanation = _explain(model, preprocessing, _take_rows(X, [position]))
        return cls(
            explanation.step_masks[0],
            _feature_names(model, preprocessing),
            importances=explanation.importances[0] if aggregate else None,
            step_importance=explanation.step_importance[0],
            title=f"row {position} ({_mode_label(model)})",
        ).plot(ax=ax)
