"""Which code ran: btlab's version, the git commit and whether the tree had uncommitted changes.

Every row carries ``git_commit`` and ``git_dirty`` (see :mod:`btlab.store.folder`),
and ``btlab --version`` prints them. Where they come from:

* **Run from a git clone** (``PYTHONPATH``, ``pip install -e .``): the clone
  next to the ``runner`` package is asked at run time (``git rev-parse HEAD``,
  ``git status --porcelain --untracked-files=no``: modified tracked files make
  the tree dirty, untracked ones do not, as with setuptools-scm).
* **Installed** (``pip install .`` from a clone, or a wheel built from one):
  ``setup.py`` writes ``btlab/_build_info.py`` into the build (never into the
  source tree; git-ignored) with the commit and dirty flag of the clone at build
  time, and an sdist carries the file, so a wheel built from the sdist has it too.
* Otherwise (a copy without ``.git``, no ``git`` command): unknown (null).

This module uses the standard library only: ``setup.py`` loads it by path at
build time, before btlab's dependencies are installed.
"""

from __future__ import annotations

import functools
import importlib
import re
import subprocess
import tomllib
from importlib import metadata
from pathlib import Path

#: The module ``setup.py`` writes into a build: ``COMMIT`` and ``DIRTY``.
BUILD_INFO_MODULE = "_build_info"
#: The folder that holds ``runner/`` (this file is ``runner/store/provenance.py``): the
#: clone's root when btlab runs from a checkout (editable install), else site-packages.
SOURCE_ROOT = Path(__file__).resolve().parents[2]

_HEX40 = re.compile(r"^[0-9a-f]{40}$")


def git_state(root: str | Path) -> tuple[str | None, bool | None]:
    """(HEAD commit, tree has uncommitted changes to tracked files) of the git clone ``root``.

    (None, None) when ``root`` is not a clone or git cannot answer.
    """
    root = Path(root)
    if not (root / ".git").exists():  # a folder in a clone, a file in a worktree
        return None, None

    def git(*args: str) -> subprocess.CompletedProcess | None:
        try:
            return subprocess.run(["git", "-C", str(root), *args], capture_output=True,
                                  text=True, timeout=10)
        except (OSError, subprocess.SubprocessError):
            return None

    head = git("rev-parse", "--verify", "HEAD")
    commit = head.stdout.strip() if head is not None and head.returncode == 0 else ""
    if not _HEX40.match(commit):
        return None, None
    status = git("status", "--porcelain", "--untracked-files=no")
    dirty = bool(status.stdout.strip()) if status is not None and status.returncode == 0 else None
    return commit, dirty


def build_info_source(commit: str, dirty: bool | None) -> str:
    """The text of ``btlab/_build_info.py`` for ``commit`` and ``dirty``."""
    return ('"""Written by btlab\'s setup.py at build time (not in git): the commit built."""\n\n'
            f"COMMIT = {commit!r}\nDIRTY = {dirty!r}\n")


def write_build_info(package_dir: str | Path, root: str | Path) -> Path | None:
    """Write ``_build_info.py`` into ``package_dir`` with the git state of the clone ``root``.

    Returns:
        The file written, or None when ``root`` is not a git clone (nothing is
        written: an sdist's own ``_build_info.py``, if any, stays).
    """
    commit, dirty = git_state(root)
    if commit is None:
        return None
    out = Path(package_dir) / f"{BUILD_INFO_MODULE}.py"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.unlink(missing_ok=True)  # a new file, never one hard-linked into a source tree
    out.write_text(build_info_source(commit, dirty), encoding="utf-8")
    return out


def _build_info() -> tuple[str | None, bool | None]:
    try:
        module = importlib.import_module(f"{__package__.partition('.')[0]}.{BUILD_INFO_MODULE}")
    except ImportError:
        return None, None
    commit = getattr(module, "COMMIT", None)
    dirty = getattr(module, "DIRTY", None)
    if not isinstance(commit, str) or not _HEX40.match(commit):
        return None, None
    return commit, dirty if isinstance(dirty, bool) else None


@functools.lru_cache(maxsize=1)
def code_state() -> tuple[str | None, bool | None]:
    """(commit, dirty) of the code running now: the live clone, else the build's record.

    Asked once per process.
    """
    commit, dirty = git_state(SOURCE_ROOT)
    if commit is not None:
        return commit, dirty
    return _build_info()


def version() -> str:
    """btlab's version: the installed distribution's, else ``pyproject.toml``'s next to the code."""
    pyproject = SOURCE_ROOT / "pyproject.toml"
    if pyproject.is_file():  # run from a source tree: its own version, not an installed one's
        try:
            project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
        except (OSError, tomllib.TOMLDecodeError):
            project = {}
        if project.get("name") == "btlab" and isinstance(project.get("version"), str):
            return project["version"]
    try:
        return metadata.version("btlab")
    except metadata.PackageNotFoundError:
        return "unknown"


def version_line() -> str:
    """What ``btlab --version`` prints, e.g. ``btlab 0.2.0 (git 95e5..., uncommitted changes)``."""
    commit, dirty = code_state()
    if commit is None:
        return f"btlab {version()} (git commit unknown)"
    state = {True: ", uncommitted changes", False: "", None: ", tree state unknown"}[dirty]
    return f"btlab {version()} (git {commit}{state})"
