"""Tests of sparsetab.network.ensemble: TabNetEnsemble, ensemble_members, and ServingTabNet of an ensemble."""

import pytest
import torch

from sparsetab.network import TabNet, TabNetEnsemble, ensemble_members
from sparsetab.network.serving import ServingTabNet


def _member(seed, output_dim=3, cardinalities=(None, 4, None)):
    torch.manual_seed(seed)
    return TabNet(list(cardinalities), [1, 2, 1], output_dim, n_d=4, n_a=4, n_steps=2, n_independent=1, n_shared=1)


def _rows(n_rows=6):
    generator = torch.Generator().manual_seed(0)
    numeric = torch.randn(n_rows, 2, generator=generator)
    codes = torch.randint(0, 4, (n_rows, 1), generator=generator).float()
    return torch.cat([numeric[:, :1], codes, numeric[:, 1:]], dim=1)


def test_forward_stacks_the_members_outputs():
    members = [_member(0), _member(1)]
    ensemble = TabNetEnsemble(members).eval()
    x = _rows()
    outputs, masks, sparsity = ensemble(x)
    assert outputs.shape == (2, 6, 3) and masks.shape[0] == 2 and sparsity.shape == (2,)
    for index, member in enumerate(members):
        output, member_masks, member_sparsity = member(x)
        torch.testing.assert_close(outputs[index], output, rtol=0, atol=0)
        torch.testing.assert_close(masks[index], member_masks, rtol=0, atol=0)
        torch.testing.assert_close(sparsity[index], member_sparsity, rtol=0, atol=0)
    assert len(ensemble) == 2


def test_members_must_be_at_least_two_and_alike():
    with pytest.raises(ValueError, match="at least 2 members, got 1"):
        TabNetEnsemble([_member(0)])
    with pytest.raises(ValueError, match="same input columns and head width"):
        TabNetEnsemble([_member(0), _member(1, output_dim=2)])


def test_ensemble_members():
    single = _member(0)
    assert ensemble_members(single) == [single]
    members = [_member(0), _member(1), _member(2)]
    assert ensemble_members(TabNetEnsemble(members)) == members


def test_one_state_dict_holds_every_member():
    ensemble = TabNetEnsemble([_member(0), _member(1)])
    rebuilt = TabNetEnsemble([_member(5), _member(6)])
    rebuilt.load_state_dict(ensemble.state_dict())
    x = _rows()
    torch.testing.assert_close(rebuilt.eval()(x)[0], ensemble.eval()(x)[0], rtol=0, atol=0)


@pytest.mark.parametrize("transform", ["softmax", "sigmoid", "affine"])
def test_serving_an_ensemble_averages_the_members_predictions(transform):
    members = [_member(0), _member(1), _member(2)]
    statistics = dict(target_mean=[1.0, 2.0, 3.0], target_scale=[2.0, 1.0, 0.5]) if transform == "affine" else {}
    arguments = ([0, 2], [1], [0.5, -1.0], [2.0, 3.0], transform)
    ensemble = ServingTabNet(TabNetEnsemble(members), *arguments, **statistics)
    alone = [ServingTabNet(member, *arguments, **statistics) for member in members]
    numeric = torch.randn(5, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    codes = torch.tensor([[0], [1], [2], [3], [1]])
    prediction, masks = ensemble(numeric, codes)
    answers = [serving(numeric, codes) for serving in alone]
    expected_prediction = torch.stack([answer[0] for answer in answers]).mean(dim=0)
    expected_masks = torch.stack([answer[1] for answer in answers]).double().mean(dim=0).float()
    torch.testing.assert_close(prediction, expected_prediction, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(masks, expected_masks, rtol=0, atol=0)
    assert prediction.dtype == torch.float64 and masks.dtype == torch.float32
    # The members of the program are frozen copies using the exportable entmax path.
    assert all(
        attentive.exportable for member in ensemble.network.members for attentive in member.attentive_transformers
    )
    assert not any(attentive.exportable for attentive in members[0].attentive_transformers)
