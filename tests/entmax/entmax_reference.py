"""Shared by the entmax tests: hypothesis strategies and an independent bisection reference."""

import torch
from hypothesis import settings
from hypothesis import strategies as st

SETTINGS = settings(max_examples=40, deadline=None)


def seeded(*shape, seed=0, dtype=torch.float64):
    """Standard normal scores of ``shape``, reproducible from ``seed``."""
    return torch.randn(*shape, dtype=dtype, generator=torch.Generator().manual_seed(seed))


# Small integers are mixed in so that ties (including whole constant rows) are common.
values = st.one_of(
    st.floats(-20, 20, allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, 1.0, -1.0, 0.5]),
)
matrices = (
    st.integers(1, 9)
    .flatmap(lambda d: st.lists(st.lists(values, min_size=d, max_size=d), min_size=1, max_size=5))
    .map(lambda rows: torch.tensor(rows, dtype=torch.float64))
)


def reference_entmax(x, alpha, n_iter=200):
    """Independent check: bisection on tau over a deliberately loose bracket."""
    z = (alpha - 1) * x
    lo = z.min(-1, keepdim=True).values - 1
    hi = z.max(-1, keepdim=True).values
    for _ in range(n_iter):
        mid = (lo + hi) / 2
        mass = torch.clamp(z - mid, min=0).pow(1 / (alpha - 1)).sum(-1, keepdim=True)
        lo, hi = torch.where(mass > 1, mid, lo), torch.where(mass > 1, hi, mid)
    return torch.clamp(z - (lo + hi) / 2, min=0).pow(1 / (alpha - 1))


def reference_entmax_qexp(x, alpha, n_iter=200):
    """Independent float64 check for any ``alpha > 0`` (last dim), accurate near ``alpha = 1``.

    Plain bisection on the normaliser ``c`` of the q-exponential form
    ``p_i = [1 + (alpha - 1)(z_i - c)]_+ ** (1 / (alpha - 1))``, ``z = x - max x``,
    with the power taken as ``exp(log1p(.) / (alpha - 1))`` (no cancellation as
    ``alpha -> 1``); for ``alpha < 1`` the base is >= 1 and nothing is clamped.
    ``alpha`` is a number or a tensor of shape ``(..., 1)``; ``alpha == 1`` gives softmax.
    """
    x = x.to(torch.float64)
    alpha = torch.as_tensor(alpha, dtype=torch.float64)
    eps = alpha - 1
    is_one = eps == 0
    eps = torch.where(is_one, torch.ones_like(eps), eps)
    z = x - x.amax(-1, keepdim=True)

    def p_at(c):
        # Dead entries are masked rather than sent through log1p(-1) = -inf, and
        # exponents are floored at -700: torch's CPU exp/log1p take a very slow
        # scalar path for infinite or subnormal results (the floored entries
        # are below 1e-304 either way).
        u = eps * (z - c)
        live = u > -1
        log_q = torch.clamp(torch.log1p(torch.where(live, u, 0.0)) / eps, min=-700)
        q = torch.where(live, torch.exp(log_q), 0.0)
        return torch.where(is_one, torch.exp(torch.clamp(z - c, min=-700)), q)

    # c = 0 leaves the top entry at 1; a million is past any root (deliberately loose).
    lo = torch.zeros(z.shape[:-1] + (1,), dtype=torch.float64)
    hi = lo + 1e6
    for _ in range(n_iter):
        mid = (lo + hi) / 2
        heavy = p_at(mid).sum(-1, keepdim=True) > 1
        lo, hi = torch.where(heavy, mid, lo), torch.where(heavy, hi, mid)
    p = p_at((lo + hi) / 2)
    return p / p.sum(-1, keepdim=True)
