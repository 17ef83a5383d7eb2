"""The target kinds (sparsetab._targets): encoding, decoding, losses and outputs, without training."""

import fractions

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from sparsetab._targets import (
    ClassLabels,
    ContinuousTargets,
    LabelIndicators,
    MulticlassMultioutput,
    check_class_weight,
    count_by_column,
    fit_classification_kind,
    fit_continuous_kind,
)


def test_class_labels_encode_decode_and_cross_entropy():
    kind = fit_classification_kind(np.array(["b", "a", "c", "a"]))
    assert isinstance(kind, ClassLabels) and kind.target_type == "multiclass"
    assert kind.classes.tolist() == ["a", "b", "c"] and kind.output_dim == 3
    codes = kind.encode(["c", "a"], "y")
    assert codes.tolist() == [2, 0]
    assert kind.decode(codes).tolist() == ["c", "a"]
    assert kind.stratify(codes) is codes
    output = torch.tensor([[0.0, 0.0, np.log(2.0)]])
    # -log softmax: the class of logit log 2 has probability 2 / 4.
    np.testing.assert_allclose(kind.loss(output, torch.tensor([2])).numpy(), [np.log(2.0)], rtol=1e-6)
    proba = kind.predict_proba(np.array([[0.0, 0.0, np.log(2.0)]], dtype=np.float32))
    np.testing.assert_allclose(proba, [[0.25, 0.25, 0.5]], rtol=1e-6)
    assert kind.predict(np.array([[0.0, 3.0, 1.0]])).tolist() == ["b"]
    assert kind.attributes()["_target_type"] == "multiclass"


def test_class_labels_errors_name_the_argument():
    kind = fit_classification_kind([0, 1, 1])
    assert kind.target_type == "binary"
    with pytest.raises(ValueError, match=r"y_val contains labels not seen in y: \[7\]"):
        kind.encode([0, 7], "y_val")
    with pytest.raises(ValueError, match=r"y_val has shape \(2, 2\)"):
        kind.encode([[0, 1], [1, 0]], "y_val")
    with pytest.raises(ValueError, match="only one class"):
        fit_classification_kind([1, 1])
    with pytest.raises(ValueError, match=r"y contains 1 missing label"):
        fit_classification_kind(np.array(["a", None, "b"], dtype=object))
    with pytest.raises(ValueError, match="Unknown label type"):
        fit_classification_kind([0.5, 1.5])
    with pytest.raises(ValueError, match=r"classes not in classes_: \[5\]"):
        kind.check_continued([0, 5], incremental=True)
    with pytest.raises(ValueError, match="warm_start can only be used"):
        kind.check_continued([0, 0], incremental=False)


def test_label_indicators_sigmoid_per_column():
    y = np.array([[1, 0], [0, 1], [1, 1]])
    kind = fit_classification_kind(y)
    assert isinstance(kind, LabelIndicators) and kind.output_dim == 2
    assert kind.classes.tolist() == [0, 1]
    encoded = kind.encode(y, "y")
    assert encoded.dtype == np.float32
    output = torch.zeros(1, 2)
    # Two columns at probability 1/2: log 2 each, summed.
    np.testing.assert_allclose(kind.loss(output, torch.tensor([[1.0, 0.0]])).numpy(), [2 * np.log(2.0)], rtol=1e-6)
    assert kind.predict(np.array([[2.0, -2.0]], dtype=np.float32)).tolist() == [[1, 0]]
    with pytest.raises(ValueError, match="partial_fit supports one column"):
        kind.check_continued(y, incremental=True)
    kind.check_continued(y, incremental=False)  # warm start: allowed
    assert kind.serving_output()["transform"] == "sigmoid"


def test_label_indicators_refuse_other_values():
    kind = fit_classification_kind(np.array([[1, 0], [0, 1]]))
    with pytest.raises(ValueError, match=r"label indicator matrix .* values \[0, 2\]"):
        kind.encode(np.array([[2, 0], [0, 0]]), "y_val")


def test_multiclass_multioutput_blocks():
    y = np.array([["a", "x"], ["b", "y"], ["c", "x"]], dtype=object)
    kind = fit_classification_kind(y)
    assert isinstance(kind, MulticlassMultioutput)
    assert kind.blocks == [3, 2] and kind.output_dim == 5
    codes = kind.encode(y, "y")
    assert codes.tolist() == [[0, 0], [1, 1], [2, 0]]
    assert kind.decode(codes).tolist() == y.tolist()
    output = torch.zeros(1, 5)
    expected = np.log(3.0) + np.log(2.0)  # uniform softmax over each block
    np.testing.assert_allclose(kind.loss(output, torch.tensor([[1, 0]])).numpy(), [expected], rtol=1e-6)
    first, second = kind.predict_proba(np.zeros((1, 5), dtype=np.float32))
    np.testing.assert_allclose(first, [[1 / 3] * 3])
    np.testing.assert_allclose(second, [[0.5, 0.5]])
    assert kind.predict(np.array([[0, 0, 1, 1, 0]], dtype=np.float32)).tolist() == [["c", "x"]]
    assert kind.accuracy(y, y, None) == 1.0
    assert kind.accuracy(y, kind.decode(np.array([[0, 0], [1, 1], [0, 0]])), [1, 1, 2]) == 0.5
    with pytest.raises(ValueError, match=r"y\[:, 1\] contains labels not seen in y: \['z'\]"):
        kind.encode(np.array([["a", "z"]], dtype=object), "y")


def test_class_weights_multiply_with_the_rows():
    kind = fit_classification_kind([0, 0, 0, 1])
    np.testing.assert_allclose(kind.class_weights([0, 0, 0, 1], "balanced"), [4 / 6, 4 / 6, 4 / 6, 2.0])
    np.testing.assert_allclose(kind.class_weights([0, 1], {0: 1.0, 1: 3.0}), [1.0, 3.0])
    assert kind.class_weights([0, 1], None) is None
    with pytest.raises(ValueError, match="class_weight is a list of 1 dict"):
        check_class_weight([{0: 1}], None, "binary")
    with pytest.raises(ValueError, match="class_weight is a dict but y has 2 output columns"):
        check_class_weight({0: 1}, 2, "multilabel-indicator")
    with pytest.raises(ValueError, match="a list of 1 dict.*y has 2 output"):
        check_class_weight([{0: 1}], 2, "multilabel-indicator")
    check_class_weight({0: 0, 1: np.float32(2.5)}, None, "binary")  # 0 and numpy numbers are weights
    check_class_weight({0: fractions.Fraction(1, 2), 1: 1}, None, "binary")  # any real number (np.isfinite refused it)
    for weight in (-1, -0.0001, np.inf, True, None):
        with pytest.raises(ValueError, match=f"class_weight gives class 1 the weight {weight!r}"):
            check_class_weight({0: 1, 1: weight}, None, "binary")


def test_continuous_targets_standardise_and_map_back():
    kind = fit_continuous_kind([1.0, 3.0, 5.0])
    assert kind.n_outputs == 1 and kind.y_ndim == 1
    targets = kind.encode([1.0, 3.0, 5.0], "y")
    assert targets.shape == (3, 1)
    kind.fit_scale(targets)
    np.testing.assert_allclose(kind.target_mean, [3.0])
    np.testing.assert_allclose(kind.target_scale, [np.sqrt(8 / 3)])
    tensor = kind.tensor(targets, "cpu")
    np.testing.assert_allclose(tensor.numpy().ravel(), [-1.2247449, 0.0, 1.2247449], rtol=1e-6)
    np.testing.assert_allclose(kind.predict(tensor.numpy()), [1.0, 3.0, 5.0], rtol=1e-6)
    np.testing.assert_allclose(kind.loss(torch.tensor([[1.0, 2.0]]), torch.tensor([[0.0, 0.0]])).numpy(), [2.5])
    assert kind.decode(targets).shape == (3,)
    constant = fit_continuous_kind(np.ones((4, 2)))
    constant.fit_scale(np.ones((4, 2)))
    assert constant.target_scale.tolist() == [1.0, 1.0]  # a constant target keeps scale 1


def test_continuous_targets_errors():
    with pytest.raises(ValueError, match=r"y contains 1 NaN and 1 infinite value\(s\)"):
        fit_continuous_kind([1.0, np.nan, np.inf])
    with pytest.raises(ValueError, match=r"y_val has 2 output\(s\); the model was fitted on 1"):
        fit_continuous_kind([1.0, 2.0]).encode(np.ones((2, 2)), "y_val")
    with pytest.raises(ValueError, match="n_outputs_=1"):
        ContinuousTargets(1, 1).check_continued(np.ones((2, 3)), incremental=True)


def test_count_by_column():
    assert count_by_column(np.array([True, False, True])) == "2"
    assert count_by_column(np.array([[True, False], [False, False], [True, True]])) == "3 (column 0: 2, column 1: 1)"


# ----------------------------------------------------------------------------- ensembles: combine_members
@settings(max_examples=40, deadline=None)
@given(
    n_members=st.integers(1, 4),
    n_rows=st.integers(1, 5),
    seed=st.integers(0, 2**16),
    scale=st.sampled_from([0.1, 3.0, 40.0]),
)
def test_combined_members_give_the_mean_probabilities(n_members, n_rows, seed, scale):
    # Soft voting for every classification kind: the probabilities read from the combined output are the
    # mean of the members' probabilities, and the labels those of the highest mean probability.
    rng = np.random.default_rng(seed)
    outputs = (rng.normal(size=(n_members, n_rows, 5)) * scale).astype(np.float32)
    labels = ClassLabels(np.array(["a", "b", "c", "d", "e"]), np.dtype("<U1"))
    expected = np.mean([labels.predict_proba(output) for output in outputs], axis=0)
    combined = labels.combine_members(outputs)
    np.testing.assert_allclose(labels.predict_proba(combined), expected, rtol=1e-9, atol=1e-15)
    np.testing.assert_array_equal(labels.predict(combined), labels.classes[expected.argmax(axis=1)])
    indicators = LabelIndicators(5, np.dtype(int))
    expected = np.mean([indicators.predict_proba(output) for output in outputs], axis=0)
    np.testing.assert_allclose(indicators.predict_proba(indicators.combine_members(outputs)), expected, rtol=1e-9)
    blocks = MulticlassMultioutput([np.array([0, 1]), np.array([0, 1, 2])], np.dtype(int))
    combined = blocks.combine_members(outputs)
    for k, block in enumerate(blocks.predict_proba(combined)):
        expected = np.mean([blocks.predict_proba(output)[k] for output in outputs], axis=0)
        np.testing.assert_allclose(block, expected, rtol=1e-9, atol=1e-15)
    values = ContinuousTargets(5, 2, target_mean=np.arange(5.0), target_scale=np.full(5, 2.0))
    expected = np.mean([values.predict(output) for output in outputs], axis=0)
    np.testing.assert_allclose(values.predict(values.combine_members(outputs)), expected, rtol=1e-12, atol=1e-9)


def test_log_probabilities_stay_finite_where_the_probability_underflows():
    # Logits 800 apart: softmax gives exactly 0 in float64, log_softmax gives -800.
    output = np.array([[0.0, 800.0]])
    labels = fit_classification_kind(np.array([0, 1, 1]))
    assert labels.predict_proba(output)[0, 0] == 0.0
    np.testing.assert_allclose(labels.predict_log_proba(output), [[-800.0, 0.0]])
    indicators = LabelIndicators(2, np.dtype(int))
    np.testing.assert_allclose(indicators.predict_log_proba(np.array([[-800.0, 0.0]])), [[-800.0, np.log(0.5)]])
    blocks = fit_classification_kind(np.array([["a", "x"], ["b", "y"], ["b", "z"]]))
    assert isinstance(blocks, MulticlassMultioutput)
    first, second = blocks.predict_log_proba(np.array([[0.0, 800.0, 0.0, 0.0, np.log(2.0)]]))
    np.testing.assert_allclose(first, [[-800.0, 0.0]])
    np.testing.assert_allclose(second, [[np.log(0.25), np.log(0.25), np.log(0.5)]])
