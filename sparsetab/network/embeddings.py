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
"""

import torch
from torch import nn

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

    Attributes
    ----------
    output_dim : int
        Width of the embedded input: the number of numeric columns, plus the number of missing
        indicators, plus the sum of the embedding widths of the categorical columns.
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
        ``attention_groups`` is not a partition of the columns, or ``missing_indicators``
        names a column that is not numeric.
    """

    def __init__(self, cardinalities, embedding_dims, attention_groups=None, missing_indicators=None):
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
        self.embeddings = nn.ModuleList(nn.Embedding(cardinalities[j], embedding_dims[j]) for j in categorical)
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
        # Embedded layout: all numeric columns, their missing indicators, then each categorical embedding.
        owners = list(numeric) + indicators
        for j in categorical:
            owners.extend([j] * embedding_dims[j])
        self.output_dim = len(owners)
        column_matrix = torch.zeros(n_columns, self.output_dim)
        column_matrix[torch.tensor(owners, dtype=torch.long), torch.arange(self.output_dim)] = 1.0
        membership = torch.zeros(len(self.attention_groups), n_columns)
        for g, group in enumerate(self.attention_groups):
            membership[g, group] = 1.0
        self.register_buffer("group_matrix", membership @ column_matrix)
        self.register_buffer("explanation_matrix", membership / membership.sum(dim=1, keepdim=True))

    @property
    def n_groups(self):
        """Number of attention groups, an int: the width of the feature masks."""
        return len(self.attention_groups)

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
        pieces = []
        if self.numeric_index is not None:
            numeric = x if not self.categorical_columns else x.index_select(1, self.numeric_index)
            missing = torch.isnan(numeric)
            pieces.append(torch.where(missing, self.fill_values, numeric))
            if self.indicator_index is not None:
                pieces.append(missing.index_select(1, self.indicator_index).to(numeric.dtype))
        for column, embedding in zip(self.categorical_columns, self.embeddings):
            pieces.append(embedding(x[:, column].long()))
        return torch.cat(pieces, dim=1) if len(pieces) > 1 else pieces[0]
