"""A ``compare.py`` cell: its cache key, its measurement in a worker process, and the runs of many cells.

A cell is one (data set, model, configuration, seed, protocol); its key (:func:`cell_key`) is what the cache of
``_cache.py`` files it under, so everything that goes into it here must stay byte for byte as it is, or the cached
cells under ``benchmarks/results/cache/`` are measured again.
"""

import ast
import hashlib
import inspect
import os
import sys
import time
import traceback
import warnings
from datetime import datetime, timezone
from pathlib import Path

import torch
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

import sparsetab
from benchmarks._cache import CellCache, json_safe
from benchmarks._datasets import QUICK_ROWS, data_info, prepare, task_of
from benchmarks._fitting import error_of, fit_once
from benchmarks._measure import cpu_model
from benchmarks._models import QUICK_EPOCHS, build, versions_for, warm_up
from benchmarks._tuning import run_tuned, tuning_settings
from sparsetab import _params as params_module

RESULTS_DIR = Path(__file__).resolve().parent / "results"
CACHE_DIR = RESULTS_DIR / "cache"
QUICK_CACHE_DIR = RESULTS_DIR / "cache-quick"
#: Version of the measuring protocol of a single fit / of a tuned cell; part of every key (bump it when the
#: splits, the data preparation or the scoring here change).
PROTOCOL = "holdout90-v1"
TUNED_PROTOCOL = "halving-predefined-split-v1"
#: ``--protocol user`` (the key's protocol instead of ``PROTOCOL``): sparsetab fitted as users call it,
#: ``fit(X_train, y_train)`` on all the training rows without ``X_val``, its training error recorded; and the peers'
#: cells of such a run: the same fits as ``PROTOCOL`` with their training error recorded.
USER_PROTOCOL = "user-fit-Xy-v1"
USER_PEER_PROTOCOL = "holdout90-v1+train-error"


def _relative(path):
    """``path`` relative to the repository root when it is inside it, else as given (POSIX form)."""
    path = Path(path).resolve()
    root = RESULTS_DIR.parent.parent
    return (path.relative_to(root) if path.is_relative_to(root) else path).as_posix()


def key_protocol(cell):
    """The protocol string of ``cell``'s key: ``TUNED_PROTOCOL`` for a tuned cell, else ``PROTOCOL`` under
    ``--protocol validation`` and ``USER_PROTOCOL`` (sparsetab) / ``USER_PEER_PROTOCOL`` (the peers) under
    ``--protocol user``."""
    if cell["config"] == "tuned":
        return TUNED_PROTOCOL
    if cell.get("protocol", "validation") == "user":
        return USER_PROTOCOL if cell["model"] == "sparsetab" else USER_PEER_PROTOCOL
    return PROTOCOL


def cell_key(cell):
    """The cache key of ``cell`` (a JSON-safe dict; see ``_cache.py``).

    Under ``--protocol user`` a sparsetab cell's key also holds the hash of the rules behind its ``"auto"``
    parameters (:func:`auto_rules_hash`): they decide how a fit without ``X_val`` trains.

    Raises
    ------
    Exception
        Whatever constructing the estimator raises (unknown configuration or parameter).
    """
    _, _, key_params = build(cell, task_of(cell["dataset"]))
    protocol = key_protocol(cell)
    key = dict(
        dataset=cell["dataset"],
        model=cell["model"],
        config=cell["config"],
        seed=cell["seed"],
        protocol=protocol,
        quick=dict(rows=QUICK_ROWS, epochs=QUICK_EPOCHS) if cell["quick"] else False,
        versions=versions_for(cell["model"]),
        **key_params,
    )
    if cell["config"] == "tuned":
        key["tuning"] = tuning_settings(cell)
    if protocol == USER_PROTOCOL:
        key["auto_rules"] = auto_rules_hash()
    return json_safe(key)


def auto_rules_hash():
    """SHA-256 (16 hex digits) of the rules behind ``"auto"``: the code of ``sparsetab._params``'s resolvers.

    ``small_tables.py`` keys its user-protocol cells by it too: the syntax trees of
    the ``resolve_*`` functions without their docstrings, and the ``AUTO_*`` constants, so that documenting a rule
    keeps the cells and changing one re-measures them.
    """
    parts = []
    for name, function in sorted(vars(params_module).items()):
        if name.startswith("resolve_") and callable(function):
            tree = ast.parse(inspect.getsource(function)).body[0]
            if ast.get_docstring(tree) is not None:
                tree.body = tree.body[1:]
            parts.append(ast.dump(tree))
    constants = {name: value for name, value in vars(params_module).items() if name.startswith("AUTO_")}
    return hashlib.sha256(("".join(parts) + repr(sorted(constants.items()))).encode()).hexdigest()[:16]


_PREPARED = {}  # (data set, seed, quick) -> prepared data, per process
_WARMED_UP = []


def prepared(name, seed, quick):
    """:func:`prepare` of ``name``, kept for the next cell of the same process (the last two data sets)."""
    key = (name, seed, quick)
    if key not in _PREPARED:
        while len(_PREPARED) >= 2:
            _PREPARED.pop(next(iter(_PREPARED)))
        _PREPARED[key] = prepare(name, seed, quick)
    return _PREPARED[key]


def _sparsetab_source_hash():
    """SHA-256 (16 hex digits) of the imported sparsetab package's ``.py`` files (recorded in every cell)."""
    digest = hashlib.sha256()
    root = Path(sparsetab.__file__).resolve().parent
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def run_cell(cell, cache_root, key):
    """Measure one cell and store it in the cache; the worker function of ``--jobs``.

    Parameters
    ----------
    cell : dict
        ``dataset``, ``model``, ``config``, ``seed``, ``quick``, ``max_epochs``, ``threads``, ``jobs``,
        ``command`` and, for a tuned cell, ``default_cpu_s`` (the CPU seconds of the model's default fit).
    cache_root : str
        Cache folder.
    key : dict
        The cell's key (:func:`cell_key`).

    Returns
    -------
    dict
        The result (stored in the cache), or ``{"error": str}`` (not stored).
    """
    torch.set_num_threads(cell["threads"])
    warnings.filterwarnings("ignore", category=ConvergenceWarning)
    warnings.filterwarnings("ignore", category=UserWarning, module=r"pytorch_tabnet(\.|$)")
    print(f"[{cell['dataset']}] {cell['model']} {cell['config']} seed {cell['seed']} ...", file=sys.stderr, flush=True)
    try:
        with threadpool_limits(limits=cell["threads"]):
            if not _WARMED_UP and cell["model"] in ("sparsetab", "pytorch-tabnet"):
                warm_up()
                _WARMED_UP.append(True)
            data = prepared(cell["dataset"], cell["seed"], cell["quick"])
            estimator, fit_params, _ = build(cell, data["task"], data)
            start_cpu = time.process_time()
            if cell["config"] == "tuned":
                result = run_tuned(data, cell, estimator)
            else:
                result = fit_once(data, estimator, cell["model"], fit_params, cell.get("protocol", "validation"))
            result["cpu_s"] = time.process_time() - start_cpu
    except Exception as exc:
        traceback.print_exc()
        return dict(error=_cell_error(exc))
    result.update(error_value=error_of(cell["dataset"], data["task"], result["metric1"], result["metric2"]))
    if "train_metric1" in result:
        result.update(
            protocol=key_protocol(cell),
            train_error_value=error_of(cell["dataset"], data["task"], result["train_metric1"], result["train_metric2"]),
        )
    result.update(
        data=data_info(data),
        cpu_model=cpu_model(),
        logical_cores=os.cpu_count(),
        threads=cell["threads"],
        jobs=cell["jobs"],
        timestamp=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        command=cell["command"],
        sparsetab_source=_sparsetab_source_hash(),
    )
    CellCache(cache_root).put(key, result)
    return result


def _run_cell_job(index, cell, cache_root, key):
    """``(index, run_cell(...))`` for the unordered parallel generator."""
    return index, run_cell(cell, cache_root, key)


def execute(pending, keys, cache_root, args, on_result):
    """Run the ``pending`` cells, ``args.jobs`` at once, and call ``on_result(cell id, result)`` as each ends.

    Parameters
    ----------
    pending : dict
        ``{cell id: cell}``.
    keys : dict
        ``{cell id: key}``.
    cache_root : str
    args : argparse.Namespace
    on_result : callable
    """
    if not pending:
        return
    ids = list(pending)
    if args.jobs == 1:
        for index in ids:
            on_result(index, run_cell(pending[index], cache_root, keys[index]))
        return
    from joblib import Parallel, delayed

    # The worker function is found by its module's name in the worker processes: this module is never __main__.
    jobs = Parallel(n_jobs=args.jobs, backend="loky", return_as="generator_unordered")
    calls = (delayed(_run_cell_job)(index, pending[index], cache_root, keys[index]) for index in ids)
    for index, result in jobs(calls):
        on_result(index, result)


def _cell_error(exc):
    """Table cell text for an exception (pipes and newlines removed, at most 160 characters of message)."""
    message = f"{type(exc).__name__}: {exc}".replace("|", "/").replace("\n", " ")
    return "error: " + (message[:160] + "..." if len(message) > 160 else message)
