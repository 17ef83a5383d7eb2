import importlib.util
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest

from sparsetab import SparseTabNetClassifier, SparseTabNetRegressor
from sparsetab.datasets import load_california_housing, make_syn

matplotlib.use("Agg")
ROOT = Path(__file__).resolve().parents[1]


def _load_example(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_quickstart_mask_figure_is_drawn_by_the_displays(tmp_path, monkeypatch):
    quickstart = _load_example("quickstart")
    X = pd.DataFrame({"colour": ["red", "blue"] * 30, "size": range(60), "weight": [0.5, 1.5, 2.5] * 20})
    y = (X["size"] > 30).astype(int)
    model = SparseTabNetClassifier(n_d=4, n_a=4, n_steps=2, max_epochs=2, random_state=0).fit(X, y)
    figures = []
    monkeypatch.setattr(quickstart.plt, "close", figures.append)
    path = tmp_path / "masks.png"
    summary = quickstart.plot_masks(model, X, path, rows=6)
    assert path.stat().st_size > 1000
    (figure,) = figures
    titled = [ax for ax in figure.get_axes() if ax.get_title()]
    assert [ax.get_title() for ax in titled] == [
        "mean mask per step (60 rows, entmax15)",
        "step 1 mask (entmax15)",
        "step 2 mask (entmax15)",
        "aggregate mask (entmax15)",
    ]
    explanation = model.explain(X)
    order = np.argsort(-explanation.importances.astype(np.float64).mean(axis=0), kind="stable")
    assert [label.get_text() for label in titled[0].get_xticklabels()] == list(explanation.feature_names[order])
    assert [label.get_text() for label in titled[0].get_yticklabels()] == ["step 1", "step 2", "aggregate"]
    assert summary.ax_ is titled[0]
    rows = model.explain(X.iloc[:6])
    row_order = np.argsort(-rows.importances.astype(np.float64).mean(axis=0), kind="stable")
    assert [label.get_text() for label in titled[1].get_xticklabels()] == list(rows.feature_names[row_order])
    np.testing.assert_allclose(titled[3].images[0].get_array(), rows.importances[:, row_order])


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_plot_adult_masks_writes_its_figures(tmp_path, monkeypatch):
    example = _load_example("plot_adult_masks")
    X = pd.DataFrame({"colour": ["red", "blue"] * 40, "size": range(80), "weight": [0.5, 1.5, 2.5, 3.5] * 20})
    y = (X["size"] > 40).astype(int)
    model = SparseTabNetClassifier(
        n_d=4, n_a=4, n_steps=2, batch_size=64, virtual_batch_size=32, max_epochs=2, random_state=0
    ).fit(X, y)
    figures = []
    monkeypatch.setattr(example.plt, "close", figures.append)
    paths = example.plot_figures(model, X, tmp_path, n_rows=10, sample_index=3)
    assert sorted(paths) == ["history", "importances", "masks", "sample", "step_summary"]
    assert all(path.parent == tmp_path and path.stat().st_size > 1000 for path in paths.values())
    summary, masks, importances, sample, history = figures
    assert summary.axes[0].get_title() == "mean mask per step (80 rows, entmax15)"
    assert [label.get_text() for label in summary.axes[0].get_yticklabels()] == ["step 1", "step 2", "aggregate"]
    assert [ax.get_title() for ax in masks.axes if ax.get_title()] == [
        "step 1 mask (entmax15)",
        "step 2 mask (entmax15)",
        "aggregate mask (entmax15)",
    ]
    assert sorted(label.get_text() for label in masks.axes[0].get_xticklabels()) == ["colour", "size", "weight"]
    assert importances.axes[0].get_title() == "feature importance (80 rows)"
    assert importances.axes[0].get_xlabel() == "importance\nerror bars: standard deviation over the 80 rows"
    assert sample.axes[0].get_title().startswith("row 3 (entmax15): predicted ")
    assert history.axes[0].get_title() == "training loss"


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_plot_one_hot_groups_sums_the_one_hot_columns(tmp_path, monkeypatch):
    example = _load_example("plot_one_hot_groups")
    X = pd.DataFrame(
        {
            "colour": ["red", "blue", "green", "red"] * 20,
            "size": range(80),
            "shape": ["round"] * 70 + ["square"] * 5 + ["star"] * 5,
        }
    )
    y = (X["size"] > 40).astype(int)
    pipeline = example.one_hot_pipeline(
        SparseTabNetClassifier(n_d=4, n_a=4, n_steps=2, batch_size=64, virtual_batch_size=32, max_epochs=2),
        min_frequency=10,
    ).fit(X, y)
    figures = []
    monkeypatch.setattr(example.plt, "close", figures.append)
    paths = example.plot_figures(pipeline, X, tmp_path, top_k=4)
    assert paths["groups"].stat().st_size > 1000
    (figure,) = figures
    one_hot, grouped = figure.axes[:2]  # the colour bars come after both heatmaps
    assert one_hot.get_title() == "per one-hot column (the 4 most important of 6)"
    assert grouped.get_title() == "summed per source column (3 columns)"
    assert len(one_hot.get_xticklabels()) == 4
    assert sorted(label.get_text() for label in grouped.get_xticklabels()) == ["colour", "shape", "size"]
    # the rare shapes (square, star) are one infrequent column, in the group of "shape"
    assert example.feature_groups_from_transformer(pipeline)["shape"] == ["shape_round", "shape_infrequent_sklearn"]
    explanation = pipeline[-1].explain(pipeline[:-1].transform(X))
    order = [["colour", "size", "shape"].index(label.get_text()) for label in grouped.get_xticklabels()]
    columns = {"colour": [0, 1, 2], "shape": [3, 4], "size": [5]}
    summed = np.stack([explanation.step_masks[..., columns[name]].sum(-1) for name in ["colour", "size", "shape"]], -1)
    np.testing.assert_allclose(grouped.images[0].get_array()[:2], summed.mean(axis=0)[:, order], rtol=1e-5)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_plot_syn_switch_sorts_rows_by_x11(tmp_path, monkeypatch):
    example = _load_example("plot_syn_switch")
    X, y, _ = example.syn4_frame(200, random_state=0)
    assert list(X.columns) == [f"x{j}" for j in range(1, 12)]
    model = SparseTabNetClassifier(
        n_d=4, n_a=4, n_steps=2, batch_size=64, virtual_batch_size=32, max_epochs=2, random_state=0
    ).fit(X, y)
    figures = []
    monkeypatch.setattr(example.plt, "close", figures.append)
    paths = example.plot_figures(model, X, tmp_path, n_rows=30)
    assert all(path.stat().st_size > 1000 for path in paths.values())
    masks, importances = figures
    n_negative = int((X["x11"].iloc[:30] < 0).sum())
    heatmap = masks.axes[0]
    assert heatmap.get_ylabel() == "sample, sorted by x11"
    (switch,) = [line for line in heatmap.get_lines() if line.get_linestyle() == "--"]
    assert list(switch.get_ydata()) == [n_negative - 0.5] * 2
    titles = [ax.get_title() for ax in importances.axes]
    assert titles[0].startswith("rows with x11 < 0") and titles[1].startswith("rows with x11 >= 0")


def test_plot_entmax_maps_table_and_figure(tmp_path, monkeypatch):
    example = _load_example("plot_entmax_maps")
    table = example.probability_table((-2.0, 0.0, 0.5))
    assert list(table) == ["softmax", "entmax alpha=1.25", "entmax15", "entmax alpha=1.75", "sparsemax"]
    assert table["sparsemax"] == pytest.approx([0.0, 0.25, 0.75], abs=1e-6)
    assert table["entmax15"] == pytest.approx([0.0, 0.326, 0.674], abs=1e-3)
    assert table["entmax15"][0] == 0.0 and table["sparsemax"][0] == 0.0
    assert all(p > 0 for p in table["softmax"]) and all(p > 0 for p in table["entmax alpha=1.25"])
    assert table["entmax alpha=1.75"][0] == 0.0 and 0.674 < table["entmax alpha=1.75"][2] < 0.75
    for probabilities in table.values():
        assert sum(probabilities) == pytest.approx(1.0, abs=1e-6)
    # x = [t, 0]: sparsemax is exactly 0 / 1 beyond |t| = 1, 1.5-entmax beyond |t| = 2, softmax never.
    curves = example.two_score_curves([-2.5, -1.5, 0.0, 1.5, 2.5])
    assert curves["sparsemax"] == pytest.approx([0.0, 0.0, 0.5, 1.0, 1.0])
    assert curves["entmax15"][0] == 0.0 and curves["entmax15"][4] == 1.0 and 0 < curves["entmax15"][1] < 0.5
    assert 0 < curves["softmax"][0] and curves["softmax"][4] < 1
    figures = []
    monkeypatch.setattr(example.plt, "close", figures.append)
    paths = example.plot_figures(tmp_path, n_points=11)
    assert paths["maps"].parent == tmp_path and paths["maps"].stat().st_size > 1000
    (figure,) = figures
    bars_ax, curve_ax = figure.axes
    assert bars_ax.get_title() == "x = [-2, 0, 0.5]" and curve_ax.get_title() == "x = [t, 0]"
    assert [line.get_label() for line in curve_ax.get_lines()] == list(table)
    assert len(bars_ax.patches) == 5 * 3


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_plot_entmax_modes_compares_the_four_modes(tmp_path, monkeypatch):
    example = _load_example("plot_entmax_modes")
    X, y, _ = make_syn(4, 160, random_state=0)
    X_test, y_test, _ = make_syn(4, 60, random_state=1)
    estimator = SparseTabNetClassifier(
        n_d=4, n_a=4, n_steps=2, batch_size=64, virtual_batch_size=32, max_epochs=2, entmax_alpha=1.25, random_state=0
    )
    summary, models = example.compare_modes(estimator, X, y, X_test, y_test, cv=2)
    assert list(summary.index) == ["sparsemax", "entmax15", "constant", "adaptive"]
    assert list(summary.columns) == ["cv_score", "cv_std", "test_score", "mask_sparsity"]
    assert summary.to_numpy().min() >= 0 and summary.drop(columns="cv_std").to_numpy().max() <= 1
    for mode, model in models.items():
        assert model.entmax_mode == mode
        assert summary.loc[mode, "mask_sparsity"] == pytest.approx(np.mean(model.explain(X_test).step_masks == 0))
    assert models["constant"].entmax_alphas_ == pytest.approx([1.25, 1.25])
    figures = []
    monkeypatch.setattr(example.plt, "close", figures.append)
    paths = example.plot_figures(summary, models, tmp_path)
    assert paths["modes"].stat().st_size > 1000
    (figure,) = figures
    score_ax, sparsity_ax, alpha_ax = figure.axes
    assert [label.get_text() for label in sparsity_ax.get_xticklabels()] == list(summary.index)
    heights = [bar.get_height() for bar in sparsity_ax.patches]
    assert heights == pytest.approx(summary["mask_sparsity"].tolist())
    assert [text.get_text() for text in alpha_ax.get_legend().get_texts()] == list(summary.index)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_plot_regression_writes_its_figure(tmp_path, monkeypatch):
    example = _load_example("plot_regression")
    X, y = load_california_housing(return_X_y=True)
    X, y = X.iloc[:200], y.iloc[:200]
    model = SparseTabNetRegressor(
        n_d=4, n_a=4, n_steps=2, batch_size=64, virtual_batch_size=32, max_epochs=2, random_state=0
    ).fit(X, y)
    figures = []
    monkeypatch.setattr(example.plt, "close", figures.append)
    paths = example.plot_figures(model, X, y, tmp_path, max_points=50)
    assert paths["regression"].stat().st_size > 1000
    (figure,) = figures
    scatter_ax, importance_ax = figure.axes[:2]
    assert scatter_ax.collections[0].get_offsets().shape == (50, 2)
    np.testing.assert_allclose(scatter_ax.collections[0].get_offsets()[:, 0], y.iloc[:50])
    assert scatter_ax.get_title().startswith("predicted vs true (50 rows), R^2 = ")
    assert importance_ax.get_title() == "feature importance (200 rows)"
    labels = {label.get_text() for label in importance_ax.get_yticklabels()}
    assert labels == set(X.columns)


def test_plot_quantile_regression_measures_and_draws_the_interval(tmp_path, monkeypatch):
    example = _load_example("plot_quantile_regression")
    X, y = load_california_housing(return_X_y=True)
    X, y = X.iloc[:300], y.iloc[:300]
    estimator = SparseTabNetRegressor(
        n_d=4, n_a=4, n_steps=1, batch_size=64, virtual_batch_size=32, max_epochs=2, random_state=0
    )
    low_model, high_model = example.fit_interval(estimator, X, y)
    assert (low_model.loss, high_model.loss) == ("quantile", "quantile")
    assert (low_model.quantile, high_model.quantile) == (0.1, 0.9)
    assert estimator.loss == "squared_error" and not hasattr(estimator, "n_iter_")  # cloned, not fitted
    result = example.interval_coverage(low_model, high_model, X, y)
    low, high = low_model.predict(X), high_model.predict(X)
    assert result["coverage"] == pytest.approx(np.mean((low <= y) & (y <= high)))
    assert result["coverage"] + result["below"] + result["above"] == pytest.approx(1.0, abs=result["crossed"] + 1e-12)
    figures = []
    monkeypatch.setattr(example.plt, "close", figures.append)
    paths = example.plot_figures(low_model, high_model, X, y, tmp_path, max_points=40)
    assert paths["quantile_interval"].stat().st_size > 1000
    (figure,) = figures
    interval_ax, group_ax = figure.axes
    title = f"0.1-0.9 quantile interval of 40 rows; coverage {result['coverage']:.3f} on all 300"
    assert interval_ax.get_title() == title
    heights = [bar.get_height() for bar in group_ax.patches]
    assert len(heights) == 5 and np.mean(heights) == pytest.approx(result["coverage"])  # five groups of 60 rows


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_search_on_a_cluster_halves_over_epochs(monkeypatch):
    example = _load_example("search_on_a_cluster")
    monkeypatch.setattr(example, "GRID", {"n_steps": [1, 2, 3]})
    X, y = make_syn(1, n_samples=300, random_state=0)[:2]
    search = example.halving_over_epochs(pd.DataFrame(X), y, max_epochs=9, factor=3)
    # 3 candidates for 1 epoch, the best one for 3 (3 // 3 = 1 kept), then none left for 9
    assert list(search.cv_results_["n_resources"]) == [1, 1, 1, 3]
    assert search.best_estimator_.n_iter_ == 3 and search.best_estimator_.max_epochs == 3


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_fit_out_of_core_streams_a_parquet_file(tmp_path, capsys):
    pytest.importorskip("pyarrow")
    example = _load_example("fit_out_of_core")
    scores = example.main(max_epochs=1, folder=tmp_path, rows=3000)
    assert (tmp_path / "adult_train.parquet").stat().st_size > 10_000
    # One epoch on 3,000 rows: 0.76 (every row "<=50K") is the floor; both fits typically score 0.80-0.84.
    assert set(scores) == {"streamed", "in memory"} and all(0.5 < score <= 1 for score in scores.values())
    assert "3,000 training rows read from adult_train.parquet" in capsys.readouterr().out
