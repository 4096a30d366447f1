"""The 64-bit-mask kernels of the other orders walk the general loop's tree: equal counters.

Boards of at most 64 squares hand ``warnsdorff`` with ``pohl``/``roth`` ties and
``static_degree`` with any tie to :mod:`btlab.experiments.compiled.knights.ties64` or
:mod:`btlab.experiments.compiled.knights.random64`, and ``none`` with ``random`` to
:mod:`btlab.experiments.compiled.knights.shuffle64`; without the mask tables the same
call runs the general loop of :func:`btlab.experiments.compiled.knights.kernel.knights_run`.
Both are held equal here on searches far past the reference tests' budgets, in
one call, in pauses (a time budget) and as subtrees.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from btlab.experiments.compiled import knights_subtree_compiled, solve_knights_compiled
from btlab.experiments.compiled.knights import kernel as knights_kernel

ORDERS = [("warnsdorff", "pohl"), ("warnsdorff", "roth"), ("static_degree", "move_order"),
          ("static_degree", "pohl"), ("static_degree", "roth"), ("static_degree", "random"),
          ("none", "random"), ("warnsdorff", "random")]

_NO_MASKS = (np.zeros((0, 8), np.uint8), np.zeros(0, np.uint64))


@pytest.fixture
def general(monkeypatch):
    """Run a call on the general loop (no mask tables: as on a board over 64 squares)."""
    def run(fn, *args, **kw):
        with monkeypatch.context() as m:
            m.setattr(knights_kernel, "mask_tables", lambda *a: _NO_MASKS)
            return fn(*args, **kw)
    return run


def _same(a, b, what):
    assert a.counters() == b.counters(), what
    assert a.solution == b.solution, what


@pytest.mark.parametrize("heuristic, tie", ORDERS)
def test_mask_kernels_equal_the_general_loop(general, heuristic, tie):
    for rows, cols, start, mode, cap in [(8, 8, (0, 1), "count", 300_000),
                                         (8, 8, (3, 4), "first", 300_000),
                                         (5, 5, (0, 0), "count", None),
                                         (7, 9, (6, 8), "count", 200_000)]:
        for closed in (False, True):
            kw = dict(mode=mode, heuristic=heuristic, tie_break=tie, closed=closed,
                      max_nodes=cap, seed=2026)
            got = solve_knights_compiled(rows, cols, start, **kw)
            _same(got, general(solve_knights_compiled, rows, cols, start, **kw),
                  (rows, cols, start, kw))
            if cap is not None:
                assert got.nodes == cap or got.status.value in ("solved", "exhausted")


@pytest.mark.parametrize("heuristic, tie", ORDERS)
def test_mask_kernels_pause_and_resume_to_the_same_counters(heuristic, tie):
    # a time budget runs the kernel in chunks of PAUSE_EVERY placements
    kw = dict(mode="count", heuristic=heuristic, tie_break=tie, max_nodes=400_000, seed=7)
    whole = solve_knights_compiled(8, 8, (2, 2), **kw)
    chunked = solve_knights_compiled(8, 8, (2, 2), max_seconds=600.0, **kw)
    assert whole.nodes == 400_000
    _same(chunked, whole, (heuristic, tie))


@pytest.mark.parametrize("heuristic, tie", [o for o in ORDERS if o[1] != "random"])
def test_mask_kernels_subtrees_equal_the_general_loop(general, heuristic, tie):
    # 5 x 6 from (0, 0), subtrees below its first moves (a prefix on the board); the
    # larger budget crosses a chunk (CHUNK_EVERY placements: a pause and a resume)
    for path, cap in [((0, 13, 26), 1_500_000), ((0, 13, 24), 200_000), ((0, 8), 200_000)]:
        kw = dict(mode="count", heuristic=heuristic, tie_break=tie, max_nodes=cap)
        got = knights_subtree_compiled(5, 6, path, **kw)
        assert got.nodes > 1000
        _same(got, general(knights_subtree_compiled, 5, 6, path, **kw), (path, kw))


@pytest.mark.parametrize("heuristic, tie", ORDERS)
def test_mask_kernels_keep_the_backtrack_budget(general, heuristic, tie):
    for cap in (0, 1, 37, 5_000):
        kw = dict(mode="count", heuristic=heuristic, tie_break=tie, max_backtracks=cap, seed=3)
        got = solve_knights_compiled(8, 8, (0, 0), **kw)
        assert got.backtracks == cap and got.status.value == "backtrack_limit"
        _same(got, general(solve_knights_compiled, 8, 8, (0, 0), **kw), (cap, kw))
