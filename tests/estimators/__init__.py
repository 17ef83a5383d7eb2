"""Tests of sparsetab.estimators: SparseTabNetClassifier and SparseTabNetRegressor, by what users do with them."""
