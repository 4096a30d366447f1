"""Split versus unsplit: one trial, 1 and 2 Ray workers; speed-up, waste, placements/s/worker.

Run: ``python -m bench.split [--quick]``. Two trials, both on the compiled kernel:

* **count**: N-Queens count mode (n = 16; 15 with ``--quick``), ``split: auto``;
  target: 2 workers at least 1.8x one.
* **first**: plain move-order backtracking for a first knight's tour of 8 x 8
  from (6, 0), which finds it at placement 621,436,593 (from (5, 4) at
  2,252,173 with ``--quick``), ``split: auto``; target: wasted placements
  (made in subtrees after the deciding one) under 10% of the total.

``wasted`` counts the placements of finished subtrees that were not needed;
subtrees cancelled while running report nothing, so ``worker time used`` (the
unsplit time over workers x split time) shows what speculation and idling
cost: in first mode the second worker runs subtrees after the first missing
one, which are cancelled when the deciding subtree finishes.

Each split run starts a fresh embedded Ray with that many CPUs. Prints the
figures side by side; asserts only that the split counters equal the unsplit
search's (a wrong count is a bug, not a slow run).
"""

from __future__ import annotations

import sys
import time

import ray

from btlab.execution.ray_auth import private_token_for_local_ray
from btlab.execution.split_run import run_split_trials
from btlab.experiments.compiled import solve_knights_compiled, solve_queens_compiled, warm_up
from btlab.sweep.trial import Trial


def timed(fn):
    t = time.perf_counter()
    r = fn()
    return r, time.perf_counter() - t


def split_run(trial: Trial, workers: int) -> tuple[dict, float]:
    """One split trial on a fresh embedded Ray with ``workers`` CPUs: (row, seconds)."""
    # no ~/.ray/auth_token left behind (btlab.execution.ray_auth)
    undo = private_token_for_local_ray()
    ray.init(address="local", num_cpus=workers, include_dashboard=False, log_to_driver=False,
             configure_logging=False)
    try:
        # start the workers and load the kernels before the clock starts
        ray.get([ray.remote(num_cpus=1)(warm_up).remote("queens") for _ in range(workers)])
        ray.get([ray.remote(num_cpus=1)(warm_up).remote("knights") for _ in range(workers)])
        (row,), seconds = timed(lambda: list(run_split_trials([trial], ray, workers)))
    finally:
        ray.shutdown()
        if undo is not None:
            undo()
    return row, seconds


def check(row: dict, unsplit) -> None:
    got = {k: row[k] for k in unsplit.counters()}
    assert got == unsplit.counters(), (got, unsplit.counters())


def main(argv: list[str] | None = None) -> int:
    quick = "--quick" in (argv if argv is not None else sys.argv[1:])
    n = 15 if quick else 16
    start = (5, 4) if quick else (6, 0)
    warm_up("queens")
    warm_up("knights")
    cases = []
    q_cols = {"n": n, "strategy": "bitmask", "mode": "count", "unique": False,
              "method": "none", "engine": "compiled"}
    cases.append((f"{n}-Queens count", Trial("n_queens", q_cols, None, None, 0, 0,
                                              split="auto"),
                  timed(lambda: solve_queens_compiled(n, "count"))))
    k_cols = {"rows": 8, "cols": 8, "start_row": start[0], "start_col": start[1],
              "heuristic": "none", "tie_break": "move_order", "strategy": "iterative",
              "mode": "first", "move_order": "default", "closed": False, "engine": "compiled"}
    cases.append((f"8x8 plain first {start}", Trial("knights_tour", k_cols, None, None, 0, 0,
                                                     split="auto"),
                  timed(lambda: solve_knights_compiled(8, 8, start))))
    print(f"{'trial':<26} {'run':<18} {'seconds':>8} {'speed-up':>9} {'tasks':>6} "
          f"{'placements':>15} {'wasted':>8} {'worker time used':>17} "
          f"{'placements/s/worker':>20}")
    for name, trial, (unsplit, t_unsplit) in cases:
        print(f"{name:<26} {'unsplit':<18} {t_unsplit:>8.2f} {'1.00x':>9} {'':>6} "
              f"{unsplit.nodes:>15,} {'':>8} {'':>17} {unsplit.nodes / t_unsplit:>20,.0f}")
        seconds = {}
        for workers in (1, 2):
            row, t = split_run(trial, workers)
            check(row, unsplit)
            seconds[workers] = t
            made = row["nodes"] + row["wasted_nodes"]
            used = t_unsplit / (t * workers)
            print(f"{'':<26} {f'split, {workers} worker(s)':<18} {t:>8.2f} "
                  f"{t_unsplit / t:>8.2f}x {row['split_tasks']:>6} {row['nodes']:>15,} "
                  f"{row['wasted_nodes'] / made:>8.1%} {used:>17.0%} "
                  f"{made / t / workers:>20,.0f}")
            waste = row["wasted_nodes"] / made
        ratio = seconds[1] / seconds[2]
        if trial.columns["mode"] == "count":
            verdict = "met" if ratio >= 1.8 else "NOT met"
            print(f"{'':<26} 2 workers vs 1: {ratio:.2f}x (target >= 1.8x: {verdict})")
        else:
            lost = 1 - used
            verdict = "met" if max(waste, lost) < 0.10 else "NOT met"
            print(f"{'':<26} 2 workers vs 1: {ratio:.2f}x; with 2 workers, placements wasted "
                  f"in finished subtrees {waste:.1%}, worker time not on needed work "
                  f"{lost:.0%} (target: waste < 10%: {verdict})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
