"""SparseTabNetPretrainer and fine-tuning with pretrained=."""

import copy
import pickle

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import GridSearchCV
from sklearn.preprocessing import StandardScaler

from sparsetab import SparseTabNetClassifier, SparseTabNetPretrainer, SparseTabNetRegressor, load_model

ARCH = dict(n_d=4, n_a=4, n_steps=2, n_independent=1, n_shared=1, virtual_batch_size=32)

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def _table(n_rows=600, seed=0):
    # Redundant columns, so that a hidden column can be reconstructed from the others.
    rng = np.random.default_rng(seed)
    base = rng.normal(size=n_rows)
    X = pd.DataFrame(
        {
            "a": base,
            "b": 2.0 * base + 0.05 * rng.normal(size=n_rows),
            "c": -base + 0.05 * rng.normal(size=n_rows),
            "colour": np.where(base > 0, "red", "blue"),
        }
    )
    X.loc[::11, "c"] = np.nan
    return X, (base + 0.3 * rng.normal(size=n_rows) > 0).astype(int)


def learn_pretrainer(random_state=0):
    """40 epochs with patience for all of them (n_iter_ is 40 whatever the loss curve)."""
    X, _ = _table()
    pretrainer = SparseTabNetPretrainer(
        max_epochs=40, n_iter_no_change=40, batch_size=128, learning_rate=0.03, random_state=random_state, **ARCH
    ).fit(X)
    X_test, _ = _table(300, seed=1)
    untrained = SparseTabNetPretrainer(max_epochs=1, learning_rate=1e-9, random_state=random_state, **ARCH).fit(X_test)
    metrics = {
        "loss last / first": pretrainer.loss_curve_[-1] / pretrainer.loss_curve_[0],
        "test reconstruction score": pretrainer.reconstruction_score(X_test),
        "untrained / trained score": untrained.reconstruction_score(X_test) / pretrainer.reconstruction_score(X_test),
    }
    return pretrainer, metrics


def learn_constant_columns(random_state=0):
    X, _ = _table(300)
    X = X.assign(only=pd.Categorical(["one"] * 300), flag=True, empty=np.nan)
    X.loc[7, "a"] = np.nan  # one missing value: its indicator is constant in most batches
    model = SparseTabNetPretrainer(max_epochs=3, batch_size=64, random_state=random_state, **ARCH).fit(X)
    return model, {"largest epoch loss": max(model.loss_curve_), "reconstruction score": model.reconstruction_score(X)}


@pytest.fixture(scope="module")
def fitted_pretrainer():
    return learn_pretrainer()


@pytest.fixture(scope="module")
def pretrainer(fitted_pretrainer):
    return fitted_pretrainer[0]


def test_reconstruction_loss_decreases_and_beats_the_mean(fitted_pretrainer):
    pretrainer, learned = fitted_pretrainer
    assert pretrainer.n_iter_ == 40
    assert (
        learned["loss last / first"] < 0.5
    )  # bound from benchmarks/results/learning_bounds.md: mean 0.169, sd 0.082, max 0.298 over 30 seeds
    # predicting each hidden column's mean scores about 1 (each column is scaled by its variance)
    assert (
        learned["test reconstruction score"] < 0.5
    )  # bound from benchmarks/results/learning_bounds.md: mean 0.132, sd 0.030 over 30 seeds
    # bound from benchmarks/results/learning_bounds.md: heavy-tailed, min 3.29 and max 413 over 30 seeds
    assert learned["untrained / trained score"] > 2


def test_transform_gives_the_encoder_embedding_with_feature_names(pretrainer):
    X, _ = _table(50, seed=2)
    embedding = pretrainer.transform(X)
    assert embedding.shape == (50, 4) and embedding.dtype == np.float64 and (embedding >= 0).all()
    with torch.inference_mode():
        encoded = torch.from_numpy(pretrainer._tabular_encoding.transform(X))
        expected = pretrainer.network_.encoder.eval().encode(encoded)[0].numpy()
    np.testing.assert_allclose(embedding, expected, rtol=1e-6)
    names = [f"sparsetabnetpretrainer{j}" for j in range(4)]
    assert list(pretrainer.get_feature_names_out()) == names
    frame = clone(pretrainer).set_output(transform="pandas").fit(X).transform(X)
    assert list(frame.columns) == names and list(frame.index) == list(X.index)


def test_early_stopping_keeps_the_best_validation_weights():
    X, _ = _table(400)
    model = SparseTabNetPretrainer(
        max_epochs=30, early_stopping=True, n_iter_no_change=3, batch_size=128, random_state=0, **ARCH
    ).fit(X)
    assert model.validation_scores_.shape == (model.n_iter_,)
    assert model.validation_scores_[model.best_iteration_] == model.validation_scores_.max()


def test_fine_tuning_starts_from_the_pretrained_encoder(pretrainer):
    X, y = _table(200, seed=3)
    # A vanishing learning rate keeps the starting point: the encoder weights are the pretrained ones.
    model = SparseTabNetClassifier(
        early_stopping=False, max_epochs=1, learning_rate=1e-12, pretrained=pretrainer, **ARCH
    ).fit(X, y)
    pretrained = dict(pretrainer.network_.encoder.named_parameters())
    for name, parameter in model.network_.named_parameters():
        if not name.startswith("head."):
            torch.testing.assert_close(parameter.detach(), pretrained[name].detach(), rtol=0, atol=1e-8)
    fresh = SparseTabNetClassifier(early_stopping=False, max_epochs=1, learning_rate=1e-12, random_state=0, **ARCH).fit(
        X, y
    )
    assert not torch.allclose(fresh.network_.shared_fcs[0].weight, pretrained["shared_fcs.0.weight"])
    # the pretrainer's column encoding is used: same categories and standardisation
    np.testing.assert_array_equal(model._tabular_encoding.center_, pretrainer._tabular_encoding.center_)


def test_a_gateless_pretrained_encoder_fine_tunes_with_step_gates(pretrainer):
    X, y = _table(200, seed=3)
    model = SparseTabNetClassifier(
        early_stopping=False, max_epochs=1, learning_rate=1e-12, pretrained=pretrainer, step_gates="sigmoid", **ARCH
    ).fit(X, y)  # not an architecture mismatch: a pretrainer has no gates to match
    pretrained = dict(pretrainer.network_.encoder.named_parameters())
    names = [name for name, _ in model.network_.named_parameters() if not name.startswith("head.")]
    assert {name for name in names if name.startswith("gates.")} == {"gates.scores.weight", "gates.scores.bias"}
    for name, parameter in model.network_.named_parameters():
        if name in names and name in pretrained:
            torch.testing.assert_close(parameter.detach(), pretrained[name].detach(), rtol=0, atol=1e-8)
    assert set(names) - set(pretrained) == {"gates.scores.weight", "gates.scores.bias"}
    assert model.explain(X.head(4)).step_gates.shape == (4, ARCH["n_steps"])


def test_grid_search_fine_tunes_from_the_pretrained_weights(pretrainer):
    X, y = _table(200, seed=4)
    search = GridSearchCV(
        SparseTabNetClassifier(early_stopping=False, max_epochs=1, pretrained=FrozenEstimator(pretrainer), **ARCH),
        {"learning_rate": [1e-12, 2e-12]},
        cv=2,
    ).fit(X, y)
    tuned = search.best_estimator_.network_
    expected = pretrainer.network_.encoder.initial_transformer.layers[0].fc.weight
    torch.testing.assert_close(
        tuned.initial_transformer.layers[0].fc.weight.detach(), expected.detach(), atol=1e-8, rtol=0
    )


def test_mismatches_and_unfitted_pretrainers_are_refused(pretrainer):
    X, y = _table(100, seed=5)
    with pytest.raises(ValueError, match=r"architecture differs .* n_d=8 \(pretrained: 4\)"):
        SparseTabNetClassifier(**dict(ARCH, n_d=8), pretrained=pretrainer).fit(X, y)
    with pytest.raises(ValueError, match=r"entmax_mode='sparsemax' \(pretrained: 'entmax15'\)"):
        SparseTabNetClassifier(**ARCH, entmax_mode="sparsemax", pretrained=pretrainer).fit(X, y)
    # The message says what differs, not two lists to compare by eye (a helper's 120 columns: 3,705 characters).
    differs = "X's columns differ from the pretrained encoder's: "
    with pytest.raises(ValueError, match=differs + "the order differs from position 0 on: X has 'b' where the pre"):
        SparseTabNetClassifier(**ARCH, pretrained=pretrainer).fit(X[["b", "a", "c", "colour"]], y)
    with pytest.raises(ValueError, match=differs + r"X lacks \['c'\]; X has \['d'\], which the pretrainer never"):
        SparseTabNetClassifier(**ARCH, pretrained=pretrainer).fit(X.rename(columns={"c": "d"}), y)
    with pytest.raises(ValueError, match=differs + r"X lacks \['colour'\]\. The encoder reads the columns"):
        SparseTabNetClassifier(**ARCH, pretrained=pretrainer).fit(X.drop(columns="colour"), y)
    with pytest.raises(ValueError, match=differs + "the pretrainer has named columns and X 4 without string names"):
        SparseTabNetClassifier(**ARCH, pretrained=pretrainer).fit(X.to_numpy(), y)
    with pytest.raises(ValueError, match="not fitted.*FrozenEstimator"):
        SparseTabNetClassifier(**ARCH, pretrained=clone(pretrainer)).fit(X, y)
    with pytest.raises(ValueError, match="pretrained must be a fitted SparseTabNetPretrainer .* got StandardScaler"):
        SparseTabNetClassifier(**ARCH, pretrained=FrozenEstimator(StandardScaler())).fit(X, y)
    with pytest.raises(ValueError, match="'pretrained' parameter of SparseTabNetClassifier must be an object"):
        SparseTabNetClassifier(**ARCH, pretrained=SparseTabNetRegressor()).fit(X, y)
    with pytest.raises(NotFittedError):
        SparseTabNetPretrainer().transform(X)
    with pytest.raises(ValueError, match="at least 2 rows"):
        SparseTabNetPretrainer(**ARCH).fit(X.iloc[:1])


def test_fine_tuned_models_regress_pickle_and_save(pretrainer, tmp_path):
    X, _ = _table(200, seed=6)
    regressor = SparseTabNetRegressor(max_epochs=2, pretrained=pretrainer, random_state=0, **ARCH).fit(X, X["a"] * 3)
    loaded = load_model(regressor.save_model(tmp_path / "model.sparsetab"))
    assert loaded.pretrained is None
    np.testing.assert_array_equal(loaded.predict(X), regressor.predict(X))
    restored = pickle.loads(pickle.dumps(pretrainer))
    np.testing.assert_array_equal(restored.transform(X), pretrainer.transform(X))


def test_constant_and_rarely_missing_columns_keep_the_loss_on_its_scale():
    # A zero batch variance must not blow the standardised loss up: without the guard of
    # network.pretraining.reconstruction_loss it reaches 1e6 and more. Columns of tiny but non-zero batch
    # variance (the indicator of a column missing once) still weigh a lot: over 30 seeds the largest epoch
    # loss is 5.1 on average and 94 at most, the score 13.2 and 101 (benchmarks/results/learning_bounds.md).
    # That weight is the variance floor of issue 18, not this guard, so the bound sits between the two.
    _, learned = learn_constant_columns()
    assert learned["largest epoch loss"] < 1000
    assert learned["reconstruction score"] < 1000


def test_transform_refuses_to_return_nan_embeddings(pretrainer):
    X, _ = _table(20, seed=7)
    X.loc[4, "b"] = 1e300  # finite, but overflows float32
    # A fitted encoding clips it to the training range; one restored from before clipping does not.
    assert np.isfinite(pretrainer.transform(X)).all()
    unclipped = copy.deepcopy(pretrainer)
    unclipped._tabular_encoding.clip_ = False
    with pytest.raises(ValueError, match=r"not finite .* first at row 4"):
        unclipped.transform(X)


def test_fine_tuning_on_categories_the_pretrainer_never_saw_warns(pretrainer):
    X, y = _table(200, seed=8)
    with pytest.warns(UserWarning, match=r"not seen by the pretrainer \('colour': 100%\)") as caught:
        model = SparseTabNetClassifier(max_epochs=1, pretrained=pretrainer, **ARCH).fit(X.assign(colour="green"), y)
    # Once per fit: the refit of 200 rows reads again the rows its first pass warned about.
    assert len(model.ensemble_n_iter_) == 2
    assert sum("not seen by the pretrainer" in str(record.message) for record in caught) == 1


def test_pretraining_with_quantile_fine_tunes_with_its_quantile_encoding(tmp_path):
    X, y = _table(200, seed=9)
    pretrainer = SparseTabNetPretrainer(numerical_transform="quantile", max_epochs=1, random_state=0, **ARCH).fit(X)
    far = X.assign(a=X["a"] * 1e4)
    assert np.isfinite(pretrainer.transform(far)).all()
    with pytest.raises(ValueError, match=r"numerical_transform='standard' \(pretrained: 'quantile'\)"):
        SparseTabNetClassifier(max_epochs=1, pretrained=pretrainer, **ARCH).fit(X, y)
    model = SparseTabNetClassifier(numerical_transform="quantile", max_epochs=1, pretrained=pretrainer, **ARCH)
    model.fit(X, y)
    encoding = model._tabular_encoding
    assert encoding.numerical_transform == "quantile" and encoding is not pretrainer._tabular_encoding
    clipped = far.assign(a=far["a"].clip(X["a"].min(), X["a"].max()))
    np.testing.assert_array_equal(model.predict_proba(far), model.predict_proba(clipped))
    loaded = load_model(model.save_model(tmp_path / "model.sparsetab"))
    np.testing.assert_array_equal(loaded.predict_proba(far), model.predict_proba(far))
