"""Relevant share of each member's masks: sparsetab's default fit on Syn1-Syn6 under the user protocol.

On 10,000 training rows ``fit(X, y)`` runs the epoch-count refit (a first pass on 90% of the rows,
stopped early, and a refit on all of them, both kept) and each of the two networks has two efficient
members, so ``explain(X, per_member=True)`` returns four members: the first pass's two, then the
refit's two. For each data set and seed this prints, as a JSON line, the test AUC and the relevant share
and FDR of the averaged importances (as ``benchmarks/syn.py`` scores them, means over its 5 test sets)
and the relevant share of each member's own importances. It answers whether the members' mean is
diffuse because the members disagree (each sharp, on different features) or because each member reads
noise. Not part of the test suite; about 2 minutes a fit on one core. Run::

    python -m benchmarks.syn_members [--datasets 1 2 3 4 5 6] [--seeds 0] [--n-jobs 2]
"""

import argparse
import json

import numpy as np
import torch
from joblib import Parallel, delayed
from sklearn.metrics import roc_auc_score

from benchmarks._mask_scores import relevant_share, selection_rates
from benchmarks.syn import draw, fit_sparsetab


def measure(k, seed):
    """Fit the user-protocol default on Syn``k`` with the training seed ``seed``; return its scores (a dict)."""
    torch.set_num_threads(1)
    model = fit_sparsetab(k, "entmax15", "none", seed, "defaults", None, 1.5, {}, protocol="user")
    _, _, tests = draw(k)
    auc, share, fdr, member_shares = [], [], [], []
    for X_test, y_test, relevant, _ in tests:
        auc.append(roc_auc_score(y_test, model.predict_proba(X_test)[:, 1]))
        explanation = model.explain(X_test, per_member=True)
        importances = explanation.importances.astype(np.float64)
        share.append(relevant_share(importances, relevant).mean())
        fdr.append(selection_rates(importances, relevant)[1].mean())
        member_shares.append(
            [relevant_share(member.astype(np.float64), relevant).mean() for member in explanation.member_importances]
        )
    return {
        "dataset": f"syn{k}",
        "seed": seed,
        "auc": round(float(np.mean(auc)), 4),
        "share": round(float(np.mean(share)), 3),
        "fdr": round(float(np.mean(fdr)), 3),
        "member_shares": [round(float(value), 3) for value in np.mean(member_shares, axis=0)],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, nargs="+", default=[1, 2, 3, 4, 5, 6], choices=range(1, 7))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--n-jobs", type=int, default=2)
    args = parser.parse_args()
    cells = [(k, seed) for k in args.datasets for seed in args.seeds]
    for result in Parallel(n_jobs=args.n_jobs, return_as="generator")(delayed(measure)(*cell) for cell in cells):
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
