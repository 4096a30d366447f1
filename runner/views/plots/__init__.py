"""Plots of btlab results: start-square heatmaps, scaling, time against nodes.

Every function returns a :class:`matplotlib.figure.Figure` and, given
``path`` (a ``.png`` or ``.svg`` file, or a list of them), also saves it
there. Figures are made without :mod:`matplotlib.pyplot` (no GUI, no global
state; PNG goes through the Agg renderer), so they are safe in scripts,
servers and worker processes; in a notebook, display the returned figure.

Censored trials (status ``node_limit`` / ``time_limit``) show lower bounds:
heatmaps hatch their cells and write their values ``≥N``; line and scatter
plots draw them as open markers.

The heatmaps are drawn here; the plots against size and work
(:func:`metric_vs_size`, :func:`time_vs_nodes`, with :func:`label` and
:func:`size_axis`) live in :mod:`btlab.views.plots.trends`, the board drawings
(:func:`knight_tour`, :func:`queens`) in :mod:`btlab.views.plots.boards` and saving
(:data:`DPI`, :func:`save`) in :mod:`btlab.views.plots.figure_files`, the survival curves and
cactus plots of search cost (:func:`survival_curves`, :func:`finished_curves`,
:func:`cactus`) in
:mod:`btlab.views.plots.survival`, the share of trials solved against size
(:func:`solved_share_vs_size`) in :mod:`btlab.views.plots.rates`; all are re-exported here, so
``plots.metric_vs_size(df)``, ``plots.knight_tour(row)``, ``plots.survival_curves(df)``
and ``plots.save(fig, path)`` work.

Modules:

- ``boards``: board drawings: a knight's tour over its board, an N-Queens placement.
- ``figure_files``: saving figures: one resolution, PNG or SVG, no pyplot.
- ``rates``: the share of trials solved against the problem size.
- ``survival``: the distribution of search cost with censoring: survival curves, cactus plots.
- ``trends``: a metric against the problem size, time against nodes.
"""

from __future__ import annotations

import math
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.colors import LogNorm, Normalize, SymLogNorm
from matplotlib.figure import Figure
from matplotlib.patches import Patch, Rectangle

from btlab import analysis
from btlab.views.plots.boards import knight_tour, queens
from btlab.views.plots.figure_files import DPI, finish, save
from btlab.views.plots.rates import solved_share_vs_size
from btlab.views.plots.survival import cactus, finished_curves, survival_curves
from btlab.views.plots.trends import (
    _describe,
    _scale,
    label,
    metric_vs_size,
    size_axis,
    time_vs_nodes,
)

# Public names: this module's plots and, re-exported, the board drawings of
# btlab.views.plots.boards and the saving of btlab.views.plots.figure_files.
__all__ = [
    "ANNOTATE_MAX", "DPI", "HEATMAP_MAX_SIDE", "cactus", "finished_curves", "heatmap",
    "heatmap_block",
    "knight_tour", "label", "solved_share_vs_size", "survival_curves",
    "metric_vs_size", "queens", "save", "size_axis", "time_vs_nodes",
]

#: Boards up to this many rows and columns get their values written in the cells.
ANNOTATE_MAX = 12
#: Heatmaps of boards with more rows or columns than this show k x k blocks of
#: start squares, each the block's largest value (a bound if any cell is one).
HEATMAP_MAX_SIDE = 100
def _compact(v: float, metric: str, mark: str = "") -> str:
    """A short cell label: 46, 1.9k, 16.5k, 1.0M; timings as 380us, 1.2ms, 0.64s.

    A lower bound (``mark`` ``>=``) is rounded down and an upper bound (``<=``)
    up, so the label stays a true bound: 999,945 with ``>=`` is ``999k``.
    """
    direction = {">=": math.floor, "<=": math.ceil}.get(mark)
    units = ((("s", 1e9), ("ms", 1e6), ("us", 1e3), ("ns", 1.0)) if metric.endswith("_ns")
             else (("M", 1e6), ("k", 1e3), ("", 1.0)))
    a = abs(v)
    if a == 0 or not math.isfinite(v):
        return "0" if a == 0 else str(v)
    i = next((k for k, (_, scale) in enumerate(units) if a >= scale), len(units) - 1)
    unit, scale = units[i]
    x = v / scale
    if unit == "" and not float(v).is_integer():
        digits = max(0, 1 - math.floor(math.log10(a)))  # two significant digits
    else:
        digits = 1 if abs(x) < 10 and unit else 0
    if direction is None:
        text = f"{x:.{digits}f}"
        if abs(float(text)) >= 1000 and i > 0:  # 999,950 would read 1000k: 1.0M
            unit, scale = units[i - 1]
            text = f"{v / scale:.1f}"
        return text + unit
    step = 10 ** digits
    return f"{direction(x * step) / step:.{digits}f}{unit}"


# --------------------------------------------------------------------------- heatmap


def heatmap(df: pd.DataFrame, metric: str = "backtracks", *, title: str | None = None,
            annotate: bool | None = None, cmap: str = "viridis", vmax: float | None = None,
            path=None, **filters: Any) -> Figure:
    """A knight's-tour metric over the start squares of one board, on a log colour scale.

    Args:
        df: rows as :func:`btlab.analysis.load` returns them, or the
            ``trials`` of a :class:`btlab.analysis.Comparison` (then the
            ``<metric>_bound`` column marks the bounds, e.g. ``reduction``).
        metric: the metric column (timings are shown in seconds).
        title: the title; default names the metric, board and filters.
        annotate: write each cell's value; default: boards up to
            :data:`ANNOTATE_MAX` x :data:`ANNOTATE_MAX`.
        cmap: a matplotlib colour map (a diverging one is used when values
            are negative).
        vmax: the top of the colour scale (in the metric's unit, timings in
            ns), to give several heatmaps one scale; default: the largest value.
        path: where to save (``.png`` / ``.svg``, or a list), or None.
        **filters: column=value filters leaving one board and one trial per
            start square (see :func:`btlab.analysis.start_grid`).

    Returns:
        The Figure: one image of rows x cols cells (row 0 at the top), a
        colour bar (symmetric log scale, so 0 is shown; log scale when all
        values are positive), cells of censored trials hatched and written
        ``≥N``, failed trials grey and written ``err``; in a comparison's
        ``trials``, bounds are written ``≥N`` / ``≤N`` and a pair censored on
        both sides (``unknown``) is grey, hatched and written ``?``. A board with more
        than :data:`HEATMAP_MAX_SIDE` rows or columns is downsampled: each
        cell is a k x k block of start squares showing the block's largest
        value (hatched if any of its trials is censored), and the title says so.

    Raises:
        ValueError: as :func:`btlab.analysis.start_grid`.
    """
    grid = analysis.start_grid(df, metric, **filters)
    values = _scale(metric, grid.to_numpy(dtype="float64"))
    marks = np.full(values.shape, "", dtype=object)
    errors = np.zeros(values.shape, dtype=bool)
    if "status" in df.columns:
        status = analysis.start_grid(df, "status", **filters).to_numpy(dtype=object)
        marks[np.isin(status, analysis.CENSORED)] = ">="
        errors = status == "error"
    elif f"{metric}_bound" in df.columns:
        bounds = analysis.start_grid(df, f"{metric}_bound", **filters).to_numpy(dtype=object)
        for b in (">=", "<="):
            marks[bounds == b] = b
        marks[bounds == "unknown"] = "?"
    raw = grid.to_numpy(dtype="float64")
    block = heatmap_block(*values.shape)
    if block > 1:
        raw = _blocks(raw, marks, errors, block)[0]
        values, marks, errors = _blocks(values, marks, errors, block)
        annotate = False
    rows, cols = values.shape
    finite = values[np.isfinite(values)]
    lo = float(finite.min()) if finite.size else 0.0
    hi = float(finite.max()) if finite.size else 1.0
    if vmax is not None:
        hi = max(hi, float(_scale(metric, vmax)))
    if lo < 0:
        m = max(abs(lo), abs(hi), 1.0)
        norm: Normalize = SymLogNorm(linthresh=1.0, linscale=0.5, vmin=-m, vmax=m, base=10)
        cmap = "RdBu_r" if cmap == "viridis" else cmap
    elif lo > 0 and (lo < 1 or hi / lo > 10):
        norm = LogNorm(vmin=lo, vmax=max(hi, lo * 10))
    else:
        positive = finite[finite > 0]
        smallest = float(positive.min()) if positive.size else 1.0
        linthresh = min(1.0, smallest) if not metric.endswith("_ns") else max(smallest, 1e-6)
        norm = SymLogNorm(linthresh=linthresh, linscale=0.5, vmin=0, vmax=max(hi, 10 * linthresh),
                          base=10)
    colours = matplotlib.colormaps[cmap].with_extremes(bad="#d9d9d9")
    cell = 0.62 if max(rows, cols) <= ANNOTATE_MAX else max(0.16, 7.5 / max(rows, cols))
    fig = Figure(figsize=(max(4.8, cols * cell + 2.2), max(3.8, rows * cell + 1.2)),
                 layout="constrained")
    ax = fig.add_subplot()
    image = ax.imshow(np.ma.masked_invalid(values), cmap=colours, norm=norm, origin="upper",
                      interpolation="nearest", aspect="equal")
    step = 1 if max(rows, cols) <= 16 else math.ceil(max(rows, cols) / 12)
    ax.set_xticks(range(0, cols, step))
    ax.set_yticks(range(0, rows, step))
    ax.tick_params(length=0, labelsize=9)
    ax.set_xticks(np.arange(-0.5, cols, 1), minor=True)
    ax.set_yticks(np.arange(-0.5, rows, 1), minor=True)
    ax.grid(which="minor", color="white", linewidth=0.6 if max(rows, cols) <= 30 else 0)
    ax.tick_params(which="minor", length=0)
    ax.xaxis.set_ticks_position("top")
    ax.xaxis.set_label_position("top")
    ax.set_xlabel("start column", fontsize=10)
    ax.set_ylabel("start row", fontsize=10)
    for spine in ax.spines.values():
        spine.set_visible(False)
    annotate = max(rows, cols) <= ANNOTATE_MAX if annotate is None else annotate
    fontsize = 8 if max(rows, cols) <= 8 else 7 if max(rows, cols) <= 10 else 6
    for r in range(rows):
        for c in range(cols):
            if marks[r, c]:
                shade = (colours(norm(values[r, c])) if np.isfinite(values[r, c])
                         else (0.85, 0.85, 0.85, 1))
                dark = 0.299 * shade[0] + 0.587 * shade[1] + 0.114 * shade[2] > 0.5
                ax.add_patch(Rectangle((c - 0.5, r - 0.5), 1, 1, fill=False, hatch="///",
                                       edgecolor=(0, 0, 0, 0.35) if dark else (1, 1, 1, 0.5),
                                       linewidth=0))
            if not annotate:
                continue
            v = values[r, c]
            if errors[r, c]:
                text, colour = "err", "black"
            elif not np.isfinite(v) and marks[r, c] == "?":
                text, colour = "?", "black"  # both sides censored: nothing is known
            elif not np.isfinite(v):
                continue
            else:
                mark = {">=": "≥", "<=": "≤", "?": "?"}.get(marks[r, c], "")
                text = mark + _compact(raw[r, c], metric, marks[r, c])
                red, green, blue, _ = colours(norm(v))
                colour = "black" if 0.299 * red + 0.587 * green + 0.114 * blue > 0.5 else "white"
            ax.text(c, r, text, ha="center", va="center", fontsize=fontsize, color=colour,
                    fontweight="bold" if marks[r, c] else "normal")
    bar = fig.colorbar(image, ax=ax, shrink=0.9, pad=0.02)
    scale = "log scale" if isinstance(norm, LogNorm) else "symmetric log scale"
    bar.set_label(f"{label(metric)} ({scale})", fontsize=9)
    bar.ax.tick_params(labelsize=8)
    if block > 1:  # the axes count blocks: label them in squares
        ax.xaxis.set_major_formatter(lambda x, _: f"{int(x) * block:,}")
        ax.yaxis.set_major_formatter(lambda y, _: f"{int(y) * block:,}")
    if title is None:
        board = f"{grid.shape[0]} x {grid.shape[1]}"
        shown = {k: v for k, v in filters.items() if k not in ("rows", "cols")}
        title = f"{label(metric)} by start square, {board}" + (
            f"\n{_describe(shown)}" if shown else "") + (
            f"\ndownsampled: each cell is the largest of {block} x {block} start squares"
            if block > 1 else "")
    ax.set_title(title, fontsize=11, pad=8)
    handles = []
    if (marks != "").any():
        what = ("censored: value is a lower bound" if "status" in df.columns
                else "bound (≥ lower, ≤ upper, ? unknown)")
        handles.append(Patch(facecolor="#777777", edgecolor="white", hatch="///", label=what))
    if errors.any():
        handles.append(Patch(facecolor="#d9d9d9", label="error"))
    if handles:
        fig.legend(handles=handles, loc="outside lower center", fontsize=8, frameon=False,
                   ncols=len(handles))
    return finish(fig, path)


def heatmap_block(rows: int, cols: int) -> int:
    """The side of the blocks of start squares :func:`heatmap` shows as one cell (1: none)."""
    return max(1, math.ceil(max(rows, cols) / HEATMAP_MAX_SIDE))


def _blocks(values: np.ndarray, marks: np.ndarray, errors: np.ndarray,
            k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """k x k blocks of a start grid: the largest value, a bound mark if any, errors only."""
    rows, cols = values.shape
    br, bc = math.ceil(rows / k), math.ceil(cols / k)

    def tiles(a: np.ndarray, fill: Any) -> np.ndarray:
        padded = np.full((br * k, bc * k), fill, dtype=a.dtype)
        padded[:rows, :cols] = a
        return padded.reshape(br, k, bc, k).swapaxes(1, 2).reshape(br, bc, k * k)

    v = tiles(values, np.nan)
    finite = np.isfinite(v)
    top = np.where(finite, v, -np.inf).max(axis=2)
    top[~finite.any(axis=2)] = np.nan
    m = tiles(marks, "")
    out_marks = np.full((br, bc), "", dtype=object)
    for b in ("?", "<=", ">="):  # a lower bound anywhere makes the maximum one
        out_marks[(m == b).any(axis=2)] = b
    out_errors = tiles(errors, False).any(axis=2) & ~finite.any(axis=2)
    return top, out_marks, out_errors
