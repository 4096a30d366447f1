"""The sweeps under a results root (``btlab ls``): one row per results folder, from footers.

A *results root* is a folder of results folders, ``results/`` by default: ``btlab run``
writes each sweep to ``results/<name>``. :func:`list_sweeps` reads, of each folder, the
footers of its part files (the ``btlab.*`` metadata: config name, problem, run, write
time; the row count) and two narrow columns (``repeat``, ``status``),
never the counters, tours or provenance, so a root of large sweeps lists in a moment.
Hidden names (``.name.btlab`` work folders, ``.staging``) and names starting with ``_``
are skipped, as Parquet readers skip them; a folder without a Parquet file at its top
level is no sweep.

The counts are of the rows at each folder's top level: the rows a plain reader
(pandas, Polars, DuckDB) reads there.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pandas as pd
import pyarrow.compute as pc

from btlab.errors import ResultsError
from btlab.problems.censoring import status_order
from btlab.store.location import locate
from btlab.store.read import checked_parts, iter_batches

#: The root ``btlab ls`` lists when none is given.
DEFAULT_ROOT = "results"

#: The columns of :func:`list_sweeps` before the status counts.
SWEEP_COLUMNS = ("name", "problem", "config", "trials", "rows", "runs", "last_run")


def _visible(name: str) -> bool:
    return not name.startswith((".", "_"))


def _holds_parquet(folder: Path) -> bool:
    try:
        return any(e.is_file() and e.name.endswith(".parquet") and _visible(e.name)
                   for e in os.scandir(folder))
    except OSError:
        return False


def sweep_folders(root: str | Path) -> list[Path]:
    """The results folders directly under ``root`` (visible folders holding a Parquet file at
    their top level), by name."""
    root = Path(root)
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return []
    return [Path(e.path) for e in entries
            if _visible(e.name) and e.is_dir() and _holds_parquet(Path(e.path))]


def is_results_root(path: str | Path) -> bool:
    """Whether ``path`` is a local folder of results folders rather than one: no Parquet file
    at its top level (a report or notes beside the sweeps may be), and at least one results
    folder in it (``btlab show results``)."""
    if isinstance(path, str) and "://" in path:
        return False
    folder = Path(path)
    return folder.is_dir() and not _holds_parquet(folder) and bool(sweep_folders(folder))


def list_sweeps(root: str | Path = DEFAULT_ROOT) -> pd.DataFrame:
    """The sweeps under a results root, one row each (``btlab ls``).

    Args:
        root: a local folder of results folders (default ``results``).

    Returns:
        A DataFrame, one row per results folder under ``root`` by name, with columns
        ``name`` (the folder's name), ``problem``, ``config`` (the config name
        stored), ``trials`` (rows of the first repeat), ``rows`` (every repeat), ``runs``
        (runs that wrote a part there), ``last_run`` (the newest part's write time, a
        UTC Timestamp), then one count of trials per status (``solved``,
        ``exhausted``, ``node_limit``, ...: :func:`btlab.problems.censoring.status_order`;
        a trial's status is its first repeat's) and ``note`` (None, or why a folder
        could not be read: its counts are then null).

    Raises:
        ResultsError: ``root`` is not a local folder (a URI), or is a results folder itself.
    """
    if "://" in str(root):
        raise ResultsError(f"{root}: btlab ls lists a local folder of results folders; "
                           f"found a URI\n  fix: btlab show {root} (one results folder there)")
    folder = Path(root)
    if not folder.is_dir():
        raise ResultsError(f"{root}: no such folder (expected a folder of results folders, "
                           f"such as results/)\n  fix: give the folder btlab run writes to: "
                           f"btlab ls {DEFAULT_ROOT}")
    if _holds_parquet(folder):
        raise ResultsError(f"{root}: a results folder itself (it holds part files), not a "
                           f"folder of results folders\n  fix: btlab show {root}")
    rows = [_one_sweep(path) for path in sweep_folders(folder)]
    statuses = status_order(s for r in rows for s in r.get("statuses", {}))
    out = []
    for r in rows:
        counts = r.pop("statuses", None)
        for s in statuses:
            r[s] = None if counts is None else int(counts.get(s, 0))
        out.append(r)
    frame = pd.DataFrame(out, columns=[*SWEEP_COLUMNS, *statuses, "note"])
    for col in ("trials", "rows", "runs", *statuses):
        frame[col] = frame[col].astype("Int64")
    frame["last_run"] = pd.to_datetime(frame["last_run"], utc=True, format="ISO8601")
    return frame


def _one_sweep(path: Path) -> dict:
    """One row of :func:`list_sweeps`; a folder btlab cannot read gets its note."""
    row: dict = {"name": path.name}
    try:
        loc, infos = checked_parts(locate(path))
        metas = [i.meta for i in infos]
        newest = max(metas, key=lambda m: m.get("btlab.written_at", ""))
        wanted = [c for c in ("repeat", "status")
                  if any(c in i.schema.names for i in infos)]
        trials, statuses = 0, Counter[str]()
        # batch by batch: memory stays flat however many rows a folder holds
        for _, batch in iter_batches(loc, wanted, infos):
            if "repeat" in wanted:  # one row per trial: its first repeat
                batch = batch.filter(pc.fill_null(pc.equal(batch["repeat"], 0), True))
            trials += batch.num_rows
            if "status" in wanted:
                for c in pc.value_counts(batch["status"]):
                    if c["values"].as_py() is not None:
                        statuses[c["values"].as_py()] += c["counts"].as_py()
    except ResultsError as exc:
        row["note"] = str(exc).splitlines()[0]
        return row
    row.update(problem=newest.get("btlab.problem"), config=newest.get("btlab.config_name"),
               rows=sum(i.rows for i in infos),
               runs=len({m.get("btlab.run_id") for m in metas if m.get("btlab.run_id")}),
               last_run=newest.get("btlab.written_at"), note=None, trials=trials,
               statuses=dict(statuses))
    return row
