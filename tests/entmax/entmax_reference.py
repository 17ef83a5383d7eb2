"""Shared by the entmax tests: hypothesis strategies and an independent bisection reference."""

import torch
from hypothesis import settings
from hypothesis import strategies as st

SETTINGS = settings(max_examples=40, deadline=None)

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
