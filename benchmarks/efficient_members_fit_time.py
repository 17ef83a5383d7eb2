"""Fit and predict time of the default fit on adult with and without efficient members (issue 32's bound).

Adult's official split (32,561 training rows, 16,281 test rows), ``SparseTabNetClassifier()`` with its defaults
and with ``n_efficient_members`` in ``--members`` (default 1 and 2), ``--seeds`` random states, each seed's fits
one after another (the order alternates between seeds), one fit at a time on a quiet machine, torch's own thread
count. Issue 32 bounds the default fit at 1.5 times the fit before the change and prediction at 3 times. One JSON
line per fit on standard output (appended to ``--output``), then the summary: mean fit and predict seconds,
test accuracy, epochs, and the ratios to ``n_efficient_members=1``. Run from the repository root::

    python -m benchmarks.efficient_members_fit_time --output benchmarks/results/efficient_members_fit_time.jsonl
    python -m benchmarks.efficient_members_fit_time --summary benchmarks/results/efficient_members_fit_time.jsonl
"""

import argparse
import json
import sys
import time
import warnings
from collections import defaultdict
from pathlib import Path

import numpy as np

from benchmarks._measure import cpu_model


def measure(members, seed):
    """One default fit with ``n_efficient_members=members``: its record."""
    from sparsetab import SparseTabNetClassifier
    from sparsetab.datasets import load_adult

    X_train, y_train = load_adult(subset="train", return_X_y=True)
    X_test, y_test = load_adult(subset="test", return_X_y=True)
    model = SparseTabNetClassifier(n_efficient_members=members, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        started = time.perf_counter()
        model.fit(X_train, y_train)
        fit_seconds = time.perf_counter() - started
        started = time.perf_counter()
        prediction = model.predict(X_test)
        predict_seconds = time.perf_counter() - started
    return dict(
        members=members,
        seed=seed,
        fit_s=round(fit_seconds, 2),
        predict_s=round(predict_seconds, 3),
        accuracy=float(np.mean(np.asarray(prediction) == np.asarray(y_test))),
        epochs=int(model.n_iter_),
        best_epoch=int(model.best_iteration_) + 1,
        cpu_model=cpu_model(),
    )


def summarise(path):
    """Means per member count and their ratios to one member, as Markdown."""
    groups = defaultdict(list)
    for line in Path(path).read_text().splitlines():
        if line.strip():
            record = json.loads(line)
            groups[record["members"]].append(record)
    base = groups.get(1)
    lines = [
        "| n_efficient_members | seeds | fit s | predict s | fit ratio | predict ratio | accuracy | epochs |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for members, records in sorted(groups.items()):
        fit, predict = np.mean([r["fit_s"] for r in records]), np.mean([r["predict_s"] for r in records])
        fit_ratio = f"{fit / np.mean([r['fit_s'] for r in base]):.2f}" if base else ""
        predict_ratio = f"{predict / np.mean([r['predict_s'] for r in base]):.2f}" if base else ""
        lines.append(
            f"| {members} | {len(records)} | {fit:.1f} [{min(r['fit_s'] for r in records):.1f}, "
            f"{max(r['fit_s'] for r in records):.1f}] | {predict:.2f} | {fit_ratio} | {predict_ratio} | "
            f"{np.mean([r['accuracy'] for r in records]):.4f} | {np.mean([r['epochs'] for r in records]):.1f} |"
        )
    models = sorted({r["cpu_model"] for records in groups.values() for r in records})
    return "\n".join(lines) + f"\n\nCPU: {', '.join(models)}; one fit at a time, torch's default threads."


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--output", default=str(Path(__file__).parent / "results" / "efficient_members_fit_time.jsonl"))
    parser.add_argument("--summary", help="only print the summary of this JSON-lines file")
    args = parser.parse_args(argv)
    if not args.summary:
        for index, seed in enumerate(args.seeds):
            order = args.members if index % 2 == 0 else list(reversed(args.members))
            for members in order:
                record = measure(members, seed)
                print(json.dumps(record), flush=True)
                with open(args.output, "a", encoding="utf-8") as handle:
                    handle.write(json.dumps(record) + "\n")
    print(summarise(args.summary or args.output))


if __name__ == "__main__":
    sys.exit(main())
