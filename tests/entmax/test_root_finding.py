import math

import pytest
import torch
from entmax_reference import SETTINGS, matrices, reference_entmax
from hypothesis import given
from hypothesis import strategies as st
from torch.autograd import gradcheck
from torch.testing import assert_close

from sparsetab.entmax import (
    EntmaxBisect,
    entmax15,
    entmax_bisect,
    sparsemax,
    sparsemax_bisect,
)


def seeded(*shape, seed=0):
    return torch.randn(*shape, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))


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


def test_alpha_one_is_softmax_and_the_limit_approaches_it():
    X = seeded(3, 5)
    assert torch.equal(entmax_bisect(X, alpha=1), torch.softmax(X, -1))
    assert_close(entmax_bisect(X, alpha=1.001, n_iter=100), torch.softmax(X, -1), atol=5e-3, rtol=0)


# ---------------------------------------------------------------- agreement / properties


@SETTINGS
@given(matrices)
def test_matches_exact_sparsemax_and_entmax15(X):
    assert_close(entmax_bisect(X, alpha=2.0), sparsemax(X), atol=1e-9, rtol=0)
    assert_close(sparsemax_bisect(X), sparsemax(X), atol=1e-9, rtol=0)
    assert_close(entmax_bisect(X, alpha=1.5), entmax15(X), atol=1e-9, rtol=0)


@SETTINGS
@given(matrices, st.sampled_from([1.1, 1.25, 1.75, 3.0]), st.floats(-50, 50))
def test_properties_for_other_alphas(X, alpha, c):
    p = entmax_bisect(X, alpha=alpha)
    assert (p >= 0).all()
    assert_close(p.sum(-1), torch.ones(X.shape[0], dtype=X.dtype))
    assert_close(p, reference_entmax(X, alpha), atol=1e-7, rtol=0)
    assert_close(entmax_bisect(X + c, alpha=alpha), p, atol=1e-7, rtol=0)


@SETTINGS
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.data())
def test_any_dim_and_per_slice_alpha(shape, data):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    X = seeded(*shape, seed=data.draw(st.integers(0, 2**16)))
    alpha_shape = list(shape)
    alpha_shape[dim] = 1
    alpha = 1.2 + torch.rand(alpha_shape, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    got = entmax_bisect(X, alpha, dim=dim)
    expected = reference_entmax(X.movedim(dim, -1), alpha.movedim(dim, -1)).movedim(-1, dim)
    assert_close(got, expected, atol=1e-7, rtol=0)


def test_unnormalised_output_is_already_close_to_simplex():
    X = seeded(4, 7)
    p = entmax_bisect(X, alpha=1.3, ensure_sum_one=False)
    assert_close(p.sum(-1), torch.ones(4, dtype=X.dtype), atol=1e-10, rtol=0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_neg_inf_dtype_and_one_dim(dtype):
    inf = float("inf")
    X = torch.tensor([[0.0, -inf, 0.0], [-inf, 5.0, -inf]], dtype=dtype)
    p = entmax_bisect(X, alpha=torch.tensor([[1.5], [2.5]], dtype=torch.float64))
    assert p.dtype == dtype
    assert_close(p, torch.tensor([[0.5, 0.0, 0.5], [0.0, 1.0, 0.0]], dtype=dtype))
    assert entmax_bisect(X[0, ::2], alpha=1.7).shape == (2,)


# ---------------------------------------------------------------- gradients


@pytest.mark.parametrize("alpha_shape", [(4, 1), (), (1,), (1, 1)])
def test_gradcheck_x_and_alpha(alpha_shape):
    X = seeded(4, 6, seed=3).requires_grad_()
    alpha = 1.2 + 1.5 * torch.rand(alpha_shape, dtype=torch.float64, generator=torch.Generator().manual_seed(4))
    alpha.requires_grad_()
    assert gradcheck(lambda x, a: entmax_bisect(x, a, n_iter=100), (X, alpha))


def test_gradcheck_other_dim_and_3d():
    X = seeded(3, 5, 2, seed=5).requires_grad_()
    alpha = torch.tensor([[[1.3, 2.4]]], dtype=torch.float64, requires_grad=True)  # one alpha per dim-1 slice column
    assert gradcheck(lambda x, a: entmax_bisect(x, a, dim=1, n_iter=100), (X, alpha))
    alpha0 = torch.full((1, 5, 2), 1.8, dtype=torch.float64, requires_grad=True)
    assert gradcheck(lambda x, a: entmax_bisect(x, a, dim=0, n_iter=100), (X, alpha0))


def test_gradcheck_x_only_python_alpha():
    X = seeded(3, 5, seed=6).requires_grad_()
    for alpha in (1.25, 2.0, 3.5):
        assert gradcheck(lambda x: entmax_bisect(x, alpha, n_iter=100), (X,))


def test_alpha_gradient_matches_central_difference_by_hand():
    X = torch.tensor([0.9, 0.4, 0.1, -0.8], dtype=torch.float64)
    w = torch.tensor([1.0, -2.0, 0.5, 3.0], dtype=torch.float64)
    alpha = torch.tensor(1.6, dtype=torch.float64, requires_grad=True)
    (entmax_bisect(X, alpha, n_iter=100) * w).sum().backward()
    h = 1e-5
    fd = ((reference_entmax(X, 1.6 + h) - reference_entmax(X, 1.6 - h)) * w).sum() / (2 * h)
    assert_close(alpha.grad, fd, atol=1e-7, rtol=1e-6)


def test_learnable_alpha_in_module_receives_gradient():
    alpha = torch.nn.Parameter(torch.tensor(1.5))
    layer = EntmaxBisect(alpha=alpha, dim=-1)
    assert list(layer.parameters()) == [alpha]
    layer(torch.randn(3, 4, generator=torch.Generator().manual_seed(7))).pow(2).sum().backward()
    assert alpha.grad is not None and torch.isfinite(alpha.grad)


def test_vmap_matches_batched_call():
    X = seeded(6, 5, seed=8)
    assert_close(torch.func.vmap(entmax_bisect)(X), entmax_bisect(X))


# ---------------------------------------------------------------- validation


@pytest.mark.parametrize("alpha", [0.5, -2.0, float("nan"), "2", torch.tensor([[1.5], [1.0]])])
def test_bad_alpha_raises(alpha):
    with pytest.raises(ValueError, match="alpha"):
        entmax_bisect(torch.zeros(2, 3), alpha=alpha)


def test_alpha_shape_must_have_size_one_along_dim():
    with pytest.raises(ValueError, match="size 1 along dim"):
        entmax_bisect(torch.zeros(2, 3), alpha=torch.full((2, 3), 1.5))
    with pytest.raises(ValueError, match="does not broadcast"):
        entmax_bisect(torch.zeros(2, 3), alpha=torch.full((5, 1), 1.5))


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
        EntmaxBisect(alpha=0.9)
