"""Run by tests/test_distributed.py under ``torchrun --standalone --nproc_per_node=2`` (not a test module).

Every rank builds the same data and takes its shard. Checks, each printing one ``OK`` line on rank 0:

1. float64 steps: a small TabNet trained by ``_train_replica`` on two shards has, after a few
   steps, the weights and buffers of one process training a copy on the union with the global
   batches interleaved (row ``i`` from rank ``i mod 2``), to 1e-10; again with sigmoid step gates
   and the L1 gate penalty;
2. ``sparsetab.distributed.fit`` of a classifier (an ensemble of two members): every rank has the
   fitted estimator, whose tabular encoding and classes equal a one-process fit's on the union,
   with identical weights and predictions on both ranks, and early stopping decided on rank 0's
   validation rows; a fit that rank 0 refuses raises the same error on every rank.

Any failure raises, so torchrun exits with a non-zero status.
"""

import os
import pickle
import warnings

import numpy as np
import pandas as pd
import torch
import torch.distributed as dist

BATCH_SIZE, VIRTUAL_BATCH_SIZE, SHARD_ROWS = 32, 8, 64


class InterleavedBatches:
    """The global batches of the two ranks in one process: each rank's local batches, rows interleaved."""

    def __init__(self, shards, total_rows, seed):
        from sparsetab.distributed import ShardBatches

        self.sources = [ShardBatches(*shard, total_rows) for shard in shards]
        # Every rank draws its order from its own copy of the same stream.
        self.generators = [torch.Generator().manual_seed(seed) for _ in shards]

    def steps_per_epoch(self, batch_size):
        return self.sources[0].steps_per_epoch(batch_size)

    def epoch(self, batch_size, generator):
        streams = [source.epoch(batch_size, own) for source, own in zip(self.sources, self.generators, strict=True)]
        for local_batches in zip(*streams, strict=True):
            yield tuple(
                torch.stack(parts, dim=1).reshape(-1, *parts[0].shape[1:]) for parts in zip(*local_batches, strict=True)
            )


def check_float64_steps(rank, world_size, step_gates=None):
    from sparsetab._training.loop import TrainingConfig, train_network
    from sparsetab.distributed import _train_replica
    from sparsetab.network import TabNet

    data = torch.Generator().manual_seed(5)
    total = SHARD_ROWS * world_size
    X = torch.randn(total, 5, generator=data, dtype=torch.float64)
    X[:, 4] = torch.randint(1, 4, (total,), generator=data).double()  # a categorical column, codes 1-3
    y = (X[:, :1] * 2.0 - X[:, 1:2] + 0.1 * torch.randn(total, 1, generator=data, dtype=torch.float64)).double()
    weight = torch.rand(total, generator=data, dtype=torch.float64) + 0.5
    shards = [(X[r::world_size], y[r::world_size], weight[r::world_size]) for r in range(world_size)]

    def build():
        network = TabNet(
            [None, None, None, None, 4],
            [0, 0, 0, 0, 2],
            1,
            n_d=4,
            n_a=4,
            n_steps=2,
            virtual_batch_size=VIRTUAL_BATCH_SIZE,
            step_gates=step_gates,
            generator=torch.Generator().manual_seed(0),
        )
        return network.double()

    def loss(output, target):
        return ((output - target) ** 2).sum(dim=1)

    config = TrainingConfig(
        batch_size=BATCH_SIZE,
        max_epochs=2,
        learning_rate=0.02,
        learning_rate_decay=0.9,
        max_grad_norm=1.0,
        lambda_sparse=0.01,
        lambda_gate=0.1,
        n_iter_no_change=100,
        tol=0.0,
        early_stopping=False,
        verbose=0,
    )
    network = build()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        history = _train_replica(
            network, loss, *shards[rank], config, torch.Generator().manual_seed(3), total, group=None
        )
    state = {name: value.clone() for name, value in network.state_dict().items()}
    if rank != 0:
        dist.gather_object(state, None, dst=0)
        return
    states = [None] * world_size
    dist.gather_object(state, states, dst=0)
    reference = build()
    initial = {name: value.clone() for name, value in reference.state_dict().items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reference_history = train_network(
            reference,
            loss,
            None,
            None,
            None,
            config,
            torch.Generator().manual_seed(3),
            batches=InterleavedBatches(shards, total, 3),
        )
    expected = reference.state_dict()
    moved = max(
        float((expected[name] - initial[name]).abs().max()) for name in expected if expected[name].is_floating_point()
    )
    assert moved > 1e-3, f"training barely changed the weights ({moved}): the comparison would prove nothing"
    for other in states:
        for name, value in expected.items():
            difference = float((other[name].double() - value.double()).abs().max())
            assert difference <= 1e-10, f"{name} differs from the one-process fit by {difference}"
    assert np.allclose(history.loss_curve, reference_history.loss_curve, rtol=0, atol=1e-10), (
        history.loss_curve,
        reference_history.loss_curve,
    )
    what = "float64 steps" if step_gates is None else f"float64 steps with step_gates={step_gates!r}"
    print(f"OK {what}: {len(expected)} tensors equal to 1e-10 (weights moved by up to {moved:.3g})", flush=True)


def make_frame(n_rows, seed):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "size": rng.normal(size=n_rows) * 10 + 3,
            "colour": pd.Categorical(rng.choice(["red", "green", "blue"], size=n_rows)),
            "age": rng.uniform(0, 90, size=n_rows),
        }
    )
    frame.loc[rng.random(n_rows) < 0.1, "age"] = np.nan
    label = np.where(frame["size"] > 3, "high", "low").astype(object)
    label[(frame["colour"] == "red").to_numpy() & (frame["size"] > 10).to_numpy()] = "top"
    return frame, label


def check_estimator_fit(rank, world_size):
    from sparsetab import SparseTabNetClassifier
    from sparsetab._tabular.encoding import TabularEncoding
    from sparsetab.distributed import fit

    frame, label = make_frame(SHARD_ROWS * world_size, 11)
    # Rank 0's shard has no "top" row: the classes must be the union's.
    order = np.argsort(label == "top", kind="stable")
    frame, label = frame.iloc[order].reset_index(drop=True), label[order]
    rows = np.arange(len(label))[rank::world_size]
    X_val, y_val = make_frame(40, 12)
    estimator = SparseTabNetClassifier(
        n_d=4,
        n_a=4,
        n_steps=2,
        batch_size=BATCH_SIZE,
        virtual_batch_size=VIRTUAL_BATCH_SIZE,
        max_epochs=3,
        early_stopping=True,
        numerical_transform="quantile",
        n_ensemble=2,
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        returned = fit(
            estimator,
            frame.iloc[rows].reset_index(drop=True),
            label[rows],
            X_val=X_val if rank == 0 else None,
            y_val=y_val if rank == 0 else None,
        )
    assert returned is estimator and estimator.__sklearn_is_fitted__()
    assert list(estimator.classes_) == ["high", "low", "top"], estimator.classes_
    assert len(estimator.ensemble_n_iter_) == 2 and len(estimator.validation_scores_) == estimator.n_iter_
    union_encoding = TabularEncoding("auto", numerical_transform="quantile", random_state=None)
    # The union in rank order, as distributed.fit concatenates the shards (the sums' rounding depends on the order).
    union = frame.iloc[np.concatenate([np.arange(len(label))[r::world_size] for r in range(world_size)])]
    union_encoding.fit_transform(union.reset_index(drop=True))
    union_state = union_encoding.get_state()
    fitted_state = estimator._tabular_encoding.get_state()
    for key in ("is_categorical_", "categories_", "center_", "scale_", "has_missing_", "clip_", "data_min_"):
        assert pickle.dumps(fitted_state[key]) == pickle.dumps(union_state[key]), key
    np.testing.assert_array_equal(fitted_state["quantiles_"], union_state["quantiles_"])
    weights = torch.cat([value.reshape(-1).double() for value in estimator.network_.state_dict().values()])
    probabilities = estimator.predict_proba(X_val)
    gathered = [None] * world_size
    dist.all_gather_object(gathered, (weights, probabilities))
    for other_weights, other_probabilities in gathered:
        assert torch.equal(other_weights, weights)
        np.testing.assert_array_equal(other_probabilities, probabilities)
    # What rank 0's fit refuses is raised on every rank, none left waiting.
    try:
        fit(SparseTabNetClassifier(early_stopping=True), frame.iloc[rows], label[rows])
    except ValueError as error:
        assert "needs validation rows" in str(error), error
    else:
        raise AssertionError("early_stopping=True without X_val was accepted")
    if rank == 0:
        print(f"OK distributed.fit: {estimator.n_iter_} epochs, classes {list(estimator.classes_)}", flush=True)


def main():
    dist.init_process_group("gloo")
    rank, world_size = dist.get_rank(), dist.get_world_size()
    try:
        check_float64_steps(rank, world_size)
        check_float64_steps(rank, world_size, step_gates="sigmoid")
        check_estimator_fit(rank, world_size)
        # Both ranks done with every collective before the group is torn down: without it a rank that tore
        # down first once left the other aborting at exit ("terminate called without an active exception").
        dist.barrier()
        # Read by the test: every rank got past every check and collective, so an abort after this line is
        # gloo's teardown, not a failed check.
        print(f"rank {rank}: checks passed", flush=True)
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    main()
