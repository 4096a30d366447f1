"""``mode: estimate`` refuses what it cannot honour: a strategy whose count-mode tree is not
the one the estimator estimates, and a backtrack budget (a probe never backtracks)."""

from __future__ import annotations

import pytest

from experiments.queens import solve_queens
from runner.config import parse_config
from runner.errors import ConfigError
from runner.problems import get_problem
from runner.sweep import expand
from tests.helpers.cli import run_main, write

QUEENS = "name: q\nproblem: n_queens\nprobes: 100\n"
KNIGHTS = ("name: k\nproblem: knights_tour\nprobes: 100000000\n"
           "fixed: {board: 8, mode: estimate, strategy: iterative}\n")


def refusal(tmp_path, capsys, text: str, *args: str) -> str:
    """The message of ``text`` refused, from parse+expand and from ``btlab validate``."""
    with pytest.raises(ConfigError) as info:
        expand(parse_config(text, "t.yaml"))
    path = write(tmp_path / "t.yaml", text)
    assert run_main("validate", path, *args) == 2
    err = " ".join(capsys.readouterr().err.split())
    message = " ".join(str(info.value).split())
    return message if not args else err


@pytest.mark.parametrize("strategy, why", [
    ("brute_force", "it walks another tree: every one of the n^n placements"),
    ("construction", "it has no count mode"),
])
def test_queens_estimate_refuses_a_strategy_of_another_tree(tmp_path, capsys, strategy, why):
    # brute_force's count tree is not the row-by-row tree the probes walk
    assert solve_queens(6, mode="count", strategy="brute_force").nodes != solve_queens(
        6, mode="count", strategy="recursive").nodes
    text = QUEENS + f"fixed: {{n: 6, mode: estimate, strategy: {strategy}}}\n"
    message = refusal(tmp_path, capsys, text)
    assert "error at fixed.strategy" in message
    assert "recursive, iterative, amb, functional, bitmask" in message
    assert why in message and "set strategy: recursive" in message


@pytest.mark.parametrize("strategy", ["recursive", "iterative", "amb", "functional", "bitmask"])
def test_queens_estimate_runs_on_strategies_of_the_estimated_tree(strategy):
    """Each of them counts the placements the probes estimate (2,056 for n = 8)."""
    assert solve_queens(8, mode="count", strategy=strategy).nodes == 2056
    trial = expand(parse_config(QUEENS + f"fixed: {{n: 8, mode: estimate, "
                                         f"strategy: {strategy}}}\n"))[0]
    assert trial.probes == 100 and trial.columns["strategy"] == strategy
    assert get_problem("n_queens").estimate_trees == ("rows", "functional")


@pytest.mark.parametrize("budget, where", [
    ("budget: {backtracks: 0}\n", "error at budget.backtracks"),
    ("budget: {nodes: 1000}\nmatrix: {budget: [{nodes: 5}, {backtracks: 3}]}\n",
     "error at matrix.budget[1].backtracks"),
])
def test_estimate_refuses_a_backtrack_budget(tmp_path, capsys, budget, where):
    """Before, the budget was ignored: 10^8 probes ran with nothing to stop them."""
    message = refusal(tmp_path, capsys, KNIGHTS + budget)
    assert where in message
    assert "a probe never backtracks" in message
    assert "use budget.nodes or budget.seconds" in message


def test_estimate_refuses_a_backtrack_budget_given_in_an_override(tmp_path, capsys):
    err = refusal(tmp_path, capsys, KNIGHTS + "budget: {backtracks: 2}\n",
                  "budget={backtracks: 0}")
    assert "override 1 (budget={backtracks: 0}): error at budget.backtracks" in err
