"""Rewriting part files in place, atomically: missing columns added, retried error rows removed.

Both rewrite a part whole through :meth:`btlab.store.folder.ResultStore.put` (a
temporary outside the folder, flushed to disk, moved over the old part), keeping
the part's own metadata (its config, run, write time), so a reader sees the old
part or the new one, never a mix, and ``btlab show`` still finds the config last
run in the same part.

* :func:`bring_to_schema` -- every part gets the columns of this btlab's schema
  (a part written before a column was added gets it as nulls, or computed from its
  other columns where the new column is a function of them: ``censored`` from
  ``status``, :func:`btlab.store.schema.derived_column`) and every part
  the same column order, so that a reader taking the first part's schema
  (``pd.read_parquet(folder)``, Polars) drops no column and a reader that wants
  one schema for all files (Polars) finds it.
* :func:`drop_error_rows` -- the rows with status ``error`` of the trials a rerun
  retries are removed before those trials run again. In that order a crash
  in between leaves such a trial with no row, and the next run runs it; the
  other order could leave two rows of one trial.
"""

from __future__ import annotations

from typing import Container, Protocol

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from btlab.store.location import Location, PartInfo
from btlab.store.read import damaged, iter_batches, scan_parts, union_schema
from btlab.store.schema import derived_column


class PartRewriter(Protocol):
    """What a repair needs of the locked store it runs in (a
    :class:`~btlab.store.folder.ResultStore`): where the parts are, the schema they are brought
    to, a way to replace one part atomically, and the count of parts rewritten."""

    loc: Location
    schema: pa.Schema
    rewritten: int

    def put(self, path: str, table: pa.Table, stage: str = "") -> None: ...


def _columns(schema: pa.Schema) -> list[tuple[str, pa.DataType]]:
    return [(f.name, f.type) for f in schema]


def _read_whole(store: PartRewriter, info: PartInfo) -> pa.Table:
    try:
        return pq.read_table(info.path, filesystem=store.loc.fs)
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise damaged(store.loc, info.path, exc) from None


def _missing(field: pa.Field, table: pa.Table) -> pa.Array:
    """The values of ``field`` for a part that lacks it: derived from the part's other
    columns when it is a function of them (:func:`~btlab.store.schema.derived_column`), else
    nulls."""
    derived = derived_column(field.name, table)
    return pa.nulls(len(table), field.type) if derived is None else derived.cast(field.type)


def conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """``table``'s rows in ``schema`` (its columns, order and metadata): a column the table
    lacks is derived from its other columns or nulls (:func:`_missing`); an extra one is
    dropped."""
    columns = [table.column(f.name).cast(f.type) if f.name in table.column_names
               else _missing(f, table) for f in schema]
    return pa.Table.from_arrays(columns, schema=schema)


def bring_to_schema(store: PartRewriter, infos: list[PartInfo]) -> pa.Schema:
    """Rewrite the parts whose columns differ from the union of this btlab's and theirs.

    Args:
        store: the locked store (its :attr:`~btlab.store.folder.ResultStore.schema` is
            this btlab's row schema).
        infos: the checked parts of its destination.

    Returns:
        The schema new parts are written in: this btlab's columns, then any
        column only older parts have (so that new parts carry it too, as nulls),
        with the store's metadata.

    Raises:
        StoreWriteError: a rewrite failed (the part is unchanged).
    """
    target = union_schema(store.loc, infos, first=store.schema)
    for info in infos:
        if _columns(info.schema) == _columns(target):
            continue
        fixed = conform(_read_whole(store, info), target.with_metadata(info.schema.metadata))
        store.put(info.path, fixed, "rewrite")
        store.rewritten += 1
    return target.with_metadata(store.schema.metadata)


def drop_error_rows(store: PartRewriter, wanted: Container[str]) -> tuple[set[str], int]:
    """Remove the ``error`` rows of the trials in ``wanted``; return what stays done.

    A trial of ``wanted`` with an ``error`` row runs again; its error rows are
    removed from their parts now (an error row beside another row of the same
    trial, left by an older btlab, goes too). Rows with other statuses
    (``time_limit``, ``node_limit``, ``backtrack_limit`` and ``restart_limit`` are
    results) stay.

    Returns:
        (the trial ids with a row that is not an error, or not in ``wanted``;
        how many trials of ``wanted`` lost their error row and have no other row)

    Raises:
        ResultsError: a part is damaged (named).
        StoreWriteError: a rewrite failed (that part is unchanged).
    """
    loc, infos = scan_parts(store.loc)
    done: set[str] = set()
    retry: set[str] = set()
    holding: set[str] = set()
    for path, batch in iter_batches(loc, ["trial_id", "status"], infos):
        ids, status = batch.column("trial_id"), batch.column("status")
        error = pc.fill_null(pc.equal(status, "error"), False)
        done.update(pc.filter(ids, pc.invert(error)).to_pylist())
        hit = set(pc.filter(ids, error).to_pylist())
        mine = {t for t in hit if t in wanted}  # ``in`` only: wanted may be a TrialIds
        done.update(hit - mine)
        if mine:
            retry |= mine
            holding.add(path)
    if retry:
        drop = pa.array(sorted(retry), pa.string())
        for info in (i for i in infos if i.path in holding):
            table = _read_whole(store, info)
            gone = pc.and_(pc.fill_null(pc.equal(table.column("status"), "error"), False),
                           pc.is_in(table.column("trial_id"), value_set=drop))
            store.put(info.path, table.filter(pc.invert(gone)), "rewrite")
            store.rewritten += 1
    return done, len(retry - done)
