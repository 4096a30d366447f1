"""Building blocks of the headline tables, and the generic headline of any problem.

A problem's spec may bring its own headline (:attr:`btlab.problems.spec.ProblemSpec.headline`);
without one, :func:`generic_headline` prints trials by status and the work
(placements, backtracks) per group of the parameters that vary. Totals,
medians and maxima that censored trials make lower bounds are printed ``>=N``
(:func:`btlab.problems.censoring.bound_flags`).

Tables as data (``--format csv|json`` of show, compare and ls): :func:`table_records`
turns a printed rich Table (or a DataFrame) into row dicts, :func:`format_tables` writes
``(title, table)`` pairs as one JSON object or one CSV table (:func:`pick_table`);
:func:`sweeps_table` and :func:`compare_tables` are the tables of ``btlab ls`` and
``btlab compare``.
"""

from __future__ import annotations

import csv
import io
import json
import re
from typing import Sequence

import pandas as pd
from rich.console import Console
from rich.table import Table
from rich.text import Text

# group_columns, varying, GROUP_TRIAL_COLUMNS: re-exported (the tables' groups, which
# btlab compare --timings shares); reads, SPEC_*: how a view declares the columns it reads
from btlab.analysis.columns import (  # noqa: F401
    GROUP_TRIAL_COLUMNS,
    SPEC_COMPARED,
    SPEC_PARAMETERS,
    aggregate_repeats,
    group_columns,
    reads,
    varying,
)
from btlab.analysis.formatting import fmt_int, fmt_ns  # noqa: F401 - fmt_ns re-exported
from btlab.analysis.sweeps import SWEEP_COLUMNS
from btlab.errors import BtlabError, shown
from btlab.problems.censoring import CENSORED, bound_flags
from btlab.problems.spec import ProblemSpec
from btlab.store import schema
from btlab.store.schema import headline_columns  # noqa: F401 - re-exported: btlab run reads it

#: Columns every results row has besides the parameters that tell trials apart (the
#: trial keys of :data:`btlab.store.schema.COLUMNS`).
TRIAL_COLUMNS = schema.names(schema.TRIAL_KEY)


def literal(value: object) -> Text:
    """``value`` as rich Text printed as it is: a stored ``[/bold]`` or ``[red]x[/red]`` is
    text, never markup (a str cell or title of a rich Table would be parsed as markup), its
    control characters escaped (:func:`btlab.errors.shown`)."""
    return value if isinstance(value, Text) else Text(shown(value, lines=True))


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


@reads("status", "mode", "solutions", "abandoned", "nodes", "backtracks")
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
        # no failed trial: the columns as they are, not copies of them
        ran = slice(None) if ok.all() else ok
        found = (bounded_stats(sub.loc[ran, "solutions"], censored[ran])["total"]
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
            s = bounded_stats(sub.loc[ran, metric], censored[ran])
            stats += [s["total"], s["median"], s["max"]]
        add_row(work, *head, *stats)
    return counts, work, grouped


@reads(group_columns, status_and_work)
def generic_headline(df: pd.DataFrame, console: Console, spec: ProblemSpec) -> None:
    """The headline of a problem whose spec brings none: status counts and work per group."""
    df = one_per_trial(df, spec)
    counts, work, _ = status_and_work(df, group_columns(df, spec), spec.title, solutions=True)
    console.print(counts)
    console.print(work)


# --------------------------------------------------------------------------- tables as data

#: The output formats of ``btlab show``, ``btlab compare`` and ``btlab ls`` (``--format``).
FORMATS = ("table", "csv", "json")

_NUMBER = re.compile(r"^-?\d{1,3}(,\d{3})*(\.\d+)?$|^-?\d+(\.\d+)?$")
_BOUND = re.compile(r"^(>=|<=)(-?[\d,]+(\.\d+)?)$")


def cell_value(text: str, numeric: bool) -> object:
    """A printed table cell as data: in a ``numeric`` (right-aligned) column ``1,234`` is the
    int 1234, ``0.5`` a float, ``-`` None (nothing known) and a bound ``>=1,234`` the text
    ``>=1234`` (a lower bound stays marked); every other cell is its text."""
    text = text.strip()
    if not numeric:
        return text
    if text in ("-", ""):
        return None
    if _NUMBER.match(text):
        plain = text.replace(",", "")
        return float(plain) if "." in plain else int(plain)
    bound = _BOUND.match(text)
    if bound:
        return bound.group(1) + bound.group(2).replace(",", "")
    return text


def table_records(table: Table | pd.DataFrame) -> list[dict[str, object]]:
    """The rows of a rich Table (as printed, cells as :func:`cell_value`) or of a
    DataFrame (its values, nulls as None), one dict per row keyed by column header."""
    if isinstance(table, pd.DataFrame):
        frame = table.astype("object").where(table.notna(), None)
        return [{str(k): _plain_value(v) for k, v in rec.items()}
                for rec in frame.to_dict(orient="records")]
    columns = [(_text(c.header), c.justify == "right", [_text(v) for v in c.cells])
               for c in table.columns]
    return [{name: cell_value(cells[i] if i < len(cells) else "", numeric)
             for name, numeric, cells in columns} for i in range(table.row_count)]


def table_title(table: Table | pd.DataFrame, default: str = "table") -> str:
    """A rich Table's title as plain text (``default`` for a DataFrame or no title)."""
    title = getattr(table, "title", None)
    return _text(title) if title else default


def _text(value: object) -> str:
    return value.plain if isinstance(value, Text) else str(value)


def _plain_value(value: object) -> object:
    """A DataFrame cell as a JSON value: numpy scalars as Python numbers, timestamps as
    ISO text, arrays as lists."""
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if hasattr(value, "tolist"):
        return value.tolist()
    if hasattr(value, "item"):
        return value.item()
    return value


def pick_table(tables: Sequence[tuple[str, Table | pd.DataFrame]],
               name: str | None) -> tuple[str, Table | pd.DataFrame]:
    """The table ``--table NAME`` chooses among ``(title, table)`` pairs: the first for None;
    else the one whose title is ``name`` or, failing that, the only one whose title contains
    it (case ignored); a number picks by position, from 1.

    Raises:
        BtlabError: no table, or ``name`` matches none or several (exit 2; the titles listed).
    """
    if not tables:
        raise BtlabError("no table to write\n  fix: give --format table to see what the "
                         "command prints")
    if name is None:
        return tables[0]
    if name.isdigit() and 1 <= int(name) <= len(tables):
        return tables[int(name) - 1]
    exact = [t for t in tables if t[0].lower() == name.lower()]
    found = exact or [t for t in tables if name.lower() in t[0].lower()]
    if len(found) == 1:
        return found[0]
    listed = "\n".join(f"    {i}. {t[0]}" for i, t in enumerate(tables, 1))
    what = "none" if not found else f"{len(found)} of them"
    raise BtlabError(f"--table {name!r}: expected the title of one table (or a word only it "
                     f"contains, or its number), found it matches {what}; the tables:\n"
                     f"{listed}\n  fix: --table 1 (or another number above)")


def format_tables(tables: Sequence[tuple[str, Table | pd.DataFrame]], fmt: str,
                  table: str | None = None) -> str:
    """``(title, rich Table or DataFrame)`` pairs written as ``fmt``: ``json``, one object
    ``{title: [row objects]}``; ``csv``, the one table :func:`pick_table` chooses, with a
    header line (a title given twice gets `` (2)``). ``table`` output is the console's."""
    if fmt == "csv":
        _, chosen = pick_table(tables, table)
        records = table_records(chosen)
        out = io.StringIO()
        names = list(records[0]) if records else (
            list(chosen.columns) if isinstance(chosen, pd.DataFrame)
            else [_text(c.header) for c in chosen.columns])
        writer = csv.DictWriter(out, fieldnames=names, lineterminator="\n")
        writer.writeheader()
        writer.writerows(records)
        return out.getvalue()
    data: dict[str, list[dict[str, object]]] = {}
    for title, t in tables:
        key, n = title, 1
        while key in data:
            n += 1
            key = f"{title} ({n})"
        data[key] = table_records(t)
    return json.dumps(data, indent=1, default=str) + "\n"


def sweeps_table(sweeps: pd.DataFrame, title: str) -> Table:
    """:func:`btlab.analysis.sweeps.list_sweeps` as a rich Table (``btlab ls``), narrow enough
    for a terminal: name, problem, trials, runs, last run (to the minute) and one column of
    the trials by status (``28 solved, 47 node_limit``: the statuses found); ``--format``
    writes every column (config, rows, one count per status). The notes are not in it
    (``btlab ls`` prints them below, whole)."""
    table = Table(title=literal(title), title_justify="left")
    for name in ("name", "problem", "trials", "runs", "last run", "trials by status"):
        table.add_column(name, justify="right" if name in ("trials", "runs") else "left")
    statuses = [c for c in sweeps.columns if c not in (*SWEEP_COLUMNS, "note")]
    for rec in sweeps.to_dict(orient="records"):
        counts = ", ".join(f"{int(rec[s]):,} {s}" for s in statuses
                           if not pd.isna(rec[s]) and rec[s])
        add_row(table, rec["name"], _cell(rec["problem"], "{}"), _cell(rec["trials"]),
                _cell(rec["runs"]), _cell(rec["last_run"], "{:%Y-%m-%d %H:%M} UTC"),
                counts if not pd.isna(rec["trials"]) else "-")
    return table


def _cell(value: object, form: str = "{:,}") -> str:
    """A value of :func:`sweeps_table`: ``-`` for null."""
    if value is None or (pd.api.types.is_scalar(value) and pd.isna(value)):
        return "-"
    return form.format(value)


def compare_tables(cmp) -> list[tuple[str, pd.DataFrame]]:
    """A :class:`btlab.analysis.folder_diff.FolderDiff` as ``(title, DataFrame)`` pairs for
    ``btlab compare --format csv|json``: ``summary`` (one row), ``only in A``, ``only in
    B`` (trial id, parameters as ``btlab validate`` prints them), ``differences`` (trial
    id, column, the two values) and, with ``--timings``, ``timings``."""
    summary = {"compared": cmp.compared, "columns": len(cmp.columns),
               "only_in_a": len(cmp.only_a), "only_in_b": len(cmp.only_b),
               "differing_trials": int(cmp.differences["trial_id"].nunique())
               if not cmp.differences.empty else 0,
               "identical": cmp.identical}
    if cmp.timings is not None:
        summary.update(threshold=cmp.threshold, slower_groups=len(cmp.slower),
                       passed=cmp.passed)
    out = [("summary", pd.DataFrame([summary]))]
    for side, ids in (("A", cmp.only_a), ("B", cmp.only_b)):
        out.append((f"only in {side}", pd.DataFrame(
            {"trial_id": ids, "parameters": [cmp.labels.get(i, "") for i in ids]},
            columns=["trial_id", "parameters"])))
    diffs = cmp.differences.copy()
    for col in ("a", "b"):  # a list (a tour) or None as one JSON value, as printed
        diffs[col] = diffs[col].astype("object")
    out.append(("differences", diffs))
    if cmp.timings is not None:
        out.append(("timings", cmp.timings))
    return out
