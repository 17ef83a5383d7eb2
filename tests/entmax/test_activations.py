import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch.autograd import gradcheck, gradgradcheck
from torch.testing import assert_close

from sparsetab.entmax import Entmax15, Sparsemax, entmax15, sparsemax
from sparsetab.entmax._threshold_kernels import (
    entmax_threshold_and_support,
    sparsemax_threshold_and_support,
)
from tests.entmax.entmax_reference import SETTINGS, matrices, reference_entmax

# ---------------------------------------------------------------- hand-worked values


def test_sparsemax_hand_computed_full_support():
    # Sorted z = (.5, .2, -.1): 1 + j z_j > cumsum_j holds for j = 1, 2, 3
    # (1.5 > .5, 1.4 > .7, .7 > .6), so tau = (.6 - 1) / 3 = -2/15.
    p = sparsemax(torch.tensor([0.5, 0.2, -0.1], dtype=torch.float64))
    assert_close(p, torch.tensor([19 / 30, 1 / 3, 1 / 30], dtype=torch.float64))


def test_sparsemax_hand_computed_sparse():
    # j = 3 fails (1 - 3 = -2 < .5), so tau = (1.5 - 1) / 2 = .25.
    p = sparsemax(torch.tensor([1.0, 0.5, -1.0], dtype=torch.float64))
    assert_close(p, torch.tensor([0.75, 0.25, 0.0], dtype=torch.float64))


def test_entmax15_hand_computed():
    # p = [x/2 - tau]_+^2 on support {1, 2}: with a = 1 - tau,
    # a^2 + (a - 1/2)^2 = 1 -> a = (1 + sqrt 7) / 4, giving p = (4 +- sqrt 7) / 8;
    # the third entry has 0 - tau = a - 1 < 0.
    p = entmax15(torch.tensor([2.0, 1.0, 0.0], dtype=torch.float64))
    r7 = math.sqrt(7)
    assert_close(p, torch.tensor([(4 + r7) / 8, (4 - r7) / 8, 0.0], dtype=torch.float64))


def test_entmax15_one_hot_when_gap_is_large():
    # x/2 = (1.5, 0): tau = .5 leaves the second entry at 0 - .5 < 0.
    assert_close(entmax15(torch.tensor([3.0, 0.0])), torch.tensor([1.0, 0.0]))


def test_kernels_return_threshold_and_support_with_kept_dim():
    X = torch.tensor([[0.5, 1.0], [0.2, 0.5], [-0.1, -1.0]], dtype=torch.float64)
    tau, support = sparsemax_threshold_and_support(X, dim=0)
    assert tau.shape == support.shape == (1, 2)
    assert not support.is_floating_point()
    assert support.tolist() == [[3, 2]]
    assert_close(tau, torch.tensor([[-2 / 15, 0.25]], dtype=torch.float64))

    tau, support = entmax_threshold_and_support(torch.tensor([[1.0, 0.5, 0.0]]), dim=-1, k=1)
    assert support.tolist() == [[2]]
    assert_close(tau, torch.tensor([[1 - (1 + math.sqrt(7)) / 4]]))


# ---------------------------------------------------------------- edge cases


@pytest.mark.parametrize("f", [sparsemax, entmax15])
def test_constant_rows_ties_and_neg_inf(f):
    inf = float("inf")
    X = torch.tensor([[3.0, 3.0, 3.0, 3.0], [0.0, -inf, 0.0, -inf], [-inf, -inf, 7.0, -inf]])
    expected = torch.tensor([[0.25] * 4, [0.5, 0.0, 0.5, 0.0], [0.0, 0.0, 1.0, 0.0]])
    assert_close(f(X), expected)
    assert_close(f(X, k=1), expected)


@pytest.mark.parametrize("f", [sparsemax, entmax15])
def test_neg_inf_entries_get_zero_and_finite_gradients(f):
    X = torch.tensor([1.0, -float("inf"), 0.3, 0.2], dtype=torch.float64, requires_grad=True)
    p = f(X)
    assert p[1] == 0 and torch.isfinite(p).all()
    (p * torch.arange(4.0, dtype=torch.float64)).sum().backward()
    assert torch.isfinite(X.grad).all() and X.grad[1] == 0


@pytest.mark.parametrize("f", [sparsemax, entmax15])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_dtype_shape_and_one_dim_input_preserved(f, dtype):
    X = torch.randn(2, 3, 5, dtype=dtype, generator=torch.Generator().manual_seed(0))
    for dim in (0, 1, -1):
        p = f(X, dim=dim)
        assert p.dtype == dtype and p.shape == X.shape
        assert_close(p.sum(dim), torch.ones(()).to(dtype).expand(p.sum(dim).shape))
    assert f(X[0, 0]).shape == (5,)


@pytest.mark.parametrize("f", [sparsemax, entmax15, Sparsemax, Entmax15])
@pytest.mark.parametrize("bad", [0, -3, 2.5, "4", True])
def test_invalid_k_raises_value_error_naming_k(f, bad):
    with pytest.raises(ValueError, match=r"k must be a positive integer or None, got k="):
        if isinstance(f, type):
            f(k=bad)
        else:
            f(torch.zeros(3), k=bad)


@pytest.mark.parametrize("f", [sparsemax, entmax15])
def test_invalid_dim_and_empty_dim(f):
    with pytest.raises(IndexError):
        f(torch.zeros(2, 3), dim=2)
    with pytest.raises(ValueError, match="size 0"):
        f(torch.zeros(2, 0))
    assert f(torch.zeros(0, 3)).shape == (0, 3)


def test_modules_match_functional():
    X = torch.randn(4, 6, generator=torch.Generator().manual_seed(1))
    assert torch.equal(Sparsemax(dim=0, k=2)(X), sparsemax(X, dim=0))
    assert torch.equal(Entmax15(dim=1)(X), entmax15(X, dim=1))
    assert "dim=0, k=2" in repr(Sparsemax(dim=0, k=2))


# ---------------------------------------------------------------- gradients


@pytest.mark.parametrize("f", [sparsemax, entmax15])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gradcheck(f, dim):
    X = torch.randn(3, 4, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(dim + 3))
    X.requires_grad_()
    assert gradcheck(lambda x: f(x, dim=dim), (X,))
    assert gradcheck(lambda x: f(x, dim=dim, k=2), (X,))
    assert gradgradcheck(lambda x: f(x, dim=dim), (X,))


def test_sparsemax_backward_is_centred_on_support():
    X = torch.tensor([1.0, 0.5, -1.0], dtype=torch.float64, requires_grad=True)
    sparsemax(X).backward(torch.tensor([3.0, 1.0, 5.0], dtype=torch.float64))
    # Support {0, 1}: g - mean_S(g) = (3 - 2, 1 - 2); off-support gets 0.
    assert_close(X.grad, torch.tensor([1.0, -1.0, 0.0], dtype=torch.float64))


def test_entmax15_backward_closed_form():
    X = torch.tensor([2.0, 1.0, 0.0], dtype=torch.float64, requires_grad=True)
    p = entmax15(X)
    g = torch.tensor([1.0, -2.0, 4.0], dtype=torch.float64)
    p.backward(g)
    s = p.detach().sqrt()
    assert_close(X.grad, s * g - s * (s * g).sum() / s.sum())
    assert X.grad[2] == 0


def test_vmap_matches_batched_call():
    X = torch.randn(7, 5, generator=torch.Generator().manual_seed(2))
    assert_close(torch.func.vmap(sparsemax)(X), sparsemax(X))
    assert_close(torch.func.vmap(entmax15)(X), entmax15(X))


# ---------------------------------------------------------------- properties


@pytest.mark.parametrize(("f", "alpha"), [(sparsemax, 2.0), (entmax15, 1.5)])
@SETTINGS
@given(X=matrices)
def test_properties_and_reference(f, alpha, X):
    p = f(X)
    assert (p >= 0).all()
    assert_close(p.sum(-1), torch.ones(X.shape[0], dtype=X.dtype))
    assert_close(p, reference_entmax(X, alpha), atol=1e-9, rtol=0)


def test_rounding_at_a_tied_threshold_does_not_depend_on_k():
    # In float32 the entmax15 candidate for j = 3 rounds just above the tied
    # zeros while j = 4 does not; the support must still be the leading run.
    X = torch.tensor([[1.0, 0.0, 0.0, 0.0]])
    for k in (None, 1, 2, 3, 4):
        tau, support = entmax_threshold_and_support(X, k=k)
        assert support.item() == 2 and tau.item() == 0.0
    assert torch.equal(entmax15(X * 2, k=3), torch.tensor([[1.0, 0.0, 0.0, 0.0]]))


@SETTINGS
@given(matrices, st.sampled_from([torch.float32, torch.float64]))
def test_result_identical_for_every_k(X, dtype):
    X = X.to(dtype)
    for f, kernel in ((sparsemax, sparsemax_threshold_and_support), (entmax15, entmax_threshold_and_support)):
        full, (tau, support) = f(X), kernel(X)
        for k in (1, 2, 3, 5, 100):
            assert torch.equal(f(X, k=k), full)
            tau_k, support_k = kernel(X, k=k)
            assert torch.equal(tau_k, tau) and torch.equal(support_k, support)


@SETTINGS
@given(matrices, st.floats(-100, 100))
def test_invariant_to_adding_a_constant_per_row(X, c):
    shift = c * torch.arange(X.shape[0], dtype=X.dtype).unsqueeze(1)
    assert_close(sparsemax(X + shift), sparsemax(X), atol=1e-9, rtol=0)
    assert_close(entmax15(X + shift), entmax15(X), atol=1e-9, rtol=0)


@SETTINGS
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.data())
def test_any_dim_matches_moving_dim_last(shape, data):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    seed = data.draw(st.integers(0, 2**16))
    X = torch.randn(shape, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))
    for f in (sparsemax, entmax15):
        expected = f(X.movedim(dim, -1)).movedim(-1, dim)
        assert_close(f(X, dim=dim), expected)
        assert_close(f(X, dim=dim, k=1), expected)


@pytest.mark.parametrize("function", [sparsemax, entmax15])
@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_non_finite_rows_propagate_nan_without_failing(function, bad):
    X = torch.tensor([[0.5, bad, 0.2], [0.5, 0.2, -0.1]])
    Y = function(X)
    assert torch.isnan(Y[0]).any()  # not a distribution: the NaN reaches the loss
    assert_close(Y[1], function(X[1:])[0])


# ---------------------------------------------------------------- sort-free solver


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("d", [2, 64, 3000])
def test_sort_free_matches_sort_based_closed_form(dtype, d):
    # Scales from nearly uniform to nearly one-hot, an offset far from 0 (the
    # solver must shift by the max to keep float32 precision), and ties.
    gen = torch.Generator().manual_seed(d)
    X = torch.cat(
        [
            torch.randn(4, d, generator=gen) * 0.01,
            torch.randn(4, d, generator=gen) * 3,
            torch.randn(4, d, generator=gen) + 1000,
            torch.randint(-2, 3, (4, d), generator=gen).float(),
        ]
    ).to(dtype)
    tol = {torch.float32: 1e-6, torch.float64: 1e-12}[dtype]
    for f in (sparsemax, entmax15):
        assert_close(f(X), f(X, training=False), atol=tol, rtol=0)


@pytest.mark.parametrize("f", [sparsemax, entmax15])
def test_sort_based_fallback_gives_the_same_result_for_every_k(f, monkeypatch):
    # Rows the iteration has not settled within _MAX_ITER passes are finished
    # by the sort-based solver; force that path for every row.
    import sparsetab.entmax._threshold_kernels as kernels

    X = torch.randn(5, 40, dtype=torch.float64, generator=torch.Generator().manual_seed(7))
    X[1] = -math.inf
    expected = f(X)
    monkeypatch.setattr(kernels, "_MAX_ITER", 1)
    for k in (None, 1, 3, 100):
        assert_close(f(X, k=k), expected, atol=1e-12, rtol=0)
    assert torch.equal(f(X, k=1), f(X, k=3))


# ---------------------------------------------------------------- robustness


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("f", [sparsemax, entmax15])
def test_neg_inf_entries_get_exactly_zero_probability_and_gradient(f, training):
    X = torch.randn(4, 9, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    X[:, ::3] = -math.inf
    X.requires_grad_()
    P = f(X, training=training)
    assert (P[:, ::3] == 0).all() and torch.isfinite(P).all()
    (P * torch.randn(4, 9, dtype=torch.float64)).sum().backward()
    assert (X.grad[:, ::3] == 0).all() and torch.isfinite(X.grad).all()


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("f", [sparsemax, entmax15])
def test_all_neg_inf_row_gives_zeros_with_zero_gradient(f, training):
    X = torch.tensor([[-math.inf] * 4, [0.3, -math.inf, 1.0, 0.2]], dtype=torch.float64, requires_grad=True)
    P = f(X, training=training)
    assert torch.equal(P[0], torch.zeros(4, dtype=torch.float64))
    assert_close(P[1].sum(), torch.tensor(1.0, dtype=torch.float64))
    (P * torch.arange(8.0, dtype=torch.float64).view(2, 4)).sum().backward()
    assert torch.equal(X.grad[0], torch.zeros(4, dtype=torch.float64))
    assert torch.isfinite(X.grad).all()
    if training:
        assert torch.equal(f(X.detach(), k=1)[0], torch.zeros(4, dtype=torch.float64))


@pytest.mark.parametrize("f", [sparsemax, entmax15])
def test_negative_dim_other_than_last_with_k(f):
    X = torch.randn(3, 8, 4, generator=torch.Generator().manual_seed(5))
    expected = f(X.movedim(-2, -1)).movedim(-1, -2)
    assert_close(f(X, dim=-2, k=2), expected)
    assert_close(f(X, dim=-2, training=False), expected)
    assert_close(f(X, dim=-2, k=2).sum(-2), torch.ones(3, 4))
    # The sort-based helpers take the same dim and k: the top-2 prefix is too
    # short for most slices here, so the doubling fallback runs along dim -2 too.
    kernel = sparsemax_threshold_and_support if f is sparsemax else entmax_threshold_and_support
    Z = X if f is sparsemax else X / 2
    tau, support = kernel(Z, dim=-2, k=2)
    assert tau.shape == support.shape == (3, 1, 4)
    full_tau, full_support = kernel(Z, dim=-2)
    assert torch.equal(support, full_support) and (support > 2).any()
    assert_close(tau, full_tau)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("f", [sparsemax, entmax15])
def test_low_precision_is_computed_in_float32_and_cast_back(f, dtype, training):
    X = (torch.randn(6, 300, generator=torch.Generator().manual_seed(11)) * 3).to(dtype).requires_grad_()
    P = f(X, training=training)
    assert P.dtype == dtype and P.shape == X.shape
    assert_close(P.float().sum(-1), torch.ones(6), atol=1e-2, rtol=0)
    # The same as the float32 result on the same (rounded) scores, up to the final cast.
    assert_close(P, f(X.detach().float(), training=training).to(dtype))
    P.float().pow(2).sum().backward()
    assert X.grad.dtype == dtype and torch.isfinite(X.grad.float()).all()


@pytest.mark.parametrize("f", [sparsemax, entmax15])
def test_invalid_inputs_raise_errors_naming_the_argument(f):
    with pytest.raises(TypeError, match="X must be a floating-point tensor"):
        f(torch.arange(4))
    with pytest.raises(TypeError, match="X must be a floating-point tensor"):
        f(torch.ones(3, dtype=torch.bool))
    with pytest.raises(TypeError, match="X must be a torch.Tensor"):
        f([0.1, 0.2])
    with pytest.raises(ValueError, match="X must have at least one dimension"):
        f(torch.tensor(1.0))
    with pytest.raises(ValueError, match="X must have at least one dimension"):
        f(torch.tensor(1.0), training=False)
    with pytest.raises(TypeError, match="dim must be an int"):
        f(torch.zeros(3), dim=0.5)
    with pytest.raises(ValueError, match="k must be a positive integer"):
        f(torch.zeros(3), k=0, training=False)


@pytest.mark.parametrize("f", [sparsemax, entmax15])
def test_double_backward_is_correct_and_finite(f):
    X = torch.randn(2, 3, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(13))
    X[0, 1, 2] = -math.inf  # -inf entries must not turn the second derivative into NaN
    X.requires_grad_()
    for training in (True, False):
        assert gradgradcheck(lambda x: f(x, dim=1, training=training), (X,))
        (g,) = torch.autograd.grad((f(X, training=training) ** 3).sum(), X, create_graph=True)
        (gg,) = torch.autograd.grad(g.pow(2).sum(), X)
        assert torch.isfinite(g).all() and torch.isfinite(gg).all()


# jacfwd makes torch load its own TorchScript decompositions, which warns.
@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")
@pytest.mark.parametrize("f", [sparsemax, entmax15])
def test_func_transforms(f):
    X = torch.randn(6, 7, dtype=torch.float64, generator=torch.Generator().manual_seed(17))
    w = torch.linspace(-1, 1, 7, dtype=torch.float64)
    assert_close(torch.func.vmap(lambda x: f(x, k=2))(X), f(X))
    per_row = torch.func.vmap(torch.func.grad(lambda x: (f(x) * w).sum()))(X)
    X_ = X.clone().requires_grad_()
    (f(X_) * w).sum().backward()
    assert_close(per_row, X_.grad)
    # Forward mode (custom jvp) agrees with reverse mode.
    assert_close(torch.func.jacfwd(f)(X[0]), torch.func.jacrev(f)(X[0]))


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("f", [sparsemax, entmax15])
def test_torch_compile_smoke(f, training):
    X = torch.randn(4, 6, generator=torch.Generator().manual_seed(19), requires_grad=True)
    compiled = torch.compile(lambda x: (f(x, training=training) * torch.arange(6.0)).sum(), backend="aot_eager")
    compiled(X).backward()
    expected = X.grad.clone()
    X.grad = None
    (f(X) * torch.arange(6.0)).sum().backward()
    assert_close(expected, X.grad)


# ---------------------------------------------------------------- training=False: exportable path


@pytest.mark.parametrize("f", [sparsemax, entmax15])
def test_training_false_matches_and_ignores_k(f):
    X = torch.randn(5, 11, dtype=torch.float64, generator=torch.Generator().manual_seed(23), requires_grad=True)
    P = f(X, training=False, k=3)
    assert_close(P, f(X.detach()))
    g = torch.randn(5, 11, dtype=torch.float64)
    (grad_eval,) = torch.autograd.grad(P, X, g)
    (grad_train,) = torch.autograd.grad(f(X), X, g)
    assert_close(grad_eval, grad_train)
    assert gradcheck(lambda x: f(x, training=False), (X,))


@pytest.mark.parametrize("M", [Sparsemax, Entmax15])
def test_modules_switch_solver_with_eval(M, monkeypatch):
    import sparsetab.entmax.activations as activations

    module = M(dim=-1, k=2)
    X = torch.randn(3, 5)
    train_out = module(X)
    # In eval mode the autograd.Function (the training solver) must not run.
    monkeypatch.setattr(activations, "_sparsemax_sortfree_apply", None)
    monkeypatch.setattr(activations, "_entmax15_sortfree_apply", None)
    assert_close(module.eval()(X), train_out)
    with pytest.raises(TypeError):
        module.train()(X)


def _other_inputs():
    gen = torch.Generator().manual_seed(29)
    return [
        torch.randn(9, 7, generator=gen) * 4,
        torch.randn(1, 7, generator=gen) - 50,
        torch.randn(30, 7, generator=gen),
    ]


@pytest.mark.parametrize("M", [Sparsemax, Entmax15])
def test_export_of_eval_module_handles_other_values_and_batch_sizes(M):
    module = M().eval()
    batch = torch.export.Dim("batch")
    program = torch.export.export(module, (torch.randn(4, 7),), dynamic_shapes={"X": {0: batch}})
    for X in _other_inputs():
        assert_close(program.module()(X), module(X))


@pytest.mark.parametrize("f", [sparsemax, entmax15])
def test_export_of_functional_training_false(f):
    class Wrapper(torch.nn.Module):
        def forward(self, X):
            return f(X, dim=-1, training=False)

    program = torch.export.export(Wrapper(), (torch.randn(4, 7),))
    X = torch.randn(4, 7) * 5
    assert_close(program.module()(X), f(X))


# TorchScript is deprecated in torch >= 2.10 (warns) but still asked for by users.
@pytest.mark.filterwarnings("ignore::torch.jit.TracerWarning", "ignore::DeprecationWarning")
@pytest.mark.parametrize("M", [Sparsemax, Entmax15])
def test_jit_trace_save_load_handles_other_values_and_batch_sizes(M, tmp_path):
    module = M().eval()
    traced = torch.jit.trace(module, (torch.randn(4, 7),))
    torch.jit.save(traced, tmp_path / "traced.pt")
    loaded = torch.jit.load(tmp_path / "traced.pt")
    for X in _other_inputs():
        assert_close(loaded(X), module(X))


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("M", [Sparsemax, Entmax15])
def test_jit_script_save_load_of_eval_module(M, tmp_path):
    scripted = torch.jit.script(M(dim=-1).eval())
    torch.jit.save(scripted, tmp_path / "scripted.pt")
    loaded = torch.jit.load(tmp_path / "scripted.pt")
    for X in _other_inputs():
        assert_close(loaded(X), M()(X))
    # The training solver is not scriptable; a scripted module says so if asked.
    with pytest.raises(Exception, match="ignored"):
        loaded.train()(torch.randn(2, 7))
