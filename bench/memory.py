"""Driver memory of ``btlab run`` against the number of trials: peak RSS at two sizes, side by side.

Run: ``python -m bench.memory [--quick] [--backend serial|ray] [--workload knights|queens]``

Each measurement is a fresh child process (:mod:`bench._child` ``rss``) running
``btlab run`` on short trials -- 8 x 8 Warnsdorff tours from all 64 starts
(``knights``), or N-Queens counts for n = 4, 5, 6 (``queens``), repeated to
the size -- and reporting its peak resident set size (``ru_maxrss``) twice:
when the trials are done and the end-of-run table starts (the run), and at
the end (the whole command, the table included). The figure is the ratio of
the big size's peak to the small one's: the driver's memory should not grow
with the number of trials (target: at most 1.1x from 10,000 to 100,000).
``--quick`` measures 1,000 against 5,000 (a check that it runs). Asserts
nothing about time or memory.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = 1.1


def child(trials: int, backend: str, workers: int, workload: str) -> dict:
    """One ``btlab run`` of ``trials`` short trials in a fresh process; its JSON figures."""
    done = subprocess.run([sys.executable, "-m", "bench._child", "rss", str(trials), backend,
                           str(workers), workload], cwd=ROOT, capture_output=True, text=True,
                          timeout=3600)
    if done.returncode != 0:
        raise RuntimeError(f"bench child rss {trials} {backend} {workload} failed:\n"
                           f"{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(small: int, big: int, backends: list[str], workloads: list[str],
            workers: int = 2) -> list[dict]:
    """Peak RSS at ``small`` and ``big`` trials for each backend and workload.

    Returns:
        One dict per (backend, workload): ``small`` and ``big`` (the children's
        figures: ``trials``, ``peak_rss_kib``, ``run_peak_rss_kib``, ``seconds``),
        ``run_ratio`` and ``ratio`` (big over small, the run and the whole command).
    """
    out = []
    for backend in backends:
        for workload in workloads:
            a = child(small, backend, workers, workload)
            b = child(big, backend, workers, workload)
            out.append({"backend": backend, "workload": workload, "small": a, "big": b,
                        "run_ratio": b["run_peak_rss_kib"] / a["run_peak_rss_kib"],
                        "ratio": b["peak_rss_kib"] / a["peak_rss_kib"]})
    return out


def mib(kib: float) -> str:
    return f"{kib / 1024:,.0f} MiB"


def lines(results: list[dict]) -> list[tuple[str, ...]]:
    """The table: one line per backend and workload."""
    head = ("backend", "workload", "trials", "run peak", "ratio", "whole command peak",
            "ratio", f"target <= {TARGET}x", "met")
    rows = [head]
    for r in results:
        a, b = r["small"], r["big"]
        ok = round(r["ratio"], 2) <= TARGET and round(r["run_ratio"], 2) <= TARGET
        rows.append((r["backend"], r["workload"], f"{a['trials']:,} -> {b['trials']:,}",
                     f"{mib(a['run_peak_rss_kib'])} -> {mib(b['run_peak_rss_kib'])}",
                     f"{r['run_ratio']:.2f}x",
                     f"{mib(a['peak_rss_kib'])} -> {mib(b['peak_rss_kib'])} "
                     f"({a['seconds']:.0f} s, {b['seconds']:.0f} s)",
                     f"{r['ratio']:.2f}x", "", "yes" if ok else "NO"))
    return rows


def print_lines(rows: list[tuple[str, ...]]) -> None:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for k, row in enumerate(rows):
        print("  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip())
        if k == 0:
            print("  ".join("-" * w for w in widths))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.memory", description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="1,000 against 5,000 trials")
    p.add_argument("--backend", action="append", choices=["serial", "ray"],
                   help="backends to measure (repeatable; default both)")
    p.add_argument("--workload", action="append", choices=["knights", "queens"],
                   help="workloads (repeatable; default both)")
    p.add_argument("--workers", type=int, default=2, help="Ray workers (default 2)")
    p.add_argument("--trials", type=int, nargs=2, metavar=("SMALL", "BIG"),
                   help="the two sizes (default 10,000 and 100,000)")
    args = p.parse_args(argv)
    small, big = (1_000, 5_000) if args.quick else (10_000, 100_000)
    if args.trials:
        small, big = args.trials
    t0 = time.perf_counter()
    results = measure(small, big, args.backend or ["serial", "ray"],
                      args.workload or ["knights", "queens"], args.workers)
    print("driver peak RSS of `btlab run`, small sweep -> big sweep "
          "(run: when the trials are done; whole command: the end-of-run table included)")
    print_lines(lines(results))
    print(f"({time.perf_counter() - t0:.0f} s in all)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
