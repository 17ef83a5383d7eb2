"""What ``torch_compile=True`` costs and gains on this machine's CPU (or another device): steps and a small fit.

Two measurements, one thread, in one run:

- ``step_ways`` of benchmarks/gpu_check.py at batch 32 (a table under 1,000 rows) and 1,024 (the largest
  ``batch_size="auto"``), 30 numeric columns: milliseconds per training step eagerly and compiled (the median of
  epochs 2 to 4, 8 steps each), and the compiled first epoch's extra seconds (inductor generating the code);
- the default fit of scikit-learn's breast-cancer table (455 training rows, 30 columns, 80/20 split), eager and
  compiled, twice each in alternation: wall seconds, epochs and test accuracy. The first compiled fit compiles (or
  reuses what ``step_ways`` compiled for the same shapes); the second reuses it, as a grid search's later fits do.

Run from the repository root::

    python -m benchmarks.compile_speed [--device cpu] [--output benchmarks/results/compile_speed.md]
"""

import argparse
import json
import os
import time
import warnings
from pathlib import Path

import torch
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split

from benchmarks._measure import cpu_model
from benchmarks.gpu_check import check_step_ways
from sparsetab import SparseTabNetClassifier
from sparsetab._runtime import resolve_device


def small_fits(device):
    """Four default breast-cancer fits, eager and compiled in alternation: one line each."""
    X, y = load_breast_cancer(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)
    for torch_compile in (False, True, False, True):
        model = SparseTabNetClassifier(random_state=0, torch_compile=torch_compile, device=str(device))
        started = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(X_train, y_train)
        yield {
            "check": "breast_cancer_fit",
            "torch_compile": torch_compile,
            "fit_seconds": round(time.perf_counter() - started, 2),
            "epochs": int(model.n_iter_),
            "accuracy": round(float(model.score(X_test, y_test)), 4),
        }


def main(argv=None):
    """Run both measurements, print JSON lines and write the Markdown file if asked."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu", help="'cpu' (default), 'cuda', 'cuda:N' or 'auto'")
    parser.add_argument("--output", type=Path, help="also write the results as Markdown here")
    args = parser.parse_args(argv)
    device = resolve_device(args.device)
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        lines = []
        for line in [*check_step_ways(device, (32, 1024), 30, smoke=False), *small_fits(device)]:
            lines.append(json.dumps(line))
            print(lines[-1], flush=True)
    finally:
        torch.set_num_threads(previous)
    if args.output is not None:
        args.output.write_text(
            "# torch_compile: cost and gain\n\n"
            f"Command: `python -m benchmarks.compile_speed --device {args.device}`; {cpu_model()}, "
            f"{len(os.sched_getaffinity(0))} core(s) available, one torch thread, torch {torch.__version__}.\n\n"
            "```\n" + "\n".join(lines) + "\n```\n"
        )
    return lines


if __name__ == "__main__":
    main()
