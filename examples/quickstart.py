"""sparsetab quickstart: TabNet on the Adult census data, metrics and per-step feature masks.

Fits ``SparseTabNetClassifier()`` with its default hyperparameters (and a fixed
``random_state``) on the raw Adult training DataFrame, exactly as ``pandas.read_csv`` gives it
(string columns are embedded automatically), prints the test accuracy, ROC AUC and fit time,
and writes a PNG of the per-step feature masks of a few test rows.

Run::

    python examples/quickstart.py [--output-dir DIR] [--rows N]
"""

import argparse
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # write files only; works without a display

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.metrics import accuracy_score, roc_auc_score  # noqa: E402

from sparsetab import SparseTabNetClassifier  # noqa: E402
from sparsetab.datasets import load_adult  # noqa: E402


def plot_masks(explanation, entmax_mode, path):
    """Heatmaps of each decision step's mask and of the aggregate importances, one row per sample."""
    panels = [
        (f"step {i + 1} mask ({entmax_mode})", explanation.step_masks[:, i])
        for i in range(explanation.step_masks.shape[1])
    ]
    panels.append(("aggregate importance", explanation.importances))
    names = explanation.feature_names
    figure, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 0.35 * len(names) + 2.5), sharey=True)
    for ax, (title, values) in zip(axes, panels):
        image = ax.imshow(values.T, aspect="auto", cmap="viridis", vmin=0.0, vmax=1.0)
        ax.set_title(title)
        ax.set_xlabel("test row")
        ax.set_xticks(np.arange(values.shape[0]), labels=[str(i) for i in range(values.shape[0])])
    axes[0].set_yticks(np.arange(len(names)), labels=names)
    figure.colorbar(image, ax=axes, shrink=0.8, label="mask value")
    figure.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(figure)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output-dir", type=Path, default=Path(__file__).resolve().parent / "output")
    parser.add_argument("--rows", type=int, default=12, help="test rows shown in the mask figure")
    args = parser.parse_args()

    X_train, y_train = load_adult(subset="train", return_X_y=True)
    X_test, y_test = load_adult(subset="test", return_X_y=True)
    model = SparseTabNetClassifier(random_state=0)
    start = time.perf_counter()
    model.fit(X_train, y_train)
    fit_seconds = time.perf_counter() - start

    proba = model.predict_proba(X_test)[:, list(model.classes_).index(">50K")]
    accuracy = accuracy_score(y_test, model.predict(X_test))
    auc = roc_auc_score(y_test == ">50K", proba)
    print(f"Adult (official split): {len(X_train)} train rows, {len(X_test)} test rows")
    print(f"test accuracy  {accuracy:.4f}")
    print(f"test ROC AUC   {auc:.4f}")
    restored = "" if model.best_iteration_ is None else f", weights of epoch {model.best_iteration_ + 1} restored"
    print(f"fit time       {fit_seconds:.1f} s ({model.n_iter_} epochs{restored})")
    print("feature importances (training rows):")
    for name, value in sorted(zip(model.feature_names_in_, model.feature_importances_), key=lambda item: -item[1]):
        print(f"  {name:<16}{value:.3f}")

    args.output_dir.mkdir(parents=True, exist_ok=True)
    path = args.output_dir / "quickstart_masks.png"
    plot_masks(model.explain(X_test.iloc[: args.rows]), model.entmax_mode, path)
    print(f"mask figure    {path}")


if __name__ == "__main__":
    main()
