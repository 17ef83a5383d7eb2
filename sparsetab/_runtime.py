"""Where and how torch runs for an estimator: threads, device and autograd mode."""

import contextlib
import functools
import os

import torch
from joblib import cpu_count
from torch import nn

__all__ = [
    "SMALL_STEP_WORK",
    "available_cores",
    "device_available",
    "resolve_device",
    "step_work",
    "thread_count",
    "torch_threads",
    "trains_whatever_the_autograd_mode",
    "training_threads",
]

# With n_jobs=None a training step on the CPU whose work (step_work) is below this runs on one thread.
# Measured on 2 cores (benchmarks/results/training_threads.md, Intel Xeon): on a quiet machine a second
# thread changed the time per step by 0-4% (slower) at 3.6M-7.2M (32-64 rows of 8-30 columns) and saved
# 6-44% from 13M up (64 rows of 30 columns, 128 of 8, 32 of 100); beside one busy process two threads
# were 12-20x slower than one at every size measured (training_threads_busy.md).
SMALL_STEP_WORK = 10_000_000


# A child process made by fork() inherits torch's OpenMP thread count but not the worker threads: GNU
# libgomp then waits forever for them at the first parallel region (a predict in a multiprocessing,
# gunicorn or celery prefork worker hung). In such a child, torch_threads runs its block on one thread,
# as torch's own DataLoader workers do.
_state = {"forked_child": False}


def _mark_forked_child():
    _state["forked_child"] = True


if hasattr(os, "register_at_fork"):  # POSIX only; Windows has no fork
    os.register_at_fork(after_in_child=_mark_forked_child)


def available_cores():
    """The CPU cores this process may use, never the node's count when it is limited.

    joblib's ``cpu_count`` (the CPU affinity mask, a cgroup CPU quota, ``LOKY_MAX_CPU_COUNT``),
    capped by ``OMP_NUM_THREADS`` when the environment sets it: joblib's process backends
    (loky) and the schedulers that follow the same convention set it in each worker to its
    share of the cores.

    Returns
    -------
    int
        At least 1.
    """
    cores = cpu_count()
    try:
        limit = int(os.environ.get("OMP_NUM_THREADS", ""))
    except ValueError:  # unset, empty or not a number (OpenMP then ignores it too)
        limit = 0
    if limit > 0:
        cores = min(cores, limit)
    return max(1, cores)


def thread_count(n_jobs):
    """The torch thread count an estimator's ``n_jobs`` asks for.

    Parameters
    ----------
    n_jobs : int or None
        A positive count as it is; a negative one counts back from :func:`available_cores`
        as in joblib (-1: all of them, -2: all but one, never fewer than 1); None: torch's
        current count, capped at :func:`available_cores`.

    Returns
    -------
    int
    """
    if n_jobs is None:
        return min(torch.get_num_threads(), available_cores())
    return n_jobs if n_jobs > 0 else max(1, available_cores() + 1 + n_jobs)


def step_work(network, batch_rows):
    """The work of one training step: about the multiply-adds of the forward pass over a batch.

    Estimated as the rows the network sees (``batch_rows`` times its efficient members, whose
    rows are repeated in the batch) times its parameters, leaving out the tables of
    :class:`torch.nn.Embedding` modules: each row reads one entry of a table, while it
    multiplies with every weight of a linear layer.

    Parameters
    ----------
    network : torch.nn.Module
        The network being trained; an attribute ``n_efficient_members`` (default 1) counts
        the repeats of each row.
    batch_rows : int
        Rows per optimiser step.

    Returns
    -------
    int
    """
    weights = sum(
        parameter.numel()
        for module in network.modules()
        if not isinstance(module, nn.Embedding)
        for parameter in module.parameters(recurse=False)
    )
    return int(batch_rows) * int(getattr(network, "n_efficient_members", 1)) * weights


@contextlib.contextmanager
def training_threads(n_jobs, network, batch_rows):
    """Run a training run with the torch threads of ``n_jobs``, one thread for small CPU steps under ``None``.

    With ``n_jobs=None`` on the CPU, a run whose :func:`step_work` is below
    :data:`SMALL_STEP_WORK` trains on one thread: its operators are too small for a second
    thread to gain (0-4% slower on two cores), and beside another busy process the OpenMP
    threads wait for each other (12-20x slower; ``benchmarks/training_threads.py``). Other
    values and devices are as :func:`torch_threads`.

    Parameters
    ----------
    n_jobs : int or None
        The estimator's ``n_jobs``.
    network : torch.nn.Module
        The network about to be trained (its device and parameters decide).
    batch_rows : int
        Rows per optimiser step.
    """
    threads = n_jobs
    if n_jobs is None:
        on_cpu = all(parameter.device.type == "cpu" for parameter in network.parameters())
        if on_cpu and step_work(network, batch_rows) < SMALL_STEP_WORK:
            threads = 1
    with torch_threads(threads):
        yield


def trains_whatever_the_autograd_mode(method):
    """Decorate a fit method so that it trains inside the caller's ``torch.no_grad()`` or ``torch.inference_mode()``.

    A fit called in a notebook cell or a serving handler that turned gradients off would
    otherwise fail deep in its first training step (torch's "does not require grad"), and
    under inference mode its network and tensors would be inference tensors that autograd
    refuses. The method runs with ``torch.inference_mode(False)`` and ``torch.enable_grad()``;
    both restore the caller's modes when it returns or raises. It also runs with torch's default
    dtype float32 (restored the same way): the networks are float32 models, and under a default of
    float64, set by another library of the process say, their weights were built in float64 and
    the same ``random_state`` gave another model.

    Parameters
    ----------
    method : callable
        The fit method.

    Returns
    -------
    callable
        The method, run under those modes.
    """

    @functools.wraps(method)
    def training(*args, **kwargs):
        with torch.inference_mode(False), torch.enable_grad(), _default_dtype(torch.float32):
            return method(*args, **kwargs)

    return training


@contextlib.contextmanager
def _default_dtype(dtype):
    # torch.set_default_dtype for the block, then the caller's again (set only when it differs).
    previous = torch.get_default_dtype()
    if previous == dtype:
        yield
        return
    torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(previous)


@contextlib.contextmanager
def torch_threads(n_jobs):
    """Run the block with the torch intra-op threads of ``n_jobs``, then restore the previous count.

    In a process started by ``fork()`` (after this module was imported) the block runs on one
    thread whatever ``n_jobs`` says: the OpenMP worker threads of the parent do not exist there,
    and a parallel region would wait for them forever. The count is set only when it changes,
    so that fits running in threads of one process with ``n_jobs=None`` do not reset each
    other's.

    Parameters
    ----------
    n_jobs : int or None
        See :func:`thread_count`: negative values count back from the cores this process may
        use, None keeps torch's count unless it exceeds them.
    """
    threads = 1 if _state["forked_child"] else thread_count(n_jobs)
    previous = torch.get_num_threads()
    if threads == previous:
        yield
        return
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def device_available(device):
    """Whether torch can allocate on ``device`` (a torch.device) in this process."""
    try:
        torch.empty(0, device=device)
    except (RuntimeError, AssertionError):  # AssertionError: torch built without that backend
        return False
    return True


def resolve_device(requested):
    """The torch.device of an estimator's ``device`` parameter.

    Parameters
    ----------
    requested : str or torch.device
        ``"cpu"``, ``"cuda"``, ``"cuda:N"``, ``"auto"`` (cuda when available, else cpu) or a
        torch.device.

    Returns
    -------
    torch.device

    Raises
    ------
    ValueError
        If the device is malformed or not available to torch here (never a silent fallback).
    """
    device = requested
    if isinstance(device, str) and device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    try:
        device = torch.device(device)
    except (RuntimeError, TypeError) as error:
        raise ValueError(
            f"device={requested!r} is not usable here ({error}); accepted: 'cpu', 'cuda', 'cuda:N', 'auto' "
            "(cuda when available, else cpu) or a torch.device."
        ) from error
    if device.type == "meta" or not device_available(device):  # meta tensors hold no data
        raise ValueError(
            f"device={requested!r} is not usable here (no such device is available to torch "
            f"{torch.__version__}); accepted: 'cpu', 'cuda', 'cuda:N', 'auto' (cuda when available, else "
            "cpu) or a torch.device."
        )
    return device
