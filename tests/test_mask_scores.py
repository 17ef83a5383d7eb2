"""benchmarks/_mask_scores.py: the feature-selection scores of the Syn1-Syn6 benchmark, on hand-computed rows."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from benchmarks import _mask_scores as mask_scores

IMPORTANCES = np.array(
    [
        [0.6, 0.3, 0.06, 0.04, 0.0],  # both relevant on top, one irrelevant above 0.05
        [0.0, 0.5, 0.5, 0.0, 0.0],  # a tie at the k-th value between a relevant and an irrelevant feature
        [0.2, 0.2, 0.2, 0.2, 0.2],  # uniform: everything selected, every rank the mean rank 3
    ]
)
RELEVANT = np.array(
    [
        [True, True, False, False, False],
        [True, True, False, False, False],
        [False, False, False, True, False],
    ]
)


def test_scores_of_hand_computed_rows():
    scores = mask_scores.scores(IMPORTANCES, RELEVANT)
    np.testing.assert_allclose(scores["share"], [0.9, 0.5, 0.2])
    np.testing.assert_allclose(scores["tpr"], [1.0, 0.5, 1.0])
    # Row 0 selects x0, x1, x2 (x3's 0.04 is below 0.05): 1 false of 3; row 2 selects all five: 4 false of 5.
    np.testing.assert_allclose(scores["fdr"], [1 / 3, 0.5, 0.8])
    # Row 1, k = 2: x1 and x2 tie on top and both are chosen: 1 of 2. Row 2, k = 1: five tied, x3 with chance 1/5.
    np.testing.assert_allclose(scores["tpr_at_k"], [1.0, 0.5, 0.2])
    # Row 1's ranks: x1, x2 share 1.5; x0, x3, x4 share 4; relevant x0 and x1 -> median of (4, 1.5) = 2.75.
    np.testing.assert_allclose(scores["median_rank"], [1.5, 2.75, 3.0])
    np.testing.assert_allclose(scores["ideal_rank"], [1.5, 1.5, 1.0])


def test_a_tie_below_the_top_shares_the_remaining_places():
    importances = np.array([[0.4, 0.2, 0.2, 0.2, 0.0]])
    relevant = np.array([[False, True, True, False, False]])
    # k = 2: x0 takes one place; the other goes to one of the three tied at 0.2, two of which are relevant.
    np.testing.assert_allclose(mask_scores.tpr_at_true_k(importances, relevant), [(0 + 2 / 3) / 2])


def test_normalise_rows_takes_magnitudes_and_makes_a_zero_row_uniform():
    normalised = mask_scores.normalise_rows(np.array([[1.0, -3.0], [0.0, 0.0]]))
    np.testing.assert_allclose(normalised, [[0.25, 0.75], [0.5, 0.5]])


@settings(max_examples=50, deadline=None)
@given(
    arrays(np.float64, (6, 5), elements=st.floats(0, 1)),
    arrays(bool, (6, 5)),
)
def test_scores_stay_in_their_ranges_and_a_perfect_mask_is_ideal(raw, relevant):
    relevant[:, 0] |= ~relevant.any(axis=1)  # every row has a relevant feature
    importances = mask_scores.normalise_rows(raw)
    scores = mask_scores.scores(importances, relevant)
    for name in ("share", "tpr", "fdr", "tpr_at_k"):
        assert np.all((scores[name] >= -1e-12) & (scores[name] <= 1 + 1e-12)), name
    # Mean ranks of ties can put a median below (k + 1) / 2 (three tied on top share rank 2), not outside [1, p].
    assert np.all((scores["median_rank"] >= 1) & (scores["median_rank"] <= relevant.shape[1]))
    perfect = mask_scores.scores(mask_scores.normalise_rows(relevant.astype(float)), relevant)
    np.testing.assert_allclose(perfect["share"], 1.0)
    np.testing.assert_allclose(perfect["tpr_at_k"], 1.0)
    np.testing.assert_allclose(perfect["median_rank"], perfect["ideal_rank"])
