"""SparseTabNetClassifier and SparseTabNetRegressor: loss, target encoding and outputs."""

import numpy as np
import pandas as pd
import torch
from sklearn.base import ClassifierMixin, RegressorMixin, _fit_context
from sklearn.preprocessing import LabelBinarizer
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import (
    _check_sample_weight,
    check_array,
    check_consistent_length,
    check_is_fitted,
    column_or_1d,
)

from ._base import BaseSparseTabNet

__all__ = ["SparseTabNetClassifier", "SparseTabNetRegressor"]

# The 2-D target types of scikit-learn's type_of_target that the classifier accepts.
_MULTILABEL = "multilabel-indicator"
_MULTIOUTPUT = "multiclass-multioutput"

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
        Missing values and categories unseen at fit map to a reserved embedding row. Missing
        values (NaN) in numeric columns get a learned fill value per column and, for columns
        with missing values at fit, a missing indicator in the column's attention group;
        infinite values are a ValueError.
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
        0 prints nothing; > 0 prints one line per epoch: the epoch number, the training loss,
        the validation score (when there is one) and the epoch's duration in seconds.
    warm_start : bool, default=False
        When True and the model is fitted, ``fit`` continues training the fitted network (its
        weights, columns, categories, target scaling and classes; ``y`` must have the same
        classes) for up to ``max_epochs`` more epochs with a fresh optimizer, and extends
        ``loss_curve_``, ``validation_scores_`` and ``entmax_alpha_history_``. Changing a
        parameter the network is built from (``n_d``, ``n_steps``, ``entmax_mode``,
        ``categorical_features``, ...) in between is an error. See also :meth:`partial_fit`.
    n_jobs : int or None, default=None
        Number of torch threads (``torch.set_num_threads``) used inside ``fit``,
        ``partial_fit``, ``predict``, ``predict_proba`` and ``explain``; the previous thread
        count is restored afterwards. Negative values follow joblib (-1: all CPUs). None
        leaves torch's thread count as it is.
    device : str or torch.device, default="cpu"
        Torch device for training and inference: ``"cpu"``, ``"cuda"``, ``"cuda:N"``,
        ``"auto"`` (``"cuda"`` when available, else ``"cpu"``) or a ``torch.device``. A device
        that is not available raises a ValueError at fit, never a silent fallback. A model
        fitted on a GPU unpickles on a machine without one: its network is then loaded on
        the CPU (with a warning).
    pretrained : SparseTabNetPretrainer, FrozenEstimator of one, or None, default=None
        A fitted :class:`~sparsetab.pretraining.SparseTabNetPretrainer`: ``fit`` then starts
        from its encoder weights (the head is new) and uses its column encoding and
        categories. Its architecture parameters (n_d, n_a, n_steps, gamma, n_independent,
        n_shared, entmax_mode, entmax_alpha, categorical_features, cat_emb_dim,
        grouped_features) and X's columns must match, else ``fit`` raises a ValueError.
        ``clone`` (GridSearchCV, cross_val_score) turns an estimator parameter into an unfitted
        copy: pass ``sklearn.frozen.FrozenEstimator(pretrainer)`` there, which clone keeps.
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
    categories_ : dict of str -> numpy.ndarray
        For each categorical column (by name, or ``x0, x1, ...`` for input without column
        names), the categories seen at fit in code order: ``categories_[name][c]`` has
        embedding row ``c + 1``; row 0 is kept for missing values and unseen categories.
    n_iter_ : int
        Number of epochs run, over all the calls of ``fit`` with ``warm_start=True`` and of
        :meth:`partial_fit` since the model was built; ``len(loss_curve_)``.
    loss_curve_ : list of float of shape (n_iter_,)
        Mean training objective per epoch.
    validation_scores_ : list of float of shape (n_iter_,) or None
        Validation score per epoch (higher is better; ``-loss`` for ``scoring="loss"``), None
        when no epoch had validation data (no early stopping and no ``X_val``); NaN for the
        epochs of calls without validation data.
    best_validation_score_ : float or None
        Best validation score of the last ``fit`` when early stopping was on, else None.
    best_iteration_ : int or None
        Zero-based epoch (index into ``loss_curve_``) whose weights early stopping restored in
        the last ``fit``, else None.
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


def _count_by_column(flags):
    """``"3"`` for a 1-D boolean array, ``"3 (column 0: 1, column 2: 2)"`` for a 2-D one."""
    total = int(flags.sum())
    if flags.ndim == 1 or total == 0:
        return str(total)
    per_column = ", ".join(f"column {j}: {int(count)}" for j, count in enumerate(flags.sum(axis=0)) if count)
    return f"{total} ({per_column})"


class SparseTabNetClassifier(ClassifierMixin, BaseSparseTabNet):
    __doc__ = (
        """TabNet classifier with sparse (entmax-family) feature attention.

    A scikit-learn classifier: ``fit`` returns self, and the estimator works in Pipelines,
    grid searches, ``clone`` and pickle. Each prediction's feature selection is available from
    :meth:`explain`. pandas DataFrames with string and categorical columns are accepted as they
    are (see ``categorical_features``).

    The target follows scikit-learn's :func:`~sklearn.utils.multiclass.type_of_target`:

    - 1-D ``y`` (``"binary"`` or ``"multiclass"``, any label type: numbers, strings, bools):
      one softmax head and the cross-entropy loss; ``predict`` returns labels from
      ``classes_`` with the dtype of ``y``. Labels mixing types (e.g. strings and numbers)
      raise scikit-learn's "Unknown label type" ``ValueError``.
    - 2-D ``y`` of 0/1 (``"multilabel-indicator"``, one column per label): one sigmoid per
      column and the sum of the columns' binary cross-entropies, as
      :class:`~sklearn.neural_network.MLPClassifier`; ``predict`` returns the (n_samples,
      n_labels) 0/1 matrix (probability > 0.5) and ``predict_proba`` the (n_samples,
      n_labels) probabilities.
    - other 2-D ``y`` (``"multiclass-multioutput"``, one column per task, any labels): one
      softmax block per column over the concatenated outputs of the head and the sum of the
      columns' cross-entropies (multi-task learning with shared attention); as
      :class:`~sklearn.ensemble.RandomForestClassifier`, ``predict`` returns (n_samples,
      n_outputs) labels, ``predict_proba`` a list of arrays and ``classes_`` a list.

    The validation split of early stopping is stratified for a 1-D ``y`` only.
"""
        + _COMMON_PARAMETERS
        + """    class_weight : dict, list of dict, "balanced" or None, default=None
        Weights of the classes in the loss, multiplied with ``sample_weight`` (computed with
        :func:`sklearn.utils.class_weight.compute_sample_weight`). For a 1-D ``y``: a dict
        ``{label: weight}`` or ``"balanced"``, which uses ``n_samples / (n_classes *
        bincount(y))``. For a 2-D ``y``: a list of one dict per column (for a label indicator
        matrix, each mapping 0 and 1 to weights) or ``"balanced"``; the weights of a row's
        columns are multiplied.

    Attributes
    ----------
    classes_ : numpy.ndarray of shape (n_classes,) or list of numpy.ndarray
        Class labels, sorted, with the dtype of ``y``. For a label indicator matrix,
        ``numpy.arange(n_labels)`` (the label columns, as
        :class:`~sklearn.neural_network.MLPClassifier`); for ``"multiclass-multioutput"``, a
        list holding each column's sorted labels.
    n_outputs_ : int
        Number of target columns: 1 for a 1-D ``y``, else ``y.shape[1]``.
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
        "class_weight": [dict, list, StrOptions({"balanced"}), None],
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
        warm_start=False,
        n_jobs=None,
        device="cpu",
        pretrained=None,
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
            warm_start=warm_start,
            n_jobs=n_jobs,
            device=device,
            pretrained=pretrained,
        )
        self.class_weight = class_weight

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, sample_weight=None, classes=None):
        """Train for one epoch on ``X`` and ``y``, continuing from the current weights.

        The first call (on an unfitted model) builds the network and learns the columns and
        categories from its data, and the classes from ``classes``; later calls continue the
        same network, optimizer state and shuffling stream, so ``n`` calls on the same data
        equal ``fit`` with ``max_epochs=n`` without early stopping. There is no early stopping,
        no convergence test and no validation score in ``partial_fit``.

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)
            Training data, with the columns of the first call.
        y : array-like of shape (n_samples,)
            Class labels, each one of ``classes_`` (binary and multiclass targets; use ``fit``
            with ``warm_start=True`` for multilabel and multi-output targets).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the rows in the loss (multiplied by ``class_weight`` when
            it is a dict).
        classes : array-like of shape (n_classes,), default=None
            All the class labels, required on the first call (a batch may lack some of them),
            optional later (then equal to ``classes_``).

        Returns
        -------
        self : object
            The estimator, trained for one more epoch.

        Raises
        ------
        ValueError
            Without ``classes`` on the first call, with labels not in ``classes_``,
            ``early_stopping=True`` or ``class_weight="balanced"``, or data whose columns differ
            from the fitted model's.
        """
        return self._fit(X, y, sample_weight, incremental=True, classes=classes)

    # ----- targets --------------------------------------------------------------------------
    # Three kinds of target, after scikit-learn's type_of_target at fit (``_target_type``):
    # "binary"/"multiclass" (1-D, one softmax head over classes_), "multilabel-indicator"
    # (2-D 0/1, one sigmoid per column) and "multiclass-multioutput" (2-D labels, one softmax
    # per column over the concatenated logits of the head).

    def _output_blocks(self):
        """Widths of the consecutive softmax blocks of the head (multiclass-multioutput)."""
        return [len(classes) for classes in self.classes_]

    def _encode_targets(self, y, fitting, input_name=None):
        # Without fitting, y is y_val, or y of a continued fit (warm_start), which passes input_name="y".
        name = input_name or ("y" if fitting else "y_val")
        y = check_array(y, ensure_2d=False, dtype=None, ensure_all_finite=False, input_name=name)
        if y.ndim == 2 and y.shape[1] == 1:
            y = column_or_1d(y, warn=True)
        missing = pd.isna(y) if y.dtype.kind in "fO" else np.zeros(y.shape, dtype=bool)
        if missing.any():
            raise ValueError(
                f"{name} contains {_count_by_column(missing)} missing label(s) (NaN or None); remove or label those "
                "rows."
            )
        if fitting:
            check_classification_targets(y)
            self._target_type = type_of_target(y, input_name="y")
            self._y_dtype = y.dtype
            self.n_outputs_ = 1 if y.ndim == 1 else y.shape[1]
        elif (y.ndim == 1) != (self.n_outputs_ == 1) or (y.ndim == 2 and y.shape[1] != self.n_outputs_):
            raise ValueError(
                f"{name} has shape {y.shape} but the model was fitted on y with {self.n_outputs_} output column(s) "
                f"(type_of_target {self._target_type!r}); {name} needs the same number of columns."
            )
        if self._target_type == _MULTILABEL:
            return self._encode_multilabel(y, fitting, name), None
        if self._target_type == _MULTIOUTPUT:
            return self._encode_multioutput(y, fitting, name), None
        if fitting:
            self.classes_ = np.unique(y)
            if len(self.classes_) < 2:
                raise ValueError(
                    f"y contains only one class ({self.classes_[0]!r}); a classifier needs samples of "
                    "at least 2 classes."
                )
        codes = _label_codes(self.classes_, y, name)
        return codes, codes

    def _encode_multilabel(self, y, fitting, name):
        values = np.unique(y)
        if not np.isin(values, [0, 1]).all():
            raise ValueError(
                f"{name} is a label indicator matrix (type_of_target "
                f"'multilabel-indicator') with values {values.tolist()!r}; it must hold 0 and 1 only "
                "(or booleans), one column per label."
            )
        if fitting:
            self.classes_ = LabelBinarizer().fit(y).classes_
        return y.astype(np.float32)

    def _encode_multioutput(self, y, fitting, name):
        if fitting:
            self.classes_ = [np.unique(y[:, k]) for k in range(y.shape[1])]
        return np.column_stack(
            [_label_codes(classes, y[:, k], f"{name}[:, {k}]") for k, classes in enumerate(self.classes_)]
        )

    def _fit_sample_weight(self, y, sample_weight, frame):
        weights = _check_sample_weight(sample_weight, frame, dtype=np.float64, ensure_non_negative=True)
        if self.class_weight is None:
            return weights
        y = check_array(y, ensure_2d=False, dtype=None, ensure_all_finite=False, input_name="y")
        if y.ndim == 2 and y.shape[1] == 1:
            y = y.ravel()
        if y.ndim == 1 and isinstance(self.class_weight, list):
            raise ValueError(
                f"class_weight is a list of {len(self.class_weight)} dict(s), which is for 2-D y (one dict per "
                "output column); for a 1-D y give a dict {label: weight} or 'balanced'."
            )
        if y.ndim == 2 and isinstance(self.class_weight, dict):
            raise ValueError(
                f"class_weight is a dict but y has {y.shape[1]} output columns (type_of_target "
                f"{self._target_type!r}); give a list of {y.shape[1]} dicts, one per column (for a label "
                "indicator matrix, each mapping 0 and 1 to weights), or 'balanced'."
            )
        if y.ndim == 2 and isinstance(self.class_weight, list) and len(self.class_weight) != y.shape[1]:
            raise ValueError(
                f"class_weight is a list of {len(self.class_weight)} dict(s) but y has {y.shape[1]} output "
                "columns; give one dict per column."
            )
        # For 2-D y the weights of the columns are multiplied, as in scikit-learn's forests.
        return weights * compute_sample_weight(self.class_weight, y)

    def _raw_targets(self, targets):
        if self._target_type == _MULTILABEL:
            return targets.astype(self._y_dtype)
        if self._target_type == _MULTIOUTPUT:
            raw = np.empty(targets.shape, dtype=self._y_dtype)
            for k, classes in enumerate(self.classes_):
                raw[:, k] = classes[targets[:, k]]
            return raw
        return self.classes_[targets]

    def _output_dim(self):
        if self._target_type == _MULTIOUTPUT:
            return sum(self._output_blocks())
        return len(self.classes_)

    def _target_tensor(self, targets):
        dtype = torch.float32 if self._target_type == _MULTILABEL else torch.long
        return torch.as_tensor(targets, dtype=dtype, device=self._device)

    def _loss(self, output, target):
        if self._target_type == _MULTILABEL:
            # One sigmoid per label: the binary log-losses of the columns, summed (as MLPClassifier).
            return torch.nn.functional.binary_cross_entropy_with_logits(output, target, reduction="none").sum(dim=1)
        if self._target_type == _MULTIOUTPUT:
            # One softmax per output column over its slice of the head: the cross-entropies, summed.
            blocks = output.split(self._output_blocks(), dim=1)
            return sum(
                torch.nn.functional.cross_entropy(block, target[:, k], reduction="none")
                for k, block in enumerate(blocks)
            )
        return torch.nn.functional.cross_entropy(output, target, reduction="none")

    def _serving_output(self):
        if self._target_type == _MULTILABEL:
            return {
                "transform": "sigmoid",
                "description": (
                    f"float64 (batch, {self.n_outputs_}): probability that each of the {self.n_outputs_} labels "
                    "(columns of y) is 1; predict is probability > 0.5"
                ),
            }
        if self._target_type == _MULTIOUTPUT:
            blocks = self._output_blocks()
            return {
                "transform": "softmax",
                "softmax_blocks": blocks,
                "description": (
                    f"float64 (batch, {sum(blocks)}): for each of the {self.n_outputs_} output columns in turn, a "
                    f"block of class probabilities (block widths {blocks}, summing to 1 each) for the classes "
                    f"{[classes.tolist() for classes in self.classes_]!r}"
                ),
            }
        return {
            "transform": "softmax",
            "description": f"float64 (batch, n_classes): class probabilities for classes {self.classes_.tolist()!r}",
        }

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_label = True
        tags.target_tags.multi_output = True
        return tags

    # ----- outputs --------------------------------------------------------------------------
    def predict_proba(self, X):
        """Class probabilities.

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)
            Rows with the columns seen at fit.

        Returns
        -------
        proba : numpy.ndarray of shape (n_samples, n_classes) or list of such arrays, float64
            For a 1-D ``y``: the softmax of the network's outputs, columns in the order of
            ``classes_``. For a label indicator matrix (``"multilabel-indicator"``): shape
            (n_samples, n_outputs_), the probability that each label is 1 (one sigmoid per
            column; rows need not sum to 1). For ``"multiclass-multioutput"``: a list of
            ``n_outputs_`` arrays, the ``k``-th of shape (n_samples, len(classes_[k])) with
            columns in the order of ``classes_[k]``, each row summing to 1.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If the estimator is not fitted.
        ValueError
            If ``X`` does not have the columns seen at fit.
        """
        check_is_fitted(self)
        logits = torch.from_numpy(self._raw_output(X)).double()
        if self._target_type == _MULTILABEL:
            return torch.sigmoid(logits).numpy()
        if self._target_type == _MULTIOUTPUT:
            return [torch.softmax(block, dim=1).numpy() for block in logits.split(self._output_blocks(), dim=1)]
        return torch.softmax(logits, dim=1).numpy()

    def predict(self, X):
        """Predicted class labels.

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)
            Rows with the columns seen at fit.

        Returns
        -------
        y_pred : numpy.ndarray of shape (n_samples,) or (n_samples, n_outputs_)
            With the dtype of the ``y`` seen at fit. For a 1-D ``y``: labels from ``classes_``.
            For a label indicator matrix: 1 where the label's probability exceeds 0.5, else 0.
            For ``"multiclass-multioutput"``: column ``k`` holds labels from ``classes_[k]``.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If the estimator is not fitted.
        ValueError
            If ``X`` does not have the columns seen at fit.
        """
        check_is_fitted(self)
        if self._target_type == _MULTILABEL:
            return (self.predict_proba(X) > 0.5).astype(self._y_dtype)
        output = self._raw_output(X)
        if self._target_type == _MULTIOUTPUT:
            offsets = np.cumsum([0, *self._output_blocks()])
            y_pred = np.empty((output.shape[0], self.n_outputs_), dtype=self._y_dtype)
            for k, classes in enumerate(self.classes_):
                y_pred[:, k] = classes[np.argmax(output[:, offsets[k] : offsets[k + 1]], axis=1)]
            return y_pred
        return self.classes_[np.argmax(output, axis=1)]

    def score(self, X, y, sample_weight=None):
        """Mean accuracy on the given rows.

        For a 1-D ``y`` and for a label indicator matrix this is
        :func:`sklearn.metrics.accuracy_score` (subset accuracy for the indicator matrix: a row
        counts when all its labels are right). For ``"multiclass-multioutput"``, which
        ``accuracy_score`` does not accept, it is the same subset accuracy: the weighted share
        of rows whose every output column is predicted right (as
        :class:`sklearn.multioutput.MultiOutputClassifier`).

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)
            Rows with the columns seen at fit.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs_)
            True labels, of the form seen at fit.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows.

        Returns
        -------
        score : float
            Accuracy in [0, 1].

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If the estimator is not fitted.
        ValueError
            If ``X`` does not have the columns seen at fit, or ``y`` does not have the shape
            of the targets seen at fit.
        """
        check_is_fitted(self)
        if self._target_type != _MULTIOUTPUT:
            return super().score(X, y, sample_weight=sample_weight)
        y = check_array(y, ensure_2d=False, dtype=None, ensure_all_finite=False, input_name="y")
        if y.ndim != 2 or y.shape[1] != self.n_outputs_:
            raise ValueError(
                f"y has shape {y.shape}; this model was fitted on {self.n_outputs_} output columns "
                "('multiclass-multioutput'), so y needs (n_samples, n_outputs_)."
            )
        y_pred = self.predict(X)
        check_consistent_length(y_pred, y, sample_weight)
        sample_weight = None if sample_weight is None else _check_sample_weight(sample_weight, y)
        return float(np.average(np.all(y_pred == y, axis=1), weights=sample_weight))


def _label_codes(classes, labels, name):
    """Positions of ``labels`` in the sorted array ``classes``; ValueError naming ``name`` for unknown ones."""
    codes = np.searchsorted(classes, labels)
    unknown = (codes >= len(classes)) | (classes[np.minimum(codes, len(classes) - 1)] != labels)
    if unknown.any():
        raise ValueError(
            f"{name} contains labels not seen in y: {np.unique(labels[unknown]).tolist()!r}; known classes are "
            f"{classes.tolist()!r}."
        )
    return codes


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
                f"y contains {_count_by_column(np.isnan(y))} NaN and {_count_by_column(np.isinf(y))} infinite "
                "value(s); regression targets must be finite."
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
        return torch.as_tensor(standardised, dtype=torch.float32, device=self._device)

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
