"""Memory of predict, predict_proba and explain on large inputs (issue 8): bounded by batching.

A classifier is fitted on 20,000 rows of ``make_classification(n_features=20)``; then
``predict``, ``predict_proba`` and ``explain`` run on 100,000 and 1,000,000 rows (a float64
numpy array, 160 MB at 1M rows). For each call the peak resident memory added during the call
is reported next to the size of what the call returns: inputs are encoded and run through the
network in slices of ``INFERENCE_BATCH_ROWS`` rows, so the extra memory is the returned arrays
plus a constant, not a copy of the input. Not part of the test suite (about a minute).

Run::

    python -m benchmarks.large_inputs [--rows 100000 1000000]
"""

import argparse
import time
import warnings

import numpy as np
import torch
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning

from benchmarks._measure import PeakRSS, machine_header
from sparsetab import SparseTabNetClassifier
from sparsetab._inference import INFERENCE_BATCH_ROWS


def _returned_mib(result):
    arrays = [result] if isinstance(result, np.ndarray) else [value for value in result.values()]
    return sum(array.nbytes for array in arrays if isinstance(array, np.ndarray)) / 2**20


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[100_000, 1_000_000])
    args = parser.parse_args()
    torch.set_num_threads(1)
    X, y = make_classification(max(args.rows), 20, n_informative=10, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = SparseTabNetClassifier(max_epochs=2, random_state=0).fit(X[:20000], y[:20000])
    print(f"# Large inputs: `python -m benchmarks.large_inputs`\n\n{machine_header()}\n")
    print(f"Batches of {INFERENCE_BATCH_ROWS:,} rows.\n")
    print("| method | rows | input MiB | returned MiB | peak added MiB | peak - returned MiB | seconds |")
    print("|---|---|---|---|---|---|---|")
    for n_rows in args.rows:
        rows = X[:n_rows]
        for method in ("predict", "predict_proba", "explain"):
            with PeakRSS() as memory:
                start = time.perf_counter()
                result = getattr(model, method)(rows)
                seconds = time.perf_counter() - start
            returned = _returned_mib(result)
            print(
                f"| {method} | {n_rows:,} | {rows.nbytes / 2**20:.0f} | {returned:.0f} | {memory.increase_mib:.0f} | "
                f"{memory.increase_mib - returned:.0f} | {seconds:.1f} |"
            )
            del result


if __name__ == "__main__":
    main()
