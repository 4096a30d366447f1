"""The on-disk results: one Parquet dataset per sweep, written crash-safe.

A results folder (``results/<name>/``, any ``--out`` path, or a filesystem URI
such as ``file:///shared/x`` or ``s3://bucket/prefix``) holds part files
``part-<run_id>-<seq>.parquet`` and nothing else, so pandas, pyarrow, DuckDB and
Polars read it given its path. Each part is written whole under a temporary
name outside the folder (in the hidden work folder ``<parent>/.<name>.btlab/``,
:func:`btlab.store.read.work_dir`), flushed to disk and moved into place: a
reader sees a part entirely or not at all, whatever kills the run.

Every part carries in its metadata the schema version (:data:`SCHEMA_VERSION`),
the config name, problem and expanded config. A folder holding another config's
rows or another schema version, in any file, is refused. A run brings parts
written before a column was added to the current columns
(:mod:`btlab.store.repair`), so readers taking the first part's schema
(``pd.read_parquet(folder)``) drop none. One run writes a destination at a time
(:mod:`btlab.store.lock`). A failed write (no space, quota, I/O error,
read-only) raises :class:`~btlab.errors.StoreWriteError` (exit status 3) once,
leaving the parts written before intact and no temporary behind
(:mod:`btlab.store.writes`).

The row layout lives in :mod:`btlab.store.schema`, reading in :mod:`btlab.store.read`;
their public names are re-exported here.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Container, Mapping

import pyarrow as pa
import pyarrow.parquet as pq

from btlab.config.model import SweepConfig
from btlab.errors import ResultsError, StoreWriteError
from btlab.problems.censoring import censored_status
from btlab.store.check import check_identity, check_not_nested, check_not_newer
from btlab.store.checkpoints import Checkpoints
from btlab.store.location import PART_PREFIX, PART_SUFFIX, Location, is_uri, locate, work_dir
from btlab.store.lock import LEGACY_LOCK, FolderLock, Lease, lease_key
from btlab.store.read import (
    checked_parts,
    config_of,
    list_parts,
    load_rows,
    newest_meta,
    part_files,
    part_metas,
    parts_dataset,
    read_footer,
    read_meta,
    read_parts,
    remote_parts,
    scan_parts,
)
from btlab.store.repair import bring_to_schema, conform, drop_error_rows
from btlab.store.schema import (
    SCHEMA_VERSION,
    btlab_version,
    row_schema,
    software_provenance,
    version_family,
)
from btlab.store.superseded import (
    RECORD_DEFAULTS,
    RECORD_KEYS,
    Pruned,
    Tidied,
    aside_name,
    clear_superseded,
    supersede,
)
from btlab.store.writes import (
    TEST_FAULT_ENV,
    check_writable,
    flush_rows_hook,
    inject_fault,
    move_legacy_checkpoints,
    remove_remote_temporaries,
    remove_stale_temporaries,
    rmdir_quietly,
    write_failure,
    write_local,
    write_remote,
)

# Public names: this module's writer and, re-exported, the row layout of btlab.store.schema and
# the readers of btlab.store.read (``from btlab.store.folder import part_files`` keeps working).
__all__ = [
    "LEGACY_LOCK", "PART_PREFIX", "SCHEMA_VERSION", "ResultStore", "btlab_version", "config_of",
    "is_uri", "load_rows", "new_run_id", "newest_meta", "part_files", "part_metas",
    "parts_dataset", "read_meta", "remote_parts", "remove_stale_temporaries", "row_schema",
    "work_dir", "TEST_FAULT_ENV",
]

def new_run_id() -> str:
    """A run id: UTC time to the second plus 6 random hex digits.

    For example ``20261129T221500-3fa2c1``.
    """
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:6]


class ResultStore:
    """Appends rows of one sweep to a results folder or URI in crash-safe part files.

    Args:
        out: ``results/<name>``, another folder, or a filesystem URI
            (``file:///shared/x``, ``s3://bucket/prefix``: anything ``pyarrow.fs``
            opens); created at the first write.
        config: the validated config (its name, problem and expanded form go
            into every part's metadata).
        flush_rows: a part is written when this many rows are waiting...
        flush_seconds: ...or when the oldest waiting row is older than this.
            None (the default) adapts: 2 s at first, growing with the run's
            age (a thirtieth of it) up to 60 s, so that a long run writes few
            parts and a crash loses at most a minute of work.
        fresh: the run starts over (``--fresh``): its parts are not checked,
            since :meth:`clear` will delete them.
        plugins: the source hash of each plug-in the config's trials run
            (``{"module:function": hash}``), stored with the config in every part's
            metadata (``btlab.plugins``): with the config, they give the trial ids of
            the config last run without hashing the plug-in files as they are now.

    Raises:
        ResultsError: ``out`` is a file, is not writable, or holds results of
            another config or another schema version, or a damaged part.
    """

    def __init__(self, out: str | Path, config: SweepConfig, *, flush_rows: int = 5000,
                 flush_seconds: float | None = None, fresh: bool = False,
                 plugins: Mapping[str, str] | None = None):
        self.loc: Location = locate(out)
        self.location = out
        self.folder: Path | None = self.loc.local
        self.config = config
        self.run_id = new_run_id()
        self.flush_rows = flush_rows_hook(flush_rows)
        self.flush_seconds = flush_seconds
        self.fresh = fresh
        self._rows: list[dict[str, Any]] = []
        self._seq = 0
        self._aside_seq = 0
        self._started = self._last_flush = time.monotonic()
        self.rows_written = 0
        self.rewritten = 0
        self._lock: FolderLock | None = None
        self._lease: Lease | None = None
        self._created: list[Path] = []
        self._broken: StoreWriteError | None = None
        self._provenance = {
            "run_id": self.run_id, "problem": config.problem.name, **software_provenance()}
        self.identity: tuple[str | None, ...] = (
            version_family(str(SCHEMA_VERSION)), config.name, config.problem.name)
        meta = {"btlab.schema_version": str(SCHEMA_VERSION),
                "btlab.config_name": config.name, "btlab.problem": config.problem.name,
                "btlab.config": json.dumps(config.expanded()),  # key order kept: matrix order
                "btlab.run_id": self.run_id, "btlab.overrides": json.dumps(config.overrides),
                "btlab.plugins": json.dumps(dict(sorted((plugins or {}).items())))}
        self._meta = meta
        self.schema = row_schema(config.problem).with_metadata(meta)
        if self.folder is not None:
            check_not_nested(self.folder)
            check_writable(self.folder)
        if not fresh:
            self._check_contents()

    # ------------------------------------------------------------------ checks

    def _check_contents(self) -> list:
        """Every file of the destination readable and of this config; returns their footers."""
        try:
            loc, infos = scan_parts(self.loc)
        except OSError as exc:  # a remote store that cannot be listed
            raise ResultsError(f"{self.loc.text}: cannot be read: {exc}\n"
                               "  fix: check the URI and the credentials") from None
        check_not_newer(self.loc, infos)
        if infos and not any(i.identity == self.identity for i in infos):
            meta = infos[-1].meta
            version = meta.get("btlab.schema_version")
            if version_family(version) != self.identity[0] and meta.get("btlab.config_name"):
                raise ResultsError(
                    f"{self.loc.text}: holds results in schema version {version or 'unknown'}, "
                    f"this btlab writes version {SCHEMA_VERSION}\n"
                    f"  fix: write elsewhere with --out {self.elsewhere()}, or start over with "
                    "--fresh (it deletes the rows there)")
            name, stored = meta.get("btlab.config_name"), meta.get("btlab.problem")
            raise ResultsError(
                f"{self.loc.text}: holds results of config {name!r} ({stored}), "
                f"not of {self.config.name!r} ({self.config.problem.name})\n"
                f"  fix: write elsewhere with --out {self.elsewhere()}, or start over with "
                f"--fresh (it deletes the rows of {name!r} there)")
        checked_parts(loc, self.identity)
        return infos

    def elsewhere(self) -> str:
        """A destination for ``--out`` beside this one, named after the config, for messages."""
        text = self.loc.text.rstrip("/")
        parent, _, here = text.rpartition("/")
        name = self.config.name if self.config.name != here else f"{here}-2"
        return f"{parent}/{name}" if parent else name

    # ------------------------------------------------------------------ lock

    def lock(self) -> int:
        """Take the destination (lock or lease), tidy it, bring old parts to this schema.

        Deletes the temporaries a killed run left, moves what an older btlab kept
        inside the folder (its lock file, split checkpoints) out of it, and
        rewrites parts that lack columns of this btlab's schema (nulls there).
        Held until :meth:`close` (a lock is released by the kernel however this
        process exits; a lease expires).

        Returns:
            How many stale temporary files were deleted.

        Raises:
            ResultsError: another btlab run holds the destination.
            StoreWriteError: the lock or a rewrite cannot be written (disk full...).
        """
        try:
            if self.folder is not None:
                inject_fault("lock")
                self._make_folder()
                self._lock = FolderLock(self.folder)
                self._lock.acquire()
                stale = remove_stale_temporaries(self.folder)
                move_legacy_checkpoints(self.folder)
            else:
                self._lease = Lease(self.loc)
                self._lease.acquire()
                stale = remove_remote_temporaries(self.loc.fs, self._tmp_prefix())
            if not self.fresh:
                self.schema = bring_to_schema(self, self._check_contents())
        except OSError as exc:
            self._release()
            raise self._failure(exc, "locking", str(self.loc.text)) from None
        except BaseException:
            self._release()
            raise
        return stale

    # ------------------------------------------------------------------ what is there

    def has_parts(self) -> bool:
        """True when the destination holds at least one part file."""
        return bool(list_parts(self.loc))

    def checkpoints(self):
        """The :class:`~btlab.store.checkpoints.Checkpoints` of this run's split trials.

        In the work folder of a local destination; for a remote one, in the local
        staging folder ``results/.staging/<name>-<hash of the URI>/split``.
        """
        if self.folder is not None:
            return Checkpoints(self.folder)
        digest = hashlib.blake2b(self.loc.text.encode(), digest_size=4).hexdigest()
        return Checkpoints(Path("results") / ".staging" / f"{self.config.name}-{digest}" /
                           "split", directory=True)

    def existing_ids(self) -> set[str]:
        """Trial ids written at the destination, whatever their status."""
        table = read_parts(self.loc, ["trial_id"])
        return set() if table is None else set(table.column("trial_id").to_pylist())

    def resume(self, wanted: Container[str], retry_errors: bool = True) -> tuple[set[str], int]:
        """The trial ids a rerun skips, after taking out the error rows of trials to retry.

        Only what is at the destination counts. With ``retry_errors``, the rows
        with status ``error`` of trials in ``wanted`` are removed from their part
        files now, before those trials run again (:func:`btlab.store.repair.drop_error_rows`),
        so a crash in between leaves the trial with no row, which the next run
        runs, and never with two.

        Returns:
            (trial ids done, how many trials with error rows will run again)
        """
        if not retry_errors:
            return self.existing_ids(), 0
        return drop_error_rows(self, wanted)

    def record_config(self) -> bool:
        """Write an empty part carrying this config, if the newest part carries another.

        A rerun with a changed config (or changed plug-in sources) that has
        nothing left to run writes no rows; this records that the config changed,
        so that ``btlab show`` compares the rows on disk to the config last run.

        Returns:
            True when a part was written.
        """
        stored = newest_meta(self.loc)
        # a part written before plug-in hashes were stored ran none if its config has none
        if all(stored.get(k, RECORD_DEFAULTS.get(k)) == self._meta[k] for k in RECORD_KEYS):
            return False
        self._write(pa.Table.from_pylist([], schema=self.schema))
        return True

    def clear(self) -> int:
        """Delete this folder's part files (``--fresh``); returns how many.

        Only btlab's own ``part-*.parquet`` files go, and only when every file
        there is of one config (its name and problem, a schema version this
        btlab reads): a folder wholly of another config is taken over, but a
        part of another config among the folder's own, or one written by a
        newer btlab, refuses the folder first
        (:func:`~btlab.store.read.check_identity`), deleting nothing. A part
        whose footer cannot be read at all (damaged) is deleted, since nothing
        of it can be read.

        Raises:
            ResultsError: a file of another config or of a newer btlab (named), or
                a damaged file that is not one of btlab's part files.
        """
        loc = self.loc
        paths = list_parts(loc)
        ours = [p for p in paths if p.rsplit("/", 1)[0] == loc.base and
                p.rsplit("/", 1)[1].startswith(PART_PREFIX) and p.endswith(PART_SUFFIX)]
        infos = []
        for path in paths:
            try:
                infos.append(read_footer(loc, path))
            except ResultsError:
                if path not in ours:
                    raise
        check_identity(loc, infos, None)  # one config throughout, whichever: a mix is refused
        for path in ours:
            loc.fs.delete_file(path)
        return len(ours)

    def clear_superseded(self) -> Pruned:
        """Delete the destination's superseded rows (``--fresh``; ``btlab prune`` alone)."""
        return clear_superseded(self.loc)

    def supersede(self, wanted: Container[str]) -> Tidied:
        """Move the rows of trials not in ``wanted`` out of the folder, beside it; take back
        superseded rows of trials in ``wanted`` (:func:`btlab.store.superseded.supersede`)."""
        try:
            return supersede(self, wanted)
        except OSError as exc:
            raise self._failure(exc, "moving superseded rows of", str(self.loc.text)) from None

    def take_back(self, table: pa.Table) -> None:
        """Write superseded rows of this config's trials back as this run's next part."""
        self._write(conform(table, self.schema))

    def put_beside(self, aside: Location, table: pa.Table, name: str | None = None,
                   stage: str = "") -> str:
        """Write ``table`` whole, atomically, as a superseded part under ``aside`` (replacing
        part ``name`` there; None: a new name of this run). Returns its ``fs`` path.

        Raises:
            StoreWriteError: the write failed (nothing is left half-written).
        """
        if name is None:
            name = f"{PART_PREFIX}{self.run_id}-s{self._aside_seq:05d}{PART_SUFFIX}"
            self._aside_seq += 1
            path = aside_name(aside, name)
        else:
            path = aside.path(name)
        try:
            if aside.local is not None:
                Path(aside.base).mkdir(parents=True, exist_ok=True)
                write_local(Path(path), table, Path(aside.base).parent, stage)
            else:
                if self._lease is not None:
                    self._lease.check()
                write_remote(aside.fs, path, table, self._tmp_prefix(), stage)
        except OSError as exc:
            raise self._failure(exc, "writing", aside.shown(path)) from None
        return path

    def move_beside(self, aside: Location, path: str) -> None:
        """Move part ``path`` of the folder whole under ``aside`` (a rename where one file
        system holds both; else written there first, then deleted here)."""
        name = path.rsplit("/", 1)[1]
        if aside.local is not None and self.folder is not None:
            Path(aside.base).mkdir(parents=True, exist_ok=True)
            target = aside_name(aside, name)
            if os.stat(aside.base).st_dev == os.stat(path).st_dev:
                os.replace(path, target)
                return
        table = pq.read_table(path, filesystem=self.loc.fs)
        self.put_beside(aside, table, None, "supersede-aside")
        self.loc.fs.delete_file(path)

    # ------------------------------------------------------------------ writing

    def add(self, row: dict[str, Any]) -> None:
        """Queue one row; writes a part when enough rows or time have gathered."""
        if self._broken is not None:
            raise self._broken
        row.update(self._provenance)
        row["censored"] = censored_status(row.get("status"))  # one rule for every backend
        self._rows.append(row)
        now = time.monotonic()
        interval = self.flush_seconds
        if interval is None:
            interval = min(60.0, max(2.0, (now - self._started) / 30))
        if len(self._rows) >= self.flush_rows or now - self._last_flush >= interval:
            self.flush()

    def flush(self) -> None:
        """Write the queued rows as one part file, atomically.

        After a failed write (:class:`StoreWriteError`, raised once) it does nothing.
        """
        self._last_flush = time.monotonic()
        if not self._rows or self._broken is not None:
            return
        self._write(pa.Table.from_pylist(self._rows, schema=self.schema))
        self.rows_written += len(self._rows)
        self._rows = []

    def _write(self, table: pa.Table) -> None:
        """Write ``table`` as this run's next part."""
        name = f"{PART_PREFIX}{self.run_id}-{self._seq:05d}{PART_SUFFIX}"
        written = datetime.now(timezone.utc).isoformat(timespec="microseconds")
        meta = {**table.schema.metadata, b"btlab.written_at": written.encode()}
        self.put(self.loc.path(name), table.replace_schema_metadata(meta), str(self._seq))
        self._seq += 1

    def put(self, path: str, table: pa.Table, stage: str = "") -> None:
        """Write ``table`` whole to ``fs`` path ``path`` of the destination, atomically.

        A temporary outside the folder, flushed to disk, then moved into place
        (replacing a file there). ``stage``: the name of the write for the test hook.

        Raises:
            StoreWriteError: the write failed (nothing is left half-written).
        """
        if self._broken is not None:
            raise self._broken
        try:
            if self.folder is not None:
                self._put_local(Path(path), table, stage)
            else:
                self._put_remote(path, table, stage)
        except StoreWriteError as exc:  # the lease was lost
            self._broken = exc
            self._rows = []
            raise
        except OSError as exc:
            self._broken = self._failure(exc, "writing", self.loc.shown(path))
            self._rows = []
            raise self._broken from None

    def _make_folder(self) -> None:
        """Create the results folder (where a symlink points, if it is one), noting what
        this run created so that :meth:`close` removes it again if nothing is written."""
        assert self.folder is not None
        real = Path(os.path.realpath(self.folder))
        self._created = self._created or [p for p in (real, *real.parents) if not p.exists()]
        real.mkdir(parents=True, exist_ok=True)

    def _put_local(self, path: Path, table: pa.Table, stage: str) -> None:
        assert self.folder is not None
        if not self.folder.is_dir():
            self._make_folder()
        work = work_dir(self.folder)
        work.mkdir(exist_ok=True)
        try:
            write_local(path, table, work, stage)
        finally:
            if self._lock is None:  # no run holds the work folder: leave none behind
                rmdir_quietly(work)

    def _tmp_prefix(self) -> str:
        return lease_key(self.loc).rsplit("/", 1)[0] + "/tmp"

    def _put_remote(self, path: str, table: pa.Table, stage: str) -> None:
        if self._lease is not None:
            self._lease.check()
        write_remote(self.loc.fs, path, table, self._tmp_prefix(), stage)

    def _failure(self, exc: OSError, doing: str, what: str) -> StoreWriteError:
        if doing == "locking":
            kept = "nothing was run or written"
        else:
            kept = (f"the {self.rows_written:,} row(s) this run wrote before, and every "
                    f"earlier part in {self.loc.text}, are intact")
        return write_failure(exc, f"{doing} {what}", kept)

    def close(self) -> None:
        """Write what is queued and release the destination (lock or lease)."""
        try:
            self.flush()
        finally:
            self._release()

    def _release(self) -> None:
        if self._lease is not None:
            self._lease.release()
            self._lease = None
        if self._lock is not None:
            self._lock.release()
            self._lock = None
        if self.folder is not None:
            rmdir_quietly(work_dir(self.folder))
            if self._seq == 0 and not self.rewritten:
                # nothing written: leave no trace of the folders this run made
                for folder in self._created:
                    if not rmdir_quietly(folder):
                        break
                self._created = []
