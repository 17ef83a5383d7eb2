"""Tests of sparsetab._tabular.columns: column references of ``cat_emb_dim`` and ``grouped_features``.

The estimator-level tests (tests/estimators/test_columns.py) check that fit passes these errors on; here
the functions are called directly, for the accepted specs and for each error: its exact type and a
message naming the argument and the bad value.
"""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sparsetab._tabular.columns import attention_groups, column_position, embedding_dims

NAMES = pd.Index(["age", "city", "income", "plan"])
NUMPY = pd.RangeIndex(4)  # the columns of a frame built from a numpy array
IS_CATEGORICAL = np.array([False, True, False, True])


def _raises(call, *fragments):
    """Call and return the message of the ValueError (exactly that type) it raises, checking fragments."""
    with pytest.raises(ValueError) as excinfo:
        call()
    assert excinfo.type is ValueError
    message = str(excinfo.value)
    for fragment in fragments:
        assert fragment in message, (fragment, message)
    return message


# ----- column_position ---------------------------------------------------------------------
@pytest.mark.parametrize(
    "columns, key, expected",
    [
        (NAMES, "age", 0),
        (NAMES, "plan", 3),
        (NAMES, 2, 2),  # positions are accepted for named columns too
        (NAMES, -1, 3),
        (NAMES, -4, 0),
        (NUMPY, 0, 0),
        (NUMPY, -2, 2),
        (NUMPY, np.int64(3), 3),
        (NAMES, np.int32(-3), 1),
    ],
)
def test_column_position_accepts_names_and_positions(columns, key, expected):
    position = column_position(columns, key, "grouped_features")
    assert position == expected and type(position) is int


@settings(max_examples=40, deadline=None)
@given(n_columns=st.integers(1, 8), key=st.integers(-20, 20))
def test_column_position_of_an_integer_is_its_position_modulo_n_in_range_only(n_columns, key):
    columns = pd.RangeIndex(n_columns)
    if -n_columns <= key < n_columns:
        assert column_position(columns, key, "cat_emb_dim") == key % n_columns
    else:
        _raises(
            lambda: column_position(columns, key, "cat_emb_dim"),
            "cat_emb_dim refers to column ",
            f"column {key!r};",
            f"column index in [0, {n_columns})",
        )


@pytest.mark.parametrize("key", [4, -5, 100, True, False, 1.0, None, ("age",), b"age"])
def test_column_position_rejects_out_of_range_and_non_integer_keys(key):
    # bool is an int subclass, but True is no column reference; floats, None and tuples neither.
    _raises(
        lambda: column_position(NAMES, key, "cat_emb_dim"),
        "cat_emb_dim refers to column ",
        f"column {key!r};",
        "a column name of X (for a DataFrame with string column names) or a column index in [0, 4)",
    )


def test_column_position_rejects_an_unknown_name_and_lists_the_columns():
    message = _raises(
        lambda: column_position(NAMES, "height", "grouped_features"),
        "grouped_features refers to column 'height'",
        "not a column name of X",
        "['age', 'city', 'income', 'plan']",
    )
    # names are case sensitive
    _raises(lambda: column_position(NAMES, "Age", "grouped_features"), "column 'Age'")
    assert message.endswith(".")


@pytest.mark.parametrize("columns", [NUMPY, pd.Index([0, "city", 2]), pd.Index([1.5, 2.5])])
def test_column_position_rejects_a_name_when_the_columns_are_not_all_strings(columns):
    _raises(
        lambda: column_position(columns, "city", "cat_emb_dim"),
        "cat_emb_dim refers to column 'city' by name",
        "X has no string column names",
        f"by index in [0, {len(columns)})",
    )


# ----- embedding_dims ----------------------------------------------------------------------
def test_embedding_dims_of_one_width_repeats_it_for_every_column():
    assert embedding_dims(3, NAMES, IS_CATEGORICAL) == [3, 3, 3, 3]
    assert embedding_dims(1, pd.RangeIndex(2), np.array([True, True])) == [1, 1]


@pytest.mark.parametrize(
    "spec, expected",
    [
        ({}, [1, 1, 1, 1]),
        ({"city": 4}, [1, 4, 1, 1]),
        ({"city": 4, "plan": 2}, [1, 4, 1, 2]),
        ({1: 4, -1: 2}, [1, 4, 1, 2]),
        ({"plan": np.int64(5)}, [1, 1, 1, 5]),
    ],
)
def test_embedding_dims_from_a_dict_by_name_or_position(spec, expected):
    dims = embedding_dims(spec, NAMES, IS_CATEGORICAL)
    assert dims == expected
    assert all(type(width) is int for width in dims)


def test_embedding_dims_by_position_for_numpy_columns():
    assert embedding_dims({3: 6}, NUMPY, IS_CATEGORICAL) == [1, 1, 1, 6]


def test_embedding_dims_rejects_a_numeric_column_and_lists_the_categorical_ones():
    _raises(
        lambda: embedding_dims({"income": 2}, NAMES, IS_CATEGORICAL),
        "cat_emb_dim sets a width for column 'income', which is numeric",
        "categorical columns only (['city', 'plan'])",
    )
    # by position, the message names the key as given
    _raises(lambda: embedding_dims({0: 2}, NAMES, IS_CATEGORICAL), "for column 0, which is numeric")


@pytest.mark.parametrize("width", [0, -1, 2.0, "2", True, None])
def test_embedding_dims_rejects_a_width_that_is_not_a_positive_int(width):
    _raises(
        lambda: embedding_dims({"city": width}, NAMES, IS_CATEGORICAL),
        f"cat_emb_dim['city'] must be an int >= 1, got {width!r}.",
    )


@pytest.mark.parametrize(
    "spec, fragments",
    [
        ({"town": 2}, ["cat_emb_dim refers to column 'town'", "not a column name of X"]),
        ({7: 2}, ["cat_emb_dim refers to column 7;", "[0, 4)"]),
    ],
)
def test_embedding_dims_rejects_unknown_columns_with_the_argument_name(spec, fragments):
    _raises(lambda: embedding_dims(spec, NAMES, IS_CATEGORICAL), *fragments)


# ----- attention_groups --------------------------------------------------------------------
def test_attention_groups_none_is_none():
    assert attention_groups(None, NAMES) is None


@pytest.mark.parametrize(
    "spec, columns, expected",
    [
        ([], NAMES, [[0], [1], [2], [3]]),
        ([["age", "income"]], NAMES, [[0, 2], [1], [3]]),
        ([["plan", "city"]], NAMES, [[0], [1, 3], [2]]),  # members sorted, group placed at its first column
        ([["income", "plan"], ["city", "age"]], NAMES, [[0, 1], [2, 3]]),  # ordered by first column
        ([[2, -3]], NUMPY, [[0], [1, 2], [3]]),
        ([("age", 3)], NAMES, [[0, 3], [1], [2]]),  # tuples, names and positions mixed
        ([np.array([1, 2])], NUMPY, [[0], [1, 2], [3]]),
        ([["city"]], NAMES, [[0], [1], [2], [3]]),  # a group of one is a singleton
    ],
)
def test_attention_groups_partition_the_columns(spec, columns, expected):
    assert attention_groups(spec, columns) == expected


@st.composite
def _groupings(draw):
    n_columns = draw(st.integers(1, 8))
    labels = draw(st.lists(st.integers(0, 3), min_size=n_columns, max_size=n_columns))  # 0: not grouped
    groups = [[j for j in range(n_columns) if labels[j] == g] for g in (1, 2, 3)]
    groups = [draw(st.permutations(group)) for group in groups if group]
    order = draw(st.permutations(range(len(groups))))
    as_names = draw(st.booleans())
    spec = [[f"c{j}" if as_names else j for j in groups[g]] for g in order]
    columns = pd.Index([f"c{j}" for j in range(n_columns)]) if as_names else pd.RangeIndex(n_columns)
    return n_columns, groups, spec, columns


@settings(max_examples=40, deadline=None)
@given(_groupings())
def test_attention_groups_is_the_given_grouping_plus_singletons_ordered_by_first_column(case):
    n_columns, groups, spec, columns = case
    result = attention_groups(spec, columns)
    assert sorted(j for group in result for j in group) == list(range(n_columns))
    assert all(group == sorted(group) for group in result)
    assert [group[0] for group in result] == sorted(group[0] for group in result)
    grouped = {j for group in groups for j in group}
    assert [group for group in result if group[0] in grouped] == sorted(map(sorted, groups))
    assert [[j] for j in range(n_columns) if j not in grouped] == [g for g in result if g[0] not in grouped]


@pytest.mark.parametrize("group", [[], (), "age", 0, None, np.array([])])
def test_attention_groups_rejects_a_group_that_is_not_a_non_empty_list(group):
    _raises(
        lambda: attention_groups([["city"], group], NAMES),
        f"grouped_features[1] must be a non-empty list of column names or indices, got {group!r}.",
    )


def test_attention_groups_rejects_unknown_columns_with_the_argument_name():
    _raises(lambda: attention_groups([["age", "height"]], NAMES), "grouped_features refers to column 'height'")
    _raises(lambda: attention_groups([[0, 4]], NUMPY), "grouped_features refers to column 4;", "[0, 4)")
    _raises(lambda: attention_groups([["age"]], NUMPY), "grouped_features refers to column 'age' by name")


def test_attention_groups_rejects_a_column_listed_twice_in_a_group():
    _raises(
        lambda: attention_groups([["city"], ["age", "income", "age"]], NAMES),
        "grouped_features[1] lists column 'age' more than once",
    )
    # the same column by name and by position
    _raises(lambda: attention_groups([["plan", 3]], NAMES), "grouped_features[0] lists column 'plan' more than once")
    _raises(lambda: attention_groups([[1, -3]], NUMPY), "grouped_features[0] lists column '1' more than once")


def test_attention_groups_rejects_a_column_in_two_groups():
    _raises(
        lambda: attention_groups([["age", "city"], ["plan"], ["income", "city"]], NAMES),
        "grouped_features puts column 'city' in more than one group (groups 0 and 2)",
    )
    _raises(lambda: attention_groups([[0], [2], [-4]], NUMPY), "column '0' in more than one group (groups 0 and 2)")
