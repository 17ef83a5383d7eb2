"""SparseTabNetClassifier and SparseTabNetRegressor: loss, target encoding and outputs."""

import numpy as np
import torch
from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import (
    _check_sample_weight,
    check_array,
    check_is_fitted,
    column_or_1d,
)

from ._base import BaseSparseTabNet

__all__ = ["SparseTabNetClassifier", "SparseTabNetRegressor"]

_COMMON_PARAMETERS = """
    Parameters
    ----------
    n_d : int, default=8
        Width of the decision features ``d`` of each step (paper: ``N_d``).
    n_a : int, default=8
        Width of the attention features ``a`` of each step (paper: ``N_a``).
    n_steps : int, default=3
        Number of decision steps (paper: ``N_steps``).
    gamma : float, default=1.3
        Relaxation of the prior scale, >= 1: with 1 each column can be used at one step only.
    n_independent : int, default=2
        Step-dependent GLU layers per feature transformer.
    n_shared : int, default=2
        GLU layers shared by all feature transformers (``n_independent + n_shared >= 1``).
    lambda_sparse : float, default=1e-3
        Weight of the sparsity regulariser (mean entropy of the masks) in the loss.
    virtual_batch_size : int, default=128
        Rows per virtual batch of ghost batch normalisation (paper: ``B_V``).
    momentum : float, default=0.02
        Batch norm momentum, PyTorch convention (the paper's ``m_B`` equals ``1 - momentum``).
    batch_size : int, default=1024
        Rows per optimisation step (paper: ``B``). Batches of an epoch have near-equal sizes, so a
        training set smaller than ``batch_size`` still gives one step per epoch.
    max_epochs : int, default=100
        Maximum number of passes over the training data.
    learning_rate : float, default=0.02
        Adam's learning rate.
    learning_rate_decay : float, default=1.0
        Factor in (0, 1] applied to the learning rate after every epoch (1: constant rate).
    max_grad_norm : float or None, default=1.0
        Gradients are clipped to this global L2 norm before each step; None disables clipping.
    entmax_mode : {"sparsemax", "entmax15", "constant", "adaptive"}, default="sparsemax"
        The sparse map of the attentive transformers: sparsemax (alpha = 2), 1.5-entmax,
        alpha-entmax with the fixed ``entmax_alpha``, or alpha-entmax with one alpha per
        decision step learned from ``entmax_alpha`` (kept in (1, 2)).
    entmax_alpha : float, default=1.5
        Alpha in [1, 2] for ``entmax_mode="constant"`` (1 is softmax, 2 sparsemax), initial
        alpha in (1, 2) for ``"adaptive"``; ignored otherwise.
    categorical_features : "auto", None, array-like of str, int or bool, default="auto"
        Categorical columns, embedded and attended to as one group each. ``"auto"``: DataFrame
        columns of ``category``, ``object``, string or ``bool`` dtype. Otherwise column names,
        indices or a boolean mask (needed for integer-coded categories and numpy input).
        Missing values and categories unseen at fit map to a reserved embedding row.
    cat_emb_dim : int or dict, default=1
        Embedding width of the categorical columns: one int for all, or a dict mapping column
        names (DataFrame input) or indices to widths, other categorical columns getting 1.
        Whatever the width, all embedding dimensions of a column form one attention group:
        the masks keep or drop the column as a whole.
    grouped_features : list of list of str or int, default=None
        Groups of columns (names or indices) that share one attention weight, e.g. the
        one-hot columns of one variable or several measurements of one quantity (as
        ``grouped_features`` in pytorch-tabnet 4). A column belongs to one group at most;
        ungrouped columns are attended to alone. In :meth:`explain` the columns of a group
        share its mask value equally.
    early_stopping : "auto" or bool, default="auto"
        Stop when the validation score has not improved by ``tol`` for ``n_iter_no_change``
        epochs and restore the best epoch's weights. ``"auto"``: on when there are more than
        10,000 training rows or ``X_val`` is given. Without early stopping, training stops when
        the training loss stops improving, as in :class:`sklearn.neural_network.MLPClassifier`.
    validation_fraction : float, default=0.1
        Share of the training rows held out for early stopping when ``X_val`` is not given
        (stratified for classification when every class has two rows or more).
    n_iter_no_change : int, default=10
        Patience in epochs.
    tol : float, default=1e-4
        Minimum improvement of the monitored quantity.
    scoring : "loss", str or callable, default="loss"
        Validation score: ``"loss"`` is the negative weighted validation loss; otherwise a
        scikit-learn scorer name or a callable ``scorer(estimator, X, y, sample_weight=...)``.
    random_state : int, RandomState instance or None, default=None
        Seeds the weights, the shuffling and the validation split. The global RNGs of numpy
        and torch are left untouched.
    verbose : int, default=0
        Print the loss and validation score after every epoch when > 0.
    device : str or torch.device, default="cpu"
        Torch device for training and inference.
"""

_COMMON_ATTRIBUTES = """
    n_features_in_ : int
        Number of input columns seen at fit.
    feature_names_in_ : numpy.ndarray of shape (n_features_in_,)
        Column names seen at fit, when ``X`` had string column names.
    feature_importances_ : numpy.ndarray of shape (n_features_in_,)
        Mean of the per-row aggregate importances (see :meth:`explain`) over the training
        rows, rows whose importances are all zero excluded, on a random subsample of 10,000
        rows when there are more; sums to 1 (uniform if every row is all zero).
    n_iter_ : int
        Number of epochs run.
    loss_curve_ : list of float
        Mean training objective per epoch.
    validation_scores_ : list of float or None
        Validation score per epoch (higher is better; ``-loss`` for ``scoring="loss"``), None
        without validation data.
    best_validation_score_ : float or None
        Best validation score when early stopping is on, else None.
    best_epoch_ : int or None
        Zero-based epoch whose weights were restored by early stopping, else None.
    entmax_alphas_ : numpy.ndarray of shape (n_steps,)
        Alpha of each decision step's map after training.
    entmax_alpha_history_ : numpy.ndarray of shape (n_iter_, n_steps)
        Alpha of each step after each epoch (constant unless ``entmax_mode="adaptive"``).
    network_ : sparsetab.network.TabNet
        The trained torch module.
"""

_REFERENCES = """
    References
    ----------
    Arik, S. O. and Pfister, T. (2021). TabNet: Attentive Interpretable Tabular Learning.
    AAAI 35(8), 6679-6687.

    Peters, B., Niculae, V. and Martins, A. F. T. (2019). Sparse Sequence-to-Sequence Models.
    ACL.
"""


class SparseTabNetClassifier(ClassifierMixin, BaseSparseTabNet):
    __doc__ = (
        """TabNet classifier with sparse (entmax-family) feature attention.

    A scikit-learn classifier: ``fit`` returns self, and the estimator works in Pipelines,
    grid searches, ``clone`` and pickle. Each prediction's feature selection is available from
    :meth:`explain`. pandas DataFrames with string and categorical columns are accepted as they
    are (see ``categorical_features``).
"""
        + _COMMON_PARAMETERS
        + """    class_weight : dict, "balanced" or None, default=None
        Weights of the classes in the loss, multiplied with ``sample_weight``; ``"balanced"``
        uses ``n_samples / (n_classes * bincount(y))``.

    Attributes
    ----------
    classes_ : numpy.ndarray of shape (n_classes,)
        Class labels, sorted, with the dtype of ``y``.
"""
        + _COMMON_ATTRIBUTES
        + _REFERENCES
        + """
    Examples
    --------
    >>> from sparsetab import SparseTabNetClassifier
    >>> from sparsetab.datasets import load_adult
    >>> X_train, X_test, y_train, y_test = load_adult(return_X_y=True)
    >>> model = SparseTabNetClassifier(random_state=0).fit(X_train, y_train)  # doctest: +SKIP
    >>> model.explain(X_test.head()).importances.shape  # doctest: +SKIP
    (5, 14)
"""
    )

    _parameter_constraints = {
        **BaseSparseTabNet._parameter_constraints,
        "class_weight": [dict, StrOptions({"balanced"}), None],
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
        class_weight=None,
        random_state=None,
        verbose=0,
        device="cpu",
    ):
        super().__init__(
            n_d=n_d,
            n_a=n_a,
            n_steps=n_steps,
            gamma=gamma,
            n_independent=n_independent,
            n_shared=n_shared,
            lambda_sparse=lambda_sparse,
            virtual_batch_size=virtual_batch_size,
            momentum=momentum,
            batch_size=batch_size,
            max_epochs=max_epochs,
            learning_rate=learning_rate,
            learning_rate_decay=learning_rate_decay,
            max_grad_norm=max_grad_norm,
            entmax_mode=entmax_mode,
            entmax_alpha=entmax_alpha,
            categorical_features=categorical_features,
            cat_emb_dim=cat_emb_dim,
            grouped_features=grouped_features,
            early_stopping=early_stopping,
            validation_fraction=validation_fraction,
            n_iter_no_change=n_iter_no_change,
            tol=tol,
            scoring=scoring,
            random_state=random_state,
            verbose=verbose,
            device=device,
        )
        self.class_weight = class_weight

    def _encode_targets(self, y, fitting):
        y = check_array(y, ensure_2d=False, dtype=None, ensure_all_finite=False, input_name="y")
        if y.ndim == 2 and y.shape[1] > 1:
            raise ValueError(
                f"y has shape {y.shape}; SparseTabNetClassifier supports a single target column "
                f"(type_of_target(y) is {type_of_target(y)!r})."
            )
        y = column_or_1d(y, warn=True)
        if y.dtype.kind == "f" and np.isnan(y).any():
            raise ValueError(f"y contains {int(np.isnan(y).sum())} NaN label(s); remove or label those rows.")
        check_classification_targets(y)
        if fitting:
            self.classes_ = np.unique(y)
            if len(self.classes_) < 2:
                raise ValueError(
                    f"y contains only one class ({self.classes_[0]!r}); a classifier needs samples of "
                    "at least 2 classes."
                )
            codes = np.searchsorted(self.classes_, y)
            return codes, codes
        codes = np.searchsorted(self.classes_, y)
        unknown = (codes >= len(self.classes_)) | (self.classes_[np.minimum(codes, len(self.classes_) - 1)] != y)
        if unknown.any():
            raise ValueError(
                f"y_val contains labels not seen in y: {np.unique(y[unknown]).tolist()!r}; known classes are "
                f"{self.classes_.tolist()!r}."
            )
        return codes, codes

    def _fit_sample_weight(self, y, sample_weight, frame):
        weights = _check_sample_weight(sample_weight, frame, dtype=np.float64, ensure_non_negative=True)
        if self.class_weight is not None:
            weights = weights * compute_sample_weight(self.class_weight, column_or_1d(np.asarray(y)))
        return weights

    def _raw_targets(self, targets):
        return self.classes_[targets]

    def _output_dim(self):
        return len(self.classes_)

    def _target_tensor(self, targets):
        return torch.as_tensor(targets, dtype=torch.long, device=self.device)

    def _loss(self, output, target):
        return torch.nn.functional.cross_entropy(output, target, reduction="none")

    def _serving_output(self):
        return {
            "transform": "softmax",
            "description": f"float64 (batch, n_classes): class probabilities for classes {self.classes_.tolist()!r}",
        }

    def predict_proba(self, X):
        """Class probabilities.

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)

        Returns
        -------
        numpy.ndarray of shape (n_samples, n_classes), float64
            Softmax of the network's outputs; columns follow ``classes_``.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If the estimator is not fitted.
        ValueError
            If ``X`` does not have the columns seen at fit.
        """
        check_is_fitted(self)
        logits = torch.from_numpy(self._raw_output(X)).double()
        return torch.softmax(logits, dim=1).numpy()

    def predict(self, X):
        """Predicted class labels.

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)

        Returns
        -------
        numpy.ndarray of shape (n_samples,)
            Labels from ``classes_`` (same dtype as the ``y`` seen at fit).

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If the estimator is not fitted.
        ValueError
            If ``X`` does not have the columns seen at fit.
        """
        check_is_fitted(self)
        return self.classes_[np.argmax(self._raw_output(X), axis=1)]


class SparseTabNetRegressor(RegressorMixin, BaseSparseTabNet):
    __doc__ = (
        """TabNet regressor with sparse (entmax-family) feature attention.

    A scikit-learn regressor for one or several targets. Targets are standardised internally
    (training mean and standard deviation per output) and predictions are mapped back, so an
    offset or scaled target trains as well as a centred one. The loss is the mean squared error.
"""
        + _COMMON_PARAMETERS
        + """
    Attributes
    ----------
    n_outputs_ : int
        Number of targets.
    target_mean_ : numpy.ndarray of shape (n_outputs_,)
        Mean of each target over the training rows.
    target_scale_ : numpy.ndarray of shape (n_outputs_,)
        Standard deviation of each target over the training rows (1 for a constant target).
"""
        + _COMMON_ATTRIBUTES
        + _REFERENCES
    )

    def _encode_targets(self, y, fitting):
        y = check_array(y, ensure_2d=False, dtype=np.float64, ensure_all_finite=False, input_name="y")
        if y.ndim > 2:
            raise ValueError(f"y must be 1-D or 2-D, got shape {y.shape}.")
        if not np.isfinite(y).all():
            raise ValueError(
                f"y contains {int((~np.isfinite(y)).sum())} NaN or infinite value(s); regression targets "
                "must be finite."
            )
        if fitting:
            self._y_ndim = y.ndim
            self.n_outputs_ = 1 if y.ndim == 1 else y.shape[1]
        elif (1 if y.ndim == 1 else y.shape[1]) != self.n_outputs_:
            raise ValueError(f"y_val has {y.shape[1] if y.ndim == 2 else 1} output(s); y had {self.n_outputs_}.")
        return y.reshape(len(y), -1), None

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    def _fit_target_transform(self, targets):
        self.target_mean_ = targets.mean(axis=0)
        scale = targets.std(axis=0)
        self.target_scale_ = np.where(scale > 0, scale, 1.0)

    def _raw_targets(self, targets):
        return targets.ravel() if self._y_ndim == 1 else targets

    def _output_dim(self):
        return self.n_outputs_

    def _target_tensor(self, targets):
        standardised = (targets - self.target_mean_) / self.target_scale_
        return torch.as_tensor(standardised, dtype=torch.float32, device=self.device)

    def _loss(self, output, target):
        return ((output - target) ** 2).mean(dim=1)

    def _serving_output(self):
        return {
            "transform": "affine",
            "target_mean": self.target_mean_,
            "target_scale": self.target_scale_,
            "description": f"float64 (batch, {self.n_outputs_}): predicted targets in their original units",
        }

    def predict(self, X):
        """Predicted targets.

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)

        Returns
        -------
        numpy.ndarray of shape (n_samples,) or (n_samples, n_outputs_), float64
            1-D when ``y`` was 1-D at fit.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If the estimator is not fitted.
        ValueError
            If ``X`` does not have the columns seen at fit.
        """
        check_is_fitted(self)
        prediction = self._raw_output(X).astype(np.float64) * self.target_scale_ + self.target_mean_
        return prediction.ravel() if self._y_ndim == 1 else prediction
