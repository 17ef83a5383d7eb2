import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

from sparsetab import SparseTabNetClassifier, SparseTabNetRegressor
from sparsetab.inspection import SampleExplanationDisplay

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def _heights(bars):
    return [bar.get_height() for bar in bars]


def _title(model, X, position):
    """The title from_estimator should write for row ``position`` of ``X``, from the model's own answers."""
    row = X.iloc[[position]]
    predicted = model.predict(row)[0]
    probability = model.predict_proba(row)[0, list(model.classes_).index(predicted)]
    return f"row {position} (entmax15): predicted {predicted} (p = {probability:.2f})"


def _value_labels(X, position):
    row = X.iloc[position]
    return [
        f"age = {row['age']:.4g}",
        f"colour = {row['colour']}",
        f"height = {row['height']:.4g}",
        f"weight = {row['weight']:.4g}",
    ]


def test_bars_equal_one_rows_masks(model, data, tick_texts):
    X, _ = data
    display = SampleExplanationDisplay.from_estimator(model, X, 7)
    explanation = model.explain(X.iloc[[7]])
    assert len(display.bars_) == model.n_steps
    for step, bars in enumerate(display.bars_):
        assert_allclose(_heights(bars), explanation.step_masks[0, step])
    assert_allclose(_heights(display.aggregate_bars_), explanation.importances[0])
    assert tick_texts(display.ax_.get_xticklabels()) == _value_labels(X, 7)
    assert display.ax_.get_title() == _title(model, X, 7)
    assert display.prediction_ == model.predict(X.iloc[[7]])[0]
    assert type(display.prediction_) is int
    assert display.probability_ == pytest.approx(float(model.predict_proba(X.iloc[[7]]).max()))
    legend = [text.get_text() for text in display.ax_.get_legend().get_texts()]
    etas = explanation.step_importance[0]
    assert legend == [f"step {step + 1} (eta={float(etas[step]):.2f})" for step in range(model.n_steps)] + ["aggregate"]
    negative = SampleExplanationDisplay.from_estimator(model, X, -len(X) + 7, aggregate=False)
    assert negative.aggregate_bars_ is None
    assert_allclose(_heights(negative.bars_[0]), explanation.step_masks[0, 0])
    assert negative.ax_.get_title() == _title(model, X, 7)


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
    assert display.ax_.get_title() == _title(model, X, 159)
    assert_allclose(_heights(display.aggregate_bars_), model.explain(X.iloc[[159]]).importances[0])


def test_plot_rejects_step_masks_not_2d():
    with pytest.raises(ValueError, match="step_masks must have shape"):
        SampleExplanationDisplay(np.ones(3), ["a", "b", "c"]).plot()


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(importances=[0.5, 0.5]), r"^importances must have shape \(n_features,\) = \(3,\), got shape \(2,\)\."),
        (dict(importances=[0.5, np.nan, 0.5]), r"^importances must be finite, got 1 NaN"),
        (dict(step_gates=[1.0]), r"^step_gates must have shape \(n_steps,\) = \(2,\), got shape \(1,\)\."),
        (dict(step_importance=[1.0, 2.0, 3.0]), r"^step_importance must have shape \(n_steps,\) = \(2,\)"),
    ],
)
def test_plot_rejects_arrays_of_another_shape(kwargs, match):
    # matplotlib's "shape mismatch" or an IndexError came through.
    with pytest.raises(ValueError, match=match):
        SampleExplanationDisplay(np.full((2, 3), 1 / 3), ["a", "b", "c"], **kwargs).plot()


def test_plot_rejects_feature_names_of_another_length():
    with pytest.raises(ValueError, match=r"^feature_names must hold one name per feature of step_masks \(3\), got 4"):
        SampleExplanationDisplay(np.full((2, 3), 1 / 3), ["a", "b", "c", "d"]).plot()
    with pytest.raises(ValueError, match=r"one name per feature of step_masks \(3\), got 2: \['a', 'b'\]"):
        SampleExplanationDisplay(np.full((2, 3), 1 / 3), (name for name in "ab")).plot()  # a generator
    with pytest.raises(ValueError, match="must be an ordered list of names, one per feature of step_masks, got a set"):
        SampleExplanationDisplay(np.full((2, 3), 1 / 3), {"a", "b", "c"}).plot()
    assert SampleExplanationDisplay(np.full((2, 3), 1 / 3), (name for name in "abc")).plot().bars_


def test_pipeline_uses_transformed_X_and_feature_names(pipeline_case, tick_texts):
    case = pipeline_case
    display = SampleExplanationDisplay.from_estimator(case.pipeline, case.X, 3)
    assert_allclose(_heights(display.bars_[1]), case.model.explain(case.transformed[[3]]).step_masks[0, 1])
    values = case.transformed[3]  # the pipeline's columns: the values the model sees
    assert tick_texts(display.ax_.get_xticklabels()) == [
        f"{name} = {value:.4g}" for name, value in zip(case.names, values)
    ]
    predicted = case.pipeline.predict(case.X.iloc[[3]])[0]
    assert display.ax_.get_title() == f"row 3 (entmax15): predicted {predicted:.4g}"
    assert display.probability_ is None
    grouped = SampleExplanationDisplay.from_estimator(case.pipeline, case.X, 3, groups={"ab": [0, 1], "c": [2]})
    # neither "ab" nor "c" is a column the model sees alone under that name: "c" is a column of X
    assert tick_texts(grouped.ax_.get_xticklabels()) == ["ab", f"c = {case.X['c'].iloc[3]:.4g}"]
    masks = case.model.explain(case.transformed[[3]]).step_masks[0]
    assert_allclose(_heights(grouped.bars_[0]), [masks[0, 0] + masks[0, 1], masks[0, 2]], rtol=1e-6)


def test_a_pipeline_on_an_array_shows_the_raw_values_of_the_source_columns(tiny, tick_texts):
    # The scaled value of x0 was shown as "x0 = 1.109" (its raw value 70) for groups named after X's columns.
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(4)
    X = np.column_stack([rng.normal(50, 10, size=90), rng.normal(size=90)])
    transformer = ColumnTransformer([("scale", StandardScaler(), [0]), ("keep", "passthrough", [1])])
    pipeline = make_pipeline(transformer, SparseTabNetRegressor(**tiny)).fit(X, X[:, 1])
    scaled = pipeline[:-1].transform(X[[7]])[0]
    display = SampleExplanationDisplay.from_estimator(pipeline, X, 7)
    assert tick_texts(display.ax_.get_xticklabels()) == [f"scale__x0 = {scaled[0]:.4g}", f"keep__x1 = {X[7, 1]:.4g}"]
    grouped = SampleExplanationDisplay.from_estimator(pipeline, X, 7, groups={"x1": [1], "x0": [0]})
    assert tick_texts(grouped.ax_.get_xticklabels()) == [f"x0 = {X[7, 0]:.4g}", f"x1 = {X[7, 1]:.4g}"]
    renamed = SampleExplanationDisplay.from_estimator(pipeline, X, 7, groups={"age": [0]})
    assert tick_texts(renamed.ax_.get_xticklabels()) == ["age", f"keep__x1 = {X[7, 1]:.4g}"]


def test_a_pipeline_keeping_the_column_names_shows_the_raw_values(tiny, tick_texts):
    # verbose_feature_names_out=False: the model's inputs carry X's names; the scaled value was shown as X's.
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(5)
    X = pd.DataFrame({"age": rng.normal(50, 10, size=90), "income": rng.normal(900, 100, size=90)})
    transformer = ColumnTransformer([("scale", StandardScaler(), ["income", "age"])], verbose_feature_names_out=False)
    pipeline = make_pipeline(transformer, SparseTabNetRegressor(**tiny)).fit(X, X["age"])
    row = X.iloc[7]
    display = SampleExplanationDisplay.from_estimator(pipeline, X, 7, groups={"income": [0], "age": [1]})
    assert tick_texts(display.ax_.get_xticklabels()) == [f"income = {row['income']:.4g}", f"age = {row['age']:.4g}"]
    numpy_pipeline = make_pipeline(
        ColumnTransformer([("scale", StandardScaler(), [1, 0])], verbose_feature_names_out=False),
        SparseTabNetRegressor(**tiny),
    ).fit(X.to_numpy(), X["age"])
    display = SampleExplanationDisplay.from_estimator(numpy_pipeline, X.to_numpy(), 7)
    assert tick_texts(display.ax_.get_xticklabels()) == [f"x1 = {row['income']:.4g}", f"x0 = {row['age']:.4g}"]


def test_the_title_gives_the_index_label_of_a_row_not_at_its_position(model, data):
    # A frame indexed from 1000 was titled "row 0", the position only.
    X, _ = data
    display = SampleExplanationDisplay.from_estimator(model, X.set_axis(range(1000, 1160)), 0)
    assert display.ax_.get_title().startswith("row 0 (index 1000) (entmax15): predicted ")
    assert SampleExplanationDisplay.from_estimator(model, X, 0).ax_.get_title().startswith("row 0 (entmax15)")


def test_values_of_a_group_named_after_a_column_of_X(model, data, tick_texts):
    X, _ = data
    display = SampleExplanationDisplay.from_estimator(model, X, 2, groups={"age": ["age", "height"], "w": ["weight"]})
    row = X.iloc[2]
    assert tick_texts(display.ax_.get_xticklabels()) == [
        f"age = {row['age']:.4g}",
        f"colour = {row['colour']}",
        f"w = {row['weight']:.4g}",  # a group of one column: that column's value
    ]
    masks = model.explain(X.iloc[[2]]).step_masks[0]
    assert_allclose(_heights(display.bars_[1]), [masks[1, 0] + masks[1, 2], masks[1, 1], masks[1, 3]], rtol=1e-6)


def test_values_of_numpy_rows_and_missing_values(tiny, tick_texts):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(80, 3))
    X[5, 1] = np.nan
    model = SparseTabNetRegressor(**tiny).fit(X, np.nan_to_num(X[:, 0]))
    display = SampleExplanationDisplay.from_estimator(model, X, 5)
    assert tick_texts(display.ax_.get_xticklabels()) == [f"x0 = {X[5, 0]:.4g}", "x1 = missing", f"x2 = {X[5, 2]:.4g}"]
    assert display.prediction_ == pytest.approx(float(model.predict(X[[5]])[0]))
    assert display.ax_.get_title() == f"row 5 (entmax15): predicted {model.predict(X[[5]])[0]:.4g}"


def test_from_arrays_with_feature_values(tick_texts):
    display = SampleExplanationDisplay(
        np.array([[0.5, 0.5, 0.0]]), ["a", "b", "c"], feature_values=[39, None, "red"]
    ).plot()
    assert tick_texts(display.ax_.get_xticklabels()) == ["a = 39", "b", "c = red"]
    with pytest.raises(ValueError, match=r"feature_values must have one value per feature \(3\), got 2"):
        SampleExplanationDisplay(np.zeros((1, 3)), ["a", "b", "c"], feature_values=[1, 2]).plot()


def test_several_outputs_are_listed_without_probability(tiny):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(80, 2))
    model = SparseTabNetRegressor(**tiny).fit(X, np.column_stack([X[:, 0], -X[:, 1]]))
    display = SampleExplanationDisplay.from_estimator(model, X, 1)
    first, second = model.predict(X[[1]])[0]
    assert display.ax_.get_title() == f"row 1 (entmax15): predicted [{first:.4g}, {second:.4g}]"
    assert display.prediction_ == pytest.approx([first, second])
    assert display.probability_ is None


def test_a_gated_models_legend_gives_each_steps_gate_and_gated_eta(data, tiny):
    X, y = data
    model = SparseTabNetClassifier(step_gates="sigmoid", **tiny).fit(X, y)
    display = SampleExplanationDisplay.from_estimator(model, X, 3)
    explanation = model.explain(X.iloc[[3]])
    gates, etas = explanation.step_gates[0], explanation.step_importance[0]
    legend = [text.get_text() for text in display.ax_.get_legend().get_texts()]
    expected = [f"step {step + 1} (gate={gates[step]:.2f}, eta={etas[step]:.2f})" for step in range(model.n_steps)]
    assert legend == expected + ["aggregate"]


@pytest.mark.parametrize(
    "rotation, rise", [("vertical", 1.0), (90, 1.0), (-90.0, 1.0), ("horizontal", 0.0), (0, 0.0), (30, 0.5)]
)
def test_a_new_figure_grows_by_the_height_of_the_longest_rotated_label(rotation, rise):
    # "occupation = Machine-op-inspct" has 30 characters: 22 beyond the 8 that fit, 0.075 inches each.
    names = ["age", "occupation = Machine-op-inspct"]
    display = SampleExplanationDisplay(np.full((2, 2), 0.5), names).plot(xticks_rotation=rotation)
    assert_allclose(display.figure_.get_size_inches()[1], 4.0 + 0.075 * 22 * rise)
