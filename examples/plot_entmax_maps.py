"""Softmax, sparsemax, 1.5-entmax and alpha-entmax on the same scores.
===================================================================

Every decision step of a sparsetab model turns the scores of its attentive transformer into a
feature mask with one of these maps (``entmax_mode``). All of them return a probability vector;
they differ in how many entries are exactly zero. alpha-entmax (computed here by
:func:`sparsetab.entmax.entmax_bisect`) runs from softmax (``alpha = 1``, never zero) through
1.5-entmax to sparsemax (``alpha = 2``, the most zeros). On the classic scores
``x = [-2, 0, 0.5]`` softmax keeps all three entries, while sparsemax gives ``[0, 0.25, 0.75]``
and 1.5-entmax ``[0, 0.326, 0.674]``. The script prints that table and writes
``entmax_maps.png``:

- left: the probabilities each map gives ``x = [-2, 0, 0.5]``;
- right: ``p_1`` for the two scores ``x = [t, 0]`` as a function of ``t``; softmax is the
  logistic curve, the sparse maps reach exactly 0 and 1 at a finite ``t`` (``|t| = 1`` for
  sparsemax, ``|t| = 2`` for 1.5-entmax).

Uses only torch and matplotlib and runs in a few seconds. Run::

    python examples/plot_entmax_maps.py [OUTPUT_DIR]

The figure goes to ``OUTPUT_DIR`` (default: ``examples/output/`` next to this file).

The figures as committed (``docs/images/``), drawn by this script:

.. image:: /images/entmax_maps.png
   :alt: softmax, alpha-entmax, 1.5-entmax and sparsemax on the same scores
"""

# sphinx_gallery_thumbnail_path = "images/entmax_maps.png"

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # write files only; works without a display

import matplotlib.pyplot as plt  # noqa: E402
import torch  # noqa: E402

from sparsetab.entmax import entmax15, entmax_bisect, sparsemax  # noqa: E402

CLASSIC_SCORES = (-2.0, 0.0, 0.5)

# name -> map from a (..., d) float64 tensor to probabilities along the last dimension, ordered
# from the densest (softmax, alpha = 1) to the sparsest (sparsemax, alpha = 2).
MAPS = {
    "softmax": lambda x: torch.softmax(x, dim=-1),
    "entmax alpha=1.25": lambda x: entmax_bisect(x, alpha=1.25, dim=-1),
    "entmax15": lambda x: entmax15(x, dim=-1),
    "entmax alpha=1.75": lambda x: entmax_bisect(x, alpha=1.75, dim=-1),
    "sparsemax": lambda x: sparsemax(x, dim=-1),
}


def probability_table(scores=CLASSIC_SCORES):
    """Probabilities that each map assigns to one score vector.

    Parameters
    ----------
    scores : sequence of float, default=(-2.0, 0.0, 0.5)
        The scores ``x``.

    Returns
    -------
    table : dict of str to list of float
        For each map of ``MAPS`` (softmax, alpha-entmax at 1.25, 1.5-entmax, alpha-entmax at
        1.75, sparsemax), its probabilities for ``x``, in the order of ``scores``.
    """
    x = torch.tensor([list(scores)], dtype=torch.float64)
    with torch.no_grad():
        return {name: mapping(x)[0].tolist() for name, mapping in MAPS.items()}


def two_score_curves(t):
    """``p_1`` of the two scores ``x = [t, 0]`` under each map.

    Parameters
    ----------
    t : sequence of float
        Values of the first score.

    Returns
    -------
    curves : dict of str to list of float
        For each map of ``MAPS``, the first probability at every ``t``.
    """
    t = torch.as_tensor(t, dtype=torch.float64)
    x = torch.stack([t, torch.zeros_like(t)], dim=-1)
    with torch.no_grad():
        return {name: mapping(x)[:, 0].tolist() for name, mapping in MAPS.items()}


def plot_figures(output_dir, *, scores=CLASSIC_SCORES, n_points=201):
    """Write ``entmax_maps.png``: the maps on ``scores`` (bars) and on ``[t, 0]`` (curves).

    Parameters
    ----------
    output_dir : pathlib.Path
        Folder of the PNG file; created if missing.
    scores : sequence of float, default=(-2.0, 0.0, 0.5)
        The scores of the bar chart.
    n_points : int, default=201
        Values of ``t``, evenly spaced in [-3, 3], of the curves.

    Returns
    -------
    paths : dict of str to pathlib.Path
        The written file, keyed ``"maps"``.
    """
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    table = probability_table(scores)
    t = torch.linspace(-3.0, 3.0, n_points, dtype=torch.float64).tolist()
    curves = two_score_curves(t)
    colours = plt.get_cmap("viridis")([i / (len(MAPS) - 1) for i in range(len(MAPS))])

    figure, (bars_ax, curve_ax) = plt.subplots(1, 2, figsize=(11, 4), layout="constrained")
    width = 0.8 / len(MAPS)
    for i, (name, probabilities) in enumerate(table.items()):
        positions = [j + (i - (len(MAPS) - 1) / 2) * width for j in range(len(scores))]
        bars = bars_ax.bar(positions, probabilities, width, label=name, color=colours[i])
        bars_ax.bar_label(bars, fmt="%.3f", fontsize=6, rotation=90, padding=2)
    bars_ax.set_xticks(range(len(scores)), [f"x{j + 1} = {score:g}" for j, score in enumerate(scores)])
    bars_ax.set_ylim(0, 1)
    bars_ax.set_ylabel("probability")
    bars_ax.set_title(f"x = [{', '.join(f'{score:g}' for score in scores)}]")
    bars_ax.legend(fontsize=8, loc="upper left")

    for i, (name, p1) in enumerate(curves.items()):
        curve_ax.plot(t, p1, label=name, color=colours[i])
    curve_ax.set_xlabel("t")
    curve_ax.set_ylabel("p1")
    curve_ax.set_title("x = [t, 0]")
    curve_ax.grid(alpha=0.3)
    curve_ax.legend(fontsize=8, loc="upper left")

    paths = {"maps": output_dir / "entmax_maps.png"}
    figure.savefig(paths["maps"], dpi=90)
    plt.close(figure)
    return paths


def main(output_dir):
    for name, probabilities in probability_table().items():
        zeros = sum(p == 0.0 for p in probabilities)
        print(f"{name:>18}: [{', '.join(f'{p:.3f}' for p in probabilities)}]  exact zeros: {zeros}")
    for path in plot_figures(output_dir).values():
        print(f"wrote {path}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / "output")
