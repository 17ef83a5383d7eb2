"""The helpers the displays share, and what every display does alike through them."""

import subprocess
import sys
from types import SimpleNamespace

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import FunctionTransformer, StandardScaler

import sparsetab
from sparsetab import SparseTabNetClassifier, SparseTabNetRegressor, inspection
from sparsetab.inspection import (
    FeatureImportanceDisplay,
    FeatureMaskDisplay,
    SampleExplanationDisplay,
    StepSummaryDisplay,
    TrainingHistoryDisplay,
)
from sparsetab.inspection._common import (
    check_positive_int,
    explain,
    feature_names,
    format_value,
    group_features,
    is_int,
    labelled_features,
    mode_label,
    n_rows,
    panel_axes,
    pyplot,
    single_axes,
    sized_feature_count,
    take_rows,
    unwrap_estimator,
)

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def _unfitted_pipeline():
    return make_pipeline(StandardScaler(), SparseTabNetRegressor())


# --------------------------------------------------------------------------- the estimator


def test_unwrap_a_bare_model(model):
    assert unwrap_estimator(model) == (model, None)


def test_unwrap_a_pipeline_returns_the_steps_in_front(pipeline_case):
    model, preprocessing = unwrap_estimator(pipeline_case.pipeline)
    assert model is pipeline_case.model
    assert isinstance(preprocessing, Pipeline)
    assert [name for name, _ in preprocessing.steps] == [name for name, _ in pipeline_case.pipeline.steps[:-1]]
    assert_allclose(preprocessing.transform(pipeline_case.X), pipeline_case.transformed)


def test_unwrap_a_single_step_pipeline(model):
    pipeline = Pipeline([("model", model)])
    assert unwrap_estimator(pipeline) == (model, None)


@pytest.mark.parametrize(
    "estimator, got",
    [
        (LogisticRegression(), "got LogisticRegression."),
        (make_pipeline(StandardScaler(), LogisticRegression()), "got a Pipeline ending in LogisticRegression."),
    ],
)
def test_unwrap_rejects_other_estimators(estimator, got):
    with pytest.raises(TypeError, match="^estimator must be a SparseTabNetClassifier") as error:
        unwrap_estimator(estimator)
    assert str(error.value).endswith(got)


@pytest.mark.parametrize("make_estimator", [SparseTabNetClassifier, _unfitted_pipeline])
def test_unwrap_rejects_unfitted_models(make_estimator):
    with pytest.raises(NotFittedError):
        unwrap_estimator(make_estimator())


# --------------------------------------------------------------------------- names, rows, explanations


def test_feature_names_of_a_bare_model(model):
    names = feature_names(model, None)
    assert names.dtype == object
    assert_array_equal(names, ["age", "colour", "height", "weight"])


def test_feature_names_from_the_preprocessing(pipeline_case):
    model, preprocessing = unwrap_estimator(pipeline_case.pipeline)
    assert list(feature_names(model, preprocessing)) == pipeline_case.names


def test_feature_names_fall_back_to_the_models(model, data):
    X, _ = data
    # Without feature_names_out, the Pipeline's get_feature_names_out raises AttributeError.
    silent = make_pipeline(FunctionTransformer()).fit(X)
    assert list(feature_names(model, silent)) == ["age", "colour", "height", "weight"]
    # One name too few for the model's inputs: not the model's columns.
    renaming = make_pipeline(FunctionTransformer(feature_names_out=lambda _, names: names[:-1])).fit(X)
    assert list(feature_names(model, renaming)) == ["age", "colour", "height", "weight"]


def test_n_rows_and_take_rows(data):
    X, _ = data
    assert n_rows(X) == n_rows(X.to_numpy()) == n_rows(X.to_numpy().tolist()) == 160
    taken = take_rows(X, [3, 1])
    assert isinstance(taken, pd.DataFrame)
    assert list(taken.index) == [3, 1]
    assert_array_equal(take_rows(X[["age"]].to_numpy().tolist(), [2]), X[["age"]].to_numpy()[[2]])


def test_explain_goes_through_the_preprocessing(pipeline_case):
    model, preprocessing = unwrap_estimator(pipeline_case.pipeline)
    explanation = explain(model, preprocessing, pipeline_case.X.iloc[:5])
    assert_allclose(explanation.importances, model.explain(pipeline_case.transformed[:5]).importances)


def test_group_features_sums_the_last_axis():
    masks = np.array([[[0.1, 0.2, 0.3, 0.4]], [[0.0, 0.5, 0.5, 0.0]]])  # (2 rows, 1 step, 4 features)
    importances = masks[:, 0]
    names, (grouped_masks, grouped_importances), members = group_features(
        ["a", "b", "c", "d"], {"bd": ["d", 1]}, masks, importances
    )
    assert list(names) == ["a", "bd", "c"]
    assert [member.tolist() for member in members] == [[0], [1, 3], [2]]
    assert_allclose(grouped_masks, [[[0.1, 0.6, 0.3]], [[0.0, 0.5, 0.5]]])
    assert_allclose(grouped_importances, [[0.1, 0.6, 0.3], [0.0, 0.5, 0.5]])
    same_names, (same,), same_members = group_features(np.array(["a", "b"]), None, importances[:, :2])
    assert same_names.dtype == object and list(same_names) == ["a", "b"]
    assert_allclose(same, importances[:, :2])
    assert [member.tolist() for member in same_members] == [[0], [1]]
    with pytest.raises(ValueError, match=r"groups\['bd'\] names column 'e'"):
        group_features(["a", "b"], {"bd": ["e"]})


@pytest.mark.parametrize(
    "value, text",
    [
        (39, "39"),
        (np.int64(-2), "-2"),
        (0.21428571, "0.2143"),
        (np.float32(1234567.0), "1.235e+06"),
        ("Married", "Married"),
        (True, "True"),
        (None, "missing"),
        (np.nan, "missing"),
        (pd.NA, "missing"),
    ],
)
def test_format_value(value, text):
    assert format_value(value) == text


def test_mode_label():
    assert mode_label(SimpleNamespace(entmax_mode="sparsemax")) == "sparsemax"
    assert mode_label(SimpleNamespace(entmax_mode="sparsemax"), step=1) == "sparsemax"
    constant = SimpleNamespace(entmax_mode="constant", entmax_alpha=1.3)
    assert mode_label(constant) == mode_label(constant, step=0) == "constant, alpha=1.3"
    adaptive = SimpleNamespace(entmax_mode="adaptive", entmax_alphas_=np.array([1.5, 1.234]))
    assert mode_label(adaptive) == "adaptive"
    assert mode_label(adaptive, step=1) == "adaptive, alpha=1.23"


# --------------------------------------------------------------------------- argument checks


@pytest.mark.parametrize(
    "value, expected",
    [(3, True), (np.int64(0), True), (-1, True), (True, False), (np.True_, False), (1.0, False), ("1", False)],
)
def test_is_int(value, expected):
    assert is_int(value) is expected


def test_check_positive_int():
    assert check_positive_int(None, "top_k") is None
    assert check_positive_int(np.int32(4), "top_k") == 4
    assert type(check_positive_int(np.int32(4), "top_k")) is int
    for value in [0, -2, 1.0, True, "3"]:
        with pytest.raises(ValueError, match=r"^top_k must be None or an int >= 1, got "):
            check_positive_int(value, "top_k")


# --------------------------------------------------------------------------- axes


def test_pyplot_is_matplotlibs():
    assert pyplot("test") is plt


def test_panel_axes_makes_a_row_of_panels():
    figure, axes = panel_axes(None, 3, "test", figsize=(6.0, 2.0), sharey=True)
    assert axes.shape == (3,)
    assert list(figure.axes) == list(axes)
    assert_allclose(figure.get_size_inches(), [6.0, 2.0])
    assert axes[1].get_shared_y_axes().joined(axes[0], axes[1])


def test_panel_axes_takes_given_axes_in_any_shape():
    figure, axes = plt.subplots(2, 2)
    got_figure, got_axes = panel_axes(axes, 4, "test")
    assert got_figure is figure
    assert list(got_axes) == list(axes.ravel())
    single_figure, single = plt.subplots()
    assert panel_axes(single, 1, "test")[0] is single_figure
    with pytest.raises(ValueError, match=r"^ax must hold 3 Axes for this display \(one per panel\), got 4\."):
        panel_axes(axes, 3, "test")


def test_single_axes():
    figure, ax = single_axes(None, "test", figsize=(5.0, 4.0))
    assert figure.axes == [ax]
    assert_allclose(figure.get_size_inches(), [5.0, 4.0])
    other_figure, other_ax = plt.subplots()
    assert single_axes(other_ax, "test", figsize=(1.0, 1.0)) == (other_figure, other_ax)
    assert_allclose(other_figure.get_size_inches(), plt.rcParams["figure.figsize"])


@pytest.mark.parametrize(
    "n_features, expected",
    [(0, []), (1, [0]), (60, list(range(60))), (61, list(range(0, 61, 2))), (150, list(range(0, 150, 3)))],
)
def test_labelled_features_are_every_kth_beyond_60(n_features, expected):
    assert labelled_features(n_features).tolist() == expected
    assert labelled_features(n_features, new_figure=False).tolist() == list(range(n_features))
    assert sized_feature_count(n_features) == min(n_features, 60)


# 150 features: every 3rd gets a label (ceil(150 / 60) = 3), and a new figure is sized as for 60. The features are
# given in falling importance, so the displays that sort keep their order.
MANY = 150
MANY_NAMES = [f"f{i}" for i in range(MANY)]
FALLING = np.linspace(1.0, 0.1, MANY)
LABELLED = MANY_NAMES[::3]


@pytest.mark.parametrize(
    "make, size, labels_of",
    [
        (  # two steps and the aggregate: 3 panels of 0.24 * 60 + 1 = 15.4 inches, + 1; 5 rows: height 3
            lambda: FeatureMaskDisplay(np.full((5, 2, MANY), 1 / MANY), np.tile(FALLING, (5, 1)), MANY_NAMES),
            (47.2, 3.0),
            lambda axis: axis.get_xticklabels(),
        ),
        (
            lambda: FeatureImportanceDisplay(FALLING, MANY_NAMES),
            (6.0, 0.3 * 60 + 1.5),
            lambda axis: axis.get_yticklabels(),
        ),
        (  # three series side by side: 0.22 * 60 * sqrt(3) + 2 wide; labels of 4 characters: height 4
            lambda: SampleExplanationDisplay(np.full((2, MANY), 1 / MANY), MANY_NAMES, importances=FALLING),
            (0.22 * 60 * 3**0.5 + 2, 4.0),
            lambda axis: axis.get_xticklabels(),
        ),
        (  # two steps and the aggregate: 0.45 * 60 + 2.5 wide, 0.42 * 3 + 1.9 high
            lambda: StepSummaryDisplay(np.full((2, MANY), 1 / MANY), MANY_NAMES, importances=FALLING),
            (29.5, 3.16),
            lambda axis: axis.get_xticklabels(),
        ),
    ],
    ids=["FeatureMaskDisplay", "FeatureImportanceDisplay", "SampleExplanationDisplay", "StepSummaryDisplay"],
)
def test_a_display_of_many_features_labels_every_kth_and_sizes_its_figure_for_60(make, size, labels_of, tick_texts):
    display = make().plot()
    assert_allclose(display.figure_.get_size_inches(), size)
    assert tick_texts(labels_of(display.ax_)) == LABELLED
    # On Axes the user sized, every feature keeps its label.
    n_panels = len(display.axes_) if hasattr(display, "axes_") else 1
    _, axes = plt.subplots(1, n_panels, squeeze=False)
    on_own_axes = make().plot(ax=axes.ravel() if n_panels > 1 else axes[0, 0])
    assert tick_texts(labels_of(on_own_axes.ax_)) == MANY_NAMES


def test_a_step_summary_of_many_features_writes_no_values_in_cells_too_narrow_for_them():
    display = StepSummaryDisplay(np.full((2, MANY), 1 / MANY), MANY_NAMES, importances=FALLING)
    assert display.plot().texts_ is None
    on_own_axes = display.plot(ax=plt.subplots(figsize=(60.0, 3.0))[1])
    assert on_own_axes.texts_.shape == (3, MANY)
    assert on_own_axes.texts_[2, 0].get_text() == "1.00"  # the first feature's aggregate importance
    sixty = StepSummaryDisplay(np.full((2, 60), 1 / 60), MANY_NAMES[:60], importances=FALLING[:60]).plot()
    assert sixty.texts_.shape == (3, 60)


# --------------------------------------------------------------------------- every display


def _draw_all(estimator, X):
    return [
        FeatureMaskDisplay.from_estimator(estimator, X, max_samples=5),
        FeatureImportanceDisplay.from_estimator(estimator, X),
        FeatureImportanceDisplay.from_estimator(estimator),
        TrainingHistoryDisplay.from_estimator(estimator),
        SampleExplanationDisplay.from_estimator(estimator, X, 0),
        StepSummaryDisplay.from_estimator(estimator, X),
    ]


@pytest.mark.parametrize("make_estimator", [SparseTabNetClassifier, _unfitted_pipeline])
def test_unfitted_estimators_raise_not_fitted(data, make_estimator):
    X, _ = data
    estimator = make_estimator()
    with pytest.raises(NotFittedError):
        FeatureMaskDisplay.from_estimator(estimator, X)
    with pytest.raises(NotFittedError):
        FeatureImportanceDisplay.from_estimator(estimator)
    with pytest.raises(NotFittedError):
        TrainingHistoryDisplay.from_estimator(estimator)
    with pytest.raises(NotFittedError):
        SampleExplanationDisplay.from_estimator(estimator, X, 0)
    with pytest.raises(NotFittedError):
        StepSummaryDisplay.from_estimator(estimator, X)


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
        with pytest.raises(TypeError, match="SparseTabNetClassifier"):
            StepSummaryDisplay.from_estimator(estimator, numeric)


def test_displays_leave_the_estimator_and_pyplot_state_alone(model, data):
    X, _ = data
    before = model.explain(X.iloc[:3]).importances
    displays = _draw_all(model, X)
    assert len({id(display.figure_) for display in displays}) == len(displays)
    assert_allclose(model.explain(X.iloc[:3]).importances, before)
    assert matplotlib.get_backend().lower() == "agg"


def test_import_does_not_load_matplotlib():
    code = "import sys, sparsetab, sparsetab.inspection; print('matplotlib' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_package_namespace_matches_the_top_level():
    assert inspection.__all__ == [
        "FeatureImportanceDisplay",
        "FeatureMaskDisplay",
        "SampleExplanationDisplay",
        "StepSummaryDisplay",
        "TrainingHistoryDisplay",
        "feature_groups_from_transformer",
    ]
    for name in inspection.__all__:
        assert getattr(sparsetab, name) is getattr(inspection, name)


def test_every_display_draws_an_ensemble(data, tiny):
    # The displays read explain(), which for n_ensemble > 1 gives the members' means, and the history
    # attributes, which describe member 0.
    X, y = data
    ensemble = SparseTabNetClassifier(**tiny, n_ensemble=2).fit(X, y)
    explanation = ensemble.explain(X.iloc[:10])
    mask = FeatureMaskDisplay.from_estimator(ensemble, X, max_samples=10)
    assert_allclose(mask.im_.get_array(), explanation.importances)
    for step in range(ensemble.n_steps):
        assert_allclose(mask.ims_[step].get_array(), explanation.step_masks[:, step])
    FeatureImportanceDisplay.from_estimator(ensemble, X, error_bars=True)
    SampleExplanationDisplay.from_estimator(ensemble, X, index=0)
    summary = StepSummaryDisplay.from_estimator(ensemble, X.iloc[:10])
    assert_allclose(summary.im_.get_array()[-1], explanation.importances.mean(axis=0)[summary.order_], rtol=1e-6)
    history = TrainingHistoryDisplay.from_estimator(ensemble)
    assert_array_equal(history.loss_curve, ensemble.loss_curve_)
