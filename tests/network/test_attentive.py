"""Tests of sparsetab.network.attentive: the attentive transformer ``M[i] = map(P[i-1] * h_i(a[i-1]))``.

Arik and Pfister (2021), section 3, eq. for ``M[i]``: ``h_i`` is a fully connected layer followed by
(ghost) batch norm, ``P[i-1]`` the prior scale. The maps are checked against the reference ``entmax``
package (Peters et al., 2019) and against hand-computed values. tests/network/test_tabnet.py covers the
transformer inside the network (mask distributions per mode, the prior update, the exportable path,
the error messages raised through TabNet, the adaptive alpha at 1.3).
"""

import math

import entmax as reference
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.nn import functional as F

from sparsetab.network.attentive import ENTMAX_MODES, AttentiveTransformer

# (entmax_mode, entmax_alpha, alpha of the map): every mode, and the constant mode at its special alphas.
MAPS = [
    ("sparsemax", 1.5, 2.0),
    ("entmax15", 1.5, 1.5),
    ("constant", 1.3, 1.3),
    ("constant", 1.0, 1.0),
    ("constant", 1.5, 1.5),
    ("constant", 2.0, 2.0),
    ("constant", 1.8, 1.8),
    ("adaptive", 1.3, 1.3),
    ("adaptive", 1.7, 1.7),
]
MAP_IDS = [f"{mode}-{alpha}" for mode, alpha, _ in MAPS]


def _reference_map(scores, alpha):
    if alpha == 1.0:
        return torch.softmax(scores, dim=-1)
    if alpha == 2.0:
        return reference.sparsemax(scores, dim=-1)
    if alpha == 1.5:
        return reference.entmax15(scores, dim=-1)
    return reference.entmax_bisect(scores, alpha, dim=-1, n_iter=100)


def _transformer(mode, alpha=1.5, input_dim=4, n_groups=5, virtual_batch_size=8, seed=0):
    torch.manual_seed(seed)
    return AttentiveTransformer(input_dim, n_groups, virtual_batch_size, 0.02, entmax_mode=mode, entmax_alpha=alpha)


def _identity_scores(mode, alpha=1.5, n_groups=3):
    """An evaluation-mode float64 transformer whose scores h(a) are a itself (fc = I, batch norm = identity)."""
    transformer = _transformer(mode, alpha, input_dim=n_groups, n_groups=n_groups).double().eval()
    with torch.no_grad():
        transformer.fc.weight.copy_(torch.eye(n_groups, dtype=torch.float64))
        # evaluation batch norm: x * weight / sqrt(running_var + epsilon) with running statistics (0, 1)
        transformer.bn.weight.fill_(math.sqrt(1.0 + transformer.bn.epsilon))
    return transformer


# ----- M = map(P * h(a)) against a reference -------------------------------------------------
@pytest.mark.parametrize("mode, entmax_alpha, alpha", MAPS, ids=MAP_IDS)
def test_mask_is_the_map_of_the_prior_times_the_batch_normalised_scores(mode, entmax_alpha, alpha):
    transformer = _transformer(mode, entmax_alpha).double().train()
    generator = torch.Generator().manual_seed(1)
    a = torch.randn(6, 4, generator=generator, dtype=torch.float64) * 2
    prior = torch.rand(6, 5, generator=generator, dtype=torch.float64) * 1.3
    prior[0, 1] = prior[2, [0, 4]] = prior[5, 3] = 0.0
    with torch.no_grad():
        transformer.bn.weight.uniform_(0.5, 2.0, generator=generator)
        transformer.bn.bias.uniform_(-0.5, 0.5, generator=generator)
    mask = transformer(a, prior)
    # 6 rows, virtual batches of 8: one batch norm over the batch, with the biased variance
    h = F.batch_norm(a @ transformer.fc.weight.T, None, None, transformer.bn.weight, transformer.bn.bias, training=True)
    assert transformer.alpha == pytest.approx(alpha, abs=1e-7)
    if mode == "adaptive":  # the float32 alpha_logit's alpha, in float64 here
        alpha = transformer.alpha
    torch.testing.assert_close(mask, _reference_map(prior * h, alpha), rtol=0, atol=1e-9)
    # prior None stands for P = 1
    torch.testing.assert_close(transformer(a, None), _reference_map(h, alpha), rtol=0, atol=1e-9)


@pytest.mark.parametrize("mode, entmax_alpha, alpha", MAPS, ids=MAP_IDS)
def test_masks_have_one_value_per_group_non_negative_rows_summing_to_one(mode, entmax_alpha, alpha):
    # 10 rows in virtual batches of 4, training mode; float32 as in a fit.
    transformer = _transformer(mode, entmax_alpha, input_dim=3, n_groups=7, virtual_batch_size=4).train()
    generator = torch.Generator().manual_seed(2)
    a = torch.randn(10, 3, generator=generator)
    prior = torch.rand(10, 7, generator=generator) + 0.3
    mask = transformer(a, prior)
    assert mask.shape == (10, 7) and mask.dtype == torch.float32
    assert (mask >= 0).all()
    torch.testing.assert_close(mask.sum(dim=1), torch.ones(10))
    assert (mask == 0).any() if alpha > 1.0 else (mask > 0).all()  # softmax is dense, the others sparse here
    eval_mask = transformer.eval()(a, prior)
    assert eval_mask.shape == (10, 7)
    torch.testing.assert_close(eval_mask.sum(dim=1), torch.ones(10))


@pytest.mark.parametrize("mode, entmax_alpha, alpha", MAPS, ids=MAP_IDS)
def test_one_group_gets_the_whole_mask(mode, entmax_alpha, alpha):
    transformer = _transformer(mode, entmax_alpha, n_groups=1).eval()
    mask = transformer(torch.randn(5, 4), torch.full((5, 1), 0.7))
    torch.testing.assert_close(mask, torch.ones(5, 1))


# ----- hand-computed masks ---------------------------------------------------------------------
def test_sparsemax_mask_by_hand():
    # sparsemax(z) = max(z - tau, 0) with sum 1: for z = (1, 0.5, -1) the support is {1, 2} and
    # tau = (1 + 0.5 - 1) / 2 = 0.25.
    transformer = _identity_scores("sparsemax")
    a = torch.tensor([[1.0, 0.5, -1.0], [1.0, 3.0, 0.5], [0.2, 0.1, 0.0]], dtype=torch.float64)
    prior = torch.tensor([[1.0, 1.0, 1.0], [1.0, 0.0, 1.0], [5.0, 10.0, 1.0]], dtype=torch.float64)
    # row 2: scores (1, 0, 0.5) -> tau 0.25; row 3: scores (1, 1, 0) -> tau 0.5
    expected = torch.tensor([[0.75, 0.25, 0.0], [0.75, 0.0, 0.25], [0.5, 0.5, 0.0]], dtype=torch.float64)
    torch.testing.assert_close(transformer(a, prior), expected, rtol=0, atol=1e-12)
    torch.testing.assert_close(_identity_scores("constant", 2.0)(a, prior), expected, rtol=0, atol=1e-12)


def test_entmax15_mask_by_hand():
    # 1.5-entmax(z) = max(z / 2 - tau, 0) ** 2 with sum 1. For z = (2, 1, -5): (1 - tau)^2 + (0.5 - tau)^2 = 1,
    # i.e. 2 tau^2 - 3 tau + 1/4 = 0, tau = (3 - sqrt(7)) / 4 (below 0.5, so both are in the support).
    tau = (3 - math.sqrt(7)) / 4
    expected = torch.tensor([[(1 - tau) ** 2, (0.5 - tau) ** 2, 0.0], [1 / 3, 1 / 3, 1 / 3]], dtype=torch.float64)
    a = torch.tensor([[2.0, 1.0, -5.0], [0.4, 0.4, 0.4]], dtype=torch.float64)
    for mode, alpha in [("entmax15", 1.5), ("constant", 1.5)]:
        torch.testing.assert_close(_identity_scores(mode, alpha)(a, None), expected, rtol=0, atol=1e-12)
    # adaptive alpha at 1.5 runs the root finder: the same values
    torch.testing.assert_close(_identity_scores("adaptive", 1.5)(a, None), expected, rtol=0, atol=1e-9)


def test_constant_alpha_one_is_the_softmax_by_hand():
    a = torch.tensor([[0.0, math.log(2.0), math.log(5.0)]], dtype=torch.float64)
    prior = torch.tensor([[1.0, 1.0, 1.0]], dtype=torch.float64)
    expected = torch.tensor([[1 / 8, 2 / 8, 5 / 8]], dtype=torch.float64)
    torch.testing.assert_close(_identity_scores("constant", 1.0)(a, prior), expected, rtol=0, atol=1e-12)
    # prior 0 on the largest score: scores (0, log 2, 0) -> (1, 2, 1) / 4
    prior[0, 2] = 0.0
    expected = torch.tensor([[0.25, 0.5, 0.25]], dtype=torch.float64)
    torch.testing.assert_close(_identity_scores("constant", 1.0)(a, prior), expected, rtol=0, atol=1e-12)


def test_a_zero_prior_zeroes_the_score_not_necessarily_the_mask():
    # The paper's formula multiplies the scores by the prior: a column with prior 0 has score 0, and when
    # every other score is negative, 0 is the largest score and that column takes the mask (here all of it).
    a = torch.tensor([[-1.5, -2.0, 5.0]], dtype=torch.float64)
    prior = torch.tensor([[1.0, 1.0, 0.0]], dtype=torch.float64)
    expected = torch.tensor([[0.0, 0.0, 1.0]], dtype=torch.float64)
    torch.testing.assert_close(_identity_scores("sparsemax")(a, prior), expected, rtol=0, atol=0)


# ----- zero prior --------------------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(
    mode_alpha=st.sampled_from([("sparsemax", 2.0), ("entmax15", 1.5), ("constant", 1.3), ("adaptive", 1.7)]),
    scores=st.lists(st.floats(-3, 3), min_size=5, max_size=5),
    priors=st.lists(st.one_of(st.just(0.0), st.floats(0.1, 2.0)), min_size=5, max_size=5),
    top=st.integers(0, 4),
    margin=st.floats(0.05, 3.0),
)
def test_columns_with_zero_prior_get_zero_mask_when_another_score_clears_the_threshold(
    mode_alpha, scores, priors, top, margin
):
    # alpha-entmax: p_j = ((alpha - 1) z_j - tau)_+ ** (1 / (alpha - 1)), and p_max <= 1 gives
    # tau >= (alpha - 1) z_max - 1 > 0 when (alpha - 1) z_max > 1: a score of 0 (prior 0) is then outside
    # the support. Column `top` gets such a score.
    mode, alpha = mode_alpha
    priors[top] = max(priors[top], 0.1)
    scores[top] = (1.0 / (alpha - 1.0) + margin) / priors[top]
    transformer = _identity_scores(mode, alpha, n_groups=5)
    a = torch.tensor([scores], dtype=torch.float64)
    prior = torch.tensor([priors], dtype=torch.float64)
    mask = transformer(a, prior)
    assert (mask >= 0).all()
    assert mask.sum().item() == pytest.approx(1.0, abs=1e-12)
    assert (mask[prior == 0] == 0).all()
    assert mask[0, (prior * a).argmax()] > 0
    torch.testing.assert_close(mask, _reference_map(prior * a, transformer.alpha), rtol=0, atol=1e-9)


# ----- adaptive alpha ----------------------------------------------------------------------------
def test_alpha_of_the_fixed_maps_and_their_parameters():
    for mode, alpha, expected in [("sparsemax", 1.3, 2.0), ("entmax15", 1.3, 1.5), ("constant", 1.25, 1.25)]:
        transformer = _transformer(mode, alpha)
        assert transformer.alpha == expected and type(transformer.alpha) is float
        assert sorted(name for name, _ in transformer.named_parameters()) == ["bn.bias", "bn.weight", "fc.weight"]
    adaptive = _transformer("adaptive", 1.25)
    assert sorted(name for name, _ in adaptive.named_parameters()) == [
        "alpha_logit",
        "bn.bias",
        "bn.weight",
        "fc.weight",
    ]
    assert adaptive.alpha_logit.shape == () and adaptive.alpha_logit.requires_grad


@settings(max_examples=40, deadline=None)
@given(alpha=st.floats(1.01, 1.99))
def test_adaptive_alpha_starts_at_entmax_alpha(alpha):
    transformer = _transformer("adaptive", alpha)
    assert transformer.alpha == pytest.approx(alpha, abs=1e-6)
    # alpha = 1 + sigmoid(theta): theta = logit(alpha - 1)
    assert transformer.alpha_logit.item() == pytest.approx(math.log((alpha - 1) / (2 - alpha)), abs=1e-5)


@settings(max_examples=40, deadline=None)
@given(logit=st.floats(-8.0, 8.0))
def test_adaptive_alpha_stays_inside_one_two_and_the_mask_is_a_distribution(logit):
    transformer = _transformer("adaptive", 1.5).eval()
    with torch.no_grad():
        transformer.alpha_logit.fill_(logit)
    assert 1.0 < transformer.alpha < 2.0
    assert transformer.alpha == pytest.approx(1.0 + 1.0 / (1.0 + math.exp(-logit)), abs=1e-6)
    mask = transformer(torch.randn(4, 4, generator=torch.Generator().manual_seed(3)), None)
    assert (mask >= 0).all()
    torch.testing.assert_close(mask.sum(dim=1), torch.ones(4))


def test_adaptive_alpha_is_learned_through_the_mask():
    # Pushing the mask towards one column makes the map sparser: gradient descent raises alpha.
    transformer = _transformer("adaptive", 1.3).train()
    generator = torch.Generator().manual_seed(4)
    a = torch.randn(8, 4, generator=generator)
    optimizer = torch.optim.SGD([transformer.alpha_logit], lr=0.5)
    before = transformer.alpha
    for _ in range(3):
        optimizer.zero_grad()
        mask = transformer(a, None)
        loss = -(mask.max(dim=1).values).mean()
        loss.backward()
        assert torch.isfinite(transformer.alpha_logit.grad) and transformer.alpha_logit.grad != 0
        optimizer.step()
    assert before < transformer.alpha < 2.0


def test_adaptive_alpha_gradient_matches_finite_differences():
    transformer = _transformer("adaptive", 1.4).double().eval()
    a = torch.randn(5, 4, generator=torch.Generator().manual_seed(5), dtype=torch.float64)
    prior = torch.rand(5, 5, generator=torch.Generator().manual_seed(6), dtype=torch.float64) + 0.5

    def mask_of_logit(logit):
        return torch.func.functional_call(transformer, {"alpha_logit": logit}, (a, prior))

    logit = transformer.alpha_logit.detach().clone().requires_grad_(True)
    assert torch.autograd.gradcheck(mask_of_logit, (logit,), eps=1e-6, atol=1e-6)


# ----- gradients with respect to the input ----------------------------------------------------
@pytest.mark.parametrize("mode, entmax_alpha, alpha", MAPS, ids=MAP_IDS)
def test_gradcheck_of_the_mask_with_respect_to_the_features_and_the_prior(mode, entmax_alpha, alpha):
    # Training mode, 8 rows in two virtual batches of 4: the batch statistics are part of the function.
    # Random inputs lie off the points where the support of the sparse maps changes.
    transformer = _transformer(mode, entmax_alpha, virtual_batch_size=4).double().train()
    generator = torch.Generator().manual_seed(7)
    a = torch.randn(8, 4, generator=generator, dtype=torch.float64).requires_grad_(True)
    prior = (torch.rand(8, 5, generator=generator, dtype=torch.float64) + 0.2).requires_grad_(True)
    assert torch.autograd.gradcheck(transformer, (a, prior), eps=1e-6, atol=1e-6)
    assert torch.autograd.gradcheck(lambda x: transformer(x, None), (a,), eps=1e-6, atol=1e-6)


def test_gradcheck_in_evaluation_mode_with_zero_priors():
    # The prior of a column used up at a previous step is 0; its gradient is still defined.
    transformer = _transformer("entmax15", virtual_batch_size=4).double().eval()
    generator = torch.Generator().manual_seed(8)
    a = torch.randn(6, 4, generator=generator, dtype=torch.float64).requires_grad_(True)
    prior = torch.rand(6, 5, generator=generator, dtype=torch.float64) + 0.2
    prior[:, 2] = 0.0
    prior.requires_grad_(True)
    assert torch.autograd.gradcheck(transformer, (a, prior), eps=1e-6, atol=1e-6)


# ----- validation --------------------------------------------------------------------------------
def test_modes_are_the_documented_ones():
    assert ENTMAX_MODES == ("sparsemax", "entmax15", "constant", "adaptive")


@pytest.mark.parametrize(
    "mode, alpha, message",
    [
        (
            "Sparsemax",
            1.5,
            "entmax_mode must be one of ('sparsemax', 'entmax15', 'constant', 'adaptive'), got 'Sparsemax'.",
        ),
        ("sparsemax", 0.5, "entmax_alpha must be in [1, 2], got 0.5."),
        ("entmax15", 2.01, "entmax_alpha must be in [1, 2], got 2.01."),
        ("adaptive", 1.0, "entmax_mode='adaptive' needs 1 < entmax_alpha < 2 (alpha = 1 + sigmoid(theta)), got 1.0."),
    ],
)
def test_invalid_settings_raise_a_value_error_naming_the_value(mode, alpha, message):
    with pytest.raises(ValueError) as excinfo:
        _transformer(mode, alpha)
    assert excinfo.type is ValueError and str(excinfo.value) == message
