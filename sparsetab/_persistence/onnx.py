"""Write a ``torch.export`` program as one ONNX file with metadata (the optional extra ``onnx``).

torch's ONNX exporter (``torch.onnx.export(..., dynamo=True)``) needs ``onnx`` and
``onnxscript``; they are imported only here, when a model is exported to ONNX, so that importing
sparsetab stays light. Serving the file needs ``onnxruntime`` (or another ONNX runtime) only.
"""

import contextlib
import logging
import warnings

import torch

__all__ = ["ONNX_INSTALL_HINT", "require_onnx", "save_onnx"]

ONNX_INSTALL_HINT = 'pip install "sparsetab[onnx]"'
# torch's exporter logs one warning per torchvision operator it cannot register when torchvision is
# absent, on every export; the model never uses torchvision, so those lines are noise to the user.
_REGISTRATION_LOGGER = "torch.onnx._internal.exporter._registration"


def require_onnx():
    """Import the packages that ``format="onnx"`` needs, or say how to install them.

    Raises
    ------
    ImportError
        If ``onnx`` or ``onnxscript`` cannot be imported; the message names the missing
        packages and the extra that installs them (``pip install "sparsetab[onnx]"``).
    """
    missing = []
    try:
        import onnx  # noqa: F401
    except ImportError:
        missing.append("onnx")
    try:
        import onnxscript  # noqa: F401
    except ImportError:
        missing.append("onnxscript")
    if missing:
        raise ImportError(
            f"format='onnx' needs {' and '.join(missing)} (torch's ONNX exporter), which could not be "
            f"imported. Install the extra: {ONNX_INSTALL_HINT} (onnx, onnxscript and onnxruntime)."
        )


class _SkipTorchvisionNotice(logging.Filter):
    def filter(self, record):
        return not str(record.msg).startswith("torchvision is not installed")


@contextlib.contextmanager
def _quiet_exporter():
    """Silence two notices of torch's exporter about torch itself, and only those, while it runs."""
    logger = logging.getLogger(_REGISTRATION_LOGGER)
    notice_filter = _SkipTorchvisionNotice()
    logger.addFilter(notice_filter)
    try:
        with warnings.catch_warnings():
            # torch 2.13's run_decompositions deep-copies the program's pytree specs, and copying a
            # LeafSpec trips torch's own deprecation of LeafSpec; neither we nor the user call it.
            warnings.filterwarnings("ignore", r"`isinstance\(treespec, LeafSpec\)` is deprecated", FutureWarning)
            yield
    finally:
        logger.removeFilter(notice_filter)


def save_onnx(program, path, input_names, output_names, metadata):
    """Convert ``program`` to ONNX and write it, weights included, to ``path``.

    Parameters
    ----------
    program : torch.export.ExportedProgram
        The program, whose first input's first dimension is the (dynamic) batch dimension of
        every input and output; it is named ``"batch"`` in the ONNX graph.
    path : str
        The file to write (the caller makes the write atomic).
    input_names, output_names : list of str
        Names of the graph's inputs and outputs, in the program's order.
    metadata : dict of str to str
        Stored in the model's ``metadata_props``.

    Raises
    ------
    ImportError
        If ``onnx`` or ``onnxscript`` is missing (:func:`require_onnx`).
    """
    require_onnx()
    with _quiet_exporter():
        onnx_program = torch.onnx.export(
            program,
            dynamo=True,
            input_names=list(input_names),
            output_names=list(output_names),
            # One self-contained file: the networks are far below protobuf's 2 GB limit.
            external_data=False,
            verbose=False,
        )
    # The exporter names dynamic dimensions after torch's symbols (s90, say); a client reads "batch".
    onnx_program.rename_axes({onnx_program.model.graph.inputs[0].shape[0]: "batch"})
    onnx_program.model.metadata_props.update(metadata)
    onnx_program.save(path, external_data=False)
