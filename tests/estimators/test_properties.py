"""Property tests of both estimators on random tables: shapes, column dtypes, missing values, categories, labels."""

import hashlib

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sparsetab import SparseTabNetClassifier, SparseTabNetRegressor

FITS = settings(max_examples=20, deadline=None)
ERRORS = settings(max_examples=15, deadline=None)

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

NUMERIC_DTYPES = ["float32", "float64", "int64", "Int64", "bool"]


def _fingerprint(value):
    """SHA-256 of a DataFrame's values, index and dtypes, or of an array's bytes, dtype and shape."""
    digest = hashlib.sha256()
    if isinstance(value, pd.DataFrame):
        digest.update(pd.util.hash_pandas_object(value, index=True).values.tobytes())
        digest.update(repr(list(value.columns)).encode())
        digest.update(repr(list(value.dtypes)).encode())
    else:
        value = np.asarray(value)
        digest.update(value.tobytes() if value.dtype != object else repr(value.tolist()).encode())
        digest.update(repr((value.dtype, value.shape)).encode())
    return digest.hexdigest()


@st.composite
def numeric_columns(draw, n_rows):
    dtype = draw(st.sampled_from(NUMERIC_DTYPES))
    if dtype in ("float32", "float64"):
        width = 32 if dtype == "float32" else 64
        values = np.array(
            draw(st.lists(st.floats(-1e6, 1e6, width=width), min_size=n_rows, max_size=n_rows)), dtype=dtype
        )
        values[np.array(draw(st.lists(st.booleans(), min_size=n_rows, max_size=n_rows)))] = np.nan
        return values
    if dtype == "int64":
        return np.array(draw(st.lists(st.integers(-1000, 1000), min_size=n_rows, max_size=n_rows)), dtype=np.int64)
    if dtype == "Int64":
        values = draw(st.lists(st.one_of(st.none(), st.integers(-1000, 1000)), min_size=n_rows, max_size=n_rows))
        return pd.array(values, dtype="Int64")
    return np.array(draw(st.lists(st.booleans(), min_size=n_rows, max_size=n_rows)), dtype=bool)


@st.composite
def categorical_columns(draw, n_rows):
    categories = draw(st.lists(st.text("abcxyz", max_size=3), min_size=1, max_size=4, unique=True))
    values = draw(st.lists(st.one_of(st.none(), st.sampled_from(categories)), min_size=n_rows, max_size=n_rows))
    if draw(st.booleans()):  # category dtype, possibly with categories that never occur
        return pd.Categorical(values, categories=categories)
    return pd.Series(values, dtype=object)


@st.composite
def frames(draw, n_rows):
    """A DataFrame of 1..5 columns: numeric of random dtypes with NaN / NA, and string categorical with None."""
    n_numeric = draw(st.integers(0, 3))
    n_categorical = draw(st.integers(0 if n_numeric else 1, 2))
    columns = {f"num{j}": draw(numeric_columns(n_rows)) for j in range(n_numeric)}
    columns.update({f"cat{j}": draw(categorical_columns(n_rows)) for j in range(n_categorical)})
    order = draw(st.permutations(list(columns)))
    return pd.DataFrame({name: columns[name] for name in order})


@st.composite
def label_sets(draw):
    """(labels, kind): 2..4 distinct labels of one type."""
    kind = draw(st.sampled_from(["int", "str", "bool"]))
    if kind == "int":
        labels = draw(st.lists(st.integers(-5, 100), min_size=2, max_size=4, unique=True))
    elif kind == "str":
        labels = draw(st.lists(st.text("abcdefgh", min_size=1, max_size=5), min_size=2, max_size=4, unique=True))
    else:
        labels = [False, True]
    return labels


@st.composite
def classification_data(draw):
    n_rows = draw(st.one_of(st.just(2), st.integers(2, 40)))
    X = draw(frames(n_rows))
    labels = draw(label_sets())
    y = [draw(st.sampled_from(labels)) for _ in range(n_rows)]
    y[0], y[1] = labels[0], labels[1]  # at least two classes
    return X, np.asarray(y)


def _check_explanation(model, X, n_steps):
    explanation = model.explain(X)
    n_samples, n_features = X.shape
    importances, masks = explanation.importances, explanation.step_masks
    assert importances.shape == (n_samples, n_features)
    assert masks.shape == (n_samples, n_steps, n_features)
    assert explanation.step_importance.shape == (n_samples, n_steps)
    assert np.isfinite(importances).all() and np.isfinite(masks).all()
    assert (importances >= 0).all() and (masks >= 0).all()
    np.testing.assert_allclose(masks.sum(axis=2), 1.0, atol=1e-5)
    # Rows sum to 1, or are all zero exactly when every step importance of the row is 0 (documented in explain).
    totals = importances.sum(axis=1)
    idle = explanation.step_importance.sum(axis=1) == 0
    np.testing.assert_allclose(totals[~idle], 1.0, atol=1e-5)
    assert (importances[idle] == 0).all()
    assert list(explanation.feature_names) == [str(name) for name in X.columns]
    return explanation


def _single_rows(X):
    return [X.iloc[[i]] for i in range(X.shape[0])]


def _check_single_row_explanations(model, X, explanation):
    """Evaluation mode: each row explained alone gets the explanation it has inside the whole batch."""
    for i, row in enumerate(_single_rows(X)):
        alone = model.explain(row)
        np.testing.assert_allclose(alone.importances[0], explanation.importances[i], atol=1e-5)
        np.testing.assert_allclose(alone.step_masks[0], explanation.step_masks[i], atol=1e-5)


@FITS
@given(data=classification_data(), n_steps=st.integers(1, 2))
def test_classifier_properties_on_random_tables(data, n_steps, small_params):
    X, y = data
    before_X, before_y = _fingerprint(X), _fingerprint(y)
    model = SparseTabNetClassifier(**{**small_params, "n_steps": n_steps})
    assert model.fit(X, y) is model
    np.testing.assert_array_equal(model.classes_, np.unique(y))
    assert model.classes_.dtype == y.dtype
    assert model.n_features_in_ == X.shape[1]

    proba = model.predict_proba(X)
    assert proba.shape == (X.shape[0], len(model.classes_)) and proba.dtype == np.float64
    assert np.isfinite(proba).all()
    assert ((proba >= 0) & (proba <= 1)).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-9)
    prediction = model.predict(X)
    assert prediction.shape == (X.shape[0],) and prediction.dtype == y.dtype
    assert np.isin(prediction, model.classes_).all()
    np.testing.assert_array_equal(prediction, model.classes_[proba.argmax(axis=1)])
    explanation = _check_explanation(model, X, n_steps)

    # Evaluation mode: a row's outputs do not depend on the other rows of the batch.
    top_two = np.sort(proba, axis=1)[:, -2:]
    for i, row in enumerate(_single_rows(X)):
        np.testing.assert_allclose(model.predict_proba(row)[0], proba[i], atol=1e-5)
        if top_two[i, 1] - top_two[i, 0] > 1e-4:
            assert model.predict(row)[0] == prediction[i]
    _check_single_row_explanations(model, X, explanation)

    assert _fingerprint(X) == before_X and _fingerprint(y) == before_y


@st.composite
def regression_data(draw):
    n_rows = draw(st.one_of(st.just(2), st.integers(2, 40)))
    X = draw(frames(n_rows))
    n_outputs = draw(st.sampled_from([None, 1, 2]))  # None: 1-D y
    shape = (n_rows,) if n_outputs is None else (n_rows, n_outputs)
    offset = draw(st.floats(-1e4, 1e4))
    scale = draw(st.sampled_from([0.0, 1e-3, 1.0, 1e3]))  # 0: a constant target
    noise = np.array(draw(st.lists(st.floats(-1, 1), min_size=n_rows * (n_outputs or 1), max_size=n_rows * 2)))
    y = offset + scale * noise[: n_rows * (n_outputs or 1)].reshape(shape)
    return X, y


@FITS
@given(data=regression_data(), n_steps=st.integers(1, 2))
def test_regressor_properties_on_random_tables(data, n_steps, small_params):
    X, y = data
    before_X, before_y = _fingerprint(X), _fingerprint(y)
    model = SparseTabNetRegressor(**{**small_params, "n_steps": n_steps})
    assert model.fit(X, y) is model
    targets = y.reshape(len(y), -1)
    assert model.n_outputs_ == targets.shape[1]
    np.testing.assert_allclose(model.target_mean_, targets.mean(axis=0), rtol=1e-12, atol=1e-12)
    std = targets.std(axis=0)
    np.testing.assert_allclose(model.target_scale_, np.where(std > 0, std, 1.0), rtol=1e-12)

    prediction = model.predict(X)
    assert prediction.shape == y.shape and prediction.dtype == np.float64
    assert np.isfinite(prediction).all()
    explanation = _check_explanation(model, X, n_steps)

    standardised = (prediction.reshape(len(y), -1) - model.target_mean_) / model.target_scale_
    for i, row in enumerate(_single_rows(X)):
        alone = model.predict(row)
        assert alone.shape == (1,) + y.shape[1:]
        np.testing.assert_allclose(
            (alone.reshape(1, -1)[0] - model.target_mean_) / model.target_scale_,
            standardised[i],
            rtol=1e-5,  # float32 outputs: relative precision, as outputs can be large after 2 epochs
            atol=1e-5,
        )
    _check_single_row_explanations(model, X, explanation)

    assert _fingerprint(X) == before_X and _fingerprint(y) == before_y


@FITS
@given(data=st.data())
def test_numpy_input_gives_the_same_model_as_the_numeric_frame(data, small_params):
    # A float array with NaN and the DataFrame of its columns (integer column labels) train the same network.
    n_rows = data.draw(st.integers(2, 40))
    n_columns = data.draw(st.integers(1, 4))
    X = np.array(
        data.draw(st.lists(st.floats(-100, 100), min_size=n_rows * n_columns, max_size=n_rows * n_columns))
    ).reshape(n_rows, n_columns)
    X[np.array(data.draw(st.lists(st.booleans(), min_size=X.size, max_size=X.size))).reshape(X.shape)] = np.nan
    y = np.array(data.draw(st.lists(st.integers(0, 2), min_size=n_rows, max_size=n_rows)))
    y[:2] = [0, 1]
    before = _fingerprint(X)
    from_array = SparseTabNetClassifier(**small_params).fit(X, y)
    from_frame = SparseTabNetClassifier(**small_params).fit(pd.DataFrame(X), y)
    assert not hasattr(from_array, "feature_names_in_")
    np.testing.assert_allclose(from_array.predict_proba(X), from_frame.predict_proba(pd.DataFrame(X)), atol=1e-6)
    for i in range(n_rows):
        np.testing.assert_allclose(from_array.predict_proba(X[i : i + 1])[0], from_array.predict_proba(X)[i], atol=1e-5)
    assert _fingerprint(X) == before


# ----------------------------------------------------------------------------- too little data


@ERRORS
@given(X=frames(1), y=st.sampled_from([0.0, -3.5, 1e3]))
def test_regressor_needs_two_rows(X, y, small_params):
    with pytest.raises(ValueError, match=r"Training needs at least 2 rows for batch normalisation; got n_samples=1"):
        SparseTabNetRegressor(**small_params).fit(X, [y])


@ERRORS
@given(X=frames(1), labels=label_sets())
def test_classifier_needs_two_rows_and_two_classes(X, labels, small_params):
    # One row holds one class: fit refuses it for having a single class ...
    with pytest.raises(ValueError, match=r"y contains only one class \(.*\); a classifier needs samples of at least 2"):
        SparseTabNetClassifier(**small_params).fit(X, np.asarray(labels[:1]))
    # ... and partial_fit, which takes the classes from `classes`, for having one row.
    model = SparseTabNetClassifier(**small_params)
    with pytest.raises(ValueError, match=r"Training needs at least 2 rows for batch normalisation; got n_samples=1"):
        model.partial_fit(X, np.asarray(labels[:1]), classes=np.asarray(labels))
    assert not model.__sklearn_is_fitted__()


@ERRORS
@given(n_rows=st.integers(1, 40), labels=label_sets(), data=st.data())
def test_a_single_class_is_refused(n_rows, labels, data, small_params):
    # Documented behaviour (SparseTabNetClassifier._encode_targets): y with one class raises a ValueError naming
    # it, and so does partial_fit with fewer than two classes; the estimator stays unfitted.
    X = data.draw(frames(n_rows))
    y = np.asarray([labels[0]] * n_rows)
    model = SparseTabNetClassifier(**small_params)
    with pytest.raises(ValueError, match=r"y contains only one class \(.*\); a classifier needs samples of at least 2"):
        model.fit(X, y)
    assert not model.__sklearn_is_fitted__()
    with pytest.raises(ValueError, match=r"classes must list at least 2 class labels"):
        model.partial_fit(X, y, classes=np.asarray([labels[0]]))
