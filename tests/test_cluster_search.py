"""Searches on a cluster: a GridSearchCV under joblib's dask backend equals the same search run in-process."""

import warnings

import joblib
import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV

from sparsetab import SparseTabNetClassifier

distributed = pytest.importorskip("distributed", reason="dask.distributed is in the dev extra")

# Wall-clock entries differ from run to run; every other entry of cv_results_ must be equal.
TIMINGS = {"mean_fit_time", "std_fit_time", "mean_score_time", "std_score_time"}


def _search(n_jobs):
    # n_jobs=1 in the estimator: the same torch thread count in-process and in the workers, so that the two
    # runs are comparable bit for bit (results differ at the level of float rounding between thread counts).
    estimator = SparseTabNetClassifier(n_d=4, n_a=4, n_steps=2, max_epochs=3, random_state=0, n_jobs=1)
    return GridSearchCV(estimator, {"entmax_mode": ["sparsemax", "entmax15"]}, cv=2, n_jobs=n_jobs)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_a_search_on_a_two_worker_dask_cluster_equals_the_sequential_search():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 4))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    sequential = _search(n_jobs=None).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the cluster's own start-up chatter
        cluster = distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=None, processes=True
        )
    with cluster, distributed.Client(cluster):
        with joblib.parallel_backend("dask"):
            on_cluster = _search(n_jobs=2).fit(X, y)
    assert on_cluster.cv_results_.keys() == sequential.cv_results_.keys()
    for key, value in sequential.cv_results_.items():
        if key not in TIMINGS:
            np.testing.assert_array_equal(on_cluster.cv_results_[key], value, err_msg=key)
    np.testing.assert_array_equal(on_cluster.predict_proba(X), sequential.predict_proba(X))
