"""Parameters changed between partial_fit calls or before a warm-started fit: the table of _params.on_change."""

import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.base import clone

import sparsetab._training.compiled as compiled
from sparsetab import SparseTabNetClassifier, SparseTabNetPretrainer, SparseTabNetRegressor
from sparsetab._params import ON_CHANGE, PARAMETERS, RESOLVED_ATTRIBUTES

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

# The fit every test starts from: the exponential schedule, so that learning_rate_decay may change too.
BASE = dict(
    n_d=4,
    n_a=4,
    n_steps=1,
    n_independent=1,
    n_shared=1,
    virtual_batch_size=16,
    batch_size=32,
    max_epochs=3,
    learning_rate_schedule="exponential",
    warmup_epochs=1,
    random_state=0,
)
# A valid value different from the base's, for every parameter of the classifier.
CHANGED = {
    "n_d": 5,
    "n_a": 5,
    "n_steps": 2,
    "gamma": 1.5,
    "n_independent": 2,
    "n_shared": 2,
    "n_ensemble": 2,
    "n_efficient_members": 2,
    "lambda_sparse": 1e-2,
    "virtual_batch_size": 8,
    "momentum": 0.1,
    "batch_size": 16,
    "max_epochs": 7,
    "learning_rate": 0.005,
    "learning_rate_decay": 0.9,
    "max_grad_norm": 0.5,
    "learning_rate_schedule": "constant",
    "warmup_epochs": 0,
    "weight_decay": 1e-3,
    "weight_averaging_epochs": 1.0,
    "entmax_mode": "sparsemax",
    "entmax_alpha": 1.3,
    "lambda_gate": 0.5,
    "step_gates": "sigmoid",
    "numerical_transform": "quantile",
    "categorical_features": ["colour"],
    "cat_emb_dim": 2,
    "grouped_features": [["a", "b"]],
    # "auto" gave these rows none: None would keep the network's embedding, which a continued fit accepts.
    "numerical_embedding": "periodic",
    "n_bins": 8,
    "embedding_dim": 4,
    "frequency_scale": 0.5,
    "early_stopping": False,
    "validation_fraction": 0.2,
    "n_iter_no_change": 5,
    "tol": 1e-3,
    "scoring": "accuracy",
    "class_weight": {0: 1.0, 1: 2.0},
    "random_state": 7,
    "verbose": 1,
    "warm_start": True,
    "n_jobs": 1,
    "device": torch.device("cpu"),
    "torch_compile": True,
    "pretrained": "a pretrainer",
}
CLASSIFIER_PARAMETERS = [parameter for parameter in PARAMETERS if "classifier" in parameter.estimators]


def _data(n_rows=96):
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=n_rows), "b": rng.normal(size=n_rows)})
    X["colour"] = rng.choice(["red", "blue"], n_rows)
    return X, (X["a"] > 0).astype(int).to_numpy()


def test_every_parameter_has_a_documented_rule_and_a_changed_value_here():
    assert {parameter.on_change for parameter in PARAMETERS} <= set(ON_CHANGE)
    assert sorted(CHANGED) == sorted(parameter.name for parameter in CLASSIFIER_PARAMETERS)
    guide = Path(__file__).parents[2] / "docs" / "user_guide" / "estimators.md"
    text = guide.read_text()
    for rule in ON_CHANGE:  # the user guide lists each parameter under its rule
        section = text.split(f"- **{rule}**", 1)[1].split("\n- **", 1)[0].split("\n\n", 1)[0]
        listed = set(re.findall(r"`([a-z_]+)`", section)) & set(CHANGED)
        assert listed == {p.name for p in CLASSIFIER_PARAMETERS if p.on_change == rule}, rule


@pytest.mark.parametrize("parameter", CLASSIFIER_PARAMETERS, ids=lambda parameter: parameter.name)
@pytest.mark.parametrize("method", ["partial_fit", "warm start"])
def test_a_change_does_what_the_table_says(parameter, method, capsys, monkeypatch):
    # torch_compile=True traced by Dynamo, without inductor's code generation (tests/training/test_compiled.py).
    monkeypatch.setattr(compiled, "BACKEND", "aot_eager")
    # set_params(learning_rate=...) between partial_fit calls was silently ignored.
    X, y = _data()
    model = SparseTabNetClassifier(**BASE)
    value = CHANGED[parameter.name]
    if parameter.name == "pretrained":
        value = SparseTabNetPretrainer(**{k: v for k, v in BASE.items() if k != "learning_rate_schedule"}).fit(X)
    if method == "partial_fit":
        model.partial_fit(X, y, classes=[0, 1])
    else:
        model.set_params(warm_start=True).fit(X, y)
        if parameter.name == "warm_start":
            value = False
    n_iter = model.n_iter_
    model.set_params(**{parameter.name: value})

    def continue_training():
        return model.partial_fit(X, y) if method == "partial_fit" else model.fit(X, y)

    if parameter.on_change == "refused":
        with pytest.raises(ValueError, match=rf"continues the fitted network.*{parameter.name}|{parameter.name}.*now"):
            continue_training()
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # e.g. a cosine schedule past its end
        continue_training()
    assert model.get_params()[parameter.name] is value
    if parameter.name == "warm_start" and method == "warm start":
        assert model.n_iter_ <= BASE["max_epochs"]  # warm_start=False: a new fit from scratch
    else:
        assert model.n_iter_ > n_iter
    capsys.readouterr()


def _last_rate(model):
    return model._optimizer_state["param_groups"][0]["lr"]


def test_a_new_learning_rate_rescales_the_exponential_schedule_from_the_next_step():
    X, y = _data()
    params = dict(BASE, warmup_epochs=0, weight_decay=0.0, learning_rate_decay=0.5, learning_rate=0.02)
    model = SparseTabNetClassifier(**params).partial_fit(X, y, classes=[0, 1])
    assert _last_rate(model) == pytest.approx(0.01)  # after one epoch: 0.02 * 0.5
    model.set_params(learning_rate=0.002).partial_fit(X, y)
    assert _last_rate(model) == pytest.approx(0.0005)  # 0.002 * 0.5 ** 2: the schedule at the new base
    reference = SparseTabNetClassifier(**params).partial_fit(X, y, classes=[0, 1]).partial_fit(X, y)
    assert _last_rate(reference) == pytest.approx(0.005)  # unchanged: continues step for step


def test_a_new_learning_rate_rescales_the_cosine_schedule_from_the_next_step():
    X, y = _data()
    params = dict(BASE, learning_rate_schedule="cosine", warmup_epochs=0, max_epochs=4, learning_rate=0.02)
    model = SparseTabNetClassifier(**params).partial_fit(X, y, classes=[0, 1])
    model.set_params(learning_rate=0.002).partial_fit(X, y)
    assert _last_rate(model) == pytest.approx(0.002 * 0.5 * (1 + np.cos(np.pi * 2 / 4)))


def test_an_integer_random_state_changed_between_calls_reseeds_the_shuffling():
    X, y = _data()
    same = SparseTabNetClassifier(**BASE).partial_fit(X, y, classes=[0, 1]).partial_fit(X, y)
    changed = SparseTabNetClassifier(**BASE).partial_fit(X, y, classes=[0, 1])
    changed.set_params(random_state=7).partial_fit(X, y)
    assert not torch.equal(torch.as_tensor(same._shuffle_state), torch.as_tensor(changed._shuffle_state))
    again = SparseTabNetClassifier(**BASE).partial_fit(X, y, classes=[0, 1])
    again.set_params(random_state=7).partial_fit(X, y)
    assert torch.equal(torch.as_tensor(again._shuffle_state), torch.as_tensor(changed._shuffle_state))


def test_pretrained_none_after_load_is_no_change(tmp_path):
    X, y = _data()
    pretrainer = SparseTabNetPretrainer(**{k: v for k, v in BASE.items() if k != "learning_rate_schedule"}).fit(X)
    model = SparseTabNetClassifier(**BASE, pretrained=pretrainer).fit(X, y)
    model.partial_fit(X, y)  # the same pretrainer fit: fine
    model.set_params(pretrained=None).partial_fit(X, y)
    pretrainer.fit(X)  # refitted: another fit id
    with pytest.raises(ValueError, match="fine-tuned from another fit"):
        model.set_params(pretrained=pretrainer).partial_fit(X, y)


@pytest.mark.parametrize("method", ["partial_fit", "warm_start"])
def test_continued_fit_on_drifted_data_warns_once_with_counts_and_columns(fast_params, method):
    # Issue 33: later batches far outside the first call's ranges, or of only new categories, were clipped and read
    # as unseen without a word. Data like the first call's gives no warning.
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"size": rng.normal(size=120), "colour": rng.choice(["red", "blue"], 120)})
    y = 2 * X["size"].to_numpy()
    params = dict(fast_params, max_epochs=1, learning_rate_schedule="constant", warm_start=method == "warm_start")
    model = SparseTabNetRegressor(**params)
    with warnings.catch_warnings():
        model.fit(X, y)
        drifted = X.assign(size=X["size"] + 50)
        drifted.loc[:29, "colour"] = "green"
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UserWarning)
            model.partial_fit(drifted, y) if method == "partial_fit" else model.fit(drifted, y)
            messages = [str(w.message) for w in caught if w.category is UserWarning]
            assert len(messages) == 1
            assert "120 of 120 rows have values far outside the range of the first fit" in messages[0]
            assert "in column(s) 'size'" in messages[0] and "('colour': 25% of their present values)" in messages[0]
            assert "refit on all of it (fit with warm_start=False), or use sparsetab.streaming.fit" in messages[0]
            caught.clear()
            model.partial_fit(X, y) if method == "partial_fit" else model.fit(X, y)
            assert not [w for w in caught if w.category is UserWarning]


def test_auto_and_the_value_it_chose_both_continue_the_network():
    X, y = _data()
    model = SparseTabNetClassifier(**{**BASE, "virtual_batch_size": "auto", "n_efficient_members": "auto"})
    model.set_params(numerical_embedding="auto", warm_start=True).fit(X, y)
    chosen = {name: getattr(model, attribute) for name, attribute in RESOLVED_ATTRIBUTES.items()}
    assert chosen == {"virtual_batch_size": BASE["batch_size"], "n_efficient_members": 1, "numerical_embedding": None}
    n_iter = model.n_iter_
    model.set_params(**chosen).fit(X, y)
    model.set_params(virtual_batch_size="auto", n_efficient_members="auto", numerical_embedding="auto").partial_fit(
        X, y
    )
    assert model.n_iter_ > n_iter + 1
    for name, other in [("virtual_batch_size", 4), ("n_efficient_members", 2), ("numerical_embedding", "periodic")]:
        message = rf"which was built with {name}='auto' \(which chose {chosen[name]!r}\); it is now {name}={other!r}"
        with pytest.raises(ValueError, match=message):
            clone(model).set_params(warm_start=True).fit(X, y).set_params(**{name: other}).fit(X, y)
