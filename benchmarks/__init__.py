"""sparsetab's benchmarks: measurements, not tests (see ``benchmarks/README.md`` for the question each one answers).

A package so that the scripts share their helpers (``_cache``, ``_measure``, ``configs``, the modules of
``compare``) by package imports and the tests import them as ``benchmarks.<module>``. Run a script as a module from
the repository root, e.g. ``python -m benchmarks.compare --help``.
"""
