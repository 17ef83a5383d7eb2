"""load_model (sparsetab.io): the estimator classes of a model file."""

import warnings

import numpy as np
import pytest
import torch

from sparsetab import SparseTabNetClassifier, SparseTabNetRegressor, load_model
from sparsetab._persistence.model_file import read_model


@pytest.fixture(scope="module")
def regressor():
    X = np.random.default_rng(0).normal(size=(60, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return SparseTabNetRegressor(n_d=4, n_a=4, n_steps=1, max_epochs=1, random_state=0).fit(X, X[:, 0]), X


def test_load_model_builds_the_saved_class(regressor, tmp_path):
    model, X = regressor
    loaded = load_model(model.save_model(tmp_path / "model.sparsetab"))
    assert type(loaded) is SparseTabNetRegressor
    assert loaded.get_params() == model.get_params()
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_read_model_returns_the_pieces_without_an_estimator(regressor, tmp_path):
    model, _ = regressor
    contents = read_model(model.save_model(tmp_path / "model.sparsetab"))
    assert contents["estimator"] == "SparseTabNetRegressor"
    assert contents["params"]["n_d"] == 4
    assert contents["attributes"]["n_outputs_"] == 1
    assert not contents["network"].training and contents["device"] == torch.device("cpu")


def test_an_unknown_estimator_class_is_refused(regressor, tmp_path, monkeypatch):
    model, _ = regressor
    path = model.save_model(tmp_path / "model.sparsetab")
    contents = read_model(path)
    monkeypatch.setattr("sparsetab.io.read_model", lambda _: {**contents, "estimator": "Pipeline"})
    with pytest.raises(
        ValueError, match=r"unknown estimator 'Pipeline'.*\['SparseTabNetClassifier', 'SparseTabNetRegressor'\]"
    ):
        load_model(path)


def test_a_model_saved_on_an_unavailable_device_loads_on_the_cpu(regressor, tmp_path, monkeypatch):
    if torch.cuda.is_available():
        pytest.skip("needs a machine without CUDA")
    model, X = regressor
    expected = model.predict(X)
    monkeypatch.setattr(model, "_device", torch.device("cuda:0"))
    path = model.save_model(tmp_path / "gpu.sparsetab")
    with pytest.warns(UserWarning, match="saved from device 'cuda:0'") as record:
        loaded = load_model(path)
    assert record[0].filename == __file__  # the warning names this line, not sparsetab's
    assert loaded._device == torch.device("cpu")
    np.testing.assert_array_equal(loaded.predict(X), expected)


def test_load_model_is_the_public_name():
    import sparsetab

    assert sparsetab.load_model is load_model
    assert SparseTabNetClassifier.save_model.__doc__.count("load_model") >= 1
