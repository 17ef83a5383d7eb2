"""sparsetab: TabNet with sparse entmax-family attention, as scikit-learn estimators.

Public names: :class:`SparseTabNetClassifier`, :class:`SparseTabNetRegressor` and
``__version__``. Data loaders live in :mod:`sparsetab.datasets`, the sparse maps in
:mod:`sparsetab.entmax` and the torch model in :mod:`sparsetab.network`.
"""

from .estimators import SparseTabNetClassifier, SparseTabNetRegressor

__version__ = "0.1.0"

__all__ = ["SparseTabNetClassifier", "SparseTabNetRegressor", "__version__"]
