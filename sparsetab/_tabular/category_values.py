"""Category values that are equal as the user sees them: a bool or integer column whose dtype changed.

A CSV round trip turns a bool column into the strings "True"/"False", or into 0/1; a column of integer
codes with a missing value becomes float (2.0), or text ("2"). The categories learned at fit are the
original values, so without a mapping every such value would be an unseen category. The mapping:

================================  =====================================================================
categories at fit                 values accepted at predict for a category ``c``
================================  =====================================================================
all bool                          ``c`` itself (bool or numpy bool), the number ``int(c)`` (0/1, 0.0/1.0),
                                  the string ``str(c)`` in any case and without surrounding spaces
all integers (not bool)           ``c`` itself, an integral float equal to ``c`` (``2.0``), a string
                                  that reads as one of these (``"2"``, ``" 2.0 "``)
anything else                     ``c`` itself only
================================  =====================================================================
"""

import numbers

import numpy as np
import pandas as pd
import pandas.api.types as pdt

__all__ = ["align_to_categories", "category_kind"]

_BOOL_WORDS = {"true": True, "false": False}


def category_kind(categories):
    """Which mapping the categories of a column take: ``"bool"``, ``"integer"`` or None.

    Parameters
    ----------
    categories : list
        The categories of one column seen at fit.

    Returns
    -------
    str or None
        ``"bool"`` when every category is a bool (Python's or numpy's), ``"integer"`` when every one
        is an integer and none a bool, else None (also for no category).
    """
    if not categories:
        return None
    if all(isinstance(value, (bool, np.bool_)) for value in categories):
        return "bool"
    if all(isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)) for value in categories):
        return "integer"
    return None


def _as_bool(value):
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, numbers.Number) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        return _BOOL_WORDS.get(value.strip().lower(), value)
    return value


def _as_integer(value):
    if isinstance(value, (bool, np.bool_)):
        return value  # True is no stand-in for the code 1
    if isinstance(value, numbers.Integral):
        return int(value)
    number = value
    if isinstance(value, str):
        text = value.strip()
        try:
            return int(text)
        except ValueError:
            try:
                number = float(text)
            except ValueError:
                return value
    if isinstance(number, numbers.Real) and np.isfinite(number) and float(number).is_integer():
        return int(number)
    return value


def align_to_categories(column, kind):
    """The values of ``column`` mapped to the categories they equal (see the module docstring).

    Parameters
    ----------
    column : pandas.Series
        One categorical column at predict; not modified.
    kind : {"bool", "integer"} or None
        From :func:`category_kind` of the column's categories at fit.

    Returns
    -------
    pandas.Series
        Never of category dtype: a categorical column is re-coded by its values, not by its
        codes. ``column`` itself when nothing needs mapping (``kind`` None, or a dtype whose
        values are already of the categories' type); else an object Series of the same index,
        the mapped values in place of the others and missing values kept.
    """
    dtype = column.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        column = column.astype(object)  # its values may still need mapping below
    elif kind == "bool" and pdt.is_bool_dtype(dtype) or kind == "integer" and pdt.is_integer_dtype(dtype):
        return column
    if kind is None:
        return column
    convert = _as_bool if kind == "bool" else _as_integer
    values = column.to_numpy(dtype=object)
    present = ~pd.isna(values)
    mapped = values.copy()
    mapped[present] = [convert(value) for value in values[present]]
    return pd.Series(mapped, index=column.index, name=column.name, dtype=object)
