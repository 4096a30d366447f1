"""``mode: estimate`` refuses what it cannot honour: a strategy whose count-mode tree is not
the one the estimator estimates, and a backtrack budget (a probe never backtracks); and a
tree above 10^154 placements has a finite standard error beside its finite estimate."""

from __future__ import annotations

import math
from fractions import Fraction

import pandas as pd
import pytest

from btlab.config.model import parse_config
from btlab.errors import ConfigError
from btlab.experiments.estimate import Moments, knuth_knights
from btlab.experiments.queens.solve import solve_queens
from btlab.problems import get_problem
from btlab.sweep.expand import expand
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


# --------------------------------------------------------------------------- huge trees


def exact_mean_se(values):
    """Mean and standard error of the mean, in exact rational arithmetic."""
    xs = [Fraction(v) for v in values]
    mean = sum(xs) / len(xs)
    var = sum((x - mean) ** 2 for x in xs) / (len(xs) - 1) / len(xs)
    return float(mean), math.sqrt(float(var / mean ** 2)) * float(mean)


@pytest.mark.parametrize("values", [
    [1e300, 3e300, 2e300],
    [1.0, 2.0, 1e200, 1e300, 7.5e307],
    [1e160, 2e160],
    [5.0, 6.0, 9.0],
])
def test_moments_of_values_beyond_1e154_have_a_finite_standard_error(values):
    """Before, M2 (the squared deviations) overflowed: a finite estimate of 1.8e296
    placements came with an infinite standard error."""
    m = Moments()
    for v in values:
        m.add(v)
    mean, se = m.summary()
    want_mean, want_se = exact_mean_se(values)
    assert mean == pytest.approx(want_mean, rel=1e-12)
    assert se == pytest.approx(want_se, rel=1e-9)


def test_both_engines_give_a_finite_equal_standard_error_on_30x30():
    got = [knuth_knights(30, 30, (0, 0), closed=False, probes=20, seed=0, engine=e) for e in
           ("python", "compiled")]
    assert got[0] == got[1]
    assert got[0].estimate == pytest.approx(4.136935164042993e276, rel=1e-12)
    assert got[0].estimate_se == pytest.approx(4.136935164041563e276, rel=1e-12)


def test_a_time_budget_spent_building_the_board_gives_an_empty_estimate():
    est = knuth_knights(400, 400, (0, 0), closed=False, probes=5, seed=1, max_seconds=1e-9)
    assert (est.status.value, est.probes, est.nodes, est.estimate) == ("time_limit", 0, 0, None)


# --------------------------------------------------------------------------- unique


def test_queens_estimate_takes_unique(tmp_path):
    """The probes' solutions_estimate counts solutions up to symmetry (n = 8: 12 of 92);
    the tree, and so the placements estimate, is the same."""
    text = QUEENS.replace("probes: 100", "probes: 20000") + (
        "fixed: {n: 8, mode: estimate, strategy: bitmask}\n"
        "matrix: {unique: [false, true], engine: [python, compiled]}\n")
    assert [t.columns["unique"] for t in expand(parse_config(text))] == [False] * 2 + [True] * 2
    path = write(tmp_path / "q.yaml", text)
    assert run_main("run", path, "--out", tmp_path / "out", "--backend", "serial",
                    "--quiet") == 0
    df = pd.read_parquet(tmp_path / "out")
    for unique, exact in ((False, 92), (True, 12)):
        rows = df[df["unique"] == unique]
        assert len(rows) == 2 and rows["solutions_estimate"].nunique() == 1  # both engines
        est, se = rows["solutions_estimate"].iloc[0], rows["solutions_estimate_se"].iloc[0]
        assert abs(est - exact) < 4 * se, (unique, est, se)
        assert abs(rows["estimate"].iloc[0] - 2056) < 4 * rows["estimate_se"].iloc[0]


def test_unique_stays_refused_in_mode_first(tmp_path, capsys):
    message = refusal(tmp_path, capsys, "name: q\nproblem: n_queens\n"
                      "fixed: {n: 8, unique: true}\n")
    assert "error at fixed.unique" in message
    assert "unique: true only with mode: count or estimate" in message


# --------------------------------------------------------------------------- report


@pytest.mark.slow
def test_report_lists_no_estimate_trial_as_a_hardest_start(tmp_path):
    """The probes' placements are their own cost, not how hard a start is: the report's
    hardest-and-censored table holds the searches only (the estimates have a table)."""
    from btlab.views.report.page import render_report
    path = write(tmp_path / "m.yaml", """\
        name: m
        problem: knights_tour
        fixed: {board: 5, start: [0, 0], tie_break: random}
        matrix: {seed: [1, 2], mode: [first, estimate]}
        include: [{mode: estimate, probes: 50}]
        budget: {nodes: 20000}
        """)
    assert run_main("run", path, "--out", tmp_path / "out", "--backend", "serial",
                    "--quiet") == 0
    page = render_report(tmp_path / "out")
    cases = page[page.index("Hardest and censored"):page.index("Every start")]
    assert "estimate" not in cases and "probes" not in cases
    assert "<td>2: (0, 0), (0, 0)</td>" in cases  # the two searches, censored
    assert "Knuth&#x27;s estimates" in page or "Knuth's estimates" in page
