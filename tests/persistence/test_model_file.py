"""save_model / load_model: one safe, versioned file that round-trips the whole fitted estimator."""

import datetime
import decimal
import fractions
import json
import os
import pickle
import re
import warnings

import joblib
import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.exceptions import NotFittedError
from sklearn.metrics import make_scorer, mean_absolute_error

import sparsetab
from sparsetab import SparseTabNetClassifier, SparseTabNetRegressor, load_model
from sparsetab._persistence.model_file import FORMAT_VERSION

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


@pytest.fixture(scope="module")
def classifier(fast_params, make_classification_frame):
    X, y = make_classification_frame(missing_income_every=7)
    model = SparseTabNetClassifier(
        entmax_mode="adaptive",
        grouped_features=[["age", "income"]],
        cat_emb_dim={"city": 2},
        class_weight={"yes": 2.0, "no": 1.0},
        early_stopping=True,
        n_iter_no_change=2,
        max_epochs=3,
        **fast_params,
    )
    return model.fit(X, y)


def test_round_trip_keeps_everything_and_predicts_identically(classifier, tmp_path, make_classification_frame):
    path = classifier.save_model(tmp_path / "model.sparsetab")
    loaded = load_model(path)
    X, _ = make_classification_frame(50, seed=1, missing_income_every=7)
    assert type(loaded) is SparseTabNetClassifier
    assert loaded.get_params() == classifier.get_params()
    np.testing.assert_array_equal(loaded.predict_proba(X), classifier.predict_proba(X))
    np.testing.assert_array_equal(loaded.explain(X).step_masks, classifier.explain(X).step_masks)
    np.testing.assert_array_equal(loaded.classes_, classifier.classes_)
    assert loaded.classes_.dtype == classifier.classes_.dtype
    np.testing.assert_array_equal(loaded.feature_names_in_, classifier.feature_names_in_)
    np.testing.assert_array_equal(loaded.feature_importances_, classifier.feature_importances_)
    assert loaded.categories_.keys() == classifier.categories_.keys()
    for name in classifier.categories_:
        np.testing.assert_array_equal(loaded.categories_[name], classifier.categories_[name])
    assert loaded.loss_curve_ == classifier.loss_curve_
    np.testing.assert_array_equal(loaded.validation_scores_, classifier.validation_scores_)
    assert loaded.best_iteration_ == classifier.best_iteration_ and loaded.n_iter_ == classifier.n_iter_
    np.testing.assert_array_equal(loaded.entmax_alpha_history_, classifier.entmax_alpha_history_)


def test_loaded_model_continues_training_like_the_original(classifier, tmp_path, make_classification_frame):
    loaded = load_model(classifier.save_model(tmp_path / "model.sparsetab"))
    X, y = make_classification_frame(120, seed=2, missing_income_every=7)
    original = pickle_copy(classifier).set_params(early_stopping="auto")
    original.partial_fit(X, y)
    loaded.set_params(early_stopping="auto").partial_fit(X, y)  # Adam's moments and the shuffling stream were saved
    np.testing.assert_array_equal(loaded.predict_proba(X), original.predict_proba(X))


def pickle_copy(model):
    import pickle

    return pickle.loads(pickle.dumps(model))


@pytest.mark.parametrize("kind", ["multioutput_regression", "multilabel", "multiclass_multioutput", "numpy_int"])
def test_round_trip_of_other_targets_and_inputs(kind, tmp_path, fast_params):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 4))
    if kind == "multioutput_regression":
        model = SparseTabNetRegressor(max_epochs=3, **fast_params).fit(X, X[:, :2] @ [[1.0, 2.0], [0.5, -1.0]])
    elif kind == "multilabel":
        model = SparseTabNetClassifier(max_epochs=3, **fast_params).fit(X, (X[:, :3] > 0).astype(int))
    elif kind == "multiclass_multioutput":
        model = SparseTabNetClassifier(max_epochs=3, **fast_params).fit(
            X, np.column_stack([X[:, 0] > 0, np.where(X[:, 1] > 0, "a", "b")])
        )
    else:
        model = SparseTabNetClassifier(max_epochs=3, **fast_params).fit(X, (X[:, 0] > 0).astype(np.int64) + 3)
    loaded = load_model(model.save_model(tmp_path / "model.sparsetab"))
    method = "predict" if kind == "multioutput_regression" else "predict_proba"
    np.testing.assert_array_equal(getattr(loaded, method)(X), getattr(model, method)(X))
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


@pytest.mark.parametrize("n_ensemble", [1, 2])
def test_round_trip_of_a_model_with_step_gates(n_ensemble, tmp_path, fast_params):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 4))
    model = SparseTabNetClassifier(
        max_epochs=2, step_gates="sigmoid", n_ensemble=n_ensemble,
        lambda_gate=0.5, **fast_params,
    ).fit(X, X[:, 0] > 0)  # fmt: skip
    loaded = load_model(model.save_model(tmp_path / "gated.sparsetab"))
    assert loaded.get_params() == model.get_params()
    assert loaded._network_config["step_gates"] == "sigmoid"
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
    explanation, expected = loaded.explain(X), model.explain(X)
    np.testing.assert_array_equal(explanation.step_gates, expected.step_gates)
    np.testing.assert_array_equal(explanation.importances, expected.importances)


def test_file_holds_json_metadata_and_loads_without_pickle(classifier, tmp_path):
    path = classifier.save_model(tmp_path / "model.sparsetab")
    content = torch.load(path, weights_only=True)  # only tensors, strings, numbers, lists and dicts
    metadata = json.loads(content["metadata"])
    assert metadata["format_version"] == FORMAT_VERSION and metadata["estimator"] == "SparseTabNetClassifier"
    assert metadata["versions"]["sparsetab"] == sparsetab.__version__
    assert metadata["versions"]["torch"] == torch.__version__
    assert all(isinstance(tensor, torch.Tensor) for tensor in content["tensors"].values())


class _Payload:
    def __reduce__(self):
        return (os.makedirs, ("PAYLOAD_RAN",))


def test_a_pickle_payload_is_refused_and_not_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "evil.sparsetab"
    torch.save({"format": "sparsetab-model", "payload": _Payload()}, path)
    with pytest.raises(ValueError, match="not a sparsetab model file: it is a zip archive as torch.save writes"):
        load_model(path)
    assert not (tmp_path / "PAYLOAD_RAN").exists()


@pytest.mark.parametrize(
    "write, what",
    [
        (lambda model, path: path.write_bytes(pickle.dumps(model)), "a pickle"),
        (lambda model, path: joblib.dump(model, path), "a pickle"),
        (lambda model, path: joblib.dump(model, path, compress=3), "a zlib-compressed file"),
        (lambda model, path: joblib.dump(model, path, compress=("gzip", 3)), "a gzip-compressed file"),
        (lambda model, path: path.write_text("sepal_length,species\n5.1,setosa\n"), "a text file"),
        (lambda model, path: path.write_bytes(bytes(range(256)) * 4), "a binary file of another format"),
        (lambda model, path: path.write_bytes(b""), "an empty file"),
        # A zip archive too, which was called "truncated, or torch.save of other objects" (the ONNX and
        # TorchScript files are checked where their tests write them: test_onnx.py, test_export.py).
        (lambda model, path: model.export(path, format="exported_program"), "a serving program written by export"),
    ],
)
def test_files_of_other_kinds_are_named_and_torch_advice_is_not_repeated(classifier, tmp_path, write, what):
    # torch's message advised weights_only=False, which would run the file's code.
    path = tmp_path / "model.sparsetab"
    write(classifier, path)
    with pytest.raises(
        ValueError, match=f"'{re.escape(str(path))}' is not a sparsetab model file: it is {what}"
    ) as info:
        load_model(path)
    assert "weights_only" not in str(info.value)
    if what.startswith("a serving program"):
        assert "torch.export.load(path).module()" in str(info.value)
    if what.startswith("a pickle") or what.endswith("-compressed file"):
        assert "pickle.load or joblib.load" in str(info.value) and "source you trust" in str(info.value)


def test_saving_into_a_missing_folder_names_the_path_given(classifier, tmp_path):
    # The error named the temporary file next to it (.sparsetab-XXXX.tmp), a path the user never wrote.
    path = tmp_path / "no such folder" / "model.sparsetab"
    message = f"Cannot write '{re.escape(str(path))}': the folder '{re.escape(str(path.parent))}' does not exist"
    with pytest.raises(FileNotFoundError, match=message):
        classifier.save_model(path)
    assert not path.parent.exists()


def test_damaged_foreign_and_newer_files_give_clear_errors(classifier, tmp_path):
    path = classifier.save_model(tmp_path / "model.sparsetab")
    data = open(path, "rb").read()
    truncated = tmp_path / "truncated.sparsetab"
    truncated.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="not a sparsetab model file: it is a zip archive .* truncated"):
        load_model(truncated)
    garbage = tmp_path / "garbage.sparsetab"
    garbage.write_bytes(b"not a model at all")
    with pytest.raises(ValueError, match="not a sparsetab model file: it is a text file"):
        load_model(garbage)
    foreign = tmp_path / "foreign.pt"
    torch.save({"weights": torch.ones(3)}, foreign)
    with pytest.raises(ValueError, match="is not a sparsetab model file"):
        load_model(foreign)
    content = torch.load(path, weights_only=True)
    n_iter = f'"n_iter_": {classifier.n_iter_}'
    tampered = dict(content, metadata=content["metadata"].replace(n_iter, f'"n_iter_": {classifier.n_iter_ + 1}'))
    assert tampered["metadata"] != content["metadata"]
    torch.save(tampered, tmp_path / "tampered.sparsetab")
    with pytest.raises(ValueError, match="fails its integrity check"):
        load_model(tmp_path / "tampered.sparsetab")
    weights = dict(content["tensors"])
    name = next(iter(weights))
    weights[name] = weights[name] + 1
    torch.save(dict(content, tensors=weights), tmp_path / "weights.sparsetab")
    with pytest.raises(ValueError, match="fails its integrity check"):
        load_model(tmp_path / "weights.sparsetab")
    torch.save(dict(content, format_version=FORMAT_VERSION + 1), tmp_path / "newer.sparsetab")
    with pytest.raises(ValueError, match=f"format version {FORMAT_VERSION + 1}, newer than"):
        load_model(tmp_path / "newer.sparsetab")
    with pytest.raises(FileNotFoundError):
        load_model(tmp_path / "missing.sparsetab")


def test_write_is_atomic(classifier, tmp_path, monkeypatch):
    path = tmp_path / "model.sparsetab"
    path.write_bytes(b"previous")

    def failing_save(obj, f, *args, **kwargs):
        with open(f, "wb") as file:
            file.write(b"half")
        raise OSError("disk full")

    monkeypatch.setattr(torch, "save", failing_save)
    with pytest.raises(OSError, match="disk full"):
        classifier.save_model(path)
    assert path.read_bytes() == b"previous"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.sparsetab"]


def test_unsavable_parameters_and_unfitted_models_are_refused(tmp_path, fast_params):
    with pytest.raises(NotFittedError):
        SparseTabNetClassifier().save_model(tmp_path / "model.sparsetab")
    X = np.random.default_rng(0).normal(size=(80, 3))
    scorer = make_scorer(mean_absolute_error, greater_is_better=False)
    model = SparseTabNetRegressor(max_epochs=3, **fast_params, scoring=scorer).fit(X, X[:, 0])
    with pytest.raises(TypeError, match="parameter scoring holds"):
        model.save_model(tmp_path / "model.sparsetab")
    assert not (tmp_path / "model.sparsetab").exists()


def test_saving_keeps_the_replaced_files_permissions_and_follows_links(classifier, tmp_path):
    path = tmp_path / "model.sparsetab"
    path.write_bytes(b"old")
    os.chmod(path, 0o600)
    classifier.save_model(path)
    assert os.stat(path).st_mode & 0o777 == 0o600
    link = tmp_path / "link.sparsetab"
    link.symlink_to(path)
    classifier.save_model(link)
    assert link.is_symlink() and load_model(link).n_iter_ == classifier.n_iter_


@pytest.mark.parametrize("version", [0, True, "1"])
def test_invalid_format_versions_are_refused(classifier, tmp_path, version):
    content = torch.load(classifier.save_model(tmp_path / "model.sparsetab"), weights_only=True)
    torch.save(dict(content, format_version=version), tmp_path / "edited.sparsetab")
    with pytest.raises(ValueError, match="invalid model-file format version"):
        load_model(tmp_path / "edited.sparsetab")


@pytest.mark.parametrize("transform", ["standard", "quantile"])
def test_round_trip_keeps_the_numerical_transform_and_the_clipping(transform, tmp_path, fast_params):
    rng = np.random.default_rng(0)
    X = rng.lognormal(size=(150, 3))
    X[::5, 2] = np.nan
    model = SparseTabNetRegressor(numerical_transform=transform, max_epochs=2, **fast_params).fit(X, X[:, 0])
    loaded = load_model(model.save_model(tmp_path / "model.sparsetab"))
    assert loaded.numerical_transform == transform and loaded._tabular_encoding.clip_
    far = X[:10] * np.array([1.0, 1e3, -1e3])
    np.testing.assert_array_equal(loaded.predict(far), model.predict(far))
    np.testing.assert_array_equal(loaded.predict(far), model.predict(np.clip(far, np.nanmin(X, 0), np.nanmax(X, 0))))


@pytest.mark.parametrize(
    "values",
    [
        ["a", "b"],
        [True, False],
        [1, 2],
        [0.5, 1.5],
        [np.int64(1), np.float64(2.5)],
        [np.True_, np.False_],
        [decimal.Decimal("1.5"), decimal.Decimal("-0.25")],
        [pd.Timestamp("2020-01-01 12:00:00.000000001"), pd.Timestamp("2021-06-30", tz="Europe/Paris")],
        [datetime.datetime(2020, 1, 1, 8, 30, 1, 5), datetime.datetime(2021, 1, 1)],
        [datetime.date(2020, 2, 29), datetime.date(1999, 12, 31)],
        [pd.Timedelta("1 days 00:00:00.000000007"), pd.Timedelta("-2h")],
        [datetime.timedelta(days=1, microseconds=3), datetime.timedelta(seconds=-5)],
        [pd.Period("2020-01", freq="M"), pd.Period("2020Q3", freq="Q")],
    ],
    ids=[
        "str",
        "bool",
        "int",
        "float",
        "numpy numbers",
        "numpy bool",
        "Decimal",
        "Timestamp",
        "datetime",
        "date",
        "Timedelta",
        "timedelta",
        "Period",
    ],
)
def test_categories_of_every_storable_type_round_trip(values, tmp_path):
    # Decimal categories made save_model fail with a TypeError naming a fitted attribute, not the column.
    rng = np.random.default_rng(0)
    X = pd.DataFrame(
        {"a": rng.normal(size=120), "c": pd.Series([values[i] for i in rng.integers(0, 2, 120)], dtype=object)}
    )
    y = (X["a"] > 0).astype(int)
    model = SparseTabNetClassifier(n_d=4, n_a=4, max_epochs=1, categorical_features=["c"], random_state=0).fit(X, y)
    restored = load_model(model.save_model(tmp_path / "model.sparsetab"))
    original_categories = model._tabular_encoding.categories_
    restored_categories = restored._tabular_encoding.categories_
    assert restored_categories.keys() == original_categories.keys()
    for position, categories in original_categories.items():
        assert [(type(c), c) for c in restored_categories[position]] == [(type(c), c) for c in categories]
        assert [str(c) for c in restored_categories[position]] == [str(c) for c in categories]  # zones, freq
    np.testing.assert_array_equal(restored.predict_proba(X), model.predict_proba(X))


def test_a_category_type_a_model_file_cannot_store_is_a_value_error_naming_the_column(tmp_path):
    X = pd.DataFrame(
        {"a": np.arange(60.0), "ratio": pd.Series([fractions.Fraction(1, 3), fractions.Fraction(1, 2)] * 30)}
    )
    y = np.arange(60) % 2
    model = SparseTabNetClassifier(n_d=4, n_a=4, max_epochs=1, categorical_features=["ratio"], random_state=0).fit(X, y)
    with pytest.raises(ValueError, match=r"Column 'ratio' has the category Fraction\(1, 3\) of type Fraction"):
        model.save_model(tmp_path / "model.sparsetab")
    assert not (tmp_path / "model.sparsetab").exists()
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(model)).predict(X), model.predict(X))  # pickle works


def _gated_model(fast_params):
    X = np.random.default_rng(1).normal(size=(100, 3))
    model = SparseTabNetClassifier(max_epochs=1, step_gates="sigmoid", **fast_params).fit(X, X[:, 0] > 0)
    return model, X


def _save_as_while_the_variants_existed(model, path, monkeypatch, **removed):
    # sparsetab wrote the variants' parameters among the estimator's parameters, in the network configuration
    # and in the architecture a continued fit compares against; a step_gates among them replaces the fitted one in both.
    get_params = type(model).get_params
    with monkeypatch.context() as patch:
        patch.setattr(type(model), "get_params", lambda self, deep=True: {**get_params(self, deep), **removed})
        model._network_config = {**model._network_config, **removed}
        model._architecture = {**model._architecture, **removed}
        return model.save_model(path)


def test_a_file_with_the_kept_gate_variants_parameters_loads_silently(fast_params, tmp_path, monkeypatch):
    model, X = _gated_model(fast_params)
    expected = model.get_params()
    path = _save_as_while_the_variants_existed(
        model, tmp_path / "m.sparsetab", monkeypatch, gate_first_step=True, gate_penalty="share_entropy"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loaded = load_model(path)
    assert loaded.get_params() == expected
    for copy in (loaded._network_config, loaded._architecture):
        assert "gate_penalty" not in copy and "gate_first_step" not in copy
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))


def test_a_file_trained_with_a_removed_gate_penalty_predicts_as_saved_and_warns_once(
    fast_params, tmp_path, monkeypatch
):
    model, X = _gated_model(fast_params)
    path = _save_as_while_the_variants_existed(
        model, tmp_path / "m.sparsetab", monkeypatch, gate_first_step=True, gate_penalty="contribution"
    )
    with pytest.warns(UserWarning, match=r"gate_penalty='contribution', which was removed.*share-entropy") as record:
        loaded = load_model(path)
    assert len([w for w in record if "gate_penalty" in str(w.message)]) == 1
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
    # A continued fit does not warn again: the architecture it compares against no longer names the penalty.
    with warnings.catch_warnings(record=True) as continued:
        warnings.simplefilter("always")
        loaded.set_params(warm_start=True, max_epochs=1).fit(X, X[:, 0] > 0)
    assert not [w for w in continued if "gate_penalty" in str(w.message)]


@pytest.mark.parametrize(
    "removed, message",
    [
        ({"gate_first_step": False}, r"step_gates='sigmoid' and gate_first_step=False, a step-gate variant"),
        ({"step_gates": "sparsemax"}, r"step_gates='sparsemax' and gate_first_step=True, a step-gate variant"),
    ],
)
def test_a_file_of_a_removed_gate_variant_is_refused_with_the_reason(
    fast_params, tmp_path, monkeypatch, removed, message
):
    model, _ = _gated_model(fast_params)
    path = _save_as_while_the_variants_existed(model, tmp_path / "m.sparsetab", monkeypatch, **removed)
    with pytest.raises(ValueError, match=message + r".*Refit the model"):
        load_model(path)


def test_an_ungated_file_with_the_removed_parameters_loads_whatever_their_values(fast_params, tmp_path, monkeypatch):
    X = np.random.default_rng(2).normal(size=(80, 3))
    model = SparseTabNetClassifier(max_epochs=1, **fast_params).fit(X, X[:, 1] > 0)
    path = _save_as_while_the_variants_existed(
        model, tmp_path / "m.sparsetab", monkeypatch, gate_first_step=False, gate_penalty="l1"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loaded = load_model(path)
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_a_pickle_with_the_removed_parameters_unpickles_without_them(fast_params):
    model, X = _gated_model(fast_params)
    model.gate_first_step, model.gate_penalty = True, "share_entropy"
    model._architecture = {**model._architecture, "gate_first_step": True, "gate_penalty": "share_entropy"}
    restored = pickle.loads(pickle.dumps(model))
    assert not hasattr(restored, "gate_first_step") and not hasattr(restored, "gate_penalty")
    assert "gate_penalty" not in restored._architecture
    np.testing.assert_array_equal(restored.predict(X), model.predict(X))
    model.gate_first_step = False
    with pytest.raises(ValueError, match="gate_first_step=False, a step-gate variant"):
        pickle.loads(pickle.dumps(model))
