"""Compiled N-Queens kernel: row-by-row backtracking on bit masks, in numba.

One queen per row, row by row, columns tried 0..n-1 (lowest bit first). The
columns and the two diagonals attacked in a row are uint64 bit masks (M.
Richards, "Backtracking algorithms in MCPL using bit patterns and
recursion", 1997), so a single mask operation finds the safe squares of a
row; the stack of rows is held in preallocated arrays (iterative, no
recursion), n <= 64.

Counters (metrics contract, ``docs/metrics.md``), those of plain
row-by-row backtracking whatever the bit tricks:

* ``nodes``: queens left on the board after their safety test (2,056 for
  n = 8 in ``count`` mode; D. E. Knuth, TAOCP 4B; OEIS A319235 less the
  empty root).
* ``checks``: squares tested for attack, one per column tried: each row
  entered tries its n columns, so an exhausted count makes
  ``n * (1 + nodes - all solutions)`` checks (15,720 for n = 8). A search
  stopped in a row has tested the columns up to and including the current one.
* ``dead_ends``: queens short of a complete placement with no safe square in
  the next row.
* ``backtracks``: queens taken back whose subtree held no solution.
* ``solutions``: solutions found (OEIS A000170); with ``unique``, solutions
  that are the lexicographically smallest of their 8 images under the
  symmetries of the square (OEIS A002562), the plain count going to
  ``extra["all_solutions"]``; the other counters are those of the full walk.
* ``max_depth``: most queens on the board.

The time budget works as in :mod:`.knights_kernel`: the kernel's state lives
in arrays and it pauses every :data:`PAUSE_EVERY` placements for Python to
read the clock.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from btlab.experiments.compiled._driver import BACKTRACK_LIMIT as _BACKTRACK_LIMIT
from btlab.experiments.compiled._driver import EXHAUSTED as _EXHAUSTED
from btlab.experiments.compiled._driver import NODE_LIMIT as _NODE_LIMIT
from btlab.experiments.compiled._driver import PAUSE_EVERY, drive, pause_mask  # noqa: F401 - PAUSE_EVERY: documented here
from btlab.experiments.compiled._driver import PAUSED as _PAUSED
from btlab.experiments.compiled._driver import SOLVED as _SOLVED
from btlab.experiments.core import Budget, SearchResult

try:  # LLVM cttz and ctlz intrinsics; numba has shipped them for years
    from numba.cpython.unsafe.numbers import leading_zeros as _clz
    from numba.cpython.unsafe.numbers import trailing_zeros as _ctz
except ImportError:  # pragma: no cover - a numba without them
    @njit(cache=True, nogil=True)
    def _ctz(x):
        k = 0
        while (x & np.uint64(1)) == 0:
            x >>= np.uint64(1)
            k += 1
        return k

    @njit(cache=True, nogil=True)
    def _clz(x):
        k = 0
        while (x & np.uint64(1 << 63)) == 0:
            x <<= np.uint64(1)
            k += 1
        return k

#: Largest n: the masks are uint64.
MAX_N = 64


P_N, P_FIRST, P_UNIQUE, P_CAP, P_PAUSE_MASK, P_BASE, P_SUBTREE, P_BTCAP = range(8)
N_PARAMS = 8
(S_NODES, S_BACKTRACKS, S_DEAD_ENDS, S_CHECKS, S_SOLUTIONS, S_MAX_DEPTH, S_ROW,
 S_CANONICAL, S_HAVE_SOLUTION) = range(9)
N_STATE = 9

_ONE = np.uint64(1)
_ZERO = np.uint64(0)
_AVAIL, _ATT, _LEFT, _RIGHT, _FOUND = range(5)  # columns of queens_run's table of rows


@njit(inline="always")
def _less(a, b, n):
    """a < b lexicographically (int64 arrays of length n)."""
    for i in range(n):
        if a[i] != b[i]:
            return a[i] < b[i]
    return False


@njit(inline="always")
def _is_canonical(s, n, inv, img):
    """True when the placement ``s`` (columns by row) is the smallest of its 8 images."""
    top = n - 1
    for r in range(n):
        inv[s[r]] = r
    for k in range(7):
        for r in range(n):
            if k == 0:
                v = top - s[r]              # mirror left-right
            elif k == 1:
                v = s[top - r]              # mirror top-bottom
            elif k == 2:
                v = top - s[top - r]        # rotate 180
            elif k == 3:
                v = inv[r]                  # transpose
            elif k == 4:
                v = top - inv[r]            # rotate 90 one way
            elif k == 5:
                v = inv[top - r]            # rotate 90 the other way
            else:
                v = top - inv[top - r]      # anti-transpose
            img[r] = v
        if _less(img, s, n):
            return False
    return True


@njit(inline="always")
def _untested(n, lo, row, avail, attacked, left, right, full, blocked):
    """Columns not yet tested in the open rows ``lo .. row`` (0 when ``lo > row``).

    A row below ``row`` has tested up to its queen's column (``attacked[r + 1] ^
    attacked[r]``); row ``row`` up to the last column it placed a queen on (the
    highest safe column no longer in ``avail``), or, ``blocked`` (a node limit),
    up to the column it was about to place one on.
    """
    u = 0
    for r in range(lo, row):
        ur = np.uint64(r)
        u += n - 1 - np.int64(_ctz(attacked[ur + _ONE] ^ attacked[ur]))
    if row >= lo:
        ur = np.uint64(row)
        if blocked:
            tested = np.int64(_ctz(avail[ur])) + 1
        else:
            placed = full & ~(attacked[ur] | left[ur] | right[ur]) & ~avail[ur]
            tested = 0 if placed == _ZERO else 64 - np.int64(_clz(placed))
        u += n - tested
    return u


@njit(cache=True, nogil=True)
def queens_run(params, state, avail, tried, attacked, left, right, place, found, best,
               scratch):
    """Run (or resume) the row-by-row search; return a status code.

    The loop keeps three masks per row and takes ``avail & -avail``; it counts
    no checks per placement: every placement short of n queens opens a row
    that tests n columns, less those not yet tested in the rows still open
    when the call returns (:func:`_untested`), which gives the reference's
    count whenever the search stops.

    Args:
        params: int64 (N_PARAMS,): n, first, unique, node cap, pause mask, base
            row, subtree flag, backtrack cap. The search ends when row ``base`` has no
            column left; for a subtree (flag 1) the squares tested in row
            ``base`` belong to the parent and are not counted.
        state: int64 (N_STATE,): counters and the current row; updated in place.
        avail: uint64 (n,): safe columns of each row not yet tried.
        tried: int64 (n,): unused (kept for the signature).
        attacked, left, right: uint64 (n,): columns and diagonals attacked in each row.
        place: int64 (n,): work space: a solution's columns by row.
        found: int64 (n,): the solution count when each row was entered (the
            queen of the row above is a backtrack when its row closes with the
            count unchanged).
        best: int64 (n,): receives the first solution.
        scratch: int64 (2, n): work space of the symmetry test.

    Returns:
        0 paused (resume by calling again), 1 solved, 2 exhausted, 3 node limit,
        4 backtrack limit.
    """
    n = params[P_N]
    first = params[P_FIRST] != 0
    unique = params[P_UNIQUE] != 0
    cap = params[P_CAP]
    pause_mask = params[P_PAUSE_MASK]
    base = params[P_BASE]
    subtree = params[P_SUBTREE] != 0
    btcap = params[P_BTCAP]
    full = (~_ZERO) >> np.uint64(64 - n)
    last = n - 1
    lo = base + 1 if subtree else base  # the open rows whose tests are counted here
    nodes = state[S_NODES]
    backtracks = state[S_BACKTRACKS]
    dead_ends = state[S_DEAD_ENDS]
    solutions = state[S_SOLUTIONS]
    max_depth = state[S_MAX_DEPTH]
    row = state[S_ROW]
    canonical = state[S_CANONICAL]
    have_solution = state[S_HAVE_SOLUTION]
    entry_nodes = nodes
    entry_solutions = solutions
    entry_untested = _untested(n, lo, row, avail, attacked, left, right, full, False)
    limit = cap  # the placement count at which to stop: the cap, or the next pause
    if pause_mask >= 0:
        limit = min(cap, (nodes | pause_mask) + 1)
    inv = scratch[0]
    img = scratch[1]
    # the per-row masks side by side in one local table (one base address for the
    # loop, the row's masks in one cache line): copied in here, out at the end
    rm = np.empty((n, 8), np.uint64)
    for r in range(n):
        rm[r, _AVAIL] = avail[r]
        rm[r, _ATT] = attacked[r]
        rm[r, _LEFT] = left[r]
        rm[r, _RIGHT] = right[r]
        rm[r, _FOUND] = np.uint64(found[r])
    usolutions = np.uint64(solutions)
    # countdowns: placements before the stop, backtracks before the budget's end
    todo = max(limit - nodes, 0)
    entry_todo = todo
    bt_left = max(btcap - backtracks, 0)
    entry_bt_left = bt_left
    # the row's untried safe columns, carried in a variable from one step to the next
    # (the table keeps a copy for the way back up)
    a = rm[np.uint64(row), _AVAIL]
    plain_solutions = have_solution != 0 and not first and not unique
    code = _EXHAUSTED
    while True:
        urow = np.uint64(row)  # an unsigned index: no negative-index wraparound test
        if a != _ZERO:
            if todo == 0:
                code = _NODE_LIMIT if limit >= cap else _PAUSED
                break
            todo -= 1
            bit = a & (~a + _ONE)
            a ^= bit
            rm[urow, _AVAIL] = a
            if row >= max_depth:
                max_depth = row + 1
            if row == last:
                usolutions += _ONE
                if plain_solutions:  # a count that needs nothing but the count
                    continue
                if have_solution == 0 or unique:
                    for r in range(last):
                        ur = np.uint64(r)
                        place[r] = np.int64(_ctz(rm[ur + _ONE, _ATT] ^ rm[ur, _ATT]))
                    place[last] = np.int64(_ctz(bit))
                if have_solution == 0:
                    have_solution = 1
                    for r in range(n):
                        best[r] = place[r]
                if first:
                    code = _SOLVED
                    break
                if unique and _is_canonical(place, n, inv, img):
                    canonical += 1
                plain_solutions = not unique
                continue
            cols = rm[urow, _ATT] | bit
            ldiag = ((rm[urow, _LEFT] | bit) << _ONE) & full
            rdiag = (rm[urow, _RIGHT] | bit) >> _ONE
            free = full & ~(cols | ldiag | rdiag)
            if free == _ZERO:
                # the next row tries its n columns, none safe: a dead end
                dead_ends += 1
                if bt_left == 0:
                    code = _BACKTRACK_LIMIT
                    break
                bt_left -= 1
                continue
            row += 1
            urow = np.uint64(row)
            rm[urow, _ATT] = cols
            rm[urow, _LEFT] = ldiag
            rm[urow, _RIGHT] = rdiag
            rm[urow, _AVAIL] = free
            rm[urow, _FOUND] = usolutions
            a = free
            continue
        # every column of this row is tried: take back the queen of the row above
        if row == base:
            break
        row -= 1
        a = rm[urow - _ONE, _AVAIL]
        if rm[urow, _FOUND] == usolutions:
            if bt_left == 0:
                code = _BACKTRACK_LIMIT
                break
            bt_left -= 1
    solutions = np.int64(usolutions)
    nodes += entry_todo - todo
    backtracks += entry_bt_left - bt_left
    for r in range(n):
        avail[r] = rm[r, _AVAIL]
        attacked[r] = rm[r, _ATT]
        left[r] = rm[r, _LEFT]
        right[r] = rm[r, _RIGHT]
        found[r] = np.int64(rm[r, _FOUND])
    exit_untested = 0
    if code != _EXHAUSTED:
        exit_untested = _untested(n, lo, row, avail, attacked, left, right, full,
                                  code == _NODE_LIMIT)
    state[S_NODES] = nodes
    state[S_BACKTRACKS] = backtracks
    state[S_DEAD_ENDS] = dead_ends
    state[S_CHECKS] += (entry_untested + n * (nodes - entry_nodes - (solutions - entry_solutions))
                        - exit_untested)
    state[S_SOLUTIONS] = solutions
    state[S_MAX_DEPTH] = max_depth
    state[S_ROW] = row
    state[S_CANONICAL] = canonical
    state[S_HAVE_SOLUTION] = have_solution
    return code


def run_queens(n: int, first: bool, unique: bool, budget: Budget,
               extra: dict | None = None, prefix: tuple[int, ...] = (),
               chunked: bool = False) -> SearchResult:
    """Run the kernel to the end (in chunks under a time limit); arguments already checked.

    ``prefix`` (columns of rows 0..d-1, d >= 1) makes it the subtree of the
    queen ``prefix[-1]`` in row d - 1, counted as
    :func:`btlab.experiments.queens.solve.search_subtree` counts it; empty: the whole search.

    Raises:
        ValueError: a prefix that is not a safe partial placement.
    """
    timed = budget.max_seconds is not None
    base = max(len(prefix) - 1, 0)
    params = np.array([n, int(first), int(unique), budget.node_cap,
                       pause_mask(timed, chunked), base, int(bool(prefix)),
                       budget.backtrack_cap],
                      dtype=np.int64)
    state = np.zeros(N_STATE, np.int64)
    full = (1 << n) - 1
    avail = np.zeros(n, np.uint64)
    tried = np.zeros(n, np.int64)
    attacked = np.zeros(n, np.uint64)
    left = np.zeros(n, np.uint64)
    right = np.zeros(n, np.uint64)
    place = np.zeros(n, np.int64)
    found = np.zeros(n, np.int64)
    best = np.zeros(n, np.int64)
    scratch = np.zeros((2, n), np.int64)
    if not prefix:
        avail[0] = full
    else:
        cols = ldiag = rdiag = 0
        for row, col in enumerate(prefix):
            bit = 1 << col
            if (cols | ldiag | rdiag) & bit:
                raise ValueError(f"prefix {list(prefix)} is not a safe placement: the queen of "
                                 f"row {row} is attacked")
            attacked[row], left[row], right[row] = cols, ldiag, rdiag
            place[row] = col
            cols, ldiag, rdiag = cols | bit, ((ldiag | bit) << 1) & full, (rdiag | bit) >> 1
        avail[base] = 1 << prefix[-1]
        tried[base] = prefix[-1] + 1  # the tests of the root's own row belong to the parent
        state[S_ROW] = base
    status = drive(queens_run, (params, state, avail, tried, attacked, left, right, place,
                                found, best, scratch), budget)
    solution = tuple(best.tolist()) if state[S_HAVE_SOLUTION] else None
    all_solutions = int(state[S_SOLUTIONS])
    extra = dict(extra or {})
    if unique:
        extra["all_solutions"] = all_solutions
    return SearchResult(status, int(state[S_NODES]), int(state[S_BACKTRACKS]),
                        int(state[S_DEAD_ENDS]), int(state[S_CHECKS]),
                        int(state[S_CANONICAL]) if unique else all_solutions,
                        int(state[S_MAX_DEPTH]), solution, extra)


def warm_up() -> None:
    """Compile (or load from the disk cache) the N-Queens kernel."""
    run_queens(6, False, True, Budget(None, 10.0))
    run_queens(4, True, False, Budget(1000, None))
