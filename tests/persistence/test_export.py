import json
import os
import warnings

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.exceptions import ConvergenceWarning, NotFittedError

from sparsetab import SparseTabNetClassifier, SparseTabNetRegressor, load_model
from sparsetab.network.serving import ServingTabNet

# Short fits stop at max_epochs on purpose; tests that check the warning use pytest.warns.
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


@pytest.fixture(scope="module")
def classifier(fast_params, make_classification_frame):
    X, y = make_classification_frame()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return SparseTabNetClassifier(
            entmax_mode="adaptive",
            grouped_features=[["age", "income"]],
            max_epochs=2,
            early_stopping=False,
            **fast_params,
        ).fit(X, y)


def _export(model, path, export_format="exported_program"):
    """``model.export``; the deprecated TorchScript format must say so with a FutureWarning.

    A TorchScript file is written under the suffix ``.pt`` instead: ``.pt2`` names the exported program.
    """
    if export_format != "torchscript":
        return model.export(path, format=export_format)
    with pytest.warns(FutureWarning, match="format='torchscript' is deprecated.*'exported_program'.*'onnx'"):
        return model.export(path.with_suffix(".pt"), format=export_format)


def _load(path, export_format):
    extra = {"sparsetab.json": ""}
    if export_format == "exported_program":
        module = torch.export.load(path, extra_files=extra).module()
    else:
        with warnings.catch_warnings():  # torch 2.13 deprecates torch.jit.load itself
            warnings.filterwarnings("ignore", "`torch.jit.load` is deprecated", DeprecationWarning)
            module = torch.jit.load(path, _extra_files=extra)
    return module, json.loads(extra["sparsetab.json"])


def test_transform_inputs_gives_raw_numeric_columns_and_category_codes(classifier):
    X = pd.DataFrame(
        {"age": [30.0, 41.5], "city": ["Oslo", "Rome"], "income": [1e4, 2e4], "plan": pd.Categorical(["gold", None])}
    )
    numeric, codes = classifier.transform_inputs(X)
    assert numeric.dtype == np.float64 and codes.dtype == np.int64
    np.testing.assert_array_equal(numeric, [[30.0, 1e4], [41.5, 2e4]])
    # Arrays of their own (torch.from_numpy warns on read-only views of the frame): writing leaves X alone.
    assert numeric.flags.writeable and codes.flags.writeable
    numeric[0, 0] = -1.0
    assert X.loc[0, "age"] == 30.0
    # categories sorted at fit: Lima, Oslo, Paris -> codes 1, 2, 3; unseen "Rome" and a missing plan -> 0
    np.testing.assert_array_equal(codes, [[2, 2], [0, 0]])


@pytest.mark.parametrize("export_format", ["exported_program", "torchscript"])
def test_exported_classifier_predicts_and_explains_like_the_estimator(
    classifier, export_format, tmp_path, make_classification_frame
):
    path = _export(classifier, tmp_path / "model.pt2", export_format)
    assert [p.name for p in tmp_path.iterdir()] == [os.path.basename(path)]  # no temporary file left behind
    # load_model names each program and what opens it (a TorchScript file was "truncated, or torch.save of ...").
    opener = "torch.export.load" if export_format == "exported_program" else "a TorchScript program.*torch.jit.load"
    with pytest.raises(ValueError, match=f"is not a sparsetab model file: it is .*{opener}"):
        load_model(path)
    module, metadata = _load(path, export_format)
    for n_rows in (1, 7, 100):  # batch sizes other than the two-row example it was traced with
        X, _ = make_classification_frame(n_rows, seed=n_rows)
        X.loc[0, "city"] = "Rome"  # an unseen category
        numeric, codes = classifier.transform_inputs(X)
        prediction, step_masks = module(torch.from_numpy(numeric), torch.from_numpy(codes))
        assert prediction.dtype == torch.float64 and step_masks.dtype == torch.float32
        np.testing.assert_allclose(prediction.numpy(), classifier.predict_proba(X), atol=1e-6)
        np.testing.assert_allclose(step_masks.numpy(), classifier.explain(X).step_masks, atol=1e-5)
    assert metadata["estimator"] == "SparseTabNetClassifier"
    assert metadata["inputs"]["numeric"]["columns"] == ["age", "income"]
    assert metadata["inputs"]["codes"]["categories"] == {"city": ["Lima", "Oslo", "Paris"], "plan": ["basic", "gold"]}
    assert metadata["outputs"]["columns"] == ["age", "city", "income", "plan"]
    assert "['no', 'yes']" in metadata["outputs"]["prediction"]
    assert metadata["outputs"]["classes"] == ["no", "yes"]  # the columns' classes, for a server to read


def test_exported_regressor_predicts_in_target_units_without_categorical_columns(tmp_path, fast_params):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(150, 3))
    y = np.column_stack([100 + 10 * X[:, 0], -5 * X[:, 1]])
    model = SparseTabNetRegressor(entmax_mode="entmax15", max_epochs=2, **fast_params).fit(X, y)
    module, metadata = _load(model.export(tmp_path / "regressor.pt2"), "exported_program")
    numeric, codes = model.transform_inputs(X[:33])
    assert codes.shape == (33, 0)
    prediction, _ = module(torch.from_numpy(numeric), torch.from_numpy(codes))
    # Both compute in standardised float32 units: their sums may round apart by a few float32 ulps of each
    # target's scale (10 and 5 here).
    expected = model.predict(X[:33])
    for column, scale in enumerate(y.std(axis=0)):
        atol = 4 * np.finfo(np.float32).eps * scale
        np.testing.assert_allclose(prediction.numpy()[:, column], expected[:, column], rtol=1e-6, atol=atol)
    assert metadata["inputs"]["numeric"]["columns"] == ["x0", "x1", "x2"]
    assert "classes" not in metadata["outputs"]


def test_export_leaves_the_estimator_unchanged(classifier, tmp_path, make_classification_frame):
    X, _ = make_classification_frame(20, seed=5)
    before = classifier.predict_proba(X)
    _export(classifier, tmp_path / "model.pt", "torchscript")
    assert not any(attentive.exportable for attentive in classifier.network_.attentive_transformers)
    assert all(parameter.requires_grad for parameter in classifier.network_.parameters())
    np.testing.assert_array_equal(classifier.predict_proba(X), before)


def test_export_errors(classifier, tmp_path):
    accepted = "\\('exported_program', 'onnx', 'torchscript'\\)"
    with pytest.raises(ValueError, match=f"format must be one of {accepted} or None, got 'onnxx'"):
        classifier.export(tmp_path / "model.onnx", format="onnxx")
    assert not list(tmp_path.iterdir())
    with pytest.raises(NotFittedError):
        SparseTabNetClassifier().export(tmp_path / "model.pt2")
    with pytest.raises(NotFittedError):
        SparseTabNetClassifier().transform_inputs(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="output_transform must be one of"):
        ServingTabNet(classifier.network_, [0, 2], [1, 3], [0, 0], [1, 1], "tanh")
    with pytest.raises(ValueError, match="cover the 4 input columns exactly once"):
        ServingTabNet(classifier.network_, [0, 2], [1], [0, 0], [1, 1], "softmax")
    with pytest.raises(ValueError, match="needs target_mean and target_scale"):
        ServingTabNet(classifier.network_, [0, 2], [1, 3], [0, 0], [1, 1], "affine")
    with pytest.raises(ValueError, match="softmax_blocks must be positive widths summing to the network's 2 outputs"):
        ServingTabNet(classifier.network_, [0, 2], [1, 3], [0, 0], [1, 1], "softmax", softmax_blocks=[1, 2])
    with pytest.raises(ValueError, match="softmax_blocks applies to output_transform='softmax' only, got 'sigmoid'"):
        ServingTabNet(classifier.network_, [0, 2], [1, 3], [0, 0], [1, 1], "sigmoid", softmax_blocks=[2])


@pytest.mark.parametrize("export_format", ["exported_program", "torchscript"])
def test_exported_multilabel_classifier_gives_one_sigmoid_per_label(
    export_format, tmp_path, fast_params, make_classification_frame
):
    X, _ = make_classification_frame(120)
    y = np.column_stack([X["city"] == "Oslo", X["age"] > 50, X["plan"] == "gold"]).astype(int)
    model = SparseTabNetClassifier(max_epochs=2, **fast_params).fit(X, y)
    module, metadata = _load(_export(model, tmp_path / "multilabel.pt2", export_format), export_format)
    for n_rows in (1, 9):
        X_new, _ = make_classification_frame(n_rows, seed=n_rows + 10)
        numeric, codes = model.transform_inputs(X_new)
        prediction, _ = module(torch.from_numpy(numeric), torch.from_numpy(codes))
        assert prediction.shape == (n_rows, 3)
        np.testing.assert_allclose(prediction.numpy(), model.predict_proba(X_new), atol=1e-6)
        np.testing.assert_array_equal(prediction.numpy() > 0.5, model.predict(X_new).astype(bool))
    assert "probability that each of the 3 labels" in metadata["outputs"]["prediction"]
    assert metadata["outputs"]["classes"] == [0, 1, 2]
    assert "softmax_blocks" not in metadata["outputs"]


@pytest.mark.parametrize("export_format", ["exported_program", "torchscript"])
def test_exported_multioutput_classifier_gives_one_softmax_block_per_column(
    export_format, tmp_path, fast_params, make_classification_frame
):
    X, y = make_classification_frame(120)
    Y = np.column_stack([y, np.where(X["age"] > 50, "old", np.where(X["age"] > 35, "mid", "young"))])
    model = SparseTabNetClassifier(max_epochs=2, **fast_params).fit(X, Y)
    module, metadata = _load(_export(model, tmp_path / "multioutput.pt2", export_format), export_format)
    X_new, _ = make_classification_frame(11, seed=3)
    numeric, codes = model.transform_inputs(X_new)
    prediction, _ = module(torch.from_numpy(numeric), torch.from_numpy(codes))
    assert prediction.shape == (11, 5)
    np.testing.assert_allclose(prediction.numpy(), np.hstack(model.predict_proba(X_new)), atol=1e-6)
    np.testing.assert_allclose(prediction.numpy()[:, :2].sum(axis=1), 1.0)
    np.testing.assert_allclose(prediction.numpy()[:, 2:].sum(axis=1), 1.0)
    assert metadata["outputs"]["softmax_blocks"] == [2, 3]
    assert "[['no', 'yes'], ['mid', 'old', 'young']]" in metadata["outputs"]["prediction"]
    assert metadata["outputs"]["classes"] == [["no", "yes"], ["mid", "old", "young"]]


def test_model_with_only_categorical_columns_exports(tmp_path, fast_params, make_classification_frame):
    X, y = make_classification_frame()
    X = X[["city", "plan"]]
    model = SparseTabNetClassifier(max_epochs=2, **fast_params).fit(X, y)
    module, metadata = _load(model.export(tmp_path / "categorical.pt2"), "exported_program")
    numeric, codes = model.transform_inputs(X)
    assert numeric.shape == (160, 0) and metadata["inputs"]["numeric"]["columns"] == []
    prediction, _ = module(torch.from_numpy(numeric), torch.from_numpy(codes))
    np.testing.assert_allclose(prediction.numpy(), model.predict_proba(X), atol=1e-6)


@pytest.mark.parametrize("export_format", ["exported_program", "torchscript"])
def test_exported_program_clips_numeric_inputs_to_the_training_range(tmp_path, fast_params, export_format):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 3))
    X[::6, 1] = np.nan
    model = SparseTabNetRegressor(max_epochs=2, **fast_params).fit(X, X[:, 0])
    module, metadata = _load(_export(model, tmp_path / "model.pt2", export_format), export_format)
    assert metadata["inputs"]["numeric"]["clipped_to_training_range"] is True
    far = X[:8] * np.array([1e4, -1e4, 1.0])
    numeric, codes = model.transform_inputs(far)
    np.testing.assert_array_equal(numeric, far)  # the program's inputs are raw: it clips them itself
    prediction, _ = module(torch.from_numpy(numeric), torch.from_numpy(codes))
    np.testing.assert_allclose(prediction.numpy()[:, 0], model.predict(far), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("export_format", ["exported_program", "torchscript"])
def test_quantile_models_export_the_quantile_map(tmp_path, fast_params, export_format):
    rng = np.random.default_rng(0)
    # Repeated quantiles in column 1; column 2 is flat but not constant (it has missing values), so it is
    # not masked and the program must encode it as 0 like the estimator.
    X = np.column_stack([rng.normal(size=90), rng.integers(0, 3, 90), np.full(90, 7.0)])
    X[::9, 0] = X[::5, 2] = np.nan
    model = SparseTabNetRegressor(numerical_transform="quantile", max_epochs=1, **fast_params).fit(X, X[:, 1])
    module, metadata = _load(_export(model, tmp_path / "model.pt2", export_format), export_format)
    assert metadata["inputs"]["numeric"]["transform"] == "quantile"
    new = np.column_stack([rng.normal(size=13) * 1.5, rng.integers(0, 3, 13), np.full(13, 7.0)])
    new[0, 0] = new[1, 2] = np.nan
    numeric, codes = model.transform_inputs(new)
    prediction, _ = module(torch.from_numpy(numeric), torch.from_numpy(codes))
    np.testing.assert_allclose(prediction.numpy()[:, 0], model.predict(new), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n_ensemble", [1, 2])
def test_a_model_with_step_gates_exports_them_as_a_third_output(n_ensemble, tmp_path, fast_params):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(150, 3))
    model = SparseTabNetClassifier(step_gates="sigmoid", n_ensemble=n_ensemble, max_epochs=2, **fast_params).fit(
        X, X[:, 0] > 0
    )
    module, metadata = _load(model.export(tmp_path / "gated.pt2"), "exported_program")
    numeric, codes = model.transform_inputs(X[:21])
    prediction, step_masks, step_gates = module(torch.from_numpy(numeric), torch.from_numpy(codes))
    explanation = model.explain(X[:21])
    np.testing.assert_allclose(prediction.numpy(), model.predict_proba(X[:21]), atol=1e-6)
    np.testing.assert_allclose(step_masks.numpy(), explanation.step_masks, atol=1e-5)
    assert step_gates.dtype == torch.float32
    np.testing.assert_allclose(step_gates.numpy(), explanation.step_gates, atol=1e-6)
    assert "step_gates" in metadata["outputs"]


def test_an_ungated_model_exports_two_outputs_and_no_gate_metadata(classifier, tmp_path, make_classification_frame):
    module, metadata = _load(classifier.export(tmp_path / "model.pt2"), "exported_program")
    numeric, codes = classifier.transform_inputs(make_classification_frame(5, seed=3)[0])
    assert len(module(torch.from_numpy(numeric), torch.from_numpy(codes))) == 2
    assert "step_gates" not in metadata["outputs"]
