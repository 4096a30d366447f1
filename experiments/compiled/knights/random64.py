"""The knight's-tour search with random ties on boards of at most 64 squares.

:func:`run64_random` is :func:`.knights_kernel.knights_run` with tie-break
``random`` and heuristic ``warnsdorff`` or ``static_degree``: the candidates
ordered by (degree, the next SplitMix64 output), drawing exactly what
``knights_run`` draws, on the 64-bit visited mask of :mod:`.knights_fast`.
The key is one integer (the degree over the draw's 60 high bits; the 4 low bits
part equal keys only, almost never), and a lone candidate draws nothing, in a
loop of its own. Heuristic ``none`` (a shuffled move order at every placement)
has a loop of its own, :func:`.shuffle64.run64_shuffled` (the registry,
:mod:`.loops`, hands it those searches; called from here, it would be
compiled with this loop).
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
    P_START,
    budget_left,
    full_board,
    load_state,
    path_mask,
    popcount,
    splitmix,
    stop_code,
    store_state,
)

_ONE = np.uint64(1)
_ZERO = np.uint64(0)
_U60, _U4 = np.uint64(60), np.uint64(4)


@njit(cache=True, nogil=True)
def run64_random(nbr8, count, nmask, params, state, rng, path, frames, found, tour, keyd,
                 keyt):
    """:func:`.knights_kernel.knights_run` on a board of at most 64 squares, heuristic
    ``warnsdorff`` or ``static_degree``, tie-break ``random``.

    Args:
        nbr8: uint8 (size, 8); count: int32 (size,); nmask: uint64 (size,): the
            geometry (:func:`small_tables`).
        params, state, rng, path, frames, found, tour: as ``knights_run``'s
            (``found`` holds this search's own per-depth values).
        keyd, keyt: uint64 (8,), scratch: the candidates' keys (passed in, as
            :func:`.fast.run64_warnsdorff`'s).

    Returns:
        The status code, as ``knights_run``.
    """
    dynamic = params[P_HEURISTIC] == 1
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
            checks += count[sq]
            free = nmask[sq] & ~vis
            if free == _ZERO:
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
                if free & (free - _ONE) == _ZERO:
                    # one candidate: no draw (Warnsdorff still looks at its onward squares)
                    for k in range(count[sq]):
                        c = nbr8[sq, k]
                        if (vis >> np.uint64(c)) & _ONE == _ZERO:
                            if dynamic:
                                checks += count[c]
                            frames[top, 0] = c
                            n = 1
                else:
                    for k in range(count[sq]):
                        c = nbr8[sq, k]
                        if (vis >> np.uint64(c)) & _ONE == _ZERO:
                            if dynamic:
                                checks += count[c]
                                deg = popcount(nmask[c] & ~vis)
                            else:
                                deg = np.uint64(count[c])
                            # the next SplitMix64 output, smallest first
                            rng_state, t = splitmix(rng_state)
                            # (degree, t) in one key but t's 4 lowest bits, which
                            # decide only between equal keys (almost never)
                            p = (deg << _U60) | (t >> _U4)
                            j = n
                            while j > 0 and (keyd[j - 1] > p or
                                             (keyd[j - 1] == p and keyt[j - 1] > t)):
                                keyd[j] = keyd[j - 1]
                                keyt[j] = keyt[j - 1]
                                frames[top, j] = frames[top, j - 1]
                                j -= 1
                            keyd[j] = p
                            keyt[j] = t
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
    rng[0] = rng_state
    return code
