import math

import pytest
import torch

from sparsetab._training.schedule import LearningRateSchedule, make_optimizer
from tests.conftest import training_config


def _config(**changes):
    # A 4-epoch schedule at rate 0.1 whose exponential decay halves it each epoch.
    return training_config(**{"max_epochs": 4, "learning_rate": 0.1, "learning_rate_decay": 0.5, **changes})


def _optimizer(config):
    return make_optimizer([torch.nn.Parameter(torch.zeros(2))], config, fused=False)


def test_weight_decay_picks_adamw_and_none_picks_adam():
    assert type(_optimizer(_config(weight_decay=0.01))) is torch.optim.AdamW
    assert type(_optimizer(_config())) is torch.optim.Adam


def test_the_cosine_rate_of_each_step_by_hand():
    # 4 epochs of 2 steps, no warm-up: step s of epoch k ends at progress k + (s + 1) / 2, and the
    # rate is 0.1 * (1 + cos(pi * progress / 4)) / 2.
    config = _config(learning_rate_schedule="cosine")
    optimizer = _optimizer(config)
    schedule = LearningRateSchedule(optimizer, config, steps_per_epoch=2, loaded=False)
    schedule.before_step(epoch=0, step=0)
    assert optimizer.param_groups[0]["lr"] == pytest.approx(0.1 * (1 + math.cos(math.pi * 0.5 / 4)) / 2)
    schedule.before_step(epoch=3, step=1)
    assert optimizer.param_groups[0]["lr"] == pytest.approx(0.0, abs=1e-12)
    assert not schedule.ended


def test_a_cosine_schedule_run_to_its_end_has_ended():
    config = _config(learning_rate_schedule="cosine", schedule_offset=4)
    assert LearningRateSchedule(_optimizer(config), config, steps_per_epoch=2, loaded=False).ended


def test_the_first_releases_exponential_schedule_decays_once_an_epoch():
    # exponential, no warm-up, no weight decay: torch's ExponentialLR, whose rate the steps leave alone.
    config = _config(learning_rate_schedule="exponential")
    optimizer = _optimizer(config)
    schedule = LearningRateSchedule(optimizer, config, steps_per_epoch=3, loaded=False)
    for step in range(3):
        schedule.before_step(epoch=0, step=step)
        assert optimizer.param_groups[0]["lr"] == pytest.approx(0.1)
    optimizer.step()  # no gradient: nothing changes, but torch expects a step before the scheduler's
    schedule.after_epoch()
    schedule.after_epoch()
    assert optimizer.param_groups[0]["lr"] == pytest.approx(0.1 * 0.5**2)


def test_a_loaded_exponential_rate_continues_at_a_new_learning_rate():
    # A state saved at rate 0.1 * 0.5 = 0.05 with base 0.1, continued at learning_rate 0.2: 0.1.
    saved = _config(learning_rate_schedule="exponential")
    optimizer = _optimizer(saved)
    schedule = LearningRateSchedule(optimizer, saved, steps_per_epoch=1, loaded=False)
    optimizer.step()
    schedule.after_epoch()
    state = optimizer.state_dict()
    continued = _config(learning_rate_schedule="exponential", learning_rate=0.2)
    optimizer = _optimizer(continued)
    optimizer.load_state_dict(state)
    LearningRateSchedule(optimizer, continued, steps_per_epoch=1, loaded=True)
    assert optimizer.param_groups[0]["lr"] == pytest.approx(0.1)
    assert optimizer.param_groups[0]["initial_lr"] == 0.2


@pytest.mark.parametrize("schedule", ["constant", "exponential", "cosine"])
def test_the_rate_table_of_a_run_is_what_before_step_sets(schedule):
    config = training_config(
        learning_rate=0.02,
        learning_rate_schedule=schedule,
        learning_rate_decay=0.9,
        warmup_epochs=1.5,
        max_epochs=4,
        weight_decay=1e-4,
    )
    optimizer = torch.optim.AdamW([torch.nn.Parameter(torch.zeros(2))], lr=0.02)
    rates = LearningRateSchedule(optimizer, config, steps_per_epoch=3, loaded=False)
    table = rates.rates(4)
    assert len(table) == 12 and rates.per_step
    for index, expected in enumerate(table):
        rates.before_step(index // 3, index % 3)
        assert optimizer.param_groups[0]["lr"] == expected
    rates.on_device = True  # a captured run: the table drives the rate, before_step leaves the group alone
    optimizer.param_groups[0]["lr"] = -1.0
    rates.before_step(0, 0)
    assert optimizer.param_groups[0]["lr"] == -1.0


def test_the_first_releases_schedule_has_no_rate_table():
    config = training_config(
        learning_rate=0.02, learning_rate_schedule="exponential", learning_rate_decay=0.9, weight_decay=0.0
    )
    optimizer = torch.optim.Adam([torch.nn.Parameter(torch.zeros(2))], lr=0.02)
    schedule = LearningRateSchedule(optimizer, config, steps_per_epoch=3, loaded=False)
    assert not schedule.per_step
    with pytest.raises(RuntimeError, match="no per-step rate table"):
        schedule.rate(0, 0)
