"""Inference on a fitted estimator (sparsetab._inference): finite outputs, explain() (its contract, groups, step
gates, members) and the batched forward passes of explain and predict.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning

from sparsetab import SparseTabNetClassifier, SparseTabNetRegressor
from sparsetab._inference import check_finite, encoded_batches
from sparsetab.network import ensemble_members


def testcheck_finite_names_the_rows_of_every_output_along_its_row_dimension():
    decision = torch.zeros(6, 4)
    masks = torch.full((3, 6, 5), 0.2)  # (n_steps, rows, groups): rows on dimension 1
    assert check_finite(100, (decision, 0), (masks, 1)) is None
    masks[2, 3, 4] = float("nan")
    decision[5, 0] = float("inf")
    with pytest.raises(ValueError, match=r"for 2 row\(s\) of a batch, first at row 103;"):
        check_finite(100, (decision, 0), (masks, 1))
    masks[2, 3, 4] = 0.2
    with pytest.raises(ValueError, match=r"for 1 row\(s\) of a batch, first at row 105;"):
        check_finite(100, (decision, 0), (masks, 1))


@pytest.fixture(scope="module")
def one_hot_model():
    """A tiny regressor on one-hot columns of a colour and two numeric columns, for explain(groups=...)."""
    rng = np.random.default_rng(0)
    colour = rng.choice(["red", "blue", "green"], size=120)
    X = pd.DataFrame(
        {
            "size": rng.normal(size=120),
            "colour_red": (colour == "red").astype(float),
            "weight": rng.normal(size=120),
            "colour_blue": (colour == "blue").astype(float),
            "colour_green": (colour == "green").astype(float),
        }
    )
    y = X["size"] + 2 * X["colour_red"]
    params = dict(n_d=4, n_a=4, n_steps=2, batch_size=64, virtual_batch_size=32, max_epochs=2, random_state=0)
    params.update(early_stopping=False)  # one network, whose masks the tests read
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return SparseTabNetRegressor(**params).fit(X, y), X


def test_explain_sums_each_group_in_the_order_of_its_first_column(one_hot_model):
    model, X = one_hot_model
    before = X.copy()
    plain = model.explain(X.iloc[:7], per_member=True)
    groups = {"colour": ["colour_blue", "colour_green", "colour_red"], "mass": [2]}
    grouped = model.explain(X.iloc[:7], per_member=True, groups=groups)
    assert list(grouped.feature_names) == ["size", "colour", "mass"]
    colour, other = [1, 3, 4], [0, 2]
    expected_masks = np.stack(
        [plain.step_masks[..., 0], plain.step_masks[..., colour].sum(-1), plain.step_masks[..., 2]], axis=-1
    )
    assert grouped.step_masks.dtype == np.float32 and grouped.step_masks.shape == (7, 2, 3)
    np.testing.assert_allclose(grouped.step_masks, expected_masks, rtol=1e-6)
    np.testing.assert_allclose(grouped.step_masks.sum(-1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(grouped.importances[:, 1], plain.importances[:, colour].sum(-1), rtol=1e-6)
    np.testing.assert_allclose(grouped.importances[:, [0, 2]], plain.importances[:, other], rtol=1e-6)
    np.testing.assert_allclose(grouped.importances.sum(-1), 1.0, rtol=1e-5)
    np.testing.assert_array_equal(grouped.step_importance, plain.step_importance)
    np.testing.assert_allclose(grouped.member_step_masks[0], grouped.step_masks)
    np.testing.assert_allclose(grouped.member_importances[0], grouped.importances)
    pd.testing.assert_frame_equal(X, before)


def test_explain_groups_by_position_on_arrays(one_hot_model):
    model, X = one_hot_model
    array_model = SparseTabNetRegressor(n_d=4, n_a=4, n_steps=2, max_epochs=1, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        array_model.fit(X.to_numpy(), X["size"].to_numpy())
    grouped = array_model.explain(X.to_numpy()[:3], groups={"colour": [1, "x3", 4]})
    assert list(grouped.feature_names) == ["x0", "colour", "x2"]


@pytest.mark.parametrize(
    "groups, error, match",
    [
        ({"colour": ["colour_pink"]}, ValueError, r"groups\['colour'\] names column 'colour_pink'"),
        ({"colour": [9]}, ValueError, r"groups\['colour'\] holds position 9, outside 0\.\.4"),
        ({"a": ["size"], "b": [0]}, ValueError, r"groups\['b'\] lists column 'size' \(position 0\), which is also"),
        ({"colour": []}, ValueError, r"groups\['colour'\] is empty"),
        ([["size"]], TypeError, "groups must be a dict"),
    ],
)
def test_explain_rejects_bad_groups(one_hot_model, groups, error, match):
    model, X = one_hot_model
    with pytest.raises(error, match=match):
        model.explain(X.iloc[:2], groups=groups)


def _gated_regressor(fast_params, **params):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(160, 4))
    y = X[:, 0] - 2 * X[:, 1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return SparseTabNetRegressor(**dict(fast_params, max_epochs=2, n_steps=3, early_stopping=False, **params)).fit(
            X, y
        ), X


def _close_every_gate(model):
    # Zero weights and a score of -1000: sigmoid underflows to exactly 0 in float32 on every row, as it does for
    # a gate trained far shut.
    for member in ensemble_members(model.network_):
        with torch.no_grad():
            member.gates.scores.weight.zero_()
            member.gates.scores.bias.fill_(-1000.0)


def test_explain_has_no_step_gates_without_them(one_hot_model):
    model, X = one_hot_model
    explanation = one_hot_model[0].explain(X.head(3), per_member=True)
    assert explanation.step_gates is None and explanation.member_step_gates is None


def test_explain_returns_the_step_gates_and_the_gated_step_importance(fast_params):
    model, X = _gated_regressor(fast_params, step_gates="sigmoid")
    explanation = model.explain(X[:20])
    gates = explanation.step_gates
    assert gates.shape == (20, 3) and gates.dtype == np.float32
    assert ((gates > 0) & (gates < 1)).all()
    # Without its gates (the same weights otherwise), the network gives the ungated eta.
    network = model.network_.eval()
    batch = next(encoded_batches(model._tabular_encoding, model._validate_X(X[:20], reset=False), model._device))
    with torch.no_grad():
        gate_module, network.gates = network.gates, None
        eta = network.encode_steps(batch).step_importance.numpy()
        network.gates = gate_module
    np.testing.assert_allclose(explanation.step_importance, eta * gates, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(explanation.importances.sum(axis=1), 1.0, rtol=1e-5)


def test_rows_whose_every_gate_is_closed_weigh_their_step_masks_equally(fast_params):
    model, X = _gated_regressor(fast_params, step_gates="sigmoid")
    _close_every_gate(model)
    explanation = model.explain(X[:30])
    np.testing.assert_array_equal(explanation.step_gates, 0.0)
    np.testing.assert_array_equal(explanation.step_importance, 0.0)
    # The documented rule: the mean of the row's step masks, so every row still sums to 1.
    np.testing.assert_allclose(explanation.importances, explanation.step_masks.mean(axis=1), rtol=1e-6)
    np.testing.assert_allclose(explanation.importances.sum(axis=1), 1.0, rtol=1e-5)
    # The decision output is 0: every row gets the head's bias.
    np.testing.assert_allclose(model.predict(X[:30]), model.predict(X[:1])[0])


def test_an_ensemble_averages_its_members_step_gates(fast_params):
    model, X = _gated_regressor(fast_params, step_gates="sigmoid", n_ensemble=2)
    explanation = model.explain(X[:10], per_member=True)
    assert explanation.member_step_gates.shape == (2, 10, 3)
    np.testing.assert_allclose(explanation.step_gates, explanation.member_step_gates.mean(axis=0), rtol=1e-6)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_explain_contract(fast_params, make_people_frame):
    X, y = make_people_frame(300)
    model = SparseTabNetClassifier(early_stopping=False, max_epochs=20, **fast_params).fit(X, y)
    explanation = model.explain(X.iloc[:25])
    assert explanation.step_masks.shape == (25, 2, 4)
    np.testing.assert_allclose(explanation.step_masks.sum(axis=2), 1.0, atol=1e-5)
    assert explanation.importances.shape == (25, 4)
    sums = explanation.importances.sum(axis=1)
    assert np.all(np.isclose(sums, 1.0, atol=1e-5) | (sums == 0))
    assert not np.isnan(explanation.importances).any()
    assert explanation.step_importance.shape == (25, 2)
    assert (explanation.step_importance >= 0).all()
    assert explanation.feature_names.tolist() == ["city", "age", "noise", "member"]
    # M_agg recomputed by hand from the two other outputs.
    eta = explanation.step_importance
    used = eta.sum(axis=1) > 0
    expected = np.einsum("ns,nsf->nf", eta[used], explanation.step_masks[used]) / eta[used].sum(axis=1, keepdims=True)
    np.testing.assert_allclose(explanation.importances[used], expected, rtol=1e-5)
    np.testing.assert_array_equal(explanation.importances[~used], 0.0)
    assert model.feature_importances_.shape == (4,)
    assert model.feature_importances_.sum() == pytest.approx(1.0)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_explain_rows_with_zero_decision_get_zeros(monkeypatch, fast_params, make_people_frame):
    X, y = make_people_frame(100)
    model = SparseTabNetClassifier(early_stopping=False, max_epochs=2, **fast_params).fit(X, y)
    for transformer in model.network_.step_transformers:  # make every step's ReLU(d) = 0
        original = transformer.forward
        monkeypatch.setattr(transformer, "forward", lambda x, original=original: -original(x).abs())
    explanation = model.explain(X.iloc[:5])
    np.testing.assert_array_equal(explanation.importances, 0.0)
    np.testing.assert_array_equal(explanation.step_importance, 0.0)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_numpy_input_has_generic_feature_names(fast_params):
    X, y = make_classification(120, 5, random_state=0)
    model = SparseTabNetClassifier(max_epochs=3, **fast_params).fit(X, y)
    assert not hasattr(model, "feature_names_in_")
    assert model.explain(X[:3]).feature_names.tolist() == ["x0", "x1", "x2", "x3", "x4"]


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_explain_and_predict_are_batched_with_identical_results(monkeypatch, fast_params, make_people_frame):
    import sparsetab._inference

    X, y = make_people_frame(150)
    model = SparseTabNetClassifier(
        early_stopping=False, max_epochs=2, cat_emb_dim=2, grouped_features=[["age", "noise"]], **fast_params
    ).fit(X, y)
    whole = model.explain(X)
    proba = model.predict_proba(X)
    calls = []
    original = model.network_.encode_steps  # what explain runs on each batch
    monkeypatch.setattr(sparsetab._inference, "INFERENCE_BATCH_ROWS", 40)
    monkeypatch.setattr(model.network_, "encode_steps", lambda x, *rest: calls.append(len(x)) or original(x, *rest))
    batched = model.explain(X)
    assert calls == [40, 40, 40, 30]
    for key in ("step_masks", "importances", "step_importance"):
        np.testing.assert_allclose(batched[key], whole[key], rtol=1e-5, atol=1e-6)  # float32 order, as below
    np.testing.assert_allclose(model.predict_proba(X), proba, atol=1e-6)  # float32 matmul order differs by batch
