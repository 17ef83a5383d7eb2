import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.pipeline import make_pipeline

from sparsetab import SparseTabNetClassifier
from sparsetab.inspection import FeatureMaskDisplay

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def test_images_equal_explained_masks(model, data):
    X, _ = data
    display = FeatureMaskDisplay.from_estimator(model, X, max_samples=10)
    explanation = model.explain(X.iloc[:10])
    assert len(display.ims_) == model.n_steps + 1
    for step in range(model.n_steps):
        assert_allclose(display.ims_[step].get_array(), explanation.step_masks[:, step])
    assert_allclose(display.im_.get_array(), explanation.importances)
    assert_array_equal(display.sample_indices_, np.arange(10))
    assert_array_equal(display.feature_order_, np.arange(4))
    assert display.ax_ is display.axes_[0]
    assert display.ax_.get_ylabel() == "sample"


def test_ticks_titles_and_shared_colour_scale(model, data, tick_texts):
    X, _ = data
    display = FeatureMaskDisplay.from_estimator(model, X, max_samples=8)
    for ax in display.axes_:
        assert tick_texts(ax.get_xticklabels()) == ["age", "colour", "height", "weight"]
        assert_array_equal(ax.get_xticks(), np.arange(4))
        assert ax.get_xlabel() == "feature"
    assert [ax.get_title() for ax in display.axes_] == [
        "step 1 mask (entmax15)",
        "step 2 mask (entmax15)",
        "aggregate mask (entmax15)",
    ]
    limits = {im.get_clim() for im in display.ims_}
    assert len(limits) == 1
    low, high = limits.pop()
    assert low == 0.0
    assert high == max(float(im.get_array().max()) for im in display.ims_)
    assert display.colorbar_ is not None
    assert len(display.figure_.axes) == len(display.axes_) + 1  # one colour bar


def test_selected_steps_without_aggregate_or_colorbar(model, data):
    X, _ = data
    display = FeatureMaskDisplay.from_estimator(model, X, steps=[1], aggregate=False, colorbar=False)
    assert [ax.get_title() for ax in display.axes_] == ["step 2 mask (entmax15)"]
    assert_allclose(display.im_.get_array(), model.explain(X.iloc[:50]).step_masks[:, 1])
    assert display.colorbar_ is None
    assert len(display.figure_.axes) == 1


def test_single_int_step(model, data):
    X, _ = data
    display = FeatureMaskDisplay.from_estimator(model, X, steps=0, max_samples=3)
    assert [ax.get_title() for ax in display.axes_] == ["step 1 mask (entmax15)", "aggregate mask (entmax15)"]
    assert_allclose(display.ims_[0].get_array(), model.explain(X.iloc[:3]).step_masks[:, 0])


def test_sorts_features_and_samples(model, data, tick_texts):
    X, _ = data
    display = FeatureMaskDisplay.from_estimator(model, X, max_samples=30, sort_features=True, sort_samples_by="height")
    explanation = model.explain(X.iloc[:30])
    order = np.argsort(-explanation.importances.mean(axis=0), kind="stable")
    assert tick_texts(display.ax_.get_xticklabels()) == list(explanation.feature_names[order])
    assert_array_equal(display.feature_order_, order)
    rows = np.argsort(X["height"].to_numpy()[:30], kind="stable")
    assert_array_equal(display.sample_indices_, rows)
    assert np.all(np.diff(X["height"].to_numpy()[display.sample_indices_]) >= 0)
    # float32 masks of the same rows computed in another batch: equal up to summation order
    assert_allclose(display.im_.get_array(), explanation.importances[rows][:, order], rtol=1e-5, atol=1e-6)
    assert display.ax_.get_ylabel() == "sample, sorted by height"


def test_sorts_samples_by_a_text_column_with_missing_values_last(model, data):
    # numpy's argsort compared str with None: "'<' not supported between instances of 'str' and 'float'".
    X, _ = data
    X = X.iloc[:6].copy()
    X["colour"] = X["colour"].astype(object)
    X.loc[[1, 4], "colour"] = [None, np.nan]
    X.loc[[0, 2, 3, 5], "colour"] = ["red", "blue", "green", "blue"]
    display = FeatureMaskDisplay.from_estimator(model, X, sort_samples_by="colour")
    assert_array_equal(display.sample_indices_, [2, 5, 3, 0, 1, 4])  # blue, blue, green, red, then the missing


def test_a_sort_column_of_mixed_types_is_named(model, data):
    X, _ = data
    X = X.iloc[:4].copy()
    X["mixed"] = np.array(["a", 2, "b", 1], dtype=object)
    with pytest.raises(ValueError, match=r"^sort_samples_by='mixed' names a column .* mix the types int, str \("):
        FeatureMaskDisplay.from_estimator(model, X, sort_samples_by="mixed")
    X = X.drop(columns="mixed")
    X["colour"] = pd.Categorical(["red", "blue", "green", "red"], categories=["red", "green", "blue"], ordered=True)
    display = FeatureMaskDisplay.from_estimator(model, X, sort_samples_by="colour")
    assert_array_equal(display.sample_indices_, [0, 3, 2, 1])  # the categories' order, not the alphabet's
    with pytest.raises(ValueError, match=r"^sort_samples_by='age' names 2 columns of X\.$"):
        FeatureMaskDisplay.from_estimator(
            model, X.set_axis(["age", "colour", "height", "age"], axis=1), sort_samples_by="age"
        )


@pytest.mark.parametrize(
    "names, message",
    [
        (["a", "b"], r"hold one name per feature of step_masks \(4\), got 2: \['a', 'b'\]\."),
        ("abcd", "be a list of names, one per feature of step_masks, got the string 'abcd'"),
    ],
)
def test_feature_names_of_another_length_are_refused(model, data, names, message):
    # Two names for four features drew without error, with two columns unlabelled.
    X, _ = data
    explanation = model.explain(X.iloc[:5])
    with pytest.raises(ValueError, match=f"^feature_names must {message}"):
        FeatureMaskDisplay(explanation.step_masks, explanation.importances, names).plot()
    with pytest.raises(ValueError, match=r"^steps must have one entry per shown step of step_masks \(2\), got 3\."):
        FeatureMaskDisplay(explanation.step_masks, None, explanation.feature_names, steps=[0, 1, 2]).plot()
    with pytest.raises(ValueError, match=r"^step_labels must have one entry per shown step of step_masks \(2\), got 1"):
        FeatureMaskDisplay(explanation.step_masks, None, explanation.feature_names, step_labels=["a"]).plot()
    masks = explanation.step_masks.copy()
    masks[0, 0, 0] = np.nan
    with pytest.raises(ValueError, match=r"^step_masks must be finite, got 1 NaN or infinite value\(s\)\."):
        FeatureMaskDisplay(masks, None, explanation.feature_names).plot()
    with pytest.raises(ValueError, match=r"^importances must have shape \(n_samples, n_features\) = \(5, 4\)"):
        FeatureMaskDisplay(explanation.step_masks, explanation.importances[:, :2], explanation.feature_names).plot()


def test_draws_on_given_axes(model, data):
    X, _ = data
    figure, axes = plt.subplots(1, 3)
    display = FeatureMaskDisplay.from_estimator(model, X, max_samples=5, ax=axes)
    assert display.figure_ is figure
    assert list(display.axes_) == list(axes)
    assert all(len(ax.images) == 1 for ax in axes)
    with pytest.raises(ValueError, match="ax must hold 3 Axes"):
        FeatureMaskDisplay.from_estimator(model, X, ax=axes[:2])


def test_from_arrays():
    masks = np.array([[[0.2, 0.8], [1.0, 0.0]]])
    display = FeatureMaskDisplay(masks, None, ["a", "b"], entmax_mode="entmax15").plot()
    assert [ax.get_title() for ax in display.axes_] == ["step 1 mask (entmax15)", "step 2 mask (entmax15)"]
    assert_allclose(display.ims_[0].get_array(), [[0.2, 0.8]])
    assert_allclose(display.ims_[1].get_array(), [[1.0, 0.0]])
    assert display.im_ is display.ims_[-1]


def test_from_arrays_steps_labels_and_vmax():
    masks = np.full((2, 1, 2), 0.5)
    display = FeatureMaskDisplay(
        masks, np.ones((2, 2)), ["a", "b"], steps=[3], entmax_mode="sparsemax", step_labels=["alpha=1.2"]
    ).plot(vmax=2.0, cmap="magma")
    assert [ax.get_title() for ax in display.axes_] == ["step 4 mask (alpha=1.2)", "aggregate mask (sparsemax)"]
    assert {im.get_clim() for im in display.ims_} == {(0.0, 2.0)}
    assert {im.get_cmap().name for im in display.ims_} == {"magma"}


def test_all_zero_masks_get_a_unit_scale():
    display = FeatureMaskDisplay(np.zeros((2, 1, 2)), None, ["a", "b"]).plot()
    assert display.im_.get_clim() == (0.0, 1.0)
    assert display.ax_.get_title() == "step 1 mask"


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(steps=[2]), "steps must be"),
        (dict(steps=[]), "steps must be"),
        (dict(steps="first"), "steps must be"),
        (dict(steps=[True]), "steps must be"),
        (dict(max_samples=0), "max_samples must be"),
        (dict(max_samples=True), "max_samples must be"),
        (dict(sort_samples_by="missing"), "sort_samples_by must be a column of X"),
        (dict(sort_samples_by=4), "sort_samples_by must be a column of X"),
    ],
)
def test_rejects_bad_arguments(model, data, kwargs, match):
    X, _ = data
    with pytest.raises(ValueError, match=match):
        FeatureMaskDisplay.from_estimator(model, X, **kwargs)


def test_rejects_X_without_rows(model, data):
    X, _ = data
    with pytest.raises(ValueError, match="X must have at least one row"):
        FeatureMaskDisplay.from_estimator(model, X.iloc[:0])


@pytest.mark.parametrize(
    "step_masks, importances, plot_kwargs, match",
    [
        (np.zeros((2, 2)), None, {}, "step_masks must have shape"),
        (np.zeros((2, 0, 2)), None, {}, "Nothing to draw"),
        (np.zeros((2, 1, 2)), None, dict(vmax=0), "vmax must be"),
        (np.zeros((2, 1, 2)), None, dict(vmax="1"), "vmax must be"),
    ],
)
def test_plot_rejects_bad_arrays(step_masks, importances, plot_kwargs, match):
    with pytest.raises(ValueError, match=match):
        FeatureMaskDisplay(step_masks, importances, ["a", "b"]).plot(**plot_kwargs)


def test_sort_by_position_on_arrays(tiny, tick_texts):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(100, 3))
    y = (X[:, 0] > 0).astype(int)
    model = SparseTabNetClassifier(**tiny).fit(X, y)
    display = FeatureMaskDisplay.from_estimator(model, X, max_samples=12, sort_samples_by=2)
    assert_array_equal(display.sample_indices_, np.argsort(X[:12, 2], kind="stable"))
    assert tick_texts(display.ax_.get_xticklabels()) == ["x0", "x1", "x2"]
    assert display.ax_.get_ylabel() == "sample, sorted by 2"
    for column in [3, True, "x3", "height"]:
        with pytest.raises(
            ValueError, match=r"sort_samples_by must be a column position in 0\.\.2 \(or its name x0\.\.x2\)"
        ):
            FeatureMaskDisplay.from_estimator(model, X, max_samples=12, sort_samples_by=column)
    # The name that explain() and the ticks give the column, as the position.
    by_name = FeatureMaskDisplay.from_estimator(model, X, max_samples=12, sort_samples_by="x2")
    assert_array_equal(by_name.sample_indices_, display.sample_indices_)


def test_pipeline_uses_transformed_X_and_feature_names(pipeline_case, tick_texts):
    case = pipeline_case
    display = FeatureMaskDisplay.from_estimator(case.pipeline, case.X, max_samples=6)
    assert tick_texts(display.ax_.get_xticklabels()) == case.names
    assert_allclose(display.im_.get_array(), case.model.explain(case.transformed[:6]).importances)


def test_single_step_pipeline(data, tiny, tick_texts):
    X, y = data
    pipeline = make_pipeline(SparseTabNetClassifier(**tiny)).fit(X, y)
    display = FeatureMaskDisplay.from_estimator(pipeline, X, max_samples=4)
    assert tick_texts(display.ax_.get_xticklabels()) == ["age", "colour", "height", "weight"]
    assert_allclose(display.im_.get_array(), pipeline[-1].explain(X.iloc[:4]).importances)


def test_top_k_keeps_the_most_important_columns_in_order(model, data, tick_texts):
    X, _ = data
    display = FeatureMaskDisplay.from_estimator(model, X, max_samples=20, top_k=2)
    explanation = model.explain(X.iloc[:20])
    order = np.argsort(-explanation.importances.astype(np.float64).mean(axis=0), kind="stable")[:2]
    assert_array_equal(display.feature_order_, order)
    for ax in display.axes_:
        assert tick_texts(ax.get_xticklabels()) == list(explanation.feature_names[order])
    assert_allclose(display.ims_[1].get_array(), explanation.step_masks[:, 1][:, order])
    assert_allclose(display.im_.get_array(), explanation.importances[:, order])
    # more than there are: every column, sorted
    assert len(FeatureMaskDisplay.from_estimator(model, X, max_samples=5, top_k=10).feature_order_) == 4


@pytest.mark.parametrize("top_k", [0, -1, 2.5, True, "3"])
def test_rejects_bad_top_k(model, data, top_k):
    X, _ = data
    with pytest.raises(ValueError, match=rf"^top_k must be None or an int >= 1, got {top_k!r}\.$"):
        FeatureMaskDisplay.from_estimator(model, X, top_k=top_k)


def test_groups_sum_the_masks_of_their_members(model, data, tick_texts):
    X, _ = data
    display = FeatureMaskDisplay.from_estimator(model, X, max_samples=6, groups={"shape": ["weight", 2]})
    explanation = model.explain(X.iloc[:6])
    masks = explanation.step_masks
    expected = np.stack([masks[..., 0], masks[..., 1], masks[..., 2] + masks[..., 3]], axis=-1)
    assert tick_texts(display.ax_.get_xticklabels()) == ["age", "colour", "shape"]
    assert_allclose(display.ims_[0].get_array(), expected[:, 0], rtol=1e-6)
    assert_allclose(display.ims_[0].get_array().sum(axis=1), 1.0, rtol=1e-5)
    sorted_display = FeatureMaskDisplay.from_estimator(
        model, X, max_samples=6, groups={"shape": ["weight", 2]}, top_k=1
    )
    importances = explanation.importances
    grouped = np.column_stack([importances[:, 0], importances[:, 1], importances[:, 2] + importances[:, 3]])
    best = int(np.argmax(grouped.astype(np.float64).mean(axis=0)))
    assert_array_equal(sorted_display.feature_order_, [best])
    assert_allclose(sorted_display.im_.get_array(), grouped[:, [best]], rtol=1e-6)
    with pytest.raises(ValueError, match=r"groups\['shape'\] lists column 'height' \(position 2\), which is twice"):
        FeatureMaskDisplay.from_estimator(model, X, groups={"shape": ["height", 2]})


def test_pipeline_groups_use_the_pipeline_names(pipeline_case, tick_texts):
    case = pipeline_case
    display = FeatureMaskDisplay.from_estimator(case.pipeline, case.X, max_samples=4, groups={"a": ["scale__a"]})
    assert tick_texts(display.ax_.get_xticklabels()) == ["a", "scale__b", "remainder__c"]
    assert_allclose(display.im_.get_array(), case.model.explain(case.transformed[:4]).importances)


def test_a_gated_models_step_titles_give_the_mean_gate(data, tiny):
    X, y = data
    model = SparseTabNetClassifier(step_gates="sigmoid", **tiny).fit(X, y)
    display = FeatureMaskDisplay.from_estimator(model, X, max_samples=8)
    gates = model.explain(X.iloc[:8]).step_gates.mean(axis=0, dtype=np.float64)
    assert [ax.get_title() for ax in display.axes_] == [
        f"step 1 mask (entmax15, mean gate {gates[0]:.2f})",
        f"step 2 mask (entmax15, mean gate {gates[1]:.2f})",
        "aggregate mask (entmax15)",
    ]
