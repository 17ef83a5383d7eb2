"""The fit loop seen from the estimators: warm_start, partial_fit, stopping, interrupts, verbose, n_jobs, device.

The stages and checks of the shared fit (rows of weight 0, validation rows and scores, the refit on all rows of
early_stopping="auto", the checks of a continued fit) are tested in tests/test_base.py.
"""

import pickle
import re
import warnings

import numpy as np
import pytest
import torch
from sklearn.datasets import make_regression
from sklearn.exceptions import ConvergenceWarning

import sparsetab._persistence.compat
import sparsetab._runtime
from sparsetab import SparseTabNetClassifier, SparseTabNetRegressor
from sparsetab._runtime import torch_threads
from sparsetab.network import TabNet
from tests.conftest import quiet_fit, score_classes


# ----- partial_fit ----------------------------------------------------------------------------
def test_partial_fit_calls_equal_fit_epochs(fast_params):
    X, y = score_classes()
    # partial_fit keeps the trained weights: the fit it equals has no weight average.
    params = dict(fast_params, early_stopping=False, n_iter_no_change=100, weight_averaging_epochs=None)
    fitted = quiet_fit(SparseTabNetClassifier(max_epochs=3, **params), X, y)
    model = SparseTabNetClassifier(max_epochs=3, **params)  # the schedule spans max_epochs
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # partial_fit never tests convergence
        for _ in range(3):
            model.partial_fit(X, y, classes=[0, 1])
    assert model.n_iter_ == 3
    np.testing.assert_allclose(model.loss_curve_, fitted.loss_curve_, rtol=1e-6)
    np.testing.assert_allclose(model.predict_proba(X), fitted.predict_proba(X), atol=1e-6)
    assert model.entmax_alpha_history_.shape == (3, 2)
    assert model.validation_scores_ is None and model.best_iteration_ is None
    assert model.feature_importances_.shape == (4,)
    assert model.feature_importances_.sum() == pytest.approx(1.0)


def test_partial_fit_regressor_extends_history_and_keeps_target_scaling(fast_params):
    X, _ = score_classes()
    y = 100.0 + 10.0 * X[:, 0]
    model = SparseTabNetRegressor(**fast_params)
    model.partial_fit(X, y)
    mean, scale = model.target_mean_.copy(), model.target_scale_.copy()
    model.partial_fit(X[:50], y[:50] + 1000.0)  # other targets: the scaling of the first call stays
    assert model.n_iter_ == 2 and len(model.loss_curve_) == 2
    np.testing.assert_array_equal(model.target_mean_, mean)
    np.testing.assert_array_equal(model.target_scale_, scale)
    assert model.predict(X).shape == (96,)


# ----- warm_start -----------------------------------------------------------------------------
def test_warm_start_continues_from_the_current_weights(fast_params):
    X, y = score_classes()
    params = dict(fast_params, early_stopping=False, n_iter_no_change=100)

    def weights(model):
        return {name: value.detach().clone() for name, value in model.network_.named_parameters()}

    model = quiet_fit(SparseTabNetClassifier(max_epochs=3, warm_start=True, **params), X, y)
    trained, curve, network = weights(model), list(model.loss_curve_), model.network_
    # With a vanishing learning rate the second fit leaves the weights where they were: it started
    # from the trained ones (only the batch norm statistics move).
    quiet_fit(model.set_params(learning_rate=1e-12, max_epochs=2), X, y)
    assert model.network_ is network
    assert model.n_iter_ == 5 and model.loss_curve_[:3] == curve
    assert model.entmax_alpha_history_.shape == (5, 2)
    for name, value in weights(model).items():
        torch.testing.assert_close(value, trained[name], atol=1e-6, rtol=0, msg=name)
    # Without warm_start the same call builds a new network, far from the trained one.
    quiet_fit(model.set_params(warm_start=False), X, y)
    assert model.n_iter_ == 2 and model.network_ is not network
    assert max(float((value - trained[name]).abs().max()) for name, value in weights(model).items()) > 1e-3


def test_warm_start_refuses_new_step_gates_and_takes_a_new_lambda_gate(fast_params):
    X, y = score_classes()
    model = quiet_fit(SparseTabNetClassifier(max_epochs=1, warm_start=True, **fast_params), X, y)
    model.set_params(step_gates="sigmoid")
    with pytest.raises(ValueError, match=r"built with step_gates=None; it is now step_gates='sigmoid'"):
        model.fit(X, y)
    gated = quiet_fit(SparseTabNetClassifier(max_epochs=1, warm_start=True, step_gates="sigmoid", **fast_params), X, y)
    quiet_fit(gated.set_params(lambda_gate=0.5), X, y)  # a training setting: the next steps use it
    assert gated.n_iter_ == 2


def test_warm_start_with_validation_pads_earlier_epochs_with_nan(fast_params):
    X, y = score_classes()
    model = quiet_fit(SparseTabNetClassifier(max_epochs=2, early_stopping=False, warm_start=True, **fast_params), X, y)
    assert model.validation_scores_ is None and model.best_iteration_ is None
    quiet_fit(model.set_params(early_stopping="auto", max_epochs=3), X[:64], y[:64], X_val=X[64:], y_val=y[64:])
    assert model.n_iter_ == 5
    assert np.isnan(model.validation_scores_[:2]).all() and np.isfinite(model.validation_scores_[2:]).all()
    assert 2 <= model.best_iteration_ <= 4
    assert model.best_validation_score_ == model.validation_scores_[model.best_iteration_]
    assert model.best_validation_score_ == max(model.validation_scores_[2:])


# ----- stopping -------------------------------------------------------------------------------
def test_training_loss_plateau_stops_without_early_stopping(fast_params):
    X, y = score_classes()
    # tol larger than any possible improvement: no epoch after the first improves. 96 rows in batches of 2 give
    # 48 steps an epoch, so the patience is max(2, ceil(200 / 48)) = 5 epochs.
    params = {**fast_params, "batch_size": 2, "virtual_batch_size": 2}
    model = SparseTabNetClassifier(max_epochs=20, early_stopping=False, n_iter_no_change=2, tol=100.0, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model.fit(X, y)
    assert model.n_iter_ == 6 and len(model.loss_curve_) == 6
    assert model.validation_scores_ is None
    assert model.best_iteration_ is None and model.best_validation_score_ is None


def test_convergence_warning_when_max_epochs_is_hit(fast_params):
    X, y = score_classes()
    model = SparseTabNetClassifier(max_epochs=2, early_stopping=False, n_iter_no_change=100, **fast_params)
    with pytest.warns(
        ConvergenceWarning, match="max_epochs=2 reached and the training loss was still improving"
    ) as record:
        model.fit(X, y)
    assert model.n_iter_ == 2
    assert record[0].filename == __file__  # the warning points at the caller's line


def test_keyboard_interrupt_with_early_stopping_keeps_the_best_epoch(fast_params):
    X, y = score_classes()
    X_val, y_val = X[64:], y[64:]
    snapshots = []

    def scorer(estimator, X, y):
        if len(snapshots) == 2:
            raise KeyboardInterrupt
        snapshots.append(estimator.predict_proba(X))
        return [0.9, 0.1][len(snapshots) - 1]

    model = SparseTabNetClassifier(max_epochs=10, scoring=scorer, **fast_params)
    with pytest.warns(UserWarning, match=r"interrupted by the user \(KeyboardInterrupt\) after 2 complete epoch"):
        model.fit(X[:64], y[:64], X_val=X_val, y_val=y_val)
    assert model.n_iter_ == 2 and model.validation_scores_ == [0.9, 0.1]
    assert model.best_iteration_ == 0 and model.best_validation_score_ == 0.9
    assert model.entmax_alpha_history_.shape == (2, 2)
    np.testing.assert_allclose(model.predict_proba(X_val), snapshots[0], atol=1e-6)


def test_keyboard_interrupt_in_the_first_epoch_records_no_validation_scores(fast_params):
    X, y = score_classes()

    def scorer(estimator, X, y):
        raise KeyboardInterrupt

    model = SparseTabNetClassifier(max_epochs=5, scoring=scorer, early_stopping=True, **fast_params)
    with pytest.warns(UserWarning, match="interrupted by the user"):
        model.fit(X, y)
    assert model.n_iter_ == 0 and model.validation_scores_ is None and model.best_iteration_ is None
    assert model.predict(X).shape == (len(X),)


def test_keyboard_interrupt_without_early_stopping_leaves_a_usable_model(fast_params):
    X, y = score_classes()
    calls = []

    def scorer(estimator, X, y):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return 0.5

    model = SparseTabNetClassifier(max_epochs=10, early_stopping=False, scoring=scorer, **fast_params)
    with pytest.warns(UserWarning, match="the current weights were kept and the model is usable"):
        model.fit(X[:64], y[:64], X_val=X[64:], y_val=y[64:])
    assert model.n_iter_ == 1 and model.validation_scores_ == [0.5] and model.best_iteration_ is None
    assert model.predict(X).shape == (96,) and set(model.predict(X)) <= {0, 1}


# ----- verbose --------------------------------------------------------------------------------
def test_verbose_zero_prints_nothing(capsys, fast_params):
    X, y = score_classes()
    quiet_fit(
        SparseTabNetClassifier(max_epochs=2, verbose=0, **fast_params), X[:64], y[:64], X_val=X[64:], y_val=y[64:]
    )
    SparseTabNetClassifier(verbose=0, **fast_params).partial_fit(X, y, classes=[0, 1])
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""


def test_verbose_one_prints_one_line_per_epoch(capsys, fast_params):
    X, y = score_classes()
    model = SparseTabNetClassifier(max_epochs=3, verbose=1, n_iter_no_change=100, **fast_params)
    quiet_fit(model, X[:64], y[:64], X_val=X[64:], y_val=y[64:])
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 4  # 3 epochs and the closing line
    for epoch, line in enumerate(lines[:3], start=1):
        match = re.fullmatch(r"\[(\d+)/3\] train loss: (\d+\.\d+), val loss: (\d+\.\d+)( \(best\))?, in \d+\.\ds", line)
        assert match, line
        assert int(match[1]) == epoch
        assert float(match[2]) == pytest.approx(model.loss_curve_[epoch - 1], abs=5e-5)
        assert float(match[3]) == pytest.approx(-model.validation_scores_[epoch - 1], abs=5e-5)
    assert (
        lines[3] == "Stopped after epoch 3: max_epochs reached; "
        f"kept the average of the weights of epoch {model.best_iteration_ + 1}."
    )
    model.set_params(early_stopping=False).partial_fit(X, y)  # continues the numbering, no validation
    assert re.fullmatch(r"\[4\] train loss: \d+\.\d+( \(best\))?, in \d+\.\ds", capsys.readouterr().out.strip())


# ----- n_jobs ---------------------------------------------------------------------------------
def test_n_jobs_sets_torch_threads_inside_fit_and_predict_only(fast_params):
    X, y = score_classes()
    before = torch.get_num_threads()
    n_jobs = 1 if before != 1 else 2
    seen = []

    def scorer(estimator, X, y):
        seen.append(torch.get_num_threads())
        return 0.0

    model = quiet_fit(
        SparseTabNetClassifier(max_epochs=2, n_jobs=n_jobs, scoring=scorer, **fast_params),
        X[:64],
        y[:64],
        X_val=X[64:],
        y_val=y[64:],
    )
    assert seen == [n_jobs, n_jobs]
    assert torch.get_num_threads() == before
    # predict's encode and explain's both run encode_steps.
    encode_steps = model.network_.encode_steps
    during_predict = []

    def recording_encode_steps(*args):
        during_predict.append(torch.get_num_threads())
        return encode_steps(*args)

    model.network_.encode_steps = recording_encode_steps
    model.predict_proba(X)
    model.explain(X[:5])
    assert during_predict == [n_jobs, n_jobs]
    assert torch.get_num_threads() == before


def test_n_jobs_none_trains_small_steps_on_one_thread_and_threads_are_restored_on_errors(
    fast_params, three_torch_threads, monkeypatch
):
    X, y = score_classes()
    before = torch.get_num_threads()
    seen = []

    def scorer(estimator, X, y):
        seen.append(torch.get_num_threads())
        raise RuntimeError("scorer failed")

    def failing_fit(n_jobs):
        with pytest.raises(RuntimeError, match="scorer failed"):
            SparseTabNetClassifier(max_epochs=2, n_jobs=n_jobs, scoring=scorer, **fast_params).fit(
                X[:64], y[:64], X_val=X[64:], y_val=y[64:]
            )

    # fast_params' steps are far below SMALL_STEP_WORK: one thread while training, torch's count restored.
    failing_fit(None)
    assert seen == [1] and torch.get_num_threads() == before == 3
    failing_fit(2)  # a count the user gives is kept whatever the step
    assert seen == [1, 2] and torch.get_num_threads() == before
    monkeypatch.setattr(sparsetab._runtime, "SMALL_STEP_WORK", 0)  # every step large: torch's count
    failing_fit(None)
    assert seen == [1, 2, 3] and torch.get_num_threads() == before
    with pytest.raises(KeyError):
        with torch_threads(1):
            raise KeyError("inside")
    assert torch.get_num_threads() == before
    with pytest.raises(ValueError, match="n_jobs"):
        SparseTabNetClassifier(n_jobs=0, **fast_params).fit(X, y)


# ----- device ---------------------------------------------------------------------------------
def test_device_auto_and_torch_device(monkeypatch, fast_params):
    X, y = score_classes()
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    model = quiet_fit(SparseTabNetClassifier(max_epochs=1, device="auto", **fast_params), X, y)
    assert model._device == torch.device("cpu") and model.device == "auto"
    assert next(model.network_.parameters()).device == torch.device("cpu")
    reference = quiet_fit(SparseTabNetClassifier(max_epochs=1, device=torch.device("cpu"), **fast_params), X, y)
    np.testing.assert_array_equal(model.predict_proba(X), reference.predict_proba(X))


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
@pytest.mark.parametrize("device", ["cuda", "cuda:1", "nowhere", "meta"])
def test_unavailable_device_is_an_error_not_a_fallback(device, fast_params):
    X, y = score_classes()
    with pytest.raises(ValueError, match=rf"device={device!r} is not usable here.*accepted: 'cpu', 'cuda', 'cuda:N'"):
        SparseTabNetClassifier(max_epochs=1, device=device, **fast_params).fit(X, y)


def test_pickle_stores_tensors_for_the_cpu_and_continues_partial_fit(fast_params):
    X, y = score_classes()
    model = SparseTabNetClassifier(**fast_params)
    for _ in range(2):
        model.partial_fit(X, y, classes=[0, 1])
    state = model.__getstate__()
    assert "network_" not in state and "_optimizer_state" not in state
    assert isinstance(state["_torch_state"], bytes)
    restored = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(restored.predict_proba(X), model.predict_proba(X))
    model.partial_fit(X, y)
    restored.partial_fit(X, y)  # the optimizer state and the shuffling stream travelled too
    assert restored.loss_curve_ == model.loss_curve_
    np.testing.assert_array_equal(restored.predict_proba(X), model.predict_proba(X))


def test_model_fitted_on_a_gpu_unpickles_on_a_cpu_only_machine(monkeypatch, fast_params):
    X, y = score_classes()
    model = quiet_fit(SparseTabNetClassifier(max_epochs=2, **fast_params), X, y)
    expected = model.predict_proba(X)
    model._device = torch.device("cuda", 0)  # as recorded by a fit on a GPU
    loads = []
    real_load = torch.load

    def recording_load(*args, **kwargs):
        loads.append(kwargs.get("map_location"))
        return real_load(*args, **kwargs)

    monkeypatch.setattr(torch, "load", recording_load)
    monkeypatch.setattr(sparsetab._persistence.compat, "device_available", lambda device: device.type == "cpu")
    blob = pickle.dumps(model)
    with pytest.warns(UserWarning, match="fitted on device 'cuda:0', which is not available here"):
        restored = pickle.loads(blob)
    assert loads == ["cpu"]
    assert restored._device == torch.device("cpu")
    assert all(parameter.device.type == "cpu" for parameter in restored.network_.parameters())
    np.testing.assert_array_equal(restored.predict_proba(X), expected)
    # Where the device exists, the network goes back to it.
    moved = []
    monkeypatch.setattr(sparsetab._persistence.compat, "device_available", lambda device: True)
    monkeypatch.setattr(TabNet, "to", lambda network, *args, **kwargs: moved.append(args) or network)
    again = pickle.loads(blob)
    assert moved == [(torch.device("cuda", 0),)] and again._device == torch.device("cuda", 0)


def test_divergence_restores_finite_weights_and_predictions_stay_finite():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    model = SparseTabNetRegressor(
        n_d=4,
        n_a=4,
        learning_rate=1e8,
        max_grad_norm=None,
        max_epochs=20,
        batch_size=64,
        virtual_batch_size=32,
        warmup_epochs=0,  # the full rate from the first step
    )
    with pytest.warns(RuntimeWarning, match="became non-finite at epoch 1; training stopped and the last finite"):
        model.set_params(random_state=0).fit(X, 10 * X[:, 0])
    assert model.n_iter_ == 0 and model.loss_curve_ == []
    assert all(torch.isfinite(value).all() for value in model.network_.state_dict().values())
    assert np.isfinite(model.predict(X)).all()
    explanation = model.explain(X)
    assert np.isfinite(explanation.step_masks).all() and np.isfinite(explanation.importances).all()


@pytest.mark.parametrize("batch_size, n_rows", [(2, 3), (2, 5)])
def test_one_row_training_batches(batch_size, n_rows):
    # An odd row count with batch_size=2 gives a single-row batch: it normalises to the batch norm's bias,
    # and training must go through it.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n_rows, 3))
    y = X[:, 0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = SparseTabNetRegressor(
            n_d=4, n_a=4, batch_size=batch_size, max_epochs=2, early_stopping=False, random_state=0
        ).fit(X, y)
    assert model.n_iter_ == 2 and np.isfinite(model.loss_curve_).all()
    assert np.isfinite(model.predict(X)).all()


# ----- reproducibility across threads -----------------------------------------------------------
@pytest.mark.parametrize("estimator", ["classifier", "pretrainer"])
def test_a_seeded_fit_is_the_same_whatever_other_threads_draw(estimator):
    # Two fits at once in threads (joblib's threading backend, a dask worker's threads) and a third thread
    # drawing from torch's global generator the whole time: each fit equals a lone one, bit for bit.
    import threading

    from sparsetab import SparseTabNetPretrainer

    X, y = score_classes(160)
    params = dict(n_d=4, n_a=4, n_steps=2, max_epochs=3, random_state=7, numerical_embedding="periodic")

    def fit():
        if estimator == "pretrainer":
            return SparseTabNetPretrainer(**params).fit(X).transform(X)
        return quiet_fit(SparseTabNetClassifier(**params), X, y).predict_proba(X)

    alone = fit()
    stop, results = threading.Event(), [None, None]

    def draw_forever():
        while not stop.is_set():
            torch.randn(64)

    def fit_into(index):
        results[index] = fit()

    drawer = threading.Thread(target=draw_forever)
    fitters = [threading.Thread(target=fit_into, args=(index,)) for index in range(2)]
    drawer.start()
    for thread in fitters:
        thread.start()
    for thread in fitters:
        thread.join()
    stop.set()
    drawer.join()
    for result in results:
        np.testing.assert_array_equal(result, alone)


# ----- seeds and divergence ------------------------------------------------------------------
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_same_random_state_gives_identical_predictions_and_leaves_global_rngs_alone(fast_params, make_people_frame):
    X, y = make_people_frame(200)
    torch_state, numpy_state = torch.get_rng_state(), np.random.get_state()
    first = SparseTabNetClassifier(max_epochs=5, **fast_params).fit(X, y).predict_proba(X)
    second = SparseTabNetClassifier(max_epochs=5, **fast_params).fit(X, y).predict_proba(X)
    np.testing.assert_array_equal(first, second)
    assert torch.equal(torch.get_rng_state(), torch_state)
    assert np.array_equal(np.random.get_state()[1], numpy_state[1])
    other = SparseTabNetClassifier(max_epochs=5, **{**fast_params, "random_state": 1}).fit(X, y).predict_proba(X)
    assert not np.array_equal(first, other)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_divergence_warns_and_keeps_finite_predictions():
    X, y = make_regression(64, 3, random_state=0)
    model = SparseTabNetRegressor(max_epochs=20, batch_size=16, learning_rate=1e8, max_grad_norm=None, random_state=0)
    with pytest.warns(RuntimeWarning, match="non-finite"):
        model.fit(X, y)
    assert np.isfinite(model.predict(X)).all()
    assert np.isfinite(model.explain(X).step_masks).all()
