"""Tests of sparsetab.network.numerical: quantile bin edges, piecewise linear encoding, periodic embeddings.

The expected values are computed by hand (PLE) or with a direct numpy formula (periodic embeddings),
and the gradients are checked in float64 with torch.autograd.gradcheck. The embedded layout of
InputEmbedding with a numerical embedding is tested in tests/network/test_embeddings.py.
"""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from sparsetab.network import PeriodicEmbedding, PiecewiseLinearEncoding, quantile_bin_edges

NAN = float("nan")


# ----- quantile bin edges ------------------------------------------------------------------------
def test_quantile_edges_ignore_missing_values_and_match_numpy():
    values = torch.tensor([[0.0], [1.0], [NAN], [2.0], [3.0], [10.0], [NAN]])
    (edges,) = quantile_bin_edges(values, 4)
    # quantiles 0, 1/4, 1/2, 3/4, 1 of [0, 1, 2, 3, 10] with linear interpolation
    torch.testing.assert_close(edges, torch.tensor([0.0, 1.0, 2.0, 3.0, 10.0]), rtol=0, atol=0)
    rng = np.random.default_rng(0)
    sample = rng.lognormal(size=(500, 3))
    computed = quantile_bin_edges(torch.from_numpy(sample), 7)
    for column, edges in zip(sample.T, computed):
        np.testing.assert_allclose(edges.numpy(), np.quantile(column, np.linspace(0, 1, 8)), rtol=1e-6)
        assert edges.dtype == torch.float32


def test_columns_with_few_distinct_values_keep_their_scalar_input():
    # Column 0: 3 distinct values (<= 3 bins: scalar); column 1: 4 distinct values; column 2: all missing.
    values = torch.tensor([[0.0, 0.0, NAN], [1.0, 1.0, NAN], [2.0, 2.0, NAN], [2.0, 3.0, NAN], [0.0, 3.0, NAN]])
    edges = quantile_bin_edges(values, 3)
    assert edges[0] is None and edges[2] is None
    assert edges[1] is not None and edges[1].numel() == 4


def test_repeated_quantiles_give_fewer_bins():
    # 90 zeros and 10 distinct positive values: quantiles 0..0.8 are all 0, so they merge into one edge.
    values = torch.cat([torch.zeros(90), torch.arange(1.0, 11.0)])[:, None]
    (edges,) = quantile_bin_edges(values, 10)
    assert edges[0] == 0.0 and edges[-1] == 10.0
    assert bool((edges[1:] > edges[:-1]).all())
    assert 2 <= edges.numel() < 11


def test_quantile_edges_reject_bad_arguments():
    with pytest.raises(ValueError, match=r"n_bins must be an int >= 2, got 1\."):
        quantile_bin_edges(torch.zeros(4, 1), 1)
    with pytest.raises(ValueError, match=r"values must be a \(n_rows, n_columns\) tensor, got shape \(4,\)\."):
        quantile_bin_edges(torch.zeros(4), 2)


# ----- piecewise linear encoding -----------------------------------------------------------------
def _encoding(*edges):
    encoding = PiecewiseLinearEncoding([len(column) - 1 for column in edges])
    encoding.set_edges([torch.tensor(column, dtype=torch.float32) for column in edges])
    return encoding


def test_piecewise_linear_encoding_of_hand_picked_values():
    # Column 0: bins [0, 1), [1, 2), [2, 4]; column 1: one bin [0, 2] (linear, unbounded both ways).
    encoding = _encoding([0.0, 1.0, 2.0, 4.0], [0.0, 2.0])
    assert encoding.output_dim == 4 and encoding.edges.shape == (2, 4)
    x = torch.tensor([[-1.0, 1.0], [0.5, 3.0], [1.0, -2.0], [3.0, 0.0], [6.0, 2.0]])
    expected = torch.tensor(
        [
            [-1.0, 0.0, 0.0, 0.5],  # below b_0: the first component goes below 0, the others are 0
            [0.5, 0.0, 0.0, 1.5],  # inside the first bin; column 1 above its last edge: above 1
            [1.0, 0.0, 0.0, -1.0],  # on an edge: the bin below is full, the next one empty
            [1.0, 1.0, 0.5, 0.0],  # half-way through the last bin
            [1.0, 1.0, 2.0, 1.0],  # above b_T: the last component goes above 1
        ]
    )
    torch.testing.assert_close(encoding(x), expected, rtol=0, atol=1e-7)


def test_padded_bins_are_dropped_and_columns_keep_their_order():
    encoding = _encoding([0.0, 1.0], [0.0, 1.0, 2.0, 3.0, 4.0], [-1.0, 0.0, 1.0])
    assert encoding.bin_counts == [1, 4, 2] and encoding.output_dim == 7
    out = encoding(torch.tensor([[0.25, 2.5, 0.5]]))
    torch.testing.assert_close(out, torch.tensor([[0.25, 1.0, 1.0, 0.5, 0.0, 1.0, 0.5]]), rtol=0, atol=1e-7)


def test_piecewise_linear_encoding_errors():
    with pytest.raises(ValueError, match=r"bin_counts must be a non-empty list of ints >= 1, got \[2, 0\]\."):
        PiecewiseLinearEncoding([2, 0])
    encoding = PiecewiseLinearEncoding([2])
    with pytest.raises(ValueError, match=r"edges must hold 1 columns, got 2\."):
        encoding.set_edges([torch.zeros(3), torch.zeros(3)])
    with pytest.raises(ValueError, match=r"edges of column 0 must be 3 strictly increasing values, got \[0.0, 1.0"):
        encoding.set_edges([torch.tensor([0.0, 1.0, 1.0])])


def test_piecewise_linear_gradients_in_float64():
    encoding = _encoding([0.0, 1.0, 2.0, 4.0], [-1.0, 3.0]).double()
    # Values inside bins and outside the range, none on an edge (where the encoding has a kink).
    x = torch.tensor([[-0.5, 0.3], [0.4, 5.0], [1.7, -2.0], [3.1, 1.0], [7.0, 2.9]], dtype=torch.float64)
    assert torch.autograd.gradcheck(encoding, (x.requires_grad_(),))


_edges = st.lists(st.floats(-50, 50, allow_nan=False, width=32), min_size=2, max_size=9, unique=True).map(sorted)


@settings(max_examples=60, deadline=None)
@given(edges=_edges, values=st.lists(st.floats(-100, 100, allow_nan=False, width=32), min_size=2, max_size=20))
def test_piecewise_linear_properties(edges, values):
    edges = torch.tensor(edges, dtype=torch.float64)
    if bool(((edges[1:] - edges[:-1]) < 1e-3).any()):  # nearly equal edges: bins too narrow for the tolerances
        return
    encoding = PiecewiseLinearEncoding([edges.numel() - 1]).double()
    encoding.set_edges([edges])
    x = torch.tensor(sorted(values), dtype=torch.float64)[:, None]
    encoded = encoding(x)
    # Each component is non-decreasing in x.
    assert bool((encoded[1:] >= encoded[:-1] - 1e-12).all())
    # The inner components (and the bounded side of the first and last) lie in [0, 1].
    if encoded.shape[1] > 2:
        assert bool(((encoded[:, 1:-1] >= 0) & (encoded[:, 1:-1] <= 1)).all())
    if encoded.shape[1] > 1:
        assert bool((encoded[:, 0] <= 1).all()) and bool((encoded[:, -1] >= 0).all())
    # x = b_0 + sum_t e_t (b_t - b_{t-1}): the encoding loses nothing.
    widths = edges[1:] - edges[:-1]
    torch.testing.assert_close(edges[0] + encoded @ widths, x[:, 0], rtol=1e-9, atol=1e-9)
    # At most one component is strictly between 0 and 1: the bin that holds x.
    assert int(((encoded > 1e-12) & (encoded < 1 - 1e-12)).sum(dim=1).max()) <= 1


# ----- periodic embeddings -----------------------------------------------------------------------
def _numpy_periodic(module, x):
    """concat(sin(2 pi c x), cos(2 pi c x)) per column, then ReLU(v W_j + a_j): the formula of section 3.3."""
    c = module.frequencies.detach().double().numpy()
    weight = module.weight.detach().double().numpy()
    bias = module.bias.detach().double().numpy()
    rows = []
    for row in x.double().numpy():
        columns = []
        for j, value in enumerate(row):
            v = np.concatenate([np.sin(2 * np.pi * c[j] * value), np.cos(2 * np.pi * c[j] * value)])
            columns.append(np.maximum(v @ weight[j] + bias[j], 0.0))
        rows.append(np.concatenate(columns))
    return np.array(rows)


def test_periodic_embedding_matches_the_formula():
    torch.manual_seed(0)
    module = PeriodicEmbedding(3, n_frequencies=4, embedding_dim=5, frequency_scale=1.0)
    assert module.frequencies.shape == (3, 4) and module.weight.shape == (3, 8, 5) and module.bias.shape == (3, 5)
    assert module.output_dim == 15
    x = torch.randn(6, 3)
    out = module(x)
    assert out.shape == (6, 15) and bool((out >= 0).all())
    np.testing.assert_allclose(out.detach().numpy(), _numpy_periodic(module, x), rtol=1e-5, atol=1e-6)


def test_periodic_frequencies_start_with_standard_deviation_sigma():
    torch.manual_seed(0)
    module = PeriodicEmbedding(50, n_frequencies=200, embedding_dim=1, frequency_scale=0.1)
    # 10,000 draws: the sample standard deviation is within 0.1 * 3 / sqrt(2 * 10000) of 0.1 (three standard errors).
    assert abs(float(module.frequencies.detach().std()) - 0.1) < 0.1 * 3 / math.sqrt(2 * 10000)


def test_periodic_gradients_in_float64():
    torch.manual_seed(0)
    module = PeriodicEmbedding(2, n_frequencies=3, embedding_dim=4, frequency_scale=0.5).double()
    with torch.no_grad():
        module.bias.add_(1.0)  # away from ReLU's kink at 0, where finite differences disagree
    x = torch.randn(5, 2, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(module, (x,))
    parameters = [module.frequencies, module.weight, module.bias]

    def as_function_of_parameters(frequencies, weight, bias):
        angles = 2 * math.pi * frequencies * x.detach()[:, :, None]
        periodic = torch.cat([torch.sin(angles), torch.cos(angles)], dim=2)
        return torch.relu(torch.einsum("bnk,nkd->bnd", periodic, weight) + bias).flatten(1)

    torch.testing.assert_close(as_function_of_parameters(*parameters), module(x.detach()))
    inputs = tuple(parameter.detach().clone().requires_grad_() for parameter in parameters)
    assert torch.autograd.gradcheck(as_function_of_parameters, inputs)


def test_periodic_embedding_errors():
    with pytest.raises(ValueError, match=r"n_frequencies must be >= 1, got 0\."):
        PeriodicEmbedding(2, 0, 4, 0.1)
    with pytest.raises(ValueError, match=r"embedding_dim must be >= 1, got 0\."):
        PeriodicEmbedding(2, 3, 0, 0.1)
    with pytest.raises(ValueError, match=r"frequency_scale must be > 0, got 0\.0\."):
        PeriodicEmbedding(2, 3, 4, 0.0)


def test_padded_bins_of_a_column_with_large_values_keep_gradients_finite():
    # Column 0 has 1 bin, so it is padded to the 3 bins of column 1 with empty bins at its last edge.
    encoding = _encoding([1e10, 2e10], [0.0, 1.0, 2.0, 3.0])
    x = torch.tensor([[1.5e10, 0.5]], requires_grad=True)
    out = encoding(x)
    assert torch.isfinite(out).all()
    out.sum().backward()
    assert torch.isfinite(x.grad).all()
    torch.testing.assert_close(x.grad, torch.tensor([[1e-10, 1.0]]))
