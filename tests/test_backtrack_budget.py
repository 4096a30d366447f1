"""Backtrack budgets (``budget: {backtracks: B}``): status ``backtrack_limit``, both engines."""

from __future__ import annotations

import pandas as pd
import pytest

from btlab.config.model import parse_config
from btlab.errors import ConfigError
from btlab.experiments.compiled import solve_knights_compiled, solve_queens_compiled
from btlab.experiments.core import Budget
from btlab.experiments.knights.solve import solve_knights_tour
from btlab.experiments.queens.solve import solve_queens
from btlab.problems import get_problem
from btlab.problems.censoring import CENSORED, censored_status
from btlab.store.schema import row_schema
from btlab.sweep.expand import expand
from btlab.sweep.trial import Trial, digest
from tests.helpers.cli import run_main, write

KT_STRATEGIES = ("recursive", "iterative")
Q_STRATEGIES = ("recursive", "iterative", "bitmask")


def knights_all(rows, cols, start, heuristic="none", **kw) -> list[dict]:
    """The counters of every python strategy, then of the compiled engine."""
    out = [solve_knights_tour(rows, cols, start, strategy=s, heuristic=heuristic, **kw).counters()
           for s in KT_STRATEGIES]
    out.append(solve_knights_compiled(rows, cols, start, heuristic=heuristic, **kw).counters())
    return out


def queens_all(n, mode, **kw) -> list[dict]:
    out = [solve_queens(n, mode=mode, strategy=s, **kw).counters() for s in Q_STRATEGIES]
    out.append(solve_queens_compiled(n, mode=mode, **kw).counters())
    return out


@pytest.mark.parametrize("rows, cols, b, expected", [
    (5, 5, 3, dict(nodes=24, dead_ends=2, checks=94, max_depth=21)),
    (5, 5, 10, dict(nodes=28, dead_ends=4, checks=106, max_depth=21)),
    (6, 6, 7, dict(nodes=34, dead_ends=4, checks=154, max_depth=29)),
])
def test_knights_backtrack_limit_exact_on_both_engines(rows, cols, b, expected):
    results = knights_all(rows, cols, (0, 0), max_backtracks=b)
    assert results[0] == {"status": "backtrack_limit", "backtracks": b, "solutions": 0,
                          **expected}
    assert all(r == results[0] for r in results), results


@pytest.mark.parametrize("b", [0, 1, 2, 5, 40])
def test_knights_backtrack_limit_equal_across_strategies_and_engines(b):
    for start in ((0, 0), (0, 1), (2, 2)):
        results = knights_all(5, 5, start, max_backtracks=b)
        assert all(r == results[0] for r in results), (start, results)
        if results[0]["status"] == "backtrack_limit":
            assert results[0]["backtracks"] == b
        else:
            assert results[0]["backtracks"] <= b
    # without the budget, the same search: a budget of its own backtracks ends normally
    full = solve_knights_tour(5, 5, (0, 0)).counters()
    assert full["status"] == "solved"
    same = solve_knights_tour(5, 5, (0, 0), max_backtracks=full["backtracks"]).counters()
    assert same == full
    one_less = solve_knights_tour(5, 5, (0, 0), max_backtracks=full["backtracks"] - 1).counters()
    assert one_less["status"] == "backtrack_limit"
    assert one_less["backtracks"] == full["backtracks"] - 1


def test_warnsdorff_greedy_8x8():
    """B = 0: Warnsdorff from a corner completes a tour without a backtrack; from (3, 5) it
    meets a dead end after 60 squares and stops there."""
    solved = knights_all(8, 8, (0, 0), heuristic="warnsdorff", max_backtracks=0)
    assert solved[0] == {"status": "solved", "nodes": 64, "backtracks": 0, "dead_ends": 0,
                         "checks": 1403, "solutions": 1, "max_depth": 64}
    stuck = knights_all(8, 8, (3, 5), heuristic="warnsdorff", max_backtracks=0)
    assert stuck[0] == {"status": "backtrack_limit", "nodes": 60, "backtracks": 0,
                        "dead_ends": 1, "checks": 1352, "solutions": 0, "max_depth": 60}
    assert all(r == solved[0] for r in solved) and all(r == stuck[0] for r in stuck)


@pytest.mark.parametrize("n, mode, b, expected", [
    (8, "first", 0, dict(status="backtrack_limit", nodes=5, dead_ends=1, checks=23,
                         solutions=0, max_depth=5)),
    (5, "first", 0, dict(status="solved", nodes=5, dead_ends=0, checks=15, solutions=1,
                         max_depth=5)),
    (8, "count", 17, dict(status="backtrack_limit", nodes=23, dead_ends=8, checks=168,
                          solutions=0, max_depth=7)),
    (6, "count", 100, dict(status="backtrack_limit", nodes=123, dead_ends=37, checks=711,
                           solutions=3, max_depth=6)),
    (5, "count", 5, dict(status="backtrack_limit", nodes=38, dead_ends=3, checks=155,
                         solutions=7, max_depth=5)),
])
def test_queens_backtrack_limit_exact_on_both_engines(n, mode, b, expected):
    results = queens_all(n, mode, max_backtracks=b)
    want_bt = b if expected["status"] == "backtrack_limit" else 0
    assert results[0] == {"backtracks": want_bt, **expected}
    assert all(r == results[0] for r in results), results


def test_queens_budget_of_its_own_backtracks_ends_normally():
    full = solve_queens(6, mode="count").counters()   # 4 solutions
    assert full["status"] == "exhausted" and full["solutions"] == 4
    assert queens_all(6, "count", max_backtracks=full["backtracks"]) == [full] * 4
    short = queens_all(6, "count", max_backtracks=full["backtracks"] - 1)
    assert short[0]["status"] == "backtrack_limit"
    assert short[0]["backtracks"] == full["backtracks"] - 1
    assert all(r == short[0] for r in short)


def test_strategies_without_a_backtrack_budget_refuse_it():
    with pytest.raises(ValueError, match="amb strategy has no backtrack budget"):
        solve_knights_tour(5, 5, strategy="amb", max_backtracks=1)
    with pytest.raises(ValueError, match="functional strategy has no backtrack budget"):
        solve_queens(6, strategy="functional", max_backtracks=1)
    with pytest.raises(ValueError, match="max_backtracks must be 0 or more"):
        Budget(max_backtracks=-1)
    assert Budget(max_backtracks=0).backtrack_cap == 0


def test_censored_and_column():
    assert "backtrack_limit" in CENSORED and censored_status("backtrack_limit") is True
    names = row_schema(get_problem("knights_tour")).names
    assert names[names.index("budget_seconds") + 1] == "budget_backtracks"


def test_trial_id_includes_the_backtrack_budget_only_when_set():
    cols = {"n": 8}
    plain = Trial("n_queens", cols, 1000, None, 7, 0)
    key = {"problem": "n_queens", "params": cols, "budget_nodes": 1000, "budget_seconds": None,
           "seed": 7, "repeat": 0}
    assert plain.trial_id == digest(key)[:16]   # the id trials had before the budget existed
    greedy = Trial("n_queens", cols, 1000, None, 7, 0, budget_backtracks=0)
    assert greedy.trial_id == digest({**key, "budget_backtracks": 0})[:16]
    assert greedy.trial_id != plain.trial_id
    assert greedy.solver_seed == plain.solver_seed   # the same tree


HEAD = "name: bt\nproblem: knights_tour\n"


@pytest.mark.parametrize("body, fragments", [
    pytest.param("fixed: {board: 5}\nbudget: {backtracks: 3}\nsplit: {depth: 2}\n",
                 ["budget.backtracks", "no backtrack budget in a split search", "drop split"],
                 id="split"),
    pytest.param("fixed: {board: 5, strategy: amb}\nbudget: {backtracks: 3}\n",
                 ["fixed.strategy", "recursive, iterative", "strategy: amb"], id="amb"),
    pytest.param("fixed: {board: 5}\nbudget: {backtracks: -1}\n",
                 ["budget.backtracks", "at least 0", "-1"], id="negative"),
    pytest.param("fixed: {board: 5}\nbudget: {backtracks: true}\n",
                 ["budget.backtracks"], id="boolean"),
])
def test_bad_backtrack_budgets(body, fragments):
    with pytest.raises(ConfigError) as info:
        expand(parse_config(HEAD + body, "bt.yaml"))
    for fragment in fragments:
        assert fragment in str(info.value)


def test_queens_construction_refuses_a_backtrack_budget():
    with pytest.raises(ConfigError) as info:
        expand(parse_config("name: q\nproblem: n_queens\nfixed: {n: 8, strategy: construction}"
                            "\nbudget: {backtracks: 0}\n", "q.yaml"))
    assert "recursive, iterative, bitmask" in str(info.value)


def test_validate_exit_status(tmp_path, capsys):
    bad = write(tmp_path / "s.yaml", HEAD + "fixed: {board: 5}\nbudget: {backtracks: 3}\n"
                "split: auto\n")
    assert run_main("validate", bad) == 2
    assert "budget.backtracks" in capsys.readouterr().err
    good = write(tmp_path / "g.yaml", HEAD + "fixed: {board: 5}\nbudget: {backtracks: 0}\n")
    assert run_main("validate", good) == 0


def test_serial_run_stores_backtrack_limit_rows(tmp_path, capsys):
    config = write(tmp_path / "kt.yaml", """\
        name: bt-kt
        problem: knights_tour
        fixed: {board: [8, 8], heuristic: warnsdorff}
        matrix:
          start: [[0, 0], [3, 5]]
          engine: [python, compiled]
        include: [{engine: compiled, strategy: iterative}]
        budget: {backtracks: 0}
    """)
    out = tmp_path / "r"
    assert run_main("run", config, "--out", out, "--backend", "serial", "--quiet") == 0
    assert "0 backtracks" in capsys.readouterr().out
    df = pd.read_parquet(out)
    assert len(df) == 4 and (df["budget_backtracks"] == 0).all()
    by = df.set_index(["start_row", "engine"])
    for engine in ("python", "compiled"):
        corner, inner = by.loc[(0, engine)], by.loc[(3, engine)]
        assert (corner["status"], corner["backtracks"], corner["nodes"]) == ("solved", 0, 64)
        assert not corner["censored"]
        assert (inner["status"], inner["backtracks"], inner["nodes"]) == ("backtrack_limit", 0, 60)
        assert inner["censored"]
