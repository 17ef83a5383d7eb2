import subprocess
import sys
import zipfile

import pytest

from sparsetab.datasets import data_path, load_adult


def test_load_adult_official_split():
    data = load_adult()
    assert data.frame_train.shape == (32561, 15)
    assert data.frame_test.shape == (16281, 15)
    assert data.target_name == "income"
    assert data.frame_train["income"].value_counts().to_dict() == {"<=50K": 24720, ">50K": 7841}
    assert data.frame_test["income"].value_counts().to_dict() == {"<=50K": 12435, ">50K": 3846}
    assert (data.frame_train["workclass"] == "?").sum() == 1836
    assert sorted(data.numeric_features + data.categorical_features) == sorted(data.feature_names)
    assert "Becker & Kohavi" in data.DESCR
    X_train, X_test, y_train, y_test = load_adult(return_X_y=True)
    assert X_train.shape == (32561, 14) and X_test.shape == (16281, 14)
    assert list(X_train.columns) == data.feature_names
    assert len(y_train) == 32561 and len(y_test) == 16281


def test_unknown_data_set_is_named():
    with pytest.raises(ValueError, match="No bundled data set named 'nope'; available: \\['adult'\\]"):
        data_path("nope")


def test_built_wheel_ships_the_data_and_loads_it(tmp_path):
    # The running install is the editable one (README / CI install with -e); this test covers a
    # wheel: build it, unpack it alone on sys.path and load the data from there.
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            str(root),
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(tmp_path / "dist"),
        ],
        capture_output=True,
        text=True,
    )
    assert build.returncode == 0, build.stderr[-2000:]
    (wheel,) = (tmp_path / "dist").glob("sparsetab-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        assert {
            "sparsetab/_data/adult/train.csv.gz",
            "sparsetab/_data/adult/test.csv.gz",
            "sparsetab/_data/adult/SOURCE.md",
        } <= names
        archive.extractall(tmp_path / "site")
    script = (
        "import sparsetab, sparsetab.datasets as d; "
        f"assert sparsetab.__file__.startswith({str(tmp_path / 'site')!r}), sparsetab.__file__; "
        "print(d.load_adult().frame_train.shape)"
    )
    run = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(tmp_path / "site"), "PATH": ""},
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip() == "(32561, 15)"


def test_editable_install_finds_the_data_in_the_repository():
    import json
    from importlib.metadata import distributions
    from pathlib import Path

    import sparsetab

    # A sparsetab.egg-info folder in the working directory may shadow the installed metadata.
    urls = [d.read_text("direct_url.json") for d in distributions() if d.metadata["Name"] == "sparsetab"]
    if not any(url and json.loads(url).get("dir_info", {}).get("editable") for url in urls):
        pytest.skip("sparsetab is not installed in editable mode here")
    root = Path(__file__).resolve().parents[1]
    assert Path(sparsetab.__file__).resolve().is_relative_to(root)
    assert Path(str(data_path("adult"))).resolve() == (root / "datasets" / "adult").resolve()
    assert load_adult().frame_test.shape == (16281, 15)
