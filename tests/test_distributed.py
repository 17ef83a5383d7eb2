"""Training across processes: the torchrun run of tests/distributed_script.py and in-process checks."""

import os
import socket
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
import torch.distributed as dist
from sklearn.exceptions import ConvergenceWarning

from sparsetab import SparseTabNetClassifier, SparseTabNetRegressor, load_model
from sparsetab.distributed import ProcessGroupReplicas, ShardBatches, _union, fit

ROOT = Path(__file__).resolve().parents[1]


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _can_bind_localhost():
    try:
        _free_port()
    except OSError:
        return False
    return dist.is_available() and dist.is_gloo_available()


@pytest.fixture
def one_process_group():
    if not _can_bind_localhost():
        pytest.skip("gloo cannot bind to 127.0.0.1 here")
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{_free_port()}", rank=0, world_size=1)
    try:
        yield
    finally:
        dist.destroy_process_group()


def test_torchrun_two_processes_equal_one_process_fit():
    if not _can_bind_localhost():
        pytest.skip("gloo cannot bind to 127.0.0.1 here, so torchrun cannot start its two processes")
    environment = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2"]
    for attempt in range(2):
        result = subprocess.run(
            [*command, str(ROOT / "tests" / "distributed_script.py")],
            env=environment,
            capture_output=True,
            text=True,
            timeout=240,
            cwd=ROOT,
        )
        if result.returncode != 0 and "Address family not supported" in result.stderr:
            pytest.skip("torchrun's rendezvous cannot bind to localhost here")
        # Rarely, on a loaded machine, a rank aborts in gloo's teardown after both ranks passed every check
        # and the closing barrier ("terminate called without an active exception", from a C++ thread of
        # torch's; no collective is pending). Only that is run once more; a failed check fails at once.
        torn_down_badly = (
            result.returncode != 0
            and "terminate called without an active exception" in result.stderr
            and all(f"rank {rank}: checks passed" in result.stdout for rank in (0, 1))
        )
        if not torn_down_badly or attempt == 1:
            break
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
    assert all(f"rank {rank}: checks passed" in result.stdout for rank in (0, 1))
    assert "OK float64 steps" in result.stdout
    assert "OK float64 steps with step_gates='sigmoid'" in result.stdout
    assert "OK distributed.fit" in result.stdout


def test_fit_without_a_process_group_says_how_to_start_one():
    X, y = np.zeros((4, 2)), np.zeros(4)
    with pytest.raises(RuntimeError, match="initialised torch.distributed process group.*torchrun"):
        fit(SparseTabNetRegressor(), X, y)


def test_union_concatenates_the_shards_in_rank_order_and_counts_their_weighted_rows():
    frames = [pd.DataFrame({"a": [1.0, 2.0]}), pd.DataFrame({"a": [3.0, 4.0, 5.0]})]
    X, y, weight, rows = _union([(frames[0], [0, 1], [1.0, 0.0]), (frames[1], [1, 0, 1], None)])
    assert X["a"].tolist() == [1.0, 2.0, 3.0, 4.0, 5.0] and list(X.index) == [0, 1, 2, 3, 4]
    assert y.tolist() == [0, 1, 1, 0, 1]
    assert weight.tolist() == [1.0, 0.0, 1.0, 1.0, 1.0] and rows == [1, 3]
    X, _, weight, rows = _union([(np.ones((2, 1)), [0, 1], None), (np.zeros((1, 1)), [1], None)])
    assert X.tolist() == [[1.0], [1.0], [0.0]] and weight is None and rows == [2, 1]


def test_union_refuses_mixed_and_inconsistent_shards():
    with pytest.raises(TypeError, match="X_shard must be a DataFrame on every rank or on none; got rank 0: DataFrame"):
        _union([(pd.DataFrame({"a": [1.0]}), [0], None), (np.ones((1, 1)), [1], None)])
    with pytest.raises(ValueError, match="rank 1 has inconsistent numbers of samples: X_shard has 2 rows, y_shard 3"):
        _union([(np.ones((1, 1)), [0], None), (np.ones((2, 1)), [1, 0, 1], None)])


def test_shard_batches_split_the_local_rows_into_the_steps_of_the_global_batches():
    X = torch.arange(10.0).reshape(10, 1)
    source = ShardBatches(X, X[:, 0], torch.ones(10), total_rows=30)
    assert source.steps_per_epoch(8) == 4  # ceil(30 / 8), whatever this shard holds
    batches = list(source.epoch(8, torch.Generator().manual_seed(0)))
    assert [len(batch[0]) for batch in batches] == [3, 3, 2, 2]
    assert sorted(torch.cat([batch[0][:, 0] for batch in batches]).tolist()) == list(range(10))
    assert all(torch.equal(batch[0][:, 0], batch[1]) for batch in batches)
    with pytest.raises(ValueError, match="has 10 training rows, fewer than the 15 steps"):
        next(source.epoch(2, torch.Generator()))
    with pytest.raises(ValueError, match="total_rows=5 is smaller than this rank's 10 rows"):
        ShardBatches(X, X[:, 0], torch.ones(10), total_rows=5)


def test_replicas_of_one_process_keep_the_local_values(one_process_group):
    replicas = ProcessGroupReplicas()
    weight_total, row_share = replicas.batch_normalisers(torch.tensor(2.5), 4)
    assert weight_total.item() == 2.5 and row_share.item() == 1.0 and weight_total.dtype == torch.float32
    assert replicas.sum_over_processes(torch.tensor(3.0, dtype=torch.float64)).item() == 3.0
    parameter = torch.nn.Parameter(torch.ones(3))
    replicas.reduce_gradients([parameter])  # no gradient yet: a zero one takes part in the reduction
    assert parameter.grad.tolist() == [0.0, 0.0, 0.0]


def test_fit_in_one_process_group_returns_a_fitted_estimator_and_rank_0_writes_it(one_process_group, tmp_path):
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"size": rng.normal(size=60), "colour": pd.Categorical(rng.choice(["a", "b"], size=60))})
    y = np.where(X["size"] > 0, "yes", "no")
    estimator = SparseTabNetClassifier(n_d=4, n_a=4, n_steps=1, batch_size=32, max_epochs=2, random_state=0)
    path = tmp_path / "model.sparsetab"
    with pytest.warns(ConvergenceWarning):
        returned = fit(estimator, X, y, path=path)
    assert returned is estimator and list(estimator.classes_) == ["no", "yes"] and estimator.n_iter_ == 2
    np.testing.assert_array_equal(load_model(path).predict_proba(X), estimator.predict_proba(X))


def test_fit_with_efficient_members_in_one_process_group_equals_the_in_memory_fit(one_process_group):
    rng = np.random.default_rng(1)
    X = pd.DataFrame({"size": rng.normal(size=64), "weight": rng.normal(size=64)})
    y = np.where(X["size"] + X["weight"] > 0, "yes", "no")
    params = dict(n_d=4, n_a=4, n_steps=1, batch_size=32, max_epochs=2, random_state=0, n_efficient_members=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        distributed = fit(SparseTabNetClassifier(**params), X, y)
        in_memory = SparseTabNetClassifier(**params).fit(X, y)
    assert distributed.network_.n_efficient_members == 2
    np.testing.assert_allclose(distributed.predict_proba(X), in_memory.predict_proba(X), rtol=1e-5, atol=1e-6)


def test_fit_refuses_early_stopping_without_validation_rows(one_process_group):
    X, y = np.random.default_rng(0).normal(size=(20, 2)), np.arange(20.0)
    with pytest.raises(ValueError, match="early_stopping=True needs validation rows.*pass X_val and y_val on rank 0"):
        fit(SparseTabNetRegressor(early_stopping=True), X, y)


def test_fit_refuses_a_class_weight_that_drops_rows(one_process_group):
    X = np.random.default_rng(0).normal(size=(20, 2))
    y = np.array(["a", "b"] * 10)
    estimator = SparseTabNetClassifier(class_weight={"a": 0.0, "b": 1.0}, max_epochs=1)
    with pytest.raises(ValueError, match="trains 10 rows where the shards hold 20 rows.*class_weight of 0"):
        fit(estimator, X, y)
