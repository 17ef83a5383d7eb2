"""Models saved by an earlier sparsetab still load and answer as they did.

tests/data/ holds a model file and a pickle of a classifier and a regressor, and a pickle of a pretrainer,
written by tests/data/make_reference_models.py from the code before the layered layout (commit 733de26),
together with their answers on the reference rows; and a piecewise-linear regressor (model file and pickle)
and pretrainer from the code before ``piecewise_linear_with_value`` (tests/data/make_piecewise_linear_models.py,
commit 332a328). The answers are compared with a float32 tolerance: on
another CPU the same weights may round differently.
"""

import pickle
from pathlib import Path

import numpy as np
import pytest

from sparsetab import SparseTabNetClassifier, SparseTabNetPretrainer, SparseTabNetRegressor, load_model
from tests.data import make_reference_models as _maker

DATA = Path(__file__).parent / "data"
X = _maker.reference_frame()
REFERENCE = np.load(DATA / "reference_outputs.npz")
# The reference outputs were computed on one CPU; float32 kernels differ between CPU types (AVX2 against
# AVX-512 reductions): on an Intel Xeon the pretrainer's embedding differs from the AMD EPYC reference by up to
# 2.5e-6 on values near 0.1. A changed behaviour moves outputs by orders of magnitude more.
TOLERANCE = dict(rtol=1e-5, atol=1e-5)


def _load_pickle(name):
    with open(DATA / f"{name}.pkl", "rb") as file:
        return pickle.load(file)


@pytest.mark.parametrize(
    "loader", [lambda: load_model(DATA / "classifier.sparsetab"), lambda: _load_pickle("classifier")]
)
def test_saved_classifier_predicts_and_explains_as_before(loader):
    model = loader()
    assert isinstance(model, SparseTabNetClassifier)
    np.testing.assert_allclose(model.predict_proba(X), REFERENCE["classifier_proba"], **TOLERANCE)
    np.testing.assert_array_equal(model.predict(X).astype(str), REFERENCE["classifier_predict"])
    explanation = model.explain(X)
    np.testing.assert_allclose(explanation.step_masks, REFERENCE["classifier_step_masks"], **TOLERANCE)
    np.testing.assert_allclose(explanation.importances, REFERENCE["classifier_importances"], **TOLERANCE)
    assert model.classes_.tolist() == ["high", "low"]
    assert model.n_iter_ == 3


@pytest.mark.parametrize(
    "loader", [lambda: load_model(DATA / "regressor.sparsetab"), lambda: _load_pickle("regressor")]
)
def test_saved_regressor_predicts_as_before(loader):
    model = loader()
    assert isinstance(model, SparseTabNetRegressor)
    np.testing.assert_allclose(model.predict(X), REFERENCE["regressor_predict"], **TOLERANCE)
    assert model.entmax_mode == "adaptive"


def test_pickled_pretrainer_transforms_as_before():
    model = _load_pickle("pretrainer")
    assert isinstance(model, SparseTabNetPretrainer)
    np.testing.assert_allclose(model.transform(X), REFERENCE["pretrainer_transform"], **TOLERANCE)


@pytest.mark.parametrize("name", ["classifier", "regressor"])
def test_saved_models_keep_training_and_save_again(name, tmp_path):
    model = load_model(DATA / f"{name}.sparsetab")
    y = model.predict(X)
    model.partial_fit(X, y)
    assert model.n_iter_ == 4
    again = load_model(model.save_model(tmp_path / "again.sparsetab"))
    np.testing.assert_array_equal(again.predict(X), model.predict(X))


def test_pretrainer_from_a_pickle_still_fine_tunes():
    pretrainer = _load_pickle("pretrainer")
    y = (X["age"] > 40).to_numpy()
    # The old pretrainer has no numerical embedding, sparsemax masks and categorical embeddings of width 1: the
    # fine-tuned model must match it (today's defaults have an embedding, 1.5-entmax and width 4).
    params = {**_maker.SMALL, "max_epochs": 1, "numerical_embedding": None, "entmax_mode": "sparsemax"}
    params["cat_emb_dim"] = 1
    model = SparseTabNetClassifier(**params, pretrained=pretrainer).fit(X, y)
    assert model.predict_proba(X).shape == (len(X), 2)


@pytest.mark.parametrize(
    "loader", [lambda: load_model(DATA / "regressor.sparsetab"), lambda: _load_pickle("regressor")]
)
def test_saved_models_do_not_clip_until_refit(loader):
    # Models written before clipping existed standardise a row far outside the training range without
    # clipping it, as they did; the same model refit clips it.
    model = loader()
    encoding = model._tabular_encoding
    assert encoding.numerical_transform == "standard" and not encoding.clip_
    assert model.numerical_transform == "standard"
    far = X.iloc[:3].assign(age=X["age"].iloc[:3] * 1000)
    within = far.assign(age=X["age"].max())
    encoded = encoding.transform(far)
    np.testing.assert_allclose(encoded[:, 0], (far["age"] - encoding.center_[0]) / encoding.scale_[0], rtol=1e-6)
    assert not np.allclose(model.predict(far), model.predict(within))
    refit = model.set_params(max_epochs=1).fit(X, model.predict(X))
    assert refit._tabular_encoding.clip_
    np.testing.assert_array_equal(refit.predict(far), refit.predict(within))


PIECEWISE_LINEAR = np.load(DATA / "piecewise_linear_outputs.npz")


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.filterwarnings("ignore:The cosine learning-rate schedule ended")
@pytest.mark.parametrize(
    "loader",
    [
        lambda: load_model(DATA / "piecewise_linear_regressor.sparsetab"),
        lambda: _load_pickle("piecewise_linear_regressor"),
    ],
)
def test_piecewise_linear_models_saved_before_the_value_option_answer_as_before(loader):
    # written by tests/data/make_piecewise_linear_models.py with the bins-only layout
    model = loader()
    assert model.numerical_embedding == "piecewise_linear"
    assert not model.network_.embedding.piecewise_linear_with_value
    np.testing.assert_allclose(model.predict(X), PIECEWISE_LINEAR["regressor_predict"], **TOLERANCE)
    np.testing.assert_allclose(model.explain(X).importances, PIECEWISE_LINEAR["regressor_importances"], **TOLERANCE)
    width = model.network_.embedding.output_dim
    model.partial_fit(X, PIECEWISE_LINEAR["regressor_predict"])  # a continued fit keeps the saved layout
    assert model.network_.embedding.output_dim == width
    model.set_params(warm_start=False, early_stopping=False).fit(
        X, PIECEWISE_LINEAR["regressor_predict"]
    )  # a new fit takes today's
    assert model.network_.embedding.piecewise_linear_with_value
    assert model.network_.embedding.output_dim == width + 2  # age and hours keep their values too


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_pretrainer_pickled_before_the_value_option_transforms_and_fine_tunes_with_its_layout():
    pretrainer = _load_pickle("piecewise_linear_pretrainer")
    np.testing.assert_allclose(pretrainer.transform(X), PIECEWISE_LINEAR["pretrainer_transform"], **TOLERANCE)
    model = SparseTabNetRegressor(
        early_stopping=False,
        **_maker.SMALL,
        numerical_embedding="piecewise_linear",
        n_bins=8,
        entmax_mode="sparsemax",
        cat_emb_dim=1,  # the default of the time
        pretrained=pretrainer,
    )
    model.fit(X, PIECEWISE_LINEAR["regressor_predict"])
    assert not model.network_.embedding.piecewise_linear_with_value
    assert model._network_config["piecewise_linear_with_value"] is False
