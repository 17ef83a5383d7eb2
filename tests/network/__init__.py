"""Tests of sparsetab.network: the torch modules, without the estimators."""
