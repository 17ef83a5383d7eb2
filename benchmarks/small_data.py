"""Small tables with default settings: 4,000 letter_recognition rows and a 2,000-row linear target.

The two cases of issue 17 where the first release's defaults failed a new user (four optimiser steps
an epoch): 4,000 training rows of letter_recognition (the first 4,000 of the UCI training rows; the
test rows are the UCI convention's last 4,000) and 2,000 training rows of a linear target (8
standard normal features, weights drawn once from N(0, 1), noise of standard deviation 0.1, so the
best possible R^2 is about 0.999; 10,000 test rows). Each configuration is fitted with
``fit(X, y)`` as a user would (no ``X_val``) for every seed, next to HistGradientBoosting in the
same run. Goals of the issue: accuracy >= 0.85 and R^2 >= 0.95 with defaults.

Run::

    python -m benchmarks.small_data [--seeds 0 1 2] [--configs defaults old_defaults cosine+wide ...]
                                    [--output benchmarks/results/small_data.md]

``--configs`` takes configuration names of ``benchmarks/configs.py`` (``defaults``, ``old_defaults``,
variants joined by ``+``).
"""

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import accuracy_score, r2_score

from benchmarks import configs
from benchmarks._measure import cpu_model
from sparsetab import SparseTabNetClassifier, SparseTabNetRegressor
from sparsetab.datasets import load_letter_recognition

# Configurations by their names in configs.py (e.g. "old_defaults", "defaults", "cosine+wide+ple+auto_batch").
DEFAULT_CONFIGS = ("defaults", "old_defaults")


def letter_rows():
    """The first 4,000 UCI training rows of letter_recognition and the 4,000 UCI test rows."""
    X, y = load_letter_recognition(subset="all", return_X_y=True)
    return X.iloc[:4000], y.iloc[:4000], X.iloc[16000:], y.iloc[16000:]


def linear_rows():
    """2,000 training and 10,000 test rows of y = X w + 0.1 * noise, 8 standard normal features."""
    rng = np.random.default_rng(0)
    weights = rng.normal(size=8)
    X = rng.normal(size=(12000, 8))
    y = X @ weights + 0.1 * rng.normal(size=12000)
    return X[:2000], y[:2000], X[2000:], y[2000:]


def run(config, seed):
    """Accuracy on letter and R^2 on the linear target of one configuration and seed, and the fit seconds."""
    results = {}
    for name, load, estimator, metric in (
        ("letter 4,000 rows (accuracy)", letter_rows, SparseTabNetClassifier, accuracy_score),
        ("linear 2,000 rows (R^2)", linear_rows, SparseTabNetRegressor, r2_score),
    ):
        X, y, X_test, y_test = load()
        model = estimator(random_state=seed, **config)
        started = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(X, y)
        seconds = time.perf_counter() - started
        results[name] = (metric(y_test, model.predict(X_test)), seconds, model.n_iter_)
    return results


def run_boosting(seed):
    """HistGradientBoosting with its defaults on the same rows."""
    results = {}
    for name, load, estimator, metric in (
        ("letter 4,000 rows (accuracy)", letter_rows, HistGradientBoostingClassifier, accuracy_score),
        ("linear 2,000 rows (R^2)", linear_rows, HistGradientBoostingRegressor, r2_score),
    ):
        X, y, X_test, y_test = load()
        model = estimator(random_state=seed)
        started = time.perf_counter()
        model.fit(X, y)
        results[name] = (metric(y_test, model.predict(X_test)), time.perf_counter() - started, model.n_iter_)
    return results


def main(argv=None):
    """Run the configurations and print (and optionally write) the Markdown table.

    Parameters
    ----------
    argv : list of str, default=None
        Command-line arguments (``sys.argv[1:]`` when None).
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--configs", nargs="+", default=list(DEFAULT_CONFIGS))
    parser.add_argument("--output")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    rows = {}
    accepted = SparseTabNetClassifier().get_params().keys()
    resolved = {config: configs.resolve(config, accepted) for config in args.configs}
    for config in args.configs:
        rows[f"sparsetab ({config})"] = [run(resolved[config], seed) for seed in args.seeds]
    rows["HistGradientBoosting"] = [run_boosting(seed) for seed in args.seeds]
    cases = list(next(iter(rows.values()))[0])
    lines = [
        "# Small tables with default settings",
        "",
        f"Machine: {cpu_model()}. Seeds: {args.seeds}. Wall time {time.perf_counter() - started:.0f} s.",
        "",
        "| model | " + " | ".join(f"{case}: mean (min-max) | fit s | epochs" for case in cases) + " |",
        "|---|" + "---|---|---|" * len(cases),
    ]
    for model, runs in rows.items():
        cells = []
        for case in cases:
            scores = [run_[case][0] for run_ in runs]
            cells.append(
                f"{np.mean(scores):.3f} ({min(scores):.3f}-{max(scores):.3f}) | "
                f"{np.mean([run_[case][1] for run_ in runs]):.1f} | "
                f"{np.mean([run_[case][2] for run_ in runs]):.0f}"
            )
        lines.append(f"| {model} | " + " | ".join(cells) + " |")
    for name, config in resolved.items():
        lines.append(f"\n- {name}: `{config}`")
    text = "\n".join(lines)
    print(text)
    if args.output:
        Path(args.output).write_text(text + "\n")


if __name__ == "__main__":
    main()
