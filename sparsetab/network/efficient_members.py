"""The parts of a parameter-efficient ensemble that each member has of its own (``n_efficient_members``).

A :class:`~sparsetab.network.TabNet` with ``n_efficient_members = k > 1`` holds ``k`` members that
share every TabNet weight (feature transformers, attentive transformers, embeddings, batch norms)
and differ in two small parts, after TabM-mini (Gorishniy, Kotelnikov and Babenko, "TabM:
Advancing Tabular Deep Learning with Parameter-Efficient Ensembling", ICLR 2025, section 3):

- a multiplicative adapter on the embedded input, ``f_m = f * r_m`` after the input batch norm,
  initialised with a random positive scale per attention group, uniform in [0.5, 1.5]
  (:func:`member_scale_adapters`); and
- an output head each (:class:`MemberHeads`).

TabM initialises its first adapter with random signs instead, one value per feature's section.
In TabNet the members also share the attentive transformers, which choose each row's features
from the signs of its values (Syn4-Syn6 switch on the sign of ``x11``): with a feature's sign
flipped in one member and not in the other, one set of attention weights had to serve opposite
inputs, and the masks blurred. Measured on Syn6 (``fit(X, y)``, 10,000 rows, seed 0, two
members; relevant share of the masks, test AUC): random signs 0.62 and 0.893, all ones 0.82 and
0.891, positive scales 0.89 and 0.894, one member 0.85 and 0.889 (``benchmarks/syn.py``
has all six sets and three seeds).

The members run on one batch: the rows are repeated ``k`` times, member-major (rows
``m * batch .. (m + 1) * batch - 1`` are member ``m``'s), so ghost batch norm chunks mostly hold
one member's rows. Each member is trained on its own loss (the mean of the members' losses is
minimised, as in TabM), and predictions average the members' probabilities or values.
"""

import math

import torch
from torch import nn

__all__ = ["ADAPTER_SCALE_RANGE", "MemberHeads", "member_scale_adapters"]

#: The interval of the members' initial adapter scales (see the module docstring).
ADAPTER_SCALE_RANGE = (0.5, 1.5)


class MemberHeads(nn.Module):
    """One linear output head per efficient member, applied to the member's own rows.

    Parameters
    ----------
    in_features : int
        Width of the decision output (``n_d``).
    out_features : int
        Width of each head.
    n_members : int
        Number of members, >= 2.
    generator : torch.Generator or None, default=None
        Source of the initial weights; None: torch's global generator.

    Notes
    -----
    Each head is initialised as :class:`torch.nn.Linear` is: weight and bias uniform in
    ``+-1 / sqrt(in_features)``.
    """

    def __init__(self, in_features, out_features, n_members, *, generator=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.n_members = n_members
        bound = 1 / math.sqrt(in_features) if in_features > 0 else 0.0
        weight = torch.empty(n_members, in_features, out_features).uniform_(-bound, bound, generator=generator)
        bias = torch.empty(n_members, 1, out_features).uniform_(-bound, bound, generator=generator)
        self.weight = nn.Parameter(weight)
        self.bias = nn.Parameter(bias)

    def forward(self, decision):
        """Apply member ``m``'s head to member ``m``'s rows.

        Parameters
        ----------
        decision : torch.Tensor of shape (n_members * batch, in_features), float
            The decision outputs, member-major.

        Returns
        -------
        torch.Tensor of shape (n_members * batch, out_features)
            Each member's head output on its rows, member-major.

        Raises
        ------
        RuntimeError
            From torch, when the rows are not a multiple of ``n_members``.
        """
        by_member = decision.reshape(self.n_members, -1, self.in_features)
        return torch.baddbmm(self.bias, by_member, self.weight).reshape(-1, self.out_features)


def member_scale_adapters(n_members, group_matrix, *, generator=None):
    """The initial multiplicative adapters of the members: a random positive scale per member and attention group.

    Parameters
    ----------
    n_members : int
        Number of members, >= 2.
    group_matrix : torch.Tensor of shape (n_groups, width), float32
        ``group_matrix[g, c] = 1`` when embedded column ``c`` belongs to attention group ``g``
        (:attr:`~sparsetab.network.embeddings.InputEmbedding.group_matrix`).
    generator : torch.Generator or None, default=None
        Source of the scales; None: torch's global generator.

    Returns
    -------
    torch.Tensor of shape (n_members, width), float32
        Entries uniform in :data:`ADAPTER_SCALE_RANGE`; the embedded columns of one group share
        their member's scale, as TabM's first adapter has one value per feature's section
        (Gorishniy et al., ICLR 2025, section 3). Positive, unlike TabM's random signs, so that
        every member shows the shared attention the same sign of every feature (the module
        docstring has the measurements).
    """
    low, high = ADAPTER_SCALE_RANGE
    n_groups = group_matrix.shape[0]
    scales = torch.rand((n_members, n_groups), generator=generator, dtype=group_matrix.dtype) * (high - low) + low
    return scales @ group_matrix
