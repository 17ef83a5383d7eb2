"""Instance-wise feature selection on Syn4: the masks switch with the sign of x11.
===============================================================================

Syn4 (``sparsetab.datasets.make_syn(4)``, TabNet's Table 1) has 11 standard normal features;
the label depends on ``x1, x2`` when ``x11 < 0`` and on ``x3..x6`` otherwise. A TabNet that
selects features per row should therefore look at {x1, x2} for the rows with a negative x11 and
at {x3, x4, x5, x6} for the others. This script fits ``SparseTabNetClassifier`` with the
paper's Syn4 hyperparameters (``benchmarks/syn.py``; fewer epochs, to run fast) and writes:

- ``syn4_masks.png``: the masks of 60 test rows sorted by x11, a line where x11 changes sign;
- ``syn4_importances.png``: the mean importance over the rows with x11 < 0 and with x11 >= 0.

Runs in under a minute on 2 CPU cores. Run::

    python examples/plot_syn_switch.py [OUTPUT_DIR]

The figures go to ``OUTPUT_DIR`` (default: ``examples/output/`` next to this file).

The figures as committed (``docs/images/``), drawn by this script:

.. image:: /images/syn4_masks.png
   :alt: Syn4: masks sorted by x11

.. image:: /images/syn4_importances.png
   :alt: Syn4: importances on each side of the switch
"""

# sphinx_gallery_thumbnail_path = "images/syn4_masks.png"

import sys
import time
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # write files only; works without a display

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.metrics import roc_auc_score  # noqa: E402

from sparsetab import FeatureImportanceDisplay, FeatureMaskDisplay, SparseTabNetClassifier  # noqa: E402
from sparsetab.datasets import make_syn  # noqa: E402

# The paper's Syn4-Syn6 hyperparameters, as benchmarks/syn.py paper_hyperparameters(4).
PAPER_SYN4 = dict(
    n_d=16,
    n_a=16,
    n_steps=5,
    gamma=1.5,
    lambda_sparse=0.005,
    batch_size=3000,
    virtual_batch_size=100,
    momentum=0.3,
    learning_rate=0.02,
)
MAX_EPOCHS = 80
COLUMNS = [f"x{j}" for j in range(1, 12)]


def syn4_frame(n_samples, random_state):
    """Syn4 rows as a DataFrame with columns ``x1..x11``, the labels and the relevant-feature mask."""
    X, y, relevant = make_syn(4, n_samples, random_state=random_state)
    return pd.DataFrame(X, columns=COLUMNS), y, relevant


def plot_figures(model, X, output_dir, *, n_rows=60):
    """Write the masks sorted by x11 and the importances on each side of the switch.

    Parameters
    ----------
    model : SparseTabNetClassifier
        A model fitted on Syn4 columns ``x1..x11``.
    X : pandas.DataFrame of shape (n_samples, 11)
        Rows to explain; the first ``n_rows`` go into the mask figure.
    output_dir : pathlib.Path
        Folder of the PNG files; created if missing.
    n_rows : int, default=60
        Rows shown in the mask figure.

    Returns
    -------
    paths : dict of str to pathlib.Path
        The written files, keyed ``"masks"`` and ``"importances"``.
    """
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    paths = {"masks": output_dir / "syn4_masks.png", "importances": output_dir / "syn4_importances.png"}

    masks = FeatureMaskDisplay.from_estimator(model, X, max_samples=n_rows, sort_samples_by="x11")
    n_negative = int(np.sum(X["x11"].to_numpy()[masks.sample_indices_] < 0))
    for ax in masks.axes_:
        ax.axhline(n_negative - 0.5, color="white", linewidth=1.5, linestyle="--")
    masks.figure_.suptitle(
        "Syn4, rows sorted by x11: above the dashed line (x11 < 0) the label depends on x1, x2; below it on x3..x6"
    )
    masks.figure_.savefig(paths["masks"], dpi=90)
    plt.close(masks.figure_)

    negative = X["x11"].to_numpy() < 0
    figure, axes = plt.subplots(1, 2, figsize=(9, 4), sharex=True, layout="constrained")
    for ax, rows, title in [(axes[0], negative, "rows with x11 < 0"), (axes[1], ~negative, "rows with x11 >= 0")]:
        display = FeatureImportanceDisplay.from_estimator(model, X[rows], error_bars=True, ax=ax)
        display.ax_.set_title(f"{title} ({int(rows.sum())} rows)")
    figure.savefig(paths["importances"], dpi=90)
    plt.close(figure)
    return paths


def main(output_dir):
    X, y, _ = syn4_frame(10000, random_state=400)
    X_val, y_val, _ = syn4_frame(10000, random_state=401)
    X_test, y_test, relevant = syn4_frame(2000, random_state=402)
    model = SparseTabNetClassifier(max_epochs=MAX_EPOCHS, n_jobs=1, random_state=4, **PAPER_SYN4)
    start = time.perf_counter()
    with warnings.catch_warnings():  # MAX_EPOCHS is kept small on purpose, to run fast
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, y, X_val=X_val, y_val=y_val)
    print(f"fit on 10,000 Syn4 rows: {time.perf_counter() - start:.1f} s, {model.n_iter_} epochs")
    print(f"test ROC AUC: {roc_auc_score(y_test, model.predict_proba(X_test)[:, 1]):.3f}")
    share = (model.explain(X_test).importances * relevant).sum(axis=1).mean()
    print(f"mean importance on each row's relevant features: {share:.3f}")
    for path in plot_figures(model, X_test, output_dir).values():
        print(f"wrote {path}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / "output")
