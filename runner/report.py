"""``btlab report``: one self-contained HTML file about a results folder.

The file needs nothing else to be read: styles are inline, every plot is an
``<img>`` whose ``src`` is a base64 ``data:`` URI (PNG or SVG), and there is
no script, no web font and no link to fetch. It holds, in order:

1. what was run: the config's name and description, trial and run counts;
2. the headline tables, exactly as ``btlab show`` prints them (captured from
   :mod:`runner.summary` and exported as HTML), then a summary table from
   :func:`runner.analysis.summary` with bounds marked ``>=``;
3. the distribution of search cost (:func:`runner.report_survival.survival_section`:
   survival curves, cactus plot, quantiles, log-rank tests) and the pairwise
   comparisons (:func:`runner.report_pairs.pairs_section`: every pair of groups
   that differ in one of the spec's :attr:`runner.spec.ProblemSpec.comparisons`
   columns, trials paired on the search, totals split into exact and bounded
   parts, reduction heatmaps);
4. the problem's own section (:attr:`runner.spec.ProblemSpec.report`; see
   :mod:`runner.problems.knights_tour.views`, :mod:`runner.problems.n_queens.views`),
   or, for a problem that defines none, wall time against nodes;
5. failed trials, if any (first line of each message);
6. the config as stored in the Parquet metadata, and provenance: runs,
   hosts, btlab / Python / Ray versions, git commits, schema version.
"""

from __future__ import annotations

import io
import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pandas as pd
import yaml
from rich.console import Console
from rich.table import Table
from rich.text import Text

from . import analysis, plots, plugins
from .errors import BtlabError
from .html import escape as _e
from .html import figure, figures, skipped
from .html import table as _table
from .outfile import atomic_write_text, check_target
from .problems import get_problem
from .report_pairs import pairs_section
from .report_survival import survival_section
from .selection import select_rows
from .spec import ProblemSpec
from .store import btlab_version, config_of, is_uri, newest_meta, part_metas
from .summary import print_headline

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
pre { background: #f7f7f7; border: 1px solid #e1e1e1; padding: 0.8em; overflow-x: auto;
      font-size: 0.82em; }
.figures { display: flex; flex-wrap: wrap; gap: 1.2em; align-items: flex-start; }
figure { margin: 0; }
figure img { width: 100%; height: auto; border: 1px solid #e5e5e5; }
figure.heatmap { width: 540px; } figure.wide { width: 760px; } figure.board { width: 420px; }
figcaption { font-size: 0.85em; color: #444; }
dl.kv { display: grid; grid-template-columns: max-content auto; gap: 0.2em 1em; }
dl.kv dt { font-weight: 600; } dl.kv dd { margin: 0; }
"""


def write_report(results: str | Path, out: str | Path = "report.html",
                 all_rows: bool = False) -> Path:
    """Write the HTML report of a results folder to ``out``; returns ``out`` as a Path.

    ``out`` must be a new file or a regular file to replace; it is checked
    before the report is made and written whole or not at all
    (:func:`runner.outfile.atomic_write_text`). ``all_rows``: include rows of
    trials no longer in the config last run (``btlab report --all``).

    Raises:
        ResultsError: ``results`` holds no btlab results.
        OutputPathError: ``out`` is a directory, FIFO, device, socket or symbolic
            link, or cannot be created (exit 2).
        WriteError: the disk is full or an I/O error while writing (exit 3).
    """
    check_target(out, "the report", STDOUT_HINT)
    _outside_results(results, out)
    text = render_report(results, all_rows=all_rows)
    return atomic_write_text(out, text, "the report", STDOUT_HINT)


def _outside_results(results: str | Path, out: str | Path) -> None:
    """Refuse a report path inside the (local) results folder it reports on.

    Every Parquet reader given the folder reads every file in it (btlab, too,
    then refuses the folder): the report would break the folder it describes.

    Raises:
        OutputPathError: ``out`` is inside ``results`` (exit 2).
    """
    import os

    from .errors import OutputPathError
    from .store_read import locate

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


def render_report(results: str | Path, all_rows: bool = False) -> str:
    """The HTML report of a results folder, as one string (see the module docstring).

    It counts the rows ``btlab show`` counts (:func:`runner.selection.select_rows`):
    the trials of the config last run into the folder, or every row with
    ``all_rows``, and says what it left out in the same words.

    Raises:
        ResultsError: ``results`` holds no btlab results.
    """
    folder: str | Path = str(results) if is_uri(results) else Path(results)
    chosen = select_rows(folder, analysis.load(folder), all_rows)
    df = _drop_unused_categories(chosen.rows)
    config = config_of(folder)
    problem = str(df["problem"].iloc[0]) if len(df) else config.get("problem", "?")
    name = config.get("name") or str(folder).rstrip("/").rsplit("/", 1)[-1]
    sections: list[str] = []
    runs = df["run_id"].nunique() if "run_id" in df.columns else 0
    repeats = int(df["repeat"].max()) + 1 if "repeat" in df.columns and len(df) else 1
    lead = (f"{len(df):,} trials of <b>{_e(problem)}</b> from <code>{_e(folder)}</code>, "
            f"{runs} run(s)" + (f", {repeats} repeats per trial" if repeats > 1 else "")
            + f"; report made {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC by btlab "
            f"{_e(btlab_version())}.")
    lead += "".join(f"<br>{_e(note)}" for note in chosen.notes)
    if config.get("description"):
        lead = f"{_e(config['description'])}<br>{lead}"
    try:
        spec: ProblemSpec | None = get_problem(problem)
    except (ValueError, plugins.PluginError) as exc:
        spec = None
        sections.append(skipped(f"problem {problem}", exc))
    if df.empty:  # e.g. only a part that records a config, or every row left out
        sections.append('<h2>Headline</h2><p class="note">No trial to show.</p>')
    else:
        sections.append(_headline(df))
        sections.append(survival_section(df, spec))
        sections.append(pairs_section(df, spec))
        sections.append(_problem_section(df, spec))
        sections.append(_errors(df))
    sections.append(_config_and_provenance(df, folder, config))
    body = "\n".join(s for s in sections if s)
    return (f"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>btlab report: {_e(name)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
            f"<h1>btlab report: {_e(name)}</h1>\n<p class=\"lead\">{lead}</p>\n{body}\n"
            f"</body>\n</html>\n")


def _drop_unused_categories(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with categories no row uses any more dropped (after rows were left out)."""
    cats = [c for c in df.columns if isinstance(df[c].dtype, pd.CategoricalDtype)
            and c != "status"]
    return df.assign(**{c: df[c].cat.remove_unused_categories() for c in cats}) if cats else df


# --------------------------------------------------------------------------- sections


class _Collector(Console):
    """A Console that keeps what is printed (rich Tables, text) instead of drawing it."""

    def __init__(self) -> None:
        super().__init__(file=io.StringIO(), width=150, highlight=False, markup=False)
        self.items: list[Any] = []

    def print(self, *objects: Any, **kwargs: Any) -> None:  # noqa: A003 - Console's name
        self.items.extend(objects)


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


def _headline(df: pd.DataFrame) -> str:
    parts = ["<h2>Headline</h2>"]
    if len(df):
        console = _Collector()
        print_headline(df, console)
        parts.append('<p class="note">The tables <code>btlab show</code> prints. Trials stopped '
                     'at a budget are <i>censored</i>: their counters are lower bounds, '
                     'written <code>&gt;=N</code> (shaded).</p>')
        grids = []
        for item in console.items:
            if isinstance(item, Table):
                html_table = rich_table_html(item)
                if _plain(item.title).startswith("backtracks by start square"):
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
    parts.append("<h3>Summary by group</h3>")
    parts.append('<p class="note">Counts by status, then min / median / mean / max per metric '
                 '(repeats folded: counters from the first repeat, timings the median over '
                 'repeats; failed trials left out of the statistics). <code>&gt;=</code> marks '
                 'a statistic that censored trials make a lower bound.</p>')
    try:
        metrics = [m for m in ("nodes", "backtracks", "wall_ns") if m in df.columns]
        table = analysis.summary(df, metrics=metrics, marks=True)
        tables = [_table(table["trials"].reset_index(), index=False)]
        for m in metrics:
            title = plots.label(m).replace(" (s)", "")
            tables.append(f"<div><b>{_e(title)}</b>"
                          + _table(table[m].reset_index(), index=False) + "</div>")
        parts.append('<div class="figures">' + "\n".join(tables) + "</div>")
    except ValueError as exc:
        parts.append(skipped("summary", exc))
    return "\n".join(parts)


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


def _config_and_provenance(df: pd.DataFrame, folder: str | Path, config: dict) -> str:
    parts = ["<h2>Config</h2>",
             '<p class="note">The expanded config stored in the Parquet metadata '
             '(<code>btlab.config</code>) of the newest part file.</p>',
             f"<pre>{_e(_config_yaml(config))}</pre>" if config
             else '<p class="note">No config in the metadata.</p>']
    overrides = json.loads(newest_meta(folder).get("btlab.overrides", "[]"))
    if overrides:
        parts.append('<p class="note">Run with the command-line overrides (already in the '
                     f'config above): <code>{_e(" ".join(overrides))}</code></p>')
    parts.append("<h2>Provenance</h2>")
    metas = part_metas(folder)
    versions = sorted({m.get("btlab.schema_version", "?") for m in metas})
    info = {"results folder": str(folder), "part files": f"{len(metas):,}",
            "schema version": ", ".join(versions)}
    for col, title in (("btlab_version", "btlab version"), ("git_commit", "git commit"),
                       ("git_dirty", "uncommitted changes"),
                       ("python_version", "Python"), ("ray_version", "Ray"), ("host", "hosts")):
        if col in df.columns:
            counts = df[col].astype("string").fillna("(none)").value_counts()
            info[title] = ", ".join(f"{k} ({v:,} trials)" if len(counts) > 1 else str(k)
                                    for k, v in counts.items())
    if "node_id" in df.columns:
        nodes = df["node_id"].dropna().nunique()
        info["Ray nodes"] = f"{nodes}" if nodes else "none (serial backend)"
    parts.append('<dl class="kv">' + "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>"
                                             for k, v in info.items()) + "</dl>")
    if "run_id" in df.columns:
        agg: dict[str, tuple[str, Any]] = {"trials": ("trial_id", "size")}
        if "started_at" in df.columns:
            agg.update(first_start=("started_at", "min"), last_start=("started_at", "max"))
        for col in ("host", "btlab_version", "git_commit"):
            if col in df.columns:
                agg[col] = (col, lambda s: ", ".join(sorted(map(str, s.dropna().unique()))))
        runs = df.groupby("run_id", observed=True).agg(**agg).reset_index()
        for col in ("first_start", "last_start"):
            if col in runs.columns:
                runs[col] = runs[col].map(lambda t: f"{t:%Y-%m-%d %H:%M:%S} UTC")
        parts.append("<h3>Runs</h3>")
        parts.append(_table(runs, index=False))
    return "\n".join(parts)


_CONFIG_ORDER = ("name", "problem", "description", "fixed", "matrix", "exclude", "include",
                 "budget", "repeats", "seed")


def _config_yaml(config: dict) -> str:
    """The config as YAML, keys in the order a config file lists them."""
    ordered = {k: config[k] for k in _CONFIG_ORDER if k in config}
    ordered.update({k: v for k, v in config.items() if k not in ordered})
    if isinstance(ordered.get("description"), str):
        ordered["description"] = " ".join(ordered["description"].split())
    return yaml.safe_dump(ordered, sort_keys=False, allow_unicode=True, width=100,
                          default_flow_style=None)
