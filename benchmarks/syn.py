"""Syn1-Syn6 (TabNet, Table 1): test ROC AUC and feature-selection quality of sparsetab against the peers.

For each synthetic data set (:func:`sparsetab.datasets.make_syn`) every model is trained on 10,000 rows
(early stopping on another 10,000 where it has it) with ``--seeds`` training seeds (default 3), and
scored on 5 fresh test sets of 10,000 rows. The models, all in the same run on the same rows:

- sparsetab, every ``entmax_mode`` ungated and with the kept step gate (``GATES["sigmoid"]``: the sigmoid
  gate with the share-entropy penalty; issue 21 and benchmarks/results/syn_gates_screen.md for the
  variants not kept); importance = ``explain(X).importances``;
- pytorch-tabnet 4.1.0 with ``mask_type="sparsemax"`` and ``"entmax"``, the paper's synthetic-data
  hyperparameters, early stopping on the validation log loss; importance = ``explain(X)`` normalised per row;
- HistGradientBoostingClassifier (defaults) + TreeSHAP (``shap.TreeExplainer``); importance = |SHAP value|
  normalised per row. Without early stopping (10,000 rows is "auto"'s threshold) its fit does not depend on
  the seed, so it is fitted once per data set.

Reported per data set and model (``_mask_scores.py`` defines the scores, per test row, then averaged):
test ROC AUC (pooled over seeds and test sets) next to the paper's TabNet (Arik and Pfister 2021, Table 1)
and the Bayes ceiling; relevant share (mean and range over seeds); TPR and FDR of importance > 0.05
(INVASE); TPR at the true k; L2X's median rank of the relevant features (ideal in the header row);
for Syn4-Syn6 the relevant share per branch of the switch on x11; epochs and fit seconds.

Sparsetab's architecture is the paper's synthetic one (N_d = N_a = 16; Syn1-Syn3: 4 steps, gamma 2.0,
lambda_sparse 0.02; Syn4-Syn6: 5 steps, gamma 1.5, lambda_sparse 0.005; batch 3000, virtual batch 100);
``--training defaults`` (the default) leaves every training setting at the estimator's default, ``paper``
uses the paper's (momentum 0.3, learning rate 0.02, patience 50, ``--max-epochs``). ``--protocol user`` fits
sparsetab as users call it, ``fit(X, y)`` on the 10,000 training rows alone (no ``X_val``: what
``early_stopping="auto"`` does with them is sparsetab's), keyed as ``compare.py``'s user protocol; the peers
keep their validation rows (pytorch-tabnet's early stopping is its best setting, not a user's default).
``--set PARAM=VALUE`` overrides more sparsetab parameters (a Python literal or a variant name of ``configs.py``).

Every (data set, model, configuration, seed) is one JSON file under ``--cache`` (``_cache.CellCache``),
written when it is done: an interrupted run resumes where it stopped, and the table is rebuilt from the
files; cells not yet measured are listed as such. The wall time of the invocations that measured the
cells is the sum of their fit-and-score times divided by the jobs, printed with the table.
Not part of the test suite (all cells: several hours on two CPU cores). Run::

    python -m benchmarks.syn [--datasets 1 2 3 4 5 6] [--modes sparsemax entmax15 constant adaptive]
                             [--gates none sigmoid] [--seeds 3] [--n-jobs 2]
                             [--peers pytorch-tabnet-sparsemax pytorch-tabnet-entmax hgb-treeshap]
                             [--training defaults|paper] [--protocol validation|user] [--set PARAM=VALUE ...]
                             [--output benchmarks/results/syn.md]
"""

import argparse
import contextlib
import io
import time
import warnings
from importlib.metadata import version

import numpy as np
import sklearn
import torch
from joblib import Parallel, delayed
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import roc_auc_score

import sparsetab
from benchmarks import configs
from benchmarks._cache import CellCache
from benchmarks._cells import USER_PROTOCOL, auto_rules_hash
from benchmarks._mask_scores import normalise_rows, scores
from benchmarks._measure import cpu_model
from benchmarks._syn_reference import PAPER_TABNET_AUC
from sparsetab import SparseTabNetClassifier
from sparsetab.datasets import make_syn

MODES = ("sparsemax", "entmax15", "constant", "adaptive")
# The gate kept by the screen (benchmarks/results/syn_gates_screen.md); a gated cell's key holds these settings.
GATES = {"none": {}, "sigmoid": {"step_gates": "sigmoid", "lambda_gate": 0.01}}
PEERS = ("pytorch-tabnet-sparsemax", "pytorch-tabnet-entmax", "hgb-treeshap")
N_TEST_SETS = 5
N_ROWS = 10000
PATIENCE = 50
ARCHITECTURE = ("n_d", "n_a", "n_steps", "gamma", "lambda_sparse", "batch_size", "virtual_batch_size")
SCORES = ("share", "tpr", "fdr", "tpr_at_k", "median_rank", "ideal_rank")


def paper_hyperparameters(k):
    """The paper's synthetic-data hyperparameters for Syn``k`` (sparsetab's names)."""
    common = dict(n_d=16, n_a=16, batch_size=3000, virtual_batch_size=100, momentum=0.3, learning_rate=0.02)
    if k <= 3:
        return dict(common, n_steps=4, gamma=2.0, lambda_sparse=0.02)
    return dict(common, n_steps=5, gamma=1.5, lambda_sparse=0.005)


def draw(k):
    """Training, validation and test sets of Syn``k``, each of 10,000 rows, fixed seeds."""
    sets = [make_syn(k, N_ROWS, random_state=100 * k + i, return_probability=True) for i in range(2 + N_TEST_SETS)]
    return sets[0], sets[1], sets[2:]


def score_model(k, predict_positive, importances):
    """AUC per test set and every selection score (means over each set's rows), plus Syn4-6's branch shares."""
    _, _, tests = draw(k)
    result = {"auc": [], "branch_shares": [], **{name: [] for name in SCORES}}
    for X_test, y_test, relevant, _ in tests:
        result["auc"].append(roc_auc_score(y_test, predict_positive(X_test)))
        per_row = scores(importances(X_test), relevant)
        for name in SCORES:
            result[name].append(float(per_row[name].mean()))
        negative = X_test[:, 10] < 0
        result["branch_shares"].append([per_row["share"][negative].mean(), per_row["share"][~negative].mean()])
    return result


def fit_sparsetab(k, mode, gate, seed, training, max_epochs, entmax_alpha, overrides, protocol="validation"):
    """Fit sparsetab on Syn``k`` with ``random_state = k + 100 * seed``; return the fitted model.

    ``protocol="user"`` fits as users call it, ``fit(X, y)`` on the training rows alone (the validation rows
    unused: sparsetab holds out its own where its rules say so); ``"validation"`` passes them as ``X_val``.
    """
    (X, y, _, _), (X_val, y_val, _, _), _ = draw(k)
    if training == "paper":
        settings = dict(max_epochs=max_epochs, n_iter_no_change=PATIENCE, **paper_hyperparameters(k))
    else:
        settings = {name: value for name, value in paper_hyperparameters(k).items() if name in ARCHITECTURE}
    settings.update(GATES[gate], **overrides)
    model = SparseTabNetClassifier(
        entmax_mode=mode, entmax_alpha=entmax_alpha, random_state=k + 100 * seed, n_jobs=1, **settings
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        if protocol == "user":
            model.fit(X, y)
        else:
            model.fit(X, y, X_val=X_val, y_val=y_val)
    return model


def fit_pytorch_tabnet(k, mask_type, seed, max_epochs):
    """Fit pytorch-tabnet with the paper's synthetic hyperparameters; its seed is ``k + 100 * seed``."""
    from pytorch_tabnet.tab_model import TabNetClassifier

    (X, y, _, _), (X_val, y_val, _, _), _ = draw(k)
    paper = paper_hyperparameters(k)
    model = TabNetClassifier(
        n_d=paper["n_d"],
        n_a=paper["n_a"],
        n_steps=paper["n_steps"],
        gamma=paper["gamma"],
        lambda_sparse=paper["lambda_sparse"],
        momentum=paper["momentum"],
        optimizer_params=dict(lr=paper["learning_rate"]),
        mask_type=mask_type,
        seed=k + 100 * seed,
        verbose=0,
        device_name="cpu",
    )
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore", UserWarning)  # pytorch-tabnet warns on every fit about the device
        model.fit(
            X.astype(np.float32),
            y,
            eval_set=[(X_val.astype(np.float32), y_val)],
            eval_metric=["logloss"],
            max_epochs=max_epochs,
            patience=PATIENCE,
            batch_size=paper["batch_size"],
            virtual_batch_size=paper["virtual_batch_size"],
        )
    return model


def run_cell(cell, args, overrides):
    """Fit and score one cell; its result dict (also the cache's content)."""
    torch.set_num_threads(1)  # one thread per joblib worker
    k, model_name, config, seed = cell["k"], cell["model"], cell["config"], cell["seed"]
    start = time.perf_counter()
    extra = {}
    if model_name == "sparsetab":
        mode, gate = config.split("/")
        model = fit_sparsetab(
            k, mode, gate, seed, args.training, args.max_epochs, args.entmax_alpha, overrides, args.protocol
        )
        fit_seconds = time.perf_counter() - start
        result = score_model(k, lambda X: model.predict_proba(X)[:, 1], lambda X: model.explain(X).importances)
        gates = model.explain(draw(k)[2][0][0]).step_gates
        extra = dict(
            epochs=int(model.n_iter_),
            alphas=list(model.entmax_alphas_) if mode == "adaptive" else None,
            mean_gates=None if gates is None else gates.mean(axis=0).tolist(),
        )
    elif model_name == "pytorch-tabnet":
        model = fit_pytorch_tabnet(k, config, seed, args.max_epochs)
        fit_seconds = time.perf_counter() - start

        def importances(X):
            return normalise_rows(model.explain(X.astype(np.float32))[0])

        result = score_model(k, lambda X: model.predict_proba(X.astype(np.float32))[:, 1], importances)
        extra = dict(epochs=len(model.history["loss"]))
    else:
        import shap

        (X, y, _, _), _, _ = draw(k)
        model = HistGradientBoostingClassifier(random_state=seed).fit(X, y)
        fit_seconds = time.perf_counter() - start
        explainer = shap.TreeExplainer(model)
        result = score_model(
            k, lambda X: model.predict_proba(X)[:, 1], lambda X: normalise_rows(explainer.shap_values(X))
        )
        extra = dict(epochs=int(model.n_iter_))
    return dict(result, fit_seconds=fit_seconds, seconds=time.perf_counter() - start, **extra)


def cells(args):
    """Every requested cell, peers first within each data set (they are cheaper)."""
    planned = []
    for k in args.datasets:
        for peer in args.peers:
            if peer == "hgb-treeshap":
                planned.append(dict(k=k, model="HistGradientBoosting+TreeSHAP", config="defaults", seed=0))
            else:
                for seed in range(args.seeds):
                    mask_type = peer.removeprefix("pytorch-tabnet-")
                    planned.append(dict(k=k, model="pytorch-tabnet", config=mask_type, seed=seed))
        for gate in args.gates:
            for mode in args.modes:
                for seed in range(args.seeds):
                    planned.append(dict(k=k, model="sparsetab", config=f"{mode}/{gate}", seed=seed))
    return planned


def cache_key(cell, args, overrides):
    """Everything that determines a cell's result."""
    key = dict(dataset=f"syn{cell['k']}", model=cell["model"], config=cell["config"], seed=cell["seed"])
    key.update(n_rows=N_ROWS, n_test_sets=N_TEST_SETS)
    if cell["model"] == "sparsetab":
        key.update(training=args.training, overrides=overrides, entmax_alpha=args.entmax_alpha)
        gate = cell["config"].split("/")[1]
        if gate != "none":
            key["gate"] = GATES[gate]
        key["versions"] = dict(sparsetab=sparsetab.__version__, torch=torch.__version__.split("+")[0])
        if args.protocol == "user":
            # compare.py's user protocol and its key: a changed "auto" rule re-measures the cell.
            key.update(protocol=USER_PROTOCOL, auto_rules=auto_rules_hash())
    if cell["model"] == "pytorch-tabnet":
        key["versions"] = {"pytorch-tabnet": version("pytorch-tabnet"), "torch": torch.__version__.split("+")[0]}
    if cell["model"] != "HistGradientBoosting+TreeSHAP" and (args.training == "paper" or cell["model"] != "sparsetab"):
        key["max_epochs"] = args.max_epochs
    if cell["model"] == "HistGradientBoosting+TreeSHAP":
        key["versions"] = dict(sklearn=sklearn.__version__, shap=version("shap"))
    return key


def label(cell):
    """The row label of a cell's model in the tables."""
    if cell["model"] == "sparsetab":
        mode, gate = cell["config"].split("/")
        return f"sparsetab {mode}" + ("" if gate == "none" else f" + {gate} gate")
    if cell["model"] == "pytorch-tabnet":
        return f"pytorch-tabnet {cell['config']}"
    return "HGB + TreeSHAP"


def bayes_auc(k):
    """AUC of the true probability on each test set (the ceiling)."""
    return np.array([roc_auc_score(y_test, probability) for _, y_test, _, probability in draw(k)[2]])


def mean_over_seeds(runs, name):
    """Per-seed means of score ``name`` (each the mean over the test sets), as an array over seeds."""
    return np.array([np.mean(run[name]) for run in runs])


def format_tables(results, planned, datasets):
    """Markdown tables of the measured cells; ``results[label][k]`` lists the runs of the seeds measured."""
    labels = list(dict.fromkeys(label(cell) for cell in planned))
    lines = [
        "Per data set and model: test ROC AUC pooled over seeds and the 5 test sets (mean +- std); relevant share,"
        " mean over seeds [lowest, highest]; TPR / FDR of importance > 0.05; TPR at the true k; median rank of the"
        " relevant features (ideal in the data set's row); Syn4-Syn6: relevant share for x11 < 0 / x11 >= 0;"
        " epochs and fit seconds (means over seeds).",
        "",
        "| data set | model | seeds | test AUC | relevant share | TPR | FDR | TPR at k | median rank | branches |"
        " epochs / fit s |",
        "|---" * 11 + "|",
    ]
    for k in datasets:
        ideal = next((np.mean(runs[0]["ideal_rank"]) for runs in (results[name].get(k) for name in labels) if runs), 0)
        bayes = bayes_auc(k).mean()
        lines.append(
            f"| **Syn{k}** | Bayes {bayes:.3f}, paper TabNet {PAPER_TABNET_AUC[k]:.3f} | | | | | | | {ideal:.2f} | | |"
        )
        for name in labels:
            runs = results[name].get(k)
            if not runs:
                lines.append(f"| Syn{k} | {name} | not run | | | | | | | | |")
                continue
            auc = np.concatenate([run["auc"] for run in runs])
            share = mean_over_seeds(runs, "share")
            branches = "-"
            if k >= 4:
                branches = "{:.2f} / {:.2f}".format(
                    *np.mean([np.mean(run["branch_shares"], axis=0) for run in runs], axis=0)
                )
            lines.append(
                f"| Syn{k} | {name} | {len(runs)} | {auc.mean():.3f} +- {auc.std():.3f} | "
                f"{share.mean():.3f} [{share.min():.2f}, {share.max():.2f}] | "
                f"{mean_over_seeds(runs, 'tpr').mean():.2f} | {mean_over_seeds(runs, 'fdr').mean():.2f} | "
                f"{mean_over_seeds(runs, 'tpr_at_k').mean():.2f} | {mean_over_seeds(runs, 'median_rank').mean():.2f} | "
                f"{branches} | {np.mean([run['epochs'] for run in runs]):.0f} / "
                f"{np.mean([run['fit_seconds'] for run in runs]):.0f} |"
            )
    lines += ["", *summary_table(results, labels, datasets), "", *goal_tables(results, labels, datasets)]
    gated = [name for name in labels if name.endswith("gate") and name.startswith("sparsetab")]
    if gated:
        lines += [
            "",
            "Mean gate per decision step (first step first), over the first test set's rows and the seeds:",
            "",
        ]
        for name in gated:
            for k in datasets:
                runs = results[name].get(k)
                if runs:
                    mean = np.mean([run["mean_gates"] for run in runs], axis=0)
                    lines.append(f"- {name}, Syn{k}: " + ", ".join(f"{value:.2f}" for value in mean))
    adaptive = [name for name in labels if name.startswith("sparsetab adaptive")]
    for name in adaptive:
        lines += ["", f"Learned alpha per decision step ({name}), one list per seed:", ""]
        for k in datasets:
            if results[name].get(k):
                per_seed = "; ".join(", ".join(f"{a:.3f}" for a in run["alphas"]) for run in results[name][k])
                lines.append(f"- Syn{k}: {per_seed}")
    return "\n".join(lines)


def summary_table(results, labels, datasets):
    """One row per data set, one column per model: test AUC / relevant share / FDR, means over seeds."""
    lines = [
        "Summary (README): test AUC / relevant share / FDR, means over the seeds and test sets:",
        "",
        "| data set | paper TabNet AUC | " + " | ".join(labels) + " |",
        "|---" * (2 + len(labels)) + "|",
    ]
    for k in datasets:
        cells = []
        for name in labels:
            runs = results[name].get(k)
            if not runs:
                cells.append("not run")
                continue
            auc = np.mean([np.mean(run["auc"]) for run in runs])
            share, fdr = mean_over_seeds(runs, "share").mean(), mean_over_seeds(runs, "fdr").mean()
            cells.append(f"{auc:.3f} / {share:.2f} / {fdr:.2f}")
        lines.append(f"| Syn{k} | {PAPER_TABNET_AUC[k]:.3f} | " + " | ".join(cells) + " |")
    return lines


def goal_tables(results, labels, datasets):
    """Issue 21's goals: sparsetab's best against each peer per set, and each configuration across the sets."""

    def summary(name, k):
        runs = results[name].get(k)
        if not runs:
            return None
        return dict(
            share=mean_over_seeds(runs, "share").mean(),
            fdr=mean_over_seeds(runs, "fdr").mean(),
            auc=np.mean([np.mean(run["auc"]) for run in runs]),
        )

    ours = [name for name in labels if name.startswith("sparsetab")]
    peers = [name for name in labels if not name.startswith("sparsetab")]
    lines = [
        "Goal 1, per data set: sparsetab's configuration of the highest relevant share against each peer"
        ' (share / FDR / AUC, means over seeds); "yes" when its share is higher and its FDR lower than every peer\'s'
        " and its AUC is at least the paper's TabNet:",
        "",
        "| data set | sparsetab best | share / FDR / AUC | " + " | ".join(peers) + " | goal met |",
        "|---" * (4 + len(peers)) + "|",
    ]
    for k in datasets:
        measured = {name: summary(name, k) for name in ours if summary(name, k)}
        if not measured:
            continue
        best = max(measured, key=lambda name: measured[name]["share"])
        row = measured[best]
        cells, met = [], row["auc"] >= PAPER_TABNET_AUC[k]
        for peer in peers:
            other = summary(peer, k)
            if other is None:
                cells.append("not run")
                met = False
                continue
            cells.append(f"{other['share']:.3f} / {other['fdr']:.3f} / {other['auc']:.3f}")
            met = met and row["share"] > other["share"] and row["fdr"] < other["fdr"]
        ours_cell = f"{row['share']:.3f} / {row['fdr']:.3f} / {row['auc']:.3f}"
        lines.append(
            f"| Syn{k} | {best.removeprefix('sparsetab ')} | {ours_cell} | "
            + " | ".join(cells)
            + f" | {'yes' if met else 'no'} |"
        )
    lines += [
        "",
        "Goal 2, one configuration for all six sets: relevant share per set (bar 0.9 on Syn2, Syn3, Syn6 and 0.85 on"
        " Syn1, Syn4, Syn5) and AUC minus the best ungated mode's AUC on that set (bar -0.005):",
        "",
        "| configuration | " + " | ".join(f"Syn{k}" for k in datasets) + " | sets at the bar |",
        "|---" * (2 + len(datasets)) + "|",
    ]
    bars = {1: 0.85, 2: 0.9, 3: 0.9, 4: 0.85, 5: 0.85, 6: 0.9}
    for name in ours:
        cells, reached = [], 0
        for k in datasets:
            row = summary(name, k)
            ungated = [summary(other, k) for other in ours if not other.endswith("gate")]
            ungated = [entry["auc"] for entry in ungated if entry]
            if row is None or not ungated:
                cells.append("-")
                continue
            gap = row["auc"] - max(ungated)
            reached += row["share"] >= bars[k] and gap >= -0.005
            cells.append(f"{row['share']:.3f} ({gap:+.3f})")
        lines.append(
            f"| {name.removeprefix('sparsetab ')} | " + " | ".join(cells) + f" | {reached} of {len(datasets)} |"
        )
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, nargs="+", default=[1, 2, 3, 4, 5, 6])
    parser.add_argument("--modes", nargs="+", default=list(MODES), choices=MODES)
    parser.add_argument("--gates", nargs="+", default=list(GATES), choices=list(GATES))
    parser.add_argument("--peers", nargs="*", default=list(PEERS), choices=PEERS)
    parser.add_argument("--entmax-alpha", type=float, default=1.5, help="alpha of 'constant', start of 'adaptive'")
    parser.add_argument("--max-epochs", type=int, default=500, help="pytorch-tabnet's, and sparsetab's with paper")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--seeds", type=int, default=3, help="training seeds per data set and model")
    parser.add_argument("--training", choices=["paper", "defaults"], default="defaults")
    parser.add_argument(
        "--protocol",
        choices=["validation", "user"],
        default="validation",
        help="sparsetab's fit: with the validation rows as X_val, or fit(X, y) alone (the peers keep theirs)",
    )
    parser.add_argument("--set", dest="overrides", nargs="+", default=[], metavar="PARAM=VALUE")
    parser.add_argument("--cache", default="benchmarks/results/cache/syn")
    parser.add_argument("--table-only", action="store_true", help="measure nothing; the table of the cached cells")
    parser.add_argument("--output", help="also write the table to this Markdown file")
    args = parser.parse_args()
    try:  # configs.py's parser of "param=value" parts, and its check that the estimator accepts each name
        overrides = configs.resolve("+".join(["defaults", *args.overrides]), SparseTabNetClassifier().get_params())
    except ValueError as error:
        parser.error(f"--set: {error}")
    cache = CellCache(args.cache)
    planned = cells(args)
    pending = [cell for cell in planned if cache.get(cache_key(cell, args, overrides)) is None]
    print(f"{len(planned)} cells, {len(pending)} to measure", flush=True)

    def measure(cell):
        result = run_cell(cell, args, overrides)
        cache.put(cache_key(cell, args, overrides), result)
        print(f"{label(cell)} Syn{cell['k']} seed {cell['seed']}: {result['seconds']:.0f} s", flush=True)

    start = time.perf_counter()
    if pending and not args.table_only:
        Parallel(n_jobs=args.n_jobs)(delayed(measure)(cell) for cell in pending)
    results, seconds = {label(cell): {} for cell in planned}, 0.0
    for cell in planned:
        record = cache.get(cache_key(cell, args, overrides))
        if record is not None:
            results[label(cell)].setdefault(cell["k"], []).append(record["result"])
            seconds += record["result"]["seconds"]
    measured = sum(len(runs) for per_set in results.values() for runs in per_set.values())
    header = (
        f"sparsetab {sparsetab.__version__}, torch {torch.__version__}, scikit-learn {sklearn.__version__}, "
        f"pytorch-tabnet {version('pytorch-tabnet')}, shap {version('shap')}, {cpu_model()} "
        f"({args.n_jobs} jobs, 1 torch thread each); sparsetab: entmax_alpha={args.entmax_alpha}, training "
        + ("settings of the paper" if args.training == "paper" else "settings at the estimator's defaults")
        + (f", overrides {overrides}" if overrides else "")
        + (
            "; user protocol: sparsetab fit(X, y) on the 10,000 training rows alone, the peers with their validation"
            " rows"
            if args.protocol == "user"
            else ""
        )
        + f"; {args.seeds} training seeds; {measured} of {len(planned)} cells measured. Sum of the cells' fit and"
        f" score times {seconds:.0f} s (about {seconds / args.n_jobs / 60:.0f} min of wall time at {args.n_jobs} jobs);"
        f" this invocation {time.perf_counter() - start:.0f} s."
    )
    table = header + "\n\n" + format_tables(results, planned, args.datasets)
    print(table)
    if args.output:
        with open(args.output, "w") as handle:
            handle.write("# Syn1-Syn6: masks against the peers, `python -m benchmarks.syn`\n\n" + table + "\n")


if __name__ == "__main__":
    main()
