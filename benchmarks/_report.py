"""The Markdown report of a ``compare.py`` run: header, data sets, protocol notes and the requested tables."""

import os
import platform
import time

import numpy as np
import pandas as pd
import sklearn
import torch

import sparsetab
from benchmarks import configs
from benchmarks._cells import USER_PEER_PROTOCOL, USER_PROTOCOL, _relative
from benchmarks._datasets import AUC_ERROR, DATASETS, QUICK_ROWS
from benchmarks._measure import command_line, cpu_model
from benchmarks._models import PATIENCE, QUICK_EPOCHS, _version, catboost, lightgbm
from benchmarks._tables import Tables
from sparsetab import SparseTabNetClassifier

TABLE_TITLES = {
    "same": "Table 1: same architecture and training settings",
    "defaults": "Table 2: documented defaults",
    "seeds": "Table 3: defaults, 3 seeds",
    "screen": "Ablation: screening variants",
    "tuned": "Table 4: tuned",
}


class Report(Tables):
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
            "Command: `" + command_line() + "`",
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
