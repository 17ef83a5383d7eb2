"""The TabNet encoder with its output head."""

from typing import NamedTuple

import torch
from torch import nn

from .attentive import AttentiveTransformer
from .blocks import FeatureTransformer, GhostBatchNorm
from .efficient_members import MemberHeads, member_sign_adapters
from .embeddings import InputEmbedding
from .seeded import seeded_linear
from .step_gates import STEP_GATES, StepGates, gate_penalty

__all__ = ["EncodedSteps", "TabNet"]


class EncodedSteps(NamedTuple):
    """What :meth:`TabNet.encode_steps` returns.

    Parameters
    ----------
    decision : torch.Tensor of shape (batch, n_d)
        The decision output ``sum_i g[i] * ReLU(d_i)`` (``g[i] = 1`` without step gates).
    masks : torch.Tensor of shape (n_steps, batch, n_groups)
        Feature mask of each step, one value per attention group; rows sum to 1.
    step_importance : torch.Tensor of shape (batch, n_steps)
        ``g_b[i] * eta_b[i]``, with ``eta_b[i] = sum_c ReLU(d_b,c[i])``: each step's weight in
        the aggregate importance.
    step_gates : torch.Tensor of shape (batch, n_steps) or None
        The gates ``g_b[i]`` in [0, 1] (1 for a step without a gate); None without step gates.
    sparsity_loss : torch.Tensor, scalar
        Mean entropy of the masks over steps and rows.
    gate_loss : torch.Tensor, scalar, or None
        The gate regulariser (:func:`~sparsetab.network.step_gates.gate_penalty`), to be
        weighted by ``lambda_gate``; None without step gates.
    """

    decision: torch.Tensor
    masks: torch.Tensor
    step_importance: torch.Tensor
    step_gates: torch.Tensor | None
    sparsity_loss: torch.Tensor
    gate_loss: torch.Tensor | None


class TabNet(nn.Module):
    """TabNet: sequential attention over input columns, with a linear output head.

    The forward pass follows Arik and Pfister (2021), section 3 and Fig. 4:

    1. categorical columns (and, with ``numerical_embedding``, numeric columns) are embedded and
       the embedded input ``f`` goes through a plain batch norm;
    2. an initial feature transformer splits ``f`` into ``[d_0, a_0]``;
    3. at decision step ``i = 1..n_steps`` the attentive transformer computes the mask
       ``M[i] = entmax(P[i-1] * h_i(a[i-1]))`` over input columns, the feature transformer of
       step ``i`` maps ``M[i] * f`` to ``[d_i, a_i]``, and the prior is updated as
       ``P[i] = (gamma - M[i]) * P[i-1]`` with ``P[0] = 1``;
    4. the decision output is ``sum_i ReLU(d_i)``, followed by a linear layer with bias.

    With ``step_gates``, step ``i``'s contribution is ``g[i] * ReLU(d_i)`` with a per-row gate
    ``g[i]`` in [0, 1] (:class:`~sparsetab.network.step_gates.StepGates`), and the forward pass
    also returns the gate regulariser.

    Parameters
    ----------
    cardinalities : list of int or None, length n_columns
        See :class:`~sparsetab.network.embeddings.InputEmbedding`.
    embedding_dims : list of int, length n_columns
        See :class:`~sparsetab.network.embeddings.InputEmbedding`.
    output_dim : int
        Number of outputs of the head (classes, or regression targets).
    n_d : int, default=8
        Width of the decision features.
    n_a : int, default=8
        Width of the attention features.
    n_steps : int, default=3
        Number of decision steps.
    gamma : float, default=1.3
        Relaxation of the prior: 1 forces each column to be used at one step at most.
    n_independent : int, default=2
        Number of step-dependent GLU layers in each feature transformer.
    n_shared : int, default=2
        Number of GLU layers whose fully connected weights are shared by all steps.
    virtual_batch_size : int, default=128
        See :class:`~sparsetab.network.blocks.GhostBatchNorm`.
    momentum : float, default=0.02
        Momentum of all batch norms (PyTorch convention).
    entmax_mode : str, default="sparsemax"
        See :class:`~sparsetab.network.attentive.AttentiveTransformer`.
    entmax_alpha : float, default=1.5
        See :class:`~sparsetab.network.attentive.AttentiveTransformer`.
    epsilon : float, default=1e-15
        Added inside the logarithm of the sparsity regulariser.
    attention_groups : list of list of int or None, default=None
        Columns sharing one attention weight; see
        :class:`~sparsetab.network.embeddings.InputEmbedding`. ``None``: one group per column.
    missing_indicators : list of int or None, default=None
        Numeric columns that get a missing indicator; see
        :class:`~sparsetab.network.embeddings.InputEmbedding`.
    numerical_embedding : {"piecewise_linear", "periodic"} or None, default=None
        How numeric columns are embedded; see
        :class:`~sparsetab.network.embeddings.InputEmbedding`.
    n_bins : int, default=32
        See :class:`~sparsetab.network.embeddings.InputEmbedding` (the number of frequencies of
        ``"periodic"``; the bins of ``"piecewise_linear"`` are given by ``bin_counts``).
    embedding_dim : int, default=8
        Width of each numeric column's ``"periodic"`` embedding.
    frequency_scale : float, default=0.1
        ``sigma`` of the ``"periodic"`` frequencies' initialisation ``N(0, sigma^2)``.
    bin_counts : list of int or None, default=None
        Bins of each column for ``"piecewise_linear"``; see
        :class:`~sparsetab.network.embeddings.InputEmbedding`.
    piecewise_linear_with_value : bool, default=False
        Whether each ``"piecewise_linear"`` column keeps its value beside its bins; see
        :class:`~sparsetab.network.embeddings.InputEmbedding`.
    constant_groups : list of int or None, default=None
        Attention groups whose columns were constant at fit: their embedded columns are set to
        0 before the input batch norm, and every step's mask gives them 0 (see
        :class:`~sparsetab.network.attentive.AttentiveTransformer`), so their values have no
        effect and their importance is 0. Not all the groups.
    step_gates : {"sigmoid"} or None, default=None
        The gate function of each step's per-row gate (see
        :class:`~sparsetab.network.step_gates.StepGates`), whose regulariser
        (:func:`~sparsetab.network.step_gates.gate_penalty`) the forward pass returns; None: no
        gates, every step counts fully (the paper's TabNet).
    n_efficient_members : int, default=1
        Members of a parameter-efficient ensemble inside the network
        (:mod:`~sparsetab.network.efficient_members`, after TabM-mini, Gorishniy et al., ICLR
        2025): ``k > 1`` members share every weight but a multiplicative adapter ``r_m`` on the
        batch-normalised input (``f_m = f * r_m``, random signs at first) and their heads. Every
        row is then run ``k`` times, member-major: the outputs, masks, step importances and gates
        have ``k * batch`` rows (rows ``m * batch`` to ``(m + 1) * batch - 1`` are member ``m``'s;
        :meth:`split_members` reshapes them). 1: the paper's single network.
    generator : torch.Generator or None, default=None
        Source of the initial weights (:mod:`sparsetab.network.seeded`), so that a seeded fit
        does not depend on what other threads draw; None: torch's global generator.

    Raises
    ------
    ValueError
        If ``constant_groups`` holds every group, ``step_gates`` is not one of the accepted
        values, ``n_efficient_members`` is below 1 (or from the submodules' checks).

    References
    ----------
    Arik, S. O. and Pfister, T. (2021). TabNet: Attentive Interpretable Tabular Learning.
    AAAI 35(8), 6679-6687.

    Gorishniy, Y., Rubachev, I. and Babenko, A. (2022). On Embeddings for Numerical Features in
    Tabular Deep Learning. NeurIPS 35 (the numerical embeddings).

    Gorishniy, Y., Kotelnikov, A. and Babenko, A. (2025). TabM: Advancing Tabular Deep Learning
    with Parameter-Efficient Ensembling. ICLR 2025 (the efficient members).
    """

    def __init__(
        self,
        cardinalities,
        embedding_dims,
        output_dim,
        n_d=8,
        n_a=8,
        n_steps=3,
        gamma=1.3,
        n_independent=2,
        n_shared=2,
        virtual_batch_size=128,
        momentum=0.02,
        entmax_mode="sparsemax",
        entmax_alpha=1.5,
        epsilon=1e-15,
        attention_groups=None,
        missing_indicators=None,
        numerical_embedding=None,
        n_bins=32,
        embedding_dim=8,
        frequency_scale=0.1,
        bin_counts=None,
        piecewise_linear_with_value=False,
        constant_groups=None,
        step_gates=None,
        n_efficient_members=1,
        generator=None,
    ):
        super().__init__()
        if step_gates is not None and step_gates not in STEP_GATES:
            raise ValueError(f"step_gates must be one of {STEP_GATES} or None, got {step_gates!r}.")
        if int(n_efficient_members) < 1:
            raise ValueError(f"n_efficient_members must be an integer >= 1, got {n_efficient_members!r}.")
        self.n_efficient_members = int(n_efficient_members)
        self.n_d = n_d
        self.n_steps = n_steps
        self.gamma = gamma
        self.epsilon = epsilon
        self.embedding = InputEmbedding(
            cardinalities,
            embedding_dims,
            attention_groups,
            missing_indicators,
            numerical_embedding=numerical_embedding,
            bin_counts=bin_counts,
            n_bins=n_bins,
            embedding_dim=embedding_dim,
            frequency_scale=frequency_scale,
            piecewise_linear_with_value=piecewise_linear_with_value,
            generator=generator,
        )
        width = self.embedding.output_dim
        n_groups = self.embedding.n_groups
        self.input_bn = GhostBatchNorm(width, virtual_batch_size=None, momentum=momentum)
        hidden = n_d + n_a
        self.shared_fcs = nn.ModuleList(
            seeded_linear(width if index == 0 else hidden, 2 * hidden, bias=False, generator=generator)
            for index in range(n_shared)
        )

        def feature_transformer():
            return FeatureTransformer(
                width, hidden, self.shared_fcs, n_independent, virtual_batch_size, momentum, generator=generator
            )

        self.initial_transformer = feature_transformer()
        self.step_transformers = nn.ModuleList(feature_transformer() for _ in range(n_steps))
        self.attentive_transformers = nn.ModuleList(
            AttentiveTransformer(
                n_a,
                n_groups,
                virtual_batch_size,
                momentum,
                entmax_mode,
                entmax_alpha,
                masked_groups=constant_groups,
                generator=generator,
            )
            for _ in range(n_steps)
        )
        self.head = seeded_linear(n_d, output_dim, bias=True, generator=generator)
        # Built after every other module, so that the other initial weights are those of the ungated network.
        self.gates = None
        if step_gates is not None:
            self.gates = StepGates(n_a, n_steps, generator=generator)
        # Last too, so that the shared weights are drawn as for a single network. The single head is replaced.
        self.member_adapters = None
        if self.n_efficient_members > 1:
            self.member_adapters = nn.Parameter(
                member_sign_adapters(self.n_efficient_members, self.embedding.group_matrix, generator=generator)
            )
            self.head = MemberHeads(n_d, output_dim, self.n_efficient_members, generator=generator)
        # The embedded columns of the constant groups are zeroed before the input batch norm, so that their
        # values reach no step (the initial transformer sees every column). At fit they only held a constant.
        constant_columns = None
        if constant_groups:
            constant_columns = self.embedding.group_matrix[list(constant_groups)].sum(dim=0) > 0
        self.register_buffer("constant_columns", constant_columns, persistent=False)
        # One embedded column per group, in order: ``mask @ group_matrix`` is then ``mask`` itself, and
        # skipping that product saves two matrix products per step in a training step (forward and backward).
        group_matrix = self.embedding.group_matrix
        self._groups_are_columns = group_matrix.shape[0] == group_matrix.shape[1] and bool(
            torch.equal(group_matrix, torch.eye(group_matrix.shape[0], dtype=group_matrix.dtype))
        )

    def __setstate__(self, state):
        # Pickled before constant groups existed: no column is constant.
        super().__setstate__(state)
        if "constant_columns" not in self._buffers:
            self.register_buffer("constant_columns", None, persistent=False)
        # Pickled before step gates existed: none.
        if "gates" not in self._modules and "gates" not in self.__dict__:
            self.gates = None
        # Pickled before efficient members existed: one.
        if "n_efficient_members" not in self.__dict__:
            self.n_efficient_members = 1
            self.member_adapters = None

    def split_members(self, rows):
        """Reshape member-major rows to one slice per efficient member.

        Parameters
        ----------
        rows : torch.Tensor of shape (n_efficient_members * batch, ...)
            An output of this network with one row per member and input row (outputs, decision
            outputs, step importances, step gates).

        Returns
        -------
        torch.Tensor of shape (n_efficient_members, batch, ...)
            A view: ``[m]`` holds member ``m``'s rows (for one member, ``rows[None]``).
        """
        return rows.reshape(self.n_efficient_members, -1, *rows.shape[1:])

    @property
    def alphas(self):
        """Alpha of each decision step's sparse map: a list of ``n_steps`` Python floats.

        The :attr:`~sparsetab.network.attentive.AttentiveTransformer.alpha` of each attentive
        transformer, in step order (the learned values in ``"adaptive"`` mode).
        """
        return [attentive.alpha for attentive in self.attentive_transformers]

    def alpha_values(self):
        """:attr:`alphas` as a tensor on the network's device, so that it can be read with other values.

        Returns
        -------
        torch.Tensor of shape (n_steps,), float64
            The alphas without gradient; ``alpha_values().tolist() == alphas`` (a learned alpha
            is computed in float32 as :attr:`alphas` computes it, then widened exactly).
        """
        return torch.stack([attentive.alpha_value() for attentive in self.attentive_transformers])

    def encode(self, x, obfuscation=None):
        """Run the decision steps.

        Parameters
        ----------
        x : torch.Tensor of shape (batch, n_columns), float
            See :class:`~sparsetab.network.embeddings.InputEmbedding` (NaN marks a missing
            numeric value).
        obfuscation : torch.Tensor of shape (batch, n_groups), float, default=None
            Self-supervised pretraining only: 1 where an attention group is hidden from the
            encoder. Its embedded columns are zeroed and the prior starts at
            ``P[0] = 1 - obfuscation`` (paper, section 5 "Self-supervised learning").

        Returns
        -------
        decision : torch.Tensor of shape (batch, n_d)
            ``sum_i ReLU(d_i)`` (``sum_i g[i] * ReLU(d_i)`` with step gates).
        masks : torch.Tensor of shape (n_steps, batch, n_groups)
            Feature mask of each step, one value per attention group (per input column
            unless columns are grouped); rows sum to 1.
        step_importance : torch.Tensor of shape (batch, n_steps)
            ``eta_b[i] = sum_c ReLU(d_b,c[i])`` (paper, section 4 "Interpretability"), times
            the step's gate ``g_b[i]`` with step gates.
        sparsity_loss : torch.Tensor, scalar
            Mean entropy of the masks over steps and rows (paper, section 3, ``L_sparse``).
        """
        encoded = self.encode_steps(x, obfuscation)
        return encoded.decision, encoded.masks, encoded.step_importance, encoded.sparsity_loss

    def encode_steps(self, x, obfuscation=None):
        """Run the decision steps and return everything they give, the step gates included.

        Parameters
        ----------
        x : torch.Tensor of shape (batch, n_columns), float
            As for :meth:`encode`.
        obfuscation : torch.Tensor of shape (batch, n_groups), float, default=None
            As for :meth:`encode`.

        Returns
        -------
        EncodedSteps
            The decision output, masks, step importance, step gates (None without them),
            sparsity loss and gate regulariser (None without step gates).
        """
        step_decisions, masks, gates, sparsity_loss = self._run_steps(x, obfuscation)
        step_importance = torch.stack([step.sum(dim=1) for step in step_decisions], dim=1)
        if gates is None:
            decision = torch.stack(step_decisions).sum(dim=0)
            return EncodedSteps(decision, masks, step_importance, None, sparsity_loss, None)
        decision = torch.stack(self._gate(step_decisions, gates)).sum(dim=0)
        step_gates = torch.cat(gates, dim=1)
        return EncodedSteps(
            decision,
            masks,
            step_importance * step_gates,
            step_gates,
            sparsity_loss,
            gate_penalty(step_gates, step_importance),
        )

    def decision_steps(self, x, obfuscation=None):
        """The per-step decision outputs ``ReLU(d_i)`` (``g[i] * ReLU(d_i)`` with step gates), before they are summed.

        Steps 1 to 4 of the class description (Arik and Pfister, 2021, section 3 and Fig. 4):
        embedding and input batch norm, the initial split, then per step the mask
        ``M[i] = entmax(P[i-1] * h_i(a[i-1]))``, the feature transformer on ``M[i] * f`` and the
        prior update ``P[i] = (gamma - M[i]) * P[i-1]``.

        Parameters
        ----------
        x : torch.Tensor of shape (batch, n_columns), float32
            The encoded input, as for :meth:`encode` (NaN marks a missing numeric value).
        obfuscation : torch.Tensor of shape (batch, n_groups), float, default=None
            See :meth:`encode`.

        Returns
        -------
        step_decisions : list of torch.Tensor of shape (batch, n_d), length n_steps
            ``ReLU(d_i)`` of each decision step, non-negative; with step gates, times the
            step's gate ``g[i]`` of shape (batch, 1).
        masks : torch.Tensor of shape (n_steps, batch, n_groups)
            Feature mask ``M[i]`` of each step, one value per attention group; rows sum to 1.
        sparsity_loss : torch.Tensor, scalar
            Mean entropy of the masks over steps and rows, ``L_sparse`` of section 3
            (``epsilon`` inside the logarithm).

        Raises
        ------
        RuntimeError
            From torch, when ``x`` is not of shape (batch, n_columns) or ``obfuscation`` not of
            shape (batch, n_groups). Shapes are not checked beforehand: a 1-D or 3-D ``x`` can
            give an IndexError or a ValueError instead.
        """
        step_decisions, masks, gates, sparsity_loss = self._run_steps(x, obfuscation)
        if gates is not None:
            step_decisions = self._gate(step_decisions, gates)
        return step_decisions, masks, sparsity_loss

    def _normalised_input(self, x, obfuscation):
        # The embedded, obfuscated and batch-normalised rows (before the members' adapters) and the prior scale
        # P[0]: None stands for P[0] = 1 (no obfuscation), sparing two multiplications by ones.
        embedded = self.embedding(x)
        if self.constant_columns is not None:
            embedded = embedded.masked_fill(self.constant_columns, 0.0)
        prior = None
        if obfuscation is not None:
            prior = 1.0 - obfuscation
            embedded = embedded * self._spread_over_columns(prior)
        return self.input_bn(embedded), prior

    def _run_steps(self, x, obfuscation):
        # The ungated step outputs ReLU(d_i), the masks, each step's gate of shape (batch, 1) (None for a step
        # without one; the whole list None without step gates) and the sparsity loss.
        features, prior = self._normalised_input(x, obfuscation)
        if self.member_adapters is not None:
            # Every row once per member, member-major, each member's copy scaled by its adapter.
            features = (features.unsqueeze(0) * self.member_adapters.unsqueeze(1)).flatten(0, 1)
            if prior is not None:
                prior = prior.repeat(self.n_efficient_members, 1)
        attention = self.initial_transformer(features)[:, self.n_d :]
        gates = None if self.gates is None else []
        masks, step_decisions = [], []
        for step in range(self.n_steps):
            mask = self.attentive_transformers[step](attention, prior)
            if step + 1 < self.n_steps:  # the last step's update would be unused
                prior = self.gamma - mask if prior is None else (self.gamma - mask) * prior
            out = self.step_transformers[step](features * self._spread_over_columns(mask))
            step_decisions.append(torch.relu(out[:, : self.n_d]))
            previous_attention, attention = attention, out[:, self.n_d :]
            if gates is not None:
                gates.append(self.gates(step, previous_attention))
            masks.append(mask)
        masks = torch.stack(masks)
        # Mean over steps and rows of each row's entropy: one pass over all the masks at once. A product with
        # the log, not torch.xlogy: the same values (masks are non-negative and epsilon keeps the log finite),
        # and xlogy's forward and backward kernels took about 4% of a training step, three times as long.
        entropy = (masks * torch.log(masks + self.epsilon)).sum() / -(masks.shape[0] * masks.shape[1])
        return step_decisions, masks, gates, entropy

    @staticmethod
    def _gate(step_decisions, gates):
        return [gate * step for step, gate in zip(step_decisions, gates)]

    def _spread_over_columns(self, group_values):
        # (batch, n_groups) -> (batch, embedded width): each group's value on each of its embedded columns.
        if self._groups_are_columns:
            return group_values
        return group_values @ self.embedding.group_matrix

    def forward(self, x):
        """Predict raw outputs.

        The head, a linear layer with bias, applied to the decision output ``sum_i ReLU(d_i)``
        (Arik and Pfister, 2021, section 3 and Fig. 4), without obfuscation.

        Parameters
        ----------
        x : torch.Tensor of shape (batch, n_columns), float32
            The encoded input, as for :meth:`encode` (NaN marks a missing numeric value).

        Returns
        -------
        output : torch.Tensor of shape (batch, output_dim)
            Logits (classification) or standardised values (regression).
        masks : torch.Tensor of shape (n_steps, batch, n_groups)
            Feature mask of each decision step, one value per attention group.
        sparsity_loss : torch.Tensor, scalar
            The sparsity regulariser, to be weighted by ``lambda_sparse``.
        gate_loss : torch.Tensor, scalar
            Only with step gates (a fourth element): the gate regulariser of
            :class:`EncodedSteps`, to be weighted by ``lambda_gate``.

        Raises
        ------
        RuntimeError
            From torch, when ``x`` is not of shape (batch, n_columns). The shape is not checked
            beforehand: a 1-D or 3-D ``x`` can give an IndexError or a ValueError instead.
        """
        step_decisions, masks, gates, sparsity_loss = self._run_steps(x, None)
        if gates is None:
            return self.head(torch.stack(step_decisions).sum(dim=0)), masks, sparsity_loss
        output = self.head(torch.stack(self._gate(step_decisions, gates)).sum(dim=0))
        step_importance = torch.stack([step.sum(dim=1) for step in step_decisions], dim=1)
        return output, masks, sparsity_loss, gate_penalty(torch.cat(gates, dim=1), step_importance)
