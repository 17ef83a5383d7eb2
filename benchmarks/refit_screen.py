"""How to give the held-out rows back: the screen behind ``early_stopping="auto"``'s refit on 1,000-10,000 rows.

Every cell fits one table of ``small_tables.py`` (user protocol: all its training rows, test rows untouched) with
one seed, in two passes, and scores the test rows:

- ``first``: the first pass. ``--first selection``: ``early_stopping=True, n_iter_no_change=1000`` (every epoch
  runs, the best validation epoch's weights are kept: the rule of the previous release); ``--first patience``:
  ``early_stopping=True`` (stops after ``n_iter_no_change`` epochs without improvement: the first pass of the
  refit rule). Its best epoch count ``k = best_iteration_ + 1`` is recorded.
- ``refit_span``: a new network on all the training rows for ``k`` epochs, the cosine schedule spanning them
  (``early_stopping=False, max_epochs=k``: what the refit rule does).
- ``refit_cut`` (``--first selection`` only): the same, but the schedule keeps its ``max_epochs`` length and is
  cut after ``k`` epochs (the first pass's learning rates exactly).
- ``average`` (``--first patience`` only): the mean of the first pass's and ``refit_span``'s predicted
  probabilities (classification) or values (regression): the held-out pass kept as a second member.

Error: 1 - accuracy or RMSE, as ``small_tables.py``. Results are appended as JSON lines to ``--output``
(one per cell) and summarised per table (mean over seeds) on standard output. Run from the repository root::

    python -m benchmarks.refit_screen --first selection --tables letter_4000 adult_2700 ... \\
        --output benchmarks/results/refit_screen.jsonl
    python -m benchmarks.refit_screen --first patience --tables letter_4000 adult_2700 ... \\
        --output benchmarks/results/refit_screen.jsonl
    python -m benchmarks.refit_screen --summary benchmarks/results/refit_screen.jsonl

Not part of the test suite. Fit seconds are recorded but were measured with two cells at once on 2 cores.
"""

import argparse
import dataclasses
import json
import os
import sys
import time
import warnings
from collections import defaultdict
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed

from benchmarks._measure import cpu_model


def _fit(estimator, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        started = time.perf_counter()
        estimator.fit(X, y)
    return time.perf_counter() - started


def _cut_schedule_fit(estimator, X, y, schedule_epochs):
    """Fit with the learning-rate schedule ``schedule_epochs`` long, whatever ``max_epochs`` is (``refit_cut``)."""
    import sparsetab._base as base

    original = base.training_config

    def with_long_schedule(*args, **kwargs):
        return dataclasses.replace(original(*args, **kwargs), schedule_epochs=schedule_epochs)

    base.training_config = with_long_schedule
    try:
        return _fit(estimator, X, y)
    finally:
        base.training_config = original


def run_cell(table, seed, first):
    """Both passes of one table and seed; returns the cell's record."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch

    from benchmarks import small_tables
    from sparsetab import SparseTabNetClassifier, SparseTabNetRegressor

    torch.set_num_threads(1)
    X, y, X_test, y_test, task = small_tables.load_table(table)
    classification = task == "classification"
    estimator = SparseTabNetClassifier if classification else SparseTabNetRegressor
    first_params = dict(early_stopping=True)
    if first == "selection":
        first_params["n_iter_no_change"] = 1000
    first_model = estimator(random_state=seed, **first_params)
    record = dict(table=table, seed=seed, first_pass=first, cpu_model=cpu_model())
    record["first_s"] = _fit(first_model, X, y)
    epochs = first_model.best_iteration_ + 1
    record.update(k=epochs, first_epochs_run=first_model.n_iter_)
    record["first"] = small_tables.error(task, y_test, first_model.predict(X_test))
    refit = estimator(random_state=seed, max_epochs=epochs, early_stopping=False)
    record["refit_span_s"] = _fit(refit, X, y)
    record["refit_span"] = small_tables.error(task, y_test, refit.predict(X_test))
    if first == "selection":
        cut = estimator(random_state=seed, max_epochs=epochs, early_stopping=False)
        _cut_schedule_fit(cut, X, y, first_model.max_epochs)
        record["refit_cut"] = small_tables.error(task, y_test, cut.predict(X_test))
    else:
        if classification:
            probabilities = (first_model.predict_proba(X_test) + refit.predict_proba(X_test)) / 2
            prediction = refit.classes_[probabilities.argmax(axis=1)]
        else:
            prediction = (first_model.predict(X_test) + refit.predict(X_test)) / 2
        record["average"] = small_tables.error(task, y_test, prediction)
    print(json.dumps(record), flush=True)
    return record


def summarise(path):
    """Mean over seeds of every recorded error, per table and first pass, as Markdown."""
    cells = defaultdict(list)
    for line in Path(path).read_text().splitlines():
        record = json.loads(line)
        cells[(record["table"], record["first_pass"])].append(record)
    columns = ("first", "refit_span", "refit_cut", "average")
    lines = [
        "| table | first pass | seeds | k (chosen epochs) | " + " | ".join(columns) + " |",
        "|---|---|---|---|" + "---|" * len(columns),
    ]
    for (table, first), records in sorted(cells.items()):
        values = []
        for column in columns:
            found = [record[column] for record in records if column in record]
            values.append(f"{np.mean(found):.4f}" if found else "")
        epochs = ", ".join(str(record["k"]) for record in sorted(records, key=lambda record: record["seed"]))
        lines.append(f"| {table} | {first} | {len(records)} | {epochs} | " + " | ".join(values) + " |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--first", choices=("selection", "patience"), default="patience")
    parser.add_argument("--tables", nargs="+", default=[])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--output", default=str(Path(__file__).parent / "results" / "refit_screen.jsonl"))
    parser.add_argument("--summary", help="only print the summary of this JSON-lines file")
    args = parser.parse_args(argv)
    if args.summary:
        print(summarise(args.summary))
        return
    records = Parallel(n_jobs=args.jobs)(
        delayed(run_cell)(table, seed, args.first) for table in args.tables for seed in args.seeds
    )
    with open(args.output, "a", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record) + "\n")
    print(summarise(args.output))


if __name__ == "__main__":
    sys.exit(main())
