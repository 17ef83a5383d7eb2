"""Embeddings of numeric columns: piecewise linear encoding with quantile bins, and periodic embeddings.

Both follow Gorishniy, Rubachev and Babenko (2022), "On Embeddings for Numerical Features in
Tabular Deep Learning", NeurIPS 35:

- :class:`PiecewiseLinearEncoding` is PLE (section 3.2): a value becomes one component per bin
  of its column, 0 for the bins above it, 1 for the bins below it, and its relative position
  inside its own bin. The bin edges are quantiles of the training values
  (:func:`quantile_bin_edges`, section 3.2, "Obtaining bins: quantiles").
- :class:`PeriodicEmbedding` is PLR (section 3.3): ``concat(sin(2 pi c x), cos(2 pi c x))``
  with ``k`` trainable frequencies ``c ~ N(0, sigma^2)`` per column, followed by a linear layer
  of each column's own and a ReLU.

Both work on all their columns at once: the columns' bins are padded to one width, and the
periodic weights of all columns are stacked into batched tensors, so ``forward`` has no Python
loop over columns.
"""

import math

import torch
from torch import nn

__all__ = ["NUMERICAL_EMBEDDINGS", "PeriodicEmbedding", "PiecewiseLinearEncoding", "quantile_bin_edges"]

NUMERICAL_EMBEDDINGS = ("piecewise_linear", "periodic")


def quantile_bin_edges(values, n_bins):
    """Compute the edges of up to ``n_bins`` quantile bins of each column, ignoring missing values.

    The edges of a column are its ``t / n_bins`` quantiles for ``t = 0..n_bins`` (linear
    interpolation between order statistics, as ``numpy.quantile``'s default), with repeated
    edges removed (Gorishniy et al., 2022, section 3.2, "Obtaining bins: quantiles"), so a
    column whose quantiles coincide gets fewer bins. A column with at most ``n_bins`` distinct
    values keeps its scalar input (``None``): its values are few enough to be told apart by the
    network directly, and encoding them lost accuracy on integer-valued columns.

    Parameters
    ----------
    values : torch.Tensor of shape (n_rows, n_columns), float
        The training values, NaN where missing.
    n_bins : int
        Maximum number of bins per column, >= 2.

    Returns
    -------
    list of (torch.Tensor of shape (n_edges,), float32) or None, length n_columns
        Strictly increasing edges ``b_0 < ... < b_T`` (``T = n_edges - 1 >= 1`` bins) of each
        encoded column, or ``None`` for a column that keeps its scalar input.

    Raises
    ------
    ValueError
        If ``values`` is not two-dimensional or ``n_bins`` is not an int >= 2.
    """
    if values.dim() != 2:
        raise ValueError(f"values must be a (n_rows, n_columns) tensor, got shape {tuple(values.shape)}.")
    if isinstance(n_bins, bool) or not isinstance(n_bins, int) or n_bins < 2:
        raise ValueError(f"n_bins must be an int >= 2, got {n_bins!r}.")
    levels = torch.linspace(0.0, 1.0, n_bins + 1, dtype=torch.float64)
    edges = []
    for column in values.detach().cpu().to(torch.float64).unbind(dim=1):  # at fit only, once per column
        present = column[~torch.isnan(column)]
        if torch.unique(present).numel() <= n_bins:
            edges.append(None)
            continue
        ordered = torch.sort(present).values
        position = levels * (ordered.numel() - 1)
        below = position.floor().long()
        above = torch.clamp(below + 1, max=ordered.numel() - 1)
        fraction = position - below
        quantiles = ordered[below] + fraction * (ordered[above] - ordered[below])
        # Unique after the cast: two float64 quantiles may round to one float32 edge.
        edges.append(torch.unique(quantiles.to(torch.float32)))
    return edges


class PiecewiseLinearEncoding(nn.Module):
    """Piecewise linear encoding (PLE) of numeric columns, each with its own bins.

    For a column with bin edges ``b_0 < b_1 < ... < b_T``, component ``t = 1..T`` of the
    encoding of ``x`` is (Gorishniy et al., 2022, section 3.2)::

        e_t = 0                                   if x < b_{t-1} and t > 1
        e_t = 1                                   if x >= b_t and t < T
        e_t = (x - b_{t-1}) / (b_t - b_{t-1})     otherwise

    so the inner components lie in [0, 1], the first may go below 0 for ``x < b_0`` and the last
    above 1 for ``x > b_T`` (values outside the training range stay distinguishable), and
    ``b_0 + sum_t e_t (b_t - b_{t-1}) = x``.

    Parameters
    ----------
    bin_counts : list of int
        Number of bins ``T >= 1`` of each column, in the order of the input's columns.

    Attributes
    ----------
    edges : torch.Tensor of shape (n_columns, max(bin_counts) + 1), float32
        Buffer of the edges of each column; a column with fewer bins is padded on the right with
        copies of its last edge (the padded components are dropped). Zeros until
        :meth:`set_edges` is called (a model file or a pretrained encoder loads them instead).
    output_dim : int
        ``sum(bin_counts)``.

    Raises
    ------
    ValueError
        If ``bin_counts`` is empty or holds a count below 1.
    """

    def __init__(self, bin_counts):
        super().__init__()
        counts = [int(count) for count in bin_counts]
        if not counts or min(counts) < 1:
            raise ValueError(f"bin_counts must be a non-empty list of ints >= 1, got {list(bin_counts)!r}.")
        self.bin_counts = counts
        self.output_dim = sum(counts)
        width = max(counts)
        self.register_buffer("edges", torch.zeros(len(counts), width + 1))
        component = torch.arange(width)
        count = torch.tensor(counts)[:, None]
        # Bounds of each component: the first has no lower bound and the last no upper bound (paper, section
        # 3.2); the bounds follow from the counts, so they are rebuilt with the module instead of being stored.
        inf = torch.tensor(math.inf)
        self.register_buffer("lower", torch.where(component == 0, -inf, 0.0).expand(len(counts), width).clone(), False)
        self.register_buffer("upper", torch.where(component[None] == count - 1, inf, 1.0), False)
        # The real components among the padded ones, and their positions in the flattened padded encoding.
        valid = component[None] < count
        self.register_buffer("valid", valid, False)
        self.register_buffer("valid_index", torch.nonzero(valid.flatten()).flatten(), False)

    def set_edges(self, edges):
        """Store the fitted edges of each column.

        Parameters
        ----------
        edges : list of torch.Tensor of shape (bin_counts[j] + 1,)
            Strictly increasing edges of each column, as :func:`quantile_bin_edges` returns them.

        Raises
        ------
        ValueError
            If the number of columns or of a column's edges does not match ``bin_counts``, or
            a column's edges are not strictly increasing.
        """
        if len(edges) != len(self.bin_counts):
            raise ValueError(f"edges must hold {len(self.bin_counts)} columns, got {len(edges)}.")
        padded = torch.empty_like(self.edges)
        for j, (column, count) in enumerate(zip(edges, self.bin_counts)):  # once, at the first fit
            column = torch.as_tensor(column, dtype=padded.dtype, device=padded.device).reshape(-1)
            if column.numel() != count + 1 or not bool((column[1:] > column[:-1]).all()):
                raise ValueError(
                    f"edges of column {j} must be {count + 1} strictly increasing values, got {column.tolist()}."
                )
            padded[j, : count + 1] = column
            padded[j, count + 1 :] = column[-1]  # padded bins are empty; forward gives them width 1
        with torch.no_grad():
            self.edges.copy_(padded)

    def forward(self, x):
        """Encode each column of ``x``.

        Parameters
        ----------
        x : torch.Tensor of shape (batch, n_columns), float
            Values without NaN (missing values are filled before the encoding).

        Returns
        -------
        torch.Tensor of shape (batch, output_dim)
            The components of column 0, then those of column 1, and so on.
        """
        left = self.edges[:, :-1].to(x.dtype)
        # Padded bins have width 0; width 1 keeps their (dropped) components and the gradients finite.
        width = torch.where(self.valid, (self.edges[:, 1:] - self.edges[:, :-1]).to(x.dtype), 1.0)
        relative = (x[:, :, None] - left) / width
        encoded = torch.minimum(torch.maximum(relative, self.lower.to(x.dtype)), self.upper.to(x.dtype))
        return encoded.flatten(1).index_select(1, self.valid_index)


class PeriodicEmbedding(nn.Module):
    """Periodic embeddings followed by a linear layer and a ReLU (PLR), one set of weights per column.

    For column ``j`` with frequencies ``c_j`` (``k`` of them), ``v = concat(sin(2 pi c_j x),
    cos(2 pi c_j x))`` (``2 k`` values) and the embedding is ``ReLU(v W_j + a_j)`` of width
    ``embedding_dim`` (Gorishniy et al., 2022, section 3.3, "Periodic activation functions", and
    the PLR embedding of section 4). The frequencies are trainable and start as draws of
    ``N(0, frequency_scale^2)``; ``frequency_scale`` (the paper's ``sigma``) sets how fast the
    embedding can vary with ``x`` at the start, and is tuned per dataset in the paper.

    Parameters
    ----------
    n_columns : int
        Number of columns, >= 1.
    n_frequencies : int
        ``k``, frequencies per column, >= 1.
    embedding_dim : int
        Width of each column's embedding, >= 1.
    frequency_scale : float
        ``sigma`` > 0 of the frequencies' initialisation.
    generator : torch.Generator or None, default=None
        Source of the initial weights (:mod:`sparsetab.network.seeded`), so that a seeded fit
        does not depend on what other threads draw; None: torch's global generator.

    Attributes
    ----------
    frequencies : torch.nn.Parameter of shape (n_columns, n_frequencies)
        ``c``.
    weight : torch.nn.Parameter of shape (n_columns, 2 * n_frequencies, embedding_dim)
        ``W_j`` of each column, initialised as :class:`torch.nn.Linear` initialises its weight
        (uniform in ``+-1 / sqrt(2 k)``).
    bias : torch.nn.Parameter of shape (n_columns, embedding_dim)
        ``a_j``, initialised like the weight.
    output_dim : int
        ``n_columns * embedding_dim``.

    Raises
    ------
    ValueError
        If a size is below 1 or ``frequency_scale`` is not positive.
    """

    def __init__(self, n_columns, n_frequencies, embedding_dim, frequency_scale, generator=None):
        super().__init__()
        sizes = {"n_columns": n_columns, "n_frequencies": n_frequencies, "embedding_dim": embedding_dim}
        for name, value in sizes.items():
            if int(value) < 1:
                raise ValueError(f"{name} must be >= 1, got {value!r}.")
        if not float(frequency_scale) > 0:
            raise ValueError(f"frequency_scale must be > 0, got {frequency_scale!r}.")
        n_columns, n_frequencies, embedding_dim = int(n_columns), int(n_frequencies), int(embedding_dim)
        self.embedding_dim = embedding_dim
        self.output_dim = n_columns * embedding_dim
        self.frequencies = nn.Parameter(
            torch.randn(n_columns, n_frequencies, generator=generator) * float(frequency_scale)
        )
        bound = 1.0 / math.sqrt(2 * n_frequencies)
        weight = torch.empty(n_columns, 2 * n_frequencies, embedding_dim)
        self.weight = nn.Parameter(weight.uniform_(-bound, bound, generator=generator))
        self.bias = nn.Parameter(torch.empty(n_columns, embedding_dim).uniform_(-bound, bound, generator=generator))

    def forward(self, x):
        """Embed each column of ``x``.

        Parameters
        ----------
        x : torch.Tensor of shape (batch, n_columns), float
            Values without NaN (missing values are filled before the embedding).

        Returns
        -------
        torch.Tensor of shape (batch, output_dim)
            The ``embedding_dim`` values of column 0, then those of column 1, and so on; >= 0.
        """
        angles = 2.0 * math.pi * self.frequencies * x[:, :, None]
        periodic = torch.cat([torch.sin(angles), torch.cos(angles)], dim=2)
        linear = torch.einsum("bnk,nkd->bnd", periodic, self.weight) + self.bias
        return torch.relu(linear).flatten(1)
