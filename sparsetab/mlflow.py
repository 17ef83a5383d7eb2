"""MLflow models backed by sparsetab's own model file: no pickle is written or read.

:func:`save_model` and :func:`log_model` store a fitted estimator as an MLflow pyfunc model
whose data is the estimator's model file (:meth:`~sparsetab.SparseTabNetClassifier.save_model`)
and whose loader is this module (``loader_module="sparsetab.mlflow"``), so loading it runs
:func:`sparsetab.load_model`, never ``pickle``. ``mlflow.pyfunc.load_model(uri).predict(X,
params={"method": ...})`` serves ``"predict"`` (the default), ``"predict_proba"`` and
``"explain"``; :func:`load_estimator` gives the estimator itself back. Needs the optional extra
``mlflow`` (``pip install "sparsetab[mlflow]"``, which installs ``mlflow-skinny``).
"""

import importlib
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from ._base import BaseSparseTabNet
from ._version import __version__
from .io import load_model

__all__ = ["METHODS", "PyfuncModel", "load_estimator", "log_model", "save_model"]

#: What a pyfunc model's ``predict`` serves, by ``params={"method": ...}``.
METHODS = ("predict", "predict_proba", "explain")
_FILE_NAME = "model.sparsetab"


def _mlflow():
    try:
        return importlib.import_module("mlflow")
    except ImportError:
        raise ImportError(
            'sparsetab.mlflow needs MLflow: pip install "sparsetab[mlflow]" (mlflow-skinny is enough).'
        ) from None


class PyfuncModel:
    """The object MLflow's pyfunc wrapper calls: a loaded estimator and its three outputs as DataFrames.

    Parameters
    ----------
    estimator : SparseTabNetClassifier or SparseTabNetRegressor
        The fitted estimator, as :func:`sparsetab.load_model` returns it.
    """

    def __init__(self, estimator):
        self.estimator = estimator

    def predict(self, model_input, params=None):
        """Serve ``predict``, ``predict_proba`` or ``explain`` for the rows of ``model_input``.

        Parameters
        ----------
        model_input : pandas.DataFrame of shape (n_samples, n_features)
            Rows with the columns seen at fit.
        params : dict or None, default=None
            ``{"method": name}`` with a name of :data:`METHODS`; None means ``"predict"``.

        Returns
        -------
        pandas.DataFrame
            Indexed as ``model_input`` (a DataFrame; otherwise 0 to n_samples - 1).
            ``"predict"``: a column ``prediction`` (one column per output, ``prediction_k``,
            for several). ``"predict_proba"``: one column per class, named by the class.
            ``"explain"``: the aggregate importance of each input column (rows sum to 1),
            columns named as the features.

        Raises
        ------
        ValueError
            If ``method`` is not one of :data:`METHODS`, or ``"predict_proba"`` is asked of a
            regressor or of a model with several outputs.
        """
        method = (params or {}).get("method", "predict")
        if method not in METHODS:
            raise ValueError(f"params['method'] must be one of {list(METHODS)}, got {method!r}.")
        # The rows keep the input's index, as MLflow's own flavors do: `df["pred"] = model.predict(df)["prediction"]`
        # then aligns row by row instead of giving NaN wherever the index is not 0..n-1.
        index = model_input.index if isinstance(model_input, pd.DataFrame) else None
        if method == "explain":
            explanation = self.estimator.explain(model_input)
            columns = [str(name) for name in explanation.feature_names]
            return pd.DataFrame(explanation.importances, columns=columns, index=index)
        if method == "predict_proba":
            if not hasattr(self.estimator, "predict_proba"):
                raise ValueError("params['method']='predict_proba' needs a classifier; this model is a regressor.")
            probabilities = self.estimator.predict_proba(model_input)
            if isinstance(probabilities, list) or np.ndim(self.estimator.classes_) != 1:
                raise ValueError("params['method']='predict_proba' is served for one output only.")
            return pd.DataFrame(probabilities, columns=[str(label) for label in self.estimator.classes_], index=index)
        prediction = np.asarray(self.estimator.predict(model_input))
        if prediction.ndim == 1:
            return pd.DataFrame({"prediction": prediction}, index=index)
        return pd.DataFrame(prediction, columns=[f"prediction_{k}" for k in range(prediction.shape[1])], index=index)


def _load_pyfunc(data_path):
    """MLflow's loader hook (``loader_module``): the model file MLflow copied into the model folder."""
    path = Path(data_path)
    return PyfuncModel(load_model(path / _FILE_NAME if path.is_dir() else path))


def _model_arguments(estimator, folder):
    """The keyword arguments of ``mlflow.pyfunc.save_model`` / ``log_model`` for ``estimator``."""
    from mlflow.models.signature import ModelSignature
    from mlflow.types.schema import ParamSchema, ParamSpec

    if not isinstance(estimator, BaseSparseTabNet):
        # A Pipeline failed with "'Pipeline' object has no attribute 'save_model'".
        raise TypeError(
            f"estimator must be a fitted SparseTabNetClassifier or SparseTabNetRegressor, got "
            f"{type(estimator).__name__}. A Pipeline or another scikit-learn object cannot be stored as a model "
            "file: log it with mlflow.sklearn.log_model (a pickle), or store it with joblib.dump; read either "
            "only from a source you trust."
        )
    file = Path(folder) / _FILE_NAME
    estimator.save_model(file)
    return dict(
        loader_module=__name__,
        data_path=str(file),
        # The inputs stay unchecked by MLflow (the estimator checks them itself and names what is wrong).
        signature=ModelSignature(inputs=None, params=ParamSchema([ParamSpec("method", "string", "predict")])),
        pip_requirements=[f"sparsetab=={__version__}", "torch>=2.1", "scikit-learn>=1.6", "pandas>=2.0"],
    )


def save_model(estimator, path):
    """Save a fitted estimator as an MLflow pyfunc model in the folder ``path``.

    Parameters
    ----------
    estimator : SparseTabNetClassifier or SparseTabNetRegressor
        Fitted.
    path : str or os.PathLike
        A folder that does not exist yet (MLflow's rule).

    Returns
    -------
    pathlib.Path
        ``path``; load it with ``mlflow.pyfunc.load_model(path)`` or :func:`load_estimator`.

    Raises
    ------
    ImportError
        If MLflow is not installed (the message names the extra).
    TypeError
        If ``estimator`` is not a SparseTabNet classifier or regressor (a Pipeline, for
        example: log it with ``mlflow.sklearn.log_model``).
    sklearn.exceptions.NotFittedError
        If the estimator is not fitted.
    """
    mlflow = _mlflow()
    with tempfile.TemporaryDirectory() as folder:
        mlflow.pyfunc.save_model(str(path), **_model_arguments(estimator, folder))
    return Path(path)


def log_model(estimator, name="model"):
    """Log a fitted estimator as an MLflow pyfunc model of the active run (one is started if none is).

    Parameters
    ----------
    estimator : SparseTabNetClassifier or SparseTabNetRegressor
        Fitted.
    name : str, default="model"
        The model's name in the run.

    Returns
    -------
    mlflow.models.model.ModelInfo
        Its ``model_uri`` loads it with ``mlflow.pyfunc.load_model`` or :func:`load_estimator`.

    Raises
    ------
    ImportError
        If MLflow is not installed (the message names the extra).
    TypeError
        If ``estimator`` is not a SparseTabNet classifier or regressor (a Pipeline, for
        example: log it with ``mlflow.sklearn.log_model``).
    sklearn.exceptions.NotFittedError
        If the estimator is not fitted.
    """
    mlflow = _mlflow()
    with tempfile.TemporaryDirectory() as folder:
        return mlflow.pyfunc.log_model(name=name, **_model_arguments(estimator, folder))


def load_estimator(model_uri):
    """The estimator of a pyfunc model saved or logged by this module.

    Parameters
    ----------
    model_uri : str or os.PathLike
        A local folder of :func:`save_model`, or any MLflow model URI (``runs:/<id>/model``,
        ``models:/<id>``).

    Returns
    -------
    SparseTabNetClassifier or SparseTabNetRegressor
        Loaded from the model file with :func:`sparsetab.load_model`.

    Raises
    ------
    ImportError
        If MLflow is not installed (the message names the extra).
    ValueError
        If the model was not saved by this module (its loader is another).
    """
    mlflow = _mlflow()
    local = Path(mlflow.artifacts.download_artifacts(str(model_uri)))
    flavor = mlflow.models.Model.load(local).flavors.get("python_function", {})
    if flavor.get("loader_module") != __name__:
        raise ValueError(
            f"{model_uri!r} is not a sparsetab model: its pyfunc loader is {flavor.get('loader_module')!r}, "
            f"not {__name__!r}."
        )
    return _load_pyfunc(local / flavor["data"]).estimator
