"""Table 4 of ``compare.py``: a tuned cell's search settings (part of its key), its budget plan and its search."""

import math
import time
import warnings

import numpy as np
import pandas as pd
import sklearn

from benchmarks import configs
from benchmarks._cache import json_safe
from benchmarks._datasets import AUC_ERROR
from benchmarks._fitting import fit_once
from sparsetab import SparseTabNetClassifier


def tuning_settings(cell):
    """Budget, halving settings and search space of a tuned cell (part of its key)."""
    model, quick = cell["model"], cell["quick"]
    accepted = SparseTabNetClassifier().get_params().keys() if model == "sparsetab" else ()
    return dict(
        budget_cpu_s=configs.QUICK_TUNING_BUDGET_CPU_S if quick else configs.TUNING_BUDGET_CPU_S,
        factor=configs.HALVING_FACTOR,
        cost_multiplier=configs.COST_MULTIPLIER[model],
        max_candidates=configs.QUICK_MAX_CANDIDATES if quick else configs.MAX_CANDIDATES[model],
        min_resources=configs.QUICK_MIN_RESOURCES if quick else configs.MIN_RESOURCES,
        resource="n_samples",
        cv="PredefinedSplit(fit rows / validation rows)",
        space=configs.describe_space(configs.search_space(model, accepted)),
    )


def _n_classes(y):
    """Number of distinct labels in ``y``."""
    return len(np.unique(y))


def plan_halving(n_samples, default_cpu_s, budget_cpu_s, multiplier, max_candidates, min_resources, factor):
    """Size a HalvingRandomSearchCV (resource n_samples) to a CPU budget.

    A candidate fitted on ``r`` of the ``n_samples`` rows is assumed to cost ``multiplier * default_cpu_s * r /
    n_samples`` CPU seconds. With ``k + 1`` rounds from ``min_resources = n_samples / factor**k`` rows to all rows and
    ``n`` first-round candidates, every round costs about the same, ``n * multiplier * default_cpu_s / factor**k``,
    so the search costs ``(k + 1)`` times that. The plan takes the most rounds ``k + 1`` (at most 5) whose
    first round has at least ``min_resources`` rows and whose affordable ``n`` (at most ``max_candidates``) still
    leaves a candidate for the last round (``n >= factor**k``).

    Parameters
    ----------
    n_samples : int
        Rows given to the search.
    default_cpu_s : float
        CPU seconds of one default fit on all rows.
    budget_cpu_s, multiplier : float
    max_candidates, min_resources, factor : int

    Returns
    -------
    dict
        ``n_candidates``, ``min_resources``, ``rounds``, ``estimated_cpu_s``.
    """
    per_full_fit = max(multiplier * default_cpu_s, 1e-3)

    def estimate(n_candidates, resources, k):
        """Estimated CPU seconds of a plan."""
        return sum(
            math.ceil(n_candidates / factor**i) * per_full_fit * min(resources * factor**i, n_samples) / n_samples
            for i in range(k + 1)
        )

    for k in range(4, -1, -1):
        resources = n_samples // factor**k  # rounded down, so that the last round's resources fit in n_samples
        if k and resources < min_resources:
            continue
        n_candidates = min(int(budget_cpu_s / ((k + 1) * per_full_fit * resources / n_samples)), max_candidates)
        while n_candidates > 1 and estimate(n_candidates, resources, k) > budget_cpu_s:
            n_candidates -= 1  # the rounding up of the later rounds' candidates
        if n_candidates >= factor**k or k == 0:
            n_candidates = max(n_candidates, 1)
            estimated = estimate(n_candidates, resources, k)
            return dict(n_candidates=n_candidates, min_resources=resources, rounds=k + 1, estimated_cpu_s=estimated)
    raise AssertionError("unreachable")


def run_tuned(data, cell, estimator):
    """HalvingRandomSearchCV of ``estimator`` within the CPU budget, then the refit of the best candidate.

    The search gets the training rows (fit rows then validation rows) with ``PredefinedSplit``: one split,
    candidates train on the fit rows and are scored on the validation rows (the same rows the TabNets early-stop on
    elsewhere), the resource is the number of rows (both parts subsampled alike in the early rounds). The scorer is
    the one of the error (accuracy, ROC AUC for :data:`AUC_ERROR`, RMSE). The best parameters are then refitted by
    the single-fit protocol (sparsetab: fit rows, early stopping on the validation rows; HistGradientBoosting: all
    the training rows) and scored on the test rows.
    """
    from sklearn.experimental import enable_halving_search_cv  # noqa: F401
    from sklearn.model_selection import HalvingRandomSearchCV, PredefinedSplit

    model, task, name = cell["model"], data["task"], data["name"]
    settings = tuning_settings(cell)
    accepted = estimator.get_params().keys()
    if model == "sparsetab":
        X = pd.concat([data["X_fit"], data["X_val"]])
    else:
        X = data["X_train_cat"].loc[np.concatenate([data["X_fit"].index, data["X_val"].index])]
    y = np.concatenate([data["y_fit"], data["y_val"]])
    test_fold = np.r_[np.full(len(data["X_fit"]), -1), np.zeros(len(data["X_val"]), dtype=int)]
    min_resources = settings["min_resources"]
    if task == "classification":
        min_resources = max(min_resources, 20 * _n_classes(y))
    plan = plan_halving(
        len(X),
        cell["default_cpu_s"],
        settings["budget_cpu_s"],
        settings["cost_multiplier"],
        settings["max_candidates"],
        min_resources,
        settings["factor"],
    )
    scoring = "neg_root_mean_squared_error" if task == "regression" else "roc_auc" if name in AUC_ERROR else "accuracy"
    search = HalvingRandomSearchCV(
        estimator,
        configs.search_space(model, accepted),
        n_candidates=plan["n_candidates"],
        factor=settings["factor"],
        resource="n_samples",
        min_resources=plan["min_resources"],
        cv=PredefinedSplit(test_fold),
        scoring=scoring,
        refit=False,
        error_score=np.nan,
        random_state=cell["seed"],
        n_jobs=1,
    )
    start, start_cpu = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X, y)
    search_s, search_cpu_s = time.perf_counter() - start, time.process_time() - start_cpu
    scores = np.asarray(search.cv_results_["mean_test_score"], dtype=float)
    best = dict(search.best_params_)
    refit = sklearn.clone(estimator).set_params(**best)
    result = fit_once(data, refit, model, {})
    result.update(
        search_s=search_s,
        search_cpu_s=search_cpu_s,
        default_cpu_s=cell["default_cpu_s"],
        plan=plan,
        n_candidates=[int(n) for n in search.n_candidates_],
        n_resources=[int(n) for n in search.n_resources_],
        failed_candidates=int(np.isnan(scores).sum()),
        best_params=json_safe(best),
        best_validation_score=float(search.best_score_),
        scoring=scoring,
    )
    return result
