"""The table ``btlab run`` and ``btlab show`` print for ``mode: estimate`` trials.

An estimate trial searches nothing: its row holds Knuth's estimate of the
``count``-mode tree (``estimate``, ``estimate_se``; ``solutions_estimate``,
``solutions_estimate_se``) and the probes' own cost in the counters
(``docs/metrics.md``, "Tree-size estimates"). The status and work tables of
the other modes would show only that cost, so these rows get one table of
their own: one row per trial, the parameters that vary, the probes, both
estimates with their standard errors, and the probes' placements and time.
"""

from __future__ import annotations

import pandas as pd
from rich.console import Console
from rich.table import Table

from btlab.analysis.formatting import fmt_estimate
from btlab.problems.spec import ProblemSpec
from btlab.views.tables import (
    SPEC_PARAMETERS,
    TRIAL_COLUMNS,
    fmt_int,
    fmt_ns,
    group_label,
    literal,
    one_per_trial,
    reads,
    varying,
)

#: The ``mode`` value of estimate trials.
ESTIMATE_MODE = "estimate"


@reads("mode")
def is_estimate(df: pd.DataFrame) -> pd.Series:
    """Boolean mask of the ``mode: estimate`` rows of ``df`` (all False without a ``mode``)."""
    if "mode" not in df.columns:
        return pd.Series(False, index=df.index)
    return (df["mode"].astype("object") == ESTIMATE_MODE).fillna(False).astype(bool)


@reads(is_estimate, SPEC_PARAMETERS, *TRIAL_COLUMNS, "estimate", "estimate_se",
       "solutions_estimate", "solutions_estimate_se", "nodes", "status", "wall_ns")
def print_estimates(df: pd.DataFrame, spec: ProblemSpec, console: Console) -> None:
    """Print one table of the estimate rows of ``df`` (rows of another mode are ignored).

    Columns: the parameters that vary among these rows (the position, e.g. the
    start square, included), ``probes``, the estimated ``count``-mode
    placements and solutions with their standard errors, the probes'
    placements, the status and the median wall time.
    """
    rows = one_per_trial(df[is_estimate(df)], spec)
    if rows.empty:
        return
    params = [c for c in spec.columns.names if c != "mode"]
    shown = varying(rows, params) + varying(rows, ["seed"])
    table = Table(title=literal(
        f"{spec.title}: Knuth's estimates of the count-mode tree (mean ± standard error "
        "over the probes)"), title_justify="left")
    for name in [*shown, "probes", "placements (estimate)", "solutions (estimate)",
                 "probes' placements", "status", "time"]:
        table.add_column(literal(name), justify="left" if name in shown else "right")
    solutions = "solutions_estimate" in rows.columns
    for _, row in rows.iterrows():
        table.add_row(
            *[literal(group_label(row[c])) for c in shown],
            fmt_int(row["probes"]),
            fmt_estimate(row["estimate"], row["estimate_se"]),
            fmt_estimate(row["solutions_estimate"], row["solutions_estimate_se"])
            if solutions else "-",
            fmt_int(row["nodes"]), literal(row["status"]), fmt_ns(row["wall_ns"]))
    console.print(table)
