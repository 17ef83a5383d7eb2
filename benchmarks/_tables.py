"""The Markdown tables of ``compare.py``: Tables 1-4 and the ablation, built from a :class:`_report.Report`'s cells."""

import numpy as np

from benchmarks import configs
from benchmarks._datasets import AUC_ERROR, task_of


def _format(value, spec):
    """``format(value, spec)``, or "n/a" for None and non-finite floats."""
    return "n/a" if value is None or (isinstance(value, float) and not np.isfinite(value)) else format(value, spec)


def _ratio(numerator, denominator, spec=".2f", smallest=0.0):
    """``numerator / denominator`` formatted, or "n/a" when undefined or either side is below ``smallest``."""
    if numerator is None or denominator is None or denominator <= 0:
        return "n/a"
    if min(numerator, denominator) < smallest:
        return f"n/a (< {smallest:g})"
    return format(numerator / denominator, spec)


class Tables:
    """The tables of :class:`_report.Report` (a mixin: the lookups, labels and plan are the report's)."""

    # -- tables 1 and 2 -----------------------------------------------------------------------------------------

    def single_seed_table(self, table):
        """Tables 1 and 2: per task the results of one seed, then the sparsetab / pytorch-tabnet ratios."""
        datasets, seeds, models = self.plan[table]
        seed = seeds[0]
        lines = [f"Seed {seed}.", ""]
        for task in ("classification", "regression"):
            names = [n for n in datasets if task_of(n) == task]
            if not names:
                continue
            first, second = ("test accuracy", "ROC AUC") if task == "classification" else ("test RMSE", "R^2")
            lines += [
                f"{task.capitalize()}:",
                "",
                f"| data set | model | {first} | {second} | fit s | epochs | predict rows/s | peak fit MiB |",
                "|---|---|---|---|---|---|---|---|",
            ]
            for name in names:
                for model, config in models:
                    result = self.get(name, model, config, seed)
                    if result is None:
                        continue
                    label = model
                    if "error" in result:
                        lines.append(f"| {name} | {label} | {result['error']} | | | | | |")
                        continue
                    lines.append(
                        f"| {name} | {label} | {_format(result['metric1'], '.4f')} | "
                        f"{_format(result['metric2'], '.4f')} | {_format(result['fit_s'], '.1f')} | "
                        f"{result['epochs']} | {_format(result['predict_rows_s'], ',.0f')} | "
                        f"{_format(result['peak_mib'], '.1f')} |"
                    )
            lines.append("")
        lines += [
            "Ratios sparsetab / pytorch-tabnet:",
            "",
            "| data set | fit s ratio | predict rows/s ratio | peak fit MiB ratio | "
            "epochs (sparsetab / pytorch-tabnet) |",
            "|---|---|---|---|---|",
        ]
        ours_config = models[0][1]
        for name in datasets:
            ours = self.get(name, "sparsetab", ours_config, seed) or {}
            theirs = self.get(name, "pytorch-tabnet", ours_config, seed) or {}
            if "error" in ours or "error" in theirs or not ours or not theirs:
                lines.append(f"| {name} | n/a | n/a | n/a | n/a |")
                continue
            lines.append(
                f"| {name} | {_ratio(ours['fit_s'], theirs['fit_s'])} | "
                f"{_ratio(ours['predict_rows_s'], theirs['predict_rows_s'])} | "
                f"{_ratio(ours['peak_mib'], theirs['peak_mib'], smallest=1.0)} | "
                f"{ours['epochs']} / {theirs['epochs']} |"
            )
        return lines

    # -- table 3 ------------------------------------------------------------------------------------------------

    @staticmethod
    def _mean(values):
        """Mean of ``values``, or None when empty."""
        return float(np.mean(values)) if values else None

    @staticmethod
    def _range(values, spec):
        """``"min–max"`` of ``values`` formatted with ``spec``, or "n/a"."""
        return f"{min(values):{spec}}–{max(values):{spec}}" if values else "n/a"

    def _seeds_text(self, summary):
        """``"done/of"`` seeds of a :meth:`summary`."""
        return f"{summary['done']}/{summary['of']}"

    def seeds_table(self):
        """Table 3: mean and range over seeds, error ratios to HistGradientBoosting (and CatBoost when it is in the
        plan), their geometric means over the data sets, and the goal summary; under ``--protocol user`` the
        training error next to the test error."""
        datasets, seeds, models = self.plan["seeds"]
        references = [("HistGradientBoosting", "HGB")]
        if ("CatBoost", "defaults") in models:
            references.append(("CatBoost", "CatBoost"))
        user = self.args.protocol == "user"
        intro = (
            f"Seeds {', '.join(map(str, seeds))}. Error: 1 - accuracy (1 - ROC AUC for "
            f"{', '.join(AUC_ERROR)}), RMSE for regression; error / HGB is the ratio of the mean errors."
        )
        if len(references) > 1:
            intro += " error / CatBoost: the same against CatBoost."
        if user:
            intro += (
                " train error: the same error on the rows given to `fit` (sparsetab and the boosting models: all the "
                "training rows, including any sparsetab holds out itself; pytorch-tabnet: the fit rows, not its "
                "`eval_set`), mean over the seeds."
            )
        columns = ["data set", "model", "metric", "mean", "range", "error mean"]
        columns += ["train error mean"] if user else []
        columns += [f"error / {short}" for _, short in references] + ["fit s mean", "seeds"]
        lines = [intro, "", "| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
        failures = []
        goal = []
        ratios = {(model, config): {short: [] for _, short in references} for model, config in models}
        for name in datasets:
            task = task_of(name)
            reference_errors = {
                short: self._mean(self.summary(name, model, "defaults", seeds)["error"]) for model, short in references
            }
            means = {}
            for model, config in models:
                summary = self.summary(name, model, config, seeds)
                error = self._mean(summary["error"])
                means[model, config] = error
                seeds_text = self._seeds_text(summary)
                if summary["errors"]:
                    failures += [f"- {name}, {self.label(model, config)}: {message}" for message in summary["errors"]]
                    seeds_text += " (failed: see below)"
                cells = [
                    name,
                    self.label(model, config),
                    self.metric_name(name, task),
                    _format(self._mean(summary["metric"]), ".4f"),
                    self._range(summary["metric"], ".4f"),
                    _format(error, ".4f"),
                ]
                if user:
                    cells.append(_format(self._mean(summary["train_error"]), ".4f"))
                for _, short in references:
                    reference = reference_errors[short]
                    cells.append(_ratio(error, reference, ".3f"))
                    if error is not None and reference is not None and reference > 0 and error > 0:
                        ratios[model, config][short].append(error / reference)
                cells += [_format(summary["fit_s"], ".1f"), seeds_text]
                lines.append("| " + " | ".join(cells) + " |")
            goal.append((name, means))
        lines += ["", *self.geometric_mean_lines(models, references, ratios, len(datasets))]
        if failures:
            lines += ["", "Failed cells:", "", *failures]
        lines += ["", *self.goal_lines(goal, len(seeds))]
        return lines

    def geometric_mean_lines(self, models, references, ratios, n_datasets):
        """Under Table 3: per model row, the geometric mean and the worst of its error ratios over the data sets."""
        names = " and ".join(f"error / {short}" for _, short in references)
        columns = ["model"]
        for _, short in references:
            columns += [f"error / {short}, geometric mean", f"worst / {short}", "data sets"]
        lines = [
            f"Geometric mean over the data sets of {names} (the ratios of the mean errors above; a data set counts "
            "where both mean errors are measured and above 0):",
            "",
            "| " + " | ".join(columns) + " |",
            "|" + "---|" * len(columns),
        ]
        for model, config in models:
            cells = [self.label(model, config)]
            for _, short in references:
                values = ratios[model, config][short]
                geometric = float(np.exp(np.mean(np.log(values)))) if values else None
                cells += [
                    _format(geometric, ".3f"),
                    _format(max(values) if values else None, ".3f"),
                    f"{len(values)} of {n_datasets}",
                ]
            lines.append("| " + " | ".join(cells) + " |")
        return lines

    def goal_lines(self, goal, n_seeds):
        """The goal summary of issue 17 under Table 3."""
        lines = [
            "Goal (issue 17; mean errors over the seeds): sparsetab (defaults) no worse than pytorch-tabnet on every "
            "data set, within 3% of HistGradientBoosting (error <= 1.03 x HGB's) on at least 5 of 8, within 10% on "
            "every one.",
            "",
            "| data set | sparsetab (defaults) error | pytorch-tabnet | HGB | <= pytorch-tabnet | <= 1.03 x HGB | "
            "<= 1.10 x HGB |",
            "|---|---|---|---|---|---|---|",
        ]
        counts = [0, 0, 0]
        complete = 0
        for name, means in goal:
            ours = means.get(("sparsetab", "defaults"))
            theirs = means.get(("pytorch-tabnet", "defaults"))
            hgb = means.get(("HistGradientBoosting", "defaults"))
            checks = [
                None if ours is None or theirs is None else ours <= theirs,
                None if ours is None or hgb is None else ours <= 1.03 * hgb,
                None if ours is None or hgb is None else ours <= 1.10 * hgb,
            ]
            if all(check is not None for check in checks):
                complete += 1
            for i, check in enumerate(checks):
                counts[i] += bool(check)
            marks = ["n/a" if check is None else "yes" if check else "no" for check in checks]
            lines.append(
                f"| {name} | {_format(ours, '.4f')} | {_format(theirs, '.4f')} | {_format(hgb, '.4f')} | "
                + " | ".join(marks)
                + " |"
            )
        n = len(goal)
        lines += [
            "",
            f"Counts over the {n} data set(s) of this run ({complete} complete): <= pytorch-tabnet on {counts[0]} of "
            f"{n}; within 3% of HGB on {counts[1]} of {n} (goal: at least 5 of 8); within 10% on {counts[2]} of {n} "
            "(goal: all 8)." + (f" Only {n_seeds} seed(s): the goal is stated for 3." if n_seeds < 3 else ""),
        ]
        return lines

    # -- ablation -----------------------------------------------------------------------------------------------

    def screen_table(self):
        """The ablation: per variant the error mean (range) per data set, the mean ratios and the fit seconds."""
        datasets, seeds, models = self.plan["screen"]
        variants = [config for model, config in models if model == "sparsetab"]
        base = "old_defaults" if "old_defaults" in variants else None
        lines = [
            f"Seeds {', '.join(map(str, seeds))}; cells: error mean (min–max over the seeds). Variants apply on top of "
            "old_defaults unless they name a base (configs.py). error / HGB: mean over the data sets of the ratio "
            "of the mean errors to HistGradientBoosting's"
            + ("; error / old: the same against old_defaults" if base else "")
            + ". fit s: mean over data sets and seeds.",
            "",
            "| variant | "
            + " | ".join(datasets)
            + " | error / HGB |"
            + (" error / old |" if base else "")
            + " fit s mean |",
            "|---|" + "---|" * len(datasets) + "---|" + ("---|" if base else "") + "---|",
        ]
        failures = []
        hgb = {
            name: self._mean(self.summary(name, "HistGradientBoosting", "defaults", seeds)["error"])
            for name in datasets
        }
        old = (
            {name: self._mean(self.summary(name, "sparsetab", base, seeds)["error"]) for name in datasets}
            if base
            else {}
        )
        rows = [("sparsetab", variant) for variant in variants] + [("HistGradientBoosting", "defaults")]
        for model, config in rows:
            cells, ratios, ratios_old, fit = [], [], [], []
            for name in datasets:
                summary = self.summary(name, model, config, seeds)
                error = self._mean(summary["error"])
                if summary["errors"]:
                    failures += [f"- {config}, {name}: {message}" for message in summary["errors"]]
                text = (
                    "failed"
                    if summary["errors"] and not summary["done"]
                    else (f"{_format(error, '.4f')} ({self._range(summary['error'], '.4f')})")
                )
                if summary["done"] < summary["of"]:
                    text += f" [{summary['done']}/{summary['of']}]"
                cells.append(text)
                if error is not None and hgb[name]:
                    ratios.append(error / hgb[name])
                if error is not None and old.get(name):
                    ratios_old.append(error / old[name])
                fit += [r["fit_s"] for r in summary["results"]]
            label = config if model == "sparsetab" else "HistGradientBoosting (reference)"
            line = f"| {label} | " + " | ".join(cells) + f" | {_format(self._mean(ratios), '.3f')} |"
            if base:
                line += f" {_format(self._mean(ratios_old), '.3f')} |"
            lines.append(line + f" {_format(self._mean(fit), '.1f')} |")
        if failures:
            lines += ["", "Failed cells:", "", *sorted(set(failures))]
        return lines

    # -- table 4 ------------------------------------------------------------------------------------------------

    def tuned_table(self):
        """Table 4: tuned sparsetab and HistGradientBoosting (defaults for reference), search costs, best params."""
        datasets, seeds, models = self.plan["tuned"]
        budget = configs.QUICK_TUNING_BUDGET_CPU_S if self.args.quick else configs.TUNING_BUDGET_CPU_S
        lines = [
            f"Seeds {', '.join(map(str, seeds))}; budget {budget:.0f} CPU s per search; error / tuned HGB is the "
            "ratio of the mean errors.",
            "",
            "| data set | model | metric | mean | range | error mean | error / tuned HGB | search CPU s | "
            "refit s | seeds |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        details, failures, wins, complete = [], [], 0, 0
        for name in datasets:
            tuned_hgb = self._mean(self.summary(name, "HistGradientBoosting", "tuned", seeds)["error"])
            tuned_ours = None
            for model, config in models:
                summary = self.summary(name, model, config, seeds)
                error = self._mean(summary["error"])
                if model == "sparsetab" and config == "tuned":
                    tuned_ours = error
                search = [r["search_cpu_s"] for r in summary["results"] if "search_cpu_s" in r]
                search_text = _format(self._mean(search), ",.0f") if search else ""
                if search and max(search) > budget:
                    search_text += " (over budget)"
                if summary["errors"]:
                    failures += [f"- {name}, {self.label(model, config)}: {message}" for message in summary["errors"]]
                lines.append(
                    f"| {name} | {self.label(model, config)} | {self.metric_name(name, task_of(name))} | "
                    f"{_format(self._mean(summary['metric']), '.4f')} | {self._range(summary['metric'], '.4f')} | "
                    f"{_format(error, '.4f')} | {_ratio(error, tuned_hgb, '.3f')} | {search_text} | "
                    f"{_format(summary['fit_s'], '.1f')} | {self._seeds_text(summary)} |"
                )
                for seed, result in zip(seeds, [self.get(name, model, config, s) for s in seeds]):
                    if result is None or "error" in result or "best_params" not in result:
                        continue
                    rounds = ", ".join(f"{c}@{r:,}" for c, r in zip(result["n_candidates"], result["n_resources"]))
                    details.append(
                        f"- {name}, {model}, seed {seed}: candidates@rows per round {rounds}; "
                        f"{result['search_cpu_s']:,.0f} CPU s (planned {result['plan']['estimated_cpu_s']:,.0f} from a "
                        f"default fit of {result['default_cpu_s']:.1f} CPU s); {result['failed_candidates']} failed "
                        f"candidate fit(s); best validation {result['scoring']} {result['best_validation_score']:.4f}; "
                        f"best `{result['best_params']}`"
                    )
            if tuned_ours is not None and tuned_hgb is not None:
                complete += 1
                wins += tuned_ours <= tuned_hgb
        lines += [
            "",
            f"Goal (issue 17): tuned sparsetab matches or beats tuned HGB (error <= HGB's) on at least 2 of the 4 "
            f"screening sets: {wins} of {complete} here.",
        ]
        if failures:
            lines += ["", "Failed cells:", "", *failures]
        if details:
            lines += ["", "Searches:", "", *details]
        return lines
