"""The schema fuzzer: random DataFrames through fit, predict_proba and explain (tests/schema_strategies.py).

About 30 fixed examples here (derandomized, so every run tries the same ones); the random exploration is
``python benchmarks/fuzz.py --examples 2000`` (benchmarks/results/fuzz.md), and each failure it finds
becomes an ``@example`` below.
"""

import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from schema_strategies import cases, check_case

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


@settings(max_examples=30, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_random_frames_fit_or_are_refused_by_name_and_predict_finite_probabilities(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # unseen categories, dtype shifts, far outside the range
        check_case(*case)
