"""The knight's-tour search with heuristic ``none`` and tie-break ``random``, at most 64 squares.

:func:`run64_shuffled` is :func:`.knights_kernel.knights_run` with a random move
order at every placement: each placement's unvisited onward squares, listed in
move order, shuffled by Fisher-Yates with the next SplitMix64 outputs (as
:func:`btlab.experiments.knights.ordering.shuffle`), the same draws, tree, counters,
status, tour, pauses and budgets. What makes it fast, beside the 64-bit visited
mask of :mod:`.knights_fast`:

* the candidates are listed without a branch (a visited one is overwritten by
  the next), one byte each of one uint64, and shuffled there (a swap is a few
  shifts and exclusive ors in registers);
* ``z % (i + 1)`` for i + 1 in 2..8 is a division by a constant (a multiply).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from btlab.experiments.compiled._driver import BACKTRACK_LIMIT as _BACKTRACK_LIMIT
from btlab.experiments.compiled._driver import EXHAUSTED as _EXHAUSTED
from btlab.experiments.compiled._steps import (
    F_COUNT,
    F_NEXT,
    GO,
    P_BASE,
    P_CAP,
    P_CLOSED,
    P_FIRST,
    P_START,
    budget_left,
    full_board,
    load_state,
    path_mask,
    splitmix,
    stop_code,
    store_state,
)

_ONE = np.uint64(1)
_ZERO = np.uint64(0)
_BYTE = np.uint64(0xFF)
_LOW = np.uint64(0xFFFFFFFF)
_U32 = np.uint64(32)
_M3, _M5, _M6, _M7 = np.uint64(3), np.uint64(5), np.uint64(6), np.uint64(7)


@njit(cache=True, nogil=True, inline="always")
def mod_small(z, m):
    """``z % m`` for a uint64 ``z`` and ``m`` in 2..8, each divisor a constant (a
    multiply and a shift instead of a division)."""
    if m == 2:
        return np.int64(z & _ONE)
    if m == 3:
        return np.int64(z % _M3)
    if m == 4:
        return np.int64(z & _M3)
    if m == 5:
        return np.int64(z % _M5)
    if m == 6:
        return np.int64(z % _M6)
    if m == 7:
        return np.int64(z % _M7)
    if m == 8:
        return np.int64(z & _M7)
    return np.int64(z % np.uint64(m))



@njit(cache=True, nogil=True)
def run64_shuffled(nbr8, count, nmask, params, state, rng, path, frames, found, tour):
    """``knights_run`` for heuristic ``none`` with tie-break ``random`` on a board of at
    most 64 squares.

    Args:
        nbr8: uint8 (size, 8); count: int32 (size,); nmask: uint64 (size,): the
            geometry (:func:`.knights_fast.small_tables`).
        params, state, rng, path, frames, found, tour: as ``knights_run``'s
            (``found`` holds this search's own per-depth values, as :mod:`.knights_fast`).

    Returns:
        The status code, as ``knights_run``.
    """
    size = count.shape[0]
    first = params[P_FIRST] != 0
    closed = params[P_CLOSED] != 0
    start = np.uint64(params[P_START])
    cap = params[P_CAP]
    base = params[P_BASE]
    dead_ends, checks, solutions, max_depth, depth, sq, have_tour = load_state(state)
    rng_state = rng[0]
    vis = path_mask(path, depth)
    limit, todo, bt_left = budget_left(params, state)  # placements, backtracks before the stop
    entry_todo, entry_bt_left = todo, bt_left
    code = _EXHAUSTED
    while True:
        # -- place sq --
        if todo == 0:
            code = stop_code(limit, cap)
            break
        todo -= 1
        bit = _ONE << sq
        vis |= bit
        path[np.uint64(depth)] = sq
        depth += 1
        if depth > max_depth:
            max_depth = depth
        leaf = False
        if depth == size:
            stop, solutions, have_tour, dead_ends, bt_left = full_board(
                not closed or (nmask[sq] >> start) & _ONE != _ZERO,
                first, solutions, have_tour, dead_ends, bt_left, path, tour)
            if stop != GO:
                code = stop
                break
            leaf = True
        else:
            around = count[sq]
            checks += around
            if nmask[sq] & ~vis == _ZERO:
                dead_ends += 1
                if bt_left == 0:
                    code = _BACKTRACK_LIMIT
                    break
                bt_left -= 1
                leaf = True
            else:
                top = np.uint64(depth - 1)
                found[top] = solutions
                frames[top, F_NEXT] = 0
                # the unvisited onward squares in move order, one byte each
                w = _ZERO
                shift = _ZERO
                for k in range(around):
                    c = np.uint64(nbr8[sq, k])
                    w = (w & ~(_BYTE << shift)) | (c << shift)
                    shift += (((vis >> c) & _ONE) ^ _ONE) << np.uint64(3)
                n = np.int64(shift >> np.uint64(3))
                # Fisher-Yates, as btlab.experiments.knights.ordering.shuffle
                for i in range(n - 1, 0, -1):
                    rng_state, z = splitmix(rng_state)
                    si = np.uint64(i) << np.uint64(3)
                    sj = np.uint64(mod_small(z, i + 1)) << np.uint64(3)
                    x = ((w >> si) ^ (w >> sj)) & _BYTE
                    w ^= (x << si) | (x << sj)
                frames[top, 0] = w & _LOW
                frames[top, 1] = w >> _U32
                frames[top, F_COUNT] = n
        if leaf:
            vis ^= bit
            depth -= 1
            if depth == base:
                break  # the root square itself was a leaf
        # -- the next child to place, undoing exhausted frames --
        while depth > base:
            top = np.uint64(depth - 1)
            i = frames[top, F_NEXT]
            if i < frames[top, F_COUNT]:
                frames[top, F_NEXT] = i + 1
                w = np.uint64(frames[top, 0]) | (np.uint64(frames[top, 1]) << _U32)
                sq = (w >> (np.uint64(i) << np.uint64(3))) & _BYTE
                break
            depth -= 1
            vis ^= _ONE << np.uint64(path[top])
            if found[top] == solutions:
                if bt_left == 0:
                    code = _BACKTRACK_LIMIT
                    break
                bt_left -= 1
        if code == _BACKTRACK_LIMIT or depth == base:
            break
    store_state(state, entry_todo - todo, entry_bt_left - bt_left, dead_ends, checks, solutions,
                max_depth, depth, sq, have_tour)
    rng[0] = rng_state
    return code
