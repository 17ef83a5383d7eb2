"""Root-finding sparse maps: alpha-entmax for any ``alpha > 0``, normmax and budget-sparsemax.

Each map is ``p = argmax_{p in C} p . x - Omega(p)`` whose solution has the form
``p_i = h([x_i - tau]_+)`` with a row-wise threshold ``tau`` fixed by a scalar
equation (the mass, the norm or the budget). No closed form exists in general,
so ``tau`` is found numerically: by a safeguarded Newton iteration with a
bisection fallback bracket (the numerical kernels live in
:mod:`sparsetab.entmax._root_kernels`). The API is a drop-in replacement for
``entmax.root_finding`` 1.3 (``entmax_bisect``, ``sparsemax_bisect``,
``normmax_bisect``, ``budget_bisect`` and their modules), with two additions:

- ``training=True`` (default): an ``autograd.Function`` whose solver stops as
  soon as every row has converged (``n_iter`` is only an upper bound) and
  whose backward pass is closed form.
- ``training=False``: plain differentiable torch ops with exactly ``n_iter``
  solver steps and no data-dependent Python control flow, so the graph can be
  exported (``torch.export``) or traced (``torch.jit.trace``). Gradients come
  from two differentiable Newton steps at the converged threshold (exact to
  second order by implicit differentiation), not from unrolling the loop.

Stopping rule (both paths): a row stops once ``|sum(p) - 1| <= 16 eps_mach``,
which bounds the error of every entry by the same amount (all ``p_i`` move
monotonically with ``tau``), or once a Newton step or the bracket is below the
rounding of ``tau``; ``n_iter`` caps the number of solver evaluations (each
evaluation is one pass over the scores). The training path checks after every
evaluation whether all rows have stopped, and replaces the last evaluation by
a closed-form step (sparsemax, 1.5-entmax) or a first-order one (other
``alpha <= 1.5``) as soon as its error is negligible. Half-precision inputs
are solved in float32 and cast back.
"""

import numbers

import torch
from torch import nn

from . import _root_kernels as K
from ._threshold_kernels import tests_in_blocks
from ._validation import check_input, check_n_iter, compute_dtype, propagate_nan_rows

__all__ = [
    "entmax_bisect",
    "sparsemax_bisect",
    "normmax_bisect",
    "budget_bisect",
    "EntmaxBisect",
    "SparsemaxBisect",
    "NormmaxBisect",
    "BudgetBisect",
    "EntmaxBisectFunction",
    "SparsemaxBisectFunction",
    "NormmaxBisectFunction",
    "BudgetBisectFunction",
]

# ---------------------------------------------------------------- hyper-parameters


def _check_number(value, name, lower, what, lower_included=False):
    number = not isinstance(value, bool) and isinstance(value, numbers.Real)
    above = number and (value >= lower if lower_included else value > lower)
    if not (above and value < float("inf")):
        raise ValueError(f"{name} must be a finite real number {what}, got {name}={value!r}")
    return float(value)


def _prepare_param(value, X, dim, name, lower, what, check_values, lower_included=False):
    """Return a Python float or a tensor aligned with ``X`` (size 1 along ``dim``)."""
    if not isinstance(value, torch.Tensor):
        return _check_number(value, name, lower, what, lower_included)
    try:
        broadcasts = torch.broadcast_shapes(value.shape, X.shape) == X.shape
    except RuntimeError:
        broadcasts = False
    if not broadcasts:
        raise ValueError(f"{name} of shape {tuple(value.shape)} does not broadcast to X of shape {tuple(X.shape)}")
    aligned = value.reshape((1,) * (X.dim() - value.dim()) + tuple(value.shape))
    if aligned.size(dim) != 1:
        raise ValueError(
            f"{name} must have size 1 along dim={dim} (one {name} per slice), got shape {tuple(value.shape)}"
        )
    if check_values and not K.wrapped(aligned):
        ok = ((aligned >= lower) if lower_included else (aligned > lower)) & torch.isfinite(aligned)
        if not bool(ok.all()):
            raise ValueError(f"{name} must be finite and {what} in every entry")
    return aligned.to(compute_dtype(X.dtype))


# The training path's solvers stop on data, which torch.compile cannot capture:
# left to Dynamo they would break the graph (and recompile) at every convergence
# test. They run eagerly instead; training=False is the fully traceable path.
@torch.compiler.disable
def _apply_eagerly(function, *args):
    return function.apply(*args)


# ---------------------------------------------------------------- entmax


class _AlphaFunction(torch.autograd.Function):
    """Saving and backward of the maps differentiable in ``X`` and a hyper-parameter ``alpha``.

    A subclass names the kernel of its vector-Jacobian products,
    ``_vjp(Y, alpha, grad_output, dim, need_alpha) -> (grad_X, grad_alpha)``.
    ``apply`` takes ``(X, alpha, dim, *options)``; ``alpha`` is a Python float
    or a tensor already aligned with ``X`` (size 1 along ``dim``), and the
    options get no gradient.
    """

    @staticmethod
    def setup_context(ctx, inputs, output):
        """Save the output and ``alpha``: both gradients are functions of them alone.

        Parameters
        ----------
        ctx : torch.autograd.function.FunctionCtx
            The context the backward pass receives.
        inputs : tuple
            The arguments of ``apply``: ``(X, alpha, dim, *options)``.
        output : torch.Tensor
            The forward's result, shape and dtype of ``X``.
        """
        _, alpha, dim, *options = inputs
        ctx.dim = dim
        ctx.n_options = len(options)
        if isinstance(alpha, torch.Tensor):
            ctx.alpha = None
            ctx.save_for_backward(output, alpha)
        else:
            ctx.alpha = alpha
            ctx.save_for_backward(output)

    @classmethod
    def backward(cls, ctx, grad_output):
        """Vector-Jacobian products in ``X`` and ``alpha``.

        Parameters
        ----------
        ctx : torch.autograd.function.FunctionCtx
            The context filled by :meth:`setup_context`.
        grad_output : torch.Tensor
            Gradient with respect to the output, shape of ``X``.

        Returns
        -------
        tuple
            ``(grad_X, grad_alpha, None, ...)``, one entry per argument of
            ``apply``: ``grad_X`` has the shape of ``X``, ``grad_alpha`` the
            shape of the ``alpha`` tensor passed to ``apply`` (``None`` for a
            Python alpha or when not needed).
        """
        if ctx.alpha is None:
            Y, alpha = ctx.saved_tensors
            need_alpha = ctx.needs_input_grad[1]
        else:
            (Y,), alpha, need_alpha = ctx.saved_tensors, ctx.alpha, False
        dX, d_alpha = cls._vjp(Y, alpha, grad_output, ctx.dim, need_alpha)
        if d_alpha is not None:
            d_alpha = d_alpha.sum_to_size(alpha.shape)
        return (dX, d_alpha, None) + (None,) * ctx.n_options


class EntmaxBisectFunction(_AlphaFunction):
    """Autograd function for alpha-entmax, differentiable in ``X`` and ``alpha``.

    Use :func:`entmax_bisect` rather than calling ``apply(X, alpha, dim,
    n_iter, ensure_sum_one)`` directly; ``alpha`` is a Python float or a
    tensor already aligned with ``X`` (size 1 along ``dim``) and of ``X``'s
    dtype.

    With ``g = p ** (2 - alpha)`` on the support and ``q = g / sum(g)``, the
    Jacobian in ``X`` is ``diag(g) - g q^T``. In ``alpha`` it is
    ``(p - q) / (alpha - 1) ** 2 - (p log p - q sum(p log p)) / (alpha - 1)``
    (Correia et al., 2019), evaluated in a form that stays accurate
    as ``alpha -> 1`` (see :func:`sparsetab.entmax._root_kernels.entmax_backward`).
    The backward pass is itself differentiable (double backward).

    Parameters
    ----------
    *args
        Ignored: an autograd function is used through ``apply``, never
        instantiated (torch warns when it is).
    **kwargs
        Ignored, as ``*args``.

    References
    ----------
    Correia, G. M., Niculae, V. & Martins, A. F. T. (2019). Adaptively sparse
    transformers. EMNLP.
    """

    generate_vmap_rule = True
    _vjp = staticmethod(K.entmax_backward)

    @staticmethod
    def forward(X, alpha, dim=-1, n_iter=50, ensure_sum_one=True):
        """Solve alpha-entmax of ``X`` along ``dim``: on the CPU until every row has converged.

        Off the CPU (a GPU; see
        :func:`~sparsetab.entmax._threshold_kernels.tests_in_blocks`) exactly ``n_iter``
        evaluations are made and nothing is read back to the host, so that a captured CUDA
        graph can hold the solver: ``benchmarks/alpha_entmax_evaluations.py`` found at most 10
        evaluations within 1e-6 of the converged float32 map for alpha in [1.001, 1.999].

        Parameters
        ----------
        X : torch.Tensor
            Scores of any shape with at least one dimension, float32 or
            float64 (not checked here).
        alpha : float or torch.Tensor
            ``alpha > 0``; a tensor is aligned with ``X`` with size 1 along
            ``dim``.
        dim : int, default -1
            Dimension along which the output sums to one.
        n_iter : int, default 50
            Maximum number of solver evaluations (off the CPU, the number).
        ensure_sum_one : bool, default True
            Divide the result by its sum.

        Returns
        -------
        torch.Tensor
            The alpha-entmax of ``X``, shape and dtype of ``X``.
        """
        early_exit = not K.wrapped(X) and not tests_in_blocks(X)
        return K.entmax_forward(X, alpha, dim, n_iter, ensure_sum_one, early_exit=early_exit)[0]


class SparsemaxBisectFunction(torch.autograd.Function):
    """Autograd function for sparsemax by root finding (``alpha = 2``); see :func:`sparsemax_bisect`.

    Use :func:`sparsemax_bisect` rather than calling ``apply(X, dim, n_iter,
    ensure_sum_one)`` directly. The Jacobian is ``diag(s) - s s^T / |S|``
    with ``s`` the support indicator (Martins & Astudillo, 2016, Sec. 2.5).

    Parameters
    ----------
    *args
        Ignored: an autograd function is used through ``apply``, never
        instantiated (torch warns when it is).
    **kwargs
        Ignored, as ``*args``.

    References
    ----------
    Martins, A. F. T. & Astudillo, R. F. (2016). From softmax to sparsemax.
    ICML.
    """

    generate_vmap_rule = True

    @staticmethod
    def forward(X, dim=-1, n_iter=50, ensure_sum_one=True):
        """Solve sparsemax of ``X`` along ``dim`` by the alpha-entmax root finder at ``alpha = 2``.

        Parameters
        ----------
        X : torch.Tensor
            Scores of any shape with at least one dimension, float32 or
            float64 (not checked here).
        dim : int, default -1
            Dimension along which the output sums to one.
        n_iter : int, default 50
            Maximum number of solver evaluations.
        ensure_sum_one : bool, default True
            Divide the result by its sum.

        Returns
        -------
        torch.Tensor
            Sparsemax of ``X``, shape and dtype of ``X``.
        """
        return K.entmax_forward(X, 2.0, dim, n_iter, ensure_sum_one, early_exit=not K.wrapped(X))[0]

    @staticmethod
    def setup_context(ctx, inputs, output):
        """Save the output, whose support determines the Jacobian.

        Parameters
        ----------
        ctx : torch.autograd.function.FunctionCtx
            The context the backward pass receives.
        inputs : tuple
            The arguments of ``apply``: ``(X, dim, n_iter, ensure_sum_one)``.
        output : torch.Tensor
            The forward's result, shape and dtype of ``X``.
        """
        ctx.dim = inputs[1]
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, grad_output):
        """Vector-Jacobian product in ``X``: ``s g - s sum(s g) / |S|``.

        Parameters
        ----------
        ctx : torch.autograd.function.FunctionCtx
            The context filled by :meth:`setup_context`.
        grad_output : torch.Tensor
            Gradient with respect to the output, shape of ``X``.

        Returns
        -------
        tuple
            ``(grad_X, None, None, None)``; ``grad_X`` has the shape of ``X``.
        """
        (Y,) = ctx.saved_tensors
        return K.entmax_backward(Y, 2.0, grad_output, ctx.dim, False)[0], None, None, None


def entmax_bisect(X, alpha=1.5, dim=-1, n_iter=50, ensure_sum_one=True, training=True):
    """Alpha-entmax for any ``alpha > 0`` by root finding, differentiable in ``X`` and ``alpha``.

    Solves, independently for every slice ``x`` along ``dim``,

    ``entmax_alpha(x) = argmax_{p in simplex} p . x + H^T_alpha(p)``,

    with the Tsallis entropy ``H^T_alpha(p) = (1 - sum_j p_j ** alpha) /
    (alpha (alpha - 1))`` (Shannon's at ``alpha = 1``). The solution is
    ``p_i = [(alpha - 1) x_i - tau] ** (1 / (alpha - 1))`` with ``tau`` set so
    that ``sum(p) == 1``:

    - ``alpha > 1``: the base is clamped at 0 (``[.]_+``), so ``p`` can be
      sparse; ``alpha = 2`` is sparsemax, ``alpha = 1.5`` 1.5-entmax.
    - ``alpha = 1``: softmax (computed by ``torch.softmax``, also for entries
      of a tensor ``alpha`` that equal 1).
    - ``0 < alpha < 1``: the exponent ``1 / (alpha - 1)`` is negative and the
      entropy's gradient is infinite at ``p_i = 0``, so the solution is dense:
      ``tau < (alpha - 1) max(x)`` makes every base positive and
      ``p_i = ((alpha - 1) x_i - tau) ** (1 / (alpha - 1))`` with no clamping
      (heavier tails than softmax).

    The threshold is found by a safeguarded Newton iteration (see the module
    docstring for the stopping rule): about 4-7 evaluations for
    ``alpha <= 2`` on random inputs, more (bisection until the support is
    fixed) for ``alpha > 2``.

    Parameters
    ----------
    X : torch.Tensor
        Scores of any shape with at least one dimension, floating point
        (``float16``/``bfloat16`` are computed in float32 and cast back).
        ``-inf`` entries get probability 0 and gradient 0; an all ``-inf``
        slice gives an all-zero output (and zero gradient). A slice holding a
        NaN gives NaN everywhere, as softmax does, on both paths.
    alpha : float or torch.Tensor, default 1.5
        Must be finite and > 0. A tensor must broadcast to ``X`` and have size
        1 along ``dim`` (one ``alpha`` per slice, e.g. shape ``(batch, 1)`` for
        ``X`` of shape ``(batch, d)``, or 0-d); it is cast to the compute dtype
        and receives a gradient if it requires one. Tensor values are checked
        only in the training path and outside ``vmap``.
    dim : int, default -1
        Dimension along which the output sums to one.
    n_iter : int, default 50
        Maximum number of solver evaluations (exactly this many when
        ``training=False``, where 10-20 suffice for ``alpha <= 2``: lower it
        for a cheaper exported graph); a positive integer, or ``None`` for 50.
    ensure_sum_one : bool, default True
        Divide the result by its sum so it lies exactly on the simplex.
    training : bool, default True
        ``True``: autograd.Function with early exit and closed-form backward.
        ``False``: plain torch ops, fixed iteration count (exportable and
        traceable).

    Returns
    -------
    torch.Tensor
        Probabilities, same shape and dtype as ``X``; non-negative, summing to
        one along ``dim``.

    Raises
    ------
    TypeError
        If ``X`` is not a floating-point tensor or ``dim`` is not an int.
    IndexError
        If ``dim`` is out of range for ``X``.
    ValueError
        If ``X`` is 0-d or has size 0 along ``dim``, ``alpha`` is not finite
        and > 0 or has an incompatible shape, or ``n_iter`` is not a positive
        integer.

    References
    ----------
    Peters, B., Niculae, V. & Martins, A. F. T. (2019). Sparse
    sequence-to-sequence models. ACL.

    Correia, G. M., Niculae, V. & Martins, A. F. T. (2019). Adaptively sparse
    transformers. EMNLP. (Gradient in ``alpha``.)

    Blondel, M., Martins, A. F. T. & Niculae, V. (2020). Learning with
    Fenchel-Young losses. JMLR 21. (Root finding for the threshold.)
    """
    dim = check_input(X, dim)
    n_iter = check_n_iter(n_iter)
    alpha = _prepare_param(alpha, X, dim, "alpha", 0.0, "> 0", check_values=training)
    Xc = X.to(compute_dtype(X.dtype))
    if isinstance(alpha, float) and alpha == 1.0:
        P = K.softmax_or_zero(Xc, dim, check=training and not K.wrapped(X))
    elif training:
        P = _apply_eagerly(EntmaxBisectFunction, Xc, alpha, dim, n_iter, bool(ensure_sum_one))
    else:
        P = K.entmax_export(Xc, alpha, dim, n_iter, bool(ensure_sum_one))
    return propagate_nan_rows(P.to(X.dtype), X, dim)


def entmax_bisect_of_valid_alpha(X, alpha, dim=-1, n_iter=50):
    """:func:`entmax_bisect`'s training path for an ``alpha`` tensor that is valid by construction.

    The network's learned alpha, ``1 + sigmoid(theta)``, lies in (1, 2) whatever ``theta`` is, so
    its values are not checked: on a GPU the check would read them back to the host at every
    step (issue 34). Everything else is :func:`entmax_bisect` with ``training=True``.

    Parameters
    ----------
    X : torch.Tensor
        Scores of any shape with at least one dimension, floating point.
    alpha : torch.Tensor
        Finite and > 0 in every entry (not checked); broadcastable to ``X`` with size 1 along
        ``dim``, e.g. 0-d.
    dim : int, default -1
        Dimension along which the output sums to one.
    n_iter : int, default 50
        Solver evaluations: the most on the CPU, exactly this many elsewhere.

    Returns
    -------
    torch.Tensor
        Probabilities, same shape and dtype as ``X``, summing to one along ``dim``.

    Raises
    ------
    TypeError
        If ``X`` is not a floating-point tensor or ``dim`` is not an int.
    ValueError
        If ``X`` is 0-d or empty along ``dim``, ``alpha`` does not broadcast to ``X`` with size 1
        along ``dim``, or ``n_iter`` is not a positive integer.
    """
    dim = check_input(X, dim)
    n_iter = check_n_iter(n_iter)
    alpha = _prepare_param(alpha, X, dim, "alpha", 0.0, "> 0", check_values=False)
    Xc = X.to(compute_dtype(X.dtype))
    P = _apply_eagerly(EntmaxBisectFunction, Xc, alpha, dim, n_iter, True)
    return propagate_nan_rows(P.to(X.dtype), X, dim)


def _entmax_bisect_iterations(X, alpha=1.5, dim=-1, n_iter=50):
    """Number of solver evaluations the training path makes on ``X`` (for tests and benchmarks)."""
    dim = check_input(X, dim)
    alpha = _prepare_param(alpha, X, dim, "alpha", 0.0, "> 0", check_values=True)
    with torch.no_grad():
        early_exit = not tests_in_blocks(X)  # as EntmaxBisectFunction.forward decides
        return K.entmax_forward(X.to(compute_dtype(X.dtype)), alpha, dim, check_n_iter(n_iter), True, early_exit)[1]


def sparsemax_bisect(X, dim=-1, n_iter=50, ensure_sum_one=True, training=True):
    """Sparsemax by root finding: :func:`entmax_bisect` at ``alpha = 2``.

    Solves ``argmin_{p in simplex} ||p - x||^2`` for every slice along
    ``dim``. The threshold search is Newton on a piecewise-linear function,
    finished in closed form on the final support, so the result is exact.

    Parameters
    ----------
    X : torch.Tensor
        Scores of any shape with at least one dimension, floating point. A
        slice holding a NaN gives NaN everywhere.
    dim : int, default -1
        Dimension along which the output sums to one.
    n_iter : int, default 50
        Maximum number of solver evaluations (exact count when
        ``training=False``); ``None`` means 50.
    ensure_sum_one : bool, default True
        Divide the result by its sum.
    training : bool, default True
        ``False`` selects the exportable plain-ops path.

    Returns
    -------
    torch.Tensor
        Probabilities, same shape and dtype as ``X``.

    Raises
    ------
    TypeError
        If ``X`` is not a floating-point tensor or ``dim`` is not an int.
    IndexError
        If ``dim`` is out of range for ``X``.
    ValueError
        If ``X`` is 0-d or empty along ``dim`` or ``n_iter`` is not a positive
        integer.

    References
    ----------
    Martins, A. F. T. & Astudillo, R. F. (2016). From softmax to sparsemax.
    ICML.

    Blondel, M., Martins, A. F. T. & Niculae, V. (2020). Learning with
    Fenchel-Young losses. JMLR 21.
    """
    dim = check_input(X, dim)
    n_iter = check_n_iter(n_iter)
    Xc = X.to(compute_dtype(X.dtype))
    if training:
        P = _apply_eagerly(SparsemaxBisectFunction, Xc, dim, n_iter, bool(ensure_sum_one))
    else:
        P = K.entmax_export(Xc, 2.0, dim, n_iter, bool(ensure_sum_one))
    return propagate_nan_rows(P.to(X.dtype), X, dim)


# ---------------------------------------------------------------- normmax


class NormmaxBisectFunction(_AlphaFunction):
    """Autograd function for alpha-normmax, differentiable in ``X`` and ``alpha``; see :func:`normmax_bisect`.

    Use :func:`normmax_bisect` rather than calling ``apply(X, alpha, dim,
    n_iter)`` directly; ``alpha`` is a Python float or a tensor aligned with
    ``X``. The Jacobians are closed form in the output (see
    :func:`sparsetab.entmax._root_kernels.normmax_backward`); the backward
    pass is itself differentiable.

    Parameters
    ----------
    *args
        Ignored: an autograd function is used through ``apply``, never
        instantiated (torch warns when it is).
    **kwargs
        Ignored, as ``*args``.

    References
    ----------
    Santos, S., Niculae, V., McNamee, D. & Martins, A. F. T. (2024). Sparse
    and structured Hopfield networks. ICML.
    """

    generate_vmap_rule = True
    _vjp = staticmethod(K.normmax_backward)

    @staticmethod
    def forward(X, alpha, dim=-1, n_iter=50):
        """Solve alpha-normmax of ``X`` along ``dim``, stopping once every row has converged.

        Parameters
        ----------
        X : torch.Tensor
            Scores of any shape with at least one dimension, float32 or
            float64 (not checked here).
        alpha : float or torch.Tensor
            ``alpha > 1``; a tensor is aligned with ``X`` with size 1 along
            ``dim``.
        dim : int, default -1
            Dimension along which the output sums to one.
        n_iter : int, default 50
            Maximum number of solver evaluations.

        Returns
        -------
        torch.Tensor
            The alpha-normmax of ``X``, shape and dtype of ``X``.
        """
        return K.normmax_forward(X, alpha, dim, n_iter, early_exit=not K.wrapped(X))[0]


def normmax_bisect(X, alpha=2, dim=-1, n_iter=50, ensure_sum_one=True, training=True):
    """Alpha-normmax by root finding, differentiable in ``X`` and ``alpha``.

    Solves, for every slice ``x`` along ``dim``,

    ``normmax_alpha(x) = argmax_{p in simplex} p . x - ||p||_alpha``.

    Stationarity gives ``p = u / sum(u)`` with
    ``u_i = [x_i - tau]_+ ** (1 / (alpha - 1))`` and ``tau`` such that
    ``||u||_alpha = 1``; ``tau`` is found by a safeguarded Newton iteration on
    ``(sum_i [x_i - tau]_+ ** k) ** (1/k)`` (``k = alpha / (alpha - 1)``), which
    is convex in ``tau``. Same definition as ``entmax.normmax_bisect`` 1.3.

    Parameters
    ----------
    X : torch.Tensor
        Scores of any shape with at least one dimension, floating point
        (half precision is computed in float32). ``-inf`` entries get 0; a
        slice holding a NaN gives NaN everywhere.
    alpha : float or torch.Tensor, default 2
        Must be finite and > 1; a tensor must broadcast to ``X`` with size 1
        along ``dim``, and receives a gradient if it requires one.
    dim : int, default -1
        Dimension along which the output sums to one.
    n_iter : int, default 50
        Maximum number of solver evaluations (exact count when
        ``training=False``); ``None`` means 50.
    ensure_sum_one : bool, default True
        Accepted for symmetry with :func:`entmax_bisect`; the output
        ``u / sum(u)`` sums to one by construction either way.
    training : bool, default True
        ``False`` selects the exportable plain-ops path.

    Returns
    -------
    torch.Tensor
        Probabilities, same shape and dtype as ``X``.

    Raises
    ------
    TypeError
        If ``X`` is not a floating-point tensor or ``dim`` is not an int.
    IndexError
        If ``dim`` is out of range for ``X``.
    ValueError
        If ``X`` is 0-d or empty along ``dim``, ``alpha`` is not finite and
        > 1 or has an incompatible shape, or ``n_iter`` is not a positive
        integer.

    References
    ----------
    Santos, S., Niculae, V., McNamee, D. & Martins, A. F. T. (2024). Sparse
    and structured Hopfield networks. ICML. (alpha-normmax.)

    Blondel, M., Martins, A. F. T. & Niculae, V. (2020). Learning with
    Fenchel-Young losses. JMLR 21.
    """
    del ensure_sum_one  # see the docstring: normmax is normalised by construction
    dim = check_input(X, dim)
    n_iter = check_n_iter(n_iter)
    alpha = _prepare_param(alpha, X, dim, "alpha", 1.0, "> 1", check_values=training)
    Xc = X.to(compute_dtype(X.dtype))
    if training:
        P = _apply_eagerly(NormmaxBisectFunction, Xc, alpha, dim, n_iter)
    else:
        P = K.normmax_export(Xc, alpha, dim, n_iter)
    return propagate_nan_rows(P.to(X.dtype), X, dim)


# ---------------------------------------------------------------- budget


class BudgetBisectFunction(torch.autograd.Function):
    """Autograd function for budget-sparsemax, differentiable in ``X`` and ``budget``; see :func:`budget_bisect`.

    Use :func:`budget_bisect` rather than calling ``apply(X, budget, dim,
    n_iter, ensure_sum_one)`` directly. With ``s`` the indicator of the
    active entries (``0 < p < 1``), the Jacobian in ``X`` is
    ``diag(s) - s s^T / |A|`` and ``dp/dbudget = s / |A|``.

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
    def forward(X, budget, dim=-1, n_iter=50, ensure_sum_one=True):
        """Solve budget-sparsemax of ``X`` along ``dim``, stopping once every row has converged.

        Parameters
        ----------
        X : torch.Tensor
            Scores of any shape with at least one dimension, float32 or
            float64 (not checked here).
        budget : float or torch.Tensor
            The sum of each output slice, ``0 <= budget <= X.size(dim)``; a
            tensor is aligned with ``X`` with size 1 along ``dim``.
        dim : int, default -1
            Dimension along which the output sums to ``budget``.
        n_iter : int, default 50
            Maximum number of solver evaluations.
        ensure_sum_one : bool, default True
            Finish with the exact threshold of the final active set.

        Returns
        -------
        torch.Tensor
            Budget-sparsemax of ``X``, shape and dtype of ``X``, entries in
            ``[0, 1]``.
        """
        return K.budget_forward(X, budget, dim, n_iter, ensure_sum_one, early_exit=not K.wrapped(X))[0]

    @staticmethod
    def setup_context(ctx, inputs, output):
        """Save the output (it determines the active set) and the budget's shape.

        Parameters
        ----------
        ctx : torch.autograd.function.FunctionCtx
            The context the backward pass receives.
        inputs : tuple
            The arguments of ``apply``: ``(X, budget, dim, n_iter, ensure_sum_one)``.
        output : torch.Tensor
            The forward's result, shape and dtype of ``X``.
        """
        _, budget, dim, _, _ = inputs
        ctx.dim = dim
        ctx.budget_shape = budget.shape if isinstance(budget, torch.Tensor) else None
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, grad_output):
        """Vector-Jacobian products in ``X`` and ``budget``.

        Parameters
        ----------
        ctx : torch.autograd.function.FunctionCtx
            The context filled by :meth:`setup_context`.
        grad_output : torch.Tensor
            Gradient with respect to the output, shape of ``X``.

        Returns
        -------
        tuple
            ``(grad_X, grad_budget, None, None, None)``: ``grad_X`` has the
            shape of ``X``, ``grad_budget`` that of the ``budget`` tensor
            passed to ``apply`` (``None`` for a Python budget or when not
            needed).
        """
        (Y,) = ctx.saved_tensors
        need_budget = ctx.budget_shape is not None and ctx.needs_input_grad[1]
        dX, d_budget = K.budget_backward(Y, grad_output, ctx.dim, need_budget)
        if d_budget is not None:
            d_budget = d_budget.sum_to_size(ctx.budget_shape)
        return dX, d_budget, None, None, None


def budget_bisect(X, budget=2, dim=-1, n_iter=50, ensure_sum_one=True, training=True):
    """Budget-sparsemax (capped simplex projection) by root finding, differentiable in ``X`` and ``budget``.

    Solves, for every slice ``x`` along ``dim``,

    ``argmax_p p . x - ||p||^2 / 2  s.t.  0 <= p_i <= 1, sum(p) == budget``,

    i.e. the Euclidean projection onto the capped simplex. The solution is
    ``p_i = clamp(x_i - tau, 0, 1)``; ``tau`` is found by Newton on the
    piecewise-linear sum with a bisection fallback. Same definition as
    ``entmax.budget_bisect`` 1.3.

    Parameters
    ----------
    X : torch.Tensor
        Scores of any shape with at least one dimension, floating point
        (half precision is computed in float32). ``-inf`` entries get 0; a
        slice holding a NaN gives NaN everywhere.
    budget : float or torch.Tensor, default 2
        Must be finite and >= 0 (0 gives all zeros, as in entmax 1.3) and at
        most the number of finite entries of a slice (only
        ``budget <= X.size(dim)`` is checked); a tensor must
        broadcast to ``X`` with size 1 along ``dim``, and receives a gradient
        if it requires one.
    dim : int, default -1
        Dimension along which the output sums to ``budget``.
    n_iter : int, default 50
        Maximum number of solver evaluations (exact count when
        ``training=False``); ``None`` means 50.
    ensure_sum_one : bool, default True
        Finish with the exact threshold of the final active set, so the
        output sums to ``budget`` to rounding (the name is kept for symmetry
        with the other maps). ``False`` returns the last iterate, as entmax
        1.3 does.
    training : bool, default True
        ``False`` selects the exportable plain-ops path (always finished
        exactly).

    Returns
    -------
    torch.Tensor
        Same shape and dtype as ``X``, entries in ``[0, 1]`` summing to
        ``budget`` along ``dim``.

    Raises
    ------
    TypeError
        If ``X`` is not a floating-point tensor or ``dim`` is not an int.
    IndexError
        If ``dim`` is out of range for ``X``.
    ValueError
        If ``X`` is 0-d or empty along ``dim``, ``budget`` is not in
        ``[0, X.size(dim)]`` or has an incompatible shape, or ``n_iter`` is not
        a positive integer.

    References
    ----------
    Blondel, M., Martins, A. F. T. & Niculae, V. (2020). Learning with
    Fenchel-Young losses. JMLR 21. (Budget/capped-simplex constraints.)

    Peters, B., Niculae, V. & Martins, A. F. T. (2019). Sparse
    sequence-to-sequence models. ACL.
    """
    dim = check_input(X, dim)
    n_iter = check_n_iter(n_iter)
    d = X.size(dim)
    budget = _prepare_param(budget, X, dim, "budget", 0.0, ">= 0", check_values=training, lower_included=True)
    over = (
        budget > d if isinstance(budget, float) else (training and not K.wrapped(budget) and bool((budget > d).any()))
    )
    if over:
        raise ValueError(f"budget must be at most X.size(dim) = {d}")
    Xc = X.to(compute_dtype(X.dtype))
    if training:
        P = _apply_eagerly(BudgetBisectFunction, Xc, budget, dim, n_iter, bool(ensure_sum_one))
    else:
        P = K.budget_export(Xc, budget, dim, n_iter)
    return propagate_nan_rows(P.to(X.dtype), X, dim)


# ---------------------------------------------------------------- modules


class _RootFindingModule(nn.Module):
    """Shared plumbing of the root-finding modules.

    A subclass names its functional form (``_map``) and, if it has one, its
    hyper-parameter (``_param = (name, lower bound, wording[, whether the bound
    itself is allowed])``); storing it, calling the map with the module's
    settings and the repr are then common.
    """

    _map = None
    _param = None

    def __init__(self, value, dim, n_iter, ensure_sum_one):
        super().__init__()
        if self._param is not None:
            self._store(value, *self._param)
        self.dim = dim
        self.n_iter = check_n_iter(n_iter)
        self.ensure_sum_one = ensure_sum_one

    def _store(self, value, name, lower, what, lower_included=False):
        if isinstance(value, nn.Parameter):
            setattr(self, name, value)  # registered as a parameter: trainable, saved, moved
        elif isinstance(value, torch.Tensor):
            self.register_buffer(name, value)  # moved by .to() and saved, never trained
        else:
            setattr(self, name, _check_number(value, name, lower, what, lower_included))

    def forward(self, X):
        """Apply the map along ``self.dim``, by the exportable path in ``eval()`` mode.

        Parameters
        ----------
        X : torch.Tensor
            Scores of any shape with at least one dimension, floating point.

        Returns
        -------
        torch.Tensor
            Same shape and dtype as ``X``.
        """
        value = () if self._param is None else (getattr(self, self._param[0]),)
        return type(self)._map(X, *value, self.dim, self.n_iter, self.ensure_sum_one, training=self.training)

    def extra_repr(self):
        """Show the hyper-parameters in the module's repr."""
        settings = f"dim={self.dim}, n_iter={self.n_iter}, ensure_sum_one={self.ensure_sum_one}"
        if self._param is None:
            return settings
        value = getattr(self, self._param[0])
        return f"{self._param[0]}={'tensor' if isinstance(value, torch.Tensor) else value}, " + settings


class EntmaxBisect(_RootFindingModule):
    """Module form of :func:`entmax_bisect`; uses the exportable path in ``eval()`` mode.

    Parameters
    ----------
    alpha : float, torch.Tensor or nn.Parameter, default 1.5
        Must be > 0 (1 gives softmax). An ``nn.Parameter`` is registered as a
        parameter (learnable, in ``state_dict``, moved by ``.to()``); another
        tensor is registered as a buffer.
    dim : int, default -1
        Dimension along which the output sums to one.
    n_iter : int, default 50
        Maximum number of solver evaluations in ``train()`` mode; the exact
        number in ``eval()`` mode (where 10-20 suffice for ``alpha <= 2``).
    ensure_sum_one : bool, default True
        Divide the result by its sum.

    Raises
    ------
    ValueError
        If a non-tensor ``alpha`` is not a finite number > 0 or ``n_iter`` is
        not a positive integer (tensor values are checked on each call).

    References
    ----------
    Peters, B., Niculae, V. & Martins, A. F. T. (2019). Sparse
    sequence-to-sequence models. ACL.

    Correia, G. M., Niculae, V. & Martins, A. F. T. (2019). Adaptively sparse
    transformers. EMNLP.
    """

    _map = staticmethod(entmax_bisect)
    _param = ("alpha", 0.0, "> 0")

    def __init__(self, alpha=1.5, dim=-1, n_iter=50, ensure_sum_one=True):
        super().__init__(alpha, dim, n_iter, ensure_sum_one)


class SparsemaxBisect(_RootFindingModule):
    """Module form of :func:`sparsemax_bisect`; uses the exportable path in ``eval()`` mode.

    Parameters
    ----------
    dim : int, default -1
        Dimension along which the output sums to one.
    n_iter : int, default 50
        Maximum number of solver evaluations in ``train()`` mode, the exact
        number in ``eval()`` mode; ``None`` means 50.
    ensure_sum_one : bool, default True
        Divide the result by its sum.

    Raises
    ------
    ValueError
        If ``n_iter`` is not a positive integer.

    References
    ----------
    Martins, A. F. T. & Astudillo, R. F. (2016). From softmax to sparsemax.
    ICML.
    """

    _map = staticmethod(sparsemax_bisect)

    def __init__(self, dim=-1, n_iter=50, ensure_sum_one=True):
        super().__init__(None, dim, n_iter, ensure_sum_one)


class NormmaxBisect(_RootFindingModule):
    """Module form of :func:`normmax_bisect`; uses the exportable path in ``eval()`` mode.

    Parameters
    ----------
    alpha : float, torch.Tensor or nn.Parameter, default 2
        Must be > 1; stored as for :class:`EntmaxBisect`.
    dim : int, default -1
        Dimension along which the output sums to one.
    n_iter : int, default 50
        Maximum number of solver evaluations in ``train()`` mode, the exact
        number in ``eval()`` mode; ``None`` means 50.
    ensure_sum_one : bool, default True
        Accepted for symmetry (normmax is normalised by construction).

    Raises
    ------
    ValueError
        If a non-tensor ``alpha`` is not a finite number > 1 or ``n_iter`` is
        not a positive integer.

    References
    ----------
    Santos, S., Niculae, V., McNamee, D. & Martins, A. F. T. (2024). Sparse
    and structured Hopfield networks. ICML.
    """

    _map = staticmethod(normmax_bisect)
    _param = ("alpha", 1.0, "> 1")

    def __init__(self, alpha=2, dim=-1, n_iter=50, ensure_sum_one=True):
        super().__init__(alpha, dim, n_iter, ensure_sum_one)


class BudgetBisect(_RootFindingModule):
    """Module form of :func:`budget_bisect`; uses the exportable path in ``eval()`` mode.

    Parameters
    ----------
    budget : float, torch.Tensor or nn.Parameter, default 2
        Must be >= 0 and at most the size of ``dim``; stored as ``alpha`` is
        for :class:`EntmaxBisect`.
    dim : int, default -1
        Dimension along which the output sums to ``budget``.
    n_iter : int, default 50
        Maximum number of solver evaluations in ``train()`` mode, the exact
        number in ``eval()`` mode; ``None`` means 50.
    ensure_sum_one : bool, default True
        Finish with the exact threshold of the final active set.

    Raises
    ------
    ValueError
        If a non-tensor ``budget`` is not a finite number >= 0 or ``n_iter`` is
        not a positive integer.

    References
    ----------
    Blondel, M., Martins, A. F. T. & Niculae, V. (2020). Learning with
    Fenchel-Young losses. JMLR 21.
    """

    _map = staticmethod(budget_bisect)
    _param = ("budget", 0.0, ">= 0", True)

    def __init__(self, budget=2, dim=-1, n_iter=50, ensure_sum_one=True):
        super().__init__(budget, dim, n_iter, ensure_sum_one)
