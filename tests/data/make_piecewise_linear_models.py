"""Writes the piecewise-linear reference models of tests/test_compatibility.py, from the code before
``piecewise_linear_with_value`` (run once, with that code first on ``PYTHONPATH``).

A regressor saved as a model file and as a pickle, and a pickled pretrainer, each with
``numerical_embedding="piecewise_linear"`` and the bins-only layout, plus what they answered on
the reference rows of ``make_reference_models.py``. From the repository root (``-P``, Python 3.11+, keeps the
working directory's sparsetab from shadowing the earlier one; ``.`` finds the ``tests`` package)::

    PYTHONPATH=<checkout before the change>:. python -P -m tests.data.make_piecewise_linear_models
"""

import pickle
from pathlib import Path

import numpy as np

from sparsetab import SparseTabNetPretrainer, SparseTabNetRegressor
from tests.data.make_reference_models import SMALL, reference_frame

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
