"""The entmax 1.3 package's own test suite, run against sparsetab.entmax with its imports rewritten.

sparsetab.entmax is a drop-in for entmax 1.3 (issue 33): code written for the package, its tests
included, must run unchanged but for the package name. The test modules ship inside the installed
package (the dev extra installs it); they are copied, their ``entmax`` imports pointed at
``sparsetab.entmax``, and run by pytest in a subprocess.
"""

import re
import subprocess
import sys
from pathlib import Path

import pytest

entmax = pytest.importorskip("entmax")


def test_the_entmax_packages_own_tests_pass_against_sparsetab_entmax(tmp_path):
    modules = sorted(Path(entmax.__file__).parent.glob("test_*.py"))
    assert len(modules) >= 4, [module.name for module in modules]
    for module in modules:
        text = module.read_text()
        text = re.sub(r"^from entmax\.", "from sparsetab.entmax.", text, flags=re.MULTILINE)
        text = re.sub(r"^from entmax import", "from sparsetab.entmax import", text, flags=re.MULTILINE)
        text = re.sub(r"^import entmax$", "import sparsetab.entmax as entmax", text, flags=re.MULTILINE)
        assert not re.search(r"^\s*(from|import) entmax\b", text, flags=re.MULTILINE), module.name
        (tmp_path / module.name).write_text(text)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
    )
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    passed = int(re.search(r"(\d+) passed", summary).group(1))
    assert passed >= 120 and "failed" not in summary and "error" not in summary, summary
