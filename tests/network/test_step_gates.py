import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from sparsetab.entmax import sparsemax
from sparsetab.network import STEP_GATES, StepGates, gate_penalty, sparsemax_gate


def test_sparsemax_gate_hand_computed_values():
    scores = torch.tensor([-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.5])
    # (z + 1) / 2 inside (-1, 1), exactly 0 below and exactly 1 above.
    expected = torch.tensor([0.0, 0.0, 0.25, 0.5, 0.75, 1.0, 1.0])
    torch.testing.assert_close(sparsemax_gate(scores), expected, rtol=0, atol=0)


def test_sparsemax_gate_is_the_first_coordinate_of_sparsemax_over_score_and_zero():
    scores = torch.linspace(-2.5, 2.5, 41, dtype=torch.float64)
    pairs = torch.stack([scores, torch.zeros_like(scores)], dim=1)
    torch.testing.assert_close(sparsemax_gate(scores), sparsemax(pairs, dim=1)[:, 0])


@pytest.mark.parametrize("kind", STEP_GATES)
def test_gate_gradients_in_float64(kind):
    gates = StepGates(4, 3, kind, generator=torch.Generator().manual_seed(0)).double()
    # Scores kept inside (-1, 1), away from the sparsemax gate's kinks, where it is differentiable.
    with torch.no_grad():
        gates.scores.weight.mul_(0.1)
        gates.scores.bias.zero_()
    attention = torch.randn(6, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(1), requires_grad=True)
    weight, bias = gates.scores.weight, gates.scores.bias
    for step in range(3):
        assert torch.autograd.gradcheck(lambda a, w, b, step=step: gates(step, a), (attention, weight, bias))


def test_gates_start_open_at_the_initial_value_whatever_the_kind():
    for kind in STEP_GATES:
        gates = StepGates(4, 2, kind)
        with torch.no_grad():
            gates.scores.weight.zero_()
        values = gates(1, torch.randn(5, 4))
        torch.testing.assert_close(values, torch.full((5, 1), 0.9))


def test_first_step_without_a_gate():
    gates = StepGates(4, 3, "sigmoid", gate_first_step=False)
    assert [gates.is_gated(step) for step in range(3)] == [False, True, True]
    assert gates.scores.out_features == 2
    # One step and no gate on it: nothing to score.
    assert StepGates(4, 1, "sparsemax", gate_first_step=False).scores is None


def test_gate_values_are_in_the_unit_interval_and_sparsemax_reaches_zero():
    attention = 10 * torch.randn(200, 4, generator=torch.Generator().manual_seed(0))
    for kind in STEP_GATES:
        values = StepGates(4, 2, kind, generator=torch.Generator().manual_seed(0))(0, attention)
        assert values.shape == (200, 1)
        assert bool(((values >= 0) & (values <= 1)).all())
    sparse = StepGates(4, 2, "sparsemax", generator=torch.Generator().manual_seed(0))(0, attention)
    assert bool((sparse == 0).any()) and bool((sparse == 1).any())


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"kind": "softmax"}, r"step_gates must be one of \('sigmoid', 'sparsemax'\) or None, got 'softmax'"),
        ({"penalty": "l2"}, r"gate_penalty must be one of \('l1', 'contribution', 'share_entropy'\), got 'l2'"),
    ],
)
def test_invalid_gate_settings_name_the_argument(kwargs, message):
    with pytest.raises(ValueError, match=message):
        StepGates(4, 3, **kwargs)


def test_sigmoid_bias_starts_at_the_logit_of_the_initial_gate():
    gates = StepGates(4, 3, "sigmoid")
    torch.testing.assert_close(gates.scores.bias, torch.full((3,), math.log(0.9 / 0.1)))


def test_gate_penalties_hand_computed():
    gates = torch.tensor([[0.5, 0.0], [1.0, 0.25]])
    eta = torch.tensor([[2.0, 4.0], [0.0, 2.0]])  # mean 2
    torch.testing.assert_close(gate_penalty(gates, eta, "l1"), torch.tensor((0.5 + 1.25) / 2))
    # (0.5 * 2 / 2 + 0) and (1 * 0 / 2 + 0.25 * 2 / 2), mean over the two rows
    torch.testing.assert_close(gate_penalty(gates, eta, "contribution"), torch.tensor((0.5 + 0.25) / 2))
    assert float(gate_penalty(gates[:, :0], eta[:, :0])) == 0.0
    # Weights relative to a given mean contribution (the network's over all its steps): here 4.
    expected = torch.tensor((0.5 * 2 / 4 + 0.25 * 2 / 4) / 2)
    torch.testing.assert_close(gate_penalty(gates, eta, "contribution", mean_contribution=torch.tensor(4.0)), expected)
    assert float(gate_penalty(gates, torch.zeros(2, 2), "contribution")) == 0.0
    with pytest.raises(
        ValueError, match=r"gate_penalty must be one of \('l1', 'contribution', 'share_entropy'\), got 'L1'"
    ):
        gate_penalty(gates, eta, "L1")


def test_the_contribution_weights_are_relative_to_the_batchs_mean_eta():
    generator = torch.Generator().manual_seed(0)
    gates, eta = torch.rand(8, 3, generator=generator), torch.rand(8, 3, generator=generator)
    torch.testing.assert_close(gate_penalty(gates, 10 * eta, "contribution"), gate_penalty(gates, eta, "contribution"))
    # Equal contributions everywhere: every weight is 1, the L1 penalty.
    torch.testing.assert_close(
        gate_penalty(gates, torch.full((8, 3), 3.0), "contribution"), gate_penalty(gates, eta, "l1")
    )


def test_the_contribution_penalty_passes_no_gradient_to_the_step_outputs():
    gates = torch.rand(5, 2, generator=torch.Generator().manual_seed(1), requires_grad=True)
    eta = torch.rand(5, 2, generator=torch.Generator().manual_seed(2), requires_grad=True)
    gate_penalty(gates, eta, "contribution").backward()
    assert eta.grad is None and bool((gates.grad > 0).all())


def test_share_entropy_hand_computed():
    gates = torch.tensor([[1.0, 1.0], [0.5, 0.0], [0.0, 0.0]], dtype=torch.float64)
    eta = torch.tensor([[2.0, 2.0], [4.0, 3.0], [1.0, 1.0]], dtype=torch.float64)
    # Row 0: shares (1/2, 1/2), entropy ln 2; row 1: one step carries the row, 0; row 2: every weight 0, 0.
    expected = torch.tensor(math.log(2) / 3, dtype=torch.float64)
    torch.testing.assert_close(gate_penalty(gates, eta, "share_entropy"), expected)
    # An ungated first step joins each row. Row 0: weights (4, 2, 2), shares (1/2, 1/4, 1/4); row 1: weights
    # (2, 2, 0), entropy ln 2; row 2: weights (1, 0, 0), 0.
    ungated = torch.tensor([[4.0], [2.0], [1.0]], dtype=torch.float64)
    row_0 = -(0.5 * math.log(0.5) + 2 * 0.25 * math.log(0.25))
    expected = torch.tensor((row_0 + math.log(2)) / 3, dtype=torch.float64)
    torch.testing.assert_close(gate_penalty(gates, eta, "share_entropy", ungated_importance=ungated), expected)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1), st.floats(0.01, 100))
def test_share_entropy_cannot_be_paid_by_rescaling(seed, scale):
    generator = torch.Generator().manual_seed(seed)
    gates = torch.rand(6, 3, generator=generator, dtype=torch.float64)
    eta = torch.rand(6, 3, generator=generator, dtype=torch.float64) + 0.1
    penalty = gate_penalty(gates, eta, "share_entropy")
    # Gates scaled together, or every step output scaled: the shares, and so the penalty, do not move.
    torch.testing.assert_close(gate_penalty(gates * scale, eta, "share_entropy"), penalty)
    torch.testing.assert_close(gate_penalty(gates, eta * scale, "share_entropy"), penalty)
    assert 0.0 <= float(penalty) <= math.log(3) + 1e-12


def test_share_entropy_gradients_in_float64_reach_the_gates_only():
    generator = torch.Generator().manual_seed(3)
    gates = (0.1 + torch.rand(4, 3, generator=generator, dtype=torch.float64)).requires_grad_()
    eta = (0.1 + torch.rand(4, 3, generator=generator, dtype=torch.float64)).requires_grad_()
    ungated = (0.1 + torch.rand(4, 1, generator=generator, dtype=torch.float64)).requires_grad_()
    assert torch.autograd.gradcheck(
        lambda g: gate_penalty(g, eta, "share_entropy", ungated_importance=ungated), (gates,)
    )
    gate_penalty(gates, eta, "share_entropy", ungated_importance=ungated).backward()
    assert eta.grad is None and ungated.grad is None and gates.grad is not None
