"""Prediction intervals with quantile regression: California house values.
=======================================================================

Fits two ``SparseTabNetRegressor(loss="quantile")`` models on 80% of the bundled California
housing data (:func:`sparsetab.datasets.load_california_housing`: 20,640 census block groups,
eight numeric columns, the median house value in $100,000 as target), one at ``quantile=0.1``
and one at ``quantile=0.9``: together they give an 80% prediction interval for each row. The
pinball loss of Koenker and Bassett (1978) makes each model estimate its conditional quantile,
so on held-out rows about 10% of the values should fall below the lower bound and 10% above the
upper one. The script prints the measured coverage of the interval on the 20% test rows and its
mean width, and writes ``quantile_interval.png``:

- left: the interval and the true value of test rows, sorted by the interval's midpoint (values
  outside their interval in red);
- right: the measured coverage in each fifth of the test rows by median income, against the
  nominal 80%: the interval is conditional on the row, not only right on average.

Runs in about 45 s on 2 CPU cores (one torch thread, two fits of at most 30 epochs, early
stopping on the validation pinball loss). The measured coverage was 0.784 (0.101 of the test
rows below the interval, 0.115 above it), with a mean width of 0.94 ($94,000); see the user guide's
"Regression losses" (``docs/user_guide/regression_losses.md``). Run::

    python examples/plot_quantile_regression.py [OUTPUT_DIR]

The figure goes to ``OUTPUT_DIR`` (default: ``examples/output/`` next to this file).

The figures as committed (``docs/images/``), drawn by this script:

.. image:: /images/quantile_interval.png
   :alt: An 80% interval and its coverage by median income
"""

# sphinx_gallery_thumbnail_path = "images/quantile_interval.png"

import sys
import time
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # write files only; works without a display

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.base import clone  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

from sparsetab import SparseTabNetRegressor  # noqa: E402
from sparsetab.datasets import load_california_housing  # noqa: E402

MAX_EPOCHS = 30
LOWER, UPPER = 0.1, 0.9


def fit_interval(estimator, X, y, lower=LOWER, upper=UPPER):
    """Fit ``estimator`` twice with ``loss="quantile"``: at the ``lower`` and at the ``upper`` level.

    Parameters
    ----------
    estimator : SparseTabNetRegressor
        The settings of both fits; it is cloned, not fitted.
    X : pandas.DataFrame of shape (n_samples, n_features)
        Training rows.
    y : array-like of shape (n_samples,)
        Their targets.
    lower, upper : float, default=0.1, 0.9
        The quantile levels of the interval's bounds.

    Returns
    -------
    low_model, high_model : SparseTabNetRegressor
        The fitted models of the lower and the upper bound.
    """
    models = []
    for level in (lower, upper):
        model = clone(estimator).set_params(loss="quantile", quantile=level)
        with warnings.catch_warnings():  # MAX_EPOCHS is kept small on purpose, to run fast
            warnings.simplefilter("ignore", ConvergenceWarning)
            models.append(model.fit(X, y))
    return tuple(models)


def interval_coverage(low_model, high_model, X, y):
    """The share of rows whose value falls inside their predicted interval, and the interval's mean width.

    Parameters
    ----------
    low_model, high_model : SparseTabNetRegressor
        Fitted models of the lower and the upper bound.
    X : pandas.DataFrame of shape (n_samples, n_features)
        Held-out rows.
    y : array-like of shape (n_samples,)
        Their true values.

    Returns
    -------
    dict
        ``coverage`` (share of rows with ``low <= y <= high``), ``below`` and ``above`` (shares
        under the lower and over the upper bound), ``mean_width`` (mean of ``high - low``) and
        ``crossed`` (share of rows whose lower bound exceeds the upper one: the two models are
        fitted separately, so nothing forbids it).
    """
    y = np.asarray(y, dtype=float)
    low, high = low_model.predict(X), high_model.predict(X)
    return {
        "coverage": float(np.mean((low <= y) & (y <= high))),
        "below": float(np.mean(y < low)),
        "above": float(np.mean(y > high)),
        "mean_width": float(np.mean(high - low)),
        "crossed": float(np.mean(low > high)),
    }


def plot_figures(low_model, high_model, X, y, output_dir, *, max_points=150, by="MedInc", n_groups=5):
    """Write ``quantile_interval.png``: the intervals of some rows, and the coverage by groups of rows.

    Parameters
    ----------
    low_model, high_model : SparseTabNetRegressor
        Fitted models of the lower and the upper bound (their ``quantile`` labels the plot).
    X : pandas.DataFrame of shape (n_samples, n_features)
        Held-out rows.
    y : array-like of shape (n_samples,)
        Their true values.
    output_dir : pathlib.Path
        Folder of the PNG file; created if missing.
    max_points : int, default=150
        Rows drawn in the left panel (the first ones, sorted by the interval's midpoint).
    by : str, default="MedInc"
        The column whose quantile groups the right panel compares.
    n_groups : int, default=5
        Number of groups of equal size by ``by``.

    Returns
    -------
    paths : dict of str to pathlib.Path
        The written file, keyed ``"quantile_interval"``.
    """
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    y = np.asarray(y, dtype=float)
    low, high = low_model.predict(X), high_model.predict(X)
    nominal = high_model.quantile - low_model.quantile
    inside = (low <= y) & (y <= high)

    figure, (interval_ax, group_ax) = plt.subplots(
        1, 2, figsize=(11, 4.5), layout="constrained", gridspec_kw={"width_ratios": [1.6, 1]}
    )
    shown = np.arange(min(len(y), max_points))
    order = shown[np.argsort((low[shown] + high[shown]) / 2, kind="stable")]
    position = np.arange(len(order))
    interval_ax.vlines(position, low[order], high[order], color="tab:blue", alpha=0.5, linewidth=2)
    colours = np.where(inside[order], "black", "tab:red")
    interval_ax.scatter(position, y[order], s=8, c=colours, zorder=3)
    interval_ax.set_xlabel("test row, sorted by the interval's midpoint")
    interval_ax.set_ylabel("median house value ($100,000)")
    interval_ax.set_title(
        f"{low_model.quantile:g}-{high_model.quantile:g} quantile interval of {len(order)} rows; "
        f"coverage {np.mean(inside):.3f} on all {len(y)}"
    )

    groups = np.array_split(np.argsort(np.asarray(X[by], dtype=float), kind="stable"), n_groups)
    coverage = [float(np.mean(inside[group])) for group in groups]
    group_ax.bar(np.arange(n_groups), coverage, color="tab:blue")
    group_ax.axhline(nominal, color="black", linestyle="--", linewidth=1, label=f"nominal {nominal:.0%}")
    group_ax.set_xticks(np.arange(n_groups), [f"{k + 1}" for k in range(n_groups)])
    group_ax.set_xlabel(f"fifth of the test rows by {by} (1: lowest)" if n_groups == 5 else f"group by {by}")
    group_ax.set_ylabel("measured coverage")
    group_ax.set_ylim(0, 1.1)
    group_ax.set_title(f"coverage by {by}")
    group_ax.legend(loc="upper right")

    paths = {"quantile_interval": output_dir / "quantile_interval.png"}
    figure.savefig(paths["quantile_interval"], dpi=90)
    plt.close(figure)
    return paths


def main(output_dir):
    X, y = load_california_housing(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)
    estimator = SparseTabNetRegressor(
        n_d=16,
        n_a=16,
        n_steps=4,
        batch_size=1024,
        virtual_batch_size=128,
        max_epochs=MAX_EPOCHS,
        early_stopping=True,
        n_jobs=1,
        random_state=0,
    )
    start = time.perf_counter()
    low_model, high_model = fit_interval(estimator, X_train, y_train)
    print(
        f"fit of the {LOWER:g} and {UPPER:g} quantiles on {len(X_train)} rows: {time.perf_counter() - start:.1f} s, "
        f"{low_model.n_iter_} and {high_model.n_iter_} epochs"
    )
    with warnings.catch_warnings():
        # One test row has an AveOccup far outside the training range: predict says so (and clips it) at each call.
        warnings.filterwarnings("ignore", message=".*far outside the range seen at fit", category=UserWarning)
        result = interval_coverage(low_model, high_model, X_test, y_test)
        paths = plot_figures(low_model, high_model, X_test, y_test, output_dir)
    print(
        f"test rows: {len(X_test)}; coverage of the {UPPER - LOWER:.0%} interval: {result['coverage']:.3f} "
        f"({result['below']:.3f} below, {result['above']:.3f} above); mean width {result['mean_width']:.3f} "
        f"($100,000); crossed bounds: {result['crossed']:.3f}"
    )
    for path in paths.values():
        print(f"wrote {path}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / "output")
