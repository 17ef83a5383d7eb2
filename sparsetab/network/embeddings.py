"""Categorical embeddings and the maps between attention groups, input columns and embedded columns.

TabNet selects *input columns*: a categorical column embedded in ``d`` dimensions must be
kept or dropped as a whole, and columns the user groups together (``grouped_features``)
share one attention weight. The attentive transformer therefore produces one mask value per
attention group; :attr:`InputEmbedding.group_matrix` spreads it over the embedded dimensions
of every column of the group, and :attr:`InputEmbedding.explanation_matrix` shares it out
among the group's input columns for explanations.
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

    Attributes
    ----------
    output_dim : int
        Width of the embedded input: the number of numeric columns plus the sum of the
        embedding widths of the categorical columns.
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
        If the lengths of ``cardinalities`` and ``embedding_dims`` differ, or
        ``attention_groups`` is not a partition of the columns.
    """

    def __init__(self, cardinalities, embedding_dims, attention_groups=None):
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
        # Embedded layout: all numeric columns first, then each categorical embedding.
        owners = list(numeric)
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
        """int: number of attention groups, the width of the feature masks."""
        return len(self.attention_groups)

    def forward(self, x):
        """Embed ``x``.

        Parameters
        ----------
        x : torch.Tensor of shape (batch, n_columns), float
            Numeric columns as values; categorical columns as integer codes stored as floats.

        Returns
        -------
        torch.Tensor of shape (batch, output_dim)
        """
        if not self.categorical_columns:
            return x
        pieces = [] if self.numeric_index is None else [x.index_select(1, self.numeric_index)]
        for column, embedding in zip(self.categorical_columns, self.embeddings):
            pieces.append(embedding(x[:, column].long()))
        return torch.cat(pieces, dim=1)
