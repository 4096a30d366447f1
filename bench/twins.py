"""The compiled kernels against their C twins (``bench/dfs.c``): same searches, same counters.

:func:`build_c` compiles ``bench/dfs.c`` with ``gcc -O2 -march=native``;
:data:`CASES` and :func:`workloads` name the searches both sides run;
:func:`compare` runs one search on both, checks that the counters are equal,
and only then times them: the best of alternating runs (kernel, C, kernel,
C, ...), repeated until two successive bests of each side agree within 3 %.
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

HERE = Path(__file__).resolve().parent

_C_STATUS = {1: "solved", 2: "exhausted", 3: "node_limit"}

#: Two successive bests within this fraction of each other end the timing.
AGREE = 0.03


def build_c(tmp: str) -> tuple[str | None, str]:
    """Compile bench/dfs.c with ``gcc -O2 -march=native`` into ``tmp``.

    Returns:
        ``(path of the executable, "")``, or ``(None, why)`` without gcc or
        when it fails (the bench then reports the kernels alone).
    """
    compiler = shutil.which("gcc")
    if compiler is None:
        return None, "no gcc on PATH"
    exe = os.path.join(tmp, "dfs")
    done = subprocess.run([compiler, "-O2", "-march=native", "-o", exe, str(HERE / "dfs.c")],
                          capture_output=True, text=True)
    if done.returncode != 0:
        print(f"bench: gcc failed on dfs.c:\n{done.stderr}", file=sys.stderr)
        return None, "gcc failed on dfs.c"
    return exe, ""


def run_c(exe: str, args: list) -> tuple[dict, float]:
    """Run the C twin once: ``(counters as SearchResult.counters() gives them, seconds)``."""
    out = subprocess.run([exe, *map(str, args)], capture_output=True, text=True, check=True)
    f = out.stdout.split()
    counters = {"status": _C_STATUS[int(f[0])], "nodes": int(f[1]), "backtracks": int(f[2]),
                "dead_ends": int(f[3]), "checks": int(f[4]), "solutions": int(f[5]),
                "max_depth": int(f[6])}
    return counters, float(f[7])


@dataclass
class Case:
    """One search run by a kernel and by its C twin.

    ``kind`` is ``knights`` (``args``: rows, cols, start row, start col,
    heuristic ``none``/``warnsdorff``, mode ``first``/``count``, node cap or
    None) or ``queens`` (``args``: n, mode, node cap or None).
    """

    kind: str
    args: tuple
    #: run the C side on dfs.c's count-mode loop even in first mode (``general``)
    general: bool = False

    @property
    def name(self) -> str:
        cap = self.args[-1]
        budget = f", {cap:,} nodes" if cap is not None else ""
        if self.kind == "knights":
            rows, cols, r, c, heuristic, mode, _ = self.args
            return f"knight's tour {rows}x{cols} from ({r}, {c}) {heuristic}, {mode}{budget}"
        n, mode, _ = self.args
        return f"N-Queens bitmask n={n}, {mode}{budget}"

    def c_args(self) -> list:
        cap = self.args[-1] if self.args[-1] is not None else 1 << 62
        if self.kind == "knights":
            rows, cols, r, c, heuristic, mode, _ = self.args
            return ["knights", rows, cols, r, c, int(heuristic == "warnsdorff"),
                    int(mode == "first"), cap, *(["general"] if self.general else [])]
        n, mode, _ = self.args
        return ["queens", n, int(mode == "first"), cap]

    def kernel(self) -> Callable[[], Any]:
        from btlab.experiments.compiled import solve_knights_compiled, solve_queens_compiled

        if self.kind == "knights":
            rows, cols, r, c, heuristic, mode, cap = self.args
            return lambda: solve_knights_compiled(rows, cols, (r, c), mode=mode,
                                                  heuristic=heuristic, max_nodes=cap)
        n, mode, cap = self.args
        return lambda: solve_queens_compiled(n, mode, max_nodes=cap)


#: Tiny searches whose counters the tests hold equal on both sides (both
#: heuristics, both modes, node caps, boards on both sides of 64 squares).
CASES = [Case("knights", (rows, cols, r, c, h, mode, cap))
         for rows, cols, r, c in [(1, 1, 0, 0), (3, 3, 0, 0), (3, 4, 0, 0), (5, 5, 0, 0),
                                  (5, 5, 1, 2), (6, 6, 0, 0), (8, 8, 0, 1), (9, 9, 0, 0),
                                  (7, 10, 3, 4)]
         for h in ("none", "warnsdorff") for mode in ("first", "count")
         for cap in (None if rows * cols <= 25 else 30_000, 5)] + [
    Case("queens", (n, mode, cap)) for n in (1, 2, 4, 6, 8, 10)
    for mode in ("first", "count") for cap in (None, 1, 100)]


def workloads(quick: bool) -> list[Case]:
    """The timed searches: plain move order (first tour, on 8 x 8 and on 9 x 9 under a
    node cap: the first-mode loops; and count), Warnsdorff with move-order ties (count
    under a node cap), a board over 64 squares, and the N-Queens count."""
    nodes = 2_000_000 if quick else 20_000_000
    return [
        Case("knights", (6, 6, 0, 0, "none", "first", None) if quick else
             (8, 8, 0, 0, "none", "first", None)),
        Case("knights", (9, 9, 0, 0, "none", "first", nodes)),
        Case("knights", (8, 8, 0, 1, "none", "count", nodes)),
        Case("knights", (8, 8, 0, 1, "warnsdorff", "count", nodes)),
        Case("knights", (9, 9, 0, 0, "none", "count", nodes)),
        Case("knights", (9, 9, 0, 0, "warnsdorff", "count", nodes)),
        Case("queens", (11 if quick else 14, "count", None)),
    ]


@dataclass
class Timing:
    """The outcome of :func:`compare`: counters of both sides and their best times."""

    kernel_counters: dict
    c_counters: dict
    kernel_s: float = math.nan
    c_s: float = math.nan
    rounds: int = 0

    @property
    def same(self) -> bool:
        return self.kernel_counters == self.c_counters


def best_of_alternating(runs: Sequence[Callable[[], float]], firsts: Sequence[float],
                        max_rounds: int = 12) -> tuple[list[float], int]:
    """The best time of each of ``runs``, run in turn (a, b, a, b, ...) round after round.

    Args:
        runs: callables that run one side once and return its seconds.
        firsts: each side's seconds of a run already made (round 1: the one
            that gave the counters).
        max_rounds: rounds at most, round 1 included.

    The timing stops after the first round (of at least 3) at which the best of
    each side is within :data:`AGREE` of its best one round earlier, or after
    ``max_rounds``.

    Returns:
        (the best seconds of each side, in the order of ``runs``; rounds run).
    """
    best = list(firsts)
    rounds = 1
    for rounds in range(2, max_rounds + 1):
        new = [min(b, run()) for b, run in zip(best, runs)]
        settled = all(n >= b * (1 - AGREE) for n, b in zip(new, best))
        best = new
        if settled and rounds >= 3:
            break
    return best, rounds


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    """``(fn(), its wall seconds)``."""
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def compare(case: Case, exe: str, max_rounds: int = 12) -> Timing:
    """Counters of both sides, then (when they are equal) the best of alternating runs
    (:func:`best_of_alternating`)."""
    kernel = case.kernel()
    args = case.c_args()
    result, k_s = timed(kernel)
    c_counters, c_s = run_c(exe, args)
    timing = Timing(result.counters(), c_counters)
    if not timing.same:
        return timing
    (best_k, best_c), rounds = best_of_alternating(
        [lambda: timed(kernel)[1], lambda: run_c(exe, args)[1]], [k_s, c_s], max_rounds)
    timing.kernel_s, timing.c_s, timing.rounds = best_k, best_c, rounds
    return timing
