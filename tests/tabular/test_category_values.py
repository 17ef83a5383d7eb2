"""sparsetab._tabular.category_values: values equal to a category as the user sees them, after a dtype change."""

import warnings

import numpy as np
import pandas as pd
import pytest

from sparsetab import SparseTabNetClassifier
from sparsetab._tabular.category_values import align_to_categories, category_kind

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def test_the_kind_of_categories():
    assert category_kind([False, True]) == "bool"
    assert category_kind([np.False_, np.True_]) == "bool"
    assert category_kind([1, np.int64(2), 3]) == "integer"
    assert category_kind([0, True]) is None  # a bool among integers is neither
    assert category_kind(["a", 1]) is None
    assert category_kind([1.0, 2.0]) is None
    assert category_kind([]) is None


def test_the_documented_table_value_by_value():
    bools = pd.Series([0, 1, 0.0, 1.0, "True", " false ", "TRUE", np.True_, None, 2, "yes"], dtype=object)
    expected = [False, True, False, True, True, False, True, True, None, 2, "yes"]
    assert align_to_categories(bools, "bool").tolist() == expected
    integers = pd.Series(
        [2.0, "3", " 4.0 ", 5, np.float32(6.0), 2.5, "2.5", True, None, "x", float("nan")], dtype=object
    )
    result = align_to_categories(integers, "integer").tolist()
    assert result[:5] == [2, 3, 4, 5, 6] and all(type(value) is int for value in result[:5])
    assert result[5:8] == [2.5, "2.5", True]  # not integral, or a bool: no integer code
    assert result[8] is None and result[9] == "x" and np.isnan(result[10])


def test_columns_of_the_categories_type_and_other_kinds_pass_through_unchanged():
    column = pd.Series([True, False])
    assert align_to_categories(column, "bool") is column
    column = pd.Series([1, 2], dtype="Int64")
    assert align_to_categories(column, "integer") is column
    column = pd.Series(["0", "1"])
    assert align_to_categories(column, None) is column


def test_the_input_column_is_not_modified():
    column = pd.Series([1.0, 0.0, None], dtype=object)
    before = column.copy()
    align_to_categories(column, "bool")
    pd.testing.assert_series_equal(column, before)


def _fitted(fast_params):
    rng = np.random.default_rng(0)
    n_rows = 300
    member = rng.random(n_rows) > 0.5
    code = rng.integers(1, 4, n_rows)
    X = pd.DataFrame({"a": rng.normal(size=n_rows), "member": member, "code": pd.Series(code, dtype=object)})
    y = (member ^ (code == 2)).astype(int)
    model = SparseTabNetClassifier(max_epochs=3, categorical_features=["member", "code"], **fast_params).fit(X, y)
    return model, X, member, code


@pytest.mark.parametrize(
    "change",
    [
        lambda X, member, code: X.assign(member=member.astype(int)),
        lambda X, member, code: X.assign(member=member.astype(float)),
        lambda X, member, code: X.assign(member=np.where(member, "True", "False")),
        lambda X, member, code: X.assign(member=np.where(member, "true", "FALSE")),
        lambda X, member, code: X.assign(member=pd.Series(member, dtype="boolean")),
        lambda X, member, code: X.assign(code=code.astype(float)),
        lambda X, member, code: X.assign(code=code.astype(str)),
        lambda X, member, code: X.assign(code=[f"{value}.0" for value in code]),
        lambda X, member, code: X.assign(code=pd.Series(code, dtype="Int64")),
    ],
    ids=[
        "bool as 0/1",
        "bool as 0.0/1.0",
        "bool as True/False",
        "bool in any case",
        "boolean",
        "int as float",
        "int as str",
        "int as '2.0'",
        "Int64",
    ],
)
def test_a_dtype_change_between_fit_and_predict_keeps_the_predictions(change, fast_params):
    # A CSV round trip turned every value into an unseen category: accuracy fell from 0.86 to 0.55 silently.
    model, X, member, code = _fitted(fast_params)
    changed = change(X, member, code)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # mapped: no warning either
        np.testing.assert_array_equal(model.predict_proba(changed), model.predict_proba(X))
    np.testing.assert_array_equal(model.explain(changed).importances, model.explain(X).importances)


def test_a_dtype_change_that_cannot_be_mapped_warns_naming_the_column_and_both_dtypes(fast_params):
    model, X, member, code = _fitted(fast_params)
    changed = X.assign(member=np.where(member, "yes", "no"))
    message = (
        "Column 'member' had dtype bool at fit and has dtype (object|str) now: 300 of its values match no category"
    )
    with pytest.warns(UserWarning, match=message):
        model.predict(changed)
    with pytest.warns(UserWarning, match="Column 'code' had dtype object at fit and has dtype float64 now: 1 of"):
        model.predict(X.assign(code=np.where(np.arange(len(X)) == 0, 2.5, code.astype(float))))
    restored = type(model)()  # a model file or pickle from before dtypes were kept maps but cannot name them
    restored.__dict__.update(model.__dict__)
    restored._tabular_encoding.category_dtypes_ = None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        restored.predict(changed)
