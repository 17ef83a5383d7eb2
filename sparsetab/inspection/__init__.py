"""Pictures of what a fitted sparsetab model looked at: feature masks, importances, training.

Five display objects in the style of scikit-learn's ``ConfusionMatrixDisplay``: ``__init__``
stores the data to draw, ``plot(ax=None, ...)`` draws it with matplotlib and keeps the artists
as attributes, and the ``from_estimator`` class method computes the data from a fitted
:class:`~sparsetab.SparseTabNetClassifier` or :class:`~sparsetab.SparseTabNetRegressor` (or a
:class:`~sklearn.pipeline.Pipeline` ending in one) and plots it.

- :class:`StepSummaryDisplay`: which features each decision step uses: each step's mean mask
  over the rows, steps x features, sorted by importance.
- :class:`FeatureMaskDisplay`: heatmaps of each decision step's feature mask and of the
  aggregate mask, one row per sample.
- :class:`FeatureImportanceDisplay`: horizontal bars of the features sorted by importance.
- :class:`TrainingHistoryDisplay`: loss and validation score per epoch, the restored best epoch,
  and the learned alpha of each step for ``entmax_mode="adaptive"``.
- :class:`SampleExplanationDisplay`: one row's mask per decision step as grouped bars, with its
  feature values and its prediction.

Every ``from_estimator`` takes ``groups``, which sums columns into one (the one-hot columns of a
source column); :func:`feature_groups_from_transformer` builds it from a fitted
``ColumnTransformer``, ``OneHotEncoder`` or ``Pipeline``.

matplotlib is imported only when a figure is drawn; nothing is shown (no ``plt.show()``).
"""

from .feature_importance import FeatureImportanceDisplay
from .feature_mask import FeatureMaskDisplay
from .sample_explanation import SampleExplanationDisplay
from .step_summary import StepSummaryDisplay
from .training_history import TrainingHistoryDisplay
from .transformer_groups import feature_groups_from_transformer

__all__ = [
    "FeatureImportanceDisplay",
    "FeatureMaskDisplay",
    "SampleExplanationDisplay",
    "StepSummaryDisplay",
    "TrainingHistoryDisplay",
    "feature_groups_from_transformer",
]
