"""Tests of sparsetab._tabular: columns, categories and the tabular encoding."""
