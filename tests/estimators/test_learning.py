"""What the estimators learn: small fits whose bounds come from benchmarks/results/learning_bounds.md.

benchmarks/learning_bounds.py calls the learn_* functions here with other seeds (python -m benchmarks.learning_bounds).
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_classification, make_regression
from sklearn.metrics import r2_score

from sparsetab import SparseTabNetClassifier, SparseTabNetRegressor

# Short fits stop at max_epochs on purpose; tests that check the warning use pytest.warns.
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def learn_tiny_data_set(random_state=0):
    """50 rows, far fewer than batch_size=1024: one step per epoch, and patience for all 150 of them."""
    X, y = make_classification(50, 4, n_informative=2, n_redundant=0, class_sep=2.0, random_state=1)
    model = SparseTabNetClassifier(
        n_d=4, n_a=4, max_epochs=150, n_iter_no_change=150, random_state=random_state, learning_rate=0.05
    ).fit(X, y)
    return (
        model,
        X,
        y,
        {"loss last / first": model.loss_curve_[-1] / model.loss_curve_[0], "accuracy": model.score(X, y)},
    )


def learn_string_columns(fast_params, make_people_frame, random_state=0):
    X, y = make_people_frame(400)
    model = SparseTabNetClassifier(max_epochs=60, **{**fast_params, "random_state": random_state}).fit(X, y)
    return model, X, y, {"accuracy": model.score(X, y)}


def learn_regression(fast_params, random_state=0):
    X, y = make_regression(300, 5, n_informative=3, noise=1.0, random_state=0)
    Y = np.column_stack([y, -2 * y + 5])
    params = {**fast_params, "random_state": random_state}
    model = SparseTabNetRegressor(max_epochs=80, **params).fit(X, y)
    model2 = SparseTabNetRegressor(max_epochs=80, **params).fit(X, Y)
    metrics = {"R^2, 1-D y": r2_score(y, model.predict(X)), "R^2, 2 columns": r2_score(Y, model2.predict(X))}
    return (model, model2), X, (y, Y), metrics


def learn_small_categorical(random_state=0):
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 40)
    X = pd.DataFrame(
        {"a": np.array(list("abcd"))[rng.integers(0, 4, 40)], "b": pd.Categorical(np.array(list("xy"))[y])}
    )
    model = SparseTabNetClassifier(max_epochs=20, batch_size=8, virtual_batch_size=8, random_state=random_state)
    model.fit(X, y)
    return model, X, y, {"accuracy": model.score(X, y)}


def test_tiny_data_set_learns():
    model, X, y, learned = learn_tiny_data_set()
    assert model.n_iter_ == 150 == len(model.loss_curve_)  # patience of max_epochs: no early stop
    assert (
        learned["loss last / first"] < 0.5
    )  # bound from benchmarks/results/learning_bounds.md: mean 7.1e-4, max 0.0056 over 30 seeds
    assert (
        learned["accuracy"] >= 0.9
    )  # bound from benchmarks/results/learning_bounds.md: 1.0 in all 30 seeds (chance: 0.5)


def test_dataframe_with_string_columns_and_string_labels(fast_params, make_people_frame):
    model, X, y, learned = learn_string_columns(fast_params, make_people_frame)
    assert model.classes_.tolist() == ["no", "yes"]
    assert model.feature_names_in_.tolist() == ["city", "age", "noise", "member"]
    predicted = model.predict(X)
    assert predicted.dtype == model.classes_.dtype
    assert set(predicted) <= {"no", "yes"}
    assert (
        learned["accuracy"] > 0.85
    )  # bound from benchmarks/results/learning_bounds.md: mean 0.989, sd 0.009 over 30 seeds
    proba = model.predict_proba(X)
    assert proba.shape == (400, 2)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(model.classes_[proba.argmax(axis=1)], predicted)


def test_regressor_1d_and_2d_targets(fast_params):
    (model, model2), X, (y, Y), learned = learn_regression(fast_params)
    assert model.predict(X).shape == (300,)
    assert (
        learned["R^2, 1-D y"] > 0.8
    )  # bound from benchmarks/results/learning_bounds.md: mean 0.97, sd 0.020 over 30 seeds
    assert model2.n_outputs_ == 2
    assert model2.predict(X).shape == (300, 2)
    assert (
        learned["R^2, 2 columns"] > 0.7
    )  # bound from benchmarks/results/learning_bounds.md: mean 0.962, sd 0.037 over 30 seeds
    column = SparseTabNetRegressor(max_epochs=2, **fast_params).fit(X, y[:, None]).predict(X)
    assert column.shape == (300, 1)


def test_regressor_offset_and_scaled_target_trains_like_centred_one(fast_params):
    X, y = make_regression(300, 5, n_informative=3, noise=1.0, random_state=0)
    # The network trains on the standardised target, which differs between the two only by float64 rounding
    # (about 1e-16) that the float32 cast removes: both fits see the same targets, a contract on any CPU
    # (benchmarks/results/learning_bounds.md: largest difference 3.8e-15 sd(y) over 30 seeds).
    centred = SparseTabNetRegressor(max_epochs=40, **fast_params).fit(X, y)
    shifted = SparseTabNetRegressor(max_epochs=40, **fast_params).fit(X, 1000 * y + 1e6)
    np.testing.assert_allclose(shifted.target_mean_, [1000 * y.mean() + 1e6])
    np.testing.assert_allclose((shifted.predict(X) - 1e6) / 1000, centred.predict(X), rtol=1e-3, atol=1e-2 * y.std())


def test_small_categorical_data_predicts_what_it_learned():
    # Batch norm running statistics must follow the embeddings even with few optimisation steps: column "b"
    # is the label, and predictions in evaluation mode must reproduce what training learned.
    model, X, y, learned = learn_small_categorical()
    assert (
        learned["accuracy"] >= 0.95
    )  # bound from benchmarks/results/learning_bounds.md: 1.0 in all 30 seeds (chance: 0.5)
