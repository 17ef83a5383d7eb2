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

__all__ = ["MEMBER_ATTRIBUTES", "EnsembleMixin", "member_seeds"]

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


class EnsembleMixin:
    """The members of ``n_ensemble``: their training in turn and the per-member history attributes."""

    def _train_members(self, train_member, seed, first_pass, build_member):
        """Train every member with ``train_member``; on a first pass build members 1 and up with ``build_member``.

        ``train_member(member_seed)`` trains ``network_`` with the estimator's training state and
        records its history, returning the :class:`~sparsetab._training.loop.TrainingHistory`;
        ``build_member(member_seed)`` sets ``network_`` to a new member. On a first pass
        ``network_`` is member 0, already built; on a continued fit it is the fitted network.
        """
        networks = ensemble_members(self.network_)
        n_members = self.n_ensemble if first_pass else len(networks)
        if n_members == 1:  # a single network: trained exactly as before ensembles existed
            train_member(seed)
            return
        seeds = member_seeds(seed, n_members)
        stored = [] if first_pass else list(self._ensemble_members)
        self.network_ = networks[0]
        self._announce_member(0, n_members)
        history = train_member(seeds[0])
        trained, states = [networks[0]], []
        for index in range(1, n_members):
            if history.interrupted:  # the user asked to stop: no further member is trained
                break
            # Member 0's network, state and history are set aside while member `index` uses the attributes.
            first_member = {name: getattr(self, name) for name in ("network_", *MEMBER_ATTRIBUTES)}
            try:
                if first_pass:
                    build_member(seeds[index])
                    self.network_.to(self._device)
                else:
                    self.network_ = networks[index]
                    for name, value in stored[index - 1].items():
                        setattr(self, name, value)
                self._announce_member(index, n_members)
                history = train_member(seeds[index])
                # A new member interrupted before its first complete epoch holds its initial weights: it is left out.
                if not (first_pass and history.interrupted and not history.loss_curve):
                    trained.append(self.network_)
                    states.append({name: getattr(self, name) for name in MEMBER_ATTRIBUTES})
            finally:
                for name, value in first_member.items():
                    setattr(self, name, value)
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
            self._architecture = {**self._architecture, "n_ensemble": len(trained)}
        if len(trained) == 1:
            self.network_ = trained[0]
            vars(self).pop("_ensemble_members", None)
        else:
            self.network_ = TabNetEnsemble(trained)
            self._ensemble_members = states

    def _add_members(self, networks, states):
        """Append trained ``networks`` (with their ``MEMBER_ATTRIBUTES`` dicts ``states``) after the fitted members.

        For the refit of ``early_stopping="auto"``: the first pass's networks join the refit's. The
        estimator's own attributes stay member 0's; ``_architecture`` keeps ``n_ensemble`` (the
        members of one fit), so a warm start compares the parameter, not the member count.
        """
        members = ensemble_members(self.network_) + list(networks)
        self._ensemble_members = list(getattr(self, "_ensemble_members", [])) + [dict(state) for state in states]
        self.network_ = TabNetEnsemble(members)

    def _announce_member(self, index, n_members):
        if self.verbose:
            print(f"ensemble member {index + 1} of {n_members}", flush=True)

    def _member_values(self, name):
        """Attribute ``name`` of each member, member 0 first (from the estimator's own attributes)."""
        check_is_fitted(self)
        return [getattr(self, name)] + [state[name] for state in getattr(self, "_ensemble_members", [])]

    @property
    def n_efficient_members_(self):
        """The number of efficient members in each network (``n_efficient_members``, resolved).

        Returns
        -------
        int
            ``n_efficient_members`` as given, or what ``"auto"`` chose for the fit's training rows
            (:func:`~sparsetab._params.resolve_efficient_members`); 1 for a model saved before
            efficient members existed.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before ``fit``.
        """
        check_is_fitted(self)
        return int(ensemble_members(self.network_)[0].n_efficient_members)

    @property
    def ensemble_n_iter_(self):
        """Epochs run by each member of the ensemble, member 0 (``n_iter_``) first.

        Returns
        -------
        list of int
            Of length ``n_ensemble``, or ``2 * n_ensemble`` after the refit of
            ``early_stopping="auto"`` (the refit members, then the first pass's).
        """
        return self._member_values("n_iter_")

    @property
    def ensemble_loss_curves_(self):
        """Training objective per epoch of each member, member 0 (``loss_curve_``) first.

        Returns
        -------
        list of list of float
            One ``loss_curve_`` per member.
        """
        return self._member_values("loss_curve_")

    @property
    def ensemble_validation_scores_(self):
        """Validation score per epoch of each member, member 0 (``validation_scores_``) first.

        Returns
        -------
        list of (list of float or None)
            One ``validation_scores_`` per member; each member is scored alone, on the same
            validation rows.
        """
        return self._member_values("validation_scores_")

    @property
    def ensemble_best_iteration_(self):
        """Epoch whose weights early stopping kept, of each member, member 0 (``best_iteration_``) first.

        Returns
        -------
        list of (int or None)
            One ``best_iteration_`` per member.
        """
        return self._member_values("best_iteration_")

    @property
    def ensemble_best_validation_scores_(self):
        """Best validation score of each member, member 0 (``best_validation_score_``) first.

        Returns
        -------
        list of (float or None)
            One ``best_validation_score_`` per member.
        """
        return self._member_values("best_validation_score_")

    @property
    def ensemble_entmax_alphas_(self):
        """Alpha of each decision step's map, of each member.

        Returns
        -------
        numpy.ndarray of shape (n_ensemble, n_steps)
            Row 0 is ``entmax_alphas_``.
        """
        return np.stack(self._member_values("entmax_alphas_"))
