"""Reference models and the scripts that wrote them (python -m tests.data.make_reference_models)."""
