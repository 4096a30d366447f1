"""N-Queens' headline table and report section.

Named by :data:`btlab.problems.n_queens.PROBLEM` (``headline``, ``report``)
and loaded when first used.
"""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure
from rich.console import Console
from rich.table import Table

from btlab.problems.censoring import CENSORED
from btlab.problems.n_queens import PROBLEM
from btlab.views import plots
from btlab.views.report.html import figure, figures
from btlab.views.tables import (
    COUNT_MODE,
    SPEC_PARAMETERS,
    add_row,
    fmt_int,
    fmt_ns,
    literal,
    one_per_trial,
    reads,
    varying,
)


@reads(SPEC_PARAMETERS, "budget_nodes", "status", "solutions", "nodes", "checks", "wall_ns")
def headline(df: pd.DataFrame, console: Console) -> None:
    """Print the N-Queens headline: per strategy and n, solutions, nodes, checks, time,
    and time relative to ``recursive`` on the same n (median wall time over repeats).
    Rows in the order of ``df`` (config order: :mod:`btlab.analysis.config_order`)."""
    df = one_per_trial(df, PROBLEM)
    extra = varying(df, ["mode", "unique", "method", "engine", "budget_nodes"])
    base = df[df["strategy"] == "recursive"]
    base_key = ["n", *extra]
    ref = base.set_index(base_key)["wall_ns"] if len(base) else None
    counting = ("mode" in df.columns
                and bool((df["mode"].astype("object") == COUNT_MODE).any()))
    table = Table(title="N-Queens: per strategy and n (time: median wall time of the solve "
                  "call; vs recursive: time / recursive's time on the same n)"
                  + ("; count mode: status exhausted is a finished count (the whole tree "
                     "searched), a censored trial's solutions are a lower bound (>=)"
                     if counting else ""),
                  title_justify="left")
    for name in ("strategy", *extra, "n", "status", "solutions", "nodes", "checks", "time",
                 "vs recursive"):
        table.add_column(literal(name),
                         justify="left" if name in ("strategy", "status") else "right")
    for rec in df.itertuples(index=False):
        bound = rec.status in CENSORED
        ratio = "-"
        if ref is not None and rec.status != "error":
            key = tuple(getattr(rec, k) for k in base_key)
            key = key[0] if len(key) == 1 else key
            if key in ref.index:
                ratio = f"{rec.wall_ns / ref.loc[key]:,.2f}x"
                base_bound = base.set_index(base_key).loc[key, "status"] in CENSORED
                if bound or base_bound:
                    ratio = "?" if bound and base_bound else (">=" if bound else "<=") + ratio
        add_row(table, rec.strategy, *[str(getattr(rec, k)) for k in extra], str(rec.n),
                      rec.status, fmt_int(rec.solutions, bound), fmt_int(rec.nodes, bound),
                      fmt_int(rec.checks, bound), fmt_ns(rec.wall_ns), ratio)
    console.print(table)


def solution_figure(row) -> Figure:
    """The placement of a results row drawn (:func:`btlab.views.plots.queens`)."""
    return plots.queens(row)


def report(df: pd.DataFrame) -> str:
    """The report's plots: nodes and time against n, time against nodes (HTML). The placement
    of each group's hardest finished n is drawn by :mod:`btlab.views.report.cases`
    (:func:`solution_figure`)."""
    parts = ["<h2>Plots</h2>"]
    by = next((c for c in ("strategy", "mode", "source") if c in df.columns
               and df[c].nunique() > 1), None)
    items = []
    if "n" in df.columns and df["n"].nunique() > 1:
        items.append(figure(lambda: plots.metric_vs_size(df, "nodes", by=by),
                            "Nodes (placements) against n, median per strategy "
                            "(open triangles: lower bounds).", "svg"))
        items.append(figure(lambda: plots.metric_vs_size(df, "wall_ns", by=by),
                            "Wall time against n, median over repeats.", "svg"))
    items.append(figure(lambda: plots.time_vs_nodes(df, by=by),
                        "Wall time against nodes, one point per trial.", "png"))
    parts.append(figures(items))
    return "\n".join(parts)
