"""Helpers of the tests of the solvers' convergence tests: count host reads, and force blocked tests on the CPU."""

import contextlib
from unittest import mock

import torch

import sparsetab.entmax._threshold_kernels as kernels


# The sort-free solvers test convergence after every pass on the CPU and in blocks of passes on other
# devices (a GPU); the tests run the second way on the CPU too, so both are checked.
def convergence_tests(blocked):
    """Make the sort-free solvers test convergence in blocks (as on a GPU) on the CPU too, or per pass."""
    if not blocked:
        return contextlib.nullcontext()
    return mock.patch.object(kernels, "PER_PASS_TEST_DEVICES", frozenset())


SYNC_CALLS = ("__bool__", "__float__", "__int__", "__index__", "item", "tolist")


@contextlib.contextmanager
def counted_host_reads(counter):
    """Count the calls that read a tensor's value on the host (each one a device sync on a GPU)."""
    originals = {name: getattr(torch.Tensor, name) for name in SYNC_CALLS}
    original_equal = torch.equal

    def counted(original):
        def call(*args, **kwargs):
            counter[0] += 1
            return original(*args, **kwargs)

        return call

    with contextlib.ExitStack() as stack:
        for name, original in originals.items():
            stack.enter_context(mock.patch.object(torch.Tensor, name, counted(original)))
        stack.enter_context(mock.patch.object(torch, "equal", counted(original_equal)))
        yield
