"""Private numerical kernels behind :mod:`sparsetab.entmax.root_finding`.

Everything here works on *shifted* scores ``z = x - max(x)`` along ``dim`` and on
row-wise state tensors that have size 1 along ``dim`` ("R-shaped").

alpha-entmax is written in the q-exponential form

``p_i = [1 + eps (z_i - c)]_+ ** (1 / eps),   eps = alpha - 1``,

with the normaliser ``c`` chosen so that ``sum(p) == 1``. Compared with the
usual ``p_i = [eps x_i - tau]_+ ** (1 / eps)`` (``tau = eps (max x + c) - 1``)
this keeps every quantity O(1) whatever ``alpha``: ``c`` lies in
``[0, (1 - d ** -eps) / eps]`` and tends to ``logsumexp(z)`` as ``eps -> 0``,
and ``log p_i = log1p(eps (z_i - c)) / eps`` is computed without the
cancellation that ruins ``(eps x - tau) ** (1 / eps)`` near ``alpha = 1``. For
``alpha < 1`` the same formula holds with a base that is always >= 1 (no
clamping: the map is dense, like softmax).

The threshold solver is Newton's method on ``G(c) = f(c) ** eps - 1`` with
``f(c) = sum_i p_i(c)``. For ``alpha <= 2``, ``G`` is convex decreasing
(``f ** eps`` is an ``l_{1/eps}`` norm of the affine map ``1 + eps (z - c)``
clamped at 0), and for ``alpha < 1`` it is concave increasing (a power mean of
negative order), so Newton started at ``c = 0`` (where ``f >= 1``) increases
monotonically to the root, quadratically once close, and is exact in one step
for softmax. For ``alpha > 2`` the terms have infinite slope where they enter
the support, so Newton is only used once the bracket holds a fixed support
(there ``G`` is concave and Newton from the right end is monotone); before that
the bracket is bisected.
"""

import math

import torch

from ._threshold_kernels import testing_pass, tests_in_blocks

# ---------------------------------------------------------------- smooth helpers
# Each of these evaluates a function with a removable singularity at 0. Both
# branches of a ``torch.where`` are differentiated, so the unused branch is fed
# a harmless value ("double where"): that keeps first and second derivatives
# free of 0/0 and of the cancellation of the direct formula near 0.


def _small(x, thresholds):
    return x.abs() < thresholds[x.dtype if x.dtype in thresholds else torch.float32]


def _horner(x, coeffs):
    out = torch.full_like(x, coeffs[-1])
    for c in reversed(coeffs[:-1]):
        out = out * x + c
    return out


# log1p(u) / u = 1 - u/2 + u^2/3 - ...; the series is used where the direct
# quotient (and, more importantly, its derivative) loses digits.
_LOG1P_OVER_X = [1.0, -1 / 2, 1 / 3, -1 / 4, 1 / 5, -1 / 6]
_LOG1P_SMALL = {torch.float64: 1e-3, torch.float32: 3e-2}


def log1p_over_x(u):
    """``log1p(u) / u`` (1 at ``u = 0``), smooth and stable near 0."""
    small = _small(u, _LOG1P_SMALL)
    safe = torch.where(small, torch.ones_like(u), u)
    return torch.where(small, _horner(u, _LOG1P_OVER_X), torch.log1p(safe) / safe)


# expm1(y) / y = 1 + y/2 + y^2/6 + ...
_EXPM1_OVER_X = [1.0, 1 / 2, 1 / 6, 1 / 24, 1 / 120, 1 / 720]
_EXPM1_SMALL = {torch.float64: 3e-3, torch.float32: 1e-1}


def expm1_over_x(y):
    """``expm1(y) / y`` (1 at ``y = 0``), smooth and stable near 0."""
    small = _small(y, _EXPM1_SMALL)
    safe = torch.where(small, torch.ones_like(y), y)
    return torch.where(small, _horner(y, _EXPM1_OVER_X), torch.expm1(safe) / safe)


# psi(x) = (x + expm1(-x)) / x^2 = 1/2 - x/6 + x^2/24 - ... (sum_n (-x)^n / (n + 2)!),
# used by the alpha gradient (entmax_backward) near x = 0.
_PSI = [1 / math.factorial(n + 2) * (-1) ** n for n in range(8)]
_PSI_SMALL = {torch.float64: 1e-2, torch.float32: 3e-1}


# ---------------------------------------------------------------- shapes and tolerances


def wrapped(t):
    # Inside vmap/grad transforms, and while torch.compile or torch.export
    # trace, a tensor cannot be read on the host, so the value checks and the
    # early exit are skipped there (Dynamo cannot even ask functorch).
    if torch.compiler.is_compiling():
        return True
    return isinstance(t, torch.Tensor) and torch._C._functorch.is_functorch_wrapped_tensor(t)


def row_zeros(z, dim):
    """Zeros with the shape of ``z`` but size 1 along ``dim`` (trace-friendly)."""
    return torch.zeros_like(z.narrow(dim, 0, 1))


def shift_by_max(X, dim):
    """Return ``(z, m)`` with ``z = X - m`` and ``m`` the row max (0 for all ``-inf`` rows).

    ``m`` is detached: every map here is invariant to adding a constant to a
    row, so its gradient contributes nothing.
    """
    m = X.detach().amax(dim=dim, keepdim=True)
    # An all -inf row would give -inf - (-inf) = nan; shifting it by 0 keeps it
    # all -inf, which every kernel maps to an all-zero row.
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    return X - m, m


def dtype_eps(dtype):
    return torch.finfo(dtype).eps


def exp_floor(dtype):
    """Smallest argument for which ``exp`` still returns a normal number (plus a margin)."""
    return math.log(torch.finfo(dtype).tiny) + 1.0


def flush_floor(p, inplace=True):
    """Zero the entries that :func:`exp_floor` lifted off 0 (fast ops only).

    Subtracting ``exp(floor)`` (~1e-38 in float32) leaves every larger normal
    number unchanged to rounding, and the clamp sends the floored entries to 0.
    """
    shifted = p.sub_(2 * math.exp(exp_floor(p.dtype)))
    return shifted.clamp_(min=0) if inplace else shifted.clamp(min=0)


# Upper clamp of eps (z - c) for alpha < 1, where -inf scores give +inf.
_BIG = 1e30

# A row counts as solved once |sum(p) - 1| is below this many machine epsilons:
# because every p_i moves monotonically with the threshold, |sum(p) - 1| bounds
# the absolute error of every single entry.
_RESIDUAL_ULPS = 16
_VERIFY_ULPS = 64
# Steps and brackets narrower than this many ulps of the threshold are noise.
_STEP_ULPS = 1


# ---------------------------------------------------------------- entmax: evaluation


def entmax_eps_parts(alpha):
    """Return ``(eps, inv_eps, big)`` for a float or R-shaped tensor ``alpha``.

    ``eps = alpha - 1``; exact zeros (``alpha == 1``) are replaced by a tiny
    positive number, for which the q-exponential is ``exp`` to rounding (the
    caller substitutes the exact softmax in those rows). ``big`` flags
    ``alpha > 2`` (bool or bool tensor).
    """
    if isinstance(alpha, torch.Tensor):
        eps = alpha - 1
        # Added, not substituted, so that the gradient still reaches alpha.
        eps = eps + torch.where(eps == 0, torch.full_like(eps, 1e-20), torch.zeros_like(eps))
        return eps, 1 / eps, eps > 1
    eps = float(alpha) - 1.0
    if eps == 0.0:
        eps = 1e-20
    return eps, 1.0 / eps, eps > 1


class EntmaxEvaluator:
    """Evaluate ``p(c)``, ``f = sum p`` and ``S = -f'(c) = sum_i p_i / b_i`` (``b = 1 + eps (z - c)``).

    No autograd; every full-size intermediate lives in a buffer reused across
    calls (on CPU a fresh large allocation costs more than the arithmetic), so
    the returned ``p`` is overwritten by the next call. Transcendental functions
    are never fed 0, infinities or arguments whose result is subnormal: their
    vectorised kernels drop to a scalar path there, 10-40 times slower. Dead
    entries are instead mapped to a harmless value and multiplied by a 0/1
    mask (``sign``) afterwards.

    The formula depends on a Python ``alpha``: ``1/eps`` in ``{1, 2}`` needs
    no transcendental at all; other ``|eps| >= 1/4`` use ``torch.pow`` of the
    clamped base (its rounding is amplified at most 4-fold). Close to
    ``alpha = 1``, and for tensor (per-row) alphas,
    ``log p = log1p(eps (z - c)) / eps`` is used instead, which keeps full
    relative precision as ``eps -> 0``; there ``log p`` is floored at
    :func:`exp_floor` and :func:`flush_floor` zeroes what the floor produced.
    """

    def __init__(self, ez, eps, inv_eps, dim, need_counts, buffers=True):
        self.dim = dim
        self.eps = eps
        self.inv_eps = inv_eps
        self.need_counts = need_counts
        self.tiny = torch.finfo(ez.dtype).tiny
        self.floor = exp_floor(ez.dtype)
        if isinstance(eps, torch.Tensor) or abs(eps) < 0.25:
            self.mode = "log"
        elif eps == 1.0:
            self.mode = "sparsemax"
        elif eps == 0.5:
            self.mode = "entmax15"
        else:
            self.mode = "power"
        self.ez = ez  # eps * (x - max x): -inf stays -inf (+inf if eps < 0)
        # Where eps < 0 a -inf score has ez = +inf: its base is clamped to _BIG, which the power 1 / eps
        # maps to a tiny positive number (1e-60 at alpha 0.5), not to its probability 0; marked dead.
        negative = isinstance(eps, torch.Tensor) or eps < 0
        self.infinite = torch.isposinf(ez) if self.mode == "log" and negative else None
        # Without buffers (inside vmap, which has no batching rule for out=),
        # every out= below is None and each op allocates its result.
        new = (lambda: torch.empty_like(ez)) if buffers else (lambda: None)
        self._b, self._p, self._g = new(), new(), new()
        self.b = self.p = self.g = None  # the last evaluation's base, p and slopes
        # vmap has no batching rule for clamp_ (it warns and loops), so clamp
        # out of place there.
        self.clamp = (lambda t, **kw: t.clamp_(**kw)) if buffers else (lambda t, **kw: t.clamp(**kw))

    def __call__(self, c):
        """Return ``(p, f, S, n)`` at the R-shaped ``c`` (``n`` = support size, if requested)."""
        dim, eps, mode = self.dim, self.eps, self.mode
        n = None
        if mode == "log":
            # Both bounds floats: ONNX decomposition cannot lower a clamp with an int and a float bound.
            u = self.clamp(torch.sub(self.ez, c * eps, out=self._b), min=-1.0, max=_BIG)
            live = torch.add(u, 1, out=self._g).sign_()
            if self.infinite is not None:
                live.masked_fill_(self.infinite, 0)
            if self.need_counts:
                n = live.sum(dim, keepdim=True)
            p = self.clamp(torch.log1p(u.mul_(live), out=self._p).mul_(self.inv_eps), min=self.floor).exp_().mul_(live)
            b = u.add_(1)
            g = torch.div(p, b, out=self._g)  # dead entries: 0 / 1
            S = g.sum(dim, keepdim=True)
        else:
            b = torch.sub(self.ez, c * eps - 1, out=self._b)
            if eps > 0:
                b = self.clamp(b, min=0)
            if mode == "sparsemax":
                p = b
                g = torch.sign(b, out=self._g)
                S = n = g.sum(dim, keepdim=True)
            elif mode == "entmax15":
                p = torch.mul(b, b, out=self._p)
                g = b
                S = b.sum(dim, keepdim=True)
            else:
                if 0 < eps < 1:  # 1 < alpha < 2: b^(r-1) is finite at b = 0
                    g = torch.pow(b, self.inv_eps - 1, out=self._g)
                    p = torch.mul(g, b, out=self._p)
                else:
                    p = torch.pow(b, self.inv_eps, out=self._p)
                    # b = 0 only where p = 0 (alpha > 2): the clamp changes no value.
                    g = torch.div(p, self.clamp(b, min=self.tiny), out=self._g)
                S = g.sum(dim, keepdim=True)
        if self.need_counts and n is None:
            n = torch.sign(p).sum(dim, keepdim=True)
        self.b, self.p, self.g = b, p, g
        return p, p.sum(dim, keepdim=True), S, n

    def finish(self, f, S, step=None):
        """Last step without a further evaluation; the result overwrites a buffer.

        sparsemax and 1.5-entmax: closed form on the support of the last
        evaluation, where ``f`` is ``sum b`` (sparsemax) or ``sum b^2`` with
        ``S = sum b`` (1.5-entmax), so the exact threshold is one step away:
        ``c + (f - 1) / n``, respectively the root
        ``delta = (f - 1) / (S + sqrt(S^2 - n (f - 1)))`` of
        ``sum (b - delta)^2 = 1`` (written without cancellation), ``c + 2 delta``.

        Other alphas: the first-order update ``p - g step`` for the Newton
        ``step``. For ``alpha <= 3/2`` (``1/eps >= 2``) and ``alpha < 1`` each
        entry's error is at most ``step^2``, since ``p`` is convex in ``c`` with
        ``d2p/dc2 = (2 - alpha) p / b^2`` and ``p <= b^2``.
        """
        if self.mode not in ("sparsemax", "entmax15"):
            return self.clamp(torch.addcmul(self.p, self.g, step, value=-1, out=self._g), min=0)
        dim, b = self.dim, self.b
        # sparsemax: S already counts the support; 1.5-entmax: count it once.
        n = (S if self.mode == "sparsemax" else torch.sign(b).sum(dim, keepdim=True)).clamp(min=1)
        # Only rows left of the root (f >= 1) are finished: there the support can
        # only shrink, whereas f < 1 would need entries outside it (which then
        # carry at most |f - 1| <= 16 eps_mach of mass anyway).
        excess = torch.clamp(f - 1, min=0)
        if self.mode == "sparsemax":
            return self.clamp(torch.sub(b, excess / n, out=self._g), min=0)
        disc = torch.clamp(S * S - n * excess, min=0)
        den = S + torch.sqrt(disc)
        delta = excess / torch.where(den > 0, den, torch.ones_like(den))
        root = self.clamp(torch.sub(b, delta, out=self._g), min=0)
        return root.mul_(root)  # square_ has no vmap batching rule


def entmax_newton_step(f, S, eps):
    """Newton step on ``G(c) = f(c) ** eps - 1`` (forward only, no autograd).

    ``G' = -eps f ** (eps - 1) S``, so the step is
    ``expm1(eps log f) f ** (1 - eps) / (eps S)``, without cancellation for
    small ``eps``; for ``eps -> 0`` it is ``log f``, the exact softmax
    normaliser update. (Rows with ``f = 0``, all ``-inf``, get a meaningless
    step; the solver has already stopped them.)
    """
    tiny = torch.finfo(f.dtype).tiny
    lf = f.clamp(min=tiny).log_()
    y = lf * eps
    return torch.expm1(y).mul_(lf.sub_(y).exp_()).div_(S.clamp(min=tiny).mul_(eps))


def entmax_upper_bracket(eps, d):
    """``c_hi = (1 - d ** -eps) / eps``: there every ``p_i <= 1/d``, so ``f <= 1``."""
    if isinstance(eps, torch.Tensor):
        return -torch.expm1(-eps * math.log(d)) / eps
    return -math.expm1(-eps * math.log(d)) / eps


def scaled_scores(z, eps, inplace=False):
    """``eps * z`` as the evaluator wants it (``z`` itself for sparsemax)."""
    if not isinstance(eps, torch.Tensor) and eps == 1.0:
        return z
    return z.mul_(eps) if inplace else z * eps


def solve_entmax(ez, eps, inv_eps, big, dim, n_iter, early_exit, buffers=True):
    """Find the normaliser ``c`` row by row; return ``(p, f, c, iterations)``.

    ``p`` (unnormalised, ``f = sum p``) is that of the last evaluation, after
    the closed-form finish for sparsemax and 1.5-entmax.

    Stopping rule, per row: ``|f - 1| <= 16 eps_mach`` (every entry is then
    within that of its exact value), or a Newton step / the bracket below
    ``eps_mach (|c| + min(1, 1/|eps|))`` (the rounding of ``c``, and of the
    base ``1 + eps (z - c)`` translated to ``c``). With ``early_exit`` the loop
    stops as soon as every row has stopped (checked after each evaluation, one
    host sync), and once all remaining Newton steps are small the last
    evaluation is replaced by :meth:`EntmaxEvaluator.finish`; otherwise exactly
    ``n_iter`` evaluations are made. ``buffers=False`` (needed inside ``vmap``)
    makes every intermediate a fresh tensor. Off the CPU (see
    :func:`~sparsetab.entmax._threshold_kernels.tests_in_blocks`) the early exit
    is tested only at the passes of ``testing_pass``, in one host read: solved
    rows are frozen in between, so the extra passes change nothing.
    """
    tensor_big = isinstance(big, torch.Tensor)
    blocked = early_exit and tests_in_blocks(ez)
    need_counts = bool(big.any()) if (tensor_big and early_exit and not blocked) else bool(tensor_big or big)
    evaluate = EntmaxEvaluator(ez, eps, inv_eps, dim, need_counts, buffers)
    zero = row_zeros(ez, dim)
    d = ez.size(dim)
    mach = dtype_eps(ez.dtype)
    lo, c = zero, zero
    hi = zero + entmax_upper_bracket(eps, d)
    scale = (torch.clamp(1 / eps.abs(), max=1.0) if isinstance(eps, torch.Tensor) else min(1.0, 1 / abs(eps))) * (
        _STEP_ULPS * mach
    )
    if need_counts:
        n_lo, n_hi = zero - 1, zero - 2  # sentinels: "support size unknown"
    # With early exit, the last evaluation can be replaced by a cheaper final
    # step (EntmaxEvaluator.finish) once every Newton step is below
    # sqrt(eps_mach) / 4, i.e. once its second-order error is negligible.
    closed = evaluate.mode in ("sparsemax", "entmax15")
    finishable = early_exit and (closed or _linear_finish_ok(eps, blocked))
    # A closed form is exact as soon as the support is right and is verified,
    # so it is tried earlier.
    near_step = 1e-2 if closed else 0.25 * math.sqrt(mach)
    done = torch.zeros_like(zero, dtype=torch.bool)
    iters = 0
    for _ in range(n_iter):
        iters += 1
        p, f, S, n = evaluate(c)
        left = f >= 1
        lo = torch.where(left, c, lo)
        hi = torch.where(left, hi, c)
        step = entmax_newton_step(f, S, eps)
        cand = c + step
        # Inclusive, so that the zero step of a solved row is not "outside".
        newton = (cand >= lo) & (cand <= hi)
        if need_counts:
            n_lo = torch.where(left, n, n_lo)
            n_hi = torch.where(left, n_hi, n)
            # alpha > 2: Newton only from the right end of a bracket whose
            # support is already fixed (G concave there); bisect otherwise.
            fixed = ((n_lo == n_hi) & ~left) | (step == 0)
            # fixed | ~big is where(big, fixed, True) without a boolean-valued where, which onnxruntime lacks.
            newton = newton & ((fixed | ~big) if tensor_big else fixed)
        if not early_exit:
            # Fixed iteration count (export path, vmap): no stopping test; a
            # solved row's further steps are rounding noise inside its bracket.
            c = torch.where(newton, cand, (lo + hi) / 2)
            continue
        tol = c.abs().mul_(_STEP_ULPS * mach).add_(scale)
        step_size = step.abs()
        # (An all -inf row has f = 0 at c = 0, so hi = lo = 0 and it stops at once.)
        done |= (f - 1).abs_() <= _RESIDUAL_ULPS * mach
        done |= hi - lo <= tol
        done |= newton & (step_size <= tol)
        if blocked:
            if not testing_pass(iters):
                c = torch.where(done, c, torch.where(newton, cand, (lo + hi) / 2))
                continue
            # Both questions in one read: all done, and all close enough for the final step.
            near = (done | (newton & (step_size <= near_step))).all()
            if finishable is not True:  # a tensor: whether every row's alpha allows the final step
                near = near & finishable
            all_done, all_near = torch.stack([done.all(), near]).tolist()
        else:
            all_done = bool(done.all())
            all_near = None
        if all_done:
            break
        if all_near is None and finishable and iters < n_iter:
            all_near = bool((done | (newton & (step_size <= near_step))).all())
        if all_near and iters < n_iter:
            p_fin = evaluate.finish(f, S, torch.where(done, torch.zeros_like(step), step))
            f_fin = p_fin.sum(dim, keepdim=True)
            # A closed form assumes that the support does not change any more;
            # if it does, the sum shows it (by at most the mass of the entries
            # that leave, so the check can be loose: it only has to clear the
            # rounding of the sum).
            if not closed or bool(((f_fin - 1).abs() <= _VERIFY_ULPS * mach).all()):
                if evaluate.mode == "log":
                    p_fin = flush_floor(p_fin)
                return p_fin, f_fin, torch.where(done, c, cand), iters
        c = torch.where(done, c, torch.where(newton, cand, (lo + hi) / 2))
    if closed:
        p = evaluate.finish(f, S)
        f = p.sum(dim, keepdim=True)
    elif evaluate.mode == "log":
        p = flush_floor(p, inplace=buffers)
    return p, f, c, iters


def _linear_finish_ok(eps, blocked=False):
    # See EntmaxEvaluator.finish: the step^2 error bound needs alpha <= 3/2. With blocked tests the answer
    # for a tensor alpha stays on the device (a 0-d bool tensor), read together with the next test.
    if isinstance(eps, torch.Tensor):
        return (eps <= 0.5).all() if blocked else bool((eps <= 0.5).all())
    return eps <= 0.5


# ---------------------------------------------------------------- entmax: differentiable pieces


def _entmax_slopes(Y, alpha, dim):
    """``g = Y ** (2 - alpha)`` on the support, 0 elsewhere (no autograd, fast ops only)."""
    if not isinstance(alpha, torch.Tensor):
        a = float(alpha)
        if a == 2.0:
            return torch.sign(Y)
        if a == 1.5:  # sqrt(0) takes a slow path: take sqrt(1) there and mask
            live = torch.sign(Y)
            return torch.sqrt(torch.sub(1, live).add_(Y)).mul_(live)
        if a < 2.0:
            return torch.pow(Y, 2.0 - a)
    # 0 ** 0 = 1 (alpha = 2 rows) and 0 ** negative = inf must both become 0;
    # so must the inf of a subnormal Y at alpha > 2 (zero to working precision).
    g = torch.pow(Y, 2 - alpha).mul_(torch.sign(Y))
    return g.nan_to_num_(nan=0.0, posinf=0.0)


def entmax_backward(Y, alpha, dY, dim, need_alpha):
    """Vector-Jacobian products of entmax in ``X`` and ``alpha``, from the output ``Y``.

    With ``g = Y ** (2 - alpha)`` on the support and ``q = g / sum(g)``:
    ``dX = g dY - q sum(g dY)``. For ``alpha``, differentiating
    ``log p_i = log1p(eps (z_i - c)) / eps`` at fixed ``c`` gives
    ``d log p_i / d eps = -l_i^2 psi(eps l_i)`` with ``l = log p`` and
    ``psi(x) = (x + expm1(-x)) / x^2``; the constraint ``sum p = 1`` adds
    ``-q sum_j p_j (d log p_j / d eps)``. This equals the textbook
    ``(p - q) / eps^2 - (p log p - q sum p log p) / eps`` but does not cancel
    catastrophically as ``alpha -> 1`` (where it tends to
    ``-p (l^2 - sum p l^2) / 2``).

    Without autograd recording (the usual backward) a fast path is taken,
    with in-place ops and 0/1 masks instead of ``torch.where``. For
    ``|alpha - 1|`` large enough the ``alpha`` gradient is assembled from six
    row sums (``-(g - p + eps p l) / eps^2`` per entry, whose rounding error
    ``~eps_mach / eps^2`` is negligible there); otherwise entry by entry, with
    the series of ``psi`` where ``|eps l|`` is small. When recording (double
    backward) only plain NaN-free differentiable ops are used.
    """
    if torch.is_grad_enabled() and (Y.requires_grad or dY.requires_grad or getattr(alpha, "requires_grad", False)):
        return _entmax_backward_differentiable(Y, alpha, dY, dim, need_alpha)
    if isinstance(alpha, torch.Tensor) and alpha.numel() == 1 and not tests_in_blocks(Y):
        alpha = float(alpha)  # one alpha for all rows: the Python-number fast paths apply
    eps = alpha - 1 if isinstance(alpha, torch.Tensor) else float(alpha) - 1.0
    g = _entmax_slopes(Y, alpha, dim)
    G = g.sum(dim, keepdim=True)
    G = torch.where(G > 0, G, torch.ones_like(G))
    dX = torch.mul(g, dY)
    gdY = dX.sum(dim, keepdim=True)
    dX.addcmul_(g, gdY / G, value=-1)
    if not need_alpha:
        return dX, None
    ell = torch.sub(1, torch.sign(Y)).add_(Y).log_()  # log Y, with log(1) = 0 where Y = 0
    # Off the CPU a tensor alpha is not read back to choose: the entry-by-entry form is exact for every alpha.
    if isinstance(eps, torch.Tensor):
        eps_min = 0.0 if tests_in_blocks(Y) else float(eps.abs().min())
    else:
        eps_min = abs(eps)
    if eps_min >= _SUMS_ALPHA_GRAD_EPS.get(Y.dtype, 1.0):
        # sum_i w_i p_i k_i = -(sum w g - sum w p + eps sum w p l) / eps^2 for w = dY and w = 1
        pl = ell.mul_(Y)
        s_pl, s_dY_pl = pl.sum(dim, keepdim=True), torch.linalg.vecdot(dY, pl, dim=dim).unsqueeze(dim)
        s_p, s_dY_p = Y.sum(dim, keepdim=True), torch.linalg.vecdot(dY, Y, dim=dim).unsqueeze(dim)
        sum_pk = -(G - s_p + eps * s_pl) / (eps * eps)
        sum_dY_pk = -(gdY - s_dY_p + eps * s_dY_pl) / (eps * eps)
        return dX, sum_dY_pk - (gdY / G) * sum_pk
    # Entry by entry: p k = -p l^2 psi(x) near x = eps l = 0 (series), else
    # -(g - p + p x) / eps^2. Rows with |eps| below 1e-6 only meet the series
    # (|x| <= 1e-6 * 745 then), so their eps is replaced in the other branch,
    # which must stay finite: it is multiplied by a 0 mask, not selected.
    delta = _PSI_SMALL.get(Y.dtype, _PSI_SMALL[torch.float32])
    eps_far = torch.where(eps.abs() < 1e-6, torch.ones_like(eps), eps) if isinstance(eps, torch.Tensor) else eps
    if not isinstance(eps, torch.Tensor) and abs(eps) < 1e-6:
        eps_far = 1.0
    x = ell * eps
    pk = torch.mul(Y, x).add_(g).sub_(Y).div_(-(eps_far * eps_far))  # the far form
    near = x.abs().neg_().add_(delta).clamp_(min=0).sign_()  # 1 where |x| < delta
    series = _horner(x.clamp_(-delta, delta), _PSI).mul_(ell).mul_(ell).mul_(Y).neg_()
    pk.add_(series.sub_(pk).mul_(near))
    sum_pk = pk.sum(dim, keepdim=True)
    sum_dY_pk = torch.linalg.vecdot(dY, pk, dim=dim).unsqueeze(dim)
    return dX, sum_dY_pk - (gdY / G) * sum_pk


# From these |alpha - 1| on, the alpha gradient is assembled from row sums.
_SUMS_ALPHA_GRAD_EPS = {torch.float32: 0.25, torch.float64: 1e-2}


def _entmax_backward_differentiable(Y, alpha, dY, dim, need_alpha):
    on = Y > 0
    one = torch.ones_like(Y)
    zero = torch.zeros_like(Y)
    ell = torch.where(on, torch.log(torch.where(on, Y, one)), zero)
    eps = alpha - 1 if isinstance(alpha, torch.Tensor) else float(alpha) - 1.0
    g = torch.exp(ell * (1 - eps))
    # alpha > 2 sends g = p ** (2 - alpha) to inf for denormal p; such entries
    # are zero to working precision and are left out rather than poison q.
    on = on & torch.isfinite(g)
    g = torch.where(on, g, zero)
    G = g.sum(dim, keepdim=True)
    q = g / torch.where(G > 0, G, torch.ones_like(G))
    g_dY = g * dY
    dX = g_dY - q * g_dY.sum(dim, keepdim=True)
    if not need_alpha:
        return dX, None
    x = ell * eps
    # -l^2 psi(x) p, via the series near x = 0; far from 0 the equivalent
    # -(g - p + p x) / eps^2 needs no exp of large |x| (it reuses g).
    small = _small(x, _PSI_SMALL)
    xs = torch.where(small, x, zero)
    eps_safe = torch.where(eps == 0, torch.ones_like(eps), eps) if isinstance(eps, torch.Tensor) else (eps or 1.0)
    near = -Y * ell * ell * _horner(xs, _PSI)
    far = -(g - Y + Y * x) / (eps_safe * eps_safe)
    pk = torch.where(on, torch.where(small, near, far), zero)
    d_alpha = (dY * pk).sum(dim, keepdim=True) - (dY * q).sum(dim, keepdim=True) * pk.sum(dim, keepdim=True)
    return dX, d_alpha


def entmax_closed_form_finish(z, p, dim, alpha):
    """Exact, differentiable threshold on the (fixed) support of ``p`` for ``alpha`` in ``{2, 1.5}``.

    sparsemax: ``sum_S (1 + z_i - c) = 1``; 1.5-entmax: ``sum_S (v_i - t)^2 = 1``
    with ``v = 1 + z/2``, ``t = c/2``, solved as ``t = mean(v) - sqrt((1 - M2)/n)``
    (``M2`` the centred sum of squares, which avoids the cancellation of the
    textbook quadratic formula). Used by the export path, where the support
    comes from the detached solver and the derivatives from this formula.
    Masks are 0/1 factors (``sign``), which are cheaper than ``torch.where``.
    """
    live = torch.sign(p.detach())
    n = live.sum(dim, keepdim=True).clamp(min=1)
    zs = z.clamp(min=-_BIG) * live  # -inf scores are off the support: 0, with 0 gradient
    if alpha == 2.0:
        c = (n + zs.sum(dim, keepdim=True) - 1) / n
        return torch.clamp(1 + z - c, min=0)
    v = live + zs / 2
    mean = v.sum(dim, keepdim=True) / n
    M2 = ((v - mean) * live).square().sum(dim, keepdim=True)
    t = mean - torch.sqrt(torch.clamp((1 - M2) / n, min=0))
    return torch.clamp(1 + z / 2 - t, min=0).square()


def entmax_log_p(z, c, eps):
    """Differentiable ``log p(c)`` (``-inf`` off the support), stable in ``eps``."""
    finite = torch.isfinite(z)
    # -inf scores are replaced before multiplying by eps: the gradient of
    # w * eps in eps is w, and 0 * -inf would be nan even where unused.
    w = torch.where(finite, z, torch.zeros_like(z)) - c
    u = w * eps
    live = (u > -1) & finite
    us = torch.where(live, u, torch.zeros_like(u))
    ws = torch.where(live, w, torch.zeros_like(w))
    return torch.where(live, ws * log1p_over_x(us), torch.full_like(w, -math.inf)), live, us


def entmax_differentiable_eval(z, c, eps, dim):
    """``(p, f, S)`` at ``c`` as differentiable functions of ``z``, ``c`` and ``eps``.

    Every first and second derivative is NaN-free: off the support the base is
    replaced by 1 before the power (whose slope is infinite at 0) and the
    result masked. For a Python ``alpha`` far from 1 the power is taken
    directly; otherwise through :func:`entmax_log_p`, which stays accurate
    (values and ``eps``-derivatives) as ``alpha -> 1``.
    """
    if isinstance(eps, torch.Tensor) or abs(eps) < 0.25:
        ell, live, us = entmax_log_p(z, c, eps)
        p = torch.exp(ell)
        g = torch.where(live, p / (1 + us), torch.zeros_like(p))
    else:
        b = z * eps - (c * eps - 1)
        if eps > 0:
            b = torch.clamp(b, min=0)  # also maps -inf scores to 0, with 0 gradient
        live = torch.sign(b.detach())
        b_safe = b + (1 - live)  # (1 - live) is 0 on the support: b itself, exactly
        p = b_safe.pow(1 / eps) * live
        g = p / b_safe
    return p, p.sum(dim, keepdim=True), g.sum(dim, keepdim=True)


def entmax_differentiable_step(f, S, eps):
    """The Newton step of :func:`entmax_newton_step`, differentiable and NaN-free."""
    ok = f > 0
    lf = torch.log(torch.where(ok, f, torch.ones_like(f)))
    S = torch.where(ok, S, torch.ones_like(S))
    step = lf * expm1_over_x(lf * eps) * torch.exp(lf * (1 - eps)) / S
    return torch.where(ok, step, torch.zeros_like(step))


# ---------------------------------------------------------------- normmax


class NormmaxEvaluator:
    """For ``v = [z + s]_+`` return ``(v, F = sum v^k, F' / k = sum v^(k-1))``, ``k = alpha/(alpha-1)``."""

    def __init__(self, z, alpha, dim):
        self.z = z
        self.dim = dim
        self.k = alpha / (alpha - 1)
        self.pow = not isinstance(alpha, torch.Tensor)
        self.tiny = torch.finfo(z.dtype).tiny

    def __call__(self, s):
        v = torch.clamp(self.z + s, min=0)
        if self.pow and self.k == 2.0:
            return v, v.square().sum(self.dim, keepdim=True), v.sum(self.dim, keepdim=True)
        vk = v.pow(self.k)  # k > 1 (also per row): 0 stays 0
        dv = torch.div(vk, v.clamp(min=self.tiny))
        return v, vk.sum(self.dim, keepdim=True), dv.sum(self.dim, keepdim=True)


def normmax_newton_step(F, D, k):
    """Newton step on ``H(s) = F(s) ** (1/k) - 1`` (convex increasing in ``s``).

    ``H' = F ** (1/k - 1) * D`` with ``D = F'/k``; started right of the root
    (``s = 1``, where the top entry alone has ``v = 1``) it decreases
    monotonically to the root.
    """
    valid = F > 0
    lF = torch.log(torch.where(valid, F, torch.ones_like(F)))
    D = torch.where(D > 0, D, torch.ones_like(D))
    return torch.where(valid, torch.expm1(lF / k) * torch.exp(lF * (1 - 1 / k)) / D, torch.zeros_like(F))


def solve_normmax(z, alpha, dim, n_iter, early_exit):
    """Find ``s`` with ``sum [z + s]_+^k = 1``; return ``(v, s, iterations)``.

    Bracket ``[d ** -(alpha - 1), 1]`` (at the lower end every ``v^k <= 1/d``);
    Newton from the right end, bisection whenever a step leaves the bracket.
    Stopping rule as in :func:`solve_entmax`, on ``F = sum v^k``.
    """
    evaluate = NormmaxEvaluator(z, alpha, dim)
    zero = row_zeros(z, dim)
    d = z.size(dim)
    mach = dtype_eps(z.dtype)
    lo = zero + (torch.exp(-(alpha - 1) * math.log(d)) if isinstance(alpha, torch.Tensor) else d ** -(alpha - 1))
    hi = zero + 1
    s = hi
    done = torch.zeros_like(zero, dtype=torch.bool)
    iters = 0
    for _ in range(n_iter):
        iters += 1
        v, F, D = evaluate(s)
        right = F >= 1
        hi = torch.where(right, s, hi)
        lo = torch.where(right, lo, s)
        step = normmax_newton_step(F, D, evaluate.k)
        cand = s - step
        newton = (cand > lo) & (cand < hi)
        tol = _STEP_ULPS * mach * s.abs()
        converged = ((F - 1).abs() <= _RESIDUAL_ULPS * mach) | (hi - lo <= tol) | (newton & (step.abs() <= tol))
        converged = converged | (F == 0)
        done = done | converged
        if early_exit and bool(done.all()):
            break
        s = torch.where(done, s, torch.where(newton, cand, (lo + hi) / 2))
    return v, s, iters


def normmax_output(v, alpha, dim):
    """``p = u / sum(u)`` with ``u = v ** (1 / (alpha - 1))`` (0 for an all-zero row)."""
    r = 1 / (alpha - 1)
    on = v > 0
    v_safe = torch.where(on, v, torch.ones_like(v))  # no infinite slope of v ** r at 0
    if isinstance(alpha, torch.Tensor):
        u = torch.where(on, torch.exp(r * torch.log(v_safe)), torch.zeros_like(v))
    else:
        u = v if r == 1.0 else torch.where(on, v_safe.pow(r), torch.zeros_like(v))
    total = u.sum(dim, keepdim=True)
    return u / torch.where(total > 0, total, torch.ones_like(total))


def normmax_backward(Y, alpha, dY, dim, need_alpha):
    """Vector-Jacobian products of normmax in ``X`` and ``alpha``, from the output ``Y``.

    With ``u = U p`` the unnormalised solution (``U = (sum p^alpha)^(-1/alpha)``,
    so that ``sum u^alpha = 1``), ``b = p^(2 - alpha)``, ``B = sum b`` and
    ``K = (sum p^alpha)^((alpha - 1)/alpha) / (alpha - 1)``, the Jacobian is the
    symmetric ``K (diag(b) - b p^T - p b^T + B p p^T)``. For ``alpha``: with
    ``v = u^(alpha - 1)`` and ``k = alpha/(alpha - 1)``, the threshold moves by
    ``s' = sum u^alpha log v / ((alpha - 1)^2 k U)`` and
    ``du/dalpha = u (-log v / (alpha - 1)^2 + s' / ((alpha - 1) v))``, then
    ``dp = (du - p sum du) / U``.
    """
    on = Y > 0
    one = torch.ones_like(Y)
    zero = torch.zeros_like(Y)
    ell = torch.where(on, torch.log(torch.where(on, Y, one)), zero)
    am1 = alpha - 1
    b = torch.where(on, torch.exp(ell * (1 - am1)), zero)
    on = on & torch.isfinite(b)
    b = torch.where(on, b, zero)
    pa = torch.where(on, torch.exp(ell * alpha), zero)
    A = pa.sum(dim, keepdim=True)
    A = torch.where(A > 0, A, torch.ones_like(A))
    K = torch.exp(torch.log(A) * (am1 / alpha)) / am1
    B = b.sum(dim, keepdim=True)
    dY_b = (dY * b).sum(dim, keepdim=True)
    dY_p = (dY * Y).sum(dim, keepdim=True)
    dX = K * (dY * b - Y * dY_b - b * dY_p + B * Y * dY_p)
    if not need_alpha:
        return dX, None
    logU = -torch.log(A) / alpha
    log_u = torch.where(on, ell + logU, zero)
    U = torch.exp(logU)
    u = Y * U
    log_v = am1 * log_u
    ua = torch.where(on, torch.exp(alpha * log_u), zero)
    k = alpha / am1
    s_prime = (ua * log_v).sum(dim, keepdim=True) / (am1 * am1 * k * U)
    # u / v = u^(2 - alpha) = U^(2 - alpha) b
    u_over_v = b * torch.exp(logU * (1 - am1))
    du = torch.where(on, -u * log_v / (am1 * am1) + u_over_v * s_prime / am1, zero)
    dp = (du - Y * du.sum(dim, keepdim=True)) / U
    return dX, (dY * dp).sum(dim, keepdim=True)


# ---------------------------------------------------------------- budget


def solve_budget(z, budget, dim, n_iter, early_exit, buffers=True):
    """Find ``t`` with ``sum clamp(z - t, 0, 1) = budget``; return ``(p, t, iterations)``.

    The sum is piecewise linear and decreasing in ``t`` with slope ``-|A|``
    (``A`` the active set ``0 < z - t < 1``), so a Newton step is exact once
    ``A`` is right. Bracket ``[min_finite(z) - 1, -budget/d]`` (every finite
    entry is 1 at the lower end, every entry at most ``budget/d`` at the upper
    one); bisection whenever a step leaves it or the slope is 0. Stopping rule
    and ``early_exit``/``buffers`` as in :func:`solve_entmax`. The entries of
    ``p`` lie in ``[0, 1]``, so ``sign(p)`` counts ``p > 0`` and ``floor(p)``
    counts ``p = 1``: fast, allocation-free substitutes for comparisons.
    """
    zero = row_zeros(z, dim)
    d = z.size(dim)
    mach = dtype_eps(z.dtype)
    lo = torch.nan_to_num(z, neginf=0.0).amin(dim, keepdim=True) - 1
    hi = zero - budget / d
    t = (lo + hi) / 2
    new = (lambda: torch.empty_like(z)) if buffers else (lambda: None)
    out_p, out_count = new(), new()
    done = torch.zeros_like(zero, dtype=torch.bool)
    iters = 0
    for _ in range(n_iter):
        iters += 1
        diff = torch.sub(z, t, out=out_p)
        p = diff.clamp_(0, 1) if buffers else diff.clamp(0, 1)
        F = p.sum(dim, keepdim=True)
        A = torch.sign(p, out=out_count).sum(dim, keepdim=True) - torch.floor(p, out=out_count).sum(dim, keepdim=True)
        left = F >= budget
        lo = torch.where(left, t, lo)
        hi = torch.where(left, hi, t)
        step = (F - budget) / A.clamp(min=1)
        cand = t + step
        # Strictly inside the bracket (or the zero step of a solved row): F is piecewise linear, and a Newton
        # step from one side of a kink can land back on the bracket's other end, where the step from there
        # returns, a cycle that never reaches the root (budget 1 on 3 * [0, .25, .5, .75, 1] cycled between
        # t = -1 and t = -0.75 around the root -0.875). Bisection breaks it.
        newton = (A > 0) & (((cand > lo) & (cand < hi)) | (step == 0))
        if early_exit:
            tol = _STEP_ULPS * mach * (t.abs() + 1)
            done |= (F - budget).abs() <= _RESIDUAL_ULPS * mach * (budget + 1)
            done |= hi - lo <= tol
            if bool(done.all()):
                break
        t = torch.where(done, t, torch.where(newton, cand, (lo + hi) / 2))
    return p, t, iters


def budget_closed_form_finish(z, p, budget, dim, t):
    """Exact ``t = (sum_A z + |{p = 1}| - budget) / |A|`` on the active set ``A`` of ``p``.

    Differentiable in ``z`` and ``budget`` (the active set comes from the
    detached ``p``); rows without an active entry are already exact (0/1
    entries) and keep the solver's ``t``.
    """
    p = p.detach()
    ones = torch.floor(p)
    active = torch.sign(p) - ones
    n = active.sum(dim, keepdim=True)
    za = (z.clamp(min=-_BIG) * active).sum(dim, keepdim=True)  # -inf scores are never active
    exact = (za + ones.sum(dim, keepdim=True) - budget) / n.clamp(min=1)
    return torch.clamp(z - torch.where(n > 0, exact, t), 0, 1)


def budget_backward(Y, dY, dim, need_budget):
    """``dX = s dY - s sum(s dY) / |A|``; ``d budget = sum_A dY / |A|`` (``s`` = active indicator)."""
    s = torch.sign(Y) - torch.floor(Y)  # 1 exactly where 0 < Y < 1
    n = s.sum(dim, keepdim=True).clamp(min=1)
    mean = (s * dY).sum(dim, keepdim=True) / n
    dX = s * (dY - mean)
    return dX, (mean if need_budget else None)


# ---------------------------------------------------------------- compositions used by root_finding


def softmax_or_zero(X, dim, check=True):
    """``torch.softmax``, except that an all ``-inf`` slice gives zeros (and zero gradient), not nan."""
    valid = X.amax(dim=dim, keepdim=True) > -float("inf")
    if check and bool(valid.all()):
        return torch.softmax(X, dim)
    # Double where: the masked rows must not even reach softmax's backward.
    safe = torch.softmax(torch.where(valid, X, torch.zeros_like(X)), dim)
    return torch.where(valid, safe, torch.zeros_like(safe))


def entmax_forward(X, alpha, dim, n_iter, ensure_sum_one, early_exit):
    """Solve alpha-entmax (no autograd); return ``(P, iterations)``."""
    z, _ = shift_by_max(X, dim)
    # One alpha for every row: solve with the Python number (faster formulas), except where reading it
    # would make the host wait for the device (see tests_in_blocks).
    blocked = early_exit and tests_in_blocks(X)
    # Without an early exit outside vmap (the fixed count off the CPU) nothing is read back, alpha included.
    reads_allowed = (early_exit and not blocked) or wrapped(X)
    single = isinstance(alpha, torch.Tensor) and alpha.numel() == 1 and not wrapped(alpha) and reads_allowed
    eps, inv_eps, big = entmax_eps_parts(float(alpha) if single else alpha)
    in_vmap = wrapped(z)
    ez = scaled_scores(z, eps, inplace=not in_vmap)
    p, f, _, iters = solve_entmax(ez, eps, inv_eps, big, dim, n_iter, early_exit, buffers=not in_vmap)
    if ensure_sum_one:
        p = p.div_(torch.where(f > 0, f, torch.ones_like(f)))
    if isinstance(alpha, torch.Tensor):
        is_one = alpha == 1
        if not early_exit or blocked or bool(is_one.any()):
            p = torch.where(is_one, softmax_or_zero(X, dim, check=early_exit and not blocked), p)
    return p, iters


def entmax_export(X, alpha, dim, n_iter, ensure_sum_one):
    """alpha-entmax in plain differentiable ops with a fixed number of steps."""
    z, _ = shift_by_max(X, dim)
    eps, inv_eps, big = entmax_eps_parts(alpha)
    detach = (lambda t: t.detach()) if isinstance(alpha, torch.Tensor) else (lambda t: t)
    ez = scaled_scores(z.detach(), detach(eps))
    p_d, _, c_d, _ = solve_entmax(
        ez, detach(eps), detach(inv_eps), big, dim, n_iter, early_exit=False, buffers=not wrapped(z)
    )
    if not isinstance(alpha, torch.Tensor) and alpha in (2.0, 1.5):
        # Closed form on the (detached) support: exact, with exact derivatives.
        p = entmax_closed_form_finish(z, p_d.detach(), dim, alpha)
    else:
        # Value-neutral Newton steps: the output keeps the value at the solver's
        # c, while the derivatives are those of two Newton steps, which agree
        # with the implicit function to second order.
        c = c_d
        for _ in range(2):
            _, f, S = entmax_differentiable_eval(z, c, eps, dim)
            step = entmax_differentiable_step(f, S, eps)
            c = c + (step - step.detach())
        p = entmax_differentiable_eval(z, c, eps, dim)[0]
    if ensure_sum_one:
        f = p.sum(dim, keepdim=True)
        p = p / torch.where(f > 0, f, torch.ones_like(f))
    if isinstance(alpha, torch.Tensor):
        # softmax's value, but the gradient of the entmax branch, which (unlike
        # torch.softmax's) also reaches alpha; p - p.detach() is exactly 0.
        p = torch.where(alpha == 1, softmax_or_zero(X, dim, check=False).detach() + (p - p.detach()), p)
    return p


def normmax_forward(X, alpha, dim, n_iter, early_exit):
    z, _ = shift_by_max(X, dim)
    v, _, iters = solve_normmax(z, alpha, dim, n_iter, early_exit)
    return normmax_output(v, alpha, dim), iters


def normmax_export(X, alpha, dim, n_iter):
    z, _ = shift_by_max(X, dim)
    a_d = alpha.detach() if isinstance(alpha, torch.Tensor) else alpha
    _, s, _ = solve_normmax(z.detach(), a_d, dim, n_iter, early_exit=False)
    k = alpha / (alpha - 1)
    for _ in range(2):  # value-neutral differentiable Newton steps, as for entmax
        v = torch.clamp(z + s, min=0)
        on = v > 0
        log_v = torch.log(torch.where(on, v, torch.ones_like(v)))
        vk = torch.where(on, torch.exp(k * log_v), torch.zeros_like(v))
        F = vk.sum(dim, keepdim=True)
        D = torch.where(on, vk / torch.where(on, v, torch.ones_like(v)), torch.zeros_like(v)).sum(dim, keepdim=True)
        ok = (F > 0) & (D > 0)
        lF = torch.log(torch.where(ok, F, torch.ones_like(F)))
        step = torch.expm1(lF / k) * torch.exp(lF * (1 - 1 / k)) / torch.where(ok, D, torch.ones_like(D))
        step = torch.where(ok, step, torch.zeros_like(step))
        s = s - (step - step.detach())
    return normmax_output(torch.clamp(z + s, min=0), alpha, dim)


def budget_forward(X, budget, dim, n_iter, ensure_sum_one, early_exit):
    z, _ = shift_by_max(X, dim)
    p, t, iters = solve_budget(z, budget, dim, n_iter, early_exit, buffers=not wrapped(z))
    if ensure_sum_one:
        p = budget_closed_form_finish(z, p, budget, dim, t)
    return p, iters


def budget_export(X, budget, dim, n_iter):
    z, _ = shift_by_max(X, dim)
    b_d = budget.detach() if isinstance(budget, torch.Tensor) else budget
    p, t, _ = solve_budget(z.detach(), b_d, dim, n_iter, early_exit=False, buffers=not wrapped(z))
    # The closed form on the (detached) active set is exact, derivatives included.
    return budget_closed_form_finish(z, p, budget, dim, t)
