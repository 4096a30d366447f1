"""Every strategy of both problems keeps to its time budget: a trial with ``budget.seconds``
returns within 10% + 0.5 s of it, setup and verification included, and its status says
what it found (a placement built and verified is ``solved``, never ``time_limit``).

The default suite runs every strategy and engine once with a 1-second budget on an
instance that needs longer; the slow part adds instances whose setup or verification
is the long part (boards of millions of squares, ten million queens).
"""

from __future__ import annotations

import dataclasses
import gc
import time

import pytest

from btlab.config.model import parse_config
from btlab.errors import ConfigError
from btlab.execution.execute import run_trial
from btlab.experiments.knights.solve import STRATEGIES as KNIGHT_STRATEGIES
from btlab.experiments.queens.solve import STRATEGIES as QUEEN_STRATEGIES
from btlab.problems import get_problem
from btlab.sweep.expand import expand

#: README, "When things go wrong": within 10% + 0.5 s of the budget.
FACTOR, GRACE = 1.1, 0.5

#: An instance per (strategy, engine) that runs past a 1-second budget.
QUEENS = {
    "brute_force": "{n: 13, mode: count}",
    "recursive": "{n: 16, mode: count}",
    "iterative": "{n: 16, mode: count}",
    "amb": "{n: 16, mode: count}",
    "functional": "{n: 14, mode: count}",
    "bitmask": "{n: 16, mode: count}",
    "construction": "{n: 2000000}",
}
KNIGHTS = {
    "recursive": "{board: [8, 8], start: [0, 1], mode: count}",
    "iterative": "{board: [8, 8], start: [0, 1], mode: count}",
    "amb": "{board: [8, 8], start: [0, 1], mode: count}",
}
COMPILED = {
    ("n_queens", "bitmask"): "{n: 64, mode: count}",
    ("knights_tour", "iterative"): "{board: [8, 8], start: [0, 1], mode: count}",
}


def _cases():
    for name, strategy in QUEEN_STRATEGIES.items():
        yield pytest.param("n_queens", strategy.name, "python", QUEENS[name],
                           id=f"queens-{name}-python")
    for name, strategy in KNIGHT_STRATEGIES.items():
        yield pytest.param("knights_tour", strategy.name, "python", KNIGHTS[name],
                           id=f"knights-{name}-python")
    for (problem, name), fixed in COMPILED.items():
        registry = QUEEN_STRATEGIES if problem == "n_queens" else KNIGHT_STRATEGIES
        assert "compiled" in registry[name].engines
        yield pytest.param(problem, name, "compiled", fixed, id=f"{problem}-{name}-compiled")


def test_every_strategy_and_engine_has_a_case():
    compiled = {(p, s.name) for p, reg in (("n_queens", QUEEN_STRATEGIES),
                                          ("knights_tour", KNIGHT_STRATEGIES))
                for s in reg.values() if "compiled" in s.engines}
    assert set(QUEENS) == set(QUEEN_STRATEGIES)
    assert set(KNIGHTS) == set(KNIGHT_STRATEGIES)
    assert compiled == set(COMPILED)


def timed_trial(problem: str, strategy: str, engine: str, fixed: str, seconds: float):
    fixed = f"{fixed[:-1]}, strategy: {strategy}, engine: {engine}}}"
    text = f"name: t\nproblem: {problem}\nfixed: {fixed}\nbudget: {{seconds: {seconds}}}\n"
    trial = expand(parse_config(text, "<t>"))[0]
    spec = get_problem(problem)
    gc.collect()  # the garbage of an earlier case (a ten-million-queen row) is not this one's
    if spec.prepare is not None:
        spec.prepare(trial.columns)  # loading the kernels is not the trial's time (compile_ns)
    t0 = time.perf_counter()
    row = run_trial(trial)
    return row, time.perf_counter() - t0


def check(row: dict, elapsed: float, seconds: float, first: bool) -> None:
    assert row["error"] is None, row["error"]
    assert elapsed <= seconds * FACTOR + GRACE, (elapsed, row["status"], row["nodes"])
    assert row["wall_ns"] / 1e9 <= seconds * FACTOR + GRACE
    assert row["status"] in ("time_limit", "solved", "exhausted")
    if first:  # a solution found (and verified) is solved; time_limit holds none
        assert (row["status"] == "solved") == (row["solution"] is not None), row["status"]
        assert (row["status"] == "solved") == (row["solutions"] == 1)


@pytest.mark.parametrize("problem, strategy, engine, fixed", list(_cases()))
def test_a_time_budget_holds_for_every_strategy(problem, strategy, engine, fixed):
    row, elapsed = timed_trial(problem, strategy, engine, fixed, 1.0)
    check(row, elapsed, 1.0, "count" not in fixed)
    if strategy != "construction":
        assert row["status"] == "time_limit"


@pytest.mark.slow
@pytest.mark.parametrize("problem, strategy, engine, fixed, seconds", [
    ("n_queens", "construction", "python", "{n: 10000000}", 2.0),
    ("n_queens", "construction", "python", "{n: 9765625, method: product}", 2.0),
    ("n_queens", "construction", "python", "{n: 10000000}", 0.2),
    ("n_queens", "recursive", "python", "{n: 5000}", 2.0),
    ("n_queens", "iterative", "python", "{n: 100000}", 2.0),
    ("n_queens", "bitmask", "python", "{n: 100000}", 2.0),
    ("n_queens", "functional", "python", "{n: 1000}", 2.0),
    ("n_queens", "amb", "python", "{n: 1000}", 2.0),
    ("n_queens", "brute_force", "python", "{n: 30}", 2.0),
    ("knights_tour", "recursive", "python",
     "{board: [500, 500], start: [0, 0], heuristic: warnsdorff}", 2.0),
    ("knights_tour", "iterative", "python",
     "{board: [2000, 2000], start: [0, 0], heuristic: warnsdorff}", 2.0),
    ("knights_tour", "iterative", "compiled",
     "{board: [2000, 2000], start: [0, 0], heuristic: warnsdorff}", 2.0),
    ("knights_tour", "iterative", "compiled",
     "{board: [1000, 1000], start: [0, 0], heuristic: warnsdorff}", 5.0),
])
def test_a_time_budget_holds_through_setup_and_verification(problem, strategy, engine, fixed,
                                                              seconds):
    row, elapsed = timed_trial(problem, strategy, engine, fixed, seconds)
    check(row, elapsed, seconds, "count" not in fixed)


# ----------------------------------------------------------- the vectorised checkers


def _same_outcome(fast, exact, *args) -> None:
    """``fast(*args)`` raises what ``exact(*args)`` raises, with the same message, or nothing."""
    def outcome(fn):
        try:
            fn(*args)
        except Exception as exc:  # noqa: BLE001 - compared below
            return type(exc), str(exc)
        return None
    assert outcome(fast) == outcome(exact)


def test_fast_queens_checker_agrees_with_the_exact_one():
    from btlab.experiments.checker import check_queens
    from btlab.experiments.checker_fast import FAST_FROM, check_queens_fast
    from btlab.experiments.queens.solve import construct_queens

    n = FAST_FROM + 7
    good = construct_queens(n)
    check_queens_fast(n, good)
    swapped = list(good)
    swapped[10], swapped[11] = swapped[11], swapped[10]
    shifted = [c + 1 for c in good]
    floats = [float(c) for c in good]
    for bad in (swapped, shifted, floats, good[:-1], [*good[:-1], good[0]]):
        _same_outcome(check_queens_fast, check_queens, n, bad)


def test_fast_tour_checker_agrees_with_the_exact_one():
    from btlab.experiments.checker import check_tour
    from btlab.experiments.checker_fast import check_tour_fast
    from btlab.experiments.compiled import solve_knights_compiled

    tour = list(solve_knights_compiled(80, 80, (0, 0), heuristic="warnsdorff").solution)
    check_tour_fast(80, 80, (0, 0), tour)
    swapped = list(tour)
    swapped[100], swapped[101] = swapped[101], swapped[100]
    floats = [float(s) for s in tour]
    for args in ((80, 80, (0, 0), swapped), (80, 80, (0, 1), tour), (80, 80, (0, 0), floats),
                 (80, 80, (0, 0), tour[:-1]), (80, 80, (0, 0), tour, True)):
        _same_outcome(check_tour_fast, check_tour, *args)


# ------------------------------------------------ a budget smaller than the setup


@pytest.mark.parametrize("problem, strategy, engine, fixed", [
    ("n_queens", "construction", "python", "{n: 10000000}"),
    ("n_queens", "construction", "python", "{n: 9765625, method: product}"),
    ("knights_tour", "recursive", "python",
     "{board: [500, 500], start: [0, 0], heuristic: warnsdorff}"),
    ("knights_tour", "iterative", "python",
     "{board: [2000, 2000], start: [0, 0], heuristic: warnsdorff}"),
    ("knights_tour", "iterative", "python", "{board: [1, 4000000], start: [0, 0]}"),
    ("knights_tour", "iterative", "compiled",
     "{board: [2000, 2000], start: [0, 0], heuristic: warnsdorff}"),
])
def test_a_one_millisecond_budget_holds_on_the_biggest_boards(problem, strategy, engine, fixed):
    # the setup (a board's tables, building ten million queens) takes up to a second
    # in one piece: it is read against the clock too, so 1 ms stops it in well under 0.5 s
    row, elapsed = timed_trial(problem, strategy, engine, fixed, 0.001)
    check(row, elapsed, 0.001, True)
    assert row["status"] == "time_limit"
    assert row["solutions"] == 0 and row["solution"] is None


def test_the_compiled_geometry_filled_in_blocks_is_the_reference_board():
    from btlab.experiments.compiled.knights import kernel as knights_kernel
    from btlab.experiments.knights.board import DEFAULT_MOVE_ORDER, KnightBoard

    rows, cols = 301, 250  # above the per-process cache; blocks of 262 rows
    nbr, count, dist2, maxd2 = knights_kernel.geometry(rows, cols, DEFAULT_MOVE_ORDER)
    board = KnightBoard(rows, cols)
    assert board.build_tables(lambda: False)
    assert [tuple(nbr[sq, :count[sq]].tolist()) for sq in range(rows * cols)] == list(
        board.neighbours)
    assert dist2.tolist() == list(board.centre_distance2)
    assert maxd2 == max(board.centre_distance2)
    assert knights_kernel.geometry(rows, cols, DEFAULT_MOVE_ORDER, lambda: True) is None


# ------------------------------------------------ placements that cost much


def test_the_clock_is_read_more_often_when_a_placement_looks_at_many_candidates():
    from btlab.experiments.core import Budget

    assert Budget.clock_mask() == Budget.clock_mask(8) == 1023
    assert Budget.clock_mask(16) == 1023
    assert Budget.clock_mask(100) == 127
    assert Budget.clock_mask(10_000) == 0
    assert Budget.clock_mask(Budget.CLOCK_WORK) == 0


@pytest.mark.parametrize("strategy", ["recursive", "iterative"])
def test_a_time_budget_holds_for_a_slow_plug_in_heuristic(tmp_path, monkeypatch, strategy):
    # 5 ms a call: 1,024 placements between two readings of the clock would be 5 s
    (tmp_path / "slow_rule.py").write_text(
        "import time\n\n\ndef slow(board, square, candidates):\n"
        "    time.sleep(0.005)\n    return list(candidates)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    fixed = '{board: [8, 8], start: [0, 1], mode: count, heuristic: "slow_rule:slow"}'
    row, elapsed = timed_trial("knights_tour", strategy, "python", fixed, 0.5)
    check(row, elapsed, 0.5, False)
    assert row["status"] == "time_limit"
    assert 20 <= row["nodes"] <= 120  # about 100 placements of 5 ms in 0.5 s


@pytest.mark.parametrize("strategy", ["recursive", "iterative"])
def test_a_time_budget_holds_on_ten_thousand_queens(strategy):
    # a row of 10,000 columns: 1,024 placements between two readings took over a second
    row, elapsed = timed_trial("n_queens", strategy, "python", "{n: 10000, mode: first}", 0.5)
    check(row, elapsed, 0.5, True)


@pytest.mark.parametrize("engine", ["python", "compiled"])
def test_a_budget_of_centuries_is_no_budget(engine):
    # 1e300 s is a valid float: its nanoseconds overflowed, and every trial raised
    from btlab.experiments.core import Budget

    budget = Budget(None, 1e300)
    budget.start()
    assert not budget.out_of_time()
    # a config refuses it (at most 1,000,000 s); a trial made in Python runs it as no deadline
    with pytest.raises(ConfigError, match="budget.seconds"):
        timed_trial("n_queens", "bitmask", engine, "{n: 6, mode: count}", "1.0e300")
    text = f"name: t\nproblem: n_queens\nfixed: {{n: 6, mode: count, strategy: bitmask, " \
           f"engine: {engine}}}\nbudget: {{seconds: 60}}\n"
    trial = dataclasses.replace(expand(parse_config(text, "<t>"))[0], budget_seconds=1e300)
    row = run_trial(trial)
    assert row["error"] is None and row["status"] == "exhausted" and row["solutions"] == 4
