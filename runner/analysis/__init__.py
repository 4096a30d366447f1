"""Analysis of btlab results with pandas: load, summarise, grid by start square, compare.

Import it as ``from btlab import analysis``::

    df = analysis.load("results/warnsdorff-64-starts")          # one row per trial
    analysis.summary(df, by=["heuristic"], metrics=["nodes", "backtracks"])  # >= on bounds
    analysis.start_grid(df, "backtracks", heuristic="warnsdorff")   # 8 x 8 DataFrame
    cmp = analysis.compare(df, baseline={"heuristic": "none"},
                           treatment={"heuristic": "warnsdorff"}, metric="backtracks")
    print(cmp)                                                   # totals, bounds marked

Censored trials. A trial that stopped at a budget (status ``node_limit`` or
``time_limit``) is *censored*: every counter and timing it reports is a lower
bound of what the complete search would have reported (the search only ever
adds placements, checks and time). Nothing here mixes such bounds silently
with exact values: :func:`summary` can mark its statistics with ``>=``, and
:func:`compare` carries a bound column next to every derived number.

Repeats. A config's ``repeats`` runs each trial several times for timing; the
counters must not change between repeats. Wherever values are aggregated,
repeats are folded first (:func:`aggregate_repeats`): counters and status from
the first repeat, timings (``wall_ns``, ``cpu_ns``) as the median over the
repeats.

Modules. This one loads results (:func:`load`, with dtypes), summarises them
(:func:`summary`) and lays a knight's-tour metric out by start square
(:func:`start_grid`). The paired comparison (:func:`compare`,
:class:`Comparison`, :func:`timing_spread`) lives in :mod:`btlab.analysis.pairing`,
the column roles, repeat folding and row selection in
:mod:`btlab.analysis.columns`, value formatting in :mod:`btlab.analysis.formatting`,
the survival analysis in :mod:`btlab.analysis.kaplan_meier` and the share of
trials solved (:func:`solved_share`) in :mod:`btlab.analysis.rates`; their
public names are re-exported here, so
``analysis.compare(...)`` and ``analysis.aggregate_repeats(...)`` keep working.

Modules:

- ``columns``: the rows as a DataFrame: column roles, repeat folding, row selection.
- ``config_order``: the order of a sweep's trials as its config expands them, for every table.
- ``counted_rows``: which rows of a results folder the tables count (show, report, compare).
- ``folder_diff``: two results folders compared trial by trial (``btlab compare``).
- ``formatting``: values as text: counts, bounds, durations, estimates (one set of
  formatters).
- ``kaplan_meier``: survival analysis of search cost: Kaplan-Meier curves, quantiles, log-rank.
- ``pairing``: a metric between two selections, trial by trial (:func:`compare`).
- ``rates``: the share of trials that found a solution within their budget.
- ``search_keys``: what pairs two trials: the parameters of the search, the best row per search.
- ``sweeps``: the sweeps under a results root, one row each from footers (``btlab ls``).
"""

from __future__ import annotations

import glob as _glob
import os
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from btlab.analysis.columns import (
    COUNTERS,
    NOT_PARAMETERS,
    PARAMETERS,
    TIMINGS,
    aggregate_repeats,
    as_list,
    format_seconds,
    format_value,
    parameter_columns,
    require_columns,
    select,
    trial_keys,
)
from btlab.analysis.config_order import in_config_order
from btlab.analysis.kaplan_meier import logrank, quantiles, survival
from btlab.analysis.pairing import BOUNDS, Comparison, compare, timing_spread
from btlab.analysis.rates import solved_share
from btlab.analysis.sweeps import list_sweeps
from btlab.errors import ResultsError
from btlab.experiments.estimators import KNUTH
from btlab.problems import censoring
from btlab.problems.censoring import CENSORED, STATUSES, bound_flags, status_order
from btlab.store.folder import config_of, is_uri, load_rows, part_files
from btlab.store.location import locate

# Public names: this module's, and re-exported those of btlab.analysis.columns,
# btlab.analysis.pairing
# and btlab.problems.censoring that ``from btlab import analysis`` users call.
__all__ = [
    "BOUNDS", "CENSORED", "COUNTERS", "NOT_PARAMETERS", "PARAMETERS", "STATUSES", "TIMINGS",
    "Comparison", "aggregate_repeats", "compare", "format_seconds", "format_value",
    "is_censored", "list_sweeps", "load", "logrank", "parameter_columns", "quantiles", "select",
    "solved_share", "start_grid", "summary", "survival", "timing_spread", "trial_keys",
]

_GLOB_CHARS = set("*?[")


# --------------------------------------------------------------------------- loading


def load(path: str | Path | Sequence[str | Path], *, superseded: bool = False) -> pd.DataFrame:
    """Read one or several results folders into one DataFrame, one row per trial.

    Args:
        path: a results folder (``results/warnsdorff-64-starts``), a
            filesystem URI as ``btlab run --out`` takes (``file:///shared/x``,
            ``s3://bucket/prefix``), a glob (``results/*``: every matching
            folder holding part files; a folder whose name holds ``[`` is
            taken as itself when it exists), or a list of these.
        superseded: also read the rows of trials the config last run no longer
            asks for, which a run keeps beside the folder
            (``<parent>/.<name>.btlab/superseded/``, :mod:`btlab.store.superseded`);
            they come after the folder's own rows (a trial in both places: the
            folder's row). Default: the folder's rows only, what pandas reads there.

    Returns:
        A DataFrame of shape (trials, columns): the Parquet columns (see the
        README), with

        * rows in config order (:mod:`btlab.analysis.config_order`: the order the
          config last run into the folder expands into trials, matrix order
          then start square; rows of trials no longer in it last); several
          folders: folder order first;
        * the text-valued parameter columns (``heuristic``, ``strategy``,
          ``mode``, ``tie_break``, ...) and ``problem`` as categoricals whose
          categories follow the order the config lists them in (so tables and
          plots keep ``none, warnsdorff, static_degree``), then any other
          value alphabetically;
        * every integer column (the counters, ``wall_ns``, ``cpu_ns``,
          ``budget_nodes``, integer parameters such as ``rows``, ``cols``,
          ``start_row``, ``start_col``, ``n``, extra counters, ``seed``,
          ``repeat``, ``pid``) as pandas ``Int64`` and every flag (``closed``,
          ``unique``, ``git_dirty``) as ``boolean``: ``pd.NA`` where a value is
          missing (a failed trial's counters; ``n`` in a knight's-tour row read
          with an N-Queens folder), never float64 NaN;
        * ``status`` as a categorical over :data:`STATUSES`, then ``censored``
          (``boolean``): True when the trial stopped at a budget; rows written
          by schema version 1 (no ``censored`` value) get it from ``status``
          (:func:`btlab.problems.censoring.censored_column`);
        * ``estimator`` (after ``probes``): ``knuth`` in a ``mode: estimate`` row
          written before the column existed (its ``probes`` set, no estimator),
          which ran Knuth's estimator;
        * when several folders were read, a categorical ``source`` column
          first: the folder's name (its path as given when two names clash).

        The same trial id in two folders gives two rows (two sources); within
        a folder a trial id appears once (the newest row). A folder named
        twice (as a path and through a glob, a symlink or a ``file://`` URI)
        is read once, under its first name.

    Raises:
        ResultsError: a folder holds no btlab results, or a glob matches no
            folder that does.
    """
    folders = _resolve_folders(path)
    frames = [in_config_order(load_rows(folder, nullable=True, superseded=superseded), folder)
              for folder in folders]
    hints = _category_hints(folders)
    if len(frames) == 1:
        df = frames[0]
    else:
        names = [str(f).rstrip("/").rsplit("/", 1)[-1] for f in folders]
        if len(set(names)) < len(names):
            names = [str(f) for f in folders]
        for frame, name in zip(frames, names):
            frame.insert(0, "source", name)
        df = pd.concat(frames, ignore_index=True, sort=False)
        df["source"] = pd.Categorical(df["source"], categories=list(dict.fromkeys(names)))
    return _with_dtypes(df, hints)


def _resolve_folders(path: str | Path | Sequence[str | Path]) -> list[str | Path]:
    items = [path] if isinstance(path, (str, Path)) else list(path)
    if not items:
        raise ResultsError("no results folder given\n  fix: pass a folder such as "
                           "results/warnsdorff-64-starts, a list of folders or a glob")
    folders: list[str | Path] = []
    for item in items:
        text = str(item)
        if is_uri(text):  # s3://bucket/prefix, file:///shared/x: read as btlab run wrote it
            folders.append(text)
        elif _GLOB_CHARS & set(text) and not Path(text).is_dir():  # res[1] may be a folder
            matches = [Path(m) for m in sorted(_glob.glob(text)) if part_files(Path(m))]
            if not matches:
                raise ResultsError(f"{text}: the glob matches no folder holding btlab results "
                                   "(part-*.parquet files)\n  fix: check the pattern, e.g. "
                                   "results/*")
            folders += matches
        else:
            folders.append(Path(item))
    unique: dict[str, str | Path] = {}  # one folder named twice (a path, a glob, a URI) once
    for folder in folders:
        unique.setdefault(_identity(folder), folder)
    return list(unique.values())


def _identity(folder: str | Path) -> str:
    """What makes two names of a results folder the same folder: the real path of a local
    one (a path, a symlink, a ``file://`` URI), else the URI without a trailing ``/``."""
    local = locate(folder).local
    return os.path.realpath(local) if local is not None else str(folder).rstrip("/")


def _category_hints(folders: Iterable[str | Path]) -> dict[str, list[Any]]:
    """Value order per config key, from the configs' ``fixed``, ``matrix`` and ``include``."""
    hints: dict[str, list[Any]] = {}
    for folder in folders:
        cfg = config_of(folder)
        sources = [cfg.get("fixed") or {}, cfg.get("matrix") or {}, *(cfg.get("include") or [])]
        for section in sources:
            for key, values in section.items():
                values = values if isinstance(values, list) else [values]
                known = hints.setdefault(key, [])
                known += [v for v in values if isinstance(v, str) and v not in known]
    return hints


def _with_dtypes(df: pd.DataFrame, hints: Mapping[str, list[Any]]) -> pd.DataFrame:
    df = df.copy()
    for col in parameter_columns(df) + ["problem"]:
        if col not in df.columns:
            continue
        s = df[col]
        if pd.api.types.is_numeric_dtype(s) or pd.api.types.is_bool_dtype(s):
            continue
        present = [v for v in pd.unique(s.dropna())]
        order = [v for v in hints.get(col, []) if v in set(present)]
        order += sorted((v for v in present if v not in set(order)), key=str)
        df[col] = pd.Categorical(s, categories=order)
    if "probes" in df.columns:  # a part written before the estimator column ran knuth
        values = (df["estimator"].astype("object") if "estimator" in df.columns
                  else pd.Series([None] * len(df), index=df.index, dtype="object"))
        old = df["probes"].notna() & values.isna()
        if old.any() or "estimator" not in df.columns:
            values = values.copy()
            values.loc[old] = KNUTH
            df = df.drop(columns=["estimator"], errors="ignore")
            df.insert(df.columns.get_loc("probes") + 1, "estimator", values)
    if "status" in df.columns:
        censored = censoring.censored_column(df)
        df["status"] = pd.Categorical(df["status"],
                                      categories=status_order(df["status"].dropna()))
        df = df.drop(columns=["censored"], errors="ignore")
        df.insert(df.columns.get_loc("status") + 1, "censored", censored)
    return df


def is_censored(df: pd.DataFrame) -> pd.Series:
    """Boolean Series: the trial stopped at a budget (its values are lower bounds).

    The rules are :func:`btlab.problems.censoring.is_censored`'s, applied to ``df["status"]``.
    """
    return censoring.is_censored(df["status"])



# --------------------------------------------------------------------------- summary


def summary(df: pd.DataFrame, by: Sequence[str] | str | None = None,
            metrics: Sequence[str] | str | None = None, *, marks: bool = True) -> pd.DataFrame:
    """Trial counts by status and min / median / mean / max of metrics, per group.

    Repeats are folded first (:func:`aggregate_repeats`: counters from the
    first repeat, timings as the median over repeats). Trials with status
    ``error`` count under ``("trials", "error")`` and are left out of the
    metric statistics.

    Args:
        df: rows as :func:`load` returns them.
        by: the grouping columns. Default: the parameter columns that vary,
            apart from the start square, then ``source`` if it varies within
            those groups; no varying column gives one group, ``all``.
        metrics: metric columns. Default: ``nodes``, ``backtracks``, ``wall_ns``.
        marks: True (default) for the table as text, counters with thousands
            separators, timings in s / ms / us, and every statistic that
            censored trials make a lower bound written ``>=N`` (mean and max
            when the group has a censored trial; min and median when a
            censored value could still move them), so that no bound reads as
            an exact value; False for plain numbers (float64), bounds unmarked.

    Returns:
        A DataFrame with one row per group (index: ``by``), groups in the order
        their first row comes in ``df`` (config order for :func:`load`'s rows, as
        ``btlab show`` and ``btlab report`` list them), and two-level
        columns: ``("trials", s)`` for s in ``all`` and each status, then
        ``(metric, stat)`` for stat in ``min, median, mean, max``. Shape
        (groups, 1 + len(STATUSES) + 4 * len(metrics)).

    Raises:
        ValueError: a ``by`` or metric column is not in ``df``.
    """
    t = aggregate_repeats(df)
    metrics = as_list(metrics) or [m for m in ("nodes", "backtracks", "wall_ns")
                                     if m in t.columns]
    if by is None:
        by = [c for c in parameter_columns(t) if c not in ("start_row", "start_col")
              and t[c].nunique(dropna=False) > 1]
        if "source" in t.columns and t["source"].nunique() > 1 and (
                not by or t.groupby(by, observed=True)["source"].nunique().max() > 1):
            by.append("source")  # unless the other groups already tell the sources apart
    by = as_list(by)
    require_columns(t, [*by, *metrics, "status"], "summary")
    t = t.copy()
    if not by:
        t["group"] = "all"
        by = ["group"]
    status = t["status"].astype("object")
    censored = is_censored(t)
    ok = status != "error"
    values = t[metrics].astype("float64").where(ok, np.nan)
    # groups numbered in the order their first row comes (config order for load's rows,
    # as btlab show lists them); by number, so that a key holding <NA> (a parameter one
    # problem lacks, with several folders read) is a group like any other
    gid = pd.Series(t.groupby(by, observed=True, dropna=False, sort=False).ngroup().to_numpy(),
                    index=t.index)
    counts = pd.crosstab(gid, pd.Categorical(status, categories=_status_order(status)),
                         dropna=False)
    counts.insert(0, "all", counts.sum(axis=1))
    counts.columns = pd.MultiIndex.from_product([["trials"], list(counts.columns)])
    stats = values.groupby(gid, sort=True).agg(["min", "median", "mean", "max"])
    out = counts.join(stats, how="left")
    index = _first_seen(t, by, gid)
    if not marks:
        out.index = index
        return out
    text = out.astype(object)
    work = values.copy()
    work["_censored"] = (censored & ok).to_numpy()
    for g, sub in work.groupby(gid, sort=True):
        for m in metrics:
            flags = bound_flags(sub[m], sub["_censored"])
            for stat in ("min", "median", "mean", "max"):
                text.loc[g, (m, stat)] = format_value(m, out.loc[g, (m, stat)], flags[stat])
    for col in counts.columns:
        text[col] = out[col].map(lambda x: f"{int(x):,}")
    text.index = index
    return text


def _first_seen(df: pd.DataFrame, by: list[str], gid: pd.Series) -> pd.Index:
    """The index of :func:`summary`: the key of group 0, 1, ... of ``gid`` (groups
    numbered in the order their first row comes in ``df``), named ``by``."""
    firsts = df.loc[gid.drop_duplicates().sort_values().index, by]
    if len(by) == 1:
        return pd.Index(firsts[by[0]], name=by[0])
    return pd.MultiIndex.from_frame(firsts)


def _status_order(status: pd.Series) -> list[str]:
    return status_order(status.dropna())



# --------------------------------------------------------------------------- start grid


def start_grid(df: pd.DataFrame, metric: str, **filters: Any) -> pd.DataFrame:
    """A knight's-tour metric laid out over the board by start square.

    Args:
        df: rows as :func:`load` returns them, or the ``trials`` of a
            :class:`Comparison` (any frame with ``rows``, ``cols``,
            ``start_row``, ``start_col``).
        metric: the column to lay out: a metric (``backtracks``), a
            comparison column (``reduction``, ``ratio_bound``) or ``status``.
        **filters: column=value (or column=[values]) keeping the trials of
            one board and one value of every other varying parameter, e.g.
            ``heuristic="warnsdorff"``.

    Returns:
        A DataFrame of shape (rows, cols): index ``row`` 0..rows-1 (row 0 at
        the top), columns ``col`` 0..cols-1, the value of ``metric`` for the
        trial that started on that square (repeats folded: median timing);
        NaN where no trial started there or the trial failed.

    Raises:
        ValueError: ``metric`` or a filter column is not in ``df``; no trial
            matches the filters; the filters leave several boards; or they
            leave several trials per start square (the message names the
            columns that still vary, to add to the filters).
    """
    require_columns(df, ["rows", "cols", "start_row", "start_col", metric], "start_grid")
    sub = select(df, filters)
    boards = sub[["rows", "cols"]].drop_duplicates()
    if len(boards) > 1:
        names = ", ".join(f"{r} x {c}" for r, c in boards.itertuples(index=False))
        raise ValueError(f"start_grid: the filters {filters or {}} leave {len(boards)} boards "
                         f"({names}); one grid shows one board\n  fix: add rows=..., cols=... "
                         "to the filters")
    sub = aggregate_repeats(sub)
    dup = sub.duplicated(["start_row", "start_col"], keep=False)
    if dup.any():
        first = sub.loc[dup].iloc[0]
        square = (int(first["start_row"]), int(first["start_col"]))
        n_dup = int(((sub["start_row"] == square[0]) & (sub["start_col"] == square[1])).sum())
        candidates = [c for c in [*trial_keys(sub), *sub.columns] if c not in
                      ("rows", "cols", "start_row", "start_col")]
        vary = [c for c in dict.fromkeys(candidates) if c in sub.columns
                and c not in NOT_PARAMETERS - {"source", "budget_nodes", "budget_seconds",
                                               "budget_backtracks", "restarts", "probes",
                                               "estimator", "seed"}
                and sub.loc[dup, c].astype("object").nunique(dropna=False) > 1]
        hint = ", ".join(f"{c}={sub.loc[dup, c].iloc[0]!r}" for c in vary[:3])
        raise ValueError(f"start_grid: the filters {filters or {}} leave {n_dup} trials for start "
                         f"square {square} (and other squares): they differ in "
                         f"{', '.join(vary) or 'no parameter column'}\n  fix: narrow the "
                         f"filters, e.g. {hint or 'pick one source'}")
    rows, cols = (int(v) for v in boards.iloc[0])
    values = sub[metric]
    if isinstance(values.dtype, pd.CategoricalDtype):
        values = values.astype("object")
    elif pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
        if "status" in sub.columns:
            values = values.where(sub["status"].astype("object") != "error")
        values = pd.Series(values.to_numpy(dtype="float64", na_value=np.nan), index=sub.index)
    grid = (pd.DataFrame({"row": sub["start_row"].astype(int), "col": sub["start_col"].astype(int),
                          "value": values})
            .pivot(index="row", columns="col", values="value")
            .reindex(index=range(rows), columns=range(cols)))
    grid.index.name, grid.columns.name = "row", "col"
    return grid

