"""Tests of sparsetab.network.quantile: scikit-learn's normal quantile map in plain torch operations.

The oracles are scikit-learn's QuantileTransformer(output_distribution="normal").transform and
scipy's ndtri (both installed with scikit-learn). Through the estimators, the map is checked in
tests/persistence/test_export.py (exported programs) and tests/persistence/test_onnx.py (onnxruntime).
"""

import warnings

import numpy as np
import pytest
import torch
from scipy.special import ndtri
from sklearn.preprocessing import QuantileTransformer

from sparsetab.network import TabNet
from sparsetab.network.quantile import NormalQuantileMap, normal_quantile
from sparsetab.network.serving import ServingTabNet


def test_normal_quantile_is_scipys_ndtri_to_the_last_digits():
    tail = np.geomspace(1e-7, 0.5, 2001)
    p = np.concatenate([np.linspace(1e-7, 1 - 1e-7, 20001), tail, 1 - tail, [0.075, 0.925, 0.5]])
    expected = ndtri(p)
    got = normal_quantile(torch.from_numpy(p)).numpy()
    np.testing.assert_allclose(got, expected, rtol=4e-15, atol=4e-15)
    assert np.isnan(normal_quantile(torch.tensor([np.nan], dtype=torch.float64)).item())


def _columns(n_rows, rng):
    """A continuous column, a 4-valued one (repeated quantiles) and a heavy-tailed one."""
    return np.column_stack([rng.normal(size=n_rows), rng.integers(0, 4, n_rows), rng.lognormal(10, 1, n_rows)])


@pytest.mark.parametrize(("n_rows", "n_quantiles"), [(300, 10), (3000, 1000), (1, 10)])
def test_map_equals_scikit_learns_transform(n_rows, n_quantiles):
    rng = np.random.default_rng(n_rows)
    with warnings.catch_warnings():  # n_quantiles above n_rows: scikit-learn lowers it and says so
        warnings.simplefilter("ignore", UserWarning)
        transformer = QuantileTransformer(n_quantiles=n_quantiles, output_distribution="normal").fit(
            _columns(n_rows, rng)
        )
    new = _columns(500, rng) * np.array([1.5, 1.0, 1.2]) + np.array([0.0, 0.5, 0.0])  # beyond the range too
    new[::7, 2] = np.nan
    q = transformer.quantiles_
    # The quantiles themselves and values 1e-7 around them: the bounds rule and repeated quantiles.
    new = np.vstack([new, q, q + 1e-7, q - 1e-7, q + 2e-7, q - 2e-7])
    expected = transformer.transform(new)
    got = NormalQuantileMap(q, transformer.references_)(torch.from_numpy(new)).numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    np.testing.assert_allclose(got, expected, rtol=1e-14, atol=1e-14)
    assert np.nanmax(np.abs(got)) < 5.2


def test_map_refuses_invalid_quantiles():
    with pytest.raises(ValueError, match=r"quantiles must be a \(n_quantiles, n_columns\) array, got shape \(3,\)"):
        NormalQuantileMap([0.0, 1.0, 2.0], [0.0, 0.5, 1.0])
    with pytest.raises(ValueError, match=r"references must hold one value per quantile \(3\), got 2"):
        NormalQuantileMap([[0.0], [1.0], [2.0]], [0.0, 1.0])
    with pytest.raises(ValueError, match="non-decreasing down each column"):
        NormalQuantileMap([[0.0], [2.0], [1.0]], [0.0, 0.5, 1.0])


def test_serving_needs_quantiles_and_references_together():
    network = TabNet([None, None], [1, 1], 2, n_d=4, n_a=4, n_steps=1, virtual_batch_size=8)
    with pytest.raises(ValueError, match="quantiles and references .* must be given together"):
        ServingTabNet(network, [0, 1], [], [0, 0], [1, 1], "softmax", quantiles=[[0.0, 0.0], [1.0, 1.0]])
