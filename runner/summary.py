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


def parameter_columns(df: pd.DataFrame) -> list[str]:
    """The columns that define a trial apart from its repeat: parameters, budget, seed."""
    from .problems import PROBLEMS

    problem = PROBLEMS[str(df["problem"].iloc[0])]
    return [*problem.columns.names, "budget_nodes", "budget_seconds", "seed"]


def one_per_trial(df: pd.DataFrame) -> pd.DataFrame:
    """One row per parameter combination, the first repeat's counters (they do not change
    between repeats), with ``wall_ns`` and ``cpu_ns`` the median over the repeats."""
    if "repeat" not in df.columns or df.empty or df["repeat"].max() == 0:
        return df
    keys = [c for c in parameter_columns(df) if c in df.columns]
    timing = df.groupby(keys, dropna=False, sort=False)[["wall_ns", "cpu_ns"]].median()
    first = df.sort_values("repeat").drop_duplicates(keys, keep="first")
    first = first.drop(columns=["wall_ns", "cpu_ns"]).merge(
        timing.reset_index(), on=keys, how="left")
    return first


def bounded_stats(values: pd.Series, censored: pd.Series) -> dict[str, str]:
    """Total, median and max of ``values``, marked ``>=`` where censored values make them bounds.

    Censored values are lower bounds. The total and the max are bounds as soon
    as one value is censored; the median is one when a censored value is at or
    below the upper middle value (raising it could move the median).
    """
    values = values.astype("float64")
    cens = values[censored.to_numpy()]
    ordered = values.dropna().sort_values()
    upper_middle = ordered.iloc[len(ordered) // 2] if len(ordered) else float("nan")
    any_cens = bool(censored.any())
    return {
        "total": fmt_int(values.sum(), any_cens),
        "median": fmt_int(values.median(), bool((cens <= upper_middle).any())),
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


def print_by_node(df: pd.DataFrame, console: Console) -> None:
    """How the trials spread over the machines: per Ray node and host, trials, placements, CPU time."""
    df = df.assign(node_id=df["node_id"].fillna("(serial, no Ray)"))
    table = Table(title="trials by Ray node", title_justify="left")
    for name in ("node_id", "host", "worker pids", "trials", "nodes (placements)", "cpu s"):
        table.add_column(name, justify="left" if name in ("node_id", "host") else "right")
    grouped = df.groupby(["node_id", "host"], dropna=False)
    for (node, host), sub in grouped:
        table.add_row(str(node)[:16], str(host), str(sub["pid"].nunique()), f"{len(sub):,}",
                      fmt_int(sub["nodes"].sum()), f"{sub['cpu_ns'].sum() / 1e9:,.1f}")
    console.print(table)


def fmt_ns(ns: float) -> str:
    """A duration in nanoseconds as a short human string (us, ms, s)."""
    if pd.isna(ns):
        return "-"
    if ns < 1e6:
        return f"{ns / 1e3:,.0f} us"
    if ns < 1e9:
        return f"{ns / 1e6:,.1f} ms"
    return f"{ns / 1e9:,.2f} s"


QUEENS_ORDER = ["brute_force", "recursive", "iterative", "amb", "functional", "bitmask",
                "construction"]


def queens_headline(df: pd.DataFrame, console: Console) -> None:
    """Print the N-Queens headline: per strategy and n, solutions, nodes, checks, time,
    and time relative to ``recursive`` on the same n (median wall time over repeats)."""
    df = one_per_trial(df)
    extra = varying(df, ["mode", "unique", "method", "engine", "budget_nodes"])
    base = df[df["strategy"] == "recursive"]
    base_key = ["n", *extra]
    ref = base.set_index(base_key)["wall_ns"] if len(base) else None
    order = {s: i for i, s in enumerate(QUEENS_ORDER)}
    df = df.assign(_o=df["strategy"].map(order)).sort_values(["_o", *extra, "n"])
    table = Table(title="N-Queens: per strategy and n (time: median wall time of the solve "
                  "call; vs recursive: time / recursive's time on the same n)",
                  title_justify="left")
    for name in ("strategy", *extra, "n", "status", "solutions", "nodes", "checks", "time",
                 "vs recursive"):
        table.add_column(name, justify="left" if name in ("strategy", "status") else "right")
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
        table.add_row(rec.strategy, *[str(getattr(rec, k)) for k in extra], str(rec.n),
                      rec.status, fmt_int(rec.solutions, bound), fmt_int(rec.nodes, bound),
                      fmt_int(rec.checks, bound), fmt_ns(rec.wall_ns), ratio)
    console.print(table)


HEADLINES: dict[str, Callable[[pd.DataFrame, Console], None]] = {
    "knights_tour": knights_headline,
    "n_queens": queens_headline,
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
        console.print(str(errors["error"].iloc[0]).splitlines()[0], markup=False)
