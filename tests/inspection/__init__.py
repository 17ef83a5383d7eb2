"""Tests of sparsetab.inspection: the plots and tables of fitted models."""
