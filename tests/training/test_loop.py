import itertools
import warnings

import pytest
import torch
from sklearn.exceptions import ConvergenceWarning

import sparsetab._base as base
import sparsetab.entmax._threshold_kernels as kernels
from sparsetab import SparseTabNetClassifier
from sparsetab._host_syncs import SyncCounter
from sparsetab._training.batches import _batches
from sparsetab._training.loop import (
    MIN_PATIENCE_STEPS,
    TensorBatches,
    TrainingObserver,
    learning_rate_factor,
    patience_epochs,
    train_network,
)
from sparsetab.network import TabNet


def _problem(n_rows=40, virtual_batch_size=16):
    generator = torch.Generator().manual_seed(0)
    X = torch.randn(n_rows, 3, generator=generator)
    y = (X[:, 0] > 0).long()
    torch.manual_seed(0)
    network = TabNet([None] * 3, [1] * 3, output_dim=2, n_d=4, n_a=4, n_steps=2, virtual_batch_size=virtual_batch_size)
    return network, X, y


def _cross_entropy(output, target):
    return torch.nn.functional.cross_entropy(output, target, reduction="none")


def _train(network, X, y, config, generator=None, score_function=None, state=None, weights=None, loss=_cross_entropy):
    """train_network with unit sample weights, cross-entropy and a fresh generator unless given."""
    weights = torch.ones(len(X)) if weights is None else weights
    generator = torch.Generator() if generator is None else generator
    return train_network(network, loss, X, y, weights, config, generator, score_function, state)


@pytest.mark.parametrize(
    "n_rows, batch_size, sizes", [(2049, 1024, [683, 683, 683]), (1025, 1024, [513, 512]), (50, 1024, [50])]
)
def test_batches_are_balanced_and_cover_every_row(n_rows, batch_size, sizes):
    batches = _batches(n_rows, batch_size, torch.Generator().manual_seed(0), "cpu")
    assert [len(batch) for batch in batches] == sizes
    assert torch.equal(torch.cat(batches).sort().values, torch.arange(n_rows))


def test_a_batches_source_trains_as_the_tensors_it_holds(make_training_config):
    # Another source of batches (streamed rows, one process's shard) plugs in through `batches`: the
    # in-memory source given explicitly trains bit for bit as X, y and sample_weight, and the loop asks
    # it for the steps of an epoch.
    config = make_training_config(max_epochs=2, batch_size=16)
    network, X, y = _problem(40)
    reference = _train(network, X, y, config, generator=torch.Generator().manual_seed(3))

    class CountingBatches(TensorBatches):
        epochs = 0

        def epoch(self, batch_size, generator):
            CountingBatches.epochs += 1
            yield from super().epoch(batch_size, generator)

    source = CountingBatches(X, y, torch.ones(len(X)))
    assert source.steps_per_epoch(16) == 3
    network_again, *_ = _problem(40)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        history = train_network(
            network_again, _cross_entropy, None, None, None, config, torch.Generator().manual_seed(3), batches=source
        )
    assert CountingBatches.epochs == 2
    assert history.loss_curve == reference.loss_curve
    for ours, theirs in zip(network_again.state_dict().values(), network.state_dict().values()):
        assert torch.equal(ours, theirs)


def test_training_set_smaller_than_batch_size_takes_one_step_per_epoch(make_training_config):
    network, X, y = _problem(40)
    before = [parameter.detach().clone() for parameter in network.parameters()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        history = _train(network, X, y, make_training_config(max_epochs=3))
    assert len(history.loss_curve) == 3
    assert all(loss > 0 for loss in history.loss_curve)
    assert any(not torch.equal(old, new) for old, new in zip(before, network.parameters()))


def test_sample_weight_scales_the_loss(make_training_config):
    # One virtual batch, so that the (shuffled) row order does not change the batch statistics.
    network, X, y = _problem(40, virtual_batch_size=64)
    weights = torch.zeros(40)
    weights[:20] = 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        history = _train(network, X, y, make_training_config(max_epochs=1, lambda_sparse=0.0), weights=weights)
    network_again, *_ = _problem(40, virtual_batch_size=64)
    network_again.train()
    with torch.no_grad():
        expected = _cross_entropy(network_again(X)[0], y)[:20].mean()
    assert history.loss_curve[0] == pytest.approx(float(expected), rel=1e-5)


def test_the_gate_regulariser_enters_the_objective_with_lambda_gate(make_training_config):
    # One batch of one virtual batch: the first epoch's objective is that of the starting weights.
    _, X, y = _problem(40)

    def gated_network():
        torch.manual_seed(0)
        return TabNet([None] * 3, [1] * 3, 2, n_d=4, n_a=4, n_steps=2, virtual_batch_size=64, step_gates="sigmoid")

    with torch.no_grad():
        output, _, _, gate_loss = gated_network().train()(X)
        task_loss = _cross_entropy(output, y).mean()
    config = make_training_config(max_epochs=1, lambda_sparse=0.0, lambda_gate=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        history = _train(gated_network(), X, y, config)
    assert float(gate_loss) > 0
    assert history.loss_curve[0] == pytest.approx(float(task_loss + 0.5 * gate_loss), rel=1e-5)


def test_non_finite_loss_stops_restores_and_warns(make_training_config):
    network, X, y = _problem(40)
    state = {name: value.clone() for name, value in network.state_dict().items()}

    def exploding(output, target):
        return _cross_entropy(output, target) * float("nan")

    with pytest.warns(RuntimeWarning, match="non-finite at epoch 1"):
        history = _train(network, X, y, make_training_config(), loss=exploding)
    assert history.diverged and history.loss_curve == []
    for name, value in network.state_dict().items():
        assert torch.equal(value, state[name]), name


def test_convergence_warning_when_max_epochs_reached(make_training_config):
    network, X, y = _problem(40)
    with pytest.warns(ConvergenceWarning, match="max_epochs=2 reached"):
        _train(network, X, y, make_training_config(max_epochs=2))


def test_a_chosen_number_of_epochs_ends_without_a_warning(make_training_config):
    # fixed_epochs: the refit of early_stopping="auto" trains for a count chosen on held-out rows; reaching
    # it is the plan, not a sign that more epochs would help (the same fit without the flag warns).
    network, X, y = _problem(40)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        history = _train(network, X, y, make_training_config(max_epochs=2, fixed_epochs=True))
    assert len(history.loss_curve) == 2 and history.stop_reason == "chosen_epochs"


@pytest.mark.parametrize(
    "scores, warning, message",
    [
        # Held-out score peaked at epoch 2 and fell for 11 epochs (>= n_iter_no_change): overfitting, so
        # no advice to train longer.
        ([0.1, 0.5, 0.3, 0.2, 0.1, 0.0, -0.1, -0.2, -0.3, -0.4, -0.5, -0.6, -0.7], UserWarning, "peaked at epoch 2"),
        # Peaked 9 epochs before the end: inside the patience stretched to 200 steps (10 epochs) but past the
        # user's n_iter_no_change of 3, which is what the advice reads.
        ([0.1, 0.2, 0.3, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.0], UserWarning, "peaked at epoch 4"),
        # Peaked 2 epochs before the end (< n_iter_no_change): the scores may still be improving.
        ([0.1 * epoch for epoch in range(11)] + [0.9, 0.8], ConvergenceWarning, "Consider raising"),
        # Held-out score still rising: more epochs may help.
        ([0.1 * epoch for epoch in range(13)], ConvergenceWarning, "Consider raising max_epochs"),
    ],
)
def test_the_max_epochs_warning_reads_the_validation_scores(make_training_config, scores, warning, message):
    # 40 rows in batches of 2: 20 steps an epoch, so the patience is max(3, ceil(200 / 20)) = 10 epochs.
    # The training loss is monitored (early_stopping=False); a tol of 0 and 13 epochs leave it improving.
    network, X, y = _problem(40, virtual_batch_size=2)
    values = iter(scores)
    config = make_training_config(max_epochs=13, batch_size=2, early_stopping=False, n_iter_no_change=3, tol=0.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        history = _train(network, X, y, config, score_function=lambda: next(values))
    assert not history.converged and history.validation_scores == scores
    raised = [item for item in caught if issubclass(item.category, (UserWarning, ConvergenceWarning))]
    assert len(raised) == 1 and raised[0].category is warning and message in str(raised[0].message)


def test_early_stopping_restores_the_best_epoch(make_training_config):
    # 40 rows in batches of 2: 20 steps an epoch, so the patience is max(3, ceil(200 / 20)) = 10 epochs.
    network, X, y = _problem(40, virtual_batch_size=2)
    scores = iter([0.1, 0.5, 0.3, 0.2, 0.1, 0.0, -0.1, -0.2, -0.3, -0.4, -0.5, -0.6, -0.7])
    snapshots = []

    def score_function():
        snapshots.append({name: value.clone() for name, value in network.state_dict().items()})
        return next(scores)

    history = _train(
        network,
        X,
        y,
        make_training_config(max_epochs=13, batch_size=2, early_stopping=True, n_iter_no_change=3),
        score_function=score_function,
    )
    assert history.validation_scores == [0.1, 0.5, 0.3, 0.2, 0.1, 0.0, -0.1, -0.2, -0.3, -0.4, -0.5, -0.6]
    assert history.best_iteration == 1 and history.converged
    for name, value in network.state_dict().items():
        assert torch.equal(value, snapshots[1][name]), name


def test_one_call_equals_epochs_continued_with_the_optimizer_state(make_training_config):
    network, X, y = _problem(40)
    config = make_training_config(max_epochs=1, learning_rate_decay=0.5, incremental=True)
    generator = torch.Generator().manual_seed(0)
    losses, state = [], None
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # incremental calls never warn about convergence
        for _ in range(3):
            history = _train(network, X, y, config, generator, state=state)
            losses += history.loss_curve
            state = history.optimizer_state
    assert state["param_groups"][0]["lr"] == pytest.approx(0.02 * 0.5**3)  # the decay continued
    reference, *_ = _problem(40)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        history = _train(
            reference,
            X,
            y,
            make_training_config(max_epochs=3, learning_rate_decay=0.5),
            generator=torch.Generator().manual_seed(0),
        )
    assert losses == pytest.approx(history.loss_curve, rel=1e-6)
    for (name, value), other in zip(network.state_dict().items(), reference.state_dict().values()):
        torch.testing.assert_close(value, other, msg=name)


def test_incremental_ignores_early_stopping_and_patience(make_training_config):
    network, X, y = _problem(40)
    history = _train(
        network,
        X,
        y,
        make_training_config(max_epochs=1, early_stopping=True, n_iter_no_change=1, incremental=True),
        score_function=lambda: 0.0,
    )
    assert len(history.loss_curve) == 1 and not history.converged and history.validation_scores == [0.0]


def test_keyboard_interrupt_restores_the_best_weights_and_warns(make_training_config):
    network, X, y = _problem(40)
    snapshots, scores = [], iter([0.5, 0.1])

    def score_function():
        score = next(scores, None)
        if score is None:
            raise KeyboardInterrupt
        snapshots.append({name: value.clone() for name, value in network.state_dict().items()})
        return score

    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        with pytest.warns(UserWarning, match=r"after 2 complete epoch\(s\).*weights of epoch 1 \(best validation"):
            history = _train(
                network, X, y, make_training_config(max_epochs=10, early_stopping=True), score_function=score_function
            )
    assert history.interrupted and not history.converged
    assert len(history.loss_curve) == 2 and history.validation_scores == [0.5, 0.1]
    assert len(history.alpha_history) == 2 and history.best_iteration == 0
    assert not network.training
    for name, value in network.state_dict().items():
        assert torch.equal(value, snapshots[0][name]), name


class _Recorder(TrainingObserver):
    """Keeps what train_network reports; stops after epoch ``stop_after``; interrupts in epoch ``interrupt_in``."""

    def __init__(self, stop_after=None, interrupt_in=None):
        self.calls, self.records, self.stop_after, self.interrupt_in = [], [], stop_after, interrupt_in

    def epoch_begin(self, epoch, n_steps):
        self.calls.append(("begin", epoch, n_steps))
        self.epoch = epoch

    def step_end(self):
        self.calls.append(("step",))
        if self.epoch == self.interrupt_in:
            raise KeyboardInterrupt

    def epoch_end(self, record):
        self.calls.append(("end", record.epoch))
        self.records.append(record)
        return record.epoch == self.stop_after

    def epoch_abandoned(self):
        self.calls.append(("abandoned",))

    def training_end(self, history, patience):
        self.calls.append(("training end", history.stop_reason, history.kept_epoch, patience))


def test_the_observer_hears_every_epoch_and_step(make_training_config):
    network, X, y = _problem(40)  # 40 rows, batch 16: 3 steps an epoch
    recorder = _Recorder()
    scores = iter([0.5, 0.7, 0.6])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        history = train_network(
            network,
            _cross_entropy,
            X,
            y,
            torch.ones(len(X)),
            make_training_config(max_epochs=3, batch_size=16, early_stopping=True, epoch_offset=5),
            torch.Generator(),
            lambda: next(scores),
            observer=recorder,
        )
    epoch = [("begin", 6, 3), ("step",), ("step",), ("step",), ("end", 6)]
    assert recorder.calls[:5] == epoch and len(recorder.calls) == 16
    assert recorder.calls[-1] == ("training end", "max_epochs", 7, 100)  # patience max(100, ceil(200 / 3))
    assert [(r.epoch, r.last_epoch, r.validation_score, r.best) for r in recorder.records] == [
        (6, 8, 0.5, True),
        (7, 8, 0.7, True),
        (8, 8, 0.6, False),
    ]
    assert [r.train_loss for r in recorder.records] == pytest.approx(history.loss_curve, rel=1e-12)
    assert all(r.seconds >= 0 for r in recorder.records)
    assert history.kept_epoch == 7 and history.best_iteration == 1  # the best epoch's weights, restored


@pytest.mark.parametrize(
    "options, observer, reason, kept",
    [
        # tol so large that only the first epoch improves (on -inf); 3 steps an epoch: a patience of
        # ceil(200 / 3) = 67 epochs, so training stops after epoch 68 and keeps its weights (no early stopping)
        (dict(max_epochs=200, tol=1e9, n_iter_no_change=1), {}, "no_improvement", 68),
        (dict(max_epochs=4), dict(stop_after=2), "callback", 2),
        (dict(max_epochs=4), dict(interrupt_in=3), "interrupted", None),  # the weights part-way through epoch 3
        (dict(max_epochs=1, incremental=True), {}, "partial_fit", 1),
    ],
)
def test_stop_reason_and_kept_epoch(make_training_config, options, observer, reason, kept):
    network, X, y = _problem(40)
    recorder = _Recorder(**observer)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        history = train_network(
            network,
            _cross_entropy,
            X,
            y,
            torch.ones(len(X)),
            make_training_config(batch_size=16, **options),
            torch.Generator(),
            observer=recorder,
        )
    assert (history.stop_reason, history.kept_epoch) == (reason, kept)
    assert recorder.calls[-1][:3] == ("training end", reason, kept)
    assert (("abandoned",) in recorder.calls) == (reason == "interrupted")


def test_a_non_finite_loss_reports_the_epoch_it_restored(make_training_config):
    network, X, y = _problem(40)
    recorder = _Recorder()
    losses = itertools.chain([1.0] * 6, itertools.repeat(float("nan")))  # the 7th step, in epoch 3, and after

    def loss(output, target):
        return _cross_entropy(output, target) * 0 + next(losses)

    with pytest.warns(RuntimeWarning, match="non-finite at epoch 3"):
        history = train_network(
            network,
            loss,
            X,
            y,
            torch.ones(len(X)),
            make_training_config(max_epochs=5, batch_size=16),
            torch.Generator(),
            observer=recorder,
        )
    assert (history.stop_reason, history.kept_epoch, history.diverged) == ("non_finite", 2, True)
    assert recorder.calls[-2:] == [("abandoned",), ("training end", "non_finite", 2, 100)]


@pytest.mark.parametrize(
    "n_iter_no_change, steps_per_epoch, expected", [(10, 4, 50), (10, 29, 10), (3, 20, 10), (10, 200, 10), (1, 1, 200)]
)
def test_patience_is_at_least_200_steps(n_iter_no_change, steps_per_epoch, expected):
    assert MIN_PATIENCE_STEPS == 200
    assert patience_epochs(n_iter_no_change, steps_per_epoch) == expected


def test_a_few_batches_per_epoch_are_not_stopped_after_a_few_dozen_steps(make_training_config):
    # 4 steps an epoch: an epoch-counted patience of 10 would stop at epoch 11 (44 steps); 200 steps need 50 epochs.
    network, X, y = _problem(40, virtual_batch_size=10)
    scores = iter([1.0] + [0.0] * 60)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        history = _train(
            network,
            X,
            y,
            make_training_config(max_epochs=60, batch_size=10, early_stopping=True, n_iter_no_change=10),
            score_function=lambda: next(scores),
        )
    assert len(history.validation_scores) == 51 and history.converged and history.best_iteration == 0


@pytest.mark.parametrize(
    "schedule, progress, expected",
    [
        ("constant", 0.5, 1.0),
        ("constant", 37.0, 1.0),
        ("exponential", 0.25, 1.0),  # a step of epoch 0
        ("exponential", 1.0, 1.0),  # the last step of epoch 0
        ("exponential", 1.5, 0.5),
        ("exponential", 3.0, 0.25),
        ("cosine", 0.0, 1.0),
        ("cosine", 5.0, 0.5),  # half-way through 10 epochs: (1 + cos(pi / 2)) / 2
        ("cosine", 2.5, (1 + 2**-0.5) / 2),
        ("cosine", 10.0, 0.0),
        ("cosine", 12.0, 0.0),  # past the end (partial_fit): stays at 0
    ],
)
def test_learning_rate_factor_without_warmup(schedule, progress, expected):
    factor = learning_rate_factor(schedule, progress, warmup_epochs=0, schedule_epochs=10, decay=0.5)
    assert factor == pytest.approx(expected, abs=1e-12)


def test_warmup_is_linear_and_the_cosine_starts_after_it():
    def factor(schedule, progress):
        return learning_rate_factor(schedule, progress, warmup_epochs=2, schedule_epochs=12, decay=0.5)

    assert factor("constant", 0.5) == pytest.approx(0.25)
    assert factor("constant", 2.0) == pytest.approx(1.0)
    assert factor("cosine", 1.0) == pytest.approx(0.5)
    assert factor("cosine", 2.0) == pytest.approx(1.0)
    assert factor("cosine", 7.0) == pytest.approx(0.5)  # half of the 10 post-warm-up epochs
    assert factor("exponential", 1.5) == pytest.approx(0.75 * 0.5)


def test_the_optimizer_gets_the_scheduled_rate_at_every_step(make_training_config, monkeypatch):
    network, X, y = _problem(40, virtual_batch_size=10)
    rates = []
    original_step = torch.optim.Adam.step

    def recording_step(self, *args, **kwargs):
        rates.append(self.param_groups[0]["lr"])
        return original_step(self, *args, **kwargs)

    monkeypatch.setattr(torch.optim.Adam, "step", recording_step)
    config = make_training_config(
        max_epochs=3, batch_size=10, learning_rate=0.1, learning_rate_schedule="cosine", warmup_epochs=1
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        _train(network, X, y, config)
    expected = [0.1 * learning_rate_factor("cosine", (k + 1) / 4, warmup_epochs=1, schedule_epochs=3, decay=1.0)
                for k in range(12)]  # fmt: skip
    assert rates == pytest.approx(expected, rel=1e-12)
    assert rates[:4] == pytest.approx([0.025, 0.05, 0.075, 0.1]) and rates[-1] == pytest.approx(0.0, abs=1e-12)


def test_weight_decay_is_decoupled_and_shrinks_the_weights(make_training_config):
    # Same data and seed: with AdamW the weights end smaller than with Adam.
    norms = {}
    for weight_decay in (0.0, 0.5):
        network, X, y = _problem(40)
        config = make_training_config(max_epochs=5, weight_decay=weight_decay, learning_rate=0.05)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            history = _train(network, X, y, config)
        norms[weight_decay] = float(sum(p.detach().square().sum() for p in network.parameters()))
        assert history.optimizer_state["param_groups"][0]["weight_decay"] == weight_decay
    assert norms[0.5] < norms[0.0]


def test_partial_fit_past_the_end_of_a_cosine_schedule_warns(make_training_config):
    network, X, y = _problem(40)
    config = make_training_config(
        max_epochs=1, learning_rate_schedule="cosine", incremental=True, schedule_epochs=3, schedule_offset=3
    )
    before = [parameter.detach().clone() for parameter in network.parameters()]
    with pytest.warns(UserWarning, match="cosine learning-rate schedule ended after max_epochs=3"):
        _train(network, X, y, config)
    # Learning rate 0: Adam moves nothing (batch norm statistics still update).
    assert all(torch.equal(old, new) for old, new in zip(before, network.parameters()))


def test_a_warmup_longer_than_half_the_schedule_is_cut_to_half_of_it():
    # max_epochs=2 with 5 warm-up epochs: the warm-up lasts 1 epoch, and the cosine still anneals to 0.
    def factor(progress):
        return learning_rate_factor("cosine", progress, warmup_epochs=5, schedule_epochs=2, decay=1.0)

    assert factor(0.5) == pytest.approx(0.5)
    assert factor(1.0) == pytest.approx(1.0)
    assert factor(1.5) == pytest.approx(0.5)
    assert factor(2.0) == pytest.approx(0.0, abs=1e-12)


def _host_reads_in_fit(entmax_mode, epochs, monkeypatch, step_gates=None):
    """Value reads inside the fit loop (``SyncCounter``): ``{"maps": n, "elsewhere": n}`` by sparsetab source."""
    counter = SyncCounter()
    real_train = base.train_network

    def train(*args, **kwargs):
        with counter.counting(locations=True):
            return real_train(*args, **kwargs)

    X = torch.randn(1024, 8, generator=torch.Generator().manual_seed(0)).numpy()
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    model = SparseTabNetClassifier(
        n_d=8,
        n_a=8,
        n_steps=3,
        entmax_mode=entmax_mode,
        entmax_alpha=1.3,
        batch_size=256,
        virtual_batch_size=128,
        max_epochs=epochs,
        early_stopping=False,
        random_state=0,
        step_gates=step_gates,
    )
    with monkeypatch.context() as patch, warnings.catch_warnings():
        patch.setattr(base, "train_network", train)
        warnings.simplefilter("ignore")
        model.fit(X, y)
    reads = {"maps": 0, "elsewhere": 0}
    for (kind, where), calls in counter.counts.items():
        if kind == "value_read" and where != "outside sparsetab":
            reads["maps" if where.startswith("entmax/") else "elsewhere"] += calls
    return reads


@pytest.mark.parametrize("entmax_mode", ["sparsemax", "entmax15", "constant"])
def test_with_blocked_convergence_tests_a_training_step_reads_the_host_only_in_the_maps(entmax_mode, monkeypatch):
    # Counted on the CPU over epochs 2-3 (a 3-epoch fit minus a 1-epoch fit), with the convergence tests made
    # as off the CPU: the loop itself reads once an epoch (the loss, the finiteness test and the alphas
    # together). The sort-free sparsemax and 1.5-entmax (kept on the CPU here: a GPU sorts instead, see
    # test_host_reads.py) read at most once per block of passes, and rows like these settle within two
    # blocks; alpha-entmax makes a fixed number of evaluations and reads nothing.
    monkeypatch.setattr(kernels, "PER_PASS_TEST_DEVICES", frozenset())
    one, three = (_host_reads_in_fit(entmax_mode, epochs, monkeypatch) for epochs in (1, 3))
    steps = 2 * 4  # two more epochs of 1024 / 256 steps
    assert three["elsewhere"] - one["elsewhere"] == 2
    if entmax_mode == "constant":
        assert three["maps"] - one["maps"] == 0
    else:
        assert steps * 3 <= three["maps"] - one["maps"] <= steps * 3 * 2  # 3 attention maps per step


def test_step_gates_add_no_host_read_to_a_training_step(monkeypatch):
    # The gates and their regulariser stay on the device: outside the maps, still one read an epoch.
    monkeypatch.setattr(kernels, "PER_PASS_TEST_DEVICES", frozenset())
    one, three = (_host_reads_in_fit("entmax15", epochs, monkeypatch, "sigmoid") for epochs in (1, 3))
    assert three["elsewhere"] - one["elsewhere"] == 2
