"""`heuristic: none` with `tie_break: random`: a random move order at every placement.

At each placement the unvisited onward squares, in move order, are shuffled by
Fisher-Yates with the trial's SplitMix64 stream (btlab.experiments.knights.ordering.shuffle);
the compiled kernel draws the same numbers, so both engines give equal counters.
"""

from __future__ import annotations

import itertools
import textwrap
from collections import Counter

import pandas as pd
import pytest

from btlab.cli.main import main
from btlab.experiments.checker import check_tour
from btlab.experiments.compiled import solve_knights_compiled
from btlab.experiments.core import Status
from btlab.experiments.knights.ordering import shuffle
from btlab.experiments.knights.solve import (
    KnightBoard,
    SplitMix64,
    make_orderer,
    solve_knights_tour,
)
from btlab.experiments.split.subtrees import SplitError, plan_split
from btlab.problems.knights_tour import seeded, to_columns

RANDOM = dict(heuristic="none", tie_break="random")
# the exact 5 x 5 count-mode tree from a corner: 304 tours, whatever the order
COUNT_5X5 = dict(nodes=1_735_079, backtracks=1_730_936, dead_ends=625_004, checks=6_191_826,
                 solutions=304, max_depth=25)


def counters(r) -> dict:
    return {"status": r.status, "nodes": r.nodes, "backtracks": r.backtracks,
            "dead_ends": r.dead_ends, "checks": r.checks, "solutions": r.solutions,
            "max_depth": r.max_depth}


def test_shuffle_is_fisher_yates_on_splitmix64():
    rng, ref = SplitMix64(5), SplitMix64(5)
    got = shuffle([10, 11, 12, 13], rng)
    want = [10, 11, 12, 13]
    for i in (3, 2, 1):          # i = n-1 down to 1, j = next mod (i+1)
        j = ref.next() % (i + 1)
        want[i], want[j] = want[j], want[i]
    assert got == want
    assert rng.state == ref.state  # n - 1 = 3 draws, no more
    one = SplitMix64(5)
    assert shuffle([7], one) == [7] and one.state == 5  # no draw below two candidates


def test_shuffle_draws_every_order_about_equally_often():
    rng = SplitMix64(2026)
    seen = Counter(tuple(shuffle([0, 1, 2], rng)) for _ in range(6_000))
    assert set(seen) == set(itertools.permutations(range(3)))
    assert all(900 <= k <= 1100 for k in seen.values()), seen  # 1,000 expected, sd ~29


def test_orderer_permutes_the_onward_squares_and_moves_them():
    board = KnightBoard(8, 8)
    board.build_tables(lambda: False)
    plain = make_orderer(board, "none")
    shuffled = make_orderer(board, "none", "random", seed=3)
    assert shuffled.stateful is True and plain.stateful is False  # type: ignore[attr-defined]
    visited = bytearray(64)
    visited[27] = 1
    orders = set()
    for _ in range(50):
        cands, checks = shuffled(27, visited)
        base, base_checks = plain(27, visited)
        assert sorted(cands) == sorted(base) and checks == base_checks == 8
        orders.add(tuple(cands))
    assert len(orders) > 20  # the order changes from one placement to the next


@pytest.mark.parametrize("seed", [0, 1, 2026, (1 << 64) - 1])
def test_count_mode_finds_the_304_tours_for_every_seed(seed):
    got = solve_knights_compiled(5, 5, (0, 0), mode="count", seed=seed, **RANDOM)
    assert counters(got) == {"status": Status.EXHAUSTED, **COUNT_5X5}


def test_count_mode_equals_the_plain_move_order_tree_on_both_engines():
    plain = solve_knights_compiled(5, 5, (0, 0), mode="count")
    py = solve_knights_tour(5, 5, (0, 0), mode="count", strategy="iterative", seed=1, **RANDOM)
    assert counters(py) == counters(plain) == {"status": Status.EXHAUSTED, **COUNT_5X5}


def test_first_mode_counters_differ_between_seeds():
    runs = {seed: solve_knights_compiled(5, 5, (0, 0), seed=seed, **RANDOM) for seed in (1, 2, 3)}
    assert [runs[s].nodes for s in (1, 2, 3)] == [11_491, 20_773, 29_612]
    for r in runs.values():
        assert r.status is Status.SOLVED
        check_tour(5, 5, (0, 0), r.solution)
    plain = solve_knights_tour(5, 5, (0, 0))
    assert plain.nodes not in {r.nodes for r in runs.values()}


@pytest.mark.parametrize("rows, seed, budget", [
    (5, 0, None), (5, 1, None), (5, 2026, None), (5, (1 << 64) - 1, None),
    (6, 19, None), (6, 17, None), (6, 0, 40_000),
])
def test_python_and_compiled_engines_draw_the_same_orders(rows, seed, budget):
    kw = dict(seed=seed, max_nodes=budget, **RANDOM)
    ref = solve_knights_tour(rows, rows, (0, 0), strategy="iterative", **kw)
    got = solve_knights_compiled(rows, rows, (0, 0), **kw)
    assert got.counters() == ref.counters()
    assert got.solution == ref.solution
    assert ref.status is (Status.SOLVED if budget is None else Status.NODE_LIMIT)
    again = solve_knights_tour(rows, rows, (0, 0), strategy="recursive", **kw)
    assert again.counters() == ref.counters()  # same seed twice: same tree, same counters


def test_amb_strategy_walks_the_same_random_tree():
    kw = dict(seed=7, **RANDOM)
    ref = solve_knights_tour(5, 5, (0, 0), **kw)
    amb = solve_knights_tour(5, 5, (0, 0), strategy="amb", **kw)
    assert amb.counters() == ref.counters()
    assert amb.solution == ref.solution


def test_columns_keep_random_with_none_and_fold_the_other_tie_breaks():
    base = {"board": 5, "heuristic": "none"}
    assert to_columns({**base, "tie_break": "random"})["tie_break"] == "random"
    for tie in ("pohl", "roth", "move_order"):
        assert to_columns({**base, "tie_break": tie})["tie_break"] == "move_order"
    assert seeded({"heuristic": "none", "tie_break": "random"}) is True
    assert seeded({"heuristic": "none", "tie_break": "move_order"}) is False


def test_split_refuses_the_random_move_order():
    with pytest.raises(SplitError, match="random tie-break"):
        plan_split("knights_tour", {"rows": 6, "cols": 6, **RANDOM}, 3)


def test_split_config_with_the_random_move_order_exits_2(tmp_path, capsys):
    cfg = tmp_path / "split.yaml"
    cfg.write_text(textwrap.dedent("""\
        name: random-order-split
        problem: knights_tour
        fixed: {board: 5, heuristic: none, tie_break: random}
        split: {depth: 3}
    """))
    assert main(["run", str(cfg), "--out", str(tmp_path / "r"), "--quiet"]) == 2
    text = capsys.readouterr()
    assert "tie_break: random" in text.out + text.err
    assert not (tmp_path / "r").exists() or not list((tmp_path / "r").glob("*.parquet"))


def test_a_sweep_runs_the_random_move_order_with_equal_repeats(tmp_path):
    cfg = tmp_path / "sweep.yaml"
    cfg.write_text(textwrap.dedent("""\
        name: random-order
        problem: knights_tour
        fixed: {board: 5, heuristic: none, tie_break: random, strategy: iterative}
        matrix: {engine: [python, compiled]}
        repeats: 2
        seed: 11
    """))
    out = tmp_path / "r"
    assert main(["run", str(cfg), "--out", str(out), "--quiet", "--backend", "serial"]) == 0
    df = pd.read_parquet(out)
    assert len(df) == 4 and set(df["tie_break"]) == {"random"}
    cols = ["status", "nodes", "backtracks", "dead_ends", "checks", "solutions", "max_depth"]
    assert len(df[cols].drop_duplicates()) == 1  # both engines, both repeats
    plain = solve_knights_tour(5, 5, (0, 0))
    assert df["nodes"].iloc[0] != plain.nodes  # the seed did reorder the tree
