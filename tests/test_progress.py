"""Progress of a fit (sparsetab._progress): the verbose lines, the rich bar and scikit-learn's callbacks."""

import re
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

from sparsetab import SparseTabNetClassifier, SparseTabNetPretrainer, SparseTabNetRegressor, _progress, load_model
from sparsetab._progress import EpochPrinter, metric_label
from sparsetab._training.loop import EpochRecord, TrainingHistory

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
callback_api = pytest.importorskip("sklearn.callback", reason="this scikit-learn has no callback API")

EPOCH_LINE = re.compile(
    r"^\[(\d+)/(\d+)\] train loss: (\d+\.\d{4})(, val (\w+): (-?\d+\.\d{4}))?( \(best\))?, in \d+\.\ds$"
)


def _data(n_rows=240, seed=0):
    X = np.random.default_rng(seed).normal(size=(n_rows, 4))
    return X, (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)


def _record(epoch=12, last_epoch=100, validation_score=-0.341, best=True):
    return EpochRecord(epoch, last_epoch, 0.32914, validation_score, best, 0.94)


def test_the_epoch_line_has_the_documented_shape():
    printer = EpochPrinter(1, "loss", negate=True, early_stopping=True)
    assert printer.line(_record()) == "[12/100] train loss: 0.3291, val loss: 0.3410 (best), in 0.9s"
    auc = EpochPrinter(1, "roc_auc", negate=False, early_stopping=True)
    assert (
        auc.line(_record(validation_score=0.90123, best=False))
        == "[12/100] train loss: 0.3291, val roc_auc: 0.9012, in 0.9s"
    )
    # no validation rows; partial_fit epochs have no last epoch
    assert printer.line(_record(last_epoch=None, validation_score=None)) == "[12] train loss: 0.3291 (best), in 0.9s"


@pytest.mark.parametrize(
    "reason, kept, early_stopping, expected",
    [
        (
            "no_improvement",
            12,
            True,
            "Stopped after epoch 32: no improvement of the val loss for 20 epochs; kept the weights of epoch 12.",
        ),
        (
            "no_improvement",
            32,
            False,
            "Stopped after epoch 32: no improvement of the train loss for 20 epochs; "
            "kept the weights of the last epoch (32).",
        ),
        ("max_epochs", 30, True, "Stopped after epoch 32: max_epochs reached; kept the weights of epoch 30."),
        (
            "non_finite",
            31,
            False,
            "Stopped during epoch 33: the training loss or the weights became non-finite; "
            "kept the weights of epoch 31.",
        ),
        (
            "interrupted",
            None,
            False,
            "Stopped during epoch 33: interrupted by Ctrl-C; kept the current weights, part-way through an epoch.",
        ),
        ("interrupted", 0, True, "Stopped during epoch 33: interrupted by Ctrl-C; kept the initial weights."),
        (
            "callback",
            32,
            False,
            "Stopped after epoch 32: a callback asked to stop; kept the weights of the last epoch (32).",
        ),
        ("partial_fit", 32, False, None),
    ],
)
def test_the_closing_line_says_why_and_which_weights(reason, kept, early_stopping, expected):
    printer = EpochPrinter(1, "loss", negate=True, early_stopping=early_stopping)
    printer.epoch, printer.completed = 33 if reason in ("non_finite", "interrupted") else 32, 32
    history = TrainingHistory(stop_reason=reason, kept_epoch=kept)
    assert printer.closing_line(history, patience=20) == expected


def test_metric_labels():
    assert metric_label("loss") == ("loss", True)
    assert metric_label("roc_auc") == ("roc_auc", False)

    def balanced(estimator, X, y):
        return 0.0

    assert metric_label(balanced) == ("balanced", False)


def test_verbose_fit_prints_one_line_per_epoch_and_why_it_stopped(capsys):
    X, y = _data()
    model = SparseTabNetClassifier(n_d=4, n_a=4, n_steps=2, max_epochs=6, verbose=1, random_state=0)
    model.set_params(early_stopping=True, scoring="roc_auc").fit(X, y)
    lines = capsys.readouterr().out.splitlines()
    matches = [EPOCH_LINE.match(line) for line in lines[:-1]]
    assert all(matches) and len(matches) == model.n_iter_
    assert [int(match[1]) for match in matches] == list(range(1, model.n_iter_ + 1))
    assert {match[2] for match in matches} == {"6"} and {match[5] for match in matches} == {"roc_auc"}
    assert [float(match[3]) for match in matches] == pytest.approx(model.loss_curve_, abs=5e-5)
    assert [float(match[6]) for match in matches] == pytest.approx(model.validation_scores_, abs=5e-5)
    best = np.maximum.accumulate(model.validation_scores_)
    improved = [True] + list(best[1:] > best[:-1])
    assert [match[7] is not None for match in matches] == improved
    assert lines[-1].startswith(f"Stopped after epoch {model.n_iter_}: ")
    assert lines[-1].endswith(f"kept the average of the weights of epoch {model.best_iteration_ + 1}.")


def test_verbose_regressor_partial_fit_and_pretrainer(capsys):
    X, y = _data()
    model = SparseTabNetRegressor(
        early_stopping=False, n_d=4, n_a=4, n_steps=1, max_epochs=2, verbose=1, random_state=0
    )
    model.set_params(learning_rate_schedule="constant").fit(X, X[:, 0])
    model.partial_fit(X, X[:, 0])
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(" ")[0] for line in lines] == ["[1/2]", "[2/2]", "Stopped", "[3]"]
    assert lines[2] == "Stopped after epoch 2: max_epochs reached; kept the weights of the last epoch (2)."
    SparseTabNetPretrainer(n_d=4, n_a=4, n_steps=1, max_epochs=2, verbose=1, random_state=0).fit(X)
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(" ")[0] for line in lines] == ["[1/2]", "[2/2]", "Stopped"]


def test_verbose_2_without_rich_says_so_and_prints_the_lines(monkeypatch, capsys):
    monkeypatch.setattr(_progress, "_rich_installed", lambda: False)
    X, y = _data()
    with pytest.warns(UserWarning, match=r'verbose=2 draws a progress bar .*pip install "sparsetab\[progress\]"'):
        SparseTabNetClassifier(
            early_stopping=False, n_d=4, n_a=4, n_steps=1, max_epochs=2, verbose=2, random_state=0
        ).fit(X, y)
    lines = capsys.readouterr().out.splitlines()
    assert [bool(EPOCH_LINE.match(line)) for line in lines] == [True, True, False]


def test_verbose_2_draws_the_bar_with_rich(capsys, monkeypatch):
    pytest.importorskip("rich")
    monkeypatch.setattr(_progress, "_on_a_terminal", lambda: True)
    X, y = _data()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = SparseTabNetClassifier(
            early_stopping=False, n_d=4, n_a=4, n_steps=1, max_epochs=2, verbose=2, random_state=0
        ).fit(X, y)
    assert not [warning for warning in caught if "progress bar" in str(warning.message)]
    lines = [line for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert sum(bool(EPOCH_LINE.match(line)) for line in lines) == model.n_iter_ == 2


class Recorder:
    """A scikit-learn FitCallback that records its hooks, scores each epoch's fitted copy and can stop."""

    def __init__(self, stop_after=None):
        self.events, self.stop_after = [], stop_after

    def setup(self, estimator, context):
        self.events.append(("setup", context.task_name))

    def teardown(self, estimator, context):
        self.events.append(("teardown", context.task_name))

    def on_fit_task_begin(self, estimator, context, *, X=None, y=None):
        self.events.append(("begin", context.task_name, context.task_id, context.max_subtasks))

    def on_fit_task_end(self, estimator, context, *, X=None, y=None, fitted_estimator=None):
        score = None if fitted_estimator is None else fitted_estimator.score(X, y)
        self.events.append(("end", context.task_name, context.task_id, score))
        return context.task_name == "epoch" and context.task_id + 1 == self.stop_after


class PropagatedRecorder(Recorder):
    """The same, auto-propagated from a meta-estimator to the estimators it fits."""

    max_propagation_depth = None


def test_each_epoch_is_a_callback_task():
    X, y = _data()
    recorder = Recorder()
    model = SparseTabNetClassifier(
        early_stopping=False, n_d=4, n_a=4, n_steps=1, max_epochs=3, random_state=0
    ).set_callbacks(recorder)
    model.fit(X, y)
    events = recorder.events
    assert events[:2] == [("setup", "fit"), ("begin", "fit", 0, 3)] and events[-1] == ("teardown", "fit")
    epochs = [event for event in events if event[1] == "epoch"]
    assert [event[:3] for event in epochs] == [(kind, "epoch", k) for k in range(3) for kind in ("begin", "end")]
    # each epoch's fitted copy predicts with the network as trained so far; the last one is the model
    assert epochs[-1][3] == pytest.approx(model.score(X, y))
    assert events[-2] == ("end", "fit", 0, pytest.approx(model.score(X, y)))


def test_a_callback_can_stop_training_and_an_ensemble_has_every_members_epochs():
    X, y = _data()
    recorder = Recorder(stop_after=2)
    model = SparseTabNetClassifier(
        early_stopping=False, n_d=4, n_a=4, n_steps=1, max_epochs=5, random_state=0
    ).set_callbacks(recorder)
    assert model.fit(X, y).n_iter_ == 2
    recorder = Recorder()
    model = SparseTabNetClassifier(
        early_stopping=False, n_d=4, n_a=4, n_steps=1, max_epochs=2, n_ensemble=2, random_state=0
    )
    model.set_callbacks(recorder).fit(X, y)
    assert recorder.events[1] == ("begin", "fit", 0, 4)
    assert [event[2] for event in recorder.events if event[:2] == ("end", "epoch")] == [0, 1, 2, 3]


def test_the_refit_of_auto_epochs_are_tasks_of_the_same_fit():
    # 1,200 rows under early_stopping="auto": the first pass's epochs, then the refit's, under one root task
    # (opened for up to max_epochs per pass) that ends once, after the refit.
    X, y = _data(n_rows=1200)
    recorder = Recorder()
    model = SparseTabNetClassifier(n_d=4, n_a=4, n_steps=1, max_epochs=3, n_iter_no_change=1, random_state=0)
    model.set_callbacks(recorder).fit(X, y)
    events = recorder.events
    assert events[:2] == [("setup", "fit"), ("begin", "fit", 0, 6)] and events[-1] == ("teardown", "fit")
    assert [event[:2] for event in events].count(("end", "fit")) == 1 and events[-2][:2] == ("end", "fit")
    epochs = [event for event in events if event[:2] == ("end", "epoch")]
    assert len(epochs) == model.ensemble_n_iter_[1] + model.n_iter_  # the first pass's, then the refit's


def test_scoring_monitor_logs_one_score_per_epoch():
    X, y = _data()
    monitor = callback_api.ScoringMonitor(scoring="accuracy")
    model = SparseTabNetClassifier(
        early_stopping=False, n_d=4, n_a=4, n_steps=1, max_epochs=3, random_state=0
    ).set_callbacks(monitor)
    model.fit(X, y)
    log = monitor.get_logs()
    logs = log if isinstance(log, list) else [log]
    rows = [row for entry in logs for row in entry.data if row["task_name"] == "epoch"]
    assert len(rows) == 3 and all(0.0 <= row["accuracy"] <= 1.0 for row in rows)
    assert rows[-1]["accuracy"] == pytest.approx(model.score(X, y))


def test_callbacks_are_propagated_from_grid_search_and_not_stored_in_model_files(tmp_path):
    X, y = _data()
    recorder = PropagatedRecorder()
    estimator = SparseTabNetClassifier(early_stopping=False, n_d=4, n_a=4, n_steps=1, max_epochs=2, random_state=0)
    search = GridSearchCV(estimator, {"n_steps": [1, 2]}, cv=2).set_callbacks(recorder)
    search.fit(X, y)
    epoch_ends = [event for event in recorder.events if event[:2] == ("end", "epoch")]
    assert len(epoch_ends) == (2 * 2 + 1) * 2  # 2 candidates x 2 folds and the refit, 2 epochs each
    model = clone(estimator).set_callbacks(Recorder()).fit(X, y)
    loaded = load_model(model.save_model(tmp_path / "model.sparsetab"))
    assert not hasattr(loaded, "_skl_callbacks")
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_progress_bar_callback_under_grid_search_runs(capsys):
    pytest.importorskip("rich")
    X, y = _data()
    estimator = SparseTabNetClassifier(n_d=4, n_a=4, n_steps=1, max_epochs=2, random_state=0)
    search = GridSearchCV(estimator, {"n_steps": [1, 2]}, cv=2)
    search.set_callbacks(callback_api.ProgressBar(max_propagation_depth=None)).fit(X, y)
    assert search.best_params_["n_steps"] in (1, 2)


def test_verbose_2_draws_no_bar_into_a_log(capsys):
    # Standard output captured (not a terminal): the lines alone, no blank lines from a redrawn bar.
    X, y = _data()
    SparseTabNetClassifier(early_stopping=False, n_d=4, n_a=4, n_steps=1, max_epochs=2, verbose=2, random_state=0).fit(
        X, y
    )
    lines = capsys.readouterr().out.splitlines()
    assert [bool(EPOCH_LINE.match(line)) for line in lines] == [True, True, False]
