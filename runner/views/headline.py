"""The headline tables ``btlab run`` prints at the end and ``btlab show`` prints again.

Each problem's spec names its headline (:attr:`btlab.problems.spec.ProblemSpec.headline`);
a problem without one gets :func:`btlab.views.tables.generic_headline`. Rows of
``mode: estimate`` get a table of their own (:mod:`btlab.views.estimate_table`). Trials that
stopped at a budget are *censored*: totals, medians and maxima they make lower
bounds are printed ``>=N`` (:mod:`btlab.problems.censoring`).
"""

from __future__ import annotations

import io
from typing import Any

import pandas as pd
from rich.console import Console
from rich.table import Table
from rich.text import Text

from btlab.analysis.columns import columns_read
from btlab.problems import plugins
from btlab.problems.registry import get_problem
from btlab.problems.spec import ProblemSpec
from btlab.store.schema import row_schema
from btlab.views.estimate_table import is_estimate, print_estimates
from btlab.views.failures import first_line
from btlab.views.findings import finding
from btlab.views.tables import add_row, fmt_int, generic_headline, reads, table_title


class Collector(Console):
    """A Console that keeps what is printed (rich Tables, Text) instead of drawing it."""

    def __init__(self) -> None:
        super().__init__(file=io.StringIO(), width=150, highlight=False, markup=False)
        self.items: list[Any] = []

    def print(self, *objects: Any, **kwargs: Any) -> None:  # noqa: A003 - Console's name
        self.items.extend(objects)


def headline_items(df: pd.DataFrame,
                   errors: tuple[int, str | None] | None = None) -> list[Any]:
    """The headline of ``df`` as a list of what :func:`print_headline` prints, in order
    (rich Tables, and Text or str lines), for a caller that renders them its own way (the
    report's HTML, another output format)."""
    collector = Collector()
    print_headline(df, collector, errors=errors)
    return collector.items


@reads("problem", "status", "error", is_estimate, print_estimates)
def print_headline(df: pd.DataFrame, console: Console | None = None,
                   errors: tuple[int, str | None] | None = None) -> None:
    """Print the headline tables of a results DataFrame (one problem).

    A plug-in problem that no longer imports, or whose headline fails to load,
    gets a plain count of trials by status instead of an error. ``errors``:
    (trials that failed, the first line of the first message) when ``df``
    holds one row per trial key rather than every trial
    (:func:`btlab.views.headline_rows.headline_rows`); None: counted in ``df``.
    """
    console = console or Console()
    if df.empty:
        console.print(Text("no rows"))
        return
    name = str(df["problem"].iloc[0])
    try:
        spec = get_problem(name)
        headline = spec.hook("headline")
    except (ValueError, plugins.PluginError) as exc:
        console.print(f"(problem {name}: {str(exc).splitlines()[0]}; trials by status only)",
                      markup=False)
        console.print(df["status"].astype("object").value_counts().to_string(), markup=False)
    else:
        estimates = is_estimate(df)
        searched = df[~estimates] if estimates.any() else df  # no copy of a whole frame
        if not searched.empty:
            if headline is None:
                generic_headline(searched, console, spec)
            else:
                headline(searched, console)
        if estimates.any():
            print_estimates(df, spec, console)
    if errors is None:
        failed = df[df["status"] == "error"]
        errors = (len(failed), first_line(failed["error"].iloc[0]) if len(failed) else None)
    if errors[0]:
        console.print(Text.assemble((f"{errors[0]} trial(s) failed", "red"), "; first error:"))
        console.print(str(errors[1]), markup=False)


def tables_columns(spec: ProblemSpec) -> list[str] | None:
    """The columns the end of ``btlab run`` reads for its tables of ``spec``'s rows: what
    :func:`print_headline`, the spec's headline (or :func:`~btlab.views.tables.generic_headline`)
    and :func:`~btlab.views.findings.finding` declare they read
    (:func:`btlab.analysis.columns.reads`), in row order, never ``repeat`` (those rows are
    one per trial key already, :func:`btlab.views.headline_rows.headline_rows`: nothing to
    fold). None when one of them declares nothing (a plug-in's headline may read any
    column); a headline that does not load is left out (:func:`print_headline` prints
    trials by status instead)."""
    try:
        views = [print_headline, spec.hook("headline") or generic_headline, finding]
    except (ValueError, plugins.PluginError):
        views = [print_headline, finding]
    declared: set[str] = set()
    for view in views:
        columns = columns_read(view, spec)
        if columns is None:
            return None
        declared.update(columns)
    return [c for c in row_schema(spec).names if c in declared and c != "repeat"]


def print_by_node(df: pd.DataFrame, console: Console) -> None:
    """How the trials spread over the machines.

    Per Ray node and host: trials, placements, CPU time.
    """
    df = df.assign(node_id=df["node_id"].fillna("(serial, no Ray)"))
    table = Table(title="trials by Ray node", title_justify="left")
    for name in ("node_id", "host", "worker pids", "trials", "nodes (placements)", "cpu s"):
        table.add_column(name, justify="left" if name in ("node_id", "host") else "right")
    grouped = df.groupby(["node_id", "host"], dropna=False)
    for (node, host), sub in grouped:
        add_row(table, str(node)[:16], str(host), str(sub["pid"].nunique()), f"{len(sub):,}",
                      fmt_int(sub["nodes"].sum()), f"{sub['cpu_ns'].sum() / 1e9:,.1f}")
    console.print(table)


class _TableRecorder(Console):
    """A Console that keeps the rich Tables printed to it, in order, and draws nothing."""

    def __init__(self) -> None:
        super().__init__(file=io.StringIO(), width=150, highlight=False, markup=False)
        self.tables: list[Table] = []

    def print(self, *objects: Any, **kwargs: Any) -> None:  # noqa: A003 - Console's name
        self.tables.extend(o for o in objects if isinstance(o, Table))


def headline_tables(df: pd.DataFrame, errors: tuple[int, str | None] | None = None,
                    by_node: bool = False) -> list[tuple[str, Table]]:
    """The tables :func:`print_headline` prints (``by_node``: :func:`print_by_node`'s), as
    ``(title, rich Table)`` pairs, for ``--format csv|json``
    (:func:`btlab.views.tables.format_tables`): whatever a headline prints is in them."""
    recorder = _TableRecorder()
    if by_node:
        print_by_node(df, recorder)
    else:
        print_headline(df, recorder, errors)
    return [(table_title(t), t) for t in recorder.tables]
