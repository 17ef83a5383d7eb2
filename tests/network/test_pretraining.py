import pytest
import torch

from sparsetab.network import PretrainingNetwork, TabNet, reconstruction_loss


def _network(**kwargs):
    torch.manual_seed(0)
    encoder = TabNet([None, 4, None], [1, 2, 1], output_dim=1, virtual_batch_size=16)
    return PretrainingNetwork(encoder, virtual_batch_size=16, **kwargs)


def _inputs(n_rows=64, seed=0):
    generator = torch.Generator().manual_seed(seed)
    numeric = torch.randn(n_rows, 2, generator=generator, dtype=torch.float64).float()
    codes = torch.randint(0, 4, (n_rows,), generator=generator).float()
    return torch.stack([numeric[:, 0], codes, numeric[:, 1]], dim=1)


def test_reconstruction_loss_by_hand():
    reconstruction = torch.tensor([[1.0, 0.0, 2.0], [0.0, 0.0, 0.0]])
    target = torch.tensor([[0.0, 1.0, 0.0], [2.0, 3.0, 2.0]])
    hidden = torch.tensor([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0]])
    # batch variances: column 0 -> 1, column 1 -> 1, column 2 -> 1 (biased), the first column standardised
    loss = reconstruction_loss(reconstruction, target, hidden, n_standardised=1)
    # row 0: ((1 - 0)^2 / 1 + (0 - 1)^2 / 1) / 2 = 1; row 1: ((0 - 3)^2 / 1 + (0 - 2)^2 / 1) / 2 = 6.5
    torch.testing.assert_close(loss, torch.tensor([1.0, 6.5]))
    target = torch.tensor([[0.0, 1.0, 0.0], [2.0, 5.0, 2.0]])  # column 1 variance 4
    loss = reconstruction_loss(reconstruction, target, hidden, n_standardised=1)
    torch.testing.assert_close(loss, torch.tensor([(1.0 + 1.0 / 4) / 2, (25.0 / 4 + 4.0) / 2]))
    assert reconstruction_loss(reconstruction, target, torch.zeros(2, 3)).tolist() == [0.0, 0.0]


def test_only_hidden_entries_contribute_to_the_loss():
    reconstruction = torch.randn(8, 5, dtype=torch.float64, requires_grad=True)
    target = torch.randn(8, 5, dtype=torch.float64)
    hidden = (torch.rand(8, 5, generator=torch.Generator().manual_seed(1)) < 0.4).double()
    loss = reconstruction_loss(reconstruction, target, hidden)
    loss.sum().backward()
    assert (reconstruction.grad[hidden == 0] == 0).all() and (reconstruction.grad[hidden == 1] != 0).all()
    moved = reconstruction.detach() + 10.0 * (1 - hidden)  # change only the visible entries
    torch.testing.assert_close(reconstruction_loss(moved, target, hidden), loss.detach())
    torch.autograd.gradcheck(
        lambda r: reconstruction_loss(r, target, hidden), (reconstruction.detach().requires_grad_(),)
    )


def test_hidden_columns_are_invisible_to_the_encoder_and_its_first_mask():
    network = _network().eval()
    x = _inputs()
    hide_first = torch.zeros(64, 3)
    hide_first[:, 0] = 1.0
    steps, masks, _ = network.encoder.decision_steps(x, hide_first)
    changed = x.clone()
    changed[:, 0] = 100.0 * torch.randn(64)
    steps_changed, masks_changed, _ = network.encoder.decision_steps(changed, hide_first)
    for step, step_changed in zip(steps, steps_changed):
        torch.testing.assert_close(step, step_changed)
    torch.testing.assert_close(masks, masks_changed)
    priors = []
    attentive = network.encoder.attentive_transformers[0]
    attentive.register_forward_hook(lambda module, args, output: priors.append(args[1]))
    network.encoder.decision_steps(x, hide_first)
    torch.testing.assert_close(priors[0], 1.0 - hide_first)  # P[0] = 1 - S


def test_obfuscation_is_drawn_at_the_ratio_and_fixed_in_evaluation_mode():
    network = _network(pretraining_ratio=0.3)
    drawn = network.draw_obfuscation(20000, torch.Generator().manual_seed(0))
    assert drawn.shape == (20000, 3) and set(drawn.unique().tolist()) == {0.0, 1.0}
    assert abs(drawn.mean().item() - 0.3) < 0.01
    network.eval()
    x = _inputs()
    torch.testing.assert_close(network(x)[0], network(x)[0])
    network.train()
    network.training_generator = torch.Generator().manual_seed(5)
    first = network(x)[0]
    assert not torch.equal(first, network(x)[0])


def train_reconstruction(seed=0):
    """150 Adam steps on 128 rows; returns the network and its eval-mode loss after / before."""
    torch.manual_seed(seed)
    encoder = TabNet([None, 4, None], [1, 2, 1], output_dim=1, virtual_batch_size=16)
    network = PretrainingNetwork(encoder, virtual_batch_size=16)
    x = _inputs(128)
    x[:, 2] = 2.0 * x[:, 0]  # a learnable relation between the numeric columns
    network.training_generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.Adam(network.parameters(), lr=0.02)
    network.eval()
    before = network(x)[0].mean().item()
    network.train()
    for _ in range(150):
        loss, _, sparsity = network(x)
        optimizer.zero_grad()
        (loss.mean() + 1e-3 * sparsity).backward()
        optimizer.step()
    network.eval()
    return network, network(x)[0].mean().item() / before


def test_training_lowers_the_reconstruction_loss_and_every_parameter_learns():
    network, ratio = train_reconstruction()
    assert ratio < 0.5  # bound from benchmarks/results/learning_bounds.md: mean 0.211, sd 0.046 over 30 seeds
    decoder = [name for name, parameter in network.named_parameters() if not name.startswith("encoder.")]
    assert decoder and all(network.get_parameter(name).grad is not None for name in decoder)


def test_invalid_settings_are_refused():
    encoder = TabNet([None], [1], output_dim=1)
    with pytest.raises(ValueError, match=r"pretraining_ratio must be in \(0, 1\), got 1.0"):
        PretrainingNetwork(encoder, pretraining_ratio=1.0)
    with pytest.raises(TypeError, match="encoder must be a sparsetab.network.TabNet"):
        PretrainingNetwork(torch.nn.Linear(2, 2))


def test_with_a_numerical_embedding_the_decoder_reconstructs_the_column_values():
    torch.manual_seed(0)
    encoder = TabNet(
        [None, 3, None], [1, 2, 1], output_dim=1, virtual_batch_size=8,
        numerical_embedding="piecewise_linear", bin_counts=[4, 0, 0],
    )  # fmt: skip
    encoder.embedding.set_bin_edges([torch.linspace(-2, 2, 5), None, None])
    network = PretrainingNetwork(encoder, virtual_batch_size=8)
    assert encoder.embedding.output_dim == 4 + 1 + 2
    assert network.decoder_fcs[0].out_features == encoder.embedding.plain_output_dim == 1 + 1 + 2
    x = torch.randn(16, 3)
    x[:, 1] = torch.randint(0, 3, (16,)).float()
    hidden = torch.zeros(16, 3)
    hidden[:, 0] = 1.0  # column 0 hidden in every row: the loss is about its value only
    losses, _, _ = network.train()(x, hidden)
    step_decisions, _, _ = encoder.decision_steps(x, hidden)
    reconstruction = sum(
        fc(transformer(step))
        for step, transformer, fc in zip(step_decisions, network.decoder_transformers, network.decoder_fcs)
    )
    torch.testing.assert_close(losses, (reconstruction[:, 0] - x[:, 0]).square())
