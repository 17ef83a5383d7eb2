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
of the libraries involved. A cell missing from the cache whose key differs from a stored one
only in the configuration's name (a screened variant that became the defaults) reads that cell and is stored
under its own name too. A rerun reads
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

    python -m benchmarks.compare [--datasets adult kdd_census_income ...] [--tables same defaults seeds screen tuned]
                                 [--variants old_defaults cosine wide ...] [--seeds 0 1 2] [--jobs 1] [--threads 1]
                                 [--max-epochs 100] [--protocol validation|user] [--refresh] [--cache-dir DIR]
                                 [--quick] [--output benchmarks/results/compare.md]

For example ``python -m benchmarks.compare --tables seeds --output benchmarks/results/compare_seeds.md`` (Table 3),
``--tables seeds --protocol user --output benchmarks/results/compare_seeds_user.md`` (Table 3, user protocol),
``--tables screen --variants old_defaults cosine wide cosine+wide+ple --output benchmarks/results/ablation.md``
and ``--tables tuned --output benchmarks/results/compare_tuned.md``.

This module is the command line; the work is in ``_datasets.py`` (the data sets and their splits), ``_models.py``
(what a cell constructs), ``_fitting.py`` (one fit and its scores), ``_tuning.py`` (Table 4), ``_cells.py`` (the
cache keys and the running of cells) and ``_tables.py`` / ``_report.py`` (the Markdown).
"""

import argparse
import sys
from pathlib import Path

import torch

from benchmarks._cache import CellCache, key_hash
from benchmarks._cells import CACHE_DIR, QUICK_CACHE_DIR, RESULTS_DIR, _cell_error, cell_key, execute
from benchmarks._datasets import DATASETS, QUICK_ROWS, SCREENING
from benchmarks._measure import command_line
from benchmarks._models import QUICK_EPOCHS, catboost, lightgbm
from benchmarks._report import Report

TABLES = ("same", "defaults", "seeds", "screen", "tuned")
DEFAULT_TABLES = ("same", "defaults")
TABLE_SEEDS = {"same": (0,), "defaults": (0,), "seeds": (0, 1, 2), "screen": (0, 1, 2), "tuned": (0,)}
TABLE_DATASETS = {"same": DATASETS, "defaults": DATASETS, "seeds": DATASETS, "screen": SCREENING, "tuned": SCREENING}
DEFAULT_VARIANTS = ("old_defaults", "defaults", "cosine", "wide", "cosine_wide", "ple", "periodic", "quantile")
PROTOCOLS = ("validation", "user")


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
    command = command_line()
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
        if record is None:
            # The same fit stored under another configuration name: stored under this one too.
            record = cache.get_twin(keys[index])
            if record is not None:
                cache.put(keys[index], record["result"])
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
