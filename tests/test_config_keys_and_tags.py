"""Config text that YAML reads into something no config holds: keys that are not
names, tagged values (bytes, sets), control characters; and the messages of
parameters written as a name where a list is meant. Each is one ConfigError
(exit status 2) naming the line, never a traceback."""

from __future__ import annotations

import pytest

from btlab.cli.main import main
from btlab.config.model import parse_config
from btlab.errors import ConfigError
from btlab.sweep.expand import expand

GOOD = "name: t\nproblem: knights_tour\nfixed: {board: [3, 4]}\n"


def error_of(text: str) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        expand(parse_config(text, "t.yaml"))
    return info.value


@pytest.mark.parametrize("text, line, fragments", [
    pytest.param(GOOD + "? [a, b]\n: 1\n", 4, ["a list used as a key"], id="list-key"),
    pytest.param(GOOD + "? {a: 1}\n: 1\n", 4, ["a mapping used as a key"], id="map-key"),
    pytest.param(GOOD + "1: 2\n", 4, ["the key '1', which YAML reads as a number"],
                 id="int-key"),
    pytest.param(GOOD + "~: 2\n", 4, ["which YAML reads as null"], id="null-key"),
    pytest.param("name: t\nproblem: knights_tour\nfixed: {board: [3, 4], true: 1}\n", 3,
                 ["error at fixed", "the key 'true', which YAML reads as a boolean"],
                 id="bool-key-in-fixed"),
    pytest.param(GOOD + "matrix: {mode: [first]}\nexclude: [{1: first}]\n", 5,
                 ["error at exclude[0]", "reads as a number"], id="int-key-in-exclude"),
    pytest.param(GOOD + "include: [{~: 2}]\n", 4, ["error at include[0]", "reads as null"],
                 id="null-key-in-include"),
    pytest.param(GOOD + "description: !!binary aGVsbG8=\n", 4,
                 ["error at description", "!!binary"], id="binary"),
    pytest.param(GOOD + "description: !!set {a, b}\n", 4, ["!!set"], id="set"),
    pytest.param("name: !!binary dA==\nproblem: knights_tour\nfixed: {board: [3, 4]}\n", 1,
                 ["error at name", "!!binary"], id="binary-name"),
    pytest.param(GOOD + "fixed2: !!omap [{a: 1}]\n", 4, ["!!omap"], id="omap"),
    pytest.param(GOOD + "description: a\x00b\n", 4,
                 ["U+0000 (a NUL byte)", "no control characters"], id="nul"),
    pytest.param(GOOD + "description: a\x07b\n", 4, ["U+0007"], id="bell"),
])
def test_values_no_config_holds_are_located(text, line, fragments):
    error = error_of(text)
    message = " ".join(str(error).split())
    for fragment in fragments:
        assert fragment in message, message
    assert error.line == line, message


def test_a_quoted_key_is_a_name_and_merge_keys_still_work():
    config = parse_config("name: t\nproblem: knights_tour\n'fixed': {<<: {board: [3, 4]}, "
                          "mode: count}\n", "t.yaml")
    assert config.model.fixed == {"board": [3, 4], "mode": "count"}


@pytest.mark.parametrize("key, value, fragments", [
    ("move_order", "'1,2'", ["default, or the 8 knight moves as [d_row, d_col] pairs",
                             "'1,2'", "write e.g. move_order: [[-1, -2]"]),
    ("move_order", "defualt", ["the 8 knight moves", "did you mean 'default'?"]),
    ("start", "al", ["[row, col]", "or all", "did you mean 'all'?"]),
    ("start", "corner", ["[row, col]", "'corner'", "write e.g. start: [0, 0]"]),
    ("heuristic", "[]", ["'none', 'warnsdorff', 'static_degree' or a plug-in",
                         "an empty list", "write e.g. heuristic: warnsdorff"]),
    ("heuristic", "3", ["'warnsdorff'", "3 (int)"]),
])
def test_a_name_where_a_list_is_meant_gets_both_shapes(key, value, fragments):
    message = " ".join(str(error_of(
        f"name: t\nproblem: knights_tour\nfixed: {{board: [5, 5], {key}: {value}}}\n"
    )).split())
    for fragment in fragments:
        assert fragment in message, message
    assert "one of 'default'" not in message and "valid string" not in message


def test_validate_exits_2_on_a_list_key(tmp_path, capsys):
    path = tmp_path / "c.yaml"
    path.write_text(GOOD + "? [a, b]\n: 1\n")
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert "a list used as a key" in err and "Traceback" not in err


@pytest.mark.parametrize("override, fragment", [
    ("fixed={1: 2}", "the key '1', which YAML reads as a number"),
    ("fixed=!!binary aGVsbG8=", "!!binary"),
    ("fixed={board: 5, board: 6}", "'board' given twice"),
])
def test_override_values_are_read_like_files(tmp_path, capsys, override, fragment):
    path = tmp_path / "c.yaml"
    path.write_text(GOOD)
    assert main(["validate", str(path), override]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert fragment in err and f"override 1 ({override})" in err, err


K = "name: t\nproblem: knights_tour\n"


@pytest.mark.parametrize("text, fragments", [
    pytest.param(K + "fixed: {board: 6}\nmatrix: {start: [all]}\n",
                 ["error at matrix.start[0]", "all inside the list", "write start: all"],
                 id="all-in-a-matrix-list"),
    pytest.param(K + "fixed: {board: 6}\nmatrix: {start: [[0, 0], all]}\n",
                 ["matrix.start[1]", "written alone"], id="all-among-squares"),
    pytest.param(K + "matrix: {board: [5, 6], start: all}\nexclude: [{start: [all, [0, 0]]}]\n",
                 ["exclude[0].start[0]", "a value of start (all stands for every value"],
                 id="all-among-exclude-alternatives"),
    pytest.param(K + "matrix: {board: [5, 6], mode: [first]}\n"
                 "include: [{start: all, board: 5}]\n",
                 ["error at include[0].start", "extends combinations of the matrix",
                  "sweep it in matrix (start: all)"], id="all-in-an-extending-include"),
    pytest.param(K + "fixed: {board: 6, mode: [first, count]}\n",
                 ["fixed.mode", "move mode under matrix: mode: [first, count]"],
                 id="a-list-in-fixed"),
    pytest.param("name: q\nproblem: n_queens\nfixed: {n: [8, 9]}\n",
                 ["fixed.n", "move n under matrix: n: [8, 9]"], id="a-list-of-n-in-fixed"),
    pytest.param(K + "fixed: {board: 6}\nmatrix: {start: [0, 0]}\n",
                 ["matrix.start[0]", "for the one value [0, 0] write start: [[0, 0]]"],
                 id="one-square-as-a-matrix-list"),
])
def test_all_and_lists_in_the_wrong_place(text, fragments):
    message = " ".join(str(error_of(text)).split())
    for fragment in fragments:
        assert fragment in message, message


def test_an_include_entry_of_its_own_may_say_all():
    config = parse_config(K + "matrix: {board: [5, 6], mode: [first]}\n"
                          "include: [{start: all, board: 7}]\n", "t.yaml")
    assert len(expand(config)) == 1 + 1 + 49


@pytest.mark.parametrize("text, fragments", [
    (K + "fixed: {board: 6}\nmatrix: {seed: 1...2}\n",
     ["error at matrix.seed", "a range A..B", "seed: 1..1000"]),
    (K + "fixed: {board: 6, seed: [1, 2]}\n",
     ["error at fixed.seed", "sweep seeds under matrix: seed: 1..100"]),
    (K + "fixed: {board: 6}\nmatrix: {repeats: [1, 2]}\n",
     ["repeats is a top-level key, not a parameter"]),
    (K + "fixed: {board: 6}\nmatrix: {budget: [1, 2]}\n",
     ["error at matrix.budget[0]", "a budget mapping, merged over the top-level budget"]),
    (K + "fixed: {board: 6}\nmatrix: {bord: [1, 2]}\n", ["did you mean 'board'?"]),
    (K + "fixed: {board: 6, bord: [1, 2]}\n", ["did you mean 'board'?"]),
])
def test_unknown_parameters_holding_lists(text, fragments):
    message = " ".join(str(error_of(text)).split())
    for fragment in fragments:
        assert fragment in message, message


@pytest.mark.parametrize("text", [
    K + "s: &s 5\nfixed:\n  <<: *s\n  board: 6\n",
    K + "a: &a {board: 6}\nfixed:\n  <<: [*a, 5]\n",
])
def test_a_merge_of_a_scalar_says_what_merges(text):
    message = " ".join(str(error_of(text)).split())
    assert "a mapping (or a list of mappings) after the merge key <<:" in message, message
    assert "remove the tag" not in message


@pytest.mark.parametrize("line, fragments", [
    ("include: {heuristic: warnsdorff}\n",
     ["error at include", "a list of mappings", 'include: [{"heuristic": "warnsdorff"}]']),
    ("exclude: {heuristic: warnsdorff}\n", ["error at exclude", "put the mapping in a list"]),
    ("include: [5]\n", ["error at include[0]", "write each entry as {parameter: value"]),
])
def test_include_and_exclude_of_the_wrong_shape(line, fragments):
    message = " ".join(str(error_of(GOOD + line)).split())
    for fragment in fragments:
        assert fragment in message, message


@pytest.mark.parametrize("value, fragments", [
    ("017", ["017 (YAML 1.1 reads a leading zero as octal: 15)", "write 17 for decimal"]),
    ("-017", ["octal: 15", "write -17 for decimal"]),
    ("0_17", ["octal: 15"]),
    ("09", ["09 (YAML 1.1 reads a number with a leading zero and a digit 8 or 9 as text)",
            "write 9 for a number, or quote it ('09') if it is text"]),
    ("0128", ["as text", "write 128 for a number"]),
    ("1:20", ["1:20 (YAML 1.1 reads it as a base-60 number)"]),
    ("1:20.5", ["base-60"]),
])
def test_yaml_11_numbers_that_change_their_value_are_refused(value, fragments):
    err = str(error_of(GOOD + f"seed: {value}\n"))
    assert "t.yaml:4:7: error at seed" in err
    assert "a number written in decimal" in err
    for fragment in fragments:
        assert fragment in err


@pytest.mark.parametrize("value, seed", [("17", 17), ("0", 0), ("-0", 0), ("0x10", 16),
                                         ("0b101", 5), ("1_000", 1000), ("'017'", None)])
def test_decimal_hex_binary_and_underscored_numbers_are_read_as_written(value, seed):
    text = GOOD + f"seed: {value}\n"
    if seed is None:  # quoted: text, refused as a seed by its type, not as octal
        assert "octal" not in str(error_of(text))
    else:
        assert expand(parse_config(text, "t.yaml"))[0].seed == seed
