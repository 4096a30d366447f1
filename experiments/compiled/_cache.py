"""Where numba keeps the compiled kernels between processes, keyed on their sources.

Every kernel is compiled with ``cache=True``: the machine code is written to
disk the first time a process compiles it and loaded (in milliseconds rather
than seconds) by every later process, Ray workers included.

**The key.** Numba checks a cached kernel against its own source file only, yet
a kernel's machine code also holds what it took from other modules: the
constants it reads (the return codes of :mod:`._driver`), the kernels of other
files it calls, inlined. So the cache lives in a folder named by
:func:`cache_key`, a BLAKE2b hash of btlab's version and the bytes of every
source the kernels depend on (:func:`kernel_sources`: every module of this
package and the modules of :mod:`btlab.experiments` they import, directly or not,
found by scanning their imports). Any edit to any of them, or a new version,
names a new folder, and the kernels are compiled afresh there; the old
folders are left alone (unused; delete them at will).

**The root** the key folder goes under, in this order:

1. ``BTLAB_CACHE_DIR`` when set, else numba's own ``NUMBA_CACHE_DIR``.
2. ``__pycache__`` next to the kernel sources, when that folder is writable
   (a development checkout, or the copy of the code Ray unpacks on a worker).
3. Otherwise (a read-only install): ``$XDG_CACHE_HOME/btlab/numba``, by
   default ``~/.cache/btlab/numba``.

A root whose key folder cannot be created is skipped for the next one; when
none can be, a fresh temporary folder serves this process alone (the kernels
then compile in every process, but never load stale code).

Numba writes each cache file to a temporary name and renames it into place,
so processes compiling the same kernels at once (Ray workers) never read a
half-written file; the key folder is created with ``exist_ok``.

:func:`configure` must run before the kernels are decorated; the package's
``__init__`` calls it first.

**A broken cache is never a broken trial.** Cache files overwritten with junk,
truncated (to 0 bytes or partway), a byte flipped in the machine code, or a
folder where saving fails (a full disk, a quota, a read-only mount): numba
would raise out of the kernel's first call (``UnpicklingError``, ``EOFError``,
``OSError``), which made every compiled trial an error row, or load damaged
machine code. :func:`guard_caches` gives every kernel's dispatcher a
:class:`checked cache <_checked_cache_class>` instead (numba's own
``FunctionCache`` with btlab's file format, nothing patched in numba itself):
each ``.nbi`` and ``.nbc`` file starts with a magic string and a BLAKE2b
digest of the rest, checked before anything is unpickled; a file that fails
the check, or any error loading one, is a miss (the kernel is compiled afresh
and the file rewritten), and any error saving one leaves the kernel compiled in
memory for this process. Each of the two is told once per process, as a
:class:`KernelCacheWarning`; the trial's result is that of a compiled kernel
either way.
"""

from __future__ import annotations

import errno
import hashlib
import io
import itertools
import os
import pickle
import re
import sys
import tempfile
import tomllib
import warnings
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Any, Iterable

from btlab.errors import shown

_PACKAGE_DIR = Path(__file__).resolve().parent
#: The folder of :mod:`btlab.experiments`, whose modules the kernels import.
_TOP_DIR = _PACKAGE_DIR.parent
#: The import name of that folder.
_TOP_NAME = ["btlab", "experiments"]
#: Key folders are named ``kernels-<hex>``.
KEY_PREFIX = "kernels-"


def _writable(folder: Path) -> bool:
    probe = folder if folder.exists() else folder.parent
    return os.access(probe, os.W_OK | os.X_OK)


def default_user_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/btlab/numba``, by default ``~/.cache/btlab/numba``."""
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(root) / "btlab" / "numba"


def btlab_version() -> str:
    """btlab's version, as :func:`btlab.store.provenance.version` finds it (``pyproject.toml``
    next to the code, else the installed distribution's, else ``unknown``)."""
    pyproject = _TOP_DIR.parent / "pyproject.toml"
    if pyproject.is_file():
        try:
            project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
        except (OSError, tomllib.TOMLDecodeError):
            project = {}
        if project.get("name") == "btlab" and isinstance(project.get("version"), str):
            return str(project["version"])
    try:
        return metadata.version("btlab")
    except metadata.PackageNotFoundError:
        return "unknown"


def _module_file(parts: list[str]) -> Path | None:
    """The file of module ``btlab.experiments.<parts>`` (``[]``: the package itself), or None."""
    base = _TOP_DIR.joinpath(*parts)
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    if parts and base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    return None


#: ``from <dots><module> import <names>`` (names possibly in parentheses over
#: several lines) and ``import <modules>``, at any indentation (inside functions too).
_FROM = re.compile(r"^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)", re.M)
_IMPORT = re.compile(r"^[ \t]*import[ \t]+([^\n]*)", re.M)


def _names(text: str) -> list[str]:
    """``a, b as c  # note`` or ``(a,\n b)`` -> ``["a", "b"]``."""
    text = re.sub(r"#[^\n]*", "", text).strip("() \t\n")
    return [item.split()[0] for item in text.split(",") if item.split()]


def _imported_files(path: Path) -> set[Path]:
    """The files of :mod:`btlab.experiments` that module ``path`` imports (at module
    level and inside functions; relative or absolute imports).

    The imports are found by a scan of the text, not a parse (a tenth of the
    time, at every process start): an import-like line in a string can only
    add a file, never drop one.
    """
    package = list(path.relative_to(_TOP_DIR).parts[:-1])  # the package the module is in
    text = path.read_text(encoding="utf-8")
    targets: list[list[str]] = []
    for match in _IMPORT.finditer(text):
        for name in _names(match.group(1)):
            words = name.split(".")
            if words[:2] == _TOP_NAME:
                targets.append(words[2:])
    for match in _FROM.finditer(text):
        dots, module, names = match.group(1), match.group(2), _names(match.group(3))
        words = module.split(".") if module else []
        if dots:
            if len(dots) - 1 > len(package):
                continue
            words = package[:len(package) - (len(dots) - 1)] + words
        elif words[:2] == _TOP_NAME:
            words = words[2:]
        else:
            continue
        targets.append(words)
        targets.extend(words + [name] for name in names)  # ``from . import module``
    return {found for target in targets if (found := _module_file(target)) is not None}


def kernel_sources() -> list[Path]:
    """Every source file the kernels' machine code can depend on, sorted.

    Every ``*.py`` of this package and its subpackages (``experiments/compiled``)
    and, transitively, every module of :mod:`btlab.experiments` one of them imports
    (``from btlab.experiments.core import ...``, inside functions too), found by scanning
    the imports: a new import is covered without a list to keep.
    """
    todo = sorted(_PACKAGE_DIR.rglob("*.py"))
    seen: set[Path] = set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        todo.extend(sorted(_imported_files(path) - seen))
    return sorted(seen)


def cache_key(sources: list[Path] | None = None, version: str | None = None) -> str:
    """``kernels-`` and 20 hex digits of BLAKE2b over ``version`` and ``sources``.

    Args:
        sources: the files (default :func:`kernel_sources`); each contributes its
            path relative to the ``experiments`` folder's parent and its bytes.
        version: btlab's version (default :func:`btlab_version`).

    Returns:
        The name of the cache folder: the same for the same bytes, wherever the
        code is (a clone, an install, the copy a Ray worker unpacks).

    Raises:
        OSError: a source cannot be read.
    """
    digest = hashlib.blake2b(digest_size=10)
    for part in ("btlab", btlab_version() if version is None else version):
        digest.update(part.encode() + b"\0")
    for path in kernel_sources() if sources is None else sources:
        data = path.read_bytes()
        root = _TOP_DIR.parent
        name = path.relative_to(root).as_posix() if path.is_relative_to(root) else path.name
        digest.update(f"{name}\0{len(data)}\0".encode() + data)
    return KEY_PREFIX + digest.hexdigest()


def _roots() -> list[Path]:
    """The candidate roots of the cache, in order of preference."""
    roots = []
    explicit = os.environ.get("BTLAB_CACHE_DIR") or os.environ.get("NUMBA_CACHE_DIR")
    if explicit:
        roots.append(Path(explicit))
    in_tree = _PACKAGE_DIR / "__pycache__"
    if _writable(in_tree):
        roots.append(in_tree)
    roots.append(default_user_cache_dir())
    return roots


def configure() -> Path:
    """Point numba at the kernels' keyed cache folder; return the folder in use.

    Returns:
        ``<root>/<cache_key()>`` (see the module's docstring for the root),
        created if need be; numba writes the kernels' cache files (``*.nbi``
        index and ``*.nbc`` code) below it, in a sub-folder named after the
        source folder.
    """
    import numba  # heavy: numba takes a second to import

    # numba's config module sets its attributes at run time: typed Any for mypy.
    numba_config: Any = numba.config
    key = cache_key()
    for root in _roots():
        folder = root / key
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue
        if os.access(folder, os.W_OK | os.X_OK):
            break
    else:
        folder = Path(tempfile.mkdtemp(prefix="btlab-numba-"))
    numba_config.CACHE_DIR = str(folder)
    return folder


# ---------------------------------------------------------------- a broken cache is a miss

#: The first bytes of every cache file btlab writes (then the digest, then numba's bytes).
MAGIC = b"btlab-kernel-cache-1\n"
_DIGEST_SIZE = 32
#: Test hook (the variable of :mod:`btlab.execution.execute`'s trial faults):
#: ``BTLAB_TEST_FAULT=enospc:kernel-cache`` makes every cache file's write fail half
#: written, as a full disk does.
TEST_FAULT = "enospc:kernel-cache"


class KernelCacheWarning(RuntimeWarning):
    """The kernels' disk cache could not be read or written; the kernels are compiled
    in memory instead (results are unaffected)."""


class DamagedCacheFile(ValueError):
    """A cache file whose magic string or digest does not match its bytes."""


#: What this process has told already: ``"load"``, ``"save"`` (one warning each).
_TOLD: set[str] = set()


def _tell(what: str, exc: BaseException) -> None:
    """Warn once per process that the cache could not be read (``what="load"``) or
    written (``"save"``), with the error and a fix that works."""
    if what in _TOLD:
        return
    _TOLD.add(what)
    folder = shown(_folder_in_use())  # BTLAB_CACHE_DIR: user text, echoed escaped
    reason = shown(f"{type(exc).__name__}: {exc}")
    if what == "load":
        text = (f"btlab: the compiled kernels' cache in {folder} is damaged ({reason}); the "
                "kernels are compiled afresh and the damaged files rewritten (results are "
                "unaffected)\n  fix: nothing is needed; to start clean, delete that folder")
    else:
        text = (f"btlab: cannot save the compiled kernels to their cache in {folder} "
                f"({reason}); they stay compiled in memory for this process (results are "
                "unaffected; the next process compiles them again)\n  fix: free space "
                "there, or set BTLAB_CACHE_DIR to a writable folder")
    try:
        warnings.warn(text, KernelCacheWarning, stacklevel=2)
    except Exception:  # noqa: BLE001 - ``-W error``: still a warning, never the trial's error
        print(f"KernelCacheWarning: {text}", file=sys.stderr, flush=True)


def _folder_in_use() -> str:
    try:
        import numba  # heavy: already imported whenever a cache file is read or written
    except ImportError:  # pragma: no cover - only numba's caches call here
        return "?"
    return str(getattr(numba.config, "CACHE_DIR", "") or "?")


def seal(body: bytes) -> bytes:
    """``body`` as a cache file holds it: :data:`MAGIC`, its BLAKE2b digest, the body."""
    return MAGIC + hashlib.blake2b(body, digest_size=_DIGEST_SIZE).digest() + body


def unseal(raw: bytes, path: str | os.PathLike[str]) -> bytes:
    """The body of a sealed cache file's bytes ``raw``.

    Raises:
        DamagedCacheFile: not a btlab cache file, truncated, or its bytes changed.
    """
    head = len(MAGIC) + _DIGEST_SIZE
    name = os.path.basename(os.fspath(path))
    if len(raw) < head or not raw.startswith(MAGIC):
        raise DamagedCacheFile(f"{name}: {len(raw):,} bytes, not a btlab kernel-cache file")
    body = raw[head:]
    if hashlib.blake2b(body, digest_size=_DIGEST_SIZE).digest() != raw[len(MAGIC):head]:
        raise DamagedCacheFile(f"{name}: its digest does not match its {len(raw):,} bytes")
    return body


def _fault() -> None:
    if TEST_FAULT in (
            item.strip() for item in os.environ.get("BTLAB_TEST_FAULT", "").split(",")):
        raise OSError(errno.ENOSPC, f"{os.strerror(errno.ENOSPC)} (fault injected by "
                                    "BTLAB_TEST_FAULT)")


_CHECKED: list[type] = []


def _checked_cache_class() -> type:
    """numba's ``FunctionCache`` with sealed files, whose failures are misses (made once)."""
    if _CHECKED:
        return _CHECKED[0]
    from numba.core import caching  # heavy: numba takes a second to import

    class CheckedFile(caching.IndexDataCacheFile):
        """numba's index and data files, each sealed (:func:`seal`); a damaged index is
        replaced when the next kernel is saved."""

        def save(self, key, data):
            try:
                overloads = self._load_index()
            except Exception:  # noqa: BLE001 - a damaged index is replaced, whatever is wrong
                overloads = {}
            data_name = overloads.get(key)
            if data_name is None:
                existing = set(overloads.values())
                data_name = next(name for name in map(self._data_name, itertools.count(1))
                                 if name not in existing)
                overloads[key] = data_name
                self._save_index(overloads)
            self._save_data(data_name, data)

        def _load_index(self):
            try:
                with open(self._index_path, "rb") as fh:
                    raw = fh.read()
            except FileNotFoundError:
                return {}
            stream = io.BytesIO(unseal(raw, self._index_path))
            if pickle.load(stream) != self._version:  # another numba: its pickles may differ
                return {}
            stamp, overloads = pickle.loads(stream.read())
            return overloads if stamp == self._source_stamp else {}

        def _save_index(self, overloads):
            body = pickle.dumps(self._version, protocol=-1) + self._dump(
                (self._source_stamp, overloads))
            self._write(self._index_path, body)

        def _load_data(self, name):
            with open(self._data_path(name), "rb") as fh:
                raw = fh.read()
            return pickle.loads(unseal(raw, self._data_path(name)))

        def _save_data(self, name, data):
            self._write(self._data_path(name), self._dump(data))

        def _write(self, path, body):
            sealed = seal(body)
            with self._open_for_write(path) as fh:
                fh.write(sealed[:len(sealed) // 2])
                _fault()
                fh.write(sealed[len(sealed) // 2:])

    class CheckedCache(caching.FunctionCache):
        """A kernel's disk cache whose every failure is a miss, told once
        (:class:`KernelCacheWarning`), never an exception out of the kernel's call."""

        def __init__(self, py_func):
            super().__init__(py_func)
            self._cache_file = CheckedFile(cache_path=self._cache_path,
                                           filename_base=self._impl.filename_base,
                                           source_stamp=self._impl.locator.get_source_stamp())

        def load_overload(self, sig, target_context):
            try:
                return super().load_overload(sig, target_context)
            except Exception as exc:  # noqa: BLE001 - any damage: compile afresh instead
                _tell("load", exc)
                return None

        def save_overload(self, sig, data):
            try:
                super().save_overload(sig, data)
            except Exception as exc:  # noqa: BLE001 - the kernel stays compiled in memory
                _tell("save", exc)

    _CHECKED.append(CheckedCache)
    return CheckedCache


def guard_caches(modules: Iterable[ModuleType]) -> int:
    """Give every disk-cached numba dispatcher found in ``modules`` btlab's checked cache.

    Called by the package's ``__init__`` once its kernel modules are imported,
    before any kernel is called (a dispatcher reads its cache at its first call
    with a new signature). A dispatcher already checked is left as it is.

    Returns:
        How many dispatchers were given a checked cache.
    """
    # heavy: numba takes a second to import (already imported by the kernel modules)
    from numba.core.caching import FunctionCache
    from numba.core.registry import CPUDispatcher

    checked = _checked_cache_class()
    done = 0
    for module in modules:
        for value in list(vars(module).values()):
            dispatcher: Any = value  # numba's dispatchers are untyped: ``_cache`` is private
            if isinstance(value, CPUDispatcher) and type(dispatcher._cache) is FunctionCache:
                dispatcher._cache = checked(dispatcher.py_func)
                done += 1
    return done


def unchecked_kernels(modules: Iterable[ModuleType]) -> list[str]:
    """The disk-cached dispatchers of ``modules`` without a checked cache (``module.name``)."""
    # heavy: numba takes a second to import (already imported by the kernel modules)
    from numba.core.registry import CPUDispatcher

    checked = _checked_cache_class()
    found = []
    for module in modules:
        for name, value in vars(module).items():
            cache: Any = getattr(value, "_cache", None)
            if (isinstance(value, CPUDispatcher) and cache.cache_path is not None
                    and not isinstance(cache, checked)):
                found.append(f"{module.__name__}.{name}")
    return sorted(found)
