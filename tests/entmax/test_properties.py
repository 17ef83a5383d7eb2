"""Property tests of sparsemax, entmax15 and entmax_bisect not covered by the other entmax test files.

Already covered elsewhere (not repeated here): non-negativity, summing to one and agreement with a bisection
reference on scores in [-20, 20] (test_activations.py, test_root_finding.py), invariance to per-row shifts of
sparsemax / entmax15 with training=True and to a constant shift of entmax_bisect at a few fixed alphas.

Added here, on float64 scores in [-50, 50] with ties, rows 1..8, columns 1..12, both solver paths
(``training=True`` and ``False``) and alpha anywhere in [1, 2]:

- the threshold form of the solution: ``p_i ** (alpha - 1) = (alpha - 1) x_i - tau`` on the support, one ``tau``
  per row, and ``(alpha - 1) x_j <= tau`` off it (sparsemax: ``p_i = x_i - tau``), so an entry is zero iff its
  score is at most the threshold;
- the largest score always gets positive probability, equal scores get equal probabilities and the map is
  order preserving;
- shift invariance on the paths not tested elsewhere, permutation equivariance;
- gradients of a random linear function of the output: finite, summing to zero along each row (the output does
  not change along ``(1, ..., 1)``) and zero on entries of zero probability.
"""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.testing import assert_close

from sparsetab.entmax import (
    BudgetBisect,
    Entmax15,
    EntmaxBisect,
    NormmaxBisect,
    Sparsemax,
    budget_bisect,
    entmax15,
    entmax_bisect,
    normmax_bisect,
    sparsemax,
    sparsemax_bisect,
)
from sparsetab.entmax.losses import (
    entmax15_loss,
    entmax_bisect_loss,
    normmax_bisect_loss,
    sparsemax_bisect_loss,
    sparsemax_loss,
)

PROPERTY = settings(max_examples=30, deadline=None)

# Small integers are mixed in so that ties (and constant rows) are frequent.
scores = st.one_of(
    st.floats(-50, 50, allow_nan=False, allow_infinity=False),
    st.sampled_from([-50.0, -1.0, 0.0, 0.5, 1.0, 50.0]),
)
matrices = st.tuples(st.integers(1, 8), st.integers(1, 12)).flatmap(
    lambda shape: st.lists(
        st.lists(scores, min_size=shape[1], max_size=shape[1]), min_size=shape[0], max_size=shape[0]
    ).map(lambda rows: torch.tensor(rows, dtype=torch.float64))
)
alphas = st.one_of(st.sampled_from([1.0, 1.5, 2.0]), st.floats(1.0, 2.0))
trainings = st.booleans()


def _apply(name, X, alpha, training):
    """The map ``name`` at ``alpha`` (ignored by sparsemax and entmax15, which are alpha 2 and 1.5)."""
    if name == "sparsemax":
        return sparsemax(X, training=training)
    if name == "entmax15":
        return entmax15(X, training=training)
    return entmax_bisect(X, alpha=alpha, training=training)


def _alpha_of(name, alpha):
    return {"sparsemax": 2.0, "entmax15": 1.5}.get(name, alpha)


MAPS = ["sparsemax", "entmax15", "entmax_bisect"]


@pytest.mark.parametrize("name", MAPS)
@PROPERTY
@given(X=matrices, alpha=alphas, training=trainings)
def test_simplex_and_threshold_form_of_the_solution(name, X, alpha, training):
    p = _apply(name, X, alpha, training)
    alpha = _alpha_of(name, alpha)
    assert p.shape == X.shape and p.dtype == torch.float64
    assert torch.isfinite(p).all()
    assert (p >= 0).all()
    assert_close(p.sum(-1), torch.ones(X.shape[0], dtype=torch.float64), atol=1e-10, rtol=0)
    if alpha == 1.0:  # softmax: dense, p_i proportional to exp(x_i)
        assert (p > 0).all()
        assert_close(p, torch.softmax(X, dim=-1), atol=1e-12, rtol=1e-10)
        return
    z = (alpha - 1) * X
    base = p ** (alpha - 1)  # = z_i - tau on the support, 0 off it
    support = p > 0
    for row in range(X.shape[0]):
        on = support[row]
        tau = (z[row, on] - base[row, on]).mean()
        # one threshold per row: z_i - p_i ** (alpha - 1) is the same tau for every entry of the support
        assert_close(z[row, on] - base[row, on], tau.expand(int(on.sum())), atol=1e-6, rtol=0)
        # zero iff at most the threshold (up to the solver's tolerance on tau)
        assert (z[row, ~on] <= tau + 1e-6).all()
        assert (z[row, on] > tau - 1e-6).all()


@pytest.mark.parametrize("name", MAPS)
@PROPERTY
@given(X=matrices, alpha=alphas, training=trainings)
def test_top_score_positive_ties_equal_and_order_preserved(name, X, alpha, training):
    p = _apply(name, X, alpha, training)
    top = X.argmax(-1, keepdim=True)
    assert (p.gather(-1, top) > 0).all()
    # every maximal score (ties included) gets the same, largest probability, at least 1 / n_columns
    is_max = X == X.amax(-1, keepdim=True)
    assert_close(torch.where(is_max, p, 0.0).amax(-1), p.amax(-1), atol=0, rtol=0)
    assert (p.amax(-1) >= 1 / X.shape[1] - 1e-12).all()
    # equal scores, equal probabilities; larger score, probability at least as large
    same = X.unsqueeze(-1) == X.unsqueeze(-2)
    larger = X.unsqueeze(-1) > X.unsqueeze(-2)
    difference = p.unsqueeze(-1) - p.unsqueeze(-2)
    assert (difference[same].abs() <= 1e-12).all()
    assert (difference[larger] >= -1e-12).all()


@PROPERTY
@given(X=matrices, data=st.data())
def test_invariant_to_adding_a_constant_per_row(X, data):
    # Paths not covered by test_activations / test_root_finding: the sort-based solvers of sparsemax and
    # entmax15 (training=False), entmax_bisect at any alpha in [1, 2], per-row shifts, both paths.
    shift = torch.tensor(
        data.draw(st.lists(st.floats(-50, 50), min_size=X.shape[0], max_size=X.shape[0])), dtype=torch.float64
    ).unsqueeze(1)
    assert_close(sparsemax(X + shift, training=False), sparsemax(X, training=False), atol=1e-9, rtol=0)
    assert_close(entmax15(X + shift, training=False), entmax15(X, training=False), atol=1e-9, rtol=0)
    alpha = data.draw(alphas)
    for training in (True, False):
        expected = entmax_bisect(X, alpha=alpha, training=training)
        assert_close(entmax_bisect(X + shift, alpha=alpha, training=training), expected, atol=1e-7, rtol=0)


@pytest.mark.parametrize("name", MAPS)
@PROPERTY
@given(X=matrices, alpha=alphas, training=trainings, data=st.data())
def test_permuting_the_scores_permutes_the_probabilities(name, X, alpha, training, data):
    permutation = torch.tensor(data.draw(st.permutations(range(X.shape[1]))), dtype=torch.long)
    p = _apply(name, X, alpha, training)
    atol = 1e-12 if name != "entmax_bisect" else 1e-9
    assert_close(_apply(name, X[:, permutation], alpha, training), p[:, permutation], atol=atol, rtol=0)
    # rows are independent: permuting the rows permutes the output rows
    rows = torch.tensor(data.draw(st.permutations(range(X.shape[0]))), dtype=torch.long)
    assert_close(_apply(name, X[rows], alpha, training), p[rows], atol=atol, rtol=0)


@pytest.mark.parametrize("name", MAPS)
@PROPERTY
@given(X=matrices, alpha=alphas, training=trainings, seed=st.integers(0, 2**16))
def test_gradient_of_a_random_linear_function_is_finite_centred_and_zero_off_support(name, X, alpha, training, seed):
    weights = torch.randn(X.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))
    X = X.clone().requires_grad_()
    p = _apply(name, X, alpha, training)
    (p * weights).sum().backward()
    grad = X.grad
    assert grad.shape == X.shape
    assert torch.isfinite(grad).all()
    # p(x + c) = p(x) for every c: the gradient has no component along (1, ..., 1)
    assert_close(grad.sum(-1), torch.zeros(X.shape[0], dtype=torch.float64), atol=1e-8, rtol=0)
    if _alpha_of(name, alpha) > 1:
        # entries of zero probability strictly below the threshold: moving them a little changes nothing.
        # An entry exactly at the threshold (e.g. sparsemax([0, 1]) = [0, 1]) is a kink, where a one-sided
        # derivative is as right as 0; raising every zero entry by 1e-6 finds those strictly below.
        off = p.detach() == 0
        with torch.no_grad():
            raised = _apply(name, X.detach() + 1e-6 * off, alpha, training)
        strictly_off = off & (raised == 0)
        assert (grad[strictly_off] == 0).all()


@PROPERTY
@given(X=matrices, alpha=st.floats(1.0, 2.0), training=trainings, seed=st.integers(0, 2**16))
def test_gradient_in_alpha_is_finite(X, alpha, training, seed):
    weights = torch.randn(X.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))
    alpha = torch.full((X.shape[0], 1), alpha, dtype=torch.float64, requires_grad=True)
    X = X.clone().requires_grad_()
    (entmax_bisect(X, alpha=alpha, training=training) * weights).sum().backward()
    assert torch.isfinite(X.grad).all()
    assert alpha.grad.shape == (X.shape[0], 1)
    assert torch.isfinite(alpha.grad).all()


NAN_MAPS = {
    "sparsemax": lambda X, training: sparsemax(X, training=training),
    "entmax15": lambda X, training: entmax15(X, training=training),
    "entmax_bisect": lambda X, training: entmax_bisect(X, alpha=1.3, training=training),
    "entmax_bisect_dense": lambda X, training: entmax_bisect(X, alpha=0.5, training=training),
    "entmax_bisect_softmax": lambda X, training: entmax_bisect(X, alpha=1.0, training=training),
    "entmax_bisect_tensor_alpha": lambda X, training: entmax_bisect(
        X, alpha=torch.full((X.shape[0], 1), 1.7, dtype=X.dtype), training=training
    ),
    "sparsemax_bisect": lambda X, training: sparsemax_bisect(X, training=training),
    "normmax_bisect": lambda X, training: normmax_bisect(X, alpha=2.0, training=training),
    "budget_bisect": lambda X, training: budget_bisect(X, budget=1.0, training=training),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("name", sorted(NAN_MAPS))
@settings(max_examples=20, deadline=None)
@given(matrices, st.data(), trainings)
def test_a_nan_score_gives_an_all_nan_row_and_leaves_the_other_rows_alone(name, dtype, X, data, training):
    # Before, the solvers returned finite values next to the NaN (normmax 2.0, entmax_bisect up to 76), and the
    # closed forms kept the rest of the row. A NaN row must be NaN everywhere, as softmax's is.
    X = X.to(dtype)
    n_rows, n_columns = X.shape
    nan_rows = data.draw(st.lists(st.booleans(), min_size=n_rows, max_size=n_rows))
    with_nan = X.clone()
    for row, has_nan in enumerate(nan_rows):
        if has_nan:
            with_nan[row, data.draw(st.integers(0, n_columns - 1))] = float("nan")
    if n_columns > 1:  # -inf beside the NaN changes nothing; -inf alone keeps its meaning, probability 0
        with_nan[:, 0] = torch.where(torch.isnan(with_nan[:, 0]), with_nan[:, 0], -torch.inf)
        X = X.clone()
        X[:, 0] = -torch.inf
    result = NAN_MAPS[name](with_nan, training)
    reference = NAN_MAPS[name](X, training)
    for row, has_nan in enumerate(nan_rows):
        if has_nan:
            assert torch.isnan(result[row]).all()
        else:
            # Batched solvers stop when every row has converged, so the NaN row may change the others'
            # iteration count: equal to the solver's tolerance, not bit for bit.
            assert_close(result[row], reference[row])
            assert ((result[row] >= 0) & (result[row] <= 1)).all()
            if n_columns > 1:
                assert result[row, 0] == 0


@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")
@pytest.mark.parametrize(
    "module, scripted",
    [(Sparsemax(), True), (Entmax15(), True)]
    + [(module, False) for module in (Sparsemax(), Entmax15(), EntmaxBisect(1.3), NormmaxBisect(), BudgetBisect(1.0))],
)
def test_modules_in_eval_mode_give_nan_rows_too(module, scripted):
    # The modules' eval() path is the exportable one (closed forms, fixed iterations); the threshold maps'
    # is also scriptable.
    module = module.eval()
    if scripted:
        module = torch.jit.script(module)
    X = torch.tensor([[0.5, float("nan"), 1.0, -0.2], [0.3, 0.1, -1.0, 2.0]])
    result = module(X)
    assert torch.isnan(result[0]).all()
    assert torch.isfinite(result[1]).all() and ((result[1] >= 0) & (result[1] <= 1)).all()


@pytest.mark.parametrize(
    "loss",
    [
        lambda X, t: sparsemax_loss(X, t),
        lambda X, t: entmax15_loss(X, t),
        lambda X, t: sparsemax_bisect_loss(X, t),
        lambda X, t: entmax_bisect_loss(X, t, alpha=1.3),
        lambda X, t: normmax_bisect_loss(X, t, alpha=2.0),
    ],
    ids=["sparsemax", "entmax15", "sparsemax_bisect", "entmax_bisect", "normmax_bisect"],
)
def test_every_loss_is_nan_for_a_row_of_nan_scores_and_unchanged_for_the_others(loss):
    generator = torch.Generator().manual_seed(0)
    X = torch.randn(4, 5, generator=generator, dtype=torch.float64)
    target = torch.tensor([0, 1, 2, 3])
    with_nan = X.clone()
    with_nan[1, 3] = float("nan")
    with_nan[2, 0] = -torch.inf  # -inf alone is a masked class, not a NaN
    reference = X.clone()
    reference[2, 0] = -torch.inf
    result, expected = loss(with_nan, target), loss(reference, target)
    assert torch.isnan(result[1]) and torch.isfinite(result[[0, 2, 3]]).all()
    assert_close(result[[0, 2, 3]], expected[[0, 2, 3]])
