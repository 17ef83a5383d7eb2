"""benchmarks/gpu_check.py's smoke run: every check runs on the CPU and reports what it promises."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MODES = {"sparsemax", "entmax15", "constant", "adaptive"}


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    output = tmp_path_factory.mktemp("gpu_check") / "gpu.md"
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    completed = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "gpu_check.py"),
            "--smoke",
            "--device",
            "cpu",
            "--output",
            str(output),
        ],
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    lines = [json.loads(line) for line in completed.stdout.splitlines()]
    return lines, output.read_text()


def _lines(lines, check):
    return [line for line in lines if line["check"] == check]


def test_every_check_reports_every_mode(smoke):
    lines, _ = smoke
    assert lines[0]["check"] == "environment" and lines[0]["device"] == "cpu"
    assert lines[-1]["check"] == "wall_time"
    fits = _lines(lines, "fit")
    assert {(line["entmax_mode"], line["batch_size"]) for line in fits} == {(m, b) for m in MODES for b in (128, 256)}
    assert all(line["rows_per_second"] > 0 for line in fits)
    # The CPU has no captured ways; the compiled way traced with aot_eager in the smoke run.
    ways = {(line["way"], line["batch_size"]): line for line in _lines(lines, "step_ways")}
    assert set(ways) == {("eager", 128), ("compiled", 128)}
    assert all(line["ms_per_step"] > 0 and line["rows_per_second"] > 0 for line in ways.values())
    assert {line["compile_backend"] for line in ways.values()} == {None, "aot_eager"}
    for check in ("syncs", "peak_memory", "repeatability", "cpu_model_on_device"):
        assert {line["entmax_mode"] for line in _lines(lines, check)} == MODES, check
    (predict,) = _lines(lines, "predict")
    assert predict["encoding_rows_per_second"] > 0 and predict["network_rows_per_second"] > 0
    assert {(line["map"], tuple(line["shape"])) for line in _lines(lines, "maps")} == {
        (name, (rows, 64)) for name in ("sparsemax", "entmax15") for rows in (128, 256)
    }


def test_same_seed_fits_are_identical_and_a_moved_model_predicts_the_same(smoke):
    lines, _ = smoke
    for line in _lines(lines, "repeatability"):
        assert line["weights_equal"] and line["max_probability_difference"] == 0.0
    for line in _lines(lines, "cpu_model_on_device"):
        assert line["max_probability_difference"] == 0.0


def test_syncs_are_counted_per_step(smoke):
    # The count is a rate over whole steps: the sparse maps' convergence tests (several per step) are seen.
    lines, _ = smoke
    syncs = {line["entmax_mode"]: line["syncs_per_step"] for line in _lines(lines, "syncs")}
    assert all(0 < value < 100 for value in syncs.values())
    assert syncs["adaptive"] > syncs["sparsemax"]  # alpha's gradient adds root-finding passes


def test_the_markdown_file_names_the_device_torch_and_wall_time(smoke):
    lines, markdown = smoke
    assert "device cpu (cpu)" in markdown and "torch " in markdown and "wall time" in markdown
    assert markdown.count('{"check": ') == len(lines) - 1  # every line but the wall time


def _installed(module):
    return importlib.util.find_spec(module) is not None


def test_the_adult_fit_and_the_peers_are_reported_or_skipped_by_name(smoke):
    lines, _ = smoke
    # On the CPU there is no second device to fit on: one line, the smoke run's 2,000 rows and 2 epochs.
    (adult,) = _lines(lines, "adult_fit")
    assert (adult["device"], adult["rows"], adult["epochs"]) == ("cpu", 2000, 2)
    assert adult["fit_seconds"] > 0 and 0 <= adult["accuracy"] <= 1
    maps = _lines(lines, "maps_entmax13")
    if _installed("entmax"):
        assert {(line["map"], tuple(line["shape"])) for line in maps} == {
            (name, (rows, 64)) for name in ("sparsemax", "entmax15") for rows in (128, 256)
        }
        assert all(line["sparsetab_ms"] > 0 and line["entmax13_ms"] > 0 for line in maps)
    else:
        assert maps == [{"check": "maps_entmax13", "skipped": "the entmax package is not installed"}]
    peers = _lines(lines, "pytorch_tabnet_fit")
    if _installed("pytorch_tabnet"):
        assert [line["batch_size"] for line in peers] == [128, 256]
        assert all(line["rows"] == 1024 and line["epochs"] == 1 and line["rows_per_second"] > 0 for line in peers)
    else:
        assert peers == [{"check": "pytorch_tabnet_fit", "skipped": "pytorch-tabnet is not installed"}]
