"""A fitted TabNet packaged for serving: raw inputs in, predictions and feature masks out.

The estimators feed the network one float matrix whose numeric columns are standardised and
whose categorical columns hold category codes as floats. A served model should take what a
client can build without scikit-learn or pandas, so :class:`ServingTabNet` takes the numeric
columns as they are (float64) and the category codes as int64, and does the clipping to the
training range, the numeric transform (standardisation, or the normal-output quantile map of
:mod:`~sparsetab.network.quantile`), the column interleaving and the output transform itself.
For a :class:`~sparsetab.network.TabNetEnsemble` it runs every member and returns the mean of the
members' predictions (class or label probabilities, or regression values) and of their step masks.
"""

import copy

import torch
from torch import nn

from .ensemble import TabNetEnsemble, ensemble_members
from .quantile import NormalQuantileMap

__all__ = ["ServingTabNet", "OUTPUT_TRANSFORMS"]

OUTPUT_TRANSFORMS = ("softmax", "sigmoid", "affine", "exp")


class ServingTabNet(nn.Module):
    """Wrap a fitted :class:`~sparsetab.network.TabNet` for ``torch.export``, TorchScript and ONNX.

    The wrapped network is a deep copy in evaluation mode, without gradients, whose attentive
    transformers use the exportable (``training=False``) entmax path; the original network is
    not changed.

    Parameters
    ----------
    network : sparsetab.network.TabNet or sparsetab.network.TabNetEnsemble
        The fitted network. For an ensemble, :meth:`forward` returns the mean of the members'
        predictions (after the output transform: the mean of their probabilities, as the
        estimators' soft voting) and of their step masks.
    numeric_columns : list of int
        Positions, among the input columns, of the numeric columns (in the order of the
        ``numeric`` argument of :meth:`forward`).
    categorical_columns : list of int
        Positions of the categorical columns (in the order of the ``codes`` argument).
    center, scale : array-like of shape (n_numeric,), float64
        Standardisation of the numeric columns: the network sees ``(numeric - center) / scale``
        (unused where ``quantiles`` is given).
    output_transform : {"softmax", "sigmoid", "affine", "exp"}
        ``"softmax"``: class probabilities from the logits (per block, see ``softmax_blocks``);
        ``"sigmoid"``: one independent probability per output (multilabel classification);
        ``"affine"``: regression values ``output * target_scale + target_mean``;
        ``"exp"``: regression means of a log link (``loss="poisson"`` or ``"gamma"``),
        ``exp(output) * target_scale``.
    target_mean, target_scale : array-like of shape (output_dim,), float64, default=None
        Required for ``"affine"``; ``target_scale`` alone for ``"exp"``.
    softmax_blocks : list of int, default=None
        For ``"softmax"``: widths of consecutive blocks of the outputs, each normalised by its
        own softmax (one block per output column of a multiclass-multioutput classifier).
        None: one block over all outputs.
    lower, upper : array-like of shape (n_numeric,), float64, default=None
        The training range of the numeric columns: each is clipped to ``[lower, upper]``
        before the standardisation (missing values stay NaN). None: no clipping (a model
        saved before clipping existed).
    flat : array-like of shape (n_numeric,), bool, default=None
        The numeric columns flat at fit, whose present values the network sees as 0 (missing
        values stay NaN). None: none (a model saved before the flat rule existed).
    quantiles : array-like of shape (n_quantiles, n_numeric), float64, default=None
        With ``references``: the network sees the normal-output quantile map of the (clipped)
        numeric columns (:class:`~sparsetab.network.quantile.NormalQuantileMap`) instead of
        their standardisation. The columns marked ``flat`` are not mapped; their quantiles only
        have to be non-decreasing.
    references : array-like of shape (n_quantiles,), float64, default=None
        The probabilities of the quantiles, from 0 to 1.

    Raises
    ------
    ValueError
        If ``output_transform`` is unknown, the column positions do not cover the network's
        input columns exactly once, ``"affine"`` (or ``"exp"``) is asked without the target statistics,
        ``softmax_blocks`` are not positive widths summing to the network's output size,
        only one of ``lower`` and ``upper`` (or of ``quantiles`` and ``references``) is given,
        or the quantiles are not valid for :class:`~sparsetab.network.quantile.NormalQuantileMap`.
    """

    def __init__(
        self,
        network,
        numeric_columns,
        categorical_columns,
        center,
        scale,
        output_transform,
        target_mean=None,
        target_scale=None,
        softmax_blocks=None,
        lower=None,
        upper=None,
        flat=None,
        quantiles=None,
        references=None,
    ):
        super().__init__()
        if output_transform not in OUTPUT_TRANSFORMS:
            raise ValueError(f"output_transform must be one of {OUTPUT_TRANSFORMS}, got {output_transform!r}.")
        order = list(numeric_columns) + list(categorical_columns)
        # The members of an ensemble share their input columns and head width (TabNetEnsemble checks).
        first_member = ensemble_members(network)[0]
        n_columns = first_member.embedding.explanation_matrix.shape[1]
        if sorted(order) != list(range(n_columns)):
            raise ValueError(
                f"numeric_columns and categorical_columns must cover the {n_columns} input columns exactly once; "
                f"got {list(numeric_columns)} and {list(categorical_columns)}."
            )
        if (lower is None) != (upper is None):
            raise ValueError("lower and upper (the training range of the numeric columns) must be given together.")
        if (quantiles is None) != (references is None):
            raise ValueError("quantiles and references (the fitted quantile map) must be given together.")
        if output_transform == "affine" and (target_mean is None or target_scale is None):
            raise ValueError("output_transform='affine' needs target_mean and target_scale.")
        if output_transform == "exp" and target_scale is None:
            raise ValueError("output_transform='exp' needs target_scale.")
        output_dim = first_member.head.out_features
        if softmax_blocks is None:
            softmax_blocks = [output_dim]
        elif output_transform != "softmax":
            raise ValueError(f"softmax_blocks applies to output_transform='softmax' only, got {output_transform!r}.")
        if any(int(width) < 1 for width in softmax_blocks) or sum(int(width) for width in softmax_blocks) != output_dim:
            raise ValueError(
                f"softmax_blocks must be positive widths summing to the network's {output_dim} outputs; "
                f"got {list(softmax_blocks)}."
            )
        # A tuple of Python ints: torch.export and the tracer see fixed slice widths.
        self.softmax_blocks = tuple(int(width) for width in softmax_blocks)
        self.network = copy.deepcopy(network).cpu().eval().requires_grad_(False)
        for member in ensemble_members(self.network):
            for attentive in member.attentive_transformers:
                attentive.exportable = True
        self.output_transform = output_transform
        float64 = dict(dtype=torch.float64)
        # inverse permutation: input column j is column `position[j]` of cat([numeric, codes])
        position = torch.empty(n_columns, dtype=torch.long)
        position[torch.tensor(order, dtype=torch.long)] = torch.arange(n_columns)
        self.register_buffer("position", position)
        # Zero-size buffers cannot be saved by torch.export: none when every column is categorical.
        has_numeric = len(numeric_columns) > 0
        self.register_buffer("center", torch.as_tensor(center, **float64).reshape(-1) if has_numeric else None)
        self.register_buffer("scale", torch.as_tensor(scale, **float64).reshape(-1) if has_numeric else None)
        clipped = has_numeric and lower is not None
        self.register_buffer("lower", torch.as_tensor(lower, **float64).reshape(-1) if clipped else None)
        self.register_buffer("upper", torch.as_tensor(upper, **float64).reshape(-1) if clipped else None)
        # Codes run from 0 to the column's categories; any other (pandas' -1 for a missing value, a code from
        # another encoding) is read as 0, missing or unseen. ONNX's Gather would read -1 as the last category.
        # The embeddings are in input column order; the codes argument in the order of categorical_columns.
        embedding = first_member.embedding
        rows = {j: table.num_embeddings for j, table in zip(embedding.categorical_columns, embedding.embeddings)}
        limits = [rows[j] for j in categorical_columns]
        self.register_buffer("code_limits", torch.tensor(limits, dtype=torch.int64) if limits else None)
        flat = None if flat is None or not has_numeric else torch.as_tensor(flat, dtype=torch.bool).reshape(-1)
        self.register_buffer("flat", flat if flat is not None and bool(flat.any()) else None)
        self.quantile_map = NormalQuantileMap(quantiles, references) if quantiles is not None and has_numeric else None
        if output_transform == "affine":
            self.register_buffer("target_mean", torch.as_tensor(target_mean, **float64).reshape(-1))
            self.register_buffer("target_scale", torch.as_tensor(target_scale, **float64).reshape(-1))
        elif output_transform == "exp":
            self.register_buffer("target_scale", torch.as_tensor(target_scale, **float64).reshape(-1))

    def forward(self, numeric, codes):
        """Predict and explain a batch.

        Parameters
        ----------
        numeric : torch.Tensor of shape (batch, n_numeric), float64
            The numeric columns, unscaled and unclipped, in training column order.
        codes : torch.Tensor of shape (batch, n_categorical), int64
            Category codes: 0 for missing or unseen, ``c + 1`` for the ``c``-th category seen
            at fit. Any other code (negative, as pandas' ``-1`` for a missing value, or beyond the
            column's categories) is read as 0.

        Returns
        -------
        prediction : torch.Tensor of shape (batch, output_dim), float64
            Class probabilities (``"softmax"``, each block summing to 1), label probabilities
            (``"sigmoid"``) or regression values (``"affine"``, ``"exp"``); for an ensemble, the
            members' mean.
        step_masks : torch.Tensor of shape (batch, n_steps, n_columns), float32
            The feature mask of each decision step per input column (as ``explain``; for an
            ensemble, the members' mean).
        step_gates : torch.Tensor of shape (batch, n_steps), float32
            Only for a network with step gates (a third output): the gate of each decision
            step (as ``explain``; for an ensemble, the members' mean).
        """
        if self.lower is not None:  # torch.clamp keeps NaN: missing values stay missing
            numeric = torch.clamp(numeric, min=self.lower, max=self.upper)
        if self.quantile_map is not None:
            values = self.quantile_map(numeric)
        else:
            values = numeric if self.center is None else (numeric - self.center) / self.scale
        if self.flat is not None:
            values = torch.where(self.flat & ~torch.isnan(values), 0.0, values)
        if self.code_limits is not None:
            codes = torch.where((codes < 0) | (codes >= self.code_limits), 0, codes)
        x = torch.cat([values.to(torch.float32), codes.to(torch.float32)], dim=1).index_select(1, self.position)
        if not isinstance(self.network, TabNetEnsemble):
            return self._predict(self.network, x)
        results = [self._predict(member, x) for member in self.network.members]
        # The masks (and gates) are averaged in float64, as the estimators' explain does, then returned as float32.
        means = tuple(
            torch.stack(arrays).to(torch.float64).mean(dim=0).to(torch.float32) for arrays in list(zip(*results))[1:]
        )
        return (torch.stack([result[0] for result in results]).mean(dim=0), *means)

    def _predict(self, network, x):
        """The prediction and step masks (and step gates, with them) of one TabNet for the encoded rows ``x``."""
        encoded = network.encode_steps(x)
        decision, masks = encoded.decision, encoded.masks
        output = network.head(decision).to(torch.float64)
        if self.output_transform == "softmax":
            blocks = output.split(self.softmax_blocks, dim=1)
            prediction = torch.cat([torch.softmax(block, dim=1) for block in blocks], dim=1)
        elif self.output_transform == "sigmoid":
            prediction = torch.sigmoid(output)
        elif self.output_transform == "exp":
            prediction = torch.exp(output) * self.target_scale
        else:
            prediction = output * self.target_scale + self.target_mean
        step_masks = (masks @ network.embedding.explanation_matrix).permute(1, 0, 2)
        results = (prediction, step_masks) + (() if encoded.step_gates is None else (encoded.step_gates,))
        if network.n_efficient_members == 1:
            return results
        # The efficient members' mean, the masks and gates averaged in float64 as explain does.
        prediction, *explanations = (network.split_members(result.to(torch.float64)).mean(dim=0) for result in results)
        return (prediction, *(explanation.to(torch.float32) for explanation in explanations))
