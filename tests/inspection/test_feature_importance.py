import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.colors import to_rgba
from numpy.testing import assert_allclose, assert_array_equal

from sparsetab.inspection import FeatureImportanceDisplay

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def _widths(bars):
    return [bar.get_width() for bar in bars]


def test_bar_order_follows_training_importances(model, tick_texts):
    display = FeatureImportanceDisplay.from_estimator(model)
    importances = model.feature_importances_
    order = np.argsort(-importances, kind="stable")
    assert_array_equal(display.order_, order)
    assert_allclose(_widths(display.bars_), importances[order])
    widths = _widths(display.bars_)
    assert widths == sorted(widths, reverse=True)
    assert tick_texts(display.ax_.get_yticklabels()) == list(model.feature_names_in_[order])
    assert display.ax_.yaxis_inverted()  # the most important bar is on top
    assert display.ax_.get_title() == "feature importance (training rows)"
    assert display.bars_.errorbar is None
    assert display.error_label_ is None and display.ax_.get_xlabel() == "importance"


def test_on_X_with_top_k_and_error_bars(model, data):
    X, _ = data
    display = FeatureImportanceDisplay.from_estimator(model, X, top_k=2, error_bars=True, color="C3")
    importances = model.explain(X).importances.astype(np.float64)
    mean = importances.mean(axis=0)
    order = np.argsort(-mean, kind="stable")[:2]
    assert len(display.bars_) == 2
    assert_array_equal(display.order_, order)
    assert_allclose(_widths(display.bars_), mean[order], rtol=1e-6)
    assert display.bars_.errorbar is not None
    segments = display.bars_.errorbar.lines[2][0].get_segments()
    std = importances.std(axis=0)[order]
    assert_allclose([segment[0, 0] for segment in segments], np.maximum(mean[order] - std, 0.0), atol=1e-6)
    assert_allclose([segment[1, 0] for segment in segments], mean[order] + std, rtol=1e-6)
    assert display.ax_.get_title() == f"feature importance ({len(X)} rows)"
    assert {bar.get_facecolor() for bar in display.bars_} == {to_rgba("C3")}
    assert display.error_label_ == "error bars: standard deviation over the 160 rows"
    assert display.ax_.get_xlabel() == "importance\nerror bars: standard deviation over the 160 rows"
    assert FeatureImportanceDisplay.from_estimator(model, X, error_bars="std").error_label_ == display.error_label_


def test_standard_error_of_the_mean(model, data):
    X, _ = data
    display = FeatureImportanceDisplay.from_estimator(model, X.iloc[:40], error_bars="sem")
    importances = model.explain(X.iloc[:40]).importances.astype(np.float64)
    mean = importances.mean(axis=0)[display.order_]
    sem = np.sqrt(((importances - importances.mean(axis=0)) ** 2).sum(axis=0) / 39 / 40)[display.order_]
    segments = display.bars_.errorbar.lines[2][0].get_segments()
    assert_allclose([segment[1, 0] for segment in segments], mean + sem, rtol=1e-6)
    assert_allclose([segment[0, 0] for segment in segments], np.maximum(mean - sem, 0.0), atol=1e-7)
    assert display.error_label_ == "error bars: standard error of the mean (40 rows)"
    assert display.ax_.get_xlabel() == "importance\nerror bars: standard error of the mean (40 rows)"
    with pytest.raises(ValueError, match="error_bars='sem' needs at least 2 rows in X, got 1"):
        FeatureImportanceDisplay.from_estimator(model, X.iloc[:1], error_bars="sem")


def test_groups_sum_importances(model, data, tick_texts):
    X, _ = data
    groups = {"body": ["height", "weight"]}
    trained = FeatureImportanceDisplay.from_estimator(model, groups=groups)
    expected = model.feature_importances_
    expected = np.array([expected[0], expected[1], expected[2] + expected[3]])
    assert_allclose(sorted(_widths(trained.bars_), reverse=True), sorted(expected, reverse=True), rtol=1e-6)
    assert tick_texts(trained.ax_.get_yticklabels()) == [["age", "colour", "body"][i] for i in trained.order_]
    on_X = FeatureImportanceDisplay.from_estimator(model, X, groups=groups, error_bars=True)
    rows = model.explain(X).importances.astype(np.float64)
    rows = np.column_stack([rows[:, 0], rows[:, 1], rows[:, 2] + rows[:, 3]])
    assert_allclose(_widths(on_X.bars_), rows.mean(axis=0)[on_X.order_], rtol=1e-6)
    segments = on_X.bars_.errorbar.lines[2][0].get_segments()
    assert_allclose([s[1, 0] for s in segments], (rows.mean(axis=0) + rows.std(axis=0))[on_X.order_], rtol=1e-6)


def test_from_arrays_clips_lower_error_bar_at_zero(tick_texts):
    display = FeatureImportanceDisplay(
        np.array([0.1, 0.5, 0.4]), ["a", "b", "c"], std=np.array([0.3, 0.1, 0.0]), title="t"
    ).plot(top_k=5)
    assert display.error_label_ == "error bars: standard deviation"
    labelled = FeatureImportanceDisplay([0.1, 0.9], ["a", "b"], std=[0.1, 0.1], error_label="5th-95th pct").plot()
    assert labelled.ax_.get_xlabel() == "importance\n5th-95th pct"
    assert_array_equal(display.order_, [1, 2, 0])
    assert tick_texts(display.ax_.get_yticklabels()) == ["b", "c", "a"]
    segments = display.bars_.errorbar.lines[2][0].get_segments()
    assert_allclose([segment[0, 0] for segment in segments], [0.4, 0.4, 0.0])
    assert_allclose([segment[1, 0] for segment in segments], [0.6, 0.4, 0.4])
    assert display.ax_.get_title() == "t"


def test_draws_on_given_axes(model):
    figure, ax = plt.subplots()
    display = FeatureImportanceDisplay.from_estimator(model, ax=ax)
    assert display.figure_ is figure
    assert display.ax_ is ax
    assert len(ax.patches) == model.n_features_in_


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(top_k=0), "top_k must be"),
        (dict(top_k=1.5), "top_k must be"),
        (dict(top_k=True), "top_k must be"),
        (dict(error_bars=True), "error_bars=True needs X"),
        (dict(error_bars="sem"), "error_bars='sem' needs X"),
        (dict(error_bars="spread"), r"error_bars must be True, False, 'std' or 'sem', got 'spread'"),
        (dict(error_bars=1), r"error_bars must be True, False, 'std' or 'sem', got 1"),
        (dict(groups={"g": ["nope"]}), r"groups\['g'\] names column 'nope'"),
    ],
)
def test_rejects_bad_arguments(model, kwargs, match):
    with pytest.raises(ValueError, match=match):
        FeatureImportanceDisplay.from_estimator(model, **kwargs)


def test_plot_rejects_importances_not_1d():
    with pytest.raises(ValueError, match="importances must be 1-D"):
        FeatureImportanceDisplay(np.ones((2, 2)), ["a", "b"]).plot()


@pytest.mark.parametrize(
    "importances, names, std, match",
    [
        ([0.5, 0.5], ["a"], None, r"^feature_names must hold one name per feature of importances \(2\), got 1"),
        ([0.5, np.nan], ["a", "b"], None, r"^importances must be finite, got 1 NaN or infinite value\(s\)\."),
        ([0.5, 0.5], ["a", "b"], [0.1, -0.1], r"^std must be >= 0, got -0\.1"),
        ([0.5, 0.5], ["a", "b"], [0.1], r"^std must have the shape of importances \(2,\), got shape \(1,\)\."),
    ],
)
def test_plot_rejects_names_and_values_it_cannot_draw(importances, names, std, match):
    # These failed in matplotlib (an IndexError, "'xerr' must not contain negative values") or drew NaN silently.
    with pytest.raises(ValueError, match=match):
        FeatureImportanceDisplay(np.array(importances), names, std=std).plot()


def test_pipeline_feature_names(pipeline_case, tick_texts):
    case = pipeline_case
    display = FeatureImportanceDisplay.from_estimator(case.pipeline)
    assert tick_texts(display.ax_.get_yticklabels()) == [case.names[i] for i in display.order_]
    assert_allclose(_widths(display.bars_), case.model.feature_importances_[display.order_])
    on_X = FeatureImportanceDisplay.from_estimator(case.pipeline, case.X)
    expected = case.model.explain(case.transformed).importances.astype(np.float64).mean(axis=0)
    assert_allclose(_widths(on_X.bars_), expected[on_X.order_], rtol=1e-6)


def test_the_most_important_bar_stays_on_top_when_drawn_again_or_on_inverted_axes(tick_texts):
    display = FeatureImportanceDisplay(np.array([0.1, 0.5, 0.3]), ["a", "b", "c"]).plot()
    display.plot(ax=display.ax_)  # a second draw on the same Axes used to flip the axis back
    assert display.ax_.yaxis_inverted()
    _, ax = plt.subplots()
    ax.invert_yaxis()
    assert FeatureImportanceDisplay(np.array([0.1, 0.5, 0.3]), ["a", "b", "c"]).plot(ax=ax).ax_.yaxis_inverted()
    assert tick_texts(ax.get_yticklabels()) == ["b", "c", "a"]
