"""Fixtures shared by the entmax tests."""

import pytest
import torch


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    # The machine is shared: with several intra-op threads every parallel op
    # waits for a descheduled sibling, which made single tests 20x slower.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
