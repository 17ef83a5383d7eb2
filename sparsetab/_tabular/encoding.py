"""From a user's table (pandas DataFrame or numpy array) to one float32 matrix for the network.

Column typing is decided once, at fit, and replayed at predict:

* numeric columns are first clipped to the [min, max] seen at fit, so that no row, however far
  outside the training range, can push the network's inputs (and so its outputs) to absurd
  values; then either standardised with the training mean and standard deviation
  (``numerical_transform="standard"``: the network's input batch norm then starts from a
  well-conditioned input even for columns such as Adult's ``fnlwgt`` in the hundreds of
  thousands) or mapped through scikit-learn's normal-output
  :class:`~sklearn.preprocessing.QuantileTransformer` fitted on the training rows
  (``"quantile"``); missing values (NaN, None, ``pd.NA``) stay NaN for the network, which fills
  them with a learned value and adds a missing indicator
  (:class:`sparsetab.network.embeddings.InputEmbedding`); infinities are refused;
* categorical columns become integer codes stored as floats: code 0 is reserved for missing
  values and categories not seen at fit, codes 1..K are the K categories seen at fit (sorted
  when they can be compared, else in order of appearance).
"""

import datetime
import decimal
import numbers
from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse
from pandas.api import types as pdt
from sklearn.preprocessing import QuantileTransformer
from sklearn.utils.validation import validate_data

from .._warnings import warn
from .category_values import align_to_categories, category_kind

__all__ = [
    "ColumnSummary",
    "FLAT_TOLERANCE",
    "NUMERICAL_TRANSFORMS",
    "QUANTILE_SUBSAMPLE",
    "TabularEncoding",
    "feature_names",
    "quantile_count",
    "to_frame",
    "validate_frame",
]

NUMERICAL_TRANSFORMS = ("standard", "quantile")
# Rows a quantile fit reads at most (a seeded random subset above): the quantiles' sampling error
# is then far below the spacing of 1,000 quantiles, and the fit's memory stays bounded.
QUANTILE_SUBSAMPLE = 1_000_000
# A numeric column whose present training values span at most this fraction of their magnitude is flat:
# nine significant digits agree, which is float64 rounding noise of computed values or a stuck sensor's
# jitter, not a signal. Standardised, such a spread would become unit variance.
FLAT_TOLERANCE = 1e-9


def quantile_count(n_rows):
    """The ``n_quantiles`` of the quantile transform for ``n_rows`` training rows.

    The rule of Gorishniy et al. (rtdl), ``max(min(n_rows // 30, 1000), 10)``, capped at
    ``n_rows``, which scikit-learn would otherwise cap with a warning.

    Parameters
    ----------
    n_rows : int
        Training rows (with or without missing values).

    Returns
    -------
    int
        Number of quantiles, in [1, 1000].
    """
    return max(1, min(max(min(n_rows // 30, 1000), 10), n_rows))


def to_frame(X):
    """Return ``X`` as a DataFrame without copying a DataFrame's data.

    Parameters
    ----------
    X : pandas.DataFrame or numpy.ndarray of shape (n_samples, n_features)

    Returns
    -------
    pandas.DataFrame
        ``X`` itself if it is a DataFrame; otherwise a DataFrame with integer column labels
        in which object columns holding only numbers are turned numeric.
    """
    if isinstance(X, pd.DataFrame):
        return X
    # copy=False: pandas >= 3 copies a numpy array by default, doubling the memory of a large input.
    return pd.DataFrame(X, copy=False).infer_objects()


def _column_reference(columns, position):
    # A column as messages name it: its name when it is a string; otherwise (an array's column, or an integer
    # label, which scikit-learn does not check at predict, so columns are matched by position) the name that
    # explain() and the displays give it, x<position>, with the label where it is not the position.
    name = columns[position]
    if isinstance(name, str):
        return repr(name)
    label = "" if str(name) == str(position) else f" (label {str(name)!r})"
    return f"'x{position}'{label} at position {position}"


def validate_frame(estimator, X, reset):
    """Check ``X``, record or compare its columns on ``estimator``, and return it as a DataFrame.

    Parameters
    ----------
    estimator : sklearn.base.BaseEstimator
        Records ``n_features_in_`` and ``feature_names_in_`` (``reset=True``) or compares
        ``X``'s columns with them (``reset=False``), through scikit-learn's ``validate_data``.
    X : pandas.DataFrame or array-like of shape (n_samples, n_features)
        The user's table.
    reset : bool
        True at fit, False at predict.

    Returns
    -------
    pandas.DataFrame of shape (n_samples, n_features)
        ``X`` itself when it is a DataFrame (never a deep copy: a shallow one whose Arrow
        dictionary columns are pandas categoricals, when it has such columns), else
        :func:`to_frame` of the array.

    Raises
    ------
    TypeError
        For sparse input (a scipy sparse matrix or a DataFrame with sparse columns).
    ValueError
        For an empty table, columns of the same name, or columns that differ from those seen at fit.
    """
    sparse_frame = isinstance(X, pd.DataFrame) and any(isinstance(dtype, pd.SparseDtype) for dtype in X.dtypes)
    if scipy.sparse.issparse(X) or sparse_frame:
        raise TypeError(
            f"{type(estimator).__name__} does not accept sparse input (got {type(X).__name__}); "
            "convert it with X.toarray() or a dense DataFrame."
        )
    if isinstance(X, pd.DataFrame):
        repeated = X.columns[X.columns.duplicated()].unique()
        if len(repeated):
            counts = ", ".join(f"{name!r} ({int((X.columns == name).sum())} times)" for name in repeated)
            raise ValueError(
                f"X has columns of the same name: {counts}. Each column needs its own name: the model reads "
                "and reports the columns by name."
            )
        validate_data(estimator, X, reset=reset, skip_check_array=True)
        if X.shape[0] == 0:
            raise ValueError(
                f"X is empty: found array with 0 sample(s) (shape={X.shape}) while a minimum of 1 is required."
            )
        if X.shape[1] == 0:
            raise ValueError(f"X has 0 feature(s) (shape={X.shape}) while a minimum of 1 is required.")
        return _with_arrow_dictionaries_as_categories(X)
    X = validate_data(estimator, X, reset=reset, dtype=None, ensure_all_finite=False)
    return to_frame(X)


def feature_names(estimator):
    """The column names of a fitted estimator, for explanations and files.

    Parameters
    ----------
    estimator : sklearn.base.BaseEstimator
        Fitted, with ``n_features_in_`` and, for input with string column names,
        ``feature_names_in_``.

    Returns
    -------
    numpy.ndarray of shape (``n_features_in_``,), object
        ``feature_names_in_``, or ``x0, x1, ...`` for input without column names.
    """
    if hasattr(estimator, "feature_names_in_"):
        return np.asarray(estimator.feature_names_in_, dtype=object)
    return np.asarray([f"x{j}" for j in range(estimator.n_features_in_)], dtype=object)


def _is_arrow_dictionary(dtype):
    # pandas' Arrow backend's categorical columns (dtype_backend="pyarrow" reading a categorical or a Parquet
    # dictionary column); pyarrow is installed whenever one exists.
    if not isinstance(dtype, pd.ArrowDtype):
        return False
    import pyarrow

    return pyarrow.types.is_dictionary(dtype.pyarrow_dtype)


def _with_arrow_dictionaries_as_categories(frame):
    """``frame``, or a shallow copy of it whose Arrow dictionary columns are the equivalent pandas categoricals.

    An Arrow dictionary column is what pandas' ``category`` is with the Arrow backend: the same
    categories (its dictionary, declared values kept), codes and order. pandas' own ``astype("category")``
    fails on one with nulls, so the categorical is built from the Arrow indices and dictionary.
    """
    positions = [j for j, dtype in enumerate(frame.dtypes) if _is_arrow_dictionary(dtype)]
    if not positions:
        return frame
    import pyarrow

    frame = frame.copy(deep=False)
    for j in positions:
        column = frame.iloc[:, j]
        array = pyarrow.array(column)
        if isinstance(array, pyarrow.ChunkedArray):
            array = array.unify_dictionaries().combine_chunks()
        codes = array.indices.fill_null(-1).to_numpy(zero_copy_only=False)
        categories = pd.Index(array.dictionary.to_pylist(), dtype=object)
        categorical = pd.Categorical.from_codes(codes, categories=categories, ordered=array.type.ordered)
        frame.isetitem(j, pd.Series(categorical, index=column.index, name=column.name))
    return frame


# infer_dtype results (skipna=True) of an object column that is numeric under categorical_features="auto":
# decimal.Decimal objects, what read_sql gives for NUMERIC columns, and floats (Python's or numpy's, possibly
# beside ints), what astype(object), a concat with text columns or some database drivers give. As categories
# they would be one per distinct value, each seen about once, and the model would learn nothing that carries
# over to new rows. A column of ints alone stays categorical: integer codes of categories are common.
_NUMERIC_OBJECT_VALUE_TYPES = frozenset({"decimal", "floating", "mixed-integer-float"})


def _is_auto_categorical(series):
    dtype = series.dtype
    if pdt.is_object_dtype(dtype):
        kind = pdt.infer_dtype(series, skipna=True)
        if kind in _NUMERIC_OBJECT_VALUE_TYPES or (kind == "mixed" and _decimals_and_floats(series)):
            return False
    return (
        isinstance(dtype, pd.CategoricalDtype)
        or pdt.is_bool_dtype(dtype)
        or pdt.is_object_dtype(dtype)
        or pdt.is_string_dtype(dtype)
    )


def _decimals_and_floats(series):
    # Decimals beside floats (and ints), what a concat of a read_sql frame with a float one gives: infer_dtype
    # calls the mix "mixed", decided here value by value (bools, which are ints to Python, excluded).
    present = series.dropna()
    return len(present) > 0 and all(
        isinstance(value, (decimal.Decimal, numbers.Real)) and not isinstance(value, (bool, np.bool_))
        for value in present
    )


# pandas.api.types.infer_dtype results (skipna=True) for which every present value is a string, a
# numbers.Number or a bool (Python's or numpy's): a C-level scan that spares the per-value loop below,
# which was about four fifths of predict's time on data with 33 text columns (kdd_census_income).
# Others ("mixed", "datetime", ...) are decided value by value.
_CATEGORY_VALUE_TYPES = frozenset(
    {"string", "bytes", "integer", "floating", "mixed-integer-float", "decimal", "complex", "boolean", "empty"}
)
# numpy's bool is no numbers.Number, but it equals and hashes like Python's bool, so both give one category.
# Points and spans of time held as objects (a column mixing dates with None or text) are categories too; a
# column of datetime64 dtype is refused instead (convert dates to numbers).
_CATEGORY_SCALARS = (
    str,
    bytes,
    numbers.Number,
    np.bool_,
    datetime.date,  # datetime.datetime and pandas.Timestamp included
    datetime.timedelta,  # pandas.Timedelta included
    pd.Period,
)


def _check_category_values(column, reference=None):
    """Refuse category values that are neither strings nor numbers (dicts, lists, arrays...).

    ``reference`` is the column as messages name it (:func:`_column_reference`); None: its label.
    """
    if not pdt.is_object_dtype(column.dtype) or pdt.infer_dtype(column, skipna=True) in _CATEGORY_VALUE_TYPES:
        return
    for value in column:
        scalar_missing = np.ndim(value) == 0 and pd.isna(value)
        if not (value is None or isinstance(value, _CATEGORY_SCALARS) or scalar_missing):
            raise TypeError(
                f"Column {reference or repr(column.name)} holds {value!r} of type {type(value).__name__}, which "
                "cannot be a category: the argument must be a string, a number, a bool, a date or time (datetime, "
                "Timestamp, Timedelta, Period) or a missing value (None / NaN)."
            )


def _warn_numbers_as_text(frame, is_categorical):
    """Warn about text columns whose values all read as numbers: "auto" makes them categorical."""
    for j in np.flatnonzero(is_categorical):
        column = frame.iloc[:, j]
        if isinstance(column.dtype, pd.CategoricalDtype) or pdt.is_bool_dtype(column.dtype):
            continue
        values = column.dropna()
        if len(values) and values.map(lambda value: isinstance(value, str)).all():
            if not _not_numbers(values).any():
                warn(
                    f"Column {_column_reference(frame.columns, j)} holds numbers stored as text (e.g. "
                    f"{values.iloc[0]!r}); with categorical_features='auto' it is categorical, one category per "
                    "distinct value. Convert it with pandas.to_numeric to use it as a number, or list the "
                    "categorical columns in categorical_features to keep it categorical without this warning.",
                    UserWarning,
                )


def _not_numbers(strings):
    """Boolean numpy mask of the values of ``strings`` (a Series of str) that do not read as numbers.

    Through a numpy object array: ``pandas.to_numeric(errors="coerce")`` of an Arrow string Series
    gives NaN as a value, which ``notna()`` counts as present, so every word would read as a number.
    """
    return np.isnan(pd.to_numeric(np.asarray(strings, dtype=object), errors="coerce").astype(np.float64))


def _sorted_categories(values):
    try:
        return sorted(values)
    except TypeError:  # mixed, non-comparable types: keep order of appearance
        return list(values)


@dataclass
class ColumnSummary:
    """What a tabular encoding learns from rows, for one chunk of a table or several merged.

    Built by :meth:`TabularEncoding.summarise`; the summary of a table read in chunks is the
    :meth:`merge` of its chunks' summaries, and :meth:`TabularEncoding.fit_summary` fits the
    encoding from it. Numeric arrays are over the numeric columns, in column order; the dicts
    are keyed by the position of each categorical column.

    Attributes
    ----------
    n_rows : int
        Rows summarised.
    counts : numpy.ndarray of shape (n_numeric,), int
        Present (not missing) values of each numeric column.
    mean, std : numpy.ndarray of shape (n_numeric,), float64
        Mean and population standard deviation of the present values (0 without any).
    minimum, maximum : numpy.ndarray of shape (n_numeric,), float64
        Smallest and largest present value (+inf and -inf without any).
    categories : dict of int -> array-like
        The distinct present values of each categorical column, in order of first appearance.
    declared_categories : dict of int -> list
        The declared categories of each column of pandas ``category`` dtype (in declared order,
        merged in order of first appearance); absent for other columns.
    category_missing : dict of int -> bool
        Whether each categorical column has a missing value.
    category_dtypes : dict of int -> str
        Each categorical column's dtype, as ``str(dtype)``, in the first chunk.
    """

    n_rows: int
    counts: np.ndarray
    mean: np.ndarray
    std: np.ndarray
    minimum: np.ndarray
    maximum: np.ndarray
    categories: dict
    declared_categories: dict
    category_missing: dict
    category_dtypes: dict

    def merge(self, other):
        """The summary of the rows of ``self`` and ``other`` together.

        The moments combine by the pairwise update of Chan, Golub and LeVeque (1979, "Updating
        formulae and a pairwise algorithm for computing sample variances", Eq. 2.1): with
        ``delta`` the difference of the means, the sum of squared deviations of the union is
        ``m2_a + m2_b + delta**2 * n_a * n_b / (n_a + n_b)``.

        Parameters
        ----------
        other : ColumnSummary
            The summary of other rows of the same columns.

        Returns
        -------
        ColumnSummary
            A new summary; neither input is changed.

        Raises
        ------
        ValueError
            If the two summaries have different numeric or categorical columns.
        """
        if self.counts.shape != other.counts.shape or set(self.categories) != set(other.categories):
            raise ValueError(
                "The summaries have different columns: numeric "
                f"{self.counts.shape[0]} and {other.counts.shape[0]}, categorical positions "
                f"{sorted(self.categories)} and {sorted(other.categories)}."
            )
        n_a, n_b = self.counts.astype(np.float64), other.counts.astype(np.float64)
        total = n_a + n_b
        divisor = np.maximum(total, 1.0)
        delta = other.mean - self.mean
        mean = self.mean + delta * n_b / divisor
        squares = self.std**2 * n_a + other.std**2 * n_b + delta**2 * n_a * n_b / divisor
        declared = dict(self.declared_categories)
        for j, categories in other.declared_categories.items():
            listed = declared.get(j, [])
            known = set(listed)
            declared[j] = listed + [c for c in categories if c not in known]
        return ColumnSummary(
            n_rows=self.n_rows + other.n_rows,
            counts=self.counts + other.counts,
            mean=np.where(total > 0, mean, 0.0),
            std=np.sqrt(squares / divisor),
            minimum=np.minimum(self.minimum, other.minimum),
            maximum=np.maximum(self.maximum, other.maximum),
            categories={
                j: pd.unique(
                    np.concatenate([np.asarray(values, dtype=object), np.asarray(other.categories[j], dtype=object)])
                )
                for j, values in self.categories.items()
            },
            declared_categories=declared,
            category_missing={j: self.category_missing[j] or other.category_missing[j] for j in self.category_missing},
            category_dtypes={**other.category_dtypes, **self.category_dtypes},
        )


class TabularEncoding:
    """The tabular encoding: learn the column types of a table at fit and turn tables into float32 matrices.

    Parameters
    ----------
    categorical_features : "auto", None, array-like of str, array-like of int or array-like of bool
        Which columns are categorical. ``"auto"``: columns of pandas ``category``, ``object``,
        string or ``bool`` dtype. ``None``: no column. Otherwise column names (DataFrame input
        only), column indices, or a boolean mask of length ``n_features``.
    numerical_transform : {"standard", "quantile"}, default="standard"
        What numeric columns become, after clipping to the training [min, max]: ``(x - mean) /
        std`` of the training rows, or the normal-output quantile map fitted on them
        (:class:`~sklearn.preprocessing.QuantileTransformer` with ``n_quantiles`` from
        :func:`quantile_count` and ``subsample`` :data:`QUANTILE_SUBSAMPLE`). A column constant
        at fit (or missing everywhere) encodes its present values as 0 under both.
    random_state : int, numpy.random.RandomState or None, default=None
        Seeds the quantile fit's subsample (used only with more than
        :data:`QUANTILE_SUBSAMPLE` rows).

    Attributes
    ----------
    is_categorical_ : numpy.ndarray of shape (n_features,), bool
    categories_ : dict of int -> list
        For each categorical column (by position), the categories seen at fit; category
        ``categories_[j][c]`` has code ``c + 1``.
    center_ : numpy.ndarray of shape (n_features,), float64
        Mean of each numeric column at fit (0 for categorical columns).
    scale_ : numpy.ndarray of shape (n_features,), float64
        Standard deviation of each numeric column at fit (1 for constant and categorical columns).
        Both statistics ignore missing values (0 and 1 for a column missing everywhere).
    has_missing_ : numpy.ndarray of shape (n_features,), bool
        Whether each numeric column had missing values at fit (False for categorical columns).
    clip_ : bool
        Whether :meth:`transform` clips numeric columns to ``[data_min_, data_max_]``: True
        after a fit; False for an encoding restored from a model file or pickle written before
        clipping existed, which keeps its unclipped standardisation until refit.
    data_min_, data_max_ : numpy.ndarray of shape (n_features,), float64, or None
        Smallest and largest value of each numeric column at fit, ignoring missing values (0
        for categorical columns and columns missing everywhere); None when ``clip_`` is False.
    quantile_transformer_ : sklearn.preprocessing.QuantileTransformer or None
        With ``numerical_transform="quantile"``, the quantile map of the numeric columns that
        are not flat at fit (in column order); else None.
    flat_ : numpy.ndarray of shape (n_features,), bool, or None
        Numeric columns whose present values at fit span at most :data:`FLAT_TOLERANCE` times
        their magnitude, ``max - min <= FLAT_TOLERANCE * max(|min|, |max|)`` (every constant
        column; False for categorical columns). Both transforms encode their present values as
        0, so rounding noise is not blown up to unit variance. None for an encoding restored
        from before this rule, which keeps its own (exactly constant columns only).
    category_dtypes_ : dict of int -> str, or None
        For each categorical column (by position), its dtype at fit, as ``str(dtype)``; None for
        an encoding restored from before it was kept. A column whose dtype differs at
        :meth:`transform` has its values mapped to the categories they equal (bool columns take
        0/1 and "True"/"False", integer columns integral floats and their strings; see
        :mod:`sparsetab._tabular.category_values`), and a ``UserWarning`` names the column and both dtypes
        when some present values still match no category.
    constant_ : numpy.ndarray of shape (n_features,), bool, or None
        Columns that carry no information at fit: flat numeric columns without missing values
        (or missing everywhere), and categorical columns with one category and no missing
        value. The network gives them attention 0. None for an encoding restored from before
        this rule.
    """

    def __init__(self, categorical_features="auto", numerical_transform="standard", random_state=None):
        self.categorical_features = categorical_features
        self.numerical_transform = numerical_transform
        self.random_state = random_state

    def __setstate__(self, state):
        # An encoding pickled before numerical_transform existed standardised without clipping; it keeps
        # doing so (clip_ False) until it is fitted again, so an old model predicts exactly as before.
        defaults = {"numerical_transform": "standard", "random_state": None}
        if "is_categorical_" in state:
            defaults.update(clip_=False, data_min_=None, data_max_=None, quantile_transformer_=None)
            defaults.update(flat_=None, constant_=None, category_dtypes_=None)
        self.__dict__.update({**defaults, **state})

    def fit_transform(self, frame):
        """Learn the column types and categories of ``frame`` and encode it.

        Parameters
        ----------
        frame : pandas.DataFrame of shape (n_samples, n_features)

        Returns
        -------
        numpy.ndarray of shape (n_samples, n_features), float32

        Raises
        ------
        ValueError
            If ``categorical_features`` or ``numerical_transform`` is malformed, or a numeric
            column holds strings or infinities.
        TypeError
            If a column has a datetime, timedelta, period, interval or complex dtype.
        """
        self.resolve_columns(frame)
        numeric = self._numeric_block(frame)
        self._fit_summary(self._summarise(frame, numeric), numeric, keep_declared_categories=False)
        return self._assemble(frame, numeric)

    def resolve_columns(self, frame):
        """Decide which columns are categorical, from the dtypes of ``frame`` (the first chunk of a stream).

        The first step of a fit in chunks (:mod:`sparsetab.streaming`): :meth:`summarise` then
        reads every chunk, and :meth:`fit_summary` sets the fitted attributes.

        Parameters
        ----------
        frame : pandas.DataFrame of shape (n_samples, n_features)

        Returns
        -------
        numpy.ndarray of shape (n_features,), bool
            ``is_categorical_``, which is also set.

        Raises
        ------
        ValueError
            If ``categorical_features`` or ``numerical_transform`` is malformed.
        TypeError
            If a column has a datetime, timedelta, period, interval or complex dtype.
        """
        self._check_numerical_transform()
        self.is_categorical_ = self._resolve_categorical(frame)
        return self.is_categorical_

    def summarise(self, frame):
        """The statistics of ``frame`` that the encoding learns, for columns typed by :meth:`resolve_columns`.

        Parameters
        ----------
        frame : pandas.DataFrame of shape (n_samples, n_features)

        Returns
        -------
        ColumnSummary
            Merge the summaries of a table's chunks with :meth:`ColumnSummary.merge`.

        Raises
        ------
        ValueError
            If a numeric column holds strings or infinities.
        TypeError
            If a categorical column holds values that cannot be categories.
        """
        return self._summarise(frame, self._numeric_block(frame))

    def fit_summary(self, summary, sample):
        """Set the fitted attributes from the summary of a whole table and a sample of its rows.

        Every statistic is the whole table's (``summary``: categories, missing values, mean,
        standard deviation, minimum and maximum), except the quantile map of
        ``numerical_transform="quantile"``, which is fitted on ``sample``. The categories of a
        column of pandas ``category`` dtype are all its declared categories (in declared order,
        then any other value seen), observed or not, so that a category absent from the data
        read so far keeps its code.

        Parameters
        ----------
        summary : ColumnSummary
            The merged :meth:`summarise` of every chunk of the table.
        sample : pandas.DataFrame of shape (n_sample_rows, n_features)
            Rows of the table (for example a uniform random sample), at least one.

        Returns
        -------
        TabularEncoding
            ``self``, fitted.

        Raises
        ------
        ValueError
            If ``summary`` covers no row, or a numeric column of ``sample`` holds strings or
            infinities.
        """
        if summary.n_rows == 0:
            raise ValueError("The summary covers no row; a tabular encoding needs at least one.")
        self._fit_summary(summary, self._numeric_block(sample), keep_declared_categories=True)
        return self

    def _check_numerical_transform(self):
        if not (isinstance(self.numerical_transform, str) and self.numerical_transform in NUMERICAL_TRANSFORMS):
            raise ValueError(
                f"numerical_transform must be one of {NUMERICAL_TRANSFORMS}, got {self.numerical_transform!r}."
            )

    def _summarise(self, frame, numeric):
        categories, declared, missing, dtypes = {}, {}, {}, {}
        for j in np.flatnonzero(self.is_categorical_):
            column = frame.iloc[:, j]
            if isinstance(column.dtype, pd.CategoricalDtype):
                declared[j] = list(column.cat.categories)
            else:
                _check_category_values(column, _column_reference(frame.columns, j))
            categories[j] = pd.unique(column.dropna())
            missing[j] = bool(column.isna().any())
            dtypes[j] = str(column.dtype)
        n_rows = frame.shape[0]
        observed = ~np.isnan(numeric)
        counts = observed.sum(axis=0)
        # NaN-aware mean and standard deviation without numpy's all-NaN warnings, computed on
        # the column divided by its largest magnitude, so squares of huge values cannot overflow.
        peak = np.where(observed, np.abs(numeric), 0.0).max(axis=0, initial=0.0)
        peak = np.where(peak > 0, peak, 1.0)
        scaled = numeric / peak
        scaled_mean = np.where(observed, scaled, 0.0).sum(axis=0) / np.maximum(counts, 1)
        variance = np.where(observed, (scaled - scaled_mean) ** 2, 0.0).sum(axis=0) / np.maximum(counts, 1)
        return ColumnSummary(
            n_rows=n_rows,
            counts=counts,
            mean=scaled_mean * peak,
            std=np.sqrt(variance) * peak,
            minimum=np.where(observed, numeric, np.inf).min(axis=0, initial=np.inf),
            maximum=np.where(observed, numeric, -np.inf).max(axis=0, initial=-np.inf),
            categories=categories,
            declared_categories=declared,
            category_missing=missing,
            category_dtypes=dtypes,
        )

    def _fit_summary(self, summary, numeric_sample, keep_declared_categories):
        n_features = len(self.is_categorical_)
        self.categories_ = {}
        for j, values in summary.categories.items():
            declared = summary.declared_categories.get(j)
            if declared is None:
                self.categories_[j] = _sorted_categories(values)
            elif keep_declared_categories:
                listed = set(declared)
                self.categories_[j] = list(declared) + _sorted_categories([v for v in values if v not in listed])
            else:
                observed = set(values)
                self.categories_[j] = [c for c in declared if c in observed]
        self._category_index = {j: pd.Index(categories, dtype=object) for j, categories in self.categories_.items()}
        self.category_dtypes_ = dict(summary.category_dtypes)
        self.center_ = np.zeros(n_features)
        self.scale_ = np.ones(n_features)
        self.has_missing_ = np.zeros(n_features, dtype=bool)
        self.data_min_ = np.zeros(n_features)
        self.data_max_ = np.zeros(n_features)
        self.flat_ = np.zeros(n_features, dtype=bool)
        self.constant_ = np.zeros(n_features, dtype=bool)
        if summary.counts.size:
            counts, low, high = summary.counts, summary.minimum, summary.maximum
            self.center_[~self.is_categorical_] = summary.mean
            self.scale_[~self.is_categorical_] = np.where(summary.std > 0, summary.std, 1.0)
            self.has_missing_[~self.is_categorical_] = counts < summary.n_rows
            present = counts > 0
            self.data_min_[~self.is_categorical_] = np.where(present, low, 0.0)
            self.data_max_[~self.is_categorical_] = np.where(present, high, 0.0)
            magnitude = np.maximum(np.abs(low), np.abs(high))
            flat = ~present | (high - low <= FLAT_TOLERANCE * np.where(present, magnitude, 0.0))
            self.flat_[~self.is_categorical_] = flat
            self.constant_[~self.is_categorical_] = flat & ((counts == summary.n_rows) | ~present)
        for j, values in summary.categories.items():
            # Information is what the rows show: declared categories that never occur do not make a column vary.
            self.constant_[j] = len(values) <= 1 and not summary.category_missing[j]
        self.clip_ = True
        self.quantile_transformer_ = None
        varying = self._varying()
        if self.numerical_transform == "quantile" and varying.any():
            # The rows are within [data_min_, data_max_]: they need no clipping before the fit.
            self.quantile_transformer_ = QuantileTransformer(
                n_quantiles=quantile_count(numeric_sample.shape[0]),
                output_distribution="normal",
                subsample=QUANTILE_SUBSAMPLE,
                random_state=self.random_state,
            ).fit(numeric_sample[:, varying])

    def transform(self, frame):
        """Encode ``frame`` with the types and categories learned at fit.

        Parameters
        ----------
        frame : pandas.DataFrame of shape (n_samples, n_features)

        Returns
        -------
        numpy.ndarray of shape (n_samples, n_features), float32
            Missing and unseen categories get code 0; missing numeric values stay NaN.

        Raises
        ------
        ValueError
            If a numeric column holds strings or infinities.
        """
        return self._assemble(frame, self._numeric_block(frame))

    def transform_with_range_report(self, frame):
        """:meth:`transform`, and which rows and numeric columns lie far outside the training range.

        A value is far outside when it lies beyond ``[data_min_ - r, data_max_ + r]``, with ``r =
        data_max_ - data_min_`` the column's range at fit (so any other value of a column constant at
        fit). The encoding clips such values to the range, so the network never sees them; the
        report lets the caller warn that the prediction is an extrapolation. A column missing on
        every row at fit has no range and is never reported: it has no effect on the outputs.

        Parameters
        ----------
        frame : pandas.DataFrame of shape (n_samples, n_features)

        Returns
        -------
        encoded : numpy.ndarray of shape (n_samples, n_features), float32
            As :meth:`transform` returns it.
        outside_rows : numpy.ndarray of shape (n_samples,), bool
            Rows with at least one value far outside. All False for an encoding restored from
            before clipping existed (``clip_`` False), which has no range.
        outside_columns : numpy.ndarray of shape (n_features,), bool
            Columns with at least one value far outside.

        Raises
        ------
        ValueError
            If a numeric column holds strings or infinities.
        """
        numeric = self._numeric_block(frame)
        outside_columns = np.zeros(frame.shape[1], dtype=bool)
        if not self.clip_:
            return self._assemble(frame, numeric), np.zeros(frame.shape[0], dtype=bool), outside_columns
        numeric_columns = ~self.is_categorical_
        low, high = self.data_min_[numeric_columns], self.data_max_[numeric_columns]
        spread = high - low
        with np.errstate(invalid="ignore"):  # NaN compares False: a missing value is never outside
            outside = (numeric < low - spread) | (numeric > high + spread)
        if self.constant_ is not None:  # None: restored from before constant columns were kept
            # Constant and missing somewhere means missing everywhere: no value was seen at fit, so none is outside.
            outside &= ~(self.constant_ & self.has_missing_)[numeric_columns]
        outside_columns[numeric_columns] = outside.any(axis=0)
        return self._assemble(frame, numeric), outside.any(axis=1), outside_columns

    def unseen_share(self, frame):
        """Share of each categorical column's present values that are not categories seen at fit.

        Parameters
        ----------
        frame : pandas.DataFrame of shape (n_samples, n_features)

        Returns
        -------
        dict of int -> float
            Column position -> share in [0, 1] (0 for a column with no present value).
        """
        shares = {}
        for j, index in self._category_index.items():
            column = frame.iloc[:, j]
            values = align_to_categories(column, category_kind(self.categories_[j]))
            present = values.notna().to_numpy()
            unseen = (index.get_indexer(values) < 0) & present
            shares[j] = float(unseen.sum() / present.sum()) if present.any() else 0.0
        return shares

    def get_state(self):
        """The fitted state, as plain values (for model files).

        Returns
        -------
        dict
            The parameters ``categorical_features``, ``numerical_transform`` and
            ``random_state``, the fitted attributes ``is_categorical_``, ``categories_``,
            ``center_``, ``scale_``, ``has_missing_``, ``clip_``, ``data_min_``,
            ``data_max_``, ``flat_``, ``constant_`` and ``category_dtypes_``, and the quantile
            map's ``quantiles_`` (numpy.ndarray of shape (n_quantiles, n_varying)) and
            ``references_`` (of shape (n_quantiles,)), None without one.
        """
        names = (
            "categorical_features",
            "numerical_transform",
            "random_state",
            "is_categorical_",
            "categories_",
            "center_",
            "scale_",
            "has_missing_",
            "clip_",
            "data_min_",
            "data_max_",
            "flat_",
            "constant_",
            "category_dtypes_",
        )
        state = {name: getattr(self, name) for name in names}
        quantiles = self.quantile_transformer_
        state["quantiles_"] = None if quantiles is None else quantiles.quantiles_
        state["references_"] = None if quantiles is None else quantiles.references_
        return state

    @classmethod
    def from_state(cls, state):
        """Rebuild a fitted tabular encoding from :meth:`get_state`.

        A state written before ``numerical_transform`` existed (a model file of an earlier
        sparsetab) lacks its keys: the encoding then standardises without clipping, as it did.

        Parameters
        ----------
        state : dict
            As returned by :meth:`get_state`.

        Returns
        -------
        TabularEncoding
        """
        encoding = cls(state["categorical_features"], state.get("numerical_transform", "standard"))
        encoding.random_state = state.get("random_state")
        for name in ("is_categorical_", "categories_", "center_", "scale_", "has_missing_"):
            setattr(encoding, name, state[name])
        encoding.clip_ = bool(state.get("clip_", False))
        encoding.data_min_ = state.get("data_min_")
        encoding.data_max_ = state.get("data_max_")
        encoding.flat_ = state.get("flat_")
        encoding.constant_ = state.get("constant_")
        encoding.category_dtypes_ = state.get("category_dtypes_")
        encoding.quantile_transformer_ = None
        if state.get("quantiles_") is not None:
            # The fitted attributes of scikit-learn's QuantileTransformer are all its transform reads.
            quantiles, references = np.asarray(state["quantiles_"]), np.asarray(state["references_"])
            transformer = QuantileTransformer(
                n_quantiles=len(references),
                output_distribution="normal",
                subsample=QUANTILE_SUBSAMPLE,
                random_state=encoding.random_state,
            )
            transformer.quantiles_, transformer.references_ = quantiles, references
            transformer.n_quantiles_, transformer.n_features_in_ = len(references), quantiles.shape[1]
            encoding.quantile_transformer_ = transformer
        encoding._category_index = {
            j: pd.Index(categories, dtype=object) for j, categories in encoding.categories_.items()
        }
        return encoding

    @property
    def cardinalities(self):
        """list of int or None: embedding rows per column (K + 1), None for numeric columns."""
        return [
            len(self.categories_[j]) + 1 if self.is_categorical_[j] else None for j in range(len(self.is_categorical_))
        ]

    def split(self, frame):
        """The numeric columns as they are and the category codes, each in column order.

        Parameters
        ----------
        frame : pandas.DataFrame of shape (n_samples, n_features)

        Returns
        -------
        numeric : numpy.ndarray of shape (n_samples, n_numeric), float64
            The numeric columns, not standardised; missing values are NaN.
        codes : numpy.ndarray of shape (n_samples, n_categorical), int64
            Code of each categorical value: 0 for missing or unseen, ``c + 1`` for
            ``categories_[j][c]``.

        Raises
        ------
        ValueError
            If a numeric column holds strings or infinities.
        """
        return self._numeric_block(frame), self._codes(frame)

    def _codes(self, frame):
        codes = np.empty((frame.shape[0], len(self._category_index)), dtype=np.int64)
        fit_dtypes = self.category_dtypes_  # None: restored from before dtypes were kept
        for position, (j, index) in enumerate(self._category_index.items()):
            column = frame.iloc[:, j]
            kind = category_kind(self.categories_[j])
            if isinstance(column.dtype, pd.CategoricalDtype):
                found, present = _categorical_matches(column, index, kind)
            else:
                _check_category_values(column, _column_reference(frame.columns, j))
                # Values equal to a category as the user sees them (0/1 or "True" for a bool, 2.0 or "2" for an
                # integer) become that category.
                values = align_to_categories(column, kind)
                found, present = index.get_indexer(values), values.notna().to_numpy()
            codes[:, position] = found + 1  # -1 (missing or unseen) becomes the reserved 0
            if fit_dtypes is not None and str(column.dtype) != fit_dtypes[j]:
                unseen = int(((found < 0) & present).sum())
                if unseen:
                    warn(
                        f"Column {_column_reference(frame.columns, j)} had dtype {fit_dtypes[j]} at fit and has dtype "
                        f"{column.dtype} now: {unseen} of its values match no category seen at fit and are read "
                        f"as unseen. Convert the column back to {fit_dtypes[j]}.",
                        UserWarning,
                    )
        return codes

    def _assemble(self, frame, numeric):
        out = np.empty(frame.shape, dtype=np.float32)
        out[:, ~self.is_categorical_] = self._transform_numeric(numeric)
        out[:, self.is_categorical_] = self._codes(frame)
        return out

    def _varying(self):
        """Which numeric columns (in column order) are not flat at fit (``flat_``)."""
        numeric_columns = ~self.is_categorical_
        if self.flat_ is None:  # restored from before the flat rule: exactly constant columns only
            return self.data_min_[numeric_columns] < self.data_max_[numeric_columns]
        return ~self.flat_[numeric_columns]

    def _transform_numeric(self, numeric):
        """The network's values of the numeric block (float64, NaN where missing); never writes to ``numeric``."""
        numeric_columns = ~self.is_categorical_
        center, scale = self.center_[numeric_columns], self.scale_[numeric_columns]
        if not self.clip_:  # restored from before clipping existed: its standardisation, unchanged
            return (numeric - center) / scale
        # np.clip keeps NaN, and is the identity on the training rows, so a fit is unchanged by it.
        clipped = np.clip(numeric, self.data_min_[numeric_columns], self.data_max_[numeric_columns])
        if self.numerical_transform == "standard":
            standardised = (clipped - center) / scale
            if self.flat_ is None:
                return standardised
            return np.where(self.flat_[numeric_columns] & ~np.isnan(clipped), 0.0, standardised)
        # Flat columns (and columns missing everywhere) carry no information: present values are 0.
        result = np.where(np.isnan(clipped), np.nan, 0.0)
        if self.quantile_transformer_ is not None:
            varying = self._varying()
            result[:, varying] = self.quantile_transformer_.transform(clipped[:, varying])
        return result

    def check(self, frame):
        """Raise for any value :meth:`transform` would refuse, one column at a time.

        Lets a caller encode a large table in slices while the error still counts every row,
        with the memory of one column at a time.

        Parameters
        ----------
        frame : pandas.DataFrame of shape (n_samples, n_features)

        Raises
        ------
        ValueError
            If a numeric column holds strings or infinities (counted over all rows).
        TypeError
            If a categorical column holds values that cannot be categories.
        """
        infinite = {j: int(np.isinf(values).sum()) for j, values in self._numeric_columns(frame)}
        self._raise_for_infinities(frame, infinite)
        for j in self._category_index:
            column = frame.iloc[:, j]
            if not isinstance(column.dtype, pd.CategoricalDtype):
                _check_category_values(column, _column_reference(frame.columns, j))

    def _numeric_block(self, frame):
        positions = np.flatnonzero(~self.is_categorical_)
        if all(_plain_number_dtype(dtype) for dtype in frame.dtypes.iloc[positions]):
            # One copy of all numeric columns: numpy numbers need neither pandas.to_numeric nor a search for
            # strings, and the column-by-column path was about a sixth of predict's time on 20 such columns.
            numeric = frame.iloc[:, positions].to_numpy(dtype=np.float64)
            infinite = np.isinf(numeric).sum(axis=0)
            self._raise_for_infinities(frame, {j: int(count) for j, count in zip(positions, infinite, strict=True)})
            return numeric
        columns = list(self._numeric_columns(frame))
        numeric = np.column_stack([values for _, values in columns]) if columns else np.empty((frame.shape[0], 0))
        self._raise_for_infinities(frame, {j: int(np.isinf(values).sum()) for j, values in columns})
        return numeric

    def _numeric_columns(self, frame):
        """Yield ``(position, float64 values)`` of each numeric column; missing values become NaN."""
        names = frame.columns
        for j in np.flatnonzero(~self.is_categorical_):
            column, reference = frame.iloc[:, j], _column_reference(names, j)
            advice = _unsupported_dtype_advice(column.dtype)
            if advice is not None:
                # pandas.to_numeric would read dates and durations as nanosecond counts, and numpy would drop
                # the imaginary part of complex numbers: refuse them here as fit does.
                raise TypeError(
                    f"Column {reference} was numeric at fit and has dtype {column.dtype} now, which is not "
                    f"supported. Accepted: numbers or bools, as at fit. {advice}"
                )
            if _plain_number_dtype(column.dtype):  # nothing for pandas.to_numeric to convert or refuse
                yield j, column.to_numpy(dtype=np.float64)
                continue
            if pdt.is_object_dtype(column.dtype) or pdt.is_string_dtype(column.dtype):
                strings = column[column.map(lambda value: isinstance(value, (str, bytes)))]
                if len(strings):
                    words = strings[_not_numbers(strings)]
                    if len(words) == column.notna().sum():
                        # Text alone: most often a categorical column left out of a categorical_features list,
                        # sometimes a column of missing-value markers only ("?" on every row of a small batch).
                        raise ValueError(
                            f"Column {reference} (dtype {column.dtype}) is read as numeric (numeric at fit, or not "
                            f"in categorical_features={self.categorical_features!r}) but holds text only (e.g. "
                            f"{words.iloc[0]!r}). At fit, a categorical column must be in a categorical_features "
                            "list (a list replaces the automatic detection); if the text marks missing values, "
                            f"read the file with pandas.read_csv(..., na_values=[{words.iloc[0]!r}])."
                        )
                    # A file's missing-value marker ("?", "NA ", "-") turns a whole numeric column into text:
                    # name the values that are not numbers, which the user must map to missing.
                    detail = (
                        f", {len(words)} of them not numbers (e.g. {words.iloc[0]!r}; if that marks a missing value, "
                        f"read the file with pandas.read_csv(..., na_values=[{words.iloc[0]!r}]))"
                        if len(words)
                        else f", e.g. {strings.iloc[0]!r}"
                    )
                    raise ValueError(
                        f"Column {reference} (dtype {column.dtype}) is read as numeric (numeric at fit, or not in "
                        f"categorical_features={self.categorical_features!r}) but holds {len(strings)} string "
                        f"value(s){detail}. Numbers stored as text are not converted silently: convert the column "
                        "with pandas.to_numeric. A categorical column must be in categorical_features (a list "
                        "replaces the automatic detection)."
                    )
            if _is_arrow_decimal(column.dtype):
                # pandas.to_numeric drops the nulls of an Arrow decimal column and then fails on the length;
                # Arrow's own cast to float64 keeps them (as NaN below).
                yield j, column.astype("float64[pyarrow]").to_numpy(dtype=np.float64, na_value=np.nan)
                continue
            try:
                values = pd.to_numeric(column)
            except (ValueError, TypeError) as error:
                example = column.dropna().iloc[0]
                advice = _unsupported_value_advice(example)
                if advice is not None:  # dates and the like in an object column, refused as their dtypes are
                    raise TypeError(
                        f"Column {reference} was numeric at fit and holds {type(example).__name__} values now "
                        f"(e.g. {example!r}), which are not supported. {advice}"
                    ) from error
                raise ValueError(
                    f"Column {reference} (dtype {column.dtype}) is read as numeric (numeric at fit, or not in "
                    f"categorical_features={self.categorical_features!r}) but holds values that are not numbers, "
                    f"e.g. {example!r} of type {type(example).__name__}. A categorical column must be in "
                    "categorical_features (a list replaces the automatic detection)."
                ) from error
            # Complex numbers in an object column: numpy would drop the imaginary part.
            if pdt.is_complex_dtype(values.dtype):
                raise TypeError(
                    f"Column {reference} was numeric at fit and holds complex numbers now (e.g. "
                    f"{complex(values.dropna().iloc[0])!r}), which are not supported. "
                    f"{_COMPLEX_ADVICE}"
                )
            yield j, values.to_numpy(dtype=np.float64, na_value=np.nan)

    @staticmethod
    def _raise_for_infinities(frame, counts):
        where = ", ".join(f"{_column_reference(frame.columns, j)}: {count}" for j, count in counts.items() if count)
        if where:
            raise ValueError(
                f"Numeric input contains infinite values (column: count) {where}. Infinities are not accepted; "
                "replace them with finite values, or with NaN to treat them as missing (missing values are "
                "supported)."
            )

    def _resolve_categorical(self, frame):
        n_features = frame.shape[1]
        names = [str(name) for name in frame.columns]
        for position, (_, column) in enumerate(frame.items()):
            advice = _unsupported_dtype_advice(column.dtype)
            if advice is not None:
                raise TypeError(
                    f"Column {_column_reference(frame.columns, position)} has dtype {column.dtype}, which is not "
                    f"supported. Accepted: numeric, bool, string, object or category columns. {advice}"
                )
        spec = self.categorical_features
        if isinstance(spec, str) and spec == "auto":
            mask = np.array([_is_auto_categorical(column) for _, column in frame.items()], dtype=bool)
            _warn_numbers_as_text(frame, mask)
            return mask
        mask = np.zeros(n_features, dtype=bool)
        if spec is None:
            return mask
        values = np.asarray(spec)
        if values.ndim != 1:
            raise ValueError(f"categorical_features must be 1-D, got an array of shape {values.shape}.")
        if values.size == 0:
            return mask
        if values.dtype.kind == "b":
            if values.size != n_features:
                raise ValueError(
                    f"categorical_features as a boolean mask must have length n_features={n_features}, "
                    f"got {values.size}."
                )
            return values.copy()
        if values.dtype.kind in "iu":
            out_of_range = [int(v) for v in values if not -n_features <= v < n_features]
            if out_of_range:
                raise ValueError(f"categorical_features indices must be in [0, {n_features}), got {out_of_range}.")
            mask[values] = True
            return mask
        if values.dtype.kind in "UO":
            if not isinstance(frame.columns, pd.Index) or not all(isinstance(c, str) for c in frame.columns):
                raise ValueError(
                    "categorical_features given as column names needs a DataFrame with string column "
                    f"names; got {list(spec)!r}. Use column indices or a boolean mask for numpy input."
                )
            unknown = [str(v) for v in values if str(v) not in names]
            if unknown:
                raise ValueError(f"categorical_features names {unknown} are not columns of X; columns are {names}.")
            mask[[names.index(str(v)) for v in values]] = True
            return mask
        raise ValueError(
            "categorical_features must be 'auto', None, or an array-like of column names, indices "
            f"or booleans; got {spec!r}."
        )


def _categorical_matches(column, index, kind):
    """Positions in ``index`` of a pandas Categorical column's values (-1: missing or unseen), and which are present.

    A categorical column is re-coded by its values, not by its codes: each of its categories is
    matched to the categories seen at fit once (as :func:`align_to_categories` maps a value), and
    the rows take their category's match through the column's codes, one array lookup instead of
    one hash lookup per row.
    """
    categories = pd.Series(column.cat.categories.astype(object), dtype=object)
    matches = index.get_indexer(align_to_categories(categories, kind))
    codes = column.cat.codes.to_numpy()
    # A missing value's code is -1: it reads the -1 appended after the categories' matches.
    return np.append(matches, -1)[codes], codes >= 0


def _is_arrow_decimal(dtype):
    # decimal128 / decimal256 columns of pandas' Arrow backend (pyarrow is installed whenever one exists).
    if not isinstance(dtype, pd.ArrowDtype):
        return False
    import pyarrow

    return pyarrow.types.is_decimal(dtype.pyarrow_dtype)


# What to do with a column or value of each unsupported kind (_unsupported_dtype_advice, _unsupported_value_advice).
_COMPLEX_ADVICE = "Split it into two real columns first (its real and imaginary parts, or modulus and angle)."
_INTERVAL_ADVICE = "Convert the intervals to numbers (their left and right ends) or to strings first."
_DATE_ADVICE = "Convert dates to numbers (e.g. timestamps or day of week) or to strings first."


def _unsupported_dtype_advice(dtype):
    """What to do with a column of ``dtype`` (a numpy or pandas dtype), or None where the dtype is accepted.

    Dates, times, durations and periods (numpy, pandas or Arrow), intervals and complex numbers are refused:
    pandas.to_numeric would read the first as nanosecond counts, and numpy drops an imaginary part.
    """
    if pdt.is_complex_dtype(dtype):
        return _COMPLEX_ADVICE
    if isinstance(dtype, pd.IntervalDtype):
        return _INTERVAL_ADVICE
    temporal = (
        pdt.is_datetime64_any_dtype(dtype) or pdt.is_timedelta64_dtype(dtype) or isinstance(dtype, pd.PeriodDtype)
    )
    if isinstance(dtype, pd.ArrowDtype):
        import pyarrow

        temporal = temporal or pyarrow.types.is_temporal(dtype.pyarrow_dtype)
    return _DATE_ADVICE if temporal else None


def _unsupported_value_advice(value):
    """What to do with a value of an unsupported type (a date, a duration, an interval) in an object column, or None."""
    if isinstance(value, (datetime.date, datetime.time, datetime.timedelta, np.datetime64, np.timedelta64, pd.Period)):
        return _DATE_ADVICE
    if isinstance(value, pd.Interval):
        return _INTERVAL_ADVICE
    return None


def _plain_number_dtype(dtype):
    # numpy bool, integer and float columns: exactly representable as float64 values (up to rounding of large
    # integers, as pandas.to_numeric(...).to_numpy(float64) does) and never strings.
    return isinstance(dtype, np.dtype) and dtype.kind in "biuf"


# Pickles of fitted models written before the rename refer to the class by its old name.
TabularEncoder = TabularEncoding
