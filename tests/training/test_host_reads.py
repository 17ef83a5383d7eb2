"""What makes a fit wait for the device: nothing in a training step, one combined read per epoch (issue 34).

On a GPU the host waits for the device at a read of a tensor's value, at an operator whose output size depends on
the values, and at a copy from pageable host memory (sparsetab._host_syncs counts all three on the CPU); a
training step that does none of them can be captured in a CUDA graph. The solvers take their GPU paths here on the
CPU (sparsemax and 1.5-entmax by sorting, alpha-entmax with a fixed number of evaluations), and the batch norms
apply their running statistics every 2 steps instead of 16, so that steps include that work too.
"""

import collections
import warnings
from unittest import mock

import numpy as np
import pandas as pd
import pytest

import sparsetab._training.loop as loop
import sparsetab.entmax._threshold_kernels as kernels
import sparsetab.network.blocks as blocks
from sparsetab import SparseTabNetClassifier, SparseTabNetPretrainer
from sparsetab._host_syncs import SYNC_KINDS, SyncCounter
from sparsetab.network import ENTMAX_MODES

ROWS, BATCH = 512, 128  # 4 steps an epoch


def _syncs_of_a_fit(max_epochs, off_the_cpu=True, pretrainer=False, **params):
    """(syncs of the whole fit by kind, syncs inside its training steps by kind, the model)."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({f"x{j}": rng.normal(size=ROWS) for j in range(5)})
    X["colour"] = rng.choice(["red", "green", "blue"], size=ROWS)
    y = (X["x0"] > 0).astype(int)
    if pretrainer:
        # Its step also draws the obfuscation masks on the host and copies them to the device.
        model, fit_arguments = SparseTabNetPretrainer(max_epochs=max_epochs, batch_size=BATCH, random_state=0), (X,)
    else:
        model, fit_arguments = _classifier(max_epochs, **params), (X, y)
    devices = frozenset() if off_the_cpu else frozenset({"cpu"})
    counter, in_steps = SyncCounter(), SyncCounter()
    step = loop._TrainingStep.__call__

    def counted_step(self, *args):
        before = dict(counter.counts)
        try:
            return step(self, *args)
        finally:
            in_steps.counts.update(counter.counts - collections.Counter(before))

    with (
        mock.patch.object(kernels, "SORT_FREE_DEVICES", devices),
        mock.patch.object(kernels, "PER_PASS_TEST_DEVICES", devices),
        mock.patch.object(blocks, "_MAX_PENDING_STEPS", 2),
        mock.patch.object(loop._TrainingStep, "__call__", counted_step),
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore")
        with counter.counting():
            model.fit(*fit_arguments)
    return counter.by_kind(), in_steps.by_kind(), model


def _classifier(max_epochs, **params):
    return SparseTabNetClassifier(
        n_d=8,
        n_a=8,
        max_epochs=max_epochs,
        batch_size=BATCH,
        virtual_batch_size=64,
        entmax_alpha=1.3,
        early_stopping=False,
        n_efficient_members=1,
        random_state=0,
        **params,
    )


def _more(later, earlier):
    return {kind: later[kind] - earlier[kind] for kind in SYNC_KINDS}


@pytest.mark.parametrize("entmax_mode", ENTMAX_MODES)
@pytest.mark.parametrize("step_gates", [None, "sigmoid"])
@pytest.mark.parametrize("numerical_embedding", [None, "piecewise_linear"])
def test_off_the_cpu_a_training_step_waits_for_nothing_and_an_epoch_reads_once(
    entmax_mode, step_gates, numerical_embedding
):
    params = dict(entmax_mode=entmax_mode, step_gates=step_gates, numerical_embedding=numerical_embedding)
    one_epoch, _, _ = _syncs_of_a_fit(1, **params)
    three_epochs, in_steps, model = _syncs_of_a_fit(3, **params)
    # The 12 training steps (3 epochs of 4) wait for nothing: no value read, no data-dependent shape, no pageable
    # copy, the running-statistics updates of the batch norms included.
    assert in_steps == dict.fromkeys(SYNC_KINDS, 0)
    # Two more epochs add only their two combined reads (loss, finiteness and the steps' alphas): whatever else
    # the fit waits for happens once (encoding, summaries, the end of training).
    assert _more(three_epochs, one_epoch) == {"value_read": 2, "data_dependent_shape": 0, "pageable_copy": 0}
    assert model.n_iter_ == 3 and np.isfinite(model.loss_curve_).all()
    assert model.entmax_alpha_history_.shape == (3, model.n_steps)


def test_the_pretrainers_steps_wait_for_nothing_either():
    one_epoch, _, _ = _syncs_of_a_fit(1, pretrainer=True)
    three_epochs, in_steps, model = _syncs_of_a_fit(3, pretrainer=True)
    assert in_steps == dict.fromkeys(SYNC_KINDS, 0)
    assert _more(three_epochs, one_epoch) == {"value_read": 2, "data_dependent_shape": 0, "pageable_copy": 0}
    assert model.n_iter_ == 3


def test_on_the_cpu_the_solvers_still_read_their_convergence_tests():
    # The counts above are not vacuous: the CPU's sort-free solvers test convergence on the host, in the step.
    one_epoch, _, _ = _syncs_of_a_fit(1, off_the_cpu=False, entmax_mode="entmax15")
    three_epochs, in_steps, _ = _syncs_of_a_fit(3, off_the_cpu=False, entmax_mode="entmax15")
    assert _more(three_epochs, one_epoch)["value_read"] > 2 * 4 * 3  # at least a read per step and attention map
    assert in_steps["value_read"] > 3 * 4 * 3


def test_a_pageable_copy_in_a_step_is_counted(monkeypatch):
    # ... and so are copies: the batch norms' flush made the old way (compiled as blocks.py's code, which is what the
    # counter watches), a tensor built on the host and moved with .to(device), counts in the steps.
    old_way = eval(compile("lambda tensor, device: tensor.to(device)", blocks.__file__, "eval"))
    monkeypatch.setattr(blocks, "host_to_device", old_way)
    _, in_steps, _ = _syncs_of_a_fit(1, entmax_mode="entmax15")
    assert in_steps["value_read"] == 0 and in_steps["pageable_copy"] > 0


def test_the_combined_read_records_what_the_separate_reads_recorded():
    # The alphas recorded each epoch are the attentive transformers' alphas, learned ones included.
    _, _, model = _syncs_of_a_fit(3, off_the_cpu=False, entmax_mode="adaptive")
    network = model.network_
    assert model.entmax_alpha_history_[-1].tolist() == network.alphas
    assert network.alpha_values().tolist() == network.alphas
    assert len(set(model.entmax_alpha_history_[:, 0])) == 3  # learned: a new value every epoch
