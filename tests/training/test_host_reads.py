"""What a fit reads back from the device: nothing in a training step, one combined read per epoch (issue 34).

On a GPU a read of a tensor's value makes the host wait for the device, and a training step that reads
nothing can be captured in a CUDA graph. The solvers take their GPU paths here on the CPU (sparsemax and
1.5-entmax by sorting, alpha-entmax with a fixed number of evaluations), and the reads are counted.
"""

import warnings
from unittest import mock

import numpy as np
import pandas as pd
import pytest

import sparsetab.entmax._threshold_kernels as kernels
from sparsetab import SparseTabNetClassifier
from sparsetab.network import ENTMAX_MODES
from tests.entmax.host_reads import counted_host_reads

ROWS, BATCH = 512, 128  # 4 steps an epoch


def _reads_of_a_fit(max_epochs, off_the_cpu=True, **params):
    rng = np.random.default_rng(0)
    X = pd.DataFrame({f"x{j}": rng.normal(size=ROWS) for j in range(5)})
    X["colour"] = rng.choice(["red", "green", "blue"], size=ROWS)
    y = (X["x0"] > 0).astype(int)
    model = SparseTabNetClassifier(
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
    devices = frozenset() if off_the_cpu else frozenset({"cpu"})
    reads = [0]
    with (
        mock.patch.object(kernels, "SORT_FREE_DEVICES", devices),
        mock.patch.object(kernels, "PER_PASS_TEST_DEVICES", devices),
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore")
        with counted_host_reads(reads):
            model.fit(X, y)
    return reads[0], model


@pytest.mark.parametrize("entmax_mode", ENTMAX_MODES)
@pytest.mark.parametrize("step_gates", [None, "sigmoid"])
@pytest.mark.parametrize("numerical_embedding", [None, "piecewise_linear"])
def test_off_the_cpu_a_training_step_reads_nothing_and_an_epoch_reads_once(
    entmax_mode, step_gates, numerical_embedding
):
    params = dict(entmax_mode=entmax_mode, step_gates=step_gates, numerical_embedding=numerical_embedding)
    one_epoch, _ = _reads_of_a_fit(1, **params)
    three_epochs, model = _reads_of_a_fit(3, **params)
    # Two more epochs of 4 steps each: their only reads are the two epochs' combined reads (loss, finiteness and
    # the steps' alphas), whatever the fit reads once (encoding, summaries, the end of training).
    assert three_epochs - one_epoch == 2
    assert model.n_iter_ == 3 and np.isfinite(model.loss_curve_).all()
    assert model.entmax_alpha_history_.shape == (3, model.n_steps)


def test_on_the_cpu_the_solvers_still_read_their_convergence_tests():
    # The count above is not vacuous: the CPU's sort-free solvers test convergence on the host.
    one_epoch, _ = _reads_of_a_fit(1, off_the_cpu=False, entmax_mode="entmax15")
    three_epochs, _ = _reads_of_a_fit(3, off_the_cpu=False, entmax_mode="entmax15")
    assert three_epochs - one_epoch > 2 * 4 * 3  # at least a read per step and attention map


def test_the_combined_read_records_what_the_separate_reads_recorded():
    # The alphas recorded each epoch are the attentive transformers' alphas, learned ones included.
    _, model = _reads_of_a_fit(3, off_the_cpu=False, entmax_mode="adaptive")
    network = model.network_
    assert model.entmax_alpha_history_[-1].tolist() == network.alphas
    assert network.alpha_values().tolist() == network.alphas
    assert len(set(model.entmax_alpha_history_[:, 0])) == 3  # learned: a new value every epoch
