"""Bundled real data files, installed as ``sparsetab._data``.

Each sub-folder holds the data files of one data set and a ``SOURCE.md`` with its provenance,
licence, shape and target. Load them with the functions of :mod:`sparsetab.datasets`.
"""
