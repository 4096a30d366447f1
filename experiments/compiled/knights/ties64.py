"""The knight's-tour search by degree keys with deterministic ties, on at most 64 squares.

:func:`run64_keyed` is :func:`.knights_kernel.knights_run` for heuristic
``warnsdorff`` with tie-break ``pohl`` or ``roth``, and ``static_degree`` with
``move_order``, ``pohl`` or ``roth``: the same tree, order, counters, status,
tour, pauses and budgets, with the visited set in a 64-bit mask as in
:mod:`.knights_fast`. What makes it fast:

* each candidate's ordering key is one integer, ``degree << 16 | tie``, so the
  stable insertion compares one number (``tie`` < 2^16: at most 64 squares);
* what does not depend on the visited set is a table made on entry: the whole
  key for ``static_degree`` (static degree, and the static ``pohl`` sum or the
  ``roth`` distance), the ``roth`` tie for ``warnsdorff``;
* ``warnsdorff`` degrees are popcounts of ``neighbours & ~visited``; the
  ``pohl`` tie (the onward degrees as if the knight stood on the candidate)
  sums the popcounts over the candidate's unvisited neighbours, taken bit by bit.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

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
    path_mask,
    popcount,
    stop_code,
    store_state,
)

_ONE = np.uint64(1)
_ZERO = np.uint64(0)
_U16 = np.uint64(16)

# heuristic and tie-break codes of knights_kernel
_WARNSDORFF, _POHL, _ROTH = 1, 2, 3


@njit(cache=True, nogil=True)
def run64_keyed(nbr8, count, nmask, dist2, params, state, path, frames, found, tour, key,
                keyd):
    """:func:`.knights_kernel.knights_run` on a board of at most 64 squares, heuristic
    ``warnsdorff`` (tie-break ``pohl`` or ``roth``) or ``static_degree`` (``move_order``,
    ``pohl`` or ``roth``).

    Args:
        nbr8: uint8 (size, 8); count: int32 (size,); nmask: uint64 (size,): the
            geometry (:func:`.knights_fast.small_tables`).
        dist2: int64 (size,): 4 x the squared distance to the centre (``roth``;
            ``params[P_MAXD2]`` its largest value).
        params, state, path, frames, found, tour: as ``knights_run``'s (``found``
            holds this search's own per-depth values, as :mod:`.knights_fast`).
        key: uint64 (size,), scratch: each square's key but its degree, made on entry;
            keyd: uint64 (8,), scratch: the candidates' keys (both passed in, as
            :func:`.fast.run64_warnsdorff`'s).

    Returns:
        The status code, as ``knights_run``.
    """
    size = count.shape[0]
    dynamic = params[P_HEURISTIC] == _WARNSDORFF
    tie = params[P_TIE]
    pohl = dynamic and tie == _POHL
    first = params[P_FIRST] != 0
    closed = params[P_CLOSED] != 0
    start = np.uint64(params[P_START])
    cap = params[P_CAP]
    base = params[P_BASE]
    maxd2 = params[P_MAXD2]
    # the part of each square's key that the visited set does not change
    for c in range(size):
        t = 0
        if tie == _ROTH:
            t = maxd2 - dist2[c]
        elif tie == _POHL and not dynamic:
            for k in range(count[c]):
                t += count[nbr8[c, k]]
        if dynamic:
            key[c] = np.uint64(t)
        else:
            key[c] = (np.uint64(count[c]) << _U16) | np.uint64(t)
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
                # pohl looks further only when there is a choice (as the reference)
                lookahead = pohl and (free & (free - _ONE)) != _ZERO
                n = 0
                if lookahead:
                    for k in range(count[sq]):
                        c = nbr8[sq, k]
                        uc = np.uint64(c)
                        if (vis >> uc) & _ONE == _ZERO:
                            checks += count[c]
                            onward = nmask[c] & ~vis
                            kc = popcount(onward) << _U16
                            # as if the knight stood on c: its unvisited neighbours'
                            # unvisited neighbours, c visited too
                            seen = vis | (_ONE << uc)
                            while onward != _ZERO:
                                x = trailing_zeros(onward)
                                onward &= onward - _ONE
                                checks += count[x]
                                kc += popcount(nmask[x] & ~seen)
                            j = n
                            while j > 0 and keyd[j - 1] > kc:
                                keyd[j] = keyd[j - 1]
                                frames[top, j] = frames[top, j - 1]
                                j -= 1
                            keyd[j] = kc
                            frames[top, j] = c
                            n += 1
                elif dynamic:
                    for k in range(count[sq]):
                        c = nbr8[sq, k]
                        if (vis >> np.uint64(c)) & _ONE == _ZERO:
                            checks += count[c]
                            kc = (popcount(nmask[c] & ~vis) << _U16) | key[c]
                            j = n
                            while j > 0 and keyd[j - 1] > kc:
                                keyd[j] = keyd[j - 1]
                                frames[top, j] = frames[top, j - 1]
                                j -= 1
                            keyd[j] = kc
                            frames[top, j] = c
                            n += 1
                else:
                    for k in range(count[sq]):
                        c = nbr8[sq, k]
                        if (vis >> np.uint64(c)) & _ONE == _ZERO:
                            kc = key[c]
                            j = n
                            while j > 0 and keyd[j - 1] > kc:
                                keyd[j] = keyd[j - 1]
                                frames[top, j] = frames[top, j - 1]
                                j -= 1
                            keyd[j] = kc
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
