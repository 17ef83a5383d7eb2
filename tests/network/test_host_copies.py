"""host_to_device: no copy on the CPU, a pinned non-blocking copy elsewhere, an ordinary copy where pinning fails."""

import torch

from sparsetab.network.host_copies import host_to_device


class _HostTensor:
    """Stands for a host tensor on a machine with a GPU: records what is done to it."""

    def __init__(self, pinnable=True):
        self.calls, self.pinnable = [], pinnable

    def pin_memory(self):
        self.calls.append("pin_memory")
        if not self.pinnable:
            raise RuntimeError("Cannot access accelerator device when none is available.")
        return self

    def to(self, device, non_blocking=False):
        self.calls.append(("to", device, non_blocking))
        return "on the device"


def test_on_the_cpu_the_tensor_itself_is_returned():
    tensor = torch.arange(5)
    assert host_to_device(tensor, "cpu") is tensor
    assert host_to_device(tensor, torch.device("cpu")) is tensor
    assert tensor.tolist() == [0, 1, 2, 3, 4]


def test_elsewhere_the_copy_is_from_pinned_memory_and_does_not_block():
    tensor = _HostTensor()
    assert host_to_device(tensor, "cuda:1") == "on the device"
    assert tensor.calls == ["pin_memory", ("to", torch.device("cuda:1"), True)]


def test_where_memory_cannot_be_pinned_the_copy_is_an_ordinary_one():
    tensor = _HostTensor(pinnable=False)
    assert host_to_device(tensor, "cuda") == "on the device"
    assert tensor.calls == ["pin_memory", ("to", torch.device("cuda"), False)]


def test_a_real_tensor_reaches_a_device_without_pinned_memory():
    # On a machine without an accelerator pinning fails, and the meta device takes the ordinary copy.
    copied = host_to_device(torch.ones(2, 3), "meta")
    assert copied.device.type == "meta" and copied.shape == (2, 3) and copied.dtype == torch.float32
