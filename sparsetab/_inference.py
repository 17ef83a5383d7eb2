"""Inference on a fitted estimator: batched forward passes, explain(), transform_inputs(), files.

Every batched forward pass of the package (predict, explain, validation losses, the pretrainer's
embedding and reconstruction loss, the training importances) goes through :func:`forward_in_batches`.
"""

import numpy as np
import torch
from sklearn.utils import Bunch
from sklearn.utils.validation import check_is_fitted

from ._persistence.export import EXPORT_FORMATS, export_network
from ._persistence.model_file import save_estimator
from ._runtime import torch_threads
from ._tabular.encoding import feature_names
from ._tabular.feature_groups import resolve_feature_groups, sum_feature_groups
from ._warnings import warn
from .network import ensemble_members

__all__ = ["INFERENCE_BATCH_ROWS", "InferenceMixin", "check_finite", "encoded_batches", "forward_in_batches"]

# Rows per forward pass at predict / explain time: bounds memory on large inputs.
INFERENCE_BATCH_ROWS = 16384
# Rows used to compute feature_importances_ at the end of fit.
_IMPORTANCE_MAX_ROWS = 10000
_IMPORTANCE_BATCH_ROWS = 2048


def encoded_batches(tabular_encoding, frame, device):
    """Encode ``frame`` slice by slice, so memory stays bounded whatever its length.

    A frame longer than one slice is first checked column by column
    (:meth:`TabularEncoding.check`), so that an error counts the refused values of all rows, not
    only those of the failing slice; a single slice is checked by its own encoding.

    Parameters
    ----------
    tabular_encoding : TabularEncoding
        The fitted tabular encoding.
    frame : pandas.DataFrame of shape (n_samples, n_features)
        Validated rows.
    device : torch.device
        Where the batches go.

    Yields
    ------
    torch.Tensor of shape (at most INFERENCE_BATCH_ROWS, n_features), float32
        The encoded rows, in order.

    Raises
    ------
    ValueError
        If a numeric column holds strings or infinities.

    Warns
    -----
    UserWarning
        Once, after the last slice, if some rows have numeric values far outside the training range
        (:meth:`TabularEncoding.transform_with_range_report`), with their count and the columns.
    """
    if frame.shape[0] > INFERENCE_BATCH_ROWS:
        tabular_encoding.check(frame)
    n_outside, outside_columns = 0, np.zeros(frame.shape[1], dtype=bool)
    for start in range(0, frame.shape[0], INFERENCE_BATCH_ROWS):
        rows = frame.iloc[start : start + INFERENCE_BATCH_ROWS]
        encoded, outside_rows, outside = tabular_encoding.transform_with_range_report(rows)
        n_outside += int(outside_rows.sum())
        outside_columns |= outside
        yield torch.from_numpy(encoded).to(device)
    if n_outside:
        warn(
            far_outside_clause(n_outside, frame, outside_columns, "seen at fit")
            + ". They are clipped to the training range, so the outputs for these rows are extrapolations from "
            "the edge of the training data.",
            UserWarning,
        )


def far_outside_clause(n_outside, frame, outside_columns, range_of):
    """The words shared by the warnings of rows far outside the training range.

    Parameters
    ----------
    n_outside : int
        How many rows have at least one value far outside.
    frame : pandas.DataFrame of shape (n_samples, n_features)
        The rows checked (its row count and column names are quoted).
    outside_columns : numpy.ndarray of shape (n_features,), bool
        The columns with at least one such value.
    range_of : str
        Whose range, e.g. ``"seen at fit"``.

    Returns
    -------
    str
        ``"<n> of <rows> rows have values far outside the range <range_of> (beyond [min - range,
        max + range]) in column(s) <names>"``.
    """
    names = ", ".join(repr(str(name)) for name in frame.columns[outside_columns])
    return (
        f"{n_outside} of {frame.shape[0]} rows have values far outside the range {range_of} (beyond [min - "
        f"range, max + range]) in column(s) {names}"
    )


def forward_in_batches(network, batches, forward):
    """Run ``forward`` on each batch with ``network`` in evaluation mode, without autograd.

    Parameters
    ----------
    network : torch.nn.Module
        Put in evaluation mode first (batch norm uses its running statistics).
    batches : iterable of torch.Tensor
        The inputs, e.g. :func:`encoded_batches` or ``tensor.split(INFERENCE_BATCH_ROWS)``.
    forward : callable
        ``forward(batch)`` -> the outputs of one batch.

    Yields
    ------
    offset : int
        Position of the batch's first row among all rows.
    outputs : object
        ``forward(batch)``.
    """
    network.eval()
    offset = 0
    with torch.inference_mode():
        for batch in batches:
            yield offset, forward(batch)
            offset += batch.shape[0]


def check_finite(offset, *outputs):
    """Raise when a row's network outputs are NaN or infinite.

    Parameters
    ----------
    offset : int
        The batch's first row in the whole input, for the message.
    *outputs : tuple of (torch.Tensor, int)
        ``(tensor, row_dim)`` pairs of one batch, ``row_dim`` the tensor's dimension of rows.

    Raises
    ------
    ValueError
        Naming the number of rows whose outputs are not finite and the first of them.
    """
    # One reduction over all values first: per-row reductions over rows of a few values are several times
    # slower, and are needed only to name the rows once something is not finite.
    if all(bool(torch.isfinite(tensor).all()) for tensor, _ in outputs):
        return
    finite_rows = torch.stack(
        [torch.isfinite(tensor).movedim(row_dim, 0).flatten(1).all(dim=1) for tensor, row_dim in outputs]
    ).all(dim=0)
    bad = torch.nonzero(~finite_rows).flatten()
    raise ValueError(
        f"The network's outputs are not finite (NaN or infinity) for {bad.numel()} row(s) of a batch, first at "
        f"row {offset + int(bad[0])}; no prediction is returned. Values far outside the training range overflow "
        "float32: check those rows' inputs."
    )


class InferenceMixin:
    """Predict-time methods of the supervised estimators: ``explain``, ``transform_inputs``, ``save_model``, ``export``.

    Forward passes run in batches of :data:`INFERENCE_BATCH_ROWS` rows under
    ``torch.inference_mode``. The estimator provides ``network_``, ``_tabular_encoding``,
    ``_device``, ``_network_config``, ``_validate_X`` and ``_target_kind``.
    """

    def _encoded_batches(self, frame):
        return encoded_batches(self._tabular_encoding, frame, self._device)

    def _raw_output(self, X):
        """Network outputs for ``X``, shape (n_samples, output_dim), numpy.

        float32 for one network; for an ensemble, float64, the members' outputs combined by the
        target kind's ``combine_members`` (read by ``predict`` and ``predict_proba`` as one
        network's outputs).

        Raises
        ------
        ValueError
            If a member's decision output, masks or head output are not finite for some row:
            a model never returns NaN predictions silently.
        """
        check_is_fitted(self)
        scoring_rows = vars(self).get("_scoring_rows")
        if scoring_rows is not None and X is scoring_rows[0]:
            # A scorer during fit: the validation rows were validated and encoded once for the fit.
            frame, batches = scoring_rows[1], iter(scoring_rows[2])
        else:
            frame = self._validate_X(X, reset=False)
            batches = self._encoded_batches(frame)
        members = ensemble_members(self.network_)
        # Each network's efficient members are members of the ensemble in their own right.
        n_outputs = sum(member.n_efficient_members for member in members)
        out = np.empty((n_outputs, frame.shape[0], self._network_config["output_dim"]), dtype=np.float32)

        def decide(batch):
            # Every member on each encoded batch: the rows are encoded once, whatever the number of members.
            results = []
            for member in members:
                decision, masks, _, _ = member.encode(batch)
                split = member.split_members
                results.append((split(decision), split(masks.transpose(0, 1)), split(member.head(decision))))
            return results

        with torch_threads(self.n_jobs):
            for offset, results in forward_in_batches(self.network_, batches, decide):
                index = 0
                for decision, masks, output in results:
                    check_finite(offset, (decision, 1), (masks, 1), (output, 1))
                    out[index : index + output.shape[0], offset : offset + output.shape[1]] = output.cpu().numpy()
                    index += output.shape[0]
        if n_outputs == 1:
            return out[0]
        return self._target_kind().combine_members(out)

    def _explain_batches(self, batches, n_samples):
        """Step masks, importances, step importances and step gates of every member, shape (n_members, n_samples, ...).

        The step gates are None for a network without them.
        """
        networks = ensemble_members(self.network_)
        # One entry per member: each network's efficient members (one for a plain TabNet) in turn.
        members = [(network, index) for network in networks for index in range(network.n_efficient_members)]
        n_features = self.n_features_in_
        step_masks = np.empty((len(members), n_samples, self.n_steps, n_features), dtype=np.float32)
        step_importance = np.empty((len(members), n_samples, self.n_steps), dtype=np.float32)
        importances = np.empty((len(members), n_samples, n_features), dtype=np.float32)
        gated = networks[0].gates is not None
        step_gates = np.empty((len(members), n_samples, self.n_steps), dtype=np.float32) if gated else None

        def encode(batch):
            results = []
            for network in networks:
                encoded = network.encode_steps(batch)
                split = network.split_members
                # masks (n_steps, k * batch, groups) -> (k, n_steps, batch, groups); the others (k, batch, ...).
                masks = split(encoded.masks.transpose(0, 1)).transpose(1, 2)
                gates = None if encoded.step_gates is None else split(encoded.step_gates)
                for index in range(network.n_efficient_members):
                    results.append(
                        encoded._replace(
                            decision=split(encoded.decision)[index],
                            masks=masks[index],
                            step_importance=split(encoded.step_importance)[index],
                            step_gates=None if gates is None else gates[index],
                        )
                    )
            return results

        for start, results in forward_in_batches(self.network_, batches, encode):
            for index, ((member, _), encoded) in enumerate(zip(members, results)):
                decision, masks, eta = encoded.decision, encoded.masks, encoded.step_importance
                check_finite(start, (decision, 0), (masks, 1))
                stop = start + eta.shape[0]
                batch_masks = (masks @ member.embedding.explanation_matrix).permute(1, 0, 2)
                step_masks[index, start:stop] = batch_masks.cpu().numpy()
                step_importance[index, start:stop] = eta.cpu().numpy()
                # Paper, section 4: M_agg = sum_i eta[i] M[i] / sum_j sum_i eta[i] M[i]; each M[i] row
                # sums to 1, so the denominator is sum_i eta[i]; a row whose eta are all 0 gets zeros.
                weighted = torch.einsum("ns,nsf->nf", eta, batch_masks)
                total = eta.sum(dim=1, keepdim=True)
                # With step gates eta is g * eta, which is 0 for every step when every gate of the row is
                # closed: the row's masks then count equally, so its importances still sum to 1.
                fallback = batch_masks.mean(dim=1) if gated else 0.0
                importances[index, start:stop] = (
                    torch.where(total > 0, weighted / total.clamp_min(1e-30), fallback).cpu().numpy()
                )
                if gated:
                    step_gates[index, start:stop] = encoded.step_gates.cpu().numpy()
        return step_masks, importances, step_importance, step_gates

    @staticmethod
    def _combine_explanations(step_masks, importances, step_importance, step_gates=None):
        """The ensemble's explanation from its members' (one member: its own, unchanged)."""
        if step_masks.shape[0] == 1:
            return step_masks[0], importances[0], step_importance[0], None if step_gates is None else step_gates[0]
        mean_masks = step_masks.mean(axis=0, dtype=np.float64).astype(np.float32)
        # A member whose eta are all 0 for a row has no aggregate importance there (a row of zeros): the mean
        # is over the members that have one, so each row still sums to 1 unless no member has one.
        has_importance = importances.sum(axis=2, keepdims=True) > 0
        counts = has_importance.sum(axis=0)
        total = importances.sum(axis=0, dtype=np.float64)
        mean_importances = np.where(counts > 0, total / np.maximum(counts, 1), 0.0).astype(np.float32)
        mean_gates = None if step_gates is None else step_gates.mean(axis=0, dtype=np.float64).astype(np.float32)
        return (
            mean_masks,
            mean_importances,
            step_importance.mean(axis=0, dtype=np.float64).astype(np.float32),
            mean_gates,
        )

    def explain(self, X, *, per_member=False, groups=None):
        """Per-row feature masks and importances.

        For an ensemble (``n_ensemble > 1``, or ``n_efficient_members > 1``: every efficient
        member of every network is a member here) each array is the mean of its members' (for
        ``importances``, over the members whose row is not all zero), so its rows still sum to
        1; ``per_member=True`` adds each member's own arrays.

        ``groups`` sums the values of several input columns into one, for example the one-hot
        columns of one source column (:func:`sparsetab.inspection.feature_groups_from_transformer`
        builds that dict from a fitted ``ColumnTransformer``, ``OneHotEncoder`` or
        ``Pipeline``). It only changes how the answer is reported: the network and its masks are
        the same. The fit parameter ``grouped_features`` is different: its members share one
        attention weight during training (and ``explain()`` splits that weight equally between
        them). Rather than one-hot encoding string columns, pass them to the estimator as they
        are: it embeds each categorical column itself, as one attention group.

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)
            Rows to explain, with the columns seen at fit.
        per_member : bool, default=False
            Also return the arrays of each member of the ensemble: ``n_ensemble *
            n_efficient_members`` members, network by network and within a network its
            efficient members in order (one member when both are 1).
        groups : dict of str to list of (str or int), default=None
            ``{group name: member columns}``: each group becomes one column of the answer whose
            value is the sum of its members' values, so rows still sum to 1. A member is a name
            of ``feature_names_in_`` (``x0, x1, ...`` for input without column names) or a
            position in ``0..n_features_in_ - 1``; a single name or position is a group of one.
            Every input column is in at most one group; a column in no group stays its own.
            The columns of the answer are in the order of their first input column: a group
            sits where its first member was. None reports one value per input column.

        Returns
        -------
        sklearn.utils.Bunch
            With the keys:

            step_masks : numpy.ndarray of shape (n_samples, n_steps, ``n_features_in_``), float32
                Feature mask ``M[i]`` of each decision step, one value per input column (a
                categorical column's embedding dimensions share one value; the columns of a
                ``grouped_features`` group share their group's value equally, each getting
                ``value / group size``); rows sum to 1. For an ensemble, the members' mean.
                With ``groups``, shape (n_samples, n_steps, n_groups), one column per group
                (and per column in no group); so for the other per-feature arrays.
            importances : numpy.ndarray of shape (n_samples, ``n_features_in_``), float32
                Aggregate importance ``M_agg``: the masks weighted by ``step_importance`` and
                normalised; rows sum to 1, or are all zero when every ``eta`` of the row is 0.
                With ``step_gates``, a row whose weights ``g * eta`` are all 0 (every gate of
                the row closed) is the mean of its step masks over the steps instead, so every
                row sums to 1. For an ensemble, the mean over the members whose row is not all
                zero (all zero when no member's is).
            step_importance : numpy.ndarray of shape (n_samples, n_steps), float32
                ``eta_b[i] = sum_c ReLU(d_b,c[i])``, the contribution of step ``i`` to the
                decision (unnormalised, >= 0); with ``step_gates``, ``g_b[i] * eta_b[i]``, the
                gated contribution. For an ensemble, the members' mean.
            step_gates : numpy.ndarray of shape (n_samples, n_steps), float32, or None
                The gate ``g_b[i]`` in [0, 1] of each decision step; None without
                ``step_gates``.
                For an ensemble, the members' mean.
            feature_names : numpy.ndarray of shape (``n_features_in_``,), object
                ``feature_names_in_``, or ``x0, x1, ...`` for input without column names; with
                ``groups``, the names of the answer's columns (a group's name, or a column's
                own).
            member_step_masks : numpy.ndarray of shape (n_members, n_samples, n_steps, ``n_features_in_``), float32
                Only with ``per_member=True``: each member's ``step_masks``, in member order
                (with ``n_efficient_members=1``, member 0 is the model that ``n_ensemble=1``
                gives).
            member_importances : numpy.ndarray of shape (n_members, n_samples, ``n_features_in_``), float32
                Only with ``per_member=True``: each member's ``importances``.
            member_step_importance : numpy.ndarray of shape (n_members, n_samples, n_steps), float32
                Only with ``per_member=True``: each member's ``step_importance``.
            member_step_gates : numpy.ndarray of shape (n_members, n_samples, n_steps), float32, or None
                Only with ``per_member=True``: each member's ``step_gates`` (None without
                ``step_gates``).

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If the estimator is not fitted.
        ValueError
            If ``X`` does not have the columns seen at fit, a numeric column holds strings or
            infinities, the network's outputs are not finite for some row, or ``groups`` is
            bad: a group empty or not named by a str, a member neither a feature name nor a
            position in range, a column listed twice, or a group named like a column in no
            group (the message names the group and the member).
        TypeError
            If ``per_member`` is not a bool, or ``groups`` is not None or a dict.

        Warns
        -----
        UserWarning
            Once per call, when some rows have numeric values far outside the range seen at fit
            (beyond ``[min - r, max + r]``, ``r = max - min`` of the column at fit), with their count
            and the columns. Such values are clipped to the training range before the network.

        References
        ----------
        Arik and Pfister (2021), TabNet, AAAI; section 4 ("Interpretability").
        """
        check_is_fitted(self)
        if not isinstance(per_member, (bool, np.bool_)):
            raise TypeError(
                f"per_member must be True or False, got {per_member!r} of type {type(per_member).__name__}."
            )
        names = feature_names(self)
        columns = None
        if groups is not None:  # checked before the forward pass, which can take long
            names, columns = resolve_feature_groups(groups, names)
        frame = self._validate_X(X, reset=False)
        with torch_threads(self.n_jobs):
            members = self._explain_batches(self._encoded_batches(frame), len(frame))
        step_masks, importances, step_importance, step_gates = self._combine_explanations(*members)
        if columns is not None:
            step_masks, importances = sum_feature_groups(step_masks, columns), sum_feature_groups(importances, columns)
            members = (
                sum_feature_groups(members[0], columns),
                sum_feature_groups(members[1], columns),
                members[2],
                members[3],
            )
        explanation = Bunch(
            step_masks=step_masks,
            importances=importances,
            step_importance=step_importance,
            step_gates=step_gates,
            feature_names=names,
        )
        if per_member:
            explanation.update(
                member_step_masks=members[0],
                member_importances=members[1],
                member_step_importance=members[2],
                member_step_gates=members[3],
            )
        return explanation

    def transform_inputs(self, X):
        """The inputs of an exported model (see :meth:`export`) for the rows of ``X``.

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)
            Rows with the columns seen at fit.

        Returns
        -------
        numeric : numpy.ndarray of shape (n_samples, n_numeric), float64
            The numeric columns, unscaled and unclipped, in column order, NaN where a value is
            missing (the exported model clips each to its training range and fills missing
            values as the estimator does; ``torch.from_numpy`` turns the array into the
            exported model's first argument).
        codes : numpy.ndarray of shape (n_samples, n_categorical), int64
            Category code of each categorical column, in column order: 0 for a missing value
            or a category not seen at fit, ``c + 1`` for the ``c``-th category seen at fit
            (the list is in the exported file's metadata).

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If the estimator is not fitted.
        ValueError
            If ``X`` does not have the columns seen at fit or a numeric column holds infinities.
        """
        check_is_fitted(self)
        numeric, codes = self._tabular_encoding.split(self._validate_X(X, reset=False))
        # Under pandas' copy-on-write the numeric block can be a read-only view of the caller's frame,
        # which torch.from_numpy warns about: the caller gets an array of its own.
        if not numeric.flags.writeable:
            numeric = numeric.copy()
        return numeric, codes

    def save_model(self, path):
        """Write the fitted estimator to one safe, versioned file; read it back with :func:`sparsetab.load_model`.

        The file holds JSON metadata (format version; sparsetab, torch, scikit-learn and numpy
        versions; parameters; classes, categories, feature names, importances, training history
        and the other fitted attributes) and the weights as tensors, with a SHA-256 digest of
        both. Loading builds no object from the file and runs no code (``torch.load`` with
        ``weights_only=True``), unlike pickle and joblib, which also work but can execute
        arbitrary code from a file: load those only from sources you trust. The write is atomic
        (a temporary file, then a rename), so a crash never leaves a half-written model. The
        ``pretrained`` parameter is stored as None: it only matters at fit, and the fine-tuned
        weights are in the file.

        Parameters
        ----------
        path : str or os.PathLike
            Where to write (conventionally ``*.sparsetab``); an existing file is replaced.

        Returns
        -------
        str
            ``path``.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If the estimator is not fitted.
        TypeError
            If a parameter holds a value the format cannot store, e.g. a callable ``scoring``
            (pickle such an estimator instead).
        """
        check_is_fitted(self)
        self.feature_importances_  # noqa: B018  (computed now if partial_fit deferred it: files hold values)
        return save_estimator(self, path)

    def export(self, path, *, format="exported_program"):
        """Write the fitted network as a serving program that runs without scikit-learn.

        The program takes ``(numeric, codes)`` as returned by :meth:`transform_inputs`
        (float64 and int64 arrays, any number of rows) and returns ``(prediction,
        step_masks)``: class probabilities of shape (n_samples, n_classes) in the order of
        ``classes_`` (classifier; for a label indicator matrix one sigmoid probability per
        label, for multiclass-multioutput the blocks of :meth:`predict_proba` side by side,
        block widths in the metadata's ``softmax_blocks``) or predictions of shape
        (n_samples, n_outputs) in the target's units (regressor), both float64, and the step
        masks of :meth:`explain`, float32 of shape (n_samples, n_steps, ``n_features_in_``). It
        clips the numeric columns to the training range and applies the model's
        ``numerical_transform`` (the standardisation, or scikit-learn's normal-output quantile
        map) itself. For an ensemble (``n_ensemble > 1``) the program runs every member and
        returns the mean of their probabilities or predictions and of their step masks, as the
        estimator does (the metadata's ``outputs`` then says so under ``ensemble``). It runs in
        evaluation mode and uses the entmax maps' exportable path (sort-based closed forms, a
        fixed number of root-finding iterations), so its outputs equal :meth:`predict_proba` /
        :meth:`predict` and :meth:`explain` up to float32 rounding. A model with
        ``step_gates`` has a third output, ``step_gates``, float32 of shape (n_samples,
        n_steps), as in :meth:`explain` (ONNX output ``"step_gates"``). The file also holds JSON
        metadata, ``sparsetab.json``: versions, column names, categories and the outputs'
        meaning, so a server can encode raw rows itself.

        Load it with ``torch.export.load(path).module()`` (``"exported_program"``; read the
        metadata with ``extra_files={"sparsetab.json": ""}``), or with
        ``onnxruntime.InferenceSession(path)`` (``"onnx"``: inputs ``"numeric"`` (float64,
        shape ("batch", n_numeric)) and ``"codes"`` (int64, shape ("batch", n_categorical)),
        outputs ``"prediction"`` and ``"step_masks"``; the metadata is the model's
        ``metadata_props`` entry ``"sparsetab.json"``, e.g.
        ``session.get_modelmeta().custom_metadata_map["sparsetab.json"]``).

        Parameters
        ----------
        path : str or os.PathLike
            File to write (replaced atomically if it exists; ``.pt2`` is the usual suffix for
            ``torch.export``, ``.onnx`` for ONNX, ``.pt`` for TorchScript).
        format : {"exported_program", "onnx", "torchscript"}, default="exported_program"
            ``"exported_program"``: ``torch.export.export`` with a dynamic batch dimension,
            saved with ``torch.export.save``. ``"onnx"``: that program converted by torch's
            ONNX exporter (``torch.onnx.export(..., dynamo=True)``, its default opset), one
            self-contained file with a dynamic ``"batch"`` dimension; needs the extra
            ``pip install "sparsetab[onnx]"``. ``"torchscript"`` (deprecated, removed in the
            next release, since torch deprecates ``torch.jit``): ``torch.jit.trace`` saved with
            ``torch.jit.save``, loaded with ``torch.jit.load(path, _extra_files=...)``.

        Returns
        -------
        str
            ``path``.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If the estimator is not fitted.
        ValueError
            If ``format`` is not one of the accepted values.
        ImportError
            If ``format="onnx"`` and ``onnx`` or ``onnxscript`` cannot be imported; the message
            names the extra that installs them, ``sparsetab[onnx]``.

        Warns
        -----
        FutureWarning
            If ``format="torchscript"``: use ``"exported_program"`` or ``"onnx"`` instead.
        """
        check_is_fitted(self)
        if format not in EXPORT_FORMATS:
            raise ValueError(f"format must be one of {EXPORT_FORMATS}, got {format!r}.")
        return export_network(
            self.network_,
            self._tabular_encoding,
            feature_names(self),
            self._target_kind().serving_output(),
            type(self).__name__,
            path,
            format,
        )

    @staticmethod
    def _importance_rows(X_train, random_state):
        """The training rows ``feature_importances_`` averages over: all, or 10,000 drawn without replacement."""
        if X_train.shape[0] <= _IMPORTANCE_MAX_ROWS:
            return X_train
        chosen = np.sort(random_state.choice(X_train.shape[0], _IMPORTANCE_MAX_ROWS, replace=False))
        return X_train[torch.from_numpy(chosen).to(X_train.device)]

    def _importances_of(self, rows):
        """Mean aggregate importance of ``rows``, rows whose importances are all zero left out; sums to 1."""
        # Small batches: this runs inside fit, whose peak memory it would otherwise set.
        _, importances, _, _ = self._combine_explanations(
            *self._explain_batches(rows.split(_IMPORTANCE_BATCH_ROWS), rows.shape[0])
        )
        used = importances.sum(axis=1) > 0
        if not used.any():
            return np.full(importances.shape[1], 1.0 / importances.shape[1])
        mean = importances[used].astype(np.float64).mean(axis=0)
        return mean / mean.sum()

    @property
    def feature_importances_(self):
        """Mean aggregate importance of each input column over the training rows (see the class docstring).

        ``fit`` computes it; after ``partial_fit`` it is computed on first access (then kept until
        the next call), so that a stream of ``partial_fit`` calls does not pay for it each time.

        Returns
        -------
        numpy.ndarray of shape (``n_features_in_``,), float64

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If the estimator is not fitted (an AttributeError, so ``hasattr`` is False).
        """
        check_is_fitted(self)
        if self.__dict__.get("_feature_importances") is None:
            rows = self.__dict__.pop("_pending_importance_rows")
            with torch_threads(self.n_jobs):
                self._feature_importances = self._importances_of(rows)
        return self._feature_importances

    @feature_importances_.setter
    def feature_importances_(self, value):
        # Model files written before the importances were lazy store them under this name.
        self._feature_importances = value
        self.__dict__.pop("_pending_importance_rows", None)
