"""TabNet's self-supervised pretraining: an encoder, a decoder, and masked-feature reconstruction.

References
----------
Arik, S. O. and Pfister, T. (2021). TabNet: Attentive Interpretable Tabular Learning.
AAAI 35(8), 6679-6687. Section 5 ("Self-supervised learning") and Fig. 2.
"""

import torch
from torch import nn

from .blocks import FeatureTransformer
from .host_copies import host_to_device
from .seeded import seeded_linear
from .tabnet import TabNet

__all__ = ["PretrainingNetwork", "reconstruction_loss"]

# Columns whose batch variance is below this are constant over the batch: they get weight 0.
_CONSTANT_VARIANCE = 1e-6


def reconstruction_loss(reconstruction, target, hidden, n_standardised=0):
    """Per-row reconstruction loss on the hidden entries, each column scaled by its variance.

    ``loss[b] = sum_j S[b, j] (r[b, j] - f[b, j])^2 / var_j / sum_j S[b, j]`` (paper, section 5:
    the reconstruction error is normalised by the population standard deviation of each
    feature, since features can have different ranges). The first ``n_standardised`` columns
    are already standardised over the training rows, so their population variance is 1; the
    others (missing indicators, embedding dimensions, which change during training) use their
    variance over the batch, and a column constant over the batch (variance below 1e-6, e.g.
    the indicator of a rarely missing column, or a single-category column) counts 0: there is
    no variation to reconstruct, and dividing by its variance would blow the loss up. A row
    with no hidden entry has loss 0.

    Parameters
    ----------
    reconstruction : torch.Tensor of shape (batch, width)
        The decoder's output ``r``.
    target : torch.Tensor of shape (batch, width)
        The embedded input ``f`` (no gradient flows into it).
    hidden : torch.Tensor of shape (batch, width), float
        ``S``: 1 for the entries hidden from the encoder, 0 elsewhere.
    n_standardised : int, default=0
        Number of leading columns with unit population variance.

    Returns
    -------
    torch.Tensor of shape (batch,)
        The loss of each row, ``>= 0``, in the dtype of ``reconstruction``; gradients flow
        into ``reconstruction`` only.
    """
    target = target.detach()
    variance = target.var(dim=0, unbiased=False)
    variance[:n_standardised] = 1.0
    weight = torch.where(variance > _CONSTANT_VARIANCE, 1.0 / variance.clamp_min(_CONSTANT_VARIANCE), 0.0)
    squared = (reconstruction - target).square() * hidden * weight
    return squared.sum(dim=1) / hidden.sum(dim=1).clamp_min(1.0)


class PretrainingNetwork(nn.Module):
    """A TabNet encoder and the paper's decoder, trained to reconstruct hidden input columns.

    For each batch a binary mask ``S ~ Bernoulli(pretraining_ratio)`` is drawn per row and
    attention group; the encoder sees ``(1 - S) * f`` (``f`` the embedded input) with the prior
    ``P[0] = 1 - S``. The decoder has, per decision step, a feature transformer and a fully
    connected layer mapping the step's ``ReLU(d_i)`` to the embedded width; their outputs are
    summed into the reconstruction of ``f``. A categorical column is reconstructed in its
    embedding space: the target is its embedding vector (without gradient, so the embeddings
    cannot shrink to make the task trivial), and the loss weighs each embedding dimension by its
    variance like a numeric column. Missing numeric values are reconstructed as their fill value.
    With a numerical embedding the encoder sees the embedded numeric columns, but the decoder
    reconstructs each numeric column's (standardised) value, not its embedding dimensions
    (:meth:`~sparsetab.network.embeddings.InputEmbedding.plain`): the paper's task is to
    predict the hidden feature values, and an embedding's dimensions can be predicted from
    one another without knowing the value.

    Parameters
    ----------
    encoder : sparsetab.network.TabNet
        The encoder; after pretraining its weights start a supervised model.
    n_shared_decoder : int, default=1
        GLU layers with shared weights in the decoder's feature transformers.
    n_independent_decoder : int, default=1
        Step-dependent GLU layers in the decoder's feature transformers.
    pretraining_ratio : float, default=0.2
        Probability that an attention group is hidden, in (0, 1).
    virtual_batch_size : int, default=128
        See :class:`~sparsetab.network.blocks.GhostBatchNorm`.
    momentum : float, default=0.02
        See :class:`~sparsetab.network.blocks.GhostBatchNorm`.
    generator : torch.Generator or None, default=None
        Source of the initial weights (:mod:`sparsetab.network.seeded`), so that a seeded fit
        does not depend on what other threads draw; None: torch's global generator.

    Raises
    ------
    ValueError
        If ``pretraining_ratio`` is not in (0, 1) or the decoder has no layer.

    References
    ----------
    Arik and Pfister (2021), section 5 and Fig. 2.
    """

    def __init__(
        self,
        encoder,
        n_shared_decoder=1,
        n_independent_decoder=1,
        pretraining_ratio=0.2,
        virtual_batch_size=128,
        momentum=0.02,
        generator=None,
    ):
        super().__init__()
        if not 0.0 < pretraining_ratio < 1.0:
            raise ValueError(f"pretraining_ratio must be in (0, 1), got {pretraining_ratio!r}.")
        if not isinstance(encoder, TabNet):
            raise TypeError(f"encoder must be a sparsetab.network.TabNet, got {type(encoder).__name__}.")
        self.encoder = encoder
        self.pretraining_ratio = float(pretraining_ratio)
        n_d, width = encoder.n_d, encoder.embedding.plain_output_dim
        self.decoder_shared_fcs = nn.ModuleList(
            seeded_linear(n_d, 2 * n_d, bias=False, generator=generator) for _ in range(n_shared_decoder)
        )
        self.decoder_transformers = nn.ModuleList(
            FeatureTransformer(
                n_d,
                n_d,
                self.decoder_shared_fcs,
                n_independent_decoder,
                virtual_batch_size,
                momentum,
                generator=generator,
            )
            for _ in range(encoder.n_steps)
        )
        self.decoder_fcs = nn.ModuleList(
            seeded_linear(n_d, width, bias=False, generator=generator) for _ in range(encoder.n_steps)
        )
        self.evaluation_seed = 0
        self.training_generator = None

    @property
    def alphas(self):
        """Alpha of each encoder step's sparse map: a list of ``n_steps`` Python floats.

        The encoder's :attr:`sparsetab.network.TabNet.alphas`.
        """
        return self.encoder.alphas

    def alpha_values(self):
        """The encoder's :meth:`sparsetab.network.TabNet.alpha_values`.

        Returns
        -------
        torch.Tensor of shape (n_steps,), float64
            The alphas without gradient, on the network's device.
        """
        return self.encoder.alpha_values()

    def draw_obfuscation(self, n_rows, generator=None):
        """Draw ``S``: 1 with probability ``pretraining_ratio`` per row and attention group.

        The mask of section 5 of Arik and Pfister (2021): ``S[b, g] ~ Bernoulli(pretraining_ratio)``,
        independently for each row ``b`` and attention group ``g``. The uniform draws are made on
        the CPU (where ``generator`` lives) and the mask is then moved to the network's device.

        Parameters
        ----------
        n_rows : int
            Number of rows of the batch to mask.
        generator : torch.Generator or None, default=None
            Source of randomness, a CPU generator (torch's global generator when None).

        Returns
        -------
        torch.Tensor of shape (n_rows, n_groups), float32
            ``S``: 1.0 where the group is hidden from the encoder, 0.0 elsewhere, on the
            device of the encoder's buffers.
        """
        n_groups = self.encoder.embedding.n_groups
        uniform = torch.rand(n_rows, n_groups, generator=generator)  # on the CPU, where the generators live
        device = self.encoder.embedding.group_matrix.device
        return host_to_device((uniform < self.pretraining_ratio).to(torch.float32), device)

    def forward(self, x, obfuscation=None):
        """Reconstruct the hidden columns of ``x``.

        Parameters
        ----------
        x : torch.Tensor of shape (batch, n_columns), float
            As for :meth:`sparsetab.network.TabNet.encode`.
        obfuscation : torch.Tensor of shape (batch, n_groups), float, default=None
            ``S``; drawn with :meth:`draw_obfuscation` when None: from the attribute
            ``training_generator`` in training mode (torch's global generator when it is
            None), from a generator seeded with ``evaluation_seed`` in evaluation mode (so a
            validation score does not change from call to call).

        Returns
        -------
        loss : torch.Tensor of shape (batch,)
            :func:`reconstruction_loss` of each row.
        masks : torch.Tensor of shape (n_steps, batch, n_groups)
            The encoder's feature masks.
        sparsity_loss : torch.Tensor, scalar
            The encoder's sparsity regulariser.
        """
        if obfuscation is None:
            generator = self.training_generator
            if not self.training:
                generator = torch.Generator().manual_seed(self.evaluation_seed)
            obfuscation = self.draw_obfuscation(x.shape[0], generator)
        step_decisions, masks, sparsity_loss = self.encoder.decision_steps(x, obfuscation)
        reconstruction = sum(
            fc(transformer(step))
            for step, transformer, fc in zip(step_decisions, self.decoder_transformers, self.decoder_fcs)
        )
        embedding = self.encoder.embedding
        target = embedding.plain(x)
        n_numeric = 0 if embedding.numeric_index is None else embedding.numeric_index.numel()
        hidden = obfuscation @ embedding.plain_group_matrix
        return reconstruction_loss(reconstruction, target, hidden, n_numeric), masks, sparsity_loss
