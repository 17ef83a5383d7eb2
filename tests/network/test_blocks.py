import math

import pytest
import torch

from sparsetab.network.blocks import FeatureTransformer, GhostBatchNorm, GLULayer


def _virtual_batches(n_rows, virtual_batch_size):
    # The documented interleaved split: e = n mod k virtual batches of r + 1 rows take the first
    # e * (r + 1) rows (row i -> batch i mod e), the others of r rows take the rest likewise.
    n_virtual = max(1, math.ceil(n_rows / virtual_batch_size))
    rows, n_large = divmod(n_rows, n_virtual)
    split = n_large * (rows + 1)
    large = [torch.arange(v, split, n_large) for v in range(n_large)]
    small = [torch.arange(split + v, n_rows, n_virtual - n_large) for v in range(n_virtual - n_large)]
    return large + small


def _reference_ghost_batch_norm(x, virtual_batch_size, epsilon=1e-5):
    # Independent reference: each virtual batch normalised on its own with torch's batch_norm.
    out = torch.empty_like(x)
    for rows in _virtual_batches(x.shape[0], virtual_batch_size):
        out[rows] = torch.nn.functional.batch_norm(x[rows], None, None, training=True, eps=epsilon)
    return out


@pytest.mark.parametrize("n_rows, virtual_batch_size", [(300, 128), (10, 4), (7, 3), (5, 2)])
def test_virtual_batches_partition_the_rows_with_sizes_differing_by_at_most_one(n_rows, virtual_batch_size):
    batches = _virtual_batches(n_rows, virtual_batch_size)
    assert sorted(torch.cat(batches).tolist()) == list(range(n_rows))
    sizes = [len(rows) for rows in batches]
    assert max(sizes) - min(sizes) <= 1 and len(batches) == math.ceil(n_rows / virtual_batch_size)


@pytest.mark.parametrize(
    "n_rows, virtual_batch_size", [(256, 128), (300, 128), (129, 128), (50, 128), (10, 4), (1001, 128), (5, 3)]
)
def test_ghost_batch_norm_matches_per_virtual_batch_batch_norm(n_rows, virtual_batch_size):
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(n_rows, 5, generator=generator, dtype=torch.float64) * 3 + 1
    gbn = GhostBatchNorm(5, virtual_batch_size).double().train()
    with torch.no_grad():
        gbn.weight.copy_(torch.tensor([1.0, 2.0, 0.5, -1.0, 3.0]))
        gbn.bias.copy_(torch.tensor([0.0, 1.0, -2.0, 0.5, 0.25]))
    expected = _reference_ghost_batch_norm(x, virtual_batch_size) * gbn.weight + gbn.bias
    torch.testing.assert_close(gbn(x), expected)


def test_ghost_batch_norm_gradients_match_the_reference():
    x = torch.randn(300, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(2), requires_grad=True)
    gbn = GhostBatchNorm(3, 128).double().train()
    weights = torch.randn(300, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    (gbn(x) * weights).sum().backward()
    grad = x.grad.clone()
    x.grad = None
    reference = x.detach().clone().requires_grad_(True)
    (_reference_ghost_batch_norm(reference, 128) * weights).sum().backward()
    torch.testing.assert_close(grad, reference.grad)


def test_ghost_batch_norm_virtual_batches_are_interleaved():
    # 300 rows, virtual batches of 128 -> 3 virtual batches of 100: rows 0, 3, 6, ... are normalised together.
    x = torch.arange(300.0, dtype=torch.float64).unsqueeze(1)
    out = GhostBatchNorm(1, 128).double().train()(x)
    first = torch.nn.functional.batch_norm(x[0::3], None, None, training=True)
    torch.testing.assert_close(out[0::3], first)
    torch.testing.assert_close(out[1::3], first)  # same spacing, same normalised values


def test_ghost_batch_norm_single_row_does_not_crash_and_gives_bias():
    gbn = GhostBatchNorm(3, 128).train()
    with torch.no_grad():
        gbn.bias.copy_(torch.tensor([0.5, -1.0, 2.0]))
    out = gbn(torch.tensor([[10.0, 20.0, 30.0]]))
    torch.testing.assert_close(out, torch.tensor([[0.5, -1.0, 2.0]]))


def test_ghost_batch_norm_running_statistics_and_eval_mode():
    x = torch.tensor([[1.0], [10.0], [3.0], [14.0]], dtype=torch.float64)
    gbn = GhostBatchNorm(1, virtual_batch_size=2, momentum=0.25).double().train()
    gbn(x)
    # Virtual batches (interleaved) {1, 3} and {10, 14}.
    # First update takes the batch statistics as they are: virtual batch means 2 and 12 -> 7;
    # unbiased variances 2 and 8 -> 5.
    gbn.flush_running_stats()  # the training steps' updates are applied on demand
    assert gbn.running_mean.item() == 7.0 and gbn.running_var.item() == pytest.approx(5.0)
    gbn(x + 2.0)  # second update: cumulative average (weight 1/2 > momentum), mean 9, var 5
    gbn.flush_running_stats()
    assert gbn.running_mean.item() == 8.0 and gbn.running_var.item() == pytest.approx(5.0)
    for _ in range(2):  # updates 3 and 4: weights 1/3 and 1/4, applied together by one flush
        gbn(x)
    gbn.flush_running_stats()
    assert gbn.running_mean.item() == pytest.approx((7 + 9 + 7 + 7) / 4)
    gbn(x + 4.0)  # update 5: the exponential average with momentum 0.25 has taken over
    gbn.flush_running_stats()
    assert gbn.running_mean.item() == pytest.approx(0.75 * 7.5 + 0.25 * 11)
    gbn.eval()
    expected = (x - gbn.running_mean) / torch.sqrt(gbn.running_var + 1e-5)
    torch.testing.assert_close(gbn(x), expected)


def test_plain_batch_norm_when_virtual_batch_size_is_none():
    x = torch.randn(300, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    gbn = GhostBatchNorm(4, virtual_batch_size=None).double().train()
    torch.testing.assert_close(gbn(x), torch.nn.functional.batch_norm(x, None, None, training=True))


def test_glu_layer_is_fc_bn_glu():
    torch.manual_seed(0)
    layer = GLULayer(4, 3, virtual_batch_size=1000).double().train()
    x = torch.randn(20, 4, dtype=torch.float64)
    h = torch.nn.functional.batch_norm(x @ layer.fc.weight.T, None, None, training=True)
    torch.testing.assert_close(layer(x), h[:, :3] * torch.sigmoid(h[:, 3:]))


@pytest.mark.parametrize("training", [True, False])
def test_glu_layer_on_a_single_row_with_autograd(training):
    # A single row's gate half is contiguous already: the layer must not overwrite the batch norm's
    # output in place (autograd refuses), in training mode (output: GLU of the bias) or evaluation mode.
    torch.manual_seed(0)
    layer = GLULayer(4, 3).double().train(training)
    with torch.no_grad():
        layer.bn.bias.copy_(torch.tensor([0.5, -1.0, 2.0, 0.0, 1.0, -2.0]))
    x = torch.randn(1, 4, dtype=torch.float64, requires_grad=True)
    out = layer(x)
    out.sum().backward()
    if training:
        bias = layer.bn.bias.detach()
        torch.testing.assert_close(out.detach(), (bias[:3] * torch.sigmoid(bias[3:]))[None])
        assert x.grad.abs().max().item() == 0.0  # a lone row normalises to a constant
    else:
        h = layer.bn(layer.fc(x.detach()))
        torch.testing.assert_close(out.detach(), h[:, :3] * torch.sigmoid(h[:, 3:]))


def test_feature_transformer_residuals_scaled_by_sqrt_half():
    torch.manual_seed(0)
    shared = torch.nn.ModuleList([torch.nn.Linear(4, 12, bias=False), torch.nn.Linear(6, 12, bias=False)])
    transformer = FeatureTransformer(4, 6, shared, n_independent=1, virtual_batch_size=1000, momentum=0.02).double()
    x = torch.randn(30, 4, dtype=torch.float64)
    first, second, third = transformer.layers
    assert first.fc is shared[0] and second.fc is shared[1]
    h1 = first(x)
    h2 = (h1 + second(h1)) * math.sqrt(0.5)
    expected = (h2 + third(h2)) * math.sqrt(0.5)
    torch.testing.assert_close(transformer(x), expected)


def test_feature_transformer_without_layers_is_an_error():
    with pytest.raises(ValueError, match="n_shared \\+ n_independent >= 1"):
        FeatureTransformer(4, 6, torch.nn.ModuleList(), n_independent=0, virtual_batch_size=8, momentum=0.02)


def test_ghost_batch_norm_with_a_single_row_virtual_batch_beside_larger_ones():
    # 3 rows, virtual batches of 2 -> one virtual batch of rows {0, 1} and one of row {2} alone
    x = torch.tensor([[1.0], [3.0], [10.0]], dtype=torch.float64, requires_grad=True)
    gbn = GhostBatchNorm(1, virtual_batch_size=2).double().train()
    with torch.no_grad():
        gbn.bias.fill_(0.5)
    out = gbn(x)
    first = torch.nn.functional.batch_norm(x[:2].detach(), None, None, training=True) + 0.5
    torch.testing.assert_close(out[:2].detach(), first)
    assert out[2].item() == 0.5  # a single row normalises to 0: the output is the bias
    out.sum().backward()
    assert x.grad[2].item() == 0.0
    # running statistics: means 2 and 10 -> 6; unbiased variances 2 and 0 -> 1
    gbn.flush_running_stats()
    assert gbn.running_mean.item() == pytest.approx(6.0) and gbn.running_var.item() == pytest.approx(1.0)


@pytest.mark.parametrize(
    "sizes",
    [[300, 257, 300, 2] * 20, [256] * 80],
    ids=["mixed virtual batch shapes", "one record shape per flush"],
)
def test_deferred_running_statistics_equal_one_update_per_step(sizes):
    generator = torch.Generator().manual_seed(4)
    batches = [torch.randn(n, 3, generator=generator, dtype=torch.float64) * 2 + 1 for n in sizes]
    stepwise = GhostBatchNorm(3, 64, momentum=0.1).double().train()
    deferred = GhostBatchNorm(3, 64, momentum=0.1).double().train()
    for x in batches:
        stepwise(x)
        stepwise.flush_running_stats()  # one update per step, as the formula is written
        deferred(x)  # applied every 16 steps and at the end
    deferred.eval()
    torch.testing.assert_close(deferred.running_mean, stepwise.running_mean, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(deferred.running_var, stepwise.running_var, rtol=1e-12, atol=1e-12)
    assert int(deferred.num_batches_tracked) == int(stepwise.num_batches_tracked) == 80
    # state_dict() applies pending updates first; load_state_dict() drops those of the replaced state
    deferred.train()(batches[0])
    assert int(deferred.state_dict()["num_batches_tracked"]) == 81
    deferred.train()(batches[1])
    deferred.load_state_dict(stepwise.state_dict())
    deferred.eval()
    torch.testing.assert_close(deferred.running_mean, stepwise.running_mean, rtol=0, atol=0)


def test_statistics_across_processes_normalise_with_the_union_of_their_rows():
    # Two processes holding the same rows, simulated by an all-reduce that doubles: the union's mean and biased
    # variance are the rows' own, so the output is plain batch norm's, and the running variance is the unbiased
    # variance of 2n rows: var * 2n / (2n - 1).
    generator = torch.Generator().manual_seed(3)
    x = torch.randn(10, 4, generator=generator, dtype=torch.float64) * 3 + 1
    norm = GhostBatchNorm(4, virtual_batch_size=None, momentum=1.0).double()
    with torch.no_grad():
        norm.weight.copy_(torch.tensor([1.0, 2.0, 0.5, -1.0]))
        norm.bias.copy_(torch.tensor([0.0, 1.0, -1.0, 2.0]))
    norm.train()
    with norm.statistics_across(lambda tensor: 2 * tensor) as entered:
        output = norm(x)
    assert entered is norm and "_all_reduce" not in vars(norm)  # pickles and later passes are unchanged
    expected = torch.nn.functional.batch_norm(x, None, None, norm.weight, norm.bias, training=True, eps=norm.epsilon)
    torch.testing.assert_close(output, expected, rtol=1e-12, atol=1e-12)
    norm.eval()
    torch.testing.assert_close(norm.running_mean, x.mean(dim=0), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(norm.running_var, x.var(dim=0, unbiased=False) * 20 / 19, rtol=1e-12, atol=1e-12)


def test_statistics_across_processes_leave_virtual_batches_local():
    x = torch.randn(16, 3, generator=torch.Generator().manual_seed(4))
    ghost = GhostBatchNorm(3, virtual_batch_size=4).train()
    with ghost.statistics_across(lambda tensor: 2 * tensor):
        output = ghost(x)
    torch.testing.assert_close(output, _reference_ghost_batch_norm(x, 4))


@pytest.mark.parametrize("rows", [256, 250, 130, 3])  # equal virtual batches, two sizes, a single-row one, tiny
def test_running_statistics_updated_on_the_device_equal_the_grouped_updates(rows):
    torch.manual_seed(0)
    grouped = GhostBatchNorm(5, virtual_batch_size=128 if rows > 3 else 2, momentum=0.3)
    on_device = GhostBatchNorm(5, virtual_batch_size=128 if rows > 3 else 2, momentum=0.3)
    batches = [torch.randn(rows, 5) * 3 + 1 for _ in range(6)]
    grouped.train()
    for batch in batches:
        grouped(batch)
    grouped.flush_running_stats()
    on_device.train()
    with on_device.updating_on_device():
        assert on_device._updates_on_device
        for batch in batches:
            on_device(batch)
            assert on_device._pending == []  # applied at once, nothing held
    # Out of the block: the class default again, and the host's count is read once from the buffer later.
    assert "_updates_on_device" not in vars(on_device) and on_device._tracked_on_host is None
    torch.testing.assert_close(on_device.running_mean, grouped.running_mean, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(on_device.running_var, grouped.running_var, rtol=1e-6, atol=1e-6)
    assert int(on_device.num_batches_tracked) == int(grouped.num_batches_tracked) == 6
    # Training on after the block continues the count: step 7's weight is max(0.3, 1/7) either way.
    grouped(batches[0])
    on_device(batches[0])
    grouped.flush_running_stats()
    on_device.flush_running_stats()
    torch.testing.assert_close(on_device.running_mean, grouped.running_mean, rtol=1e-6, atol=1e-6)


def test_entering_the_on_device_mode_applies_the_pending_updates():
    module = GhostBatchNorm(3, virtual_batch_size=None)
    module.train()
    module(torch.tensor([[0.0, 1.0, 2.0], [2.0, 3.0, 6.0]]))
    assert len(module._pending) == 1
    with module.updating_on_device():
        assert module._pending == []
    # First update: weight 1, so the running values are the batch's mean and unbiased variance.
    torch.testing.assert_close(module.running_mean, torch.tensor([1.0, 2.0, 4.0]))
    torch.testing.assert_close(module.running_var, torch.tensor([2.0, 2.0, 8.0]))


def test_the_on_device_mode_nests_and_only_the_outermost_block_ends_it():
    # A compiled forward (torch_compile) inside a captured step enters the mode twice.
    module = GhostBatchNorm(3, virtual_batch_size=None)
    module.train()
    rows = torch.tensor([[0.0, 1.0, 2.0], [2.0, 3.0, 6.0]])
    with module.updating_on_device():
        with module.updating_on_device():
            module(rows)
        module(rows)  # still updated at once: nothing pending
        assert module._pending == [] and int(module.num_batches_tracked) == 2
    assert "_updates_on_device" not in vars(module)
    module(rows)
    assert len(module._pending) == 1
