import matplotlib.pyplot as plt
import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from sparsetab import SparseTabNetClassifier
from sparsetab.inspection import TrainingHistoryDisplay

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


@pytest.fixture(scope="module")
def adaptive_model(data, tiny):
    X, y = data
    return SparseTabNetClassifier(
        entmax_mode="adaptive", early_stopping=True, validation_fraction=0.25, n_iter_no_change=2, **tiny
    ).fit(X, y)


def test_without_validation(model):
    display = TrainingHistoryDisplay.from_estimator(model)
    assert len(display.axes_) == 1
    assert display.ax_ is display.axes_[0]
    assert_allclose(display.loss_line_.get_ydata(), model.loss_curve_)
    assert_array_equal(display.loss_line_.get_xdata(), np.arange(1, model.n_iter_ + 1))
    assert display.validation_line_ is None
    assert display.best_iteration_lines_ == []
    assert display.alpha_lines_ == []
    assert display.ax_.get_xlabel() == "epoch"


def test_marks_best_epoch_and_plots_alphas(adaptive_model):
    model = adaptive_model
    assert model.best_iteration_ is not None
    display = TrainingHistoryDisplay.from_estimator(model)
    assert len(display.axes_) == 3
    assert_allclose(display.validation_line_.get_ydata(), model.validation_scores_)
    assert display.axes_[1].get_ylabel() == "validation score (negative loss)"
    assert len(display.best_iteration_lines_) == 3
    for line in display.best_iteration_lines_:
        assert_array_equal(line.get_xdata(), [model.best_iteration_ + 1] * 2)
    assert len(display.alpha_lines_) == model.n_steps
    for step, line in enumerate(display.alpha_lines_):
        assert_allclose(line.get_ydata(), model.entmax_alpha_history_[:, step])
        assert line.get_label() == f"step {step + 1}"
    assert display.axes_[2].get_ylabel() == "alpha"
    assert f"best epoch ({model.best_iteration_ + 1})" in [
        text.get_text() for text in display.ax_.get_legend().get_texts()
    ]


def test_from_arrays_skips_all_nan_validation():
    display = TrainingHistoryDisplay(
        [1.0, 0.5], validation_scores=[np.nan, np.nan], best_iteration=0, alpha_history=[[1.5, 1.2], [1.4, 1.3]]
    ).plot()
    assert len(display.axes_) == 2
    assert display.validation_line_ is None
    assert_allclose(display.alpha_lines_[1].get_ydata(), [1.2, 1.3])
    assert_array_equal(display.best_iteration_lines_[0].get_xdata(), [1, 1])


def test_ax_count(model):
    _, axes = plt.subplots(1, 2)
    with pytest.raises(ValueError, match="ax must hold 1 Axes"):
        TrainingHistoryDisplay.from_estimator(model, ax=axes)


def test_draws_on_given_axes(model):
    figure, ax = plt.subplots()
    display = TrainingHistoryDisplay.from_estimator(model, ax=ax)
    assert display.figure_ is figure
    assert display.ax_ is ax
    assert display.loss_line_ in ax.lines


def test_plot_rejects_alpha_history_not_2d():
    with pytest.raises(ValueError, match="alpha_history must have shape"):
        TrainingHistoryDisplay([1.0, 0.5], alpha_history=[1.5, 1.4]).plot()


def test_pipeline_draws_the_models_history(pipeline_case):
    display = TrainingHistoryDisplay.from_estimator(pipeline_case.pipeline)
    assert_allclose(display.loss_line_.get_ydata(), pipeline_case.model.loss_curve_)
