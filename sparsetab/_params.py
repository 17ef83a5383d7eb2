"""The one parameter table of the estimators, and what is derived from it.

Each hyperparameter is written here once: its default, its constraint (scikit-learn's
``_parameter_constraints`` vocabulary), its role and the estimators that take it. The constraint
dicts, the groups of names that warm starts and pretrained encoders compare, the keyword arguments
of :class:`~sparsetab.network.TabNet` and the :class:`~sparsetab._training.loop.TrainingConfig` are
generated from it, and the rules behind its ``"auto"`` values (early stopping, the refit on all
rows, batch sizes, efficient members) live beside it. The steps of a fit that use them are in
:mod:`sparsetab._recipe`.

Roles:

- ``architecture``: shapes the TabNet encoder's weights (a pretrained encoder must match them);
- ``batch normalisation``: ghost batch normalisation, part of the network but not of its weights;
- ``tabular encoding``: how columns become network inputs (numeric transform, categorical columns,
  embedding widths, attention groups, numerical embeddings), also fixed once the network is built;
- ``ensemble``: how many independently seeded networks are trained and averaged (the supervised
  estimators only); part of the fitted network's structure, not of one member's weights;
- ``training``: the fit loop; ``runtime``: where and how torch runs.
"""

import numbers
from dataclasses import dataclass, fields

import numpy as np
import torch
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions

from ._training.loop import LEARNING_RATE_SCHEDULES, TrainingConfig
from ._training.regression_losses import REGRESSION_LOSSES
from .network import ENTMAX_MODES, NUMERICAL_EMBEDDINGS, STEP_GATES

__all__ = [
    "AUTO_BATCH_MAX",
    "AUTO_BATCH_MIN",
    "AUTO_BATCH_STEPS",
    "AUTO_EARLY_STOPPING_MIN_ROWS",
    "AUTO_EFFICIENT_MEMBERS",
    "AUTO_EFFICIENT_MEMBERS_MAX_ROWS",
    "AUTO_NUMERICAL_EMBEDDING",
    "AUTO_REFIT_MIN_ROWS",
    "AUTO_SELECTION_MIN_ROWS",
    "AUTO_REFIT_KEEPS_FIRST_PASS",
    "AUTO_VIRTUAL_BATCH_MAX",
    "DEFAULTS",
    "LEGACY_VALUES",
    "NETWORK_PARAMETERS",
    "ON_CHANGE",
    "PARAMETERS",
    "PRETRAINED_PARAMETERS",
    "Parameter",
    "RESOLVED_ATTRIBUTES",
    "accepts_resolved",
    "constant_groups",
    "network_config",
    "parameter_constraints",
    "resolve_batch_sizes",
    "resolve_epoch_refit",
    "resolve_early_stopping",
    "resolve_efficient_members",
    "resolve_numerical_embedding",
    "resolve_weight_averaging",
    "same_value",
    "store_parameters",
    "training_config",
]

CLASSIFIER, REGRESSOR, PRETRAINER = "classifier", "regressor", "pretrainer"
_SUPERVISED = frozenset({CLASSIFIER, REGRESSOR})
_ALL = frozenset({CLASSIFIER, REGRESSOR, PRETRAINER})


class _Original:
    """Marks a parameter that every sparsetab release had (no legacy value)."""

    def __repr__(self):
        return "ORIGINAL"


ORIGINAL = _Original()

# early_stopping="auto" switches on above this many training rows.
AUTO_EARLY_STOPPING_MIN_ROWS = 10000
# Below that, from AUTO_REFIT_MIN_ROWS rows on, early_stopping="auto" chooses the number of epochs on held-out
# rows and then trains on every row for that many (resolve_epoch_refit; benchmarks/results/small_tables.md and
# tiny_tables_refit.md); under it, 10% held out would leave fewer than 10 rows to choose on.
AUTO_REFIT_MIN_ROWS = 100
# Two efficient members and the numerical embedding start at this many rows (the smallest tables measured).
AUTO_SELECTION_MIN_ROWS = 1000
# The refit rule keeps the first pass's network beside the refit's, and the predictions average them
# (benchmarks/refit_screen.py: the "average" column).
AUTO_REFIT_KEEPS_FIRST_PASS = True
# batch_size="auto": about AUTO_BATCH_STEPS optimiser steps per epoch, as a power of two in
# [AUTO_BATCH_MIN, AUTO_BATCH_MAX]; virtual_batch_size="auto": the batch, at most AUTO_VIRTUAL_BATCH_MAX.
AUTO_BATCH_STEPS = 32
AUTO_BATCH_MIN = 32
AUTO_BATCH_MAX = 1024
AUTO_VIRTUAL_BATCH_MAX = 128
# n_efficient_members="auto": this many members on AUTO_SELECTION_MIN_ROWS to AUTO_EFFICIENT_MEMBERS_MAX_ROWS
# training rows, one elsewhere (resolve_efficient_members; benchmarks/results/ensemble_screen.md).
AUTO_EFFICIENT_MEMBERS = 2
AUTO_EFFICIENT_MEMBERS_MAX_ROWS = 20000
# weight_averaging_epochs="auto": this time constant where early stopping keeps the final model, none elsewhere
# (resolve_weight_averaging; benchmarks/results/screen_weight_averaging.md).
AUTO_WEIGHT_AVERAGING_EPOCHS = 2.0
# numerical_embedding="auto": this embedding from AUTO_SELECTION_MIN_ROWS training rows on, the plain
# standardised value below (resolve_numerical_embedding; benchmarks/results/tiny_tables_embedding.md).
AUTO_NUMERICAL_EMBEDDING = "piecewise_linear"


@dataclass(frozen=True)
class Parameter:
    """One hyperparameter: name, default, constraint, role and the estimators that take it.

    Parameters
    ----------
    name : str
        The constructor argument.
    default : object
        Its default value.
    constraint : list
        scikit-learn's ``_parameter_constraints`` entry.
    role : str
        ``"architecture"``, ``"batch normalisation"``, ``"tabular encoding"``, ``"ensemble"``,
        ``"training"`` or ``"runtime"``.
    estimators : frozenset of str
        Among ``"classifier"``, ``"regressor"``, ``"pretrainer"``.
    network_type : type or None
        For the parameters the network is built from, the plain type its value is stored as
        in the network configuration (a model file keeps it as JSON); a value of None is
        stored as None.
    legacy : object
        For a parameter added after the first release, the value that reproduces what models
        saved before it existed did (a pickle or model file without it loads with this value
        and predicts and continues training as before); ``ORIGINAL`` for the others.
    change : str or None
        What a change of the parameter between ``partial_fit`` calls, or before a fit with
        ``warm_start=True``, does (see :data:`ON_CHANGE`); None for the rule of its role:
        ``"refused"`` for the parameters the network is built from, ``"next call"`` for the
        others.
    """

    name: str
    default: object
    constraint: list
    role: str
    estimators: frozenset = _ALL
    network_type: type | None = None
    legacy: object = ORIGINAL
    change: str | None = None

    @property
    def on_change(self):
        """What a change before a continued fit does: one of :data:`ON_CHANGE`."""
        if self.change is not None:
            return self.change
        return "refused" if self.role in _BUILT_FROM else "next call"


# What a change of a parameter between partial_fit calls, or before a fit with warm_start=True, does:
# - "next step": the training steps of the next call use the new value (a new learning_rate rescales the
#   schedule's base: the schedule goes on from where it was, at the new scale);
# - "next call": the next call as a whole uses it (its batches, its epochs, its validation split, ...);
# - "refused": a ValueError naming the parameter, since the fitted network was built from it.
ON_CHANGE = ("next step", "next call", "refused")
_BUILT_FROM = ("architecture", "batch normalisation", "tabular encoding", "ensemble")


def _at_least(kind, low):
    return [Interval(kind, low, None, closed="left")]


PARAMETERS = (
    Parameter("n_d", 32, _at_least(numbers.Integral, 1), "architecture", network_type=int),
    Parameter("n_a", 32, _at_least(numbers.Integral, 1), "architecture", network_type=int),
    Parameter("n_steps", 3, _at_least(numbers.Integral, 1), "architecture", network_type=int),
    Parameter("gamma", 1.3, _at_least(numbers.Real, 1), "architecture", network_type=float),
    Parameter("n_independent", 2, _at_least(numbers.Integral, 0), "architecture", network_type=int),
    Parameter("n_shared", 2, _at_least(numbers.Integral, 0), "architecture", network_type=int),
    Parameter("n_ensemble", 1, _at_least(numbers.Integral, 1), "ensemble", _SUPERVISED, legacy=1),
    Parameter(
        "n_efficient_members",
        "auto",
        [*_at_least(numbers.Integral, 1), StrOptions({"auto"})],
        "ensemble",
        _SUPERVISED,
        legacy=1,
        network_type=int,
    ),
    Parameter("n_shared_decoder", 1, _at_least(numbers.Integral, 0), "architecture", frozenset({PRETRAINER})),
    Parameter("n_independent_decoder", 1, _at_least(numbers.Integral, 0), "architecture", frozenset({PRETRAINER})),
    Parameter(
        "pretraining_ratio",
        0.2,
        [Interval(numbers.Real, 0, 1, closed="neither")],
        "training",
        frozenset({PRETRAINER}),
    ),
    # The regressor's loss: the fitted head's output and target scaling belong to it, so a continued fit
    # refuses a change (of quantile or huber_delta only where the fitted loss reads it; see the regressor).
    Parameter(
        "loss",
        "squared_error",
        [StrOptions(set(REGRESSION_LOSSES))],
        "training",
        frozenset({REGRESSOR}),
        legacy="squared_error",
        change="refused",
    ),
    Parameter(
        "quantile",
        0.5,
        [Interval(numbers.Real, 0, 1, closed="neither")],
        "training",
        frozenset({REGRESSOR}),
        legacy=0.5,
        change="refused",
    ),
    Parameter(
        "huber_delta",
        1.0,
        [Interval(numbers.Real, 0, None, closed="neither")],
        "training",
        frozenset({REGRESSOR}),
        legacy=1.0,
        change="refused",
    ),
    Parameter("lambda_sparse", 1e-3, _at_least(numbers.Real, 0), "training", change="next step"),
    # The gate regulariser's weight; only a network with step_gates reads it.
    Parameter(
        "lambda_gate", 0.01, _at_least(numbers.Real, 0), "training", _SUPERVISED, legacy=0.01, change="next step"
    ),
    Parameter(
        "virtual_batch_size",
        "auto",
        # A ghost batch of one row has no variance: every row would normalise to the bias.
        [*_at_least(numbers.Integral, 2), StrOptions({"auto"})],
        "batch normalisation",
        network_type=int,
    ),
    Parameter(
        "momentum", 0.02, [Interval(numbers.Real, 0, 1, closed="both")], "batch normalisation", network_type=float
    ),
    Parameter("batch_size", "auto", [*_at_least(numbers.Integral, 2), StrOptions({"auto"})], "training"),
    Parameter("max_epochs", 100, _at_least(numbers.Integral, 1), "training"),
    Parameter(
        "learning_rate", 0.02, [Interval(numbers.Real, 0, None, closed="neither")], "training", change="next step"
    ),
    Parameter(
        "learning_rate_decay", 1.0, [Interval(numbers.Real, 0, 1, closed="right")], "training", change="next step"
    ),
    Parameter(
        "max_grad_norm",
        1.0,
        [Interval(numbers.Real, 0, None, closed="neither"), None],
        "training",
        change="next step",
    ),
    Parameter(
        "learning_rate_schedule",
        "cosine",
        [StrOptions(set(LEARNING_RATE_SCHEDULES))],
        "training",
        legacy="exponential",
        change="next step",
    ),
    Parameter("warmup_epochs", 5, _at_least(numbers.Real, 0), "training", legacy=0, change="next step"),
    Parameter("weight_decay", 0.01, _at_least(numbers.Real, 0), "training", legacy=0.0, change="next step"),
    # The average of the weights that is scored and kept (sparsetab._training.weight_average); a continued fit
    # starts a new average from the kept weights.
    Parameter(
        "weight_averaging_epochs",
        "auto",
        [Interval(numbers.Real, 0, None, closed="neither"), StrOptions({"auto"}), None],
        "training",
        _SUPERVISED,
        legacy=None,
    ),
    Parameter("entmax_mode", "entmax15", [StrOptions(set(ENTMAX_MODES))], "architecture", network_type=str),
    Parameter("entmax_alpha", 1.5, [Interval(numbers.Real, 1, 2, closed="both")], "architecture", network_type=float),
    # Step gates are a supervised head-side choice: a pretrainer has none, and its gateless encoder can be
    # fine-tuned with gates (they are not among the PRETRAINED_PARAMETERS).
    Parameter(
        "step_gates",
        None,
        [StrOptions(set(STEP_GATES)), None],
        "architecture",
        _SUPERVISED,
        network_type=str,
        legacy=None,
    ),
    Parameter(
        "numerical_transform",
        "standard",
        [StrOptions({"standard", "quantile"})],
        "tabular encoding",
        legacy="standard",
    ),
    Parameter("categorical_features", "auto", [StrOptions({"auto"}), "array-like", None], "tabular encoding"),
    Parameter("cat_emb_dim", 4, [Interval(numbers.Integral, 1, None, closed="left"), dict], "tabular encoding"),
    Parameter("grouped_features", None, [list, None], "tabular encoding"),
    Parameter(
        "numerical_embedding",
        "auto",
        [StrOptions({*NUMERICAL_EMBEDDINGS, "auto"}), None],
        "tabular encoding",
        network_type=str,
        legacy=None,
    ),
    Parameter("n_bins", 32, _at_least(numbers.Integral, 2), "tabular encoding", network_type=int, legacy=32),
    Parameter("embedding_dim", 8, _at_least(numbers.Integral, 1), "tabular encoding", network_type=int, legacy=8),
    Parameter(
        "frequency_scale",
        0.1,
        [Interval(numbers.Real, 0, None, closed="neither")],
        "tabular encoding",
        network_type=float,
        legacy=0.1,
    ),
    Parameter("early_stopping", "auto", [StrOptions({"auto"}), "boolean"], "training"),
    Parameter("validation_fraction", 0.1, [Interval(numbers.Real, 0, 1, closed="neither")], "training"),
    Parameter("n_iter_no_change", 20, _at_least(numbers.Integral, 1), "training"),
    Parameter("tol", 1e-4, _at_least(numbers.Real, 0), "training"),
    Parameter("scoring", "loss", [StrOptions({"loss"}), str, callable], "training", _SUPERVISED),
    Parameter("class_weight", None, [dict, list, StrOptions({"balanced"}), None], "training", frozenset({CLASSIFIER})),
    Parameter("random_state", None, ["random_state"], "training"),
    Parameter("verbose", 0, ["verbose"], "training"),
    Parameter("warm_start", False, ["boolean"], "training", _SUPERVISED),
    Parameter(
        "n_jobs",
        None,
        [
            Interval(numbers.Integral, None, -1, closed="right"),
            Interval(numbers.Integral, 1, None, closed="left"),
            None,
        ],
        "runtime",
    ),
    Parameter("device", "cpu", [str, torch.device], "runtime"),
    # How the training step runs, not what it computes (up to float rounding): a model saved before it existed
    # trained eagerly.
    Parameter("torch_compile", False, ["boolean"], "runtime", legacy=False),
    # Its weights only start a network: a continued fit cannot take another pretrainer's (None, as after
    # load_model, is no change).
    Parameter("pretrained", None, [HasMethods(["fit", "transform"]), None], "training", _SUPERVISED, change="refused"),
)

DEFAULTS = {parameter.name: parameter.default for parameter in PARAMETERS}
# The values that models saved before a parameter existed behave as.
LEGACY_VALUES = {parameter.name: parameter.legacy for parameter in PARAMETERS if parameter.legacy is not ORIGINAL}
# What a continued fit (warm_start, partial_fit) of a classifier or regressor refuses to see change: what
# its network was built from. The pretrainer-only parameters (its decoder) are not among them.
NETWORK_PARAMETERS = tuple(
    parameter.name
    for parameter in PARAMETERS
    if parameter.role in ("architecture", "batch normalisation", "tabular encoding", "ensemble")
    and _SUPERVISED <= parameter.estimators
)
# What a model fine-tuned from a pretrainer must share with it: what its encoder's weights mean.
PRETRAINED_PARAMETERS = tuple(
    parameter.name
    for parameter in PARAMETERS
    if parameter.role in ("architecture", "tabular encoding") and parameter.estimators == _ALL
)
_TRAINING_CONFIG_PARAMETERS = tuple(
    field.name for field in fields(TrainingConfig) if field.name in DEFAULTS and field.name != "early_stopping"
)


def parameter_constraints(estimator):
    """The ``_parameter_constraints`` dict of one estimator.

    Parameters
    ----------
    estimator : {"classifier", "regressor", "pretrainer"}
        Which estimator.

    Returns
    -------
    dict of str -> list
        Each of its parameters' constraints, in the table's order.
    """
    return {parameter.name: parameter.constraint for parameter in PARAMETERS if estimator in parameter.estimators}


def same_value(before, now):
    """Parameter equality that also works for arrays and lists of them.

    Parameters
    ----------
    before, now : object
        Two values of one parameter.

    Returns
    -------
    bool
        Whether they are equal (arrays: same type, shape and elements).
    """
    if isinstance(before, np.ndarray) or isinstance(now, np.ndarray):
        return type(before) is type(now) and np.array_equal(np.asarray(before, object), np.asarray(now, object))
    try:
        return bool(before == now)
    except (TypeError, ValueError):
        return False


def network_config(
    estimator,
    tabular_encoding,
    widths,
    groups,
    output_dim,
    bin_counts=None,
    *,
    virtual_batch_size,
    numerical_embedding,
    n_efficient_members=None,
    piecewise_linear_with_value=True,
):
    """The keyword arguments of :class:`~sparsetab.network.TabNet` for a fitted tabular encoding.

    Parameters
    ----------
    estimator : sklearn.base.BaseEstimator
        Supplies the parameters of the table that have a ``network_type``.
    tabular_encoding : TabularEncoding
        The fitted tabular encoding (cardinalities, columns with missing values).
    widths : list of int
        Embedding width of each column.
    groups : list of list of int or None
        The attention groups.
    output_dim : int
        Width of the head.
    bin_counts : list of int or None, default=None
        For ``numerical_embedding="piecewise_linear"``: the number of bins of each column (0
        for a column kept scalar), from the edges of :func:`~sparsetab._recipe.fit_bin_edges`.
    virtual_batch_size : int
        The resolved virtual batch size (see :func:`resolve_batch_sizes`), which replaces the
        parameter (that may be ``"auto"``).
    numerical_embedding : str or None
        The resolved embedding of the numeric columns (see :func:`resolve_numerical_embedding`;
        a fine-tuned model's is its pretrainer's), which replaces the parameter.
    n_efficient_members : int or None, default=None
        The resolved number of efficient members (see :func:`resolve_efficient_members`), which
        replaces the parameter; None for an estimator without it (the pretrainer).
    piecewise_linear_with_value : bool, default=True
        Whether a piecewise linear column keeps its value beside its bins (see
        :class:`~sparsetab.network.embeddings.InputEmbedding`). True for every new network; a
        model fine-tuned from a pretrainer passes the pretrainer's layout.

    Returns
    -------
    dict
        Plain ints, floats, strings and lists, so that a model file stores it as JSON.
    """
    # The rules behind "auto" replace the parameters they resolve.
    resolved = {"virtual_batch_size": virtual_batch_size, "numerical_embedding": numerical_embedding}
    if n_efficient_members is not None:
        resolved["n_efficient_members"] = n_efficient_members
    config = {
        "cardinalities": list(tabular_encoding.cardinalities),
        "embedding_dims": [int(width) for width in widths],
        "output_dim": int(output_dim),
    }
    for parameter in PARAMETERS:
        # A parameter the estimator does not take (the pretrainer has no step gates) keeps the network's default.
        if parameter.network_type is not None and hasattr(estimator, parameter.name):
            value = resolved.get(parameter.name, getattr(estimator, parameter.name))
            config[parameter.name] = None if value is None else parameter.network_type(value)
    config["attention_groups"] = groups
    config["missing_indicators"] = np.flatnonzero(tabular_encoding.has_missing_).tolist()
    config["bin_counts"] = None if bin_counts is None else [int(count) for count in bin_counts]
    config["piecewise_linear_with_value"] = bool(piecewise_linear_with_value)
    config["constant_groups"] = constant_groups(tabular_encoding, groups)
    return config


def constant_groups(tabular_encoding, groups):
    """The attention groups whose every column carried no information at fit.

    Parameters
    ----------
    tabular_encoding : TabularEncoding
        The fitted tabular encoding (its ``constant_`` columns).
    groups : list of list of int or None
        The attention groups; None for one group per column.

    Returns
    -------
    list of int
        Indices of the groups made only of ``constant_`` columns; empty when every group is
        (nothing to attend to then: the network attends as if none were), or for an encoding
        restored from before the rule.
    """
    constant = tabular_encoding.constant_
    if constant is None:
        return []
    members = [[j] for j in range(len(constant))] if groups is None else groups
    indices = [index for index, columns in enumerate(members) if all(constant[j] for j in columns)]
    return [] if len(indices) == len(members) else indices


def training_config(estimator, *, batch_size, early_stopping, incremental=False, epoch_offset=0, epoch_refit=False):
    """The :class:`~sparsetab._training.loop.TrainingConfig` of an estimator's parameters.

    Parameters
    ----------
    estimator : sklearn.base.BaseEstimator
        Supplies the training parameters of the table that the fit loop reads.
    batch_size : int
        The resolved batch size (see :func:`resolve_batch_sizes`), which replaces the parameter.
    early_stopping : bool
        Resolved by :func:`resolve_early_stopping` (and False without validation rows).
    incremental : bool, default=False
        One epoch of ``partial_fit``: ``max_epochs`` is 1 and there is no convergence test.
    epoch_offset : int, default=0
        Epochs run by earlier calls, for the verbose epoch numbers.
    epoch_refit : bool, default=False
        Whether this run is a pass of the epoch-count refit (:func:`resolve_epoch_refit`), whose
        early stopping only chooses a count (see :func:`resolve_weight_averaging`).

    Returns
    -------
    TrainingConfig

    Raises
    ------
    ValueError
        If ``learning_rate_decay`` is not 1 while ``learning_rate_schedule`` is not
        ``"exponential"`` (the decay is the exponential schedule's per-epoch factor).
    """
    # A parameter the estimator does not take (lambda_gate of the pretrainer) keeps the config's default.
    values = {name: getattr(estimator, name) for name in _TRAINING_CONFIG_PARAMETERS if hasattr(estimator, name)}
    if values["learning_rate_decay"] != 1 and values["learning_rate_schedule"] != "exponential":
        raise ValueError(
            f"learning_rate_decay={values['learning_rate_decay']!r} is the per-epoch factor of "
            f"learning_rate_schedule='exponential', but learning_rate_schedule={values['learning_rate_schedule']!r}; "
            "set learning_rate_decay=1.0 or learning_rate_schedule='exponential'."
        )
    values["batch_size"] = int(batch_size)
    if "weight_averaging_epochs" in values:
        values["weight_averaging_epochs"] = resolve_weight_averaging(
            values["weight_averaging_epochs"], early_stopping and not epoch_refit
        )
    # The schedule spans max_epochs; partial_fit (one epoch a call) continues it, a new fit restarts it.
    values["schedule_epochs"] = values["max_epochs"]
    if incremental:
        values["max_epochs"] = 1
    return TrainingConfig(
        **values,
        early_stopping=early_stopping,
        incremental=incremental,
        epoch_offset=epoch_offset,
        schedule_offset=epoch_offset if incremental else 0,
    )


def resolve_batch_sizes(batch_size, virtual_batch_size, n_samples):
    """The batch sizes of a fit: the rule behind ``batch_size="auto"`` and ``virtual_batch_size="auto"``.

    Parameters
    ----------
    batch_size : int or "auto"
        The parameter.
    virtual_batch_size : int or "auto"
        The parameter.
    n_samples : int
        Training rows (after the validation split).

    Returns
    -------
    batch_size : int
        ``batch_size`` itself when it is an int; for ``"auto"``, the power of two nearest (in
        log scale) to ``n_samples / AUTO_BATCH_STEPS`` (32 optimiser steps per epoch), within
        [``AUTO_BATCH_MIN``, ``AUTO_BATCH_MAX``] = [32, 1024]: 64 rows for 2,000 training rows,
        128 for 4,000, 512 for 16,000 and the paper-style 1,024 from about 23,000 rows on. The
        cap was screened with ``fit(X, y)``, 3 seeds (benchmarks/results/screen_batch_cap.md):
        4,096 rows raised the test error by 6-15% on adult, bank_marketing and diamonds (32,561
        to 43,152 rows) and held it on kdd_census_income (199,523 rows; 0.0444 -> 0.0442, 0.59
        times the fit), so it stays at 1,024 on every device.
    virtual_batch_size : int
        ``virtual_batch_size`` itself when it is an int; for ``"auto"``, the batch size, at most
        ``AUTO_VIRTUAL_BATCH_MAX`` = 128 (ghost batch normalisation, Hoffer et al., 2017, over
        chunks of at most 128 rows, as the TabNet paper's ``B_V`` of 128-512 on large batches).
    """
    if batch_size == "auto":
        target = max(n_samples, 1) / AUTO_BATCH_STEPS
        batch_size = int(min(AUTO_BATCH_MAX, max(AUTO_BATCH_MIN, 2 ** round(np.log2(target)))))
    if virtual_batch_size == "auto":
        virtual_batch_size = min(int(batch_size), AUTO_VIRTUAL_BATCH_MAX)
    return int(batch_size), int(virtual_batch_size)


def resolve_early_stopping(early_stopping, n_samples, has_validation_data):
    """Whether a fit stops early: the rule behind ``early_stopping="auto"``.

    Parameters
    ----------
    early_stopping : "auto" or bool
        The parameter.
    n_samples : int
        Training rows.
    has_validation_data : bool
        Whether the user gave ``X_val``.

    Returns
    -------
    bool
        ``early_stopping`` itself when it is a bool; for ``"auto"``, True when there are more
        than :data:`AUTO_EARLY_STOPPING_MIN_ROWS` rows or validation data.
    """
    if early_stopping == "auto":
        return n_samples > AUTO_EARLY_STOPPING_MIN_ROWS or has_validation_data
    return bool(early_stopping)


def resolve_epoch_refit(early_stopping, n_samples, has_validation_data):
    """Whether a fit chooses its number of epochs on held-out rows, then trains on every row.

    The rule behind ``early_stopping="auto"`` on tables of :data:`AUTO_REFIT_MIN_ROWS` (100)
    to :data:`AUTO_EARLY_STOPPING_MIN_ROWS` (10,000) rows, where :func:`resolve_early_stopping` is
    False: a first pass holds out ``validation_fraction`` of the rows and stops early (patience
    ``n_iter_no_change``); a second trains a new network on all the rows for the first pass's best
    epoch count, with the learning-rate schedule spanning that count; with
    :data:`AUTO_REFIT_KEEPS_FIRST_PASS` the first pass's network is kept as a member and the
    predictions average both (one tabular encoding, learned on every row, serves both). The
    held-out rows keep a table from overfitting, the refit gives them back to training, and the
    average is an ensemble of two at no training cost beyond the two passes.

    Measured with ``fit(X, y)`` as users call it, 3 seeds, on seven tables of 2,000 to 8,787 rows
    (``benchmarks/small_tables.py`` and ``benchmarks/refit_screen.py``; test error 1 - accuracy or
    RMSE, geometric mean over the seven of the error over HistGradientBoosting's, worst table):
    every row for ``max_epochs`` (the rule before): 0.975, 1.33 (credit_default); keeping the
    held-out pass's best epoch, every epoch run: 0.919, 1.075 (adult), with 4,000
    letter_recognition rows losing (0.070 -> 0.085); the refit alone: 0.882, 1.021 (adult); the refit averaged with the
    first pass (this rule): 0.847, 1.026 (higgs_sample), letter 0.064. A refit whose schedule kept
    its ``max_epochs`` length, cut at the chosen epoch, was worse than one spanning the chosen count
    on five of six tables. From :data:`AUTO_REFIT_MIN_ROWS` (100) to 1,000 rows, whose numeric
    columns enter unencoded (:func:`resolve_numerical_embedding`), the rule raised or held the test
    score of scikit-learn's four tables under 1,000 rows (``python -m benchmarks.tiny_tables
    --variants defaults early_stopping=False``, 5 seeds, each its own 80/20 split,
    benchmarks/results/tiny_tables_refit.md; every row for ``max_epochs`` -> this rule,
    HistGradientBoosting in brackets): diabetes R^2 0.234 -> 0.327 [0.255], wine 0.983 -> 0.994
    [0.972], iris 0.947 -> 0.960 [0.953], breast_cancer 0.961 -> 0.961 [0.961]. With the piecewise
    linear encoding, holding out rows had lost there (breast_cancer 0.041 -> 0.056, diabetes RMSE
    68.8 -> 73.0). Under 100 rows, 10% held out would leave fewer than 10 rows to choose on.

    Parameters
    ----------
    early_stopping : "auto" or bool
        The parameter.
    n_samples : int
        Training rows.
    has_validation_data : bool
        Whether the user gave ``X_val``.

    Returns
    -------
    bool
        True only for ``"auto"`` without ``X_val`` on ``AUTO_REFIT_MIN_ROWS <= n_samples <=
        AUTO_EARLY_STOPPING_MIN_ROWS`` rows (the caller also leaves out continued, streamed and
        distributed fits).
    """
    return (
        early_stopping == "auto"
        and not has_validation_data
        and AUTO_REFIT_MIN_ROWS <= n_samples <= AUTO_EARLY_STOPPING_MIN_ROWS
    )


def resolve_efficient_members(n_efficient_members, n_samples):
    """The number of efficient members of a fit: the rule behind ``n_efficient_members="auto"``.

    :data:`AUTO_EFFICIENT_MEMBERS` (2) members (TabM-mini, Gorishniy et al., ICLR 2025, section 3)
    on tables of :data:`AUTO_SELECTION_MIN_ROWS` (1,000) to :data:`AUTO_EFFICIENT_MEMBERS_MAX_ROWS`
    (20,000) training rows, one elsewhere. Measured with ``fit(X, y)`` as users call it, 3 seeds
    (``benchmarks/ensemble_screen.py``, ``benchmarks/efficient_members_fit_time.py``, the quiet
    2-core Intel Xeon): on seven tables of 2,000 to 8,787 rows two members lowered the test error on
    every table, by a geometric mean of 2.9% (linear_2000 0.901 of one member's error, higgs_sample
    0.968, adult_2700 0.985, letter_4000 0.986, california_3000 0.984, diamonds_5000 0.986,
    credit_default_8000 0.993); on the three tables of 12,096 to 16,512 rows they lowered it by
    more (``python -m benchmarks.compare --tables screen --protocol user --variants defaults
    defaults+n_efficient_members=2``, with one member the rule of the time): forest_cover_kaggle
    0.1760 -> 0.1575 (0.895), letter_recognition 0.0273 -> 0.0233 (0.854), california_housing
    0.4628 -> 0.4431 (0.957), for 1.95 times the fit (47.5 -> 92.8 s, two cells at once); on
    adult's 32,561 rows they cost 1.80 times the fit (1.5 times
    per epoch, and 38 epochs instead of 32 before early stopping) and 2.4 times the prediction for
    no gain (accuracy 0.8609 against 0.8616), beyond issue 32's bound of 1.5 times the fit. Tables
    under 1,000 rows were not measured and keep one member. On Syn1-Syn6 (10,000 rows, ``fit(X,
    y)``; ``benchmarks/syn.py --protocol user``) two members raised the test AUC on all six sets and
    sharpened the masks on four (relevant share Syn3 0.84 -> 0.91), but blurred them on Syn6 (0.85
    -> 0.58) and Syn1 (0.57 -> 0.52).

    Parameters
    ----------
    n_efficient_members : "auto" or int
        The parameter.
    n_samples : int
        Training rows given to the fit (before any rows are held out).

    Returns
    -------
    int
        ``n_efficient_members`` itself when it is an int; for ``"auto"``, ``AUTO_EFFICIENT_MEMBERS``
        when ``AUTO_SELECTION_MIN_ROWS <= n_samples <= AUTO_EFFICIENT_MEMBERS_MAX_ROWS``, else 1.
    """
    if n_efficient_members == "auto":
        in_band = AUTO_SELECTION_MIN_ROWS <= n_samples <= AUTO_EFFICIENT_MEMBERS_MAX_ROWS
        return AUTO_EFFICIENT_MEMBERS if in_band else 1
    return int(n_efficient_members)


def resolve_numerical_embedding(numerical_embedding, n_samples):
    """The embedding of the numeric columns of a fit: the rule behind ``numerical_embedding="auto"``.

    :data:`AUTO_NUMERICAL_EMBEDDING` (piecewise linear encoding, Gorishniy, Rubachev and Babenko,
    "On Embeddings for Numerical Features in Tabular Deep Learning", NeurIPS 2022, section 3.2)
    from :data:`AUTO_SELECTION_MIN_ROWS` (1,000) training rows on; under that, none: each numeric
    column enters as its standardised value, as in the TabNet paper. The quantile bins of 300 to
    900 rows hold 10 to 30 rows each, and the embedding then fits noise. Measured with ``fit(X,
    y)`` on scikit-learn's four bundled tables under 1,000 rows, 5 seeds, each its own 80/20 split
    (``python -m benchmarks.tiny_tables --variants defaults numerical_embedding=piecewise_linear``,
    benchmarks/results/tiny_tables_embedding.md; test accuracy, R^2 for diabetes; piecewise linear
    -> none, HistGradientBoosting in brackets): diabetes (353 training rows) R^2 0.080 -> 0.234
    [0.255], wine (142) 0.967 -> 0.983 [0.972], iris (120) 0.933 -> 0.947 [0.953], breast_cancer
    (455) 0.970 -> 0.961 [0.961], at 0.72 to 0.92 times the fit time. On small_tables.py's fixed
    splits, 3 seeds (benchmarks/results/small_tables_embedding.md): diabetes RMSE 68.80 -> 66.17
    [65.56], its training RMSE 7.6 -> 30.0; breast_cancer error 0.041 -> 0.044 [0.061]. breast_cancer
    loses about one test row in 114 in both; a table like it, or a smooth target with little noise
    (tests/estimators/test_numerical_embeddings.py: 600 rows of ``sin(2 x)``, a ninth of the error
    with the encoding), may set ``numerical_embedding="piecewise_linear"``. From 1,000 rows on, the
    piecewise linear encoding is the measured default (benchmarks/results/ablation.md,
    docs/benchmarks/defaults.md).

    Parameters
    ----------
    numerical_embedding : "auto", str or None
        The parameter.
    n_samples : int
        Training rows given to the fit, those of positive ``sample_weight`` (before any rows are
        held out; a continued fit keeps the first fit's embedding).

    Returns
    -------
    str or None
        ``numerical_embedding`` itself unless it is ``"auto"``; for ``"auto"``,
        ``AUTO_NUMERICAL_EMBEDDING`` when ``n_samples >= AUTO_SELECTION_MIN_ROWS``, else None.
    """
    if numerical_embedding == "auto":
        return AUTO_NUMERICAL_EMBEDDING if n_samples >= AUTO_SELECTION_MIN_ROWS else None
    return numerical_embedding


#: The network parameters with an "auto" rule, and the fitted attribute that holds what the network was built with.
RESOLVED_ATTRIBUTES = {
    "virtual_batch_size": "virtual_batch_size_",
    "n_efficient_members": "n_efficient_members_",
    "numerical_embedding": "numerical_embedding_",
}


def accepts_resolved(value, used):
    """Whether a parameter with an ``"auto"`` rule may continue (or fine-tune) a network built with ``used``.

    Parameters
    ----------
    value : object
        The parameter now (one of :data:`RESOLVED_ATTRIBUTES`).
    used : object
        What the network (or the pretrained encoder) was built with: the parameter's fitted
        attribute.

    Returns
    -------
    bool
        True for ``"auto"``, which keeps the network's value, and for ``used`` itself.
    """
    return (isinstance(value, str) and value == "auto") or same_value(value, used)


def resolve_weight_averaging(weight_averaging_epochs, keeps_early_stopped_model):
    """The time constant of a fit's weight average: the rule behind ``weight_averaging_epochs="auto"``.

    :data:`AUTO_WEIGHT_AVERAGING_EPOCHS` (2 epochs) where early stopping on held-out rows keeps the
    fitted model (more than 10,000 training rows under ``early_stopping="auto"``, ``X_val`` given, or
    ``early_stopping=True``), None elsewhere: on the passes of the epoch-count refit (100 to 10,000
    rows), whose kept network ends its schedule at a learning rate near 0, and on runs of all
    ``max_epochs`` (the same). Early stopping keeps an epoch while the learning rate is still high
    (bank_marketing's best epoch was the 11th to 17th of 100), where the average of the last epochs
    is a better model than the epoch's weights. Measured with ``fit(X, y)``, 3 seeds, on one machine
    (the 2-core Intel Xeon; benchmarks/results/screen_weight_averaging.md): on the seven early-stopped
    tables of Table 3 (12,096 to 43,152 training rows) the average lowered the test error on five
    (bank_marketing 0.0725 -> 0.0674, forest_cover_kaggle 0.1623 -> 0.1529, california_housing 0.4457 ->
    0.4306, adult 0.1397 -> 0.1373, diamonds 0.0847 -> 0.0836), held higgs_sample (0.2180 -> 0.2174) and
    lost on letter_recognition (0.0229 -> 0.0238, inside the seeds' range): the geometric mean of the
    error over HistGradientBoosting's went from 0.959 to 0.937. On the refit tables it lowered none
    clearly (``python -m benchmarks.small_tables``: california_3000 0.4832 -> 0.4811, diamonds_5000
    0.0911 -> 0.0912, linear_2000 0.1450 -> 0.1433) and letter_4000 lost (0.0633 -> 0.0688), so they
    keep none.

    Parameters
    ----------
    weight_averaging_epochs : "auto", float or None
        The parameter.
    keeps_early_stopped_model : bool
        Whether the run early-stops on held-out rows and keeps the result as the fitted model.

    Returns
    -------
    float or None
        ``weight_averaging_epochs`` itself unless it is ``"auto"``; for ``"auto"``,
        ``AUTO_WEIGHT_AVERAGING_EPOCHS`` when ``keeps_early_stopped_model``, else None.
    """
    if weight_averaging_epochs == "auto":
        return AUTO_WEIGHT_AVERAGING_EPOCHS if keeps_early_stopped_model else None
    return weight_averaging_epochs


def store_parameters(estimator, arguments):
    """Store an estimator's constructor arguments as attributes of the same names, unchanged.

    Parameters
    ----------
    estimator : sklearn.base.BaseEstimator
        The estimator being constructed.
    arguments : dict
        ``locals()`` of its ``__init__``: the arguments, and ``self``, which is skipped.
    """
    for name, value in arguments.items():
        if name != "self":
            setattr(estimator, name, value)
