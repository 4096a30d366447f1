"""Compare two results folders trial by trial: the same sweep must give the same rows.

Two runs of one config -- on a laptop and on a cluster, today and next year --
must agree on every *deterministic* column: the parameters, the status, the
counters of the metrics contract (``docs/metrics.md``) and the solution. Timings (``wall_ns``,
``cpu_ns``) and provenance (run id, host, node, pid, versions, start time)
are expected to differ and are ignored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from btlab.analysis.columns import group_columns, parameter_columns
from btlab.analysis.config_order import in_config_order
from btlab.analysis.counted_rows import select_rows
from btlab.errors import BtlabError
from btlab.problems import plugins
from btlab.problems.registry import get_problem
from btlab.store import schema
from btlab.store.folder import load_rows

#: Columns never compared: timings, provenance, how a split trial was run (the columns of
#: :data:`btlab.store.schema.COLUMNS` that are not ``compared``).
IGNORED = frozenset(c.name for c in schema.COLUMNS if not c.compared)


@dataclass
class FolderDiff:
    """The outcome of :func:`compare_folders`.

    Attributes:
        only_a, only_b: trial ids present on one side only.
        differences: one row per (trial_id, column) that differs, with the two values.
        compared: trials present on both sides.
        columns: the deterministic columns compared.
        notes: per side, what the row selection left out or found missing
            (:func:`btlab.analysis.counted_rows.select_rows`), as ``(folder, sentence)``.
        labels: trial id -> the trial's parameters as ``btlab validate`` prints them
            (``rows=5  cols=5  heuristic=none  ...  seed=0  repeat=0``), for the trials
            on one side only.
        timings: with ``timings=True``, :func:`timing_ratios`' table (one row per
            group); else None.
        threshold: the ratio B/A above which a group is slower (``--threshold``).
    """

    only_a: list[str] = field(default_factory=list)
    only_b: list[str] = field(default_factory=list)
    differences: pd.DataFrame = field(default_factory=pd.DataFrame)
    compared: int = 0
    columns: list[str] = field(default_factory=list)
    notes: list[tuple[str, str]] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)
    timings: pd.DataFrame | None = None
    threshold: float = 1.1

    @property
    def identical(self) -> bool:
        return not self.only_a and not self.only_b and self.differences.empty

    @property
    def slower(self) -> pd.DataFrame:
        """The groups of :attr:`timings` whose ratio B/A exceeds the threshold (empty
        without timings)."""
        if self.timings is None or self.timings.empty:
            return pd.DataFrame()
        return self.timings[self.timings["slower"]]

    @property
    def passed(self) -> bool:
        """Identical, and (with timings) no group slower than the threshold: ``btlab
        compare`` exits 0."""
        return self.identical and self.slower.empty


def _canon(value):
    """Make cells comparable: numpy arrays (Parquet lists) as lists, every null (None, NaN,
    NaT, pd.NA) as None."""
    if value is None or (pd.api.types.is_scalar(value) and pd.isna(value)):
        return None
    if hasattr(value, "tolist"):
        return value.tolist()
    return value


def compare_frames(a: pd.DataFrame, b: pd.DataFrame) -> FolderDiff:
    """Compare two results DataFrames on their deterministic columns, joined on ``trial_id``."""
    ids_a, ids_b = set(a["trial_id"]), set(b["trial_id"])
    columns = [c for c in a.columns if c in b.columns and c not in IGNORED and c != "trial_id"]
    merged = a[["trial_id", *columns]].merge(b[["trial_id", *columns]], on="trial_id",
                                              suffixes=("_a", "_b"))
    diffs = []
    for col in columns:
        # plain lists: Series.map would turn a None back into NaN, and NaN != NaN
        left = [_canon(v) for v in merged[f"{col}_a"]]
        right = [_canon(v) for v in merged[f"{col}_b"]]
        for tid, x, y in zip(merged["trial_id"], left, right):
            if x != y:
                diffs.append({"trial_id": tid, "column": col, "a": x, "b": y})
    only_a, only_b = sorted(ids_a - ids_b), sorted(ids_b - ids_a)
    labels = {**trial_labels(a, only_a), **trial_labels(b, only_b)}
    return FolderDiff(only_a=only_a, only_b=only_b,
                      differences=pd.DataFrame(diffs, columns=["trial_id", "column", "a", "b"]),
                      compared=len(merged), columns=columns, labels=labels)


#: The trial keys ``btlab validate`` prints after the parameters when set, in its order.
_LABEL_KEYS = ("budget_nodes", "budget_backtracks", "budget_seconds", "restarts", "probes",
               "estimator")


def trial_labels(df: pd.DataFrame, ids: list[str]) -> dict[str, str]:
    """Trial id -> its parameters as ``btlab validate`` prints them: each parameter
    ``name=value``, then the budget, restarts, probes and estimator when set, ``seed``,
    ``repeat``."""
    if not ids or df.empty:
        return {}
    rows = df[df["trial_id"].isin(set(ids))].drop_duplicates("trial_id")
    params = parameter_columns(rows)
    out = {}
    for rec in rows.to_dict(orient="records"):
        parts = [f"{c}={_label(rec.get(c))}" for c in params]
        for key in _LABEL_KEYS:
            value = rec.get(key)
            if value is not None and not (pd.api.types.is_scalar(value) and pd.isna(value)):
                parts.append(f"{key}='{value}'" if key in ("restarts", "estimator")
                             else f"{key}={_label(value)}")
        parts += [f"{k}={_label(rec.get(k))}" for k in ("seed", "repeat") if k in rec]
        out[str(rec["trial_id"])] = "  ".join(parts)
    return out


def _label(value) -> str:
    """A cell as ``btlab validate`` prints the value (``None`` for null, 2.0 as 2.0)."""
    return str(_canon(value))


#: Statuses whose ``cpu_ns`` is no measure of the search's speed: a failure, and a stop at
#: the time budget (both sides then spend the budget).
_UNTIMED = ("error", "time_limit")
#: The columns of :func:`timing_ratios` after the group columns.
TIMING_COLUMNS = ("trials", "repeats", "a_ms", "b_ms", "ratio", "ratio_min", "ratio_max",
                  "slower")


def timing_ratios(a: pd.DataFrame, b: pd.DataFrame, threshold: float = 1.1,
                  metric: str = "cpu_ns") -> pd.DataFrame:
    """The timing of B against A, per group of the headline tables.

    Rows of the two sides are paired on ``trial_id`` (one trial, one repeat); pairs where
    either side failed or stopped at its time budget, or A measured 0, are left out. The
    groups are the headline tables' (:func:`btlab.analysis.columns.group_columns`: the
    parameters that vary, never the start square).

    Args:
        a, b: the rows of two results folders (as :func:`compare_folders` selects them).
        threshold: a group whose ratio exceeds it is ``slower``.
        metric: the timing compared (``cpu_ns``; ``wall_ns`` for wall time).

    Returns:
        One row per group (in A's row order): the group columns, ``trials`` (distinct
        trials paired), ``repeats``, ``a_ms`` and ``b_ms`` (median ``metric`` of the
        pairs, milliseconds), ``ratio`` (the median over the pairs of ``b / a``),
        ``ratio_min`` and ``ratio_max`` (the lowest and highest, over the repeats, of
        that median taken within one repeat: its spread; equal to ``ratio`` for one
        repeat) and ``slower`` (``ratio > threshold``).
    """
    right = b[[c for c in ("trial_id", "repeat", "status", metric) if c in b.columns]]
    pairs = a.merge(right, on="trial_id", suffixes=("", "_b"))
    if "repeat_b" in pairs.columns:
        pairs = pairs.drop(columns="repeat_b")
    ok = (~pairs["status"].astype("object").isin(_UNTIMED)
          & ~pairs["status_b"].astype("object").isin(_UNTIMED)
          & (pairs[metric].astype("float64") > 0) & pairs[f"{metric}_b"].notna())
    pairs = pairs[ok.fillna(False).astype(bool)].copy()
    pairs["_ratio"] = pairs[f"{metric}_b"].astype("float64") / pairs[metric].astype("float64")
    groups = _timing_groups(pairs)
    if "repeat" not in pairs.columns:
        pairs["repeat"] = 0
    columns = [*groups, *TIMING_COLUMNS]
    out = []
    grouped = (pairs.groupby(groups, sort=False, dropna=False, observed=True) if groups
               else [((), pairs)])
    for key, sub in grouped:
        key = key if isinstance(key, tuple) else (key,)
        per_repeat = sub.groupby("repeat")["_ratio"].median()
        ratio = float(sub["_ratio"].median())
        trials = len(sub[_trial_key_columns(sub)].drop_duplicates())
        out.append([*key, trials, int(sub["repeat"].nunique()), float(sub[metric].median()) / 1e6,
                    float(sub[f"{metric}_b"].median()) / 1e6, ratio,
                    float(per_repeat.min()), float(per_repeat.max()), ratio > threshold])
    return pd.DataFrame(out, columns=columns)


def _trial_key_columns(df: pd.DataFrame) -> list[str]:
    """What tells two trials apart (the repeat aside): the parameters and trial keys."""
    keys = [*parameter_columns(df), *(c.name for c in schema.COLUMNS
                                      if c.role == schema.TRIAL_KEY and c.name in df.columns)]
    return keys or ["trial_id"]


def _timing_groups(df: pd.DataFrame) -> list[str]:
    """The headline tables' groups of ``df`` (none for a problem that does not load)."""
    if df.empty:
        return []
    try:
        spec = get_problem(str(df["problem"].iloc[0]))
    except (ValueError, plugins.PluginError):
        return []
    return group_columns(df, spec)


def compare_folders(a: str | Path, b: str | Path, all_rows: bool = False,
                    timings: bool = False, threshold: float = 1.1) -> FolderDiff:
    """Load two results folders and compare them (see :func:`compare_frames`).

    Each side counts the trials of the config last run into it, as ``btlab
    show`` does (:func:`btlab.analysis.counted_rows.select_rows`); ``all_rows`` counts every
    row. What a side left out is in :attr:`FolderDiff.notes`. ``timings``: also
    :func:`timing_ratios` with ``threshold``.

    Raises:
        btlab.errors.ResultsError: a folder holds no results.
    """
    chosen = [(folder, select_rows(
        folder, in_config_order(load_rows(folder, superseded=all_rows), folder), all_rows))
        for folder in (a, b)]
    out = compare_frames(chosen[0][1].rows, chosen[1][1].rows)
    out.notes = [(str(folder), note) for folder, sel in chosen for note in sel.notes]
    out.threshold = threshold
    if timings:
        out.timings = timing_ratios(chosen[0][1].rows, chosen[1][1].rows, threshold)
    return out


def compare(a: str | Path, b: str | Path, *, all_rows: bool = False, timings: bool = False,
            threshold: float = 1.1) -> FolderDiff:
    """Compare two results folders trial by trial (``btlab compare``).

    Args:
        a, b: results folders (or filesystem URIs), e.g. a laptop's run and a
            cluster's run of one config.
        all_rows: count every row of each folder, not only the trials of the config
            last run into it (``btlab compare --all``).
        timings: also compare the CPU time, per group of the headline tables
            (``btlab compare --timings``; :func:`timing_ratios`): B's median ``cpu_ns``
            over A's.
        threshold: with ``timings``, a group whose ratio B/A exceeds it is slower:
            :attr:`FolderDiff.passed` is then False (``--threshold``, default 1.1).

    Returns:
        A :class:`FolderDiff`: ``identical``, the trial ids on one side only
        (``only_a``, ``only_b``), ``differences`` (a DataFrame of shape (differing
        cells, 4): ``trial_id``, ``column``, ``a``, ``b``), ``compared`` (trials on
        both sides), ``columns`` (the deterministic columns compared: every column
        but :data:`IGNORED`), ``notes``, ``labels`` (the one-sided trials'
        parameters), ``timings`` and ``passed`` (identical, and no group slower).
        :func:`describe` words it as ``btlab compare`` prints it.

    Raises:
        ResultsError: a folder holds no btlab results.
    """
    if not threshold > 0:
        raise BtlabError(f"threshold: expected a ratio > 0 (1.1: B may take 10 % more CPU "
                         f"time than A), found {threshold}\n  fix: --threshold 1.1")
    return compare_folders(a, b, all_rows=all_rows, timings=timings, threshold=threshold)


def describe(cmp: FolderDiff, a: str, b: str, limit: int = 20) -> str:
    """A human-readable report of a comparison."""
    lines = [f"compared {cmp.compared:,} trials present in both {a} and {b} on "
             f"{len(cmp.columns)} deterministic columns ({', '.join(cmp.columns)})"]
    lines += [f"{folder}: {note}" for folder, note in cmp.notes]
    for side, ids in ((a, cmp.only_a), (b, cmp.only_b)):
        if ids:
            lines.append(f"{len(ids):,} trial(s) only in {side}:")
            lines += [f"  {tid}  {cmp.labels.get(tid, '')}".rstrip() for tid in ids[:limit]]
            if len(ids) > limit:
                lines.append(f"  ... {len(ids) - limit:,} more")
    if not cmp.differences.empty:
        n_trials = cmp.differences["trial_id"].nunique()
        lines.append(f"{n_trials:,} trial(s) differ:")
        for rec in cmp.differences.head(limit).itertuples(index=False):
            lines.append(f"  {rec.trial_id}  {rec.column}: {_short(rec.a)} != {_short(rec.b)}")
        if len(cmp.differences) > limit:
            lines.append(f"  ... {len(cmp.differences) - limit:,} more difference(s)")
    if cmp.timings is not None:
        lines += describe_timings(cmp)
    lines.append("IDENTICAL" if cmp.identical else "DIFFERENT")
    if cmp.timings is not None:
        lines.append("SLOWER" if not cmp.slower.empty else
                     f"TIMINGS WITHIN {cmp.threshold:g}x")
    return "\n".join(lines)


def describe_timings(cmp: FolderDiff) -> list[str]:
    """The timing lines of :func:`describe`: one per group, the slower ones marked."""
    t = cmp.timings
    if t is None:
        return []
    if t.empty:
        return ["timings: no pair of trials timed on both sides (failed, time-limited or "
                "missing trials are not compared)"]
    lines = [f"timings: median cpu_ns ratio B/A per group (spread: lowest..highest over "
             f"the repeats); slower above {cmp.threshold:g}"]
    groups = [c for c in t.columns if c not in TIMING_COLUMNS]
    for rec in t.to_dict(orient="records"):
        name = ", ".join(f"{g}={_label(rec[g])}" for g in groups) or "all trials"
        spread = (f" ({rec['ratio_min']:.2f}..{rec['ratio_max']:.2f} over {rec['repeats']} "
                  "repeats)" if rec["repeats"] > 1 else "")
        mark = "  SLOWER" if rec["slower"] else ""
        lines.append(f"  {name}: {rec['ratio']:.2f}x{spread}, {rec['a_ms']:,.2f} ms -> "
                     f"{rec['b_ms']:,.2f} ms median, {rec['trials']:,} trial(s){mark}")
    return lines


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
