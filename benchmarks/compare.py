"""sparsetab against pytorch-tabnet 4.1.0 and gradient boosting on eight real data sets, same splits, cached cells.

For each data set the models are fitted on the same training rows and scored on the same test rows:

- ``SparseTabNetClassifier`` / ``SparseTabNetRegressor`` (this package, fed the DataFrame as it is), in the named
  configurations of ``benchmarks/configs.py``;
- pytorch-tabnet's ``TabNetClassifier`` / ``TabNetRegressor`` (categorical columns as integer codes learned
  on the training rows, one extra code for unseen categories, with ``cat_idxs``, ``cat_dims``, ``cat_emb_dim=1``);
- scikit-learn's ``HistGradientBoostingClassifier`` / ``Regressor`` (``categorical_features="from_dtype"`` on
  pandas ``category`` columns) and LightGBM when it is importable (skipped with a note otherwise);
- in Tables 2 and 3, CatBoost's ``CatBoostClassifier`` / ``CatBoostRegressor`` when it is importable (skipped with a
  note otherwise): ``random_seed=seed, verbose=0, thread_count=--threads, allow_writing_files=False`` and
  ``cat_features`` = the categorical columns converted to str, as in ``small_tables.py``.

Tables (``--tables``, default ``same defaults``):

1. ``same``: both TabNets with the same architecture and training settings (n_d = n_a = 8, n_steps = 3,
   gamma 1.3, n_independent = n_shared = 2, lambda_sparse 1e-3, momentum 0.02, batch 1024, virtual batch 128,
   Adam with learning rate 0.02, sparsemax, embedding width 1, ``--max-epochs``, early stopping with
   patience 10 on the validation loss); one seed;
2. ``defaults``: each library's documented defaults (plus the random seed), CatBoost included; one seed;
3. ``seeds``: "defaults, 3 seeds": sparsetab's old defaults (0.1.0, written out in configs.py) and current
   defaults, pytorch-tabnet's defaults, HistGradientBoosting, LightGBM and CatBoost, mean and range over seeds,
   error ratios to HistGradientBoosting and to CatBoost per data set and their geometric means over the data sets
   (per model row), the goal summary of issue 17; under ``--protocol user`` also the training error;
4. ``screen``: the ablation of ``--variants`` (configs.py names, combinable with ``+``) on the four screening
   sets (adult, letter_recognition, higgs_sample, california_housing), 3 seeds;
5. ``tuned``: "Table 4: tuned": sparsetab and HistGradientBoosting each tuned by ``HalvingRandomSearchCV`` within
   10 CPU-minutes per model, data set and seed on the screening sets (spaces and budget rules in configs.py).

Error is 1 - accuracy for classification (1 - ROC AUC for higgs_sample and bank_marketing) and RMSE for
regression. Seeds: ``--seeds`` (``--seed K`` is the same as ``--seeds K``) overrides every table's default seeds
(tables 1, 2, 4: ``0``, and 1 and 2 only ever use the first seed; tables 3 and the ablation: ``0 1 2``); the seed
is the random state of the models and of the fit / validation split (and of the --quick subsample).
``--datasets`` overrides every table's data sets (tables 1-3: all 8; ablation and table 4: the screening sets).

Protocol (``--protocol``). ``validation`` (the default, key protocol ``holdout90-v1``): the TabNets train on 90% of
the training rows and early-stop on the other 10% (the same rows for both, split off per seed, stratified for
classification; sparsetab ``fit(X_fit, y_fit, X_val=..., y_val=...)``); the boosting models are fitted on all the
training rows with their defaults. ``user`` (key protocol ``user-fit-Xy-v1`` for sparsetab): sparsetab is fitted as
users call it, ``fit(X_train, y_train)`` on all the training rows (the fit and validation rows, in their original
order: the rows the boosting models get) without ``X_val``, so its own ``early_stopping="auto"`` rules decide (the
key also holds the hash of those rules, ``auto_rules_hash``, the one ``small_tables.py`` keys by); pytorch-tabnet
keeps the validation protocol (without ``eval_set`` it has no early stopping: there is no user protocol for it); the
boosting models are fitted as always. Under ``user`` every cell also records its training error (the error, same
metric, on the rows given to ``fit``), shown next to the test error in Table 3; the peers' cells of a user run have
their own key protocol (``holdout90-v1+train-error``: the same fits, measured again with the training error). Table
4 has no user protocol.

Reported per data set and model: test accuracy and ROC AUC (macro one-vs-rest for multiclass) or RMSE (in the
target's units) and R^2, fit seconds, epochs (boosting: iterations) run, predicted test rows per second
(``predict_proba`` / ``predict``), the peak RSS increase during ``fit`` (sampled every 5 ms by a background thread,
relative to the RSS just before ``fit``) and the ratios sparsetab / pytorch-tabnet of fit seconds, predict rows/s
and peak memory. The data files are in ``datasets/<name>/`` with their ``SOURCE.md``. Not part of the test suite;
needs ``pytorch-tabnet==4.1.0`` and ``psutil`` (``lightgbm`` and ``catboost`` optional).

Cache and resume: every cell (data set, model configuration, seed, protocol) is measured once and stored as one
JSON file ``benchmarks/results/cache/<data set>/<model>-<config>-seed<k>-<hash8>.json`` (see ``_cache.py``;
committed to git, so a later session resumes where an earlier one stopped). The key holds everything that
determines the result: data set, model, configuration name, seed, protocol, the quick flag, the estimator's class
and constructor parameters as constructed (``get_params(deep=False)``: when sparsetab's defaults change, the
"defaults" cells are re-measured; sparsetab parameters at their legacy value, which train as before the parameter
existed, are left out, so adding a parameter keeps the cached cells valid), the fit parameters and the versions
of the libraries involved. A rerun reads
the cached cells instead of fitting (a fully cached run takes seconds); ``--refresh`` re-measures them. The key
does not hold sparsetab's source: after a change that trains differently under the same parameters (the piecewise
linear encoding keeping each value, for one), re-measure the affected cells with ``--refresh`` (each cell records
the hash of the source that measured it, and the results header lists them). Each
file is written atomically when its cell ends, so a killed run keeps every finished cell: to resume, run the same
command again. Failed cells are not cached. ``--quick`` cells go to ``benchmarks/results/cache-quick/`` (not in
git). The results file states the total CPU time of its cells (cached or not) and the CPU models they ran on.

Parallel cells: ``--jobs N`` runs up to N cells at once in separate processes (joblib, loky), each with
``--threads`` torch / OpenMP / LightGBM / CatBoost threads. Fit times are then measured under load (the ratio
columns compare cells of the same run, but cached cells keep the timing of the run that measured them; each file
records its threads, jobs and CPU model).

Run. On two CPU cores with one thread and one job, from an empty cache: Tables 1 and 2 about 20-30 minutes, Table 3
about 40 minutes (its seed 0 cells are Table 2's), the ablation 2-3 minutes per variant that stops early and up to
10 for one that runs all epochs (``cosine``), Table 4 at most 80 minutes per seed (8 searches of at most 10
CPU-minutes; HistGradientBoosting's use far less). CatBoost (1,000 trees, one thread) adds roughly 25 CPU-minutes
per seed, about 20 of them on kdd_census_income (scaled from 5,000-row fits). ``--protocol user`` measures every
cell of its tables anew (its own keys). ``--quick`` (at most 5,000 rows, 3 epochs, tiny searches, its own cache) is
a smoke run of a minute or two::

    python benchmarks/compare.py [--datasets adult kdd_census_income ...] [--tables same defaults seeds screen tuned]
                                 [--variants old_defaults cosine wide ...] [--seeds 0 1 2] [--jobs 1] [--threads 1]
                                 [--max-epochs 100] [--protocol validation|user] [--refresh] [--cache-dir DIR]
                                 [--quick] [--output benchmarks/results/compare.md]

For example ``python benchmarks/compare.py --tables seeds --output benchmarks/results/compare_seeds.md`` (Table 3),
``--tables seeds --protocol user --output benchmarks/results/compare_seeds_user.md`` (Table 3, user protocol),
``--tables screen --variants old_defaults cosine wide cosine+wide+ple --output benchmarks/results/ablation.md``
and ``--tables tuned --output benchmarks/results/compare_tuned.md``.
"""

import argparse
import ast
import contextlib
import hashlib
import inspect
import io
import math
import os
import platform
import shlex
import sys
import time
import traceback
import warnings
from datetime import datetime, timezone
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import configs
import numpy as np
import pandas as pd
import sklearn
import torch
from _cache import CellCache, json_safe, key_hash
from _measure import PeakRSS, cpu_model
from pytorch_tabnet.tab_model import TabNetClassifier, TabNetRegressor
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import accuracy_score, mean_squared_error, r2_score, roc_auc_score
from sklearn.model_selection import train_test_split
from threadpoolctl import threadpool_limits

import sparsetab
from sparsetab import SparseTabNetClassifier, SparseTabNetRegressor
from sparsetab import _params as params_module
from sparsetab._params import LEGACY_VALUES, same_value
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

try:
    import lightgbm
except ImportError:  # optional
    lightgbm = None
try:
    import catboost
except ImportError:  # optional
    catboost = None

RESULTS_DIR = Path(__file__).resolve().parent / "results"
CACHE_DIR = RESULTS_DIR / "cache"
QUICK_CACHE_DIR = RESULTS_DIR / "cache-quick"
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
TABLES = ("same", "defaults", "seeds", "screen", "tuned")
DEFAULT_TABLES = ("same", "defaults")
TABLE_TITLES = {
    "same": "Table 1: same architecture and training settings",
    "defaults": "Table 2: documented defaults",
    "seeds": "Table 3: defaults, 3 seeds",
    "screen": "Ablation: screening variants",
    "tuned": "Table 4: tuned",
}
TABLE_SEEDS = {"same": (0,), "defaults": (0,), "seeds": (0, 1, 2), "screen": (0, 1, 2), "tuned": (0,)}
TABLE_DATASETS = {"same": DATASETS, "defaults": DATASETS, "seeds": DATASETS, "screen": SCREENING, "tuned": SCREENING}
DEFAULT_VARIANTS = ("old_defaults", "defaults", "cosine", "wide", "cosine_wide", "ple", "periodic", "quantile")
SAME_ARCHITECTURE = dict(
    n_d=8, n_a=8, n_steps=3, gamma=1.3, n_independent=2, n_shared=2, lambda_sparse=1e-3, momentum=0.02
)
BATCH = dict(batch_size=1024, virtual_batch_size=128)
LEARNING_RATE = 0.02
PATIENCE = 10
VALIDATION_FRACTION = 0.1
QUICK_ROWS = 5000
QUICK_EPOCHS = 3
QUICK_BOOSTING_ITERATIONS = 50  # max_iter of the tuned HistGradientBoosting under --quick
#: Version of the measuring protocol of a single fit / of a tuned cell; part of every key (bump it when the
#: splits, the data preparation or the scoring here change).
PROTOCOL = "holdout90-v1"
TUNED_PROTOCOL = "halving-predefined-split-v1"
#: ``--protocol user`` (the key's protocol instead of ``PROTOCOL``): sparsetab fitted as users call it,
#: ``fit(X_train, y_train)`` on all the training rows without ``X_val``, its training error recorded; and the peers'
#: cells of such a run: the same fits as ``PROTOCOL`` with their training error recorded.
USER_PROTOCOL = "user-fit-Xy-v1"
USER_PEER_PROTOCOL = "holdout90-v1+train-error"
PROTOCOLS = ("validation", "user")
BOOSTING = ("HistGradientBoosting", "LightGBM", "CatBoost")


# ---------------------------------------------------------------------------------------------------------------
# Data


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


# ---------------------------------------------------------------------------------------------------------------
# Measurement


def error_of(name, task, metric1, metric2):
    """The error of issue 17: 1 - accuracy (1 - ROC AUC for :data:`AUC_ERROR`), RMSE for regression."""
    if task == "regression":
        return metric1
    return 1.0 - (metric2 if name in AUC_ERROR else metric1)


def score(prediction, y, task):
    """``(metric1, metric2)`` of a prediction: accuracy and ROC AUC (macro one-vs-rest for multiclass) for
    classification, RMSE and R^2 for regression.

    Parameters
    ----------
    prediction : tuple or array-like
        ``(classes, proba)`` for classification, the predictions for regression.
    y : numpy.ndarray
        True targets.
    task : {"classification", "regression"}
    """
    if task == "classification":
        classes, proba = prediction
        proba = np.asarray(proba, dtype=np.float64)
        proba /= proba.sum(axis=1, keepdims=True)
        metric1 = accuracy_score(y, np.asarray(classes)[proba.argmax(axis=1)])
        if len(classes) == 2:
            metric2 = roc_auc_score(y == classes[1], proba[:, 1])
        else:
            metric2 = roc_auc_score(y, proba, multi_class="ovr", average="macro", labels=classes)
    else:
        prediction = np.asarray(prediction, dtype=np.float64).ravel()
        metric1 = float(np.sqrt(mean_squared_error(y, prediction)))
        metric2 = r2_score(y, prediction)
    return float(metric1), float(metric2)


def measure(fit, predict, y_test, task, epochs, train=None):
    """Fit, predict the test rows and score one model.

    Parameters
    ----------
    fit : callable
        ``fit()`` trains the model and returns it.
    predict : callable
        ``predict(model)`` returns ``(classes, proba)`` for classification or the predictions for regression,
        on the test rows.
    y_test : numpy.ndarray
        Test targets.
    task : {"classification", "regression"}
        Kind of target.
    epochs : callable
        ``epochs(model)`` returns the number of epochs (boosting: iterations) run.
    train : tuple, default=None
        ``(predict_train, y_train)``: ``predict_train(model)`` predicts the rows given to ``fit`` (as ``predict``
        does the test rows), ``y_train`` their targets; when given, they are scored too (after the timings).

    Returns
    -------
    dict
        ``metric1`` (accuracy or RMSE), ``metric2`` (ROC AUC or R^2), ``fit_s``, ``fit_cpu_s`` (CPU seconds of
        this process, all threads, during fit), ``epochs``, ``predict_rows_s``, ``peak_mib``; with ``train`` also
        ``train_metric1``, ``train_metric2`` and ``train_rows``.
    """
    with PeakRSS() as memory:
        start, start_cpu = time.perf_counter(), time.process_time()
        model = fit()
        fit_seconds, fit_cpu = time.perf_counter() - start, time.process_time() - start_cpu
    start = time.perf_counter()
    prediction = predict(model)
    predict_seconds = time.perf_counter() - start
    metric1, metric2 = score(prediction, y_test, task)
    result = dict(
        metric1=metric1,
        metric2=metric2,
        fit_s=fit_seconds,
        fit_cpu_s=fit_cpu,
        epochs=int(epochs(model)),
        predict_rows_s=len(y_test) / predict_seconds,
        peak_mib=memory.increase_mib,
    )
    if train is not None:
        predict_train, y_train = train
        result["train_metric1"], result["train_metric2"] = score(predict_train(model), y_train, task)
        result["train_rows"] = len(y_train)
    return result


# ---------------------------------------------------------------------------------------------------------------
# Models: what a cell constructs (no data needed, so that the cache key is known before anything is fitted)


def sparsetab_params(cell, classification):
    """Constructor parameters of sparsetab for ``cell`` (configuration, seed, --quick epoch cap).

    Raises
    ------
    configs.UnknownParameterError
        When the configuration sets a parameter the installed estimator does not accept.
    """
    estimator = SparseTabNetClassifier if classification else SparseTabNetRegressor
    if cell["config"] == "same":
        params = dict(
            SAME_ARCHITECTURE,
            **BATCH,
            learning_rate=LEARNING_RATE,
            entmax_mode="sparsemax",
            cat_emb_dim=1,
            max_epochs=cell["max_epochs"],
            early_stopping=True,
            n_iter_no_change=PATIENCE,
        )
    elif cell["config"] == "tuned":
        params = dict(configs.TUNING_BASE["sparsetab"])
    else:
        params = configs.resolve(cell["config"], estimator().get_params().keys())
    if cell["quick"]:
        params["max_epochs"] = QUICK_EPOCHS
    return estimator, dict(params, random_state=cell["seed"])


def build(cell, task, data=None):
    """The estimator of ``cell``, its fit parameters and the parameters that go into the cache key.

    Parameters
    ----------
    cell : dict
        ``dataset``, ``model``, ``config``, ``seed``, ``quick``, ``max_epochs``, ``threads``.
    task : {"classification", "regression"}
    data : dict, default=None
        The prepared data set (:func:`prepare`); only pytorch-tabnet (``cat_idxs``, ``cat_dims``) and CatBoost
        (``cat_features``) need it.

    Returns
    -------
    estimator : object
        Unfitted.
    fit_params : dict
        Extra keyword arguments of ``fit`` that are part of the protocol.
    key_params : dict
        The estimator's class and ``get_params(deep=False)`` (without ``n_jobs`` / CatBoost's ``thread_count``;
        pytorch-tabnet without the data-derived ``cat_idxs`` / ``cat_dims``, CatBoost without ``cat_features``;
        sparsetab without the parameters at their legacy value), plus ``fit_params``.
    """
    classification = task == "classification"
    model, config, seed = cell["model"], cell["config"], cell["seed"]
    fit_params = {}
    if model == "sparsetab":
        estimator_class, params = sparsetab_params(cell, classification)
        estimator = estimator_class(**params)
    elif model == "pytorch-tabnet":
        common = dict(cat_emb_dim=1, seed=seed, verbose=0, device_name="cpu")
        if data is not None:
            common.update(cat_idxs=data["codes"].cat_idxs, cat_dims=data["codes"].cat_dims)
        fit_params = dict(max_epochs=cell["max_epochs"], patience=PATIENCE, **BATCH)
        if config == "same":
            params = dict(SAME_ARCHITECTURE, optimizer_params=dict(lr=LEARNING_RATE), mask_type="sparsemax", **common)
            # Monitor the validation loss, as sparsetab's scoring="loss" does.
            fit_params["eval_metric"] = ["logloss" if classification else "mse"]
        elif config == "defaults":
            params = common
            fit_params["max_epochs"] = QUICK_EPOCHS if cell["quick"] else 200  # documented default (README)
        else:
            raise ValueError(f"pytorch-tabnet has no configuration {config!r} (same, defaults)")
        estimator = (TabNetClassifier if classification else TabNetRegressor)(**params)
    elif model == "HistGradientBoosting":
        estimator_class = HistGradientBoostingClassifier if classification else HistGradientBoostingRegressor
        params = dict(categorical_features="from_dtype", random_state=seed)
        if config == "tuned":
            params.update(configs.TUNING_BASE["HistGradientBoosting"])
            if cell["quick"]:
                params["max_iter"] = QUICK_BOOSTING_ITERATIONS
        elif config != "defaults":
            raise ValueError(f"HistGradientBoosting has no configuration {config!r} (defaults, tuned)")
        estimator = estimator_class(**params)
    elif model == "LightGBM":
        if lightgbm is None:
            raise ImportError("LightGBM is not installed")
        if config != "defaults":
            raise ValueError(f"LightGBM has no configuration {config!r} (defaults)")
        estimator_class = lightgbm.LGBMClassifier if classification else lightgbm.LGBMRegressor
        estimator = estimator_class(random_state=seed, n_jobs=cell["threads"], verbose=-1)
    elif model == "CatBoost":
        if catboost is None:
            raise ImportError("CatBoost is not installed")
        if config != "defaults":
            raise ValueError(f"CatBoost has no configuration {config!r} (defaults)")
        estimator_class = catboost.CatBoostClassifier if classification else catboost.CatBoostRegressor
        estimator = estimator_class(
            random_seed=seed, verbose=0, thread_count=cell["threads"], allow_writing_files=False
        )
        if data is not None:
            estimator.set_params(cat_features=categorical_columns(data["X_train"]))
    else:
        raise ValueError(f"unknown model {model!r}")
    params = estimator.get_params(deep=False)
    for name in ("n_jobs", "thread_count", "cat_idxs", "cat_dims", "cat_features"):
        params.pop(name, None)
    if model == "sparsetab":
        # A parameter at its legacy value trains as before it existed: leaving it out of the key keeps the
        # cached cells of a configuration valid when a later sparsetab adds parameters.
        params = {
            name: value
            for name, value in params.items()
            if not (name in LEGACY_VALUES and same_value(value, LEGACY_VALUES[name]))
        }
    kind = type(estimator)
    key_params = dict(estimator=f"{kind.__module__}.{kind.__qualname__}", params=params, fit_params=fit_params)
    return estimator, fit_params, json_safe(key_params)


def _relative(path):
    """``path`` relative to the repository root when it is inside it, else as given (POSIX form)."""
    path = Path(path).resolve()
    root = RESULTS_DIR.parent.parent
    return (path.relative_to(root) if path.is_relative_to(root) else path).as_posix()


def _version(package):
    """Installed version of ``package``, or "not installed"."""
    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"


def versions_for(model):
    """Versions of the libraries a cell of ``model`` depends on (part of its key)."""
    found = {"scikit-learn": sklearn.__version__, "numpy": np.__version__, "pandas": pd.__version__}
    if model == "sparsetab":
        found.update(sparsetab=sparsetab.__version__, torch=torch.__version__.split("+")[0])
    elif model == "pytorch-tabnet":
        found.update({"pytorch-tabnet": _version("pytorch-tabnet"), "torch": torch.__version__.split("+")[0]})
    elif model == "LightGBM":
        found["lightgbm"] = lightgbm.__version__ if lightgbm is not None else "not installed"
    elif model == "CatBoost":
        found["catboost"] = catboost.__version__ if catboost is not None else "not installed"
    return found


def task_of(name):
    """``"regression"`` for california_housing and diamonds, else ``"classification"``."""
    return "regression" if name in ("california_housing", "diamonds") else "classification"


def key_protocol(cell):
    """The protocol string of ``cell``'s key: ``TUNED_PROTOCOL`` for a tuned cell, else ``PROTOCOL`` under
    ``--protocol validation`` and ``USER_PROTOCOL`` (sparsetab) / ``USER_PEER_PROTOCOL`` (the peers) under
    ``--protocol user``."""
    if cell["config"] == "tuned":
        return TUNED_PROTOCOL
    if cell.get("protocol", "validation") == "user":
        return USER_PROTOCOL if cell["model"] == "sparsetab" else USER_PEER_PROTOCOL
    return PROTOCOL


def cell_key(cell):
    """The cache key of ``cell`` (a JSON-safe dict; see ``_cache.py``).

    Under ``--protocol user`` a sparsetab cell's key also holds the hash of the rules behind its ``"auto"``
    parameters (:func:`auto_rules_hash`): they decide how a fit without ``X_val`` trains.

    Raises
    ------
    Exception
        Whatever constructing the estimator raises (unknown configuration or parameter).
    """
    _, _, key_params = build(cell, task_of(cell["dataset"]))
    protocol = key_protocol(cell)
    key = dict(
        dataset=cell["dataset"],
        model=cell["model"],
        config=cell["config"],
        seed=cell["seed"],
        protocol=protocol,
        quick=dict(rows=QUICK_ROWS, epochs=QUICK_EPOCHS) if cell["quick"] else False,
        versions=versions_for(cell["model"]),
        **key_params,
    )
    if cell["config"] == "tuned":
        key["tuning"] = tuning_settings(cell)
    if protocol == USER_PROTOCOL:
        key["auto_rules"] = auto_rules_hash()
    return json_safe(key)


def auto_rules_hash():
    """SHA-256 (16 hex digits) of the rules behind ``"auto"``: the code of ``sparsetab._params``'s resolvers.

    ``small_tables.py`` keys its user-protocol cells by it too: the syntax trees of
    the ``resolve_*`` functions without their docstrings, and the ``AUTO_*`` constants, so that documenting a rule
    keeps the cells and changing one re-measures them.
    """
    parts = []
    for name, function in sorted(vars(params_module).items()):
        if name.startswith("resolve_") and callable(function):
            tree = ast.parse(inspect.getsource(function)).body[0]
            if ast.get_docstring(tree) is not None:
                tree.body = tree.body[1:]
            parts.append(ast.dump(tree))
    constants = {name: value for name, value in vars(params_module).items() if name.startswith("AUTO_")}
    return hashlib.sha256(("".join(parts) + repr(sorted(constants.items()))).encode()).hexdigest()[:16]


def tuning_settings(cell):
    """Budget, halving settings and search space of a tuned cell (part of its key)."""
    model, quick = cell["model"], cell["quick"]
    accepted = SparseTabNetClassifier().get_params().keys() if model == "sparsetab" else ()
    return dict(
        budget_cpu_s=configs.QUICK_TUNING_BUDGET_CPU_S if quick else configs.TUNING_BUDGET_CPU_S,
        factor=configs.HALVING_FACTOR,
        cost_multiplier=configs.COST_MULTIPLIER[model],
        max_candidates=configs.QUICK_MAX_CANDIDATES if quick else configs.MAX_CANDIDATES[model],
        min_resources=configs.QUICK_MIN_RESOURCES if quick else configs.MIN_RESOURCES,
        resource="n_samples",
        cv="PredefinedSplit(fit rows / validation rows)",
        space=configs.describe_space(configs.search_space(model, accepted)),
    )


# ---------------------------------------------------------------------------------------------------------------
# Cells


def _predictor(data, codes=False, category=False):
    """``predict(model)`` on the test rows in the representation the model was fitted on."""
    X_test = data["X_test_codes"] if codes else data["X_test_cat"] if category else data["X_test"]
    return _rows_predictor(data["task"], X_test)


def _rows_predictor(task, X):
    """``predict(model)`` on the rows ``X``: ``(classes, proba)`` for classification, the predictions otherwise."""
    if task == "classification":
        return lambda model: (model.classes_, model.predict_proba(X))
    return lambda model: model.predict(X)


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


def fit_once(data, estimator, model, fit_params, protocol="validation"):
    """Fit ``estimator`` (a cell's model) by the single-fit protocol and measure it (:func:`measure`).

    sparsetab: fit rows with early stopping on the validation rows (``protocol="validation"``), or
    ``fit(X_train, y_train)`` on all the training rows without ``X_val`` (``protocol="user"``: its
    ``early_stopping="auto"`` rules decide); pytorch-tabnet: integer-coded fit rows with the validation rows as
    ``eval_set``; HistGradientBoosting and LightGBM: all the training rows (pandas category columns as categorical);
    CatBoost: all the training rows (categorical columns as str, ``cat_features``). Under ``protocol="user"`` the
    error on the rows given to ``fit`` is measured too (``train_metric1``, ``train_metric2``).
    """
    task = data["task"]
    user = protocol == "user"
    if model == "sparsetab":
        if user:
            X_train, y_train = data["X_train"], data["y_train"]

            def fit():
                return estimator.fit(X_train, y_train)

            train = (_rows_predictor(task, X_train), y_train)
            return measure(fit, _predictor(data), data["y_test"], task, lambda m: m.n_iter_, train)

        def fit():
            return estimator.fit(data["X_fit"], data["y_fit"], X_val=data["X_val"], y_val=data["y_val"])

        return measure(fit, _predictor(data), data["y_test"], task, lambda m: m.n_iter_)
    if model == "pytorch-tabnet":
        X_fit, X_val = data["X_fit_codes"], data["X_val_codes"]
        y_fit, y_val = data["y_fit"], data["y_val"]
        if task == "regression":
            y_fit, y_val = y_fit.reshape(-1, 1), y_val.reshape(-1, 1)

        def fit():
            # pytorch-tabnet prints its early-stopping summary whatever ``verbose`` is.
            with contextlib.redirect_stdout(io.StringIO()):
                estimator.fit(X_fit, y_fit, eval_set=[(X_val, y_val)], **fit_params)
            return estimator

        train = (_rows_predictor(task, X_fit), data["y_fit"]) if user else None
        return measure(fit, _predictor(data, codes=True), data["y_test"], task, lambda m: len(m.history["loss"]), train)
    if model == "CatBoost":
        X_train, X_test = with_string_categories(data)
        train = (_rows_predictor(task, X_train), data["y_train"]) if user else None
        return measure(
            lambda: estimator.fit(X_train, data["y_train"]),
            _rows_predictor(task, X_test),
            data["y_test"],
            task,
            lambda m: m.tree_count_,
            train,
        )
    iterations = (
        (lambda m: m.n_iter_) if model == "HistGradientBoosting" else (lambda m: m.booster_.current_iteration())
    )
    train = (_rows_predictor(task, data["X_train_cat"]), data["y_train"]) if user else None
    return measure(
        lambda: estimator.fit(data["X_train_cat"], data["y_train"]),
        _predictor(data, category=True),
        data["y_test"],
        task,
        iterations,
        train,
    )


_PREPARED = {}  # (data set, seed, quick) -> prepared data, per process
_WARMED_UP = []


def prepared(name, seed, quick):
    """:func:`prepare` of ``name``, kept for the next cell of the same process (the last two data sets)."""
    key = (name, seed, quick)
    if key not in _PREPARED:
        while len(_PREPARED) >= 2:
            _PREPARED.pop(next(iter(_PREPARED)))
        _PREPARED[key] = prepare(name, seed, quick)
    return _PREPARED[key]


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


def _sparsetab_source_hash():
    """SHA-256 (16 hex digits) of the imported sparsetab package's ``.py`` files (recorded in every cell)."""
    digest = hashlib.sha256()
    root = Path(sparsetab.__file__).resolve().parent
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def run_cell(cell, cache_root, key):
    """Measure one cell and store it in the cache; the worker function of ``--jobs``.

    Parameters
    ----------
    cell : dict
        ``dataset``, ``model``, ``config``, ``seed``, ``quick``, ``max_epochs``, ``threads``, ``jobs``,
        ``command`` and, for a tuned cell, ``default_cpu_s`` (the CPU seconds of the model's default fit).
    cache_root : str
        Cache folder.
    key : dict
        The cell's key (:func:`cell_key`).

    Returns
    -------
    dict
        The result (stored in the cache), or ``{"error": str}`` (not stored).
    """
    torch.set_num_threads(cell["threads"])
    warnings.filterwarnings("ignore", category=ConvergenceWarning)
    warnings.filterwarnings("ignore", category=UserWarning, module=r"pytorch_tabnet(\.|$)")
    print(f"[{cell['dataset']}] {cell['model']} {cell['config']} seed {cell['seed']} ...", file=sys.stderr, flush=True)
    try:
        with threadpool_limits(limits=cell["threads"]):
            if not _WARMED_UP and cell["model"] in ("sparsetab", "pytorch-tabnet"):
                warm_up()
                _WARMED_UP.append(True)
            data = prepared(cell["dataset"], cell["seed"], cell["quick"])
            estimator, fit_params, _ = build(cell, data["task"], data)
            start_cpu = time.process_time()
            if cell["config"] == "tuned":
                result = run_tuned(data, cell, estimator)
            else:
                result = fit_once(data, estimator, cell["model"], fit_params, cell.get("protocol", "validation"))
            result["cpu_s"] = time.process_time() - start_cpu
    except Exception as exc:
        traceback.print_exc()
        return dict(error=_cell_error(exc))
    result.update(error_value=error_of(cell["dataset"], data["task"], result["metric1"], result["metric2"]))
    if "train_metric1" in result:
        result.update(
            protocol=key_protocol(cell),
            train_error_value=error_of(cell["dataset"], data["task"], result["train_metric1"], result["train_metric2"]),
        )
    result.update(
        data=data_info(data),
        cpu_model=cpu_model(),
        logical_cores=os.cpu_count(),
        threads=cell["threads"],
        jobs=cell["jobs"],
        timestamp=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        command=cell["command"],
        sparsetab_source=_sparsetab_source_hash(),
    )
    CellCache(cache_root).put(key, result)
    return result


def _run_cell_job(index, cell, cache_root, key):
    """``(index, run_cell(...))`` for the unordered parallel generator."""
    return index, run_cell(cell, cache_root, key)


# ---------------------------------------------------------------------------------------------------------------
# Table 4: the tuned cells


def _n_classes(y):
    """Number of distinct labels in ``y``."""
    return len(np.unique(y))


def plan_halving(n_samples, default_cpu_s, budget_cpu_s, multiplier, max_candidates, min_resources, factor):
    """Size a HalvingRandomSearchCV (resource n_samples) to a CPU budget.

    A candidate fitted on ``r`` of the ``n_samples`` rows is assumed to cost ``multiplier * default_cpu_s * r /
    n_samples`` CPU seconds. With ``k + 1`` rounds from ``min_resources = n_samples / factor**k`` rows to all rows and
    ``n`` first-round candidates, every round costs about the same, ``n * multiplier * default_cpu_s / factor**k``,
    so the search costs ``(k + 1)`` times that. The plan takes the most rounds ``k + 1`` (at most 5) whose
    first round has at least ``min_resources`` rows and whose affordable ``n`` (at most ``max_candidates``) still
    leaves a candidate for the last round (``n >= factor**k``).

    Parameters
    ----------
    n_samples : int
        Rows given to the search.
    default_cpu_s : float
        CPU seconds of one default fit on all rows.
    budget_cpu_s, multiplier : float
    max_candidates, min_resources, factor : int

    Returns
    -------
    dict
        ``n_candidates``, ``min_resources``, ``rounds``, ``estimated_cpu_s``.
    """
    per_full_fit = max(multiplier * default_cpu_s, 1e-3)

    def estimate(n_candidates, resources, k):
        """Estimated CPU seconds of a plan."""
        return sum(
            math.ceil(n_candidates / factor**i) * per_full_fit * min(resources * factor**i, n_samples) / n_samples
            for i in range(k + 1)
        )

    for k in range(4, -1, -1):
        resources = n_samples // factor**k  # rounded down, so that the last round's resources fit in n_samples
        if k and resources < min_resources:
            continue
        n_candidates = min(int(budget_cpu_s / ((k + 1) * per_full_fit * resources / n_samples)), max_candidates)
        while n_candidates > 1 and estimate(n_candidates, resources, k) > budget_cpu_s:
            n_candidates -= 1  # the rounding up of the later rounds' candidates
        if n_candidates >= factor**k or k == 0:
            n_candidates = max(n_candidates, 1)
            estimated = estimate(n_candidates, resources, k)
            return dict(n_candidates=n_candidates, min_resources=resources, rounds=k + 1, estimated_cpu_s=estimated)
    raise AssertionError("unreachable")


def run_tuned(data, cell, estimator):
    """HalvingRandomSearchCV of ``estimator`` within the CPU budget, then the refit of the best candidate.

    The search gets the training rows (fit rows then validation rows) with ``PredefinedSplit``: one split,
    candidates train on the fit rows and are scored on the validation rows (the same rows the TabNets early-stop on
    elsewhere), the resource is the number of rows (both parts subsampled alike in the early rounds). The scorer is
    the one of the error (accuracy, ROC AUC for :data:`AUC_ERROR`, RMSE). The best parameters are then refitted by
    the single-fit protocol (sparsetab: fit rows, early stopping on the validation rows; HistGradientBoosting: all
    the training rows) and scored on the test rows.
    """
    from sklearn.experimental import enable_halving_search_cv  # noqa: F401
    from sklearn.model_selection import HalvingRandomSearchCV, PredefinedSplit

    model, task, name = cell["model"], data["task"], data["name"]
    settings = tuning_settings(cell)
    accepted = estimator.get_params().keys()
    if model == "sparsetab":
        X = pd.concat([data["X_fit"], data["X_val"]])
    else:
        X = data["X_train_cat"].loc[np.concatenate([data["X_fit"].index, data["X_val"].index])]
    y = np.concatenate([data["y_fit"], data["y_val"]])
    test_fold = np.r_[np.full(len(data["X_fit"]), -1), np.zeros(len(data["X_val"]), dtype=int)]
    min_resources = settings["min_resources"]
    if task == "classification":
        min_resources = max(min_resources, 20 * _n_classes(y))
    plan = plan_halving(
        len(X),
        cell["default_cpu_s"],
        settings["budget_cpu_s"],
        settings["cost_multiplier"],
        settings["max_candidates"],
        min_resources,
        settings["factor"],
    )
    scoring = "neg_root_mean_squared_error" if task == "regression" else "roc_auc" if name in AUC_ERROR else "accuracy"
    search = HalvingRandomSearchCV(
        estimator,
        configs.search_space(model, accepted),
        n_candidates=plan["n_candidates"],
        factor=settings["factor"],
        resource="n_samples",
        min_resources=plan["min_resources"],
        cv=PredefinedSplit(test_fold),
        scoring=scoring,
        refit=False,
        error_score=np.nan,
        random_state=cell["seed"],
        n_jobs=1,
    )
    start, start_cpu = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X, y)
    search_s, search_cpu_s = time.perf_counter() - start, time.process_time() - start_cpu
    scores = np.asarray(search.cv_results_["mean_test_score"], dtype=float)
    best = dict(search.best_params_)
    refit = sklearn.clone(estimator).set_params(**best)
    result = fit_once(data, refit, model, {})
    result.update(
        search_s=search_s,
        search_cpu_s=search_cpu_s,
        default_cpu_s=cell["default_cpu_s"],
        plan=plan,
        n_candidates=[int(n) for n in search.n_candidates_],
        n_resources=[int(n) for n in search.n_resources_],
        failed_candidates=int(np.isnan(scores).sum()),
        best_params=json_safe(best),
        best_validation_score=float(search.best_score_),
        scoring=scoring,
    )
    return result


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


def warm_up():
    """Fit both TabNets once on tiny random data so one-off torch initialisation is charged to no data set."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=3000), "b": rng.choice(["x", "y"], size=3000)})
    y = (X["a"] > 0).to_numpy().astype(int)
    SparseTabNetClassifier(max_epochs=2, random_state=0).fit(X[:2000], y[:2000], X_val=X[2000:], y_val=y[2000:])
    SparseTabNetRegressor(max_epochs=2, random_state=0).fit(
        X[:2000], X["a"][:2000], X_val=X[2000:], y_val=X["a"][2000:]
    )
    codes = IntegerCodes(X)
    matrix = codes.transform(X)
    with contextlib.redirect_stdout(io.StringIO()):
        model = TabNetClassifier(cat_idxs=codes.cat_idxs, cat_dims=codes.cat_dims, verbose=0, device_name="cpu")
        model.fit(matrix[:2000], y[:2000], eval_set=[(matrix[2000:], y[2000:])], max_epochs=2)
        model = TabNetRegressor(cat_idxs=codes.cat_idxs, cat_dims=codes.cat_dims, verbose=0, device_name="cpu")
        target = matrix[:, :1]
        model.fit(matrix[:2000], target[:2000], eval_set=[(matrix[2000:], target[2000:])], max_epochs=2)


# ---------------------------------------------------------------------------------------------------------------
# Report


def _cell_error(exc):
    """Table cell text for an exception (pipes and newlines removed, at most 160 characters of message)."""
    message = f"{type(exc).__name__}: {exc}".replace("|", "/").replace("\n", " ")
    return "error: " + (message[:160] + "..." if len(message) > 160 else message)


def _format(value, spec):
    """``format(value, spec)``, or "n/a" for None and non-finite floats."""
    return "n/a" if value is None or (isinstance(value, float) and not np.isfinite(value)) else format(value, spec)


def _ratio(numerator, denominator, spec=".2f", smallest=0.0):
    """``numerator / denominator`` formatted, or "n/a" when undefined or either side is below ``smallest``."""
    if numerator is None or denominator is None or denominator <= 0:
        return "n/a"
    if min(numerator, denominator) < smallest:
        return f"n/a (< {smallest:g})"
    return format(numerator / denominator, spec)


class Report:
    """The results of a run and the Markdown built from them.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed options (see :func:`parse_args`).
    plan : dict
        ``{table: (data sets, seeds, [(model, config), ...])}``.
    """

    MODEL_LABELS = {
        ("sparsetab", "same"): "sparsetab",
        ("pytorch-tabnet", "same"): "pytorch-tabnet",
        ("sparsetab", "defaults"): "sparsetab (defaults)",
        ("sparsetab", "old_defaults"): "sparsetab (old defaults)",
        ("pytorch-tabnet", "defaults"): "pytorch-tabnet (defaults)",
        ("HistGradientBoosting", "defaults"): "HistGradientBoosting",
        ("LightGBM", "defaults"): "LightGBM",
        ("CatBoost", "defaults"): "CatBoost",
        ("sparsetab", "tuned"): "sparsetab (tuned)",
        ("HistGradientBoosting", "tuned"): "HistGradientBoosting (tuned)",
    }

    def __init__(self, args, plan):
        self.args = args
        self.plan = plan
        self.results = {}  # (data set, model, config, seed) -> result or {"error": ...}
        self.origin = {}  # same keys -> "cache" / "measured" / "failed"
        self.start = time.perf_counter()

    # -- lookups ------------------------------------------------------------------------------------------------

    def get(self, name, model, config, seed):
        """The result of one cell, or None when not (yet) measured."""
        return self.results.get((name, model, config, seed))

    def info(self, name):
        """The data-set description stored with any finished cell of ``name``, or None."""
        for (dataset, *_), result in self.results.items():
            if dataset == name and "data" in result:
                return result["data"]
        return None

    def summary(self, name, model, config, seeds):
        """Mean and range over ``seeds`` of one model configuration on one data set.

        Returns
        -------
        dict
            ``done`` (seeds measured), ``of``, ``metric`` (list), ``error`` (list), ``train_error`` (list, the cells
            that recorded it: ``--protocol user``), ``fit_s`` (mean), ``errors`` (the failure messages), ``results``
            (the successful results).
        """
        found = [self.get(name, model, config, seed) for seed in seeds]
        ok = [r for r in found if r is not None and "error" not in r]
        metric = [r["metric2"] if name in AUC_ERROR else r["metric1"] for r in ok]
        return dict(
            done=len(ok),
            of=len(seeds),
            metric=metric,
            error=[r["error_value"] for r in ok],
            train_error=[r["train_error_value"] for r in ok if "train_error_value" in r],
            fit_s=float(np.mean([r["fit_s"] for r in ok])) if ok else None,
            errors=sorted({r["error"] for r in found if r is not None and "error" in r}),
            results=ok,
        )

    @staticmethod
    def metric_name(name, task):
        """Name of the metric the error of ``name`` is based on."""
        return "RMSE" if task == "regression" else "ROC AUC" if name in AUC_ERROR else "accuracy"

    def label(self, model, config):
        """Row label of a model configuration."""
        return self.MODEL_LABELS.get((model, config), f"sparsetab ({config})" if model == "sparsetab" else model)

    # -- header -------------------------------------------------------------------------------------------------

    def cells(self):
        """The finished cell results of the planned tables (each cell once)."""
        return [r for r in self.results.values() if "error" not in r]

    def header(self):
        """Machine, versions, command, cells and CPU time, as Markdown lines."""
        args = self.args
        usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        lightgbm_version = lightgbm.__version__ if lightgbm is not None else "not installed (skipped)"
        catboost_version = catboost.__version__ if catboost is not None else "not installed (skipped)"
        cells = self.cells()
        counts = {origin: list(self.origin.values()).count(origin) for origin in ("measured", "cache", "failed")}
        cpu_total = sum(r.get("cpu_s", r.get("fit_cpu_s", 0.0)) for r in cells)
        fit_cpu_total = sum(r.get("fit_cpu_s", 0.0) for r in cells)
        machines = sorted({f"{r['cpu_model']} ({r.get('logical_cores', '?')} cores)" for r in cells})
        settings = sorted({(r["threads"], r["jobs"]) for r in cells})
        sources = sorted({r["sparsetab_source"] for r in cells if "sparsetab_source" in r})
        lines = [
            f"Machine: {cpu_model()}, {os.cpu_count()} logical cores ({usable} usable), {platform.system()} "
            f"{platform.machine()}; {args.threads} thread(s) per cell (torch, OpenMP, LightGBM), {args.jobs} cell(s) "
            "at once" + (" (fit times measured under load)" if args.jobs > 1 else "") + ".",
            f"Versions: Python {platform.python_version()}, torch {torch.__version__}, scikit-learn "
            f"{sklearn.__version__}, pytorch-tabnet {_version('pytorch-tabnet')}, sparsetab {sparsetab.__version__}, "
            f"LightGBM {lightgbm_version}, CatBoost {catboost_version}, pandas {pd.__version__}, numpy "
            f"{np.__version__}.",
            "Command: `" + " ".join(shlex.quote(a) for a in ["python", *sys.argv]) + "`",
            f"Cells: {len(self.origin)} ({counts['measured']} measured in this run, {counts['cache']} read from the "
            f"cache `{_relative(args.cache_dir)}`, {counts['failed']} failed). Measured on: "
            f"{'; '.join(machines) or 'n/a'}; (threads, jobs) of the cells: "
            f"{', '.join(f'({t}, {j})' for t, j in settings) or 'n/a'}.",
            f"Total CPU time of the cells in this file: {cpu_total:,.0f} s ({cpu_total / 3600:.2f} h; fits alone "
            f"{fit_cpu_total:,.0f} s), cached or not. Wall time of this run: "
            f"{time.perf_counter() - self.start:,.0f} s.",
        ]
        if args.protocol == "user":
            lines.insert(
                2,
                f"Protocol: user (`--protocol user`; cache keys `{USER_PROTOCOL}` for sparsetab, "
                f"`{USER_PEER_PROTOCOL}` for the peers): sparsetab is fitted with `fit(X_train, y_train)` on all the "
                'training rows, no `X_val`, so its own `early_stopping="auto"` rules decide; pytorch-tabnet keeps '
                "its `eval_set` protocol; the boosting models are fitted on all the training rows as always. Training "
                "errors are recorded (see the protocol notes).",
            )
        if len(sources) > 1:
            lines.append(
                f"Note: the sparsetab cells come from {len(sources)} different versions of the sparsetab source "
                f"({', '.join(sources)}; same constructor parameters); `--refresh` re-measures them with today's."
            )
        return lines

    def dataset_lines(self):
        """The data-set table and notes."""
        names = [n for n in DATASETS if any(n in datasets for datasets, _, _ in self.plan.values())]
        lines = [
            "## Data sets",
            "",
            "| data set | task | train rows (fit + val) | test rows | features (categorical) |",
        ]
        lines += ["|---|---|---|---|---|"]
        notes = []
        for name in names:
            info = self.info(name)
            if info is None:
                lines.append(f"| {name} | n/a | n/a | n/a | n/a |")
                continue
            task = info["task"] if info["n_classes"] is None else f"{info['n_classes']}-class"
            lines.append(
                f"| {name} | {task} | {info['fit_rows']:,} + {info['val_rows']:,} | {info['test_rows']:,} | "
                f"{info['features']} ({info['categorical']}) |"
            )
            notes.append(f"- {name}: {info['note']}")
        return lines + [""] + notes

    # -- tables 1 and 2 -----------------------------------------------------------------------------------------

    def single_seed_table(self, table):
        """Tables 1 and 2: per task the results of one seed, then the sparsetab / pytorch-tabnet ratios."""
        datasets, seeds, models = self.plan[table]
        seed = seeds[0]
        lines = [f"Seed {seed}.", ""]
        for task in ("classification", "regression"):
            names = [n for n in datasets if task_of(n) == task]
            if not names:
                continue
            first, second = ("test accuracy", "ROC AUC") if task == "classification" else ("test RMSE", "R^2")
            lines += [
                f"{task.capitalize()}:",
                "",
                f"| data set | model | {first} | {second} | fit s | epochs | predict rows/s | peak fit MiB |",
                "|---|---|---|---|---|---|---|---|",
            ]
            for name in names:
                for model, config in models:
                    result = self.get(name, model, config, seed)
                    if result is None:
                        continue
                    label = model
                    if "error" in result:
                        lines.append(f"| {name} | {label} | {result['error']} | | | | | |")
                        continue
                    lines.append(
                        f"| {name} | {label} | {_format(result['metric1'], '.4f')} | "
                        f"{_format(result['metric2'], '.4f')} | {_format(result['fit_s'], '.1f')} | "
                        f"{result['epochs']} | {_format(result['predict_rows_s'], ',.0f')} | "
                        f"{_format(result['peak_mib'], '.1f')} |"
                    )
            lines.append("")
        lines += [
            "Ratios sparsetab / pytorch-tabnet:",
            "",
            "| data set | fit s ratio | predict rows/s ratio | peak fit MiB ratio | "
            "epochs (sparsetab / pytorch-tabnet) |",
            "|---|---|---|---|---|",
        ]
        ours_config = models[0][1]
        for name in datasets:
            ours = self.get(name, "sparsetab", ours_config, seed) or {}
            theirs = self.get(name, "pytorch-tabnet", ours_config, seed) or {}
            if "error" in ours or "error" in theirs or not ours or not theirs:
                lines.append(f"| {name} | n/a | n/a | n/a | n/a |")
                continue
            lines.append(
                f"| {name} | {_ratio(ours['fit_s'], theirs['fit_s'])} | "
                f"{_ratio(ours['predict_rows_s'], theirs['predict_rows_s'])} | "
                f"{_ratio(ours['peak_mib'], theirs['peak_mib'], smallest=1.0)} | "
                f"{ours['epochs']} / {theirs['epochs']} |"
            )
        return lines

    # -- table 3 ------------------------------------------------------------------------------------------------

    @staticmethod
    def _mean(values):
        """Mean of ``values``, or None when empty."""
        return float(np.mean(values)) if values else None

    @staticmethod
    def _range(values, spec):
        """``"min–max"`` of ``values`` formatted with ``spec``, or "n/a"."""
        return f"{min(values):{spec}}–{max(values):{spec}}" if values else "n/a"

    def _seeds_text(self, summary):
        """``"done/of"`` seeds of a :meth:`summary`."""
        return f"{summary['done']}/{summary['of']}"

    def seeds_table(self):
        """Table 3: mean and range over seeds, error ratios to HistGradientBoosting (and CatBoost when it is in the
        plan), their geometric means over the data sets, and the goal summary; under ``--protocol user`` the
        training error next to the test error."""
        datasets, seeds, models = self.plan["seeds"]
        references = [("HistGradientBoosting", "HGB")]
        if ("CatBoost", "defaults") in models:
            references.append(("CatBoost", "CatBoost"))
        user = self.args.protocol == "user"
        intro = (
            f"Seeds {', '.join(map(str, seeds))}. Error: 1 - accuracy (1 - ROC AUC for "
            f"{', '.join(AUC_ERROR)}), RMSE for regression; error / HGB is the ratio of the mean errors."
        )
        if len(references) > 1:
            intro += " error / CatBoost: the same against CatBoost."
        if user:
            intro += (
                " train error: the same error on the rows given to `fit` (sparsetab and the boosting models: all the "
                "training rows, including any sparsetab holds out itself; pytorch-tabnet: the fit rows, not its "
                "`eval_set`), mean over the seeds."
            )
        columns = ["data set", "model", "metric", "mean", "range", "error mean"]
        columns += ["train error mean"] if user else []
        columns += [f"error / {short}" for _, short in references] + ["fit s mean", "seeds"]
        lines = [intro, "", "| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
        failures = []
        goal = []
        ratios = {(model, config): {short: [] for _, short in references} for model, config in models}
        for name in datasets:
            task = task_of(name)
            reference_errors = {
                short: self._mean(self.summary(name, model, "defaults", seeds)["error"]) for model, short in references
            }
            means = {}
            for model, config in models:
                summary = self.summary(name, model, config, seeds)
                error = self._mean(summary["error"])
                means[model, config] = error
                seeds_text = self._seeds_text(summary)
                if summary["errors"]:
                    failures += [f"- {name}, {self.label(model, config)}: {message}" for message in summary["errors"]]
                    seeds_text += " (failed: see below)"
                cells = [
                    name,
                    self.label(model, config),
                    self.metric_name(name, task),
                    _format(self._mean(summary["metric"]), ".4f"),
                    self._range(summary["metric"], ".4f"),
                    _format(error, ".4f"),
                ]
                if user:
                    cells.append(_format(self._mean(summary["train_error"]), ".4f"))
                for _, short in references:
                    reference = reference_errors[short]
                    cells.append(_ratio(error, reference, ".3f"))
                    if error is not None and reference is not None and reference > 0 and error > 0:
                        ratios[model, config][short].append(error / reference)
                cells += [_format(summary["fit_s"], ".1f"), seeds_text]
                lines.append("| " + " | ".join(cells) + " |")
            goal.append((name, means))
        lines += ["", *self.geometric_mean_lines(models, references, ratios, len(datasets))]
        if failures:
            lines += ["", "Failed cells:", "", *failures]
        lines += ["", *self.goal_lines(goal, len(seeds))]
        return lines

    def geometric_mean_lines(self, models, references, ratios, n_datasets):
        """Under Table 3: per model row, the geometric mean and the worst of its error ratios over the data sets."""
        names = " and ".join(f"error / {short}" for _, short in references)
        columns = ["model"]
        for _, short in references:
            columns += [f"error / {short}, geometric mean", f"worst / {short}", "data sets"]
        lines = [
            f"Geometric mean over the data sets of {names} (the ratios of the mean errors above; a data set counts "
            "where both mean errors are measured and above 0):",
            "",
            "| " + " | ".join(columns) + " |",
            "|" + "---|" * len(columns),
        ]
        for model, config in models:
            cells = [self.label(model, config)]
            for _, short in references:
                values = ratios[model, config][short]
                geometric = float(np.exp(np.mean(np.log(values)))) if values else None
                cells += [
                    _format(geometric, ".3f"),
                    _format(max(values) if values else None, ".3f"),
                    f"{len(values)} of {n_datasets}",
                ]
            lines.append("| " + " | ".join(cells) + " |")
        return lines

    def goal_lines(self, goal, n_seeds):
        """The goal summary of issue 17 under Table 3."""
        lines = [
            "Goal (issue 17; mean errors over the seeds): sparsetab (defaults) no worse than pytorch-tabnet on every "
            "data set, within 3% of HistGradientBoosting (error <= 1.03 x HGB's) on at least 5 of 8, within 10% on "
            "every one.",
            "",
            "| data set | sparsetab (defaults) error | pytorch-tabnet | HGB | <= pytorch-tabnet | <= 1.03 x HGB | "
            "<= 1.10 x HGB |",
            "|---|---|---|---|---|---|---|",
        ]
        counts = [0, 0, 0]
        complete = 0
        for name, means in goal:
            ours = means.get(("sparsetab", "defaults"))
            theirs = means.get(("pytorch-tabnet", "defaults"))
            hgb = means.get(("HistGradientBoosting", "defaults"))
            checks = [
                None if ours is None or theirs is None else ours <= theirs,
                None if ours is None or hgb is None else ours <= 1.03 * hgb,
                None if ours is None or hgb is None else ours <= 1.10 * hgb,
            ]
            if all(check is not None for check in checks):
                complete += 1
            for i, check in enumerate(checks):
                counts[i] += bool(check)
            marks = ["n/a" if check is None else "yes" if check else "no" for check in checks]
            lines.append(
                f"| {name} | {_format(ours, '.4f')} | {_format(theirs, '.4f')} | {_format(hgb, '.4f')} | "
                + " | ".join(marks)
                + " |"
            )
        n = len(goal)
        lines += [
            "",
            f"Counts over the {n} data set(s) of this run ({complete} complete): <= pytorch-tabnet on {counts[0]} of "
            f"{n}; within 3% of HGB on {counts[1]} of {n} (goal: at least 5 of 8); within 10% on {counts[2]} of {n} "
            "(goal: all 8)." + (f" Only {n_seeds} seed(s): the goal is stated for 3." if n_seeds < 3 else ""),
        ]
        return lines

    # -- ablation -----------------------------------------------------------------------------------------------

    def screen_table(self):
        """The ablation: per variant the error mean (range) per data set, the mean ratios and the fit seconds."""
        datasets, seeds, models = self.plan["screen"]
        variants = [config for model, config in models if model == "sparsetab"]
        base = "old_defaults" if "old_defaults" in variants else None
        lines = [
            f"Seeds {', '.join(map(str, seeds))}; cells: error mean (min–max over the seeds). Variants apply on top of "
            "old_defaults unless they name a base (configs.py). error / HGB: mean over the data sets of the ratio "
            "of the mean errors to HistGradientBoosting's"
            + ("; error / old: the same against old_defaults" if base else "")
            + ". fit s: mean over data sets and seeds.",
            "",
            "| variant | "
            + " | ".join(datasets)
            + " | error / HGB |"
            + (" error / old |" if base else "")
            + " fit s mean |",
            "|---|" + "---|" * len(datasets) + "---|" + ("---|" if base else "") + "---|",
        ]
        failures = []
        hgb = {
            name: self._mean(self.summary(name, "HistGradientBoosting", "defaults", seeds)["error"])
            for name in datasets
        }
        old = (
            {name: self._mean(self.summary(name, "sparsetab", base, seeds)["error"]) for name in datasets}
            if base
            else {}
        )
        rows = [("sparsetab", variant) for variant in variants] + [("HistGradientBoosting", "defaults")]
        for model, config in rows:
            cells, ratios, ratios_old, fit = [], [], [], []
            for name in datasets:
                summary = self.summary(name, model, config, seeds)
                error = self._mean(summary["error"])
                if summary["errors"]:
                    failures += [f"- {config}, {name}: {message}" for message in summary["errors"]]
                text = (
                    "failed"
                    if summary["errors"] and not summary["done"]
                    else (f"{_format(error, '.4f')} ({self._range(summary['error'], '.4f')})")
                )
                if summary["done"] < summary["of"]:
                    text += f" [{summary['done']}/{summary['of']}]"
                cells.append(text)
                if error is not None and hgb[name]:
                    ratios.append(error / hgb[name])
                if error is not None and old.get(name):
                    ratios_old.append(error / old[name])
                fit += [r["fit_s"] for r in summary["results"]]
            label = config if model == "sparsetab" else "HistGradientBoosting (reference)"
            line = f"| {label} | " + " | ".join(cells) + f" | {_format(self._mean(ratios), '.3f')} |"
            if base:
                line += f" {_format(self._mean(ratios_old), '.3f')} |"
            lines.append(line + f" {_format(self._mean(fit), '.1f')} |")
        if failures:
            lines += ["", "Failed cells:", "", *sorted(set(failures))]
        return lines

    # -- table 4 ------------------------------------------------------------------------------------------------

    def tuned_table(self):
        """Table 4: tuned sparsetab and HistGradientBoosting (defaults for reference), search costs, best params."""
        datasets, seeds, models = self.plan["tuned"]
        budget = configs.QUICK_TUNING_BUDGET_CPU_S if self.args.quick else configs.TUNING_BUDGET_CPU_S
        lines = [
            f"Seeds {', '.join(map(str, seeds))}; budget {budget:.0f} CPU s per search; error / tuned HGB is the "
            "ratio of the mean errors.",
            "",
            "| data set | model | metric | mean | range | error mean | error / tuned HGB | search CPU s | "
            "refit s | seeds |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        details, failures, wins, complete = [], [], 0, 0
        for name in datasets:
            tuned_hgb = self._mean(self.summary(name, "HistGradientBoosting", "tuned", seeds)["error"])
            tuned_ours = None
            for model, config in models:
                summary = self.summary(name, model, config, seeds)
                error = self._mean(summary["error"])
                if model == "sparsetab" and config == "tuned":
                    tuned_ours = error
                search = [r["search_cpu_s"] for r in summary["results"] if "search_cpu_s" in r]
                search_text = _format(self._mean(search), ",.0f") if search else ""
                if search and max(search) > budget:
                    search_text += " (over budget)"
                if summary["errors"]:
                    failures += [f"- {name}, {self.label(model, config)}: {message}" for message in summary["errors"]]
                lines.append(
                    f"| {name} | {self.label(model, config)} | {self.metric_name(name, task_of(name))} | "
                    f"{_format(self._mean(summary['metric']), '.4f')} | {self._range(summary['metric'], '.4f')} | "
                    f"{_format(error, '.4f')} | {_ratio(error, tuned_hgb, '.3f')} | {search_text} | "
                    f"{_format(summary['fit_s'], '.1f')} | {self._seeds_text(summary)} |"
                )
                for seed, result in zip(seeds, [self.get(name, model, config, s) for s in seeds]):
                    if result is None or "error" in result or "best_params" not in result:
                        continue
                    rounds = ", ".join(f"{c}@{r:,}" for c, r in zip(result["n_candidates"], result["n_resources"]))
                    details.append(
                        f"- {name}, {model}, seed {seed}: candidates@rows per round {rounds}; "
                        f"{result['search_cpu_s']:,.0f} CPU s (planned {result['plan']['estimated_cpu_s']:,.0f} from a "
                        f"default fit of {result['default_cpu_s']:.1f} CPU s); {result['failed_candidates']} failed "
                        f"candidate fit(s); best validation {result['scoring']} {result['best_validation_score']:.4f}; "
                        f"best `{result['best_params']}`"
                    )
            if tuned_ours is not None and tuned_hgb is not None:
                complete += 1
                wins += tuned_ours <= tuned_hgb
        lines += [
            "",
            f"Goal (issue 17): tuned sparsetab matches or beats tuned HGB (error <= HGB's) on at least 2 of the 4 "
            f"screening sets: {wins} of {complete} here.",
        ]
        if failures:
            lines += ["", "Failed cells:", "", *failures]
        if details:
            lines += ["", "Searches:", "", *details]
        return lines

    # -- protocol and whole file --------------------------------------------------------------------------------

    def protocol_notes(self):
        """Markdown bullet list describing what was run."""
        args = self.args
        epochs = f"{QUICK_EPOCHS} (--quick)" if args.quick else str(args.max_epochs)
        splits = self.user_protocol_notes() or [
            "- Splits: the test rows are fixed per data set (see the data set table). For each seed the training rows "
            "are split (random_state = seed, stratified for classification) into 90% fit rows and 10% validation "
            "rows; both TabNets train on the fit rows and early-stop on the same validation rows (sparsetab: "
            "`fit(X, y, X_val=..., y_val=...)`, pytorch-tabnet: `eval_set`). HistGradientBoosting and LightGBM are "
            "fitted on all the training rows with their defaults (HistGradientBoosting's early stopping 'auto' holds "
            "out its own 10% above 10,000 rows; LightGBM: 100 trees, no early stopping). The seed is also every "
            "model's random state."
        ]
        notes = [
            *splits,
            f"- Table 1: both TabNets n_d = n_a = 8, n_steps 3, gamma 1.3, n_independent = n_shared = 2, "
            f"lambda_sparse 1e-3, momentum 0.02, batch 1024, virtual batch 128, Adam lr 0.02, sparsemax, cat_emb_dim "
            f"1, max_epochs {epochs}, patience {PATIENCE} on the validation loss (pytorch-tabnet "
            "`eval_metric=['logloss']` / `['mse']`, sparsetab `scoring='loss'`). Left at each library's default: "
            "gradient clipping at norm 1 in both (sparsetab max_grad_norm, pytorch-tabnet clip_value), minimum "
            "improvement (sparsetab tol 1e-4, pytorch-tabnet any), last batch (pytorch-tabnet drops the incomplete "
            "one, sparsetab uses near-equal batches).",
            "- Table 2 (and the defaults rows of Tables 3 and 4): `SparseTabNetClassifier(random_state=seed)` / "
            "`SparseTabNetRegressor(random_state=seed)`; pytorch-tabnet constructor defaults (seed, "
            "cat_idxs/cat_dims, verbose=0, device_name='cpu' set) and its README's fit defaults max_epochs=200 (the "
            "4.1.0 code default is 100), patience=10, batch_size=1024, virtual_batch_size=128, default eval_metric "
            "(binary: AUC, multiclass: accuracy, regression: MSE). "
            + (f"Under --quick both TabNets are capped at {QUICK_EPOCHS} epochs here too. " if args.quick else "")
            + "HistGradientBoosting's defaults are the Table 1 setting, so every table shows the same boosting "
            "fits (one cell per data set and seed).",
            "- Table 3 and the ablation: `old_defaults` is sparsetab 0.1.0's defaults written out (configs.py, with "
            "the legacy values of the newer parameters the installed version accepts); `defaults` is whatever the "
            "installed estimator's defaults are (the cache key holds its `get_params()`).",
            "- Table 4: `HalvingRandomSearchCV` (factor 3, resource = number of rows, `PredefinedSplit`: candidates "
            "train on the fit rows and are scored on the validation rows, both subsampled alike in the early "
            "rounds; scorer accuracy, roc_auc for "
            f"{', '.join(AUC_ERROR)}, neg RMSE for regression; random_state = seed; failed candidates score NaN). "
            "Bases: sparsetab defaults with `early_stopping=True` (its own 10% of the candidate's rows), "
            "HistGradientBoosting with `early_stopping=True, max_iter=1000`. Spaces (configs.py): sparsetab "
            f"{configs.describe_space(configs.search_space('sparsetab', SparseTabNetClassifier().get_params()))}; "
            f"HistGradientBoosting {configs.describe_space(configs.search_space('HistGradientBoosting'))}. Budget: "
            "the number of candidates and rounds are chosen (configs.py, `plan_halving`) so that the search costs at "
            "most the budget if a candidate on all rows costs "
            f"{configs.COST_MULTIPLIER['sparsetab']} (sparsetab) / {configs.COST_MULTIPLIER['HistGradientBoosting']} "
            "(HGB) times the measured CPU seconds of the default fit of the same data set and seed, and scales with "
            "its rows; the actual CPU seconds are reported. The best candidate is then refitted by the single-fit "
            "protocol (sparsetab: fit rows, early stopping on the validation rows; HGB: all training rows) and "
            "scored on the test rows; 'refit s' is that fit.",
            "- Fit seconds exclude the integer coding for pytorch-tabnet and the category conversion for the boosting "
            "models (done beforehand); sparsetab's fit includes its own encoding of the DataFrame. pytorch-tabnet's "
            "fit includes its default `compute_importance=True` (feature importances over the fit rows); "
            "sparsetab's includes `feature_importances_` on at most 10,000 rows. CPU seconds are "
            "`time.process_time()` of the cell's process (all its threads).",
            "- Scaling: sparsetab standardises the numeric inputs (and regression targets) itself; pytorch-tabnet gets "
            "the raw values, as its documentation shows (its only input normalisation is a batch norm with momentum "
            "0.01, whose running statistics lag in short runs, and the regression target is not scaled).",
            "- Peak fit MiB: peak RSS during fit (sampled every 5 ms) minus the RSS just before fit, after "
            "`gc.collect()` and glibc `malloc_trim(0)`, in the cell's process (libraries' caches that outlive a fit, "
            "e.g. torch's, are not counted again by later fits of that process); ratio n/a when either side is under "
            "1 MiB. Epochs of the boosting models are iterations (trees per class).",
            "- Cells are cached (`benchmarks/results/cache/`, see the module docstring): a cached cell keeps the "
            "timings of the run that measured it (its machine, threads and jobs are in the header).",
        ]
        if args.quick:
            notes.append(
                f"- QUICK RUN: at most {QUICK_ROWS:,} training rows (random subsample) and {QUICK_EPOCHS} epochs, "
                f"searches within {configs.QUICK_TUNING_BUDGET_CPU_S:.0f} CPU s with at most "
                f"{configs.QUICK_MAX_CANDIDATES} candidates; the numbers only show that everything runs."
            )
        if lightgbm is None:
            notes.append("- LightGBM is not installed: skipped.")
        if any(("CatBoost", "defaults") in models for _, _, models in self.plan.values()):
            notes.append(
                "- CatBoost (Tables 2 and 3): `CatBoostClassifier` / `CatBoostRegressor(random_seed=seed, verbose=0, "
                "thread_count=<threads>, allow_writing_files=False)` with `cat_features` = the categorical columns "
                "converted to str (numeric columns as they are), fitted on all the training rows with its defaults "
                "(1,000 trees of depth 6, no early stopping without an eval set); epochs are its trees. Fit seconds "
                "exclude the str conversion."
            )
        elif catboost is None and any(table in ("defaults", "seeds") for table in self.plan):
            notes.append("- CatBoost is not installed: skipped.")
        return notes

    def user_protocol_notes(self):
        """The splits and training-error notes of ``--protocol user`` (none under ``--protocol validation``)."""
        if self.args.protocol != "user":
            return []
        return [
            f"- Splits, PROTOCOL USER (`--protocol user`; cache keys `{USER_PROTOCOL}` for sparsetab, "
            f"`{USER_PEER_PROTOCOL}` for the peers): the test rows are fixed per data set (see the data set table). "
            "sparsetab is fitted as users call it, `fit(X_train, y_train)` on all the training rows (fit + validation "
            "rows of the data set table, in their original order: the rows the boosting models get) without `X_val`, "
            'so its own `early_stopping="auto"` rules decide whether it holds out rows of its own and how it uses '
            "them (the key of a sparsetab cell holds the hash of those rules, as small_tables.py's does). "
            "pytorch-tabnet keeps the validation protocol: for each seed the training rows are split (random_state = "
            "seed, stratified for classification) into 90% fit rows and 10% validation rows, and it trains on the fit "
            "rows and early-stops on the validation rows (`eval_set`); it has no user protocol without `eval_set` "
            "(its `fit` without one does no early stopping and trains all `max_epochs`, keeping the last epoch's "
            "weights). HistGradientBoosting and LightGBM are fitted on all the training rows with their defaults "
            "(HistGradientBoosting's early stopping 'auto' holds out its own 10% above 10,000 rows; LightGBM: 100 "
            "trees, no early stopping), as under the default protocol. The seed is also every model's random state.",
            "- Train error (`--protocol user`, Table 3): the error of the test columns (same metric) on the rows given "
            "to `fit`: sparsetab and the boosting models all the training rows (including any rows sparsetab holds out "
            "itself), pytorch-tabnet its fit rows (not the `eval_set` rows). It is predicted after the timings (not in "
            "fit s or predict rows/s; in the cell's CPU seconds).",
        ]

    def markdown(self):
        """The whole Markdown report of the cells finished so far."""
        lines = ["# sparsetab vs pytorch-tabnet vs gradient boosting", "", *self.header(), ""]
        lines += self.dataset_lines()
        lines += ["", "## Protocol", "", *self.protocol_notes()]
        builders = {
            "same": lambda: self.single_seed_table("same"),
            "defaults": lambda: self.single_seed_table("defaults"),
            "seeds": self.seeds_table,
            "screen": self.screen_table,
            "tuned": self.tuned_table,
        }
        for table in self.args.tables:
            lines += ["", f"## {TABLE_TITLES[table]}", "", *builders[table]()]
        return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------------------
# Running


def table_plan(args):
    """``{table: (data sets, seeds, [(model, config), ...])}`` of the requested tables."""
    boosting = [("HistGradientBoosting", "defaults")] + ([("LightGBM", "defaults")] if lightgbm is not None else [])
    with_catboost = [*boosting] + ([("CatBoost", "defaults")] if catboost is not None else [])
    models = {
        "same": [("sparsetab", "same"), ("pytorch-tabnet", "same"), *boosting],
        "defaults": [("sparsetab", "defaults"), ("pytorch-tabnet", "defaults"), *with_catboost],
        "seeds": [
            ("sparsetab", "old_defaults"),
            ("sparsetab", "defaults"),
            ("pytorch-tabnet", "defaults"),
            *with_catboost,
        ],
        "screen": [("sparsetab", variant) for variant in args.variants] + [("HistGradientBoosting", "defaults")],
        "tuned": [
            ("sparsetab", "defaults"),
            ("sparsetab", "tuned"),
            ("HistGradientBoosting", "defaults"),
            ("HistGradientBoosting", "tuned"),
        ],
    }
    plan = {}
    for table in args.tables:
        seeds = tuple(args.seeds) if args.seeds else TABLE_SEEDS[table]
        if table in ("same", "defaults"):
            seeds = seeds[:1]
        datasets = tuple(args.datasets) if args.datasets else TABLE_DATASETS[table]
        plan[table] = (datasets, seeds, models[table])
    return plan


def planned_cells(plan, args):
    """The distinct cells of ``plan``, data set by data set (in the order of ``DATASETS``)."""
    command = " ".join(shlex.quote(a) for a in ["python", *sys.argv])
    cells = {}
    for name in DATASETS:
        for datasets, seeds, models in plan.values():
            if name not in datasets:
                continue
            for seed in seeds:
                for model, config in models:
                    cells.setdefault(
                        (name, model, config, seed),
                        dict(
                            dataset=name,
                            model=model,
                            config=config,
                            seed=seed,
                            quick=args.quick,
                            max_epochs=args.max_epochs,
                            protocol=args.protocol,
                            threads=args.threads,
                            jobs=args.jobs,
                            command=command,
                        ),
                    )
    return cells


def execute(pending, keys, cache_root, args, on_result):
    """Run the ``pending`` cells, ``args.jobs`` at once, and call ``on_result(cell id, result)`` as each ends.

    Parameters
    ----------
    pending : dict
        ``{cell id: cell}``.
    keys : dict
        ``{cell id: key}``.
    cache_root : str
    args : argparse.Namespace
    on_result : callable
    """
    if not pending:
        return
    ids = list(pending)
    if args.jobs == 1:
        for index in ids:
            on_result(index, run_cell(pending[index], cache_root, keys[index]))
        return
    import compare  # the worker function by its module's name (this file may run as __main__)
    from joblib import Parallel, delayed

    jobs = Parallel(n_jobs=args.jobs, backend="loky", return_as="generator_unordered")
    calls = (delayed(compare._run_cell_job)(index, pending[index], cache_root, keys[index]) for index in ids)
    for index, result in jobs(calls):
        on_result(index, result)


def parse_args(argv=None):
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--datasets",
        nargs="+",
        choices=DATASETS,
        metavar="NAME",
        help="default: all 8 for tables 1-3, the 4 screening sets for the ablation and table 4",
    )
    parser.add_argument("--tables", nargs="+", default=list(DEFAULT_TABLES), choices=TABLES)
    parser.add_argument(
        "--variants",
        nargs="+",
        default=list(DEFAULT_VARIANTS),
        metavar="CONFIG",
        help="configurations of the ablation (configs.py names, parts joined by +, e.g. cosine+wide+ple)",
    )
    seeds = parser.add_mutually_exclusive_group()
    seeds.add_argument(
        "--seeds", nargs="+", type=int, help="seeds of every table (default: 0 for tables 1, 2, 4; 0 1 2 otherwise)"
    )
    seeds.add_argument("--seed", type=int, help="the same as --seeds SEED")
    parser.add_argument("--max-epochs", type=int, default=100, help="max_epochs of Table 1 (default 100)")
    parser.add_argument("--threads", type=int, default=1, help="threads per cell (torch, OpenMP, LightGBM, CatBoost)")
    parser.add_argument("--jobs", type=int, default=1, help="cells run at once in separate processes (default 1)")
    parser.add_argument("--refresh", action="store_true", help="re-measure cached cells (and overwrite them)")
    parser.add_argument(
        "--cache-dir",
        help=f"cell cache (default {CACHE_DIR.relative_to(RESULTS_DIR.parent.parent)}, "
        f"under --quick {QUICK_CACHE_DIR.relative_to(RESULTS_DIR.parent.parent)})",
    )
    parser.add_argument(
        "--protocol",
        choices=PROTOCOLS,
        default="validation",
        help="validation (default): sparsetab fit(X_fit, y_fit, X_val=..., y_val=...) on 90%% of the training rows, "
        "early stopping on the other 10%%; user: sparsetab fit(X_train, y_train) on all of them, its own "
        "early_stopping='auto' rules, and the training error of every model recorded (not with --tables tuned)",
    )
    parser.add_argument("--output", help="also write the Markdown to this file (rewritten as cells finish)")
    parser.add_argument(
        "--quick", action="store_true", help=f"smoke run: <= {QUICK_ROWS} training rows, {QUICK_EPOCHS} epochs"
    )
    args = parser.parse_args(argv)
    if args.seed is not None:
        args.seeds = [args.seed]
    if args.quick:
        args.max_epochs = QUICK_EPOCHS
    if args.cache_dir is None:
        args.cache_dir = str(QUICK_CACHE_DIR if args.quick else CACHE_DIR)
    if args.jobs < 1 or args.threads < 1:
        parser.error("--jobs and --threads must be at least 1")
    if args.protocol == "user" and "tuned" in args.tables:
        parser.error("--protocol user does not apply to --tables tuned (its searches score on the validation rows)")
    return args


def main(argv=None):
    """Run the benchmark and print (and optionally write) the Markdown report.

    Parameters
    ----------
    argv : list of str, default=None
        Command-line arguments (``sys.argv[1:]`` when None).
    """
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    if lightgbm is None:
        print("note: LightGBM is not importable; it is skipped.", file=sys.stderr)
    if catboost is None:
        print("note: CatBoost is not importable; it is skipped.", file=sys.stderr)
    plan = table_plan(args)
    report = Report(args, plan)
    cells = planned_cells(plan, args)
    cache = CellCache(args.cache_dir, refresh=args.refresh)
    keys, pending = {}, {}
    for index, cell in cells.items():
        try:
            keys[index] = cell_key(cell)
        except Exception as exc:
            report.results[index], report.origin[index] = dict(error=_cell_error(exc)), "failed"
            continue
        record = cache.get(keys[index])
        if record is not None:
            report.results[index], report.origin[index] = record["result"], "cache"
        else:
            pending[index] = cell

    # Cells whose keys differ only in the configuration's name (e.g. old_defaults and defaults while the defaults
    # are the old ones) are measured once and stored under each name.
    twins, first = {}, {}
    for index in list(pending):
        same = key_hash({name: value for name, value in keys[index].items() if name != "config"})
        if same in first:
            twins.setdefault(first[same], []).append(index)
            del pending[index]
        else:
            first[same] = index

    def on_result(index, result):
        report.results[index] = result
        report.origin[index] = "failed" if "error" in result else "measured"
        for twin in twins.get(index, []):
            report.results[twin], report.origin[twin] = result, report.origin[index]
            if "error" not in result:
                cache.put(keys[twin], result)
        if args.output:  # rewritten after each cell, so a long run that is stopped keeps a report of what it did
            Path(args.output).write_text(report.markdown() + "\n")

    cached = sum(1 for origin in report.origin.values() if origin == "cache")
    print(
        f"{len(cells)} cells: {cached} cached, {len(pending)} to measure ({sum(map(len, twins.values()))} more are "
        f"copies of those), {args.jobs} at once.",
        file=sys.stderr,
        flush=True,
    )
    plain = {index: cell for index, cell in pending.items() if cell["config"] != "tuned"}
    execute(plain, keys, args.cache_dir, args, on_result)
    tuned = {}
    for index, cell in pending.items():
        if cell["config"] != "tuned":
            continue
        default = report.get(cell["dataset"], cell["model"], "defaults", cell["seed"])
        if default is None or "error" in default:
            on_result(index, dict(error="error: the default fit this search is sized from failed"))
            continue
        tuned[index] = dict(cell, default_cpu_s=default["fit_cpu_s"])
    execute(tuned, keys, args.cache_dir, args, on_result)
    text = report.markdown()
    print(text)
    if args.output:
        Path(args.output).write_text(text + "\n")


if __name__ == "__main__":
    main()
