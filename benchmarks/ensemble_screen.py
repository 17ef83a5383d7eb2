"""Ensembles that cost little, and the other cheap changes of issue 32 item 3, screened on the small tables.

Every cell fits one table of ``small_tables.py`` (user protocol: ``fit(X, y)`` on all its training rows, test rows
untouched) with one variant and one seed, and records the test and training error (1 - accuracy, or RMSE),
the fit and predict seconds. The variants, each against ``defaults`` in the same run:

- ``defaults``: today's defaults (on 1,000-10,000 rows: the held-out first pass, the refit on all rows for
  its best epoch count, their predictions averaged).
- ``members_2``, ``members_4``: ``n_efficient_members=2`` / ``4``, TabM-mini's efficient members inside each
  network (per-member input adapters and heads, every batch through all members at once).
- ``snapshots``: no extra training: the refit's weights at half and three quarters of its epochs (the cosine
  schedule's tail) join its final weights and the first pass as members, the four predictions averaged
  (captured by wrapping the fit's ``train_network``; the library has no such option).
- ``label_smoothing``: classification only, cross-entropy with label smoothing 0.1 (RealMLP's default,
  Holzmueller et al., NeurIPS 2024), patched into the classifier's loss for the cell (validation loss too).
- ``cat_emb_dim_4``: every categorical column embedded in 4 dimensions instead of 1 (tables with categorical
  columns only).
- ``positive_scales_3``: the efficient members' input adapters start at random positive scales, log-uniform in
  ``[1/3, 3]``, instead of random signs (``benchmarks.syn_members.positive_scales``, where it sharpens the
  Syn6 masks).

Besides the small tables, ``forest_cover_kaggle`` and ``letter_recognition`` (``compare.py``'s splits, 12,096 and
16,000 training rows) can be screened: there two members gained the most over one.

Results are appended as JSON lines to ``--output``, and ``--summary`` prints the screen table (mean and range
over seeds per table and variant, the ratio to ``defaults``, and the geometric mean of the ratios). Run from the
repository root::

    python -m benchmarks.ensemble_screen --variants defaults members_2 --output benchmarks/results/ensemble_screen.jsonl
    python -m benchmarks.ensemble_screen --summary benchmarks/results/ensemble_screen.jsonl

Cells already in ``--output`` are skipped. Two cells run at once on 2 cores (``--jobs``), so the seconds here
compare variants only roughly; ``efficient_members_fit_time.py`` measures the fit and predict time on a quiet machine.
"""

import argparse
import contextlib
import copy
import json
import math
import os
import sys
import time
import warnings
from collections import defaultdict
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed

from benchmarks._measure import cpu_model

TABLES = (
    "linear_2000",
    "adult_2700",
    "california_3000",
    "letter_4000",
    "diamonds_5000",
    "credit_default_8000",
    "higgs_sample",
    "forest_cover_kaggle",
    "letter_recognition",
)
DEFAULT_TABLES = TABLES[:7]
COMPARE_TABLES = ("forest_cover_kaggle", "letter_recognition")
VARIANTS = ("defaults", "members_2", "members_4", "snapshots", "label_smoothing", "cat_emb_dim_4", "positive_scales_3")
PARAMETERS = {"members_2": {"n_efficient_members": 2}, "members_4": {"n_efficient_members": 4}}
REGRESSION_TABLES = ("linear_2000", "california_3000", "diamonds_5000")
WITH_CATEGORIES = ("adult_2700", "diamonds_5000", "credit_default_8000")
SNAPSHOT_SHARES = (0.5, 0.75)


def applies(variant, table, task):
    """Whether ``variant`` changes anything on ``table``."""
    if variant == "label_smoothing":
        return task == "classification"
    if variant == "cat_emb_dim_4":
        return table in WITH_CATEGORIES
    return True


@contextlib.contextmanager
def label_smoothing(smoothing):
    """The classifier's cross-entropy with ``label_smoothing=smoothing`` for the duration of the block."""
    import torch

    from sparsetab._targets import ClassLabels as kind

    original = vars(kind)["loss"]

    def smoothed(output, target):
        return torch.nn.functional.cross_entropy(output, target, reduction="none", label_smoothing=smoothing)

    kind.loss = staticmethod(smoothed)
    try:
        yield
    finally:
        kind.loss = original


@contextlib.contextmanager
def snapshots_of_the_last_training(states):
    """Keep in ``states`` the weights at SNAPSHOT_SHARES of the epochs of the fit's last ``train_network`` call."""
    import sparsetab._base as base
    from sparsetab._training.loop import TrainingObserver

    original = base.train_network

    def keeping_snapshots(network, *args, observer=None, **kwargs):
        config = args[4] if len(args) > 4 else kwargs["config"]
        wanted = {max(1, math.ceil(share * config.max_epochs)) for share in SNAPSHOT_SHARES}
        states.clear()
        inner = observer if observer is not None else TrainingObserver()

        class Keeping(TrainingObserver):
            def epoch_begin(self, epoch, n_steps):
                inner.epoch_begin(epoch, n_steps)

            def step_end(self):
                inner.step_end()

            def epoch_abandoned(self):
                inner.epoch_abandoned()

            def training_end(self, history, patience):
                inner.training_end(history, patience)

            def epoch_end(self, record):
                if record.epoch - config.epoch_offset in wanted:
                    states.append(copy.deepcopy(network.state_dict()))
                return inner.epoch_end(record)

        return original(network, *args, observer=Keeping(), **kwargs)

    base.train_network = keeping_snapshots
    try:
        yield
    finally:
        base.train_network = original


def _predict(model, X, classification):
    return model.predict_proba(X) if classification else model.predict(X)


def _snapshot_prediction(model, states, X, classification):
    """The mean prediction of the refit's snapshots, its final weights and the first pass's members."""
    from sparsetab.network import ensemble_members

    members = ensemble_members(model.network_)
    refit = members[: len(members) // 2] if len(members) > 1 else members
    predictions = []
    single = copy.copy(model)
    for member in members:
        single.network_ = member
        predictions.append(_predict(single, X, classification))
    for state in states:
        network = copy.deepcopy(refit[0])
        network.load_state_dict(state)
        single.network_ = network.eval()
        predictions.append(_predict(single, X, classification))
    return np.mean(predictions, axis=0)


def run_cell(table, variant, seed):
    """Fit and score one cell; returns its record."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch

    from benchmarks import small_tables
    from sparsetab import SparseTabNetClassifier, SparseTabNetRegressor

    torch.set_num_threads(1)
    if table in COMPARE_TABLES:
        X, y, X_test, y_test = small_tables._compare_split(table)
        task = "classification"
    else:
        X, y, X_test, y_test, task = small_tables.load_table(table)
    classification = task == "classification"
    estimator = SparseTabNetClassifier if classification else SparseTabNetRegressor
    params = dict(PARAMETERS.get(variant, {}))
    if variant == "cat_emb_dim_4":
        params["cat_emb_dim"] = 4
    model = estimator(random_state=seed, **params)
    states = []
    context = contextlib.nullcontext()
    if variant == "label_smoothing":
        context = label_smoothing(0.1)
    elif variant == "snapshots":
        context = snapshots_of_the_last_training(states)
    elif variant == "positive_scales_3":
        from benchmarks.syn_members import positive_scales

        context = positive_scales(3.0)
    with warnings.catch_warnings(), context:
        warnings.simplefilter("ignore")
        started = time.perf_counter()
        model.fit(X, y)
        fit_seconds = time.perf_counter() - started
    started = time.perf_counter()
    if variant == "snapshots":
        test_output = _snapshot_prediction(model, states, X_test, classification)
        train_output = _snapshot_prediction(model, states, X, classification)
    else:
        test_output = _predict(model, X_test, classification)
        train_output = _predict(model, X, classification)
    predict_seconds = time.perf_counter() - started
    if classification:
        test_output = model.classes_[np.asarray(test_output).argmax(axis=1)]
        train_output = model.classes_[np.asarray(train_output).argmax(axis=1)]
    record = dict(
        table=table,
        variant=variant,
        seed=seed,
        test_error=small_tables.error(task, y_test, test_output),
        train_error=small_tables.error(task, y, train_output),
        fit_s=round(fit_seconds, 2),
        predict_s=round(predict_seconds, 3),
        epochs=int(model.n_iter_),
        snapshots=len(states),
        cpu_model=cpu_model(),
    )
    print(json.dumps(record), flush=True)
    return record


def _records(path):
    path = Path(path)
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _table_rows(cells, variants, cell_text):
    """Markdown rows, one per table with any cell, of ``cell_text(table, variant, records)`` per variant."""
    lines = []
    for table in TABLES:
        row = [
            cell_text(table, variant, cells[(table, variant)]) if cells.get((table, variant)) else ""
            for variant in variants
        ]
        if any(row):
            lines.append(f"| {table} | " + " | ".join(row) + " |")
    return lines


def summarise(path):
    """The screen table: per table and variant, mean [min, max] test error over seeds, the ratio to defaults."""
    cells = defaultdict(list)
    for record in _records(path):
        cells[(record["table"], record["variant"])].append(record)
    variants = [variant for variant in VARIANTS if any(key[1] == variant for key in cells)]
    ratios = defaultdict(list)

    def error_text(table, variant, records):
        errors = [record["test_error"] for record in records]
        text = f"{np.mean(errors):.4f} [{min(errors):.4f}, {max(errors):.4f}] (n={len(errors)})"
        base = cells.get((table, "defaults"))
        if base and variant != "defaults":
            seeds = {record["seed"] for record in records} & {record["seed"] for record in base}
            if seeds:
                mine = np.mean([r["test_error"] for r in records if r["seed"] in seeds])
                theirs = np.mean([r["test_error"] for r in base if r["seed"] in seeds])
                ratios[variant].append(mine / theirs)
                text += f" x{mine / theirs:.3f}"
        return text

    def cost_text(table, variant, records):
        return (
            f"{np.mean([r['train_error'] for r in records]):.4f} / {np.mean([r['fit_s'] for r in records]):.1f}"
            f" / {np.mean([r['predict_s'] for r in records]):.2f}"
        )

    lines = ["| table | " + " | ".join(variants) + " |", "|---|" + "---|" * len(variants)]
    lines += _table_rows(cells, variants, error_text)
    lines.append(
        "| geo-mean ratio to defaults | "
        + " | ".join(
            f"{math.exp(np.mean(np.log(ratios[variant]))):.3f} over {len(ratios[variant])}" if ratios[variant] else ""
            for variant in variants
        )
        + " |"
    )
    lines.append("")
    lines.append("| table | " + " | ".join(f"{variant} train / fit s / predict s" for variant in variants) + " |")
    lines.append("|---|" + "---|" * len(variants))
    lines += _table_rows(cells, variants, cost_text)
    models = sorted({record["cpu_model"] for records in cells.values() for record in records})
    lines.append("")
    lines.append(f"CPU: {', '.join(models)}; two cells at once on 2 cores, one torch thread each.")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", nargs="+", choices=VARIANTS, default=list(VARIANTS))
    parser.add_argument("--tables", nargs="+", choices=TABLES, default=list(DEFAULT_TABLES))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--output", default=str(Path(__file__).parent / "results" / "ensemble_screen.jsonl"))
    parser.add_argument("--summary", help="only print the summary of this JSON-lines file")
    args = parser.parse_args(argv)
    if args.summary:
        print(summarise(args.summary))
        return
    done = {(r["table"], r["variant"], r["seed"]) for r in _records(args.output)}
    cells = []
    # Table by table and seed by seed, the variants side by side: a run stopped early leaves paired cells.
    for table in args.tables:
        task = "regression" if table in REGRESSION_TABLES else "classification"
        for seed in args.seeds:
            for variant in args.variants:
                if applies(variant, table, task) and (table, variant, seed) not in done:
                    cells.append((table, variant, seed))
    output = open(args.output, "a", encoding="utf-8")  # noqa: SIM115 - each cell is written as it ends
    with output:
        for record in Parallel(n_jobs=args.jobs, return_as="generator")(delayed(run_cell)(*cell) for cell in cells):
            output.write(json.dumps(record) + "\n")
            output.flush()
    print(summarise(args.output))


if __name__ == "__main__":
    sys.exit(main())
