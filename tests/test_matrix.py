"""Matrix expansion as GitHub Actions does it, and trial counts that equal the expansion.

The first tests are the examples of GitHub's own documentation ("Using a matrix
for your jobs", docs.github.com), with the job lists it gives; then the same
rules on btlab configs; then counts: :func:`btlab.sweep.expand.count_trials` against
``len(expand(...))`` on hundreds of generated configs, and a 4,000,000-trial
sweep counted without being expanded.
"""

from __future__ import annotations

import random
import textwrap
import time

import pytest

from btlab.cli.main import main
from btlab.config.model import parse_config
from btlab.errors import ConfigError
from btlab.sweep.expand import EXACT_COUNT_BLOCKS, check_trial_cap, count_trials, expand, plan_size
from btlab.sweep.matrix import combinations

BASE = "name: t\nproblem: knights_tour\n"


def cfg(body: str):
    return parse_config(BASE + textwrap.dedent(body), "t.yaml")


# --------------------------------------------------------------------------- GitHub's examples


def test_github_include_example_fruit_and_animal():
    """The include example of the workflow syntax page: six jobs, in this order."""
    jobs = combinations(
        {"fruit": ["apple", "pear"], "animal": ["cat", "dog"]},
        include=[{"color": "green"}, {"color": "pink", "animal": "cat"},
                 {"fruit": "apple", "shape": "circle"}, {"fruit": "banana"},
                 {"fruit": "banana", "animal": "cat"}])
    assert jobs == [
        {"fruit": "apple", "animal": "cat", "color": "pink", "shape": "circle"},
        {"fruit": "apple", "animal": "dog", "color": "green", "shape": "circle"},
        {"fruit": "pear", "animal": "cat", "color": "pink"},
        {"fruit": "pear", "animal": "dog", "color": "green"},
        {"fruit": "banana"},
        # not added to {fruit: banana}: that combination was not an original one
        {"fruit": "banana", "animal": "cat"},
    ]


def test_github_expanding_configurations():
    jobs = combinations({"os": ["windows-latest", "ubuntu-latest"], "node": [14, 16]},
                        include=[{"os": "windows-latest", "node": 16, "npm": 6}])
    assert jobs == [{"os": "windows-latest", "node": 14},
                    {"os": "windows-latest", "node": 16, "npm": 6},
                    {"os": "ubuntu-latest", "node": 14},
                    {"os": "ubuntu-latest", "node": 16}]


def test_github_adding_configurations():
    jobs = combinations({"os": ["macos-latest", "windows-latest", "ubuntu-latest"],
                         "version": [12, 14, 16]},
                        include=[{"os": "windows-latest", "version": 17}])
    assert len(jobs) == 10
    assert jobs[-1] == {"os": "windows-latest", "version": 17}


def test_github_include_only():
    jobs = combinations({}, include=[{"site": "production", "datacenter": "site-a"},
                                     {"site": "staging", "datacenter": "site-b"}])
    assert jobs == [{"site": "production", "datacenter": "site-a"},
                    {"site": "staging", "datacenter": "site-b"}]


def test_github_exclude_example():
    """Nine jobs: 12, minus one full match and two partial matches."""
    jobs = combinations({"os": ["macos-latest", "windows-latest"], "version": [12, 14, 16],
                         "environment": ["staging", "production"]},
                        exclude=[{"os": "macos-latest", "version": 12,
                                  "environment": "production"},
                                 {"os": "windows-latest", "version": 16}])
    assert len(jobs) == 9
    assert {"os": "macos-latest", "version": 12, "environment": "production"} not in jobs
    assert not [j for j in jobs if j["os"] == "windows-latest" and j["version"] == 16]


def test_github_include_adds_back_what_exclude_dropped():
    """"All include combinations are processed after exclude", so include can add back."""
    jobs = combinations({"os": ["a", "b"], "node": [1, 2]}, exclude=[{"os": "b", "node": 2}],
                        include=[{"os": "b", "node": 2}])
    assert jobs == [{"os": "a", "node": 1}, {"os": "a", "node": 2}, {"os": "b", "node": 1},
                    {"os": "b", "node": 2}]


def test_github_continue_on_error_example():
    jobs = combinations({"version": [6, 7, 8], "experimental": [False]},
                        include=[{"version": 9, "experimental": True}])
    assert jobs[-1] == {"version": 9, "experimental": True} and len(jobs) == 4


# --------------------------------------------------------------------------- the same on configs


def test_include_after_exclude_gives_two_trials():
    trials = expand(cfg("""\
        fixed: {board: [5, 5]}
        matrix: {heuristic: [none, warnsdorff]}
        exclude: [{heuristic: warnsdorff}]
        include: [{heuristic: warnsdorff, tie_break: roth}]
    """))
    assert [(t.columns["heuristic"], t.columns["tie_break"]) for t in trials] == [
        ("none", "move_order"), ("warnsdorff", "roth")]


def test_fixed_values_are_original_values_include_does_not_overwrite_them():
    # heuristic: none is fixed: an entry with another heuristic adds a trial of its own
    trials = expand(cfg("""\
        fixed: {board: [5, 5], heuristic: none}
        matrix: {start: [[0, 0], [1, 2]]}
        include: [{heuristic: warnsdorff, tie_break: roth}]
    """))
    assert [(t.columns["heuristic"], t.columns["start_col"]) for t in trials] == [
        ("none", 0), ("none", 2), ("warnsdorff", 0)]


def test_include_extends_one_start_of_all():
    trials = expand(cfg("""\
        fixed: {board: [3, 4], heuristic: warnsdorff}
        matrix: {start: all}
        include: [{start: [1, 1], tie_break: roth}]
    """))
    assert len(trials) == 12
    assert [(t.columns["start_row"], t.columns["start_col"]) for t in trials
            if t.columns["tie_break"] == "roth"] == [(1, 1)]


def test_added_values_may_be_overwritten_by_later_entries():
    trials = expand(cfg("""\
        fixed: {board: [5, 5]}
        matrix: {heuristic: [warnsdorff, static_degree]}
        include:
          - {tie_break: pohl}
          - {heuristic: warnsdorff, tie_break: roth}
    """))
    assert [(t.columns["heuristic"], t.columns["tie_break"]) for t in trials] == [
        ("warnsdorff", "roth"), ("static_degree", "pohl")]


def test_exclude_keys_must_be_swept_or_fixed():
    with pytest.raises(ConfigError) as info:
        cfg("fixed: {board: [5, 5]}\nmatrix: {heuristic: [none, warnsdorff]}\n"
            "exclude: [{tie_break: roth}]\n")
    assert "exclude[0].tie_break" in str(info.value)
    assert "a key of matrix or fixed" in str(info.value)


def test_an_added_combination_lacking_a_required_parameter_is_named():
    config = parse_config("name: q\nproblem: n_queens\nfixed: {strategy: bitmask}\n"
                          "matrix: {n: [4, 5]}\ninclude: [{strategy: recursive}]\n", "q.yaml")
    with pytest.raises(ConfigError) as info:
        expand(config)
    message = str(info.value)
    assert "error at include[0]" in message and "'n'" in message, message


# --------------------------------------------------------------------------- counts


def _random_config(rng: random.Random) -> str:
    """A small knight's-tour sweep with every feature that changes the count: all,
    exclude (also of one start, and alternatives), include (extending, adding, naming one
    start), duplicates written differently (board 3 and [3, 3], an explicit default move
    order, tie-breaks under heuristic none)."""
    boards = [3, [3, 3], [3, 4], [4, 3], [2, 3]]
    default_order = "[[-1, -2], [-2, -1], [-2, 1], [-1, 2], [1, 2], [2, 1], [2, -1], [1, -2]]"
    params = {
        "board": lambda: rng.sample(boards, rng.randint(1, 3)),
        "heuristic": lambda: rng.sample(["none", "warnsdorff", "static_degree"],
                                        rng.randint(1, 3)),
        "tie_break": lambda: rng.sample(["move_order", "roth", "pohl"], rng.randint(1, 3)),
        "move_order": lambda: rng.sample(["default", default_order], rng.randint(1, 2)),
        "start": lambda: "all" if rng.random() < 0.6 else rng.sample(
            [[0, 0], [1, 1], [0, 2], [2, 0]], rng.randint(1, 3)),
    }
    swept = rng.sample(sorted(params), rng.randint(1, 4))
    lines = []
    fixed = {} if "board" in swept else {"board": rng.choice(boards)}
    if "start" not in swept and rng.random() < 0.3:
        fixed["start"] = "all"
    lines.append(f"fixed: {_flow(fixed)}")
    lines.append("matrix:")
    for key in swept:
        value = params[key]()
        lines.append(f"  {key}: {value if isinstance(value, str) else _flow(value)}")

    def entry(keys: list[str]) -> str:
        out = {}
        for key in keys:
            if key == "start":
                out[key] = rng.choice([[0, 0], [1, 1], [0, 2], [2, 1]])
            elif key == "move_order":
                out[key] = rng.choice(["default", "DEFAULT"])
            else:
                out[key] = rng.choice(params[key]() if key != "board" else boards)
        return _flow(out).replace("DEFAULT", default_order)

    keys = sorted(set(swept) | set(fixed))
    exclude = [entry(rng.sample(keys, rng.randint(1, min(2, len(keys)))))
               for _ in range(rng.randint(0, 2))]
    if exclude:
        lines.append("exclude: [" + ", ".join(exclude) + "]")
    include = [entry(rng.sample(sorted(params), rng.randint(1, 3)))
               for _ in range(rng.randint(0, 3))]
    if include:
        lines.append("include: [" + ", ".join(include) + "]")
    lines.append(f"repeats: {rng.randint(1, 2)}")
    return "\n".join(lines) + "\n"


def _flow(value) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    return str(value)


def test_count_equals_the_expansion_on_generated_configs():
    rng = random.Random(20261130)
    checked = 0
    for _ in range(400):
        body = _random_config(rng)
        try:
            config = cfg(body)
            trials = expand(config)
        except ConfigError:
            continue  # e.g. a start off a 2 x 3 board: refused, nothing to count
        assert count_trials(config) == len(trials), body
        assert plan_size(config) == (len(trials), "exact"), body
        assert len({t.trial_id for t in trials}) == len(trials), body
        checked += 1
    assert checked >= 300  # most generated configs are runnable


@pytest.mark.parametrize("body, n", [
    # a start listed again by include, as a combination of its own (heuristic differs)
    pytest.param("fixed: {board: [3, 4]}\nmatrix: {start: all}\n"
                 "include: [{board: [3, 4], start: [1, 1], tie_break: roth}]\n", 12,
                 id="include-repeats-one-start"),
    # tie_break means nothing under heuristic none: both blocks are the same trials,
    # but one of them lost a start to exclude
    pytest.param("fixed: {board: [3, 4]}\nmatrix: {tie_break: [move_order, roth], start: all}\n"
                 "exclude: [{tie_break: roth, start: [0, 0]}]\n", 12, id="union-of-blocks"),
    pytest.param("matrix: {board: [3, [3, 3], [3, 4]], start: all}\n", 21, id="board-aliases"),
    pytest.param("fixed: {board: [3, 4], start: all}\n", 12, id="fixed-all"),
    pytest.param("fixed: {board: [3, 4]}\nmatrix: {start: all}\n"
                 "exclude: [{start: [[0, 0], [1, 1], [9, 9]]}]\n", 10, id="exclude-alternatives"),
])
def test_count_equals_the_expansion(body, n):
    config = cfg(body)
    assert len(expand(config)) == n
    assert count_trials(config) == n


def test_four_million_starts_counted_without_expanding(capsys, tmp_path):
    body = ("fixed: {board: [2000, 2000], strategy: iterative, engine: compiled, "
            "heuristic: warnsdorff}\nmatrix: {start: all}\n")
    config = cfg(body)
    began = time.perf_counter()
    assert count_trials(config) == 4_000_000
    assert plan_size(config) == (4_000_000, "exact")
    with pytest.raises(ConfigError) as info:
        check_trial_cap(config)
    assert time.perf_counter() - began < 2.0
    assert "found:    4,000,000 trials" in str(info.value)
    path = tmp_path / "big.yaml"
    path.write_text(BASE + body)
    assert main(["validate", str(path)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "4,000,000 trials: over the cap of 1,000,000" in out


def test_count_of_a_sweep_over_the_cap_of_many_blocks():
    config = cfg("fixed: {board: [5, 5], strategy: iterative}\nmatrix:\n"
                 "  start: all\n  tie_break: [move_order, roth, pohl]\n"
                 "  heuristic: [warnsdorff, static_degree]\nrepeats: 7000\n")
    # 25 starts x 3 x 2 x 7000 = 1,050,000 > 1,000,000; none under the cap of a block
    assert count_trials(config) == 1_050_000
    assert plan_size(config) == (1_050_000, "exact")
    # six blocks are counted whole whatever the cap
    assert plan_size(config, cap=100_000) == (1_050_000, "exact")


def test_over_the_cap_several_large_blocks_are_counted_exactly(capsys, tmp_path):
    body = ("fixed: {strategy: iterative, engine: compiled, heuristic: warnsdorff}\n"
            "matrix: {board: [[2000, 2000], [1000, 1000]], start: all}\n"
            "exclude: [{start: [0, 0]}, {start: [1999, 1999]}]\nrepeats: 3\n")
    # (4,000,000 + 1,000,000 - 3 excluded) x 3
    assert plan_size(cfg(body)) == (14_999_991, "exact")
    path = tmp_path / "big.yaml"
    path.write_text(BASE + body)
    assert main(["validate", str(path)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "14,999,991 trials: over the cap of 1,000,000" in out
    # one board written two ways is one board
    same = ("fixed: {strategy: iterative, engine: compiled, heuristic: warnsdorff}\n"
            "matrix: {board: [[2000, 2000], 2000], start: all}\nrepeats: 3\n")
    assert plan_size(cfg(same)) == (12_000_000, "exact")


def test_a_sweep_of_very_many_blocks_is_counted_up_to_the_cap():
    config = parse_config("name: q\nproblem: n_queens\nfixed: {strategy: bitmask, mode: count}\n"
                          "matrix:\n  n: [" + ", ".join(str(i) for i in range(1, 10_002))
                          + "]\nexclude: [{n: 1}]\nrepeats: 200\n", "t.yaml")
    assert len(config.model.matrix["n"]) > EXACT_COUNT_BLOCKS
    n, how = plan_size(config)
    assert how == "more than" and 1_000_000 < n < 2_000_000


def test_an_original_combination_no_entry_completes_is_named():
    # board comes from include only: the entry extends heuristic none, not warnsdorff
    text = ("name: t\nproblem: knights_tour\nmatrix: {heuristic: [none, warnsdorff]}\n"
            "include: [{heuristic: none, board: 5}]\n")
    with pytest.raises(ConfigError) as info:
        expand(parse_config(text, "t.yaml"))
    message = str(info.value)
    assert "error at fixed.board" in message and '{"heuristic": "warnsdorff"}' in message
    # an entry that extends every combination completes them all
    config = parse_config(text.replace("heuristic: none, board: 5", "board: 5"), "t.yaml")
    assert [t.columns["rows"] for t in expand(config)] == [5, 5]
    assert count_trials(config) == 2


def test_values_listed_twice_do_not_multiply_the_walk():
    """100 copies of one board and one start are one combination each: counted at once."""
    config = cfg("matrix:\n  board: [" + ", ".join(["[5, 5]"] * 100) + "]\n"
                 "  start: [" + ", ".join(["[0, 0]"] * 100) + "]\n"
                 "  heuristic: [none, warnsdorff]\nrepeats: 3\n")
    began = time.perf_counter()
    assert count_trials(config) == len(expand(config)) == 6
    assert time.perf_counter() - began < 1.0


@pytest.mark.parametrize("body, fragments", [
    pytest.param("problem: n_queens\nfixed: {strategy: bitmask, mode: count}\n"
                 "matrix:\n  n: [" + ", ".join(str(i) for i in range(1, 101)) + "]\n"
                 "  engine: [python, compiled]\nrepeats: 10000\n",
                 ["matrix.n[64]", "at most 64 with engine 'compiled'", "n = 65"],
                 id="queens-n-65-compiled-late-in-the-sweep"),
    pytest.param("problem: knights_tour\nfixed: {strategy: iterative}\n"
                 "matrix: {board: [[1000, 1000], [2001, 2000]], start: all}\n",
                 ["matrix.board[1]", "at most 4,000,000 squares for strategy 'iterative'"],
                 id="knights-second-board-too-large"),
    pytest.param("problem: knights_tour\nmatrix: {board: [[500, 500], [400, 400]], start: all}\n"
                 "include: [{board: [400, 400], start: [3, 3], strategy: amb}]\nrepeats: 3\n",
                 ["error at include[0].board", "at most 64 squares for strategy 'amb'"],
                 id="include-extends-one-start"),
])
def test_validate_over_the_cap_checks_every_block(tmp_path, capsys, body, fragments):
    path = tmp_path / "big.yaml"
    path.write_text("name: t\n" + body)
    assert main(["validate", str(path)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    for fragment in fragments:
        assert fragment in err, err


@pytest.mark.parametrize("exclude, rows", [
    ("[{board: [5, 6]}]", [5, 6, 7]),          # the board 5 x 6, not boards 5 and 6
    ("[{board: [[5, 6]]}]", [5, 6, 7]),
    ("[{board: [7, 6]}]", [5, 5, 6, 7]),       # the board 7 x 6, in no combination
    ("[{board: [7, 6, 5]}]", [5]),             # no board of 3 sides: alternatives
])
def test_an_exclude_list_that_is_one_value_drops_that_value(exclude, rows):
    config = cfg(f"matrix: {{board: [[5, 6], 5, 6, 7]}}\nexclude: {exclude}\n")
    assert [t.columns["rows"] for t in expand(config)] == rows
    assert count_trials(config) == len(rows)


@pytest.mark.parametrize("body, rows", [
    ("matrix: {board: [5, 6]}\nexclude: [{board: [5, 5]}]\n", [6]),
    ("matrix: {board: [[5, 5], 6]}\nexclude: [{board: 5}]\n", [6]),
    ("matrix: {board: [5, 6], move_order: [default]}\nexclude: [{board: 5, move_order: "
     "[[-1, -2], [-2, -1], [-2, 1], [-1, 2], [1, 2], [2, 1], [2, -1], [1, -2]]}]\n", [6]),
    # two names are two values, even where heuristic none reads neither
    ("matrix: {board: [5], tie_break: [roth, pohl]}\nexclude: [{tie_break: roth}]\n", [5]),
])
def test_exclude_drops_the_same_search_however_written(body, rows):
    config = cfg(body)
    assert [t.columns["rows"] for t in expand(config)] == rows
    assert count_trials(config) == len(rows)
