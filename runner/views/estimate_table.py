"""The table ``btlab run`` and ``btlab show`` print for ``mode: estimate`` trials.

An estimate trial searches nothing: its row holds Knuth's estimate of the
``count``-mode tree (``estimate``, ``estimate_se``; ``solutions_estimate``,
``solutions_estimate_se``) and the probes' own cost in the counters
(``docs/metrics.md``, "Tree-size estimates"). The status and work tables of
the other modes would show only that cost, so these rows get one table of
their own: one row per trial, the parameters that vary, the estimator (when
the rows have more than one, or one that is not ``knuth``), the probes, both
estimates with their standard errors, and the probes' placements and time.
A row without an ``estimator`` value (a part written before the column) ran
Knuth's estimator and is shown as ``knuth``.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
from rich.console import Console
from rich.table import Table

from btlab.analysis.formatting import fmt_estimate
from btlab.experiments.estimators import KNUTH
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
       "solutions_estimate", "solutions_estimate_se", "nodes", "status", "wall_ns",
       "probes_done")
def print_estimates(df: pd.DataFrame, spec: ProblemSpec, console: Console) -> None:
    """Print one table of the estimate rows of ``df`` (rows of another mode are ignored).

    Columns: the parameters that vary among these rows (the position, e.g. the
    start square, included), ``estimator`` (when not every row is ``knuth``:
    :func:`estimators`), ``probes`` (those finished, ``probes_done``, where the row
    has it: under a time budget fewer than asked), the estimated ``count``-mode
    placements and solutions with their standard errors, the probes'
    placements, the status and the median wall time.
    """
    rows = one_per_trial(df[is_estimate(df)], spec)
    if rows.empty:
        return
    params = [c for c in spec.columns.names if c != "mode"]
    shown = varying(rows, params) + varying(rows, ["seed"])
    labels = estimators(rows)
    by_estimator = list(dict.fromkeys(labels)) != [KNUTH]
    whose = "estimates" if by_estimator else "Knuth's estimates"
    table = Table(title=literal(
        f"{spec.title}: {whose} of the count-mode tree (mean ± standard error "
        "over the probes)"), title_justify="left")
    heads = [*shown, *(["estimator"] if by_estimator else [])]
    for name in [*heads, "probes", "placements (estimate)", "solutions (estimate)",
                 "probes' placements", "status", "time"]:
        table.add_column(literal(name), justify="left" if name in heads else "right")
    solutions = "solutions_estimate" in rows.columns
    for (_, row), label in zip(rows.iterrows(), labels):
        table.add_row(
            *[literal(group_label(row[c])) for c in shown],
            *([literal(label)] if by_estimator else []),
            fmt_int(_probes_done(row)),
            fmt_estimate(row["estimate"], row["estimate_se"]),
            fmt_estimate(row["solutions_estimate"], row["solutions_estimate_se"])
            if solutions else "-",
            fmt_int(row["nodes"]), literal(row["status"]), fmt_ns(row["wall_ns"]))
    console.print(table)


def _probes_done(row: pd.Series) -> Any:
    """The probes a row's estimates are over: ``probes_done``, else (a part written before
    that column) ``probes``."""
    done = row.get("probes_done")
    return row["probes"] if done is None or pd.isna(done) else done


def estimators(rows: pd.DataFrame) -> list[str]:
    """The estimator label of each estimate row (``knuth`` where the ``estimator`` column
    is null or absent: a part written before it ran Knuth's estimator)."""
    if "estimator" not in rows.columns:
        return [KNUTH] * len(rows)
    return [KNUTH if pd.isna(v) else str(v) for v in rows["estimator"].astype("object")]
