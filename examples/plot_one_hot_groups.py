"""Explaining a one-hot pipeline per source column, with ``groups``, on the Adult census data.
===========================================================================================

sparsetab embeds string columns itself, one attention group per column, so the usual advice is
to pass them to the estimator as they are. A pipeline that one-hot encodes them anyway gets one
mask value per one-hot column, and a category's share is spread over many columns. This
example fits such a pipeline (a ``ColumnTransformer`` with a ``OneHotEncoder`` that groups the
rare categories, ``min_frequency=50``, in front of a ``SparseTabNetClassifier``) on 8,000
Adult rows and writes ``one_hot_groups.png``: each decision step's mean mask over 2,000 test
rows, on the left over the one-hot columns (the 16 most important), on the right summed per
source column with ``groups=feature_groups_from_transformer(pipeline)``, which reads the
mapping from the fitted encoder (its categories, its infrequent group), not from the names.

Runs in about 20 s on 2 CPU cores. Run::

    python examples/plot_one_hot_groups.py [OUTPUT_DIR]

The figure goes to ``OUTPUT_DIR`` (default: ``examples/output/`` next to this file).

The figures as committed (``docs/images/``), drawn by this script:

.. image:: /images/one_hot_groups.png
   :alt: Masks per one-hot column and summed per source column
"""

# sphinx_gallery_thumbnail_path = "images/one_hot_groups.png"

import sys
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # write files only; works without a display

import matplotlib.pyplot as plt  # noqa: E402
from sklearn.compose import ColumnTransformer, make_column_selector  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.metrics import accuracy_score  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import OneHotEncoder  # noqa: E402

from sparsetab import SparseTabNetClassifier, StepSummaryDisplay, feature_groups_from_transformer  # noqa: E402
from sparsetab.datasets import load_adult  # noqa: E402

N_TRAIN_ROWS = 8000
MAX_EPOCHS = 15


def one_hot_pipeline(estimator, *, min_frequency=50):
    """``estimator`` behind a one-hot encoding of the string columns (the numeric ones pass through)."""
    encode = ColumnTransformer(
        [
            (
                "onehot",
                OneHotEncoder(handle_unknown="infrequent_if_exist", min_frequency=min_frequency, sparse_output=False),
                make_column_selector(dtype_include=[object, "string", "category"]),
            )
        ],
        remainder="passthrough",
        verbose_feature_names_out=False,
    )
    return make_pipeline(encode, estimator)


def plot_figures(pipeline, X, output_dir, *, top_k=16):
    """Write the step summaries of ``pipeline`` on ``X``: per one-hot column, and per source column.

    Parameters
    ----------
    pipeline : sklearn.pipeline.Pipeline
        A fitted ``one_hot_pipeline``.
    X : pandas.DataFrame of shape (n_samples, n_features)
        Rows to explain, as the pipeline takes them.
    output_dir : pathlib.Path
        Folder of the PNG file; created if missing.
    top_k : int, default=16
        One-hot columns shown in the left panel.

    Returns
    -------
    paths : dict of str to pathlib.Path
        The written file, keyed ``"groups"``.
    """
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    groups = feature_groups_from_transformer(pipeline)
    n_columns = sum(len(columns) for columns in groups.values())
    figure, (left, right) = plt.subplots(
        1, 2, figsize=(14.0, 5.8), width_ratios=[min(top_k, n_columns) + 3, len(groups) + 3], layout="constrained"
    )
    StepSummaryDisplay.from_estimator(pipeline, X, top_k=top_k, ax=left)
    left.set_title(f"per one-hot column (the {min(top_k, n_columns)} most important of {n_columns})")
    StepSummaryDisplay.from_estimator(pipeline, X, groups=groups, ax=right)
    right.set_title(f"summed per source column ({len(groups)} columns)")
    figure.suptitle(f"mean mask per decision step over {len(X)} rows")
    paths = {"groups": output_dir / "one_hot_groups.png"}
    figure.savefig(paths["groups"], dpi=90)
    plt.close(figure)
    return paths


def main(output_dir):
    X_train, y_train = load_adult(subset="train", return_X_y=True)
    X_test, y_test = load_adult(subset="test", return_X_y=True)
    X_train = X_train.sample(n=N_TRAIN_ROWS, random_state=0)
    y_train = y_train.loc[X_train.index]
    pipeline = one_hot_pipeline(
        SparseTabNetClassifier(max_epochs=MAX_EPOCHS, batch_size=512, virtual_batch_size=128, n_jobs=1, random_state=0)
    )
    with warnings.catch_warnings():  # MAX_EPOCHS is kept small on purpose, to run fast
        warnings.simplefilter("ignore", ConvergenceWarning)
        pipeline.fit(X_train, y_train)
    print(f"test accuracy (one-hot pipeline): {accuracy_score(y_test, pipeline.predict(X_test)):.4f}")
    for path in plot_figures(pipeline, X_test.head(2000), output_dir).values():
        print(f"wrote {path}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / "output")
