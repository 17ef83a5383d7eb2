"""The threshold kernels of sparsemax and 1.5-entmax, against hand-worked values and a plain sort-based reference."""

import math
from unittest import mock

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch.autograd import gradcheck
from torch.testing import assert_close

import sparsetab.entmax._threshold_kernels as kernels
from sparsetab.entmax._threshold_kernels import (
    entmax15_by_sorting,
    entmax15_closed_form,
    entmax15_sortfree,
    entmax_threshold_and_support,
    safe_sqrt,
    sparsemax_by_sorting,
    sparsemax_closed_form,
    sparsemax_sortfree,
    sparsemax_threshold_and_support,
)
from tests.entmax.entmax_reference import SETTINGS, matrices, seeded
from tests.entmax.host_reads import SOLVER_PATHS, convergence_tests, counted_host_reads, solver_path, sorting_on_the_cpu

F64 = torch.float64
KS = [None, 1, 2, 3, 100]
SOLVER_TESTS = pytest.mark.parametrize("path", SOLVER_PATHS)

# ---------------------------------------------------------------- reference


def reference_sparsemax_threshold(row):
    """``(tau, |S|)`` from the sorted row: ``|S| = max{j : 1 + j z_j > sum_{i <= j} z_i}``."""
    z = sorted((v for v in row if v > -math.inf), reverse=True)
    size = max(j for j in range(1, len(z) + 1) if 1 + j * z[j - 1] > math.fsum(z[:j]))
    return (math.fsum(z[:size]) - 1) / size, size


def reference_entmax_threshold(row):
    """``(tau, |S|)`` on the entmax scale: the last ``j`` with ``tau_j <= z_j``.

    ``tau_j = mean_j - sqrt((1 - j var_j) / j)`` is the threshold of the ``j`` largest scores.
    """
    z = sorted((v for v in row if v > -math.inf), reverse=True)
    best = None
    for j in range(1, len(z) + 1):
        mean = math.fsum(z[:j]) / j
        var = math.fsum((v - mean) ** 2 for v in z[:j]) / j
        tau = mean - math.sqrt(max(1 - j * var, 0.0) / j)
        if tau <= z[j - 1]:
            best = (tau, j)
    return best


def reference_thresholds(X, reference):
    taus, sizes = zip(*(reference(row) for row in X.tolist()))
    return torch.tensor(taus, dtype=F64).unsqueeze(-1), torch.tensor(sizes).unsqueeze(-1)


def clear_of_ties(X, tau, margin=1e-9):
    """Rows with no entry within ``margin`` of the threshold, where the support size is well defined."""
    return ((X - tau).abs() > margin).all(-1)


# ---------------------------------------------------------------- hand-worked values


@pytest.mark.parametrize("k", KS)
def test_sparsemax_threshold_hand_computed(k):
    # Sorted (.5, .2, -.1): 1 + j z_j > cumsum_j for j = 1, 2, 3, so tau = (.6 - 1) / 3.
    # Sorted (1, .5, -1): j = 3 fails (1 - 3 < .5), so tau = (1.5 - 1) / 2.
    X = torch.tensor([[0.5, 0.2, -0.1], [1.0, -1.0, 0.5]], dtype=F64)
    tau, support = sparsemax_threshold_and_support(X, dim=-1, k=k)
    assert_close(tau, torch.tensor([[-2 / 15], [0.25]], dtype=F64))
    assert support.dtype == torch.int64
    assert support.tolist() == [[3], [2]]


@pytest.mark.parametrize("k", KS)
def test_entmax_threshold_hand_computed(k):
    # (.2, 0, -1): with tau = -.6 the support (.2, 0) has (.8^2 + .6^2) = 1, and
    # -1 < -.6 is outside. (2/3, 2/3, 1/3): tau = 0 gives 4/9 + 4/9 + 1/9 = 1.
    X = torch.tensor([[0.2, 0.0, -1.0], [2 / 3, 1 / 3, 2 / 3]], dtype=F64)
    tau, support = entmax_threshold_and_support(X, dim=-1, k=k)
    assert_close(tau, torch.tensor([[-0.6], [0.0]], dtype=F64), atol=1e-15, rtol=0)
    assert support.tolist() == [[2], [3]]


def test_thresholds_keep_the_normalised_dim_with_size_one():
    X = torch.tensor([[0.5, 1.0], [0.2, 0.5], [-0.1, -1.0]], dtype=F64)
    for kernel in (sparsemax_threshold_and_support, entmax_threshold_and_support):
        tau, support = kernel(X, dim=0)
        assert tau.shape == support.shape == (1, 2)
    tau, support = sparsemax_threshold_and_support(X, dim=0)
    assert support.tolist() == [[3, 2]]
    assert_close(tau, torch.tensor([[-2 / 15, 0.25]], dtype=F64))


def test_sortfree_kernels_hand_computed_with_kept_support_and_root():
    X = torch.tensor([[0.5, 0.2, -0.1], [1.0, 0.5, -1.0]], dtype=F64)
    P, support = sparsemax_sortfree(X, -1, None, keep_support=True)
    assert_close(P, torch.tensor([[19 / 30, 1 / 3, 1 / 30], [0.75, 0.25, 0.0]], dtype=F64))
    assert support.tolist() == [[1.0, 1.0, 1.0], [1.0, 1.0, 0.0]]
    assert sparsemax_sortfree(X, -1, None)[1] is None

    # Scores 2 z with z = (.2, 0, -1): p = ([z + .6]_+)^2 = (.64, .36, 0).
    X = torch.tensor([0.4, 0.0, -2.0], dtype=F64)
    P, root = entmax15_sortfree(X, 0, None, keep_root=True)
    assert_close(P, torch.tensor([0.64, 0.36, 0.0], dtype=F64))
    assert_close(root, torch.tensor([0.8, 0.6, 0.0], dtype=F64))
    assert entmax15_sortfree(X, 0, None)[1] is None


def test_entmax15_sortfree_of_a_lone_score_is_one_without_overshoot():
    # One column: p = 1 exactly in exact arithmetic. Rounding once gave 1 + 2.4e-7 in float32 at -1/3 (CI's
    # hypothesis run); the root is clipped to [0, 1], so p never exceeds 1.
    X = torch.linspace(-10, 10, 2001, dtype=torch.float32).reshape(-1, 1, 1)
    for row in X:
        P, root = entmax15_sortfree(row, -1, None, keep_root=True)
        assert float(P) <= 1.0 and float(root) <= 1.0
        assert_close(P, torch.ones_like(P))


def test_closed_forms_hand_computed():
    X = torch.tensor([[0.5, 0.2, -0.1], [1.0, 0.5, -1.0]], dtype=F64)
    assert_close(sparsemax_closed_form(X, 1), torch.tensor([[19 / 30, 1 / 3, 1 / 30], [0.75, 0.25, 0.0]], dtype=F64))
    P = entmax15_closed_form(torch.tensor([0.4, 0.0, -2.0], dtype=F64), 0)
    assert_close(P, torch.tensor([0.64, 0.36, 0.0], dtype=F64))


# ---------------------------------------------------------------- against the sorted reference


@SETTINGS
@given(X=matrices, k=st.sampled_from(KS))
def test_sparsemax_threshold_matches_the_reference(X, k):
    tau, support = sparsemax_threshold_and_support(X, dim=-1, k=k)
    ref_tau, ref_support = reference_thresholds(X, reference_sparsemax_threshold)
    assert_close(tau, ref_tau, atol=1e-12, rtol=0)
    clear = clear_of_ties(X, ref_tau)
    assert torch.equal(support[clear], ref_support[clear])


@SETTINGS
@given(X=matrices, k=st.sampled_from(KS))
def test_entmax_threshold_matches_the_reference(X, k):
    Z = X / 2
    tau, support = entmax_threshold_and_support(Z, dim=-1, k=k)
    ref_tau, ref_support = reference_thresholds(Z, reference_entmax_threshold)
    assert_close(tau, ref_tau, atol=1e-12, rtol=0)
    clear = clear_of_ties(Z, ref_tau)
    assert torch.equal(support[clear], ref_support[clear])


@SOLVER_TESTS
@SETTINGS
@given(X=matrices, k=st.sampled_from(KS))
def test_sparsemax_sortfree_and_closed_form_match_the_reference(X, k, path):
    ref_tau, _ = reference_thresholds(X, reference_sparsemax_threshold)
    expected = torch.clamp(X - ref_tau, min=0)
    with solver_path(path):
        P, support = sparsemax_sortfree(X, -1, k, keep_support=True)
    assert_close(P, expected, atol=1e-12, rtol=0)
    assert torch.equal(support, (P > 0).to(F64))
    assert_close(sparsemax_closed_form(X, -1), expected, atol=1e-12, rtol=0)


@SOLVER_TESTS
@SETTINGS
@given(X=matrices, k=st.sampled_from(KS))
def test_entmax15_sortfree_and_closed_form_match_the_reference(X, k, path):
    ref_tau, _ = reference_thresholds(X / 2, reference_entmax_threshold)
    expected = torch.clamp(X / 2 - ref_tau, min=0) ** 2
    with solver_path(path):
        P, root = entmax15_sortfree(X, -1, k, keep_root=True)
    assert_close(P, expected, atol=1e-12, rtol=0)
    assert_close(root * root, P, atol=1e-15, rtol=0)
    assert_close(entmax15_closed_form(X, -1), expected, atol=1e-12, rtol=0)


@SETTINGS
@given(X=matrices, dim=st.sampled_from([0, 1, -1, -2]))
def test_kernels_agree_along_any_dim(X, dim):
    moved = X.movedim(dim, -1)
    for sortfree, closed in ((sparsemax_sortfree, sparsemax_closed_form), (entmax15_sortfree, entmax15_closed_form)):
        expected = sortfree(moved, -1, None)[0].movedim(-1, dim)
        assert_close(sortfree(X, dim, None)[0], expected, atol=1e-12, rtol=0)
        assert_close(closed(X, dim), expected, atol=1e-12, rtol=0)


# ---------------------------------------------------------------- the sort-based finish and non-finite rows


@SOLVER_TESTS
@pytest.mark.parametrize("sortfree", [sparsemax_sortfree, entmax15_sortfree])
def test_rows_left_unsettled_are_finished_by_sorting_identically_for_every_k(sortfree, monkeypatch, path):
    X = torch.randn(6, 30, dtype=F64, generator=torch.Generator().manual_seed(3))
    X[2] = -math.inf
    X[4, :5] = -math.inf
    expected = sortfree(X, -1, None)[0]
    monkeypatch.setattr(kernels, "_MAX_ITER", 1)
    with solver_path(path):
        results = [sortfree(X, -1, k)[0] for k in KS]
    for P in results:
        assert_close(P, expected, atol=1e-12, rtol=0)
    assert all(torch.equal(P, results[0]) for P in results)


NON_FINITE_ROWS = [[-math.inf] * 3, [0.3, math.nan, 0.1], [0.3, math.inf, 0.1], [1.0, -math.inf, 0.0], [1.0, 2.0, 3.0]]


@SOLVER_TESTS
@pytest.mark.parametrize("sortfree", [sparsemax_sortfree, entmax15_sortfree])
def test_sortfree_non_finite_rows(sortfree, path):
    # A row whose max is not finite is not iterated: all -inf gives zeros,
    # NaN or +inf gives NaN throughout.
    with solver_path(path):
        P = sortfree(torch.tensor(NON_FINITE_ROWS, dtype=F64), -1, None)[0]
    assert torch.equal(P[0], torch.zeros(3, dtype=F64))
    assert P[1:3].isnan().all()
    assert P[3, 1] == 0 and torch.isfinite(P[3:]).all()
    assert_close(P[3:].sum(-1), torch.ones(2, dtype=F64))


@pytest.mark.parametrize("sortfree", [sparsemax_sortfree, entmax15_sortfree])
def test_blocked_tests_read_the_host_once_per_block_and_agree_with_per_pass(sortfree):
    # TabNet's rows (width 16 to 64) settle within the first block: one host read per call instead of
    # one per pass plus the row-maximum test; the thresholds are the same up to rounding.
    X = torch.randn(512, 32, generator=torch.Generator().manual_seed(0)) * 3
    per_pass, blocked = [0], [0]
    with counted_host_reads(per_pass):
        expected = sortfree(X, -1, None)[0]
    with convergence_tests(True), counted_host_reads(blocked):
        P = sortfree(X, -1, None)[0]
    assert per_pass[0] >= 3 and blocked[0] == 1
    assert_close(P, expected, atol=2e-7, rtol=0)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_blocked_entmax15_takes_the_no_root_fallback_row_by_row(seed):
    # Wide Gaussian rows whose first candidate support is too large for the quadratic to have a root (the
    # per-pass solver takes its fallback branch on them: checked), where the blocked solver takes the
    # fallback by mask; both give the reference's result.
    X = torch.randn(4, 140, dtype=F64, generator=torch.Generator().manual_seed(seed))
    calls = []
    fallback = kernels._entmax15_fallback
    with mock.patch.object(kernels, "_entmax15_fallback", lambda *a: calls.append(1) or fallback(*a)):
        per_pass = entmax15_sortfree(X, -1, None)[0]
    with convergence_tests(True):
        blocked = entmax15_sortfree(X, -1, None)[0]
    ref_tau, _ = reference_thresholds(X / 2, reference_entmax_threshold)
    expected = torch.clamp(X / 2 - ref_tau, min=0) ** 2
    assert calls
    assert_close(per_pass, expected, atol=1e-12, rtol=0)
    assert_close(blocked, expected, atol=1e-12, rtol=0)


@pytest.mark.parametrize("closed_form", [sparsemax_closed_form, entmax15_closed_form])
def test_closed_form_non_finite_rows(closed_form):
    # Without data-dependent branches a NaN or +inf reaches at least its own
    # entry; an all -inf row still gives zeros.
    P = closed_form(torch.tensor(NON_FINITE_ROWS, dtype=F64), -1)
    assert torch.equal(P[0], torch.zeros(3, dtype=F64))
    assert not torch.isfinite(P[1:3, 1]).any()
    assert P[3, 1] == 0 and torch.isfinite(P[3:]).all()
    assert_close(P[3:].sum(-1), torch.ones(2, dtype=F64))


def test_empty_input_gives_empty_output():
    X = torch.zeros(0, 4, dtype=F64)
    for P, kept in (sparsemax_sortfree(X, -1, None, keep_support=True), entmax15_sortfree(X, -1, None, keep_root=True)):
        assert P.shape == (0, 4) and P.dtype == F64
        assert kept is None


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
def test_kernels_return_the_input_dtype(dtype):
    X = torch.randn(3, 50, generator=torch.Generator().manual_seed(0)).to(dtype)
    expected = sparsemax_sortfree(X.to(F64), -1, None)[0]
    for P in (sparsemax_sortfree(X, -1, None)[0], sparsemax_closed_form(X, -1)):
        assert P.dtype == dtype
        assert_close(P.to(F64), expected, atol=1e-2, rtol=0)


# ---------------------------------------------------------------- differentiability of the export path


def test_safe_sqrt_values_and_finite_gradient_at_zero():
    Y = torch.tensor([0.0, -1.0, 0.25, 4.0], dtype=F64, requires_grad=True)
    assert torch.equal(safe_sqrt(Y), torch.tensor([0.0, 0.0, 0.5, 2.0], dtype=F64))
    (grad,) = torch.autograd.grad(safe_sqrt(Y).sum(), Y, create_graph=True)
    assert torch.equal(grad.detach(), torch.tensor([0.0, 0.0, 1.0, 0.25], dtype=F64))
    (second,) = torch.autograd.grad(grad.sum(), Y)
    assert torch.isfinite(second).all()
    assert gradcheck(safe_sqrt, (torch.tensor([0.5, 2.0, 3.0], dtype=F64, requires_grad=True),))


@pytest.mark.parametrize("closed_form", [sparsemax_closed_form, entmax15_closed_form])
def test_closed_forms_gradcheck(closed_form):
    X = torch.randn(3, 6, dtype=F64, generator=torch.Generator().manual_seed(1))
    X[1, 2] = -math.inf
    X.requires_grad_()
    assert gradcheck(lambda x: closed_form(x, -1), (X,))
    assert gradcheck(lambda x: closed_form(x, 0), (X[:, :2].detach().requires_grad_(),))


# ---------------------------------------------------------------- the sorting path (devices other than the CPU)

SORTING_MAPS = pytest.mark.parametrize("name", ["sparsemax", "entmax15"])


def _public_map(name):
    from sparsetab.entmax import activations

    return getattr(activations, name)


@SORTING_MAPS
def test_the_cpu_solves_without_sorting_and_other_devices_sort(name):
    X = torch.randn(3, 5)
    assert kernels.solves_without_sorting(X)
    assert not kernels.solves_without_sorting(torch.empty(3, 5, device="meta"))
    with sorting_on_the_cpu():
        assert not kernels.solves_without_sorting(X)


@SORTING_MAPS
@pytest.mark.parametrize("shape", [(1024, 64), (64, 7), (3, 1)])
def test_the_sorting_path_matches_entmax_1_3_and_the_sort_free_solver(name, shape):
    entmax = pytest.importorskip("entmax")
    X = (torch.randn(*shape, generator=torch.Generator().manual_seed(5)) * 3).requires_grad_()
    weights = torch.randn(*shape, generator=torch.Generator().manual_seed(6))
    expected = getattr(entmax, name)(X, dim=-1)
    (expected_grad,) = torch.autograd.grad(expected, X, weights)
    sort_free = _public_map(name)(X, -1)
    (sort_free_grad,) = torch.autograd.grad(sort_free, X, weights)
    with sorting_on_the_cpu():
        P = _public_map(name)(X, -1)
        (grad,) = torch.autograd.grad(P, X, weights)
    assert_close(P, expected, atol=1e-6, rtol=0)
    assert_close(grad, expected_grad, atol=1e-6, rtol=0)
    assert_close(P, sort_free, atol=1e-6, rtol=0)
    assert_close(grad, sort_free_grad, atol=1e-6, rtol=0)


@SORTING_MAPS
def test_the_sorting_path_reads_nothing_back_in_the_forward_and_backward(name):
    X = (torch.randn(512, 32, generator=torch.Generator().manual_seed(0)) * 3).requires_grad_()
    sort_free_reads, sorting_reads = [0], [0]
    with counted_host_reads(sort_free_reads):
        _public_map(name)(X, -1).square().sum().backward()
    with sorting_on_the_cpu(), counted_host_reads(sorting_reads):
        _public_map(name)(X, -1).square().sum().backward()
    # The sort-free solver tests convergence on the host (free on the CPU); the sorting path never reads.
    assert sort_free_reads[0] >= 3
    assert sorting_reads[0] == 0


@SORTING_MAPS
@pytest.mark.parametrize("dim", [0, -1])
def test_the_sorting_path_passes_gradcheck_and_double_backward(name, dim):
    X = seeded(4, 6, seed=7).mul(2).requires_grad_()
    with sorting_on_the_cpu():
        assert gradcheck(lambda x: _public_map(name)(x, dim), (X,))
        assert torch.autograd.gradgradcheck(lambda x: _public_map(name)(x, dim), (X,))


@pytest.mark.parametrize("by_sorting", [sparsemax_by_sorting, entmax15_by_sorting])
def test_sorting_solvers_keep_what_the_backward_needs_and_half_precision(by_sorting):
    X = seeded(8, 16, seed=8).mul(3)
    P, kept = by_sorting(X, -1, True)
    expected = (P > 0).to(F64) if by_sorting is sparsemax_by_sorting else P.sqrt()
    assert_close(kept, expected, atol=1e-15, rtol=0)
    assert by_sorting(X, -1)[1] is None
    half, kept_half = by_sorting(X.half(), -1, True)
    assert half.dtype == torch.float16 and kept_half.dtype == torch.float32
    assert_close(half.float(), P.float(), atol=2e-3, rtol=0)
    empty, nothing = by_sorting(torch.empty(0, 4), -1, True)
    assert empty.shape == (0, 4) and nothing is None
