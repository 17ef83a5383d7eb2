"""Fixtures shared by every test: one torch thread, the fast estimator configurations and the data makers.

The configurations and makers are plain module-level names as well, so that benchmarks/learning_bounds.py
(which imports this module: ``from tests import conftest``) measures the learning tests on exactly the data
and settings they use.
The fixtures hand out read-only mappings: a test that changed a shared configuration would change the
tests that run after it, in an order that pytest-randomly draws anew on every run.
"""

import warnings
from types import MappingProxyType

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.exceptions import ConvergenceWarning

import sparsetab._runtime

# Small networks that fit in a fraction of a second; each test adds max_epochs and what it tests.
FAST_PARAMS = MappingProxyType(dict(n_d=4, n_a=4, n_steps=2, virtual_batch_size=32, batch_size=64, random_state=0))
# One GLU layer per block and two epochs: the property and immutability tests fit many random tables.
SMALL_PARAMS = MappingProxyType(dict(FAST_PARAMS, n_independent=1, n_shared=1, max_epochs=2))
# One decision step and one GLU layer per block: the meta-estimator tests fit many clones.
ONE_STEP_PARAMS = MappingProxyType(dict(FAST_PARAMS, n_steps=1, n_independent=1, n_shared=1))

# The training-loop settings of the tests that call train_network directly: no patience and no
# decay, so that a test states the one setting it is about.
TRAINING_CONFIG_DEFAULTS = MappingProxyType(
    dict(
        batch_size=1024,
        max_epochs=5,
        learning_rate=0.02,
        learning_rate_decay=1.0,
        max_grad_norm=1.0,
        lambda_sparse=1e-3,
        n_iter_no_change=100,
        tol=0.0,
        early_stopping=False,
        verbose=0,
    )
)


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    # The tiny tensors of the tests gain nothing from intra-op threads, and on a
    # loaded machine every parallel op waits for a descheduled sibling thread,
    # which made single tests 20x slower. Restored after each module.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def fast_params():
    """Read-only FAST_PARAMS: combine with ``dict(fast_params, max_epochs=3)`` or ``**fast_params``."""
    return FAST_PARAMS


@pytest.fixture
def three_torch_threads(monkeypatch):
    """torch at 3 threads in a process that may use 4 cores, whatever the machine; restored afterwards."""
    monkeypatch.setattr(sparsetab._runtime, "cpu_count", lambda: 4)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    before = torch.get_num_threads()
    torch.set_num_threads(3)
    yield 3
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def small_params():
    return SMALL_PARAMS


@pytest.fixture(scope="session")
def one_step_params():
    return ONE_STEP_PARAMS


# ----------------------------------------------------------------------------- data makers
def people_frame(n_rows=200, seed=0):
    """City (string), age, noise and member (bool) columns; the label is "yes" for Oslo or age > 55."""
    rng = np.random.default_rng(seed)
    city = rng.choice(["Paris", "Oslo", "Lima"], size=n_rows)
    age = rng.uniform(20, 70, size=n_rows)
    noise = rng.normal(size=n_rows)
    member = rng.random(n_rows) < 0.5
    label = np.where((city == "Oslo") | (age > 55), "yes", "no")
    X = pd.DataFrame({"city": city, "age": age, "noise": noise, "member": member})
    return X, pd.Series(label, name="target")


def classification_frame(n_rows=160, seed=0, missing_income_every=None):
    """Age, city (string), income and plan (category) columns; the label is "yes" for Oslo or age > 55.

    ``missing_income_every=k`` sets every k-th income to NaN (the columns drawn stay the same).
    """
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {
            "age": rng.uniform(20, 70, n_rows),
            "city": rng.choice(["Paris", "Oslo", "Lima"], n_rows),
            "income": rng.lognormal(10, 1, n_rows),
            "plan": pd.Categorical(rng.choice(["basic", "gold"], n_rows)),
        }
    )
    if missing_income_every:
        X.loc[::missing_income_every, "income"] = np.nan
    y = np.where((X["city"] == "Oslo") | (X["age"] > 55), "yes", "no")
    return X, y


def score_classes(n_rows=96, n_classes=2, seed=0):
    """Four normal columns and ``n_classes`` equal-sized classes cut from the score ``x0 + 0.5 x1``."""
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n_rows, 4))
    score = X[:, 0] + 0.5 * X[:, 1]
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1]))
    return X, y


def quiet_fit(model, *args, **kwargs):
    """``model.fit(*args, **kwargs)`` without its ConvergenceWarning (short fits stop at max_epochs on purpose)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(*args, **kwargs)


def training_config(**overrides):
    """A TrainingConfig of TRAINING_CONFIG_DEFAULTS with ``overrides``."""
    from sparsetab._training.loop import TrainingConfig  # imported here: a moved module fails its tests only

    return TrainingConfig(**{**TRAINING_CONFIG_DEFAULTS, **overrides})


@pytest.fixture(scope="session")
def make_people_frame():
    """people_frame: ``X, y = make_people_frame(n_rows, seed)``."""
    return people_frame


@pytest.fixture(scope="session")
def make_classification_frame():
    """classification_frame: ``X, y = make_classification_frame(n_rows, seed, missing_income_every=None)``."""
    return classification_frame


@pytest.fixture(scope="session")
def make_training_config():
    """training_config: ``make_training_config(max_epochs=3, early_stopping=True)``."""
    return training_config
