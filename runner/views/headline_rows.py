"""The rows the end-of-run headline needs, read part by part in constant memory.

``btlab run`` prints the headline tables of the whole folder when it ends.
Loading every row for that (one Python object per cell) made the driver's peak
memory grow with the number of trials; :func:`headline_rows` reads the needed
columns in Arrow batches of :data:`BATCH_ROWS` and keeps, per trial *key* (the
parameters, budget and seed: the repeats of one search), only what the
headline uses -- the row of its first repeat, and the wall and CPU times of
every repeat as 8-byte numbers, for their median. That is what every built-in
headline starts from (:func:`btlab.views.tables.one_per_trial`); a sweep of many
repeats then costs a few bytes per trial.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Container, Iterator, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from btlab.store.folder import load_rows
from btlab.store.read import checked_parts, damaged, union_schema
from btlab.views.failures import first_line

#: Rows read at a time.
BATCH_ROWS = 8192
#: The numbers kept per row (25 bytes): key code, repeat, wall and CPU time, error?
_NUMBERS = ("code", "repeat", "wall_ns", "cpu_ns", "error")


@dataclass
class HeadlineRows:
    """What :func:`headline_rows` found.

    Attributes:
        frame: one row per trial key (the first repeat's row; ``wall_ns`` and
            ``cpu_ns`` the median over the repeats), ``trial_id`` that row's, first.
        trials: trials of the config found in the folder.
        stale: trials in the folder that are not in the config.
        errors: trials of the config whose row has status ``error``.
        first_error: the first line of the first of their messages, or None.
    """

    frame: pd.DataFrame
    trials: int
    stale: int
    errors: int
    first_error: str | None


def headline_rows(where: Any, columns: Sequence[str], wanted: Container[str],
                  keys: Sequence[str]) -> HeadlineRows:
    """Read a results folder (or URI) for the headline, in constant memory per trial key.

    Args:
        where: the folder or URI.
        columns: the columns to read (``trial_id``, ``repeat``, ``status``,
            ``wall_ns``, ``cpu_ns``, ``error`` among them).
        wanted: the trial ids of the config; rows of other trials are counted
            in ``stale`` only.
        keys: the columns that tell searches apart (parameters, budget, seed).

    A trial written twice (a retried row) counts once, by its last row.

    Raises:
        ResultsError: the folder has no part files.
    """
    loc, infos = checked_parts(where)  # every footer read once, for the schema and the rows
    if not infos:
        load_rows(where)  # raises the usual ResultsError
    schema_all = union_schema(loc, infos)
    names = [c for c in columns if c in schema_all.names]
    kept = [c for c in names if c != "trial_id"]
    key_cols = [c for c in keys if c in kept]
    index: dict[bytes, int] = {}  # digest of a trial key -> its code (not the key's values)
    best: dict[int, tuple[int, int, int, int]] = {}  # code -> (repeat, seq, sub, at in sub)
    subs: list[pa.RecordBatch] = []  # per batch, the rows that were a key's best when read
    messages: dict[int, str] = {}                  # seq of an error row -> its first line
    numbers: dict[str, list[np.ndarray]] = {name: [] for name in _NUMBERS}
    stale: set[str] = set()
    seq = 0
    for batch in _batches(loc, infos, [schema_all.field(c) for c in names]):
        ids = batch.column("trial_id").to_pylist()
        many = getattr(wanted, "contains_many", None)  # a TrialIds: vectorised
        mine = many(ids) if many else np.array([i in wanted for i in ids], dtype=bool)
        if not mine.all():
            stale.update(i for i, m in zip(ids, mine) if not m)
            batch = batch.filter(pa.array(mine))
        del ids, mine
        if not batch.num_rows:
            continue
        cols = {c: batch.column(c).to_pylist() for c in (*key_cols, "repeat", "status")}
        codes = [index.setdefault(_digest(k), len(index))
                 for k in zip(*(cols[c] for c in key_cols))]
        repeats = [r or 0 for r in cols["repeat"]]
        mine_here: dict[int, tuple[int, int]] = {}  # code -> (repeat, at): best in this batch
        for at, (key, rep) in enumerate(zip(codes, repeats)):
            cur = best.get(key)
            if cur is None or rep <= cur[0]:  # the first repeat; its last row if written twice
                best[key] = (rep, seq + at, -1, -1)
                mine_here[key] = (rep, at)
        if mine_here:  # those rows kept as Arrow columns (a few bytes a cell), not dicts
            ats = sorted(at for _, at in mine_here.values())
            where_at = {at: i for i, at in enumerate(ats)}
            for key, (rep, at) in mine_here.items():
                best[key] = (rep, seq + at, len(subs), where_at[at])
            subs.append(batch.select(["trial_id", *kept]).take(pa.array(ats, pa.int64())))
        del mine_here
        failed = np.array([s == "error" for s in cols["status"]], dtype=np.int64)
        if failed.any():
            errors = batch.column("error")
            for where_failed in np.flatnonzero(failed).tolist():
                messages[seq + where_failed] = first_line(errors[where_failed].as_py())[:300]
        for name, values in (("code", np.asarray(codes, dtype=np.int32)),
                             ("repeat", np.asarray(repeats, dtype=np.int32)),
                             ("wall_ns", _floats(batch.column("wall_ns"))),
                             ("cpu_ns", _floats(batch.column("cpu_ns"))),
                             ("error", failed.astype(bool))):
            numbers[name].append(values)
        seq += batch.num_rows
    empty = {"code": np.int32, "repeat": np.int32, "error": bool}
    arrays = {name: (np.concatenate(parts) if parts
                     else np.empty(0, dtype=empty.get(name, np.float64)))
              for name, parts in numbers.items()}
    del numbers
    # a trial is (key, repeat): its last row counts (lexsort is stable: file order kept)
    order = np.lexsort((arrays["repeat"], arrays["code"]))
    sorted_code, sorted_repeat = arrays["code"][order], arrays["repeat"][order]
    last = np.ones(len(order), dtype=bool)
    last[:-1] = ((sorted_code[1:] != sorted_code[:-1])
                 | (sorted_repeat[1:] != sorted_repeat[:-1]))
    keep = np.sort(order[last])  # positions in the folder of the rows that count
    del order, sorted_code, sorted_repeat, last
    medians = pd.DataFrame({name: arrays[name][keep] for name in ("code", "wall_ns", "cpu_ns")}
                           ).groupby("code")[["wall_ns", "cpu_ns"]].median()
    failed_at = keep[arrays["error"][keep]]
    del arrays
    chosen = sorted(best.items(), key=lambda item: item[1][1])  # file order of the rows
    del best, index
    offsets = np.cumsum([0] + [b.num_rows for b in subs])
    order_codes = np.array([code for code, _ in chosen], dtype=np.int64)
    taken = np.array([offsets[sub] + at for _, (_, _, sub, at) in chosen], dtype=np.int64)
    del chosen
    fields = [schema_all.field(c) for c in ("trial_id", *kept)]
    table = (pa.Table.from_batches(subs, schema=pa.schema(fields)) if subs
             else pa.schema(fields).empty_table()).take(pa.array(taken))
    del subs, taken
    for name in ("wall_ns", "cpu_ns"):  # the median over the repeats, per trial key
        values = medians[name].reindex(order_codes).to_numpy(dtype=np.float64)
        table = table.set_column(table.schema.get_field_index(name), name, pa.array(values))
    frame = table.to_pandas(self_destruct=True, split_blocks=True)
    del table
    first = messages.get(int(failed_at.min())) if len(failed_at) else None
    return HeadlineRows(frame, len(keep), len(stale), len(failed_at), first)


def _digest(key: tuple) -> bytes:
    """16 bytes standing for a trial key (its values' repr: exact, and 1 is not 1.0 nor
    True): a million keys cost about 100 bytes each, not a tuple of Python values."""
    return hashlib.blake2b(repr(key).encode(), digest_size=16).digest()


def _batches(loc: Any, infos: list, fields: list) -> Iterator[Any]:
    """The rows of the checked parts ``infos`` of ``loc``, ``fields`` only, :data:`BATCH_ROWS`
    at a time.

    Part by part with :class:`pyarrow.parquet.ParquetFile` (a dataset scanner
    reads ahead and keeps more); a column a part lacks (written by an older
    btlab) reads as nulls. ``infos`` are what :func:`btlab.store.read.checked_parts`
    gave; a part damaged past its footer raises the error naming it.

    Raises:
        ResultsError: a damaged part (named).
    """
    for info in infos:
        try:
            part = pq.ParquetFile(loc.fs.open_input_file(info.path))
            have = set(part.schema_arrow.names)
            wanted = [f.name for f in fields if f.name in have]
            for batch in part.iter_batches(batch_size=BATCH_ROWS, columns=wanted,
                                           use_threads=False):
                yield pa.RecordBatch.from_arrays(
                    [batch.column(f.name).cast(f.type) if f.name in have
                     else pa.nulls(batch.num_rows, f.type) for f in fields],
                    schema=pa.schema(fields))
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise damaged(loc, info.path, exc) from None


def _floats(column) -> np.ndarray:
    """An integer column as float64 numbers, nulls as NaN."""
    return column.to_numpy(zero_copy_only=False).astype(np.float64, copy=False)
