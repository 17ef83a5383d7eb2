"""SyncCounter: each kind of call that makes a host wait for a GPU, counted by hand-checked examples."""

import operator

import numpy as np
import pytest
import torch

from sparsetab._host_syncs import SYNC_KINDS, SyncCounter

NONE = dict.fromkeys(SYNC_KINDS, 0)


def _counts(action):
    counter = SyncCounter()
    with counter.counting():
        action()
    return counter.by_kind()


def _only(kind, calls):
    return {**NONE, kind: calls}


@pytest.mark.parametrize(
    "action",
    [
        lambda: bool(torch.ones(())),
        lambda: float(torch.ones(())),
        lambda: int(torch.ones(())),
        lambda: torch.ones(()).item(),
        lambda: torch.ones(3).tolist(),
        lambda: torch.equal(torch.ones(2), torch.ones(2)),
        lambda: [0, 1, 2][torch.tensor(1)],  # __index__
    ],
)
def test_each_value_read_counts_once(action):
    assert _counts(action) == _only("value_read", 1)


@pytest.mark.parametrize(
    "action",
    [
        lambda: torch.arange(4).nonzero(),
        lambda: torch.nonzero(torch.arange(4)),
        lambda: torch.argwhere(torch.arange(4)),
        lambda: torch.masked_select(torch.arange(4), torch.arange(4) > 1),
        lambda: torch.unique(torch.tensor([1, 1, 2])),
        lambda: torch.tensor([1, 1, 2]).unique_consecutive(),
        lambda: torch.where(torch.arange(4) > 1),
        lambda: torch.arange(4)[torch.arange(4) > 1],
        lambda: torch.zeros(2, 4)[:, torch.arange(4) > 1],
    ],
)
def test_each_data_dependent_shape_counts_once(action):
    assert _counts(action) == _only("data_dependent_shape", 1)


def test_boolean_mask_assignment_counts_but_fixed_shape_operators_do_not():
    def action():
        values = torch.arange(4.0)
        values[values > 1] = 0.0  # counted
        torch.where(values > 1, values, 0.0)  # three arguments: a fixed shape
        values.index_select(0, torch.tensor([0, 2]))  # integer index, no device named
        torch.sort(values)

    assert _counts(action) == _only("data_dependent_shape", 1)


def test_copies_from_host_data_to_a_named_device_count():
    # Called from this file (outside sparsetab), .to(cpu) is torch-style code moving a tensor that is already on the
    # device: not counted. Host data sent to a named device is.
    def action():
        torch.tensor([1.0, 2.0], device="cpu")  # counted
        torch.as_tensor([1.0], device="cpu")  # counted
        torch.ones(2).new_tensor([3.0])  # counted
        torch.tensor([1.0])  # no device named: host data staying on the host
        torch.ones(2).to(torch.float64)  # a dtype, no device
        torch.ones(2).to("cpu")
        torch.full((), 1.5, device="cpu")  # a fill on the device, no copy

    assert _counts(action) == _only("pageable_copy", 3)


def test_locations_name_the_sparsetab_line_or_say_outside():
    counter = SyncCounter()
    with counter.counting(locations=True):
        float(torch.ones(()))
    assert counter.counts == {("value_read", "outside sparsetab"): 1}


def test_paused_blocks_count_nothing_and_patches_are_undone():
    counter = SyncCounter()
    with counter.counting():
        with counter.paused():
            float(torch.ones(()))
        float(torch.ones(()))
    float(torch.ones(()))  # after the block: torch is as it was
    assert counter.total() == 1 and counter.total("value_read") == 1
    assert "call" not in repr(torch.Tensor.item) and torch.Tensor.to.__qualname__ == "TensorBase.to"


def _protocol_behaviour():
    """What Python's protocols make of tensors: sequences, numbers, indices, and lists of 0-d tensors."""
    t = torch.arange(4.0)
    i = torch.tensor(2)
    return (
        torch.tensor([t[0], t[2]]).tolist(),  # 0-d tensors must not pass as sequences
        np.array([t[1], t[3]]).tolist(),
        operator.index(i),
        ["a", "b", "c"][i],
        bool(i),
        int(i),
        float(i),
        len(t),
        t[t > 1].tolist(),
    )


def test_counting_leaves_torch_tensor_and_its_protocols_as_they_were():
    # Patching then deleting __getitem__ on torch.Tensor once left CPython's sequence slot behind, so any later
    # torch.tensor([t[0], t[1]]) in the process failed with "len() of a 0-d tensor".
    before = (_protocol_behaviour(), dict(vars(torch.Tensor)))
    counter = SyncCounter()
    with counter.counting():
        values = torch.arange(6)
        values[values > 3] = 0
        assert values[values > 0].tolist() == [1, 2, 3]
    assert counter.by_kind() == {"value_read": 1, "data_dependent_shape": 2, "pageable_copy": 0}
    assert _protocol_behaviour() == before[0] == ([0.0, 2.0], [1.0, 3.0], 2, "c", True, 2, 2.0, 4, [2.0, 3.0])
    assert dict(vars(torch.Tensor)) == before[1]


def test_an_unknown_kind_is_a_clear_error():
    with pytest.raises(ValueError, match=r"kind='reads' is not one of \('value_read'"):
        SyncCounter().total("reads")
