"""Where numba keeps the compiled kernels between processes.

Every kernel is compiled with ``cache=True``: the machine code is written to
disk the first time a process compiles it and loaded (in milliseconds rather
than seconds) by every later process, Ray workers included. Numba looks for
the cache directory in this order, and this module only fills the gap:

1. ``NUMBA_CACHE_DIR`` when set (numba's own variable; also honoured here as
   ``BTLAB_CACHE_DIR``, which takes precedence).
2. ``__pycache__`` next to the kernel sources, when that folder is writable
   (a development checkout).
3. Otherwise (a read-only install): ``$XDG_CACHE_HOME/btlab/numba``, by
   default ``~/.cache/btlab/numba``.

:func:`configure` must run before the kernels are decorated; the package's
``__init__`` calls it first.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

_PACKAGE_DIR = Path(__file__).resolve().parent


def _writable(folder: Path) -> bool:
    probe = folder if folder.exists() else folder.parent
    return os.access(probe, os.W_OK | os.X_OK)


def default_user_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/btlab/numba``, by default ``~/.cache/btlab/numba``."""
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(root) / "btlab" / "numba"


def configure() -> Path:
    """Point numba at a writable cache directory; return the directory in use.

    Returns:
        The folder numba writes the kernels' cache files (``*.nbi`` index and
        ``*.nbc`` code) into, below which numba mirrors the source path when
        it is not the in-tree ``__pycache__``.
    """
    import numba

    # numba's config module sets its attributes at run time: typed Any for mypy.
    numba_config: Any = numba.config
    explicit = os.environ.get("BTLAB_CACHE_DIR")
    if explicit:
        numba_config.CACHE_DIR = explicit
        return Path(explicit)
    if os.environ.get("NUMBA_CACHE_DIR"):
        return Path(numba_config.CACHE_DIR)
    in_tree = _PACKAGE_DIR / "__pycache__"
    if _writable(in_tree):
        return in_tree
    folder = default_user_cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    numba_config.CACHE_DIR = str(folder)
    return folder
