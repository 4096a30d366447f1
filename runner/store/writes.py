"""The file operations of :class:`~btlab.store.folder.ResultStore`: atomic writes, failures.

:func:`write_local` and :func:`write_remote` write a whole Parquet file under a
temporary name outside the results folder, flush it to disk and move it into
place; :func:`write_failure` turns the ``OSError`` of a failed write into the
one message of a :class:`~btlab.errors.StoreWriteError` (exit status 3);
:func:`inject_fault` is the test hook that makes writes fail on purpose.
"""

from __future__ import annotations

import errno
import io
import os
import tempfile
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from btlab.errors import ResultsError, StoreWriteError
from btlab.store.checkpoints import CHECKPOINT_DIR, LEGACY_CHECKPOINT_DIR
from btlab.store.location import work_dir

#: Test hook (with the trial faults of :mod:`btlab.execution.execute`, same variable):
#: ``BTLAB_TEST_FAULT=enospc:N`` makes the write of this run's N-th part (0: the first)
#: fail as a full disk would, after its temporary is half written; ``edquot``, ``eio``,
#: ``erofs`` likewise; ``enospc:lock`` fails taking the folder's lock, ``enospc:rewrite``
#: the rewrite of an older part (:mod:`btlab.store.repair`), ``enospc:supersede`` the rewrite of
#: a part without its superseded rows, after they were written beside the folder
#: (:mod:`btlab.store.superseded`: the state a crash between the two writes leaves),
#: ``enospc:supersede-aside`` that first write. ``flush_rows:N`` writes a part
#: every N rows (:func:`flush_rows_hook`), so that a test knows when one is on disk.
TEST_FAULT_ENV = "BTLAB_TEST_FAULT"
_FAULTS = {"enospc": errno.ENOSPC, "edquot": errno.EDQUOT, "eio": errno.EIO,
           "erofs": errno.EROFS}

#: What a write error means, and what to do, by errno.
REASONS = {
    errno.ENOSPC: ("no space left on device", "free space on that device"),
    errno.EDQUOT: ("disk quota exceeded", "free space or raise your quota"),
    errno.EROFS: ("read-only file system", "make it writable, or write elsewhere with --out"),
    errno.EIO: ("input/output error", "check the device (dmesg), or write elsewhere with --out"),
}


def inject_fault(stage: str) -> None:
    for item in os.environ.get(TEST_FAULT_ENV, "").split(","):
        kind, _, at = item.strip().partition(":")
        if kind in _FAULTS and at == stage:
            code = _FAULTS[kind]
            raise OSError(code, f"{os.strerror(code)} (fault injected by {TEST_FAULT_ENV})")


def flush_rows_hook(default: int) -> int:
    """Rows a part holds at most: ``default``, or N under ``BTLAB_TEST_FAULT=flush_rows:N``."""
    for item in os.environ.get(TEST_FAULT_ENV, "").split(","):
        kind, _, n = item.strip().partition(":")
        if kind == "flush_rows" and n.isdigit() and int(n) > 0:
            return int(n)
    return default


def write_failure(exc: OSError, what: str, kept: str) -> StoreWriteError:
    """The error of a write that failed: ``<reason> <what>: <kept>``, then the fix.

    Args:
        exc: the ``OSError`` (its errno picks the reason and the fix).
        what: what was being done, e.g. ``writing results/x/part-...parquet``.
        kept: what is intact.
    """
    reason, fix = REASONS.get(exc.errno or 0, (
        exc.strerror or (str(exc).strip().splitlines() or [type(exc).__name__])[0],
        "fix the cause above"))
    return StoreWriteError(f"{reason} {what}: {kept}\n"
                           f"  fix: {fix}, then run the same command to resume (it runs "
                           "only the trials whose rows are not there)")


def write_local(path: Path, table: pa.Table, work: Path, stage: str = "") -> None:
    """Write ``table`` to ``path`` atomically, its temporary in the work folder ``work``.

    A rename moves a file within one file system only: a results folder that is
    a mount point of its own keeps the temporary in itself, hidden. The
    temporary is removed whatever happens.

    Raises:
        OSError: the write failed (``path`` is unchanged).
    """
    tmp_dir = work if os.stat(work).st_dev == os.stat(path.parent).st_dev else path.parent
    tmp = tmp_dir / f".{path.name}.{uuid.uuid4().hex[:8]}.tmp"
    try:
        with open(tmp, "wb") as fh:
            pq.write_table(table, fh, compression="zstd")
            inject_fault(stage)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    fsync_dir(path.parent)


def write_remote(fs, path: str, table: pa.Table, tmp_prefix: str, stage: str = "") -> None:
    """Write ``table`` to ``path`` of filesystem ``fs``: a temporary under ``tmp_prefix``
    first, then moved into place (deleted if anything fails).

    Raises:
        OSError: the write failed.
    """
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd")
    data = buf.getvalue()
    tmp = f"{tmp_prefix}/{path.rsplit('/', 1)[1]}.{uuid.uuid4().hex[:8]}.tmp"
    fs.create_dir(tmp_prefix, recursive=True)
    fs.create_dir(path.rsplit("/", 1)[0], recursive=True)
    try:
        with fs.open_output_stream(tmp) as out:
            out.write(data[: len(data) // 2])
            inject_fault(stage)
            out.write(data[len(data) // 2:])
        fs.move(tmp, path)
    except BaseException:
        try:
            fs.delete_file(tmp)
        except OSError:
            pass
        raise


def rmdir_quietly(folder: Path) -> bool:
    """Remove ``folder`` if it is empty; True when it is gone."""
    try:
        folder.rmdir()
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True


def check_writable(folder: Path) -> None:
    """A results folder can be created or written at ``folder``.

    Raises:
        ResultsError: it is a file, lies below a file, or is not writable.
    """
    if folder.exists() and not folder.is_dir():
        raise ResultsError(f"{folder}: the output path is a file, not a folder\n"
                           "  fix: give --out a folder, e.g. --out "
                           f"{folder.with_name(folder.stem + '-results')}")
    probe = folder if folder.exists() else next(
        (p for p in folder.absolute().parents if p.exists()), Path("."))
    if not probe.is_dir():
        raise ResultsError(f"{folder}: cannot be created: {probe} is a file, not a folder\n"
                           "  fix: give --out a path outside it, e.g. --out "
                           f"{probe.with_name(probe.stem + '-results') / folder.name}")
    problem = not_writable(probe)
    if problem:
        raise ResultsError(f"{folder}: not writable ({probe}: {problem})\n"
                           f"  fix: make {probe} writable (chmod u+w {probe}), or give --out "
                           f"a folder you can write, e.g. --out "
                           f"{Path(tempfile.gettempdir()) / folder.name}")


def not_writable(folder: Path) -> str:
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


def fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def remove_remote_temporaries(fs, prefix: str) -> int:
    """Delete the temporaries a killed run left under ``prefix`` of ``fs``; returns how many."""
    infos = fs.get_file_info(pafs.FileSelector(prefix, allow_not_found=True))
    stale = [i.path for i in infos if i.path.endswith(".tmp")]
    for path in stale:
        fs.delete_file(path)
    return len(stale)


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


def move_legacy_checkpoints(folder: Path) -> None:
    """Move split checkpoints an older btlab kept in ``<folder>/.split`` to the work folder."""
    old = Path(folder) / LEGACY_CHECKPOINT_DIR
    if not old.is_dir():
        return
    new = work_dir(folder) / CHECKPOINT_DIR
    new.mkdir(parents=True, exist_ok=True)
    for f in old.iterdir():
        os.replace(f, new / f.name)
    old.rmdir()
