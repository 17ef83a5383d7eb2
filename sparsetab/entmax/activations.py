"""Exact, sort-based sparsemax and 1.5-entmax.

Both maps have the closed form ``p = [z - tau]_+ ** (1 / (alpha - 1))`` for a
row-wise threshold ``tau``; the threshold is found exactly from the sorted
scores, so the result is a true projection rather than an approximation.
"""

import numbers

import torch
from torch import nn

__all__ = ["sparsemax", "entmax15", "Sparsemax", "Entmax15", "SparsemaxFunction", "Entmax15Function"]


def _check_k(k):
    # bool is an int subclass, but k=True is almost certainly a mistake.
    if k is None or (isinstance(k, numbers.Integral) and not isinstance(k, bool) and k > 0):
        return None if k is None else int(k)
    raise ValueError(f"k must be a positive integer or None, got k={k!r}")


def _check_input(X, dim):
    X.size(dim)  # raises IndexError for an out-of-range dim, as torch itself does
    if X.size(dim) == 0:
        raise ValueError(f"cannot normalise over dim={dim}: it has size 0")


def _positions(sorted_X, dim):
    """1, 2, ..., n laid out along ``dim`` so it broadcasts against ``sorted_X``."""
    n = sorted_X.size(dim)
    shape = [1] * sorted_X.dim()
    shape[dim] = n
    return torch.arange(1, n + 1, dtype=sorted_X.dtype, device=sorted_X.device).view(shape)


def _leading_run(passed, dim):
    # The support test is monotone in exact arithmetic, but rounding can flip it
    # for entries tied with the threshold (e.g. pass, fail, pass). Counting only
    # the leading run makes the answer depend on a prefix of the sorted scores
    # alone, which is what lets a top-k prefix reproduce the full sort exactly.
    return (passed.logical_not().cumsum(dim) == 0).sum(dim, keepdim=True)


def _sparsemax_from_sorted(Z, dim):
    finite = torch.isfinite(Z)
    # -inf entries are masked out of the sums so no inf - inf NaN is ever formed;
    # they can never pass the support test below because their left side is -inf.
    cumsum = torch.where(finite, Z, 0).cumsum(dim)
    j = _positions(Z, dim)
    support = _leading_run(1 + j * Z > cumsum, dim)
    # Only a NaN row has an empty support; reading position 0 then lets the NaN
    # propagate to the output (as softmax does) instead of failing on index -1.
    last = (support - 1).clamp(min=0)
    tau = (cumsum.gather(dim, last) - 1) / support.clamp(min=1).to(Z.dtype)
    return tau, support


def _entmax15_from_sorted(Z, dim):
    finite = torch.isfinite(Z)
    Zf = torch.where(finite, Z, 0)
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
    """Threshold ``tau`` with ``sparsemax(X) = [X - tau]_+`` and its support size.

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
    """Threshold ``tau`` with ``entmax15 = [X - tau]_+ ** 2`` and its support size.

    ``X`` must already be on the entmax scale, i.e. ``scores / 2`` (typically
    also shifted by the row maximum); see Peters et al. (2019), Alg. 2.
    Parameters, shapes and the meaning of ``k`` are as in
    :func:`_sparsemax_threshold_and_support`.
    """
    return _threshold_and_support(X, dim, k, _entmax15_from_sorted)


def _safe_sqrt(Y):
    # Double `where` keeps the derivative of sqrt at 0 (infinite) out of any
    # second-order graph built through the backward pass.
    positive = Y > 0
    return torch.where(positive, torch.sqrt(torch.where(positive, Y, 1)), 0)


class SparsemaxFunction(torch.autograd.Function):
    """Autograd function for sparsemax with its closed-form Jacobian.

    Use :func:`sparsemax` rather than calling ``apply`` directly. On the
    support ``S``, the vector-Jacobian product is ``g - mean_S(g)``, and it is
    zero elsewhere (Martins & Astudillo, 2016, Sec. 2.5).
    """

    generate_vmap_rule = True

    @staticmethod
    def forward(X, dim=-1, k=None):
        """Return ``sparsemax(X)`` along ``dim``; shape and dtype of ``X``."""
        # Shifting by the max keeps the cumulative sums small and loses nothing:
        # sparsemax is invariant to adding a constant per row.
        Z = X - X.amax(dim=dim, keepdim=True)
        tau, _ = _sparsemax_threshold_and_support(Z, dim=dim, k=k)
        return torch.clamp(Z - tau, min=0)

    @staticmethod
    def setup_context(ctx, inputs, output):
        """Save the output and ``dim``; the Jacobian needs only the support."""
        _, dim, _ = inputs
        ctx.dim = dim
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, grad_output):
        """Return ``(grad_X, None, None)``; ``grad_X`` has the shape of ``X``."""
        (Y,) = ctx.saved_tensors
        support = Y > 0
        g = torch.where(support, grad_output, 0)
        mean = g.sum(ctx.dim, keepdim=True) / support.sum(ctx.dim, keepdim=True)
        return torch.where(support, grad_output - mean, 0), None, None


class Entmax15Function(torch.autograd.Function):
    """Autograd function for 1.5-entmax with its closed-form Jacobian.

    Use :func:`entmax15` rather than calling ``apply`` directly. With
    ``s = sqrt(p)`` the vector-Jacobian product is
    ``s * g - s * sum(s * g) / sum(s)`` (Peters et al., 2019, Prop. 2).
    """

    generate_vmap_rule = True

    @staticmethod
    def forward(X, dim=-1, k=None):
        """Return ``entmax15(X)`` along ``dim``; shape and dtype of ``X``."""
        Z = X / 2
        Z = Z - Z.amax(dim=dim, keepdim=True)
        tau, _ = _entmax_threshold_and_support(Z, dim=dim, k=k)
        return torch.clamp(Z - tau, min=0) ** 2

    @staticmethod
    def setup_context(ctx, inputs, output):
        """Save the output and ``dim``; the Jacobian is a function of ``p`` alone."""
        _, dim, _ = inputs
        ctx.dim = dim
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, grad_output):
        """Return ``(grad_X, None, None)``; ``grad_X`` has the shape of ``X``."""
        (Y,) = ctx.saved_tensors
        s = _safe_sqrt(Y)
        sg = s * grad_output
        q = sg.sum(ctx.dim, keepdim=True) / s.sum(ctx.dim, keepdim=True)
        return sg - q * s, None, None


def sparsemax(X, dim=-1, k=None):
    """Sparsemax: Euclidean projection of the scores onto the simplex.

    Solves, independently for every slice along ``dim``,

    ``sparsemax(x) = argmin_{p in simplex} ||p - x||^2``,

    whose solution is ``p = [x - tau]_+`` with ``tau`` chosen so that
    ``sum(p) == 1``. Unlike softmax, many entries are exactly zero.

    Parameters
    ----------
    X : torch.Tensor
        Scores of any shape (1-D included), ``float32`` or ``float64``.
        Entries may be ``-inf`` (always mapped to 0) as long as every slice
        has at least one finite entry.
    dim : int, default -1
        Dimension along which the output sums to one.
    k : int or None, default None
        Partial-sort size. If given, only the ``k`` largest scores are sorted
        first and ``k`` is doubled until the support is certified to fit;
        this is faster when the support is known to be small. The result is
        identical for every ``k``. Not supported under ``torch.func.vmap``
        (certification needs data-dependent control flow); use ``k=None``.

    Returns
    -------
    torch.Tensor
        Probabilities, same shape and dtype as ``X``; non-negative and summing
        to one along ``dim``.

    Raises
    ------
    IndexError
        If ``dim`` is out of range for ``X``.
    ValueError
        If ``k`` is not a positive integer or ``None``, or ``X`` has size 0
        along ``dim``.

    References
    ----------
    Martins, A. F. T. & Astudillo, R. F. (2016). From softmax to sparsemax: a
    sparse model of attention and multi-label classification. ICML.
    """
    k = _check_k(k)
    _check_input(X, dim)
    return SparsemaxFunction.apply(X, dim, k)


def entmax15(X, dim=-1, k=None):
    """1.5-entmax: the alpha-entmax mapping at ``alpha = 1.5``.

    Solves, independently for every slice along ``dim``,

    ``entmax15(x) = argmax_{p in simplex} p . x + H^T_{1.5}(p)``,

    with Tsallis entropy ``H^T_alpha(p) = (1 - sum_j p_j ** alpha) /
    (alpha * (alpha - 1))``. The solution is ``p = [x / 2 - tau]_+ ** 2``.
    It is sparse like sparsemax but smoother, sitting between softmax
    (``alpha = 1``) and sparsemax (``alpha = 2``).

    Parameters
    ----------
    X : torch.Tensor
        Scores of any shape (1-D included), ``float32`` or ``float64``.
        Entries may be ``-inf`` as long as every slice has a finite entry.
    dim : int, default -1
        Dimension along which the output sums to one.
    k : int or None, default None
        Partial-sort size; see :func:`sparsemax`. The result is identical for
        every ``k``.

    Returns
    -------
    torch.Tensor
        Probabilities, same shape and dtype as ``X``; non-negative and summing
        to one along ``dim``.

    Raises
    ------
    IndexError
        If ``dim`` is out of range for ``X``.
    ValueError
        If ``k`` is not a positive integer or ``None``, or ``X`` has size 0
        along ``dim``.

    References
    ----------
    Peters, B., Niculae, V. & Martins, A. F. T. (2019). Sparse
    sequence-to-sequence models. ACL. (Alg. 2, Prop. 2.)

    Blondel, M., Martins, A. F. T. & Niculae, V. (2020). Learning with
    Fenchel-Young losses. JMLR 21.
    """
    k = _check_k(k)
    _check_input(X, dim)
    return Entmax15Function.apply(X, dim, k)


class _SortBasedMap(nn.Module):
    """Shared module plumbing of :class:`Sparsemax` and :class:`Entmax15`."""

    def __init__(self, dim=-1, k=None):
        super().__init__()
        self.dim = dim
        self.k = _check_k(k)

    def extra_repr(self):
        """Show ``dim`` and ``k`` in the module's repr."""
        return f"dim={self.dim}, k={self.k}"


class Sparsemax(_SortBasedMap):
    """Module form of :func:`sparsemax`.

    Parameters
    ----------
    dim : int, default -1
        Dimension along which the output sums to one.
    k : int or None, default None
        Partial-sort size; see :func:`sparsemax`.

    Raises
    ------
    ValueError
        If ``k`` is not a positive integer or ``None``.

    References
    ----------
    Martins, A. F. T. & Astudillo, R. F. (2016). From softmax to sparsemax.
    ICML.
    """

    def forward(self, X):
        """Apply sparsemax to ``X`` (any shape); returns the same shape and dtype."""
        return sparsemax(X, dim=self.dim, k=self.k)


class Entmax15(_SortBasedMap):
    """Module form of :func:`entmax15`.

    Parameters
    ----------
    dim : int, default -1
        Dimension along which the output sums to one.
    k : int or None, default None
        Partial-sort size; see :func:`sparsemax`.

    Raises
    ------
    ValueError
        If ``k`` is not a positive integer or ``None``.

    References
    ----------
    Peters, B., Niculae, V. & Martins, A. F. T. (2019). Sparse
    sequence-to-sequence models. ACL.
    """

    def forward(self, X):
        """Apply 1.5-entmax to ``X`` (any shape); returns the same shape and dtype."""
        return entmax15(X, dim=self.dim, k=self.k)
