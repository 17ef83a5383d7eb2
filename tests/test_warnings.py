"""Every warning sparsetab emits names the user's line (sparsetab._warnings), directly and through a Pipeline."""

import contextlib
import os
import pickle
import warnings

import joblib
import numpy as np
import pandas as pd
import pytest
import sklearn
import torch
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import Pipeline

from sparsetab import SparseTabNetClassifier, SparseTabNetPretrainer, SparseTabNetRegressor
from sparsetab._warnings import user_stack_level, warn

SMALL = dict(n_d=4, n_a=4, n_steps=1, n_shared=1, n_independent=1, virtual_batch_size=16, batch_size=32, random_state=0)
rng = np.random.default_rng(0)
X = pd.DataFrame({"a": rng.normal(size=64), "b": rng.normal(size=64)})
y = (X["a"] > 0).astype(int).to_numpy()


def _recorded(call, category, match):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        call()
    found = [w for w in record if issubclass(w.category, category) and match in str(w.message)]
    assert found, f"no {category.__name__} matching {match!r}; got {[str(w.message) for w in record]}"
    return found


def _direct_and_pipeline(make_estimator, fit):
    """fit(estimator) on the estimator itself and on a one-step Pipeline around it."""
    return [lambda: fit(make_estimator()), lambda: fit(Pipeline([("model", make_estimator())]))]


CASES = {
    "convergence": (
        lambda: SparseTabNetClassifier(max_epochs=1, **SMALL),
        lambda model: model.fit(X, y),
        ConvergenceWarning,
        "max_epochs=1 reached",
    ),
    "numbers stored as text": (
        lambda: SparseTabNetRegressor(max_epochs=1, **SMALL),
        lambda model: model.fit(X.assign(code=[str(v) for v in range(64)]), X["a"]),
        UserWarning,
        "numbers stored as text",
    ),
    "divergence": (
        lambda: SparseTabNetRegressor(max_epochs=3, learning_rate=1e8, max_grad_norm=None, warmup_epochs=0, **SMALL),
        lambda model: model.fit(X, 1e3 * X["a"]),
        RuntimeWarning,
        "became non-finite",
    ),
    "NaN validation score": (
        lambda: SparseTabNetClassifier(max_epochs=2, early_stopping=True, scoring=lambda *args: np.nan, **SMALL),
        lambda model: model.fit(X, y),
        RuntimeWarning,
        "validation score is NaN",
    ),
    "pretrainer convergence": (
        lambda: SparseTabNetPretrainer(max_epochs=1, **SMALL),
        lambda model: model.fit(X),
        ConvergenceWarning,
        "max_epochs=1 reached",
    ),
}


@pytest.mark.parametrize("through", ["direct", "pipeline"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_fit_warnings_name_the_callers_line(case, through):
    make_estimator, fit, category, match = CASES[case]
    call = _direct_and_pipeline(make_estimator, fit)[through == "pipeline"]
    for record in _recorded(call, category, match):
        assert record.filename == __file__


def test_a_search_reports_the_warnings_at_the_callers_line():
    search = GridSearchCV(
        SparseTabNetClassifier(max_epochs=1, **SMALL), {"entmax_mode": ["sparsemax"]}, cv=KFold(2), n_jobs=1
    )
    for record in _recorded(lambda: search.fit(X, y), ConvergenceWarning, "max_epochs=1 reached"):
        assert record.filename == __file__


def test_standard_library_frames_between_the_user_and_sparsetab_are_skipped():
    # contextlib's ExitStack calls fit from its own (pure Python) __exit__: the warning still names this line.
    def fit_on_exit():
        with contextlib.ExitStack() as stack:
            stack.callback(SparseTabNetClassifier(max_epochs=1, **SMALL).fit, X, y)

    for record in _recorded(fit_on_exit, ConvergenceWarning, "max_epochs=1 reached"):
        assert record.filename == __file__


def test_without_a_user_frame_the_warning_names_the_library_line_that_called_fit():
    # A worker thread of a parallel search runs no code of the user's: rather than a line of the standard
    # library's thread pool, the warning names the first frame outside sparsetab (scikit-learn's).
    search = GridSearchCV(SparseTabNetClassifier(max_epochs=1, **SMALL), {"n_steps": [1, 2]}, cv=KFold(2), n_jobs=2)
    with joblib.parallel_backend("threading"):
        records = _recorded(lambda: search.fit(X, y), ConvergenceWarning, "max_epochs=1 reached")
    in_workers = [record for record in records if record.filename != __file__]  # the refit runs here
    assert in_workers
    assert all(record.filename.startswith(os.path.dirname(sklearn.__file__)) for record in in_workers)


def _interrupting_scorer():
    calls = []

    def scorer(estimator, X_val, y_val):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return 0.5

    return scorer


@pytest.mark.parametrize("through", ["direct", "pipeline"])
def test_interrupt_warning_names_the_callers_line(through):
    def make():
        return SparseTabNetClassifier(max_epochs=5, early_stopping=True, scoring=_interrupting_scorer(), **SMALL)

    call = _direct_and_pipeline(make, lambda model: model.fit(X, y))[through == "pipeline"]
    for record in _recorded(call, UserWarning, "Training interrupted"):
        assert record.filename == __file__


@pytest.mark.parametrize("through", ["direct", "pipeline"])
def test_unseen_categories_of_a_pretrainer_warn_at_the_callers_line(through):
    frame = X.assign(colour=pd.Categorical(["red", "blue"] * 32))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pretrainer = SparseTabNetPretrainer(max_epochs=1, **SMALL).fit(frame)
    other = frame.assign(colour=pd.Categorical(["green", "violet"] * 32))

    def make():
        return SparseTabNetClassifier(max_epochs=1, pretrained=pretrainer, **SMALL)

    call = _direct_and_pipeline(make, lambda model: model.fit(other, y))[through == "pipeline"]
    for record in _recorded(call, UserWarning, "not seen by the pretrainer"):
        assert record.filename == __file__


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
@pytest.mark.parametrize("through", ["direct", "pipeline"])
def test_unpickling_a_model_of_an_unavailable_device_warns_at_the_callers_line(through):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = SparseTabNetClassifier(max_epochs=1, **SMALL).fit(X, y)
    model._device = torch.device("cuda:0")
    blob = pickle.dumps(model if through == "direct" else Pipeline([("model", model)]))
    for record in _recorded(lambda: pickle.loads(blob), UserWarning, "fitted on device 'cuda:0'"):
        assert record.filename == __file__


def test_user_stack_level_counts_the_library_frames():
    # Called from a test (outside the libraries), the first frame is already the user's.
    assert user_stack_level() == 1
    with pytest.warns(UserWarning, match="plain") as record:
        warn("plain")
    assert record[0].filename == __file__
