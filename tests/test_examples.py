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
