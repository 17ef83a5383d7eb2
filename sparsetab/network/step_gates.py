"""Step gates: a per-row weight in [0, 1] on each decision step's contribution.

TabNet adds every decision step's output ``ReLU(d_i)`` to the decision, so a step cannot abstain:
its mask always sums to 1 and is counted in the aggregate importance with the weight
``eta_b[i] = sum_c ReLU(d_b,c[i])``. A step gate ``g_b[i]`` in [0, 1], computed per row from
attention features, scales the step's contribution (``g_b[i] * ReLU(d_i)``) and hence its
weight ``g_b[i] * eta_b[i]`` in the aggregate importance; a regulariser on the gates
(:func:`gate_penalty`) pulls steps that do not help toward off.
"""

import math

import torch
from torch import nn

from .seeded import seeded_linear

__all__ = ["GATE_PENALTIES", "STEP_GATES", "StepGates", "gate_penalty", "sparsemax_gate"]

# The gate functions of the scores: the logistic sigmoid, and sparsemax over the pair (score, 0).
STEP_GATES = ("sigmoid", "sparsemax")
# The gate regularisers: the L1 norm of a row's gates; each gate weighted by its step's contribution
# relative to the batch's mean; the entropy of a row's step shares (see gate_penalty).
GATE_PENALTIES = ("l1", "contribution", "share_entropy")
# Gates start mostly open, so that a new gated network begins close to an ungated one and the
# regulariser, not the initialisation, decides which steps close.
INITIAL_GATE = 0.9


def sparsemax_gate(scores):
    """The first coordinate of sparsemax over the pair ``(score, 0)``: ``clip((score + 1) / 2, 0, 1)``.

    Sparsemax of two values ``(z, 0)`` has threshold ``tau = (z - 1) / 2`` while both are in
    the support (``|z| < 1``), so its first coordinate is ``z - tau = (z + 1) / 2``; it is
    exactly 1 for ``z >= 1`` and exactly 0 for ``z <= -1``. The gate is therefore the
    probability that sparsemax gives to "step on" against a fixed "off" score of 0, and it
    can be exactly 0.

    Parameters
    ----------
    scores : torch.Tensor of any shape, float
        The gate scores ``z``.

    Returns
    -------
    torch.Tensor of the shape and dtype of ``scores``
        The gates, in [0, 1]; the gradient is 1/2 inside (-1, 1) and 0 outside.

    References
    ----------
    Martins, A. F. T. and Astudillo, R. F. (2016). From Softmax to Sparsemax: A Sparse Model of
    Attention and Multi-Label Classification. ICML, section 2 (the closed form of the
    threshold).
    """
    return torch.clamp((scores + 1.0) * 0.5, 0.0, 1.0)


def gate_penalty(gates, step_importance, penalty="share_entropy", mean_contribution=None, ungated_importance=None):
    """The gate regulariser, to be weighted by ``lambda_gate``.

    ``"l1"``: the mean over rows of ``sum_i g_b[i]``, the L1 norm of each row's gates: the
    same pull toward off on every gate. ``"contribution"``: the mean over rows of
    ``sum_i g_b[i] * eta_b[i] / mean(eta)``, each gate weighted by its step's ungated
    contribution ``eta_b[i]`` relative to the mean contribution over the rows and steps of the
    batch, with no gradient through the weights: the pull is strongest on the gates of the
    steps and rows that contribute most. The weights are relative, so neither form stops the
    gates and the step outputs from trading scale (``g * ReLU(d) = (g / c) * (c * ReLU(d))``),
    with which the pull can be paid without a step abstaining.

    ``"share_entropy"``: the mean over rows of the Shannon entropy
    ``-sum_i s_b[i] log s_b[i]`` of the row's step shares
    ``s_b[i] = g_b[i] eta_b[i] / sum_j g_b[j] eta_b[j]`` (the steps' weights in the aggregate
    importance, ungated steps with ``g = 1``), with no gradient through ``eta``. It is lowest
    when one step carries the row, so it closes the gates of a row's surplus steps rather than
    all gates, and scaling a row's gates by ``c`` leaves it unchanged, so rescaling cannot pay
    it. A row whose every weight is 0 counts 0. (This form is ours; it was chosen on the screen
    in benchmarks/results/syn_gates_screen.md.)

    Parameters
    ----------
    gates : torch.Tensor of shape (batch, n_gated), float
        The gates of the gated steps, in [0, 1].
    step_importance : torch.Tensor of shape (batch, n_gated), float
        ``eta_b[i] = sum_c ReLU(d_b,c[i])`` of the same steps, before the gates.
    penalty : {"l1", "contribution", "share_entropy"}, default="share_entropy"
        Which regulariser.
    mean_contribution : torch.Tensor, scalar, or None, default=None
        The mean ``eta`` that the ``"contribution"`` weights are relative to (the network
        passes the mean over all its steps, gated or not); None: the mean of
        ``step_importance``. Unused by the other penalties.
    ungated_importance : torch.Tensor of shape (batch, n_ungated), float, or None, default=None
        ``eta`` of the steps without a gate, which count in ``"share_entropy"``'s shares with
        ``g = 1``; None: none. Unused by the other penalties.

    Returns
    -------
    torch.Tensor, scalar
        The regulariser; 0 when ``n_gated`` is 0 (and, for ``"contribution"``, when every
        ``eta`` is 0).

    Raises
    ------
    ValueError
        If ``penalty`` is not one of :data:`GATE_PENALTIES`.

    References
    ----------
    Arik, S. O. and Pfister, T. (2021). TabNet: Attentive Interpretable Tabular Learning.
    AAAI 35(8), section 4 (``eta_b`` and the aggregate importance).
    Shannon, C. E. (1948). A Mathematical Theory of Communication. Bell System Technical
    Journal 27, section 6 (the entropy).
    """
    if penalty not in GATE_PENALTIES:
        raise ValueError(f"gate_penalty must be one of {GATE_PENALTIES}, got {penalty!r}.")
    if gates.shape[1] == 0:
        return gates.new_zeros(())
    if penalty == "l1":
        return gates.sum(dim=1).mean()
    contribution = step_importance.detach()
    if penalty == "share_entropy":
        weights = gates * contribution
        if ungated_importance is not None:
            weights = torch.cat([ungated_importance.detach(), weights], dim=1)
        shares = weights / weights.sum(dim=1, keepdim=True).clamp_min(torch.finfo(weights.dtype).tiny)
        # eps keeps the log finite at a share of 0, where the product is 0 whatever the log.
        return -(shares * torch.log(shares + torch.finfo(weights.dtype).eps)).sum(dim=1).mean()
    mean_contribution = contribution.mean() if mean_contribution is None else mean_contribution.detach()
    weights = contribution / mean_contribution.clamp_min(torch.finfo(contribution.dtype).tiny)
    return (gates * weights).sum(dim=1).mean()


class StepGates(nn.Module):
    """A per-row gate in [0, 1] on each decision step's contribution to the decision output.

    The gate of step ``i`` (1-based) is ``g_b[i] = f(w_i . a_b + c_i)`` with ``f`` the sigmoid or
    :func:`sparsemax_gate`, ``(w_i, c_i)`` a linear score of the step, and ``a_b`` the row's
    attention features ``a[i-1]``, from which step ``i``'s mask is computed: the gate decides
    before the step looks. (Gates of ``a[i]``, written by step ``i``'s own feature transformer,
    were screened and not kept: benchmarks/results/syn_gates_screen.md.) With
    ``gate_first_step=False`` step 1 has no gate (``g[1] = 1``), so every row keeps at least
    one step.

    Parameters
    ----------
    n_a : int
        Width of the attention features.
    n_steps : int
        Number of decision steps.
    kind : {"sigmoid", "sparsemax"}, default="sigmoid"
        The gate function of the scores.
    gate_first_step : bool, default=True
        Whether step 1 has a gate.
    penalty : {"l1", "contribution", "share_entropy"}, default="share_entropy"
        The regulariser of :func:`gate_penalty` that the network returns.
    generator : torch.Generator or None, default=None
        Source of the initial weights; None: torch's global generator.

    Attributes
    ----------
    scores : torch.nn.Linear or None
        ``n_a -> n_gated`` with ``n_gated`` the number of gated steps: row ``j`` of its weight
        and its bias score the ``j``-th gated step. None when no step is gated (one step,
        ``gate_first_step=False``).

    Raises
    ------
    ValueError
        If ``kind`` is not one of :data:`STEP_GATES` or ``penalty`` not one of
        :data:`GATE_PENALTIES`.

    References
    ----------
    Arik, S. O. and Pfister, T. (2021). TabNet: Attentive Interpretable Tabular Learning.
    AAAI 35(8), section 4 ("Interpretability": the step weights ``eta_b``).
    """

    def __init__(
        self,
        n_a,
        n_steps,
        kind="sigmoid",
        gate_first_step=True,
        penalty="share_entropy",
        generator=None,
    ):
        super().__init__()
        if kind not in STEP_GATES:
            raise ValueError(f"step_gates must be one of {STEP_GATES} or None, got {kind!r}.")
        if penalty not in GATE_PENALTIES:
            raise ValueError(f"gate_penalty must be one of {GATE_PENALTIES}, got {penalty!r}.")
        self.kind = kind
        self.penalty = penalty
        self.gate_first_step = bool(gate_first_step)
        self.n_steps = int(n_steps)
        self.first_gated = 0 if self.gate_first_step else 1
        n_gated = self.n_steps - self.first_gated
        self.scores = None
        if n_gated > 0:
            self.scores = seeded_linear(n_a, n_gated, bias=True, generator=generator)
            # Mostly open at the start: the bias carries the initial gate, the weights its spread over rows.
            start = math.log(INITIAL_GATE / (1 - INITIAL_GATE)) if kind == "sigmoid" else 2 * INITIAL_GATE - 1
            with torch.no_grad():
                self.scores.bias.fill_(start)

    def is_gated(self, step):
        """Whether a decision step has a gate.

        Parameters
        ----------
        step : int
            The step, 0-based.

        Returns
        -------
        bool
            False for step 0 with ``gate_first_step=False``, True otherwise.
        """
        return step >= self.first_gated

    def forward(self, step, attention):
        """The gate of one decision step for each row.

        Parameters
        ----------
        step : int
            The step, 0-based; it must be gated (:meth:`is_gated`).
        attention : torch.Tensor of shape (batch, n_a), float
            The attention features the gate reads (``a[i-1]``).

        Returns
        -------
        torch.Tensor of shape (batch, 1), float
            The gates, in [0, 1].
        """
        row = step - self.first_gated
        score = nn.functional.linear(attention, self.scores.weight[row : row + 1], self.scores.bias[row : row + 1])
        if self.kind == "sigmoid":
            return torch.sigmoid(score)
        return sparsemax_gate(score)
