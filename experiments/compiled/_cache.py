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
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import tomllib
from importlib import metadata
from pathlib import Path
from typing import Any

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
