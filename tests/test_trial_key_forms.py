"""Trial keys written in different forms: one trial, matched by exclude, clear refusals.

``budget``, ``restarts`` and ``probes`` values that resolve to the same trial
(``factor: 2`` and ``2.0``; ``on: nodes`` written out; ``{nodes: 5}`` and
``{nodes: 5, backtracks: null}``) are one trial of the sweep, one row on disk,
and an ``exclude`` entry written in either form drops it.
"""

from __future__ import annotations

import pandas as pd
import pytest

from btlab.config.model import parse_config
from btlab.config.restarts import RestartsModel
from btlab.errors import ConfigError
from btlab.sweep.expand import count_trials, expand
from tests.helpers.cli import run_main, write

HEAD = "name: f\nproblem: knights_tour\nfixed: {board: 5, tie_break: random}\n"


def test_a_whole_number_factor_is_one_policy_whatever_its_type():
    two = RestartsModel.model_validate({"policy": "geometric", "unit": 3, "factor": 2.0})
    assert two.factor == 2 and isinstance(two.factor, int)
    assert two.policy_of().cutoff(70) == 1 << 62  # the exact int path, capped
    half = RestartsModel.model_validate({"policy": "geometric", "unit": 10, "factor": 1.5})
    assert [half.policy_of().cutoff(k) for k in range(4)] == [10, 15, 22, 33]


def test_forms_of_one_policy_are_one_trial_and_one_row(tmp_path):
    text = HEAD + (
        "matrix:\n"
        "  restarts:\n"
        "    - {policy: geometric, unit: 3, max: 2}\n"
        "    - {policy: geometric, unit: 3, max: 2, factor: 2}\n"
        "    - {policy: geometric, unit: 3, max: 2, factor: 2.0, on: nodes}\n"
        "    - {policy: fixed, unit: 3, max: 2}\n"
        "  budget: [{nodes: 50}, {nodes: 50, backtracks: null}]\n")
    trials = expand(parse_config(text))
    assert len(trials) == 2 == count_trials(parse_config(text))
    assert len({t.trial_id for t in trials}) == 2
    path = write(tmp_path / "f.yaml", text)
    assert run_main("run", path, "--out", tmp_path / "out", "--backend", "serial",
                    "--quiet") == 0
    df = pd.read_parquet(tmp_path / "out")
    assert len(df) == 2
    assert sorted(df["restarts"]) == ["fixed unit=3 on=nodes max=2",
                                      "geometric unit=3 on=nodes factor=2 max=2"]


@pytest.mark.parametrize("written", [
    "{policy: fixed, unit: 10, max: 5, on: nodes}",
    "{max: 5, unit: 10, policy: fixed}",
])
def test_exclude_drops_a_policy_written_in_another_form(written):
    config = parse_config(HEAD + (
        "matrix:\n  restarts: [{policy: fixed, unit: 10, max: 5}, "
        "{policy: geometric, unit: 3, max: 4}]\n"
        f"exclude:\n  - {{restarts: {written}}}\n"
        "  - {restarts: {policy: geometric, unit: 3, max: 4, factor: 2.0}}\n"
        "  - {restarts: {policy: luby, unit: 3, max: 4}}\n"))
    assert expand(config) == []


def test_exclude_matches_a_budget_by_its_merged_value():
    text = HEAD + ("matrix:\n  budget: [{nodes: 5}, {nodes: 7}, {nodes: 9}]\n"
                   "exclude:\n  - {budget: {nodes: 5, seconds: null}}\n"
                   "  - {budget: [{nodes: 7, backtracks: null}]}\n")
    assert [t.budget_nodes for t in expand(parse_config(text))] == [9]
    # with a top-level seconds, {nodes: 5, seconds: null} is another trial than {nodes: 5}
    timed = expand(parse_config(text + "budget: {seconds: 5}\n"))
    assert [(t.budget_nodes, t.budget_seconds) for t in timed] == [(5, 5.0), (9, 5.0)]


@pytest.mark.parametrize("factor, found", [
    ("0", "0 (int)"), ("1", "1 (int)"), ("-2", "-2 (int)"), (".inf", "inf (float)"),
    (".nan", "nan (float)"), ("'2'", "'2'"), ("true", "true (a boolean)"),
    ("1000.5", "1000.5 (float)"), ("[2]", "[2]"),
])
def test_a_bad_factor_names_the_key_and_the_range(tmp_path, capsys, factor, found):
    text = HEAD + f"restarts: {{policy: geometric, unit: 1, max: 3, factor: {factor}}}\n"
    with pytest.raises(ConfigError) as info:
        parse_config(text, "f.yaml")
    message = " ".join(str(info.value).split())
    assert "error at restarts.factor expected:" in message, message
    assert "a number greater than 1 and at most 1,000" in message
    assert f"found: {found}" in message
    assert "constrained" not in message and "valid integer" not in message
    path = write(tmp_path / "f.yaml", HEAD)
    assert run_main("validate", path, "+restarts={policy: geometric, unit: 1, max: 3, "
                    f"factor: {factor}}}") == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "error at restarts.factor" in err and "at most 1,000" in err


# --------------------------------------------------------------------------- bounds


FOUR = ("name: b\nproblem: knights_tour\n"
        "fixed: {board: 4, start: [0, 0], tie_break: random, strategy: iterative}\n"
        "budget: {backtracks: 5}\n")


@pytest.mark.parametrize("restarts, why", [
    ("{policy: fixed, unit: 0, on: backtracks}", "each attempt is cut off at 0 backtracks"),
    ("{policy: luby, unit: 0, on: backtracks}", "each attempt is cut off at 0 backtracks"),
    ("{policy: geometric, unit: 0, on: backtracks}", "each attempt is cut off at 0 backtracks"),
    ("{policy: fixed, unit: 1, on: nodes}", "cut off at 1 placements may not have backtracked"),
    ("{policy: fixed, unit: 16, on: nodes}", "cut off at 16 placements may not have"),
])
def test_restarts_bounded_by_an_unspendable_backtrack_budget_are_refused(tmp_path, capsys,
                                                                         restarts, why):
    """A 4 x 4 board has no tour: these attempts never spend a backtrack, so the trial ran
    for ever before (validate accepted it)."""
    text = FOUR + f"restarts: {restarts}\n"
    with pytest.raises(ConfigError) as info:
        expand(parse_config(text, "b.yaml"))
    message = " ".join(str(info.value).split())
    assert "error at restarts" in message and why in message
    assert "add max: 1000 to restarts, or a budget.nodes or budget.seconds" in message
    path = write(tmp_path / "b.yaml", text)
    assert run_main("validate", path) == 2


@pytest.mark.parametrize("restarts, nodes, backtracks", [
    ("{policy: fixed, unit: 17, on: nodes}", 15, 5),  # longer than any path of 16 squares
    ("{policy: luby, unit: 1, on: nodes}", 80, 5),  # grows past any path
    ("{policy: luby, unit: 1, on: backtracks}", 54, 5),
])
def test_restarts_whose_attempts_spend_backtracks_end_at_the_budget(tmp_path, restarts,
                                                                     nodes, backtracks):
    path = write(tmp_path / "b.yaml", FOUR + f"restarts: {restarts}\n")
    assert run_main("run", path, "--out", tmp_path / "out", "--backend", "serial",
                    "--quiet") == 0
    row = pd.read_parquet(tmp_path / "out").iloc[0]
    assert (row["status"], row["nodes"], row["backtracks"]) == ("backtrack_limit", nodes,
                                                                 backtracks)
