"""Named sparsetab configurations and the search spaces of ``compare.py``'s tables 3, 4 and the ablation.

A configuration is a dict of constructor parameters applied on top of ``SparseTabNetClassifier`` /
``SparseTabNetRegressor``'s own defaults (``random_state`` is added per seed by ``compare.py``):

- ``"defaults"``: ``{}``, whatever the installed estimator's defaults are today;
- ``"old_defaults"``: the defaults of sparsetab 0.1.0 written out (:data:`OLD_DEFAULTS`), plus the legacy values of
  the parameters added after 0.1.0 (:data:`LEGACY_VALUES`) where the installed estimator accepts them, so that the
  configuration means the 0.1.0 model before and after those parameters land.

Screening variants (:data:`VARIANTS`) are dicts applied on top of a base. A configuration name is one or more parts
joined by ``+``, applied left to right (later parts win on a shared parameter):

- a base (``defaults`` or ``old_defaults``), only as the first part; without one the base is ``old_defaults``;
- a variant name from :data:`VARIANTS`;
- ``param=value`` with a Python literal value, e.g. ``n_steps=5`` or ``numerical_embedding='periodic'``.

So ``"cosine+wide+ple"`` is ``old_defaults`` with the union of the three variants, and ``"defaults+n_d=16"``
is today's defaults with ``n_d=16``. To add a variant, add an entry to :data:`VARIANTS`.

A variant whose parameter the installed sparsetab does not accept raises :class:`UnknownParameterError` when it is
resolved; ``compare.py`` shows the message in that cell and carries on.
"""

import ast

from scipy.stats import loguniform

#: Constructor defaults of sparsetab 0.1.0 (as of the version that introduced this module).
OLD_DEFAULTS = dict(
    n_d=8,
    n_a=8,
    n_steps=3,
    gamma=1.3,
    n_independent=2,
    n_shared=2,
    lambda_sparse=1e-3,
    virtual_batch_size=128,
    momentum=0.02,
    batch_size=1024,
    max_epochs=100,
    learning_rate=0.02,
    learning_rate_decay=1.0,
    max_grad_norm=1.0,
    entmax_mode="sparsemax",
    entmax_alpha=1.5,
    cat_emb_dim=1,
    early_stopping="auto",
    validation_fraction=0.1,
    n_iter_no_change=10,
    tol=1e-4,
    scoring="loss",
)

#: Parameters added after 0.1.0, with the values that reproduce the 0.1.0 model; part of ``old_defaults`` only
#: where the installed estimator accepts them.
LEGACY_VALUES = dict(
    learning_rate_schedule="exponential",
    warmup_epochs=0,
    weight_decay=0.0,
    numerical_transform="standard",  # newer code also clips to the training range
    numerical_embedding=None,
    n_ensemble=1,
    weight_averaging_epochs=None,
)

BASES = ("defaults", "old_defaults")

#: Screening variants: parameters applied on top of the base configuration.
VARIANTS = {
    "old_defaults": {},  # the base itself, so that it can be a row of the ablation table
    "defaults": {},  # only valid as a base; listed so that --variants defaults works
    # Run all epochs (patience 1000) and restore the best validation epoch.
    "cosine": dict(learning_rate_schedule="cosine", warmup_epochs=5, n_iter_no_change=1000),
    # The cosine schedule under the estimator's patience (at least 200 steps), which may end it early.
    "cosine_es": dict(learning_rate_schedule="cosine", warmup_epochs=5),
    "wide": dict(n_d=32, n_a=32),
    "wide16": dict(n_d=16, n_a=16),
    "patience20": dict(n_iter_no_change=20),
    "cosine_wide": dict(learning_rate_schedule="cosine", warmup_epochs=5, n_iter_no_change=1000, n_d=32, n_a=32),
    "ple": dict(numerical_embedding="piecewise_linear", n_bins=32),
    "periodic": dict(numerical_embedding="periodic"),
    "quantile": dict(numerical_transform="quantile"),
    "auto_batch": dict(batch_size="auto", virtual_batch_size="auto"),
    "weight_decay": dict(weight_decay=1e-5),
    "ensemble3": dict(n_ensemble=3),
    "entmax15": dict(entmax_mode="entmax15"),
    "steps5": dict(n_steps=5),
}


class UnknownParameterError(ValueError):
    """A configuration sets a parameter the installed sparsetab estimator does not accept."""


def resolve(name, accepted):
    """Constructor parameters of configuration ``name``.

    Parameters
    ----------
    name : str
        ``"defaults"``, ``"old_defaults"``, a variant, or parts joined by ``+`` (see the module docstring).
    accepted : collection of str
        The parameter names of the installed estimator (``estimator.get_params().keys()``).

    Returns
    -------
    dict
        Parameters to pass to the estimator on top of its defaults.

    Raises
    ------
    UnknownParameterError
        When a part sets a parameter not in ``accepted``.
    ValueError
        For an unknown part or a base that is not the first part.
    """
    parts = [part.strip() for part in name.split("+")]
    base = parts[0] if parts[0] in BASES else "old_defaults"
    if parts[0] in BASES:
        parts = parts[1:]
    params = {} if base == "defaults" else base_old_defaults(accepted)
    for part in parts:
        if part in BASES and part != base:
            raise ValueError(f"configuration {name!r}: the base {part!r} may only be the first part")
        if "=" in part:
            key, value = part.split("=", 1)
            try:
                update = {key.strip(): ast.literal_eval(value.strip())}
            except (ValueError, SyntaxError) as exc:
                raise ValueError(f"configuration {name!r}: {part!r} is not param=<Python literal>") from exc
        elif part in VARIANTS:
            update = VARIANTS[part]
        else:
            raise ValueError(f"configuration {name!r}: unknown variant {part!r} (known: {', '.join(VARIANTS)})")
        unknown = sorted(set(update) - set(accepted))
        if unknown:
            raise UnknownParameterError(
                f"the installed sparsetab does not accept {', '.join(unknown)} (configuration {name!r}, part {part!r})"
            )
        params.update(update)
    return params


def base_old_defaults(accepted):
    """:data:`OLD_DEFAULTS` plus the :data:`LEGACY_VALUES` whose parameter is in ``accepted``."""
    params = dict(OLD_DEFAULTS)
    params.update({key: value for key, value in LEGACY_VALUES.items() if key in accepted})
    return params


# ---------------------------------------------------------------------------------------------------------------
# Table 4: tuning

#: CPU seconds one search may use (per model, data set and seed).
TUNING_BUDGET_CPU_S = 600.0
#: The same under --quick.
QUICK_TUNING_BUDGET_CPU_S = 20.0
#: Halving factor (``factor`` of HalvingRandomSearchCV).
HALVING_FACTOR = 3
#: Assumed mean cost of one candidate at full resources, relative to one default fit (wider nets, smaller
#: batches and longer boosting cost more than the defaults); used to size the search to the budget.
COST_MULTIPLIER = {"sparsetab": 2.5, "HistGradientBoosting": 3.0}
#: At most this many candidates in the first halving round.
MAX_CANDIDATES = {"sparsetab": 200, "HistGradientBoosting": 400}
QUICK_MAX_CANDIDATES = 6
#: Fewest training rows of a first-round candidate (and at least 20 per class).
MIN_RESOURCES = 1000
QUICK_MIN_RESOURCES = 500

#: Base estimator parameters of the searches. sparsetab: today's defaults with early stopping always on (the
#: candidates of the first rounds see few rows, under the 10,000 of ``early_stopping="auto"``).
#: HistGradientBoosting: early stopping always on, and up to 1,000 iterations.
TUNING_BASE = {
    "sparsetab": dict(early_stopping=True),
    "HistGradientBoosting": dict(early_stopping=True, max_iter=1000),
}

#: sparsetab's search space; one dict per width so that n_d = n_a (a candidate picks a dict, then a value per key).
SPARSETAB_SPACE = dict(
    n_steps=[3, 4, 5],
    gamma=[1.0, 1.3, 1.5, 2.0],
    learning_rate=loguniform(5e-3, 5e-2),
    lambda_sparse=[0.0, 1e-4, 1e-3],
    batch_size=[256, 512, 1024],
    entmax_mode=["sparsemax", "entmax15"],
)
SPARSETAB_WIDTHS = (8, 16, 32, 64)
#: Added to sparsetab's space only where the installed estimator accepts the parameter.
SPARSETAB_NEW_SPACE = dict(
    learning_rate_schedule=["exponential", "cosine"],
    weight_decay=[0.0, 1e-5, 1e-4],
    numerical_embedding=[None, "piecewise_linear", "periodic"],
    # Issue 32's parameters: TabM-style members, the categorical embedding width, the weight average.
    n_efficient_members=[1, 2],
    cat_emb_dim=[1, 4, 8],
    weight_averaging_epochs=[None, 2.0],
)

HGB_SPACE = dict(
    learning_rate=loguniform(0.01, 0.3),
    max_leaf_nodes=[15, 31, 63, 127],
    min_samples_leaf=[5, 10, 20, 40, 80],
    l2_regularization=[0.0, 1e-3, 1e-2, 0.1, 1.0, 10.0],
    max_features=[0.5, 0.75, 1.0],
)


def search_space(model, accepted=()):
    """``param_distributions`` of HalvingRandomSearchCV for ``model``.

    Parameters
    ----------
    model : {"sparsetab", "HistGradientBoosting"}
    accepted : collection of str
        The installed estimator's parameter names (sparsetab: filters :data:`SPARSETAB_NEW_SPACE`).

    Returns
    -------
    dict or list of dict
    """
    if model == "HistGradientBoosting":
        return dict(HGB_SPACE)
    space = dict(SPARSETAB_SPACE)
    space.update({key: values for key, values in SPARSETAB_NEW_SPACE.items() if key in accepted})
    return [dict(space, n_d=[width], n_a=[width]) for width in SPARSETAB_WIDTHS]


def describe_space(space):
    """Short text of a search space for the report and the cache key (distributions as ``loguniform(a, b)``)."""

    def one(values):
        if hasattr(values, "dist"):  # a frozen scipy distribution
            return f"{values.dist.name}{tuple(float(a) for a in values.args)}"
        return repr(list(values))

    spaces = space if isinstance(space, list) else [space]
    return " | ".join(
        "{" + ", ".join(f"{key}: {one(values)}" for key, values in sorted(s.items())) + "}" for s in spaces
    )
