"""MLflow pyfunc models backed by the model file (sparsetab.mlflow): save, log, load, serve; no pickle."""

import sys

import numpy as np
import pandas as pd
import pytest

import sparsetab.mlflow as sparsetab_mlflow
from sparsetab import SparseTabNetClassifier, SparseTabNetRegressor

mlflow = pytest.importorskip("mlflow", reason="mlflow-skinny is in the dev extra")
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning", "ignore::FutureWarning")


@pytest.fixture(scope="module")
def table():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=160), "colour": rng.choice(["red", "blue"], 160)})
    return X, np.where(X["a"] > 0, "yes", "no")


@pytest.fixture(scope="module")
def model(table):
    return SparseTabNetClassifier(n_d=4, n_a=4, n_steps=1, max_epochs=2, random_state=0).fit(*table)


def test_a_saved_model_serves_predict_proba_and_explain_without_pickle(model, table, tmp_path):
    X, _ = table
    folder = sparsetab_mlflow.save_model(model, tmp_path / "income")
    assert not [path for path in folder.rglob("*") if path.suffix in (".pkl", ".pickle", ".cloudpickle")]
    assert (folder / "data" / "model.sparsetab").is_file()
    assert mlflow.models.Model.load(folder).flavors["python_function"]["loader_module"] == "sparsetab.mlflow"
    served = mlflow.pyfunc.load_model(str(folder))
    assert served.predict(X.head(5))["prediction"].tolist() == model.predict(X.head(5)).tolist()
    probabilities = served.predict(X.head(5), params={"method": "predict_proba"})
    assert list(probabilities.columns) == ["no", "yes"]
    np.testing.assert_allclose(probabilities.to_numpy(), model.predict_proba(X.head(5)), rtol=1e-12)
    importances = served.predict(X.head(5), params={"method": "explain"})
    assert list(importances.columns) == ["a", "colour"]
    np.testing.assert_allclose(importances.to_numpy(), model.explain(X.head(5)).importances, rtol=1e-6)
    with pytest.raises(
        ValueError, match=r"params\['method'\] must be one of \['predict', 'predict_proba', 'explain'\]"
    ):
        served.predict(X.head(2), params={"method": "transform"})
    estimator = sparsetab_mlflow.load_estimator(folder)
    np.testing.assert_array_equal(estimator.predict_proba(X), model.predict_proba(X))


def test_a_logged_model_loads_from_its_run(model, table, tmp_path, monkeypatch):
    X, _ = table
    monkeypatch.setenv("MLFLOW_TRACKING_URI", (tmp_path / "mlruns").as_uri())
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    with mlflow.start_run():
        info = sparsetab_mlflow.log_model(model, name="income")
    assert (
        mlflow.pyfunc.load_model(info.model_uri).predict(X.head(3))["prediction"].tolist()
        == model.predict(X.head(3)).tolist()
    )
    assert type(sparsetab_mlflow.load_estimator(info.model_uri)) is SparseTabNetClassifier


def test_a_regressor_serves_predictions_and_refuses_probabilities(table, tmp_path):
    X, _ = table
    regressor = SparseTabNetRegressor(n_d=4, n_a=4, n_steps=1, max_epochs=2, random_state=0).fit(X, 2 * X["a"])
    served = mlflow.pyfunc.load_model(str(sparsetab_mlflow.save_model(regressor, tmp_path / "value")))
    np.testing.assert_allclose(served.predict(X.head(4))["prediction"], regressor.predict(X.head(4)), rtol=1e-12)
    with pytest.raises(ValueError, match="needs a classifier"):
        served.predict(X.head(2), params={"method": "predict_proba"})


def test_another_mlflow_model_is_not_taken_for_ours(tmp_path):
    class Constant(mlflow.pyfunc.PythonModel):
        def predict(self, context, model_input, params=None):
            return model_input

    mlflow.pyfunc.save_model(str(tmp_path / "other"), python_model=Constant())
    with pytest.raises(ValueError, match="is not a sparsetab model: its pyfunc loader is"):
        sparsetab_mlflow.load_estimator(tmp_path / "other")


def test_a_pipeline_is_refused_with_the_way_to_store_it(model, tmp_path):
    # A Pipeline failed with "'Pipeline' object has no attribute 'save_model'".
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    pipeline = make_pipeline(FunctionTransformer(), model)
    with pytest.raises(TypeError, match=r"^estimator must be a fitted .* got Pipeline\. .*mlflow\.sklearn\.log_model"):
        sparsetab_mlflow.save_model(pipeline, tmp_path / "pipeline")
    assert not (tmp_path / "pipeline").exists()


def test_without_mlflow_the_error_names_the_extra(model, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "mlflow", None)
    with pytest.raises(ImportError, match=r'pip install "sparsetab\[mlflow\]"'):
        sparsetab_mlflow.save_model(model, tmp_path / "nope")


@pytest.mark.parametrize("method", ["predict", "predict_proba", "explain"])
def test_the_served_rows_keep_the_inputs_index(model, table, tmp_path, method):
    # Issue 33: a fresh RangeIndex made `df["pred"] = served.predict(df)["prediction"]` NaN on rows indexed 1010..
    X, _ = table
    rows = X.iloc[10:20].set_axis(range(1010, 1020)).sample(frac=1.0, random_state=0)
    served = mlflow.pyfunc.load_model(str(sparsetab_mlflow.save_model(model, tmp_path / "indexed")))
    output = served.predict(rows, params={"method": method})
    assert output.index.equals(rows.index)
    frame = rows.copy()
    frame["served"] = output.iloc[:, 0]
    expected = {
        "predict": model.predict(rows),
        "predict_proba": model.predict_proba(rows)[:, 0],
        "explain": model.explain(rows).importances[:, 0],
    }[method]
    assert frame["served"].notna().all()
    if method == "predict":
        assert frame["served"].tolist() == expected.tolist()
    else:
        np.testing.assert_allclose(frame["served"].to_numpy(), expected, rtol=1e-6)
