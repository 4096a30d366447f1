"""Seed ranges named in exclude/include are counted by arithmetic, and trial ids are made
of exact values (issue 26, kinds 7 and 9)."""

from __future__ import annotations

import resource
import textwrap
import time

import pandas as pd
import pytest

from btlab.cli.main import main
from btlab.config.model import parse_config
from btlab.config.restarts import Restarts, factor_text
from btlab.store.folder import part_files
from btlab.sweep.expand import expand, plan_size

BASE = """\
name: s
problem: knights_tour
fixed: {board: 5, heuristic: warnsdorff, tie_break: random}
budget: {nodes: 100000}
seed: 2026
"""


def cfg(extra: str, base: str = BASE):
    return parse_config(base + textwrap.dedent(extra), "s.yaml")


@pytest.mark.parametrize("extra", [
    pytest.param("matrix: {seed: 1..6, start: [[0, 0], [2, 2]]}\nexclude:\n  - {seed: 5}\n",
                 id="exclude-one-seed"),
    pytest.param("matrix: {seed: 1..6, start: [[0, 0], [2, 2]]}\ninclude:\n  - {seed: 0}\n",
                 id="include-a-seed-outside"),
    pytest.param("matrix: {seed: 1..6, start: [[0, 0], [2, 2]]}\ninclude:\n"
                 "  - {seed: 3, heuristic: none}\n", id="include-extends-one-seed"),
    pytest.param("matrix: {seed: 1..6, start: [[0, 0], [2, 2]]}\nexclude:\n"
                 "  - {seed: [2, 3], start: [0, 0]}\ninclude:\n  - {seed: 4, start: [1, 2]}\n"
                 "  - {board: 6}\n", id="partial-exclude-and-two-includes"),
    pytest.param("matrix: {start: [[0, 0], [2, 2]], seed: 1..6}\ninclude:\n"
                 "  - {start: [0, 0], seed: 9}\n  - {start: [4, 4]}\n", id="seed-key-last"),
    pytest.param("matrix: {start: all, seed: 2020..2030}\nexclude:\n"
                 "  - {seed: 2026, start: [0, 0]}\ninclude:\n"
                 "  - {seed: 2021, start: [1, 2], heuristic: none}\n", id="all-and-top-seed"),
    pytest.param("matrix: {seed: [5, 6, 7, 8, 9], start: [[0, 0], [2, 2]]}\nexclude:\n"
                 "  - {seed: 7}\n", id="seed-list"),
    # an entry that extends nothing is one trial, not one per seed
    pytest.param("matrix: {seed: 1..6, start: [[0, 0], [2, 2]]}\ninclude:\n  - {board: 6}\n",
                 id="include-own-combination"),
    pytest.param("matrix: {seed: 2024..2030, start: [[0, 0], [2, 2]]}\ninclude:\n"
                 "  - {board: 6}\n", id="include-own-combination-top-seed-in-range"),
])
def test_plan_size_equals_expand_with_seeds_in_entries(extra):
    config = cfg(extra)
    assert plan_size(config) == (len(expand(config)), "exact")


@pytest.mark.parametrize("extra, count", [
    ("matrix: {seed: 1..1000000000000}\nexclude:\n  - {seed: 5}\n", 10**12 - 1),
    ("matrix: {seed: 1..1000000}\ninclude:\n  - {seed: 0}\n", 10**6 + 1),
    ("matrix: {seed: 1..1000000000000, start: [[0, 0], [2, 2]]}\nexclude:\n"
     "  - {seed: [5, 9], start: [0, 0]}\ninclude:\n  - {seed: 7, heuristic: none}\n",
     2 * 10**12 - 2 + 1),  # heuristic: none overwrites fixed: a trial of its own
])
def test_a_huge_range_with_seeds_in_entries_is_counted_not_walked(extra, count):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    assert plan_size(cfg(extra)) == (count, "exact")
    assert time.perf_counter() - start < 2.0  # was 20 s, walking a million blocks
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 50_000  # KB


def test_validate_counts_a_huge_range_with_an_excluded_seed(tmp_path, capsys):
    path = tmp_path / "s.yaml"
    path.write_text(BASE + "matrix: {seed: 1..1000000000000}\nexclude:\n  - {seed: 5}\n")
    start = time.perf_counter()
    assert main(["validate", str(path)]) == 0
    assert time.perf_counter() - start < 10.0
    assert "999,999,999,999 trials: over the cap" in capsys.readouterr().out


# -- kind 9: no rounding in what makes a trial id

RESTARTS = BASE + "matrix:\n  restarts:\n"


def test_factors_that_round_alike_are_two_trials_with_two_ids():
    config = parse_config(RESTARTS + "    - {policy: geometric, unit: 5, factor: 1.5}\n"
                          "    - {policy: geometric, unit: 5, factor: 1.5000001}\n", "s.yaml")
    trials = expand(config)
    assert len(trials) == 2 and len({t.trial_id for t in trials}) == 2
    assert [t.restarts.label() for t in trials if t.restarts] == [
        "geometric unit=5 on=nodes factor=1.5", "geometric unit=5 on=nodes factor=1.5000001"]
    assert plan_size(config) == (2, "exact")


def test_run_writes_one_row_per_factor(tmp_path, capsys):
    path = tmp_path / "s.yaml"
    path.write_text(RESTARTS + "    - {policy: geometric, unit: 5, factor: 1.0000001, max: 3}\n"
                    "    - {policy: geometric, unit: 5, factor: 1.0000002, max: 3}\n")
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out), "--backend", "serial"]) == 0
    df = pd.concat(pd.read_parquet(p) for p in part_files(out))
    assert len(df) == 2 and df["trial_id"].is_unique
    assert sorted(df["restarts"]) == ["geometric unit=5 on=nodes factor=1.0000001 max=3",
                                      "geometric unit=5 on=nodes factor=1.0000002 max=3"]


@pytest.mark.parametrize("factor, text", [
    (2, "2"), (1.5, "1.5"), (1.25, "1.25"), (3.14159, "3.14159"), (999.5, "999.5"),
    (1.5000001, "1.5000001"), (1.0000001, "1.0000001"), (1 / 3, "0.3333333333333333"),
])
def test_factor_text_is_exact_and_keeps_short_labels(factor, text):
    assert factor_text(factor) == text and float(text) == factor
    label = Restarts("geometric", 1, "nodes", factor=factor).label()
    assert label == f"geometric unit=1 on=nodes factor={text}"


# -- kind 8: the driver's memory while it walks a seed sweep


def _walk_peak(seeds: int) -> int:
    """tracemalloc's peak (bytes) while the trials of ``seed: 1..seeds`` are walked."""
    import tracemalloc

    from btlab.sweep.expand import iter_trials
    config = cfg(f"matrix: {{seed: 1..{seeds}, start: [[0, 0], [2, 2]]}}\n")
    tracemalloc.start()
    try:
        n = sum(1 for _ in iter_trials(config))
        return tracemalloc.get_traced_memory()[1] if n == 2 * seeds else -1
    finally:
        tracemalloc.stop()


def test_walking_ten_times_the_seeds_takes_no_more_memory():
    small, large = _walk_peak(300), _walk_peak(3000)
    assert small > 0 and large > 0
    # a set of every combination seen held ~300 bytes a trial: 1.6 MB more here
    assert large - small < 200_000, (small, large)


def test_duplicates_of_a_swept_seed_are_dropped_seed_by_seed():
    config = parse_config(BASE.replace("board: 5, ", "") + "matrix: {board: [5, [5, 5], 6], "
                          "seed: 1..4, start: [[0, 0], [2, 2]]}\nexclude:\n"
                          "  - {seed: 2, board: 6}\n", "s.yaml")
    trials = expand(config)
    assert sorted((t.seed, t.columns["rows"], t.columns["start_row"]) for t in trials) == [
        (s, b, r) for s in (1, 2, 3, 4) for b in (5, 6) for r in (0, 2) if (s, b) != (2, 6)]
    assert len({t.trial_id for t in trials}) == len(trials) == 14


def test_a_board_too_large_past_the_first_seeds_is_found():
    from btlab.errors import ConfigError
    from btlab.sweep.expand import check_blocks
    config = parse_config(BASE.replace("board: 5, ", "strategy: recursive, ") +
                          "matrix: {board: [5, 100000], seed: 1..1000000}\n"
                          "exclude:\n  - {seed: 5}\n", "s.yaml")
    with pytest.raises(ConfigError, match="board"):
        check_blocks(config)
