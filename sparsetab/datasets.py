"""Loaders for the real data sets bundled with sparsetab, and generators of synthetic ones.

The files are shipped inside the package (``sparsetab._data``, built from the repository's
``datasets/`` folder), so the loaders work offline, from a wheel and from an editable install.
:func:`make_syn` draws the synthetic data sets Syn1-Syn6, whose relevant features are known
row by row.
"""

import numbers
from importlib import resources

import numpy as np
import pandas as pd
from sklearn.utils import Bunch

__all__ = ["load_adult", "load_california_housing", "data_path", "make_syn"]

# The data sets shipped in the wheel (pyproject.toml lists the same folders). The other folders of
# datasets/ hold the benchmarks' data and are not installed.
_BUNDLED_DATASETS = ("adult", "california_housing")
_ADULT_NUMERIC = ["age", "fnlwgt", "education_num", "capital_gain", "capital_loss", "hours_per_week"]
_ADULT_CATEGORICAL = [
    "workclass",
    "education",
    "marital_status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "native_country",
]


def data_path(name):
    """Path of a bundled data set's folder.

    Parameters
    ----------
    name : str
        Folder name, e.g. ``"adult"``.

    Returns
    -------
    importlib.resources.abc.Traversable
        The folder, holding the data files and ``SOURCE.md``.

    Raises
    ------
    ValueError
        If no bundled data set has that name.
    """
    if name not in _BUNDLED_DATASETS:
        raise ValueError(f"No bundled data set named {name!r}; available: {list(_BUNDLED_DATASETS)}.")
    return resources.files("sparsetab._data") / name


def load_adult(*, return_X_y=False):
    """Load the Adult census income data with its official train/test split.

    Binary classification: does a person earn more than $50K a year (``income``: ``"<=50K"``
    or ``">50K"``)? Six numeric columns (age, fnlwgt, education_num, capital_gain,
    capital_loss, hours_per_week) and eight string columns (workclass, education,
    marital_status, occupation, relationship, race, sex, native_country), in which a missing
    value is the category ``"?"``, as in the UCI files. Read with :func:`pandas.read_csv`
    and returned as is, so the string columns are categorical for the estimators'
    ``categorical_features="auto"``.

    Parameters
    ----------
    return_X_y : bool, default=False
        Return ``(X_train, X_test, y_train, y_test)`` instead of a Bunch.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``frame_train`` (32,561 x 15) and ``frame_test`` (16,281 x 15) DataFrames with the
        target column, ``target_name`` (``"income"``), ``feature_names`` (14 names),
        ``numeric_features``, ``categorical_features`` and ``DESCR`` (the provenance text).
    (X_train, X_test, y_train, y_test) : tuple
        If ``return_X_y``: DataFrames of shape (32,561, 14) and (16,281, 14), and Series of
        string labels.

    References
    ----------
    Becker, B. and Kohavi, R. (1996). Adult. UCI Machine Learning Repository.
    https://doi.org/10.24432/C5XW20 (CC BY 4.0).
    """
    folder = data_path("adult")
    with resources.as_file(folder / "train.csv.gz") as path:
        train = pd.read_csv(path)
    with resources.as_file(folder / "test.csv.gz") as path:
        test = pd.read_csv(path)
    target = "income"
    features = [column for column in train.columns if column != target]
    if return_X_y:
        return train[features], test[features], train[target], test[target]
    return Bunch(
        frame_train=train,
        frame_test=test,
        target_name=target,
        feature_names=features,
        numeric_features=list(_ADULT_NUMERIC),
        categorical_features=list(_ADULT_CATEGORICAL),
        DESCR=(folder / "SOURCE.md").read_text(encoding="utf-8"),
    )


def load_california_housing(*, return_X_y=False):
    """Load the California housing data (1990 census block groups).

    Regression: the median house value of a block group, in units of $100,000
    (``MedHouseVal``, capped at 5.00001 as in the census data), from eight numeric columns:
    ``MedInc`` (median income, $10,000), ``HouseAge`` (median age), ``AveRooms``,
    ``AveBedrms`` and ``AveOccup`` (rooms, bedrooms and occupants per household),
    ``Population``, ``Latitude`` and ``Longitude``. The same 20,640 rows and columns as
    :func:`sklearn.datasets.fetch_california_housing`, bundled so that no download is needed.
    No missing values and no official train/test split.

    Parameters
    ----------
    return_X_y : bool, default=False
        Return ``(X, y)`` instead of a Bunch.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``frame`` (20,640 x 9 DataFrame with the target column), ``data`` (the 8 feature
        columns), ``target`` (Series ``MedHouseVal``), ``target_name``, ``feature_names``
        (8 names) and ``DESCR`` (the provenance text).
    (X, y) : tuple
        If ``return_X_y``: a DataFrame of shape (20,640, 8) and a float Series.

    References
    ----------
    Pace, R. K. and Barry, R. (1997). Sparse spatial autoregressions. Statistics and
    Probability Letters 33, 291-297.
    """
    folder = data_path("california_housing")
    with resources.as_file(folder / "california_housing_sklearn_format.csv.gz") as path:
        frame = pd.read_csv(path)
    target = "MedHouseVal"
    features = [column for column in frame.columns if column != target]
    if return_X_y:
        return frame[features], frame[target]
    return Bunch(
        frame=frame,
        data=frame[features],
        target=frame[target],
        target_name=target,
        feature_names=features,
        DESCR=(folder / "SOURCE.md").read_text(encoding="utf-8"),
    )


_SYN_N_FEATURES = 11
# Zero-based columns each basic logit reads: Syn1 x1, x2; Syn2 x3..x6; Syn3 x7..x10.
_SYN_COLUMNS = {1: [0, 1], 2: [2, 3, 4, 5], 3: [6, 7, 8, 9]}
# Syn4-Syn6 switch on the sign of x11 (column 10): (basic set when x11 < 0, basic set when x11 >= 0).
_SYN_SWITCH = {4: (1, 2), 5: (1, 3), 6: (2, 3)}


def _syn_basic_logit(X, basic):
    """Logit g(x) of a basic set (1, 2 or 3), with P(y=1 | x) = 1 / (1 + exp(g(x)))."""
    if basic == 1:
        return X[:, 0] * X[:, 1]
    if basic == 2:
        return np.sum(X[:, 2:6] ** 2, axis=1) - 4.0
    return -10.0 * np.sin(0.2 * X[:, 6]) + np.abs(X[:, 7]) + X[:, 8] + np.exp(-X[:, 9]) - 2.4


def _syn_logit_and_relevant(X, k):
    """Logit g(x), shape (n,), and the boolean relevant-feature matrix, shape (n, 11), of Syn``k``."""
    relevant = np.zeros(X.shape, dtype=bool)
    if k in _SYN_COLUMNS:
        relevant[:, _SYN_COLUMNS[k]] = True
        return _syn_basic_logit(X, k), relevant
    negative_set, other_set = _SYN_SWITCH[k]
    negative = X[:, 10] < 0
    logit = np.where(negative, _syn_basic_logit(X, negative_set), _syn_basic_logit(X, other_set))
    relevant[np.ix_(negative, _SYN_COLUMNS[negative_set])] = True
    relevant[np.ix_(~negative, _SYN_COLUMNS[other_set])] = True
    relevant[:, 10] = True
    return logit, relevant


def _syn_generator(random_state):
    """A numpy random generator for ``random_state``, never numpy's global one."""
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, (np.random.Generator, np.random.RandomState)):
        return random_state
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, (bool, np.bool_)):
        if random_state < 0:
            raise ValueError(f"random_state must be a non-negative int, got {random_state!r}.")
        return np.random.default_rng(int(random_state))
    raise ValueError(
        "random_state must be None, a non-negative int, a numpy.random.Generator or a "
        f"numpy.random.RandomState, got {random_state!r} of type {type(random_state).__name__}."
    )


def make_syn(k, n_samples=10000, *, random_state=None, return_probability=False):
    """Generate the synthetic data set Syn``k`` (k = 1..6) with its ground-truth relevant features.

    The six instance-wise feature selection benchmarks of TabNet's Table 1, defined by Chen et
    al. (2018) and Yoon et al. (2019). The 11 features ``x1..x11`` (columns 0..10) are i.i.d.
    standard normal, and the label is drawn as ``y ~ Bernoulli(p(x))`` with
    ``p(x) = P(y=1 | x) = 1 / (1 + exp(g(x)))``, where the logit ``g`` is

    - Syn1 (XOR-like): ``g = x1 * x2``; relevant ``x1, x2``.
    - Syn2 (orange skin): ``g = x3**2 + x4**2 + x5**2 + x6**2 - 4``; relevant ``x3..x6``.
    - Syn3 (nonlinear additive): ``g = -10 sin(0.2 x7) + |x8| + x9 + exp(-x10) - 2.4``;
      relevant ``x7..x10``.
    - Syn4: Syn1's ``g`` if ``x11 < 0``, else Syn2's.
    - Syn5: Syn1's ``g`` if ``x11 < 0``, else Syn3's.
    - Syn6: Syn2's ``g`` if ``x11 < 0``, else Syn3's.

    In Syn4-Syn6 the relevant features of a row are those of the branch it falls in plus
    ``x11``, which is relevant for every row. Only the rows' relevant features enter ``p(x)``;
    the other columns are pure noise.

    The Bayes-optimal score is ``p(x)`` itself; at ``n_samples=10000`` its ROC AUC is about
    0.699, 0.899, 0.906, 0.821, 0.822 and 0.903 for Syn1..Syn6 and the share of positive
    labels about 0.500, 0.557, 0.520, 0.528, 0.511 and 0.539 (population values, within 0.001;
    one draw of 10,000 rows spreads around them with a standard deviation of 0.003-0.005).

    Parameters
    ----------
    k : int
        Which data set, 1 to 6 (Syn1 to Syn6).
    n_samples : int, default=10000
        Number of rows, at least 1. TabNet's Table 1 trains on 10,000 rows.
    random_state : None, int, numpy.random.Generator or numpy.random.RandomState, default=None
        Source of randomness. An int seeds ``numpy.random.default_rng``; a Generator or
        RandomState is used as is (and advanced); None draws a fresh, unseeded Generator.
        numpy's global random state is never used. The features are drawn first
        (``standard_normal((n_samples, 11))``), then one uniform per row for the label.
    return_probability : bool, default=False
        Also return ``p(x)``, the true ``P(y=1 | x)`` of each row (the Bayes-optimal score).

    Returns
    -------
    X : ndarray of shape (n_samples, 11), dtype float64
        The features ``x1..x11``.
    y : ndarray of shape (n_samples,), dtype int64
        The labels, 0 or 1.
    relevant : ndarray of shape (n_samples, 11), dtype bool
        ``relevant[i, j]`` is True when feature ``j`` enters row ``i``'s label probability.
    probability : ndarray of shape (n_samples,), dtype float64
        Only if ``return_probability``: ``p(x) = P(y=1 | x)`` for each row, in [0, 1].

    Raises
    ------
    ValueError
        If ``k`` is not an int from 1 to 6, ``n_samples`` is not an int of at least 1 (bools
        are rejected for both), or ``random_state`` is not None, a non-negative int, a
        Generator or a RandomState.

    References
    ----------
    Arik, S. O. and Pfister, T. (2021). TabNet: Attentive interpretable tabular learning.
    AAAI 2021. Section "Experiments", "Instance-wise feature selection", Table 1.

    Chen, J., Song, L., Wainwright, M. J. and Jordan, M. I. (2018). Learning to explain: an
    information-theoretic perspective on model interpretation (L2X). ICML 2018. Synthetic
    data experiments (XOR, orange skin, nonlinear additive, switch feature).

    Yoon, J., Jordon, J. and van der Schaar, M. (2019). INVASE: Instance-wise variable
    selection using neural networks. ICLR 2019. Synthetic data experiments, Syn1-Syn6.

    Examples
    --------
    >>> from sparsetab.datasets import make_syn
    >>> X, y, relevant = make_syn(4, n_samples=5, random_state=0)
    >>> X.shape, y.shape, relevant.shape
    ((5, 11), (5,), (5, 11))
    >>> bool(relevant[:, 10].all())
    True
    """
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Integral) or not 1 <= k <= 6:
        raise ValueError(f"k must be an int from 1 to 6 (Syn1 to Syn6), got {k!r}.")
    if isinstance(n_samples, (bool, np.bool_)) or not isinstance(n_samples, numbers.Integral) or n_samples < 1:
        raise ValueError(f"n_samples must be an int of at least 1, got {n_samples!r}.")
    rng = _syn_generator(random_state)
    X = rng.standard_normal((int(n_samples), _SYN_N_FEATURES))
    logit, relevant = _syn_logit_and_relevant(X, int(k))
    # 1 / (1 + exp(g)) = exp(-log(1 + exp(g))), without overflow for a large logit.
    probability = np.exp(-np.logaddexp(0.0, logit))
    y = (rng.random(int(n_samples)) < probability).astype(np.int64)
    if return_probability:
        return X, y, relevant, probability
    return X, y, relevant
