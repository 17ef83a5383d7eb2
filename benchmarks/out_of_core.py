"""Out-of-core fit: peak memory against the table's size, and accuracy against an in-memory fit.

Writes a generated classification table as Parquet files of 1, 3 and 10 million rows (in chunks of
250,000 rows, one row group each; the smaller files are the first rows of the larger), then, each in
a fresh process so that its peak resident set size (RSS) is its own:

- ``sparsetab.streaming.fit`` for one epoch at 1M, 3M and 10M rows: peak RSS, wall time, test accuracy;
- at 1M rows, ``streaming.fit`` and an in-memory ``fit`` on the same rows (the whole file read
  with pandas), ``--epochs`` epochs each, for each seed of ``--seeds``: test accuracy side by side.

The table: 8 numeric columns (normal, one with 10% missing values, one heavy-tailed), a
declared pandas category of 50 levels and a string column of 5 levels; the label is a noisy
non-linear function of 5 of them (Bayes accuracy below 1). The test set is 200,000 other rows
in memory. Default parameters, except ``max_epochs`` and ``early_stopping=False``.

    python -m benchmarks.out_of_core [--sizes 1 3 10] [--seeds 0 1] [--epochs 2] [--n-jobs 1]
        [--workdir /tmp/sparsetab_out_of_core] [--output benchmarks/results/out_of_core.md]
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks._measure import cpu_model

CHUNK = 250_000
LEVELS = [f"level_{i:02d}" for i in range(50)]
COLOURS = ["red", "green", "blue", "amber", "violet"]


def generate(n_rows, seed):
    """``n_rows`` rows of the table, drawn from ``numpy.random.default_rng(seed)``."""
    rng = np.random.default_rng(seed)
    numeric = rng.normal(size=(n_rows, 8))
    frame = pd.DataFrame(numeric, columns=[f"x{j}" for j in range(8)])
    frame["x7"] = rng.standard_t(df=2, size=n_rows) * 100.0  # heavy tails, large scale
    level = rng.integers(0, len(LEVELS), n_rows)
    frame["level"] = pd.Categorical.from_codes(level, categories=LEVELS)
    frame["colour"] = np.asarray(COLOURS, dtype=object)[rng.integers(0, len(COLOURS), n_rows)]
    effect = np.sin(3 * frame["x0"]) + frame["x1"] * frame["x2"] + 0.8 * (frame["colour"] == "red")
    effect = effect + 0.6 * np.cos(level / 4.0) + 0.01 * np.clip(frame["x7"], -200, 200)
    frame.loc[rng.random(n_rows) < 0.1, "x3"] = np.nan
    frame["label"] = (effect + rng.normal(scale=0.6, size=n_rows) > 0.4).astype(np.int64)
    return frame


def write_tables(workdir, sizes_millions):
    """Write ``rows_{n}M.parquet`` for each size (skipped when present); returns their paths."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    workdir.mkdir(parents=True, exist_ok=True)
    paths = {size: workdir / f"rows_{size}M.parquet" for size in sizes_millions}
    missing = [size for size in sizes_millions if not paths[size].exists()]
    if missing:
        writers = {size: None for size in missing}
        for index in range(max(missing) * 1_000_000 // CHUNK):
            table = pa.Table.from_pandas(generate(CHUNK, 1000 + index), preserve_index=False)
            for size in missing:
                if index < size * 1_000_000 // CHUNK:
                    if writers[size] is None:
                        writers[size] = pq.ParquetWriter(paths[size], table.schema)
                    writers[size].write_table(table, row_group_size=CHUNK)
        for writer in writers.values():
            writer.close()
    return paths


def run_one(task):
    """Run one fit in this process and return its measurements (the child side of ``measure``)."""
    from sparsetab import SparseTabNetClassifier
    from sparsetab.streaming import fit

    test = generate(200_000, 7)
    X_test, y_test = test.drop(columns="label"), test["label"]
    estimator = SparseTabNetClassifier(
        max_epochs=task["epochs"], early_stopping=False, random_state=task["seed"], n_jobs=task["n_jobs"]
    )
    started = time.perf_counter()
    if task["how"] == "streamed":
        fit(estimator, task["path"], target="label")
    else:
        frame = pd.read_parquet(task["path"])
        estimator.fit(frame.drop(columns="label"), frame["label"])
        del frame
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kilobytes on Linux
    return {**task, "seconds": seconds, "peak_rss_mb": peak, "accuracy": float(estimator.score(X_test, y_test))}


def measure(task):
    """Run ``task`` in a fresh Python process (its own peak RSS) and return its measurements."""
    # As a module, as the parent runs (from the repository root): the child imports benchmarks._measure too.
    output = subprocess.run(
        [sys.executable, "-m", "benchmarks.out_of_core", "--child", json.dumps(task)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(output.strip().splitlines()[-1])


def baseline_rss():
    """Peak RSS of a process that imports sparsetab and fits nothing, in MiB."""
    code = "import resource, sparsetab.streaming; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)"
    return float(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 3, 10], help="table sizes, millions of rows")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--epochs", type=int, default=2, help="epochs of the 1M-row comparison")
    parser.add_argument("--n-jobs", type=int, default=1, help="torch threads of each fit")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/sparsetab_out_of_core"))
    parser.add_argument("--output", type=Path, default=Path(__file__).parent / "results" / "out_of_core.md")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.child:
        print(json.dumps(run_one(json.loads(arguments.child))))
        return
    started = time.perf_counter()
    paths = write_tables(arguments.workdir, sorted(set(arguments.sizes) | {1}))
    written = time.perf_counter() - started
    base = baseline_rss()
    jobs = arguments.n_jobs
    rows = []
    for size in sorted(arguments.sizes):
        task = dict(how="streamed", path=str(paths[size]), rows=size * 1_000_000, epochs=1, seed=0, n_jobs=jobs)
        rows.append(measure(task))
        print(json.dumps(rows[-1]), flush=True)
    comparison = []
    for seed in arguments.seeds:
        for how in ("streamed", "in memory"):
            task = dict(how=how, path=str(paths[1]), rows=1_000_000, epochs=arguments.epochs, seed=seed, n_jobs=jobs)
            comparison.append(measure(task))
            print(json.dumps(comparison[-1]), flush=True)
    total = time.perf_counter() - started
    lines = [
        "# Out-of-core fit: memory and accuracy",
        "",
        f"`python -m benchmarks.out_of_core --sizes {' '.join(map(str, arguments.sizes))} --seeds "
        f"{' '.join(map(str, arguments.seeds))} --epochs {arguments.epochs} --n-jobs {jobs}` on {cpu_model()} "
        f"({os.cpu_count()} cores), {time.strftime('%Y-%m-%d')}; whole run {total / 60:.1f} min, of which "
        f"{written / 60:.1f} min writing the Parquet files. Default parameters, `max_epochs` as shown, "
        f"`early_stopping=False`, `n_jobs={jobs}`; test accuracy on 200,000 generated rows. Peak RSS of a fresh "
        "process; a process "
        f"that only imports sparsetab peaks at {base:.0f} MiB.",
        "",
        "## Peak memory against rows (streamed, one epoch)",
        "",
        "| rows | peak RSS (MiB) | above import (MiB) | wall time (s) | rows/s | test accuracy |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(
            f"| {row['rows']:,} | {row['peak_rss_mb']:.0f} | {row['peak_rss_mb'] - base:.0f} | {row['seconds']:.0f} | "
            f"{row['rows'] / row['seconds']:,.0f} | {row['accuracy']:.4f} |"
        )
    lines += [
        "",
        f"## Accuracy at 1M rows: streamed against in memory ({arguments.epochs} epochs)",
        "",
        "| seed | fit | test accuracy | peak RSS (MiB) | wall time (s) |",
        "|---:|---|---:|---:|---:|",
    ]
    for row in comparison:
        lines.append(
            f"| {row['seed']} | {row['how']} | {row['accuracy']:.4f} | {row['peak_rss_mb']:.0f} "
            f"| {row['seconds']:.0f} |"
        )
    for how in ("streamed", "in memory"):
        values = [row["accuracy"] for row in comparison if row["how"] == how]
        spread = np.std(values, ddof=1) if len(values) > 1 else float("nan")
        lines.append(f"| mean | {how} | {np.mean(values):.4f} (sd {spread:.4f}) | | |")
    arguments.output.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
