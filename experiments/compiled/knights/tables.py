"""The knight's-tour kernels' board tables: neighbours in move order, degrees, distances.

:func:`geometry` fills a board's tables: a small board's in NumPy
(:func:`small_geometry`, kept per process), a large one's with :func:`build_geometry`
(compiled), a block of rows at a time against the clock; :func:`mask_tables` adds the
byte and bit-mask tables of the boards of at most 64 squares (:mod:`.fast`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Callable

import numpy as np
from numba import njit

from btlab.experiments.compiled.knights.fast import MASK_SQUARES, small_tables
from btlab.experiments.compiled.knights.first import row_table as first_row_table


@njit(cache=True, nogil=True)
def build_geometry(rows, cols, moves, r0, r1, nbr, count, dist2):
    """Fill rows ``r0 .. r1 - 1`` of an m x n board's neighbour table for a move order.

    Args:
        rows, cols: board size (int64).
        moves: int64 array of shape (8, 2), the (d_row, d_col) in the order tried.
        r0, r1: the rows to fill (int64), ``0 <= r0 <= r1 <= rows``.
        nbr, count, dist2: the tables, filled in place for those rows: ``nbr``
            uint32 (size, 8), the on-board squares a knight's move away in move
            order, the first ``count[sq]`` (int32 (size,), also the static degree)
            valid; ``dist2`` int64 (size,), 4 x the squared Euclidean distance to
            the board centre (exact integers).
    """
    for r in range(r0, r1):
        for c in range(cols):
            sq = r * cols + c
            k = 0
            for m in range(8):
                rr = r + moves[m, 0]
                cc = c + moves[m, 1]
                if 0 <= rr < rows and 0 <= cc < cols:
                    nbr[sq, k] = rr * cols + cc
                    k += 1
            count[sq] = k
            dr = 2 * r - (rows - 1)
            dc = 2 * c - (cols - 1)
            dist2[sq] = dr * dr + dc * dc


#: ``(nbr, count, dist2, max dist2)`` of a board (see :func:`geometry`).
Geometry = tuple[np.ndarray, np.ndarray, np.ndarray, int]

#: Boards up to this many squares keep their geometry in a per-process cache.
_GEOMETRY_CACHE_SQUARES = 10_000


@lru_cache(maxsize=64)
def _cached_geometry(rows: int, cols: int, moves: tuple) -> Geometry:
    return small_geometry(rows, cols, moves)


def small_geometry(rows: int, cols: int, moves: tuple) -> Geometry:
    """:func:`build_geometry`'s tables of a whole board, in NumPy (a move at a time over
    every square): the same values, with nothing to compile, so that a first trial on
    a cold cache does not wait for :func:`build_geometry` to compile (a tenth to a
    quarter of a second). Used up to :data:`_GEOMETRY_CACHE_SQUARES` squares, where
    it takes microseconds to a millisecond; larger boards go through the kernel, a
    block of rows at a time against the clock."""
    size = rows * cols
    r = np.repeat(np.arange(rows, dtype=np.int64), cols)
    c = np.tile(np.arange(cols, dtype=np.int64), rows)
    nbr = np.zeros((size, 8), np.uint32)
    count = np.zeros(size, np.int32)
    for dr, dc in moves:
        rr, cc = r + dr, c + dc
        on = np.flatnonzero((rr >= 0) & (rr < rows) & (cc >= 0) & (cc < cols))
        nbr[on, count[on]] = rr[on] * cols + cc[on]
        count[on] += 1
    dist2 = (2 * r - (rows - 1)) ** 2 + (2 * c - (cols - 1)) ** 2
    return nbr, count, dist2, int(dist2.max())


@lru_cache(maxsize=64)
def _mask_tables(rows: int, cols: int, moves: tuple) -> tuple[np.ndarray, np.ndarray]:
    nbr, count, _, _ = _cached_geometry(rows, cols, moves)
    return small_tables(nbr, count)


_NO_MASK_TABLES = (np.zeros((0, 8), np.uint8), np.zeros(0, np.uint64))


@lru_cache(maxsize=64)
def row_table(rows: int, cols: int, moves: tuple) -> np.ndarray:
    """:func:`.first.row_table` of a board of at most 64 squares, cached per process."""
    nbr8, nmask = _mask_tables(rows, cols, moves)
    return first_row_table(nbr8, _cached_geometry(rows, cols, moves)[1], nmask)


def mask_tables(rows: int, cols: int, moves: tuple) -> tuple[np.ndarray, np.ndarray]:
    """:func:`.knights_fast.small_tables` of a board, cached per process; empty tables
    above :data:`.knights_fast.MASK_SQUARES` squares."""
    return _mask_tables(rows, cols, moves) if rows * cols <= MASK_SQUARES else _NO_MASK_TABLES

#: Squares of a board's tables filled between two readings of the clock (a 2000 x 2000
#: board's tables take 0.1 to 0.9 s in one call, by the machine's load).
GEOMETRY_CHUNK_SQUARES = 1 << 16


def _geometry(rows: int, cols: int, moves: tuple,
              out_of_time: Callable[[], bool] | None = None) -> Geometry | None:
    size = rows * cols
    nbr = np.zeros((size, 8), np.uint32)
    count = np.zeros(size, np.int32)
    dist2 = np.zeros(size, np.int64)
    step = max(1, GEOMETRY_CHUNK_SQUARES // cols)
    table = np.array(moves, dtype=np.int64)
    for r0 in range(0, rows, step):
        if out_of_time is not None and out_of_time():
            return None
        build_geometry(rows, cols, table, r0, min(rows, r0 + step), nbr, count, dist2)
    return nbr, count, dist2, int(dist2.max())


def geometry(rows: int, cols: int, moves: tuple,
             out_of_time: Callable[[], bool] | None = None) -> Geometry | None:
    """``(nbr, count, dist2, max dist2)`` for a board; small boards are cached per process.

    A big board's tables are filled a block of rows at a time, reading
    ``out_of_time()`` before each: None when the time ran out first.
    """
    if rows * cols <= _GEOMETRY_CACHE_SQUARES:
        return _cached_geometry(rows, cols, moves)
    return _geometry(rows, cols, moves, out_of_time)
