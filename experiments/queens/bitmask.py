"""N-Queens by backtracking on bit masks (the ``bitmask`` strategy).

The row-by-row tree of :mod:`btlab.experiments.queens.backtrack`, with the attacked
columns and diagonals held as bit masks and, in ``count`` mode, the mirror
symmetry of the first row; same counters.
"""

from __future__ import annotations

from dataclasses import dataclass

from btlab.experiments.core import Budget, SearchResult, Status
from btlab.experiments.queens.symmetry import is_canonical, unique_extra


@dataclass
class _Walk:
    """Counters of one bitmask walk over some first-row columns (see :func:`_bitmask_walk`)."""

    status: Status
    nodes: int
    backtracks: int
    dead_ends: int
    checks: int        # every row but the first
    solutions: int
    canonical: int
    max_depth: int
    solution: tuple[int, ...] | None
    root_col: int      # first-row column in progress when stopped, else -1


def _bitmask_walk(n: int, first_row: int, first: bool, unique: bool, cap: int,
                  budget: Budget) -> _Walk:
    """Depth-first walk of the subtrees of the first-row columns in the bit set ``first_row``.

    Rows are frames of an explicit stack: ``avail[row]`` holds the columns of
    the row still to try (safe ones only: a single mask operation tests the n
    squares of a row, counted as n checks when the row is done, or as the
    columns up to the current one when the search stops in it). The first
    row's checks are left to the caller, which knows which columns it covers.
    Bit ``c`` stands for column ``c``; columns are tried lowest first.
    """
    full = (1 << n) - 1
    last = n - 1
    clock_mask = Budget.CLOCK_EVERY - 1
    avail = [0] * n     # safe columns of the row not yet tried
    attacked = [0] * n  # columns attacked in the row by the queens above
    left = [0] * n      # squares of the row attacked along one diagonal (bit per column)
    right = [0] * n     # ... along the other
    bits = [0] * n      # the queen of each row on the path, as a column bit
    found = [0] * n     # solutions found below the queen of the row above
    nodes = backtracks = dead_ends = checks = solutions = canonical = max_depth = 0
    solution: tuple[int, ...] | None = None
    status = Status.EXHAUSTED
    bcap = budget.backtrack_cap
    avail[0] = first_row
    row = 0
    while True:
        a = avail[row]
        if a:
            bit = a & -a
            avail[row] = a ^ bit
            bits[row] = bit
            if nodes >= cap:
                status = Status.NODE_LIMIT
                break
            if not (nodes & clock_mask) and budget.out_of_time():
                status = Status.TIME_LIMIT
                break
            nodes += 1
            if row == last:
                max_depth = n
                solutions += 1
                if solution is None or unique:
                    placement = [b.bit_length() - 1 for b in bits]
                    if solution is None:
                        solution = tuple(placement)
                    if first:
                        status = Status.SOLVED
                        break
                    if unique and is_canonical(placement):
                        canonical += 1
                found[row] += 1
                continue
            cols = attacked[row] | bit
            ldiag = ((left[row] | bit) << 1) & full
            rdiag = (right[row] | bit) >> 1
            row += 1
            attacked[row] = cols
            left[row] = ldiag
            right[row] = rdiag
            found[row] = 0
            free = full & ~(cols | ldiag | rdiag)
            avail[row] = free
            if not free:
                dead_ends += 1
                if row > max_depth:  # noqa: PLR1730 -- hot loop: a compare beats a call
                    max_depth = row
            continue
        # Every column of this row is tried: take back the queen of the row above.
        if row == 0:
            break
        checks += n
        below = found[row]
        row -= 1
        if below:
            found[row] += below
        else:
            if backtracks >= bcap:
                status = Status.BACKTRACK_LIMIT
                break
            backtracks += 1
    if status is Status.EXHAUSTED:
        return _Walk(status, nodes, backtracks, dead_ends, checks, solutions, canonical,
                     max_depth, solution, -1)
    # Stopped in ``row`` at column bits[row]: rows 1..row have tested their
    # columns up to the one on the path (or being placed).
    for r in range(1, row + 1):
        checks += bits[r].bit_length()
    depth = row + 1 if status is Status.SOLVED else row
    return _Walk(status, nodes, backtracks, dead_ends, checks, solutions, canonical,
                 max(max_depth, depth), solution, bits[0].bit_length() - 1)


def _walk_result(n: int, unique: bool, walk: _Walk, extra: dict[str, int]) -> SearchResult:
    """A :class:`SearchResult` for a walk over every first-row column."""
    checks = walk.checks + (n if walk.root_col < 0 else walk.root_col + 1)
    reported, unique_cols = unique_extra(unique, walk.solutions, walk.canonical)
    extra.update(unique_cols)
    return SearchResult(walk.status, walk.nodes, walk.backtracks, walk.dead_ends, checks,
                        reported, walk.max_depth, walk.solution, extra)


def search_bitmask(n: int, first: bool, unique: bool, budget: Budget) -> SearchResult:
    """Backtracking on bit masks; in ``count`` mode, the mirror symmetry halves the walk.

    Reflecting the board left-right maps the subtree of first-row column c
    onto that of column n-1-c, placement for placement, so both have the same
    nodes, backtracks, dead ends, checks, solutions and depth. In ``count``
    mode only the columns c < n/2 (and the middle one for odd n) are walked,
    and their counters are doubled (the middle column's counted once); every
    canonical solution (see
    :func:`is_canonical`) has its first queen in that half, so ``unique``
    counts are not doubled. The reported counters are those of the full walk,
    identical to ``recursive``'s; ``extra["walked_nodes"]`` is the number of
    placements actually made. A node budget is honoured exactly: if the full
    walk would need more than ``max_nodes`` placements, the plain walk is run
    up to the limit, so a stopped search reports ``recursive``'s counters too; under a
    backtrack budget the plain walk runs from the start.
    A time limit reached in the half walk reports what that walk did.
    """
    full = (1 << n) - 1
    budget.start()
    cap = budget.node_cap
    if first or budget.max_backtracks is not None:  # a backtrack budget: the plain walk
        walk = _bitmask_walk(n, full, first, unique, cap, budget)
        return _walk_result(n, unique, walk, {"walked_nodes": walk.nodes})
    half = n // 2
    left_cols = (1 << half) - 1
    middle_col = (1 << half) if n % 2 else 0
    limited = budget.max_nodes is not None
    left = _bitmask_walk(n, left_cols, False, unique, cap // 2 if limited else cap, budget)
    walked = left.nodes
    if left.status is Status.EXHAUSTED:
        mid = _Walk(Status.EXHAUSTED, 0, 0, 0, 0, 0, 0, 0, None, -1)
        if middle_col:
            mid_cap = cap - 2 * left.nodes if limited else cap
            mid = _bitmask_walk(n, middle_col, False, unique, mid_cap, budget)
            walked += mid.nodes
        if mid.status is Status.EXHAUSTED:
            solution = left.solution if left.solution is not None else mid.solution
            whole = _Walk(Status.EXHAUSTED, 2 * left.nodes + mid.nodes,
                          2 * left.backtracks + mid.backtracks,
                          2 * left.dead_ends + mid.dead_ends, 2 * left.checks + mid.checks,
                          2 * left.solutions + mid.solutions, left.canonical + mid.canonical,
                          max(left.max_depth, mid.max_depth), solution, -1)
            return _walk_result(n, unique, whole, {"walked_nodes": walked})
        if mid.status is Status.TIME_LIMIT:
            # What the half walk did: the left columns, then part of the middle one.
            done = _Walk(Status.TIME_LIMIT, left.nodes + mid.nodes,
                         left.backtracks + mid.backtracks, left.dead_ends + mid.dead_ends,
                         left.checks + mid.checks, left.solutions + mid.solutions,
                         left.canonical + mid.canonical, max(left.max_depth, mid.max_depth),
                         left.solution if left.solution is not None else mid.solution,
                         mid.root_col)
            return _walk_result(n, unique, done, {"walked_nodes": walked})
    elif left.status is Status.TIME_LIMIT:
        return _walk_result(n, unique, left, {"walked_nodes": walked})
    # The full walk needs more than max_nodes placements: walk it in plain
    # order up to the limit, as recursion would.
    walk = _bitmask_walk(n, full, False, unique, cap, budget)
    return _walk_result(n, unique, walk, {"walked_nodes": walked + walk.nodes})
