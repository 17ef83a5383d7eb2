"""Adult, official split: SparseTabNetClassifier with default hyperparameters over several random
states, with the same defaults without the weight average (``weight_averaging_epochs=None``: the
defaults before it, for issue 32's fit-time bound), the first release's defaults (``configs.py``'s
``old_defaults``) and HistGradientBoostingClassifier measured side by side in the same run.

Prints a Markdown table (test accuracy, ROC AUC, fit seconds, predicted rows per second), the
mean of each column and the fit-time ratios. Not part of the test suite.

Run::

    python -m benchmarks.adult_defaults [--seeds 0 1 2 3 4]
"""

import argparse
import time
import warnings

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import accuracy_score, roc_auc_score

from benchmarks.configs import resolve
from sparsetab import SparseTabNetClassifier
from sparsetab.datasets import load_adult

MODELS = ("sparsetab", "sparsetab (weight_averaging_epochs=None)", "sparsetab (old defaults)", "HistGradientBoosting")


def measure(model, X_train, y_train, X_test, y_test):
    """Fit and score ``model``; return accuracy, ROC AUC, fit seconds and predicted rows/s."""
    start = time.perf_counter()
    model.fit(X_train, y_train)
    fit_seconds = time.perf_counter() - start
    start = time.perf_counter()
    proba = model.predict_proba(X_test)[:, list(model.classes_).index(">50K")]
    predict_seconds = time.perf_counter() - start
    accuracy = accuracy_score(y_test, model.classes_[(proba > 0.5).astype(int)])
    return accuracy, roc_auc_score(y_test == ">50K", proba), fit_seconds, len(X_test) / predict_seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    args = parser.parse_args()
    X_train, y_train = load_adult(subset="train", return_X_y=True)
    X_test, y_test = load_adult(subset="test", return_X_y=True)
    # HistGradientBoosting needs the string columns as pandas categories.
    categorical = X_train.select_dtypes(exclude="number").columns
    X_train_hgb = X_train.astype({column: "category" for column in categorical})
    X_test_hgb = X_test.astype({column: X_train_hgb[column].dtype for column in categorical})
    old_defaults = resolve("old_defaults", SparseTabNetClassifier().get_params())
    # The defaults before the weight average (issue 32), measured in the same run for the fit-time bound.
    configurations = (
        ("sparsetab", {}),
        ("sparsetab (weight_averaging_epochs=None)", {"weight_averaging_epochs": None}),
        ("sparsetab (old defaults)", old_defaults),
    )
    rows = []
    for seed in args.seeds:
        for name, params in configurations:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                model = SparseTabNetClassifier(**{**params, "random_state": seed})
                rows.append((name, seed, *measure(model, X_train, y_train, X_test, y_test)))
        hgb = HistGradientBoostingClassifier(categorical_features="from_dtype", random_state=seed)
        rows.append(("HistGradientBoosting", seed, *measure(hgb, X_train_hgb, y_train, X_test_hgb, y_test)))
    print("| model | random_state | test accuracy | ROC AUC | fit s | predict rows/s |")
    print("|---|---|---|---|---|---|")
    for name, seed, accuracy, auc, fit_seconds, rate in rows:
        print(f"| {name} | {seed} | {accuracy:.4f} | {auc:.4f} | {fit_seconds:.1f} | {rate:,.0f} |")
    means = {name: np.array([row[2:] for row in rows if row[0] == name]).mean(axis=0) for name in MODELS}
    for name, mean in means.items():
        print(f"| {name} mean | | {mean[0]:.4f} | {mean[1]:.4f} | {mean[2]:.1f} | {mean[3]:,.0f} |")
    fit = {name: mean[2] for name, mean in means.items()}
    old = fit["sparsetab (old defaults)"]
    print(f"\nfit time ratio sparsetab / sparsetab (old defaults): {fit['sparsetab'] / old:.2f}x")
    unaveraged = fit["sparsetab (weight_averaging_epochs=None)"]
    print(f"fit time ratio sparsetab / sparsetab (weight_averaging_epochs=None): {fit['sparsetab'] / unaveraged:.2f}x")
    print(f"fit time ratio sparsetab / HistGradientBoosting: {fit['sparsetab'] / fit['HistGradientBoosting']:.1f}x")


if __name__ == "__main__":
    main()
