"""Config validation and sweep expansion (a pure function), from tables of cases."""

from __future__ import annotations

import textwrap

import pytest

from btlab.config.model import load_config, parse_config
from btlab.errors import ConfigError
from btlab.sweep.expand import count_trials, expand

BASE = "name: t\nproblem: knights_tour\n"


def cfg(body: str):
    return parse_config(BASE + textwrap.dedent(body), "t.yaml")


@pytest.mark.parametrize("body, n_trials, first", [
    pytest.param("fixed: {board: [5, 5]}\n", 1,
                 {"rows": 5, "cols": 5, "start_row": 0, "start_col": 0, "heuristic": "none"},
                 id="defaults"),
    pytest.param("fixed: {board: 6}\nmatrix: {start: all}\n", 36,
                 {"rows": 6, "cols": 6}, id="square-board-all-starts"),
    pytest.param("fixed: {board: [3, 4]}\nmatrix: {heuristic: [none, warnsdorff], start: all}\n",
                 24, {"heuristic": "none", "start_row": 0, "start_col": 0}, id="product"),
    pytest.param("matrix: {board: [[5, 5], [3, 4]], start: all}\n", 37,
                 {"rows": 5}, id="all-per-board"),
    pytest.param("fixed: {board: [5, 5]}\nmatrix: {heuristic: [none, warnsdorff], "
                 "strategy: [recursive, iterative]}\n"
                 "exclude: [{heuristic: none, strategy: iterative}]\n",
                 3, {"heuristic": "none", "strategy": "recursive"}, id="exclude"),
    pytest.param("fixed: {board: [5, 5]}\nmatrix: {heuristic: [none, warnsdorff]}\n"
                 "include: [{heuristic: warnsdorff, tie_break: roth}]\n",
                 2, {"heuristic": "none", "tie_break": "move_order"}, id="include-extends"),
    pytest.param("fixed: {board: [5, 5]}\nmatrix: {heuristic: [none]}\n"
                 "include: [{heuristic: warnsdorff, start: [2, 2]}]\n",
                 2, {"heuristic": "none"}, id="include-adds"),
    pytest.param("fixed: {board: [5, 5]}\nmatrix: {start: all}\nexclude: [{start: [0, 0]}]\n",
                 24, {"start_row": 0, "start_col": 1}, id="exclude-one-start"),
    pytest.param("fixed: {board: [5, 5]}\nrepeats: 3\n", 3, {"rows": 5}, id="repeats"),
    pytest.param("fixed: {board: [5, 5]}\nmatrix: {tie_break: [move_order, move_order]}\n", 1,
                 {"rows": 5}, id="duplicates-once"),
])
def test_expand(body, n_trials, first):
    config = cfg(body)
    trials = expand(config)
    assert len(trials) == n_trials
    # count_trials counts without expanding, excluded and duplicate trials too
    assert count_trials(config) == n_trials
    for key, value in first.items():
        assert trials[0].columns[key] == value
    assert len({t.trial_id for t in trials}) == n_trials


def test_include_extends_the_matching_combination():
    trials = expand(cfg("fixed: {board: [5, 5]}\nmatrix: {heuristic: [none, warnsdorff]}\n"
                        "include: [{heuristic: warnsdorff, tie_break: roth}]\n"))
    assert [(t.columns["heuristic"], t.columns["tie_break"]) for t in trials] == [
        ("none", "move_order"), ("warnsdorff", "roth")]


def test_expand_is_pure_and_ids_are_stable():
    body = "fixed: {board: [5, 5]}\nmatrix: {start: all}\nseed: 3\n"
    a, b = expand(cfg(body)), expand(cfg(body))
    assert a == b
    assert [t.trial_id for t in a] == [t.trial_id for t in b]
    # the same parameters written differently give the same trial
    c = expand(cfg("fixed: {board: 5, tie_break: move_order}\nmatrix: {start: all}\nseed: 3\n"))
    assert [t.trial_id for t in c] == [t.trial_id for t in a]
    # a different budget is a different trial
    d = expand(cfg(body + "budget: {nodes: 10}\n"))
    assert not {t.trial_id for t in d} & {t.trial_id for t in a}


def test_repeats_share_the_solver_seed():
    trials = expand(cfg("fixed: {board: [5, 5], heuristic: warnsdorff, tie_break: random}\n"
                        "repeats: 2\nseed: 9\n"))
    assert trials[0].solver_seed == trials[1].solver_seed
    assert trials[0].trial_id != trials[1].trial_id


@pytest.mark.parametrize("body, where, fragments", [
    pytest.param("fixed: {board: [8,8]}\nmatrix:\n  heuristic: [none, warnsdorf]\n",
                 "t.yaml:5:", ["matrix.heuristic[1]", "did you mean 'warnsdorff'"],
                 id="misspelt-value"),
    pytest.param("fixed: {board: [8,8], heuristc: none}\n", "t.yaml:3:",
                 ["fixed.heuristc", "did you mean 'heuristic'"], id="unknown-param"),
    pytest.param("fixed: {board: [8,8]}\nrepeat: 2\n", "t.yaml:4:1",
                 ["unknown key 'repeat'", "did you mean 'repeats'"], id="unknown-top-key"),
    pytest.param("fixed: {board: [8,8], start: [9, 0]}\n", "t.yaml:3:",
                 ["fixed.start", "row 0..7", "[9, 0]"], id="start-off-board"),
    pytest.param("fixed: {board: [0, 8]}\n", "t.yaml:3:",
                 ["fixed.board[0]", "a number of at least 1", "found:    0"],
                 id="board-under-1x1"),
    pytest.param("fixed: {board: [8,8], heuristic: none}\nmatrix: {heuristic: [none]}\n",
                 "t.yaml:4:", ["both in fixed and in matrix"], id="fixed-and-swept"),
    pytest.param("fixed: {board: [8,8]}\nmatrix: {heuristic: []}\n", "t.yaml:4:",
                 ["non-empty list"], id="empty-list"),
    pytest.param("fixed: {board: [8,8]}\nbudget: {nodes: 0}\n", "t.yaml:4:",
                 ["budget.nodes", "a number greater than 0"], id="zero-budget"),
    pytest.param("fixed: {board: [8,8]}\nbudget: {seconds: -1}\n", "t.yaml:4:",
                 ["budget.seconds"], id="negative-seconds"),
    pytest.param("fixed: {board: [800,800]}\n", "t.yaml:3:",
                 ["250,000 squares", "strategy: iterative"], id="board-too-large"),
    pytest.param("fixed: {board: [8,8]\n", "t.yaml:", ["YAML syntax error"], id="malformed"),
    pytest.param("fixed: {board: [8,8]}\nseed: !!python/object/apply:os.system [ls]\n", "t.yaml:4:",
                 ["python/object", "safe_load"], id="python-tag"),
    pytest.param("matrix: {heuristic: [none]}\n", "t.yaml:", ["'board' in fixed or matrix"],
                 id="missing-board"),
    pytest.param("fixed: {board: [8,8]}\nmatrix: {heuristic: none}\n", "t.yaml:4:",
                 ["a list of values"], id="matrix-scalar"),
    pytest.param("fixed: {board: [8,8], tie_break: pohll}\n", "t.yaml:3:",
                 ["did you mean 'pohl'"], id="misspelt-tie-break"),
])
def test_bad_configs_name_position_path_and_fix(body, where, fragments):
    with pytest.raises(ConfigError) as info:
        expand(cfg(body))
    message = str(info.value)
    assert message.startswith(where), message
    for fragment in fragments:
        assert fragment in message, message


def test_unknown_problem_suggests():
    with pytest.raises(ConfigError, match="did you mean 'knights_tour'"):
        parse_config("name: t\nproblem: knight_tour\n", "t.yaml")


def test_shipped_configs_validate():
    config = load_config("configs/warnsdorff_64_starts.yaml")
    trials = expand(config)
    assert len(trials) == 192
    assert {t.columns["heuristic"] for t in trials} == {"none", "warnsdorff", "static_degree"}


def test_random_ties_are_the_same_tree_for_every_strategy_and_engine():
    trials = expand(cfg("fixed: {board: [6, 6], heuristic: warnsdorff, tie_break: random}\n"
                        "matrix: {strategy: [recursive, iterative], engine: [python, compiled]}\n"
                        "exclude: [{strategy: recursive, engine: compiled}]\nseed: 5\n"))
    assert len(trials) == 3
    assert len({t.solver_seed for t in trials}) == 1
    assert len({t.trial_id for t in trials}) == 3
    other_seed = expand(cfg("fixed: {board: [6, 6], heuristic: warnsdorff, tie_break: random}\n"
                            "seed: 6\n"))
    assert other_seed[0].solver_seed != trials[0].solver_seed
