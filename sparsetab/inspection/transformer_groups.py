"""The ``groups`` of a one-hot pipeline, read from its fitted structure."""

import numpy as np
from sklearn.base import OneToOneFeatureMixin
from sklearn.compose import ColumnTransformer
from sklearn.impute import MissingIndicator, SimpleImputer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer, KBinsDiscretizer, OneHotEncoder, TargetEncoder
from sklearn.utils.validation import check_is_fitted

from .._base import BaseSparseTabNet

__all__ = ["feature_groups_from_transformer"]


def feature_groups_from_transformer(transformer, *, positions=False):
    """The ``groups`` that sum a fitted transformer's output columns back into its input columns.

    For a pipeline that one-hot encodes columns in front of a sparsetab estimator, this gives the
    ``groups`` argument of ``explain(X, groups=...)`` and of the displays'
    ``from_estimator``: one group per input column of ``transformer``, holding the output
    columns made from it (all the one-hot columns of a categorical column; the one scaled or
    passed-through column of a numeric one). Explanations then show one value per source column,
    the sum of its columns' mask values.

    The mapping is read from the fitted structure, never by splitting column names: a
    ``ColumnTransformer``'s ``transformers_`` (their selected columns, ``remainder`` included)
    and ``output_indices_``; a ``OneHotEncoder``'s ``categories_``, its dropped categories
    (``drop_idx_``) and its grouped infrequent categories (``infrequent_categories_``, one
    output column each); the steps of a ``Pipeline``, composed in order. Output columns also
    follow their inputs through ``"passthrough"``, one-to-one transformers (the scalers,
    ``OrdinalEncoder``, ``QuantileTransformer``, ``PowerTransformer``, a ``FunctionTransformer``
    with ``feature_names_out="one-to-one"`` ...), ``SimpleImputer`` (with its missing
    indicators), ``MissingIndicator``, ``KBinsDiscretizer`` and ``TargetEncoder``.
    ``handle_unknown`` changes no output column (``"infrequent_if_exist"`` sends unknown
    categories to the infrequent column, which is in its source column's group).

    These groups only change how an explanation is reported. The estimator's
    ``grouped_features`` parameter is a different thing: its columns share one attention
    weight during training. Better still, pass string columns to the estimator as they are,
    without one-hot encoding them: it embeds each categorical column itself, as one attention
    group, and explains it as one column.

    Parameters
    ----------
    transformer : ColumnTransformer, OneHotEncoder, Pipeline or other fitted transformer
        The fitted preprocessing. A Pipeline whose last step is a sparsetab estimator stands
        for the steps in front of it.
    positions : bool, default=False
        Give the output columns as positions in ``transformer.get_feature_names_out()`` rather
        than names; use positions for a model fitted on the transformer's numpy output (whose
        own feature names are then ``x0, x1, ...``).

    Returns
    -------
    dict of str to list of str, or of str to list of int
        ``{input column: output columns}`` for each input column that makes at least one output
        column, in the order of the input columns; input columns are named by
        ``feature_names_in_`` (``x0, x1, ...`` when it was fitted without column names), output
        columns by ``get_feature_names_out()`` (or their positions in it).

    Raises
    ------
    TypeError
        If ``transformer`` is not a scikit-learn transformer, or is a Pipeline of a sparsetab
        estimator alone.
    sklearn.exceptions.NotFittedError
        If ``transformer`` is not fitted.
    ValueError
        If a transformer inside it mixes its input columns or is not known to keep them apart
        (``PCA``, ``PolynomialFeatures``, a ``FunctionTransformer`` without
        ``feature_names_out="one-to-one"`` ...): the message names it; or if the mapping found
        does not have one entry per output column.

    See Also
    --------
    sparsetab.SparseTabNetClassifier.explain : Takes the ``groups``.
    StepSummaryDisplay : Which features each step uses, per group.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn.compose import ColumnTransformer
    >>> from sklearn.preprocessing import OneHotEncoder, StandardScaler
    >>> from sparsetab.inspection import feature_groups_from_transformer
    >>> X = pd.DataFrame({"colour": ["red", "blue", "red"], "size": [1.0, 2.0, 3.0]})
    >>> encode = ColumnTransformer([("onehot", OneHotEncoder(), ["colour"]), ("scale", StandardScaler(), ["size"])])
    >>> feature_groups_from_transformer(encode.fit(X))
    {'colour': ['onehot__colour_blue', 'onehot__colour_red'], 'size': ['scale__size']}
    >>> feature_groups_from_transformer(encode, positions=True)
    {'colour': [0, 1], 'size': [2]}
    """
    if isinstance(transformer, Pipeline) and isinstance(transformer.steps[-1][1], BaseSparseTabNet):
        if len(transformer.steps) == 1:
            raise TypeError("transformer is a Pipeline of a sparsetab estimator alone: there is no preprocessing.")
        transformer = transformer[:-1]
    if isinstance(transformer, str) or not hasattr(transformer, "transform"):
        raise TypeError(
            "transformer must be a fitted scikit-learn transformer (ColumnTransformer, OneHotEncoder, Pipeline ...), "
            f"got {type(transformer).__name__}."
        )
    check_is_fitted(transformer)
    n_inputs = int(transformer.n_features_in_)
    names_in = getattr(transformer, "feature_names_in_", None)
    names_in = [f"x{i}" for i in range(n_inputs)] if names_in is None else [str(name) for name in names_in]
    sources = _sources(transformer, n_inputs)  # first: its error names a transformer that mixes columns
    names_out = [str(name) for name in transformer.get_feature_names_out()]
    if len(sources) != len(names_out):
        raise ValueError(
            f"{_describe(transformer)} has {len(names_out)} output columns, but its fitted structure maps "
            f"{len(sources)}; cannot build the groups."
        )
    groups = {}
    for output, source in enumerate(sources):
        groups.setdefault(int(source), []).append(output if positions else names_out[output])
    return {names_in[source]: groups[source] for source in sorted(groups)}


def _describe(transformer):
    return type(transformer).__name__


def _sources(transformer, n_inputs):
    """Input position (in ``0..n_inputs - 1``) of each output column of a fitted transformer."""
    if transformer is None or (isinstance(transformer, str) and transformer == "passthrough"):
        return np.arange(n_inputs)
    if isinstance(transformer, Pipeline):
        sources = np.arange(n_inputs)
        for _, step in transformer.steps:
            sources = sources[_sources(step, len(sources))]
        return sources
    if isinstance(transformer, ColumnTransformer):
        return _column_transformer_sources(transformer)
    if isinstance(transformer, OneHotEncoder):
        return np.repeat(np.arange(n_inputs), _one_hot_widths(transformer))
    if isinstance(transformer, KBinsDiscretizer):
        if transformer.encode == "ordinal":
            return np.arange(n_inputs)
        return np.repeat(np.arange(n_inputs), np.asarray(transformer.n_bins_, dtype=int))
    if isinstance(transformer, TargetEncoder):
        width = len(transformer.classes_) if transformer.target_type_ == "multiclass" else 1
        return np.repeat(np.arange(n_inputs), width)
    if isinstance(transformer, SimpleImputer):
        kept = np.arange(n_inputs)
        if transformer.strategy != "constant" and not transformer.keep_empty_features:
            statistics = np.asarray(transformer.statistics_, dtype=object)
            kept = kept[[not _is_missing(value) for value in statistics]]
        if transformer.indicator_ is not None:
            kept = np.concatenate([kept, np.asarray(transformer.indicator_.features_, dtype=int)])
        return kept
    if isinstance(transformer, MissingIndicator):
        return np.asarray(transformer.features_, dtype=int)
    if isinstance(transformer, OneToOneFeatureMixin) or (
        isinstance(transformer, FunctionTransformer) and transformer.feature_names_out == "one-to-one"
    ):
        return np.arange(n_inputs)
    raise ValueError(
        f"Cannot map the output columns of {_describe(transformer)} ({transformer!r}) to its input columns: it may "
        "mix them (like PCA or PolynomialFeatures). Accepted inside the transformer: ColumnTransformer, Pipeline, "
        "OneHotEncoder, KBinsDiscretizer, TargetEncoder, SimpleImputer, MissingIndicator, 'passthrough' and "
        "one-to-one transformers (scalers, OrdinalEncoder, FunctionTransformer(feature_names_out='one-to-one') ...)."
    )


def _is_missing(value):
    return value is None or (isinstance(value, float) and np.isnan(value))


def _one_hot_widths(encoder):
    """Output columns of each input column of a fitted OneHotEncoder."""
    widths = np.asarray([len(categories) for categories in encoder.categories_], dtype=int)
    try:  # an AttributeError when infrequent categories are off (no min_frequency, no max_categories)
        infrequent = encoder.infrequent_categories_
    except AttributeError:
        infrequent = [None] * len(widths)
    for column, categories in enumerate(infrequent):
        if categories is not None:  # grouped into one output column
            widths[column] -= len(categories) - 1
    if encoder.drop_idx_ is not None:
        for column, dropped in enumerate(encoder.drop_idx_):
            if dropped is not None:  # the dropped category (or the infrequent group it is in) has no column
                widths[column] -= 1
    return widths


def _column_positions(columns, transformer):
    """Input positions of a fitted ColumnTransformer's column selection."""
    n_inputs = int(transformer.n_features_in_)
    names = getattr(transformer, "feature_names_in_", None)
    names = [] if names is None else [str(name) for name in names]

    def position(key):
        if isinstance(key, str):
            return names.index(key)
        return int(key) % n_inputs

    if isinstance(columns, slice):
        start, stop = columns.start, columns.stop
        if isinstance(start, str) or isinstance(stop, str):  # a label slice includes its end, as pandas' .loc
            start = 0 if start is None else position(start)
            stop = n_inputs if stop is None else position(stop) + 1
            return np.arange(n_inputs)[start : stop : columns.step]
        return np.arange(n_inputs)[columns]
    if isinstance(columns, (str, int, np.integer)):
        return np.asarray([position(columns)], dtype=int)
    columns = np.asarray(columns)
    if columns.dtype == bool:
        return np.flatnonzero(columns)
    return np.asarray([position(key) for key in columns.tolist()], dtype=int)


def _column_transformer_sources(transformer):
    n_outputs = max((selection.stop for selection in transformer.output_indices_.values()), default=0)
    sources = np.full(n_outputs, -1, dtype=int)
    for name, fitted, columns in transformer.transformers_:
        selection = transformer.output_indices_[name]
        if isinstance(fitted, str) and fitted == "drop" or selection.stop == selection.start:
            continue
        positions = _column_positions(columns, transformer)
        inner = _sources(fitted, len(positions))
        if len(inner) != selection.stop - selection.start:
            raise ValueError(
                f"{_describe(fitted)} {name!r} of the ColumnTransformer has {selection.stop - selection.start} "
                f"output columns, but its fitted structure maps {len(inner)}; cannot build the groups."
            )
        sources[selection] = positions[inner]
    if np.any(sources < 0):
        raise ValueError("The ColumnTransformer's output_indices_ leave output columns without a transformer.")
    return sources
