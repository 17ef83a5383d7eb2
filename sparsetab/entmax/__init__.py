"""Sparse probability mappings: sparsemax, 1.5-entmax and alpha-entmax.

Drop-in alternatives to softmax that can assign exactly zero probability.
All of them solve, for every slice ``x`` along ``dim``,

``p = argmax_{p in simplex} p . x + H^T_alpha(p)``

with the Tsallis entropy ``H^T_alpha``: ``alpha = 2`` gives sparsemax
(``argmin_{p in simplex} ||p - x||^2``), ``alpha = 1.5`` gives 1.5-entmax and
``alpha -> 1`` recovers softmax.

- :func:`sparsemax`, :func:`entmax15` (and modules :class:`Sparsemax`,
  :class:`Entmax15`): exact, by a sort-free threshold iteration (Michelot 1986) in
  training; ``training=False`` uses the sort-based closed form; ``k`` only sizes a
  partial-sort fallback and never changes the result.
- :func:`entmax_bisect` (module :class:`EntmaxBisect`): any ``alpha > 0`` by
  root finding, differentiable in ``alpha`` too; :func:`sparsemax_bisect` is its
  ``alpha = 2`` case; :func:`normmax_bisect` and :func:`budget_bisect` as in
  entmax 1.3 (submodule :mod:`~sparsetab.entmax.root_finding`).
- Fenchel-Young losses of each map (submodule :mod:`~sparsetab.entmax.losses`):
  :func:`sparsemax_loss`, :func:`entmax15_loss`, :func:`entmax_bisect_loss`, ...
  and their modules, with ``ignore_index`` and ``reduction``.

References
----------
Martins, A. F. T. & Astudillo, R. F. (2016). From softmax to sparsemax: a
sparse model of attention and multi-label classification. ICML.

Peters, B., Niculae, V. & Martins, A. F. T. (2019). Sparse sequence-to-sequence
models. ACL.

Correia, G. M., Niculae, V. & Martins, A. F. T. (2019). Adaptively sparse
transformers. EMNLP.

Blondel, M., Martins, A. F. T. & Niculae, V. (2020). Learning with
Fenchel-Young losses. JMLR 21.
"""

from .activations import Entmax15, Entmax15Function, Sparsemax, SparsemaxFunction, entmax15, sparsemax
from .losses import (
    Entmax15Loss,
    EntmaxBisectLoss,
    FenchelYoungLossFunction,
    NormmaxBisectLoss,
    SparsemaxBisectLoss,
    SparsemaxLoss,
    entmax15_loss,
    entmax_bisect_loss,
    normmax_bisect_loss,
    sparsemax_bisect_loss,
    sparsemax_loss,
)
from .root_finding import (
    BudgetBisect,
    BudgetBisectFunction,
    EntmaxBisect,
    EntmaxBisectFunction,
    NormmaxBisect,
    NormmaxBisectFunction,
    SparsemaxBisect,
    SparsemaxBisectFunction,
    budget_bisect,
    entmax_bisect,
    normmax_bisect,
    sparsemax_bisect,
)

__all__ = [
    "sparsemax",
    "entmax15",
    "Sparsemax",
    "Entmax15",
    "SparsemaxFunction",
    "Entmax15Function",
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
