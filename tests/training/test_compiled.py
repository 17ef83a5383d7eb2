"""``torch_compile=True``: the training step's forward through torch.compile (issue 34, item 3).

Most tests swap inductor for torch's ``aot_eager`` backend (the same Dynamo tracing, graph breaks and AOTAutograd
backward, torch's own kernels): the compiled run then trains as the eager run up to the rounding of the running
statistics, which are updated at every step instead of in groups. One test compiles with inductor itself and
compares one step's outputs and gradients with the eager step's.
"""

import copy
import pickle
import shutil
import warnings
from unittest import mock

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.utils._param_validation import InvalidParameterError

import sparsetab._training.compiled as compiled
import sparsetab._training.step_graphs as step_graphs
from sparsetab import SparseTabNetClassifier, SparseTabNetPretrainer, SparseTabNetRegressor
from sparsetab.network import GhostBatchNorm

ROWS = 300


def _data(regression=False):
    rng = np.random.default_rng(0)
    X = pd.DataFrame({f"x{j}": rng.normal(size=ROWS) for j in range(4)})
    X["colour"] = rng.choice(["red", "green", "blue"], size=ROWS)
    signal = X["x0"] + X["x1"] * X["x2"] + (X["colour"] == "red")
    return X, (signal if regression else (signal > 0.5).astype(int))


@pytest.fixture(autouse=True)
def _fresh_compiler_caches():
    # torch.compile keeps at most recompile_limit versions of a function per process; the tests compile several
    # architectures, and past the limit torch would run them eagerly, unseen.
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


class _CountingBackend:
    """torch's ``aot_eager`` backend, counting the graphs it is given (so a test sees that compiling happened)."""

    def __init__(self):
        self.graphs = 0
        self.__name__ = "counting_aot_eager"

    def __call__(self, graph, example_inputs):
        self.graphs += 1
        return torch._dynamo.backends.registry.lookup_backend("aot_eager")(graph, example_inputs)


def _fit(estimator, backend=None, captured=False, **params):
    backend = _CountingBackend() if backend is None else backend
    X, y = _data(estimator is SparseTabNetRegressor)
    params = {"max_epochs": 3, "batch_size": 64, "random_state": 0, "n_d": 8, "n_a": 8, **params}
    if estimator is SparseTabNetPretrainer:
        params.pop("early_stopping", None)
    model = estimator(**params)
    devices = frozenset({"cpu"}) if captured else frozenset()
    with (
        mock.patch.object(compiled, "BACKEND", backend),
        mock.patch.object(step_graphs, "CAPTURE_DEVICES", devices),
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore")
        model.fit(X) if estimator is SparseTabNetPretrainer else model.fit(X, y)
    model.compiled_graphs = getattr(backend, "graphs", None)
    return model


def _batch_norms(model):
    return [module for module in model.network_.modules() if isinstance(module, GhostBatchNorm)]


@pytest.mark.parametrize(
    ("estimator", "params"),
    [
        (SparseTabNetClassifier, {"early_stopping": False}),
        (SparseTabNetClassifier, {"entmax_mode": "adaptive", "step_gates": "sigmoid", "early_stopping": False}),
        (SparseTabNetClassifier, {"n_efficient_members": 2, "early_stopping": True}),
        (SparseTabNetRegressor, {"loss": "quantile", "quantile": 0.8, "early_stopping": False}),
        (SparseTabNetPretrainer, {}),
    ],
)
def test_a_compiled_fit_trains_as_the_eager_fit(estimator, params):
    eager = _fit(estimator, **params)
    compiled_model = _fit(estimator, torch_compile=True, **params)
    assert eager.compiled_graphs == 0 and compiled_model.compiled_graphs > 0
    # Same batches, same kernels: training steps normalise with their batches' statistics, so the only
    # difference, the running statistics' rounding (updated at every step instead of in groups), reaches the
    # losses only through early stopping's validation passes.
    np.testing.assert_allclose(compiled_model.loss_curve_, eager.loss_curve_, rtol=1e-5)
    X, _ = _data(estimator is SparseTabNetRegressor)
    if estimator is SparseTabNetPretrainer:
        np.testing.assert_allclose(compiled_model.transform(X), eager.transform(X), rtol=1e-3, atol=1e-4)
    else:
        np.testing.assert_allclose(compiled_model.predict(X), eager.predict(X), rtol=1e-3, atol=1e-4)
    # The batch norms are back to their grouped updates, with nothing pending, and pickle as an eager model's do.
    for module in _batch_norms(compiled_model):
        assert "_updates_on_device" not in vars(module) and not module._pending
    assert pickle.loads(pickle.dumps(compiled_model)).get_params()["torch_compile"] is True


def test_a_compiled_forward_inside_the_captured_step_trains_as_the_eager_step():
    eager = _fit(SparseTabNetClassifier, early_stopping=False)
    both = _fit(SparseTabNetClassifier, captured=True, torch_compile=True, early_stopping=False)
    assert both.compiled_graphs > 0
    np.testing.assert_allclose(both.loss_curve_, eager.loss_curve_, rtol=1e-5)
    for module in _batch_norms(both):  # entered by both, left once: back to grouped updates
        assert "_updates_on_device" not in vars(module)


def test_torch_compile_false_never_calls_the_compiler():
    with mock.patch.object(torch, "compile", side_effect=AssertionError("compiled")):
        model = _fit(SparseTabNetClassifier, early_stopping=False)
    assert model.get_params()["torch_compile"] is False


def test_a_compiler_failure_is_an_error_that_names_the_parameter():
    def failing_backend(graph, example_inputs):
        raise OSError("no C++ compiler found")

    with pytest.raises(RuntimeError, match=r"torch_compile=True, but torch.compile .* failed .*no C\+\+ compiler"):
        _fit(SparseTabNetClassifier, backend=failing_backend, torch_compile=True, early_stopping=False)


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_torch_compile_takes_only_a_bool(value):
    X, y = _data()
    with pytest.raises(InvalidParameterError, match="'torch_compile' parameter .* must be an instance of 'bool'"):
        SparseTabNetClassifier(torch_compile=value).fit(X, y)


@pytest.mark.skipif(shutil.which("g++") is None and shutil.which("c++") is None, reason="inductor needs a C++ compiler")
def test_inductor_computes_the_eager_step():
    model = _fit(SparseTabNetClassifier, max_epochs=1, early_stopping=False)
    network = model.network_.train()
    x = model._encode_X(_data()[0].iloc[:16])

    def step(run, module):
        module.zero_grad()
        output, _, sparsity_loss = run(x)[:3]
        (output.square().sum() + sparsity_loss).backward()
        return [output.detach()] + [parameter.grad.clone() for parameter in module.parameters()]

    eager_network, compiled_network = copy.deepcopy(network), copy.deepcopy(network)
    expected = step(eager_network, eager_network)
    with compiled.compiled_training(compiled_network, True) as forward:
        actual = step(forward, compiled_network)
    for got, want in zip(actual, expected, strict=True):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5 * float(want.abs().max()) + 1e-7)
