"""The training step's forward run through ``torch.compile`` (``torch_compile=True``; issue 34, item 3).

Only the forward of the training step is compiled: the loss, backward (AOTAutograd compiles the backward of the
compiled graphs), clipping and the optimizer stay as they are, and evaluation, ``predict`` and ``explain`` run the
network eagerly. On CUDA the compiled forward runs inside the step captured as a CUDA graph
(:mod:`~sparsetab._training.step_graphs`): the compiler fuses the element-wise work of the step, the graph removes
the host's launch cost. On the CPU the sort-free entmax solvers stop on data and stay eager
(``torch.compiler.disable`` in :mod:`sparsetab.entmax.activations`), so each decision step's map splits the compiled
forward; the measured cost and gain are in the estimators' ``torch_compile`` docstring.

Shapes are static (``dynamic=False``): each batch shape is compiled once (a fit has one or two: full batches and the
last one), and fits of the same architecture reuse the compiled code, since torch compiles the module's code with
its parameters as inputs. ``torch.compile`` keeps at most ``torch._dynamo.config.recompile_limit`` versions of one
function; past it, torch warns and runs the forward eagerly (the same training up to float rounding).
"""

import contextlib

import torch

from ..network.blocks import batch_norms_updating_on_device

__all__ = ["BACKEND", "compiled_training"]

#: The ``torch.compile`` backend: inductor, torch's default, which generates C++/OpenMP code on the CPU (it needs a
#: C++ compiler) and Triton kernels on CUDA. The tests swap in ``"aot_eager"`` (the same tracing and autograd,
#: torch's own kernels) to check the wiring without paying for code generation.
BACKEND = "inductor"


class _CompiledForward:
    """``network(X)`` through ``torch.compile``, a compiler failure turned into an error that names the parameter."""

    def __init__(self, network):
        self._compiled = torch.compile(network, backend=BACKEND, dynamic=False)

    def __call__(self, X_batch):
        try:
            return self._compiled(X_batch)
        except torch._dynamo.exc.TorchDynamoException as error:
            # E.g. no C++ compiler for inductor on the CPU, or a torch build without a working Triton on CUDA;
            # Dynamo wraps the compiler's own error, which says what is missing.
            cause = getattr(error, "inner_exception", None) or error
            first_line = (str(cause).splitlines() or [""])[0]
            backend = BACKEND if isinstance(BACKEND, str) else getattr(BACKEND, "__name__", repr(BACKEND))
            raise RuntimeError(
                f"torch_compile=True, but torch.compile (backend {backend!r}) failed on this network: "
                f"{type(cause).__name__}: {first_line}. "
                "Set torch_compile=False to train without compiling (the same model, up to float rounding)."
            ) from error


@contextlib.contextmanager
def compiled_training(network, torch_compile):
    """Within the block, the callable that runs the training step's forward.

    With ``torch_compile``, the network's ghost batch norms update their running statistics at every step on the
    device (:meth:`~sparsetab.network.blocks.GhostBatchNorm.updating_on_device`, the same values up to rounding):
    their default grouped updates keep a Python list of the steps' statistics, whose growing length would make
    torch recompile the forward at every step.

    Parameters
    ----------
    network : torch.nn.Module
        The network in training mode.
    torch_compile : bool
        The estimators' ``torch_compile`` parameter.

    Yields
    ------
    callable
        ``network`` itself when ``torch_compile`` is False; else a callable that runs ``network(X_batch)``
        compiled by ``torch.compile(network, backend=BACKEND, dynamic=False)`` (compiled at its first call per
        batch shape), which raises RuntimeError, naming ``torch_compile``, when the compiler fails.
    """
    if not torch_compile:
        yield network
        return
    with batch_norms_updating_on_device(network):
        yield _CompiledForward(network)
