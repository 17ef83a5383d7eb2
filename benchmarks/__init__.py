"""Measurements, not tests: the benchmarks of sparsetab, each run from the repository root (benchmarks/README.md)."""
