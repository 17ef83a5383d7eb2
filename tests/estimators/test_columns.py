"""cat_emb_dim and grouped_features through the estimators (sparsetab._tabular.columns): widths, groups, errors."""

import numpy as np
import pytest
import torch
from sklearn.datasets import make_classification

from sparsetab import SparseTabNetClassifier

# Short fits stop at max_epochs on purpose; tests that check the warning use pytest.warns.
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def test_cat_emb_dim_per_column(fast_params, make_people_frame):
    X, y = make_people_frame(120)
    model = SparseTabNetClassifier(early_stopping=False, max_epochs=1, cat_emb_dim={"city": 3}, **fast_params).fit(X, y)
    widths = [embedding.embedding_dim for embedding in model.network_.embedding.embeddings]
    assert widths == [3, 1]  # city (3 categories + reserved row), member (bool) keeps the default
    assert [embedding.num_embeddings for embedding in model.network_.embedding.embeddings] == [4, 3]
    assert list(model.categories_) == ["city", "member"]
    assert model.categories_["city"].tolist() == ["Lima", "Oslo", "Paris"]
    assert model.categories_["member"].tolist() == [False, True]
    explanation = model.explain(X.iloc[:10])
    assert explanation.step_masks.shape == (10, 2, 4)  # still one value per input column
    np.testing.assert_allclose(explanation.step_masks.sum(axis=2), 1.0, atol=1e-5)
    by_index = SparseTabNetClassifier(early_stopping=False, max_epochs=1, cat_emb_dim={0: 3}, **fast_params).fit(X, y)
    assert by_index.predict_proba(X.iloc[:5]) == pytest.approx(model.predict_proba(X.iloc[:5]))


@pytest.mark.parametrize(
    "params, message",
    [
        ({"cat_emb_dim": {"town": 2}}, "cat_emb_dim refers to column 'town', which is not a column name"),
        ({"cat_emb_dim": {"age": 2}}, "column 'age', which is numeric; it accepts categorical columns only"),
        ({"cat_emb_dim": {"city": 0}}, "cat_emb_dim\\['city'\\] must be an int >= 1, got 0"),
        ({"cat_emb_dim": {7: 2}}, "column index in \\[0, 4\\)"),
        ({"cat_emb_dim": 0}, "'cat_emb_dim' parameter"),
        ({"grouped_features": [["age", "noise"], ["noise"]]}, "column 'noise' in more than one group"),
        ({"grouped_features": [[]]}, "grouped_features\\[0\\] must be a non-empty list"),
        ({"grouped_features": ["age"]}, "grouped_features\\[0\\] must be a non-empty list"),
        ({"grouped_features": [["age", "height"]]}, "grouped_features refers to column 'height'"),
        ({"grouped_features": "age"}, "'grouped_features' parameter"),
    ],
)
def test_embedding_and_group_errors_name_the_argument(params, message, fast_params, make_people_frame):
    X, y = make_people_frame(50)
    with pytest.raises(ValueError, match=message):
        SparseTabNetClassifier(max_epochs=1, **params, **fast_params).fit(X, y)


def test_grouped_features_share_one_attention_weight(fast_params, make_people_frame):
    X, y = make_people_frame(200)
    model = SparseTabNetClassifier(
        early_stopping=False,
        max_epochs=3,
        grouped_features=[["noise", "age"]],
        cat_emb_dim=2,
        entmax_mode="entmax15",
        **fast_params,
    ).fit(X, y)
    assert model.network_.embedding.attention_groups == [[0], [1, 2], [3]]
    explanation = model.explain(X.iloc[:30])
    masks = explanation.step_masks
    np.testing.assert_array_equal(masks[..., 1], masks[..., 2])
    np.testing.assert_allclose(masks.sum(axis=2), 1.0, atol=1e-5)
    # each member holds half of the group's weight in the network's own (group-level) masks
    encoded = model._encode_X(X.iloc[:30])
    with torch.inference_mode():
        group_masks = model.network_.eval().encode(encoded)[1].permute(1, 0, 2).numpy()
    np.testing.assert_allclose(masks[..., 1] + masks[..., 2], group_masks[..., 1], rtol=1e-6)
    np.testing.assert_allclose(masks[..., [0, 3]], group_masks[..., [0, 2]], rtol=1e-6)
    assert model.feature_importances_[1] == pytest.approx(model.feature_importances_[2])
    numpy_groups = SparseTabNetClassifier(
        early_stopping=False, max_epochs=1, grouped_features=[[2, -3]], **fast_params
    ).fit(X, y)
    assert numpy_groups.network_.embedding.attention_groups == [[0], [1, 2], [3]]


def test_grouped_feature_messages_for_repeats_and_numpy_names(fast_params):
    X, y = make_classification(60, 3, n_informative=2, n_redundant=0, random_state=0)
    with pytest.raises(ValueError, match="grouped_features\\[0\\] lists column '0' more than once"):
        SparseTabNetClassifier(max_epochs=1, grouped_features=[[0, 0]], **fast_params).fit(X, y)
    with pytest.raises(ValueError, match="X has no string column names .* by index in \\[0, 3\\)"):
        SparseTabNetClassifier(max_epochs=1, grouped_features=[["x0", "x1"]], **fast_params).fit(X, y)
