"""``python -m bench.first [ROUNDS]``: the first-mode plain loops against their C twins.

For plain move order to the first tour on 8 x 8 from (0, 0) (251,825,408
placements, the tour) and on 9 x 9 from (0, 0) under 20,000,000 placements,
ROUNDS (default 5) alternating rounds of: the kernel (its first-mode loop), the
C twin (``bench/dfs.c``'s first-mode loop), the kernel on its count-mode loop
and dfs.c's count-mode loop, on the same search; counters checked equal first.
Prints the median wall and CPU seconds of each and the ratios, with the load
average before and after.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time

from bench.twins import Case, build_c

CASES = [Case("knights", (8, 8, 0, 0, "none", "first", None)),
         Case("knights", (9, 9, 0, 0, "none", "first", 20_000_000))]


def _c(exe: str, args: list) -> tuple[dict, float, float]:
    t0 = time.perf_counter()
    p = subprocess.Popen([exe, *map(str, args)], stdout=subprocess.PIPE, text=True)
    out = p.stdout.read() if p.stdout else ""
    _, _, usage = os.wait4(p.pid, 0)
    f = out.split()
    return ({"nodes": int(f[1]), "backtracks": int(f[2]), "dead_ends": int(f[3]),
             "checks": int(f[4]), "max_depth": int(f[6])},
            time.perf_counter() - t0, usage.ru_utime + usage.ru_stime)


def _kernel(case: Case, count_loop: bool) -> tuple[dict, float, float]:
    from btlab.experiments.compiled.knights import loops

    choose = loops.choose
    if count_loop:
        loops.choose = lambda s: choose(loops.Shape(s.small, s.heuristic, s.tie, False,
                                                    s.cells))
    try:
        w0, c0 = time.perf_counter(), time.process_time()
        r = case.kernel()()
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    finally:
        loops.choose = choose
    return ({"nodes": r.nodes, "backtracks": r.backtracks, "dead_ends": r.dead_ends,
             "checks": r.checks, "max_depth": r.max_depth}, wall, cpu)


def main(argv: list[str]) -> int:
    from btlab.experiments.compiled import warm_up

    rounds = int(argv[0]) if argv else 5
    warm_up("knights")
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as tmp:
        exe, why = build_c(tmp)
        if exe is None:
            print(f"no C twin: {why}")
            return 1
        for case in CASES:
            general = Case(case.kind, case.args, general=True)
            sides = {"kernel": lambda case=case: _kernel(case, False),
                     "C twin": lambda case=case: _c(exe, case.c_args()),
                     "kernel count loop": lambda case=case: _kernel(case, True),
                     "C count loop": lambda general=general: _c(exe, general.c_args())}
            times: dict[str, list[tuple[float, float]]] = {k: [] for k in sides}
            counters = {}
            for _ in range(rounds):
                for name, run in sides.items():
                    got, wall, cpu = run()
                    counters[name] = got
                    times[name].append((wall, cpu))
            same = len({str(c) for c in counters.values()}) == 1
            med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
                   for k, v in times.items()}
            print(f"{case.name}: counters {'equal' if same else 'DIFFER'}")
            for name, (wall, cpu) in med.items():
                print(f"  {name:18} wall {wall:7.3f} s  cpu {cpu:7.3f} s")
            k, c = med["kernel"], med["C twin"]
            print(f"  kernel / C twin: {k[0] / c[0]:.2f}x wall, {k[1] / c[1]:.2f}x cpu; "
                  f"C twin / C count loop {c[0] / med['C count loop'][0]:.2f}x wall; "
                  f"kernel / its count loop {k[0] / med['kernel count loop'][0]:.2f}x wall "
                  f"(median of {rounds} alternating rounds)")
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
