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

from . import activations, losses, root_finding

# Each submodule's __all__ is the one list of what it exports; the star imports
# re-export exactly those names, so no second list here can drift from it.
from .activations import *  # noqa: F403
from .losses import *  # noqa: F403
from .root_finding import *  # noqa: F403

__all__ = activations.__all__ + root_finding.__all__ + losses.__all__
