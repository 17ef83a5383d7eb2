"""What the displays of :mod:`sparsetab.inspection` share.

Getting the sparsetab model out of what the user passed, naming its columns, explaining rows,
summing columns into groups, writing values, checking arguments, and making or checking the
Axes to draw on. The names carry no leading
underscore because the display modules import them; the module keeps one because none of this
is public API.
"""

import math
import numbers

import numpy as np
import pandas as pd
from sklearn.pipeline import Pipeline
from sklearn.utils._optional_dependencies import check_matplotlib_support
from sklearn.utils.validation import check_is_fitted

from .._base import BaseSparseTabNet
from .._tabular.encoding import feature_names as model_feature_names
from .._tabular.feature_groups import resolve_feature_groups, sum_feature_groups


def pyplot(caller_name):
    """``matplotlib.pyplot``, imported on the first figure made rather than at import.

    Parameters
    ----------
    caller_name : str
        The method that needs pyplot, named in the ImportError.

    Returns
    -------
    module
        ``matplotlib.pyplot``.

    Raises
    ------
    ImportError
        If matplotlib is not installed.
    """
    check_matplotlib_support(caller_name)
    # Lazy: importing sparsetab must not pay for (or configure a backend of) matplotlib.
    import matplotlib.pyplot as plt

    return plt


def unwrap_estimator(estimator):
    """The fitted sparsetab model, and the Pipeline steps in front of it or None.

    Parameters
    ----------
    estimator : object
        A sparsetab estimator, or a Pipeline whose last step is one.

    Returns
    -------
    model : BaseSparseTabNet
        The fitted model.
    preprocessing : sklearn.pipeline.Pipeline or None
        The steps before ``model`` in a Pipeline of two or more steps, else None.

    Raises
    ------
    TypeError
        If ``estimator`` is neither a sparsetab estimator nor a Pipeline ending in one.
    sklearn.exceptions.NotFittedError
        If the model is not fitted.
    """
    if isinstance(estimator, Pipeline):
        model = estimator.steps[-1][1]
        got = f"a Pipeline ending in {type(model).__name__}"
    else:
        model = estimator
        got = type(estimator).__name__
    if not isinstance(model, BaseSparseTabNet):
        raise TypeError(
            "estimator must be a SparseTabNetClassifier, a SparseTabNetRegressor or a Pipeline whose last step is "
            f"one; got {got}."
        )
    check_is_fitted(model)
    if not isinstance(estimator, Pipeline) or len(estimator.steps) == 1:
        return model, None
    return model, estimator[:-1]


def feature_names(model, preprocessing):
    """The model's input column names, from the preprocessing steps when they give them.

    Parameters
    ----------
    model : BaseSparseTabNet
        A fitted sparsetab model.
    preprocessing : sklearn.pipeline.Pipeline or None
        The steps in front of ``model``.

    Returns
    -------
    numpy.ndarray of str of shape (``n_features_in_``,), dtype object
        The preprocessing's ``get_feature_names_out()`` when it has one entry per model input,
        else the model's own names (``feature_names_in_`` or ``x0, x1, ...``).
    """
    names = model_feature_names(model)
    if preprocessing is not None and hasattr(preprocessing, "get_feature_names_out"):
        try:
            out = np.asarray(preprocessing.get_feature_names_out(), dtype=object)
        except (AttributeError, TypeError, ValueError):  # a Pipeline forwards to steps that may lack it
            out = None
        if out is not None and out.shape == names.shape:
            names = out
    return np.asarray([str(name) for name in names], dtype=object)


def n_rows(X):
    """Number of rows of ``X``.

    Parameters
    ----------
    X : pandas.DataFrame, numpy.ndarray or sequence of rows
        The rows.

    Returns
    -------
    int
        ``X.shape[0]``, or ``len(X)`` for a sequence without a shape.
    """
    if hasattr(X, "shape") and len(X.shape) >= 1:
        return int(X.shape[0])
    return len(X)


def take_rows(X, positions):
    """The rows of ``X`` at integer ``positions``, keeping a DataFrame a DataFrame.

    Parameters
    ----------
    X : pandas.DataFrame, numpy.ndarray or sequence of rows
        The rows.
    positions : array-like of int of shape (n_taken,)
        Positions of the rows to take.

    Returns
    -------
    pandas.DataFrame or numpy.ndarray of shape (n_taken, n_features)
        The rows, a DataFrame for a DataFrame ``X`` (so the model sees its column names).
    """
    if hasattr(X, "iloc"):
        return X.iloc[positions]
    return np.asarray(X)[positions]


def explain(model, preprocessing, X):
    """``model.explain`` on ``X`` after the preprocessing steps.

    Parameters
    ----------
    model : BaseSparseTabNet
        A fitted sparsetab model.
    preprocessing : sklearn.pipeline.Pipeline or None
        The steps in front of ``model``.
    X : pandas.DataFrame or array-like of shape (n_samples, n_features)
        Rows as the pipeline (or the model) takes them.

    Returns
    -------
    sklearn.utils.Bunch
        ``model.explain``'s answer: ``step_masks`` of shape (n_samples, n_steps,
        n_features_in_), ``importances`` of shape (n_samples, ``n_features_in_``),
        ``step_importance`` of shape (n_samples, n_steps), ``feature_names``.
    """
    if preprocessing is not None:
        X = preprocessing.transform(X)
    return model.explain(X)


def group_features(names, groups, *arrays):
    """Names and per-feature arrays with the columns of each group summed into one.

    Parameters
    ----------
    names : array-like of str of shape (n_features,)
        The columns' names, as the display shows them (after the preprocessing steps).
    groups : dict of str to list of (str or int) or None
        ``{group name: member names or positions}``, as ``explain(X, groups=...)`` takes it;
        None sums nothing.
    *arrays : numpy.ndarray of shape (..., n_features)
        Per-feature values, summed over the last axis.

    Returns
    -------
    names : numpy.ndarray of str of shape (n_outputs,), dtype object
        A group's name or an ungrouped column's own name, in the order of their first column.
    arrays : list of numpy.ndarray of shape (..., n_outputs)
        The summed arrays (new arrays; the inputs are not modified).
    members : list of numpy.ndarray of int of shape (n_members,)
        The positions in ``names`` (the input) that each output column sums.

    Raises
    ------
    TypeError
        If ``groups`` is not None or a dict.
    ValueError
        If ``groups`` is bad, as ``explain`` says.
    """
    names = np.asarray([str(name) for name in names], dtype=object)
    if groups is None:
        return names, list(arrays), [np.asarray([position]) for position in range(len(names))]
    out_names, members = resolve_feature_groups(groups, names)
    return out_names, [sum_feature_groups(values, members) for values in arrays], members


def format_value(value):
    """A feature value as a short text: ``"39"``, ``"0.2143"``, ``"Married"``, ``"missing"``.

    Parameters
    ----------
    value : object
        One cell of a table.

    Returns
    -------
    str
        Integers and strings as they are, other numbers with 4 significant digits, missing
        values (None, NaN, ``pandas.NA``) as ``"missing"``.
    """
    if pd.api.types.is_scalar(value) and pd.isna(value):
        return "missing"
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return f"{float(value):.4g}"
    return str(value)


def mode_label(model, step=None):
    """The model's attention map in words: ``"sparsemax"``, or ``"adaptive, alpha=1.42"``.

    Parameters
    ----------
    model : BaseSparseTabNet
        A fitted sparsetab model.
    step : int or None, default=None
        Zero-based decision step whose learned alpha to name (``entmax_mode="adaptive"``);
        None names the mode alone.

    Returns
    -------
    str
        The label.
    """
    if model.entmax_mode == "adaptive" and step is not None:
        return f"adaptive, alpha={float(model.entmax_alphas_[step]):.2f}"
    if model.entmax_mode == "constant":
        return f"constant, alpha={float(model.entmax_alpha):g}"
    return str(model.entmax_mode)


def is_int(value):
    """Whether ``value`` is an integer that is not a bool.

    Parameters
    ----------
    value : object
        The value.

    Returns
    -------
    bool
        True for Python and numpy integers, False for ``True``/``False`` (ints to Python, but
        never meant as a count or position) and everything else.
    """
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def check_feature_names(names, n_features, source):
    """``names`` as a list of str, one per feature of the array ``source``.

    Parameters
    ----------
    names : array-like of shape (n_features,)
        The display's ``feature_names``.
    n_features : int
        Features of the array they label.
    source : str
        That array's name, for the error message.

    Returns
    -------
    list of str

    Raises
    ------
    ValueError
        If ``names`` is a string or does not hold exactly ``n_features`` names (a shorter list left columns
        unlabelled or failed with an IndexError while drawing).
    """
    if isinstance(names, str):
        raise ValueError(
            f"feature_names must be a list of names, one per feature of {source}, got the string {names!r}."
        )
    # list() first: numpy makes one object of a generator, and a set has no order to label columns by.
    if isinstance(names, (set, frozenset)):
        raise ValueError(f"feature_names must be an ordered list of names, one per feature of {source}, got a set.")
    names = [str(name) for name in np.ravel(np.asarray(list(names), dtype=object))]
    if len(names) != n_features:
        raise ValueError(
            f"feature_names must hold one name per feature of {source} ({n_features}), got {len(names)}: {names[:5]}"
            f"{'...' if len(names) > 5 else ''}."
        )
    return names


def check_finite(values, argument):
    """Raise a ValueError naming ``argument`` where ``values`` (a float array) holds NaN or infinity."""
    bad = int(np.size(values) - np.isfinite(values).sum())
    if bad:
        raise ValueError(f"{argument} must be finite, got {bad} NaN or infinite value(s).")


def check_shape(values, shape, argument, meaning):
    """``values`` as a float64 array of ``shape``; ValueError naming ``argument`` and what its shape means."""
    array = np.asarray(values, dtype=np.float64)
    if array.shape != tuple(shape):
        raise ValueError(f"{argument} must have shape {meaning} = {tuple(shape)}, got shape {array.shape}.")
    return array


def check_positive_int(value, argument):
    """``value`` as an int >= 1, or None.

    Parameters
    ----------
    value : int or None
        The value to check.
    argument : str
        The argument's name, for the error message.

    Returns
    -------
    int or None
        ``value`` as a Python int, or None.

    Raises
    ------
    ValueError
        If ``value`` is neither None nor an int >= 1.
    """
    if value is None:
        return None
    if not is_int(value) or value < 1:
        raise ValueError(f"{argument} must be None or an int >= 1, got {value!r}.")
    return int(value)


# A new figure is sized for at most this many features, and at most this many get a tick label: beyond it
# the labels overlap at any readable size, and a figure sized for 2,000 features was 192,500 pixels wide and took
# over 30 s to draw. Users who want every name draw fewer features (``top_k``) or pass their own Axes.
MAX_LABELLED_FEATURES = 60


def sized_feature_count(n_features):
    """The number of features a new figure is sized for: ``n_features``, at most :data:`MAX_LABELLED_FEATURES`.

    Parameters
    ----------
    n_features : int
        Features (or groups) the display draws.

    Returns
    -------
    int
    """
    return min(int(n_features), MAX_LABELLED_FEATURES)


def labelled_features(n_features, *, new_figure=True):
    """Positions of the drawn features that get a tick label: all of them, or every k-th beyond 60 on a new figure.

    Parameters
    ----------
    n_features : int
        Features (or groups) the display draws, >= 0.
    new_figure : bool, default=True
        Whether the display made the figure. On Axes the user gave, sized as the user chose, every feature is
        labelled.

    Returns
    -------
    numpy.ndarray of int of shape (ceil(n_features / k),)
        ``0, k, 2k, ...`` with ``k = ceil(n_features / MAX_LABELLED_FEATURES)`` on a new figure (1 up to 60
        features), so at most :data:`MAX_LABELLED_FEATURES` labels; ``k = 1`` otherwise.
    """
    step = max(1, math.ceil(n_features / MAX_LABELLED_FEATURES)) if new_figure else 1
    return np.arange(0, n_features, step)


def panel_axes(ax, n_panels, caller_name, **subplots_kwargs):
    """Figure and flat array of ``n_panels`` Axes: those of ``ax``, or a new row of panels.

    Parameters
    ----------
    ax : matplotlib.axes.Axes, array-like of Axes of shape (n_panels,) or None
        The Axes to draw on; None makes a new figure.
    n_panels : int
        Number of Axes the display draws.
    caller_name : str
        The method drawing, named if matplotlib is missing.
    **subplots_kwargs : dict
        Passed to ``pyplot.subplots`` for a new figure (``figsize``, ``sharey`` ...).

    Returns
    -------
    figure : matplotlib.figure.Figure
        The figure of the first Axes.
    axes : numpy.ndarray of matplotlib.axes.Axes of shape (n_panels,)
        The Axes, in panel order.

    Raises
    ------
    ValueError
        If ``ax`` does not hold ``n_panels`` Axes.
    """
    if ax is None:
        figure, axes = pyplot(caller_name).subplots(1, n_panels, squeeze=False, layout="constrained", **subplots_kwargs)
        return figure, axes.ravel()
    axes = np.ravel(np.asarray(ax, dtype=object))
    if axes.size != n_panels:
        raise ValueError(f"ax must hold {n_panels} Axes for this display (one per panel), got {axes.size}.")
    return axes[0].figure, axes


def single_axes(ax, caller_name, figsize):
    """Figure and Axes to draw one panel on: ``ax``, or a new figure.

    Parameters
    ----------
    ax : matplotlib.axes.Axes or None
        The Axes to draw on; None makes a new figure.
    caller_name : str
        The method drawing, named if matplotlib is missing.
    figsize : tuple of float of shape (2,)
        Width and height in inches of a new figure.

    Returns
    -------
    figure : matplotlib.figure.Figure
        The figure of ``ax``, or the new one.
    ax : matplotlib.axes.Axes
        The Axes.
    """
    if ax is None:
        return pyplot(caller_name).subplots(figsize=figsize, layout="constrained")
    return ax.figure, ax
