"""The import rules of docs/architecture.md, checked on the source with ``ast``.

1. Imports go down only: a module imports modules of a strictly lower rank, or siblings inside its
   own subpackage without a cycle among them. No function-level import of a sparsetab module;
   function-level imports only for optional heavy dependencies (matplotlib, onnx, ...).
2. ``entmax/`` imports torch (and the standard library) only; ``network/`` torch and ``entmax/``
   only; ranks 0-2 use no scikit-learn estimator machinery.
3. Nothing inside the package imports the face (``sparsetab/__init__.py``), and no module imports
   another module's underscore names (underscore *modules* are fine: ``from ._tabular import ...``).
"""

import ast
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "sparsetab"

# The ranks of docs/architecture.md. A subpackage's modules share its rank.
RANKS = {
    "sparsetab._version": 0,
    "sparsetab._warnings": 0,
    "sparsetab._host_syncs": 0,
    "sparsetab.entmax": 0,
    "sparsetab.network": 1,
    "sparsetab._tabular": 1,
    "sparsetab._runtime": 1,
    "sparsetab.datasets": 1,
    "sparsetab._training": 2,
    "sparsetab._persistence": 2,
    "sparsetab._params": 3,
    "sparsetab._targets": 3,
    "sparsetab._inference": 3,
    "sparsetab._progress": 3,
    "sparsetab._scoring": 3,
    "sparsetab._recipe": 4,
    "sparsetab._ensemble": 4,
    "sparsetab.pretraining": 5,
    "sparsetab._base": 6,
    "sparsetab.estimators": 7,
    "sparsetab.io": 8,
    "sparsetab.inspection": 8,
    "sparsetab.distributed": 8,
    "sparsetab.streaming": 8,
    "sparsetab": 9,
    "sparsetab.cli": 9,
    "sparsetab.mlflow": 9,
    "sparsetab.__main__": 10,
}
# Third-party packages a subpackage may import besides the standard library.
ALLOWED_THIRD_PARTY = {"sparsetab.entmax": {"torch"}, "sparsetab.network": {"torch"}}
# What "scikit-learn estimator machinery" means for ranks 0-2.
ESTIMATOR_MACHINERY = ("sklearn.base", "sklearn.utils._param_validation", "sklearn.model_selection", "sklearn.pipeline")
# Optional heavy dependencies that may be imported inside a function, so that importing sparsetab stays light.
LAZY_IMPORTS = {"matplotlib", "onnx", "onnxruntime", "onnxscript", "dask", "ray", "pyarrow", "tqdm", "rich", "mlflow"}


def _module_name(path):
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_package(path):
    return path.name == "__init__.py"


def _group(module):
    """The entry of RANKS a module belongs to (its subpackage, or itself)."""
    if module == "sparsetab":
        return module
    parts = module.split(".")
    for length in range(len(parts), 1, -1):  # never the face: a module not listed has no rank
        candidate = ".".join(parts[:length])
        if candidate in RANKS:
            return candidate
    return None


def _is_module(name):
    relative = Path(*name.split(".")[1:]) if "." in name else Path()
    base = PACKAGE / relative
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


class Import:
    def __init__(self, target, names, line, in_function):
        self.target, self.names, self.line, self.in_function = target, names, line, in_function


def _imports(path):
    """Every import of a file: the module imported, the names taken from it, the line, whether in a function."""
    tree = ast.parse(path.read_text(), filename=str(path))
    module = _module_name(path)
    package = module if _is_package(path) else module.rpartition(".")[0]
    found = []

    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                for alias in child.names:
                    found.append(Import(alias.name, [], child.lineno, in_function))
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[: len(base) - (child.level - 1)]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module
                found.append(Import(target, [alias.name for alias in child.names], child.lineno, in_function))
            visit(child, inside)

    visit(tree, False)
    return module, found


def _internal_targets(record):
    """The sparsetab modules an import refers to (``from . import x`` names module ``x``)."""
    if not (record.target == "sparsetab" or record.target.startswith("sparsetab.")):
        return []
    targets = []
    for name in record.names:
        submodule = f"{record.target}.{name}"
        if _is_module(submodule):
            targets.append(submodule)
    if not targets:
        targets.append(record.target)
    return targets


FILES = sorted(PACKAGE.rglob("*.py"))


def _violations(path):
    module, records = _imports(path)
    group = _group(module)
    if group is None:
        return [f"{module} has no rank in RANKS (docs/architecture.md): give it one"]
    rank = RANKS[group]
    problems = []
    for record in records:
        where = f"{module}:{record.line}"
        internal = _internal_targets(record)
        if not internal:
            top = record.target.split(".")[0]
            if record.in_function and top not in LAZY_IMPORTS:
                problems.append(f"{where}: function-level import of {record.target} (only optional heavy dependencies)")
            if group in ALLOWED_THIRD_PARTY and top not in sys.stdlib_module_names:
                if top not in ALLOWED_THIRD_PARTY[group]:
                    problems.append(f"{where}: {group} may import {sorted(ALLOWED_THIRD_PARTY[group])} only, not {top}")
            if rank <= 2 and record.target.startswith(ESTIMATOR_MACHINERY):
                problems.append(f"{where}: rank {rank} uses scikit-learn estimator machinery ({record.target})")
            continue
        if record.in_function:
            problems.append(f"{where}: function-level import of {record.target} (a cycle dodged?)")
        for target in internal:
            if target == "sparsetab" and module != "sparsetab":
                problems.append(f"{where}: imports the face (sparsetab/__init__.py)")
                continue
            target_group = _group(target)
            if target_group is None:
                problems.append(f"{where}: imports {target}, which has no rank")
            elif target_group == group:
                if group == module and not _is_package(path):
                    problems.append(f"{where}: imports itself")
            elif RANKS[target_group] >= rank:
                problems.append(
                    f"{where}: imports {target} (rank {RANKS[target_group]}) from rank {rank}: imports go down only"
                )
        if record.names and record.target != module:
            # Names taken from another module: an underscore name is that module's own business.
            for name in record.names:
                if name.startswith("_") and not name.startswith("__") and not _is_module(f"{record.target}.{name}"):
                    problems.append(f"{where}: imports the underscore name {name} from {record.target}")
    return problems


@pytest.mark.parametrize("path", FILES, ids=lambda path: str(path.relative_to(PACKAGE.parent)))
def test_module_follows_the_import_rules(path):
    assert _violations(path) == []


def test_no_cycles_among_siblings():
    graph = {}
    for path in FILES:
        module, records = _imports(path)
        graph.setdefault(module, set())
        for record in records:
            for target in _internal_targets(record):
                # A package's __init__ importing its own modules is its face, not a cycle.
                if _group(target) == _group(module) and target != module and not _is_package(path):
                    graph[module].add(target)
    state = {}

    def visit(node, trail):
        if state.get(node) == "done":
            return
        assert state.get(node) != "open", "import cycle: " + " -> ".join([*trail, node])
        state[node] = "open"
        for successor in sorted(graph.get(node, ())):
            visit(successor, [*trail, node])
        state[node] = "done"

    for node in sorted(graph):
        visit(node, [])


def test_the_rules_catch_what_they_forbid(tmp_path, monkeypatch):
    # The checker itself: a module that breaks each rule is reported.
    package = tmp_path / "sparsetab"
    (package / "entmax").mkdir(parents=True)
    (package / "__init__.py").write_text("from ._version import __version__\n")
    (package / "_version.py").write_text('__version__ = "0"\n')
    (package / "entmax" / "__init__.py").write_text("import numpy\n")
    (package / "_tabular.py").write_text("from . import __version__\nfrom ._base import _helper\n")
    (package / "_base.py").write_text("def f():\n    from .estimators import Thing\n")
    (package / "estimators.py").write_text("")
    (package / "_training.py").write_text("from sklearn.base import BaseEstimator\n")
    (package / "unranked.py").write_text("")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", package)
    reports = {
        path.name if path.name != "__init__.py" else path.parent.name: _violations(path)
        for path in package.rglob("*.py")
    }
    assert any("may import ['torch'] only, not numpy" in problem for problem in reports["entmax"])
    assert any("imports the face" in problem for problem in reports["_tabular.py"])
    assert any("rank 6) from rank 1" in problem for problem in reports["_tabular.py"])
    assert any("underscore name _helper" in problem for problem in reports["_tabular.py"])
    assert any("function-level import of sparsetab.estimators" in problem for problem in reports["_base.py"])
    assert any("estimator machinery" in problem for problem in reports["_training.py"])
    assert reports["unranked.py"] == ["sparsetab.unranked has no rank in RANKS (docs/architecture.md): give it one"]
    assert reports["sparsetab"] == [] and reports["_version.py"] == []
