"""The four entmax modes side by side on Syn4, chosen with GridSearchCV.
=====================================================================

``entmax_mode`` picks the map that turns each decision step's attention scores into a feature
mask: ``"sparsemax"`` (alpha = 2), ``"entmax15"`` (alpha = 1.5), ``"constant"`` (alpha-entmax at
a fixed ``entmax_alpha``, here 1.25) or ``"adaptive"`` (one alpha per step, learned from
``entmax_alpha``, here starting at 1.25). The smaller alpha, the denser the masks. This script
runs a :class:`~sklearn.model_selection.GridSearchCV` over ``entmax_mode`` on 3,000 Syn4 rows
(``sparsetab.datasets.make_syn(4)``; 2 folds, ROC AUC), refits every mode on all of them and
writes ``entmax_modes.png``:

- the cross-validated and the test ROC AUC of each mode;
- the mask sparsity of each mode: the share of exact zeros in ``explain(X_test).step_masks``;
- the alpha of each decision step over the epochs: learned for ``"adaptive"``, fixed otherwise.

A small network trained for few epochs, to run in about half a minute on 2 CPU cores (one
torch thread); the scores are those of a short run, not of a tuned model. Run::

    python examples/plot_entmax_modes.py [OUTPUT_DIR]

The figure goes to ``OUTPUT_DIR`` (default: ``examples/output/`` next to this file).

The figures as committed (``docs/images/``), drawn by this script:

.. image:: /images/entmax_modes.png
   :alt: The four entmax modes on Syn4
"""

# sphinx_gallery_thumbnail_path = "images/entmax_modes.png"

import sys
import time
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # write files only; works without a display

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from sklearn.base import clone  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.metrics import roc_auc_score  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402

from sparsetab import SparseTabNetClassifier  # noqa: E402
from sparsetab.datasets import make_syn  # noqa: E402

MODES = ["sparsemax", "entmax15", "constant", "adaptive"]
N_TRAIN_ROWS = 3000
MAX_EPOCHS = 25


def compare_modes(estimator, X, y, X_test, y_test, *, cv=2):
    """Cross-validate every ``entmax_mode`` with GridSearchCV, then refit and score each one.

    Parameters
    ----------
    estimator : SparseTabNetClassifier
        Unfitted model; only its ``entmax_mode`` varies.
    X : array-like of shape (n_samples, n_features)
        Training rows.
    y : array-like of shape (n_samples,)
        Binary training labels.
    X_test : array-like of shape (n_test, n_features)
        Test rows: scored and explained.
    y_test : array-like of shape (n_test,)
        Binary test labels.
    cv : int, default=2
        Number of folds of the grid search.

    Returns
    -------
    summary : pandas.DataFrame
        One row per mode (in the order of ``MODES``) with columns ``cv_score`` and ``cv_std``
        (mean and standard deviation of the ROC AUC over the folds), ``test_score`` (ROC AUC
        of the refitted model on the test rows) and ``mask_sparsity`` (share of exact zeros
        in its ``explain(X_test).step_masks``).
    models : dict of str to SparseTabNetClassifier
        The model of each mode, fitted on all of ``X``.
    """
    search = GridSearchCV(estimator, {"entmax_mode": MODES}, scoring="roc_auc", cv=cv, refit=False)
    search.fit(X, y)
    cv_results = pd.DataFrame(search.cv_results_).set_index("param_entmax_mode")
    rows, models = [], {}
    for mode in MODES:
        models[mode] = clone(estimator).set_params(entmax_mode=mode).fit(X, y)
        step_masks = models[mode].explain(X_test).step_masks
        rows.append(
            {
                "cv_score": float(cv_results.loc[mode, "mean_test_score"]),
                "cv_std": float(cv_results.loc[mode, "std_test_score"]),
                "test_score": float(roc_auc_score(y_test, models[mode].predict_proba(X_test)[:, 1])),
                "mask_sparsity": float(np.mean(step_masks == 0)),
            }
        )
    return pd.DataFrame(rows, index=pd.Index(MODES, name="entmax_mode")), models


def plot_figures(summary, models, output_dir):
    """Write ``entmax_modes.png``: scores, mask sparsity and alphas of each mode.

    Parameters
    ----------
    summary : pandas.DataFrame
        As returned by :func:`compare_modes`.
    models : dict of str to SparseTabNetClassifier
        The fitted model of each mode, as returned by :func:`compare_modes`.
    output_dir : pathlib.Path
        Folder of the PNG file; created if missing.

    Returns
    -------
    paths : dict of str to pathlib.Path
        The written file, keyed ``"modes"``.
    """
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    modes = list(summary.index)
    positions = np.arange(len(modes))
    figure, (score_ax, sparsity_ax, alpha_ax) = plt.subplots(1, 3, figsize=(14, 4), layout="constrained")

    score_ax.bar(positions - 0.2, summary["cv_score"], 0.4, yerr=summary["cv_std"], capsize=3, label="grid search (CV)")
    test_bars = score_ax.bar(positions + 0.2, summary["test_score"], 0.4, label="refit, test rows")
    score_ax.bar_label(test_bars, fmt="%.3f", fontsize=8)
    score_ax.set_xticks(positions, modes)
    low = float(min(summary["cv_score"].min(), summary["test_score"].min()))
    score_ax.set_ylim(max(0.0, low - 0.1), 1.0)
    score_ax.set_ylabel("ROC AUC")
    score_ax.set_title("score")
    score_ax.legend(fontsize=8, loc="upper left")

    sparsity_bars = sparsity_ax.bar(positions, summary["mask_sparsity"], 0.6, color="tab:green")
    sparsity_ax.bar_label(sparsity_bars, fmt="%.2f", fontsize=8)
    sparsity_ax.set_xticks(positions, modes)
    sparsity_ax.set_ylim(0, 1)
    sparsity_ax.set_ylabel("share of exact zeros in the step masks")
    sparsity_ax.set_title("mask sparsity (test rows)")

    colours = dict(zip(modes, plt.get_cmap("tab10").colors))
    for mode in modes:
        history = np.asarray(models[mode].entmax_alpha_history_)
        epochs = np.arange(1, history.shape[0] + 1)
        if mode == "adaptive":
            for step in range(history.shape[1]):
                alpha_ax.plot(
                    epochs, history[:, step], color=colours[mode], alpha=0.4 + 0.6 * (step + 1) / history.shape[1]
                )
                alpha_ax.annotate(f"step {step + 1}", (epochs[-1], history[-1, step]), fontsize=7)
        else:
            alpha_ax.plot(epochs, history[:, 0], color=colours[mode], linestyle="--")
    for mode in modes:  # one legend entry per mode
        alpha_ax.plot([], [], color=colours[mode], linestyle="-" if mode == "adaptive" else "--", label=mode)
    n_epochs = max(len(model.entmax_alpha_history_) for model in models.values())
    alpha_ax.set_xlim(0.5, n_epochs * 1.18 + 0.5)  # room for the step labels
    alpha_ax.set_ylim(0.95, 2.05)
    alpha_ax.set_xlabel("epoch")
    alpha_ax.set_ylabel("alpha (1 softmax, 2 sparsemax)")
    alpha_ax.set_title("alpha per decision step")
    alpha_ax.legend(fontsize=8, loc="center right")

    figure.suptitle(f"entmax_mode chosen by the grid search: {summary['cv_score'].idxmax()}")
    paths = {"modes": output_dir / "entmax_modes.png"}
    figure.savefig(paths["modes"], dpi=90)
    plt.close(figure)
    return paths


def main(output_dir):
    X, y, _ = make_syn(4, N_TRAIN_ROWS, random_state=0)
    X_test, y_test, _ = make_syn(4, 2000, random_state=1)
    estimator = SparseTabNetClassifier(
        n_d=8,
        n_a=8,
        n_steps=3,
        gamma=1.5,
        lambda_sparse=0.005,
        batch_size=512,
        virtual_batch_size=128,
        momentum=0.3,
        max_epochs=MAX_EPOCHS,
        entmax_alpha=1.25,  # "constant" uses it, "adaptive" starts from it
        n_jobs=1,
        random_state=0,
    )
    start = time.perf_counter()
    with warnings.catch_warnings():  # MAX_EPOCHS is kept small on purpose, to run fast
        warnings.simplefilter("ignore", ConvergenceWarning)
        summary, models = compare_modes(estimator, X, y, X_test, y_test)
    print(f"grid search and refits on {N_TRAIN_ROWS} Syn4 rows: {time.perf_counter() - start:.1f} s")
    print(summary.round(3).to_string())
    print(f"learned alphas (adaptive): {np.round(models['adaptive'].entmax_alphas_, 3).tolist()}")
    for path in plot_figures(summary, models, output_dir).values():
        print(f"wrote {path}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / "output")
