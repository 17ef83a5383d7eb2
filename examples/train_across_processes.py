"""Training one model in several processes with ``sparsetab.distributed.fit``: torchrun, or Ray Train.
===================================================================================================

Each process (rank) reads its own shard of the rows; :func:`sparsetab.distributed.fit` fits the
encoding on the union, trains with the gradients summed over the ranks, and returns the same
fitted estimator on every rank, rank 0 writing the model file.

With torchrun, on one machine (gloo, CPU)::

    OMP_NUM_THREADS=1 torchrun --standalone --nproc_per_node=2 examples/train_across_processes.py

With Ray Train (``pip install "ray[train]"``; not installed with sparsetab, and this part is not run
by the test suite)::

    python examples/train_across_processes.py --ray

Ray's ``TorchTrainer`` starts the workers and initialises their process group itself; the
function each worker runs is the same as torchrun's.
"""

import argparse
import os

import numpy as np
import pandas as pd
import torch.distributed as dist

from sparsetab import SparseTabNetClassifier, load_model
from sparsetab.distributed import fit

MODEL_PATH = "model_across_processes.sparsetab"


def read_shard(rank, world_size, n_rows=4000):
    """This rank's rows: here every rank draws the same table and keeps the rows ``rank, rank + W, ...``.

    In practice each rank reads its own files (``pd.read_parquet(f"part-{rank}.parquet")``).
    """
    rng = np.random.default_rng(0)
    X = pd.DataFrame(
        {
            "income": rng.lognormal(10, 1, n_rows),
            "age": rng.uniform(18, 90, n_rows),
            "plan": pd.Categorical(rng.choice(["basic", "gold", "platinum"], n_rows)),
        }
    )
    y = (np.log(X["income"]) + (X["plan"] == "gold") * 0.5 - X["age"] / 60 > 9.6).astype(int).to_numpy()
    rows = np.arange(n_rows)[rank::world_size]
    return X.iloc[rows].reset_index(drop=True), y[rows], X.iloc[:400], y[:400]


def train(config=None):
    """Run on every rank of an initialised process group: fit, then (rank 0) check the written model."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    X_shard, y_shard, X_val, y_val = read_shard(rank, world_size)
    # batch_size a multiple of world_size * virtual_batch_size: each rank's virtual batches are then those
    # of a one-process fit of the same global batches (see the Notes of sparsetab.distributed.fit).
    estimator = SparseTabNetClassifier(
        batch_size=1024, virtual_batch_size=128, max_epochs=20, early_stopping=True, random_state=0, n_jobs=1
    )
    fit(
        estimator,
        X_shard,
        y_shard,
        X_val=X_val if rank == 0 else None,  # validation rows are read on rank 0
        y_val=y_val if rank == 0 else None,
        path=MODEL_PATH,
    )
    if rank == 0:
        reloaded = load_model(MODEL_PATH)
        print(f"{world_size} ranks, {estimator.n_iter_} epochs, validation accuracy {reloaded.score(X_val, y_val):.3f}")


def main_torchrun():
    dist.init_process_group("gloo")  # "nccl" with torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    try:
        train()
    finally:
        dist.destroy_process_group()


def main_ray(num_workers=2):
    from ray.train import ScalingConfig
    from ray.train.torch import TorchTrainer

    # Each worker runs train() in a process group (gloo on CPU workers) that TorchTrainer has set up. MODEL_PATH
    # is relative to rank 0's working directory; give an absolute path on shared storage in a cluster.
    trainer = TorchTrainer(train, scaling_config=ScalingConfig(num_workers=num_workers, use_gpu=False))
    trainer.fit()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ray", action="store_true", help="launch the workers with Ray Train's TorchTrainer")
    if parser.parse_args().ray:
        main_ray()
    elif "RANK" in os.environ:
        main_torchrun()
    else:
        parser.error("launch with torchrun --standalone --nproc_per_node=2 (see the module description), or --ray")
