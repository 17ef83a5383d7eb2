"""Host synchronisations per training step, per entmax mode, by kind.

Counts, with ``sparsetab._host_syncs.SyncCounter`` and on the CPU, the calls made inside the fit loop
(``sparsetab._base.train_network``) that make the host wait for a GPU: value reads (``Tensor.__bool__``,
``__float__``, ``__int__``, ``__index__``, ``item``, ``tolist``, ``torch.equal``), operators whose output size
depends on the values (``nonzero``, boolean-mask indexing, ...) and copies from pageable host memory to the device
(``.to(device)`` of a host-made tensor, ``torch.tensor(..., device=...)``). A call that costs little on the CPU
stalls a GPU pipeline at every step. Steps of epochs 2 and 3 are counted (the difference between a 3-epoch and a
1-epoch fit), so once-per-fit work is left out. Each mode is counted twice: as the CPU solves the sparse maps
(sort-free, a convergence test after every pass) and as every other device does (sparsemax and 1.5-entmax by
sorting, alpha-entmax with a fixed number of evaluations; forced here on the CPU through ``SORT_FREE_DEVICES`` and
``PER_PASS_TEST_DEVICES``).

    python -m benchmarks.host_syncs [--output benchmarks/results/host_syncs.md]
"""

import argparse
import collections
import contextlib
import subprocess
import warnings
from pathlib import Path
from unittest import mock

import numpy as np

import sparsetab._base as base
import sparsetab.entmax._threshold_kernels as kernels
from sparsetab import SparseTabNetClassifier
from sparsetab._host_syncs import SYNC_KINDS, SyncCounter

MODES = ("sparsemax", "entmax15", "constant", "adaptive")
ROWS, BATCH = 4096, 512


@contextlib.contextmanager
def counting(counter):
    """Count the syncs made inside the fit loop with ``counter`` (a SyncCounter, by sparsetab source line)."""
    original_train = base.train_network

    def train(*args, **kwargs):
        with counter.counting(locations=True):
            return original_train(*args, **kwargs)

    with mock.patch.object(base, "train_network", train):
        yield


def syncs_per_step(mode, off_the_cpu):
    """(syncs per step, the three busiest source lines) for ``mode``, solved as on the CPU or as elsewhere."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(ROWS, 16))
    y = (X[:, 0] > 0).astype(int)
    counts = []
    for epochs in (1, 3):
        counter = SyncCounter()
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
    difference = counts[1].counts - counts[0].counts
    per_kind = {kind: sum(n for (k, _), n in difference.items() if k == kind) / steps for kind in SYNC_KINDS}
    by_line = collections.Counter()
    for (_, where), n in difference.items():
        by_line[where] += n
    return per_kind, [f"{line} ({n / steps:g})" for line, n in by_line.most_common(3)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path)
    args = parser.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    lines = [
        f"Host syncs per training step (commit {commit}; {ROWS} rows, batch {BATCH}, n_d = n_a = 8, 3 steps; "
        "epochs 2-3, whose 16 steps include 2 epoch ends):",
        "",
        "| entmax_mode | solved as | value reads | data-dependent shapes | pageable copies "
        "| busiest lines (per step) |",
        "|---|---|---|---|---|---|",
    ]
    for mode in MODES:
        for off_the_cpu in (False, True):
            per_kind, busiest = syncs_per_step(mode, off_the_cpu)
            solved = "off the CPU (sorting, fixed evaluations)" if off_the_cpu else "on the CPU (per-pass tests)"
            counts = " | ".join(f"{per_kind[kind]:.3g}" for kind in SYNC_KINDS)
            lines.append(f"| {mode} | {solved} | {counts} | {', '.join(busiest) or '-'} |")
    text = "\n".join(lines)
    print(text)
    if args.output:
        args.output.write_text(text + "\n")


if __name__ == "__main__":
    main()
