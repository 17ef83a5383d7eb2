"""The losses of ``SparseTabNetRegressor(loss=...)``: their per-row values in torch and their links.

Every loss is elementwise in the targets and returns the mean over the outputs of each row, as
the squared error always did, so that a 2-D ``y`` (several outputs) works for each of them.

- ``"squared_error"``: ``(raw - y)^2``, the loss of every release before the others existed.
- ``"absolute_error"``: ``|raw - y|``, twice the pinball loss at the 0.5 quantile (Koenker and
  Bassett 1978): it estimates the conditional median.
- ``"huber"``: ``r^2 / 2`` for ``|r| <= delta``, else ``delta * (|r| - delta / 2)``, with
  ``r = y - raw`` (Huber 1964, equation 1.2; the form of scikit-learn's ``HuberLoss``).
- ``"quantile"``: the pinball loss ``rho_q(r) = r * (q - 1{r < 0})`` of Koenker and Bassett
  (1978), whose minimiser is the ``q``-quantile.
- ``"poisson"``: the half Poisson deviance ``y log(y / mu) - y + mu`` with ``mu = exp(raw)``.
- ``"gamma"``: the half gamma deviance ``log(mu / y) + y / mu - 1`` with ``mu = exp(raw)``.

The first four work on the standardised target, with the identity link; the two deviances on
the target divided by its training mean, with the log link (the network outputs the log of the
mean); :class:`~sparsetab._targets.ContinuousTargets` does the scaling and checks the targets
against each loss's domain. The deviances include the terms that do not depend on ``raw`` (scikit-learn's
``HalfPoissonLoss`` and ``HalfGammaLoss`` drop them from ``loss`` and give them as
``constant_to_optimal_zero``), so that a perfect prediction has loss 0; the gradients are the same.

References
----------
Koenker, R. and Bassett, G. (1978). Regression Quantiles. Econometrica 46(1), 33-50.

Huber, P. J. (1964). Robust Estimation of a Location Parameter. Annals of Mathematical
Statistics 35(1), 73-101.

McCullagh, P. and Nelder, J. A. (1989). Generalized Linear Models, 2nd edition. Chapman and
Hall, section 2.3 (deviances, the log link).
"""

import torch

__all__ = [
    "LOG_LINK_LOSSES",
    "REGRESSION_LOSSES",
    "RegressionLoss",
    "absolute_error",
    "half_gamma_deviance",
    "half_poisson_deviance",
    "huber",
    "pinball",
    "squared_error",
]

REGRESSION_LOSSES = ("squared_error", "absolute_error", "huber", "poisson", "gamma", "quantile")
# The losses whose network outputs the log of the mean (the others: the standardised target itself).
LOG_LINK_LOSSES = ("poisson", "gamma")


def squared_error(raw, target):
    """Squared error, the mean over the outputs of each row.

    Parameters
    ----------
    raw : torch.Tensor of shape (n_samples, n_outputs)
        The network's outputs.
    target : torch.Tensor of shape (n_samples, n_outputs)
        The (standardised) targets.

    Returns
    -------
    torch.Tensor of shape (n_samples,)
        ``mean_k (raw_k - target_k)^2``.
    """
    return ((raw - target) ** 2).mean(dim=1)


def absolute_error(raw, target):
    """Absolute error, the mean over the outputs of each row.

    It is twice the pinball loss at the 0.5 quantile (Koenker and Bassett 1978), so it
    estimates the conditional median; its mean is the mean absolute deviation.

    Parameters
    ----------
    raw : torch.Tensor of shape (n_samples, n_outputs)
        The network's outputs.
    target : torch.Tensor of shape (n_samples, n_outputs)
        The (standardised) targets.

    Returns
    -------
    torch.Tensor of shape (n_samples,)
        ``mean_k |raw_k - target_k|``.
    """
    return (raw - target).abs().mean(dim=1)


def huber(raw, target, delta):
    """Huber loss (Huber 1964, equation 1.2), the mean over the outputs of each row.

    Parameters
    ----------
    raw : torch.Tensor of shape (n_samples, n_outputs)
        The network's outputs.
    target : torch.Tensor of shape (n_samples, n_outputs)
        The (standardised) targets.
    delta : float
        Where the loss turns from quadratic to linear, > 0, in the units of ``target``.

    Returns
    -------
    torch.Tensor of shape (n_samples,)
        The mean over the outputs of ``r^2 / 2`` where ``|r| <= delta`` and
        ``delta * (|r| - delta / 2)`` elsewhere, ``r = target - raw``.
    """
    error = (target - raw).abs()
    return torch.where(error <= delta, 0.5 * error**2, delta * (error - 0.5 * delta)).mean(dim=1)


def pinball(raw, target, quantile):
    """Pinball loss of Koenker and Bassett (1978), the mean over the outputs of each row.

    Parameters
    ----------
    raw : torch.Tensor of shape (n_samples, n_outputs)
        The network's outputs.
    target : torch.Tensor of shape (n_samples, n_outputs)
        The (standardised) targets.
    quantile : float
        The level ``q`` in (0, 1) of the conditional quantile the loss estimates.

    Returns
    -------
    torch.Tensor of shape (n_samples,)
        The mean over the outputs of ``max(q r, (q - 1) r)``, ``r = target - raw``.
    """
    residual = target - raw
    return torch.maximum(quantile * residual, (quantile - 1) * residual).mean(dim=1)


def half_poisson_deviance(raw, target):
    """Half the Poisson deviance of the mean ``exp(raw)``, the mean over the outputs of each row.

    Parameters
    ----------
    raw : torch.Tensor of shape (n_samples, n_outputs)
        The network's outputs: the log of the predicted mean.
    target : torch.Tensor of shape (n_samples, n_outputs)
        Non-negative targets.

    Returns
    -------
    torch.Tensor of shape (n_samples,)
        The mean over the outputs of ``y log(y / mu) - y + mu``, ``mu = exp(raw)`` (0 log 0 = 0).
    """
    return (torch.xlogy(target, target) - target - target * raw + torch.exp(raw)).mean(dim=1)


def half_gamma_deviance(raw, target):
    """Half the gamma deviance of the mean ``exp(raw)``, the mean over the outputs of each row.

    Parameters
    ----------
    raw : torch.Tensor of shape (n_samples, n_outputs)
        The network's outputs: the log of the predicted mean.
    target : torch.Tensor of shape (n_samples, n_outputs)
        Positive targets.

    Returns
    -------
    torch.Tensor of shape (n_samples,)
        The mean over the outputs of ``log(mu / y) + y / mu - 1``, ``mu = exp(raw)``.
    """
    return (raw - torch.log(target) + target * torch.exp(-raw) - 1).mean(dim=1)


class RegressionLoss:
    """One regression loss with its settings: its per-row values and its link.

    Parameters
    ----------
    loss : {"squared_error", "absolute_error", "huber", "poisson", "gamma", "quantile"}, default="squared_error"
        The loss (see the module docstring).
    quantile : float, default=0.5
        The level of ``loss="quantile"``, in (0, 1); not read by the other losses.
    huber_delta : float, default=1.0
        The delta of ``loss="huber"``, > 0, in the units the network learns (standard
        deviations of the training target); not read by the other losses.
    """

    def __init__(self, loss="squared_error", quantile=0.5, huber_delta=1.0):
        if loss not in REGRESSION_LOSSES:
            raise ValueError(f"loss must be one of {REGRESSION_LOSSES}, got {loss!r}.")
        self.name = loss
        self.quantile = float(quantile)
        self.huber_delta = float(huber_delta)

    @property
    def log_link(self):
        """Whether the network outputs the log of the mean (``"poisson"``, ``"gamma"``)."""
        return self.name in LOG_LINK_LOSSES

    def parameters(self):
        """The settings that define this loss: ``loss``, and ``quantile`` or ``huber_delta`` where read.

        Returns
        -------
        dict
            Plain str and float values, kept as the fitted regressor's ``_loss_parameters``.
        """
        parameters = {"loss": self.name}
        if self.name == "quantile":
            parameters["quantile"] = self.quantile
        elif self.name == "huber":
            parameters["huber_delta"] = self.huber_delta
        return parameters

    def __repr__(self):
        return ", ".join(f"{name}={value!r}" for name, value in self.parameters().items())

    def __call__(self, raw, target):
        """Per-row losses.

        Parameters
        ----------
        raw : torch.Tensor of shape (n_samples, n_outputs)
            The network's outputs.
        target : torch.Tensor of shape (n_samples, n_outputs)
            The targets as the network learns them (standardised, or divided by the scale).

        Returns
        -------
        torch.Tensor of shape (n_samples,)
            The loss of each row, the mean over its outputs.
        """
        if self.name == "squared_error":
            return squared_error(raw, target)
        if self.name == "absolute_error":
            return absolute_error(raw, target)
        if self.name == "huber":
            return huber(raw, target, self.huber_delta)
        if self.name == "quantile":
            return pinball(raw, target, self.quantile)
        if self.name == "poisson":
            return half_poisson_deviance(raw, target)
        return half_gamma_deviance(raw, target)
