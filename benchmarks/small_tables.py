"""Small and medium real tables, fitted the way users call ``fit``: ``fit(X, y)``, defaults, no ``X_val``.

Issue 32's user protocol. Every model is fitted on all training rows of the table with ``fit(X, y)`` and
nothing else (sparsetab holds out its own rows when its rules say so; the test rows are never seen), next to
HistGradientBoosting, LightGBM and CatBoost with their defaults in the same run. Train and test error are reported
side by side, so overfitting shows. The tables (1,000-20,000 training rows, or tiny ones from scikit-learn, so
that small and medium tables weigh as much as the large ones of ``compare.py``):

============================ ====== ======= ====== ==========================================================
table                        task   train   test   what
============================ ====== ======= ====== ==========================================================
breast_cancer                2-cls     455     114 scikit-learn's copy of UCI WDBC; stratified 80/20
diabetes                     reg       353      89 scikit-learn's diabetes progression; 80/20
linear_2000                  reg     2,000  10,000 y = X w + 0.1 noise, 8 normal features (small_data.py)
adult_2700                   2-cls   2,700  16,281 2,700 rows drawn from UCI adult's train file; its test file
california_3000              reg     3,000   4,128 3,000 rows of compare.py's california training rows
letter_4000                  26-cls  4,000   4,000 first 4,000 UCI rows, UCI test rows (small_data.py)
diamonds_5000                reg     5,000  10,788 5,000 rows of compare.py's diamonds training rows; log price
mushroom                     2-cls   6,499   1,625 UCI mushroom, 22 text columns, `?` kept; stratified 80/20
credit_default_8000          2-cls   8,000  22,000 8,000 rows of UCI default of credit card clients; the rest
higgs_sample                 2-cls   8,787   2,197 compare.py's split (stratified 80/20)
bike_sharing                 reg    13,903   3,476 UCI bike sharing hourly, count; casual/registered/date out
============================ ====== ======= ====== ==========================================================

The subsamples are drawn once (``random_state=0``), so every seed and model sees the same rows; the seed is
the models' random state. Error: 1 - accuracy for classification, RMSE for regression (in the target's
units). Cells (table, model, configuration, seed) are cached as JSON under ``benchmarks/results/cache/
small_tables/`` (``_cache.CellCache``); the key holds the configuration's parameters and the hash of sparsetab's
source, so a changed rule is re-measured, and a killed run resumes. Run::

    python -m benchmarks.small_tables [--configs defaults defaults+early_stopping=True ...] [--seeds 0 1 2]
                                      [--tables adult_2700 ...] [--peers hgb lightgbm catboost] [--jobs 2]
                                      [--refresh] [--table-only] [--output benchmarks/results/small_tables.md]

``--configs`` takes the configuration names of ``benchmarks/configs.py``.
"""

import argparse
import functools
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split

from benchmarks import configs, small_data
from benchmarks._cache import CellCache
from benchmarks._cells import _sparsetab_source_hash, auto_rules_hash
from benchmarks._datasets import is_categorical, load, with_category_dtype
from benchmarks._measure import cpu_model
from sparsetab import SparseTabNetClassifier, SparseTabNetRegressor
from sparsetab.datasets import load_bike_sharing, load_credit_default, load_mushroom

CACHE = Path(__file__).resolve().parent / "results" / "cache" / "small_tables"
TABLES = (
    "breast_cancer",
    "diabetes",
    "linear_2000",
    "adult_2700",
    "california_3000",
    "letter_4000",
    "diamonds_5000",
    "mushroom",
    "credit_default_8000",
    "higgs_sample",
    "bike_sharing",
)
PEERS = ("hgb", "lightgbm", "catboost")
PEER_NAMES = {"hgb": "HistGradientBoosting", "lightgbm": "LightGBM", "catboost": "CatBoost"}


def _draw(X, y, n, seed=0):
    """``n`` rows of ``X`` and ``y`` drawn without replacement (fixed seed), and the rows not drawn."""
    index = np.random.default_rng(seed).permutation(len(X))
    return X.iloc[index[:n]], y.iloc[index[:n]], X.iloc[index[n:]], y.iloc[index[n:]]


def _compare_split(name):
    """``X_train, y_train, X_test, y_test`` of ``compare.py``'s data set ``name`` (its splits, its targets)."""
    X_train, X_test, y_train, y_test, _, _ = load(name)
    return X_train, y_train, X_test, y_test


@functools.lru_cache(maxsize=2)
def load_table(name):
    """``X_train, y_train, X_test, y_test, task`` of table ``name``; task is "classification" or "regression"."""
    if name == "breast_cancer":
        X, y = load_breast_cancer(return_X_y=True, as_frame=True)
        return *_split(X, y, stratify=True), "classification"
    if name == "diabetes":
        X, y = load_diabetes(return_X_y=True, as_frame=True, scaled=False)
        return *_split(X, y, stratify=False), "regression"
    if name == "linear_2000":
        X_train, y_train, X_test, y_test = small_data.linear_rows()
        columns = [f"x{j}" for j in range(X_train.shape[1])]
        X_train, X_test = pd.DataFrame(X_train, columns=columns), pd.DataFrame(X_test, columns=columns)
        return X_train, pd.Series(y_train), X_test, pd.Series(y_test), "regression"
    if name == "adult_2700":
        X_train, y_train, X_test, y_test = _compare_split("adult")
        return *_draw(X_train, y_train, 2700)[:2], X_test, y_test, "classification"
    if name == "california_3000":
        X_train, y_train, X_test, y_test = _compare_split("california_housing")
        return *_draw(X_train, y_train, 3000)[:2], X_test, y_test, "regression"
    if name == "letter_4000":
        return *small_data.letter_rows(), "classification"
    if name == "diamonds_5000":
        X_train, y_train, X_test, y_test = _compare_split("diamonds")  # log(price)
        return *_draw(X_train, y_train, 5000)[:2], X_test, y_test, "regression"
    if name == "mushroom":
        X, y = load_mushroom(return_X_y=True)
        return *_split(X, y, stratify=True), "classification"
    if name == "credit_default_8000":
        X, y = load_credit_default(return_X_y=True)  # ID out; SEX, EDUCATION, MARRIAGE read as strings
        return *_draw(X, y, 8000), "classification"
    if name == "higgs_sample":
        return *_compare_split("higgs_sample"), "classification"
    if name == "bike_sharing":
        X, y = load_bike_sharing(return_X_y=True)  # casual, registered (sum to count) and date out
        return *_split(X, y.astype(float), stratify=False), "regression"
    raise ValueError(f"unknown table {name!r}; accepted: {', '.join(TABLES)}")


def _split(X, y, stratify):
    """80/20 split (``random_state=0``) in the order ``X_train, y_train, X_test, y_test``."""
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.2, random_state=0, stratify=y if stratify else None
    )
    return X_train, y_train, X_test, y_test


def error(task, y_true, y_pred):
    """1 - accuracy for classification, RMSE for regression."""
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    if task == "classification":
        return float(np.mean(y_true != y_pred))
    return float(np.sqrt(np.mean((y_true.astype(float) - y_pred.astype(float)) ** 2)))


def build(model, config, task, seed):
    """The estimator of a cell: sparsetab with a configs.py configuration, or a peer with its defaults."""
    classification = task == "classification"
    if model == "sparsetab":
        estimator = SparseTabNetClassifier if classification else SparseTabNetRegressor
        return estimator(random_state=seed, **configs.resolve(config, estimator().get_params().keys()))
    if model == "hgb":
        estimator = HistGradientBoostingClassifier if classification else HistGradientBoostingRegressor
        return estimator(random_state=seed, categorical_features="from_dtype")
    if model == "lightgbm":
        import lightgbm

        estimator = lightgbm.LGBMClassifier if classification else lightgbm.LGBMRegressor
        return estimator(random_state=seed, verbose=-1, n_jobs=1)
    if model == "catboost":
        import catboost

        estimator = catboost.CatBoostClassifier if classification else catboost.CatBoostRegressor
        return estimator(random_seed=seed, verbose=0, thread_count=1, allow_writing_files=False)
    raise ValueError(f"unknown model {model!r}")


def cell_key(table, model, config, seed):
    """The cache key of a cell: table, model, configuration name and parameters, seed, protocol.

    The key does not hold sparsetab's source (its hash is recorded in each result, as ``compare.py`` does):
    after a change that trains differently under the same parameters (a new rule behind ``"auto"``),
    re-measure with ``--refresh``.
    """
    key = dict(dataset=table, model=model, config=config, seed=seed, protocol="user: fit(X, y)")
    if model == "sparsetab":
        key["params"] = configs.resolve(config, SparseTabNetClassifier().get_params().keys())
        key["auto_rules"] = auto_rules_hash()
    return key


def run_cell(table, model, config, seed, key):
    """Fit one cell with ``fit(X, y)`` and store train / test error, fit and predict seconds, epochs."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch

    torch.set_num_threads(1)
    X_train, y_train, X_test, y_test, task = load_table(table)
    estimator = build(model, config, task, seed)
    if model == "catboost":
        categorical = [column for column in X_train.columns if is_categorical(X_train[column])]
        estimator.set_params(cat_features=categorical)
        X_fit, X_eval = X_train.copy(), X_test.copy()
        for column in categorical:
            X_fit[column], X_eval[column] = X_fit[column].astype(str), X_eval[column].astype(str)
    elif model in ("hgb", "lightgbm"):
        X_fit, X_eval = with_category_dtype(X_train, X_test)
    else:
        X_fit, X_eval = X_train, X_test
    print(f"[{table}] {model} {config} seed {seed} ...", file=sys.stderr, flush=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        started = time.perf_counter()
        estimator.fit(X_fit, y_train)
        fit_seconds = time.perf_counter() - started
    started = time.perf_counter()
    test_prediction = np.asarray(estimator.predict(X_eval)).reshape(len(X_eval), -1).squeeze(1)
    predict_seconds = time.perf_counter() - started
    train_prediction = np.asarray(estimator.predict(X_fit)).reshape(len(X_fit), -1).squeeze(1)
    result = dict(
        task=task,
        train_rows=len(X_train),
        test_rows=len(X_test),
        train_error=error(task, y_train, train_prediction),
        test_error=error(task, y_test, test_prediction),
        fit_seconds=fit_seconds,
        predict_seconds=predict_seconds,
        epochs=int(getattr(estimator, "n_iter_", getattr(estimator, "tree_count_", 0)) or 0),
        convergence_warnings=[str(item.message) for item in caught if issubclass(item.category, ConvergenceWarning)],
        cpu_model=cpu_model(),
        sparsetab_source=_sparsetab_source_hash(),
    )
    if model == "sparsetab":
        result["early_stopping"] = bool(getattr(estimator, "best_iteration_", None) is not None)
    CellCache(CACHE).put(key, result)
    return result


def summarise(results, tables, rows, seeds):
    """Markdown: per table and model, test and train error (mean, min-max), error / HGB, fit s; then the summary."""
    lines = [
        "| table | rows (train / test) | model | test error mean (min-max) | train error | test / HGB | fit s |",
        "|---|---|---|---|---|---|---|",
    ]
    ratios = {row: [] for row in rows}
    for table in tables:
        hgb = [results.get((table, "hgb", "defaults", seed)) for seed in seeds]
        hgb_error = np.mean([cell["test_error"] for cell in hgb]) if all(hgb) else np.nan
        for row in rows:
            cells = [results.get((table, *row, seed)) for seed in seeds]
            cells = [cell for cell in cells if cell]
            if not cells:
                continue
            test = [cell["test_error"] for cell in cells]
            # A table HistGradientBoosting predicts without error (mushroom) has no ratio and no weight.
            ratio = np.mean(test) / hgb_error if hgb_error > 0 else np.nan
            if np.isfinite(ratio):
                ratios[row].append(ratio)
            label = PEER_NAMES.get(row[0], f"sparsetab ({row[1]})")
            lines.append(
                f"| {table} | {cells[0]['train_rows']:,} / {cells[0]['test_rows']:,} | {label} | "
                f"{np.mean(test):.4f} ({min(test):.4f}-{max(test):.4f}) | "
                f"{np.mean([cell['train_error'] for cell in cells]):.4f} | "
                f"{'n/a' if np.isnan(ratio) else format(ratio, '.3f')} | "
                f"{np.mean([cell['fit_seconds'] for cell in cells]):.1f} |"
                + ("" if len(cells) == len(seeds) else f" ({len(cells)}/{len(seeds)} seeds)")
            )
    lines += ["", "| model | geometric-mean test error / HGB | worst table / HGB | tables |", "|---|---|---|---|"]
    for row, values in ratios.items():
        if values:
            label = PEER_NAMES.get(row[0], f"sparsetab ({row[1]})")
            lines.append(f"| {label} | {np.exp(np.mean(np.log(values))):.3f} | {max(values):.3f} | {len(values)} |")
    return "\n".join(lines)


def main(argv=None):
    """Run the cells not yet cached, then print (and optionally write) the tables.

    Parameters
    ----------
    argv : list of str, default=None
        Command-line arguments (``sys.argv[1:]`` when None).
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", nargs="+", default=["defaults"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--tables", nargs="+", default=list(TABLES), choices=TABLES)
    parser.add_argument("--peers", nargs="*", default=list(PEERS), choices=PEERS)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--refresh", action="store_true", help="re-measure cached cells")
    parser.add_argument("--table-only", action="store_true", help="measure nothing: the tables of the cached cells")
    parser.add_argument("--output")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    rows = [("sparsetab", config) for config in args.configs] + [(peer, "defaults") for peer in args.peers]
    if "hgb" not in args.peers:
        rows.append(("hgb", "defaults"))  # the reference of every ratio
    cache = CellCache(CACHE, refresh=args.refresh)
    results, pending = {}, []
    for table in args.tables:
        for model, config in rows:
            for seed in args.seeds:
                key = cell_key(table, model, config, seed)
                record = cache.get(key)
                if record is None:
                    pending.append((table, model, config, seed, key))
                else:
                    results[(table, model, config, seed)] = record["result"]
    print(f"{len(pending)} cells to measure, {len(results)} cached", file=sys.stderr)
    if args.table_only:
        pending = []  # the rows show "(k/3 seeds)" where cells are missing
    # The workers import this module by name (a function of __main__ does not travel to loky's processes).
    from benchmarks import small_tables

    measured = Parallel(n_jobs=args.jobs)(delayed(small_tables.run_cell)(*cell) for cell in pending)
    for (table, model, config, seed, _), result in zip(pending, measured):
        results[(table, model, config, seed)] = result
    machines = sorted({cell["cpu_model"] for cell in results.values()})
    text = "\n".join(
        [
            "# Small and medium tables, user protocol: `fit(X, y)` with defaults",
            "",
            f"Command: `python -m benchmarks.small_tables {' '.join(argv if argv is not None else sys.argv[1:])}`",
            f"Machines of the cells: {', '.join(machines)}. Seeds: {args.seeds}. "
            f"Wall time of this run: {time.perf_counter() - started:.0f} s ({len(pending)} cells measured).",
            "Error: 1 - accuracy (classification), RMSE (regression). Train error: on the training rows given to fit.",
            "",
            summarise(results, args.tables, rows, args.seeds),
        ]
        + [
            f"\n- {config}: `{configs.resolve(config, SparseTabNetClassifier().get_params().keys())}`"
            for config in args.configs
        ]
    )
    print(text)
    if args.output:
        Path(args.output).write_text(text + "\n")


if __name__ == "__main__":
    main()
