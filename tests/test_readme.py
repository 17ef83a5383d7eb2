import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from sparsetab import SparseTabNetClassifier

ROOT = Path(__file__).resolve().parents[1]


def test_ci_runs_the_readme_test_command_verbatim():
    ci_lines = [
        line
        for line in (ROOT / ".ci" / "run").read_text().splitlines()
        if line and not line.startswith(("#", "set ", "cd "))
    ]
    assert len(ci_lines) == 1
    command = ci_lines[0]
    assert "python -m pytest" in command and "torch==2.13.0" in command
    assert f"```bash\n{command}\n```" in (ROOT / "README.md").read_text()


def _serving_snippets():
    readme = (ROOT / "README.md").read_text()
    section = re.split(r"\n##+ ", readme.split("### Serving without scikit-learn", 1)[1], maxsplit=1)[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)


def test_readme_serving_snippets_run_without_warnings(tmp_path, monkeypatch, fast_params, make_classification_frame):
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
