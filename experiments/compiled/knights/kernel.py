"""Compiled knight's-tour kernel: the reference search of :mod:`~btlab.experiments.knights.solve`.

The kernel walks exactly the tree of the pure-Python reference
(:func:`btlab.experiments.knights.solve._search_iterative`) in the same order and counts
the same way, so ``nodes``, ``backtracks``, ``dead_ends``, ``checks``,
``solutions``, ``max_depth``, the status and the tour are identical under a
node budget or none. It is an iterative depth-first search with an explicit
stack held in preallocated NumPy arrays (one frame per placement on the
path: the ordered candidates, the index of the next one, the solutions found
below), compiled in numba's nopython mode.

Heuristics ``none``, ``warnsdorff``, ``static_degree``; tie-breaks
``move_order``, ``random`` (the same SplitMix64 stream as the reference, so
random ties fall the same way, and with ``none`` the same Fisher-Yates shuffle
of every placement's candidates), ``pohl``, ``roth``; ``first`` and ``count``
mode; open and closed tours; any order of the 8 moves. The codes the loops branch on
(``params[P_HEURISTIC]``, ``params[P_TIE]``) are the ``kernel`` fields of the entries
of :data:`~btlab.experiments.knights.ordering.HEURISTICS` and
:data:`~btlab.experiments.knights.ordering.TIE_BREAKS`; a heuristic whose entry has no
kernel is refused (:func:`check_arguments`; the runner refuses it when the config is
validated).

Time budget: nopython code cannot read ``time.perf_counter``. The kernel's
whole state lives in arrays, so it is resumable: with a time limit it runs
in chunks of :data:`PAUSE_EVERY` placements, returning to Python between two
chunks, where the clock is read (a multiple of :attr:`Budget.CLOCK_EVERY`,
like the reference). A chunk takes milliseconds (about 2^17 placements at
tens of millions per second), so the search stops well within the budget's
tolerance; without a time limit it pauses every :data:`._driver.CHUNK_EVERY`
placements (about 10 ms), so that Ctrl-C and SIGTERM reach Python, and resumes
with the counters unchanged. Under a time
limit the counters are those reached when the clock was read, a multiple of
:data:`PAUSE_EVERY` placements, and need not equal the reference's.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from numba import njit

from btlab.experiments.compiled._driver import PAUSE_EVERY, drive, pause_mask  # noqa: F401 - PAUSE_EVERY: documented here
from btlab.experiments.compiled.knights import loops
from btlab.experiments.compiled.knights.fast import run64_plain, run64_warnsdorff
from btlab.experiments.compiled.knights.first import wide_table
from btlab.experiments.compiled.knights.general import run_general
from btlab.experiments.compiled.knights.random64 import run64_random
from btlab.experiments.compiled.knights.shuffle64 import run64_shuffled
from btlab.experiments.compiled.knights.tables import (  # noqa: F401 - re-exported
    GEOMETRY_CHUNK_SQUARES,
    Geometry,
    _geometry,
    build_geometry,
    geometry,
    mask_tables,
    row_table,
)
from btlab.experiments.compiled.knights.ties64 import run64_keyed
from btlab.experiments.compiled.knights.wide import (
    runwide_plain,
    runwide_warnsdorff,
    unvisited_degrees,
)
from btlab.experiments.compiled.knights.widekeyed import runwide_keyed
from btlab.experiments.core import Budget, Mode, SearchResult, Status
from btlab.experiments.knights.solve import (
    DEFAULT_MOVE_ORDER,
    HEURISTICS,
    TIE_BREAKS,
    KnightBoard,
    validate_move_order,
)


def compiled_heuristics() -> list[str]:
    """The heuristics of :data:`~btlab.experiments.knights.ordering.HEURISTICS` that have a
    kernel (their entry's ``kernel`` code, which :func:`knights_run`'s loops branch on)."""
    return [name for name, entry in HEURISTICS.items() if entry.kernel is not None]


# Indices into the int64 parameter array.
P_HEURISTIC, P_TIE, P_FIRST, P_CLOSED, P_START, P_CAP, P_PAUSE_MASK, P_MAXD2, P_BASE = range(9)
P_BTCAP = 9
N_PARAMS = 10

# Indices into the int64 state array (the counters and the resume point).
(S_NODES, S_BACKTRACKS, S_DEAD_ENDS, S_CHECKS, S_SOLUTIONS, S_MAX_DEPTH, S_DEPTH, S_SQ,
 S_HAVE_TOUR) = range(9)
N_STATE = 9

# Columns of the frame array: 8 ordered candidates, their number, the next index.
F_COUNT, F_NEXT = 8, 9
N_FRAME = 10

_NO_DEGREES = np.zeros(0, np.uint8)


@njit(cache=True, nogil=True)
def knights_run(nbr, count, dist2, nbr8, nmask, params, state, rng, visited, deg, path, frames,
                found, tour):
    """Run (or resume) the depth-first search; return a status code.

    Most searches go to loops of their own, walking the same tree with the same
    counters: every search on a board of at most 64 squares (the visited set in
    a 64-bit mask: :mod:`.knights_fast`, :mod:`.knights_random64`,
    :mod:`.knights_shuffle64`, :mod:`.knights_ties64`), and on larger boards every
    one without random ties (:mod:`.knights_wide`, :mod:`.knights_widekeyed`).
    The rest go to the general loop (:func:`.general.run_general`). This one
    dispatcher compiles every loop at its first call: :func:`run_knights` chooses
    the loop in Python instead (:mod:`.loops`) and calls it alone.

    Args:
        nbr, count, dist2: the board geometry (:func:`build_geometry`).
        nbr8, nmask: :func:`.knights_fast.small_tables` (empty above 64 squares).
        params: int64 (N_PARAMS,): heuristic, tie-break, first, closed, start
            square, node cap, pause mask, largest ``dist2``, base depth (the
            prefix already on the board; the search ends when the path is
            back to it: 0 for the whole search), backtrack cap.
        state: int64 (N_STATE,): the counters, the path length and the
            square to place next; updated in place.
        rng: uint64 (1,): the SplitMix64 state of the random tie-break.
        visited: uint8 (size,); deg: uint8 (size,), each square's unvisited
            neighbours (:func:`.knights_wide.unvisited_degrees`) for a
            heuristic without random ties above 64 squares, else empty;
            path: uint32 (size,); frames: uint32 (size,
            N_FRAME); found: int64 (size,): the explicit stack. Array indices
            are unsigned where it matters: numba tests a signed index for a
            negative value (wraparound) on every access.
        tour: int32 (size,): receives the first tour found.

    Returns:
        0 paused (resume by calling again), 1 solved, 2 exhausted, 3 node limit,
        4 backtrack limit.
    """
    heuristic = params[P_HEURISTIC]
    tie = params[P_TIE]
    if heuristic == 0 and tie != 1:
        tie = 0  # without a heuristic every tie-break but random keeps the move order
    if nbr8.shape[0] > 0:  # at most 64 squares: the visited set in a 64-bit mask
        if heuristic == 0 and tie == 0:
            return run64_plain(nbr8, count, nmask, params, state, path, frames, found, tour)
        keyd = np.empty(8, np.uint64)
        if heuristic == 1 and tie == 0:
            return run64_warnsdorff(nbr8, count, nmask, params, state, path, frames, found, tour,
                                    keyd)
        if heuristic == 0 and tie == 1:
            return run64_shuffled(nbr8, count, nmask, params, state, rng, path, frames, found,
                                  tour)
        if tie == 1:
            return run64_random(nbr8, count, nmask, params, state, rng, path, frames, found, tour,
                                keyd, np.empty(8, np.uint64))
        return run64_keyed(nbr8, count, nmask, dist2, params, state, path, frames, found, tour,
                           np.empty(count.shape[0], np.uint64), keyd)
    if heuristic == 0 and tie == 0:
        return runwide_plain(nbr, count, params, state, visited, path, frames, found, tour)
    if heuristic == 1 and tie == 0:
        return runwide_warnsdorff(nbr, count, params, state, deg, path, frames, found, tour)
    if tie != 1 and deg.shape[0] > 0:
        return runwide_keyed(nbr, count, dist2, params, state, deg, path, frames, found, tour)
    return run_general(nbr, count, dist2, params, state, rng, visited, path, frames, found, tour)



def run_knights(rows: int, cols: int, start_sq: int, moves: tuple, heuristic: str,
                tie_break: str, first: bool, closed: bool, budget: Budget,
                seed: int, extra: dict | None = None,
                prefix: tuple[int, ...] = (), chunked: bool = False) -> SearchResult:
    """Run the kernel to the end (in chunks under a time limit); arguments already checked.

    ``prefix`` (squares already on the board, from the start square on) makes
    it the subtree of ``start_sq`` placed after them, counted as
    :func:`btlab.experiments.knights.solve.search_subtree` counts it; empty: the whole
    search from ``start_sq``.
    """
    tables = geometry(rows, cols, moves, budget.out_of_time)
    if tables is None:  # the board's tables took the whole time budget
        return SearchResult(Status.TIME_LIMIT, 0, 0, 0, 0, 0, 0, None,
                            extra if extra is not None else {})
    nbr, count, dist2, maxd2 = tables
    size = rows * cols
    timed = budget.max_seconds is not None
    params = np.array([HEURISTICS[heuristic].kernel, TIE_BREAKS[tie_break].kernel, int(first),
                       int(closed), prefix[0] if prefix else start_sq, budget.node_cap,
                       pause_mask(timed, chunked), maxd2, len(prefix), budget.backtrack_cap],
                      dtype=np.int64)
    state = np.zeros(N_STATE, np.int64)
    state[S_SQ] = start_sq
    state[S_DEPTH] = len(prefix)
    rng = np.array([seed & 0xFFFFFFFFFFFFFFFF], dtype=np.uint64)
    visited = np.zeros(size + 1, np.uint8)  # the last: the sentinel of .first.wide_table
    path = np.zeros(size, np.uint32)
    frames = np.zeros((size, N_FRAME), np.uint32)
    found = np.zeros(size, np.int64)
    tour = np.zeros(size, np.int32)
    for i, sq in enumerate(prefix):
        visited[sq] = 1
        path[i] = sq
    nbr8, nmask = mask_tables(rows, cols, moves)
    incremental = size > nbr8.shape[0] and heuristic != "none" and tie_break != "random"
    deg = unvisited_degrees(nbr, count, prefix) if incremental else _NO_DEGREES
    # the loop is chosen here, before numba compiles anything (btlab.experiments.compiled.
    # knights.loops): a process compiles or loads only the loops its searches run
    tie = "move_order" if heuristic == "none" and tie_break != "random" else tie_break
    loop = loops.choose(loops.Shape(nbr8.shape[0] > 0, heuristic, tie, first,
                                    deg.shape[0] > 0))
    bundle = {"nbr": nbr, "count": count, "dist2": dist2, "nbr8": nbr8, "nmask": nmask,
              "params": params, "state": state, "rng": rng, "visited": visited, "deg": deg,
              "path": path, "frames": frames, "found": found, "tour": tour}
    for name, length in (("key", size), ("keyd", 8), ("keyt", 8)):  # scratch
        if name in loop.takes:
            bundle[name] = np.zeros(length, np.uint64)
    if "table" in loop.takes:
        bundle["table"] = row_table(rows, cols, moves)
    if "wide" in loop.takes:
        bundle["wide"] = wide_table(nbr, count)
    status = drive(loop.kernel, tuple(bundle[name] for name in loop.takes), budget)
    solution = tuple(tour.tolist()) if state[S_HAVE_TOUR] else None
    return SearchResult(status, int(state[S_NODES]), int(state[S_BACKTRACKS]),
                        int(state[S_DEAD_ENDS]), int(state[S_CHECKS]),
                        int(state[S_SOLUTIONS]), int(state[S_MAX_DEPTH]), solution,
                        extra if extra is not None else {})


def check_arguments(rows: int, cols: int, start: tuple[int, int], mode: str | Mode,
                    heuristic: str, tie_break: str,
                    move_order: Sequence[Sequence[int]]) -> tuple[int, tuple, bool]:
    """Validate like the reference; return ``(start square, moves, first)``.

    Cheap on the common path (the default move order, a square on the board):
    a short trial's whole budget is a few microseconds.

    Raises:
        ValueError: a bad board, start square, mode, heuristic, tie-break or move order.
    """
    moves = DEFAULT_MOVE_ORDER if move_order is DEFAULT_MOVE_ORDER else validate_move_order(
        move_order)
    row, col = start
    if not (rows >= 1 and cols >= 1 and 0 <= row < rows and 0 <= col < cols):
        KnightBoard(rows, cols, moves).square(row, col)  # raises the reference's message
    first = Mode(mode) is Mode.FIRST
    if HEURISTICS.get_or_raise(heuristic).kernel is None:
        raise ValueError(f"heuristic {heuristic!r} has no compiled kernel; expected one of "
                         f"{', '.join(compiled_heuristics())} (or engine: python)")
    TIE_BREAKS.get_or_raise(tie_break)
    return row * cols + col, moves, first


def warm_loop(name: str) -> None:
    """Compile (or load from the disk cache) one loop of :mod:`.loops` and the board
    tables' kernel: a small search that runs it (:attr:`.loops.Loop.sample`)."""
    rows, cols, heuristic, tie_break, first = loops.loops()[name].sample
    run_knights(rows, cols, 0, DEFAULT_MOVE_ORDER, heuristic, tie_break, first, False,
                Budget(1000, None), 1)


def warm_up() -> None:
    """Compile (or load from the disk cache) every knight's-tour kernel signature in use:
    every loop of :mod:`.loops` and the all-in-one :func:`knights_run`."""
    moves = DEFAULT_MOVE_ORDER
    tables = geometry(3, 4, moves)
    assert tables is not None
    nbr, count, dist2, maxd2 = tables
    nbr8, nmask = mask_tables(3, 4, moves)
    params = np.array([1, 1, 1, 0, 0, 1000, -1, maxd2, 0, 1 << 62], dtype=np.int64)
    knights_run(nbr, count, dist2, nbr8, nmask, params, np.zeros(N_STATE, np.int64),
                np.ones(1, np.uint64), np.zeros(12, np.uint8), _NO_DEGREES,
                np.zeros(12, np.uint32), np.zeros((12, N_FRAME), np.uint32),
                np.zeros(12, np.int64), np.zeros(12, np.int32))
    for name in loops.loops():
        warm_loop(name)
    # geometry of a board above the cache threshold goes through the same kernel
    _geometry(1, 1, moves)
