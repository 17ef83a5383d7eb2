import inspect
import math

import entmax.losses as oracle
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.autograd import gradcheck
from torch.testing import assert_close

from sparsetab.entmax import entmax15, entmax_bisect, root_finding, sparsemax, sparsemax_bisect
from sparsetab.entmax import losses as L
from sparsetab.entmax.losses import (
    Entmax15Loss,
    EntmaxBisectLoss,
    NormmaxBisectLoss,
    SparsemaxBisectLoss,
    SparsemaxLoss,
    entmax15_loss,
    entmax_bisect_loss,
    normmax_bisect_loss,
    sparsemax_bisect_loss,
    sparsemax_loss,
)
from tests.entmax.entmax_reference import matrices, seeded

F64 = torch.float64
INF = float("inf")
PROPERTY = settings(max_examples=15, deadline=None)

needs_normmax = pytest.mark.skipif(
    not hasattr(root_finding, "normmax_bisect"),
    reason="sparsetab.entmax.root_finding.normmax_bisect has not landed yet (it is being added separately)",
)


def targets(n, d, seed=0):
    return torch.randint(0, d, (n,), generator=torch.Generator().manual_seed(seed))


def normmax(X, alpha):
    return root_finding.normmax_bisect(X, alpha=alpha)


def case(loss, prediction, name, strongly_convex=True, marks=()):
    """A loss ``loss(X, y)``, its map ``prediction(X)``; strongly_convex: L >= ||p - e_y||^2 / 2."""
    return pytest.param(loss, prediction, strongly_convex, id=name, marks=marks)


CASES = [
    case(sparsemax_loss, sparsemax, "sparsemax"),
    case(lambda X, y: sparsemax_loss(X, y, k=2), sparsemax, "sparsemax-k2"),
    case(sparsemax_bisect_loss, sparsemax_bisect, "sparsemax_bisect"),
    case(entmax15_loss, entmax15, "entmax15"),
    case(lambda X, y: entmax15_loss(X, y, k=2), entmax15, "entmax15-k2"),
    case(lambda X, y: entmax_bisect_loss(X, y, alpha=1), lambda X: torch.softmax(X, -1), "bisect-1-softmax"),
    case(lambda X, y: entmax_bisect_loss(X, y, alpha=1.25), lambda X: entmax_bisect(X, 1.25), "bisect-1.25"),
    case(entmax_bisect_loss, entmax_bisect, "bisect-1.5"),
    case(lambda X, y: entmax_bisect_loss(X, y, alpha=3.0), lambda X: entmax_bisect(X, 3.0), "bisect-3", False),
    case(normmax_bisect_loss, lambda X: normmax(X, 2), "normmax-2", False, needs_normmax),
    case(
        lambda X, y: normmax_bisect_loss(X, y, alpha=3.0), lambda X: normmax(X, 3.0), "normmax-3", False, needs_normmax
    ),
]


def loss_and_grad(loss, X, y):
    X = X.detach().clone().requires_grad_()
    value = loss(X, y)
    value.sum().backward()
    return value.detach(), X.grad


# ---------------------------------------------------------------- hand-worked values


@pytest.mark.parametrize("loss", [sparsemax_loss, sparsemax_bisect_loss, lambda X, y: entmax_bisect_loss(X, y, 2.0)])
@pytest.mark.parametrize("t", [-3.0, -1.0, -0.5, 0.0, 0.5, 0.75, 1.0, 2.5])
def test_binary_sparsemax_loss_is_modified_huber(loss, t):
    # x = (t, 0), gold class 0: p = e_0 for t >= 1, e_1 for t <= -1, else
    # ((1 + t) / 2, (1 - t) / 2), so L = 0, -t, and (1 - t)^2 / 4 respectively.
    expected = 0.0 if t >= 1 else -t if t <= -1 else (1 - t) ** 2 / 4
    p0 = min(max((1 + t) / 2, 0.0), 1.0)
    value, grad = loss_and_grad(loss, torch.tensor([[t, 0.0]], dtype=F64), torch.tensor([0]))
    assert_close(value, torch.tensor([expected], dtype=F64), atol=1e-12, rtol=0)
    assert_close(grad, torch.tensor([[p0 - 1, 1 - p0]], dtype=F64), atol=1e-12, rtol=0)


def test_sparsemax_loss_three_classes_by_hand():
    # p = (19/30, 1/3, 1/30) (tau = -2/15); with y = 1:
    # L = ||e_y - x||^2 / 2 - ||p - x||^2 / 2 = 0.9 / 2 - (3 * (2/15)^2) / 2 = 127/300.
    X = torch.tensor([[0.5, 0.2, -0.1]], dtype=F64)
    value, grad = loss_and_grad(sparsemax_loss, X, torch.tensor([1]))
    assert_close(value, torch.tensor([127 / 300], dtype=F64))
    assert_close(grad, torch.tensor([[19 / 30, 1 / 3 - 1, 1 / 30]], dtype=F64))
    assert_close(sparsemax_loss(X, torch.tensor([0])), torch.tensor([127 / 300 - 0.3], dtype=F64))


def test_entmax15_loss_by_hand():
    # entmax15(2, 1, 0) = ((4 + r7) / 8, (4 - r7) / 8, 0); H = (1 - sum p^1.5) / 0.75.
    r7 = math.sqrt(7)
    p = [(4 + r7) / 8, (4 - r7) / 8]
    H = (1 - p[0] ** 1.5 - p[1] ** 1.5) / 0.75
    X = torch.tensor([[2.0, 1.0, 0.0]], dtype=F64)
    for y, x_y in [(0, 2.0), (1, 1.0), (2, 0.0)]:
        expected = H + 2 * p[0] + p[1] - x_y
        assert_close(entmax15_loss(X, torch.tensor([y])), torch.tensor([expected], dtype=F64))
        assert_close(entmax_bisect_loss(X, torch.tensor([y]), 1.5), torch.tensor([expected], dtype=F64))


def test_alpha_3_loss_by_hand():
    # entmax_3(0.25, 0) = (3/4, 1/4); H_3 = (1 - 27/64 - 1/64) / 6 = 3/32 and
    # p . x = 3/16, so L = 3/32 + 3/16 - x_y: 9/32 for y = 1, 1/32 for y = 0.
    X = torch.tensor([[0.25, 0.0], [0.25, 0.0]], dtype=F64)
    assert_close(entmax_bisect_loss(X, torch.tensor([1, 0]), 3.0), torch.tensor([9 / 32, 1 / 32], dtype=F64))


@pytest.mark.parametrize("d", [1, 2, 5])
def test_constant_row_gives_the_entropy_of_the_uniform(d):
    # p is uniform and (p - e_y) . x = 0 for a constant row, so L = H(uniform).
    X = torch.full((2, d), 3.25, dtype=F64)
    y = torch.tensor([0, d - 1])

    def expect(value):
        return torch.full((2,), value, dtype=F64)

    assert_close(sparsemax_loss(X, y), expect((1 - 1 / d) / 2))
    assert_close(entmax15_loss(X, y), expect((1 - d**-0.5) / 0.75))
    assert_close(entmax_bisect_loss(X, y, 1.25), expect((1 - d**-0.25) / (1.25 * 0.25)))
    assert_close(entmax_bisect_loss(X, y, 1), expect(math.log(d)))


@needs_normmax
def test_normmax_constant_row_by_hand():
    # H(p) = 1 - ||p||_alpha; the uniform p over d classes has ||p||_2 = d^(-1/2).
    X = torch.zeros(2, 4, dtype=F64)
    assert_close(normmax_bisect_loss(X, torch.tensor([0, 3])), torch.full((2,), 0.5, dtype=F64))


def test_alpha_one_is_cross_entropy():
    X, y = seeded(5, 7), targets(5, 7)
    value, grad = loss_and_grad(lambda X, y: entmax_bisect_loss(X, y, alpha=1), X, y)
    assert_close(value, torch.nn.functional.cross_entropy(X, y, reduction="none"))
    assert_close(grad, torch.softmax(X, -1) - torch.nn.functional.one_hot(y, 7))


# ---------------------------------------------------------------- agreement with entmax 1.3

ORACLE_PAIRS = (
    [
        pytest.param(sparsemax_loss, oracle.sparsemax_loss, id="sparsemax"),
        pytest.param(
            lambda X, y: sparsemax_loss(X, y, 3), lambda X, y: oracle.sparsemax_loss(X, y, 3), id="sparsemax-k3"
        ),
        pytest.param(sparsemax_bisect_loss, oracle.sparsemax_bisect_loss, id="sparsemax_bisect"),
        pytest.param(entmax15_loss, oracle.entmax15_loss, id="entmax15"),
        pytest.param(lambda X, y: entmax15_loss(X, y, 3), lambda X, y: oracle.entmax15_loss(X, y, 3), id="entmax15-k3"),
    ]
    + [
        pytest.param(
            lambda X, y, a=a: entmax_bisect_loss(X, y, a),
            lambda X, y, a=a: oracle.entmax_bisect_loss(X, y, a),
            id=f"bisect-{a}",
        )
        for a in (1.25, 1.5, 2.0, 3.0)
    ]
    + [
        pytest.param(
            lambda X, y, a=a: normmax_bisect_loss(X, y, a),
            lambda X, y, a=a: oracle.normmax_bisect_loss(X, y, a),
            id=f"normmax-{a}",
            marks=needs_normmax,
        )
        for a in (1.5, 2.0, 3.0)
    ]
)


@pytest.mark.parametrize("mine, theirs", ORACLE_PAIRS)
@PROPERTY
@given(st.data())
def test_matches_entmax_1_3(mine, theirs, data):
    X = data.draw(matrices)
    y = torch.tensor(data.draw(st.lists(st.integers(0, X.size(1) - 1), min_size=X.size(0), max_size=X.size(0))))
    value, grad = loss_and_grad(mine, X, y)
    X_ref = X.clone().requires_grad_()
    expected = theirs(X_ref, y)
    expected.sum().backward()
    assert value.shape == (X.size(0),)
    assert_close(value, expected.detach(), atol=1e-6, rtol=0)
    assert_close(grad, X_ref.grad, atol=1e-6, rtol=0)


@pytest.mark.parametrize("reduction", ["elementwise_mean", "sum", "none"])
def test_modules_match_entmax_1_3(reduction):
    # entmax 1.3 only honours a non-negative ignore_index, so compare with one.
    X, y = seeded(6, 5, seed=1), torch.tensor([0, 2, 2, 4, 1, 2])
    pairs = [
        (SparsemaxLoss(ignore_index=2, reduction=reduction), oracle.SparsemaxLoss(ignore_index=2, reduction=reduction)),
        (Entmax15Loss(ignore_index=2, reduction=reduction), oracle.Entmax15Loss(ignore_index=2, reduction=reduction)),
        (
            SparsemaxBisectLoss(ignore_index=2, reduction=reduction),
            oracle.SparsemaxBisectLoss(ignore_index=2, reduction=reduction),
        ),
        (
            EntmaxBisectLoss(1.7, ignore_index=2, reduction=reduction),
            oracle.EntmaxBisectLoss(1.7, ignore_index=2, reduction=reduction),
        ),
    ]
    for mine, theirs in pairs:
        assert_close(mine(X, y), theirs(X, y), atol=1e-6, rtol=0)


def test_signatures_are_drop_in_compatible_with_entmax_1_3():
    # Every loss entmax 1.3 exposes, read from the package itself.
    names = [name for name in dir(oracle) if not name.startswith("_") and name.lower().endswith("loss")]
    assert len(names) == 10
    for name in names:
        assert inspect.signature(getattr(L, name)) == inspect.signature(getattr(oracle, name)), name
        assert name in L.__all__


# ---------------------------------------------------------------- properties


@pytest.mark.parametrize("loss, prediction, strongly_convex", CASES)
@PROPERTY
@given(st.data())
def test_nonnegative_zero_iff_prediction_is_one_hot_and_gradient(loss, prediction, strongly_convex, data):
    X = data.draw(matrices)
    n, d = X.shape
    y = torch.tensor(data.draw(st.lists(st.integers(0, d - 1), min_size=n, max_size=n)))
    value, grad = loss_and_grad(loss, X, y)
    residual = prediction(X) - torch.nn.functional.one_hot(y, d)
    assert torch.equal(grad, residual)  # p - e_y, bit for bit
    assert (value >= 0).all()
    one_hot_rows = (residual == 0).all(-1)
    assert (value[one_hot_rows] == 0).all()
    gap = 0.5 * (residual**2).sum(-1)
    if strongly_convex:
        # Omega is 1-strongly convex for alpha <= 2, hence L >= ||p - e_y||^2 / 2,
        # so L == 0 forces p == e_y up to rounding.
        assert (value >= gap - 1e-9).all()
    # Adding a constant to a row changes neither p nor the loss.
    c = data.draw(st.floats(-30, 30))
    assert_close(loss(X + c, y), value, atol=1e-8, rtol=1e-8)


@pytest.mark.parametrize("loss, prediction, strongly_convex", CASES)
def test_exactly_zero_with_zero_gradient_beyond_the_margin(loss, prediction, strongly_convex):
    # p = e_y once x_y beats every other score by 1 / (alpha - 1) (1 for
    # sparsemax, 2 for 1.5-entmax, 4 for alpha = 1.25; 1 for normmax), and not
    # before. Softmax never reaches a one-hot p.
    X, y = seeded(4, 6, seed=2), targets(4, 6, seed=2)
    rows = torch.arange(4)
    X[rows, y] = X.amax(-1) + 2.5
    value, grad = loss_and_grad(loss, X, y)
    if (prediction(X) == torch.nn.functional.one_hot(y, 6)).all():
        assert torch.equal(value, torch.zeros(4, dtype=F64))
        assert torch.equal(grad, torch.zeros_like(X))
    else:
        assert (value > 0).all()
    X[rows, y] = X[rows, y] - 2.5 + 0.4  # well inside every margin
    assert (loss(X, y) > 0).all()


# ---------------------------------------------------------------- gradients


@pytest.mark.parametrize("loss, prediction, strongly_convex", CASES)
def test_gradcheck_x(loss, prediction, strongly_convex):
    X, y = seeded(3, 5, seed=3).requires_grad_(), targets(3, 5, seed=3)
    assert gradcheck(lambda x: loss(x, y), (X,))


@pytest.mark.parametrize("alpha_shape", [(3, 1), (), (1,), (1, 1)])
def test_gradcheck_entmax_bisect_loss_in_x_and_alpha(alpha_shape):
    X, y = seeded(3, 5, seed=4).requires_grad_(), targets(3, 5, seed=4)
    alpha = 1.2 + 1.5 * torch.rand(alpha_shape, dtype=F64, generator=torch.Generator().manual_seed(4))
    assert gradcheck(lambda x, a: entmax_bisect_loss(x, y, a), (X, alpha.requires_grad_()))


@needs_normmax
def test_gradcheck_normmax_loss_in_x_and_alpha():
    X, y = seeded(3, 5, seed=5).requires_grad_(), targets(3, 5, seed=5)
    alpha = torch.tensor([[1.5], [2.0], [3.0]], dtype=F64, requires_grad=True)
    assert gradcheck(lambda x, a: normmax_bisect_loss(x, y, a), (X, alpha))


def test_gradcheck_module_with_ignored_rows_and_3d_input():
    X = seeded(2, 3, 4, seed=6).requires_grad_()
    y = torch.tensor([[0, -100, 3], [-100, 1, 2]])
    alpha = torch.tensor([[[1.3]], [[2.2]]], dtype=F64, requires_grad=True)
    assert gradcheck(lambda x, a: EntmaxBisectLoss(a)(x, y), (X, alpha))
    assert gradcheck(lambda x: SparsemaxLoss(reduction="sum")(x, y), (X,))


def test_learnable_alpha_parameter_gets_a_gradient():
    alpha = torch.nn.Parameter(torch.tensor(1.5, dtype=F64))
    criterion = EntmaxBisectLoss(alpha=alpha)
    assert list(criterion.parameters()) == [alpha]
    criterion(seeded(4, 5, seed=7), targets(4, 5, seed=7)).backward()
    assert alpha.grad is not None and torch.isfinite(alpha.grad)
    # A plain tensor alpha is a non-persistent buffer: it moves with .to() but is not state.
    assert EntmaxBisectLoss(alpha=torch.tensor(1.5)).state_dict() == {}


def test_torch_func_grad_and_second_order_is_refused():
    X, y = seeded(3, 4, seed=8), targets(3, 4, seed=8)
    grad = torch.func.grad(lambda x: sparsemax_loss(x, y).sum())(X)
    assert torch.equal(grad, sparsemax(X) - torch.nn.functional.one_hot(y, 4))
    Xg = X.clone().requires_grad_()
    (g,) = torch.autograd.grad(entmax15_loss(Xg, y).sum(), Xg, create_graph=True)
    with pytest.raises(RuntimeError):
        torch.autograd.grad((g**2).sum(), Xg)


# ---------------------------------------------------------------- faults


@pytest.mark.parametrize("dtype", [torch.float32, F64])
@pytest.mark.parametrize("loss, prediction, strongly_convex", CASES)
def test_neg_inf_non_target_scores_act_as_removed_classes(loss, prediction, strongly_convex, dtype):
    full = seeded(4, 6, seed=9, dtype=dtype)
    kept = [0, 2, 3, 5]
    X = full.clone()
    X[:, [1, 4]] = -INF
    X[3] = -INF
    X[3, 5] = 0.0  # a row with a single finite entry: p = e_y, L = 0
    y = torch.tensor([0, 2, 5, 5])
    value, grad = loss_and_grad(loss, X, y)
    assert torch.isfinite(value).all() and torch.isfinite(grad).all()
    assert (grad[:, [1, 4]] == 0).all()
    reduced_value, reduced_grad = loss_and_grad(loss, X[:, kept], torch.tensor([0, 1, 3, 3]))
    tol = {"atol": 1e-5, "rtol": 1e-5} if dtype == torch.float32 else {}
    assert_close(value, reduced_value, **tol)
    assert_close(grad[:, kept], reduced_grad, **tol)
    assert value[3] == 0
    module_X = X.clone().requires_grad_()
    SparsemaxLoss()(module_X, y).backward()
    assert torch.isfinite(module_X.grad).all()


def test_per_row_alpha_gives_per_row_loss():
    X, y = seeded(4, 5, seed=10), targets(4, 5, seed=10)
    alphas = [1.2, 1.5, 2.0, 3.5]
    alpha = torch.tensor(alphas, dtype=F64).unsqueeze(1).requires_grad_()
    value = entmax_bisect_loss(X, y, alpha)
    assert value.shape == (4,)
    for i, a in enumerate(alphas):
        assert_close(value[i], entmax_bisect_loss(X[i : i + 1], y[i : i + 1], a)[0])
    value.sum().backward()
    assert alpha.grad.shape == (4, 1)
    # (n, ...) batches take an alpha per row, broadcast over any extra dims.
    X3 = seeded(2, 3, 5, seed=11)
    y3 = torch.tensor([[0, 1, 2], [3, 4, 0]])
    a3 = torch.tensor([[[1.5]], [[2.5]]], dtype=F64)
    value3 = EntmaxBisectLoss(a3, reduction="none")(X3, y3)
    assert value3.shape == (2, 3)
    assert_close(value3[1], entmax_bisect_loss(X3[1], y3[1], 2.5))


@needs_normmax
def test_per_row_alpha_normmax():
    X, y = seeded(3, 5, seed=12), targets(3, 5, seed=12)
    value = normmax_bisect_loss(X, y, torch.tensor([[1.5], [2.0], [3.0]], dtype=F64))
    assert value.shape == (3,)
    assert_close(value[2], normmax_bisect_loss(X[2:], y[2:], 3.0)[0])


@pytest.mark.parametrize("alpha", [torch.full((4,), 1.5), torch.full((4, 5), 1.5), torch.full((2, 1), 1.5)])
def test_alpha_that_is_not_one_per_row_is_rejected(alpha):
    with pytest.raises(ValueError, match="alpha"):
        entmax_bisect_loss(torch.zeros(4, 5), torch.zeros(4, dtype=torch.long), alpha)


@pytest.mark.parametrize("alpha", [0.5, float("nan"), "2", torch.tensor([[1.5], [1.0]])])
def test_bad_alpha_value_is_rejected(alpha):
    with pytest.raises(ValueError, match="alpha"):
        entmax_bisect_loss(torch.zeros(2, 3), torch.zeros(2, dtype=torch.long), alpha)
    with pytest.raises(ValueError, match="alpha"):
        normmax_bisect_loss(torch.zeros(2, 3), torch.zeros(2, dtype=torch.long), alpha)


@pytest.mark.parametrize("ignore_index", [-100, -1, 0, 7, None])
@pytest.mark.parametrize(
    "make", [SparsemaxLoss, Entmax15Loss, SparsemaxBisectLoss, EntmaxBisectLoss, NormmaxBisectLoss]
)
def test_ignore_index_any_integer(make, ignore_index):
    X, y = seeded(6, 5, seed=13), targets(6, 5, seed=13)
    if ignore_index is not None:
        y[[1, 4]] = ignore_index
    keep = torch.ones(6, dtype=torch.bool) if ignore_index is None else y != ignore_index
    per_row = make(reduction="none").loss(X[keep], y[keep])
    none = make(ignore_index=ignore_index, reduction="none")(X, y)
    assert_close(none[keep], per_row)
    assert (none[~keep] == 0).all()
    assert_close(make(ignore_index=ignore_index, reduction="sum")(X, y), per_row.sum())
    for mean in ("elementwise_mean", "mean"):
        assert_close(make(ignore_index=ignore_index, reduction=mean)(X, y), per_row.mean())


def test_all_ignored_mean_is_exactly_zero_even_for_garbage_rows():
    X = torch.tensor([[float("nan"), 1.0, 2.0], [-INF, -INF, -INF]], dtype=F64, requires_grad=True)
    y = torch.tensor([-100, -100])
    for make in (SparsemaxLoss, Entmax15Loss, EntmaxBisectLoss, SparsemaxBisectLoss, NormmaxBisectLoss):
        value = make()(X, y)
        assert value.item() == 0.0 and not value.isnan()
        (grad,) = torch.autograd.grad(value, X)
        assert torch.equal(grad, torch.zeros_like(X))


def test_ignored_garbage_rows_do_not_poison_the_batch():
    X = torch.cat([seeded(3, 4, seed=14), torch.tensor([[float("nan")] * 4, [-INF] * 4], dtype=F64)])
    X.requires_grad_()
    y = torch.tensor([0, 3, 1, -100, -100])
    value = Entmax15Loss()(X, y)
    value.backward()
    assert torch.isfinite(value) and torch.isfinite(X.grad).all()
    assert (X.grad[3:] == 0).all()
    assert_close(value, entmax15_loss(X[:3].detach(), y[:3]).mean())


def test_extra_dims_are_rows_with_classes_last():
    X, y = seeded(2, 3, 5, seed=15), targets(6, 5, seed=15).view(2, 3)
    y[0, 1] = -100
    flat_X, flat_y = X.reshape(6, 5), y.reshape(6)
    for reduction in ("none", "sum", "elementwise_mean"):
        got = SparsemaxLoss(reduction=reduction)(X, y)
        expected = SparsemaxLoss(reduction=reduction)(flat_X, flat_y)
        assert_close(got, expected.view(2, 3) if reduction == "none" else expected)
    assert sparsemax_loss(X, y.clamp(min=0)).shape == (2, 3)
    assert sparsemax_loss(X[0, 0], y[0, 0]).shape == ()  # one row: (d,) scores, scalar target
    assert SparsemaxLoss()(torch.zeros(0, 5), torch.zeros(0, dtype=torch.long)).item() == 0.0


@pytest.mark.parametrize("bad", [5, -1, -100])
def test_out_of_range_target_is_a_value_error(bad):
    X, y = torch.zeros(3, 5), torch.tensor([0, bad, 2])
    for fn in (sparsemax_loss, entmax15_loss, sparsemax_bisect_loss, entmax_bisect_loss, normmax_bisect_loss):
        with pytest.raises(ValueError, match="target"):
            fn(X, y)
    if bad != -100:  # the default ignore_index; any other value is still checked
        with pytest.raises(ValueError, match="target"):
            SparsemaxLoss()(X, y)
    with pytest.raises(ValueError, match="target"):
        SparsemaxLoss(ignore_index=None)(X, y)


@pytest.mark.parametrize(
    "target",
    [
        torch.zeros(4, dtype=torch.long),
        torch.zeros(3, 1, dtype=torch.long),
        torch.tensor(0),
        torch.zeros(3),  # float class indices
        torch.zeros(3, dtype=torch.bool),
        [0, 1, 2],
    ],
)
def test_target_of_wrong_shape_or_dtype_is_a_value_error(target):
    X = torch.zeros(3, 5)
    with pytest.raises(ValueError, match="target"):
        sparsemax_loss(X, target)
    with pytest.raises(ValueError, match="target"):
        EntmaxBisectLoss()(X, target)


def test_class_dim_first_gets_a_hint():
    # torch's CrossEntropyLoss layout (N, C, L) with target (N, L) is not ours.
    with pytest.raises(ValueError, match="last dim"):
        sparsemax_loss(torch.zeros(2, 5, 3), torch.zeros(2, 3, dtype=torch.long))


def test_bad_scores_are_a_value_error():
    with pytest.raises(ValueError, match="X"):
        sparsemax_loss(torch.zeros(2, 3, dtype=torch.long), torch.zeros(2, dtype=torch.long))
    with pytest.raises(ValueError, match="X"):
        sparsemax_loss(torch.zeros(2, 0), torch.zeros(2, dtype=torch.long))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("loss, prediction, strongly_convex", CASES)
def test_half_precision_is_computed_in_float32(loss, prediction, strongly_convex, dtype):
    X32, y = seeded(4, 6, seed=16, dtype=torch.float32), targets(4, 6, seed=16)
    X = X32.to(dtype)
    X[0, 1] = -INF if y[0] != 1 else X[0, 1]
    value, grad = loss_and_grad(loss, X, y)
    value32, grad32 = loss_and_grad(loss, X.float(), y)
    assert value.dtype == dtype and grad.dtype == dtype
    assert torch.equal(value, value32.to(dtype))
    assert torch.equal(grad, grad32.to(dtype))
    module_value = SparsemaxLoss()(X, y)
    assert module_value.dtype == dtype and torch.isfinite(module_value)


# ---------------------------------------------------------------- module arguments


@pytest.mark.parametrize("reduction", ["avg", "batchmean", None, "MEAN"])
def test_invalid_reduction_names_the_choices(reduction):
    for make in (SparsemaxLoss, SparsemaxBisectLoss, Entmax15Loss, EntmaxBisectLoss, NormmaxBisectLoss):
        with pytest.raises(ValueError, match="'elementwise_mean'.*'mean'.*'sum'.*'none'"):
            make(reduction=reduction)


def test_invalid_module_hyper_parameters():
    with pytest.raises(ValueError, match="ignore_index"):
        SparsemaxLoss(ignore_index=1.5)
    with pytest.raises(ValueError, match="k"):
        SparsemaxLoss(k=0)
    with pytest.raises(ValueError, match="k"):
        Entmax15Loss(k=2.5)
    with pytest.raises(ValueError, match="n_iter"):
        SparsemaxBisectLoss(n_iter=0)
    with pytest.raises(ValueError, match="alpha"):
        EntmaxBisectLoss(alpha=0.9)
    with pytest.raises(ValueError, match="alpha"):
        NormmaxBisectLoss(alpha=1)
    assert "alpha=1, n_iter=50" in repr(EntmaxBisectLoss(alpha=1))
    assert "k=100" in repr(Entmax15Loss())
