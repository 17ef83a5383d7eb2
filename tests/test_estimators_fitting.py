"""The fit loop seen from the estimators: warm_start, partial_fit, stopping, interrupts, verbose, n_jobs, device."""

import copy
import pickle
import re
import warnings

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.exceptions import ConvergenceWarning

import sparsetab._inference
import sparsetab._persistence.compat
import sparsetab._runtime
from sparsetab import SparseTabNetClassifier, SparseTabNetRegressor, load_model
from sparsetab._runtime import torch_threads
from sparsetab.network import TabNet


def _data(n_rows=96, n_classes=2, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n_rows, 4))
    score = X[:, 0] + 0.5 * X[:, 1]
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1]))
    return X, y


def _quiet_fit(model, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(*args, **kwargs)


# ----- partial_fit ----------------------------------------------------------------------------
def test_partial_fit_calls_equal_fit_epochs(fast_params):
    X, y = _data()
    params = dict(fast_params, early_stopping=False, n_iter_no_change=100)
    fitted = _quiet_fit(SparseTabNetClassifier(max_epochs=3, **params), X, y)
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
    X, _ = _data()
    y = 100.0 + 10.0 * X[:, 0]
    model = SparseTabNetRegressor(**fast_params)
    model.partial_fit(X, y)
    mean, scale = model.target_mean_.copy(), model.target_scale_.copy()
    model.partial_fit(X[:50], y[:50] + 1000.0)  # other targets: the scaling of the first call stays
    assert model.n_iter_ == 2 and len(model.loss_curve_) == 2
    np.testing.assert_array_equal(model.target_mean_, mean)
    np.testing.assert_array_equal(model.target_scale_, scale)
    assert model.predict(X).shape == (96,)


def test_partial_fit_first_batch_may_lack_classes(fast_params):
    X, y = _data(n_classes=3)
    model = SparseTabNetClassifier(**fast_params)
    model.partial_fit(X[y < 2], y[y < 2], classes=np.array([2, 0, 1]))
    np.testing.assert_array_equal(model.classes_, [0, 1, 2])
    assert model.predict_proba(X).shape == (96, 3)
    model.partial_fit(X, y)  # classes may be omitted after the first call
    assert model.n_iter_ == 2


def test_partial_fit_argument_errors(fast_params):
    X, y = _data(n_classes=3)
    with pytest.raises(ValueError, match="classes must be passed on the first call to partial_fit"):
        SparseTabNetClassifier(**fast_params).partial_fit(X, y)
    with pytest.raises(ValueError, match="partial_fit does not support early_stopping=True"):
        SparseTabNetClassifier(early_stopping=True, **fast_params).partial_fit(X, y, classes=[0, 1, 2])
    with pytest.raises(ValueError, match="class_weight='balanced' is not supported by partial_fit"):
        SparseTabNetClassifier(class_weight="balanced", **fast_params).partial_fit(X, y, classes=[0, 1, 2])
    with pytest.raises(ValueError, match=r"classes must list at least 2 class labels, got classes=\[1\]"):
        SparseTabNetClassifier(**fast_params).partial_fit(X, y, classes=[1])
    model = SparseTabNetClassifier(**fast_params).partial_fit(X[y < 2], y[y < 2], classes=[0, 1])
    with pytest.raises(ValueError, match=r"y has classes not in classes_: \[2\]"):
        model.partial_fit(X, y)
    with pytest.raises(ValueError, match=r"classes=\[0, 1, 2\] differs from the classes of the fitted model"):
        model.partial_fit(X, y, classes=[0, 1, 2])
    with pytest.raises(ValueError, match="X has 3 features"):
        model.partial_fit(X[:, :3], y)
    assert model.n_iter_ == 1  # the failed calls left the model as it was
    model.partial_fit(X[y < 2], y[y < 2])
    assert model.n_iter_ == 2


# ----- warm_start -----------------------------------------------------------------------------
def test_warm_start_continues_from_the_current_weights(fast_params):
    X, y = _data()
    params = dict(fast_params, early_stopping=False, n_iter_no_change=100)

    def weights(model):
        return {name: value.detach().clone() for name, value in model.network_.named_parameters()}

    model = _quiet_fit(SparseTabNetClassifier(max_epochs=3, warm_start=True, **params), X, y)
    trained, curve, network = weights(model), list(model.loss_curve_), model.network_
    # With a vanishing learning rate the second fit leaves the weights where they were: it started
    # from the trained ones (only the batch norm statistics move).
    _quiet_fit(model.set_params(learning_rate=1e-12, max_epochs=2), X, y)
    assert model.network_ is network
    assert model.n_iter_ == 5 and model.loss_curve_[:3] == curve
    assert model.entmax_alpha_history_.shape == (5, 2)
    for name, value in weights(model).items():
        torch.testing.assert_close(value, trained[name], atol=1e-6, rtol=0, msg=name)
    # Without warm_start the same call builds a new network, far from the trained one.
    _quiet_fit(model.set_params(warm_start=False), X, y)
    assert model.n_iter_ == 2 and model.network_ is not network
    assert max(float((value - trained[name]).abs().max()) for name, value in weights(model).items()) > 1e-3


def test_warm_start_requires_the_same_columns_classes_and_network(fast_params):
    X, y = _data(n_classes=3)
    model = _quiet_fit(SparseTabNetClassifier(max_epochs=2, warm_start=True, **fast_params), X, y)
    with pytest.raises(ValueError, match=r"warm_start can only be used where y has the same classes"):
        model.fit(X[y < 2], y[y < 2])
    with pytest.raises(ValueError, match="X has 3 features"):
        model.fit(X[:, :3], y)
    model.set_params(n_d=8)
    with pytest.raises(ValueError, match=r"built with n_d=4; it is now n_d=8"):
        model.fit(X, y)
    model.set_params(n_d=4)
    _quiet_fit(model, X, y)
    assert model.n_iter_ == 4


def test_warm_start_refuses_new_step_gates_and_takes_a_new_lambda_gate(fast_params):
    X, y = _data()
    model = _quiet_fit(SparseTabNetClassifier(max_epochs=1, warm_start=True, **fast_params), X, y)
    model.set_params(step_gates="sigmoid")
    with pytest.raises(ValueError, match=r"built with step_gates=None; it is now step_gates='sigmoid'"):
        model.fit(X, y)
    gated = _quiet_fit(SparseTabNetClassifier(max_epochs=1, warm_start=True, step_gates="sigmoid", **fast_params), X, y)
    _quiet_fit(gated.set_params(lambda_gate=0.5), X, y)  # a training setting: the next steps use it
    assert gated.n_iter_ == 2


def test_warm_start_with_validation_pads_earlier_epochs_with_nan(fast_params):
    X, y = _data()
    model = _quiet_fit(SparseTabNetClassifier(max_epochs=2, early_stopping=False, warm_start=True, **fast_params), X, y)
    assert model.validation_scores_ is None and model.best_iteration_ is None
    _quiet_fit(model.set_params(early_stopping="auto", max_epochs=3), X[:64], y[:64], X_val=X[64:], y_val=y[64:])
    assert model.n_iter_ == 5
    assert np.isnan(model.validation_scores_[:2]).all() and np.isfinite(model.validation_scores_[2:]).all()
    assert 2 <= model.best_iteration_ <= 4
    assert model.best_validation_score_ == model.validation_scores_[model.best_iteration_]
    assert model.best_validation_score_ == max(model.validation_scores_[2:])


# ----- stopping -------------------------------------------------------------------------------
def test_auto_refits_on_all_rows_and_keeps_the_first_pass_as_a_member(fast_params):
    # 1,200 rows: early_stopping="auto" first trains with validation_fraction held out and early stopping,
    # then a new network on all 1,200 rows for best_iteration_ + 1 epochs, the schedule spanning them (the
    # fit that early_stopping=False with max_epochs=best_iteration_ + 1 gives); the first pass's network
    # stays as a second member and the predictions average the two.
    X, y = _data(n_rows=1200)
    params = dict(fast_params, max_epochs=4, n_iter_no_change=1, batch_size=256)
    auto = _quiet_fit(SparseTabNetClassifier(**params), X, y)
    refit_member, first_member = auto.network_.members
    epochs = auto.best_iteration_ + 1
    assert auto.n_iter_ == len(auto.loss_curve_) == epochs
    assert auto.ensemble_n_iter_ == [epochs, len(auto.validation_scores_)]
    assert auto.ensemble_best_iteration_ == [auto.best_iteration_] * 2
    assert auto.best_validation_score_ == max(auto.validation_scores_)
    assert auto.n_ensemble == 1 and auto.batch_size_ == 256
    refit = _quiet_fit(SparseTabNetClassifier(**dict(params, early_stopping=False, max_epochs=epochs)), X, y)
    assert refit.validation_scores_ is None and refit.best_iteration_ is None
    assert auto.loss_curve_ == refit.loss_curve_
    for name, value in refit.network_.state_dict().items():
        assert torch.equal(refit_member.state_dict()[name], value), name
    first = copy.deepcopy(refit)  # the same encoding (learned on every row with the same seed)
    first.network_ = first_member
    expected = (refit.predict_proba(X) + first.predict_proba(X)) / 2
    np.testing.assert_allclose(auto.predict_proba(X), expected, rtol=0, atol=1e-6)
    explanation = auto.explain(X[:5])  # the members' mean: every step's mask and the importances sum to 1
    np.testing.assert_allclose(explanation["step_masks"].sum(axis=-1), 1.0, rtol=0, atol=1e-5)
    np.testing.assert_allclose(explanation["importances"].sum(axis=1), 1.0, rtol=0, atol=1e-5)
    tiny = _quiet_fit(SparseTabNetClassifier(**params), X[:999], y[:999])
    assert tiny.validation_scores_ is None and tiny.n_iter_ == 4  # under 1,000 rows every row trains, no refit
    assert not hasattr(tiny.network_, "members")


def test_auto_refit_survives_model_files_pickles_and_continued_fits(fast_params, tmp_path):
    X, y = _data(n_rows=1200)
    model = _quiet_fit(SparseTabNetClassifier(max_epochs=3, n_iter_no_change=1, **fast_params), X, y)
    path = tmp_path / "model.sparsetab"
    model.save_model(path)
    for restored in (load_model(path), pickle.loads(pickle.dumps(model))):
        np.testing.assert_array_equal(restored.predict_proba(X), model.predict_proba(X))
        assert restored.ensemble_n_iter_ == model.ensemble_n_iter_
    before = model.ensemble_n_iter_
    _quiet_fit(load_model(path).set_params(warm_start=True, max_epochs=1), X, y)  # n_ensemble=1 is no change
    model.partial_fit(X, y)
    assert model.ensemble_n_iter_ == [count + 1 for count in before]  # every member continues


def test_auto_refit_takes_the_epoch_the_scores_chose(fast_params):
    # The scorer decides: its best score is at the second epoch, so the refit runs 2 epochs.
    X, y = _data(n_rows=1200)
    scores = iter([0.2, 0.9, 0.1, 0.3])

    def scorer(estimator, X_val, y_val):
        assert len(X_val) == 120  # validation_fraction of the rows, held out in the first pass only
        return next(scores)

    model = _quiet_fit(SparseTabNetClassifier(max_epochs=4, n_iter_no_change=1000, scoring=scorer, **fast_params), X, y)
    assert model.validation_scores_ == [0.2, 0.9, 0.1, 0.3] and model.best_iteration_ == 1
    assert model.best_validation_score_ == 0.9
    assert model.n_iter_ == 2


def test_auto_refit_gives_each_member_its_own_count(fast_params):
    # n_ensemble=2: two refit members, each for its own first-pass member's count, then the two first-pass members.
    X, y = _data(n_rows=1200)
    model = _quiet_fit(SparseTabNetClassifier(max_epochs=4, n_ensemble=2, n_iter_no_change=1, **fast_params), X, y)
    best = model.ensemble_best_iteration_
    assert len(model.network_) == 4 and best[:2] == best[2:] and None not in best
    assert model.ensemble_n_iter_[:2] == [count + 1 for count in best[:2]]
    assert model.ensemble_n_iter_[2:] == [len(scores) for scores in model.ensemble_validation_scores_[2:]]
    assert model.ensemble_validation_scores_[:2] == model.ensemble_validation_scores_[2:]


def test_auto_refit_says_so_and_does_not_advise_more_epochs(fast_params, capsys):
    # The refit ends at the count it was given: no ConvergenceWarning comes from it (the first pass, whose
    # validation score was still improving at max_epochs, warns once).
    X, y = _data(n_rows=1200)
    model = SparseTabNetClassifier(max_epochs=2, n_iter_no_change=1000, verbose=1, **fast_params)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(X, y)
    convergence = [item for item in caught if issubclass(item.category, ConvergenceWarning)]
    assert len(convergence) <= 1
    assert all("validation score" in str(item.message) for item in convergence)
    output = capsys.readouterr().out
    assert (
        "Refitting on all 1200 rows (the 120 held-out rows included) for the number of epochs they chose: "
        f"{model.n_iter_}." in output
    )


def test_warm_start_continues_without_a_refit(fast_params):
    # A continued fit trains the fitted network on every row (no held-out rows, no new network).
    X, y = _data(n_rows=1200)
    model = _quiet_fit(SparseTabNetClassifier(max_epochs=3, n_iter_no_change=1, warm_start=True, **fast_params), X, y)
    before = model.ensemble_n_iter_
    members = list(model.network_.members)
    _quiet_fit(model.set_params(max_epochs=2), X, y)
    assert list(model.network_.members) == members and model.ensemble_n_iter_ == [count + 2 for count in before]


def test_training_loss_plateau_stops_without_early_stopping(fast_params):
    X, y = _data()
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
    X, y = _data()
    model = SparseTabNetClassifier(max_epochs=2, early_stopping=False, n_iter_no_change=100, **fast_params)
    with pytest.warns(
        ConvergenceWarning, match="max_epochs=2 reached and the training loss was still improving"
    ) as record:
        model.fit(X, y)
    assert model.n_iter_ == 2
    assert record[0].filename == __file__  # the warning points at the caller's line


def test_keyboard_interrupt_with_early_stopping_keeps_the_best_epoch(fast_params):
    X, y = _data()
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
    X, y = _data()

    def scorer(estimator, X, y):
        raise KeyboardInterrupt

    model = SparseTabNetClassifier(max_epochs=5, scoring=scorer, early_stopping=True, **fast_params)
    with pytest.warns(UserWarning, match="interrupted by the user"):
        model.fit(X, y)
    assert model.n_iter_ == 0 and model.validation_scores_ is None and model.best_iteration_ is None
    assert model.predict(X).shape == (len(X),)


def test_keyboard_interrupt_without_early_stopping_leaves_a_usable_model(fast_params):
    X, y = _data()
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
    X, y = _data()
    _quiet_fit(
        SparseTabNetClassifier(max_epochs=2, verbose=0, **fast_params), X[:64], y[:64], X_val=X[64:], y_val=y[64:]
    )
    SparseTabNetClassifier(verbose=0, **fast_params).partial_fit(X, y, classes=[0, 1])
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""


def test_verbose_one_prints_one_line_per_epoch(capsys, fast_params):
    X, y = _data()
    model = SparseTabNetClassifier(max_epochs=3, verbose=1, n_iter_no_change=100, **fast_params)
    _quiet_fit(model, X[:64], y[:64], X_val=X[64:], y_val=y[64:])
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 4  # 3 epochs and the closing line
    for epoch, line in enumerate(lines[:3], start=1):
        match = re.fullmatch(r"\[(\d+)/3\] train loss: (\d+\.\d+), val loss: (\d+\.\d+)( \(best\))?, in \d+\.\ds", line)
        assert match, line
        assert int(match[1]) == epoch
        assert float(match[2]) == pytest.approx(model.loss_curve_[epoch - 1], abs=5e-5)
        assert float(match[3]) == pytest.approx(-model.validation_scores_[epoch - 1], abs=5e-5)
    assert (
        lines[3] == f"Stopped after epoch 3: max_epochs reached; kept the weights of epoch {model.best_iteration_ + 1}."
    )
    model.set_params(early_stopping=False).partial_fit(X, y)  # continues the numbering, no validation
    assert re.fullmatch(r"\[4\] train loss: \d+\.\d+( \(best\))?, in \d+\.\ds", capsys.readouterr().out.strip())


# ----- n_jobs ---------------------------------------------------------------------------------
def test_n_jobs_sets_torch_threads_inside_fit_and_predict_only(fast_params):
    X, y = _data()
    before = torch.get_num_threads()
    n_jobs = 1 if before != 1 else 2
    seen = []

    def scorer(estimator, X, y):
        seen.append(torch.get_num_threads())
        return 0.0

    model = _quiet_fit(
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


def test_n_jobs_none_leaves_the_thread_count_and_threads_are_restored_on_errors(fast_params):
    X, y = _data()
    before = torch.get_num_threads()
    seen = []

    def scorer(estimator, X, y):
        seen.append(torch.get_num_threads())
        raise RuntimeError("scorer failed")

    with pytest.raises(RuntimeError, match="scorer failed"):
        SparseTabNetClassifier(max_epochs=2, n_jobs=None, scoring=scorer, **fast_params).fit(
            X[:64], y[:64], X_val=X[64:], y_val=y[64:]
        )
    assert seen == [before]
    other = 1 if before != 1 else 2
    with pytest.raises(RuntimeError, match="scorer failed"):
        SparseTabNetClassifier(max_epochs=2, n_jobs=other, scoring=scorer, **fast_params).fit(
            X[:64], y[:64], X_val=X[64:], y_val=y[64:]
        )
    assert seen == [before, other] and torch.get_num_threads() == before
    with pytest.raises(KeyError):
        with torch_threads(other):
            raise KeyError("inside")
    assert torch.get_num_threads() == before
    with pytest.raises(ValueError, match="n_jobs"):
        SparseTabNetClassifier(n_jobs=0, **fast_params).fit(X, y)


# ----- device ---------------------------------------------------------------------------------
def test_device_auto_and_torch_device(monkeypatch, fast_params):
    X, y = _data()
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    model = _quiet_fit(SparseTabNetClassifier(max_epochs=1, device="auto", **fast_params), X, y)
    assert model._device == torch.device("cpu") and model.device == "auto"
    assert next(model.network_.parameters()).device == torch.device("cpu")
    reference = _quiet_fit(SparseTabNetClassifier(max_epochs=1, device=torch.device("cpu"), **fast_params), X, y)
    np.testing.assert_array_equal(model.predict_proba(X), reference.predict_proba(X))


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
@pytest.mark.parametrize("device", ["cuda", "cuda:1", "nowhere", "meta"])
def test_unavailable_device_is_an_error_not_a_fallback(device, fast_params):
    X, y = _data()
    with pytest.raises(ValueError, match=rf"device={device!r} is not usable here.*accepted: 'cpu', 'cuda', 'cuda:N'"):
        SparseTabNetClassifier(max_epochs=1, device=device, **fast_params).fit(X, y)


def test_pickle_stores_tensors_for_the_cpu_and_continues_partial_fit(fast_params):
    X, y = _data()
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
    X, y = _data()
    model = _quiet_fit(SparseTabNetClassifier(max_epochs=2, **fast_params), X, y)
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

    X, y = _data(160)
    params = dict(n_d=4, n_a=4, n_steps=2, max_epochs=3, random_state=7, numerical_embedding="periodic")

    def fit():
        if estimator == "pretrainer":
            return SparseTabNetPretrainer(**params).fit(X).transform(X)
        return _quiet_fit(SparseTabNetClassifier(**params), X, y).predict_proba(X)

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


# ----- feature_importances_ after partial_fit ----------------------------------------------------
def test_partial_fit_defers_the_importances_to_their_first_access(tmp_path, monkeypatch):
    import pickle

    from sparsetab import load_model

    X, y = _data(200)
    params = dict(n_d=4, n_a=4, n_steps=2, random_state=0, early_stopping=False, learning_rate_schedule="constant")
    fitted = _quiet_fit(SparseTabNetClassifier(max_epochs=3, **params), X, y)
    model = SparseTabNetClassifier(max_epochs=3, **params)
    calls = []
    original = sparsetab._inference.importances_of
    monkeypatch.setattr(
        sparsetab._inference, "importances_of", lambda model, rows: calls.append(1) or original(model, rows)
    )
    for _ in range(3):
        model.partial_fit(X, y, classes=[0, 1])
    assert calls == []  # nothing computed by the calls themselves
    # three partial_fit epochs are the fit of three epochs, so their importances are the same
    np.testing.assert_allclose(model.feature_importances_, fitted.feature_importances_, rtol=1e-6)
    np.testing.assert_allclose(model.feature_importances_.sum(), 1.0)
    assert calls == [1]  # computed once, then kept
    model.partial_fit(X, y)
    restored = pickle.loads(pickle.dumps(model))  # a pickle holds the values, not the rows
    assert "_pending_importance_rows" not in vars(restored) and len(calls) == 2
    np.testing.assert_array_equal(restored.feature_importances_, model.feature_importances_)
    model.partial_fit(X, y)
    loaded = load_model(model.save_model(tmp_path / "model.sparsetab"))
    assert len(calls) == 3
    np.testing.assert_array_equal(loaded.feature_importances_, model.feature_importances_)
    assert not hasattr(SparseTabNetClassifier(), "feature_importances_")  # NotFittedError is an AttributeError


@pytest.mark.parametrize("validation", ["held out", "X_val"])
def test_a_scorer_reads_the_validation_rows_validated_and_encoded_once(fast_params, monkeypatch, validation):
    # Issue 35: a scorer predicts on the validation rows every epoch; they are validated and encoded
    # once per member (here one), and the scores are those of predicting on them afresh.
    X, y = _data(160)
    validated = []
    original = SparseTabNetClassifier._validate_X

    def counting(self, X, reset):
        validated.append(len(X))
        return original(self, X, reset)

    monkeypatch.setattr(SparseTabNetClassifier, "_validate_X", counting)
    scores = []

    def scorer(estimator, X_score, y_score):
        scores.append(float(np.mean(estimator.predict(X_score) == y_score)))
        return scores[-1]

    model = SparseTabNetClassifier(
        max_epochs=4, n_iter_no_change=1000, early_stopping=True, scoring=scorer, **fast_params
    )
    if validation == "X_val":
        _quiet_fit(model, X[:120], y[:120], X_val=X[120:], y_val=y[120:])
        n_val = 40
    else:
        _quiet_fit(model, X, y)
        n_val = 16  # validation_fraction 0.1 of 160 rows
    assert validated.count(n_val) == 1 and len(scores) == 4
    assert model.validation_scores_ == scores
    assert "_scoring_rows" not in vars(model)
    rows = X[120:] if validation == "X_val" else None
    if rows is not None:  # after fit, predict validates again and gives the restored epoch's score
        assert np.mean(model.predict(rows) == y[120:]) == pytest.approx(model.best_validation_score_)


def test_a_scorer_gets_the_users_own_rows_of_y_for_the_held_out_rows(fast_params):
    # Issue 35: the held-out rows are taken by index from the y the user gave (a Series of strings,
    # with a zero-weight row dropped first), not encoded, split and decoded back.
    X, y_codes = _data(161)
    y = pd.Series(np.where(y_codes == 1, "yes", "no"), index=np.arange(1000, 1161), name="answer")
    weights = np.ones(161)
    weights[5] = 0.0
    seen = []

    def scorer(estimator, X_score, y_score, sample_weight=None):
        seen.append(y_score)
        return float(np.mean(estimator.predict(X_score) == np.asarray(y_score)))

    model = SparseTabNetClassifier(max_epochs=2, early_stopping=True, scoring=scorer, **fast_params)
    _quiet_fit(model, X, y, sample_weight=weights)
    held_out = seen[0]
    assert isinstance(held_out, pd.Series) and held_out.name == "answer" and len(held_out) == 16
    assert 1005 not in held_out.index  # the zero-weight row is not scored
    pd.testing.assert_series_equal(held_out, y.loc[held_out.index])
