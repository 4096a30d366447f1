"""One writer per results destination: a lock where the file system has locks, a lease elsewhere.

* A local folder (a path, or a ``file://`` URI, which is one): :class:`FolderLock`,
  an ``flock`` on the file ``lock`` in the folder's hidden work folder
  (``<parent>/.<name>.btlab/``, :func:`btlab.store.read.work_dir`), keyed by the
  destination's real path, so two runs from different working directories, or
  one given a path and one a ``file://`` URI, exclude each other. The kernel
  releases it however the holder exits (a SIGKILL too). On NFS it needs the
  server's lock support (NFSv4, or v3 with lockd).
* Anything else (object stores: ``s3://``, ``gs://``, ...): :class:`Lease`, a small
  JSON object ``<prefix>.btlab/lease.json`` beside the results prefix, holding
  an owner, host, pid and expiry (:data:`LEASE_SECONDS`), renewed every quarter
  of that by a background thread and checked before every part is written.
  Object stores have no compare-and-swap, so the lease has a race window: two
  runs that both read "no lease" and write theirs within :data:`SETTLE_SECONDS`
  of each other are told apart by reading it back after that pause (the later
  writer wins, the other stops at once), but a writer slower than that pause,
  or a store whose reads lag its writes, could let both start; the loser then
  stops at its next write, when it finds the lease is not its own (exit 3),
  having written at most one part. A run that dies leaves its lease to expire:
  another run can start :data:`LEASE_SECONDS` later (or at once after the
  lease object is deleted by hand).
"""

from __future__ import annotations

import errno
import json
import os
import socket
import threading
import time
import uuid
from pathlib import Path

import pyarrow.fs as pafs

from btlab.errors import ResultsError, StoreWriteError
from btlab.store.location import WORK_SUFFIX, Location, work_dir

#: Name of the lock file in a results folder's work folder.
LOCK_FILE = "lock"
#: The lock file older btlab versions kept inside the results folder (removed when free).
LEGACY_LOCK = ".btlab.lock"
#: A lease on a remote destination lasts this long unless renewed (seconds).
LEASE_SECONDS = 120.0
#: Pause between writing a lease and reading it back (seconds): the race window.
SETTLE_SECONDS = 1.0

_HOST = socket.gethostname()


def _holder(pid: str, host: str) -> str:
    return f"pid {pid}" + (f" on {host}" if host and host != _HOST else "")


class FolderLock:
    """An exclusive ``flock`` on ``<work folder>/lock`` of a local results folder.

    Args:
        folder: the results folder (it need not exist).
    """

    def __init__(self, folder: Path):
        self.folder = Path(os.path.realpath(folder))
        self.work = work_dir(self.folder)
        self.path = self.work / LOCK_FILE
        self._fd: int | None = None
        self._made_work = False

    def acquire(self) -> None:
        """Take the lock (creating the work folder), write this process's pid and host.

        Raises:
            ResultsError: another btlab run holds it (its pid named).
            OSError: the work folder or the lock file cannot be written (the
                caller turns this into a :class:`~btlab.errors.StoreWriteError`).
        """
        import fcntl  # optional: fcntl is POSIX-only (elsewhere, a lease)

        for _ in range(10):
            if not self.work.is_dir():
                self.work.mkdir(parents=True, exist_ok=True)
                self._made_work = True
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                text = os.pread(fd, 256, 0).decode(errors="replace").split()
                os.close(fd)
                if exc.errno not in (errno.EAGAIN, errno.EWOULDBLOCK, errno.EACCES):
                    raise ResultsError(f"{self.folder}: cannot lock it ({self.path}: "
                                       f"{exc.strerror or exc})\n  fix: write to a file system "
                                       "with file locks (local disk, NFS with locking)") from None
                pid, host = (text + ["?", ""])[:2] if text else ("?", "")
                raise ResultsError(
                    f"{self.folder}: another btlab run ({_holder(pid, host)}) is writing here\n"
                    "  fix: wait for it to finish, or write elsewhere with --out") from None
            # the run that held it may have removed the file just before we locked it
            try:
                same = os.stat(self.path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        else:  # pragma: no cover - ten lost races in a row
            raise ResultsError(f"{self.folder}: the lock keeps changing hands\n"
                               "  fix: run the command again")
        self._fd = fd
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()} {_HOST}\n".encode(), 0)
            os.fsync(fd)  # a disk already full fails here, before any trial runs
        except OSError:
            self.release()
            raise
        self._legacy()

    def _legacy(self) -> None:
        """Remove the lock file an older btlab kept in the folder, unless a run holds it."""
        import fcntl  # optional: fcntl is POSIX-only (elsewhere, a lease)

        old = self.folder / LEGACY_LOCK
        try:
            fd = os.open(old, os.O_RDWR)
        except OSError:
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            self.release()
            raise ResultsError(f"{self.folder}: an older btlab run is writing here (it holds "
                               f"{old})\n  fix: wait for it to finish, or write elsewhere with "
                               "--out") from None
        old.unlink(missing_ok=True)
        os.close(fd)

    def release(self) -> None:
        """Release the lock; remove the lock file and the work folder when nothing else is in it."""
        if self._fd is None:
            return
        try:
            if sorted(os.listdir(self.work)) == [LOCK_FILE]:
                self.path.unlink()  # while still held: a run waiting on it retries
                self.work.rmdir()
        except OSError:
            pass
        os.close(self._fd)  # closing the descriptor releases the flock
        self._fd = None


def lease_key(loc: Location) -> str:
    """The lease object of a remote destination: beside its prefix, or hidden in a bucket root."""
    if "/" in loc.base.strip("/"):
        return f"{loc.base}{WORK_SUFFIX}/lease.json"
    return f"{loc.base}/.btlab-lease.json"


class Lease:
    """A lease object on a remote destination (see the module docstring for its race window)."""

    def __init__(self, loc: Location):
        self.loc = loc
        self.key = lease_key(loc)
        self.owner = uuid.uuid4().hex
        self.lost: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _read(self) -> dict | None:
        fs = self.loc.fs
        if fs.get_file_info(self.key).type != pafs.FileType.File:
            return None
        with fs.open_input_stream(self.key) as fh:
            try:
                held = json.loads(fh.read().decode())
            except ValueError:
                return None
        return held if isinstance(held, dict) else None

    def _write(self) -> None:
        fs = self.loc.fs
        fs.create_dir(self.key.rsplit("/", 1)[0], recursive=True)
        body = {"owner": self.owner, "host": _HOST, "pid": os.getpid(),
                "expires": time.time() + LEASE_SECONDS}
        with fs.open_output_stream(self.key) as fh:
            fh.write(json.dumps(body).encode())

    def _refuse(self, held: dict) -> ResultsError:
        until = time.strftime("%H:%M:%S", time.localtime(float(held.get("expires", 0))))
        who = _holder(held.get("pid", "?"), held.get("host", ""))
        return ResultsError(
            f"{self.loc.text}: another btlab run ({who}) holds its lease until {until} "
            f"({self.loc.text.split('://')[0]}://{self.key})\n"
            "  fix: wait for it to finish, or write elsewhere with --out; if that run is dead, "
            "wait until the lease expires or delete the lease object")

    def acquire(self) -> None:
        """Write the lease, read it back after :data:`SETTLE_SECONDS`, start renewing it.

        Raises:
            ResultsError: another run holds an unexpired lease, or wrote one at the
                same moment and won.
        """
        held = self._read()
        if held and held.get("owner") != self.owner and float(held.get("expires", 0)) > time.time():
            raise self._refuse(held)
        self._write()
        time.sleep(SETTLE_SECONDS)
        held = self._read()
        if not held or held.get("owner") != self.owner:
            raise self._refuse(held or {})
        self._thread = threading.Thread(target=self._renew_loop, name="btlab-lease", daemon=True)
        self._thread.start()

    def _renew_loop(self) -> None:
        while not self._stop.wait(LEASE_SECONDS / 4):
            try:
                self.renew()
            except OSError:
                pass  # the store is unreachable for now: the next write will tell

    def renew(self) -> None:
        """Extend the lease, unless another run has taken it (then :attr:`lost` says whose)."""
        held = self._read()
        if held and held.get("owner") != self.owner:
            self.lost = _holder(held.get("pid", "?"), held.get("host", ""))
            return
        self._write()

    def check(self) -> None:
        """Before a write: the lease must still be this run's.

        Raises:
            StoreWriteError: another run has taken it.
        """
        held = self._read()
        if held is not None and held.get("owner") != self.owner:
            self.lost = _holder(held.get("pid", "?"), held.get("host", ""))
        if self.lost:
            raise StoreWriteError(
                f"{self.loc.text}: another btlab run ({self.lost}) took the lease on it; this "
                "run stops writing here (the parts it wrote are intact)\n"
                "  fix: let that run finish, then run the same command to add what is missing")

    def release(self) -> None:
        """Stop renewing; delete the lease object if it is still this run's."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        try:
            held = self._read()
            if held and held.get("owner") == self.owner:
                self.loc.fs.delete_file(self.key)
                parent = self.key.rsplit("/", 1)[0]
                # the work prefix goes with its last object (superseded rows stay in it)
                if parent.endswith(WORK_SUFFIX) and not self.loc.fs.get_file_info(
                        pafs.FileSelector(parent, allow_not_found=True)):
                    self.loc.fs.delete_dir(parent)
        except OSError:
            pass
