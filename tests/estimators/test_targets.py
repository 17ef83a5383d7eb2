"""Targets of the estimators: multilabel indicator matrices and multiclass-multioutput for the classifier."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import DataConversionWarning
from sklearn.metrics import accuracy_score, log_loss
from sklearn.model_selection import KFold, cross_val_score
from sklearn.utils.class_weight import compute_sample_weight

from sparsetab import SparseTabNetClassifier

# Short fits stop at max_epochs on purpose; tests that check the warning use pytest.warns.
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def _features(n_rows=200, seed=0):
    return np.random.default_rng(seed).normal(size=(n_rows, 4))


def _multilabel(X):
    """Three labels, each a simple function of the first two columns."""
    return np.column_stack([X[:, 0] > 0, X[:, 1] > 0, X[:, 0] + X[:, 1] > 0]).astype(np.int64)


def _multioutput(X):
    """Two tasks in a DataFrame of strings: a label with 2 classes and one with 3."""
    band = np.array(["low", "mid", "top"])[np.digitize(X[:, 1], [-0.5, 0.5])]
    return pd.DataFrame({"sign": np.where(X[:, 0] > 0, "pos", "neg"), "band": band})


# 400 rows and 30 epochs with patience for all of them: the learning tests' bounds sit several standard
# deviations below the typical result (benchmarks/learning_bounds.py); 200 rows and 15 epochs did not.
LEARNING = dict(max_epochs=30, n_iter_no_change=30, learning_rate=0.05)


def learn_multilabel(fast_params, random_state=0):
    X = _features(400)
    y = _multilabel(X)
    model = SparseTabNetClassifier(**{**fast_params, **LEARNING, "random_state": random_state}).fit(X, y)
    return model, X, y, {"accuracy of the worst label": (model.predict(X) == y).mean(axis=0).min()}


def learn_multioutput(fast_params, random_state=0):
    X = _features(400)
    Y = _multioutput(X)
    model = SparseTabNetClassifier(**{**fast_params, **LEARNING, "random_state": random_state}).fit(X, Y)
    per_column = (model.predict(X) == Y.to_numpy()).mean(axis=0)
    return model, X, Y, {"accuracy, column sign": per_column[0], "accuracy, column band": per_column[1]}


def test_classifier_tags_announce_multilabel_and_multioutput():
    tags = SparseTabNetClassifier().__sklearn_tags__()
    assert tags.classifier_tags.multi_label
    assert tags.target_tags.multi_output
    assert tags.target_tags.single_output


def test_multilabel_indicator_learns_with_one_sigmoid_per_label(fast_params):
    model, X, y, learned = learn_multilabel(fast_params)
    np.testing.assert_array_equal(model.classes_, [0, 1, 2])  # as MLPClassifier: the label columns
    assert model.n_outputs_ == 3
    proba = model.predict_proba(X)
    assert proba.shape == (400, 3) and proba.dtype == np.float64
    assert ((proba >= 0) & (proba <= 1)).all()
    assert not np.allclose(proba.sum(axis=1), 1)  # independent sigmoids, not a softmax
    predicted = model.predict(X)
    assert predicted.shape == (400, 3) and predicted.dtype == np.int64
    np.testing.assert_array_equal(predicted, (proba > 0.5).astype(int))
    assert (
        learned["accuracy of the worst label"] > 0.8
    )  # chance: about 0.5; bound from benchmarks/results/learning_bounds.md: mean 0.953, sd 0.021 over 30 seeds
    assert model.score(X, y) == pytest.approx(accuracy_score(y, predicted))  # subset accuracy


def _fit_with_weighted_validation(fast_params, make_target):
    """Two epochs scored on weighted validation rows: (model, predict_proba(X_val), y_val, w_val)."""
    X, X_val = _features(120, seed=1), _features(60, seed=2)
    w_val = np.linspace(0.5, 2.0, 60)
    model = SparseTabNetClassifier(max_epochs=2, early_stopping=False, **fast_params)
    model.fit(X, make_target(X), X_val=X_val, y_val=make_target(X_val), sample_weight_val=w_val)
    return model, model.predict_proba(X_val), make_target(X_val), w_val


def test_multilabel_loss_is_the_weighted_sum_of_per_label_log_losses(fast_params):
    model, proba, y_val, w_val = _fit_with_weighted_validation(fast_params, _multilabel)
    expected = sum(log_loss(y_val[:, j], proba[:, j], sample_weight=w_val) for j in range(3))
    assert model.validation_scores_[-1] == pytest.approx(-expected, rel=1e-5)


def test_multilabel_predict_keeps_the_dtype_of_y_and_accepts_lists(fast_params):
    X = _features(80)
    y = _multilabel(X).astype(bool)
    predicted = SparseTabNetClassifier(max_epochs=1, **fast_params).fit(X, y).predict(X)
    assert predicted.dtype == np.bool_ and predicted.shape == (80, 3)
    from_lists = SparseTabNetClassifier(max_epochs=1, **fast_params).fit(X, y.astype(int).tolist()).predict(X)
    np.testing.assert_array_equal(from_lists, predicted.astype(int))


def test_multilabel_accuracy_scoring_with_y_val_and_internal_split(fast_params):
    X, X_val = _features(150, seed=3), _features(50, seed=4)
    y, y_val = _multilabel(X), _multilabel(X_val)
    model = SparseTabNetClassifier(max_epochs=3, early_stopping=False, scoring="accuracy", **fast_params)
    model.fit(X, y, X_val=X_val, y_val=y_val)
    assert model.validation_scores_[-1] == pytest.approx(accuracy_score(y_val, model.predict(X_val)))
    # early stopping's own split of a 2-D target is not stratified and works
    split = SparseTabNetClassifier(max_epochs=3, early_stopping=True, scoring="accuracy", **fast_params).fit(X, y)
    assert len(split.validation_scores_) == split.n_iter_
    assert all(0 <= score <= 1 for score in split.validation_scores_)


def test_multilabel_class_weight_equals_the_sample_weight_it_stands_for(fast_params):
    X = _features(100)
    y = _multilabel(X)
    for class_weight in ("balanced", [{0: 1.0, 1: 3.0}, {0: 2.0, 1: 1.0}, {0: 1.0, 1: 1.0}]):
        weighted = SparseTabNetClassifier(max_epochs=2, class_weight=class_weight, **fast_params).fit(X, y)
        explicit = SparseTabNetClassifier(max_epochs=2, **fast_params).fit(
            X, y, sample_weight=compute_sample_weight(class_weight, y)
        )
        np.testing.assert_allclose(weighted.predict_proba(X), explicit.predict_proba(X), rtol=1e-6)
    unweighted = SparseTabNetClassifier(max_epochs=2, **fast_params).fit(X, y)
    assert not np.allclose(weighted.loss_curve_, unweighted.loss_curve_)


def test_multioutput_learns_one_softmax_per_column(fast_params):
    model, X, Y, learned = learn_multioutput(fast_params)
    assert model.n_outputs_ == 2
    assert isinstance(model.classes_, list)
    assert model.classes_[0].tolist() == ["neg", "pos"]
    assert model.classes_[1].tolist() == ["low", "mid", "top"]
    members = getattr(model.network_, "members", [model.network_])  # the refit keeps two networks
    assert [member.head.out_features for member in members] == [5] * len(members)  # 2 + 3 concatenated logits
    proba = model.predict_proba(X)
    assert [p.shape for p in proba] == [(400, 2), (400, 3)]
    for p in proba:
        np.testing.assert_allclose(p.sum(axis=1), 1.0)
    predicted = model.predict(X)
    assert predicted.shape == (400, 2) and predicted.dtype == object
    for k in range(2):
        np.testing.assert_array_equal(predicted[:, k], model.classes_[k][proba[k].argmax(axis=1)])
    assert (
        learned["accuracy, column sign"] > 0.9
    )  # chance: 0.5; bound from benchmarks/results/learning_bounds.md: mean 0.981, sd 0.014 over 30 seeds
    # chance: about 0.38; bound from benchmarks/results/learning_bounds.md: mean 0.919, sd 0.031 over 30 seeds
    assert learned["accuracy, column band"] > 0.75
    subset = np.all(predicted == Y.to_numpy(), axis=1).mean()
    assert model.score(X, Y) == pytest.approx(subset)
    weights = np.arange(400.0)
    expected = np.average(np.all(predicted == Y.to_numpy(), axis=1), weights=weights)
    assert model.score(X, Y, sample_weight=weights) == pytest.approx(expected)


def test_multioutput_loss_is_the_sum_of_per_column_cross_entropies(fast_params):
    model, proba, Y_val, w_val = _fit_with_weighted_validation(fast_params, _multioutput)
    expected = sum(
        log_loss(Y_val.iloc[:, k], proba[k], labels=model.classes_[k], sample_weight=w_val) for k in range(2)
    )
    assert model.validation_scores_[-1] == pytest.approx(-expected, rel=1e-5)


def test_multioutput_string_labels_keep_their_dtype_and_default_scoring_works(fast_params):
    X = _features(80)
    Y = np.column_stack([np.where(X[:, 0] > 0, "pos", "neg"), np.where(X[:, 1] > 0, "hi", "lo")])
    model = SparseTabNetClassifier(max_epochs=2, **fast_params).fit(X, Y)
    assert model.predict(X).dtype == Y.dtype
    assert [c.tolist() for c in model.classes_] == [["neg", "pos"], ["hi", "lo"]]
    scores = cross_val_score(SparseTabNetClassifier(max_epochs=2, **fast_params), X, Y, cv=KFold(2))
    assert scores.shape == (2,) and ((0 <= scores) & (scores <= 1)).all()
    # early stopping on the default loss with its own (unstratified) split
    split = SparseTabNetClassifier(max_epochs=3, early_stopping=True, **fast_params).fit(X, Y)
    assert len(split.validation_scores_) == split.n_iter_


def test_multioutput_class_weight(fast_params):
    X = _features(100)
    Y = _multioutput(X)
    class_weight = [{"neg": 1.0, "pos": 2.0}, {"low": 3.0, "mid": 1.0, "top": 1.0}]
    weighted = SparseTabNetClassifier(max_epochs=2, class_weight=class_weight, **fast_params).fit(X, Y)
    explicit = SparseTabNetClassifier(max_epochs=2, **fast_params).fit(
        X, Y, sample_weight=compute_sample_weight(class_weight, Y.to_numpy())
    )
    for a, b in zip(weighted.predict_proba(X), explicit.predict_proba(X)):
        np.testing.assert_allclose(a, b, rtol=1e-6)


@pytest.mark.parametrize(
    "class_weight, y_kind, message",
    [
        ({0: 1.0, 1: 2.0}, "multilabel", "class_weight is a dict but y has 3 output columns"),
        ([{0: 1.0, 1: 2.0}], "multilabel", "class_weight is a list of 1 dict\\(s\\) but y has 3 output columns"),
        ([{0: 1.0, 1: 2.0}], "binary", "for a 1-D y give a dict"),
        # A negative weight turned its rows' loss into a gain: every row was predicted as the other class.
        ({0: -1, 1: 1}, "binary", "class_weight gives class 0 the weight -1; a class weight must be a finite number"),
        ({0: 1.0, 1: float("nan")}, "binary", "class_weight gives class 1 the weight nan"),
        ({0: "2", 1: 1.0}, "binary", "class_weight gives class 0 the weight '2'"),
        ({0: 0, 1: 0.0}, "binary", r"class_weight=\{0: 0, 1: 0.0\} gives weight 0 to the class of every row"),
        (
            [{0: 1.0, 1: 1.0}, {0: 1.0, 1: -0.5}, {0: 1.0, 1: 1.0}],
            "multilabel",
            "class_weight gives class 1 of column 1 the weight -0.5",
        ),
    ],
)
def test_class_weight_errors_name_the_accepted_forms(class_weight, y_kind, message, fast_params):
    X = _features(40)
    y = _multilabel(X) if y_kind == "multilabel" else _multilabel(X)[:, 0]
    with pytest.raises(ValueError, match=message):
        SparseTabNetClassifier(max_epochs=1, class_weight=class_weight, **fast_params).fit(X, y)


def test_target_errors(fast_params):
    X = _features(40)
    y = _multilabel(X)
    model = SparseTabNetClassifier(max_epochs=1, **fast_params)
    with pytest.raises(ValueError, match="values \\[2, 3\\]; it must hold 0 and 1 only"):
        model.fit(X, y + 2)  # type_of_target calls this a label indicator matrix too
    with pytest.raises(ValueError, match="y_val has shape \\(40, 2\\).* fitted on y with 3 output column"):
        model.fit(X, y, X_val=X, y_val=y[:, :2])
    with pytest.raises(ValueError, match="y_val has shape \\(40,\\).* fitted on y with 3 output column"):
        model.fit(X, y, X_val=X, y_val=y[:, 0])
    with pytest.raises(ValueError, match="y_val is a label indicator matrix .* values \\[0, 5\\]"):
        model.fit(X, y, X_val=X, y_val=np.where(y == 1, 5, y))
    Y = _multioutput(X)
    Y_val = Y.copy()
    Y_val.loc[0, "band"] = "huge"
    with pytest.raises(ValueError, match="y_val\\[:, 1\\] contains labels not seen in y: \\['huge'\\]"):
        model.fit(X, Y, X_val=X, y_val=Y_val)
    with pytest.raises(ValueError, match="y_val has shape \\(40, 2\\).* fitted on y with 1 output column"):
        model.fit(X, Y["sign"], X_val=X, y_val=Y)
    with pytest.raises(ValueError, match="Unknown label type"):  # scikit-learn's error for mixed label types
        model.fit(X, np.array([1, "a"] * 20, dtype=object))
    with pytest.raises(ValueError, match="Unknown label type"):
        model.fit(X, X[:, :2])  # continuous-multioutput
    with pytest.raises(ValueError, match="Found array with dim 3"):
        model.fit(X, np.zeros((40, 1, 2)))
    fitted = SparseTabNetClassifier(max_epochs=1, **fast_params).fit(X, Y)
    with pytest.raises(ValueError, match="fitted on 2 output columns"):
        fitted.score(X, Y["sign"])


def test_single_column_2d_y_is_a_1d_target_with_a_warning(fast_params):
    X = _features(60)
    y = _multilabel(X)[:, :1]
    with pytest.warns(DataConversionWarning):
        model = SparseTabNetClassifier(max_epochs=1, **fast_params).fit(X, y)
    np.testing.assert_array_equal(model.classes_, [0, 1])
    assert model.n_outputs_ == 1
    assert model.predict(X).shape == (60,)


@pytest.mark.parametrize("as_frame", [False, True])
def test_a_column_vector_y_warns_once_at_the_users_line(fast_params, as_frame):
    # Each check of the rows warned again (3 times with a held-out first pass), naming a line of sparsetab.
    X = _features(200)
    y = _multilabel(X)[:, :1]
    y_val = y[:40]
    if as_frame:
        y, y_val = pd.DataFrame(y, columns=["t"]), pd.DataFrame(y_val, columns=["t"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        SparseTabNetClassifier(max_epochs=2, **fast_params).fit(X, y)  # the refit: a held-out first pass
        SparseTabNetClassifier(max_epochs=2, **fast_params).fit(X, y, X_val=X[:40], y_val=y_val)
    conversions = [warning for warning in caught if issubclass(warning.category, DataConversionWarning)]
    assert [str(warning.message).split(" was passed")[0] for warning in conversions] == [
        "A column-vector y",
        "A column-vector y",
        "A column-vector y_val",
    ]
    assert {warning.filename for warning in conversions} == {__file__}


def _nullable_target_data(n_rows=160):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n_rows, 3))
    return X, X[:, 0] > 0


@pytest.mark.parametrize(
    "make_y, classes, dtype",
    [
        (lambda b: pd.Series(b, dtype="boolean"), [False, True], np.dtype(bool)),
        (lambda b: pd.Series(b.astype(int) + 3, dtype="Int64"), [3, 4], np.dtype("int64")),
        (lambda b: pd.Series(b.astype(int), dtype="Int8"), [0, 1], np.dtype("int8")),
        (lambda b: pd.Series(b.astype(int) * 7, dtype="UInt16"), [0, 7], np.dtype("uint16")),
        (lambda b: pd.Series(b.astype(float) * 2, dtype="Float64"), [0.0, 2.0], np.dtype("float64")),
        (lambda b: pd.Series(np.where(b, "yes", "no"), dtype="string"), ["no", "yes"], np.dtype(object)),
        (lambda b: pd.Series(pd.Categorical(np.where(b, "yes", "no"))), ["no", "yes"], np.dtype(object)),
        (lambda b: pd.Series(pd.Categorical(b.astype(np.int16) * 5)), [0, 5], np.dtype("int16")),
        (lambda b: pd.Series(np.where(b, "yes", "no"), dtype="string[pyarrow]"), ["no", "yes"], np.dtype(object)),
        (lambda b: pd.Series(b.astype(int) + 1, dtype="int64[pyarrow]"), [1, 2], np.dtype("int64")),
    ],
    ids=[
        "boolean",
        "Int64",
        "Int8",
        "UInt16",
        "Float64",
        "string",
        "category of str",
        "category of int16",
        "pyarrow string",
        "pyarrow int64",
    ],
)
@pytest.mark.parametrize("container", ["Series", "bare array"])
def test_nullable_pandas_targets_predict_their_own_labels(make_y, classes, dtype, container, fast_params):
    # classes_ became floats and predict returned float64 for "boolean" and "Int64"; a bare pandas array (y.array)
    # did so still, and a pyarrow-backed one failed in the hold-out split ("only integer scalar arrays ...").
    X, b = _nullable_target_data()
    series = make_y(b)
    y = series.array if container == "bare array" else series
    model = SparseTabNetClassifier(max_epochs=1, **fast_params).fit(X, y)
    assert model.classes_.tolist() == classes and model.classes_.dtype == dtype
    prediction = model.predict(X)
    assert prediction.dtype == dtype
    assert all(type(value) is type(classes[0]) for value in prediction.tolist())
    assert set(prediction.tolist()) <= set(classes)
    assert 0 <= model.score(X, y) <= 1
    model.partial_fit(X, y)  # the same conversion when training continues
    with pytest.raises(ValueError, match="1 missing label"):
        missing = series.where(np.arange(len(y)) != 3)
        SparseTabNetClassifier(max_epochs=1, **fast_params).fit(
            X, missing.array if container == "bare array" else missing
        )


def test_a_multi_output_target_with_a_label_type_per_column(fast_params):
    # One column of strings and one of integers: scikit-learn sorted them together and raised a TypeError.
    X, b = _nullable_target_data()
    y = pd.DataFrame({"answer": np.where(b, "yes", "no"), "grade": (X[:, 1] > 0).astype(int) + 1})
    model = SparseTabNetClassifier(max_epochs=1, **fast_params).fit(X, y)
    assert [classes.tolist() for classes in model.classes_] == [["no", "yes"], [1, 2]]
    assert model.classes_[1].dtype == np.dtype(int)
    prediction = model.predict(X)
    assert prediction.dtype == object and prediction.shape == (len(X), 2)
    assert {type(value) for value in prediction[:, 0]} == {str}
    assert set(prediction[:, 1].tolist()) <= {1, 2}
    assert [len(p) for p in model.predict_proba(X)] == [len(X), len(X)]
    assert 0 <= model.score(X, y) <= 1


@pytest.mark.parametrize("kind", ["binary", "multiclass", "multilabel", "multioutput", "ensemble"])
def test_predict_log_proba_is_the_log_of_predict_proba(fast_params, kind):
    X = _features(120)
    y = {
        "binary": X[:, 0] > 0,
        "multiclass": np.digitize(X[:, 1], [-0.5, 0.5]),
        "multilabel": _multilabel(X),
        "multioutput": _multioutput(X),
        "ensemble": np.digitize(X[:, 1], [-0.5, 0.5]),
    }[kind]
    params = dict(fast_params, max_epochs=2, n_ensemble=2 if kind == "ensemble" else 1)
    model = SparseTabNetClassifier(**params).fit(X, y)
    proba, log_proba = model.predict_proba(X[:7]), model.predict_log_proba(X[:7])
    if kind == "multioutput":
        assert [block.shape for block in log_proba] == [(7, 2), (7, 3)]
        for block, log_block in zip(proba, log_proba):
            np.testing.assert_allclose(np.exp(log_block), block, rtol=1e-12, atol=0)
        return
    assert log_proba.shape == proba.shape and log_proba.dtype == np.float64
    np.testing.assert_allclose(np.exp(log_proba), proba, rtol=1e-12, atol=0)
    assert np.all(log_proba <= 0)
