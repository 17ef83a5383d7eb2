"""The sparsetab command (sparsetab.cli, python -m sparsetab): the five subcommands on a slice of Adult."""

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
from importlib.metadata import entry_points

import numpy as np
import pandas as pd
import pytest

from sparsetab import SparseTabNetClassifier, cli
from sparsetab.datasets import load_adult

# One pass over every row: the info test reads its epoch count (a default fit of a few hundred rows chooses
# its epochs on held-out rows, then trains again).
ONE_PASS = ["--set", "early_stopping=false"]
SMALL = ["--set", "max_epochs=3", "--set", "n_d=4", "--set", "n_a=4", "--set", "n_steps=2", "--set", "random_state=0"]


def _run(*arguments, cwd):
    """``python -m sparsetab ARGUMENTS`` in a subprocess: (exit code, stdout, stderr)."""
    done = subprocess.run(
        [sys.executable, "-m", "sparsetab", *map(str, arguments)], capture_output=True, text=True, cwd=cwd, timeout=300
    )
    return done.returncode, done.stdout, done.stderr


def _call(*arguments, cwd):
    """``cli.main(ARGUMENTS)`` in this process, in ``cwd``: (exit code, stdout, stderr); faster than a subprocess."""
    out, err, before = io.StringIO(), io.StringIO(), os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.main([str(argument) for argument in arguments])
    finally:
        os.chdir(before)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def adult_files(tmp_path_factory):
    """400 training rows as gzip CSV and 150 test rows (with the target) as Parquet and CSV."""
    folder = tmp_path_factory.mktemp("cli")
    load_adult(subset="train").frame.head(400).to_csv(folder / "train.csv.gz", index=False)
    test = load_adult(subset="test").frame.head(150).assign(person=lambda frame: [f"p{i}" for i in range(len(frame))])
    test.to_parquet(folder / "test.parquet", index=False)
    test.to_csv(folder / "test.csv", index=False)
    return folder


@pytest.fixture(scope="module")
def fitted(adult_files):
    code, out, err = _run(
        "fit", "train.csv.gz", "--target", "income", *SMALL, *ONE_PASS, "--output", "income.sparsetab", cwd=adult_files
    )
    assert code == 0, err
    return adult_files, out, err


def test_fit_prints_progress_and_a_summary_and_writes_the_model(fitted):
    folder, out, err = fitted
    lines = out.splitlines()
    assert [line.split(" ")[0] for line in lines[:4]] == ["[1/3]", "[2/3]", "[3/3]", "Stopped"]
    assert "task          classification (SparseTabNetClassifier)" in lines
    assert "rows          400 training, 14 columns" in lines and "classes       <=50K, >50K" in lines
    assert lines[-1] == "model         income.sparsetab" and (folder / "income.sparsetab").stat().st_size > 1000
    # warnings are one line each, without the source line
    assert all(line.startswith("sparsetab fit: ") for line in err.splitlines())


def test_predict_keeps_the_row_order_and_the_id_column(fitted):
    from sparsetab import load_model

    folder, _, _ = fitted
    code, _, err = _call(
        "predict",
        "income.sparsetab",
        "test.parquet",
        "--proba",
        "--id",
        "person",
        "--output",
        "out.parquet",
        cwd=folder,
    )
    assert code == 0, err
    result = pd.read_parquet(folder / "out.parquet")
    assert list(result.columns) == ["person", "prediction", "proba_<=50K", "proba_>50K"]
    test = pd.read_parquet(folder / "test.parquet")
    model = load_model(folder / "income.sparsetab")
    X = test[list(model.feature_names_in_)]
    assert result["person"].tolist() == test["person"].tolist()
    np.testing.assert_array_equal(result["prediction"], model.predict(X))
    np.testing.assert_allclose(result[["proba_<=50K", "proba_>50K"]], model.predict_proba(X), rtol=1e-12)
    code, out, _ = _call("predict", "income.sparsetab", "test.csv", cwd=folder)  # CSV on standard output
    assert code == 0 and out.splitlines()[0] == "prediction" and len(out.splitlines()) == 151


def test_explain_writes_importances_step_masks_and_the_figure(fitted):
    folder, _, _ = fitted
    code, _, err = _call(
        "explain", "income.sparsetab", "test.csv", "--rows", "20", "--output", "imp.csv", "--plot", "m.png", cwd=folder
    )
    assert code == 0, err
    importances = pd.read_csv(folder / "imp.csv")
    assert importances.shape == (20, 15) and importances["row"].tolist() == list(range(20))
    np.testing.assert_allclose(importances.drop(columns="row").sum(axis=1), 1.0, atol=1e-5)
    assert (folder / "m.png").stat().st_size > 5000
    code, _, err = _call(
        "explain", "income.sparsetab", "test.csv", "--rows", "4", "--steps", "--output", "s.csv", cwd=folder
    )
    steps = pd.read_csv(folder / "s.csv")
    assert list(steps.columns) == ["row", "step", "feature", "mask"] and len(steps) == 4 * 2 * 14
    np.testing.assert_allclose(steps.groupby(["row", "step"])["mask"].sum(), 1.0, atol=1e-5)
    assert steps["feature"].iloc[:14].tolist() == list(importances.columns[1:])


def test_evaluate_prints_the_metrics_and_json(fitted):
    from sklearn.metrics import accuracy_score, log_loss, roc_auc_score

    from sparsetab import load_model

    folder, _, _ = fitted
    code, out, err = _call("evaluate", "income.sparsetab", "test.csv", "--target", "income", "--json", cwd=folder)
    assert code == 0, err
    metrics = json.loads(out)
    test = pd.read_csv(folder / "test.csv")
    model = load_model(folder / "income.sparsetab")
    X, y = test[list(model.feature_names_in_)], test["income"]
    assert metrics["rows"] == 150
    assert metrics["accuracy"] == pytest.approx(accuracy_score(y, model.predict(X)))
    assert metrics["roc_auc"] == pytest.approx(roc_auc_score(y, model.predict_proba(X)[:, 1]))
    assert metrics["log_loss"] == pytest.approx(log_loss(y, model.predict_proba(X)))
    code, out, _ = _call("evaluate", "income.sparsetab", "test.csv", "--target", "income", cwd=folder)
    assert [line.split()[0] for line in out.splitlines()] == [
        "metric",
        "accuracy",
        "balanced_accuracy",
        "roc_auc",
        "log_loss",
        "rows",
    ]


def test_info_describes_the_model(fitted):
    folder, _, _ = fitted
    code, out, err = _call("info", "income.sparsetab", cwd=folder)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "model         SparseTabNetClassifier"
    assert "max_epochs=3" in lines[1] and "n_steps=2" in lines[1] and "random_state=0" in lines[1]
    assert lines[3].startswith("features      14: age, workclass")
    assert lines[4].startswith("training      3 epochs, final train loss ")
    importances = [float(line.split()[-1]) for line in lines[6:]]
    assert len(importances) == 14 and importances == sorted(importances, reverse=True)


def test_regression_from_type_of_target_and_a_validation_file(tmp_path):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {"a": rng.normal(size=300), "b": rng.normal(size=300), "colour": rng.choice(["red", "blue"], 300)}
    )
    frame["price"] = 2 * frame["a"] + (frame["colour"] == "red") + 0.1 * rng.normal(size=300)
    frame.iloc[:240].to_csv(tmp_path / "train.csv", index=False)
    frame.iloc[240:].to_csv(tmp_path / "valid.csv", index=False)
    code, out, err = _run("fit", "train.csv", "--target", "price", "--validation", "valid.csv", *SMALL, cwd=tmp_path)
    assert code == 0, err
    assert "task          regression (SparseTabNetRegressor)" in out and "val loss" in out
    assert (tmp_path / "train.sparsetab").is_file()  # default name: DATA's without its suffixes
    code, out, _ = _call("evaluate", "train.sparsetab", "valid.csv", "--target", "price", "--json", cwd=tmp_path)
    assert sorted(json.loads(out)) == ["mae", "r2", "rmse", "rows"]
    code, _, err = _call("predict", "train.sparsetab", "valid.csv", "--proba", cwd=tmp_path)
    assert code == 1 and "is a regressor" in err


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["fit", "nope.csv", "--target", "income"], "DATA file 'nope.csv' does not exist."),
        (["fit", "train.csv.gz", "--target", "wage"], "--target 'wage' is not a column of 'train.csv.gz'"),
        (["fit", "train.csv.gz", "--target", "income", "--set", "n_dd=4"], "has no parameter 'n_dd'"),
        (
            ["fit", "train.csv.gz", "--target", "income", "--set", "n_d=0"],
            "The 'n_d' parameter of SparseTabNetClassifier must be",
        ),
        (["fit", "train.csv.gz", "--target", "income", "--set", "max_epochs"], "--set 'max_epochs' is not PARAM=VALUE"),
        (["predict", "income.sparsetab", "train.csv.gz", "--id", "who"], "--id 'who' is not a column"),
        # An ID named as an output column replaced it (predict) or failed in pandas' insert (explain).
        (["explain", "income.sparsetab", "test.csv", "--id", "age"], "--id 'age' is also the name of a column of the"),
        (["predict", "missing.sparsetab", "train.csv.gz"], "MODEL file 'missing.sparsetab' does not exist."),
        (["explain", "income.sparsetab", "train.csv.gz", "--rows", "0"], "--rows must be at least 1, got 0."),
        (
            ["fit", "train.csv.gz", "--target", "income", "--task", "regression"],
            "--task regression needs a numeric --target, but 'income' holds",
        ),
        (["fit", "train.csv.gz", "--target", "income", "--output", "no/m.sparsetab"], "the folder 'no' does not exist"),
        (["fit", "train.csv.gz", "--target", "income", "--output", "m.parquet"], "is a model file, not a table"),
        (["fit", "train.csv.gz", "--target", "income", "--drop", "income"], "--drop 'income' is the --target column"),
        (
            ["fit", "train.csv.gz", "--target", "income", "--drop", "age", "--drop", "id", "--drop", "id"],
            "--drop ['id'] are not columns of 'train.csv.gz'",
        ),
    ],
)
def test_user_errors_are_one_line_with_exit_code_1(fitted, arguments, message, capsys, monkeypatch):
    folder, _, _ = fitted
    monkeypatch.chdir(folder)
    assert cli.main(arguments) == 1
    err = capsys.readouterr().err
    assert (
        len(err.strip().splitlines()) == 1 and err.startswith(f"sparsetab {arguments[0]}: error: ") and message in err
    )


def test_a_table_without_the_model_columns_is_named(fitted, capsys, monkeypatch):
    folder, _, _ = fitted
    monkeypatch.chdir(folder)
    pd.DataFrame({"age": [30]}).to_csv("one.csv", index=False)
    assert cli.main(["predict", "income.sparsetab", "one.csv"]) == 1
    assert "'one.csv' lacks the model's input column(s) ['workclass'" in capsys.readouterr().err


def test_debug_shows_the_traceback_and_usage_errors_exit_2(fitted, capsys, monkeypatch):
    monkeypatch.chdir(fitted[0])
    assert cli.main(["--debug", "info", "missing.sparsetab"]) == 1
    assert "Traceback" in capsys.readouterr().err
    assert cli.main(["info", "missing.sparsetab", "--debug"]) == 1  # after the subcommand too
    assert "Traceback" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["fit", "train.csv.gz"])  # --target missing
    assert exit_info.value.code == 2
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["fit", "--help"])
    assert exit_info.value.code == 0 and "examples:" in capsys.readouterr().out


def test_parquet_without_pyarrow_names_the_extra(fitted, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow now raises ImportError
    with pytest.raises(cli.UserError, match=r'needs pyarrow: pip install "sparsetab\[parquet\]"'):
        cli.read_table(fitted[0] / "test.parquet")


@pytest.mark.parametrize(
    "text, expected",
    [
        ("batch_size=512", ("batch_size", 512)),
        ('cat_emb_dim={"workclass": 3}', ("cat_emb_dim", {"workclass": 3})),
        ("entmax_mode=sparsemax", ("entmax_mode", "sparsemax")),
        ("early_stopping=true", ("early_stopping", True)),
        ("random_state=null", ("random_state", None)),
        ("scoring=roc_auc", ("scoring", "roc_auc")),
        ("learning_rate=1e-3", ("learning_rate", 0.001)),
    ],
)
def test_set_values_are_json_when_they_parse(text, expected):
    assert cli.parse_assignment(text) == expected


def test_the_console_script_is_declared():
    (script,) = [point for point in entry_points(group="console_scripts") if point.name == "sparsetab"]
    assert script.value == "sparsetab.cli:main"


def test_explain_steps_of_a_model_with_step_gates_has_a_gate_column(tmp_path):
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(80, 3)), columns=["a", "b", "c"])
    model = SparseTabNetClassifier(step_gates="sigmoid", n_d=4, n_a=4, n_steps=2, max_epochs=1, random_state=0)
    model.fit(X, X["a"] > 0).save_model(tmp_path / "gated.sparsetab")
    X.to_csv(tmp_path / "rows.csv", index=False)
    code, _, err = _call(
        "explain", "gated.sparsetab", "rows.csv", "--rows", "5", "--steps", "--output", "s.csv", cwd=tmp_path
    )
    assert code == 0, err
    steps = pd.read_csv(tmp_path / "s.csv")
    assert list(steps.columns) == ["row", "step", "feature", "mask", "gate"] and len(steps) == 5 * 2 * 3
    gates = model.explain(X.head(5)).step_gates
    np.testing.assert_allclose(steps.groupby(["row", "step"])["gate"].first().to_numpy(), gates.reshape(-1), rtol=1e-6)


@pytest.fixture(scope="module")
def coded_files(tmp_path_factory):
    """A table whose text column of codes ("007", "012", ...) holds only digits, and a target of integer labels."""
    folder = tmp_path_factory.mktemp("codes")
    rng = np.random.default_rng(0)
    codes = rng.choice(["007", "012", "030", "x40"], 300)
    size = rng.normal(size=300)
    label = np.where((codes == "012") | (size > 0.8), 1, 0)
    pd.DataFrame({"code": codes, "size": size, "label": label}).to_csv(folder / "train.csv", index=False)
    digits_only = codes != "x40"
    new = pd.DataFrame({"code": codes[digits_only], "size": size[digits_only], "label": label[digits_only]})
    new.to_csv(folder / "new.csv", index=False)
    return folder, new


def test_predict_explain_and_evaluate_read_the_new_file_with_the_models_column_types(coded_files):
    # Issue 33: "007" held only digits in the new file, was read as 7, matched no category and changed every
    # prediction silently. The model's text columns are read as text.
    from sparsetab import load_model

    folder, new = coded_files
    code, _, err = _call("fit", "train.csv", "--target", "label", *SMALL, "--output", "codes.sparsetab", cwd=folder)
    assert code == 0, err
    model = load_model(folder / "codes.sparsetab")
    assert cli.text_columns(model) == ["code"]
    code, out, err = _call("predict", "codes.sparsetab", "new.csv", "--proba", cwd=folder)
    assert code == 0 and "unseen" not in err and "changed" not in err, err
    served = pd.read_csv(io.StringIO(out))
    expected = model.predict_proba(new[["code", "size"]])
    np.testing.assert_allclose(served.filter(like="proba").to_numpy(), expected, rtol=1e-6)
    code, out, err = _call("evaluate", "codes.sparsetab", "new.csv", "--target", "label", "--json", cwd=folder)
    assert code == 0, err
    accuracy = float(np.mean(model.predict(new[["code", "size"]]) == new["label"]))
    assert json.loads(out)["accuracy"] == pytest.approx(accuracy)
    code, out, err = _call("explain", "codes.sparsetab", "new.csv", cwd=folder)
    assert code == 0 and "unseen" not in err, err


def test_evaluate_json_is_valid_when_a_metric_is_undefined(coded_files):
    folder, new = coded_files
    _call("fit", "train.csv", "--target", "label", *SMALL, "--output", "codes.sparsetab", cwd=folder)
    new[new["label"] == 0].to_csv(folder / "one_class.csv", index=False)
    code, out, err = _call("evaluate", "codes.sparsetab", "one_class.csv", "--target", "label", "--json", cwd=folder)
    assert code == 0, err
    assert "NaN" not in out
    assert json.loads(out)["roc_auc"] is None  # undefined on one class: null, as JSON has no NaN


def test_set_class_weight_names_integer_labels(coded_files):
    # JSON keys are text: {"1": 5} names the integer label 1, as the user means.
    from sparsetab import load_model

    folder, _ = coded_files
    code, _, err = _call(
        "fit", "train.csv", "--target", "label", *SMALL, "--set", 'class_weight={"0": 1, "1": 5}',
        "--output", "weighted.sparsetab", cwd=folder,
    )  # fmt: skip
    assert code == 0, err
    assert load_model(folder / "weighted.sparsetab").class_weight == {0: 1, 1: 5}


def test_a_closed_pipe_ends_quietly_with_the_sigpipe_status(fitted):
    if not hasattr(signal, "SIGPIPE"):
        pytest.skip("no SIGPIPE on this platform")
    folder, _, _ = fitted
    big = pd.concat([pd.read_csv(folder / "test.csv")] * 40, ignore_index=True)  # more than a pipe buffer of output
    big.to_csv(folder / "big.csv", index=False)
    process = subprocess.Popen(
        [sys.executable, "-m", "sparsetab", "predict", "income.sparsetab", "big.csv", "--proba"],
        cwd=folder,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    process.stdout.readline()
    process.stdout.close()  # what `| head -1` does
    err = process.stderr.read().decode()
    assert process.wait(timeout=300) == 128 + signal.SIGPIPE
    assert "Traceback" not in err and "Broken pipe" not in err and "error" not in err, err


def test_fit_drop_leaves_an_id_column_out_and_predict_copies_it(fitted):
    # Without --drop an ID column was an input (with importance 0.1 on a helper's table); predict's --id then
    # had nothing to copy from a model that needed it as an input.
    folder, _, _ = fitted
    code, out, err = _call(
        "fit", "--drop", "person", "test.csv", "--target", "income", "--drop", "fnlwgt", *SMALL, *ONE_PASS,
        "--output", "dropped.sparsetab", cwd=folder,
    )  # fmt: skip
    assert code == 0, err
    assert "rows          150 training, 13 columns" in out
    from sparsetab import load_model

    model = load_model(folder / "dropped.sparsetab")
    assert "person" not in model.feature_names_in_ and "fnlwgt" not in model.feature_names_in_
    code, out, err = _call("predict", "dropped.sparsetab", "test.csv", "--id", "person", cwd=folder)
    assert code == 0, err
    table = pd.read_csv(io.StringIO(out))
    assert list(table.columns) == ["person", "prediction"] and table["person"].tolist()[:2] == ["p0", "p1"]
    # explain had no --id: its rows, numbered 0..n, could not be joined back to the data.
    code, out, err = _call("explain", "dropped.sparsetab", "test.csv", "--rows", "3", "--id", "person", cwd=folder)
    assert code == 0, err
    table = pd.read_csv(io.StringIO(out))
    assert list(table.columns[:3]) == ["row", "person", "age"] and table["person"].tolist() == ["p0", "p1", "p2"]
    code, out, err = _call(
        "explain", "dropped.sparsetab", "test.csv", "--rows", "2", "--steps", "--id", "person", cwd=folder
    )
    steps = pd.read_csv(io.StringIO(out))
    assert list(steps.columns) == ["row", "person", "step", "feature", "mask"]
    assert (steps.groupby("row")["person"].unique().map(list).tolist()) == [["p0"], ["p1"]]
    code, out, err = _call("evaluate", "dropped.sparsetab", "test.csv", "--target", "income", "--json", cwd=folder)
    assert code == 0 and json.loads(out)["rows"] == 150, err
    frame = pd.read_csv(folder / "test.csv")[["person", "income"]]
    frame.to_csv(folder / "ids_only.csv", index=False)
    code, _, err = _call("fit", "ids_only.csv", "--target", "income", "--drop", "person", cwd=folder)
    assert code == 1 and "--drop leaves 'ids_only.csv' no input column: only the --target 'income' remains." in err


def test_an_id_keeps_its_leading_zeros_and_may_not_replace_an_output_column(fitted):
    # IDs such as 00017 came out as 17, and --id prediction replaced the ID by the predictions, without a message.
    folder, _, _ = fitted
    frame = pd.read_csv(folder / "test.csv").head(5)
    frame.assign(person=["00017", "00018", "019", "0", "7"], prediction="x").to_csv(folder / "ids.csv", index=False)
    code, out, err = _call("predict", "income.sparsetab", "ids.csv", "--id", "person", cwd=folder)
    assert code == 0, err
    assert pd.read_csv(io.StringIO(out), dtype=str)["person"].tolist() == ["00017", "00018", "019", "0", "7"]
    code, out, err = _call(
        "explain", "income.sparsetab", "ids.csv", "--id", "person", "--output", "e.parquet", cwd=folder
    )
    assert code == 0, err
    assert pd.read_parquet(folder / "e.parquet")["person"].tolist() == ["00017", "00018", "019", "0", "7"]
    code, _, err = _call("predict", "income.sparsetab", "ids.csv", "--id", "prediction", cwd=folder)
    assert code == 1 and "--id 'prediction' is also the name of a column of the output (prediction)" in err


def test_explain_writes_the_figure_even_when_the_reader_closes_the_pipe(fitted):
    # The figure was drawn after the table: `| head` ended the process before the figure was written.
    if not hasattr(signal, "SIGPIPE"):
        pytest.skip("no SIGPIPE on this platform")
    folder, _, _ = fitted
    figure = folder / "piped.png"
    # 1,200 rows of about 150 bytes of importances: more than a pipe buffer (64 KiB) of output
    big = pd.concat([pd.read_csv(folder / "test.csv")] * 8, ignore_index=True)
    big.to_csv(folder / "explain_big.csv", index=False)
    process = subprocess.Popen(
        [sys.executable, "-m", "sparsetab", "explain", "income.sparsetab", "explain_big.csv", "--plot", figure.name],
        cwd=folder,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    process.stdout.readline()
    process.stdout.close()
    process.stderr.read()
    assert process.wait(timeout=300) in (0, 128 + signal.SIGPIPE)
    assert figure.stat().st_size > 5000


@pytest.mark.parametrize(
    "loss, extra, names",
    [
        ("quantile", ["--set", "quantile=0.9"], ["pinball_loss", "share_at_or_below"]),
        ("poisson", [], ["mean_poisson_deviance"]),
        ("gamma", [], ["mean_gamma_deviance"]),
        ("absolute_error", [], []),
    ],
)
def test_evaluate_scores_a_regressor_by_its_loss(tmp_path, loss, extra, names):
    # rmse and r2 say little of a 0.9-quantile model: evaluate adds what its loss scores.
    from sklearn.metrics import mean_gamma_deviance, mean_pinball_loss, mean_poisson_deviance

    from sparsetab import load_model

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=300), "b": rng.normal(size=300)})
    frame["y"] = rng.poisson(np.exp(1 + 0.5 * frame["a"])) + 0.5  # positive: in every loss's domain
    frame.to_csv(tmp_path / "train.csv", index=False)
    code, _, err = _call(
        "fit", "train.csv", "--target", "y", "--task", "regression", "--set", f"loss={loss}", *extra, *SMALL,
        *ONE_PASS, cwd=tmp_path,
    )  # fmt: skip
    assert code == 0, err
    code, out, err = _call("evaluate", "train.sparsetab", "train.csv", "--target", "y", cwd=tmp_path)
    assert code == 0 and len({line.index(line.split()[1]) for line in out.splitlines()}) == 1, out  # one column
    code, out, err = _call("evaluate", "train.sparsetab", "train.csv", "--target", "y", "--json", cwd=tmp_path)
    assert code == 0, err
    metrics = json.loads(out)
    assert sorted(metrics) == sorted(["mae", "r2", "rmse", "rows", *names])
    model = load_model(tmp_path / "train.sparsetab")
    y, prediction = frame["y"].to_numpy(), model.predict(frame[["a", "b"]])
    expected = {
        "pinball_loss": lambda: mean_pinball_loss(y, prediction, alpha=0.9),
        "share_at_or_below": lambda: np.mean(y <= prediction),
        "mean_poisson_deviance": lambda: mean_poisson_deviance(y, prediction),
        "mean_gamma_deviance": lambda: mean_gamma_deviance(y, prediction),
    }
    for name in names:
        assert metrics[name] == pytest.approx(expected[name]())
    if loss == "gamma":  # a target outside the loss's domain: the deviance is undefined (null), not an error
        frame.assign(y=frame["y"] - 0.5).to_csv(tmp_path / "zeros.csv", index=False)
        code, out, err = _call("evaluate", "train.sparsetab", "zeros.csv", "--target", "y", "--json", cwd=tmp_path)
        assert code == 0 and json.loads(out)["mean_gamma_deviance"] is None, err


def test_a_parameter_of_one_task_chooses_it(tmp_path):
    # Counts are integers, which type_of_target reads as classes: `--set loss=poisson` failed with "the
    # classifier has no parameter 'loss'" unless --task regression was given.
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=200), "b": rng.normal(size=200)})
    frame["count"] = rng.poisson(np.exp(1 + 0.5 * frame["a"]))
    frame.to_csv(tmp_path / "counts.csv", index=False)
    code, out, err = _call(
        "fit", "counts.csv", "--target", "count", "--set", "loss=poisson", *SMALL, *ONE_PASS, cwd=tmp_path
    )  # fmt: skip
    assert code == 0, err
    assert "task          regression (SparseTabNetRegressor; --set loss is a regression parameter)" in out
    code, out, err = _call(
        "fit", "counts.csv", "--target", "count", "--set", "loss=poisson", "--set", "class_weight=balanced", *SMALL,
        cwd=tmp_path,
    )  # fmt: skip
    assert code == 1 and "--set names parameters of the classifier and of the regressor (class_weight, loss)" in err
    # --task still decides, and then a parameter of the other task is refused by name.
    code, _, err = _call("fit", "counts.csv", "--target", "count", "--task", "classification", "--set", "loss=poisson",
                         *SMALL, cwd=tmp_path)  # fmt: skip
    assert code == 1 and "SparseTabNetClassifier has no parameter 'loss'" in err
