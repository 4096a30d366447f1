"""Configs built to break btlab: numbers that cannot be stored, files that are not
files, YAML that expands without bound, values of the wrong shape. Each gets exit
status 2 and one message at ``validate``, before anything runs."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from btlab.cli.main import main
from btlab.config.model import MAX_BUDGET_SECONDS, load_config, parse_config
from btlab.config.yaml_positions import MAX_CONFIG_BYTES
from btlab.errors import ConfigError
from btlab.experiments.checker import InvalidSolution, check_queens, check_tour
from btlab.sweep.expand import expand

ROOT = Path(__file__).resolve().parent.parent
GOOD = "name: t\nproblem: knights_tour\nfixed: {board: [3, 4]}\n"


def error_of(text: str) -> str:
    """The message of the ConfigError that config text gets (expanding it too)."""
    with pytest.raises(ConfigError) as info:
        expand(parse_config(text, "t.yaml"))
    return str(info.value)


def validate(tmp_path: Path, text: str, *overrides: str, capsys=None) -> int:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    return main(["validate", str(path), *overrides])


# --------------------------------------------------------------------------- numbers and types


@pytest.mark.parametrize("line, fragments", [
    pytest.param("seed: 9223372036854775808",
                 ["error at seed", "at most 9,223,372,036,854,775,807",
                  "64-bit integer column"], id="seed-2^63"),
    pytest.param("seed: -9223372036854775809", ["error at seed", "at least"], id="seed-below"),
    pytest.param("seed: true", ["error at seed", "true (a boolean)"], id="seed-bool"),
    pytest.param("seed: '7'", ["error at seed", "'7'"], id="seed-string"),
    pytest.param("seed: 7.0", ["error at seed", "7.0 (float)"], id="seed-float"),
    pytest.param("budget: {seconds: true}", ["budget.seconds", "true (a boolean)"],
                 id="seconds-bool"),
    pytest.param("budget: {seconds: '60'}", ["budget.seconds", "'60'"], id="seconds-string"),
    pytest.param("budget: {seconds: .inf}", ["budget.seconds", "finite"], id="seconds-inf"),
    pytest.param("budget: {seconds: .nan}", ["budget.seconds", "finite"], id="seconds-nan"),
    pytest.param("budget: {seconds: 1e7}", ["budget.seconds"], id="seconds-1e7-text"),
    pytest.param("budget: {seconds: 1000001}", ["budget.seconds", "at most 1,000,000",
                                                "leave seconds out"], id="seconds-too-long"),
    pytest.param("budget: {seconds: 0}", ["budget.seconds", "greater than 0"], id="seconds-0"),
    pytest.param("budget: {nodes: true}", ["budget.nodes", "true (a boolean)"], id="nodes-bool"),
    pytest.param("budget: {nodes: 1.5}", ["budget.nodes", "1.5"], id="nodes-float"),
    pytest.param("budget: {nodes: 4611686018427387905}",
                 ["budget.nodes", "at most 4,611,686,018,427,387,904"], id="nodes-over-2^62"),
    pytest.param("repeats: 2147483648", ["repeats", "at most 2,147,483,647"], id="repeats-2^31"),
    pytest.param("repeats: true", ["repeats", "boolean"], id="repeats-bool"),
    pytest.param("split: {depth: true}", ["split", "integer D in 0..1000"], id="split-bool"),
])
def test_numbers_that_cannot_be_stored_or_used_are_refused(line, fragments):
    message = error_of(GOOD + line + "\n")
    for fragment in fragments:
        assert fragment in message, message


@pytest.mark.parametrize("fixed, fragments", [
    pytest.param("{board: 2147483648}", ["fixed.board", "at most 2,147,483,647",
                                         "32-bit integer column"], id="board-2^31"),
    pytest.param("{board: [3, 4], start: [2147483648, 0]}", ["fixed.start[0]", "at most"],
                 id="start-2^31"),
    pytest.param("{board: true}", ["fixed.board", "[rows, cols]", "true (a boolean)"],
                 id="board-bool"),
    pytest.param("{board: [3, 4], closed: 1}", ["fixed.closed", "true or false"],
                 id="closed-int"),
    pytest.param("{board: [3, 4.0]}", ["fixed.board[1]", "whole number"], id="board-float"),
])
def test_parameters_are_checked_against_their_columns(fixed, fragments):
    message = error_of(f"name: t\nproblem: knights_tour\nfixed: {fixed}\n")
    for fragment in fragments:
        assert fragment in message, message


@pytest.mark.parametrize("fixed, fragment", [
    ("{n: 2147483648}", "at most 2,147,483,647"),
    ("{n: true}", "valid integer"),
    ("{n: 8, unique: 'yes'}", "true or false"),
])
def test_queens_parameters(fixed, fragment):
    assert fragment in error_of(f"name: q\nproblem: n_queens\nfixed: {fixed}\n")


def test_validate_exits_2_on_the_examples_and_their_overrides(tmp_path, capsys):
    assert validate(tmp_path, GOOD + "seed: 9223372036854775808\n") == 2
    assert "error at seed" in capsys.readouterr().err
    assert validate(tmp_path, GOOD + "budget: {seconds: true}\n") == 2
    assert "budget.seconds" in capsys.readouterr().err
    # command-line overrides go through the same checks
    assert validate(tmp_path, GOOD + "seed: 1\n", "seed=9223372036854775808") == 2
    err = capsys.readouterr().err
    assert "override 1 (seed=9223372036854775808)" in err and "at most" in err
    assert validate(tmp_path, GOOD, "+budget.seconds=true") == 2
    assert "budget.seconds" in capsys.readouterr().err


def test_an_integer_seconds_is_the_same_trial_as_its_float():
    a = expand(parse_config(GOOD + "budget: {seconds: 60}\n"))
    b = expand(parse_config(GOOD + "budget: {seconds: 60.0}\n"))
    assert a[0].budget_seconds == 60.0 and isinstance(a[0].budget_seconds, float)
    assert a[0].trial_id == b[0].trial_id


def test_the_largest_values_run_and_are_stored(tmp_path):
    """The bounds are what the columns and timers take: a run at each bound writes its row."""
    path = tmp_path / "edge.yaml"
    path.write_text(GOOD + f"seed: {2**63 - 1}\nbudget: {{nodes: {2**62}, "
                    f"seconds: {MAX_BUDGET_SECONDS:.0f}}}\n")
    out = tmp_path / "r"
    assert main(["run", str(path), "--out", str(out), "--backend", "serial", "--quiet"]) == 0
    row = pd.read_parquet(out).iloc[0]
    assert row["seed"] == 2**63 - 1 and row["budget_nodes"] == 2**62
    assert row["budget_seconds"] == MAX_BUDGET_SECONDS and row["status"] == "solved"


# --------------------------------------------------------------------------- hostile files


def alias_bomb(levels: int = 9, width: int = 9) -> str:
    """``levels`` anchors, each a list of ``width`` aliases of the one before (9^9 values
    once expanded), then a valid config."""
    names = "abcdefghijklmnopqrstuvwxyz"
    lines = [f"{names[0]}: &{names[0]} [" + ",".join(["x"] * width) + "]"]
    for i in range(1, levels):
        lines.append(f"{names[i]}: &{names[i]} [" + ",".join([f"*{names[i - 1]}"] * width)
                     + "]")
    return "\n".join(lines) + "\n" + GOOD


def test_alias_bomb_is_refused_in_about_a_second(tmp_path, capsys):
    text = alias_bomb()
    assert len(text.encode()) < 450
    began = time.perf_counter()
    assert validate(tmp_path, text) == 2
    assert time.perf_counter() - began < 2.0
    err = " ".join(capsys.readouterr().err.split())
    assert "expands to more than 200,000 values" in err
    assert "aliases counted each time they are used" in err


def test_aliases_that_stay_small_are_fine():
    text = ("name: t\nproblem: knights_tour\nfixed: {board: &b [3, 4]}\n"
            "matrix: {heuristic: &h [none, warnsdorff]}\n"
            "include: [{board: *b, heuristic: warnsdorff, tie_break: roth}]\n")
    trials = expand(parse_config(text))
    assert [t.columns["tie_break"] for t in trials] == ["move_order", "roth"]


@pytest.mark.parametrize("text, fragment", [
    pytest.param("a: &a [*a]\n" + GOOD, "contains itself", id="recursive-alias"),
    pytest.param("x: " + "[" * 100 + "]" * 100 + "\n" + GOOD, "nested more than 64 deep",
                 id="deep-100"),
    pytest.param("x: " + "[" * 20000 + "]" * 20000 + "\n" + GOOD, "nested at most 64 deep",
                 id="deep-20000"),
    pytest.param(GOOD + "seed: " + "9" * 5000 + "\n", "more than 4,300 digits",
                 id="5000-digit-number"),
])
def test_unbounded_yaml_is_refused(text, fragment):
    began = time.perf_counter()
    message = " ".join(error_of(text).split())
    assert fragment in message, message
    assert time.perf_counter() - began < 5.0


def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "sweep.yaml"
    os.mkfifo(fifo)
    link = tmp_path / "link.yaml"
    link.symlink_to(fifo)
    # in a child process: a regression that opens the FIFO blocking would hang, not fail
    for path in (fifo, link):
        proc = subprocess.run([sys.executable, "-m", "btlab.cli.main", "validate", str(path)],
                              cwd=ROOT, capture_output=True, text=True, timeout=60,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert proc.returncode == 2, proc.stderr
        assert "a FIFO (named pipe)" in proc.stderr
        assert "a regular file holding a YAML config" in proc.stderr


def test_a_folder_a_large_file_and_binary_data_are_refused(tmp_path):
    with pytest.raises(ConfigError, match="a folder"):
        load_config(tmp_path)
    big = tmp_path / "big.yaml"
    big.write_text(GOOD + "#" + "x" * MAX_CONFIG_BYTES + "\n")
    with pytest.raises(ConfigError, match="at most 262,144 bytes"):
        load_config(big)
    binary = tmp_path / "bin.yaml"
    binary.write_bytes(b"\xff\xfe\x00" * 10)
    with pytest.raises(ConfigError, match="binary data"):
        load_config(binary)
    target = tmp_path / "real.yaml"
    target.write_text(GOOD)
    link = tmp_path / "link.yaml"
    link.symlink_to(target)
    assert load_config(link).name == "t"   # a symlink to a regular file is read


# --------------------------------------------------------------------------- messages


@pytest.mark.parametrize("value, fragments, absent", [
    pytest.param("0", ["fixed.board", "a number of at least 1", "found:    0 (int)"],
                 ["valid tuple", "write a list"], id="board-0"),
    pytest.param("[]", ["fixed.board", "[rows, cols]", "found:    an empty list",
                        "board: [8, 8]"], ["no such key", "missing"], id="board-empty"),
    pytest.param("[5]", ["[rows, cols]", "a list of 1 item"], ["no such key"], id="board-1"),
    pytest.param("[5, 5, 5]", ["[rows, cols]", "a list of 3 items"], [], id="board-3"),
    pytest.param("[0, 5]", ["fixed.board[0]", "a number of at least 1"], ["tuple"],
                 id="board-item-0"),
    pytest.param("-3", ["a number of at least 1", "-3"], ["tuple"], id="board-negative"),
])
def test_board_messages_say_what_is_wrong(value, fragments, absent):
    message = error_of(f"name: t\nproblem: knights_tour\nfixed: {{board: {value}}}\n")
    for fragment in fragments:
        assert fragment in message, message
    for fragment in absent:
        assert fragment not in message, message


@pytest.mark.parametrize("key, value, fragments", [
    ("start", "3", ["[row, col]", "or all", "3 (int)", "start: [0, 0]"]),
    ("start", "[]", ["[row, col]", "an empty list"]),
    ("start", "[-1, 0]", ["fixed.start[0]", "a number of at least 0"]),
    ("start", "al", ["did you mean 'all'"]),
    ("move_order", "[[1, 2, 3]]", ["the 8 knight moves as [d_row, d_col] pairs"]),
    ("move_order", "5", ["the 8 knight moves", "5 (int)"]),
    ("move_order", "[[1, 2]]", ["each of the 8 knight moves", "exactly once"]),
])
def test_shape_messages_of_other_parameters(key, value, fragments):
    message = error_of(f"name: t\nproblem: knights_tour\nfixed: {{board: [5, 5], "
                       f"{key}: {value}}}\n")
    for fragment in fragments:
        assert fragment in message, message
    assert "no such key" not in message


def test_queens_n_shapes():
    assert "a number of at least 1" in error_of("name: q\nproblem: n_queens\nfixed: {n: 0}\n")
    message = error_of("name: q\nproblem: n_queens\nfixed: {n: []}\n")
    assert "fixed.n" in message and "valid integer" in message and "no such key" not in message


# --------------------------------------------------------------------------- checkers


@pytest.mark.parametrize("tour, fragment", [
    pytest.param([float(x) for x in range(12)], "step 0: 0.0 (float) is not an integer",
                 id="floats"),
    pytest.param([0, "1"] + list(range(2, 12)), "step 1: '1' (str)", id="string-square"),
    pytest.param([True] * 12, "boolean", id="booleans"),
    pytest.param([[0, 1]] * 12, "(list) is not an integer", id="nested"),
    pytest.param(None, "not a sequence of integers", id="none"),
    pytest.param("0123", "not a sequence of integers", id="string"),
    pytest.param(np.arange(12, dtype=float), "(float64) is not an integer", id="numpy-floats"),
])
def test_check_tour_raises_invalid_solution_for_malformed_tours(tour, fragment):
    with pytest.raises(InvalidSolution, match=fragment.replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[")):
        check_tour(3, 4, (0, 0), tour)


def test_checkers_accept_numpy_integers():
    tour = (0, 6, 8, 1, 7, 9, 2, 11, 5, 3, 10, 4)  # an open tour of 3 x 4 from the corner
    check_tour(3, 4, (0, 0), tour)
    check_tour(3, 4, (0, 0), np.array(tour, dtype=np.int32))
    check_tour(3, 4, (0, 0), [np.int64(x) for x in tour])
    check_queens(4, np.array([1, 3, 0, 2]))
    for bad in ([1.0, 3, 0, 2], [True, 3, 0, 2], "1302", [[1], 3, 0, 2], None):
        with pytest.raises(InvalidSolution):
            check_queens(4, bad)


# --------------------------------------------------------------------------- identities

DEFAULT_ORDER = "[[-1, -2], [-2, -1], [-2, 1], [-1, 2], [1, 2], [2, 1], [2, -1], [1, -2]]"


def test_the_default_move_order_written_out_is_the_same_trial():
    config = parse_config(textwrap.dedent(f"""\
        name: t
        problem: knights_tour
        fixed: {{board: [5, 5]}}
        matrix:
          move_order: [default, {DEFAULT_ORDER}]
    """))
    trials = expand(config)
    assert len(trials) == 1 and trials[0].columns["move_order"] == "default"
    other = parse_config(GOOD.replace("[3, 4]", "[5, 5]"))
    assert trials[0].trial_id == expand(other)[0].trial_id


def test_tie_break_under_heuristic_none_is_the_same_trial():
    # roth (and pohl) leave the move order of `none` as it is: one trial with move_order;
    # random shuffles it at every placement: a search of its own
    trials = expand(parse_config(GOOD + "matrix:\n  heuristic: [none, warnsdorff]\n"
                                 "  tie_break: [move_order, roth, random]\n"))
    assert [(t.columns["heuristic"], t.columns["tie_break"]) for t in trials] == [
        ("none", "move_order"), ("none", "random"), ("warnsdorff", "move_order"),
        ("warnsdorff", "roth"), ("warnsdorff", "random")]


def test_a_non_default_move_order_stays_its_own_trial():
    reversed_order = DEFAULT_ORDER.replace("[[-1, -2], [-2, -1],", "[[-2, -1], [-1, -2],")
    trials = expand(parse_config(GOOD + f"matrix: {{move_order: [default, {reversed_order}]}}\n"))
    assert len(trials) == 2
    assert trials[1].columns["move_order"].startswith("-2,-1 -1,-2")


#: Trial ids of configs whose values are already canonical: resuming their folders
#: depends on them, so they must never change. (Ids of the first trials, and a digest
#: of all of a shipped config's ids, in order.)
PINNED = [
    ("name: t\nproblem: knights_tour\nfixed: {board: [5, 5]}\nmatrix: {heuristic: "
     "[none, warnsdorff], tie_break: [move_order, roth]}\nseed: 7\n"
     "budget: {nodes: 1000, seconds: 60}\n",
     ["365ca483cbf979d1", "31258b771d171969", "9526b0373cd4b762"]),
    (GOOD.replace("[3, 4]", "[5, 5]"), ["a1db8450be233ef2"]),
    (GOOD.replace("[3, 4]", "[5, 5], move_order: [[1, 2], [2, 1], [2, -1], [1, -2], [-1, -2], "
                  "[-2, -1], [-2, 1], [-1, 2]]"), ["79967b7828d7fad6"]),
]

SHIPPED = {
    "plain_backtracking_64_starts.yaml": (64, "6cfb18755b24ef7e"),
    "plain_backtracking_exact.yaml": (64, "79cc25a688d4cfb0"),
    "queens_algorithms.yaml": (56, "748f65cb7dc6d340"),
    "queens_amb_vs_recursion.yaml": (6, "bdbf54174ed21ad9"),
    "recursion_vs_iteration_by_size.yaml": (40, "6c90812e04853250"),
    "warnsdorff_64_starts.yaml": (192, "9fa86682eddff5d9"),
    "warnsdorff_roth_1000x1000.yaml": (1, "d8129b10a95040a0"),
}


@pytest.mark.parametrize("text, ids", PINNED)
def test_pinned_trial_ids(text, ids):
    assert [t.trial_id for t in expand(parse_config(text))] == ids


def test_pinned_solver_seed():
    trial = expand(parse_config(GOOD.replace("[3, 4]", "[6, 6], heuristic: warnsdorff, "
                                             "tie_break: random") + "seed: 5\n"))[0]
    assert (trial.trial_id, trial.solver_seed) == ("cbc93911536717fd", 7366910574424706719)


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_shipped_configs_keep_their_trial_ids(name):
    import hashlib

    ids = [t.trial_id for t in expand(load_config(ROOT / "configs" / name))]
    digest = hashlib.blake2b(" ".join(ids).encode(), digest_size=8).hexdigest()
    assert (len(ids), digest) == SHIPPED[name]


@pytest.mark.parametrize("text, fragments", [
    pytest.param("name: t\nproblem: knights_tour\nmatrix: {board: all}\n",
                 ["matrix.board", "all, which only start takes", "board: [...]"],
                 id="all-on-board"),
    pytest.param(GOOD + "budget: 5\n", ["error at budget", "a mapping, e.g. {nodes:"],
                 id="budget-not-a-mapping"),
    pytest.param(GOOD + "matrix: {start: all}\nexclude: [{start: all}]\n",
                 ["exclude[0].start", "all stands for every value"], id="exclude-all"),
])
def test_section_messages(text, fragments):
    message = error_of(text)
    for fragment in fragments:
        assert fragment in message, message


def test_a_plugin_parameter_its_column_cannot_hold_is_refused(tmp_path, monkeypatch):
    """A plug-in problem that leaves a number unbounded: the value is checked against its
    Parquet column (int32 here) when the trials are made, before anything runs."""
    (tmp_path / "wide_toy.py").write_text(textwrap.dedent("""\
        import pyarrow as pa
        from pydantic import StrictInt
        from btlab.problems.spec import Params, ProblemSpec

        class WideParams(Params):
            n: StrictInt

        PROBLEM = ProblemSpec(
            name="wide_toy:PROBLEM", title="wide", params=WideParams,
            columns=pa.schema([("n", pa.int32())]), to_columns=lambda p: {"n": p["n"]},
            solve=lambda c, nodes, seconds, seed: None, verify=lambda c, s: None)
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    text = 'name: w\nproblem: "wide_toy:PROBLEM"\nmatrix: {n: [5, 2147483648]}\n'
    trials_ok = expand(parse_config(text.replace("2147483648", "6"), "w.yaml"))
    assert [t.columns["n"] for t in trials_ok] == [5, 6]
    message = error_of(text)
    assert "matrix.n[1]" in message and "column n is int32" in message, message
    assert "n = 2,147,483,648" in message


def test_overrides_are_bounded_like_files(tmp_path, capsys):
    bomb = "[" + ", ".join(["&a [x,x,x,x,x,x,x,x,x]"] + [
        f"&{n} [" + ",".join([f"*{p}"] * 9) + "]" for p, n in zip("abcdefgh", "bcdefghi")]) + "]"
    began = time.perf_counter()
    assert validate(tmp_path, GOOD, f"fixed.board={bomb}") == 2
    assert time.perf_counter() - began < 2.0
    err = " ".join(capsys.readouterr().err.split())
    assert "override 1 (fixed.board=" in err and "expands to more than 200,000 values" in err
    assert validate(tmp_path, GOOD, "seed=" + "9" * 5000) == 2
    assert "4300 digits" in capsys.readouterr().err
    assert validate(tmp_path, GOOD, "++split" + ".a" * 100 + "=1") == 2
    assert "at most 64 parts" in capsys.readouterr().err


@pytest.mark.parametrize("line, fix", [
    ("budget: {nodes: 1e9}", "YAML reads 1e9 as text: write the whole number in full, "
                             "1_000_000_000"),
    ("budget: {seconds: 1e-3}", "write 1.0e-3"),
    ("budget: {seconds: 1.5e3}", "write 1.5e+3"),
    ("budget: {seconds: '60'}", "a number in quotes is text: write 60 without quotes"),
])
def test_numbers_yaml_reads_as_text_get_a_fix(line, fix):
    assert fix in error_of(GOOD + line + "\n")
