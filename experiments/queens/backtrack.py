"""N-Queens by row-by-row backtracking: ``recursive``, ``iterative``, ``amb``.

The three walk the same tree in the same order and report equal counters
(see :mod:`btlab.experiments.queens.solve`); :func:`search_subtree` is one subtree of the
recursive walk, the task of :mod:`btlab.experiments.split.subtrees`. Each ``search_*``
function takes ``(n, first, unique, budget)`` and returns a
:class:`~btlab.experiments.core.SearchResult`.
"""

from __future__ import annotations

from collections.abc import Sequence

from btlab.experiments.amb import Amb, TreeLedger
from btlab.experiments.core import Budget, SearchResult, Status, StopSearch
from btlab.experiments.knights.solve import run_deep
from btlab.experiments.queens.symmetry import DEEP_BOARD, is_canonical, unique_extra


def search_recursive(n: int, first: bool, unique: bool, budget: Budget,
                      prefix: Sequence[int] = ()) -> SearchResult:
    """Row-by-row backtracking; with a ``prefix``, the subtree of its last queen only.

    ``prefix`` (columns of rows 0..d-1, d >= 1, assumed safe) makes the search
    that of the subtree of the queen ``prefix[-1]`` in row d - 1, the rows
    above already filled: that queen is placed (one node, under the budget),
    then row d is expanded as the whole search would; the checks of row d - 1
    belong to the parent and are not counted (see :func:`search_subtree`).
    """
    last = n - 1
    col_used = [False] * n
    diag = [False] * (2 * n - 1)    # row + col
    anti = [False] * (2 * n - 1)    # row - col + n - 1
    placement = [0] * n
    cap = budget.node_cap
    bcap = budget.backtrack_cap
    clock_mask = Budget.clock_mask(n)  # a row looks at n columns
    nodes = backtracks = dead_ends = checks = solutions = max_depth = canonical = 0
    found_placement: tuple[int, ...] | None = None

    def expand(row: int) -> int:
        """Try each column of ``row`` (``row`` queens placed); return solutions found below."""
        nonlocal nodes, backtracks, dead_ends, checks, solutions, max_depth, canonical
        nonlocal found_placement
        found = 0
        placed = False
        col = 0
        try:
            for col in range(n):
                if col_used[col] or diag[row + col] or anti[row - col + last]:
                    continue
                if nodes >= cap:
                    raise StopSearch(Status.NODE_LIMIT)
                if not (nodes & clock_mask) and budget.out_of_time():
                    raise StopSearch(Status.TIME_LIMIT)
                nodes += 1
                placed = True
                placement[row] = col
                if row == last:
                    max_depth = n
                    solutions += 1
                    if found_placement is None:
                        found_placement = tuple(placement)
                    if first:
                        raise StopSearch(Status.SOLVED)
                    if unique and is_canonical(placement):
                        canonical += 1
                    found += 1
                    continue
                if row >= max_depth:
                    max_depth = row + 1
                col_used[col] = diag[row + col] = anti[row - col + last] = True
                below = expand(row + 1)
                col_used[col] = diag[row + col] = anti[row - col + last] = False
                if below:
                    found += below
                else:
                    if backtracks >= bcap:
                        raise StopSearch(Status.BACKTRACK_LIMIT)
                    backtracks += 1
        except StopSearch:
            checks += col + 1   # columns 0..col of this row were tested
            raise
        checks += n
        if not placed and row:
            dead_ends += 1      # the queen of row - 1 has no safe square below it
        return found

    def place_root() -> None:
        """Place the queen ``prefix[-1]`` as ``expand`` does, then search below it."""
        nonlocal nodes, backtracks, solutions, max_depth, canonical, found_placement
        row = len(prefix) - 1
        for r, c in enumerate(prefix[:-1]):
            placement[r] = c
            col_used[c] = diag[r + c] = anti[r - c + last] = True
        col = prefix[-1]
        if nodes >= cap:
            raise StopSearch(Status.NODE_LIMIT)
        if not (nodes & clock_mask) and budget.out_of_time():
            raise StopSearch(Status.TIME_LIMIT)
        nodes += 1
        placement[row] = col
        if row == last:
            max_depth = n
            solutions += 1
            found_placement = tuple(placement)
            if first:
                raise StopSearch(Status.SOLVED)
            if unique and is_canonical(placement):
                canonical += 1
            return
        max_depth = row + 1
        col_used[col] = diag[row + col] = anti[row - col + last] = True
        if not expand(row + 1):
            if backtracks >= bcap:
                raise StopSearch(Status.BACKTRACK_LIMIT)
            backtracks += 1

    budget.start()
    try:
        if prefix:
            place_root()
        else:
            expand(0)
        status = Status.EXHAUSTED
    except StopSearch as stop:
        status = stop.status
    reported, extra = unique_extra(unique, solutions, canonical)
    return SearchResult(status, nodes, backtracks, dead_ends, checks, reported, max_depth,
                        found_placement, extra)


def search_subtree(n: int, prefix: Sequence[int], *, first: bool, unique: bool = False,
                   budget: Budget | None = None) -> SearchResult:
    """Search the subtree of one queen, exactly as the ``recursive`` strategy would.

    ``prefix`` holds the columns of rows 0..d-1 (d = ``len(prefix)``); the
    queens of rows 0..d-2 are on the board and ``prefix[-1]``, in row d - 1,
    roots the subtree. The result is what that placement adds to the counters
    of the whole recursive search: ``nodes`` counts the root queen and every
    queen below it; ``checks`` the squares tested in rows d.. (the tests of
    row d - 1 belong to the parent); ``backtracks`` includes the root when its
    subtree holds no reported solution; ``dead_ends`` includes the root when
    row d has no safe square; ``max_depth`` is the most queens on the board;
    ``solution`` the first complete placement below (length n). An empty
    prefix is the whole search (the ``recursive`` strategy). A node budget
    counts the subtree's queens only; the root itself is placed under it.
    Used by :mod:`btlab.experiments.split.subtrees`.

    Args:
        n: board size, >= 1.
        prefix: 0..n columns, each in 0..n-1, a safe partial placement.
        first: stop at the first solution.
        unique: count solutions up to symmetry too (``extra["all_solutions"]``
            keeps the plain count), as :func:`btlab.experiments.queens.solve.solve_queens`.
        budget: node and time limits of this subtree (default: none).

    Raises:
        ValueError: a prefix longer than n or a column off the board.
    """
    if len(prefix) > n or any(not 0 <= c < n for c in prefix):
        raise ValueError(f"prefix must hold at most {n} columns in 0..{n - 1}, got {list(prefix)}")
    budget = budget if budget is not None else Budget()
    call = lambda: search_recursive(n, first, unique, budget, tuple(prefix))  # noqa: E731
    return run_deep(call, n) if n > DEEP_BOARD else call()


def search_iterative(n: int, first: bool, unique: bool, budget: Budget) -> SearchResult:
    last = n - 1
    col_used = [False] * n
    diag = [False] * (2 * n - 1)
    anti = [False] * (2 * n - 1)
    placement = [0] * n
    cap = budget.node_cap
    bcap = budget.backtrack_cap
    clock_mask = Budget.clock_mask(n)  # a row looks at n columns
    nodes = backtracks = dead_ends = checks = solutions = max_depth = canonical = 0
    found_placement: tuple[int, ...] | None = None
    # One frame per row on the path (index = row): the next column to try,
    # solutions found below the queen of the row above, whether a queen was placed.
    next_col = [0] * n
    found = [0] * n
    placed = [False] * n
    status = Status.EXHAUSTED
    budget.start()

    row = 0
    while True:
        tried_from = next_col[row]
        for col in range(tried_from, n):
            if not (col_used[col] or diag[row + col] or anti[row - col + last]):
                break
        else:
            col = n
        if col < n:
            checks += col - tried_from + 1
            next_col[row] = col + 1
            if nodes >= cap:
                status = Status.NODE_LIMIT
                break
            if not (nodes & clock_mask) and budget.out_of_time():
                status = Status.TIME_LIMIT
                break
            nodes += 1
            placed[row] = True
            placement[row] = col
            if row == last:
                max_depth = n
                solutions += 1
                if found_placement is None:
                    found_placement = tuple(placement)
                if first:
                    status = Status.SOLVED
                    break
                if unique and is_canonical(placement):
                    canonical += 1
                found[row] += 1
                continue
            if row >= max_depth:
                max_depth = row + 1
            col_used[col] = diag[row + col] = anti[row - col + last] = True
            row += 1
            next_col[row] = 0
            found[row] = 0
            placed[row] = False
            continue
        checks += n - tried_from
        # Every column of this row is tried: take back the queen of the row above.
        if row == 0:
            break
        if not placed[row]:
            dead_ends += 1
        below = found[row]
        row -= 1
        col = placement[row]
        col_used[col] = diag[row + col] = anti[row - col + last] = False
        if below:
            found[row] += below
        else:
            if backtracks >= bcap:
                status = Status.BACKTRACK_LIMIT
                break
            backtracks += 1
    reported, extra = unique_extra(unique, solutions, canonical)
    return SearchResult(status, nodes, backtracks, dead_ends, checks, reported, max_depth,
                        found_placement, extra)


def search_amb(n: int, first: bool, unique: bool, budget: Budget) -> SearchResult:
    """Backtracking written with :class:`btlab.experiments.amb.Amb`.

    The searched function places row after row: ``col = amb(range(n))``, then
    ``require(safe)``. Each restart replays the rows chosen so far (testing
    their squares again, which is the operator's cost); only the fresh choice
    is counted -- one check, and one node if it is safe -- through a
    :class:`btlab.experiments.amb.TreeLedger`, so the counters equal
    ``recursive``'s. Extra counters: ``amb_restarts`` (re-executions) and
    ``amb_replayed`` (choices replayed).
    """
    last = n - 1
    columns = range(n)
    ledger = TreeLedger(n, budget, Budget.clock_mask(n))  # the clock of search_recursive

    def queens(amb: Amb) -> tuple[int, ...]:
        col_used = bytearray(n)
        diag = bytearray(2 * n - 1)
        anti = bytearray(2 * n - 1)
        placement: list[int] = []
        for row in range(n):
            col = amb.amb(columns)
            safe = not (col_used[col] or diag[row + col] or anti[row - col + last])
            if amb.replaying:
                amb.require(safe)
            else:
                ledger.retreat(row)
                ledger.add_checks(1)
                amb.require(safe)
                ledger.place(row + 1)
            col_used[col] = diag[row + col] = anti[row - col + last] = 1
            placement.append(col)
        return tuple(placement)

    amb = Amb()
    canonical = 0
    found_placement: tuple[int, ...] | None = None
    budget.start()
    runs = amb.run_all(queens)
    try:
        for placement in runs:
            ledger.solution()
            if found_placement is None:
                found_placement = placement
            if first:
                status = Status.SOLVED
                break
            if unique and is_canonical(placement):
                canonical += 1
        else:
            ledger.retreat(0)
            status = Status.EXHAUSTED
    except StopSearch as stop:
        status = stop.status
    finally:
        runs.close()
    reported, extra = unique_extra(unique, ledger.solutions, canonical)
    extra.update(amb_restarts=amb.restarts, amb_replayed=amb.replayed)
    return SearchResult(status, ledger.nodes, ledger.backtracks, ledger.dead_ends,
                        ledger.checks, reported, ledger.max_depth, found_placement, extra)
