import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from sparsetab._tabular.feature_groups import resolve_feature_groups, sum_feature_groups

NAMES = ["age", "colour_red", "colour_blue", "size", "colour_green"]


def _resolved(groups, names=NAMES):
    out_names, members = resolve_feature_groups(groups, names)
    return list(out_names), [member.tolist() for member in members]


def test_groups_sit_where_their_first_member_was():
    # "colour" starts at position 1, "size" is a group of one by position, "age" is in no group.
    assert _resolved({"size": [3], "colour": ["colour_blue", "colour_red", 4]}) == (
        ["age", "colour", "size"],
        [[0], [1, 2, 4], [3]],
    )
    assert _resolved({"first": ["colour_green", "age"]}) == (
        ["first", "colour_red", "colour_blue", "size"],
        [[0, 4], [1], [2], [3]],
    )


def test_no_groups_and_single_members():
    assert _resolved({}) == (NAMES, [[0], [1], [2], [3], [4]])
    assert _resolved({"size": "size", "colour": np.array(["colour_red"])}, names=NAMES[:4]) == (
        ["age", "colour", "colour_blue", "size"],
        [[0], [1], [2], [3]],
    )
    out_names, _ = resolve_feature_groups({"red": [np.int64(1)]}, NAMES)
    assert out_names.dtype == object and list(out_names) == ["age", "red", "colour_blue", "size", "colour_green"]


@pytest.mark.parametrize(
    "groups, match",
    [
        ({"colour": ["colour_pink"]}, r"groups\['colour'\] names column 'colour_pink', which is not a feature name"),
        ({"colour": [5]}, r"groups\['colour'\] holds position 5, outside 0\.\.4"),
        ({"colour": [-1]}, r"groups\['colour'\] holds position -1, outside 0\.\.4"),
        ({"colour": [1.0]}, r"groups\['colour'\] holds 1\.0 of type float"),
        ({"colour": [True]}, r"groups\['colour'\] holds True of type bool"),
        ({"colour": []}, r"groups\['colour'\] is empty"),
        (
            {"colour": ["colour_red"], "warm": [1]},
            r"groups\['warm'\] lists column 'colour_red' \(position 1\), which is also in groups\['colour'\]",
        ),
        ({"colour": ["colour_red", 1]}, r"groups\['colour'\] lists column 'colour_red' \(position 1\), which is twice"),
        ({0: ["age"]}, r"groups keys must be group names \(str\), got 0 of type int"),
        ({"age": ["colour_red"]}, r"group named 'age', which is also the name of a column in no group"),
    ],
)
def test_bad_groups_name_the_group_and_the_value(groups, match):
    with pytest.raises(ValueError, match=match):
        resolve_feature_groups(groups, NAMES)


def test_a_name_among_positional_feature_names_says_how_to_name_the_members():
    # A Pipeline's transformer gave the estimator an array: its features are x0, x1, ..., and the groups of
    # feature_groups_from_transformer (without positions=True) name the transformer's output columns.
    with pytest.raises(ValueError, match=r"'pipeline__age', which is not a feature name; .* positions=True\)"):
        resolve_feature_groups({"age": ["pipeline__age"]}, ["x0", "x1", "x2"])
    with pytest.raises(ValueError, match=r"not a feature name; feature names are \[[^]]*\]\.$"):
        resolve_feature_groups({"colour": ["colour_pink"]}, NAMES)  # named features: no such hint


def test_groups_must_be_a_dict():
    with pytest.raises(TypeError, match=r"groups must be a dict .*got list"):
        resolve_feature_groups([["age"]], NAMES)


def test_a_group_may_take_the_name_of_its_own_member():
    assert _resolved({"age": ["age", "size"]}) == (
        ["age", "colour_red", "colour_blue", "colour_green"],
        [[0, 3], [1], [2], [4]],
    )


def test_sum_over_the_last_axis_keeps_rows_summing_to_one():
    masks = np.array(
        [[[0.1, 0.2, 0.3, 0.4, 0.0], [0.0, 0.5, 0.0, 0.25, 0.25]]], dtype=np.float32
    )  # (1 row, 2 steps, 5 features)
    before = masks.copy()
    _, members = resolve_feature_groups({"colour": ["colour_red", "colour_blue", "colour_green"]}, NAMES)
    summed = sum_feature_groups(masks, members)
    assert summed.dtype == np.float32 and summed.shape == (1, 2, 3)
    assert_allclose(summed, [[[0.1, 0.5, 0.4], [0.0, 0.75, 0.25]]], rtol=1e-6)
    assert_allclose(summed.sum(axis=-1), 1.0, rtol=1e-6)
    assert_array_equal(masks, before)
    assert_allclose(sum_feature_groups(np.array([1.0, 2.0, 3.0, 4.0, 5.0]), members), [1.0, 10.0, 4.0])
