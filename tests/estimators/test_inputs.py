"""Input checks, at predict time and at fit (test_input_errors): each bad input gets its documented behaviour and
a message naming what was expected.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse
import sklearn.exceptions
import torch
from sklearn.exceptions import NotFittedError

import sparsetab._inference
from sparsetab import SparseTabNetClassifier, SparseTabNetRegressor

pytestmark = [
    pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning"),
    pytest.mark.filterwarnings("ignore:X does not have valid feature names:UserWarning"),
]


def _people(make_people_frame, n_rows=120, seed=0):
    """The people frame without its bool column: city, age and noise; the labels as an array."""
    X, y = make_people_frame(n_rows, seed)
    return X.drop(columns="member"), y.to_numpy()


@pytest.fixture(scope="module")
def model(fast_params, make_people_frame):
    X, y = _people(make_people_frame)
    return SparseTabNetClassifier(max_epochs=2, **fast_params).fit(X, y)


@pytest.mark.parametrize(
    "make_input, error, message",
    [
        (lambda X: X.drop(columns="noise"), ValueError, "Feature names seen at fit time, yet now missing:\n- noise"),
        (lambda X: X.to_numpy()[:, :2], ValueError, "X has 2 features, but SparseTabNetClassifier is expecting 3"),
        (lambda X: X.rename(columns={"age": "years"}), ValueError, "Feature names unseen at fit time:\n- years"),
        (
            lambda X: X[["age", "city", "noise"]],
            ValueError,
            "Feature names must be in the same order as they were in fit",
        ),
        (lambda X: X.iloc[:0], ValueError, "X is empty: found array with 0 sample"),
        (lambda X: X["age"], ValueError, "Expected a 2-dimensional container but got <class 'pandas.Series'>"),
        (lambda X: X["age"].to_numpy(), ValueError, "Expected 2D array, got 1D array instead"),
        (lambda X: scipy.sparse.csr_matrix(X[["age", "noise"]].to_numpy()), TypeError, "does not accept sparse input"),
        (
            lambda X: X.assign(age=X["age"].astype(str)),
            ValueError,
            r"Column 'age' \(dtype .*\) is read as numeric .* holds 120 string value",
        ),
        (lambda X: X.assign(age=X["age"].where(X.index != 3, np.inf)), ValueError, r"infinite values .* 'age': 1"),
    ],
    ids=[
        "missing_column",
        "n_columns",
        "renamed",
        "reordered",
        "empty",
        "series",
        "1d",
        "sparse",
        "numeric_strings",
        "infinity",
    ],
)
def test_bad_predict_inputs_are_refused_with_a_clear_message(model, make_input, error, message, make_people_frame):
    X, _ = _people(make_people_frame)
    for method in (model.predict, model.predict_proba, model.explain):
        with pytest.raises(error, match=message):
            method(make_input(X))


def test_unseen_and_missing_categories_and_missing_numbers_are_predicted(model, make_people_frame):
    X, _ = _people(make_people_frame, 6, seed=1)
    X.loc[0, "city"] = "Tokyo"  # unseen at fit: reserved code 0
    X.loc[1, "city"] = None  # missing: reserved code 0 too
    X.loc[2, "age"] = np.nan  # missing number: learned fill value
    proba = model.predict_proba(X)
    assert np.isfinite(proba).all()
    same_city = X.assign(city=None)  # a missing and an unseen category are the same input to the network
    np.testing.assert_allclose(model.predict_proba(same_city)[:2], proba[:2], atol=1e-6)
    np.testing.assert_array_equal(model.transform_inputs(X)[1][:2, 0], [0, 0])


def test_numeric_strings_are_refused_at_fit_too(fast_params, make_people_frame):
    X, y = _people(make_people_frame)
    with pytest.raises(
        ValueError, match=r"Column 'age' \(dtype .*\) is read as numeric .* holds 120 string value.*pandas.to_numeric"
    ):
        SparseTabNetClassifier(categorical_features=["city"], max_epochs=2, **fast_params).fit(
            X.assign(age=X["age"].astype(str)), y
        )


def test_infinities_are_counted_over_all_rows_when_predicting_in_batches(model, monkeypatch, make_people_frame):
    monkeypatch.setattr(sparsetab._inference, "INFERENCE_BATCH_ROWS", 16)
    X, _ = _people(make_people_frame)
    X.loc[[3, 50, 99], "noise"] = -np.inf
    with pytest.raises(ValueError, match=r"'noise': 3\. "):
        model.predict(X)


def test_inputs_are_encoded_in_bounded_slices(model, monkeypatch, make_people_frame):
    monkeypatch.setattr(sparsetab._inference, "INFERENCE_BATCH_ROWS", 40)
    X, _ = _people(make_people_frame, 100, seed=2)
    sizes = []
    transform = model._tabular_encoding.transform_with_range_report
    monkeypatch.setattr(
        model._tabular_encoding,
        "transform_with_range_report",
        lambda frame: sizes.append(len(frame)) or transform(frame),
    )
    proba = model.predict_proba(X)
    explanation = model.explain(X)
    assert sizes == [40, 40, 20] * 2
    monkeypatch.setattr(sparsetab._inference, "INFERENCE_BATCH_ROWS", 1000)
    np.testing.assert_allclose(proba, model.predict_proba(X), atol=1e-6)
    np.testing.assert_allclose(explanation.importances, model.explain(X).importances, atol=1e-6)


def test_non_finite_network_outputs_are_an_error_not_nan_predictions(fast_params):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 3))
    model = SparseTabNetRegressor(early_stopping=False, max_epochs=2, **fast_params).fit(X, X[:, 0])
    huge = X[:5].copy()
    huge[2, 1] = 1e300  # finite, but overflows float32
    assert np.isfinite(model.predict(huge)).all()  # clipped to the training range
    model._tabular_encoding.clip_ = False  # as an encoding restored from before clipping
    with pytest.raises(ValueError, match=r"not finite \(NaN or infinity\) for 1 row\(s\) of a batch, first at row 2"):
        model.predict(huge)
    with torch.no_grad():
        model.network_.head.bias.fill_(float("nan"))  # weights gone bad (e.g. edited by hand)
    with pytest.raises(ValueError, match="not finite"):
        model.predict(X[:5])


def _with_constant_columns(n_rows=300, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"signal": rng.normal(size=n_rows), "noise": rng.normal(size=n_rows)})
    X["stuck"] = 5.0  # a sensor stuck during the training window
    X["jitter"] = 5.0 + 1e-12 * rng.integers(0, 3, n_rows)  # a handful of values, a spread of 2e-12
    X["plant"] = "north"  # one category, never missing
    return X, (X["signal"] > 0).astype(int).to_numpy()


@pytest.mark.parametrize(
    "settings",
    [
        dict(numerical_embedding="piecewise_linear"),
        dict(numerical_embedding=None),
        dict(numerical_embedding="periodic"),
        dict(numerical_embedding="piecewise_linear", numerical_transform="quantile"),
        dict(numerical_embedding=None, entmax_mode="entmax15"),
        dict(numerical_embedding=None, entmax_mode="adaptive"),
    ],
    ids=["ple", "scalar", "periodic", "quantile", "entmax15", "adaptive"],
)
def test_columns_constant_at_fit_have_no_effect_and_importance_zero(settings, fast_params):
    # The input batch norm kept a variance of about 1e-12 for such a column, and a change of 0.1 at predict
    # moved a probability from 0.41 to 0.9999.
    X, y = _with_constant_columns()
    model = SparseTabNetClassifier(max_epochs=3, **fast_params, **settings).fit(X, y)
    assert model._network_config["constant_groups"] == [2, 3, 4]
    reference = model.predict_proba(X.iloc[:20])
    rng = np.random.default_rng(1)
    for value in (5.1, 0.0, -3.0, 1e6, 5.0 + 1e-12):
        for column in ("stuck", "jitter"):
            changed = X.iloc[:20].copy()
            changed[column] = value + rng.normal(size=20) * (value != 5.1)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # far outside the training range
                np.testing.assert_array_equal(model.predict_proba(changed), reference)
    changed = X.iloc[:20].assign(plant=["south", "north"] * 10)  # an unseen category
    np.testing.assert_array_equal(model.predict_proba(changed), reference)
    np.testing.assert_array_equal(model.feature_importances_[2:], 0.0)
    assert model.feature_importances_[0] > 0
    explanation = model.explain(X.iloc[:20])
    np.testing.assert_array_equal(explanation.step_masks[:, :, 2:], 0.0)
    np.testing.assert_allclose(explanation.step_masks.sum(axis=2), 1.0, atol=1e-5)


def test_a_constant_column_with_missing_values_is_informative_and_all_constant_columns_still_fit(fast_params):
    X, y = _with_constant_columns(120)
    X.loc[X.index[::3], "stuck"] = np.nan  # whether the sensor answered is a signal
    X.loc[X.index[::4], "plant"] = None
    model = SparseTabNetClassifier(max_epochs=1, **fast_params).fit(X, y)
    assert model._network_config["constant_groups"] == [3]
    # With every column constant, nothing would be left to attend to: no column is masked.
    constant = pd.DataFrame({"a": [1.0] * 60, "b": ["x"] * 60})
    model = SparseTabNetClassifier(max_epochs=1, **fast_params).fit(constant, np.arange(60) % 2)
    assert model._network_config["constant_groups"] == []
    np.testing.assert_allclose(model.explain(constant).step_masks.sum(axis=2), 1.0, atol=1e-5)


def test_a_group_is_masked_only_when_all_its_columns_are_constant(fast_params):
    X, y = _with_constant_columns(120)
    grouped = [["stuck", "jitter"], ["noise", "plant"]]
    model = SparseTabNetClassifier(max_epochs=1, grouped_features=grouped, **fast_params).fit(X, y)
    # groups in order of their first column: [signal], [noise, plant], [stuck, jitter]
    assert model._network_config["constant_groups"] == [2]


def test_a_missing_value_marker_in_a_numeric_column_is_named_with_the_fix():
    # Adult's raw files mark missing values with "?": the whole column then reads as text.
    X = pd.DataFrame({"age": ["39", "50", "?", "41"] * 5, "colour": ["red", "blue"] * 10})
    model = SparseTabNetClassifier(n_d=4, n_a=4, max_epochs=1, categorical_features=["colour"])
    with pytest.raises(
        ValueError, match=r"holds 20 string value\(s\), 5 of them not numbers \(e\.g\. '\?'; .*na_values=\['\?'\]"
    ):
        model.fit(X, [0, 1] * 10)


@pytest.mark.parametrize("decimal_kind", ["objects", "arrow"])
def test_decimal_columns_are_numbers(fast_params, decimal_kind):
    # Issue 33: Decimal objects (read_sql's NUMERIC) were one category per price; an Arrow decimal128 column with a
    # null failed in pandas.to_numeric. Both are the numbers a float column holds: the same model, bit for bit.
    import decimal

    pyarrow = pytest.importorskip("pyarrow")
    rng = np.random.default_rng(0)
    floats = pd.DataFrame({"price": np.round(rng.uniform(1, 100, 150), 2), "weight": rng.normal(size=150)})
    floats.loc[[3, 40], "price"] = np.nan
    y = np.nan_to_num(floats["price"].to_numpy()) - 10 * floats["weight"].to_numpy()
    if decimal_kind == "objects":
        prices = [None if np.isnan(value) else decimal.Decimal(f"{value:.2f}") for value in floats["price"]]
        decimals = floats.assign(price=pd.Series(prices, dtype=object))
    else:
        decimals = floats.astype({"price": pd.ArrowDtype(pyarrow.decimal128(10, 2))})
    params = dict(fast_params, max_epochs=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # no "numbers stored as text" or other warning
        warnings.simplefilter("ignore", sklearn.exceptions.ConvergenceWarning)
        model = SparseTabNetRegressor(**params).fit(decimals, y)
        reference = SparseTabNetRegressor(**params).fit(floats, y)
    assert model._tabular_encoding.is_categorical_.tolist() == [False, False]
    np.testing.assert_array_equal(model.predict(decimals), reference.predict(floats))
    np.testing.assert_array_equal(reference.predict(decimals), reference.predict(floats))


@pytest.mark.parametrize("kind", ["python floats", "numpy floats", "floats and ints"])
def test_object_columns_of_floats_are_numbers(fast_params, kind):
    # An object column of floats (astype(object), a concat with text columns, some database drivers) was one
    # category per distinct value, about one per row: test R^2 near 0 where the float column gave 0.999.
    rng = np.random.default_rng(0)
    floats = pd.DataFrame({"dose": np.round(rng.normal(size=150), 3), "weight": rng.normal(size=150)})
    floats.loc[[3, 40], "dose"] = np.nan
    y = np.nan_to_num(floats["dose"].to_numpy()) - floats["weight"].to_numpy()
    values = {
        "python floats": [None if np.isnan(value) else float(value) for value in floats["dose"]],
        "numpy floats": [np.nan if np.isnan(value) else np.float64(value) for value in floats["dose"]],
        # A whole number held as an int beside floats, as a JSON reader gives 2 for 2.0.
        "floats and ints": [
            None if np.isnan(value) else int(value) if value == 1.0 else float(value)
            for value in floats["dose"].where(floats.index % 5 != 0, 1.0)
        ],
    }[kind]
    objects = floats.assign(dose=pd.Series(values, dtype=object))
    reference_frame = floats.assign(dose=pd.to_numeric(objects["dose"]))
    untouched = objects.copy()
    params = dict(fast_params, max_epochs=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        warnings.simplefilter("ignore", sklearn.exceptions.ConvergenceWarning)
        model = SparseTabNetRegressor(**params).fit(objects, y)
        reference = SparseTabNetRegressor(**params).fit(reference_frame, y)
    assert model._tabular_encoding.is_categorical_.tolist() == [False, False]
    np.testing.assert_array_equal(model.predict(objects), reference.predict(reference_frame))
    pd.testing.assert_frame_equal(objects, untouched)  # the user's frame keeps its object column


def test_an_object_column_of_decimals_and_floats_is_numbers(fast_params):
    # A read_sql frame concatenated with a float one: infer_dtype says "mixed", and the column was one category
    # per value. Bools beside numbers stay categorical (True is an int to Python, not a measurement).
    import decimal

    rng = np.random.default_rng(0)
    dose = np.round(rng.normal(size=120), 3)
    values = [decimal.Decimal(f"{value:.3f}") if i % 2 else float(value) for i, value in enumerate(dose)]
    mixed = pd.DataFrame({"dose": pd.Series(values, dtype=object), "x": rng.normal(size=120)})
    floats = mixed.assign(dose=dose)
    params = dict(fast_params, max_epochs=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sklearn.exceptions.ConvergenceWarning)
        model = SparseTabNetRegressor(**params).fit(mixed, dose)
        reference = SparseTabNetRegressor(**params).fit(floats, dose)
        assert model._tabular_encoding.is_categorical_.tolist() == [False, False]
        np.testing.assert_array_equal(model.predict(mixed), reference.predict(floats))
        flags = mixed.assign(dose=pd.Series([True, 2.5] * 60, dtype=object))
        flagged = SparseTabNetRegressor(**dict(params, max_epochs=1)).fit(flags, dose)
    assert flagged._tabular_encoding.is_categorical_.tolist() == [True, False]


def test_object_columns_of_ints_stay_categorical(fast_params):
    # Integer codes of categories (a store number, a ZIP code read as int) are common: only floats turn numeric.
    codes = pd.Series([101, 205, None, 101, 307] * 20, dtype=object)
    X = pd.DataFrame({"store": codes, "x": np.arange(100.0)})
    model = SparseTabNetRegressor(**dict(fast_params, max_epochs=1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sklearn.exceptions.ConvergenceWarning)
        model.fit(X, np.arange(100.0))
    assert model._tabular_encoding.is_categorical_.tolist() == [True, False]
    assert sorted(model.categories_["store"]) == [101, 205, 307]


@pytest.mark.parametrize("with_nulls", [False, True])
def test_arrow_backed_columns_behave_like_their_pandas_counterparts(fast_params, with_nulls):
    # Issue 33: with dtype_backend="pyarrow" a dictionary (categorical) column was refused as numeric, and an
    # Arrow string column with nulls warned that its words were "numbers stored as text".
    pyarrow = pytest.importorskip("pyarrow")
    rng = np.random.default_rng(1)
    n_rows = 160
    frame = pd.DataFrame(
        {
            "plan": pd.Categorical(rng.choice(["basic", "gold"], n_rows), categories=["basic", "gold", "unused"]),
            "city": rng.choice(["Paris", "Oslo", "Lima"], n_rows).astype(object),
            "code": rng.choice(["10", "20", "30"], n_rows).astype(object),  # digits as text: warned in both
            "income": rng.lognormal(10, 1, n_rows),
            "member": rng.random(n_rows) > 0.5,
        }
    )
    if with_nulls:
        frame.loc[::7, "plan"] = np.nan
        frame.loc[1::9, ["city", "code"]] = None
        frame.loc[2::11, "income"] = np.nan
    y = np.where((frame["city"] == "Oslo") | (frame["income"] > 3e4), "yes", "no")
    arrow = pyarrow.Table.from_pandas(frame, preserve_index=False).to_pandas(types_mapper=pd.ArrowDtype)
    assert isinstance(arrow["plan"].dtype, pd.ArrowDtype) and isinstance(arrow["city"].dtype, pd.ArrowDtype)
    params = dict(fast_params, max_epochs=2)
    fits = {}
    for name, X in (("pandas", frame), ("arrow", arrow)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fits[name] = SparseTabNetClassifier(**params).fit(X, y)
        fits[name + " warnings"] = sorted(str(w.message) for w in caught if w.category is UserWarning)
    assert fits["arrow warnings"] == fits["pandas warnings"]
    assert len(fits["pandas warnings"]) == 1 and "'code' holds numbers stored as text" in fits["pandas warnings"][0]
    pandas_model, arrow_model = fits["pandas"], fits["arrow"]
    encoding, arrow_encoding = pandas_model._tabular_encoding, arrow_model._tabular_encoding
    assert encoding.is_categorical_.tolist() == [True, True, True, False, True]
    assert arrow_encoding.is_categorical_.tolist() == encoding.is_categorical_.tolist()
    categories = {j: list(values) for j, values in encoding.categories_.items()}
    assert {j: list(values) for j, values in arrow_encoding.categories_.items()} == categories
    assert categories[0] == ["basic", "gold"]
    np.testing.assert_array_equal(arrow_model.predict_proba(arrow), pandas_model.predict_proba(frame))
    np.testing.assert_array_equal(pandas_model.predict_proba(arrow), pandas_model.predict_proba(frame))
    assert isinstance(arrow["plan"].dtype, pd.ArrowDtype)  # the user's frame is as it was


def test_input_errors(fast_params, make_people_frame):
    X, y = make_people_frame(60)
    model = SparseTabNetClassifier(max_epochs=1, **fast_params)
    with pytest.raises(NotFittedError):
        model.predict(X)
    with pytest.raises(ValueError, match="only one class"):
        model.fit(X, np.zeros(60))
    with pytest.raises(ValueError, match="X_val and y_val must be given together"):
        model.fit(X, y, X_val=X)
    with pytest.raises(ValueError, match="sample_weight_val was given without X_val"):
        model.fit(X, y, sample_weight_val=np.ones(60))
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        model.fit(X, y, X_val=X, y_val=y[:10])
    with pytest.raises(ValueError, match="y_val contains labels not seen in y"):
        model.fit(X, y, X_val=X.iloc[:2], y_val=["no", "maybe"])
    with pytest.raises(TypeError, match="sparse"):
        import scipy.sparse

        model.fit(scipy.sparse.csr_matrix(np.ones((60, 4))), y)
    model.fit(X, y)
    with pytest.raises(ValueError, match="feature names"):
        model.predict(X[["age", "city", "noise", "member"]])
    with pytest.raises(ValueError, match="y contains 1 NaN and 0 infinite value"):
        SparseTabNetRegressor(max_epochs=1).fit(np.ones((5, 2)), [1.0, np.nan, 2, 3, 4])
    targets = np.ones((5, 3))
    targets[0, 2] = targets[1, 2] = np.nan
    targets[3, 0] = -np.inf
    with pytest.raises(ValueError, match=r"y contains 2 \(column 2: 2\) NaN and 1 \(column 0: 1\) infinite"):
        SparseTabNetRegressor(max_epochs=1).fit(np.ones((5, 2)), targets)
    with pytest.raises(ValueError, match="y contains 2 missing label"):
        SparseTabNetClassifier(max_epochs=1).fit(np.ones((5, 2)), np.array(["a", None, "b", np.nan, "a"], dtype=object))


class _ConvertsOnly:
    """An array-like that only converts (``__array__``), like scikit-learn's _NotAnArray: no indexing."""

    def __init__(self, values):
        self._values = np.asarray(values)

    def __array__(self, dtype=None, copy=None):
        return self._values if dtype is None else self._values.astype(dtype)

    def __len__(self):
        return len(self._values)


@pytest.mark.parametrize("early_stopping", ["auto", True])
@pytest.mark.parametrize("estimator", [SparseTabNetClassifier, SparseTabNetRegressor])
def test_array_likes_that_only_convert_fit_with_held_out_rows(fast_params, estimator, early_stopping):
    # 120 rows: "auto" holds out rows to choose the epochs, True to stop early; both index y for the scorer.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    y = (X[:, 0] > 0).astype(int) if estimator is SparseTabNetClassifier else X[:, 0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sklearn.exceptions.ConvergenceWarning)
        model = estimator(**fast_params, max_epochs=2, early_stopping=early_stopping).fit(X, _ConvertsOnly(y))
        reference = estimator(**fast_params, max_epochs=2, early_stopping=early_stopping).fit(X, y)
    assert model.validation_scores_ == reference.validation_scores_
    np.testing.assert_array_equal(model.predict(X), reference.predict(X))


@pytest.mark.parametrize("estimator", [SparseTabNetClassifier, SparseTabNetRegressor])
def test_array_likes_that_only_convert_fit_with_rows_of_zero_weight(fast_params, estimator):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int) if estimator is SparseTabNetClassifier else X[:, 0]
    weights = np.r_[np.zeros(10), np.ones(50)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sklearn.exceptions.ConvergenceWarning)
        model = estimator(**fast_params, max_epochs=2).fit(X, _ConvertsOnly(y), sample_weight=weights)
        reference = estimator(**fast_params, max_epochs=2).fit(X[10:], y[10:])
    np.testing.assert_array_equal(model.predict(X), reference.predict(X))
