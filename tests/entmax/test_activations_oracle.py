"""sparsemax / entmax15 against the reference implementation in the ``entmax`` package (1.3).

``entmax`` is a test-only dependency (sort-based, Peters et al.'s code); these
tests are skipped when it is not installed.
"""

import pytest
import torch
from hypothesis import example, given
from hypothesis import strategies as st
from torch.testing import assert_close

from sparsetab.entmax import entmax15, sparsemax
from tests.entmax.entmax_reference import SETTINGS, matrices

entmax = pytest.importorskip("entmax")

PAIRS = [(sparsemax, "sparsemax"), (entmax15, "entmax15")]
TOL = {"atol": 1e-6, "rtol": 0}

# (shape, dim): 1-D, rows of every width from 1 up, long rows, and 3-D/4-D inputs
# normalised along each dimension in turn.
CASES = [
    ((1,), -1),
    ((7,), 0),
    ((5, 1), -1),
    ((5, 2), -1),
    ((16, 3), 1),
    ((8, 64), -1),
    ((3, 1000), -1),
    ((2, 5000), 1),
    ((6, 9), 0),
    ((3, 8, 4), -2),
    ((3, 8, 4), 0),
    ((2, 3, 4, 5), 2),
    ((2, 3, 4, 5), -1),
]


def _scores(shape, seed):
    gen = torch.Generator().manual_seed(seed)
    # Three regimes per case: nearly uniform, typical, nearly one-hot.
    scale = (0.05, 1.0, 20.0)[seed % 3]
    return torch.randn(shape, dtype=torch.float64, generator=gen) * scale


def _forward_and_gradient(f, X, dim, **kwargs):
    X = X.clone().requires_grad_()
    P = f(X, dim=dim, **kwargs)
    weights = torch.linspace(-1, 2, X.numel(), dtype=X.dtype).view(X.shape)
    (grad,) = torch.autograd.grad((P * weights).sum(), X)
    return P.detach(), grad


@pytest.mark.parametrize(("f", "name"), PAIRS)
@pytest.mark.parametrize(("shape", "dim"), CASES)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_entmax_package_forward_and_gradient(f, name, shape, dim, seed):
    X = _scores(shape, seed)
    reference = getattr(entmax, name)
    P_ref, grad_ref = _forward_and_gradient(reference, X, dim)
    for kwargs in ({}, {"k": 2}, {"training": False}):
        P, grad = _forward_and_gradient(f, X, dim, **kwargs)
        assert_close(P, P_ref, **TOL)
        assert_close(grad, grad_ref, **TOL)


@pytest.mark.parametrize(("f", "name"), PAIRS)
def test_matches_entmax_package_with_its_partial_sort(f, name):
    # The reference's own k path must agree with every k of ours.
    X = _scores((10, 300), 1)
    P_ref = getattr(entmax, name)(X, dim=-1, k=5)
    for k in (None, 1, 5, 64, 1000):
        assert_close(f(X, k=k), P_ref, **TOL)


@SETTINGS
@given(matrices, st.sampled_from(PAIRS))
@example(torch.tensor([[1.0, 3.2319e-254]], dtype=torch.float64), PAIRS[0])
def test_matches_entmax_package_on_ties_and_extremes(X, pair):
    # Small integers and halves make ties (whole constant rows included) common.
    f, name = pair
    P_ref, grad_ref = _forward_and_gradient(getattr(entmax, name), X, -1)
    for training in (True, False):
        P, grad = _forward_and_gradient(f, X, -1, training=training)
        assert_close(P, P_ref, **TOL)
        # An entry tied with the threshold (p = 0 up to rounding, e.g. 1e-254
        # next to 1) is a kink: the Jacobian there is set-valued, and an
        # implementation may count the entry in the support or not. Gradients
        # must agree on every row whose support is the same.
        differ = (P > 0) != (P_ref > 0)
        assert (P[differ].abs() < 1e-12).all() and (P_ref[differ].abs() < 1e-12).all()
        rows = ~differ.any(-1)
        assert_close(grad[rows], grad_ref[rows], **TOL)
