"""The ``sparsetab`` command: fit, predict, explain, evaluate and describe models from the shell.

Each subcommand reads a table (CSV in any compression pandas infers, or Parquet), works through
the estimators' public API and writes CSV, Parquet or a model file. Errors are one line that
names the file, column or parameter (``--debug`` shows the traceback); the exit code is 0 on
success, 1 for a user error and 2 for a usage error (argparse's).
"""

import argparse
import json
import os
import signal
import sys
import time
import traceback
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import (
    accuracy_score,
    balanced_accuracy_score,
    log_loss,
    mean_absolute_error,
    mean_gamma_deviance,
    mean_pinball_loss,
    mean_poisson_deviance,
    r2_score,
    roc_auc_score,
    root_mean_squared_error,
)
from sklearn.utils.multiclass import type_of_target

from ._progress import metric_label
from ._tabular.encoding import feature_names
from ._version import __version__
from .estimators import SparseTabNetClassifier, SparseTabNetRegressor
from .inspection import FeatureMaskDisplay
from .io import load_model

__all__ = ["main", "parse_assignment", "read_table", "text_columns"]

_PARQUET_SUFFIXES = (".parquet", ".pq")
_EXAMPLES = {
    "fit": """examples:
  sparsetab fit adult_train.csv --target income --output income.sparsetab
  sparsetab fit train.parquet --target price --task regression --set max_epochs=50 --set n_d=16
  sparsetab fit train.csv.gz --target y --validation valid.csv.gz --set 'cat_emb_dim={"city": 3}'
  sparsetab fit customers.csv --target churned --drop customer_id --drop signup_date""",
    "predict": """examples:
  sparsetab predict income.sparsetab adult_test.csv --output predictions.csv
  sparsetab predict income.sparsetab new_rows.parquet --proba --id customer_id --output scores.parquet""",
    "explain": """examples:
  sparsetab explain income.sparsetab adult_test.csv --rows 100 --output importances.csv
  sparsetab explain income.sparsetab adult_test.csv --steps --output masks.csv --plot masks.png""",
    "evaluate": """examples:
  sparsetab evaluate income.sparsetab adult_test.csv --target income
  sparsetab evaluate income.sparsetab adult_test.csv --target income --json""",
    "info": """examples:
  sparsetab info income.sparsetab""",
}


class UserError(Exception):
    """A problem with the user's files, columns or parameters: reported as one line, exit code 1."""


def read_table(path, *, role="DATA", text_columns=()):
    """Read a CSV (any compression pandas infers from the suffix) or Parquet file.

    Parameters
    ----------
    path : str or os.PathLike
        The file. ``.parquet`` and ``.pq`` are Parquet (read with pyarrow); everything else is
        read by :func:`pandas.read_csv`.
    role : str, default="DATA"
        What the file is, for the error messages.
    text_columns : iterable of str, default=()
        Columns a CSV file's reader keeps as text, whatever their values look like: a fitted
        model's text columns (:func:`text_columns`), so that a column of codes such as ``"007"``
        that holds only digits in a new file is not read as numbers. Parquet files carry their
        types and ignore it.

    Returns
    -------
    pandas.DataFrame
        The table as pandas reads it: string columns stay strings (the estimators embed them).

    Raises
    ------
    UserError
        If the file does not exist, is empty, cannot be parsed, or is Parquet while pyarrow is
        not installed (the message names the extra: ``pip install "sparsetab[parquet]"``).
    """
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{role} file {str(path)!r} does not exist.")
    if path.suffix.lower() in _PARQUET_SUFFIXES:
        try:
            import pyarrow  # noqa: F401  (optional extra; pandas needs it for Parquet)
        except ImportError:
            raise UserError(
                f'{role} file {str(path)!r} is Parquet, which needs pyarrow: pip install "sparsetab[parquet]".'
            ) from None
        reader = pd.read_parquet
    else:
        reader = pd.read_csv
    options = {}
    if reader is pd.read_csv and text_columns:
        options["dtype"] = {name: str for name in text_columns}
    try:
        return reader(path, **options)
    except (ValueError, OSError, UnicodeDecodeError) as error:
        raise UserError(f"{role} file {str(path)!r} could not be read as a table: {error}") from error


def text_columns(model):
    """The input columns a fitted model read as text: categorical columns whose categories are all strings.

    Parameters
    ----------
    model : SparseTabNetClassifier or SparseTabNetRegressor
        A fitted model.

    Returns
    -------
    list of str
        Their names, in the fitted order (none for a model fitted without column names).
    """
    names = getattr(model, "feature_names_in_", None)
    if names is None:
        return []
    encoding = model._tabular_encoding
    return [
        str(names[j])
        for j, categories in encoding.categories_.items()
        if len(categories) and all(isinstance(value, str) for value in categories)
    ]


def _write_table(frame, path):
    """Write ``frame`` to ``path`` (Parquet or CSV by suffix), or as CSV to standard output for None."""
    if path is None:
        frame.to_csv(sys.stdout, index=False)
        return
    path = Path(path)
    if path.suffix.lower() in _PARQUET_SUFFIXES:
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise UserError(
                f'--output {str(path)!r} is Parquet, which needs pyarrow: pip install "sparsetab[parquet]".'
            ) from None
        frame.to_parquet(path, index=False)
    else:
        frame.to_csv(path, index=False)


def parse_assignment(text):
    """Split ``PARAM=VALUE`` and read VALUE as a JSON literal when it parses as one.

    Parameters
    ----------
    text : str
        For example ``"batch_size=512"``, ``'cat_emb_dim={"workclass": 3}'`` or
        ``"entmax_mode=sparsemax"``.

    Returns
    -------
    name : str
    value : object
        The JSON value (number, bool, null, list, dict, string in quotes), else the text itself.

    Raises
    ------
    UserError
        If there is no ``=`` or nothing before it.
    """
    name, separator, value = text.partition("=")
    if not separator or not name.strip():
        raise UserError(f"--set {text!r} is not PARAM=VALUE (e.g. --set max_epochs=50).")
    try:
        return name.strip(), json.loads(value)
    except json.JSONDecodeError:
        return name.strip(), value


def _estimator(task, assignments):
    """The estimator of ``task`` with the ``--set`` parameters, checked by its own constraints."""
    estimator = (SparseTabNetClassifier if task == "classification" else SparseTabNetRegressor)(verbose=1)
    accepted = estimator.get_params()
    for name, value in assignments:
        if name not in accepted:
            raise UserError(
                f"--set {name}: {type(estimator).__name__} has no parameter {name!r}; see `sparsetab fit --help` "
                "or the estimator's docstring for the accepted ones."
            )
        estimator.set_params(**{name: value})
    try:
        estimator._validate_params()
    except ValueError as error:
        raise UserError(f"--set: {error}") from error
    return estimator


def _class_weight_keys_as_labels(estimator, y):
    """Read ``--set class_weight={...}``'s keys as the target's labels: JSON keys are text, labels may be numbers.

    A key that is not a label but is the text of exactly one label (``"1"`` for the label 1)
    becomes that label; other keys are left for the estimator's own check to name.
    """
    weights = estimator.class_weight
    if not isinstance(weights, dict):
        return
    labels = [label.item() if isinstance(label, np.generic) else label for label in pd.unique(y.dropna())]
    by_text = {}
    for label in labels:
        by_text.setdefault(str(label), []).append(label)
    converted = {}
    for key, weight in weights.items():
        matches = by_text.get(key, []) if isinstance(key, str) and key not in labels else []
        converted[matches[0] if len(matches) == 1 else key] = weight
    estimator.set_params(class_weight=converted)


def _split_target(frame, target, path):
    if target not in frame.columns:
        raise UserError(f"--target {target!r} is not a column of {str(path)!r}; its columns: {list(frame.columns)}.")
    return frame.drop(columns=target), frame[target]


def _task_named_by_parameters(assignments):
    """``(task, parameter)`` when a ``--set`` parameter exists for one task only (``loss``: regression), else None.

    Counts of events are integers, which ``type_of_target`` reads as classes: ``--set loss=poisson``
    says that the user wants a regression. Parameters of both tasks named together are an error.
    """
    classifier, regressor = set(SparseTabNetClassifier().get_params()), set(SparseTabNetRegressor().get_params())
    named = {name: "regression" for name, _ in assignments if name in regressor - classifier}
    named.update({name: "classification" for name, _ in assignments if name in classifier - regressor})
    if len(set(named.values())) > 1:
        raise UserError(
            f"--set names parameters of the classifier and of the regressor ({', '.join(sorted(named))}): keep those "
            "of one task, or pass --task."
        )
    return next(((task, name) for name, task in named.items()), None)


def _task_of(y, task, target):
    """``--task``, or what scikit-learn's ``type_of_target`` says of the target column."""
    if task == "regression" and not pd.api.types.is_numeric_dtype(y):
        example = y.dropna().iloc[0] if y.notna().any() else None
        raise UserError(
            f"--task regression needs a numeric --target, but {target!r} holds {y.dtype} values (e.g. {example!r}); "
            "use --task classification."
        )
    if task is not None:
        return task
    kind = type_of_target(y.dropna().to_numpy())
    if kind in ("binary", "multiclass"):
        return "classification"
    if kind == "continuous":
        return "regression"
    raise UserError(f"--target {target!r} is {kind!r} by type_of_target; pass --task classification or regression.")


def _features(model, frame, path):
    """The model's input columns of ``frame``, in the fitted order (other columns, e.g. the target, are left out)."""
    names = getattr(model, "feature_names_in_", None)
    if names is None:
        return frame
    missing = [name for name in names if name not in frame.columns]
    if missing:
        raise UserError(f"{str(path)!r} lacks the model's input column(s) {missing}.")
    return frame[list(names)]


def _load(path):
    if not Path(path).is_file():
        raise UserError(f"MODEL file {str(path)!r} does not exist.")
    return load_model(path)


def _drop_columns(frame, columns, target, path):
    """``frame`` without ``--drop``'s columns (an ID, a leak), each checked to be a column and not the target."""
    if not columns:
        return frame
    if target in columns:
        raise UserError(f"--drop {target!r} is the --target column; it is never an input.")
    unknown = [column for column in dict.fromkeys(columns) if column not in frame.columns]
    if unknown:
        raise UserError(f"--drop {unknown} are not columns of {str(path)!r}; its columns: {list(frame.columns)}.")
    kept = frame.drop(columns=list(dict.fromkeys(columns)))
    if list(kept.columns) == [target]:
        raise UserError(f"--drop leaves {str(path)!r} no input column: only the --target {target!r} remains.")
    return kept


def _command_fit(arguments):
    frame = read_table(arguments.data)
    frame = _drop_columns(frame, arguments.drop, arguments.target, arguments.data)
    X, y = _split_target(frame, arguments.target, arguments.data)
    assignments = [parse_assignment(text) for text in arguments.set or []]
    chosen_by = _task_named_by_parameters(assignments) if arguments.task is None else None
    task = _task_of(y, arguments.task if chosen_by is None else chosen_by[0], arguments.target)
    estimator = _estimator(task, assignments)
    if task == "classification":
        _class_weight_keys_as_labels(estimator, y)
    validation = {}
    if arguments.validation is not None:
        frame_val = read_table(arguments.validation, role="--validation")
        X_val, y_val = _split_target(frame_val, arguments.target, arguments.validation)
        missing = [column for column in X.columns if column not in X_val.columns]
        if missing:
            raise UserError(f"--validation {str(arguments.validation)!r} lacks the training column(s) {missing}.")
        validation = dict(X_val=X_val[list(X.columns)], y_val=y_val)
    output = Path(arguments.output or Path(arguments.data).name.split(".")[0] + ".sparsetab")
    if not output.parent.is_dir():  # checked before a fit that may take long, not after it
        raise UserError(f"--output {str(output)!r}: the folder {str(output.parent)!r} does not exist.")
    if output.suffix.lower() in (*_PARQUET_SUFFIXES, ".csv", ".gz", ".json"):
        raise UserError(f"--output {str(output)!r} is a model file, not a table: name it e.g. {output.stem}.sparsetab.")
    started = time.perf_counter()
    estimator.fit(X, y, **validation)
    seconds = time.perf_counter() - started
    estimator.save_model(output)
    inferred = ""
    if chosen_by is not None:
        inferred = f"; --set {chosen_by[1]} is a {task} parameter"
    elif arguments.task is None and task == "classification" and pd.api.types.is_numeric_dtype(y):
        inferred = f"; {len(estimator.classes_)} classes from a numeric column: --task regression to predict values"
    summary = [
        f"task          {task} ({type(estimator).__name__}{inferred})",
        f"rows          {X.shape[0]} training, {X.shape[1]} columns",
        f"epochs        {estimator.n_iter_} (weights of epoch {estimator.best_iteration_ + 1})"
        if estimator.best_iteration_ is not None
        else f"epochs        {estimator.n_iter_}",
        f"fit time      {seconds:.1f} s",
    ]
    if estimator.validation_scores_ is not None and estimator.best_iteration_ is not None:
        name, negate = metric_label(estimator.scoring)
        score = estimator.validation_scores_[estimator.best_iteration_]
        summary.append(f"val {name:<10}{-score if negate else score:.4f}")
    if task == "classification":
        summary.append(f"classes       {', '.join(map(str, estimator.classes_))}")
    summary.append(f"model         {output}")
    print("\n".join(summary))


def _id_as_text(model, arguments):
    """The columns to read as text: the model's text columns, and ``--id``'s when it is not a model input.

    An ID such as ``00017`` would otherwise be read as the number 17, and no longer join with the data.
    """
    columns = text_columns(model)
    inputs = [str(name) for name in getattr(model, "feature_names_in_", [])]
    if arguments.id is not None and arguments.id not in inputs:
        columns = [*columns, arguments.id]
    return columns


def _check_id_is_not_an_output_column(arguments, output_columns):
    """UserError where ``--id``'s column would replace or duplicate a column of the output table."""
    if arguments.id is not None and arguments.id in output_columns:
        raise UserError(
            f"--id {arguments.id!r} is also the name of a column of the output ({', '.join(output_columns[:6])}"
            f"{', ...' if len(output_columns) > 6 else ''}): the ID would replace it or be lost. Rename the ID column "
            "in DATA; an ID that the model reads as an input is better left out at fit with --drop."
        )


def _command_predict(arguments):
    model = _load(arguments.model)
    frame = read_table(arguments.data, text_columns=_id_as_text(model, arguments))
    X = _features(model, frame, arguments.data)
    result = pd.DataFrame(index=range(len(frame)))
    if arguments.id is not None:
        result[arguments.id] = _id_values(frame, arguments)
    prediction = np.asarray(model.predict(X))
    if prediction.ndim == 1:
        predictions = {"prediction": prediction}
    else:  # a model fitted on several target columns (from Python; `fit` here takes one)
        predictions = {f"prediction_{k}": prediction[:, k] for k in range(prediction.shape[1])}
    _check_id_is_not_an_output_column(arguments, list(predictions))
    for name, column in predictions.items():
        result[name] = column
    if arguments.proba:
        if not hasattr(model, "predict_proba"):
            raise UserError(f"--proba: the model in {str(arguments.model)!r} is a regressor; it has no probabilities.")
        probabilities = model.predict_proba(X)
        if prediction.ndim != 1 or isinstance(probabilities, list):
            raise UserError(f"--proba: the model in {str(arguments.model)!r} has several outputs; use the Python API.")
        probability_columns = [f"proba_{label}" for label in model.classes_]
        _check_id_is_not_an_output_column(arguments, probability_columns)
        for name, column in zip(probability_columns, probabilities.T):
            result[name] = column
    _write_table(result, arguments.output)


def _id_values(frame, arguments):
    """The values of ``--id``'s column of DATA, one per row; UserError where DATA has no such column."""
    if arguments.id not in frame.columns:
        raise UserError(f"--id {arguments.id!r} is not a column of {str(arguments.data)!r}.")
    return frame[arguments.id].to_numpy()


def _command_explain(arguments):
    model = _load(arguments.model)
    frame = read_table(arguments.data, text_columns=_id_as_text(model, arguments))
    if arguments.rows is not None:
        if arguments.rows < 1:
            raise UserError(f"--rows must be at least 1, got {arguments.rows}.")
        frame = frame.head(arguments.rows)
    ids = None if arguments.id is None else _id_values(frame, arguments)
    if ids is not None:  # checked before the rows are explained
        names = ["step", "feature", "mask", "gate"] if arguments.steps else [str(name) for name in feature_names(model)]
        _check_id_is_not_an_output_column(arguments, ["row", *names])
    X = _features(model, frame, arguments.data)
    explanation = model.explain(X)
    names = [str(name) for name in explanation.feature_names]
    if arguments.steps:
        n_rows, n_steps, n_features = explanation.step_masks.shape
        result = pd.DataFrame(
            {
                "row": np.repeat(np.arange(n_rows), n_steps * n_features),
                "step": np.tile(np.repeat(np.arange(1, n_steps + 1), n_features), n_rows),
                "feature": np.tile(names, n_rows * n_steps),
                "mask": explanation.step_masks.reshape(-1),
            }
        )
        if explanation.step_gates is not None:  # a model with step gates: each (row, step)'s gate on its lines
            result["gate"] = np.repeat(explanation.step_gates.reshape(-1), n_features)
        if ids is not None:  # beside the row number, on every line of the row
            result.insert(1, arguments.id, np.repeat(ids, n_steps * n_features))
    else:
        result = pd.DataFrame(explanation.importances, columns=names)
        result.insert(0, "row", np.arange(len(frame)))
        if ids is not None:
            result.insert(1, arguments.id, ids)
    if arguments.plot is not None:
        # Drawn before the table is written: a reader that closes the pipe early (`| head`) ends the process
        # there, and the figure asked for would silently be missing.
        import matplotlib.pyplot as plt  # no window opens: the figure is only saved (headless: Agg by default)

        display = FeatureMaskDisplay.from_estimator(model, X, max_samples=min(len(X), 50))
        display.figure_.savefig(arguments.plot, dpi=120, bbox_inches="tight")
        plt.close(display.figure_)
        print(f"mask figure   {arguments.plot}", file=sys.stderr)
    _write_table(result, arguments.output)


def _metrics(model, X, y):
    """The metrics of a classifier (accuracy, balanced accuracy, ROC AUC, log loss) or a regressor."""
    if isinstance(model, SparseTabNetRegressor):
        prediction = model.predict(X)
        metrics = {
            "rmse": float(root_mean_squared_error(y, prediction)),
            "mae": float(mean_absolute_error(y, prediction)),
            "r2": float(r2_score(y, prediction)),
        }
        return {**metrics, **_loss_metrics(model, np.asarray(y, dtype=np.float64), prediction)}
    prediction, probabilities = model.predict(X), model.predict_proba(X)
    labels = list(model.classes_)
    unknown = sorted(set(pd.unique(y).tolist()) - set(labels), key=str)
    if unknown:
        raise UserError(f"--target holds labels the model never saw: {unknown}; its classes are {labels}.")
    if len(labels) == 2:
        auc = roc_auc_score(y, probabilities[:, 1]) if len(set(y)) == 2 else float("nan")
    else:
        auc = roc_auc_score(y, probabilities, multi_class="ovr", labels=labels) if len(set(y)) > 1 else float("nan")
    return {
        "accuracy": float(accuracy_score(y, prediction)),
        "balanced_accuracy": float(balanced_accuracy_score(y, prediction)),
        "roc_auc": float(auc),
        "log_loss": float(log_loss(y, probabilities, labels=labels)),
    }


def _loss_metrics(model, y, prediction):
    """What a model of another loss than the squared error predicts, scored as that loss scores it.

    quantile: the mean pinball loss at ``quantile`` and the share of rows whose target is at or below the
    prediction (about ``quantile`` for a calibrated model); poisson and gamma: the mean deviance (NaN, null in
    ``--json``, where a target is outside the loss's domain: y < 0 for poisson, y <= 0 for gamma).
    """
    loss = getattr(model, "loss", "squared_error")
    if loss == "quantile":
        return {
            "pinball_loss": float(mean_pinball_loss(y, prediction, alpha=model.quantile)),
            "share_at_or_below": float(np.mean(y <= prediction)),
        }
    if loss in ("poisson", "gamma"):
        in_domain = (y >= 0).all() if loss == "poisson" else (y > 0).all()
        deviance = mean_poisson_deviance if loss == "poisson" else mean_gamma_deviance
        return {f"mean_{loss}_deviance": float(deviance(y, prediction)) if in_domain else float("nan")}
    return {}


def _command_evaluate(arguments):
    model = _load(arguments.model)
    frame = read_table(arguments.data, text_columns=text_columns(model))
    X, y = _split_target(frame, arguments.target, arguments.data)
    if y.isna().any():
        raise UserError(
            f"--target {arguments.target!r} has {int(y.isna().sum())} missing value(s) in {arguments.data!r}."
        )
    metrics = _metrics(model, _features(model, X, arguments.data), y)
    if arguments.json:
        # A metric undefined on these rows (ROC AUC of one class) is null: JSON has no NaN.
        defined = {name: (None if value != value else value) for name, value in metrics.items()}
        print(json.dumps({"rows": len(frame), **defined}, indent=2, allow_nan=False))
        return
    width = max(18, *(len(name) + 1 for name in metrics))  # the longest name, mean_poisson_deviance, aligned too
    print(f"{'metric':<{width}} value")
    for name, value in metrics.items():
        print(f"{name:<{width}} {value:.4f}")
    print(f"{'rows':<{width}} {len(frame)}")


def _command_info(arguments):
    model = _load(arguments.model)
    lines = [f"model         {type(model).__name__}"]
    defaults = type(model)().get_params(deep=False)
    changed = {
        name: value for name, value in model.get_params(deep=False).items() if repr(value) != repr(defaults[name])
    }
    lines.append("parameters    " + (", ".join(f"{name}={value!r}" for name, value in changed.items()) or "defaults"))
    if hasattr(model, "classes_"):
        lines.append(f"classes       {', '.join(map(str, np.atleast_1d(model.classes_)))}")
    names = [str(name) for name in getattr(model, "feature_names_in_", [f"x{j}" for j in range(model.n_features_in_)])]
    lines.append(f"features      {len(names)}: {', '.join(names)}")
    best = model.best_iteration_
    history = f"training      {model.n_iter_} epochs, final train loss {model.loss_curve_[-1]:.4f}"
    if model.validation_scores_ is not None and best is not None:
        name, negate = metric_label(model.scoring)
        score = -model.validation_scores_[best] if negate else model.validation_scores_[best]
        history += f", best val {name} {score:.4f} at epoch {best + 1}"
    lines.append(history)
    lines.append("importances   (mean aggregate mask over the training rows)")
    order = np.argsort(-model.feature_importances_, kind="stable")
    width = max(len(name) for name in names)
    lines += [f"  {names[j]:<{width}}  {model.feature_importances_[j]:.3f}" for j in order]
    print("\n".join(lines))


def _parser():
    parser = argparse.ArgumentParser(
        prog="sparsetab",
        description="TabNet with sparse attention masks, from the command line: fit on a table, predict, "
        "explain (which columns each row's prediction used), evaluate, inspect.",
    )
    parser.add_argument("--version", action="version", version=f"sparsetab {__version__}")
    parser.add_argument("--debug", action="store_true", help="show the full traceback of an error")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show the full traceback")

    def command(name, help_text):
        return commands.add_parser(
            name,
            help=help_text,
            description=help_text,
            epilog=_EXAMPLES[name],
            formatter_class=argparse.RawDescriptionHelpFormatter,
            parents=[common],
        )

    fit = command("fit", "Fit a model on a table and write it as a model file.")
    fit.add_argument("data", metavar="DATA", help="training table: CSV (any compression) or Parquet")
    fit.add_argument("--target", required=True, metavar="COLUMN", help="the column to predict")
    fit.add_argument(
        "--task",
        choices=("classification", "regression"),
        help="default: the task of a --set parameter that one task has (loss, class_weight), else what "
        "type_of_target says of the target",
    )
    fit.add_argument(
        "--set",
        action="append",
        metavar="PARAM=VALUE",
        help="an estimator parameter; VALUE is read as JSON when it parses (512, true, null, {...}), else as a string",
    )
    fit.add_argument(
        "--drop",
        action="append",
        metavar="COLUMN",
        help="a column that is not an input (an ID, a leak), once per column; predict, explain and evaluate then "
        "ignore it too",
    )
    fit.add_argument("--validation", metavar="DATA", help="validation table with the same columns (early stopping)")
    fit.add_argument("--output", metavar="MODEL", help="model file to write (default: DATA's name + .sparsetab)")

    def on_a_table(name, help_text):
        # predict and explain: a model file, a table, and a table written out
        parser = command(name, help_text)
        parser.add_argument("model", metavar="MODEL")
        parser.add_argument("data", metavar="DATA")
        parser.add_argument("--output", metavar="FILE", help="CSV or .parquet (default: CSV on standard output)")
        return parser

    predict = on_a_table("predict", "Predict with a model file: labels (and class probabilities) or values.")
    predict.add_argument("--proba", action="store_true", help="add one proba_<class> column per class")
    predict.add_argument("--id", metavar="COLUMN", help="copy this column of DATA into the output")

    explain = on_a_table("explain", "Per-row feature importances (the aggregate attention mask), or the step masks.")
    explain.add_argument("--plot", metavar="FIGURE", help="also draw the mask figure (PNG, SVG or PDF)")
    explain.add_argument("--rows", type=int, metavar="N", help="only the first N rows")
    explain.add_argument("--id", metavar="COLUMN", help="copy this column of DATA into the output, after row")
    explain.add_argument(
        "--steps",
        action="store_true",
        help="the step masks in long format (row, step, feature, mask; and gate, with step gates)",
    )

    evaluate = command("evaluate", "Score a model file on a labelled table.")
    evaluate.add_argument("model", metavar="MODEL")
    evaluate.add_argument("data", metavar="DATA")
    evaluate.add_argument("--target", required=True, metavar="COLUMN")
    evaluate.add_argument("--json", action="store_true", help="print the metrics as JSON")

    info = command("info", "Describe a model file: parameters, classes, features, importances, training.")
    info.add_argument("model", metavar="MODEL")
    return parser


_COMMANDS = {
    "fit": _command_fit,
    "predict": _command_predict,
    "explain": _command_explain,
    "evaluate": _command_evaluate,
    "info": _command_info,
}


def main(argv=None):
    """Run the ``sparsetab`` command.

    Parameters
    ----------
    argv : list of str or None, default=None
        The arguments after the program name; None reads ``sys.argv[1:]``.

    Returns
    -------
    int
        0 on success, 1 for a user error (a missing file or column, a bad parameter value),
        printed as one line on standard error; 141 (128 + SIGPIPE), silently, when the reader of
        standard output closed it early (``sparsetab predict ... | head``). A usage error (an unknown option, a missing
        argument) exits with 2 through argparse.

    Raises
    ------
    SystemExit
        From argparse, for ``--help``, ``--version`` and usage errors.
    """
    arguments = _parser().parse_args(argv)

    shown = set()

    def show_warning(message, category, filename, lineno, file=None, line=None):
        # One line, as the errors, and once: predict and predict_proba of one command warn of the same rows.
        text = f"sparsetab {arguments.command}: {category.__name__}: {message}"
        if text not in shown:
            shown.add(text)
            print(text, file=sys.stderr)

    try:
        with warnings.catch_warnings():
            warnings.showwarning = show_warning
            _COMMANDS[arguments.command](arguments)
    except BrokenPipeError:
        # The reader closed the pipe (`sparsetab predict ... | head`): end quietly with the status of a process
        # killed by SIGPIPE, as other command-line tools do; standard output goes nowhere, so that flushing it at
        # exit does not raise again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 128 + int(getattr(signal, "SIGPIPE", 13))
    except Exception as error:  # one line for the user; the traceback only when asked for
        if arguments.debug:
            traceback.print_exc()
        # Bad values, types and files are the user's to fix: their message alone. Anything else is a bug, named.
        user_error = isinstance(error, (UserError, ValueError, TypeError, OSError, ImportError))
        message = str(error) if user_error else f"{type(error).__name__}: {error}"
        print(f"sparsetab {arguments.command}: error: {message}", file=sys.stderr)
        return 1
    return 0
