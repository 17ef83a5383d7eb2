"""Fenchel-Young losses: the sparse counterparts of softmax cross-entropy.

For a regulariser ``Omega = -H`` (a generalised entropy ``H`` on the simplex)
the Fenchel-Young loss of scores ``x`` (one row, ``d`` classes) and gold class
``y`` is (Blondel, Martins & Niculae, 2020, Def. 2)

``L(x; y) = Omega*(x) + Omega(e_y) - x_y``.

With ``p = argmax_{p in simplex} p . x + H(p)`` (the prediction map) and
``H(e_y) = 0`` this is

``L(x; y) = H(p) + (p - e_y) . x``,

a convex, non-negative function of ``x`` that is zero exactly when
``p = e_y`` and whose gradient is ``p - e_y`` (Prop. 2 there). Softmax with
the Shannon entropy gives cross-entropy; the Tsallis entropy
``H_alpha(p) = (1 - sum_j p_j ** alpha) / (alpha * (alpha - 1))`` gives the
alpha-entmax losses (``alpha = 2``: sparsemax loss, ``alpha = 1.5``: 1.5-entmax
loss); ``H(p) = 1 - ||p||_alpha`` gives the alpha-normmax loss.

Conventions shared by every loss here (the same as entmax 1.3 for 2-D input):
the class dimension is the last one, so ``X`` has shape ``(..., d)`` and
``target`` has shape ``batch`` (``(n, d)`` and ``(n,)`` in the common case).
Extra leading dimensions are treated as more rows: the loss has shape
``batch`` and the modules' mean runs over all non-ignored rows of all of them.

References
----------
Blondel, M., Martins, A. F. T. & Niculae, V. (2020). Learning with
Fenchel-Young losses. JMLR 21.

Martins, A. F. T. & Astudillo, R. F. (2016). From softmax to sparsemax: a
sparse model of attention and multi-label classification. ICML.

Peters, B., Niculae, V. & Martins, A. F. T. (2019). Sparse
sequence-to-sequence models. ACL.
"""

import numbers

import torch
from torch import nn
from torch.autograd.function import once_differentiable

from ._validation import check_k, check_positive_int, compute_dtype
from .activations import entmax15, sparsemax
from .root_finding import entmax_bisect, normmax_bisect, sparsemax_bisect

__all__ = [
    "sparsemax_loss",
    "sparsemax_bisect_loss",
    "entmax15_loss",
    "entmax_bisect_loss",
    "normmax_bisect_loss",
    "SparsemaxLoss",
    "SparsemaxBisectLoss",
    "Entmax15Loss",
    "EntmaxBisectLoss",
    "NormmaxBisectLoss",
    "FenchelYoungLossFunction",
]

_REDUCTIONS = {"elementwise_mean": "mean", "mean": "mean", "sum": "sum", "none": "none"}


# ---------------------------------------------------------------- regularisers
#
# Each entropy maps probabilities P (..., d) and alpha (broadcastable to
# (*batch, 1), or None) to H(P) of shape batch; the derivatives are the partial
# derivative of H(P) in alpha at fixed P, which is the whole gradient of the loss
# in alpha because P maximises p . x + H(p) (Danskin's theorem).


def _where_positive(P, value):
    # p log p and similar terms are 0 in the limit p -> 0, but evaluate to
    # 0 * -inf = NaN there; selecting on the support avoids it.
    return torch.where(P > 0, value, 0)


def _safe_log(P):
    return torch.log(torch.where(P > 0, P, 1))


def _row(alpha):
    # alpha is aligned to P and has size 1 in the class dimension.
    return alpha.squeeze(-1)


def _sparsemax_entropy(P, alpha):
    return (1 - (P * P).sum(-1)) / 2


def _entmax15_entropy(P, alpha):
    return (1 - (P * torch.sqrt(P)).sum(-1)) / 0.75


def _shannon_entropy(P, alpha):
    return -_where_positive(P, P * _safe_log(P)).sum(-1)


def _tsallis_entropy(P, alpha):
    a = _row(alpha)
    return (1 - (P**alpha).sum(-1)) / (a * (a - 1))


def _tsallis_entropy_dalpha(P, alpha):
    a = _row(alpha)
    S = (P**alpha).sum(-1)
    dS = _where_positive(P, P**alpha * _safe_log(P)).sum(-1)
    denom = a * (a - 1)
    return -dS / denom - (1 - S) * (2 * a - 1) / denom**2


def _normmax_entropy(P, alpha):
    a = _row(alpha)
    return 1 - (P**alpha).sum(-1) ** (1 / a)


def _normmax_entropy_dalpha(P, alpha):
    # d/da (sum p^a)^(1/a) = ||p||_a * (sum p^a log p / (a S) - log(S) / a^2).
    a = _row(alpha)
    S = (P**alpha).sum(-1)
    dS = _where_positive(P, P**alpha * _safe_log(P)).sum(-1)
    norm = S ** (1 / a)
    return -norm * (dS / (a * S) - torch.log(S) / a**2)


_ENTROPIES = {
    "sparsemax": (_sparsemax_entropy, None),
    "entmax15": (_entmax15_entropy, None),
    "shannon": (_shannon_entropy, None),
    "tsallis": (_tsallis_entropy, _tsallis_entropy_dalpha),
    "normmax": (_normmax_entropy, _normmax_entropy_dalpha),
}


def _one_hot(P, target):
    classes = torch.arange(P.size(-1), device=P.device)
    return (classes == target.unsqueeze(-1)).to(P.dtype)


class FenchelYoungLossFunction(torch.autograd.Function):
    """Autograd function for ``L(x; y) = H(p) + (p - e_y) . x`` given ``p``.

    Use the loss functions (e.g. :func:`sparsemax_loss`) rather than calling
    ``apply`` directly: they compute ``p`` with the right map and validate the
    arguments. ``apply(X, P, target, alpha, regulariser)`` takes scores ``X``
    of shape ``(..., d)``, the prediction ``P`` of the same shape (treated
    as a constant), ``int64`` targets of shape ``batch``, ``alpha`` as a tensor
    aligned with ``X`` with size 1 in the last dimension (or ``None`` for
    regularisers without one) and the regulariser's name (``"sparsemax"``,
    ``"entmax15"``, ``"shannon"``, ``"tsallis"`` or ``"normmax"``).

    The gradient in ``X`` is ``p - e_y`` exactly (Blondel et al., 2020,
    Prop. 2); the gradient in ``alpha`` is ``dH_alpha(p) / dalpha`` at fixed
    ``p``, which is exact because ``p`` is optimal (Danskin's theorem). Second
    derivatives (which would need the Jacobian of the map) are not supported:
    the backward pass is marked once-differentiable.

    Parameters
    ----------
    *args
        Ignored: an autograd function is used through ``apply``, never
        instantiated (torch warns when it is).
    **kwargs
        Ignored, as ``*args``.

    References
    ----------
    Blondel, M., Martins, A. F. T. & Niculae, V. (2020). Learning with
    Fenchel-Young losses. JMLR 21.
    """

    generate_vmap_rule = True

    @staticmethod
    def forward(X, P, target, alpha, regulariser):
        """Fenchel-Young loss ``H(p) + (p - e_y) . x`` of every row (Blondel et al., 2020, Def. 2).

        Parameters
        ----------
        X : torch.Tensor
            Scores of shape ``(..., d)``, floating point; ``-inf`` entries
            (masked classes) are allowed where ``p = 0``.
        P : torch.Tensor
            The prediction of the map for ``X``, same shape and dtype.
        target : torch.Tensor
            ``torch.int64`` class indices of shape ``batch``, in ``[0, d)``.
        alpha : torch.Tensor or None
            The regulariser's ``alpha``, of ``X``'s dtype and aligned with
            ``X`` with size 1 in the last dimension; ``None`` for
            ``"sparsemax"``, ``"entmax15"`` and ``"shannon"``.
        regulariser : {"sparsemax", "entmax15", "shannon", "tsallis", "normmax"}
            The entropy ``H``.

        Returns
        -------
        torch.Tensor
            The loss per row, shape ``batch``, dtype of ``X``, ``>= 0``.
        """
        entropy, _ = _ENTROPIES[regulariser]
        residual = P - _one_hot(P, target)
        # A -inf score (masked class) has p = 0 and is not the target, so its
        # term is 0; the product would be 0 * -inf = NaN, hence the selection.
        linear = torch.where(residual != 0, residual * X, 0).sum(-1)
        # The loss is >= 0 in exact arithmetic; cancellation near p = e_y can
        # leave a rounding-sized negative value. Clamping here changes only the
        # value: the backward pass still returns the exact p - e_y.
        return torch.clamp(entropy(P, alpha) + linear, min=0)

    @staticmethod
    def setup_context(ctx, inputs, output):
        """Save ``P``, ``target`` and ``alpha``; both gradients need only these.

        Parameters
        ----------
        ctx : torch.autograd.function.FunctionCtx
            The context the backward pass receives.
        inputs : tuple
            The arguments of ``apply``: ``(X, P, target, alpha, regulariser)``.
        output : torch.Tensor
            The per-row loss, shape ``batch``.
        """
        _, P, target, alpha, regulariser = inputs
        ctx.regulariser = regulariser
        ctx.save_for_backward(P, target, alpha)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        """Return ``p - e_y`` in ``X`` and ``dH_alpha(p) / dalpha`` in ``alpha`` (Blondel et al., 2020, Prop. 2).

        Parameters
        ----------
        ctx : torch.autograd.function.FunctionCtx
            The context filled by :meth:`setup_context`.
        grad_output : torch.Tensor
            Gradient with respect to the per-row loss, shape ``batch``.

        Returns
        -------
        tuple
            ``(grad_X, None, None, grad_alpha, None)``: ``grad_X`` has the
            shape of ``X``; ``grad_alpha`` has the shape of the ``alpha``
            passed to ``apply``, or is ``None`` when not needed.
        """
        P, target, alpha = ctx.saved_tensors
        grad_X = grad_output.unsqueeze(-1) * (P - _one_hot(P, target))
        grad_alpha = None
        if ctx.needs_input_grad[3]:
            _, entropy_dalpha = _ENTROPIES[ctx.regulariser]
            per_row = grad_output * entropy_dalpha(P, alpha)
            grad_alpha = per_row.unsqueeze(-1).sum_to_size(alpha.shape)
        return grad_X, None, None, grad_alpha, None


# ---------------------------------------------------------------- validation


def _check_scores_and_target(X, target):
    if not isinstance(X, torch.Tensor) or not X.is_floating_point():
        raise ValueError(f"X must be a floating-point tensor, got {type(X).__name__} {getattr(X, 'dtype', '')}")
    if X.dim() == 0 or X.size(-1) == 0:
        raise ValueError(f"X must have shape (*batch, n_classes) with n_classes >= 1, got {tuple(X.shape)}")
    if not isinstance(target, torch.Tensor) or target.is_floating_point() or target.is_complex():
        raise ValueError(
            f"target must be an integer tensor of class indices, got {type(target).__name__} "
            f"{getattr(target, 'dtype', '')}"
        )
    if target.dtype == torch.bool:
        raise ValueError("target must be an integer tensor of class indices, got dtype torch.bool")
    if tuple(target.shape) != tuple(X.shape[:-1]):
        raise ValueError(
            f"target must have shape X.shape[:-1] = {tuple(X.shape[:-1])} (classes on the last dim of X), "
            f"got target of shape {tuple(target.shape)}"
        )


def _check_target_range(target, n_classes):
    # A data-dependent check (one device sync), but an out-of-range class would
    # otherwise give a silently wrong loss or an opaque indexing error.
    if target.numel() and bool(((target < 0) | (target >= n_classes)).any()):
        bad = target[(target < 0) | (target >= n_classes)]
        raise ValueError(f"target values must lie in [0, {n_classes}) (the number of classes), got e.g. {int(bad[0])}")


def _check_alpha_number(alpha, allow_one, prefix=""):
    # bool is a numbers.Real, but alpha=True is almost certainly a mistake.
    is_real = isinstance(alpha, numbers.Real) and not isinstance(alpha, bool)
    if not is_real or not (alpha > 1 or (allow_one and alpha == 1)):
        bound = ">= 1" if allow_one else "> 1"
        raise ValueError(f"{prefix}alpha must be a real number {bound} or a tensor, got alpha={alpha!r}")
    return alpha


def _prepare_alpha(alpha, X, name, allow_one):
    """Validate ``alpha``; return (map argument, aligned tensor for the loss)."""
    if isinstance(alpha, torch.Tensor):
        row_shape = tuple(X.shape[:-1]) + (1,)
        try:
            ok = alpha.dim() <= X.dim() and torch.broadcast_shapes(alpha.shape, row_shape) == row_shape
        except RuntimeError:
            ok = False
        if not ok:
            raise ValueError(
                f"alpha of shape {tuple(alpha.shape)} must broadcast to {row_shape} (one alpha per row of "
                f"X, size 1 in the class dim), e.g. shape {row_shape} or ()"
            )
        if alpha.dtype == torch.bool or not bool((alpha > 1).all()):
            raise ValueError(f"{name}: a tensor alpha must be > 1 in every entry")
        aligned = alpha.to(X.dtype).reshape((1,) * (X.dim() - alpha.dim()) + tuple(alpha.shape))
        return aligned, aligned
    _check_alpha_number(alpha, allow_one, prefix=f"{name}: ")
    return alpha, torch.full((1,) * X.dim(), float(alpha), dtype=X.dtype, device=X.device)


def _fenchel_young(X, target, regulariser, predict, alpha=None, alpha_name=None, allow_one=False):
    _check_scores_and_target(X, target)
    _check_target_range(target, X.size(-1))
    # The maps are written for float32/float64; half precision also loses too
    # much in the cumulative sums, so compute in float32 and cast back.
    compute = X.to(compute_dtype(X.dtype))
    map_alpha = loss_alpha = None
    if alpha_name is not None:
        map_alpha, loss_alpha = _prepare_alpha(alpha, compute, alpha_name, allow_one)
        if isinstance(map_alpha, torch.Tensor):
            map_alpha = map_alpha.detach()
    # p is a constant for autograd: the custom backward supplies p - e_y, so no
    # graph through the map is needed.
    with torch.no_grad():
        P = predict(compute, map_alpha)
    loss = FenchelYoungLossFunction.apply(compute, P, target.long(), loss_alpha, regulariser)
    return loss.to(X.dtype)


# ---------------------------------------------------------------- functional losses


def sparsemax_loss(X, target, k=None):
    """Sparsemax loss: the Fenchel-Young loss of sparsemax.

    Per row, with ``p = sparsemax(x) = argmin_{p in simplex} ||p - x||^2``::

        L(x; y) = (1 - ||p||^2) / 2 + (p - e_y) . x
                = ||e_y - x||^2 / 2 - ||p - x||^2 / 2

    a sparse alternative to cross-entropy that is exactly zero once the gold
    score exceeds every other score by at least 1. Its gradient in ``X`` is
    ``p - e_y``.

    Parameters
    ----------
    X : torch.Tensor
        Scores of shape ``(n, d)``, or ``(..., d)`` with classes on the last
        dimension. Floating point; ``float16``/``bfloat16`` are computed in
        ``float32``. Non-target entries may be ``-inf`` (masked classes); a
        ``-inf`` target score gives an infinite loss.
    target : torch.Tensor
        Integer class indices of shape ``(n,)`` (``batch``), ``0 <= target < d``.
    k : int or None, default None
        Partial-sort size passed to :func:`sparsetab.entmax.sparsemax`; it
        affects speed only, never the result.

    Returns
    -------
    torch.Tensor
        Loss per row, shape ``(n,)`` (``batch``), dtype of ``X``, ``>= 0``.

    Raises
    ------
    ValueError
        If ``X`` is not floating point or has no classes, if ``target`` is not
        an integer tensor of shape ``X.shape[:-1]`` or has a value outside
        ``[0, d)``, or if ``k`` is invalid.

    References
    ----------
    Martins, A. F. T. & Astudillo, R. F. (2016). From softmax to sparsemax: a
    sparse model of attention and multi-label classification. ICML. (Sec. 3.)

    Blondel, M., Martins, A. F. T. & Niculae, V. (2020). Learning with
    Fenchel-Young losses. JMLR 21. (Def. 2, Prop. 2.)
    """
    return _fenchel_young(X, target, "sparsemax", lambda Z, _: sparsemax(Z, dim=-1, k=k))


def sparsemax_bisect_loss(X, target, n_iter=50):
    """Sparsemax loss with sparsemax computed by bisection.

    The same loss as :func:`sparsemax_loss`,
    ``L(x; y) = (1 - ||p||^2) / 2 + (p - e_y) . x`` with ``p = sparsemax(x)``,
    but ``p`` comes from :func:`sparsetab.entmax.sparsemax_bisect`.

    Parameters
    ----------
    X : torch.Tensor
        Scores of shape ``(n, d)`` or ``(..., d)``; see :func:`sparsemax_loss`.
    target : torch.Tensor
        Integer class indices of shape ``(n,)`` (``batch``), ``0 <= target < d``.
    n_iter : int, default 50
        Bisection steps; 24 reach float32 resolution.

    Returns
    -------
    torch.Tensor
        Loss per row, shape ``(n,)`` (``batch``), dtype of ``X``, ``>= 0``.

    Raises
    ------
    ValueError
        For invalid ``X`` or ``target`` (see :func:`sparsemax_loss`) or an
        ``n_iter`` that is not a positive integer.

    References
    ----------
    Martins, A. F. T. & Astudillo, R. F. (2016). From softmax to sparsemax.
    ICML.

    Blondel, M., Martins, A. F. T. & Niculae, V. (2020). Learning with
    Fenchel-Young losses. JMLR 21. (Def. 2, Prop. 2; Sec. 5 for bisection.)
    """
    return _fenchel_young(X, target, "sparsemax", lambda Z, _: sparsemax_bisect(Z, dim=-1, n_iter=n_iter))


def entmax15_loss(X, target, k=None):
    """1.5-entmax loss: the Fenchel-Young loss of 1.5-entmax.

    Per row, with ``p = entmax15(x) = argmax_{p in simplex} p . x + H_1.5(p)``,

    ``L(x; y) = H_1.5(p) + (p - e_y) . x``,
    ``H_1.5(p) = (1 - sum_j p_j ** 1.5) / 0.75``.

    It is zero once the gold score exceeds every other score by at least 2.
    Its gradient in ``X`` is ``p - e_y``.

    Parameters
    ----------
    X : torch.Tensor
        Scores of shape ``(n, d)`` or ``(..., d)``; see :func:`sparsemax_loss`.
    target : torch.Tensor
        Integer class indices of shape ``(n,)`` (``batch``), ``0 <= target < d``.
    k : int or None, default None
        Partial-sort size passed to :func:`sparsetab.entmax.entmax15`; it
        affects speed only.

    Returns
    -------
    torch.Tensor
        Loss per row, shape ``(n,)`` (``batch``), dtype of ``X``, ``>= 0``.

    Raises
    ------
    ValueError
        For invalid ``X``, ``target`` (see :func:`sparsemax_loss`) or ``k``.

    References
    ----------
    Peters, B., Niculae, V. & Martins, A. F. T. (2019). Sparse
    sequence-to-sequence models. ACL. (Sec. 3.)

    Blondel, M., Martins, A. F. T. & Niculae, V. (2020). Learning with
    Fenchel-Young losses. JMLR 21. (Def. 2, Prop. 2.)
    """
    return _fenchel_young(X, target, "entmax15", lambda Z, _: entmax15(Z, dim=-1, k=k))


def entmax_bisect_loss(X, target, alpha=1.5, n_iter=50):
    """Alpha-entmax loss for any ``alpha >= 1``, differentiable in ``alpha``.

    Per row, with ``p = argmax_{p in simplex} p . x + H_alpha(p)`` computed by
    :func:`sparsetab.entmax.entmax_bisect`,

    ``L(x; y) = H_alpha(p) + (p - e_y) . x``,
    ``H_alpha(p) = (1 - sum_j p_j ** alpha) / (alpha * (alpha - 1))``.

    ``alpha = 2`` is the sparsemax loss, ``alpha = 1.5`` the 1.5-entmax loss;
    the number ``1`` exactly gives the Shannon limit ``H(p) = -sum p log p``,
    i.e. softmax cross-entropy. The gradient in ``X`` is ``p - e_y``; a tensor
    ``alpha`` that requires grad receives ``dH_alpha(p) / dalpha`` at fixed
    ``p`` (exact by Danskin's theorem since ``p`` is optimal).

    Parameters
    ----------
    X : torch.Tensor
        Scores of shape ``(n, d)`` or ``(..., d)``; see :func:`sparsemax_loss`.
    target : torch.Tensor
        Integer class indices of shape ``(n,)`` (``batch``), ``0 <= target < d``.
    alpha : float or torch.Tensor, default 1.5
        A number ``>= 1`` or a floating tensor ``> 1`` with one value per row:
        a shape that broadcasts to ``(*batch, 1)``, e.g. ``(n, 1)`` or ``()``.
        The loss stays of shape ``(n,)`` for a per-row alpha.
    n_iter : int, default 50
        Bisection steps; 24 reach float32 resolution.

    Returns
    -------
    torch.Tensor
        Loss per row, shape ``(n,)`` (``batch``), dtype of ``X``, ``>= 0``.

    Raises
    ------
    ValueError
        For invalid ``X`` or ``target`` (see :func:`sparsemax_loss`), an
        ``alpha`` that is not ``>= 1`` (not ``> 1`` for a tensor) or does not
        broadcast to one value per row, or an invalid ``n_iter``.

    References
    ----------
    Peters, B., Niculae, V. & Martins, A. F. T. (2019). Sparse
    sequence-to-sequence models. ACL. (Sec. 3.)

    Blondel, M., Martins, A. F. T. & Niculae, V. (2020). Learning with
    Fenchel-Young losses. JMLR 21. (Def. 2, Prop. 2; Sec. 5 for bisection.)
    """
    if not isinstance(alpha, torch.Tensor) and isinstance(alpha, numbers.Real) and alpha == 1:
        return _fenchel_young(
            X, target, "shannon", lambda Z, _: torch.softmax(Z, dim=-1), alpha, "entmax_bisect_loss", True
        )
    return _fenchel_young(
        X,
        target,
        "tsallis",
        lambda Z, a: entmax_bisect(Z, alpha=a, dim=-1, n_iter=n_iter),
        alpha,
        "entmax_bisect_loss",
    )


def normmax_bisect_loss(X, target, alpha=2, n_iter=50):
    """Alpha-normmax loss: the Fenchel-Young loss of alpha-normmax.

    Per row, with ``p = argmax_{p in simplex} p . x - ||p||_alpha`` computed by
    ``sparsetab.entmax.root_finding.normmax_bisect``,

    ``L(x; y) = 1 - ||p||_alpha + (p - e_y) . x``,

    i.e. the Fenchel-Young loss of ``Omega(p) = ||p||_alpha - 1``. The
    gradient in ``X`` is ``p - e_y``; a tensor ``alpha`` that requires grad
    receives ``-d||p||_alpha / dalpha`` at fixed ``p``.

    Parameters
    ----------
    X : torch.Tensor
        Scores of shape ``(n, d)`` or ``(..., d)``; see :func:`sparsemax_loss`.
    target : torch.Tensor
        Integer class indices of shape ``(n,)`` (``batch``), ``0 <= target < d``.
    alpha : float or torch.Tensor, default 2
        A number ``> 1`` or a floating tensor ``> 1`` with one value per row
        (a shape that broadcasts to ``(*batch, 1)``).
    n_iter : int, default 50
        Bisection steps.

    Returns
    -------
    torch.Tensor
        Loss per row, shape ``(n,)`` (``batch``), dtype of ``X``, ``>= 0``.

    Raises
    ------
    ValueError
        For invalid ``X`` or ``target`` (see :func:`sparsemax_loss`) or an
        invalid ``alpha``.

    References
    ----------
    Santos, S., Niculae, V., McNamee, D. & Martins, A. F. T. (2024). Sparse
    and structured Hopfield networks. ICML. (alpha-normmax.)

    Blondel, M., Martins, A. F. T. & Niculae, V. (2020). Learning with
    Fenchel-Young losses. JMLR 21. (Def. 2, Prop. 2.)
    """
    return _fenchel_young(
        X,
        target,
        "normmax",
        lambda Z, a: normmax_bisect(Z, alpha=a, dim=-1, n_iter=n_iter),
        alpha,
        "normmax_bisect_loss",
    )


# ---------------------------------------------------------------- modules


class _FenchelYoungLoss(nn.Module):
    """Shared plumbing of the loss modules: validation, ``ignore_index``, reduction and repr.

    A subclass names its functional form (``_loss``) and the attributes passed
    to it after ``target``, in call order (``_options``).
    """

    _loss = None
    _options = ()

    def __init__(self, ignore_index=-100, reduction="elementwise_mean"):
        super().__init__()
        if (
            isinstance(ignore_index, torch.Tensor)
            and ignore_index.dim() == 0
            and not (ignore_index.is_floating_point() or ignore_index.is_complex() or ignore_index.dtype == torch.bool)
        ):
            # A 0-d integer tensor (a label taken from a target, ``y[0]``), as entmax 1.3 and torch's losses take.
            ignore_index = int(ignore_index.item())
        if ignore_index is not None and (
            not isinstance(ignore_index, numbers.Integral) or isinstance(ignore_index, bool)
        ):
            raise ValueError(
                f"ignore_index must be an integer (or a 0-d integer tensor) or None, got ignore_index={ignore_index!r}"
            )
        if reduction not in _REDUCTIONS:
            raise ValueError(
                "reduction must be one of 'elementwise_mean' (alias 'mean'), 'sum' or 'none', "
                f"got reduction={reduction!r}"
            )
        self.ignore_index = None if ignore_index is None else int(ignore_index)
        self.reduction = reduction

    def loss(self, X, target):
        """Compute the unreduced loss of every row: the module's functional form with its hyper-parameters.

        The functional form is the one the class documents (:func:`sparsemax_loss` for
        :class:`SparsemaxLoss`, :func:`entmax15_loss` for :class:`Entmax15Loss`, and so on),
        called with the module's ``k``, ``n_iter`` or ``alpha``. Neither ``ignore_index`` nor
        ``reduction`` applies here: that is :meth:`forward`'s work.

        Parameters
        ----------
        X : torch.Tensor of shape (n, d) or (..., d), floating dtype
            Scores, classes on the last dimension; ``float16`` and ``bfloat16`` are computed
            in ``float32``.
        target : torch.Tensor of shape (n,) or X.shape[:-1], int dtype (e.g. torch.int64)
            Class indices, each in ``[0, d)`` (an ``ignore_index`` value is refused here
            like any other out-of-range index).

        Returns
        -------
        torch.Tensor of shape ``X.shape[:-1]``
            The Fenchel-Young loss of each row (Blondel, Martins and Niculae, 2020, Def. 2),
            ``>= 0``, with the dtype of ``X``.

        Raises
        ------
        ValueError
            If ``X`` is not a floating-point tensor with at least one class, ``target`` is not
            an integer tensor of shape ``X.shape[:-1]`` or holds a value outside ``[0, d)``,
            or, for :class:`EntmaxBisectLoss` and :class:`NormmaxBisectLoss`, a tensor
            ``alpha`` is not ``> 1`` everywhere or does not broadcast to one value per row.
        """
        return type(self)._loss(X, target, *(getattr(self, name) for name in self._options))

    def forward(self, X, target):
        """Compute the reduced loss of scores ``X`` against ``target``.

        Parameters
        ----------
        X : torch.Tensor
            Scores of shape ``(n, d)`` or ``(..., d)``, classes last.
        target : torch.Tensor
            Integer class indices of shape ``(n,)`` (``batch``). Entries equal
            to ``ignore_index`` contribute 0 to the loss and its gradient and
            are never used as an index; all others must lie in ``[0, d)``.

        Returns
        -------
        torch.Tensor
            ``reduction="none"``: per-row loss of shape ``batch`` (0 at ignored
            rows). ``"sum"``: a scalar. ``"elementwise_mean"``/``"mean"``: the
            sum divided by the number of non-ignored rows, and exactly 0 (with
            zero gradient) when there are none. Dtype of ``X``.

        Raises
        ------
        ValueError
            If ``X`` or ``target`` is invalid (see :func:`sparsemax_loss`).
        """
        _check_scores_and_target(X, target)
        if self.ignore_index is None:
            loss = self.loss(X, target)
            count = target.numel()
        else:
            keep = target != self.ignore_index
            # Ignored rows are often padding with garbage scores (all -inf,
            # NaN); replacing them keeps NaN out of the gradient, since even a
            # zero upstream gradient times a NaN p is NaN.
            X = torch.where(keep.unsqueeze(-1), X, 0)
            loss = torch.where(keep, self.loss(X, torch.where(keep, target, 0)), 0)
            count = keep.sum()
        mode = _REDUCTIONS[self.reduction]
        if mode == "sum":
            return loss.sum()
        if mode == "mean":
            # With no row to average, 0 (not 0 / 0) is the neutral answer.
            return loss.sum() / (count.clamp(min=1) if isinstance(count, torch.Tensor) else max(count, 1))
        return loss

    def extra_repr(self):
        """Show the hyper-parameters, ``ignore_index`` and ``reduction`` in the module's repr."""
        options = [f"{name}={_repr_value(getattr(self, name))}" for name in self._options]
        return ", ".join([*options, f"ignore_index={self.ignore_index}", f"reduction={self.reduction!r}"])


def _repr_value(value):
    return "tensor" if isinstance(value, torch.Tensor) else value


class SparsemaxLoss(_FenchelYoungLoss):
    """Module form of :func:`sparsemax_loss`, with reduction and ``ignore_index``.

    Parameters
    ----------
    k : int or None, default None
        Partial-sort size; see :func:`sparsemax_loss`.
    ignore_index : int, 0-d int torch.Tensor or None, default -100
        Target value whose rows are ignored (any integer, negative or not);
        ``None`` ignores nothing.
    reduction : {"elementwise_mean", "mean", "sum", "none"}, default "elementwise_mean"
        ``"mean"`` is an alias of ``"elementwise_mean"``: the mean over
        non-ignored rows.

    Raises
    ------
    ValueError
        If ``reduction``, ``ignore_index`` or ``k`` is invalid.

    References
    ----------
    Martins, A. F. T. & Astudillo, R. F. (2016). From softmax to sparsemax.
    ICML.

    Blondel, M., Martins, A. F. T. & Niculae, V. (2020). Learning with
    Fenchel-Young losses. JMLR 21.
    """

    _loss = staticmethod(sparsemax_loss)
    _options = ("k",)

    def __init__(self, k=None, ignore_index=-100, reduction="elementwise_mean"):
        super().__init__(ignore_index, reduction)
        self.k = check_k(k)


class SparsemaxBisectLoss(_FenchelYoungLoss):
    """Module form of :func:`sparsemax_bisect_loss`.

    Parameters
    ----------
    n_iter : int, default 50
        Bisection steps.
    ignore_index : int, 0-d int torch.Tensor or None, default -100
        Target value whose rows are ignored (any integer, negative or not);
        ``None`` ignores nothing.
    reduction : {"elementwise_mean", "mean", "sum", "none"}, default "elementwise_mean"
        ``"mean"`` is an alias of ``"elementwise_mean"``: the mean over
        non-ignored rows.

    Raises
    ------
    ValueError
        If ``reduction``, ``ignore_index`` or ``n_iter`` is invalid.

    References
    ----------
    Martins, A. F. T. & Astudillo, R. F. (2016). From softmax to sparsemax.
    ICML.

    Blondel, M., Martins, A. F. T. & Niculae, V. (2020). Learning with
    Fenchel-Young losses. JMLR 21.
    """

    _loss = staticmethod(sparsemax_bisect_loss)
    _options = ("n_iter",)

    def __init__(self, n_iter=50, ignore_index=-100, reduction="elementwise_mean"):
        super().__init__(ignore_index, reduction)
        self.n_iter = check_positive_int(n_iter, "n_iter")


class Entmax15Loss(_FenchelYoungLoss):
    """Module form of :func:`entmax15_loss`.

    Parameters
    ----------
    k : int or None, default 100
        Partial-sort size (speed only); the default matches entmax 1.3.
    ignore_index : int, 0-d int torch.Tensor or None, default -100
        Target value whose rows are ignored (any integer, negative or not);
        ``None`` ignores nothing.
    reduction : {"elementwise_mean", "mean", "sum", "none"}, default "elementwise_mean"
        ``"mean"`` is an alias of ``"elementwise_mean"``: the mean over
        non-ignored rows.

    Raises
    ------
    ValueError
        If ``reduction``, ``ignore_index`` or ``k`` is invalid.

    References
    ----------
    Peters, B., Niculae, V. & Martins, A. F. T. (2019). Sparse
    sequence-to-sequence models. ACL.

    Blondel, M., Martins, A. F. T. & Niculae, V. (2020). Learning with
    Fenchel-Young losses. JMLR 21.
    """

    _loss = staticmethod(entmax15_loss)
    _options = ("k",)

    def __init__(self, k=100, ignore_index=-100, reduction="elementwise_mean"):
        super().__init__(ignore_index, reduction)
        self.k = check_k(k)


class _AlphaLoss(_FenchelYoungLoss):
    """Shared ``alpha``/``n_iter`` handling of the bisection-based alpha losses."""

    _allow_alpha_one = False  # whether the number 1 (a limit case) is accepted

    def __init__(self, alpha, n_iter, ignore_index, reduction):
        super().__init__(ignore_index, reduction)
        self.n_iter = check_positive_int(n_iter, "n_iter")
        if isinstance(alpha, nn.Parameter):
            self.alpha = alpha  # registered as a parameter, so it can be trained
        elif isinstance(alpha, torch.Tensor):
            # A buffer follows the module across .to(device); it is not state.
            self.register_buffer("alpha", alpha, persistent=False)
        else:
            self.alpha = _check_alpha_number(alpha, self._allow_alpha_one)


class EntmaxBisectLoss(_AlphaLoss):
    """Module form of :func:`entmax_bisect_loss`.

    Parameters
    ----------
    alpha : float or torch.Tensor, default 1.5
        A number ``>= 1`` (``1`` is cross-entropy) or a tensor ``> 1`` with one
        value per row; pass an ``nn.Parameter`` to learn it.
    n_iter : int, default 50
        Bisection steps.
    ignore_index : int, 0-d int torch.Tensor or None, default -100
        Target value whose rows are ignored (any integer, negative or not);
        ``None`` ignores nothing.
    reduction : {"elementwise_mean", "mean", "sum", "none"}, default "elementwise_mean"
        ``"mean"`` is an alias of ``"elementwise_mean"``: the mean over
        non-ignored rows.

    Raises
    ------
    ValueError
        If ``reduction``, ``ignore_index``, ``n_iter`` or a number ``alpha`` is
        invalid (a tensor ``alpha`` is checked on each call).

    References
    ----------
    Peters, B., Niculae, V. & Martins, A. F. T. (2019). Sparse
    sequence-to-sequence models. ACL.

    Blondel, M., Martins, A. F. T. & Niculae, V. (2020). Learning with
    Fenchel-Young losses. JMLR 21.
    """

    _loss = staticmethod(entmax_bisect_loss)
    _options = ("alpha", "n_iter")

    _allow_alpha_one = True

    def __init__(self, alpha=1.5, n_iter=50, ignore_index=-100, reduction="elementwise_mean"):
        super().__init__(alpha, n_iter, ignore_index, reduction)


class NormmaxBisectLoss(_AlphaLoss):
    """Module form of :func:`normmax_bisect_loss`.

    Parameters
    ----------
    alpha : float or torch.Tensor, default 2
        A number ``> 1`` or a tensor ``> 1`` with one value per row.
    n_iter : int, default 50
        Bisection steps.
    ignore_index : int, 0-d int torch.Tensor or None, default -100
        Target value whose rows are ignored (any integer, negative or not);
        ``None`` ignores nothing.
    reduction : {"elementwise_mean", "mean", "sum", "none"}, default "elementwise_mean"
        ``"mean"`` is an alias of ``"elementwise_mean"``: the mean over
        non-ignored rows.

    Raises
    ------
    ValueError
        If ``reduction``, ``ignore_index``, ``n_iter`` or a number ``alpha`` is
        invalid.

    References
    ----------
    Santos, S., Niculae, V., McNamee, D. & Martins, A. F. T. (2024). Sparse
    and structured Hopfield networks. ICML.

    Blondel, M., Martins, A. F. T. & Niculae, V. (2020). Learning with
    Fenchel-Young losses. JMLR 21.
    """

    _loss = staticmethod(normmax_bisect_loss)
    _options = ("alpha", "n_iter")

    def __init__(self, alpha=2, n_iter=50, ignore_index=-100, reduction="elementwise_mean"):
        super().__init__(alpha, n_iter, ignore_index, reduction)
