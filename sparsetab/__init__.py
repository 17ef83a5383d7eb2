"""sparsetab: TabNet with sparse entmax-family attention, as scikit-learn estimators.

Public names: :class:`SparseTabNetClassifier`, :class:`SparseTabNetRegressor`,
:class:`SparseTabNetPretrainer` (self-supervised pretraining), the display
classes of :mod:`sparsetab.inspection`, :func:`load_model` (for files written by
``save_model``) and ``__version__``. Data loaders live in :mod:`sparsetab.datasets`, the sparse maps in
:mod:`sparsetab.entmax` and the torch model in :mod:`sparsetab.network`.
"""

__version__ = "0.1.0"  # before the imports: submodules record it in exported files

from ._model_file import load_model  # noqa: E402
from .estimators import SparseTabNetClassifier, SparseTabNetRegressor  # noqa: E402
from .inspection import (  # noqa: E402
    FeatureImportanceDisplay,
    FeatureMaskDisplay,
    SampleExplanationDisplay,
    TrainingHistoryDisplay,
)
from .pretraining import SparseTabNetPretrainer  # noqa: E402

__all__ = [
    "FeatureImportanceDisplay",
    "FeatureMaskDisplay",
    "SampleExplanationDisplay",
    "SparseTabNetClassifier",
    "SparseTabNetPretrainer",
    "SparseTabNetRegressor",
    "TrainingHistoryDisplay",
    "__version__",
    "load_model",
]
