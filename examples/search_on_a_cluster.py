"""Hyperparameter searches past one process: dask and ray through joblib, halving over epochs, ASHA.
=================================================================================================

sparsetab adds no cluster API of its own: its estimators are plain scikit-learn estimators, so
the engines users already run take them as they are.

- ``joblib.parallel_backend("dask")`` runs a ``GridSearchCV``'s fits on a ``dask.distributed``
  cluster (here a ``LocalCluster`` of 2 single-threaded worker processes on 127.0.0.1; point a
  ``Client`` at your scheduler instead). ``cv_results_`` equal the in-process search's
  (tests/test_cluster_search.py), as long as each fit uses the same number of torch threads
  (``n_jobs=1`` in the estimator here).
- ``joblib.parallel_backend("ray")`` (``ray.util.joblib.register_ray()``) does the same on ray.
- ``HalvingGridSearchCV(resource="max_epochs")`` gives many candidates a few epochs and the best
  ones more, successive halving with epochs as the budget.
- ray tune's ASHA scheduler stops poor trials early while each trial trains epoch by epoch with
  ``partial_fit``.

Run ``python examples/search_on_a_cluster.py`` (dask and the halving search; the ray parts run
when ray is installed: ``pip install "ray[tune]"``).
"""

import importlib.util
import warnings

import joblib
import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.experimental import enable_halving_search_cv  # noqa: F401  (HalvingGridSearchCV is experimental)
from sklearn.model_selection import GridSearchCV, HalvingGridSearchCV, train_test_split

from sparsetab import SparseTabNetClassifier
from sparsetab.datasets import load_adult

GRID = {"entmax_mode": ["sparsemax", "entmax15"], "n_steps": [3, 5]}


def small_estimator(**params):
    """A quick TabNet for the demonstrations: one torch thread per fit, so that workers do not oversubscribe."""
    return SparseTabNetClassifier(max_epochs=10, n_d=16, n_a=16, random_state=0, n_jobs=1, **params)


def dask_search(X, y, n_workers=2):
    """``GridSearchCV`` over :data:`GRID` with its fits on a local dask cluster.

    Parameters
    ----------
    X, y : DataFrame and Series
        Training rows.
    n_workers : int, default=2
        Worker processes of the ``LocalCluster``, one thread each.

    Returns
    -------
    GridSearchCV
        The fitted search.
    """
    from dask.distributed import Client, LocalCluster

    with LocalCluster(n_workers=n_workers, threads_per_worker=1, host="127.0.0.1", dashboard_address=None) as cluster:
        with Client(cluster), joblib.parallel_backend("dask"):
            return GridSearchCV(small_estimator(), GRID, cv=3, n_jobs=-1).fit(X, y)


def ray_search(X, y):
    """The same search with ray's joblib backend (a local ray started here, or the cluster ``ray.init`` finds)."""
    import ray
    from ray.util.joblib import register_ray

    register_ray()
    ray.init(include_dashboard=False, ignore_reinit_error=True, log_to_driver=False)
    try:
        with joblib.parallel_backend("ray"):
            return GridSearchCV(small_estimator(), GRID, cv=3, n_jobs=-1).fit(X, y)
    finally:
        ray.shutdown()


def halving_over_epochs(X, y, max_epochs=27, factor=3):
    """Successive halving with ``max_epochs`` as the resource: 3 epochs for all, 27 for the last ones.

    Parameters
    ----------
    X, y : DataFrame and Series
        Training rows.
    max_epochs : int, default=27
        Epochs of the last round.
    factor : int, default=3
        Candidates kept and resource multiplied per round.

    Returns
    -------
    HalvingGridSearchCV
        The fitted search; ``cv_results_["n_resources"]`` holds each candidate's epochs.
    """
    # early_stopping=False: each round trains exactly the epochs it is given.
    estimator = small_estimator(early_stopping=False)
    search = HalvingGridSearchCV(
        estimator,
        GRID,
        resource="max_epochs",
        min_resources=max_epochs // factor**2,
        max_resources=max_epochs,
        factor=factor,
        cv=3,
    )
    return search.fit(X, y)


def asha_over_partial_fit(X, y, num_samples=4, max_epochs=12):
    """ray tune's ASHA scheduler over trials that train one ``partial_fit`` epoch per report.

    Parameters
    ----------
    X, y : DataFrame and Series
        Training rows (a quarter is held out to score each epoch).
    num_samples : int, default=4
        Trials (configurations) to start.
    max_epochs : int, default=12
        Epochs a trial may reach.

    Returns
    -------
    ray.tune.ResultGrid
        One result per trial; ``get_best_result().config`` is the best configuration.
    """
    import ray
    from ray import tune
    from ray.tune.schedulers import ASHAScheduler

    X_fit, X_val, y_fit, y_val = train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)
    classes = np.unique(y)

    def trial(config):
        # A constant rate: partial_fit may run past any schedule length; ASHA decides when a trial ends.
        model = small_estimator(learning_rate_schedule="constant", **config)
        for _ in range(max_epochs):
            model.partial_fit(X_fit, y_fit, classes=classes)
            tune.report({"accuracy": model.score(X_val, y_val), "epochs": model.n_iter_})

    ray.init(include_dashboard=False, ignore_reinit_error=True, log_to_driver=False)
    try:
        tuner = tune.Tuner(
            trial,
            param_space={"entmax_mode": tune.choice(["sparsemax", "entmax15"]), "n_steps": tune.choice([3, 5])},
            tune_config=tune.TuneConfig(
                metric="accuracy",
                mode="max",
                num_samples=num_samples,
                scheduler=ASHAScheduler(max_t=max_epochs, grace_period=2, reduction_factor=2),
            ),
        )
        return tuner.fit()
    finally:
        ray.shutdown()


def main():
    X, y = load_adult(subset="train", return_X_y=True)
    X, _, y, _ = train_test_split(X, y, train_size=4000, random_state=0, stratify=y)
    warnings.simplefilter("ignore", ConvergenceWarning)
    search = dask_search(X, y)
    print(f"dask GridSearchCV: best {search.best_params_}, accuracy {search.best_score_:.4f}")
    halving = halving_over_epochs(X, y)
    epochs = sorted(set(halving.cv_results_["n_resources"]))
    print(f"HalvingGridSearchCV over max_epochs {epochs}: best {halving.best_params_}, {halving.best_score_:.4f}")
    if importlib.util.find_spec("ray") is None:
        print('ray is not installed (pip install "ray[tune]"): its joblib backend and ASHA are skipped')
        return
    search = ray_search(X, y)
    print(f"ray GridSearchCV: best {search.best_params_}, accuracy {search.best_score_:.4f}")
    results = asha_over_partial_fit(X, y)
    best = results.get_best_result()
    accuracy, epochs = best.metrics["accuracy"], best.metrics["epochs"]
    print(f"ray tune ASHA: best {best.config}, accuracy {accuracy:.4f} after {epochs} epochs")


if __name__ == "__main__":
    main()
