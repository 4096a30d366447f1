"""The steps the knight's-tour loops share, inlined into each: their array layout,
entry and exit, the budgets, a full board, the SplitMix64 draw.

Every loop of :mod:`btlab.experiments.compiled.knights` reads its parameters and
counters from the same int64 arrays on entry (:data:`P_CAP` ..., :data:`S_NODES`
...), counts down to its next stop (:func:`budget_left`: the node cap or the next
pause) and writes its counters back on return (:func:`store_state`). The
helpers here are ``@njit(inline="always")``: numba copies each into the loop
that calls it before typing it, so a step costs the loop no call at run time
and no compile of its own. (A called ``@njit`` function is a dispatcher that numba
compiles, wraps for Python and caches on its own: 0.1 to 0.2 s each on a cold
cache, paid before a first trial; and a call that passes arrays costs reference
counting per placement.) Nothing here is called from Python.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import intrinsic

from btlab.experiments.compiled._driver import BACKTRACK_LIMIT as _BACKTRACK_LIMIT
from btlab.experiments.compiled._driver import NODE_LIMIT as _NODE_LIMIT
from btlab.experiments.compiled._driver import PAUSED as _PAUSED
from btlab.experiments.compiled._driver import SOLVED as _SOLVED

# the parameter, state and frame layout of knights.kernel (kept equal there)
P_HEURISTIC, P_TIE, P_FIRST, P_CLOSED, P_START, P_CAP, P_PAUSE_MASK, P_MAXD2, P_BASE = range(9)
P_BTCAP = 9
(S_NODES, S_BACKTRACKS, S_DEAD_ENDS, S_CHECKS, S_SOLUTIONS, S_MAX_DEPTH, S_DEPTH, S_SQ,
 S_HAVE_TOUR) = range(9)
F_COUNT, F_NEXT = 8, 9

_ONE = np.uint64(1)
_ZERO = np.uint64(0)
_U64_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_U64_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_U64_MIX2 = np.uint64(0x94D049BB133111EB)
_U30, _U27, _U31 = np.uint64(30), np.uint64(27), np.uint64(31)


@intrinsic
def popcount(typingctx, x):
    """The number of set bits of a uint64 (LLVM ``ctpop``)."""
    if x != types.uint64:
        return None
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return sig, codegen


@njit(inline="always")
def load_state(state):
    """A loop's counters and resume point on entry: ``(dead_ends, checks, solutions,
    max_depth, depth, sq, have_tour)``, ``sq`` (the square to place next) a uint64."""
    return (state[S_DEAD_ENDS], state[S_CHECKS], state[S_SOLUTIONS], state[S_MAX_DEPTH],
            state[S_DEPTH], np.uint64(state[S_SQ]), state[S_HAVE_TOUR])


@njit(inline="always")
def budget_left(params, state):
    """The budgets of one call of a count-down loop, from its parameters and state.

    Returns:
        ``(limit, todo, bt_left)``: the placement count at which this call
        stops (the node cap, or the next pause when ``params[P_PAUSE_MASK]``
        is set), the placements before it, and the backtracks before the end
        of the backtrack budget (all int64).
    """
    nodes = state[S_NODES]
    cap = params[P_CAP]
    limit = cap
    if params[P_PAUSE_MASK] >= 0:
        limit = min(cap, (nodes | params[P_PAUSE_MASK]) + 1)
    return limit, max(limit - nodes, 0), max(params[P_BTCAP] - state[S_BACKTRACKS], 0)


@njit(inline="always")
def stop_code(limit, cap):
    """The code of a loop out of placements for this call: the node cap, or a pause."""
    return _NODE_LIMIT if limit >= cap else _PAUSED


@njit(inline="always")
def path_mask(path, depth):
    """The visited set of the first ``depth`` squares of ``path`` as a uint64 mask."""
    vis = _ZERO
    for i in range(depth):
        vis |= _ONE << np.uint64(path[i])
    return vis


#: :func:`full_board`'s code for "go on": the placement is undone as a leaf.
GO = -1


@njit(inline="always")
def full_board(is_tour, first, solutions, have_tour, dead_ends, bt_left, path, tour):
    """Count a placement that fills the board (``path`` holds every square).

    Args:
        is_tour: whether the path is a tour (a closed tour also needs its last
            square a knight's move from the start); otherwise it is a dead end.
        first: stop at the first tour.
        solutions, have_tour, dead_ends, bt_left: the loop's counters, the flag
            that ``tour`` holds a tour, and the backtracks left in the budget.
        path: the squares in order; tour: receives ``path`` at the first tour.

    Returns:
        ``(stop, solutions, have_tour, dead_ends, bt_left)``: ``stop`` is
        ``SOLVED`` (the first tour, in first mode), ``BACKTRACK_LIMIT`` (a dead
        end past the backtrack budget) or :data:`GO` (undo the placement as a leaf).
    """
    stop = GO
    if is_tour:
        solutions += 1
        if have_tour == 0:
            have_tour = 1
            for k in range(path.shape[0]):
                tour[k] = path[k]
        if first:
            stop = _SOLVED
    else:
        dead_ends += 1
        if bt_left == 0:
            stop = _BACKTRACK_LIMIT
        else:
            bt_left -= 1
    return stop, solutions, have_tour, dead_ends, bt_left


@njit(inline="always")
def splitmix(rng_state):
    """The next output of the SplitMix64 stream of
    :class:`btlab.experiments.knights.ordering.SplitMix64`: ``(new state, output)``,
    both uint64."""
    z = rng_state + _U64_GOLDEN
    rng_state = z
    z = (z ^ (z >> _U30)) * _U64_MIX1
    z = (z ^ (z >> _U27)) * _U64_MIX2
    return rng_state, z ^ (z >> _U31)


@njit(inline="always")
def store_state(state, placed, backtracked, dead_ends, checks, solutions, max_depth, depth, sq,
                have_tour):
    """Write a count-down loop's counters and resume point back into ``state`` (in place):
    ``placed`` and ``backtracked`` are this call's own placements and backtracks, the
    other counters their running totals."""
    state[S_NODES] += placed
    state[S_BACKTRACKS] += backtracked
    state[S_DEAD_ENDS] = dead_ends
    state[S_CHECKS] = checks
    state[S_SOLUTIONS] = solutions
    state[S_MAX_DEPTH] = max_depth
    state[S_DEPTH] = depth
    state[S_SQ] = np.int64(sq)
    state[S_HAVE_TOUR] = have_tour


# Called (not inlined) copies of three steps for the first-mode loops
# (:mod:`.knights.first`), the tightest: inlined there, they made those loops 3 to 5 %
# slower (8 x 8 from (0, 0) to the tour, CPU time, medians of 4 alternating
# processes; called: 1.00x), though they run outside the loop. Called, each is a
# dispatcher of its own that numba compiles once and caches, and LLVM inlines.
budget_left_called = njit(cache=True, nogil=True)(budget_left.py_func)
path_mask_called = njit(cache=True, nogil=True)(path_mask.py_func)
store_state_called = njit(cache=True, nogil=True)(store_state.py_func)
