"""Self-supervised pretraining of the TabNet encoder on unlabelled rows: :class:`SparseTabNetPretrainer`."""

import numbers

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from ._base import _AUTO_EARLY_STOPPING_MIN_ROWS, BaseSparseTabNet, network_config, validate_frame
from ._columns import attention_groups, embedding_dims
from ._inference import INFERENCE_BATCH_ROWS, _check_finite, encoded_batches, feature_names
from ._runtime import TorchStatePickleMixin, resolve_device, torch_threads
from ._tabular import TabularEncoder
from ._training import TrainingConfig, train_network
from .network import PretrainingNetwork, TabNet

__all__ = ["SparseTabNetPretrainer", "ENCODER_PARAMETERS"]

# Parameters that shape the encoder: a model fine-tuned from a pretrainer must use the same values.
ENCODER_PARAMETERS = (
    "n_d",
    "n_a",
    "n_steps",
    "gamma",
    "n_independent",
    "n_shared",
    "entmax_mode",
    "entmax_alpha",
    "categorical_features",
    "cat_emb_dim",
    "grouped_features",
)
_SHARED_CONSTRAINTS = {
    name: constraint
    for name, constraint in BaseSparseTabNet._parameter_constraints.items()
    if name not in ("scoring", "warm_start")
}


def _split_validation_rows(n_rows, fraction, seed):
    order = np.random.default_rng(seed).permutation(n_rows)
    n_validation = min(max(1, int(round(fraction * n_rows))), n_rows - 2)
    return np.sort(order[n_validation:]), np.sort(order[:n_validation])


class SparseTabNetPretrainer(ClassNamePrefixFeaturesOutMixin, TransformerMixin, TorchStatePickleMixin, BaseEstimator):
    """Self-supervised TabNet pretraining on unlabelled rows (masked-column reconstruction).

    ``fit(X)`` trains a TabNet encoder together with the paper's decoder: for each batch a
    random binary mask ``S ~ Bernoulli(pretraining_ratio)`` hides some input columns (attention
    groups), the encoder sees ``(1 - S) * f`` with the prior ``P[0] = 1 - S``, and the decoder
    reconstructs ``f`` from the decision steps' outputs; the loss is the squared error on the
    hidden entries only, each column divided by its variance (see
    :class:`sparsetab.network.PretrainingNetwork`, which also says how categorical columns are
    reconstructed through their embeddings). ``transform(X)`` returns the encoder's decision
    embedding ``sum_i ReLU(d_i)``. A :class:`SparseTabNetClassifier` or
    :class:`SparseTabNetRegressor` built with ``pretrained=`` this (fitted) pretrainer starts
    from its encoder, its column encoding and its categories.

    Parameters
    ----------
    n_d, n_a, n_steps, gamma, n_independent, n_shared : int or float
        The encoder, as in :class:`SparseTabNetClassifier` (defaults 8, 8, 3, 1.3, 2, 2).
    n_shared_decoder : int, default=1
        GLU layers with shared weights in the decoder's feature transformers.
    n_independent_decoder : int, default=1
        Step-dependent GLU layers in the decoder's feature transformers.
    pretraining_ratio : float, default=0.2
        Probability that a column (attention group) is hidden in a row, in (0, 1).
    lambda_sparse, virtual_batch_size, momentum, batch_size, max_epochs, learning_rate, \
learning_rate_decay, max_grad_norm, entmax_mode, entmax_alpha, categorical_features, \
cat_emb_dim, grouped_features : see :class:`SparseTabNetClassifier`
        Same meaning and defaults.
    early_stopping : "auto" or bool, default="auto"
        Hold out ``validation_fraction`` of the rows and stop when their reconstruction loss
        (with masks drawn from a fixed seed, so it is comparable between epochs) has not
        improved by ``tol`` for ``n_iter_no_change`` epochs, keeping the best weights.
        ``"auto"``: on when there are more than 10,000 rows.
    validation_fraction, n_iter_no_change, tol, random_state, verbose, n_jobs, device : \
see :class:`SparseTabNetClassifier`
        Same meaning and defaults.

    Attributes
    ----------
    network_ : sparsetab.network.PretrainingNetwork
        The trained encoder (``network_.encoder``) and decoder.
    n_features_in_ : int
    feature_names_in_ : numpy.ndarray of shape (n_features_in_,)
        Only for DataFrame input with string column names.
    categories_ : dict of str -> numpy.ndarray
        Categories seen at fit per categorical column.
    loss_curve_ : list of float
        Mean training objective (reconstruction + ``lambda_sparse`` * sparsity) per epoch.
    validation_scores_ : numpy.ndarray of shape (n_iter_,) or None
        Negative validation reconstruction loss per epoch (higher is better).
    best_iteration_ : int or None
        Epoch of the kept weights under early stopping.
    n_iter_ : int
        Epochs run.

    Raises
    ------
    ValueError
        At ``fit``, for invalid parameters or fewer than 2 rows.

    References
    ----------
    Arik, S. O. and Pfister, T. (2021). TabNet: Attentive Interpretable Tabular Learning.
    AAAI 35(8), 6679-6687. Section 5 ("Self-supervised learning"), Fig. 2, Tables 7 and 10.
    """

    _parameter_constraints: dict = {
        **_SHARED_CONSTRAINTS,
        "n_shared_decoder": [Interval(numbers.Integral, 0, None, closed="left")],
        "n_independent_decoder": [Interval(numbers.Integral, 0, None, closed="left")],
        "pretraining_ratio": [Interval(numbers.Real, 0, 1, closed="neither")],
    }

    def __init__(
        self,
        *,
        n_d=8,
        n_a=8,
        n_steps=3,
        gamma=1.3,
        n_independent=2,
        n_shared=2,
        n_shared_decoder=1,
        n_independent_decoder=1,
        pretraining_ratio=0.2,
        lambda_sparse=1e-3,
        virtual_batch_size=128,
        momentum=0.02,
        batch_size=1024,
        max_epochs=100,
        learning_rate=0.02,
        learning_rate_decay=1.0,
        max_grad_norm=1.0,
        entmax_mode="sparsemax",
        entmax_alpha=1.5,
        categorical_features="auto",
        cat_emb_dim=1,
        grouped_features=None,
        early_stopping="auto",
        validation_fraction=0.1,
        n_iter_no_change=10,
        tol=1e-4,
        random_state=None,
        verbose=0,
        n_jobs=None,
        device="cpu",
    ):
        self.n_d = n_d
        self.n_a = n_a
        self.n_steps = n_steps
        self.gamma = gamma
        self.n_independent = n_independent
        self.n_shared = n_shared
        self.n_shared_decoder = n_shared_decoder
        self.n_independent_decoder = n_independent_decoder
        self.pretraining_ratio = pretraining_ratio
        self.lambda_sparse = lambda_sparse
        self.virtual_batch_size = virtual_batch_size
        self.momentum = momentum
        self.batch_size = batch_size
        self.max_epochs = max_epochs
        self.learning_rate = learning_rate
        self.learning_rate_decay = learning_rate_decay
        self.max_grad_norm = max_grad_norm
        self.entmax_mode = entmax_mode
        self.entmax_alpha = entmax_alpha
        self.categorical_features = categorical_features
        self.cat_emb_dim = cat_emb_dim
        self.grouped_features = grouped_features
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.random_state = random_state
        self.verbose = verbose
        self.n_jobs = n_jobs
        self.device = device

    def __sklearn_is_fitted__(self):
        return getattr(self, "_fitted", False)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        tags.input_tags.allow_nan = True
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Pretrain the encoder on the rows of ``X`` (labels, if given, are ignored).

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)
            Unlabelled rows; as for :meth:`SparseTabNetClassifier.fit` (missing numeric values
            allowed, categorical columns embedded).
        y : None
            Ignored; present for scikit-learn's API.

        Returns
        -------
        self : SparseTabNetPretrainer

        Raises
        ------
        ValueError
            For invalid parameters, fewer than 2 rows, infinite numeric input or an
            unavailable ``device``.
        TypeError
            For sparse input or unsupported column dtypes.
        """
        device = resolve_device(self.device)
        with torch_threads(self.n_jobs):
            self._fitted = False
            frame = validate_frame(self, X, reset=True)
            if frame.shape[0] < 2:
                raise ValueError(
                    f"Pretraining needs at least 2 rows for batch normalisation; got n_samples={frame.shape[0]}."
                )
            seed = int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))
            self._encoder = TabularEncoder(self.categorical_features)
            encoded = torch.from_numpy(self._encoder.fit_transform(frame)).to(device)
            names = feature_names(self)
            categories = self._encoder.categories_.items()
            self.categories_ = {str(names[j]): np.asarray(values, dtype=object) for j, values in categories}
            widths = embedding_dims(self.cat_emb_dim, frame.columns, self._encoder.is_categorical_)
            groups = attention_groups(self.grouped_features, frame.columns)
            self._network_config = network_config(self, self._encoder, widths, groups, output_dim=1)
            with torch.random.fork_rng(devices=[]):  # seed the weights without touching the global RNG
                torch.manual_seed(seed)
                network = PretrainingNetwork(
                    TabNet(**self._network_config),
                    n_shared_decoder=self.n_shared_decoder,
                    n_independent_decoder=self.n_independent_decoder,
                    pretraining_ratio=self.pretraining_ratio,
                    virtual_batch_size=self.virtual_batch_size,
                    momentum=self.momentum,
                )
            network.to(device)
            network.training_generator = torch.Generator().manual_seed(seed + 1)
            early_stopping = self.early_stopping is True or (
                self.early_stopping == "auto" and frame.shape[0] > _AUTO_EARLY_STOPPING_MIN_ROWS
            )
            train_rows = validation = None
            if early_stopping and frame.shape[0] >= 4:
                train_rows, validation_rows = _split_validation_rows(frame.shape[0], self.validation_fraction, seed)
                validation = encoded[torch.from_numpy(validation_rows).to(device)]
                encoded = encoded[torch.from_numpy(train_rows).to(device)]
            n_train = encoded.shape[0]
            config = TrainingConfig(
                batch_size=self.batch_size,
                max_epochs=self.max_epochs,
                learning_rate=self.learning_rate,
                learning_rate_decay=self.learning_rate_decay,
                max_grad_norm=self.max_grad_norm,
                lambda_sparse=self.lambda_sparse,
                n_iter_no_change=self.n_iter_no_change,
                tol=self.tol,
                early_stopping=validation is not None,
                verbose=self.verbose,
            )
            history = train_network(
                network,
                lambda row_losses, _: row_losses,  # the network's output is already the loss of each row
                encoded,
                torch.zeros(n_train, device=device),
                torch.ones(n_train, device=device),
                config,
                torch.Generator().manual_seed(seed),
                score_function=None if validation is None else lambda: -self._reconstruction_loss(network, validation),
            )
            network.training_generator = None
            self.network_ = network.eval()
            self._device = device
            self.loss_curve_ = history.loss_curve
            self.validation_scores_ = None if validation is None else np.asarray(history.validation_scores)
            self.best_iteration_ = history.best_iteration if validation is not None else None
            self.n_iter_ = len(history.loss_curve)
            self._n_features_out = int(self.n_d)
            self._fitted = True
        return self

    @staticmethod
    def _reconstruction_loss(network, X_tensor):
        network.eval()
        with torch.inference_mode():
            losses = [network(batch)[0] for batch in X_tensor.split(INFERENCE_BATCH_ROWS)]
        return float(torch.cat(losses).mean())

    def transform(self, X):
        """The encoder's decision embedding of each row.

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)
            Rows with the columns seen at fit.

        Returns
        -------
        numpy.ndarray of shape (n_samples, n_d), float64
            ``sum_i ReLU(d_i)`` of the pretrained encoder (no column hidden), the input of a
            supervised head (paper, Fig. 2).

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If the pretrainer is not fitted.
        ValueError
            If ``X`` does not have the columns seen at fit, a numeric column holds strings or
            infinities, or the embedding is not finite for some row (values far outside the
            training range overflow float32): never NaN output.
        """
        check_is_fitted(self)
        frame = validate_frame(self, X, reset=False)
        encoder = self.network_.encoder.eval()
        out = np.empty((frame.shape[0], self.n_d), dtype=np.float64)
        start = 0
        with torch_threads(self.n_jobs), torch.inference_mode():
            for batch in encoded_batches(self._encoder, frame, self._device):
                embedding = encoder.encode(batch)[0]
                _check_finite(start, (embedding, 0))
                out[start : start + len(batch)] = embedding.cpu().numpy()
                start += len(batch)
        return out

    def reconstruction_score(self, X):
        """Mean reconstruction loss of ``X`` with columns hidden at ``pretraining_ratio`` (fixed seed).

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)

        Returns
        -------
        float
            The loss of :func:`sparsetab.network.reconstruction_loss`, averaged over rows
            (lower is better; about 1 for a model that predicts each column's mean).

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If the pretrainer is not fitted.
        """
        check_is_fitted(self)
        frame = validate_frame(self, X, reset=False)
        tensor = torch.from_numpy(self._encoder.transform(frame)).to(self._device)  # checks every row
        with torch_threads(self.n_jobs):
            return self._reconstruction_loss(self.network_, tensor)
