"""Feature groups of an explanation: several input columns summed into one, after the fact.

``explain(X, groups=...)`` and the displays of :mod:`sparsetab.inspection` take ``groups``, a
dict ``{group name: member columns}``, and show one value per group: the sum of its members'
mask values. This changes nothing in the network; ``grouped_features`` (a fit parameter) is the
other thing, one attention weight shared by the members during training. numpy only, so that
``_inference`` and the displays use the same copy.

Output columns are ordered by their first input column: a group sits where its first member
(in input order) was, and a column in no group stays itself, in its place.
"""

import numbers
from collections.abc import Mapping

import numpy as np

__all__ = ["resolve_feature_groups", "sum_feature_groups"]


def _member_position(member, group, names, index):
    """Input position of one member of a group; ValueError naming the group and the member."""
    if isinstance(member, str):
        if member not in index:
            shown = [str(name) for name in names[:20]] + (["..."] if len(names) > 20 else [])
            hint = ""
            if all(str(name) == f"x{position}" for position, name in enumerate(names)):
                # The estimator saw an array (a Pipeline's transformed output): its features have positional names.
                hint = (
                    " The estimator was fitted without column names: name the members by position (e.g. "
                    "feature_groups_from_transformer(..., positions=True)), or have the transformer give a DataFrame "
                    "(set_output(transform='pandas'))."
                )
            raise ValueError(
                f"groups[{group!r}] names column {member!r}, which is not a feature name; feature names are "
                f"{shown}.{hint}"
            )
        return index[member]
    if isinstance(member, numbers.Integral) and not isinstance(member, (bool, np.bool_)):
        if not 0 <= member < len(names):
            raise ValueError(
                f"groups[{group!r}] holds position {member!r}, outside 0..{len(names) - 1} (there are {len(names)} "
                "features)."
            )
        return int(member)
    raise ValueError(
        f"groups[{group!r}] holds {member!r} of type {type(member).__name__}; accepted: feature names (str) or "
        f"positions (int in 0..{len(names) - 1})."
    )


def resolve_feature_groups(groups, feature_names):
    """The output columns of ``groups``: their names and the input positions each one sums.

    Parameters
    ----------
    groups : dict of str to list of (str or int)
        ``{group name: members}``; a member is a name of ``feature_names`` or a position in
        ``0..n_features - 1``. A single name or position stands for a group of one. Every input
        column is in at most one group; a column in no group stays its own output column.
    feature_names : array-like of str of shape (n_features,)
        The input columns' names.

    Returns
    -------
    names : numpy.ndarray of shape (n_outputs,), dtype object
        The output columns' names: a group's name, or an ungrouped column's own name. The output
        columns are in the order of their first input column (the smallest member position).
    members : list of numpy.ndarray of int of shape (n_members,)
        For each output column, the sorted input positions it sums.

    Raises
    ------
    TypeError
        If ``groups`` is not a dict.
    ValueError
        If a group's name is not a str or is the name of a column in no group, a group is empty,
        a member is neither a feature name nor a position in ``0..n_features - 1``, or a column
        is listed twice (in one group or in two); the message names the group and the member.
    """
    if not isinstance(groups, Mapping):
        raise TypeError(
            f"groups must be a dict {{group name: list of feature names or positions}}, got {type(groups).__name__}."
        )
    names = np.asarray([str(name) for name in feature_names], dtype=object)
    index = {name: position for position, name in enumerate(names)}
    owner = {}  # input position -> group name
    grouped = {}
    for group, listed in groups.items():
        if not isinstance(group, str):
            raise ValueError(f"groups keys must be group names (str), got {group!r} of type {type(group).__name__}.")
        if isinstance(listed, (str, numbers.Integral)):
            listed = [listed]
        listed = list(np.ravel(np.asarray(listed, dtype=object))) if not isinstance(listed, (list, tuple)) else listed
        if not listed:
            raise ValueError(f"groups[{group!r}] is empty; a group needs at least one feature name or position.")
        positions = []
        for member in listed:
            position = _member_position(member, group, names, index)
            if position in owner:
                where = "twice" if owner[position] == group else f"also in groups[{owner[position]!r}]"
                raise ValueError(
                    f"groups[{group!r}] lists column {names[position]!r} (position {position}), which is {where}; "
                    "a column belongs to at most one group."
                )
            owner[position] = group
            positions.append(position)
        grouped[group] = np.sort(np.asarray(positions, dtype=np.intp))
    ungrouped = [position for position in range(len(names)) if position not in owner]
    for group in grouped:
        if group in index and index[group] in ungrouped:
            raise ValueError(
                f"groups has a group named {group!r}, which is also the name of a column in no group; rename the "
                f"group or add column {group!r} to it."
            )
    outputs = [(int(positions[0]), group, positions) for group, positions in grouped.items()]
    outputs += [(position, names[position], np.asarray([position], dtype=np.intp)) for position in ungrouped]
    outputs.sort(key=lambda output: output[0])
    return np.asarray([name for _, name, _ in outputs], dtype=object), [positions for _, _, positions in outputs]


def sum_feature_groups(values, members):
    """Sum the last axis of ``values`` over each output column's members.

    Parameters
    ----------
    values : numpy.ndarray of float of shape (..., n_features)
        Per-feature values: masks, importances.
    members : list of numpy.ndarray of int of shape (n_members,)
        The input positions of each output column (as :func:`resolve_feature_groups` returns).

    Returns
    -------
    numpy.ndarray of shape (..., n_outputs)
        ``out[..., j] = values[..., members[j]].sum(-1)``, summed in float64 and returned in
        the dtype of ``values``; a new array (``values`` is not modified).
    """
    values = np.asarray(values)
    summed = np.stack([values[..., positions].sum(axis=-1, dtype=np.float64) for positions in members], axis=-1)
    return summed.astype(values.dtype, copy=False)
