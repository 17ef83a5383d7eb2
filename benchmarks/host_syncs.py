"""Host synchronisations per training step, per entmax mode.

Counts the calls that make the host wait for the device's result (``Tensor.__bool__``,
``__float__``, ``__int__``, ``__index__``, ``item``, ``tolist`` and ``torch.equal``) inside the fit loop
(``sparsetab._base.train_network``), on the CPU: a call that costs little there stalls a GPU
pipeline at every step. Steps of epochs 2 and 3 are counted (the difference between a 3-epoch
and a 1-epoch fit), so once-per-fit work is left out. Each mode is counted twice: as the CPU solves the sparse
maps (sort-free, a convergence test after every pass) and as every other device does (sparsemax and 1.5-entmax by
sorting, alpha-entmax with a fixed number of evaluations; forced here on the CPU through ``SORT_FREE_DEVICES`` and
``PER_PASS_TEST_DEVICES``).

    python -m benchmarks.host_syncs [--output benchmarks/results/host_syncs.md]
"""

import argparse
import collections
import contextlib
import subprocess
import traceback
import warnings
from pathlib import Path
from unittest import mock

import numpy as np
import torch

import sparsetab._base as base
import sparsetab.entmax._threshold_kernels as kernels
from sparsetab import SparseTabNetClassifier

NAMES = ("__bool__", "__float__", "__int__", "__index__", "item", "tolist")
MODES = ("sparsemax", "entmax15", "constant", "adaptive")
ROWS, BATCH = 4096, 512


@contextlib.contextmanager
def counting(counter):
    """Count the sync calls made inside the fit loop into ``counter`` (by sparsetab source line)."""
    originals = {name: getattr(torch.Tensor, name) for name in NAMES}

    def counted(original):
        def call(self, *args, **kwargs):
            frames = [frame for frame in traceback.extract_stack()[:-1] if "/sparsetab/" in frame.filename]
            where = f"{frames[-1].filename.split('/sparsetab/')[-1]}:{frames[-1].lineno}" if frames else "?"
            counter[where] += 1
            return original(self, *args, **kwargs)

        return call

    original_train = base.train_network
    original_equal = torch.equal

    def train(*args, **kwargs):
        for name, original in originals.items():
            setattr(torch.Tensor, name, counted(original))
        torch.equal = counted(original_equal)
        try:
            return original_train(*args, **kwargs)
        finally:
            for name, original in originals.items():
                setattr(torch.Tensor, name, original)
            torch.equal = original_equal

    base.train_network = train
    try:
        yield
    finally:
        base.train_network = original_train


def syncs_per_step(mode, off_the_cpu):
    """(syncs per step, the three busiest source lines) for ``mode``, solved as on the CPU or as elsewhere."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(ROWS, 16))
    y = (X[:, 0] > 0).astype(int)
    counts = []
    for epochs in (1, 3):
        counter = collections.Counter()
        model = SparseTabNetClassifier(
            n_d=8,
            n_a=8,
            max_epochs=epochs,
            batch_size=BATCH,
            virtual_batch_size=128,
            entmax_mode=mode,
            entmax_alpha=1.3,
            early_stopping=False,
            numerical_embedding=None,
            random_state=0,
        )
        devices = frozenset() if off_the_cpu else frozenset({"cpu"})
        with (
            counting(counter),
            warnings.catch_warnings(),
            mock.patch.object(kernels, "PER_PASS_TEST_DEVICES", devices),
            mock.patch.object(kernels, "SORT_FREE_DEVICES", devices),
        ):
            warnings.simplefilter("ignore")
            model.fit(X, y)
        counts.append(counter)
    steps = 2 * (ROWS // BATCH)
    difference = counts[1] - counts[0]
    return sum(difference.values()) / steps, [f"{line} ({n / steps:g})" for line, n in difference.most_common(3)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path)
    args = parser.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    lines = [
        f"Host syncs per training step (commit {commit}; {ROWS} rows, batch {BATCH}, n_d = n_a = 8, 3 steps):",
        "",
        "| entmax_mode | solved as | syncs per step | busiest lines (syncs per step) |",
        "|---|---|---|---|",
    ]
    for mode in MODES:
        for off_the_cpu in (False, True):
            per_step, busiest = syncs_per_step(mode, off_the_cpu)
            solved = "off the CPU (sorting, fixed evaluations)" if off_the_cpu else "on the CPU (per-pass tests)"
            lines.append(f"| {mode} | {solved} | {per_step:.1f} | {', '.join(busiest)} |")
    text = "\n".join(lines)
    print(text)
    if args.output:
        args.output.write_text(text + "\n")


if __name__ == "__main__":
    main()
