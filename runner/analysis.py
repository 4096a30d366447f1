"""Analysis of btlab results with pandas: load, summarise, grid by start square, compare.

Import it as ``from runner import analysis``::

    df = analysis.load("results/warnsdorff-64-starts")          # one row per trial
    analysis.summary(df, by=["heuristic"], metrics=["nodes", "backtracks"])
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
"""

from __future__ import annotations

import glob as _glob
import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from . import plugins
from .censoring import CENSORED, STATUSES, bound_flags
from .errors import ResultsError
from .problems import PROBLEMS, get_problem
from .store import config_of, load_rows, part_files

#: Counters of the metrics contract (``docs/metrics.md``; identical across repeats of a trial).
COUNTERS = ("nodes", "backtracks", "dead_ends", "checks", "solutions", "max_depth")
#: Timings in nanoseconds (they vary across repeats; folded by the median).
TIMINGS = ("wall_ns", "cpu_ns")
#: Parameter columns of each known problem, in the order of the Parquet schema.
PARAMETERS: dict[str, tuple[str, ...]] = {
    name: tuple(problem.columns.names) for name, problem in PROBLEMS.items()}
#: Columns that are never parameters (ids, budget, metrics, solution, provenance).
NOT_PARAMETERS = frozenset({
    "trial_id", "run_id", "problem", "source", "budget_nodes", "budget_seconds", "seed",
    "repeat", "repeats", "status", *COUNTERS, *TIMINGS, "solution", "error",
    *{c for problem in PROBLEMS.values() for c in problem.extra_columns}, "compile_ns",
    "candidates", "btlab_version", "git_commit", "python_version", "ray_version", "host",
    "node_id", "pid", "started_at", "plugins",
})
#: Columns besides the parameters that tell two trials apart (not the repeat).
_TRIAL_KEYS = ("source", "problem", "budget_nodes", "budget_seconds", "seed")
#: Values of the bound columns of :func:`compare`.
BOUNDS = ("exact", ">=", "<=", "unknown")
_GLOB_CHARS = set("*?[")


# --------------------------------------------------------------------------- loading


def load(path: str | Path | Sequence[str | Path]) -> pd.DataFrame:
    """Read one or several results folders into one DataFrame, one row per trial.

    Args:
        path: a results folder (``results/warnsdorff-64-starts``), a glob
            (``results/*``: every matching folder holding part files), or a
            list of folders and globs.

    Returns:
        A DataFrame of shape (trials, columns): the Parquet columns (see the
        README), with

        * the text-valued parameter columns (``heuristic``, ``strategy``,
          ``mode``, ``tie_break``, ...) and ``problem`` as categoricals whose
          categories follow the order the config lists them in (so tables and
          plots keep ``none, warnsdorff, static_degree``), then any other
          value alphabetically; integer parameters (``rows``, ``cols``,
          ``start_row``, ``start_col``, ``n``) and flags (``closed``,
          ``unique``) keep their integer and boolean dtypes so they can be
          compared, sorted and put on an axis;
        * ``status`` as a categorical over :data:`STATUSES`;
        * when several folders were read, a categorical ``source`` column
          first: the folder's name (its path as given when two names clash).

        The same trial id in two folders gives two rows (two sources); within
        a folder a trial id appears once (the newest row).

    Raises:
        ResultsError: a folder holds no btlab results, or a glob matches no
            folder that does.
    """
    folders = _resolve_folders(path)
    frames = [load_rows(folder) for folder in folders]
    hints = _category_hints(folders)
    if len(frames) == 1:
        df = frames[0]
    else:
        names = [f.name for f in folders]
        if len(set(names)) < len(names):
            names = [str(f) for f in folders]
        for frame, name in zip(frames, names):
            frame.insert(0, "source", name)
        df = pd.concat(frames, ignore_index=True, sort=False)
        df["source"] = pd.Categorical(df["source"], categories=list(dict.fromkeys(names)))
    return _with_dtypes(df, hints)


def _resolve_folders(path: str | Path | Sequence[str | Path]) -> list[Path]:
    items = [path] if isinstance(path, (str, Path)) else list(path)
    if not items:
        raise ResultsError("no results folder given\n  fix: pass a folder such as "
                           "results/warnsdorff-64-starts, a list of folders or a glob")
    folders: list[Path] = []
    for item in items:
        text = str(item)
        if _GLOB_CHARS & set(text):
            matches = [Path(m) for m in sorted(_glob.glob(text)) if part_files(Path(m))]
            if not matches:
                raise ResultsError(f"{text}: the glob matches no folder holding btlab results "
                                   "(part-*.parquet files)\n  fix: check the pattern, e.g. "
                                   "results/*")
            folders += matches
        else:
            folders.append(Path(item))
    return list(dict.fromkeys(folders))


def _category_hints(folders: Iterable[Path]) -> dict[str, list[Any]]:
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
    if "status" in df.columns:
        extra = sorted(set(df["status"].dropna()) - set(STATUSES))
        df["status"] = pd.Categorical(df["status"], categories=[*STATUSES, *extra])
    return df


def parameter_columns(df: pd.DataFrame) -> list[str]:
    """The parameter columns of ``df`` (one per trial parameter), in schema order.

    Known problems (:data:`PARAMETERS`) use their list; for another problem,
    every column that is not an id, budget, metric, solution or provenance
    column (:data:`NOT_PARAMETERS`) counts as a parameter.
    """
    problems = (list(pd.unique(df["problem"].dropna().astype(str)))
                if "problem" in df.columns else [])
    known = {p: _parameters_of(p) for p in problems}
    if problems and all(v is not None for v in known.values()):
        names = [c for p in problems for c in known[p] or ()]
    else:
        names = [c for c in df.columns if c not in NOT_PARAMETERS]
        names += [c for p in PARAMETERS.values() for c in p]
    return [c for c in dict.fromkeys(names) if c in df.columns]


def _parameters_of(problem: str) -> tuple[str, ...] | None:
    """A problem's parameter columns: built-in, or a plug-in's that imports here; else None."""
    if problem in PARAMETERS:
        return PARAMETERS[problem]
    if not plugins.is_ref(problem):
        return None
    try:
        return tuple(get_problem(problem).columns.names)
    except plugins.PluginError:
        return None


def is_censored(df: pd.DataFrame) -> pd.Series:
    """Boolean Series: the trial stopped at a budget (its values are lower bounds)."""
    return df["status"].astype("object").isin(CENSORED)


def trial_keys(df: pd.DataFrame) -> list[str]:
    """Columns that identify a trial up to its repeat: parameters, source, budget, seed."""
    return parameter_columns(df) + [c for c in _TRIAL_KEYS if c in df.columns]


def aggregate_repeats(df: pd.DataFrame) -> pd.DataFrame:
    """Fold the repeats of each trial into one row.

    Returns:
        A DataFrame with one row per trial (rows of ``df`` grouped by
        :func:`trial_keys`): every column from the first repeat, except the
        timings (``wall_ns``, ``cpu_ns``, float64 ns), which are the median
        over the repeats, and a new ``repeats`` column (how many were folded).
        ``df`` without a ``repeat`` column is returned unchanged.

    Warns:
        RuntimeWarning: a trial's counters or status differ between its
            repeats (they must not; the first repeat is kept).
    """
    if "repeat" not in df.columns or df.empty:
        return df
    keys = trial_keys(df)
    labels = df.index
    df = df.reset_index(drop=True).sort_values("repeat", kind="stable")  # positions as labels
    groups = df.groupby(keys, observed=True, dropna=False, sort=False)
    checked = [c for c in ("status", *COUNTERS) if c in df.columns]
    if checked and len(df) > groups.ngroups:
        differs = groups[checked].nunique(dropna=False).gt(1)
        if differs.any(axis=None):
            bad = differs.any(axis=1)
            cols = list(differs.columns[differs.any(axis=0)])
            warnings.warn(f"{int(bad.sum())} trial(s) report different {', '.join(cols)} "
                          "across repeats (the metrics contract says they must not); "
                          "keeping the first repeat's values", RuntimeWarning, stacklevel=2)
    out = groups.head(1).copy()
    timings = [c for c in TIMINGS if c in df.columns]
    if timings:
        med = groups[timings].transform("median")
        out[timings] = med.loc[out.index].astype("float64")
    out["repeats"] = groups["repeat"].transform("size").loc[out.index].astype("int64")
    out = out.sort_index()
    out.index = labels[out.index.to_numpy()]
    return out


# --------------------------------------------------------------------------- summary


def summary(df: pd.DataFrame, by: Sequence[str] | str | None = None,
            metrics: Sequence[str] | str | None = None, *, marks: bool = False) -> pd.DataFrame:
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
        marks: False (default) for numbers; True for the same table as text,
            counters with thousands separators, timings in s / ms / us, and
            every statistic that censored trials make a lower bound written
            ``>=N`` (mean and max when the group has a censored trial; min and
            median when a censored value could still move them).

    Returns:
        A DataFrame with one row per group (index: ``by``) and two-level
        columns: ``("trials", s)`` for s in ``all`` and each status, then
        ``(metric, stat)`` for stat in ``min, median, mean, max``. Shape
        (groups, 1 + len(STATUSES) + 4 * len(metrics)).

    Raises:
        ValueError: a ``by`` or metric column is not in ``df``.
    """
    t = aggregate_repeats(df)
    metrics = _as_list(metrics) or [m for m in ("nodes", "backtracks", "wall_ns")
                                     if m in t.columns]
    if by is None:
        by = [c for c in parameter_columns(t) if c not in ("start_row", "start_col")
              and t[c].nunique(dropna=False) > 1]
        if "source" in t.columns and t["source"].nunique() > 1 and (
                not by or t.groupby(by, observed=True)["source"].nunique().max() > 1):
            by.append("source")  # unless the other groups already tell the sources apart
    by = _as_list(by)
    _require_columns(t, [*by, *metrics, "status"], "summary")
    t = t.copy()
    if not by:
        t["group"] = "all"
        by = ["group"]
    status = t["status"].astype("object")
    censored = status.isin(CENSORED)
    ok = status != "error"
    values = t[metrics].astype("float64").where(ok, np.nan)
    keys = [t[c] for c in by]
    grouped = values.groupby(keys, observed=True, dropna=False, sort=True)
    counts = pd.crosstab(keys, pd.Categorical(status, categories=_status_order(status)),
                         dropna=False)
    counts = counts.loc[counts.sum(axis=1) > 0]
    counts.insert(0, "all", counts.sum(axis=1))
    counts.columns = pd.MultiIndex.from_product([["trials"], list(counts.columns)])
    stats = grouped.agg(["min", "median", "mean", "max"])
    out = counts.join(stats, how="left")
    out.index.names = by
    if not marks:
        return out
    text = out.astype(object)
    work = t[by].copy()
    work[metrics] = values
    work["_censored"] = (censored & ok).to_numpy()
    for key, sub in work.groupby(by[0] if len(by) == 1 else by, observed=True, dropna=False,
                                 sort=True):
        for m in metrics:
            flags = bound_flags(sub[m], sub["_censored"])
            bound = {stat: flags[stat] for stat in ("min", "median", "mean", "max")}
            for stat, is_bound in bound.items():
                text.loc[key, (m, stat)] = format_value(m, out.loc[key, (m, stat)], is_bound)
    for col in counts.columns:
        text[col] = out[col].map(lambda x: f"{int(x):,}")
    return text


def _status_order(status: pd.Series) -> list[str]:
    return [*STATUSES, *sorted(set(status.dropna()) - set(STATUSES))]


def format_value(metric: str, value: Any, bound: bool | str = False) -> str:
    """Text of one value: counters ``1,234``, timings ``12.3 ms``, ratios 3 digits.

    ``bound`` is False / ``"exact"`` (no mark), True / ``">="``, ``"<="`` or
    ``"unknown"`` (written ``unknown``: no value is shown).
    """
    if bound == "unknown":
        return "unknown"
    mark = ">=" if bound is True else ("" if bound in (False, "exact", None) else str(bound))
    if value is None or (isinstance(value, float) and math.isnan(value)) or pd.isna(value):
        return "-"
    if metric.endswith("_ns"):
        return mark + format_seconds(float(value) / 1e9)
    v = float(value)
    if not math.isfinite(v):
        return mark + str(v)
    if metric == "ratio" or (not v.is_integer() and abs(v) < 1000):
        return mark + f"{v:.3g}"
    return mark + f"{v:,.0f}"


def format_seconds(seconds: float) -> str:
    """``1.23 s``, ``45.6 ms``, ``789 us`` or ``12 ns`` (3 significant digits)."""
    s = abs(seconds)
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if s >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds * 1e9:.3g} ns"


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
    _require_columns(df, ["rows", "cols", "start_row", "start_col", metric], "start_grid")
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
                and c not in NOT_PARAMETERS - {"source", "budget_nodes", "budget_seconds", "seed"}
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
    elif "status" in sub.columns and pd.api.types.is_numeric_dtype(values):
        values = values.where(sub["status"].astype("object") != "error")
    grid = (pd.DataFrame({"row": sub["start_row"].astype(int), "col": sub["start_col"].astype(int),
                          "value": values})
            .pivot(index="row", columns="col", values="value")
            .reindex(index=range(rows), columns=range(cols)))
    grid.index.name, grid.columns.name = "row", "col"
    return grid


def select(df: pd.DataFrame, filters: Mapping[str, Any]) -> pd.DataFrame:
    """The rows of ``df`` matching every ``column=value`` (or ``column=[values]``) filter.

    Raises:
        ValueError: a filter names a column not in ``df``, or no row matches
            (the message lists the values present).
    """
    mask = pd.Series(True, index=df.index)
    for col, want in filters.items():
        if col not in df.columns:
            raise ValueError(f"filter {col}={want!r}: no column {col!r}; columns: "
                             f"{', '.join(map(str, df.columns))}")
        wants = list(want) if isinstance(want, (list, tuple, set, frozenset)) else [want]
        mask &= df[col].astype("object").isin(wants)
        if not mask.any():
            present = ", ".join(repr(v) for v in pd.unique(df[col].astype("object").dropna()))
            raise ValueError(f"filter {col}={want!r} matches no trial"
                             + (f" (with {dict(list(filters.items()))})" if len(filters) > 1
                                else "") + f"; {col} takes the values {present}")
    return df.loc[mask]


# --------------------------------------------------------------------------- compare


@dataclass(frozen=True, eq=False)
class Comparison:
    """The result of :func:`compare`.

    Attributes:
        trials: one row per matched trial (see :func:`compare`).
        totals: one row per kind of match plus ``all`` (see :func:`compare`).
        metric: the compared metric.
        baseline, treatment: the selections compared.
        on: the matching columns.
        unmatched: trials of each side with no partner on the other side
            (``{"baseline": n, "treatment": m}``); they are in neither table.
    """

    trials: pd.DataFrame
    totals: pd.DataFrame
    metric: str
    baseline: dict[str, Any]
    treatment: dict[str, Any]
    on: list[str]
    unmatched: dict[str, int] = field(default_factory=dict)

    def formatted(self, which: str = "totals") -> pd.DataFrame:
        """``totals`` or ``trials`` as text, bounds written ``>=N`` / ``<=N`` / ``unknown``."""
        frame = self.totals if which == "totals" else self.trials
        out = frame.copy().astype(object)
        for col in ("baseline", "treatment"):
            bound = frame[f"{col}_bound"] if f"{col}_bound" in frame.columns else \
                np.where(frame[f"{col}_status"].astype("object").isin(CENSORED), ">=", "exact")
            out[col] = [format_value(self.metric, v, b) for v, b in zip(frame[col], bound)]
        out["ratio"] = [format_value("ratio", v, b)
                        for v, b in zip(frame["ratio"], frame["ratio_bound"])]
        out["reduction"] = [format_value(self.metric, v, b)
                            for v, b in zip(frame["reduction"], frame["reduction_bound"])]
        if which == "totals":
            out["trials"] = frame["trials"].map(lambda x: f"{int(x):,}")
        return out.drop(columns=[c for c in out.columns if c.endswith("_bound")])

    def __str__(self) -> str:
        varying = [c for c in self.on if self.trials[c].nunique(dropna=False) > 1]
        fixed = len(self.on) - len(varying)
        matched = ", ".join(varying) or "(no varying column)"
        if fixed:
            matched += f" (+{fixed} constant column{'s' if fixed > 1 else ''})"
        head = (f"{self.metric}: treatment {_sel(self.treatment)} against baseline "
                f"{_sel(self.baseline)}, matched on {matched}; "
                "ratio = treatment / baseline, reduction = baseline - treatment")
        lost = {k: v for k, v in self.unmatched.items() if v}
        tail = ("\nunmatched trials (left out): " + ", ".join(f"{k} {v}" for k, v in lost.items())
                if lost else "")
        return head + "\n" + self.formatted("totals").to_string() + tail

    def _repr_html_(self) -> str:  # pragma: no cover - notebooks
        return f"<p>{_html_escape(str(self).splitlines()[0])}</p>" + \
            self.formatted("totals").to_html()


def _sel(selection: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in selection.items())


def _html_escape(text: str) -> str:
    import html
    return html.escape(text)


def compare(df: pd.DataFrame, baseline: Mapping[str, Any] | None = None,
            treatment: Mapping[str, Any] | None = None, metric: str = "backtracks",
            on: Sequence[str] | None = None) -> Comparison:
    """Compare a metric between two selections of trials, matched trial by trial.

    Typical use: Warnsdorff's rule against plain move order on every start
    square, ``compare(df, {"heuristic": "none"}, {"heuristic": "warnsdorff"})``;
    Amb against recursion on every n, ``compare(df, {"strategy": "recursive"},
    {"strategy": "amb"}, metric="wall_ns")``.

    Each side is the rows matching its ``column: value`` pairs, repeats folded
    (:func:`aggregate_repeats`: timings are the median over repeats). A
    baseline trial and a treatment trial are matched when they agree on every
    ``on`` column.

    Bounds. A censored trial (status ``node_limit`` / ``time_limit``) shows
    a value ``v`` whose true value (had the search run to the end) is
    ``>= v``; an exact trial shows its true value. With b the baseline value
    and t the treatment value:

    ==================  ===================  =================  =================
    baseline            treatment            ratio = t / b      reduction = b - t
    ==================  ===================  =================  =================
    exact               exact                exact              exact
    censored (b >=)     exact                ``<=`` (upper)     ``>=`` (lower)
    exact               censored (t >=)      ``>=`` (lower)     ``<=`` (upper)
    censored            censored             unknown (NaN)      unknown (NaN)
    ==================  ===================  =================  =================

    A trial with status ``error`` on either side has no value: ``unknown``.
    One refinement: an exact treatment value of 0 over a censored baseline
    (> 0) gives a ratio of exactly 0.
    The ratio's and the reduction's bounds always point opposite ways, so
    each has its own column. A ratio of ``x/0`` is ``inf`` (``0/0``: NaN).

    Args:
        df: rows as :func:`load` returns them.
        baseline, treatment: ``{column: value}`` (or ``{column: [values]}``)
            selecting each side; default ``{"heuristic": "none"}`` and
            ``{"heuristic": "warnsdorff"}``.
        metric: the numeric column to compare (``backtracks``, ``nodes``,
            ``wall_ns``, ...).
        on: matching columns. Default: every parameter column that is not a
            key of ``baseline`` or ``treatment``.

    Returns:
        A :class:`Comparison`. Its ``trials`` has one row per matched pair:
        the ``on`` columns, ``baseline_status``, ``treatment_status``,
        ``baseline`` and ``treatment`` (the metric, float64), ``ratio``,
        ``ratio_bound``, ``reduction``, ``reduction_bound`` (bound columns:
        categoricals over ``exact, >=, <=, unknown``) and ``kind`` (``exact``,
        ``baseline censored``, ``treatment censored``, ``both censored``,
        ``error``). Its ``totals`` has one row per kind present, then
        ``all`` (every pair with values on both sides): ``trials``, the sums
        ``baseline`` and ``treatment`` with ``baseline_bound`` and
        ``treatment_bound`` (``>=`` when a censored value is summed), and the
        ``ratio`` and ``reduction`` of the sums with their bounds from the
        table above. So the exact part is never mixed with bounds: read the
        ``exact`` row for exact figures, the others for bounds.

    Raises:
        ValueError: a column is missing, a side selects no trial, a trial is
            on both sides, or ``on`` leaves several trials per side with the
            same ``on`` values (the message names the columns that differ).
    """
    baseline = dict(baseline if baseline is not None else {"heuristic": "none"})
    treatment = dict(treatment if treatment is not None else {"heuristic": "warnsdorff"})
    if not baseline or not treatment:
        raise ValueError("compare: baseline and treatment each need at least one "
                         "column=value pair, e.g. baseline={'heuristic': 'none'}")
    _require_columns(df, [metric, "status", *baseline, *treatment], "compare")
    if not pd.api.types.is_numeric_dtype(df[metric]):
        raise ValueError(f"compare: metric {metric!r} is not numeric ({df[metric].dtype})")
    keys = list(dict.fromkeys([*baseline, *treatment]))
    if on is None:
        on = [c for c in parameter_columns(df) if c not in keys]
    on = _as_list(on)
    _require_columns(df, on, "compare")
    overlap = set(on) & set(keys)
    if overlap:
        raise ValueError(f"compare: {sorted(overlap)} cannot both select a side and be matched on")
    selected = {}
    for name, sel in (("baseline", baseline), ("treatment", treatment)):
        try:
            selected[name] = select(df, sel)
        except ValueError as exc:
            raise ValueError(f"compare: {name} {sel}: {exc}") from None
    both = selected["baseline"].index.intersection(selected["treatment"].index)
    if len(both):
        raise ValueError(f"compare: {len(both)} row(s) match both baseline {baseline} and "
                         f"treatment {treatment}\n  fix: make the selections disjoint")
    sides = {}
    for name, sel in (("baseline", baseline), ("treatment", treatment)):
        rows = aggregate_repeats(selected[name])
        dup = rows.duplicated(on, keep=False) if on else pd.Series(len(rows) > 1, rows.index)
        if dup.any():
            vary = [c for c in trial_keys(rows) if c not in on
                    and rows.loc[dup, c].astype("object").nunique(dropna=False) > 1]
            raise ValueError(f"compare: the {name} {sel} has {int(dup.sum())} trials sharing "
                             f"their {', '.join(on) or 'on'} values; they differ in "
                             f"{', '.join(vary) or 'nothing the on columns see'}\n  fix: add "
                             f"{' / '.join(vary) or 'a column'} to on=[...] or to the "
                             f"{name} selection")
        sides[name] = rows
    parts = []
    for name, rows in sides.items():
        part = rows[on].copy()
        part[f"{name}_status"] = rows["status"].astype("object")
        part[name] = rows[metric].astype("float64")
        parts.append(part.reset_index(drop=True))
    if on:
        merged = parts[0].merge(parts[1], on=on, how="outer", indicator=True, sort=False)
        unmatched = {"baseline": int((merged["_merge"] == "left_only").sum()),
                     "treatment": int((merged["_merge"] == "right_only").sum())}
        trials = merged.loc[merged["_merge"] == "both"].drop(columns="_merge")
    else:
        trials = pd.concat(parts, axis=1)
        unmatched = {"baseline": 0, "treatment": 0}
    trials = trials.reset_index(drop=True)
    for c in on:
        if isinstance(df[c].dtype, pd.CategoricalDtype):
            trials[c] = pd.Categorical(trials[c].astype("object"),
                                       categories=df[c].cat.categories)
    b_cens = trials["baseline_status"].isin(CENSORED).to_numpy()
    t_cens = trials["treatment_status"].isin(CENSORED).to_numpy()
    missing = (trials["baseline"].isna() | trials["treatment"].isna()).to_numpy()
    trials = pd.concat([trials, _derive(trials["baseline"].to_numpy(),
                                        trials["treatment"].to_numpy(),
                                        b_cens, t_cens, missing)], axis=1)
    kind = np.select([missing, b_cens & t_cens, b_cens, t_cens],
                     ["error", "both censored", "baseline censored", "treatment censored"],
                     "exact")
    trials["kind"] = pd.Categorical(kind, categories=list(_KINDS))
    return Comparison(trials=trials, totals=_totals(trials), metric=metric, baseline=baseline,
                      treatment=treatment, on=on, unmatched=unmatched)


_KINDS = ("exact", "baseline censored", "treatment censored", "both censored", "error")


def _derive(b: np.ndarray, t: np.ndarray, b_lower: np.ndarray, t_lower: np.ndarray,
            missing: np.ndarray) -> pd.DataFrame:
    """Ratio t/b and reduction b-t with their bounds, given which sides are lower bounds."""
    b = np.asarray(b, dtype="float64")
    t = np.asarray(t, dtype="float64")
    unknown = missing | (b_lower & t_lower)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(unknown, np.nan, t / b)
    reduction = np.where(unknown, np.nan, b - t)
    # an exact 0 over a positive lower bound is exactly 0, whatever the true baseline
    zero = ~unknown & ~t_lower & (t == 0) & (b > 0)
    ratio_bound = np.select([unknown, zero, b_lower, t_lower],
                            ["unknown", "exact", "<=", ">="], "exact")
    reduction_bound = np.select([unknown, b_lower, t_lower], ["unknown", ">=", "<="], "exact")
    return pd.DataFrame({
        "ratio": ratio,
        "ratio_bound": pd.Categorical(ratio_bound, categories=list(BOUNDS)),
        "reduction": reduction,
        "reduction_bound": pd.Categorical(reduction_bound, categories=list(BOUNDS)),
    })


def _totals(trials: pd.DataFrame) -> pd.DataFrame:
    rows = []
    labels = []
    for kind in _KINDS:
        part = trials[trials["kind"] == kind]
        if len(part):
            labels.append(kind)
            rows.append(part)
    valid = trials[trials["kind"] != "error"]
    labels.append("all")
    rows.append(valid)
    b_sum = np.array([p["baseline"].sum(min_count=1) if k != "error" else np.nan
                      for k, p in zip(labels, rows)])
    t_sum = np.array([p["treatment"].sum(min_count=1) if k != "error" else np.nan
                      for k, p in zip(labels, rows)])
    b_lower = np.array([bool(p["baseline_status"].isin(CENSORED).any()) for p in rows])
    t_lower = np.array([bool(p["treatment_status"].isin(CENSORED).any()) for p in rows])
    missing = np.array([k == "error" or len(p) == 0 for k, p in zip(labels, rows)])
    out = pd.DataFrame({"trials": [len(p) for p in rows], "baseline": b_sum,
                        "baseline_bound": np.where(b_lower, ">=", "exact"),
                        "treatment": t_sum,
                        "treatment_bound": np.where(t_lower, ">=", "exact")},
                       index=pd.Index(labels, name="kind"))
    derived = _derive(b_sum, t_sum, b_lower, t_lower, missing)
    derived.index = out.index
    out = pd.concat([out, derived], axis=1)
    for col in ("baseline_bound", "treatment_bound"):
        out[col] = pd.Categorical(out[col], categories=list(BOUNDS))
    return out


# --------------------------------------------------------------------------- timings


def timing_spread(df: pd.DataFrame, metric: str = "wall_ns") -> pd.DataFrame:
    """How a timing spreads over the repeats of each trial.

    Args:
        df: rows as :func:`load` returns them (with a ``repeat`` column).
        metric: ``wall_ns`` or ``cpu_ns``.

    Returns:
        One row per trial (index: :func:`trial_keys` that vary, or
        ``trial_id`` of the first repeat when none varies) with columns
        ``repeats``, ``min``, ``median``, ``max`` (ns), ``spread`` =
        (max - min) / median and ``cv`` = standard deviation / mean
        (sample, ddof=1; NaN for a single repeat). Trials that failed are
        left out.

    Raises:
        ValueError: ``metric`` or ``repeat`` is not in ``df``.
    """
    _require_columns(df, [metric, "repeat", "status"], "timing_spread")
    ok = df[df["status"].astype("object") != "error"]
    keys = [c for c in trial_keys(ok) if ok[c].nunique(dropna=False) > 1] or ["trial_id"]
    if keys == ["trial_id"]:
        ok = ok.assign(trial_id=ok.groupby(trial_keys(ok), observed=True, dropna=False)
                       ["trial_id"].transform("first"))
    g = ok.groupby(keys, observed=True, dropna=False)[metric]
    out = g.agg(repeats="size", min="min", median="median", max="max", mean="mean", std="std")
    out["spread"] = (out["max"] - out["min"]) / out["median"]
    out["cv"] = out["std"] / out["mean"]
    return out.drop(columns=["mean", "std"])


# --------------------------------------------------------------------------- helpers


def _as_list(value: Sequence[str] | str | None) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def _require_columns(df: pd.DataFrame, columns: Iterable[str], where: str) -> None:
    missing = [c for c in dict.fromkeys(columns) if c not in df.columns]
    if missing:
        raise ValueError(f"{where}: no column {', '.join(map(repr, missing))} in the results; "
                         f"columns: {', '.join(map(str, df.columns))}")
