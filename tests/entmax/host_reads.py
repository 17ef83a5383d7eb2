"""Helpers of the tests of the solvers: count host reads, and run on the CPU the paths other devices take."""

import contextlib
from unittest import mock

import sparsetab.entmax._threshold_kernels as kernels
from sparsetab._host_syncs import SyncCounter


# The sort-free solvers test convergence after every pass on the CPU and in blocks of passes on other
# devices (a GPU); the tests run the second way on the CPU too, so both are checked.
def convergence_tests(blocked):
    """Make the sort-free solvers test convergence in blocks (as on a GPU) on the CPU too, or per pass."""
    if not blocked:
        return contextlib.nullcontext()
    return mock.patch.object(kernels, "PER_PASS_TEST_DEVICES", frozenset())


# On a device other than the CPU (a GPU), sparsemax and 1.5-entmax sort instead of iterating; the tests run
# that path on the CPU too.
def sorting_on_the_cpu():
    """Make sparsemax and 1.5-entmax take the sort-based solvers on the CPU, as on a GPU."""
    return mock.patch.object(kernels, "SORT_FREE_DEVICES", frozenset())


#: The three ways sparsemax and 1.5-entmax can be solved: sort-free with a convergence test after every pass
#: (the CPU), sort-free with tests in blocks (reachable only through the kernels' device sets), by sorting
#: (every other device).
SOLVER_PATHS = ("per_pass", "blocked", "sorting")


def solver_path(path):
    """Run sparsemax and 1.5-entmax by one of :data:`SOLVER_PATHS` on the CPU."""
    if path == "sorting":
        return sorting_on_the_cpu()
    return convergence_tests(path == "blocked")


@contextlib.contextmanager
def counted_host_reads(counter):
    """Add to ``counter[0]`` every call that would make the host wait for a GPU (see sparsetab._host_syncs)."""
    syncs = SyncCounter()
    try:
        with syncs.counting():
            yield
    finally:
        counter[0] += syncs.total()
