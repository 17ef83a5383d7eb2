import math
import pickle

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from sparsetab.network import StepGates, gate_penalty


def test_gate_gradients_in_float64():
    gates = StepGates(4, 3, generator=torch.Generator().manual_seed(0)).double()
    attention = torch.randn(6, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(1), requires_grad=True)
    weight, bias = gates.scores.weight, gates.scores.bias
    for step in range(3):
        assert torch.autograd.gradcheck(lambda a, w, b, step=step: gates(step, a), (attention, weight, bias))


def test_gates_start_open_at_the_initial_value():
    gates = StepGates(4, 2)
    torch.testing.assert_close(gates.scores.bias, torch.full((2,), math.log(0.9 / 0.1)))
    with torch.no_grad():
        gates.scores.weight.zero_()
    torch.testing.assert_close(gates(1, torch.randn(5, 4)), torch.full((5, 1), 0.9))


def test_each_step_reads_its_own_row_of_the_scores():
    gates = StepGates(2, 3)
    with torch.no_grad():
        gates.scores.weight.copy_(torch.tensor([[1.0, 0.0], [0.0, 2.0], [-1.0, 1.0]]))
        gates.scores.bias.copy_(torch.tensor([0.0, 1.0, -0.5]))
    attention = torch.tensor([[0.5, -1.0]])
    for step, score in enumerate([0.5, -1.0, -2.0]):
        torch.testing.assert_close(gates(step, attention), torch.sigmoid(torch.tensor([[score]])))


def test_gate_values_are_in_the_unit_interval():
    attention = 10 * torch.randn(200, 4, generator=torch.Generator().manual_seed(0))
    values = StepGates(4, 2, generator=torch.Generator().manual_seed(0))(0, attention)
    assert values.shape == (200, 1)
    assert bool(((values >= 0) & (values <= 1)).all())


def test_a_pickled_network_of_a_removed_variant_is_refused_and_the_kept_one_loads():
    gates = StepGates(4, 3, generator=torch.Generator().manual_seed(0))
    # What a gate module pickled while the variants existed carried.
    gates.kind, gates.penalty, gates.gate_first_step, gates.first_gated = "sigmoid", "l1", True, 0
    restored = pickle.loads(pickle.dumps(gates))
    assert not hasattr(restored, "kind") and not hasattr(restored, "penalty")
    attention = torch.randn(3, 4)
    torch.testing.assert_close(restored(2, attention), gates(2, attention))
    gates.kind = "sparsemax"
    with pytest.raises(ValueError, match=r"saved with step gates 'sparsemax' and gate_first_step=True.*Refit"):
        pickle.loads(pickle.dumps(gates))
    gates.kind, gates.first_gated = "sigmoid", 1
    with pytest.raises(ValueError, match=r"step gates 'sigmoid' and gate_first_step=False"):
        pickle.loads(pickle.dumps(gates))


def test_share_entropy_hand_computed():
    gates = torch.tensor([[1.0, 1.0], [0.5, 0.0], [0.0, 0.0]], dtype=torch.float64)
    eta = torch.tensor([[2.0, 2.0], [4.0, 3.0], [1.0, 1.0]], dtype=torch.float64)
    # Row 0: shares (1/2, 1/2), entropy ln 2; row 1: one step carries the row, 0; row 2: every weight 0, 0.
    expected = torch.tensor(math.log(2) / 3, dtype=torch.float64)
    torch.testing.assert_close(gate_penalty(gates, eta), expected)
    # Row 0 weights (4, 2, 2): shares (1/2, 1/4, 1/4).
    gates = torch.tensor([[1.0, 0.5, 0.25]], dtype=torch.float64)
    eta = torch.tensor([[4.0, 4.0, 8.0]], dtype=torch.float64)
    expected = -(0.5 * math.log(0.5) + 2 * 0.25 * math.log(0.25))
    torch.testing.assert_close(gate_penalty(gates, eta), torch.tensor(expected, dtype=torch.float64))
    assert float(gate_penalty(gates[:, :0], eta[:, :0])) == 0.0


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1), st.floats(0.01, 100))
def test_share_entropy_cannot_be_paid_by_rescaling(seed, scale):
    generator = torch.Generator().manual_seed(seed)
    gates = torch.rand(6, 3, generator=generator, dtype=torch.float64)
    eta = torch.rand(6, 3, generator=generator, dtype=torch.float64) + 0.1
    penalty = gate_penalty(gates, eta)
    # Gates scaled together, or every step output scaled: the shares, and so the penalty, do not move.
    torch.testing.assert_close(gate_penalty(gates * scale, eta), penalty)
    torch.testing.assert_close(gate_penalty(gates, eta * scale), penalty)
    assert 0.0 <= float(penalty) <= math.log(3) + 1e-12


def test_share_entropy_gradients_in_float64_reach_the_gates_only():
    generator = torch.Generator().manual_seed(3)
    gates = (0.1 + torch.rand(4, 3, generator=generator, dtype=torch.float64)).requires_grad_()
    eta = (0.1 + torch.rand(4, 3, generator=generator, dtype=torch.float64)).requires_grad_()
    assert torch.autograd.gradcheck(lambda g: gate_penalty(g, eta), (gates,))
    gate_penalty(gates, eta).backward()
    assert eta.grad is None and gates.grad is not None
