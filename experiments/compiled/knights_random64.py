"""The knight's-tour search with random ties on boards of at most 64 squares.

:func:`run64_random` is :func:`.knights_fast.run64_plain` and
:func:`.knights_fast.run64_warnsdorff` with tie-break ``random``: heuristic ``none``
shuffles each placement's listed candidates by Fisher-Yates, ``warnsdorff`` and
``static_degree`` order them by (degree, the next SplitMix64 output), drawing exactly what
:func:`.knights_kernel.knights_run` draws.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._driver import BACKTRACK_LIMIT as _BACKTRACK_LIMIT
from ._driver import EXHAUSTED as _EXHAUSTED
from ._driver import NODE_LIMIT as _NODE_LIMIT
from ._driver import PAUSED as _PAUSED
from ._driver import SOLVED as _SOLVED
from .knights_fast import (
    F_COUNT,
    F_NEXT,
    P_BASE,
    P_BTCAP,
    P_CAP,
    P_CLOSED,
    P_FIRST,
    P_HEURISTIC,
    P_PAUSE_MASK,
    P_START,
    P_TIE,
    S_BACKTRACKS,
    S_CHECKS,
    S_DEAD_ENDS,
    S_DEPTH,
    S_HAVE_TOUR,
    S_MAX_DEPTH,
    S_NODES,
    S_SOLUTIONS,
    S_SQ,
    popcount,
)
from .knights_shuffle64 import run64_shuffled

_ONE = np.uint64(1)
_ZERO = np.uint64(0)
_U64_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_U64_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_U64_MIX2 = np.uint64(0x94D049BB133111EB)
_U30, _U27, _U31 = np.uint64(30), np.uint64(27), np.uint64(31)


@njit(cache=True, nogil=True)
def run64_random(nbr8, count, nmask, params, state, rng, path, frames, found, tour):
    """:func:`.knights_kernel.knights_run` on a board of at most 64 squares, heuristic
    ``none``, ``warnsdorff`` or ``static_degree``, tie-break ``random`` (or
    ``move_order``).

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
    size = count.shape[0]
    tie = params[P_TIE]
    first = params[P_FIRST] != 0
    closed = params[P_CLOSED] != 0
    start = np.uint64(params[P_START])
    cap = params[P_CAP]
    pause_mask = params[P_PAUSE_MASK]
    base = params[P_BASE]
    btcap = params[P_BTCAP]
    nodes = state[S_NODES]
    backtracks = state[S_BACKTRACKS]
    dead_ends = state[S_DEAD_ENDS]
    checks = state[S_CHECKS]
    solutions = state[S_SOLUTIONS]
    max_depth = state[S_MAX_DEPTH]
    depth = state[S_DEPTH]
    sq = np.uint64(state[S_SQ])
    have_tour = state[S_HAVE_TOUR]
    rng_state = rng[0]
    vis = _ZERO
    for i in range(depth):
        vis |= _ONE << np.uint64(path[i])
    # the placement count at which to stop: the cap, or the next pause
    limit = cap
    if pause_mask >= 0:
        limit = min(cap, (nodes | pause_mask) + 1)
    keyd = np.empty(8, np.int64)
    keyt = np.empty(8, np.uint64)
    code = _EXHAUSTED
    while True:
        # -- place sq --
        if nodes >= limit:
            code = _NODE_LIMIT if nodes >= cap else _PAUSED
            break
        nodes += 1
        bit = _ONE << sq
        vis |= bit
        path[np.uint64(depth)] = sq
        depth += 1
        if depth > max_depth:
            max_depth = depth
        leaf_found = -1
        if depth == size:
            if not closed or (nmask[sq] >> start) & _ONE != _ZERO:
                solutions += 1
                if have_tour == 0:
                    have_tour = 1
                    for k in range(size):
                        tour[k] = path[k]
                if first:
                    code = _SOLVED
                    break
                leaf_found = 1
            else:
                dead_ends += 1
                leaf_found = 0
        else:
            around = count[sq]
            checks += around
            if nmask[sq] & ~vis == _ZERO:
                dead_ends += 1
                leaf_found = 0
            else:
                top = np.uint64(depth - 1)
                found[top] = solutions
                frames[top, F_NEXT] = 0
                # list the unvisited onward squares in move order, then order them
                n = 0
                for k in range(around):
                    c = nbr8[sq, k]
                    if (vis >> np.uint64(c)) & _ONE == _ZERO:
                        frames[top, n] = c
                        n += 1
                frames[top, F_COUNT] = n
                if heuristic != 0:
                    if n == 1:
                        if heuristic == 1:
                            checks += count[frames[top, 0]]
                    else:
                        for i in range(n):
                            c = frames[top, i]
                            if heuristic == 1:
                                checks += count[c]
                                deg = np.int64(popcount(nmask[c] & ~vis))
                            else:  # static_degree
                                deg = np.int64(count[c])
                            t = _ZERO
                            if tie == 1:  # the next SplitMix64 output, smallest first
                                z = rng_state + _U64_GOLDEN
                                rng_state = z
                                z = (z ^ (z >> _U30)) * _U64_MIX1
                                z = (z ^ (z >> _U27)) * _U64_MIX2
                                t = z ^ (z >> _U31)
                            j = i
                            while j > 0 and (keyd[j - 1] > deg or
                                             (keyd[j - 1] == deg and keyt[j - 1] > t)):
                                keyd[j] = keyd[j - 1]
                                keyt[j] = keyt[j - 1]
                                frames[top, j] = frames[top, j - 1]
                                j -= 1
                            keyd[j] = deg
                            keyt[j] = t
                            frames[top, j] = c
                else:
                    # none with random: Fisher-Yates, as experiments.knights_board.shuffle
                    for i in range(n - 1, 0, -1):
                        z = rng_state + _U64_GOLDEN
                        rng_state = z
                        z = (z ^ (z >> _U30)) * _U64_MIX1
                        z = (z ^ (z >> _U27)) * _U64_MIX2
                        z = z ^ (z >> _U31)
                        j = np.int64(z % np.uint64(i + 1))
                        swap = frames[top, i]
                        frames[top, i] = frames[top, j]
                        frames[top, j] = swap
        if leaf_found >= 0:
            # -- undo the leaf --
            vis ^= bit
            depth -= 1
            if leaf_found == 0:
                if backtracks >= btcap:
                    code = _BACKTRACK_LIMIT
                    break
                backtracks += 1
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
                if backtracks >= btcap:
                    code = _BACKTRACK_LIMIT
                    break
                backtracks += 1
        if code == _BACKTRACK_LIMIT:
            break
        if depth == base:
            break  # the whole tree is walked
    state[S_NODES] = nodes
    state[S_BACKTRACKS] = backtracks
    state[S_DEAD_ENDS] = dead_ends
    state[S_CHECKS] = checks
    state[S_SOLUTIONS] = solutions
    state[S_MAX_DEPTH] = max_depth
    state[S_DEPTH] = depth
    state[S_SQ] = np.int64(sq)
    state[S_HAVE_TOUR] = have_tour
    rng[0] = rng_state
    return code
