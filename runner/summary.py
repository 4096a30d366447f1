"""The headline tables ``btlab run`` prints at the end and ``btlab show`` prints again.

Trials that stopped at a budget (``node_limit``, ``time_limit``) are
*censored*: their counters are lower bounds of the full search. A total or a
maximum over a group with censored trials is a lower bound and is printed as
``>=N``; so is a median that a censored value could still move (a censored
value at or below it).
"""

from __future__ import annotations

from typing import Callable

import pandas as pd
from rich.console import Console
from rich.table import Table

CENSORED = ("node_limit", "time_limit")
#: Parameter columns that never define a group of the headline table.
NOT_GROUPS = {"start_row", "start_col", "rows", "cols", "n"}
PARAMETER_COLUMNS = {
    "knights_tour": ["rows", "cols", "heuristic", "tie_break", "strategy", "mode",
                     "move_order", "closed", "engine"],
}


def fmt_int(value: float | int, bound: bool = False) -> str:
    """An integer with thousands separators, prefixed ``>=`` when it is a lower bound."""
    if pd.isna(value):
        return "-"
    return (">=" if bound else "") + f"{int(round(value)):,}"


def varying(df: pd.DataFrame, columns: list[str]) -> list[str]:
    """The columns among ``columns`` that take more than one value in ``df``."""
    return [c for c in columns if c in df.columns and df[c].nunique(dropna=False) > 1]


def one_per_trial(df: pd.DataFrame) -> pd.DataFrame:
    """One row per parameter combination: the first repeat (counters do not change)."""
    if "repeat" in df.columns:
        df = df.sort_values("repeat").drop_duplicates(
            [c for c in df.columns if c in _param_like(df)], keep="first")
    return df


def _param_like(df: pd.DataFrame) -> list[str]:
    skip = {"trial_id", "run_id", "repeat", "status", "nodes", "backtracks", "dead_ends",
            "checks", "solutions", "max_depth", "wall_ns", "cpu_ns", "solution", "error",
            "btlab_version", "git_commit", "python_version", "ray_version", "host", "node_id",
            "pid", "started_at", "amb_restarts", "candidates", "compile_ns"}
    return [c for c in df.columns if c not in skip]


def bounded_stats(values: pd.Series, censored: pd.Series) -> dict[str, str]:
    """Total, median and max of ``values``, marked ``>=`` where censored values make them bounds."""
    values = values.astype("float64")
    cens = values[censored.to_numpy()]
    median = values.median()
    any_cens = bool(censored.any())
    return {
        "total": fmt_int(values.sum(), any_cens),
        "median": fmt_int(median, bool((cens <= median).any())),
        "max": fmt_int(values.max(), any_cens),
    }


def knights_headline(df: pd.DataFrame, console: Console) -> None:
    """Print the knight's-tour headline: a table per group, then a start-square grid each."""
    df = one_per_trial(df)
    groups = varying(df, [c for c in PARAMETER_COLUMNS["knights_tour"] if c not in NOT_GROUPS])
    if "rows" in df.columns and varying(df, ["rows", "cols"]):
        groups = ["rows", "cols"] + groups
    label = ", ".join(groups) or "sweep"
    counts = Table(title=f"Knight's tour: trials by status, one row per {label}",
                   title_justify="left")
    work = Table(title=f"Knight's tour: work (placements), one row per {label}; "
                 ">= marks lower bounds from censored trials", title_justify="left")
    for g in groups:
        counts.add_column(g)
        work.add_column(g)
    for name in ("starts", "solved", "exhausted", "censored", "errors", "0-backtrack starts"):
        counts.add_column(name, justify="right")
    for metric in ("nodes", "backtracks"):
        for stat in ("total", "median", "max"):
            work.add_column(f"{metric} {stat}", justify="right")
    grouped = list(df.groupby(groups, sort=False, dropna=False)) if groups else [((), df)]
    for key, sub in grouped:
        key = key if isinstance(key, tuple) else (key,)
        status = sub["status"]
        censored = status.isin(CENSORED)
        ok = status != "error"
        head = [str(k) for k in key]
        counts.add_row(*head, str(len(sub)), str(int((status == "solved").sum())),
                       str(int((status == "exhausted").sum())), str(int(censored.sum())),
                       str(int((~ok).sum())),
                       str(int(((status == "solved") & (sub["backtracks"] == 0)).sum())))
        cells = []
        for metric in ("nodes", "backtracks"):
            stats = bounded_stats(sub.loc[ok, metric], censored[ok])
            cells += [stats["total"], stats["median"], stats["max"]]
        work.add_row(*head, *cells)
    console.print(counts)
    console.print(work)
    for key, sub in grouped:
        if sub[["rows", "cols"]].drop_duplicates().shape[0] != 1:
            continue
        label = ", ".join(f"{g}={k}" for g, k in zip(groups, key if isinstance(key, tuple)
                                                      else (key,))) or "all trials"
        console.print(start_grid_text(sub, "backtracks", title=f"backtracks by start square ({label})"))


def start_grid_text(df: pd.DataFrame, metric: str, title: str = "") -> Table:
    """A rows x cols table of ``metric`` by start square; censored cells as ``>=N``, errors ``err``."""
    rows, cols = int(df["rows"].iloc[0]), int(df["cols"].iloc[0])
    cells = [["" for _ in range(cols)] for _ in range(rows)]
    for rec in df.itertuples(index=False):
        r, c = int(rec.start_row), int(rec.start_col)
        if rec.status == "error":
            cells[r][c] = "err"
        else:
            cells[r][c] = fmt_int(getattr(rec, metric), rec.status in CENSORED)
    grid = Table(title=title, title_justify="left", show_lines=False)
    grid.add_column("row\\col", justify="right", style="dim")
    for c in range(cols):
        grid.add_column(str(c), justify="right")
    for r in range(rows):
        grid.add_row(str(r), *cells[r])
    return grid


HEADLINES: dict[str, Callable[[pd.DataFrame, Console], None]] = {
    "knights_tour": knights_headline,
}


def print_headline(df: pd.DataFrame, console: Console | None = None) -> None:
    """Print the headline tables of a results DataFrame (one problem)."""
    console = console or Console()
    if df.empty:
        console.print("no rows")
        return
    problem = str(df["problem"].iloc[0])
    HEADLINES[problem](df, console)
    errors = df[df["status"] == "error"]
    if len(errors):
        console.print(f"[red]{len(errors)} trial(s) failed[/red]; first error:")
        console.print(str(errors["error"].iloc[0]).splitlines()[0])
