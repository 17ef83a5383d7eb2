"""Self-supervised pretraining (TabNet, section 5): 1,000 labelled rows with and without pretraining on unlabelled rows.

For each data set and seed the rows are split as follows: a stratified test set of 20% (``random_state=0``,
the same for every seed); from the other 80% (the "rest"), ``--labelled`` rows (default 1,000) drawn with the
seed, stratified, keep their labels; every other row of the rest is unlabelled (its label is dropped). Two
models are then scored on the test set:

- supervised: ``SparseTabNetClassifier`` fitted on the labelled rows only;
- pretrained + fine-tuned: ``SparseTabNetPretrainer`` fitted on the features of all the rows of the rest (the
  unlabelled rows plus the labelled rows' features, which are unlabelled data too), then
  ``SparseTabNetClassifier(pretrained=pretrainer)`` fitted on the labelled rows, starting from the pretrained
  encoder with a new head.

Reported per data set: test accuracy mean +- std over the seeds for both, the paired difference (fine-tuned
minus supervised, mean +- std over the seeds, and on how many seeds it is positive), the majority-class
accuracy of the test set, and next to it, as context only, the TabNet paper's numbers with 1k labelled rows
(Arik and Pfister 2021, Table 7 for Higgs, Table 10 for Forest Cover Type). They are NOT a target: the paper
uses the full data sets (10.5M unlabelled Higgs rows, 581k Covertype rows) and larger models, whereas here the
unlabelled pool is the rest of a ~11k-row Higgs sample and of Kaggle's 15k-row class-balanced Covertype subset
(``datasets/*/SOURCE.md``). A second table gives the epochs, the pretrainer's validation reconstruction loss
at its kept epoch and on the test rows (about 1 for predicting each column's mean) and fit seconds; a third
gives every seed.

Settings (chosen before the full run; not tuned on the test set):

- ``ARCH`` (identical for the pretrainer and both classifiers, as ``pretrained=`` requires): n_d = n_a = 16,
  n_steps = 4, gamma 1.3, n_independent = n_shared = 2, sparsemax. A mid-sized TabNet between the package
  default (8, 8, 3) and the paper's large Higgs/Forest models (n_d = n_a >= 64), which would overfit 1,000
  labelled rows and cost too much on two CPU cores; not tuned.
- Fits on the labelled rows (supervised and fine-tuning): batch 256, virtual batch 64 (so that 900 training
  rows give several steps per epoch and several ghost batches per step), Adam lr 0.02, at most 200 epochs,
  early stopping on the validation log-loss of ``validation_fraction=0.1`` of the labelled rows
  (``early_stopping=True``), patience 30. Patience was the one setting compared in trials (Higgs, seed 0):
  patience 10 stopped both models after ~15 epochs, near the majority-class rate; patience 30 gave the better
  validation log-loss for both (the validation rows only, not the test rows, decided).
- Pretrainer: the package defaults for the decoder (n_shared_decoder = n_independent_decoder = 1) and
  pretraining_ratio 0.2 (the paper's masking rate), batch 1024, virtual batch 128 (it has ~9-12k rows), at most
  200 epochs, early stopping on the validation reconstruction loss of 10% of its rows, patience 20 (the
  validation reconstruction loss is noisy from epoch to epoch, so patience 10 stopped early; not tuned further).

The one-hot Wilderness_Area/Soil_Type columns of Forest Cover are attended to (and reconstructed) one by one,
as in ``benchmarks/compare.py``; no ``grouped_features``. One torch thread, one process. Not part of the test
suite (about 10 minutes on two CPU cores). Run::

    python -m benchmarks.pretraining [--datasets higgs_sample forest_cover_kaggle] [--seeds 0 1 2 3 4]
                                     [--labelled 1000] [--output benchmarks/results/pretraining.md]
"""

import argparse
import time
import warnings

import numpy as np
import pandas as pd
import torch
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split

from benchmarks._datasets import load
from benchmarks._measure import machine_header
from sparsetab import SparseTabNetClassifier, SparseTabNetPretrainer

DATASETS = ("higgs_sample", "forest_cover_kaggle")
ARCH = dict(n_d=16, n_a=16, n_steps=4, gamma=1.3, n_independent=2, n_shared=2, entmax_mode="sparsemax")
LABELLED_FIT = dict(
    batch_size=256, virtual_batch_size=64, learning_rate=0.02, max_epochs=200, early_stopping=True, n_iter_no_change=30
)
PRETRAIN_FIT = dict(
    batch_size=1024,
    virtual_batch_size=128,
    learning_rate=0.02,
    max_epochs=200,
    early_stopping=True,
    n_iter_no_change=20,
    pretraining_ratio=0.2,
)
# TabNet paper, test accuracy (%) with 1k labelled rows: (supervised, with pretraining), mean and std.
PAPER = {
    "higgs_sample": ("Table 7, Higgs", (57.47, 1.78), (61.37, 0.88)),
    "forest_cover_kaggle": ("Table 10, Forest Cover Type", (65.91, 1.02), (67.86, 0.99)),
}


def split(name, seed, labelled):
    """Test rows (fixed), labelled rows (drawn with ``seed``) and unlabelled rows.

    The test rows are those of ``benchmarks/compare.py`` (stratified 20%, ``random_state=0``).

    Parameters
    ----------
    name : str
        One of ``DATASETS``.
    seed : int
        Seed of the draw of the labelled rows from the rest.
    labelled : int
        Number of labelled rows.

    Returns
    -------
    dict
        ``X_labelled``, ``y_labelled``, ``X_unlabelled`` (features only), ``X_test``, ``y_test``.
    """
    X_rest, X_test, y_rest, y_test, _, _ = load(name)
    y_rest, y_test = np.asarray(y_rest), np.asarray(y_test)
    X_labelled, X_unlabelled, y_labelled, _ = train_test_split(
        X_rest, y_rest, train_size=labelled, random_state=seed, stratify=y_rest
    )
    return dict(X_labelled=X_labelled, y_labelled=y_labelled, X_unlabelled=X_unlabelled, X_test=X_test, y_test=y_test)


def _timed_fit(model, *args):
    """Fit ``model`` on ``args`` (ConvergenceWarning silenced); return the model and the fit seconds."""
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(*args)
    return model, time.perf_counter() - start


def run_seed(data, seed):
    """Supervised and pretrained + fine-tuned fits of one seed.

    Parameters
    ----------
    data : dict
        The output of :func:`split`.
    seed : int
        ``random_state`` of the three fits.

    Returns
    -------
    dict
        Test accuracies (``supervised``, ``finetuned``), epochs, fit seconds and the pretrainer's reconstruction
        losses (``val_loss`` at the kept epoch, ``test_loss`` on the test rows).
    """
    X_l, y_l, X_test, y_test = data["X_labelled"], data["y_labelled"], data["X_test"], data["y_test"]
    supervised, supervised_s = _timed_fit(SparseTabNetClassifier(random_state=seed, **ARCH, **LABELLED_FIT), X_l, y_l)
    pretrainer, pretrain_s = _timed_fit(
        SparseTabNetPretrainer(random_state=seed, **ARCH, **PRETRAIN_FIT), pd.concat([data["X_unlabelled"], X_l])
    )
    finetuned, finetune_s = _timed_fit(
        SparseTabNetClassifier(random_state=seed, pretrained=pretrainer, **ARCH, **LABELLED_FIT), X_l, y_l
    )
    return dict(
        seed=seed,
        supervised=supervised.score(X_test, y_test),
        finetuned=finetuned.score(X_test, y_test),
        supervised_epochs=(supervised.n_iter_, supervised.best_iteration_ + 1),
        finetune_epochs=(finetuned.n_iter_, finetuned.best_iteration_ + 1),
        pretrain_epochs=(pretrainer.n_iter_, pretrainer.best_iteration_ + 1),
        val_loss=-float(pretrainer.validation_scores_[pretrainer.best_iteration_]),
        test_loss=pretrainer.reconstruction_score(X_test),
        supervised_s=supervised_s,
        pretrain_s=pretrain_s,
        finetune_s=finetune_s,
    )


def _pm(values, scale=100.0, digits=2):
    """``mean +- std`` of ``values`` times ``scale`` (population std, as numpy)."""
    values = np.asarray(values, dtype=float) * scale
    return f"{values.mean():.{digits}f} +- {values.std():.{digits}f}"


def _epochs(pairs):
    """Mean epochs run and mean kept (best) epoch of ``(run, kept)`` pairs."""
    pairs = np.asarray(pairs, dtype=float)
    return f"{pairs[:, 0].mean():.0f} ({pairs[:, 1].mean():.0f})"


def format_tables(results, info):
    """The Markdown tables of the benchmark.

    Parameters
    ----------
    results : dict of str -> list of dict
        Per data set, the rows of :func:`run_seed`.
    info : dict of str -> dict
        Per data set: ``labelled``, ``unlabelled``, ``test`` row counts, ``classes`` and ``majority``
        (majority-class test accuracy).

    Returns
    -------
    str
    """
    lines = [
        "Test accuracy (%), mean +- std (population, ddof=0) over the seeds; "
        "difference = pretrained + fine-tuned minus supervised, paired by seed (positive on k of n seeds). "
        "Paper: TabNet with 1k labelled rows on the FULL data sets, context only.",
        "",
        "| data set | labelled / unlabelled / test rows | majority class | supervised | pretrained + fine-tuned "
        "| difference | paper supervised | paper with pretraining | paper difference |",
        "|---" * 9 + "|",
    ]
    for name, rows in results.items():
        sup = np.array([row["supervised"] for row in rows])
        fine = np.array([row["finetuned"] for row in rows])
        diff = fine - sup
        table, (paper_sup, paper_sup_sd), (paper_pre, paper_pre_sd) = PAPER[name]
        data = info[name]
        lines.append(
            f"| {name} ({data['classes']} classes) | {data['labelled']:,} / {data['unlabelled']:,} / "
            f"{data['test']:,} | {100 * data['majority']:.2f} | {_pm(sup)} | {_pm(fine)} | {_pm(diff)} "
            f"({(diff > 0).sum()} of {len(diff)}) | {paper_sup:.2f} +- {paper_sup_sd:.2f} | "
            f"{paper_pre:.2f} +- {paper_pre_sd:.2f} | {paper_pre - paper_sup:+.2f} ({table}) |"
        )
    lines += [
        "",
        "Epochs run (kept epoch, early stopping), mean over the seeds; the pretrainer's reconstruction loss "
        "(mean squared error on the hidden entries over each column's variance: ~1 = predicting the column mean) "
        "on its validation rows at the kept epoch and on the test rows; fit seconds, mean over the seeds:",
        "",
        "| data set | supervised epochs | pretrainer epochs | fine-tune epochs | pretrainer validation loss "
        "| pretrainer test loss | supervised fit s | pretrainer fit s | fine-tune fit s |",
        "|---" * 9 + "|",
    ]
    for name, rows in results.items():

        def column(key, rows=rows):
            return [row[key] for row in rows]

        lines.append(
            f"| {name} | {_epochs(column('supervised_epochs'))} | {_epochs(column('pretrain_epochs'))} | "
            f"{_epochs(column('finetune_epochs'))} | {_pm(column('val_loss'), 1, 3)} | "
            f"{_pm(column('test_loss'), 1, 3)} | {np.mean(column('supervised_s')):.1f} | "
            f"{np.mean(column('pretrain_s')):.1f} | {np.mean(column('finetune_s')):.1f} |"
        )
    lines += [
        "",
        "Every seed (accuracy %, epochs run / kept):",
        "",
        "| data set | seed | supervised | pretrained + fine-tuned | difference | supervised epochs "
        "| pretrainer epochs | fine-tune epochs | pretrainer validation loss |",
        "|---" * 9 + "|",
    ]
    for name, rows in results.items():
        for row in rows:
            lines.append(
                f"| {name} | {row['seed']} | {100 * row['supervised']:.2f} | {100 * row['finetuned']:.2f} | "
                f"{100 * (row['finetuned'] - row['supervised']):+.2f} | "
                + " | ".join(
                    "{} / {}".format(*row[key]) for key in ("supervised_epochs", "pretrain_epochs", "finetune_epochs")
                )
                + f" | {row['val_loss']:.3f} |"
            )
    return "\n".join(lines)


def main():
    """Parse the command line, run every data set and seed, print the tables and write them with ``--output``."""
    torch.set_num_threads(1)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--labelled", type=int, default=1000, help="labelled rows per seed")
    parser.add_argument("--output", help="also write the tables to this Markdown file")
    args = parser.parse_args()
    start = time.perf_counter()
    results, info = {}, {}
    for name in args.datasets:
        results[name] = []
        for seed in args.seeds:
            data = split(name, seed, args.labelled)
            row = run_seed(data, seed)
            results[name].append(row)
            print(
                f"{name} seed {seed}: supervised {100 * row['supervised']:.2f}%, pretrained + fine-tuned "
                f"{100 * row['finetuned']:.2f}% ({time.perf_counter() - start:.0f} s)",
                flush=True,
            )
        _, counts = np.unique(data["y_test"], return_counts=True)
        info[name] = dict(
            labelled=len(data["X_labelled"]),
            unlabelled=len(data["X_unlabelled"]),
            test=len(data["X_test"]),
            classes=len(counts),
            majority=counts.max() / counts.sum(),
        )
    settings = (
        f"ARCH {ARCH}; labelled-row fits {LABELLED_FIT} (validation_fraction 0.1); pretrainer {PRETRAIN_FIT} "
        f"(validation_fraction 0.1; fitted on the unlabelled plus the labelled rows' features). "
        f"Wall time {time.perf_counter() - start:.0f} s."
    )
    text = machine_header() + "\n\n" + settings + "\n\n" + format_tables(results, info)
    print("\n" + text)
    if args.output:
        with open(args.output, "w") as handle:
            handle.write("# Self-supervised pretraining: `python -m benchmarks.pretraining`\n\n" + text + "\n")


if __name__ == "__main__":
    main()
