"""The parts of a parameter-efficient ensemble that each member has of its own (``n_efficient_members``).

A :class:`~sparsetab.network.TabNet` with ``n_efficient_members = k > 1`` holds ``k`` members that
share every TabNet weight (feature transformers, attentive transformers, embeddings, batch norms)
and differ in two small parts, after TabM-mini (Gorishniy, Kotelnikov and Babenko, "TabM:
Advancing Tabular Deep Learning with Parameter-Efficient Ensembling", ICLR 2025, section 3):

- a multiplicative adapter on the embedded input, ``f_m = f * r_m`` after the input batch norm,
  initialised with random signs, one sign per attention group (TabM initialises its first
  adapter with random signs, one value per feature's section); and
- an output head each (:class:`MemberHeads`).

The members run on one batch: the rows are repeated ``k`` times, member-major (rows
``m * batch .. (m + 1) * batch - 1`` are member ``m``'s), so ghost batch norm chunks mostly hold
one member's rows. Each member is trained on its own loss (the mean of the members' losses is
minimised, as in TabM), and predictions average the members' probabilities or values.

The random signs cost mask sharpness where a row's features are chosen by the sign of a value
(Syn6 switches on the sign of ``x11``): the members share the attentive transformers, which then
see that value with opposite signs. Two other designs were measured and not kept (``fit(X, y)``,
defaults otherwise; Syn6: 10,000 rows, seed 0, relevant share of the masks over its five test
sets; forest_cover_kaggle and letter_recognition: test error, seeds 0-2, ``python -m
benchmarks.compare --tables screen --protocol user``):

- adapters starting at random positive scales, uniform in [0.5, 1.5]: Syn6 share 0.89 (random
  signs 0.62, one member 0.85), but most of the accuracy gone: forest 0.1728 and letter 0.0266,
  against 0.1575 and 0.0233 with random signs and 0.1760 and 0.0273 with one member;
- wider positive scales, log-uniform in [1/3, 3] (``python -m benchmarks.syn_members --variant
  positive_scales --scale-spread 3``; ``benchmarks/results/adapter_screen.md``, 2-core AMD EPYC,
  both in the same run): sharper masks on four of six sets, seed 0, relevant share against random
  signs Syn1 0.506 (0.427), Syn3 0.871 (0.848), Syn5 0.769 (0.674), Syn6 0.909 (0.616, FDR 0.061
  against 0.432), but Syn2 0.914 (0.936) and Syn4 0.710 (0.728), AUCs within 0.003; and the test
  error 2.1% higher in the geometric mean over nine tables, seeds 0-2 (``python -m
  benchmarks.ensemble_screen --variants defaults positive_scales_3``), higher on seven:
  forest_cover_kaggle 0.1498 (0.1413), letter_4000 0.0642 (0.0616), california_3000 0.497 (0.481).
  Not kept: the accuracy the members exist for is worth more than Syn6;
- random signs with attention shared by the members (each step's attention features averaged
  over the members, one mask per row): forest 0.187 on seed 0, worse than one member;
- random signs everywhere but in the initial transformer, which reads the un-adapted input, so
  that the first mask's attention features are the members' common ones (``python -m
  benchmarks.syn_members --variant initial_without_adapters``; Syn1-Syn6, seed 0, relevant share
  against today's): Syn6 0.744 (0.571) but Syn1 0.459 (0.517), Syn3 0.892 (0.910), Syn5 0.689
  (0.770, test AUC 0.805 against 0.813); Syn2 0.931 (0.903) and Syn4 0.726 (0.720). Not kept;
- the members attend with the first member's masks, the first member's adapter starting at 1
  (``--variant first_member_masks``: its rows alone feed the attentive transformers, one mask per
  row): Syn6 0.901 (0.571, FDR 0.071 against 0.425), Syn1 0.542 (0.517), Syn2 0.907 (0.903), but
  Syn3 0.832 (0.910), Syn4 0.669 (0.720) and Syn5 0.733 (0.770), with test AUCs 0.001-0.009 lower
  on five sets: about one member's masks and less than two members' accuracy. Not kept;
- today's design with a penalty on the members' disagreement (the Jensen-Shannon divergence of a
  row's step masks across the members, weight 0.1 in the objective; ``--variant mask_agreement``):
  the members' masks become nearly equal (Syn6: 0.556, 0.546, 0.547 and 0.556 for the four members
  of the refit's two networks) but not sharper, Syn6 0.551 (0.571), Syn4 0.635 (0.720), Syn1 0.480
  (0.517), Syn3 0.943 (0.910), and the test AUC lower on Syn4 (0.784 against 0.807) and Syn6 (0.871
  against 0.894). Not kept: the members do not blur the mean by disagreeing, each reads noise.
"""

import math

import torch
from torch import nn

__all__ = ["MemberHeads", "member_sign_adapters"]


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


def member_sign_adapters(n_members, group_matrix, *, generator=None):
    """The initial multiplicative adapters of the members: a random sign per member and attention group.

    Parameters
    ----------
    n_members : int
        Number of members, >= 2.
    group_matrix : torch.Tensor of shape (n_groups, width), float32
        ``group_matrix[g, c] = 1`` when embedded column ``c`` belongs to attention group ``g``
        (:attr:`~sparsetab.network.embeddings.InputEmbedding.group_matrix`).
    generator : torch.Generator or None, default=None
        Source of the signs; None: torch's global generator.

    Returns
    -------
    torch.Tensor of shape (n_members, width), float32
        Entries in {-1, 1}; the embedded columns of one group share their member's sign (TabM's
        initialisation of its first adapter, one value per feature's section; Gorishniy et al.,
        ICLR 2025, section 3).
    """
    n_groups = group_matrix.shape[0]
    signs = torch.randint(0, 2, (n_members, n_groups), generator=generator).to(group_matrix.dtype) * 2 - 1
    return signs @ group_matrix
