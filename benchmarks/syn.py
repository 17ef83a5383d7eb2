"""Syn1-Syn6 (TabNet, Table 1): test ROC AUC and feature-selection quality of every entmax mode.

For each synthetic data set (:func:`sparsetab.datasets.make_syn`) a model is trained on 10,000
rows with early stopping on another 10,000, then scored on 5 fresh test sets of 10,000 rows.
Reported per data set and ``entmax_mode``:

- test ROC AUC, mean +- std over the 5 test sets, next to TabNet's published value (Arik and
  Pfister 2021, Table 1), the Bayes ceiling (the true probability as the score, on the same
  test sets) and HistGradientBoostingClassifier trained on the same rows;
- relevant share: the share of the aggregate importance (``explain(X).importances``) that falls on
  the row's ground-truth relevant features, per row, averaged over the test rows;
- for Syn4-Syn6, the same share in each branch of the switch on ``x11`` (x11 < 0 / x11 >= 0),
  which shows the masks follow the switch;
- for ``entmax_mode="adaptive"``, the learned alpha of each decision step.

Hyperparameters follow the paper's synthetic-data setup (section "Instance-wise feature
selection" and its appendix): N_d = N_a = 16, batch size 3000, virtual batch size 100, batch
norm momentum 0.3 (m_B = 0.7), learning rate 0.02; Syn1-Syn3 with 4 steps, gamma 2.0,
lambda_sparse 0.02; Syn4-Syn6 with 5 steps, gamma 1.5, lambda_sparse 0.005. Early stopping on
the validation loss with a patience of 50 epochs, at most 500 epochs.

``--training defaults`` (issue 17's goal) keeps only the paper's architecture settings (N_d, N_a,
N_steps, gamma, lambda_sparse, batch and virtual batch size) and leaves every training setting at the
estimator's default (momentum, learning rate and its schedule, max_epochs, patience); the model
still early-stops on the 10,000 validation rows it is given. ``--set PARAM=VALUE ...`` (each VALUE a Python
literal, or a variant name of ``configs.py``, parsed and checked by ``configs.resolve``) overrides more
constructor parameters on top of either setting, e.g. ``--set numerical_embedding=None`` for the paper's
plain numeric inputs.

The relevant share moves with the training trajectory far more than the AUC does, so every data
set and mode is trained with ``--seeds`` random states (default 3): AUCs are pooled over seeds
and test sets, shares are given as the mean and range over seeds.

Not part of the test suite (about 25 minutes on two CPU cores with 3 seeds). Run::

    python benchmarks/syn.py [--datasets 1 2 3 4 5 6] [--modes sparsemax entmax15 constant adaptive]
                             [--seeds 3] [--n-jobs 2] [--training paper|defaults] [--set PARAM=VALUE ...]
                             [--output benchmarks/results/syn.md]
"""

import argparse
import time
import warnings

import configs
import numpy as np
import sklearn
import torch
from _measure import cpu_model
from joblib import Parallel, delayed
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import roc_auc_score

import sparsetab
from sparsetab import SparseTabNetClassifier
from sparsetab.datasets import make_syn

PAPER_TABNET_AUC = {1: 0.682, 2: 0.892, 3: 0.897, 4: 0.776, 5: 0.789, 6: 0.878}
MODES = ("sparsemax", "entmax15", "constant", "adaptive")
N_TEST_SETS = 5
N_ROWS = 10000


ARCHITECTURE = ("n_d", "n_a", "n_steps", "gamma", "lambda_sparse", "batch_size", "virtual_batch_size")


def paper_hyperparameters(k):
    """The paper's synthetic-data hyperparameters for Syn``k``."""
    common = dict(n_d=16, n_a=16, batch_size=3000, virtual_batch_size=100, momentum=0.3, learning_rate=0.02)
    if k <= 3:
        return dict(common, n_steps=4, gamma=2.0, lambda_sparse=0.02)
    return dict(common, n_steps=5, gamma=1.5, lambda_sparse=0.005)


def draw(k):
    """Training, validation and test sets of Syn``k``, each of 10,000 rows, fixed seeds."""
    sets = [make_syn(k, N_ROWS, random_state=100 * k + i, return_probability=True) for i in range(2 + N_TEST_SETS)]
    return sets[0], sets[1], sets[2:]


def relevant_share(importances, relevant):
    """Per-row share of the aggregate importance on the relevant features, shape (n_samples,)."""
    return (importances * relevant).sum(axis=1)


def run_mode(k, mode, max_epochs, entmax_alpha, seed=0, training="paper", overrides=None):
    """Fit one mode on Syn``k`` with ``random_state = k + 100 * seed``; return its row of results.

    ``overrides`` is a dict of constructor parameters applied last (``--set``).
    """
    torch.set_num_threads(1)  # runs in a joblib worker process: one thread per job
    (X, y, _, _), (X_val, y_val, _, _), tests = draw(k)
    if training == "paper":
        settings = dict(max_epochs=max_epochs, n_iter_no_change=50, **paper_hyperparameters(k))
    else:  # the architecture only; every training setting at the estimator's default
        settings = {name: value for name, value in paper_hyperparameters(k).items() if name in ARCHITECTURE}
    settings.update(overrides or {})
    model = SparseTabNetClassifier(entmax_mode=mode, entmax_alpha=entmax_alpha, random_state=k + 100 * seed, **settings)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, y, X_val=X_val, y_val=y_val)
    fit_seconds = time.perf_counter() - start
    aucs, shares, negative_branch, positive_branch = [], [], [], []
    for X_test, y_test, relevant, _ in tests:
        aucs.append(roc_auc_score(y_test, model.predict_proba(X_test)[:, 1]))
        share = relevant_share(model.explain(X_test).importances, relevant)
        shares.append(share.mean())
        negative_branch.append(share[X_test[:, 10] < 0].mean())
        positive_branch.append(share[X_test[:, 10] >= 0].mean())
    return dict(
        k=k,
        model=mode,
        seed=seed,
        auc=np.array(aucs),
        share=float(np.mean(shares)),
        branch_shares=(float(np.mean(negative_branch)), float(np.mean(positive_branch))) if k >= 4 else None,
        alphas=model.entmax_alphas_ if mode == "adaptive" else None,
        epochs=model.n_iter_,
        fit_seconds=fit_seconds,
    )


def run_peers(k):
    """Bayes ceiling and HistGradientBoosting on the same rows."""
    (X, y, _, _), _, tests = draw(k)
    hgb = HistGradientBoostingClassifier(random_state=k).fit(X, y)
    bayes = np.array([roc_auc_score(y_test, probability) for _, y_test, _, probability in tests])
    peer = np.array([roc_auc_score(y_test, hgb.predict_proba(X_test)[:, 1]) for X_test, y_test, _, _ in tests])
    return k, bayes, peer


def format_table(results, peers, datasets, modes):
    """Markdown tables; ``results[k, mode]`` is the list of rows of the seeds run."""
    lines = [
        "| data set | Bayes AUC | paper TabNet | HistGradientBoosting | "
        + " | ".join(f"{mode} AUC" for mode in modes)
        + " | best - paper |",
        "|---" * (5 + len(modes)) + "|",
    ]
    for k in datasets:
        bayes, peer = peers[k]
        # Every seed's AUC on every test set, pooled: the spread includes the training seed's.
        aucs = [np.concatenate([row["auc"] for row in results[k, mode]]) for mode in modes]
        best = max(auc.mean() for auc in aucs)
        lines.append(
            f"| Syn{k} | {bayes.mean():.3f} | {PAPER_TABNET_AUC[k]:.3f} | {peer.mean():.3f} +- {peer.std():.3f} | "
            + " | ".join(f"{auc.mean():.3f} +- {auc.std():.3f}" for auc in aucs)
            + f" | {best - PAPER_TABNET_AUC[k]:+.3f} |"
        )
    n_seeds = len(results[datasets[0], modes[0]])
    lines += [
        "",
        "Share of the aggregate importance on the ground-truth relevant features (per row, averaged over "
        f"the 50,000 test rows), mean over the {n_seeds} training seeds [lowest, highest seed]; for Syn4-Syn6 "
        "also the mean per branch of the switch (x11 < 0 / x11 >= 0):",
        "",
        "| data set | " + " | ".join(modes) + " |",
        "|---" * (1 + len(modes)) + "|",
    ]
    for k in datasets:
        cells = []
        for mode in modes:
            rows = results[k, mode]
            shares = [row["share"] for row in rows]
            cell = f"{np.mean(shares):.3f} [{min(shares):.3f}, {max(shares):.3f}]"
            if rows[0]["branch_shares"] is not None:
                cell += " ({:.3f} / {:.3f})".format(*np.mean([row["branch_shares"] for row in rows], axis=0))
            cells.append(cell)
        lines.append(f"| Syn{k} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Epochs run (early stopping) and fit seconds, means over the seeds:",
        "",
        "| data set | " + " | ".join(modes) + " |",
    ]
    lines.append("|---" * (1 + len(modes)) + "|")
    for k in datasets:
        cells = [
            f"{np.mean([row['epochs'] for row in results[k, mode]]):.0f} / "
            f"{np.mean([row['fit_seconds'] for row in results[k, mode]]):.0f} s"
            for mode in modes
        ]
        lines.append(f"| Syn{k} | " + " | ".join(cells) + " |")
    if "adaptive" in modes:
        lines += ["", "Learned alpha per decision step (adaptive mode), one list per seed:", ""]
        for k in datasets:
            per_seed = "; ".join(", ".join(f"{alpha:.3f}" for alpha in row["alphas"]) for row in results[k, "adaptive"])
            lines.append(f"- Syn{k}: {per_seed}")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, nargs="+", default=[1, 2, 3, 4, 5, 6])
    parser.add_argument("--modes", nargs="+", default=list(MODES), choices=MODES)
    parser.add_argument("--entmax-alpha", type=float, default=1.5, help="alpha of 'constant', start of 'adaptive'")
    parser.add_argument("--max-epochs", type=int, default=500)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--seeds", type=int, default=3, help="training seeds per data set and mode")
    parser.add_argument(
        "--training",
        choices=["paper", "defaults"],
        default="paper",
        help="paper: the paper's training settings, --max-epochs and patience 50; defaults: architecture only",
    )
    parser.add_argument(
        "--set",
        dest="overrides",
        nargs="+",
        default=[],
        metavar="PARAM=VALUE",
        help="constructor parameters on top of the training setting: PARAM=literal or a configs.py variant",
    )
    parser.add_argument("--output", help="also write the table to this Markdown file")
    args = parser.parse_args()
    try:  # configs.py's parser of "param=value" parts, and its check that the estimator accepts each name
        overrides = configs.resolve("+".join(["defaults", *args.overrides]), SparseTabNetClassifier().get_params())
    except ValueError as error:
        parser.error(f"--set: {error}")
    start = time.perf_counter()
    runs = Parallel(n_jobs=args.n_jobs)(
        delayed(run_mode)(k, mode, args.max_epochs, args.entmax_alpha, seed, args.training, overrides)
        for k in args.datasets
        for mode in args.modes
        for seed in range(args.seeds)
    )
    results = {}
    for row in runs:
        results.setdefault((row["k"], row["model"]), []).append(row)
    peers = {k: (bayes, peer) for k, bayes, peer in (run_peers(k) for k in args.datasets)}
    header = (
        f"sparsetab {sparsetab.__version__}, torch {torch.__version__}, scikit-learn {sklearn.__version__}, "
        f"{cpu_model()} ({args.n_jobs} jobs, 1 torch thread each); "
        f"entmax_alpha={args.entmax_alpha}, training settings: {args.training}"
        + (f" (max_epochs={args.max_epochs})" if args.training == "paper" else " (estimator defaults)")
        + (f", overrides {overrides}" if overrides else "")
        + f", {args.seeds} training seeds; wall time "
        f"{time.perf_counter() - start:.0f} s."
    )
    table = header + "\n\n" + format_table(results, peers, args.datasets, args.modes)
    print(table)
    if args.output:
        with open(args.output, "w") as handle:
            handle.write("# Syn1-Syn6: `python benchmarks/syn.py`\n\n" + table + "\n")


if __name__ == "__main__":
    main()
