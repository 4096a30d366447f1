"""Knight's tour solver: OEIS oracles, the metrics contract, equal counters across strategies."""

from __future__ import annotations

import time

import pytest

from btlab.experiments.checker import InvalidSolution, check_tour
from btlab.experiments.core import Budget, Status
from btlab.experiments.knights.solve import (
    DEFAULT_MOVE_ORDER,
    HEURISTICS,
    KnightBoard,
    SplitMix64,
    solve_knights_tour,
)

STRATEGIES = ["recursive", "iterative"]


def squares(rows, cols):
    return [(r, c) for r in range(rows) for c in range(cols)]


def reference_tours(rows, cols, start):
    """Every open tour from ``start`` (square indices), by a plain search written from the
    rules alone, independent of the solvers."""
    jumps = [(1, 2), (2, 1), (-1, 2), (-2, 1), (1, -2), (2, -1), (-1, -2), (-2, -1)]
    tours = []

    def walk(path):
        if len(path) == rows * cols:
            tours.append(tuple(path))
            return
        r, c = divmod(path[-1], cols)
        for dr, dc in jumps:
            nr, nc = r + dr, c + dc
            if 0 <= nr < rows and 0 <= nc < cols and nr * cols + nc not in path:
                walk(path + [nr * cols + nc])

    walk([start[0] * cols + start[1]])
    return tours


def count_all_starts(rows, cols, strategy="recursive"):
    total = 0
    for start in squares(rows, cols):
        res = solve_knights_tour(rows, cols, start, mode="count", strategy=strategy)
        assert res.status is Status.EXHAUSTED
        if res.solution is not None:
            check_tour(rows, cols, start, res.solution)
        total += res.solutions
    return total


# ---------------------------------------------------------------- oracles (OEIS A165134)

@pytest.mark.parametrize("strategy", STRATEGIES)
def test_5x5_from_corner_304_tours(strategy):
    res = solve_knights_tour(5, 5, (0, 0), mode="count", strategy=strategy)
    assert res.status is Status.EXHAUSTED
    assert res.solutions == 304


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_5x5_from_centre_64_tours(strategy):
    res = solve_knights_tour(5, 5, (2, 2), mode="count", strategy=strategy)
    assert res.solutions == 64


@pytest.mark.slow  # 34 s; the compiled engine's 5x5 count (test_compiled.py) runs by default
def test_5x5_all_starts_1728_tours():
    assert count_all_starts(5, 5) == 1728


@pytest.mark.parametrize("rows, cols, tours", [
    pytest.param(3, 4, 16, id="3x4"),
    pytest.param(4, 3, 16, id="4x3-transposed"),
    pytest.param(4, 5, 164, id="4x5"),
    pytest.param(5, 4, 164, id="5x4-transposed"),
    pytest.param(3, 7, 104, id="3x7"),
    pytest.param(1, 1, 1, id="1x1"),
])
def test_directed_open_tour_counts(rows, cols, tours):
    assert count_all_starts(rows, cols, "iterative") == tours


@pytest.mark.parametrize("rows, cols", [(3, 3), (4, 4), (3, 5), (3, 6), (2, 5), (1, 2)])
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_boards_without_tours_exhaust(rows, cols, strategy):
    for start in squares(rows, cols):
        res = solve_knights_tour(rows, cols, start, strategy=strategy)
        assert res.status is Status.EXHAUSTED
        assert res.solutions == 0 and res.solution is None
        # no reported solution: every placement was undone as a backtrack
        assert res.nodes == res.backtracks


# ---------------------------------------------------------------- metrics contract

def test_warnsdorff_8x8_corner_is_backtrack_free():
    res = solve_knights_tour(8, 8, (0, 0), heuristic="warnsdorff")
    assert res.status is Status.SOLVED
    counters = (res.nodes, res.backtracks, res.dead_ends, res.solutions, res.max_depth)
    assert counters == (64, 0, 0, 1, 64)
    check_tour(8, 8, (0, 0), res.solution)


@pytest.mark.parametrize("heuristic", HEURISTICS)
def test_solved_first_mode_nodes_minus_backtracks_is_board_size(heuristic):
    for start in squares(6, 6):
        res = solve_knights_tour(6, 6, start, heuristic=heuristic, max_nodes=40_000)
        if res.status is Status.SOLVED:
            assert res.nodes - res.backtracks == 36
            assert res.solutions == 1
            check_tour(6, 6, start, res.solution)


def test_count_mode_backtracks_match_solution_paths():
    # 3x4 from (0,0): nodes - backtracks = placements on paths to tours: the distinct
    # prefixes of the tours. There are 2 tours; they share their first 7 squares,
    # so 12 + 12 - 7 = 17.
    res = solve_knights_tour(3, 4, (0, 0), mode="count")
    tours = reference_tours(3, 4, (0, 0))
    prefixes = {t[:i] for t in tours for i in range(1, 13)}
    assert res.solutions == len(tours) == 2
    assert res.nodes - res.backtracks == len(prefixes) == 17


def test_dead_ends_are_leaves_without_tour():
    # 3x3: the centre is unreachable, so no square path covers it; from a corner
    # the knight walks the 8-cycle of the rim and every dead end is counted.
    # Both ways round the rim end on the square next to the start, with no unvisited
    # onward square: 2 dead ends; 1 + 7 + 7 placements, none on a tour.
    res = solve_knights_tour(3, 3, (0, 0))
    assert res.status is Status.EXHAUSTED
    assert (res.nodes, res.backtracks, res.dead_ends, res.solutions) == (15, 15, 2, 0)
    assert res.max_depth == 8


def test_node_budget_stops_exactly():
    res = solve_knights_tour(8, 8, (0, 1), max_nodes=12_345)
    assert res.status is Status.NODE_LIMIT
    assert res.nodes == 12_345
    assert res.solutions == 0


def test_node_budget_equal_to_need_is_not_a_limit():
    full = solve_knights_tour(5, 5, (0, 0), heuristic="warnsdorff")
    exact = solve_knights_tour(5, 5, (0, 0), heuristic="warnsdorff", max_nodes=full.nodes)
    assert exact == full
    short = solve_knights_tour(5, 5, (0, 0), heuristic="warnsdorff", max_nodes=full.nodes - 1)
    assert short.status is Status.NODE_LIMIT


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_time_budget_stops_near_limit(strategy):
    t0 = time.perf_counter()
    res = solve_knights_tour(8, 8, (0, 1), strategy=strategy, max_seconds=0.3)
    elapsed = time.perf_counter() - t0
    assert res.status is Status.TIME_LIMIT
    # the clock is read every CLOCK_EVERY placements, before the next one
    assert res.nodes > 0 and res.nodes % Budget.CLOCK_EVERY == 0
    assert elapsed < 0.3 * 1.1 + 0.5


# ---------------------------------------------------------------- strategies agree

@pytest.mark.parametrize("heuristic", HEURISTICS)
def test_recursive_equals_iterative_5x5_all_starts(heuristic):
    # budgeted: the starts without a tour take 1.7M placements to exhaust
    for start in squares(5, 5):
        a = solve_knights_tour(5, 5, start, heuristic=heuristic, strategy="recursive",
                               max_nodes=60_000)
        b = solve_knights_tour(5, 5, start, heuristic=heuristic, strategy="iterative",
                               max_nodes=60_000)
        assert a == b, start


@pytest.mark.slow
@pytest.mark.parametrize("heuristic", HEURISTICS)
def test_recursive_equals_iterative_5x5_all_starts_unbudgeted(heuristic):
    for start in squares(5, 5):
        a = solve_knights_tour(5, 5, start, heuristic=heuristic, strategy="recursive")
        b = solve_knights_tour(5, 5, start, heuristic=heuristic, strategy="iterative")
        assert a == b, start
        assert a.status in (Status.SOLVED, Status.EXHAUSTED)


@pytest.mark.parametrize("heuristic", HEURISTICS)
def test_recursive_equals_iterative_8x8_all_starts_budgeted(heuristic):
    for start in squares(8, 8):
        a = solve_knights_tour(8, 8, start, heuristic=heuristic, max_nodes=20_000)
        b = solve_knights_tour(8, 8, start, heuristic=heuristic, max_nodes=20_000,
                               strategy="iterative")
        assert a == b, start
        if a.solution:
            check_tour(8, 8, start, a.solution)


@pytest.mark.parametrize("tie_break", ["move_order", "random", "pohl", "roth"])
@pytest.mark.parametrize("heuristic", ["warnsdorff", "static_degree"])
def test_tie_breaks_agree_across_strategies_and_give_tours(heuristic, tie_break):
    for start in [(0, 0), (3, 4), (7, 7), (2, 5)]:
        a = solve_knights_tour(8, 8, start, heuristic=heuristic, tie_break=tie_break,
                               seed=7, max_nodes=100_000)
        b = solve_knights_tour(8, 8, start, heuristic=heuristic, tie_break=tie_break,
                               seed=7, max_nodes=100_000, strategy="iterative")
        assert a == b
        if a.solution:
            check_tour(8, 8, start, a.solution)


def test_count_mode_agrees_across_strategies_and_heuristics():
    # the heuristic reorders the tree but cannot change how many tours there are
    results = {(h, s): solve_knights_tour(3, 4, (0, 0), mode="count", heuristic=h, strategy=s)
               for h in HEURISTICS for s in STRATEGIES}
    assert len({r.solutions for r in results.values()}) == 1
    assert len({r.nodes for r in results.values()}) == 1  # same tree, only reordered
    for h in HEURISTICS:
        assert results[(h, "recursive")] == results[(h, "iterative")]


# ---------------------------------------------------------------- big boards, options

def test_recursive_warnsdorff_40x40_does_not_hit_recursion_limit():
    res = solve_knights_tour(40, 40, (0, 0), heuristic="warnsdorff", strategy="recursive")
    assert res.status is Status.SOLVED
    check_tour(40, 40, (0, 0), res.solution)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_closed_tour_6x8(strategy):
    res = solve_knights_tour(6, 8, (0, 0), heuristic="warnsdorff", tie_break="pohl",
                             closed=True, strategy=strategy, max_nodes=100_000)
    assert res.status is Status.SOLVED
    check_tour(6, 8, (0, 0), res.solution, closed=True)
    open_tour = solve_knights_tour(6, 8, (0, 0), heuristic="warnsdorff", tie_break="pohl")
    assert open_tour.nodes <= res.nodes  # every closed tour is an open tour


def test_move_order_changes_the_first_tour_but_not_the_count():
    reversed_order = tuple(reversed(DEFAULT_MOVE_ORDER))
    a = solve_knights_tour(5, 5, (0, 0), mode="count")
    b = solve_knights_tour(5, 5, (0, 0), mode="count", move_order=reversed_order)
    assert a.solutions == b.solutions == 304
    assert a.solution != b.solution
    check_tour(5, 5, (0, 0), b.solution)


def test_bad_arguments_raise_value_error():
    with pytest.raises(ValueError, match="off the"):
        solve_knights_tour(5, 5, (5, 0))
    with pytest.raises(ValueError, match="8 knight moves"):
        solve_knights_tour(5, 5, move_order=[(1, 2)] * 8)
    with pytest.raises(ValueError, match="heuristic"):
        solve_knights_tour(5, 5, heuristic="warnsdorf")
    with pytest.raises(ValueError, match="strategy"):
        solve_knights_tour(5, 5, strategy="bfs")
    with pytest.raises(ValueError, match="positive"):
        solve_knights_tour(5, 5, max_nodes=0)


def test_board_geometry():
    board = KnightBoard(8, 8)
    assert board.static_degree[0] == 2 and board.static_degree[27] == 8
    assert board.neighbours[0] == (10, 17)  # (1,2) then (2,1): move order from (0,0)
    assert sum(board.static_degree) == 336  # 168 knight-move edges on 8x8, both ways


def test_splitmix64_reference_values():
    # first outputs for seed 0 (reference implementation by S. Vigna)
    rng = SplitMix64(0)
    assert rng.next() == 0xE220A8397B1DCDAF
    assert rng.next() == 0x6E789E6AA1B965F4


# ---------------------------------------------------------------- the checker

def test_checker_rejects_broken_tours():
    res = solve_knights_tour(5, 5, (0, 0), heuristic="warnsdorff")
    tour = list(res.solution)
    check_tour(5, 5, (0, 0), tour)
    with pytest.raises(InvalidSolution, match="squares"):
        check_tour(5, 5, (0, 0), tour[:-1])
    with pytest.raises(InvalidSolution, match="twice"):
        check_tour(5, 5, (0, 0), tour[:-1] + [tour[0]])
    swapped = tour[:]
    swapped[3], swapped[4] = swapped[4], swapped[3]
    with pytest.raises(InvalidSolution, match="knight's move"):
        check_tour(5, 5, (0, 0), swapped)
    with pytest.raises(InvalidSolution, match="start"):
        check_tour(5, 5, (2, 2), tour)
    with pytest.raises(InvalidSolution, match="off the"):
        check_tour(5, 5, (0, 0), tour[:-1] + [25])
