import datetime
import decimal
import pickle
import warnings

import hypothesis.extra.numpy as hnp
import hypothesis.strategies as st
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from sklearn.preprocessing import QuantileTransformer

from sparsetab import SparseTabNetClassifier
from sparsetab._tabular.encoding import FLAT_TOLERANCE, TabularEncoding, quantile_count, to_frame, validate_frame


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


def test_a_column_without_a_string_name_is_named_with_its_position():
    # Integer labels are matched by position (scikit-learn checks string names only): a text column moved to
    # where a numeric one was read "Column np.int64(2) ... is read as numeric", which it never was by that name.
    frame = pd.DataFrame({0: [1.0, 2.0, 3.0], 1: [4.0, 5.0, 6.0], 2: ["a", "b", "a"]})
    encoding = TabularEncoding()
    encoding.fit_transform(frame)
    with pytest.raises(ValueError, match=r"^Column 'x0' \(label '2'\) at position 0 \(dtype (str|object)\) is read as"):
        encoding.transform(frame[[2, 0, 1]])
    # An array's columns are x0, x1, ... in explain() and the displays: the messages name them so.
    model = SparseTabNetClassifier(max_epochs=1, early_stopping=False, random_state=0)
    model.fit(np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]), [0, 1, 0, 1])
    with pytest.raises(ValueError, match=r"^Column 'x1' at position 1 \(dtype (str|object)\) is read as numeric"):
        model.predict(np.array([[1.0, "a"], [2.0, "b"]], dtype=object))
    with pytest.raises(ValueError, match=r"\(column: count\) 'x0' at position 0: 1\."):
        model.predict(np.array([[np.inf, 1.0], [2.0, 3.0]]))
    with pytest.raises(TypeError, match=r"^Column 'x1' at position 1 has dtype datetime64"):
        TabularEncoding().fit_transform(pd.DataFrame({0: [1.0, 2.0], 1: pd.to_datetime(["2024-01-01", "2024-02-01"])}))


@pytest.mark.parametrize("reset", [True, False], ids=["fit", "predict"])
def test_columns_of_the_same_name_are_named_in_the_error(reset):
    # narwhals' DuplicateError came through scikit-learn, without saying that it was about X.
    model = SparseTabNetClassifier()
    validate_frame(model, pd.DataFrame({"a": [1.0, 2.0], "b": [3.0, 4.0], "c": [5.0, 6.0]}), reset=True)
    frame = pd.DataFrame([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], columns=["a", "b", "a"])
    with pytest.raises(ValueError, match=r"^X has columns of the same name: 'a' \(2 times\)\. Each column"):
        validate_frame(model, frame, reset=reset)


@pytest.mark.parametrize(
    "column, advice",
    [
        (pd.to_datetime(["2024-01-01", "2024-02-01"]), "dtype datetime64.*Convert dates to numbers"),
        (np.array([1 + 2j, 3 - 1j]), "dtype complex128.*Split it into two real columns"),
        (pd.arrays.IntervalArray.from_breaks([0, 1, 2]), "dtype interval.*their left and right ends"),
    ],
    ids=["datetime", "complex", "interval"],
)
def test_an_unsupported_column_dtype_is_a_clear_error_with_advice_for_it(column, advice):
    # A complex column was told to "convert dates to numbers".
    frame = pd.DataFrame({"when": column, "x": [1.0, 2.0]})
    with pytest.raises(TypeError, match=f"Column 'when' has {advice}"):
        TabularEncoding().fit_transform(frame)


@pytest.mark.parametrize(
    "column, advice",
    [
        (pd.to_datetime(["2024-01-01", "2024-02-01"]), "datetime64.*Convert dates to numbers"),
        (pd.to_timedelta(["40D", "1D"]), "timedelta64.*Convert dates to numbers"),
        (pd.array([pd.Timestamp("2024-01-01")] * 2, dtype="timestamp[ns][pyarrow]"), "timestamp.*Convert dates"),
        (np.array([1 + 2j, 3 - 1j]), "complex128.*Split it into two real columns"),
        (pd.arrays.IntervalArray.from_breaks([0, 1, 2]), "interval.*their left and right ends"),
    ],
    ids=["datetime", "timedelta", "arrow-timestamp", "complex", "interval"],
)
def test_a_numeric_column_of_an_unsupported_dtype_at_transform_is_refused_as_at_fit(column, advice):
    # pandas.to_numeric read dates and durations as nanosecond counts (a prediction from 1.6e18, clipped), and numpy
    # dropped the imaginary part of complex numbers: both gave predictions without an error.
    encoding = TabularEncoding()
    encoding.fit_transform(pd.DataFrame({"when": [1.0, 2.0, 3.0], "x": [1.0, 2.0, 3.0]}))
    frame = pd.DataFrame({"when": column, "x": [1.0, 2.0]})
    with pytest.raises(TypeError, match=f"^Column 'when' was numeric at fit and has dtype {advice}"):
        encoding.transform(frame)
    with pytest.raises(TypeError, match="^Column 'when' was numeric at fit"):
        encoding.check(frame)


@pytest.mark.parametrize(
    "value, message",
    [
        (pd.Timestamp("2024-01-01"), "holds Timestamp values now .* Convert dates to numbers"),
        (datetime.date(2024, 1, 1), "holds date values now .* Convert dates to numbers"),
        (pd.Period("2024-01"), "holds Period values now .* Convert dates to numbers"),
        (pd.Interval(0, 1), r"holds Interval values now .* \(their left and right ends\)"),
        (complex(1, 1e9), r"holds complex numbers now \(e\.g\. \(1\+1000000000j\)\).* two real columns"),
    ],
)
def test_unsupported_values_in_an_object_column_are_refused_as_their_dtypes_are(value, message):
    # Complex numbers in an object column lost their imaginary part without an error; dates were "not numbers".
    encoding = TabularEncoding()
    encoding.fit_transform(pd.DataFrame({"when": [1.0, 2.0, 3.0]}))
    frame = pd.DataFrame({"when": pd.Series([value, value], dtype=object)})
    with pytest.raises(TypeError, match=f"^Column 'when' was numeric at fit and {message}"):
        encoding.transform(frame)


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


@pytest.mark.parametrize("value", [{"foo": "bar"}, [1, 2], np.zeros(2), object()])
def test_category_values_that_are_not_strings_or_numbers_are_a_type_error(value):
    # a column of them alone is refused too
    if np.ndim(value) == 0:
        with pytest.raises(TypeError, match="the argument must be a string, a number, a bool, a date or time"):
            TabularEncoding(categorical_features=[0]).fit_transform(
                pd.DataFrame({"c": pd.Series([value, None], dtype=object)})
            )
    values = ["red", "blue", None, 3]
    encoding = TabularEncoding()
    encoding.fit_transform(pd.DataFrame({"colour": pd.Series(values, dtype=object)}))
    values[1] = value
    bad = pd.DataFrame({"colour": pd.Series(values, dtype=object)})
    with pytest.raises(
        TypeError, match="Column 'colour' holds .* the argument must be a string, a number, a bool, a date or time"
    ):
        TabularEncoding().fit_transform(bad)
    with pytest.raises(TypeError, match="the argument must be a string, a number, a bool, a date or time"):
        encoding.transform(bad)


@pytest.mark.parametrize(
    "python_values, numpy_values",
    [
        ([True, False, None, True], [np.True_, np.False_, None, np.True_]),
        ([3, 7, None, 3], [np.int64(3), np.int32(7), None, np.int8(3)]),
        ([0.5, 2.0, None, 0.5], [np.float64(0.5), np.float32(2.0), None, np.float64(0.5)]),
        (["a", 1, None, True], ["a", np.int64(1), None, np.True_]),
    ],
)
@pytest.mark.parametrize("categorical", [True, False])
def test_numpy_scalars_in_object_columns_are_their_python_values(python_values, numpy_values, categorical):
    # np.True_ was refused as a category ("not a number"); a column written by numpy code holds numpy scalars,
    # and the same column read from JSON or a database holds Python ones: both must encode alike, in either
    # order between fit and predict.
    if not categorical and isinstance(python_values[0], str):
        return  # strings are categorical whatever categorical_features says
    columns = {"c": [0]} if categorical else {}
    python = pd.DataFrame({"c": pd.Series(python_values, dtype=object), "x": [0.0, 1.0, 2.0, 3.0]})
    numpy_frame = pd.DataFrame({"c": pd.Series(numpy_values, dtype=object), "x": [0.0, 1.0, 2.0, 3.0]})
    for fitted_on, other in ((python, numpy_frame), (numpy_frame, python)):
        encoding = TabularEncoding(categorical_features=columns.get("c", "auto"))
        encoded = encoding.fit_transform(fitted_on)
        np.testing.assert_array_equal(encoding.transform(other), encoded)
        np.testing.assert_array_equal(
            TabularEncoding(categorical_features=columns.get("c", "auto")).fit_transform(other), encoded
        )
    if categorical:
        assert encoding.is_categorical_.tolist() == [True, False]
        assert len(encoding.categories_[0]) == len({value for value in python_values if value is not None})


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
    # Text alone: the list comes first (the column is most likely categorical), then the missing-value marker
    message = r"holds text only \(e\.g\. 'x'\)\. At fit, a categorical column must be in a categorical_features list"
    with pytest.raises(ValueError, match=message + r".*na_values=\['x'\]"):
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


# ----------------------------------------------------------------------------- clipping and numerical_transform
def _column_frame(values):
    return pd.DataFrame({"x": np.asarray(values, dtype=np.float64)})


def test_standard_clips_to_the_training_range_then_standardises():
    encoding = TabularEncoding(numerical_transform="standard")
    encoding.fit_transform(_column_frame([1.0, 2.0, 3.0, 4.0]))
    assert encoding.clip_ and encoding.data_min_.tolist() == [1.0] and encoding.data_max_.tolist() == [4.0]
    out = encoding.transform(_column_frame([0.0, 10.0, 2.5, np.nan, 4000.0]))
    std = np.sqrt(1.25)  # of 1, 2, 3, 4 around 2.5
    np.testing.assert_allclose(out[:, 0], [(1 - 2.5) / std, (4 - 2.5) / std, 0.0, np.nan, (4 - 2.5) / std], rtol=1e-6)


def test_quantile_equals_scikit_learns_quantile_transformer_on_the_clipped_column():
    rng = np.random.default_rng(0)
    train = rng.lognormal(size=(300, 2))
    train[::9, 1] = np.nan
    encoding = TabularEncoding(numerical_transform="quantile", random_state=0)
    fitted = encoding.fit_transform(to_frame(train))
    reference = QuantileTransformer(n_quantiles=quantile_count(300), output_distribution="normal").fit(train)
    assert quantile_count(300) == 10  # max(min(300 // 30, 1000), 10)
    np.testing.assert_allclose(fitted, reference.transform(train), rtol=1e-6, atol=1e-6)
    new = rng.lognormal(size=(50, 2)) * rng.choice([1e-3, 1.0, 1e3], size=(50, 2))
    clipped = np.clip(new, np.nanmin(train, axis=0), np.nanmax(train, axis=0))
    np.testing.assert_allclose(encoding.transform(to_frame(new)), reference.transform(clipped), rtol=1e-6, atol=1e-6)
    assert np.isnan(fitted[::9, 1]).all() and not np.isnan(fitted[1::9, 1]).any()  # missing stays missing


@pytest.mark.parametrize(
    "n_rows, expected", [(1, 1), (5, 5), (10, 10), (299, 10), (3000, 100), (30000, 1000), (10**7, 1000)]
)
def test_quantile_count_rule(n_rows, expected):
    assert quantile_count(n_rows) == expected


@pytest.mark.parametrize("transform", ["standard", "quantile"])
def test_constant_all_missing_and_categorical_columns_keep_working(transform):
    frame = pd.DataFrame(
        {"constant": [5.0] * 6, "missing": [np.nan] * 6, "city": list("abcabc"), "x": [0.0, 1, 2, 3, 4, 5]}
    )
    encoding = TabularEncoding(numerical_transform=transform, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no all-NaN or n_quantiles warnings from numpy or scikit-learn
        out = encoding.fit_transform(frame)
        new = encoding.transform(frame.assign(constant=[5.0, 7.0, -1e9, 5, 5, 5], missing=[1.0, np.nan, 0, 0, 0, 0]))
    np.testing.assert_array_equal(out[:, 0], 0.0)
    assert np.isnan(out[:, 1]).all()
    np.testing.assert_array_equal(out[:, 2], [1, 2, 3, 1, 2, 3])
    np.testing.assert_array_equal(new[:, 0], 0.0)  # constant at fit: 0 whatever the value
    np.testing.assert_array_equal(new[:, 1], [0.0, np.nan, 0, 0, 0, 0])  # never seen at fit: 0, missing stays NaN
    np.testing.assert_array_equal(new[:, 3], out[:, 3])


def test_unknown_numerical_transform_is_named():
    with pytest.raises(ValueError, match=r"numerical_transform must be one of \('standard', 'quantile'\), got 'rank'"):
        TabularEncoding(numerical_transform="rank").fit_transform(_column_frame([1.0, 2.0]))


@pytest.mark.parametrize("transform", ["standard", "quantile"])
def test_state_and_pickle_round_trips_transform_identically(transform):
    rng = np.random.default_rng(1)
    frame = _frame().assign(ratio=rng.normal(size=4))
    encoding = TabularEncoding(numerical_transform=transform, random_state=3)
    encoding.fit_transform(frame)
    far = frame.assign(age=[-1e6, 35, 1e6, np.nan])
    expected = encoding.transform(far)
    for restored in (TabularEncoding.from_state(encoding.get_state()), pickle.loads(pickle.dumps(encoding))):
        assert restored.numerical_transform == transform and restored.clip_
        np.testing.assert_array_equal(restored.transform(far), expected)


def test_states_and_pickles_from_before_clipping_standardise_without_clipping():
    encoding = TabularEncoding()
    encoding.fit_transform(_column_frame([1.0, 2.0, 3.0, 4.0]))
    new_keys = ("numerical_transform", "random_state", "clip_", "data_min_", "data_max_", "quantiles_", "references_")
    old_state = {name: value for name, value in encoding.get_state().items() if name not in new_keys}
    old_dict = {
        name: value for name, value in vars(encoding).items() if name not in new_keys + ("quantile_transformer_",)
    }
    unpickled = TabularEncoding.__new__(TabularEncoding)
    unpickled.__setstate__(old_dict)  # what pickle.load does with an encoding pickled by the old code
    far = _column_frame([4000.0])
    for old in (TabularEncoding.from_state(old_state), unpickled):
        assert old.numerical_transform == "standard" and not old.clip_
        np.testing.assert_allclose(old.transform(far)[:, 0], [(4000 - 2.5) / np.sqrt(1.25)], rtol=1e-6)
    np.testing.assert_allclose(encoding.transform(far)[:, 0], [1.5 / np.sqrt(1.25)], rtol=1e-6)


def test_clipping_is_the_identity_on_the_training_rows():
    # So a default fit is bit-identical to one before clipping existed: the training rows are within range.
    rng = np.random.default_rng(2)
    frame = to_frame(rng.standard_cauchy(size=(500, 3)) * [1.0, 1e5, 1e-5])
    encoding = TabularEncoding()
    fitted = encoding.fit_transform(frame)
    encoding.clip_ = False
    np.testing.assert_array_equal(encoding.transform(frame), fitted)


@pytest.mark.parametrize("transform", ["standard", "quantile"])
def test_transforms_do_not_modify_the_input(transform):
    frame = to_frame(np.random.default_rng(3).normal(size=(40, 2)))
    before = frame.copy()
    encoding = TabularEncoding(numerical_transform=transform)
    encoding.fit_transform(frame)
    encoding.transform(frame * 1e4)
    pd.testing.assert_frame_equal(frame, before)


@settings(max_examples=40, deadline=None)
@given(
    transform=st.sampled_from(["standard", "quantile"]),
    train=hnp.arrays(np.float64, st.integers(2, 60), elements=st.floats(-1e6, 1e6)),
    new=hnp.arrays(np.float64, st.integers(1, 20), elements=st.floats(-1e300, 1e300)),
)
def test_any_finite_input_encodes_finite_and_within_the_transform_of_the_training_range(transform, train, new):
    encoding = TabularEncoding(numerical_transform=transform, random_state=0)
    encoding.fit_transform(_column_frame(train))
    bounds = encoding.transform(_column_frame([train.min(), train.max()]))[:, 0]
    out = encoding.transform(_column_frame(new))[:, 0]
    assert np.isfinite(out).all()
    assert (out >= bounds[0]).all() and (out <= bounds[1]).all()


def test_flat_and_constant_columns_follow_the_documented_rule():
    # spread <= FLAT_TOLERANCE * max(|min|, |max|): 4e-9 <= 5e-9 is flat, 6e-9 is not.
    frame = pd.DataFrame(
        {
            "flat": [5.0, 5.0 + 4e-9, 5.0],
            "varying": [5.0, 5.0 + 6e-9, 5.0],
            "zero": [0.0, 0.0, 0.0],
            "flat_with_missing": [2.0, np.nan, 2.0],
            "missing_everywhere": [np.nan, np.nan, np.nan],
            "one_category": ["a", "a", "a"],
            "one_category_and_missing": ["a", None, "a"],
            "two_categories": ["a", "b", "a"],
        }
    )
    assert FLAT_TOLERANCE == 1e-9
    for transform in ("standard", "quantile"):
        encoding = TabularEncoding(numerical_transform=transform)
        encoded = encoding.fit_transform(frame)
        assert encoding.flat_.tolist() == [True, False, True, True, True, False, False, False]
        assert encoding.constant_.tolist() == [True, False, True, False, True, True, False, False]
        np.testing.assert_array_equal(encoded[:, 0], 0.0)  # not standardised up to +-1
        if transform == "standard":
            assert np.ptp(encoded[:, 1]) > 1  # six parts in 10^9 of 5 are a signal, standardised
        np.testing.assert_array_equal(encoded[[0, 2], 3], 0.0)
        restored = TabularEncoding.from_state(encoding.get_state())
        np.testing.assert_array_equal(restored.transform(frame), encoded)
        assert restored.constant_.tolist() == encoding.constant_.tolist()
    state = encoding.get_state()
    del state["flat_"], state["constant_"]  # a model file written before the rule
    old = TabularEncoding.from_state(state)
    assert old.flat_ is None and old.constant_ is None


@settings(max_examples=25, deadline=None)
@given(
    values=hnp.arrays(np.float64, st.integers(2, 40), elements=st.one_of(st.floats(-1e6, 1e6), st.just(np.nan))),
    cuts=st.lists(st.integers(1, 39), max_size=4),
)
def test_merged_chunk_summaries_equal_the_summary_of_the_whole(values, cuts):
    # ColumnSummary.merge (Chan et al.'s pairwise update) against the summary of all rows at once.
    from sparsetab._tabular.encoding import TabularEncoding

    frame = pd.DataFrame({"x": values, "city": np.where(np.arange(len(values)) % 3 == 0, "Oslo", None)})
    encoding = TabularEncoding()
    encoding.resolve_columns(frame)
    bounds = sorted({cut for cut in cuts if cut < len(values)} | {0, len(values)})
    merged = None
    for start, stop in zip(bounds[:-1], bounds[1:]):
        part = encoding.summarise(frame.iloc[start:stop])
        merged = part if merged is None else merged.merge(part)
    whole = encoding.summarise(frame)
    assert merged.n_rows == whole.n_rows
    np.testing.assert_array_equal(merged.counts, whole.counts)
    np.testing.assert_allclose(merged.mean, whole.mean, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(merged.std, whole.std, rtol=1e-9, atol=1e-6)
    np.testing.assert_array_equal(merged.minimum, whole.minimum)
    np.testing.assert_array_equal(merged.maximum, whole.maximum)
    assert list(merged.categories[1]) == list(whole.categories[1]) and merged.category_missing == whole.category_missing


@settings(max_examples=60, deadline=None)
@given(
    fit_values=st.lists(st.sampled_from(["a", "b", "c", 1, 2, True, False]), min_size=1, max_size=12),
    predict_values=st.lists(st.sampled_from(["a", "b", "z", None, 1, 2, 3, True, False, "2", "true"]), max_size=20),
    kind=st.sampled_from(["mixed", "integer", "bool", "text"]),
)
def test_a_categorical_column_gets_the_codes_of_its_values_as_objects(fit_values, predict_values, kind):
    # The categorical dtype's path matches each category once and reads the rows through the column's codes;
    # it must give the codes the object path gives the same values (aligned bools and integers included).
    keep = {
        "mixed": lambda v: True,
        "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "bool": lambda v: isinstance(v, bool),
        "text": lambda v: isinstance(v, str),
    }[kind]
    fit_values = [v for v in fit_values if keep(v)] or {"integer": [1], "bool": [True], "text": ["a"]}.get(kind, ["a"])
    if kind == "mixed":
        fit_values = [str(v) for v in fit_values]  # one kind of value per column at fit
    encoding = TabularEncoding(categorical_features=[0])
    encoding.fit_transform(pd.DataFrame({"c": pd.Series(fit_values, dtype=object), "x": np.arange(len(fit_values))}))
    values = pd.Series(predict_values, dtype=object)
    as_objects = pd.DataFrame({"c": values, "x": np.zeros(len(values))})
    categorical_values = values.where(values.notna(), None).map(lambda v: v if v is None else str(v))
    for column in (values.astype("category"), categorical_values.astype("category")):
        as_category = pd.DataFrame({"c": column, "x": np.zeros(len(values))})
        expected_frame = pd.DataFrame({"c": column.astype(object), "x": np.zeros(len(values))})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # the dtype changed since fit: warned, tested elsewhere
            np.testing.assert_array_equal(encoding.transform(as_category), encoding.transform(expected_frame))
    assert encoding.transform(as_objects).shape == (len(values), 2)


def test_a_categorical_column_with_no_categories_or_only_missing_values_gets_code_zero():
    encoding = TabularEncoding(categorical_features=[0])
    encoding.fit_transform(pd.DataFrame({"c": ["a", "b", "a"], "x": [1.0, 2.0, 3.0]}))
    for column in (pd.Categorical([None, None]), pd.Categorical([None, None], categories=["a"])):
        encoded = encoding.transform(pd.DataFrame({"c": column, "x": [1.0, 2.0]}))
        np.testing.assert_array_equal(encoded[:, 0], [0.0, 0.0])
    with pytest.warns(UserWarning, match="1 of its values match no category seen at fit"):
        encoded = encoding.transform(pd.DataFrame({"c": pd.Categorical(["b", None, "q", "a"]), "x": [1.0] * 4}))
    np.testing.assert_array_equal(encoded[:, 0], [2.0, 0.0, 0.0, 1.0])
