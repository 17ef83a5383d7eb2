from pathlib import Path

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
