"""The rows the end-of-run headline needs, read part by part in constant memory.

``btlab run`` prints the headline tables of the whole folder when it ends.
Loading every row for that (one Python object per cell) made the driver's peak
memory grow with the number of trials; :func:`headline_rows` reads the folder in
Arrow batches of :data:`BATCH_ROWS`, twice, and keeps only what the headline uses:

1. The first pass reads the trial keys (the parameters, budget and seed: the
   repeats of one search), ``repeat``, ``status`` and the times into numpy arrays
   made once for every row of the parts (21 bytes a row: the repeat, the wall and
   CPU times, whether the trial failed); a key column is kept row by row only once
   a second value comes (8 bytes a row: a number, a float's bits, a text's number),
   so a seed sweep keeps its seeds and nothing of its other keys. Then the keys are
   numbered exactly, which tells the rows that count (the last row of each trial)
   and, per trial key, the row of its first repeat. Arrow's allocator is handed its
   free pages back after each part.
2. The second pass takes those rows, one per trial key, straight into the
   frame's columns at their final place (file order, or the config's sweep
   order: :mod:`btlab.analysis.config_order`): text as pandas categoricals (a
   byte or two a row), numbers as numpy arrays of their type (float64 for an
   integer column with nulls, as pandas reads them), ``wall_ns`` and ``cpu_ns``
   the median over the repeats. No Python object per trial, and no second copy
   of the frame to sort it. With ``share``, a column of one value in every row is
   that value broadcast: nothing per row.

``btlab run`` asks for the columns its tables declare they read
(:func:`btlab.views.headline.tables_columns`), with ``share``. That is what every
built-in headline starts from (:func:`btlab.views.tables.one_per_trial`). A sweep
of many repeats costs a few bytes per trial; a sweep of many trial keys (``seed:
1..200000``) the bytes of the columns that vary, per key (figures:
``docs/benchmarks.md``, "Driver memory of a seed sweep").
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
                  keys: Sequence[str], config: Any = None, share: bool = False) -> HeadlineRows:
    """Read a results folder (or URI) for the headline, in constant memory per trial key.

    Args:
        where: the folder or URI.
        columns: the columns of the frame (``trial_id`` never is one); the others
            the tables need (``trial_id``, the ``keys``, ``repeat``, ``status``, the
            times, ``error`` for the first message) are read whether or not they are
            among them.
        wanted: the trial ids of the config; rows of other trials are counted
            in ``stale`` only.
        keys: the columns that tell searches apart (parameters, budget, seed).
        config: the :class:`~btlab.config.model.SweepConfig` run (or the folder, for
            the config stored in it): the rows come in its sweep order
            (:func:`btlab.analysis.config_order.config_positions`; rows of trials
            not in it, or every row when it cannot be expanded, after, in the order
            read). None: in the order read.
        share: a column of one value in every row is that value broadcast, read-only
            (:class:`_Column`), for tables that only read their rows.

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
    timed: list[str] = [c for c in ("wall_ns", "cpu_ns") if c in kept]  # the times shown
    scan = _Scan(loc, infos, schema_all, [c for c in keys if c in schema_all.names], wanted,
                 positions, timed)
    stale = len(scan.stale)
    chosen, failed_at, times, trials = _fold(scan.codes(), scan)
    place = _places(scan.position[chosen] if scan.position is not None else None,
                    len(positions) if positions else 0, len(chosen))
    del scan
    fields = [schema_all.field(c) for c in kept]
    out = {f.name: _Column(f.type, len(chosen), share) for f in fields if f.name not in times}
    first_error = _take(loc, infos, schema_all, ["trial_id", *out, "error"], wanted, chosen,
                        place, out, int(failed_at[0]) if len(failed_at) else None)
    frame_columns: dict[str, Any] = {}
    for f in fields:
        if f.name in out:
            frame_columns[f.name] = out.pop(f.name).values()
        else:  # wall_ns, cpu_ns: the median over the repeats, per trial key
            frame_columns[f.name] = np.empty(len(chosen), dtype=np.float64)
            frame_columns[f.name][place] = times.pop(f.name)
    del times
    frame = pd.DataFrame(frame_columns, columns=kept, copy=False)
    return HeadlineRows(frame, trials, stale, len(failed_at), first_error)


def _fold(code: np.ndarray, scan: _Scan
          ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray], int]:
    """The rows that count: a trial is (key, repeat), its last row counts (lexsort is
    stable: file order kept); the row shown per trial key is its first repeat's, with the
    times the median over its repeats. ``code``: :meth:`_Scan.codes`. Returns (the rows
    shown, in file order; the failed rows that count, sorted; the times per row shown; the
    trials). Each array is let go as soon as it is used up (a row costs a few of them at
    a time); a sweep whose every row is a trial key of its own (a seed sweep) is taken as
    read."""
    if _each_its_own(code, scan.repeat):
        return (np.arange(len(code), dtype=np.int64), np.flatnonzero(scan.failed),
                scan.times, len(code))
    order = np.lexsort((scan.repeat, code))
    code = code[order]  # by key, then repeat
    repeat = scan.repeat[order]
    last = np.ones(len(order), dtype=bool)
    last[:-1] = (code[1:] != code[:-1]) | (repeat[1:] != repeat[:-1])
    del repeat
    keep = order[last]  # the rows that count, by key and then repeat
    code = code[last]
    del order, last
    failed_at = np.sort(keep[scan.failed[keep]])
    trials = len(keep)
    times = _median_times(code, {name: t[keep] for name, t in scan.times.items()})
    heads = _starts(code)  # each key's first repeat
    del code
    chosen = keep[heads]
    del keep, heads
    by_file = np.argsort(chosen, kind="stable")
    chosen = chosen[by_file]  # the rows shown, one per trial key, in file order
    times = {name: t[by_file] for name, t in times.items()}
    del by_file
    return chosen, failed_at, times, trials


def _each_its_own(code: np.ndarray, repeat: np.ndarray) -> bool:
    """Whether every row is a trial key of its own with no repeat (then each row counts,
    shown as it is): no repeat but the first, and no key twice (one sort of the keys)."""
    if repeat.any():
        return False
    ordered = np.sort(code)
    return bool((ordered[1:] != ordered[:-1]).all())


class _Scan:
    """The first pass over the rows of the config's trials.

    Keeps per row (file order, stale rows left out) the repeat, the wall and CPU times,
    whether it failed and, with ``positions``, its trial's place in sweep order (-1: not
    in it), in numpy arrays made once for the rows of every part (no Arrow buffer of a
    batch outlives it); and each key column as a :class:`_Key`, numbered by :meth:`codes`.
    """

    def __init__(self, loc: Any, infos: list, schema: pa.Schema, key_cols: list[str],
                 wanted: Container[str], positions: dict[str, int] | None,
                 timed: list[str]) -> None:
        self.stale: set[str] = set()
        size = sum(int(info.rows) for info in infos)  # every row; the config's are fewer
        self.repeat = np.zeros(size, dtype=np.int32)
        self.times = {name: np.zeros(size, dtype=np.float64) for name in timed}
        self.failed = np.zeros(size, dtype=bool)
        self.position = np.zeros(size, dtype=np.int64) if positions is not None else None
        self.keys = [_Key(schema.field(name).type, size) for name in key_cols]
        read = dict.fromkeys(["trial_id", *key_cols, "repeat", "status", *timed])
        fields = [schema.field(c) for c in read if c in schema.names]
        seq = 0
        for batch in _batches(loc, infos, fields, wanted, self.stale):
            at = slice(seq, seq + batch.num_rows)
            if at.stop > len(self.repeat):  # more rows than the footers said (a part rewritten)
                self._grow(at.stop)
            for key, name in zip(self.keys, key_cols):
                key.put(at, batch.column(name))
            self.repeat[at] = pc.fill_null(batch.column("repeat"), 0).to_numpy(
                zero_copy_only=False)
            for name, values in self.times.items():
                values[at] = batch.column(name).to_numpy(zero_copy_only=False)
            failed = pc.fill_null(pc.equal(batch.column("status"), "error"), False)
            self.failed[at] = failed.to_numpy(zero_copy_only=False)
            if self.position is not None and positions is not None:
                ids = batch.column("trial_id").to_pylist()
                self.position[at] = np.fromiter((positions.get(i, -1) for i in ids),
                                                dtype=np.int64, count=len(ids))
                del ids
            seq = at.stop
            del batch, failed
        self.rows = seq
        # views of the config's rows (stale rows leave a few unused at the end)
        self.repeat, self.failed = self.repeat[:seq], self.failed[:seq]
        self.times = {name: values[:seq] for name, values in self.times.items()}
        if self.position is not None:
            self.position = self.position[:seq]

    def _grow(self, size: int) -> None:
        """Room for ``size`` rows."""
        self.repeat, self.failed = _longer(self.repeat, size), _longer(self.failed, size)
        self.times = {name: _longer(values, size) for name, values in self.times.items()}
        if self.position is not None:
            self.position = _longer(self.position, size)
        for key in self.keys:
            key.grow(size)

    def codes(self) -> np.ndarray:
        """Per row, its trial key's number (int64): equal keys, equal numbers.

        Exact: each key column's values are numbered (:meth:`_Key.numbers`: null a value
        of its own, floats by their bits) and combined with the numbers of the columns
        before. A column with one value in every row is skipped; the numbers of a sweep
        whose keys differ in one column only (a seed sweep) are that column's values.
        """
        code: np.ndarray | None = None
        distinct: int | None = 1  # None: code holds values, not numbers 0..k-1
        for key in self.keys:
            got = key.numbers(self.rows, raw=code is None)
            if got is None:
                continue  # one value in every row: it tells no rows apart
            mine, count = got
            if code is None:
                code, distinct = mine, count
                continue
            if distinct is None:
                code = _dense(code)
                distinct = int(code.max()) + 1 if len(code) else 1
            step = count if count is not None else int(mine.max()) + 1  # (numbers: not raw)
            code = code * step + mine
            distinct *= step
            del mine
            if distinct >= 2 ** 31:  # renumbered 0..k-1 before the products could overflow
                code = _dense(code)
                distinct = int(code.max()) + 1 if len(code) else 1
        self.keys = []
        return code if code is not None else np.zeros(self.rows, dtype=np.int64)


class _Key:
    """One key column of the first pass: the one value of every row so far, and only
    once a second value comes, a number per row (int64: an integer or boolean itself, a
    float's bits; text numbered in order of first appearance), and where nulls are."""

    def __init__(self, kind: pa.DataType, size: int) -> None:
        self.kind, self.size = kind, size
        self.value: Any = _NONE  # the one value so far (None: null)
        self.data: np.ndarray | None = None
        self.nulls: np.ndarray | None = None
        self.number = (pa.types.is_integer(kind) or pa.types.is_boolean(kind)
                       or pa.types.is_floating(kind))
        self.names: dict[Any, int] = {}  # a value (not a number) -> its number

    def put(self, at: slice, values: pa.Array) -> None:
        """The values of rows ``at``."""
        if isinstance(values, pa.ChunkedArray):
            values = values.combine_chunks()
        data = self.data
        if data is None:
            one = _one_value(values, self.kind)
            if one is not _NONE and (self.value is _NONE or _same(one, self.value)):
                self.value = one
                return
            data = self._allocate(at.start)
        if values.null_count:
            if self.nulls is None:
                self.nulls = np.zeros(self.size, dtype=bool)
            self.nulls[at] = values.is_null().to_numpy(zero_copy_only=False)
        if self.number:
            zero = pa.scalar(False if pa.types.is_boolean(self.kind) else 0, self.kind)
            got = pc.fill_null(values, zero).to_numpy(zero_copy_only=False)
            if pa.types.is_floating(self.kind):
                got = got.astype(np.float64, copy=False).view(np.int64)
            data[at] = got
        else:
            encoded = values.dictionary_encode()
            lookup = np.array([self.names.setdefault(v, len(self.names))
                               for v in encoded.dictionary.to_pylist()] + [0], dtype=np.int64)
            index = pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False)
            data[at] = lookup[index]  # a null picks the 0 at the end (nulls: marked)

    def grow(self, size: int) -> None:
        """Room for ``size`` rows."""
        self.size = size
        if self.data is not None:
            self.data = _longer(self.data, size)
        if self.nulls is not None:
            self.nulls = _longer(self.nulls, size)

    def _allocate(self, filled: int) -> np.ndarray:
        """The numbers of every row (returned), the first ``filled`` rows the one value so
        far."""
        data = self.data = np.zeros(self.size, dtype=np.int64)
        if not filled or self.value is _NONE:
            return data
        if self.value is None:
            self.nulls = np.zeros(self.size, dtype=bool)
            self.nulls[:filled] = True
        elif self.number:
            data[:filled] = self.value[1] if isinstance(self.value, tuple) else int(self.value)
        else:
            data[:filled] = self.names.setdefault(self.value, len(self.names))
        return data

    def numbers(self, rows: int, raw: bool) -> tuple[np.ndarray, int | None] | None:
        """The number of each of the first ``rows`` rows and how many numbers there are
        (0..k-1, null a number of its own); None when every row holds one value. ``raw``:
        the row values themselves may stand for the numbers (k None), when there are no
        nulls."""
        if self.data is None:
            return None
        data, self.data = self.data[:rows], None
        nulls = self.nulls[:rows] if self.nulls is not None and self.nulls[:rows].any() \
            else None
        if raw and nulls is None:
            return data, None
        unique, inverse = np.unique(data, return_inverse=True)
        del data
        inverse = inverse.reshape(-1).astype(np.int64, copy=False)
        if nulls is None:
            return inverse, len(unique)
        inverse[nulls] = len(unique)
        return inverse, len(unique) + 1


def _batches(loc: Any, infos: list, fields: list, wanted: Container[str],
             stale: set[str] | None) -> Iterator[pa.RecordBatch]:
    """The rows of the config's trials (``trial_id`` in ``wanted``) in the checked parts
    ``infos`` of ``loc``, ``fields`` only, :data:`BATCH_ROWS` at a time; the ids of the
    other rows go into ``stale`` (when given).

    Part by part with :class:`pyarrow.parquet.ParquetFile` (a dataset scanner
    reads ahead and keeps more), the memory Arrow's allocator keeps released after
    each; a column a part lacks (written by an older btlab) reads as nulls. ``infos``
    are what :func:`btlab.store.read.checked_parts` gave; a part damaged past its footer
    raises the error naming it.

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
        # Arrow's allocator (mimalloc) keeps what a part's pages took for its next
        # allocations, and over many parts that grows with the rows read: give it back
        pa.default_memory_pool().release_unused()


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
        if hi > lo:  # every row of the batch shown: the batch itself, no copy
            rows = batch if hi - lo == batch.num_rows else \
                batch.take(pa.array(chosen[lo:hi] - seq, pa.int64()))
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
    anything else an object array of Python values. With ``share``, a column that holds
    one value (or null) in every row is that value broadcast (``numpy.broadcast_to``:
    read-only, no memory per row), of the same dtype; its array is made only when a
    second value comes.
    """

    def __init__(self, kind: pa.DataType, n: int, share: bool = False) -> None:
        self.kind, self.n = kind, n
        self.nulls: np.ndarray | None = None
        self.text = pa.types.is_string(kind) or pa.types.is_large_string(kind)
        self.number = (pa.types.is_integer(kind) or pa.types.is_boolean(kind)
                       or pa.types.is_floating(kind))
        self.categories: dict[str, int] = {}
        self.data: np.ndarray = np.empty(0)
        self.value: Any = _NONE  # with share: the one value so far (None: null)
        self.shared = share and n > 0 and (self.text or self.number)
        if not self.shared:
            self._allocate()

    def _allocate(self) -> None:
        """The column's array, every row the one value so far (:attr:`value`)."""
        n, value = self.n, self.value
        if self.text:
            code = -1 if value is None or value is _NONE else \
                self.categories.setdefault(value, len(self.categories))
            self.data = np.full(n, code, dtype=np.int32)
        elif self.number:
            dtype = self.kind.to_pandas_dtype()
            if value is _NONE:
                self.data = np.zeros(n, dtype=dtype)
            elif value is None and pa.types.is_floating(self.kind):
                self.data = np.full(n, np.nan, dtype=dtype)
            elif value is None:
                self.data = np.zeros(n, dtype=dtype)
                self.nulls = np.ones(n, dtype=bool)
            else:
                self.data = np.full(n, _python(value), dtype=dtype)
        else:
            self.data = np.empty(n, dtype=object)
        self.shared = False

    def put(self, at: np.ndarray, values: pa.Array) -> None:
        """``values`` (an Arrow array of this column's type) into rows ``at``."""
        if isinstance(values, pa.ChunkedArray):
            values = values.combine_chunks()
        if self.shared:
            one = _one_value(values, self.kind)
            if one is not _NONE and (self.value is _NONE or _same(one, self.value)):
                self.value = one
                return
            self._allocate()
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
        if self.shared:
            return self._broadcast()
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

    def _broadcast(self) -> Any:
        """The one value of every row as a read-only column of the dtype :meth:`values`
        gives (a null integer float64 NaN, a null boolean object None)."""
        value, n = self.value, self.n
        if self.text:
            categories = pd.Index([] if value is None else [value], dtype=object)
            code = np.int8(-1 if value is None else 0)
            return pd.Categorical.from_codes(np.broadcast_to(code, (n,)), categories=categories)
        if value is None:
            if pa.types.is_boolean(self.kind):
                one = np.array(None, dtype=object)
            else:
                one = np.array(np.nan, dtype=np.float64)
        else:
            one = np.array(_python(value), dtype=self.kind.to_pandas_dtype())
        return np.broadcast_to(one, (n,))


#: No value yet (:class:`_Column`), or a batch of more than one value (:func:`_one_value`).
_NONE = object()


def _one_value(values: pa.Array, kind: pa.DataType) -> Any:
    """The one value every row of ``values`` holds: None when all are null, the Python
    value (a float as ``("float", its bits)``: -0.0 is not 0.0), or :data:`_NONE` when
    they hold more than one value (or none: no rows)."""
    n = len(values)
    if not n or 0 < values.null_count < n:
        return _NONE
    if values.null_count == n:
        return None
    if pa.types.is_floating(kind):
        bits = values.to_numpy(zero_copy_only=False).astype(np.float64).view(np.int64)
        return ("float", int(bits[0])) if bool((bits == bits[0]).all()) else _NONE
    if pa.types.is_integer(kind) or pa.types.is_boolean(kind):
        data = values.to_numpy(zero_copy_only=False)
        return data[0].item() if bool((data == data[0]).all()) else _NONE
    return values[0].as_py() if len(values.unique()) == 1 else _NONE


def _python(value: Any) -> Any:
    """A value of :func:`_one_value` as the Python value it stands for."""
    if isinstance(value, tuple):
        return float(np.array(value[1], dtype=np.int64).view(np.float64))
    return value


def _same(one: Any, value: Any) -> bool:
    """Whether two values of :func:`_one_value` are the same value (1 is not True)."""
    return type(one) is type(value) and one == value


def _dense(code: np.ndarray) -> np.ndarray:
    """``code`` renumbered 0..k-1 in order of value (int64)."""
    _, inverse = np.unique(code, return_inverse=True)
    return inverse.reshape(-1).astype(np.int64, copy=False)


def _starts(code: np.ndarray) -> np.ndarray:
    """Where each run of equal values of ``code`` (sorted) starts."""
    if not len(code):
        return np.empty(0, dtype=np.int64)
    return np.flatnonzero(np.r_[True, code[1:] != code[:-1]])


def _median_times(code: np.ndarray, times: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``wall_ns`` and ``cpu_ns``, the median over the rows of each key (``code`` sorted: a
    key's rows together), one value per key in order of code; a key of one row (a sweep
    of seeds) is its own median, so only keys of several rows are grouped."""
    heads = _starts(code)
    counts = np.diff(np.r_[heads, len(code)])
    out = {name: values[heads] for name, values in times.items()}
    many = counts > 1
    if many.any():
        rows = np.repeat(many, counts)
        grouped = code[rows]
        for name, values in times.items():
            out[name][many] = _run_medians(grouped, values[rows])  # keys in order of code
    return out


def _run_medians(code: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The median of ``values`` over each run of equal ``code`` (sorted), one per run in
    order, as pandas' median gives it: NaN left out (NaN for a run of NaN only), the mean
    of the two middle values of an even count. A sort of the values, no grouping frame."""
    values = values[np.lexsort((values, code))]  # by run, then value (NaN last)
    heads = _starts(code)
    known = np.diff(np.r_[heads, len(code)]) - np.add.reduceat(np.isnan(values), heads)
    lo = heads + np.maximum(known - 1, 0) // 2
    hi = heads + known // 2
    medians = (values[lo] + values[np.minimum(hi, len(values) - 1)]) / 2
    medians[known == 0] = np.nan
    return medians


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


def _longer(values: np.ndarray, size: int) -> np.ndarray:
    """``values`` followed by zeros up to ``size`` rows."""
    return np.concatenate([values, np.zeros(size - len(values), dtype=values.dtype)])
