"""The fit loop: epochs of mini-batch steps under a learning-rate schedule, watched by early stopping.

Nothing here knows about scikit-learn; the estimator passes tensors, a per-sample loss and,
when early stopping or validation is on, a function that scores the current network. The pieces
live beside it: the records (:mod:`.records`), the optimiser and its schedule (:mod:`.schedule`),
the batches (:mod:`.batches`) and the monitored score (:mod:`.early_stopping`); their names are
importable from here too, as they were before they moved (pickles of earlier releases name them here).
"""

import contextlib
import math
import time

import torch

from .._warnings import warn
from .batches import SINGLE_PROCESS, SingleProcess, TensorBatches
from .compiled import compiled_training
from .early_stopping import MIN_PATIENCE_STEPS, EarlyStopping, patience_epochs, snapshot, warn_at_max_epochs
from .flat_parameters import FlatParameters
from .records import STOP_REASONS, EpochRecord, ObserverGroup, TrainingConfig, TrainingHistory, TrainingObserver
from .schedule import LEARNING_RATE_SCHEDULES, LearningRateSchedule, learning_rate_factor, make_optimizer
from .step_graphs import StepGraphs, captures_steps
from .weight_average import WeightAverage

__all__ = [
    "LEARNING_RATE_SCHEDULES",
    "MIN_PATIENCE_STEPS",
    "STOP_REASONS",
    "EpochRecord",
    "ObserverGroup",
    "SingleProcess",
    "TensorBatches",
    "TrainingConfig",
    "TrainingHistory",
    "TrainingObserver",
    "learning_rate_factor",
    "member_mean_loss",
    "patience_epochs",
    "train_network",
]


def _all_finite(network):
    # One check over every floating weight and buffer (integer buffers cannot hold inf or NaN), left on the device.
    values = [value.reshape(-1) for value in network.state_dict().values() if value.is_floating_point()]
    return torch.isfinite(torch.cat(values)).all()


def member_mean_loss(loss_function, output, target, n_members):
    """Per-row losses of a network's output, averaged over its efficient members.

    Each efficient member is trained on its own loss, and the objective is their mean (TabM,
    Gorishniy et al., ICLR 2025, section 3), not the loss of the averaged prediction.

    Parameters
    ----------
    loss_function : callable
        ``loss_function(output, target) -> torch.Tensor of shape (rows,)``, per-row losses.
    output : torch.Tensor of shape (n_members * batch, output_dim)
        The network's output, member-major (see :class:`~sparsetab.network.TabNet`).
    target : torch.Tensor of shape (batch, ...)
        The targets of the batch's rows, in the form ``loss_function`` expects.
    n_members : int
        The network's ``n_efficient_members``; 1 is ``loss_function(output, target)`` itself.

    Returns
    -------
    torch.Tensor of shape (batch,)
        Each row's loss, the mean over the members of their loss on it.
    """
    if n_members == 1:
        return loss_function(output, target)
    repeated = target.repeat(n_members, *([1] * (target.dim() - 1)))
    return loss_function(output, repeated).reshape(n_members, -1).mean(dim=0)


def _weight_average(config, tensors, steps_per_epoch):
    """The average of the weights a run scores and keeps, or None (see :mod:`.weight_average`).

    None where ``config.weight_averaging_epochs`` is None, and for one ``partial_fit`` epoch: averaged over
    a single epoch a call, the weights would be pulled back towards the call's start every call.
    """
    if config.weight_averaging_epochs is None or config.incremental:
        return None
    return WeightAverage(tensors, max(1.0, config.weight_averaging_epochs * steps_per_epoch))


class _TrainingStep:
    """One optimiser step on a batch: forward, the weighted objective, backward, reduction, clipping, update."""

    def __init__(
        self, network, loss_function, config, replicas, optimizer, parameters, flat, average=None, forward=None
    ):
        self.network, self.loss_function, self.config, self.replicas = network, loss_function, config, replicas
        # What runs the network's forward: the network itself, or its compiled form (torch_compile).
        self.forward = network if forward is None else forward
        self.optimizer, self.parameters, self.flat = optimizer, parameters, flat
        self.optimized = parameters if flat is None else [flat.flat]
        self.n_members = getattr(network, "n_efficient_members", 1)
        self.average = average

    def __call__(self, X_batch, y_batch, weight):
        """Update the network on one batch; return its objective and its weight (tensors on the device)."""
        objective, batch_weight = self.train(X_batch, y_batch, weight)
        if self.average is not None:
            self.average.update()
        return objective, batch_weight

    def train(self, X_batch, y_batch, weight):
        """The step without the weight average's update: forward, objective, backward, clipping, optimizer."""
        config = self.config
        # A network with step gates also returns its gate regulariser.
        output, _, sparsity_loss, *gate_loss = self.forward(X_batch)
        batch_weight, row_share = self.replicas.batch_normalisers(weight.sum(), X_batch.shape[0])
        loss = (member_mean_loss(self.loss_function, output, y_batch, self.n_members) * weight).sum() / batch_weight
        if row_share is not None:
            sparsity_loss = sparsity_loss * row_share
            gate_loss = [term * row_share for term in gate_loss]
        objective = loss + config.lambda_sparse * sparsity_loss
        if gate_loss:
            objective = objective + config.lambda_gate * gate_loss[0]
        if self.flat is not None:
            self.flat.zero_gradients()
        else:
            for parameter in self.parameters:  # what optimizer.zero_grad(set_to_none=True) does, without its hooks
                parameter.grad = None
        objective.backward()
        self.replicas.reduce_gradients(self.optimized)
        if config.max_grad_norm is not None:
            torch.nn.utils.clip_grad_norm_(self.optimized, config.max_grad_norm, foreach=True)
        self.optimizer.step()
        return objective, batch_weight


class _TrainingRun:
    """The epochs of one ``train_network`` call: each trained, checked, scored and recorded in its history."""

    def __init__(self, network, data, config, generator, score_function, observer, replicas, step, schedule):
        self.network, self.data, self.config, self.generator = network, data, config, generator
        self.score_function, self.observer, self.replicas = score_function, observer, replicas
        self.step, self.schedule = step, schedule
        self.average = step.average
        self.steps_per_epoch = schedule.steps_per_epoch
        self.history = TrainingHistory(validation_scores=[] if score_function is not None else None)
        self.history.kept_epoch = config.epoch_offset
        self.last_epoch = None if config.incremental else config.epoch_offset + config.max_epochs
        patience = patience_epochs(config.n_iter_no_change, self.steps_per_epoch)
        self.monitor = EarlyStopping(config.early_stopping and not config.incremental, patience, config.tol)

    def _epoch_loss(self, epoch):
        """Train the network on one epoch's batches; return the mean objective over them (a tensor, not read)."""
        config = self.config
        if self.average is not None:  # training continues from the trained weights, not from their average
            self.average.use_trained()
        total, total_weight = 0.0, 0.0
        for index, (X_batch, y_batch, weight) in enumerate(self.data.epoch(config.batch_size, self.generator)):
            self.schedule.before_step(epoch, index)
            objective, batch_weight = self.step(X_batch, y_batch, weight)
            # Kept on the device and read once an epoch: reading a value each step would make the host
            # wait for the device at every step. A non-finite step poisons the sum, so the check after
            # the epoch also catches it (the epoch's weights are then dropped for its start's).
            total = total + objective.detach().double() * batch_weight.double()
            total_weight = total_weight + batch_weight.double()
            self.observer.step_end()
        self.replicas.synchronise(self.network)
        return self.replicas.sum_over_processes(total) / total_weight

    def run_epoch(self, epoch):
        """Train, check, score and record this call's epoch ``epoch`` (0-based); return whether training stops."""
        config, network, history, monitor = self.config, self.network, self.history, self.monitor
        started = time.perf_counter()
        self.observer.epoch_begin(config.epoch_offset + epoch + 1, self.steps_per_epoch)
        epoch_start_state = snapshot(network)
        network.train()
        # The epoch's one read from the device: its loss, whether every weight and statistic is finite (a finite
        # loss can still leave overflowed weights or batch norm statistics behind) and the steps' alphas.
        loss = self._epoch_loss(epoch)
        if self.average is not None:  # the average is what is checked, scored and kept
            self.average.use_average()
        read = torch.cat([torch.stack([loss.double(), _all_finite(network).double()]), network.alpha_values()])
        epoch_loss, finite, *alphas = read.tolist()
        history.diverged = not math.isfinite(epoch_loss) or finite != 1.0
        if history.diverged:
            self._abandon_diverged(epoch, epoch_start_state)
            return True
        self.schedule.after_epoch()
        # The epoch is recorded only once complete, so an interrupt leaves consistent lists.
        epoch_score = float(self.score_function()) if self.score_function is not None else None
        history.loss_curve.append(epoch_loss)
        history.alpha_history.append(alphas)
        if self.score_function is not None:
            history.validation_scores.append(epoch_score)
        score = epoch_score if monitor.restore_best else -epoch_loss
        if math.isnan(score):
            warn(
                f"The validation score is NaN at epoch {config.epoch_offset + epoch + 1} (e.g. a metric "
                "undefined on the validation rows); it counts as no improvement.",
                RuntimeWarning,
            )
        improved = monitor.update(score, network)
        if improved:
            history.best_iteration = epoch
        if not monitor.restore_best or improved:
            history.kept_epoch = config.epoch_offset + epoch + 1
        record = EpochRecord(
            epoch=config.epoch_offset + epoch + 1,
            last_epoch=self.last_epoch,
            train_loss=epoch_loss,
            validation_score=epoch_score,
            best=improved,
            seconds=time.perf_counter() - started,
        )
        if self.observer.epoch_end(record):
            history.converged, history.stop_reason = True, "callback"
            return True
        if not config.incremental and monitor.out_of_patience:
            history.converged, history.stop_reason = True, "no_improvement"
            return True
        return False

    def _abandon_diverged(self, epoch, epoch_start_state):
        """A non-finite epoch: restore the best weights, or the epoch's starting ones, and say so."""
        config, history, monitor = self.config, self.history, self.monitor
        self.observer.epoch_abandoned()
        history.stop_reason = "non_finite"
        if monitor.best_state is None:
            history.kept_epoch = config.epoch_offset + epoch  # the weights the epoch started from
        self.network.load_state_dict(monitor.best_state if monitor.best_state is not None else epoch_start_state)
        warn(
            "The training loss or the weights became non-finite at epoch "
            f"{config.epoch_offset + epoch + 1}; training stopped and the last finite weights were "
            "restored. Lower learning_rate or set max_grad_norm.",
            RuntimeWarning,
        )

    def keep_after_interrupt(self):
        """A KeyboardInterrupt: keep the epochs done so far (the best weights under early stopping), and say so."""
        config, history, monitor = self.config, self.history, self.monitor
        self.observer.epoch_abandoned()
        history.interrupted, history.stop_reason = True, "interrupted"
        if not monitor.has_best:
            history.kept_epoch = None  # the weights as they were, part-way through an epoch
        kept = (
            f"the weights of epoch {config.epoch_offset + history.best_iteration + 1} (best validation score) were "
            "restored"
            if monitor.has_best
            else "the current weights were kept"
        )
        warn(
            f"Training interrupted by the user (KeyboardInterrupt) after {len(history.loss_curve)} complete "
            f"epoch(s) of this call; {kept} and the model is usable. Call fit again to train from scratch.",
            UserWarning,
        )

    def finish(self):
        """Restore the best weights under early stopping, leave the network in evaluation mode, warn if due."""
        config, history, monitor = self.config, self.history, self.monitor
        if self.average is not None:
            self.average.keep()
            history.kept_average = history.kept_epoch not in (None, config.epoch_offset)
        if monitor.has_best and not history.diverged:
            self.network.load_state_dict(monitor.best_state)
        if config.incremental and history.stop_reason == "max_epochs":
            history.stop_reason = "partial_fit"
        if config.fixed_epochs and history.stop_reason == "max_epochs":
            history.stop_reason = "chosen_epochs"  # the count held-out rows chose, not the user's max_epochs
        self.network.eval()
        if not (
            history.converged or history.diverged or history.interrupted or config.incremental or config.fixed_epochs
        ):
            warn_at_max_epochs(history, config, monitor.restore_best, monitor.patience)
        self.observer.training_end(history, monitor.patience)


def train_network(
    network,
    loss_function,
    X,
    y,
    sample_weight,
    config,
    generator,
    score_function=None,
    optimizer_state=None,
    observer=None,
    batches=None,
    replicas=None,
):
    """Train ``network`` in place and return its history.

    Parameters
    ----------
    network : sparsetab.network.TabNet
        The model; its forward returns ``(output, masks, sparsity_loss)``, or
        ``(output, masks, sparsity_loss, gate_loss)`` with step gates.
    loss_function : callable
        ``loss_function(output, target) -> torch.Tensor of shape (batch,)``, per-sample losses.
    X : torch.Tensor of shape (n_samples, n_columns), float32, or None
        The training rows; None when ``batches`` is given.
    y : torch.Tensor of shape (n_samples, ...) or None
        Targets in the form ``loss_function`` expects; None when ``batches`` is given.
    sample_weight : torch.Tensor of shape (n_samples,), float32, or None
        Positive weights; each batch's loss is the weighted mean of its per-sample losses. None
        when ``batches`` is given.
    config : TrainingConfig
    generator : torch.Generator
        Source of the shuffling order (its state advances, so a later call continues the stream).
    score_function : callable or None
        ``score_function() -> float``, the validation score of the current network (higher is
        better); it must leave the network in evaluation mode or training mode, either is fine.
    optimizer_state : dict or None
        A ``TrainingHistory.optimizer_state`` of an earlier call to continue from (Adam's
        moments and the decayed learning rate); None starts a fresh optimizer at
        ``config.learning_rate``.
    observer : TrainingObserver or None
        Told of every epoch and step (the verbose lines, scikit-learn callbacks); its
        ``epoch_end`` may stop training. None: nothing is reported.
    batches : object or None
        Where the batches come from when the rows are not tensors in memory: an object with
        the methods of :class:`TensorBatches` (``steps_per_epoch(batch_size)`` and
        ``epoch(batch_size, generator)``). None: ``TensorBatches(X, y, sample_weight)``.
    replicas : SingleProcess or None
        How the steps combine with other processes training the same network on other rows (an
        object with the methods of :class:`SingleProcess`): the loss normalisers of a local batch,
        the reduction of the gradients, the sum of the epoch's loss totals, and the
        synchronisation of the network before each evaluation. None: one process.

    Returns
    -------
    TrainingHistory

    Warns
    -----
    sklearn.exceptions.ConvergenceWarning
        When ``max_epochs`` is reached while the monitored quantity still improves (not for
        ``config.incremental``).
    RuntimeWarning
        When the loss or the weights become non-finite; the last finite weights are restored.
    UserWarning
        When a KeyboardInterrupt stops training: the epochs done so far are kept (and the best
        weights restored under early stopping) instead of raising; or when a continued
        ``partial_fit`` epoch starts after the end of a cosine schedule (learning rate 0).
    """
    data = TensorBatches(X, y, sample_weight) if batches is None else batches
    replicas = SINGLE_PROCESS if replicas is None else replicas
    # Listed once: walking the module tree for every step's zero_grad and clipping cost about 4% of a step.
    parameters = list(network.parameters())
    # One flat tensor for clipping and Adam where the parameters allow it (see flat_parameters); the
    # parameters get storage of their own again when training ends, however it ends.
    flat_parameters = FlatParameters(parameters) if FlatParameters.supports(parameters) else contextlib.nullcontext()
    with flat_parameters as flat, compiled_training(network, config.torch_compile) as forward:
        device = parameters[0].device
        fused = device.type in ("cpu", "cuda")
        optimizer = make_optimizer(parameters if flat is None else [flat.flat], config, fused)
        if optimizer_state is not None:
            optimizer.load_state_dict(optimizer_state if flat is None else flat.to_flat_state(optimizer_state))
        steps_per_epoch = data.steps_per_epoch(config.batch_size)
        schedule = LearningRateSchedule(optimizer, config, steps_per_epoch, loaded=optimizer_state is not None)
        average = _weight_average(config, parameters if flat is None else [flat.flat], steps_per_epoch)
        step = _TrainingStep(network, loss_function, config, replicas, optimizer, parameters, flat, average, forward)
        captured = captures_steps(device, flat, schedule, batches is None, replicas is SINGLE_PROCESS)
        # Captured steps (CUDA): the network and optimizer are made ready for them, and put back before the
        # optimizer's state is read below.
        graphs = StepGraphs(step, schedule, config.max_epochs, device) if captured else contextlib.nullcontext(step)
        with graphs as step:
            observer = observer if observer is not None else TrainingObserver()
            run = _TrainingRun(network, data, config, generator, score_function, observer, replicas, step, schedule)
            if schedule.ended:
                warn(
                    f"The cosine learning-rate schedule ended after max_epochs={schedule.epochs} epochs; its "
                    "learning rate is now 0, so this epoch does not change the weights. Raise max_epochs to continue "
                    "the schedule, or use learning_rate_schedule='constant' or 'exponential' for open-ended "
                    "partial_fit.",
                    UserWarning,
                )
            try:
                for epoch in range(config.max_epochs):
                    if run.run_epoch(epoch):
                        break
            except KeyboardInterrupt:
                run.keep_after_interrupt()
        history = run.history
        # Read before the observers hear of the end, which the optimiser's state does not depend on.
        history.optimizer_state = (
            optimizer.state_dict() if flat is None else flat.from_flat_state(optimizer.state_dict())
        )
        run.finish()
        return history
