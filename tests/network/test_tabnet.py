import pickle

import pytest
import torch

from sparsetab.network import ENTMAX_MODES, InputEmbedding, TabNet


def _inputs(n_rows=64, seed=0):
    generator = torch.Generator().manual_seed(seed)
    numeric = torch.randn(n_rows, 3, generator=generator)
    codes = torch.randint(0, 5, (n_rows, 2), generator=generator).float()
    # columns: numeric, categorical (5 rows), numeric, categorical (5 rows), numeric
    return torch.stack([numeric[:, 0], codes[:, 0], numeric[:, 1], codes[:, 1], numeric[:, 2]], dim=1)


def _network(entmax_mode="sparsemax", **kwargs):
    torch.manual_seed(0)
    return TabNet(
        [None, 5, None, 5, None],
        [1, 3, 1, 2, 1],
        output_dim=4,
        entmax_mode=entmax_mode,
        virtual_batch_size=16,
        **kwargs,
    )


def test_input_embedding_group_matrix_maps_embedded_columns_to_input_columns():
    embedding = InputEmbedding([None, 5, None, 5, None], [1, 3, 1, 2, 1])
    assert embedding.output_dim == 3 + 3 + 2
    expected = torch.zeros(5, 8)
    expected[0, 0] = expected[2, 1] = expected[4, 2] = 1  # numeric columns first
    expected[1, 3:6] = 1
    expected[3, 6:8] = 1
    torch.testing.assert_close(embedding.group_matrix, expected)
    x = _inputs(4)
    out = embedding(x)
    torch.testing.assert_close(out[:, :3], x[:, [0, 2, 4]])
    torch.testing.assert_close(out[:, 3:6], embedding.embeddings[0].weight[x[:, 1].long()])


def test_missing_values_are_filled_and_indicated_inside_their_column_group():
    embedding = InputEmbedding([None, 5, None, 5, None], [1, 3, 1, 2, 1], missing_indicators=[4, 0])
    with torch.no_grad():
        embedding.fill_values.copy_(torch.tensor([-1.5, 0.25, 7.0]))
    # layout: numeric columns 0, 2, 4; indicators of columns 0 and 4; embeddings of 1 (3 wide) and 3 (2 wide)
    assert embedding.output_dim == 3 + 2 + 3 + 2
    expected = torch.zeros(5, 10)
    expected[0, [0, 3]] = expected[2, 1] = expected[4, [2, 4]] = 1
    expected[1, 5:8] = expected[3, 8:10] = 1
    torch.testing.assert_close(embedding.group_matrix, expected)
    x = _inputs(4)
    x[0, 0] = x[1, 2] = x[1, 4] = float("nan")
    out = embedding(x)
    assert torch.isfinite(out).all()
    expected_numeric = x[:, [0, 2, 4]].clone()
    expected_numeric[0, 0], expected_numeric[1, 1], expected_numeric[1, 2] = -1.5, 0.25, 7.0
    torch.testing.assert_close(out[:, :3], expected_numeric)
    # column 2 has no indicator (no missing value at fit): its missing value is only filled
    torch.testing.assert_close(out[:, 3:5], torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0], [0.0, 0.0]]))
    with pytest.raises(ValueError, match="missing_indicators must be numeric columns"):
        InputEmbedding([None, 5], [1, 2], missing_indicators=[1])


@pytest.mark.parametrize("entmax_mode", ENTMAX_MODES)
def test_forward_shapes_and_masks_are_distributions(entmax_mode):
    network = _network(entmax_mode, entmax_alpha=1.3, n_steps=4)
    output, masks, sparsity_loss = network(_inputs())
    assert output.shape == (64, 4)
    assert masks.shape == (4, 64, 5)
    assert sparsity_loss.shape == ()
    assert (masks >= 0).all()
    torch.testing.assert_close(masks.sum(dim=-1), torch.ones(4, 64))


@pytest.mark.parametrize("entmax_mode", ENTMAX_MODES)
def test_every_parameter_receives_a_gradient(entmax_mode):
    network = _network(entmax_mode, entmax_alpha=1.3, missing_indicators=[2])
    x = _inputs()
    x[::3, 0] = x[1::4, 2] = x[::5, 4] = float("nan")  # the fill value of each numeric column gets a gradient
    output, _, sparsity_loss = network(x)
    assert torch.isfinite(output).all()
    (output.square().mean() + 1e-3 * sparsity_loss).backward()
    missing = [name for name, parameter in network.named_parameters() if parameter.grad is None]
    assert missing == []
    assert all(torch.isfinite(parameter.grad).all() for parameter in network.parameters())


def test_sparsity_loss_is_mean_mask_entropy_and_output_is_head_of_relu_sum():
    network = _network().eval()
    x = _inputs()
    output, masks, sparsity_loss = network(x)
    entropy = -(masks * torch.log(masks + 1e-15)).sum(dim=-1).mean()
    torch.testing.assert_close(sparsity_loss, entropy)
    decision, masks_again, step_importance, _ = network.encode(x)
    torch.testing.assert_close(output, network.head(decision))
    torch.testing.assert_close(masks_again, masks)
    # eta_b[i] sums to the L1 norm of the (non-negative) decision output.
    torch.testing.assert_close(step_importance.sum(dim=1), decision.sum(dim=1))


def test_prior_update_follows_the_paper():
    # With gamma = 1 a column fully used at step 1 gets prior 0 and hence score 0 afterwards;
    # we check P[i] = prod_j (gamma - M[j]) by recomputing the second mask from the first.
    network = _network(gamma=1.0, n_steps=2).eval()
    x = _inputs()
    _, masks, _ = network(x)
    attentive = network.attentive_transformers[1]
    features = network.input_bn(network.embedding(x))
    out = network.step_transformers[0](features * (masks[0] @ network.embedding.group_matrix))
    prior = 1.0 - masks[0]
    torch.testing.assert_close(attentive(out[:, network.n_d :], prior), masks[1])


def test_categorical_embedding_dimensions_share_one_mask_value():
    network = _network().eval()
    x = _inputs()
    _, masks, _ = network(x)
    expanded = masks @ network.embedding.group_matrix
    torch.testing.assert_close(expanded[..., 3], expanded[..., 4])  # both from input column 1
    torch.testing.assert_close(expanded[..., 3], masks[..., 1])


def test_adaptive_alpha_is_a_parameter_initialised_at_entmax_alpha():
    network = _network("adaptive", entmax_alpha=1.3)
    assert network.alphas == pytest.approx([1.3] * 3)
    assert any(name.endswith("alpha_logit") for name, _ in network.named_parameters())


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"entmax_mode": "softmax"}, "entmax_mode must be one of"),
        ({"entmax_mode": "constant", "entmax_alpha": 2.5}, "entmax_alpha must be in \\[1, 2\\]"),
        ({"entmax_mode": "adaptive", "entmax_alpha": 2.0}, "needs 1 < entmax_alpha < 2"),
    ],
)
def test_invalid_entmax_settings_are_rejected(kwargs, message):
    with pytest.raises(ValueError, match=message):
        _network(**kwargs)


def test_constant_mode_uses_exact_maps_at_special_alphas():
    x = _inputs()
    reference = {2.0: "sparsemax", 1.5: "entmax15"}
    for alpha, mode in reference.items():
        constant = _network("constant", entmax_alpha=alpha).eval()
        exact = _network(mode).eval()
        torch.testing.assert_close(constant(x)[1], exact(x)[1])
    softmax_masks = _network("constant", entmax_alpha=1.0).eval()(x)[1]
    assert (softmax_masks > 0).all()  # softmax is dense


def test_attention_groups_share_one_mask_value_and_split_it_for_explanations():
    # columns 0 and 2 (numeric) form one group; column 3 (categorical, width 2) joins column 4
    embedding = InputEmbedding([None, 5, None, 5, None], [1, 3, 1, 2, 1], attention_groups=[[0, 2], [1], [3, 4]])
    assert embedding.n_groups == 3
    # embedded layout: numeric 0, 2, 4 then embeddings of 1 (3 dims) and 3 (2 dims)
    expected = torch.tensor(
        [
            [1, 1, 0, 0, 0, 0, 0, 0],
            [0, 0, 0, 1, 1, 1, 0, 0],
            [0, 0, 1, 0, 0, 0, 1, 1],
        ],
        dtype=torch.float32,
    )
    torch.testing.assert_close(embedding.group_matrix, expected)
    explanation = torch.tensor(
        [[0.5, 0, 0.5, 0, 0], [0, 1, 0, 0, 0], [0, 0, 0, 0.5, 0.5]],
        dtype=torch.float32,
    )
    torch.testing.assert_close(embedding.explanation_matrix, explanation)


@pytest.mark.parametrize("groups", [[[0, 1], [1, 2, 3, 4]], [[0, 1, 2, 3]], [[0], [], [1, 2, 3, 4]], [[0, 1, 2, 3, 5]]])
def test_attention_groups_must_partition_the_columns(groups):
    with pytest.raises(ValueError, match="cover each of the 5 columns exactly once"):
        InputEmbedding([None, 5, None, 5, None], [1, 3, 1, 2, 1], attention_groups=groups)


def test_grouped_network_masks_have_one_value_per_group():
    network = _network(attention_groups=[[0, 2], [1], [3, 4]]).eval()
    _, masks, _ = network(_inputs())
    assert masks.shape == (3, 64, 3)
    torch.testing.assert_close(masks.sum(dim=-1), torch.ones(3, 64))
    expanded = masks @ network.embedding.group_matrix
    torch.testing.assert_close(expanded[..., 0], expanded[..., 1])  # numeric columns 0 and 2 share a weight


@pytest.mark.parametrize("entmax_mode", ENTMAX_MODES)
def test_exportable_attention_gives_the_same_masks(entmax_mode):
    network = _network(entmax_mode, entmax_alpha=1.3).eval()
    x = _inputs()
    with torch.no_grad():
        _, masks, _ = network(x)
        for attentive in network.attentive_transformers:
            attentive.exportable = True
        _, exported_masks, _ = network(x)
    torch.testing.assert_close(exported_masks, masks, atol=1e-5, rtol=0)


@pytest.mark.parametrize("entmax_mode", ["sparsemax", "entmax15"])
def test_sparsity_loss_is_the_mean_mask_entropy_with_its_gradient(entmax_mode):
    # L_sparse = sum_i sum_b sum_j -M log(M + epsilon) / (N_steps * B) (paper, section 3), computed here per
    # row with scipy's entropy (natural log); zero entries contribute nothing.
    from scipy.stats import entropy

    network = _network(entmax_mode).double().train()
    x = _inputs(48).double()
    _, masks, sparsity_loss = network(x)
    rows = masks.detach().reshape(-1, masks.shape[-1]).numpy()
    assert (rows == 0).any()  # the zeros of the sparse maps are part of what is checked
    assert sparsity_loss.item() == pytest.approx(entropy(rows, axis=1).mean(), rel=1e-12)
    # The network's gradient with respect to the masks is the derivative of that formula,
    # -(log(M + epsilon) + M / (M + epsilon)) / (N_steps * B); at M = 0 it is -log(epsilon).
    (gradient,) = torch.autograd.grad(sparsity_loss, masks)
    M, epsilon = masks.detach(), network.epsilon
    expected = -(torch.log(M + epsilon) + M / (M + epsilon)) / (masks.shape[0] * masks.shape[1])
    torch.testing.assert_close(gradient, expected)


def test_forward_hooks_on_the_transformers_run():
    # The documented boundary (sparsetab.network): hooks on the feature and attentive transformers run,
    # the blocks inside a feature transformer are called through forward directly.
    network = _network().train()
    seen = []
    for name, module in [("initial", network.initial_transformer)] + [
        (f"{kind}{index}", module)
        for kind, modules in (("step", network.step_transformers), ("attentive", network.attentive_transformers))
        for index, module in enumerate(modules)
    ]:
        module.register_forward_hook(lambda module, inputs, output, name=name: seen.append((name, output.shape)))
    output, masks, _ = network(_inputs(32))
    n_steps = network.n_steps
    assert [name for name, _ in seen] == ["initial"] + [
        name for step in range(n_steps) for name in (f"attentive{step}", f"step{step}")
    ]
    assert seen[1][1] == masks.shape[1:]


@pytest.mark.parametrize("numerical_embedding", ["piecewise_linear", "periodic"])
def test_numerical_embeddings_keep_one_mask_value_per_input_column(numerical_embedding):
    bins = {"bin_counts": [4, 0, 3, 0, 0]} if numerical_embedding == "piecewise_linear" else {}
    network = _network(numerical_embedding=numerical_embedding, embedding_dim=2, n_bins=5, **bins)
    if numerical_embedding == "piecewise_linear":
        network.embedding.set_bin_edges([torch.linspace(-2, 2, 5), None, torch.linspace(-1, 1, 4), None, None])
    x = _inputs(32)
    x[::5, 0] = float("nan")
    output, masks, sparsity = network(x)
    assert output.shape == (32, 4) and torch.isfinite(output).all() and torch.isfinite(sparsity)
    assert masks.shape == (3, 32, 5)  # one value per input column, however wide its embedding
    explained = masks @ network.embedding.explanation_matrix
    torch.testing.assert_close(explained.sum(dim=2), torch.ones(3, 32))
    output.sum().backward()
    assert all(parameter.grad is not None for parameter in network.embedding.numerical.parameters())


@pytest.mark.parametrize("entmax_mode", ENTMAX_MODES)
def test_constant_groups_get_mask_zero_and_their_values_reach_no_step(entmax_mode):
    network = _network(entmax_mode, entmax_alpha=1.3, constant_groups=[1, 4])
    torch.testing.assert_close(network.constant_columns, torch.tensor([0, 0, 1, 1, 1, 1, 0, 0], dtype=torch.bool))
    assert network.state_dict().keys() == _network(entmax_mode, entmax_alpha=1.3).state_dict().keys()
    x = _inputs()
    network.train()
    network(x)  # a training step's statistics, so that eval uses running statistics
    network.eval()
    with torch.no_grad():
        output, masks, _ = network(x)
        changed = x.clone()
        changed[:, 1] = (changed[:, 1] + 1) % 5  # other categories
        changed[:, 4] = 1e3
        changed_output, changed_masks, _ = network(changed)
    assert (masks[:, :, [1, 4]] == 0).all()
    torch.testing.assert_close(masks.sum(dim=2), torch.ones(masks.shape[:2]))
    assert torch.equal(output, changed_output) and torch.equal(masks, changed_masks)


def test_every_group_constant_is_refused():
    with pytest.raises(ValueError, match="masked_groups must leave at least one of the 5 groups"):
        _network(constant_groups=[0, 1, 2, 3, 4])


def test_a_network_pickled_before_constant_groups_unpickles_without_them():
    network = _network()
    for module in [network, *network.attentive_transformers]:
        del module._buffers["constant_columns" if module is network else "masked"]
    restored = pickle.loads(pickle.dumps(network))
    assert restored.constant_columns is None
    assert all(attentive.masked is None for attentive in restored.attentive_transformers)
    restored.eval()
    with torch.no_grad():
        restored(_inputs())


def _constant_gates(network, values):
    # Zero weights: each step's gate is the sigmoid of its bias, the same for every row.
    with torch.no_grad():
        network.gates.scores.weight.zero_()
        network.gates.scores.bias.copy_(torch.logit(torch.tensor(values)))


def test_a_gated_network_shares_the_ungated_initial_weights_and_adds_only_the_gates():
    ungated = _network()
    gated = _network(step_gates="sigmoid")
    state, gated_state = ungated.state_dict(), gated.state_dict()
    assert not any(name.startswith("gates.") for name in state)
    assert set(gated_state) - set(state) == {"gates.scores.weight", "gates.scores.bias"}
    for name, value in state.items():
        torch.testing.assert_close(gated_state[name], value, rtol=0, atol=0)
    assert len(ungated.eval()(_inputs())) == 3


def test_gated_output_is_the_head_of_the_gated_sum_of_the_step_outputs():
    ungated = _network().eval()
    gated = _network(step_gates="sigmoid").eval()
    gate_values = [0.25, 0.1, 0.75]
    _constant_gates(gated, gate_values)
    x = _inputs()
    with torch.no_grad():
        step_decisions, _, _ = ungated.decision_steps(x)
        output, masks, sparsity_loss, gate_loss = gated(x)
        expected = ungated.head(sum(g * step for g, step in zip(gate_values, step_decisions)))
        torch.testing.assert_close(output, expected)
        torch.testing.assert_close(masks, ungated(x)[1])
        encoded = gated.encode_steps(x)
        torch.testing.assert_close(encoded.step_gates, torch.tensor(gate_values).expand(64, 3))
        eta = torch.stack([step.sum(dim=1) for step in step_decisions], dim=1)
        torch.testing.assert_close(encoded.step_importance, eta * torch.tensor(gate_values))
        gated_steps, _, _ = gated.decision_steps(x)
        torch.testing.assert_close(gated_steps[0], 0.25 * step_decisions[0])
        # The share entropy of each row's weights g * eta, mean over rows: the same in both forward passes.
        weights = eta * torch.tensor(gate_values)
        shares = weights / weights.sum(dim=1, keepdim=True)
        entropy = -(shares * torch.log(shares + torch.finfo(shares.dtype).eps)).sum(dim=1).mean()
        torch.testing.assert_close(gate_loss, entropy)
        torch.testing.assert_close(encoded.gate_loss, entropy)


def test_each_gate_reads_the_attention_features_its_step_mask_is_computed_from():
    network = _network(step_gates="sigmoid").eval()
    outputs = []
    transformers = [network.initial_transformer, *network.step_transformers]
    handles = [
        transformer.register_forward_hook(lambda module, args, out: outputs.append(out)) for transformer in transformers
    ]
    with torch.no_grad():
        gates = network.encode_steps(_inputs()).step_gates
    for handle in handles:
        handle.remove()
    attention = [out[:, network.n_d :] for out in outputs]  # a[0] (initial) .. a[n_steps]
    weight, bias = network.gates.scores.weight, network.gates.scores.bias
    for step in range(network.n_steps):
        torch.testing.assert_close(gates[:, step], torch.sigmoid(attention[step] @ weight[step] + bias[step]))


def test_every_gate_parameter_receives_a_gradient():
    network = _network(step_gates="sigmoid")
    output, _, sparsity_loss, gate_loss = network(_inputs())
    (output.square().mean() + sparsity_loss + gate_loss).backward()
    for name, parameter in network.gates.named_parameters():
        assert parameter.grad is not None and bool(parameter.grad.abs().sum() > 0), name


def test_unknown_step_gates_are_refused():
    with pytest.raises(ValueError, match=r"step_gates must be one of \('sigmoid',\) or None, got 'sparsemax'"):
        _network(step_gates="sparsemax")


def test_a_network_pickled_before_step_gates_unpickles_without_them():
    network = _network()
    del network.__dict__["gates"]
    restored = pickle.loads(pickle.dumps(network))
    assert restored.gates is None
    restored.eval()
    with torch.no_grad():
        assert len(restored(_inputs())) == 3


@pytest.mark.parametrize("entmax_mode", ENTMAX_MODES)
def test_a_training_step_on_the_path_of_a_gpu_reads_nothing_back_and_gives_the_cpu_masks_and_gradients(entmax_mode):
    # Off the CPU (forced here) sparsemax and 1.5-entmax sort, and alpha-entmax makes a fixed number of
    # evaluations: the network's forward and backward read no value back to the host.
    from tests.entmax.host_reads import convergence_tests, counted_host_reads, sorting_on_the_cpu

    def step():
        network = _network(entmax_mode, entmax_alpha=1.3).train()
        output, masks, sparsity_loss = network(_inputs())
        (output.square().mean() + 1e-3 * sparsity_loss).backward()
        return masks.detach(), {name: parameter.grad for name, parameter in network.named_parameters()}

    masks, gradients = step()
    reads = [0]
    with sorting_on_the_cpu(), convergence_tests(True), counted_host_reads(reads):
        sorted_masks, sorted_gradients = step()
    assert reads[0] == 0
    # float32 rounding of the two thresholds, carried through three steps' priors: a few 1e-6.
    torch.testing.assert_close(sorted_masks, masks, atol=1e-5, rtol=0)
    for name, gradient in gradients.items():
        torch.testing.assert_close(sorted_gradients[name], gradient, atol=1e-5, rtol=1e-4, msg=name)
