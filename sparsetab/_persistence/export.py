"""Write a fitted estimator's network as a self-contained serving program (torch.export, ONNX or TorchScript)."""

import json
import os
import warnings

import numpy as np
import sklearn
import torch

from .._version import __version__
from .._warnings import warn
from ..network import ensemble_members
from ..network.serving import ServingTabNet
from .files import atomic_write
from .onnx import require_onnx, save_onnx

__all__ = [
    "EXPORT_FORMATS",
    "METADATA_FILE",
    "ONNX_GATE_OUTPUT",
    "ONNX_INPUTS",
    "ONNX_OUTPUTS",
    "export_format_for",
    "export_network",
]

EXPORT_FORMATS = ("exported_program", "onnx", "torchscript")
METADATA_FILE = "sparsetab.json"
# The names of the ONNX graph's inputs and outputs: those of ServingTabNet.forward and of its results.
ONNX_INPUTS = ("numeric", "codes")
ONNX_OUTPUTS = ("prediction", "step_masks")
# The third output of a network with step gates.
ONNX_GATE_OUTPUT = "step_gates"
_TORCHSCRIPT_RETIRED = (
    "format='torchscript' is deprecated and will be removed in the next release: torch deprecates "
    "torch.jit.trace and torch.jit.save. Use format='exported_program' (torch.export) or format='onnx'."
)


# The formats that a file suffix names: a file of another format under that suffix would not open as its name says.
_FORMAT_OF_SUFFIX = {".onnx": "onnx", ".pt2": "exported_program"}
_SUFFIX_OF_FORMAT = {"onnx": ".onnx", "exported_program": ".pt2", "torchscript": ".pt"}


def export_format_for(path, export_format):
    """The export format of a call: ``export_format``, or for None the one the suffix of ``path`` names.

    Parameters
    ----------
    path : str or os.PathLike
        The file to write.
    export_format : {"exported_program", "onnx", "torchscript"} or None
        The format asked for; None: ``"onnx"`` for a ``.onnx`` path, ``"exported_program"`` otherwise.

    Returns
    -------
    str
        One of :data:`EXPORT_FORMATS`.

    Raises
    ------
    IsADirectoryError
        If ``path`` is a folder.
    ValueError
        If ``export_format`` is not None nor one of :data:`EXPORT_FORMATS`, or differs from the format
        the suffix names (``.onnx``: ONNX, ``.pt2``: the exported program).
    """
    if os.path.isdir(path):  # before the export's work: os.replace would fail only at its end
        raise IsADirectoryError(f"path {os.fspath(path)!r} is a folder; give the path of the file to write.")
    suffix = os.path.splitext(os.fspath(path))[1].lower()
    named = _FORMAT_OF_SUFFIX.get(suffix)
    if export_format is None:
        return named or "exported_program"
    if export_format not in EXPORT_FORMATS:
        raise ValueError(f"format must be one of {EXPORT_FORMATS} or None, got {export_format!r}.")
    if named is not None and named != export_format:
        raise ValueError(
            f"path {os.fspath(path)!r} ends in {suffix!r}, the suffix of format={named!r}, but format="
            f"{export_format!r}: the file would not open as its name says. Leave format out (it follows the "
            f"suffix), or give the path the suffix {_SUFFIX_OF_FORMAT[export_format]!r}."
        )
    return export_format


def _json_value(value):
    if isinstance(value, (list, tuple)):
        return [_json_value(item) for item in value]
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def _metadata(estimator_name, tabular_encoding, names, numeric_columns, categorical_columns, output, n_members, gated):
    categories = {
        str(names[j]): [_json_value(category) for category in tabular_encoding.categories_[j]]
        for j in categorical_columns
    }
    outputs = {
        "prediction": output["description"],
        "step_masks": "float32 (batch, n_steps, n_columns): feature mask of each decision step",
        "columns": [str(name) for name in names],
    }
    # Written for gated networks only: the metadata of an ungated one stays what it was before step gates.
    if gated:
        outputs["step_gates"] = "float32 (batch, n_steps): gate in [0, 1] of each decision step"
    # The classes in the order of the prediction's columns, as a list (one list per output column of a
    # multiclass-multioutput classifier), so that a server need not parse the description.
    if output.get("classes") is not None:
        outputs["classes"] = _json_value(output["classes"])
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
                "transform": tabular_encoding.numerical_transform,
            },
            "codes": {
                "dtype": "int64",
                "columns": [str(names[j]) for j in categorical_columns],
                "categories": categories,
                "coding": "0 = missing or unseen; c + 1 = categories[column][c]; any other code is read as 0",
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
        predictions and step masks. The program of a network with step gates has a third
        output, ``step_gates``.
    tabular_encoding : TabularEncoding
        The fitted tabular encoding of its inputs (column types, categories, clipping, numeric
        transform: standardisation or quantile map).
    names : numpy.ndarray of shape (n_features,)
        The column names, recorded in the metadata.
    output : dict
        The serving output of the target kind: ``transform`` ("softmax", "sigmoid", "affine" or "exp"),
        ``description`` and, where they apply, ``target_mean``, ``target_scale`` and
        ``softmax_blocks``.
    estimator_name : str
        Class name of the estimator, recorded in the metadata.
    path : str or os.PathLike
        Destination file.
    export_format : {"exported_program", "onnx", "torchscript"}
        ``torch.export.save`` of a program with a dynamic batch dimension, that program
        converted to ONNX (metadata in the model's ``metadata_props``), or (deprecated)
        ``torch.jit.save`` of a ``torch.jit.trace``.

    Returns
    -------
    str
        The path written.

    Raises
    ------
    ValueError
        If ``export_format`` is not one of :data:`EXPORT_FORMATS`.
    ImportError
        If ``export_format="onnx"`` and ``onnx`` or ``onnxscript`` is missing; the message
        names the extra ``sparsetab[onnx]``.

    Warns
    -----
    FutureWarning
        For ``export_format="torchscript"``, which is deprecated.
    """
    if export_format not in EXPORT_FORMATS:
        raise ValueError(f"format must be one of {EXPORT_FORMATS}, got {export_format!r}.")
    if export_format == "onnx":
        require_onnx()  # before the export's work, and before any file is touched
    elif export_format == "torchscript":
        warn(_TORCHSCRIPT_RETIRED, FutureWarning)
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
        **_numeric_transform(tabular_encoding, numeric_columns),
    )
    # Two example rows: torch.export specialises batch sizes 0 and 1.
    example = (
        torch.zeros(2, len(numeric_columns), dtype=torch.float64),
        torch.zeros(2, len(categorical_columns), dtype=torch.int64),
    )
    gated = ensemble_members(network)[0].gates is not None
    metadata = json.dumps(
        _metadata(
            estimator_name,
            tabular_encoding,
            names,
            numeric_columns,
            categorical_columns,
            output,
            len(ensemble_members(network)),
            gated,
        )
    )
    output_names = (*ONNX_OUTPUTS, ONNX_GATE_OUTPUT) if gated else ONNX_OUTPUTS
    path = os.fspath(path)
    # torch.export.save insists on the .pt2 suffix; the rename gives the file its final name.
    with atomic_write(path, ".tmp.onnx" if export_format == "onnx" else ".tmp.pt2") as temporary:
        if export_format == "torchscript":
            _save_torchscript(serving, example, temporary, metadata)
        else:
            batch = torch.export.Dim("batch")
            program = torch.export.export(serving, example, dynamic_shapes=({0: batch}, {0: batch}))
            if export_format == "exported_program":
                torch.export.save(program, temporary, extra_files={METADATA_FILE: metadata})
            else:
                save_onnx(program, temporary, ONNX_INPUTS, output_names, {METADATA_FILE: metadata})
    return path


def _numeric_transform(tabular_encoding, numeric_columns):
    """The ``flat``, ``quantiles`` and ``references`` arguments of ServingTabNet, as TabularEncoding encodes."""
    flat = tabular_encoding.flat_
    if tabular_encoding.numerical_transform == "standard" or not tabular_encoding.clip_:
        # The standardisation zeroes flat columns only under the flat rule (and with clipping).
        return {"flat": None if flat is None or not tabular_encoding.clip_ else flat[numeric_columns]}
    if flat is None:  # restored from before the flat rule: only exactly constant columns are flat
        flat = tabular_encoding.data_min_ >= tabular_encoding.data_max_
    flat = np.asarray(flat[numeric_columns], dtype=bool)
    transformer = tabular_encoding.quantile_transformer_
    if transformer is None:  # every numeric column is flat: all encode as 0
        return {"flat": flat}
    references = np.asarray(transformer.references_, dtype=np.float64)
    # The transformer maps the columns not flat at fit; a flat column gets a placeholder column
    # (any non-decreasing values), since ServingTabNet zeroes flat columns after the map.
    quantiles = np.repeat(references[:, None], len(numeric_columns), axis=1)
    quantiles[:, ~flat] = transformer.quantiles_
    return {"flat": flat, "quantiles": quantiles, "references": references}


def _save_torchscript(serving, example, path, metadata):
    with warnings.catch_warnings():
        # The tracer flags Python conditions on tensor sizes; they only concern the
        # column dimension, fixed at fit, and tests check other batch sizes.
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        # torch 2.13 deprecates torch.jit.trace and torch.jit.save; the FutureWarning of
        # export_network already says so, with what to use instead, at the user's line.
        warnings.filterwarnings("ignore", r"`torch\.jit\.(trace|trace_method|save)` is deprecated", DeprecationWarning)
        traced = torch.jit.trace(serving, example, check_trace=False)
        torch.jit.save(traced, path, _extra_files={METADATA_FILE: metadata})
