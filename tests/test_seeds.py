"""The seed as a sweep key: ``matrix: {seed: [...]}``, ``seed: A..B``, in fixed/include."""

from __future__ import annotations

import textwrap

import pandas as pd
import pytest

from btlab.cli.main import main
from btlab.config.model import parse_config
from btlab.errors import ConfigError
from btlab.execution.execute import run_trial
from btlab.store.folder import part_files
from btlab.sweep.expand import check_blocks, count_trials, expand, plan_size

BASE = """\
name: s
problem: knights_tour
fixed: {board: 5, heuristic: warnsdorff, tie_break: random}
budget: {nodes: 100000}
seed: 2026
"""

#: Trial ids of BASE with these starts, as btlab gave them before the seed could be swept.
STORED_IDS = {(0, 0): "49b8af9d5c85e82d", (2, 2): "b5612c2072c3903c"}


def cfg(extra: str, base: str = BASE, overrides: tuple[str, ...] = ()):
    return parse_config(base + textwrap.dedent(extra), "s.yaml", overrides)


def test_top_level_seed_keeps_stored_trial_ids():
    trials = expand(cfg("matrix: {start: [[0, 0], [2, 2]]}\n"))
    assert {(t.columns["start_row"], t.columns["start_col"]): t.trial_id
            for t in trials} == STORED_IDS
    assert [t.seed for t in trials] == [2026, 2026]


def test_matrix_seed_2026_is_the_top_level_seed_2026():
    swept = expand(cfg("matrix: {start: [[0, 0], [2, 2]], seed: [2026, 7]}\n",
                       base=BASE.replace("seed: 2026", "seed: 1")))
    by = {(t.columns["start_row"], t.seed): t for t in swept}
    assert len(swept) == 4
    assert by[(0, 2026)].trial_id == STORED_IDS[(0, 0)]
    assert by[(2, 2026)].trial_id == STORED_IDS[(2, 2)]
    assert by[(0, 7)].trial_id not in STORED_IDS.values()
    assert by[(0, 7)].solver_seed != by[(0, 2026)].solver_seed
    assert "seed" not in by[(0, 7)].columns


def test_fixed_and_include_seed():
    text = BASE.replace("tie_break: random}", "tie_break: random, seed: 2026}")
    fixed = expand(parse_config(text.replace("\nseed: 2026", "\nseed: 3"), "s.yaml"))
    assert [(t.seed, t.trial_id) for t in fixed] == [(2026, STORED_IDS[(0, 0)])]
    inc = expand(cfg("matrix: {seed: [1, 2]}\ninclude:\n  - {seed: 2, start: [2, 2]}\n"
                     "  - {seed: 9, start: [2, 2]}\n"))
    assert [(t.seed, t.columns["start_row"]) for t in inc] == [(1, 0), (2, 2), (9, 2)]


def test_range_shorthand_and_override():
    trials = expand(cfg("matrix: {seed: 1..5}\n"))
    assert [t.seed for t in trials] == [1, 2, 3, 4, 5]
    assert len({t.trial_id for t in trials}) == 5
    neg = expand(cfg("matrix: {seed: -2..0}\n"))
    assert [t.seed for t in neg] == [-2, -1, 0]
    over = expand(cfg("matrix: {seed: 1..5}\n", overrides=("matrix.seed=[1,2]",)))
    assert [t.seed for t in over] == [1, 2]
    over = expand(cfg("", overrides=("+matrix.seed=10..12",)))
    assert [t.seed for t in over] == [10, 11, 12]


def test_exclude_seed():
    trials = expand(cfg("matrix: {seed: 1..4, start: [[0, 0], [2, 2]]}\n"
                        "exclude:\n  - {seed: [2, 3], start: [0, 0]}\n"))
    assert sorted((t.seed, t.columns["start_row"]) for t in trials) == [
        (1, 0), (1, 2), (2, 2), (3, 2), (4, 0), (4, 2)]


@pytest.mark.parametrize("extra, n", [
    ("matrix: {seed: 1..1000, start: [[0, 0], [2, 2]]}\n", 2000),
    ("matrix: {seed: 1..10, start: all}\n", 250),
    ("matrix: {seed: [1, 1, 2], start: all}\nrepeats: 2\n", 100),
    ("matrix: {seed: 1..3, start: all}\nexclude:\n  - {seed: 2, start: [0, 0]}\n", 74),
    ("matrix: {seed: 1..3}\ninclude:\n  - {seed: 5}\n", 4),
])
def test_plan_size_equals_expand(extra, n):
    config = cfg(extra)
    assert len(expand(config)) == n
    assert count_trials(config) == n
    assert plan_size(config) == (n, "exact")


def test_plan_size_counts_a_huge_range_by_arithmetic():
    config = cfg("matrix: {seed: 1..100000000000, start: all}\n")
    assert plan_size(config) == (2_500_000_000_000, "exact")
    assert check_blocks(config) is True  # every combination but the seed checked, once
    bad = cfg("matrix: {seed: 1..100000000000, start: all}\ninclude:\n  - {start: [9, 9]}\n")
    with pytest.raises(ConfigError, match="include"):
        check_blocks(bad)


def test_random_tie_break_differs_by_seed():
    trials = expand(cfg("matrix: {seed: [1, 2, 1], start: [[2, 2]]}\n",
                        base=BASE.replace("board: 5", "board: 6")))
    rows = [run_trial(t) for t in trials]
    assert [r["seed"] for r in rows] == [1, 2]
    counters = [(r["nodes"], r["backtracks"]) for r in rows]
    again = run_trial(trials[0])
    assert (again["nodes"], again["backtracks"]) == counters[0]
    assert counters == [(45, 9), (36, 0)]  # the same tree, walked in two random orders


@pytest.mark.parametrize("extra, key, found", [
    ("matrix: {seed: 1.5..3}\n", "matrix.seed", "1.5..3"),
    ("matrix: {seed: 5..1}\n", "matrix.seed", "5..1 (A > B)"),
    ("matrix: {seed: 1..9223372036854775808}\n", "matrix.seed", "seed = 9,223,372,036,854,775,808"),
    ("matrix: {seed: [1, x]}\n", "matrix.seed[1]", "'x'"),
    ("matrix: {seed: [true]}\n", "matrix.seed[0]", "true"),
    ("matrix: {seed: []}\n", "matrix.seed", "an empty list"),
    ("matrix: {seed: 7}\n", "matrix.seed", "7"),
    ("matrix: {seed: [-9223372036854775809]}\n", "matrix.seed[0]", "seed = -9,223,372"),
    ("include:\n  - {seed: [1, 2]}\n", "include[0].seed", "[1, 2]"),
    ("exclude:\n  - {seed: 1}\n", "exclude[0].seed", "which is in neither"),
])
def test_bad_seeds(extra, key, found):
    with pytest.raises(ConfigError) as info:
        cfg(extra)
    text = str(info.value)
    assert key in text and found in text and "s.yaml" in text


def test_run_writes_one_row_per_seed_and_resumes(tmp_path, capsys):
    path = tmp_path / "s.yaml"
    path.write_text(BASE.replace("board: 5", "board: 6")
                    + "matrix: {seed: 1..3, start: [[2, 2]]}\n")
    out = tmp_path / "r"
    assert main(["run", str(path), "--backend", "serial", "--out", str(out), "--quiet"]) == 0
    df = pd.concat(pd.read_parquet(p) for p in part_files(out)).sort_values("seed")
    assert df["seed"].tolist() == [1, 2, 3]
    assert df["trial_id"].nunique() == 3
    assert df["nodes"].tolist()[:2] == [45, 36]
    assert main(["run", str(path), "--backend", "serial", "--out", str(out), "--quiet"]) == 0
    assert len(part_files(out)) == 1  # every seed's trial was found done: nothing ran again
    assert main(["validate", str(path)]) == 0
    assert "seed=3" in capsys.readouterr().out


@pytest.mark.parametrize("value, fix", [
    ("1..10", "write matrix: {seed: 1..10}"),
    ("[1, 2]", "write matrix: {seed: [1, 2]}"),
])
def test_top_level_seed_list_points_to_matrix(value, fix):
    with pytest.raises(ConfigError) as info:
        parse_config(BASE.replace("seed: 2026", f"seed: {value}"), "s.yaml")
    assert "error at seed" in str(info.value) and fix in str(info.value)
