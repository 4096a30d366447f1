"""Plots of btlab results against size and work: a metric against the problem size, time
against nodes; and the axis labels every plot uses.

Part of :mod:`btlab.views.plots`, which re-exports every public name here
(``plots.metric_vs_size``, ``plots.time_vs_nodes``, ``plots.label``,
``plots.size_axis``). Figures are made without :mod:`matplotlib.pyplot`;
censored trials are drawn as open markers (their values are lower bounds).
"""

from __future__ import annotations

from typing import Any

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from btlab import analysis
from btlab.views.plots.figure_files import finish, plot_text

_LABELS = {
    "nodes": "nodes (placements)", "backtracks": "backtracks", "dead_ends": "dead ends",
    "checks": "checks (squares tested)", "solutions": "solutions", "max_depth": "max depth",
    "wall_ns": "wall time (s)", "cpu_ns": "CPU time (s)",
    "reduction": "reduction (baseline - treatment)",
    "ratio": "ratio (treatment / baseline)",
}


def label(metric: str) -> str:
    """Axis label of a metric (timings in seconds)."""
    return _LABELS.get(metric, metric.replace("_", " "))


def log_label(metric: str) -> str:
    """Axis label of a metric on a log axis: ``nodes (placements, log scale)``,
    ``backtracks (log scale)`` -- one pair of parentheses."""
    text = label(metric)
    return text[:-1] + ", log scale)" if text.endswith(")") else text + " (log scale)"


def _scale(metric: str, values):
    """Timings in ns -> seconds; other metrics unchanged."""
    return values / 1e9 if metric.endswith("_ns") else values


def _describe(filters: dict[str, Any]) -> str:
    return ", ".join(f"{k} = {plot_text(v)}" for k, v in filters.items())



# --------------------------------------------------------------------------- scaling


def size_axis(df: pd.DataFrame) -> tuple[pd.Series, str]:
    """The problem size of each row and its axis label.

    ``n`` for N-Queens; for the knight's tour ``n`` of n x n boards when every
    board is square, else the number of squares rows x cols.
    """
    if "n" in df.columns and df["n"].notna().all():
        return df["n"].astype(int), "n (board n x n)"
    if "rows" in df.columns and "cols" in df.columns:
        if (df["rows"] == df["cols"]).all():
            return df["rows"].astype(int), "board size n (n x n)"
        return (df["rows"] * df["cols"]).astype(int), "board squares (rows x cols)"
    raise ValueError("no size column: expected n (N-Queens) or rows and cols (knight's tour)")


def _series_by(df: pd.DataFrame, by: str | None) -> str | None:
    if by is not None:
        return by
    for candidate in ("strategy", "heuristic", "tie_break", "mode", "source"):
        if candidate in df.columns and df[candidate].nunique() > 1:
            return candidate
    return None


def metric_vs_size(df: pd.DataFrame, metric: str = "nodes", *, by: str | None = "strategy",
                   logx: bool = False, title: str | None = None, path=None,
                   **filters: Any) -> Figure:
    """A metric against the problem size, one line per value of ``by``, log y.

    Each point is the median over the trials of that size and series
    (start squares, other parameters; repeats folded first); a band spans
    their min to max. A point whose median a censored trial could still move
    is an open triangle: a lower bound.

    Args:
        df: rows as :func:`btlab.analysis.load` returns them.
        metric: the metric (timings in seconds).
        by: the column naming the series (default ``strategy``; None: the
            first varying of strategy, heuristic, tie_break, mode, source).
        logx: a logarithmic size axis (sizes spread over decades, 8 to 200),
            still one tick per size.
        title: the title (default names metric and filters).
        path: where to save, or None.
        **filters: column=value filters applied first.

    Returns:
        The Figure (x: ``n`` or board squares, see :func:`size_axis`; y: log,
        symmetric log when a value is 0).

    Raises:
        ValueError: a missing column, no trial matches the filters, or every
            trial that does failed.
    """
    t = analysis.aggregate_repeats(analysis.select(df, filters))
    t = t[t["status"].astype("object") != "error"]
    if t.empty:
        raise ValueError("no trial ended without an error")
    by = _series_by(t, by) if by is None or by in t.columns else _series_by(t, None)
    size, xlabel = size_axis(t)
    t = t.assign(_size=size.to_numpy(), _value=_scale(metric, t[metric].astype("float64")),
                 _cens=analysis.is_censored(t).to_numpy())
    fig = Figure(figsize=(7.2, 4.6), layout="constrained")
    ax = fig.add_subplot()
    groups = t.groupby(by, observed=True, sort=True) if by else [("all", t)]
    colours = matplotlib.colormaps["tab10"]
    any_bound = False
    series: list[Any] = []
    for i, (name, sub) in enumerate(groups):
        stats = sub.groupby("_size")["_value"].agg(["median", "min", "max"])
        bound = pd.Series({s: bool((g.loc[g["_cens"], "_value"]
                                    <= g["_value"].sort_values().iloc[len(g) // 2]).any())
                           for s, g in sub.groupby("_size")})
        colour = colours(i % 10)
        style = ("-", "--", "-.", ":")[i % 4]  # dashes let a covered line show through
        ax.plot(stats.index, stats["median"], style, color=colour, lw=1.8)
        series.append(Line2D([], [], color=colour, marker="o", ls=style, lw=1.8,
                             label=f"{by} = {plot_text(name)}" if by else "median"))
        exact = ~bound.reindex(stats.index, fill_value=False).to_numpy(dtype=bool)
        ax.plot(stats.index[exact], stats["median"][exact], "o", color=colour, ms=6)
        if (~exact).any():
            any_bound = True
            ax.plot(stats.index[~exact], stats["median"][~exact], "^", mfc="white", color=colour,
                    ms=8, mew=1.6)
        if (stats["max"] > stats["min"]).any():
            ax.fill_between(stats.index, stats["min"], stats["max"], color=colour, alpha=0.15,
                            lw=0)
    values = t["_value"]
    if (values <= 0).any():
        ax.set_yscale("symlog", linthresh=1.0 if not metric.endswith("_ns") else 1e-6)
    else:
        ax.set_yscale("log")
    sizes = sorted(t["_size"].unique())
    if logx:
        ax.set_xscale("log")
        ax.minorticks_off()
    if len(sizes) <= 20:
        ax.set_xticks(sizes)
        if logx:
            ax.set_xticklabels([str(v) for v in sizes])
    ax.set_xlabel(xlabel)
    ax.set_ylabel(f"{label(metric)}, median, log scale")
    ax.grid(True, which="major", alpha=0.35)
    ax.grid(True, which="minor", alpha=0.12)
    handles = series
    if any_bound:
        handles.append(Line2D([], [], marker="^", ls="", mfc="white", color="#444", ms=8,
                              label="censored: lower bound"))
    if (t.groupby(["_size", by] if by else "_size", observed=True).size() > 1).any():
        handles.append(Patch(color="#999", alpha=0.3, label="min to max"))
    ax.legend(handles=handles, fontsize=9, loc="best")
    if title is None:
        what = label(metric).replace(" (s)", "")
        title = f"{what[0].upper()}{what[1:]} against {xlabel.split(' (')[0]}" + (
            f" ({_describe(filters)})" if filters else "")
    ax.set_title(title, fontsize=11)
    return finish(fig, path)


def time_vs_nodes(df: pd.DataFrame, *, by: str | None = None, time: str = "wall_ns",
                  title: str | None = None, path=None, **filters: Any) -> Figure:
    """Time against nodes, one point per trial (repeats folded: median time), log-log.

    A dashed line marks the median speed (nodes per second) over all trials.

    Args:
        df: rows as :func:`btlab.analysis.load` returns them.
        by: the column colouring the points (default: the first varying of
            strategy, heuristic, tie_break, mode, source).
        time: ``wall_ns`` (default) or ``cpu_ns``.
        title, path, **filters: as for :func:`heatmap`.

    Returns:
        The Figure; censored trials are open markers.

    Raises:
        ValueError: a missing column, or no trial to plot (none matches the
            filters, or each that does failed or has 0 nodes or time).
    """
    t = analysis.aggregate_repeats(analysis.select(df, filters))
    t = t[(t["status"].astype("object") != "error") & (t["nodes"] > 0) & (t[time] > 0)]
    if t.empty:
        raise ValueError("no trial ended without an error and with nodes and time above 0")
    by = _series_by(t, by)
    fig = Figure(figsize=(7.2, 4.8), layout="constrained")
    ax = fig.add_subplot()
    colours = matplotlib.colormaps["tab10"]
    groups = t.groupby(by, observed=True, sort=True) if by else [("all", t)]
    any_cens = False
    for i, (name, sub) in enumerate(groups):
        cens = analysis.is_censored(sub).to_numpy()
        x, y = sub["nodes"].to_numpy(float), sub[time].to_numpy(float) / 1e9
        colour = colours(i % 10)
        name = f"{by} = {plot_text(name)}" if by else "trials"
        if (~cens).any():
            ax.scatter(x[~cens], y[~cens], s=22, color=colour, alpha=0.7, edgecolor="none",
                       label=name)
        if cens.any():
            any_cens = True
            ax.scatter(x[cens], y[cens], s=30, facecolor="none", edgecolor=colour, lw=1.2,
                       label=None if (~cens).any() else name)
    ax.set_xscale("log")
    ax.set_yscale("log")
    if len(t):
        rate = float((t["nodes"] / (t[time] / 1e9)).median())
        xs = np.geomspace(t["nodes"].min(), t["nodes"].max(), 50)
        ax.plot(xs, xs / rate, "--", color="#555", lw=1,
                label=f"median speed {rate:,.0f} nodes/s")
    ax.set_xlabel(f"{label('nodes')}, log scale")
    ax.set_ylabel(f"{label(time)}, log scale")
    ax.grid(True, which="major", alpha=0.35)
    handles, _ = ax.get_legend_handles_labels()
    if any_cens:
        handles.append(Line2D([], [], marker="o", ls="", mfc="none", color="#444",
                              label="censored (stopped at a budget)"))
    ax.legend(handles=handles, fontsize=9, loc="upper left")
    if title is None:
        title = f"{'Wall' if time == 'wall_ns' else 'CPU'} time against nodes, one point per trial"
        title += f" ({_describe(filters)})" if filters else ""
    ax.set_title(title, fontsize=11)
    return finish(fig, path)

