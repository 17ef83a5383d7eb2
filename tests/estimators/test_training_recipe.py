"""The training recipe of the estimators: automatic batch sizes, learning-rate schedules, weight decay."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV

from sparsetab import SparseTabNetClassifier, SparseTabNetPretrainer, SparseTabNetRegressor, load_model
from sparsetab._params import LEGACY_VALUES


def _data(n_rows=96, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n_rows, 4))
    return X, (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)


def _quiet(call, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return call(*args, **kwargs)


SMALL = dict(n_d=4, n_a=4, n_steps=2, n_independent=1, n_shared=1, random_state=0)


@pytest.mark.parametrize("estimator", [SparseTabNetClassifier, SparseTabNetRegressor])
def test_auto_batch_sizes_are_resolved_per_fit_and_the_parameters_stay_auto(estimator):
    X, y = _data(2000)
    model = _quiet(estimator(batch_size="auto", virtual_batch_size="auto", max_epochs=1, **SMALL).fit, X, y)
    assert (model.batch_size_, model.virtual_batch_size_) == (64, 64)  # 2,000 rows / 32 steps
    assert model.get_params()["batch_size"] == "auto" and model.get_params()["virtual_batch_size"] == "auto"
    assert model._network_config["virtual_batch_size"] == 64
    # early_stopping holds out validation_fraction first: 4,000 rows -> 3,600 training rows -> 128.
    X, y = _data(4000)
    stopped = estimator(batch_size="auto", early_stopping=True, max_epochs=1, **SMALL)
    _quiet(stopped.fit, X, y)
    assert stopped.batch_size_ == 128 and stopped.virtual_batch_size_ == 128


def test_explicit_batch_sizes_keep_their_meaning():
    X, y = _data()
    model = _quiet(SparseTabNetClassifier(batch_size=40, virtual_batch_size=8, max_epochs=1, **SMALL).fit, X, y)
    assert (model.batch_size_, model.virtual_batch_size_) == (40, 8)
    assert model._network_config["virtual_batch_size"] == 8


def test_a_continued_fit_resolves_the_batch_and_keeps_the_network_virtual_batch():
    X, y = _data(2000)
    model = SparseTabNetClassifier(batch_size="auto", virtual_batch_size="auto", warm_start=True, max_epochs=1, **SMALL)
    _quiet(model.fit, X, y)
    _quiet(model.fit, X[:500], y[:500])
    assert model.batch_size_ == 32 and model.virtual_batch_size_ == 64  # 500 / 32 -> 16, raised to 32


def test_pretrainer_resolves_auto_batch_sizes():
    X, _ = _data(2000)
    pretrainer = _quiet(
        SparseTabNetPretrainer(batch_size="auto", virtual_batch_size="auto", max_epochs=1, **SMALL).fit, X
    )
    assert (pretrainer.batch_size_, pretrainer.virtual_batch_size_) == (64, 64)
    assert pretrainer.get_params()["batch_size"] == "auto"


@pytest.mark.parametrize("value", ["big", 0, 2.5])
def test_batch_size_errors_name_the_argument_and_the_accepted_values(value):
    X, y = _data()
    with pytest.raises(ValueError, match=r"'batch_size' parameter .* must be .*'auto'"):
        SparseTabNetClassifier(batch_size=value).fit(X, y)


def test_learning_rate_decay_with_another_schedule_is_refused_at_fit():
    X, y = _data()
    model = SparseTabNetClassifier(learning_rate_schedule="cosine", learning_rate_decay=0.95, **SMALL)
    with pytest.raises(ValueError, match="learning_rate_decay=0.95 is the per-epoch factor"):
        model.fit(X, y)
    assert not model.__sklearn_is_fitted__()


@pytest.mark.parametrize(
    "recipe",
    [
        dict(learning_rate_schedule="cosine", warmup_epochs=1),
        dict(learning_rate_schedule="constant", weight_decay=0.01),
        dict(learning_rate_schedule="exponential", learning_rate_decay=0.8, warmup_epochs=0.5),
    ],
)
def test_partial_fit_calls_continue_the_schedule_as_one_fit(recipe):
    # n partial_fit calls equal a fit of max_epochs=n: the schedule spans max_epochs and partial_fit continues it.
    X, y = _data()
    # partial_fit keeps the trained weights: the fit it equals has no weight average.
    params = dict(
        SMALL,
        batch_size=32,
        virtual_batch_size=16,
        early_stopping=False,
        n_iter_no_change=100,
        weight_averaging_epochs=None,
        **recipe,
    )
    fitted = _quiet(SparseTabNetClassifier(max_epochs=3, **params).fit, X, y)
    model = SparseTabNetClassifier(max_epochs=3, **params)
    for _ in range(3):
        model.partial_fit(X, y, classes=[0, 1])
    np.testing.assert_allclose(model.loss_curve_, fitted.loss_curve_, rtol=1e-6)
    np.testing.assert_allclose(model.predict_proba(X), fitted.predict_proba(X), atol=1e-6)
    with (
        pytest.warns(UserWarning, match="cosine learning-rate schedule ended")
        if recipe.get("learning_rate_schedule") == "cosine"
        else warnings.catch_warnings()
    ):
        model.partial_fit(X, y)


def test_recipes_change_training_and_are_searchable():
    X, y = _data()
    base = dict(
        SMALL,
        batch_size=32,
        virtual_batch_size=16,
        max_epochs=3,
        early_stopping=False,
        learning_rate_schedule="exponential",
        warmup_epochs=0,
    )
    losses = {}
    for name, recipe in {
        "exponential": {},
        "cosine": dict(learning_rate_schedule="cosine"),
        "warmup": dict(warmup_epochs=1),
        "weight_decay": dict(weight_decay=0.1),
    }.items():
        losses[name] = _quiet(SparseTabNetClassifier(**{**base, **recipe}).fit, X, y).loss_curve_
    assert len({tuple(curve) for curve in losses.values()}) == 4  # each recipe trains differently
    grid = _quiet(
        GridSearchCV(
            SparseTabNetClassifier(**base),
            {"learning_rate_schedule": ["constant", "cosine"], "warmup_epochs": [0, 1], "weight_decay": [0.0, 1e-3]},
            cv=2,
        ).fit,
        X,
        y,
    )
    assert len(grid.cv_results_["params"]) == 8 and grid.best_params_["learning_rate_schedule"] in (
        "constant",
        "cosine",
    )


@pytest.mark.parametrize("estimator", [SparseTabNetClassifier, SparseTabNetRegressor])
def test_a_pickle_or_model_file_without_the_new_parameters_loads_with_their_legacy_values(estimator, tmp_path):
    X, y = _data()
    model = _quiet(estimator(max_epochs=2, learning_rate_schedule="cosine", warmup_epochs=1, **SMALL).fit, X, y)
    state = model.__getstate__()
    # The parameters added later that this estimator takes (loss, quantile, huber_delta: the regressor's only).
    legacy = {name: value for name, value in LEGACY_VALUES.items() if name in model.get_params()}
    for name in legacy:
        state.pop(name)
    restored = estimator.__new__(estimator)
    restored.__setstate__(state)
    assert {name: restored.get_params()[name] for name in legacy} == legacy
    np.testing.assert_array_equal(restored.predict(X), model.predict(X))
    # A model file without them: the file's params lose the keys.
    loaded = load_model(model.save_model(tmp_path / "model.sparsetab"))
    assert loaded.get_params()["learning_rate_schedule"] == "cosine"  # a parameter the file has is kept
    assert pickle.loads(pickle.dumps(restored)).get_params() == restored.get_params()
