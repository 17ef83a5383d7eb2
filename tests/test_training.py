import warnings

import pytest
import torch
from sklearn.exceptions import ConvergenceWarning

from sparsetab._training import _batches, train_network
from sparsetab.network import TabNet


def _problem(n_rows=40, virtual_batch_size=16):
    generator = torch.Generator().manual_seed(0)
    X = torch.randn(n_rows, 3, generator=generator)
    y = (X[:, 0] > 0).long()
    torch.manual_seed(0)
    network = TabNet([None] * 3, [1] * 3, output_dim=2, n_d=4, n_a=4, n_steps=2, virtual_batch_size=virtual_batch_size)
    return network, X, y


def _cross_entropy(output, target):
    return torch.nn.functional.cross_entropy(output, target, reduction="none")


def _train(network, X, y, config, generator=None, score_function=None, state=None, weights=None, loss=_cross_entropy):
    """train_network with unit sample weights, cross-entropy and a fresh generator unless given."""
    weights = torch.ones(len(X)) if weights is None else weights
    generator = torch.Generator() if generator is None else generator
    return train_network(network, loss, X, y, weights, config, generator, score_function, state)


@pytest.mark.parametrize(
    "n_rows, batch_size, sizes", [(2049, 1024, [683, 683, 683]), (1025, 1024, [513, 512]), (50, 1024, [50])]
)
def test_batches_are_balanced_and_cover_every_row(n_rows, batch_size, sizes):
    batches = _batches(n_rows, batch_size, torch.Generator().manual_seed(0), "cpu")
    assert [len(batch) for batch in batches] == sizes
    assert torch.equal(torch.cat(batches).sort().values, torch.arange(n_rows))


def test_training_set_smaller_than_batch_size_takes_one_step_per_epoch(make_training_config):
    network, X, y = _problem(40)
    before = [parameter.detach().clone() for parameter in network.parameters()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        history = _train(network, X, y, make_training_config(max_epochs=3))
    assert len(history.loss_curve) == 3
    assert all(loss > 0 for loss in history.loss_curve)
    assert any(not torch.equal(old, new) for old, new in zip(before, network.parameters()))


def test_sample_weight_scales_the_loss(make_training_config):
    # One virtual batch, so that the (shuffled) row order does not change the batch statistics.
    network, X, y = _problem(40, virtual_batch_size=64)
    weights = torch.zeros(40)
    weights[:20] = 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        history = _train(network, X, y, make_training_config(max_epochs=1, lambda_sparse=0.0), weights=weights)
    network_again, *_ = _problem(40, virtual_batch_size=64)
    network_again.train()
    with torch.no_grad():
        expected = _cross_entropy(network_again(X)[0], y)[:20].mean()
    assert history.loss_curve[0] == pytest.approx(float(expected), rel=1e-5)


def test_non_finite_loss_stops_restores_and_warns(make_training_config):
    network, X, y = _problem(40)
    state = {name: value.clone() for name, value in network.state_dict().items()}

    def exploding(output, target):
        return _cross_entropy(output, target) * float("nan")

    with pytest.warns(RuntimeWarning, match="non-finite at epoch 1"):
        history = _train(network, X, y, make_training_config(), loss=exploding)
    assert history.diverged and history.loss_curve == []
    for name, value in network.state_dict().items():
        assert torch.equal(value, state[name]), name


def test_convergence_warning_when_max_epochs_reached(make_training_config):
    network, X, y = _problem(40)
    with pytest.warns(ConvergenceWarning, match="max_epochs=2 reached"):
        _train(network, X, y, make_training_config(max_epochs=2))


def test_early_stopping_restores_the_best_epoch(make_training_config):
    network, X, y = _problem(40)
    scores = iter([0.1, 0.5, 0.3, 0.2, 0.1, 0.0])
    snapshots = []

    def score_function():
        snapshots.append({name: value.clone() for name, value in network.state_dict().items()})
        return next(scores)

    history = _train(
        network,
        X,
        y,
        make_training_config(max_epochs=6, early_stopping=True, n_iter_no_change=3),
        score_function=score_function,
    )
    assert history.validation_scores == [0.1, 0.5, 0.3, 0.2, 0.1]
    assert history.best_iteration == 1 and history.converged
    for name, value in network.state_dict().items():
        assert torch.equal(value, snapshots[1][name]), name


def test_one_call_equals_epochs_continued_with_the_optimizer_state(make_training_config):
    network, X, y = _problem(40)
    config = make_training_config(max_epochs=1, learning_rate_decay=0.5, incremental=True)
    generator = torch.Generator().manual_seed(0)
    losses, state = [], None
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # incremental calls never warn about convergence
        for _ in range(3):
            history = _train(network, X, y, config, generator, state=state)
            losses += history.loss_curve
            state = history.optimizer_state
    assert state["param_groups"][0]["lr"] == pytest.approx(0.02 * 0.5**3)  # the decay continued
    reference, *_ = _problem(40)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        history = _train(
            reference,
            X,
            y,
            make_training_config(max_epochs=3, learning_rate_decay=0.5),
            generator=torch.Generator().manual_seed(0),
        )
    assert losses == pytest.approx(history.loss_curve, rel=1e-6)
    for (name, value), other in zip(network.state_dict().items(), reference.state_dict().values()):
        torch.testing.assert_close(value, other, msg=name)


def test_incremental_ignores_early_stopping_and_patience(make_training_config):
    network, X, y = _problem(40)
    history = _train(
        network,
        X,
        y,
        make_training_config(max_epochs=1, early_stopping=True, n_iter_no_change=1, incremental=True),
        score_function=lambda: 0.0,
    )
    assert len(history.loss_curve) == 1 and not history.converged and history.validation_scores == [0.0]


def test_keyboard_interrupt_restores_the_best_weights_and_warns(make_training_config):
    network, X, y = _problem(40)
    snapshots, scores = [], iter([0.5, 0.1])

    def score_function():
        score = next(scores, None)
        if score is None:
            raise KeyboardInterrupt
        snapshots.append({name: value.clone() for name, value in network.state_dict().items()})
        return score

    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        with pytest.warns(UserWarning, match=r"after 2 complete epoch\(s\).*weights of epoch 1 \(best validation"):
            history = _train(
                network, X, y, make_training_config(max_epochs=10, early_stopping=True), score_function=score_function
            )
    assert history.interrupted and not history.converged
    assert len(history.loss_curve) == 2 and history.validation_scores == [0.5, 0.1]
    assert len(history.alpha_history) == 2 and history.best_iteration == 0
    assert not network.training
    for name, value in network.state_dict().items():
        assert torch.equal(value, snapshots[0][name]), name


def test_verbose_line_per_epoch(capsys, make_training_config):
    network, X, y = _problem(40)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        history = _train(network, X, y, make_training_config(max_epochs=2, verbose=1, epoch_offset=5))
    lines = capsys.readouterr().out.splitlines()
    assert [int(line.split()[1]) for line in lines] == [6, 7]
    assert [float(line.split("loss ")[1].split()[0]) for line in lines] == pytest.approx(history.loss_curve, abs=1e-5)
    assert all(line.endswith(" s") for line in lines)
