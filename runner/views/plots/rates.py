"""Plot of success rates: the share of trials solved against the problem size.

:func:`solved_share_vs_size` draws :func:`btlab.analysis.rates.solved_share` per board
size (x: ``n``, logarithmic), one line per group, with the Wilson interval as
error bars. Re-exported by :mod:`btlab.views.plots`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from btlab.analysis.columns import select
from btlab.analysis.rates import solved_share
from btlab.views.plots.figure_files import finish, plot_text
from btlab.views.plots.trends import _describe, size_axis

__all__ = ["solved_share_vs_size"]


def solved_share_vs_size(df: pd.DataFrame, by: str | None = None, *, alpha: float = 0.05,
                         title: str | None = None, path: Any = None,
                         **filters: Any) -> Figure:
    """The share of trials solved against the problem size, one line per group.

    Args:
        df: rows as :func:`btlab.analysis.load` returns them, with ``status``
            and a size (``n``, or ``rows`` and ``cols``: see
            :func:`btlab.views.plots.trends.size_axis`).
        by: the column naming the lines; None: one line over all trials.
        alpha: 1 - the confidence level of the error bars (0.05: 95 %).
        title: the title (default names the filters).
        path: where to save (``.png`` / ``.svg``, or a list), or None.
        **filters: column=value filters applied first.

    Returns:
        The Figure, one Axes: x the size (log scale, a tick per size), y the
        percent of the trials of that size and group that ended ``solved``
        (0 to 100), a marker per size with Wilson-interval error bars, labelled
        ``<by> = <value>`` in a legend when ``by`` is given. Errors are left
        out as :func:`btlab.analysis.rates.solved_share` leaves them out.

    Raises:
        ValueError: a missing column, a filter that matches no trial, or a
            bad ``alpha`` (as :func:`btlab.analysis.rates.solved_share`).
    """
    t = select(df, filters) if filters else df
    size, xlabel = size_axis(t)
    t = t.assign(_size=size.to_numpy())
    keys = ["_size"] if by is None else [by, "_size"]
    shares = solved_share(t, by=keys, alpha=alpha)
    fig = Figure(figsize=(7.2, 4.6), layout="constrained")
    ax = fig.add_subplot()
    groups = [(None, shares)] if by is None else list(
        shares.groupby(by, observed=True, sort=False))
    for i, (name, g) in enumerate(groups):
        g = g.sort_values("_size")
        x = g["_size"].to_numpy(dtype="float64")
        y = 100 * g["share"].to_numpy(dtype="float64")
        err = 100 * np.vstack([g["share"] - g["ci_low"], g["ci_high"] - g["share"]])
        ax.errorbar(x, y, yerr=err, fmt="o-", color=f"C{i % 10}", lw=1.6, ms=5, capsize=3,
                    label=None if by is None else f"{by} = {plot_text(name)}")
    sizes = sorted(shares["_size"].unique())
    ax.set_xscale("log")
    ax.set_xticks(sizes)
    ax.set_xticklabels([str(s) for s in sizes])
    ax.minorticks_off()
    ax.set_ylim(-3, 103)
    ax.set_xlabel(xlabel[:-1] + ", log scale)" if xlabel.endswith(")")
                  else xlabel + " (log scale)")
    ax.set_ylabel("trials solved (%)")
    ax.grid(True, which="major", alpha=0.35)
    if by is not None:
        ax.legend(fontsize=9, loc="best")
    if title is None:
        title = (f"Trials solved against {xlabel.split(' (')[0]}"
                 + (f" ({_describe(filters)})" if filters else "")
                 + f"\nbars: {100 * (1 - alpha):.0f} % Wilson interval")
    ax.set_title(title, fontsize=10)
    return finish(fig, path)
