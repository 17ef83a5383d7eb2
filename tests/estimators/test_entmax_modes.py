"""entmax_mode through the estimators: every mode fits, and the adaptive alpha is learned per decision step."""

import numpy as np
import pytest

from sparsetab import SparseTabNetClassifier

# Short fits stop at max_epochs on purpose; tests that check the warning use pytest.warns.
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


@pytest.mark.parametrize("entmax_mode", ["entmax15", "constant", "adaptive"])
def test_every_entmax_mode_fits(entmax_mode, fast_params, make_people_frame):
    X, y = make_people_frame(200)
    model = SparseTabNetClassifier(max_epochs=3, entmax_mode=entmax_mode, entmax_alpha=1.3, **fast_params).fit(X, y)
    assert model.entmax_alphas_.shape == (2,)
    assert model.entmax_alpha_history_.shape == (model.n_iter_, 2)
    np.testing.assert_allclose(model.explain(X.iloc[:5]).step_masks.sum(axis=2), 1.0, atol=1e-4)


def test_adaptive_alpha_is_learned_per_step(fast_params, make_people_frame):
    X, y = make_people_frame(300)
    # One optimisation step (one epoch of one batch): Adam's first update moves a parameter by
    # lr * |g| / (|g| + eps), the learning rate up to a relative eps / |g| (eps = 1e-8: under 1e-3 for any gradient
    # above 1e-5), so each step's alpha = 1 + sigmoid(theta) leaves 1.5 by sigmoid(0.02) - 0.5 on any CPU. A step
    # whose alpha got no gradient would stay at 1.5.
    adaptive = dict(fast_params, entmax_mode="adaptive", entmax_alpha=1.5, early_stopping=False, learning_rate=0.02)
    # The step at the full rate: no warm-up, a constant schedule.
    full_rate = {"max_epochs": 1, "batch_size": 300, "learning_rate_schedule": "constant", "warmup_epochs": 0}
    one_step = SparseTabNetClassifier(**{**adaptive, **full_rate}).fit(X, y)
    np.testing.assert_allclose(np.abs(one_step.entmax_alphas_ - 1.5), 1 / (1 + np.exp(-0.02)) - 0.5, rtol=1e-3)
    model = SparseTabNetClassifier(max_epochs=15, **adaptive).fit(X, y)
    assert np.all((model.entmax_alphas_ > 1) & (model.entmax_alphas_ < 2))
    assert model.entmax_alpha_history_.shape == (model.n_iter_, 2)
    np.testing.assert_allclose(model.entmax_alpha_history_[-1], model.entmax_alphas_)
    assert not np.allclose(model.entmax_alpha_history_[0], model.entmax_alpha_history_[-1])
    fixed = SparseTabNetClassifier(max_epochs=3, entmax_mode="constant", entmax_alpha=1.3, **fast_params).fit(X, y)
    np.testing.assert_array_equal(fixed.entmax_alpha_history_, 1.3)


def test_adaptive_mode_needs_alpha_strictly_inside_one_two(fast_params, make_people_frame):
    X, y = make_people_frame(50)
    with pytest.raises(ValueError, match="needs 1 < entmax_alpha < 2"):
        SparseTabNetClassifier(entmax_mode="adaptive", entmax_alpha=2.0, **fast_params).fit(X, y)
