"""sparsetab: TabNet with sparse entmax-family attention, as scikit-learn estimators.

Public names: :class:`SparseTabNetClassifier`, :class:`SparseTabNetRegressor` and
``__version__``. Data loaders live in :mod:`sparsetab.datasets`, the sparse maps in
:mod:`sparsetab.entmax` and the torch model in :mod:`sparsetab.network`.
"""

__version__ = "0.1.0"  # before the imports: submodules record it in exported files

from .estimators import SparseTabNetClassifier, SparseTabNetRegressor  # noqa: E402
from .inspection import (  # noqa: E402
    FeatureImportanceDisplay,
    FeatureMaskDisplay,
    SampleExplanationDisplay,
    TrainingHistoryDisplay,
)

__all__ = [
    "FeatureImportanceDisplay",
    "FeatureMaskDisplay",
    "SampleExplanationDisplay",
    "SparseTabNetClassifier",
    "SparseTabNetRegressor",
    "TrainingHistoryDisplay",
    "__version__",
]
