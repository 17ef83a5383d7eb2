"""sparsetab: TabNet with sparse entmax-family attention, as scikit-learn estimators.

Public names: :class:`SparseTabNetClassifier`, :class:`SparseTabNetRegressor`,
:class:`SparseTabNetPretrainer` (self-supervised pretraining), the display
classes of :mod:`sparsetab.inspection` and its :func:`feature_groups_from_transformer`,
:func:`load_model` (for files written by ``save_model``) and ``__version__``. Data loaders live in
:mod:`sparsetab.datasets`, the sparse maps in :mod:`sparsetab.entmax` and the torch model in
:mod:`sparsetab.network`. The layers of the package and what each module holds are described in
docs/architecture.md.
"""

from ._version import __version__
from .estimators import SparseTabNetClassifier, SparseTabNetRegressor
from .inspection import (
    FeatureImportanceDisplay,
    FeatureMaskDisplay,
    SampleExplanationDisplay,
    StepSummaryDisplay,
    TrainingHistoryDisplay,
    feature_groups_from_transformer,
)
from .io import load_model
from .pretraining import SparseTabNetPretrainer

__all__ = [
    "FeatureImportanceDisplay",
    "FeatureMaskDisplay",
    "SampleExplanationDisplay",
    "SparseTabNetClassifier",
    "SparseTabNetPretrainer",
    "SparseTabNetRegressor",
    "StepSummaryDisplay",
    "TrainingHistoryDisplay",
    "__version__",
    "feature_groups_from_transformer",
    "load_model",
]
