"""Loaders for the real data sets bundled with sparsetab, and generators of synthetic ones.

The files are shipped inside the package (``sparsetab._data``, built from the repository's
``datasets/`` folder), so the loaders work offline, from a wheel and from an editable install.
:func:`make_syn` draws the synthetic data sets Syn1-Syn6, whose relevant features are known
row by row.
"""

import numbers
import warnings
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.utils import Bunch

__all__ = [
    "load_adult",
    "load_bank_marketing",
    "load_bike_sharing",
    "load_california_housing",
    "load_credit_default",
    "load_diamonds",
    "load_forest_cover",
    "load_higgs_sample",
    "load_kdd_census_income",
    "load_letter_recognition",
    "load_mushroom",
    "data_path",
    "make_syn",
]

# The data sets shipped in the wheel (pyproject.toml lists the same folders). The other folders of
# datasets/ are read from the repository checkout (an editable install maps sparsetab._data to it).
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
# Integer codes of categories in credit_default (SOURCE.md), read as strings so that they are categorical.
_CREDIT_DEFAULT_CODED = ("SEX", "EDUCATION", "MARRIAGE")


class _Table:
    """How one data set is stored: its files, target, non-feature columns and subsets.

    ``files`` maps each stored part ("train", "test" or "all") to its file name; ``rows`` maps a
    subset to a row slice of the single "all" file where a split is a row range (letter's UCI
    convention); ``default_subset`` is the loader's default ``subset``.
    """

    def __init__(self, folder, files, target, *, not_features=(), rows=None, read_options=None, default_subset):
        self.folder, self.files, self.target = folder, files, target
        self.not_features, self.rows = tuple(not_features), rows or {}
        self.read_options, self.default_subset = read_options or {}, default_subset

    @property
    def subsets(self):
        if "train" in self.files or self.rows:
            return ("train", "test", "all")
        return ("all",)


_TABLES = {
    "adult": _Table("adult", {"train": "train.csv.gz", "test": "test.csv.gz"}, "income", default_subset="train"),
    "kdd_census_income": _Table(
        "kdd_census_income",
        {"train": "train.csv.gz", "test": "test.csv.gz"},
        "income",
        not_features=("instance_weight",),
        read_options=dict(keep_default_na=False),
        default_subset="train",
    ),
    "letter_recognition": _Table(
        "letter_recognition",
        {"all": "letter_recognition.csv.gz"},
        "lettr",
        rows={"train": slice(0, 16000), "test": slice(16000, None)},
        default_subset="train",
    ),
    "forest_cover_kaggle": _Table(
        "forest_cover_kaggle", {"all": "train.csv.gz"}, "Cover_Type", not_features=("Id",), default_subset="all"
    ),
    "higgs_sample": _Table("higgs_sample", {"all": "higgs_sample.csv.gz"}, "label", default_subset="all"),
    "bank_marketing": _Table("bank_marketing", {"all": "bank_full.csv.gz"}, "y", default_subset="all"),
    "california_housing": _Table(
        "california_housing", {"all": "california_housing_sklearn_format.csv.gz"}, "MedHouseVal", default_subset="all"
    ),
    "diamonds": _Table("diamonds", {"all": "diamonds.csv.gz"}, "price", default_subset="all"),
    "mushroom": _Table("mushroom", {"all": "agaricus_lepiota.csv.gz"}, "class", default_subset="all"),
    "credit_default": _Table(
        "credit_default",
        {"all": "default_of_credit_card_clients.csv.gz"},
        "default_payment_next_month",
        not_features=("ID",),
        read_options=dict(dtype={column: str for column in _CREDIT_DEFAULT_CODED}),
        default_subset="all",
    ),
    "bike_sharing": _Table(
        "bike_sharing",
        {"all": "bike_sharing_hourly.csv.gz"},
        "count",
        not_features=("date", "casual", "registered"),
        default_subset="all",
    ),
}


def _repository_folder(name):
    """``datasets/<name>`` of a source checkout beside the imported package, or in the working directory."""
    checkout = Path(__file__).resolve().parents[1] / "datasets" / name
    return checkout if checkout.is_dir() else Path.cwd() / "datasets" / name


def data_path(name):
    """Path of a data set's folder: inside the installed package, else in the repository checkout.

    Parameters
    ----------
    name : str
        Folder name, e.g. ``"adult"``: one of ``"adult"``, ``"bank_marketing"``,
        ``"bike_sharing"``, ``"california_housing"``, ``"credit_default"``, ``"diamonds"``,
        ``"forest_cover_kaggle"``, ``"higgs_sample"``, ``"kdd_census_income"``,
        ``"letter_recognition"``, ``"mushroom"``.

    Returns
    -------
    importlib.resources.abc.Traversable or pathlib.Path
        The folder, holding the data files and ``SOURCE.md``. adult and california_housing
        ship in the wheel; the other nine are read from the package's data folder where it
        holds them (an editable install, whose data folder is the checkout's ``datasets/``),
        else from ``datasets/<name>`` of the source checkout the package was imported from or
        of the working directory. The folder may not exist: the loaders then raise
        FileNotFoundError naming the file.

    Raises
    ------
    ValueError
        If no data set has that name.
    """
    if name not in _TABLES:
        raise ValueError(f"No bundled data set named {name!r}; available: {sorted(_TABLES)}.")
    packaged = resources.files("sparsetab._data") / name
    if name in _BUNDLED_DATASETS or packaged.is_dir():
        return packaged
    return _repository_folder(name)


def _read(table, part):
    """The DataFrame of one stored part, or FileNotFoundError naming the file and where it was looked for."""
    folder = data_path(table.folder)
    file = folder / table.files[part]
    if not file.is_file():
        raise FileNotFoundError(
            f"{table.folder}/{table.files[part]} is not in this installation (looked in {folder}). Only adult "
            "and california_housing ship in the wheel; the other data sets are read from the repository's "
            "datasets/ folder: install sparsetab from a checkout (pip install -e .) or run from its root."
        )
    with resources.as_file(file) as path:
        return pd.read_csv(path, **table.read_options)


def _check_choice(name, value, accepted):
    if isinstance(value, str) and value in accepted:
        return
    raise ValueError(f"{name} must be one of {list(accepted)}, got {value!r}.")


def _load(name, subset, return_X_y, as_frame):
    """The Bunch or ``(X, y)`` of data set ``name`` (the loaders' shared body)."""
    table = _TABLES[name]
    subset = table.default_subset if subset is None else subset
    _check_choice("subset", subset, table.subsets)
    if not isinstance(as_frame, (bool, np.bool_)):
        raise ValueError(f"as_frame must be True or False, got {as_frame!r}.")
    if subset in table.rows:
        frame = _read(table, "all").iloc[table.rows[subset]].reset_index(drop=True)
    elif subset == "all" and "all" not in table.files:
        frame = pd.concat([_read(table, "train"), _read(table, "test")], ignore_index=True)
    else:
        frame = _read(table, subset)
    features = [column for column in frame.columns if column != table.target and column not in table.not_features]
    data, target = frame[features], frame[table.target]
    if not as_frame:
        data, target, frame = data.to_numpy(), target.to_numpy(), None
    if return_X_y:
        return data, target
    is_regression = name in ("california_housing", "diamonds", "bike_sharing")
    return Bunch(
        data=data,
        target=target,
        frame=frame,
        feature_names=features,
        target_names=[table.target] if is_regression else sorted(pd.unique(np.asarray(target)).tolist()),
        DESCR=(data_path(table.folder) / "SOURCE.md").read_text(encoding="utf-8"),
    )


def load_adult(*, subset=None, return_X_y=False, as_frame=True):
    """Load the Adult census income data with its official train/test split.

    Binary classification: does a person earn more than $50K a year (``income``: ``"<=50K"``
    or ``">50K"``)? Six numeric columns (age, fnlwgt, education_num, capital_gain,
    capital_loss, hours_per_week) and eight string columns (workclass, education,
    marital_status, occupation, relationship, race, sex, native_country), in which a missing
    value is the category ``"?"``, as in the UCI files. Read with :func:`pandas.read_csv`
    and returned as is, so the string columns are categorical for the estimators'
    ``categorical_features="auto"``. 32,561 training and 16,281 test rows.

    Parameters
    ----------
    subset : {"train", "test", "all"}, default=None
        The official training rows, the test rows or both (train first). Without it the
        loader keeps its first form (below) and warns: ``subset`` will default to
        ``"train"`` in a future release.
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch, as scikit-learn's loaders do.
    as_frame : bool, default=True
        Return pandas objects (True) or numpy arrays (False) for ``data`` and ``target``; only with
        ``subset``.

    Returns
    -------
    data : sklearn.utils.Bunch
        With ``subset``: ``data`` (DataFrame of the 14 feature columns, or with
        ``as_frame=False`` an object ndarray), ``target`` (Series of string labels, or
        ndarray), ``frame`` (features and target; None with ``as_frame=False``),
        ``feature_names``, ``target_names`` (``["<=50K", ">50K"]``) and ``DESCR`` (the
        provenance text). Without ``subset`` (the first form): ``frame_train`` (32,561 x 15)
        and ``frame_test`` (16,281 x 15) DataFrames with the target column, ``target_name``
        (``"income"``), ``feature_names`` (14 names), ``numeric_features``,
        ``categorical_features`` and ``DESCR``.
    (data, target) : tuple
        If ``return_X_y`` with ``subset``: the ``data`` and ``target`` above.
    (X_train, X_test, y_train, y_test) : tuple
        If ``return_X_y`` without ``subset`` (the first form): DataFrames of shape (32,561,
        14) and (16,281, 14), and Series of string labels.

    Raises
    ------
    ValueError
        If ``subset`` is not one of the accepted values or ``as_frame`` is not a bool (or
        False without ``subset``).

    Warns
    -----
    FutureWarning
        If ``subset`` is not given: it will default to ``"train"``.

    References
    ----------
    Becker, B. and Kohavi, R. (1996). Adult. UCI Machine Learning Repository.
    https://doi.org/10.24432/C5XW20 (CC BY 4.0).
    """
    if subset is not None:
        return _load("adult", subset, return_X_y, as_frame)
    if as_frame is not True:
        raise ValueError(f"as_frame={as_frame!r} needs subset: pass subset='train', 'test' or 'all'.")
    warnings.warn(
        "load_adult() without subset returns the train and test rows together (a Bunch of frame_train and "
        "frame_test, or X_train, X_test, y_train, y_test); subset will default to 'train' in a future release. "
        "Pass subset='train', 'test' or 'all' for a scikit-learn style Bunch(data, target, ...) or (X, y).",
        FutureWarning,
        stacklevel=2,
    )
    table = _TABLES["adult"]
    train, test = _read(table, "train"), _read(table, "test")
    features = [column for column in train.columns if column != table.target]
    if return_X_y:
        return train[features], test[features], train[table.target], test[table.target]
    return Bunch(
        frame_train=train,
        frame_test=test,
        target_name=table.target,
        feature_names=features,
        numeric_features=list(_ADULT_NUMERIC),
        categorical_features=list(_ADULT_CATEGORICAL),
        DESCR=(data_path("adult") / "SOURCE.md").read_text(encoding="utf-8"),
    )


def load_california_housing(*, subset="all", return_X_y=False, as_frame=True):
    """Load the California housing data (1990 census block groups).

    Regression: the median house value of a block group, in units of $100,000
    (``MedHouseVal``, capped at 5.00001 as in the census data), from eight numeric columns:
    ``MedInc`` (median income, $10,000), ``HouseAge`` (median age), ``AveRooms``,
    ``AveBedrms`` and ``AveOccup`` (rooms, bedrooms and occupants per household),
    ``Population``, ``Latitude`` and ``Longitude``. The same 20,640 rows and columns as
    :func:`sklearn.datasets.fetch_california_housing`, bundled so that no download is needed.
    No missing values.

    Parameters
    ----------
    subset : {"all"}, default="all"
        No official train/test split: only ``"all"`` (the benchmarks split it 80/20 with
        ``train_test_split(..., random_state=0)``).
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch, as scikit-learn's loaders do.
    as_frame : bool, default=True
        Return pandas objects (True) or numpy arrays (False) for ``data`` and ``target``.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``data`` (DataFrame of the feature columns, or with ``as_frame=False`` an ndarray,
        object dtype where a column holds strings), ``target`` (Series, or ndarray),
        ``frame`` (the columns as read; None with ``as_frame=False``),
        ``feature_names`` (list of str), ``target_names`` (``["MedHouseVal"]``) and ``DESCR`` (the
        provenance text, ``SOURCE.md``); also ``target_name`` (``"MedHouseVal"``), as
        in the first release.
    (data, target) : tuple
        If ``return_X_y``: the ``data`` and ``target`` above.

    Raises
    ------
    ValueError
        If ``subset`` is not one of the accepted values or ``as_frame`` is not a bool.
    FileNotFoundError
        If the data file is not in this installation (only adult and california_housing ship
        in the wheel; the other data sets are read from the repository checkout).

    References
    ----------
    Pace, R. K. and Barry, R. (1997). Sparse spatial autoregressions. Statistics and
    Probability Letters 33, 291-297.
    """
    data = _load("california_housing", subset, return_X_y, as_frame)
    if not return_X_y:
        data.target_name = "MedHouseVal"
    return data


def load_kdd_census_income(*, subset="train", return_X_y=False, as_frame=True):
    """Load the KDD census income data (1994-1995 Current Population Survey) with its official split.

    Binary classification: ``income`` is ``"- 50000"`` or ``"50000+"`` (above $50K a year).
    199,523 training and 99,762 test rows, 40 feature columns, numeric and string; read with
    ``keep_default_na=False``, so that ``"?"`` and ``"Not in universe"`` stay categories, as in
    the UCI files. ``instance_weight`` (the survey's sampling weight) is not a feature: it is
    in ``frame`` only. Several integer columns are codes (industry, occupation, year, ...):
    name them in ``categorical_features`` to embed them.

    Parameters
    ----------
    subset : {"train", "test", "all"}, default="train"
        The official training rows, the test rows or both (train first).
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch, as scikit-learn's loaders do.
    as_frame : bool, default=True
        Return pandas objects (True) or numpy arrays (False) for ``data`` and ``target``.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``data`` (DataFrame of the feature columns, or with ``as_frame=False`` an ndarray,
        object dtype where a column holds strings), ``target`` (Series, or ndarray),
        ``frame`` (the columns as read, ``instance_weight`` included; None with ``as_frame=False``),
        ``feature_names`` (list of str), ``target_names`` (``["- 50000", "50000+"]``) and ``DESCR`` (the
        provenance text, ``SOURCE.md``).
    (data, target) : tuple
        If ``return_X_y``: the ``data`` and ``target`` above.

    Raises
    ------
    ValueError
        If ``subset`` is not one of the accepted values or ``as_frame`` is not a bool.
    FileNotFoundError
        If the data file is not in this installation (only adult and california_housing ship
        in the wheel; the other data sets are read from the repository checkout).

    References
    ----------
    Lane, T. and Kohavi, R. (2000). Census-Income (KDD). UCI Machine Learning Repository.
    https://doi.org/10.24432/C5N30T (CC BY 4.0).
    """
    return _load("kdd_census_income", subset, return_X_y, as_frame)


def load_letter_recognition(*, subset="train", return_X_y=False, as_frame=True):
    """Load the UCI letter recognition data: 26 capital letters from 16 integer image statistics.

    26-class classification, target ``lettr`` (``"A"`` to ``"Z"``); the 16 features are
    integers from 0 to 15. 20,000 rows; by the UCI convention the first 16,000 are the
    training rows and the last 4,000 the test rows.

    Parameters
    ----------
    subset : {"train", "test", "all"}, default="train"
        The first 16,000 rows, the last 4,000 or all 20,000 in file order.
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch, as scikit-learn's loaders do.
    as_frame : bool, default=True
        Return pandas objects (True) or numpy arrays (False) for ``data`` and ``target``.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``data`` (DataFrame of the feature columns, or with ``as_frame=False`` an ndarray,
        object dtype where a column holds strings), ``target`` (Series, or ndarray),
        ``frame`` (the columns as read; None with ``as_frame=False``),
        ``feature_names`` (list of str), ``target_names`` (the 26 letters, sorted) and ``DESCR`` (the
        provenance text, ``SOURCE.md``).
    (data, target) : tuple
        If ``return_X_y``: the ``data`` and ``target`` above.

    Raises
    ------
    ValueError
        If ``subset`` is not one of the accepted values or ``as_frame`` is not a bool.
    FileNotFoundError
        If the data file is not in this installation (only adult and california_housing ship
        in the wheel; the other data sets are read from the repository checkout).

    References
    ----------
    Slate, D. (1991). Letter Recognition. UCI Machine Learning Repository.
    https://doi.org/10.24432/C5ZP40 (CC BY 4.0).
    """
    return _load("letter_recognition", subset, return_X_y, as_frame)


def load_forest_cover(*, subset="all", return_X_y=False, as_frame=True):
    """Load the forest cover type data of the Kaggle competition (15,120 rows of UCI Covertype).

    7-class classification, target ``Cover_Type`` (1 Spruce/Fir, 2 Lodgepole Pine, 3
    Ponderosa Pine, 4 Cottonwood/Willow, 5 Aspen, 6 Douglas-fir, 7 Krummholz), 2,160 rows per
    class; 54 integer features (10 measurements, 4 wilderness-area and 40 soil-type
    indicators). Not the full 581,012-row Covertype of the TabNet paper (SOURCE.md says why).
    The row id ``Id`` is not a feature: it is in ``frame`` only.

    Parameters
    ----------
    subset : {"all"}, default="all"
        No official train/test split: only ``"all"`` (the benchmarks split it 80/20 with
        ``train_test_split(..., random_state=0)``).
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch, as scikit-learn's loaders do.
    as_frame : bool, default=True
        Return pandas objects (True) or numpy arrays (False) for ``data`` and ``target``.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``data`` (DataFrame of the feature columns, or with ``as_frame=False`` an ndarray,
        object dtype where a column holds strings), ``target`` (Series, or ndarray),
        ``frame`` (the columns as read, ``Id`` included; None with ``as_frame=False``),
        ``feature_names`` (list of str), ``target_names`` (``[1, 2, 3, 4, 5, 6, 7]``) and ``DESCR`` (the
        provenance text, ``SOURCE.md``).
    (data, target) : tuple
        If ``return_X_y``: the ``data`` and ``target`` above.

    Raises
    ------
    ValueError
        If ``subset`` is not one of the accepted values or ``as_frame`` is not a bool.
    FileNotFoundError
        If the data file is not in this installation (only adult and california_housing ship
        in the wheel; the other data sets are read from the repository checkout).

    References
    ----------
    Blackard, J. (1998). Covertype. UCI Machine Learning Repository.
    https://doi.org/10.24432/C50K5N (CC BY 4.0).
    """
    return _load("forest_cover_kaggle", subset, return_X_y, as_frame)


def load_higgs_sample(*, subset="all", return_X_y=False, as_frame=True):
    """Load a 10,984-row sample of the HIGGS data (signal or background collision events).

    Binary classification, target ``label`` (1 signal, 0 background), from 21 low-level
    kinematic features and 7 high-level features derived from them (28 float columns).

    Parameters
    ----------
    subset : {"all"}, default="all"
        No official train/test split: only ``"all"`` (the benchmarks split it 80/20 with
        ``train_test_split(..., random_state=0)``).
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch, as scikit-learn's loaders do.
    as_frame : bool, default=True
        Return pandas objects (True) or numpy arrays (False) for ``data`` and ``target``.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``data`` (DataFrame of the feature columns, or with ``as_frame=False`` an ndarray,
        object dtype where a column holds strings), ``target`` (Series, or ndarray),
        ``frame`` (the columns as read; None with ``as_frame=False``),
        ``feature_names`` (list of str), ``target_names`` (``[0, 1]``) and ``DESCR`` (the
        provenance text, ``SOURCE.md``).
    (data, target) : tuple
        If ``return_X_y``: the ``data`` and ``target`` above.

    Raises
    ------
    ValueError
        If ``subset`` is not one of the accepted values or ``as_frame`` is not a bool.
    FileNotFoundError
        If the data file is not in this installation (only adult and california_housing ship
        in the wheel; the other data sets are read from the repository checkout).

    References
    ----------
    Baldi, P., Sadowski, P. and Whiteson, D. (2014). Searching for exotic particles in
    high-energy physics with deep learning. Nature Communications 5, 4308.
    """
    return _load("higgs_sample", subset, return_X_y, as_frame)


def load_bank_marketing(*, subset="all", return_X_y=False, as_frame=True):
    """Load the bank marketing data (bank-full: 45,211 calls of a Portuguese bank's campaigns).

    Binary classification, target ``y`` (``"no"`` / ``"yes"``: the client subscribed a term
    deposit), from 7 numeric and 9 string columns. ``duration`` (the call's length) is known
    only after the call and leaks the target; it is kept as in the UCI file: drop it for a
    realistic model.

    Parameters
    ----------
    subset : {"all"}, default="all"
        No official train/test split: only ``"all"`` (the benchmarks split it 80/20 with
        ``train_test_split(..., random_state=0)``).
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch, as scikit-learn's loaders do.
    as_frame : bool, default=True
        Return pandas objects (True) or numpy arrays (False) for ``data`` and ``target``.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``data`` (DataFrame of the feature columns, or with ``as_frame=False`` an ndarray,
        object dtype where a column holds strings), ``target`` (Series, or ndarray),
        ``frame`` (the columns as read; None with ``as_frame=False``),
        ``feature_names`` (list of str), ``target_names`` (``["no", "yes"]``) and ``DESCR`` (the
        provenance text, ``SOURCE.md``).
    (data, target) : tuple
        If ``return_X_y``: the ``data`` and ``target`` above.

    Raises
    ------
    ValueError
        If ``subset`` is not one of the accepted values or ``as_frame`` is not a bool.
    FileNotFoundError
        If the data file is not in this installation (only adult and california_housing ship
        in the wheel; the other data sets are read from the repository checkout).

    References
    ----------
    Moro, S., Cortez, P. and Rita, P. (2014). A data-driven approach to predict the success
    of bank telemarketing. Decision Support Systems 62, 22-31.
    https://doi.org/10.24432/C5K306 (CC BY 4.0).
    """
    return _load("bank_marketing", subset, return_X_y, as_frame)


def load_diamonds(*, subset="all", return_X_y=False, as_frame=True):
    """Load the diamonds data (53,940 diamonds: price from carat, cut, colour, clarity and size).

    Regression, target ``price`` in US dollars (usually modelled as ``log(price)``, as the
    benchmarks do); ``cut``, ``color`` and ``clarity`` are string columns, ``carat``,
    ``depth``, ``table``, ``x``, ``y`` and ``z`` numeric.

    Parameters
    ----------
    subset : {"all"}, default="all"
        No official train/test split: only ``"all"`` (the benchmarks split it 80/20 with
        ``train_test_split(..., random_state=0)``).
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch, as scikit-learn's loaders do.
    as_frame : bool, default=True
        Return pandas objects (True) or numpy arrays (False) for ``data`` and ``target``.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``data`` (DataFrame of the feature columns, or with ``as_frame=False`` an ndarray,
        object dtype where a column holds strings), ``target`` (Series, or ndarray),
        ``frame`` (the columns as read; None with ``as_frame=False``),
        ``feature_names`` (list of str), ``target_names`` (``["price"]``) and ``DESCR`` (the
        provenance text, ``SOURCE.md``).
    (data, target) : tuple
        If ``return_X_y``: the ``data`` and ``target`` above.

    Raises
    ------
    ValueError
        If ``subset`` is not one of the accepted values or ``as_frame`` is not a bool.
    FileNotFoundError
        If the data file is not in this installation (only adult and california_housing ship
        in the wheel; the other data sets are read from the repository checkout).

    References
    ----------
    Wickham, H. (2016). ggplot2: Elegant Graphics for Data Analysis. Springer. Data set
    ``diamonds`` (redistributed by plotnine, MIT licence).
    """
    return _load("diamonds", subset, return_X_y, as_frame)


def load_mushroom(*, subset="all", return_X_y=False, as_frame=True):
    """Load the UCI mushroom data (8,124 gilled mushrooms of 23 species: edible or poisonous).

    Binary classification, target ``class`` (``"e"`` edible, ``"p"`` poisonous; 4,208 and
    3,916 rows), from 22 string columns of single-letter codes (cap_shape, odor, gill_color,
    ..., habitat), categorical for the estimators' ``categorical_features="auto"``. A missing
    value is the category ``"?"``, as in the UCI file: ``stalk_root`` in 2,480 rows; no cell
    is NaN. ``veil_type`` is constant. ``odor`` alone classifies more than 98.5% of the rows.

    Parameters
    ----------
    subset : {"all"}, default="all"
        No official train/test split: only ``"all"`` (the benchmarks split it 80/20,
        stratified, with ``train_test_split(..., random_state=0)``).
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch, as scikit-learn's loaders do.
    as_frame : bool, default=True
        Return pandas objects (True) or numpy arrays (False) for ``data`` and ``target``.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``data`` (DataFrame of the 22 feature columns, or with ``as_frame=False`` an object
        ndarray), ``target`` (Series of string labels, or ndarray), ``frame`` (the 23
        columns as read; None with ``as_frame=False``), ``feature_names`` (list of str),
        ``target_names`` (``["e", "p"]``) and ``DESCR`` (the provenance text, ``SOURCE.md``).
    (data, target) : tuple
        If ``return_X_y``: the ``data`` and ``target`` above.

    Raises
    ------
    ValueError
        If ``subset`` is not one of the accepted values or ``as_frame`` is not a bool.
    FileNotFoundError
        If the data file is not in this installation (only adult and california_housing ship
        in the wheel; the other data sets are read from the repository checkout).

    References
    ----------
    Schlimmer, J. (1987). Mushroom. UCI Machine Learning Repository.
    https://doi.org/10.24432/C5959T (CC BY 4.0).
    """
    return _load("mushroom", subset, return_X_y, as_frame)


def load_credit_default(*, subset="all", return_X_y=False, as_frame=True):
    """Load the default of credit card clients data (30,000 clients of a Taiwanese bank, 2005).

    Binary classification, target ``default_payment_next_month`` (1 the client defaulted, 0
    not; 6,636 and 23,364 rows), from 23 columns: ``LIMIT_BAL`` (credit, NT dollars),
    ``SEX`` (1 male, 2 female), ``EDUCATION`` (1 graduate school, 2 university, 3 high school,
    4 others; 0, 5 and 6 are undocumented codes), ``MARRIAGE`` (1 married, 2 single, 3
    others; 0 undocumented), ``AGE``, the repayment statuses ``PAY_0``, ``PAY_2`` to ``PAY_6``
    (September back to April: -1 paid duly, 1 to 9 months of delay; -2 and 0 also occur),
    and the bill and payment amounts ``BILL_AMT1`` to ``BILL_AMT6`` and ``PAY_AMT1`` to
    ``PAY_AMT6``. ``SEX``, ``EDUCATION`` and ``MARRIAGE`` are codes of unordered categories:
    they are read as strings (``"1"``, ``"2"``, ...), so that the estimators'
    ``categorical_features="auto"`` embeds them. The repayment statuses are ordered (months
    of delay) and stay integers, as the other columns do: name them in
    ``categorical_features`` to embed them. No missing values. The row id ``ID`` is not a
    feature: it is in ``frame`` only.

    Parameters
    ----------
    subset : {"all"}, default="all"
        No official train/test split: only ``"all"`` (make your own, e.g. with
        ``train_test_split(..., random_state=0)``).
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch, as scikit-learn's loaders do.
    as_frame : bool, default=True
        Return pandas objects (True) or numpy arrays (False) for ``data`` and ``target``.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``data`` (DataFrame of the 23 feature columns, or with ``as_frame=False`` an object
        ndarray, since three columns hold strings), ``target`` (Series of int, or ndarray),
        ``frame`` (the 25 columns as read, ``ID`` included; None with ``as_frame=False``),
        ``feature_names`` (list of str), ``target_names`` (``[0, 1]``) and ``DESCR`` (the
        provenance text, ``SOURCE.md``).
    (data, target) : tuple
        If ``return_X_y``: the ``data`` and ``target`` above.

    Raises
    ------
    ValueError
        If ``subset`` is not one of the accepted values or ``as_frame`` is not a bool.
    FileNotFoundError
        If the data file is not in this installation (only adult and california_housing ship
        in the wheel; the other data sets are read from the repository checkout).

    References
    ----------
    Yeh, I.-C. and Lien, C.-H. (2009). The comparisons of data mining techniques for the
    predictive accuracy of probability of default of credit card clients. Expert Systems
    with Applications 36(2), 2473-2480. UCI Machine Learning Repository, default of credit
    card clients: https://doi.org/10.24432/C55S3H (CC BY 4.0).
    """
    return _load("credit_default", subset, return_X_y, as_frame)


def load_bike_sharing(*, subset="all", return_X_y=False, as_frame=True):
    """Load the hourly bike sharing data (17,379 hours of Capital Bikeshare, Washington, 2011-2012).

    Regression, target ``count`` (rentals in the hour, integers from 1 to 977), from 12
    numeric columns: ``season`` (1 to 4), ``year`` (0 for 2011, 1 for 2012), ``month``,
    ``hour``, ``holiday``, ``weekday``, ``workingday``, ``weather`` (1 clear to 4 heavy rain),
    and ``temp``, ``atemp``, ``humidity`` and ``windspeed``, normalised by UCI. Not features,
    in ``frame`` only: ``casual`` and ``registered``, the two kinds of rentals, which sum to
    ``count`` (they would leak the target), and ``date`` (a string such as ``"1/1/2011"``,
    whose year, month and weekday are columns of their own). No missing values.

    Parameters
    ----------
    subset : {"all"}, default="all"
        No official train/test split: only ``"all"`` (the benchmarks split it 80/20 with
        ``train_test_split(..., random_state=0)``).
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch, as scikit-learn's loaders do.
    as_frame : bool, default=True
        Return pandas objects (True) or numpy arrays (False) for ``data`` and ``target``.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``data`` (DataFrame of the 12 feature columns, or with ``as_frame=False`` a float
        ndarray), ``target`` (Series of int, or ndarray), ``frame`` (the 16 columns as read,
        ``date``, ``casual`` and ``registered`` included; None with ``as_frame=False``),
        ``feature_names`` (list of str), ``target_names`` (``["count"]``) and ``DESCR`` (the
        provenance text, ``SOURCE.md``).
    (data, target) : tuple
        If ``return_X_y``: the ``data`` and ``target`` above.

    Raises
    ------
    ValueError
        If ``subset`` is not one of the accepted values or ``as_frame`` is not a bool.
    FileNotFoundError
        If the data file is not in this installation (only adult and california_housing ship
        in the wheel; the other data sets are read from the repository checkout).

    References
    ----------
    Fanaee-T, H. (2013). Bike Sharing. UCI Machine Learning Repository.
    https://doi.org/10.24432/C5W894 (CC BY 4.0).
    """
    return _load("bike_sharing", subset, return_X_y, as_frame)


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
    """Logit g(x), shape (n,), and the boolean relevant-feature matrix, shape (n, 11), of Syn *k*."""
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
    """Generate the synthetic data set Syn *k* (k = 1..6) with its ground-truth relevant features.

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
