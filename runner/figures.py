"""Saving btlab figures: one resolution, PNG or SVG, no pyplot.

The layer under :mod:`runner.plots` and :mod:`runner.board_plots` (both import
it; it imports neither). :func:`save` writes a
:class:`matplotlib.figure.Figure` to ``.png`` (at :data:`DPI`, through the Agg
renderer) or ``.svg`` files, without :mod:`matplotlib.pyplot` (no GUI, no
global state). :data:`DPI` and :func:`save` are also importable from
:mod:`runner.plots`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from matplotlib.figure import Figure

#: Resolution of saved PNGs (dots per inch).
DPI = 120


def save(fig: Figure, path: str | Path | Sequence[str | Path]) -> list[Path]:
    """Save ``fig`` to each path (``.png`` at :data:`DPI`, or ``.svg``); returns the paths.

    Raises:
        ValueError: a path ends in something other than ``.png`` or ``.svg``.
    """
    paths = [Path(path)] if isinstance(path, (str, Path)) else [Path(p) for p in path]
    for p in paths:
        if p.suffix.lower() not in (".png", ".svg"):
            raise ValueError(f"{p}: plots are saved as .png or .svg, not {p.suffix or '(none)'}")
        p.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(p, dpi=DPI, format=p.suffix[1:].lower(), bbox_inches="tight",
                    metadata={"Software": None} if p.suffix.lower() == ".png" else None)
    return paths



def finish(fig: Figure, path: str | Path | Sequence[str | Path] | None) -> Figure:
    """Save ``fig`` to ``path`` unless it is None (:func:`save`); return ``fig``."""
    if path is not None:
        save(fig, path)
    return fig
