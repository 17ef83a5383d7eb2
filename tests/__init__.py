"""The test suite: a package, so that pytest names each module by its folder (tests.network.test_ensemble)."""
