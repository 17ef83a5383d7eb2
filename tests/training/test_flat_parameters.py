import copy
import warnings

import pytest
import torch
from sklearn.exceptions import ConvergenceWarning

from sparsetab._training import flat_parameters as _flat_parameters
from sparsetab._training.flat_parameters import FlatParameters
from sparsetab._training.loop import train_network
from sparsetab.network import TabNet


def _network(seed=0, dtype=torch.float64):
    torch.manual_seed(seed)
    network = TabNet([None, 4, None], [1, 2, 1], output_dim=2, n_d=4, n_a=4, n_steps=2, virtual_batch_size=16)
    return network.to(dtype)


def _problem(n_rows=96):
    generator = torch.Generator().manual_seed(1)
    X = torch.randn(n_rows, 3, generator=generator, dtype=torch.float64)
    X[:, 1] = torch.randint(0, 4, (n_rows,), generator=generator).double()
    y = ((X[:, 0] > 0) ^ (X[:, 1] > 1)).long()
    return X, y


# Small batches and a decaying learning rate: several steps per epoch, each with its own learning rate;
# max_grad_norm=0.5 is small enough that clipping acts, so the flat norm is checked too.
FLAT_TRAINING = dict(batch_size=32, max_epochs=3, learning_rate=0.05, learning_rate_decay=0.9, max_grad_norm=0.5)


def _train(make_training_config, network, X, y, state=None, max_epochs=3):
    config = make_training_config(**{**FLAT_TRAINING, "max_epochs": max_epochs}, incremental=state is not None)

    def loss(output, target):
        return torch.nn.functional.cross_entropy(output, target, reduction="none")

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return train_network(
            network,
            loss,
            X,
            y,
            torch.ones(len(X), dtype=X.dtype),
            config,
            torch.Generator().manual_seed(0),
            None,
            state,
        )


def test_parameters_become_views_of_the_flat_tensor_and_get_their_own_storage_back():
    network = _network()
    parameters = list(network.parameters())
    values = [parameter.detach().clone() for parameter in parameters]
    flat = FlatParameters(parameters)
    assert flat.flat.shape == (sum(value.numel() for value in values),)
    torch.testing.assert_close(flat.flat.detach(), torch.cat([value.reshape(-1) for value in values]))
    with torch.no_grad():
        flat.flat.add_(1.0)  # what Adam's in-place update does
    for parameter, value in zip(parameters, values, strict=True):
        assert parameter.untyped_storage().data_ptr() == flat.flat.untyped_storage().data_ptr()
        torch.testing.assert_close(parameter.detach(), value + 1.0)
    flat.release()
    storages = {parameter.untyped_storage().data_ptr() for parameter in parameters}
    assert len(storages) == len(parameters)  # each its own again
    assert flat.flat.untyped_storage().data_ptr() not in storages
    for parameter, value in zip(parameters, values, strict=True):
        torch.testing.assert_close(parameter.detach(), value + 1.0)
        assert parameter.grad is None and parameter.is_leaf and parameter.requires_grad


def test_backward_fills_the_flat_gradient_with_zeros_for_unused_parameters():
    network = _network()
    parameters = list(network.parameters())
    reference = copy.deepcopy(network)
    flat = FlatParameters(parameters)
    X, y = _problem(32)
    network.train()
    reference.train()
    for _ in range(2):  # the second pass checks that zero_gradients clears the first one's sums
        flat.zero_gradients()
        output, _, sparsity_loss = network(X)
        (output.sum() + sparsity_loss).backward()
    output, _, sparsity_loss = reference(X)
    (output.sum() + sparsity_loss).backward()
    expected = [parameter.grad.reshape(-1) for parameter in reference.parameters()]
    torch.testing.assert_close(flat.flat.grad, torch.cat(expected), rtol=0, atol=0)
    for parameter in parameters:  # views of the one buffer, not copies
        assert parameter.grad.untyped_storage().data_ptr() == flat.flat.grad.untyped_storage().data_ptr()
    # A gradient dropped in between (as optimizer.zero_grad(set_to_none=True) on a parameter would) counts as zero
    # and is attached to the buffer again.
    parameters[0].grad = None
    flat.zero_gradients()
    assert parameters[0].grad is not None and not flat.flat.grad.any()
    loss = sum(parameter.sum() for parameter in parameters[1:])  # the first parameter unused
    loss.backward()
    assert not parameters[0].grad.any()
    torch.testing.assert_close(
        flat.flat.grad[parameters[0].numel() :],
        torch.ones(flat.flat.numel() - parameters[0].numel(), dtype=torch.float64),
    )
    flat.flat.grad = None  # optimizer.zero_grad on the flat tensor
    flat.zero_gradients()
    assert flat.flat.grad is not None and not flat.flat.grad.any()
    assert parameters[1].grad.untyped_storage().data_ptr() == flat.flat.grad.untyped_storage().data_ptr()
    flat.release()
    assert all(parameter.grad is None for parameter in parameters) and flat.flat.grad is None


def test_supports_only_dense_trainable_parameters_of_one_dtype_and_device():
    network = _network()
    assert FlatParameters.supports(list(network.parameters()))
    assert not FlatParameters.supports([])
    mixed = [torch.nn.Parameter(torch.zeros(2)), torch.nn.Parameter(torch.zeros(2, dtype=torch.float64))]
    assert not FlatParameters.supports(mixed)
    frozen = [torch.nn.Parameter(torch.zeros(2)), torch.nn.Parameter(torch.zeros(2), requires_grad=False)]
    assert not FlatParameters.supports(frozen)


def test_training_equals_adam_over_the_separate_parameters(monkeypatch, make_training_config):
    # The same optimisation as torch.optim.Adam and clip_grad_norm_ over the separate parameters (the path
    # used when the parameters cannot share a buffer), in float64 up to summation order.
    X, y = _problem()
    flat_network = _network()
    flat_history = _train(make_training_config, flat_network, X, y)
    monkeypatch.setattr(_flat_parameters.FlatParameters, "supports", staticmethod(lambda parameters: False))
    separate_network = _network()
    separate_history = _train(make_training_config, separate_network, X, y)
    assert flat_history.loss_curve == pytest.approx(separate_history.loss_curve, rel=1e-10)
    for (name, value), other in zip(
        flat_network.state_dict().items(), separate_network.state_dict().values(), strict=True
    ):
        torch.testing.assert_close(value, other, rtol=1e-9, atol=1e-12, msg=name)
    # The optimizer state comes back in the separate parameters' layout, with the same values.
    flat_state, separate_state = flat_history.optimizer_state, separate_history.optimizer_state
    assert flat_state["param_groups"] == separate_state["param_groups"]
    assert flat_state["state"].keys() == separate_state["state"].keys()
    for index, entry in separate_state["state"].items():
        for key, value in entry.items():
            torch.testing.assert_close(flat_state["state"][index][key], value, rtol=1e-9, atol=1e-12)


def test_a_state_of_the_separate_layout_continues_training_as_without_the_flat_buffer(
    monkeypatch, make_training_config
):
    # A state written by Adam over the separate parameters (e.g. in a model file saved before the flat
    # buffer existed) continues as it would have with that optimizer.
    X, y = _problem()
    separate_network = _network()
    monkeypatch.setattr(_flat_parameters.FlatParameters, "supports", staticmethod(lambda parameters: False))
    state = _train(make_training_config, separate_network, X, y, max_epochs=2).optimizer_state
    continued_separately = _network()
    continued_separately.load_state_dict(separate_network.state_dict())
    # deepcopy: Adam's load_state_dict keeps the given tensors and updates them in place.
    separate_history = _train(
        make_training_config, continued_separately, X, y, state=copy.deepcopy(state), max_epochs=1
    )
    monkeypatch.undo()
    continued_flat = _network()
    continued_flat.load_state_dict(separate_network.state_dict())
    flat_history = _train(make_training_config, continued_flat, X, y, state=state, max_epochs=1)
    assert flat_history.loss_curve == pytest.approx(separate_history.loss_curve, rel=1e-10)
    for value, other in zip(continued_flat.state_dict().values(), continued_separately.state_dict().values()):
        torch.testing.assert_close(value, other, rtol=1e-9, atol=1e-12)


def test_state_conversion_round_trips_and_fills_parameters_without_state():
    network = _network()
    parameters = list(network.parameters())
    flat = FlatParameters(parameters)
    sizes = [parameter.numel() for parameter in parameters]
    generator = torch.Generator().manual_seed(0)
    group = {"lr": 0.01, "betas": (0.9, 0.999), "params": list(range(len(parameters)))}
    state = {
        index: {
            "step": torch.tensor(7.0),
            "exp_avg": torch.randn(parameter.shape, generator=generator, dtype=torch.float64),
            "exp_avg_sq": torch.rand(parameter.shape, generator=generator, dtype=torch.float64),
        }
        for index, parameter in enumerate(parameters)
    }
    separate = {"state": state, "param_groups": [group]}
    converted = flat.to_flat_state(separate)
    assert converted["param_groups"] == [{**group, "params": [0]}]
    torch.testing.assert_close(
        converted["state"][0]["exp_avg"], torch.cat([entry["exp_avg"].reshape(-1) for entry in state.values()])
    )
    back = flat.from_flat_state(converted)
    assert back["param_groups"] == [group]
    for index, entry in state.items():
        for key, value in entry.items():
            torch.testing.assert_close(back["state"][index][key], value)
    # A parameter the separate optimizer never stepped has no state: zero moments in the flat layout.
    del state[1]
    state[0]["step"] = torch.tensor(9.0)
    converted = flat.to_flat_state({"state": state, "param_groups": [group]})
    second = slice(sizes[0], sizes[0] + sizes[1])
    assert torch.equal(converted["state"][0]["exp_avg"][second], torch.zeros(sizes[1], dtype=torch.float64))
    assert float(converted["state"][0]["step"]) == 9.0  # the largest step count
    empty = flat.to_flat_state({"state": {}, "param_groups": [group]})
    assert empty["state"] == {} and flat.from_flat_state(empty) == {"state": {}, "param_groups": [group]}
    flat.release()


def test_parameters_get_their_own_storage_back_when_training_raises(make_training_config):
    network = _network()
    X, y = _problem()

    def failing_loss(output, target):
        raise RuntimeError("loss failed")

    config = make_training_config(**{**FLAT_TRAINING, "max_epochs": 2, "max_grad_norm": None})
    with pytest.raises(RuntimeError, match="loss failed"):
        train_network(network, failing_loss, X, y, torch.ones(len(X), dtype=X.dtype), config, torch.Generator())
    storages = {parameter.untyped_storage().data_ptr() for parameter in network.parameters()}
    assert len(storages) == len(list(network.parameters()))
