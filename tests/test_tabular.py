import decimal
import warnings

import numpy as np
import pandas as pd
import pytest

from sparsetab._tabular import TabularEncoding, to_frame


def _frame():
    return pd.DataFrame(
        {
            "age": [30, 40, 50, 60],
            "city": ["Paris", "Oslo", "Paris", None],
            "grade": pd.Categorical(["b", "a", "b", "a"], categories=["a", "b", "c"]),
            "member": [True, False, True, True],
            "income": pd.array([1, 2, None, 4], dtype="Int64").fillna(3),
            "ratio": [0.5, 1.5, 2.5, 3.5],
        }
    )


def test_auto_typing_from_dtypes():
    encoding = TabularEncoding("auto")
    encoding.fit_transform(_frame())
    assert encoding.is_categorical_.tolist() == [False, True, True, True, False, False]
    assert encoding.categories_ == {1: ["Oslo", "Paris"], 2: ["a", "b"], 3: [False, True]}
    assert encoding.cardinalities == [None, 3, 3, 3, None, None]


def test_codes_reserve_zero_for_missing_and_unseen_and_numeric_is_standardised():
    encoding = TabularEncoding("auto")
    out = encoding.fit_transform(_frame())
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out[:, 1], [2, 1, 2, 0])  # None -> 0
    np.testing.assert_allclose(out[:, 0], (np.array([30, 40, 50, 60]) - 45) / np.std([30, 40, 50, 60]), rtol=1e-6)
    new = _frame().assign(city=["Rome", "Oslo", np.nan, "Paris"], grade=pd.Categorical(["c", "b", "a", "a"]))
    encoded = encoding.transform(new)
    np.testing.assert_array_equal(encoded[:, 1], [0, 1, 0, 2])
    np.testing.assert_array_equal(encoded[:, 2], [0, 2, 1, 1])  # "c" was never seen at fit


def test_explicit_selection_by_name_index_and_mask():
    frame = _frame().assign(code=[3, 1, 3, 2])
    by_name = TabularEncoding(["city", "code"])
    by_name.fit_transform(frame.drop(columns=["grade", "member"]))
    assert by_name.is_categorical_.tolist() == [False, True, False, False, True]
    assert by_name.categories_[4] == [1, 2, 3]
    numeric = np.array([[1.0, 7.0], [2.0, 8.0], [1.0, 9.0]])
    by_index = TabularEncoding([0])
    np.testing.assert_array_equal(by_index.fit_transform(to_frame(numeric))[:, 0], [1, 2, 1])
    by_mask = TabularEncoding([False, True])
    assert by_mask.fit_transform(to_frame(numeric))[:, 1].tolist() == [1, 2, 3]


@pytest.mark.parametrize(
    "spec, message",
    [
        (["nope"], "not columns of X"),
        ([7], "indices must be in"),
        ([True, False], "boolean mask must have length"),
        ([[0, 1]], "must be 1-D"),
    ],
)
def test_bad_categorical_features_are_named(spec, message):
    with pytest.raises(ValueError, match=message):
        TabularEncoding(spec).fit_transform(_frame())


def test_datetime_column_is_a_clear_error():
    frame = pd.DataFrame({"when": pd.to_datetime(["2024-01-01", "2024-02-01"]), "x": [1.0, 2.0]})
    with pytest.raises(TypeError, match="Column 'when' has dtype datetime64"):
        TabularEncoding().fit_transform(frame)


def test_numeric_missing_values_stay_nan_and_infinities_are_named():
    frame = pd.DataFrame({"a": [1.0, -np.inf, np.inf, 2.0], "b": [1.0, 2.0, np.nan, np.inf], "c": [1.0] * 4})
    with pytest.raises(ValueError, match=r"infinite values \(column: count\) 'a': 2, 'b': 1\. "):
        TabularEncoding().fit_transform(frame)
    frame = pd.DataFrame({"a": [1.0, np.nan, 3.0, None], "b": [np.nan] * 4, "c": pd.array([1, pd.NA, 3, 5], "Int64")})
    encoding = TabularEncoding()
    out = encoding.fit_transform(frame)
    # statistics over the observed values only: a -> mean 2, std 1; b (all missing) -> 0, 1; c -> mean 3, std 1.633
    np.testing.assert_allclose(encoding.center_, [2.0, 0.0, 3.0])
    np.testing.assert_allclose(encoding.scale_, [1.0, 1.0, np.sqrt(8 / 3)])
    np.testing.assert_array_equal(encoding.has_missing_, [True, True, True])
    np.testing.assert_allclose(out[:, 0], [-1.0, np.nan, 1.0, np.nan])
    assert np.isnan(out[:, 1]).all() and np.isnan(out[1, 2])


def test_huge_finite_values_do_not_overflow_the_standardisation():
    encoding = TabularEncoding()
    out = encoding.fit_transform(pd.DataFrame({"a": [1e300, -1e300, 0.0, 0.0]}))
    np.testing.assert_allclose(encoding.center_, [0.0])
    np.testing.assert_allclose(encoding.scale_, [np.sqrt(0.5) * 1e300])
    np.testing.assert_allclose(out[:, 0], [np.sqrt(2), -np.sqrt(2), 0.0, 0.0], rtol=1e-6)
    encoding = TabularEncoding()
    encoding.fit_transform(pd.DataFrame({"a": [1.0, 2.0]}))
    with pytest.raises(ValueError, match=r"Column 'a' \(dtype .*\) is read as numeric"):
        encoding.transform(pd.DataFrame({"a": ["one", "two"]}))


def test_input_is_not_modified():
    frame = _frame()
    before = frame.copy(deep=True)
    encoding = TabularEncoding()
    encoding.fit_transform(frame)
    encoding.transform(frame)
    pd.testing.assert_frame_equal(frame, before)


def test_numpy_object_columns_holding_numbers_are_numeric():
    array = np.array([[1, "a"], [2, "b"]], dtype=object)
    encoding = TabularEncoding()
    encoding.fit_transform(to_frame(array))
    assert encoding.is_categorical_.tolist() == [False, True]


@pytest.mark.parametrize("value", [{"foo": "bar"}, [1, 2], np.zeros(2), np.True_, pd.Timestamp(0)])
def test_category_values_that_are_not_strings_or_numbers_are_a_type_error(value):
    # np.True_ and Timestamp are not numbers.Number; a column of them alone is refused too
    if np.ndim(value) == 0:
        with pytest.raises(TypeError, match="the argument must be a string or a number"):
            TabularEncoding(categorical_features=[0]).fit_transform(
                pd.DataFrame({"c": pd.Series([value, None], dtype=object)})
            )
    values = ["red", "blue", None, 3]
    encoding = TabularEncoding()
    encoding.fit_transform(pd.DataFrame({"colour": pd.Series(values, dtype=object)}))
    values[1] = value
    bad = pd.DataFrame({"colour": pd.Series(values, dtype=object)})
    with pytest.raises(TypeError, match="Column 'colour' holds .* the argument must be a string or a number"):
        TabularEncoding().fit_transform(bad)
    with pytest.raises(TypeError, match="the argument must be a string or a number"):
        encoding.transform(bad)


def test_numbers_stored_as_text_warn_at_fit_and_a_list_of_categorical_columns_is_explained():
    frame = pd.DataFrame({"a": ["1.5", "2", None, "3"], "b": ["x", "y", "x", "y"], "c": [1.0, 2.0, 3.0, 4.0]})
    with pytest.warns(UserWarning, match="Column 'a' holds numbers stored as text"):
        encoding = TabularEncoding()
        encoding.fit_transform(frame)
    assert encoding.is_categorical_.tolist() == [True, True, False]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        TabularEncoding(["a", "b"]).fit_transform(frame)  # listed explicitly: no warning
    with pytest.raises(ValueError, match=r"Column 'b' \(dtype .*\) is read as numeric \(numeric at fit, or not in cat"):
        TabularEncoding(["a"]).fit_transform(frame)
    # a category-dtype column left out of an explicit list is numeric too, and the message says why
    frame = frame.assign(b=pd.Categorical(frame["b"]))
    with pytest.raises(ValueError, match=r"Column 'b' \(dtype category\) .* list replaces the automatic detection"):
        TabularEncoding(["a"]).fit_transform(frame)


def test_numpy_number_columns_encode_as_the_same_values_in_pandas_extension_dtypes():
    # numpy bool, integer and float columns take a one-copy path; the same values in pandas' nullable
    # dtypes go column by column through pandas.to_numeric. Both must give the same encoding.
    rng = np.random.default_rng(0)
    values = {
        "small": rng.integers(-5, 5, 50).astype(np.int8),
        "count": rng.integers(0, 10**6, 50).astype(np.uint32),
        "ratio": rng.normal(size=50).astype(np.float32),
        "wide": rng.normal(1e3, 10.0, size=50),
        "flag": rng.random(50) > 0.5,
    }
    plain = pd.DataFrame(values)
    extension = pd.DataFrame(
        {
            "small": pd.array(values["small"], dtype="Int8"),
            "count": pd.array(values["count"], dtype="UInt32"),
            "ratio": pd.array(values["ratio"], dtype="Float32"),
            "wide": pd.array(values["wide"], dtype="Float64"),
            "flag": pd.array(values["flag"], dtype="boolean"),
        }
    )
    # flag is a bool column, categorical under "auto"; listing none makes every column numeric
    encoding = TabularEncoding(categorical_features=[])
    encoded = encoding.fit_transform(plain)
    np.testing.assert_array_equal(encoding.transform(extension), encoded)
    np.testing.assert_allclose(
        encoded[:, 3], (values["wide"] - values["wide"].mean()) / values["wide"].std(), rtol=1e-5
    )
    plain.loc[7, "ratio"], plain.loc[9, "wide"] = np.inf, -np.inf
    with pytest.raises(ValueError, match=r"infinite values \(column: count\) 'ratio': 1, 'wide': 1\. "):
        encoding.transform(plain)


@pytest.mark.parametrize(
    "values",
    [
        ["red", "blue", None, np.nan, pd.NA],
        [b"red", b"blue", None],
        [1, 2, np.int64(3), None],
        [1.5, 2, np.float32(0.5), np.nan],
        [decimal.Decimal("1.5"), None],
        [1 + 2j, 3j],
        [None, np.nan],
        ["red", 3, 2.5, True, None],  # mixed: decided value by value, all accepted
    ],
)
def test_category_values_that_are_strings_numbers_or_missing_are_accepted(values):
    frame = pd.DataFrame({"c": pd.Series(values, dtype=object)})
    encoding = TabularEncoding(categorical_features=[0])
    codes = encoding.fit_transform(frame)[:, 0]
    assert (codes[frame["c"].isna().to_numpy()] == 0).all()
    np.testing.assert_array_equal(encoding.transform(frame)[:, 0], codes)
