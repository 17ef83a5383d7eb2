"""Column references in parameters (``cat_emb_dim``, ``grouped_features``) resolved against the training frame."""

import numbers

import numpy as np

__all__ = ["attention_groups", "column_position", "embedding_dims"]


def column_position(columns, key, argument):
    """Position of the column that ``key`` names.

    Parameters
    ----------
    columns : pandas.Index
        The columns of the training frame.
    key : str or int
        A column name (for frames with string column names) or a position in
        ``[-n_columns, n_columns)``.
    argument : str
        Name of the parameter the key comes from, for the error message.

    Returns
    -------
    int
        The position, in ``[0, n_columns)``.

    Raises
    ------
    ValueError
        If ``key`` names no column of ``columns``.
    """
    n_columns = len(columns)
    if isinstance(key, str):
        if not all(isinstance(c, str) for c in columns):
            raise ValueError(
                f"{argument} refers to column {key!r} by name, but X has no string column names (e.g. a numpy "
                f"array); refer to its columns by index in [0, {n_columns})."
            )
        matches = np.flatnonzero(columns == key)
        if len(matches) == 1:
            return int(matches[0])
        raise ValueError(
            f"{argument} refers to column {key!r}, which is not a column name of X; columns are "
            f"{[str(c) for c in columns]}."
        )
    if isinstance(key, numbers.Integral) and not isinstance(key, bool) and -n_columns <= key < n_columns:
        return int(key) % n_columns
    raise ValueError(
        f"{argument} refers to column {key!r}; accepted: a column name of X (for a DataFrame with string "
        f"column names) or a column index in [0, {n_columns})."
    )


def embedding_dims(cat_emb_dim, columns, is_categorical):
    """Embedding width of each column from the ``cat_emb_dim`` parameter.

    Parameters
    ----------
    cat_emb_dim : int or dict
        One width for every categorical column, or a dict mapping column names or positions to
        widths (other categorical columns get 1).
    columns : pandas.Index of length n_columns
        The training frame's columns.
    is_categorical : numpy.ndarray of shape (n_columns,), bool

    Returns
    -------
    list of int, length n_columns
        The widths (a placeholder 1 for numeric columns).

    Raises
    ------
    ValueError
        If a key names no column or a numeric column, or a width is not an int >= 1.
    """
    if not isinstance(cat_emb_dim, dict):
        return [cat_emb_dim] * len(columns)
    dims = [1] * len(columns)
    for key, width in cat_emb_dim.items():
        j = column_position(columns, key, "cat_emb_dim")
        if not is_categorical[j]:
            categorical = [str(columns[i]) for i in np.flatnonzero(is_categorical)]
            raise ValueError(
                f"cat_emb_dim sets a width for column {key!r}, which is numeric; it accepts categorical "
                f"columns only ({categorical})."
            )
        if not isinstance(width, numbers.Integral) or isinstance(width, bool) or width < 1:
            raise ValueError(f"cat_emb_dim[{key!r}] must be an int >= 1, got {width!r}.")
        dims[j] = int(width)
    return dims


def attention_groups(grouped_features, columns):
    """Partition of the column positions from the ``grouped_features`` parameter.

    Parameters
    ----------
    grouped_features : list of list of str or int, or None
        Groups of columns (names or positions) sharing one attention weight.
    columns : pandas.Index of length n_columns
        The training frame's columns.

    Returns
    -------
    list of list of int or None
        ``None`` when ``grouped_features`` is None; otherwise the groups, each column not in a
        group alone, ordered by their first column.

    Raises
    ------
    ValueError
        If a group is empty or not a list, names an unknown column, or a column is in two groups.
    """
    if grouped_features is None:
        return None
    group_of = {}
    for number, group in enumerate(grouped_features):
        if isinstance(group, str) or not hasattr(group, "__iter__") or len(group) == 0:
            raise ValueError(
                f"grouped_features[{number}] must be a non-empty list of column names or indices, got {group!r}."
            )
        positions = [column_position(columns, key, "grouped_features") for key in group]
        for j in positions:
            if positions.count(j) > 1:
                raise ValueError(
                    f"grouped_features[{number}] lists column {str(columns[j])!r} more than once; list each column "
                    "once."
                )
            if j in group_of:
                raise ValueError(
                    f"grouped_features puts column {str(columns[j])!r} in more than one group (groups "
                    f"{group_of[j]} and {number}); a column belongs to one group at most."
                )
            group_of[j] = number
    groups, emitted = [], set()
    for j in range(len(columns)):  # groups are ordered by their first column
        if j not in group_of:
            groups.append([j])
        elif group_of[j] not in emitted:
            emitted.add(group_of[j])
            groups.append(sorted(i for i, g in group_of.items() if g == group_of[j]))
    return groups
