"""The results folders of one ``btlab report``: their rows, what was run, config and provenance.

``btlab report A B -o out.html`` reads several folders into one DataFrame
(:func:`btlab.analysis.load`, with a categorical ``source`` column) after
choosing each folder's rows as ``btlab show`` does
(:func:`btlab.analysis.counted_rows.select_rows`). Folders of one problem only: a report
compares trials of one problem.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import pandas as pd
import yaml

from btlab import analysis
from btlab.analysis.counted_rows import select_rows
from btlab.errors import ResultsError
from btlab.store.folder import config_of, newest_meta, part_metas
from btlab.views.report.html import escape as _e
from btlab.views.report.html import table as _table


@dataclass
class Folder:
    """One results folder of a report: where it is, its name in the report (the ``source``
    value when there are several), its stored config, its chosen rows and notes on them."""

    path: str | Path
    name: str
    config: dict[str, Any]
    rows: pd.DataFrame
    notes: list[str] = field(default_factory=list)


def as_folders(results: str | Path | Sequence[str | Path]) -> list[str | Path]:
    """The folders a report is made of, each once, as :func:`btlab.analysis.load` reads
    them: a URI stays a str, a path becomes a Path, a glob (``"results/*"``) the folders it
    matches that hold results.

    Raises:
        ResultsError: no folder given, or a glob that matches no results folder.
    """
    items = [results] if isinstance(results, (str, Path)) else list(results)
    if not items:
        raise ResultsError("no results folder given\n  fix: btlab report RESULTS_DIR "
                           "[RESULTS_DIR ...] -o report.html")
    return analysis._resolve_folders(items)


def load_folders(folders: list[str | Path], all_rows: bool = False
                 ) -> tuple[pd.DataFrame, list[Folder]]:
    """The rows of the folders (the trials ``btlab show`` counts in each), and the folders.

    Returns:
        (rows, folders): one DataFrame as :func:`btlab.analysis.load` returns it
        (several folders: a categorical ``source`` column first, folder order
        kept), unused categories dropped; one :class:`Folder` per folder.

    Raises:
        ResultsError: a folder holds no btlab results (named), or the folders
            hold different problems (exit 2).
    """
    df = analysis.load(folders[0] if len(folders) == 1 else folders, superseded=all_rows)
    names = (list(df["source"].cat.categories) if "source" in df.columns
             else [str(folders[0]).rstrip("/").rsplit("/", 1)[-1]])
    out: list[Folder] = []
    for path, name in zip(folders, names):
        rows = df[df["source"] == name] if "source" in df.columns else df
        chosen = select_rows(path, rows, all_rows)
        out.append(Folder(path, name, config_of(path), chosen.rows, list(chosen.notes)))
    _one_problem(out)
    rows = pd.concat([f.rows for f in out]) if len(out) > 1 else out[0].rows
    return _drop_unused_categories(rows), out


def _one_problem(folders: list[Folder]) -> None:
    problems = {f.name: _problem(f) for f in folders}
    if len(set(problems.values())) > 1:
        listed = ", ".join(f"{name}: {p}" for name, p in problems.items())
        raise ResultsError(
            "the results folders hold different problems\n  expected: folders of one problem "
            "(a report compares the trials of one problem)\n"
            f"  found:    {listed}\n  fix:      one report per problem, e.g. "
            + "; ".join(f"btlab report {f.path} -o {f.name}.html" for f in folders))


def _problem(folder: Folder) -> str:
    if len(folder.rows) and "problem" in folder.rows.columns:
        return str(folder.rows["problem"].iloc[0])
    return str(folder.config.get("problem", "?"))


def _drop_unused_categories(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with categories no row uses any more dropped (after rows were left out)."""
    cats = [c for c in df.columns if isinstance(df[c].dtype, pd.CategoricalDtype)
            and c not in ("status", "source")]
    return df.assign(**{c: df[c].cat.remove_unused_categories() for c in cats}) if cats else df


def what_was_run(folders: list[Folder]) -> str:
    """The "what was run" list of a report of several folders: per folder its name, path,
    config name and description, trials and runs, and notes on the rows left out (HTML)."""
    items = []
    for f in folders:
        runs = f.rows["run_id"].nunique() if "run_id" in f.rows.columns else 0
        text = (f"<b>{_e(f.name)}</b> (<code>{_e(f.path)}</code>): config "
                f"<b>{_e(f.config.get('name', '?'))}</b>, {len(f.rows):,} trials, {runs} run(s)")
        if f.config.get("description"):
            text += f"<br>{_e(' '.join(str(f.config['description']).split()))}"
        text += "".join(f"<br>{_e(note)}" for note in f.notes)
        items.append(f"<li>{text}</li>")
    return ("<h2>What was run</h2><p class=\"note\">One report of several results folders: "
            "their rows are read together, the column <code>source</code> naming each row's "
            "folder.</p><ul>" + "".join(items) + "</ul>")


def config_and_provenance(folders: list[Folder]) -> str:
    """The stored config and the provenance of each folder (HTML)."""
    several = len(folders) > 1
    parts = []
    for f in folders:
        parts.append(_config_and_provenance(f.rows, f.path, f.config,
                                            f" of {f.name}" if several else ""))
    return "\n".join(parts)


def _config_and_provenance(df: pd.DataFrame, folder: str | Path, config: dict,
                           of: str) -> str:
    parts = [f"<h2>Config{_e(of)}</h2>",
             '<p class="note">The expanded config stored in the Parquet metadata '
             '(<code>btlab.config</code>) of the newest part file.</p>',
             f"<pre>{_e(_config_yaml(config))}</pre>" if config
             else '<p class="note">No config in the metadata.</p>']
    overrides = json.loads(newest_meta(folder).get("btlab.overrides", "[]"))
    if overrides:
        parts.append('<p class="note">Run with the command-line overrides (already in the '
                     f'config above): <code>{_e(" ".join(overrides))}</code></p>')
    parts.append(f"<h2>Provenance{_e(of)}</h2>")
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
