"""Writing an output file whole, or not at all: the HTML report, saved figures, README tables.

Every file btlab writes outside a results folder goes through
:func:`atomic_write_bytes` (or :func:`atomic_write_text`):

* Only a regular file is written: a new one, or an existing regular file
  you may write (a read-only one is refused, as the shell's ``>`` does, though
  a rename would replace it), which is replaced: a path that is one of several
  hard links gets the new file, the other links keep the old content. A
  directory, a named pipe (FIFO), a character or block
  device, a socket or a symbolic link at the path is refused with
  :class:`btlab.errors.OutputPathError` (exit status 2) naming what is there
  and what to do, before anything is written. The check uses ``lstat``, so it
  never opens (and never blocks on) a FIFO. Symbolic links are refused rather
  than followed: a link may point anywhere (``/dev/full``, another user's
  file), and the message names its target, to be given instead.
* The bytes go to a hidden temporary ``.<name>.<random>.tmp`` in the same
  directory, are flushed to disk (``fsync``), and the temporary is renamed
  over the path (``os.replace``, atomic on POSIX): a reader sees the old file
  or the new one, never a torn one. The path is checked again just before the
  rename (what appears there between the two checks, a few milliseconds, is
  not seen).
* On any failure -- disk full (``ENOSPC``), quota, an I/O error, Ctrl-C --
  the temporary is removed and the old file, if any, is left as it was. A
  full disk or an I/O error raises :class:`btlab.errors.WriteError` (exit
  status 3); a directory that cannot be created or written
  (permissions, a read-only filesystem) raises ``OutputPathError`` (exit 2).
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
import tempfile
from pathlib import Path

from btlab.errors import OutputPathError, WriteError

#: errno values reported as "the disk is full" (exit status 3).
_FULL = {errno.ENOSPC: "the disk is full (no space left on the device)",
         errno.EDQUOT: "the disk quota is used up", errno.EFBIG: "the file is too large "
         "for this filesystem"}
#: errno values reported as "not writable here" (exit status 2: a path to change).
_DENIED = {errno.EACCES, errno.EPERM, errno.EROFS}
_CHUNK = 1 << 20


def describe_kind(mode: int) -> str | None:
    """What a non-regular file is (``a directory``, ``a named pipe (FIFO)``, ...), from an
    ``lstat`` mode; None for a regular file."""
    for test, name in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a directory"),
                       (stat.S_ISFIFO, "a named pipe (FIFO)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return None if stat.S_ISREG(mode) else "not a regular file"


def check_target(path: str | Path, what: str = "the file", stdout_hint: str = "") -> Path:
    """Refuse ``path`` unless it is absent or a regular file (a symbolic link is refused).

    ``what`` names the output in the message (``the report``); ``stdout_hint``
    is added to the fix for a device or a pipe (e.g. ``or -o - to print it``).
    Returns ``path`` as a Path. Never opens the path.

    Raises:
        OutputPathError: something other than a regular file is there (exit 2).
    """
    if isinstance(path, str) and path.endswith(("/", os.sep)):  # Path() drops the slash
        raise OutputPathError(f"{path}: cannot write {what} there: the path ends in a slash, "
                              f"so it names a folder\n  fix: name a file, e.g. "
                              f"{Path(path) / _example(what)}")
    path = Path(path)
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return path
    except NotADirectoryError:
        raise OutputPathError(f"{path}: cannot write {what} there: a folder on the way is a "
                              f"file\n  fix: {_around_file(path)}") from None
    except OSError as exc:
        raise OutputPathError(f"{path}: cannot write {what} there: {exc.strerror}\n"
                              "  fix: give another path") from None
    kind = describe_kind(mode)
    if kind is None:
        return path
    if stat.S_ISLNK(mode):
        target = os.readlink(path)
        fix = (f"give the link's target ({target}) itself if that is the file to replace, "
               "or remove the link; btlab does not write through symbolic links")
    elif stat.S_ISDIR(mode):
        fix = f"name a file inside it, e.g. {path / _example(what)}"
    else:
        fix = "name a regular file (a new one, or one to replace)" + (
            f"; {stdout_hint}" if stdout_hint else "")
    raise OutputPathError(f"{path}: cannot write {what} there: it is {kind}, not a regular "
                          f"file; nothing was written\n  fix: {fix}")


def _example(what: str) -> str:
    """A file name for the fix of a path that names a folder."""
    return {"the report": "report.html", "the figure": "plot.png"}.get(what, "file")


def atomic_write_text(path: str | Path, text: str, what: str = "the file",
                      stdout_hint: str = "", encoding: str = "utf-8") -> Path:
    """:func:`atomic_write_bytes` of ``text`` encoded (UTF-8 by default)."""
    return atomic_write_bytes(path, text.encode(encoding), what, stdout_hint)


def atomic_write_bytes(path: str | Path, data: bytes, what: str = "the file",
                       stdout_hint: str = "") -> Path:
    """Write ``data`` to ``path`` whole or not at all (see the module docstring).

    Creates missing parent folders. A new file gets the usual permissions
    (0666 less the umask); a replaced file keeps its own.

    Returns:
        ``path`` as a Path.

    Raises:
        OutputPathError: the path is not a regular file, or its folder cannot be
            created or written (exit 2; nothing written).
        WriteError: the disk is full, the quota used up, or an I/O error (exit 3;
            the temporary removed, an old file unchanged).
    """
    path = check_target(path, what, stdout_hint)
    folder = path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        _raise(exc, path, what, f"cannot create its folder {folder}")
    try:
        old_mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        old_mode = None
    except OSError as exc:
        _raise(exc, path, what, "cannot read what is there")
    if old_mode is not None and not os.access(path, os.W_OK):
        # a rename needs only the folder writable: refuse what `>` would refuse
        raise OutputPathError(f"{path}: cannot write {what} there: the file is read-only "
                              f"for you (mode {old_mode:04o}); nothing was written\n"
                              f"  fix: make it writable (chmod u+w {path}), or give another "
                              "path")
    tmp = folder / f".{path.name}.{secrets.token_hex(4)}.tmp"
    fd = -1
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0),
                     0o666)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view[:_CHUNK]):]
        if old_mode is not None:
            os.fchmod(fd, old_mode)
        os.fsync(fd)
        os.close(fd)
        fd = -1
        check_target(path, what, stdout_hint)
        os.replace(tmp, path)
    except BaseException as exc:
        if fd >= 0:
            try:
                os.close(fd)
            except OSError:
                pass
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        except OSError:
            pass  # as good as it gets: the temporary is hidden and named for what it is
        if isinstance(exc, OSError):
            _raise(exc, path, what, "")
        raise
    return path


def _around_file(path: Path) -> str:
    """The fix of an output path below a file, or in a folder that does not exist."""
    for folder in path.parents:
        if folder.is_file():
            return (f"{folder} is a file, not a folder: give a path beside it, e.g. "
                    f"{folder.parent / path.name}")
        if folder.is_dir():
            break
    missing = next((f for f in reversed(path.parents) if not f.exists()), None)
    if missing is not None:
        return (f"create the folder first (mkdir -p {path.parent}), or give a path in a "
                "folder that exists")
    return "give a path whose folders are folders"


def _raise(exc: OSError, path: Path, what: str, step: str) -> None:
    """Turn an OSError met while writing ``path`` into OutputPathError or WriteError."""
    reason = exc.strerror or str(exc)
    where = f"{step}: " if step else ""
    if exc.errno in _FULL:
        raise WriteError(f"{path}: could not write {what}: {where}{_FULL[exc.errno]}; nothing "
                         "was written (a file already there is unchanged)\n"
                         "  fix: free space on that disk, or give a path on another "
                         "disk") from None
    if exc.errno in _DENIED:
        raise OutputPathError(f"{path}: cannot write {what} there: {where}{reason}; nothing "
                              f"was written\n  fix: give a path in a folder you can write to, "
                              f"e.g. {Path(tempfile.gettempdir()) / path.name}") from None
    if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.EEXIST, errno.EISDIR):
        raise OutputPathError(f"{path}: cannot write {what} there: {where}{reason}\n"
                              f"  fix: {_around_file(path)}") from None
    raise WriteError(f"{path}: could not write {what}: {where}{reason} (errno "
                     f"{errno.errorcode.get(exc.errno or 0, exc.errno)}); nothing was "
                     "written (a file already there is unchanged)\n"
                     "  fix: check the disk, or give a path on another disk") from None
