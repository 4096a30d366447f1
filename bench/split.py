"""Split vs unsplit: one trial with 1 and 2 Ray workers; speed-up, waste, placements/s/worker.

Run: ``python bench/split.py [N] [DEPTH]`` (default: 12-Queens count mode, split
depth 3; and 8 x 8 plain first mode from (0, 1) with a 2e6-node budget).
Prints figures; asserts only that the counters equal the unsplit search's.
"""

from __future__ import annotations

import sys
import time

import ray

from experiments.core import SearchResult
from experiments.knights import solve_knights_tour
from experiments.queens import solve_queens
from experiments.split import run_subtree
from runner.config import Trial
from runner.split_runner import ray_solver, split_params


def timed(fn):
    t = time.perf_counter()
    r = fn()
    return r, time.perf_counter() - t


def bench(name, trial: Trial, unsplit: SearchResult, t_unsplit: float, workers: int) -> None:
    remote = ray.remote(num_cpus=1)(run_subtree)
    solve = ray_solver(trial, ray, remote, workers)
    r, t = timed(lambda: solve(trial.columns, trial.budget_nodes, None, 0))
    assert r.counters() == unsplit.counters(), (r.counters(), unsplit.counters())
    print(f"{name}: {workers} worker(s): {t:.2f} s vs unsplit {t_unsplit:.2f} s -> "
          f"speed-up {t_unsplit / t:.2f}x; depth {r.extra['split_depth']}, "
          f"{r.extra['split_tasks']} tasks, wasted {r.extra['wasted_nodes']:,} placements; "
          f"{(r.nodes + r.extra['wasted_nodes']) / t / workers:,.0f} placements/s/worker")


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 12
    depth = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    q_cols = {"n": n, "strategy": "recursive", "mode": "count", "unique": False,
              "method": "none", "engine": "python"}
    q = Trial("n_queens", q_cols, None, None, 0, 0, split=depth)
    uq, tq = timed(lambda: solve_queens(n, mode="count"))
    print(f"{n}-Queens count unsplit: {uq.nodes:,} placements in {tq:.2f} s "
          f"({uq.nodes / tq:,.0f}/s)")
    k_cols = {"rows": 8, "cols": 8, "start_row": 0, "start_col": 1, "heuristic": "none",
              "tie_break": "move_order", "strategy": "recursive", "mode": "first",
              "move_order": "default", "closed": False, "engine": "python"}
    k = Trial("knights_tour", k_cols, 2_000_000, None, 0, 0, split=5)
    uk, tk = timed(lambda: solve_knights_tour(8, 8, (0, 1), max_nodes=2_000_000))
    print(f"8x8 plain first from (0, 1) unsplit: {uk.nodes:,} placements, {uk.status}, "
          f"{tk:.2f} s")
    for workers in (1, 2):
        bench(f"{n}-Queens count", q, uq, tq, workers)
        bench("8x8 plain first (0,1)", k, uk, tk, workers)
    ray.shutdown()


if __name__ == "__main__":
    main()
