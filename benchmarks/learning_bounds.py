"""Spread of the learning tests' results over random seeds, against the bounds the tests assert.

A test that asserts learning (an accuracy, an R^2, a loss ratio) checks one float trajectory of one
fit. On another CPU the trajectory differs (other SIMD kernels, other summation orders), and so does
the result. A different random_state moves the trajectory at least as much, so the spread over seeds
stands in for the spread over machines: each test's bound should sit several standard deviations from
the mean over seeds, on the side away from it, and still far from chance.

The fits are the tests' own: this script imports tests/conftest.py (the shared configurations) and the
test modules from the ``tests`` package and calls the functions their tests call (learn_multioutput,
learn_pretrainer, ...) with other seeds. scikit-learn's check_classifiers_train / check_regressors_train are
rebuilt from scikit-learn's own data with the estimators of tests/estimators/test_estimator_checks.py.
From the repository root::

    OMP_NUM_THREADS=1 python -m benchmarks.learning_bounds --seeds 30 > benchmarks/results/learning_bounds.md

One torch thread, one process; about 10 minutes for 30 seeds on one core.
"""

import argparse
import sys
import time
import warnings

import numpy as np
import torch

from tests import conftest
from tests import test_pretraining as pretraining
from tests.estimators import test_estimator_checks as estimator_checks
from tests.estimators import test_learning as learning
from tests.estimators import test_missing as missing
from tests.estimators import test_targets as targets
from tests.network import test_pretraining as pretraining_network

FAST = conftest.FAST_PARAMS


def _shifted_target(seed):
    """test_regressor_offset_and_scaled_target_trains_like_centred_one: a contract, measured to show it."""
    from sklearn.datasets import make_regression

    from sparsetab import SparseTabNetRegressor

    X, y = make_regression(300, 5, n_informative=3, noise=1.0, random_state=0)
    params = {**FAST, "random_state": seed}
    centred = SparseTabNetRegressor(max_epochs=40, **params).fit(X, y)
    shifted = SparseTabNetRegressor(max_epochs=40, **params).fit(X, 1000 * y + 1e6)
    difference = np.abs((shifted.predict(X) - 1e6) / 1000 - centred.predict(X)).max() / y.std()
    return {"largest difference / sd(y)": difference}


def _scikit_learn_training_checks(seed):
    """check_classifiers_train and check_regressors_train (scikit-learn 1.9) with random_state=seed."""
    from sklearn.base import clone
    from sklearn.datasets import make_blobs
    from sklearn.preprocessing import StandardScaler, scale
    from sklearn.utils import shuffle
    from sklearn.utils.estimator_checks import _regression_dataset

    classifier, regressor = (clone(estimator).set_params(random_state=seed) for estimator in estimator_checks.TRAINED)
    X, y = make_blobs(n_samples=300, random_state=0)
    X, y = shuffle(X, y, random_state=7)
    X = StandardScaler().fit_transform(X)
    binary = y != 2
    X_reg, y_reg = _regression_dataset()
    y_reg = scale(y_reg)
    return {
        "accuracy, 2 blobs": clone(classifier).fit(X[binary], y[binary]).score(X[binary], y[binary]),
        "accuracy, 3 blobs": clone(classifier).fit(X, y).score(X, y),
        "R^2, regression data": regressor.fit(X_reg, y_reg).score(X_reg, y_reg),
    }


# (test, configuration, metrics of one seed, {metric: (comparison, bound)})
CASES = [
    (
        "estimators/test_targets.py::test_multilabel_indicator_learns_with_one_sigmoid_per_label",
        "400 rows, 30 epochs, lr 0.05",
        lambda seed: targets.learn_multilabel(FAST, seed)[3],
        {"accuracy of the worst label": (">", 0.8)},
    ),
    (
        "estimators/test_targets.py::test_multioutput_learns_one_softmax_per_column",
        "400 rows, 30 epochs, lr 0.05",
        lambda seed: targets.learn_multioutput(FAST, seed)[3],
        {"accuracy, column sign": (">", 0.9), "accuracy, column band": (">", 0.75)},
    ),
    (
        "estimators/test_learning.py::test_tiny_data_set_learns",
        "50 rows, 150 one-step epochs, lr 0.05",
        lambda seed: learning.learn_tiny_data_set(seed)[3],
        {"loss last / first": ("<", 0.5), "accuracy": (">=", 0.9)},
    ),
    (
        "estimators/test_learning.py::test_dataframe_with_string_columns_and_string_labels",
        "400 rows, up to 60 epochs",
        lambda seed: learning.learn_string_columns(FAST, conftest.people_frame, seed)[3],
        {"accuracy": (">", 0.85)},
    ),
    (
        "estimators/test_learning.py::test_regressor_1d_and_2d_targets",
        "300 rows, up to 80 epochs",
        lambda seed: learning.learn_regression(FAST, seed)[3],
        {"R^2, 1-D y": (">", 0.8), "R^2, 2 columns": (">", 0.7)},
    ),
    (
        "estimators/test_learning.py::test_small_categorical_data_predicts_what_it_learned",
        "40 rows, batch 8, up to 20 epochs",
        lambda seed: learning.learn_small_categorical(seed)[3],
        {"accuracy": (">=", 0.95)},
    ),
    (
        "estimators/test_learning.py::test_regressor_offset_and_scaled_target_trains_like_centred_one",
        "300 rows, up to 40 epochs, twice",
        _shifted_target,
        {"largest difference / sd(y)": ("<", 1e-2)},
    ),
    (
        "estimators/test_missing.py::test_missingness_is_learned_and_charged_to_its_column",
        "400 rows, up to 40 epochs, lr 0.05; 200 test rows",
        lambda seed: missing.learn_missingness(FAST, seed)[3],
        {
            "test accuracy": (">=", 0.95),
            "share of test rows with signal importance > 0": (None, None),
            "mean signal importance": (">", 0.1),
        },
    ),
    (
        "test_pretraining.py::test_reconstruction_loss_decreases_and_beats_the_mean",
        "600 rows, 40 epochs, lr 0.03; 300 test rows",
        lambda seed: pretraining.learn_pretrainer(seed)[1],
        {
            "loss last / first": ("<", 0.5),
            "test reconstruction score": ("<", 0.5),
            "untrained / trained score": (">", 2),
        },
    ),
    (
        "test_pretraining.py::test_constant_and_rarely_missing_columns_keep_the_loss_on_its_scale",
        "300 rows, 3 epochs",
        lambda seed: pretraining.learn_constant_columns(seed)[1],
        {"largest epoch loss": ("<", 1000), "reconstruction score": ("<", 1000)},
    ),
    (
        "network/test_pretraining.py::test_training_lowers_the_reconstruction_loss_and_every_parameter_learns",
        "128 rows, 150 Adam steps",
        lambda seed: {"loss after / before": pretraining_network.train_reconstruction(seed)[1]},
        {"loss after / before": ("<", 0.5)},
    ),
    (
        "estimators/test_estimator_checks.py::test_scikit_learn_estimator_checks (check_*_train)",
        "scikit-learn's data, 30 epochs (the classifier's refit of early_stopping=\"auto\", the regressor one pass)",
        _scikit_learn_training_checks,
        {"accuracy, 2 blobs": (">", 0.83), "accuracy, 3 blobs": (">", 0.83), "R^2, regression data": (">", 0.5)},
    ),
]


def _format(value):
    return f"{value:.3g}" if abs(value) >= 1e-3 or value == 0 else f"{value:.2e}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=30, help="random_state 0 .. seeds-1 (0 is the tests' own)")
    arguments = parser.parse_args()
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")  # ConvergenceWarning of the short fits, as in the tests
    started = time.perf_counter()
    rows = []
    for test, config, run, bounds in CASES:
        values = {metric: [] for metric in bounds}
        for seed in range(arguments.seeds):
            metrics = run(seed)
            for metric in bounds:
                values[metric].append(float(metrics[metric]))
        for metric, (comparison, bound) in bounds.items():
            sample = np.array(values[metric])
            mean, sd = sample.mean(), sample.std(ddof=1)
            if bound is None:
                distance, bound_text = "", "(reported only)"
            else:
                bound_text = f"{comparison} {_format(bound)}"
                distance = f"{abs(mean - bound) / sd:.1f}" if sd > 0 else "inf (all seeds equal)"
            rows.append((test, config, metric, mean, sd, sample.min(), sample.max(), bound_text, distance))
        print(f"{test}: done after {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    print(f"# Learning-test bounds over {arguments.seeds} seeds\n")
    print(
        f"random_state 0 to {arguments.seeds - 1} (0 is the tests' own), one torch thread, torch "
        f"{torch.__version__}. Written by `python -m benchmarks.learning_bounds --seeds {arguments.seeds}`. A seed "
        "stands in for a CPU: both move the float trajectory of a fit. Distance: |mean - bound| / sd. Fits of 100 "
        'to 10,000 rows under the default early_stopping="auto" without X_val take its epoch-count refit.\n'
    )
    print("| test | config | metric | mean | sd | min | max | bound | distance (sd) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for test, config, metric, mean, sd, low, high, bound, distance in rows:
        numbers = " | ".join(_format(value) for value in (mean, sd, low, high))
        print(f"| `{test}` | {config} | {metric} | {numbers} | {bound} | {distance} |")


if __name__ == "__main__":
    main()
