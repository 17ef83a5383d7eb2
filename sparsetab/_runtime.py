"""Where and how torch runs for an estimator: threads, device and autograd mode."""

import contextlib
import functools
import os

import torch
from joblib import cpu_count

__all__ = [
    "available_cores",
    "device_available",
    "resolve_device",
    "thread_count",
    "torch_threads",
    "trains_whatever_the_autograd_mode",
]


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


def trains_whatever_the_autograd_mode(method):
    """Decorate a fit method so that it trains inside the caller's ``torch.no_grad()`` or ``torch.inference_mode()``.

    A fit called in a notebook cell or a serving handler that turned gradients off would
    otherwise fail deep in its first training step (torch's "does not require grad"), and
    under inference mode its network and tensors would be inference tensors that autograd
    refuses. The method runs with ``torch.inference_mode(False)`` and ``torch.enable_grad()``;
    both restore the caller's modes when it returns or raises.

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
        with torch.inference_mode(False), torch.enable_grad():
            return method(*args, **kwargs)

    return training


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
