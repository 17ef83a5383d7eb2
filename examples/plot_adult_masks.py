"""Feature masks and importances of TabNet on the Adult census data.
=================================================================

Fits a ``SparseTabNetClassifier`` on 16,000 of the bundled Adult training rows (raw
DataFrame, string columns embedded automatically; early stopping on a validation split, on by
default above 10,000 rows) and writes five figures with the displays of
:mod:`sparsetab.inspection`:

- ``adult_step_summary.png``: which features each decision step uses (each step's mean mask);
- ``adult_masks.png``: each decision step's feature mask and the aggregate mask of 40 test rows,
  features sorted by importance;
- ``adult_importances.png``: the mean importance of each feature over the test rows, with the
  spread across rows as error bars;
- ``adult_sample.png``: one test row's masks, step by step;
- ``adult_history.png``: training loss and validation score per epoch, the restored epoch marked.

Runs in about half a minute on 2 CPU cores (one torch thread: on a busy machine extra threads
wait for each other). Run::

    python examples/plot_adult_masks.py [OUTPUT_DIR]

The figures go to ``OUTPUT_DIR`` (default: ``examples/output/`` next to this file).

The figures as committed (``docs/images/``), drawn by this script:

.. image:: /images/adult_step_summary.png
   :alt: Adult: which features each decision step uses

.. image:: /images/adult_masks.png
   :alt: Adult: feature masks per decision step

.. image:: /images/adult_importances.png
   :alt: Adult: feature importances

.. image:: /images/adult_history.png
   :alt: Adult: training history

.. image:: /images/adult_sample.png
   :alt: Adult: one row's masks
"""

# sphinx_gallery_thumbnail_path = "images/adult_step_summary.png"

import sys
import time
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # write files only; works without a display

import matplotlib.pyplot as plt  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.metrics import accuracy_score  # noqa: E402

from sparsetab import (  # noqa: E402
    FeatureImportanceDisplay,
    FeatureMaskDisplay,
    SampleExplanationDisplay,
    SparseTabNetClassifier,
    StepSummaryDisplay,
    TrainingHistoryDisplay,
)
from sparsetab.datasets import load_adult  # noqa: E402

N_TRAIN_ROWS = 16000
MAX_EPOCHS = 20


def plot_figures(model, X, output_dir, *, n_rows=40, sample_index=0):
    """Write the mask, importance and single-row figures of ``model`` on the rows of ``X``.

    Parameters
    ----------
    model : SparseTabNetClassifier or SparseTabNetRegressor
        A fitted model.
    X : pandas.DataFrame of shape (n_samples, n_features)
        Rows to explain (the first ``n_rows`` go into the mask figure).
    output_dir : pathlib.Path
        Folder of the PNG files; created if missing.
    n_rows : int, default=40
        Rows shown in the mask figure.
    sample_index : int, default=0
        Row of ``X`` shown in the single-row figure.

    Returns
    -------
    paths : dict of str to pathlib.Path
        The written files, keyed ``"step_summary"``, ``"masks"``, ``"importances"``, ``"sample"`` and
        ``"history"``.
    """
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    paths = {}
    displays = {
        "step_summary": StepSummaryDisplay.from_estimator(model, X),
        "masks": FeatureMaskDisplay.from_estimator(model, X, max_samples=n_rows, top_k=10),
        "importances": FeatureImportanceDisplay.from_estimator(model, X, error_bars=True),
        "sample": SampleExplanationDisplay.from_estimator(model, X, sample_index),
        "history": TrainingHistoryDisplay.from_estimator(model),
    }
    for name, display in displays.items():
        paths[name] = output_dir / f"adult_{name}.png"
        display.figure_.savefig(paths[name], dpi=90)
        plt.close(display.figure_)
    return paths


def main(output_dir):
    X_train, y_train = load_adult(subset="train", return_X_y=True)
    X_test, y_test = load_adult(subset="test", return_X_y=True)
    X_train = X_train.sample(n=N_TRAIN_ROWS, random_state=0)
    y_train = y_train.loc[X_train.index]
    model = SparseTabNetClassifier(
        max_epochs=MAX_EPOCHS, batch_size=512, virtual_batch_size=128, n_jobs=1, random_state=0
    )
    start = time.perf_counter()
    with warnings.catch_warnings():  # MAX_EPOCHS is kept small on purpose, to run fast
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X_train, y_train)
    print(f"fit on {N_TRAIN_ROWS} Adult rows: {time.perf_counter() - start:.1f} s, {model.n_iter_} epochs")
    print(f"test accuracy: {accuracy_score(y_test, model.predict(X_test)):.4f}")
    for path in plot_figures(model, X_test.head(2000), output_dir).values():
        print(f"wrote {path}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / "output")
