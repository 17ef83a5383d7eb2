"""sparsetab._scoring: a scorer name tried on a baseline model before training."""

import numpy as np
import pytest
from sklearn.metrics import get_scorer

from sparsetab import SparseTabNetClassifier, SparseTabNetRegressor
from sparsetab._scoring import check_scorer_fits_targets

X = np.arange(12.0).reshape(6, 2)
THREE_CLASSES = np.array([0, 1, 2, 0, 1, 2])


def test_a_name_that_scores_the_targets_passes():
    assert (
        check_scorer_fits_targets(SparseTabNetClassifier(scoring="accuracy"), get_scorer("accuracy"), X, THREE_CLASSES)
        is None
    )
    assert check_scorer_fits_targets(SparseTabNetRegressor(scoring="r2"), get_scorer("r2"), X, X[:, 0]) is None


def test_a_name_that_cannot_is_a_value_error_naming_scoring_with_the_reason_chained():
    with pytest.raises(
        ValueError, match=r"^scoring='roc_auc' cannot score .* SparseTabNetClassifier: multi_class"
    ) as caught:
        check_scorer_fits_targets(SparseTabNetClassifier(scoring="roc_auc"), get_scorer("roc_auc"), X, THREE_CLASSES)
    assert isinstance(caught.value.__cause__, ValueError)
    assert "'roc_auc_ovr'" in str(caught.value) and "scoring='loss'" in str(caught.value)
    # The baseline's class name in scikit-learn's reason becomes the estimator's.
    with pytest.raises(ValueError, match=r"SparseTabNetRegressor has none of .*'r2'") as caught:
        check_scorer_fits_targets(SparseTabNetRegressor(scoring="roc_auc"), get_scorer("roc_auc"), X, X[:, 0])
    assert "Dummy" not in str(caught.value)
