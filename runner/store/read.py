"""Reading btlab results: the part files of a results folder or filesystem URI, and their rows.

A results folder (``results/<name>``) or a filesystem URI (``s3://bucket/prefix``,
``file:///shared/x``, anything :mod:`pyarrow.fs` opens) holds part files
``part-<run_id>-<seq>.parquet`` and nothing else, so that pandas, pyarrow,
DuckDB and Polars all read it given its path. What a run needs beside them
(its lock, temporaries, split checkpoints) lives in a hidden work folder next
to it (:func:`btlab.store.location.work_dir`).

Every reader of btlab goes through this module, and every one of them checks
the whole folder first (:func:`checked_parts`): the footer of every Parquet
file a plain reader would read (its metadata only: a few hundred bytes each)
must be readable, and every part must carry the same identity (schema
version, config name, problem). A damaged file or a file of another config,
wherever it sits, is a :class:`~btlab.errors.ResultsError` naming the file and
the way out (:mod:`btlab.store.check`); a damaged data page found while reading
rows is named too.

:func:`part_files`, :func:`read_meta`, :func:`part_metas`, :func:`newest_meta`,
:func:`config_of`: the files and their ``btlab.*`` metadata;
:func:`parts_dataset`, :func:`load_rows`, :func:`read_parts`, :func:`iter_batches`: their rows.
Where a folder is and what one part's footer says: :mod:`btlab.store.location`.
It writes nothing: writing is :class:`btlab.store.folder.ResultStore`'s, and
:mod:`btlab.store.folder` re-exports the public names of this module.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable, Iterator

import pandas as pd
import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from btlab.errors import ResultsError
from btlab.store.check import check_identity, damaged, move_aside_hint, no_results_fix
from btlab.store.location import PART_PREFIX, Location, PartInfo, locate, superseded_location


def _visible(name: str) -> bool:
    """Plain readers (pyarrow, pandas) skip names starting with '.' or '_'."""
    return not name.startswith((".", "_"))


def list_parts(loc: Location) -> list[str]:
    """The ``fs`` paths of the files a plain reader would read, in name order.

    Every visible file, in subfolders too: pandas and pyarrow given the folder
    read every file whose name and folders do not start with ``.`` or ``_``,
    whatever its extension (and Polars refuses a folder of mixed extensions).
    So btlab's parts, and anything else placed there (another Parquet file, a
    ``notes.txt``), which the checks then refuse by name.
    """
    found: list[str] = []
    if loc.local is not None:
        top = Path(loc.base)
        if not top.is_dir():
            return []
        for root, dirs, files in os.walk(top):
            dirs[:] = sorted(d for d in dirs if _visible(d))
            found += [os.path.join(root, f) for f in files if _visible(f)]
    else:
        try:
            infos = loc.fs.get_file_info(pafs.FileSelector(loc.base, allow_not_found=True,
                                                            recursive=True))
        except (pa.ArrowException, OSError) as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise ResultsError(f"{loc.text}: cannot be listed ({first})\n"
                               "  fix: check the URI, the network and the credentials") from None
        for info in infos:
            rel = info.path[len(loc.base) + 1:]
            if info.type == pafs.FileType.File and all(_visible(p) for p in rel.split("/")):
                found.append(info.path)
    return sorted(found, key=lambda p: (p.count("/"), p))


def part_files(folder: Path) -> list[Path]:
    """The Parquet files of a local results folder (as :func:`list_parts`), oldest name first."""
    loc = locate(Path(folder))
    return [Path(loc.shown(p)) for p in list_parts(loc)]


_FOOTERS: dict[tuple[str, int, int], tuple[pa.Schema, int]] = {}


def read_footer(loc: Location, path: str) -> PartInfo:
    """Read one part file's footer (cached by path, size and mtime for local files)."""
    key = None
    if loc.local is not None:
        try:
            st = os.stat(path)
            key = (path, st.st_size, st.st_mtime_ns)
        except OSError:
            pass
    cached = _FOOTERS.get(key) if key else None
    if cached is None:
        try:
            md = pq.read_metadata(path, filesystem=loc.fs)
            cached = (md.schema.to_arrow_schema(), md.num_rows)
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise damaged(loc, path, exc) from None
        if key:
            if len(_FOOTERS) > 100_000:
                _FOOTERS.clear()
            _FOOTERS[key] = cached
    schema, rows = cached
    raw = schema.metadata or {}
    meta = _checked_meta(loc, path, raw)
    return PartInfo(path, loc.shown(path), meta, schema, rows)


#: The ``btlab.*`` metadata keys that hold JSON, and the JSON type each holds.
JSON_META = {"btlab.config": dict, "btlab.overrides": list}


def _checked_meta(loc: Location, path: str, raw: dict) -> dict[str, str]:
    """The ``btlab.*`` metadata of a part as text, checked where it enters: UTF-8, and
    the keys of :data:`JSON_META` JSON of their type (a part edited or damaged there
    would make every reader of the folder fail with a traceback).

    Raises:
        ResultsError: a key that is not text or not JSON, naming the part and the key.
    """
    meta: dict[str, str] = {}
    for k, v in raw.items():
        if not k.startswith(b"btlab."):
            continue
        key = k.decode("utf-8", "replace")
        try:
            meta[key] = v.decode()
        except UnicodeDecodeError as exc:
            raise _bad_meta(loc, path, key, "UTF-8 text", str(exc)) from None
        kind = JSON_META.get(key)
        if kind is not None:
            try:
                ok = isinstance(json.loads(meta[key]), kind)
                why = f"JSON, but not a JSON {'object' if kind is dict else 'array'}"
            except ValueError as exc:  # json.JSONDecodeError, or a number too long to read
                ok, why = False, str(exc).splitlines()[0][:200]
            if not ok:
                raise _bad_meta(loc, path, key, f"a JSON {'object' if kind is dict else 'array'}",
                                why)
    return meta


def _bad_meta(loc: Location, path: str, key: str, expected: str, why: str) -> ResultsError:
    shown = loc.shown(path)
    return ResultsError(
        f"{shown}: damaged part file, its Parquet metadata {key} is not {expected} ({why})\n"
        f"  fix: move it out of the folder ({move_aside_hint(loc, shown)}), then run the "
        "same `btlab run` command again: it runs that file's trials again")


def scan_parts(where: str | Path | Location) -> tuple[Location, list[PartInfo]]:
    """Every part of a folder or URI with its footer (a damaged one raises, naming it)."""
    loc = where if isinstance(where, Location) else locate(where)
    return loc, [read_footer(loc, p) for p in list_parts(loc)]


def checked_parts(where: str | Path | Location,
                  expected: tuple[str | None, ...] | None = None
                  ) -> tuple[Location, list[PartInfo]]:
    """:func:`scan_parts`, then :func:`check_identity`: the parts of one config, all readable."""
    loc, infos = scan_parts(where)
    check_identity(loc, infos, expected)
    return loc, infos


def union_schema(loc: Location, infos: list[PartInfo],
                 first: pa.Schema | None = None) -> pa.Schema:
    """Every column of every part (``first``'s columns first, in its order), no metadata.

    Raises:
        ResultsError: two parts store one column with different types.
    """
    schemas = ([first] if first is not None else []) + [i.schema for i in infos]
    try:
        return pa.unify_schemas([s.remove_metadata() for s in schemas])
    except (pa.ArrowTypeError, pa.ArrowInvalid) as exc:
        raise ResultsError(f"{loc.text}: its part files store a column with different types "
                           f"({str(exc).splitlines()[0]})\n  fix: write elsewhere with --out, "
                           "or start over with --fresh") from None


def _find_damaged(loc: Location, infos: list[PartInfo], schema: pa.Schema,
                  exc: BaseException) -> ResultsError:
    """After a read of all parts failed: the error naming the first part that fails alone."""
    for info in infos:
        try:
            pads.dataset([info.path], format="parquet", filesystem=loc.fs,
                         schema=schema).to_table()
        except (pa.ArrowException, OSError, ValueError) as own:
            return damaged(loc, info.path, own)
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return ResultsError(f"{loc.text}: cannot be read ({first})\n"
                        "  fix: check the folder's part files and the storage")


def _parts(where: str | Path | Location,
           infos: list[PartInfo] | None) -> tuple[Location, list[PartInfo]]:
    if isinstance(where, Location) and infos is not None:
        return where, infos
    return checked_parts(where)


def read_parts(where: str | Path | Location, columns: Iterable[str] | None = None,
               infos: list[PartInfo] | None = None) -> pa.Table | None:
    """The rows of every checked part as one Arrow table in the folder's union schema.

    Args:
        columns: the columns to read (default all); a column a part lacks reads as nulls.
        infos: the parts (default: :func:`checked_parts` of ``where``).

    Returns:
        The table, or None when there is no part.

    Raises:
        ResultsError: a damaged part (named), or parts of several configs.
    """
    loc, found = _parts(where, infos)
    if not found:
        return None
    schema = union_schema(loc, found)
    data = pads.dataset([i.path for i in found], format="parquet", filesystem=loc.fs,
                        schema=schema)
    try:
        return data.to_table(columns=list(columns) if columns is not None else None)
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise _find_damaged(loc, found, schema, exc) from None


def iter_batches(where: str | Path | Location, columns: Iterable[str],
                 infos: list[PartInfo] | None = None) -> Iterator[tuple[str, pa.RecordBatch]]:
    """``(part's fs path, batch of its rows)`` over every checked part, in one scan.

    Raises:
        ResultsError: a damaged part (named), or parts of several configs.
    """
    loc, found = _parts(where, infos)
    if not found:
        return
    schema = union_schema(loc, found)
    data = pads.dataset([i.path for i in found], format="parquet", filesystem=loc.fs,
                        schema=schema)
    try:
        for tagged in data.scanner(columns=list(columns)).scan_batches():
            yield tagged.fragment.path, tagged.record_batch
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise _find_damaged(loc, found, schema, exc) from None


def read_meta(part: Path) -> dict[str, str]:
    """The ``btlab.*`` metadata of one local part file (empty for a foreign Parquet file)."""
    part = Path(part)
    loc = locate(part.parent)
    return read_footer(loc, loc.path(part.name)).meta


def remote_parts(uri: str) -> tuple[Any, list[str]]:
    """The filesystem of ``uri`` and the Parquet files under it (``fs`` paths), in name order."""
    loc = locate(uri)
    return loc.fs, list_parts(loc)


def part_metas(folder: str | Path | Location) -> list[dict[str, str]]:
    """The ``btlab.*`` metadata of every part of a folder or URI, in name order."""
    return [i.meta for i in scan_parts(folder)[1]]


def parts_dataset(folder: str | Path | Location):
    """A pyarrow dataset of the parts of a folder or URI, or None when there are none.

    Every part is checked first (:func:`checked_parts`). Its schema unites every
    part's (a part written before a column was added lacks that column: its
    rows read as null there), so no column is dropped for being absent from the
    first part. A data page damaged past a readable footer shows only while
    reading; :func:`read_parts` and :func:`iter_batches` name the file then.
    """
    loc, infos = checked_parts(folder)
    if not infos:
        return None
    return pads.dataset([i.path for i in infos], format="parquet", filesystem=loc.fs,
                        schema=union_schema(loc, infos))


def _nullable_dtype(arrow_type: pa.DataType) -> Any:
    """pandas dtype of an Arrow column read with ``nullable=True``: integers ``Int64``,
    booleans ``boolean``, anything else pyarrow's default (None)."""
    if pa.types.is_integer(arrow_type):
        return pd.Int64Dtype()
    if pa.types.is_boolean(arrow_type):
        return pd.BooleanDtype()
    return None


def load_rows(folder: str | Path | Location, columns: Iterable[str] | None = None,
              nullable: bool = False, superseded: bool = False):
    """All rows of a results folder as a pandas DataFrame, one row per trial id (the newest).

    ``nullable``: every integer column as pandas ``Int64`` and every boolean
    column as ``boolean`` (``pd.NA`` where a value is missing); by default
    pyarrow's dtypes (an integer column with nulls becomes float64).
    ``superseded``: the superseded rows kept beside the folder too
    (:mod:`btlab.store.superseded`), before the folder's own (a trial in both
    places: the folder's row).

    Raises:
        ResultsError: the folder has no part files, a part is damaged (named), or
            holds rows of another config (named).
    """
    loc, infos = checked_parts(folder)
    if not infos:
        raise ResultsError(f"{loc.text}: no btlab results here (no {PART_PREFIX}*.parquet files)\n"
                           f"  fix: {no_results_fix(loc)}")
    table = read_parts(loc, columns, infos)
    assert table is not None
    if superseded:
        aside, kept = checked_parts(superseded_location(loc), infos[0].identity)
        if kept:
            old = read_parts(aside, columns, kept)
            assert old is not None
            table = pa.concat_tables([old, table], promote_options="permissive")
    df = table.to_pandas(types_mapper=_nullable_dtype if nullable else None)
    if "trial_id" in df.columns:
        df = df.drop_duplicates("trial_id", keep="last").reset_index(drop=True)
    return df


def config_of(folder: str | Path | Location) -> dict[str, Any]:
    """The expanded config stored in the newest part of a results folder."""
    return json.loads(newest_meta(folder).get("btlab.config", "{}"))


def newest_meta(folder: str | Path | Location) -> dict[str, str]:
    """The ``btlab.*`` metadata of the part written last (by its ``btlab.written_at``).

    Part names sort by run only to the second, so two runs within one second
    would tie; the write time in the metadata (microseconds) decides.
    """
    metas = part_metas(folder)
    if not metas:
        return {}
    return max(enumerate(metas), key=lambda im: (im[1].get("btlab.written_at", ""), im[0]))[1]
