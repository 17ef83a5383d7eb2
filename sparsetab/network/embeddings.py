"""Categorical embeddings and the map from embedded columns back to input columns.

TabNet selects *input columns*: a categorical column embedded in ``d`` dimensions must be
kept or dropped as a whole. The attentive transformer therefore produces one mask value
per input column (one attention group), and :attr:`InputEmbedding.group_matrix` spreads it
over the column's embedded dimensions.
"""

import torch
from torch import nn

__all__ = ["InputEmbedding"]


class InputEmbedding(nn.Module):
    """Embed the categorical columns of a float input and record the column groups.

    Parameters
    ----------
    cardinalities : list of int or None, length n_columns
        ``None`` for a numeric column; for a categorical column the number of embedding rows,
        i.e. the number of categories plus one (code 0 is reserved for missing and unseen
        categories, codes 1..K are the categories seen at fit).
    embedding_dims : list of int, length n_columns
        Embedding width of each categorical column (ignored for numeric columns).

    Attributes
    ----------
    output_dim : int
        Width of the embedded input: the number of numeric columns plus the sum of the
        embedding widths of the categorical columns.
    group_matrix : torch.Tensor of shape (n_columns, output_dim), float32
        ``group_matrix[j, k] = 1`` when embedded column ``k`` comes from input column ``j``.
    """

    def __init__(self, cardinalities, embedding_dims):
        super().__init__()
        if len(cardinalities) != len(embedding_dims):
            raise ValueError(
                f"cardinalities and embedding_dims must have the same length, got "
                f"{len(cardinalities)} and {len(embedding_dims)}."
            )
        numeric = [j for j, card in enumerate(cardinalities) if card is None]
        categorical = [j for j, card in enumerate(cardinalities) if card is not None]
        self.register_buffer("numeric_index", torch.tensor(numeric, dtype=torch.long))
        self.categorical_columns = categorical
        self.embeddings = nn.ModuleList(nn.Embedding(cardinalities[j], embedding_dims[j]) for j in categorical)
        # Embedded layout: all numeric columns first, then each categorical embedding.
        owners = list(numeric)
        for j in categorical:
            owners.extend([j] * embedding_dims[j])
        self.output_dim = len(owners)
        group_matrix = torch.zeros(len(cardinalities), self.output_dim)
        group_matrix[torch.tensor(owners, dtype=torch.long), torch.arange(self.output_dim)] = 1.0
        self.register_buffer("group_matrix", group_matrix)

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
        pieces = [x.index_select(1, self.numeric_index)]
        for column, embedding in zip(self.categorical_columns, self.embeddings):
            pieces.append(embedding(x[:, column].long()))
        return torch.cat(pieces, dim=1)
