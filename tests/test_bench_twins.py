"""The C twins of the compiled kernels (bench/dfs.c) walk the kernels' trees: equal counters.

``python -m bench`` compares times only when the counters agree; this test holds
them equal on tiny searches (both heuristics, first and count, node caps, boards
on both sides of 64 squares, N-Queens n = 1..10).
"""

from __future__ import annotations

import pytest

from bench.twins import CASES, Case, build_c, compare, run_c


@pytest.fixture(scope="module")
def exe(tmp_path_factory):
    path, why = build_c(str(tmp_path_factory.mktemp("twins")))
    if path is None:
        pytest.skip(f"the C twins need gcc: {why}")
    return path


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_c_twin_counters_equal_the_kernel(exe, case):
    counters, seconds = run_c(exe, case.c_args())
    assert counters == case.kernel()().counters()
    assert seconds >= 0


def test_known_values_from_the_c_twins(exe):
    # docs/metrics.md: n = 8 count; 3 x 4 count; 5 x 5 from a corner, 304 tours
    q, _ = run_c(exe, Case("queens", (8, "count", None)).c_args())
    assert (q["nodes"], q["checks"], q["solutions"], q["backtracks"], q["dead_ends"]) == (
        2056, 15720, 92, 1506, 644)
    k, _ = run_c(exe, Case("knights", (3, 4, 0, 0, "none", "count", None)).c_args())
    assert (k["nodes"], k["backtracks"], k["dead_ends"], k["solutions"]) == (67, 50, 13, 2)
    k, _ = run_c(exe, Case("knights", (5, 5, 0, 0, "none", "count", None)).c_args())
    assert (k["nodes"], k["solutions"]) == (1_735_079, 304)


def test_compare_times_only_equal_counters(exe):
    t = compare(Case("queens", (8, "count", None)), exe, max_rounds=3)
    assert t.same and t.rounds == 3 and t.kernel_s > 0 and t.c_s > 0
    bad = Case("queens", (8, "count", None))
    bad.c_args = lambda: ["queens", 7, 0, 1 << 62]  # type: ignore[method-assign]
    t = compare(bad, exe)
    assert not t.same and t.rounds == 0
