"""Reading btlab results: the part files of a results folder or filesystem URI, and their rows.

A results folder (``results/<name>``) or a filesystem URI (``s3://bucket/prefix``,
``file:///shared/x``, anything :mod:`pyarrow.fs` opens) holds part files
``part-<run_id>-<seq>.parquet``; this module finds them (:func:`part_files`,
:func:`remote_parts`), reads their ``btlab.*`` metadata (:func:`read_meta`,
:func:`part_metas`, :func:`newest_meta`, :func:`config_of`) and their rows
(:func:`parts_dataset`, :func:`load_rows`). It writes nothing: writing is
:class:`runner.store.ResultStore`'s, and :mod:`runner.store` imports this
module and re-exports its public names (``from runner.store import load_rows,
part_files`` keeps working).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq

from .errors import ResultsError

#: Name prefix of a finished part file (temporaries are hidden: they start with ".").
PART_PREFIX = "part-"


def part_files(folder: Path) -> list[Path]:
    """The finished part files of a results folder, oldest name first."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.name.startswith(PART_PREFIX)
                  and p.suffix == ".parquet")


def read_meta(part: Path) -> dict[str, str]:
    """The ``btlab.*`` metadata of one part file (empty for a foreign Parquet file)."""
    meta = pq.read_schema(part).metadata or {}
    return {k.decode(): v.decode() for k, v in meta.items() if k.startswith(b"btlab.")}


def is_uri(location: str | Path) -> bool:
    """True for a filesystem URI (``file:///...``, ``s3://bucket/...``), False for a path."""
    return "://" in str(location)


def remote_fs(uri: str):
    """(pyarrow filesystem, path inside it) of a URI."""
    import pyarrow.fs as pafs

    return pafs.FileSystem.from_uri(uri)


def remote_parts(uri: str) -> tuple[Any, list[str]]:
    """The filesystem of ``uri`` and the finished part files under it, oldest name first."""
    import pyarrow.fs as pafs

    fs, base = remote_fs(uri)
    infos = fs.get_file_info(pafs.FileSelector(base, allow_not_found=True))
    parts = sorted(i.path for i in infos if i.type == pafs.FileType.File
                   and i.base_name.startswith(PART_PREFIX) and i.base_name.endswith(".parquet"))
    return fs, parts


def part_metas(folder: str | Path) -> list[dict[str, str]]:
    """The ``btlab.*`` metadata of every part of a folder or URI, in name order."""
    if is_uri(folder):
        fs, parts = remote_parts(str(folder))
        metas = [pq.read_schema(p, filesystem=fs).metadata or {} for p in parts]
        return [{k.decode(): v.decode() for k, v in m.items() if k.startswith(b"btlab.")}
                for m in metas]
    return [read_meta(p) for p in part_files(Path(folder))]


def parts_dataset(folder: str | Path):
    """A pyarrow dataset of the parts of a folder or URI, or None when there are none.

    Its schema unites every part's (a part written before a column was added
    lacks that column: its rows read as null there), so no column is dropped
    for being absent from the first part.
    """
    fs = None
    if is_uri(folder):
        fs, parts = remote_parts(str(folder))
    else:
        parts = [str(p) for p in part_files(Path(folder))]
    if not parts:
        return None
    schema = pa.unify_schemas([pq.read_schema(p, filesystem=fs) for p in parts])
    return pads.dataset(parts, format="parquet", filesystem=fs, schema=schema)



def load_rows(folder: str | Path, columns: Iterable[str] | None = None):
    """All rows of a results folder as a pandas DataFrame, one row per trial id.

    Raises:
        ResultsError: the folder has no part files.
    """
    data = parts_dataset(folder)
    if data is None:
        raise ResultsError(f"{folder}: no btlab results here (no {PART_PREFIX}*.parquet files)\n"
                           "  fix: give the folder `btlab run` wrote, e.g. results/<name>")
    table = data.to_table(columns=list(columns) if columns else None)
    df = table.to_pandas()
    if "trial_id" in df.columns:
        df = df.drop_duplicates("trial_id", keep="last").reset_index(drop=True)
    return df


def config_of(folder: str | Path) -> dict[str, Any]:
    """The expanded config stored in the newest part of a results folder."""
    return json.loads(newest_meta(folder).get("btlab.config", "{}"))


def newest_meta(folder: str | Path) -> dict[str, str]:
    """The ``btlab.*`` metadata of the part written last (by its ``btlab.written_at``).

    Part names sort by run only to the second, so two runs within one second
    would tie; the write time in the metadata (microseconds) decides.
    """
    metas = part_metas(folder)
    if not metas:
        return {}
    return max(enumerate(metas), key=lambda im: (im[1].get("btlab.written_at", ""), im[0]))[1]
