"""Saving btlab figures: one resolution, PNG or SVG, no pyplot.

The layer under :mod:`btlab.views.plots` and :mod:`btlab.views.plots.boards` (both import
it; it imports neither). :func:`save` writes a
:class:`matplotlib.figure.Figure` to ``.png`` (at :data:`DPI`, through the Agg
renderer) or ``.svg`` files, without :mod:`matplotlib.pyplot` (no GUI, no
global state). :data:`DPI` and :func:`save` are also importable from
:mod:`btlab.views.plots`.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Sequence

from matplotlib.figure import Figure

from btlab.views.outfile import atomic_write_bytes, check_target

#: Resolution of saved PNGs (dots per inch).
DPI = 120


def save(fig: Figure, path: str | Path | Sequence[str | Path]) -> list[Path]:
    """Save ``fig`` to each path (``.png`` at :data:`DPI`, or ``.svg``); returns the paths.

    Each file is written whole or not at all, and only as a regular file
    (:func:`btlab.views.outfile.atomic_write_bytes`): a directory, FIFO, device,
    socket or symbolic link at a path is refused.

    Raises:
        ValueError: a path ends in something other than ``.png`` or ``.svg``.
        btlab.errors.OutputPathError: a path is not a regular file or cannot be
            created (nothing written to it).
        btlab.errors.WriteError: the disk is full or an I/O error (nothing left behind).
    """
    paths = [Path(path)] if isinstance(path, (str, Path)) else [Path(p) for p in path]
    for p in paths:
        if p.suffix.lower() not in (".png", ".svg"):
            raise ValueError(f"{p}: plots are saved as .png or .svg, not {p.suffix or '(none)'}")
    for p in paths:
        check_target(p, "the figure")
    for p in paths:
        buf = io.BytesIO()
        fmt = p.suffix[1:].lower()
        fig.savefig(buf, dpi=DPI, format=fmt, bbox_inches="tight",
                    metadata={"Software": None} if fmt == "png" else None)
        atomic_write_bytes(p, buf.getvalue(), "the figure")
    return paths


def plot_text(value: object) -> str:
    """A stored value as plot text, drawn as it is: a ``$`` starts no mathtext."""
    return str(value).replace("$", r"\$")


def finish(fig: Figure, path: str | Path | Sequence[str | Path] | None) -> Figure:
    """Save ``fig`` to ``path`` unless it is None (:func:`save`); return ``fig``."""
    if path is not None:
        save(fig, path)
    return fig
