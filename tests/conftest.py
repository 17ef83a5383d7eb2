"""Fixtures shared by every test."""

import pytest
import torch


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    # The tiny tensors of the tests gain nothing from intra-op threads, and on a
    # loaded machine every parallel op waits for a descheduled sibling thread,
    # which made single tests 20x slower. Restored after each module.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
