"""What is wrong with a results folder, in words: a damaged part, rows of another config.

:func:`damaged` and :func:`check_identity` build the
:class:`~btlab.errors.ResultsError` that names the file at fault and the
command that moves it aside (:func:`move_aside_hint`); :mod:`btlab.store.read`
raises them for every reader and writer of btlab.
"""

from __future__ import annotations

import difflib
import os
import re
from collections import Counter
from pathlib import Path

from btlab.errors import ResultsError
from btlab.store.location import Location, PartInfo, is_uri
from btlab.store.schema import READ_VERSIONS, SCHEMA_VERSION, is_newer, version_family


def move_aside_hint(loc: Location, shown: str) -> str:
    """A command that moves file ``shown`` out of the folder (keeping it), for messages."""
    if loc.local is None:
        return f"move {shown} out of {loc.text} with your storage's own tools"
    aside = aside_dir(Path(loc.local))
    return f"mkdir -p {aside} && mv {shown} {aside}/"


def aside_dir(folder: Path) -> Path:
    """Where :func:`move_aside_hint` moves a file: ``<parent>/.<name>.aside``, hidden, so
    that readers of the parent folder (results/) skip it as they skip the work folder."""
    name = folder.name or Path(os.path.realpath(folder)).name
    return folder.parent / f".{name}.aside"


def no_results_fix(loc: Location) -> str:
    """The fix of a folder with no part files, for the input given: the folder a config
    file writes, a results folder of a close name, or the results folders below or beside."""
    path = loc.local
    if path is None or is_uri(loc.text):
        return "give the folder or prefix `btlab run --out` wrote"
    path = Path(loc.text)
    if path.is_file() and path.suffix in (".yaml", ".yml"):
        named = re.search(r"^name:\s*['\"]?([A-Za-z0-9][A-Za-z0-9._-]*)", _head(path), re.M)
        if named:
            return (f"give the folder that config's run writes, results/{named[1]} "
                    f"(`btlab run {path}` writes it)")
    if path.is_dir() and _sweeps(path):
        return f"give one of the results folders in it: {_listed(path, _sweeps(path))}"
    parent = path.parent if path.name else path
    found = _sweeps(parent) if parent.is_dir() else []
    close = difflib.get_close_matches(path.name, found, n=1, cutoff=0.6)
    if close:
        return f"did you mean {parent / close[0]}?"
    if found:
        return f"give one of the results folders in {parent}: {_listed(parent, found)}"
    return ("give the folder a run wrote: results/ and the config's name, e.g. "
            "results/warnsdorff-64-starts for configs/warnsdorff_64_starts.yaml")


def _head(path: Path) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read(65536)
    except OSError:
        return ""


def _sweeps(folder: Path) -> list[str]:
    """The names of the visible subfolders of ``folder`` that hold part files."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return []
    out = []
    for entry in entries[:1000]:
        if entry.name.startswith((".", "_")) or not entry.is_dir():
            continue
        try:
            with os.scandir(entry.path) as inner:
                if any(e.name.startswith("part-") and e.name.endswith(".parquet") for e in inner):
                    out.append(entry.name)
        except OSError:
            continue
    return out


def _listed(folder: Path, names: list[str]) -> str:
    shown = ", ".join(str(folder / n) for n in names[:5])
    return shown + (f" (and {len(names) - 5} more)" if len(names) > 5 else "")


def damaged(loc: Location, path: str, exc: BaseException) -> ResultsError:
    """The error for a part file that cannot be read: names it, says how to go on."""
    shown = loc.shown(path)
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    name = path.rsplit("/", 1)[-1]
    if not name.endswith(".parquet"):
        return ResultsError(
            f"{shown}: not a part file, and not Parquet ({first}): pandas, pyarrow and "
            "Polars given the folder read every file in it, and fail on this one\n"
            f"  fix: move it out of the folder ({move_aside_hint(loc, shown)}); a results "
            "folder holds part files only")
    return ResultsError(
        f"{shown}: damaged part file, it cannot be read as Parquet ({first})\n"
        f"  fix: move it out of the folder ({move_aside_hint(loc, shown)}), then run the "
        "same `btlab run` command again: it runs that file's trials again")


def _describe(identity: tuple[str | None, ...], version: str | None = None) -> str:
    """Words for a part identity; ``version``: the part's own schema version (default: the
    identity's family, "1 or 2" for the versions this btlab reads)."""
    family, name, problem = identity
    if name is None:
        return "no btlab metadata (not a part btlab wrote)"
    if version is None:
        version = (" or ".join(READ_VERSIONS) if family == version_family(READ_VERSIONS[0])
                   else family)
    return f"config {name!r} ({problem}, schema version {version})"


def check_not_newer(loc: Location, infos: list[PartInfo]) -> None:
    """Refuse a folder holding a part written by a newer btlab (a schema version after
    :data:`~btlab.store.schema.SCHEMA_VERSION`): its columns may mean what this btlab cannot know.

    Raises:
        ResultsError: naming the first such part, its version and the way out.
    """
    newer = [i for i in infos if is_newer(i.meta.get("btlab.schema_version"))]
    if not newer:
        return
    first = newer[0]
    raise ResultsError(
        f"{first.shown}: written by a newer btlab (schema version "
        f"{first.meta.get('btlab.schema_version')}); this btlab reads schema versions "
        f"{', '.join(READ_VERSIONS)} ({len(newer)} of the {len(infos)} part(s) of "
        f"{loc.text} are newer)\n"
        "  fix: upgrade btlab (pip install -U . in a btlab checkout) to read or resume this "
        f"folder, or write this btlab's runs elsewhere, e.g. --out {loc.text.rstrip('/')}-new")


def check_identity(loc: Location, infos: list[PartInfo],
                   expected: tuple[str | None, ...] | None = None) -> None:
    """Refuse a folder whose parts are not all of one identity (:data:`IDENTITY_KEYS`).

    Args:
        expected: the identity every part must have (a run's own); None: the
            identity of most parts (ties: this btlab's schema version, then the
            newest part's).

    Parts of the schema versions this btlab reads (:data:`~btlab.store.schema.READ_VERSIONS`)
    are of one identity when their config and problem are: a folder written by an older
    btlab and resumed by this one holds both.

    Raises:
        ResultsError: a part written by a newer btlab (:func:`check_not_newer`), or
            naming the files of another identity (up to 5) and how to move them aside.
    """
    if not infos:
        return
    check_not_newer(loc, infos)
    if expected is None:
        counts = Counter(i.identity for i in infos)
        newest = max(infos, key=lambda i: i.meta.get("btlab.written_at", "")).identity
        current = version_family(str(SCHEMA_VERSION))
        expected = max(counts, key=lambda ident: (counts[ident], ident[0] == current,
                                                  ident == newest))
    odd = [i for i in infos if i.identity != expected]
    if not odd:
        return
    names = "\n".join(f"    {i.shown}: {_describe(i.identity, i.meta.get('btlab.schema_version'))}"
                      for i in odd[:5])
    more = f"\n    ... and {len(odd) - 5} more" if len(odd) > 5 else ""
    raise ResultsError(
        f"{loc.text}: {len(odd)} of its {len(infos)} Parquet file(s) are not rows of "
        f"{_describe(expected)}, which the folder holds:\n{names}{more}\n"
        f"  fix: move such a file out of the folder (e.g. "
        f"{move_aside_hint(loc, odd[0].shown)}); a folder holds the rows of one config")


def check_not_nested(folder: Path) -> None:
    """Refuse a results folder inside another one (a folder above it holding part files).

    Readers of the outer folder read its subfolders too (pandas, pyarrow, btlab):
    the rows written here would be foreign rows there, and it would be refused.
    A folder reached through a hidden (``.``/``_``) folder is not read, so allowed.

    Raises:
        ResultsError: naming the outer folder and where to write instead.
    """
    real = Path(os.path.realpath(folder))
    for outer in real.parents:
        below = real.relative_to(outer).parts
        if any(p.startswith((".", "_")) for p in below):
            return  # plain readers of ``outer`` skip what is below a hidden folder
        try:
            with os.scandir(outer) as entries:
                part = next((e.name for e in entries if e.name.startswith("part-")
                             and e.name.endswith(".parquet") and e.is_file()), None)
        except OSError:
            continue
        if part is not None:
            raise ResultsError(
                f"{folder}: is inside the results folder {outer} (it holds {part}), whose "
                "readers read every subfolder: these rows would be foreign rows there\n"
                "  fix: write elsewhere with --out, e.g. "
                f"{outer.parent / (outer.name + '-' + real.name)}")
