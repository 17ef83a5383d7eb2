"""Ensembles of TabNets (``n_ensemble``): the members' seeds, their training in turn, their histories.

The members of an ensemble are trained one after another, each with the fit loop of a single
network: its own weight initialisation, shuffling stream, optimizer state and early stopping on
its own validation score (Lakshminarayanan et al., 2017, "Simple and scalable predictive
uncertainty estimation using deep ensembles": independently seeded members, outputs averaged).
Member 0 has the fit's own seed, so it is the model that ``n_ensemble=1`` gives and an ensemble
only adds members to it.

While a member trains it is the estimator's ``network_`` and its history and training state are
the estimator's own attributes (``loss_curve_``, ``_optimizer_state``, ...), so that the fit loop,
the score function of early stopping (``scoring="loss"`` or a scorer that calls ``predict``) and
the history bookkeeping of :class:`~sparsetab._base.BaseSparseTabNet` serve every member as they
serve a single network. Afterwards ``network_`` is a :class:`~sparsetab.network.TabNetEnsemble`,
member 0's history and state stay in the estimator's attributes, and those of the other members
are kept in ``_ensemble_members``. With ``n_ensemble=1`` nothing here changes the estimator.

How the members' outputs are combined at predict time is the target kind's (``combine_members``
in :mod:`sparsetab._targets`); their explanations are averaged in :mod:`sparsetab._inference`.
"""

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ._warnings import warn
from .network import TabNetEnsemble, ensemble_members

__all__ = ["MEMBER_ATTRIBUTES", "add_members", "member_seeds", "member_values", "train_members"]

# What each member has of its own besides its weights: the state that continues its training, and its history.
MEMBER_ATTRIBUTES = (
    "_optimizer_state",
    "_shuffle_state",
    "loss_curve_",
    "n_iter_",
    "validation_scores_",
    "best_iteration_",
    "best_validation_score_",
    "entmax_alphas_",
    "entmax_alpha_history_",
)


def member_seeds(seed, n_members):
    """The seeds of an ensemble's members, derived deterministically from the fit's seed.

    Parameters
    ----------
    seed : int
        The fit's seed, drawn from ``random_state``.
    n_members : int
        Members of the ensemble, >= 1.

    Returns
    -------
    list of int
        ``seed`` for member 0 (the model ``n_ensemble=1`` gives), then one seed in
        [0, 2**31 - 1) per further member from ``numpy.random.SeedSequence(seed).spawn``,
        independent streams that do not depend on ``n_members`` (member ``k`` of an ensemble
        of 3 is member ``k`` of an ensemble of 5).
    """
    children = np.random.SeedSequence(seed).spawn(n_members - 1)
    return [int(seed)] + [int(child.generate_state(1)[0] % np.iinfo(np.int32).max) for child in children]


def train_members(estimator, train_member, seed, first_pass, build_member):
    """Train every member of the estimator's ensemble in turn; on a first pass, build members 1 and up.

    Parameters
    ----------
    estimator : BaseSparseTabNet
        The estimator being fitted; ``network_`` is member 0, already built, on a first pass, and
        the fitted network (one network or a :class:`~sparsetab.network.TabNetEnsemble`) on a
        continued fit.
    train_member : callable
        ``train_member(member_seed)`` trains ``network_`` with the estimator's training state and
        records its history, returning the :class:`~sparsetab._training.records.TrainingHistory`.
    seed : int
        The fit's seed; the members' seeds are :func:`member_seeds`.
    first_pass : bool
        Whether the fit starts from scratch (``n_ensemble`` members are trained) rather than
        continuing the fitted members.
    build_member : callable
        ``build_member(member_seed)`` sets ``network_`` to a new member.

    Warns
    -----
    UserWarning
        When an interrupt stops a first pass before every member has one complete epoch: the
        members that have one are kept.
    """
    networks = ensemble_members(estimator.network_)
    n_members = estimator.n_ensemble if first_pass else len(networks)
    if n_members == 1:  # a single network: trained exactly as before ensembles existed
        train_member(seed)
        return
    seeds = member_seeds(seed, n_members)
    stored = [] if first_pass else list(estimator._ensemble_members)
    estimator.network_ = networks[0]
    _announce_member(estimator, 0, n_members)
    history = train_member(seeds[0])
    trained, states = [networks[0]], []
    for index in range(1, n_members):
        if history.interrupted:  # the user asked to stop: no further member is trained
            break
        # Member 0's network, state and history are set aside while member `index` uses the attributes.
        first_member = {name: getattr(estimator, name) for name in ("network_", *MEMBER_ATTRIBUTES)}
        try:
            if first_pass:
                build_member(seeds[index])
                estimator.network_.to(estimator._device)
            else:
                estimator.network_ = networks[index]
                for name, value in stored[index - 1].items():
                    setattr(estimator, name, value)
            _announce_member(estimator, index, n_members)
            history = train_member(seeds[index])
            # A new member interrupted before its first complete epoch holds its initial weights: it is left out.
            if not (first_pass and history.interrupted and not history.loss_curve):
                trained.append(estimator.network_)
                states.append({name: getattr(estimator, name) for name in MEMBER_ATTRIBUTES})
        finally:
            for name, value in first_member.items():
                setattr(estimator, name, value)
    if not first_pass:  # an interrupted continued fit keeps the members it did not reach as they were
        trained += networks[len(trained) :]
        states += stored[len(states) :]
    elif len(trained) < n_members:
        warn(
            f"Training was interrupted before all n_ensemble={n_members} members were trained; the model keeps "
            f"the {len(trained)} member(s) with at least one complete epoch and predicts with them. Call fit "
            f"again to train all {n_members}.",
            UserWarning,
        )
        # The network describes itself: a warm start compares n_ensemble with the members it holds.
        estimator._architecture = {**estimator._architecture, "n_ensemble": len(trained)}
    if len(trained) == 1:
        estimator.network_ = trained[0]
        vars(estimator).pop("_ensemble_members", None)
    else:
        estimator.network_ = TabNetEnsemble(trained)
        estimator._ensemble_members = states


def add_members(estimator, networks, states):
    """Append trained ``networks`` (with their ``MEMBER_ATTRIBUTES`` dicts ``states``) after the fitted members.

    For the refit of ``early_stopping="auto"``: the first pass's networks join the refit's. The
    estimator's own attributes stay member 0's; ``_architecture`` keeps ``n_ensemble`` (the
    members of one fit), so a warm start compares the parameter, not the member count.

    Parameters
    ----------
    estimator : BaseSparseTabNet
        The fitted estimator.
    networks : list of sparsetab.network.TabNet
        The members to append.
    states : list of dict
        Their ``MEMBER_ATTRIBUTES``.
    """
    members = ensemble_members(estimator.network_) + list(networks)
    estimator._ensemble_members = list(getattr(estimator, "_ensemble_members", [])) + [dict(state) for state in states]
    estimator.network_ = TabNetEnsemble(members)


def _announce_member(estimator, index, n_members):
    if estimator.verbose:
        print(f"ensemble member {index + 1} of {n_members}", flush=True)


def member_values(estimator, name):
    """Attribute ``name`` of each member, member 0 first (from the estimator's own attributes).

    Parameters
    ----------
    estimator : BaseSparseTabNet
        A fitted classifier or regressor.
    name : str
        One of :data:`MEMBER_ATTRIBUTES`.

    Returns
    -------
    list
        One value per member.

    Raises
    ------
    sklearn.exceptions.NotFittedError
        If the estimator is not fitted.
    """
    check_is_fitted(estimator)
    return [getattr(estimator, name)] + [state[name] for state in getattr(estimator, "_ensemble_members", [])]
