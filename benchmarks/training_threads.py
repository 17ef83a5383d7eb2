"""Time per training step with one and two torch threads, by the work of a step: where a second thread gains.

Issue 34 item 6: the threshold :data:`sparsetab._runtime.SMALL_STEP_WORK`, under which ``n_jobs=None``
trains on one thread, comes from this table. For tables of 8, 30 and 100 Gaussian columns (the default
piecewise-linear embedding widens each) and batches of 32 to 1,024 rows, it fits the defaults for 3
epochs of 16 equal batches (``early_stopping=False``, one efficient member) with ``n_jobs=1`` and
``n_jobs=2``, twice each, and reports the faster run's milliseconds per step (the fit's set-up
included, spread over its 48 steps) beside :func:`sparsetab._runtime.step_work`. ``--busy`` runs it
beside one process spinning on a core, as benchmarks/small_fit_threads.py does.

    python -m benchmarks.training_threads [--busy] [--widths 8 30 100] [--batches 32 64 ... 1024]
        [--output benchmarks/results/training_threads.md]

Beside a busy process two threads are so slow that the whole grid takes over half an hour:
``--busy --widths 8 30 --batches 32 128 512`` is the committed run. Started with
``OMP_WAIT_POLICY=passive`` in the environment, OpenMP's idle threads sleep instead of spinning
(``--widths 30 --batches 32 512``: ``training_threads_passive.md``, ``training_threads_busy_passive.md``).
"""

import argparse
import multiprocessing
import os
import time
import warnings

import numpy as np

from benchmarks._measure import cpu_model, publish
from sparsetab import SparseTabNetClassifier
from sparsetab._runtime import SMALL_STEP_WORK, step_work

WIDTHS = (8, 30, 100)
BATCHES = (32, 64, 128, 256, 512, 1024)
EPOCHS, STEPS_PER_EPOCH = 3, 16


def _spin(stop):
    while not stop.is_set():
        pass


def milliseconds_per_step(X, y, batch, n_jobs):
    """The faster of two fits' wall milliseconds per optimiser step, and the fitted model."""
    best, model = float("inf"), None
    for _ in range(2):
        model = SparseTabNetClassifier(
            random_state=0,
            n_jobs=n_jobs,
            max_epochs=EPOCHS,
            batch_size=batch,
            early_stopping=False,
            n_efficient_members=1,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # max_epochs=3 reached
            start = time.perf_counter()
            model.fit(X, y)
            seconds = time.perf_counter() - start
        best = min(best, seconds / (EPOCHS * STEPS_PER_EPOCH) * 1000)
    return best, model


def measure(widths, batches):
    """One row per (width, batch): work per step, ms per step with 1 and 2 threads."""
    rng = np.random.default_rng(0)
    rows = []
    for width in widths:
        for batch in batches:
            X = rng.normal(size=(batch * STEPS_PER_EPOCH, width))
            y = (X[:, 0] + X[:, 1] > 0).astype(int)
            one, model = milliseconds_per_step(X, y, batch, 1)
            two, _ = milliseconds_per_step(X, y, batch, 2)
            rows.append((width, batch, step_work(model.network_, batch), one, two))
            print(f"width {width} batch {batch}: {one:.2f} / {two:.2f} ms per step", flush=True)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--busy", action="store_true", help="beside one process spinning on a core")
    parser.add_argument("--widths", type=int, nargs="+", default=list(WIDTHS), help="numbers of columns")
    parser.add_argument("--batches", type=int, nargs="+", default=list(BATCHES), help="rows per step")
    parser.add_argument("--output")
    args = parser.parse_args()
    stop = multiprocessing.Event()
    spinner = multiprocessing.Process(target=_spin, args=(stop,)) if args.busy else None
    if spinner is not None:
        spinner.start()
        time.sleep(1.0)
    try:
        rows = measure(args.widths, args.batches)
    finally:
        if spinner is not None:
            stop.set()
            spinner.join()
    machine = "beside one busy process" if args.busy else "quiet"
    # GNU OpenMP reads its wait policy when torch loads it: only the environment of the process can set it.
    policy = f"OMP_WAIT_POLICY={os.environ['OMP_WAIT_POLICY']} " if os.environ.get("OMP_WAIT_POLICY") else ""
    lines = [
        f"# Time per training step with one and two torch threads ({machine})",
        "",
        f"Command: `{policy}python -m benchmarks.training_threads{' --busy' if args.busy else ''} "
        f"--widths {' '.join(map(str, args.widths))} --batches {' '.join(map(str, args.batches))}`. {cpu_model()}, "
        f"{multiprocessing.cpu_count()} cores. Work: `step_work` (rows x parameters); one thread under "
        f"`n_jobs=None` below SMALL_STEP_WORK = {SMALL_STEP_WORK:,}.",
        "",
        "| columns | batch | work per step | 1 thread ms/step | 2 threads ms/step | 2 / 1 | n_jobs=None takes |",
        "|---|---|---|---|---|---|---|",
    ]
    for width, batch, work, one, two in rows:
        takes = "1 thread" if work < SMALL_STEP_WORK else "torch's count"
        lines.append(f"| {width} | {batch} | {work:,} | {one:.2f} | {two:.2f} | {two / one:.2f} | {takes} |")
    publish(lines, args.output)


if __name__ == "__main__":
    main()
