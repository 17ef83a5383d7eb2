"""Ensembles of TabNets (n_ensemble, sparsetab._ensemble) through the estimators.

Member 0 is the model n_ensemble=1 gives; the ensemble's probabilities, values, masks and
importances are the members' means, computed here from the members directly; the members train,
continue and round-trip (pickle, model file, exported programs) together.
"""

import json
import pickle
import warnings
from contextlib import nullcontext

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV
from sklearn.utils._param_validation import InvalidParameterError

from sparsetab import SparseTabNetClassifier, SparseTabNetPretrainer, SparseTabNetRegressor, load_model
from sparsetab._ensemble import member_seeds
from sparsetab.network import TabNet, TabNetEnsemble

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def _regression_data(n_rows=160, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, 4))
    return X, 3 * X[:, 0] - X[:, 1] + rng.normal(scale=0.1, size=n_rows)


def _member_outputs(model, X):
    """Each member's head output for X, computed from the members themselves: (n_members, n_samples, width)."""
    encoded = model._encode_X(X)
    members = model.network_.members if isinstance(model.network_, TabNetEnsemble) else [model.network_]
    outputs = []
    with torch.no_grad():
        for member in members:
            member.eval()
            outputs.append(member(encoded)[0].double())
    return torch.stack(outputs)


def _targets(kind, n_rows=160, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, 3))
    if kind == "binary":
        return X, np.where(X[:, 0] > 0, "yes", "no")
    if kind == "multiclass":
        return X, np.digitize(X[:, 0], [-0.5, 0.5])
    if kind == "multilabel":
        return X, np.column_stack([X[:, 0] > 0, X[:, 1] > 0.3]).astype(int)
    return X, np.column_stack([np.digitize(X[:, 0], [0.0]), np.digitize(X[:, 1], [-0.5, 0.5])])


# ----------------------------------------------------------------------------- the parameter
def test_n_ensemble_is_validated(fast_params):
    X, y = _regression_data()
    with pytest.raises(InvalidParameterError, match="'n_ensemble' parameter .* int in the range \\[1, inf\\)"):
        SparseTabNetRegressor(**fast_params, n_ensemble=0).fit(X, y)
    assert "n_ensemble" not in SparseTabNetPretrainer().get_params()


def test_member_seeds_are_deterministic_and_prefix_stable():
    assert member_seeds(7, 1) == [7]
    assert member_seeds(7, 3) == member_seeds(7, 5)[:3]
    assert len(set(member_seeds(7, 5))) == 5
    assert all(0 <= seed < np.iinfo(np.int32).max for seed in member_seeds(2**31 - 2, 4))


# ----------------------------------------------------------------------------- member 0 and the members
@pytest.mark.parametrize("early_stopping", [False, True])
def test_member_zero_is_the_single_model(fast_params, early_stopping):
    X, y = _targets("multiclass")
    params = dict(fast_params, max_epochs=3, early_stopping=early_stopping)
    single = SparseTabNetClassifier(**params).fit(X, y)
    ensemble = SparseTabNetClassifier(**params, n_ensemble=3).fit(X, y)
    assert type(single.network_) is TabNet and type(ensemble.network_) is TabNetEnsemble
    first = ensemble.network_.members[0].state_dict()
    for name, value in single.network_.state_dict().items():
        assert torch.equal(first[name], value), name
    np.testing.assert_array_equal(
        torch.softmax(_member_outputs(ensemble, X)[0], dim=1).numpy(), single.predict_proba(X)
    )
    # The estimator's own history attributes are member 0's, the ensemble_* ones every member's.
    assert ensemble.loss_curve_ == single.loss_curve_ and ensemble.n_iter_ == single.n_iter_
    assert ensemble.validation_scores_ == single.validation_scores_
    assert ensemble.best_iteration_ == single.best_iteration_
    assert ensemble.ensemble_n_iter_[0] == single.n_iter_ and len(ensemble.ensemble_n_iter_) == 3
    assert ensemble.ensemble_loss_curves_[0] == single.loss_curve_
    assert len(ensemble.ensemble_validation_scores_) == len(ensemble.ensemble_best_iteration_) == 3
    assert len(ensemble.ensemble_best_validation_scores_) == 3
    assert ensemble.ensemble_entmax_alphas_.shape == (3, fast_params["n_steps"])
    # The other members start from other seeds and so differ.
    second = ensemble.network_.members[1].state_dict()
    assert not all(torch.equal(second[name], value) for name, value in first.items())


def test_single_model_keeps_its_attributes(fast_params):
    X, y = _regression_data()
    model = SparseTabNetRegressor(early_stopping=False, **fast_params, max_epochs=2).fit(X, y)
    assert "_ensemble_members" not in vars(model)
    assert model.ensemble_n_iter_ == [model.n_iter_]
    assert model.ensemble_loss_curves_ == [model.loss_curve_]
    np.testing.assert_array_equal(model.ensemble_entmax_alphas_, model.entmax_alphas_[None])


def test_ensemble_attributes_need_a_fitted_model():
    with pytest.raises(AttributeError):
        SparseTabNetClassifier(n_ensemble=2).ensemble_n_iter_
    assert not hasattr(SparseTabNetRegressor(), "ensemble_loss_curves_")


def test_each_member_early_stops_on_its_own_score(fast_params):
    # With a scorer that calls predict, each member's validation scores are its own predictions', so they
    # differ between members; the scorer is called once per epoch of each member.
    X, y = _targets("binary", n_rows=240)
    calls = []

    def scorer(estimator, X_val, y_val):
        calls.append(type(estimator.network_).__name__)
        return float(np.mean(estimator.predict(X_val) == y_val))

    model = SparseTabNetClassifier(**fast_params, max_epochs=3, early_stopping=True, scoring=scorer, n_ensemble=2)
    model.fit(X, y)
    assert set(calls) == {"TabNet"} and len(calls) == sum(model.ensemble_n_iter_)
    loss_scored = SparseTabNetClassifier(**fast_params, max_epochs=3, early_stopping=True, n_ensemble=2).fit(X, y)
    first, second = loss_scored.ensemble_validation_scores_
    assert first != second  # -loss of each member, not of the ensemble


# ----------------------------------------------------------------------------- combined outputs
@pytest.mark.parametrize("kind", ["binary", "multiclass", "multilabel", "multiclass-multioutput"])
def test_probabilities_are_the_mean_of_the_members(fast_params, kind):
    X, y = _targets(kind)
    model = SparseTabNetClassifier(**fast_params, max_epochs=2, n_ensemble=3).fit(X, y)
    outputs = _member_outputs(model, X)
    proba = model.predict_proba(X)
    if kind == "multilabel":
        expected = torch.sigmoid(outputs).mean(dim=0).numpy()
        np.testing.assert_allclose(proba, expected, rtol=1e-10, atol=1e-12)
        np.testing.assert_array_equal(model.predict(X), (expected > 0.5).astype(int))
    elif kind == "multiclass-multioutput":
        widths = [len(classes) for classes in model.classes_]
        for k, block in enumerate(outputs.split(widths, dim=2)):
            expected = torch.softmax(block, dim=2).mean(dim=0).numpy()
            np.testing.assert_allclose(proba[k], expected, rtol=1e-10, atol=1e-12)
            np.testing.assert_array_equal(model.predict(X)[:, k], model.classes_[k][expected.argmax(axis=1)])
    else:
        expected = torch.softmax(outputs, dim=2).mean(dim=0).numpy()
        np.testing.assert_allclose(proba, expected, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
        np.testing.assert_array_equal(model.predict(X), model.classes_[expected.argmax(axis=1)])
    correct = model.predict(X) == y
    assert model.score(X, y) == pytest.approx(np.mean(correct.all(axis=1) if y.ndim == 2 else correct))


def test_regression_is_the_mean_of_the_members(fast_params):
    X, y = _regression_data()
    y2 = np.column_stack([y, -2 * y + 5])
    for targets in (y, y2):
        model = SparseTabNetRegressor(**fast_params, max_epochs=2, n_ensemble=3).fit(X, targets)
        values = _member_outputs(model, X).numpy() * model.target_scale_ + model.target_mean_
        expected = values.mean(axis=0)
        np.testing.assert_allclose(model.predict(X), expected.ravel() if targets.ndim == 1 else expected, rtol=1e-10)


def test_explain_is_the_mean_of_the_members(fast_params, make_people_frame):
    X, y = make_people_frame()
    model = SparseTabNetClassifier(early_stopping=False, **fast_params, max_epochs=2, n_ensemble=3).fit(X, y)
    explanation = model.explain(X, per_member=True)
    n_steps, n_features = fast_params["n_steps"], X.shape[1]
    assert explanation.member_step_masks.shape == (3, len(X), n_steps, n_features)
    assert explanation.member_importances.shape == (3, len(X), n_features)
    assert explanation.member_step_importance.shape == (3, len(X), n_steps)
    np.testing.assert_allclose(explanation.step_masks, explanation.member_step_masks.mean(axis=0), atol=1e-6)
    np.testing.assert_allclose(explanation.step_masks.sum(axis=2), 1.0, atol=1e-5)
    np.testing.assert_allclose(explanation.step_importance, explanation.member_step_importance.mean(axis=0), atol=1e-6)
    # Importances: the mean over the members whose row is not all zero, so rows still sum to 1.
    member_sums = explanation.member_importances.sum(axis=2)
    used = member_sums > 0
    expected = explanation.member_importances.sum(axis=0) / np.maximum(used.sum(axis=0), 1)[:, None]
    np.testing.assert_allclose(explanation.importances, expected, atol=1e-6)
    rows = explanation.importances.sum(axis=1)
    np.testing.assert_allclose(rows[used.any(axis=0)], 1.0, atol=1e-5)
    # Each member's arrays are those of the member alone.
    alone = SparseTabNetClassifier(early_stopping=False, **fast_params, max_epochs=2).fit(X, y).explain(X)
    np.testing.assert_array_equal(explanation.member_step_masks[0], alone.step_masks)
    np.testing.assert_array_equal(explanation.member_importances[0], alone.importances)
    assert "member_step_masks" not in model.explain(X.head(3))
    np.testing.assert_allclose(model.feature_importances_.sum(), 1.0)


def test_explain_per_member_of_a_single_model(fast_params):
    X, y = _regression_data()
    model = SparseTabNetRegressor(early_stopping=False, **fast_params, max_epochs=1).fit(X, y)
    explanation = model.explain(X, per_member=True)
    np.testing.assert_array_equal(explanation.member_step_masks[0], explanation.step_masks)
    assert explanation.member_step_masks.shape[0] == 1
    with pytest.raises(TypeError, match="per_member must be True or False, got 'yes'"):
        model.explain(X, per_member="yes")


def test_transform_inputs_does_not_depend_on_the_members(fast_params, make_people_frame):
    X, y = make_people_frame()
    single = SparseTabNetClassifier(**fast_params, max_epochs=1).fit(X, y)
    ensemble = SparseTabNetClassifier(**fast_params, max_epochs=1, n_ensemble=2).fit(X, y)
    for left, right in zip(single.transform_inputs(X), ensemble.transform_inputs(X)):
        np.testing.assert_array_equal(left, right)


# ----------------------------------------------------------------------------- continued training
def test_warm_start_refuses_a_changed_n_ensemble(fast_params):
    X, y = _regression_data()
    model = SparseTabNetRegressor(**fast_params, max_epochs=1, n_ensemble=2, warm_start=True).fit(X, y)
    model.set_params(n_ensemble=3)
    with pytest.raises(ValueError, match=r"built with n_ensemble=2; it is now n_ensemble=3"):
        model.fit(X, y)
    with pytest.raises(ValueError, match=r"built with n_ensemble=2; it is now n_ensemble=3"):
        model.partial_fit(X, y)


def test_warm_start_continues_every_member(fast_params):
    X, y = _targets("binary")
    model = SparseTabNetClassifier(
        early_stopping=False, **fast_params, max_epochs=2, n_ensemble=2, warm_start=True
    ).fit(X, y)
    before = [member.state_dict()["head.weight"].clone() for member in model.network_.members]
    model.fit(X, y)
    assert model.ensemble_n_iter_ == [4, 4]
    assert all(len(curve) == 4 for curve in model.ensemble_loss_curves_)
    for old, member in zip(before, model.network_.members):
        assert not torch.equal(old, member.state_dict()["head.weight"])


def test_partial_fit_continues_every_member(fast_params):
    # n partial_fit calls on the same data equal fit with max_epochs=n, no early stopping and no weight average
    # (partial_fit keeps the trained weights), for each member.
    X, y = _targets("binary")
    params = dict(fast_params, max_epochs=2, early_stopping=False, n_ensemble=3, weight_averaging_epochs=None)
    incremental = SparseTabNetClassifier(**params)
    for _ in range(2):
        incremental.partial_fit(X, y, classes=["no", "yes"])
    assert incremental.ensemble_n_iter_ == [2, 2, 2]
    fitted = SparseTabNetClassifier(**params).fit(X, y)
    for left, right in zip(incremental.network_.members, fitted.network_.members):
        for name, value in left.state_dict().items():
            torch.testing.assert_close(value, right.state_dict()[name], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(incremental.predict_proba(X), fitted.predict_proba(X), rtol=1e-5, atol=1e-6)


def test_pretrained_encoder_initialises_every_member(fast_params):
    X, y = _regression_data()
    pretrainer = SparseTabNetPretrainer(**fast_params, max_epochs=1).fit(X)
    # A vanishing learning rate: after one epoch each member's encoder weights are still the pretrained ones.
    model = SparseTabNetRegressor(
        **fast_params, max_epochs=1, n_ensemble=2, pretrained=pretrainer, learning_rate=1e-12
    ).fit(X, y)
    encoder = dict(pretrainer.network_.encoder.named_parameters())
    for member in model.network_.members:
        for name, value in member.named_parameters():
            if not name.startswith("head."):
                torch.testing.assert_close(value, encoder[name], rtol=0, atol=1e-6)


def test_an_interrupted_ensemble_keeps_the_members_trained(fast_params):
    X, y = _targets("binary", n_rows=240)
    calls = []

    def scorer(estimator, X_val, y_val):
        calls.append(1)
        if len(calls) == 3:  # the first epoch of member 1
            raise KeyboardInterrupt
        return 0.0

    model = SparseTabNetClassifier(**fast_params, max_epochs=2, early_stopping=True, scoring=scorer, n_ensemble=3)
    with pytest.warns(UserWarning, match="keeps the 1 member"):
        model.fit(X, y)
    assert type(model.network_) is TabNet and model.ensemble_n_iter_ == [2]
    assert model._architecture["n_ensemble"] == 1
    model.predict(X)


# ----------------------------------------------------------------------------- round trips and sklearn
def test_pickle_and_model_file_round_trips(fast_params, make_people_frame, tmp_path):
    X, y = make_people_frame()
    model = SparseTabNetClassifier(early_stopping=False, **fast_params, max_epochs=2, n_ensemble=2).fit(X, y)
    proba = model.predict_proba(X)
    masks = model.explain(X, per_member=True)
    for restored in (pickle.loads(pickle.dumps(model)), load_model(model.save_model(tmp_path / "model.sparsetab"))):
        assert type(restored.network_) is TabNetEnsemble and len(restored.network_) == 2
        np.testing.assert_array_equal(restored.predict_proba(X), proba)
        np.testing.assert_array_equal(restored.explain(X, per_member=True).member_step_masks, masks.member_step_masks)
        assert restored.ensemble_n_iter_ == model.ensemble_n_iter_
        np.testing.assert_array_equal(restored.feature_importances_, model.feature_importances_)
        # The restored model continues every member.
        restored.set_params(warm_start=True, max_epochs=1).fit(X, y)
        assert restored.ensemble_n_iter_ == [n + 1 for n in model.ensemble_n_iter_]


def test_an_old_model_without_the_parameter_loads_with_one_member(fast_params):
    X, y = _regression_data()
    model = SparseTabNetRegressor(**fast_params, max_epochs=1, warm_start=True).fit(X, y)
    state = model.__getstate__()
    del state["n_ensemble"]
    state["_architecture"] = {name: value for name, value in model._architecture.items() if name != "n_ensemble"}
    restored = SparseTabNetRegressor.__new__(SparseTabNetRegressor)
    restored.__setstate__(state)
    assert restored.n_ensemble == 1
    restored.fit(X, y)  # a warm start compares with the legacy value
    assert restored.n_iter_ == 2


@pytest.mark.filterwarnings("ignore:`torch.jit.load` is deprecated:DeprecationWarning")
@pytest.mark.parametrize("export_format", ["exported_program", "torchscript"])
@pytest.mark.parametrize("estimator", ["classifier", "regressor"])
def test_export_gives_the_ensemble_answers(fast_params, make_people_frame, tmp_path, export_format, estimator):
    X, y = make_people_frame(n_rows=120)
    if estimator == "classifier":
        model = SparseTabNetClassifier(early_stopping=False, **fast_params, max_epochs=1, n_ensemble=2).fit(X, y)
        expected = model.predict_proba(X)
    else:
        model = SparseTabNetRegressor(early_stopping=False, **fast_params, max_epochs=1, n_ensemble=2).fit(
            X, X["age"] / 10
        )
        expected = model.predict(X)[:, None]
    # TorchScript is deprecated (a FutureWarning) but still written for one release.
    deprecated = pytest.warns(FutureWarning, match="torchscript") if export_format == "torchscript" else nullcontext()
    with deprecated:
        path = model.export(
            tmp_path / ("model.pt2" if export_format == "exported_program" else "model.pt"), format=export_format
        )
    extra = {"sparsetab.json": ""}
    if export_format == "exported_program":
        program = torch.export.load(path, extra_files=extra).module()
    else:
        program = torch.jit.load(path, _extra_files=extra)
    numeric, codes = model.transform_inputs(X)
    prediction, masks = program(torch.from_numpy(numeric), torch.from_numpy(codes))
    np.testing.assert_allclose(prediction.numpy(), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(masks.numpy(), model.explain(X).step_masks, atol=1e-6)
    metadata = extra["sparsetab.json"]
    metadata = metadata.decode() if isinstance(metadata, bytes) else metadata
    assert "2 independently trained members" in json.loads(metadata)["outputs"]["ensemble"]


def test_clone_and_grid_search_over_n_ensemble(one_step_params):
    X, y = _targets("binary", n_rows=120)
    model = SparseTabNetClassifier(**one_step_params, max_epochs=1, n_ensemble=2)
    assert clone(model).get_params()["n_ensemble"] == 2
    search = GridSearchCV(model, {"n_ensemble": [1, 2]}, cv=2).fit(X, y)
    assert [params["n_ensemble"] for params in search.cv_results_["params"]] == [1, 2]
    assert search.best_estimator_.n_ensemble in (1, 2)


def test_an_ensemble_learns(fast_params, make_people_frame):
    # A bound several standard errors above chance, not a benchmark: on held-out rows the ensemble's
    # accuracy must exceed the majority rate by four standard errors of an accuracy at that rate.
    X, y = make_people_frame(n_rows=600, seed=1)
    X_train, X_test, y_train, y_test = X.iloc[:300], X.iloc[300:], y.iloc[:300], y.iloc[300:]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = SparseTabNetClassifier(**fast_params, max_epochs=15, n_ensemble=3).fit(X_train, y_train)
    majority = pd.Series(y_test).value_counts(normalize=True).max()
    standard_error = np.sqrt(majority * (1 - majority) / len(y_test))
    assert model.score(X_test, y_test) > majority + 4 * standard_error
