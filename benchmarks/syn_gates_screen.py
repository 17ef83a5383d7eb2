"""Screen of the step-gate variants (issue 21) on Syn1, Syn2 and Syn4: a measurement, not a test.

For each data set (:func:`sparsetab.datasets.make_syn`), each gate configuration and each training
seed, one :class:`~sparsetab.SparseTabNetClassifier` is fitted with the paper's synthetic-data
architecture (N_d = N_a = 16; Syn1-Syn3: 4 steps, gamma 2.0, lambda_sparse 0.02; Syn4-Syn6: 5 steps,
gamma 1.5, lambda_sparse 0.005) and every training setting at the estimator's default, on a modest
training set with early stopping on a validation set, and scored on one test set. Reported per data
set and configuration, as means over the seeds:

- test ROC AUC;
- relevant share: the share of the aggregate importance (``explain(X).importances``) on the row's
  ground-truth relevant features, per row, averaged over the test rows;
- INVASE-style TPR and FDR of the features selected by normalised importance > 0.05, per row,
  averaged over the test rows (Yoon, Jordon and van der Schaar, 2019, "INVASE", section 5);
- the mean gate of each step and the share of exactly-closed gates (gated configurations).

The configurations: ungated (``step_gates=None``), and the gates ``"sigmoid"`` and ``"sparsemax"``
with ``lambda_gate=0.01`` and the L1 penalty (``gate_penalty="l1"``), reading the previous step's
attention features, with the gate on the first step or not (``gate_first_step``), and reading the
step's own attention features (``gate_input="own"``); then two of them with the contribution penalty
(``gate_penalty="contribution"``); then the sigmoid gate with the scale-free share-entropy penalty
(``gate_penalty="share_entropy"``, the entropy of each row's step shares ``g_i * eta_i / sum_j g_j * eta_j``,
which rescaling a gate against its step's output cannot lower) at four strengths. (Those rows were measured
with the penalty patched into the network, the same computation bit for bit as the parameter that was
then added: the loss curves and predictions of a 3-epoch fit were equal.) Only the ungated rows and the
sigmoid gate with the share-entropy penalty (the kept variant, at any ``lambda_gate``) can be re-measured:
the other variants' parameters were removed from sparsetab after the screen (``REMOVED``), so their rows
are read from the cache (their code is at commit 9959ba6).

Each (data set, configuration, seed) is stored as one JSON file under ``--cache`` when it is done,
so an interrupted screen resumes where it stopped. Not part of the test suite. Run::

    OMP_NUM_THREADS=1 python -m benchmarks.syn_gates_screen [--datasets 1 2 4] [--seeds 2]
        [--n-train 4000] [--n-val 2000] [--n-test 10000] [--mode entmax15]
        [--output benchmarks/results/syn_gates_screen.md]
"""

import argparse
import json
import os
import time
import warnings
from pathlib import Path

import numpy as np
import sklearn
import torch
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import roc_auc_score

import sparsetab
from benchmarks._mask_scores import SELECTED, relevant_share, selection_rates
from benchmarks._measure import cpu_model
from sparsetab import SparseTabNetClassifier
from sparsetab._persistence.model_file import REMOVED_PARAMETERS
from sparsetab.datasets import make_syn

# The first gated configurations use the L1 penalty (the first one measured); the last two the contribution
# penalty that became gate_penalty's default.
L1 = {"gate_penalty": "l1"}
CONFIGURATIONS = {
    "ungated": {},
    "sigmoid": {"step_gates": "sigmoid", **L1},
    "sparsemax": {"step_gates": "sparsemax", **L1},
    "sigmoid, first step ungated": {"step_gates": "sigmoid", "gate_first_step": False, **L1},
    "sparsemax, first step ungated": {"step_gates": "sparsemax", "gate_first_step": False, **L1},
    "sigmoid, own attention": {"step_gates": "sigmoid", "gate_input": "own", **L1},
    "sparsemax, own attention": {"step_gates": "sparsemax", "gate_input": "own", **L1},
    "sigmoid, contribution penalty": {"step_gates": "sigmoid", "gate_penalty": "contribution"},
    "sparsemax, first step ungated, contribution penalty": {
        "step_gates": "sparsemax",
        "gate_first_step": False,
        "gate_penalty": "contribution",
    },
    "sigmoid, share entropy": {"step_gates": "sigmoid", "gate_penalty": "share_entropy"},
    "sparsemax, first step ungated, share entropy": {
        "step_gates": "sparsemax",
        "gate_first_step": False,
        "gate_penalty": "share_entropy",
    },
    "sigmoid, first step ungated, share entropy": {
        "step_gates": "sigmoid",
        "gate_first_step": False,
        "gate_penalty": "share_entropy",
    },
    **{
        f"sigmoid, share entropy, lambda_gate={strength}": {
            "step_gates": "sigmoid",
            "gate_penalty": "share_entropy",
            "lambda_gate": strength,
        }
        for strength in (0.02, 0.05, 0.1)
    },
}


# The parameters of the variants not kept were removed from sparsetab (gate_input after the first screen,
# gate_first_step, gate_penalty and step_gates="sparsemax" after syn.py's run): their rows are read from the cache
# and cannot be re-measured (their code is at commit 9959ba6). The kept ones are fitted without the removed
# names, whose values there are those sparsetab now always uses (REMOVED_PARAMETERS).
REMOVED = {
    name
    for name, parameters in CONFIGURATIONS.items()
    if "gate_input" in parameters
    or parameters.get("step_gates") not in (None, "sigmoid")
    or any(parameters.get(key, value) != value for key, value in REMOVED_PARAMETERS.items())
}


def architecture(k):
    """The paper's synthetic-data architecture of Syn``k`` (training settings left at the defaults)."""
    if k <= 3:
        return dict(n_d=16, n_a=16, n_steps=4, gamma=2.0, lambda_sparse=0.02)
    return dict(n_d=16, n_a=16, n_steps=5, gamma=1.5, lambda_sparse=0.005)


def run(k, name, seed, args):
    """Fit one configuration on Syn``k`` with one seed; its measured row."""
    X, y, _ = make_syn(k, args.n_train, random_state=1000 * k)
    X_val, y_val, _ = make_syn(k, args.n_val, random_state=1000 * k + 1)
    X_test, y_test, relevant = make_syn(k, args.n_test, random_state=1000 * k + 2)
    model = SparseTabNetClassifier(
        entmax_mode=args.mode,
        random_state=k + 100 * seed,
        n_jobs=1,
        **architecture(k),
        **{key: value for key, value in CONFIGURATIONS[name].items() if key not in REMOVED_PARAMETERS},
    )
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, y, X_val=X_val, y_val=y_val)
    fit_seconds = time.perf_counter() - start
    explanation = model.explain(X_test)
    share = relevant_share(explanation.importances, relevant)
    tpr, fdr = selection_rates(explanation.importances, relevant)
    gates = explanation.step_gates
    return dict(
        k=k,
        configuration=name,
        seed=seed,
        auc=float(roc_auc_score(y_test, model.predict_proba(X_test)[:, 1])),
        share=float(share.mean()),
        tpr=float(tpr.mean()),
        fdr=float(fdr.mean()),
        mean_gates=None if gates is None else gates.mean(axis=0).tolist(),
        closed=None if gates is None else float((gates == 0).mean()),
        epochs=int(model.n_iter_),
        fit_seconds=fit_seconds,
    )


def format_table(rows, datasets, names, n_seeds):
    """The Markdown tables of the screen: one row per data set and configuration, means over the seeds."""
    lines = [
        "| data set | configuration | test AUC | relevant share [seeds] | TPR | FDR | mean gate per step | "
        "closed gates | epochs / fit s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for k in datasets:
        for name in names:
            runs = [rows[k, name, seed] for seed in range(n_seeds) if (k, name, seed) in rows]
            if not runs:
                continue
            shares = [run["share"] for run in runs]
            gates = "-"
            closed = "-"
            if runs[0]["mean_gates"] is not None:
                gates = ", ".join(f"{value:.2f}" for value in np.mean([run["mean_gates"] for run in runs], axis=0))
                closed = f"{np.mean([run['closed'] for run in runs]):.2f}"
            lines.append(
                f"| Syn{k} | {name} | {np.mean([run['auc'] for run in runs]):.3f} | "
                f"{np.mean(shares):.3f} [{', '.join(f'{share:.2f}' for share in shares)}] | "
                f"{np.mean([run['tpr'] for run in runs]):.2f} | {np.mean([run['fdr'] for run in runs]):.2f} | "
                f"{gates} | {closed} | {np.mean([run['epochs'] for run in runs]):.0f} / "
                f"{np.mean([run['fit_seconds'] for run in runs]):.0f} |"
            )
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--configurations", nargs="+", default=list(CONFIGURATIONS), choices=list(CONFIGURATIONS))
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--mode", default="entmax15", help="entmax_mode of every configuration")
    parser.add_argument("--n-train", type=int, default=4000)
    parser.add_argument("--n-val", type=int, default=2000)
    parser.add_argument("--n-test", type=int, default=10000)
    parser.add_argument("--cache", default="benchmarks/results/cache/syn_gates_screen")
    parser.add_argument("--table-only", action="store_true", help="fit nothing: the table of the cached rows")
    parser.add_argument("--output", help="also write the table to this Markdown file")
    args = parser.parse_args()
    torch.set_num_threads(1)
    cache = Path(args.cache) / f"{args.mode}-train{args.n_train}-val{args.n_val}-test{args.n_test}"
    cache.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    rows, computed_seconds = {}, 0.0
    for k in args.datasets:
        for name in args.configurations:
            for seed in range(args.seeds):
                path = cache / f"syn{k}-{name.replace(', ', '-').replace(' ', '_')}-seed{seed}.json"
                if path.exists():
                    row = json.loads(path.read_text())
                elif args.table_only:
                    continue
                elif name in REMOVED:
                    print(f"Syn{k} {name} seed {seed}: not cached, and its parameter was removed", flush=True)
                    continue
                else:
                    row = run(k, name, seed, args)
                    temporary = path.with_suffix(".tmp")
                    temporary.write_text(json.dumps(row))
                    os.replace(temporary, path)
                    print(
                        f"Syn{k} {name} seed {seed}: AUC {row['auc']:.3f}, share {row['share']:.3f}, "
                        f"TPR {row['tpr']:.2f}, FDR {row['fdr']:.2f}, {row['fit_seconds']:.0f} s",
                        flush=True,
                    )
                computed_seconds += row["fit_seconds"]
                rows[k, name, seed] = row
    header = (
        f"sparsetab {sparsetab.__version__}, torch {torch.__version__}, scikit-learn {sklearn.__version__}, "
        f"{cpu_model()}, one torch thread; entmax_mode={args.mode!r}, the paper's synthetic architecture, "
        f"every training setting at the estimator's default (early stopping on the validation rows), "
        f"lambda_gate={SparseTabNetClassifier().lambda_gate} unless the configuration names another; "
        f"{args.n_train} training rows, {args.n_val} validation rows, one test set of {args.n_test} rows; "
        f"{'up to ' if args.table_only else ''}{args.seeds} training seeds; "
        f"selected = normalised importance > {SELECTED}. "
        f"Sum of fit times {computed_seconds:.0f} s; this invocation's wall time {time.perf_counter() - start:.0f} s."
    )
    table = header + "\n\n" + format_table(rows, args.datasets, args.configurations, args.seeds)
    print(table)
    if args.output:
        with open(args.output, "w") as handle:
            handle.write("# Step-gate screen on Syn1, Syn2, Syn4: `python -m benchmarks.syn_gates_screen`\n\n")
            handle.write(table + "\n")


if __name__ == "__main__":
    main()
