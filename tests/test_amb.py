"""McCarthy's Amb operator on its own, and the ``amb`` strategies of both problems
against plain recursion on the same tree."""

from __future__ import annotations

import time

import pytest

from btlab.experiments import amb as amb_module
from btlab.experiments.amb import Amb, NondeterministicFunction, NoSolution
from btlab.experiments.checker import check_queens, check_tour
from btlab.experiments.core import Status
from btlab.experiments.knights.solve import HEURISTICS, TIE_BREAKS, solve_knights_tour
from btlab.experiments.queens.solve import solve_queens


def pythagorean(amb):
    a = amb.amb(range(1, 20))
    b = amb.amb(range(a, 20))
    c = amb.amb(range(b, 30))
    amb.require(a * a + b * b == c * c)
    return a, b, c


# ------------------------------------------------------------ the operator


def test_first_solution():
    assert Amb().run_first(pythagorean) == (3, 4, 5)


def test_all_solutions_in_depth_first_order():
    expected = [(a, b, c) for a in range(1, 20) for b in range(a, 20) for c in range(b, 30)
                if a * a + b * b == c * c]
    assert list(Amb().run_all(pythagorean)) == expected
    assert expected[:2] == [(3, 4, 5), (5, 12, 13)]


def test_nested_choices_in_helper_functions():
    def pick_pair(amb, items):
        x = amb.amb(items)
        y = amb.amb([i for i in items if i > x])   # depends on the first choice
        return x, y

    def sums_to_five(amb):
        x, y = pick_pair(amb, [1, 2, 3, 4])
        amb.require(x + y == 5)
        word = amb.amb(["a", "b"])                  # a choice after the require
        return x, y, word

    assert list(Amb().run_all(sums_to_five)) == [(1, 4, "a"), (1, 4, "b"), (2, 3, "a"),
                                                 (2, 3, "b")]


def test_choices_from_any_iterable():
    def fn(amb):
        x = amb.amb(c for c in "xyz")
        amb.require(x != "x")
        return x

    assert list(Amb().run_all(fn)) == ["y", "z"]


def test_no_solution():
    def impossible(amb):
        x = amb.amb(range(5))
        amb.require(x > 10)
        return x

    op = Amb()
    with pytest.raises(NoSolution):
        op.run_first(impossible)
    assert list(op.run_all(impossible)) == []
    assert op.restarts == 4 and op.choice_points == 1


def test_require_before_any_amb():
    def never(amb):
        amb.require(False)
        return amb.amb([1, 2])

    def always(amb):
        amb.require(True)
        return amb.amb([1, 2])

    op = Amb()
    assert list(op.run_all(never)) == [] and op.restarts == 0
    assert list(op.run_all(always)) == [1, 2]


def test_function_without_choices_runs_once():
    op = Amb()
    assert list(op.run_all(lambda amb: 42)) == [42]
    assert (op.restarts, op.choice_points) == (0, 0)


def test_empty_choice_list_fails_that_branch():
    def fn(amb):
        x = amb.amb([0, 1, 2])
        y = amb.amb(range(x))          # empty when x == 0
        return x, y

    op = Amb()
    assert list(op.run_all(fn)) == [(1, 0), (2, 0), (2, 1)]
    with pytest.raises(NoSolution):
        Amb().run_first(lambda amb: amb.amb([]))


def test_fail_is_require_false():
    def fn(amb):
        x = amb.amb([1, 2, 3])
        if x < 3:
            amb.fail()
        return x

    assert Amb().run_first(fn) == 3


def test_restarts_count_re_executions():
    calls = []

    def fn(amb):
        calls.append(1)
        x = amb.amb([1, 2, 3])
        amb.require(x == 3)
        return x

    op = Amb()
    assert op.run_first(fn) == 3
    # x = 1 fails, restart; x = 2 fails, restart; x = 3 succeeds.
    assert op.restarts == 2 == len(calls) - 1
    assert op.choice_points == 1
    assert op.replayed == 0

    calls.clear()

    def two_levels(amb):
        calls.append(1)
        x = amb.amb([0, 1])
        y = amb.amb([0, 1])
        amb.require(x + y == 2)
        return x, y

    assert list(op.run_all(two_levels)) == [(1, 1)]
    # Branches (0,0) (0,1) (1,0) (1,1): 4 executions, 3 restarts; x is replayed
    # on the restarts that try y = 1: (0,1) and (1,1).
    assert (op.restarts, len(calls), op.choice_points, op.replayed) == (3, 4, 3, 2)


def test_replaying_flag():
    seen = []

    def fn(amb):
        seen.append(("start", amb.replaying))
        x = amb.amb([1, 2])
        seen.append((x, amb.replaying))
        y = amb.amb([1, 2])
        seen.append((x, y, amb.replaying))
        amb.require(x + y == 4)
        return x, y

    assert Amb().run_first(fn) == (2, 2)
    assert seen == [
        ("start", False), (1, False), (1, 1, False),   # first execution: all new
        ("start", True), (1, True), (1, 2, False),      # y advanced: x replayed
        ("start", True), (2, False), (2, 1, False),     # x advanced: y is a new choice point
        ("start", True), (2, True), (2, 2, False),
    ]


def test_nondeterministic_function_is_detected():
    state = {"n": 3}

    def fn(amb):
        x = amb.amb(range(state["n"]))
        state["n"] += 1                 # depends on outside state
        amb.require(x == 2)
        return x

    with pytest.raises(NondeterministicFunction):
        Amb().run_first(fn)


def test_amb_outside_a_run_and_nested_runs():
    op = Amb()
    with pytest.raises(RuntimeError, match="outside"):
        op.amb([1, 2])
    with pytest.raises(RuntimeError, match="outside"):
        op.require(False)

    def nested(amb):
        return amb.run_first(lambda inner: 1)

    with pytest.raises(RuntimeError, match="already running"):
        op.run_first(nested)
    assert op.run_first(lambda amb: Amb().run_first(lambda inner: inner.amb([7]))) == 7


def test_except_exception_does_not_swallow_failure():
    def fn(amb):
        x = amb.amb([1, 2])
        try:
            amb.require(x == 2)
        except Exception:      # noqa: BLE001 -- the point of the test
            return "swallowed"
        return x

    assert Amb().run_first(fn) == 2


def test_other_exceptions_propagate():
    def fn(amb):
        amb.amb([1, 2])
        raise KeyError("boom")

    with pytest.raises(KeyError):
        Amb().run_first(fn)


def test_failure_does_not_accumulate_traceback():
    op = Amb()
    assert list(op.run_all(lambda amb: amb.require(amb.amb(range(2000)) < 0))) == []
    assert op.restarts == 1999
    assert amb_module._FAIL.__traceback__ is None


# ------------------------------------------------ N-Queens amb == recursive


@pytest.mark.parametrize("n, mode", [pytest.param(n, m, id=f"n{n}-{m}")
                                     for n in range(1, 10) for m in ("first", "count")])
def test_queens_amb_counters_equal_recursive(n, mode):
    amb = solve_queens(n, mode=mode, strategy="amb")
    rec = solve_queens(n, mode=mode, strategy="recursive")
    assert amb.counters() == rec.counters()
    assert amb.solution == rec.solution
    if amb.solution:
        check_queens(n, amb.solution)
    # one execution per failed safety test (checks - nodes) and per reported solution;
    # the first execution is not a restart
    assert amb.extra["amb_restarts"] == amb.checks - amb.nodes + amb.solutions - 1
    if n >= 4 and mode == "count":
        assert amb.extra["amb_replayed"] > amb.nodes   # re-execution replays the path


def test_queens_amb_time_limit_is_prompt():
    # Every failed check replays the path, so the clock is read on checks too.
    started = time.perf_counter()
    res = solve_queens(300, strategy="amb", max_seconds=0.2)
    assert res.status is Status.TIME_LIMIT and res.nodes > 0
    assert time.perf_counter() - started < 5   # a read every 1,024 placements comes far later


# ----------------------------------------------- knight's tour amb == recursive

#: Every heuristic with each tie-break that changes its order ("none" has none).
ORDERINGS = [pytest.param(h, t, id=f"{h}-{t}") for h in HEURISTICS
             for t in (TIE_BREAKS if h != "none" else ("move_order",))]


@pytest.mark.parametrize("heuristic, tie_break", ORDERINGS)
def test_knights_amb_equals_recursive_all_starts_5x5_first(heuristic, tie_break):
    # 2,000 placements find a tour from every start of the right colour with
    # both degree heuristics; the other 12 starts have no tour and stop at the
    # budget, where the counters must agree as well.
    for row in range(5):
        for col in range(5):
            kwargs = dict(mode="first", heuristic=heuristic, tie_break=tie_break, seed=11,
                          max_nodes=2_000)
            rec = solve_knights_tour(5, 5, (row, col), strategy="recursive", **kwargs)
            amb = solve_knights_tour(5, 5, (row, col), strategy="amb", **kwargs)
            assert amb.counters() == rec.counters(), (row, col)
            assert amb.solution == rec.solution
            if amb.solution:
                check_tour(5, 5, (row, col), amb.solution)
            if heuristic != "none" and (row + col) % 2 == 0:
                assert amb.status is Status.SOLVED


@pytest.mark.parametrize("heuristic, tie_break", ORDERINGS)
def test_knights_amb_equals_recursive_count_3x4(heuristic, tie_break):
    total = 0
    for row in range(3):
        for col in range(4):
            kwargs = dict(mode="count", heuristic=heuristic, tie_break=tie_break, seed=5)
            rec = solve_knights_tour(3, 4, (row, col), strategy="recursive", **kwargs)
            amb = solve_knights_tour(3, 4, (row, col), strategy="amb", **kwargs)
            assert amb.counters() == rec.counters(), (row, col)
            assert amb.solution == rec.solution
            if amb.solution:
                check_tour(3, 4, (row, col), amb.solution)
            total += amb.solutions
    assert total == 16   # OEIS A165134


def test_knights_amb_closed_tours_and_tiny_boards():
    for rows, cols, closed in [(1, 1, False), (1, 1, True), (3, 3, False), (3, 4, True),
                               (2, 3, False)]:
        for row in range(rows):
            for col in range(cols):
                kwargs = dict(mode="count", closed=closed)
                rec = solve_knights_tour(rows, cols, (row, col), strategy="recursive", **kwargs)
                amb = solve_knights_tour(rows, cols, (row, col), strategy="amb", **kwargs)
                assert amb.counters() == rec.counters(), (rows, cols, row, col, closed)


@pytest.mark.parametrize("budget", [1, 2, 10, 333, 5_000])
@pytest.mark.parametrize("heuristic", HEURISTICS)
def test_knights_amb_node_budget(budget, heuristic):
    kwargs = dict(mode="count", heuristic=heuristic, tie_break="random", seed=3,
                  max_nodes=budget)
    rec = solve_knights_tour(5, 5, (0, 0), strategy="recursive", **kwargs)
    amb = solve_knights_tour(5, 5, (0, 0), strategy="amb", **kwargs)
    assert amb.counters() == rec.counters()
    assert amb.status is Status.NODE_LIMIT and amb.nodes == budget


def test_knights_amb_time_limit():
    res = solve_knights_tour(5, 5, (0, 1), strategy="amb", mode="count", max_seconds=0.05)
    assert res.status is Status.TIME_LIMIT and res.nodes > 0


@pytest.mark.slow
def test_knights_amb_count_4x5_all_starts():
    total = 0
    for row in range(4):
        for col in range(5):
            rec = solve_knights_tour(4, 5, (row, col), strategy="recursive", mode="count")
            amb = solve_knights_tour(4, 5, (row, col), strategy="amb", mode="count")
            assert amb.counters() == rec.counters()
            total += amb.solutions
    assert total == 164   # OEIS A165134


@pytest.mark.slow
@pytest.mark.parametrize("heuristic", HEURISTICS)
def test_knights_amb_first_5x5_tour_starts_without_budget(heuristic):
    for row in range(5):
        for col in range(5):
            if (row + col) % 2:
                continue   # no tour from these: the whole 1.8M-placement tree
            rec = solve_knights_tour(5, 5, (row, col), strategy="recursive", heuristic=heuristic)
            amb = solve_knights_tour(5, 5, (row, col), strategy="amb", heuristic=heuristic)
            assert amb.counters() == rec.counters()
            assert amb.status is Status.SOLVED
            check_tour(5, 5, (row, col), amb.solution)
