"""``python -m bench [--quick]``: one table of figures measured side by side in this run.

See :mod:`bench` for what is measured. Ratios compare figures taken in this
run, interleaved where they can be (kernel against C: best of several
alternating runs), because absolute times on a shared machine are noisy.
Nothing here asserts anything about time.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


@dataclass
class Row:
    """One line of the table: a figure, the figure it is compared with, their ratio."""

    what: str
    measured: str
    baseline: str = ""
    ratio: str = ""
    target: str = ""
    met: str = ""


def _rate(nodes: float, seconds: float) -> str:
    return f"{nodes / seconds / 1e6:,.1f} M nodes/s" if seconds > 0 else "-"


def _trials_rate(n: int, seconds: float) -> str:
    return f"{n / seconds:,.0f} trials/s"


def _verdict(ratio: float, limit: float, larger_is_better: bool = False) -> str:
    ok = ratio >= limit if larger_is_better else ratio <= limit
    return "yes" if ok else "NO"


# ------------------------------------------------------------------ kernels


def bench_kernels(quick: bool, tmp: str) -> list[Row]:
    """Each kernel against its C twin (:mod:`bench.twins`), then the pure-Python strategies."""
    from bench.twins import build_c, compare, workloads
    from btlab.experiments.compiled import warm_up

    warm_up("knights")
    warm_up("queens")
    exe, why = build_c(tmp)
    if exe is None:
        print(f"bench: {why}: the kernels are timed without their C twins", file=sys.stderr)
    rows: list[Row] = []
    rate: dict[str, tuple[int, float]] = {}
    for case in workloads(quick):
        if exe is None:
            kernel = case.kernel()
            best = math.inf
            for _ in range(3):
                t0 = time.perf_counter()
                result = kernel()
                best = min(best, time.perf_counter() - t0)
            rows.append(Row(f"kernel {case.name}", _rate(result.nodes, best), f"C: {why}", "",
                            "<= 1.1x", "?"))
            rate.setdefault(case.kind + str(case.args[4:5]), (result.nodes, best))
            continue
        t = compare(case, exe, max_rounds=4 if quick else 12)
        nodes = int(t.kernel_counters["nodes"])
        if not t.same:
            rows.append(Row(f"kernel {case.name}", "COUNTERS DIFFER",
                            f"kernel {t.kernel_counters}, C {t.c_counters}", "", "<= 1.1x", "NO"))
            continue
        ratio = t.kernel_s / t.c_s
        first = case.kind == "knights" and case.args[4:6] == ("none", "first")
        limit = 1.0 if first else 1.1
        rows.append(Row(f"kernel {case.name}", f"{t.kernel_s:.3f} s, {_rate(nodes, t.kernel_s)}",
                        f"C {t.c_s:.3f} s, {_rate(nodes, t.c_s)}, same counters",
                        f"{ratio:.2f}x C time ({t.rounds} rounds)", f"<= {limit}x",
                        _verdict(ratio, limit)))
        if first:
            rows.extend(_first_mode_checks(case, exe, quick))
        rate.setdefault(case.kind + str(case.args[4:5]), (nodes, t.kernel_s))
    rows.extend(_python_knights(quick, rate))
    nodes, seconds = rate["queens()"]
    rows.extend(_python_queens(quick, nodes, seconds))
    return rows


def _first_mode_checks(case, exe: str, quick: bool) -> list[Row]:
    """A first-mode row's twin against dfs.c's count-mode loop on the same search (the
    twin must be the faster C), and the kernel against its own count-mode loop."""
    from bench.twins import Case, best_of_alternating, run_c, timed
    from btlab.experiments.compiled.knights import loops

    general = Case(case.kind, case.args, general=True)
    twin, general_c = case.c_args(), general.c_args()
    (c_first, c_general), _ = best_of_alternating(
        [lambda: run_c(exe, twin)[1], lambda: run_c(exe, general_c)[1]],
        [run_c(exe, twin)[1], run_c(exe, general_c)[1]], 4 if quick else 12)
    kernel = case.kernel()
    choose = loops.choose

    def count_loop(shape: loops.Shape) -> loops.Loop:  # the loop count mode runs
        return choose(loops.Shape(shape.small, shape.heuristic, shape.tie, False, shape.cells))

    def own() -> float:
        loops.choose = count_loop
        try:
            return timed(kernel)[1]
        finally:
            loops.choose = choose

    (k_first, k_general), _ = best_of_alternating(
        [lambda: timed(kernel)[1], own], [timed(kernel)[1], own()], 4 if quick else 12)
    return [Row("  its C twin against dfs.c's count-mode loop on the same search",
                f"C first-mode {c_first:.3f} s", f"C count-mode loop {c_general:.3f} s",
                f"{c_first / c_general:.2f}x"),
            Row("  the kernel against its own count-mode loop on the same search",
                f"first-mode loop {k_first:.3f} s", f"count-mode loop {k_general:.3f} s",
                f"{k_first / k_general:.2f}x")]


def bench_cold(quick: bool) -> list[Row]:
    """One compiled trial's whole ``btlab run --backend serial`` with an empty kernel
    cache against a warm one (:mod:`bench.cold`)."""
    from bench.cold import TARGET, measure_all

    return [Row(f"cold start {m.label}, 1 trial",
                f"cold {m.cold_s:.2f} s ({m.compile_s:.1f} s compiling)",
                f"warm {m.warm_s:.2f} s", f"{m.ratio:.2f}x (median of {m.rounds})",
                f"<= {TARGET:g}x", _verdict(m.ratio, TARGET)) for m in measure_all(quick)]


def _python_knights(quick: bool, rate: dict[str, tuple[int, float]]) -> list[Row]:
    from btlab.experiments.knights.solve import solve_knights_tour

    rows = []
    for heuristic in ("none", "warnsdorff"):
        nodes, seconds = rate[f"knights('{heuristic}',)"]
        py_nodes = 20_000 if quick else 200_000
        for strategy in ("recursive", "iterative"):
            t0 = time.perf_counter()
            ref = solve_knights_tour(8, 8, (0, 1), mode="count", heuristic=heuristic,
                                     strategy=strategy, max_nodes=py_nodes)
            dt = time.perf_counter() - t0
            rows.append(Row(f"  pure Python {strategy}, {heuristic}, {py_nodes:,} nodes",
                            _rate(ref.nodes, dt), "",
                            f"compiled {dt / ref.nodes * nodes / seconds:,.0f}x faster"))
    return rows


def _python_queens(quick: bool, compiled_nodes: int, compiled_seconds: float) -> list[Row]:
    try:
        from btlab.experiments.queens.solve import solve_queens
    except ImportError:
        return [Row("  pure Python N-Queens",
                    "n/a: btlab.experiments.queens.solve not on this branch")]
    n = 8 if quick else 10
    rows = []
    for strategy in ("recursive", "iterative", "bitmask"):
        t0 = time.perf_counter()
        ref = solve_queens(n, mode="count", strategy=strategy)
        dt = time.perf_counter() - t0
        speedup = (compiled_nodes / compiled_seconds) / (ref.nodes / dt)
        rows.append(Row(f"  pure Python {strategy}, n={n}, count", _rate(ref.nodes, dt), "",
                        f"compiled {speedup:,.0f}x faster"))
    return rows


def bench_variants(quick: bool) -> list[Row]:
    """Tie-breaks, ``unique`` and split subtree kernels against their own move-order
    speed on the same tree (:mod:`bench.variants`)."""
    from bench.variants import LIMIT, describe, measure, variants
    from btlab.experiments.compiled import warm_up

    warm_up("knights")
    warm_up("queens")
    rows = []
    for v in variants(quick):
        m = measure(v, 3 if quick else 12)
        if m.differs:
            rows.append(Row(f"variant {v.name}", "COUNTERS DIFFER", m.differs, "",
                            f"<= {LIMIT}x", "NO"))
            continue
        measured, baseline, ratio = describe(m)
        rows.append(Row(f"variant {v.name}", measured, baseline, ratio, f"<= {LIMIT}x",
                        _verdict(m.ratio, LIMIT)))
    return rows


# ------------------------------------------------------------------ runner


def _pool_run(trials, workers: int, rounds: int, nice: int = 0) -> tuple[float, float]:
    """A plain multiprocessing.Pool (the platform's default start method) with chunking
    like ``Pool.map``'s default (4 chunks per worker), each chunk one run_batch call;
    ``nice``: raise the workers' niceness by this much (Ray starts its workers at
    niceness 15, so on a busy machine they yield to everything else).

    Returns:
        (seconds including the pool's start, seconds of the fastest of ``rounds``
        more rounds).
    """
    from btlab.execution.execute import run_batch

    size = max(1, math.ceil(len(trials) / (4 * workers)))
    chunks = [trials[i:i + size] for i in range(0, len(trials), size)]
    t0 = time.perf_counter()
    with multiprocessing.Pool(workers, initializer=os.nice if nice else None,
                              initargs=(nice,) if nice else ()) as pool:
        cold = sum(len(rows) for rows in pool.imap_unordered(run_batch, chunks))
        cold_s = time.perf_counter() - t0
        warm_s = math.inf
        for _ in range(rounds):
            t1 = time.perf_counter()
            warm = sum(len(rows) for rows in pool.imap_unordered(run_batch, chunks))
            warm_s = min(warm_s, time.perf_counter() - t1)
    assert cold == warm == len(trials)
    return cold_s, warm_s


def _child(args: list[str], timeout: float = 1800) -> dict:
    done = subprocess.run([sys.executable, "-m", "bench._child", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"bench child {args[0]} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def bench_runner(quick: bool, workers: int) -> list[Row]:
    from bench._child import sweep_text, trials_of
    from btlab.execution.backends import SerialBackend
    from btlab.experiments.compiled import warm_up

    warm_up("knights")
    short_n = 1_000 if quick else 10_000
    text, short_n = sweep_text("short", "warnsdorff", short_n)
    trials = trials_of(text)
    rows: list[Row] = []

    rounds = 1 if quick else 3  # the fastest round counts: the least disturbed
    serial_s = math.inf
    for _ in range(rounds):
        t0 = time.perf_counter()
        count = sum(1 for _ in SerialBackend().run(trials))
        serial_s = min(serial_s, time.perf_counter() - t0)
    assert count == short_n

    pool_cold, pool_warm = _pool_run(trials, workers, rounds)
    _, pool_nice = _pool_run(trials, workers, rounds, nice=15)

    cpu_nodes = 300_000 if quick else 3_000_000
    cpu_trials = 64 if quick else 128
    jobs = [{"name": "short", "heuristic": "warnsdorff", "trials": short_n, "cold": True,
             "rounds": rounds},
            {"name": "cpu", "heuristic": "none", "trials": cpu_trials, "nodes": cpu_nodes,
             "rounds": 1 if quick else 2}]
    ray2 = _child(["ray", str(workers), json.dumps(jobs)])
    ray1 = _child(["ray", "1", json.dumps(jobs[1:])])

    ray_warm = ray2["jobs"]["short"]["seconds"]
    ray_cold = ray2["cold"]["seconds"]
    label = f"{short_n:,} trials 8x8 warnsdorff (compiled), {workers} workers"
    rows.append(Row(f"runner {label}: Ray, steady", _trials_rate(short_n, ray_warm),
                    f"Pool {_trials_rate(short_n, pool_warm)}",
                    f"{ray_warm / pool_warm:.2f}x Pool time", "<= 1.3x",
                    _verdict(ray_warm / pool_warm, 1.3)))
    rows.append(Row(f"runner {label}: Ray, steady, against a Pool at Ray's worker niceness 15",
                    _trials_rate(short_n, ray_warm), f"Pool {_trials_rate(short_n, pool_nice)}",
                    f"{ray_warm / pool_nice:.2f}x Pool time"))
    rows.append(Row(f"runner {label}: Ray, first round after start",
                    _trials_rate(short_n, ray_cold),
                    f"Pool incl. start {_trials_rate(short_n, pool_cold)}",
                    f"{ray_cold / pool_cold:.2f}x Pool time"))
    rows.append(Row(f"runner {short_n:,} trials: serial backend", _trials_rate(short_n, serial_s),
                    "", f"Ray {serial_s / ray_warm:.2f}x serial throughput"))
    rows.append(Row(f"  (Ray start {ray2['ray_start_s']:.1f} s, warm-up round "
                    f"{ray2['warm_up_s']:.1f} s, not counted above)", ""))
    one, two = ray1["jobs"]["cpu"], ray2["jobs"]["cpu"]
    rows.append(Row(f"runner {cpu_trials} CPU-bound trials (8x8 none, {cpu_nodes:,} nodes): "
                    f"Ray {ray2['workers']} workers", f"{two['seconds']:.2f} s",
                    f"1 worker {one['seconds']:.2f} s",
                    f"{one['seconds'] / two['seconds']:.2f}x faster", ">= 1.8x",
                    _verdict(one["seconds"] / two["seconds"], 1.8, True)))
    rows.append(Row(f"  cores the trials got (CPU time of the solve calls / wall time): "
                    f"{two['cpu_s'] / two['seconds']:.2f} with {ray2['workers']} workers, "
                    f"{one['cpu_s'] / one['seconds']:.2f} with 1", ""))
    return rows


def bench_memory(quick: bool, workers: int) -> list[Row]:
    """Peak driver RSS of ``btlab run`` at two sizes (:mod:`bench.memory`)."""
    from bench.memory import TARGET, measure

    # quick: the serial backend (no Ray to start), small sweeps: only checks that it runs
    small_n, big_n = (1_000, 5_000) if quick else (10_000, 100_000)
    backends = ["serial"] if quick else ["serial", "ray"]
    workloads = ["knights"] if quick else ["knights", "queens"]
    mib = lambda kib: f"{kib / 1024:,.0f} MiB"  # noqa: E731
    rows = []
    for r in measure(small_n, big_n, backends, workloads, workers):
        small, big = r["small"], r["big"]
        what = f"{r['backend']}, {r['workload']}"
        rows.append(Row(f"driver peak RSS during the run ({what}), {big['trials']:,} trials",
                        mib(big["run_peak_rss_kib"]),
                        f"{small['trials']:,} trials {mib(small['run_peak_rss_kib'])}",
                        f"{r['run_ratio']:.2f}x", f"<= {TARGET}x",
                        _verdict(round(r["run_ratio"], 2), TARGET)))
        rows.append(Row(f"driver peak RSS, whole btlab run incl. end table ({what}), "
                        f"{big['trials']:,} trials",
                        f"{mib(big['peak_rss_kib'])} ({big['seconds']:.0f} s)",
                        f"{small['trials']:,} trials {mib(small['peak_rss_kib'])} "
                        f"({small['seconds']:.0f} s)", f"{r['ratio']:.2f}x", f"<= {TARGET}x",
                        _verdict(round(r["ratio"], 2), TARGET)))
    return rows


# ------------------------------------------------------------------ table


def print_table(rows: list[Row]) -> None:
    header = Row("measurement", "measured", "compared with", "ratio", "target", "met")
    cols = list(zip(*[(r.what, r.measured, r.baseline, r.ratio, r.target, r.met)
                      for r in [header, *rows]]))
    widths = [max(len(v) for v in col) for col in cols]

    def line(r: Row) -> str:
        vals = (r.what, r.measured, r.baseline, r.ratio, r.target, r.met)
        return "  ".join(v.ljust(w) for v, w in zip(vals, widths)).rstrip()

    print(line(header))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print(line(r))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true",
                   help="small workloads (a minute or so): checks that everything runs")
    p.add_argument("--workers", type=int, default=2, help="Ray / Pool workers (default 2)")
    p.add_argument("--only", choices=["kernels", "cold", "variants", "runner", "memory",
                                      "split"],
                   action="append",
                   help="run only these sections (repeatable)")
    args = p.parse_args(argv)
    sections = args.only or ["kernels", "cold", "variants", "runner", "memory", "split"]
    t0 = time.perf_counter()
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="btlab-bench-") as tmp:
        if "kernels" in sections:
            rows += bench_kernels(args.quick, tmp)
        if "cold" in sections:
            rows += bench_cold(args.quick)
        if "variants" in sections:
            rows += bench_variants(args.quick)
        if "runner" in sections:
            rows += bench_runner(args.quick, args.workers)
        if "memory" in sections:
            rows += bench_memory(args.quick, args.workers)
    print(f"btlab bench{' --quick' if args.quick else ''}: {os.cpu_count()} cores, "
          f"Python {sys.version.split()[0]}, load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    if rows:
        print_table(rows)
        print(f"(nodes/s: placements per second; kernel and C: best of alternating runs "
              f"until two successive bests agree within 3 %; {time.perf_counter() - t0:.0f} s "
              f"in all)")
    if "split" in sections:
        # one trial split into subtree tasks, 1 and 2 workers (bench/split.py), in a
        # process of its own: it starts and stops its own Ray instances
        print("\nsplit: one trial as ordered subtree tasks (python -m bench.split)")
        subprocess.run([sys.executable, "-m", "bench.split", *(["--quick"] if args.quick else [])],
                       check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
