"""Self-supervised pretraining of the TabNet encoder on unlabelled rows: :class:`SparseTabNetPretrainer`."""

import secrets

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin, _fit_context
from sklearn.utils.validation import check_is_fitted

from ._inference import INFERENCE_BATCH_ROWS, check_finite, encoded_batches, forward_in_batches
from ._params import (
    DEFAULTS,
    LEGACY_VALUES,
    PRETRAINED_PARAMETERS,
    parameter_constraints,
    resolve_batch_sizes,
    resolve_early_stopping,
    resolve_numerical_embedding,
    store_parameters,
    training_config,
)
from ._persistence.compat import pickled_state, restore_torch_state, unpickled_state
from ._progress import CallbackSupportMixin, epoch_tasks, training_observer
from ._recipe import (
    build_tabnet,
    epoch_printer,
    fit_seed,
    fit_tabular_encoding,
    network_layout,
    record_categories,
    split_validation,
)
from ._runtime import resolve_device, torch_threads, training_threads, trains_whatever_the_autograd_mode
from ._tabular.encoding import validate_frame
from ._training.loop import train_network
from .network import PretrainingNetwork

__all__ = ["SparseTabNetPretrainer", "ENCODER_PARAMETERS"]

# Parameters that shape the encoder: a model fine-tuned from a pretrainer must use the same values.
ENCODER_PARAMETERS = PRETRAINED_PARAMETERS


class SparseTabNetPretrainer(
    *((CallbackSupportMixin,) if CallbackSupportMixin is not None else ()),
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
    BaseEstimator,
):
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
    from its encoder, its tabular encoding and its categories.

    Parameters
    ----------
    n_d : int, default=32
        Width of the decision features ``d`` of each step (paper: ``N_d``), and the width of
        the embedding returned by ``transform``.
    n_a : int, default=32
        Width of the attention features ``a`` of each step (paper: ``N_a``).
    n_steps : int, default=3
        Number of decision steps of the encoder (paper: ``N_steps``); the decoder has one
        block per step.
    gamma : float, default=1.3
        Relaxation of the prior scale, >= 1: with 1 each column can be used at one step only.
    n_independent : int, default=2
        Step-dependent GLU layers per feature transformer of the encoder.
    n_shared : int, default=2
        GLU layers shared by all feature transformers of the encoder
        (``n_independent + n_shared >= 1``).
    n_shared_decoder : int, default=1
        GLU layers with shared weights in the decoder's feature transformers.
    n_independent_decoder : int, default=1
        Step-dependent GLU layers in the decoder's feature transformers
        (``n_shared_decoder + n_independent_decoder >= 1``).
    pretraining_ratio : float, default=0.2
        Probability that a column (attention group) is hidden in a row, in (0, 1).
    lambda_sparse : float, default=1e-3
        Weight of the sparsity regulariser (mean entropy of the encoder's masks) in the loss.
    virtual_batch_size : int or "auto", default="auto"
        Rows per virtual batch of ghost batch normalisation (paper: ``B_V``), at least 2 (the
        variance of one row is undefined: every row would normalise to the bias). ``"auto"``:
        the batch size, at most 128. The value used is ``virtual_batch_size_``.
    momentum : float, default=0.02
        Batch norm momentum, PyTorch convention (the paper's ``m_B`` equals ``1 - momentum``).
    batch_size : int or "auto", default="auto"
        Rows per optimisation step (paper: ``B``), at least 2; the batches of an epoch have near-equal
        sizes. ``"auto"``: about 32 steps per epoch, the power of two nearest to ``n_train /
        32`` within [32, 1024], where ``n_train`` counts the rows after the validation split.
        The value used is ``batch_size_``.
    max_epochs : int, default=100
        Maximum number of passes over the training rows.
    learning_rate : float, default=0.02
        Adam's learning rate.
    learning_rate_decay : float, default=1.0
        Factor in (0, 1] applied to the learning rate after every epoch by
        ``learning_rate_schedule="exponential"`` (1: constant rate); a value other than 1 with
        another schedule raises a ValueError at fit.
    max_grad_norm : float or None, default=1.0
        Gradients are clipped to this global L2 norm before each step; None disables clipping.
    learning_rate_schedule : {"constant", "exponential", "cosine"}, default="cosine"
        How the learning rate changes over the ``max_epochs`` epochs: ``"constant"``;
        ``"exponential"``, times ``learning_rate_decay`` after each epoch; ``"cosine"``, from
        ``learning_rate`` after the warm-up down to 0 at ``max_epochs`` along half a cosine,
        set at every step (Loshchilov and Hutter, 2017, "SGDR", Eq. 5, without restarts).
        Early stopping may end training before the schedule does. :meth:`partial_fit`
        continues the schedule over its calls (one epoch each); a new ``fit`` restarts it.
        Models saved before this parameter existed load with ``"exponential"``.
    warmup_epochs : float, default=5
        Epochs of linear warm-up: the learning rate grows linearly from 0 to its scheduled
        value over the first ``warmup_epochs`` epochs, step by step (Goyal et al., 2017,
        "Accurate, large minibatch SGD", section 2.2), and at most over half of ``max_epochs``
        (a short fit still reaches the full rate). 0: no warm-up.
    weight_decay : float, default=0.01
        Decoupled weight decay (AdamW: Loshchilov and Hutter, 2019, "Decoupled weight decay
        regularization", Algorithm 2): each step also shrinks every weight by ``learning_rate
        * weight_decay`` times itself (at the step's scheduled rate). 0: plain Adam. The
        default is torch's AdamW default and the supervised estimators' (chosen there by
        measurement: the ablation of the manual's benchmark pages). Pretrainers saved before
        this parameter existed load with 0.
    entmax_mode : {"sparsemax", "entmax15", "constant", "adaptive"}, default="entmax15"
        The sparse map of the encoder's attentive transformers, as in
        :class:`SparseTabNetClassifier` (the same default). Pretrainers saved with the earlier
        default keep ``"sparsemax"``.
    entmax_alpha : float, default=1.5
        Alpha in [1, 2] for ``entmax_mode="constant"``, initial alpha in (1, 2) for
        ``"adaptive"``; ignored otherwise.
    numerical_transform : {"standard", "quantile"}, default="standard"
        What numeric columns become before the network. Either way each column is first
        clipped to the [min, max] it had at fit (missing values ignored), so that no row,
        however far outside the training range, can push the network's inputs, and so its
        outputs, to absurd values; the training rows are unchanged by the clipping.
        ``"standard"``: ``(x - mean) / std`` with the training rows' statistics.
        ``"quantile"``: scikit-learn's :class:`~sklearn.preprocessing.QuantileTransformer`
        with ``output_distribution="normal"`` fitted on the training rows, as in Gorishniy et
        al., "Revisiting Deep Learning Models for Tabular Data" (NeurIPS 2021) and "On
        Embeddings for Numerical Features in Tabular Deep Learning" (NeurIPS 2022), with
        ``n_quantiles = max(min(n_rows // 30, 1000), 10)`` (at most ``n_rows``) and a seeded
        ``subsample`` of 1,000,000 rows (all rows below that). Its outputs lie in about
        [-5.2, 5.2]: values at the training minimum (maximum) map to about -5.2 (+5.2), so a
        0/1 column becomes -5.2/+5.2, and a value repeated by many rows maps to the middle of
        its share of the quantiles (scikit-learn interpolates from both sides). Under both
        rules a column constant at fit (or missing everywhere) encodes as 0, and missing values
        stay missing (the network fills them with a learned value). Models saved before this parameter existed
        load with ``"standard"`` and no clipping, and predict exactly as before until refit.
    categorical_features : "auto", None, array-like of str, int or bool, default="auto"
        Categorical columns, as in :class:`SparseTabNetClassifier`: ``"auto"`` takes the
        DataFrame columns of ``category``, ``object``, string or ``bool`` dtype.
    cat_emb_dim : int or dict, default=4
        Embedding width of the categorical columns: one int for all, or a dict mapping column
        names or indices to widths, other categorical columns getting 1 (the default's
        measurements: :class:`SparseTabNetClassifier`).
    grouped_features : list of list of str or int, default=None
        Groups of columns that share one attention weight, and that are hidden together.
    numerical_embedding : {"auto", "piecewise_linear", "periodic"} or None, default="auto"
        How numeric columns enter the encoder, as in :class:`SparseTabNetClassifier`
        (Gorishniy, Rubachev and Babenko, NeurIPS 2022: PLE over quantile bins, section 3.2,
        or PLR periodic embeddings, section 3.3; PLE keeps each value beside its bins;
        ``"auto"``: ``"piecewise_linear"`` from 1,000 rows on, None under that, see
        :func:`sparsetab._params.resolve_numerical_embedding`; the value used is
        ``numerical_embedding_``); the
        bin edges are fitted on the training rows, and a fine-tuned model keeps them and the
        pretrainer's layout (pretrainers fitted with the earlier bins-only layout keep it).
        The decoder reconstructs the hidden columns' values, not their embedding dimensions.
    n_bins : int, default=32
        ``"piecewise_linear"``: the most quantile bins per column (columns with at most
        ``n_bins`` distinct values stay scalar); ``"periodic"``: frequencies per column.
    embedding_dim : int, default=8
        ``"periodic"`` only: the width of each numeric column's embedding.
    frequency_scale : float, default=0.1
        ``"periodic"`` only: ``sigma`` of the frequencies' initialisation ``N(0, sigma^2)``.
    early_stopping : "auto" or bool, default="auto"
        Hold out ``validation_fraction`` of the rows and stop when their reconstruction loss
        (with masks drawn from a fixed seed, so it is comparable between epochs) has not
        improved by ``tol`` for ``n_iter_no_change`` epochs, keeping the best weights.
        ``"auto"``: on when there are more than 10,000 rows.
    validation_fraction : float, default=0.1
        Share of the rows held out for early stopping, in (0, 1).
    n_iter_no_change : int, default=20
        Patience in epochs: training stops after ``max(n_iter_no_change, ceil(200 /
        steps_per_epoch))`` epochs without an improvement of at least ``tol``, so at least 200
        optimiser steps pass without improvement, however few batches an epoch has.
    tol : float, default=1e-4
        Minimum improvement of the validation score, or of the training loss without early
        stopping.
    random_state : int, RandomState instance or None, default=None
        Seeds the weights, the shuffling, the hidden-column masks and the validation split.
        The global RNGs of numpy and torch are left untouched.
    verbose : int, default=0
        0 prints nothing; 1 prints one line per epoch (``[3/100] train loss: 0.8123, val
        loss: 0.8410 (best), in 0.4s``, the reconstruction loss) and why training stopped; 2
        adds a progress bar within each epoch (with ``rich``), as in
        :class:`SparseTabNetClassifier`.
    n_jobs : int or None, default=None
        Number of torch threads used inside ``fit``, ``transform`` and
        ``reconstruction_score`` (the previous count is restored afterwards); negative values
        count back from the cores this process may use (-1: all of them), None keeps torch's
        count capped at them and trains small steps on one thread, as in
        :class:`SparseTabNetClassifier`.
    device : str or torch.device, default="cpu"
        Torch device: ``"cpu"``, ``"cuda"``, ``"cuda:N"``, ``"auto"`` or a ``torch.device``;
        a device that is not available raises a ValueError at fit.
    torch_compile : bool, default=False
        Run the forward of each training step through ``torch.compile`` (torch's inductor
        backend; it needs a C++ compiler on the CPU). Compiled once per batch shape at the
        start of a fit (fits of the same architecture in one process reuse the code); the
        backward, the optimizer, evaluation, ``predict`` and ``explain`` are not compiled. On
        CUDA the compiled forward runs inside the captured training step. The model is the
        same training up to float rounding (which, over a run, gives a different model, as a
        different thread count does). A compiler failure raises a RuntimeError naming this
        parameter. Off by default because on the CPU it does not pay: the default step at
        batch 32 is 0.90 times the eager step's time, at 1,024 1.01 times, for 14-18 s of
        compiling (``python -m benchmarks.compile_speed``, one thread, 2-core Intel Xeon); see
        the GPU page of the user guide for CUDA.

    Attributes
    ----------
    network_ : sparsetab.network.PretrainingNetwork
        The trained encoder (``network_.encoder``) and decoder.
    fit_id_ : str
        A random name of this fit (16 hex digits), new at every fit: a model fine-tuned from it
        refuses to continue training (``partial_fit``, ``warm_start``) with another pretrainer
        fit as ``pretrained``.
    n_features_in_ : int
        Number of input columns seen at fit.
    feature_names_in_ : numpy.ndarray of shape (``n_features_in_``,)
        Only for DataFrame input with string column names.
    categories_ : dict of str -> numpy.ndarray
        Categories seen at fit per categorical column.
    loss_curve_ : list of float
        Mean training objective (reconstruction + ``lambda_sparse`` * sparsity) per epoch.
    validation_scores_ : numpy.ndarray of shape (``n_iter_``,) or None
        Negative validation reconstruction loss per epoch (higher is better).
    best_iteration_ : int or None
        Epoch of the kept weights under early stopping.
    batch_size_ : int
        The batch size of the last ``fit`` or ``partial_fit`` call: ``batch_size``, or the rule
        of ``batch_size="auto"`` applied to that call's training rows.
    virtual_batch_size_ : int
        The virtual batch size the network was built with: ``virtual_batch_size``, or the rule
        of ``virtual_batch_size="auto"``.
    numerical_embedding_ : str or None
        The embedding of the numeric columns the encoder was built with: ``numerical_embedding``,
        or the rule of ``numerical_embedding="auto"`` applied to the rows given to ``fit``.
    n_iter_ : int
        Epochs run.

    Raises
    ------
    ValueError
        At ``fit``, for invalid parameters or fewer than 2 rows; under early stopping, also
        when the rows are too few to hold out a validation split of ``validation_fraction``
        and keep at least 2 training rows.

    See Also
    --------
    SparseTabNetClassifier : Fine-tuned from a fitted pretrainer with ``pretrained=``.
    SparseTabNetRegressor : Fine-tuned from a fitted pretrainer with ``pretrained=``.
    sparsetab.network.PretrainingNetwork : The torch module trained by ``fit``.

    References
    ----------
    Arik, S. O. and Pfister, T. (2021). TabNet: Attentive Interpretable Tabular Learning.
    AAAI 35(8), 6679-6687. Section 5 ("Self-supervised learning"), Fig. 2, Tables 7 and 10.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsetab import SparseTabNetClassifier, SparseTabNetPretrainer
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 4))
    >>> pretrainer = SparseTabNetPretrainer(max_epochs=1, random_state=0).fit(X)
    >>> pretrainer.transform(X[:5]).shape
    (5, 32)
    >>> pretrainer.n_iter_
    1
    >>> y = (X[:, 0] > 0).astype(int)
    >>> model = SparseTabNetClassifier(max_epochs=1, random_state=0, pretrained=pretrainer)
    >>> model.fit(X, y).classes_.tolist()
    [0, 1]
    """

    _parameter_constraints: dict = parameter_constraints("pretrainer")

    def __init__(
        self,
        *,
        n_d=DEFAULTS["n_d"],
        n_a=DEFAULTS["n_a"],
        n_steps=DEFAULTS["n_steps"],
        gamma=DEFAULTS["gamma"],
        n_independent=DEFAULTS["n_independent"],
        n_shared=DEFAULTS["n_shared"],
        n_shared_decoder=DEFAULTS["n_shared_decoder"],
        n_independent_decoder=DEFAULTS["n_independent_decoder"],
        pretraining_ratio=DEFAULTS["pretraining_ratio"],
        lambda_sparse=DEFAULTS["lambda_sparse"],
        virtual_batch_size=DEFAULTS["virtual_batch_size"],
        momentum=DEFAULTS["momentum"],
        batch_size=DEFAULTS["batch_size"],
        max_epochs=DEFAULTS["max_epochs"],
        learning_rate=DEFAULTS["learning_rate"],
        learning_rate_decay=DEFAULTS["learning_rate_decay"],
        max_grad_norm=DEFAULTS["max_grad_norm"],
        learning_rate_schedule=DEFAULTS["learning_rate_schedule"],
        warmup_epochs=DEFAULTS["warmup_epochs"],
        weight_decay=DEFAULTS["weight_decay"],
        entmax_mode=DEFAULTS["entmax_mode"],
        entmax_alpha=DEFAULTS["entmax_alpha"],
        numerical_transform=DEFAULTS["numerical_transform"],
        categorical_features=DEFAULTS["categorical_features"],
        cat_emb_dim=DEFAULTS["cat_emb_dim"],
        grouped_features=DEFAULTS["grouped_features"],
        numerical_embedding=DEFAULTS["numerical_embedding"],
        n_bins=DEFAULTS["n_bins"],
        embedding_dim=DEFAULTS["embedding_dim"],
        frequency_scale=DEFAULTS["frequency_scale"],
        early_stopping=DEFAULTS["early_stopping"],
        validation_fraction=DEFAULTS["validation_fraction"],
        n_iter_no_change=DEFAULTS["n_iter_no_change"],
        tol=DEFAULTS["tol"],
        random_state=DEFAULTS["random_state"],
        verbose=DEFAULTS["verbose"],
        n_jobs=DEFAULTS["n_jobs"],
        device=DEFAULTS["device"],
        torch_compile=DEFAULTS["torch_compile"],
    ):
        store_parameters(self, locals())

    def __getstate__(self):
        return pickled_state(super().__getstate__())

    def __setstate__(self, state):
        # The estimators' one pickling protocol, with what earlier releases need (_persistence.compat).
        state, torch_state = unpickled_state(state, type(self)._parameter_constraints, LEGACY_VALUES)
        super().__setstate__(state)
        restore_torch_state(self, torch_state)

    def __sklearn_is_fitted__(self):
        return getattr(self, "_fitted", False)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        tags.input_tags.allow_nan = True
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    @trains_whatever_the_autograd_mode
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
        SparseTabNetPretrainer
            The fitted pretrainer, ``self``.

        Raises
        ------
        ValueError
            For invalid parameters, fewer than 2 rows, infinite numeric input or an
            unavailable ``device``; under early stopping, for rows too few to hold out a
            validation split of ``validation_fraction`` and keep 2 training rows.
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
            _, seed = fit_seed(self.random_state)
            encoded = fit_tabular_encoding(self, frame, seed, device)
            record_categories(self)
            validation = None
            if resolve_early_stopping(self.early_stopping, frame.shape[0], has_validation_data=False):
                train_rows, validation_rows = split_validation(frame.shape[0], self.validation_fraction, seed)
                validation = encoded[torch.from_numpy(validation_rows).to(device)]
                encoded = encoded[torch.from_numpy(train_rows).to(device)]
                if encoded.shape[0] < 2:
                    raise ValueError(
                        f"Pretraining needs at least 2 training rows for batch normalisation; holding out "
                        f"validation_fraction={self.validation_fraction} of {frame.shape[0]} rows leaves "
                        f"{encoded.shape[0]}. Use more rows, a smaller validation_fraction or early_stopping=False."
                    )
            n_train = encoded.shape[0]
            self.batch_size_, self.virtual_batch_size_ = resolve_batch_sizes(
                self.batch_size, self.virtual_batch_size, n_train
            )
            # The bin edges of a piecewise linear encoding are quantiles of the training rows only.
            self._network_config, edges = network_layout(
                self,
                frame,
                encoded,
                1,
                virtual_batch_size=self.virtual_batch_size_,
                numerical_embedding=resolve_numerical_embedding(self.numerical_embedding, frame.shape[0]),
            )
            # The fit's own generator for the initial weights, continued by the decoder's.
            generator = torch.Generator().manual_seed(seed)
            network = PretrainingNetwork(
                build_tabnet(self._network_config, generator, edges),
                n_shared_decoder=self.n_shared_decoder,
                n_independent_decoder=self.n_independent_decoder,
                pretraining_ratio=self.pretraining_ratio,
                virtual_batch_size=self.virtual_batch_size_,
                momentum=self.momentum,
                generator=generator,
            )
            network.to(device)
            network.training_generator = torch.Generator().manual_seed(seed + 1)
            printer = epoch_printer(self, "loss", early_stopping=validation is not None)
            # The pretrainer is not usable before its fit ends: callbacks get no fitted copy per epoch.
            tasks = epoch_tasks(self, X, None, None, self.max_epochs, fitted_copies=False)

            def validation_score():
                return -self._reconstruction_loss(network, validation)

            with training_threads(self.n_jobs, network, self.batch_size_):
                history = train_network(
                    network,
                    lambda row_losses, _: row_losses,  # the network's output is already the loss of each row
                    encoded,
                    torch.zeros(n_train, device=device),
                    torch.ones(n_train, device=device),
                    training_config(self, batch_size=self.batch_size_, early_stopping=validation is not None),
                    torch.Generator().manual_seed(seed),
                    score_function=None if validation is None else validation_score,
                    observer=training_observer(printer, tasks),
                )
            network.training_generator = None
            self.network_ = network.eval()
            self._device = device
            self.loss_curve_ = history.loss_curve
            self.validation_scores_ = None if validation is None else np.asarray(history.validation_scores)
            self.best_iteration_ = history.best_iteration if validation is not None else None
            self.n_iter_ = len(history.loss_curve)
            self._n_features_out = int(self.n_d)
            # Names this fit, so that a model fine-tuned from it can tell it from another (or a refit).
            self.fit_id_ = secrets.token_hex(8)
            self._fitted = True
            if tasks is not None:
                tasks.fit_end()
        return self

    @staticmethod
    def _reconstruction_loss(network, X_tensor):
        def row_losses(batch):
            return network(batch)[0]

        batches = X_tensor.split(INFERENCE_BATCH_ROWS)
        return float(torch.cat([losses for _, losses in forward_in_batches(network, batches, row_losses)]).mean())

    @property
    def numerical_embedding_(self):
        """The embedding of the numeric columns the encoder was built with (``numerical_embedding``, resolved).

        Returns
        -------
        str or None
            ``numerical_embedding`` as given, or what ``"auto"`` chose for the rows given to ``fit``
            (:func:`~sparsetab._params.resolve_numerical_embedding`).

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before ``fit``.
        """
        check_is_fitted(self)
        return self.network_.encoder.embedding.numerical_embedding

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
        encoder = self.network_.encoder
        out = np.empty((frame.shape[0], self.n_d), dtype=np.float64)
        batches = encoded_batches(self._tabular_encoding, frame, self._device)

        def embed(batch):
            return encoder.encode(batch)[0]

        with torch_threads(self.n_jobs):
            for offset, embedding in forward_in_batches(encoder, batches, embed):
                check_finite(offset, (embedding, 0))
                out[offset : offset + len(embedding)] = embedding.cpu().numpy()
        return out

    def reconstruction_score(self, X):
        """Mean reconstruction loss of ``X`` with columns hidden at ``pretraining_ratio`` (fixed seed).

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)
            Rows with the columns seen at fit.

        Returns
        -------
        float
            The loss of :func:`sparsetab.network.reconstruction_loss`, averaged over rows
            (lower is better; about 1 for a model that predicts each column's mean).

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If the pretrainer is not fitted.
        ValueError
            If ``X`` does not have the columns seen at fit, or a numeric column holds strings
            or infinities.
        """
        check_is_fitted(self)
        frame = validate_frame(self, X, reset=False)
        tensor = torch.from_numpy(self._tabular_encoding.transform(frame)).to(self._device)  # checks every row
        with torch_threads(self.n_jobs):
            return self._reconstruction_loss(self.network_, tensor)
