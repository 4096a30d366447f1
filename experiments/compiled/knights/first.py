"""Plain move order to the first tour: the loops of ``mode: first`` without a heuristic.

:func:`run64_first` (at most 64 squares) and :func:`runwide_first` (any board)
walk exactly the tree of :func:`.fast.run64_plain` and :func:`.wide.runwide_plain`
in first mode (the same order, counters, status, tour, pauses and budgets);
the loop registry (:mod:`.loops`) hands those searches to them. They keep only
what a first-mode search needs:

* no solution count per frame: before the first tour no solution exists and
  at the first tour the search ends, so every undone placement is a
  backtrack (a dead end is one too);
* the stack is the path (a square per depth) and the next move index per
  depth, one int64 each in ``path`` and ``found`` (contiguous, one index per
  access), the visited set a 64-bit mask (:func:`run64_first`) or a byte per
  square (:func:`runwide_first`);
* the next child is found by a tight skip over the visited onward squares in
  move order, the one test of the inner loop; the deepest placement is kept
  on push (``max_depth``), never in the skip;
* a node cap and a pause share one count-down per placement; the registry
  always sets a pause (:data:`._driver.CHUNK_EVERY` placements, about 10 ms)
  so that a Ctrl-C or SIGTERM is seen between two calls within a second.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from btlab.experiments.compiled._driver import BACKTRACK_LIMIT as _BACKTRACK_LIMIT
from btlab.experiments.compiled._driver import EXHAUSTED as _EXHAUSTED
from btlab.experiments.compiled._driver import SOLVED as _SOLVED
from btlab.experiments.compiled._steps import (
    P_BASE,
    P_CAP,
    P_CLOSED,
    P_START,
    budget_left_called,
    load_state,
    path_mask_called,
    popcount,
    stop_code,
    store_state_called,
)

_ONE = np.uint64(1)
_ZERO = np.uint64(0)
_THREE = np.uint64(3)


#: A square's row in :func:`row_table`: 16 uint64 slots.
ROW = 16
#: The slots of a row that hold the square's neighbour mask and its neighbour count.
SLOT_MASK, SLOT_COUNT = 14, 15


def row_table(nbr8: np.ndarray, count: np.ndarray, nmask: np.ndarray) -> np.ndarray:
    """The board of :func:`run64_first` in one uint64 array, :data:`ROW` slots a square.

    Square ``s``'s row, from ``s * ROW``: the bit of each on-board neighbour in
    move order (``1 << square``), a 0 after the last (the skip over visited
    neighbours stops there with no bound to test), its neighbour mask
    (slot :data:`SLOT_MASK`) and neighbour count (slot :data:`SLOT_COUNT`). One
    table, one base address: the loop keeps every value it reads in registers.
    """
    size = count.shape[0]
    table = np.zeros(size * ROW, np.uint64)
    for sq in range(size):
        for k in range(int(count[sq])):
            table[sq * ROW + k] = 1 << int(nbr8[sq, k])
        table[sq * ROW + SLOT_MASK] = nmask[sq]
        table[sq * ROW + SLOT_COUNT] = count[sq]
    return table


_SHIFT = np.uint64(4)  # log2(ROW)
_U_MASK, _U_COUNT = np.uint64(SLOT_MASK), np.uint64(SLOT_COUNT)


@njit(cache=True, nogil=True)
def run64_first(table, params, state, path, stack, tour):
    """Heuristic ``none``, ties by move order, ``mode: first``, at most 64 squares.

    Args:
        table: uint64 (size * ROW,), the board (:func:`row_table`).
        params, state, path, tour: as :func:`.kernel.knights_run`'s (``path``
            is written back on return: the loop keeps its squares in ``stack``).
        stack: int64 (size,): per depth, the slot of the next move to try,
            ``square * ROW + move index`` (so the square is ``slot >> 4``), kept
            across calls.

    Returns:
        The status code, as :func:`.kernel.knights_run`.
    """
    size = path.shape[0]
    closed = params[P_CLOSED] != 0
    start = np.uint64(params[P_START])
    cap = params[P_CAP]
    base = params[P_BASE]
    dead_ends, checks, solutions, max_depth, depth, sq, have_tour = load_state(state)
    vis = path_mask_called(path, depth)
    limit, todo, bt_left = budget_left_called(params, state)
    entry_todo, entry_bt_left = todo, bt_left
    code = _EXHAUSTED
    while True:
        # -- place sq --
        if todo == 0:
            code = stop_code(limit, cap)
            break
        todo -= 1
        vis |= _ONE << sq
        row = sq << _SHIFT
        stack[np.uint64(depth)] = np.int64(row)
        depth += 1
        if depth > max_depth:
            max_depth = depth
        if table[row + _U_MASK] & ~vis == _ZERO:
            # a leaf: a full board (a tour, or a dead end when closed) or a dead end
            if depth == size:
                if not closed or (table[row + _U_MASK] >> start) & _ONE != _ZERO:
                    solutions += 1
                    have_tour = 1
                    for k in range(base, size):
                        path[k] = np.uint32(stack[k] >> 4)
                    for k in range(size):
                        tour[k] = path[k]
                    code = _SOLVED
                    break
            else:
                checks += np.int64(table[row + _U_COUNT])
            dead_ends += 1
            if bt_left == 0:
                code = _BACKTRACK_LIMIT
                break
            bt_left -= 1
            vis ^= _ONE << sq
            depth -= 1
            if depth == base:
                break  # the root square itself was a leaf
        else:
            checks += np.int64(table[row + _U_COUNT])
        # -- the next child to place, undoing exhausted frames --
        while True:
            top = np.uint64(depth - 1)
            k = np.uint64(stack[top])
            while vis & table[k] != _ZERO:  # the row's 0 after its last move ends it
                k += _ONE
            bit = table[k]
            if bit != _ZERO:
                stack[top] = np.int64(k + _ONE)
                sq = np.uint64(popcount(bit - _ONE))
                break
            depth -= 1
            vis ^= _ONE << (k >> _SHIFT)
            if bt_left == 0:
                code = _BACKTRACK_LIMIT
                break
            bt_left -= 1
            if depth == base:
                break
        if code == _BACKTRACK_LIMIT or depth == base:
            break
    if code != _SOLVED:
        for k in range(base, depth):
            path[k] = np.uint32(stack[k] >> 4)
    store_state_called(state, entry_todo - todo, entry_bt_left - bt_left, dead_ends, checks,
                       solutions, max_depth, depth, sq, have_tour)
    return code


#: A square's row in :func:`wide_table`: its neighbours, a sentinel, its count.
WIDE_ROW = 10
_U_WIDE_ROW = np.uint64(WIDE_ROW)
_U_WIDE_COUNT = np.uint64(WIDE_ROW - 1)


def wide_table(nbr: np.ndarray, count: np.ndarray) -> np.ndarray:
    """The board of :func:`runwide_first` in one uint32 array, :data:`WIDE_ROW` slots a
    square: its on-board neighbours in move order, then the sentinel ``size`` (a square
    off the board that is never visited: the skip over visited neighbours stops there
    with no bound to test), and in the last slot its neighbour count."""
    size = count.shape[0]
    table = np.zeros((size, WIDE_ROW), np.uint32)
    table[:, :8] = nbr
    table[np.arange(size), count] = size
    table[:, WIDE_ROW - 1] = count
    return table.reshape(size * WIDE_ROW)


@njit(cache=True, nogil=True)
def runwide_first(table, params, state, visited, path, stack, tour):
    """Heuristic ``none``, ties by move order, ``mode: first``, on any board.

    Args:
        table: uint32 (size * WIDE_ROW,), the board (:func:`wide_table`).
        params, state, path, tour: as :func:`.kernel.knights_run`'s (``path``
            is written back on return).
        visited: uint8 (size + 1,): the visited flags, and the sentinel's 0.
        stack: int64 (size,): per depth, the slot of the next move to try
            (``square * WIDE_ROW + move index``), kept across calls.

    Returns:
        The status code, as :func:`.kernel.knights_run`.
    """
    size = path.shape[0]
    closed = params[P_CLOSED] != 0
    start = np.uint32(params[P_START])
    cap = params[P_CAP]
    base = params[P_BASE]
    dead_ends, checks, solutions, max_depth, depth, sq, have_tour = load_state(state)
    end = np.uint32(size)
    limit, todo, bt_left = budget_left_called(params, state)
    entry_todo, entry_bt_left = todo, bt_left
    code = _EXHAUSTED
    while True:
        # -- place sq --
        if todo == 0:
            code = stop_code(limit, cap)
            break
        todo -= 1
        visited[sq] = 1
        depth += 1
        if depth > max_depth:
            max_depth = depth
        row = sq * _U_WIDE_ROW
        k = row
        while visited[table[k]] != 0:  # the sentinel is never visited
            k += _ONE
        c = table[k]
        if c != end:  # the first unvisited onward square, found by the dead-end test
            checks += np.int64(table[row + _U_WIDE_COUNT])
            stack[np.uint64(depth - 1)] = np.int64(k + _ONE)
            sq = np.uint64(c)
            continue
        if depth == size:
            ok = not closed
            if closed:
                for j in range(table[row + _U_WIDE_COUNT]):
                    if table[row + np.uint64(j)] == start:
                        ok = True
            if ok:
                solutions += 1
                have_tour = 1
                for j in range(base, size - 1):
                    path[j] = np.uint32(np.uint64(stack[j]) // _U_WIDE_ROW)
                path[size - 1] = np.uint32(sq)
                for j in range(size):
                    tour[j] = path[j]
                code = _SOLVED
                break
        else:
            checks += np.int64(table[row + _U_WIDE_COUNT])
        dead_ends += 1
        if bt_left == 0:
            code = _BACKTRACK_LIMIT
            break
        bt_left -= 1
        visited[sq] = 0
        depth -= 1
        if depth == base:
            break  # the root square itself was a leaf
        # -- the next child to place, undoing exhausted frames --
        while True:
            top = np.uint64(depth - 1)
            k = np.uint64(stack[top])
            while visited[table[k]] != 0:
                k += _ONE
            c = table[k]
            if c != end:
                stack[top] = np.int64(k + _ONE)
                sq = np.uint64(c)
                break
            depth -= 1
            visited[k // _U_WIDE_ROW] = 0
            if bt_left == 0:
                code = _BACKTRACK_LIMIT
                break
            bt_left -= 1
            if depth == base:
                break
        if code == _BACKTRACK_LIMIT or depth == base:
            break
    if code != _SOLVED:
        for j in range(base, depth):
            path[j] = np.uint32(np.uint64(stack[j]) // _U_WIDE_ROW)
    store_state_called(state, entry_todo - todo, entry_bt_left - bt_left, dead_ends, checks,
                       solutions, max_depth, depth, sq, have_tour)
    return code
