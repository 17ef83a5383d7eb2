"""Pictures of what a fitted sparsetab model looked at: feature masks, importances, training.

Four display objects in the style of scikit-learn's ``ConfusionMatrixDisplay``: ``__init__``
stores the data to draw, ``plot(ax=None, ...)`` draws it with matplotlib and keeps the artists
as attributes, and the ``from_estimator`` class method computes the data from a fitted
:class:`~sparsetab.SparseTabNetClassifier` or :class:`~sparsetab.SparseTabNetRegressor` (or a
:class:`~sklearn.pipeline.Pipeline` ending in one) and plots it.

- :class:`FeatureMaskDisplay`: heatmaps of each decision step's feature mask and of the
  aggregate mask, one row per sample.
- :class:`FeatureImportanceDisplay`: horizontal bars of the features sorted by importance.
- :class:`TrainingHistoryDisplay`: loss and validation score per epoch, the restored best epoch,
  and the learned alpha of each step for ``entmax_mode="adaptive"``.
- :class:`SampleExplanationDisplay`: one row's mask per decision step as grouped bars.

matplotlib is imported only when a figure is drawn; nothing is shown (no ``plt.show()``).
"""

from .feature_importance import FeatureImportanceDisplay
from .feature_mask import FeatureMaskDisplay
from .sample_explanation import SampleExplanationDisplay
from .training_history import TrainingHistoryDisplay

__all__ = [
    "FeatureImportanceDisplay",
    "FeatureMaskDisplay",
    "SampleExplanationDisplay",
    "TrainingHistoryDisplay",
]
