"""The estimators with numerical_embedding: bins fitted at the first fit, explanations, files, export, pretraining.

The modules themselves are tested in tests/network/test_numerical.py and tests/network/test_embeddings.py.
"""

import pickle
import warnings
from contextlib import nullcontext
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.base import clone

from sparsetab import SparseTabNetClassifier, SparseTabNetPretrainer, SparseTabNetRegressor, load_model
from sparsetab._params import resolve_numerical_embedding
from sparsetab.network import quantile_bin_edges

SMALL = dict(max_epochs=2, batch_size=64, virtual_batch_size=32, n_d=4, n_a=4, random_state=0, early_stopping=False)
EMBEDDINGS = ["piecewise_linear", "periodic"]


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning of the short fits
        yield


def _frame(n=240, seed=0):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "wide": rng.normal(size=n),  # many distinct values: encoded
            "small_integer": rng.integers(0, 4, n).astype(float),  # 4 distinct values: kept scalar under PLE
            "colour": pd.Categorical(rng.choice(["red", "green", "blue"], n)),
            "skewed": rng.lognormal(size=n),
        }
    )
    frame.loc[rng.random(n) < 0.1, "wide"] = np.nan
    return frame


def _regression_target(frame):
    return np.sin(2 * frame["skewed"].to_numpy()) + frame["small_integer"].to_numpy()


def _classification_target(frame):
    return np.where(frame["skewed"] > 1.0, "high", "low")


@pytest.fixture(scope="module", params=EMBEDDINGS)
def fitted_regressor(request):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame = _frame()
        model = SparseTabNetRegressor(**SMALL, numerical_embedding=request.param, n_bins=8, embedding_dim=3)
        return model.fit(frame, _regression_target(frame)), frame


def test_piecewise_linear_bins_are_the_training_quantiles_and_few_valued_columns_stay_scalar():
    frame = _frame()
    model = SparseTabNetRegressor(**SMALL, numerical_embedding="piecewise_linear", n_bins=8)
    model.fit(frame, _regression_target(frame))
    config = model._network_config
    assert config["numerical_embedding"] == "piecewise_linear" and config["n_bins"] == 8
    assert config["bin_counts"] == [8, 0, 0, 8]  # small_integer (4 values) and the categorical column: none
    encoded = torch.from_numpy(model._tabular_encoding.transform(frame))
    expected = quantile_bin_edges(encoded[:, [0, 3]], 8)
    torch.testing.assert_close(model.network_.embedding.numerical.edges, torch.stack(expected), rtol=0, atol=0)
    # 2 x 8 bins, the values of the 3 numeric columns (the 2 encoded ones keep theirs beside the bins),
    # 1 missing indicator, the categorical embedding (the default cat_emb_dim, 4)
    assert model.network_.embedding.output_dim == 16 + 3 + 1 + 4


def test_bins_are_fitted_on_the_training_rows_only():
    frame = _frame()
    validation = _frame(60, seed=1)
    validation["skewed"] += 1000.0  # far above every training value
    model = SparseTabNetRegressor(**{**SMALL, "early_stopping": True}, numerical_embedding="piecewise_linear")
    model.fit(frame, _regression_target(frame), X_val=validation, y_val=_regression_target(validation))
    encoded = torch.from_numpy(model._tabular_encoding.transform(frame))
    skewed_edges = model.network_.embedding.numerical.edges[1]  # 8 bins, as many as "wide": no padding
    assert float(skewed_edges.max()) == float(encoded[:, 3].max())


def test_no_embedding_builds_the_network_of_earlier_releases():
    frame = _frame()
    model = SparseTabNetRegressor(**SMALL, numerical_embedding=None).fit(frame, _regression_target(frame))
    assert model._network_config["numerical_embedding"] is None and model._network_config["bin_counts"] is None
    assert not any("numerical" in name for name in model.network_.state_dict())


@pytest.mark.parametrize("name", ["regressor.sparsetab", "regressor.pkl"])
def test_models_saved_before_numerical_embeddings_load_with_the_legacy_values(name):
    path = Path(__file__).parents[1] / "data" / name
    if name.endswith(".pkl"):
        with open(path, "rb") as file:
            model = pickle.load(file)
    else:
        model = load_model(path)
    parameters = model.get_params()
    assert (parameters["numerical_embedding"], parameters["n_bins"]) == (None, 32)
    assert (parameters["embedding_dim"], parameters["frequency_scale"]) == (8, 0.1)
    assert "numerical_embedding" not in model._architecture  # recorded before the parameter existed
    X = pd.DataFrame(np.zeros((4, model.n_features_in_)), columns=model.feature_names_in_)
    for column in model.categories_:
        X[column] = model.categories_[column][0]
    model.partial_fit(X, model.predict(X))  # a continued fit compares with the legacy values
    with pytest.raises(ValueError, match=r"which was built with numerical_embedding=None"):
        model.set_params(numerical_embedding="periodic").partial_fit(X, model.predict(X))


@pytest.mark.parametrize("numerical_embedding", EMBEDDINGS)
def test_explanations_have_one_value_per_input_column(numerical_embedding):
    frame = _frame()
    model = SparseTabNetClassifier(**SMALL, numerical_embedding=numerical_embedding, n_bins=8)
    model.fit(frame, _classification_target(frame))
    explanation = model.explain(frame)
    assert explanation.step_masks.shape == (len(frame), model.n_steps, 4)
    np.testing.assert_allclose(explanation.step_masks.sum(axis=2), 1.0, rtol=1e-5)
    assert explanation.importances.shape == (len(frame), 4)
    row_sums = explanation.importances.sum(axis=1)
    assert np.all(np.isclose(row_sums, 1.0, rtol=1e-5) | (row_sums == 0))
    assert model.feature_importances_.shape == (4,)
    assert model.predict_proba(frame).shape == (len(frame), 2)


def test_model_file_pickle_and_clone_round_trips(fitted_regressor, tmp_path):
    model, frame = fitted_regressor
    prediction = model.predict(frame)
    loaded = load_model(model.save_model(tmp_path / "model.sparsetab"))
    np.testing.assert_array_equal(loaded.predict(frame), prediction)
    np.testing.assert_array_equal(loaded.explain(frame).step_masks, model.explain(frame).step_masks)
    assert loaded._network_config == model._network_config
    unpickled = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(unpickled.predict(frame), prediction)
    copy = clone(model)
    assert copy.get_params()["numerical_embedding"] == model.numerical_embedding
    assert copy.get_params()["embedding_dim"] == 3 and not hasattr(copy, "network_")


@pytest.mark.filterwarnings("ignore:`torch.jit.load` is deprecated:DeprecationWarning")
@pytest.mark.parametrize("export_format", ["exported_program", "torchscript"])
def test_export_predicts_and_explains_like_the_estimator(fitted_regressor, export_format, tmp_path):
    model, frame = fitted_regressor
    # TorchScript is deprecated (a FutureWarning) but still written for one release.
    deprecated = pytest.warns(FutureWarning, match="torchscript") if export_format == "torchscript" else nullcontext()
    with deprecated:
        path = model.export(
            tmp_path / ("model.pt2" if export_format == "exported_program" else "model.pt"), format=export_format
        )
    program = torch.export.load(path).module() if export_format == "exported_program" else torch.jit.load(path)
    numeric, codes = model.transform_inputs(frame)
    assert numeric.shape == (len(frame), 3) and codes.shape == (len(frame), 1)  # raw inputs, unchanged by embeddings
    for rows in (slice(None), slice(0, 1), slice(5, 42)):  # other batch sizes than the traced example
        prediction, step_masks = program(torch.from_numpy(numeric[rows]), torch.from_numpy(codes[rows]))
        np.testing.assert_allclose(prediction.numpy().ravel(), model.predict(frame.iloc[rows]), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(step_masks.numpy(), model.explain(frame.iloc[rows]).step_masks, atol=1e-5)


def test_continued_fits_keep_the_bins_and_refuse_a_changed_embedding():
    frame = _frame()
    y = _regression_target(frame)
    model = SparseTabNetRegressor(**SMALL, numerical_embedding="piecewise_linear", n_bins=8).fit(frame, y)
    edges = model.network_.embedding.numerical.edges.clone()
    shifted = frame.assign(wide=frame["wide"] + 5.0)  # other quantiles: a refit would move the edges
    model.partial_fit(shifted, y)
    model.set_params(warm_start=True).fit(shifted, y)
    assert model.n_iter_ == 5
    torch.testing.assert_close(model.network_.embedding.numerical.edges, edges, rtol=0, atol=0)
    for change in ({"numerical_embedding": "periodic"}, {"numerical_embedding": None}, {"n_bins": 16}):
        model.set_params(**change)
        with pytest.raises(ValueError, match=rf"which was built with {next(iter(change))}="):
            model.fit(frame, y)
        with pytest.raises(ValueError, match=rf"which was built with {next(iter(change))}="):
            model.partial_fit(frame, y)
        model.set_params(numerical_embedding="piecewise_linear", n_bins=8)


def test_pretrained_piecewise_linear_encoder_is_fine_tuned_with_its_bins():
    frame = _frame()
    pretrainer = SparseTabNetPretrainer(**SMALL, numerical_embedding="piecewise_linear", n_bins=8).fit(frame)
    encoder = pretrainer.network_.encoder
    # The decoder reconstructs the 3 numeric values, the indicator and the categorical embedding (width 4), not
    # the bins.
    assert pretrainer.network_.decoder_fcs[0].out_features == 3 + 1 + 4 < encoder.embedding.output_dim
    assert np.isfinite(pretrainer.loss_curve_).all() and pretrainer.transform(frame).shape == (len(frame), 4)
    other_rows = _frame(seed=3).assign(wide=lambda df: df["wide"] * 3.0)  # other quantiles than the pretrainer's
    y = _regression_target(other_rows)
    parameters = {**SMALL, "numerical_embedding": "piecewise_linear", "n_bins": 8}
    model = SparseTabNetRegressor(**parameters, pretrained=pretrainer).fit(other_rows, y)
    torch.testing.assert_close(model.network_.embedding.numerical.edges, encoder.embedding.numerical.edges)
    assert model._network_config["bin_counts"] == pretrainer._network_config["bin_counts"]
    pickled = pickle.loads(pickle.dumps(pretrainer))
    np.testing.assert_array_equal(pickled.transform(frame), pretrainer.transform(frame))
    with pytest.raises(ValueError, match=r"numerical_embedding=None \(pretrained: 'piecewise_linear', which used"):
        SparseTabNetRegressor(**SMALL, n_bins=8, numerical_embedding=None, pretrained=pretrainer).fit(other_rows, y)


def test_periodic_pretrainer_fine_tunes():
    frame = _frame()
    pretrainer = SparseTabNetPretrainer(**SMALL, numerical_embedding="periodic", frequency_scale=0.5).fit(frame)
    model = SparseTabNetClassifier(**SMALL, numerical_embedding="periodic", frequency_scale=0.5, pretrained=pretrainer)
    model.fit(frame, _classification_target(frame))
    assert model.network_.embedding.numerical.frequencies.shape == (3, 32)
    assert model.predict(frame).shape == (len(frame),)


@pytest.mark.parametrize(
    ("n_samples", "expected"),
    [(2, None), (353, None), (999, None), (1000, "piecewise_linear"), (10**6, "piecewise_linear")],
)
def test_auto_embeds_from_one_thousand_rows_and_explicit_values_pass(n_samples, expected):
    assert resolve_numerical_embedding("auto", n_samples) == expected
    for value in (None, "piecewise_linear", "periodic"):
        assert resolve_numerical_embedding(value, n_samples) == value


@pytest.mark.parametrize(("n_rows", "expected"), [(240, None), (1000, "piecewise_linear")])
def test_the_default_resolves_on_the_rows_given_and_a_continued_fit_keeps_it(n_rows, expected):
    frame = _frame(n_rows)
    y = _regression_target(frame)
    model = SparseTabNetRegressor(**{**SMALL, "max_epochs": 1}, warm_start=True)
    assert model.numerical_embedding == "auto" and not hasattr(model, "numerical_embedding_")
    model.fit(frame, y)
    assert model.numerical_embedding_ == expected == model._network_config["numerical_embedding"]
    assert model.get_params()["numerical_embedding"] == "auto" and clone(model).numerical_embedding == "auto"
    has_bins = any("numerical" in name for name in model.network_.state_dict())
    assert has_bins == (expected is not None)
    # Continued fits on other row counts keep the network's embedding.
    other = _frame(1000 if n_rows < 1000 else 240, seed=2)
    model.fit(other, _regression_target(other))
    model.partial_fit(other, _regression_target(other))
    assert model.numerical_embedding_ == expected and model.n_iter_ == 3
    loaded = pickle.loads(pickle.dumps(model))
    assert loaded.numerical_embedding_ == expected
    np.testing.assert_array_equal(loaded.predict(frame), model.predict(frame))


def test_auto_takes_the_pretrainers_embedding_whatever_the_rows_of_the_fine_tuning():
    unlabelled = _frame(1000, seed=4)
    pretrainer = SparseTabNetPretrainer(**SMALL).fit(unlabelled)
    assert pretrainer.numerical_embedding_ == "piecewise_linear"
    assert SparseTabNetPretrainer(**SMALL).fit(_frame()).numerical_embedding_ is None
    frame = _frame()  # 240 rows: "auto" alone would choose no embedding
    model = SparseTabNetClassifier(**SMALL, pretrained=pretrainer).fit(frame, _classification_target(frame))
    assert model.numerical_embedding_ == "piecewise_linear"
    torch.testing.assert_close(
        model.network_.embedding.numerical.edges, pretrainer.network_.encoder.embedding.numerical.edges
    )


def test_auto_or_the_value_used_fine_tune_any_pretrainer_and_another_value_is_refused_naming_it():
    small, large = _frame(), _frame(1000, seed=4)
    explicit = SparseTabNetPretrainer(**SMALL, numerical_embedding="piecewise_linear", n_bins=8).fit(small)
    model = SparseTabNetRegressor(**SMALL, n_bins=8, pretrained=explicit).fit(large, _regression_target(large))
    assert model.numerical_embedding_ == "piecewise_linear"  # "auto" would give 1,000 rows the same; 240 none
    resolved = SparseTabNetPretrainer(**SMALL).fit(large)  # "auto" on 1,000 rows: the encoding
    assert resolved.numerical_embedding_ == "piecewise_linear"
    named = SparseTabNetRegressor(**SMALL, numerical_embedding="piecewise_linear", pretrained=resolved)
    assert named.fit(small, _regression_target(small)).numerical_embedding_ == "piecewise_linear"
    message = r"numerical_embedding=None \(pretrained: 'auto', which used 'piecewise_linear'; 'auto' takes"
    with pytest.raises(ValueError, match=message):
        SparseTabNetRegressor(**SMALL, numerical_embedding=None, pretrained=resolved).fit(
            small, _regression_target(small)
        )


def test_a_continued_fit_accepts_auto_or_the_embedding_it_chose_and_names_it_when_refusing():
    frame = _frame(1000)
    y = _regression_target(frame)
    model = SparseTabNetRegressor(**{**SMALL, "max_epochs": 1}, warm_start=True).fit(frame, y)
    assert model.numerical_embedding_ == "piecewise_linear"
    model.set_params(numerical_embedding="piecewise_linear").fit(frame, y)
    model.set_params(numerical_embedding="auto").partial_fit(frame, y)
    assert model.n_iter_ == 3 and model.numerical_embedding_ == "piecewise_linear"
    fresh = SparseTabNetRegressor(**{**SMALL, "max_epochs": 1}, warm_start=True).fit(frame, y)
    message = (
        r"built with numerical_embedding='auto' \(which chose 'piecewise_linear'\); it is now "
        r"numerical_embedding=None\. Restore it, set 'auto' or 'piecewise_linear'"
    )
    with pytest.raises(ValueError, match=message):
        fresh.set_params(numerical_embedding=None).fit(frame, y)


def test_invalid_values_are_refused_with_the_accepted_ones():
    frame = _frame()
    y = _regression_target(frame)
    cases = [
        ({"numerical_embedding": "splines"}, r"'numerical_embedding' parameter .* must be a str among"),
        ({"n_bins": 1}, r"'n_bins' parameter .* must be an int in the range \[2, inf\)"),
        ({"embedding_dim": 0}, r"'embedding_dim' parameter .* must be an int in the range \[1, inf\)"),
        ({"frequency_scale": 0.0}, r"'frequency_scale' parameter .* must be a float in the range \(0.0, inf\)"),
    ]
    for parameters, message in cases:
        with pytest.raises(ValueError, match=message):
            SparseTabNetRegressor(**SMALL, **parameters).fit(frame, y)


def test_piecewise_linear_regressor_learns_a_nonlinear_one_dimensional_target():
    # Measured over 5 seeds (40 epochs, 600 rows): test MSE / variance of the target 0.011 (sd 0.009) with PLE,
    # 0.099 (sd 0.062) without it; predicting the mean scores 1. The bound 0.2 is > 20 sd from PLE's mean.
    for seed in (0, 1):
        rng = np.random.default_rng(seed)
        X = rng.uniform(-3, 3, size=(600, 1))
        y = np.sin(2 * X[:, 0]) + 0.1 * rng.normal(size=600)
        X_test = rng.uniform(-3, 3, size=(600, 1))
        y_test = np.sin(2 * X_test[:, 0])
        model = SparseTabNetRegressor(
            numerical_embedding="piecewise_linear", n_bins=16, n_steps=1, max_epochs=40, batch_size=128,
            early_stopping=False, random_state=seed, n_jobs=1,
        ).fit(X, y)  # fmt: skip
        relative_error = np.mean((model.predict(X_test) - y_test) ** 2) / np.var(y_test)
        assert relative_error < 0.2
