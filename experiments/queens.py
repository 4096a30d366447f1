"""N-Queens: place n queens on an n x n board so that no two attack each other.

A placement is written as the tuple of the queens' columns by row,
``cols[row]``, 0-based, row 0 at the top. Every searching strategy puts one
queen per row, row by row, trying columns 0..n-1 in order, so the first
solution found is the lexicographically smallest one.

Strategies (:data:`STRATEGIES`):

* ``brute_force``: generates every one of the n^n placements with one queen
  per row and checks each only when it is complete.
* ``recursive``: backtracking, a Python function calling itself (boards above
  :data:`DEEP_BOARD` rows run in a big-stack thread, see
  :func:`experiments.knights.run_deep`).
* ``iterative``: the same backtracking with an explicit stack.
* ``amb``: the same backtracking written with McCarthy's Amb operator
  (:class:`experiments.amb.Amb`): one choice point per row, ``require(safe)``
  right after each choice, choice points served by re-execution.
* ``functional``: generate-and-filter, column by column in the functional
  programming literature's words (one queen per row here): the consistent
  placements of k queens are built from all those of k - 1 by extending each
  with every column and keeping the safe ones (N. Wirth, "Program development
  by stepwise refinement", CACM 14(4), 1971; R. Bird and P. Wadler,
  *Introduction to Functional Programming*, 1988).
* ``bitmask``: the same backtracking with the attacked columns and diagonals
  held as bit masks (M. Richards, "Backtracking algorithms in MCPL using bit
  patterns and recursion", Cambridge, 1997), an explicit stack, and in
  ``count`` mode the mirror symmetry of the first row.
* ``construction``: no search; an explicit formula for every n (``formula``)
  or the self-similar product for n = 5^k (``product``), see
  :func:`construct_queens`.

Counters (metrics contract, :mod:`experiments.core`). A *check* is a square
tested for attack. ``recursive``, ``iterative``, ``amb`` and ``bitmask`` walk
the same tree in the same order and report equal counters, under any node
budget too (a time limit stops each wherever its clock runs out):

* ``nodes``: queens left on the board after their safety test; for n = 8
  there are 2,056 of them in ``count`` mode (2,057 tree nodes with the empty
  root: D. E. Knuth, *The Art of Computer Programming*, section 7.2.2,
  "Backtrack programming"; OEIS A319235).
* ``checks``: one per column tried: every placement short of n queens, and the
  empty board, try the n columns of the next row, so an exhausted count makes
  ``n * (1 + nodes - solutions)`` checks (15,720 for n = 8). A search stopped
  in a row has tested the columns up to and including the current one.
* ``backtracks``: queens taken back whose subtree held no reported solution.
* ``dead_ends``: queens short of a complete placement with no safe square in
  the next row.
* ``solutions``, ``max_depth``: solutions reported, most queens on the board.

``brute_force`` walks the tree of all placements (every assignment is a
placement, ``nodes`` = sum of n^k for k = 1..n in ``count`` mode); a complete
placement is checked row by row, each queen's square tested against the
queens above it, stopping at the first attacked one: every row tested is one
check. A complete placement that fails is a dead end (and a backtrack);
shorter placements always have a continuation and are never dead ends.
``functional`` counts as recursion does (same ``nodes``, ``checks``,
``backtracks``, ``dead_ends`` in ``count`` mode), see
:func:`_search_functional`. ``construction`` makes n placements and n checks
(its O(n) verification tests each queen's square once).

With ``unique=True`` (``count`` mode) ``solutions`` counts solutions up to the
8 symmetries of the square (OEIS A002562): a solution is counted when it is
the lexicographically smallest of its 8 images; ``extra["all_solutions"]``
keeps the plain count and the other counters are those of the full walk.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Callable, Sequence

from .amb import Amb, TreeLedger
from .checker import check_queens
from .core import Budget, Mode, SearchResult, Status, StopSearch
from .knights import run_deep
from .registry import Strategy, strategies

CONSTRUCTIONS = ("formula", "product")

#: Boards above this many rows run the recursive strategies in a big-stack thread.
DEEP_BOARD = 400

#: The 5-queens solution grown by the ``product`` construction: a queen in the
#: corner (0, 0), and toroidal (column = 2 * row mod 5: no two queens share a
#: diagonal even when the board wraps around), which the product needs.
PRODUCT_SEED: tuple[int, ...] = (0, 2, 4, 1, 3)


# --------------------------------------------------------------------------
# Symmetry


def is_canonical(cols: Sequence[int]) -> bool:
    """True when a placement is the lexicographically smallest of its 8 images.

    The images are those under the symmetries of the square (the dihedral
    group D4: rotations by 0, 90, 180, 270 degrees and the four reflections),
    each written as columns by row. Counting the canonical solutions counts
    each class of solutions once (OEIS A002562).

    Args:
        cols: a placement of n >= 1 queens with distinct columns 0..n-1
            (a permutation, as every N-Queens solution is).

    Returns:
        Whether ``cols`` is not larger than any of its images.
    """
    s = list(cols)
    top = len(s) - 1
    head = s[0]
    inv0, inv_top = s.index(0), s.index(top)   # rows of the queens in columns 0 and n-1
    # First entries of the 7 other images; most placements lose on one of them.
    heads = (top - head, s[-1], top - s[-1], inv0, top - inv0, inv_top, top - inv_top)
    if min(heads) < head:
        return False
    inv = [0] * len(s)
    for r, c in enumerate(s):
        inv[c] = r
    images: tuple[Callable[[], list[int]], ...] = (
        lambda: [top - c for c in s],              # mirror left-right
        lambda: s[::-1],                           # mirror top-bottom
        lambda: [top - c for c in reversed(s)],    # rotate 180
        lambda: inv,                               # transpose
        lambda: [top - r for r in inv],            # rotate 90 clockwise
        lambda: inv[::-1],                         # rotate 90 anticlockwise
        lambda: [top - r for r in reversed(inv)],  # anti-transpose
    )
    return all(s <= make() for h, make in zip(heads, images) if h == head)


# --------------------------------------------------------------------------
# Searches. Each takes (n, first, unique, budget) and returns a SearchResult.


def _unique_extra(unique: bool, solutions: int, canonical: int) -> tuple[int, dict[str, int]]:
    """The reported solution count and extra columns for ``unique`` counting."""
    if unique:
        return canonical, {"all_solutions": solutions}
    return solutions, {}


def _search_recursive(n: int, first: bool, unique: bool, budget: Budget,
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
    clock_mask = Budget.CLOCK_EVERY - 1
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
    reported, extra = _unique_extra(unique, solutions, canonical)
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
    Used by :mod:`experiments.split`.

    Args:
        n: board size, >= 1.
        prefix: 0..n columns, each in 0..n-1, a safe partial placement.
        first: stop at the first solution.
        unique: count solutions up to symmetry too (``extra["all_solutions"]``
            keeps the plain count), as :func:`solve_queens`.
        budget: node and time limits of this subtree (default: none).

    Raises:
        ValueError: a prefix longer than n or a column off the board.
    """
    if len(prefix) > n or any(not 0 <= c < n for c in prefix):
        raise ValueError(f"prefix must hold at most {n} columns in 0..{n - 1}, got {list(prefix)}")
    budget = budget if budget is not None else Budget()
    call = lambda: _search_recursive(n, first, unique, budget, tuple(prefix))  # noqa: E731
    return run_deep(call, n) if n > DEEP_BOARD else call()


def _search_iterative(n: int, first: bool, unique: bool, budget: Budget) -> SearchResult:
    last = n - 1
    col_used = [False] * n
    diag = [False] * (2 * n - 1)
    anti = [False] * (2 * n - 1)
    placement = [0] * n
    cap = budget.node_cap
    clock_mask = Budget.CLOCK_EVERY - 1
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
            backtracks += 1
    reported, extra = _unique_extra(unique, solutions, canonical)
    return SearchResult(status, nodes, backtracks, dead_ends, checks, reported, max_depth,
                        found_placement, extra)


def _search_amb(n: int, first: bool, unique: bool, budget: Budget) -> SearchResult:
    """Backtracking written with :class:`experiments.amb.Amb`.

    The searched function places row after row: ``col = amb(range(n))``, then
    ``require(safe)``. Each restart replays the rows chosen so far (testing
    their squares again, which is the operator's cost); only the fresh choice
    is counted -- one check, and one node if it is safe -- through a
    :class:`experiments.amb.TreeLedger`, so the counters equal
    ``recursive``'s. Extra counters: ``amb_restarts`` (re-executions) and
    ``amb_replayed`` (choices replayed).
    """
    last = n - 1
    columns = range(n)
    ledger = TreeLedger(n, budget)

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
    reported, extra = _unique_extra(unique, ledger.solutions, canonical)
    extra.update(amb_restarts=amb.restarts, amb_replayed=amb.replayed)
    return SearchResult(status, ledger.nodes, ledger.backtracks, ledger.dead_ends,
                        ledger.checks, reported, ledger.max_depth, found_placement, extra)


def _distinct_prefixes(placements: Sequence[Sequence[int]]) -> int:
    """Number of distinct non-empty prefixes of placements listed in tree order.

    Tree order: depth-first, a placement may follow its own extensions but no
    extension follows it. The prefixes a placement shares with any earlier one
    are then those it shares with the one just before it.
    """
    total = 0
    prev: Sequence[int] = ()
    for p in placements:
        common = 0
        for a, b in zip(p, prev):
            if a != b:
                break
            common += 1
        total += len(p) - common
        prev = p
    return total


def _search_functional(n: int, first: bool, unique: bool, budget: Budget) -> SearchResult:
    """Generate-and-filter, one whole level of partial placements at a time.

    Level k holds every consistent placement of k queens (rows 0..k-1), in
    lexicographic order. Level k + 1 is generated from it by extending each
    placement with each of the n columns (a *candidate*) and filtered by the
    safety test. A placement is an immutable value: its columns with the
    attacked columns and diagonals as bit sets, so the filter is O(1).

    Counters: ``nodes`` = placements kept (so the same as ``recursive`` in
    ``count`` mode: the levels hold exactly the nodes of the backtracking
    tree); ``checks`` = candidates tested (one each); ``dead_ends`` = kept
    placements short of n queens whose extensions all failed; ``backtracks``
    = kept placements discarded because none of their extensions leads to a
    reported solution (placements still waiting to be extended when the
    search stops are not discarded). All four equal ``recursive``'s in
    ``count`` mode. In ``first`` mode levels 1..n-1 are built whole and the
    last one up to its first solution, so the counters exceed
    ``recursive``'s. Extra counters: ``candidates`` (extensions generated,
    equal to ``checks``: each is tested once) and ``max_frontier`` (the
    largest level, in placements held at once -- the memory of the method).
    Every kept placement stays in memory until its level is extended, so
    memory grows with ``nodes`` (some 100 bytes each for small n): bound
    large boards with ``max_nodes``.
    """
    last = n - 1
    cap = budget.node_cap
    clock_mask = Budget.CLOCK_EVERY - 1
    nodes = dead_ends = checks = solutions = 0
    max_frontier = 1
    level: list[tuple[tuple[int, ...], int, int, int]] = [((), 0, 0, 0)]
    built: list[tuple[tuple[int, ...], int, int, int]] = []
    row = parent = 0    # the level being built; the placement of ``level`` being extended
    found_placement: tuple[int, ...] | None = None
    budget.start()
    try:
        for row in range(n):
            built = []
            for parent, (cols, col_bits, diag_bits, anti_bits) in enumerate(level):
                children = 0
                for col in range(n):
                    checks += 1
                    col_bit = 1 << col
                    diag_bit = 1 << (row + col)
                    anti_bit = 1 << (row - col + last)
                    if col_bits & col_bit or diag_bits & diag_bit or anti_bits & anti_bit:
                        continue
                    if nodes >= cap:
                        raise StopSearch(Status.NODE_LIMIT)
                    if not (nodes & clock_mask) and budget.out_of_time():
                        raise StopSearch(Status.TIME_LIMIT)
                    nodes += 1
                    children += 1
                    placement = cols + (col,)
                    built.append((placement, col_bits | col_bit, diag_bits | diag_bit,
                                  anti_bits | anti_bit))
                    if row == last:
                        solutions += 1
                        if found_placement is None:
                            found_placement = placement
                        if first:
                            raise StopSearch(Status.SOLVED)
                if not children and row:
                    dead_ends += 1
            max_frontier = max(max_frontier, len(built))
            if not built:
                break
            level = built
        status = Status.EXHAUSTED
    except StopSearch as stop:
        status = stop.status
        max_frontier = max(max_frontier, len(built))
    max_depth = row + 1 if built else row
    # Placements not discarded: those built (the solutions, when exhausted)
    # and, when stopped, those of the level being extended not finished with.
    alive = [p for p, *_ in built]
    if status is not Status.EXHAUSTED:
        alive += [p for p, *_ in level[parent:]]
    backtracks = nodes - _distinct_prefixes(alive)
    canonical = 0
    if unique and max_depth == n:
        canonical = sum(1 for p, *_ in built if is_canonical(p))
    reported, extra = _unique_extra(unique, solutions, canonical)
    extra.update(candidates=checks, max_frontier=max_frontier)
    return SearchResult(status, nodes, backtracks, dead_ends, checks, reported, max_depth,
                        found_placement, extra)


def _search_brute_force(n: int, first: bool, unique: bool, budget: Budget) -> SearchResult:
    last = n - 1
    placement = [0] * n
    cap = budget.node_cap
    clock_mask = Budget.CLOCK_EVERY - 1
    nodes = backtracks = dead_ends = checks = solutions = max_depth = canonical = 0
    found_placement: tuple[int, ...] | None = None

    def assign(row: int) -> int:
        """Assign each column to ``row`` in turn; return solutions found below."""
        nonlocal nodes, backtracks, dead_ends, checks, solutions, max_depth, canonical
        nonlocal found_placement
        found = 0
        if row < last:
            for col in range(n):
                if nodes >= cap:
                    raise StopSearch(Status.NODE_LIMIT)
                if not (nodes & clock_mask) and budget.out_of_time():
                    raise StopSearch(Status.TIME_LIMIT)
                nodes += 1
                if row >= max_depth:
                    max_depth = row + 1
                placement[row] = col
                below = assign(row + 1)
                if below:
                    found += below
                else:
                    backtracks += 1
            return found
        for col in range(n):
            if nodes >= cap:
                raise StopSearch(Status.NODE_LIMIT)
            if not (nodes & clock_mask) and budget.out_of_time():
                raise StopSearch(Status.TIME_LIMIT)
            nodes += 1
            max_depth = n
            placement[row] = col
            # Check the complete placement: each queen against those above it.
            col_bits = diag_bits = anti_bits = 0
            safe = True
            for r in range(n):
                c = placement[r]
                checks += 1
                col_bit = 1 << c
                diag_bit = 1 << (r + c)
                anti_bit = 1 << (r - c + last)
                if col_bits & col_bit or diag_bits & diag_bit or anti_bits & anti_bit:
                    safe = False
                    break
                col_bits |= col_bit
                diag_bits |= diag_bit
                anti_bits |= anti_bit
            if safe:
                solutions += 1
                if found_placement is None:
                    found_placement = tuple(placement)
                if first:
                    raise StopSearch(Status.SOLVED)
                if unique and is_canonical(placement):
                    canonical += 1
                found += 1
            else:
                dead_ends += 1
                backtracks += 1
        return found

    budget.start()
    try:
        assign(0)
        status = Status.EXHAUSTED
    except StopSearch as stop:
        status = stop.status
    reported, extra = _unique_extra(unique, solutions, canonical)
    return SearchResult(status, nodes, backtracks, dead_ends, checks, reported, max_depth,
                        found_placement, extra)


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
                if row > max_depth:
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
    reported, unique_extra = _unique_extra(unique, walk.solutions, walk.canonical)
    extra.update(unique_extra)
    return SearchResult(walk.status, walk.nodes, walk.backtracks, walk.dead_ends, checks,
                        reported, walk.max_depth, walk.solution, extra)


def _search_bitmask(n: int, first: bool, unique: bool, budget: Budget) -> SearchResult:
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
    up to the limit, so a stopped search reports ``recursive``'s counters too.
    A time limit reached in the half walk reports what that walk did.
    """
    full = (1 << n) - 1
    budget.start()
    cap = budget.node_cap
    if first:
        walk = _bitmask_walk(n, full, True, False, cap, budget)
        return _walk_result(n, False, walk, {"walked_nodes": walk.nodes})
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


# --------------------------------------------------------------------------
# Construction


def _formula(n: int) -> list[int]:
    """Bernhardsson's explicit solution, 0-based columns by row, for n = 1 and n >= 4.

    With m = n for even n and m = n - 1 for odd n, and 1-based rows and
    columns (B. Bernhardsson, "Explicit solutions to the N-queens problem for
    all N", ACM SIGART Bulletin 2(2), 1991, p. 7; the same families as E. J.
    Hoffman, J. C. Loessi and R. C. Moore, "Constructions for the solution of
    the m queens problem", Mathematics Magazine 42(2), 1969):

    * m mod 6 != 2: row i holds column 2i and row m/2 + i column 2i - 1,
      for i = 1..m/2;
    * m mod 6 == 2: row i holds column 1 + (2(i-1) + m/2 - 1) mod m and row
      m + 1 - i column m - (2(i-1) + m/2 - 1) mod m, for i = 1..m/2;
    * odd n: the m-queens solution leaves the main diagonal free, and row n
      takes column n.
    """
    m = n - (n & 1)
    h = m // 2
    if m % 6 != 2:
        cols = [2 * i + 1 for i in range(h)] + [2 * i for i in range(h)]
    else:
        top = [(2 * i + h - 1) % m for i in range(h)]
        cols = top + [m - 1 - v for v in reversed(top)]
    if n & 1:
        cols.append(n - 1)
    return cols


def _is_power_of_5(n: int) -> bool:
    """True for n = 5^k, k >= 0."""
    while n % 5 == 0:
        n //= 5
    return n == 1


def _product(n: int) -> list[int]:
    """The self-similar solution for n = 5^k, grown from :data:`PRODUCT_SEED`.

    Queen (r, c) of the 5-queens seed and queen (r', c') of the 5^k solution
    give queen (r * 5^k + r', c * 5^k + c') of the 5^(k+1) solution: a copy of
    the 5^k solution in each block the seed marks. If both factors are
    *toroidal* (no two queens on a common diagonal of the board wrapped into a
    torus), so is the product: two of its queens on a common wrapped diagonal
    would, modulo 5^k, put two queens of the inner factor on one, so they lie
    in the same place of two blocks, and then, divided by 5^k, the blocks
    would share a wrapped diagonal of the seed. A toroidal solution is a
    solution, the seed (column 2r mod 5) is toroidal, so every power is, by
    induction. The seed's queen in the corner (0, 0) puts the 5^k solution in
    the top-left block of the 5^(k+1) one. (Toroidal, "doubly periodic",
    solutions: G. Pólya, "Über die 'doppelt-periodischen' Lösungen des
    n-Damen-Problems", in W. Ahrens, *Mathematische Unterhaltungen und
    Spiele* II, 1918.)

    Raises:
        ValueError: n is not a power of 5.
    """
    size = 1
    cols = [0]
    while size < n:
        cols = [c * size + inner for c in PRODUCT_SEED for inner in cols]
        size *= 5
    if size != n:
        raise ValueError(f"the product construction needs n = 5^k, got n = {n}")
    return cols


def construct_queens(n: int, method: str = "formula") -> list[int]:
    """One N-Queens solution, built without search in O(n) time and verified.

    Args:
        n: board size: n = 1 or n >= 4 for ``formula``; a power of 5 (1, 5,
            25, ...) for ``product``.
        method: ``formula`` (Bernhardsson 1991, see :func:`_formula`) or
            ``product`` (the self-similar 5^k solution, see :func:`_product`;
            the 5^k solution is the top-left block of the 5^(k+1) one).

    Returns:
        The queen's column for each row, length n, checked by
        :func:`experiments.checker.check_queens` before it is returned.

    Raises:
        ValueError: unknown method, n < 1, n = 2 or 3 (no solution exists), or
            (``product``) n not a power of 5.
        experiments.checker.InvalidSolution: the construction is wrong (a bug).
    """
    if method not in CONSTRUCTIONS:
        raise ValueError(f"unknown construction {method!r}; expected one of {CONSTRUCTIONS}")
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    if n in (2, 3):
        raise ValueError(f"no solution exists for n = {n}")
    cols = _formula(n) if method == "formula" else _product(n)
    check_queens(n, cols)
    return cols


def _construct(n: int, method: str, budget: Budget) -> SearchResult:
    """The ``construction`` strategy: n placements, n checks, no backtracking.

    The placement is built in one step, so a node budget below n stops it
    before its first queen (``node_limit``, all counters 0). The clock is
    read after building and after verifying; past the limit, the result is
    ``time_limit`` with the counters of the work done and no solution.
    """
    budget.start()
    if n in (2, 3):
        return SearchResult(Status.EXHAUSTED, 0, 0, 0, 0, 0, 0)
    if budget.node_cap < n:
        return SearchResult(Status.NODE_LIMIT, 0, 0, 0, 0, 0, 0)
    cols = _formula(n) if method == "formula" else _product(n)
    if budget.out_of_time():
        return SearchResult(Status.TIME_LIMIT, n, 0, 0, 0, 0, n)
    check_queens(n, cols)
    if budget.out_of_time():
        return SearchResult(Status.TIME_LIMIT, n, 0, 0, n, 0, n)
    return SearchResult(Status.SOLVED, n, 0, 0, n, 1, n, tuple(cols))


def _deep(search: Callable[[int, bool, bool, Budget], SearchResult]
          ) -> Callable[[int, bool, bool, Budget], SearchResult]:
    """A strategy that recurses once per row, run in a big-stack thread for large n."""
    def solve(n: int, first: bool, unique: bool, budget: Budget) -> SearchResult:
        if n > DEEP_BOARD:
            return run_deep(lambda: search(n, first, unique, budget), n)
        return search(n, first, unique, budget)
    solve.__doc__ = search.__doc__
    return solve


def _construction(n: int, first: bool, unique: bool, budget: Budget,
                  method: str | None = None) -> SearchResult:
    if not first:
        raise ValueError("the construction strategy builds one solution; use mode='first'")
    if unique:
        raise ValueError("unique counting needs a searching strategy, not construction")
    method = "formula" if method is None else method
    if method not in CONSTRUCTIONS:
        raise ValueError(f"unknown construction {method!r}; expected one of {CONSTRUCTIONS}")
    if method == "product" and not _is_power_of_5(n):
        raise ValueError(f"the product construction needs n = 5^k, got n = {n}")
    return _construct(n, method, budget)


#: The N-Queens strategies. Each ``solve`` takes ``(n, first, unique, budget)``
#: (plus the keyword options its entry lists) and returns a
#: :class:`~experiments.core.SearchResult`. ``recursive``, ``iterative``,
#: ``amb`` and ``bitmask`` walk the same row-by-row tree (tree ``rows``).
STRATEGIES = strategies(
    "N-Queens strategy",
    Strategy("brute_force", _deep(_search_brute_force),
             "every one of the n^n placements, each checked only when complete",
             engines=("python",), max_size=64, tree="brute"),
    Strategy("recursive", _deep(_search_recursive),
             "row-by-row backtracking, a Python function calling itself",
             source="N. Wirth, Algorithms + Data Structures = Programs, 1976, sec. 3.5",
             max_size=10_000, splittable=True, tree="rows"),
    Strategy("iterative", _search_iterative,
             "the same search with an explicit stack",
             max_size=100_000, splittable=True, tree="rows"),
    Strategy("amb", _search_amb,
             "McCarthy's Amb operator by re-execution, require() right after each choice",
             source="J. McCarthy, \"A basis for a mathematical theory of computation\", 1963",
             max_size=1_000, splittable=True, tree="rows"),
    Strategy("functional", _search_functional,
             "generate-and-filter column by column: all consistent placements of k columns "
             "from those of k-1",
             max_size=1_000, tree="functional"),
    Strategy("bitmask", _search_bitmask,
             "row-by-row backtracking on three bit masks; the compiled engine runs this one",
             source="M. Richards, \"Backtracking algorithms in MCPL using bit patterns and "
             "recursion\", 1997",
             engines=("python", "compiled"), max_size=100_000, splittable=True, tree="rows"),
    Strategy("construction", _construction,
             "no search: an explicit formula for every n >= 4, or the product that grows a "
             "5-queens solution into 5^k queens; always verified",
             source="E. J. Hoffman, J. C. Loessi, R. C. Moore, \"Constructions for the "
             "solution of the m queens problem\", Math. Magazine 42(2), 1969",
             max_size=10_000_000, options=("method",), modes=("first",)),
)


def solve_queens(
    n: int,
    *,
    mode: str | Mode = Mode.FIRST,
    strategy: str = "recursive",
    unique: bool = False,
    method: str | None = None,
    max_nodes: int | None = None,
    max_seconds: float | None = None,
) -> SearchResult:
    """Solve the N-Queens problem on an n x n board.

    Args:
        n: board size, >= 1.
        mode: ``first`` (stop at the first solution) or ``count`` (all).
        strategy: one of :data:`STRATEGIES` (see the module docstring).
        unique: in ``count`` mode, count solutions up to the 8 symmetries of
            the square (OEIS A002562); ``extra["all_solutions"]`` keeps the
            plain count (OEIS A000170). Any searching strategy.
        method: the ``construction`` to use, ``formula`` (the default, any
            n >= 4) or ``product`` (n = 5^k); only with that strategy.
        max_nodes: node budget (placements), or None.
        max_seconds: time budget (wall seconds), or None.

    Returns:
        A :class:`SearchResult`; its ``solution`` is the first solution found
        as the queen's column for each row, or None. ``construction`` on n = 2
        or 3 returns ``exhausted`` with no solution (none exists); on n = 1 it
        returns the single queen.

    Raises:
        ValueError: n < 1, an unknown mode, strategy or method, ``method``
            with another strategy, ``count`` mode or ``unique`` with
            ``construction``, ``unique`` in ``first`` mode, ``product`` for an
            n that is not a power of 5, or a bad budget.
    """
    n = operator.index(n)
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    mode = Mode(mode)
    entry = STRATEGIES.get_or_raise(strategy)
    if method is not None and "method" not in entry.options:
        raise ValueError(f"method={method!r} applies to the construction strategy only, "
                         f"not to {strategy!r}")
    if unique and mode is not Mode.COUNT:
        raise ValueError("unique counting needs mode='count'")
    budget = Budget(max_nodes, max_seconds)
    options = {"method": method} if "method" in entry.options else {}
    return entry.solve(n, mode is Mode.FIRST, unique, budget, **options)
