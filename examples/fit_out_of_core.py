"""Fit from a Parquet file without loading it: sparsetab.streaming.fit on the bundled Adult data.
==============================================================================================

Writes Adult's training rows, shuffled, as a Parquet file of several row groups (a stand-in for a
table too large for memory), fits a classifier by reading that file in chunks, and compares it with
an in-memory fit of the same rows, on Adult's test rows. Run::

    python examples/fit_out_of_core.py [--max-epochs 10] [--folder /tmp]
"""

import argparse
import tempfile
import time
from pathlib import Path

from sparsetab import SparseTabNetClassifier
from sparsetab.datasets import load_adult
from sparsetab.streaming import fit


def write_parquet(frame, path, row_group_rows=4096, seed=0):
    """Write ``frame`` to ``path`` in random row order, ``row_group_rows`` rows per row group."""
    frame.sample(frac=1.0, random_state=seed).to_parquet(path, index=False, row_group_size=row_group_rows)
    return path


def main(max_epochs=10, folder=None, rows=None):
    """Fit streamed and in memory; return the two test accuracies."""
    train, test = load_adult(subset="train"), load_adult(subset="test")
    frame = train.frame if rows is None else train.frame.iloc[:rows]
    folder = Path(folder or tempfile.mkdtemp())
    path = write_parquet(frame, folder / "adult_train.parquet")
    parameters = dict(max_epochs=max_epochs, early_stopping=False, random_state=0)

    started = time.perf_counter()
    # The encoding pass reads every row once; then each epoch reads the row groups in a new order.
    streamed = fit(SparseTabNetClassifier(**parameters), path, target="income", chunk_rows=8192)
    streamed_seconds = time.perf_counter() - started

    started = time.perf_counter()
    in_memory = SparseTabNetClassifier(**parameters).fit(frame.drop(columns="income"), frame["income"])
    in_memory_seconds = time.perf_counter() - started

    scores = {
        "streamed": streamed.score(test.data, test.target),
        "in memory": in_memory.score(test.data, test.target),
    }
    print(f"{len(frame):,} training rows read from {path.name} in chunks; {max_epochs} epochs")
    print(f"streamed : test accuracy {scores['streamed']:.4f} in {streamed_seconds:.1f}s")
    print(f"in memory: test accuracy {scores['in memory']:.4f} in {in_memory_seconds:.1f}s")
    return scores


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-epochs", type=int, default=10)
    parser.add_argument("--folder", type=Path, default=None)
    arguments = parser.parse_args()
    main(arguments.max_epochs, arguments.folder)
