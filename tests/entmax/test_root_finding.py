import math

import entmax
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch.autograd import gradcheck, gradgradcheck
from torch.testing import assert_close

from sparsetab.entmax import (
    EntmaxBisect,
    entmax15,
    entmax_bisect,
    sparsemax,
    sparsemax_bisect,
)
from sparsetab.entmax.root_finding import (
    BudgetBisect,
    NormmaxBisect,
    SparsemaxBisect,
    _entmax_bisect_iterations,
    budget_bisect,
    entmax_bisect_of_valid_alpha,
    normmax_bisect,
)
from tests.entmax.entmax_reference import SETTINGS, matrices, reference_entmax, reference_entmax_qexp, seeded
from tests.entmax.host_reads import convergence_tests, counted_host_reads

PATHS = pytest.mark.parametrize("training", [True, False], ids=["train", "export"])


# ---------------------------------------------------------------- hand-worked values


def test_alpha_3_hand_computed():
    # p_i = [2 x_i - tau]_+^(1/2). With s = sqrt(-tau): sqrt(1/2 + s^2) + s = 1
    # gives s = 1/4, tau = -1/16, p = (sqrt(9/16), sqrt(1/16)).
    p = entmax_bisect(torch.tensor([0.25, 0.0], dtype=torch.float64), alpha=3.0)
    assert_close(p, torch.tensor([0.75, 0.25], dtype=torch.float64))


def test_alpha_15_hand_computed():
    r7 = math.sqrt(7)
    p = entmax_bisect(torch.tensor([2.0, 1.0, 0.0], dtype=torch.float64), alpha=1.5)
    assert_close(p, torch.tensor([(4 + r7) / 8, (4 - r7) / 8, 0.0], dtype=torch.float64))


def test_sparsemax_bisect_hand_computed():
    p = sparsemax_bisect(torch.tensor([0.5, 0.2, -0.1], dtype=torch.float64))
    assert_close(p, torch.tensor([19 / 30, 1 / 3, 1 / 30], dtype=torch.float64))


@PATHS
def test_alpha_half_hand_computed(training):
    # alpha = 1/2: p_i = (-x_i/2 - tau)^(-2) with every base s_i > 0 (dense).
    # s = (5/4, 5/3) solves 1/s1^2 + 1/s2^2 = 1 and s1 - s2 = -(x1 - x2)/2 for
    # x = (5/6, 0), so p = (16/25, 9/25).
    p = entmax_bisect(torch.tensor([5 / 6, 0.0], dtype=torch.float64), alpha=0.5, training=training)
    assert_close(p, torch.tensor([16 / 25, 9 / 25], dtype=torch.float64))


@PATHS
def test_normmax_hand_computed(training):
    # alpha = 2: u = [x + s]_+ with (1/2 + s)^2 + s^2 = 1, s = (sqrt 7 - 1)/4, p = u / sum u.
    r7 = math.sqrt(7)
    p = normmax_bisect(torch.tensor([0.5, 0.0], dtype=torch.float64), alpha=2, training=training)
    assert_close(p, torch.tensor([(r7 + 1) / (2 * r7), (r7 - 1) / (2 * r7)], dtype=torch.float64))


@PATHS
def test_budget_hand_computed(training):
    # All three active: 0.6 - 3 tau = 2. With a capped entry: 0.3 + 0.1 - 2 tau = 0.5.
    p = budget_bisect(torch.tensor([0.5, 0.2, -0.1], dtype=torch.float64), budget=2, training=training)
    assert_close(p, torch.tensor([0.5, 0.2, -0.1], dtype=torch.float64) + 1.4 / 3)
    p = budget_bisect(torch.tensor([2.0, 0.3, 0.1], dtype=torch.float64), budget=1.5, training=training)
    assert_close(p, torch.tensor([1.0, 0.35, 0.15], dtype=torch.float64))


def _capped_simplex_reference(z, budget):
    """Exact float64 threshold of ``sum clamp(z - t, 0, 1) = budget``: the root on its linear piece."""
    z = [float(value) for value in z]

    def total(t):
        return sum(min(max(value - t, 0.0), 1.0) for value in z)

    kinks = sorted({value for value in z} | {value - 1 for value in z})
    for left, right in zip(kinks, kinks[1:]):
        high, low = total(left), total(right)  # decreasing in t
        if high >= budget >= low:
            t = left if high == low else left + (high - budget) * (right - left) / (high - low)
            return torch.tensor([min(max(value - t, 0.0), 1.0) for value in z], dtype=torch.float64)
    raise AssertionError("no root")


@PATHS
def test_budget_one_on_a_grid_is_sparsemax(training):
    # Issue 33: the kinks of this sum sat on the solver's iterates, and its Newton steps cycled between two of
    # them (mass 1.25). Budget 1 with no entry capped is sparsemax.
    x = 3 * torch.tensor([0, 0.25, 0.5, 0.75, 1])
    expected = torch.tensor([0, 0, 0, 0.125, 0.875])
    assert_close(budget_bisect(x, budget=1, dim=0, training=training), expected)
    assert_close(sparsemax(x, dim=0), expected)
    assert_close(budget_bisect(x, budget=1, dim=0, ensure_sum_one=False), expected)


@SETTINGS
@given(
    values=st.lists(st.integers(-12, 12), min_size=2, max_size=7),
    scale=st.sampled_from([0.25, 0.5, 0.75, 1.0, 3.0]),
    budget_share=st.sampled_from([0.2, 0.25, 0.5, 0.75, 1.0]),
    dtype=st.sampled_from([torch.float32, torch.float64]),
    training=st.booleans(),
)
def test_budget_matches_the_exact_projection_when_the_support_sits_on_kinks(
    values, scale, budget_share, dtype, training
):
    # Scores on a grid put the sum's kinks (z_i and z_i - 1) on the bisection midpoints and Newton landings.
    z = torch.tensor(values, dtype=torch.float64) * scale / 4
    budget = max(0.25, round(budget_share * (len(values) - 1) * 4) / 4)
    expected = _capped_simplex_reference(z.tolist(), budget)
    p = budget_bisect(z.to(dtype), budget=budget, training=training)
    tolerance = 1e-5 if dtype == torch.float32 else 1e-10
    assert_close(p.double(), expected, rtol=0, atol=tolerance)
    assert_close(p.double().sum(), torch.tensor(budget, dtype=torch.float64), rtol=0, atol=tolerance * len(values))


@SETTINGS
@given(
    values=st.lists(st.integers(-12, 12), min_size=2, max_size=7),
    scale=st.sampled_from([0.25, 0.5, 0.75, 1.0, 3.0]),
    alpha=st.sampled_from([1.25, 1.5, 2.0, 3.0]),
    dtype=st.sampled_from([torch.float32, torch.float64]),
    training=st.booleans(),
)
def test_alpha_entmax_matches_a_float64_reference_when_the_support_sits_on_kinks(values, scale, alpha, dtype, training):
    # The same grid scores as the budget test above: the support's edge falls on bisection midpoints.
    x = torch.tensor(values, dtype=torch.float64) * scale / 4
    expected = reference_entmax(x, alpha)
    expected = expected / expected.sum()
    tolerance = 1e-5 if dtype == torch.float32 else 1e-10
    assert_close(entmax_bisect(x.to(dtype), alpha=alpha, training=training).double(), expected, rtol=0, atol=tolerance)
    if alpha == 2.0:
        assert_close(sparsemax_bisect(x.to(dtype), training=training).double(), expected, rtol=0, atol=tolerance)


# ---------------------------------------------------------------- alpha = 1 and alpha < 1


@PATHS
def test_alpha_one_is_exactly_softmax_for_numbers_and_tensor_entries(training):
    X = seeded(3, 5)
    assert torch.equal(entmax_bisect(X, alpha=1, training=training), torch.softmax(X, -1))
    alpha = torch.tensor([[1.0], [1.5], [1.0]], dtype=torch.float64)
    p = entmax_bisect(X, alpha, training=training)
    assert torch.equal(p[[0, 2]], torch.softmax(X[[0, 2]], -1))
    assert_close(p[1], entmax_bisect(X[1], 1.5))


def test_limit_alpha_to_one_approaches_softmax_from_both_sides():
    X = seeded(3, 5)
    for alpha in (1.001, 0.999):
        assert_close(entmax_bisect(X, alpha=alpha), torch.softmax(X, -1), atol=5e-3, rtol=0)


@PATHS
@pytest.mark.parametrize("alpha", [0.1, 0.5, 0.9, 0.999])
def test_alpha_below_one_is_dense_and_matches_reference(alpha, training):
    X = 3 * seeded(6, 9, seed=2)
    p = entmax_bisect(X, alpha, training=training)
    assert (p > 0).all()
    assert_close(p, reference_entmax_qexp(X, alpha), atol=1e-10, rtol=0)
    # Heavier tails than softmax: the smallest entry gets more.
    assert (p.amin(-1) > torch.softmax(X, -1).amin(-1)).all()


def test_alpha_below_one_gradients():
    # Rows at and next to alpha = 1 send every row's alpha gradient through the
    # entry-by-entry (series) form rather than the row-sums shortcut.
    X = seeded(5, 5, seed=3).requires_grad_()
    alpha = torch.tensor([[0.3], [0.7], [0.95], [1.0], [1.004]], dtype=torch.float64, requires_grad=True)
    assert gradcheck(lambda x, a: entmax_bisect(x, a), (X, alpha))
    assert gradcheck(lambda x, a: entmax_bisect(x, a, training=False), (X, alpha))


# ---------------------------------------------------------------- agreement / properties


@SETTINGS
@given(matrices)
def test_matches_exact_sparsemax_and_entmax15(X):
    assert_close(entmax_bisect(X, alpha=2.0), sparsemax(X), atol=1e-9, rtol=0)
    assert_close(sparsemax_bisect(X), sparsemax(X), atol=1e-9, rtol=0)
    assert_close(entmax_bisect(X, alpha=1.5), entmax15(X), atol=1e-9, rtol=0)


@SETTINGS
@given(matrices, st.sampled_from([0.3, 0.8, 1.1, 1.25, 1.75, 3.0]), st.floats(-50, 50), st.booleans())
def test_properties_for_other_alphas(X, alpha, c, training):
    p = entmax_bisect(X, alpha=alpha, training=training)
    assert (p >= 0).all()
    assert_close(p.sum(-1), torch.ones(X.shape[0], dtype=X.dtype))
    assert_close(p, reference_entmax_qexp(X, alpha), atol=1e-7, rtol=0)
    if alpha > 1:
        assert_close(p, reference_entmax(X, alpha), atol=1e-7, rtol=0)
    assert_close(entmax_bisect(X + c, alpha=alpha, training=training), p, atol=1e-7, rtol=0)


@SETTINGS
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.data())
def test_any_dim_and_per_slice_alpha(shape, data):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    X = seeded(*shape, seed=data.draw(st.integers(0, 2**16)))
    alpha_shape = list(shape)
    alpha_shape[dim] = 1
    alpha = 0.5 + 2 * torch.rand(alpha_shape, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    expected = reference_entmax_qexp(X.movedim(dim, -1), alpha.movedim(dim, -1)).movedim(-1, dim)
    for training in (True, False):
        assert_close(entmax_bisect(X, alpha, dim=dim, training=training), expected, atol=1e-7, rtol=0)


def test_unnormalised_output_is_already_close_to_simplex():
    X = seeded(4, 7)
    for alpha in (0.7, 1.3, 2.5):
        p = entmax_bisect(X, alpha=alpha, ensure_sum_one=False)
        assert_close(p.sum(-1), torch.ones(4, dtype=X.dtype), atol=1e-10, rtol=0)


def test_n_iter_is_an_upper_bound():
    X = seeded(50, 30, seed=4)
    assert _entmax_bisect_iterations(X, 1.5, n_iter=2) == 2
    p = entmax_bisect(X, 1.3, n_iter=2)  # not converged, but still on the simplex
    assert (p >= 0).all() and torch.isfinite(p).all()
    assert_close(p.sum(-1), torch.ones(50, dtype=X.dtype))


# ---------------------------------------------------------------- speed: iteration counts


@pytest.mark.parametrize("shape", [(1024, 64), (4096, 512), (256, 30000)])
@pytest.mark.parametrize("alpha", [1.3, 1.5])
def test_newton_reaches_float32_precision_in_few_iterations(shape, alpha):
    X = seeded(*shape, seed=5, dtype=torch.float32)
    assert _entmax_bisect_iterations(X, alpha) <= 15
    assert _entmax_bisect_iterations(X, torch.tensor(alpha)) <= 15
    rows = X[:2]
    expected = reference_entmax_qexp(rows, alpha, n_iter=80).float()
    assert_close(entmax_bisect(rows, alpha), expected, atol=2e-6, rtol=1e-5)


def test_iteration_counts_stay_bounded_for_other_alphas():
    X = seeded(64, 100, seed=6, dtype=torch.float32)
    for alpha in (0.3, 1.0001, 1.1, 1.9, 2.0):
        assert _entmax_bisect_iterations(X, alpha) <= 10
    # Bisection until the support is fixed, then Newton. (For larger alphas the
    # map is so steep at the edge of the support, p ~ b^(1/(alpha - 1)), that
    # float32 rounding of b alone moves small entries by more than 1e-5.)
    for alpha in (2.5, 3.0):
        assert _entmax_bisect_iterations(X, alpha) <= 40
        assert_close(entmax_bisect(X, alpha), reference_entmax_qexp(X, alpha).float(), atol=1e-5, rtol=0)


# ---------------------------------------------------------------- robustness


@pytest.mark.parametrize("alpha", [0.5, 1.0001, 1.3, 1.5, 2.0, 3.0])
def test_shift_invariance_to_dtype_precision(alpha):
    gen = torch.Generator().manual_seed(7)
    # Scores on a grid fine enough to be exact after adding c (the ulp of 1e4 in
    # float32 is 2^-10; of 1e8 in float64 2^-26), so any difference is the solver's.
    x32 = torch.randint(-4000, 4000, (6, 9), generator=gen).float() / 1024
    for c in (1.0, 100.0, 1e4, -1e4):
        assert_close(entmax_bisect(x32 + c, alpha), entmax_bisect(x32, alpha), atol=1e-7, rtol=0)
    x64 = torch.randint(-4000, 4000, (6, 9), generator=gen).double() / 2**20
    for c in (1.0, 1e4, 1e8, -1e8):
        assert_close(entmax_bisect(x64 + c, alpha), entmax_bisect(x64, alpha), atol=1e-15, rtol=0)


@PATHS
@pytest.mark.parametrize("alpha", [0.5, 1.0001, 1.3, 1.5, 2.0, 3.0])
@pytest.mark.parametrize("scale", [1e6, 1e8])
def test_huge_logits_never_give_nan(alpha, scale, training):
    X = (scale * seeded(8, 7, seed=8, dtype=torch.float32)).requires_grad_()
    p = entmax_bisect(X, alpha, training=training)
    assert torch.isfinite(p).all()
    assert_close(p.sum(-1), torch.ones(8))
    p.pow(2).sum().backward()
    assert torch.isfinite(X.grad).all()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_peaked_rows_at_alpha_3_are_one_hot_and_finite(dtype):
    X = (1000 * seeded(64, 50, seed=9, dtype=dtype)).requires_grad_()
    alpha = torch.tensor(3.0, dtype=dtype, requires_grad=True)
    p = entmax_bisect(X, alpha)
    assert torch.isfinite(p).all()
    assert_close(p.sum(-1), torch.ones(64, dtype=dtype))
    assert ((p == 1).sum(-1) >= 1).float().mean() > 0.9  # almost every row one-hot
    (p * seeded(64, 50, seed=10, dtype=dtype)).sum().backward()
    assert torch.isfinite(X.grad).all() and torch.isfinite(alpha.grad)


def alpha_gradient_by_central_difference(X, w, alpha, h):
    return ((reference_entmax_qexp(X, alpha + h) - reference_entmax_qexp(X, alpha - h)) * w).sum() / (2 * h)


@pytest.mark.parametrize("alpha", [1.001, 1.0001, 1.00001, 1.0])
def test_float32_alpha_gradient_is_accurate_near_one(alpha):
    X = torch.tensor([[1.2, 0.3, -0.4, 0.9, -1.5], [0.1, 0.2, -0.3, 2.0, -0.7]])
    w = torch.tensor([[1.0, -2.0, 0.5, 3.0, -1.0], [0.3, 1.1, -0.6, -2.0, 0.8]])
    # The reference is float64 and continuous through alpha = 1, so the central
    # difference is fine even at alpha = 1 exactly.
    expected = alpha_gradient_by_central_difference(X.double(), w.double(), alpha, 1e-7).float()
    for training in (True, False):
        a = torch.tensor(alpha, requires_grad=True)
        (entmax_bisect(X, a, training=training) * w).sum().backward()
        assert_close(a.grad, expected, rtol=1e-4, atol=1e-5)


def test_float32_alpha_gradient_near_one_where_entmax_13_fails():
    # Found by searching small float32 inputs for an alpha-gradient near -0.78 at
    # alpha = 1.001 (the case); the truth barely moves as alpha -> 1.
    X = torch.tensor([[-1.032, 1.047, -0.556], [0.074, 0.498, 0.478], [1.411, -1.366, 0.568]])
    w = torch.tensor([[2.345, -0.345, 1.206], [-1.891, -0.263, -0.814], [0.081, 0.544, -0.309]])
    for alpha, truth in ((1.001, -0.78036), (1.0001, -0.78003), (1.00001, -0.78000)):
        expected = alpha_gradient_by_central_difference(X.double(), w.double(), alpha, 1e-7)
        assert_close(expected.item(), truth, atol=5e-6, rtol=0)
        for training in (True, False):
            a = torch.tensor(alpha, requires_grad=True)
            (entmax_bisect(X, a, training=training) * w).sum().backward()
            assert_close(a.grad.double(), expected, rtol=1e-5, atol=0)
    # The anchor's fault, kept as evidence. Its error is amplified rounding noise
    # (here +1.4 at 1.0001 and +138 at 1.00001), so only the grossest is asserted.
    theirs = torch.tensor(1.00001, requires_grad=True)
    (entmax.entmax_bisect(X, theirs) * w).sum().backward()
    assert abs(theirs.grad.item() - truth) > 10


@PATHS
@pytest.mark.parametrize("alpha", [0.5, 1.0, 1.3, 1.5, 2.0, 3.0])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_neg_inf_entries_get_zero_probability_and_zero_gradient(alpha, dtype, training):
    inf = float("inf")
    X = torch.tensor([[0.0, -inf, 0.5, -1.0], [-inf, 5.0, -inf, -inf], [-inf, -inf, -inf, -inf]], dtype=dtype)
    X.requires_grad_()
    alpha_t = torch.tensor(alpha, dtype=dtype, requires_grad=True)
    for a in (alpha, alpha_t):
        p = entmax_bisect(X, a, training=training)
        assert torch.isfinite(p).all()
        assert p[0, 1] == 0 and (p[1] == torch.tensor([0.0, 1.0, 0.0, 0.0], dtype=dtype)).all()
        assert (p[2] == 0).all()
        assert_close(p[0].sum(), torch.tensor(1.0, dtype=dtype))
        (p * torch.arange(1.0, 5.0, dtype=dtype)).sum().backward()
        assert torch.isfinite(X.grad).all() and X.grad[0, 1] == 0 and (X.grad[1:] == 0).all()
        X.grad = None
    assert torch.isfinite(alpha_t.grad)


OTHER_MAPS = {
    "sparsemax_bisect": lambda x, training=True: sparsemax_bisect(x, training=training),
    "normmax_bisect": lambda x, training=True: normmax_bisect(x, 2.5, training=training),
    "normmax_bisect_tensor_alpha": lambda x, training=True: normmax_bisect(
        x, torch.tensor(2.5, dtype=x.dtype, requires_grad=True), training=training
    ),
    "budget_bisect": lambda x, training=True: budget_bisect(x, 1.3, training=training),
}


@PATHS
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("name", OTHER_MAPS)
def test_other_maps_give_neg_inf_entries_zero_probability_and_zero_gradient(name, dtype, training):
    fn, inf = OTHER_MAPS[name], float("inf")
    X = torch.tensor([[0.0, -inf, 0.5, -1.0], [-inf, 5.0, 4.9, -inf], [-inf, -inf, -inf, -inf]], dtype=dtype)
    # A budget above the number of finite entries has no solution, so budget
    # gets no all -inf row.
    X = X[:2] if name == "budget_bisect" else X
    X.requires_grad_()
    p = fn(X, training=training)
    w = torch.arange(1.0, 5.0, dtype=dtype)
    (p * w).sum().backward()
    assert torch.isfinite(p).all() and torch.isfinite(X.grad).all()
    assert (p[0, 1] == 0) and (X.grad[0, 1] == 0) and (p[1, ::3] == 0).all() and (X.grad[1, ::3] == 0).all()
    assert (p[2:] == 0).all() and (X.grad[2:] == 0).all()
    # The finite entries get what the map gives them with the -inf ones removed.
    for row, keep in ((0, [0, 2, 3]), (1, [1, 2])):
        x = X.detach()[row, keep].clone().requires_grad_()
        q = fn(x, training=training)
        (q * w[keep]).sum().backward()
        assert_close(p[row, keep], q)
        assert_close(X.grad[row, keep], x.grad)


@pytest.mark.parametrize("name", OTHER_MAPS)
def test_other_maps_shift_invariance_and_huge_logits(name):
    fn = OTHER_MAPS[name]
    gen = torch.Generator().manual_seed(7)
    # As in test_shift_invariance_to_dtype_precision: scores exact after the shift.
    x32 = torch.randint(-4000, 4000, (6, 9), generator=gen).float() / 1024
    for c in (1.0, 100.0, 1e4, -1e4):
        assert_close(fn(x32 + c), fn(x32), atol=1e-7, rtol=0)
    x64 = torch.randint(-4000, 4000, (6, 9), generator=gen).double() / 2**20
    for c in (1.0, 1e4, 1e8, -1e8):
        assert_close(fn(x64 + c), fn(x64), atol=1e-15, rtol=0)
    for scale in (1e6, 1e8):
        for training in (True, False):
            X = (scale * seeded(8, 7, seed=8, dtype=torch.float32)).requires_grad_()
            p = fn(X, training=training)
            assert torch.isfinite(p).all()
            if name == "budget_bisect":
                # A fractional entry far below the capped maximum is measured as
                # x - tau with both near x, so it is known to an ulp of x only:
                # backward stable (exact for inputs moved by an ulp), no better.
                ulp = torch.finfo(torch.float32).eps * X.detach().abs().amax(-1)
                assert ((p.sum(-1) - 1.3).abs() <= ulp).all() and ((p >= 0) & (p <= 1)).all()
            else:
                assert_close(p.sum(-1), torch.ones(8))
            p.pow(2).sum().backward()
            assert torch.isfinite(X.grad).all()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_neg_inf_dtype_and_one_dim(dtype):
    inf = float("inf")
    X = torch.tensor([[0.0, -inf, 0.0], [-inf, 5.0, -inf]], dtype=dtype)
    p = entmax_bisect(X, alpha=torch.tensor([[1.5], [2.5]], dtype=torch.float64))
    assert p.dtype == dtype
    assert_close(p, torch.tensor([[0.5, 0.0, 0.5], [0.0, 1.0, 0.0]], dtype=dtype))
    assert entmax_bisect(X[0, ::2], alpha=1.7).shape == (2,)


@PATHS
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_is_computed_in_float32(dtype, training):
    X = seeded(5, 8, seed=11, dtype=torch.float32)
    for fn in (
        lambda x: entmax_bisect(x, 1.3, training=training),
        lambda x: entmax_bisect(x, torch.tensor(1.7), training=training),
        lambda x: sparsemax_bisect(x, training=training),
        lambda x: normmax_bisect(x, 2.5, training=training),
        lambda x: budget_bisect(x, 2.5, training=training),
    ):
        Xh = X.to(dtype).requires_grad_()
        p = fn(Xh)
        assert p.dtype == dtype
        assert_close(p, fn(Xh.detach().float()).to(dtype))
        p.float().pow(2).sum().backward()
        assert Xh.grad.dtype == dtype and torch.isfinite(Xh.grad.float()).all()


@pytest.mark.parametrize("fn", [entmax_bisect, sparsemax_bisect, normmax_bisect, budget_bisect])
def test_integer_and_zero_dim_inputs_are_refused(fn):
    with pytest.raises(TypeError, match="floating-point"):
        fn(torch.arange(6).reshape(2, 3))
    with pytest.raises(ValueError, match="0-d"):
        fn(torch.tensor(1.0))
    with pytest.raises(ValueError, match="size 0"):
        fn(torch.zeros(2, 0))


# ---------------------------------------------------------------- gradients


@pytest.mark.parametrize("alpha_shape", [(4, 1), (), (1,), (1, 1)])
def test_gradcheck_x_and_alpha(alpha_shape):
    X = seeded(4, 6, seed=3).requires_grad_()
    alpha = 1.2 + 1.5 * torch.rand(alpha_shape, dtype=torch.float64, generator=torch.Generator().manual_seed(4))
    alpha.requires_grad_()
    assert gradcheck(lambda x, a: entmax_bisect(x, a, n_iter=100), (X, alpha))
    assert gradcheck(lambda x, a: entmax_bisect(x, a, training=False), (X, alpha))


def test_gradcheck_other_dim_and_3d():
    X = seeded(3, 5, 2, seed=5).requires_grad_()
    alpha = torch.tensor([[[1.3, 2.4]]], dtype=torch.float64, requires_grad=True)  # one alpha per dim-1 slice column
    assert gradcheck(lambda x, a: entmax_bisect(x, a, dim=1, n_iter=100), (X, alpha))
    alpha0 = torch.full((1, 5, 2), 1.8, dtype=torch.float64, requires_grad=True)
    assert gradcheck(lambda x, a: entmax_bisect(x, a, dim=0, n_iter=100), (X, alpha0))


def test_gradcheck_x_only_python_alpha():
    X = seeded(3, 5, seed=6).requires_grad_()
    for alpha in (0.6, 1.25, 1.5, 2.0, 3.5):
        assert gradcheck(lambda x: entmax_bisect(x, alpha, n_iter=100), (X,))
        assert gradcheck(lambda x: entmax_bisect(x, alpha, training=False), (X,))
    assert gradcheck(lambda x: sparsemax_bisect(x), (X,))


@pytest.mark.parametrize(
    "alpha, training", [(0.6, True), (1.0, True), (1.001, True), (1.5, True), (2.5, True), (0.6, False), (1.3, False)]
)
def test_double_backward_is_correct(alpha, training):
    X = seeded(2, 4, seed=12).requires_grad_()
    a = torch.full((2, 1), alpha, dtype=torch.float64, requires_grad=True)
    assert gradgradcheck(lambda x, a: entmax_bisect(x, a, n_iter=20 if alpha < 2 else 50, training=training), (X, a))


@PATHS
def test_sparsemax_bisect_double_backward_is_correct(training):
    X = seeded(2, 4, seed=12).requires_grad_()
    assert gradgradcheck(lambda x: sparsemax_bisect(x, training=training), (X,))


def test_alpha_gradient_matches_central_difference_by_hand():
    X = torch.tensor([0.9, 0.4, 0.1, -0.8], dtype=torch.float64)
    w = torch.tensor([1.0, -2.0, 0.5, 3.0], dtype=torch.float64)
    alpha = torch.tensor(1.6, dtype=torch.float64, requires_grad=True)
    (entmax_bisect(X, alpha, n_iter=100) * w).sum().backward()
    h = 1e-5
    fd = ((reference_entmax(X, 1.6 + h) - reference_entmax(X, 1.6 - h)) * w).sum() / (2 * h)
    assert_close(alpha.grad, fd, atol=1e-7, rtol=1e-6)


@PATHS
def test_normmax_and_budget_gradients(training):
    X = seeded(4, 5, seed=13).requires_grad_()
    a = torch.tensor([[1.5], [2.0], [3.0], [1.2]], dtype=torch.float64, requires_grad=True)
    normmax = lambda x, a: normmax_bisect(x, a, n_iter=30, training=training)  # noqa: E731
    assert gradcheck(normmax, (X, a))
    assert gradgradcheck(normmax, (X[:1, :4], a[:1]))
    for alpha in (1.5, 3.0):
        assert gradcheck(lambda x: normmax(x, alpha), (X,))
    # Non-integer budgets: with an integer one, a capped top entry is a kink.
    b = torch.tensor([[1.5], [2.5], [0.7], [3.2]], dtype=torch.float64, requires_grad=True)
    budget = lambda x, b: budget_bisect(x, b, n_iter=30, training=training)  # noqa: E731
    assert gradcheck(budget, (X, b))
    assert gradgradcheck(budget, (X[:2, :4], b[:2]))


def test_vmap_matches_batched_call():
    X = seeded(6, 5, seed=8)
    assert_close(torch.func.vmap(entmax_bisect)(X), entmax_bisect(X))
    assert_close(torch.func.vmap(lambda x: entmax_bisect(x, 0.7))(X), entmax_bisect(X, 0.7))
    assert_close(torch.func.vmap(lambda x: normmax_bisect(x, 3.0))(X), normmax_bisect(X, 3.0))
    assert_close(torch.func.vmap(lambda x: budget_bisect(x, 2.5))(X), budget_bisect(X, 2.5))


@pytest.mark.parametrize("name", ["entmax_bisect", *OTHER_MAPS])
def test_torch_compile_matches_eager_values_and_gradients(name):
    fn = OTHER_MAPS.get(name, lambda x, training=True: entmax_bisect(x, 1.3, training=training))
    X, w = seeded(4, 6, seed=16), seeded(4, 6, seed=17)

    def value_and_grad(run):
        x = X.clone().requires_grad_()
        p = run(x)
        (p * w).sum().backward()
        return p.detach(), x.grad

    # The training path runs eagerly inside the compiled graph (its solver
    # stops on data); the export path compiles whole, at a small n_iter so
    # that the unrolled graph compiles quickly.
    runs = [torch.compile(fn, backend="aot_eager")]
    if name == "entmax_bisect":
        export_path = lambda x: entmax_bisect(x, 1.3, n_iter=12, training=False)  # noqa: E731
        runs.append(torch.compile(export_path, backend="aot_eager", fullgraph=True))
    expected = value_and_grad(fn)
    for run in runs:
        assert_close(value_and_grad(run), expected)


# ---------------------------------------------------------------- training=False: export and trace


def _graph_functions(t):
    names, stack, seen = set(), [t.grad_fn], set()
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        names.add(type(fn).__name__)
        stack.extend(f for f, _ in fn.next_functions)
    return names


def test_export_path_uses_plain_ops_only():
    X = seeded(3, 5).requires_grad_()
    alpha = torch.tensor(1.4, dtype=torch.float64, requires_grad=True)
    for p in (
        entmax_bisect(X, alpha, training=False),
        sparsemax_bisect(X, training=False),
        normmax_bisect(X, alpha + 1, training=False),
        budget_bisect(X, alpha, training=False),
    ):
        assert not any("Bisect" in name for name in _graph_functions(p))
    assert "EntmaxBisectFunctionBackward" in _graph_functions(entmax_bisect(X, alpha))


class AllMaps(torch.nn.Module):
    """Every root-finding module side by side, so that one export/trace covers them all."""

    def __init__(self, n_iter):
        super().__init__()
        self.maps = torch.nn.ModuleList(
            [
                EntmaxBisect(alpha=0.6, n_iter=n_iter),
                EntmaxBisect(alpha=torch.nn.Parameter(torch.tensor(1.3)), n_iter=n_iter),
                SparsemaxBisect(n_iter=n_iter),
                NormmaxBisect(alpha=2.5, n_iter=n_iter),
                BudgetBisect(budget=2.5, n_iter=n_iter),
            ]
        )

    def forward(self, X):
        return torch.stack([m(X) for m in self.maps])


def _check_exported(run, module):
    # Other values and other batch sizes than the example; the reference is the
    # default (training) path with its own stopping rule.
    for batch in (3, 9):
        X = 2 * seeded(batch, 10, seed=20 + batch, dtype=torch.float32)
        assert_close(run(X), module.train()(X), atol=2e-6, rtol=0)
        module.eval()


def test_torch_export_with_other_values_and_batch_sizes():
    module = AllMaps(n_iter=8).eval()
    example = seeded(4, 10, seed=14, dtype=torch.float32)
    exported = torch.export.export(module, (example,), dynamic_shapes={"X": {0: torch.export.Dim("batch", min=3)}})
    _check_exported(exported.module(), module)


@pytest.mark.filterwarnings("ignore::torch.jit.TracerWarning", "ignore::DeprecationWarning")
def test_jit_trace_save_load_with_other_values_and_batch_sizes(tmp_path):
    module = AllMaps(n_iter=8).eval()
    traced = torch.jit.trace(module, (seeded(4, 10, seed=15, dtype=torch.float32),), check_trace=False)
    torch.jit.save(traced, tmp_path / "m.pt")
    _check_exported(torch.jit.load(tmp_path / "m.pt"), module)


# ---------------------------------------------------------------- modules


def test_learnable_alpha_in_module_receives_gradient():
    alpha = torch.nn.Parameter(torch.tensor(1.5))
    layer = EntmaxBisect(alpha=alpha, dim=-1)
    assert list(layer.parameters()) == [alpha]
    layer(torch.randn(3, 4, generator=torch.Generator().manual_seed(7))).pow(2).sum().backward()
    assert alpha.grad is not None and torch.isfinite(alpha.grad)


def test_learnable_alpha_trains_moves_and_round_trips():
    layer = EntmaxBisect(alpha=torch.nn.Parameter(torch.tensor(1.5)))
    assert dict(layer.named_parameters()).keys() == {"alpha"} and not dict(layer.named_buffers())
    optimizer = torch.optim.SGD(layer.parameters(), lr=0.5)
    X = seeded(8, 6, seed=16, dtype=torch.float32)
    target = torch.softmax(X, -1)
    (layer(X) - target).pow(2).sum().backward()
    optimizer.step()
    assert layer.alpha.item() != 1.5 and isinstance(layer.alpha, torch.nn.Parameter)
    moved = layer.double()
    assert moved.alpha.dtype == torch.float64 and isinstance(moved.alpha, torch.nn.Parameter)
    assert layer.to(torch.float32).alpha.dtype == torch.float32
    clone = EntmaxBisect(alpha=torch.nn.Parameter(torch.tensor(2.0)))
    clone.load_state_dict(layer.state_dict())
    assert clone.alpha.item() == layer.alpha.item()
    assert_close(clone(X), layer(X))


def test_tabnet_style_alpha_from_a_parameter():
    logit = torch.nn.Parameter(torch.tensor(-1.0))
    X = seeded(5, 7, seed=17, dtype=torch.float32)
    entmax_bisect(X, 1.0 + torch.sigmoid(logit), dim=-1).pow(3).sum().backward()
    assert logit.grad is not None and logit.grad != 0 and torch.isfinite(logit.grad)


def test_tensor_alpha_is_a_buffer_and_modules_follow_training_mode():
    layer = EntmaxBisect(alpha=torch.tensor([[1.5], [2.0]]))
    assert "alpha" in dict(layer.named_buffers()) and not list(layer.parameters())
    assert layer.double().alpha.dtype == torch.float64
    X = seeded(2, 6, seed=18).requires_grad_()
    assert "EntmaxBisectFunctionBackward" in _graph_functions(layer.train()(X))
    assert "EntmaxBisectFunctionBackward" not in _graph_functions(layer.eval()(X))
    assert_close(layer.eval()(X), layer.train()(X))
    assert "alpha=tensor" in repr(layer)


@pytest.mark.parametrize(
    "module, fn",
    [
        (SparsemaxBisect(), sparsemax_bisect),
        (NormmaxBisect(alpha=3.0), lambda x: normmax_bisect(x, 3.0)),
        (BudgetBisect(budget=1.5), lambda x: budget_bisect(x, 1.5)),
        (EntmaxBisect(alpha=0.7, dim=0), lambda x: entmax_bisect(x, 0.7, dim=0)),
    ],
)
def test_modules_match_functions(module, fn):
    X = seeded(4, 5, seed=19)
    assert_close(module(X), fn(X))
    assert_close(module.eval()(X), fn(X))


# ---------------------------------------------------------------- validation


@pytest.mark.parametrize(
    "alpha",
    [0.0, -2.0, float("nan"), float("inf"), "2", True, torch.tensor([[1.5], [0.0]]), torch.tensor([[1.5], [math.nan]])],
)
def test_bad_alpha_raises(alpha):
    with pytest.raises(ValueError, match="alpha"):
        entmax_bisect(torch.zeros(2, 3), alpha=alpha)


def test_bad_normmax_alpha_and_budget_raise():
    with pytest.raises(ValueError, match="alpha"):
        normmax_bisect(torch.zeros(2, 3), alpha=1.0)
    with pytest.raises(ValueError, match="alpha"):
        normmax_bisect(torch.zeros(2, 3), alpha=torch.tensor([[2.0], [0.5]]))
    for budget in (-1.0, -1e-9, 3.5, torch.tensor([[1.0], [4.0]]), torch.tensor([[1.0], [-0.5]])):
        with pytest.raises(ValueError, match="budget"):
            budget_bisect(torch.zeros(2, 3), budget=budget)
    with pytest.raises(ValueError, match="budget must be a finite real number >= 0"):
        BudgetBisect(budget=-0.5)
    with pytest.raises(ValueError, match="alpha"):
        NormmaxBisect(alpha=0.5)


def test_alpha_shape_must_have_size_one_along_dim():
    with pytest.raises(ValueError, match="size 1 along dim"):
        entmax_bisect(torch.zeros(2, 3), alpha=torch.full((2, 3), 1.5))
    with pytest.raises(ValueError, match="does not broadcast"):
        entmax_bisect(torch.zeros(2, 3), alpha=torch.full((5, 1), 1.5))


def test_n_iter_none_means_default_as_in_entmax_13():
    X = seeded(3, 5)
    assert_close(SparsemaxBisect(n_iter=None)(X), sparsemax(X))
    assert_close(entmax_bisect(X, 1.3, n_iter=None), entmax_bisect(X, 1.3))


@pytest.mark.parametrize("n_iter", [0, -1, 2.5, True])
def test_bad_n_iter_raises(n_iter):
    with pytest.raises(ValueError, match="n_iter"):
        entmax_bisect(torch.zeros(3), n_iter=n_iter)
    with pytest.raises(ValueError, match="n_iter"):
        EntmaxBisect(n_iter=n_iter)


def test_bad_dim_and_module_alpha():
    with pytest.raises(IndexError):
        entmax_bisect(torch.zeros(2, 3), dim=-3)
    with pytest.raises(ValueError, match="alpha"):
        EntmaxBisect(alpha=0.0)


class AlphaEntmaxMaps(torch.nn.Module):
    """alpha-entmax with a float and with a tensor alpha (what entmax_mode="adaptive" runs), side by side."""

    def __init__(self, n_iter):
        super().__init__()
        alpha = torch.nn.Parameter(torch.tensor(1.3))
        self.maps = torch.nn.ModuleList(
            [EntmaxBisect(alpha=0.6, n_iter=n_iter), EntmaxBisect(alpha=alpha, n_iter=n_iter)]
        )

    def forward(self, X):
        return torch.stack([m(X) for m in self.maps])


# torch's exporter deep-copies its program's pytree specs, which trips torch's own LeafSpec deprecation.
@pytest.mark.filterwarnings("ignore:`isinstance\\(treespec, LeafSpec\\)` is deprecated:FutureWarning")
def test_onnx_export_runs_in_onnxruntime_with_other_values_and_batch_sizes(tmp_path):
    # The tensor alpha once failed to convert (an int clamp bound, a boolean torch.where); the other
    # root-finding maps share its solver.
    ort = pytest.importorskip("onnxruntime")
    pytest.importorskip("onnxscript")
    module = AlphaEntmaxMaps(n_iter=8).eval()
    example = seeded(4, 10, seed=16, dtype=torch.float32)
    program = torch.onnx.export(
        module, (example,), dynamic_shapes={"X": {0: torch.export.Dim("batch", min=3)}}, dynamo=True, verbose=False
    )
    program.save(str(tmp_path / "m.onnx"), external_data=False)
    session = ort.InferenceSession(str(tmp_path / "m.onnx"), providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    _check_exported(lambda X: torch.from_numpy(session.run(None, {name: X.numpy()})[0]), module)


@pytest.mark.parametrize("alpha", [1.3, 1.5, 1.8, "tensor"])
def test_off_the_cpu_alpha_entmax_makes_a_fixed_number_of_evaluations_and_reads_nothing_back(alpha):
    # Off the CPU (forced here) the root finding makes exactly n_iter evaluations with no convergence test, so
    # nothing is read back, in the forward or the backward (a tensor alpha included, whose gradient is taken),
    # and the map is the converged one's (at most 10 evaluations reach it: alpha_entmax_evaluations.md).
    X = (torch.randn(512, 32, generator=torch.Generator().manual_seed(0)) * 3).requires_grad_()
    if alpha == "tensor":
        alpha = torch.tensor(1.37, requires_grad=True)
    weights = torch.randn(512, 32, generator=torch.Generator().manual_seed(1))
    per_pass, fixed = [0], [0]
    with counted_host_reads(per_pass):
        expected = entmax_bisect(X, alpha, dim=-1)
        expected_grads = torch.autograd.grad(
            expected, [X] + ([alpha] if isinstance(alpha, torch.Tensor) else []), weights
        )
    with convergence_tests(True), counted_host_reads(fixed):
        P = entmax_bisect_of_valid_alpha(
            X, alpha if isinstance(alpha, torch.Tensor) else torch.tensor(alpha), n_iter=20
        )
        grads = torch.autograd.grad(P, [X] + ([alpha] if isinstance(alpha, torch.Tensor) else []), weights)
    assert per_pass[0] >= 3
    assert fixed[0] == 0
    torch.testing.assert_close(P, expected, atol=1e-6, rtol=0)
    for grad, expected_grad in zip(grads, expected_grads, strict=True):
        torch.testing.assert_close(grad, expected_grad, atol=1e-5, rtol=1e-5)
    with convergence_tests(True):
        assert _entmax_bisect_iterations(X.detach(), 1.3, n_iter=7) == 7


def test_a_valid_alpha_is_not_checked_but_its_shape_is():
    X = torch.randn(4, 5, generator=torch.Generator().manual_seed(2))
    reads = [0]
    with counted_host_reads(reads):
        P = entmax_bisect_of_valid_alpha(X, torch.tensor(1.5))
    torch.testing.assert_close(P, entmax_bisect(X, 1.5), atol=1e-6, rtol=0)
    with pytest.raises(ValueError, match="alpha of shape"):
        entmax_bisect_of_valid_alpha(X, torch.ones(3))
    with pytest.raises(ValueError, match="n_iter"):
        entmax_bisect_of_valid_alpha(X, torch.tensor(1.5), n_iter=0)
    X64 = torch.randn(3, 6, dtype=torch.float64, generator=torch.Generator().manual_seed(3)).requires_grad_()
    alpha = torch.tensor(1.4, dtype=torch.float64, requires_grad=True)
    with convergence_tests(True):
        assert torch.autograd.gradcheck(lambda x, a: entmax_bisect_of_valid_alpha(x, a, n_iter=30), (X64, alpha))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_a_tensor_alpha_below_one_gives_minus_inf_entries_exactly_zero(dtype):
    # A tensor alpha takes the log-domain evaluation, where the -inf score of an alpha < 1 row (eps < 0)
    # had its base clamped to a large number and came out 1e-60 instead of 0; its probability is 0.
    inf = float("inf")
    X = torch.tensor([[0.0, -inf, 0.5, -1.0], [0.3, -inf, -inf, 0.0]], dtype=dtype)
    alpha = torch.tensor([[0.5], [0.8]], dtype=dtype)
    P = entmax_bisect(X, alpha)
    assert P[0, 1] == 0 and (P[1, 1:3] == 0).all()
    for row, a in zip(range(2), (0.5, 0.8)):  # the same rows with a Python alpha (another evaluation)
        assert_close(P[row], entmax_bisect(X[row : row + 1], a)[0], atol=1e-6, rtol=1e-5)


@PATHS
def test_budget_zero_gives_zeros_and_zero_gradients(training):
    # entmax 1.3 takes budget 0 (its own gradcheck runs at k = 0): the only point of the capped simplex is 0.
    X = torch.randn(3, 5, dtype=torch.float64, requires_grad=True)
    budget = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
    p = budget_bisect(X, budget=budget, training=training)
    assert torch.equal(p, torch.zeros_like(X))
    p.sum().backward()
    assert torch.equal(X.grad, torch.zeros_like(X))
    assert torch.equal(BudgetBisect(budget=0)(X.detach()), torch.zeros_like(X))
