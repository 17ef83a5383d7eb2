"""Exact sparsemax and 1.5-entmax: sort-free solvers for training, a sort-based form for export.

Both maps have the form ``p = [z - tau]_+ ** (1 / (alpha - 1))`` for a row-wise
threshold ``tau`` (``z = x`` for sparsemax, ``z = x / 2`` for 1.5-entmax). Two
exact ways of finding ``tau`` live here:

- Sort-free (the default, ``training=True``): a fixed-point iteration on the
  support, ``tau <- threshold of the candidate support {z > tau}``, which is
  Michelot's (1986) algorithm for sparsemax and its closed-form (quadratic)
  analogue for 1.5-entmax. Every step is a handful of vectorised passes over
  the scores, and only a few steps are needed (3 to 8 on Gaussian scores of
  width 64 to 30000). Sparsemax stops once the support reproduces itself, so
  ``tau`` is the exact threshold of the exact support; 1.5-entmax stops once
  the closed-form step is below ``sqrt(eps) / 8``, which leaves an error of
  order ``eps / 64`` in ``tau`` because the mass is quadratic near it. Rows
  not settled after :data:`_MAX_ITER` steps (never seen outside adversarial
  inputs) are finished by sorting.
- Sort-based (``training=False``, and the ``_*_threshold_and_support``
  helpers): the classic closed form from the sorted scores (Martins &
  Astudillo, 2016; Peters et al., 2019), in plain differentiable torch ops
  without data-dependent control flow, so that it can be exported, traced and
  scripted. It is much slower (sorting dominates).

Both agree with each other, and with the reference ``entmax`` package, to
floating-point precision.
"""

import math
import numbers

import torch
from torch import Tensor, nn

__all__ = ["sparsemax", "entmax15", "Sparsemax", "Entmax15", "SparsemaxFunction", "Entmax15Function"]

# Michelot's iteration is finite (each step drops at least one entry from the
# candidate support) but could in principle take d steps, and the 1.5-entmax
# iteration has no such bound; past this many passes the rows still unsettled
# are handed to the sort-based solver, whose cost is then the smaller one.
_MAX_ITER = 48


# ---------------------------------------------------------------- validation


def _check_k(k):
    # bool is an int subclass, but k=True is almost certainly a mistake.
    if k is None or (isinstance(k, numbers.Integral) and not isinstance(k, bool) and k > 0):
        return None if k is None else int(k)
    raise ValueError(f"k must be a positive integer or None, got k={k!r}")


def _check_input(X, dim):
    if not isinstance(X, torch.Tensor):
        raise TypeError(f"X must be a torch.Tensor, got {type(X).__name__}")
    if not X.is_floating_point():
        raise TypeError(f"X must be a floating-point tensor, got dtype={X.dtype}")
    if X.dim() == 0:
        raise ValueError("X must have at least one dimension to normalise over, got a 0-d tensor")
    if not isinstance(dim, numbers.Integral) or isinstance(dim, bool):
        raise TypeError(f"dim must be an int, got dim={dim!r}")
    X.size(dim)  # raises IndexError for an out-of-range dim, as torch itself does
    if X.size(dim) == 0:
        raise ValueError(f"cannot normalise over dim={dim}: it has size 0")


def _check_input_scriptable(X: Tensor, dim: int):
    # The TorchScript-compatible subset of _check_input, for the export path.
    if not X.is_floating_point():
        raise TypeError(f"X must be a floating-point tensor, got dtype={X.dtype}")
    if X.dim() == 0:
        raise ValueError("X must have at least one dimension to normalise over, got a 0-d tensor")
    if X.size(dim) == 0:
        raise ValueError(f"cannot normalise over dim={dim}: it has size 0")


def _compute_dtype(dtype: torch.dtype) -> torch.dtype:
    # Half-precision cumulative sums and thresholds lose the support entirely
    # on long rows; float32 internally costs little and matches softmax's habit.
    if dtype == torch.float16 or dtype == torch.bfloat16:
        return torch.float32
    return dtype


# ---------------------------------------------------------------- sort-based closed form


def _positions(sorted_X: Tensor, dim: int) -> Tensor:
    """1, 2, ..., n laid out along ``dim`` so it broadcasts against ``sorted_X``."""
    n = sorted_X.size(dim)
    shape = [1] * sorted_X.dim()
    shape[dim] = n
    return torch.arange(1, n + 1, dtype=sorted_X.dtype, device=sorted_X.device).view(shape)


def _leading_run(passed: Tensor, dim: int) -> Tensor:
    # The support test is monotone in exact arithmetic, but rounding can flip it
    # for entries tied with the threshold (e.g. pass, fail, pass). Counting only
    # the leading run makes the answer depend on a prefix of the sorted scores
    # alone, which is what lets a top-k prefix reproduce the full sort exactly.
    return (passed.logical_not().cumsum(dim) == 0).sum(dim, keepdim=True)


def _sparsemax_from_sorted(Z: Tensor, dim: int):
    finite = torch.isfinite(Z)
    # -inf entries are masked out of the sums so no inf - inf NaN is ever formed;
    # they can never pass the support test below because their left side is -inf.
    cumsum = torch.where(finite, Z, 0.0).cumsum(dim)
    j = _positions(Z, dim)
    support = _leading_run(1 + j * Z > cumsum, dim)
    # Only a NaN row has an empty support; reading position 0 then lets the NaN
    # propagate to the output (as softmax does) instead of failing on index -1.
    last = (support - 1).clamp(min=0)
    tau = (cumsum.gather(dim, last) - 1) / support.clamp(min=1).to(Z.dtype)
    return tau, support


def _entmax15_from_sorted(Z: Tensor, dim: int):
    finite = torch.isfinite(Z)
    Zf = torch.where(finite, Z, 0.0)
    j = _positions(Z, dim)
    mean = Zf.cumsum(dim) / j
    mean_sq = (Zf * Zf).cumsum(dim) / j
    delta = (1 - j * (mean_sq - mean * mean)) / j
    tau = mean - torch.sqrt(torch.clamp(delta, min=0))
    support = _leading_run(tau <= Z, dim)
    return tau.gather(dim, (support - 1).clamp(min=0)), support  # see _sparsemax_from_sorted


def _threshold_and_support(Z, dim, k, from_sorted):
    n = Z.size(dim)
    while k is not None and k < n:
        top = torch.topk(Z, k, dim=dim).values
        tau, support = from_sorted(top, dim)
        # A leading run that stops strictly before position k cannot be changed
        # by entries beyond the top k, so the support is certified.
        if not bool((support >= k).any()):
            return tau, support
        k *= 2
    return from_sorted(torch.sort(Z, dim=dim, descending=True).values, dim)


def _sparsemax_threshold_and_support(X, dim=-1, k=None):
    """Threshold ``tau`` with ``sparsemax(X) = [X - tau]_+`` and its support size, by sorting.

    Parameters
    ----------
    X : torch.Tensor
        Scores, floating dtype, any shape.
    dim : int, default -1
        Dimension to normalise over.
    k : int or None, default None
        Use ``torch.topk`` with ``k`` entries first, doubling ``k`` until the
        support is certified to lie inside it; ``None`` means a full sort.
        The result does not depend on ``k``.

    Returns
    -------
    tau : torch.Tensor
        Same dtype as ``X``, shape of ``X`` with ``dim`` of size 1.
    support_size : torch.Tensor
        ``torch.int64``, same shape as ``tau``.
    """
    return _threshold_and_support(X, dim, k, _sparsemax_from_sorted)


def _entmax_threshold_and_support(X, dim=-1, k=None):
    """Threshold ``tau`` with ``entmax15 = [X - tau]_+ ** 2`` and its support size, by sorting.

    ``X`` must already be on the entmax scale, i.e. ``scores / 2`` (typically
    also shifted by the row maximum); see Peters et al. (2019), Alg. 2.
    Parameters, shapes and the meaning of ``k`` are as in
    :func:`_sparsemax_threshold_and_support`.
    """
    return _threshold_and_support(X, dim, k, _entmax15_from_sorted)


def _safe_sqrt(Y: Tensor) -> Tensor:
    # Double `where` keeps the derivative of sqrt at 0 (infinite) out of any
    # second-order graph built through the backward pass.
    positive = Y > 0
    return torch.where(positive, torch.sqrt(torch.where(positive, Y, 1.0)), 0.0)


def _shift_for_closed_form(X: Tensor, dim: int) -> Tensor:
    Xc = X.to(_compute_dtype(X.dtype))
    # Both maps are invariant to a per-row shift, so the max carries no gradient
    # and is detached; a row without a finite max (all -inf, NaN, +inf) is left
    # unshifted so that no inf - inf is formed for an all -inf row.
    m = Xc.detach().amax(dim=dim, keepdim=True)
    return Xc - torch.where(torch.isfinite(m), m, torch.zeros_like(m))


def _sparsemax_closed_form(X: Tensor, dim: int) -> Tensor:
    """Sparsemax from the sorted scores with plain differentiable ops (export path)."""
    _check_input_scriptable(X, dim)
    Z = _shift_for_closed_form(X, dim)
    srt = torch.sort(Z, dim=dim, descending=True).values
    # The support size is piecewise constant in X, so it is found without
    # gradient; tau is then recomputed from the kept graph at that position.
    # Counting the entries strictly above tau (a prefix of the sorted scores)
    # drops any tied with it, which the leading run may keep: their p is 0,
    # and with them in the formula they would get a share of the gradient.
    tau, _ = _sparsemax_from_sorted(srt.detach(), dim)
    support = (srt.detach() > tau).sum(dim, keepdim=True)
    cumsum = torch.where(torch.isfinite(srt), srt, torch.zeros_like(srt)).cumsum(dim)
    last = (support - 1).clamp(min=0)
    tau = (cumsum.gather(dim, last) - 1) / support.clamp(min=1).to(Z.dtype)
    # relu, not clamp: at a tie with the threshold clamp passes the gradient
    # through, while the Jacobian on the support {p > 0} (as in the training
    # path) gives that entry none.
    return torch.relu(Z - tau).to(X.dtype)


def _entmax15_closed_form(X: Tensor, dim: int) -> Tensor:
    """1.5-entmax from the sorted scores with plain differentiable ops (export path)."""
    _check_input_scriptable(X, dim)
    Z = _shift_for_closed_form(X, dim) / 2
    srt = torch.sort(Z, dim=dim, descending=True).values
    # As in _sparsemax_closed_form: support size without gradient, ties with
    # the threshold excluded.
    tau, _ = _entmax15_from_sorted(srt.detach(), dim)
    support = (srt.detach() > tau).sum(dim, keepdim=True)
    Zf = torch.where(torch.isfinite(srt), srt, torch.zeros_like(srt))
    last = (support - 1).clamp(min=0)
    count = support.clamp(min=1).to(Z.dtype)
    mean = Zf.cumsum(dim).gather(dim, last) / count
    mean_sq = (Zf * Zf).cumsum(dim).gather(dim, last) / count
    # Evaluating the quadratic only at the support keeps sqrt away from the
    # clamped zeros of other prefixes, whose infinite slope would give NaN.
    tau = mean - _safe_sqrt((1 - count * (mean_sq - mean * mean)) / count)
    return (torch.clamp(Z - tau, min=0) ** 2).to(X.dtype)


# ---------------------------------------------------------------- sort-free solvers


def _row_max(X, dim):
    """Row maximum (compute dtype), the rows not to solve, and their fixed threshold.

    The solvers start from thresholds relative to the row maximum. Rows whose
    max is not finite are not solved: an all ``-inf`` row gets threshold 0 and
    hence zeros, a row with NaN or ``+inf`` gets NaN and hence NaN; their max
    is replaced by 0 so that no ``-inf - -inf`` is formed. Returns ``(m,
    inactive, fixed_tau, largest)`` with ``largest = max |m|`` over the rows
    solved, and ``inactive = fixed_tau = None`` when every row has a finite max.
    """
    m = X.amax(dim=dim, keepdim=True).to(_compute_dtype(X.dtype))
    # The largest |max| is finite iff every row's is (NaN propagates).
    largest = float(m.abs().amax())
    if math.isfinite(largest):
        return m, None, None, largest
    active = m.abs() < math.inf
    fixed_tau = torch.where(m == -math.inf, 0.0, math.nan)
    m = torch.where(active, m, 0.0)
    return m, ~active, fixed_tau, float(torch.linalg.vector_norm(m, ord=math.inf))


def _second_largest(X, m, dim, Y, scale=1.0):
    """Largest entry of ``X - m`` strictly below 0, rounded down and times ``scale``; ``-inf`` if none.

    1/z is decreasing on z < 0 and sends the maxima (+0) to +inf and ``-inf``
    to -0, so one reciprocal and one ``amin`` find it without ``argmax`` or a
    sort (both far slower on CPU). All maxima tied gives 0, itself an entry.
    ``scale`` must be a power of two, so that folding it into the final
    multiplication rounds exactly as a separate one would.
    """
    inverse = torch.sub(X, m, out=Y).reciprocal_().amin(dim=dim, keepdim=True)
    # Two reciprocals round twice; shrinking by 2^-20 keeps the result at or
    # below the true entry, which is what makes the bounds built on it valid.
    return inverse.reciprocal_().mul_(scale * (1 + 2.0**-20))


# Rows whose |max| stays below this are measured from an absolute threshold in
# one subtraction per pass; the threshold then lives on a float grid no coarser
# than that of 2 * _ONE_SUBTRACTION_LIMIT, i.e. within a few ulps of 1.
# Larger scores are measured as (X - max) - tau, one pass more, so that the
# threshold's resolution does not degrade with the scores' offset.
_ONE_SUBTRACTION_LIMIT = 8.0


class _Threshold:
    """A row-wise threshold ``base + tau`` and the passes that measure scores from it.

    With ``base = 0`` (small scores) ``tau`` is absolute and ``X - threshold``
    takes one subtraction; otherwise ``base`` is the row max and ``tau`` is
    relative to it, kept apart so that its precision does not depend on the
    scores' offset (``X - max`` is exact near the max, by Sterbenz's lemma).
    """

    def __init__(self, m, tau, largest_max):
        self.relative = largest_max > _ONE_SUBTRACTION_LIMIT
        self.m = m
        self.tau = tau if self.relative else m + tau

    def measure(self, X, Y):
        """Write ``X - threshold`` into ``Y`` and return it."""
        if self.relative:
            return torch.sub(X, self.m, out=Y).sub_(self.tau)
        return torch.sub(X, self.tau, out=Y)

    def measure_half(self, X, Y, step):
        """Write ``(X - threshold - step) / 2`` into ``Y`` and return it.

        ``step`` is merged into ``tau`` first, which rounds it to the
        resolution the threshold has anyway (``tau`` is relative in the
        ``relative`` mode, so this loses nothing to the scores' offset).
        """
        # One add computes X / 2 - (tau + step) / 2: halving is exact, so it
        # rounds as X - (tau + step) would, without a separate halving pass.
        shift = torch.add(self.tau, step).mul_(-0.5)
        if self.relative:
            return torch.add(shift, torch.sub(X, self.m, out=Y), alpha=0.5, out=Y)
        return torch.add(shift, X, alpha=0.5, out=Y)


def _sparsemax_sortfree(X, m, largest_max, dim, inactive, fixed_tau, Y):
    """Michelot's algorithm, vectorised over rows: returns ``(threshold, step, unsolved)``.

    Iterating ``tau_{t+1} = (sum_{x > tau_t} x - 1) / |{x > tau_t}|`` from
    below the threshold, ``tau`` increases monotonically while the support
    shrinks; once the support no longer changes, ``tau`` is the exact threshold
    of the exact support. The start is the threshold of the two largest entries
    alone, a lower bound (fewer entries need a lower threshold to reach mass 1)
    that saves one or two passes over the usual ``max - 1``.

    ``sparsemax(X) = [threshold.measure(X) - step]_+``: the last small
    correction ``step`` is kept apart from the threshold at which the support
    was measured, so that it keeps its full precision. ``m`` and
    ``largest_max`` come from :func:`_row_max`; ``Y`` is a scratch buffer shaped
    like ``X`` in the compute dtype.
    ``inactive`` rows (or None) get threshold ``fixed_tau`` and ``step = 0``.
    ``unsolved`` is None, or marks the rows still unsolved after ``_MAX_ITER``
    passes.
    """
    if X.size(dim) > 1:
        tau = _second_largest(X, m, dim, Y).sub_(1).mul_(0.5).clamp_(min=-1.0)
    else:
        tau = torch.full_like(m, -1.0)
    threshold = _Threshold(m, tau, largest_max)
    count_prev = solved = unsolved = None
    for _ in range(_MAX_ITER):
        threshold.measure(X, Y).clamp_(min=0)
        excess = Y.sum(dim=dim, keepdim=True).sub_(1)
        count = Y.sign_().sum(dim=dim, keepdim=True)
        if inactive is not None:
            # Their NaN counts would never compare equal: hold them constant.
            count.masked_fill_(inactive, 1)
            excess.masked_fill_(inactive, 0)
        step = excess / count
        if count_prev is not None:
            # Supports {x > threshold} are nested, so equal sizes mean equal
            # sets: threshold + step is the threshold of the support it induces.
            if torch.equal(count, count_prev):
                break
            # Solved rows are frozen, so they stay solved and their result
            # does not depend on how long the other rows take.
            solved = count == count_prev
            threshold.tau = torch.where(solved, threshold.tau, threshold.tau + step)
        else:
            threshold.tau = threshold.tau + step
        count_prev = count
    else:
        unsolved = torch.ones_like(step, dtype=torch.bool) if solved is None else ~solved
        if inactive is not None:
            unsolved &= ~inactive
    if inactive is not None:
        # m is 0 on these rows, so tau is the threshold in either mode.
        threshold.tau = torch.where(inactive, fixed_tau, threshold.tau)
    return threshold, step, unsolved


def _entmax15_sortfree(X, m, largest_max, dim, inactive, fixed_tau, Y):
    """Support fixed-point iteration for 1.5-entmax: returns ``(threshold, step, unsolved)``.

    Works on the score scale: ``entmax15(X) = ([threshold.measure(X) - step]_+
    / 2) ** 2``, i.e. the threshold on the entmax scale ``x / 2`` is half the
    score-scale one.

    Each step moves to the exact threshold of the current candidate support
    ``S = {x / 2 > tau}``: the smaller root of ``sum_S (x / 2 - tau) ** 2 = 1``,
    i.e. ``tau = mean_S - sqrt((1 - |S| var_S) / |S|)``. When the quadratic has
    no real root (``S`` far too large), a Newton step on ``sum [x / 2 - tau]_+
    ** 2 = 1`` or the Cauchy-Schwarz bound ``mean_S - 1 / sqrt(|S|)``, both
    below the threshold, is taken instead. The start is the threshold of the
    two largest entries alone, a lower bound (fewer entries need a lower
    threshold).

    A row is done once the closed-form step is below ``_entmax15_tolerance``:
    then every entry misclassified by ``S`` lies within that distance of the
    threshold and, the mass being quadratic in ``x / 2 - tau``, moves the root
    by at most its square -- far below rounding. In the generic case ``S`` is
    then the exact support, and waiting for it to reproduce itself would only
    cost one more pass. Arguments, and the outputs, are as in
    :func:`_sparsemax_sortfree`.
    """
    # A Python number next to a tensor is wrapped into a fresh 0-d tensor at
    # every op, which on small rows costs as much as the op; made once here.
    four = m.new_full((), 4.0)
    if X.size(dim) > 1:
        # With u = m2 / 2 the pair (0, m2) has threshold u - sqrt(2 - u^2) on
        # the score scale while u >= -1; below that m2 is outside the pair's
        # support, and clamping u at -1 gives exactly the lone maximum's -2.
        u = _second_largest(X, m, dim, Y, scale=0.5).clamp_(min=-1.0)
        tau = torch.addcmul(m.new_full((), 2.0), u, u, value=-1).sqrt_()
        tau = torch.sub(u, tau, out=tau)
    else:
        tau = torch.full_like(m, -2.0)
    threshold = _Threshold(m, tau, largest_max)
    tolerance = _entmax15_tolerance(Y.dtype)
    unsolved = None
    for _ in range(_MAX_ITER):
        # Y = [X - threshold]_+ is twice [x / 2 - tau]_+; the formulas below
        # are rescaled accordingly.
        threshold.measure(X, Y).clamp_(min=0)
        s1 = Y.sum(dim=dim, keepdim=True)
        norm = torch.linalg.vector_norm(Y, dim=dim, keepdim=True)
        count = Y.sign_().sum(dim=dim, keepdim=True)
        s2 = norm * norm
        mean = s1 / count
        # The support's entries are small measured from the threshold, so
        # s2 - s1 * mean (|S| var) cancels benignly.
        step = torch.sub(four, torch.addcmul(s2, s1, mean, value=-1)).div_(count).sqrt_()
        step = torch.sub(mean, step, out=step)
        if inactive is not None:
            step.masked_fill_(inactive, 0)
        # sqrt of a negative discriminant is NaN; NaN propagates through the
        # max, so one reduction answers "all done?" and "any without a root?".
        largest = float(step.abs().amax())
        if largest <= tolerance:
            break
        if math.isnan(largest):
            # No root: S is too large and the mass exceeds 1. Newton's step and
            # the Cauchy-Schwarz bound both stay below the threshold. Where the
            # quadratic has a root they are also at or below its smaller one
            # (the tangent lies under the convex quadratic, which is still >= 4
            # at mean - 2 / sqrt(|S|)), so fmax, which passes over NaN, keeps
            # the closed form wherever it is defined.
            newton = torch.sub(s2, four).div_(s1 + s1)
            bound = torch.add(mean, torch.rsqrt(count), alpha=-2)
            step = torch.fmax(step, torch.maximum(newton, bound, out=newton))
        threshold.tau = threshold.tau + step
    else:
        unsolved = ~(step.abs() <= tolerance)
        step = torch.zeros_like(step)
    if inactive is not None:
        threshold.tau = torch.where(inactive, fixed_tau, threshold.tau)
    return threshold, step, unsolved


def _entmax15_tolerance(dtype):
    # Thresholds are on the score scale, within a few units of 0 or of the
    # measuring base, so rounding noise in a step at the fixed point is a few
    # (scaled) eps, far below sqrt(eps) / 8; an entry misclassified by that
    # much moves the threshold by ~ (sqrt(eps) / 8)^2.
    return math.sqrt(torch.finfo(dtype).eps) / 8


def _vmap_rule(function, in_dims, X, dim, k):
    # The solvers branch on data (convergence), which vmap cannot trace through,
    # so the batch dimension is made an ordinary leading dimension instead.
    X = X.movedim(in_dims[0], 0)
    return function.apply(X, dim % (X.dim() - 1) + 1, k), 0


def _sparsemax_jacobian_product(Y, v, dim):
    """``J v`` (= ``J^T v``, J is symmetric) for sparsemax output ``Y``, in differentiable ops."""
    support = Y > 0
    # clamp: an all -inf row has an empty support and must get 0, not 0/0.
    count = support.sum(dim, keepdim=True).clamp(min=1)
    mean = torch.where(support, v, 0.0).sum(dim, keepdim=True) / count
    return torch.where(support, v - mean, 0.0)


def _entmax15_jacobian_product(Y, v, dim):
    """``J v`` (= ``J^T v``) for 1.5-entmax output ``Y``, in differentiable ops."""
    s = _safe_sqrt(Y)
    sv = s * v
    # sum(s) >= 1 on any row with a support; the clamp only turns the 0/0 of
    # an all -inf row into 0.
    q = sv.sum(dim, keepdim=True) / s.sum(dim, keepdim=True).clamp(min=torch.finfo(Y.dtype).tiny)
    return sv - q * s


def _sparsemax_forward(X, dim, k, keep_support=False):
    """``(sparsemax(X), support)``: the 0/1 support (compute dtype) if asked for and at hand, else None."""
    if X.numel() == 0:
        return torch.empty_like(X), None
    m, inactive, fixed_tau, largest_max = _row_max(X, dim)
    Y = torch.empty_like(X, dtype=m.dtype)
    threshold, step, unsolved = _sparsemax_sortfree(X, m, largest_max, dim, inactive, fixed_tau, Y)
    # Without a support to keep, the scratch buffer becomes the output.
    P = threshold.measure(X, torch.empty_like(Y) if keep_support else Y).sub_(step).clamp_(min=0)
    if unsolved is not None:
        # Never seen outside adversarial inputs: finish those rows by sorting.
        Z = X - m
        tau, _ = _sparsemax_threshold_and_support(Z, dim=dim, k=k)
        P = torch.where(unsolved, Z.sub_(tau).clamp_(min=0), P)
    # The support is taken from P itself (not from the solver's last pass, at
    # threshold - step) so that an entry tied with the threshold, with p = 0,
    # gets no gradient. Computed here it reuses the scratch buffer and spares
    # the backward an allocation.
    support = torch.sign(P, out=Y) if keep_support else None
    return P.to(X.dtype), support


def _sparsemax_backward(P, grad_output, dim, support=None):
    """Vector-Jacobian product from the output ``P`` (and, if kept, its 0/1 support)."""
    dtype = P.dtype
    compute = _compute_dtype(dtype)
    P, g = P.to(compute), grad_output.to(compute)
    if torch.is_grad_enabled():
        # create_graph=True: differentiable ops only, so double backward works.
        return _sparsemax_jacobian_product(P, g, dim).to(dtype)
    if support is None:
        support = torch.sign(P)
    grad = support * g
    # clamp: an all -inf row has an empty support and must get 0, not 0/0.
    mean = grad.sum(dim, keepdim=True) / support.sum(dim, keepdim=True).clamp_(min=1)
    return grad.addcmul_(support, mean, value=-1).to(dtype)


def _entmax15_forward(X, dim, k, keep_root=False):
    """``(entmax15(X), root)``: ``sqrt(entmax15(X))`` (compute dtype) if asked for, else None."""
    if X.numel() == 0:
        return torch.empty_like(X), None
    m, inactive, fixed_tau, largest_max = _row_max(X, dim)
    Y = torch.empty_like(X, dtype=m.dtype)
    threshold, step, unsolved = _entmax15_sortfree(X, m, largest_max, dim, inactive, fixed_tau, Y)
    root = threshold.measure_half(X, Y, step).clamp_(min=0)
    if unsolved is not None:
        Z = (X - m) / 2
        tau, _ = _entmax_threshold_and_support(Z, dim=dim, k=k)
        root = torch.where(unsolved, Z.sub_(tau).clamp_(min=0), root)
    if keep_root:
        # A fresh buffer for p, so that the root survives for the backward.
        return root.square().to(X.dtype), root
    return root.square_().to(X.dtype), None


def _sqrt_of_probabilities(P):
    # torch.sqrt is several times slower on exact zeros than on positive
    # numbers on some CPUs; sqrt of the clamped value, then zeroing everything
    # that was clamped, gives exactly sqrt(P) with P's zeros kept exact.
    tiny = torch.finfo(P.dtype).tiny
    R = P.clamp_min(tiny).sqrt_()
    return torch.threshold_(R, math.sqrt(tiny), 0.0)


def _entmax15_backward(P, grad_output, dim, root=None):
    """Vector-Jacobian product from the output ``P`` (and, if kept, ``sqrt(P)``)."""
    dtype = P.dtype
    compute = _compute_dtype(dtype)
    P, g = P.to(compute), grad_output.to(compute)
    if torch.is_grad_enabled():
        # create_graph=True: differentiable ops only, so double backward works.
        return _entmax15_jacobian_product(P, g, dim).to(dtype)
    s = _sqrt_of_probabilities(P) if root is None else root
    sg = s * g
    q = sg.sum(dim, keepdim=True) / s.sum(dim, keepdim=True).clamp_(min=torch.finfo(compute).tiny)
    return sg.addcmul_(s, q, value=-1).to(dtype)


class _ThresholdRules:
    """Backward and forward-mode rules shared by the sort-free maps' autograd functions.

    A subclass names its vector-Jacobian product ``_backward(P, g, dim,
    *saved)`` (``saved``: whatever else its forward kept) and its Jacobian
    product ``_jacobian_product(P, v, dim)`` in differentiable ops; the
    Jacobian is symmetric, so one product serves both modes.
    """

    @classmethod
    def backward(cls, ctx, grad_output):
        """Return ``(grad_X, None, None)``; ``grad_X`` has the shape and dtype of ``X``."""
        P, *saved = ctx.saved_tensors
        return cls._backward(P, grad_output, ctx.dim, *saved), None, None

    @classmethod
    def jvp(cls, ctx, X_tangent, dim_tangent, k_tangent):
        """Forward-mode product ``J X_tangent``; the Jacobian is symmetric."""
        P = ctx.saved_tensors[0]
        compute = _compute_dtype(P.dtype)
        return cls._jacobian_product(P.to(compute), X_tangent.to(compute), ctx.dim).to(P.dtype)


class _ThresholdFunction(_ThresholdRules, torch.autograd.Function):
    """The setup_context style shared by :class:`SparsemaxFunction` and :class:`Entmax15Function`."""

    @staticmethod
    def setup_context(ctx, inputs, output):
        """Save the output and ``dim``; the Jacobian is a function of ``p`` alone."""
        _, dim, _ = inputs
        ctx.dim = dim
        ctx.save_for_backward(output)
        ctx.save_for_forward(output)

    @classmethod
    def vmap(cls, info, in_dims, X, dim, k):
        """Batch over ``X`` by folding the vmapped dimension into the call."""
        return _vmap_rule(cls, in_dims, X, dim, k)


class SparsemaxFunction(_ThresholdFunction):
    """Autograd function for sparsemax with its closed-form Jacobian.

    Use :func:`sparsemax` rather than calling ``apply(X, dim, k)`` directly.
    On the support ``S``, the vector-Jacobian product is ``g - mean_S(g)``, and
    it is zero elsewhere (Martins & Astudillo, 2016, Sec. 2.5). Compatible with
    ``torch.func`` transforms (vmap, grad, jacrev, jacfwd) and double backward.
    """

    _backward = staticmethod(_sparsemax_backward)
    _jacobian_product = staticmethod(_sparsemax_jacobian_product)

    @staticmethod
    def forward(X, dim=-1, k=None):
        """Return ``sparsemax(X)`` along ``dim``; shape and dtype of ``X``."""
        return _sparsemax_forward(X, dim, k)[0]


class Entmax15Function(_ThresholdFunction):
    """Autograd function for 1.5-entmax with its closed-form Jacobian.

    Use :func:`entmax15` rather than calling ``apply(X, dim, k)`` directly.
    With ``s = sqrt(p)`` the vector-Jacobian product is
    ``s * g - s * sum(s * g) / sum(s)`` (Peters et al., 2019, Prop. 2).
    Compatible with ``torch.func`` transforms and double backward.
    """

    _backward = staticmethod(_entmax15_backward)
    _jacobian_product = staticmethod(_entmax15_jacobian_product)

    @staticmethod
    def forward(X, dim=-1, k=None):
        """Return ``entmax15(X)`` along ``dim``; shape and dtype of ``X``."""
        return _entmax15_forward(X, dim, k)[0]


class _SparsemaxEager(_ThresholdRules, torch.autograd.Function):
    # SparsemaxFunction in the older ctx-in-forward style, which the autograd
    # engine dispatches some 40 us faster per forward+backward (a tenth of the
    # whole cost on small inputs), and which can save the support computed in
    # the forward's scratch buffer, sparing the backward an allocation.
    # torch.func transforms need the setup_context style, so this is used only
    # when none is active.
    _backward = staticmethod(_sparsemax_backward)
    _jacobian_product = staticmethod(_sparsemax_jacobian_product)

    @staticmethod
    def forward(ctx, X, dim, k):
        P, support = _sparsemax_forward(X, dim, k, keep_support=ctx.needs_input_grad[0])
        ctx.dim = dim
        ctx.save_for_backward(P, support)
        ctx.save_for_forward(P)
        return P


class _Entmax15Eager(_ThresholdRules, torch.autograd.Function):
    # See _SparsemaxEager; keeps sqrt(p), which the backward would otherwise
    # recompute.
    _backward = staticmethod(_entmax15_backward)
    _jacobian_product = staticmethod(_entmax15_jacobian_product)

    @staticmethod
    def forward(ctx, X, dim, k):
        P, root = _entmax15_forward(X, dim, k, keep_root=ctx.needs_input_grad[0])
        ctx.dim = dim
        ctx.save_for_backward(P, root)
        ctx.save_for_forward(P)
        return P


# Private, hence looked up defensively: without it the public Functions are
# always used, which is correct, only slower.
_functorch_active = getattr(torch._C, "_are_functorch_transforms_active", lambda: True)


# The solvers' loops stop on data, which torch.compile cannot capture: left to
# Dynamo they would break the graph (and recompile) at every convergence test.
# Run eagerly instead; training=False is the fully traceable path.
@torch.compiler.disable
def _sparsemax_sortfree_apply(X, dim, k):
    return (SparsemaxFunction if _functorch_active() else _SparsemaxEager).apply(X, dim, k)


@torch.compiler.disable
def _entmax15_sortfree_apply(X, dim, k):
    return (Entmax15Function if _functorch_active() else _Entmax15Eager).apply(X, dim, k)


def sparsemax(X, dim=-1, k=None, training=True):
    """Sparsemax: Euclidean projection of the scores onto the simplex.

    Solves, independently for every slice ``x`` along ``dim``,

    ``sparsemax(x) = argmin_{p in simplex} ||p - x||^2``,

    whose solution is ``p = [x - tau]_+`` with ``tau`` chosen so that
    ``sum(p) == 1``. Unlike softmax, many entries are exactly zero.

    With ``training=True`` the threshold is found without sorting by
    Michelot's (1986) finite algorithm, ``tau <- (sum_{x > tau} x - 1) /
    |{x > tau}|``, started below the threshold (at that of the two largest
    scores alone): a handful of vectorised passes over the scores, and exact
    -- the threshold of the exact support -- once the support stops changing.
    With ``training=False`` it is read off the sorted scores with plain torch
    ops (Martins & Astudillo, 2016, Alg. 1).

    Parameters
    ----------
    X : torch.Tensor
        Scores of any shape with at least one dimension, any floating dtype
        (``float16`` and ``bfloat16`` are computed in ``float32`` internally).
        Entries may be ``-inf`` (always mapped to probability 0, with zero
        gradient); a slice that is entirely ``-inf`` maps to all zeros. A
        slice containing NaN or ``+inf`` maps to NaN.
    dim : int, default -1
        Dimension along which the output sums to one.
    k : int or None, default None
        Partial-sort size of the sort-based solver that finishes any slice the
        sort-free iteration has not settled after a bounded number of passes
        (in practice only adversarial inputs): only the ``k`` largest scores
        are sorted first, and ``k`` is doubled until the support is certified
        to fit. The result is identical for every ``k``; kept for
        compatibility with the earlier sort-based default, where it was the
        main speed knob. Ignored when ``training=False``.
    training : bool, default True
        ``True``: the fast sort-free solver with a custom backward (supports
        ``torch.func.vmap``, double backward and ``torch.compile``).
        ``False``: the sort-based closed form in plain differentiable torch
        ops without data-dependent control flow, for ``torch.export``,
        ``torch.jit.trace`` and ``torch.jit.script``; slower, same result up to
        rounding.

    Returns
    -------
    torch.Tensor
        Probabilities, same shape and dtype as ``X``; non-negative and summing
        to one along ``dim``.

    Raises
    ------
    TypeError
        If ``X`` is not a floating-point tensor or ``dim`` is not an int.
    IndexError
        If ``dim`` is out of range for ``X``.
    ValueError
        If ``k`` is not a positive integer or ``None``, ``X`` is 0-d, or ``X``
        has size 0 along ``dim``.

    References
    ----------
    Martins, A. F. T. & Astudillo, R. F. (2016). From softmax to sparsemax: a
    sparse model of attention and multi-label classification. ICML.

    Michelot, C. (1986). A finite algorithm for finding the projection of a
    point onto the canonical simplex of R^n. Journal of Optimization Theory
    and Applications 50(1), 195-200.
    """
    k = _check_k(k)
    _check_input(X, dim)
    if not training:
        return _sparsemax_closed_form(X, dim)
    return _sparsemax_sortfree_apply(X, dim, k)


def entmax15(X, dim=-1, k=None, training=True):
    """1.5-entmax: the alpha-entmax mapping at ``alpha = 1.5``.

    Solves, independently for every slice ``x`` along ``dim``,

    ``entmax15(x) = argmax_{p in simplex} p . x + H^T_{1.5}(p)``,

    with Tsallis entropy ``H^T_alpha(p) = (1 - sum_j p_j ** alpha) /
    (alpha * (alpha - 1))``. The solution is ``p = [x / 2 - tau]_+ ** 2``.
    It is sparse like sparsemax but smoother, sitting between softmax
    (``alpha = 1``) and sparsemax (``alpha = 2``).

    With ``training=True`` the threshold is found without sorting: on a
    candidate support ``S`` it has the closed form ``tau = mean_S -
    sqrt((1 - |S| var_S) / |S|)`` (the root of ``sum_S (x/2 - tau) ** 2 =
    1``), and the iteration ``tau <- tau({x/2 > tau})`` (Michelot's scheme
    with this closed form; Newton steps while the quadratic has no root)
    stops once a step is below ``sqrt(eps) / 8``. Entries misclassified at
    that point lie within that distance of ``tau`` and, the mass being
    quadratic there, move it by ``O(eps / 64)``: the result equals the
    sort-based one to floating-point precision. With ``training=False`` the
    threshold is read off the sorted scores with plain torch ops (Peters et
    al., 2019, Alg. 2).

    Parameters
    ----------
    X : torch.Tensor
        Scores of any shape with at least one dimension, any floating dtype
        (``float16`` and ``bfloat16`` are computed in ``float32`` internally).
        ``-inf`` entries get probability 0 and zero gradient; an all ``-inf``
        slice maps to zeros; a slice with NaN or ``+inf`` maps to NaN.
    dim : int, default -1
        Dimension along which the output sums to one.
    k : int or None, default None
        Partial-sort size of the sort-based fallback solver; see
        :func:`sparsemax`. The result is identical for every ``k``.
    training : bool, default True
        Sort-free solver with custom backward (``True``) or the exportable
        sort-based closed form (``False``); see :func:`sparsemax`.

    Returns
    -------
    torch.Tensor
        Probabilities, same shape and dtype as ``X``; non-negative and summing
        to one along ``dim``.

    Raises
    ------
    TypeError
        If ``X`` is not a floating-point tensor or ``dim`` is not an int.
    IndexError
        If ``dim`` is out of range for ``X``.
    ValueError
        If ``k`` is not a positive integer or ``None``, ``X`` is 0-d, or ``X``
        has size 0 along ``dim``.

    References
    ----------
    Peters, B., Niculae, V. & Martins, A. F. T. (2019). Sparse
    sequence-to-sequence models. ACL. (Alg. 2, Prop. 2.)

    Blondel, M., Martins, A. F. T. & Niculae, V. (2020). Learning with
    Fenchel-Young losses. JMLR 21.

    Michelot, C. (1986). A finite algorithm for finding the projection of a
    point onto the canonical simplex of R^n. Journal of Optimization Theory
    and Applications 50(1), 195-200.
    """
    k = _check_k(k)
    _check_input(X, dim)
    if not training:
        return _entmax15_closed_form(X, dim)
    return _entmax15_sortfree_apply(X, dim, k)


class _ThresholdMap(nn.Module):
    """Shared module plumbing of :class:`Sparsemax` and :class:`Entmax15`."""

    def __init__(self, dim=-1, k=None):
        super().__init__()
        if not isinstance(dim, numbers.Integral) or isinstance(dim, bool):
            raise TypeError(f"dim must be an int, got dim={dim!r}")
        self.dim = int(dim)
        self.k = _check_k(k)

    def extra_repr(self):
        """Show ``dim`` and ``k`` in the module's repr."""
        return f"dim={self.dim}, k={self.k}"


class Sparsemax(_ThresholdMap):
    """Module form of :func:`sparsemax`.

    In training mode it uses the sort-free solver; after ``.eval()`` it uses
    the sort-based closed form in plain torch ops (``training=False``), so an
    evaluation-mode module can be exported with ``torch.export``, traced with
    ``torch.jit.trace`` or compiled with ``torch.jit.script``. The sorting
    makes evaluation mode markedly slower on wide inputs; call
    :func:`sparsemax` directly for fast inference that need not be exported.

    Parameters
    ----------
    dim : int, default -1
        Dimension along which the output sums to one.
    k : int or None, default None
        Partial-sort size of the fallback solver; see :func:`sparsemax`.

    Raises
    ------
    TypeError
        If ``dim`` is not an int.
    ValueError
        If ``k`` is not a positive integer or ``None``.

    References
    ----------
    Martins, A. F. T. & Astudillo, R. F. (2016). From softmax to sparsemax.
    ICML.

    Michelot, C. (1986). A finite algorithm for finding the projection of a
    point onto the canonical simplex of R^n. JOTA 50(1).
    """

    def forward(self, X: Tensor) -> Tensor:
        """Apply sparsemax to ``X`` (any shape); returns the same shape and dtype."""
        if self.training:
            return self._forward_training(X)
        return _sparsemax_closed_form(X, self.dim)

    @torch.jit.unused
    def _forward_training(self, X: Tensor) -> Tensor:
        # The autograd.Function is not scriptable; a scripted module raises if
        # called in training mode rather than failing to compile.
        return sparsemax(X, dim=self.dim, k=self.k)


class Entmax15(_ThresholdMap):
    """Module form of :func:`entmax15`.

    Training mode uses the sort-free solver, evaluation mode the exportable
    (slower) sort-based closed form; see :class:`Sparsemax`.

    Parameters
    ----------
    dim : int, default -1
        Dimension along which the output sums to one.
    k : int or None, default None
        Partial-sort size of the fallback solver; see :func:`sparsemax`.

    Raises
    ------
    TypeError
        If ``dim`` is not an int.
    ValueError
        If ``k`` is not a positive integer or ``None``.

    References
    ----------
    Peters, B., Niculae, V. & Martins, A. F. T. (2019). Sparse
    sequence-to-sequence models. ACL.
    """

    def forward(self, X: Tensor) -> Tensor:
        """Apply 1.5-entmax to ``X`` (any shape); returns the same shape and dtype."""
        if self.training:
            return self._forward_training(X)
        return _entmax15_closed_form(X, self.dim)

    @torch.jit.unused
    def _forward_training(self, X: Tensor) -> Tensor:
        return entmax15(X, dim=self.dim, k=self.k)
