"""One fit of a ``compare.py`` cell: the single-fit protocols, the scores and the measurements of a fit."""

import contextlib
import io
import time

import numpy as np
from sklearn.metrics import accuracy_score, mean_squared_error, r2_score, roc_auc_score

from benchmarks._datasets import AUC_ERROR, with_string_categories
from benchmarks._measure import PeakRSS


def error_of(name, task, metric1, metric2):
    """The error of issue 17: 1 - accuracy (1 - ROC AUC for :data:`AUC_ERROR`), RMSE for regression."""
    if task == "regression":
        return metric1
    return 1.0 - (metric2 if name in AUC_ERROR else metric1)


def score(prediction, y, task):
    """``(metric1, metric2)`` of a prediction: accuracy and ROC AUC (macro one-vs-rest for multiclass) for
    classification, RMSE and R^2 for regression.

    Parameters
    ----------
    prediction : tuple or array-like
        ``(classes, proba)`` for classification, the predictions for regression.
    y : numpy.ndarray
        True targets.
    task : {"classification", "regression"}
    """
    if task == "classification":
        classes, proba = prediction
        proba = np.asarray(proba, dtype=np.float64)
        proba /= proba.sum(axis=1, keepdims=True)
        metric1 = accuracy_score(y, np.asarray(classes)[proba.argmax(axis=1)])
        if len(classes) == 2:
            metric2 = roc_auc_score(y == classes[1], proba[:, 1])
        else:
            metric2 = roc_auc_score(y, proba, multi_class="ovr", average="macro", labels=classes)
    else:
        prediction = np.asarray(prediction, dtype=np.float64).ravel()
        metric1 = float(np.sqrt(mean_squared_error(y, prediction)))
        metric2 = r2_score(y, prediction)
    return float(metric1), float(metric2)


def measure(fit, predict, y_test, task, epochs, train=None):
    """Fit, predict the test rows and score one model.

    Parameters
    ----------
    fit : callable
        ``fit()`` trains the model and returns it.
    predict : callable
        ``predict(model)`` returns ``(classes, proba)`` for classification or the predictions for regression,
        on the test rows.
    y_test : numpy.ndarray
        Test targets.
    task : {"classification", "regression"}
        Kind of target.
    epochs : callable
        ``epochs(model)`` returns the number of epochs (boosting: iterations) run.
    train : tuple, default=None
        ``(predict_train, y_train)``: ``predict_train(model)`` predicts the rows given to ``fit`` (as ``predict``
        does the test rows), ``y_train`` their targets; when given, they are scored too (after the timings).

    Returns
    -------
    dict
        ``metric1`` (accuracy or RMSE), ``metric2`` (ROC AUC or R^2), ``fit_s``, ``fit_cpu_s`` (CPU seconds of
        this process, all threads, during fit), ``epochs``, ``predict_rows_s``, ``peak_mib``; with ``train`` also
        ``train_metric1``, ``train_metric2`` and ``train_rows``.
    """
    with PeakRSS() as memory:
        start, start_cpu = time.perf_counter(), time.process_time()
        model = fit()
        fit_seconds, fit_cpu = time.perf_counter() - start, time.process_time() - start_cpu
    start = time.perf_counter()
    prediction = predict(model)
    predict_seconds = time.perf_counter() - start
    metric1, metric2 = score(prediction, y_test, task)
    result = dict(
        metric1=metric1,
        metric2=metric2,
        fit_s=fit_seconds,
        fit_cpu_s=fit_cpu,
        epochs=int(epochs(model)),
        predict_rows_s=len(y_test) / predict_seconds,
        peak_mib=memory.increase_mib,
    )
    if train is not None:
        predict_train, y_train = train
        result["train_metric1"], result["train_metric2"] = score(predict_train(model), y_train, task)
        result["train_rows"] = len(y_train)
    return result


def _predictor(data, codes=False, category=False):
    """``predict(model)`` on the test rows in the representation the model was fitted on."""
    X_test = data["X_test_codes"] if codes else data["X_test_cat"] if category else data["X_test"]
    return _rows_predictor(data["task"], X_test)


def _rows_predictor(task, X):
    """``predict(model)`` on the rows ``X``: ``(classes, proba)`` for classification, the predictions otherwise."""
    if task == "classification":
        return lambda model: (model.classes_, model.predict_proba(X))
    return lambda model: model.predict(X)


def fit_once(data, estimator, model, fit_params, protocol="validation"):
    """Fit ``estimator`` (a cell's model) by the single-fit protocol and measure it (:func:`measure`).

    sparsetab: fit rows with early stopping on the validation rows (``protocol="validation"``), or
    ``fit(X_train, y_train)`` on all the training rows without ``X_val`` (``protocol="user"``: its
    ``early_stopping="auto"`` rules decide); pytorch-tabnet: integer-coded fit rows with the validation rows as
    ``eval_set``; HistGradientBoosting and LightGBM: all the training rows (pandas category columns as categorical);
    CatBoost: all the training rows (categorical columns as str, ``cat_features``). Under ``protocol="user"`` the
    error on the rows given to ``fit`` is measured too (``train_metric1``, ``train_metric2``).
    """
    task = data["task"]
    user = protocol == "user"
    if model == "sparsetab":
        if user:
            X_train, y_train = data["X_train"], data["y_train"]

            def fit():
                return estimator.fit(X_train, y_train)

            train = (_rows_predictor(task, X_train), y_train)
            return measure(fit, _predictor(data), data["y_test"], task, lambda m: m.n_iter_, train)

        def fit():
            return estimator.fit(data["X_fit"], data["y_fit"], X_val=data["X_val"], y_val=data["y_val"])

        return measure(fit, _predictor(data), data["y_test"], task, lambda m: m.n_iter_)
    if model == "pytorch-tabnet":
        X_fit, X_val = data["X_fit_codes"], data["X_val_codes"]
        y_fit, y_val = data["y_fit"], data["y_val"]
        if task == "regression":
            y_fit, y_val = y_fit.reshape(-1, 1), y_val.reshape(-1, 1)

        def fit():
            # pytorch-tabnet prints its early-stopping summary whatever ``verbose`` is.
            with contextlib.redirect_stdout(io.StringIO()):
                estimator.fit(X_fit, y_fit, eval_set=[(X_val, y_val)], **fit_params)
            return estimator

        train = (_rows_predictor(task, X_fit), data["y_fit"]) if user else None
        return measure(fit, _predictor(data, codes=True), data["y_test"], task, lambda m: len(m.history["loss"]), train)
    if model == "CatBoost":
        X_train, X_test = with_string_categories(data)
        train = (_rows_predictor(task, X_train), data["y_train"]) if user else None
        return measure(
            lambda: estimator.fit(X_train, data["y_train"]),
            _rows_predictor(task, X_test),
            data["y_test"],
            task,
            lambda m: m.tree_count_,
            train,
        )
    iterations = (
        (lambda m: m.n_iter_) if model == "HistGradientBoosting" else (lambda m: m.booster_.current_iteration())
    )
    train = (_rows_predictor(task, data["X_train_cat"]), data["y_train"]) if user else None
    return measure(
        lambda: estimator.fit(data["X_train_cat"], data["y_train"]),
        _predictor(data, category=True),
        data["y_test"],
        task,
        iterations,
        train,
    )
