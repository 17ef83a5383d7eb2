"""Reading model files: :func:`load_model`, the one place that names the estimator classes of a file."""

import os

from ._params import LEGACY_VALUES
from ._persistence.compat import with_legacy_parameters
from ._persistence.model_file import read_model
from .estimators import SparseTabNetClassifier, SparseTabNetRegressor

__all__ = ["load_model"]

_ESTIMATOR_CLASSES = {cls.__name__: cls for cls in (SparseTabNetClassifier, SparseTabNetRegressor)}


def load_model(path):
    """Load an estimator written by ``save_model``, without unpickling anything.

    Parameters
    ----------
    path : str or os.PathLike
        A file written by :meth:`SparseTabNetClassifier.save_model` or
        :meth:`SparseTabNetRegressor.save_model`.

    Returns
    -------
    SparseTabNetClassifier or SparseTabNetRegressor
        The fitted estimator: same parameters, classes, categories, feature names,
        importances, training history and weights, so it predicts exactly as the saved one.
        A model saved on a device that is not available here is loaded on the CPU, with a
        warning.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        If the file is not a sparsetab model file, is truncated or was modified after it was
        written (integrity check), has a newer format version than this sparsetab reads, or
        holds an estimator class this sparsetab does not know.

    See Also
    --------
    SparseTabNetClassifier.save_model : Write a fitted classifier to a model file.
    SparseTabNetRegressor.save_model : Write a fitted regressor to a model file.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsetab import SparseTabNetRegressor, load_model
    >>> X = np.random.default_rng(0).normal(size=(64, 3))
    >>> model = SparseTabNetRegressor(max_epochs=1, random_state=0).fit(X, X[:, 0])
    >>> path = model.save_model(getfixture("tmp_path") / "model.sparsetab")
    >>> bool((load_model(path).predict(X) == model.predict(X)).all())
    True
    """
    contents = read_model(path)
    if contents["estimator"] not in _ESTIMATOR_CLASSES:
        raise ValueError(
            f"{os.fspath(path)!r} holds an unknown estimator {contents['estimator']!r}; this sparsetab reads "
            f"{sorted(_ESTIMATOR_CLASSES)}."
        )
    estimator_class = _ESTIMATOR_CLASSES[contents["estimator"]]
    # A file from an earlier sparsetab lacks the parameters added since; their legacy values keep its behaviour.
    estimator = estimator_class(
        **with_legacy_parameters(contents["params"], estimator_class._parameter_constraints, LEGACY_VALUES)
    )
    for name, value in contents["attributes"].items():
        setattr(estimator, name, value)
    estimator._tabular_encoding = contents["tabular_encoding"]
    estimator.network_ = contents["network"]
    estimator._device = contents["device"]
    return estimator
