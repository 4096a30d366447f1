"""Where results live: a results folder or filesystem URI as a :class:`Location`, the work
folder beside it, the names of part files, and :class:`PartInfo` (what one part's footer says).

The names the readers (:mod:`btlab.store.read`), the checks (:mod:`btlab.store.check`) and the
writers (:mod:`btlab.store.folder`, :mod:`btlab.store.lock`) share; nothing here reads a part.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs

from btlab.errors import ResultsError
from btlab.store.schema import version_family

#: Name prefix of a part file btlab writes.
PART_PREFIX = "part-"
#: What a Parquet file's name ends with (only such files are rows of a folder).
PART_SUFFIX = ".parquet"
#: Name suffix of the hidden work folder beside a results folder (:func:`work_dir`).
WORK_SUFFIX = ".btlab"

#: The folder of superseded rows inside the work folder (:func:`superseded_location`).
SUPERSEDED_DIR = "superseded"
#: Where superseded rows go for a destination at an object store's bucket root, inside it
#: (hidden: plain readers skip names starting with ``.``).
BUCKET_ROOT_SUPERSEDED = ".btlab-superseded"

#: The metadata keys that say whose rows a part holds: one folder, one identity.
IDENTITY_KEYS = ("btlab.schema_version", "btlab.config_name", "btlab.problem")


def is_uri(location: str | Path) -> bool:
    """True for a filesystem URI (``file:///...``, ``s3://bucket/...``), False for a path."""
    return "://" in str(location)


def remote_fs(uri: str):
    """(pyarrow filesystem, path inside it) of a URI."""
    return pafs.FileSystem.from_uri(uri)


def work_dir(folder: Path) -> Path:
    """The hidden work folder of results folder ``folder``: ``<parent>/.<name>.btlab``.

    It holds the run's lock, its temporaries and the split checkpoints, outside
    the results folder so that a reader given the folder sees Parquet files only.
    Symbolic links are resolved: every path to one folder has one work folder.
    """
    folder = Path(os.path.realpath(folder))
    return folder.parent / f".{folder.name}{WORK_SUFFIX}"


@dataclass(frozen=True)
class Location:
    """Where results live.

    Attributes:
        text: as given (a path or a URI), for messages.
        fs: its :mod:`pyarrow.fs` filesystem.
        base: the folder's path inside ``fs``, without a trailing ``/``.
        local: the folder on this machine's file system (a path, or a ``file://``
            URI), or None for object stores and other remote filesystems.
    """

    text: str
    fs: Any
    base: str
    local: Path | None

    def path(self, name: str) -> str:
        """The ``fs`` path of file ``name`` in the folder."""
        return f"{self.base}/{name}"

    def shown(self, path: str) -> str:
        """How a file at ``fs`` path ``path`` is named in messages (relative to ``text``)."""
        rel = path[len(self.base) + 1:] if path.startswith(self.base + "/") else path
        if self.local is not None and not is_uri(self.text):
            return str(Path(self.text) / rel)
        return f"{self.text.rstrip('/')}/{rel}"


def locate(where: str | Path) -> Location:
    """The :class:`Location` of a results folder (path) or URI.

    Raises:
        ResultsError: a URI that :mod:`pyarrow.fs` cannot open (an unknown scheme,
            ``file://`` with a relative path, a filesystem library missing).
    """
    if is_uri(where):
        try:
            fs, base = remote_fs(str(where))
        except (pa.ArrowException, OSError, ValueError) as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            text = str(where)
            relative = text[len("file://"):] if text.startswith("file://") and \
                not text.startswith("file:///") else None
            raise ResultsError(
                f"{where}: not a results location btlab can open ({first})\n"
                + (f"  fix: a file URI takes an absolute path after three slashes: "
                   f"file://{Path(os.path.abspath(relative))}, or give the path itself, "
                   f"{relative}" if relative else
                   "  fix: give a folder as a path (results/x, /abs/path/x), a local one as "
                   "file:///abs/path/x (three slashes, an absolute path), or an object store "
                   "as s3://bucket/prefix")) from None
        base = base.rstrip("/")
        local = Path(base) if isinstance(fs, pafs.LocalFileSystem) else None
        return Location(str(where), fs, base, local)
    path = Path(where)
    return Location(str(where), pafs.LocalFileSystem(), os.path.abspath(path), path)


def at_bucket_root(loc: Location) -> bool:
    """True for a remote destination that is a bucket's root (``s3://bucket``): nothing is
    beside it, so what btlab keeps beside a prefix is kept hidden inside it instead."""
    return loc.local is None and "/" not in loc.base.strip("/")


def superseded_location(loc: Location) -> Location:
    """Where the rows of trials the config last run no longer asks for are kept.

    Beside the results, never in them (:mod:`btlab.store.superseded`): a folder's
    ``<parent>/.<name>.btlab/superseded/`` (:func:`work_dir`; a ``file://`` URI is a
    folder); a remote prefix's ``<prefix>.btlab/superseded/``, beside the prefix where its
    lease is (:func:`btlab.store.lock.lease_key`); at a bucket root (``s3://bucket``), the
    hidden ``s3://bucket/.btlab-superseded/`` inside it, which pandas, pyarrow and btlab
    skip (a ``**`` glob of some readers may not: give such a destination a prefix).
    """
    if loc.local is not None:
        real = work_dir(loc.local) / SUPERSEDED_DIR
        given = Path(loc.text)
        text = str(real)
        if not is_uri(loc.text) and given.name and not given.is_symlink():
            text = str(given.parent / f".{given.name}{WORK_SUFFIX}" / SUPERSEDED_DIR)
        return Location(text, pafs.LocalFileSystem(), str(real), real)
    scheme = loc.text.split("://", 1)[0]
    base = (f"{loc.base}/{BUCKET_ROOT_SUPERSEDED}" if at_bucket_root(loc)
            else f"{loc.base}{WORK_SUFFIX}/{SUPERSEDED_DIR}")
    return Location(f"{scheme}://{base}", loc.fs, base, None)


@dataclass(frozen=True)
class PartInfo:
    """What the footer of one part file says.

    Attributes:
        path: its ``fs`` path; ``shown``: its name in messages.
        meta: its ``btlab.*`` metadata (empty for a Parquet file btlab did not write).
        schema: its Arrow schema (with the file's metadata); ``rows``: its row count.
    """

    path: str
    shown: str
    meta: dict[str, str]
    schema: pa.Schema
    rows: int

    @property
    def identity(self) -> tuple[str | None, ...]:
        """The part's :data:`IDENTITY_KEYS` values, its schema version as its family
        (:func:`btlab.store.schema.version_family`: versions 1 and 2 are one family)."""
        version, *rest = (self.meta.get(k) for k in IDENTITY_KEYS)
        return (version_family(version), *rest)
