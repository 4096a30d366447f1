"""Driver memory of ``btlab run`` on a sweep of many seeds against one of many repeats.

Run: ``python -m bench.memory_seeds [--quick] [--sizes SMALL BIG]``

A sweep of distinct seeds (``matrix: {seed: 1..N}``: N trial keys, one trial
each) is the worst case for the end-of-run tables, which keep a row per trial
key; ``repeats: N`` is one trial key repeated N times. Each measurement is a
fresh child process (``python -m bench.memory_seeds --child ...``) running the
command ``btlab run --backend serial --quiet`` on 5 x 5 knight's tours from
(0, 0), Warnsdorff with random ties, ``budget: {nodes: 30}``, into a temporary
folder, and reporting its peak resident set size (``VmHWM`` in
``/proc/self/status``, the kernel's own high-water mark, read in the process)
when the end-of-run tables start reading rows (the run: the trials done, the
tables' modules loaded), and at the end (the whole command, the tables included).
The figure is the big sweep's whole peak over the small one's (target: at most
1.1x, the flat-memory target of
``docs/benchmarks.md``). ``--quick``: 2,000 against 20,000 (a check that it runs).
Asserts nothing about time or memory.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = 1.1
FIXED = ("problem: knights_tour\n"
         "fixed: {board: [5, 5], start: [0, 0], strategy: iterative, mode: first, "
         "heuristic: warnsdorff, tie_break: random}\n"
         "budget: {nodes: 30}\n")


def config_text(kind: str, trials: int) -> str:
    """The config of ``trials`` trials: ``seeds`` (``seed: 1..trials``, one trial key per
    seed) or ``repeats`` (``repeats: trials`` of one trial key)."""
    if kind == "seeds":
        return f"name: seeds\n{FIXED}matrix: {{seed: 1..{trials}}}\n"
    return f"name: repeats\n{FIXED}repeats: {trials}\nseed: 2026\n"


def vm_hwm_kib() -> int:
    """This process's peak resident set size so far (``VmHWM``, KiB)."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise RuntimeError("no VmHWM in /proc/self/status")


def child_run(kind: str, trials: int) -> dict:
    """One ``btlab run`` in this process; its figures (KiB, seconds)."""
    import btlab.views.headline_rows
    from btlab.cli.main import main

    headline_rows = btlab.views.headline_rows.headline_rows
    at_tables: list[int] = []

    def headline_rows_after_run(*args, **kwargs):
        at_tables.append(vm_hwm_kib())
        return headline_rows(*args, **kwargs)

    btlab.views.headline_rows.headline_rows = headline_rows_after_run
    with tempfile.TemporaryDirectory(prefix="btlab-bench-") as tmp:
        cfg = os.path.join(tmp, f"{kind}.yaml")
        with open(cfg, "w") as fh:
            fh.write(config_text(kind, trials))
        t0 = time.perf_counter()
        sink = io.StringIO()
        with contextlib.redirect_stdout(sink):
            code = main(["run", cfg, "--out", os.path.join(tmp, "out"), "--quiet",
                         "--backend", "serial", "--yes"])
        elapsed = time.perf_counter() - t0
    return {"kind": kind, "trials": trials, "exit": code, "seconds": elapsed,
            "peak_kib": vm_hwm_kib(), "run_peak_kib": at_tables[0] if at_tables else None,
            "finding": next((line for line in sink.getvalue().splitlines()
                             if line.startswith("Finding:")), None)}


def child(kind: str, trials: int) -> dict:
    """:func:`child_run` in a fresh process."""
    done = subprocess.run([sys.executable, "-m", "bench.memory_seeds", "--child", kind,
                           str(trials)], cwd=ROOT, capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        raise RuntimeError(f"bench child {kind} {trials} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def mb(kib: float | None) -> str:
    return "-" if kib is None else f"{kib * 1024 / 1e6:,.0f} MB"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.memory_seeds",
                                description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="2,000 against 20,000 trials")
    p.add_argument("--sizes", type=int, nargs=2, metavar=("SMALL", "BIG"),
                   help="the two sizes (default 20,000 and 200,000)")
    p.add_argument("--child", nargs=2, metavar=("KIND", "TRIALS"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        print(json.dumps(child_run(args.child[0], int(args.child[1]))))
        return 0
    small, big = (2_000, 20_000) if args.quick else (20_000, 200_000)
    if args.sizes:
        small, big = args.sizes
    t0 = time.perf_counter()
    got = {(kind, n): child(kind, n) for kind in ("seeds", "repeats") for n in (small, big)}
    print("driver peak RSS (VmHWM) of `btlab run --backend serial`, 5 x 5 tours, "
          "budget: {nodes: 30} (run: when the tables start reading rows; whole: tables "
          "included)")
    rows = [("sweep", "trials", "run peak", "whole peak", "seconds")]
    for (kind, n), r in got.items():
        what = f"seed: 1..{n}" if kind == "seeds" else f"repeats: {n}"
        rows.append((what, f"{n:,}", mb(r["run_peak_kib"]), mb(r["peak_kib"]),
                     f"{r['seconds']:.0f}"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for k, row in enumerate(rows):
        print("  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip())
        if k == 0:
            print("  ".join("-" * w for w in widths))
    for kind in ("seeds", "repeats"):
        ratio = got[(kind, big)]["peak_kib"] / got[(kind, small)]["peak_kib"]
        print(f"{kind}: whole peak {big:,} / {small:,} = {ratio:.2f}x "
              f"(target <= {TARGET}x: {'met' if round(ratio, 2) <= TARGET else 'NOT met'})")
    print(f"({time.perf_counter() - t0:.0f} s in all)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
