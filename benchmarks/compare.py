"""sparsetab against pytorch-tabnet 4.1.0 and gradient boosting on eight real data sets, same splits, one process.

For each data set the models are fitted on the same training rows and scored on the same test rows:

- ``SparseTabNetClassifier`` / ``SparseTabNetRegressor`` (this package, fed the DataFrame as it is);
- pytorch-tabnet's ``TabNetClassifier`` / ``TabNetRegressor`` (categorical columns as integer codes learned
  on the training rows, one extra code for unseen categories, with ``cat_idxs``, ``cat_dims``, ``cat_emb_dim=1``);
- scikit-learn's ``HistGradientBoostingClassifier`` / ``Regressor`` (``categorical_features="from_dtype"`` on
  pandas ``category`` columns) and LightGBM when it is importable (skipped with a note otherwise).

Two tables:

1. ``same``: both TabNets with the same architecture and training settings (n_d = n_a = 8, n_steps = 3,
   gamma 1.3, n_independent = n_shared = 2, lambda_sparse 1e-3, momentum 0.02, batch 1024, virtual batch 128,
   Adam with learning rate 0.02, sparsemax, embedding width 1, ``--max-epochs``, early stopping with
   patience 10 on the validation loss);
2. ``defaults``: each library's documented defaults (plus the random seed).

The TabNets train on 90% of the training rows and early-stop on the other 10% (the same rows for both,
split off once, stratified for classification); the boosting models are fitted on all the training rows
with their defaults. Reported per data set and model: test accuracy and ROC AUC (macro one-vs-rest for
multiclass) or RMSE (in the target's units) and R^2, fit seconds, epochs (boosting: iterations) run,
predicted test rows per second (``predict_proba`` / ``predict``), the peak RSS increase during ``fit``
(sampled every 5 ms by a background thread, relative to the RSS just before ``fit``) and the ratios
sparsetab / pytorch-tabnet of fit seconds, predict rows/s and peak memory. The data files are in
``datasets/<name>/`` with their ``SOURCE.md``. Not part of the test suite; needs ``pytorch-tabnet==4.1.0``
and ``psutil`` (``lightgbm`` optional).

Run (the full run takes hours on two CPU cores; ``--quick`` is a smoke run of a few minutes)::

    python benchmarks/compare.py [--datasets adult kdd_census_income ...] [--tables same defaults]
                                 [--max-epochs 100] [--seed 0] [--threads 1] [--quick]
                                 [--output benchmarks/results/compare.md]
"""

import argparse
import contextlib
import io
import os
import platform
import shlex
import sys
import time
import traceback
import warnings
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pandas as pd
import sklearn
import torch
from _measure import PeakRSS, cpu_model
from pytorch_tabnet.tab_model import TabNetClassifier, TabNetRegressor
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import accuracy_score, mean_squared_error, r2_score, roc_auc_score
from sklearn.model_selection import train_test_split
from threadpoolctl import threadpool_limits

import sparsetab
from sparsetab import SparseTabNetClassifier, SparseTabNetRegressor
from sparsetab.datasets import load_adult

try:
    import lightgbm
except ImportError:  # optional
    lightgbm = None

DATA_DIR = Path(__file__).resolve().parent.parent / "datasets"
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
TABLES = ("same", "defaults")
TABLE_TITLES = {
    "same": "Table 1: same architecture and training settings",
    "defaults": "Table 2: documented defaults",
}
SAME_ARCHITECTURE = dict(
    n_d=8, n_a=8, n_steps=3, gamma=1.3, n_independent=2, n_shared=2, lambda_sparse=1e-3, momentum=0.02
)
BATCH = dict(batch_size=1024, virtual_batch_size=128)
LEARNING_RATE = 0.02
PATIENCE = 10
VALIDATION_FRACTION = 0.1
QUICK_ROWS = 5000
QUICK_EPOCHS = 3


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
    folder = DATA_DIR / name
    if name == "adult":
        X_train, X_test, y_train, y_test = load_adult(return_X_y=True)
        return X_train, X_test, y_train, y_test, "classification", "official UCI split"
    if name == "kdd_census_income":
        frames = [pd.read_csv(folder / f"{part}.csv.gz", keep_default_na=False) for part in ("train", "test")]
        coded = [
            "detailed_industry_recode",
            "detailed_occupation_recode",
            "own_business_or_self_employed",
            "veterans_benefits",
            "year",
        ]
        parts = []
        for frame in frames:
            frame = frame.drop(columns="instance_weight")
            frame[coded] = frame[coded].astype(str).astype(object)
            parts.append((frame.drop(columns="income"), frame["income"]))
        (X_train, y_train), (X_test, y_test) = parts
        note = "official UCI split; instance_weight dropped; 5 integer-coded columns as categorical"
        return X_train, X_test, y_train, y_test, "classification", note
    if name == "forest_cover_kaggle":
        frame = pd.read_csv(folder / "train.csv.gz").drop(columns="Id")
        X, y = frame.drop(columns="Cover_Type"), frame["Cover_Type"]
        note = "Kaggle 15,120-row balanced subset of Covertype; stratified 80/20 split (random_state 0)"
        return *_split(X, y, stratify=True), "classification", note
    if name == "letter_recognition":
        frame = pd.read_csv(folder / "letter_recognition.csv.gz")
        X, y = frame.drop(columns="lettr"), frame["lettr"]
        note = "first 16,000 rows train, last 4,000 test (UCI convention)"
        return X.iloc[:16000], X.iloc[16000:], y.iloc[:16000], y.iloc[16000:], "classification", note
    if name == "higgs_sample":
        frame = pd.read_csv(folder / "higgs_sample.csv.gz")
        X, y = frame.drop(columns="label"), frame["label"]
        note = "10,984-row sample of HIGGS; stratified 80/20 split (random_state 0)"
        return *_split(X, y, stratify=True), "classification", note
    if name == "bank_marketing":
        frame = pd.read_csv(folder / "bank_full.csv.gz")
        X, y = frame.drop(columns="y"), frame["y"]
        note = "bank-full; `duration` KEPT (known only after the call: leaks the target); stratified 80/20 split"
        return *_split(X, y, stratify=True), "classification", note
    if name == "california_housing":
        frame = pd.read_csv(DATA_DIR / "california_housing" / "california_housing_sklearn_format.csv.gz")
        X, y = frame.drop(columns="MedHouseVal"), frame["MedHouseVal"]
        note = "target MedHouseVal (100,000 USD); 80/20 split (random_state 0)"
        return *_split(X, y, stratify=False), "regression", note
    if name == "diamonds":
        frame = pd.read_csv(folder / "diamonds.csv.gz")
        X, y = frame.drop(columns="price"), np.log(frame["price"])
        note = "target log(price) (RMSE in log-USD); cut/color/clarity categorical; 80/20 split (random_state 0)"
        return *_split(X, y, stratify=False), "regression", note
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


def measure(fit, predict, y_test, task, epochs):
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

    Returns
    -------
    dict
        ``metric1`` (accuracy or RMSE), ``metric2`` (ROC AUC or R^2), ``fit_s``, ``epochs``,
        ``predict_rows_s``, ``peak_mib``.
    """
    with PeakRSS() as memory:
        start = time.perf_counter()
        model = fit()
        fit_seconds = time.perf_counter() - start
    start = time.perf_counter()
    prediction = predict(model)
    predict_seconds = time.perf_counter() - start
    if task == "classification":
        classes, proba = prediction
        proba = np.asarray(proba, dtype=np.float64)
        proba /= proba.sum(axis=1, keepdims=True)
        metric1 = accuracy_score(y_test, np.asarray(classes)[proba.argmax(axis=1)])
        if len(classes) == 2:
            metric2 = roc_auc_score(y_test == classes[1], proba[:, 1])
        else:
            metric2 = roc_auc_score(y_test, proba, multi_class="ovr", average="macro", labels=classes)
    else:
        prediction = np.asarray(prediction, dtype=np.float64).ravel()
        metric1 = float(np.sqrt(mean_squared_error(y_test, prediction)))
        metric2 = r2_score(y_test, prediction)
    return dict(
        metric1=metric1,
        metric2=metric2,
        fit_s=fit_seconds,
        epochs=epochs(model),
        predict_rows_s=len(y_test) / predict_seconds,
        peak_mib=memory.increase_mib,
    )


# ---------------------------------------------------------------------------------------------------------------
# Models


def run_sparsetab(data, table, args):
    """sparsetab on the fit rows, early stopping on the validation rows (``fit(..., X_val=, y_val=)``)."""
    estimator = SparseTabNetClassifier if data["task"] == "classification" else SparseTabNetRegressor
    if table == "same":
        params = dict(
            SAME_ARCHITECTURE,
            **BATCH,
            learning_rate=LEARNING_RATE,
            entmax_mode="sparsemax",
            cat_emb_dim=1,
            max_epochs=args.max_epochs,
            early_stopping=True,
            n_iter_no_change=PATIENCE,
        )
    else:
        params = dict(max_epochs=QUICK_EPOCHS) if args.quick else {}
    model = estimator(random_state=args.seed, **params)

    def fit():
        return model.fit(data["X_fit"], data["y_fit"], X_val=data["X_val"], y_val=data["y_val"])

    return measure(fit, _predictor(data), data["y_test"], data["task"], lambda m: m.n_iter_)


def run_pytorch_tabnet(data, table, args):
    """pytorch-tabnet on the integer-coded fit rows with the validation rows as ``eval_set``."""
    classification = data["task"] == "classification"
    codes = data["codes"]
    common = dict(
        cat_idxs=codes.cat_idxs, cat_dims=codes.cat_dims, cat_emb_dim=1, seed=args.seed, verbose=0, device_name="cpu"
    )
    fit_params = dict(max_epochs=args.max_epochs, patience=PATIENCE, **BATCH)
    if table == "same":
        params = dict(SAME_ARCHITECTURE, optimizer_params=dict(lr=LEARNING_RATE), mask_type="sparsemax", **common)
        # Monitor the validation loss, as sparsetab's scoring="loss" does.
        fit_params["eval_metric"] = ["logloss" if classification else "mse"]
    else:
        params = common
        fit_params["max_epochs"] = QUICK_EPOCHS if args.quick else 200  # documented default (README)
    model = (TabNetClassifier if classification else TabNetRegressor)(**params)
    X_fit, X_val = data["X_fit_codes"], data["X_val_codes"]
    y_fit, y_val = data["y_fit"], data["y_val"]
    if not classification:
        y_fit, y_val = y_fit.reshape(-1, 1), y_val.reshape(-1, 1)

    def fit():
        # pytorch-tabnet prints its early-stopping summary whatever ``verbose`` is.
        with contextlib.redirect_stdout(io.StringIO()):
            model.fit(X_fit, y_fit, eval_set=[(X_val, y_val)], **fit_params)
        return model

    return measure(fit, _predictor(data, codes=True), data["y_test"], data["task"], lambda m: len(m.history["loss"]))


def run_hgb(data, table, args):
    """HistGradientBoosting with its defaults (``categorical_features="from_dtype"``) on all training rows."""
    classification = data["task"] == "classification"
    estimator = HistGradientBoostingClassifier if classification else HistGradientBoostingRegressor
    model = estimator(categorical_features="from_dtype", random_state=args.seed)
    return measure(
        lambda: model.fit(data["X_train_cat"], data["y_train"]),
        _predictor(data, category=True),
        data["y_test"],
        data["task"],
        lambda m: m.n_iter_,
    )


def run_lightgbm(data, table, args):
    """LightGBM with its defaults on all training rows (pandas category columns as categorical)."""
    classification = data["task"] == "classification"
    estimator = lightgbm.LGBMClassifier if classification else lightgbm.LGBMRegressor
    model = estimator(random_state=args.seed, n_jobs=args.threads, verbose=-1)
    return measure(
        lambda: model.fit(data["X_train_cat"], data["y_train"]),
        _predictor(data, category=True),
        data["y_test"],
        data["task"],
        lambda m: m.booster_.current_iteration(),
    )


def _predictor(data, codes=False, category=False):
    """``predict(model)`` on the test rows in the representation the model was fitted on."""
    X_test = data["X_test_codes"] if codes else data["X_test_cat"] if category else data["X_test"]
    if data["task"] == "classification":
        return lambda model: (model.classes_, model.predict_proba(X_test))
    return lambda model: model.predict(X_test)


MODELS = {
    "sparsetab": run_sparsetab,
    "pytorch-tabnet": run_pytorch_tabnet,
    "HistGradientBoosting": run_hgb,
    "LightGBM": run_lightgbm,
}
BOOSTING = ("HistGradientBoosting", "LightGBM")


def prepare(name, args):
    """Load data set ``name``, subsample it under ``--quick`` and build every model's representation."""
    X_train, X_test, y_train, y_test, task, note = load(name)
    classification = task == "classification"
    X_train, X_test = X_train.reset_index(drop=True), X_test.reset_index(drop=True)
    y_train, y_test = np.asarray(y_train), np.asarray(y_test)
    if classification and y_train.dtype.kind not in "biu":
        y_train, y_test = y_train.astype(object), y_test.astype(object)
    if args.quick and len(X_train) > QUICK_ROWS:
        X_train, _, y_train, _ = train_test_split(
            X_train,
            y_train,
            train_size=QUICK_ROWS,
            random_state=args.seed,
            stratify=y_train if classification else None,
        )
    X_fit, X_val, y_fit, y_val = train_test_split(
        X_train,
        y_train,
        test_size=VALIDATION_FRACTION,
        random_state=args.seed,
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
    """Table cell text for an exception (pipes and newlines removed, at most 120 characters of message)."""
    message = f"{type(exc).__name__}: {exc}".replace("|", "/").replace("\n", " ")
    return "error: " + (message[:120] + "..." if len(message) > 120 else message)


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


def result_table(results, datasets, table, task, models):
    """Markdown rows of one table for the data sets of one task."""
    names = [d["name"] for d in datasets if d["task"] == task]
    if not names:
        return []
    first, second = ("test accuracy", "ROC AUC") if task == "classification" else ("test RMSE", "R^2")
    lines = [
        f"| data set | model | {first} | {second} | fit s | epochs | predict rows/s | peak fit MiB |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name in names:
        for model in models:
            result = results.get((name, table, model))
            if result is None:
                continue
            if "error" in result:
                lines.append(f"| {name} | {model} | {result['error']} | | | | | |")
                continue
            lines.append(
                f"| {name} | {model} | {_format(result['metric1'], '.4f')} | {_format(result['metric2'], '.4f')} | "
                f"{_format(result['fit_s'], '.1f')} | {result['epochs']} | "
                f"{_format(result['predict_rows_s'], ',.0f')} | {_format(result['peak_mib'], '.1f')} |"
            )
    return lines


def ratio_table(results, datasets, table):
    """Markdown rows of the sparsetab / pytorch-tabnet ratios of one table."""
    lines = [
        "| data set | fit s ratio | predict rows/s ratio | peak fit MiB ratio | epochs (sparsetab / pytorch-tabnet) |",
        "|---|---|---|---|---|",
    ]
    for data in datasets:
        ours = results.get((data["name"], table, "sparsetab"), {})
        theirs = results.get((data["name"], table, "pytorch-tabnet"), {})
        if "error" in ours or "error" in theirs or not ours or not theirs:
            lines.append(f"| {data['name']} | n/a | n/a | n/a | n/a |")
            continue
        lines.append(
            f"| {data['name']} | {_ratio(ours['fit_s'], theirs['fit_s'])} | "
            f"{_ratio(ours['predict_rows_s'], theirs['predict_rows_s'])} | "
            f"{_ratio(ours['peak_mib'], theirs['peak_mib'], smallest=1.0)} | {ours['epochs']} / {theirs['epochs']} |"
        )
    return lines


def header(args):
    """Machine, versions and command line, as Markdown lines."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    lightgbm_version = lightgbm.__version__ if lightgbm is not None else "not installed (skipped)"
    return [
        f"Machine: {cpu_model()}, {os.cpu_count()} logical cores ({usable} usable), {platform.system()} "
        f"{platform.machine()}; {args.threads} thread(s) per model (torch, OpenMP, LightGBM).",
        f"Versions: Python {platform.python_version()}, torch {torch.__version__}, scikit-learn {sklearn.__version__}, "
        f"pytorch-tabnet {version('pytorch-tabnet')}, sparsetab {sparsetab.__version__}, LightGBM {lightgbm_version}, "
        f"pandas {pd.__version__}, numpy {np.__version__}.",
        "Command: `" + " ".join(shlex.quote(a) for a in ["python", *sys.argv]) + "`",
    ]


def protocol_notes(args):
    """Markdown bullet list describing what was run."""
    epochs = f"{QUICK_EPOCHS} (--quick)" if args.quick else str(args.max_epochs)
    notes = [
        "- Splits: the test rows are fixed per data set (see the data set table). The training rows are split once "
        f"(random_state {args.seed}, stratified for classification) into 90% fit rows and 10% validation rows; both "
        "TabNets train on the fit rows and early-stop on the same validation rows (sparsetab: "
        "`fit(X, y, X_val=..., y_val=...)`, pytorch-tabnet: `eval_set`). HistGradientBoosting and LightGBM are "
        "fitted on all the training rows with their defaults (HistGradientBoosting's early stopping 'auto' holds out "
        "its own 10% above 10,000 rows; LightGBM: 100 trees, no early stopping).",
        f"- Table 1: both TabNets n_d = n_a = 8, n_steps 3, gamma 1.3, n_independent = n_shared = 2, lambda_sparse "
        f"1e-3, momentum 0.02, batch 1024, virtual batch 128, Adam lr 0.02, sparsemax, cat_emb_dim 1, max_epochs "
        f"{epochs}, patience {PATIENCE} on the validation loss (pytorch-tabnet `eval_metric=['logloss']` / "
        "`['mse']`, sparsetab `scoring='loss'`). Left at each library's default: gradient clipping at norm 1 in "
        "both (sparsetab max_grad_norm, pytorch-tabnet clip_value), minimum improvement (sparsetab tol 1e-4, "
        "pytorch-tabnet any), last batch (pytorch-tabnet drops the incomplete one, sparsetab uses near-equal "
        "batches).",
        "- Table 2: `SparseTabNetClassifier(random_state=seed)` / `SparseTabNetRegressor(random_state=seed)`; "
        "pytorch-tabnet constructor defaults (seed, cat_idxs/cat_dims, verbose=0, device_name='cpu' set) and its "
        "README's fit defaults max_epochs=200 (the 4.1.0 code default is 100), patience=10, batch_size=1024, "
        "virtual_batch_size=128, default eval_metric (binary: AUC, multiclass: accuracy, regression: MSE). "
        + (f"Under --quick both TabNets are capped at {QUICK_EPOCHS} epochs here too. " if args.quick else "")
        + "HistGradientBoosting's defaults are the Table 1 setting, so Tables 1 and 2 show the same boosting fits.",
        "- Fit seconds exclude the integer coding for pytorch-tabnet and the category conversion for the boosting "
        "models (done beforehand); sparsetab's fit includes its own encoding of the DataFrame. pytorch-tabnet's fit "
        "includes its default `compute_importance=True` (feature importances over the fit rows); sparsetab's "
        "includes `feature_importances_` on at most 10,000 rows.",
        "- Scaling: sparsetab standardises the numeric inputs (and regression targets) itself; pytorch-tabnet gets "
        "the raw values, as its documentation shows (its only input normalisation is a batch norm with momentum "
        "0.01, whose running statistics lag in short runs, and the regression target is not scaled).",
        "- Peak fit MiB: peak RSS during fit (sampled every 5 ms) minus the RSS just before fit, after "
        "`gc.collect()` and glibc `malloc_trim(0)`, in one process (libraries' caches that outlive a fit, e.g. "
        "torch's, are not counted again by later fits); ratio n/a when either side is under 1 MiB. Epochs of the "
        "boosting models are iterations (trees per class).",
    ]
    if args.quick:
        notes.append(
            f"- QUICK RUN: at most {QUICK_ROWS:,} training rows (random subsample) and {QUICK_EPOCHS} epochs; the "
            "numbers only show that everything runs."
        )
    if lightgbm is None:
        notes.append("- LightGBM is not installed: skipped.")
    return notes


# ---------------------------------------------------------------------------------------------------------------


def parse_args(argv=None):
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS, metavar="NAME")
    parser.add_argument("--tables", nargs="+", default=list(TABLES), choices=TABLES)
    parser.add_argument("--max-epochs", type=int, default=100, help="max_epochs of Table 1 (default 100)")
    parser.add_argument("--seed", type=int, default=0, help="random_state of the models and the validation split")
    parser.add_argument("--threads", type=int, default=1, help="threads per model (torch, OpenMP, LightGBM)")
    parser.add_argument("--output", help="also write the Markdown to this file")
    parser.add_argument(
        "--quick", action="store_true", help=f"smoke run: <= {QUICK_ROWS} training rows, {QUICK_EPOCHS} epochs"
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.max_epochs = QUICK_EPOCHS
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
    warnings.filterwarnings("ignore", category=ConvergenceWarning)
    warnings.filterwarnings("ignore", category=UserWarning, module=r"pytorch_tabnet(\.|$)")
    models = [name for name in MODELS if name != "LightGBM" or lightgbm is not None]
    if lightgbm is None:
        print("note: LightGBM is not importable; it is skipped.", file=sys.stderr)
    wall = time.perf_counter()
    results, datasets, failed = {}, [], []
    with threadpool_limits(limits=args.threads):
        try:
            warm_up()
        except Exception:
            traceback.print_exc()
        for name in args.datasets:
            try:
                data = prepare(name, args)
            except Exception as exc:
                traceback.print_exc()
                failed.append(f"- {name}: could not be loaded: {_cell_error(exc)}")
                continue
            datasets.append(data)
            for table in args.tables:
                for model in models:
                    if model in BOOSTING and table != args.tables[0]:
                        results[name, table, model] = results[name, args.tables[0], model]
                        continue
                    print(f"[{name}] {table}: {model} ...", file=sys.stderr, flush=True)
                    try:
                        results[name, table, model] = MODELS[model](data, table, args)
                    except Exception as exc:
                        traceback.print_exc()
                        results[name, table, model] = dict(error=_cell_error(exc))
            del data["X_fit_codes"], data["X_val_codes"], data["X_test_codes"], data["X_train_cat"]
            if args.output:  # rewritten after each data set, so a long run that is stopped keeps what it did
                Path(args.output).write_text(report(results, datasets, failed, args, models, wall) + "\n")
    text = report(results, datasets, failed, args, models, wall)
    print(text)
    if args.output:
        Path(args.output).write_text(text + "\n")


def report(results, datasets, failed, args, models, wall):
    """The Markdown report of the data sets done so far.

    Parameters
    ----------
    results : dict
        ``{(data set, table, model): measure() result or {"error": str}}``.
    datasets : list of dict
        The prepared data sets (see :func:`prepare`), in run order.
    failed : list of str
        Markdown bullets for data sets that could not be loaded.
    args : argparse.Namespace
    models : list of str
    wall : float
        ``time.perf_counter()`` at the start of the run.

    Returns
    -------
    str
    """
    lines = ["# sparsetab vs pytorch-tabnet vs gradient boosting", "", *header(args), ""]
    lines += ["## Data sets", "", "| data set | task | train rows (fit + val) | test rows | features (categorical) |"]
    lines += ["|---|---|---|---|---|"]
    for data in datasets:
        task = data["task"] if data["n_classes"] is None else f"{data['n_classes']}-class"
        lines.append(
            f"| {data['name']} | {task} | {len(data['X_fit']):,} + {len(data['X_val']):,} | {len(data['X_test']):,} | "
            f"{data['X_test'].shape[1]} ({data['n_categorical']}) |"
        )
    lines += [""] + [f"- {data['name']}: {data['note']}" for data in datasets] + failed
    lines += ["", "## Protocol", "", *protocol_notes(args)]
    for table in args.tables:
        lines += ["", f"## {TABLE_TITLES[table]}", ""]
        for task in ("classification", "regression"):
            rows = result_table(results, datasets, table, task, models)
            if rows:
                lines += [f"{task.capitalize()}:", "", *rows, ""]
        lines += ["Ratios sparsetab / pytorch-tabnet:", "", *ratio_table(results, datasets, table)]
    lines += ["", f"Wall time: {time.perf_counter() - wall:.0f} s."]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
