"""The on-disk results: one Parquet dataset per sweep, written crash-safe.

A results folder (``results/<name>/``, any ``--out`` path, or a filesystem URI
such as ``file:///shared/x`` or ``s3://bucket/prefix``) holds part files
``part-<run_id>-<seq>.parquet`` and nothing else: pandas, pyarrow, DuckDB and
Polars read it given its path. Each part is written whole under a temporary
name outside the folder (in its hidden work folder ``<parent>/.<name>.btlab/``,
:func:`runner.store_read.work_dir`; on an object store, under that prefix),
flushed to disk and moved into place, so a crash or a kill never leaves a torn
part: a reader sees a part entirely or not at all.

Every part carries in its Parquet metadata the schema version
(:data:`SCHEMA_VERSION`), the config name and problem, and the expanded config.
A folder holding another config's rows or another schema version, in any of
its files, is refused, never silently mixed or overwritten. Every part of a
folder has the same columns: a run that finds parts written before a column
was added rewrites them with that column (nulls), so that a reader taking the
first part's schema (``pd.read_parquet(folder)``) drops no column.

One run writes a destination at a time (:mod:`runner.store_lock`: a lock where
the file system has locks, a lease elsewhere). Writing that fails (no space
left, quota, I/O error, read-only file system) raises
:class:`~runner.errors.StoreWriteError` (exit status 3) once, leaving the parts
already written intact and no temporaries behind.

The row layout (:func:`row_schema`, :data:`SCHEMA_VERSION`, provenance) lives
in :mod:`runner.schema`; reading in :mod:`runner.store_read`; rewriting parts
(error rows of retried trials, missing columns) in :mod:`runner.store_fix`.
Their public names are re-exported here.
"""

from __future__ import annotations

import errno
import io
import json
import os
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from .config import SweepConfig
from .errors import ResultsError, StoreWriteError
from .schema import SCHEMA_VERSION, btlab_version, row_schema, software_provenance
from .store_lock import LEGACY_LOCK, FolderLock, Lease
from .store_read import (
    PART_PREFIX,
    PART_SUFFIX,
    Location,
    check_identity,
    checked_parts,
    config_of,
    is_uri,
    iter_part_tables,
    list_parts,
    load_rows,
    locate,
    newest_meta,
    part_files,
    part_metas,
    parts_dataset,
    read_footer,
    read_meta,
    remote_parts,
    scan_parts,
    work_dir,
)

# Public names: this module's writer and, re-exported, the row layout of runner.schema and
# the readers of runner.store_read (``from runner.store import part_files`` keeps working).
__all__ = [
    "LEGACY_LOCK", "PART_PREFIX", "SCHEMA_VERSION", "ResultStore", "btlab_version", "config_of",
    "is_uri", "load_rows", "new_run_id", "newest_meta", "part_files", "part_metas",
    "parts_dataset", "read_meta", "remote_parts", "remove_stale_temporaries", "row_schema",
    "work_dir",
]

#: Test hook (with the trial faults of :mod:`runner.execute`, same variable):
#: ``BTLAB_TEST_FAULT=enospc:N`` makes the write of this run's N-th part (0: the first)
#: fail as a full disk would, after its temporary is half written; ``edquot``, ``eio``,
#: ``erofs`` likewise; ``enospc:lock`` fails taking the folder's lock.
TEST_FAULT_ENV = "BTLAB_TEST_FAULT"
_FAULTS = {"enospc": errno.ENOSPC, "edquot": errno.EDQUOT, "eio": errno.EIO,
           "erofs": errno.EROFS}

#: What a write error means, and what to do, by errno.
_REASONS = {
    errno.ENOSPC: ("no space left on device", "free space on that device"),
    errno.EDQUOT: ("disk quota exceeded", "free space or raise your quota"),
    errno.EROFS: ("read-only file system", "make it writable, or write elsewhere with --out"),
    errno.EIO: ("input/output error", "check the device (dmesg), or write elsewhere with --out"),
}


def _inject_fault(stage: str) -> None:
    for item in os.environ.get(TEST_FAULT_ENV, "").split(","):
        kind, _, at = item.strip().partition(":")
        if kind in _FAULTS and at == stage:
            code = _FAULTS[kind]
            raise OSError(code, f"{os.strerror(code)} (fault injected by {TEST_FAULT_ENV})")


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

    Raises:
        ResultsError: ``out`` is a file, is not writable, or holds results of
            another config or another schema version, or a damaged part.
    """

    def __init__(self, out: str | Path, config: SweepConfig, *, flush_rows: int = 5000,
                 flush_seconds: float | None = None, fresh: bool = False):
        self.loc: Location = locate(out)
        self.location = out
        self.folder: Path | None = self.loc.local
        self.config = config
        self.run_id = new_run_id()
        self.flush_rows = flush_rows
        self.flush_seconds = flush_seconds
        self.fresh = fresh
        self._rows: list[dict[str, Any]] = []
        self._seq = 0
        self._started = self._last_flush = time.monotonic()
        self.rows_written = 0
        self.rewritten = 0
        self._lock: FolderLock | None = None
        self._lease: Lease | None = None
        self._created: list[Path] = []
        self._broken: StoreWriteError | None = None
        self._provenance = {
            "run_id": self.run_id, "problem": config.problem.name, **software_provenance()}
        self.identity = (str(SCHEMA_VERSION), config.name, config.problem.name)
        meta = {"btlab.schema_version": str(SCHEMA_VERSION),
                "btlab.config_name": config.name, "btlab.problem": config.problem.name,
                "btlab.config": json.dumps(config.expanded(), sort_keys=True),
                "btlab.run_id": self.run_id, "btlab.overrides": json.dumps(config.overrides)}
        self._meta = meta
        self.schema = row_schema(config.problem).with_metadata(meta)
        self._check_destination()
        if not fresh:
            self._check_contents()

    # ------------------------------------------------------------------ checks

    def _check_destination(self) -> None:
        folder = self.folder
        if folder is None:
            return
        if folder.exists() and not folder.is_dir():
            raise ResultsError(f"{folder}: the output path is a file, not a folder\n"
                               "  fix: remove the file or choose another path with --out")
        probe = folder if folder.exists() else next(
            (p for p in folder.absolute().parents if p.exists()), Path("."))
        if not probe.is_dir():
            raise ResultsError(f"{folder}: cannot be created: {probe} is a file, not a folder\n"
                               "  fix: choose another path with --out")
        problem = _not_writable(probe)
        if problem:
            raise ResultsError(f"{folder}: not writable ({probe}: {problem})\n"
                               "  fix: choose a writable folder with --out")

    def _check_contents(self) -> list:
        """Every file of the destination readable and of this config; returns their footers."""
        try:
            loc, infos = scan_parts(self.loc)
        except OSError as exc:  # a remote store that cannot be listed
            raise ResultsError(f"{self.loc.text}: cannot be read: {exc}\n"
                               "  fix: check the URI and the credentials") from None
        if infos and not any(i.identity == self.identity for i in infos):
            meta = infos[-1].meta
            version = meta.get("btlab.schema_version")
            if version != str(SCHEMA_VERSION) and meta.get("btlab.config_name"):
                raise ResultsError(
                    f"{self.loc.text}: holds results in schema version {version or 'unknown'}, "
                    f"this btlab writes version {SCHEMA_VERSION}\n"
                    "  fix: write elsewhere with --out, or start over with --fresh")
            name, stored = meta.get("btlab.config_name"), meta.get("btlab.problem")
            raise ResultsError(
                f"{self.loc.text}: holds results of config {name!r} ({stored}), "
                f"not of {self.config.name!r} ({self.config.problem.name})\n"
                "  fix: write elsewhere with --out, or start over with --fresh")
        checked_parts(loc, self.identity)
        return infos

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
                self._created = [p for p in (self.folder.absolute(),
                                             *self.folder.absolute().parents) if not p.exists()]
                _inject_fault("lock")
                self.folder.mkdir(parents=True, exist_ok=True)
                self._lock = FolderLock(self.folder)
                self._lock.acquire()
                stale = remove_stale_temporaries(self.folder)
                _move_legacy_checkpoints(self.folder)
            else:
                self._lease = Lease(self.loc)
                self._lease.acquire()
                stale = self._remove_remote_temporaries()
            if not self.fresh:
                from .store_fix import bring_to_schema

                self.schema = bring_to_schema(self, self._check_contents())
        except OSError as exc:
            self._release()
            raise self._failure(exc, "taking", str(self.loc.text)) from None
        except BaseException:
            self._release()
            raise
        return stale

    def _remove_remote_temporaries(self) -> int:
        import pyarrow.fs as pafs

        base = self._tmp_prefix()
        infos = self.loc.fs.get_file_info(pafs.FileSelector(base, allow_not_found=True))
        stale = [i.path for i in infos if i.path.endswith(".tmp")]
        for path in stale:
            self.loc.fs.delete_file(path)
        return len(stale)

    # ------------------------------------------------------------------ what is there

    def has_parts(self) -> bool:
        """True when the destination holds at least one part file."""
        return bool(list_parts(self.loc))

    def checkpoints(self):
        """The :class:`~runner.checkpoints.Checkpoints` of this run's split trials.

        In the work folder of a local destination; for a remote one, in the local
        staging folder ``results/.staging/<name>-<hash of the URI>/split``.
        """
        import hashlib

        from .checkpoints import Checkpoints

        if self.folder is not None:
            return Checkpoints(self.folder)
        digest = hashlib.blake2b(self.loc.text.encode(), digest_size=4).hexdigest()
        return Checkpoints(Path("results") / ".staging" / f"{self.config.name}-{digest}" /
                           "split", directory=True)

    def existing_ids(self) -> set[str]:
        """Trial ids written at the destination, whatever their status."""
        ids: set[str] = set()
        for _, table in iter_part_tables(self.loc, ["trial_id"]):
            ids.update(table.column("trial_id").to_pylist())
        return ids

    def resume(self, wanted: set[str], retry_errors: bool = True) -> tuple[set[str], int]:
        """The trial ids a rerun skips, after taking out the error rows of trials to retry.

        Only what is at the destination counts. With ``retry_errors``, the rows
        with status ``error`` of trials in ``wanted`` are removed from their part
        files now, before those trials run again (:func:`runner.store_fix.drop_rows`),
        so a crash in between leaves the trial with no row, which the next run
        runs, and never with two.

        Returns:
            (trial ids done, how many trials with error rows will run again)
        """
        from .store_fix import drop_error_rows

        if not retry_errors:
            return self.existing_ids(), 0
        return drop_error_rows(self, wanted)

    def record_config(self) -> bool:
        """Write an empty part carrying this config, if the newest part carries another.

        A rerun with a changed config that has nothing left to run writes no
        rows; this records that the config changed, so that ``btlab show``
        compares the rows on disk to the config last run.

        Returns:
            True when a part was written.
        """
        stored = newest_meta(self.loc).get("btlab.config")
        if stored == self._meta["btlab.config"]:
            return False
        self._write(pa.Table.from_pylist([], schema=self.schema))
        return True

    def clear(self) -> int:
        """Delete this folder's part files (``--fresh``); returns how many.

        Only btlab's own ``part-*.parquet`` files go; any other Parquet file
        found there must be of this config, else the folder is refused first.
        """
        loc = self.loc
        paths = list_parts(loc)
        ours = [p for p in paths if p.rsplit("/", 1)[0] == loc.base and
                p.rsplit("/", 1)[1].startswith(PART_PREFIX)]
        others = [p for p in paths if p not in ours]
        if others:
            check_identity(loc, [read_footer(loc, p) for p in others], self.identity)
        for path in ours:
            loc.fs.delete_file(path)
        return len(ours)

    # ------------------------------------------------------------------ writing

    def add(self, row: dict[str, Any]) -> None:
        """Queue one row; writes a part when enough rows or time have gathered."""
        if self._broken is not None:
            raise self._broken
        row.update(self._provenance)
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

    def _put_local(self, path: Path, table: pa.Table, stage: str) -> None:
        assert self.folder is not None
        if not self.folder.is_dir():
            self._created = self._created or [
                p for p in (self.folder.absolute(), *self.folder.absolute().parents)
                if not p.exists()]
            self.folder.mkdir(parents=True, exist_ok=True)
        work = work_dir(self.folder)
        work.mkdir(exist_ok=True)
        # a rename moves a file within one file system only: a folder that is a mount
        # point of its own keeps its temporaries in itself, hidden
        tmp_dir = work if os.stat(work).st_dev == os.stat(self.folder).st_dev else self.folder
        tmp = tmp_dir / f".{path.name}.{uuid.uuid4().hex[:8]}.tmp"
        try:
            with open(tmp, "wb") as fh:
                pq.write_table(table, fh, compression="zstd")
                _inject_fault(stage)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
            if self._lock is None:  # no run holds the work folder: leave none behind
                _rmdir_quietly(work)
        _fsync_dir(path.parent)

    def _tmp_prefix(self) -> str:
        from .store_lock import lease_key

        return lease_key(self.loc).rsplit("/", 1)[0] + "/tmp"

    def _put_remote(self, path: str, table: pa.Table, stage: str) -> None:
        fs = self.loc.fs
        if self._lease is not None:
            self._lease.check()
        buf = io.BytesIO()
        pq.write_table(table, buf, compression="zstd")
        tmp = f"{self._tmp_prefix()}/{path.rsplit('/', 1)[1]}.{uuid.uuid4().hex[:8]}.tmp"
        fs.create_dir(tmp.rsplit("/", 1)[0], recursive=True)
        fs.create_dir(path.rsplit("/", 1)[0], recursive=True)
        try:
            with fs.open_output_stream(tmp) as out:
                out.write(buf.getvalue()[: len(buf.getvalue()) // 2])
                _inject_fault(stage)
                out.write(buf.getvalue()[len(buf.getvalue()) // 2:])
            fs.move(tmp, path)
        except BaseException:
            try:
                fs.delete_file(tmp)
            except OSError:
                pass
            raise

    def _failure(self, exc: OSError, doing: str, what: str) -> StoreWriteError:
        reason, fix = _REASONS.get(exc.errno or 0, (
            exc.strerror or (str(exc).strip().splitlines() or [type(exc).__name__])[0],
            "fix the cause above"))
        if doing == "taking":
            kept = "nothing was run or written"
        else:
            kept = (f"the {self.rows_written:,} row(s) this run wrote before, and every "
                    f"earlier part in {self.loc.text}, are intact")
        return StoreWriteError(f"{reason} {doing} {what}: {kept}\n"
                               f"  fix: {fix}, then run the same command to resume (it runs "
                               "only the trials whose rows are not there)")

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
            _rmdir_quietly(work_dir(self.folder))
            if self._seq == 0 and not self.rewritten:
                # nothing written: leave no trace of the folders this run made
                for folder in self._created:
                    if not _rmdir_quietly(folder):
                        break
                self._created = []


def _rmdir_quietly(folder: Path) -> bool:
    """Remove ``folder`` if it is empty; True when it is gone."""
    try:
        folder.rmdir()
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True


def _not_writable(folder: Path) -> str:
    """Why files cannot be created in ``folder`` ("" when they can).

    Creates and deletes a hidden probe file: ``os.access`` is no test (it says
    yes to root everywhere, and knows nothing of read-only mounts).
    """
    probe = folder / f".btlab-probe-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        return exc.strerror or str(exc)
    os.close(fd)
    try:
        os.unlink(probe)
    except OSError as exc:
        return f"a file created there cannot be deleted: {exc.strerror or exc}"
    return ""


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def remove_stale_temporaries(folder: Path) -> int:
    """Delete temporary files a killed run left behind; returns how many.

    In the folder's work folder, and hidden in the folder itself (where older
    btlab versions, and a folder that is a mount point, keep them). Call it only
    holding the folder's lock (:meth:`ResultStore.lock`): the temporaries of a
    run still writing would go too.
    """
    stale: list[Path] = []
    for where in (Path(folder), work_dir(folder)):
        if where.is_dir():
            stale += [p for p in where.iterdir() if p.name.startswith(".") and (
                p.name.endswith(".tmp") or p.name.startswith(".btlab-probe-"))]
    for p in stale:
        p.unlink(missing_ok=True)
    return len(stale)


def _move_legacy_checkpoints(folder: Path) -> None:
    """Move split checkpoints an older btlab kept in ``<folder>/.split`` to the work folder."""
    from .checkpoints import CHECKPOINT_DIR, LEGACY_CHECKPOINT_DIR

    old = Path(folder) / LEGACY_CHECKPOINT_DIR
    if not old.is_dir():
        return
    new = work_dir(folder) / CHECKPOINT_DIR
    new.mkdir(parents=True, exist_ok=True)
    for f in old.iterdir():
        os.replace(f, new / f.name)
    old.rmdir()
