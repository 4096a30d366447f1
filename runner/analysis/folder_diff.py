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

from btlab.analysis.config_order import in_config_order
from btlab.analysis.counted_rows import select_rows
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
    """

    only_a: list[str] = field(default_factory=list)
    only_b: list[str] = field(default_factory=list)
    differences: pd.DataFrame = field(default_factory=pd.DataFrame)
    compared: int = 0
    columns: list[str] = field(default_factory=list)
    notes: list[tuple[str, str]] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        return not self.only_a and not self.only_b and self.differences.empty


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
    return FolderDiff(only_a=sorted(ids_a - ids_b), only_b=sorted(ids_b - ids_a),
                      differences=pd.DataFrame(diffs, columns=["trial_id", "column", "a", "b"]),
                      compared=len(merged), columns=columns)


def compare_folders(a: str | Path, b: str | Path, all_rows: bool = False) -> FolderDiff:
    """Load two results folders and compare them (see :func:`compare_frames`).

    Each side counts the trials of the config last run into it, as ``btlab
    show`` does (:func:`btlab.analysis.counted_rows.select_rows`); ``all_rows`` counts every
    row. What a side left out is in :attr:`FolderDiff.notes`.

    Raises:
        btlab.errors.ResultsError: a folder holds no results.
    """
    chosen = [(folder, select_rows(
        folder, in_config_order(load_rows(folder, superseded=all_rows), folder), all_rows))
        for folder in (a, b)]
    out = compare_frames(chosen[0][1].rows, chosen[1][1].rows)
    out.notes = [(str(folder), note) for folder, sel in chosen for note in sel.notes]
    return out


def compare(a: str | Path, b: str | Path, *, all_rows: bool = False) -> FolderDiff:
    """Compare two results folders trial by trial (``btlab compare``).

    Args:
        a, b: results folders (or filesystem URIs), e.g. a laptop's run and a
            cluster's run of one config.
        all_rows: count every row of each folder, not only the trials of the config
            last run into it (``btlab compare --all``).

    Returns:
        A :class:`FolderDiff`: ``identical``, the trial ids on one side only
        (``only_a``, ``only_b``), ``differences`` (a DataFrame of shape (differing
        cells, 4): ``trial_id``, ``column``, ``a``, ``b``), ``compared`` (trials on
        both sides), ``columns`` (the deterministic columns compared: every column
        but :data:`IGNORED`) and ``notes``. :func:`describe` words it as ``btlab
        compare`` prints it.

    Raises:
        ResultsError: a folder holds no btlab results.
    """
    return compare_folders(a, b, all_rows=all_rows)


def describe(cmp: FolderDiff, a: str, b: str, limit: int = 20) -> str:
    """A human-readable report of a comparison."""
    lines = [f"compared {cmp.compared:,} trials present in both {a} and {b} on "
             f"{len(cmp.columns)} deterministic columns ({', '.join(cmp.columns)})"]
    lines += [f"{folder}: {note}" for folder, note in cmp.notes]
    for side, ids in ((a, cmp.only_a), (b, cmp.only_b)):
        if ids:
            shown = ", ".join(ids[:limit]) + (" ..." if len(ids) > limit else "")
            lines.append(f"{len(ids):,} trial(s) only in {side}: {shown}")
    if not cmp.differences.empty:
        n_trials = cmp.differences["trial_id"].nunique()
        lines.append(f"{n_trials:,} trial(s) differ:")
        for rec in cmp.differences.head(limit).itertuples(index=False):
            lines.append(f"  {rec.trial_id}  {rec.column}: {_short(rec.a)} != {_short(rec.b)}")
        if len(cmp.differences) > limit:
            lines.append(f"  ... {len(cmp.differences) - limit:,} more difference(s)")
    lines.append("IDENTICAL" if cmp.identical else "DIFFERENT")
    return "\n".join(lines)


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
