"""Sparsemax and 1.5-entmax: their autograd functions, functional forms and modules.

Both maps have the form ``p = [z - tau]_+ ** (1 / (alpha - 1))`` for a row-wise
threshold ``tau`` (``z = x`` for sparsemax, ``z = x / 2`` for 1.5-entmax),
found by the solvers of :mod:`sparsetab.entmax._threshold_kernels`:

- ``training=True`` (the default): the sort-free solver inside an
  ``autograd.Function`` with the closed-form Jacobian (Martins & Astudillo,
  2016, Sec. 2.5; Peters et al., 2019, Prop. 2), compatible with
  ``torch.func`` transforms, double backward and ``torch.compile``.
- ``training=False`` (and the modules after ``.eval()``): the sort-based
  closed form in plain differentiable torch ops, which can be exported,
  traced and scripted; much slower (sorting dominates).

Both agree with each other, and with the reference ``entmax`` package, to
floating-point precision.
"""

import math

import torch
from torch import Tensor, nn

from ._threshold_kernels import (
    entmax15_closed_form,
    entmax15_sortfree,
    entmax_threshold_and_support,
    safe_sqrt,
    sparsemax_closed_form,
    sparsemax_sortfree,
    sparsemax_threshold_and_support,
)
from ._validation import check_dim, check_input, check_input_scriptable, check_k, compute_dtype

# The entmax 1.3 package exposes its threshold kernels here under these private names, and code written for it
# (its own tests among it) imports them from ``activations``: the drop-in keeps them importable.
_sparsemax_threshold_and_support = sparsemax_threshold_and_support
_entmax_threshold_and_support = entmax_threshold_and_support

__all__ = ["sparsemax", "entmax15", "Sparsemax", "Entmax15", "SparsemaxFunction", "Entmax15Function"]


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
    s = safe_sqrt(Y)
    sv = s * v
    # sum(s) >= 1 on any row with a support; the clamp only turns the 0/0 of
    # an all -inf row into 0.
    q = sv.sum(dim, keepdim=True) / s.sum(dim, keepdim=True).clamp(min=torch.finfo(Y.dtype).tiny)
    return sv - q * s


def _sparsemax_vjp(P, g, dim, support=None):
    # The no-graph backward, in place; support is the 0/1 indicator of P > 0
    # if the forward kept it.
    if support is None:
        support = torch.sign(P)
    grad = support * g
    # clamp: an all -inf row has an empty support and must get 0, not 0/0.
    mean = grad.sum(dim, keepdim=True) / support.sum(dim, keepdim=True).clamp_(min=1)
    return grad.addcmul_(support, mean, value=-1)


def _sqrt_of_probabilities(P):
    # torch.sqrt is several times slower on exact zeros than on positive
    # numbers on some CPUs; sqrt of the clamped value, then zeroing everything
    # that was clamped, gives exactly sqrt(P) with P's zeros kept exact.
    tiny = torch.finfo(P.dtype).tiny
    R = P.clamp_min(tiny).sqrt_()
    return torch.threshold_(R, math.sqrt(tiny), 0.0)


def _entmax15_vjp(P, g, dim, root=None):
    # The no-graph backward, in place; root is sqrt(P) if the forward kept it.
    s = _sqrt_of_probabilities(P) if root is None else root
    sg = s * g
    q = sg.sum(dim, keepdim=True) / s.sum(dim, keepdim=True).clamp_(min=torch.finfo(P.dtype).tiny)
    return sg.addcmul_(s, q, value=-1)


class _ThresholdRules:
    """Backward and forward-mode rules shared by the sort-free maps' autograd functions.

    A subclass names its Jacobian product ``_jacobian_product(P, v, dim)`` in
    differentiable ops (the Jacobian is symmetric, so one product serves
    both modes) and its faster no-graph vector-Jacobian product ``_vjp(P, g,
    dim, *saved)`` (``saved``: whatever else its forward kept). Both run in
    the compute dtype.
    """

    @classmethod
    def backward(cls, ctx, grad_output):
        """Return ``(grad_X, None, None)``; ``grad_X`` has the shape and dtype of ``X``."""
        P, *saved = ctx.saved_tensors
        dtype = P.dtype
        compute = compute_dtype(dtype)
        P, g = P.to(compute), grad_output.to(compute)
        if torch.is_grad_enabled():
            # create_graph=True: differentiable ops only, so double backward works.
            grad = cls._jacobian_product(P, g, ctx.dim)
        else:
            grad = cls._vjp(P, g, ctx.dim, *saved)
        return grad.to(dtype), None, None

    @classmethod
    def jvp(cls, ctx, X_tangent, dim_tangent, k_tangent):
        """Forward-mode product ``J X_tangent``; the Jacobian is symmetric."""
        P = ctx.saved_tensors[0]
        compute = compute_dtype(P.dtype)
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

    Parameters
    ----------
    *args
        Ignored: an autograd function is used through ``apply``, never
        instantiated (torch warns when it is).
    **kwargs
        Ignored, as ``*args``.

    References
    ----------
    Martins, A. F. T. & Astudillo, R. F. (2016). From softmax to sparsemax: a
    sparse model of attention and multi-label classification. ICML.
    """

    _vjp = staticmethod(_sparsemax_vjp)
    _jacobian_product = staticmethod(_sparsemax_jacobian_product)

    @staticmethod
    def forward(X, dim=-1, k=None):
        """Solve sparsemax of ``X`` along ``dim``: sort-free on the CPU, by sorting elsewhere.

        Parameters
        ----------
        X : torch.Tensor
            Scores of any shape with at least one dimension, floating dtype
            (half precision is computed in float32); not checked here.
        dim : int, default -1
            Dimension along which the output sums to one.
        k : int or None, default None
            Partial-sort size of the sort-based finish; see :func:`sparsemax`.

        Returns
        -------
        torch.Tensor
            Sparsemax of ``X``, shape and dtype of ``X``.
        """
        return sparsemax_sortfree(X, dim, k)[0]


class Entmax15Function(_ThresholdFunction):
    """Autograd function for 1.5-entmax with its closed-form Jacobian.

    Use :func:`entmax15` rather than calling ``apply(X, dim, k)`` directly.
    With ``s = sqrt(p)`` the vector-Jacobian product is
    ``s * g - s * sum(s * g) / sum(s)`` (Peters et al., 2019, Prop. 2).
    Compatible with ``torch.func`` transforms and double backward.

    Parameters
    ----------
    *args
        Ignored: an autograd function is used through ``apply``, never
        instantiated (torch warns when it is).
    **kwargs
        Ignored, as ``*args``.

    References
    ----------
    Peters, B., Niculae, V. & Martins, A. F. T. (2019). Sparse
    sequence-to-sequence models. ACL.
    """

    _vjp = staticmethod(_entmax15_vjp)
    _jacobian_product = staticmethod(_entmax15_jacobian_product)

    @staticmethod
    def forward(X, dim=-1, k=None):
        """Solve 1.5-entmax of ``X`` along ``dim``: sort-free on the CPU, by sorting elsewhere.

        Parameters
        ----------
        X : torch.Tensor
            Scores of any shape with at least one dimension, floating dtype
            (half precision is computed in float32); not checked here.
        dim : int, default -1
            Dimension along which the output sums to one.
        k : int or None, default None
            Partial-sort size of the sort-based finish; see :func:`sparsemax`.

        Returns
        -------
        torch.Tensor
            The 1.5-entmax of ``X``, shape and dtype of ``X``.
        """
        return entmax15_sortfree(X, dim, k)[0]


class _SparsemaxEager(_ThresholdRules, torch.autograd.Function):
    # SparsemaxFunction in the older ctx-in-forward style, which the autograd
    # engine dispatches some 40 us faster per forward+backward (a tenth of the
    # whole cost on small inputs), and which can save the support computed in
    # the forward's scratch buffer, sparing the backward an allocation.
    # torch.func transforms need the setup_context style, so this is used only
    # when none is active.
    _vjp = staticmethod(_sparsemax_vjp)
    _jacobian_product = staticmethod(_sparsemax_jacobian_product)

    @staticmethod
    def forward(ctx, X, dim, k):
        P, support = sparsemax_sortfree(X, dim, k, keep_support=ctx.needs_input_grad[0])
        ctx.dim = dim
        ctx.save_for_backward(P, support)
        ctx.save_for_forward(P)
        return P


class _Entmax15Eager(_ThresholdRules, torch.autograd.Function):
    # See _SparsemaxEager; keeps sqrt(p), which the backward would otherwise
    # recompute.
    _vjp = staticmethod(_entmax15_vjp)
    _jacobian_product = staticmethod(_entmax15_jacobian_product)

    @staticmethod
    def forward(ctx, X, dim, k):
        P, root = entmax15_sortfree(X, dim, k, keep_root=ctx.needs_input_grad[0])
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
    That is on the CPU. On other devices (a GPU), where each convergence test
    would make the host wait for the device, ``training=True`` reads the
    threshold off the sorted scores instead (one sort, a cumulative sum and a
    gather; nothing read back, so a captured CUDA graph can hold it), with the
    same backward. With ``training=False`` it is read off the sorted scores
    with plain torch ops (Martins & Astudillo, 2016, Alg. 1).

    Parameters
    ----------
    X : torch.Tensor
        Scores of any shape with at least one dimension, any floating dtype
        (``float16`` and ``bfloat16`` are computed in ``float32`` internally).
        Entries may be ``-inf`` (always mapped to probability 0, with zero
        gradient); a slice that is entirely ``-inf`` maps to all zeros. A
        slice containing NaN maps to NaN everywhere, as softmax's does; one
        containing ``+inf`` maps to NaN (``training=False``: to NaN or
        ``inf`` at least at those entries).
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
    k = check_k(k)
    check_input(X, dim)
    if not training:
        return sparsemax_closed_form(X, dim)
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
    sort-based one to floating-point precision. That is on the CPU; on other
    devices ``training=True`` sorts, as :func:`sparsemax` explains. With
    ``training=False`` the threshold is read off the sorted scores with plain
    torch ops (Peters et al., 2019, Alg. 2).

    Parameters
    ----------
    X : torch.Tensor
        Scores of any shape with at least one dimension, any floating dtype
        (``float16`` and ``bfloat16`` are computed in ``float32`` internally).
        ``-inf`` entries get probability 0 and zero gradient; an all ``-inf``
        slice maps to zeros; a slice with NaN maps to NaN everywhere, as
        softmax's does; one with ``+inf`` maps to NaN (``training=False``: to
        NaN or ``inf`` at least at those entries).
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
    k = check_k(k)
    check_input(X, dim)
    if not training:
        return entmax15_closed_form(X, dim)
    return _entmax15_sortfree_apply(X, dim, k)


class _ThresholdMap(nn.Module):
    """Shared module plumbing of :class:`Sparsemax` and :class:`Entmax15`."""

    def __init__(self, dim=-1, k=None):
        super().__init__()
        self.dim = check_dim(dim)
        self.k = check_k(k)

    def forward(self, X: Tensor) -> Tensor:
        """Apply the map along ``self.dim``, by the sort-based closed form in ``eval()`` mode.

        Parameters
        ----------
        X : torch.Tensor
            Scores of any shape with at least one dimension, floating dtype.

        Returns
        -------
        torch.Tensor
            Probabilities, shape and dtype of ``X``, summing to one along
            ``self.dim``.

        Raises
        ------
        TypeError
            If ``X`` is not a floating-point tensor.
        IndexError
            If ``self.dim`` is out of range for ``X``.
        ValueError
            If ``X`` is 0-d or has size 0 along ``self.dim``.
        """
        if self.training:
            return self._forward_training(X)
        check_input_scriptable(X, self.dim)
        return self._closed_form(X)

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

    def _closed_form(self, X: Tensor) -> Tensor:
        return sparsemax_closed_form(X, self.dim)

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

    def _closed_form(self, X: Tensor) -> Tensor:
        return entmax15_closed_form(X, self.dim)

    @torch.jit.unused
    def _forward_training(self, X: Tensor) -> Tensor:
        return entmax15(X, dim=self.dim, k=self.k)
