"""Compiled kernels: counters equal to the pure-Python reference, OEIS oracles, budgets,
the on-disk cache, the runner's ``engine: compiled``, and the benchmark's quick mode."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytest.importorskip("numba")

from btlab.experiments.checker import check_queens, check_tour  # noqa: E402
from btlab.experiments.compiled import solve_knights_compiled, solve_queens_compiled, warm_up  # noqa: E402
from btlab.experiments.compiled.knights.kernel import PAUSE_EVERY  # noqa: E402
from btlab.experiments.core import Status  # noqa: E402
from btlab.experiments.knights.solve import DEFAULT_MOVE_ORDER, HEURISTICS, solve_knights_tour  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TIE_BREAKS = ["move_order", "random", "pohl", "roth"]
#: A seed above 2**63: the kernel's SplitMix64 must be unsigned 64-bit like the reference.
BIG_SEED = 0xDEADBEEFCAFEF00D


def squares(rows, cols):
    return [(r, c) for r in range(rows) for c in range(cols)]


def assert_same(reference, compiled, where):
    assert compiled.counters() == reference.counters(), where
    assert compiled.solution == reference.solution, where


# ---------------------------------------------------------------- knight's tour = reference

# (rows, cols, starts, modes, node budget): count mode only where the reference is quick.
BOARDS = [
    pytest.param(3, 4, squares(3, 4), ("first", "count"), None, id="3x4"),
    pytest.param(5, 5, [(0, 0), (2, 2), (1, 3)], ("first", "count"), 4_000, id="5x5"),
    pytest.param(6, 6, [(0, 0), (2, 3), (5, 1)], ("first",), 4_000, id="6x6"),
    pytest.param(8, 8, [(0, 0), (3, 5), (7, 2)], ("first", "count"), 3_000, id="8x8"),
    pytest.param(5, 6, [(0, 0), (2, 2), (4, 5)], ("first", "count"), 4_000, id="5x6"),
    # over 64 squares: the byte-per-square loops (experiments/compiled/knights/wide.py)
    pytest.param(9, 9, [(0, 0), (4, 4), (2, 7)], ("first", "count"), 3_000, id="9x9"),
    pytest.param(3, 22, [(0, 0), (1, 10)], ("first", "count"), 3_000, id="3x22"),
    pytest.param(5, 14, [(0, 0), (2, 6)], ("first", "count"), 3_000, id="5x14"),
]


@pytest.mark.parametrize("rows, cols, starts, modes, budget", BOARDS)
@pytest.mark.parametrize("tie_break", TIE_BREAKS)
@pytest.mark.parametrize("heuristic", HEURISTICS)
def test_knights_kernel_equals_reference(rows, cols, starts, modes, budget, heuristic,
                                         tie_break):
    for start in starts:
        for mode in modes:
            for closed in (False, True):
                kw = dict(mode=mode, heuristic=heuristic, tie_break=tie_break, closed=closed,
                          max_nodes=budget, seed=BIG_SEED)
                ref = solve_knights_tour(rows, cols, start, strategy="iterative", **kw)
                got = solve_knights_compiled(rows, cols, start, **kw)
                assert_same(ref, got, (start, kw))
                if got.solution is not None:
                    check_tour(rows, cols, start, got.solution, closed)


@pytest.mark.parametrize("heuristic", HEURISTICS)
def test_every_start_of_8x8_under_a_node_budget(heuristic):
    for start in squares(8, 8):
        ref = solve_knights_tour(8, 8, start, heuristic=heuristic, strategy="iterative",
                                 max_nodes=20_000)
        got = solve_knights_compiled(8, 8, start, heuristic=heuristic, max_nodes=20_000)
        assert_same(ref, got, start)


@pytest.mark.parametrize("seed", [0, 1, 2026, BIG_SEED, (1 << 64) - 1])
def test_random_ties_follow_the_same_splitmix64_stream(seed):
    for heuristic in ("warnsdorff", "static_degree"):
        for start in [(0, 0), (3, 4), (2, 5)]:
            kw = dict(heuristic=heuristic, tie_break="random", seed=seed, max_nodes=5_000)
            assert_same(solve_knights_tour(8, 8, start, **kw),
                        solve_knights_compiled(8, 8, start, **kw), (heuristic, start))


def test_custom_move_order_equals_reference():
    reversed_order = tuple(reversed(DEFAULT_MOVE_ORDER))
    shuffled = DEFAULT_MOVE_ORDER[3:] + DEFAULT_MOVE_ORDER[:3]
    for order in (reversed_order, shuffled):
        for heuristic in HEURISTICS:
            kw = dict(heuristic=heuristic, move_order=order, max_nodes=10_000)
            assert_same(solve_knights_tour(6, 6, (1, 1), **kw),
                        solve_knights_compiled(6, 6, (1, 1), **kw), (order, heuristic))


def test_closed_tour_6x8_equals_reference():
    kw = dict(heuristic="warnsdorff", tie_break="pohl", closed=True, max_nodes=100_000)
    ref = solve_knights_tour(6, 8, (0, 0), **kw)
    got = solve_knights_compiled(6, 8, (0, 0), **kw)
    assert got.status is Status.SOLVED
    assert_same(ref, got, "6x8 closed")
    check_tour(6, 8, (0, 0), got.solution, closed=True)


@pytest.mark.parametrize("rows, cols", [(1, 1), (1, 2), (2, 5), (3, 3), (4, 4)])
def test_tiny_and_tourless_boards_equal_reference(rows, cols):
    for start in squares(rows, cols):
        for closed in (False, True):
            ref = solve_knights_tour(rows, cols, start, mode="count", closed=closed)
            assert_same(ref, solve_knights_compiled(rows, cols, start, mode="count",
                                                    closed=closed), (start, closed))


# ---------------------------------------------------------------- knight's tour oracles

@pytest.mark.parametrize("rows, cols, tours", [
    pytest.param(3, 4, 16, id="3x4"), pytest.param(4, 5, 164, id="4x5"),
    pytest.param(3, 7, 104, id="3x7"), pytest.param(5, 5, 1728, id="5x5"),
])
def test_directed_open_tour_counts_oeis_a165134(rows, cols, tours):
    total = 0
    for start in squares(rows, cols):
        res = solve_knights_compiled(rows, cols, start, mode="count")
        assert res.status is Status.EXHAUSTED
        total += res.solutions
    assert total == tours


def test_5x5_unbudgeted_count_from_the_corner_matches_reference_counters():
    # 1.7 million placements: the reference's counters, remembered from
    # btlab.experiments.knights.solve (recursive = iterative), both walks exhaustive.
    res = solve_knights_compiled(5, 5, (0, 0), mode="count")
    assert res.counters() == {"status": "exhausted", "nodes": 1735079, "backtracks": 1730936,
                              "dead_ends": 625004, "checks": 6191826, "solutions": 304,
                              "max_depth": 25}


# ---------------------------------------------------------------- budgets

def test_node_budget_stops_exactly_and_equal_to_need_is_not_a_limit():
    res = solve_knights_compiled(8, 8, (0, 1), max_nodes=12_345)
    assert (res.status, res.nodes, res.solutions) == (Status.NODE_LIMIT, 12_345, 0)
    full = solve_knights_compiled(5, 5, (0, 0), heuristic="warnsdorff")
    exact = solve_knights_compiled(5, 5, (0, 0), heuristic="warnsdorff", max_nodes=full.nodes)
    assert exact.counters() == full.counters()
    short = solve_knights_compiled(5, 5, (0, 0), heuristic="warnsdorff",
                                   max_nodes=full.nodes - 1)
    assert short.status is Status.NODE_LIMIT


@pytest.mark.parametrize("seconds", [0.3, 1.0])
def test_time_budget_stops_within_tolerance(seconds):
    t0 = time.perf_counter()
    res = solve_knights_compiled(8, 8, (0, 1), max_seconds=seconds)
    elapsed = time.perf_counter() - t0
    assert res.status is Status.TIME_LIMIT
    # under a time limit the kernel runs in chunks of PAUSE_EVERY placements and the
    # clock is read between two chunks
    assert res.nodes > 0 and res.nodes % PAUSE_EVERY == 0
    assert elapsed < seconds * 1.1 + 0.5


@pytest.mark.parametrize("rows, cols", [(6, 6), (9, 9)])  # mask loops; byte loops
@pytest.mark.parametrize("heuristic", HEURISTICS)
def test_time_budget_that_is_not_reached_changes_nothing(rows, cols, heuristic):
    kw = dict(heuristic=heuristic, mode="count", max_nodes=300_000)
    plain = solve_knights_compiled(rows, cols, (0, 0), **kw)
    timed = solve_knights_compiled(rows, cols, (0, 0), max_seconds=60.0, **kw)
    assert timed.counters() == plain.counters()  # resumed chunk by chunk, same walk
    assert plain.nodes == 300_000 > 2 * PAUSE_EVERY  # so the timed walk was resumed twice


@pytest.mark.parametrize("heuristic", ["none", "warnsdorff"])
def test_boards_over_64_squares_equal_reference_at_depth(heuristic):
    """9 x 9 and 3 x 22 searches deep enough to undo long paths."""
    for rows, cols, start, mode, cap in [(9, 9, (0, 0), "count", 60_000),
                                         (3, 22, (0, 0), "first", 60_000)]:
        kw = dict(heuristic=heuristic, mode=mode, max_nodes=cap)
        ref = solve_knights_tour(rows, cols, start, strategy="iterative", **kw)
        got = solve_knights_compiled(rows, cols, start, **kw)
        assert_same(ref, got, (rows, cols, kw))
        assert ref.max_depth > 50 and (ref.backtracks > 0 or ref.status is Status.SOLVED)


def test_bad_arguments_raise_value_error():
    with pytest.raises(ValueError, match="off the"):
        solve_knights_compiled(5, 5, (5, 0))
    with pytest.raises(ValueError, match="8 knight moves"):
        solve_knights_compiled(5, 5, move_order=[(1, 2)] * 8)
    with pytest.raises(ValueError, match="heuristic"):
        solve_knights_compiled(5, 5, heuristic="warnsdorf")
    with pytest.raises(ValueError, match="tie-break"):
        solve_knights_compiled(5, 5, tie_break="coin")
    with pytest.raises(ValueError, match="positive"):
        solve_knights_compiled(5, 5, max_nodes=0)
    with pytest.raises(ValueError):
        solve_knights_compiled(5, 5, mode="all")


# ---------------------------------------------------------------- big boards

def test_warnsdorff_roth_1000x1000_from_the_corner():
    t0 = time.perf_counter()
    res = solve_knights_compiled(1000, 1000, (0, 0), heuristic="warnsdorff", tie_break="roth")
    elapsed = time.perf_counter() - t0
    assert res.status is Status.SOLVED
    assert res.nodes == 1_000_000 and res.backtracks == 0
    check_tour(1000, 1000, (0, 0), res.solution)
    print(f"1000 x 1000 Warnsdorff + Roth: {elapsed:.2f} s")


# ---------------------------------------------------------------- N-Queens

A000170 = [1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200, 73712, 365596]
A002562 = [1, 0, 0, 1, 2, 1, 6, 12, 46, 92, 341, 1787]


@pytest.mark.parametrize("n", range(1, 15))
def test_queens_counts_oeis_a000170(n):
    res = solve_queens_compiled(n, "count")
    assert res.status is Status.EXHAUSTED
    assert res.solutions == A000170[n - 1]
    # every placement short of n queens tries the n columns of the next row
    assert res.checks == n * (1 + res.nodes - res.solutions)
    if res.solution is not None:
        check_queens(n, res.solution)


@pytest.mark.parametrize("n", range(1, 13))
def test_queens_unique_counts_oeis_a002562(n):
    res = solve_queens_compiled(n, "count", unique=True)
    plain = solve_queens_compiled(n, "count")
    assert res.solutions == A002562[n - 1]
    assert res.extra["all_solutions"] == A000170[n - 1]
    # the other counters are those of the full walk
    assert (res.nodes, res.backtracks, res.dead_ends, res.checks, res.max_depth) == (
        plain.nodes, plain.backtracks, plain.dead_ends, plain.checks, plain.max_depth)


def test_queens_8_knuth_counts():
    res = solve_queens_compiled(8, "count")
    assert (res.nodes, res.checks, res.solutions, res.max_depth) == (2056, 15720, 92, 8)
    # nodes - backtracks = queens on paths to solutions
    assert res.nodes - res.backtracks == 550
    assert res.solution == (0, 4, 7, 5, 2, 6, 1, 3)  # the lexicographically first


def test_queens_first_mode_gives_verified_placements():
    for n in list(range(4, 30)) + [31]:
        res = solve_queens_compiled(n, "first")
        assert res.status is Status.SOLVED and res.solutions == 1
        check_queens(n, res.solution)
        assert res.nodes - res.backtracks == n
    for n in (2, 3):
        res = solve_queens_compiled(n, "first")
        assert res.status is Status.EXHAUSTED and res.solution is None


def test_queens_node_and_time_budgets():
    res = solve_queens_compiled(12, "count", max_nodes=10_000)
    assert res.status is Status.NODE_LIMIT and res.nodes == 10_000
    exact = solve_queens_compiled(8, "count", max_nodes=2056)
    assert exact.status is Status.EXHAUSTED and exact.solutions == 92
    t0 = time.perf_counter()
    timed = solve_queens_compiled(20, "count", max_seconds=0.3)
    assert timed.status is Status.TIME_LIMIT
    assert time.perf_counter() - t0 < 0.3 * 1.1 + 0.5


def test_queens_bad_arguments():
    for n in (0, 65):
        with pytest.raises(ValueError, match="between 1 and 64"):
            solve_queens_compiled(n)
    with pytest.raises(ValueError, match="count"):
        solve_queens_compiled(8, "first", unique=True)


def test_queens_kernel_equals_python_reference_when_present():
    queens = pytest.importorskip("btlab.experiments.queens.solve")
    for n in range(1, 10):
        for mode, unique in (("first", False), ("count", False), ("count", True)):
            for budget in (None, 500):
                ref = queens.solve_queens(n, mode=mode, strategy="iterative", unique=unique,
                                          max_nodes=budget)
                got = solve_queens_compiled(n, mode, unique, max_nodes=budget)
                assert got.counters() == ref.counters(), (n, mode, unique, budget)
                assert got.solution == ref.solution


# ---------------------------------------------------------------- compile once, cache on disk

_PROBE = textwrap.dedent("""\
    import json, time
    t0 = time.perf_counter()
    from btlab.experiments.compiled import CACHE_DIR, knights_kernel, queens_kernel, warm_up
    ns = warm_up("knights") + warm_up("queens")
    hits = misses = 0
    for f in (knights_kernel.knights_run, knights_kernel.build_geometry, queens_kernel.queens_run):
        hits += sum(f.stats.cache_hits.values())
        misses += sum(f.stats.cache_misses.values())
    print(json.dumps({"warm_ns": ns, "hits": hits, "misses": misses, "dir": str(CACHE_DIR)}))
""")


def _probe(env):
    out = subprocess.run([sys.executable, "-c", _PROBE], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_kernels_are_cached_on_disk_and_loaded_by_the_next_process(tmp_path):
    env = {**os.environ, "BTLAB_CACHE_DIR": str(tmp_path / "cache")}
    cold = _probe(env)
    # below the root, in the folder named by the kernels' sources (tests/test_kernel_cache.py)
    assert Path(cold["dir"]).parent == tmp_path / "cache"
    assert Path(cold["dir"]).name.startswith("kernels-")
    # three kernels (knights_run, build_geometry, queens_run), one signature each
    assert cold["misses"] == 3 and cold["hits"] == 0           # compiled here
    index = list((tmp_path / "cache").rglob("*.nbi"))
    code = list((tmp_path / "cache").rglob("*.nbc"))
    assert index and code, "numba wrote no cache files"
    warm = _probe(env)
    assert warm["misses"] == 0 and warm["hits"] == 3           # loaded, not compiled
    assert warm["warm_ns"] < cold["warm_ns"] / 3
    print(f"first process compiled in {cold['warm_ns'] / 1e9:.2f} s, "
          f"the second loaded the cache in {warm['warm_ns'] / 1e9:.3f} s")


def test_cache_falls_back_to_a_user_folder(tmp_path, monkeypatch):
    from btlab.experiments.compiled import _cache

    monkeypatch.delenv("BTLAB_CACHE_DIR", raising=False)
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(_cache, "_writable", lambda folder: False)
    import numba

    monkeypatch.setattr(numba.config, "CACHE_DIR", numba.config.CACHE_DIR)
    assert _cache.configure() == tmp_path / "btlab" / "numba" / _cache.cache_key()
    assert (tmp_path / "btlab" / "numba" / _cache.cache_key()).is_dir()


# ---------------------------------------------------------------- runner: engine compiled

ENGINES = textwrap.dedent("""\
    name: engines
    problem: knights_tour
    fixed: {board: [6, 6], strategy: iterative, mode: first, tie_break: roth}
    matrix:
      engine: [python, compiled]
      heuristic: [none, warnsdorff, static_degree]
      start: all
    budget: {nodes: 3000}
    seed: 5
""")


def test_runner_engines_give_equal_counters(tmp_path):
    # (not tie_break: random here: a trial's seed hashes all its parameters, the
    # engine included, so the two engines would draw different ties)
    import pandas as pd

    from btlab.cli.main import main

    cfg = tmp_path / "engines.yaml"
    cfg.write_text(ENGINES)
    assert main(["run", str(cfg), "--backend", "serial", "--out", str(tmp_path / "r"),
                 "--quiet"]) == 0
    df = pd.read_parquet(tmp_path / "r")
    assert len(df) == 2 * 3 * 36
    key = ["heuristic", "start_row", "start_col"]
    py = df[df.engine == "python"].set_index(key).sort_index()
    cc = df[df.engine == "compiled"].set_index(key).sort_index()
    for col in ["status", "nodes", "backtracks", "dead_ends", "checks", "solutions",
                "max_depth"]:
        assert (py[col] == cc[col]).all(), col
    assert py["compile_ns"].isna().all() and cc["compile_ns"].notna().all()


def test_runner_refuses_compiled_with_recursive_strategy(tmp_path, capsys):
    from btlab.cli.main import main

    cfg = tmp_path / "bad.yaml"
    cfg.write_text(ENGINES.replace("strategy: iterative", "strategy: recursive"))
    assert main(["validate", str(cfg)]) == 2
    assert "strategy: iterative" in capsys.readouterr().err


_FRESH_WORKER = textwrap.dedent("""\
    import json
    from btlab.config.model import parse_config
    from btlab.execution.execute import run_batch
    cfg = parse_config('''
    name: fresh
    problem: knights_tour
    fixed: {board: [8, 8], strategy: iterative, engine: compiled, heuristic: warnsdorff}
    matrix: {start: [[0, 0], [0, 1], [0, 2]]}
    ''')
    from btlab.sweep.expand import expand
    rows = run_batch(expand(cfg))
    print(json.dumps([[r["compile_ns"], r["wall_ns"], r["status"]] for r in rows]))
""")


def test_compile_time_is_reported_apart_from_trial_time():
    out = subprocess.run([sys.executable, "-c", _FRESH_WORKER], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout.strip().splitlines()[-1])
    (c0, w0, s0), *rest = rows
    assert s0 == "solved" and c0 > 0          # the first trial of the process loaded the kernels
    assert w0 < c0                             # ... and its wall time does not include that
    assert all(c == 0 and s == "solved" for c, _, s in rest)


def test_warm_up_is_idempotent():
    warm_up("knights")
    assert warm_up("knights") == 0
    with pytest.raises(ValueError, match="kind"):
        warm_up("sudoku")


# ---------------------------------------------------------------- runner: streaming, batching

def test_adaptive_batch_size():
    from btlab.execution.backends import adaptive_batch_size

    # 40 us trials: about 0.1 s of work per task, a thousand trials or so
    assert 900 <= adaptive_batch_size(40e-6, 100_000, 2) <= 1200
    # ... but never more than half a worker's share of what is left
    assert adaptive_batch_size(40e-6, 1_000, 2) == 250
    # seconds-long trials travel one by one
    assert adaptive_batch_size(12.0, 64, 2) == 1
    assert adaptive_batch_size(1e-3, 0, 2) == 1


def test_ray_backend_streams_a_generator_of_trials(ray_session):
    from btlab.config.model import parse_config
    from btlab.execution.backends import RayBackend
    from btlab.sweep.expand import iter_trials

    config = parse_config(ENGINES.replace("engine: [python, compiled]", "engine: [compiled]")
                          .replace("budget: {nodes: 3000}", "budget: {nodes: 3000}\nrepeats: 5"))
    ids = [t.trial_id for t in iter_trials(config)]
    backend = RayBackend()
    rows = list(backend.run((t for t in iter_trials(config)), total=len(ids)))
    assert sorted(r["trial_id"] for r in rows) == sorted(ids)  # each once, none lost
    assert all(r["status"] in ("solved", "node_limit") for r in rows)


# ---------------------------------------------------------------- the benchmark, quick mode

@pytest.mark.slow  # about 50 s: the default suite stays under 10 minutes
def test_bench_quick_mode_runs():
    out = subprocess.run([sys.executable, "-m", "bench", "--quick"], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    print(out.stdout)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "nodes/s" in out.stdout


# --------------------------------------------------------------------------- loading whole


def test_an_interrupt_while_the_kernels_load_is_held_until_they_are_loaded():
    """What ray.cancel(force=False) does to a running task (``_thread.interrupt_main``),
    within interrupts_held: nothing until the block ends, then KeyboardInterrupt."""
    import _thread

    from btlab.experiments.loading import interrupt_pending, interrupts_held

    after = []
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # Python's own
    try:
        with pytest.raises(KeyboardInterrupt):
            with interrupts_held():
                _thread.interrupt_main()
                signal.raise_signal(signal.SIGINT)  # a real one too; the handler runs at once
                assert interrupt_pending()
                after.append("the import goes on")
        assert after == ["the import goes on"]
        assert not interrupt_pending()
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        with interrupts_held():  # no interrupt, nothing raised
            pass
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_held_interrupt_goes_to_the_handler_installed_before():
    from btlab.experiments.loading import interrupts_held

    seen = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: seen.append(signum))
    try:
        with interrupts_held():
            with interrupts_held():  # nested: handed to the outer block
                signal.raise_signal(signal.SIGINT)
            assert seen == []
        assert seen == [signal.SIGINT]
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        with interrupts_held():  # ignored before: ignored still
            signal.raise_signal(signal.SIGINT)
    finally:
        signal.signal(signal.SIGINT, previous)
