import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from numpy.testing import assert_allclose, assert_array_equal  # noqa: E402
from sklearn.compose import ColumnTransformer  # noqa: E402
from sklearn.exceptions import NotFittedError  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

from sparsetab import (  # noqa: E402
    FeatureImportanceDisplay,
    FeatureMaskDisplay,
    SampleExplanationDisplay,
    SparseTabNetClassifier,
    SparseTabNetRegressor,
    TrainingHistoryDisplay,
)

TINY = dict(n_d=4, n_a=4, n_steps=2, batch_size=64, virtual_batch_size=32, max_epochs=4, random_state=0)
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(
        {
            "age": rng.normal(size=160),
            "colour": rng.choice(["red", "green", "blue"], size=160),
            "height": rng.normal(size=160),
            "weight": rng.normal(size=160),
        }
    )
    y = (X["age"] + (X["colour"] == "red") > 0.3).astype(int)
    return X, y


@pytest.fixture(scope="module")
def model(data):
    X, y = data
    return SparseTabNetClassifier(**TINY).fit(X, y)


@pytest.fixture(scope="module")
def adaptive_model(data):
    X, y = data
    return SparseTabNetClassifier(
        entmax_mode="adaptive", early_stopping=True, validation_fraction=0.25, n_iter_no_change=2, **TINY
    ).fit(X, y)


def _tick_texts(labels):
    return [label.get_text() for label in labels]


# --------------------------------------------------------------------------- FeatureMaskDisplay


def test_mask_display_images_equal_explained_masks(model, data):
    X, _ = data
    display = FeatureMaskDisplay.from_estimator(model, X, max_samples=10)
    explanation = model.explain(X.iloc[:10])
    assert len(display.ims_) == model.n_steps + 1
    for step in range(model.n_steps):
        assert_allclose(display.ims_[step].get_array(), explanation.step_masks[:, step])
    assert_allclose(display.im_.get_array(), explanation.importances)
    assert_array_equal(display.sample_indices_, np.arange(10))


def test_mask_display_ticks_titles_and_shared_colour_scale(model, data):
    X, _ = data
    display = FeatureMaskDisplay.from_estimator(model, X, max_samples=8)
    for ax in display.axes_:
        assert _tick_texts(ax.get_xticklabels()) == ["age", "colour", "height", "weight"]
        assert_array_equal(ax.get_xticks(), np.arange(4))
    assert [ax.get_title() for ax in display.axes_] == [
        "step 1 mask (sparsemax)",
        "step 2 mask (sparsemax)",
        "aggregate mask (sparsemax)",
    ]
    limits = {im.get_clim() for im in display.ims_}
    assert len(limits) == 1
    assert limits.pop()[0] == 0.0
    assert display.colorbar_ is not None
    assert len(display.figure_.axes) == len(display.axes_) + 1  # one colour bar


def test_mask_display_selected_steps_without_aggregate_or_colorbar(model, data):
    X, _ = data
    display = FeatureMaskDisplay.from_estimator(model, X, steps=[1], aggregate=False, colorbar=False)
    assert [ax.get_title() for ax in display.axes_] == ["step 2 mask (sparsemax)"]
    assert_allclose(display.im_.get_array(), model.explain(X.iloc[:50]).step_masks[:, 1])
    assert display.colorbar_ is None


def test_mask_display_sorts_features_and_samples(model, data):
    X, _ = data
    display = FeatureMaskDisplay.from_estimator(model, X, max_samples=30, sort_features=True, sort_samples_by="height")
    explanation = model.explain(X.iloc[:30])
    order = np.argsort(-explanation.importances.mean(axis=0), kind="stable")
    assert _tick_texts(display.ax_.get_xticklabels()) == list(explanation.feature_names[order])
    rows = np.argsort(X["height"].to_numpy()[:30], kind="stable")
    assert_array_equal(display.sample_indices_, rows)
    assert np.all(np.diff(X["height"].to_numpy()[display.sample_indices_]) >= 0)
    # float32 masks of the same rows computed in another batch: equal up to summation order
    assert_allclose(display.im_.get_array(), explanation.importances[rows][:, order], rtol=1e-5, atol=1e-6)
    assert display.ax_.get_ylabel() == "sample, sorted by height"


def test_mask_display_draws_on_given_axes(model, data):
    X, _ = data
    figure, axes = plt.subplots(1, 3)
    display = FeatureMaskDisplay.from_estimator(model, X, max_samples=5, ax=axes)
    assert display.figure_ is figure
    assert list(display.axes_) == list(axes)
    with pytest.raises(ValueError, match="ax must hold 3 Axes"):
        FeatureMaskDisplay.from_estimator(model, X, ax=axes[:2])


def test_mask_display_from_arrays():
    masks = np.array([[[0.2, 0.8], [1.0, 0.0]]])
    display = FeatureMaskDisplay(masks, None, ["a", "b"], entmax_mode="entmax15").plot()
    assert [ax.get_title() for ax in display.axes_] == ["step 1 mask (entmax15)", "step 2 mask (entmax15)"]
    assert_allclose(display.ims_[1].get_array(), [[1.0, 0.0]])


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(steps=[2]), "steps must be"),
        (dict(steps=[]), "steps must be"),
        (dict(steps="first"), "steps must be"),
        (dict(max_samples=0), "max_samples must be"),
        (dict(max_samples=True), "max_samples must be"),
        (dict(sort_samples_by="missing"), "sort_samples_by must be a column of X"),
    ],
)
def test_mask_display_rejects_bad_arguments(model, data, kwargs, match):
    X, _ = data
    with pytest.raises(ValueError, match=match):
        FeatureMaskDisplay.from_estimator(model, X, **kwargs)


def test_mask_display_sort_by_position_on_arrays():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(100, 3))
    y = (X[:, 0] > 0).astype(int)
    model = SparseTabNetClassifier(**TINY).fit(X, y)
    display = FeatureMaskDisplay.from_estimator(model, X, max_samples=12, sort_samples_by=2)
    assert_array_equal(display.sample_indices_, np.argsort(X[:12, 2], kind="stable"))
    assert _tick_texts(display.ax_.get_xticklabels()) == ["x0", "x1", "x2"]
    with pytest.raises(ValueError, match="sort_samples_by must be a column position"):
        FeatureMaskDisplay.from_estimator(model, X, sort_samples_by=3)


# --------------------------------------------------------------------------- FeatureImportanceDisplay


def test_importance_display_bar_order_follows_training_importances(model):
    display = FeatureImportanceDisplay.from_estimator(model)
    importances = model.feature_importances_
    order = np.argsort(-importances, kind="stable")
    assert_array_equal(display.order_, order)
    assert_allclose([bar.get_width() for bar in display.bars_], importances[order])
    widths = [bar.get_width() for bar in display.bars_]
    assert widths == sorted(widths, reverse=True)
    assert _tick_texts(display.ax_.get_yticklabels()) == list(model.feature_names_in_[order])
    assert display.ax_.yaxis_inverted()  # the most important bar is on top


def test_importance_display_on_X_with_top_k_and_error_bars(model, data):
    X, _ = data
    display = FeatureImportanceDisplay.from_estimator(model, X, top_k=2, error_bars=True)
    importances = model.explain(X).importances.astype(np.float64)
    mean = importances.mean(axis=0)
    order = np.argsort(-mean, kind="stable")[:2]
    assert len(display.bars_) == 2
    assert_allclose([bar.get_width() for bar in display.bars_], mean[order], rtol=1e-6)
    assert display.bars_.errorbar is not None
    segments = display.bars_.errorbar.lines[2][0].get_segments()
    std = importances.std(axis=0)[order]
    assert_allclose([segment[0, 0] for segment in segments], np.maximum(mean[order] - std, 0.0), atol=1e-6)
    assert_allclose([segment[1, 0] for segment in segments], mean[order] + std, rtol=1e-6)


@pytest.mark.parametrize(
    "kwargs, match",
    [(dict(top_k=0), "top_k must be"), (dict(top_k=1.5), "top_k must be"), (dict(error_bars=True), "needs X")],
)
def test_importance_display_rejects_bad_arguments(model, kwargs, match):
    with pytest.raises(ValueError, match=match):
        FeatureImportanceDisplay.from_estimator(model, **kwargs)


# --------------------------------------------------------------------------- TrainingHistoryDisplay


def test_history_display_without_validation(model):
    display = TrainingHistoryDisplay.from_estimator(model)
    assert len(display.axes_) == 1
    assert_allclose(display.loss_line_.get_ydata(), model.loss_curve_)
    assert_array_equal(display.loss_line_.get_xdata(), np.arange(1, model.n_iter_ + 1))
    assert display.validation_line_ is None
    assert display.best_iteration_lines_ == []
    assert display.alpha_lines_ == []


def test_history_display_marks_best_epoch_and_plots_alphas(adaptive_model):
    model = adaptive_model
    assert model.best_iteration_ is not None
    display = TrainingHistoryDisplay.from_estimator(model)
    assert len(display.axes_) == 3
    assert_allclose(display.validation_line_.get_ydata(), model.validation_scores_)
    assert len(display.best_iteration_lines_) == 3
    for line in display.best_iteration_lines_:
        assert_array_equal(line.get_xdata(), [model.best_iteration_ + 1] * 2)
    assert len(display.alpha_lines_) == model.n_steps
    for step, line in enumerate(display.alpha_lines_):
        assert_allclose(line.get_ydata(), model.entmax_alpha_history_[:, step])
        assert line.get_label() == f"step {step + 1}"
    assert display.axes_[2].get_ylabel() == "alpha"


def test_history_display_ax_count(model):
    _, axes = plt.subplots(1, 2)
    with pytest.raises(ValueError, match="ax must hold 1 Axes"):
        TrainingHistoryDisplay.from_estimator(model, ax=axes)


# --------------------------------------------------------------------------- SampleExplanationDisplay


def test_sample_display_bars_equal_one_rows_masks(model, data):
    X, _ = data
    display = SampleExplanationDisplay.from_estimator(model, X, 7)
    explanation = model.explain(X.iloc[[7]])
    assert len(display.bars_) == model.n_steps
    for step, bars in enumerate(display.bars_):
        assert_allclose([bar.get_height() for bar in bars], explanation.step_masks[0, step])
    assert_allclose([bar.get_height() for bar in display.aggregate_bars_], explanation.importances[0])
    assert _tick_texts(display.ax_.get_xticklabels()) == ["age", "colour", "height", "weight"]
    assert display.ax_.get_title() == "row 7 (sparsemax)"
    negative = SampleExplanationDisplay.from_estimator(model, X, -len(X) + 7, aggregate=False)
    assert negative.aggregate_bars_ is None
    assert_allclose([bar.get_height() for bar in negative.bars_[0]], explanation.step_masks[0, 0])


@pytest.mark.parametrize("index", [160, -161, 1.0, True, "0"])
def test_sample_display_rejects_bad_index(model, data, index):
    X, _ = data
    with pytest.raises(ValueError, match="index must be an int"):
        SampleExplanationDisplay.from_estimator(model, X, index)


# --------------------------------------------------------------------------- all displays


def _draw_all(estimator, X):
    return [
        FeatureMaskDisplay.from_estimator(estimator, X, max_samples=5),
        FeatureImportanceDisplay.from_estimator(estimator, X),
        FeatureImportanceDisplay.from_estimator(estimator),
        TrainingHistoryDisplay.from_estimator(estimator),
        SampleExplanationDisplay.from_estimator(estimator, X, 0),
    ]


def test_pipeline_support_uses_transformed_X_and_feature_names():
    rng = np.random.default_rng(2)
    X = pd.DataFrame({"a": rng.normal(size=120) * 10, "b": rng.normal(size=120), "c": rng.normal(size=120)})
    y = X["a"] + X["b"]
    pipeline = make_pipeline(
        ColumnTransformer([("scale", StandardScaler(), ["a", "b"])], remainder="passthrough"),
        SparseTabNetRegressor(**TINY),
    ).fit(X, y)
    names = ["scale__a", "scale__b", "remainder__c"]
    model = pipeline[-1]
    transformed = pipeline[:-1].transform(X)

    mask = FeatureMaskDisplay.from_estimator(pipeline, X, max_samples=6)
    assert _tick_texts(mask.ax_.get_xticklabels()) == names
    assert_allclose(mask.im_.get_array(), model.explain(transformed[:6]).importances)

    importance = FeatureImportanceDisplay.from_estimator(pipeline)
    assert _tick_texts(importance.ax_.get_yticklabels()) == [names[i] for i in importance.order_]

    sample = SampleExplanationDisplay.from_estimator(pipeline, X, 3)
    assert_allclose([bar.get_height() for bar in sample.bars_[1]], model.explain(transformed[[3]]).step_masks[0, 1])
    assert _tick_texts(sample.ax_.get_xticklabels()) == names

    history = TrainingHistoryDisplay.from_estimator(pipeline)
    assert_allclose(history.loss_line_.get_ydata(), model.loss_curve_)


def test_single_step_pipeline(model, data):
    X, y = data
    pipeline = make_pipeline(SparseTabNetClassifier(**TINY)).fit(X, y)
    display = FeatureMaskDisplay.from_estimator(pipeline, X, max_samples=4)
    assert _tick_texts(display.ax_.get_xticklabels()) == ["age", "colour", "height", "weight"]


def test_unfitted_estimators_raise_not_fitted(data):
    X, _ = data
    for estimator in [SparseTabNetClassifier(), make_pipeline(StandardScaler(), SparseTabNetRegressor())]:
        with pytest.raises(NotFittedError):
            FeatureMaskDisplay.from_estimator(estimator, X)
        with pytest.raises(NotFittedError):
            FeatureImportanceDisplay.from_estimator(estimator)
        with pytest.raises(NotFittedError):
            TrainingHistoryDisplay.from_estimator(estimator)
        with pytest.raises(NotFittedError):
            SampleExplanationDisplay.from_estimator(estimator, X, 0)


def test_other_estimators_raise_type_error(data):
    X, y = data
    numeric = X[["age", "height"]]
    for estimator in [LogisticRegression().fit(numeric, y), make_pipeline(StandardScaler(), LogisticRegression())]:
        with pytest.raises(TypeError, match="SparseTabNetClassifier"):
            FeatureMaskDisplay.from_estimator(estimator, numeric)
        with pytest.raises(TypeError, match="SparseTabNetClassifier"):
            FeatureImportanceDisplay.from_estimator(estimator)
        with pytest.raises(TypeError, match="SparseTabNetClassifier"):
            TrainingHistoryDisplay.from_estimator(estimator)
        with pytest.raises(TypeError, match="SparseTabNetClassifier"):
            SampleExplanationDisplay.from_estimator(estimator, numeric, 0)


def test_displays_leave_the_estimator_and_pyplot_state_alone(model, data):
    X, _ = data
    before = model.explain(X.iloc[:3]).importances
    displays = _draw_all(model, X)
    assert len({id(display.figure_) for display in displays}) == len(displays)
    assert_allclose(model.explain(X.iloc[:3]).importances, before)
    assert matplotlib.get_backend().lower() == "agg"


def test_import_does_not_load_matplotlib():
    import subprocess
    import sys

    code = "import sys, sparsetab, sparsetab.inspection; print('matplotlib' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"
