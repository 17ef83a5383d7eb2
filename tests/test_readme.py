import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from sparsetab import SparseTabNetClassifier

ROOT = Path(__file__).resolve().parents[1]


def test_ci_runs_the_readme_test_and_documentation_commands_verbatim():
    ci_lines = [
        line
        for line in (ROOT / ".ci" / "run").read_text().splitlines()
        if line and not line.startswith(("#", "set ", "cd "))
    ]
    assert len(ci_lines) == 2
    tests, documentation = ci_lines
    assert "python -m pytest" in tests and "torch==2.13.0" in tests
    assert "sphinx-build -W" in documentation and '".[docs]"' in documentation
    readme = (ROOT / "README.md").read_text()
    for command in ci_lines:
        assert f"```bash\n{command}\n```" in readme


def test_readme_is_the_front_door_and_the_manual_has_every_guide_page():
    # Issue 35: the README stays short (the manual holds the rest) and links what it names.
    readme = (ROOT / "README.md").read_text()
    assert len(readme.encode()) < 15_000
    for target in re.findall(r"\]\(([^)#]+)", readme):
        assert (ROOT / target).exists(), target
    guide = (ROOT / "docs" / "user_guide" / "index.md").read_text()
    listed = re.findall(r"^([a-z_]+)$", guide, flags=re.MULTILINE)
    assert sorted(listed) == sorted(
        path.stem for path in (ROOT / "docs" / "user_guide").glob("*.md") if path.stem != "index"
    )


def _serving_snippets():
    page = (ROOT / "docs" / "user_guide" / "saving_and_serving.md").read_text()
    section = re.split(r"\n##+ ", page.split("## Serving without scikit-learn", 1)[1], maxsplit=1)[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)


def test_guide_serving_snippets_run_without_warnings(tmp_path, monkeypatch, fast_params, make_classification_frame):
    snippets = _serving_snippets()
    assert len(snippets) == 2 and "torch.export.load" in snippets[0] and "onnxruntime" in snippets[1]
    pytest.importorskip("onnxruntime")
    X, y = make_classification_frame(120)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # a one-epoch fit stands in for the README's
        model = SparseTabNetClassifier(max_epochs=1, **dict(fast_params, n_steps=1)).fit(X, y)
    X_test, _ = make_classification_frame(25, seed=1)
    monkeypatch.chdir(tmp_path)  # the snippets write model.pt2 and model.onnx in the working directory
    for snippet in snippets:
        namespace = {"model": model, "X_test": X_test}
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            exec(snippet, namespace)
        np.testing.assert_allclose(np.asarray(namespace["probabilities"]), model.predict_proba(X_test), atol=1e-6)
        assert np.asarray(namespace["step_masks"]).shape == (25, 1, 4)
    assert namespace["metadata"]["inputs"]["codes"]["categories"]["plan"] == ["basic", "gold"]
