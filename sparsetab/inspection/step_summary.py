"""Which features each decision step uses: each step's mean mask over the rows, steps x features."""

import numbers

import numpy as np

from ._common import (
    check_feature_names,
    check_finite,
    check_positive_int,
    explain,
    feature_names,
    group_features,
    labelled_features,
    mode_label,
    n_rows,
    single_axes,
    sized_feature_count,
    unwrap_estimator,
)

__all__ = ["StepSummaryDisplay"]


class StepSummaryDisplay:
    """Which features each decision step uses: each step's mean mask over the rows.

    One heatmap row per decision step (and a last one for the mean aggregate mask), one column
    per feature, the features sorted by importance, most important on the left. Each cell is the
    mean over the rows of that step's mask value of that feature, so each step's row sums to 1
    over all features (less when ``top_k`` leaves some out; the aggregate row also less when
    some rows have no aggregate mask, every ``eta`` 0); the cells are annotated with their
    values (not on a new figure of more than 60 features, too narrow for them). With step
    gates, each step's label gives its mean gate. Build it with :meth:`from_estimator`, or from
    arrays (for example the means of ``estimator.explain(X)``'s arrays over the rows) and then
    call :meth:`plot`.

    Parameters
    ----------
    step_masks : numpy.ndarray of float of shape (n_steps, n_features)
        Mean mask of each decision step over the rows.
    feature_names : array-like of str of shape (n_features,)
        Column labels.
    importances : numpy.ndarray of float of shape (n_features,) or None, default=None
        Mean aggregate mask over the rows, drawn as a last row ``"aggregate"`` and used to sort
        the features; None draws no such row and sorts by the mean of the step masks.
    entmax_mode : str, default=None
        Map of the attentive transformers, named in the title; None names none.
    n_samples : int, default=None
        Number of rows the means are over, named in the title; None names none.
    step_gates : numpy.ndarray of float of shape (n_steps,) or None, default=None
        Mean step gate of each decision step over the rows (a model with ``step_gates``),
        written in the step's row label (``"step 2 (gate 0.31)"``); None writes none.

    Attributes
    ----------
    figure_ : matplotlib.figure.Figure
        The figure.
    ax_ : matplotlib.axes.Axes
        The Axes with the heatmap.
    im_ : matplotlib.image.AxesImage
        The heatmap; ``im_.get_array()`` is the drawn (n_rows, n_drawn_features) matrix, the
        steps first, then the aggregate row.
    texts_ : numpy.ndarray of matplotlib.text.Text of shape (n_rows, n_drawn_features) or None
        The cell annotations; None when not annotated (``annotate=False``, or a new figure of
        more than 60 features).
    colorbar_ : matplotlib.colorbar.Colorbar or None
        The colour bar.
    order_ : numpy.ndarray of int of shape (n_drawn_features,)
        Position in ``feature_names`` of each drawn column, left to right.

    See Also
    --------
    FeatureMaskDisplay : The masks of each row, step by step.
    FeatureImportanceDisplay : Mean importances as sorted bars.

    References
    ----------
    Arik and Pfister (2021), TabNet, AAAI; section 4 ("Interpretability").

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import numpy as np
    >>> from sparsetab.inspection import StepSummaryDisplay
    >>> masks = np.array([[0.7, 0.3, 0.0], [0.0, 0.2, 0.8]])  # two steps, three features
    >>> display = StepSummaryDisplay(masks, ["a", "b", "c"]).plot(top_k=2)
    >>> [label.get_text() for label in display.ax_.get_xticklabels()]  # by mean mask: c 0.4, a 0.35
    ['c', 'a']
    >>> display.im_.get_array().tolist()
    [[0.0, 0.7], [0.8, 0.0]]
    >>> plt.close(display.figure_)
    """

    def __init__(
        self, step_masks, feature_names, *, importances=None, entmax_mode=None, n_samples=None, step_gates=None
    ):
        self.step_masks = step_masks
        self.feature_names = feature_names
        self.importances = importances
        self.entmax_mode = entmax_mode
        self.n_samples = n_samples
        self.step_gates = step_gates

    def plot(
        self,
        ax=None,
        *,
        top_k=None,
        annotate=True,
        cmap="viridis",
        vmax=None,
        colorbar=True,
        xticks_rotation="vertical",
    ):
        """Draw the heatmap.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, default=None
            Where to draw; None makes a new figure sized to the data.
        top_k : int or None, default=None
            Draw only the ``top_k`` most important features (all of them when there are
            fewer); None draws every feature.
        annotate : bool, default=True
            Write each cell's value in it (two decimals; ``"0"`` for an exact zero, which the
            sparse maps give, ``"<.01"`` for a positive value below 0.005). Not on a new figure
            of more than 60 features, whose cells are too narrow for the text (``texts_`` is None).
        cmap : str or matplotlib.colors.Colormap, default="viridis"
            Colour map.
        vmax : float, default=None
            Top of the colour scale (the bottom is 0); None takes the largest drawn value (1
            when every drawn value is 0).
        colorbar : bool, default=True
            Draw a colour bar.
        xticks_rotation : {"vertical", "horizontal"} or float, default="vertical"
            Rotation of the feature names.

        Returns
        -------
        StepSummaryDisplay
            ``self``, with the artists stored as attributes.

        Raises
        ------
        ValueError
            If ``step_masks`` is not 2-D or not finite, ``feature_names`` or ``importances`` does
            not have one entry per feature (or ``importances`` is not finite), ``step_gates`` not
            one value per step, ``top_k`` is not None or an int >= 1, or ``vmax`` is not None or
            a positive number.

        Notes
        -----
        A new figure is sized for at most 60 features, and at most 60 get a tick label: with more,
        every k-th, ``k = ceil(n_features / 60)``, the first included. On Axes you pass, every feature
        is labelled; to read every name on a new figure, draw fewer features (``top_k``). The cells of
        a new figure of more than 60 features are not annotated.
        """
        top_k = check_positive_int(top_k, "top_k")
        masks = np.asarray(self.step_masks, dtype=np.float64)
        if masks.ndim != 2:
            raise ValueError(f"step_masks must have shape (n_steps, n_features), got shape {masks.shape}.")
        n_steps, n_features = masks.shape
        check_finite(masks, "step_masks")
        all_names = check_feature_names(self.feature_names, n_features, "step_masks")
        step_labels = [f"step {step + 1}" for step in range(n_steps)]
        if self.step_gates is not None:
            gates = np.asarray(self.step_gates, dtype=np.float64)
            if gates.shape != (n_steps,):
                raise ValueError(
                    f"step_gates must have shape (n_steps,) = ({n_steps},), the rows of step_masks; "
                    f"got shape {gates.shape}."
                )
            step_labels = [f"{label} (gate {gate:.2f})" for label, gate in zip(step_labels, gates)]
        if self.importances is None:
            key, rows, labels = masks.mean(axis=0), masks, step_labels
        else:
            key = np.asarray(self.importances, dtype=np.float64)
            if key.shape != (n_features,):
                raise ValueError(
                    f"importances must have shape (n_features,) = ({n_features},), the columns of step_masks; "
                    f"got shape {key.shape}."
                )
            check_finite(key, "importances")
            rows = np.vstack([masks, key])
            labels = step_labels + ["aggregate"]
        order = np.argsort(-key, kind="stable")[:top_k]
        values = rows[:, order]
        if vmax is None:
            vmax = float(values.max()) if values.size and values.max() > 0 else 1.0
        elif not isinstance(vmax, numbers.Real) or not vmax > 0:
            raise ValueError(f"vmax must be None or a positive number, got {vmax!r}.")
        names = [all_names[position] for position in order]
        figsize = (max(5.5, 0.45 * sized_feature_count(len(order)) + 2.5), max(2.2, 0.42 * len(labels) + 1.9))
        labelled = labelled_features(len(order), new_figure=ax is None)
        figure, ax = single_axes(ax, "StepSummaryDisplay.plot", figsize=figsize)
        self.im_ = ax.imshow(values, aspect="auto", cmap=cmap, vmin=0.0, vmax=vmax, interpolation="nearest")
        ax.set_xticks(labelled, labels=[names[i] for i in labelled], rotation=xticks_rotation)
        ax.set_yticks(np.arange(len(labels)), labels=labels)
        ax.set_xlabel("feature")
        if self.importances is not None:  # a line between the steps and their aggregate
            ax.axhline(n_steps - 0.5, color="white", linewidth=2)
        title = "mean mask per step"
        details = [] if self.n_samples is None else [f"{int(self.n_samples)} rows"]
        details += [] if self.entmax_mode is None else [str(self.entmax_mode)]
        ax.set_title(title + (f" ({', '.join(details)})" if details else ""))
        self.texts_ = None
        if annotate and len(labelled) == len(order):  # every column labelled: wide enough for its values too
            colours = self.im_.cmap(self.im_.norm(values))
            texts = np.empty(values.shape, dtype=object)
            for (row, column), value in np.ndenumerate(values):
                red, green, blue, _ = colours[row, column]
                dark = 0.299 * red + 0.587 * green + 0.114 * blue < 0.5  # white text on dark cells
                texts[row, column] = ax.text(
                    column,
                    row,
                    _cell_text(value),
                    ha="center",
                    va="center",
                    fontsize="small",
                    color="white" if dark else "black",
                )
            self.texts_ = texts
        self.colorbar_ = figure.colorbar(self.im_, ax=ax, label="mean mask value") if colorbar else None
        self.figure_, self.ax_, self.order_ = figure, ax, order
        return self

    @classmethod
    def from_estimator(
        cls, estimator, X, *, groups=None, top_k=None, aggregate=True, ax=None, annotate=True, cmap="viridis"
    ):
        """Explain the rows of ``X`` and draw each step's mean mask.

        Parameters
        ----------
        estimator : SparseTabNetClassifier, SparseTabNetRegressor or Pipeline
            A fitted sparsetab estimator, or a fitted Pipeline whose last step is one (``X``
            then goes through the earlier steps, and the feature names come from their
            ``get_feature_names_out`` when they have it).
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)
            Rows to explain, as the estimator (or pipeline) takes them; every row counts.
        groups : dict of str to list of (str or int), default=None
            ``{group name: member columns}``: one column per group, the sum of its members'
            masks (for example the one-hot columns of one source column;
            :func:`~sparsetab.inspection.feature_groups_from_transformer` builds the dict from
            a fitted pipeline). Members are named as the drawn columns are or given by
            position; columns in no group stay their own. None draws one column per input
            column.
        top_k : int or None, default=None
            Passed to :meth:`plot`.
        aggregate : bool, default=True
            Also draw the mean aggregate mask (``explain(X).importances``) as a last row, and
            sort the features by it; False sorts them by the mean of the step masks.
        ax : matplotlib.axes.Axes, default=None
            Passed to :meth:`plot`.
        annotate : bool, default=True
            Passed to :meth:`plot`.
        cmap : str or matplotlib.colors.Colormap, default="viridis"
            Passed to :meth:`plot`.

        Returns
        -------
        StepSummaryDisplay
            The drawn display.

        Raises
        ------
        TypeError
            If ``estimator`` is not a sparsetab estimator or a Pipeline ending in one, or
            ``groups`` is not None or a dict.
        sklearn.exceptions.NotFittedError
            If the estimator is not fitted.
        ValueError
            If ``X`` has no rows, ``top_k`` is not None or an int >= 1, or ``groups`` is bad
            (as ``estimator.explain`` says); and as ``estimator.explain``.
        """
        model, preprocessing = unwrap_estimator(estimator)
        check_positive_int(top_k, "top_k")  # before explain(X), which can take long
        names = feature_names(model, preprocessing)
        group_features(names, groups)
        if n_rows(X) < 1:
            raise ValueError("X must have at least one row.")
        explanation = explain(model, preprocessing, X)
        names, (step_masks, importances), _ = group_features(
            names, groups, explanation.step_masks, explanation.importances
        )
        display = cls(
            step_masks.mean(axis=0, dtype=np.float64),
            names,
            importances=importances.mean(axis=0, dtype=np.float64) if aggregate else None,
            entmax_mode=mode_label(model),
            n_samples=step_masks.shape[0],
            step_gates=None
            if explanation.step_gates is None
            else explanation.step_gates.mean(axis=0, dtype=np.float64),
        )
        return display.plot(ax=ax, top_k=top_k, annotate=annotate, cmap=cmap)


def _cell_text(value):
    """A mean mask value in two decimals; "0" for an exact zero, "<.01" for a tiny positive one."""
    if value == 0:
        return "0"
    if value < 0.005:
        return "<.01"
    return f"{value:.2f}"
