import matplotlib.pyplot as plt
import numpy as np
import pytest
from numpy.testing import assert_allclose

from sparsetab.inspection import SampleExplanationDisplay

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def _heights(bars):
    return [bar.get_height() for bar in bars]


def test_bars_equal_one_rows_masks(model, data, tick_texts):
    X, _ = data
    display = SampleExplanationDisplay.from_estimator(model, X, 7)
    explanation = model.explain(X.iloc[[7]])
    assert len(display.bars_) == model.n_steps
    for step, bars in enumerate(display.bars_):
        assert_allclose(_heights(bars), explanation.step_masks[0, step])
    assert_allclose(_heights(display.aggregate_bars_), explanation.importances[0])
    assert tick_texts(display.ax_.get_xticklabels()) == ["age", "colour", "height", "weight"]
    assert display.ax_.get_title() == "row 7 (entmax15)"
    legend = [text.get_text() for text in display.ax_.get_legend().get_texts()]
    etas = explanation.step_importance[0]
    assert legend == [f"step {step + 1} (eta={float(etas[step]):.2f})" for step in range(model.n_steps)] + [
        "aggregate"
    ]
    negative = SampleExplanationDisplay.from_estimator(model, X, -len(X) + 7, aggregate=False)
    assert negative.aggregate_bars_ is None
    assert_allclose(_heights(negative.bars_[0]), explanation.step_masks[0, 0])
    assert negative.ax_.get_title() == "row 7 (entmax15)"


def test_from_arrays_groups_bars_around_ticks(tick_texts):
    masks = np.array([[0.25, 0.75, 0.0], [0.5, 0.5, 0.0]])
    display = SampleExplanationDisplay(masks, ["a", "b", "c"], title="t").plot()
    assert [_heights(bars) for bars in display.bars_] == masks.tolist()
    centres = [[bar.get_x() + bar.get_width() / 2 for bar in bars] for bars in display.bars_]
    assert_allclose(centres, [[-0.2, 0.8, 1.8], [0.2, 1.2, 2.2]])
    assert tick_texts(display.ax_.get_xticklabels()) == ["a", "b", "c"]
    assert [text.get_text() for text in display.ax_.get_legend().get_texts()] == ["step 1", "step 2"]


def test_draws_on_given_axes(model, data):
    X, _ = data
    figure, ax = plt.subplots()
    display = SampleExplanationDisplay.from_estimator(model, X, 0, ax=ax)
    assert display.figure_ is figure
    assert display.ax_ is ax
    assert len(ax.patches) == (model.n_steps + 1) * model.n_features_in_


@pytest.mark.parametrize("index", [160, -161, 1.0, True, np.True_, "0"])
def test_rejects_bad_index(model, data, index):
    X, _ = data
    with pytest.raises(ValueError, match="index must be an int in -160..159"):
        SampleExplanationDisplay.from_estimator(model, X, index)


def test_accepts_numpy_int_index(model, data):
    X, _ = data
    display = SampleExplanationDisplay.from_estimator(model, X, np.int64(-1))
    assert display.ax_.get_title() == "row 159 (entmax15)"
    assert_allclose(_heights(display.aggregate_bars_), model.explain(X.iloc[[159]]).importances[0])


def test_plot_rejects_step_masks_not_2d():
    with pytest.raises(ValueError, match="step_masks must have shape"):
        SampleExplanationDisplay(np.ones(3), ["a", "b", "c"]).plot()


def test_pipeline_uses_transformed_X_and_feature_names(pipeline_case, tick_texts):
    case = pipeline_case
    display = SampleExplanationDisplay.from_estimator(case.pipeline, case.X, 3)
    assert_allclose(_heights(display.bars_[1]), case.model.explain(case.transformed[[3]]).step_masks[0, 1])
    assert tick_texts(display.ax_.get_xticklabels()) == case.names
