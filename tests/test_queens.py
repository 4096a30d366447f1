"""N-Queens: OEIS oracles, the metrics contract, equal counters across strategies,
constructions, budgets. Every reported placement is verified by the checker."""

from __future__ import annotations

import pytest

from btlab.experiments.checker import InvalidSolution, check_queens
from btlab.experiments.core import Budget, Mode, Status
from btlab.experiments.queens.solve import (
    PRODUCT_SEED,
    STRATEGIES,
    construct_queens,
    is_canonical,
    solve_queens,
)

#: OEIS A000170: solutions of N-Queens, n = 1..14.
A000170 = (1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200, 73712, 365596)
#: OEIS A002562: solutions up to the 8 symmetries of the square, n = 1..12.
A002562 = (1, 0, 0, 1, 2, 1, 6, 12, 46, 92, 341, 1787)

SEARCHES = [s for s in STRATEGIES if s != "construction"]
#: Strategies that walk the same tree in the same order (same counters, always).
SAME_TREE = ["recursive", "iterative", "amb", "bitmask"]
COUNTERS = ("status", "nodes", "backtracks", "dead_ends", "checks", "solutions", "max_depth")


def consistent_prefixes(n, k):
    """Every placement of k non-attacking queens in rows 0..k-1, in lexicographic order.

    A reference written from the rules alone, independent of the solvers.
    """
    out = []

    def extend(p):
        if len(p) == k:
            out.append(p)
            return
        row = len(p)
        for col in range(n):
            if all(col != c and abs(col - c) != row - r for r, c in enumerate(p)):
                extend(p + (col,))

    extend(())
    return out


def dfs_placements(n, prune):
    """Placements (as prefixes) in the order a row-by-row depth-first search makes them.

    ``prune``: a queen is placed only on a safe square (the ``rows`` tree);
    otherwise every column is assigned (``brute_force``'s tree).
    """
    def walk(p):
        row = len(p)
        for col in range(n):
            if prune and not all(col != c and abs(col - c) != row - r for r, c in enumerate(p)):
                continue
            q = p + (col,)
            yield q
            if row + 1 < n:
                yield from walk(q)

    return walk(())


def distinct_prefixes(placements):
    """Number of distinct non-empty prefixes of ``placements``."""
    return len({p[:i] for p in placements for i in range(1, len(p) + 1)})


def check_queens_ok(n, placement):
    try:
        check_queens(n, placement)
    except InvalidSolution:
        return False
    return True


def verified(n, result):
    """The result, after checking its solution (if any) with the checker."""
    if result.solution is not None:
        check_queens(n, result.solution)
    else:
        assert result.status is not Status.SOLVED
    return result


# ---------------------------------------------------------------------- oracles


def _count_cases():
    """(strategy, n) pairs for the A000170 table; the long ones are marked slow."""
    cases = []
    largest = {"brute_force": 8, "recursive": 12, "iterative": 12, "amb": 12,
               "functional": 12, "bitmask": 14}
    slow_from = {"brute_force": 8, "amb": 11}   # brute force n=8: 19M placements (~12 s);
    for strategy, top in largest.items():       # amb n=11: ~12 s, n=12: minutes
        for n in range(1, top + 1):
            marks = [pytest.mark.slow] if n >= slow_from.get(strategy, 99) else []
            cases.append(pytest.param(strategy, n, marks=marks, id=f"{strategy}-n{n}"))
    return cases


@pytest.mark.parametrize("strategy, n", _count_cases())
def test_solution_counts_are_oeis_a000170(strategy, n):
    res = verified(n, solve_queens(n, mode="count", strategy=strategy))
    assert res.status is Status.EXHAUSTED
    assert res.solutions == A000170[n - 1]
    if res.solutions:
        assert res.max_depth == n


@pytest.mark.parametrize("n", range(1, 13), ids=lambda n: f"n{n}")
def test_unique_counts_are_oeis_a002562(n):
    res = solve_queens(n, mode="count", strategy="bitmask", unique=True)
    assert res.status is Status.EXHAUSTED
    assert res.solutions == A002562[n - 1]
    assert res.extra["all_solutions"] == A000170[n - 1]
    # The tree counters are those of the plain count.
    plain = solve_queens(n, mode="count", strategy="bitmask")
    assert res.nodes == plain.nodes and res.checks == plain.checks


@pytest.mark.parametrize("strategy", [s for s in SEARCHES if s != "bitmask"])
def test_unique_counts_with_every_searching_strategy(strategy):
    top = 6 if strategy == "brute_force" else 8
    for n in range(1, top + 1):
        res = solve_queens(n, mode="count", strategy=strategy, unique=True)
        assert (res.solutions, res.extra["all_solutions"]) == (A002562[n - 1], A000170[n - 1])


def test_knuth_oracle_n8_recursive_count():
    # Knuth, TAOCP 4B; OEIS A319235: 2,057 tree nodes with the empty root.
    res = solve_queens(8, mode="count", strategy="recursive")
    assert (res.nodes, res.checks, res.solutions) == (2_056, 15_720, 92)


@pytest.mark.parametrize("strategy", SAME_TREE)
def test_checks_are_n_per_expanded_placement(strategy):
    # Every placement short of n queens, and the empty board, test n squares.
    for n in range(1, 10):
        res = solve_queens(n, mode="count", strategy=strategy)
        assert res.checks == n * (1 + res.nodes - res.solutions)


@pytest.mark.parametrize("n", range(1, 7), ids=lambda n: f"n{n}")
def test_brute_force_makes_every_placement(n):
    res = verified(n, solve_queens(n, mode="count", strategy="brute_force"))
    assert res.nodes == sum(n ** k for k in range(1, n + 1))
    assert res.dead_ends == n ** n - A000170[n - 1]        # complete placements that fail
    assert res.max_depth == n
    # nodes - backtracks = placements on paths to solutions, as for recursion.
    rec = solve_queens(n, mode="count", strategy="recursive")
    assert res.nodes - res.backtracks == rec.nodes - rec.backtracks
    # Checking stops at the first attacked queen: between 1 and n checks each.
    assert n ** n <= res.checks <= n * n ** n


def test_brute_force_checks_counted_row_by_row():
    # n = 2: each of the 4 complete placements fails at row 1: 2 checks each.
    res = solve_queens(2, mode="count", strategy="brute_force")
    assert (res.nodes, res.checks, res.dead_ends, res.backtracks) == (6, 8, 4, 6)


# ---------------------------------------------- same tree, same counters


def _same_tree_cases():
    return [pytest.param(n, mode, id=f"n{n}-{mode}")
            for n in range(1, 10) for mode in ("first", "count")]


@pytest.mark.parametrize("n, mode", _same_tree_cases())
def test_recursive_iterative_amb_bitmask_report_equal_counters(n, mode):
    results = {s: verified(n, solve_queens(n, mode=mode, strategy=s)) for s in SAME_TREE}
    reference = results["recursive"].counters()
    for strategy, res in results.items():
        assert res.counters() == reference, strategy
        assert res.solution == results["recursive"].solution, strategy
    # Every execution of the searched function ends with exactly one failed safety
    # test (a check that is not a placement) or one reported solution, and a
    # search that ends by itself does not restart after its last execution:
    # restarts = (checks - nodes) + solutions - 1.
    amb = results["amb"]
    assert amb.extra["amb_restarts"] == amb.checks - amb.nodes + amb.solutions - 1


def test_amb_restarts_for_8_queens():
    res = solve_queens(8, mode="count", strategy="amb")
    # 15,720 checks of which 2,056 placed a queen: 13,664 failed tests, plus 92 solutions,
    # less the first execution.
    assert res.extra["amb_restarts"] == 15_720 - 2_056 + 92 - 1 == 13_755


@pytest.mark.parametrize("n", range(1, 11), ids=lambda n: f"n{n}")
def test_functional_counts_like_recursion(n):
    fun = verified(n, solve_queens(n, mode="count", strategy="functional"))
    rec = solve_queens(n, mode="count", strategy="recursive")
    assert fun.counters() == rec.counters()
    assert fun.extra["candidates"] == fun.checks
    # Level k holds every consistent placement of k queens; the frontier starts as the
    # level of the empty board (1 placement).
    levels = [len(consistent_prefixes(n, k)) for k in range(1, n + 1)]
    assert sum(levels) == rec.nodes
    assert fun.extra["max_frontier"] == max(1, *levels)
    if n == 8:
        assert levels == [8, 42, 140, 344, 568, 550, 312, 92]
        assert fun.extra["max_frontier"] == 568


@pytest.mark.parametrize("n", [1, 4, 5, 6, 8, 10])
def test_functional_first_mode_finds_the_first_solution(n):
    fun = verified(n, solve_queens(n, mode="first", strategy="functional"))
    rec = solve_queens(n, mode="first", strategy="recursive")
    assert fun.status is Status.SOLVED and fun.solution == rec.solution
    # It builds whole levels first, so it makes at least the placements recursion makes.
    assert fun.nodes >= rec.nodes
    # It stops at the first solution while extending level n-1: the solution's path and
    # the level-(n-1) placements from the solution's parent on, which still wait to be
    # extended, are not discarded; every other placement is a backtrack.
    waiting = [p for p in consistent_prefixes(n, n - 1) if p >= fun.solution[:-1]]
    assert fun.nodes - fun.backtracks == distinct_prefixes([fun.solution, *waiting])


@pytest.mark.parametrize("strategy", SEARCHES)
def test_first_mode_finds_lexicographically_first_solution(strategy):
    for n in range(1, 9 if strategy != "brute_force" else 7):
        res = verified(n, solve_queens(n, mode=Mode.FIRST, strategy=strategy))
        if A000170[n - 1]:
            assert res.status is Status.SOLVED and res.solutions == 1
            assert res.solution == solve_queens(n, strategy="recursive").solution
        else:
            assert res.status is Status.EXHAUSTED and res.solution is None
            assert res.solutions == 0


def test_first_mode_solution_path_is_not_backtracked():
    res = solve_queens(8, strategy="recursive")
    assert res.solution == (0, 4, 7, 5, 2, 6, 1, 3)
    assert res.nodes - res.backtracks == 8
    assert res.max_depth == 8


@pytest.mark.parametrize("n", [1, 4, 8, 12])
def test_bitmask_mirror_walk_and_its_counters(n):
    res = solve_queens(n, mode="count", strategy="bitmask")
    # Half the first row is walked and its counters doubled.
    assert res.extra["walked_nodes"] < res.nodes or n == 1
    assert res.counters() == solve_queens(n, mode="count", strategy="recursive").counters()


# ------------------------------------------------------------------ budgets


@pytest.mark.parametrize("strategy", SEARCHES)
def test_node_limit_stops_at_the_budget(strategy):
    n, budget = 8, 500   # a count needing more than 500 placements
    res = solve_queens(n, mode="count", strategy=strategy, max_nodes=budget)
    assert res.status is Status.NODE_LIMIT
    assert res.nodes == budget
    # nodes - backtracks = placements on paths to the solutions reported within the
    # budget, plus those still on the board when the search stops.
    if strategy == "functional":
        # It stops while building level 4 (levels 1..3 hold 8 + 42 + 140 = 190
        # placements, level 4 would hold 344 more); no placement has been discarded yet.
        assert (res.dead_ends, res.solutions, res.nodes - res.backtracks) == (0, 0, budget)
    else:
        # A depth-first search: the reference order of its placements, the solutions
        # among the first 500, and the path of the 501st placement's parent.
        tree = dfs_placements(n, prune=strategy != "brute_force")
        made = [next(tree) for _ in range(budget + 1)]
        found = [p for p in made[:budget] if len(p) == n and check_queens_ok(n, p)]
        on_board = made[budget][:-1]
        assert res.solutions == len(found)
        assert res.nodes - res.backtracks == distinct_prefixes([*found, on_board])
        # rows tree: 12 solutions within 500 placements; brute force: none, and the
        # 501st placement is a row-7 assignment below a path of 7.
        assert (res.solutions, res.nodes - res.backtracks) == (
            (0, 7) if strategy == "brute_force" else (12, 85))
    verified(n, res)


@pytest.mark.parametrize("budget", [1, 2, 7, 100, 1_000, 2_055, 2_056, 2_057])
@pytest.mark.parametrize("mode", ["first", "count"])
def test_same_tree_strategies_agree_under_node_budget(budget, mode):
    results = [solve_queens(8, mode=mode, strategy=s, max_nodes=budget) for s in SAME_TREE]
    for res in results:
        assert res.counters() == results[0].counters()
        assert res.solution == results[0].solution
        verified(8, res)
    needed = solve_queens(8, mode=mode, strategy="recursive").nodes
    if budget < needed:
        assert results[0].status is Status.NODE_LIMIT and results[0].nodes == budget
    else:
        assert results[0].status is not Status.NODE_LIMIT and results[0].nodes == needed


def test_budget_that_suffices_is_not_a_limit():
    res = solve_queens(8, mode="count", strategy="bitmask", max_nodes=2_056)
    assert res.status is Status.EXHAUSTED and res.solutions == 92


@pytest.mark.parametrize("strategy", ["recursive", "iterative", "bitmask", "functional"])
def test_time_limit(strategy):
    res = solve_queens(28, mode="count", strategy=strategy, max_seconds=0.05)
    assert res.status is Status.TIME_LIMIT
    # The clock is read every CLOCK_EVERY placements, before the next one (functional:
    # every CLOCK_EVERY candidates, most of which it rejects; recursive and iterative:
    # every 512, as a row of 28 columns is more than CLOCK_WORK / CLOCK_EVERY
    # candidates); 28-queens is far more than 0.05 s of work (for bitmask: its first
    # half-walk alone).
    read_at = res.checks if strategy == "functional" else res.nodes
    every = 512 if strategy in ("recursive", "iterative") else Budget.CLOCK_EVERY
    assert Budget.clock_mask(28) == 511
    assert res.nodes > 0 and read_at % every == 0
    verified(28, res)


# ------------------------------------------------------------------ symmetry


def test_is_canonical_picks_one_per_class():
    res = solve_queens(8, mode="count", strategy="recursive", unique=True)
    assert res.solutions == 12
    assert is_canonical((0, 4, 7, 5, 2, 6, 1, 3))          # the first 8-queens solution
    assert not is_canonical((7, 3, 0, 2, 5, 1, 6, 4))      # its mirror image
    assert is_canonical((0,))


# ------------------------------------------------------------- constructions


@pytest.mark.parametrize("n", range(4, 301))
def test_formula_construction_verified(n):
    cols = construct_queens(n)
    check_queens(n, cols)


@pytest.mark.parametrize("k", range(1, 8), ids=lambda k: f"5^{k}")
def test_product_construction_verified_and_self_similar(k):
    n = 5 ** k
    cols = construct_queens(n, method="product")
    check_queens(n, cols)
    smaller = construct_queens(n // 5, method="product")
    # The 5^(k-1) solution is the top-left block of the 5^k one.
    assert cols[: n // 5] == smaller
    assert [c // (n // 5) for c in cols[:: n // 5]] == list(PRODUCT_SEED)


def test_formula_construction_one_million():
    n = 1_000_000
    cols = construct_queens(n)
    check_queens(n, cols)
    res = solve_queens(n, strategy="construction")
    assert res.status is Status.SOLVED
    assert (res.nodes, res.backtracks, res.dead_ends, res.checks, res.max_depth) == (n, 0, 0, n, n)
    check_queens(n, res.solution)


def test_construction_small_boards():
    assert construct_queens(1) == [0]
    assert construct_queens(1, method="product") == [0]
    one = solve_queens(1, strategy="construction")
    assert one.status is Status.SOLVED and one.solution == (0,)
    for n in (2, 3):
        with pytest.raises(ValueError, match="no solution"):
            construct_queens(n)
        res = solve_queens(n, strategy="construction")
        assert res.status is Status.EXHAUSTED and res.solution is None and res.nodes == 0
    res = solve_queens(25, strategy="construction", method="product")
    assert res.status is Status.SOLVED and res.solution[:5] == PRODUCT_SEED
    check_queens(25, res.solution)


def test_construction_budget():
    res = solve_queens(100, strategy="construction", max_nodes=99)
    assert res.status is Status.NODE_LIMIT and res.nodes == 0 and res.solution is None
    assert solve_queens(100, strategy="construction", max_nodes=100).status is Status.SOLVED


# ------------------------------------------------------------------ checker


@pytest.mark.parametrize("cols, message", [
    pytest.param((0, 0, 3, 1), "column 0 already", id="column-clash"),
    pytest.param((0, 1, 3, 2), "diagonal", id="diagonal-clash"),
    pytest.param((3, 2, 0, 1), "diagonal", id="anti-diagonal-clash"),
    pytest.param((1, 3, 0), "has 3 queens", id="too-short"),
    pytest.param((1, 3, 0, 2, 4), "has 5 queens", id="too-long"),
    pytest.param((1, 3, 0, 4), "off the", id="off-board"),
    pytest.param((1, 3, 0, -1), "off the", id="negative-column"),
])
def test_checker_rejects_broken_placements(cols, message):
    check_queens(4, (1, 3, 0, 2))   # a solution passes
    with pytest.raises(InvalidSolution, match=message):
        check_queens(4, cols)


# --------------------------------------------------------------- bad input


@pytest.mark.parametrize("kwargs, message", [
    pytest.param({"n": 0}, "at least 1", id="n-zero"),
    pytest.param({"n": 4, "strategy": "genetic"}, "unknown N-Queens strategy", id="strategy"),
    pytest.param({"n": 4, "mode": "all"}, "not a valid Mode", id="mode"),
    pytest.param({"n": 4, "method": "formula"}, "construction strategy only", id="method"),
    pytest.param({"n": 4, "unique": True}, "mode='count'", id="unique-first"),
    pytest.param({"n": 4, "strategy": "construction", "mode": "count"}, "mode='first'",
                 id="construction-count"),
    pytest.param({"n": 10, "strategy": "construction", "method": "product"}, "5\\^k",
                 id="product-n"),
    pytest.param({"n": 5, "strategy": "construction", "method": "spiral"},
                 "unknown construction", id="construction-method"),
    pytest.param({"n": 4, "max_nodes": 0}, "positive", id="budget"),
])
def test_bad_arguments_raise_value_error(kwargs, message):
    n = kwargs.pop("n")
    with pytest.raises(ValueError, match=message):
        solve_queens(n, **kwargs)


def test_construct_queens_rejects_bad_method_and_n():
    with pytest.raises(ValueError, match="unknown construction"):
        construct_queens(8, method="spiral")
    with pytest.raises(ValueError, match="5\\^k"):
        construct_queens(30, method="product")
    with pytest.raises(ValueError, match="at least 1"):
        construct_queens(0)
