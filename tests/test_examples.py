import importlib.util
from pathlib import Path

import matplotlib
import pandas as pd
import pytest

from sparsetab import SparseTabNetClassifier

matplotlib.use("Agg")
ROOT = Path(__file__).resolve().parents[1]


def _load_example(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_quickstart_mask_figure_has_feature_names(tmp_path, monkeypatch):
    quickstart = _load_example("quickstart")
    X = pd.DataFrame({"colour": ["red", "blue"] * 30, "size": range(60), "weight": [0.5, 1.5, 2.5] * 20})
    y = (X["size"] > 30).astype(int)
    model = SparseTabNetClassifier(n_d=4, n_a=4, n_steps=2, max_epochs=2, random_state=0).fit(X, y)
    figures = []
    monkeypatch.setattr(quickstart.plt, "close", figures.append)
    path = tmp_path / "masks.png"
    quickstart.plot_masks(model.explain(X.iloc[:6]), model.entmax_mode, path)
    assert path.stat().st_size > 1000
    (figure,) = figures
    heatmaps = [ax for ax in figure.axes if ax.get_title()]
    assert [ax.get_title() for ax in heatmaps] == [
        "step 1 mask (sparsemax)",
        "step 2 mask (sparsemax)",
        "aggregate importance",
    ]
    assert [label.get_text() for label in heatmaps[0].get_yticklabels()] == ["colour", "size", "weight"]


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
    assert sorted(paths) == ["history", "importances", "masks", "sample"]
    assert all(path.parent == tmp_path and path.stat().st_size > 1000 for path in paths.values())
    masks, importances, sample, history = figures
    assert [ax.get_title() for ax in masks.axes if ax.get_title()] == [
        "step 1 mask (sparsemax)",
        "step 2 mask (sparsemax)",
        "aggregate mask (sparsemax)",
    ]
    assert sorted(label.get_text() for label in masks.axes[0].get_xticklabels()) == ["colour", "size", "weight"]
    assert importances.axes[0].get_title() == "feature importance (80 rows)"
    assert sample.axes[0].get_title() == "row 3 (sparsemax)"
    assert history.axes[0].get_title() == "training loss"


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
