"""The eight data sets of ``compare.py``: their fixed splits, their representations for each model, their notes.

``load`` gives a data set's training and test rows as the table reports them; ``prepare`` subsamples (``--quick``),
splits off the validation rows of a seed and builds every model's view of the rows (DataFrame for sparsetab,
integer codes for pytorch-tabnet, pandas categories for the boosting models). ``small_tables.py``,
``pretraining.py`` and ``speed.py`` reuse the splits and the codes.
"""

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

from sparsetab.datasets import (
    load_adult,
    load_bank_marketing,
    load_california_housing,
    load_diamonds,
    load_forest_cover,
    load_higgs_sample,
    load_kdd_census_income,
    load_letter_recognition,
)

DATASETS = (
    "adult",
    "kdd_census_income",
    "forest_cover_kaggle",
    "letter_recognition",
    "higgs_sample",
    "bank_marketing",
    "california_housing",
    "diamonds",
)
SCREENING = ("adult", "letter_recognition", "higgs_sample", "california_housing")
AUC_ERROR = ("higgs_sample", "bank_marketing")  # error = 1 - ROC AUC there
VALIDATION_FRACTION = 0.1
QUICK_ROWS = 5000


def _split(X, y, stratify, test_size=0.2):
    """80/20 split with ``random_state=0``, stratified on ``y`` when ``stratify``."""
    return train_test_split(X, y, test_size=test_size, random_state=0, stratify=y if stratify else None)


def load(name):
    """Training and test rows of data set ``name``.

    Parameters
    ----------
    name : str
        One of ``DATASETS``.

    Returns
    -------
    X_train, X_test : pandas.DataFrame
        Features; categorical columns have object, string or category dtype.
    y_train, y_test : numpy.ndarray
        Targets.
    task : {"classification", "regression"}
        Kind of target.
    note : str
        What the table should say about the data set (split, target, deviations).
    """
    if name == "adult":
        (X_train, y_train), (X_test, y_test) = (load_adult(subset=part, return_X_y=True) for part in ("train", "test"))
        return X_train, X_test, y_train, y_test, "classification", "official UCI split"
    if name == "kdd_census_income":
        coded = [
            "detailed_industry_recode",
            "detailed_occupation_recode",
            "own_business_or_self_employed",
            "veterans_benefits",
            "year",
        ]
        parts = []
        for part in ("train", "test"):
            X, y = load_kdd_census_income(subset=part, return_X_y=True)  # instance_weight is not in X
            X = X.copy()
            X[coded] = X[coded].astype(str).astype(object)
            parts.append((X, y))
        (X_train, y_train), (X_test, y_test) = parts
        note = "official UCI split; instance_weight dropped; 5 integer-coded columns as categorical"
        return X_train, X_test, y_train, y_test, "classification", note
    if name == "forest_cover_kaggle":
        X, y = load_forest_cover(return_X_y=True)
        note = "Kaggle 15,120-row balanced subset of Covertype; stratified 80/20 split (random_state 0)"
        return *_split(X, y, stratify=True), "classification", note
    if name == "letter_recognition":
        X, y = load_letter_recognition(subset="all", return_X_y=True)
        note = "first 16,000 rows train, last 4,000 test (UCI convention)"
        return X.iloc[:16000], X.iloc[16000:], y.iloc[:16000], y.iloc[16000:], "classification", note
    if name == "higgs_sample":
        X, y = load_higgs_sample(return_X_y=True)
        note = "10,984-row sample of HIGGS; stratified 80/20 split (random_state 0)"
        return *_split(X, y, stratify=True), "classification", note
    if name == "bank_marketing":
        X, y = load_bank_marketing(return_X_y=True)
        note = "bank-full; `duration` KEPT (known only after the call: leaks the target); stratified 80/20 split"
        return *_split(X, y, stratify=True), "classification", note
    if name == "california_housing":
        X, y = load_california_housing(return_X_y=True)
        note = "target MedHouseVal (100,000 USD); 80/20 split (random_state 0)"
        return *_split(X, y, stratify=False), "regression", note
    if name == "diamonds":
        X, y = load_diamonds(return_X_y=True)
        note = "target log(price) (RMSE in log-USD); cut/color/clarity categorical; 80/20 split (random_state 0)"
        return *_split(X, np.log(y), stratify=False), "regression", note
    raise ValueError(f"unknown data set {name!r}")


def is_categorical(column):
    """Whether ``column`` is categorical for sparsetab's ``categorical_features="auto"``."""
    return not pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column)


class IntegerCodes:
    """Numeric float32 matrix for pytorch-tabnet: categorical columns as codes learned on the fit rows.

    Codes ``0 .. k-1`` are the ``k`` categories seen at fit (sorted), code ``k`` is for unseen categories.

    Parameters
    ----------
    X : pandas.DataFrame
        The rows the codes are learned from.
    """

    def __init__(self, X):
        self.columns = list(X.columns)
        self.categories = {
            column: pd.Index(sorted(X[column].astype(str).unique()))
            for column in X.columns
            if is_categorical(X[column])
        }
        self.cat_idxs = [self.columns.index(column) for column in self.categories]
        self.cat_dims = [len(categories) + 1 for categories in self.categories.values()]

    def transform(self, X):
        """The float32 matrix of ``X`` (same columns as at construction)."""
        out = np.empty((len(X), len(self.columns)), dtype=np.float32)
        for j, column in enumerate(self.columns):
            if column in self.categories:
                categories = self.categories[column]
                codes = categories.get_indexer(X[column].astype(str))
                out[:, j] = np.where(codes < 0, len(categories), codes)
            else:
                out[:, j] = X[column].to_numpy(dtype=np.float32)
        return out


def with_category_dtype(X_train, X_test):
    """Copies of ``X_train`` and ``X_test`` with the categorical columns as pandas categories of the training rows."""
    dtypes = {
        column: pd.CategoricalDtype(sorted(X_train[column].astype(str).unique()))
        for column in X_train.columns
        if is_categorical(X_train[column])
    }
    converted = []
    for X in (X_train, X_test):
        X = X.copy()
        for column, dtype in dtypes.items():
            values = X[column].astype(str)
            X[column] = values.where(values.isin(dtype.categories)).astype(dtype)  # unseen -> NaN
        converted.append(X)
    return converted


def task_of(name):
    """``"regression"`` for california_housing and diamonds, else ``"classification"``."""
    return "regression" if name in ("california_housing", "diamonds") else "classification"


def categorical_columns(X):
    """The columns of ``X`` that are categorical for sparsetab (:func:`is_categorical`), in order."""
    return [column for column in X.columns if is_categorical(X[column])]


def with_string_categories(data):
    """``X_train, X_test`` for CatBoost: the categorical columns as str (missing values as "nan"), built once per
    prepared data set."""
    if "X_train_str" not in data:
        converted = []
        for X in (data["X_train"], data["X_test"]):
            X = X.copy()
            for column in categorical_columns(data["X_train"]):
                X[column] = X[column].astype(str).fillna("nan")  # pandas >= 3 keeps NaN through astype(str)
            converted.append(X)
        data["X_train_str"], data["X_test_str"] = converted
    return data["X_train_str"], data["X_test_str"]


def data_info(data):
    """Description of a prepared data set for the report (stored in every cell)."""
    return dict(
        task=data["task"],
        note=data["note"],
        fit_rows=len(data["X_fit"]),
        val_rows=len(data["X_val"]),
        test_rows=len(data["X_test"]),
        features=int(data["X_test"].shape[1]),
        categorical=data["n_categorical"],
        n_classes=data["n_classes"],
    )


def prepare(name, seed=0, quick=False):
    """Load data set ``name``, subsample it under ``quick``, split off the validation rows, build every representation.

    Parameters
    ----------
    name : str
        One of ``DATASETS``.
    seed : int, default=0
        Random state of the fit / validation split (and of the ``quick`` subsample).
    quick : bool, default=False
        Keep at most ``QUICK_ROWS`` training rows.

    Returns
    -------
    dict
        The frames and arrays of every model (see the keys), the task, the note and the counts.
    """
    X_train, X_test, y_train, y_test, task, note = load(name)
    classification = task == "classification"
    X_train, X_test = X_train.reset_index(drop=True), X_test.reset_index(drop=True)
    y_train, y_test = np.asarray(y_train), np.asarray(y_test)
    if classification and y_train.dtype.kind not in "biu":
        y_train, y_test = y_train.astype(object), y_test.astype(object)
    if quick and len(X_train) > QUICK_ROWS:
        X_train, _, y_train, _ = train_test_split(
            X_train,
            y_train,
            train_size=QUICK_ROWS,
            random_state=seed,
            stratify=y_train if classification else None,
        )
    X_fit, X_val, y_fit, y_val = train_test_split(
        X_train,
        y_train,
        test_size=VALIDATION_FRACTION,
        random_state=seed,
        stratify=y_train if classification else None,
    )
    codes = IntegerCodes(X_fit)
    X_train_cat, X_test_cat = with_category_dtype(X_train, X_test)
    return dict(
        name=name,
        task=task,
        note=note,
        X_train=X_train,
        y_train=y_train,
        X_fit=X_fit,
        y_fit=y_fit,
        X_val=X_val,
        y_val=y_val,
        X_test=X_test,
        y_test=y_test,
        codes=codes,
        X_fit_codes=codes.transform(X_fit),
        X_val_codes=codes.transform(X_val),
        X_test_codes=codes.transform(X_test),
        X_train_cat=X_train_cat,
        X_test_cat=X_test_cat,
        n_categorical=len(codes.categories),
        n_classes=len(np.unique(y_train)) if classification else None,
    )
