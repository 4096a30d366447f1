"""The rows the end-of-run headline needs, read part by part in constant memory.

``btlab run`` prints the headline tables of the whole folder when it ends.
Loading every row for that (one Python object per cell) made the driver's peak
memory grow with the number of trials; :func:`headline_rows` reads the folder in
Arrow batches of :data:`BATCH_ROWS`, twice, and keeps only what the headline uses:

1. The first pass reads the trial keys (the parameters, budget and seed: the
   repeats of one search), ``repeat``, ``status`` and the times. It keeps 21
   bytes a row (the repeat, the wall and CPU times, whether the trial failed)
   and the key columns batch by batch, a column that is the same in a whole
   batch as one value; then the keys are numbered exactly (Arrow's dictionary
   encoding, column by column), which tells the rows that count (the last row
   of each trial) and, per trial key, the row of its first repeat.
2. The second pass takes those rows, one per trial key, straight into the
   frame's columns at their final place (file order, or the config's sweep
   order: :mod:`btlab.analysis.config_order`): text as pandas categoricals (a
   byte or two a row), numbers as numpy arrays of their type (float64 for an
   integer column with nulls, as pandas reads them), ``wall_ns`` and ``cpu_ns``
   the median over the repeats. No Python object per trial, and no second copy
   of the frame to sort it.

That is what every built-in headline starts from
(:func:`btlab.views.tables.one_per_trial`). A sweep of many repeats costs a few
bytes per trial; a sweep of many trial keys (``seed: 1..200000``) one compact
row per key (figures: ``docs/benchmarks.md``, "Driver memory of a seed sweep").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Container, Iterator, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from btlab.analysis.config_order import config_positions
from btlab.store.folder import load_rows
from btlab.store.read import checked_parts, damaged, union_schema
from btlab.views.failures import first_line

#: Rows read at a time.
BATCH_ROWS = 8192


@dataclass
class HeadlineRows:
    """What :func:`headline_rows` found.

    Attributes:
        frame: one row per trial key (the first repeat's row; ``wall_ns`` and
            ``cpu_ns`` the median over the repeats): the columns asked for but
            ``trial_id``, in their order, text columns as categoricals; rows in
            the order they were read, or in the sweep order of ``config``.
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
                  keys: Sequence[str], config: Any = None) -> HeadlineRows:
    """Read a results folder (or URI) for the headline, in constant memory per trial key.

    Args:
        where: the folder or URI.
        columns: the columns to read (``trial_id``, ``repeat``, ``status``,
            ``wall_ns``, ``cpu_ns``, ``error`` among them).
        wanted: the trial ids of the config; rows of other trials are counted
            in ``stale`` only.
        keys: the columns that tell searches apart (parameters, budget, seed).
        config: the :class:`~btlab.config.model.SweepConfig` run (or the folder, for
            the config stored in it): the rows come in its sweep order
            (:func:`btlab.analysis.config_order.config_positions`; rows of trials
            not in it, or every row when it cannot be expanded, after, in the order
            read). None: in the order read.

    A trial written twice (a retried row) counts once, by its last row.

    Raises:
        ResultsError: the folder has no part files, or a damaged one (named).
    """
    loc, infos = checked_parts(where)  # every footer read once, for the schema and the rows
    if not infos:
        load_rows(where)  # raises the usual ResultsError
    schema_all = union_schema(loc, infos)
    names = [c for c in columns if c in schema_all.names]
    kept = [c for c in names if c != "trial_id"]
    positions = config_positions(config) if config is not None else None
    scan = _Scan(loc, infos, schema_all, [c for c in keys if c in kept], wanted, positions)
    code = scan.codes()
    # a trial is (key, repeat): its last row counts (lexsort is stable: file order kept)
    order = np.lexsort((scan.repeat, code))
    by_key, by_repeat = code[order], scan.repeat[order]
    last = np.ones(len(order), dtype=bool)
    last[:-1] = (by_key[1:] != by_key[:-1]) | (by_repeat[1:] != by_repeat[:-1])
    keep = order[last]  # the rows that count, by key and then repeat
    del order, by_key, by_repeat, last
    failed_at = np.sort(keep[scan.failed[keep]])
    trials, stale = len(keep), len(scan.stale)
    times = _median_times(code[keep], scan.wall[keep], scan.cpu[keep])
    heads = _starts(code[keep])  # each key's first repeat
    by_file = np.argsort(keep[heads], kind="stable")
    chosen = keep[heads][by_file]  # the rows shown, one per trial key, in file order
    times = {name: t[by_file] for name, t in times.items()}
    del keep, heads, by_file, code
    place = _places(scan.position[chosen] if scan.position is not None else None,
                    len(positions) if positions else 0, len(chosen))
    del scan
    fields = [schema_all.field(c) for c in kept]
    out = {f.name: _Column(f.type, len(chosen)) for f in fields if f.name not in times}
    first_error = _take(loc, infos, schema_all, ["trial_id", *out], wanted, chosen, place, out,
                        int(failed_at[0]) if len(failed_at) else None)
    frame_columns: dict[str, Any] = {}
    for f in fields:
        if f.name in out:
            frame_columns[f.name] = out.pop(f.name).values()
        else:  # wall_ns, cpu_ns: the median over the repeats, per trial key
            frame_columns[f.name] = np.empty(len(chosen), dtype=np.float64)
            frame_columns[f.name][place] = times.pop(f.name)
    frame = pd.DataFrame(frame_columns, columns=kept, copy=False)
    return HeadlineRows(frame, trials, stale, len(failed_at), first_error)


class _Scan:
    """The first pass over the rows of the config's trials.

    Keeps per row (file order, stale rows left out) the repeat, the wall and CPU times,
    whether it failed and, with ``positions``, its trial's place in sweep order (-1: not
    in it); per batch the key columns (:func:`_same_or_all`), numbered by :meth:`codes`.
    """

    def __init__(self, loc: Any, infos: list, schema: pa.Schema, key_cols: list[str],
                 wanted: Container[str], positions: dict[str, int] | None) -> None:
        self.stale: set[str] = set()
        self.sizes: list[int] = []
        self.keys: list[list[pa.Array]] = [[] for _ in key_cols]  # per key column, per batch
        parts: dict[str, list[np.ndarray]] = {"repeat": [], "wall": [], "cpu": [],
                                              "failed": [], "position": []}
        read = dict.fromkeys(["trial_id", *key_cols, "repeat", "status", "wall_ns", "cpu_ns"])
        fields = [schema.field(c) for c in read if c in schema.names]
        for batch in _batches(loc, infos, fields, wanted, self.stale):
            self.sizes.append(batch.num_rows)
            for values, name in zip(self.keys, key_cols):
                values.append(_same_or_all(batch.column(name)))
            parts["repeat"].append(_ints(batch.column("repeat")))
            parts["wall"].append(_floats(batch.column("wall_ns")))
            parts["cpu"].append(_floats(batch.column("cpu_ns")))
            failed = pc.fill_null(pc.equal(batch.column("status"), "error"), False)
            parts["failed"].append(failed.to_numpy(zero_copy_only=False).astype(bool))
            if positions is not None:
                ids = batch.column("trial_id").to_pylist()
                parts["position"].append(np.fromiter((positions.get(i, -1) for i in ids),
                                                     dtype=np.int64, count=len(ids)))
                del ids
        kinds = {"repeat": np.int32, "wall": np.float64, "cpu": np.float64, "failed": bool,
                 "position": np.int64}
        joined = {name: np.concatenate(p) if p else np.empty(0, kinds[name])
                  for name, p in parts.items()}
        del parts
        self.repeat, self.wall, self.cpu = joined["repeat"], joined["wall"], joined["cpu"]
        self.failed = joined["failed"]
        self.position = joined["position"] if positions is not None else None

    def codes(self) -> np.ndarray:
        """Per row, its trial key's number (int64, from 0): equal keys, equal numbers.

        Exact: each key column's values are numbered (:func:`_numbered`: null a value of
        its own, floats by their bits) and combined with the numbers of the columns
        before. A column with one value in every row is skipped.
        """
        code = np.zeros(len(self.repeat), dtype=np.int64)
        distinct = 1
        for values in self.keys:
            if all(len(v) == 1 for v in values) and len({_scalar(v) for v in values}) <= 1:
                continue  # one value in every row: it tells no rows apart
            column = pa.chunked_array([v if len(v) == n else pa.repeat(v[0], n)
                                       for v, n in zip(values, self.sizes)], type=values[0].type)
            values.clear()
            mine, count = _numbered(column.combine_chunks())
            del column
            code = code * count + mine
            distinct *= count
            del mine
            if distinct >= 2 ** 31:  # renumbered 0..k-1 before the products could overflow
                code = _dense(code)
                distinct = int(code.max()) + 1 if len(code) else 1
        self.keys = []
        return code


def _batches(loc: Any, infos: list, fields: list, wanted: Container[str],
             stale: set[str] | None) -> Iterator[pa.RecordBatch]:
    """The rows of the config's trials (``trial_id`` in ``wanted``) in the checked parts
    ``infos`` of ``loc``, ``fields`` only, :data:`BATCH_ROWS` at a time; the ids of the
    other rows go into ``stale`` (when given).

    Part by part with :class:`pyarrow.parquet.ParquetFile` (a dataset scanner
    reads ahead and keeps more); a column a part lacks (written by an older
    btlab) reads as nulls. ``infos`` are what :func:`btlab.store.read.checked_parts`
    gave; a part damaged past its footer raises the error naming it.

    Raises:
        ResultsError: a damaged part (named).
    """
    schema = pa.schema(fields)
    many = getattr(wanted, "contains_many", None)  # a TrialIds: vectorised
    for info in infos:
        try:
            part = pq.ParquetFile(loc.fs.open_input_file(info.path))
            have = set(part.schema_arrow.names)
            names = [f.name for f in fields if f.name in have]
            for raw in part.iter_batches(batch_size=BATCH_ROWS, columns=names,
                                         use_threads=False):
                batch = pa.RecordBatch.from_arrays(
                    [raw.column(f.name).cast(f.type) if f.name in have
                     else pa.nulls(raw.num_rows, f.type) for f in fields], schema=schema)
                del raw
                ids = batch.column("trial_id").to_pylist()
                mine = many(ids) if many else np.array([i in wanted for i in ids], dtype=bool)
                if not mine.all():
                    if stale is not None:
                        stale.update(i for i, m in zip(ids, mine) if not m)
                    batch = batch.filter(pa.array(mine))
                del ids, mine
                if batch.num_rows:
                    yield batch
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise damaged(loc, info.path, exc) from None


def _take(loc: Any, infos: list, schema: pa.Schema, names: list[str], wanted: Container[str],
          chosen: np.ndarray, place: np.ndarray, out: dict[str, _Column],
          failed: int | None) -> str | None:
    """The second pass: the rows at ``chosen`` (positions among the config's rows, in file
    order, sorted) into the ``out`` columns at ``place``; returns the first line of the
    error message of the row at ``failed`` (None: no row)."""
    fields = [schema.field(c) for c in dict.fromkeys(names) if c in schema.names]
    message = None
    seq = 0
    for batch in _batches(loc, infos, fields, wanted, None):
        end = seq + batch.num_rows
        lo, hi = np.searchsorted(chosen, [seq, end])
        if hi > lo:
            rows = batch.take(pa.array(chosen[lo:hi] - seq, pa.int64()))
            for name, column in out.items():
                column.put(place[lo:hi], rows.column(name))
            del rows
        if failed is not None and seq <= failed < end and "error" in batch.schema.names:
            message = first_line(batch.column("error")[failed - seq].as_py())[:300]
        seq = end
    return message


class _Column:
    """One column of the frame, filled batch by batch at the rows' final places.

    Text becomes a categorical (codes and the values in order of first appearance),
    integers and booleans numpy arrays of their type (with nulls: float64 with NaN and
    object with None, as :meth:`pyarrow.Table.to_pandas` makes them), floats float64;
    anything else an object array of Python values.
    """

    def __init__(self, kind: pa.DataType, n: int) -> None:
        self.kind = kind
        self.nulls: np.ndarray | None = None
        self.text = pa.types.is_string(kind) or pa.types.is_large_string(kind)
        self.categories: dict[str, int] = {}
        if self.text:
            self.data: np.ndarray = np.full(n, -1, dtype=np.int32)
        elif pa.types.is_integer(kind) or pa.types.is_boolean(kind) or \
                pa.types.is_floating(kind):
            self.data = np.zeros(n, dtype=kind.to_pandas_dtype())
        else:
            self.data = np.empty(n, dtype=object)

    def put(self, at: np.ndarray, values: pa.Array) -> None:
        """``values`` (an Arrow array of this column's type) into rows ``at``."""
        if isinstance(values, pa.ChunkedArray):
            values = values.combine_chunks()
        if self.text:
            encoded = values.dictionary_encode()
            lookup = np.array([self.categories.setdefault(v, len(self.categories))
                               for v in encoded.dictionary.to_pylist()] + [-1], dtype=np.int32)
            index = pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False)
            self.data[at] = lookup[index]  # -1 (null) picks the -1 at the end
        elif self.data.dtype == object:
            self.data[at] = np.array(values.to_pylist() + [None], dtype=object)[:-1]
        elif pa.types.is_floating(self.kind):
            self.data[at] = values.to_numpy(zero_copy_only=False)
        else:
            if values.null_count:
                if self.nulls is None:
                    self.nulls = np.zeros(len(self.data), dtype=bool)
                self.nulls[at] = values.is_null().to_numpy(zero_copy_only=False)
                values = pc.fill_null(values, pa.scalar(0 if not pa.types.is_boolean(self.kind)
                                                        else False, self.kind))
            self.data[at] = values.to_numpy(zero_copy_only=False)

    def values(self) -> Any:
        """The column for the DataFrame (this object is spent)."""
        data: Any = self.data
        self.data = np.empty(0)
        if self.text:
            present = data >= 0
            used, first = np.unique(data[present], return_index=True)
            used = used[np.argsort(first, kind="stable")]  # categories by first appearance
            renumber = np.full(len(self.categories) + 1, -1, dtype=np.int32)
            renumber[used] = np.arange(len(used), dtype=np.int32)
            names = list(self.categories)
            categories = pd.Index([names[i] for i in used], dtype=object)
            return pd.Categorical.from_codes(renumber[data], categories=categories)
        if self.nulls is not None and self.nulls.any():
            if pa.types.is_boolean(self.kind):
                data = data.astype(object)
                data[self.nulls] = None
            else:
                data = data.astype(np.float64)
                data[self.nulls] = np.nan
        return data


def _same_or_all(column: pa.Array) -> pa.Array:
    """A batch's key column: its first value alone when every row holds it, else all of it."""
    if len(column) > 1 and len(column.unique()) == 1:
        return column.take(pa.array([0], pa.int64()))  # a copy: a slice keeps the batch's buffer
    return column


def _scalar(value: pa.Array) -> tuple[str, str]:
    """The one value of a one-row array, exact and hashable: its type and the repr of its
    Python value (1 is not 1.0 nor True)."""
    return str(value.type), repr(value[0].as_py())


def _numbered(column: pa.Array) -> tuple[np.ndarray, int]:
    """Each value of ``column`` numbered (int64, 0..k-1; equal values, equal numbers, null
    one number of its own), and k. Numbers and booleans by their bits in numpy (a float's
    bits: -0.0 is not 0.0), anything else by Arrow's dictionary encoding."""
    kind = column.type
    if pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_boolean(kind):
        nulls = column.is_null().to_numpy(zero_copy_only=False) if column.null_count else None
        zero = pa.scalar(False if pa.types.is_boolean(kind) else 0, kind)
        data = pc.fill_null(column, zero).to_numpy(zero_copy_only=False)
        if pa.types.is_floating(kind):
            data = data.astype(np.float64, copy=False).view(np.int64)
        unique, inverse = np.unique(data, return_inverse=True)
        del data
        inverse = inverse.reshape(-1).astype(np.int64, copy=False)
        if nulls is None:
            return inverse, len(unique)
        inverse[nulls] = len(unique)
        return inverse, len(unique) + 1
    encoded = column.dictionary_encode(null_encoding="encode")
    return (encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64),
            len(encoded.dictionary))


def _dense(code: np.ndarray) -> np.ndarray:
    """``code`` renumbered 0..k-1 in order of value (int64)."""
    _, inverse = np.unique(code, return_inverse=True)
    return inverse.reshape(-1).astype(np.int64, copy=False)


def _starts(code: np.ndarray) -> np.ndarray:
    """Where each run of equal values of ``code`` (sorted) starts."""
    if not len(code):
        return np.empty(0, dtype=np.int64)
    return np.flatnonzero(np.r_[True, code[1:] != code[:-1]])


def _median_times(code: np.ndarray, wall: np.ndarray, cpu: np.ndarray) -> dict[str, np.ndarray]:
    """``wall_ns`` and ``cpu_ns``, the median over the rows of each key (``code`` sorted: a
    key's rows together), one value per key in order of code; a key of one row (a sweep
    of seeds) is its own median, so only keys of several rows are grouped."""
    heads = _starts(code)
    counts = np.diff(np.r_[heads, len(code)])
    out = {"wall_ns": wall[heads], "cpu_ns": cpu[heads]}
    many = counts > 1
    if many.any():
        rows = np.repeat(many, counts)
        medians = pd.DataFrame({"code": code[rows], "wall_ns": wall[rows], "cpu_ns": cpu[rows]}
                               ).groupby("code", sort=True).median()
        for name in out:  # the groups' codes ascending, as the keys' heads
            out[name][many] = medians[name].to_numpy(dtype=np.float64)
    return out


def _places(position: np.ndarray | None, known: int, n: int) -> np.ndarray:
    """Where each of ``n`` chosen rows (in file order) goes in the frame: in sweep order by
    ``position`` (-1: a trial not in the config, placed after the ``known`` positions in
    file order); without positions, in file order."""
    if position is None:
        return np.arange(n, dtype=np.int64)
    key = np.where(position >= 0, position, known + np.arange(n, dtype=np.int64))
    place = np.empty(n, dtype=np.int64)
    place[np.argsort(key, kind="stable")] = np.arange(n, dtype=np.int64)
    return place


def _ints(column: pa.Array) -> np.ndarray:
    """An integer column as int32 numbers, nulls as 0."""
    return pc.fill_null(column, 0).to_numpy(zero_copy_only=False).astype(np.int32, copy=False)


def _floats(column: pa.Array) -> np.ndarray:
    """An integer column as float64 numbers, nulls as NaN."""
    return column.to_numpy(zero_copy_only=False).astype(np.float64, copy=False)
