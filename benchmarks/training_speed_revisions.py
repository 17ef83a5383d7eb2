"""Training rows/s of two source trees of sparsetab, side by side: did a change slow the fit loop down?

Each round fits the same model once with each tree (a fresh process each, one torch thread,
alternating the order), so both see the same machine load; prints a Markdown table of the median
rows/s per ``entmax_mode`` and their ratio.

    git worktree add --detach /tmp/before <revision>
    python -m benchmarks.training_speed_revisions /tmp/before . [--rounds 3]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from benchmarks._measure import cpu_model

MODES = ("sparsemax", "entmax15", "constant", "adaptive")
# 20,000 rows of make_classification, n_d = n_a = 8, 3 decision steps, batch 1,024, 5 epochs.
FIT = """
import json, sys, time, warnings
import torch
from sklearn.datasets import make_classification
from sparsetab import SparseTabNetClassifier
torch.set_num_threads(1)
X, y = make_classification(n_samples=20000, n_features=16, n_informative=8, random_state=0)
model = SparseTabNetClassifier(n_d=8, n_a=8, n_steps=3, batch_size=1024, max_epochs=5, early_stopping=False,
                               entmax_mode=sys.argv[1], entmax_alpha=1.3, n_jobs=1, random_state=0)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    started = time.perf_counter()
    model.fit(X, y)
print(json.dumps({"rows_per_second": 20000 * 5 / (time.perf_counter() - started)}))
"""


def rows_per_second(tree, mode):
    """Training rows/s of one fit with the package of ``tree``, in a fresh process."""
    environment = {**os.environ, "PYTHONPATH": str(Path(tree).resolve()), "OMP_NUM_THREADS": "1"}
    completed = subprocess.run(
        [sys.executable, "-c", FIT, mode], capture_output=True, text=True, env=environment, check=True
    )
    return json.loads(completed.stdout.splitlines()[-1])["rows_per_second"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", help="source tree of the earlier revision")
    parser.add_argument("after", help="source tree of the later revision")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    results = {(tree, mode): [] for tree in ("before", "after") for mode in MODES}
    for round_number in range(args.rounds):
        for mode in MODES:
            order = ("before", "after") if round_number % 2 == 0 else ("after", "before")
            for name in order:
                results[name, mode].append(rows_per_second(getattr(args, name), mode))
    print(f"Training rows/s, median of {args.rounds} alternating rounds ({cpu_model()}, one torch thread):\n")
    print("| entmax_mode | before | after | after / before |")
    print("|---|---|---|---|")
    for mode in MODES:
        before, after = (statistics.median(results[name, mode]) for name in ("before", "after"))
        runs = " / ".join(f"{value:,.0f}" for value in results["after", mode])
        print(f"| {mode} | {before:,.0f} | {after:,.0f} ({runs}) | {after / before:.2f} |")


if __name__ == "__main__":
    main()
