"""Feature-selection scores of per-row importances against a ground truth (Syn1-Syn6 benchmarks).

Every function takes ``importances`` of shape (n_samples, n_features), non-negative, and a boolean
``relevant`` of the same shape (each row's ground-truth relevant features, at least one per row), and
returns per-row scores of shape (n_samples,) that the benchmarks average over the test rows:

- relevant share: the share of the row's importance on its relevant features;
- TPR and FDR of the features selected by ``importance > SELECTED`` (Yoon, Jordon and van der Schaar,
  2019, "INVASE", section 5: true positive rate and false discovery rate per sample);
- TPR at the true k: the share of the row's k relevant features among its k most important, with ties
  at the k-th value broken uniformly at random (the expected value is returned, so that columns ordered
  with the relevant ones first gain nothing from a tie);
- median rank: the median of the relevant features' ranks (rank 1 = most important, ties take their mean
  rank), the score of Chen et al., 2018, "Learning to Explain" (L2X), section 5.1; the ideal is (k + 1) / 2.
"""

import numpy as np
from scipy.stats import rankdata

# Normalised importance above which a feature counts as selected.
SELECTED = 0.05


def normalise_rows(attributions):
    """Absolute attributions scaled so that each row sums to 1; a row of zeros becomes uniform.

    Parameters
    ----------
    attributions : ndarray of shape (n_samples, n_features)
        Signed or non-negative attributions (SHAP values, mask sums).

    Returns
    -------
    ndarray of shape (n_samples, n_features), float64
    """
    magnitude = np.abs(np.asarray(attributions, dtype=np.float64))
    total = magnitude.sum(axis=1, keepdims=True)
    uniform = np.full_like(magnitude, 1.0 / magnitude.shape[1])
    return np.where(total > 0, magnitude / np.where(total > 0, total, 1.0), uniform)


def relevant_share(importances, relevant):
    """Share of each row's importance on its relevant features, shape (n_samples,)."""
    return (importances * relevant).sum(axis=1) / importances.sum(axis=1)


def selection_rates(importances, relevant, threshold=SELECTED):
    """Per-row TPR and FDR of the selection ``importances > threshold``; FDR is 0 for an empty selection."""
    selected = importances > threshold
    tpr = (selected & relevant).sum(axis=1) / relevant.sum(axis=1)
    fdr = (selected & ~relevant).sum(axis=1) / np.maximum(selected.sum(axis=1), 1)
    return tpr, fdr


def tpr_at_true_k(importances, relevant):
    """Expected share of the k relevant features among the k most important (k per row), ties at random."""
    k = relevant.sum(axis=1)
    kth_value = -np.sort(-importances, axis=1)[np.arange(len(k)), k - 1][:, None]
    above, tied = importances > kth_value, importances == kth_value
    # The k - |above| remaining places go to the tied features uniformly: each is chosen with that probability.
    places = k - above.sum(axis=1)
    found = (above & relevant).sum(axis=1) + places * (tied & relevant).sum(axis=1) / tied.sum(axis=1)
    return found / k


def median_rank(importances, relevant):
    """Median rank of each row's relevant features (1 = most important, mean ranks for ties)."""
    ranks = rankdata(-importances, axis=1, method="average")
    return np.nanmedian(np.where(relevant, ranks, np.nan), axis=1)


def scores(importances, relevant):
    """Every score above as a dict of per-row arrays: share, tpr, fdr, tpr_at_k, median_rank, ideal_rank."""
    relevant = np.asarray(relevant, dtype=bool)
    tpr, fdr = selection_rates(importances, relevant)
    return dict(
        share=relevant_share(importances, relevant),
        tpr=tpr,
        fdr=fdr,
        tpr_at_k=tpr_at_true_k(importances, relevant),
        median_rank=median_rank(importances, relevant),
        ideal_rank=(relevant.sum(axis=1) + 1) / 2,
    )
