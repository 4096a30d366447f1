"""N-Queens by enumeration: ``brute_force`` (every placement) and ``functional``
(generate-and-filter, a whole level at a time).

Both walk other trees than backtracking does; see :mod:`btlab.experiments.queens.solve`
for their counters.
"""

from __future__ import annotations

from collections.abc import Sequence

from btlab.experiments.core import Budget, SearchResult, Status, StopSearch
from btlab.experiments.queens.symmetry import is_canonical, unique_extra


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


#: Nanoseconds per placement held that ``functional`` keeps in hand before its time limit,
#: to count the backtracks of the placements it holds and free them (about 0.5 us each).
_WRAP_UP_NS = 1500


def search_functional(n: int, first: bool, unique: bool, budget: Budget) -> SearchResult:
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
    large boards with ``max_nodes``. Under a time limit the clock is read
    every 1024 candidates, and the search stops early enough to count and
    free the placements it holds (:data:`_WRAP_UP_NS` each) by the deadline.
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
            for parent, (cols, col_bits, diag_bits, anti_bits) in enumerate(level):  # noqa: B007
                children = 0
                for col in range(n):
                    checks += 1
                    if not (checks & clock_mask) and budget.out_of_time(
                            _WRAP_UP_NS * (len(built) + len(level) - parent)):
                        raise StopSearch(Status.TIME_LIMIT)
                    col_bit = 1 << col
                    diag_bit = 1 << (row + col)
                    anti_bit = 1 << (row - col + last)
                    if col_bits & col_bit or diag_bits & diag_bit or anti_bits & anti_bit:
                        continue
                    if nodes >= cap:
                        raise StopSearch(Status.NODE_LIMIT)
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
    reported, extra = unique_extra(unique, solutions, canonical)
    extra.update(candidates=checks, max_frontier=max_frontier)
    return SearchResult(status, nodes, backtracks, dead_ends, checks, reported, max_depth,
                        found_placement, extra)


def search_brute_force(n: int, first: bool, unique: bool, budget: Budget) -> SearchResult:
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
    reported, extra = unique_extra(unique, solutions, canonical)
    return SearchResult(status, nodes, backtracks, dead_ends, checks, reported, max_depth,
                        found_placement, extra)
