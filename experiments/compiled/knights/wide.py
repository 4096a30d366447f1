"""The knight's-tour search on boards of more than 64 squares, ties by move order.

:func:`runwide_plain` (heuristic ``none``) and :func:`runwide_warnsdorff`
(``warnsdorff``) walk exactly the tree of :func:`.knights_kernel.knights_run`
with tie-break ``move_order`` (the same order, counters, status, tour, pauses
and budgets); ``knights_run`` hands those searches to them on boards too large
for the 64-bit mask of :mod:`.knights_fast`. They are its loops with the
visited set as one byte per square (``visited``, kept across calls like the
path), and:

* with ``none`` the stack holds only the next move index per depth, set at
  placement to the first unvisited onward square (found by the dead-end test,
  so it is not looked for twice);
* with ``warnsdorff`` each square's count of unvisited neighbours is kept up
  to date on every visit and undo instead of recounted, in one byte per
  square that also holds the visited flag (``cell``, kept across calls; a
  search's prefix is set by :func:`unvisited_degrees`). Placing a square
  takes it off its neighbours' counts and lists the unvisited ones by their
  count so updated, in one pass; a dead end is a placement that lists none.
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
    stop_code,
    store_state,
)

#: The visited flag of a square's byte in :func:`runwide_warnsdorff` (its low bits: the
#: square's count of unvisited neighbours, at most 8).
_VISITED = np.uint8(0x80)
_U0, _U1 = np.uint64(0), np.uint64(1)
_ONE8 = np.uint8(1)


def unvisited_degrees(nbr: np.ndarray, count: np.ndarray, prefix: tuple[int, ...]) -> np.ndarray:
    """The ``cell`` bytes of :func:`runwide_warnsdorff` once ``prefix`` is on the board:
    uint8 (size,), each square's number of unvisited on-board neighbours, plus 0x80 on
    the squares of ``prefix``.

    Args:
        nbr: uint32 (size, 8) and count: int32 (size,), the board's neighbour
            table (:func:`.knights_tables.geometry`); prefix: the squares already
            on the path (distinct).
    """
    cell = count.astype(np.uint8)
    for sq in prefix:
        cell[sq] |= _VISITED
        for k in range(int(count[sq])):
            cell[nbr[sq, k]] -= 1
    return cell


@njit(cache=True, nogil=True)
def _closes(nbr, count, sq, start):
    """Whether ``start`` is a knight's move from ``sq`` (a closed tour)."""
    for k in range(count[sq]):
        if nbr[sq, k] == start:
            return True
    return False


@njit(cache=True, nogil=True)
def runwide_plain(nbr, count, params, state, visited, path, frames, found, tour):
    """``knights_run`` for heuristic ``none`` with tie-break ``move_order`` on any board.

    Args:
        nbr: uint32 (size, 8); count: int32 (size,): the geometry.
        params, state, visited, path, frames, found, tour: as ``knights_run``'s
            (``found[top]``: the solution count when the square at depth
            ``top + 1`` was placed; ``frames[top, F_NEXT]``: its next move index).

    Returns:
        The status code, as ``knights_run``.
    """
    size = count.shape[0]
    first = params[P_FIRST] != 0
    closed = params[P_CLOSED] != 0
    start = params[P_START]
    cap = params[P_CAP]
    base = params[P_BASE]
    dead_ends, checks, solutions, max_depth, depth, sq, have_tour = load_state(state)
    limit, todo, bt_left = budget_left(params, state)  # placements, backtracks before the stop
    entry_todo, entry_bt_left = todo, bt_left
    code = _EXHAUSTED
    while True:
        # -- place sq --
        if todo == 0:
            code = stop_code(limit, cap)
            break
        todo -= 1
        visited[sq] = 1
        path[np.uint64(depth)] = sq
        depth += 1
        if depth > max_depth:
            max_depth = depth
        leaf = False
        if depth == size:
            # full_board written out: calling it costs this loop 3 % (its tightest)
            if not closed or _closes(nbr, count, sq, start):
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
            m = np.uint64(count[sq])
            checks += count[sq]
            k = np.uint64(0)
            while k < m and visited[nbr[sq, k]] != 0:
                k += np.uint64(1)
            if k == m:
                dead_ends += 1
                if bt_left == 0:
                    code = _BACKTRACK_LIMIT
                    break
                bt_left -= 1
                leaf = True
            else:
                top = np.uint64(depth - 1)
                found[top] = solutions
                frames[top, F_NEXT] = k
        if leaf:
            visited[sq] = 0
            depth -= 1
            if depth == base:
                break  # the root square itself was a leaf
        # -- the next child to place, undoing exhausted frames --
        while depth > base:
            top = np.uint64(depth - 1)
            s = path[top]
            k = np.uint64(frames[top, F_NEXT])
            m = np.uint64(count[s])
            while k < m and visited[nbr[s, k]] != 0:
                k += np.uint64(1)
            if k < m:
                frames[top, F_NEXT] = k + np.uint64(1)
                sq = np.uint64(nbr[s, k])
                break
            depth -= 1
            visited[s] = 0
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
def runwide_warnsdorff(nbr, count, params, state, cell, path, frames, found, tour):
    """``knights_run`` for heuristic ``warnsdorff`` with tie-break ``move_order`` on any
    board, each square's count of unvisited neighbours kept up to date.

    Args:
        cell: uint8 (size,): each square's number of unvisited neighbours, plus
            0x80 when it is on the path (:func:`unvisited_degrees`), updated in
            place on every visit and undo.
        the others: as :func:`runwide_plain` (``frames[top, :F_COUNT]``: the
            ordered candidates, stable by degree; ``visited`` is not used).

    Returns:
        The status code, as ``knights_run``.
    """
    size = count.shape[0]
    first = params[P_FIRST] != 0
    closed = params[P_CLOSED] != 0
    start = params[P_START]
    cap = params[P_CAP]
    base = params[P_BASE]
    dead_ends, checks, solutions, max_depth, depth, sq, have_tour = load_state(state)
    limit, todo, bt_left = budget_left(params, state)  # placements, backtracks before the stop
    entry_todo, entry_bt_left = todo, bt_left
    keyd = np.empty(8, np.uint8)
    code = _EXHAUSTED
    while True:
        # -- place sq --
        if todo == 0:
            code = stop_code(limit, cap)
            break
        todo -= 1
        cell[sq] |= _VISITED
        around = np.uint64(count[sq])
        path[np.uint64(depth)] = sq
        depth += 1
        if depth > max_depth:
            max_depth = depth
        leaf = False
        if depth == size:
            for k in range(around):
                cell[nbr[sq, k]] -= 1
            stop, solutions, have_tour, dead_ends, bt_left = full_board(
                not closed or _closes(nbr, count, sq, start),
                first, solutions, have_tour, dead_ends, bt_left, path, tour)
            if stop != GO:
                code = stop
                break
            leaf = True
        else:
            # one pass: each neighbour loses sq from its unvisited neighbours, and the
            # unvisited ones are listed by their degree so updated
            checks += count[sq]
            top = np.uint64(depth - 1)
            n = _U0
            for k in range(around):
                c = nbr[sq, k]
                d = cell[c] - _ONE8
                cell[c] = d
                if d < _VISITED:
                    checks += count[c]
                    j = n
                    while j > _U0 and keyd[j - _U1] > d:
                        keyd[j] = keyd[j - _U1]
                        frames[top, j] = frames[top, j - _U1]
                        j -= _U1
                    keyd[j] = d
                    frames[top, j] = c
                    n += _U1
            if n == _U0:
                dead_ends += 1
                if bt_left == 0:
                    code = _BACKTRACK_LIMIT
                    break
                bt_left -= 1
                leaf = True
            else:
                found[top] = solutions
                frames[top, F_NEXT] = 0
                frames[top, F_COUNT] = n
        if leaf:
            cell[sq] ^= _VISITED
            for k in range(around):
                cell[nbr[sq, k]] += 1
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
            s = path[top]
            cell[s] ^= _VISITED
            for k in range(np.uint64(count[s])):
                cell[nbr[s, k]] += 1
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
