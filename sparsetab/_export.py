"""Write a fitted estimator's network as a self-contained torch program (torch.export or TorchScript)."""

import json
import os
import warnings

import numpy as np
import sklearn
import torch

from ._files import atomic_write
from ._version import __version__
from .network import ensemble_members
from .network.serving import ServingTabNet

__all__ = ["EXPORT_FORMATS", "METADATA_FILE", "export_network"]

EXPORT_FORMATS = ("exported_program", "torchscript")
METADATA_FILE = "sparsetab.json"


def _json_value(value):
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def _metadata(estimator_name, tabular_encoding, names, numeric_columns, categorical_columns, output, n_members):
    categories = {
        str(names[j]): [_json_value(category) for category in tabular_encoding.categories_[j]]
        for j in categorical_columns
    }
    outputs = {
        "prediction": output["description"],
        "step_masks": "float32 (batch, n_steps, n_columns): feature mask of each decision step",
        "columns": [str(name) for name in names],
    }
    if output.get("softmax_blocks") is not None:
        outputs["softmax_blocks"] = [int(width) for width in output["softmax_blocks"]]
    # Written for ensembles only: the metadata of a single network stays what it was before ensembles.
    if n_members > 1:
        outputs["ensemble"] = (
            f"{n_members} independently trained members: prediction is the mean of their predictions "
            "(probabilities or values) and step_masks the mean of their step masks"
        )
    return {
        "producer": "sparsetab",
        "sparsetab_version": __version__,
        "torch_version": torch.__version__,
        "sklearn_version": sklearn.__version__,
        "estimator": estimator_name,
        "inputs": {
            "numeric": {
                "dtype": "float64",
                "columns": [str(names[j]) for j in numeric_columns],
                "clipped_to_training_range": bool(tabular_encoding.clip_),
            },
            "codes": {
                "dtype": "int64",
                "columns": [str(names[j]) for j in categorical_columns],
                "categories": categories,
                "coding": "0 = missing or unseen; c + 1 = categories[column][c]",
            },
        },
        "outputs": outputs,
    }


def export_network(network, tabular_encoding, names, output, estimator_name, path, export_format):
    """Write ``network`` wrapped in :class:`ServingTabNet` to ``path``, atomically.

    Parameters
    ----------
    network : sparsetab.network.TabNet or sparsetab.network.TabNetEnsemble
        A trained network; the program of an ensemble returns the mean of its members'
        predictions and step masks.
    tabular_encoding : TabularEncoding
        The fitted tabular encoding of its inputs (column types, categories, clipping,
        standardisation).
    names : numpy.ndarray of shape (n_features,)
        The column names, recorded in the metadata.
    output : dict
        The serving output of the target kind: ``transform`` ("softmax", "sigmoid" or "affine"),
        ``description`` and, where they apply, ``target_mean``, ``target_scale`` and
        ``softmax_blocks``.
    estimator_name : str
        Class name of the estimator, recorded in the metadata.
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
        If ``export_format`` is not one of :data:`EXPORT_FORMATS`, or the tabular encoding
        uses ``numerical_transform="quantile"``, which the serving program does not implement.
    """
    if export_format not in EXPORT_FORMATS:
        raise ValueError(f"format must be one of {EXPORT_FORMATS}, got {export_format!r}.")
    if tabular_encoding.numerical_transform != "standard":
        # A program without the quantile map would answer differently from predict: refuse rather than differ.
        raise ValueError(
            f"export supports numerical_transform='standard' only; this model uses "
            f"numerical_transform={tabular_encoding.numerical_transform!r}. Refit with "
            "numerical_transform='standard' to export, or serve the estimator itself (save_model / pickle)."
        )
    clipped = tabular_encoding.clip_
    numeric_columns = np.flatnonzero(~tabular_encoding.is_categorical_).tolist()
    categorical_columns = np.flatnonzero(tabular_encoding.is_categorical_).tolist()
    serving = ServingTabNet(
        network,
        numeric_columns,
        categorical_columns,
        tabular_encoding.center_[numeric_columns],
        tabular_encoding.scale_[numeric_columns],
        output["transform"],
        target_mean=output.get("target_mean"),
        target_scale=output.get("target_scale"),
        softmax_blocks=output.get("softmax_blocks"),
        lower=tabular_encoding.data_min_[numeric_columns] if clipped else None,
        upper=tabular_encoding.data_max_[numeric_columns] if clipped else None,
    )
    # Two example rows: torch.export specialises batch sizes 0 and 1.
    example = (
        torch.zeros(2, len(numeric_columns), dtype=torch.float64),
        torch.zeros(2, len(categorical_columns), dtype=torch.int64),
    )
    metadata = json.dumps(
        _metadata(
            estimator_name,
            tabular_encoding,
            names,
            numeric_columns,
            categorical_columns,
            output,
            len(ensemble_members(network)),
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
