"""Default fit time of tables under 1,000 rows with the default threads, one and two, quiet and beside a busy process.

Issue 34 item 6: a small table's optimiser steps are tiny (batch 32 on a few hundred rows), and
intra-op threads may cost more than they gain, most of all when another process keeps a core busy
(OpenMP threads then wait for each other). For scikit-learn's bundled tables under 1,000 rows it
fits the defaults (``random_state=0``, 80/20 split, seed 0) with ``n_jobs=None`` (the default: the
rule of :func:`sparsetab._runtime.training_threads`, in a process whose torch count is the
machine's cores), ``n_jobs=1`` and ``n_jobs=2``, each on a quiet machine and beside one busy
process (a Python loop spinning on one core; there without ``n_jobs=2``, whose steps are 12-20x
slower than one thread's, see ``benchmarks/training_threads.py --busy``: the four fits took over
ten minutes), and HistGradientBoosting's defaults in the same run.
Wall seconds of ``fit``, the median of ``--repeats`` fits (3) with their range: on a 2-core machine one
fit of a few seconds varies by about 10% from run to run, and the thread counts take turns at going
first (a fit that follows another one can find that one's idle OpenMP threads still spinning). The
test score is printed too, as fits at different thread counts follow different float trajectories.

    python -m benchmarks.small_fit_threads [--repeats 3] [--output benchmarks/results/small_fit_threads.md]
"""

import argparse
import multiprocessing
import statistics
import time
import warnings

import torch
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris, load_wine
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.model_selection import train_test_split

from benchmarks._measure import cpu_model, publish
from sparsetab import SparseTabNetClassifier, SparseTabNetRegressor

TABLES = {
    "iris": (load_iris, "classification"),
    "wine": (load_wine, "classification"),
    "breast_cancer": (load_breast_cancer, "classification"),
    "diabetes": (load_diabetes, "regression"),
}


def _spin(stop):
    while not stop.is_set():
        pass


def fit_seconds(model, X, y):
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, y)
    return time.perf_counter() - start


def measure(busy, repeats):
    """Per table: {configuration: (median, lowest, highest fit seconds, test score, epochs)}.

    The configurations are the thread counts (None is the default) and "hgb". Each repeat fits every
    configuration once, a fresh model each time, starting one configuration later than the repeat before.
    """
    stop = multiprocessing.Event()
    spinner = multiprocessing.Process(target=_spin, args=(stop,)) if busy else None
    if spinner is not None:
        spinner.start()
        time.sleep(1.0)
    rows = []
    try:
        for name, (loader, task) in TABLES.items():
            X, y = loader(return_X_y=True)
            stratify = y if task == "classification" else None
            X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0, stratify=stratify)
            estimator = SparseTabNetClassifier if task == "classification" else SparseTabNetRegressor
            booster = HistGradientBoostingClassifier if task == "classification" else HistGradientBoostingRegressor
            configurations = [None, 1] if busy else [None, 1, 2]
            configurations.append("hgb")
            seconds = {configuration: [] for configuration in configurations}
            scores = {}
            for repeat in range(repeats):
                turn = repeat % len(configurations)
                for configuration in configurations[turn:] + configurations[:turn]:
                    if configuration == "hgb":
                        model = booster(random_state=0)
                    else:
                        model = estimator(random_state=0, n_jobs=configuration)
                    seconds[configuration].append(fit_seconds(model, X_train, y_train))
                    # Every repeat of a configuration is the same fit (same seed and thread count).
                    scores[configuration] = (model.score(X_test, y_test), model.n_iter_)
            cells = {
                configuration: (statistics.median(times), min(times), max(times), *scores[configuration])
                for configuration, times in seconds.items()
            }
            rows.append((name, len(X_train), cells))
    finally:
        if spinner is not None:
            stop.set()
            spinner.join()
    return rows


def _cell(cell):
    if cell is None:
        return "not run"
    median, lowest, highest, score, epochs = cell
    return f"{median:.1f} [{lowest:.1f}-{highest:.1f}] ({score:.3f}, {epochs})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="fits per table and configuration (median reported)")
    parser.add_argument("--output")
    args = parser.parse_args()
    lines = [
        "# Default fit time of small tables: the default threads, one and two, quiet and beside a busy process",
        "",
        f"Command: `python -m benchmarks.small_fit_threads --repeats {args.repeats}`. {cpu_model()}, "
        f"{multiprocessing.cpu_count()} cores, torch's thread count {torch.get_num_threads()}; seed 0, 80/20 split; "
        f"wall seconds of fit, the median of {args.repeats} fits [lowest-highest] (test score: accuracy or R^2; "
        "epochs); the ratios are of the medians.",
        "",
        "| table (training rows) | machine | default s (score, epochs) | 1 thread s (score, epochs) | "
        "2 threads s (score, epochs) | default / 1 | 2 / 1 | HistGradientBoosting s (score) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    # Each fit sets its own thread count (n_jobs) and restores the previous one.
    for busy in (False, True):
        for name, n_rows, cells in measure(busy, args.repeats):
            default, one, two, hgb = cells[None], cells[1], cells.get(2), cells["hgb"]
            machine = "one core busy" if busy else "quiet"
            fits = " | ".join(_cell(cell) for cell in (default, one, two))
            two_over_one = "" if two is None else f"{two[0] / one[0]:.2f}"
            lines.append(
                f"| {name} ({n_rows}) | {machine} | {fits} | {default[0] / one[0]:.2f} | {two_over_one} "
                f"| {hgb[0]:.2f} ({hgb[3]:.3f}) |"
            )
            print(lines[-1], flush=True)
    publish(lines, args.output)


if __name__ == "__main__":
    main()
