"""Issue 32's mask goal checked on every sparsetab configuration ever cached by ``benchmarks/syn.py``.

The goal (issue 32, "Syn1-Syn6"): on at least 5 of the 6 sets, one configuration's masks have a higher relevant
share and a lower FDR than every peer (pytorch-tabnet's sparsemax and entmax masks, HistGradientBoosting +
TreeSHAP), at a test AUC at least the paper's TabNet's minus 0.01. ``syn.py`` reports its goal tables for the
configurations of one invocation; this script reads every cell of one or more of its caches, groups sparsetab's
cells by everything in their key but the seed (protocol, training, entmax mode, gate, overrides, the version of
the ``"auto"`` rules, and the cache folder: a cell's key does not name the CPU, so the project keeps a folder per
machine), keeps on each set the groups measured with at least ``--seeds`` seeds (the lowest that many), and
prints:

- per configuration, its test AUC / relevant share / FDR on each set, marked where the goal is met, and the
  number of sets met;
- per set, the peers' bar (their highest share, their lowest FDR), the highest share and the lowest FDR that any
  configuration reached, and how many configurations met the goal there.

Every number is a mean over seeds and the 5 test sets, as in ``syn.py``. Nothing is measured. Run::

    python -m benchmarks.syn_goal [--caches benchmarks/results/cache/syn benchmarks/results/cache/syn_amd]
                                  [--seeds 3] [--output benchmarks/results/syn_goal.md]
"""

import argparse
import json
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

from benchmarks._cache import key_hash
from benchmarks._syn_reference import PAPER_TABNET_AUC

#: Tolerance of the AUC goal: at least the paper's TabNet AUC minus this.
AUC_TOLERANCE = 0.01
#: Sets on which one configuration must meet the goal.
SETS_NEEDED = 5
SETS = (1, 2, 3, 4, 5, 6)


def configuration_name(key, cache):
    """A readable name of a sparsetab cell's configuration: everything in its key but the seed and data set."""
    parts = [f"{cache}:", key["config"]]
    parts.append("user protocol" if key.get("protocol") else "X_val protocol")
    parts.append(f"{key.get('training', 'defaults')} training")
    if key.get("max_epochs") is not None:
        parts.append(f"max_epochs={key['max_epochs']}")
    if key.get("entmax_alpha", 1.5) != 1.5:
        parts.append(f"alpha={key['entmax_alpha']}")
    parts += [f"{name}={value}" for name, value in sorted(key.get("overrides", {}).items())]
    if key.get("auto_rules"):
        parts.append(f"rules {key['auto_rules'][:8]}")
    return " ".join(parts)


def read_cells(caches):
    """Every cached cell of the caches.

    Parameters
    ----------
    caches : list of pathlib.Path
        ``syn.py`` cache folders (``<cache>/syn<k>/<cell>.json``).

    Returns
    -------
    list of tuple
        ``(k, model, name, group, seed, result)``: ``group`` identifies the configuration (its cache and whole key
        but seed and data set), ``name`` says it in words.
    """
    cells = []
    for cache in caches:
        for path in sorted(Path(cache).glob("syn*/*.json")):
            record = json.loads(path.read_text())
            key, result = record["key"], record["result"]
            k = int(key["dataset"].removeprefix("syn"))
            if key["model"] == "sparsetab":
                name = configuration_name(key, Path(cache).name)
            else:
                name = f"{key['model']} {key['config']}"
            # Cells are grouped by their whole key but seed and data set (library versions included), not by
            # the name, which leaves some of it out.
            configuration = {field: value for field, value in key.items() if field not in ("seed", "dataset")}
            group = (Path(cache).name, json.dumps(configuration, sort_keys=True))
            cells.append((k, key["model"], name, group, key["seed"], result))
    return cells


def summarise(cells, seeds):
    """Means over seeds of every configuration measured with ``seeds`` seeds (the peers with all they have).

    Parameters
    ----------
    cells : list of tuple
        What :func:`read_cells` returns.
    seeds : int
        Seeds a sparsetab configuration needs on a set (the lowest that many are averaged); at least 1.

    Returns
    -------
    peers : dict
        ``peers[k]`` = ``{"share": highest share of any peer, "fdr": lowest FDR of any peer}``.
    ours : dict
        ``ours[name][k]`` = ``{"auc", "share", "fdr", "met"}`` for sparsetab's configurations.
    """
    grouped, names = defaultdict(dict), {}
    for k, model, name, group, seed, result in cells:
        grouped[(k, model == "sparsetab", group)][seed] = result
        names[group] = name
    # Two keys that differ only in what the name leaves out (a peer's copy in another cache is a peer all the
    # same): tell them apart by their key's hash.
    counts = Counter(names.values())
    names = {group: f"{name} [{key_hash(group)[:8]}]" if counts[name] > 1 else name for group, name in names.items()}
    peers, ours = {}, defaultdict(dict)
    for (k, is_ours, group), runs in grouped.items():
        name = names[group]
        if is_ours and len(runs) < seeds:
            continue
        chosen = [runs[seed] for seed in sorted(runs)[: seeds if is_ours else None]]
        means = {score: float(np.mean([np.mean(run[score]) for run in chosen])) for score in ("auc", "share", "fdr")}
        if is_ours:
            ours[name][k] = means
        else:
            bar = peers.setdefault(k, {"share": -np.inf, "fdr": np.inf})
            bar["share"], bar["fdr"] = max(bar["share"], means["share"]), min(bar["fdr"], means["fdr"])
    for per_set in ours.values():
        for k, means in per_set.items():
            bar = peers.get(k)
            means["met"] = bool(
                bar is not None
                and means["share"] > bar["share"]
                and means["fdr"] < bar["fdr"]
                and means["auc"] >= PAPER_TABNET_AUC[k] - AUC_TOLERANCE
            )
    return peers, merge_identical(ours)


def merge_identical(ours):
    """Configurations whose every mean is the same, under one name (their names joined by ``" = "``).

    A cell copied to a second cache, or a cache key that changed (the version of the ``"auto"`` rules) while the
    fit did not, gives the same numbers twice; they are one measurement.
    """
    merged = {}
    for name, per_set in sorted(ours.items()):
        fingerprint = tuple(sorted((k, tuple(sorted(means.items()))) for k, means in per_set.items()))
        merged.setdefault(fingerprint, ([], per_set))[0].append(name)
    return {" = ".join(names): per_set for names, per_set in merged.values()}


def format_report(peers, ours, seeds):
    """The two Markdown tables (configurations, then sets) and a one-line verdict."""
    lines = [
        f"Test AUC / relevant share / FDR, means over {seeds} seeds and 5 test sets; **bold** where the goal is met "
        f"(share above and FDR below every peer's, AUC at least the paper's TabNet's minus {AUC_TOLERANCE}).",
        "",
        "| configuration | " + " | ".join(f"Syn{k}" for k in SETS) + " | sets met |",
        "|---" * (len(SETS) + 2) + "|",
    ]
    ranked = sorted(ours.items(), key=lambda item: (-sum(m["met"] for m in item[1].values()), item[0]))
    for name, per_set in ranked:
        cells = []
        for k in SETS:
            means = per_set.get(k)
            if means is None:
                cells.append("-")
                continue
            text = f"{means['auc']:.3f} / {means['share']:.2f} / {means['fdr']:.2f}"
            cells.append(f"**{text}**" if means["met"] else text)
        met = sum(means["met"] for means in per_set.values())
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {met} of {len(per_set)} |")
    lines += [
        "",
        "| data set | peers' highest share / lowest FDR | highest share / lowest FDR of any configuration |"
        " configurations meeting the goal |",
        "|---|---|---|---|",
    ]
    for k in SETS:
        bar = peers.get(k)
        measured = [per_set[k] for per_set in ours.values() if k in per_set]
        if bar is None or not measured:
            continue
        best_share = max(means["share"] for means in measured)
        best_fdr = min(means["fdr"] for means in measured)
        met = sum(means["met"] for means in measured)
        lines.append(
            f"| Syn{k} | {bar['share']:.3f} / {bar['fdr']:.3f} | {best_share:.3f} / {best_fdr:.3f} | "
            f"{met} of {len(measured)} |"
        )
    most = max((sum(m["met"] for m in per_set.values()) for per_set in ours.values()), default=0)
    lines += [
        "",
        f"Most sets met by one configuration: {most} of {len(SETS)} (the goal asks for {SETS_NEEDED}), "
        f"over {len(ours)} configurations with distinct results.",
    ]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--caches",
        nargs="+",
        default=["benchmarks/results/cache/syn", "benchmarks/results/cache/syn_amd"],
        help="syn.py cache folders",
    )
    parser.add_argument("--seeds", type=int, default=3, help="seeds a sparsetab configuration needs on a set")
    parser.add_argument("--output", help="also write the report to this Markdown file")
    args = parser.parse_args(argv)
    if args.seeds < 1:
        parser.error(f"--seeds must be at least 1, got {args.seeds}")
    missing = [cache for cache in args.caches if not Path(cache).is_dir()]
    if missing:
        parser.error(f"--caches: no such folder: {', '.join(missing)}")
    peers, ours = summarise(read_cells([Path(cache) for cache in args.caches]), args.seeds)
    report = format_report(peers, ours, args.seeds)
    print(report)
    if args.output:
        title = "# Syn1-Syn6: issue 32's mask goal, `python -m benchmarks.syn_goal`"
        Path(args.output).write_text(f"{title}\n\n{report}\n")


if __name__ == "__main__":
    main()
