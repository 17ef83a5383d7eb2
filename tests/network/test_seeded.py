"""Layers seeded by a generator (sparsetab.network.seeded): torch's initialisation, without the global RNG."""

import pytest
import torch
from torch import nn

from sparsetab.network import TabNet
from sparsetab.network.seeded import seeded_embedding, seeded_linear


def _global_draw(make, seed):
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return make()


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("sizes", [(5, 3), (1, 7), (64, 16)])
def test_seeded_linear_equals_torchs_linear_under_the_same_seed(bias, sizes):
    reference = _global_draw(lambda: nn.Linear(*sizes, bias=bias), seed=3)
    layer = seeded_linear(*sizes, bias=bias, generator=torch.Generator().manual_seed(3))
    assert torch.equal(layer.weight, reference.weight)
    assert (layer.bias is None) == (not bias) and (not bias or torch.equal(layer.bias, reference.bias))
    assert layer.weight.device.type == "cpu" and layer.weight.dtype == torch.float32


def test_seeded_embedding_equals_torchs_embedding_under_the_same_seed():
    reference = _global_draw(lambda: nn.Embedding(6, 3), seed=11)
    layer = seeded_embedding(6, 3, generator=torch.Generator().manual_seed(11))
    assert torch.equal(layer.weight, reference.weight)


def test_a_network_built_from_a_generator_leaves_the_global_generator_alone():
    state = torch.random.get_rng_state()
    config = dict(cardinalities=[None, 4], embedding_dims=[1, 2], output_dim=2, n_d=4, n_a=4)
    first = TabNet(**config, numerical_embedding="periodic", n_bins=3, generator=torch.Generator().manual_seed(0))
    assert torch.equal(torch.random.get_rng_state(), state)
    reference = _global_draw(lambda: TabNet(**config, numerical_embedding="periodic", n_bins=3), seed=0)
    for (name, value), (_, expected) in zip(first.state_dict().items(), reference.state_dict().items()):
        assert torch.equal(value, expected), name
