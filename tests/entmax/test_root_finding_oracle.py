"""sparsetab.entmax.root_finding against entmax 1.3 (the reference implementation) and softmax.

entmax 1.3 is only valid for alpha > 1 away from 1 (its alpha gradient cancels
catastrophically near 1), so the oracle comparisons use such alphas; alpha = 1
is compared with torch.softmax. Everything is float64, tolerance 1e-6.
"""

import entmax
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch.testing import assert_close

from sparsetab.entmax.root_finding import (
    BudgetBisect,
    EntmaxBisect,
    NormmaxBisect,
    SparsemaxBisect,
    budget_bisect,
    entmax_bisect,
    normmax_bisect,
    sparsemax_bisect,
)
from tests.entmax.entmax_reference import SETTINGS, seeded

TOL = dict(atol=1e-6, rtol=0)
SHAPES_AND_DIMS = [((7,), 0), ((3, 5), -1), ((3, 5), 0), ((4, 3, 6), 1), ((2, 3, 4, 5), -1), ((2, 3, 4, 5), 2)]


def vjps(fn, X, params, w):
    """Forward value and the gradients of ``sum(w * fn(X, *params))`` in X and every param."""
    X = X.clone().requires_grad_()
    params = [p.clone().requires_grad_() if isinstance(p, torch.Tensor) else p for p in params]
    out = fn(X, *params)
    tensors = [X] + [p for p in params if isinstance(p, torch.Tensor)]
    return out.detach(), torch.autograd.grad((out * w).sum(), tensors)


def assert_matches(mine, theirs, X, params, w):
    """Assert equal values and gradients of ``sum(w * fn(X, *params))``; return our value."""
    got, grads = vjps(mine, X, params, w)
    want, wanted = vjps(theirs, X, params, w)
    assert_close(got, want, **TOL)
    for grad, wanted_grad in zip(grads, wanted, strict=True):
        assert_close(grad, wanted_grad, **TOL)
    return got


def per_slice(shape, dim, low, high, seed):
    alpha_shape = list(shape)
    alpha_shape[dim] = 1
    gen = torch.Generator().manual_seed(seed)
    return low + (high - low) * torch.rand(alpha_shape, dtype=torch.float64, generator=gen)


# ---------------------------------------------------------------- entmax


@pytest.mark.parametrize("shape, dim", SHAPES_AND_DIMS)
@pytest.mark.parametrize("alpha", [1.1, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 4.0])
@pytest.mark.parametrize("training", [True, False], ids=["train", "export"])
def test_entmax_forward_and_x_gradient(shape, dim, alpha, training):
    X, w = 2 * seeded(*shape, seed=1), seeded(*shape, seed=2)
    mine = lambda x: entmax_bisect(x, alpha, dim=dim, training=training)  # noqa: E731
    assert_matches(mine, lambda x: entmax.entmax_bisect(x, alpha, dim=dim), X, [], w)


@pytest.mark.parametrize("shape, dim", SHAPES_AND_DIMS)
@pytest.mark.parametrize("training", [True, False], ids=["train", "export"])
def test_entmax_per_slice_alpha_gradients(shape, dim, training):
    X, w = 2 * seeded(*shape, seed=3), seeded(*shape, seed=4)
    for low, high in ((1.2, 1.9), (1.5, 3.5)):
        alpha = per_slice(shape, dim, low, high, seed=5)
        mine = lambda x, a: entmax_bisect(x, a, dim=dim, training=training)  # noqa: E731
        assert_matches(mine, lambda x, a: entmax.entmax_bisect(x, a, dim=dim), X, [alpha], w)


@pytest.mark.parametrize("alpha", [1.3, 2.0, 3.0])
def test_entmax_scalar_tensor_alpha_gradient(alpha):
    X, w = seeded(6, 8, seed=6), seeded(6, 8, seed=7)
    a = torch.tensor(alpha, dtype=torch.float64)
    assert_matches(entmax_bisect, entmax.entmax_bisect, X, [a], w)


@SETTINGS
@given(
    st.integers(1, 6).flatmap(lambda r: st.integers(1, 12).map(lambda d: (r, d))),
    st.floats(1.05, 5.0),
    st.floats(0.1, 30.0),
    st.integers(0, 2**16),
)
def test_entmax_random_inputs(shape, alpha, scale, seed):
    X = scale * seeded(*shape, seed=seed)
    # p = z ** (1 / (alpha - 1)) with z = (alpha - 1) x - tau, and tau is only known to float64 resolution (both
    # bisections stop within a few dozen eps * |z| of it; 64 eps: diff / atol at most 0.49 over 38,400 inputs):
    # near the edge of the support an error of eps * |z| in tau moves p by up to (eps * |z|) ** (1 / (alpha - 1)),
    # about 1e-4 at alpha = 5. Below alpha = 3 that is under 1e-6, the tolerance of the other comparisons.
    resolution = 64 * torch.finfo(X.dtype).eps * float((alpha - 1) * X.abs().max())
    atol = max(TOL["atol"], resolution ** (1 / (alpha - 1)))
    assert_close(entmax_bisect(X, alpha), entmax.entmax_bisect(X, alpha), atol=atol, rtol=0)


@pytest.mark.parametrize("training", [True, False], ids=["train", "export"])
def test_alpha_one_is_softmax_with_softmax_gradients(training):
    X, w = seeded(4, 7, seed=8), seeded(4, 7, seed=9)
    for alpha in (1.0, torch.ones(4, 1, dtype=torch.float64)):
        params = [alpha] if isinstance(alpha, torch.Tensor) else []
        got, grads = vjps(lambda x, *a: entmax_bisect(x, *(a or [alpha]), training=training), X, params, w)
        want, (wX,) = vjps(lambda x: torch.softmax(x, -1), X, [], w)
        assert_close(got, want, atol=0, rtol=0)
        assert_close(grads[0], wX, **TOL)
    # d/dalpha at alpha = 1 is the limit -p (l^2 - sum p l^2) / 2 of the alpha > 1 formula, l = log p.
    ell = torch.log(want)
    by_hand = (w * (-want * (ell**2 - (want * ell**2).sum(-1, keepdim=True)) / 2)).sum(-1, keepdim=True)
    assert_close(grads[1], by_hand, **TOL)


# ---------------------------------------------------------------- sparsemax


@pytest.mark.parametrize("shape, dim", [((3, 5), -1), ((4, 3, 6), 1), ((9,), 0)])
@pytest.mark.parametrize("training", [True, False], ids=["train", "export"])
def test_sparsemax_bisect(shape, dim, training):
    X, w = seeded(*shape, seed=10), seeded(*shape, seed=11)
    mine = lambda x: sparsemax_bisect(x, dim=dim, training=training)  # noqa: E731
    got = assert_matches(mine, lambda x: entmax.sparsemax_bisect(x, dim=dim), X, [], w)
    assert_close(got, entmax.sparsemax(X, dim=dim), **TOL)


# ---------------------------------------------------------------- normmax


@pytest.mark.parametrize("shape, dim", SHAPES_AND_DIMS)
@pytest.mark.parametrize("alpha", [1.5, 2, 3.0, 5.0])
@pytest.mark.parametrize("training", [True, False], ids=["train", "export"])
def test_normmax(shape, dim, alpha, training):
    X, w = 2 * seeded(*shape, seed=12), seeded(*shape, seed=13)
    mine = lambda x: normmax_bisect(x, alpha, dim=dim, training=training)  # noqa: E731
    assert_matches(mine, lambda x: entmax.normmax_bisect(x, alpha, dim=dim), X, [], w)


def test_normmax_per_slice_alpha_forward():
    X = seeded(5, 6, seed=14)
    alpha = per_slice((5, 6), -1, 1.3, 4.0, seed=15)
    assert_close(normmax_bisect(X, alpha), entmax.normmax_bisect(X, alpha), **TOL)


# ---------------------------------------------------------------- budget


@pytest.mark.parametrize("shape, dim", [((3, 5), -1), ((3, 5), 0), ((4, 3, 6), 1), ((2, 3, 4, 5), -1)])
@pytest.mark.parametrize("budget", [1.5, 2.5, 2.9])
@pytest.mark.parametrize("training", [True, False], ids=["train", "export"])
def test_budget(shape, dim, budget, training):
    X, w = seeded(*shape, seed=16), seeded(*shape, seed=17)
    mine = lambda x: budget_bisect(x, budget, dim=dim, training=training)  # noqa: E731
    got = assert_matches(mine, lambda x: entmax.budget_bisect(x, budget, dim=dim), X, [], w)
    assert_close(got.sum(dim), torch.full_like(got.sum(dim), budget), **TOL)


def test_budget_per_slice():
    X = seeded(5, 6, seed=18)
    budget = per_slice((5, 6), -1, 1.1, 4.5, seed=19)
    assert_close(budget_bisect(X, budget), entmax.budget_bisect(X, budget), **TOL)


# ---------------------------------------------------------------- modules


@pytest.mark.parametrize(
    "ours, theirs",
    [
        (EntmaxBisect(alpha=1.7), entmax.EntmaxBisect(alpha=1.7)),
        (EntmaxBisect(alpha=2.5, dim=0), entmax.EntmaxBisect(alpha=2.5, dim=0)),
        (SparsemaxBisect(), entmax.SparsemaxBisect(n_iter=50)),
        (NormmaxBisect(alpha=3), entmax.NormmaxBisect(alpha=3)),
        (BudgetBisect(budget=2.5), entmax.BudgetBisect(budget=2.5)),
    ],
)
def test_modules_match_entmax_modules(ours, theirs):
    X = 3 * seeded(4, 6, seed=20)
    assert_close(ours(X), theirs(X), **TOL)
    assert_close(ours.eval()(X), theirs(X), **TOL)
