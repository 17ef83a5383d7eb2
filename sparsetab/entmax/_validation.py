"""Argument checks shared by the maps and losses of :mod:`sparsetab.entmax`.

The one copy of the checks on the scores ``X``, the dimension ``dim``, the
partial-sort size ``k``, the iteration cap ``n_iter`` and of the rule that
picks the dtype a map computes in. Every check raises with a message that
names the argument and the value it got.
"""

import numbers

import torch
from torch import Tensor

__all__ = [
    "check_dim",
    "check_input",
    "check_input_scriptable",
    "check_k",
    "check_n_iter",
    "check_positive_int",
    "compute_dtype",
    "propagate_nan_rows",
]

# entmax 1.3's SparsemaxBisect passes n_iter=None and means this.
_DEFAULT_N_ITER = 50


def check_dim(dim):
    """Check that ``dim`` is an int (not a bool) and return it as one.

    Parameters
    ----------
    dim : int
        A dimension index; its range is checked against a tensor by
        :func:`check_input`.

    Returns
    -------
    int
        ``dim`` as a Python int.

    Raises
    ------
    TypeError
        If ``dim`` is not an integer, or is a bool.
    """
    # bool is an int subclass, but dim=True is almost certainly a mistake.
    if not isinstance(dim, numbers.Integral) or isinstance(dim, bool):
        raise TypeError(f"dim must be an int, got dim={dim!r}")
    return int(dim)


def check_input_scriptable(X: Tensor, dim: int) -> None:
    """Check the scores ``X`` along an int ``dim``, in TorchScript-compatible code.

    The part of :func:`check_input` that the exportable (evaluation-mode)
    modules run inside ``torch.jit.script``, where ``X`` is known to be a
    tensor and ``dim`` an int.

    Parameters
    ----------
    X : torch.Tensor
        Scores, any shape.
    dim : int
        Dimension to normalise over.

    Raises
    ------
    TypeError
        If ``X`` is not of a floating-point dtype.
    ValueError
        If ``X`` is 0-d or has size 0 along ``dim``.
    IndexError
        If ``dim`` is out of range for ``X`` (raised by ``X.size(dim)``).
    """
    if not X.is_floating_point():
        raise TypeError(f"X must be a floating-point tensor, got dtype={X.dtype}")
    if X.dim() == 0:
        raise ValueError("X must have at least one dimension to normalise over, got a 0-d tensor")
    if X.size(dim) == 0:
        raise ValueError(f"cannot normalise over dim={dim}: it has size 0")


def check_input(X, dim):
    """Check the scores ``X`` and the dimension ``dim`` a map normalises over.

    Parameters
    ----------
    X : torch.Tensor
        Scores of any shape with at least one dimension, floating point.
    dim : int
        Dimension to normalise over, negative values counting from the end.

    Returns
    -------
    int
        ``dim`` in ``range(X.dim())`` (negative values made non-negative).

    Raises
    ------
    TypeError
        If ``X`` is not a tensor or not of a floating-point dtype, or ``dim``
        is not an int.
    ValueError
        If ``X`` is 0-d or has size 0 along ``dim``.
    IndexError
        If ``dim`` is out of range for ``X``, as torch itself raises it.
    """
    if not isinstance(X, torch.Tensor):
        raise TypeError(f"X must be a torch.Tensor, got {type(X).__name__}")
    dim = check_dim(dim)
    check_input_scriptable(X, dim)
    return dim % X.dim()


def check_positive_int(value, name, allow_none=False):
    """Check that ``value`` is a positive integer (or ``None``, if allowed).

    Parameters
    ----------
    value : int or None
        The value to check; bools are refused.
    name : str
        The argument's name, used in the error message.
    allow_none : bool, default False
        Whether ``None`` is accepted (and returned as is).

    Returns
    -------
    int or None
        ``value`` as a Python int, or ``None``.

    Raises
    ------
    ValueError
        If ``value`` is not a positive integer (nor an allowed ``None``).
    """
    if allow_none and value is None:
        return None
    # bool is an int subclass, but k=True is almost certainly a mistake.
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) and value > 0:
        return int(value)
    extra = " or None" if allow_none else ""
    raise ValueError(f"{name} must be a positive integer{extra}, got {name}={value!r}")


def check_k(k):
    """Check the partial-sort size ``k`` of sparsemax and 1.5-entmax.

    Parameters
    ----------
    k : int or None
        A positive integer, or ``None`` for a full sort.

    Returns
    -------
    int or None
        ``k`` as a Python int, or ``None``.

    Raises
    ------
    ValueError
        If ``k`` is neither a positive integer nor ``None``.
    """
    return check_positive_int(k, "k", allow_none=True)


def check_n_iter(n_iter):
    """Check the iteration cap ``n_iter`` of the root-finding maps.

    Parameters
    ----------
    n_iter : int or None
        A positive integer, or ``None`` for the default of 50 (as entmax 1.3
        accepts).

    Returns
    -------
    int
        ``n_iter`` as a Python int.

    Raises
    ------
    ValueError
        If ``n_iter`` is neither a positive integer nor ``None``.
    """
    if n_iter is None:
        return _DEFAULT_N_ITER
    return check_positive_int(n_iter, "n_iter")


def compute_dtype(dtype: torch.dtype) -> torch.dtype:
    """The dtype a map of scores of ``dtype`` computes in.

    Half-precision cumulative sums and thresholds lose the support entirely
    on long rows (and are too coarse for a threshold search), so ``float16``
    and ``bfloat16`` are computed in ``float32``; other dtypes as they are.

    Parameters
    ----------
    dtype : torch.dtype
        Floating dtype of the scores.

    Returns
    -------
    torch.dtype
        ``torch.float32`` for half precision, else ``dtype``.
    """
    if dtype == torch.float16 or dtype == torch.bfloat16:
        return torch.float32
    return dtype


def propagate_nan_rows(P: Tensor, X: Tensor, dim: int) -> Tensor:
    """Set every slice of ``P`` whose scores hold a NaN to NaN.

    A NaN score has no place on the simplex: the maps answer such a slice with NaN
    everywhere, as ``torch.softmax`` does, instead of the finite but meaningless values
    (outside [0, 1] for some maps) a solver reaches around the NaN. ``-inf`` is not NaN
    and keeps its meaning (probability 0). Plain torch operations: exportable and
    scriptable.

    Parameters
    ----------
    P : torch.Tensor
        A map's output, same shape as ``X``.
    X : torch.Tensor
        The scores it was computed from.
    dim : int
        The dimension the map normalises along.

    Returns
    -------
    torch.Tensor
        ``P`` with the NaN slices filled with NaN, same shape and dtype.
    """
    return P.masked_fill(torch.isnan(X).any(dim=dim, keepdim=True), float("nan"))
