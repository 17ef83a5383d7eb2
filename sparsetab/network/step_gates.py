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

__all__ = ["STEP_GATES", "StepGates", "gate_penalty"]

# The gate functions: the logistic sigmoid of a linear score. The variants screened and not kept (a
# sparsemax gate over (score, 0), no gate on the first step, gates of the step's own attention features,
# the L1 and contribution-weighted penalties) are documented in benchmarks/results/syn.md.
STEP_GATES = ("sigmoid",)
# Gates start mostly open, so that a new gated network begins close to an ungated one and the
# regulariser, not the initialisation, decides which steps close.
INITIAL_GATE = 0.9


def gate_penalty(gates, step_importance):
    """The gate regulariser, to be weighted by ``lambda_gate``: the entropy of each row's step shares.

    The mean over rows of the Shannon entropy ``-sum_i s_b[i] log s_b[i]`` of the row's step
    shares ``s_b[i] = g_b[i] eta_b[i] / sum_j g_b[j] eta_b[j]`` (the steps' weights in the
    aggregate importance), with no gradient through ``eta``. It is lowest when one step
    carries the row, so it closes the gates of a row's surplus steps rather than all gates.
    Scaling a row's gates (or its ``eta``) by ``c > 0`` leaves it unchanged, so a gate and its
    step's output cannot trade scale (``g * ReLU(d) = (g / c) * (c * ReLU(d))``) to pay it, as
    they could an L1 penalty on the gates. A row whose every weight is 0 counts 0. (This form is
    ours; it was chosen on the screen in benchmarks/results/syn_gates_screen.md.)

    Parameters
    ----------
    gates : torch.Tensor of shape (batch, n_steps), float
        The gates, in [0, 1].
    step_importance : torch.Tensor of shape (batch, n_steps), float
        ``eta_b[i] = sum_c ReLU(d_b,c[i])`` of the same steps, before the gates; non-negative.

    Returns
    -------
    torch.Tensor, scalar
        The regulariser, in [0, ln n_steps]; 0 when ``n_steps`` is 0.

    References
    ----------
    Arik, S. O. and Pfister, T. (2021). TabNet: Attentive Interpretable Tabular Learning.
    AAAI 35(8), section 4 (``eta_b`` and the aggregate importance).
    Shannon, C. E. (1948). A Mathematical Theory of Communication. Bell System Technical
    Journal 27, section 6 (the entropy).
    """
    if gates.shape[1] == 0:
        return gates.new_zeros(())
    weights = gates * step_importance.detach()
    shares = weights / weights.sum(dim=1, keepdim=True).clamp_min(torch.finfo(weights.dtype).tiny)
    # eps keeps the log finite at a share of 0, where the product is 0 whatever the log.
    return -(shares * torch.log(shares + torch.finfo(weights.dtype).eps)).sum(dim=1).mean()


class StepGates(nn.Module):
    """A per-row gate in [0, 1] on each decision step's contribution to the decision output.

    The gate of step ``i`` (1-based) is ``g_b[i] = sigmoid(w_i . a_b + c_i)`` with ``(w_i, c_i)``
    a linear score of the step and ``a_b`` the row's attention features ``a[i-1]``, from which
    step ``i``'s mask is computed: the gate decides before the step looks.

    Parameters
    ----------
    n_a : int
        Width of the attention features.
    n_steps : int
        Number of decision steps.
    generator : torch.Generator or None, default=None
        Source of the initial weights; None: torch's global generator.

    Attributes
    ----------
    scores : torch.nn.Linear
        ``n_a -> n_steps``: row ``i`` of its weight and its bias score step ``i`` (0-based).

    References
    ----------
    Arik, S. O. and Pfister, T. (2021). TabNet: Attentive Interpretable Tabular Learning.
    AAAI 35(8), section 4 ("Interpretability": the step weights ``eta_b``).
    """

    def __init__(self, n_a, n_steps, generator=None):
        super().__init__()
        self.n_steps = int(n_steps)
        self.scores = seeded_linear(n_a, self.n_steps, bias=True, generator=generator)
        # Mostly open at the start: the bias carries the initial gate, the weights its spread over rows.
        with torch.no_grad():
            self.scores.bias.fill_(math.log(INITIAL_GATE / (1 - INITIAL_GATE)))

    def __setstate__(self, state):
        # Networks pickled while the screened variants existed carry their choice; only the kept one loads.
        kind, first_gated = state.pop("kind", "sigmoid"), state.pop("first_gated", 0)
        for name in ("penalty", "gate_first_step"):
            state.pop(name, None)
        if kind != "sigmoid" or first_gated != 0:
            raise ValueError(
                f"This network was saved with step gates {kind!r} and gate_first_step={first_gated == 0}, a "
                "variant that was screened and removed (benchmarks/results/syn.md); this sparsetab loads "
                "step_gates='sigmoid' on every step. Refit the model."
            )
        super().__setstate__(state)

    def forward(self, step, attention):
        """The gate of one decision step for each row.

        Parameters
        ----------
        step : int
            The step, 0-based.
        attention : torch.Tensor of shape (batch, n_a), float
            The attention features the gate reads (``a[i-1]``).

        Returns
        -------
        torch.Tensor of shape (batch, 1), float
            The gates, in [0, 1].
        """
        score = nn.functional.linear(attention, self.scores.weight[step : step + 1], self.scores.bias[step : step + 1])
        return torch.sigmoid(score)
