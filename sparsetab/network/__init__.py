"""The TabNet torch model: blocks, attentive transformer, embeddings and the encoder.

Nothing here depends on scikit-learn; the estimators in :mod:`sparsetab` drive it.
"""

from .attentive import ENTMAX_MODES, AttentiveTransformer
from .blocks import FeatureTransformer, GhostBatchNorm, GLULayer
from .embeddings import InputEmbedding
from .tabnet import TabNet

__all__ = [
    "ENTMAX_MODES",
    "AttentiveTransformer",
    "FeatureTransformer",
    "GhostBatchNorm",
    "GLULayer",
    "InputEmbedding",
    "TabNet",
]
