"""How fast the tabular encoding turns a prepared frame into the network's matrix, on the CPU.

Encodes adult's table four times over (130,244 rows, 6 numeric and 8 categorical columns) with
the categorical columns as ``str`` and as pandas ``category``, one torch thread, and prints the
fastest of seven runs of each. Prediction on a GPU is limited by this step (issue 34 item 4).
Compare two trees on one quiet machine: ``git worktree add --detach /tmp/before <revision>``, then
run this file with the other tree's package, ``PYTHONPATH=/tmp/before python benchmarks/encoding_speed.py``
(as a file, so that it runs on trees older than it).

    python -m benchmarks.encoding_speed
"""

import time

import pandas as pd
import torch

from sparsetab._tabular.encoding import TabularEncoding
from sparsetab.datasets import load_adult

REPEATS = 7


def main():
    torch.set_num_threads(1)
    X = pd.concat([load_adult(subset="train", return_X_y=True)[0]] * 4, ignore_index=True)
    encoding = TabularEncoding()
    encoding.fit_transform(X)
    categorical = X.astype({name: "category" for name in X.columns if not pd.api.types.is_numeric_dtype(X[name])})
    for label, frame in (("str columns", X), ("category columns", categorical)):
        times = []
        for _ in range(REPEATS):
            start = time.perf_counter()
            encoding.transform(frame)
            times.append(time.perf_counter() - start)
        best = min(times)
        print(f"{label}: {best * 1000:.1f} ms for {len(frame):,} rows ({len(frame) / best / 1e6:.2f} M rows/s)")


if __name__ == "__main__":
    main()
