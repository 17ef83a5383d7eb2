"""Layers initialised from a given random generator instead of torch's global one.

``torch.nn.Linear`` and ``torch.nn.Embedding`` draw their initial weights from the global
generator in their constructors, which every thread of the process shares: a fit seeded with
``random_state`` would then depend on what other threads draw meanwhile. These constructors
build the layer without touching any generator and fill it with the same distributions, in the
same order, from ``generator``; with a generator seeded like the global one they give the same
weights bit for bit.
"""

import math

from torch import nn

__all__ = ["seeded_embedding", "seeded_linear"]


def seeded_linear(in_features, out_features, *, bias, generator=None):
    """A :class:`torch.nn.Linear` initialised as its ``reset_parameters`` does, from ``generator``.

    Parameters
    ----------
    in_features, out_features : int
        The layer's sizes.
    bias : bool
        Whether the layer has a bias.
    generator : torch.Generator or None, default=None
        Source of the initial weights; None: torch's global generator (as ``nn.Linear``).

    Returns
    -------
    torch.nn.Linear
        Weight uniform in ``+-1 / sqrt(in_features)`` (Kaiming uniform with ``a = sqrt(5)``),
        bias uniform in the same bounds, on the CPU in float32.
    """
    layer = nn.Linear(in_features, out_features, bias=bias, device="meta")  # no draw here
    layer.to_empty(device="cpu")
    nn.init.kaiming_uniform_(layer.weight, a=math.sqrt(5), generator=generator)
    if bias:
        bound = 1 / math.sqrt(in_features) if in_features > 0 else 0
        nn.init.uniform_(layer.bias, -bound, bound, generator=generator)
    return layer


def seeded_embedding(num_embeddings, embedding_dim, *, generator=None):
    """A :class:`torch.nn.Embedding` initialised as its ``reset_parameters`` does, from ``generator``.

    Parameters
    ----------
    num_embeddings, embedding_dim : int
        Rows and width of the table.
    generator : torch.Generator or None, default=None
        Source of the initial weights; None: torch's global generator (as ``nn.Embedding``).

    Returns
    -------
    torch.nn.Embedding
        Weights standard normal, on the CPU in float32.
    """
    layer = nn.Embedding(num_embeddings, embedding_dim, device="meta")
    layer.to_empty(device="cpu")
    nn.init.normal_(layer.weight, generator=generator)
    return layer
