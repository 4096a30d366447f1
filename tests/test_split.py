"""A split search (serial reference) reports exactly the sequential search's result.

Compared: nodes, backtracks, dead_ends, checks, solutions, max_depth, status
and the solution, for the knight's tour and N-Queens, at several split depths
(0: the whole tree is one task; deeper than the tree: all work in the top
part), in count and first mode, with node budgets falling in the top part,
inside a task and exactly at a task boundary.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass

import pytest

from btlab.experiments.core import Status
from btlab.experiments.knights.solve import solve_knights_tour
from btlab.experiments.queens.solve import STRATEGIES as QUEENS_STRATEGIES
from btlab.experiments.queens.solve import solve_queens
from btlab.experiments.split.queens import QueensSplitter
from btlab.experiments.split.subtrees import (
    SPLITTERS,
    Combined,
    NeedRerun,
    NeedTask,
    SplitError,
    auto_depth,
    combine,
    plan_split,
    run_subtree,
    run_task,
    solve_split,
)


def same(seq, split):
    assert split.counters() == seq.counters()
    assert split.solution == seq.solution
    assert split.extra.get("all_solutions") == seq.extra.get("all_solutions")


def knights(rows, cols, start, depth, **kw):
    seq = solve_knights_tour(rows, cols, start, **kw)
    params = {"rows": rows, "cols": cols, "start": start,
              **{k: v for k, v in kw.items() if k not in ("max_nodes", "max_seconds")}}
    sp = solve_split("knights_tour", params, depth, max_nodes=kw.get("max_nodes"))
    same(seq, sp)
    return seq


# --------------------------------------------------------------------------- knight's tour


@pytest.mark.parametrize("col", [pytest.param(c, marks=[] if c in (0, 5) else [pytest.mark.slow])
                                 for c in range(8)])
def test_knights_8x8_plain_first_row_budget_1e6(col):
    depth = 3 + col % 4
    seq = knights(8, 8, (0, col), depth, mode="first", heuristic="none", max_nodes=10**6)
    assert seq.status in (Status.NODE_LIMIT, Status.SOLVED)


@pytest.mark.slow
@pytest.mark.parametrize("col", range(8))
def test_knights_8x8_plain_first_row_budget_1e7(col):
    knights(8, 8, (0, col), 5, mode="first", heuristic="none", max_nodes=10**7)


@pytest.mark.parametrize("start", [(0, 0), (2, 2)])
@pytest.mark.parametrize("depth", [0, 5, 26])
def test_knights_5x5_count(start, depth):
    seq = knights(5, 5, start, depth, mode="count", heuristic="none")
    assert seq.status is Status.EXHAUSTED
    if start == (0, 0):
        assert seq.solutions == 304   # OEIS A165134: 304 directed open tours from a corner


@pytest.mark.slow
@pytest.mark.parametrize("square", range(25))
def test_knights_5x5_count_every_start(square):
    knights(5, 5, divmod(square, 5), 6, mode="count", heuristic="none")


@pytest.mark.parametrize("heuristic", ["warnsdorff", "static_degree"])
@pytest.mark.parametrize("tie_break", ["move_order", "pohl", "roth"])
@pytest.mark.parametrize("depth", [1, 4, 20, 65])
def test_knights_8x8_heuristics_every_tie_break(heuristic, tie_break, depth):
    for start in [(0, 0), (3, 5)]:
        knights(8, 8, start, depth, mode="first", heuristic=heuristic, tie_break=tie_break,
                max_nodes=5_000)


@pytest.mark.parametrize("heuristic", ["warnsdorff", "static_degree"])
def test_knights_5x5_count_heuristics(heuristic):
    knights(5, 5, (2, 2), 4, mode="count", heuristic=heuristic, tie_break="pohl")


def test_knights_closed_and_iterative():
    for depth in (2, 5, 13):
        knights(3, 4, (0, 0), depth, mode="count", closed=True)
        knights(5, 5, (0, 0), depth, mode="count", strategy="iterative", max_nodes=30_000)


@pytest.mark.parametrize("budget", [1, 2, 3, 4, 10, 57, 1000, 12345])
@pytest.mark.parametrize("depth", [1, 4, 8])
def test_knights_budgets_in_top_part_in_task_and_at_boundaries(budget, depth):
    knights(5, 5, (0, 0), depth, mode="count", max_nodes=budget)
    knights(6, 6, (0, 0), depth, mode="first", max_nodes=budget)


def test_knights_budget_exactly_at_task_boundaries():
    params = {"rows": 5, "cols": 5, "start": (0, 0), "mode": "count"}
    plan = plan_split("knights_tour", params, 4)
    results = [run_task(plan, i) for i in range(len(plan.tasks))]
    top_before = 3   # placements of depths 1..3 made before the first task
    boundary = top_before + results[0].nodes
    for budget in (boundary - 1, boundary, boundary + 1):
        seq = solve_knights_tour(5, 5, (0, 0), mode="count", max_nodes=budget)
        same(seq, solve_split("knights_tour", params, 4, max_nodes=budget))


def test_knights_random_tie_break_is_refused():
    with pytest.raises(SplitError, match="random tie-break"):
        plan_split("knights_tour", {"rows": 8, "cols": 8, "heuristic": "warnsdorff",
                                    "tie_break": "random"}, 3)


# --------------------------------------------------------------------------- N-Queens


def queens(n, depth, **kw):
    seq = solve_queens(n, **kw)
    params = {"n": n, **{k: v for k, v in kw.items() if k not in ("max_nodes", "max_seconds")}}
    sp = solve_split("n_queens", params, depth, max_nodes=kw.get("max_nodes"))
    same(seq, sp)
    return seq


A000170 = {4: 2, 5: 10, 6: 4, 7: 40, 8: 92, 9: 352, 10: 724, 11: 2680, 12: 14200}


@pytest.mark.parametrize("n", range(4, 11))
def test_queens_count(n):
    for depth in (0, 1, 2, 3, n - 1, n, n + 1, n + 5):
        seq = queens(n, depth, mode="count")
        assert seq.solutions == A000170[n]
    if n == 8:
        assert (seq.nodes, seq.checks) == (2056, 15720)   # Knuth; OEIS A319235


@pytest.mark.slow
@pytest.mark.parametrize("n", [11, 12])
def test_queens_count_large(n):
    for depth in (0, 3, 5):
        assert queens(n, depth, mode="count").solutions == A000170[n]


@pytest.mark.parametrize("n", [pytest.param(n, marks=[pytest.mark.slow] if n >= 15 else [])
                               for n in range(4, 21)])
def test_queens_first(n):
    for depth in (0, 1, 3, 6, n + 1):
        queens(n, depth, mode="first")


@pytest.mark.parametrize("strategy", ["iterative", "bitmask", "amb"])
def test_queens_other_strategies_same_counters(strategy):
    for depth in (0, 2, 4):
        seq = solve_queens(8, mode="count", strategy=strategy)
        sp = solve_split("n_queens", {"n": 8, "mode": "count", "strategy": strategy}, depth)
        assert sp.counters() == seq.counters()


def test_queens_unique():
    for depth in (0, 2, 9):
        seq = queens(8, depth, mode="count", unique=True)
        assert seq.solutions == 12   # OEIS A002562


@pytest.mark.parametrize("budget", [1, 2, 5, 8, 9, 100, 1000, 2055, 2056, 2057])
@pytest.mark.parametrize("depth", [0, 1, 2, 4, 8, 9])
def test_queens_budgets(budget, depth):
    queens(8, depth, mode="count", max_nodes=budget)
    queens(9, depth, mode="first", max_nodes=budget)


def test_queens_refuses_other_trees():
    with pytest.raises(SplitError, match="another tree"):
        plan_split("n_queens", {"n": 8, "strategy": "brute_force"}, 2)
    with pytest.raises(SplitError, match="split depth"):
        plan_split("n_queens", {"n": 8}, -1)


# --------------------------------------------------------------------------- API


def test_combine_asks_for_missing_and_budget_crossing_tasks():
    plan = plan_split("n_queens", {"n": 6, "mode": "count"}, 2)
    assert len(plan.tasks) == 20    # safe queen pairs on rows 0 and 1: 36 - 6 - 2 * 5
    results = [None] * len(plan.tasks)
    assert combine(plan, results) == NeedTask(0)
    results = [run_task(plan, i) for i in range(len(plan.tasks))]
    out = combine(plan, results)
    assert isinstance(out, Combined) and out.last_task == len(plan.tasks) - 1
    crossing = combine(plan, results, max_nodes=20)
    assert isinstance(crossing, NeedRerun)
    results[crossing.index] = run_task(plan, crossing.index, crossing.max_nodes)
    out = combine(plan, results, max_nodes=20)
    assert out.result.counters() == solve_queens(6, mode="count", max_nodes=20).counters()


def test_first_mode_last_task_is_the_deciding_one():
    plan = plan_split("n_queens", {"n": 8, "mode": "first"}, 2)
    results = [run_task(plan, i) for i in range(len(plan.tasks))]
    out = combine(plan, results)
    decided = next(i for i, r in enumerate(results) if r.solutions)
    assert out.last_task == decided
    assert out.result.solution == solve_queens(8).solution


def test_auto_depth():
    d = auto_depth("n_queens", {"n": 10, "mode": "count"}, 32)
    assert len(plan_split("n_queens", {"n": 10, "mode": "count"}, d).tasks) >= 32
    assert len(plan_split("n_queens", {"n": 10, "mode": "count"}, d - 1).tasks) < 32
    # depth 1: the 10 queens of row 0; depth 2: the pairs of non-attacking queens in
    # rows 0 and 1, n^2 - n (same column) - 2(n - 1) (same diagonal) = (n - 1)(n - 2)
    assert d == 2
    assert len(plan_split("n_queens", {"n": 10, "mode": "count"}, 1).tasks) == 10
    assert len(plan_split("n_queens", {"n": 10, "mode": "count"}, 2).tasks) == 9 * 8


def test_splitters_registry_and_unknown_problem():
    assert list(SPLITTERS) == ["knights_tour", "n_queens"]
    with pytest.raises(SplitError, match="expected one of knights_tour, n_queens"):
        plan_split("n_queen", {"n": 8}, 2)
    with pytest.raises(SplitError, match="unknown problem"):
        run_subtree("nope", {"n": 8, "mode": "count"}, ())


def test_splittable_strategies_come_from_the_registries():
    for name, entry in QUEENS_STRATEGIES.items():
        params = {"n": 6, "mode": "first", "strategy": name}
        if entry.splittable:
            plan_split("n_queens", params, 2)
        else:
            with pytest.raises(SplitError, match="another tree"):
                plan_split("n_queens", params, 2)
    with pytest.raises(SplitError, match="cannot be split"):
        plan_split("knights_tour", {"rows": 5, "cols": 5, "strategy": "nope"}, 2)


@dataclass(frozen=True)
class _RenamedQueens(QueensSplitter):
    """A user's own splitter (here: N-Queens under another name), passed as an object."""

    name: str = "my_queens"


def test_a_splitter_object_is_accepted_and_plans_pickle():
    own = _RenamedQueens()
    params = {"n": 8, "mode": "count"}
    plan = plan_split(own, params, 2)
    assert plan.problem == "my_queens" and plan.splitter == own
    plan = pickle.loads(pickle.dumps(plan))
    results = [run_task(plan, i) for i in range(len(plan.tasks))]
    out = combine(plan, results)
    assert out.result.counters() == solve_queens(8, mode="count").counters()
    assert solve_split(own, params, 3).counters() == out.result.counters()
    assert auto_depth(own, params, 32) == auto_depth("n_queens", params, 32)
