"""One sample's feature mask per decision step, as grouped bars, with its values and prediction."""

import math
import numbers

import numpy as np
from sklearn.base import is_classifier

from ._common import (
    check_feature_names,
    check_finite,
    check_shape,
    explain,
    feature_names,
    format_value,
    group_features,
    is_int,
    labelled_features,
    mode_label,
    n_rows,
    single_axes,
    sized_feature_count,
    take_rows,
    unwrap_estimator,
)

__all__ = ["SampleExplanationDisplay"]


class SampleExplanationDisplay:
    """One sample's feature mask per decision step, as grouped bars.

    For each feature, one bar per decision step (its mask value) and, optionally, one for the
    aggregate mask. The legend gives each step's contribution ``eta`` (and its gate, with step
    gates) when known, the tick labels the row's feature values (``"age = 39"``) when given,
    and :meth:`from_estimator`'s title the prediction (with its probability for a classifier).

    Parameters
    ----------
    step_masks : numpy.ndarray of float of shape (n_steps, n_features)
        The sample's mask of each decision step.
    feature_names : array-like of str of shape (n_features,)
        Group labels.
    importances : numpy.ndarray of float of shape (n_features,) or None, default=None
        The sample's aggregate mask; None draws no aggregate bars.
    step_importance : numpy.ndarray of float of shape (n_steps,) or None, default=None
        The sample's ``eta`` per step (``gate * eta`` with step gates), shown in the legend.
    step_gates : numpy.ndarray of float of shape (n_steps,) or None, default=None
        The sample's gate per step (a model with ``step_gates``), shown in the legend
        (``"step 2 (gate=0.00, eta=0.00)"``); None shows none.
    feature_values : array-like of shape (n_features,) or None, default=None
        The sample's value of each feature, written after its name in the tick labels
        (``"age = 39"``; numbers with 4 significant digits, missing values as ``"missing"``);
        an entry None writes the name alone. None writes the names alone.
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
    prediction_ : object
        Set by :meth:`from_estimator` only: the estimator's prediction for the row (a label or
        a value; a list for several outputs).
    probability_ : float or None
        Set by :meth:`from_estimator` only: a classifier's probability of the predicted class;
        None for a regressor or several outputs.

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
        self,
        step_masks,
        feature_names,
        *,
        importances=None,
        step_importance=None,
        step_gates=None,
        feature_values=None,
        title="sample explanation",
    ):
        self.step_masks = step_masks
        self.feature_names = feature_names
        self.importances = importances
        self.step_importance = step_importance
        self.step_gates = step_gates
        self.feature_values = feature_values
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
            If ``step_masks`` is not 2-D or not finite, ``feature_names``, ``feature_values`` or
            ``importances`` does not have one entry per feature (or ``importances`` is not
            finite), or ``step_gates`` or ``step_importance`` not one per step.

        Notes
        -----
        A new figure is sized for at most 60 features, and at most 60 get a tick label: with more,
        every k-th, ``k = ceil(n_features / 60)``, the first included. On Axes you pass, every feature
        is labelled; to read every name on a new figure, sum the features into fewer groups
        (``from_estimator``'s ``groups``).
        """
        masks = np.asarray(self.step_masks, dtype=np.float64)
        if masks.ndim != 2:
            raise ValueError(f"step_masks must have shape (n_steps, n_features), got shape {masks.shape}.")
        n_steps, n_features = masks.shape
        check_finite(masks, "step_masks")
        names = check_feature_names(self.feature_names, n_features, "step_masks")
        importances = None
        if self.importances is not None:
            importances = check_shape(self.importances, (n_features,), "importances", "(n_features,)")
            check_finite(importances, "importances")
        gates, etas = (
            None if values is None else check_shape(values, (n_steps,), argument, "(n_steps,)")
            for values, argument in ((self.step_gates, "step_gates"), (self.step_importance, "step_importance"))
        )
        if self.feature_values is not None:
            values = list(self.feature_values)
            if len(values) != n_features:
                raise ValueError(f"feature_values must have one value per feature ({n_features}), got {len(values)}.")
            names = [name if value is None else f"{name} = {format_value(value)}" for name, value in zip(names, values)]
        n_series = n_steps + (self.importances is not None)
        width = 0.8 / n_series
        # A new figure grows by the height of the longest label ("occupation = Machine-op-inspct"): its length
        # times the sine of its rotation (1 for "vertical" or 90 degrees, 0 for "horizontal").
        labelled = labelled_features(n_features, new_figure=ax is None)
        longest = max((len(names[i]) for i in labelled), default=0)
        degrees = {"vertical": 90.0, "horizontal": 0.0}.get(xticks_rotation, xticks_rotation)
        rise = abs(math.sin(math.radians(float(degrees)))) if isinstance(degrees, numbers.Real) else 1.0
        height = 4.0 + 0.075 * max(0, longest - 8) * rise
        width_inches = max(5.0, 0.22 * sized_feature_count(n_features) * n_series**0.5 + 2)
        figure, ax = single_axes(ax, "SampleExplanationDisplay.plot", figsize=(width_inches, height))
        centres = np.arange(n_features)
        # The series of a group sit side by side, centred on the group's tick.
        offsets = (np.arange(n_series) - (n_series - 1) / 2) * width
        self.bars_ = []
        for step in range(n_steps):
            details = []
            if gates is not None:
                details.append(f"gate={gates[step]:.2f}")
            if etas is not None:
                details.append(f"eta={etas[step]:.2f}")
            label = f"step {step + 1}" + (f" ({', '.join(details)})" if details else "")
            self.bars_.append(ax.bar(centres + offsets[step], masks[step], width, label=label))
        self.aggregate_bars_ = None
        if importances is not None:
            self.aggregate_bars_ = ax.bar(
                centres + offsets[-1],
                importances,
                width,
                label="aggregate",
                color="0.25",
            )
        ax.set_xticks(labelled, labels=[names[i] for i in labelled], rotation=xticks_rotation)
        ax.set_ylabel("mask value")
        ax.set_title(self.title)
        ax.legend(fontsize="small")
        self.figure_, self.ax_ = figure, ax
        return self

    @classmethod
    def from_estimator(cls, estimator, X, index, *, aggregate=True, groups=None, ax=None):
        """Explain one row of ``X`` and draw its masks, its values and its prediction.

        The tick labels give the row's value of each feature: the value in ``X`` for a column
        of ``X`` (for a group named after a column of ``X``, such as the source column of
        one-hot columns, that column's value; ``X`` without column names has the columns
        ``x0, x1, ...``), else the value the model sees for a model column under its own name
        (after the pipeline's earlier steps) or, without earlier steps, in a group of one; any
        other group has no value. The title gives the row's position in ``X`` (and its index
        label, for a DataFrame whose label is not the position), the prediction, and
        a classifier's probability of the predicted class.

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
        groups : dict of str to list of (str or int), default=None
            ``{group name: member columns}``: one bar group per group, the sum of its members'
            masks (for example the one-hot columns of one source column;
            :func:`~sparsetab.inspection.feature_groups_from_transformer` builds the dict from
            a fitted pipeline). Members are named as the drawn columns are (after the
            pipeline's earlier steps) or given by position; columns in no group stay their
            own. None draws one bar group per input column.
        ax : matplotlib.axes.Axes, default=None
            Passed to :meth:`plot`.

        Returns
        -------
        SampleExplanationDisplay
            The drawn display.

        Raises
        ------
        TypeError
            If ``estimator`` is not a sparsetab estimator or a Pipeline ending in one, or
            ``groups`` is not None or a dict.
        sklearn.exceptions.NotFittedError
            If the estimator is not fitted.
        ValueError
            If ``index`` is not an int in ``-n_samples..n_samples - 1``, or ``groups`` is bad
            (as ``estimator.explain`` says); and as ``estimator.explain`` and
            ``estimator.predict``.
        """
        model, preprocessing = unwrap_estimator(estimator)
        n_samples = n_rows(X)
        if not is_int(index) or not -n_samples <= index < n_samples:
            raise ValueError(
                f"index must be an int in {-n_samples}..{n_samples - 1} (a row position in X), got {index!r}."
            )
        position = int(index) % n_samples
        names = input_names = feature_names(model, preprocessing)
        group_features(names, groups)  # checked before explaining
        row = take_rows(X, [position])
        explanation = explain(model, preprocessing, row)
        names, (step_masks, importances), members = group_features(
            names, groups, explanation.step_masks[0], explanation.importances[0]
        )
        prediction, probability = _prediction(estimator, model, row)
        text = (
            f"[{', '.join(format_value(value) for value in prediction)}]"
            if isinstance(prediction, list)
            else (format_value(prediction))
        )
        if probability is not None:
            text += f" (p = {probability:.2f})"
        display = cls(
            step_masks,
            names,
            importances=importances if aggregate else None,
            step_importance=explanation.step_importance[0],
            step_gates=None if explanation.step_gates is None else explanation.step_gates[0],
            feature_values=_row_values(row, names, members, preprocessing, input_names),
            title=f"row {position}{_index_label(X, position)} ({mode_label(model)}): predicted {text}",
        )
        display.prediction_, display.probability_ = prediction, probability
        return display.plot(ax=ax)


def _index_label(X, position):
    """`` (index <label>)`` where the row's index label in a DataFrame is not its position, else ``""``."""
    index = getattr(X, "index", None)
    if index is None:
        return ""
    label = index[position]
    return "" if isinstance(label, numbers.Integral) and label == position else f" (index {label})"


def _prediction(estimator, model, row):
    """The prediction for one row (a list for several outputs) and the predicted class's probability or None."""
    predicted = np.asarray(estimator.predict(row), dtype=object)
    if predicted.ndim != 1:
        return [value for value in predicted[0]], None
    prediction = predicted[0]
    prediction = prediction.item() if hasattr(prediction, "item") else prediction
    if not is_classifier(model):
        return prediction, None
    classes = list(np.asarray(model.classes_, dtype=object))
    proba = np.asarray(estimator.predict_proba(row))
    if proba.ndim != 2 or proba.shape[1] != len(classes) or prediction not in classes:
        return prediction, None
    return prediction, float(proba[0, classes.index(prediction)])


def _row_values(row, names, members, preprocessing, input_names):
    """The row's value for each drawn column: from ``row`` by name, else a model input under its own name."""
    if hasattr(row, "columns"):
        raw = {str(column): row.iloc[0, position] for position, column in enumerate(row.columns)}
    else:  # scikit-learn's names of the columns of an array, which feature_groups_from_transformer's groups use
        raw = {f"x{position}": value for position, value in enumerate(np.asarray(row, dtype=object)[0])}
    if preprocessing is None:  # the model sees the columns of X
        inputs = row.iloc[0].to_numpy(dtype=object) if hasattr(row, "columns") else np.asarray(row, dtype=object)[0]
    else:
        transformed = preprocessing.transform(row)
        transformed = transformed.toarray() if hasattr(transformed, "toarray") else transformed
        if hasattr(transformed, "iloc"):
            inputs = transformed.iloc[0].to_numpy(dtype=object)
        else:
            inputs = np.asarray(transformed, dtype=object)[0]
    values = []
    for name, columns in zip(names, members):
        if name in raw:  # a column of X (or a group named after one): its value in X, before any step
            values.append(raw[name])
        elif len(columns) == 1 and (preprocessing is None or input_names[int(columns[0])] == name):
            # The model's input under its own name (after a pipeline's steps), or without steps a group of one.
            values.append(inputs[int(columns[0])])
        else:
            # After a pipeline's steps, a group's name that is no column of X: the model's input (scaled, say)
            # would read as the value of the column the group is named after.
            values.append(None)
    return values
