"""export(format="onnx"): the ONNX model run in onnxruntime against the estimator itself.

Each model is fitted and exported once (module-scoped fixtures): the export is what costs here.
The cases cover every entmax mode, both estimators (binary and multiclass classification,
two-output regression), every numerical embedding, both numeric transforms, categorical and
missing values, ensembles and inputs with no numeric or no categorical column; the batch sizes
compared (1 and 37) differ from the two-row example the program is exported with.
"""

import json
import logging
import sys
import warnings

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.exceptions import ConvergenceWarning

from sparsetab import SparseTabNetClassifier, SparseTabNetRegressor, load_model

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
pytest.importorskip("onnxscript")

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

# The network computes in float32 in both runs, with different kernels (onnxruntime's and torch's)
# and the exportable entmax path (closed forms, 20 root-finding iterations) against the estimator's
# (early exit): outputs agree to a few float32 ulps of their magnitude (at most 1 for probabilities
# and masks), far below 1e-5.
ATOL = 1e-5


def _frame(n_rows, seed):
    """Numeric columns with missing values, a string and a categorical column, an unseen category."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {
            "age": rng.uniform(20, 70, n_rows),
            "city": rng.choice(["Paris", "Oslo", "Lima"], n_rows),
            "income": rng.lognormal(10, 1, n_rows),
            "plan": pd.Categorical(rng.choice(["basic", "gold"], n_rows)),
            "visits": rng.integers(0, 4, n_rows).astype(float),  # few values: repeated quantiles
        }
    )
    X.loc[::6, "income"] = np.nan
    X.loc[1::9, "city"] = None
    return X


def _targets(X, kind):
    if kind == "binary":
        return np.where((X["city"] == "Oslo") | (X["age"] > 55), "yes", "no")
    if kind == "multiclass":
        return np.select([X["age"] < 35, X["age"] < 50], ["young", "mid"], "old")
    return np.column_stack([100 + 10 * X["age"], np.log(X["income"].fillna(1e4)) - 3 * X["visits"]])


# (entmax_mode, target kind, numerical_embedding, numerical_transform, other parameters). One decision
# step except for entmax15: the export's conversion time grows with the graph, and the alpha-entmax
# modes unroll 20 root-finding iterations per step (about 20 s of conversion for one step here).
CASES = {
    "sparsemax-binary-ple-quantile-ensemble": (
        "sparsemax",
        "binary",
        "piecewise_linear",
        "quantile",
        {"n_ensemble": 2, "n_steps": 1},
    ),
    "entmax15-multiclass-periodic-standard": ("entmax15", "multiclass", "periodic", "standard", {"n_steps": 2}),
    "constant-regressor-none-quantile": (
        "constant",
        "regressor",
        None,
        "quantile",
        {"entmax_alpha": 1.3, "n_steps": 1},
    ),
    "adaptive-binary-ple-standard": ("adaptive", "binary", "piecewise_linear", "standard", {"n_steps": 1}),
    "sparsemax-regressor-efficient-members-ensemble": (
        "sparsemax",
        "regressor",
        None,
        "standard",
        {"n_efficient_members": 3, "n_ensemble": 2, "n_steps": 2},
    ),
}


def _fit(fast_params, mode, kind, embedding, transform, extra):
    X = _frame(120, seed=0)
    estimator = SparseTabNetRegressor if kind == "regressor" else SparseTabNetClassifier
    params = dict(fast_params, n_bins=8, max_epochs=2, early_stopping=False, **extra)  # n_ensemble alone makes members
    model = estimator(entmax_mode=mode, numerical_embedding=embedding, numerical_transform=transform, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(X, _targets(X, kind))


@pytest.fixture(scope="module", params=list(CASES))
def exported(request, fast_params, tmp_path_factory):
    """(case name, fitted model, path of its ONNX export, onnxruntime session)."""
    model = _fit(fast_params, *CASES[request.param])
    directory = tmp_path_factory.mktemp("onnx")
    path = model.export(directory / "model.onnx", format="onnx")
    assert [p.name for p in directory.iterdir()] == ["model.onnx"]  # one file, no temporary left behind
    return request.param, model, path, ort.InferenceSession(path, providers=["CPUExecutionProvider"])


@pytest.mark.parametrize("n_rows", [37, 1])
def test_onnx_model_predicts_and_explains_like_the_estimator(exported, n_rows):
    name, model, _, session = exported
    X = _frame(n_rows, seed=n_rows + 1)
    X.loc[0, "city"] = "Rome"  # unseen at fit
    numeric, codes = model.transform_inputs(X)
    prediction, step_masks = session.run(None, {"numeric": numeric, "codes": codes})
    assert prediction.dtype == np.float64 and step_masks.dtype == np.float32
    np.testing.assert_allclose(step_masks, model.explain(X).step_masks, rtol=0, atol=ATOL)
    if isinstance(model, SparseTabNetClassifier):
        np.testing.assert_allclose(prediction, model.predict_proba(X), rtol=0, atol=ATOL)
        assert prediction.shape == (n_rows, len(model.classes_))
        return
    expected = model.predict(X)
    assert prediction.shape == expected.shape == (n_rows, 2)
    # Regression values are float32 network outputs scaled back to the target's units: compared in those units.
    scale = np.abs(expected).max(axis=0)
    np.testing.assert_allclose(prediction / scale, expected / scale, rtol=0, atol=ATOL)


def test_onnx_model_has_named_inputs_with_a_dynamic_batch_and_the_metadata(exported):
    name, model, path, session = exported
    inputs = {value.name: (value.type, value.shape) for value in session.get_inputs()}
    assert inputs == {"numeric": ("tensor(double)", ["batch", 3]), "codes": ("tensor(int64)", ["batch", 2])}
    outputs = {value.name: (value.type, value.shape) for value in session.get_outputs()}
    assert outputs["step_masks"] == ("tensor(float)", ["batch", model.n_steps, 5])
    assert outputs["prediction"][0] == "tensor(double)" and outputs["prediction"][1][0] == "batch"
    # The metadata reads the same through onnxruntime and through onnx.
    text = session.get_modelmeta().custom_metadata_map["sparsetab.json"]
    assert {entry.key: entry.value for entry in onnx.load(path).metadata_props} == {"sparsetab.json": text}
    metadata = json.loads(text)
    assert metadata["estimator"] == type(model).__name__
    assert metadata["inputs"]["numeric"] == {
        "dtype": "float64",
        "columns": ["age", "income", "visits"],
        "clipped_to_training_range": True,
        "transform": model.numerical_transform,
    }
    assert metadata["inputs"]["codes"]["categories"] == {"city": ["Lima", "Oslo", "Paris"], "plan": ["basic", "gold"]}
    assert metadata["outputs"]["columns"] == ["age", "city", "income", "plan", "visits"]
    assert ("ensemble" in metadata["outputs"]) == (name.endswith("ensemble"))


@pytest.fixture(scope="module")
def categorical_model(fast_params):
    """A classifier on categorical columns only: its ONNX model has a zero-width "numeric" input."""
    X = _frame(80, seed=3)
    model = SparseTabNetClassifier(entmax_mode="sparsemax", max_epochs=1, **dict(fast_params, n_steps=1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(X[["city", "plan"]], _targets(X, "binary"))


def test_onnx_metadata_equals_that_of_the_exported_program(categorical_model, tmp_path):
    model = categorical_model
    logger = logging.getLogger("torch.onnx._internal.exporter._registration")
    filters, warning_filters = list(logger.filters), list(warnings.filters)
    session = ort.InferenceSession(model.export(tmp_path / "model.onnx", format="onnx"))
    # The export's filters of torch's own notices are gone afterwards.
    assert logger.filters == filters and warnings.filters == warning_filters
    extra = {"sparsetab.json": ""}
    torch.export.load(model.export(tmp_path / "model.pt2"), extra_files=extra)
    onnx_metadata = json.loads(session.get_modelmeta().custom_metadata_map["sparsetab.json"])
    assert onnx_metadata == json.loads(extra["sparsetab.json"])
    # load_model called the file "a binary file of another format".
    with pytest.raises(
        ValueError, match=r"is not a sparsetab model file: it is an ONNX model .*onnxruntime\.Inference"
    ):
        load_model(tmp_path / "model.onnx")
    assert onnx_metadata["inputs"]["numeric"]["columns"] == []
    X = _frame(9, seed=5)[["city", "plan"]]
    numeric, codes = model.transform_inputs(X)
    assert numeric.shape == (9, 0)
    prediction, step_masks = session.run(None, {"numeric": numeric, "codes": codes})
    np.testing.assert_allclose(prediction, model.predict_proba(X), rtol=0, atol=ATOL)
    np.testing.assert_allclose(step_masks, model.explain(X).step_masks, rtol=0, atol=ATOL)


@pytest.mark.parametrize("package", ["onnx", "onnxscript"])
def test_onnx_export_without_the_extra_names_it(categorical_model, package, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, package, None)  # `import package` now raises ImportError
    with pytest.raises(ImportError, match=rf"needs {package} .*pip install \"sparsetab\[onnx\]\""):
        categorical_model.export(tmp_path / "model.onnx", format="onnx")
    assert not list(tmp_path.iterdir())


def test_onnx_model_with_step_gates_has_a_step_gates_output(fast_params, tmp_path):
    X = _frame(120, seed=0)
    params = dict(fast_params, max_epochs=2, n_steps=2, n_ensemble=2, numerical_embedding=None)
    model = SparseTabNetClassifier(entmax_mode="sparsemax", step_gates="sigmoid", **params)
    model.fit(X, _targets(X, "binary"))
    session = ort.InferenceSession(model.export(tmp_path / "gated.onnx", format="onnx"))
    outputs = {value.name: (value.type, value.shape) for value in session.get_outputs()}
    assert outputs["step_gates"] == ("tensor(float)", ["batch", 2])
    X_test = _frame(37, seed=4)
    numeric, codes = model.transform_inputs(X_test)
    prediction, step_masks, step_gates = session.run(None, {"numeric": numeric, "codes": codes})
    explanation = model.explain(X_test)
    np.testing.assert_allclose(prediction, model.predict_proba(X_test), rtol=0, atol=ATOL)
    np.testing.assert_allclose(step_masks, explanation.step_masks, rtol=0, atol=ATOL)
    np.testing.assert_allclose(step_gates, explanation.step_gates, rtol=0, atol=ATOL)


def test_codes_outside_a_columns_categories_are_read_as_missing_in_both_formats(categorical_model, tmp_path):
    # ONNX's Gather read pandas' -1 (its code of a missing value) as the last category, with confident
    # probabilities, while the exported program raised IndexError; both now read any such code as 0.
    model = categorical_model
    session = ort.InferenceSession(model.export(tmp_path / "model.onnx"))  # the format follows the suffix
    program = torch.export.load(model.export(tmp_path / "model.pt2")).module()
    numeric, codes = model.transform_inputs(_frame(6, seed=2)[["city", "plan"]])
    missing = np.zeros_like(codes)
    for outside in (-1, -7, 99):
        shifted = codes.copy()
        shifted[:, 0] = outside
        expected_rows = session.run(None, {"numeric": numeric, "codes": np.column_stack([missing[:, 0], codes[:, 1]])})
        for served in (
            session.run(None, {"numeric": numeric, "codes": shifted}),
            program(*map(torch.from_numpy, (numeric, shifted))),
        ):
            np.testing.assert_allclose(np.asarray(served[0]), expected_rows[0], rtol=0, atol=ATOL)
            np.testing.assert_allclose(np.asarray(served[1]), expected_rows[1], rtol=0, atol=ATOL)


@pytest.mark.parametrize(
    "name, export_format, named",
    [("model.onnx", "exported_program", "onnx"), ("model.pt2", "onnx", "exported_program")],
)
def test_a_format_other_than_the_suffix_names_is_refused_before_any_file(
    categorical_model, tmp_path, name, export_format, named
):
    # model.export("m.onnx") wrote a torch zip archive that onnxruntime could not parse.
    with pytest.raises(
        ValueError, match=f"ends in '.{name.split('.')[1]}', the suffix of format='{named}', but format="
    ):
        categorical_model.export(tmp_path / name, format=export_format)
    assert not list(tmp_path.iterdir())


def test_a_folder_as_the_path_is_refused_before_the_export(categorical_model, tmp_path, monkeypatch):
    # It failed only at the end, in os.replace, naming the temporary file.
    from sparsetab._persistence import export

    monkeypatch.setattr(export, "ServingTabNet", None)  # the export's work would fail: it must not start
    with pytest.raises(IsADirectoryError, match="is a folder; give the path of the file to write"):
        categorical_model.export(tmp_path)
    with pytest.raises(ValueError, match=r"give the path the suffix '\.pt'\."):
        categorical_model.export(tmp_path / "model.onnx", format="torchscript")
