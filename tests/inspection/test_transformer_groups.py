import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.decomposition import PCA
from sklearn.exceptions import NotFittedError
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
    KBinsDiscretizer,
    OneHotEncoder,
    PolynomialFeatures,
    StandardScaler,
)

from sparsetab import SparseTabNetRegressor
from sparsetab.inspection import feature_groups_from_transformer

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


@pytest.fixture(scope="module")
def frame():
    """Eight rows: colour has two rare categories (g, x), size three, w a missing value."""
    return pd.DataFrame(
        {
            "age": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
            "colour": ["r", "r", "b", "b", "r", "b", "g", "x"],
            "size": ["S", "M", "L", "S", "M", "L", "S", "M"],
            "w": [0.0, 1.0, 0.0, 1.0, np.nan, 2.0, 1.0, 0.0],
        }
    )


def test_drop_first_infrequent_and_passthrough_remainder(frame):
    transformer = ColumnTransformer(
        [
            ("first", OneHotEncoder(drop="first"), ["size"]),
            ("rare", OneHotEncoder(handle_unknown="infrequent_if_exist", min_frequency=2), ["colour"]),
        ],
        remainder="passthrough",
    ).fit(frame)
    assert list(transformer.get_feature_names_out()) == [
        "first__size_M",
        "first__size_S",
        "rare__colour_b",
        "rare__colour_r",
        "rare__colour_infrequent_sklearn",
        "remainder__age",
        "remainder__w",
    ]
    assert feature_groups_from_transformer(transformer) == {
        "age": ["remainder__age"],
        "colour": ["rare__colour_b", "rare__colour_r", "rare__colour_infrequent_sklearn"],
        "size": ["first__size_M", "first__size_S"],
        "w": ["remainder__w"],
    }
    assert feature_groups_from_transformer(transformer, positions=True) == {
        "age": [5],
        "colour": [2, 3, 4],
        "size": [0, 1],
        "w": [6],
    }


def test_short_names_dropped_remainder_and_infrequent_dropped_first(frame):
    transformer = ColumnTransformer(
        [
            ("onehot", OneHotEncoder(drop="first", min_frequency=2, handle_unknown="infrequent_if_exist"), ["colour"]),
            ("scale", StandardScaler(), ["age"]),
        ],
        verbose_feature_names_out=False,
    ).fit(frame)
    # categories b, g, r, x; g and x are infrequent; the first (b) is dropped
    assert list(transformer.get_feature_names_out()) == ["colour_r", "colour_infrequent_sklearn", "age"]
    assert feature_groups_from_transformer(transformer) == {
        "age": ["age"],
        "colour": ["colour_r", "colour_infrequent_sklearn"],
    }


def test_one_source_column_in_two_transformers_and_a_label_slice(frame):
    transformer = ColumnTransformer(
        [
            ("scale", StandardScaler(), slice("age", "age")),
            ("onehot", OneHotEncoder(), [1]),
            ("bins", KBinsDiscretizer(n_bins=2, encode="onehot-dense", quantile_method="averaged_inverted_cdf"), [0]),
        ]
    ).fit(frame)
    assert feature_groups_from_transformer(transformer) == {
        "age": ["scale__age", "bins__age_0.0", "bins__age_1.0"],
        "colour": ["onehot__colour_b", "onehot__colour_g", "onehot__colour_r", "onehot__colour_x"],
    }


def test_pipelines_inside_and_around(frame):
    encode = ColumnTransformer(
        [
            ("cat", make_pipeline(SimpleImputer(strategy="most_frequent"), OneHotEncoder()), ["size"]),
            ("num", make_pipeline(SimpleImputer(add_indicator=True), StandardScaler()), ["w", "age"]),
        ]
    )
    pipeline = make_pipeline(encode, FunctionTransformer(feature_names_out="one-to-one")).fit(frame)
    expected = {
        "age": ["num__age"],
        "size": ["cat__size_L", "cat__size_M", "cat__size_S"],
        "w": ["num__w", "num__missingindicator_w"],
    }
    assert feature_groups_from_transformer(pipeline) == expected
    model = make_pipeline(encode, SparseTabNetRegressor(n_d=4, n_a=4, n_steps=2, max_epochs=1, random_state=0))
    model.fit(frame, frame["age"])
    assert feature_groups_from_transformer(model) == expected  # the steps in front of the model


def test_bare_encoders_and_numpy_input(frame):
    encoder = OneHotEncoder(max_categories=2).fit(frame[["colour", "size"]].to_numpy())
    # max_categories=2: one frequent category and the infrequent column per input column
    assert feature_groups_from_transformer(encoder) == {
        "x0": ["x0_r", "x0_infrequent_sklearn"],
        "x1": ["x1_S", "x1_infrequent_sklearn"],
    }
    assert feature_groups_from_transformer(encoder, positions=True) == {"x0": [0, 1], "x1": [2, 3]}
    pipeline = make_pipeline(StandardScaler(), OneHotEncoder()).fit(frame[["age"]].iloc[:3])
    assert feature_groups_from_transformer(pipeline) == {
        "age": ["age_-1.224744871391589", "age_0.0", "age_1.224744871391589"]
    }


@pytest.mark.parametrize(
    "transformer, name",
    [
        (ColumnTransformer([("pca", PCA(n_components=1), ["age", "w"])]), "PCA"),
        (make_pipeline(SimpleImputer(), PolynomialFeatures()), "PolynomialFeatures"),
        (ColumnTransformer([("f", FunctionTransformer(), ["age"])]), "FunctionTransformer"),
    ],
)
def test_transformers_that_mix_columns_are_named(frame, transformer, name):
    transformer.fit(frame[["age", "w"]].fillna(0.0))
    with pytest.raises(ValueError, match=f"^Cannot map the output columns of {name} "):
        feature_groups_from_transformer(transformer)


def test_rejects_unfitted_and_non_transformers(frame):
    with pytest.raises(NotFittedError):
        feature_groups_from_transformer(OneHotEncoder())
    with pytest.raises(
        TypeError, match="transformer must be a fitted scikit-learn transformer .*got LogisticRegression"
    ):
        feature_groups_from_transformer(LogisticRegression())
    with pytest.raises(TypeError, match="got str"):
        feature_groups_from_transformer("passthrough")
    with pytest.raises(TypeError, match="Pipeline of a sparsetab estimator alone"):
        feature_groups_from_transformer(make_pipeline(SparseTabNetRegressor()))
