"""The schema fuzzer's long run: random DataFrames through fit, predict_proba and explain.

The strategy and the contract are those of the suite's fuzz test (tests/schema_strategies.py): ``fit``
succeeds or raises a ValueError/TypeError naming a column; ``predict_proba`` is finite with rows
summing to 1; the masks of ``explain`` are finite and sum to 1; no input is modified. Here hypothesis
explores at random (no shrinking, no example database), and every failure is recorded instead of
stopping the run, with the frame that caused it, so that it can become an ``@example`` of the suite. From the
repository root (the strategy is imported from the ``tests`` package)::

    python -m benchmarks.fuzz --examples 2000 [--seed 0] [--output benchmarks/results/fuzz.md]
"""

import argparse
import collections
import pathlib
import platform
import re
import sys
import time
import traceback
import warnings

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed

from tests.schema_strategies import cases, check_case


def run(n_examples, seed):
    """Try ``n_examples`` random cases; return the outcome counts and the failures."""
    outcomes, failures, kinds = collections.Counter(), [], collections.Counter()

    @hypothesis_seed(seed)
    @settings(
        max_examples=n_examples,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(cases())
    def explore(case):
        X, y, X_new, shift = case
        kinds.update(name.split("_")[0] for name in X.columns)
        kinds.update([f"shift: {shift}"])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                outcomes[check_case(X, y, X_new, shift)] += 1
            except Exception as error:  # every failure is recorded, and the exploration goes on
                outcomes["failed"] += 1
                failures.append((repr(error)[:300], X.dtypes.astype(str).to_dict(), shift, traceback.format_exc()))

    explore()
    return outcomes, failures, kinds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", help="also write the report to this Markdown file")
    args = parser.parse_args()
    started = time.perf_counter()
    outcomes, failures, kinds = run(args.examples, args.seed)
    lines = [
        f"# Schema fuzzer: `python -m benchmarks.fuzz --examples {args.examples} --seed {args.seed}`",
        "",
        f"{platform.processor() or platform.machine()}, Python {platform.python_version()}; "
        f"wall time {time.perf_counter() - started:.0f} s.",
        "",
        f"Examples tried: {sum(outcomes.values())}. Outcomes: "
        + ", ".join(f"{name} {count}" for name, count in sorted(outcomes.items()))
        + f". Failures: {len(failures)}.",
        "",
        "Column kinds and predict-time shifts drawn (counts over the examples): "
        + ", ".join(f"{name} {count}" for name, count in sorted(kinds.items()))
        + ".",
    ]
    # One section per kind of failure (the message without its column names and numbers), with its first case.
    groups = collections.defaultdict(list)
    for failure in failures:
        groups[re.sub(r"'[^']*'|\d+", "_", failure[0])[:160]].append(failure)
    for number, (signature, members) in enumerate(groups.items(), 1):
        message, dtypes, shift, trace = members[0]
        lines += ["", f"## Failure {number}: {len(members)} example(s)", "", f"- kind: `{signature}`"]
        lines += [f"- first: `{message}`", f"- dtypes: {dtypes}", f"- shift: {shift}"]
        lines += ["", "```", trace.strip()[-1500:], "```"]
    report = "\n".join(lines) + "\n"
    print(report)
    if args.output:
        pathlib.Path(args.output).write_text(report)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
