"""Relevant share of each member's masks: sparsetab's default fit on Syn1-Syn6 under the user protocol.

On 10,000 training rows ``fit(X, y)`` runs the epoch-count refit (a first pass on 90% of the rows,
stopped early, and a refit on all of them, both kept) and each of the two networks has two efficient
members, so ``explain(X, per_member=True)`` returns four members: the refit's two, then the first
pass's two (the order of ``ensemble_n_iter_``). For each data set and seed this prints, as a JSON
line, the test AUC and the relevant share and FDR of the averaged importances (as ``benchmarks/syn.py``
scores them, means over its 5 test sets) and the relevant share of each member's own importances. It
answers whether the members' mean is diffuse because the members disagree (each sharp, on different
features) or because each member reads noise. Not part of the test suite; about 2 minutes a fit on one core.

``--variant`` patches another design of the members into the network for the fit and the scoring (the
library has no such option; ``sparsetab.network.efficient_members`` lists the designs and what they gave):

- ``initial_without_adapters``: the initial transformer reads the input without the members' adapters, so
  the first mask's attention features are the members' common ones; later steps as today.
- ``first_member_masks``: the first member's adapter starts at 1 (no sign flips) and its rows alone feed
  the attentive transformers; every member masks its own adapted features with the first member's mask of
  the row (one mask per row), and the other members' step outputs feed only their decisions.
- ``mask_agreement``: today's design plus a penalty on the members' disagreement, the generalised
  Jensen-Shannon divergence of each row's step masks across the members (the entropy of their mean minus
  the mean of their entropies, which is what averaging the members adds to the entropy of the mask
  ``explain()`` reports), weighted by ``--agreement-weight`` in the training objective.
- ``positive_scales``: the adapters start at random positive scales, log-uniform in ``[1/s, s]`` with
  ``s = --scale-spread`` (one per member and attention group), instead of random signs.

Run::

    python -m benchmarks.syn_members [--datasets 1 2 3 4 5 6] [--seeds 0] [--n-jobs 2]
                                     [--variant defaults|initial_without_adapters|first_member_masks|mask_agreement]
                                     [--agreement-weight 0.1] [--scale-spread 3]
"""

import argparse
import contextlib
import json
import math

import numpy as np
import torch
from joblib import Parallel, delayed
from sklearn.metrics import roc_auc_score

from benchmarks._mask_scores import relevant_share, selection_rates
from benchmarks.syn import draw, fit_sparsetab

VARIANTS = ("defaults", "initial_without_adapters", "first_member_masks", "mask_agreement", "positive_scales")


@contextlib.contextmanager
def initial_without_adapters():
    """Efficient members whose initial transformer reads the input without their adapters, for the block.

    Networks without members, or with step gates (not screened), run as they are.
    """
    from sparsetab.network import tabnet

    original_steps = tabnet.TabNet._run_steps

    def run_steps(self, x, obfuscation):
        if self.member_adapters is None or self.gates is not None:
            return original_steps(self, x, obfuscation)
        normalised, prior = self._normalised_input(x, obfuscation)
        n_members = self.n_efficient_members
        features = (normalised.unsqueeze(0) * self.member_adapters.unsqueeze(1)).flatten(0, 1)
        if prior is not None:
            prior = prior.repeat(n_members, 1)
        attention = self.initial_transformer(normalised)[:, self.n_d :].repeat(n_members, 1)
        masks, step_decisions = [], []
        for step in range(self.n_steps):
            mask = self.attentive_transformers[step](attention, prior)
            if step + 1 < self.n_steps:
                prior = self.gamma - mask if prior is None else (self.gamma - mask) * prior
            out = self.step_transformers[step](features * self._spread_over_columns(mask))
            step_decisions.append(torch.relu(out[:, : self.n_d]))
            attention = out[:, self.n_d :]
            masks.append(mask)
        masks = torch.stack(masks)
        entropy = (masks * torch.log(masks + self.epsilon)).sum() / -(masks.shape[0] * masks.shape[1])
        return step_decisions, masks, None, entropy

    tabnet.TabNet._run_steps = run_steps
    try:
        yield
    finally:
        tabnet.TabNet._run_steps = original_steps


@contextlib.contextmanager
def first_member_masks():
    """Efficient members that attend with the first member's masks, for the duration of the block.

    The first member's adapter starts at 1 and its rows alone feed the attentive transformers; each step's
    mask (one per row) masks every member's adapted features; the step outputs of all members feed their
    decisions, the first member's attention features the next step. Networks built inside the block have it;
    networks without members, or with step gates (not screened), run as they are.
    """
    from sparsetab.network import tabnet

    original_adapters, original_steps = tabnet.member_sign_adapters, tabnet.TabNet._run_steps

    def first_without_flips(n_members, group_matrix, *, generator=None):
        adapters = original_adapters(n_members, group_matrix, generator=generator)
        adapters[0] = 1.0
        return adapters

    def run_steps(self, x, obfuscation):
        if self.member_adapters is None or self.gates is not None:
            return original_steps(self, x, obfuscation)
        normalised, prior = self._normalised_input(x, obfuscation)
        n_members, rows = self.n_efficient_members, normalised.shape[0]
        features = (normalised.unsqueeze(0) * self.member_adapters.unsqueeze(1)).flatten(0, 1)
        attention = self.initial_transformer(features[:rows])[:, self.n_d :]
        masks, step_decisions = [], []
        for step in range(self.n_steps):
            mask = self.attentive_transformers[step](attention, prior)
            if step + 1 < self.n_steps:
                prior = self.gamma - mask if prior is None else (self.gamma - mask) * prior
            out = self.step_transformers[step](features * self._spread_over_columns(mask).repeat(n_members, 1))
            step_decisions.append(torch.relu(out[:, : self.n_d]))
            attention = out[:rows, self.n_d :]
            masks.append(mask.repeat(n_members, 1))
        masks = torch.stack(masks)
        entropy = (masks * torch.log(masks + self.epsilon)).sum() / -(masks.shape[0] * masks.shape[1])
        return step_decisions, masks, None, entropy

    tabnet.member_sign_adapters, tabnet.TabNet._run_steps = first_without_flips, run_steps
    try:
        yield
    finally:
        tabnet.member_sign_adapters, tabnet.TabNet._run_steps = original_adapters, original_steps


@contextlib.contextmanager
def mask_agreement(weight):
    """Efficient members penalised for disagreeing on a row's masks, with ``weight``, for the block.

    The sparsity regulariser the network returns is weighted by ``lambda_sparse`` (1e-3 by default), so the
    divergence is added to it divided by that default: its weight in the objective is ``weight``.
    """
    from sparsetab._params import DEFAULTS
    from sparsetab.network import tabnet

    original_steps = tabnet.TabNet._run_steps
    scale = weight / DEFAULTS["lambda_sparse"]

    def row_entropy(masks, epsilon):
        return -(masks * torch.log(masks + epsilon)).sum(dim=-1)

    def run_steps(self, x, obfuscation):
        step_decisions, masks, gates, entropy = original_steps(self, x, obfuscation)
        if self.member_adapters is None or not self.training:
            return step_decisions, masks, gates, entropy
        n_steps, rows, groups = masks.shape
        members = masks.view(n_steps, self.n_efficient_members, rows // self.n_efficient_members, groups)
        divergence = row_entropy(members.mean(dim=1), self.epsilon) - row_entropy(members, self.epsilon).mean(dim=1)
        return step_decisions, masks, gates, entropy + scale * divergence.mean()

    tabnet.TabNet._run_steps = run_steps
    try:
        yield
    finally:
        tabnet.TabNet._run_steps = original_steps


@contextlib.contextmanager
def positive_scales(spread):
    """Efficient members whose adapters start at random positive scales in ``[1/spread, spread]``, for the block."""
    from sparsetab.network import tabnet

    original_adapters = tabnet.member_sign_adapters

    def scales(n_members, group_matrix, *, generator=None):
        exponents = torch.rand((n_members, group_matrix.shape[0]), generator=generator) * 2 - 1
        return torch.exp(exponents * math.log(spread)).to(group_matrix.dtype) @ group_matrix

    tabnet.member_sign_adapters = scales
    try:
        yield
    finally:
        tabnet.member_sign_adapters = original_adapters


def measure(k, seed, variant="defaults", agreement_weight=0.1, scale_spread=3.0):
    """Fit the user-protocol default on Syn``k`` with the training seed ``seed``; return its scores (a dict)."""
    torch.set_num_threads(1)
    patched = {
        "initial_without_adapters": initial_without_adapters,
        "first_member_masks": first_member_masks,
        "mask_agreement": lambda: mask_agreement(agreement_weight),
        "positive_scales": lambda: positive_scales(scale_spread),
    }
    with patched.get(variant, contextlib.nullcontext)():
        result = _fit_and_score(k, seed, variant)
    if variant == "mask_agreement":
        result["agreement_weight"] = agreement_weight
    if variant == "positive_scales":
        result["scale_spread"] = scale_spread
    return result


def _fit_and_score(k, seed, variant):
    model = fit_sparsetab(k, "entmax15", "none", seed, "defaults", None, 1.5, {}, protocol="user")
    _, _, tests = draw(k)
    auc, share, fdr, member_shares = [], [], [], []
    for X_test, y_test, relevant, _ in tests:
        auc.append(roc_auc_score(y_test, model.predict_proba(X_test)[:, 1]))
        explanation = model.explain(X_test, per_member=True)
        importances = explanation.importances.astype(np.float64)
        share.append(relevant_share(importances, relevant).mean())
        fdr.append(selection_rates(importances, relevant)[1].mean())
        member_shares.append(
            [relevant_share(member.astype(np.float64), relevant).mean() for member in explanation.member_importances]
        )
    return {
        "dataset": f"syn{k}",
        "seed": seed,
        "variant": variant,
        "auc": round(float(np.mean(auc)), 4),
        "share": round(float(np.mean(share)), 3),
        "fdr": round(float(np.mean(fdr)), 3),
        "member_shares": [round(float(value), 3) for value in np.mean(member_shares, axis=0)],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, nargs="+", default=[1, 2, 3, 4, 5, 6], choices=range(1, 7))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--variant", choices=VARIANTS, default="defaults")
    parser.add_argument("--agreement-weight", type=float, default=0.1)
    parser.add_argument("--scale-spread", type=float, default=3.0)
    args = parser.parse_args()
    cells = [(k, seed) for k in args.datasets for seed in args.seeds]
    for result in Parallel(n_jobs=args.n_jobs, return_as="generator")(
        delayed(measure)(*cell, args.variant, args.agreement_weight, args.scale_spread) for cell in cells
    ):
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
