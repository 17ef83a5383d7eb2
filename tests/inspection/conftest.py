"""Fixtures of the sparsetab.inspection tests: the data, small fitted models, the Agg backend.

The models are module-scoped: each test module fits its own once, so a module runs alone (or in
any order) and no test can change a model another module sees.
"""

import matplotlib

# Before pyplot is imported anywhere: the tests draw without a display.
matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from sklearn.compose import ColumnTransformer  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.utils import Bunch  # noqa: E402

from sparsetab import SparseTabNetClassifier, SparseTabNetRegressor  # noqa: E402

_TINY = dict(n_d=4, n_a=4, n_steps=2, batch_size=64, virtual_batch_size=32, max_epochs=4, random_state=0)


@pytest.fixture(scope="module")
def tiny():
    """Parameters of a model small and short enough to fit inside a test."""
    return dict(_TINY)


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def data():
    """160 rows: three numeric columns and one categorical, and a binary target."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame(
        {
            "age": rng.normal(size=160),
            "colour": rng.choice(["red", "green", "blue"], size=160),
            "height": rng.normal(size=160),
            "weight": rng.normal(size=160),
        }
    )
    y = (X["age"] + (X["colour"] == "red") > 0.3).astype(int)
    return X, y


@pytest.fixture(scope="module")
def model(data, tiny):
    X, y = data
    return SparseTabNetClassifier(**tiny, early_stopping=False).fit(X, y)  # one pass, no validation rows


@pytest.fixture(scope="module")
def pipeline_case(tiny):
    """A fitted ColumnTransformer + regressor Pipeline whose first step renames the columns."""
    rng = np.random.default_rng(2)
    X = pd.DataFrame({"a": rng.normal(size=120) * 10, "b": rng.normal(size=120), "c": rng.normal(size=120)})
    y = X["a"] + X["b"]
    pipeline = make_pipeline(
        ColumnTransformer([("scale", StandardScaler(), ["a", "b"])], remainder="passthrough"),
        SparseTabNetRegressor(**tiny),
    ).fit(X, y)
    return Bunch(
        pipeline=pipeline,
        X=X,
        model=pipeline[-1],
        transformed=pipeline[:-1].transform(X),
        names=["scale__a", "scale__b", "remainder__c"],
    )


@pytest.fixture
def tick_texts():
    """The texts of a list of tick labels, for comparing with feature names."""

    def texts(labels):
        return [label.get_text() for label in labels]

    return texts
