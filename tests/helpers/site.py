"""btlab importable from a source tree other than the installed one (a copy a test edits).

The repository keeps ``runner/`` and ``experiments/`` at its root and installs them as
``btlab`` and ``btlab.experiments``; a folder of links laid out as the installed package
makes ``PYTHONPATH=<site>`` run the tree's own code, edits included, without installing it.
"""

from __future__ import annotations

import os
from pathlib import Path


def btlab_site(tree: Path, site: Path) -> Path:
    """Make ``site/btlab`` a package of links into ``tree``'s ``runner/`` and ``experiments/``.

    Each entry of ``tree/runner`` is linked into ``site/btlab`` and ``tree/experiments`` is
    linked as ``site/btlab/experiments``; returns ``site``, for ``PYTHONPATH``.
    """
    package = site / "btlab"
    package.mkdir(parents=True)
    for entry in (tree / "runner").iterdir():
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry.resolve())
    (package / "experiments").symlink_to((tree / "experiments").resolve())
    return site


def site_env(site: Path, **extra: str) -> dict[str, str]:
    """``os.environ`` with ``site`` first on ``PYTHONPATH`` (and no ``RAY_ADDRESS``)."""
    return {**os.environ, "PYTHONPATH": str(site), "RAY_ADDRESS": "", **extra}
