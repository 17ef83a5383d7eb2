"""sparsetab quickstart: TabNet on the Adult census data, metrics and per-step feature masks.
==========================================================================================

Fits ``SparseTabNetClassifier()`` with its default hyperparameters (and a fixed
``random_state``) on the raw Adult training DataFrame, exactly as ``pandas.read_csv`` gives it
(string columns are embedded automatically), prints the test accuracy, ROC AUC and fit time,
and writes a PNG drawn with the displays of :mod:`sparsetab.inspection`: which features each
decision step uses over the test rows (``StepSummaryDisplay``), and the per-step feature masks
of a few test rows (``FeatureMaskDisplay``).

Run::

    python examples/quickstart.py [--output-dir DIR] [--rows N]

The figure as committed (``docs/quickstart_masks.png``), drawn by this script:

.. image:: /quickstart_masks.png
   :alt: Per-step feature masks on Adult
"""

# sphinx_gallery_thumbnail_path = "quickstart_masks.png"

import argparse
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # write files only; works without a display

import matplotlib.pyplot as plt  # noqa: E402
from sklearn.metrics import accuracy_score, roc_auc_score  # noqa: E402

from sparsetab import FeatureMaskDisplay, SparseTabNetClassifier, StepSummaryDisplay  # noqa: E402
from sparsetab.datasets import load_adult  # noqa: E402


def plot_masks(model, X, path, *, rows=12):
    """One figure of two displays: each step's mean mask over ``X``, and the masks of its first rows.

    Top, ``StepSummaryDisplay``: one heatmap row per decision step (and the aggregate), one column
    per feature, sorted by importance. Bottom, ``FeatureMaskDisplay``: each step's mask and the
    aggregate mask of the first ``rows`` rows, the features sorted by their importance over those rows.
    """
    n_steps = model.n_steps
    figure = plt.figure(figsize=(4.6 * (n_steps + 1), 9.0), layout="constrained")
    top, bottom = figure.subfigures(2, 1, height_ratios=[1.0, 1.25])
    summary = StepSummaryDisplay.from_estimator(model, X, ax=top.subplots())
    FeatureMaskDisplay.from_estimator(
        model, X.iloc[:rows], max_samples=rows, sort_features=True, ax=bottom.subplots(1, n_steps + 1, sharey=True)
    )
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return summary


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
    restored = "" if model.best_iteration_ is None else f", the model of epoch {model.best_iteration_ + 1} kept"
    print(f"fit time       {fit_seconds:.1f} s ({model.n_iter_} epochs{restored})")
    print("feature importances (training rows):")
    for name, value in sorted(zip(model.feature_names_in_, model.feature_importances_), key=lambda item: -item[1]):
        print(f"  {name:<16}{value:.3f}")

    args.output_dir.mkdir(parents=True, exist_ok=True)
    path = args.output_dir / "quickstart_masks.png"
    plot_masks(model, X_test, path, rows=args.rows)
    print(f"mask figure    {path}")


if __name__ == "__main__":
    main()
