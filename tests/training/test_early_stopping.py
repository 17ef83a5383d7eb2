import math
import warnings

import pytest
import torch
from sklearn.exceptions import ConvergenceWarning

from sparsetab._training.early_stopping import (
    MIN_PATIENCE_STEPS,
    EarlyStopping,
    patience_epochs,
    snapshot,
    warn_at_max_epochs,
)
from sparsetab._training.records import TrainingHistory
from tests.conftest import training_config


def _network(value):
    network = torch.nn.Linear(1, 1)
    with torch.no_grad():
        network.weight.fill_(value)
        network.bias.fill_(0.0)
    return network


def test_patience_counts_epochs_without_a_lead_of_tol_and_the_best_is_kept_however_small_its_lead():
    monitor = EarlyStopping(restore_best=True, patience=2, tol=0.1)
    network = _network(1.0)
    # Scores 0.5, 0.55 (best, lead 0.05 < tol), 0.56 (best again), 0.2: patience counts 0, 1, 2, 3.
    assert monitor.update(0.5, network) is True
    assert monitor.epochs_without_improvement == 0
    network.weight.data.fill_(2.0)
    assert monitor.update(0.55, network) is True
    assert monitor.epochs_without_improvement == 1
    assert not monitor.out_of_patience
    network.weight.data.fill_(3.0)
    assert monitor.update(0.56, network) is True
    assert monitor.epochs_without_improvement == 2
    assert monitor.out_of_patience
    network.weight.data.fill_(4.0)
    assert monitor.update(0.2, network) is False
    assert monitor.best_score == 0.56
    # The weights of the best epoch (the third), not the last ones.
    assert monitor.has_best
    assert monitor.best_state["weight"].item() == 3.0


def test_a_nan_score_is_no_improvement():
    monitor = EarlyStopping(restore_best=True, patience=5, tol=0.0)
    network = _network(1.0)
    monitor.update(1.0, network)
    assert monitor.update(math.nan, network) is False
    assert monitor.epochs_without_improvement == 1
    assert monitor.best_score == 1.0


def test_without_restore_best_no_weights_are_copied():
    monitor = EarlyStopping(restore_best=False, patience=1, tol=0.0)
    assert monitor.update(-3.0, _network(1.0)) is True
    assert monitor.best_state is None
    assert not monitor.has_best


def test_a_snapshot_is_a_copy_that_load_state_dict_restores():
    network = _network(1.5)
    state = snapshot(network)
    network.weight.data.fill_(-7.0)
    assert state["weight"].item() == 1.5
    network.load_state_dict(state)
    assert network.weight.item() == 1.5


@pytest.mark.parametrize(
    ("n_iter_no_change", "steps_per_epoch", "expected"),
    [(10, 1000, 10), (10, 4, 50), (10, 3, 67), (300, 1, 300)],
)
def test_patience_is_at_least_the_minimum_number_of_steps(n_iter_no_change, steps_per_epoch, expected):
    assert MIN_PATIENCE_STEPS == 200
    assert patience_epochs(n_iter_no_change, steps_per_epoch) == expected


def test_max_epochs_advises_more_epochs_only_while_the_validation_score_peaks_late():
    late = TrainingHistory(validation_scores=[0.1, 0.2, 0.3, 0.4, 0.5])
    with pytest.warns(ConvergenceWarning, match="Consider raising max_epochs"):
        warn_at_max_epochs(late, training_config(), early_stopping=False, patience=2)
    early = TrainingHistory(validation_scores=[0.5, 0.4, 0.3, 0.2, 0.1])
    with pytest.warns(UserWarning, match="peaked at epoch 1") as record:
        warn_at_max_epochs(early, training_config(), early_stopping=False, patience=2)
    assert not any(issubclass(item.category, ConvergenceWarning) for item in record)
    # Under early stopping the best epoch's weights were kept: nothing to say.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_at_max_epochs(early, training_config(early_stopping=True), early_stopping=True, patience=2)


@pytest.mark.parametrize(
    "peak, expected",
    [
        (4, None),  # best at epoch 5 of 30, 25 epochs before the end: held-out error rising, nothing to advise
        (
            24,
            "the validation score last improved at epoch 25, 5 epoch(s) before the end "
            "(training stops after 50 epochs without improvement)",
        ),
        (29, "the validation score was still improving"),
    ],
)
def test_under_early_stopping_the_advice_reads_n_iter_no_change_not_the_stretched_patience(peak, expected):
    # 120 rows in batches of 32: 4 steps an epoch, so the patience is stretched to 50 epochs (200 steps); a
    # fit of max_epochs=30 never runs out of it, and only n_iter_no_change (20) can say the score stopped.
    scores = [min(epoch, peak) - 0.5 * max(epoch - peak, 0) for epoch in range(30)]
    history = TrainingHistory(validation_scores=scores)
    history.loss_curve.extend(1.0 / (epoch + 1) for epoch in range(30))
    config = training_config(max_epochs=30, n_iter_no_change=20, early_stopping=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn_at_max_epochs(history, config, early_stopping=True, patience=patience_epochs(20, 4))
    if expected is None:
        assert caught == []
    else:
        assert [item.category for item in caught] == [ConvergenceWarning]
        assert str(caught[0].message) == f"max_epochs=30 reached and {expected}. Consider raising max_epochs."
