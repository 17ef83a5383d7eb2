"""Efficient members (n_efficient_members) through the estimators.

The predictions are the members' means and the masks each member's, computed here from the network
directly; the members train, continue, round-trip (pickle, model file, exported programs) and start
from a pretrained encoder together, in memory, streamed and across processes.
"""

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import InvalidParameterError

from sparsetab import SparseTabNetClassifier, SparseTabNetPretrainer, SparseTabNetRegressor, load_model, streaming
from sparsetab._params import resolve_efficient_members
from sparsetab.network import ensemble_members

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def _member_outputs(model, X):
    """Each efficient member's head output for X, from the network itself: (n_members, n_samples, width)."""
    network = model.network_.eval()
    with torch.no_grad():
        return network.split_members(network(model._encode_X(X))[0]).double()


def _regression_data(n_rows=160, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, 4))
    return X, 3 * X[:, 0] - X[:, 1] + rng.normal(scale=0.1, size=n_rows)


def test_n_efficient_members_is_validated(fast_params):
    X, y = _regression_data()
    with pytest.raises(InvalidParameterError, match="n_efficient_members"):
        SparseTabNetRegressor(**fast_params, n_efficient_members=0).fit(X, y)
    assert "n_efficient_members" not in SparseTabNetPretrainer().get_params()


@pytest.mark.parametrize(
    ("n_samples", "expected"),
    [(2, 1), (999, 1), (1000, 2), (5000, 2), (10001, 2), (16000, 2), (20000, 2), (20001, 1), (32561, 1), (10**6, 1)],
)
def test_auto_gives_two_members_on_one_to_twenty_thousand_rows(n_samples, expected):
    assert resolve_efficient_members("auto", n_samples) == expected
    assert resolve_efficient_members(3, n_samples) == 3 and resolve_efficient_members(np.int64(1), n_samples) == 1


@pytest.mark.parametrize(("n_rows", "expected"), [(400, 1), (1000, 2)])
def test_the_default_resolves_on_the_rows_given_and_a_continued_fit_keeps_it(fast_params, n_rows, expected):
    X, y = _regression_data(n_rows)
    model = SparseTabNetRegressor(**dict(fast_params, max_epochs=2), warm_start=True)
    assert model.n_efficient_members == "auto" and not hasattr(model, "n_efficient_members_")
    model.fit(X, y)
    # The refit of early_stopping="auto" on 1,000 rows adds the first pass's network: both have the members.
    networks = ensemble_members(model.network_)
    assert model.n_efficient_members_ == expected
    assert [network.n_efficient_members for network in networks] == [expected] * len(networks)
    model.fit(X[:300], y[:300])  # fewer rows, "auto" unchanged: the network and its members stay
    assert model.n_efficient_members_ == expected


def test_probabilities_are_the_mean_of_the_members_probabilities(fast_params, make_people_frame):
    X, y = make_people_frame(n_rows=200, seed=0)
    model = SparseTabNetClassifier(early_stopping=False, **fast_params, max_epochs=2, n_efficient_members=3).fit(X, y)
    outputs = _member_outputs(model, X)
    assert outputs.shape == (3, 200, len(model.classes_))
    expected = torch.softmax(outputs, dim=-1).mean(dim=0).numpy()
    np.testing.assert_allclose(model.predict_proba(X), expected, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(model.predict(X), model.classes_[expected.argmax(axis=1)])
    # The members differ: their own adapters and heads.
    assert not torch.allclose(outputs[0], outputs[1])


def test_regression_is_the_mean_of_the_members_values(fast_params):
    X, y = _regression_data()
    model = SparseTabNetRegressor(early_stopping=False, **fast_params, max_epochs=2, n_efficient_members=2).fit(X, y)
    standardised = _member_outputs(model, X)[..., 0].mean(dim=0).numpy()
    np.testing.assert_allclose(model.predict(X), standardised * model.target_scale_ + model.target_mean_, rtol=1e-5)


def test_explain_is_the_mean_of_the_members_masks(fast_params, make_people_frame):
    X, y = make_people_frame(n_rows=120, seed=2)
    model = SparseTabNetClassifier(early_stopping=False, **fast_params, max_epochs=2, n_efficient_members=3).fit(X, y)
    explanation = model.explain(X, per_member=True)
    member_masks = explanation["member_step_masks"]
    assert member_masks.shape == (3, 120, model.n_steps, X.shape[1])
    np.testing.assert_allclose(explanation["step_masks"], member_masks.mean(axis=0), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(member_masks.sum(axis=-1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(explanation["importances"].sum(axis=1), 1.0, rtol=1e-5)
    # Member 1's masks, from the network directly.
    network = model.network_
    with torch.no_grad():
        masks = network.encode(model._encode_X(X))[1]
    own = (masks @ network.embedding.explanation_matrix).reshape(model.n_steps, 3, 120, -1)[:, 1].permute(1, 0, 2)
    np.testing.assert_allclose(member_masks[1], own.numpy(), rtol=1e-6, atol=1e-7)


def test_with_n_ensemble_every_network_brings_its_members(fast_params):
    X, y = _regression_data()
    model = SparseTabNetRegressor(
        early_stopping=False, **fast_params, max_epochs=1, n_ensemble=2, n_efficient_members=2
    ).fit(X, y)
    assert len(model.network_) == 2
    assert model.explain(X[:5], per_member=True)["member_step_masks"].shape[0] == 4
    with torch.no_grad():
        encoded = model._encode_X(X)
        values = torch.cat([m.split_members(m.eval()(encoded)[0]) for m in model.network_.members]).double()
    expected = values[..., 0].mean(dim=0).numpy() * model.target_scale_ + model.target_mean_
    np.testing.assert_allclose(model.predict(X), expected, rtol=1e-5)


def test_model_file_pickle_and_export_give_the_same_answers(fast_params, make_people_frame, tmp_path):
    X, y = make_people_frame(n_rows=150, seed=3)
    model = SparseTabNetClassifier(early_stopping=False, **fast_params, max_epochs=2, n_efficient_members=2).fit(X, y)
    expected = model.predict_proba(X)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(model)).predict_proba(X), expected)
    model.save_model(tmp_path / "model.sparsetab")
    loaded = load_model(tmp_path / "model.sparsetab")
    np.testing.assert_array_equal(loaded.predict_proba(X), expected)
    assert loaded.network_.n_efficient_members == 2
    program = torch.export.load(model.export(tmp_path / "model.pt2"))
    numeric, codes = model.transform_inputs(X)
    probabilities, step_masks = program.module()(torch.as_tensor(numeric), torch.as_tensor(codes))
    np.testing.assert_allclose(probabilities.numpy(), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(step_masks.numpy(), model.explain(X)["step_masks"], rtol=1e-5, atol=1e-6)


def test_warm_start_and_partial_fit_continue_and_a_change_is_refused(fast_params):
    X, y = _regression_data()
    model = SparseTabNetRegressor(
        early_stopping=False,
        **fast_params,
        max_epochs=2,
        n_efficient_members=2,
        warm_start=True,
        learning_rate_schedule="constant",
    ).fit(X, y)
    adapters = model.network_.member_adapters.detach().clone()
    model.fit(X, y)
    assert model.n_iter_ == 4 and not torch.equal(model.network_.member_adapters, adapters)
    model.partial_fit(X, y)
    assert model.n_iter_ == 5
    model.set_params(n_efficient_members=3)
    with pytest.raises(ValueError, match="n_efficient_members=2; it is now n_efficient_members=3"):
        model.fit(X, y)


def test_an_old_model_without_the_parameter_loads_with_one_member(fast_params):
    X, y = _regression_data()
    model = SparseTabNetRegressor(**fast_params, max_epochs=1, warm_start=True).fit(X, y)
    state = model.__getstate__()
    del state["n_efficient_members"]
    state["_architecture"] = {k: v for k, v in model._architecture.items() if k != "n_efficient_members"}
    restored = SparseTabNetRegressor.__new__(SparseTabNetRegressor)
    restored.__setstate__(pickle.loads(pickle.dumps(state)))
    assert restored.n_efficient_members == 1 and restored.n_efficient_members_ == 1
    np.testing.assert_array_equal(restored.predict(X), model.predict(X))
    restored.fit(X, y)  # a warm start compares with the legacy value
    assert restored.n_iter_ == 2


def test_pretrained_encoder_initialises_the_shared_weights(fast_params):
    X, y = _regression_data()
    pretrainer = SparseTabNetPretrainer(**fast_params, max_epochs=1).fit(X)
    # A vanishing learning rate: after one epoch the shared weights are still the pretrained ones.
    model = SparseTabNetRegressor(
        early_stopping=False,
        **fast_params,
        max_epochs=1,
        n_efficient_members=3,
        pretrained=pretrainer,
        learning_rate=1e-12,
    ).fit(X, y)
    encoder = dict(pretrainer.network_.encoder.named_parameters())
    shared = [(name, value) for name, value in model.network_.named_parameters() if not name.startswith("head.")]
    assert {name for name, _ in shared} == {name for name in encoder if not name.startswith("head.")} | {
        "member_adapters"
    }
    for name, value in shared:
        if name != "member_adapters":
            torch.testing.assert_close(value, encoder[name], rtol=0, atol=1e-6)


def test_streamed_fit_of_one_chunk_equals_the_in_memory_fit(fast_params):
    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"a": rng.normal(size=120), "b": rng.normal(size=120)})
    frame["label"] = np.where(frame["a"] + frame["b"] > 0, "yes", "no")
    params = dict(fast_params, max_epochs=2, early_stopping=False, n_efficient_members=2)
    in_memory = SparseTabNetClassifier(**params).fit(frame[["a", "b"]], frame["label"])
    streamed = streaming.fit(SparseTabNetClassifier(**params), [frame], target="label", chunk_rows=len(frame))
    assert streamed.loss_curve_ == in_memory.loss_curve_
    X = frame[["a", "b"]]
    np.testing.assert_array_equal(streamed.predict_proba(X), in_memory.predict_proba(X))


def test_early_stopping_on_the_validation_loss_scores_the_members_mean_loss(fast_params, make_people_frame):
    X, y = make_people_frame(n_rows=200, seed=5)
    model = SparseTabNetClassifier(
        **fast_params, max_epochs=3, n_efficient_members=2, early_stopping=True, scoring="loss", n_iter_no_change=10
    ).fit(X, y)
    assert len(model.validation_scores_) == 3 and all(np.isfinite(model.validation_scores_))
    assert all(score < 0 for score in model.validation_scores_)  # a negative cross-entropy


def test_efficient_members_learn(fast_params, make_people_frame):
    # A bound several standard errors above chance, not a benchmark: on held-out rows the accuracy must exceed
    # the majority rate by four standard errors of an accuracy at that rate.
    X, y = make_people_frame(n_rows=600, seed=1)
    X_train, X_test, y_train, y_test = X.iloc[:300], X.iloc[300:], y.iloc[:300], y.iloc[300:]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = SparseTabNetClassifier(**fast_params, max_epochs=15, n_efficient_members=4).fit(X_train, y_train)
    majority = pd.Series(y_test).value_counts(normalize=True).max()
    standard_error = np.sqrt(majority * (1 - majority) / len(y_test))
    assert model.score(X_test, y_test) > majority + 4 * standard_error
