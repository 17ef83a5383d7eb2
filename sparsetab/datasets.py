"""Loaders for the real data sets bundled with sparsetab.

The files are shipped inside the package (``sparsetab._data``, built from the repository's
``datasets/`` folder), so the loaders work offline, from a wheel and from an editable install.
"""

from importlib import resources

import pandas as pd
from sklearn.utils import Bunch

__all__ = ["load_adult", "data_path"]

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
    root = resources.files("sparsetab._data")
    available = sorted(entry.name for entry in root.iterdir() if entry.is_dir() and (entry / "SOURCE.md").is_file())
    if name not in available:
        raise ValueError(f"No bundled data set named {name!r}; available: {available}.")
    return root / name


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
