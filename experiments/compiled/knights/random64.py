"""The knight's-tour search with random ties on boards of at most 64 squares.

:func:`run64_random` is :func:`.knights_kernel.knights_run` with tie-break
``random`` and heuristic ``warnsdorff`` or ``static_degree``: the candidates
ordered by (degree, the next SplitMix64 output), drawing exactly what
``knights_run`` draws, on the 64-bit visited mask of :mod:`.knights_fast`.
The key is one integer (the degree over the draw's 60 high bits; the 4 low bits
part equal keys only, almost never), and a lone candidate draws nothing, in a
loop of its own. Heuristic ``none`` (a shuffled move order at every placement)
goes on to :func:`.knights_shuffle64.run64_shuffled`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from btlab.experiments.compiled._driver import BACKTRACK_LIMIT as _BACKTRACK_LIMIT
from btlab.experiments.compiled._driver import EXHAUSTED as _EXHAUSTED
from btlab.experiments.compiled._driver import NODE_LIMIT as _NODE_LIMIT
from btlab.experiments.compiled._driver import PAUSED as _PAUSED
from btlab.experiments.compiled.knights.fast import (
    F_COUNT,
    F_NEXT,
    GO,
    P_BASE,
    P_CAP,
    P_CLOSED,
    P_FIRST,
    P_HEURISTIC,
    P_START,
    S_CHECKS,
    S_DEAD_ENDS,
    S_DEPTH,
    S_HAVE_TOUR,
    S_MAX_DEPTH,
    S_SOLUTIONS,
    S_SQ,
    budget_left,
    full_board,
    path_mask,
    popcount,
    store_state,
)
from btlab.experiments.compiled.knights.shuffle64 import run64_shuffled

_ONE = np.uint64(1)
_ZERO = np.uint64(0)
_U64_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_U64_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_U64_MIX2 = np.uint64(0x94D049BB133111EB)
_U30, _U27, _U31 = np.uint64(30), np.uint64(27), np.uint64(31)
_U60, _U4 = np.uint64(60), np.uint64(4)


@njit(cache=True, nogil=True)
def run64_random(nbr8, count, nmask, params, state, rng, path, frames, found, tour):
    """:func:`.knights_kernel.knights_run` on a board of at most 64 squares, heuristic
    ``none``, ``warnsdorff`` or ``static_degree``, tie-break ``random``.

    Args:
        nbr8: uint8 (size, 8); count: int32 (size,); nmask: uint64 (size,): the
            geometry (:func:`small_tables`).
        params, state, rng, path, frames, found, tour: as ``knights_run``'s
            (``found`` holds this search's own per-depth values).

    Returns:
        The status code, as ``knights_run``.
    """
    heuristic = params[P_HEURISTIC]
    if heuristic == 0:
        return run64_shuffled(nbr8, count, nmask, params, state, rng, path, frames, found, tour)
    dynamic = heuristic == 1
    size = count.shape[0]
    first = params[P_FIRST] != 0
    closed = params[P_CLOSED] != 0
    start = np.uint64(params[P_START])
    cap = params[P_CAP]
    base = params[P_BASE]
    dead_ends = state[S_DEAD_ENDS]
    checks = state[S_CHECKS]
    solutions = state[S_SOLUTIONS]
    max_depth = state[S_MAX_DEPTH]
    depth = state[S_DEPTH]
    sq = np.uint64(state[S_SQ])
    have_tour = state[S_HAVE_TOUR]
    rng_state = rng[0]
    vis = path_mask(path, depth)
    limit, todo, bt_left = budget_left(params, state)  # placements, backtracks before the stop
    entry_todo, entry_bt_left = todo, bt_left
    keyp = np.empty(8, np.uint64)
    keyt = np.empty(8, np.uint64)
    code = _EXHAUSTED
    while True:
        # -- place sq --
        if todo == 0:
            code = _NODE_LIMIT if limit >= cap else _PAUSED
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
                            z = rng_state + _U64_GOLDEN
                            rng_state = z
                            z = (z ^ (z >> _U30)) * _U64_MIX1
                            z = (z ^ (z >> _U27)) * _U64_MIX2
                            t = z ^ (z >> _U31)
                            # (degree, t) in one key but t's 4 lowest bits, which
                            # decide only between equal keys (almost never)
                            p = (deg << _U60) | (t >> _U4)
                            j = n
                            while j > 0 and (keyp[j - 1] > p or
                                             (keyp[j - 1] == p and keyt[j - 1] > t)):
                                keyp[j] = keyp[j - 1]
                                keyt[j] = keyt[j - 1]
                                frames[top, j] = frames[top, j - 1]
                                j -= 1
                            keyp[j] = p
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
