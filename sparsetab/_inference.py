"""Inference on a fitted estimator: batched forward passes, explain(), transform_inputs(), files.

Every batched forward pass of the package (predict, explain, validation losses, the pretrainer's
embedding and reconstruction loss, the training importances) goes through :func:`forward_in_batches`.
"""

import numpy as np
import torch
from sklearn.utils import Bunch
from sklearn.utils.validation import check_is_fitted

from ._runtime import torch_threads
from ._tabular.encoding import feature_names
from ._tabular.feature_groups import resolve_feature_groups, sum_feature_groups
from ._warnings import warn
from .network import ensemble_members

__all__ = [
    "INFERENCE_BATCH_ROWS",
    "check_finite",
    "combine_explanations",
    "encoded_batches",
    "explanation",
    "feature_importances",
    "forward_in_batches",
    "importance_rows",
    "importances_of",
    "member_explanations",
    "model_inputs",
    "raw_output",
]

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
    # Named as explain() and feature_names_in_ name them: a frame without string column names (numpy input, a
    # ColumnTransformer's array) has the positional names x0, x1, ...
    named = all(isinstance(name, str) for name in frame.columns)
    labels = frame.columns if named else [f"x{j}" for j in range(frame.shape[1])]
    names = ", ".join(repr(str(labels[j])) for j in np.flatnonzero(outside_columns))
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


def raw_output(estimator, X):
    """Network outputs of a fitted estimator for ``X``, shape (n_samples, output_dim), numpy.

    float32 for one network; for an ensemble, float64, the members' outputs combined by the
    target kind's ``combine_members`` (read by ``predict`` and ``predict_proba`` as one
    network's outputs).

    Parameters
    ----------
    estimator : BaseSparseTabNet
        A fitted classifier or regressor.
    X : pandas.DataFrame or array-like of shape (n_samples, n_features)
        Rows with the columns seen at fit.

    Returns
    -------
    numpy.ndarray of shape (n_samples, output_dim)

    Raises
    ------
    sklearn.exceptions.NotFittedError
        If the estimator is not fitted.
    ValueError
        If a member's decision output, masks or head output are not finite for some row:
        a model never returns NaN predictions silently.
    """
    check_is_fitted(estimator)
    scoring_rows = vars(estimator).get("_scoring_rows")
    if scoring_rows is not None and X is scoring_rows[0]:
        # A scorer during fit: the validation rows were validated and encoded once for the fit.
        frame, batches = scoring_rows[1], iter(scoring_rows[2])
    else:
        frame = estimator._validate_X(X, reset=False)
        batches = encoded_batches(estimator._tabular_encoding, frame, estimator._device)
    members = ensemble_members(estimator.network_)
    # Each network's efficient members are members of the ensemble in their own right.
    n_outputs = sum(member.n_efficient_members for member in members)
    out = np.empty((n_outputs, frame.shape[0], estimator._network_config["output_dim"]), dtype=np.float32)

    def decide(batch):
        # Every member on each encoded batch: the rows are encoded once, whatever the number of members.
        results = []
        for member in members:
            decision, masks, _, _ = member.encode(batch)
            split = member.split_members
            results.append((split(decision), split(masks.transpose(0, 1)), split(member.head(decision))))
        return results

    with torch_threads(estimator.n_jobs):
        for offset, results in forward_in_batches(estimator.network_, batches, decide):
            index = 0
            for decision, masks, output in results:
                check_finite(offset, (decision, 1), (masks, 1), (output, 1))
                out[index : index + output.shape[0], offset : offset + output.shape[1]] = output.cpu().numpy()
                index += output.shape[0]
    if n_outputs == 1:
        return out[0]
    return estimator._target_kind().combine_members(out)


def member_explanations(estimator, batches, n_samples):
    """Step masks, importances, step importances and step gates of every member, shape (n_members, n_samples, ...).

    Parameters
    ----------
    estimator : BaseSparseTabNet
        A fitted classifier or regressor.
    batches : iterable of torch.Tensor
        The encoded rows, batch by batch, on the estimator's device.
    n_samples : int
        Rows in all the batches.

    Returns
    -------
    tuple of numpy.ndarray
        ``(step_masks, importances, step_importance, step_gates)``, float32, of shapes
        (n_members, n_samples, n_steps, n_features), (n_members, n_samples, n_features),
        (n_members, n_samples, n_steps) and (n_members, n_samples, n_steps) or None for a network
        without step gates (see :meth:`~sparsetab._base.BaseSparseTabNet.explain`).
    """
    networks = ensemble_members(estimator.network_)
    # One entry per member: each network's efficient members (one for a plain TabNet) in turn.
    members = [(network, index) for network in networks for index in range(network.n_efficient_members)]
    n_features = estimator.n_features_in_
    step_masks = np.empty((len(members), n_samples, estimator.n_steps, n_features), dtype=np.float32)
    step_importance = np.empty((len(members), n_samples, estimator.n_steps), dtype=np.float32)
    importances = np.empty((len(members), n_samples, n_features), dtype=np.float32)
    gated = networks[0].gates is not None
    step_gates = np.empty((len(members), n_samples, estimator.n_steps), dtype=np.float32) if gated else None

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

    for start, results in forward_in_batches(estimator.network_, batches, encode):
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


def combine_explanations(step_masks, importances, step_importance, step_gates=None):
    """The ensemble's explanation from its members' (one member: its own, unchanged).

    Parameters
    ----------
    step_masks, importances, step_importance, step_gates : numpy.ndarray
        What :func:`member_explanations` returns.

    Returns
    -------
    tuple of numpy.ndarray
        The same four arrays without their member axis: the members' means (for ``importances``,
        over the members whose row is not all zero, so each row still sums to 1).
    """
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


def explanation(estimator, X, per_member, groups):
    """What :meth:`~sparsetab._base.BaseSparseTabNet.explain` returns (see it for the arguments and errors)."""
    check_is_fitted(estimator)
    if not isinstance(per_member, (bool, np.bool_)):
        raise TypeError(f"per_member must be True or False, got {per_member!r} of type {type(per_member).__name__}.")
    names = feature_names(estimator)
    columns = None
    if groups is not None:  # checked before the forward pass, which can take long
        names, columns = resolve_feature_groups(groups, names)
    frame = estimator._validate_X(X, reset=False)
    with torch_threads(estimator.n_jobs):
        members = member_explanations(
            estimator, encoded_batches(estimator._tabular_encoding, frame, estimator._device), len(frame)
        )
    step_masks, importances, step_importance, step_gates = combine_explanations(*members)
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


def model_inputs(estimator, X):
    """What :meth:`~sparsetab._base.BaseSparseTabNet.transform_inputs` returns (see it)."""
    check_is_fitted(estimator)
    numeric, codes = estimator._tabular_encoding.split(estimator._validate_X(X, reset=False))
    # Under pandas' copy-on-write the numeric block can be a read-only view of the caller's frame,
    # which torch.from_numpy warns about: the caller gets an array of its own.
    if not numeric.flags.writeable:
        numeric = numeric.copy()
    return numeric, codes


def importance_rows(X_train, random_state):
    """The training rows ``feature_importances_`` averages over: all, or 10,000 drawn without replacement.

    Parameters
    ----------
    X_train : torch.Tensor of shape (n_samples, n_columns), float32
        The encoded training rows.
    random_state : numpy.random.RandomState
        Source of the draw.

    Returns
    -------
    torch.Tensor of shape (min(n_samples, 10000), n_columns)
    """
    if X_train.shape[0] <= _IMPORTANCE_MAX_ROWS:
        return X_train
    chosen = np.sort(random_state.choice(X_train.shape[0], _IMPORTANCE_MAX_ROWS, replace=False))
    return X_train[torch.from_numpy(chosen).to(X_train.device)]


def importances_of(estimator, rows):
    """Mean aggregate importance of encoded ``rows``, rows whose importances are all zero left out; sums to 1.

    Parameters
    ----------
    estimator : BaseSparseTabNet
        A fitted classifier or regressor.
    rows : torch.Tensor of shape (n_samples, n_columns), float32
        Encoded rows, on the estimator's device.

    Returns
    -------
    numpy.ndarray of shape (n_features,), float64
        Uniform when every row's importances are zero.
    """
    # Small batches: this runs inside fit, whose peak memory it would otherwise set.
    _, importances, _, _ = combine_explanations(
        *member_explanations(estimator, rows.split(_IMPORTANCE_BATCH_ROWS), rows.shape[0])
    )
    used = importances.sum(axis=1) > 0
    if not used.any():
        return np.full(importances.shape[1], 1.0 / importances.shape[1])
    mean = importances[used].astype(np.float64).mean(axis=0)
    return mean / mean.sum()


def feature_importances(estimator):
    """``feature_importances_`` of a fitted estimator, computed now if ``partial_fit`` deferred it, then kept.

    Parameters
    ----------
    estimator : BaseSparseTabNet
        A fitted classifier or regressor.

    Returns
    -------
    numpy.ndarray of shape (n_features,), float64
    """
    if estimator.__dict__.get("_feature_importances") is None:
        rows = estimator.__dict__.pop("_pending_importance_rows")
        with torch_threads(estimator.n_jobs):
            estimator._feature_importances = importances_of(estimator, rows)
    return estimator._feature_importances
