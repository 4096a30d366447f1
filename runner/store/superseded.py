"""Superseded rows: the rows of trials the config last run no longer asks for, kept beside
the results folder, never in it.

A results folder is the answer to the config last run into it: what pandas, pyarrow,
Polars or DuckDB read there (the folder, a ``*.parquet`` or a ``**`` glob of it) is
exactly the trials that config asks for. When a run's config no longer contains a trial
whose row is in the folder (a budget, a parameter or a plug-in's source changed, a matrix
value dropped), the run, holding the folder's lock and before its first trial starts
(:func:`supersede`), moves that row out of the folder into
:func:`~btlab.store.location.superseded_location` (``<parent>/.<name>.btlab/superseded/``
for a folder; beside the prefix for a URI; hidden inside a bucket root). Part files are
rewritten whole and atomically as every other write of the store: the superseded rows of
a part are written under ``superseded/`` first, then the part is rewritten without them (a
part holding superseded rows only is moved), so a crash in between leaves a row in both
places at worst, never in none.

Nothing is deleted by a run. A later run whose config asks for such a trial again takes its
row back to the folder (a resumed trial, not run again); a row in both places (a crash) is
kept at the top level and its superseded copy goes. ``--fresh`` deletes the superseded rows
with the folder's parts (:func:`clear_superseded`); ``btlab prune`` deletes only them
(:func:`prune`). ``btlab.load(..., superseded=True)`` and ``--all`` read them
(:func:`btlab.store.read.load_rows`). They live beside the folder: copying or moving the
folder leaves them behind.

Memory stays flat with the sweep: the config's trial ids are the run's
:class:`~btlab.sweep.trial_ids.TrialIds` (8 bytes a trial), the folder is read in batches of
its ``trial_id`` column, and the ids at the top level are held, as 8-byte numbers, only
while superseded rows exist to be checked against them.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from btlab.errors import ResultsError
from btlab.store.check import check_identity, damaged
from btlab.store.location import PART_SUFFIX, Location, PartInfo, locate, superseded_location
from btlab.store.lock import FolderLock, Lease
from btlab.store.read import iter_batches, list_parts, read_footer, scan_parts

#: The metadata keys that say which config (and plug-in sources) a part's rows answer.
RECORD_KEYS = ("btlab.config", "btlab.plugins")
#: What a part written before a key was stored means by its absence (no plug-in hashes:
#: a btlab from before they were stored; the config's trial ids then hash the plug-ins' files).
RECORD_DEFAULTS = {"btlab.plugins": "{}"}


class AsideStore(Protocol):
    """What :func:`supersede` needs of the locked :class:`~btlab.store.folder.ResultStore`."""

    loc: Location
    schema: pa.Schema
    identity: tuple[str | None, ...]
    rewritten: int

    def put(self, path: str, table: pa.Table, stage: str = "") -> None: ...

    def put_beside(self, aside: Location, table: pa.Table, name: str | None = None,
                   stage: str = "") -> str: ...

    def take_back(self, table: pa.Table) -> None: ...

    def move_beside(self, aside: Location, path: str) -> None: ...


@dataclass(frozen=True)
class Tidied:
    """What :func:`supersede` did.

    Attributes:
        moved: rows moved out of the folder (their trials are no longer in the config).
        parts: the folder's part files those rows came from.
        taken_back: superseded rows of the config's trials moved back into the folder.
        dropped: superseded copies of rows that are also in the folder (a crash left
            both), deleted.
        where: the superseded rows' location, as shown in messages.
    """

    moved: int = 0
    parts: int = 0
    taken_back: int = 0
    dropped: int = 0
    where: str = ""


@dataclass(frozen=True)
class Pruned:
    """What :func:`clear_superseded` (``btlab prune``, ``--fresh``) deleted.

    Attributes:
        rows: superseded rows deleted; ``files``: their part files; ``bytes``: the files' size.
        where: the superseded rows' location, as shown in messages.
    """

    rows: int
    files: int
    bytes: int
    where: str


def _codes(ids: list[Any]) -> np.ndarray:
    """The 16-hex-digit trial ids among ``ids`` as ``uint64`` (others left out)."""
    out = []
    for t in ids:
        if isinstance(t, str) and len(t) == 16:
            try:
                out.append(int(t, 16))
            except ValueError:
                pass
    return np.array(out, dtype=np.uint64)


def _in_sorted(sorted_codes: np.ndarray, ids: list[Any]) -> np.ndarray:
    """Which of ``ids`` are in ``sorted_codes`` (a sorted ``uint64`` array)."""
    hit = np.zeros(len(ids), dtype=bool)
    if not len(sorted_codes):
        return hit
    for at, t in enumerate(ids):
        if isinstance(t, str) and len(t) == 16:
            try:
                code = np.uint64(int(t, 16))
            except ValueError:
                continue
            k = int(np.searchsorted(sorted_codes, code))
            hit[at] = k < len(sorted_codes) and sorted_codes[k] == code
    return hit


def _wanted_mask(wanted: Any, ids: list[Any]) -> np.ndarray:
    many = getattr(wanted, "contains_many", None)  # a TrialIds: vectorised
    return many(ids) if many else np.array([i in wanted for i in ids], dtype=bool)


def _read_whole(loc: Location, info: PartInfo) -> pa.Table:
    try:
        return pq.read_table(info.path, filesystem=loc.fs)
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise damaged(loc, info.path, exc) from None


def aside_parts(loc: Location, expected: tuple[str | None, ...] | None = None
                ) -> tuple[Location, list[PartInfo]]:
    """The superseded parts of destination ``loc`` (their location, their footers).

    Raises:
        ResultsError: a damaged superseded part, or one of another config than
            ``expected`` (named, with the way out: ``btlab prune``).
    """
    aside = superseded_location(loc)
    _, infos = scan_parts(aside)
    if expected is not None and any(i.identity != expected for i in infos):
        try:
            check_identity(aside, infos, expected)
        except ResultsError as exc:
            raise ResultsError(f"{loc.text}: its superseded rows ({aside.text}) are not all of "
                               f"this config:\n{exc}\n  fix: btlab prune {loc.text} (deletes "
                               "the superseded rows only)") from None
    return aside, infos


def supersede(store: AsideStore, wanted: Any) -> Tidied:
    """Make the locked folder hold exactly the rows of ``wanted`` it has; keep the rest aside.

    In this order, each step a whole-part atomic write (a crash between two steps leaves a
    row in both places at worst, which the next call tidies: the top-level copy wins):

    1. superseded rows of trials in ``wanted`` are written back into the folder (as a part
       of this run, brought to its columns), then removed from ``superseded/``; superseded
       copies of rows also in the folder are removed;
    2. the folder's rows of trials not in ``wanted`` are written under ``superseded/``
       (keeping their part's metadata: the config that ran them), then their part is
       rewritten without them (moved whole when it holds nothing else).

    Args:
        store: the locked store (it writes every part).
        wanted: the config's trial ids (a :class:`~btlab.sweep.trial_ids.TrialIds`).

    Raises:
        ResultsError: a damaged part, or superseded parts of another config.
        StoreWriteError: a write failed (the parts before it intact; a rerun tidies).
    """
    loc = store.loc
    _, top = scan_parts(loc)
    aside, kept = aside_parts(loc, store.identity)
    stale: Counter[str] = Counter()
    record = {k: store.schema.metadata.get(k.encode(), b"").decode() for k in RECORD_KEYS}
    for info in top:  # an empty part of another config records a config no longer run
        if not info.rows and any(info.meta.get(k, RECORD_DEFAULTS.get(k, "")) != v
                                 for k, v in record.items()):
            stale[info.path] = 0
    chunks: list[np.ndarray] = []
    for path, batch in iter_batches(loc, ["trial_id"], top):
        ids = batch.column("trial_id").to_pylist()
        mine = _wanted_mask(wanted, ids)
        if not mine.all():
            stale[path] += int((~mine).sum())
        if kept:
            chunks.append(_codes(ids))
    present = np.unique(np.concatenate(chunks)) if chunks else np.empty(0, np.uint64)
    del chunks
    back = dropped = 0
    if kept:
        touched: set[str] = set()
        for path, batch in iter_batches(aside, ["trial_id"], kept):
            ids = batch.column("trial_id").to_pylist()
            if _wanted_mask(wanted, ids).any() or _in_sorted(present, ids).any():
                touched.add(path)
        for info in (i for i in kept if i.path in touched):
            table = _read_whole(aside, info)
            ids = table.column("trial_id").to_pylist()
            dup = _in_sorted(present, ids)
            home = _wanted_mask(wanted, ids) & ~dup
            if home.any():
                store.take_back(table.filter(pa.array(home)))  # first: never in neither place
                back += int(home.sum())
            dropped += int(dup.sum())
            rest = table.filter(pa.array(~(home | dup)))
            if rest.num_rows:
                store.put_beside(aside, rest, info.path.rsplit("/", 1)[1], "supersede")
            else:
                aside.fs.delete_file(info.path)
            store.rewritten += 1
    moved = 0
    for info in (i for i in top if i.path in stale):
        moved += stale[info.path]
        if stale[info.path] == info.rows:
            store.move_beside(aside, info.path)
        else:
            table = _read_whole(loc, info)
            mine = _wanted_mask(wanted, table.column("trial_id").to_pylist())
            store.put_beside(aside, table.filter(pa.array(~mine)), None, "supersede-aside")
            store.put(info.path, table.filter(pa.array(mine)), "supersede")
        store.rewritten += 1
    return Tidied(moved, sum(1 for n in stale.values() if n), back, dropped, aside.text)


def superseded_rows(loc: Location) -> int:
    """How many rows the superseded parts of ``loc`` hold (from their footers; 0 if none)."""
    try:
        return sum(i.rows for i in scan_parts(superseded_location(loc))[1])
    except ResultsError:
        return 0


def clear_superseded(loc: Location) -> Pruned:
    """Delete every superseded part of ``loc`` (call it holding its lock); what it freed."""
    aside = superseded_location(loc)
    rows = files = size = 0
    for path in list_parts(aside):
        try:
            rows += read_footer(aside, path).rows
        except ResultsError:
            pass  # a damaged file goes too: nothing of it can be read
        info = aside.fs.get_file_info(path)
        size += info.size or 0
        aside.fs.delete_file(path)
        files += 1
    if aside.local is not None:
        try:
            Path(aside.base).rmdir()
        except OSError:
            pass
    elif files:
        try:
            aside.fs.delete_dir(aside.base)
        except OSError:
            pass
    return Pruned(rows, files, size, aside.text)


def aside_name(aside: Location, name: str) -> str:
    """The ``fs`` path for part ``name`` under ``aside``, another name if it is taken."""
    path = aside.path(name)
    stem = name[: -len(PART_SUFFIX)]
    n = 0
    while aside.fs.get_file_info(path).type != pafs.FileType.NotFound:
        n += 1
        path = aside.path(f"{stem}-{n}{PART_SUFFIX}")
    return path


def prune(where: str | Path) -> Pruned:
    """Delete the superseded rows of a results folder or URI (``btlab prune``), only them.

    Takes the destination's lock (or lease) while it deletes, so a run writing there is
    never cut short.

    Returns:
        What was freed (:class:`Pruned`: rows, files, bytes; zeros when there were none).

    Raises:
        ResultsError: ``where`` is not a btlab results folder (no part file btlab wrote,
            and no superseded rows), or another run holds it (exit status 2).
    """
    loc = locate(where)
    _, infos = scan_parts(loc)
    ours = [i for i in infos if i.meta.get("btlab.config_name")]
    if not ours and not list_parts(superseded_location(loc)):
        found = (f"{len(infos)} Parquet file(s), none written by btlab" if infos
                 else "no part files" if loc.local is None or os.path.isdir(loc.base)
                 else "no such folder")
        raise ResultsError(f"{loc.text}: not a btlab results folder ({found})\n"
                           "  fix: give the folder `btlab run` wrote, e.g. results/<name>")
    check_identity(loc, infos, None)
    holder: FolderLock | Lease
    holder = FolderLock(loc.local) if loc.local is not None else Lease(loc)
    holder.acquire()
    try:
        return clear_superseded(loc)
    finally:
        holder.release()


__all__ = ["Pruned", "Tidied", "aside_name", "aside_parts", "clear_superseded", "prune",
           "supersede", "superseded_rows"]
