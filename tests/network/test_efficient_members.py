"""Efficient members inside one TabNet (n_efficient_members): heads, adapters, and the shared forward pass."""

import pickle

import pytest
import torch

from sparsetab._training.loop import member_mean_loss
from sparsetab.network import TabNet, TabNetEnsemble
from sparsetab.network.efficient_members import MemberHeads, member_sign_adapters

CARDINALITIES = [None, 5, None, 5, None]
WIDTHS = [1, 3, 1, 2, 1]


def _inputs(n_rows=64, seed=0):
    generator = torch.Generator().manual_seed(seed)
    numeric = torch.randn(n_rows, 3, generator=generator)
    codes = torch.randint(0, 5, (n_rows, 2), generator=generator).float()
    return torch.stack([numeric[:, 0], codes[:, 0], numeric[:, 1], codes[:, 1], numeric[:, 2]], dim=1)


def _network(n_efficient_members, seed=0, **kwargs):
    return TabNet(
        CARDINALITIES,
        WIDTHS,
        output_dim=3,
        n_d=4,
        n_a=4,
        n_steps=2,
        virtual_batch_size=16,
        n_efficient_members=n_efficient_members,
        generator=torch.Generator().manual_seed(seed),
        **kwargs,
    )


def test_member_heads_apply_each_members_own_linear_map_to_its_rows():
    heads = MemberHeads(4, 2, 3, generator=torch.Generator().manual_seed(0))
    decision = torch.randn(3 * 5, 4)
    out = heads(decision)
    assert out.shape == (15, 2)
    for member in range(3):
        rows = decision[member * 5 : (member + 1) * 5]
        expected = rows @ heads.weight[member] + heads.bias[member, 0]
        torch.testing.assert_close(out[member * 5 : (member + 1) * 5], expected)
    # nn.Linear's initialisation bounds: +-1/sqrt(in_features) = +-0.5.
    assert heads.weight.abs().max() <= 0.5 and heads.bias.abs().max() <= 0.5
    assert heads.out_features == 2


def test_member_heads_gradients_in_float64():
    heads = MemberHeads(3, 2, 2, generator=torch.Generator().manual_seed(1)).double()
    decision = torch.randn(8, 3, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(
        lambda d, w, b: torch.baddbmm(b, d.reshape(2, -1, 3), w),
        (
            decision,
            heads.weight.detach().clone().requires_grad_(True),
            heads.bias.detach().clone().requires_grad_(True),
        ),
    )
    assert torch.autograd.gradcheck(heads, (decision,))


def test_sign_adapters_give_one_sign_per_member_and_group():
    group_matrix = torch.tensor([[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]])
    adapters = member_sign_adapters(64, group_matrix, generator=torch.Generator().manual_seed(0))
    assert adapters.shape == (64, 4)
    assert set(adapters.unique().tolist()) == {-1.0, 1.0}
    torch.testing.assert_close(adapters[:, 0], adapters[:, 1])  # one group: one sign
    # Random signs: over 64 members both signs occur for every group (probability 1 - 2**-63 each).
    assert ((adapters == 1).any(dim=0) & (adapters == -1).any(dim=0)).all()


def test_one_member_network_is_unchanged_and_the_shared_weights_are_drawn_as_for_it():
    single, multiple = _network(1), _network(3)
    assert single.member_adapters is None and isinstance(single.head, torch.nn.Linear)
    shared = {name: value for name, value in multiple.state_dict().items() if not name.startswith(("head.", "member"))}
    reference = single.state_dict()
    for name, value in shared.items():
        torch.testing.assert_close(value, reference[name], rtol=0, atol=0)
    assert multiple.member_adapters.shape == (3, multiple.embedding.output_dim)


@pytest.mark.parametrize("training", [False, True])
def test_members_with_unit_adapters_and_equal_heads_are_the_single_network(training):
    # With every adapter 1 and every head the single network's, each member computes the single network's
    # function. In training mode too: 32 rows are two ghost batches of 16 per member, the single network's.
    single, multiple = _network(1), _network(3)
    with torch.no_grad():
        multiple.member_adapters.fill_(1.0)
        multiple.head.weight.copy_(single.head.weight.T.expand(3, -1, -1))
        multiple.head.bias.copy_(single.head.bias.expand(3, 1, -1))
    single.train(training)
    multiple.train(training)
    x = _inputs(32)
    output, masks, sparsity = single(x)
    outputs, member_masks, member_sparsity = multiple(x)
    assert outputs.shape == (96, 3) and member_masks.shape == (2, 96, 5)
    torch.testing.assert_close(multiple.split_members(outputs), output.expand(3, -1, -1))
    torch.testing.assert_close(member_masks.reshape(2, 3, 32, 5), masks.unsqueeze(1).expand(-1, 3, -1, -1))
    torch.testing.assert_close(member_sparsity, sparsity)


def test_members_differ_and_each_row_is_independent_of_the_batch_in_evaluation():
    network = _network(4).eval()
    x = _inputs(40)
    with torch.no_grad():
        outputs = network.split_members(network(x)[0])
        alone = network.split_members(network(x[7:8])[0])
    assert outputs.shape == (4, 40, 3)
    torch.testing.assert_close(alone[:, 0], outputs[:, 7])
    # Different adapters and heads: no two members give the same outputs.
    assert all(not torch.allclose(outputs[a], outputs[b]) for a in range(4) for b in range(a + 1, 4))
    masks = network.encode(x)[1]
    torch.testing.assert_close(masks.sum(dim=-1), torch.ones(2, 160))


def test_obfuscation_prior_is_repeated_for_every_member():
    # With unit adapters every member is the single network, obfuscation included (its prior starts at 1 - b).
    single, multiple = _network(1).eval(), _network(2).eval()
    with torch.no_grad():
        multiple.member_adapters.fill_(1.0)
    x = _inputs(8)
    obfuscation = torch.zeros(8, 5)
    obfuscation[::2, 0] = 1.0
    obfuscation[1::2, 3] = 1.0
    with torch.no_grad():
        decision, masks, _, _ = single.encode(x, obfuscation)
        member_decision, member_masks, _, _ = multiple.encode(x, obfuscation)
    assert member_masks.shape == (2, 16, 5)
    torch.testing.assert_close(member_masks.reshape(2, 2, 8, 5), masks.unsqueeze(1).expand(-1, 2, -1, -1))
    torch.testing.assert_close(multiple.split_members(member_decision), decision.expand(2, -1, -1))


def test_member_mean_loss_is_the_mean_of_each_members_loss():
    output = torch.tensor([[1.0], [2.0], [4.0], [8.0]])  # 2 members x 2 rows
    target = torch.tensor([[0.0], [1.0]])

    def squared(prediction, truth):
        return ((prediction - truth) ** 2).sum(dim=1)

    # member 0: rows give 1 and 1; member 1: 16 and 49.
    torch.testing.assert_close(member_mean_loss(squared, output, target, 2), torch.tensor([8.5, 25.0]))
    torch.testing.assert_close(member_mean_loss(squared, output[:2], target, 1), torch.tensor([1.0, 1.0]))
    labels = torch.tensor([2, 0])
    logits = torch.randn(6, 3)
    cross_entropy = torch.nn.functional.cross_entropy
    expected = torch.stack([cross_entropy(logits[m * 2 : m * 2 + 2], labels, reduction="none") for m in range(3)])
    torch.testing.assert_close(
        member_mean_loss(lambda o, t: cross_entropy(o, t, reduction="none"), logits, labels, 3), expected.mean(0)
    )


def test_ensemble_of_networks_with_members_returns_every_member_in_order():
    members = [_network(2, seed=0).eval(), _network(2, seed=1).eval()]
    ensemble = TabNetEnsemble(members)
    x = _inputs(10)
    with torch.no_grad():
        outputs, masks, sparsity = ensemble(x)
        first = members[0].split_members(members[0](x)[0])
    assert outputs.shape == (4, 10, 3) and masks.shape == (4, 2, 10, 5) and sparsity.shape == (2,)
    torch.testing.assert_close(outputs[:2], first)


def test_network_with_members_pickles_and_refuses_zero_members():
    network = _network(3).eval()
    restored = pickle.loads(pickle.dumps(network))
    x = _inputs(5)
    with torch.no_grad():
        torch.testing.assert_close(restored(x)[0], network(x)[0])
    with pytest.raises(ValueError, match="n_efficient_members must be an integer >= 1, got 0"):
        _network(0)


def test_a_network_pickled_before_efficient_members_restores_with_one():
    network = _network(1).eval()
    state = network.__dict__.copy()
    del state["n_efficient_members"]
    del state["member_adapters"]
    restored = TabNet.__new__(TabNet)
    restored.__setstate__(state)
    assert restored.n_efficient_members == 1 and restored.member_adapters is None
    x = _inputs(6)
    with torch.no_grad():
        torch.testing.assert_close(restored(x)[0], network(x)[0])
