"""The general loop of the knight's-tour kernel: every heuristic, tie-break and board.

:func:`run_general` is the loop of :func:`.kernel.knights_run` that takes the
searches no specialised loop takes (larger boards with random ties, and any
search without their byte or mask tables); it walks the reference tree of
:func:`btlab.experiments.knights.solve._search_iterative` with its counters
(see :mod:`.kernel`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from btlab.experiments.compiled._driver import BACKTRACK_LIMIT as _BACKTRACK_LIMIT
from btlab.experiments.compiled._driver import EXHAUSTED as _EXHAUSTED
from btlab.experiments.compiled._driver import NODE_LIMIT as _NODE_LIMIT
from btlab.experiments.compiled._driver import PAUSED as _PAUSED
from btlab.experiments.compiled._driver import SOLVED as _SOLVED
from btlab.experiments.compiled._steps import (
    F_COUNT,
    F_NEXT,
    P_BASE,
    P_BTCAP,
    P_CAP,
    P_CLOSED,
    P_FIRST,
    P_HEURISTIC,
    P_MAXD2,
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
    load_state,
    splitmix,
)
from btlab.experiments.compiled.knights.shuffle64 import mod_small

_U60, _U4 = np.uint64(60), np.uint64(4)
_U64_ZERO = np.uint64(0)


@njit(cache=True, nogil=True)
def run_general(nbr, count, dist2, params, state, rng, visited, path, frames, found, tour):
    """The general loop of :func:`knights_run` (larger boards with random ties, and any
    search without the byte or mask tables of the specialised loops); arguments as
    :func:`knights_run`'s."""
    heuristic = params[P_HEURISTIC]
    tie = params[P_TIE]
    if heuristic == 0 and tie != 1:
        tie = 0  # without a heuristic every tie-break but random keeps the move order
    size = nbr.shape[0]
    first = params[P_FIRST] != 0
    closed = params[P_CLOSED] != 0
    start = params[P_START]
    cap = params[P_CAP]
    pause_mask = params[P_PAUSE_MASK]
    maxd2 = params[P_MAXD2]
    base = params[P_BASE]
    btcap = params[P_BTCAP]
    nodes = state[S_NODES]
    backtracks = state[S_BACKTRACKS]
    dead_ends, checks, solutions, max_depth, depth, sq, have_tour = load_state(state)
    rng_state = rng[0]
    entry_nodes = nodes
    keyd = np.empty(8, np.uint64)
    keyt = np.empty(8, np.uint64)
    code = _EXHAUSTED
    while True:
        # -- place sq --
        if nodes >= cap:
            code = _NODE_LIMIT
            break
        if (nodes & pause_mask) == 0 and nodes != entry_nodes:
            code = _PAUSED
            break
        nodes += 1
        visited[sq] = 1
        path[np.uint64(depth)] = sq
        depth += 1
        if depth > max_depth:
            max_depth = depth
        leaf_found = -1
        if depth == size:
            ok = True
            if closed:
                ok = False
                for k in range(count[sq]):
                    if nbr[sq, k] == start:
                        ok = True
            if ok:
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
            # -- list the unvisited onward squares of sq into frames[top, :n] and
            # order them as btlab.experiments.knights.solve.make_orderer does: by (degree,
            # tie, move index), stable. Written out here rather than called:
            # a call passing arrays costs reference counting per placement. --
            top = np.uint64(depth - 1)
            around = count[sq]
            checks += around
            n = 0
            for k in range(around):
                c = nbr[sq, k]
                if visited[c] == 0:
                    frames[top, n] = c
                    n += 1
            if heuristic != 0 and n == 1:
                if heuristic == 1:
                    # Warnsdorff still looks at the lone candidate's onward squares
                    checks += count[frames[top, 0]]
            elif heuristic != 0 and n > 1:
                dynamic = heuristic == 1
                for i in range(n):
                    c = frames[top, i]
                    if dynamic:
                        onward = count[c]
                        checks += onward
                        deg = 0
                        for k in range(onward):
                            if visited[nbr[c, k]] == 0:
                                deg += 1
                    else:
                        deg = count[c]
                    if tie == 0:      # move_order
                        t = _U64_ZERO
                    elif tie == 1:    # random: the next SplitMix64 output, smallest first
                        rng_state, t = splitmix(rng_state)
                    elif tie == 3:    # roth: farthest from the centre first
                        t = np.uint64(maxd2 - dist2[c])
                    else:             # pohl: sum of the onward degrees as if the knight stood on c
                        s = 0
                        if dynamic:
                            visited[c] = 1
                            for k in range(count[c]):
                                x = nbr[c, k]
                                if visited[x] == 0:
                                    onward_x = count[x]
                                    checks += onward_x
                                    for j in range(onward_x):
                                        if visited[nbr[x, j]] == 0:
                                            s += 1
                            visited[c] = 0
                        else:
                            for k in range(count[c]):
                                s += count[nbr[c, k]]
                        t = np.uint64(s)
                    # insertion after every earlier candidate whose key is <= (deg, t):
                    # first by deg over t's 60 high bits (a random t: nearly always decides)
                    p = (np.uint64(deg) << _U60) | (t >> _U4)
                    j = i
                    while j > 0 and (keyd[j - 1] > p or (keyd[j - 1] == p and keyt[j - 1] > t)):
                        keyd[j] = keyd[j - 1]
                        keyt[j] = keyt[j - 1]
                        frames[top, j] = frames[top, j - 1]
                        j -= 1
                    keyd[j] = p
                    keyt[j] = t
                    frames[top, j] = c
            elif tie == 1 and n > 1:
                # none with random: Fisher-Yates, as btlab.experiments.knights.ordering.shuffle
                for i in range(n - 1, 0, -1):
                    rng_state, z = splitmix(rng_state)
                    j = mod_small(z, i + 1)
                    swap = frames[top, i]
                    frames[top, i] = frames[top, j]
                    frames[top, j] = swap
            if n > 0:
                frames[top, F_COUNT] = n
                frames[top, F_NEXT] = 0
                found[top] = 0
            else:
                dead_ends += 1
                leaf_found = 0
        if leaf_found >= 0:
            # -- undo the leaf --
            visited[sq] = 0
            depth -= 1
            if leaf_found == 0:
                if backtracks >= btcap:
                    code = _BACKTRACK_LIMIT
                    break
                backtracks += 1
            if depth == base:
                break  # the root square itself was a leaf
            found[np.uint64(depth - 1)] += leaf_found
        # -- the next child to place, undoing exhausted frames --
        while depth > base:
            top = np.uint64(depth - 1)
            i = frames[top, F_NEXT]
            if i < frames[top, F_COUNT]:
                frames[top, F_NEXT] = i + 1
                sq = np.uint64(frames[top, i])
                break
            f = found[top]
            depth -= 1
            visited[path[np.uint64(depth)]] = 0
            if f == 0:
                if backtracks >= btcap:
                    code = _BACKTRACK_LIMIT
                    break
                backtracks += 1
            if depth > base:
                found[np.uint64(depth - 1)] += f
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
