"""The TabNet torch model: blocks, attentive transformer, embeddings, the encoder and the pretraining decoder.

Nothing here depends on scikit-learn; the estimators in :mod:`sparsetab` drive it.
"""

from .attentive import ENTMAX_MODES, AttentiveTransformer
from .blocks import FeatureTransformer, GhostBatchNorm, GLULayer
from .embeddings import InputEmbedding
from .pretraining import PretrainingNetwork, reconstruction_loss
from .tabnet import TabNet

__all__ = [
    "ENTMAX_MODES",
    "AttentiveTransformer",
    "FeatureTransformer",
    "GhostBatchNorm",
    "GLULayer",
    "InputEmbedding",
    "PretrainingNetwork",
    "TabNet",
    "reconstruction_loss",
]
