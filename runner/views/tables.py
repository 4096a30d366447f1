"""Building blocks of the headline tables, and the generic headline of any problem.

A problem's spec may bring its own headline (:attr:`btlab.problems.spec.ProblemSpec.headline`);
without one, :func:`generic_headline` prints trials by status and the work
(placements, backtracks) per group of the parameters that vary. Totals,
medians and maxima that censored trials make lower bounds are printed ``>=N``
(:func:`btlab.problems.censoring.bound_flags`).
"""

from __future__ import annotations

from typing import Sequence

import pandas as pd
from rich.console import Console
from rich.table import Table
from rich.text import Text

from btlab.analysis.columns import aggregate_repeats
from btlab.analysis.formatting import fmt_int, fmt_ns  # noqa: F401 - fmt_ns re-exported
from btlab.problems.censoring import CENSORED, bound_flags
from btlab.problems.spec import ProblemSpec
from btlab.store import schema
from btlab.store.schema import headline_columns  # noqa: F401 - re-exported: btlab run reads it

#: Columns every results row has besides the parameters that tell trials apart (the
#: trial keys of :data:`btlab.store.schema.COLUMNS`).
TRIAL_COLUMNS = schema.names(schema.TRIAL_KEY)
#: The trial columns that are groups of the tables when they vary.
GROUP_TRIAL_COLUMNS = tuple(c.name for c in schema.COLUMNS if c.grouped)


def literal(value: object) -> Text:
    """``value`` as rich Text printed as it is: a stored ``[/bold]`` or ``[red]x[/red]`` is
    text, never markup (a str cell or title of a rich Table would be parsed as markup)."""
    return value if isinstance(value, Text) else Text(str(value))


def add_row(table: Table, *cells: object) -> None:
    """``table.add_row`` with every cell :func:`literal`."""
    table.add_row(*(literal(c) for c in cells))


def group_label(value: object) -> str:
    """A group key's value as a table shows it: ``-`` for none (a trial key left unset,
    e.g. no restarts), whole numbers without a decimal point."""
    try:
        if pd.isna(value):
            return "-"
    except (TypeError, ValueError):
        pass
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def varying(df: pd.DataFrame, columns: Sequence[str]) -> list[str]:
    """The columns among ``columns`` that take more than one value in ``df``."""
    return [c for c in columns if c in df.columns and df[c].nunique(dropna=False) > 1]


def one_per_trial(df: pd.DataFrame, spec: ProblemSpec) -> pd.DataFrame:
    """One row per trial: the repeats folded by :func:`btlab.analysis.columns.aggregate_repeats`
    (the first repeat's counters, which must not change between repeats -- it warns when
    they do -- and ``wall_ns`` and ``cpu_ns`` the median over the repeats), without its
    ``repeats`` column; rows in the order of ``df`` (config order for show and run),
    numbered from 0. ``df`` without repeats is returned as it is."""
    if "repeat" not in df.columns or df.empty or df["repeat"].max() == 0:
        return df
    return aggregate_repeats(df).drop(columns="repeats").reset_index(drop=True)


def bounded_stats(values: pd.Series, censored: pd.Series) -> dict[str, str]:
    """Total, median and max of ``values``, marked ``>=`` where censored values make them bounds."""
    flags = bound_flags(values, censored)
    values = values.astype("float64").dropna()
    if values.empty:  # every value null (errors, trials killed by the runner): nothing known
        return {"total": "-", "median": "-", "max": "-"}
    return {"total": fmt_int(values.sum(min_count=1), flags["total"]),
            "median": fmt_int(values.median(), flags["median"]),
            "max": fmt_int(values.max(), flags["max"])}


def group_columns(df: pd.DataFrame, spec: ProblemSpec) -> list[str]:
    """The parameters that vary, sizes first, never the position columns (start square)."""
    sizes = varying(df, spec.size_columns)
    rest = [c for c in spec.columns.names
            if c not in spec.position_columns and c not in spec.size_columns]
    return ([*spec.size_columns] if sizes else []) + varying(df, rest) + varying(
        df, list(GROUP_TRIAL_COLUMNS))


#: The ``mode`` value of trials that count every solution.
COUNT_MODE = "count"
#: What the first table of a ``count``-mode sweep calls its finished trials: ``solved`` is
#: a ``first``-mode status; a count trial is done when its whole tree is searched.
COUNT_FINISHED = "whole tree searched"


def is_count(df: pd.DataFrame) -> bool:
    """Whether every row of ``df`` is a ``mode: count`` trial (False without a ``mode``)."""
    return ("mode" in df.columns and len(df) > 0
            and bool((df["mode"].astype("object") == COUNT_MODE).all()))


def count_title(title: str, label: str) -> str:
    """The title of a ``count``-mode sweep's first table (:func:`status_and_work`)."""
    return (f"{title}: trials by status, one row per {label}; count mode: solutions found "
            f"(>= a lower bound where censored), '{COUNT_FINISHED}' a finished count "
            "(status exhausted)")


def status_and_work(df: pd.DataFrame, groups: list[str], title: str, trials: str = "trials",
                    zero: str | None = "0-backtrack solved",
                    solutions: bool = False) -> tuple[Table, Table, list]:
    """Two tables per group: trials by status, and placements / backtracks (total, median,
    max, censored bounds marked). ``trials`` names the count column, ``zero`` the column of
    solved trials without a backtrack (None: no such column); ``solutions`` adds the total
    of solutions found (``>=`` when a censored trial may have found more).

    A sweep of ``mode: count`` trials only (:func:`is_count`) leads with its result: the
    solutions total right after the trials, ``solved`` (a ``first``-mode status) and
    ``zero`` left out, and the finished counts named :data:`COUNT_FINISHED`.

    Returns:
        (counts table, work table, [(group key, rows), ...])."""
    label = ", ".join(groups) or "sweep"
    count = is_count(df)
    counts = Table(title=literal(count_title(title, label) if count
                                 else f"{title}: trials by status, one row per {label}"),
                   title_justify="left")
    work = Table(title=literal(f"{title}: work (placements), one row per {label}; "
                               ">= marks lower bounds from censored trials"),
                 title_justify="left")
    for g in groups:
        counts.add_column(literal(g))
        work.add_column(literal(g))
    names = ([trials, "solutions", COUNT_FINISHED, "censored", "errors"] if count
             else [trials, "solved", "exhausted", "censored", "errors"])
    if zero and not count:
        names.append(zero)
    if solutions and not count:
        names.append("solutions")
    for name in names:
        counts.add_column(name, justify="right")
    for metric in ("nodes", "backtracks"):
        for stat in ("total", "median", "max"):
            work.add_column(f"{metric} {stat}", justify="right")
    # iterated, not list(): pandas cannot count the groups of a key holding nulls (a
    # budget column of a swept budget, restarts null for "none")
    grouped = ([(k, g) for k, g in df.groupby(groups, sort=False, dropna=False, observed=True)]
               if groups else [((), df)])
    for key, sub in grouped:
        key = key if isinstance(key, tuple) else (key,)
        status = sub["status"].astype("object")
        censored = status.isin(CENSORED)
        ok = status != "error"
        head = [group_label(k) for k in key]
        found = (bounded_stats(sub.loc[ok, "solutions"], censored[ok])["total"]
                 if "solutions" in sub.columns else "-")
        cells = ([str(len(sub)), found] if count
                 else [str(len(sub)), str(int((status == "solved").sum()))])
        cells += [str(int((status == "exhausted").sum())), str(int(censored.sum())),
                  str(int((~ok).sum()))]
        if zero and not count:  # a restart trial: backtrack-free only on its first attempt
            fresh = (sub["abandoned"].fillna(0) == 0 if "abandoned" in sub.columns
                     else True)
            cells.append(str(int(((status == "solved") & (sub["backtracks"] == 0)
                                  & fresh).sum())))
        if solutions and not count:
            cells.append(found)
        add_row(counts, *head, *cells)
        stats = []
        for metric in ("nodes", "backtracks"):
            s = bounded_stats(sub.loc[ok, metric], censored[ok])
            stats += [s["total"], s["median"], s["max"]]
        add_row(work, *head, *stats)
    return counts, work, grouped


def generic_headline(df: pd.DataFrame, console: Console, spec: ProblemSpec) -> None:
    """The headline of a problem whose spec brings none: status counts and work per group."""
    df = one_per_trial(df, spec)
    counts, work, _ = status_and_work(df, group_columns(df, spec), spec.title, solutions=True)
    console.print(counts)
    console.print(work)
