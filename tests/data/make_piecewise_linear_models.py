"""Writes the piecewise-linear reference models of tests/test_compatibility.py, from the code before
``piecewise_linear_with_value`` (run once, with that code first on ``PYTHONPATH``).

A regressor saved as a model file and as a pickle, and a pickled pretrainer, each with
``numerical_embedding="piecewise_linear"`` and the bins-only layout, plus what they answered on
the reference rows of ``make_reference_models.py``.

    PYTHONPATH=<checkout before the change> python tests/data/make_piecewise_linear_models.py
"""

import pickle
from pathlib import Path

import numpy as np
from make_reference_models import SMALL, reference_frame

from sparsetab import SparseTabNetPretrainer, SparseTabNetRegressor

HERE = Path(__file__).parent
PIECEWISE_LINEAR = dict(SMALL, numerical_embedding="piecewise_linear", n_bins=8)


def main():
    X = reference_frame()
    y_value = 0.1 * X["age"].to_numpy() + (X["city"] == "a").to_numpy()
    regressor = SparseTabNetRegressor(**PIECEWISE_LINEAR).fit(X, y_value)
    pretrainer = SparseTabNetPretrainer(**PIECEWISE_LINEAR).fit(X)
    regressor.save_model(HERE / "piecewise_linear_regressor.sparsetab")
    for name, model in [("regressor", regressor), ("pretrainer", pretrainer)]:
        with open(HERE / f"piecewise_linear_{name}.pkl", "wb") as file:
            pickle.dump(model, file)
    np.savez(
        HERE / "piecewise_linear_outputs.npz",
        regressor_predict=regressor.predict(X),
        regressor_importances=regressor.explain(X).importances,
        pretrainer_transform=pretrainer.transform(X),
    )


if __name__ == "__main__":
    main()
