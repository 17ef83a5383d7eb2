"""alpha-entmax for any ``alpha > 1`` by bisection on the threshold.

No closed-form threshold exists for general ``alpha``, but
``tau -> sum_i [(alpha - 1) x_i - tau]_+ ** (1 / (alpha - 1))`` is monotone, so
bisection converges geometrically from a bracket known in advance.
"""

import numbers

import torch
from torch import nn

__all__ = ["entmax_bisect", "sparsemax_bisect", "EntmaxBisect", "EntmaxBisectFunction"]


def _positive_part_where(mask, base, exponent):
    # `where` twice so that neither the forward nor any gradient evaluates a
    # power or log of zero outside the support (avoids inf * 0 = NaN).
    return torch.where(mask, torch.where(mask, base, 1) ** exponent, 0)


def _prepare_alpha(alpha, X, dim):
    if isinstance(alpha, torch.Tensor):
        if not bool((alpha > 1).all()):
            raise ValueError("alpha must be > 1 in every entry (a tensor alpha is never routed to softmax)")
        try:
            broadcasts = torch.broadcast_shapes(alpha.shape, X.shape) == X.shape
        except RuntimeError:
            broadcasts = False
        if not broadcasts:
            raise ValueError(f"alpha of shape {tuple(alpha.shape)} does not broadcast to X of shape {tuple(X.shape)}")
        aligned = alpha.reshape((1,) * (X.dim() - alpha.dim()) + tuple(alpha.shape))
        if aligned.size(dim) != 1:
            raise ValueError(
                f"alpha must have size 1 along dim={dim} (one alpha per slice), got shape {tuple(alpha.shape)}"
            )
        return aligned.to(X.dtype)
    if not isinstance(alpha, numbers.Real) or not alpha > 1:
        raise ValueError(f"alpha must be a real number > 1 or a tensor of such, got alpha={alpha!r}")
    return torch.full((1,) * X.dim(), float(alpha), dtype=X.dtype, device=X.device)


class EntmaxBisectFunction(torch.autograd.Function):
    """Autograd function for alpha-entmax, differentiable in ``X`` and ``alpha``.

    Use :func:`entmax_bisect` rather than calling ``apply`` directly; it
    expects ``alpha`` as a tensor already aligned with ``X``.

    With ``S`` the support and ``g = p ** (2 - alpha)`` on ``S`` (0 elsewhere),
    the Jacobian in ``X`` is ``diag(g) - g g^T / sum(g)``. Differentiating the
    fixed point ``p_i = ((alpha - 1) x_i - tau) ** (1 / (alpha - 1))`` and
    ``sum(p) = 1`` in ``alpha`` gives, with ``q = g / sum(g)``,

    ``dp/dalpha = (p - q) / (alpha - 1) ** 2
                  - (p log p - q * sum(p log p)) / (alpha - 1)``

    (cf. Correia et al., 2019, Prop. 1).
    """

    generate_vmap_rule = True

    @staticmethod
    def forward(X, alpha, dim=-1, n_iter=50, ensure_sum_one=True):
        """Return alpha-entmax of ``X`` along ``dim``; shape and dtype of ``X``."""
        am1 = alpha - 1
        Z = X * am1
        top = Z.amax(dim=dim, keepdim=True)
        # At tau_lo the largest entry alone is 1, so the mass is >= 1; at tau_hi
        # every entry is <= 1/d, so the mass is <= 1. The root lies in between.
        tau_lo = top - 1
        width = (top - (1.0 / X.size(dim)) ** am1) - tau_lo
        inv = 1 / am1
        for _ in range(n_iter):
            width = width / 2
            tau_mid = tau_lo + width
            mass = torch.clamp(Z - tau_mid, min=0).pow(inv).sum(dim, keepdim=True)
            tau_lo = torch.where(mass >= 1, tau_mid, tau_lo)
        # Evaluating at the lower end keeps every true support entry positive.
        P = torch.clamp(Z - tau_lo, min=0).pow(inv)
        if ensure_sum_one:
            P = P / P.sum(dim, keepdim=True)
        return P

    @staticmethod
    def setup_context(ctx, inputs, output):
        """Save output and ``alpha``; both gradients are functions of them alone."""
        _, alpha, dim, _, _ = inputs
        ctx.dim = dim
        ctx.save_for_backward(output, alpha)

    @staticmethod
    def backward(ctx, grad_output):
        """Return ``(grad_X, grad_alpha, None, None, None)``.

        ``grad_X`` has the shape of ``X``; ``grad_alpha`` has the shape of the
        ``alpha`` tensor passed to ``apply`` (or is ``None`` if not needed).
        """
        Y, alpha = ctx.saved_tensors
        dim = ctx.dim
        support = Y > 0
        g = _positive_part_where(support, Y, 2 - alpha)
        q = g / g.sum(dim, keepdim=True)
        g_grad = g * grad_output
        grad_X = g_grad - q * g_grad.sum(dim, keepdim=True)

        grad_alpha = None
        if ctx.needs_input_grad[1]:
            am1 = alpha - 1
            p_log_p = torch.where(support, Y * torch.log(torch.where(support, Y, 1)), 0)
            dp_dalpha = (Y - q) / am1**2 - (p_log_p - q * p_log_p.sum(dim, keepdim=True)) / am1
            grad_alpha = (grad_output * dp_dalpha).sum(dim, keepdim=True).sum_to_size(alpha.shape)
        return grad_X, grad_alpha, None, None, None


def entmax_bisect(X, alpha=1.5, dim=-1, n_iter=50, ensure_sum_one=True):
    """alpha-entmax computed by bisection, differentiable in ``X`` and ``alpha``.

    Solves, independently for every slice along ``dim``,

    ``entmax_alpha(x) = argmax_{p in simplex} p . x + H^T_alpha(p)``,

    with Tsallis entropy ``H^T_alpha(p) = (1 - sum_j p_j ** alpha) /
    (alpha * (alpha - 1))``. The solution is
    ``p_i = [(alpha - 1) x_i - tau]_+ ** (1 / (alpha - 1))`` with ``tau`` set so
    that ``sum(p) == 1``; ``alpha = 2`` is sparsemax, ``alpha -> 1`` softmax.
    ``tau`` is bracketed in ``[max((alpha-1) x) - 1,
    max((alpha-1) x) - (1/d) ** (alpha-1)]`` and the bracket halved
    ``n_iter`` times, so the threshold error is below ``2 ** -n_iter``
    (down to the dtype's resolution).

    Parameters
    ----------
    X : torch.Tensor
        Scores of any shape (1-D included), ``float32`` or ``float64``.
        Entries may be ``-inf`` as long as every slice has a finite entry.
    alpha : float or torch.Tensor, default 1.5
        Must be > 1. A tensor must broadcast to ``X`` and have size 1 along
        ``dim`` (one ``alpha`` per slice, e.g. shape ``(batch, 1)`` for ``X``
        of shape ``(batch, d)``); it is cast to ``X.dtype`` and receives a
        gradient if it requires one. The Python number ``1`` exactly is
        routed to ``torch.softmax``. Because its values are validated, a
        tensor ``alpha`` cannot itself be batched by ``torch.func.vmap``.
    dim : int, default -1
        Dimension along which the output sums to one.
    n_iter : int, default 50
        Number of bisection steps; must be a positive integer.
    ensure_sum_one : bool, default True
        Divide the result by its sum so it lies exactly on the simplex,
        hiding the remaining bisection error.

    Returns
    -------
    torch.Tensor
        Probabilities, same shape and dtype as ``X``; non-negative, summing to
        one along ``dim`` (approximately if ``ensure_sum_one`` is False).

    Raises
    ------
    IndexError
        If ``dim`` is out of range for ``X``.
    ValueError
        If ``alpha`` is not > 1 (other than the number 1), has an
        incompatible shape, if ``n_iter`` is not a positive integer, or if
        ``X`` has size 0 along ``dim``.

    References
    ----------
    Peters, B., Niculae, V. & Martins, A. F. T. (2019). Sparse
    sequence-to-sequence models. ACL. (Eq. 9.)

    Correia, G. M., Niculae, V. & Martins, A. F. T. (2019). Adaptively sparse
    transformers. EMNLP. (Gradient in ``alpha``.)

    Blondel, M., Martins, A. F. T. & Niculae, V. (2020). Learning with
    Fenchel-Young losses. JMLR 21. (Sec. 5, bisection.)
    """
    if X.size(dim) == 0:  # X.size also raises IndexError for a bad dim
        raise ValueError(f"cannot normalise over dim={dim}: it has size 0")
    if not isinstance(n_iter, numbers.Integral) or isinstance(n_iter, bool) or n_iter < 1:
        raise ValueError(f"n_iter must be a positive integer, got n_iter={n_iter!r}")
    if not isinstance(alpha, torch.Tensor) and isinstance(alpha, numbers.Real) and alpha == 1:
        return torch.softmax(X, dim=dim)
    alpha = _prepare_alpha(alpha, X, dim)
    return EntmaxBisectFunction.apply(X, alpha, dim, int(n_iter), bool(ensure_sum_one))


def sparsemax_bisect(X, dim=-1, n_iter=50, ensure_sum_one=True):
    """Sparsemax computed by bisection: :func:`entmax_bisect` at ``alpha = 2``.

    Solves ``argmin_{p in simplex} ||p - x||^2`` for every slice along
    ``dim``. Mainly useful as a cross-check of the exact, sort-based
    :func:`sparsetab.entmax.sparsemax`.

    Parameters
    ----------
    X : torch.Tensor
        Scores of any shape, ``float32`` or ``float64``.
    dim : int, default -1
        Dimension along which the output sums to one.
    n_iter : int, default 50
        Number of bisection steps; must be a positive integer.
    ensure_sum_one : bool, default True
        Divide the result by its sum.

    Returns
    -------
    torch.Tensor
        Probabilities, same shape and dtype as ``X``.

    Raises
    ------
    IndexError
        If ``dim`` is out of range for ``X``.
    ValueError
        If ``n_iter`` is not a positive integer or ``X`` has size 0 along ``dim``.

    References
    ----------
    Martins, A. F. T. & Astudillo, R. F. (2016). From softmax to sparsemax.
    ICML.

    Blondel, M., Martins, A. F. T. & Niculae, V. (2020). Learning with
    Fenchel-Young losses. JMLR 21.
    """
    return entmax_bisect(X, alpha=2.0, dim=dim, n_iter=n_iter, ensure_sum_one=ensure_sum_one)


class EntmaxBisect(nn.Module):
    """Module form of :func:`entmax_bisect`.

    Parameters
    ----------
    alpha : float or torch.Tensor, default 1.5
        Must be > 1 (or the number 1, routed to softmax). Register a learnable
        ``alpha`` as an ``nn.Parameter`` and pass it here to train it.
    dim : int, default -1
        Dimension along which the output sums to one.
    n_iter : int, default 50
        Number of bisection steps.
    ensure_sum_one : bool, default True
        Divide the result by its sum.

    Raises
    ------
    ValueError
        If a non-tensor ``alpha`` is not a real number >= 1 or ``n_iter`` is
        not a positive integer (tensor ``alpha`` is checked on each call).

    References
    ----------
    Peters, B., Niculae, V. & Martins, A. F. T. (2019). Sparse
    sequence-to-sequence models. ACL.

    Correia, G. M., Niculae, V. & Martins, A. F. T. (2019). Adaptively sparse
    transformers. EMNLP.
    """

    def __init__(self, alpha=1.5, dim=-1, n_iter=50, ensure_sum_one=True):
        super().__init__()
        # Fail at construction for plain-number mistakes; tensor alphas are
        # checked per call because a learnable alpha can drift.
        if not isinstance(alpha, torch.Tensor) and not (isinstance(alpha, numbers.Real) and alpha >= 1):
            raise ValueError(f"alpha must be a real number > 1 (or exactly 1 for softmax), got alpha={alpha!r}")
        if not isinstance(n_iter, numbers.Integral) or isinstance(n_iter, bool) or n_iter < 1:
            raise ValueError(f"n_iter must be a positive integer, got n_iter={n_iter!r}")
        self.alpha = alpha
        self.dim = dim
        self.n_iter = n_iter
        self.ensure_sum_one = ensure_sum_one

    def forward(self, X):
        """Apply alpha-entmax to ``X`` (any shape); returns the same shape and dtype."""
        return entmax_bisect(X, self.alpha, self.dim, self.n_iter, self.ensure_sum_one)

    def extra_repr(self):
        """Show the hyper-parameters in the module's repr."""
        alpha = "tensor" if isinstance(self.alpha, torch.Tensor) else self.alpha
        return f"alpha={alpha}, dim={self.dim}, n_iter={self.n_iter}, ensure_sum_one={self.ensure_sum_one}"
