"""The regressor's losses (sparsetab._training.regression_losses, and the loss in ContinuousTargets and the regressor).

Hand-computed values and float64 gradient checks of each loss; the domain checks of poisson and gamma
in every fit path; learning contracts (coverage of a quantile model, robustness of the absolute error,
Poisson means) on small tables; and the loss travelling with the model: ensembles, model files,
pickles, exported programs, continued fits, the pretrainer, streaming and distributed fits.
"""

import pickle
import socket
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
import torch.distributed as dist
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import mean_absolute_error, mean_gamma_deviance, mean_pinball_loss, mean_poisson_deviance

from sparsetab import SparseTabNetPretrainer, SparseTabNetRegressor, load_model
from sparsetab._targets import ContinuousTargets, fit_continuous_kind
from sparsetab._training.regression_losses import (
    REGRESSION_LOSSES,
    RegressionLoss,
    absolute_error,
    half_gamma_deviance,
    half_poisson_deviance,
    huber,
    pinball,
    squared_error,
)
from sparsetab.distributed import fit as distributed_fit
from sparsetab.streaming import fit as streamed_fit
from tests.data import make_reference_models as _maker

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

DATA = Path(__file__).parents[1] / "data"
# One step, one GLU layer per block, scalar numeric inputs: a fit of 1,500 rows and 20 epochs in about 0.5 s.
# Every row trains and every epoch counts (no validation split, whatever the rule of early_stopping="auto").
TINY = dict(
    early_stopping=False,
    n_d=8,
    n_a=8,
    n_steps=1,
    n_independent=1,
    n_shared=1,
    batch_size=128,
    virtual_batch_size=64,
    numerical_embedding=None,
    n_jobs=1,
)


def _t(values):
    return torch.tensor(values, dtype=torch.float64)


# ----------------------------------------------------------------------------- the losses, by hand
def test_squared_and_absolute_error_by_hand():
    raw, target = _t([[1.0, -2.0], [0.5, 0.5]]), _t([[0.0, 0.0], [1.0, 0.0]])
    assert squared_error(raw, target).tolist() == [2.5, 0.25]  # (1 + 4) / 2, (0.25 + 0.25) / 2
    assert absolute_error(raw, target).tolist() == [1.5, 0.5]  # (1 + 2) / 2, (0.5 + 0.5) / 2
    # Twice the pinball loss at the median (Koenker and Bassett 1978).
    torch.testing.assert_close(absolute_error(raw, target), 2 * pinball(raw, target, 0.5))


def test_huber_by_hand_at_two_deltas():
    # Residuals r = target - raw of 0.5, -3 and 1.5.
    raw, target = _t([[0.0], [3.0], [0.0]]), _t([[0.5], [0.0], [1.5]])
    # delta 1: r^2 / 2 inside, delta * (|r| - delta / 2) outside.
    torch.testing.assert_close(huber(raw, target, 1.0), _t([0.125, 2.5, 1.0]))
    # delta 2: 1.5 is now inside (1.125), 3 outside: 2 * (3 - 1) = 4.
    torch.testing.assert_close(huber(raw, target, 2.0), _t([0.125, 4.0, 1.125]))
    # A huge delta is half the squared error; huber_delta reaches the loss through RegressionLoss.
    torch.testing.assert_close(huber(raw, target, 100.0), squared_error(raw, target) / 2)
    torch.testing.assert_close(RegressionLoss("huber", huber_delta=2.0)(raw, target), _t([0.125, 4.0, 1.125]))


def test_pinball_by_hand_at_two_levels():
    # Residuals r = target - raw of 2 and -1: q * r above the prediction, (q - 1) * r below.
    raw, target = _t([[0.0], [1.0]]), _t([[2.0], [0.0]])
    torch.testing.assert_close(pinball(raw, target, 0.9), _t([1.8, 0.1]))
    torch.testing.assert_close(pinball(raw, target, 0.1), _t([0.2, 0.9]))
    torch.testing.assert_close(RegressionLoss("quantile", quantile=0.1)(raw, target), _t([0.2, 0.9]))


def test_deviances_by_hand():
    # Poisson: y log(y / mu) - y + mu; 0 at mu = y, mu for y = 0, 3 log 3 - 3 + 1 for y = 3, mu = 1.
    raw = _t([[np.log(2.0)], [0.0], [0.0]])
    torch.testing.assert_close(half_poisson_deviance(raw, _t([[2.0], [0.0], [3.0]])), _t([0.0, 1.0, 3 * np.log(3) - 2]))
    # Gamma: log(mu / y) + y / mu - 1; 0 at mu = y, log 2 - 1 / 2 for y = 1, mu = 2, 3 - log 4 for y = 4, mu = 1.
    raw = _t([[np.log(2.0)], [np.log(2.0)], [0.0]])
    torch.testing.assert_close(
        half_gamma_deviance(raw, _t([[2.0], [1.0], [4.0]])), _t([0.0, np.log(2) - 0.5, 3 - np.log(4)])
    )


def test_losses_agree_with_scikit_learns_metrics():
    # Half of scikit-learn's mean deviances, its mean pinball loss and its mean absolute error, on random values.
    rng = np.random.default_rng(0)
    y = rng.gamma(2.0, 1.5, size=200)
    y[::7] = 0.0  # Poisson counts may be 0
    mu = rng.gamma(2.0, 1.5, size=200)
    raw, target = _t(np.log(mu)[:, None]), _t(y[:, None])
    assert float(half_poisson_deviance(raw, target).mean()) == pytest.approx(mean_poisson_deviance(y, mu) / 2)
    positive = y > 0
    gamma = half_gamma_deviance(raw[positive], target[positive]).mean()
    assert float(gamma) == pytest.approx(mean_gamma_deviance(y[positive], mu[positive]) / 2)
    prediction = _t(mu[:, None])
    for q in (0.1, 0.5, 0.9):
        assert float(pinball(prediction, target, q).mean()) == pytest.approx(mean_pinball_loss(y, mu, alpha=q))
    assert float(absolute_error(prediction, target).mean()) == pytest.approx(mean_absolute_error(y, mu))


@pytest.mark.parametrize("loss", REGRESSION_LOSSES)
def test_gradients_of_each_loss_pass_gradcheck(loss):
    rng = np.random.default_rng(1)
    raw = rng.normal(size=(6, 2))
    if loss in ("poisson", "gamma"):
        target = rng.gamma(2.0, 1.0, size=(6, 2))
        if loss == "poisson":
            target[0, 0] = 0.0
    else:
        # Residuals away from the kinks of |r|, of the pinball loss and of Huber's |r| = delta.
        target = raw + rng.choice([-1, 1], size=raw.shape) * rng.uniform(0.1, 3.0, size=raw.shape)
        target[np.abs(np.abs(target - raw) - 0.7) < 0.05] += 0.2
    function = RegressionLoss(loss, quantile=0.8, huber_delta=0.7)
    raw = torch.tensor(raw, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x: function(x, torch.from_numpy(target)), (raw,))


def test_loss_settings_and_link():
    assert RegressionLoss().parameters() == {"loss": "squared_error"}
    assert RegressionLoss("quantile", quantile=0.9, huber_delta=3.0).parameters() == {
        "loss": "quantile",
        "quantile": 0.9,
    }
    assert RegressionLoss("huber", quantile=0.9, huber_delta=3.0).parameters() == {"loss": "huber", "huber_delta": 3.0}
    assert repr(RegressionLoss("quantile", quantile=0.9)) == "loss='quantile', quantile=0.9"
    assert [RegressionLoss(name).log_link for name in REGRESSION_LOSSES] == [False, False, False, True, True, False]
    with pytest.raises(ValueError, match="loss must be one of"):
        RegressionLoss("pinball")


# ----------------------------------------------------------------------------- the target kind
def test_log_link_kind_scales_by_the_mean_and_maps_back_with_exp():
    kind = fit_continuous_kind([1.0, 2.0, 6.0], regression_loss=RegressionLoss("poisson"))
    targets = kind.encode([1.0, 2.0, 6.0], "y")
    kind.fit_scale(targets)
    assert kind.target_mean.tolist() == [3.0] and kind.target_scale.tolist() == [3.0]
    np.testing.assert_allclose(kind.tensor(targets, "cpu").numpy().ravel(), [1 / 3, 2 / 3, 2.0], rtol=1e-7)
    np.testing.assert_allclose(kind.predict(np.log(np.array([[1 / 3], [1.0]], dtype=np.float32))), [1.0, 3.0])
    assert kind.attributes()["_loss_parameters"] == {"loss": "poisson"}
    assert kind.serving_output()["transform"] == "exp"
    # The identity-link kinds keep the standardisation of the squared error.
    quantile = fit_continuous_kind([1.0, 2.0, 6.0], regression_loss=RegressionLoss("quantile", quantile=0.3))
    quantile.fit_scale(targets)
    assert quantile.target_mean.tolist() == [3.0] and quantile.target_scale[0] == pytest.approx(np.std([1, 2, 6]))
    assert quantile.serving_output()["transform"] == "affine"


@pytest.mark.parametrize("loss", ["poisson", "gamma", "quantile"])
def test_combined_members_predict_the_mean_of_the_members_predictions(loss):
    rng = np.random.default_rng(0)
    outputs = rng.normal(size=(3, 5, 2)).astype(np.float32)
    kind = ContinuousTargets(2, 2, np.array([2.0, 5.0]), np.array([2.0, 0.5]), RegressionLoss(loss))
    expected = np.mean([kind.predict(output) for output in outputs], axis=0)
    np.testing.assert_allclose(kind.predict(kind.combine_members(outputs)), expected, rtol=1e-12)


def test_the_loss_function_survives_pickling_for_other_processes():
    # distributed.fit sends the kind's bound loss to the other ranks.
    kind = ContinuousTargets(1, 1, np.array([1.0]), np.array([1.0]), RegressionLoss("quantile", quantile=0.2))
    raw, target = torch.zeros(3, 1), torch.tensor([[1.0], [-1.0], [2.0]])
    torch.testing.assert_close(pickle.loads(pickle.dumps(kind.loss))(raw, target), kind.loss(raw, target))


# ----------------------------------------------------------------------------- domain checks and parameters
def _table(n_rows=120, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n_rows, 3))
    return X, rng.poisson(np.exp(0.5 + X[:, 0])).astype(float)


def test_poisson_and_gamma_refuse_targets_outside_their_domain_at_fit():
    X, y = _table()
    negative = y.copy()
    negative[[3, 8]] = [-1.0, -2.5]
    with pytest.raises(ValueError, match=r"loss='poisson' needs y >= 0 .* 2 negative value\(s\), the smallest -2\.5"):
        SparseTabNetRegressor(loss="poisson", max_epochs=1).fit(X, negative)
    all_zero = r"loss='poisson' needs y >= 0 with sum\(y\) > 0 over the rows of positive sample_weight, but y is 0 on"
    with pytest.raises(ValueError, match=all_zero):
        SparseTabNetRegressor(loss="poisson", max_epochs=1).fit(X, np.zeros(len(X)))
    # Positive counts only on rows of weight 0 (which are left out): the message names sample_weight.
    with pytest.raises(ValueError, match=all_zero + r" every such row.*rows of weight 0 are left out"):
        SparseTabNetRegressor(loss="poisson", max_epochs=1).fit(X, y, sample_weight=(y == 0).astype(float))
    two_columns = np.column_stack([y, np.zeros(len(y))])
    with pytest.raises(ValueError, match=r"sum\(y\) > 0.* in column\(s\) \[1\]"):
        SparseTabNetRegressor(loss="poisson", max_epochs=1).fit(X, two_columns)
    zero = y + 1.0
    zero[5] = 0.0
    with pytest.raises(
        ValueError, match=r"loss='gamma' needs y > 0 .* 1 value\(s\) <= 0, the smallest 0\.0.*'poisson'"
    ):
        SparseTabNetRegressor(loss="gamma", max_epochs=1).fit(X, zero)
    # The other losses take any finite target.
    SparseTabNetRegressor(loss="quantile", max_epochs=1, **TINY).fit(X, negative)


def test_domain_checks_in_y_val_partial_fit_and_warm_start():
    X, y = _table()
    bad = y.copy()
    bad[0] = -3.0
    with pytest.raises(ValueError, match=r"loss='poisson' needs y_val >= 0 .* the smallest -3\.0"):
        SparseTabNetRegressor(loss="poisson", max_epochs=1, **TINY).fit(X, y, X_val=X, y_val=bad)
    # A validation set of zeros is a valid evaluation: only the training rows need a positive sum.
    SparseTabNetRegressor(loss="poisson", max_epochs=1, **TINY).fit(X, y, X_val=X[:10], y_val=np.zeros(10))
    with pytest.raises(ValueError, match=r"loss='poisson' needs y >= 0"):
        SparseTabNetRegressor(loss="poisson", **TINY).partial_fit(X, bad)
    with pytest.raises(ValueError, match=r"sum\(y\) > 0"):
        SparseTabNetRegressor(loss="poisson", **TINY).partial_fit(X, np.zeros(len(X)))
    model = SparseTabNetRegressor(loss="poisson", **TINY).partial_fit(X, y)
    with pytest.raises(ValueError, match=r"loss='poisson' needs y >= 0"):
        model.partial_fit(X, bad)
    model.partial_fit(X, np.zeros(len(X)))  # a later mini-batch of zeros is a batch of counts
    model = SparseTabNetRegressor(loss="gamma", max_epochs=1, warm_start=True, **TINY).fit(X, y + 1)
    with pytest.raises(ValueError, match=r"loss='gamma' needs y > 0 .* the smallest 0\.0"):
        model.fit(X, y)
    assert model.n_iter_ == 1


@pytest.mark.parametrize(
    "params, message",
    [
        ({"quantile": 0.0}, r"The 'quantile' parameter of SparseTabNetRegressor must be a float in the range \(0.0, 1"),
        ({"quantile": 1.0}, r"'quantile' parameter .* range \(0.0, 1.0\)\. Got 1.0 instead"),
        ({"quantile": "high"}, r"'quantile' parameter .* Got 'high' instead"),
        ({"huber_delta": 0.0}, r"The 'huber_delta' parameter of SparseTabNetRegressor must be a float in the range"),
        ({"huber_delta": -1}, r"'huber_delta' parameter .* range \(0.0, inf\)\. Got -1 instead"),
        ({"loss": "pinball"}, r"The 'loss' parameter of SparseTabNetRegressor must be a str among .*'quantile'"),
    ],
)  # fmt: skip
def test_invalid_loss_parameters_are_refused_at_fit(params, message):
    X, y = _table(40)
    with pytest.raises(ValueError, match=message):
        SparseTabNetRegressor(max_epochs=1, **params).fit(X, y)


def test_a_continued_fit_refuses_a_changed_loss_but_not_an_unread_setting():
    X, y = _table()
    params = dict(TINY, learning_rate_schedule="constant", max_epochs=1, warm_start=True)
    model = SparseTabNetRegressor(loss="quantile", quantile=0.9, **params).fit(X, y)
    before = model.predict(X)
    model.set_params(quantile=0.5)
    with pytest.raises(ValueError, match=r"fit with warm_start=True continues the fitted network, which was trained "
                       r"with loss='quantile', quantile=0.9; it is now loss='quantile', quantile=0.5"):  # fmt: skip
        model.fit(X, y)
    model.set_params(quantile=0.9, loss="poisson")
    with pytest.raises(ValueError, match=r"partial_fit continues the fitted network.*now loss='poisson'"):
        model.partial_fit(X, y)
    # Predictions keep the fitted loss (identity link here) whatever loss is now, as scikit-learn's fitted _loss.
    np.testing.assert_array_equal(model.predict(X), before)
    model.set_params(loss="quantile", huber_delta=5.0)  # huber_delta is not read by the quantile loss
    model.fit(X, y)
    model.partial_fit(X, y)
    assert model.n_iter_ == 3


# ----------------------------------------------------------------------------- learning contracts
def _noisy_line(n_rows, seed):
    # y = x0 + N(0, 1): the 0.9-quantile is x0 + 1.2816, and a row falls below it with probability 0.9.
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n_rows, 2))
    return X, X[:, 0] + rng.normal(size=n_rows)


@pytest.mark.parametrize("seed", [0, 1])
def test_quantile_0_9_covers_about_90_percent_of_new_rows(seed):
    # 1,500 training rows, 20 epochs: over 12 seeds the coverage of 2,000 test rows was 0.877-0.926 (the standard
    # error of the coverage estimate alone is 0.007); the bounds sit several standard errors outside that, and far
    # from the 0.5 a median model gives.
    X, y = _noisy_line(1500, seed)
    X_test, y_test = _noisy_line(2000, seed + 100)
    model = SparseTabNetRegressor(loss="quantile", quantile=0.9, max_epochs=20, random_state=seed, **TINY).fit(X, y)
    coverage = np.mean(y_test <= model.predict(X_test))
    assert 0.8 < coverage < 0.97


def test_absolute_error_ignores_a_few_huge_outliers_where_squared_error_does_not():
    # 2% of the training targets are shifted by +1,000: the conditional mean moves by about 20, the median by
    # little. Over 12 seeds the absolute error's mean error on clean rows was 0.18-0.84 and the squared error's
    # 19.2-21.1 (0.02 * 1,000 = 20).
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(1000, 2))
    y = 3 * X[:, 0] + rng.normal(scale=0.3, size=1000)
    y[rng.choice(1000, 20, replace=False)] += 1000.0
    X_test = rng.uniform(-2, 2, size=(1000, 2))
    clean = 3 * X_test[:, 0]
    errors = {}
    for loss in ("absolute_error", "squared_error"):
        model = SparseTabNetRegressor(loss=loss, max_epochs=25, random_state=0, **TINY).fit(X, y)
        errors[loss] = mean_absolute_error(clean, model.predict(X_test))
    assert errors["absolute_error"] < 3 and errors["squared_error"] > 10


def test_poisson_on_counts_predicts_positive_means_close_to_the_data_mean():
    # Counts of mean exp(0.5 + x0): over 12 seeds the ratio of the mean prediction to the training mean was
    # 0.96-1.06 and the correlation of log predictions with the true log mean above 0.98.
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(1500, 2))
    y = rng.poisson(np.exp(0.5 + X[:, 0])).astype(float)
    X_test = rng.uniform(-1, 1, size=(2000, 2))
    model = SparseTabNetRegressor(loss="poisson", max_epochs=15, random_state=0, **TINY).fit(X, y)
    prediction = model.predict(X_test)
    assert (prediction > 0).all()
    assert prediction.mean() / y.mean() == pytest.approx(1.0, abs=0.15)
    assert np.corrcoef(np.log(prediction), 0.5 + X_test[:, 0])[0, 1] > 0.9


@pytest.mark.parametrize("loss", REGRESSION_LOSSES)
def test_every_loss_fits_two_outputs_and_scores_its_own_loss_on_validation_rows(loss):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(200, 3))
    y = np.column_stack([np.exp(X[:, 0]), 2 + X[:, 1] ** 2]) + rng.gamma(1.0, 0.1, size=(200, 2))
    X_val, y_val = X[:50], y[:50]
    model = SparseTabNetRegressor(loss=loss, quantile=0.7, huber_delta=0.5, max_epochs=2, **TINY)
    model.fit(X[50:], y[50:], X_val=X_val, y_val=y_val)
    prediction = model.predict(X_val)
    assert prediction.shape == (50, 2) and np.isfinite(prediction).all()
    assert model.score(X_val, y_val) <= 1  # R^2 (RegressorMixin), whatever the loss
    # scoring="loss": minus the validation loss of the fitted network, the mean over rows and outputs, in the
    # units the network learns (standardised, or divided by the training mean).
    scale = model.target_scale_
    if loss == "poisson":
        expected = np.mean([mean_poisson_deviance(y_val[:, k], prediction[:, k]) / 2 / scale[k] for k in range(2)])
    elif loss == "gamma":
        expected = np.mean([mean_gamma_deviance(y_val[:, k], prediction[:, k]) / 2 for k in range(2)])
    elif loss == "quantile":
        expected = np.mean([mean_pinball_loss(y_val[:, k], prediction[:, k], alpha=0.7) / scale[k] for k in range(2)])
    elif loss == "absolute_error":
        expected = np.mean(np.abs(y_val - prediction) / scale)
    elif loss == "squared_error":
        expected = np.mean(((y_val - prediction) / scale) ** 2)
    else:
        r = np.abs(y_val - prediction) / scale
        expected = np.mean(np.where(r <= 0.5, r**2 / 2, 0.5 * (r - 0.25)))
    assert -model.validation_scores_[-1] == pytest.approx(expected, rel=1e-4, abs=1e-6)


# ----------------------------------------------------------------------------- the loss travels with the model
@pytest.fixture(scope="module")
def fitted():
    """A poisson ensemble of two members and a 0.9-quantile model, on a frame with a categorical column."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x": rng.uniform(-1, 1, 160), "colour": rng.choice(["red", "blue"], 160)})
    counts = rng.poisson(np.exp(0.5 + X["x"] + (X["colour"] == "red"))).astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        poisson = SparseTabNetRegressor(loss="poisson", n_ensemble=2, max_epochs=3, random_state=0, **TINY)
        quantile = SparseTabNetRegressor(loss="quantile", quantile=0.9, max_epochs=3, random_state=0, **TINY)
        return X, {"poisson": poisson.fit(X, counts), "quantile": quantile.fit(X, 3 * X["x"])}


@pytest.mark.parametrize("name", ["poisson", "quantile"])
def test_model_file_and_pickle_round_trips_keep_the_loss(fitted, name, tmp_path):
    X, models = fitted
    model = models[name]
    for loaded in (load_model(model.save_model(tmp_path / "model.sparsetab")), pickle.loads(pickle.dumps(model))):
        assert loaded.get_params() == model.get_params()
        assert loaded._loss_parameters == model._loss_parameters
        np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
        np.testing.assert_array_equal(loaded.explain(X).importances, model.explain(X).importances)
    loaded.set_params(warm_start=True, max_epochs=1).fit(X, model.predict(X))  # continues with the fitted loss
    assert loaded.n_iter_ == model.n_iter_ + 1


def test_the_poisson_ensemble_averages_its_members_predictions(fitted):
    X, models = fitted
    model = models["poisson"]
    kind = model._target_kind()
    members = []
    with torch.inference_mode():
        encoded = model._encode_X(X)
        for member in model.network_.members:
            member.eval()
            members.append(kind.predict(member(encoded)[0].numpy()))
    np.testing.assert_allclose(model.predict(X), np.mean(members, axis=0), rtol=1e-5)


@pytest.mark.parametrize("name", ["poisson", "quantile"])
def test_exported_program_predicts_as_the_estimator(fitted, name, tmp_path):
    X, models = fitted
    model = models[name]
    program = torch.export.load(model.export(tmp_path / "model.pt2")).module()
    numeric, codes = model.transform_inputs(X)
    prediction = program(torch.from_numpy(numeric), torch.from_numpy(codes))[0].numpy()
    np.testing.assert_allclose(prediction.ravel(), model.predict(X), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["poisson", "quantile"])
def test_onnx_export_predicts_as_the_estimator(fitted, name, tmp_path):
    pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    pytest.importorskip("onnxscript")
    X, models = fitted
    model = models[name]
    session = ort.InferenceSession(
        model.export(tmp_path / "model.onnx", format="onnx"), providers=["CPUExecutionProvider"]
    )
    numeric, codes = model.transform_inputs(X)
    prediction, _ = session.run(None, {"numeric": numeric, "codes": codes})
    # float32 network outputs mapped to the target's units (through exp for poisson): compared relatively.
    np.testing.assert_allclose(prediction.ravel(), model.predict(X), rtol=1e-5, atol=1e-6)


def _load_pickle(name):
    with open(DATA / name, "rb") as file:
        return pickle.load(file)


@pytest.mark.parametrize(
    "loader", [lambda: load_model(DATA / "regressor.sparsetab"), lambda: _load_pickle("regressor.pkl")]
)
def test_models_saved_before_the_losses_existed_load_as_squared_error(loader):
    # tests/test_compatibility.py checks their predictions against the reference outputs.
    model = loader()
    assert model.get_params()["loss"] == "squared_error" and model.quantile == 0.5 and model.huber_delta == 1.0
    assert not hasattr(model, "_loss_parameters")
    assert model._target_kind().regression_loss.parameters() == {"loss": "squared_error"}
    X = _maker.reference_frame()
    y = model.predict(X)
    model.set_params(loss="absolute_error", warm_start=True, max_epochs=1)
    with pytest.raises(ValueError, match="trained with loss='squared_error'; it is now loss='absolute_error'"):
        model.fit(X, y)
    model.set_params(loss="squared_error").fit(X, y)  # the legacy value is no change


def test_fine_tuning_a_pretrainer_with_the_gamma_loss():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(200, 3))
    y = rng.gamma(2.0, np.exp(X[:, 0]) / 2)
    shared = {key: value for key, value in TINY.items() if key not in ("n_jobs",)}
    pretrainer = SparseTabNetPretrainer(max_epochs=1, random_state=0, **shared).fit(X)
    model = SparseTabNetRegressor(loss="gamma", pretrained=pretrainer, max_epochs=2, random_state=0, **TINY).fit(X, y)
    assert (model.predict(X) > 0).all() and model.target_scale_[0] == pytest.approx(y.mean())


def test_streamed_fit_uses_the_loss_and_checks_every_chunk():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.uniform(-1, 1, 300), "b": rng.normal(size=300)})
    frame["count"] = rng.poisson(np.exp(frame["a"])).astype(float)
    chunks = [frame.iloc[:150], frame.iloc[150:]]
    params = dict(TINY, max_epochs=2, random_state=0)
    streamed = streamed_fit(SparseTabNetRegressor(loss="poisson", **params), chunks, target="count")
    in_memory = SparseTabNetRegressor(loss="poisson", **params).fit(frame[["a", "b"]], frame["count"])
    assert streamed._loss_parameters == {"loss": "poisson"} and streamed.target_scale_[0] > 0
    assert (streamed.predict(frame[["a", "b"]]) > 0).all()
    one_chunk = streamed_fit(SparseTabNetRegressor(loss="poisson", **params), [frame], target="count")
    np.testing.assert_array_equal(one_chunk.predict(frame[["a", "b"]]), in_memory.predict(frame[["a", "b"]]))
    # A negative count that only the training pass reads (the encoding pass, and its sample, saw a valid table):
    # the chunks the network trains on are checked too.
    late = frame.copy()
    late.loc[250, "count"] = -1.0
    passes = []

    def source():
        passes.append(len(passes))
        table = late if len(passes) > 1 else frame
        return iter([table.iloc[:150], table.iloc[150:]])

    with pytest.raises(ValueError, match=r"loss='poisson' needs target >= 0 .* the smallest -1\.0"):
        streamed_fit(SparseTabNetRegressor(loss="poisson", **params), source, target="count")
    assert len(passes) == 2


def test_distributed_fit_in_one_process_group_keeps_the_loss(tmp_path):
    if not (dist.is_available() and dist.is_gloo_available()):
        pytest.skip("no gloo backend")
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", 0))
        except OSError:
            pytest.skip("cannot bind to 127.0.0.1 here")
        port = sock.getsockname()[1]
    X, y = _table(120)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1)
    try:
        model = distributed_fit(
            SparseTabNetRegressor(loss="quantile", quantile=0.8, max_epochs=2, **TINY), X, y, path=tmp_path / "m"
        )
    finally:
        dist.destroy_process_group()
    assert model._loss_parameters == {"loss": "quantile", "quantile": 0.8}
    np.testing.assert_array_equal(load_model(tmp_path / "m").predict(X), model.predict(X))
