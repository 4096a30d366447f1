"""Measurements that need a process of their own (a fresh Ray, a clean peak RSS).

``python -m bench._child ray WORKERS JOBS_JSON`` starts an embedded Ray with
WORKERS CPUs through :class:`btlab.execution.backends.RayBackend`, runs one warm-up round
(every worker imports btlab and loads the kernels), then each job, and prints
one JSON line: for each job, the trials, the seconds and the seconds of the
first (cold) round.

``python -m bench._child rss TRIALS BACKEND WORKERS [knights|queens] [cli|library]``
runs a sweep of TRIALS short trials (8 x 8 Warnsdorff tours, or N-Queens counts
for n = 4..6) into a temporary folder and prints one JSON line with the
process's peak resident set size (``ru_maxrss``, KiB) at the end, the peak when
the run was over and the end-of-run table began, and the time. ``cli`` (the
default, what :mod:`bench.memory` measures): the command ``btlab run`` in this
process, whose end is the headline table (one row per trial key, read part by
part). ``library``: ``btlab.run(..., quiet=False)``, the same run and table, then
the DataFrame of every trial it returns (``frame_rows``), which the whole peak
includes: it grows with the trials by design.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import resource
import sys
import tempfile
import time


def sweep_text(name: str, heuristic: str, trials: int, nodes: int | None = None) -> tuple[str, int]:
    """A config of 8 x 8 knight's tours from all 64 starts, repeated to reach ``trials``.

    Returns:
        The YAML text and the exact number of trials (a multiple of 64).
    """
    repeats = max(1, math.ceil(trials / 64))
    budget = f"budget: {{nodes: {nodes}}}\n" if nodes else ""
    text = (f"name: {name}\nproblem: knights_tour\n"
            f"fixed: {{board: [8, 8], strategy: iterative, mode: first, engine: compiled, "
            f"heuristic: {heuristic}}}\n"
            f"matrix: {{start: all}}\n{budget}repeats: {repeats}\nseed: 2026\n")
    return text, 64 * repeats


def trials_of(text: str):
    from btlab.config.model import parse_config
    from btlab.sweep.expand import expand

    return expand(parse_config(text, "<bench>"))


def ray_jobs(workers: int, jobs: list[dict]) -> dict:
    from btlab.execution.backends import RayBackend

    t0 = time.perf_counter()
    backend = RayBackend(workers=workers)
    started = time.perf_counter() - t0
    out = {"workers": backend.workers, "ray_start_s": started, "jobs": {}}
    try:
        if jobs and jobs[0].get("cold"):
            # the first job once right after Ray start: workers import btlab and
            # load the kernels during it
            out["cold"] = _run_job(backend, jobs[0])
        # warm-up: a few tiny batches so that every worker process exists and has
        # imported btlab and loaded the kernels (the cold cost is reported apart)
        warm = trials_of(sweep_text("warm", "warnsdorff", 64 * workers)[0])
        t1 = time.perf_counter()
        backend.batch_size = 4
        for _ in backend.run(warm):
            pass
        backend.batch_size = None
        out["warm_up_s"] = time.perf_counter() - t1
        for job in jobs:
            out["jobs"][job["name"]] = _run_job(backend, job, job.get("rounds", 1))
    finally:
        backend.close()
    return out


def _run_job(backend, job: dict, rounds: int = 1) -> dict:
    """Run a job's trials ``rounds`` times; the least disturbed (fastest) round counts."""
    trials = trials_of(sweep_text(job["name"], job["heuristic"], job["trials"],
                                  job.get("nodes"))[0])
    best: dict = {}
    for _ in range(rounds):
        t0 = time.perf_counter()
        n = cpu_ns = 0
        for row in backend.run(trials):
            n += 1
            cpu_ns += row["cpu_ns"] or 0
            if row["status"] == "error":
                raise RuntimeError(row["error"])
        seconds = time.perf_counter() - t0
        # cpu_s / seconds: how many cores the solve calls actually got (a shared
        # machine may give 2 workers less than 2 cores)
        if not best or seconds < best["seconds"]:
            best = {"trials": n, "seconds": seconds, "cpu_s": cpu_ns / 1e9}
    return best


def queens_text(name: str, trials: int) -> tuple[str, int]:
    """A config of N-Queens counts for n = 4, 5, 6 (recursive), repeated to reach ``trials``.

    Returns:
        The YAML text and the exact number of trials (a multiple of 3).
    """
    repeats = max(1, math.ceil(trials / 3))
    text = (f"name: {name}\nproblem: n_queens\n"
            f"fixed: {{strategy: recursive, mode: count}}\n"
            f"matrix: {{n: [4, 5, 6]}}\nrepeats: {repeats}\n")
    return text, 3 * repeats


def rss(trials: int, backend: str, workers: int, workload: str = "knights",
        driver: str = "cli") -> dict:
    import btlab
    import btlab.views.headline_rows
    from btlab.cli.main import main

    # ru_maxrss (the process's peak so far) when the run is over and the
    # end-of-run table starts loading rows: the peak of the run itself
    headline_rows = btlab.views.headline_rows.headline_rows
    at_table: list[int] = []

    def headline_rows_after_run(*args, **kwargs):
        at_table.append(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
        return headline_rows(*args, **kwargs)

    btlab.views.headline_rows.headline_rows = headline_rows_after_run
    if workload == "queens":
        text, n = queens_text("rss", trials)
    else:
        text, n = sweep_text("rss", "warnsdorff", trials)
    with tempfile.TemporaryDirectory(prefix="btlab-bench-") as tmp:
        cfg = os.path.join(tmp, "rss.yaml")
        with open(cfg, "w") as fh:
            fh.write(text)
        out = os.path.join(tmp, "out")
        t0 = time.perf_counter()
        sink = io.StringIO()
        frame_rows = None
        with contextlib.redirect_stdout(sink):
            if driver == "library":
                # quiet=False: the same end-of-run table as the command (and a plain
                # progress line every 10 s: output is no terminal), into the sink
                frame_rows = len(btlab.run(cfg, backend=backend, out=out, workers=workers,
                                           yes=True, quiet=False))
                code = 0
            else:
                code = main(["run", cfg, "--out", out, "--quiet", "--backend", backend,
                             "--workers", str(workers), "--yes"])
        elapsed = time.perf_counter() - t0
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    figures = {"trials": n, "exit": code, "seconds": elapsed, "peak_rss_kib": peak_kib,
               "run_peak_rss_kib": at_table[0] if at_table else None}
    if frame_rows is not None:
        figures["frame_rows"] = frame_rows
    return figures


def main(argv: list[str]) -> int:
    if argv[0] == "ray":
        print(json.dumps(ray_jobs(int(argv[1]), json.loads(argv[2]))))
    elif argv[0] == "rss":
        print(json.dumps(rss(int(argv[1]), argv[2], int(argv[3]), *argv[4:6])))
    else:
        raise SystemExit(f"unknown measurement {argv[0]!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
