"""Speed of sparsetab's entmax family against the reference ``entmax`` package (1.3) and softmax.

For each shape (float32, normalised over the last dimension) and each map --
sparsemax, 1.5-entmax, and bisection alpha-entmax at alpha 1.3 and 1.5 --
times sparsetab's implementation, entmax 1.3's and ``torch.softmax`` in the same
process, forward only and forward + backward, with ``torch.utils.benchmark``
(median of blocked runs; the minimum of that median over interleaved repeats,
which filters out other jobs on a shared machine) on one thread. Prints a Markdown document (header with
machine, versions and command, then the table) to stdout. Not part of the test
suite; ``entmax`` is only needed here (``pip install entmax==1.3``).

Run::

    python -m benchmarks.bench_entmax [--quick] [--repeats 3] [--note "2 cores, shared"] > benchmarks/results/entmax.md
"""

import argparse
import datetime
import os
import platform
import sys

import torch
from torch.utils.benchmark import Timer

from benchmarks._measure import command_line, cpu_model
from sparsetab.entmax import entmax15, sparsemax
from sparsetab.entmax.root_finding import entmax_bisect

SHAPES = [(1024, 64), (4096, 512), (256, 30000)]
QUICK_SHAPES = [(256, 64), (512, 512), (32, 30000)]


def _import_entmax():
    try:
        import entmax
    except ImportError:
        sys.exit(
            "bench_entmax.py compares against the reference `entmax` package, which is not installed.\n"
            "Install it with `pip install entmax==1.3` (it is a benchmark/test-only dependency)."
        )
    return entmax


def _maps(entmax):
    """(name, ours, entmax 1.3's) for every benchmarked map; each takes a (rows, d) tensor."""
    return [
        ("sparsemax", lambda X: sparsemax(X, dim=-1), lambda X: entmax.sparsemax(X, dim=-1)),
        ("entmax15", lambda X: entmax15(X, dim=-1), lambda X: entmax.entmax15(X, dim=-1)),
        (
            "entmax_bisect alpha=1.3",
            lambda X: entmax_bisect(X, 1.3, dim=-1),
            lambda X: entmax.entmax_bisect(X, 1.3, dim=-1),
        ),
        (
            "entmax_bisect alpha=1.5",
            lambda X: entmax_bisect(X, 1.5, dim=-1),
            lambda X: entmax.entmax_bisect(X, 1.5, dim=-1),
        ),
    ]


def _time(function, X, backward, min_run_time):
    """Median seconds of ``function(X)`` (and its backward), or None if it raises."""
    if backward:
        leaf = X.detach().clone().requires_grad_()
        grad = torch.randn_like(X)

        def run():
            leaf.grad = None
            function(leaf).backward(grad)

    else:

        def run():
            with torch.no_grad():
                function(X)

    try:
        run()  # warm-up, and a failing implementation is reported rather than fatal
    except Exception as error:  # noqa: BLE001 - any failure is reported in the table
        print(f"<!-- {type(error).__name__}: {error} -->", file=sys.stderr)
        return None
    return Timer(stmt="run()", globals={"run": run}).blocked_autorange(min_run_time=min_run_time).median


def _softmax(X):
    return torch.softmax(X, dim=-1)


def _best(times):
    times = [t for t in times if t is not None]
    return min(times) if times else None


def _ms(seconds):
    return "error" if seconds is None else f"{seconds * 1e3:.3f}"


def _ratio(numerator, denominator):
    return "" if numerator is None or denominator is None else f"{numerator / denominator:.1f}x"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller shapes and shorter timing runs")
    parser.add_argument("--repeats", type=int, default=None, help="interleaved repeats (default 3, 1 with --quick)")
    parser.add_argument("--note", default="", help="free text about the machine for the header")
    args = parser.parse_args()
    entmax = _import_entmax()
    # One thread: the comparison is about the algorithms, not about how well
    # each one's kernels happen to parallelise on a given machine.
    torch.set_num_threads(1)
    torch.manual_seed(0)
    shapes = QUICK_SHAPES if args.quick else SHAPES
    min_run_time = 0.2 if args.quick else 1.0
    repeats = args.repeats or (1 if args.quick else 3)

    command = command_line()
    note = f" {args.note.rstrip('.')}." if args.note else ""
    print("# sparsetab.entmax speed: sparsetab vs entmax 1.3 vs softmax\n")
    print(
        f"Command: `{command}`, run on {datetime.date.today().isoformat()}, {os.cpu_count()} CPU cores "
        f"({cpu_model()}, {platform.machine()}),{note} Python {platform.python_version()}, "
        f"torch {torch.__version__} with `torch.set_num_threads(1)`, entmax {entmax.__version__}. "
        "float32, normalised over the last dimension; median of `torch.utils.benchmark.Timer.blocked_autorange` "
        f"(min_run_time={min_run_time}s), minimum over {repeats} interleaved repeat(s); "
        "forward+backward includes the backward of a random cotangent. "
        "All columns come from the same run; on a shared machine compare ratios rather than absolute times.\n"
    )
    columns = ["shape", "map", "pass", "softmax ms", "sparsetab ms", "entmax 1.3 ms"]
    columns += ["entmax 1.3 / sparsetab", "sparsetab / softmax"]
    print("| " + " | ".join(columns) + " |")
    print("|---|---|---|---|---|---|---|---|")
    for shape in shapes:
        X = torch.randn(*shape)
        for backward in (False, True):
            label = "fwd+bwd" if backward else "fwd"
            for name, ours, theirs in _maps(entmax):
                # Softmax is re-timed next to every map so that all three see the
                # same machine load; each is the best of the interleaved repeats.
                runs = [[_time(f, X, backward, min_run_time) for f in (_softmax, ours, theirs)] for _ in range(repeats)]
                softmax, mine, reference = (_best(column) for column in zip(*runs))
                print(
                    f"| {shape[0]}x{shape[1]} | {name} | {label} | {_ms(softmax)} | {_ms(mine)} | {_ms(reference)} "
                    f"| {_ratio(reference, mine)} | {_ratio(mine, softmax)} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
