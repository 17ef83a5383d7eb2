"""BaseSparseTabNet: parameters, the fit/predict plumbing and explain(), shared by both estimators."""

import copy
import numbers
import warnings
from abc import abstractmethod

import numpy as np
import pandas as pd
import scipy.sparse
import torch
from sklearn.base import BaseEstimator, _fit_context, is_classifier
from sklearn.metrics import check_scoring
from sklearn.model_selection import train_test_split
from sklearn.utils import _safe_indexing, check_random_state
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.multiclass import unique_labels
from sklearn.utils.validation import (
    _check_sample_weight,
    _num_samples,
    check_consistent_length,
    column_or_1d,
    validate_data,
)

from ._columns import attention_groups, embedding_dims
from ._inference import INFERENCE_BATCH_ROWS, InferenceMixin
from ._runtime import TorchStatePickleMixin, resolve_device, torch_threads
from ._tabular import TabularEncoder, to_frame
from ._training import TrainingConfig, train_network
from .network import ENTMAX_MODES, TabNet

__all__ = ["BaseSparseTabNet"]

# early_stopping="auto" switches on above this many training rows.
_AUTO_EARLY_STOPPING_MIN_ROWS = 10000
# Parameters the network is built from: warm_start and partial_fit refuse to continue when they change.
_ARCHITECTURE_PARAMETERS = (
    "n_d",
    "n_a",
    "n_steps",
    "gamma",
    "n_independent",
    "n_shared",
    "virtual_batch_size",
    "momentum",
    "entmax_mode",
    "entmax_alpha",
    "categorical_features",
    "cat_emb_dim",
    "grouped_features",
)


def _same_value(before, now):
    """Parameter equality that also works for arrays and lists of them."""
    if isinstance(before, np.ndarray) or isinstance(now, np.ndarray):
        return type(before) is type(now) and np.array_equal(np.asarray(before, object), np.asarray(now, object))
    try:
        return bool(before == now)
    except (TypeError, ValueError):
        return False


def _drop_zero_weight_rows(frame, y, sample_weight):
    """Drop the rows of zero ``sample_weight`` before anything (classes, class weights) is learned from ``y``."""
    if sample_weight is None:
        return frame, y, None
    if _num_samples(y) != frame.shape[0]:
        raise ValueError(
            f"X and y have inconsistent numbers of samples: X has {frame.shape[0]}, y has {_num_samples(y)}."
        )
    weights = _check_sample_weight(sample_weight, frame, dtype=np.float64, ensure_non_negative=True)
    keep = np.flatnonzero(weights > 0)
    if keep.size == 0:
        raise ValueError("sample_weight is zero for every row; at least one positive weight is required.")
    if keep.size == weights.size:
        return frame, y, weights
    return frame.iloc[keep], _safe_indexing(y, keep), weights[keep]


def network_config(estimator, encoder, widths, groups, output_dim):
    """The keyword arguments of :class:`~sparsetab.network.TabNet` for a fitted column encoding.

    Parameters
    ----------
    estimator : BaseEstimator
        Supplies the architecture parameters (n_d, n_a, n_steps, gamma, n_independent,
        n_shared, virtual_batch_size, momentum, entmax_mode, entmax_alpha).
    encoder : TabularEncoder
        The fitted column encoding (cardinalities, columns with missing values).
    widths : list of int
        Embedding width of each column.
    groups : list of list of int or None
        The attention groups.
    output_dim : int
        Width of the head.

    Returns
    -------
    dict
        Plain ints, floats, strings and lists, so that a model file stores it as JSON.
    """
    return dict(
        cardinalities=list(encoder.cardinalities),
        embedding_dims=[int(width) for width in widths],
        output_dim=int(output_dim),
        n_d=int(estimator.n_d),
        n_a=int(estimator.n_a),
        n_steps=int(estimator.n_steps),
        gamma=float(estimator.gamma),
        n_independent=int(estimator.n_independent),
        n_shared=int(estimator.n_shared),
        virtual_batch_size=int(estimator.virtual_batch_size),
        momentum=float(estimator.momentum),
        entmax_mode=estimator.entmax_mode,
        entmax_alpha=float(estimator.entmax_alpha),
        attention_groups=groups,
        missing_indicators=np.flatnonzero(encoder.has_missing_).tolist(),
    )


def validate_frame(estimator, X, reset):
    """Check ``X``, record or compare its columns on ``estimator``, and return it as a DataFrame.

    A DataFrame is returned as it is (never a copy); sparse input is a TypeError and an empty
    table a ValueError.
    """
    sparse_frame = isinstance(X, pd.DataFrame) and any(isinstance(dtype, pd.SparseDtype) for dtype in X.dtypes)
    if scipy.sparse.issparse(X) or sparse_frame:
        raise TypeError(
            f"{type(estimator).__name__} does not accept sparse input (got {type(X).__name__}); "
            "convert it with X.toarray() or a dense DataFrame."
        )
    if isinstance(X, pd.DataFrame):
        validate_data(estimator, X, reset=reset, skip_check_array=True)
        if X.shape[0] == 0:
            raise ValueError(
                f"X is empty: found array with 0 sample(s) (shape={X.shape}) while a minimum of 1 is required."
            )
        if X.shape[1] == 0:
            raise ValueError(f"X has 0 feature(s) (shape={X.shape}) while a minimum of 1 is required.")
        return X
    X = validate_data(estimator, X, reset=reset, dtype=None, ensure_all_finite=False)
    return to_frame(X)


class BaseSparseTabNet(InferenceMixin, TorchStatePickleMixin, BaseEstimator):
    """Shared implementation of :class:`SparseTabNetClassifier` and :class:`SparseTabNetRegressor`.

    Subclasses define the output head size, the loss and the target encoding; see their
    docstrings for the parameters.
    """

    _parameter_constraints: dict = {
        "n_d": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_a": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_steps": [Interval(numbers.Integral, 1, None, closed="left")],
        "gamma": [Interval(numbers.Real, 1, None, closed="left")],
        "n_independent": [Interval(numbers.Integral, 0, None, closed="left")],
        "n_shared": [Interval(numbers.Integral, 0, None, closed="left")],
        "lambda_sparse": [Interval(numbers.Real, 0, None, closed="left")],
        "virtual_batch_size": [Interval(numbers.Integral, 1, None, closed="left")],
        "momentum": [Interval(numbers.Real, 0, 1, closed="both")],
        "batch_size": [Interval(numbers.Integral, 1, None, closed="left")],
        "max_epochs": [Interval(numbers.Integral, 1, None, closed="left")],
        "learning_rate": [Interval(numbers.Real, 0, None, closed="neither")],
        "learning_rate_decay": [Interval(numbers.Real, 0, 1, closed="right")],
        "max_grad_norm": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "entmax_mode": [StrOptions(set(ENTMAX_MODES))],
        "entmax_alpha": [Interval(numbers.Real, 1, 2, closed="both")],
        "categorical_features": [StrOptions({"auto"}), "array-like", None],
        "cat_emb_dim": [Interval(numbers.Integral, 1, None, closed="left"), dict],
        "grouped_features": [list, None],
        "early_stopping": [StrOptions({"auto"}), "boolean"],
        "validation_fraction": [Interval(numbers.Real, 0, 1, closed="neither")],
        "n_iter_no_change": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "scoring": [StrOptions({"loss"}), str, callable],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "warm_start": ["boolean"],
        "n_jobs": [
            Interval(numbers.Integral, None, -1, closed="right"),
            Interval(numbers.Integral, 1, None, closed="left"),
            None,
        ],
        "device": [str, torch.device],
        "pretrained": [HasMethods(["fit", "transform"]), None],
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
        scoring="loss",
        random_state=None,
        verbose=0,
        warm_start=False,
        n_jobs=None,
        device="cpu",
        pretrained=None,
    ):
        self.n_d = n_d
        self.n_a = n_a
        self.n_steps = n_steps
        self.gamma = gamma
        self.n_independent = n_independent
        self.n_shared = n_shared
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
        self.scoring = scoring
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start
        self.n_jobs = n_jobs
        self.device = device
        self.pretrained = pretrained

    # ----- hooks for the subclasses -------------------------------------------------------
    @abstractmethod
    def _encode_targets(self, y, fitting):
        """Validate ``y`` and return (targets as a numpy array for the loss, rows to stratify on or None)."""

    @abstractmethod
    def _output_dim(self):
        """Number of outputs of the network head."""

    @abstractmethod
    def _loss(self, output, target):
        """Per-sample loss, shape (batch,)."""

    @abstractmethod
    def _target_tensor(self, targets):
        """The target array as the tensor ``_loss`` expects."""

    def _fit_sample_weight(self, y, sample_weight, frame):
        return _check_sample_weight(sample_weight, frame, dtype=np.float64, ensure_non_negative=True)

    # ----- input validation ---------------------------------------------------------------
    def _validate_X(self, X, reset):
        """Check ``X``, record or compare its columns, and return it as a DataFrame (never a copy of one)."""
        return validate_frame(self, X, reset)

    def _encode_X(self, X):
        """Validate ``X`` against the fitted columns and return the float32 tensor for the network."""
        frame = self._validate_X(X, reset=False)
        return torch.from_numpy(self._encoder.transform(frame)).to(self._device)

    def _resolve_early_stopping(self, n_samples, has_validation_data):
        if self.early_stopping == "auto":
            return n_samples > _AUTO_EARLY_STOPPING_MIN_ROWS or has_validation_data
        return bool(self.early_stopping)

    # ----- fit ----------------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None, *, X_val=None, y_val=None, sample_weight_val=None):
        """Fit the model to ``X`` and ``y``.

        With ``warm_start=True`` and a fitted model, training continues from the current
        weights (same columns and, for a classifier, the same classes required) for up to
        ``max_epochs`` more epochs, and the fitted attributes are extended.

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)
            Training data. DataFrame columns of ``category``, ``object``, string or ``bool``
            dtype are categorical under ``categorical_features="auto"``. Numeric columns may
            hold missing values (NaN), not infinities.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the training rows in the loss (not a resampling). Rows of
            weight 0 are dropped before anything is learned from the data.
        X_val : pandas.DataFrame or array-like of shape (n_val_samples, n_features), default=None
            Validation data for early stopping and ``validation_scores_``; replaces the
            internal split of ``validation_fraction``.
        y_val : array-like of shape (n_val_samples,) or (n_val_samples, n_outputs), default=None
            Validation targets; required with ``X_val``.
        sample_weight_val : array-like of shape (n_val_samples,), default=None
            Weights of the validation rows in the validation score.

        Returns
        -------
        self : object
            The fitted estimator.

        Raises
        ------
        ValueError
            For invalid parameters (naming the parameter and the accepted values), inputs of
            inconsistent lengths, only one of ``X_val`` / ``y_val``, infinite numeric input,
            missing labels or non-finite regression targets, all-zero sample weights, an
            unavailable ``device``, or, with ``warm_start=True``, columns, classes or network
            parameters that differ from the fitted model's.
        TypeError
            For sparse input or unsupported column dtypes (datetime, complex).

        Warns
        -----
        sklearn.exceptions.ConvergenceWarning
            When ``max_epochs`` is reached while the monitored quantity still improves.
        UserWarning
            When a KeyboardInterrupt stops training: the model keeps the epochs done (and the
            best weights under early stopping) and stays usable.
        """
        return self._fit(
            X, y, sample_weight, X_val=X_val, y_val=y_val, sample_weight_val=sample_weight_val, incremental=False
        )

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, sample_weight=None):
        """Train for one epoch on ``X`` and ``y``, continuing from the current weights.

        The first call (on an unfitted model) builds the network and learns the columns, the
        categories and the target scaling from its data; later calls continue the same
        network, optimizer state and shuffling stream, so ``n`` calls on the same data equal
        ``fit`` with ``max_epochs=n`` without early stopping. There is no early stopping, no
        convergence test and no validation score in ``partial_fit``.

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)
            Training data, with the columns of the first call.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Targets, with the number of outputs of the first call.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the rows in the loss.

        Returns
        -------
        self : object
            The estimator, trained for one more epoch.

        Raises
        ------
        ValueError
            For invalid parameters, ``early_stopping=True``, or data whose columns or outputs
            differ from the fitted model's.
        """
        return self._fit(X, y, sample_weight, incremental=True)

    def _fit(self, X, y, sample_weight, *, X_val=None, y_val=None, sample_weight_val=None, incremental, classes=None):
        """The one implementation of ``fit`` (``incremental=False``) and ``partial_fit`` (``True``)."""
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None.")
        first_pass = not self.__sklearn_is_fitted__() or (not self.warm_start and not incremental)
        method = "partial_fit" if incremental else "fit with warm_start=True"
        if incremental:
            self._check_partial_fit_arguments(first_pass, classes)
        elif not first_pass:
            self._check_architecture_unchanged(method)
        device = resolve_device(self.device)
        with torch_threads(self.n_jobs):
            if first_pass:
                self._fitted = False  # a fit that fails half-way leaves the estimator unfitted, not mixed
                frame = self._validate_X(X, reset=True)
                frame, y, sample_weight = _drop_zero_weight_rows(frame, y, sample_weight)
                if classes is not None:  # the classifier's first partial_fit: classes_ from `classes`
                    self._encode_targets(np.asarray(classes), fitting=True)
                    self._check_continued_labels(y, incremental=True)
                    targets, stratify = self._encode_targets(y, fitting=False)
                else:
                    targets, stratify = self._encode_targets(y, fitting=True)
            else:
                frame = self._validate_X(X, reset=False)
                frame, y, sample_weight = _drop_zero_weight_rows(frame, y, sample_weight)
                self._check_continued_labels(y, incremental)
                targets, stratify = self._encode_targets(y, fitting=False)
            self._device = device
            if not first_pass:
                self.network_.to(device)
            self._fit_prepared(
                frame,
                targets,
                stratify,
                y,
                sample_weight,
                X_val,
                y_val,
                sample_weight_val,
                incremental=incremental,
                first_pass=first_pass,
            )
        return self

    def _fit_prepared(
        self, frame, targets, stratify, y, sample_weight, X_val, y_val, sample_weight_val, *, incremental, first_pass
    ):
        if len(targets) != frame.shape[0]:
            raise ValueError(
                f"X and y have inconsistent numbers of samples: X has {frame.shape[0]}, y has {len(targets)}."
            )
        weights = self._fit_sample_weight(y, sample_weight, frame)
        if (X_val is None) != (y_val is None):
            raise ValueError("X_val and y_val must be given together; got only one of them.")
        if sample_weight_val is not None and X_val is None:
            raise ValueError("sample_weight_val was given without X_val and y_val; it weights the rows of X_val.")
        keep = np.flatnonzero(weights > 0)
        if keep.size == 0:
            raise ValueError("sample_weight is zero for every row; at least one positive weight is required.")
        if keep.size < frame.shape[0]:
            frame, targets, weights = frame.iloc[keep], targets[keep], weights[keep]
            stratify = None if stratify is None else stratify[keep]

        random_state = check_random_state(self.random_state)
        seed = int(random_state.randint(np.iinfo(np.int32).max))
        has_validation = X_val is not None
        early_stopping = not incremental and self._resolve_early_stopping(frame.shape[0], has_validation)
        if early_stopping and not has_validation:
            frame, frame_val, targets, targets_val, weights, weights_val = self._split_validation(
                frame, targets, weights, stratify, seed
            )
            y_val_raw = self._raw_targets(targets_val)
        elif has_validation:
            check_consistent_length(X_val, y_val, sample_weight_val)
            frame_val = X_val
            targets_val, _ = self._encode_targets(y_val, fitting=False)
            weights_val = _check_sample_weight(
                sample_weight_val, targets_val, dtype=np.float64, ensure_non_negative=True
            )
            y_val_raw = y_val
        else:
            frame_val = None
        if frame.shape[0] < 2:
            raise ValueError(
                f"Training needs at least 2 rows for batch normalisation; got n_samples={frame.shape[0]} "
                "after dropping rows of zero sample_weight and holding out validation rows."
            )

        device = self._device
        pretrainer = self._fitted_pretrainer() if first_pass else None
        if first_pass:
            if pretrainer is None:
                self._encoder = TabularEncoder(self.categorical_features)
                X_train = torch.from_numpy(self._encoder.fit_transform(frame)).to(device)
            else:  # the pretrainer's column encoding, categories and standardisation
                self._encoder = copy.deepcopy(pretrainer._encoder)
                X_train = torch.from_numpy(self._encoder.transform(frame)).to(device)
                unseen = {frame.columns[j]: share for j, share in self._encoder.unseen_share(frame).items()}
                if any(share > 0.5 for share in unseen.values()):
                    columns = ", ".join(f"{name!r}: {share:.0%}" for name, share in unseen.items() if share > 0.5)
                    warnings.warn(
                        f"Most values of some categorical columns were not seen by the pretrainer ({columns}); they "
                        "map to the reserved 'unseen' code, so these columns carry little information. Pretrain on "
                        "data with the same categories.",
                        UserWarning,
                        stacklevel=5,
                    )
            names = self._feature_names()
            self.categories_ = {
                str(names[j]): np.asarray(categories, dtype=object)
                for j, categories in self._encoder.categories_.items()
            }
            self._fit_target_transform(targets)
        else:
            X_train = torch.from_numpy(self._encoder.transform(frame)).to(device)
        y_train = self._target_tensor(targets).to(device)
        w_train = torch.as_tensor(weights, dtype=torch.float32, device=device)

        if first_pass:
            widths = embedding_dims(self.cat_emb_dim, frame.columns, self._encoder.is_categorical_)
            self._attention_groups = attention_groups(self.grouped_features, frame.columns)
            groups, output_dim = self._attention_groups, self._output_dim()
            self._network_config = network_config(self, self._encoder, widths, groups, output_dim)
            with torch.random.fork_rng(devices=[]):  # seed the weights without touching the global RNG
                torch.manual_seed(seed)
                self.network_ = TabNet(**self._network_config)
            if pretrainer is not None:
                encoder_state = pretrainer.network_.encoder.state_dict()
                self.network_.load_state_dict(
                    {name: value for name, value in encoder_state.items() if not name.startswith("head.")}, strict=False
                )
            self._architecture = {name: copy.deepcopy(getattr(self, name)) for name in _ARCHITECTURE_PARAMETERS}
            self._optimizer_state = None
            generator = torch.Generator().manual_seed(seed)
        else:
            generator = torch.Generator()
            generator.set_state(self._shuffle_state)
        self.network_.to(device)

        score_function = None
        if frame_val is not None:
            # A scorer gets weights only when the user gave some, so a plain scorer(est, X, y) works.
            weights_given = (
                sample_weight is not None
                or sample_weight_val is not None
                or getattr(self, "class_weight", None) is not None
            )
            score_function = self._make_score_function(frame_val, targets_val, y_val_raw, weights_val, weights_given)
        epochs_before = 0 if first_pass else self.n_iter_
        config = TrainingConfig(
            batch_size=self.batch_size,
            max_epochs=1 if incremental else self.max_epochs,
            learning_rate=self.learning_rate,
            learning_rate_decay=self.learning_rate_decay,
            max_grad_norm=self.max_grad_norm,
            lambda_sparse=self.lambda_sparse,
            n_iter_no_change=self.n_iter_no_change,
            tol=self.tol,
            early_stopping=early_stopping,
            verbose=self.verbose,
            incremental=incremental,
            epoch_offset=epochs_before,
        )
        # The state is complete from here on, and a scorer given as `scoring` calls predict.
        self._fitted = True
        try:
            # As scikit-learn's MLP: partial_fit continues the optimizer (Adam's moments, the decayed
            # learning rate); fit, warm started or not, starts a fresh one at learning_rate.
            history = train_network(
                self.network_,
                self._loss,
                X_train,
                y_train,
                w_train,
                config,
                generator,
                score_function,
                optimizer_state=self._optimizer_state if incremental else None,
            )
        except BaseException:
            self._fitted = False
            raise
        self._record_history(history, early_stopping, first_pass)
        self._optimizer_state = history.optimizer_state
        self._shuffle_state = generator.get_state()
        self.feature_importances_ = self._training_importances(X_train, random_state)

    def _record_history(self, history, early_stopping, first_pass):
        """Set (first pass) or extend (warm start, partial_fit) the fitted training attributes."""
        n_new = len(history.loss_curve)
        previous_losses = [] if first_pass else list(self.loss_curve_)
        previous_scores = None if first_pass else self.validation_scores_
        previous_alphas = np.empty((0, self.n_steps)) if first_pass else self.entmax_alpha_history_
        n_before = len(previous_losses)
        self.loss_curve_ = previous_losses + history.loss_curve
        self.n_iter_ = len(self.loss_curve_)
        if not history.validation_scores and previous_scores is None:  # None, or [] if interrupted at once
            self.validation_scores_ = None
        else:  # epochs run without validation data (another call) score NaN
            self.validation_scores_ = (
                list(previous_scores) if previous_scores is not None else [np.nan] * n_before
            ) + (history.validation_scores if history.validation_scores is not None else [np.nan] * n_new)
        if early_stopping and history.best_iteration is not None:
            self.best_iteration_ = n_before + history.best_iteration
            self.best_validation_score_ = self.validation_scores_[self.best_iteration_]
        else:
            self.best_iteration_ = None
            self.best_validation_score_ = None
        self.entmax_alphas_ = np.asarray(self.network_.alphas)
        self.entmax_alpha_history_ = np.concatenate(
            [previous_alphas, np.asarray(history.alpha_history, dtype=np.float64).reshape(-1, self.n_steps)]
        )

    def _check_partial_fit_arguments(self, first_pass, classes):
        if self.early_stopping is True:
            raise ValueError(
                "partial_fit does not support early_stopping=True: it runs one epoch per call without a "
                "validation split; set early_stopping=False or 'auto' (off in partial_fit), or use fit."
            )
        if is_classifier(self):
            if getattr(self, "class_weight", None) == "balanced":
                raise ValueError(
                    "class_weight='balanced' is not supported by partial_fit: one batch's class frequencies are not "
                    "the data's. Compute the weights on all the data (sklearn.utils.class_weight."
                    "compute_class_weight) and pass them as a dict."
                )
            if first_pass and classes is None:
                raise ValueError(
                    "classes must be passed on the first call to partial_fit: the array of all class labels, "
                    "e.g. classes=np.unique(y_all)."
                )
            if classes is not None:
                if np.ndim(classes) != 1:
                    raise ValueError(f"classes must be a 1-D array of class labels, got shape {np.shape(classes)}.")
                if len(np.unique(classes)) < 2:
                    raise ValueError(
                        f"classes must list at least 2 class labels, got classes={list(classes)!r}; a classifier "
                        "needs two classes or more."
                    )
                if not first_pass and not np.array_equal(unique_labels(classes), self.classes_):
                    raise ValueError(
                        f"classes={unique_labels(classes).tolist()!r} differs from the classes of the fitted model, "
                        f"{self.classes_.tolist()!r}; pass the same classes or none after the first call."
                    )
        if not first_pass:
            self._check_architecture_unchanged("partial_fit")

    def _check_architecture_unchanged(self, method):
        for name in _ARCHITECTURE_PARAMETERS:
            before, now = self._architecture[name], getattr(self, name)
            if not _same_value(before, now):
                raise ValueError(
                    f"{method} continues the fitted network, which was built with {name}={before!r}; it is now "
                    f"{name}={now!r}. Restore it, or fit with warm_start=False to build a new network."
                )

    def _check_continued_labels(self, y, incremental):
        """With a fitted model, check that ``y`` fits its targets before continuing to train on it."""
        if not is_classifier(self):
            n_outputs = 1 if np.ndim(y) < 2 else np.shape(y)[1]
            if hasattr(self, "n_outputs_") and n_outputs != self.n_outputs_:
                raise ValueError(
                    f"y has {n_outputs} output(s) but the fitted model has n_outputs_={self.n_outputs_}; "
                    "partial_fit and warm_start need targets of the same shape."
                )
            return
        if not isinstance(self.classes_, np.ndarray) or np.ndim(y) > 2 or (np.ndim(y) == 2 and np.shape(y)[1] > 1):
            if incremental:
                raise ValueError(
                    "partial_fit supports one column of class labels (binary or multiclass y); got y of shape "
                    f"{np.shape(y)}. For multilabel or multi-output targets use fit with warm_start=True."
                )
            return  # multilabel / multi-output: the subclass's target encoding checks y
        labels = unique_labels(column_or_1d(y, warn=False) if np.ndim(y) == 2 else y)
        if incremental:
            unknown = np.setdiff1d(labels, self.classes_)
            if unknown.size:
                raise ValueError(
                    f"y has classes not in classes_: {unknown.tolist()!r}; classes_ is {self.classes_.tolist()!r} "
                    "(set by the classes argument of the first partial_fit call, or by fit)."
                )
        elif set(labels.tolist()) != set(self.classes_.tolist()):
            raise ValueError(
                "warm_start can only be used where y has the same classes as in the previous call to fit: "
                f"previously {self.classes_.tolist()!r}, y has {labels.tolist()!r}. Set warm_start=False to refit."
            )

    def __sklearn_is_fitted__(self):
        return getattr(self, "_fitted", False)

    def _fitted_pretrainer(self):
        """The fitted SparseTabNetPretrainer behind ``pretrained`` (None without one), checked against X."""
        from sklearn.frozen import FrozenEstimator

        from .pretraining import ENCODER_PARAMETERS, SparseTabNetPretrainer

        if self.pretrained is None:
            return None
        pretrainer = self.pretrained.estimator if isinstance(self.pretrained, FrozenEstimator) else self.pretrained
        if not isinstance(pretrainer, SparseTabNetPretrainer):
            raise ValueError(
                f"pretrained must be a fitted SparseTabNetPretrainer (or a FrozenEstimator of one), got "
                f"{type(pretrainer).__name__}."
            )
        if not pretrainer.__sklearn_is_fitted__():
            raise ValueError(
                "pretrained is a SparseTabNetPretrainer that is not fitted. Fit it first; inside GridSearchCV, "
                "cross_val_score or any other clone(), pass sklearn.frozen.FrozenEstimator(pretrainer), which "
                "clone keeps as it is (a plain estimator parameter is cloned unfitted)."
            )
        mismatched = [
            f"{name}={getattr(self, name)!r} (pretrained: {getattr(pretrainer, name)!r})"
            for name in ENCODER_PARAMETERS
            if not _same_value(getattr(self, name), getattr(pretrainer, name))
        ]
        if mismatched:
            raise ValueError(
                "The architecture differs from the pretrained encoder's: " + ", ".join(mismatched) + ". Use the "
                "pretrainer's values for these parameters."
            )
        ours, theirs = getattr(self, "feature_names_in_", None), getattr(pretrainer, "feature_names_in_", None)
        if self.n_features_in_ != pretrainer.n_features_in_ or (
            (ours is None) != (theirs is None) or (ours is not None and list(ours) != list(theirs))
        ):
            raise ValueError(
                f"X's columns differ from the pretrained encoder's: X has "
                f"{list(ours) if ours is not None else self.n_features_in_} and the pretrainer was fitted on "
                f"{list(theirs) if theirs is not None else pretrainer.n_features_in_} (names and order must match)."
            )
        return pretrainer

    def _split_validation(self, frame, targets, weights, stratify, seed):
        n_samples = frame.shape[0]
        if stratify is not None:
            _, counts = np.unique(stratify, return_counts=True)
            n_validation = int(np.ceil(self.validation_fraction * n_samples))
            if counts.min() < 2 or n_validation < len(counts) or n_samples - n_validation < len(counts):
                stratify = None
        try:
            train_index, val_index = train_test_split(
                np.arange(n_samples), test_size=self.validation_fraction, random_state=seed, stratify=stratify
            )
        except ValueError as error:
            raise ValueError(
                f"Cannot hold out validation_fraction={self.validation_fraction} of {n_samples} rows for early "
                "stopping; use more data, another validation_fraction, or early_stopping=False."
            ) from error
        return (
            frame.iloc[train_index],
            frame.iloc[val_index],
            targets[train_index],
            targets[val_index],
            weights[train_index],
            weights[val_index],
        )

    def _raw_targets(self, targets):
        """Targets in the user's form, for scorers (subclasses override when they encode)."""
        return targets

    def _fit_target_transform(self, targets):
        """Learn target scaling (regression); nothing by default."""

    def _make_score_function(self, frame_val, targets_val, y_val_raw, weights_val, pass_weights):
        if self.scoring == "loss":
            X_val = self._encode_X(frame_val)
            y_val = self._target_tensor(targets_val).to(self._device)
            w_val = torch.as_tensor(weights_val, dtype=torch.float32, device=self._device)

            def negative_validation_loss():
                self.network_.eval()
                with torch.inference_mode():
                    losses = torch.cat(
                        [
                            self._loss(
                                self.network_(X_val[start : start + INFERENCE_BATCH_ROWS])[0],
                                y_val[start : start + INFERENCE_BATCH_ROWS],
                            )
                            for start in range(0, X_val.shape[0], INFERENCE_BATCH_ROWS)
                        ]
                    )
                    return -float((losses * w_val).sum() / w_val.sum())

            return negative_validation_loss
        scorer = check_scoring(self, scoring=self.scoring)

        def validation_score():
            if pass_weights:
                return scorer(self, frame_val, y_val_raw, sample_weight=weights_val)
            return scorer(self, frame_val, y_val_raw)

        return validation_score

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        tags.input_tags.allow_nan = True  # missing numeric values are learned (InputEmbedding)
        return tags
