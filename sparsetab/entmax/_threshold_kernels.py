"""Thresholds of sparsemax and 1.5-entmax: sort-free for training, sort-based for export.

The numerics behind :mod:`sparsetab.entmax.activations`, without autograd.
Both maps have the form ``p = [z - tau]_+ ** (1 / (alpha - 1))`` for a
row-wise threshold ``tau`` (``z = x`` for sparsemax, ``z = x / 2`` for
1.5-entmax). Two exact ways of finding ``tau`` live here:

- Sort-free (:func:`sparsemax_sortfree`, :func:`entmax15_sortfree`): a
  fixed-point iteration on the support, ``tau <- threshold of the candidate
  support {z > tau}``, which is Michelot's (1986) algorithm for sparsemax and
  its closed-form (quadratic) analogue for 1.5-entmax. Every step is a
  handful of vectorised passes over the scores, and only a few steps are
  needed (3 to 8 on Gaussian scores of width 64 to 30000). Sparsemax stops
  once the support reproduces itself, so ``tau`` is the exact threshold of
  the exact support; 1.5-entmax stops once the closed-form step is below
  ``sqrt(eps) / 8``, which leaves an error of order ``eps / 64`` in ``tau``
  because the mass is quadratic near it. Rows not settled after
  :data:`_MAX_ITER` steps (never seen outside adversarial inputs) are
  finished by sorting. They serve the CPU only (:data:`SORT_FREE_DEVICES`).
- Sorting without autograd (:func:`sparsemax_by_sorting`,
  :func:`entmax15_by_sorting`): the training path on every other device (a
  GPU), one sort and cumulative sums with nothing read back to the host.
- Sort-based (:func:`sparsemax_threshold_and_support`,
  :func:`entmax_threshold_and_support`, and the closed forms
  :func:`sparsemax_closed_form`, :func:`entmax15_closed_form`): the classic
  closed form from the sorted scores (Martins & Astudillo, 2016, Alg. 1;
  Peters et al., 2019, Alg. 2). The closed forms are plain differentiable
  torch ops without data-dependent control flow, so that they can be
  exported, traced and scripted. They are much slower (sorting dominates).

Both agree with each other, and with the reference ``entmax`` package, to
floating-point precision.

References
----------
Martins, A. F. T. & Astudillo, R. F. (2016). From softmax to sparsemax: a
sparse model of attention and multi-label classification. ICML.

Peters, B., Niculae, V. & Martins, A. F. T. (2019). Sparse
sequence-to-sequence models. ACL.

Michelot, C. (1986). A finite algorithm for finding the projection of a
point onto the canonical simplex of R^n. Journal of Optimization Theory and
Applications 50(1), 195-200.
"""

import math

import torch
from torch import Tensor

from ._validation import compute_dtype, propagate_nan_rows

__all__ = [
    "PER_PASS_TEST_DEVICES",
    "SORT_FREE_DEVICES",
    "entmax15_by_sorting",
    "entmax15_closed_form",
    "entmax15_sortfree",
    "entmax_threshold_and_support",
    "safe_sqrt",
    "sparsemax_closed_form",
    "solves_without_sorting",
    "sparsemax_by_sorting",
    "sparsemax_sortfree",
    "sparsemax_threshold_and_support",
    "testing_pass",
    "tests_in_blocks",
]

# Michelot's iteration is finite (each step drops at least one entry from the
# candidate support) but could in principle take d steps, and the 1.5-entmax
# iteration has no such bound; past this many passes the rows still unsettled
# are handed to the sort-based solver, whose cost is then the smaller one.
_MAX_ITER = 48

# Where reading a value from the tensors costs nothing (the CPU), the solvers test convergence after
# every pass, which saves passes. Elsewhere (a GPU) each read stalls the device's queue, so the tests
# are made in blocks: after pass _FIRST_TEST and then every _TEST_EVERY passes, settled rows frozen
# in between; the row-maximum test is replaced by masks, and thresholds are always relative to the
# row maximum. Both give the exact thresholds; they differ by rounding.
PER_PASS_TEST_DEVICES = frozenset({"cpu"})
_FIRST_TEST = 4
_TEST_EVERY = 4

# Where the sort-free solvers are used at all. On the CPU a read of a tensor's value is free and sorting
# is slow, so iterating without a sort wins. On a GPU every convergence test drains the device's queue
# and every pass is a dozen kernel launches, while sorting a row of a few dozen scores is one kernel: there
# sparsemax and 1.5-entmax take the sort-based threshold (:func:`sparsemax_by_sorting`,
# :func:`entmax15_by_sorting`), which reads nothing back and has no data-dependent control flow, so a
# training step that uses them can be captured in a CUDA graph (issue 34; measured on an H200: the
# sort-free solver 2.2-2.9 ms per forward and backward at (1,024, 64), against 0.8 ms for entmax 1.3's
# sort). Tests empty the set to run the sorting path on the CPU.
SORT_FREE_DEVICES = frozenset({"cpu"})


def tests_in_blocks(X):
    """Whether the sort-free solvers of ``X`` test convergence in blocks of passes (see above).

    Parameters
    ----------
    X : torch.Tensor
        The scores.

    Returns
    -------
    bool
        True unless ``X``'s device type is in :data:`PER_PASS_TEST_DEVICES`.
    """
    return X.device.type not in PER_PASS_TEST_DEVICES


def solves_without_sorting(X):
    """Whether sparsemax and 1.5-entmax of ``X`` use the sort-free solvers (see :data:`SORT_FREE_DEVICES`).

    Parameters
    ----------
    X : torch.Tensor
        The scores.

    Returns
    -------
    bool
        True when ``X``'s device type is in :data:`SORT_FREE_DEVICES` (the CPU); otherwise the
        maps sort (:func:`sparsemax_by_sorting`, :func:`entmax15_by_sorting`).
    """
    return X.device.type in SORT_FREE_DEVICES


def testing_pass(iteration):
    """Whether blocked tests (see :func:`tests_in_blocks`) test convergence after pass ``iteration`` (from 1)."""
    return iteration >= _FIRST_TEST and (iteration - _FIRST_TEST) % _TEST_EVERY == 0


# ---------------------------------------------------------------- sort-based


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


def _finite_part(Z: Tensor) -> Tensor:
    # -inf entries are masked out of the sums so no inf - inf NaN is ever formed;
    # they never pass a support test, whose score side is then -inf.
    return torch.where(torch.isfinite(Z), Z, torch.zeros_like(Z))


def _last_position(support: Tensor) -> Tensor:
    # Only a NaN row has an empty support; reading position 0 then lets the NaN
    # propagate to the output (as softmax does) instead of failing on index -1.
    return (support - 1).clamp(min=0)


def _sparsemax_tau(cumsum: Tensor, support: Tensor, dim: int) -> Tensor:
    """``(sum of the first |S| sorted scores - 1) / |S|`` (Martins & Astudillo, 2016, Alg. 1)."""
    return (cumsum.gather(dim, _last_position(support)) - 1) / support.clamp(min=1).to(cumsum.dtype)


def _sparsemax_from_sorted(Z: Tensor, dim: int):
    cumsum = _finite_part(Z).cumsum(dim)
    j = _positions(Z, dim)
    support = _leading_run(1 + j * Z > cumsum, dim)
    return _sparsemax_tau(cumsum, support, dim), support


def _entmax15_from_sorted(Z: Tensor, dim: int):
    Zf = _finite_part(Z)
    j = _positions(Z, dim)
    mean = Zf.cumsum(dim) / j
    mean_sq = (Zf * Zf).cumsum(dim) / j
    delta = (1 - j * (mean_sq - mean * mean)) / j
    tau = mean - torch.sqrt(torch.clamp(delta, min=0))
    support = _leading_run(tau <= Z, dim)
    return tau.gather(dim, _last_position(support)), support


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


def sparsemax_threshold_and_support(X, dim=-1, k=None):
    """Threshold ``tau`` with ``sparsemax(X) = [X - tau]_+`` and its support size, by sorting.

    With ``z`` the scores of a slice sorted in decreasing order, the support
    size is the largest ``j`` with ``1 + j z_j > sum_{i <= j} z_i`` and
    ``tau = (sum_{i <= |S|} z_i - 1) / |S|`` (Martins & Astudillo, 2016,
    Alg. 1). Only the leading run of sorted positions that pass the
    test counts, so that rounding at ties cannot make the support depend on
    entries past it.

    Parameters
    ----------
    X : torch.Tensor
        Scores of any shape with at least one dimension, floating dtype;
        ``-inf`` entries are never in the support.
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
        ``torch.int64``, same shape as ``tau``; 0 only for a slice with NaN.
    """
    return _threshold_and_support(X, dim, k, _sparsemax_from_sorted)


def entmax_threshold_and_support(X, dim=-1, k=None):
    """Threshold ``tau`` with ``entmax15 = [X - tau]_+ ** 2`` and its support size, by sorting.

    ``X`` must already be on the entmax scale, i.e. ``scores / 2`` (typically
    also shifted by the row maximum). With ``z`` sorted in decreasing order,
    the threshold of the prefix of length ``j`` is the smaller root of
    ``sum_{i <= j} (z_i - tau) ** 2 = 1``, ``tau_j = mean_j - sqrt((1 - j
    var_j) / j)``; the support is the leading run of ``tau_j <= z_j`` (Peters
    et al., 2019, Alg. 2).

    Parameters
    ----------
    X : torch.Tensor
        Scores on the entmax scale, any shape with at least one dimension,
        floating dtype; ``-inf`` entries are never in the support.
    dim : int, default -1
        Dimension to normalise over.
    k : int or None, default None
        Partial-sort size, doubled until the support is certified, as in
        :func:`sparsemax_threshold_and_support`; never changes the result.

    Returns
    -------
    tau : torch.Tensor
        The entmax-scale threshold, dtype of ``X``, with ``dim`` of size 1.
    support_size : torch.Tensor
        ``torch.int64``, shaped as ``tau``; 0 only for a slice with NaN.
    """
    return _threshold_and_support(X, dim, k, _entmax15_from_sorted)


def safe_sqrt(Y: Tensor) -> Tensor:
    """``sqrt(Y)`` where ``Y > 0``, else 0, with a finite derivative everywhere.

    Parameters
    ----------
    Y : torch.Tensor
        Any shape, floating dtype.

    Returns
    -------
    torch.Tensor
        Shape and dtype of ``Y``.
    """
    # Double `where` keeps the derivative of sqrt at 0 (infinite) out of any
    # second-order graph built through the backward pass.
    positive = Y > 0
    return torch.where(positive, torch.sqrt(torch.where(positive, Y, 1.0)), 0.0)


def _shift_for_closed_form(X: Tensor, dim: int) -> Tensor:
    Xc = X.to(compute_dtype(X.dtype))
    # Both maps are invariant to a per-row shift, so the max carries no gradient
    # and is detached; a row without a finite max (all -inf, NaN, +inf) is left
    # unshifted so that no inf - inf is formed for an all -inf row.
    m = Xc.detach().amax(dim=dim, keepdim=True)
    return Xc - torch.where(torch.isfinite(m), m, torch.zeros_like(m))


def _gradient_support(srt: Tensor, dim: int, tau: Tensor) -> Tensor:
    # The support size is piecewise constant in X, so it is found without
    # gradient; tau is then recomputed from the kept graph at that position.
    # Counting the entries strictly above tau (a prefix of the sorted scores)
    # drops any tied with it, which the leading run may keep: their p is 0,
    # and with them in the formula they would get a share of the gradient.
    return (srt.detach() > tau).sum(dim, keepdim=True)


def sparsemax_closed_form(X: Tensor, dim: int) -> Tensor:
    """Sparsemax from the sorted scores in plain differentiable torch ops (the export path).

    The threshold of Martins & Astudillo (2016), Alg. 1, without
    data-dependent control flow, so that it can be exported, traced and
    scripted; autograd differentiates it. The arguments are not checked here
    (see :func:`sparsetab.entmax._validation.check_input_scriptable`).

    Parameters
    ----------
    X : torch.Tensor
        Scores of any shape with at least one dimension, floating dtype
        (half precision is computed in float32).
    dim : int
        Dimension along which the output sums to one.

    Returns
    -------
    torch.Tensor
        ``sparsemax(X)``, shape and dtype of ``X``.
    """
    Z = _shift_for_closed_form(X, dim)
    srt = torch.sort(Z, dim=dim, descending=True).values
    tau, _ = _sparsemax_from_sorted(srt.detach(), dim)
    support = _gradient_support(srt, dim, tau)
    tau = _sparsemax_tau(_finite_part(srt).cumsum(dim), support, dim)
    # relu, not clamp: at a tie with the threshold clamp passes the gradient
    # through, while the Jacobian on the support {p > 0} (as in the training
    # path) gives that entry none.
    return propagate_nan_rows(torch.relu(Z - tau).to(X.dtype), X, dim)


def entmax15_closed_form(X: Tensor, dim: int) -> Tensor:
    """1.5-entmax from the sorted scores in plain differentiable torch ops (the export path).

    The threshold of Peters et al. (2019), Alg. 2, without data-dependent
    control flow, so that it can be exported, traced and scripted; autograd
    differentiates it. The arguments are not checked here (see
    :func:`sparsetab.entmax._validation.check_input_scriptable`).

    Parameters
    ----------
    X : torch.Tensor
        Scores of any shape with at least one dimension, floating dtype
        (half precision is computed in float32).
    dim : int
        Dimension along which the output sums to one.

    Returns
    -------
    torch.Tensor
        ``entmax15(X)``, shape and dtype of ``X``.
    """
    Z = _shift_for_closed_form(X, dim) / 2
    srt = torch.sort(Z, dim=dim, descending=True).values
    tau, _ = _entmax15_from_sorted(srt.detach(), dim)
    support = _gradient_support(srt, dim, tau)
    Zf = _finite_part(srt)
    last = _last_position(support)
    count = support.clamp(min=1).to(Z.dtype)
    mean = Zf.cumsum(dim).gather(dim, last) / count
    mean_sq = (Zf * Zf).cumsum(dim).gather(dim, last) / count
    # Evaluating the quadratic only at the support keeps sqrt away from the
    # clamped zeros of other prefixes, whose infinite slope would give NaN.
    tau = mean - safe_sqrt((1 - count * (mean_sq - mean * mean)) / count)
    return propagate_nan_rows((torch.clamp(Z - tau, min=0) ** 2).to(X.dtype), X, dim)


def _shifted_with_bad_rows(X, dim, scale):
    # The scores in the compute dtype, shifted by their row maximum where it is finite, and scaled; and the
    # rows the maps answer with NaN (a NaN or +inf score), found without reading a value back.
    Z = _shift_for_closed_form(X.detach(), dim)
    m = X.detach().amax(dim=dim, keepdim=True)
    bad = torch.isnan(X).any(dim=dim, keepdim=True) | (m == math.inf)
    return (Z / 2 if scale == 2 else Z), bad


def sparsemax_by_sorting(X, dim, keep_support=False):
    """Sparsemax from the sorted scores, without autograd, and optionally its support.

    The threshold of Martins & Astudillo (2016), Alg. 1: one sort, a cumulative sum and a
    gather per row, with no value read back to the host and no data-dependent control flow
    (the solver of the devices outside :data:`SORT_FREE_DEVICES`). Rows are treated as
    :func:`sparsemax_sortfree` treats them: all ``-inf`` gives zeros, a NaN or ``+inf`` score
    gives NaN.

    Parameters
    ----------
    X : torch.Tensor
        Scores of any shape with at least one dimension (possibly empty elsewhere), floating
        dtype; half precision is computed in float32.
    dim : int
        Dimension along which the output sums to one.
    keep_support : bool, default False
        Whether to return the 0/1 indicator of ``{p > 0}`` as well.

    Returns
    -------
    P : torch.Tensor
        ``sparsemax(X)``, shape and dtype of ``X``.
    support : torch.Tensor or None
        With ``keep_support`` (and a non-empty ``X``), the indicator of ``P > 0`` in the
        compute dtype, shape of ``X``; otherwise ``None``.
    """
    if X.numel() == 0:
        return torch.empty_like(X), None
    Z, bad = _shifted_with_bad_rows(X, dim, 1)
    tau, _ = _sparsemax_from_sorted(torch.sort(Z, dim=dim, descending=True).values, dim)
    P = torch.relu(Z - tau).masked_fill_(bad, math.nan)
    support = torch.sign(P) if keep_support else None
    return P.to(X.dtype), support


def entmax15_by_sorting(X, dim, keep_root=False):
    """1.5-entmax from the sorted scores, without autograd, and optionally ``sqrt(p)``.

    The threshold of Peters et al. (2019), Alg. 2, computed as :func:`sparsemax_by_sorting`
    computes sparsemax's: one sort and cumulative sums, nothing read back to the host, rows
    with a NaN or ``+inf`` score NaN, all ``-inf`` rows zero.

    Parameters
    ----------
    X : torch.Tensor
        Scores of any shape with at least one dimension (possibly empty elsewhere), floating
        dtype; half precision is computed in float32.
    dim : int
        Dimension along which the output sums to one.
    keep_root : bool, default False
        Whether to return ``sqrt(p)`` as well, which the backward needs.

    Returns
    -------
    P : torch.Tensor
        ``entmax15(X)``, shape and dtype of ``X``.
    root : torch.Tensor or None
        With ``keep_root`` (and a non-empty ``X``), ``sqrt(P)`` in the compute dtype, shape of
        ``X``; otherwise ``None``.
    """
    if X.numel() == 0:
        return torch.empty_like(X), None
    Z, bad = _shifted_with_bad_rows(X, dim, 2)
    tau, _ = _entmax15_from_sorted(torch.sort(Z, dim=dim, descending=True).values, dim)
    # sqrt(p) = [z - tau]_+, at most 1 up to rounding (see entmax15_sortfree).
    root = (Z - tau).clamp_(min=0, max=1).masked_fill_(bad, math.nan)
    P = root.square()
    return P.to(X.dtype), (root if keep_root else None)


# ---------------------------------------------------------------- sort-free solvers


def _row_max(X, dim, blocked=False):
    """Row maximum (compute dtype), the rows not to solve, and their fixed threshold.

    The solvers start from thresholds relative to the row maximum. Rows whose
    max is not finite are not solved: an all ``-inf`` row gets threshold 0 and
    hence zeros, a row with NaN or ``+inf`` gets NaN and hence NaN; their max
    is replaced by 0 so that no ``-inf - -inf`` is formed. Returns ``(m,
    inactive, fixed_tau, largest)`` with ``largest = max |m|`` over the rows
    solved, and ``inactive = fixed_tau = None`` when every row has a finite max.
    With ``blocked`` nothing is read from the tensors: the masks are always made
    and ``largest`` is ``inf``, which selects thresholds relative to the maximum.
    """
    m = X.amax(dim=dim, keepdim=True).to(compute_dtype(X.dtype))
    if blocked:
        largest = math.inf
    else:
        # The largest |max| is finite iff every row's is (NaN propagates).
        largest = float(m.abs().amax())
        if math.isfinite(largest):
            return m, None, None, largest
    active = m.abs() < math.inf
    fixed_tau = torch.where(m == -math.inf, 0.0, math.nan)
    m = torch.where(active, m, 0.0)
    return m, ~active, fixed_tau, largest if blocked else float(torch.linalg.vector_norm(m, ord=math.inf))


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


def _sparsemax_sortfree_threshold(X, m, largest_max, dim, inactive, fixed_tau, Y, blocked=False):
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
    passes. With ``blocked``, "all rows solved?" is asked only at the passes of
    :func:`testing_pass`; solved rows are frozen, so the extra passes change
    nothing.
    """
    if X.size(dim) > 1:
        tau = _second_largest(X, m, dim, Y).sub_(1).mul_(0.5).clamp_(min=-1.0)
    else:
        tau = torch.full_like(m, -1.0)
    threshold = _Threshold(m, tau, largest_max)
    count_prev = solved = unsolved = None
    for iteration in range(1, _MAX_ITER + 1):
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
            if not blocked and torch.equal(count, count_prev):
                break
            # Solved rows are frozen, so they stay solved and their result
            # does not depend on how long the other rows take.
            solved = count == count_prev
            if blocked and testing_pass(iteration) and bool(solved.all()):
                break
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


def _entmax15_sortfree_threshold(X, m, largest_max, dim, inactive, fixed_tau, Y, blocked=False):
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
    :func:`_sparsemax_sortfree_threshold`. With ``blocked``, rows whose step is
    below the tolerance are frozen (their threshold, hence their step, stays),
    the no-root fallback is taken row by row, and "all done?" is asked only at
    the passes of :func:`testing_pass`.
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
    for iteration in range(1, _MAX_ITER + 1):
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
        if blocked:
            # The rows without a root take the fallback below, by mask; NaN is not <= tolerance, so
            # they are not done.
            step = torch.where(step.isnan(), _entmax15_fallback(s1, s2, count, mean, four), step)
            done = step.abs() <= tolerance
            if testing_pass(iteration) and bool(done.all()):
                break
            threshold.tau = torch.where(done, threshold.tau, threshold.tau + step)
            continue
        # sqrt of a negative discriminant is NaN; NaN propagates through the
        # max, so one reduction answers "all done?" and "any without a root?".
        largest = float(step.abs().amax())
        if largest <= tolerance:
            break
        if math.isnan(largest):
            step = torch.fmax(step, _entmax15_fallback(s1, s2, count, mean, four))
        threshold.tau = threshold.tau + step
    else:
        unsolved = ~(step.abs() <= tolerance)
        step = torch.zeros_like(step)
    if inactive is not None:
        threshold.tau = torch.where(inactive, fixed_tau, threshold.tau)
    return threshold, step, unsolved


def _entmax15_fallback(s1, s2, count, mean, four):
    # No root: S is too large and the mass exceeds 1. Newton's step and the
    # Cauchy-Schwarz bound both stay below the threshold. Where the quadratic
    # has a root they are also at or below its smaller one (the tangent lies
    # under the convex quadratic, which is still >= 4 at mean - 2 / sqrt(|S|)),
    # so fmax, which passes over NaN, keeps the closed form wherever it is
    # defined.
    newton = torch.sub(s2, four).div_(s1 + s1)
    bound = torch.add(mean, torch.rsqrt(count), alpha=-2)
    return torch.maximum(newton, bound, out=newton)


def _entmax15_tolerance(dtype):
    # Thresholds are on the score scale, within a few units of 0 or of the
    # measuring base, so rounding noise in a step at the fixed point is a few
    # (scaled) eps, far below sqrt(eps) / 8; an entry misclassified by that
    # much moves the threshold by ~ (sqrt(eps) / 8)^2.
    return math.sqrt(torch.finfo(dtype).eps) / 8


def sparsemax_sortfree(X, dim, k, keep_support=False):
    """Sparsemax by Michelot's (1986) sort-free iteration, and optionally its support.

    On a device outside :data:`SORT_FREE_DEVICES` (a GPU) it hands over to
    :func:`sparsemax_by_sorting`.

    Rows the iteration has not settled after ``_MAX_ITER`` passes (never seen
    outside adversarial inputs) are finished by
    :func:`sparsemax_threshold_and_support`. A row whose maximum is not finite
    is not iterated: all ``-inf`` gives zeros, NaN or ``+inf`` gives NaN.

    Parameters
    ----------
    X : torch.Tensor
        Scores of any shape with at least one dimension (possibly empty
        elsewhere), floating dtype; half precision is computed in float32.
    dim : int
        Dimension along which the output sums to one.
    k : int or None
        Partial-sort size of the sort-based finish; the result does not
        depend on it.
    keep_support : bool, default False
        Whether to return the 0/1 indicator of ``{p > 0}`` as well.

    Returns
    -------
    P : torch.Tensor
        ``sparsemax(X)``, shape and dtype of ``X``.
    support : torch.Tensor or None
        With ``keep_support`` (and a non-empty ``X``), the indicator of
        ``P > 0`` in the compute dtype, shape of ``X``; otherwise ``None``.
    """
    if X.numel() == 0:
        return torch.empty_like(X), None
    if not solves_without_sorting(X):
        return sparsemax_by_sorting(X, dim, keep_support)
    blocked = tests_in_blocks(X)
    m, inactive, fixed_tau, largest_max = _row_max(X, dim, blocked)
    Y = torch.empty_like(X, dtype=m.dtype)
    threshold, step, unsolved = _sparsemax_sortfree_threshold(X, m, largest_max, dim, inactive, fixed_tau, Y, blocked)
    # Without a support to keep, the scratch buffer becomes the output.
    P = threshold.measure(X, torch.empty_like(Y) if keep_support else Y).sub_(step).clamp_(min=0)
    if unsolved is not None:
        # Never seen outside adversarial inputs: finish those rows by sorting.
        Z = X - m
        tau, _ = sparsemax_threshold_and_support(Z, dim=dim, k=k)
        P = torch.where(unsolved, Z.sub_(tau).clamp_(min=0), P)
    # The support is taken from P itself (not from the solver's last pass, at
    # threshold - step) so that an entry tied with the threshold, with p = 0,
    # gets no gradient. Computed here it reuses the scratch buffer and spares
    # the backward an allocation.
    support = torch.sign(P, out=Y) if keep_support else None
    return P.to(X.dtype), support


def entmax15_sortfree(X, dim, k, keep_root=False):
    """1.5-entmax by the sort-free support iteration, and optionally ``sqrt(p)``.

    On a device outside :data:`SORT_FREE_DEVICES` (a GPU) it hands over to
    :func:`entmax15_by_sorting`.

    The iteration (Michelot's scheme with the closed-form threshold of a
    candidate support, Peters et al., 2019, Alg. 2) stops once a step is
    below ``sqrt(eps) / 8``; rows not settled after ``_MAX_ITER`` passes are
    finished by :func:`entmax_threshold_and_support`. A row whose maximum is
    not finite is not iterated: all ``-inf`` gives zeros, NaN or ``+inf``
    gives NaN.

    Parameters
    ----------
    X : torch.Tensor
        Scores of any shape with at least one dimension (possibly empty
        elsewhere), floating dtype; half precision is computed in float32.
    dim : int
        Dimension along which the output sums to one.
    k : int or None
        Partial-sort size of the sort-based finish; the result does not
        depend on it.
    keep_root : bool, default False
        Whether to return ``sqrt(p)`` as well, which the backward needs.

    Returns
    -------
    P : torch.Tensor
        ``entmax15(X)``, shape and dtype of ``X``.
    root : torch.Tensor or None
        With ``keep_root`` (and a non-empty ``X``), ``sqrt(P)`` in the
        compute dtype, shape of ``X``; otherwise ``None``.
    """
    if X.numel() == 0:
        return torch.empty_like(X), None
    if not solves_without_sorting(X):
        return entmax15_by_sorting(X, dim, keep_root)
    blocked = tests_in_blocks(X)
    m, inactive, fixed_tau, largest_max = _row_max(X, dim, blocked)
    Y = torch.empty_like(X, dtype=m.dtype)
    threshold, step, unsolved = _entmax15_sortfree_threshold(X, m, largest_max, dim, inactive, fixed_tau, Y, blocked)
    # sqrt(p) lies in [0, 1]; rounding can put a lone support's root a few ulps above 1 (a 1-column row
    # at -1/3: p = 1 + 2.4e-7 in float32), which the upper clip removes. Where it bites, p is exactly 1 and
    # the Jacobian 0, so the backward is unchanged.
    root = threshold.measure_half(X, Y, step).clamp_(min=0, max=1)
    if unsolved is not None:
        Z = (X - m) / 2
        tau, _ = entmax_threshold_and_support(Z, dim=dim, k=k)
        root = torch.where(unsolved, Z.sub_(tau).clamp_(min=0, max=1), root)
    if keep_root:
        # A fresh buffer for p, so that the root survives for the backward.
        return root.square().to(X.dtype), root
    return root.square_().to(X.dtype), None
