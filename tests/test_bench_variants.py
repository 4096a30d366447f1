"""The bench's variants section (bench/variants.py): its cases run and check the right counters.

``python -m bench --only variants`` times a variant only after its counters
pass :func:`bench.variants.check`; this test holds, on quick sizes, that each
case's two sides give the counters the check expects, and that the check
refuses counters that differ.
"""

from __future__ import annotations

import dataclasses

import pytest

pytest.importorskip("numba")

from bench.variants import (  # noqa: E402
    LIMIT,
    check,
    describe,
    knights_variants,
    measure,
    queens_unique,
    split_variant,
    variants,
)
from btlab.experiments.compiled import solve_knights_compiled, solve_queens_compiled  # noqa: E402


def test_unique_8_queens_counts_12_on_the_plain_count_tree():
    v = queens_unique(8)
    got, seconds, placements = v.run()
    base, _, _ = v.base()
    assert (got.solutions, got.extra["all_solutions"], base.solutions) == (12, 92, 92)
    assert got.nodes == base.nodes == placements == 2056
    assert (got.checks, got.backtracks, got.dead_ends) == (15720, 1506, 644)
    assert seconds > 0
    assert check(v, got, base) == ""
    wrong = dataclasses.replace(got, extra={"all_solutions": 91})
    assert "all_solutions 91" in check(v, wrong, base)


def test_split_sums_equal_the_unsplit_count():
    q = split_variant("n_queens", {"n": 8, "strategy": "bitmask"}, "8-Queens",
                      lambda: solve_queens_compiled(8, "count"))
    got, _, task_nodes = q.run()
    base, _, _ = q.base()
    assert got.counters() == base.counters() and base.solutions == 92
    # the tasks hold every placement but the top part's (the queens above the cut)
    depth = int(q.name.split("(depth ")[1].split(")")[0])
    assert 0 < base.nodes - task_nodes < 8 ** depth and check(q, got, base) == ""
    k = split_variant("knights_tour", {"rows": 5, "cols": 5, "start": (0, 0),
                                       "strategy": "iterative"}, "5x5",
                      lambda: solve_knights_compiled(5, 5, (0, 0), mode="count"))
    got, _, task_nodes = k.run()
    base, _, _ = k.base()
    assert (got.nodes, got.solutions) == (base.nodes, base.solutions) == (1_735_079, 304)
    assert got.counters() == base.counters() and task_nodes < got.nodes
    off = dataclasses.replace(got, backtracks=got.backtracks - 1)
    assert check(k, off, base) != ""


def test_knight_variants_make_equal_placements_under_the_cap():
    cases = knights_variants(quick=True)
    assert len(cases) == 10  # 5 orders, 8 x 8 and 9 x 9
    for v in cases:
        got, _, placements = v.run()
        base, _, _ = v.base()
        assert got.nodes == base.nodes == placements == 1_000_000, v.name
        assert check(v, got, base) == ""
    # pohl looks one square further: more checks per placement than move-order ties
    pohl = next(v for v in cases if "8x8" in v.name and "pohl" in v.name)
    got, base = pohl.run()[0], pohl.base()[0]
    assert got.checks / got.nodes > 1.2 * base.checks / base.nodes
    assert check(pohl, dataclasses.replace(got, nodes=got.nodes - 1), base) != ""


def test_measure_times_only_checked_cases_and_rows_read_right():
    v = queens_unique(6)
    m = measure(v, max_rounds=3)
    assert m.differs == "" and m.rounds == 3 and m.ns > 0 and m.base_ns > 0
    measured, baseline, ratio = describe(m)
    assert "ns/placement" in measured and "plain count" in baseline and ratio.endswith("rounds)")
    bad = dataclasses.replace(v, base=lambda: (solve_queens_compiled(7, "count"), 1.0, 1))
    m = measure(bad, max_rounds=3)
    assert m.differs and m.rounds == 0 and m.ns == 0
    assert LIMIT == 1.2
    assert [c.same for c in variants(quick=True)[-3:]] == ["all but solutions", "counters",
                                                           "counters"]
