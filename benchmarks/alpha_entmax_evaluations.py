"""How many solver evaluations alpha-entmax needs when it cannot stop on data (off the CPU).

On the CPU, :func:`sparsetab.entmax.entmax_bisect` stops once every row has converged: the test reads
a value back, which is free there. On a GPU each such read stalls the device's queue and cannot be
captured in a CUDA graph, so there the solver makes a fixed number of evaluations (issue 34). This
sweep sets that number for the network's attention (``entmax_mode`` "constant" and "adaptive", alpha in
(1, 2)): for each alpha, width and scale of the scores it finds the fewest fixed evaluations whose map
is within ``--tolerance`` (default 1e-6, float32) of the converged one, and reports the worst case.
It runs on the CPU: the fixed-count path is the same code on every device.

Run: ``python -m benchmarks.alpha_entmax_evaluations [--output benchmarks/results/alpha_entmax_evaluations.md]``
"""

import argparse
import time

import numpy as np
import torch

from benchmarks._measure import publish
from sparsetab.entmax import _root_kernels as K

ALPHAS = tuple(np.round(np.linspace(1.01, 1.99, 50), 4)) + (1.001, 1.3, 1.7, 1.999)
WIDTHS = (2, 3, 8, 16, 64, 256, 1024)
SCALES = (0.01, 0.1, 1.0, 10.0, 100.0, 1000.0)
MAX_EVALUATIONS = 50


def score_sets(width, scale, generator):
    """Gaussian scores, scores with ties and a dominant entry, and masked (-inf) columns, scaled."""
    gaussian = torch.randn(256, width, generator=generator)
    ties = torch.randint(0, 3, (64, width), generator=generator).float()
    dominant = torch.randn(64, width, generator=generator)
    dominant[:, 0] += 8.0
    masked = torch.randn(64, width, generator=generator)
    if width > 2:
        masked[:, : width // 2] = -torch.inf
    return [gaussian * scale, ties * scale, dominant * scale, masked * scale]


def fewest_evaluations(X, alpha, tolerance):
    """The fewest fixed evaluations within ``tolerance`` of the converged map (None: more than the maximum)."""
    converged, _ = K.entmax_forward(X.double(), alpha, -1, 200, True, early_exit=True)
    low, high = 1, MAX_EVALUATIONS
    fixed, _ = K.entmax_forward(X, alpha, -1, high, True, early_exit=False)
    if float((fixed.double() - converged).abs().max()) > tolerance:
        return None
    while low < high:  # the error only shrinks with more evaluations (a bracket that keeps narrowing)
        middle = (low + high) // 2
        fixed, _ = K.entmax_forward(X, alpha, -1, middle, True, early_exit=False)
        if float((fixed.double() - converged).abs().max()) <= tolerance:
            high = middle
        else:
            low = middle + 1
    return low


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tolerance", type=float, default=1e-6)
    parser.add_argument("--output")
    args = parser.parse_args()
    torch.set_num_threads(1)
    generator = torch.Generator().manual_seed(0)
    start = time.perf_counter()
    worst = {}
    failures = []
    for width in WIDTHS:
        for scale in SCALES:
            sets = score_sets(width, scale, generator)
            for alpha in ALPHAS:
                needed = [fewest_evaluations(X, float(alpha), args.tolerance) for X in sets]
                if any(n is None for n in needed):
                    failures.append((width, scale, float(alpha)))
                    continue
                worst[width, scale] = max(worst.get((width, scale), 0), max(needed))
    overall = max(worst.values())
    lines = [
        "# alpha-entmax: fixed solver evaluations that reach the converged map",
        "",
        f"Command: `python -m benchmarks.alpha_entmax_evaluations --tolerance {args.tolerance:g}`. Float32 scores, "
        "the converged map in float64 with the early-exit solver; max absolute difference of the probabilities. "
        f"{len(ALPHAS)} alphas in [1.001, 1.999]; rows: 256 Gaussian, 64 with ties, 64 with a dominant entry, 64 "
        f"with half the columns -inf, times the scale. Wall time {time.perf_counter() - start:.0f} s.",
        "",
        "Worst case over the alphas (fewest evaluations within the tolerance), per width and scale:",
        "",
        "| width | " + " | ".join(f"scale {scale:g}" for scale in SCALES) + " |",
        "|---|" + "---|" * len(SCALES),
    ]
    for width in WIDTHS:
        cells = [str(worst.get((width, scale), "-")) for scale in SCALES]
        lines.append(f"| {width} | " + " | ".join(cells) + " |")
    lines += [
        "",
        f"Worst case overall: **{overall}** evaluations. Not within the tolerance after {MAX_EVALUATIONS}: "
        f"{len(failures)} of {len(WIDTHS) * len(SCALES) * len(ALPHAS)} settings"
        + (f" (e.g. width, scale, alpha = {failures[0]})." if failures else "."),
    ]
    publish(lines, args.output)


if __name__ == "__main__":
    main()
