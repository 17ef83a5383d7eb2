"""Inputs are never modified: X (DataFrame, array, read-only memmap), y and sample_weight stay bit-for-bit the same."""

import hashlib

import numpy as np
import pandas as pd
import pytest

from sparsetab import SparseTabNetClassifier, SparseTabNetRegressor

N_ROWS = 48

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def _fingerprint(value):
    """SHA-256 of a DataFrame's values, index, columns and dtypes, or of an array's bytes, dtype and shape."""
    digest = hashlib.sha256()
    if isinstance(value, pd.DataFrame):
        digest.update(pd.util.hash_pandas_object(value, index=True).values.tobytes())
        for name, column in value.items():
            digest.update(repr((name, column.dtype)).encode())
            if column.dtype.kind in "biuf":  # the exact bits, NaN payloads and signed zeros included
                digest.update(column.to_numpy().tobytes())
    else:
        digest.update(np.asarray(value).tobytes())
        digest.update(repr((value.dtype, value.shape)).encode())
    return digest.hexdigest()


def _frame(rng):
    numeric = rng.normal(size=N_ROWS)
    numeric[::5] = np.nan
    small = rng.normal(size=N_ROWS).astype(np.float32)
    small[1::7] = np.nan
    nullable = pd.array(rng.integers(0, 10, N_ROWS), dtype="Int64")
    nullable[2::6] = pd.NA
    city = rng.choice(np.array(["paris", "rome", "oslo", None], dtype=object), N_ROWS)
    return pd.DataFrame(
        {
            "numeric": numeric,
            "small": small,
            "count": rng.integers(0, 100, N_ROWS),
            "nullable": nullable,
            "city": pd.Series(city, dtype=object),
            "town": city,  # pandas >= 3 infers its "str" dtype
            "colour": pd.Categorical(rng.choice(["red", "green", "blue"], N_ROWS), categories=["red", "green", "blue"]),
            "letters": pd.array(rng.choice(["a", "b", None], N_ROWS), dtype="string"),
            "flag": rng.random(N_ROWS) < 0.5,
        }
    )


def _array(rng):
    X = rng.normal(size=(N_ROWS, 4))
    X[rng.random(X.shape) < 0.15] = np.nan
    return X


def _readonly_memmap(path, values):
    writer = np.memmap(path, dtype=values.dtype, mode="w+", shape=values.shape)
    writer[:] = values
    writer.flush()
    del writer
    readonly = np.memmap(path, dtype=values.dtype, mode="r", shape=values.shape)
    assert not readonly.flags.writeable
    return readonly


def _targets(rng):
    labels = np.array(["no", "yes", "maybe"], dtype=object)[rng.integers(0, 3, N_ROWS)]
    weights = rng.uniform(0.5, 2.0, N_ROWS)
    weights[::9] = 0.0  # rows of zero weight are dropped before training: a copy, never in place
    return labels, weights


def _exercise_classifier(params, X, y, sample_weight, X_new, class_weight=None):
    """Every classifier method that takes X, y or sample_weight; returns the fitted models."""
    model = SparseTabNetClassifier(class_weight=class_weight, **params)
    assert model.fit(X, y, sample_weight=sample_weight) is model
    proba = model.predict_proba(X_new)
    assert proba.shape == (len(X_new), len(model.classes_)) and np.isfinite(proba).all()
    assert np.isin(model.predict(X_new), model.classes_).all()
    explanation = model.explain(X_new)
    assert np.isfinite(explanation.importances).all()
    assert model.score(X, y, sample_weight=sample_weight) >= 0
    incremental = SparseTabNetClassifier(**params)
    for _ in range(2):
        incremental.partial_fit(X, y, sample_weight=sample_weight, classes=np.unique(y))
    assert incremental.n_iter_ == 2
    assert np.isfinite(incremental.predict_proba(X_new)).all()
    return model


def _exercise_regressor(params, X, y, sample_weight, X_new):
    model = SparseTabNetRegressor(**params)
    assert model.fit(X, y, sample_weight=sample_weight) is model
    prediction = model.predict(X_new)
    assert prediction.shape == (len(X_new),) and np.isfinite(prediction).all()
    assert np.isfinite(model.explain(X_new).importances).all()
    model.partial_fit(X, y, sample_weight=sample_weight)
    assert np.isfinite(model.predict(X_new)).all()
    return model


@pytest.mark.parametrize("class_weight", [None, "balanced"])
def test_dataframe_y_and_sample_weight_are_not_modified(class_weight, small_params):
    rng = np.random.default_rng(0)
    X, X_new = _frame(rng), _frame(rng)
    X_new.loc[0, "city"] = "tokyo"  # unseen category
    y, sample_weight = _targets(rng)
    inputs = (X, X_new, y, sample_weight)
    before = [_fingerprint(value) for value in inputs]
    if class_weight is None:
        _exercise_classifier(small_params, X, y, sample_weight, X_new)
    else:  # partial_fit refuses "balanced": fit alone
        model = SparseTabNetClassifier(class_weight=class_weight, **small_params).fit(X, y, sample_weight=sample_weight)
        model.predict_proba(X_new)
        model.explain(X_new)
    y_numeric = rng.normal(size=N_ROWS) * 10 + 3
    before_numeric = _fingerprint(y_numeric)
    _exercise_regressor(small_params, X, y_numeric, sample_weight, X_new)
    assert [_fingerprint(value) for value in inputs] == before
    assert _fingerprint(y_numeric) == before_numeric
    assert X["city"].dtype == object and isinstance(X["colour"].dtype, pd.CategoricalDtype)
    assert X["letters"].dtype == "string" and X["nullable"].dtype == "Int64" and X["small"].dtype == np.float32
    assert X["numeric"].isna().sum() == len(range(0, N_ROWS, 5))  # NaN were not filled in place


def test_validation_inputs_are_not_modified(small_params):
    rng = np.random.default_rng(1)
    X, X_val = _frame(rng), _frame(rng)
    y, sample_weight = _targets(rng)
    y_val, sample_weight_val = _targets(rng)
    inputs = (X, X_val, y, y_val, sample_weight, sample_weight_val)
    before = [_fingerprint(value) for value in inputs]
    model = SparseTabNetClassifier(scoring="accuracy", **small_params).fit(
        X, y, sample_weight=sample_weight, X_val=X_val, y_val=y_val, sample_weight_val=sample_weight_val
    )
    assert len(model.validation_scores_) == model.n_iter_
    assert [_fingerprint(value) for value in inputs] == before


def test_numpy_array_with_nan_is_not_modified(small_params):
    rng = np.random.default_rng(2)
    X, X_new = _array(rng), _array(rng)
    y = rng.integers(0, 2, N_ROWS)
    _, sample_weight = _targets(rng)
    y_numeric = rng.normal(size=N_ROWS)
    inputs = (X, X_new, y, sample_weight, y_numeric)
    before = [_fingerprint(value) for value in inputs]
    nan_before = np.isnan(X).sum()
    _exercise_classifier(small_params, X, y, sample_weight, X_new)
    _exercise_regressor(small_params, X, y_numeric, sample_weight, X_new)
    assert [_fingerprint(value) for value in inputs] == before
    assert np.isnan(X).sum() == nan_before


def test_read_only_memmaps_can_be_fitted_and_are_not_modified(tmp_path, small_params):
    rng = np.random.default_rng(3)
    X = _readonly_memmap(tmp_path / "X.dat", _array(rng))
    X_new = _readonly_memmap(tmp_path / "X_new.dat", _array(rng))
    y = _readonly_memmap(tmp_path / "y.dat", rng.integers(0, 3, N_ROWS))
    sample_weight = _readonly_memmap(tmp_path / "w.dat", _targets(rng)[1])
    y_numeric = _readonly_memmap(tmp_path / "y_numeric.dat", rng.normal(size=N_ROWS))
    inputs = (X, X_new, y, sample_weight, y_numeric)
    before = [_fingerprint(value) for value in inputs]
    # Read-only buffers: any in-place write would raise "assignment destination is read-only".
    classifier = _exercise_classifier(small_params, X, y, sample_weight, X_new, class_weight={0: 1.0, 1: 2.0, 2: 0.5})
    np.testing.assert_array_equal(classifier.classes_, [0, 1, 2])
    _exercise_regressor(small_params, X, y_numeric, sample_weight, X_new)
    # A DataFrame over the read-only memmap (no copy) as well.
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"], copy=False)
    frame_new = pd.DataFrame(X_new, columns=["a", "b", "c", "d"], copy=False)
    before_frames = [_fingerprint(frame), _fingerprint(frame_new)]
    _exercise_classifier(small_params, frame, y, sample_weight, frame_new)
    _exercise_regressor(small_params, frame, y_numeric, None, frame_new)
    assert [_fingerprint(frame), _fingerprint(frame_new)] == before_frames
    assert [_fingerprint(value) for value in inputs] == before
    assert all(not value.flags.writeable for value in inputs)


def test_fitted_model_on_memmap_matches_model_on_writeable_copy(tmp_path, small_params):
    rng = np.random.default_rng(4)
    values = _array(rng)
    y = rng.integers(0, 2, N_ROWS)
    X = _readonly_memmap(tmp_path / "X.dat", values)
    on_memmap = SparseTabNetClassifier(**small_params).fit(X, y)
    on_copy = SparseTabNetClassifier(**small_params).fit(values.copy(), y)
    np.testing.assert_array_equal(on_memmap.predict_proba(X), on_copy.predict_proba(values))
    np.testing.assert_array_equal(on_memmap.loss_curve_, on_copy.loss_curve_)


def test_fit_does_not_modify_input(fast_params, make_people_frame):
    X, y = make_people_frame(100)
    X_before, y_before = X.copy(deep=True), y.copy(deep=True)
    model = SparseTabNetClassifier(max_epochs=2, **fast_params).fit(X, y)
    model.explain(X)
    pd.testing.assert_frame_equal(X, X_before)
    pd.testing.assert_series_equal(y, y_before)
