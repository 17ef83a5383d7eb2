"""The parameter table and what is generated from it (sparsetab._params)."""

import inspect

import numpy as np
import pytest

from sparsetab import SparseTabNetClassifier, SparseTabNetPretrainer, SparseTabNetRegressor
from sparsetab._params import (
    AUTO_EARLY_STOPPING_MIN_ROWS,
    DEFAULTS,
    NETWORK_PARAMETERS,
    PARAMETERS,
    PRETRAINED_PARAMETERS,
    network_config,
    parameter_constraints,
    resolve_early_stopping,
    same_value,
    split_validation,
    training_config,
)
from sparsetab._tabular import TabularEncoding

ESTIMATORS = {
    "classifier": SparseTabNetClassifier,
    "regressor": SparseTabNetRegressor,
    "pretrainer": SparseTabNetPretrainer,
}


def test_names_are_unique_and_roles_known():
    names = [parameter.name for parameter in PARAMETERS]
    assert len(names) == len(set(names))
    roles = {"architecture", "batch normalisation", "tabular encoding", "training", "runtime"}
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
        "n_d", "n_a", "n_steps", "gamma", "n_independent", "n_shared", "virtual_batch_size", "momentum",
        "entmax_mode", "entmax_alpha", "categorical_features", "cat_emb_dim", "grouped_features",
        "numerical_embedding", "n_bins", "embedding_dim", "frequency_scale",
    )  # fmt: skip
    # Batch normalisation does not change what the encoder's weights mean: a fine-tuned model may differ there.
    assert set(NETWORK_PARAMETERS) - set(PRETRAINED_PARAMETERS) == {"virtual_batch_size", "momentum"}
    assert "n_shared_decoder" not in NETWORK_PARAMETERS  # pretrainer only


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
    config = network_config(model, encoding, [1, 3], None, 2)
    assert config["n_d"] == 4 and type(config["n_d"]) is int
    assert type(config["gamma"]) is float and config["gamma"] == 1.5
    assert config["cardinalities"] == [None, 3]
    assert config["embedding_dims"] == [1, 3]
    assert config["missing_indicators"] == [0]
    assert config["output_dim"] == 2 and config["attention_groups"] is None
    assert config["entmax_mode"] == "sparsemax" and config["virtual_batch_size"] == 128


def test_training_config_reads_the_training_parameters():
    model = SparseTabNetRegressor(batch_size=7, max_epochs=9, tol=0.5, lambda_sparse=0.25, verbose=2)
    config = training_config(model, early_stopping=True, epoch_offset=3)
    assert (config.batch_size, config.max_epochs, config.tol, config.lambda_sparse, config.verbose) == (
        7,
        9,
        0.5,
        0.25,
        2,
    )
    assert config.early_stopping and not config.incremental and config.epoch_offset == 3
    incremental = training_config(model, early_stopping=False, incremental=True)
    assert incremental.max_epochs == 1 and incremental.incremental


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


def test_split_validation_sizes_stratification_and_errors():
    train, validation = split_validation(100, 0.1, seed=0)
    assert len(validation) == 10 and len(train) == 90
    assert sorted(np.concatenate([train, validation]).tolist()) == list(range(100))
    again = split_validation(100, 0.1, seed=0)
    np.testing.assert_array_equal(again[1], validation)
    labels = np.repeat([0, 1], [80, 20])
    _, stratified = split_validation(100, 0.1, seed=0, stratify=labels)
    assert np.bincount(labels[stratified]).tolist() == [8, 2]
    # A class with one row cannot be stratified: the split falls back to a plain one.
    _, plain = split_validation(10, 0.3, seed=0, stratify=np.array([0] * 9 + [1]))
    assert len(plain) == 3
    with pytest.raises(ValueError, match=r"validation_fraction=0.1 of 1 rows"):
        split_validation(1, 0.1, seed=0)


def test_same_value():
    assert same_value([1, 2], [1, 2]) and not same_value([1, 2], [2, 1])
    assert same_value(np.array(["a", "b"]), np.array(["a", "b"]))
    assert not same_value(np.array([1]), [1])  # an array and a list are different parameters
