"""Plots of the distribution of search cost with censoring: survival curves and cactus plots.

- :func:`survival_curves`: the Kaplan-Meier estimate of P(cost > x) per group
  (:func:`btlab.analysis.kaplan_meier.survival`) on log-log axes -- the standard view of
  heavy tails in backtracking search cost (Gomes, Selman, Crato & Kautz,
  "Heavy-tailed phenomena in satisfiability and constraint satisfaction
  problems", J. Automated Reasoning 24, 2000) -- with the confidence band and
  a tick where trials were censored (stopped at their budget).
- :func:`finished_curves`: the other side of the same estimate, P(cost <= x),
  on log-log axes with a line of slope 1 per group: the shape of the early
  finishes when most trials stop at the budget (a memoryless cost rises with
  slope 1 there; a flatter rise is a hazard that falls as the search goes on,
  the mark of a heavy tail and the case where restarts pay: Luby, Sinclair &
  Zuckerman, "Optimal speedup of Las Vegas algorithms", IPL 47, 1993).
- :func:`cactus`: trials finished against a budget (x: the budget in the
  metric's unit, y: the number or percent of a group's trials that finished
  within it), one line per group, as solver competitions plot instances
  solved against time (Hoos & Stutzle, *Stochastic Local Search*, 2004, ch. 4).

Both take the rows :func:`btlab.analysis.load` returns and count trials the
way :func:`btlab.analysis.kaplan_meier.survival` does (repeats folded; the event is a
finished search; errors and first-mode ``exhausted`` trials left out). Both
are re-exported by :mod:`btlab.views.plots`.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from btlab.analysis.columns import as_list
from btlab.analysis.kaplan_meier import survival
from btlab.views.plots.figure_files import finish, plot_text
from btlab.views.plots.trends import _scale, label, log_label

__all__ = ["CENSOR_MARK", "SLOPE_ONE", "cactus", "finished_curves", "group_label",
           "survival_curves"]

#: The ``gid`` of the line that carries a group's censoring ticks (one point per distinct
#: censored value): ``[l for l in ax.lines if l.get_gid() == CENSOR_MARK]``.
CENSOR_MARK = "censored"
#: The ``gid`` of a group's slope-1 reference line in :func:`finished_curves`.
SLOPE_ONE = "slope one"


def group_label(by: Sequence[str], key: tuple[Any, ...]) -> str:
    """A group's name in a legend: its values, ``" / "``-joined (``none``,
    ``warnsdorff / main``); ``all trials`` with no group columns."""
    return " / ".join(plot_text(v) for v in key) if by else "all trials"


def _curves(df: pd.DataFrame, by: list[str], metric: str,
            alpha: float) -> tuple[list[tuple[tuple[Any, ...], pd.DataFrame]], float]:
    """The survival table per group, and the smallest positive cost of any group (where
    every line starts, so that a group whose trials all ran long shows as a long flat line)."""
    table = survival(df, by=by, metric=metric, alpha=alpha)
    positive = table["x"][table["x"] > 0]
    left = float(_scale(metric, positive.min())) if len(positive) else 1.0
    if not by:
        return [((), table)], left
    return [(k if isinstance(k, tuple) else (k,), g)
            for k, g in table.groupby(by, observed=True, sort=False, dropna=False)], left


def survival_curves(df: pd.DataFrame, by: Sequence[str] | str | None = None,
                    metric: str = "nodes", *, alpha: float = 0.05, bands: bool = True,
                    title: str | None = None, path: Any = None) -> Figure:
    """Kaplan-Meier survival curves of a cost per group, log-log axes, censoring ticked.

    Args:
        df: trial rows with ``status`` and ``metric`` (and the ``by`` columns).
        by: group column(s); None: one curve over all rows.
        metric: the cost: ``nodes`` (placements), another counter, or a timing
            (``wall_ns``: shown in seconds).
        alpha: 1 - confidence level of the bands (0.05: 95 %).
        bands: draw the pointwise confidence bands (lifelines' exponential
            Greenwood bands, i.e. on the log(-log S) scale).
        title: the title; default names the metric.
        path: where to save (``.png`` / ``.svg``, or a list), or None.

    Returns:
        The Figure, one Axes: per group one step line labelled with the
        group (S(x) = P(cost > x), drawn from the smallest observed cost), a
        shaded band, and one line of ``|`` ticks (gid :data:`CENSOR_MARK`,
        no legend entry) at each distinct value where trials of the group were
        censored. Both axes are logarithmic; a curve that drops to 0 (every
        trial left finished) runs to the bottom edge. Every line starts at the
        smallest cost of any group, at 1, so a group whose trials all ran
        long is a long flat line.

    Raises:
        ValueError: as :func:`btlab.analysis.kaplan_meier.survival`.
    """
    by = as_list(by)
    curves, left = _curves(df, by, metric, alpha)
    fig = Figure(figsize=(7.5, 4.8), layout="constrained")
    ax = fig.add_subplot()
    sizes = [int(g["at_risk"].iloc[0]) for _, g in curves]
    largest = max(sizes, default=0)
    floor = 0.5 / largest if largest else 1e-3
    top_x = 1.0
    for i, (key, g) in enumerate(curves):
        colour = f"C{i % 10}"
        g = g[g["x"] > 0] if (g["x"] > 0).any() else g
        x = _scale(metric, g["x"].to_numpy(dtype="float64"))
        s = np.maximum(g["survival"].to_numpy(dtype="float64"), floor)
        top_x = max(top_x, float(np.nanmax(x)) if len(x) else 1.0)
        # S is 1 up to the first cost, then steps: every line starts at the same x
        xs = np.concatenate([[left], x])
        ss = np.concatenate([[1.0], s])
        ax.step(xs, ss, where="post", color=colour, lw=1.6,
                label=f"{group_label(by, key)} (n = {sizes[i]:,})")
        if bands:
            lo = np.maximum(np.concatenate([[1.0], g["ci_low"].to_numpy(dtype="float64")]),
                            floor)
            hi = np.maximum(np.concatenate([[1.0], g["ci_high"].to_numpy(dtype="float64")]),
                            floor)
            ax.fill_between(xs, lo, hi, step="post", color=colour, alpha=0.15, lw=0)
        cens = g["censored"].to_numpy() > 0
        if cens.any():
            ax.plot(x[cens], s[cens], linestyle="none", marker="|", markersize=11,
                    markeredgewidth=1.8, color=colour, gid=CENSOR_MARK, label="_censored")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(floor * 0.8, 1.25)
    ax.set_xlabel(log_label(metric))
    ax.set_ylabel("P(cost > x), Kaplan-Meier (log scale)")
    ax.grid(True, which="major", alpha=0.3)
    ax.set_title(title or f"Survival of {label(metric)}: share of trials not finished "
                 "within x\nticks mark censored trials (stopped at a budget); band: "
                 f"{100 * (1 - alpha):.0f} % pointwise confidence", fontsize=10)
    _legend(fig, ax)
    return finish(fig, path)


def finished_curves(df: pd.DataFrame, by: Sequence[str] | str | None = None,
                    metric: str = "nodes", *, alpha: float = 0.05, reference: bool = True,
                    title: str | None = None, path: Any = None) -> Figure:
    """Kaplan-Meier estimate of P(cost <= x) per group on log-log axes, with slope-1 lines.

    When most trials stop at their budget, S(x) = P(cost > x) stays near 1 and
    :func:`survival_curves` shows little; its complement, the share finished
    within x, shows how the early finishes grow. A cost with a constant
    finishing rate (exponential: no memory, restarts cannot help) has
    P(cost <= x) close to x / mean while that share is small: a line of slope
    1 on log-log axes. A flatter curve finishes early more often than that
    and later less often: a finishing rate that falls with the cost (Weibull
    shape < 1), a heavy tail.

    Args:
        df, by, metric, alpha, title, path: as :func:`survival_curves`.
        reference: draw per group a dashed line of slope 1 (gid
            :data:`SLOPE_ONE`) through the curve's last point, the shape an
            exponential cost with the same share finished at that point has.

    Returns:
        The Figure, one Axes: per group one step line of 1 - S(x) from its
        first finished trial on (labelled with the group and ``k of n
        finished``), its shaded band, and the reference line; both axes
        logarithmic. A group with no finished trial has no line, only its
        legend entry (``0 of n finished``).

    Raises:
        ValueError: as :func:`btlab.analysis.kaplan_meier.survival`.
    """
    by = as_list(by)
    curves, _ = _curves(df, by, metric, alpha)
    fig = Figure(figsize=(7.5, 4.8), layout="constrained")
    ax = fig.add_subplot()
    for i, (key, g) in enumerate(curves):
        colour = f"C{i % 10}"
        total = int(g["at_risk"].iloc[0])
        finished = int(g["events"].sum())
        text = f"{group_label(by, key)}: {finished:,} of {total:,} finished"
        f = 1.0 - g["survival"].to_numpy(dtype="float64")
        x = _scale(metric, g["x"].to_numpy(dtype="float64"))
        keep = (f > 0) & (x > 0)
        if not keep.any():
            ax.plot([], [], color=colour, lw=1.6, label=text)
            continue
        x, f = x[keep], f[keep]
        ax.step(x, f, where="post", color=colour, lw=1.6, label=text)
        lo = 1.0 - g["ci_high"].to_numpy(dtype="float64")[keep]
        hi = 1.0 - g["ci_low"].to_numpy(dtype="float64")[keep]
        ax.fill_between(x, np.maximum(lo, f * 1e-3), hi, step="post", color=colour,
                        alpha=0.15, lw=0)
        if reference:
            xs = np.geomspace(x[0], x[-1], 50)
            ax.plot(xs, f[-1] * xs / x[-1], linestyle="--", color=colour, lw=1.0,
                    gid=SLOPE_ONE, label="_slope one")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(log_label(metric))
    ax.set_ylabel("P(cost <= x), Kaplan-Meier (log scale)")
    ax.grid(True, which="major", alpha=0.3)
    ax.set_title(title or f"Share of trials finished within x {label(metric)}\n"
                 + ("dashed: slope 1, a constant finishing rate (no memory); "
                    if reference else "")
                 + f"band: {100 * (1 - alpha):.0f} % pointwise confidence", fontsize=10)
    _legend(fig, ax)
    return finish(fig, path)


def cactus(df: pd.DataFrame, by: Sequence[str] | str | None = None, metric: str = "nodes", *,
           percent: bool = False, title: str | None = None, path: Any = None) -> Figure:
    """Trials finished against budget (a cactus plot), one line per group.

    Args:
        df: trial rows with ``status`` and ``metric`` (and the ``by`` columns).
        by: group column(s); None: one line over all rows.
        metric: the budget's unit: ``nodes`` (placements) or a timing (seconds).
        percent: y as the percent of the group's trials instead of a count.
        title, path: as :func:`survival_curves`.

    Returns:
        The Figure, one Axes: per group one step line (labelled with the group
        and ``k of n finished``) from 0 at the smallest cost of any group,
        rising by one at each finished trial's cost; x logarithmic. A line
        that stays below the group's size ends where its budget stopped the rest.

    Raises:
        ValueError: as :func:`btlab.analysis.kaplan_meier.survival`.
    """
    by = as_list(by)
    curves, left = _curves(df, by, metric, 0.05)
    fig = Figure(figsize=(7.5, 4.8), layout="constrained")
    ax = fig.add_subplot()
    for i, (key, g) in enumerate(curves):
        total = int(g["at_risk"].iloc[0])
        done = np.cumsum(g["events"].to_numpy(dtype="int64"))
        x = _scale(metric, g["x"].to_numpy(dtype="float64"))
        keep = x > 0
        x, done = x[keep], done[keep]
        y = 100.0 * done / total if percent and total else done.astype("float64")
        ax.step(np.concatenate([[left], x]), np.concatenate([[0.0], y]), where="post",
                color=f"C{i % 10}", lw=1.6,
                label=f"{group_label(by, key)}: {int(done[-1]) if len(done) else 0:,} of "
                      f"{total:,} finished")
    ax.set_xscale("log")
    ax.set_xlabel("budget: " + log_label(metric))
    ax.set_ylabel("trials finished within the budget" + (" (%)" if percent else ""))
    ax.set_ylim(bottom=0)
    ax.grid(True, which="major", alpha=0.3)
    ax.set_title(title or f"Trials finished within a budget of {label(metric)}", fontsize=10)
    _legend(fig, ax)
    return finish(fig, path)


def _legend(fig: Figure, ax: Any) -> None:
    """The groups' legend below the axes, outside them: inside, a legend of several groups
    covers curves (a drop to 0 at the left, a tail at the bottom)."""
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="outside lower center", fontsize=8,
                   ncol=min(3, len(handles)), frameon=False)
