"""The estimators inside scikit-learn's meta-estimators, model selection tools and persistence."""

import io
import pickle

import joblib
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.calibration import CalibratedClassifierCV
from sklearn.compose import ColumnTransformer
from sklearn.datasets import make_classification
from sklearn.ensemble import StackingClassifier, VotingClassifier
from sklearn.experimental import enable_halving_search_cv  # noqa: F401
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, HalvingGridSearchCV, StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

import sparsetab._training.compiled as compiled
from sparsetab import SparseTabNetClassifier, SparseTabNetPretrainer, SparseTabNetRegressor
from sparsetab.pretraining import ENCODER_PARAMETERS

# Short fits stop at max_epochs on purpose; tests that check the warning use pytest.warns.
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def _data(n_rows=160, seed=0):
    X, y = make_classification(n_rows, 5, n_informative=3, random_state=seed)
    return X, y


def _table(make_classification_frame):
    """The classification frame without its category-dtype column: strings and numbers only."""
    X, y = make_classification_frame()
    return X.drop(columns="plan"), y


def test_grid_search_over_the_four_entmax_modes_in_parallel(one_step_params):
    X, y = _data()
    search = GridSearchCV(
        SparseTabNetClassifier(max_epochs=3, entmax_alpha=1.3, **one_step_params),
        {"entmax_mode": ["sparsemax", "entmax15", "constant", "adaptive"]},
        cv=2,
        n_jobs=2,
    ).fit(X, y)
    assert len(search.cv_results_["mean_test_score"]) == 4
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()
    assert search.best_estimator_.entmax_mode == search.best_params_["entmax_mode"]
    assert search.predict(X).shape == (160,)


def test_cross_val_score_stratifies_and_accepts_roc_auc(one_step_params):
    X, y = _data()
    model = SparseTabNetClassifier(max_epochs=3, **one_step_params)
    scores = cross_val_score(model, X, y, cv=3, scoring="roc_auc")
    assert scores.shape == (3,) and ((scores >= 0) & (scores <= 1)).all()
    # A classifier gets StratifiedKFold by default: same folds, same scores.
    np.testing.assert_allclose(cross_val_score(model, X, y, cv=3), cross_val_score(model, X, y, cv=StratifiedKFold(3)))


def test_pipeline_with_a_column_transformer(one_step_params, make_classification_frame):
    X, y = _table(make_classification_frame)
    preprocess = ColumnTransformer(
        [("numeric", StandardScaler(), ["age", "income"]), ("city", OneHotEncoder(sparse_output=False), ["city"])]
    )
    pipeline = make_pipeline(preprocess, SparseTabNetClassifier(max_epochs=3, **one_step_params)).fit(X, y)
    assert pipeline.predict(X).dtype == y.dtype
    assert set(pipeline.predict(X)) <= {"yes", "no"}
    assert pipeline[-1].n_features_in_ == 5
    # the pandas route needs no preprocessing at all
    assert SparseTabNetClassifier(max_epochs=3, **one_step_params).fit(X, y).n_features_in_ == 3


def test_voting_calibrated_and_stacking_classifiers(one_step_params):
    X, y = _data()
    base = SparseTabNetClassifier(max_epochs=3, **one_step_params)
    voting = VotingClassifier([("tabnet", base), ("logistic", LogisticRegression())], voting="soft").fit(X, y)
    proba = voting.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    expected = (
        voting.named_estimators_["tabnet"].predict_proba(X) + voting.named_estimators_["logistic"].predict_proba(X)
    ) / 2
    np.testing.assert_allclose(proba, expected, rtol=1e-6)
    calibrated = CalibratedClassifierCV(base, cv=2).fit(X, y)
    assert calibrated.predict_proba(X).shape == (160, 2)
    stacking = StackingClassifier([("tabnet", base), ("logistic", LogisticRegression())], cv=2).fit(X, y)
    assert stacking.score(X, y) > 0.5


def test_clone_keeps_every_non_default_parameter(make_classification_frame, monkeypatch):
    # torch_compile=True traced by Dynamo, without inductor's code generation (tests/training/test_compiled.py).
    monkeypatch.setattr(compiled, "BACKEND", "aot_eager")
    params = dict(
        n_d=5, n_a=6, n_steps=2, gamma=1.5, n_independent=1, n_shared=1, n_ensemble=2, lambda_sparse=0.01,
        n_efficient_members=3, virtual_batch_size=16, momentum=0.1, batch_size=32, max_epochs=2, learning_rate=0.01,
        learning_rate_decay=0.9, max_grad_norm=None, learning_rate_schedule="exponential", warmup_epochs=0.5,
        weight_decay=1e-4, weight_averaging_epochs=1.5,
        entmax_mode="adaptive", entmax_alpha=1.2, lambda_gate=0.5, step_gates="sigmoid",
        numerical_transform="quantile",
        categorical_features=["city"], cat_emb_dim={"city": 2}, grouped_features=[["age", "income"]],
        numerical_embedding="piecewise_linear", n_bins=4, embedding_dim=3, frequency_scale=0.5,
        early_stopping=True, validation_fraction=0.2, n_iter_no_change=3, tol=1e-3, scoring="accuracy",
        class_weight="balanced", random_state=7, verbose=0, warm_start=True, n_jobs=1, device="cpu",
        torch_compile=True,
    )  # fmt: skip
    X, y = _table(make_classification_frame)
    encoder_params = {name: params[name] for name in ENCODER_PARAMETERS}
    params["pretrained"] = FrozenEstimator(SparseTabNetPretrainer(**encoder_params, max_epochs=1).fit(X))
    model = SparseTabNetClassifier(**params)
    assert set(params) == set(model.get_params(deep=False))  # every parameter is exercised
    twin = clone(model)
    assert twin.get_params(deep=False) == params
    assert twin.pretrained is params["pretrained"]  # clone keeps a FrozenEstimator as it is
    twin.fit(X, y)
    assert not hasattr(model, "network_")  # the original stays unfitted
    assert clone(twin).get_params(deep=False) == params and not hasattr(clone(twin), "network_")


def test_grid_search_over_training_length_and_halving_search_on_epochs(one_step_params):
    X, y = _data()
    grid = GridSearchCV(
        SparseTabNetClassifier(**one_step_params), {"batch_size": [32, 160], "max_epochs": [1, 4]}, cv=2
    ).fit(X, y)
    assert grid.cv_results_["params"][grid.best_index_] == grid.best_params_
    halving = HalvingGridSearchCV(
        SparseTabNetClassifier(**one_step_params),
        {"learning_rate": [0.01, 0.05], "entmax_mode": ["sparsemax", "entmax15"]},
        resource="max_epochs",
        min_resources=1,
        max_resources=6,
        factor=2,
        cv=2,
        random_state=0,
    ).fit(X, y)
    assert list(halving.n_resources_) == [1, 2, 4]
    assert halving.best_estimator_.max_epochs == 4


@pytest.mark.parametrize("Estimator", [SparseTabNetClassifier, SparseTabNetRegressor])
def test_pickle_and_joblib_round_trips_predict_identically(
    Estimator, tmp_path, one_step_params, make_classification_frame
):
    X, y = _table(make_classification_frame)
    if Estimator is SparseTabNetRegressor:
        y = X["age"] * 2.0
    model = Estimator(max_epochs=2, **one_step_params).fit(X, y)
    expected = model.predict(X)
    restored = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(restored.predict(X), expected)
    joblib.dump(model, tmp_path / "model.joblib")
    loaded = joblib.load(tmp_path / "model.joblib")
    np.testing.assert_array_equal(loaded.predict(X), expected)
    np.testing.assert_array_equal(loaded.feature_importances_, model.feature_importances_)
    buffer = io.BytesIO()
    joblib.dump(model, buffer)
    assert buffer.tell() > 0


def test_fit_returns_self_so_calls_chain(one_step_params):
    X, y = _data()
    model = SparseTabNetClassifier(max_epochs=2, **one_step_params)
    assert model.fit(X, y) is model
    score = SparseTabNetClassifier(max_epochs=2, **one_step_params).fit(X, y).score(X, y)
    assert 0.0 <= score <= 1.0
    regression_score = (
        SparseTabNetRegressor(max_epochs=2, **one_step_params).fit(X, y.astype(float)).score(X, y.astype(float))
    )
    assert np.isfinite(regression_score)


def test_pipeline_grid_search_clone_and_pickle(fast_params):
    X, y = make_classification(150, 4, random_state=0)
    pipeline = make_pipeline(StandardScaler(), SparseTabNetClassifier(max_epochs=3, **fast_params))
    search = GridSearchCV(pipeline, {"sparsetabnetclassifier__entmax_mode": ["sparsemax", "entmax15"]}, cv=2)
    search.fit(X, y)
    assert search.best_params_["sparsetabnetclassifier__entmax_mode"] in {"sparsemax", "entmax15"}
    model = SparseTabNetClassifier(max_epochs=3, **fast_params).fit(X, y)
    assert clone(model).get_params() == model.get_params()
    restored = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(restored.predict_proba(X), model.predict_proba(X))
