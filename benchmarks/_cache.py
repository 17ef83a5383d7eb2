"""Cell cache of ``compare.py``: one JSON file per measured (data set, model configuration, seed, protocol).

A cell's key is a JSON-safe dict of everything that determines its result (data set, model, configuration name,
seed, protocol, quick flag, the estimator's constructor parameters as constructed, fit parameters, library
versions). Its SHA-256 names the file ``<root>/<data set>/<config>-seed<k>-<hash8>.json``; the file holds the key
and the measured result, so a lookup also checks that the stored key is the same. Files are written to a
temporary file in the same folder and moved into place with :func:`os.replace`, so a run that is killed leaves
either the whole file or none.
"""

import hashlib
import json
import math
import os
import re
import tempfile
from pathlib import Path

import numpy as np


def json_safe(value):
    """``value`` as plain JSON types: numpy scalars and arrays, tuples, sets, classes and callables converted.

    Parameters
    ----------
    value : object

    Returns
    -------
    object
        dicts (string keys, sorted when dumped), lists, str, int, float, bool or None. Non-finite floats become
        strings ("nan", "inf"); anything else becomes its qualified name (classes, functions) or ``repr``.
    """
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (np.bool_,)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return value if math.isfinite(value) else str(value)
    if isinstance(value, dict):
        return {str(key): json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, set, frozenset, np.ndarray)):
        items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else list(value)
        return [json_safe(item) for item in items]
    if isinstance(value, type) or callable(value):
        return f"{getattr(value, '__module__', '?')}.{getattr(value, '__qualname__', repr(value))}"
    return repr(value)


def key_hash(key):
    """SHA-256 hex digest of the canonical JSON of ``key``."""
    text = json.dumps(json_safe(key), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _slug(text):
    """``text`` with every character outside ``[A-Za-z0-9._+=-]`` replaced by ``_`` (at most 80 characters)."""
    return re.sub(r"[^A-Za-z0-9._+=-]", "_", str(text))[:80]


class CellCache:
    """Folder of cell files.

    Parameters
    ----------
    root : str or pathlib.Path
        The folder (created on the first write).
    refresh : bool, default=False
        When True, :meth:`get` misses every cell, so everything is re-measured (and the files overwritten).
    """

    def __init__(self, root, refresh=False):
        self.root = Path(root)
        self.refresh = refresh

    def path(self, key):
        """File of ``key``: ``<root>/<dataset>/<config>-seed<seed>-<hash8>.json``."""
        name = f"{_slug(key['model'])}-{_slug(key['config'])}-seed{key['seed']}-{key_hash(key)[:8]}.json"
        return self.root / _slug(key["dataset"]) / name

    def get(self, key):
        """The stored record ``{"key": ..., "result": ...}`` of ``key``, or None (missing, refresh, other key)."""
        if self.refresh:
            return None
        path = self.path(key)
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        if record.get("key") != json_safe(key):
            return None
        return record

    def get_twin(self, key):
        """A stored record whose key differs from ``key`` only in the configuration's name, or None.

        A configuration that became the defaults (``defaults+weight_averaging_epochs=2.0`` screened, then the
        same parameters as ``defaults``) trains exactly as its twin: same parameters, data, seed, protocol and
        versions. Only files of the same data set, model and seed are read.

        Parameters
        ----------
        key : dict

        Returns
        -------
        dict or None
            ``{"key": ..., "result": ...}`` of the twin (its key keeps its own configuration name), or None
            (none stored, or ``refresh``).
        """
        if self.refresh:
            return None
        wanted = {name: value for name, value in json_safe(key).items() if name != "config"}
        folder = self.root / _slug(key["dataset"])
        for path in sorted(folder.glob(f"{_slug(key['model'])}-*-seed{key['seed']}-*.json")):
            try:
                record = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
            stored = record.get("key")
            if isinstance(stored, dict) and {n: v for n, v in stored.items() if n != "config"} == wanted:
                return record
        return None

    def put(self, key, result):
        """Store ``result`` for ``key`` atomically (temporary file + :func:`os.replace`); return the path."""
        path = self.path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        record = {"key": json_safe(key), "result": json_safe(result)}
        text = json.dumps(record, sort_keys=True, indent=1) + "\n"
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(handle, "w") as stream:
                stream.write(text)
                stream.flush()
                os.fsync(stream.fileno())
            os.replace(temporary, path)
        except BaseException:
            with_suppressed_unlink(temporary)
            raise
        return path


def with_suppressed_unlink(path):
    """Remove ``path``, ignoring a missing file."""
    try:
        os.unlink(path)
    except OSError:
        pass
