"""The keyed loop of boards over 64 squares walks the general loop's tree: equal counters.

Boards of more than 64 squares hand ``warnsdorff`` with ``pohl``/``roth`` ties and
``static_degree`` with any tie but ``random`` to
:mod:`btlab.experiments.compiled.knights.widekeyed`; without its cell bytes the same call
runs the general loop of :func:`btlab.experiments.compiled.knights.kernel.knights_run`.
Both are held equal here, and to the pure-Python reference, on searches in one
call, in pauses (a time budget), as subtrees below a prefix and under backtrack
budgets; and a large board's first tour is checked.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from btlab.experiments.checker import check_tour  # noqa: E402
from btlab.experiments.compiled import knights_subtree_compiled, solve_knights_compiled
from btlab.experiments.compiled.knights import kernel as knights_kernel
from btlab.experiments.compiled.knights.kernel import PAUSE_EVERY  # noqa: E402
from btlab.experiments.core import Status  # noqa: E402
from btlab.experiments.knights.solve import solve_knights_tour  # noqa: E402

ORDERS = [("warnsdorff", "pohl"), ("warnsdorff", "roth"), ("static_degree", "move_order"),
          ("static_degree", "pohl"), ("static_degree", "roth")]


@pytest.fixture
def general(monkeypatch):
    """Run a call on the general loop (no cell bytes: the keyed loop is not taken)."""
    def run(fn, *args, **kw):
        with monkeypatch.context() as m:
            m.setattr(knights_kernel, "unvisited_degrees", lambda *a: np.zeros(0, np.uint8))
            return fn(*args, **kw)
    return run


def _same(a, b, what):
    assert a.counters() == b.counters(), what
    assert a.solution == b.solution, what


def test_the_general_fixture_reaches_another_loop(general):
    # the comparisons below mean something only if the fixture takes the other loop:
    # the keyed loop needs the cell bytes, made once per search
    kw = dict(mode="count", heuristic="warnsdorff", tie_break="pohl", max_nodes=20_000)
    calls = []
    real = knights_kernel.unvisited_degrees

    def spy(*a):
        calls.append(a)
        return real(*a)

    knights_kernel.unvisited_degrees = spy
    try:
        solve_knights_compiled(9, 9, (0, 0), **kw)
        assert len(calls) == 1
        general(solve_knights_compiled, 9, 9, (0, 0), **kw)
        assert len(calls) == 1  # replaced: the cell bytes were not made
    finally:
        knights_kernel.unvisited_degrees = real


@pytest.mark.parametrize("heuristic, tie", ORDERS)
def test_keyed_loop_equals_the_general_loop_and_the_reference(general, heuristic, tie):
    for rows, cols, start, mode, cap in [(9, 9, (0, 1), "count", 300_000),
                                         (9, 9, (4, 4), "first", 300_000),
                                         (5, 14, (2, 6), "count", 200_000),
                                         (3, 22, (1, 10), "count", 200_000),
                                         (12, 12, (0, 0), "first", 300_000)]:
        for closed in (False, True):
            kw = dict(mode=mode, heuristic=heuristic, tie_break=tie, closed=closed,
                      max_nodes=cap)
            got = solve_knights_compiled(rows, cols, start, **kw)
            _same(got, general(solve_knights_compiled, rows, cols, start, **kw),
                  (rows, cols, start, kw))
            assert got.nodes == cap or got.status in (Status.SOLVED, Status.EXHAUSTED)
            if got.solution is not None:
                check_tour(rows, cols, start, got.solution, closed)
            small = dict(kw, max_nodes=20_000)
            ref = solve_knights_tour(rows, cols, start, strategy="iterative", **small)
            _same(solve_knights_compiled(rows, cols, start, **small), ref, (rows, cols, small))


@pytest.mark.parametrize("heuristic, tie", ORDERS)
def test_keyed_loop_pauses_and_resumes_to_the_same_counters(general, heuristic, tie):
    # a time budget runs the kernel in chunks of PAUSE_EVERY placements; the cell
    # bytes are kept across the chunks
    cap = 2 * PAUSE_EVERY + 12_345
    kw = dict(mode="count", heuristic=heuristic, tie_break=tie, max_nodes=cap)
    whole = solve_knights_compiled(9, 9, (2, 2), **kw)
    chunked = solve_knights_compiled(9, 9, (2, 2), max_seconds=600.0, **kw)
    assert whole.nodes == cap and whole.status is Status.NODE_LIMIT
    _same(chunked, whole, (heuristic, tie))
    _same(general(solve_knights_compiled, 9, 9, (2, 2), max_seconds=600.0, **kw), whole,
          (heuristic, tie))


@pytest.mark.parametrize("heuristic, tie", ORDERS)
def test_keyed_loop_subtrees_equal_the_general_loop(general, heuristic, tie):
    # 9 x 9 from (0, 0) = square 0: subtrees below a prefix; the larger budget crosses
    # a chunk (a pause and a resume)
    for path, cap in [((0, 11, 22), 2 * PAUSE_EVERY + 999), ((0, 19, 38), 100_000),
                      ((0, 11), 100_000)]:
        kw = dict(mode="count", heuristic=heuristic, tie_break=tie, max_nodes=cap)
        got = knights_subtree_compiled(9, 9, path, **kw)
        assert got.nodes == cap
        _same(got, general(knights_subtree_compiled, 9, 9, path, **kw), (path, kw))
        timed = knights_subtree_compiled(9, 9, path, max_seconds=600.0, **kw)
        _same(timed, got, (path, kw))


@pytest.mark.parametrize("heuristic, tie", ORDERS)
def test_keyed_loop_keeps_the_backtrack_budget(general, heuristic, tie):
    for cap in (0, 1, 37, 5_000):
        kw = dict(mode="count", heuristic=heuristic, tie_break=tie, max_backtracks=cap)
        got = solve_knights_compiled(9, 9, (0, 0), **kw)
        assert got.backtracks == cap and got.status is Status.BACKTRACK_LIMIT
        _same(got, general(solve_knights_compiled, 9, 9, (0, 0), **kw), (cap, kw))
        ref = solve_knights_tour(9, 9, (0, 0), strategy="iterative", **kw)
        _same(got, ref, (cap, kw))


def test_a_200x200_warnsdorff_roth_tour_from_the_corner():
    got = solve_knights_compiled(200, 200, (0, 0), heuristic="warnsdorff", tie_break="roth")
    assert got.status is Status.SOLVED
    assert got.backtracks == 0 and got.dead_ends == 0
    assert got.nodes == 200 * 200 and got.max_depth == 200 * 200
    check_tour(200, 200, (0, 0), got.solution, False)
