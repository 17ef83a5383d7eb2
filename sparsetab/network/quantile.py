"""scikit-learn's normal-output quantile map, in plain torch operations, for served programs.

The estimators map numeric columns with ``numerical_transform="quantile"`` through a fitted
:class:`sklearn.preprocessing.QuantileTransformer` (``output_distribution="normal"``). A served
program cannot call scikit-learn, so :class:`NormalQuantileMap` recomputes that map from the
transformer's ``quantiles_`` and ``references_`` with operations that ``torch.export``, the
TorchScript tracer and the ONNX exporter all accept: no ``searchsorted`` (a fixed-length binary
search instead) and no ``erfinv`` / ``ndtri`` (the rational approximation of
:func:`normal_quantile` instead), which have no ONNX or onnxruntime float64 kernel. Every
constant that float32 cannot hold exactly is a float64 tensor, not a Python float: the ONNX
exporter writes Python scalars as float32 constants cast to the tensor's type, and the
rounded ``1 - 1e-7`` alone moves the top of the map from 5.199 to 5.16.
"""

import math

import torch
from torch import nn

__all__ = ["BOUNDS_THRESHOLD", "NormalQuantileMap", "normal_quantile"]

# scikit-learn's BOUNDS_THRESHOLD (sklearn.preprocessing._data): values this close to the first or
# last quantile map to probability 0 or 1, and the probabilities are kept this far from 0 and 1
# (less one ulp of 1) so that the normal quantile stays finite (about +-5.2).
BOUNDS_THRESHOLD = 1e-7
_PROBABILITY_FLOOR = BOUNDS_THRESHOLD - 2.0**-52

# Wichura (1988), "Algorithm AS 241: The percentage points of the normal distribution", Applied
# Statistics 37(3), 477-484, PPND16: numerator and denominator coefficients, lowest degree first,
# of the rational approximations for |p - 0.5| <= 0.425 and for sqrt(-log(min(p, 1 - p))) <= 5.
# Their relative error is about 1e-16; the third region of AS 241 (probabilities below
# exp(-25), about 1.4e-11) is never reached, since probabilities are floored at 1e-7.
_CENTRAL = (
    (
        3.3871328727963666080e0,
        1.3314166789178437745e2,
        1.9715909503065514427e3,
        1.3731693765509461125e4,
        4.5921953931549871457e4,
        6.7265770927008700853e4,
        3.3430575583588128105e4,
        2.5090809287301226727e3,
    ),
    (
        1.0,
        4.2313330701600911252e1,
        6.8718700749205790830e2,
        5.3941960214247511077e3,
        2.1213794301586595867e4,
        3.9307895800092710610e4,
        2.8729085735721942674e4,
        5.2264952788528545610e3,
    ),
)
_TAIL = (
    (
        1.42343711074968357734e0,
        4.63033784615654529590e0,
        5.76949722146069140550e0,
        3.64784832476320460504e0,
        1.27045825245236838258e0,
        2.41780725177450611770e-1,
        2.27238449892691845833e-2,
        7.74545014278341407640e-4,
    ),
    (
        1.0,
        2.05319162663775882187e0,
        1.67638483018380384940e0,
        6.89767334985100004550e-1,
        1.48103976427480074590e-1,
        1.51986665636164571966e-2,
        5.47593808499534494600e-4,
        1.05075007164441684324e-9,
    ),
)


def _constant(value, like):
    """``value`` as a 0-d tensor of ``like``'s dtype: exported as such, not as a float32 scalar."""
    return torch.tensor(value, dtype=like.dtype, device=like.device)


def _rational(coefficients, r):
    # Horner's rule from the highest degree, in AS 241's order of operations.
    a, b = ([_constant(value, r) for value in row] for row in coefficients)
    numerator, denominator = a[-1] * r + a[-2], b[-1] * r + b[-2]
    for next_a, next_b in zip(reversed(a[:-2]), reversed(b[:-2])):
        numerator = numerator * r + next_a
        denominator = denominator * r + next_b
    return numerator / denominator


def normal_quantile(p):
    """The standard normal quantile (inverse CDF, scipy's ``ndtri``) of probabilities in (0, 1).

    Wichura's AS 241 rational approximations (relative error about 1e-16), written with
    elementwise torch operations only, so that every exporter (ONNX included) accepts them.

    Parameters
    ----------
    p : torch.Tensor of any shape, float64
        Probabilities in ``[1e-11, 1 - 1e-11]``; NaN stays NaN. Outside that range the result
        is not the normal quantile (the far tail of AS 241 is left out).

    Returns
    -------
    torch.Tensor of the shape of ``p``, float64
        ``x`` with ``Phi(x) = p``.
    """
    q = p - 0.5
    central = q * _rational(_CENTRAL, _constant(0.180625, p) - q * q)
    # torch.where evaluates both branches: the tail is computed for every entry, and its log is
    # finite for every p in (0, 1) (the entries near 0.5 it gets are simply not selected).
    r = torch.sqrt(-torch.log(torch.minimum(p, 1.0 - p)))
    tail = _rational(_TAIL, r - _constant(1.6, p))
    return torch.where(q.abs() <= _constant(0.425, p), central, torch.where(q < 0, -tail, tail))


class NormalQuantileMap(nn.Module):
    """Map numeric columns as ``QuantileTransformer(output_distribution="normal").transform``.

    For each column, with quantiles ``x_0 <= ... <= x_{n-1}`` and references ``r_k`` (the
    probabilities of the quantiles), a value ``v`` becomes (scikit-learn 1.6-1.9):

    - probability 0 if ``v - 1e-7 < x_0``, else 1 if ``v + 1e-7 > x_{n-1}``;
    - else the mean of ``numpy.interp`` of ``v`` over ``(x, r)`` and of the same interpolation
      from the top (``-interp(-v, -x[::-1], -r[::-1])``), which differ only on repeated
      quantiles;

    and then its normal quantile, with the probability kept in ``[1e-7 - 2**-52, 1 - 1e-7 +
    2**-52]`` (scikit-learn clips the quantile at the quantiles of those probabilities, the same
    numbers). Missing values stay NaN. Each interpolation finds its segment by a binary search of
    ``ceil(log2(n - 1))`` fixed steps and evaluates numpy's formula ``slope * (v - x_j) + r_j``,
    so the probabilities are those of scikit-learn to the last bit; the normal quantile is
    :func:`normal_quantile` (scipy's ``ndtri`` to about 1e-16 relative).

    Parameters
    ----------
    quantiles : array-like of shape (n_quantiles, n_columns), float64
        The fitted ``quantiles_``: non-decreasing down each column.
    references : array-like of shape (n_quantiles,), float64
        The fitted ``references_``: increasing probabilities from 0 to 1.

    Raises
    ------
    ValueError
        If ``quantiles`` is not two-dimensional with at least one row, ``references`` does not
        have one value per row of ``quantiles``, or a column of ``quantiles`` decreases.
    """

    def __init__(self, quantiles, references):
        super().__init__()
        quantiles = torch.as_tensor(quantiles, dtype=torch.float64)
        references = torch.as_tensor(references, dtype=torch.float64).reshape(-1)
        if quantiles.dim() != 2 or quantiles.shape[0] < 1:
            raise ValueError(f"quantiles must be a (n_quantiles, n_columns) array, got shape {tuple(quantiles.shape)}.")
        if references.numel() != quantiles.shape[0]:
            raise ValueError(
                f"references must hold one value per quantile ({quantiles.shape[0]}), got {references.numel()}."
            )
        if bool((quantiles[1:] < quantiles[:-1]).any()):
            raise ValueError("quantiles must be non-decreasing down each column.")
        if quantiles.shape[0] == 1:
            # One quantile: every value is within 1e-7 of it or beyond it, so a bound decides; the
            # copy only gives the (unused) interpolation a segment.
            quantiles, references = quantiles.repeat(2, 1), references.repeat(2)
        n_quantiles, n_columns = quantiles.shape
        self.n_steps = math.ceil(math.log2(n_quantiles - 1))
        # Each column's quantiles as one row of a flat table: a gather at row offset + index.
        self.register_buffer("first", quantiles[0].clone())
        self.register_buffer("last", quantiles[-1].clone())
        self.register_buffer("up_x", quantiles.T.contiguous().reshape(-1))
        self.register_buffer("up_y", references.expand(n_columns, -1).contiguous().reshape(-1))
        self.register_buffer("down_x", (-quantiles.flip(0)).T.contiguous().reshape(-1))
        self.register_buffer("down_y", (-references.flip(0)).expand(n_columns, -1).contiguous().reshape(-1))
        self.register_buffer("offsets", torch.arange(n_columns, dtype=torch.long) * n_quantiles)
        self.n_quantiles = n_quantiles

    def _interpolate(self, v, xs, ys):
        """``numpy.interp`` of ``v`` column by column, for ``v`` strictly inside each column's range."""
        low = torch.zeros_like(v, dtype=torch.long)
        high = torch.full_like(low, self.n_quantiles - 1)
        # Invariant xs[low] <= v < xs[high]: it ends on the one segment with xs[j] <= v < xs[j + 1],
        # the segment numpy picks (on repeated quantiles, the last of them).
        for _ in range(self.n_steps):
            middle = torch.div(low + high, 2, rounding_mode="floor")
            right = xs[middle + self.offsets] <= v
            low = torch.where(right, middle, low)
            high = torch.where(right, high, middle)
        index = low + self.offsets
        x0, x1, y0, y1 = xs[index], xs[index + 1], ys[index], ys[index + 1]
        return (y1 - y0) / (x1 - x0) * (v - x0) + y0

    def forward(self, values):
        """Map a batch.

        Parameters
        ----------
        values : torch.Tensor of shape (batch, n_columns), float64
            The values (clipped to the training range, if the model clips), NaN where missing.

        Returns
        -------
        torch.Tensor of shape (batch, n_columns), float64
            The normal-output quantile map of each column, in about [-5.2, 5.2]; NaN where
            ``values`` is NaN.
        """
        probability = 0.5 * (
            self._interpolate(values, self.up_x, self.up_y) - self._interpolate(-values, self.down_x, self.down_y)
        )
        # Outside the inner range the interpolation may divide by a zero-width segment: the bounds replace it.
        threshold = _constant(BOUNDS_THRESHOLD, values)
        probability = torch.where(values + threshold > self.last, 1.0, probability)
        probability = torch.where(values - threshold < self.first, 0.0, probability)
        floor = _constant(_PROBABILITY_FLOOR, values)
        probability = torch.clamp(probability, min=floor, max=_constant(1.0 - _PROBABILITY_FLOOR, values))
        return torch.where(torch.isnan(values), values, normal_quantile(probability))
