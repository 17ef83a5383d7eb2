"""The test suite of sparsetab: a package, so that its modules are named by their folder (tests.network.test_ensemble)."""
