"""``btlab report``: one self-contained HTML file about one or several results folders.

The file needs nothing else to be read: styles are inline, every plot is an
``<img>`` whose ``src`` is a base64 ``data:`` URI (PNG or SVG), the one script
(sorting the per-start table, :data:`btlab.views.report.cases.SORT_SCRIPT`) is
inline, and there is no web font and no link to fetch. Several folders (of
one problem) are read together (:mod:`btlab.views.report.folders`: a ``source``
column names each row's folder). It holds, in order:

1. what was run: the config's name and description, trial and run counts
   (per folder);
2. the headline tables, exactly as ``btlab show`` prints them (captured from
   :mod:`btlab.views.headline` and exported as HTML; per folder), then a summary
   table from :func:`btlab.analysis.summary` with bounds marked ``>=``;
3. the distribution of search cost (:func:`btlab.views.report.survival.survival_section`:
   survival curves, cactus plot, quantiles, log-rank tests) and the pairwise
   comparisons (:func:`btlab.views.report.pairs.pairs_section`: every pair of groups
   that differ in one of the spec's :attr:`btlab.problems.spec.ProblemSpec.comparisons`
   columns, trials paired on the search, totals split into exact and bounded
   parts, reduction heatmaps);
4. the hardest finished and the censored cases (start squares; n for
   N-Queens) of each group, with the hardest solutions drawn, and every case
   in one table sortable by any column (:mod:`btlab.views.report.cases`);
5. the problem's own section (:attr:`btlab.problems.spec.ProblemSpec.report`; see
   :mod:`btlab.problems.knights_tour.views`, :mod:`btlab.problems.n_queens.views`),
   or, for a problem that defines none, wall time against nodes;
6. failed trials, if any (first line of each message);
7. the config as stored in the Parquet metadata, and provenance: runs,
   hosts, btlab / Python / Ray versions, git commits, schema version (per
   folder).
"""

from __future__ import annotations

import json
import os
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence, overload

import pandas as pd
from rich.table import Table
from rich.text import Text

from btlab import analysis
from btlab.errors import BtlabError, OutputPathError
from btlab.problems import plugins
from btlab.problems.registry import get_problem
from btlab.problems.spec import ProblemSpec
from btlab.store.folder import btlab_version, newest_meta
from btlab.store.location import locate
from btlab.views import plots
from btlab.views.estimate_table import is_estimate
from btlab.views.findings import finding, what_was_run
from btlab.views.headline import Collector as _Collector  # noqa: F401 - its old name here
from btlab.views.headline import headline_items
from btlab.views.outfile import atomic_write_text, check_target
from btlab.views.report import cases as report_cases
from btlab.views.report import folders as report_folders
from btlab.views.report.html import escape as _e
from btlab.views.report.html import figure, figures, skipped
from btlab.views.report.html import table as _table
from btlab.views.report.pairs import pairs_section
from btlab.views.report.survival import survival_section

_CSS = """
body { font-family: -apple-system, "Segoe UI", "DejaVu Sans", Helvetica, Arial, sans-serif;
       margin: 0 auto; max-width: 1180px; padding: 1.5em 2em 4em; color: #1b1b1b;
       line-height: 1.45; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.25em; border-bottom: 1px solid #ccc; padding-bottom: 0.2em; margin-top: 2em; }
h3 { font-size: 1.05em; margin-bottom: 0.3em; }
p.lead { color: #444; margin-top: 0; }
p.note { color: #555; font-size: 0.9em; }
table.data { border-collapse: collapse; font-size: 0.86em; margin: 0.6em 0 1.2em; }
table.data th, table.data td { border: 1px solid #d0d0d0; padding: 3px 8px; }
table.data td { text-align: right; font-variant-numeric: tabular-nums; }
table.data th { background: #f3f3f3; }
table.data td.text, table.data th.text { text-align: left; }
table.data td.bound { background: #fff4d6; }
table.data td:first-child { text-align: left; }
table.data caption { caption-side: top; text-align: left; font-size: 0.95em; color: #333;
                     padding-bottom: 0.3em; font-style: italic; }
div.wide { overflow-x: auto; max-width: 100%; }
div.figures > table.data, div.figures > div { max-width: 100%; overflow-x: auto; }
p.finding { font-size: 1.05em; background: #f4f8ff; border-left: 4px solid #5b8bd6;
            padding: 0.6em 0.9em; }
nav.toc { font-size: 0.92em; margin: 1em 0; } nav.toc ol { margin: 0.3em 0; columns: 2; }
pre { background: #f7f7f7; border: 1px solid #e1e1e1; padding: 0.8em; overflow-x: auto;
      font-size: 0.82em; }
.figures { display: flex; flex-wrap: wrap; gap: 1.2em; align-items: flex-start; }
figure { margin: 0; }
figure img { width: 100%; height: auto; border: 1px solid #e5e5e5; }
figure.heatmap { width: 540px; } figure.wide { width: 760px; } figure.board { width: 420px; }
figcaption { font-size: 0.85em; color: #444; }
dl.kv { display: grid; grid-template-columns: max-content auto; gap: 0.2em 1em; }
dl.kv dt { font-weight: 600; } dl.kv dd { margin: 0; }
""" + report_cases.SORT_CSS


def write_report(results: str | Path | Sequence[str | Path], out: str | Path = "report.html",
                 all_rows: bool = False) -> Path:
    """Write the HTML report of one or several results folders to ``out``; returns ``out``
    as a Path.

    ``out`` must be a new file or a regular file to replace; it is checked
    before the report is made and written whole or not at all
    (:func:`btlab.views.outfile.atomic_write_text`). ``all_rows``: include rows of
    trials no longer in the config last run (``btlab report --all``).

    Raises:
        ResultsError: a folder holds no btlab results (named), or the folders
            hold different problems (exit 2).
        OutputPathError: ``out`` is a directory, FIFO, device, socket or symbolic
            link, is inside one of the folders, or cannot be created (exit 2).
        WriteError: the disk is full or an I/O error while writing (exit 3).
    """
    check_target(out, "the report", STDOUT_HINT)
    check_target(cases_csv_path(out), "the per-start table")
    for folder in report_folders.as_folders(results):
        _outside_results(folder, out)
    text = render_report(results, all_rows=all_rows)
    path = atomic_write_text(out, text, "the report", STDOUT_HINT)
    write_cases_csv(results, cases_csv_path(out), all_rows)
    return path


def cases_csv_path(out: str | Path) -> Path:
    """Where :func:`write_report` writes the per-start table beside the HTML ``out``:
    ``report.html`` -> ``report.csv``."""
    out = Path(out)
    return out.with_suffix(".csv") if out.suffix.lower() != ".csv" else Path(f"{out}.csv")


def write_cases_csv(results: str | Path | Sequence[str | Path], out: str | Path,
                    all_rows: bool = False) -> Path | None:
    """Write the report's per-start table
    (:func:`btlab.views.report.cases.per_start_frame`: one row per group and start) of the
    folders to the CSV file ``out``, whole or not at all; None (nothing written) when
    the rows have no case to list (every row left out, a problem that does not load).

    Raises:
        OutputPathError, WriteError: as :func:`write_report`.
    """
    df, _ = report_folders.load_folders(report_folders.as_folders(results), all_rows)
    try:
        spec: ProblemSpec | None = (get_problem(str(df["problem"].iloc[0])) if len(df)
                                    else None)
    except (ValueError, plugins.PluginError):
        spec = None
    frame = report_cases.per_start_frame(df, spec)
    if frame is None:
        return None
    return atomic_write_text(out, frame.to_csv(index=False), "the per-start table")


@overload
def report(folders: str | Path | Sequence[str | Path], out: None, *,
           all_rows: bool = False) -> str: ...


@overload
def report(folders: str | Path | Sequence[str | Path], out: str | Path = "report.html", *,
           all_rows: bool = False) -> Path: ...


def report(folders: str | Path | Sequence[str | Path], out: str | Path | None = "report.html",
           *, all_rows: bool = False) -> Path | str:
    """The HTML report of results folders (``btlab report``), written to ``out``.

    Args:
        folders: a results folder (or filesystem URI), or several of one problem,
            read together (a ``source`` column names each row's folder).
        out: the HTML file to write: a new file or a regular file to replace,
            outside the folders; None: nothing is written, the HTML is returned.
        all_rows: include rows of trials no longer in the config last run into
            each folder (``btlab report --all``).

    Returns:
        ``out`` as a Path (one self-contained file: styles, plots as base64
        PNG/SVG and one script inline), or with ``out=None`` the HTML text.

    Raises:
        ResultsError: a folder holds no btlab results, or the folders hold
            different problems.
        OutputPathError: ``out`` is a directory, FIFO, device, socket or symbolic
            link, is inside one of the folders, or cannot be created.
        WriteError: the disk is full or an I/O error while writing (nothing is left
            behind).
    """
    if out is None:
        return render_report(folders, all_rows=all_rows)
    return write_report(folders, out, all_rows=all_rows)


def _outside_results(results: str | Path, out: str | Path) -> None:
    """Refuse a report path inside the (local) results folder it reports on.

    Every Parquet reader given the folder reads every file in it (btlab, too,
    then refuses the folder): the report would break the folder it describes.

    Raises:
        OutputPathError: ``out`` is inside ``results`` (exit 2).
    """
    try:
        folder = locate(results).local
    except BtlabError:
        return  # render_report names what is wrong with ``results``
    if folder is None or not folder.is_dir():
        return
    real = Path(os.path.realpath(folder))
    if Path(os.path.realpath(out)).is_relative_to(real):
        raise OutputPathError(
            f"{out}: cannot write the report there: it is inside the results folder "
            f"{results}, whose every file Parquet readers (pandas, Polars, btlab) read as "
            f"rows; nothing was written\n  fix: give a path outside it, e.g. "
            f"{str(real).rstrip('/')}.html")


#: The fix a report path that is a device or a pipe is given.
STDOUT_HINT = "to print the report instead, give -o -"


def render_report(results: str | Path | Sequence[str | Path], all_rows: bool = False) -> str:
    """The HTML report of one or several results folders, as one string (see the module
    docstring).

    It counts the rows ``btlab show`` counts in each folder
    (:func:`btlab.analysis.counted_rows.select_rows`): the trials of the config last run
    into it, or every row with ``all_rows``, and says what it left out in the
    same words.

    Raises:
        ResultsError: a folder holds no btlab results (named), or the folders
            hold different problems (exit 2).
    """
    folders = report_folders.as_folders(results)
    df, chosen = report_folders.load_folders(folders, all_rows)
    several = len(chosen) > 1
    config = chosen[0].config
    problem = str(df["problem"].iloc[0]) if len(df) else config.get("problem", "?")
    name = (" + ".join(f.name for f in chosen) if several
            else config.get("name") or chosen[0].name)
    sections: list[str] = []
    runs = df["run_id"].nunique() if "run_id" in df.columns else 0
    repeats = int(df["repeat"].max()) + 1 if "repeat" in df.columns and len(df) else 1
    where = (f"{len(chosen)} results folders" if several
             else f"<code>{_e(chosen[0].path)}</code>")
    lead = (f"{len(df):,} trials of <b>{_e(problem)}</b> from {where}, "
            f"{runs} run(s)" + (f", {repeats} repeats per trial" if repeats > 1 else "")
            + f"; report made {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC by btlab "
            f"{_e(btlab_version())}.")
    try:
        spec: ProblemSpec | None = get_problem(problem)
    except (ValueError, plugins.PluginError) as exc:
        spec = None
        sections.append(skipped(f"problem {problem}", exc))
    if not several:
        lead += "".join(f"<br>{_e(note)}" for note in chosen[0].notes)
        lead = f"{_e(_subtitle(chosen[0], spec))}<br>{lead}"
    else:
        sections.append(report_folders.what_was_run(chosen))
    sections.insert(0, _findings(chosen, spec))
    if df.empty:  # e.g. only a part that records a config, or every row left out
        sections.append('<h2>Headline</h2><p class="note">No trial to show.</p>')
    else:
        sections.append(_headline(df, [(f.name, f.rows) for f in chosen] if several else None))
        sections.append(survival_section(df, spec))
        sections.append(pairs_section(df, spec))
        # the hardest and censored cases of searches: a probe run finds no tour, and its
        # placements are the probes' own cost, not how hard a start is
        sections.append(report_cases.cases_section(df[~is_estimate(df)], spec))
        sections.append(report_cases.per_start_section(df, spec))
        sections.append(_problem_section(df, spec))
        sections.append(_errors(df))
    sections.append(report_folders.config_and_provenance(chosen))
    body = _with_contents("\n".join(s for s in sections if s))
    return (f"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>btlab report: {_e(name)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
            f"<h1>btlab report: {_e(name)}</h1>\n<p class=\"lead\">{lead}</p>\n{body}\n"
            f"</body>\n</html>\n")


# --------------------------------------------------------------------------- sections


def _subtitle(folder: report_folders.Folder, spec: ProblemSpec | None) -> str:
    """What was run into ``folder``, told from its rows and overrides
    (:func:`btlab.views.findings.what_was_run`); the config's own description only when
    no override changed what it describes."""
    overrides = json.loads(newest_meta(folder.path).get("btlab.overrides", "[]") or "[]")
    described = folder.config.get("description") if not overrides else None
    if spec is None or folder.rows.empty:
        return str(described or folder.config.get("name") or folder.name)
    ran = "Ran: " + what_was_run(folder.rows, spec, overrides)
    return f"{str(described).strip()} {ran}" if described else ran


def _findings(chosen: list[report_folders.Folder], spec: ProblemSpec | None) -> str:
    """The first section: the finding of each folder (:func:`btlab.views.findings.finding`)."""
    parts = ['<h2>Findings</h2>']
    for folder in chosen:
        text = (finding(folder.rows, spec, config=folder.config)
                if spec is not None and len(folder.rows) else "")
        if not text:
            text = "No trial to tell of."
        head = f"<b>{_e(folder.name)}</b>: " if len(chosen) > 1 else ""
        parts.append(f'<p class="finding">{head}{_e(text.removeprefix("Finding: "))}</p>')
    return "\n".join(parts)


def _with_contents(body: str) -> str:
    """``body`` with an anchor before every section heading (``<h2>``) and, after the
    first section (Findings), a table of contents linking each."""
    heads: list[tuple[str, str]] = []

    def anchor(match: re.Match) -> str:
        title = match.group(1)
        slug = re.sub(r"[^a-z0-9]+", "-", re.sub(r"<[^>]+>|&[a-z#0-9]+;", "",
                                                  title.lower())).strip("-") or "section"
        base, n = slug, 2
        while slug in {s for s, _ in heads}:
            slug, n = f"{base}-{n}", n + 1
        heads.append((slug, title))
        return f'<a id="{slug}"></a><h2>{title}</h2>'  # the heading as the sections write it

    body = re.sub(r"<h2>(.*?)</h2>", anchor, body, flags=re.S)
    if len(heads) < 2:
        return body
    toc = ('<nav class="toc"><b>Contents</b><ol>'
           + "".join(f'<li><a href="#{slug}">{title}</a></li>' for slug, title in heads)
           + "</ol></nav>")
    second = body.find(f'<a id="{heads[1][0]}"></a>')
    return body[:second] + toc + "\n" + body[second:]




def _plain(value: Any) -> str:
    """A table cell, title or printed object as plain text: a str is taken literally (as
    ``btlab show`` prints it: its console reads no markup)."""
    if isinstance(value, Text):
        return value.plain
    return str(value)


def rich_table_html(table: Table) -> str:
    """A rich Table as an HTML table (title as caption, cells as plain text).

    Cells whose text starts with ``>=`` (lower bounds) get the class ``bound``.
    """
    columns = table.columns
    head = "".join(f'<th class="{"text" if c.justify == "left" else ""}">{_e(_plain(c.header))}'
                   "</th>" for c in columns)
    cells = [list(c.cells) for c in columns]
    body = []
    for i in range(table.row_count):
        tds = []
        for col, values in zip(columns, cells):
            text = _plain(values[i]) if i < len(values) else ""
            cls = " ".join(x for x in ("text" if col.justify == "left" else "",
                                       "bound" if text.startswith((">=", "<=")) else "") if x)
            tds.append(f'<td class="{cls}">{_e(text)}</td>' if cls else f"<td>{_e(text)}</td>")
        body.append("<tr>" + "".join(tds) + "</tr>")
    caption = f"<caption>{_e(_plain(table.title))}</caption>" if table.title else ""
    return (f'<table class="data">{caption}<thead><tr>{head}</tr></thead><tbody>'
            + "".join(body) + "</tbody></table>")


def _headline(df: pd.DataFrame, folders: list[tuple[str, pd.DataFrame]] | None = None) -> str:
    """The tables ``btlab show`` prints (of each folder, ``folders``: [(name, rows)]), then
    the summary by group of every row."""
    parts = ["<h2>Headline</h2>"]
    parts.append('<p class="note">The tables <code>btlab show</code> prints'
                 + (" for each folder" if folders else "") + '. Trials stopped '
                 'at a budget are <i>censored</i>: their counters are lower bounds, '
                 'written <code>&gt;=N</code> (shaded).</p>')
    for name, rows in folders or [("", df)]:
        if name:
            parts.append(f"<h3>{_e(name)}</h3>")
        if len(rows):
            parts.extend(_show_tables(rows))
    parts.append("<h3>Summary by group</h3>")
    parts.extend(_summary(df))
    return "\n".join(parts)


def _show_tables(df: pd.DataFrame) -> list[str]:
    """The tables ``btlab show`` prints for ``df``, as HTML (start grids side by side)."""
    parts: list[str] = []
    grids: list[str] = []
    for item in headline_items(df):
            if isinstance(item, Table):
                html_table = rich_table_html(item)
                if _plain(item.title).startswith(("backtracks by start square",
                                                  "solutions by start square")):
                    filled = sum(bool(_plain(v).strip()) for c in item.columns[1:]
                                 for v in c.cells)
                    if filled >= 2:  # a grid with one start square says nothing new
                        grids.append(html_table)
                else:
                    parts.append(html_table)
            else:
                parts.append(f'<p class="note">{_e(_plain(item))}</p>')
    if grids:
        parts.append('<div class="figures">' + "\n".join(grids) + "</div>")
    return parts


def _summary(df: pd.DataFrame) -> list[str]:
    """The summary by group (:func:`btlab.analysis.summary`, bounds marked), as HTML."""
    parts = []
    parts.append('<p class="note">Counts by status, then min / median / mean / max per metric '
                 '(repeats folded: counters from the first repeat, timings the median over '
                 'repeats; failed trials left out of the statistics). <code>&gt;=</code> marks '
                 'a statistic that censored trials make a lower bound.</p>')
    try:
        # count mode: its solutions first
        counted = "solutions" if "mode" in df.columns and (
            df["mode"].astype("object") == "count").any() else ""
        metrics = [m for m in (counted, "nodes", "backtracks", "wall_ns") if m and m in df.columns]
        table = analysis.summary(df, metrics=metrics, marks=True)
        tables = [_table(table["trials"].reset_index(), index=False)]
        for m in metrics:
            title = plots.label(m).replace(" (s)", "")
            tables.append(f"<div><b>{_e(title)}</b>"
                          + _table(table[m].reset_index(), index=False) + "</div>")
        parts.append('<div class="figures">' + "\n".join(tables) + "</div>")
    except ValueError as exc:
        parts.append(skipped("summary", exc))
    return parts


def _generic_plots(df: pd.DataFrame) -> str:
    """Plots of a problem whose spec brings none: time against nodes, by the first varying
    parameter."""
    by = next((c for c in analysis.parameter_columns(df) if df[c].nunique() > 1), None)
    return "<h2>Plots</h2>" + figures([figure(lambda: plots.time_vs_nodes(df, by=by),
                                              "Wall time against nodes, one point per trial.",
                                              "png")])


def _problem_section(df: pd.DataFrame, spec: ProblemSpec | None) -> str:
    if spec is None:
        return ""
    section = spec.hook("report")
    return section(df) if section is not None else _generic_plots(df)


def _errors(df: pd.DataFrame) -> str:
    failed = df[df["status"].astype("object") == "error"]
    if failed.empty:
        return ""
    shown = failed.head(20)
    params = [c for c in analysis.parameter_columns(failed) if failed[c].nunique() > 0]
    table = shown[["trial_id", *params]].copy()
    table["error"] = shown["error"].fillna("").map(lambda m: m.splitlines()[0] if m else "")
    return (f"<h2>Failed trials ({len(failed):,})</h2>"
            + ("" if len(failed) <= 20 else '<p class="note">The first 20.</p>')
            + _table(table, index=False))
