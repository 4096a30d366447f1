"""The report's cases: the hardest finished and the censored cases of each group, drawn and listed.

A *case* is what varies inside a group: the start square for the knight's tour
(the spec's :attr:`~btlab.problems.spec.ProblemSpec.position_columns`), ``n`` for
N-Queens (a problem without position columns: its
:attr:`~btlab.problems.spec.ProblemSpec.size_columns`). A *group* is every other
parameter that varies (:func:`btlab.views.tables.group_columns`: heuristic,
strategy, engine, budgets, ...), plus the results folder (``source``) when
several folders hold the same parameters.

Two sections, both ``(df, spec) -> HTML``:

* :func:`cases_section`: per group, the hardest finished case (most
  backtracks; its placements, backtracks and time) and the censored cases,
  then the solution of each group's hardest finished case drawn by the
  problem's :attr:`~btlab.problems.spec.ProblemSpec.solution_figure` hook (once per
  distinct solution: groups that only ran one search differently share it);
* :func:`per_start_section`: one row per case, for each group its status,
  placements, backtracks and time, sortable in the browser by clicking a column
  header (:data:`SORT_SCRIPT`, inline; ``#sort=COL`` or ``#sort=-COL`` in the
  address sorts on load, column numbers from 0).
"""

from __future__ import annotations

import functools
import os
import re
from typing import Any

import numpy as np
import pandas as pd

from btlab.problems.censoring import CENSORED
from btlab.problems.spec import ProblemSpec
from btlab.views.report.html import MAX_PLOTS_PER_KIND, figure, figures, skipped
from btlab.views.report.html import escape as _e
from btlab.views.report.html import table as _table
from btlab.views.tables import fmt_int, fmt_ns, group_columns, is_count, one_per_trial

#: Censored cases are listed one by one up to this many, else the first few and a count.
CENSORED_LISTED = 10
#: The per-start table shows at most this many cases (rows) ...
MAX_CASE_ROWS = 5000
#: ... and this many groups (4 columns each).
MAX_CASE_GROUPS = 24

#: Sorts a ``table.sortable`` by the clicked header (numbers by value: a cell's ``data-v``,
#: else its text without ``>=`` and commas; blanks last); ``#sort=COL`` / ``#sort=-COL``
#: in the address sorts every such table on load.
SORT_SCRIPT = """
function btlabKey(td) {
  var v = td.hasAttribute('data-v') ? td.getAttribute('data-v')
        : td.textContent.trim().replace(/^>=/, '').replace(/,/g, '');
  var n = parseFloat(v);
  return v === '' || v === '-' ? [2, 0] : isNaN(n) ? [1, v] : [0, n];
}
function btlabSort(table, col, desc) {
  var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
  rows.sort(function (a, b) {
    var x = btlabKey(a.cells[col]), y = btlabKey(b.cells[col]);
    if (x[0] !== y[0]) return x[0] - y[0];
    var c = x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : 0;
    return desc ? -c : c;
  });
  rows.forEach(function (r) { body.appendChild(r); });
  table.querySelectorAll('th[data-col]').forEach(function (th) {
    th.removeAttribute('data-dir');
    if (+th.getAttribute('data-col') === col) th.setAttribute('data-dir', desc ? 'desc' : 'asc');
  });
}
document.querySelectorAll('table.sortable th[data-col]').forEach(function (th) {
  th.addEventListener('click', function () {
    btlabSort(th.closest('table'), +th.getAttribute('data-col'),
              th.getAttribute('data-dir') === 'asc');
  });
});
var btlabHash = location.hash.match(/^#sort=(-?)(\\d+)$/);
if (btlabHash) document.querySelectorAll('table.sortable').forEach(function (t) {
  btlabSort(t, +btlabHash[2], btlabHash[1] === '-');
});
"""

#: Styles of the sortable table (added to the report's stylesheet).
SORT_CSS = """
table.sortable th[data-col] { cursor: pointer; }
table.sortable th[data-dir="asc"]::after { content: " \\25B2"; }
table.sortable th[data-dir="desc"]::after { content: " \\25BC"; }
table.data td.status { text-align: left; }
table.sortable td, table.cases td { white-space: nowrap; }
table.sortable { font-size: 0.8em; }
table.sortable tbody td:first-child { position: sticky; left: 0; background: #fff; }
table.cases td:last-child { white-space: normal; text-align: left; min-width: 11em; }
table.cases th:first-child, table.cases th:last-child { text-align: left; }
"""


def case_columns(spec: ProblemSpec) -> list[str]:
    """The columns naming a case: the position columns, else the size columns."""
    return list(spec.position_columns or spec.size_columns)


def case_groups(df: pd.DataFrame, spec: ProblemSpec) -> list[str]:
    """The columns grouping the cases: varying parameters and budgets, not the case columns;
    ``source`` as well when two folders share a group's parameters."""
    cases = case_columns(spec)
    groups = [c for c in group_columns(df, spec) if c not in cases]
    if "source" in df.columns and df["source"].nunique() > 1:
        shared = (df.groupby(groups, dropna=False, observed=True)["source"].nunique().max()
                  if groups else df["source"].nunique())
        if shared > 1:
            groups = ["source", *groups]
    return groups


def _case_header(cases: list[str]) -> str:
    """``start`` for (start_row, start_col), ``n`` for (n,)."""
    prefix = os.path.commonprefix(cases).rstrip("_") if len(cases) > 1 else ""
    return prefix or ", ".join(cases)


def _plural(head: str) -> str:
    """``starts`` for ``start``; ``n values`` for a one-letter name."""
    return f"{head} values" if len(head) < 3 else f"{head}s"


def _case_text(values: tuple) -> str:
    """``(3, 5)`` for a square, ``12`` for one value."""
    text = [str(int(v)) if isinstance(v, (int, np.integer)) else str(v) for v in values]
    return text[0] if len(text) == 1 else "(" + ", ".join(text) + ")"


def _group_parts(groups: list[str], key: tuple) -> list[str]:
    """``["heuristic = none", "budget_nodes = 1,000,000"]``; ``["all trials"]`` for no group."""
    return [f"{g} = {_value(k)}" for g, k in zip(groups, key)] or ["all trials"]


def _group_label(groups: list[str], key: tuple) -> str:
    return ", ".join(_group_parts(groups, key))


def _value(value: Any) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NA:
        return "none"
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return f"{int(value):,}"
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return f"{int(value):,}"
    return str(value)


def _floats(series: pd.Series) -> np.ndarray:
    """A counter column as float64, NaN where missing (Int64 or float64 input)."""
    return pd.to_numeric(series, errors="coerce").to_numpy(dtype="float64", na_value=np.nan)


def _prepared(df: pd.DataFrame, spec: ProblemSpec) -> tuple[pd.DataFrame, list[str], list[str],
                                                            list]:
    """One row per trial (repeats folded), the case and group columns, and the groups
    [(key tuple, rows sorted by case)]."""
    cases = [c for c in case_columns(spec) if c in df.columns]
    rows = _one_per_trial(df, spec)
    groups = case_groups(rows, spec)
    grouped = (rows.groupby(groups, dropna=False, observed=True, sort=True) if groups
               else [((), rows)])
    out = []
    for key, sub in grouped:
        key = key if isinstance(key, tuple) else (key,)
        out.append((key, sub.sort_values(cases, kind="stable") if cases else sub))
    return rows, cases, groups, out


def _one_per_trial(df: pd.DataFrame, spec: ProblemSpec) -> pd.DataFrame:
    """Repeats folded (:func:`btlab.views.tables.one_per_trial`) within each folder (``source``)."""
    if "source" not in df.columns or df["source"].nunique() < 2:
        return one_per_trial(df, spec)
    parts = [one_per_trial(sub, spec)
             for _, sub in df.groupby("source", observed=True, sort=True)]
    return pd.concat(parts, ignore_index=True)


def _compact(items: list[str]) -> str:
    """``a, b, c`` or the first few and ``... N more``."""
    if len(items) <= CENSORED_LISTED:
        return ", ".join(items)
    shown = CENSORED_LISTED - 2
    return ", ".join(items[:shown]) + f" ... {len(items) - shown:,} more"


def hardest_cases(df: pd.DataFrame, spec: ProblemSpec) -> pd.DataFrame:
    """Per group, the hardest finished case and the censored cases.

    Returns:
        One row per group: the group columns, then ``trials``, ``finished``
        (solved or exhausted), ``hardest`` (the case text, e.g. ``(3, 5)``;
        ``-`` if none finished), ``placements``, ``backtracks`` (floats), ``time``
        (``wall_ns``, float; repeats: median), ``censored`` (a count),
        ``censored_cases`` (the case texts, in case order), ``errors`` and
        ``row`` (the hardest case's results row, or None).
        Ties of backtracks go to the first case in case order.
    """
    _, cases, groups, grouped = _prepared(df, spec)
    out = []
    for key, sub in grouped:
        status = sub["status"].astype("object")
        finished = sub[status.isin(["solved", "exhausted"]).to_numpy()]
        censored = sub[status.isin(CENSORED).to_numpy()]
        rec: dict[str, Any] = dict(zip(groups, key))
        rec.update(trials=len(sub), finished=len(finished), hardest="-",
                   placements=np.nan, backtracks=np.nan, time=np.nan, row=None)
        if len(finished):
            back = _floats(finished["backtracks"])
            hard = finished.iloc[int(np.nanargmax(back)) if not np.isnan(back).all() else 0]
            rec.update(hardest=_case_text(tuple(hard[c] for c in cases)) if cases else "-",
                       placements=_floats(hard[["nodes"]])[0],
                       backtracks=_floats(hard[["backtracks"]])[0],
                       time=_floats(hard[["wall_ns"]])[0], row=hard)
        rec["censored"] = len(censored)
        rec["censored_cases"] = [_case_text(tuple(r)) for r in
                                 censored[cases].itertuples(index=False)] if cases else []
        rec["errors"] = int((status == "error").sum())
        out.append(rec)
    return pd.DataFrame(out)


def cases_section(df: pd.DataFrame, spec: ProblemSpec | None) -> str:
    """The hardest finished and the censored cases of each group, and the hardest solutions
    drawn (HTML; empty for no rows or no spec)."""
    if spec is None or df.empty:
        return ""
    cases = case_columns(spec)
    if not cases or not set(cases) <= set(df.columns):  # nothing varies inside a group
        return ""
    try:
        table = hardest_cases(df, spec)
    except (KeyError, ValueError) as exc:
        return skipped("hardest and censored cases", exc)
    groups = [c for c in table.columns if c not in _CASE_FIELDS]
    head = _case_header(cases)
    if len(groups) > 2:  # one column, a line per parameter: the table stays narrow
        shown = pd.DataFrame({"group": [_LINE.join(_group_parts(groups, tuple(r)))
                                        for r in table[groups].itertuples(index=False)]})
    else:
        shown = pd.DataFrame({g: table[g].map(_value) for g in groups})
    shown["trials"] = table["trials"]
    shown["finished"] = table["finished"]
    shown[f"hardest finished {head}"] = table["hardest"]
    shown["placements"] = table["placements"].map(fmt_int)
    shown["backtracks"] = table["backtracks"].map(fmt_int)
    shown["time"] = table["time"].map(lambda t: "-" if pd.isna(t) else fmt_ns(t))
    shown[f"censored {_plural(head)}"] = [
        (f"{n:,}: {_compact(items)}" if items else f"{n:,}") if n else "0"
        for n, items in zip(table["censored"], table["censored_cases"])]
    if table["errors"].any():
        shown["errors"] = table["errors"]
    parts = [f"<h2>Hardest and censored {_e(_plural(head))}</h2>",
             f'<p class="note">Per group, the finished {_e(head)} (solved or exhausted) with '
             f"the most backtracks, and the {_e(_plural(head))} stopped at a budget (censored: how "
             "hard they are is not known, only that they need more than the budget).</p>",
             '<div class="wide">' + re.sub(r'<table class="([^"]*)"', r'<table class="\1 cases"',
                                           _table(shown, index=False), count=1).replace(
                                               _LINE, "<br>") + "</div>"]
    draw = spec.hook("solution_figure")
    if draw is None:
        return "\n".join(parts)
    # one drawing per distinct solution: groups that differ only in how the search was run
    # (strategy of one tree, engine, budget) find the same one with the same counters;
    # their labels share a caption
    shared: dict[str, tuple[Any, list[str], str]] = {}
    for rec in table.itertuples(index=False):
        row = rec.row
        if row is None or not _has_solution(row.get("solution")):
            continue
        key = (f"{rec.hardest}|{rec.backtracks}|{rec.placements}|"
               f"{_solution_key(row.get('solution'))}")
        label = _group_label(groups, tuple(getattr(rec, g) for g in groups))
        if key in shared:
            shared[key][1].append(label)
            continue
        if len(shared) >= MAX_PLOTS_PER_KIND:
            continue
        shared[key] = (row, [label],
                       f"{rec.hardest if len(cases) > 1 else f'{head} = {rec.hardest}'}, "
                       f"{fmt_int(rec.backtracks)} backtracks, {fmt_int(rec.placements)} "
                       f"placements, {fmt_ns(rec.time) if not pd.isna(rec.time) else '-'}")
    drawn = []
    for row, labels, what in shared.values():
        caption = (f"The hardest finished {head} for {labels[0]}: {what}." if len(labels) == 1
                   else f"The hardest finished {head} for {labels[0]}: {what}; the same "
                   f"{head} and solution for " + "; ".join(labels[1:]) + ".")
        drawn.append(figure(functools.partial(draw, row), caption, "svg", "board"))
    if drawn:
        parts.append(f"<h3>Solutions of the hardest {_e(_plural(head))}</h3>")
        parts.append(figures(drawn))
    return "\n".join(parts)


#: Separates the lines of a group cell until the table is HTML (a private-use character).
_LINE = "\ue000"

_CASE_FIELDS = ("trials", "finished", "hardest", "placements", "backtracks", "time", "censored",
                "censored_cases", "errors", "row")


def _solution_key(solution: Any) -> str:
    """A solution (a list of squares, an array, ...) as text to compare two by."""
    try:
        return repr(np.asarray(solution).tolist())
    except (TypeError, ValueError):
        return repr(solution)


def _has_solution(solution: Any) -> bool:
    return solution is not None and not (isinstance(solution, float) and np.isnan(solution)) \
        and len(solution) > 0


def per_start_section(df: pd.DataFrame, spec: ProblemSpec | None) -> str:
    """One sortable table row per case (start square, or n): for each group its status,
    placements, backtracks (solutions in ``count`` mode) and time (HTML with the inline
    :data:`SORT_SCRIPT`)."""
    if spec is None or df.empty:
        return ""
    rows, cases, groups, grouped = _prepared(df, spec)
    if not cases:
        return ""
    head = _case_header(cases)
    parts = [f"<h2>Every {_e(head)}</h2>",
             f'<p class="note">One row per {_e(head)}; for each group its status, placements, '
             "backtracks and wall time (repeats: median). Click a column header to sort by it "
             "(again: the other way); <code>&gt;=</code> values (shaded) are lower bounds of "
             "censored trials and sort by their bound.</p>"]
    sizes = [c for c in spec.size_columns if c not in cases and c in rows.columns]
    boards = (rows[sizes].drop_duplicates().sort_values(sizes).itertuples(index=False)
              if sizes and spec.position_columns else [()])
    for board in boards:
        sel = dict(zip(sizes, board))
        part = [(k, _select(g, sel)) for k, g in grouped]
        part = [(k, g) for k, g in part if len(g)]
        if not part:
            continue
        if sel:
            parts.append("<h3>" + " x ".join(str(int(v)) for v in board)
                         + f" ({', '.join(sizes)})</h3>")
        parts.append(_long_table(part, cases, groups, head))
    parts.append(f"<script>{SORT_SCRIPT}</script>")
    return "\n".join(parts)


def _select(sub: pd.DataFrame, sel: dict) -> pd.DataFrame:
    for col, value in sel.items():
        sub = sub[sub[col] == value]
    return sub


def _long_table(grouped: list, cases: list[str], groups: list[str], head: str) -> str:
    notes = []
    if len(grouped) > MAX_CASE_GROUPS:
        notes.append(f"the first {MAX_CASE_GROUPS} of {len(grouped):,} groups")
        grouped = grouped[:MAX_CASE_GROUPS]
    keys = pd.concat([g[cases] for _, g in grouped]).drop_duplicates()
    keys = keys.sort_values(cases, kind="stable")
    if len(keys) > MAX_CASE_ROWS:
        notes.append(f"the first {MAX_CASE_ROWS:,} of {len(keys):,} {_plural(head)}")
        keys = keys.head(MAX_CASE_ROWS)
    order = {tuple(k): i for i, k in enumerate(keys.itertuples(index=False))}
    body = [[f'<td class="text" data-v="{i}">{_e(_case_text(k))}</td>']
            for k, i in order.items()]
    # count mode: its result, the solutions, where first mode has its backtracks
    third = ("solutions" if all(is_count(g) and "solutions" in g.columns for _, g in grouped)
             else "backtracks")
    for _, sub in grouped:
        cells: dict[int, str] = {}
        status = sub["status"].astype("object").to_numpy()
        nodes, back, wall = (_floats(sub[c]) for c in ("nodes", third, "wall_ns"))
        for j, k in enumerate(sub[cases].itertuples(index=False)):
            i = order.get(tuple(k))
            if i is None:
                continue
            bound = status[j] in CENSORED
            cells[i] = (f'<td class="status">{_e(status[j])}</td>' + _num(nodes[j], bound)
                        + _num(back[j], bound) + _num(wall[j], bound, _time(wall[j], bound)))
        for i, row in enumerate(body):
            row.append(cells.get(i, '<td class="status">-</td>' + "<td>-</td>" * 3))
    top = f'<th rowspan="2" class="text" data-col="0">{_e(head)}</th>' + "".join(
        f'<th colspan="4">{"<br>".join(_e(p) for p in _group_parts(groups, k))}</th>'
        for k, _ in grouped)
    sub_head = "".join(
        f'<th data-col="{1 + 4 * g + j}">{name}</th>'
        for g in range(len(grouped))
        for j, name in enumerate(("status", "placements", third, "time")))
    note = (f'<p class="note">Shown: {"; ".join(notes)}.</p>' if notes else "")
    return (note + f'<div class="wide"><table class="data sortable"><thead><tr>{top}</tr>'
            f"<tr>{sub_head}</tr></thead><tbody>"
            + "".join("<tr>" + "".join(r) + "</tr>" for r in body) + "</tbody></table></div>")


def _time(ns: float, bound: bool) -> str:
    """Wall time as the table shows it: a censored trial's is a lower bound too."""
    return "-" if np.isnan(ns) else (">=" if bound else "") + fmt_ns(ns)


def _num(value: float, bound: bool, text: str | None = None) -> str:
    if np.isnan(value):
        return "<td>-</td>"
    shown = text if text is not None else fmt_int(value, bound)
    cls = ' class="bound"' if bound else ""
    return f'<td{cls} data-v="{value:.0f}">{_e(shown)}</td>'


#: The columns of :func:`per_start_frame` after the group and case columns, when present.
PER_START_VALUES = ("status", "censored", "nodes", "backtracks", "solutions", "wall_ns",
                    "cpu_ns")


def per_start_frame(df: pd.DataFrame, spec: ProblemSpec | None) -> pd.DataFrame | None:
    """The per-start table of the report as data (``btlab report`` writes it as CSV beside
    the HTML): one row per group and case, repeats folded (timings: the median).

    Returns:
        A DataFrame: the group columns (:func:`case_groups`), the size columns, the case
        columns (``start_row``, ``start_col``; ``n``), then :data:`PER_START_VALUES`
        (counters of a censored row are lower bounds: ``censored`` is True); every row,
        not the HTML's first :data:`MAX_CASE_ROWS`. None when there is no case to list.
    """
    if spec is None or df.empty:
        return None
    rows, cases, groups, grouped = _prepared(df, spec)
    if not cases:
        return None
    sizes = [c for c in spec.size_columns if c not in cases and c in rows.columns]
    values = [c for c in PER_START_VALUES if c in rows.columns]
    frames = [sub for _, sub in grouped]
    out = pd.concat(frames, ignore_index=True) if frames else rows.iloc[:0]
    columns = list(dict.fromkeys([*groups, *sizes, *cases, *values]))
    out = out[columns].copy()
    if "status" in out.columns:
        out["status"] = out["status"].astype("object")
    if "censored" not in out.columns and "status" in out.columns:
        out.insert(columns.index("status") + 1, "censored", out["status"].isin(CENSORED))
    return out
