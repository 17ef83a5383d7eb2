"""numerical_transform and the clipping of numeric inputs to the training range, through the estimators."""

import pickle
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

import sparsetab._inference
from sparsetab import SparseTabNetClassifier, SparseTabNetRegressor

# Short fits stop at max_epochs on purpose.
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
TRANSFORMS = ["standard", "quantile"]


def _regression_data(n_rows=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.5, 5.0, size=(n_rows, 3))
    y = X[:, 0] + 0.5 * X[:, 1] ** 2 + rng.normal(scale=0.1, size=n_rows)
    return X, y


@pytest.mark.parametrize("transform", TRANSFORMS)
def test_a_row_1000_times_outside_the_training_range_predicts_as_the_row_clipped_to_it(transform, fast_params):
    X, y = _regression_data()
    # No warm-up: three epochs at the full rate, so the spread of the training predictions is that of a fit.
    model = SparseTabNetRegressor(numerical_transform=transform, max_epochs=3, warmup_epochs=0, **fast_params)
    model.fit(X, y)
    far = X[:4].copy()
    far[0, 0] = 1000 * X[:, 0].max()
    far[1, 1] = -1000 * X[:, 1].max()  # below the minimum
    far[2, :] = 1000 * X.max(axis=0)
    clipped = np.clip(far, X.min(axis=0), X.max(axis=0))
    prediction = model.predict(far)
    np.testing.assert_array_equal(prediction, model.predict(clipped))
    # The prediction stays of the order of the training predictions, not hundreds of times larger.
    train_predictions = model.predict(X)
    spread = train_predictions.max() - train_predictions.min()
    assert (prediction >= train_predictions.min() - spread).all()
    assert (prediction <= train_predictions.max() + spread).all()


def test_the_default_is_standard_and_the_fitted_encoding_records_its_rule(fast_params):
    X, y = _regression_data()
    model = SparseTabNetRegressor(max_epochs=1, **fast_params).fit(X, y)
    assert model.numerical_transform == "standard"
    assert model._tabular_encoding.numerical_transform == "standard" and model._tabular_encoding.clip_
    quantile = SparseTabNetRegressor(numerical_transform="quantile", max_epochs=1, **fast_params).fit(X, y)
    assert quantile._tabular_encoding.quantile_transformer_.n_quantiles_ == 10  # max(min(200 // 30, 1000), 10)


def test_an_unknown_numerical_transform_is_a_clear_error(fast_params):
    X, y = _regression_data(40)
    with pytest.raises(ValueError, match=r"'numerical_transform' parameter .* among \{.*'quantile'.*\}. Got 'rank'"):
        SparseTabNetRegressor(numerical_transform="rank", max_epochs=1, **fast_params).fit(X, y)


@pytest.mark.parametrize("method", ["warm_start", "partial_fit"])
def test_a_continued_fit_refuses_another_numerical_transform(method, fast_params):
    X, y = _regression_data(80)
    model = SparseTabNetRegressor(max_epochs=1, warm_start=method == "warm_start", **fast_params)
    (model.fit if method == "warm_start" else model.partial_fit)(X, y)
    model.set_params(numerical_transform="quantile")
    with pytest.raises(ValueError, match=r"built with numerical_transform='standard'; it is now .*'quantile'"):
        (model.fit if method == "warm_start" else model.partial_fit)(X, y)


@pytest.mark.parametrize("transform", TRANSFORMS)
def test_pickle_and_clone_keep_the_rule(transform, fast_params, make_classification_frame):
    X, y = make_classification_frame()
    model = SparseTabNetClassifier(numerical_transform=transform, max_epochs=2, **fast_params).fit(X, y)
    far = X.assign(income=X["income"] * 1000)
    restored = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(restored.predict_proba(far), model.predict_proba(far))
    assert clone(model).get_params()["numerical_transform"] == transform


def test_grid_search_over_numerical_transform(one_step_params):
    X, y = _regression_data(120)
    search = GridSearchCV(
        SparseTabNetRegressor(max_epochs=1, **one_step_params), {"numerical_transform": TRANSFORMS}, cv=2
    ).fit(X, y)
    assert [params["numerical_transform"] for params in search.cv_results_["params"]] == TRANSFORMS
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()


FAR_OUTSIDE = r"of (\d+) rows have values far outside the range seen at fit \(beyond \[min - range, max \+ range\]\)"


def _one_warning(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    outside = [warning for warning in caught if re.search(FAR_OUTSIDE, str(warning.message))]
    assert len(outside) == 1, [str(warning.message) for warning in caught]
    assert outside[0].category is UserWarning and outside[0].filename == __file__  # names the caller's line
    return str(outside[0].message)


@pytest.mark.parametrize("method", ["predict", "predict_proba", "explain"])
def test_rows_far_outside_the_training_range_warn_once_per_call_with_their_count_and_columns(
    method, fast_params, monkeypatch
):
    # A California row with an average occupancy of 1,243, where training rows stay below 100, was predicted
    # at 217.6 without a word. Here [0.5, 5] at fit: r = 4.5, so far outside means below -4 or above 9.5.
    monkeypatch.setattr(sparsetab._inference, "INFERENCE_BATCH_ROWS", 16)  # the count spans every slice
    X, y = _regression_data()
    frame = pd.DataFrame(X, columns=["income", "rooms", "occupancy"])
    model = SparseTabNetClassifier(max_epochs=1, **fast_params).fit(frame, y > np.median(y))
    far = frame.iloc[:40].copy()
    far.iloc[3, 2] = 1243.0
    far.iloc[30, 0] = -4.01
    far.iloc[31, 2] = 9.49  # outside [min, max], but within one range of it: not counted
    far.iloc[35, 1] = np.nan  # missing is never outside
    message = _one_warning(lambda: getattr(model, method)(far))
    assert message.startswith("2 of 40 rows have values far outside") and "column(s) 'income', 'occupancy'." in message
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        getattr(model, method)(frame)  # the training rows themselves: no warning
        getattr(model, method)(far.drop(index=far.index[[3, 30]]))


def test_columns_far_outside_are_named_as_explain_names_them(fast_params):
    # Numpy input (or a ColumnTransformer's array): the warning said '2' where explain() says 'x2'.
    X, y = _regression_data()
    model = SparseTabNetRegressor(max_epochs=1, **fast_params).fit(X, y)
    far = X[:4].copy()
    far[0, 2] = 1e6
    assert "in column(s) 'x2'." in _one_warning(lambda: model.predict(far))
    assert model.explain(far).feature_names[2] == "x2"


def test_a_column_missing_on_every_row_at_fit_is_never_far_outside(fast_params):
    # It was "far outside the range seen at fit" though no value was seen; the column has no effect at all.
    X, y = _regression_data()
    frame = pd.DataFrame(X, columns=["income", "rooms", "occupancy"]).assign(unknown=np.nan)
    model = SparseTabNetRegressor(max_epochs=1, **fast_params).fit(frame, y)
    later = frame.iloc[:4].assign(unknown=[1.0, -50.0, 1e6, np.nan])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        prediction = model.predict(later)
    np.testing.assert_array_equal(prediction, model.predict(frame.iloc[:4]))
    # A column constant at fit (never missing) still reports any other value.
    constant = SparseTabNetRegressor(max_epochs=1, **fast_params).fit(frame.assign(unknown=2.0), y)
    assert "in column(s) 'unknown'." in _one_warning(lambda: constant.predict(later.fillna(2.0)))


def test_models_saved_before_clipping_do_not_warn(fast_params):
    X, y = _regression_data()
    model = SparseTabNetRegressor(max_epochs=1, **fast_params).fit(X, y)
    far = X[:4] * 1000
    _one_warning(lambda: model.predict(far))
    model._tabular_encoding.clip_ = False  # the state a pickle from before clipping restores
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.predict(far)
