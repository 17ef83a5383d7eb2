import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import make_classification, make_regression
from sklearn.exceptions import ConvergenceWarning

from sparsetab import SparseTabNetClassifier, SparseTabNetRegressor
from sparsetab._params import resolve_weight_averaging
from sparsetab._training import loop
from sparsetab._training.weight_average import WeightAverage


def test_the_average_is_the_mean_of_the_first_steps_then_exponential():
    tensor = torch.zeros(2, dtype=torch.float64)
    average = WeightAverage([tensor], time_constant_steps=2.0)
    values = [[1.0, 2.0], [3.0, 6.0], [5.0, 2.0], [-1.0, 0.0]]
    for value in values:
        tensor.copy_(torch.tensor(value, dtype=torch.float64))
        average.update()
    # By hand: w_t = max(1/t, 1/2) is 1, 1/2, 1/2, 1/2: a_1 = x_1 (the starting zeros carry no weight),
    # a_2 = (x_1 + x_2) / 2 = (2, 4), a_3 = (a_2 + x_3) / 2 = (3.5, 3), a_4 = (a_3 + x_4) / 2 = (1.25, 1.5).
    torch.testing.assert_close(average.average[0], torch.tensor([1.25, 1.5], dtype=torch.float64), rtol=0, atol=0)


@settings(max_examples=30, deadline=None)
@given(
    steps=st.lists(st.floats(-100, 100, allow_nan=False), min_size=1, max_size=12),
    time_constant=st.floats(1.0, 20.0),
)
def test_the_average_follows_its_recurrence(steps, time_constant):
    tensor = torch.zeros(1, dtype=torch.float64)
    average = WeightAverage([tensor], time_constant)
    expected = 0.0
    for t, value in enumerate(steps, start=1):
        tensor.fill_(value)
        average.update()
        weight = max(1.0 / t, 1.0 / time_constant)
        expected = (1 - weight) * expected + weight * value
    assert average.average[0].item() == pytest.approx(expected, rel=1e-12, abs=1e-9)
    # Within the first time constant it is the plain mean of the steps.
    if len(steps) <= time_constant:
        assert average.average[0].item() == pytest.approx(float(np.mean(steps)), rel=1e-12, abs=1e-9)


def test_swapping_the_average_in_and_out_keeps_the_trained_values():
    first, second = torch.tensor([1.0, 2.0]), torch.tensor([[3.0]])
    average = WeightAverage([first, second], time_constant_steps=4)
    average.use_average()  # no update yet: nothing to put in
    assert not average.in_use
    first.copy_(torch.tensor([3.0, 4.0]))
    average.update()
    first.copy_(torch.tensor([5.0, 8.0]))
    second.fill_(5.0)
    average.update()
    average.use_average()
    assert average.in_use
    torch.testing.assert_close(first, torch.tensor([4.0, 6.0]))
    torch.testing.assert_close(second, torch.tensor([[4.0]]))  # (3 + 5) / 2
    average.use_average()  # twice: still the trained values aside, not the average
    average.use_trained()
    torch.testing.assert_close(first, torch.tensor([5.0, 8.0]))
    torch.testing.assert_close(second, torch.tensor([[5.0]]))
    average.use_average()
    average.keep()
    average.use_trained()  # after keep: nothing to put back
    torch.testing.assert_close(first, torch.tensor([4.0, 6.0]))


@pytest.mark.parametrize("time_constant", [0.5, 0.0, float("nan")])
def test_a_time_constant_below_one_step_is_refused(time_constant):
    with pytest.raises(ValueError, match="time_constant_steps must be at least 1"):
        WeightAverage([torch.zeros(1)], time_constant)


def _recorded_steps(monkeypatch):
    """Record the trained parameters after every optimiser step of the fits that follow."""
    recorded = []
    call = loop._TrainingStep.__call__

    def recording_call(self, X_batch, y_batch, weight):
        result = call(self, X_batch, y_batch, weight)
        recorded.append(torch.cat([parameter.detach().reshape(-1).clone() for parameter in self.parameters]))
        return result

    monkeypatch.setattr(loop._TrainingStep, "__call__", recording_call)
    return recorded


def test_a_fit_keeps_the_average_of_its_trained_weights_and_trains_as_without_it(monkeypatch):
    X, y = make_classification(300, 6, n_informative=4, random_state=0)
    recorded = _recorded_steps(monkeypatch)
    settings = dict(random_state=0, max_epochs=4, batch_size=64, early_stopping=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        plain = SparseTabNetClassifier(**settings, weight_averaging_epochs=None).fit(X, y)
        plain_steps = list(recorded)
        recorded.clear()
        averaged = SparseTabNetClassifier(**settings, weight_averaging_epochs=1.5).fit(X, y)
    steps_per_epoch = 5  # 300 rows in batches of 64
    assert len(plain_steps) == len(recorded) == 4 * steps_per_epoch
    # The optimiser's trajectory is the same step for step: the average is only swapped in between epochs.
    for trained_plain, trained_averaged in zip(plain_steps, recorded, strict=True):
        torch.testing.assert_close(trained_plain, trained_averaged, rtol=0, atol=0)
    assert plain.loss_curve_ == averaged.loss_curve_
    expected = plain_steps[0].double()
    for t, values in enumerate(plain_steps[1:], start=2):
        weight = max(1.0 / t, 1.0 / (1.5 * steps_per_epoch))
        expected = (1 - weight) * expected + weight * values.double()
    kept = torch.cat([parameter.detach().reshape(-1) for parameter in averaged.network_.parameters()])
    torch.testing.assert_close(kept.double(), expected, rtol=1e-5, atol=1e-6)
    last = torch.cat([parameter.detach().reshape(-1) for parameter in plain.network_.parameters()])
    torch.testing.assert_close(last, plain_steps[-1], rtol=0, atol=0)  # without it, the last step's weights
    assert not torch.allclose(kept, last)


def test_early_stopping_scores_and_keeps_the_average_of_its_best_epoch(monkeypatch):
    X, y = make_regression(400, 5, noise=5.0, random_state=0)
    recorded = _recorded_steps(monkeypatch)
    settings = dict(random_state=0, max_epochs=6, batch_size=60, early_stopping=True, n_iter_no_change=50)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        plain = SparseTabNetRegressor(**settings, weight_averaging_epochs=None).fit(X, y)
        recorded.clear()
        averaged = SparseTabNetRegressor(**settings, weight_averaging_epochs=2.0).fit(X, y)
    assert plain.loss_curve_ == averaged.loss_curve_
    assert plain.validation_scores_ != averaged.validation_scores_
    steps_per_epoch = 6  # 360 fit rows (10% held out) in batches of 60
    assert len(recorded) == 6 * steps_per_epoch
    expected, epoch_ends = recorded[0].double(), []
    for t, values in enumerate(recorded, start=1):
        weight = max(1.0 / t, 1.0 / (2.0 * steps_per_epoch))
        expected = (1 - weight) * expected + weight * values.double()
        if t % steps_per_epoch == 0:
            epoch_ends.append(expected)
    best = averaged.best_iteration_
    assert best == int(np.argmax(averaged.validation_scores_))
    kept = torch.cat([parameter.detach().reshape(-1) for parameter in averaged.network_.parameters()])
    torch.testing.assert_close(kept.double(), epoch_ends[best], rtol=1e-5, atol=1e-6)


def test_partial_fit_keeps_the_trained_weights():
    X, y = make_classification(200, 5, random_state=1)
    first = SparseTabNetClassifier(random_state=0, batch_size=50)
    second = SparseTabNetClassifier(random_state=0, batch_size=50, weight_averaging_epochs=1.0)
    for _ in range(2):
        first.partial_fit(X, y, classes=[0, 1])
        second.partial_fit(X, y, classes=[0, 1])
    for a, b in zip(first.network_.parameters(), second.network_.parameters(), strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


@pytest.mark.parametrize("value", [0, -1.0, "2"])
def test_an_invalid_time_constant_is_refused_by_name(value):
    X, y = make_classification(60, 4, random_state=0)
    with pytest.raises(ValueError, match="weight_averaging_epochs"):
        SparseTabNetClassifier(weight_averaging_epochs=value, max_epochs=1).fit(X, y)


@pytest.mark.parametrize(
    "weight_averaging_epochs, kept",
    [(None, "kept the weights of epoch"), (1.0, "kept the average of the weights of epoch")],
)
def test_the_end_of_training_says_whether_the_average_was_kept(weight_averaging_epochs, kept, capsys):
    X, y = make_classification(120, 4, random_state=0)
    settings = dict(random_state=0, max_epochs=2, early_stopping=True, verbose=1)
    SparseTabNetClassifier(**settings, weight_averaging_epochs=weight_averaging_epochs).fit(X, y)
    assert kept in capsys.readouterr().out


@pytest.mark.parametrize(
    "value, keeps_early_stopped_model, expected",
    [("auto", True, 2.0), ("auto", False, None), (1.5, False, 1.5), (1.5, True, 1.5), (None, True, None)],
)
def test_auto_averages_only_where_early_stopping_keeps_the_model(value, keeps_early_stopped_model, expected):
    assert resolve_weight_averaging(value, keeps_early_stopped_model) == expected


@pytest.mark.parametrize(
    "n_rows, fit_settings, expected",
    [
        (60, dict(), [None]),  # under 100 rows: every epoch, the last kept
        (300, dict(early_stopping=True), [2.0]),
        (300, dict(), [None, None]),  # the epoch-count refit: the held-out pass and the refit on every row
        (1200, dict(), [None, None]),
        (300, dict(early_stopping=False), [None]),
        (300, dict(weight_averaging_epochs=0.5), [0.5, 0.5]),  # a value set is every pass's
    ],
)
def test_the_runs_of_a_default_fit_average_as_the_rule_says(monkeypatch, n_rows, fit_settings, expected):
    used = []
    make = loop._weight_average

    def recording(config, tensors, steps_per_epoch):
        used.append(config.weight_averaging_epochs)
        return make(config, tensors, steps_per_epoch)

    monkeypatch.setattr(loop, "_weight_average", recording)
    X, y = make_classification(n_rows, 4, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        SparseTabNetClassifier(random_state=0, max_epochs=2, n_d=4, n_a=4, **fit_settings).fit(X, y)
    assert used == expected


def test_the_update_counted_on_the_device_equals_the_update_counted_on_the_host():
    host, device = torch.zeros(4), torch.zeros(4)
    host_average, device_average = WeightAverage([host], 3.0), WeightAverage([device], 3.0)
    updates = torch.zeros((), dtype=torch.float64)
    for value in (3.0, -1.0, 4.0, 2.0, 8.0):
        host.fill_(value)
        device.fill_(value)
        host_average.update()
        device_average.update_on_device(updates)
    # Weights 1, 1/2, 1/3, then 1/3 (the time constant): 3, 1, 2, 2, 4.
    torch.testing.assert_close(device_average.average[0], torch.full((4,), 4.0))
    torch.testing.assert_close(device_average.average[0], host_average.average[0])
    assert float(updates) == 5.0
