"""The knight's-tour search on boards of more than 64 squares, by degree keys with
deterministic ties.

:func:`runwide_keyed` is :func:`.knights_kernel.knights_run` for heuristic
``warnsdorff`` with tie-break ``pohl`` or ``roth``, and ``static_degree`` with
``move_order``, ``pohl`` or ``roth``, on boards too large for the 64-bit mask of
:mod:`.knights_ties64`: the same tree, order, counters, status, tour, pauses and
budgets. It is :func:`.knights_wide.runwide_warnsdorff` with keys:

* one byte per square (``cell``, kept across calls; a search's prefix is set
  by :func:`.knights_wide.unvisited_degrees`): its count of unvisited
  neighbours, plus 0x80 when it is on the path. With ``warnsdorff``, placing
  a square takes it off its neighbours' counts and lists the unvisited ones
  in one pass; ``static_degree`` reads and sets only the 0x80 flags;
* the loop is compiled once per order (an inlined body with the heuristic
  and tie-break as constants), so no copy tests them per placement;
* each candidate's ordering key is one integer, ``degree << 60 | tie``, so the
  stable insertion compares one number (degrees are at most 8, ties below
  2^60: ``roth``'s ``maxd2 - dist2`` is under 2^60 for sides under 2^29);
* the ``pohl`` tie of a candidate ``c`` (the sum of the onward degrees as if
  the knight stood on ``c``) is the sum of ``count - 1`` over ``c``'s
  unvisited neighbours, read from the maintained counts, with no recount. A
  knight's move changes the square's colour, so ``c``'s neighbours are never
  the placed square's neighbours: their counts are already up to date when
  ``c`` is listed. ``c`` itself is one of their unvisited neighbours, hence
  the ``- 1``. Like the general loop it looks only when there is a choice:
  the candidates are listed in move order with their degrees first, then, when
  there are two or more, each gets its tie (summed without a branch) and is
  inserted; each of those neighbours adds its neighbour count to ``checks``;
* ``static_degree`` keys ignore the visited set: the square's neighbour count,
  and the static ``pohl`` sum (its neighbours' neighbour counts) or ``roth``
  distance; no candidate adds to ``checks``.
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
    P_HEURISTIC,
    P_MAXD2,
    P_START,
    P_TIE,
    budget_left,
    full_board,
    load_state,
    stop_code,
    store_state,
)
from btlab.experiments.compiled.knights.wide import _closes

_VISITED = np.uint8(0x80)
_U0, _U1, _U7, _U60 = np.uint64(0), np.uint64(1), np.uint64(7), np.uint64(60)
_ONE8 = np.uint8(1)

# heuristic and tie-break codes of knights_kernel
_WARNSDORFF, _POHL, _ROTH = 1, 2, 3


@njit(cache=True, nogil=True)
def runwide_keyed(nbr, count, dist2, params, state, cell, path, frames, found, tour):
    """``knights_run`` for heuristic ``warnsdorff`` (tie-break ``pohl`` or ``roth``) or
    ``static_degree`` (``move_order``, ``pohl`` or ``roth``) on any board.

    Args:
        nbr: uint32 (size, 8); count: int32 (size,): the geometry.
        dist2: int64 (size,): 4 x the squared distance to the centre (``roth``;
            ``params[P_MAXD2]`` its largest value).
        cell: uint8 (size,): each square's number of unvisited neighbours, plus
            0x80 when it is on the path (:func:`.knights_wide.unvisited_degrees`),
            updated in place on every visit and undo (``static_degree``: only
            the 0x80 flag; its counts are left as they were).
        params, state, path, frames, found, tour: as ``knights_run``'s
            (``frames[top, :F_COUNT]``: the ordered candidates; ``found[top]``:
            the solution count when the square at depth ``top + 1`` was placed).

    Returns:
        The status code, as ``knights_run``.
    """
    tie = params[P_TIE]
    if params[P_HEURISTIC] == _WARNSDORFF:
        if tie == _POHL:
            return _keyed(nbr, count, dist2, params, state, cell, path, frames, found, tour,
                          True, True, False)
        return _keyed(nbr, count, dist2, params, state, cell, path, frames, found, tour,
                      True, False, True)
    if tie == _POHL:
        return _keyed(nbr, count, dist2, params, state, cell, path, frames, found, tour,
                      False, True, False)
    if tie == _ROTH:
        return _keyed(nbr, count, dist2, params, state, cell, path, frames, found, tour,
                      False, False, True)
    return _keyed(nbr, count, dist2, params, state, cell, path, frames, found, tour,
                  False, False, False)


@njit(cache=True, nogil=True, inline="always")
def _keyed(nbr, count, dist2, params, state, cell, path, frames, found, tour, dynamic, pohl,
           roth):
    """The loop of :func:`runwide_keyed`, compiled once for each order: ``dynamic``
    (``warnsdorff``), ``pohl`` and ``roth`` are constants at each call, so every
    copy tests none of them."""
    size = count.shape[0]
    maxd2 = params[P_MAXD2]
    first = params[P_FIRST] != 0
    closed = params[P_CLOSED] != 0
    start = params[P_START]
    cap = params[P_CAP]
    base = params[P_BASE]
    dead_ends, checks, solutions, max_depth, depth, sq, have_tour = load_state(state)
    limit, todo, bt_left = budget_left(params, state)  # placements, backtracks before the stop
    entry_todo, entry_bt_left = todo, bt_left
    keyd = np.empty(8, np.uint64)
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
            if dynamic:
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
            # unvisited ones are inserted by their key
            checks += count[sq]
            top = np.uint64(depth - 1)
            n = _U0
            for k in range(around):
                c = nbr[sq, k]
                if dynamic:
                    d = cell[c] - _ONE8
                    cell[c] = d
                else:
                    d = cell[c]
                if d < _VISITED:
                    if dynamic:
                        checks += count[c]
                        if pohl:  # listed in move order, keyed below when there is a choice
                            keyd[n] = np.uint64(d) << _U60
                            frames[top, n] = c
                            n += _U1
                            continue
                        kc = np.uint64(d) << _U60
                    else:
                        kc = np.uint64(count[c]) << _U60
                    if roth:
                        kc |= np.uint64(maxd2 - dist2[c])
                    elif pohl:
                        s = 0
                        for m in range(np.uint64(count[c])):
                            s += count[nbr[c, m]]
                        kc |= np.uint64(s)
                    j = n
                    while j > _U0 and keyd[j - _U1] > kc:
                        keyd[j] = keyd[j - _U1]
                        frames[top, j] = frames[top, j - _U1]
                        j -= _U1
                    keyd[j] = kc
                    frames[top, j] = c
                    n += _U1
            if dynamic and pohl and n > _U1:
                for i in range(n):
                    c = frames[top, i]
                    kc = keyd[i]
                    for m in range(np.uint64(count[c])):
                        x = nbr[c, m]
                        e = np.uint64(cell[x])
                        free = _U1 ^ (e >> _U7)  # x unvisited: 1, else 0 (no branch)
                        checks += np.int64(np.uint64(count[x]) * free)
                        kc += (e - _U1) * free
                    j = i
                    while j > _U0 and keyd[j - _U1] > kc:
                        keyd[j] = keyd[j - _U1]
                        frames[top, j] = frames[top, j - _U1]
                        j -= _U1
                    keyd[j] = kc
                    frames[top, j] = c
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
            if dynamic:
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
            u = path[top]
            cell[u] ^= _VISITED
            if dynamic:
                for k in range(np.uint64(count[u])):
                    cell[nbr[u, k]] += 1
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
