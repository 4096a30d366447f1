"""The knight's-tour search on boards of at most 64 squares: the visited set in one 64-bit mask.

:func:`run64_plain` (heuristic ``none``), :func:`run64_warnsdorff`
(``warnsdorff``), both with tie-break ``move_order``, and
:func:`.knights_random64.run64_random` (either heuristic with tie-break ``random``)
walk exactly the tree of :func:`.knights_kernel.knights_run` (the same order,
counters, status, tour, pauses and budgets); ``knights_run`` hands those searches
to them. What makes them fast:

* the visited set is a uint64 mask, rebuilt from the path on entry (the
  path is the whole resumable state), and each square's on-board neighbours
  are a uint8 row in move order plus a uint64 mask (:func:`small_tables`);
* a dead end is ``neighbours & ~visited == 0``; a Warnsdorff degree is the
  popcount of the candidate's ``neighbours & ~visited``, up to date on every
  visit and undo without a recount;
* each is one loop with no heuristic or tie-break to test (the two move-order
  ones count down to the stop and to the end of the backtrack budget), so that
  its values stay in registers;
* with ``none`` and move order the stack holds only the next move index per
  depth (the candidates are not listed: the visited set on returning to a
  frame is the one it was expanded with, so skipping visited squares then
  tries the same candidates in the same order);
* ``found[top]`` holds the solution count when the square at depth
  ``top + 1`` was placed: the square is a backtrack when it is undone with
  the count unchanged (the same test as counting the solutions below it);
* a node cap and a pause share one comparison per placement.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from btlab.experiments.compiled._driver import BACKTRACK_LIMIT as _BACKTRACK_LIMIT
from btlab.experiments.compiled._driver import EXHAUSTED as _EXHAUSTED
from btlab.experiments.compiled._driver import SOLVED as _SOLVED
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
    popcount,
    stop_code,
    store_state,
)

#: Largest board (squares) of the mask path.
MASK_SQUARES = 64

_ONE = np.uint64(1)
_ZERO = np.uint64(0)


def small_tables(nbr: np.ndarray, count: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(nbr8, nmask)`` of a board of at most 64 squares: the neighbour table as uint8
    (size, 8) and each square's neighbours as a uint64 mask (size,). Larger boards
    get empty tables (the general path)."""
    size = count.shape[0]
    if size > MASK_SQUARES:
        return np.zeros((0, 8), np.uint8), np.zeros(0, np.uint64)
    nbr8 = nbr.astype(np.uint8)
    nmask = np.zeros(size, np.uint64)
    for sq in range(size):
        m = 0
        for k in range(int(count[sq])):
            m |= 1 << int(nbr[sq, k])
        nmask[sq] = m
    return nbr8, nmask


@njit(cache=True, nogil=True)
def run64_plain(nbr8, count, nmask, params, state, path, frames, found, tour):
    """``knights_run`` for heuristic ``none`` with tie-break ``move_order``, on its own:
    one loop with no heuristic to test, counting down to the stop and to the end of
    the backtrack budget, so that its values stay in registers.

    The stack holds one uint64 per depth in ``found``: the solution count when the
    square was placed; ``frames[top, F_NEXT]`` the next move index.
    """
    size = count.shape[0]
    first = params[P_FIRST] != 0
    closed = params[P_CLOSED] != 0
    start = np.uint64(params[P_START])
    cap = params[P_CAP]
    base = params[P_BASE]
    dead_ends, checks, solutions, max_depth, depth, sq, have_tour = load_state(state)
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
            # full_board written out: calling it costs this loop 2-3 % (its tightest)
            if not closed or (nmask[sq] >> start) & _ONE != _ZERO:
                solutions += 1
                if have_tour == 0:
                    have_tour = 1
                    for k in range(size):
                        tour[k] = path[k]
                if first:
                    code = _SOLVED
                    break
            else:
                dead_ends += 1
                if bt_left == 0:
                    code = _BACKTRACK_LIMIT
                    break
                bt_left -= 1
            leaf = True
        else:
            checks += count[sq]
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
        if leaf:
            vis ^= bit
            depth -= 1
            if depth == base:
                break  # the root square itself was a leaf
        # -- the next child to place, undoing exhausted frames --
        while depth > base:
            top = np.uint64(depth - 1)
            s = path[top]
            k = np.uint64(frames[top, F_NEXT])
            m = np.uint64(count[s])
            while k < m and (vis >> np.uint64(nbr8[s, k])) & _ONE != _ZERO:
                k += _ONE
            if k < m:
                frames[top, F_NEXT] = k + _ONE
                sq = np.uint64(nbr8[s, k])
                break
            depth -= 1
            vis ^= _ONE << np.uint64(s)
            if found[top] == solutions:
                if bt_left == 0:
                    code = _BACKTRACK_LIMIT
                    break
                bt_left -= 1
        if code == _BACKTRACK_LIMIT or depth == base:
            break
    store_state(state, entry_todo - todo, entry_bt_left - bt_left, dead_ends, checks, solutions,
                max_depth, depth, sq, have_tour)
    return code


@njit(cache=True, nogil=True)
def run64_warnsdorff(nbr8, count, nmask, params, state, path, frames, found, tour, keyd):
    """``knights_run`` for heuristic ``warnsdorff`` with tie-break ``move_order``, on its
    own, as :func:`run64_plain`: each unvisited onward square inserted by degree (the
    popcount of its neighbours less the visited set) as it is listed, a stable
    insertion into ``frames[top, :n]``, their degrees in ``keyd`` (uint64 (8,), scratch:
    passed in, since an array made here costs numba's allocator a compile of its own).
    """
    size = count.shape[0]
    first = params[P_FIRST] != 0
    closed = params[P_CLOSED] != 0
    start = np.uint64(params[P_START])
    cap = params[P_CAP]
    base = params[P_BASE]
    dead_ends, checks, solutions, max_depth, depth, sq, have_tour = load_state(state)
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
            checks += count[sq]
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
                n = 0
                for k in range(count[sq]):
                    c = nbr8[sq, k]
                    if (vis >> np.uint64(c)) & _ONE == _ZERO:
                        checks += count[c]
                        deg = popcount(nmask[c] & ~vis)
                        j = n
                        while j > 0 and keyd[j - 1] > deg:
                            keyd[j] = keyd[j - 1]
                            frames[top, j] = frames[top, j - 1]
                            j -= 1
                        keyd[j] = deg
                        frames[top, j] = c
                        n += 1
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
                sq = np.uint64(frames[top, i])
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
    return code
