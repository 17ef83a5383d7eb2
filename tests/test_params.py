"""The parameter table and what is generated from it (sparsetab._params)."""

import inspect

import numpy as np
import pytest

from sparsetab import SparseTabNetClassifier, SparseTabNetPretrainer, SparseTabNetRegressor
from sparsetab._params import (
    AUTO_EARLY_STOPPING_MIN_ROWS,
    AUTO_REFIT_MIN_ROWS,
    AUTO_SELECTION_MIN_ROWS,
    DEFAULTS,
    LEGACY_VALUES,
    NETWORK_PARAMETERS,
    PARAMETERS,
    PRETRAINED_PARAMETERS,
    network_config,
    parameter_constraints,
    resolve_batch_sizes,
    resolve_early_stopping,
    resolve_epoch_refit,
    same_value,
    training_config,
)
from sparsetab._tabular.encoding import TabularEncoding

ESTIMATORS = {
    "classifier": SparseTabNetClassifier,
    "regressor": SparseTabNetRegressor,
    "pretrainer": SparseTabNetPretrainer,
}


def test_names_are_unique_and_roles_known():
    names = [parameter.name for parameter in PARAMETERS]
    assert len(names) == len(set(names))
    roles = {"architecture", "batch normalisation", "tabular encoding", "ensemble", "training", "runtime"}
    assert {parameter.role for parameter in PARAMETERS} <= roles


@pytest.mark.parametrize("kind", sorted(ESTIMATORS))
def test_each_estimator_signature_is_the_table(kind):
    # The constructor takes exactly the table's parameters for that estimator, with the table's defaults.
    signature = inspect.signature(ESTIMATORS[kind].__init__).parameters
    expected = [parameter.name for parameter in PARAMETERS if kind in parameter.estimators]
    assert sorted(name for name in signature if name != "self") == sorted(expected)
    for name in expected:
        assert signature[name].default is DEFAULTS[name]
        assert signature[name].kind is inspect.Parameter.KEYWORD_ONLY
    assert ESTIMATORS[kind]._parameter_constraints == parameter_constraints(kind)
    assert ESTIMATORS[kind]().get_params() == {name: DEFAULTS[name] for name in expected}


def test_name_groups():
    assert NETWORK_PARAMETERS == (
        "n_d", "n_a", "n_steps", "gamma", "n_independent", "n_shared", "n_ensemble", "n_efficient_members",
        "virtual_batch_size",
        "momentum", "entmax_mode", "entmax_alpha", "step_gates",
        "numerical_transform", "categorical_features", "cat_emb_dim", "grouped_features",
        "numerical_embedding", "n_bins", "embedding_dim", "frequency_scale",
    )  # fmt: skip
    # Batch normalisation does not change what the encoder's weights mean: a fine-tuned model may differ there;
    # n_ensemble neither: every member of a fine-tuned ensemble starts from the one pretrained encoder; nor
    # n_efficient_members: the efficient members share the pretrained weights, their adapters and heads start anew.
    # Nor the step gates: a pretrainer has none, and a gateless encoder is fine-tuned with gates.
    assert set(NETWORK_PARAMETERS) - set(PRETRAINED_PARAMETERS) == {
        "virtual_batch_size",
        "momentum",
        "n_ensemble",
        "n_efficient_members",
        "step_gates",
    }
    assert {"step_gates", "lambda_gate"}.isdisjoint(parameter_constraints("pretrainer"))
    assert "n_shared_decoder" not in NETWORK_PARAMETERS  # pretrainer only
    assert "n_ensemble" not in parameter_constraints("pretrainer")
    assert "n_efficient_members" not in parameter_constraints("pretrainer")


def test_constraints_differ_where_the_estimators_do():
    assert "class_weight" in parameter_constraints("classifier")
    assert "class_weight" not in parameter_constraints("regressor")
    assert {"scoring", "warm_start", "pretrained"}.isdisjoint(parameter_constraints("pretrainer"))
    assert {"pretraining_ratio", "n_shared_decoder"} <= set(parameter_constraints("pretrainer"))


def test_network_config_casts_to_plain_values():
    import pandas as pd

    frame = pd.DataFrame({"x": [0.0, np.nan, 2.0, 3.0], "c": ["a", "b", "a", "b"]})
    encoding = TabularEncoding()
    encoding.fit_transform(frame)
    model = SparseTabNetClassifier(n_d=np.int64(4), gamma=np.float32(1.5))
    config = network_config(
        model,
        encoding,
        [1, 3],
        None,
        2,
        virtual_batch_size=np.int64(64),
        numerical_embedding=np.str_("periodic"),
        n_efficient_members=np.int64(2),
    )
    assert config["n_d"] == 4 and type(config["n_d"]) is int
    assert type(config["gamma"]) is float and config["gamma"] == 1.5
    assert config["cardinalities"] == [None, 3]
    assert config["embedding_dims"] == [1, 3]
    assert config["missing_indicators"] == [0]
    assert config["output_dim"] == 2 and config["attention_groups"] is None
    assert config["entmax_mode"] == "entmax15"
    assert config["virtual_batch_size"] == 64 and type(config["virtual_batch_size"]) is int
    assert config["n_efficient_members"] == 2 and type(config["n_efficient_members"]) is int
    # The resolved embedding replaces the parameter ("auto"), and None stays None.
    assert config["numerical_embedding"] == "periodic" and type(config["numerical_embedding"]) is str
    no_embedding = network_config(
        model, encoding, [1, 3], None, 2, virtual_batch_size=64, numerical_embedding=None, n_efficient_members=1
    )
    assert model.numerical_embedding == "auto" and no_embedding["numerical_embedding"] is None


def test_training_config_reads_the_training_parameters():
    model = SparseTabNetRegressor(batch_size="auto", max_epochs=9, tol=0.5, lambda_sparse=0.25, verbose=2)
    config = training_config(model, batch_size=7, early_stopping=True, epoch_offset=3)
    assert (config.batch_size, config.max_epochs, config.tol, config.lambda_sparse, config.verbose) == (
        7,
        9,
        0.5,
        0.25,
        2,
    )
    assert config.early_stopping and not config.incremental and config.epoch_offset == 3
    # A new fit restarts the schedule over max_epochs; partial_fit continues it from the epochs run.
    assert (config.schedule_epochs, config.schedule_offset) == (9, 0)
    incremental = training_config(model, batch_size=7, early_stopping=False, incremental=True, epoch_offset=4)
    assert incremental.max_epochs == 1 and incremental.incremental
    assert (incremental.schedule_epochs, incremental.schedule_offset) == (9, 4)


@pytest.mark.parametrize("schedule", ["constant", "cosine"])
def test_learning_rate_decay_belongs_to_the_exponential_schedule(schedule):
    model = SparseTabNetRegressor(learning_rate_schedule=schedule, learning_rate_decay=0.9)
    with pytest.raises(ValueError, match=r"learning_rate_decay=0\.9 .*learning_rate_schedule='(constant|cosine)'"):
        training_config(model, batch_size=8, early_stopping=False)
    training_config(SparseTabNetRegressor(learning_rate_schedule=schedule), batch_size=8, early_stopping=False)


@pytest.mark.parametrize(
    "n_samples, expected",
    [
        (1, 32),
        (500, 32),
        (2000, 64),
        (4000, 128),
        (8000, 256),
        (16000, 512),
        (23000, 512),
        (23200, 1024),
        (10**6, 1024),
    ],  # fmt: skip
)
def test_auto_batch_size_gives_about_32_steps_per_epoch(n_samples, expected):
    # Nearest power of two to n / 32 in log scale: 23,170 rows is the midpoint between 512 and 1,024.
    assert resolve_batch_sizes("auto", "auto", n_samples) == (expected, min(expected, 128))
    assert resolve_batch_sizes("auto", 100, n_samples) == (expected, 100)
    assert resolve_batch_sizes(300, "auto", n_samples) == (300, 128)
    assert resolve_batch_sizes(50, 7, n_samples) == (50, 7)


def test_legacy_values_are_those_of_the_first_release():
    # A model saved before these parameters existed trained with exactly these settings.
    assert LEGACY_VALUES == {
        "learning_rate_schedule": "exponential",
        "warmup_epochs": 0,
        "weight_decay": 0.0,
        "weight_averaging_epochs": None,
        "numerical_transform": "standard",
        "numerical_embedding": None,
        "n_bins": 32,
        "embedding_dim": 8,
        "frequency_scale": 0.1,
        "n_ensemble": 1,
        "n_efficient_members": 1,
        "lambda_gate": 0.01,
        "step_gates": None,
        "loss": "squared_error",
        "quantile": 0.5,
        "huber_delta": 1.0,
        "torch_compile": False,
    }


@pytest.mark.parametrize(
    "early_stopping, n_samples, has_validation, expected",
    [
        ("auto", AUTO_EARLY_STOPPING_MIN_ROWS, False, False),
        ("auto", AUTO_EARLY_STOPPING_MIN_ROWS + 1, False, True),
        ("auto", 10, True, True),
        (False, 10**6, True, False),
        (True, 10, False, True),
    ],
)
def test_early_stopping_rule(early_stopping, n_samples, has_validation, expected):
    assert resolve_early_stopping(early_stopping, n_samples, has_validation) is expected


@pytest.mark.parametrize(
    "early_stopping, n_samples, has_validation, expected",
    [
        ("auto", AUTO_REFIT_MIN_ROWS - 1, False, False),  # tiny: every row trains
        ("auto", AUTO_REFIT_MIN_ROWS, False, True),
        ("auto", AUTO_SELECTION_MIN_ROWS - 1, False, True),
        ("auto", AUTO_EARLY_STOPPING_MIN_ROWS, False, True),
        ("auto", AUTO_EARLY_STOPPING_MIN_ROWS + 1, False, False),  # early stopping proper takes over
        ("auto", 5000, True, False),  # the user's X_val: early stopping proper
        (True, 5000, False, False),
        (False, 5000, False, False),
    ],
)
def test_epoch_refit_rule(early_stopping, n_samples, has_validation, expected):
    assert resolve_epoch_refit(early_stopping, n_samples, has_validation) is expected
    # The two rules never hold together: a fit either stops early, selects its best epoch, or neither.
    assert not (expected and resolve_early_stopping(early_stopping, n_samples, has_validation))


def test_same_value():
    assert same_value([1, 2], [1, 2]) and not same_value([1, 2], [2, 1])
    assert same_value(np.array(["a", "b"]), np.array(["a", "b"]))
    assert not same_value(np.array([1]), [1])  # an array and a list are different parameters


@pytest.mark.parametrize("kind", sorted(ESTIMATORS))
def test_each_documented_default_is_the_table_default(kind):
    # The Parameters sections are written out per class: "name : type, default=value" must state the table's value.
    from numpydoc.docscrape import ClassDoc

    documented = {}
    for entry in ClassDoc(ESTIMATORS[kind])["Parameters"]:
        for name in entry.name.split(","):
            if "default=" in entry.type:
                documented[name.strip()] = entry.type.rsplit("default=", 1)[1].strip()
    expected = [parameter.name for parameter in PARAMETERS if kind in parameter.estimators]
    assert sorted(documented) == sorted(expected)
    for name in expected:
        text = documented[name]
        value = DEFAULTS[name]
        if isinstance(value, str):
            assert text == f'"{value}"', name
        elif isinstance(value, float):
            assert float(text) == value, name
        else:
            assert text == repr(value), name


@pytest.mark.parametrize(
    "params, message",
    [
        ({"n_steps": 0}, "'n_steps' parameter"),
        ({"entmax_mode": "softmax"}, "'entmax_mode' parameter"),
        ({"entmax_alpha": 3.0}, "'entmax_alpha' parameter"),
        ({"early_stopping": "sometimes"}, "'early_stopping' parameter"),
    ],
)
def test_invalid_parameters_name_the_argument(params, message, make_people_frame):
    X, y = make_people_frame(50)
    with pytest.raises(ValueError, match=message):
        SparseTabNetClassifier(**params).fit(X, y)


@pytest.mark.parametrize("name", ["batch_size", "virtual_batch_size"])
@pytest.mark.parametrize("estimator", [SparseTabNetClassifier, SparseTabNetRegressor, SparseTabNetPretrainer])
def test_batches_of_one_row_are_refused(estimator, name, make_people_frame):
    # Ghost batch norm over one row is undefined: each row would normalise to the bias, and every
    # probability would come out 0 or 1.
    X, y = make_people_frame(50)
    accepted = r"an int in the range \[2, inf\) or a str among {'auto'}. Got 1 instead"
    with pytest.raises(ValueError, match=rf"'{name}' parameter .* {accepted}"):
        estimator(**{name: 1}).fit(X, y)
