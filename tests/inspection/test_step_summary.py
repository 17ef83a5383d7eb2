import matplotlib.pyplot as plt
import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from sparsetab import SparseTabNetClassifier
from sparsetab.inspection import StepSummaryDisplay

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

MASKS = np.array([[0.5, 0.0, 0.5, 0.0], [0.0, 0.25, 0.0, 0.75], [0.002, 0.0, 0.0, 0.998]])  # 3 steps, 4 features
IMPORTANCES = np.array([0.1, 0.2, 0.3, 0.4])


def _texts(display):
    return [[text.get_text() for text in row] for row in display.texts_]


def test_from_arrays_sorts_by_importance_and_annotates(tick_texts):
    display = StepSummaryDisplay(MASKS, ["a", "b", "c", "d"], importances=IMPORTANCES, n_samples=7).plot()
    assert_array_equal(display.order_, [3, 2, 1, 0])
    assert tick_texts(display.ax_.get_xticklabels()) == ["d", "c", "b", "a"]
    assert tick_texts(display.ax_.get_yticklabels()) == ["step 1", "step 2", "step 3", "aggregate"]
    assert_allclose(display.im_.get_array(), np.vstack([MASKS, IMPORTANCES])[:, [3, 2, 1, 0]])
    assert _texts(display) == [
        ["0", "0.50", "0", "0.50"],
        ["0.75", "0", "0.25", "0"],
        ["1.00", "0", "0", "<.01"],
        ["0.40", "0.30", "0.20", "0.10"],
    ]
    assert display.ax_.get_title() == "mean mask per step (7 rows)"
    assert display.im_.get_clim() == (0.0, 0.998)
    assert display.colorbar_ is not None and len(display.figure_.axes) == 2
    # the darkest cell (0) gets white text on viridis, the brightest (0.998) black
    assert display.texts_[0, 0].get_color() == "white" and display.texts_[2, 0].get_color() == "black"


def test_top_k_without_importances_sorts_by_the_mean_step_mask(tick_texts):
    # mean over steps: a 0.1673, b 0.0833, c 0.1667, d 0.5827
    display = StepSummaryDisplay(MASKS, ["a", "b", "c", "d"], entmax_mode="sparsemax").plot(
        top_k=2, annotate=False, colorbar=False, vmax=2.0
    )
    assert_array_equal(display.order_, [3, 0])
    assert tick_texts(display.ax_.get_yticklabels()) == ["step 1", "step 2", "step 3"]
    assert_allclose(display.im_.get_array(), MASKS[:, [3, 0]])
    assert display.texts_ is None and display.colorbar_ is None
    assert display.im_.get_clim() == (0.0, 2.0)
    assert display.ax_.get_title() == "mean mask per step (sparsemax)"


def test_from_estimator_means_over_every_row(model, data, tick_texts):
    X, _ = data
    display = StepSummaryDisplay.from_estimator(model, X, top_k=3)
    explanation = model.explain(X)
    importances = explanation.importances.astype(np.float64).mean(axis=0)
    order = np.argsort(-importances, kind="stable")[:3]
    assert_array_equal(display.order_, order)
    assert tick_texts(display.ax_.get_xticklabels()) == list(explanation.feature_names[order])
    expected = np.vstack([explanation.step_masks.astype(np.float64).mean(axis=0), importances])[:, order]
    assert_allclose(display.im_.get_array(), expected, rtol=1e-5)
    assert display.ax_.get_title() == "mean mask per step (160 rows, entmax15)"
    full = StepSummaryDisplay.from_estimator(model, X, aggregate=False)
    assert_allclose(full.im_.get_array().sum(axis=1), 1.0, rtol=1e-5)  # every step's mask sums to 1
    assert tick_texts(full.ax_.get_yticklabels()) == ["step 1", "step 2"]


def test_groups_sum_columns_into_one(model, data, tick_texts):
    X, _ = data
    display = StepSummaryDisplay.from_estimator(model, X, groups={"body": ["height", "weight"]})
    explanation = model.explain(X)
    masks = explanation.step_masks.astype(np.float64).mean(axis=0)
    grouped = np.column_stack([masks[:, 0], masks[:, 1], masks[:, 2] + masks[:, 3]])  # age, colour, body
    names = ["age", "colour", "body"]
    assert tick_texts(display.ax_.get_xticklabels()) == [names[i] for i in display.order_]
    assert_allclose(display.im_.get_array()[:-1], grouped[:, display.order_], rtol=1e-5)
    assert_allclose(display.im_.get_array()[:-1].sum(axis=1), 1.0, rtol=1e-5)  # each step's mask sums to 1


def test_pipeline_feature_names(pipeline_case, tick_texts):
    case = pipeline_case
    display = StepSummaryDisplay.from_estimator(case.pipeline, case.X, groups={"ab": ["scale__a", "scale__b"]})
    expected = case.model.explain(case.transformed).importances.astype(np.float64).mean(axis=0)
    expected = np.array([expected[0] + expected[1], expected[2]])
    assert tick_texts(display.ax_.get_xticklabels()) == [["ab", "remainder__c"][i] for i in display.order_]
    assert_allclose(display.im_.get_array()[-1], expected[display.order_], rtol=1e-5)


def test_draws_on_given_axes(model, data):
    X, _ = data
    figure, ax = plt.subplots()
    display = StepSummaryDisplay.from_estimator(model, X, ax=ax)
    assert display.figure_ is figure and display.ax_ is ax
    assert len(ax.images) == 1


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(top_k=0), ValueError, "top_k must be None or an int >= 1, got 0"),
        (dict(top_k=2.0), ValueError, "top_k must be None or an int >= 1, got 2.0"),
        (dict(groups={"body": ["height", "mass"]}), ValueError, r"groups\['body'\] names column 'mass'"),
        (dict(groups=["height"]), TypeError, "groups must be a dict"),
    ],
)
def test_rejects_bad_arguments(model, data, kwargs, error, match):
    X, _ = data
    with pytest.raises(error, match=match):
        StepSummaryDisplay.from_estimator(model, X, **kwargs)


def test_rejects_X_without_rows(model, data):
    X, _ = data
    with pytest.raises(ValueError, match="X must have at least one row"):
        StepSummaryDisplay.from_estimator(model, X.iloc[:0])


@pytest.mark.parametrize(
    "masks, importances, plot_kwargs, match",
    [
        (np.zeros(3), None, {}, "step_masks must have shape"),
        (np.zeros((2, 3)), np.zeros(2), {}, r"importances must have shape \(n_features,\) = \(3,\)"),
        (np.zeros((2, 3)), None, dict(vmax=-1.0), "vmax must be None or a positive number"),
        (np.zeros((2, 3)), None, dict(top_k=True), "top_k must be None or an int >= 1"),
    ],
)
def test_plot_rejects_bad_arrays(masks, importances, plot_kwargs, match):
    with pytest.raises(ValueError, match=match):
        StepSummaryDisplay(masks, ["a", "b", "c"], importances=importances).plot(**plot_kwargs)


def test_plot_rejects_feature_names_of_another_length():
    # Two names for three features failed with a bare IndexError while drawing.
    with pytest.raises(ValueError, match=r"^feature_names must hold one name per feature of step_masks \(3\), got 2"):
        StepSummaryDisplay(np.full((2, 3), 1 / 3), ["a", "b"]).plot()


def test_all_zero_masks_get_a_unit_scale():
    display = StepSummaryDisplay(np.zeros((1, 2)), ["a", "b"]).plot()
    assert display.im_.get_clim() == (0.0, 1.0)
    assert _texts(display) == [["0", "0"]]


def test_step_gates_are_written_in_the_step_labels(tick_texts):
    display = StepSummaryDisplay(MASKS, ["a", "b", "c", "d"], step_gates=[1.0, 0.305, 0.0]).plot()
    assert tick_texts(display.ax_.get_yticklabels()) == [
        "step 1 (gate 1.00)",
        "step 2 (gate 0.30)",
        "step 3 (gate 0.00)",
    ]
    with pytest.raises(ValueError, match=r"step_gates must have shape \(n_steps,\) = \(3,\).*got shape \(2,\)"):
        StepSummaryDisplay(MASKS, ["a", "b", "c", "d"], step_gates=[1.0, 0.5]).plot()


def test_from_a_gated_estimator_labels_each_step_with_its_mean_gate(data, tiny, tick_texts):
    X, y = data
    model = SparseTabNetClassifier(step_gates="sigmoid", **tiny).fit(X, y)
    gates = model.explain(X).step_gates.mean(axis=0, dtype=np.float64)
    display = StepSummaryDisplay.from_estimator(model, X)
    labels = [f"step {step + 1} (gate {gate:.2f})" for step, gate in enumerate(gates)] + ["aggregate"]
    assert tick_texts(display.ax_.get_yticklabels()) == labels
