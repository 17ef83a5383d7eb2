"""Writes the reference models of tests/test_compatibility.py (run once, from the code before a refactor).

The files pin what a user saved with an earlier sparsetab: a model file (``save_model``) and a pickle of a
fitted classifier and regressor, a pickle of a fitted pretrainer, the rows they were asked about and what
they answered. ``tests/test_compatibility.py`` loads each with today's code and compares.

    python -m tests.data.make_reference_models    # from the repository root
"""

import pickle
from pathlib import Path

import numpy as np
import pandas as pd

from sparsetab import SparseTabNetClassifier, SparseTabNetPretrainer, SparseTabNetRegressor

HERE = Path(__file__).parent
SMALL = dict(n_d=4, n_a=4, n_steps=2, virtual_batch_size=32, batch_size=64, max_epochs=3, random_state=0)


def reference_frame(n_rows=120, seed=0):
    """A small table with numeric, missing and categorical columns (the reference rows)."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "age": rng.normal(40, 10, n_rows),
            "hours": rng.uniform(10, 60, n_rows),
            "colour": pd.Categorical(rng.choice(["red", "green", "blue"], n_rows)),
            "city": rng.choice(["a", "b", "c", "d"], n_rows).astype(object),
        }
    )
    frame.loc[::7, "hours"] = np.nan
    return frame


def main():
    X = reference_frame()
    y_class = np.where(X["age"] + 5 * (X["colour"] == "red") > 42, "high", "low")
    y_value = 0.1 * X["age"].to_numpy() + (X["city"] == "a").to_numpy()
    classifier = SparseTabNetClassifier(entmax_mode="entmax15", **SMALL).fit(X, y_class)
    regressor = SparseTabNetRegressor(entmax_mode="adaptive", **SMALL).fit(X, y_value)
    pretrainer = SparseTabNetPretrainer(**SMALL).fit(X)
    classifier.save_model(HERE / "classifier.sparsetab")
    regressor.save_model(HERE / "regressor.sparsetab")
    for name, model in [("classifier", classifier), ("regressor", regressor), ("pretrainer", pretrainer)]:
        with open(HERE / f"{name}.pkl", "wb") as file:
            pickle.dump(model, file)
    explanation = classifier.explain(X)
    np.savez(
        HERE / "reference_outputs.npz",
        classifier_proba=classifier.predict_proba(X),
        classifier_predict=classifier.predict(X).astype(str),
        classifier_step_masks=explanation.step_masks,
        classifier_importances=explanation.importances,
        regressor_predict=regressor.predict(X),
        pretrainer_transform=pretrainer.transform(X),
    )


if __name__ == "__main__":
    main()
