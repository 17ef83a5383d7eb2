"""The kinds of target, one small class each: what the estimators ask instead of switching on the target.

A target kind knows how ``y`` of its kind is checked and encoded for the loss, the width of the
network's head, the per-row loss, how the head's outputs become predictions and probabilities,
what an exported program outputs, and the class weights of the rows. Its state is the estimator's
fitted attributes (``classes_``, ``n_outputs_``, ``target_mean_``, ...), so a kind is rebuilt from a
fitted estimator at any time, including one unpickled or loaded from a model file written before the
kinds existed.

- :class:`ClassLabels`: 1-D labels (scikit-learn's ``"binary"`` and ``"multiclass"``), one softmax
  over ``classes_``, cross-entropy.
- :class:`LabelIndicators`: a 0/1 matrix (``"multilabel-indicator"``), one sigmoid per column, the
  sum of the columns' binary cross-entropies (as :class:`~sklearn.neural_network.MLPClassifier`).
- :class:`MulticlassMultioutput`: 2-D labels (``"multiclass-multioutput"``), one softmax block per
  column of ``y`` over the concatenated head, the sum of the blocks' cross-entropies.
- :class:`ContinuousTargets`: regression targets with one of the losses of
  :mod:`sparsetab._training.regression_losses`: standardised for the squared error (and the absolute
  error, the Huber loss and the pinball loss), divided by their training mean for the Poisson and
  gamma deviances, whose network outputs the log of the mean; mapped back at predict.

Each kind also combines the outputs of an ensemble's members (``combine_members``) into one output
that its ``predict`` and ``predict_proba`` read as they read one network's: the log of the mean
probability for a softmax (per block for multiclass-multioutput), the logit of the mean probability
for a sigmoid, the mean for regression (for the log link, the log of the members' mean
prediction). The probabilities of an ensemble are so the mean of its
members' probabilities (soft voting, as ``VotingClassifier(voting="soft")``), and its labels are
those of the highest mean probability.
"""

import math
import numbers

import numpy as np
import pandas as pd
import torch
from sklearn.exceptions import DataConversionWarning
from sklearn.metrics import accuracy_score
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets, type_of_target, unique_labels
from sklearn.utils.validation import _check_sample_weight, check_array, check_consistent_length, column_or_1d

from ._training.regression_losses import RegressionLoss
from ._warnings import warn

__all__ = [
    "ClassLabels",
    "ContinuousTargets",
    "LabelIndicators",
    "MulticlassMultioutput",
    "check_class_weight",
    "classification_kind",
    "continuous_kind",
    "count_by_column",
    "fit_classification_kind",
    "fit_continuous_kind",
    "ravel_label_column",
]


def count_by_column(flags):
    """Count flagged values, per column for a 2-D array.

    Parameters
    ----------
    flags : numpy.ndarray of shape (n_samples,) or (n_samples, n_outputs), bool
        The flagged values.

    Returns
    -------
    str
        ``"3"`` for a 1-D array (or none flagged), ``"3 (column 0: 1, column 2: 2)"`` for a 2-D one.
    """
    total = int(flags.sum())
    if flags.ndim == 1 or total == 0:
        return str(total)
    per_column = ", ".join(f"column {j}: {int(count)}" for j, count in enumerate(flags.sum(axis=0)) if count)
    return f"{total} ({per_column})"


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


def _plain_column(column):
    """A pandas label column as the numpy array of the labels the user sees (missing values as None).

    ``boolean`` gives bool, ``Int64`` and its kin the numpy integer of the same width, ``Float64``
    float64, ``string`` an object array of str, a categorical column its categories' dtype; other
    columns pass through ``to_numpy()``. With missing values the result is an object array holding
    None there, which the missing-label check names.
    """
    dtype = column.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        categories = column.cat.categories
        if column.isna().any():
            return column.astype(object).where(column.notna(), None).to_numpy(dtype=object)
        return categories.to_numpy()[column.cat.codes.to_numpy()]
    if isinstance(dtype, pd.api.extensions.ExtensionDtype) and not isinstance(dtype, pd.DatetimeTZDtype):
        if column.isna().any():
            return column.to_numpy(dtype=object, na_value=None)
        numpy_dtype = getattr(dtype, "numpy_dtype", None)  # boolean, Int*, UInt*, Float*
        if isinstance(dtype, pd.StringDtype) or numpy_dtype is None or numpy_dtype.kind == "O":
            return column.to_numpy(dtype=object)
        return column.to_numpy(dtype=numpy_dtype)
    return column.to_numpy()


def _plain_labels(y):
    """``y`` with pandas label columns as numpy arrays (see :func:`_plain_column`); other inputs unchanged.

    A DataFrame whose columns get different numpy dtypes becomes an object array, each value the
    one its column gives.
    """
    if isinstance(y, pd.Series):
        return _plain_column(y)
    if isinstance(y, pd.DataFrame):
        columns = [_plain_column(y.iloc[:, k]) for k in range(y.shape[1])]
        if len({column.dtype for column in columns}) <= 1:
            return np.column_stack(columns) if columns else y.to_numpy()
        array = np.empty((y.shape[0], y.shape[1]), dtype=object)
        for k, column in enumerate(columns):
            array[:, k] = column
        return array
    return y


def pandas_array_as_series(y):
    """A bare pandas array (``pd.array(...)``, e.g. of dtype ``"string"``, ``"Int64"`` or ``"boolean"``) as a Series.

    The target checks read a Series's extension dtype (its labels keep their type: ``Int64`` gives
    integers, ``boolean`` booleans) and index it by position; a bare extension array, which neither
    numpy nor scikit-learn's ``_safe_indexing`` reads alike (a pyarrow-backed one cannot be indexed by
    an integer array), is given the same treatment.

    Parameters
    ----------
    y : object
        The targets as given.

    Returns
    -------
    object
        A ``pandas.Series`` (without copying the values) for a ``pandas.api.extensions.ExtensionArray``,
        ``y`` itself otherwise.
    """
    if isinstance(y, pd.api.extensions.ExtensionArray):
        return pd.Series(y, copy=False)
    return y


def ravel_label_column(y, name="y"):
    """A one-column 2-D ``y`` of labels as 1-D, with scikit-learn's ``DataConversionWarning`` once.

    Called once per argument at the start of a classifier's fit, so that the several later
    checks of the same rows (the target kind, the training and the held-out rows) see 1-D
    labels and do not warn again.

    Parameters
    ----------
    y : array-like
        The labels as given: a list, an array, a Series or a DataFrame.
    name : str, default="y"
        The argument's name in the warning.

    Returns
    -------
    object
        ``y`` itself unless it has two dimensions and one column; then its column (a Series
        for a DataFrame, a 1-D array otherwise).
    """
    if hasattr(y, "toarray"):  # a sparse label matrix: left to the checks that read it
        return y
    if isinstance(y, pd.DataFrame):
        if y.shape[1] != 1:
            return y
        raveled = y.iloc[:, 0]
    else:
        array = np.asarray(y) if not hasattr(y, "shape") else y
        if np.ndim(array) != 2 or np.shape(array)[1] != 1:
            return y
        raveled = np.asarray(array)[:, 0]
    warn(
        f"A column-vector {name} was passed when a 1d array was expected. Please change the shape of {name} to "
        "(n_samples,), for example using ravel().",
        DataConversionWarning,
    )
    return raveled


def _check_labels(y, name):
    """``y`` as an array of labels (a one-column 2-D ``y`` raveled, with scikit-learn's warning), no missing."""
    y = check_array(_plain_labels(y), ensure_2d=False, dtype=None, ensure_all_finite=False, input_name=name)
    if y.ndim == 2 and y.shape[1] == 1:
        y = column_or_1d(y, warn=True)
    missing = pd.isna(y) if y.dtype.kind in "fO" else np.zeros(y.shape, dtype=bool)
    if missing.any():
        raise ValueError(
            f"{name} contains {count_by_column(missing)} missing label(s) (NaN or None); remove or label those rows."
        )
    return y


class _ClassificationKind:
    """What the three classification kinds share: label checks, class weights, accuracy."""

    target_type = None

    def __init__(self, classes, y_dtype, n_outputs):
        self.classes = classes
        self.y_dtype = y_dtype
        self.n_outputs = n_outputs

    def attributes(self):
        """The estimator's fitted attributes that hold this kind's state."""
        return {
            "classes_": self.classes,
            "n_outputs_": self.n_outputs,
            "_target_type": self.target_type,
            "_y_dtype": self.y_dtype,
        }

    def encode(self, y, name):
        """Check ``y`` against the fitted classes and return its encoding for the loss."""
        y = _check_labels(y, name)
        if (y.ndim == 1) != (self.n_outputs == 1) or (y.ndim == 2 and y.shape[1] != self.n_outputs):
            raise ValueError(
                f"{name} has shape {y.shape} but the model was fitted on y with {self.n_outputs} output column(s) "
                f"(type_of_target {self.target_type!r}); {name} needs the same number of columns."
            )
        return self._encode_checked(y, name)

    def class_weights(self, y, class_weight):
        """Per-row weights of ``class_weight`` for the labels ``y`` (None without ``class_weight``)."""
        if class_weight is None:
            return None
        y = check_array(y, ensure_2d=False, dtype=None, ensure_all_finite=False, input_name="y")
        if y.ndim == 2 and y.shape[1] == 1:
            y = y.ravel()
        check_class_weight(class_weight, y.shape[1] if y.ndim == 2 else None, self.target_type)
        # For 2-D y the weights of the columns are multiplied, as in scikit-learn's forests.
        return compute_sample_weight(class_weight, y)

    def stratify(self, targets):
        """Codes to stratify the validation split on, or None."""
        return None

    def fit_scale(self, targets):
        """Nothing to learn from the training rows: class codes are not rescaled."""

    def accuracy(self, y, y_pred, sample_weight):
        """Accuracy of ``y_pred`` (subset accuracy for 2-D ``y``)."""
        return accuracy_score(_plain_labels(y), y_pred, sample_weight=sample_weight)

    @staticmethod
    def tensor(targets, device):
        """Class codes as the long tensor of the cross-entropy."""
        return torch.as_tensor(targets, dtype=torch.long, device=device)


class ClassLabels(_ClassificationKind):
    """1-D class labels: one softmax head over ``classes_`` and the cross-entropy.

    Parameters
    ----------
    classes : numpy.ndarray of shape (n_classes,)
        The sorted labels.
    y_dtype : numpy.dtype
        The dtype of ``y`` at fit, kept by ``predict``.
    target_type : {"binary", "multiclass"}, default="multiclass"
        scikit-learn's ``type_of_target`` of ``y`` at fit.
    """

    def __init__(self, classes, y_dtype, target_type="multiclass"):
        super().__init__(classes, y_dtype, 1)
        # "binary" or "multiclass": the head and the loss are the same, the fitted _target_type keeps which.
        self.target_type = target_type

    @property
    def output_dim(self):
        return len(self.classes)

    def _encode_checked(self, y, name):
        return _label_codes(self.classes, y, name)

    def stratify(self, targets):
        return targets

    def check_continued(self, y, incremental):
        """Check that a continued fit's ``y`` has this model's classes."""
        labels = unique_labels(column_or_1d(y, warn=False) if np.ndim(y) == 2 else y)
        if incremental:
            unknown = np.setdiff1d(labels, self.classes)
            if unknown.size:
                raise ValueError(
                    f"y has classes not in classes_: {unknown.tolist()!r}; classes_ is {self.classes.tolist()!r} "
                    "(set by the classes argument of the first partial_fit call, or by fit)."
                )
        elif set(labels.tolist()) != set(self.classes.tolist()):
            raise ValueError(
                "warm_start can only be used where y has the same classes as in the previous call to fit: "
                f"previously {self.classes.tolist()!r}, y has {labels.tolist()!r}. Set warm_start=False to refit."
            )

    def decode(self, targets):
        return self.classes[targets]

    @staticmethod
    def loss(output, target):
        return torch.nn.functional.cross_entropy(output, target, reduction="none")

    @staticmethod
    def predict_proba(output):
        return torch.softmax(torch.from_numpy(output).double(), dim=1).numpy()

    @staticmethod
    def predict_log_proba(output):
        # log_softmax of the logits, not the log of predict_proba: no -inf where a probability underflows.
        return torch.log_softmax(torch.from_numpy(output).double(), dim=1).numpy()

    @staticmethod
    def combine_members(outputs):
        """One output of an ensemble's members: the log of their mean softmax (float64).

        Its softmax is the mean of the members' probabilities and its argmax the class of the
        highest mean probability (a class no member gives any probability gets ``-inf``).
        """
        probabilities = torch.softmax(torch.from_numpy(outputs).double(), dim=2).mean(dim=0)
        return torch.log(probabilities).numpy()

    def predict(self, output):
        return self.classes[np.argmax(output, axis=1)]

    def serving_output(self):
        return {
            "transform": "softmax",
            "description": f"float64 (batch, n_classes): class probabilities for classes {self.classes.tolist()!r}",
            "classes": self.classes.tolist(),
        }


class LabelIndicators(_ClassificationKind):
    """A 0/1 label indicator matrix: one sigmoid per column, the columns' binary cross-entropies summed.

    Parameters
    ----------
    n_outputs : int
        Label columns.
    y_dtype : numpy.dtype
        The dtype of ``y`` at fit, kept by ``predict``.
    """

    target_type = "multilabel-indicator"

    def __init__(self, n_outputs, y_dtype):
        # classes_ is arange(n_labels): the label columns, as MLPClassifier's.
        super().__init__(np.arange(n_outputs), y_dtype, n_outputs)

    @property
    def output_dim(self):
        return self.n_outputs

    def _encode_checked(self, y, name):
        values = np.unique(y)
        if not np.isin(values, [0, 1]).all():
            raise ValueError(
                f"{name} is a label indicator matrix (type_of_target 'multilabel-indicator') with values "
                f"{values.tolist()!r}; it must hold 0 and 1 only (or booleans), one column per label."
            )
        return y.astype(np.float32)

    def check_continued(self, y, incremental):
        _refuse_partial_fit_of_2d_targets(y, incremental)

    def decode(self, targets):
        return targets.astype(self.y_dtype)

    @staticmethod
    def tensor(targets, device):
        return torch.as_tensor(targets, dtype=torch.float32, device=device)

    @staticmethod
    def loss(output, target):
        return torch.nn.functional.binary_cross_entropy_with_logits(output, target, reduction="none").sum(dim=1)

    @staticmethod
    def predict_proba(output):
        return torch.sigmoid(torch.from_numpy(output).double()).numpy()

    @staticmethod
    def predict_log_proba(output):
        return torch.nn.functional.logsigmoid(torch.from_numpy(output).double()).numpy()

    @staticmethod
    def combine_members(outputs):
        """One output of an ensemble's members: the logit of their mean sigmoid per label (float64)."""
        probabilities = torch.sigmoid(torch.from_numpy(outputs).double()).mean(dim=0)
        return torch.logit(probabilities).numpy()

    def predict(self, output):
        return (self.predict_proba(output) > 0.5).astype(self.y_dtype)

    def serving_output(self):
        return {
            "transform": "sigmoid",
            "description": (
                f"float64 (batch, {self.n_outputs}): probability that each of the {self.n_outputs} labels "
                "(columns of y) is 1; predict is probability > 0.5"
            ),
            "classes": self.classes.tolist(),
        }


class MulticlassMultioutput(_ClassificationKind):
    """2-D class labels: one softmax block per column of ``y``, the blocks' cross-entropies summed.

    Parameters
    ----------
    classes : list of numpy.ndarray
        The sorted labels of each column.
    y_dtype : numpy.dtype
        The dtype of ``y`` at fit, kept by ``predict``.
    """

    target_type = "multiclass-multioutput"

    def __init__(self, classes, y_dtype):
        super().__init__(classes, y_dtype, len(classes))
        self.blocks = [len(column_classes) for column_classes in classes]

    @property
    def output_dim(self):
        return sum(self.blocks)

    def _encode_checked(self, y, name):
        return np.column_stack(
            [_label_codes(classes, y[:, k], f"{name}[:, {k}]") for k, classes in enumerate(self.classes)]
        )

    def check_continued(self, y, incremental):
        _refuse_partial_fit_of_2d_targets(y, incremental)

    def decode(self, targets):
        raw = np.empty(targets.shape, dtype=self.y_dtype)
        for k, classes in enumerate(self.classes):
            raw[:, k] = classes[targets[:, k]]
        return raw

    def loss(self, output, target):
        return sum(
            torch.nn.functional.cross_entropy(block, target[:, k], reduction="none")
            for k, block in enumerate(output.split(self.blocks, dim=1))
        )

    def predict_proba(self, output):
        logits = torch.from_numpy(output).double()
        return [torch.softmax(block, dim=1).numpy() for block in logits.split(self.blocks, dim=1)]

    def predict_log_proba(self, output):
        logits = torch.from_numpy(output).double()
        return [torch.log_softmax(block, dim=1).numpy() for block in logits.split(self.blocks, dim=1)]

    def combine_members(self, outputs):
        """One output of an ensemble's members: per block, the log of their mean softmax (float64)."""
        logits = torch.from_numpy(outputs).double()
        blocks = [torch.softmax(block, dim=2).mean(dim=0) for block in logits.split(self.blocks, dim=2)]
        return torch.log(torch.cat(blocks, dim=1)).numpy()

    def predict(self, output):
        offsets = np.cumsum([0, *self.blocks])
        y_pred = np.empty((output.shape[0], self.n_outputs), dtype=self.y_dtype)
        for k, classes in enumerate(self.classes):
            y_pred[:, k] = classes[np.argmax(output[:, offsets[k] : offsets[k + 1]], axis=1)]
        return y_pred

    def accuracy(self, y, y_pred, sample_weight):
        # accuracy_score refuses multiclass-multioutput; the same subset accuracy, as MultiOutputClassifier.
        y = check_array(_plain_labels(y), ensure_2d=False, dtype=None, ensure_all_finite=False, input_name="y")
        if y.ndim != 2 or y.shape[1] != self.n_outputs:
            raise ValueError(
                f"y has shape {y.shape}; this model was fitted on {self.n_outputs} output columns "
                "('multiclass-multioutput'), so y needs (n_samples, n_outputs_)."
            )
        check_consistent_length(y_pred, y, sample_weight)
        sample_weight = None if sample_weight is None else _check_sample_weight(sample_weight, y)
        return float(np.average(np.all(y_pred == y, axis=1), weights=sample_weight))

    def serving_output(self):
        return {
            "transform": "softmax",
            "softmax_blocks": self.blocks,
            "description": (
                f"float64 (batch, {sum(self.blocks)}): for each of the {self.n_outputs} output columns in turn, a "
                f"block of class probabilities (block widths {self.blocks}, summing to 1 each) for the classes "
                f"{[classes.tolist() for classes in self.classes]!r}"
            ),
            "classes": [classes.tolist() for classes in self.classes],
        }


def _refuse_partial_fit_of_2d_targets(y, incremental):
    if incremental:
        raise ValueError(
            "partial_fit supports one column of class labels (binary or multiclass y); got y of shape "
            f"{np.shape(y)}. For multilabel or multi-output targets use fit with warm_start=True."
        )


def check_class_weight(class_weight, n_columns, target_type):
    """Check that ``class_weight`` has the form of the target: a dict for 1-D ``y``, a list for 2-D.

    Parameters
    ----------
    class_weight : dict, list of dict or "balanced"
        The parameter.
    n_columns : int or None
        Columns of a 2-D ``y``, None for 1-D.
    target_type : str
        scikit-learn's ``type_of_target`` of ``y``, for the message.

    Raises
    ------
    ValueError
        For a list with 1-D ``y``, a dict with 2-D ``y``, a list of the wrong length, or a weight that
        is not a finite number >= 0 (a negative weight would turn the loss of its class's rows into a
        gain, as a negative ``sample_weight``, which scikit-learn refuses).
    """
    dicts = [class_weight] if isinstance(class_weight, dict) else class_weight if isinstance(class_weight, list) else []
    for column, weights in enumerate(dicts):
        for label, weight in weights.items() if isinstance(weights, dict) else ():
            valid = isinstance(weight, numbers.Real) and not isinstance(weight, bool) and math.isfinite(weight)
            if not (valid and weight >= 0):
                where = f"class {label!r}" if isinstance(class_weight, dict) else f"class {label!r} of column {column}"
                raise ValueError(
                    f"class_weight gives {where} the weight {weight!r}; a class weight must be a finite number "
                    ">= 0 (0 leaves the class's rows out, as sample_weight 0 does)."
                )
    if n_columns is None and isinstance(class_weight, list):
        raise ValueError(
            f"class_weight is a list of {len(class_weight)} dict(s), which is for 2-D y (one dict per output "
            "column); for a 1-D y give a dict {label: weight} or 'balanced'."
        )
    if n_columns is not None and isinstance(class_weight, dict):
        raise ValueError(
            f"class_weight is a dict but y has {n_columns} output columns (type_of_target {target_type!r}); give a "
            f"list of {n_columns} dicts, one per column (for a label indicator matrix, each mapping 0 and 1 to "
            "weights), or 'balanced'."
        )
    if n_columns is not None and isinstance(class_weight, list) and len(class_weight) != n_columns:
        raise ValueError(
            f"class_weight is a list of {len(class_weight)} dict(s) but y has {n_columns} output columns; give "
            "one dict per column."
        )


def fit_classification_kind(y, name="y"):
    """Learn the classification kind of ``y``: its type of target and its classes.

    Parameters
    ----------
    y : array-like of shape (n_samples,) or (n_samples, n_outputs)
        Class labels, or a label indicator matrix.
    name : str, default="y"
        The argument's name in messages.

    Returns
    -------
    ClassLabels, LabelIndicators or MulticlassMultioutput

    Raises
    ------
    ValueError
        For missing labels, a continuous ``y``, mixed label types, or a single class.
    """
    y = _check_labels(y, name)
    if y.ndim == 2 and y.dtype.kind == "O" and _mixed_label_types(y):
        # scikit-learn sorts all the labels together and fails on str beside int: each column is its
        # own classification here, so each gets its own classes.
        return MulticlassMultioutput([_column_classes(y[:, k], name, k) for k in range(y.shape[1])], y.dtype)
    check_classification_targets(y)
    target_type = type_of_target(y, input_name=name)
    if target_type == LabelIndicators.target_type:
        kind = LabelIndicators(y.shape[1], y.dtype)
        kind._encode_checked(y, name)  # refuses values other than 0 and 1
        return kind
    if target_type == MulticlassMultioutput.target_type:
        return MulticlassMultioutput([np.unique(y[:, k]) for k in range(y.shape[1])], y.dtype)
    classes = np.unique(y)
    if len(classes) < 2:
        raise ValueError(
            f"y contains only one class ({classes[0]!r}); a classifier needs samples of at least 2 classes."
        )
    return ClassLabels(classes, y.dtype, target_type)


def _mixed_label_types(y):
    """Whether the columns of a 2-D object ``y`` hold labels of different types (str in one, int in another)."""
    kinds = [{type(value) for value in y[:, k]} for k in range(y.shape[1])]
    return any(column != kinds[0] for column in kinds[1:])


def _column_classes(column, name, k):
    """The sorted classes of one column of a multi-output ``y``, as an array of the column's own type."""
    values = list(column)
    kind = type_of_target(np.asarray(values), input_name=f"{name}[:, {k}]")
    if kind not in ("binary", "multiclass"):
        raise ValueError(f"Column {k} of {name} is {kind!r}; each column of a multi-output y needs class labels.")
    try:
        classes = np.unique(np.asarray(values))
    except TypeError as error:
        raise ValueError(f"Column {k} of {name} mixes label types ({error}); use one type per column.") from None
    if classes.dtype.kind not in "OUS":
        return classes
    array = np.empty(len(classes), dtype=object)
    array[:] = classes.tolist()  # Python str, not numpy's str_
    return array


def classification_kind(estimator):
    """The classification kind of a fitted classifier, from its fitted attributes.

    Parameters
    ----------
    estimator : SparseTabNetClassifier
        Fitted.

    Returns
    -------
    ClassLabels, LabelIndicators or MulticlassMultioutput
    """
    if estimator._target_type == LabelIndicators.target_type:
        return LabelIndicators(estimator.n_outputs_, estimator._y_dtype)
    if estimator._target_type == MulticlassMultioutput.target_type:
        return MulticlassMultioutput(estimator.classes_, estimator._y_dtype)
    return ClassLabels(estimator.classes_, estimator._y_dtype, estimator._target_type)


class ContinuousTargets:
    """Regression targets and their loss: scaled with training statistics for the network, mapped back at predict.

    With the identity link (``"squared_error"``, ``"absolute_error"``, ``"huber"``,
    ``"quantile"``) the network learns the standardised target ``(y - target_mean) /
    target_scale`` (the training mean and standard deviation); each of these losses is
    equivariant under a positive affine map of ``y``, so the prediction is the output mapped back,
    ``output * target_scale + target_mean``. With the log link (``"poisson"``, ``"gamma"``) the
    network learns ``y / target_scale`` (the training mean, so that the head starts near the log of
    the mean, 0) and outputs the log of its mean: the prediction is ``exp(output) * target_scale``.

    Parameters
    ----------
    n_outputs : int
        Targets.
    y_ndim : int
        1 when ``y`` was 1-D at fit (predictions are then 1-D), else 2.
    target_mean, target_scale : numpy.ndarray of shape (n_outputs,) or None
        The scaling, learned by :meth:`fit_scale` on the training rows.
    regression_loss : RegressionLoss or None, default=None
        The loss (:class:`~sparsetab._training.regression_losses.RegressionLoss`); None: the squared error.
    """

    target_type = "continuous"

    def __init__(self, n_outputs, y_ndim, target_mean=None, target_scale=None, regression_loss=None):
        self.n_outputs = n_outputs
        self.y_ndim = y_ndim
        self.target_mean = target_mean
        self.target_scale = target_scale
        self.regression_loss = RegressionLoss() if regression_loss is None else regression_loss

    def attributes(self):
        """The estimator's fitted attributes that hold this kind's state."""
        attributes = {
            "n_outputs_": self.n_outputs,
            "_y_ndim": self.y_ndim,
            "_loss_parameters": self.regression_loss.parameters(),
        }
        if self.target_mean is not None:
            attributes.update(target_mean_=self.target_mean, target_scale_=self.target_scale)
        return attributes

    @property
    def output_dim(self):
        return self.n_outputs

    @staticmethod
    def check(y, name):
        """``y`` as a finite float64 array of shape (n_samples, n_outputs)."""
        y = check_array(y, ensure_2d=False, dtype=np.float64, ensure_all_finite=False, input_name=name)
        if y.ndim > 2:
            raise ValueError(f"{name} must be 1-D or 2-D, got shape {y.shape}.")
        if not np.isfinite(y).all():
            raise ValueError(
                f"{name} contains {count_by_column(np.isnan(y))} NaN and {count_by_column(np.isinf(y))} infinite "
                "value(s); regression targets must be finite."
            )
        return y

    def check_domain(self, y, name, *, fit=False):
        """Refuse targets outside the loss's domain: ``y >= 0`` for poisson, ``y > 0`` for gamma.

        Parameters
        ----------
        y : numpy.ndarray of shape (n_samples,) or (n_samples, n_outputs), float64
            Finite targets.
        name : str
            The argument's name in messages (``"y"``, ``"y_val"``).
        fit : bool, default=False
            Whether ``y`` holds the training rows of a ``fit`` (or of the first ``partial_fit``):
            poisson then also needs a positive sum in each output column (the log link has no
            zero mean to start from). Validation rows and the later ``partial_fit`` calls of a
            stream only need values in the domain.

        Raises
        ------
        ValueError
            Naming the loss, the offending values and what the loss accepts.
        """
        loss = self.regression_loss.name
        if loss == "poisson":
            negative = y < 0
            if negative.any():
                raise ValueError(
                    f"loss='poisson' needs {name} >= 0 (counts or rates), but {name} has {count_by_column(negative)} "
                    f"negative value(s), the smallest {float(y[negative].min())!r}. Use another loss (e.g. "
                    "'squared_error') for targets that can be negative."
                )
            sums = y.reshape(len(y), -1).sum(axis=0)
            if fit and (sums <= 0).any():
                where = "" if y.ndim == 1 else f" in column(s) {np.flatnonzero(sums <= 0).tolist()}"
                raise ValueError(
                    f"loss='poisson' needs {name} >= 0 with sum({name}) > 0 over the rows of positive sample_weight, "
                    f"but {name} is 0 on every such row{where}: the log of a zero mean does not exist. Give rows "
                    "with positive targets (and a positive sample_weight: rows of weight 0 are left out)."
                )
        elif loss == "gamma":
            not_positive = y <= 0
            if not_positive.any():
                raise ValueError(
                    f"loss='gamma' needs {name} > 0 (positive amounts), but {name} has {count_by_column(not_positive)} "
                    f"value(s) <= 0, the smallest {float(y[not_positive].min())!r}. Use loss='poisson' for targets "
                    "that can be 0, or another loss for targets that can be negative."
                )

    def encode(self, y, name):
        """Check ``y`` (finite, in the loss's domain); return it as (n_samples, n_outputs) float64 in its own units."""
        y = self.check(y, name)
        if (1 if y.ndim == 1 else y.shape[1]) != self.n_outputs:
            raise ValueError(
                f"{name} has {y.shape[1] if y.ndim == 2 else 1} output(s); the model was fitted on {self.n_outputs}."
            )
        self.check_domain(y, name)
        return y.reshape(len(y), -1)

    def fit_scale(self, targets):
        """Learn the scaling on the training targets.

        The identity link standardises (a constant target gets scale 1); the log link divides
        by the mean (a zero mean, possible only for training rows left by the validation split,
        gets scale 1), and ``target_mean`` is the mean too.
        """
        self.target_mean = targets.mean(axis=0)
        if self.regression_loss.log_link:
            self.target_scale = np.where(self.target_mean > 0, self.target_mean, 1.0)
            return
        scale = targets.std(axis=0)
        self.target_scale = np.where(scale > 0, scale, 1.0)

    def check_continued(self, y, incremental):
        """Check that a continued fit's ``y`` has the fitted number of outputs (and, for ``fit``, the loss's domain)."""
        n_outputs = 1 if np.ndim(y) < 2 else np.shape(y)[1]
        if n_outputs != self.n_outputs:
            raise ValueError(
                f"y has {n_outputs} output(s) but the fitted model has n_outputs_={self.n_outputs}; "
                "partial_fit and warm_start need targets of the same shape."
            )
        if not incremental:  # a warm-started fit checks its rows as a first fit does; partial_fit's encode does
            self.check_domain(self.check(y, "y"), "y", fit=True)

    @staticmethod
    def class_weights(y, class_weight):
        return None

    @staticmethod
    def stratify(targets):
        return None

    def decode(self, targets):
        return targets.ravel() if self.y_ndim == 1 else targets

    def tensor(self, targets, device):
        if self.regression_loss.log_link:
            scaled = targets / self.target_scale
        else:
            scaled = (targets - self.target_mean) / self.target_scale
        return torch.as_tensor(scaled, dtype=torch.float32, device=device)

    def loss(self, output, target):
        return self.regression_loss(output, target)

    def combine_members(self, outputs):
        """One output of an ensemble's members (float64) whose prediction is the mean of theirs.

        The identity link: the mean of the outputs (predictions are affine in it). The log link:
        the log of the mean of ``exp(output)``.
        """
        outputs = outputs.astype(np.float64)
        if self.regression_loss.log_link:
            return torch.logsumexp(torch.from_numpy(outputs), dim=0).numpy() - np.log(outputs.shape[0])
        return outputs.mean(axis=0)

    def predict(self, output):
        if self.regression_loss.log_link:
            prediction = np.exp(output.astype(np.float64)) * self.target_scale
        else:
            prediction = output.astype(np.float64) * self.target_scale + self.target_mean
        return prediction.ravel() if self.y_ndim == 1 else prediction

    def serving_output(self):
        if self.regression_loss.log_link:
            return {
                "transform": "exp",
                "target_scale": self.target_scale,
                "description": (
                    f"float64 (batch, {self.n_outputs}): predicted means in the targets' original units "
                    f"(loss={self.regression_loss.name!r}: exp of the network's output, the log link, times the "
                    "training mean)"
                ),
            }
        return {
            "transform": "affine",
            "target_mean": self.target_mean,
            "target_scale": self.target_scale,
            "description": f"float64 (batch, {self.n_outputs}): predicted targets in their original units",
        }


def fit_continuous_kind(y, name="y", regression_loss=None):
    """The regression kind of ``y`` (its number of outputs; the scale is learned later by ``fit_scale``).

    Parameters
    ----------
    y : array-like of shape (n_samples,) or (n_samples, n_outputs)
        Targets.
    name : str, default="y"
        The argument's name in messages.
    regression_loss : RegressionLoss or None, default=None
        The loss; None: the squared error.

    Returns
    -------
    ContinuousTargets

    Raises
    ------
    ValueError
        For targets that are not finite, of more than two dimensions, or outside the loss's
        domain (see :meth:`ContinuousTargets.check_domain`).
    """
    y = ContinuousTargets.check(y, name)
    kind = ContinuousTargets(1 if y.ndim == 1 else y.shape[1], y.ndim, regression_loss=regression_loss)
    kind.check_domain(y, name, fit=True)
    return kind


def continuous_kind(estimator):
    """The regression kind of a fitted regressor, from its fitted attributes.

    Parameters
    ----------
    estimator : SparseTabNetRegressor
        Fitted.

    Returns
    -------
    ContinuousTargets
        With the loss the model was fitted with (its ``_loss_parameters``; a model fitted before
        the losses existed has none and learned the squared error), whatever ``loss`` is now.
    """
    loss = RegressionLoss(**getattr(estimator, "_loss_parameters", {"loss": "squared_error"}))
    return ContinuousTargets(
        estimator.n_outputs_, estimator._y_ndim, estimator.target_mean_, estimator.target_scale_, loss
    )
