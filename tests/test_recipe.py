"""Tests of sparsetab._recipe: the fit steps that the supervised estimators and the pretrainer share."""

import numpy as np
import pandas as pd
import pytest
import torch

from sparsetab import SparseTabNetClassifier, SparseTabNetPretrainer
from sparsetab._recipe import (
    build_tabnet,
    epoch_printer,
    fit_seed,
    fit_tabular_encoding,
    network_layout,
    record_categories,
    split_validation,
)
from sparsetab._tabular.encoding import validate_frame
from sparsetab.network import TabNet


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


def test_the_fit_seed_is_one_draw_below_two_to_the_31():
    random_state, seed = fit_seed(7)
    assert seed == np.random.RandomState(7).randint(np.iinfo(np.int32).max)
    # The state has advanced by that one draw: the next draw is the second of the stream.
    expected = np.random.RandomState(7)
    expected.randint(np.iinfo(np.int32).max)
    assert random_state.randint(100) == expected.randint(100)


def _frame():
    return pd.DataFrame(
        {
            "colour": pd.Categorical(["red", "blue", "red", "green"] * 25),
            "size": np.linspace(0.0, 1.0, 100),
            "weight": np.arange(100.0),
        }
    )


def test_encoding_categories_and_layout_of_a_new_network():
    model = SparseTabNetClassifier(cat_emb_dim={"colour": 3}, numerical_embedding="piecewise_linear", n_bins=4)
    frame = validate_frame(model, _frame(), reset=True)
    encoded = fit_tabular_encoding(model, frame, seed=0, device=torch.device("cpu"))
    assert encoded.dtype == torch.float32 and encoded.shape == (100, 3)
    record_categories(model)
    assert list(model.categories_) == ["colour"]
    assert model.categories_["colour"].tolist() == ["blue", "green", "red"]
    config, edges = network_layout(
        model, frame, encoded, 2, virtual_batch_size=16, numerical_embedding="piecewise_linear", n_efficient_members=1
    )
    assert config["embedding_dims"] == [3, 1, 1] and config["output_dim"] == 2
    assert config["numerical_embedding"] == "piecewise_linear"
    assert config["virtual_batch_size"] == 16 and config["n_efficient_members"] == 1
    # A categorical column has no bins; each numeric column 4 quantile bins (5 edges) of 100 distinct values.
    assert edges[0] is None and [len(column) for column in edges[1:]] == [5, 5]
    assert config["bin_counts"] == [0, 4, 4] and config["piecewise_linear_with_value"] is True


def test_a_pretrained_layout_keeps_the_pretrainers_bins_and_fits_no_edges():
    model = SparseTabNetClassifier(numerical_embedding="piecewise_linear", n_bins=4)
    frame = validate_frame(model, _frame(), reset=True)
    encoded = fit_tabular_encoding(model, frame, seed=0, device=torch.device("cpu"))
    # A pretrainer fitted before piecewise_linear_with_value existed.
    pretrained = {"bin_counts": [0, 3, 2], "numerical_embedding": "piecewise_linear"}
    config, edges = network_layout(
        model,
        frame,
        encoded,
        2,
        virtual_batch_size=16,
        numerical_embedding=None,  # what "auto" gives 100 rows: the pretrainer's embedding wins
        pretrained_config=pretrained,
        n_efficient_members=1,
    )
    assert edges is None
    assert config["bin_counts"] == [0, 3, 2] and config["piecewise_linear_with_value"] is False
    assert config["numerical_embedding"] == "piecewise_linear"


def test_build_tabnet_equals_a_tabnet_from_the_same_seed_bit_for_bit():
    config = dict(cardinalities=[None, None], embedding_dims=[1, 1], output_dim=2, n_d=4, n_a=4, n_steps=2)
    built = build_tabnet(config, torch.Generator().manual_seed(3), None)
    reference = TabNet(**config, generator=torch.Generator().manual_seed(3))
    for (name, value), (_, expected) in zip(built.state_dict().items(), reference.state_dict().items()):
        assert torch.equal(value, expected), name


def test_the_printer_exists_only_with_verbose():
    assert epoch_printer(SparseTabNetPretrainer(verbose=0), "loss", early_stopping=False) is None
    printer = epoch_printer(SparseTabNetPretrainer(verbose=1), "loss", early_stopping=True)
    assert printer is not None
