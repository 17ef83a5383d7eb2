"""Tests of sparsetab.network.serving: ServingTabNet, from raw (numeric, codes) to predictions and masks.

tests/persistence/test_export.py covers ServingTabNet through the estimators' export (exported programs and
TorchScript against predict_proba, predict and explain) and its constructor errors. Here the module is
built directly on a small TabNet and checked against the network run on the encoded input: the
standardisation and column interleaving, each output transform, softmax blocks, missing values, an
input without numeric columns, and that the wrapped network is a frozen copy.
"""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from sparsetab.network import TabNet
from sparsetab.network.serving import OUTPUT_TRANSFORMS, ServingTabNet

NAN = float("nan")
# Input columns: 0 numeric, 1 categorical (3 categories: 4 rows), 2 numeric with a missing indicator,
# 3 categorical (2 categories: 3 rows); columns 0 and 3 share an attention group.
CARDINALITIES = [None, 4, None, 3]
WIDTHS = [1, 2, 1, 1]
# The numeric argument lists column 2 before column 0, the codes argument column 3 before column 1.
NUMERIC_COLUMNS, CATEGORICAL_COLUMNS = [2, 0], [3, 1]
CENTER, SCALE = [10.0, -3.0], [4.0, 0.5]


def _network(output_dim=5, entmax_mode="sparsemax", cardinalities=CARDINALITIES, widths=WIDTHS, **kwargs):
    torch.manual_seed(0)
    kwargs.setdefault("attention_groups", [[0, 3], [1], [2]] if cardinalities == CARDINALITIES else None)
    kwargs.setdefault("missing_indicators", [2] if cardinalities == CARDINALITIES else None)
    network = TabNet(
        cardinalities,
        widths,
        output_dim,
        n_d=4,
        n_a=4,
        n_steps=2,
        n_independent=1,
        n_shared=1,
        virtual_batch_size=16,
        momentum=0.3,
        entmax_mode=entmax_mode,
        entmax_alpha=1.4,
        **kwargs,
    )
    # A few training-mode passes move the batch-norm running statistics away from (0, 1).
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():
        if network.embedding.fill_values is not None:
            network.embedding.fill_values.copy_(torch.linspace(-2.0, 3.0, network.embedding.fill_values.numel()))
        for _ in range(3):
            x = torch.cat(
                [
                    torch.randn(32, 1, generator=generator) * 2 + 1
                    if card is None
                    else torch.randint(0, card, (32, 1), generator=generator).float()
                    for card in cardinalities
                ],
                dim=1,
            )
            network(x)
    return network.eval()


def _raw(n_rows, seed=2, missing=False):
    generator = torch.Generator().manual_seed(seed)
    numeric = torch.randn(n_rows, 2, generator=generator, dtype=torch.float64) * torch.tensor(SCALE) + torch.tensor(
        CENTER
    )
    if missing:
        numeric[torch.rand(n_rows, 2, generator=generator) < 0.3] = NAN
    codes = torch.stack(
        [torch.randint(0, 3, (n_rows,), generator=generator), torch.randint(0, 4, (n_rows,), generator=generator)],
        dim=1,
    )
    return numeric, codes


def _encoded(numeric, codes):
    """The network's input by hand: standardised numeric columns and float codes, in input column order."""
    x = torch.empty(numeric.shape[0], 4, dtype=torch.float32)
    for k, j in enumerate(NUMERIC_COLUMNS):
        x[:, j] = ((numeric[:, k] - CENTER[k]) / SCALE[k]).to(torch.float32)
    for k, j in enumerate(CATEGORICAL_COLUMNS):
        x[:, j] = codes[:, k].to(torch.float32)
    return x


def _serving(network, output_transform="softmax", **kwargs):
    return ServingTabNet(network, NUMERIC_COLUMNS, CATEGORICAL_COLUMNS, CENTER, SCALE, output_transform, **kwargs)


def _network_outputs(network, numeric, codes):
    with torch.no_grad():
        logits, masks, _ = network(_encoded(numeric, codes))
    return logits.double(), (masks @ network.embedding.explanation_matrix).permute(1, 0, 2)


# ----- the same outputs as the network on the encoded input ----------------------------------
@pytest.mark.parametrize("entmax_mode", ["sparsemax", "entmax15", "adaptive"])
def test_softmax_serving_is_the_network_on_the_standardised_interleaved_input(entmax_mode):
    network = _network(entmax_mode=entmax_mode)
    serving = _serving(network)
    numeric, codes = _raw(40)
    prediction, step_masks = serving(numeric, codes)
    logits, expected_masks = _network_outputs(network, numeric, codes)
    assert prediction.dtype == torch.float64 and prediction.shape == (40, 5)
    assert step_masks.dtype == torch.float32 and step_masks.shape == (40, 2, 4)  # (batch, n_steps, n_columns)
    torch.testing.assert_close(prediction, torch.softmax(logits, dim=1), rtol=0, atol=1e-6)
    torch.testing.assert_close(prediction.sum(dim=1), torch.ones(40, dtype=torch.float64))
    torch.testing.assert_close(step_masks, expected_masks, rtol=0, atol=1e-5)
    torch.testing.assert_close(step_masks.sum(dim=2), torch.ones(40, 2))
    # columns 0 and 3 share a group: they get equal halves of its weight
    torch.testing.assert_close(step_masks[..., 0], step_masks[..., 3], rtol=0, atol=0)


def test_column_order_of_the_arguments_is_respected():
    # Swapping the two numeric columns of the input swaps what the network sees: not the same prediction.
    network = _network()
    serving = _serving(network)
    numeric, codes = _raw(12)
    prediction, _ = serving(numeric, codes)
    swapped = ServingTabNet(network, [0, 2], CATEGORICAL_COLUMNS, CENTER[::-1], SCALE[::-1], "softmax")
    torch.testing.assert_close(swapped(numeric.flip(1), codes)[0], prediction, rtol=0, atol=0)
    assert not torch.allclose(serving(numeric.flip(1), codes)[0], prediction)


def test_sigmoid_gives_one_independent_probability_per_output():
    network = _network(output_dim=3)
    numeric, codes = _raw(20)
    prediction, _ = _serving(network, "sigmoid")(numeric, codes)
    logits, _ = _network_outputs(network, numeric, codes)
    torch.testing.assert_close(prediction, torch.sigmoid(logits), rtol=0, atol=1e-6)
    assert ((prediction > 0) & (prediction < 1)).all()


def test_affine_gives_regression_values_in_target_units_in_float64():
    network = _network(output_dim=2)
    target_mean, target_scale = [1000.0, -0.5], [250.0, 1e-3]
    serving = _serving(network, "affine", target_mean=target_mean, target_scale=target_scale)
    assert serving.target_mean.dtype == serving.target_scale.dtype == torch.float64
    numeric, codes = _raw(20)
    prediction, _ = serving(numeric, codes)
    logits, _ = _network_outputs(network, numeric, codes)
    expected = logits * torch.tensor(target_scale, dtype=torch.float64) + torch.tensor(target_mean, dtype=torch.float64)
    torch.testing.assert_close(prediction, expected, rtol=1e-7, atol=1e-4)
    # one target: the statistics may be scalars
    single = _serving(_network(output_dim=1), "affine", target_mean=3.0, target_scale=2.0)
    logits, _ = _network_outputs(_network(output_dim=1), numeric, codes)
    torch.testing.assert_close(single(numeric, codes)[0], logits * 2.0 + 3.0, rtol=0, atol=1e-5)


def test_exp_gives_the_means_of_a_log_link_in_target_units_in_float64():
    # loss="poisson" or "gamma": the network outputs the log of the mean of y / target_scale.
    network = _network(output_dim=2)
    serving = _serving(network, "exp", target_scale=[4.0, 0.5])
    assert serving.target_scale.dtype == torch.float64 and not hasattr(serving, "target_mean")
    numeric, codes = _raw(20)
    prediction, _ = serving(numeric, codes)
    logits, _ = _network_outputs(network, numeric, codes)
    expected = torch.exp(logits.to(torch.float64)) * torch.tensor([4.0, 0.5], dtype=torch.float64)
    torch.testing.assert_close(prediction, expected, rtol=1e-6, atol=0)
    assert (prediction > 0).all()
    with pytest.raises(ValueError, match="output_transform='exp' needs target_scale"):
        _serving(network, "exp")


def test_softmax_blocks_normalise_each_block_on_its_own():
    network = _network(output_dim=6)
    numeric, codes = _raw(15)
    prediction, _ = _serving(network, softmax_blocks=[2, 3, 1])(numeric, codes)
    logits, _ = _network_outputs(network, numeric, codes)
    expected = torch.cat([torch.softmax(logits[:, :2], 1), torch.softmax(logits[:, 2:5], 1), torch.ones(15, 1)], 1)
    torch.testing.assert_close(prediction, expected, rtol=0, atol=1e-6)
    for block in (slice(0, 2), slice(2, 5), slice(5, 6)):
        torch.testing.assert_close(prediction[:, block].sum(dim=1), torch.ones(15, dtype=torch.float64))
    # the default is one block over every output
    whole, _ = _serving(network)(numeric, codes)
    torch.testing.assert_close(whole, _serving(network, softmax_blocks=[6])(numeric, codes)[0], rtol=0, atol=0)
    torch.testing.assert_close(whole, torch.softmax(logits, dim=1), rtol=0, atol=1e-6)


# ----- missing values --------------------------------------------------------------------------
def test_missing_numeric_values_and_code_zero_give_the_networks_missing_value_handling():
    # NaN stays NaN through the standardisation: the network replaces it by the column's learned fill value
    # (and sets the indicator of column 2); code 0 is the row of missing and unseen categories.
    network = _network()
    serving = _serving(network)
    numeric = torch.tensor([[NAN, 11.0], [12.0, NAN], [NAN, NAN], [9.0, -2.5]], dtype=torch.float64)
    codes = torch.tensor([[0, 0], [1, 3], [2, 0], [0, 2]])
    prediction, step_masks = serving(numeric, codes)
    assert torch.isfinite(prediction).all() and torch.isfinite(step_masks).all()
    logits, expected_masks = _network_outputs(network, numeric, codes)
    torch.testing.assert_close(prediction, torch.softmax(logits, dim=1), rtol=0, atol=1e-6)
    torch.testing.assert_close(step_masks, expected_masks, rtol=0, atol=1e-5)
    # a missing value is the fill value, not some value of the column: column 0 (numeric argument 1) filled
    # with fill_values[0] = -2 standardised units, i.e. the raw value -3 + (-2) * 0.5 = -4
    filled = numeric.clone()
    filled[1, 1] = filled[2, 1] = CENTER[1] + SCALE[1] * network.embedding.fill_values[0].item()
    torch.testing.assert_close(serving(filled, codes)[0][1:3], prediction[1:3], rtol=0, atol=1e-6)


def test_codes_outside_each_columns_categories_are_read_as_code_zero():
    # The codes argument lists column 3 (3 embedding rows: codes 0-2) before column 1 (4 rows: codes 0-3); the
    # limits must follow that order (in the embeddings' order, column 1's valid code 3 was read as 0).
    serving = _serving(_network())
    numeric, _ = _raw(5)
    inside = torch.tensor([[2, 3], [1, 3], [2, 1], [0, 3], [1, 2]])
    outside = torch.tensor([[3, 4], [-1, -1], [99, -7], [3, 3], [-5, 4]])
    expected = torch.tensor([[0, 0], [0, 0], [0, 0], [0, 3], [0, 0]])  # by hand; column 1's code 3 is kept
    torch.testing.assert_close(serving(numeric, outside), serving(numeric, expected), rtol=0, atol=0)
    prediction, _ = serving(numeric, inside)
    logits, _ = _network_outputs(serving.network, numeric, inside)
    torch.testing.assert_close(prediction, torch.softmax(logits, dim=1), rtol=0, atol=1e-6)


@settings(max_examples=30, deadline=None)
@given(
    numeric=st.lists(
        st.tuples(*[st.one_of(st.just(NAN), st.floats(-50, 50)) for _ in range(2)]), min_size=1, max_size=6
    ),
    codes=st.lists(st.tuples(st.integers(0, 2), st.integers(0, 3)), min_size=6, max_size=6),
)
def test_serving_matches_the_network_on_any_rows(network_and_serving, numeric, codes):
    network, serving = network_and_serving
    numeric = torch.tensor(numeric, dtype=torch.float64)
    codes = torch.tensor(codes[: len(numeric)], dtype=torch.long)
    prediction, step_masks = serving(numeric, codes)
    logits, expected_masks = _network_outputs(network, numeric, codes)
    torch.testing.assert_close(prediction, torch.softmax(logits, dim=1), rtol=0, atol=1e-6)
    torch.testing.assert_close(step_masks, expected_masks, rtol=0, atol=1e-5)
    # evaluation mode: a row's outputs do not depend on the other rows of the batch
    first, first_masks = serving(numeric[:1], codes[:1])
    # float32 matrix products sum in another order for another batch size: relative 1e-5 (inputs reach 50)
    torch.testing.assert_close(first, prediction[:1], rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(first_masks, step_masks[:1], rtol=0, atol=1e-5)


@pytest.fixture(scope="module")
def network_and_serving():
    network = _network()
    return network, _serving(network)


# ----- no numeric columns ------------------------------------------------------------------------
def test_input_without_numeric_columns_takes_an_empty_numeric_tensor():
    network = _network(output_dim=3, cardinalities=[3, 5], widths=[2, 1])
    serving = ServingTabNet(network, [], [1, 0], [], [], "softmax")
    assert serving.center is None and serving.scale is None
    codes = torch.tensor([[0, 2], [4, 1], [1, 0]])
    prediction, step_masks = serving(torch.empty(3, 0, dtype=torch.float64), codes)
    with torch.no_grad():
        logits, masks, _ = network(codes.flip(1).float())  # codes lists input column 1, then column 0
    torch.testing.assert_close(prediction, torch.softmax(logits.double(), dim=1), rtol=0, atol=1e-6)
    torch.testing.assert_close(step_masks, masks.permute(1, 0, 2), rtol=0, atol=1e-5)


# ----- the wrapped network ------------------------------------------------------------------------
def test_wrapped_network_is_a_frozen_exportable_copy_and_the_original_is_unchanged():
    network = _network().train()
    before = {name: value.clone() for name, value in network.state_dict().items()}
    serving = _serving(network)
    assert serving.network is not network
    assert not serving.network.training and not any(module.training for module in serving.network.modules())
    assert not any(parameter.requires_grad for parameter in serving.parameters())
    assert all(attentive.exportable for attentive in serving.network.attentive_transformers)
    assert serving.softmax_blocks == (5,) and all(type(width) is int for width in serving.softmax_blocks)
    assert serving.center.dtype == serving.scale.dtype == torch.float64
    assert serving.position.tolist() == [1, 3, 0, 2]  # input column j is column position[j] of cat([numeric, codes])
    # the original: still training, trainable, on the autograd path of the maps, same state
    assert network.training and all(parameter.requires_grad for parameter in network.parameters())
    assert not any(attentive.exportable for attentive in network.attentive_transformers)
    after = network.state_dict()
    assert all(torch.equal(before[name], after[name]) for name in before)
    # serving twice gives the same values (no state is updated by a forward pass)
    numeric, codes = _raw(10)
    first = serving(numeric, codes)
    second = serving(numeric, codes)
    assert all(torch.equal(a, b) for a, b in zip(first, second))


def test_output_transforms_are_the_documented_ones():
    assert OUTPUT_TRANSFORMS == ("softmax", "sigmoid", "affine", "exp")


@pytest.mark.parametrize("blocks", [[0, 5], [-1, 6], [5, 0]])
def test_softmax_blocks_must_be_positive(blocks):
    with pytest.raises(ValueError) as excinfo:
        _serving(_network(), softmax_blocks=blocks)
    assert excinfo.type is ValueError
    assert str(excinfo.value) == (
        f"softmax_blocks must be positive widths summing to the network's 5 outputs; got {blocks}."
    )
