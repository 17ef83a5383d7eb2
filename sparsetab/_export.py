"""Write a fitted estimator's network as a self-contained torch program (torch.export or TorchScript)."""

import json
import os
import warnings

import numpy as np
import sklearn
import torch

from . import __version__
from ._model_file import atomic_write
from .network.serving import ServingTabNet

__all__ = ["EXPORT_FORMATS", "export_estimator"]

EXPORT_FORMATS = ("exported_program", "torchscript")
METADATA_FILE = "sparsetab.json"


def _json_value(value):
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def _metadata(estimator, numeric_names, categorical_names, output):
    encoder = estimator._encoder
    categories = {
        name: [_json_value(category) for category in encoder.categories_[j]]
        for name, j in zip(categorical_names, np.flatnonzero(encoder.is_categorical_))
    }
    outputs = {
        "prediction": output["description"],
        "step_masks": "float32 (batch, n_steps, n_columns): feature mask of each decision step",
        "columns": [str(name) for name in estimator._feature_names()],
    }
    if output.get("softmax_blocks") is not None:
        outputs["softmax_blocks"] = [int(width) for width in output["softmax_blocks"]]
    return {
        "producer": "sparsetab",
        "sparsetab_version": __version__,
        "torch_version": torch.__version__,
        "sklearn_version": sklearn.__version__,
        "estimator": type(estimator).__name__,
        "inputs": {
            "numeric": {"dtype": "float64", "columns": numeric_names},
            "codes": {
                "dtype": "int64",
                "columns": categorical_names,
                "categories": categories,
                "coding": "0 = missing or unseen; c + 1 = categories[column][c]",
            },
        },
        "outputs": outputs,
    }


def export_estimator(estimator, path, export_format):
    """Write ``estimator.network_`` wrapped in :class:`ServingTabNet` to ``path``, atomically.

    Parameters
    ----------
    estimator : BaseSparseTabNet
        A fitted estimator.
    path : str or os.PathLike
        Destination file.
    export_format : {"exported_program", "torchscript"}
        ``torch.export.save`` of a program with a dynamic batch dimension, or
        ``torch.jit.save`` of a ``torch.jit.trace``.

    Returns
    -------
    str
        The path written.

    Raises
    ------
    ValueError
        If ``export_format`` is not one of :data:`EXPORT_FORMATS`.
    """
    if export_format not in EXPORT_FORMATS:
        raise ValueError(f"format must be one of {EXPORT_FORMATS}, got {export_format!r}.")
    encoder = estimator._encoder
    numeric_columns = np.flatnonzero(~encoder.is_categorical_).tolist()
    categorical_columns = np.flatnonzero(encoder.is_categorical_).tolist()
    names = estimator._feature_names()
    output = estimator._serving_output()
    serving = ServingTabNet(
        estimator.network_,
        numeric_columns,
        categorical_columns,
        encoder.center_[numeric_columns],
        encoder.scale_[numeric_columns],
        output["transform"],
        target_mean=output.get("target_mean"),
        target_scale=output.get("target_scale"),
        softmax_blocks=output.get("softmax_blocks"),
    )
    # Two example rows: torch.export specialises batch sizes 0 and 1.
    example = (
        torch.zeros(2, len(numeric_columns), dtype=torch.float64),
        torch.zeros(2, len(categorical_columns), dtype=torch.int64),
    )
    metadata = json.dumps(
        _metadata(
            estimator, [str(names[j]) for j in numeric_columns], [str(names[j]) for j in categorical_columns], output
        )
    )
    path = os.fspath(path)
    # torch.export.save insists on the .pt2 suffix; the rename gives the file its final name.
    with atomic_write(path, ".tmp.pt2") as temporary:
        if export_format == "exported_program":
            batch = torch.export.Dim("batch")
            program = torch.export.export(serving, example, dynamic_shapes=({0: batch}, {0: batch}))
            torch.export.save(program, temporary, extra_files={METADATA_FILE: metadata})
        else:
            with warnings.catch_warnings():
                # The tracer flags Python conditions on tensor sizes; they only concern the
                # column dimension, fixed at fit, and tests check other batch sizes.
                warnings.simplefilter("ignore", torch.jit.TracerWarning)
                traced = torch.jit.trace(serving, example, check_trace=False)
            torch.jit.save(traced, temporary, _extra_files={METADATA_FILE: metadata})
    return path
