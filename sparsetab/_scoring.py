"""The check, before training, that a scorer named by ``scoring`` can score the validation targets.

Early stopping with ``scoring="roc_auc"`` on three classes, ``"f1"`` on a multiclass ``y`` or a
classification scorer on a regressor fails inside scikit-learn at the first epoch's score, with a
message that names neither ``scoring`` nor the fix. Scoring a baseline model (scikit-learn's
``DummyClassifier`` or ``DummyRegressor`` fitted on the validation targets) with the same scorer
before training raises the same error at once, and this module rewords it. A callable ``scoring``
is not checked: it may read what only a sparsetab model has.
"""

from sklearn.base import is_classifier
from sklearn.dummy import DummyClassifier, DummyRegressor
from sklearn.utils.multiclass import type_of_target

__all__ = ["check_scorer_fits_targets"]

# Scorer names for a target that the binary default of the name cannot score, offered in the message.
_MULTICLASS_NAMES = "'roc_auc_ovr', 'roc_auc_ovo', 'f1_macro', 'f1_weighted', 'precision_macro', 'recall_macro'"


def check_scorer_fits_targets(estimator, scorer, X_val, y_val):
    """Raise a ValueError naming ``scoring`` if ``scorer`` cannot score ``y_val`` for this estimator.

    Parameters
    ----------
    estimator : BaseSparseTabNet
        The classifier or regressor being fitted; its ``scoring`` is a scorer name (a str).
    scorer : callable
        The scorer of that name, from :func:`sklearn.metrics.check_scoring`.
    X_val : pandas.DataFrame or array-like of shape (n_val_samples, n_features)
        The validation rows, as the scorer will be given them.
    y_val : array-like of shape (n_val_samples,) or (n_val_samples, n_outputs)
        The validation targets, as the scorer will be given them.

    Raises
    ------
    ValueError
        Naming ``scoring``, its value and scikit-learn's reason, when the scorer fails on a baseline
        model of the estimator's kind (scikit-learn's ValueError, TypeError or AttributeError, chained).
    """
    baseline = DummyClassifier(strategy="prior") if is_classifier(estimator) else DummyRegressor()
    baseline.fit(X_val, y_val)
    try:
        scorer(baseline, X_val, y_val)
    except (ValueError, TypeError, AttributeError) as error:
        # scikit-learn's reason, about the baseline's class where it names one: the estimator's is the same.
        reason = str(error).strip().replace(type(baseline).__name__, type(estimator).__name__)
        if not reason.endswith((".", "?", "!")):
            reason += "."
        if not is_classifier(estimator):
            advice = "A regressor takes a regression scorer name ('r2', 'neg_mean_squared_error', ...)."
        elif type_of_target(y_val) == "multiclass":
            advice = f"For a multiclass y use a name that averages over the classes ({_MULTICLASS_NAMES})."
        else:
            advice = "A scorer made with sklearn.metrics.make_scorer takes the metric's arguments (pos_label=...)."
        raise ValueError(
            f"scoring={estimator.scoring!r} cannot score the validation targets of this "
            f"{type(estimator).__name__}: {reason} {advice} The default scoring='loss' scores every target."
        ) from error
