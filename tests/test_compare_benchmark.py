"""benchmarks.compare: the cache keys of its protocols, the user protocol's fit call and Table 3's columns.

Nothing here trains a model: the keys are built from the constructed estimators, the fit call is checked on a
stub, and the tables are rendered from made-up cell results.
"""

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("pytorch_tabnet")
pytest.importorskip("psutil")

# The benchmarks package is importable from the repository root (pytest's pythonpath in pyproject.toml).
from benchmarks import compare  # noqa: E402
from benchmarks._cache import CellCache  # noqa: E402
from benchmarks._cells import PROTOCOL, USER_PEER_PROTOCOL, USER_PROTOCOL, cell_key  # noqa: E402
from benchmarks._fitting import fit_once  # noqa: E402
from benchmarks._models import build  # noqa: E402


def _cells(argv):
    args = compare.parse_args(argv)
    return args, compare.planned_cells(compare.table_plan(args), args)


def test_validation_keys_are_those_of_cells_without_a_protocol():
    # Cells built before --protocol existed carry no "protocol": their keys (and cached files) must not change.
    _, cells = _cells(["--tables", "seeds", "--datasets", "adult", "--seeds", "0"])
    for cell in cells.values():
        key = cell_key(cell)
        assert key["protocol"] == PROTOCOL
        assert "auto_rules" not in key
        legacy = {name: value for name, value in cell.items() if name != "protocol"}
        assert cell_key(legacy) == key


def test_user_protocol_keys_differ_from_the_validation_keys():
    argv = ["--tables", "seeds", "--datasets", "adult", "--seeds", "0"]
    _, validation = _cells(argv)
    _, user = _cells([*argv, "--protocol", "user"])
    assert validation.keys() == user.keys()
    for index, cell in user.items():
        key = cell_key(cell)
        if cell["model"] == "sparsetab":
            assert key["protocol"] == USER_PROTOCOL
            assert isinstance(key["auto_rules"], str)
        else:
            assert key["protocol"] == USER_PEER_PROTOCOL
            assert "auto_rules" not in key
        assert CellCache("unused").path(key) != CellCache("unused").path(cell_key(validation[index]))


def test_a_cell_stored_under_another_configuration_name_with_the_same_parameters_is_its_twin(tmp_path):
    # weight_decay=0.01 is the default: the two configurations are the same fit under two names.
    argv = ["--tables", "screen", "--datasets", "adult", "--seeds", "0", "1", "--protocol", "user"]
    _, cells = _cells([*argv, "--variants", "defaults", "defaults+weight_decay=0.01", "defaults+weight_decay=0.0"])
    keys = [cell_key(cell) for cell in cells.values() if cell["model"] == "sparsetab"]
    by_name = {(key["config"], key["seed"]): key for key in keys}
    stored, twin = by_name[("defaults+weight_decay=0.01", 0)], by_name[("defaults", 0)]
    cache = CellCache(tmp_path)
    cache.put(stored, {"error_value": 0.125})
    assert cache.get(twin) is None
    record = cache.get_twin(twin)
    assert record["result"] == {"error_value": 0.125} and record["key"]["config"] == "defaults+weight_decay=0.01"
    assert cache.get_twin(by_name[("defaults", 1)]) is None  # another seed
    assert cache.get_twin(by_name[("defaults+weight_decay=0.0", 0)]) is None  # other parameters
    assert CellCache(tmp_path, refresh=True).get_twin(twin) is None


def test_user_protocol_has_no_tuned_table():
    with pytest.raises(SystemExit):
        compare.parse_args(["--tables", "tuned", "--protocol", "user"])


class _Stub:
    """Records the ``fit`` calls; predicts 1/2 for both classes."""

    def __init__(self):
        self.calls = []

    def fit(self, X, y, **kwargs):
        self.calls.append((X, y, kwargs))
        self.classes_ = np.unique(y)
        self.n_iter_ = 1
        return self

    def predict_proba(self, X):
        return np.full((len(X), 2), 0.5)


def _data():
    rng = np.random.default_rng(0)
    X_train = pd.DataFrame({"a": rng.normal(size=40), "b": rng.choice(["x", "y"], size=40)})
    y_train = (X_train["a"] > 0).to_numpy().astype(int)
    fit_index, val_index = np.arange(36), np.arange(36, 40)
    X_test = X_train.iloc[:10].reset_index(drop=True)
    return dict(
        task="classification",
        X_train=X_train,
        y_train=y_train,
        X_fit=X_train.iloc[fit_index],
        y_fit=y_train[fit_index],
        X_val=X_train.iloc[val_index],
        y_val=y_train[val_index],
        X_test=X_test,
        y_test=y_train[:10],
    )


def test_user_protocol_fits_sparsetab_on_all_training_rows_without_X_val():
    data = _data()
    stub = _Stub()
    result = fit_once(data, stub, "sparsetab", {}, "user")
    [(X, y, kwargs)] = stub.calls
    assert X is data["X_train"] and y is data["y_train"] and kwargs == {}
    assert result["train_rows"] == 40 and "train_metric1" in result

    stub = _Stub()
    result = fit_once(data, stub, "sparsetab", {})
    [(X, y, kwargs)] = stub.calls
    assert X is data["X_fit"] and set(kwargs) == {"X_val", "y_val"}
    assert "train_metric1" not in result


def _report(monkeypatch, protocol, errors):
    """Table 3 of adult and higgs_sample (seed 0) with the given mean errors ``{(data set, model, config): e}``."""
    monkeypatch.setattr(compare, "catboost", compare.catboost or object())  # CatBoost in the plan
    argv = ["--tables", "seeds", "--datasets", "adult", "higgs_sample", "--seeds", "0", "--protocol", protocol]
    args = compare.parse_args(argv)
    plan = compare.table_plan(args)
    report = compare.Report(args, plan)
    for name in ("adult", "higgs_sample"):
        for model, config in plan["seeds"][2]:
            error = errors.get((name, model, config), 0.3)
            result = dict(metric1=1 - error, metric2=1 - error, error_value=error, fit_s=1.0)
            if protocol == "user":
                result["train_error_value"] = error / 2
            report.results[name, model, config, 0] = result
    return report.seeds_table()


ERRORS = {
    ("adult", "HistGradientBoosting", "defaults"): 0.2,
    ("adult", "CatBoost", "defaults"): 0.1,
    ("adult", "sparsetab", "defaults"): 0.4,
    ("higgs_sample", "HistGradientBoosting", "defaults"): 0.2,
    ("higgs_sample", "CatBoost", "defaults"): 0.4,
    ("higgs_sample", "sparsetab", "defaults"): 0.1,
}


def _row(*cells):
    return "| " + " | ".join(cells) + " |"


def test_seeds_table_ratios_to_hgb_and_catboost_and_their_geometric_means(monkeypatch):
    lines = _report(monkeypatch, "validation", ERRORS)
    columns = ["data set", "model", "metric", "mean", "range", "error mean", "error / HGB", "error / CatBoost"]
    assert lines[2] == _row(*columns, "fit s mean", "seeds")
    adult = ["adult", "sparsetab (defaults)", "accuracy", "0.6000", "0.6000–0.6000", "0.4000", "2.000", "4.000"]
    assert _row(*adult, "1.0", "1/1") in lines
    # Ratios 2 and 0.5 to HGB, 4 and 0.25 to CatBoost: geometric means 1, worst 2 and 4.
    assert _row("sparsetab (defaults)", "1.000", "2.000", "2 of 2", "1.000", "4.000", "2 of 2") in lines


def test_seeds_table_shows_the_training_error_under_the_user_protocol(monkeypatch):
    lines = _report(monkeypatch, "user", ERRORS)
    columns = ["data set", "model", "metric", "mean", "range", "error mean", "train error mean", "error / HGB"]
    assert lines[2] == _row(*columns, "error / CatBoost", "fit s mean", "seeds")
    adult = ["adult", "sparsetab (defaults)", "accuracy", "0.6000", "0.6000–0.6000", "0.4000", "0.2000", "2.000"]
    assert _row(*adult, "4.000", "1.0", "1/1") in lines


def test_catboost_key_leaves_out_threads_and_the_data_derived_categorical_columns():
    pytest.importorskip("catboost")
    cell = dict(dataset="adult", model="CatBoost", config="defaults", seed=1, quick=False, max_epochs=100, threads=2)
    data = dict(X_train=pd.DataFrame({"a": [1.0, 2.0], "b": ["x", "y"], "c": [True, False]}))
    estimator, fit_params, key_params = build(cell, "classification", data)
    assert estimator.get_params()["cat_features"] == ["b", "c"]
    assert estimator.get_params()["thread_count"] == 2
    assert fit_params == {}
    assert key_params == build(dict(cell, threads=1), "classification")[2]
    assert key_params["params"] == {"allow_writing_files": False, "random_seed": 1, "verbose": 0}
