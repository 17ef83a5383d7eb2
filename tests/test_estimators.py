import pickle

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.base import clone
from sklearn.datasets import make_classification, make_regression
from sklearn.exceptions import NotFittedError
from sklearn.metrics import r2_score
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sparsetab import SparseTabNetClassifier, SparseTabNetPretrainer, SparseTabNetRegressor

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


def test_explain_contract(fast_params, make_people_frame):
    X, y = make_people_frame(300)
    model = SparseTabNetClassifier(max_epochs=20, **fast_params).fit(X, y)
    explanation = model.explain(X.iloc[:25])
    assert explanation.step_masks.shape == (25, 2, 4)
    np.testing.assert_allclose(explanation.step_masks.sum(axis=2), 1.0, atol=1e-5)
    assert explanation.importances.shape == (25, 4)
    sums = explanation.importances.sum(axis=1)
    assert np.all(np.isclose(sums, 1.0, atol=1e-5) | (sums == 0))
    assert not np.isnan(explanation.importances).any()
    assert explanation.step_importance.shape == (25, 2)
    assert (explanation.step_importance >= 0).all()
    assert explanation.feature_names.tolist() == ["city", "age", "noise", "member"]
    # M_agg recomputed by hand from the two other outputs.
    eta = explanation.step_importance
    used = eta.sum(axis=1) > 0
    expected = np.einsum("ns,nsf->nf", eta[used], explanation.step_masks[used]) / eta[used].sum(axis=1, keepdims=True)
    np.testing.assert_allclose(explanation.importances[used], expected, rtol=1e-5)
    np.testing.assert_array_equal(explanation.importances[~used], 0.0)
    assert model.feature_importances_.shape == (4,)
    assert model.feature_importances_.sum() == pytest.approx(1.0)


def test_explain_rows_with_zero_decision_get_zeros(monkeypatch, fast_params, make_people_frame):
    X, y = make_people_frame(100)
    model = SparseTabNetClassifier(max_epochs=2, **fast_params).fit(X, y)
    for transformer in model.network_.step_transformers:  # make every step's ReLU(d) = 0
        original = transformer.forward
        monkeypatch.setattr(transformer, "forward", lambda x, original=original: -original(x).abs())
    explanation = model.explain(X.iloc[:5])
    np.testing.assert_array_equal(explanation.importances, 0.0)
    np.testing.assert_array_equal(explanation.step_importance, 0.0)


def test_numpy_input_has_generic_feature_names(fast_params):
    X, y = make_classification(120, 5, random_state=0)
    model = SparseTabNetClassifier(max_epochs=3, **fast_params).fit(X, y)
    assert not hasattr(model, "feature_names_in_")
    assert model.explain(X[:3]).feature_names.tolist() == ["x0", "x1", "x2", "x3", "x4"]


def test_same_random_state_gives_identical_predictions_and_leaves_global_rngs_alone(fast_params, make_people_frame):
    X, y = make_people_frame(200)
    torch_state, numpy_state = torch.get_rng_state(), np.random.get_state()
    first = SparseTabNetClassifier(max_epochs=5, **fast_params).fit(X, y).predict_proba(X)
    second = SparseTabNetClassifier(max_epochs=5, **fast_params).fit(X, y).predict_proba(X)
    np.testing.assert_array_equal(first, second)
    assert torch.equal(torch.get_rng_state(), torch_state)
    assert np.array_equal(np.random.get_state()[1], numpy_state[1])
    other = SparseTabNetClassifier(max_epochs=5, **{**fast_params, "random_state": 1}).fit(X, y).predict_proba(X)
    assert not np.array_equal(first, other)


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


def test_zero_sample_weight_equals_dropping_rows(fast_params, make_people_frame):
    X, y = make_people_frame(200)
    weight = np.r_[np.ones(100), np.zeros(100)]
    weighted = SparseTabNetClassifier(max_epochs=5, **fast_params).fit(X, y, sample_weight=weight)
    dropped = SparseTabNetClassifier(max_epochs=5, **fast_params).fit(X.iloc[:100], y.iloc[:100])
    np.testing.assert_allclose(weighted.predict_proba(X), dropped.predict_proba(X), rtol=1e-6)


def test_explicit_validation_data_gives_early_stopping_and_scores(fast_params, make_people_frame):
    X, y = make_people_frame(400)
    model = SparseTabNetClassifier(max_epochs=30, n_iter_no_change=3, scoring="accuracy", **fast_params)
    model.fit(X.iloc[:300], y.iloc[:300], X_val=X.iloc[300:], y_val=y.iloc[300:])
    assert len(model.validation_scores_) == model.n_iter_
    assert model.best_validation_score_ == max(model.validation_scores_)
    assert model.validation_scores_[model.best_iteration_] == model.best_validation_score_
    # The restored weights give the best validation accuracy.
    assert model.score(X.iloc[300:], y.iloc[300:]) == pytest.approx(model.best_validation_score_)


def test_internal_validation_split_with_loss_scoring(fast_params, make_people_frame):
    X, y = make_people_frame(300)
    model = SparseTabNetClassifier(max_epochs=15, early_stopping=True, n_iter_no_change=2, **fast_params).fit(X, y)
    assert all(score < 0 for score in model.validation_scores_)  # negative validation loss
    assert model.best_iteration_ is not None
    no_validation = SparseTabNetClassifier(max_epochs=3, early_stopping=False, **fast_params).fit(X, y)
    assert no_validation.validation_scores_ is None and no_validation.best_validation_score_ is None


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


@pytest.mark.parametrize("entmax_mode", ["entmax15", "constant", "adaptive"])
def test_every_entmax_mode_fits(entmax_mode, fast_params, make_people_frame):
    X, y = make_people_frame(200)
    model = SparseTabNetClassifier(max_epochs=3, entmax_mode=entmax_mode, entmax_alpha=1.3, **fast_params).fit(X, y)
    assert model.entmax_alphas_.shape == (2,)
    assert model.entmax_alpha_history_.shape == (model.n_iter_, 2)
    np.testing.assert_allclose(model.explain(X.iloc[:5]).step_masks.sum(axis=2), 1.0, atol=1e-4)


@pytest.mark.parametrize(
    "params, message",
    [
        ({"n_steps": 0}, "'n_steps' parameter"),
        ({"entmax_mode": "softmax"}, "'entmax_mode' parameter"),
        ({"entmax_alpha": 3.0}, "'entmax_alpha' parameter"),
        ({"early_stopping": "sometimes"}, "'early_stopping' parameter"),
    ],
)
def test_invalid_parameters_name_the_argument(params, message, make_people_frame):
    X, y = make_people_frame(50)
    with pytest.raises(ValueError, match=message):
        SparseTabNetClassifier(**params).fit(X, y)


@pytest.mark.parametrize("name", ["batch_size", "virtual_batch_size"])
@pytest.mark.parametrize("estimator", [SparseTabNetClassifier, SparseTabNetRegressor, SparseTabNetPretrainer])
def test_batches_of_one_row_are_refused(estimator, name, make_people_frame):
    # Ghost batch norm over one row is undefined: each row would normalise to the bias, and every
    # probability would come out 0 or 1.
    X, y = make_people_frame(50)
    accepted = r"an int in the range \[2, inf\) or a str among {'auto'}. Got 1 instead"
    with pytest.raises(ValueError, match=rf"'{name}' parameter .* {accepted}"):
        estimator(**{name: 1}).fit(X, y)


def test_input_errors(fast_params, make_people_frame):
    X, y = make_people_frame(60)
    model = SparseTabNetClassifier(max_epochs=1, **fast_params)
    with pytest.raises(NotFittedError):
        model.predict(X)
    with pytest.raises(ValueError, match="only one class"):
        model.fit(X, np.zeros(60))
    with pytest.raises(ValueError, match="X_val and y_val must be given together"):
        model.fit(X, y, X_val=X)
    with pytest.raises(ValueError, match="sample_weight_val was given without X_val"):
        model.fit(X, y, sample_weight_val=np.ones(60))
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        model.fit(X, y, X_val=X, y_val=y[:10])
    with pytest.raises(ValueError, match="y_val contains labels not seen in y"):
        model.fit(X, y, X_val=X.iloc[:2], y_val=["no", "maybe"])
    with pytest.raises(TypeError, match="sparse"):
        import scipy.sparse

        model.fit(scipy.sparse.csr_matrix(np.ones((60, 4))), y)
    model.fit(X, y)
    with pytest.raises(ValueError, match="feature names"):
        model.predict(X[["age", "city", "noise", "member"]])
    with pytest.raises(ValueError, match="y contains 1 NaN and 0 infinite value"):
        SparseTabNetRegressor(max_epochs=1).fit(np.ones((5, 2)), [1.0, np.nan, 2, 3, 4])
    targets = np.ones((5, 3))
    targets[0, 2] = targets[1, 2] = np.nan
    targets[3, 0] = -np.inf
    with pytest.raises(ValueError, match=r"y contains 2 \(column 2: 2\) NaN and 1 \(column 0: 1\) infinite"):
        SparseTabNetRegressor(max_epochs=1).fit(np.ones((5, 2)), targets)
    with pytest.raises(ValueError, match="y contains 2 missing label"):
        SparseTabNetClassifier(max_epochs=1).fit(np.ones((5, 2)), np.array(["a", None, "b", np.nan, "a"], dtype=object))


def test_fit_does_not_modify_input(fast_params, make_people_frame):
    X, y = make_people_frame(100)
    X_before, y_before = X.copy(deep=True), y.copy(deep=True)
    model = SparseTabNetClassifier(max_epochs=2, **fast_params).fit(X, y)
    model.explain(X)
    pd.testing.assert_frame_equal(X, X_before)
    pd.testing.assert_series_equal(y, y_before)


def test_fewer_than_two_training_rows_is_a_clear_error():
    X, y = make_regression(30, 3, random_state=0)
    with pytest.raises(ValueError, match="at least 2 rows .* n_samples=1"):
        SparseTabNetRegressor(max_epochs=1).fit(X[:1], y[:1])
    with pytest.raises(ValueError, match="n_samples=1 after dropping rows of zero sample_weight"):
        SparseTabNetRegressor(max_epochs=1).fit(X, y, sample_weight=np.r_[1.0, np.zeros(29)])
    with pytest.raises(ValueError, match="requires y to be passed"):
        SparseTabNetRegressor().fit(X, None)


def test_failed_refit_leaves_the_estimator_unfitted(fast_params, make_people_frame):
    X, y = make_people_frame(60)
    model = SparseTabNetClassifier(max_epochs=2, **fast_params).fit(X, y)
    three_classes = np.resize(["a", "b", "c"], 60)
    with pytest.raises(ValueError, match="X_val and y_val"):
        model.fit(X, three_classes, X_val=X.iloc[:5])
    with pytest.raises(NotFittedError):
        model.predict(X)


def test_small_categorical_data_predicts_what_it_learned():
    # Batch norm running statistics must follow the embeddings even with few optimisation steps: column "b"
    # is the label, and predictions in evaluation mode must reproduce what training learned.
    model, X, y, learned = learn_small_categorical()
    assert (
        learned["accuracy"] >= 0.95
    )  # bound from benchmarks/results/learning_bounds.md: 1.0 in all 30 seeds (chance: 0.5)


def test_divergence_warns_and_keeps_finite_predictions():
    X, y = make_regression(64, 3, random_state=0)
    model = SparseTabNetRegressor(max_epochs=20, batch_size=16, learning_rate=1e8, max_grad_norm=None, random_state=0)
    with pytest.warns(RuntimeWarning, match="non-finite"):
        model.fit(X, y)
    assert np.isfinite(model.predict(X)).all()
    assert np.isfinite(model.explain(X).step_masks).all()


def test_callable_scorer_without_sample_weight_and_best_score_matches_restored_epoch(fast_params, make_people_frame):
    X, y = make_people_frame(200)
    calls = []

    def accuracy(estimator, X_val, y_val):
        calls.append(len(X_val))
        return float(np.mean(estimator.predict(X_val) == np.asarray(y_val)))

    model = SparseTabNetClassifier(
        max_epochs=12, early_stopping=True, tol=0.05, n_iter_no_change=20, scoring=accuracy, **fast_params
    )
    model.fit(X, y)
    assert calls == [20] * model.n_iter_
    best = model.best_validation_score_
    assert best == model.validation_scores_[model.best_iteration_] == max(model.validation_scores_)


def test_device_and_tags():
    X, y = make_regression(30, 3, random_state=0)
    with pytest.raises(ValueError, match="device='nowhere' is not usable"):
        SparseTabNetRegressor(device="nowhere").fit(X, y)
    assert SparseTabNetRegressor().__sklearn_tags__().target_tags.multi_output
    assert SparseTabNetClassifier().__sklearn_tags__().input_tags.allow_nan


def test_adaptive_alpha_is_learned_per_step(fast_params, make_people_frame):
    X, y = make_people_frame(300)
    # One optimisation step (one epoch of one batch): Adam's first update moves a parameter by
    # lr * |g| / (|g| + eps), the learning rate up to a relative eps / |g| (eps = 1e-8: under 1e-3 for any gradient
    # above 1e-5), so each step's alpha = 1 + sigmoid(theta) leaves 1.5 by sigmoid(0.02) - 0.5 on any CPU. A step
    # whose alpha got no gradient would stay at 1.5.
    adaptive = dict(fast_params, entmax_mode="adaptive", entmax_alpha=1.5, early_stopping=False, learning_rate=0.02)
    # The step at the full rate: no warm-up, a constant schedule.
    full_rate = {"max_epochs": 1, "batch_size": 300, "learning_rate_schedule": "constant", "warmup_epochs": 0}
    one_step = SparseTabNetClassifier(**{**adaptive, **full_rate}).fit(X, y)
    np.testing.assert_allclose(np.abs(one_step.entmax_alphas_ - 1.5), 1 / (1 + np.exp(-0.02)) - 0.5, rtol=1e-3)
    model = SparseTabNetClassifier(max_epochs=15, **adaptive).fit(X, y)
    assert np.all((model.entmax_alphas_ > 1) & (model.entmax_alphas_ < 2))
    assert model.entmax_alpha_history_.shape == (model.n_iter_, 2)
    np.testing.assert_allclose(model.entmax_alpha_history_[-1], model.entmax_alphas_)
    assert not np.allclose(model.entmax_alpha_history_[0], model.entmax_alpha_history_[-1])
    fixed = SparseTabNetClassifier(max_epochs=3, entmax_mode="constant", entmax_alpha=1.3, **fast_params).fit(X, y)
    np.testing.assert_array_equal(fixed.entmax_alpha_history_, 1.3)


def test_adaptive_mode_needs_alpha_strictly_inside_one_two(fast_params, make_people_frame):
    X, y = make_people_frame(50)
    with pytest.raises(ValueError, match="needs 1 < entmax_alpha < 2"):
        SparseTabNetClassifier(entmax_mode="adaptive", entmax_alpha=2.0, **fast_params).fit(X, y)


def test_cat_emb_dim_per_column(fast_params, make_people_frame):
    X, y = make_people_frame(120)
    model = SparseTabNetClassifier(max_epochs=1, cat_emb_dim={"city": 3}, **fast_params).fit(X, y)
    widths = [embedding.embedding_dim for embedding in model.network_.embedding.embeddings]
    assert widths == [3, 1]  # city (3 categories + reserved row), member (bool) keeps the default
    assert [embedding.num_embeddings for embedding in model.network_.embedding.embeddings] == [4, 3]
    assert list(model.categories_) == ["city", "member"]
    assert model.categories_["city"].tolist() == ["Lima", "Oslo", "Paris"]
    assert model.categories_["member"].tolist() == [False, True]
    explanation = model.explain(X.iloc[:10])
    assert explanation.step_masks.shape == (10, 2, 4)  # still one value per input column
    np.testing.assert_allclose(explanation.step_masks.sum(axis=2), 1.0, atol=1e-5)
    by_index = SparseTabNetClassifier(max_epochs=1, cat_emb_dim={0: 3}, **fast_params).fit(X, y)
    assert by_index.predict_proba(X.iloc[:5]) == pytest.approx(model.predict_proba(X.iloc[:5]))


@pytest.mark.parametrize(
    "params, message",
    [
        ({"cat_emb_dim": {"town": 2}}, "cat_emb_dim refers to column 'town', which is not a column name"),
        ({"cat_emb_dim": {"age": 2}}, "column 'age', which is numeric; it accepts categorical columns only"),
        ({"cat_emb_dim": {"city": 0}}, "cat_emb_dim\\['city'\\] must be an int >= 1, got 0"),
        ({"cat_emb_dim": {7: 2}}, "column index in \\[0, 4\\)"),
        ({"cat_emb_dim": 0}, "'cat_emb_dim' parameter"),
        ({"grouped_features": [["age", "noise"], ["noise"]]}, "column 'noise' in more than one group"),
        ({"grouped_features": [[]]}, "grouped_features\\[0\\] must be a non-empty list"),
        ({"grouped_features": ["age"]}, "grouped_features\\[0\\] must be a non-empty list"),
        ({"grouped_features": [["age", "height"]]}, "grouped_features refers to column 'height'"),
        ({"grouped_features": "age"}, "'grouped_features' parameter"),
    ],
)
def test_embedding_and_group_errors_name_the_argument(params, message, fast_params, make_people_frame):
    X, y = make_people_frame(50)
    with pytest.raises(ValueError, match=message):
        SparseTabNetClassifier(max_epochs=1, **params, **fast_params).fit(X, y)


def test_grouped_features_share_one_attention_weight(fast_params, make_people_frame):
    X, y = make_people_frame(200)
    model = SparseTabNetClassifier(
        max_epochs=3, grouped_features=[["noise", "age"]], cat_emb_dim=2, entmax_mode="entmax15", **fast_params
    ).fit(X, y)
    assert model.network_.embedding.attention_groups == [[0], [1, 2], [3]]
    explanation = model.explain(X.iloc[:30])
    masks = explanation.step_masks
    np.testing.assert_array_equal(masks[..., 1], masks[..., 2])
    np.testing.assert_allclose(masks.sum(axis=2), 1.0, atol=1e-5)
    # each member holds half of the group's weight in the network's own (group-level) masks
    encoded = model._encode_X(X.iloc[:30])
    with torch.inference_mode():
        group_masks = model.network_.eval().encode(encoded)[1].permute(1, 0, 2).numpy()
    np.testing.assert_allclose(masks[..., 1] + masks[..., 2], group_masks[..., 1], rtol=1e-6)
    np.testing.assert_allclose(masks[..., [0, 3]], group_masks[..., [0, 2]], rtol=1e-6)
    assert model.feature_importances_[1] == pytest.approx(model.feature_importances_[2])
    numpy_groups = SparseTabNetClassifier(max_epochs=1, grouped_features=[[2, -3]], **fast_params).fit(X, y)
    assert numpy_groups.network_.embedding.attention_groups == [[0], [1, 2], [3]]


def test_explain_and_predict_are_batched_with_identical_results(monkeypatch, fast_params, make_people_frame):
    import sparsetab._inference

    X, y = make_people_frame(150)
    model = SparseTabNetClassifier(max_epochs=2, cat_emb_dim=2, grouped_features=[["age", "noise"]], **fast_params).fit(
        X, y
    )
    whole = model.explain(X)
    proba = model.predict_proba(X)
    calls = []
    original = model.network_.encode_steps  # what explain runs on each batch
    monkeypatch.setattr(sparsetab._inference, "INFERENCE_BATCH_ROWS", 40)
    monkeypatch.setattr(model.network_, "encode_steps", lambda x, *rest: calls.append(len(x)) or original(x, *rest))
    batched = model.explain(X)
    assert calls == [40, 40, 40, 30]
    for key in ("step_masks", "importances", "step_importance"):
        np.testing.assert_allclose(batched[key], whole[key], rtol=1e-5, atol=1e-6)  # float32 order, as below
    np.testing.assert_allclose(model.predict_proba(X), proba, atol=1e-6)  # float32 matmul order differs by batch


def test_zero_weight_rows_define_neither_classes_nor_balanced_class_weights(fast_params, make_people_frame):
    X, y = make_people_frame(120)
    y = y.to_numpy().copy()
    y[1] = "maybe"  # a class seen only in a row of weight 0
    weights = np.ones(120)
    weights[1] = 0
    model = SparseTabNetClassifier(max_epochs=2, **fast_params).fit(X, y, sample_weight=weights)
    assert model.classes_.tolist() == ["no", "yes"]
    half = np.arange(120) % 2 == 0
    weighted = SparseTabNetClassifier(max_epochs=3, class_weight="balanced", **fast_params)
    weighted.fit(X, y, sample_weight=half.astype(float))
    subset = SparseTabNetClassifier(max_epochs=3, class_weight="balanced", **fast_params).fit(X[half], y[half])
    np.testing.assert_array_equal(weighted.predict_proba(X), subset.predict_proba(X))


def test_grouped_feature_messages_for_repeats_and_numpy_names(fast_params):
    X, y = make_classification(60, 3, n_informative=2, n_redundant=0, random_state=0)
    with pytest.raises(ValueError, match="grouped_features\\[0\\] lists column '0' more than once"):
        SparseTabNetClassifier(max_epochs=1, grouped_features=[[0, 0]], **fast_params).fit(X, y)
    with pytest.raises(ValueError, match="X has no string column names .* by index in \\[0, 3\\)"):
        SparseTabNetClassifier(max_epochs=1, grouped_features=[["x0", "x1"]], **fast_params).fit(X, y)
