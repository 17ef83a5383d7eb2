"""Host-to-device copies that do not make the host wait for the device (issue 34)."""

import torch

__all__ = ["host_to_device"]


def host_to_device(tensor, device):
    """``tensor`` (made on the host) on ``device``, copied without making the host wait for the device.

    On a GPU a copy from ordinary (pageable) host memory synchronises the stream: the host waits until the device
    has run everything queued before it. A copy from pinned (page-locked) memory with ``non_blocking=True`` is
    queued like any other operator, so the training loop copies its host-made tensors (the epoch's order of the
    rows, the batch norms' running-average coefficients, the pretrainer's masks) this way. PyTorch's pinned-memory
    allocator keeps the source alive until the copy has run, so the caller may drop it at once.

    Parameters
    ----------
    tensor : torch.Tensor
        A tensor in host memory (any dtype and shape); it is not modified.
    device : torch.device or str
        Where the result goes.

    Returns
    -------
    torch.Tensor
        ``tensor`` itself when ``device`` is the CPU (no copy is made), else a copy of it on ``device``.
    """
    device = torch.device(device)
    if device.type == "cpu":
        return tensor
    try:
        pinned = tensor.pin_memory()
    except RuntimeError:  # a backend that cannot pin host memory: an ordinary copy, which waits
        return tensor.to(device)
    return pinned.to(device, non_blocking=True)
