"""The on-disk results: one Parquet dataset per sweep, written crash-safe.

``results/<name>/`` holds part files ``part-<run_id>-<seq>.parquet``, each
written whole to a hidden temporary name in the same folder, flushed to disk
and renamed into place (``os.replace``), so a crash or a kill never leaves a
torn part: a reader sees a part entirely or not at all. Hidden files (``.``)
are skipped by pandas, pyarrow, DuckDB and Polars alike.

Every part carries in its Parquet metadata the schema version
(:data:`SCHEMA_VERSION`), the config name and problem, and the expanded config.
A folder holding another config's results or another schema version is
refused, never silently mixed or overwritten.

This module writes (:class:`ResultStore`: part files, the folder's lock, the
mirror). The row layout (:func:`row_schema`, :data:`SCHEMA_VERSION`,
provenance) lives in :mod:`runner.schema`; reading (finding the parts of a
folder or URI, their metadata, their rows) in :mod:`runner.store_read`. Their
public names are re-exported here.
"""

from __future__ import annotations

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
from .errors import ResultsError
from .schema import SCHEMA_VERSION, btlab_version, row_schema, software_provenance
from .store_read import (
    PART_PREFIX,
    config_of,
    is_uri,
    load_rows,
    newest_meta,
    part_files,
    part_metas,
    parts_dataset,
    read_meta,
    remote_fs,
    remote_parts,
)

# Public names: this module's writer and, re-exported, the row layout of runner.schema and
# the readers of runner.store_read (``from runner.store import part_files`` keeps working).
__all__ = [
    "LOCK_NAME", "PART_PREFIX", "SCHEMA_VERSION", "ResultStore", "btlab_version", "config_of",
    "is_uri", "load_rows", "new_run_id", "newest_meta", "part_files", "read_meta",
    "remove_stale_temporaries", "row_schema",
]

#: Hidden lock file of a results folder, held by the run writing it.
LOCK_NAME = ".btlab.lock"


def new_run_id() -> str:
    """A run id: UTC time to the second plus 6 random hex digits.

    For example ``20261129T221500-3fa2c1``.
    """
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:6]


class ResultStore:
    """Appends rows of one sweep to ``folder`` in crash-safe part files.

    Args:
        folder: ``results/<name>`` (created at the first write).
        config: the validated config (its name, problem and expanded form go
            into every part's metadata).
        flush_rows: a part is written when this many rows are waiting...
        flush_seconds: ...or when the oldest waiting row is older than this.
            None (the default) adapts: 2 s at first, growing with the run's
            age (a thirtieth of it) up to 60 s, so that a long run writes few
            parts and a crash loses at most a minute of work.
        fresh: the run starts over (``--fresh``): the parts in ``folder`` are not
            checked, since :meth:`clear` will delete them.
        mirror: a filesystem URI (``s3://bucket/prefix``, ``file:///shared/x``,
            anything ``pyarrow.fs`` opens) where every part is copied once it
            is written whole in ``folder``, then a local staging folder: the
            copy goes to a hidden name and is moved into place, so readers of
            the URI never see a partial part. Resume counts the trials found
            in either place, so a lost driver can resume on another machine.

    Raises:
        ResultsError: ``folder`` is a file, is not writable, or holds results of
            another config or another schema version.
    """

    def __init__(self, folder: str | Path, config: SweepConfig, *, flush_rows: int = 5000,
                 flush_seconds: float | None = None, fresh: bool = False,
                 mirror: str | None = None):
        self.folder = Path(folder)
        self.mirror = mirror
        self.config = config
        self.schema = row_schema(config.problem)
        self.run_id = new_run_id()
        self.flush_rows = flush_rows
        self.flush_seconds = flush_seconds
        self._rows: list[dict[str, Any]] = []
        self._seq = 0
        self._started = self._last_flush = time.monotonic()
        self.rows_written = 0
        self._lock_fd: int | None = None
        self._created: list[Path] = []
        self._check_folder(contents=not fresh)
        self._provenance = {
            "run_id": self.run_id, "problem": config.problem.name, **software_provenance()}
        meta = {"btlab.schema_version": str(SCHEMA_VERSION),
                "btlab.config_name": config.name, "btlab.problem": config.problem.name,
                "btlab.config": json.dumps(config.expanded(), sort_keys=True),
                "btlab.run_id": self.run_id, "btlab.overrides": json.dumps(config.overrides)}
        self.schema = self.schema.with_metadata(meta)

    def _check_folder(self, contents: bool = True) -> None:
        folder = self.folder
        if folder.exists() and not folder.is_dir():
            raise ResultsError(f"{folder}: the output path is a file, not a folder\n"
                               "  fix: remove the file or choose another path with --out")
        probe = folder if folder.exists() else next(
            (p for p in folder.parents if p.exists()), Path("."))
        if not probe.is_dir():
            raise ResultsError(f"{folder}: cannot be created: {probe} is a file, not a folder\n"
                               "  fix: choose another path with --out")
        problem = _not_writable(probe)
        if problem:
            raise ResultsError(f"{folder}: not writable ({probe}: {problem})\n"
                               "  fix: choose a writable folder with --out")
        if not contents:  # --fresh: its parts are about to be deleted, whatever they hold
            return
        metas = [read_meta(p) for p in part_files(folder)[:1] + part_files(folder)[-1:]]
        if self.mirror:
            try:
                metas += part_metas(self.mirror)[-1:]
            except (OSError, ValueError) as exc:
                raise ResultsError(f"{self.mirror}: cannot be read: {exc}\n"
                                   "  fix: check the URI and the credentials") from None
        for meta in metas:
            version = meta.get("btlab.schema_version")
            if version != str(SCHEMA_VERSION):
                raise ResultsError(
                    f"{folder}: holds results in schema version {version or 'unknown'}, "
                    f"this btlab writes version {SCHEMA_VERSION}\n"
                    "  fix: write elsewhere with --out, or start over with --fresh")
            name, stored = meta.get("btlab.config_name"), meta.get("btlab.problem")
            if name != self.config.name or stored != self.config.problem.name:
                raise ResultsError(
                    f"{folder}: holds results of config {name!r} ({stored}), "
                    f"not of {self.config.name!r} ({self.config.problem.name})\n"
                    "  fix: write elsewhere with --out, or start over with --fresh")

    def lock(self) -> int:
        """Make the folder, take its lock and delete temporaries a killed run left behind.

        The lock (``flock`` on the hidden file ``.btlab.lock``) is held until this
        process exits, however it exits (the kernel releases it even after a
        SIGKILL), so two runs never write the same folder at once.

        Returns:
            How many stale temporary files were deleted.

        Raises:
            ResultsError: another btlab run holds the lock.
        """
        import fcntl

        # the folders this run creates, innermost first (removed again if it writes nothing)
        self._created = [p for p in (self.folder, *self.folder.parents) if not p.exists()]
        self.folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.folder / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            other = os.pread(fd, 64, 0).decode(errors="replace").strip() or "?"
            os.close(fd)
            raise ResultsError(
                f"{self.folder}: another btlab run (pid {other}) is writing here\n"
                "  fix: wait for it to finish, or write elsewhere with --out") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        self._lock_fd = fd
        return remove_stale_temporaries(self.folder)

    def record_config(self) -> bool:
        """Write an empty part carrying this config, if the newest part carries another.

        A rerun with a changed config that has nothing left to run writes no
        rows; this records that the config changed, so that ``btlab show``
        compares the rows on disk to the config last run.

        Returns:
            True when a part was written.
        """
        stored = newest_meta(self.folder).get("btlab.config")
        if stored == self.schema.metadata[b"btlab.config"].decode():
            return False
        self._write(pa.Table.from_pylist([], schema=self.schema))
        return True

    def existing_ids(self) -> set[str]:
        """Trial ids already written, here or in the mirror (resume skips them)."""
        ids: set[str] = set()
        for where in (self.folder, self.mirror):
            data = parts_dataset(where) if where else None
            if data is not None:
                ids.update(data.to_table(columns=["trial_id"]).column("trial_id").to_pylist())
        return ids

    def clear(self) -> int:
        """Delete every part file, here and in the mirror (``--fresh``); returns how many."""
        parts = part_files(self.folder)
        for part in parts:
            part.unlink()
        gone = len(parts)
        if self.mirror:
            fs, remote = remote_parts(self.mirror)
            for path in remote:
                fs.delete_file(path)
            gone += len(remote)
        return gone

    def _upload(self, part: Path, mirror: str) -> None:
        """Copy a finished part to ``mirror``: a hidden name first, then moved into place."""
        fs, base = remote_fs(mirror)
        fs.create_dir(base, recursive=True)
        tmp = f"{base.rstrip('/')}/.{part.name}.{uuid.uuid4().hex[:8]}.tmp"
        with fs.open_output_stream(tmp) as out:
            out.write(part.read_bytes())
        fs.move(tmp, f"{base.rstrip('/')}/{part.name}")

    def add(self, row: dict[str, Any]) -> None:
        """Queue one row; writes a part when enough rows or time have gathered."""
        row.update(self._provenance)
        self._rows.append(row)
        now = time.monotonic()
        interval = self.flush_seconds
        if interval is None:
            interval = min(60.0, max(2.0, (now - self._started) / 30))
        if len(self._rows) >= self.flush_rows or now - self._last_flush >= interval:
            self.flush()

    def flush(self) -> None:
        """Write the queued rows as one part file, atomically."""
        self._last_flush = time.monotonic()
        if not self._rows:
            return
        self._write(pa.Table.from_pylist(self._rows, schema=self.schema))
        self.rows_written += len(self._rows)
        self._rows = []

    def _write(self, table: pa.Table) -> None:
        """Write ``table`` as the next part.

        To a hidden temporary, fsync, rename, fsync the folder.
        """
        self.folder.mkdir(parents=True, exist_ok=True)
        name = f"{PART_PREFIX}{self.run_id}-{self._seq:05d}.parquet"
        tmp = self.folder / f".{name}.{uuid.uuid4().hex[:8]}.tmp"
        try:
            with open(tmp, "wb") as fh:
                written = datetime.now(timezone.utc).isoformat(timespec="microseconds")
                meta = {**table.schema.metadata, b"btlab.written_at": written.encode()}
                pq.write_table(table.replace_schema_metadata(meta), fh, compression="zstd")
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.folder / name)
        finally:
            if tmp.exists():
                tmp.unlink()
        _fsync_dir(self.folder)
        self._seq += 1
        if self.mirror:
            self._upload(self.folder / name, self.mirror)

    def close(self) -> None:
        """Write what is queued and release the folder's lock."""
        try:
            self.flush()
        finally:
            if self._lock_fd is not None:
                if self._created and self._seq == 0:
                    # nothing written: leave no trace of the folders this run made
                    (self.folder / LOCK_NAME).unlink(missing_ok=True)
                    for folder in self._created:
                        try:
                            folder.rmdir()  # only if empty
                        except OSError:
                            break
                os.close(self._lock_fd)  # closing the descriptor releases the flock
                self._lock_fd = None


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

    Call it only holding the folder's lock (:meth:`ResultStore.lock`): the
    temporaries of a run still writing would go too.
    """
    if not folder.is_dir():
        return 0
    stale = [p for p in folder.iterdir() if p.name.startswith(".") and (
        p.name.endswith(".tmp") or p.name.startswith(".btlab-probe-"))]
    for p in stale:
        p.unlink(missing_ok=True)
    return len(stale)
