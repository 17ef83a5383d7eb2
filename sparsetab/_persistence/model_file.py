"""Safe, versioned model files without pickle: :func:`save_estimator` writes one, :func:`read_model` reads it.

This module is the format and its codec only; :func:`sparsetab.io.load_model` turns what
:func:`read_model` returns into an estimator.

A model file is one ``torch.save`` archive holding only strings, numbers, lists, dicts and
tensors, so it is read with ``torch.load(weights_only=True)``, which builds no other object and
runs no code from the file. It holds:

* ``format`` and ``format_version``;
* ``metadata``: a JSON document with the versions of sparsetab, torch, scikit-learn and numpy
  that wrote it, the estimator class, its parameters and its fitted state (classes, categories,
  feature names, importances, history, the tabular encoding's statistics (under the key
  ``encoder``, its name in format version 1) and the network's configuration); values JSON
  cannot hold (numpy arrays and dtypes, non-string dict keys, tuples, tensors) are written as
  small tagged objects;
* ``tensors``: the network's weights and buffers, the optimizer state and the shuffling
  generator's state, referred to from the metadata by name;
* ``sha256``: a digest of the metadata and of every tensor's bytes, checked on load, so a
  truncated or edited file is refused instead of giving a silently different model.
"""

import datetime
import decimal
import hashlib
import json
import os
import warnings
import zipfile

import numpy as np
import pandas as pd
import sklearn
import torch

from .._runtime import device_available
from .._tabular.encoding import TabularEncoding, feature_names
from .._version import __version__
from .._warnings import warn
from ..network import TabNet, TabNetEnsemble
from .compat import without_removed_parameters_in_copies
from .files import atomic_write

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "read_model",
    "save_estimator",
]

FORMAT = "sparsetab-model"
FORMAT_VERSION = 1
# Fitted attributes rebuilt by the reader rather than stored as values.
_REBUILT = ("network_", "_tabular_encoding", "_device")
# scikit-learn's callbacks (``set_callbacks``) and the context a meta-estimator propagates: how a fit is
# watched, not what it learned, so a model file leaves them out (a pickle keeps them, as scikit-learn's do).
_NOT_MODEL_STATE = ("_skl_callbacks", "_parent_callback_ctx")


class _Codec:
    """The codec: typed JSON for fitted state, tensors in a side table."""

    def __init__(self):
        self.tensors = {}

    def encode(self, value, where):
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, (int, float)) and not isinstance(value, np.generic):
            return value
        if isinstance(value, np.generic):
            return {"__numpy_scalar__": value.item(), "dtype": value.dtype.str}
        if isinstance(value, decimal.Decimal):
            return {"__decimal__": str(value)}  # str round-trips every Decimal exactly, NaN and signs included
        if isinstance(value, pd.Timestamp):  # before datetime, since a Timestamp is one: nanoseconds and zone name
            return {"__timestamp__": int(value.value), "tz": None if value.tz is None else str(value.tz)}
        if isinstance(value, datetime.datetime):
            return {"__datetime__": value.isoformat()}
        if isinstance(value, datetime.date):
            return {"__date__": value.isoformat()}
        if isinstance(value, pd.Timedelta):
            return {"__timedelta__": int(value.value)}  # nanoseconds
        if isinstance(value, datetime.timedelta):
            return {"__pytimedelta__": [value.days, value.seconds, value.microseconds]}
        if isinstance(value, pd.Period):
            return {"__period__": str(value), "freq": value.freqstr}
        if isinstance(value, np.ndarray):
            if value.dtype.kind == "O":
                items = [self.encode(item, where) for item in value.ravel()]
                return {"__ndarray__": items, "dtype": "O", "shape": list(value.shape)}
            if value.dtype.kind not in "biufU":
                raise TypeError(f"{where} is an array of dtype {value.dtype}, which a model file cannot hold.")
            return {"__ndarray__": value.ravel().tolist(), "dtype": value.dtype.str, "shape": list(value.shape)}
        if isinstance(value, np.dtype):
            return {"__dtype__": value.str}
        if isinstance(value, torch.Tensor):
            name = f"tensor_{len(self.tensors)}"
            self.tensors[name] = value.detach().cpu().contiguous()
            return {"__tensor__": name}
        if isinstance(value, torch.device):
            return {"__device__": str(value)}
        if isinstance(value, np.random.RandomState):
            return {"__random_state__": self.encode(value.get_state(), where)}
        if isinstance(value, tuple):
            return {"__tuple__": [self.encode(item, where) for item in value]}
        if isinstance(value, list):
            return [self.encode(item, where) for item in value]
        if isinstance(value, dict):
            return {"__dict__": [[self.encode(key, where), self.encode(item, where)] for key, item in value.items()]}
        raise TypeError(
            f"{where} holds {value!r} of type {type(value).__name__}, which a model file cannot store (it holds "
            "numbers, strings, arrays and tensors only); use pickle or joblib for such an estimator."
        )


def _decode(value, tensors):
    if isinstance(value, list):
        return [_decode(item, tensors) for item in value]
    if not isinstance(value, dict):
        return value
    if "__ndarray__" in value:
        dtype = np.dtype(value["dtype"])
        if dtype.kind == "O":
            array = np.empty(len(value["__ndarray__"]), dtype=object)
            array[:] = [_decode(item, tensors) for item in value["__ndarray__"]]
        else:
            array = np.asarray(value["__ndarray__"], dtype=dtype)
        return array.reshape(value["shape"])
    if "__numpy_scalar__" in value:
        return np.dtype(value["dtype"]).type(value["__numpy_scalar__"])
    if "__decimal__" in value:
        return decimal.Decimal(value["__decimal__"])
    if "__timestamp__" in value:
        instant = pd.Timestamp(value["__timestamp__"], unit="ns", tz="UTC")
        return instant.tz_localize(None) if value["tz"] is None else instant.tz_convert(value["tz"])
    if "__datetime__" in value:
        return datetime.datetime.fromisoformat(value["__datetime__"])
    if "__date__" in value:
        return datetime.date.fromisoformat(value["__date__"])
    if "__timedelta__" in value:
        return pd.Timedelta(value["__timedelta__"], unit="ns")
    if "__pytimedelta__" in value:
        return datetime.timedelta(*value["__pytimedelta__"])
    if "__period__" in value:
        return pd.Period(value["__period__"], freq=value["freq"])
    if "__dtype__" in value:
        return np.dtype(value["__dtype__"])
    if "__tensor__" in value:
        return tensors[value["__tensor__"]]
    if "__device__" in value:
        return torch.device(value["__device__"])
    if "__random_state__" in value:
        random_state = np.random.RandomState()
        random_state.set_state(_decode(value["__random_state__"], tensors))
        return random_state
    if "__tuple__" in value:
        return tuple(_decode(item, tensors) for item in value["__tuple__"])
    if "__dict__" in value:
        return {_hashable(_decode(key, tensors)): _decode(item, tensors) for key, item in value["__dict__"]}
    raise ValueError(f"unknown tagged value {sorted(value)}")


def _hashable(key):
    return tuple(key) if isinstance(key, list) else key


def _digest(metadata, tensors):
    digest = hashlib.sha256(metadata.encode("utf-8"))
    for name in sorted(tensors):
        tensor = tensors[name]
        digest.update(f"{name}:{tensor.dtype}:{tuple(tensor.shape)}".encode())
        digest.update(tensor.numpy().tobytes() if tensor.numel() else b"")
    return digest.hexdigest()


# The category types a model file stores (numpy scalars: those of numeric, bool and str dtypes).
_CATEGORY_TYPES = (
    str,
    bool,
    int,
    float,
    decimal.Decimal,
    np.number,
    np.bool_,
    np.str_,
    datetime.date,  # datetime.datetime and pandas.Timestamp too
    datetime.timedelta,  # pandas.Timedelta too
    pd.Period,
)


def _check_category_types(estimator):
    names = feature_names(estimator)
    for position, categories in estimator._tabular_encoding.categories_.items():
        for category in categories:
            if not isinstance(category, _CATEGORY_TYPES):
                raise ValueError(
                    f"Column {str(names[position])!r} has the category {category!r} of type {type(category).__name__}, "
                    "which a model file cannot store (it stores str, bool, int, float, numpy scalars, "
                    "decimal.Decimal, dates, times and periods). Convert the column (for example with "
                    "astype(str)), or save with pickle or joblib."
                )


def save_estimator(estimator, path):
    """Write a fitted estimator to a model file (see the module docstring).

    Parameters
    ----------
    estimator : SparseTabNetClassifier or SparseTabNetRegressor
        A fitted estimator.
    path : str or os.PathLike
        Where to write; an existing file is replaced atomically.

    Returns
    -------
    str
        ``path``.

    Raises
    ------
    ValueError
        If a categorical column has a category of a type the format cannot store (it stores
        str, bool, int, float, numpy scalars, ``decimal.Decimal``, ``datetime`` / ``date`` /
        ``Timestamp``, ``timedelta`` / ``Timedelta`` and ``Period``), naming the column and the
        type; fit and pickle work with any category.
    TypeError
        If a parameter or fitted attribute holds a value the format cannot store (e.g. a
        callable ``scoring``).
    """
    _check_category_types(estimator)
    codec = _Codec()
    params = {
        name: codec.encode(value, f"parameter {name}")
        for name, value in estimator.get_params(deep=False).items()
        if name != "pretrained"
    }
    # The pretrainer only matters at fit: the fine-tuned weights are in the file.
    params["pretrained"] = None
    state = {
        name: codec.encode(value, f"fitted attribute {name}")
        for name, value in vars(estimator).items()
        if name not in params and name not in _REBUILT and name not in _NOT_MODEL_STATE
    }
    network_state = {name: codec.encode(value, name) for name, value in estimator.network_.state_dict().items()}
    metadata = json.dumps(
        {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "versions": {
                "sparsetab": __version__,
                "torch": torch.__version__,
                "scikit-learn": sklearn.__version__,
                "numpy": np.__version__,
            },
            "estimator": type(estimator).__name__,
            "device": str(estimator._device),
            "params": params,
            "attributes": state,
            "encoder": codec.encode(estimator._tabular_encoding.get_state(), "tabular encoding"),
            "network_state": network_state,
        }
    )
    content = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "metadata": metadata,
        "tensors": codec.tensors,
        "sha256": _digest(metadata, codec.tensors),
    }
    with atomic_write(path, ".tmp") as temporary:
        torch.save(content, temporary)
    return os.fspath(path)


# Leading bytes of the files people mistake for model files, with what to tell them (checked in order).
_PICKLE_ADVICE = (
    "Read it with pickle.load or joblib.load, which can run arbitrary code: only for a file from a source you "
    "trust. load_model reads the files that save_model writes"
)
_COMPRESSED = {
    b"\x1f\x8b": "gzip",
    b"BZh": "bz2",
    b"\xfd7zXZ\x00": "xz",
    b"\x5d\x00\x00": "lzma",
    b"\x04\x22\x4d\x18": "lz4",
    b"\x28\xb5\x2f\xfd": "zstandard",
    b"\x78\x01": "zlib",
    b"\x78\x5e": "zlib",
    b"\x78\x9c": "zlib",
    b"\x78\xda": "zlib",
    b"ZF": "zlib",
}


def _what_the_file_is(path):
    """A phrase naming what ``path`` holds, judged from its first bytes, and what to do about it."""
    with open(path, "rb") as handle:
        head = handle.read(512)
    if not head:
        return "an empty file"
    if head[:1] == b"\x80" or head[:2] in (b"(d", b"(l", b"}q", b"]q"):
        return f"a pickle (from pickle.dump or joblib.dump?). {_PICKLE_ADVICE}"
    for magic, name in _COMPRESSED.items():
        if head.startswith(magic):
            return f"a {name}-compressed file (from a compressed joblib.dump?). {_PICKLE_ADVICE}"
    program = _serving_program_kind(path) if head.startswith(b"PK\x03\x04") else None
    if program == "exported_program":
        return (
            "a serving program written by export() (torch.export). Load it with torch.export.load(path).module(); "
            "load_model reads the files that save_model writes"
        )
    if program == "torchscript":
        return (
            "a TorchScript program (export(format='torchscript')). Load it with torch.jit.load(path); load_model "
            "reads the files that save_model writes"
        )
    # An ONNX model is a protobuf message that starts with its IR version (field 1) and names its producer.
    if head[:1] == b"\x08" and (b"pytorch" in head or b"onnx" in head.lower()):
        return (
            "an ONNX model (export(format='onnx')). Run it with onnxruntime.InferenceSession(path); load_model "
            "reads the files that save_model writes"
        )
    if head.startswith(b"PK\x03\x04"):
        return (
            "a zip archive as torch.save writes, but not a complete model file: truncated, or torch.save of "
            "other objects. Save a fitted estimator with its save_model method"
        )
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as error:
        if error.start < len(head) - 4:  # not only a character cut at the end of the 512 bytes
            return "a binary file of another format"
    return "a text file"


def _serving_program_kind(path):
    """``"exported_program"``, ``"torchscript"`` or None: which program of ``export()`` the zip archive ``path`` is.

    ``torch.export.save`` writes ``models/model.json``, ``torch.jit.save`` a ``code/`` folder and
    ``constants.pkl``; ``torch.save`` neither.
    """
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
    except (zipfile.BadZipFile, OSError):  # a truncated archive has no readable directory
        return None
    if any(name.endswith("/models/model.json") for name in names):
        return "exported_program"
    if any(name.endswith("/constants.pkl") for name in names) and any("/code/" in name for name in names):
        return "torchscript"
    return None


def _read(path):
    try:
        with warnings.catch_warnings():
            # torch warns of a pickle protocol it may not support before refusing the file; the refusal
            # below names what the file is, and torch's advice there (file an issue) is not the user's.
            warnings.filterwarnings("ignore", message="Detected pickle protocol", category=UserWarning)
            content = torch.load(path, map_location="cpu", weights_only=True)
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        raise
    except Exception:  # a truncated archive, another format, or objects weights_only refuses
        # torch's own message is not repeated: it advises weights_only=False, which would run the file's code.
        raise ValueError(
            f"{os.fspath(path)!r} is not a sparsetab model file: it is {_what_the_file_is(path)}."
        ) from None
    if not isinstance(content, dict) or content.get("format") != FORMAT:
        raise ValueError(f"{os.fspath(path)!r} is not a sparsetab model file (no {FORMAT!r} format marker).")
    version = content.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ValueError(f"{os.fspath(path)!r} has an invalid model-file format version {version!r}.")
    if version > FORMAT_VERSION:
        raise ValueError(
            f"{os.fspath(path)!r} has model-file format version {version!r}, newer than the versions this sparsetab "
            f"{__version__} reads (up to {FORMAT_VERSION}); upgrade sparsetab to load it."
        )
    tensors = content.get("tensors")
    metadata = content.get("metadata")
    if not isinstance(tensors, dict) or not isinstance(metadata, str):
        raise ValueError(f"{os.fspath(path)!r} is a damaged sparsetab model file (metadata or tensors missing).")
    if content.get("sha256") != _digest(metadata, tensors):
        raise ValueError(
            f"{os.fspath(path)!r} fails its integrity check (SHA-256 of the metadata and weights): the file was "
            "modified or corrupted after it was written."
        )
    metadata = json.loads(metadata)
    if metadata.get("format_version") != version:  # the outer marker is outside the digest: compare
        raise ValueError(
            f"{os.fspath(path)!r} is a damaged sparsetab model file: its format version marker ({version!r}) "
            f"differs from the one in its checked metadata ({metadata.get('format_version')!r})."
        )
    return metadata, tensors


def read_model(path):
    """Read and check a model file, and rebuild its tabular encoding and network.

    Parameters
    ----------
    path : str or os.PathLike
        A file written by :func:`save_estimator`.

    Returns
    -------
    dict
        ``estimator`` (str, the class name), ``params`` (dict, the constructor arguments),
        ``attributes`` (dict, the fitted attributes to set), ``tabular_encoding``
        (:class:`~sparsetab._tabular.encoding.TabularEncoding`), ``network``
        (:class:`~sparsetab.network.TabNet`, or :class:`~sparsetab.network.TabNetEnsemble` for
        ``n_ensemble > 1``, in evaluation mode, on ``device``) and ``device``
        (torch.device: the saved one, or the CPU when that is not available here, with a
        UserWarning).

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        If the file is not a sparsetab model file, is truncated or was modified after it was
        written (integrity check), has a newer format version than this sparsetab reads, or
        holds a step-gate variant that was removed (:func:`~sparsetab._persistence.compat.without_removed_parameters`).
    """
    metadata, tensors = _read(path)
    params = {name: _decode(value, tensors) for name, value in metadata["params"].items()}
    attributes = {name: _decode(value, tensors) for name, value in metadata["attributes"].items()}
    # An ensemble is several TabNets of one configuration, counted from the saved weights ("members.<i>.");
    # n_ensemble may be fewer (the refit of early_stopping="auto" keeps the first pass's members too).
    member_indices = {int(name.split(".")[1]) for name in metadata["network_state"] if name.startswith("members.")}
    n_members = max(member_indices) + 1 if member_indices else 1
    attributes = without_removed_parameters_in_copies(attributes)
    if n_members == 1:
        network = TabNet(**attributes["_network_config"])
    else:
        network = TabNetEnsemble([TabNet(**attributes["_network_config"]) for _ in range(n_members)])
    network.load_state_dict({name: _decode(value, tensors) for name, value in metadata["network_state"].items()})
    device = torch.device(metadata["device"])
    if device.type != "cpu" and not device_available(device):
        warn(
            f"This model was saved from device {str(device)!r}, which is not available here; it was loaded on the "
            "CPU, where it predicts. To train it further, set device='cpu' (or an available device).",
            UserWarning,
        )
        device = torch.device("cpu")
    return {
        "estimator": metadata.get("estimator"),
        "params": params,
        "attributes": attributes,
        "tabular_encoding": TabularEncoding.from_state(_decode(metadata["encoder"], tensors)),
        "network": network.to(device).eval(),
        "device": device,
    }
