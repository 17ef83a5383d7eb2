"""Tests of sparsetab.entmax, against the entmax 1.3 package and hand-derived references."""
