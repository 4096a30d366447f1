"""Board drawings: a knight's tour over its board, an N-Queens placement.

Like every figure of :mod:`btlab.views.plots` (which re-exports :func:`knight_tour`
and :func:`queens`, so ``plots.knight_tour(row)`` keeps working), each
function returns a :class:`matplotlib.figure.Figure` and, given ``path``,
saves it there (:func:`btlab.views.plots.figure_files.save`). Squares are drawn as on a
chessboard, row 0 at the top.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Circle

from btlab.views.plots.figure_files import finish, plot_text

_LIGHT, _DARK = "#f0d9b5", "#b58863"  # the usual light and dark squares of a chessboard

#: Tours on boards with more squares than this, or more rows or columns than
#: :data:`TOUR_FULL_MAX_SIDE`, are drawn downsampled (:func:`knight_tour`): the
#: visiting order on a coarse grid, and only the first and last
#: :data:`TOUR_ENDS` moves as a path.
TOUR_FULL_MAX_SQUARES = 64 * 64
TOUR_FULL_MAX_SIDE = 64
#: Coarse cells per side, at most, of a downsampled tour.
TOUR_COARSE_SIDE = 100
#: Moves drawn as a path at each end of a downsampled tour.
TOUR_ENDS = 200


def tour_downsampled(rows: int, cols: int) -> bool:
    """Whether :func:`knight_tour` draws a tour on this board downsampled."""
    return rows * cols > TOUR_FULL_MAX_SQUARES or max(rows, cols) > TOUR_FULL_MAX_SIDE


def _board(ax, rows: int, cols: int) -> None:
    light = np.indices((rows, cols)).sum(axis=0) % 2 == 0
    ax.imshow(np.where(light, 1, 0), cmap=ListedColormap([_DARK, _LIGHT]),
              vmin=0, vmax=1, origin="upper", interpolation="nearest", extent=(
                  -0.5, cols - 0.5, rows - 0.5, -0.5))
    ax.set_xticks(range(cols))
    ax.set_yticks(range(rows))
    ax.tick_params(length=0, labelsize=8 if max(rows, cols) <= 16 else 6)
    if max(rows, cols) > 16:
        step = math.ceil(max(rows, cols) / 12)
        ax.set_xticks(range(0, cols, step))
        ax.set_yticks(range(0, rows, step))
    ax.xaxis.set_ticks_position("top")
    ax.set_xlim(-0.5, cols - 0.5)
    ax.set_ylim(rows - 0.5, -0.5)
    for spine in ax.spines.values():
        spine.set_edgecolor("#5a3e28")


def knight_tour(row: Any = None, *, solution: Sequence[int] | None = None,
                rows: int | None = None, cols: int | None = None, title: str | None = None,
                path=None) -> Figure:
    """A knight's tour drawn over the board, squares numbered in visiting order.

    Args:
        row: a results row (a Series or namedtuple with ``solution``,
            ``rows``, ``cols``; its ``heuristic`` and start square go into
            the title), or None to give the tour directly:
        solution: the squares visited, as indices ``row * cols + col``.
        rows, cols: the board size.
        title: the title (default: board, start, heuristic, length).
        path: where to save, or None.

    Returns:
        The Figure: a chessboard, the path as a line through the square
        centres, every square numbered 1..len(tour) (on boards up to 16 x 16),
        the start circled green and the last square red. A board of more
        than :data:`TOUR_FULL_MAX_SQUARES` squares (or :data:`TOUR_FULL_MAX_SIDE`
        rows or columns) is drawn downsampled, in
        memory that does not grow with the figure: blocks of k x k squares
        coloured by the mean move number of their squares (at most
        :data:`TOUR_COARSE_SIDE` blocks a side), the first and last
        :data:`TOUR_ENDS` moves as a path, and the title says so.

    Raises:
        ValueError: no tour is given, or a square is off the board.
    """
    info: dict[str, Any] = {}
    if row is not None:
        get = row.get if hasattr(row, "get") else lambda k, d=None: getattr(row, k, d)
        solution = get("solution") if solution is None else solution
        rows = int(get("rows")) if rows is None else rows
        cols = int(get("cols")) if cols is None else cols
        info = {k: get(k) for k in ("heuristic", "strategy", "start_row", "start_col",
                                    "tie_break", "backtracks") if get(k) is not None}
    if solution is None or rows is None or cols is None or len(solution) == 0:
        raise ValueError("knight_tour: give a results row with a solution, or solution=, "
                         "rows= and cols=")
    squares = np.asarray(solution, dtype=np.int64)
    if squares.min() < 0 or squares.max() >= rows * cols:
        raise ValueError(f"knight_tour: a square index is off the {rows} x {cols} board")
    rr, cc = squares // cols, squares % cols
    if tour_downsampled(rows, cols):
        return _tour_downsampled(rr, cc, rows, cols, info, title, path)
    size = max(rows, cols)
    fig = Figure(figsize=(max(4.2, 0.62 * cols + 1.2), max(4.4, 0.62 * rows + 1.5)),
                 layout="constrained")
    ax = fig.add_subplot()
    _board(ax, rows, cols)
    ax.plot(cc, rr, "-", color="#1f3b73", lw=1.6 if size <= 16 else 0.9, alpha=0.85, zorder=2)
    radius = 0.33
    ax.add_patch(Circle((cc[0], rr[0]), radius, facecolor="#2e9e4a", edgecolor="white", zorder=3))
    ax.add_patch(Circle((cc[-1], rr[-1]), radius, facecolor="#c0392b", edgecolor="white",
                        zorder=3))
    if size <= 16:
        fs = 9 if size <= 8 else 7 if size <= 12 else 5.5
        for k, (r, c) in enumerate(zip(rr, cc), 1):
            endpoint = k in (1, len(squares))
            ax.text(c, r, str(k), ha="center", va="center", fontsize=fs, zorder=4,
                    color="white" if endpoint else "black",
                    fontweight="bold" if endpoint else "normal",
                    bbox=None if endpoint else dict(boxstyle="circle,pad=0.12", fc="white",
                                                    ec="none", alpha=0.8))
    if title is None:
        title = _tour_title(rr, cc, rows, cols, info)
    ax.set_title(title, fontsize=10)
    fig.legend(handles=[Line2D([], [], marker="o", ls="", color="#2e9e4a", label="start (1)"),
                       Line2D([], [], marker="o", ls="", color="#c0392b",
                              label=f"end ({len(squares)})")],
              loc="outside lower center", ncols=2, fontsize=8, frameon=False)
    return finish(fig, path)


def _tour_title(rr: np.ndarray, cc: np.ndarray, rows: int, cols: int,
                info: dict[str, Any]) -> str:
    parts = [f"Knight's tour, {rows} x {cols}"]
    if "start_row" in info:
        parts.append(f"from ({info['start_row']}, {info['start_col']})")
    else:
        parts.append(f"from ({rr[0]}, {cc[0]})")
    title = " ".join(parts)
    extra = [f"{k} = {plot_text(info[k])}" for k in ("heuristic", "strategy", "tie_break")
             if k in info]
    if "backtracks" in info:
        extra.append(f"{int(info['backtracks']):,} backtracks")
    if extra:
        title += "\n" + ", ".join(extra)
    return title


def _tour_downsampled(rr: np.ndarray, cc: np.ndarray, rows: int, cols: int,
                      info: dict[str, Any], title: str | None, path) -> Figure:
    """A big board's tour: mean move number per k x k block, and the path at both ends."""
    k = math.ceil(max(rows, cols) / TOUR_COARSE_SIDE)
    brows, bcols = math.ceil(rows / k), math.ceil(cols / k)
    block = (rr // k) * bcols + (cc // k)
    order = np.arange(1, len(rr) + 1, dtype=np.float64)
    total = np.bincount(block, weights=order, minlength=brows * bcols)
    count = np.bincount(block, minlength=brows * bcols)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(count > 0, total / np.maximum(count, 1), np.nan).reshape(brows, bcols)
    fig = Figure(figsize=(7.2, 7.2 * rows / cols + 1.0) if cols >= rows
                 else (7.2 * cols / rows + 1.6, 8.2), layout="constrained")
    ax = fig.add_subplot()
    image = ax.imshow(np.ma.masked_invalid(mean), cmap="viridis", origin="upper",
                      interpolation="nearest",
                      extent=(-0.5, bcols * k - 0.5, brows * k - 0.5, -0.5))
    ax.set_xlim(-0.5, cols - 0.5)
    ax.set_ylim(rows - 0.5, -0.5)
    ax.xaxis.set_ticks_position("top")
    ax.tick_params(length=0, labelsize=7)
    ends = min(TOUR_ENDS, len(rr))
    ax.plot(cc[:ends], rr[:ends], "-", color="white", lw=0.8, zorder=2)
    ax.plot(cc[-ends:], rr[-ends:], "-", color="#ff7f7f", lw=0.8, zorder=2)
    radius = max(rows, cols) / 120
    ax.add_patch(Circle((cc[0], rr[0]), radius, facecolor="#2e9e4a", edgecolor="white", zorder=3))
    ax.add_patch(Circle((cc[-1], rr[-1]), radius, facecolor="#c0392b", edgecolor="white",
                        zorder=3))
    bar = fig.colorbar(image, ax=ax, shrink=0.85, pad=0.02)
    bar.set_label("mean move number in the block", fontsize=8)
    bar.ax.tick_params(labelsize=7)
    if title is None:
        title = (_tour_title(rr, cc, rows, cols, info)
                 + f"\ndownsampled: {k} x {k} blocks coloured by mean move number;"
                 f"\npath of the first and last {ends:,} moves only")
    ax.set_title(title, fontsize=9)
    fig.legend(handles=[Line2D([], [], marker="o", ls="", color="#2e9e4a", label="start (1)"),
                        Line2D([], [], marker="o", ls="", color="#c0392b",
                               label=f"end ({len(rr):,})")],
               loc="outside lower center", ncols=2, fontsize=8, frameon=False)
    return finish(fig, path)


def queens(row: Any = None, *, solution: Sequence[int] | None = None, title: str | None = None,
           path=None) -> Figure:
    """An N-Queens placement on its board.

    Boards up to :data:`QUEENS_FULL_MAX` are drawn square by square with a
    queen (♛) on each placed square; larger ones in a figure of fixed size, as
    one dot per queen up to :data:`QUEENS_POINTS_MAX`, else as blocks of
    squares, dark where a block holds a queen (memory and time that do not grow
    with n squared: a 10,000,000-queen placement draws in seconds). The title
    says which.

    Args:
        row: a results row with ``solution`` (the queen's column in each row,
            row 0 first) and optionally ``n``, ``strategy``; or None to give:
        solution: the queen column by row.
        title: the title (default: n and strategy).
        path: where to save, or None.

    Returns:
        The Figure.

    Raises:
        ValueError: no placement is given, or a column is off the board.
    """
    info: dict[str, Any] = {}
    if row is not None:
        get = row.get if hasattr(row, "get") else lambda k, d=None: getattr(row, k, d)
        solution = get("solution") if solution is None else solution
        info = {k: get(k) for k in ("strategy", "mode") if get(k) is not None}
    if solution is None or len(solution) == 0:
        raise ValueError("queens: give a results row with a solution, or solution=")
    cols_of = np.asarray(solution, dtype=np.int64)
    n = len(cols_of)
    if cols_of.min() < 0 or cols_of.max() >= n:
        raise ValueError(f"queens: a column is off the {n} x {n} board")
    note = ""
    if n <= QUEENS_FULL_MAX:
        fig = Figure(figsize=(max(3.8, 0.5 * n + 1.0), max(4.0, 0.5 * n + 1.3)),
                     layout="constrained")
        ax = fig.add_subplot()
        _board(ax, n, n)
        fs = max(6, min(26, 200 / n))
        for r, c in enumerate(cols_of.tolist()):
            ax.text(c, r + 0.04, "\u265b", ha="center", va="center", fontsize=fs, color="#111",
                    family="DejaVu Sans")
    else:
        fig = Figure(figsize=(6.4, 6.9), layout="constrained")
        ax = fig.add_subplot()
        note = _queens_large(ax, cols_of)
    if title is None:
        title = f"{n:,}-Queens placement" + (f", strategy = {plot_text(info['strategy'])}"
                                             if "strategy" in info else "") + note
    ax.set_title(title, fontsize=10)
    return finish(fig, path)


#: N-Queens boards up to this n are drawn square by square, ...
QUEENS_FULL_MAX = 64
#: ... up to this n as one dot per queen, larger ones as blocks of squares.
QUEENS_POINTS_MAX = 4096
#: Blocks per side, at most, of a placement drawn in blocks.
QUEENS_BLOCKS = 512


def _queens_large(ax, cols_of: np.ndarray) -> str:
    """Draw a placement of n > QUEENS_FULL_MAX queens on ``ax``; return the title's note."""
    n = len(cols_of)
    ax.set_facecolor(_LIGHT)
    if n <= QUEENS_POINTS_MAX:
        ax.scatter(cols_of, np.arange(n), s=max(0.3, 4000 / n), marker="s", color="#111",
                   linewidths=0)
        note = "\none dot per queen"
    else:
        k = math.ceil(n / QUEENS_BLOCKS)
        m = math.ceil(n / k)
        held = np.zeros((m, m), dtype=bool)
        held[np.arange(n) // k, cols_of // k] = True
        ax.imshow(held, cmap=ListedColormap([_LIGHT, "#111111"]), vmin=0, vmax=1,
                  origin="upper", interpolation="nearest",
                  extent=(-0.5, m * k - 0.5, m * k - 0.5, -0.5))
        note = (f"\ndownsampled: each cell a {k:,} x {k:,} block of squares, dark if it "
                "holds a queen")
    ax.set_xlim(-0.5, n - 0.5)
    ax.set_ylim(n - 0.5, -0.5)
    ax.set_aspect("equal")
    ax.xaxis.set_ticks_position("top")
    ax.tick_params(labelsize=7)
    return note
