"""The TabNet torch model: blocks, attentive transformer, embeddings, step gates, encoder, pretraining decoder.

Nothing here depends on scikit-learn; the estimators in :mod:`sparsetab` drive it.

Forward hooks: :class:`TabNet` calls its feature and attentive transformers through
``nn.Module.__call__``, so hooks registered on them (or on the network) run. Inside a feature
transformer, the GLU layers and their fully connected and batch-norm modules are called through
their ``forward`` directly, which saves about 4% of a training step; hooks registered on those
inner modules are not run.
"""

from .attentive import ENTMAX_MODES, AttentiveTransformer
from .blocks import FeatureTransformer, GhostBatchNorm, GLULayer
from .embeddings import InputEmbedding
from .ensemble import TabNetEnsemble, ensemble_members
from .numerical import NUMERICAL_EMBEDDINGS, PeriodicEmbedding, PiecewiseLinearEncoding, quantile_bin_edges
from .pretraining import PretrainingNetwork, reconstruction_loss
from .step_gates import STEP_GATES, StepGates, gate_penalty
from .tabnet import EncodedSteps, TabNet

__all__ = [
    "ENTMAX_MODES",
    "STEP_GATES",
    "EncodedSteps",
    "NUMERICAL_EMBEDDINGS",
    "AttentiveTransformer",
    "FeatureTransformer",
    "GhostBatchNorm",
    "GLULayer",
    "InputEmbedding",
    "PeriodicEmbedding",
    "PiecewiseLinearEncoding",
    "PretrainingNetwork",
    "StepGates",
    "TabNet",
    "quantile_bin_edges",
    "TabNetEnsemble",
    "ensemble_members",
    "gate_penalty",
    "reconstruction_loss",
]
