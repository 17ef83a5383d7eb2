"""Sparse probability mappings: sparsemax, 1.5-entmax and alpha-entmax.

Drop-in alternatives to softmax that can assign exactly zero probability.
All of them solve, for every slice ``x`` along ``dim``,

``p = argmax_{p in simplex} p . x + H^T_alpha(p)``

with the Tsallis entropy ``H^T_alpha``: ``alpha = 2`` gives sparsemax
(``argmin_{p in simplex} ||p - x||^2``), ``alpha = 1.5`` gives 1.5-entmax and
``alpha -> 1`` recovers softmax.

- :func:`sparsemax`, :func:`entmax15` (and modules :class:`Sparsemax`,
  :class:`Entmax15`): exact, sort-based, with optional partial sorting ``k``.
- :func:`entmax_bisect` (module :class:`EntmaxBisect`): any ``alpha > 1`` by
  bisection, differentiable in ``alpha`` too; :func:`sparsemax_bisect` is its
  ``alpha = 2`` case.

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

from .activations import Entmax15, Sparsemax, entmax15, sparsemax
from .root_finding import EntmaxBisect, entmax_bisect, sparsemax_bisect

__all__ = ["sparsemax", "entmax15", "Sparsemax", "Entmax15", "entmax_bisect", "sparsemax_bisect", "EntmaxBisect"]
