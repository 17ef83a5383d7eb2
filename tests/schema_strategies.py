"""Random DataFrames for the schema fuzzer: tests/test_schema_fuzz.py and benchmarks/fuzz.py share them.

:func:`cases` draws a training frame (columns of float, int, nullable Int64, bool, nullable boolean, str,
category, object mixing strings, numbers and None, and datetime; missing values), binary labels, and a
predict frame derived from it (categories never seen, columns reordered, the dtype shifts of a CSV round
trip). :func:`check_case` fits and predicts and asserts the contract; it raises AssertionError otherwise.
"""

import re

import numpy as np
import pandas as pd
from hypothesis import strategies as st

from sparsetab import SparseTabNetClassifier

KINDS = ("float", "int", "Int64", "bool", "boolean", "str", "category", "mixed", "datetime")
SHIFTS = ("none", "unseen", "reordered", "bool as int", "bool as text", "int as float", "int as text")
PARAMS = dict(n_d=4, n_a=4, n_steps=1, n_independent=1, n_shared=1, virtual_batch_size=8, batch_size=16, max_epochs=1)


@st.composite
def _column(draw, kind, n_rows):
    missing = draw(st.lists(st.booleans(), min_size=n_rows, max_size=n_rows)) if draw(st.booleans()) else None
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if kind == "float":
        values = pd.Series(rng.normal(size=n_rows) * draw(st.sampled_from([1e-3, 1.0, 1e6])))
    elif kind == "int":
        values = pd.Series(rng.integers(0, draw(st.integers(1, 50)), n_rows))
    elif kind == "Int64":
        values = pd.Series(rng.integers(-5, 5, n_rows), dtype="Int64")
    elif kind == "bool":
        values = pd.Series(rng.random(n_rows) > 0.5)
    elif kind == "boolean":
        values = pd.Series(rng.random(n_rows) > 0.5, dtype="boolean")
    elif kind == "str":
        values = pd.Series(rng.choice(["a", "b", "c", "d"][: draw(st.integers(1, 4))], n_rows), dtype=object)
    elif kind == "category":
        values = pd.Series(pd.Categorical(rng.choice(["x", "y", "z"], n_rows)))
    elif kind == "mixed":
        pool = ["a", 1, 2.5, None, "b", np.int64(3), True, pd.Timestamp("2020-01-01"), pd.Period("2020-01", "M")]
        values = pd.Series([pool[i] for i in rng.integers(0, len(pool), n_rows)], dtype=object)
    else:
        values = pd.Series(pd.date_range("2020-01-01", periods=n_rows, freq="D"))
    if missing is not None and kind not in ("bool", "int", "datetime"):  # these dtypes hold no missing value
        values = values.where(~np.asarray(missing))
    return values


@st.composite
def cases(draw):
    """A training frame, its labels, and a predict frame (see the module docstring)."""
    n_rows = draw(st.integers(16, 48))
    kinds = draw(st.lists(st.sampled_from(KINDS), min_size=1, max_size=5))
    X = pd.DataFrame({f"{kind}_{j}": draw(_column(kind, n_rows)) for j, kind in enumerate(kinds)})
    y = np.array(draw(st.lists(st.sampled_from(["no", "yes"]), min_size=n_rows, max_size=n_rows)), dtype=object)
    y[:2] = ["no", "yes"]  # both classes
    shift = draw(st.sampled_from(SHIFTS))
    X_new = X.copy()
    for name in X.columns:
        column = X[name]
        if shift == "unseen" and (column.dtype == object or isinstance(column.dtype, pd.CategoricalDtype)):
            X_new[name] = column.astype(object).where(np.arange(n_rows) % 3 != 0, "never seen")
        elif shift == "bool as int" and column.dtype == bool:
            X_new[name] = column.astype(int)
        elif shift == "bool as text" and column.dtype == bool:
            X_new[name] = column.map({True: "True", False: "false"})
        elif shift == "int as float" and str(column.dtype) in ("int64", "Int64"):
            X_new[name] = column.astype("float64")
        elif shift == "int as text" and str(column.dtype) in ("int64", "Int64"):
            X_new[name] = column.astype(str)
    if shift == "reordered":
        X_new = X_new[list(reversed(X_new.columns))]
    return X, y, X_new, shift


def _names_a_column(message, columns):
    return any(re.search(rf"\b{re.escape(str(name))}\b", message) for name in columns) or "feature names" in message


def _fingerprint(frame):
    return pd.util.hash_pandas_object(frame.astype(object).where(frame.notna(), None), index=True).to_numpy().copy(), [
        str(dtype) for dtype in frame.dtypes
    ]


def check_case(X, y, X_new, shift):
    """Fit and predict ``X`` / ``X_new`` and assert the contract of the schema fuzzer.

    Returns
    -------
    str
        ``"fitted"``, ``"refused at fit"`` or ``"refused at predict"``: what happened.
    """
    before, before_new = _fingerprint(X), _fingerprint(X_new)
    try:
        model = SparseTabNetClassifier(**PARAMS, random_state=0).fit(X, y)
    except (ValueError, TypeError) as error:
        assert _names_a_column(str(error), X.columns), f"fit refused without naming a column: {error}"
        outcome = "refused at fit"
    else:
        outcome = "fitted"
        for frame in (X, X_new):
            try:
                proba = model.predict_proba(frame)
                explanation = model.explain(frame)
            except ValueError as error:
                # The documented refusals: reordered columns, and numbers stored as text in a numeric column.
                documented = shift == "reordered" or (shift == "int as text" and "Numbers stored as text" in str(error))
                assert frame is X_new and documented, f"predict refused {shift!r}: {error}"
                assert _names_a_column(str(error), X.columns), f"predict refused without naming a column: {error}"
                outcome = "refused at predict"
                continue
            assert proba.shape == (len(frame), 2) and np.isfinite(proba).all(), "probabilities not finite"
            np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-6)
            assert np.isfinite(explanation.step_masks).all(), "masks not finite"
            np.testing.assert_allclose(explanation.step_masks.sum(axis=2), 1.0, atol=1e-4)
    for frame, fingerprint in ((X, before), (X_new, before_new)):
        now = _fingerprint(frame)
        assert np.array_equal(now[0], fingerprint[0]) and now[1] == fingerprint[1], "an input was modified"
    return outcome
