"""Count, on any device, the calls that would make the host wait for a GPU (a development tool, issue 34).

On a GPU the host queues work and goes on; three kinds of call make it stop until the device has caught up
(what ``torch.cuda.set_sync_debug_mode`` reports, and what rules out capturing a step in a CUDA graph):

- ``value_read``: reading a tensor's value on the host (``bool(t)``, ``float(t)``, ``int(t)``, ``t.item()``,
  ``t.tolist()``, ``torch.equal``);
- ``data_dependent_shape``: an operator whose output size depends on the values (``nonzero``, ``argwhere``,
  ``masked_select``, ``unique``, one-argument ``torch.where``, indexing with a boolean mask), which must read
  that size back;
- ``pageable_copy``: a blocking copy from ordinary (pageable, not pinned) host memory to a device
  (``t.to(device)`` of a host tensor, ``torch.tensor(data, device=...)``, ``new_tensor``): CUDA stages such a
  copy through a pinned buffer and synchronises the stream. A pinned source copied with ``non_blocking=True``
  (:func:`sparsetab._runtime.host_to_device`) does not wait.

The same calls are made on the CPU, where nothing waits, so :class:`SyncCounter` counts them there: the test suite
and ``benchmarks/host_syncs.py`` check a training step without a GPU. Device-agnostic code cannot tell, on the CPU,
a tensor that lives on "the device" from one made on the host, so a ``.to(device)`` of any unpinned CPU tensor with
an explicit device, made by sparsetab's code, counts as a pageable copy (on a GPU it would be one, or a no-op that the
code need not make).
"""

import collections
import contextlib
import sys
import traceback
from unittest import mock

import torch
from torch.overrides import TorchFunctionMode

__all__ = ["SYNC_KINDS", "SyncCounter"]

#: The kinds of call counted, in the order reports list them.
SYNC_KINDS = ("value_read", "data_dependent_shape", "pageable_copy")

_VALUE_READS = ("__bool__", "__float__", "__int__", "__index__", "item", "tolist")
_SHAPE_METHODS = ("nonzero", "argwhere", "masked_select", "unique", "unique_consecutive")
_PACKAGE_MARK = "/sparsetab/"


def _is_device(value):
    return isinstance(value, (str, torch.device))


def _target_device(args, kwargs):
    """The device a ``Tensor.to`` call names, or None (a dtype-only conversion)."""
    if kwargs.get("device") is not None:
        return kwargs["device"]
    if args and _is_device(args[0]):
        return args[0]
    if args and isinstance(args[0], torch.Tensor):  # to(other): other's device
        return args[0].device
    return None


def _pinned(tensor):
    try:
        return tensor.is_pinned()
    except RuntimeError:  # no accelerator: nothing can be pinned
        return False


def _has_boolean_index(index):
    parts = index if isinstance(index, tuple) else (index,)
    return any(isinstance(part, torch.Tensor) and part.dtype in (torch.bool, torch.uint8) for part in parts)


class _BooleanIndexing(TorchFunctionMode):
    """Sees ``tensor[mask]`` and ``tensor[mask] = value`` through torch's function-override protocol.

    Indexing is not patched on ``torch.Tensor`` like the other calls: assigning and then deleting ``__getitem__``
    on that Python subclass leaves CPython's sequence slot behind, after which every 0-d tensor passes as a
    sequence (``torch.tensor([t[0], t[1]])`` then fails with "len() of a 0-d tensor" anywhere later in the
    process). A mode changes no type.
    """

    _INDEXING = (torch.Tensor.__getitem__, torch.Tensor.__setitem__)

    def __init__(self, record):
        super().__init__()
        self._record = record

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func in self._INDEXING and len(args) > 1 and _has_boolean_index(args[1]):
            self._record("data_dependent_shape")
        return func(*args, **(kwargs or {}))


class SyncCounter:
    """Counts of the calls that make a host wait for a GPU, made inside :meth:`counting` blocks.

    Attributes
    ----------
    counts : collections.Counter
        ``(kind, where) -> calls``: ``kind`` one of :data:`SYNC_KINDS`, ``where`` the innermost sparsetab source
        line that made the call (``"path/module.py:line"``, relative to the package) when counting with
        ``locations=True``, else None.

    Examples
    --------
    >>> import torch
    >>> from sparsetab._host_syncs import SyncCounter
    >>> counter = SyncCounter()
    >>> with counter.counting():
    ...     value = float(torch.ones(3).sum())
    ...     rows = torch.arange(4)[torch.arange(4) > 1]
    >>> counter.by_kind()
    {'value_read': 1, 'data_dependent_shape': 1, 'pageable_copy': 0}
    """

    def __init__(self):
        self.counts = collections.Counter()
        self._locations = False
        self._paused = 0

    def total(self, kind=None):
        """Calls counted so far, of one kind or of all.

        Parameters
        ----------
        kind : str or None, default=None
            One of :data:`SYNC_KINDS`; None sums every kind.

        Returns
        -------
        int

        Raises
        ------
        ValueError
            If ``kind`` is not None or one of :data:`SYNC_KINDS`.
        """
        if kind is not None and kind not in SYNC_KINDS:
            raise ValueError(f"kind={kind!r} is not one of {SYNC_KINDS} (or None for all).")
        return sum(n for (counted_kind, _), n in self.counts.items() if kind in (None, counted_kind))

    def by_kind(self):
        """Calls counted so far per kind.

        Returns
        -------
        dict
            ``{kind: calls}`` for every kind of :data:`SYNC_KINDS`, in that order.
        """
        return {kind: self.total(kind) for kind in SYNC_KINDS}

    def _record(self, kind):
        if self._paused:
            return
        where = None
        if self._locations:
            frames = [frame for frame in traceback.extract_stack()[:-2] if _PACKAGE_MARK in frame.filename]
            if frames:
                where = f"{frames[-1].filename.split(_PACKAGE_MARK)[-1]}:{frames[-1].lineno}"
            else:
                where = "outside sparsetab"
        self.counts[(kind, where)] += 1

    @contextlib.contextmanager
    def paused(self):
        """Within the block, nothing is counted (work that is not under test, e.g. the counter's own checks).

        Yields
        ------
        SyncCounter
            ``self``.
        """
        self._paused += 1
        try:
            yield self
        finally:
            self._paused -= 1

    def _counted(self, kind, original, applies=None):
        def call(*args, **kwargs):
            if applies is None or applies(*args, **kwargs):
                self._record(kind)
            with self.paused():  # what the call does inside is its own business (e.g. to() calling copy_)
                return original(*args, **kwargs)

        return call

    @contextlib.contextmanager
    def counting(self, locations=False):
        """Within the block, count the calls of every kind into :attr:`counts`.

        The calls are counted by patching ``torch.Tensor``'s methods and ``torch``'s functions for the block (they
        are restored when it ends, however it ends), so calls made from C++ inside another operator are not seen:
        only what Python code calls.

        Parameters
        ----------
        locations : bool, default=False
            Also record the sparsetab source line of each call (slower: a stack walk per call).

        Yields
        ------
        SyncCounter
            ``self``.
        """

        def to_applies(tensor, *args, **kwargs):
            device = _target_device(args, kwargs)
            if device is None or tensor.device.type != "cpu" or kwargs.get("non_blocking", False) or _pinned(tensor):
                return False
            # On the CPU, a .to(device) in sparsetab's device-agnostic code is a host-made tensor going to "the
            # device"; torch's own code (clip_grad_norm_, the optimizers) moves tensors that are on the device
            # already, a no-op on a GPU too, so only its real host-to-device copies count.
            return torch.device(device).type != "cpu" or _PACKAGE_MARK in sys._getframe(2).f_code.co_filename

        def copy_applies(destination, source, non_blocking=False):
            # Only a real host-to-device copy: on the CPU, copy_ between tensors of "the device" is common and
            # free everywhere.
            return (
                isinstance(source, torch.Tensor)
                and source.device.type == "cpu"
                and destination.device.type != "cpu"
                and not non_blocking
                and not _pinned(source)
            )

        def from_host_data(data, *args, **kwargs):
            return kwargs.get("device") is not None and not isinstance(data, torch.Tensor)

        def new_tensor_applies(tensor, data, *args, **kwargs):
            return not isinstance(data, torch.Tensor)

        def where_applies(*args, **kwargs):
            return len(args) + len(kwargs) == 1

        patches = [(torch.Tensor, name, "value_read", None) for name in _VALUE_READS]
        patches.append((torch, "equal", "value_read", None))
        for name in _SHAPE_METHODS:
            patches.append((torch.Tensor, name, "data_dependent_shape", None))
            patches.append((torch, name, "data_dependent_shape", None))
        patches += [
            (torch, "where", "data_dependent_shape", where_applies),
            (torch.Tensor, "to", "pageable_copy", to_applies),
            (torch.Tensor, "copy_", "pageable_copy", copy_applies),
            (torch.Tensor, "new_tensor", "pageable_copy", new_tensor_applies),
            (torch, "tensor", "pageable_copy", from_host_data),
            (torch, "as_tensor", "pageable_copy", from_host_data),
            (torch, "asarray", "pageable_copy", from_host_data),
        ]
        previous = self._locations
        self._locations = locations
        try:
            with contextlib.ExitStack() as stack:
                for owner, name, kind, applies in patches:
                    original = getattr(owner, name)
                    stack.enter_context(mock.patch.object(owner, name, self._counted(kind, original, applies)))
                stack.enter_context(_BooleanIndexing(self._record))
                yield self
        finally:
            self._locations = previous
