"""The optimiser and its learning-rate schedule: Adam(W), warm-up, and the constant, exponential or cosine decay."""

import math

import torch

__all__ = ["LEARNING_RATE_SCHEDULES", "LearningRateSchedule", "learning_rate_factor", "make_optimizer"]

LEARNING_RATE_SCHEDULES = ("constant", "exponential", "cosine")


def learning_rate_factor(schedule, progress, *, warmup_epochs, schedule_epochs, decay):
    """The learning rate of a step, as a multiple of ``learning_rate``.

    Parameters
    ----------
    schedule : {"constant", "exponential", "cosine"}
        The schedule.
    progress : float
        Epochs completed when the step ends (step ``s`` of ``S`` in epoch ``k``, counted from 0,
        ends at ``k + (s + 1) / S``), in epochs.
    warmup_epochs : float
        Length of the linear warm-up, in epochs: the factor grows linearly from 0 to 1 over them
        (Goyal et al., 2017, "Accurate, large minibatch SGD", section 2.2, gradual warm-up); at
        most ``schedule_epochs / 2`` (a longer one is cut to that).
    schedule_epochs : int
        Length of the schedule (``max_epochs``), in epochs, warm-up included.
    decay : float
        Per-epoch factor of the exponential schedule.

    Returns
    -------
    float
        ``warmup * base``, where ``warmup = min(1, progress / w)`` with ``w = min(warmup_epochs,
        schedule_epochs / 2)`` (1 without warm-up)
        and ``base`` is 1 (constant), ``decay ** floor(completed epochs)`` (exponential), or
        ``(1 + cos(pi * t)) / 2`` with ``t`` the share of the post-warm-up epochs done,
        clipped to [0, 1] (cosine: Loshchilov and Hutter, 2017, "SGDR", Eq. 5 with
        ``eta_min = 0`` and no restart).
    """
    # A warm-up longer than half the schedule is cut to half of it, so a short fit (max_epochs=1 with
    # the default 5 warm-up epochs) still reaches the full rate and, with the cosine, anneals.
    warmup_epochs = min(warmup_epochs, schedule_epochs / 2)
    warmup = min(1.0, progress / warmup_epochs) if warmup_epochs > 0 else 1.0
    if schedule == "constant":
        return warmup
    if schedule == "exponential":
        # The rate of a step is fixed within its epoch: the epoch it belongs to is the one it ends in.
        return warmup * decay ** math.floor(progress - 1e-9)
    span = schedule_epochs - warmup_epochs
    done = min(1.0, max(0.0, (progress - warmup_epochs) / span)) if span > 0 else 1.0
    return warmup * 0.5 * (1.0 + math.cos(math.pi * done))


def make_optimizer(optimized, config, fused):
    """Adam, or AdamW (decoupled weight decay: Loshchilov and Hutter, 2019) when ``weight_decay > 0``.

    Parameters
    ----------
    optimized : list of torch.Tensor
        The tensors to update (the network's parameters, or their one flat buffer).
    config : sparsetab._training.records.TrainingConfig
        ``learning_rate`` and ``weight_decay`` are read.
    fused : bool
        Whether to use the fused kernel, which updates all tensors in one call.

    Returns
    -------
    torch.optim.Adam or torch.optim.AdamW
    """
    # The fused kernel updates all parameters in one call (on CPU about 4x faster than the
    # per-tensor loop, which was a tenth of a training step); other devices keep the default.
    if config.weight_decay > 0:
        return torch.optim.AdamW(optimized, lr=config.learning_rate, weight_decay=config.weight_decay, fused=fused)
    return torch.optim.Adam(optimized, lr=config.learning_rate, fused=fused)


def _rebase_exponential(group, config):
    # A loaded rate continues the exponential schedule at the current learning_rate: ExponentialLR
    # records its base as initial_lr, so a new learning_rate rescales the decayed rate (instead of
    # being ignored), and a rate left by another schedule restarts the exponential one where it stands.
    base = group.get("initial_lr")
    if base is None:
        group["lr"] = config.learning_rate * config.learning_rate_decay**config.schedule_offset
    elif base != config.learning_rate:
        group["lr"] *= config.learning_rate / base
    group["initial_lr"] = config.learning_rate


class LearningRateSchedule:
    """Sets the optimiser's learning rate: before every step, or once an epoch for the first release's schedule.

    Parameters
    ----------
    optimizer : torch.optim.Optimizer
        The optimiser whose groups' ``lr`` is set; a loaded state (``loaded=True``) already holds
        its groups' saved rates.
    config : sparsetab._training.records.TrainingConfig
        The schedule, its length (``schedule_epochs``, else ``max_epochs``), warm-up, decay and
        the epochs of it already run (``schedule_offset``).
    steps_per_epoch : int
        Optimiser steps per epoch.
    loaded : bool
        Whether ``optimizer`` continues a saved state (``partial_fit``, ``warm_start``).
    """

    def __init__(self, optimizer, config, steps_per_epoch, loaded):
        self.optimizer, self.config, self.steps_per_epoch = optimizer, config, steps_per_epoch
        self.epochs = config.schedule_epochs if config.schedule_epochs is not None else config.max_epochs
        # The first release's schedule, kept step for step: ExponentialLR multiplies the optimizer's
        # current rate once an epoch, so a loaded (decayed) rate continues. The others set each step's rate.
        per_epoch = (
            config.learning_rate_schedule == "exponential" and config.warmup_epochs == 0 and config.weight_decay == 0
        )
        if loaded:
            for group in optimizer.param_groups:  # the saved hyperparameters replace ours on loading
                group["weight_decay"] = config.weight_decay
                if per_epoch:
                    _rebase_exponential(group, config)
        self.scheduler = (
            torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=config.learning_rate_decay) if per_epoch else None
        )

    @property
    def ended(self):
        """Whether a cosine schedule has run its length already, so its rate is 0 (bool)."""
        return self.config.learning_rate_schedule == "cosine" and self.config.schedule_offset >= self.epochs

    def before_step(self, epoch, step):
        """Set the rate of step ``step`` (0-based) of this call's epoch ``epoch`` (0-based).

        Parameters
        ----------
        epoch, step : int
            Where the step is: its epoch within this call and its index within the epoch.
        """
        if self.scheduler is not None or self.on_device:
            return
        rate = self.rate(epoch, step)
        for group in self.optimizer.param_groups:
            group["lr"] = rate

    #: Whether the rates come from :meth:`rates` on the device (a captured step), so that :meth:`before_step`
    #: leaves the optimizer's groups alone.
    on_device = False

    @property
    def per_step(self):
        """Whether every step's rate is a function of its place in the run (all but the first release's schedule).

        Returns
        -------
        bool
        """
        return self.scheduler is None

    def rate(self, epoch, step):
        """The learning rate of step ``step`` (0-based) of this call's epoch ``epoch`` (0-based).

        Parameters
        ----------
        epoch, step : int
            Where the step is: its epoch within this call and its index within the epoch.

        Returns
        -------
        float

        Raises
        ------
        RuntimeError
            For the first release's schedule, whose rate is the optimizer's, decayed once an epoch (see
            :attr:`per_step`).
        """
        if not self.per_step:
            raise RuntimeError("The first release's exponential schedule has no per-step rate table.")
        config = self.config
        progress = config.schedule_offset + epoch + (step + 1) / self.steps_per_epoch
        return config.learning_rate * learning_rate_factor(
            config.learning_rate_schedule,
            progress,
            warmup_epochs=config.warmup_epochs,
            schedule_epochs=self.epochs,
            decay=config.learning_rate_decay,
        )

    def rates(self, epochs):
        """The rates of the steps of this call's first ``epochs`` epochs, in order (``epochs * steps_per_epoch``).

        Parameters
        ----------
        epochs : int
            Epochs of the call.

        Returns
        -------
        list of float
        """
        return [self.rate(epoch, step) for epoch in range(epochs) for step in range(self.steps_per_epoch)]

    def after_epoch(self):
        """A complete, finite epoch: the first release's schedule decays its rate once."""
        if self.scheduler is not None:
            self.scheduler.step()
