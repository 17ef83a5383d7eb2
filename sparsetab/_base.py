"""BaseSparseTabNet: the fit and partial_fit plumbing shared by the classifier and the regressor.

What differs between them is asked of their target kind (:mod:`sparsetab._targets`); the
parameters come from the one table of :mod:`sparsetab._params`.
"""

import copy
import dataclasses
import numbers

import numpy as np
import pandas as pd
import torch
from sklearn.base import BaseEstimator, _fit_context, is_classifier
from sklearn.frozen import FrozenEstimator
from sklearn.metrics import check_scoring
from sklearn.utils import _safe_indexing
from sklearn.utils.validation import _check_sample_weight, _num_samples, check_consistent_length, check_is_fitted

from ._ensemble import MEMBER_ATTRIBUTES, add_members, member_values, train_members
from ._inference import (
    INFERENCE_BATCH_ROWS,
    encoded_batches,
    explanation,
    far_outside_clause,
    feature_importances,
    forward_in_batches,
    importance_rows,
    importances_of,
    model_inputs,
    raw_output,
)
from ._params import (
    AUTO_REFIT_KEEPS_FIRST_PASS,
    LEGACY_VALUES,
    NETWORK_PARAMETERS,
    RESOLVED_ATTRIBUTES,
    accepts_resolved,
    resolve_batch_sizes,
    resolve_early_stopping,
    resolve_efficient_members,
    resolve_epoch_refit,
    resolve_numerical_embedding,
    same_value,
    training_config,
)
from ._persistence.compat import pickled_state, restore_torch_state, unpickled_state, with_legacy_parameters
from ._persistence.export import export_format_for, export_network
from ._persistence.model_file import save_estimator
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
from ._scoring import check_scorer_fits_targets
from ._tabular.encoding import TabularEncoding, feature_names, validate_frame
from ._targets import pandas_array_as_series, ravel_label_column
from ._training.loop import member_mean_loss, train_network
from ._warnings import warn
from .network import ensemble_members
from .pretraining import ENCODER_PARAMETERS, SparseTabNetPretrainer

#: What a refit on all rows keeps of the first pass, whose held-out rows chose the number of epochs.
SELECTION_ATTRIBUTES = ("validation_scores_", "best_iteration_", "best_validation_score_")

__all__ = ["BaseSparseTabNet"]


def _indexable(y):
    """``y`` itself, or its array where it only converts (``__array__`` without indexing, as check_array reads it)."""
    return y if hasattr(y, "__getitem__") else np.asarray(y)


def _shown(names, limit=10):
    # A list of column names for a message, cut after ``limit`` (a table may have hundreds).
    names = [str(name) for name in names]
    return repr(names) if len(names) <= limit else f"{names[:limit]!r} and {len(names) - limit} more"


def _column_difference(ours, theirs, estimator, pretrainer):
    """What differs between X's columns (``ours``) and the pretrainer's (``theirs``), names or None, in words."""
    if ours is None and theirs is None:
        return (
            f"X has {estimator.n_features_in_} unnamed columns, the pretrainer was fitted on "
            f"{pretrainer.n_features_in_}"
        )
    if ours is None or theirs is None:
        named, unnamed = ("X", "the pretrainer") if theirs is None else ("the pretrainer", "X")
        count = pretrainer.n_features_in_ if theirs is None else estimator.n_features_in_
        return (
            f"{named} has named columns and {unnamed} {count} without string names (a numpy array, or a DataFrame "
            "with other labels), whose order cannot be checked: give both the same string column names, or neither"
        )
    ours_set, theirs_set = set(ours), set(theirs)
    missing = [name for name in theirs if name not in ours_set]
    extra = [name for name in ours if name not in theirs_set]
    parts = []
    if missing:
        parts.append(f"X lacks {_shown(missing)}")
    if extra:
        parts.append(f"X has {_shown(extra)}, which the pretrainer never saw")
    if not parts:
        position = next(j for j, (mine, its) in enumerate(zip(ours, theirs)) if mine != its)
        parts.append(
            f"the order differs from position {position} on: X has {ours[position]!r} where the pretrainer had "
            f"{theirs[position]!r}"
        )
    return "; ".join(parts)


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
    return frame.iloc[keep], _safe_indexing(_indexable(y), keep), weights[keep]


def _labelled_rows(y, sample_weight):
    """The labels a classifier's classes come from: every row's, but the missing labels of rows of weight 0.

    A class whose rows all weigh 0 stays a class, as in scikit-learn's classifiers; a row of weight 0 may
    also be unlabelled (NaN or None), as it is left out of everything else.
    """
    if sample_weight is None:
        return y
    zero = np.flatnonzero(np.asarray(sample_weight, dtype=np.float64) == 0)
    if zero.size == 0:
        return y
    labels = np.asarray(_safe_indexing(_indexable(y), zero), dtype=object).reshape(zero.size, -1)
    unlabelled = zero[pd.isna(labels).any(axis=1)]
    if unlabelled.size == 0:
        return y
    return _safe_indexing(_indexable(y), np.setdiff1d(np.arange(_num_samples(y)), unlabelled))


def _weights_tensor(weights, device):
    # A copy: the weights can be the caller's read-only array (a pandas Series's values), from which torch would
    # warn that it cannot share memory.
    return torch.from_numpy(np.array(weights, dtype=np.float32)).to(device)


@dataclasses.dataclass(eq=False)
class _FitCall:
    """What one call of ``fit`` / ``partial_fit`` trains on, filled in stage by stage (``_fit_prepared``).

    ``frame``, ``targets`` and ``weights`` are the training rows after the zero-weight drop and the
    hold-out; ``rows_kept`` the positions, in ``given_rows`` (the rows after ``sample_weight == 0``
    was dropped), of the rows left after the class-weight-0 drop and before the hold-out; the
    ``*_val`` fields the validation rows (None without early stopping or ``X_val``);
    ``chosen_epochs`` and ``stopped_by`` collect, member by member, the epoch count early stopping
    chose and why a member stopped early.
    """

    kind: object
    incremental: bool
    first_pass: bool
    trainer: object
    refit_epochs: object
    given_rows: tuple
    frame: object = None
    targets: object = None
    weights: object = None
    weights_given: bool = False
    random_state: object = None
    seed: int = 0
    n_rows_given: int = 0
    early_stopping: bool = False
    refit: bool = False
    frame_val: object = None
    targets_val: object = None
    weights_val: object = None
    y_val_raw: object = None
    rows_kept: object = None
    n_efficient_members: int = 1
    X_train: object = None
    y_train: object = None
    w_train: object = None
    config: object = None
    reseed: bool = False
    observer: object = None
    chosen_epochs: list = dataclasses.field(default_factory=list)
    stopped_by: list = dataclasses.field(default_factory=list)


class BaseSparseTabNet(*((CallbackSupportMixin,) if CallbackSupportMixin is not None else ()), BaseEstimator):
    """Shared implementation of :class:`SparseTabNetClassifier` and :class:`SparseTabNetRegressor`.

    Every public method of the two estimators that does not depend on the target lives here, as
    a thin method with its docstring; the work is done below by functions: the fit stages by the
    training loop (:mod:`sparsetab._training`), the recipe shared with the pretrainer (seed,
    encoding, hold-out, network build: :mod:`sparsetab._recipe`) and the ensemble's
    (:mod:`sparsetab._ensemble`),
    predictions and explanations by :mod:`sparsetab._inference`, files by
    :mod:`sparsetab._persistence`. Its bases are scikit-learn's only. Pickling follows one
    protocol, :mod:`sparsetab._persistence.compat`, which also holds what models of earlier
    releases need.

    Subclasses define ``__init__`` (the parameters of :mod:`sparsetab._params`), their
    ``_parameter_constraints`` and two hooks: ``_fit_target_kind(y)``, which learns the target
    kind from ``y`` at the first fit, and ``_target_kind()``, which rebuilds it from the fitted
    attributes.
    """

    # ----- input validation ---------------------------------------------------------------
    def _validate_X(self, X, reset):
        """Check ``X``, record or compare its columns, and return it as a DataFrame (never a copy of one)."""
        return validate_frame(self, X, reset)

    def _encode_X(self, X):
        """Validate ``X`` against the fitted columns and return the float32 tensor for the network."""
        return self._encode_frame(self._validate_X(X, reset=False))

    def _encode_frame(self, frame):
        """The float32 tensor of an already validated frame, with the fitted tabular encoding, on the device."""
        return torch.from_numpy(self._tabular_encoding.transform(frame)).to(self._device)

    def _encode_continued(self, frame):
        """Encode the rows of a continued fit (``warm_start``, ``partial_fit``), warning once of what drifted.

        The encoding stays the first fit's, so values far outside its range are clipped (the
        network cannot tell them apart from the edge) and categories it never saw read as the
        reserved "unseen" code: the model cannot learn from them. Warned as ``predict`` warns, once
        per call with counts and columns.
        """
        encoding = self._tabular_encoding
        encoded, outside_rows, outside_columns = encoding.transform_with_range_report(frame)
        unseen = {frame.columns[j]: share for j, share in encoding.unseen_share(frame).items() if share > 0}
        if outside_rows.any() or unseen:
            found = []
            if outside_rows.any():
                found.append(
                    far_outside_clause(int(outside_rows.sum()), frame, outside_columns, "of the first fit")
                    + ", clipped to that range"
                )
            if unseen:
                shares = ", ".join(f"{str(name)!r}: {share:.0%}" for name, share in unseen.items())
                found.append(
                    f"categorical column(s) hold values the first fit never saw ({shares} of their present values), "
                    "all read as one 'unseen' category"
                )
            warn(
                "This continued fit keeps the first fit's column ranges and categories: "
                + "; ".join(found)
                + ". The model cannot learn what sets these rows apart. When the data has drifted, refit on all "
                "of it (fit with warm_start=False), or use sparsetab.streaming.fit for data larger than memory.",
                UserWarning,
            )
        return torch.from_numpy(encoded).to(self._device)

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
            weight 0 are dropped before anything is learned from the data but a classifier's
            classes: ``classes_`` holds every label of ``y``, as in scikit-learn's classifiers,
            so that ``predict_proba`` has a column for a class whose rows all weigh 0.
        X_val : pandas.DataFrame or array-like of shape (n_val_samples, n_features), default=None
            Validation data for early stopping and ``validation_scores_``; replaces the
            internal split of ``validation_fraction``.
        y_val : array-like of shape (n_val_samples,) or (n_val_samples, n_outputs), default=None
            Validation targets; required with ``X_val``.
        sample_weight_val : array-like of shape (n_val_samples,), default=None
            Weights of the validation rows in the validation score.

        Returns
        -------
        object
            The fitted estimator, ``self``.

        Raises
        ------
        ValueError
            For invalid parameters (naming the parameter and the accepted values), inputs of
            inconsistent lengths, only one of ``X_val`` / ``y_val``, infinite numeric input,
            missing labels or non-finite regression targets, all-zero sample weights, an
            unavailable ``device``, a ``scoring`` name that cannot score the target (``"roc_auc"``
            or ``"f1"`` for three classes, a classification scorer for a regressor: checked
            before training), or, with ``warm_start=True``, columns, classes or network
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
        network, optimizer state and shuffling stream (of every member, one epoch each, for
        ``n_ensemble > 1``), so ``n`` calls on the same data equal ``fit`` with
        ``max_epochs=n`` without early stopping. There is no early stopping, no
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
        object
            The estimator, ``self``, trained for one more epoch.

        Raises
        ------
        ValueError
            For invalid parameters, ``early_stopping=True``, or data whose columns or outputs
            differ from the fitted model's.
        """
        return self._fit(X, y, sample_weight, incremental=True)

    @_fit_context(prefer_skip_nested_validation=True)
    def _fit_with_trainer(
        self,
        trainer,
        X,
        y,
        sample_weight=None,
        *,
        X_val=None,
        y_val=None,
        sample_weight_val=None,
        classes=None,
        encoding=None,
        n_rows=None,
    ):
        """``fit`` whose networks are trained by ``trainer`` (a function of ``train_network``'s signature).

        For :mod:`sparsetab.distributed`: rank 0 fits on the union of the shards, and its trainer
        trains each network together with the other processes. For :mod:`sparsetab.streaming`:
        ``X`` is a sample of the rows, ``classes`` the labels of all of them, ``encoding`` the
        tabular encoding fitted on all of them and ``n_rows`` their count (for the batch sizes
        and ``early_stopping="auto"``); the trainer reads the rows from their source.
        """
        return self._fit(
            X,
            y,
            sample_weight,
            X_val=X_val,
            y_val=y_val,
            sample_weight_val=sample_weight_val,
            incremental=False,
            classes=classes,
            trainer=trainer,
            encoding=encoding,
            n_rows=n_rows,
        )

    @trains_whatever_the_autograd_mode
    def _fit(
        self,
        X,
        y,
        sample_weight,
        *,
        X_val=None,
        y_val=None,
        sample_weight_val=None,
        incremental,
        classes=None,
        trainer=None,
        encoding=None,
        n_rows=None,
    ):
        """The one implementation of ``fit`` (``incremental=False``) and ``partial_fit`` (``True``)."""
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None.")
        first_pass = not self.__sklearn_is_fitted__() or (not self.warm_start and not incremental)
        if incremental:
            self._check_partial_fit_arguments(first_pass, classes)
        elif not first_pass:
            self._check_network_unchanged("fit with warm_start=True")
        device = resolve_device(self.device)
        with torch_threads(self.n_jobs):
            if first_pass:
                self._fitted = False  # a fit that fails half-way leaves the estimator unfitted, not mixed
            frame = self._validate_X(X, reset=first_pass)
            y, y_val = pandas_array_as_series(y), pandas_array_as_series(y_val)
            kind = None
            if is_classifier(self):  # one DataConversionWarning for a column-vector y, not one per check
                y = ravel_label_column(y)
                y_val = None if y_val is None else ravel_label_column(y_val, "y_val")
            given_y, given_weights = y, sample_weight
            frame, y, sample_weight = _drop_zero_weight_rows(frame, y, sample_weight)
            if is_classifier(self) and first_pass and classes is None:
                # Every label of y is a class, those whose rows all have weight 0 too (as in scikit-learn's
                # classifiers): predict_proba then has the same columns whatever the weights, in each fold.
                kind = self._fit_target_kind(_labelled_rows(given_y, given_weights))
            if not first_pass:
                kind = self._target_kind()
                kind.check_continued(y, incremental)
            elif classes is not None:  # the classifier's first partial_fit: the classes from `classes`
                kind = self._fit_target_kind(np.asarray(classes))
                kind.check_continued(y, incremental=True)
            elif kind is None:  # a regressor's domain (poisson, gamma) is checked on the rows of positive weight
                kind = self._fit_target_kind(y)
            self._device = device
            if not first_pass:
                self.network_.to(device)
            self._fit_prepared(
                kind,
                frame,
                y,
                sample_weight,
                X_val,
                y_val,
                sample_weight_val,
                incremental=incremental,
                first_pass=first_pass,
                trainer=trainer,
                encoding=encoding,
                n_rows=n_rows,
            )
        return self

    def _fit_prepared(
        self,
        kind,
        frame,
        y,
        sample_weight,
        X_val,
        y_val,
        sample_weight_val,
        *,
        incremental,
        first_pass,
        trainer=None,
        encoding=None,
        n_rows=None,
        refit_epochs=None,
        tasks=None,
        first_pass_members=None,
    ):
        """One call of ``fit`` / ``partial_fit`` on validated rows, in named stages.

        ``refit_epochs`` (one count per member), ``tasks`` and ``first_pass_members`` are given only
        by the refit on all rows that follows a fit whose held-out rows chose the number of epochs
        (:func:`~sparsetab._params.resolve_epoch_refit`).
        """
        call = _FitCall(kind, incremental, first_pass, trainer, refit_epochs, given_rows=(frame, y, sample_weight))
        self._check_rows(call, frame, y, sample_weight, X_val, y_val, sample_weight_val)
        encoding = self._plan_training(call, X_val is not None, encoding, n_rows)
        self._hold_out(call, X_val, y_val, sample_weight_val)
        pretrainer = self._training_tensors(call, encoding, n_rows)
        own_tasks = tasks is None
        tasks = self._train_all_members(call, pretrainer, tasks)
        if first_pass_members is not None:
            add_members(self, *first_pass_members)
        self._shuffle_random_state = self.random_state if isinstance(self.random_state, numbers.Integral) else None
        if call.refit and not call.stopped_by:  # a fit stopped by the user or by non-finite values is not repeated
            self._refit_on_all_rows(kind, call.given_rows, call.chosen_epochs, tasks, len(call.frame_val), encoding)
            if tasks is not None:  # the fit's root task spans both passes; the refit does not close it
                tasks.fit_end()
            return
        rows = importance_rows(call.X_train, call.random_state)
        if incremental:  # computed on first access: a stream of partial_fit calls does not pay for it each time
            self._feature_importances, self._pending_importance_rows = None, rows
        else:
            self.feature_importances_ = importances_of(self, rows)
        if tasks is not None and own_tasks:
            tasks.fit_end()

    def _check_rows(self, call, frame, y, sample_weight, X_val, y_val, sample_weight_val):
        """Stage 1: the targets and weights of the rows; rows of weight 0 (or class weight 0) dropped."""
        kind = call.kind
        targets = kind.encode(y, "y")
        if len(targets) != frame.shape[0]:
            raise ValueError(
                f"X and y have inconsistent numbers of samples: X has {frame.shape[0]}, y has {len(targets)}."
            )
        weights = _check_sample_weight(sample_weight, frame, dtype=np.float64, ensure_non_negative=True)
        class_weights = kind.class_weights(y, getattr(self, "class_weight", None))
        if class_weights is not None:
            weights = weights * class_weights
        if (X_val is None) != (y_val is None):
            raise ValueError("X_val and y_val must be given together; got only one of them.")
        if sample_weight_val is not None and X_val is None:
            raise ValueError("sample_weight_val was given without X_val and y_val; it weights the rows of X_val.")
        keep = np.flatnonzero(weights > 0)  # class weights of 0 drop rows too
        if keep.size == 0:  # the rows of zero sample_weight are gone already: the class weights left none
            raise ValueError(
                f"class_weight={getattr(self, 'class_weight', None)!r} gives weight 0 to the class of every row (of "
                "positive sample_weight); at least one row needs a positive weight."
            )
        if keep.size < frame.shape[0]:
            frame, targets, weights = frame.iloc[keep], targets[keep], weights[keep]
        call.rows_kept = keep  # positions in the given rows, so held-out rows index y itself
        # A scorer gets weights only when the user gave some, so a plain scorer(est, X, y) works.
        call.weights_given = sample_weight is not None or sample_weight_val is not None or class_weights is not None
        call.frame, call.targets, call.weights = frame, targets, weights

    def _plan_training(self, call, has_validation, encoding, n_rows):
        """Stage 2: the fit's seed and the rules of ``"auto"``: early stopping, and the refit on all rows.

        Returns the tabular encoding given, or for a refit's first pass one learned here on every
        row, so that the first pass's network and the refit's read one encoding and can be
        averaged (:data:`AUTO_REFIT_KEEPS_FIRST_PASS`). It sees no target.
        """
        call.random_state, call.seed = fit_seed(self.random_state)
        call.n_rows_given = call.frame.shape[0] if n_rows is None else n_rows
        early_stopping = not call.incremental and resolve_early_stopping(
            self.early_stopping, call.n_rows_given, has_validation
        )
        # Mid-sized tables under "auto": held-out rows choose the number of epochs, then the network is
        # trained again on every row for that many. Not for a streamed or distributed fit (a trainer
        # given), which never holds out part of its source, nor for a continued one (warm_start).
        call.refit = (
            call.refit_epochs is None
            and call.first_pass
            and not call.incremental
            and call.trainer is None
            and resolve_epoch_refit(self.early_stopping, call.n_rows_given, has_validation)
        )
        call.early_stopping = call.refit_epochs is None and (early_stopping or call.refit)
        if call.refit and encoding is None and self.pretrained is None:
            encoding = TabularEncoding(
                self.categorical_features, numerical_transform=self.numerical_transform, random_state=call.seed
            )
            encoding.fit_transform(call.frame)
        return encoding

    def _hold_out(self, call, X_val, y_val, sample_weight_val):
        """Stage 3: the validation rows, held out of the training rows or the user's ``X_val``."""
        kind = call.kind
        if call.early_stopping and X_val is None:
            train_index, val_index = split_validation(
                call.frame.shape[0], self.validation_fraction, call.seed, kind.stratify(call.targets)
            )
            frame, targets, weights = call.frame, call.targets, call.weights
            call.frame_val, call.targets_val, call.weights_val = (
                frame.iloc[val_index],
                targets[val_index],
                weights[val_index],
            )
            call.frame, call.targets, call.weights = frame.iloc[train_index], targets[train_index], weights[train_index]
            # The scorer's labels are the user's own rows of y, not the encoded labels decoded back.
            call.y_val_raw = _safe_indexing(_indexable(call.given_rows[1]), call.rows_kept[val_index])
        elif X_val is not None:
            check_consistent_length(X_val, y_val, sample_weight_val)
            call.frame_val = X_val
            call.targets_val = kind.encode(y_val, "y_val")
            call.weights_val = _check_sample_weight(
                sample_weight_val, call.targets_val, dtype=np.float64, ensure_non_negative=True
            )
            call.y_val_raw = y_val
        if call.frame.shape[0] < 2:
            raise ValueError(
                f"Training needs at least 2 rows for batch normalisation; got n_samples={call.frame.shape[0]} "
                "after dropping rows of zero sample_weight and holding out validation rows."
            )

    def _training_tensors(self, call, encoding, n_rows):
        """Stage 4: batch sizes, on a first pass the encoding and the network, and the training tensors.

        Returns the fitted pretrainer whose encoder the network starts from (None without one).
        """
        kind, frame = call.kind, call.frame
        call.n_efficient_members = resolve_efficient_members(self.n_efficient_members, call.n_rows_given)
        n_training_rows = frame.shape[0] if n_rows is None else n_rows  # after the validation split
        batch_size, virtual_batch_size = resolve_batch_sizes(self.batch_size, self.virtual_batch_size, n_training_rows)
        pretrainer = None
        if call.first_pass:
            self.virtual_batch_size_ = virtual_batch_size  # a continued fit keeps the network's
            pretrainer = self._fitted_pretrainer()
            # A pretrainer pickled before fit ids existed has none: "" still tells it from no pretrainer.
            self._pretrained_fit = None if pretrainer is None else getattr(pretrainer, "fit_id_", "")
            # The refit's pass (refit_epochs given) reads the rows the first pass warned about already.
            call.X_train = self._fit_tabular_encoding(
                frame, pretrainer, call.seed, encoding, warn_unseen=call.refit_epochs is None
            )
            kind.fit_scale(call.targets)
            for name, value in kind.attributes().items():
                setattr(self, name, value)
            self._build_network(frame, call.X_train, kind, pretrainer, call.seed, call)
        else:
            call.X_train = self._encode_continued(frame)
        call.y_train = kind.tensor(call.targets, self._device)
        call.w_train = _weights_tensor(call.weights, self._device)
        self.network_.to(self._device)
        self.batch_size_ = batch_size
        call.config = training_config(
            self,
            batch_size=batch_size,
            early_stopping=call.early_stopping,
            incremental=call.incremental,
            epoch_offset=0 if call.first_pass else self.n_iter_,
            epoch_refit=call.refit or call.refit_epochs is not None,
        )
        return pretrainer

    def _train_all_members(self, call, pretrainer, tasks):
        """Stage 5: train every member (one network, or each of ``n_ensemble`` in turn); returns the tasks."""
        # An integer random_state changed since the last call reseeds the shuffling of a continued fit;
        # otherwise it continues, so that n partial_fit calls equal one fit of n epochs.
        call.reseed = isinstance(self.random_state, numbers.Integral) and self.random_state != getattr(
            self, "_shuffle_random_state", self.random_state
        )
        # The state is complete from here on, and a scorer given as `scoring` calls predict.
        self._fitted = True
        n_members = self.n_ensemble if call.first_pass else len(ensemble_members(self.network_))
        printer = epoch_printer(self, self.scoring, early_stopping=call.early_stopping)
        if tasks is None:  # a refit opens one more epoch task per epoch, at most max_epochs per member
            # The rows as given (before any hold-out: frame may be split by now, y and sample_weight are not).
            epochs = n_members * call.config.max_epochs * (2 if call.refit else 1)
            tasks = epoch_tasks(self, *call.given_rows, epochs)
        call.observer = training_observer(printer, tasks)
        try:
            train_members(
                self,
                lambda member_seed: self._train_member(call, member_seed),
                call.seed,
                call.first_pass,
                lambda member_seed: self._build_network(
                    call.frame, call.X_train, call.kind, pretrainer, member_seed, call
                ),
            )
        except BaseException:
            self._fitted = False
            raise
        return tasks

    def _train_member(self, call, member_seed):
        """Train ``network_`` from the estimator's training state: the one network, or a member in turn.

        Each member has its own shuffling stream and score function (see ``_ensemble``).
        """
        config = call.config
        if call.refit_epochs is not None:  # this member's chosen count; the schedule spans it
            epochs = call.refit_epochs[len(call.chosen_epochs)]
            config = dataclasses.replace(config, max_epochs=epochs, schedule_epochs=epochs, fixed_epochs=True)
        if call.first_pass or call.reseed:
            generator = torch.Generator().manual_seed(member_seed)
        else:
            generator = torch.Generator()
            generator.set_state(self._shuffle_state)
        score_function = None
        if call.frame_val is not None:
            score_function = self._make_score_function(
                call.kind, call.frame_val, call.targets_val, call.y_val_raw, call.weights_val, call.weights_given
            )
        # As scikit-learn's MLP: partial_fit continues the optimizer (Adam's moments, the decayed
        # learning rate); fit, warm started or not, starts a fresh one at learning_rate.
        # Looked up at the call (not bound as a default), so a patched train_network is the one used.
        with training_threads(self.n_jobs, self.network_, config.batch_size):
            history = (train_network if call.trainer is None else call.trainer)(
                self.network_,
                call.kind.loss,
                call.X_train,
                call.y_train,
                call.w_train,
                config,
                generator,
                score_function,
                optimizer_state=self._optimizer_state if call.incremental else None,
                observer=call.observer,
            )
        self._record_history(history, call.early_stopping, call.first_pass)
        self._optimizer_state = history.optimizer_state
        self._shuffle_state = generator.get_state()
        call.chosen_epochs.append(
            len(history.loss_curve) if history.best_iteration is None else history.best_iteration + 1
        )
        if history.stop_reason in ("interrupted", "callback", "non_finite"):
            call.stopped_by.append(history.stop_reason)
        return history

    def _refit_on_all_rows(self, kind, arguments, epochs, tasks, n_held_out, encoding):
        """Train again on every row for the number of epochs the held-out rows chose (one count per member).

        The refit's networks come first (member 0 is the refit of the fit's own seed: its
        ``loss_curve_`` and ``n_iter_`` are the estimator's); with :data:`AUTO_REFIT_KEEPS_FIRST_PASS`
        the first pass's networks follow as further members, each with its own history, and
        the predictions average them all. ``validation_scores_``, ``best_iteration_`` and
        ``best_validation_score_`` of refit member ``i`` are those of first-pass member ``i``,
        whose best epoch chose its count: ``best_iteration_ + 1``.
        """
        frame, y, sample_weight = arguments
        first_networks = ensemble_members(self.network_)
        first_states = [{name: getattr(self, name) for name in MEMBER_ATTRIBUTES}]
        first_states += [dict(state) for state in vars(self).pop("_ensemble_members", [])]
        if self.verbose:
            counts = ", ".join(str(count) for count in epochs)
            print(
                f"Refitting on all {frame.shape[0]} rows (the {n_held_out} held-out rows included) for the "
                f"number of epochs they chose: {counts}.",
                flush=True,
            )
        self._fit_prepared(
            kind,
            frame,
            y,
            sample_weight,
            None,
            None,
            None,
            incremental=False,
            first_pass=True,
            encoding=encoding,
            refit_epochs=list(epochs),
            tasks=tasks,
            first_pass_members=(first_networks, first_states) if AUTO_REFIT_KEEPS_FIRST_PASS else None,
        )
        # An interrupted refit keeps its weights so far (as any interrupted fit does) and these records.
        refit_states = [vars(self)] + list(getattr(self, "_ensemble_members", []))
        for state, record in zip(refit_states, first_states):
            state.update({name: record[name] for name in SELECTION_ATTRIBUTES})

    def _fit_tabular_encoding(self, frame, pretrainer, seed, encoding=None, warn_unseen=True):
        """Learn (or take from the pretrainer or ``encoding``) the tabular encoding and ``categories_``; encode it."""
        if pretrainer is None and encoding is not None:  # fitted on every row of a stream (sparsetab.streaming)
            self._tabular_encoding = copy.deepcopy(encoding)
            X_train = self._encode_frame(frame)
        elif pretrainer is None:
            X_train = fit_tabular_encoding(self, frame, seed, self._device)
        else:  # the pretrainer's tabular encoding: categories, clipping and numeric transform
            self._tabular_encoding = copy.deepcopy(pretrainer._tabular_encoding)
            X_train = self._encode_frame(frame)
            unseen = {frame.columns[j]: share for j, share in self._tabular_encoding.unseen_share(frame).items()}
            if warn_unseen and any(share > 0.5 for share in unseen.values()):
                columns = ", ".join(f"{name!r}: {share:.0%}" for name, share in unseen.items() if share > 0.5)
                warn(
                    f"Most values of some categorical columns were not seen by the pretrainer ({columns}); they "
                    "map to the reserved 'unseen' code, so these columns carry little information. Pretrain on "
                    "data with the same categories.",
                    UserWarning,
                )
        record_categories(self)
        return X_train

    def _build_network(self, frame, X_train, kind, pretrainer, seed, call):
        """Build ``network_`` from the parameters and the fitted tabular encoding (a pretrainer's encoder).

        The bin edges of a piecewise linear encoding are fitted here, on the training rows, once:
        a continued fit keeps them. A fine-tuned model takes the pretrainer's (with its weights).
        The rules behind ``"auto"`` see the rows given to the fit (``call.n_rows_given``).
        """
        self._network_config, edges = network_layout(
            self,
            frame,
            X_train,
            kind.output_dim,
            virtual_batch_size=self.virtual_batch_size_,
            numerical_embedding=resolve_numerical_embedding(self.numerical_embedding, call.n_rows_given),
            pretrained_config=None if pretrainer is None else pretrainer._network_config,
            n_efficient_members=call.n_efficient_members,
        )
        # Kept as a fitted attribute, as every release has: model files and pickles hold it.
        self._attention_groups = self._network_config["attention_groups"]
        self.network_ = build_tabnet(self._network_config, torch.Generator().manual_seed(seed), edges)
        if pretrainer is not None:
            encoder_state = pretrainer.network_.encoder.state_dict()
            self.network_.load_state_dict(
                {name: value for name, value in encoder_state.items() if not name.startswith("head.")}, strict=False
            )
        self._architecture = {name: copy.deepcopy(getattr(self, name)) for name in NETWORK_PARAMETERS}
        self._optimizer_state = None

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
        """Refuse what partial_fit cannot do; a subclass adds the checks of its own arguments."""
        if self.early_stopping is True:
            raise ValueError(
                "partial_fit does not support early_stopping=True: it runs one epoch per call without a "
                "validation split; set early_stopping=False or 'auto' (off in partial_fit), or use fit."
            )
        if not first_pass:
            self._check_network_unchanged("partial_fit")

    def _check_network_unchanged(self, method):
        # A model saved before a parameter existed was built with its legacy value.
        architecture = with_legacy_parameters(self._architecture, NETWORK_PARAMETERS, LEGACY_VALUES)
        for name in NETWORK_PARAMETERS:
            before, now = architecture[name], getattr(self, name)
            if name in RESOLVED_ATTRIBUTES:
                # What the network was built with counts: "auto" keeps it, and so does naming it.
                used = getattr(self, RESOLVED_ATTRIBUTES[name], before)  # models saved without it: as recorded
                if not accepts_resolved(now, used):
                    chose = f" (which chose {used!r})" if before == "auto" else ""
                    raise ValueError(
                        f"{method} continues the fitted network, which was built with {name}={before!r}{chose}; "
                        f"it is now {name}={now!r}. Restore it, set 'auto' or {used!r}, or fit with "
                        "warm_start=False to build a new network."
                    )
            elif not same_value(before, now):
                raise ValueError(
                    f"{method} continues the fitted network, which was built with {name}={before!r}; it is now "
                    f"{name}={now!r}. Restore it, or fit with warm_start=False to build a new network."
                )
        # pretrained=None (as after load_model) is no change; another pretrainer, or the same one refitted, is.
        # Models fitted before the fit ids existed are not checked.
        if self.pretrained is not None and hasattr(self, "_pretrained_fit"):
            pretrainer = self._pretrainer_given()
            if getattr(pretrainer, "fit_id_", "") != self._pretrained_fit:
                raise ValueError(
                    f"{method} continues the fitted network, which was "
                    + ("fitted without a pretrainer" if self._pretrained_fit is None else "fine-tuned from another fit")
                    + "; pretrained is now a different pretrainer fit, whose weights only start a new network. "
                    "Restore it (or set pretrained=None), or fit with warm_start=False to fine-tune from it."
                )

    # ----- the fitted model: predictions, explanations, files, members --------------------
    def _raw_output(self, X):
        """Network outputs for ``X`` (:func:`sparsetab._inference.raw_output`), read by ``predict``."""
        return raw_output(self, X)

    def explain(self, X, *, per_member=False, groups=None):
        """Per-row feature masks and importances.

        For an ensemble (``n_ensemble > 1``, ``n_efficient_members > 1``, or the two networks
        of the epoch-count refit: every efficient member of every network is a member here)
        each array is the mean of its members' (for
        ``importances``, over the members whose row is not all zero), so its rows still sum to
        1; ``per_member=True`` adds each member's own arrays.

        ``groups`` sums the values of several input columns into one, for example the one-hot
        columns of one source column (:func:`sparsetab.inspection.feature_groups_from_transformer`
        builds that dict from a fitted ``ColumnTransformer``, ``OneHotEncoder`` or
        ``Pipeline``). It only changes how the answer is reported: the network and its masks are
        the same. The fit parameter ``grouped_features`` is different: its members share one
        attention weight during training (and ``explain()`` splits that weight equally between
        them). Rather than one-hot encoding string columns, pass them to the estimator as they
        are: it embeds each categorical column itself, as one attention group.

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)
            Rows to explain, with the columns seen at fit.
        per_member : bool, default=False
            Also return the arrays of each member of the ensemble, network by network in the
            order of ``ensemble_n_iter_`` and within a network its ``n_efficient_members_``
            efficient members in order: ``len(ensemble_n_iter_) * n_efficient_members_``
            members. That is ``n_ensemble * n_efficient_members_``, twice as many where
            ``early_stopping="auto"`` ran the epoch-count refit (100 to 10,000 rows without
            ``X_val``), which keeps the first pass's networks after the refit's; one member when
            there is one network with one member.
        groups : dict of str to list of (str or int), default=None
            ``{group name: member columns}``: each group becomes one column of the answer whose
            value is the sum of its members' values, so rows still sum to 1. A member is a name
            of ``feature_names_in_`` (``x0, x1, ...`` for input without column names) or a
            position in ``0..n_features_in_ - 1``; a single name or position is a group of one.
            Every input column is in at most one group; a column in no group stays its own.
            The columns of the answer are in the order of their first input column: a group
            sits where its first member was. None reports one value per input column.

        Returns
        -------
        sklearn.utils.Bunch
            With the keys:

            step_masks : numpy.ndarray of shape (n_samples, n_steps, ``n_features_in_``), float32
                Feature mask ``M[i]`` of each decision step, one value per input column (a
                categorical column's embedding dimensions share one value; the columns of a
                ``grouped_features`` group share their group's value equally, each getting
                ``value / group size``); rows sum to 1. For an ensemble, the members' mean.
                With ``groups``, shape (n_samples, n_steps, n_groups), one column per group
                (and per column in no group); so for the other per-feature arrays.
            importances : numpy.ndarray of shape (n_samples, ``n_features_in_``), float32
                Aggregate importance ``M_agg``: the masks weighted by ``step_importance`` and
                normalised; rows sum to 1, or are all zero when every ``eta`` of the row is 0.
                With ``step_gates``, a row whose weights ``g * eta`` are all 0 (every gate of
                the row closed) is the mean of its step masks over the steps instead, so every
                row sums to 1. For an ensemble, the mean over the members whose row is not all
                zero (all zero when no member's is).
            step_importance : numpy.ndarray of shape (n_samples, n_steps), float32
                ``eta_b[i] = sum_c ReLU(d_b,c[i])``, the contribution of step ``i`` to the
                decision (unnormalised, >= 0); with ``step_gates``, ``g_b[i] * eta_b[i]``, the
                gated contribution. For an ensemble, the members' mean.
            step_gates : numpy.ndarray of shape (n_samples, n_steps), float32, or None
                The gate ``g_b[i]`` in [0, 1] of each decision step; None without
                ``step_gates``.
                For an ensemble, the members' mean.
            feature_names : numpy.ndarray of shape (``n_features_in_``,), object
                ``feature_names_in_``, or ``x0, x1, ...`` for input without column names; with
                ``groups``, the names of the answer's columns (a group's name, or a column's
                own).
            member_step_masks : numpy.ndarray of shape (n_members, n_samples, n_steps, ``n_features_in_``), float32
                Only with ``per_member=True``: each member's ``step_masks``, in member order
                (with ``n_efficient_members=1``, member 0 is the model that ``n_ensemble=1``
                gives).
            member_importances : numpy.ndarray of shape (n_members, n_samples, ``n_features_in_``), float32
                Only with ``per_member=True``: each member's ``importances``.
            member_step_importance : numpy.ndarray of shape (n_members, n_samples, n_steps), float32
                Only with ``per_member=True``: each member's ``step_importance``.
            member_step_gates : numpy.ndarray of shape (n_members, n_samples, n_steps), float32, or None
                Only with ``per_member=True``: each member's ``step_gates`` (None without
                ``step_gates``).

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If the estimator is not fitted.
        ValueError
            If ``X`` does not have the columns seen at fit, a numeric column holds strings or
            infinities, the network's outputs are not finite for some row, or ``groups`` is
            bad: a group empty or not named by a str, a member neither a feature name nor a
            position in range, a column listed twice, or a group named like a column in no
            group (the message names the group and the member).
        TypeError
            If ``per_member`` is not a bool, or ``groups`` is not None or a dict.

        Warns
        -----
        UserWarning
            Once per call, when some rows have numeric values far outside the range seen at fit
            (beyond ``[min - r, max + r]``, ``r = max - min`` of the column at fit), with their count
            and the columns. Such values are clipped to the training range before the network.

        References
        ----------
        Arik and Pfister (2021), TabNet, AAAI; section 4 ("Interpretability").
        """
        return explanation(self, X, per_member, groups)

    def transform_inputs(self, X):
        """The inputs of an exported model (see :meth:`export`) for the rows of ``X``.

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)
            Rows with the columns seen at fit.

        Returns
        -------
        numeric : numpy.ndarray of shape (n_samples, n_numeric), float64
            The numeric columns, unscaled and unclipped, in column order, NaN where a value is
            missing (the exported model clips each to its training range and fills missing
            values as the estimator does; ``torch.from_numpy`` turns the array into the
            exported model's first argument).
        codes : numpy.ndarray of shape (n_samples, n_categorical), int64
            Category code of each categorical column, in column order: 0 for a missing value
            or a category not seen at fit, ``c + 1`` for the ``c``-th category seen at fit
            (the list is in the exported file's metadata).

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If the estimator is not fitted.
        ValueError
            If ``X`` does not have the columns seen at fit or a numeric column holds infinities.
        """
        return model_inputs(self, X)

    def save_model(self, path):
        """Write the fitted estimator to one safe, versioned file; read it back with :func:`sparsetab.load_model`.

        The file holds JSON metadata (format version; sparsetab, torch, scikit-learn and numpy
        versions; parameters; classes, categories, feature names, importances, training history
        and the other fitted attributes) and the weights as tensors, with a SHA-256 digest of
        both. Loading builds no object from the file and runs no code (``torch.load`` with
        ``weights_only=True``), unlike pickle and joblib, which also work but can execute
        arbitrary code from a file: load those only from sources you trust. The write is atomic
        (a temporary file, then a rename), so a crash never leaves a half-written model. The
        ``pretrained`` parameter is stored as None: it only matters at fit, and the fine-tuned
        weights are in the file.

        Parameters
        ----------
        path : str or os.PathLike
            Where to write (conventionally ``*.sparsetab``); an existing file is replaced.

        Returns
        -------
        str
            ``path``.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If the estimator is not fitted.
        TypeError
            If a parameter holds a value the format cannot store, e.g. a callable ``scoring``
            (pickle such an estimator instead).
        """
        check_is_fitted(self)
        self.feature_importances_  # noqa: B018  (computed now if partial_fit deferred it: files hold values)
        return save_estimator(self, path)

    def export(self, path, *, format=None):
        """Write the fitted network as a serving program that runs without scikit-learn.

        The program takes ``(numeric, codes)`` as returned by :meth:`transform_inputs`
        (float64 and int64 arrays, any number of rows) and returns ``(prediction,
        step_masks)``: class probabilities of shape (n_samples, n_classes) in the order of
        ``classes_`` (classifier; for a label indicator matrix one sigmoid probability per
        label, for multiclass-multioutput the blocks of :meth:`predict_proba` side by side,
        block widths in the metadata's ``softmax_blocks``) or predictions of shape
        (n_samples, n_outputs) in the target's units (regressor), both float64, and the step
        masks of :meth:`explain`, float32 of shape (n_samples, n_steps, ``n_features_in_``). It
        clips the numeric columns to the training range and applies the model's
        ``numerical_transform`` (the standardisation, or scikit-learn's normal-output quantile
        map) itself. For an ensemble (``n_ensemble > 1``) the program runs every member and
        returns the mean of their probabilities or predictions and of their step masks, as the
        estimator does (the metadata's ``outputs`` then says so under ``ensemble``). It runs in
        evaluation mode and uses the entmax maps' exportable path (sort-based closed forms, a
        fixed number of root-finding iterations), so its outputs equal :meth:`predict_proba` /
        :meth:`predict` and :meth:`explain` up to float32 rounding. A model with
        ``step_gates`` has a third output, ``step_gates``, float32 of shape (n_samples,
        n_steps), as in :meth:`explain` (ONNX output ``"step_gates"``). The file also holds JSON
        metadata, ``sparsetab.json``: versions, column names, categories and the outputs'
        meaning, so a server can encode raw rows itself.

        Load it with ``torch.export.load(path).module()`` (``"exported_program"``; read the
        metadata with ``extra_files={"sparsetab.json": ""}``), or with
        ``onnxruntime.InferenceSession(path)`` (``"onnx"``: inputs ``"numeric"`` (float64,
        shape ("batch", n_numeric)) and ``"codes"`` (int64, shape ("batch", n_categorical)),
        outputs ``"prediction"`` and ``"step_masks"``; the metadata is the model's
        ``metadata_props`` entry ``"sparsetab.json"``, e.g.
        ``session.get_modelmeta().custom_metadata_map["sparsetab.json"]``).

        Parameters
        ----------
        path : str or os.PathLike
            File to write (replaced atomically if it exists; ``.pt2`` is the usual suffix for
            ``torch.export``, ``.onnx`` for ONNX, ``.pt`` for TorchScript with
            ``format="torchscript"``: without ``format``, a ``.pt`` path gets the exported
            program, which ``torch.export.load`` reads and ``torch.jit.load`` does not).
        format : {"exported_program", "onnx", "torchscript"} or None, default=None
            None: from the suffix of ``path``, ``"onnx"`` for ``.onnx`` and ``"exported_program"``
            for any other. ``"exported_program"``: ``torch.export.export`` with a dynamic batch dimension,
            saved with ``torch.export.save``. ``"onnx"``: that program converted by torch's
            ONNX exporter (``torch.onnx.export(..., dynamo=True)``, its default opset), one
            self-contained file with a dynamic ``"batch"`` dimension; needs the extra
            ``pip install "sparsetab[onnx]"``. ``"torchscript"`` (deprecated, removed in the
            next release, since torch deprecates ``torch.jit``): ``torch.jit.trace`` saved with
            ``torch.jit.save``, loaded with ``torch.jit.load(path, _extra_files=...)``.

        Returns
        -------
        str
            ``path``.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If the estimator is not fitted.
        IsADirectoryError
            If ``path`` is a folder (before any work).
        ValueError
            If ``format`` is not one of the accepted values, or names another format than the
            suffix of ``path`` does (``.onnx`` is ONNX's, ``.pt2`` the exported program's): the
            file would not open as its name says.
        ImportError
            If the format is ``"onnx"`` and ``onnx`` or ``onnxscript`` cannot be imported; the message
            names the extra that installs them, ``sparsetab[onnx]``.

        Warns
        -----
        FutureWarning
            If ``format="torchscript"``: use ``"exported_program"`` or ``"onnx"`` instead.
        """
        check_is_fitted(self)
        format = export_format_for(path, format)
        return export_network(
            self.network_,
            self._tabular_encoding,
            feature_names(self),
            self._target_kind().serving_output(),
            type(self).__name__,
            path,
            format,
        )

    @property
    def feature_importances_(self):
        """Mean aggregate importance of each input column over the training rows (see the class docstring).

        ``fit`` computes it; after ``partial_fit`` it is computed on first access (then kept until
        the next call), so that a stream of ``partial_fit`` calls does not pay for it each time.

        Returns
        -------
        numpy.ndarray of shape (``n_features_in_``,), float64

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If the estimator is not fitted (an AttributeError, so ``hasattr`` is False).
        """
        check_is_fitted(self)
        return feature_importances(self)

    @feature_importances_.setter
    def feature_importances_(self, value):
        # Model files written before the importances were lazy store them under this name.
        self._feature_importances = value
        self.__dict__.pop("_pending_importance_rows", None)

    @property
    def n_efficient_members_(self):
        """The number of efficient members in each network (``n_efficient_members``, resolved).

        Returns
        -------
        int
            ``n_efficient_members`` as given, or what ``"auto"`` chose for the fit's training rows
            (:func:`~sparsetab._params.resolve_efficient_members`); 1 for a model saved before
            efficient members existed.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before ``fit``.
        """
        check_is_fitted(self)
        return int(ensemble_members(self.network_)[0].n_efficient_members)

    @property
    def numerical_embedding_(self):
        """The embedding of the numeric columns the networks were built with (``numerical_embedding``, resolved).

        Returns
        -------
        str or None
            ``numerical_embedding`` as given, what ``"auto"`` chose for the first fit's training rows
            (:func:`~sparsetab._params.resolve_numerical_embedding`), or a fine-tuned model's
            pretrainer's embedding; None where numeric columns enter as their standardised values.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before ``fit``.
        """
        check_is_fitted(self)
        return ensemble_members(self.network_)[0].embedding.numerical_embedding

    @property
    def ensemble_n_iter_(self):
        """Epochs run by each member of the ensemble, member 0 (``n_iter_``) first.

        Returns
        -------
        list of int
            Of length ``n_ensemble``, or ``2 * n_ensemble`` after the refit of
            ``early_stopping="auto"`` (the refit members, then the first pass's).
        """
        return member_values(self, "n_iter_")

    @property
    def ensemble_loss_curves_(self):
        """Training objective per epoch of each member, member 0 (``loss_curve_``) first.

        Returns
        -------
        list of list of float
            One ``loss_curve_`` per member.
        """
        return member_values(self, "loss_curve_")

    @property
    def ensemble_validation_scores_(self):
        """Validation score per epoch of each member, member 0 (``validation_scores_``) first.

        Returns
        -------
        list of (list of float or None)
            One ``validation_scores_`` per member; each member is scored alone, on the same
            validation rows.
        """
        return member_values(self, "validation_scores_")

    @property
    def ensemble_best_iteration_(self):
        """Epoch whose weights early stopping kept, of each member, member 0 (``best_iteration_``) first.

        Returns
        -------
        list of (int or None)
            One ``best_iteration_`` per member.
        """
        return member_values(self, "best_iteration_")

    @property
    def ensemble_best_validation_scores_(self):
        """Best validation score of each member, member 0 (``best_validation_score_``) first.

        Returns
        -------
        list of (float or None)
            One ``best_validation_score_`` per member.
        """
        return member_values(self, "best_validation_score_")

    @property
    def ensemble_entmax_alphas_(self):
        """Alpha of each decision step's map, of each member.

        Returns
        -------
        numpy.ndarray of shape (n_ensemble, n_steps)
            Row 0 is ``entmax_alphas_``.
        """
        return np.stack(member_values(self, "entmax_alphas_"))

    # ----- pickling: one protocol, with what earlier releases need (_persistence.compat) ---
    def __getstate__(self):
        if "_pending_importance_rows" in self.__dict__:  # a pickle holds the importances, not the rows
            self.feature_importances_  # noqa: B018
        return pickled_state(super().__getstate__())

    def __setstate__(self, state):
        state, torch_state = unpickled_state(state, type(self)._parameter_constraints, LEGACY_VALUES)
        super().__setstate__(state)
        restore_torch_state(self, torch_state)

    def __sklearn_is_fitted__(self):
        return getattr(self, "_fitted", False)

    def _pretrainer_given(self):
        """``pretrained`` without its FrozenEstimator wrapper (None without one); not checked."""
        return self.pretrained.estimator if isinstance(self.pretrained, FrozenEstimator) else self.pretrained

    def _fitted_pretrainer(self):
        """The fitted SparseTabNetPretrainer behind ``pretrained`` (None without one), checked against X."""
        if self.pretrained is None:
            return None
        pretrainer = self._pretrainer_given()
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
        mismatched = []
        for name in ENCODER_PARAMETERS:
            ours, theirs = getattr(self, name), getattr(pretrainer, name)
            if name in RESOLVED_ATTRIBUTES:
                # What the encoder was built with counts: "auto" takes it, and so does naming it.
                used = getattr(pretrainer, RESOLVED_ATTRIBUTES[name], theirs)
                if not accepts_resolved(ours, used):
                    mismatched.append(
                        f"{name}={ours!r} (pretrained: {theirs!r}, which used {used!r}; 'auto' takes the pretrainer's)"
                    )
            elif not same_value(ours, theirs):
                mismatched.append(f"{name}={ours!r} (pretrained: {theirs!r})")
        if mismatched:
            raise ValueError(
                "The architecture differs from the pretrained encoder's: " + ", ".join(mismatched) + ". Use the "
                "pretrainer's values for these parameters."
            )
        ours, theirs = getattr(self, "feature_names_in_", None), getattr(pretrainer, "feature_names_in_", None)
        if self.n_features_in_ != pretrainer.n_features_in_ or (
            (ours is None) != (theirs is None) or (ours is not None and list(ours) != list(theirs))
        ):
            difference = _column_difference(ours, theirs, self, pretrainer)
            raise ValueError(
                f"X's columns differ from the pretrained encoder's: {difference}. The encoder reads the columns "
                "it was pretrained on, by position: give X the same columns, named alike, in the same order."
            )
        return pretrainer

    def _make_score_function(self, kind, frame_val, targets_val, y_val_raw, weights_val, pass_weights):
        if self.scoring == "loss":
            X_val = self._encode_X(frame_val)
            y_val = kind.tensor(targets_val, self._device)
            w_val = _weights_tensor(weights_val, self._device)
            network = self.network_
            members = network.n_efficient_members

            def negative_validation_loss():
                outputs = forward_in_batches(network, X_val.split(INFERENCE_BATCH_ROWS), lambda x: network(x)[0])
                # The members' mean loss with efficient members: the training objective on the held-out rows.
                losses = torch.cat(
                    [
                        member_mean_loss(kind.loss, output, y_val[offset : offset + len(output) // members], members)
                        for offset, output in outputs
                    ]
                )
                return -float((losses * w_val).sum() / w_val.sum())

            return negative_validation_loss
        scorer = check_scoring(self, scoring=self.scoring)
        if isinstance(self.scoring, str):
            check_scorer_fits_targets(self, scorer, frame_val, y_val_raw)
        encoded = []  # the validation rows, validated and encoded at the first epoch only

        def validation_score():
            if not encoded:
                frame = self._validate_X(frame_val, reset=False)
                encoded.extend([frame, list(encoded_batches(self._tabular_encoding, frame, self._device))])
            # The scorer calls predict on frame_val every epoch: _raw_output reads these instead.
            self._scoring_rows = (frame_val, *encoded)
            try:
                if pass_weights:
                    return scorer(self, frame_val, y_val_raw, sample_weight=weights_val)
                return scorer(self, frame_val, y_val_raw)
            finally:
                del self._scoring_rows

        return validation_score

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        tags.input_tags.allow_nan = True  # missing numeric values are learned (InputEmbedding)
        return tags
