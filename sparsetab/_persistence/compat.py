"""What models saved by earlier sparsetab releases need, and the one pickling protocol of the estimators.

Everything a pickle or a model file of an earlier release needs to load is here:

- parameters added since a model was saved take their **legacy value** (the one the model was
  trained with), read from the ``legacy`` column of the parameter table
  (:data:`sparsetab._params.LEGACY_VALUES`) by :func:`with_legacy_parameters`;
- parameters of the step-gate variants that were screened and removed are dropped, or the model
  is refused with a clear error (:func:`without_removed_parameters`), in the estimator's
  parameters and in the copies a fitted model keeps (:func:`without_removed_parameters_in_copies`);
- private attributes renamed since (:data:`RENAMED_ATTRIBUTES`);
- tensors are pickled with ``torch.save`` and read on the CPU first (:func:`pickled_state`,
  :func:`unpickled_state`, :func:`restore_torch_state`), so that a model fitted on a GPU unpickles
  on a machine without one;
- a pretrainer pickled before fit ids existed reads as ``fit_id_ = ""`` where a fine-tuned model
  compares it (``BaseSparseTabNet._fitted_pretrainer``).

The objects below the estimator restore their own attributes when unpickled, since only they are
called then: :class:`~sparsetab.network.TabNet` (constant groups, step gates and efficient members
added since), the input embedding (numerical embeddings) and
:class:`~sparsetab._tabular.encoding.TabularEncoding` (``numerical_transform`` and clipping), each
in its ``__setstate__`` with a comment that names what was added.
"""

import io

import torch

from .._runtime import device_available
from .._warnings import warn
from ..network import STEP_GATES

__all__ = [
    "REMOVED_PARAMETERS",
    "RENAMED_ATTRIBUTES",
    "TORCH_STATE_KEYS",
    "pickled_state",
    "restore_torch_state",
    "unpickled_state",
    "with_legacy_parameters",
    "without_removed_parameters",
    "without_removed_parameters_in_copies",
]

# Parameters of the step-gate variants that were screened and removed, with the value of the kept variant
# (see without_removed_parameters).
REMOVED_PARAMETERS = {"gate_first_step": True, "gate_penalty": "share_entropy"}
# Fitted attributes holding tensors, pickled with torch.save so they load on the CPU first.
# _ensemble_members holds the optimizer and shuffling states of an ensemble's members after the first.
TORCH_STATE_KEYS = ("network_", "_optimizer_state", "_shuffle_state", "_ensemble_members")
# Private attributes renamed since a model could be pickled: old name -> new name.
RENAMED_ATTRIBUTES = {"_encoder": "_tabular_encoding", "feature_importances_": "_feature_importances"}


def without_removed_parameters(values, warn_on_penalty=True):
    """Drop the parameters of the step-gate variants that were screened and removed, if this sparsetab can honour them.

    Models saved while the variants existed hold ``gate_first_step`` and ``gate_penalty`` (and
    may hold ``step_gates="sparsemax"``). Without step gates, or with the kept variant (a sigmoid
    gate on every step), they are dropped. The gate penalty only shapes training, so a gated model
    trained with another penalty still predicts as saved; a continued fit would use the share
    entropy, which a UserWarning says.

    Parameters
    ----------
    values : dict of str -> object
        Saved parameters, a pickled ``__dict__`` or a network configuration.
    warn_on_penalty : bool, default=True
        Whether to warn of a removed penalty (the copies of the parameters inside a saved model,
        its network configuration and architecture, are cleaned without it, so that the
        estimator's parameters warn once).

    Returns
    -------
    dict
        A new dict without the keys of :data:`REMOVED_PARAMETERS`.

    Raises
    ------
    ValueError
        If ``values`` describe step gates this sparsetab cannot rebuild: ``step_gates`` other
        than None or ``"sigmoid"``, or ``gate_first_step=False``.
    """
    values = dict(values)
    removed = {name: values.pop(name, kept) for name, kept in REMOVED_PARAMETERS.items()}
    if values.get("step_gates") is None:
        return values
    if values["step_gates"] not in STEP_GATES or removed["gate_first_step"] is not True:
        raise ValueError(
            f"This model was saved with step_gates={values['step_gates']!r} and "
            f"gate_first_step={removed['gate_first_step']!r}, a step-gate variant that was screened and removed "
            "(benchmarks/results/syn.md); this sparsetab rebuilds step_gates='sigmoid' with a gate on every step. "
            "Refit the model with this sparsetab."
        )
    if warn_on_penalty and removed["gate_penalty"] != REMOVED_PARAMETERS["gate_penalty"]:
        warn(
            f"This model was trained with gate_penalty={removed['gate_penalty']!r}, which was removed; it predicts "
            "as saved, but a continued fit (warm_start, partial_fit) uses the share-entropy penalty.",
            UserWarning,
        )
    return values


def without_removed_parameters_in_copies(attributes):
    """Drop the removed step-gate parameters from the copies of the parameters that a fitted model keeps.

    A fit keeps its network configuration (``_network_config``) and the architecture a
    continued fit compares against (``_architecture``). Both are cleaned by
    :func:`without_removed_parameters` without its warning, which the estimator's own
    parameters give once.

    Parameters
    ----------
    attributes : dict of str -> object
        A model file's fitted attributes, or a pickled estimator's ``__dict__``.

    Returns
    -------
    dict
        A new dict: ``attributes`` with those copies cleaned (the ones it holds as dicts).

    Raises
    ------
    ValueError
        From :func:`without_removed_parameters`.
    """
    attributes = dict(attributes)
    for name in ("_network_config", "_architecture"):
        if isinstance(attributes.get(name), dict):
            attributes[name] = without_removed_parameters(attributes[name], warn_on_penalty=False)
    return attributes


def with_legacy_parameters(values, names, legacy_values):
    """Complete the parameters of a model saved by an earlier sparsetab with their legacy values.

    Parameters
    ----------
    values : dict of str -> object
        The saved parameters (or a pickled ``__dict__``).
    names : iterable of str
        The parameters of the estimator being restored.
    legacy_values : dict of str -> object
        The value each parameter added since the first release behaves as when a model lacks
        it (:data:`sparsetab._params.LEGACY_VALUES`).

    Returns
    -------
    dict
        A new dict: ``values`` without the parameters of removed variants (see
        :func:`without_removed_parameters`), plus ``legacy_values`` for each of ``names`` it lacks.

    Raises
    ------
    ValueError
        From :func:`without_removed_parameters`.
    """
    values = without_removed_parameters(values)
    missing = {name: legacy_values[name] for name in names if name not in values and name in legacy_values}
    return {**missing, **values}


def pickled_state(state):
    """The pickled form of an estimator's state: its tensors in one ``torch.save`` blob.

    Parameters
    ----------
    state : dict
        What ``BaseEstimator.__getstate__`` returns.

    Returns
    -------
    dict
        A new dict: ``state`` without the attributes of :data:`TORCH_STATE_KEYS`, which are
        under ``"_torch_state"`` as bytes (absent for an unfitted estimator).
    """
    state = dict(state)
    tensors = {key: state.pop(key) for key in TORCH_STATE_KEYS if key in state}
    if tensors:
        # torch.save records each tensor's device; restore_torch_state maps them to the CPU first, so a
        # model fitted on a GPU unpickles on a machine without one.
        buffer = io.BytesIO()
        torch.save(tensors, buffer)
        state["_torch_state"] = buffer.getvalue()
    return state


def unpickled_state(state, names, legacy_values):
    """A pickled estimator's state as this sparsetab reads it, and its tensors' blob.

    Parameters
    ----------
    state : dict
        What was pickled (by this release or an earlier one).
    names : iterable of str
        The parameters of the estimator being restored.
    legacy_values : dict of str -> object
        See :func:`with_legacy_parameters`.

    Returns
    -------
    state : dict
        A new dict for ``BaseEstimator.__setstate__``: legacy parameters completed, removed
        ones dropped (in the copies too), renamed attributes under their new names.
    torch_state : bytes or None
        The blob of :func:`pickled_state`, for :func:`restore_torch_state`.

    Raises
    ------
    ValueError
        From :func:`without_removed_parameters`.
    """
    state = without_removed_parameters_in_copies(with_legacy_parameters(state, names, legacy_values))
    for old, new in RENAMED_ATTRIBUTES.items():
        if old in state:
            state[new] = state.pop(old)
    return state, state.pop("_torch_state", None)


def restore_torch_state(estimator, torch_state):
    """Put an unpickled estimator's tensors back, on its fitted device when that is available here.

    Parameters
    ----------
    estimator : sklearn.base.BaseEstimator
        The estimator being unpickled, its other attributes already set.
    torch_state : bytes or None
        The blob of :func:`pickled_state`; None does nothing.

    Warns
    -----
    UserWarning
        When the estimator was fitted on a device not available here: its network is left on
        the CPU, where it predicts, and ``_device`` says so.
    """
    if torch_state is None:
        return
    tensors = torch.load(io.BytesIO(torch_state), map_location="cpu", weights_only=False)
    device = getattr(estimator, "_device", torch.device("cpu"))
    if device.type != "cpu":
        if device_available(device):
            tensors["network_"].to(device)
        else:
            warn(
                f"This {type(estimator).__name__} was fitted on device {str(device)!r}, which is not available "
                "here; its network was loaded on the CPU, where it predicts. To train it further, set "
                "device='cpu' (or an available device).",
                UserWarning,
            )
            estimator._device = torch.device("cpu")
    estimator.__dict__.update(tensors)
