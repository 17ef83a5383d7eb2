"""BaseSparseTabNet (sparsetab._base): the fit and partial_fit plumbing shared by the classifier and the regressor.

Seen through the estimators: the rows of weight 0 dropped before anything but the classes is learned from y; the
checks of the rows and arguments (stage 1 of a fit, and the arguments of partial_fit); the validation rows held
out or given, and the scores read from them (stages 2 and 3, the score function); the refit on all rows of
``early_stopping="auto"``; the checks of a continued fit (partial_fit, warm_start); the importances that
partial_fit defers; ``__sklearn_is_fitted__`` after a failed fit; the device and the tags.
"""

import copy
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.datasets import make_regression
from sklearn.exceptions import ConvergenceWarning, NotFittedError

import sparsetab._base
import sparsetab._inference
from sparsetab import SparseTabNetClassifier, SparseTabNetRegressor, load_model
from tests.conftest import quiet_fit, score_classes

# Short fits stop at max_epochs on purpose; tests that check the warning use pytest.warns.
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


# ----- the rows of weight 0 ---------------------------------------------------------------------
def test_zero_sample_weight_equals_dropping_rows(fast_params, make_people_frame):
    X, y = make_people_frame(200)
    weight = np.r_[np.ones(100), np.zeros(100)]
    weighted = SparseTabNetClassifier(max_epochs=5, **fast_params).fit(X, y, sample_weight=weight)
    dropped = SparseTabNetClassifier(max_epochs=5, **fast_params).fit(X.iloc[:100], y.iloc[:100])
    np.testing.assert_allclose(weighted.predict_proba(X), dropped.predict_proba(X), rtol=1e-6)


def test_a_class_whose_rows_all_weigh_0_stays_a_class(fast_params, make_people_frame):
    # As scikit-learn's classifiers (LogisticRegression, HistGradientBoostingClassifier): predict_proba keeps a
    # column for it, so that folds, stacking and calibration see the same columns whatever the weights.
    X, y = make_people_frame(120)
    y = y.to_numpy().copy()
    y[1] = "maybe"  # a class seen only in a row of weight 0
    weights = np.ones(120)
    weights[1] = 0
    model = SparseTabNetClassifier(max_epochs=2, **fast_params).fit(X, y, sample_weight=weights)
    assert model.classes_.tolist() == ["maybe", "no", "yes"]
    assert model.predict_proba(X).shape == (120, 3)
    # Two classes of weight 0 on every row: the fit trains on the third (it was "y contains only one class"), and
    # its predictions go there (every one of them after 10 epochs; 20 here).
    only = SparseTabNetClassifier(max_epochs=20, **fast_params).fit(X, y, sample_weight=(y == "yes").astype(float))
    assert only.classes_.tolist() == ["maybe", "no", "yes"]
    assert (only.predict(X) == "yes").mean() > 0.9
    # A row of weight 0 may be unlabelled: its missing label is left out with it, not refused.
    y_unlabelled = y.copy()
    y_unlabelled[[5, 7]] = [None, np.nan]
    weights[[5, 7]] = 0
    partly = SparseTabNetClassifier(max_epochs=2, **fast_params).fit(X, y_unlabelled, sample_weight=weights)
    assert partly.classes_.tolist() == ["maybe", "no", "yes"]
    with pytest.raises(ValueError, match="missing label"):
        SparseTabNetClassifier(max_epochs=2, **fast_params).fit(X, y_unlabelled, sample_weight=np.ones(120))


def test_zero_weight_rows_define_no_balanced_class_weights(fast_params, make_people_frame):
    X, y = make_people_frame(120)
    half = np.arange(120) % 2 == 0
    weighted = SparseTabNetClassifier(max_epochs=3, class_weight="balanced", **fast_params)
    weighted.fit(X, y, sample_weight=half.astype(float))
    subset = SparseTabNetClassifier(max_epochs=3, class_weight="balanced", **fast_params).fit(X[half], y[half])
    np.testing.assert_array_equal(weighted.predict_proba(X), subset.predict_proba(X))


def test_read_only_sample_weights_give_no_torch_warning(fast_params, make_people_frame):
    X, y = make_people_frame(120)
    weights = np.ones(120)
    weights.flags.writeable = False
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*not writable")
        SparseTabNetClassifier(max_epochs=2, **fast_params).fit(X, y, sample_weight=weights)
        SparseTabNetClassifier(max_epochs=2, early_stopping=True, **fast_params).fit(
            X, y, sample_weight=weights, X_val=X, y_val=y, sample_weight_val=weights
        )
    assert not weights.flags.writeable and (weights == 1).all()


def test_fewer_than_two_training_rows_is_a_clear_error():
    X, y = make_regression(30, 3, random_state=0)
    with pytest.raises(ValueError, match="at least 2 rows .* n_samples=1"):
        SparseTabNetRegressor(max_epochs=1).fit(X[:1], y[:1])
    with pytest.raises(ValueError, match="n_samples=1 after dropping rows of zero sample_weight"):
        SparseTabNetRegressor(max_epochs=1).fit(X, y, sample_weight=np.r_[1.0, np.zeros(29)])
    with pytest.raises(ValueError, match="requires y to be passed"):
        SparseTabNetRegressor().fit(X, None)


# ----- validation rows and scores ------------------------------------------------------------
def test_explicit_validation_data_gives_early_stopping_and_scores(fast_params, make_people_frame):
    X, y = make_people_frame(400)
    model = SparseTabNetClassifier(max_epochs=30, n_iter_no_change=3, scoring="accuracy", **fast_params)
    model.fit(X.iloc[:300], y.iloc[:300], X_val=X.iloc[300:], y_val=y.iloc[300:])
    assert len(model.validation_scores_) == model.n_iter_
    assert model.best_validation_score_ == max(model.validation_scores_)
    assert model.validation_scores_[model.best_iteration_] == model.best_validation_score_
    # The restored weights give the best validation accuracy.
    assert model.score(X.iloc[300:], y.iloc[300:]) == pytest.approx(model.best_validation_score_)


def test_internal_validation_split_with_loss_scoring(fast_params, make_people_frame):
    X, y = make_people_frame(300)
    model = SparseTabNetClassifier(max_epochs=15, early_stopping=True, n_iter_no_change=2, **fast_params).fit(X, y)
    assert all(score < 0 for score in model.validation_scores_)  # negative validation loss
    assert model.best_iteration_ is not None
    no_validation = SparseTabNetClassifier(max_epochs=3, early_stopping=False, **fast_params).fit(X, y)
    assert no_validation.validation_scores_ is None and no_validation.best_validation_score_ is None


def test_callable_scorer_without_sample_weight_and_best_score_matches_restored_epoch(fast_params, make_people_frame):
    X, y = make_people_frame(200)
    calls = []

    def accuracy(estimator, X_val, y_val):
        calls.append(len(X_val))
        return float(np.mean(estimator.predict(X_val) == np.asarray(y_val)))

    model = SparseTabNetClassifier(
        max_epochs=12, early_stopping=True, tol=0.05, n_iter_no_change=20, scoring=accuracy, **fast_params
    )
    model.fit(X, y)
    assert calls == [20] * model.n_iter_
    best = model.best_validation_score_
    assert best == model.validation_scores_[model.best_iteration_] == max(model.validation_scores_)


@pytest.mark.parametrize(
    "estimator, scoring, target, reason",
    [
        (SparseTabNetClassifier, "roc_auc", "three classes", r"multi_class must be in .*'roc_auc_ovr'"),
        (SparseTabNetClassifier, "f1", "three classes", r"average='binary'.*'f1_macro'"),
        (SparseTabNetClassifier, "f1", "strings", r"pos_label=1 is not a valid label.*make_scorer"),
        (SparseTabNetRegressor, "roc_auc", "numbers", r"SparseTabNetRegressor has none of .*predict_proba.*'r2'"),
    ],
)
def test_a_scorer_name_that_cannot_score_the_target_is_refused_before_training(
    estimator, scoring, target, reason, fast_params, monkeypatch
):
    # It failed at the first epoch's score with scikit-learn's message alone, which names neither scoring nor a fix.
    X = np.random.default_rng(0).normal(size=(150, 3))
    y = {
        "three classes": np.digitize(X[:, 0], [-0.5, 0.5]),
        "strings": np.where(X[:, 0] > 0, "yes", "no"),
        "numbers": X[:, 0],
    }[target]
    monkeypatch.setattr(sparsetab._base, "train_network", lambda *args, **kwargs: pytest.fail("trained"))
    model = estimator(early_stopping=True, scoring=scoring, max_epochs=2, **fast_params)
    with pytest.raises(
        ValueError, match=rf"scoring='{scoring}' cannot score the validation targets of this .*{reason}"
    ):
        model.fit(X, y)


def test_a_scorer_name_that_fits_the_target_trains(fast_params):
    X = np.random.default_rng(0).normal(size=(150, 3))
    model = SparseTabNetClassifier(early_stopping=True, scoring="roc_auc_ovr", max_epochs=2, **fast_params)
    model.fit(X, np.digitize(X[:, 0], [-0.5, 0.5]))
    assert len(model.validation_scores_) == 2 and all(0 <= score <= 1 for score in model.validation_scores_)


@pytest.mark.parametrize("validation", ["held out", "X_val"])
def test_a_scorer_reads_the_validation_rows_validated_and_encoded_once(fast_params, monkeypatch, validation):
    # Issue 35: a scorer predicts on the validation rows every epoch; they are validated and encoded
    # once per member (here one), and the scores are those of predicting on them afresh.
    X, y = score_classes(160)
    validated = []
    original = SparseTabNetClassifier._validate_X

    def counting(self, X, reset):
        validated.append(len(X))
        return original(self, X, reset)

    monkeypatch.setattr(SparseTabNetClassifier, "_validate_X", counting)
    scores = []

    def scorer(estimator, X_score, y_score):
        scores.append(float(np.mean(estimator.predict(X_score) == y_score)))
        return scores[-1]

    model = SparseTabNetClassifier(
        max_epochs=4, n_iter_no_change=1000, early_stopping=True, scoring=scorer, **fast_params
    )
    if validation == "X_val":
        quiet_fit(model, X[:120], y[:120], X_val=X[120:], y_val=y[120:])
        n_val = 40
    else:
        quiet_fit(model, X, y)
        n_val = 16  # validation_fraction 0.1 of 160 rows
    assert validated.count(n_val) == 1 and len(scores) == 4
    assert model.validation_scores_ == scores
    assert "_scoring_rows" not in vars(model)
    rows = X[120:] if validation == "X_val" else None
    if rows is not None:  # after fit, predict validates again and gives the restored epoch's score
        assert np.mean(model.predict(rows) == y[120:]) == pytest.approx(model.best_validation_score_)


# ----- the refit on all rows of early_stopping="auto" --------------------------------------------
def test_auto_refits_on_all_rows_and_keeps_the_first_pass_as_a_member(fast_params):
    # 1,200 rows: early_stopping="auto" first trains with validation_fraction held out and early stopping,
    # then a new network on all 1,200 rows for best_iteration_ + 1 epochs, the schedule spanning them (the
    # fit that early_stopping=False with max_epochs=best_iteration_ + 1 gives); the first pass's network
    # stays as a second member and the predictions average the two.
    X, y = score_classes(n_rows=1200)
    params = dict(fast_params, max_epochs=4, n_iter_no_change=1, batch_size=256)
    auto = quiet_fit(SparseTabNetClassifier(**params), X, y)
    refit_member, first_member = auto.network_.members
    epochs = auto.best_iteration_ + 1
    assert auto.n_iter_ == len(auto.loss_curve_) == epochs
    assert auto.ensemble_n_iter_ == [epochs, len(auto.validation_scores_)]
    assert auto.ensemble_best_iteration_ == [auto.best_iteration_] * 2
    assert auto.best_validation_score_ == max(auto.validation_scores_)
    assert auto.n_ensemble == 1 and auto.batch_size_ == 256
    refit = quiet_fit(SparseTabNetClassifier(**dict(params, early_stopping=False, max_epochs=epochs)), X, y)
    assert refit.validation_scores_ is None and refit.best_iteration_ is None
    assert auto.loss_curve_ == refit.loss_curve_
    for name, value in refit.network_.state_dict().items():
        assert torch.equal(refit_member.state_dict()[name], value), name
    first = copy.deepcopy(refit)  # the same encoding (learned on every row with the same seed)
    first.network_ = first_member
    expected = (refit.predict_proba(X) + first.predict_proba(X)) / 2
    np.testing.assert_allclose(auto.predict_proba(X), expected, rtol=0, atol=1e-6)
    explanation = auto.explain(X[:5])  # the members' mean: every step's mask and the importances sum to 1
    np.testing.assert_allclose(explanation["step_masks"].sum(axis=-1), 1.0, rtol=0, atol=1e-5)
    np.testing.assert_allclose(explanation["importances"].sum(axis=1), 1.0, rtol=0, atol=1e-5)
    tiny = quiet_fit(SparseTabNetClassifier(**params), X[:99], y[:99])
    assert tiny.validation_scores_ is None and tiny.n_iter_ == 4  # under 100 rows every row trains, no refit
    assert not hasattr(tiny.network_, "members")
    small = quiet_fit(SparseTabNetClassifier(**params), X[:100], y[:100])  # from 100 rows on, the refit
    assert len(small.network_.members) == 2 and small.ensemble_n_iter_[0] == small.best_iteration_ + 1


def test_auto_refit_survives_model_files_pickles_and_continued_fits(fast_params, tmp_path):
    X, y = score_classes(n_rows=1200)
    model = quiet_fit(SparseTabNetClassifier(max_epochs=3, n_iter_no_change=1, **fast_params), X, y)
    path = tmp_path / "model.sparsetab"
    model.save_model(path)
    for restored in (load_model(path), pickle.loads(pickle.dumps(model))):
        np.testing.assert_array_equal(restored.predict_proba(X), model.predict_proba(X))
        assert restored.ensemble_n_iter_ == model.ensemble_n_iter_
    before = model.ensemble_n_iter_
    quiet_fit(load_model(path).set_params(warm_start=True, max_epochs=1), X, y)  # n_ensemble=1 is no change
    model.partial_fit(X, y)
    assert model.ensemble_n_iter_ == [count + 1 for count in before]  # every member continues


def test_auto_refit_takes_the_epoch_the_scores_chose(fast_params):
    # The scorer decides: its best score is at the second epoch, so the refit runs 2 epochs.
    X, y = score_classes(n_rows=1200)
    scores = iter([0.2, 0.9, 0.1, 0.3])

    def scorer(estimator, X_val, y_val):
        assert len(X_val) == 120  # validation_fraction of the rows, held out in the first pass only
        return next(scores)

    model = quiet_fit(SparseTabNetClassifier(max_epochs=4, n_iter_no_change=1000, scoring=scorer, **fast_params), X, y)
    assert model.validation_scores_ == [0.2, 0.9, 0.1, 0.3] and model.best_iteration_ == 1
    assert model.best_validation_score_ == 0.9
    assert model.n_iter_ == 2


def test_auto_refit_gives_each_member_its_own_count(fast_params):
    # n_ensemble=2: two refit members, each for its own first-pass member's count, then the two first-pass members.
    X, y = score_classes(n_rows=1200)
    model = quiet_fit(SparseTabNetClassifier(max_epochs=4, n_ensemble=2, n_iter_no_change=1, **fast_params), X, y)
    best = model.ensemble_best_iteration_
    assert len(model.network_) == 4 and best[:2] == best[2:] and None not in best
    assert model.ensemble_n_iter_[:2] == [count + 1 for count in best[:2]]
    assert model.ensemble_n_iter_[2:] == [len(scores) for scores in model.ensemble_validation_scores_[2:]]
    assert model.ensemble_validation_scores_[:2] == model.ensemble_validation_scores_[2:]
    # explain's members: network by network in the order of ensemble_n_iter_, each network's efficient members
    # in order (explain's docstring); the networks' own masks, one network at a time, are the reference.
    explanation = model.explain(X[:5], per_member=True)
    assert model.n_efficient_members_ == 2 and explanation.member_step_masks.shape == (8, 5, model.n_steps, X.shape[1])
    for index, network in enumerate(model.network_.members):
        single = copy.copy(model)
        single.network_ = network
        np.testing.assert_array_equal(
            explanation.member_step_masks[2 * index : 2 * index + 2],
            single.explain(X[:5], per_member=True).member_step_masks,
        )


def test_auto_refit_says_so_and_does_not_advise_more_epochs(fast_params, capsys):
    # The refit ends at the count it was given: no ConvergenceWarning comes from it (the first pass, whose
    # validation score was still improving at max_epochs, warns once).
    X, y = score_classes(n_rows=1200)
    model = SparseTabNetClassifier(max_epochs=2, n_iter_no_change=1000, verbose=1, **fast_params)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(X, y)
    convergence = [item for item in caught if issubclass(item.category, ConvergenceWarning)]
    assert len(convergence) <= 1
    assert all("validation score" in str(item.message) for item in convergence)
    output = capsys.readouterr().out
    assert (
        "Refitting on all 1200 rows (the 120 held-out rows included) for the number of epochs they chose: "
        f"{model.n_iter_}." in output
    )
    # The refit's closing line names its own count, not max_epochs.
    assert output.rstrip().splitlines()[-1] == (
        f"Stopped after epoch {model.n_iter_}: the number of epochs the held-out rows chose; kept the weights of "
        f"the last epoch ({model.n_iter_})."
    )


def test_warm_start_continues_without_a_refit(fast_params):
    # A continued fit trains the fitted network on every row (no held-out rows, no new network).
    X, y = score_classes(n_rows=1200)
    model = quiet_fit(SparseTabNetClassifier(max_epochs=3, n_iter_no_change=1, warm_start=True, **fast_params), X, y)
    before = model.ensemble_n_iter_
    members = list(model.network_.members)
    quiet_fit(model.set_params(max_epochs=2), X, y)
    assert list(model.network_.members) == members and model.ensemble_n_iter_ == [count + 2 for count in before]


# ----- continued fits: partial_fit and warm_start -----------------------------------------------
def test_partial_fit_first_batch_may_lack_classes(fast_params):
    X, y = score_classes(n_classes=3)
    model = SparseTabNetClassifier(**fast_params)
    model.partial_fit(X[y < 2], y[y < 2], classes=np.array([2, 0, 1]))
    np.testing.assert_array_equal(model.classes_, [0, 1, 2])
    assert model.predict_proba(X).shape == (96, 3)
    model.partial_fit(X, y)  # classes may be omitted after the first call
    assert model.n_iter_ == 2


def test_partial_fit_argument_errors(fast_params):
    X, y = score_classes(n_classes=3)
    with pytest.raises(ValueError, match="classes must be passed on the first call to partial_fit"):
        SparseTabNetClassifier(**fast_params).partial_fit(X, y)
    with pytest.raises(ValueError, match="partial_fit does not support early_stopping=True"):
        SparseTabNetClassifier(early_stopping=True, **fast_params).partial_fit(X, y, classes=[0, 1, 2])
    with pytest.raises(ValueError, match="class_weight='balanced' is not supported by partial_fit"):
        SparseTabNetClassifier(class_weight="balanced", **fast_params).partial_fit(X, y, classes=[0, 1, 2])
    with pytest.raises(ValueError, match=r"classes must list at least 2 class labels, got classes=\[1\]"):
        SparseTabNetClassifier(**fast_params).partial_fit(X, y, classes=[1])
    model = SparseTabNetClassifier(**fast_params).partial_fit(X[y < 2], y[y < 2], classes=[0, 1])
    with pytest.raises(ValueError, match=r"y has classes not in classes_: \[2\]"):
        model.partial_fit(X, y)
    with pytest.raises(ValueError, match=r"classes=\[0, 1, 2\] differs from the classes of the fitted model"):
        model.partial_fit(X, y, classes=[0, 1, 2])
    with pytest.raises(ValueError, match="X has 3 features"):
        model.partial_fit(X[:, :3], y)
    assert model.n_iter_ == 1  # the failed calls left the model as it was
    model.partial_fit(X[y < 2], y[y < 2])
    assert model.n_iter_ == 2


def test_warm_start_requires_the_same_columns_classes_and_network(fast_params):
    X, y = score_classes(n_classes=3)
    model = quiet_fit(SparseTabNetClassifier(max_epochs=2, warm_start=True, **fast_params), X, y)
    with pytest.raises(ValueError, match=r"warm_start can only be used where y has the same classes"):
        model.fit(X[y < 2], y[y < 2])
    with pytest.raises(ValueError, match="X has 3 features"):
        model.fit(X[:, :3], y)
    model.set_params(n_d=8)
    with pytest.raises(ValueError, match=r"built with n_d=4; it is now n_d=8"):
        model.fit(X, y)
    model.set_params(n_d=4)
    quiet_fit(model, X, y)
    assert model.n_iter_ == 4


def test_partial_fit_defers_the_importances_to_their_first_access(tmp_path, monkeypatch):
    import pickle

    from sparsetab import load_model

    X, y = score_classes(200)
    params = dict(n_d=4, n_a=4, n_steps=2, random_state=0, early_stopping=False, learning_rate_schedule="constant")
    params["weight_averaging_epochs"] = None  # partial_fit keeps the trained weights, as this fit then does
    fitted = quiet_fit(SparseTabNetClassifier(max_epochs=3, **params), X, y)
    model = SparseTabNetClassifier(max_epochs=3, **params)
    calls = []
    original = sparsetab._inference.importances_of
    monkeypatch.setattr(
        sparsetab._inference, "importances_of", lambda model, rows: calls.append(1) or original(model, rows)
    )
    for _ in range(3):
        model.partial_fit(X, y, classes=[0, 1])
    assert calls == []  # nothing computed by the calls themselves
    # three partial_fit epochs are the fit of three epochs, so their importances are the same
    np.testing.assert_allclose(model.feature_importances_, fitted.feature_importances_, rtol=1e-6)
    np.testing.assert_allclose(model.feature_importances_.sum(), 1.0)
    assert calls == [1]  # computed once, then kept
    model.partial_fit(X, y)
    restored = pickle.loads(pickle.dumps(model))  # a pickle holds the values, not the rows
    assert "_pending_importance_rows" not in vars(restored) and len(calls) == 2
    np.testing.assert_array_equal(restored.feature_importances_, model.feature_importances_)
    model.partial_fit(X, y)
    loaded = load_model(model.save_model(tmp_path / "model.sparsetab"))
    assert len(calls) == 3
    np.testing.assert_array_equal(loaded.feature_importances_, model.feature_importances_)
    assert not hasattr(SparseTabNetClassifier(), "feature_importances_")  # NotFittedError is an AttributeError


# ----- fitted, device and tags -----------------------------------------------------------------
def test_failed_refit_leaves_the_estimator_unfitted(fast_params, make_people_frame):
    X, y = make_people_frame(60)
    model = SparseTabNetClassifier(max_epochs=2, **fast_params).fit(X, y)
    three_classes = np.resize(["a", "b", "c"], 60)
    with pytest.raises(ValueError, match="X_val and y_val"):
        model.fit(X, three_classes, X_val=X.iloc[:5])
    with pytest.raises(NotFittedError):
        model.predict(X)


def test_device_and_tags():
    X, y = make_regression(30, 3, random_state=0)
    with pytest.raises(ValueError, match="device='nowhere' is not usable"):
        SparseTabNetRegressor(device="nowhere").fit(X, y)
    assert SparseTabNetRegressor().__sklearn_tags__().target_tags.multi_output
    assert SparseTabNetClassifier().__sklearn_tags__().input_tags.allow_nan


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_a_scorer_gets_the_users_own_rows_of_y_for_the_held_out_rows(fast_params):
    # Issue 35: the held-out rows are taken by index from the y the user gave (a Series of strings,
    # with a zero-weight row dropped first), not encoded, split and decoded back.
    X, y_codes = score_classes(161)
    y = pd.Series(np.where(y_codes == 1, "yes", "no"), index=np.arange(1000, 1161), name="answer")
    weights = np.ones(161)
    weights[5] = 0.0
    seen = []

    def scorer(estimator, X_score, y_score, sample_weight=None):
        seen.append(y_score)
        return float(np.mean(estimator.predict(X_score) == np.asarray(y_score)))

    model = SparseTabNetClassifier(max_epochs=2, early_stopping=True, scoring=scorer, **fast_params)
    quiet_fit(model, X, y, sample_weight=weights)
    held_out = seen[0]
    assert isinstance(held_out, pd.Series) and held_out.name == "answer" and len(held_out) == 16
    assert 1005 not in held_out.index  # the zero-weight row is not scored
    pd.testing.assert_series_equal(held_out, y.loc[held_out.index])
