"""User plug-ins named in a config as ``"module:attribute"``: import, hash, ship.

A config names a plug-in the way Hydra's ``_target_`` names a class: by a
string ``"package.module:name"``. Naming one runs that module's code, as
importing it does; nothing else in a config ever runs code.

* The module is found the way ``python -m`` finds modules: the working
  directory first, then ``PYTHONPATH`` and the installed packages.
* Its *source hash* (blake2b of the module's file, or of every ``.py`` file
  of its top-level package) goes into the trial id and the provenance, so an
  edited plug-in is never taken for trials already finished.
* Its first import, while a config is checked, runs in a child process first
  (:mod:`btlab.problems.first_import`): a module that ends or takes over the
  process at import (``sys.exit``, ``os._exit``, a signal, exit handlers) is
  refused at the key that names it, and btlab's own import turns ``sys.exit``
  and ``os._exit`` into errors too (:func:`import_plugin`).
* :func:`ship_paths` gives what Ray's ``runtime_env`` ``py_modules`` must
  carry to the workers (the module's file, or its top-level package folder).
* A plug-in that imports btlab by a name of btlab 0.1 (``runner.spec``,
  ``experiments.core``) is refused with the new name, wherever btlab runs: in a
  checkout's root the folders' stubs raise it; elsewhere, where ``runner`` and
  ``experiments`` do not exist, stubs stand in for them while the plug-in
  imports (:class:`_OldTops`).
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import importlib
import importlib.abc
import importlib.util
import os
import re
import sys
import traceback
from pathlib import Path
from types import ModuleType
from typing import Any, Iterator, NoReturn

from btlab.errors import OLD_NAMES, new_name
from btlab.errors import message as old_name_message
from btlab.problems.first_import import first_import

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


def _is_old(name: str) -> bool:
    """True for a module name of btlab 0.1 (``runner.spec``) or a name below one."""
    parts = name.split(".")
    return any(".".join(parts[:i]) in OLD_NAMES for i in range(len(parts), 0, -1))


class _OldTops(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Last on ``sys.meta_path`` while a plug-in imports: ``runner`` and ``experiments``,
    when nothing else finds them, stand in as stubs, and a btlab 0.1 module below them
    raises an :class:`ImportError` naming the new module, as the stubs of a checkout do."""

    TOPS = ("runner", "experiments")

    def __init__(self) -> None:
        self.made: dict[str, ModuleType] = {}

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if path is None and fullname in self.TOPS:
            return importlib.util.spec_from_loader(fullname, self, is_package=True)
        if fullname.split(".")[0] in self.made and _is_old(fullname):
            raise ImportError(old_name_message(fullname), name=fullname)
        return None   # any other name below a stub: not found

    def create_module(self, spec: Any) -> None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        top = module.__name__
        module.__path__ = []

        def __getattr__(name: str) -> Any:   # ``import runner; runner.spec``
            raise AttributeError(old_name_message(f"{top}.{name}"))

        module.__getattr__ = __getattr__  # type: ignore[method-assign]
        self.made[top] = module

    def __enter__(self) -> _OldTops:
        sys.meta_path.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        # the stubs go: a package of the user's named runner or experiments may come later
        for top, module in self.made.items():
            if sys.modules.get(top) is module:
                del sys.modules[top]
        sys.meta_path.remove(self)


def _old_name(exc: Exception) -> str | None:
    """The btlab 0.1 module name an import failed on (``runner.spec``), or None: an
    :class:`ImportError` for it, or the :class:`AttributeError` of a stub (``runner.spec``
    after ``import runner``)."""
    if isinstance(exc, ImportError):
        return exc.name if exc.name and _is_old(exc.name) else None
    first = str(exc).split(" ")[0]
    if isinstance(exc, AttributeError) and " is btlab's old module name" in str(exc) \
            and _is_old(first):
        return first
    return None


def _module(ref: str) -> ModuleType:
    name = ref.partition(":")[0]
    _search_path()
    # while a config is checked, the first import runs in a child process first: one
    # that ends or takes over the process is refused before btlab imports it itself
    first_import(name, ref, lambda: import_plugin(ref, in_child=True), PluginError)
    return import_plugin(ref)


class _ExitCalled(BaseException):
    """``os._exit`` called while a plug-in module imports (:func:`_exit_raises`)."""

    def __init__(self, code: Any):
        super().__init__(f"it called os._exit({code!r})")


@contextlib.contextmanager
def _exit_raises() -> Iterator[None]:
    """Within the block, ``os._exit`` raises :class:`_ExitCalled` instead of ending the
    process (a plug-in's import cannot end it that way)."""
    real = os._exit
    active = [True]

    def raising(code: int) -> NoReturn:
        if not active[0]:  # kept past the import (``atexit.register(os._exit, 0)``)
            real(code)
        raise _ExitCalled(code)

    os._exit = raising  # type: ignore[assignment]
    try:
        yield
    finally:
        active[0] = False
        os._exit = real


def import_plugin(ref: str, in_child: bool = False) -> ModuleType:
    """Import the module of plug-in ``ref`` (``"module:attribute"``), every failure of
    its import a :class:`PluginError`: an exception it raises, ``sys.exit`` and
    ``os._exit`` called at its top level, a module it imports that is not installed,
    a btlab 0.1 name. A ``KeyboardInterrupt`` propagates (a Ctrl-C), except
    ``in_child`` (the child of :mod:`btlab.problems.first_import`, where a Ctrl-C ends
    the process instead: one raised is the plug-in's own)."""
    name = ref.partition(":")[0]
    try:
        with _OldTops(), _exit_raises():
            return importlib.import_module(name)
    except (ImportError, AttributeError) as exc:
        old = _old_name(exc)
        if old is None:
            if not isinstance(exc, ModuleNotFoundError):
                raise PluginError(f"module {name!r} to import cleanly",
                                  f"{type(exc).__name__} while importing it: {exc}",
                                  f"fix the error in {_where(exc, name)}") from None
            return _not_found(name, exc)
        if name == old or name.startswith(old + "."):   # the config names the old module
            raise PluginError("a plug-in module of your own, or one of btlab's by its new name",
                              f"{name}, btlab 0.1's name of {new_name(name)}",
                              f"write {new_name(name)}:{ref.partition(':')[2]}") from None
        new = new_name(old)
        raise PluginError(f"module {name!r} to import btlab by its names since btlab 0.2",
                          f"it imports {old}, btlab 0.1's name of {new}",
                          f"import {new} in {name} (the map of btlab's modules: "
                          "docs/architecture.md)") from None
    except KeyboardInterrupt:
        if not in_child:
            raise  # a Ctrl-C (the plug-in's own was refused in the child)
        raise PluginError(f"module {name!r} to import cleanly", "it raised KeyboardInterrupt "
                          "while importing", f"fix the error in {name}") from None
    except SystemExit as exc:  # a plug-in's import may not end the run
        raise PluginError(f"module {name!r} to import without ending the process",
                          f"it called sys.exit({exc.code!r}) while importing",
                          f"remove the sys.exit call from the top level of {name}") from None
    except _ExitCalled as exc:
        raise PluginError(f"module {name!r} to import without ending the process",
                          f"{exc} while importing",
                          f"remove the os._exit call from the top level of {name}") from None
    except BaseException as exc:  # noqa: BLE001 - the plug-in's own code failed importing
        raise PluginError(f"module {name!r} to import cleanly",
                          f"{type(exc).__name__} while importing it: {exc}",
                          f"fix the error in {_where(exc, name)}") from None


def _where(exc: BaseException, name: str) -> str:
    """Where a plug-in's import failed: ``file:line`` of a syntax error or of the last frame
    of the plug-in's own code, else the module's name."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{exc.filename}:{exc.lineno}"
    frames = traceback.extract_tb(exc.__traceback__)
    top = name.split(".")[0]
    own = [f for f in frames if f"/{top}/" in f.filename or f.filename.endswith(f"/{top}.py")]
    return f"{own[-1].filename}:{own[-1].lineno}" if own else name


def _not_found(name: str, exc: ModuleNotFoundError) -> ModuleType:
    """Raise the error of a plug-in module that is not found, or of a module it imports."""
    missing = exc.name or name
    if not (name == missing or name.startswith(missing + ".")):  # found; its import failed
        raise PluginError(f"module {name!r} to import cleanly",
                          f"it imports {missing!r}, which is not installed",
                          f"install the package that provides {missing} where btlab runs "
                          f"(e.g. pip install {missing.split('.')[0]}), or remove the import "
                          f"from {name}") from None
    raise PluginError(
        f"an importable module {name!r} (found as `python -m` finds modules: the working "
        "directory, then PYTHONPATH)", f"no module named {missing!r}",
        f"run btlab from the folder that holds {name.split('.')[0]}.py (or its package), "
        "or add that folder to PYTHONPATH") from None


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
    name = module.__name__
    obj: Any = module
    for part in ref.partition(":")[2].split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            names = sorted(n for n in dir(module) if not n.startswith("_"))
            close = difflib.get_close_matches(part, names, n=1, cutoff=0.6)
            raise PluginError(f"{part!r} defined in module {module.__name__}",
                              f"no such name (it defines: {', '.join(names[:12]) or 'nothing'})",
                              f"write {module.__name__}:{close[0]}" if close else
                              f"define {part} in {getattr(module, '__file__', None) or name}, "
                              "or write the name it has after the colon") from None
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
