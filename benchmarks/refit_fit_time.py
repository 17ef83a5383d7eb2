"""Fit and predict seconds of early_stopping="auto"'s refit rule against the rule before it (every row).

adult_2700 and letter_4000 of ``small_tables.py``, 3 seeds, one torch thread, one fit at a time, each fit of the
rule before (``early_stopping=False``: every row for ``max_epochs``) next to the defaults of the same seed. Run it
on a quiet machine from the repository root::

    python -m benchmarks.refit_fit_time > benchmarks/results/refit_fit_time.jsonl

One JSON line per fit: table, seed, parameters, fit and predict_proba seconds (the test rows), test error.
"""

import json
import os
import time
import warnings

import torch

from benchmarks import small_tables
from sparsetab import SparseTabNetClassifier


def main():
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    for table in ("adult_2700", "letter_4000"):
        X, y, X_test, y_test, task = small_tables.load_table(table)
        for seed in (0, 1, 2):
            for params in ({"early_stopping": False}, {}):
                model = SparseTabNetClassifier(random_state=seed, **params)
                started = time.perf_counter()
                model.fit(X, y)
                fit_seconds = time.perf_counter() - started
                started = time.perf_counter()
                model.predict_proba(X_test)
                predict_seconds = time.perf_counter() - started
                record = dict(
                    table=table,
                    seed=seed,
                    params=params,
                    fit_s=round(fit_seconds, 2),
                    predict_s=round(predict_seconds, 3),
                    err=small_tables.error(task, y_test, model.predict(X_test)),
                )
                print(json.dumps(record), flush=True)


if __name__ == "__main__":
    main()
