"""User plug-ins named in a config as ``"module:attribute"``: import, hash, ship.

A config names a plug-in the way Hydra's ``_target_`` names a class: by a
string ``"package.module:name"``. Naming one runs that module's code, as
importing it does; nothing else in a config ever runs code.

* The module is found the way ``python -m`` finds modules: the working
  directory first, then ``PYTHONPATH`` and the installed packages.
* Its *source hash* (blake2b of the module's file, or of every ``.py`` file
  of its top-level package) goes into the trial id and the provenance, so an
  edited plug-in is never taken for trials already finished.
* :func:`ship_paths` gives what Ray's ``runtime_env`` ``py_modules`` must
  carry to the workers (the module's file, or its top-level package folder).
"""

from __future__ import annotations

import hashlib
import importlib
import os
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

#: ``module.path:attribute`` (dotted names on both sides).
REF_PATTERN = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


class PluginError(ValueError):
    """A plug-in that cannot be used: not importable, no such attribute, wrong kind.

    Attributes:
        expected, found, fix: as in :class:`btlab.errors.ConfigError`.
    """

    def __init__(self, expected: str, found: str, fix: str):
        super().__init__(f"expected {expected}, found {found}; fix: {fix}")
        self.expected, self.found, self.fix = expected, found, fix


def is_ref(value: Any) -> bool:
    """True for a string that names a plug-in (``"module:attribute"``)."""
    return isinstance(value, str) and ":" in value


def _search_path() -> None:
    """Put the working directory first on ``sys.path``, as ``python -m`` does."""
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)


def _module(ref: str) -> ModuleType:
    name = ref.partition(":")[0]
    _search_path()
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        missing = exc.name or name
        if not (name == missing or name.startswith(missing + ".")):  # found; its import failed
            raise PluginError(f"module {name!r} to import cleanly",
                              f"it imports {missing!r}, which is not installed",
                              f"install {missing} (pip install ...) where btlab runs, or "
                              f"remove the import from {name}") from None
        raise PluginError(
            f"an importable module {name!r} (found as `python -m` finds modules: the working "
            "directory, then PYTHONPATH)", f"no module named {missing!r}",
            f"run btlab from the folder that holds {name.split('.')[0]}.py (or its package), "
            "or add that folder to PYTHONPATH") from None
    except Exception as exc:  # the plug-in's own code failed while importing
        raise PluginError(f"module {name!r} to import cleanly",
                          f"{type(exc).__name__} while importing it: {exc}",
                          f"fix the error in {name}") from None


def load(ref: str) -> Any:
    """The object a ``"module:attribute"`` string names.

    Raises:
        PluginError: a malformed reference, a module that cannot be imported,
            or no such attribute.
    """
    if not isinstance(ref, str) or not REF_PATTERN.match(ref):
        raise PluginError("a plug-in written module:attribute, e.g. my_rules:corner_first",
                          repr(ref), "write the module's dotted name, a colon, then the name")
    module = _module(ref)
    obj: Any = module
    for part in ref.partition(":")[2].split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            names = sorted(n for n in dir(module) if not n.startswith("_"))
            raise PluginError(f"{part!r} defined in module {module.__name__}",
                              f"no such name (it defines: {', '.join(names[:12]) or 'nothing'})",
                              "check the spelling after the colon") from None
    return obj


def _root(module: ModuleType) -> Path:
    """The module's file, or its top-level package folder."""
    top = sys.modules[module.__name__.split(".")[0]]
    paths = getattr(top, "__path__", None)
    if paths:
        return Path(list(paths)[0])
    if not getattr(module, "__file__", None):
        raise PluginError("a plug-in defined in a .py file", f"module {module.__name__} "
                          "with no source file", "put the plug-in in a .py file")
    return Path(module.__file__)  # type: ignore[arg-type]


def source_hash(ref: str) -> str:
    """The blake2b digest (16 hex digits) of the plug-in's source: its module's file, or
    every ``.py`` file of its top-level package (paths and contents, in sorted order).

    Raises:
        PluginError: as :func:`load`.
    """
    root = _root(_module(ref))
    digest = hashlib.blake2b(digest_size=8)
    files = sorted(root.rglob("*.py")) if root.is_dir() else [root]
    for f in files:
        digest.update(str(f.relative_to(root.parent)).encode())
        digest.update(b"\0")
        digest.update(f.read_bytes())
    return digest.hexdigest()


def ship_paths(refs: list[str]) -> list[str]:
    """Local paths Ray's ``runtime_env["py_modules"]`` needs to run ``refs`` on workers.

    Plug-ins that live in installed packages (site-packages) are left out: the
    workers have them as the driver does.
    """
    out: list[str] = []
    for ref in refs:
        root = _root(_module(ref))
        if "site-packages" in root.parts or "dist-packages" in root.parts:
            continue
        if str(root) not in out:
            out.append(str(root))
    return out
