"""The knight's-tour loop registry: the loop is chosen before numba compiles, and the
first-mode loops count exactly as the reference.

* every registry entry's sample search is taken by that entry, and a trial's
  kernel kind names the loop its search runs;
* the first-mode plain loops (``run64_first``, ``runwide_first``) give the pure-Python
  reference's counters and tour, under node, backtrack and time budgets, as
  subtrees below a prefix, open and closed, and in pauses (every call a chunk);
* a fresh process that runs one compiled search compiles that loop alone;
* ``btlab run`` says "compiling kernels" when it compiles, and not when it loads.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("numba")

from btlab.experiments.compiled import (  # noqa: E402
    knights_kind,
    knights_subtree_compiled,
    solve_knights_compiled,
    warm_up,
    warm_up_kinds,
)
from btlab.experiments.compiled._driver import CHUNK_EVERY  # noqa: E402
from btlab.experiments.compiled.knights import kernel as knights_kernel  # noqa: E402
from btlab.experiments.compiled.knights import loops  # noqa: E402
from btlab.experiments.core import Budget  # noqa: E402
from btlab.experiments.knights.solve import (  # noqa: E402
    KnightBoard,
    make_orderer,
    search_subtree,
    solve_knights_tour,
)

ROOT = Path(__file__).resolve().parent.parent


def test_each_sample_runs_its_own_loop():
    for name, loop in loops.loops().items():
        rows, cols, heuristic, tie, first = loop.sample
        assert knights_kind(rows * cols, heuristic, tie, first) == f"knights:{name}"
        assert f"knights:{name}" in warm_up_kinds()
    assert list(loops.loops())[-1] == "run_general"


def test_the_kind_of_a_search():
    assert knights_kind(64, "none", "move_order", True) == "knights:run64_first"
    assert knights_kind(64, "none", "pohl", True) == "knights:run64_first"  # ties: move order
    assert knights_kind(64, "none", "move_order", False) == "knights:run64_plain"
    assert knights_kind(81, "none", "roth", True) == "knights:runwide_first"
    assert knights_kind(64, "warnsdorff", "random", True) == "knights:run64_random"
    assert knights_kind(81, "warnsdorff", "random", True) == "knights:run_general"
    with pytest.raises(ValueError, match="unknown kernel kind"):
        warm_up("knights:no_such_loop")


BOARDS = [(1, 1, (0, 0)), (3, 4, (0, 0)), (5, 5, (0, 0)), (5, 5, (1, 2)), (5, 6, (1, 1)),
          (6, 6, (0, 0)), (8, 8, (0, 1)), (9, 9, (0, 0)), (3, 22, (0, 0)), (7, 10, (3, 4))]


@pytest.mark.parametrize("rows,cols,start", BOARDS)
def test_first_mode_loops_equal_the_reference(rows, cols, start):
    for closed in (False, True):
        for cap in (None, 3000, 50, 1):
            for backtracks in (None, 7, 0):
                nodes = cap if cap else (None if rows * cols <= 30 else 100_000)
                got = solve_knights_compiled(rows, cols, start, closed=closed, max_nodes=nodes,
                                             max_backtracks=backtracks)
                ref = solve_knights_tour(rows, cols, start, closed=closed, strategy="iterative",
                                         max_nodes=nodes, max_backtracks=backtracks)
                what = (rows, cols, start, closed, cap, backtracks)
                assert got.counters() == ref.counters(), what
                assert got.solution == ref.solution, what


def test_first_mode_loops_in_pauses_and_below_a_prefix(monkeypatch):
    # a pause every 64 placements: the loop resumes from its arrays, counters unchanged
    monkeypatch.setattr(knights_kernel, "pause_mask", lambda timed, chunked: 63)
    for rows, cols, path in [(5, 5, (0, 7)), (6, 6, (0, 13, 2)), (9, 9, (0, 11)),
                             (8, 8, (1,))]:
        board = KnightBoard(rows, cols)
        order = make_orderer(board, "none", "move_order", 0)
        for nodes in (None if rows * cols <= 25 else 200_000, 999):
            got = knights_subtree_compiled(rows, cols, path, max_nodes=nodes)
            ref = search_subtree(board, order, path, True, False, Budget(nodes, None),
                                 "iterative")
            assert got.counters() == ref.counters(), (rows, cols, path, nodes)
            assert got.solution == ref.solution


def test_first_mode_loops_pause_for_signals_without_a_time_limit():
    # heuristic none, first mode: a call returns to Python every CHUNK_EVERY placements
    calls = []
    drive = knights_kernel.drive

    def counting(kernel, args, budget):
        def once(*a):
            calls.append(1)
            return kernel(*a)
        return drive(once, args, budget)

    knights_kernel.drive = counting
    try:
        result = solve_knights_compiled(8, 8, (0, 1), max_nodes=3 * CHUNK_EVERY + 5)
    finally:
        knights_kernel.drive = drive
    assert result.nodes == 3 * CHUNK_EVERY + 5
    assert len(calls) == 4


_ONE_LOOP = textwrap.dedent("""\
    import json
    from btlab.experiments.compiled import compiled_count, solve_knights_compiled
    from btlab.experiments.compiled.knights import loops
    r = solve_knights_compiled(8, 8, (0, 0), heuristic="warnsdorff", max_nodes=1000)
    compiled = sorted(n for n, l in loops.loops().items() if l.kernel.signatures)
    print(json.dumps({"status": r.status.value, "loops": compiled, "count": compiled_count()}))
""")


@pytest.mark.slow
def test_a_cold_process_compiles_the_loop_of_its_search_alone(tmp_path):
    env = {**os.environ, "BTLAB_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("NUMBA_CACHE_DIR", None)
    runs = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", _ONE_LOOP], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, out.stderr
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    cold, warm = runs
    assert cold["status"] == "solved" and cold["loops"] == ["run64_warnsdorff"]
    assert cold["count"] >= 1 and warm["count"] == 0  # compiled, then loaded
    names = {p.name.split("-")[0] for p in (tmp_path / "cache").rglob("*.nbi")}
    assert "fast.run64_warnsdorff" in names
    assert not any(n.startswith(("fast.run64_plain", "wide.", "widekeyed.", "random64.",
                                 "ties64.", "general.")) for n in names), names


@pytest.mark.slow
def test_run_says_when_it_compiles_kernels(tmp_path):
    config = tmp_path / "one.yaml"
    config.write_text("name: one\nproblem: knights_tour\nfixed: {board: [5, 5], start: [0, 0], "
                      "strategy: iterative, engine: compiled, heuristic: none, mode: first}\n",
                      encoding="utf-8")
    env = {**os.environ, "BTLAB_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("NUMBA_CACHE_DIR", None)
    said = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-m", "btlab", "run", str(config), "--backend",
                              "serial", "--out", str(tmp_path / "out"), "--fresh", "--yes"],
                             cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, out.stderr
        said.append(out.stdout + out.stderr)
    assert "compiling kernels (first run on this machine; the result is cached)" in said[0]
    assert "knights:run64_first" in said[0]
    assert "compiling kernels" not in said[1]
