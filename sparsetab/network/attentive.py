"""TabNet's attentive transformer: the learnable, sparse feature mask of one decision step."""

import math

import torch
from torch import nn

from ..entmax import entmax15, entmax_bisect, sparsemax
from ..entmax._threshold_kernels import tests_in_blocks
from ..entmax.root_finding import entmax_bisect_of_valid_alpha
from .blocks import GhostBatchNorm
from .seeded import seeded_linear

__all__ = ["AttentiveTransformer", "ENTMAX_MODES"]

ENTMAX_MODES = ("sparsemax", "entmax15", "constant", "adaptive")
# Root-finding evaluations of alpha-entmax where the solver cannot stop on data: the exportable
# path (every evaluation is unrolled into the exported graph) and the training path off the CPU
# (where a convergence test would make the host wait for the device). The safeguarded Newton
# solver needed at most 10 for alpha in [1.001, 1.999] to come within 1e-6 of the converged
# float32 map over widths 2-1024 and score scales 0.01-1000
# (benchmarks/results/alpha_entmax_evaluations.md); 20 leaves a margin of two.
_FIXED_N_ITER = 20


class AttentiveTransformer(nn.Module):
    """Compute a feature mask ``M = entmax(P * GBN(a W))``.

    Parameters
    ----------
    input_dim : int
        Width of the attention features ``a`` (``n_a``).
    n_groups : int
        Number of attention groups (input columns); the mask has one value per group.
    virtual_batch_size : int
        See :class:`~sparsetab.network.blocks.GhostBatchNorm`.
    momentum : float
        See :class:`~sparsetab.network.blocks.GhostBatchNorm`.
    entmax_mode : {"sparsemax", "entmax15", "constant", "adaptive"}, default="sparsemax"
        The sparse probability map. ``"constant"`` uses alpha-entmax with the fixed
        ``entmax_alpha`` (alpha 2, 1.5 and 1 take the exact sparsemax, 1.5-entmax and softmax
        paths); ``"adaptive"`` learns alpha, parametrised as ``1 + sigmoid(theta)`` so that it
        stays in (1, 2) and is initialised at ``entmax_alpha``.
    entmax_alpha : float, default=1.5
        Alpha of the ``"constant"`` map, or the initial alpha of the ``"adaptive"`` map.
    masked_groups : list of int or None, default=None
        Groups that always get mask 0 (their scores are set to ``-inf`` before the map, which
        gives them probability 0 and no gradient): the columns constant at fit, which carry no
        information. Kept as a non-persistent buffer, so the state dict does not change.
    generator : torch.Generator or None, default=None
        Source of the initial weights (:mod:`sparsetab.network.seeded`), so that a seeded fit
        does not depend on what other threads draw; None: torch's global generator.

    Attributes
    ----------
    exportable : bool
        False by default. When True the maps run their ``training=False`` path: plain torch
        operations without ``autograd.Function`` or data-dependent Python branching, which
        ``torch.export`` and ``torch.jit.trace`` can capture (sort-based closed forms, a fixed
        number of root-finding iterations, 20); slower, same values up to rounding.

    Raises
    ------
    ValueError
        If ``entmax_mode`` is unknown, ``entmax_alpha`` is outside [1, 2], the adaptive mode
        is asked with an alpha not strictly inside (1, 2), or ``masked_groups`` holds every
        group.

    References
    ----------
    Arik and Pfister (2021), section 3 ("Feature selection"), eq. for ``M[i]``;
    Peters, Niculae and Martins (2019), "Sparse sequence-to-sequence models", ACL (entmax);
    Correia, Niculae and Martins (2019), "Adaptively sparse transformers", EMNLP (learned alpha).
    """

    def __init__(
        self,
        input_dim,
        n_groups,
        virtual_batch_size,
        momentum,
        entmax_mode="sparsemax",
        entmax_alpha=1.5,
        masked_groups=None,
        generator=None,
    ):
        super().__init__()
        if entmax_mode not in ENTMAX_MODES:
            raise ValueError(f"entmax_mode must be one of {ENTMAX_MODES}, got {entmax_mode!r}.")
        if not 1.0 <= entmax_alpha <= 2.0:
            raise ValueError(f"entmax_alpha must be in [1, 2], got {entmax_alpha!r}.")
        if entmax_mode == "adaptive" and not 1.0 < entmax_alpha < 2.0:
            raise ValueError(
                f"entmax_mode='adaptive' needs 1 < entmax_alpha < 2 (alpha = 1 + sigmoid(theta)), got {entmax_alpha!r}."
            )
        self.entmax_mode = entmax_mode
        self.entmax_alpha = float(entmax_alpha)
        self.exportable = False
        self.fc = seeded_linear(input_dim, n_groups, bias=False, generator=generator)
        self.bn = GhostBatchNorm(n_groups, virtual_batch_size, momentum)
        masked = None
        if masked_groups:
            masked = torch.zeros(n_groups, dtype=torch.bool)
            masked[list(masked_groups)] = True
            if bool(masked.all()):
                raise ValueError(
                    f"masked_groups must leave at least one of the {n_groups} groups, got {masked_groups}."
                )
        # A buffer (moved by .to(), captured by export) that the state dict leaves out: the configuration
        # rebuilds it, and state dicts saved before it existed still load.
        self.register_buffer("masked", masked, persistent=False)
        if entmax_mode == "adaptive":
            fraction = entmax_alpha - 1.0
            self.alpha_logit = nn.Parameter(torch.tensor(math.log(fraction / (1.0 - fraction))))

    def __setstate__(self, state):
        # Pickled before masked groups existed: no group is masked.
        super().__setstate__(state)
        if "masked" not in self._buffers:
            self.register_buffer("masked", None, persistent=False)

    @property
    def alpha(self):
        """Current alpha of the step's sparse map, a Python float.

        2 for ``"sparsemax"``, 1.5 for ``"entmax15"``, ``entmax_alpha`` for ``"constant"``,
        and for ``"adaptive"`` the learned ``1 + sigmoid(theta)`` (Correia, Niculae and
        Martins, 2019, section 3), read without gradient.
        """
        if self.entmax_mode == "sparsemax":
            return 2.0
        if self.entmax_mode == "entmax15":
            return 1.5
        if self.entmax_mode == "constant":
            return self.entmax_alpha
        return float(1.0 + torch.sigmoid(self.alpha_logit.detach()))

    def alpha_value(self):
        """:attr:`alpha` as a 0-d float64 tensor on the module's device, read from it without a host sync.

        Returns
        -------
        torch.Tensor, 0-d, float64
            The same value as :attr:`alpha` (a learned alpha is computed in float32, then widened).
        """
        if self.entmax_mode == "adaptive":
            return (1.0 + torch.sigmoid(self.alpha_logit.detach())).double()
        # A fill on the device: torch.tensor(value, device=...) would copy from pageable host memory, a wait on a GPU.
        return torch.full((), self.alpha, dtype=torch.float64, device=self.fc.weight.device)

    def forward(self, a, prior):
        """Compute the mask.

        Parameters
        ----------
        a : torch.Tensor of shape (batch, input_dim)
            Attention features from the previous step.
        prior : torch.Tensor of shape (batch, n_groups) or None
            Prior scale ``P[i-1]``; None stands for all ones (the first step).

        Returns
        -------
        torch.Tensor of shape (batch, n_groups)
            Non-negative rows summing to 1.
        """
        scores = self.bn(self.fc(a))
        if prior is not None:
            scores = scores * prior
        if self.masked is not None:
            scores = scores.masked_fill(self.masked, -torch.inf)
        training = not self.exportable
        n_iter = _FIXED_N_ITER if self.exportable or tests_in_blocks(scores) else 50
        if self.entmax_mode == "adaptive":
            alpha = 1.0 + torch.sigmoid(self.alpha_logit)
            if training:  # in (1, 2) by construction: no check, which would read alpha back on a GPU
                return entmax_bisect_of_valid_alpha(scores, alpha, dim=-1, n_iter=n_iter)
            return entmax_bisect(scores, alpha, dim=-1, n_iter=n_iter, training=False)
        alpha = self.alpha
        if alpha == 2.0:
            return sparsemax(scores, dim=-1, training=training)
        if alpha == 1.5:
            return entmax15(scores, dim=-1, training=training)
        if alpha == 1.0:
            return torch.softmax(scores, dim=-1)
        return entmax_bisect(scores, alpha, dim=-1, n_iter=n_iter, training=training)
