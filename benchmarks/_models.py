"""What a ``compare.py`` cell constructs: the estimator of each model and configuration, and its versions.

Nothing here needs the data (except the data-derived categorical columns, which stay out of the key), so that a
cell's cache key is known before anything is fitted.
"""

import contextlib
import io
from importlib.metadata import PackageNotFoundError, version

import numpy as np
import pandas as pd
import sklearn
import torch
from pytorch_tabnet.tab_model import TabNetClassifier, TabNetRegressor
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

import sparsetab
from benchmarks import configs
from benchmarks._cache import json_safe
from benchmarks._datasets import IntegerCodes, categorical_columns
from sparsetab import SparseTabNetClassifier, SparseTabNetRegressor
from sparsetab._params import LEGACY_VALUES, same_value

try:
    import lightgbm
except ImportError:  # optional
    lightgbm = None
try:
    import catboost
except ImportError:  # optional
    catboost = None


SAME_ARCHITECTURE = dict(
    n_d=8, n_a=8, n_steps=3, gamma=1.3, n_independent=2, n_shared=2, lambda_sparse=1e-3, momentum=0.02
)
BATCH = dict(batch_size=1024, virtual_batch_size=128)
LEARNING_RATE = 0.02
PATIENCE = 10
QUICK_EPOCHS = 3
QUICK_BOOSTING_ITERATIONS = 50  # max_iter of the tuned HistGradientBoosting under --quick
BOOSTING = ("HistGradientBoosting", "LightGBM", "CatBoost")


def sparsetab_params(cell, classification):
    """Constructor parameters of sparsetab for ``cell`` (configuration, seed, --quick epoch cap).

    Raises
    ------
    configs.UnknownParameterError
        When the configuration sets a parameter the installed estimator does not accept.
    """
    estimator = SparseTabNetClassifier if classification else SparseTabNetRegressor
    if cell["config"] == "same":
        params = dict(
            SAME_ARCHITECTURE,
            **BATCH,
            learning_rate=LEARNING_RATE,
            entmax_mode="sparsemax",
            cat_emb_dim=1,
            max_epochs=cell["max_epochs"],
            early_stopping=True,
            n_iter_no_change=PATIENCE,
        )
    elif cell["config"] == "tuned":
        params = dict(configs.TUNING_BASE["sparsetab"])
    else:
        params = configs.resolve(cell["config"], estimator().get_params().keys())
    if cell["quick"]:
        params["max_epochs"] = QUICK_EPOCHS
    return estimator, dict(params, random_state=cell["seed"])


def build(cell, task, data=None):
    """The estimator of ``cell``, its fit parameters and the parameters that go into the cache key.

    Parameters
    ----------
    cell : dict
        ``dataset``, ``model``, ``config``, ``seed``, ``quick``, ``max_epochs``, ``threads``.
    task : {"classification", "regression"}
    data : dict, default=None
        The prepared data set (:func:`prepare`); only pytorch-tabnet (``cat_idxs``, ``cat_dims``) and CatBoost
        (``cat_features``) need it.

    Returns
    -------
    estimator : object
        Unfitted.
    fit_params : dict
        Extra keyword arguments of ``fit`` that are part of the protocol.
    key_params : dict
        The estimator's class and ``get_params(deep=False)`` (without ``n_jobs`` / CatBoost's ``thread_count``;
        pytorch-tabnet without the data-derived ``cat_idxs`` / ``cat_dims``, CatBoost without ``cat_features``;
        sparsetab without the parameters at their legacy value), plus ``fit_params``.
    """
    classification = task == "classification"
    model, config, seed = cell["model"], cell["config"], cell["seed"]
    fit_params = {}
    if model == "sparsetab":
        estimator_class, params = sparsetab_params(cell, classification)
        estimator = estimator_class(**params)
    elif model == "pytorch-tabnet":
        common = dict(cat_emb_dim=1, seed=seed, verbose=0, device_name="cpu")
        if data is not None:
            common.update(cat_idxs=data["codes"].cat_idxs, cat_dims=data["codes"].cat_dims)
        fit_params = dict(max_epochs=cell["max_epochs"], patience=PATIENCE, **BATCH)
        if config == "same":
            params = dict(SAME_ARCHITECTURE, optimizer_params=dict(lr=LEARNING_RATE), mask_type="sparsemax", **common)
            # Monitor the validation loss, as sparsetab's scoring="loss" does.
            fit_params["eval_metric"] = ["logloss" if classification else "mse"]
        elif config == "defaults":
            params = common
            fit_params["max_epochs"] = QUICK_EPOCHS if cell["quick"] else 200  # documented default (README)
        else:
            raise ValueError(f"pytorch-tabnet has no configuration {config!r} (same, defaults)")
        estimator = (TabNetClassifier if classification else TabNetRegressor)(**params)
    elif model == "HistGradientBoosting":
        estimator_class = HistGradientBoostingClassifier if classification else HistGradientBoostingRegressor
        params = dict(categorical_features="from_dtype", random_state=seed)
        if config == "tuned":
            params.update(configs.TUNING_BASE["HistGradientBoosting"])
            if cell["quick"]:
                params["max_iter"] = QUICK_BOOSTING_ITERATIONS
        elif config != "defaults":
            raise ValueError(f"HistGradientBoosting has no configuration {config!r} (defaults, tuned)")
        estimator = estimator_class(**params)
    elif model == "LightGBM":
        if lightgbm is None:
            raise ImportError("LightGBM is not installed")
        if config != "defaults":
            raise ValueError(f"LightGBM has no configuration {config!r} (defaults)")
        estimator_class = lightgbm.LGBMClassifier if classification else lightgbm.LGBMRegressor
        estimator = estimator_class(random_state=seed, n_jobs=cell["threads"], verbose=-1)
    elif model == "CatBoost":
        if catboost is None:
            raise ImportError("CatBoost is not installed")
        if config != "defaults":
            raise ValueError(f"CatBoost has no configuration {config!r} (defaults)")
        estimator_class = catboost.CatBoostClassifier if classification else catboost.CatBoostRegressor
        estimator = estimator_class(
            random_seed=seed, verbose=0, thread_count=cell["threads"], allow_writing_files=False
        )
        if data is not None:
            estimator.set_params(cat_features=categorical_columns(data["X_train"]))
    else:
        raise ValueError(f"unknown model {model!r}")
    params = estimator.get_params(deep=False)
    for name in ("n_jobs", "thread_count", "cat_idxs", "cat_dims", "cat_features"):
        params.pop(name, None)
    if model == "sparsetab":
        # A parameter at its legacy value trains as before it existed: leaving it out of the key keeps the
        # cached cells of a configuration valid when a later sparsetab adds parameters.
        params = {
            name: value
            for name, value in params.items()
            if not (name in LEGACY_VALUES and same_value(value, LEGACY_VALUES[name]))
        }
    kind = type(estimator)
    key_params = dict(estimator=f"{kind.__module__}.{kind.__qualname__}", params=params, fit_params=fit_params)
    return estimator, fit_params, json_safe(key_params)


def _version(package):
    """Installed version of ``package``, or "not installed"."""
    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"


def versions_for(model):
    """Versions of the libraries a cell of ``model`` depends on (part of its key)."""
    found = {"scikit-learn": sklearn.__version__, "numpy": np.__version__, "pandas": pd.__version__}
    if model == "sparsetab":
        found.update(sparsetab=sparsetab.__version__, torch=torch.__version__.split("+")[0])
    elif model == "pytorch-tabnet":
        found.update({"pytorch-tabnet": _version("pytorch-tabnet"), "torch": torch.__version__.split("+")[0]})
    elif model == "LightGBM":
        found["lightgbm"] = lightgbm.__version__ if lightgbm is not None else "not installed"
    elif model == "CatBoost":
        found["catboost"] = catboost.__version__ if catboost is not None else "not installed"
    return found


def warm_up():
    """Fit both TabNets once on tiny random data so one-off torch initialisation is charged to no data set."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=3000), "b": rng.choice(["x", "y"], size=3000)})
    y = (X["a"] > 0).to_numpy().astype(int)
    SparseTabNetClassifier(max_epochs=2, random_state=0).fit(X[:2000], y[:2000], X_val=X[2000:], y_val=y[2000:])
    SparseTabNetRegressor(max_epochs=2, random_state=0).fit(
        X[:2000], X["a"][:2000], X_val=X[2000:], y_val=X["a"][2000:]
    )
    codes = IntegerCodes(X)
    matrix = codes.transform(X)
    with contextlib.redirect_stdout(io.StringIO()):
        model = TabNetClassifier(cat_idxs=codes.cat_idxs, cat_dims=codes.cat_dims, verbose=0, device_name="cpu")
        model.fit(matrix[:2000], y[:2000], eval_set=[(matrix[2000:], y[2000:])], max_epochs=2)
        model = TabNetRegressor(cat_idxs=codes.cat_idxs, cat_dims=codes.cat_dims, verbose=0, device_name="cpu")
        target = matrix[:, :1]
        model.fit(matrix[:2000], target[:2000], eval_set=[(matrix[2000:], target[2000:])], max_epochs=2)
