"""The graph-ready training step (issue 34, item 3), checked on the CPU by running its body as a plain function.

On CUDA the body is captured once per batch shape and replayed, and a replay runs no Python: whatever changes from
step to step must come from device memory. Here ``CAPTURE_DEVICES`` holds the CPU, so the same run captures
nothing and replays by calling the body again, on the same fixed buffers; the body is checked against the eager
step (the same loss curve, the same model up to the rounding of the running statistics) with the Python-side
updates of the eager step (the learning rate set before each step, the batch norms' pending statistics, the
average's host count) kept out of it.
"""

import warnings
from unittest import mock

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.exceptions import ConvergenceWarning

import sparsetab._training.loop as loop
import sparsetab._training.step_graphs as step_graphs
import sparsetab.entmax._threshold_kernels as kernels
from sparsetab import SparseTabNetClassifier, SparseTabNetRegressor
from sparsetab._host_syncs import SYNC_KINDS, SyncCounter
from sparsetab._training.schedule import LearningRateSchedule
from sparsetab.network import GhostBatchNorm

ROWS = 605  # batch_size 64: 10 batches a step, 5 of 61 rows and 5 of 60, so two shapes are captured


def _data(regression=False):
    rng = np.random.default_rng(0)
    X = pd.DataFrame({f"x{j}": rng.normal(size=ROWS) for j in range(5)})
    X["colour"] = rng.choice(["red", "green", "blue"], size=ROWS)
    signal = X["x0"] + X["x1"] * X["x2"] + (X["colour"] == "red")
    return X, (signal if regression else (signal > 0.5).astype(int))


class _Recorded(step_graphs.StepGraphs):
    """StepGraphs that remember their instances, to look at what a fit captured."""

    made = []

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        _Recorded.made.append(self)


def _fit(captured, estimator=SparseTabNetClassifier, regression=False, calls=1, **params):
    X, y = _data(regression)
    params = {"max_epochs": 4, "batch_size": 64, "random_state": 0, "early_stopping": False, **params}
    model = estimator(**params)
    _Recorded.made = []
    devices = frozenset({"cpu"}) if captured else frozenset()
    with (
        mock.patch.object(step_graphs, "CAPTURE_DEVICES", devices),
        mock.patch.object(loop, "StepGraphs", _Recorded),
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore")
        if calls == 1:
            model.fit(X, y)
        else:
            for _ in range(calls):
                model.partial_fit(X, y, **({"classes": [0, 1]} if not regression else {}))
    return model, list(_Recorded.made)


def _running_statistics(model):
    return torch.cat(
        [
            torch.cat([module.running_mean, module.running_var])
            for module in model.network_.modules()
            if isinstance(module, GhostBatchNorm)
        ]
    )


CONFIGURATIONS = [
    {},
    {"entmax_mode": "sparsemax"},
    {"entmax_mode": "adaptive"},
    {"entmax_mode": "constant", "entmax_alpha": 1.3},
    {"step_gates": "sigmoid"},
    {"numerical_embedding": None, "n_efficient_members": 2},
    {"weight_averaging_epochs": 2.0},
    {"class_weight": "balanced", "weight_decay": 0.0, "learning_rate_schedule": "constant"},
]


@pytest.mark.parametrize("params", CONFIGURATIONS, ids=lambda params: ",".join(map(str, params.values())) or "defaults")
def test_the_graph_ready_step_trains_as_the_eager_step(params):
    eager, _ = _fit(False, **params)
    captured, made = _fit(True, **params)
    # Two batch shapes, each captured after its warm-up steps and replayed for the rest of the run.
    (graphs,) = made
    assert len(graphs.graphs) == 2 and set(graphs.eager_calls.values()) == {step_graphs.WARMUP_STEPS}
    # The same training: the learning rates from the device table equal the schedule's, Adam is the same update.
    np.testing.assert_allclose(captured.loss_curve_, eager.loss_curve_, rtol=1e-6)
    # The running statistics are updated at each step instead of in groups: equal up to rounding.
    np.testing.assert_allclose(_running_statistics(captured), _running_statistics(eager), rtol=1e-5, atol=1e-6)
    X, _ = _data()
    np.testing.assert_allclose(captured.predict_proba(X), eager.predict_proba(X), atol=1e-4)


def test_a_regressor_with_a_quantile_loss_trains_as_the_eager_step():
    eager, _ = _fit(False, SparseTabNetRegressor, regression=True, loss="quantile", quantile=0.8)
    captured, made = _fit(True, SparseTabNetRegressor, regression=True, loss="quantile", quantile=0.8)
    assert len(made[0].graphs) == 2
    np.testing.assert_allclose(captured.loss_curve_, eager.loss_curve_, rtol=1e-6)
    X, _ = _data()
    np.testing.assert_allclose(captured.predict(X), eager.predict(X), rtol=1e-4, atol=1e-4)


def test_a_replayed_step_waits_for_nothing_and_keeps_no_python_side_state():
    # The GPU's solvers on the CPU (they read nothing); every replay after the capture counted.
    counter = SyncCounter()
    replays = []
    original_capture = step_graphs.StepGraphs._capture

    def capture(self, *args):
        inputs, outputs, graph = original_capture(self, *args)
        body = graph.replay

        def counted():
            pending = [len(m._pending) for m in self.step.network.modules() if isinstance(m, GhostBatchNorm)]
            with counter.counting():
                body()
            replays.append(pending)

        graph.replay = counted
        return inputs, outputs, graph

    with (
        mock.patch.object(kernels, "SORT_FREE_DEVICES", frozenset()),
        mock.patch.object(kernels, "PER_PASS_TEST_DEVICES", frozenset()),
        mock.patch.object(step_graphs.StepGraphs, "_capture", capture),
    ):
        model, _ = _fit(True, entmax_mode="entmax15")
    assert len(replays) == 4 * 10 - 2 * step_graphs.WARMUP_STEPS
    assert counter.by_kind() == dict.fromkeys(SYNC_KINDS, 0)
    # The batch norms keep no record between steps: their statistics were applied on the device.
    assert all(count == 0 for pending in replays for count in pending)
    assert model.n_iter_ == 4


def test_the_rate_of_a_step_comes_from_the_table_not_from_the_python_schedule(monkeypatch):
    # A replay does not run the loop's Python: the eager run needs before_step (without it the rate stays at the
    # initial learning_rate and the run differs), the captured one does not.
    eager, _ = _fit(False)
    monkeypatch.setattr(LearningRateSchedule, "before_step", lambda self, epoch, step: None)
    without, _ = _fit(False)
    assert not np.allclose(without.loss_curve_, eager.loss_curve_)
    captured, _ = _fit(True)
    np.testing.assert_allclose(captured.loss_curve_, eager.loss_curve_, rtol=1e-6)


def test_after_a_captured_run_the_optimizer_network_and_schedule_are_as_an_eager_run_leaves_them():
    captured, _ = _fit(True, weight_averaging_epochs=2.0)
    eager, _ = _fit(False, weight_averaging_epochs=2.0)
    for state in (captured._optimizer_state, eager._optimizer_state):
        (group,) = state["param_groups"]
        assert isinstance(group["lr"], float) and group["capturable"] is False
    assert captured._optimizer_state["param_groups"][0]["lr"] == pytest.approx(
        eager._optimizer_state["param_groups"][0]["lr"], rel=1e-12
    )
    assert LearningRateSchedule.on_device is False
    for module in captured.network_.modules():
        if isinstance(module, GhostBatchNorm):
            assert "_updates_on_device" not in vars(module) and module._pending == []
            assert module._tracked_on_host is None  # counted on the device: read once at the next flush


def test_every_partial_fit_call_captures_anew_and_continues_the_eager_run():
    eager, _ = _fit(False, calls=3, learning_rate_schedule="constant")
    captured, made = _fit(True, calls=3, learning_rate_schedule="constant")
    assert len(made) == 3 and all(len(graphs.graphs) == 2 for graphs in made)
    np.testing.assert_allclose(captured.loss_curve_, eager.loss_curve_, rtol=1e-6)


def test_a_failed_capture_warns_once_and_trains_on_with_the_same_body(monkeypatch):
    def refuse(self, *args):
        raise RuntimeError("operation not permitted when stream is capturing")

    monkeypatch.setattr(step_graphs.StepGraphs, "_capture", refuse)
    X, y = _data()
    model = SparseTabNetClassifier(max_epochs=4, batch_size=64, random_state=0, early_stopping=False)
    with (
        mock.patch.object(step_graphs, "CAPTURE_DEVICES", frozenset({"cpu"})),
        pytest.warns(RuntimeWarning, match="could not be captured in a CUDA graph") as records,
        warnings.catch_warnings(),
    ):
        warnings.filterwarnings("ignore", category=ConvergenceWarning)
        model.fit(X, y)
    assert sum("CUDA graph" in str(record.message) for record in records) == 1
    eager, _ = _fit(False)
    np.testing.assert_allclose(model.loss_curve_, eager.loss_curve_, rtol=1e-6)


def test_only_cuda_in_memory_single_process_runs_with_a_per_step_schedule_capture():
    class Schedule:
        per_step = True

    flat, cuda, cpu = object(), torch.device("cuda"), torch.device("cpu")
    assert step_graphs.captures_steps(cuda, flat, Schedule(), True, True)
    assert not step_graphs.captures_steps(cpu, flat, Schedule(), True, True)
    assert not step_graphs.captures_steps(cuda, None, Schedule(), True, True)
    assert not step_graphs.captures_steps(cuda, flat, Schedule(), False, True)  # streaming
    assert not step_graphs.captures_steps(cuda, flat, Schedule(), True, False)  # distributed
    Schedule.per_step = False  # the first release's exponential schedule
    assert not step_graphs.captures_steps(cuda, flat, Schedule(), True, True)
