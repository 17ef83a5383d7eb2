"""Tests of sparsetab._training: the training loop, its losses and flat parameters."""
