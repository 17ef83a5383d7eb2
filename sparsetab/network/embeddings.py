"""Categorical embeddings, missing numeric values, and the maps between attention groups, input
columns and embedded columns.

TabNet selects *input columns*: a categorical column embedded in ``d`` dimensions must be
kept or dropped as a whole, and columns the user groups together (``grouped_features``)
share one attention weight. The attentive transformer therefore produces one mask value per
attention group; :attr:`InputEmbedding.group_matrix` spreads it over the embedded dimensions
of every column of the group, and :attr:`InputEmbedding.explanation_matrix` shares it out
among the group's input columns for explanations.

A missing numeric value (NaN) is replaced by a learned fill value of its column, and a column
that had missing values at fit also gets a 0/1 missing indicator. The indicator is an embedded
column *owned by* the numeric column, like the dimensions of a categorical embedding: it sits in
the column's attention group, so the mask still refers to one input column and an explanation
charges "this value was missing" to that column.

A numeric column may also be embedded in several dimensions (``numerical_embedding``, see
:mod:`sparsetab.network.numerical`): its value, filled first when missing, becomes a piecewise
linear encoding over quantile bins or a periodic embedding. Those dimensions are owned by the
column too, so the column stays one attention group and explanations still give one value per
input column. With ``piecewise_linear_with_value``, an encoded column keeps its value as one more
dimension beside its bins: the network then sees the value itself as well as where it falls
among the quantiles.
"""

import torch
from torch import nn

from .numerical import NUMERICAL_EMBEDDINGS, PeriodicEmbedding, PiecewiseLinearEncoding
from .seeded import seeded_embedding

__all__ = ["InputEmbedding"]


def _check_attention_groups(attention_groups, n_columns):
    if attention_groups is None:
        return [[j] for j in range(n_columns)]
    groups = [[int(j) for j in group] for group in attention_groups]
    members = sorted(j for group in groups for j in group)
    if any(len(group) == 0 for group in groups) or members != list(range(n_columns)):
        raise ValueError(
            f"attention_groups must be non-empty lists of column indices that cover each of the {n_columns} "
            f"columns exactly once; got {attention_groups!r}."
        )
    return groups


def _column_matrix(owners, n_columns):
    """(n_columns, len(owners)) 0/1 matrix: entry (j, k) is 1 when embedded column k is owned by input column j."""
    matrix = torch.zeros(n_columns, len(owners))
    matrix[torch.tensor(owners, dtype=torch.long), torch.arange(len(owners))] = 1.0
    return matrix


class InputEmbedding(nn.Module):
    """Embed the categorical columns of a float input and record the attention groups.

    Parameters
    ----------
    cardinalities : list of int or None, length n_columns
        ``None`` for a numeric column; for a categorical column the number of embedding rows,
        i.e. the number of categories plus one (code 0 is reserved for missing and unseen
        categories, codes 1..K are the categories seen at fit).
    embedding_dims : list of int, length n_columns
        Embedding width of each categorical column (ignored for numeric columns).
    attention_groups : list of list of int or None, default=None
        A partition of the column indices ``0..n_columns-1``: the columns of one group share
        one attention weight. ``None``: every column is its own group.
    missing_indicators : list of int or None, default=None
        Numeric columns that get a missing indicator (those with missing values at fit).
        Every numeric column has a learned fill value, whether or not it has an indicator.
    numerical_embedding : {"piecewise_linear", "periodic"} or None, default=None
        How numeric columns are embedded: ``None`` passes each value through as one column;
        ``"piecewise_linear"`` encodes the columns with a positive ``bin_counts`` entry with
        :class:`~sparsetab.network.numerical.PiecewiseLinearEncoding` (the others stay
        scalar); ``"periodic"`` embeds every numeric column with
        :class:`~sparsetab.network.numerical.PeriodicEmbedding`.
    bin_counts : list of int or None, length n_columns, default=None
        Required for ``"piecewise_linear"``: the number of bins of each column, 0 for a
        categorical column and for a numeric column that keeps its scalar input. The edges
        themselves are a buffer, set with
        :meth:`~sparsetab.network.numerical.PiecewiseLinearEncoding.set_edges` or loaded from
        a state dict.
    n_bins : int, default=32
        For ``"periodic"``: the number of frequencies ``k`` of each column.
    embedding_dim : int, default=8
        For ``"periodic"``: the width of each numeric column's embedding.
    frequency_scale : float, default=0.1
        For ``"periodic"``: ``sigma`` of the frequencies' initialisation ``N(0, sigma^2)``.
    piecewise_linear_with_value : bool, default=False
        For ``"piecewise_linear"``: whether each encoded column also keeps its (filled) value as
        one more dimension of its attention group. The piecewise linear components alone
        determine the value, but on a product of columns (Syn5 of the TabNet paper, default
        training, sparsemax, 3 seeds) a network given only the components reached ROC AUC 0.740
        against the paper's 0.789 (benchmarks/results/syn_defaults_bins_only.md), and 0.769 with
        the value kept as well (benchmarks/results/syn_defaults.md). False is the layout of
        networks built before this option.
    generator : torch.Generator or None, default=None
        Source of the initial weights (:mod:`sparsetab.network.seeded`), so that a seeded fit
        does not depend on what other threads draw; None: torch's global generator.

    Attributes
    ----------
    output_dim : int
        Width of the embedded input: the width of the numeric columns (one each without
        ``numerical_embedding``), plus the number of missing indicators, plus the sum of the
        embedding widths of the categorical columns.
    numerical : PiecewiseLinearEncoding or PeriodicEmbedding
        Only with ``numerical_embedding``: the module that embeds the numeric columns.
    fill_values : torch.nn.Parameter of shape (n_numeric,), float32
        The value that replaces a missing numeric value, in standardised units, initialised at
        0 (the training mean); it only gets gradients from rows where the value is missing.
    attention_groups : list of list of int
        The groups, in the order of the mask's entries.
    group_matrix : torch.Tensor of shape (n_groups, output_dim), float32
        ``group_matrix[g, k] = 1`` when embedded column ``k`` comes from a column of group
        ``g``: ``mask @ group_matrix`` is the mask over the embedded input.
    explanation_matrix : torch.Tensor of shape (n_groups, n_columns), float32
        ``explanation_matrix[g, j] = 1 / |g|`` when column ``j`` is in group ``g``:
        ``mask @ explanation_matrix`` gives each input column an equal share of its group's
        weight, so a row that sums to 1 over groups sums to 1 over columns.

    Raises
    ------
    ValueError
        If the lengths of ``cardinalities`` and ``embedding_dims`` differ,
        ``attention_groups`` is not a partition of the columns, ``missing_indicators``
        names a column that is not numeric, ``numerical_embedding`` is unknown, or
        ``bin_counts`` does not fit the columns.
    """

    # Networks pickled before numerical embeddings existed have no such attribute: they embed none.
    numerical_embedding = None
    # Networks pickled before the option encode the bins only.
    piecewise_linear_with_value = False

    def __init__(
        self,
        cardinalities,
        embedding_dims,
        attention_groups=None,
        missing_indicators=None,
        numerical_embedding=None,
        bin_counts=None,
        n_bins=32,
        embedding_dim=8,
        frequency_scale=0.1,
        piecewise_linear_with_value=False,
        generator=None,
    ):
        super().__init__()
        n_columns = len(cardinalities)
        if n_columns != len(embedding_dims):
            raise ValueError(
                f"cardinalities and embedding_dims must have the same length, got "
                f"{n_columns} and {len(embedding_dims)}."
            )
        self.attention_groups = _check_attention_groups(attention_groups, n_columns)
        numeric = [j for j, card in enumerate(cardinalities) if card is None]
        categorical = [j for j, card in enumerate(cardinalities) if card is not None]
        # No zero-size buffer when every column is categorical: torch.export.save cannot store one.
        self.register_buffer("numeric_index", torch.tensor(numeric, dtype=torch.long) if numeric else None)
        self.categorical_columns = categorical
        self.embeddings = nn.ModuleList(
            seeded_embedding(cardinalities[j], embedding_dims[j], generator=generator) for j in categorical
        )
        indicators = sorted(int(j) for j in (missing_indicators or []))
        if any(j not in numeric for j in indicators):
            raise ValueError(
                f"missing_indicators must be numeric columns (of {numeric}); got {list(missing_indicators)}."
            )
        self.fill_values = nn.Parameter(torch.zeros(len(numeric))) if numeric else None
        # Positions of the indicator columns among the numeric ones.
        self.register_buffer(
            "indicator_index",
            torch.tensor([numeric.index(j) for j in indicators], dtype=torch.long) if indicators else None,
        )
        # Read by _embed_numeric only once a piecewise linear encoding exists.
        self.piecewise_linear_with_value = bool(piecewise_linear_with_value)
        numeric_owners = self._embed_numeric_columns(
            numeric, cardinalities, numerical_embedding, bin_counts, n_bins, embedding_dim, frequency_scale, generator
        )
        # Embedded layout: the numeric columns' values or embeddings, their missing indicators, then each
        # categorical embedding. The owner of an embedded column is the input column it comes from.
        categorical_owners = [j for j in categorical for _ in range(embedding_dims[j])]
        owners = numeric_owners + indicators + categorical_owners
        self.output_dim = len(owners)
        membership = torch.zeros(len(self.attention_groups), n_columns)
        for g, group in enumerate(self.attention_groups):
            membership[g, group] = 1.0
        self.register_buffer("group_matrix", membership @ _column_matrix(owners, n_columns))
        self.register_buffer("explanation_matrix", membership / membership.sum(dim=1, keepdim=True))
        if self.numerical_embedding is not None:
            # What the pretraining decoder reconstructs: each numeric column as its one value (see `plain`).
            plain_owners = list(numeric) + indicators + categorical_owners
            self._plain_output_dim = len(plain_owners)
            self.register_buffer(
                "_plain_group_matrix", membership @ _column_matrix(plain_owners, n_columns), persistent=False
            )

    def _embed_numeric_columns(
        self, numeric, cardinalities, numerical_embedding, bin_counts, n_bins, embedding_dim, frequency_scale, generator
    ):
        """Build the numerical embedding; return the owner (input column) of each embedded numeric column."""
        if numerical_embedding is not None and numerical_embedding not in NUMERICAL_EMBEDDINGS:
            raise ValueError(
                f"numerical_embedding must be one of {NUMERICAL_EMBEDDINGS} or None, got {numerical_embedding!r}."
            )
        if numerical_embedding is None or not numeric:
            return list(numeric)
        if numerical_embedding == "periodic":
            self.numerical_embedding = numerical_embedding
            self.numerical = PeriodicEmbedding(
                len(numeric), n_bins, embedding_dim, frequency_scale, generator=generator
            )
            return [j for j in numeric for _ in range(self.numerical.embedding_dim)]
        counts = [int(count) for count in (bin_counts if bin_counts is not None else [])]
        if (
            len(counts) != len(cardinalities)
            or any(count < 0 for count in counts)
            or any(counts[j] != 0 for j, card in enumerate(cardinalities) if card is not None)
        ):
            raise ValueError(
                f"numerical_embedding='piecewise_linear' needs bin_counts: one int >= 0 per column "
                f"({len(cardinalities)} of them), 0 for the categorical columns; got {bin_counts!r}."
            )
        encoded = [position for position, j in enumerate(numeric) if counts[j] > 0]
        scalar = [position for position, j in enumerate(numeric) if counts[j] == 0]
        if not encoded:  # every numeric column has few values: nothing to encode, as without the option
            return list(numeric)
        self.numerical_embedding = numerical_embedding
        self.numerical = PiecewiseLinearEncoding([counts[numeric[position]] for position in encoded])
        # Positions among the numeric columns; None rather than an empty buffer, which torch.export cannot save.
        self.register_buffer("encoded_position", torch.tensor(encoded, dtype=torch.long), persistent=False)
        self.register_buffer(
            "scalar_position", torch.tensor(scalar, dtype=torch.long) if scalar else None, persistent=False
        )
        # Layout of the numeric part: the scalar columns (every numeric column's value, with the option), then
        # each encoded column's bins.
        values = list(numeric) if self.piecewise_linear_with_value else [numeric[position] for position in scalar]
        return values + [numeric[position] for position in encoded for _ in range(counts[numeric[position]])]

    @property
    def n_groups(self):
        """Number of attention groups, an int: the width of the feature masks."""
        return len(self.attention_groups)

    def set_bin_edges(self, edges):
        """Store the fitted bin edges of the piecewise linear encoding.

        Parameters
        ----------
        edges : list of (torch.Tensor of shape (n_edges,)) or None, length n_columns
            The edges of each input column, as :func:`~sparsetab.network.quantile_bin_edges`
            returns them: None for a column that keeps its scalar input (and for the
            categorical columns), ``bin_counts[j] + 1`` increasing values otherwise.

        Raises
        ------
        ValueError
            If the network has no piecewise linear encoding, or ``edges`` does not match its
            ``bin_counts``.
        """
        if self.numerical_embedding != "piecewise_linear":
            raise ValueError("set_bin_edges needs numerical_embedding='piecewise_linear' with an encoded column.")
        numeric = self.numeric_index.tolist()
        encoded = [numeric[position] for position in self.encoded_position.tolist()]
        if len(edges) != self.explanation_matrix.shape[1] or any(
            (edges[j] is None) == (j in encoded) for j in range(len(edges))
        ):
            raise ValueError(
                f"edges must give one tensor for each encoded column ({encoded}) and None for the other "
                f"{self.explanation_matrix.shape[1] - len(encoded)} columns; got "
                f"{[None if column is None else len(column) for column in edges]} (None or number of edges)."
            )
        self.numerical.set_edges([edges[j] for j in encoded])

    @property
    def plain_output_dim(self):
        """Width of :meth:`plain`, an int: :attr:`output_dim` when no numeric column is embedded."""
        return self.output_dim if self.numerical_embedding is None else self._plain_output_dim

    @property
    def plain_group_matrix(self):
        """The :attr:`group_matrix` of the layout of :meth:`plain`, a (n_groups, plain_output_dim) tensor."""
        return self.group_matrix if self.numerical_embedding is None else self._plain_group_matrix

    def forward(self, x):
        """Embed ``x``.

        Parameters
        ----------
        x : torch.Tensor of shape (batch, n_columns), float
            Numeric columns as values (NaN where missing); categorical columns as integer codes
            stored as floats.

        Returns
        -------
        torch.Tensor of shape (batch, output_dim)
            Without NaN.
        """
        return self._embed(x, embed_numeric=True)

    def plain(self, x):
        """Embed ``x`` with each numeric column as its one (filled) value, whatever ``numerical_embedding``.

        The numeric values, the missing indicators and the categorical embeddings: the columns'
        values rather than the dimensions of their numerical embeddings, which is what the
        pretraining decoder reconstructs. Equal to :meth:`forward` without a numerical embedding.

        Parameters
        ----------
        x : torch.Tensor of shape (batch, n_columns), float
            As for :meth:`forward`.

        Returns
        -------
        torch.Tensor of shape (batch, plain_output_dim)
            Without NaN; the layout of :attr:`plain_group_matrix`.
        """
        return self._embed(x, embed_numeric=False)

    def _embed(self, x, embed_numeric):
        pieces = []
        if self.numeric_index is not None:
            numeric = x if not self.categorical_columns else x.index_select(1, self.numeric_index)
            missing = torch.isnan(numeric)
            # Fill first, then embed: the learned fill value goes through the embedding like any value.
            filled = torch.where(missing, self.fill_values, numeric)
            pieces.extend(self._embed_numeric(filled) if embed_numeric else [filled])
            if self.indicator_index is not None:
                pieces.append(missing.index_select(1, self.indicator_index).to(numeric.dtype))
        for column, embedding in zip(self.categorical_columns, self.embeddings):
            pieces.append(embedding(x[:, column].long()))
        return torch.cat(pieces, dim=1) if len(pieces) > 1 else pieces[0]

    def _embed_numeric(self, filled):
        """The numeric part of the embedded layout, as a list of (batch, width) pieces."""
        if self.numerical_embedding is None:
            return [filled]
        if self.numerical_embedding == "periodic":
            return [self.numerical(filled)]
        encoded = self.numerical(filled.index_select(1, self.encoded_position))
        if self.piecewise_linear_with_value:
            return [filled, encoded]
        if self.scalar_position is None:
            return [encoded]
        return [filled.index_select(1, self.scalar_position), encoded]
