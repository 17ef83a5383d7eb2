"""numpydoc's validator on every public name of sparsetab, and the estimators' See Also and Examples.

Public names are those in the ``__all__`` lists of the public modules, and the public methods and
properties of those classes that are defined in sparsetab, inherited from a sparsetab base class or not
(methods inherited from scikit-learn and torch are theirs to document). Checks that are off, and why:

- ES01 (no extended summary): a one-line summary is complete for many functions.
- SA01 (no See Also) and EX01 (no Examples): required of the estimators (tested below), optional for the
  rest of the API, whose module docstrings point to the estimators.

Methods that implement torch's protocols (``extra_repr``, ``train``, and an autograd Function's
``backward``, ``jvp``, ``setup_context``, ``vmap``) are not validated: torch documents their contract, and
users never call them directly. ``forward`` is validated: it is the computation a module documents.
"""

import importlib
import inspect

import pytest
from numpydoc.validate import validate

PUBLIC_MODULES = [
    "sparsetab",
    "sparsetab.datasets",
    "sparsetab.distributed",
    "sparsetab.entmax",
    "sparsetab.inspection",
    "sparsetab.io",
    "sparsetab.network",
    "sparsetab.streaming",
]
IGNORED_CHECKS = {"ES01", "SA01", "EX01"}
ESTIMATORS = ["SparseTabNetClassifier", "SparseTabNetRegressor", "SparseTabNetPretrainer"]
TORCH_PROTOCOL_METHODS = {"extra_repr", "train", "backward", "jvp", "setup_context", "vmap"}


def _public_names():
    names = set()
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        for name in module.__all__:
            obj = getattr(module, name)
            if not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue
            names.add(f"{obj.__module__}.{obj.__qualname__}")
            if inspect.isclass(obj):
                for attribute in dir(obj):
                    if attribute.startswith("_") or attribute in TORCH_PROTOCOL_METHODS:
                        continue
                    member = inspect.getattr_static(obj, attribute)
                    function = member.fget if isinstance(member, property) else member
                    function = getattr(function, "__func__", function)
                    if callable(function) and getattr(function, "__module__", "").startswith("sparsetab"):
                        names.add(f"{obj.__module__}.{obj.__qualname__}.{attribute}")
    return sorted(names)


@pytest.mark.parametrize("name", _public_names())
def test_numpydoc_validation(name):
    result = validate(name)
    errors = [f"{code}: {message}" for code, message in result["errors"] if code not in IGNORED_CHECKS]
    assert not errors, f"{name}:\n" + "\n".join(errors)


@pytest.mark.parametrize("name", ESTIMATORS)
def test_estimators_have_see_also_and_examples(name):
    result = validate(f"sparsetab.{name}")
    codes = {code for code, _ in result["errors"]}
    assert "SA01" not in codes and "EX01" not in codes
