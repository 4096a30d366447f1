"""The kernels' variants against their own move-order speed, on the same tree.

``python -m bench --only variants``. Each case runs a compiled variant and its
baseline, checks their counters first, and only then times them (best of
alternating runs, :func:`bench.twins.best_of_alternating`); the ratio is of
nanoseconds per placement, target at most 1.2x. Nothing asserts a time.

* Knight's tour tie-breaks ``random``, ``pohl`` and ``roth`` under ``warnsdorff``
  against ``warnsdorff`` with move-order ties; ``none`` with ``random`` (a shuffled
  move order at every placement) against ``none``; ``static_degree`` with
  move-order ties against ``warnsdorff`` (the nearest kernel with a C twin).
  Count mode under one node cap from one start, on 8 x 8 and on 9 x 9 (over 64
  squares: a byte per square; ``random`` ties: the general loop). The trees
  differ only in order, so equal caps make equal placements; the check is
  that, and the rows give checks per placement too (``pohl`` looks one square
  further, so it checks more per placement by definition).
* N-Queens ``unique`` count against the plain count, same n: the same tree, so
  every counter but ``solutions`` is equal and ``extra["all_solutions"]`` is the
  plain count.
* Split subtree kernels: every subtree task of a split count run one after the
  other in this process through the compiled subtree entry point
  (:func:`btlab.experiments.split.subtrees.run_task`), the sum of their times against the
  unsplit kernel's; the tasks combined (:func:`btlab.experiments.split.subtrees.combine`) give
  exactly the unsplit counters. N-Queens and a whole knight's tour count tree.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from bench.twins import best_of_alternating, timed
from btlab.experiments.core import SearchResult

#: The target: a variant's time per placement over its baseline's.
LIMIT = 1.2

#: Tasks of a split count: those ``split: auto`` asks of 2 workers (16 per worker).
SPLIT_TASKS = 32

Run = Callable[[], tuple[SearchResult, float, int]]


@dataclass
class Variant:
    """One variant and its baseline.

    Attributes:
        name: what the variant is (the row's label).
        base_name: what it is compared with.
        run, base: one run of each side: ``(result, seconds timed, placements
            in those seconds)``.
        same: what the check holds equal: ``placements`` (knight's tour orders),
            ``all but solutions`` (``unique``), ``counters`` (split).
    """

    name: str
    base_name: str
    run: Run
    base: Run
    same: str


def _whole(fn: Callable[[], SearchResult]) -> Run:
    def run() -> tuple[SearchResult, float, int]:
        result, seconds = timed(fn)
        return result, seconds, result.nodes
    return run


def knights_variants(quick: bool) -> list[Variant]:
    """Tie-breaks and ``static_degree`` against move order, 8 x 8 and 9 x 9, count mode."""
    from btlab.experiments.compiled import solve_knights_compiled

    cap = 1_000_000 if quick else 20_000_000

    def kernel(rows: int, cols: int, start: tuple[int, int], heuristic: str,
               tie: str) -> Run:
        return _whole(lambda: solve_knights_compiled(
            rows, cols, start, mode="count", heuristic=heuristic, tie_break=tie,
            max_nodes=cap, seed=1))

    pairs = [(("warnsdorff", "random"), ("warnsdorff", "move_order")),
             (("warnsdorff", "pohl"), ("warnsdorff", "move_order")),
             (("warnsdorff", "roth"), ("warnsdorff", "move_order")),
             (("none", "random"), ("none", "move_order")),
             (("static_degree", "move_order"), ("warnsdorff", "move_order"))]
    out = []
    for rows, cols, start in [(8, 8, (0, 1)), (9, 9, (0, 0))]:
        for (h, t), (bh, bt) in pairs:
            out.append(Variant(
                f"knight's tour {rows}x{cols} from {start}, {h} + {t}, count, {cap:,} nodes",
                f"{bh} + {bt}", kernel(rows, cols, start, h, t),
                kernel(rows, cols, start, bh, bt), "placements"))
    return out


def queens_unique(n: int) -> Variant:
    """The ``unique`` count of n-Queens against the plain count."""
    from btlab.experiments.compiled import solve_queens_compiled

    return Variant(f"N-Queens bitmask n={n}, unique count", "plain count",
                   _whole(lambda: solve_queens_compiled(n, "count", unique=True)),
                   _whole(lambda: solve_queens_compiled(n, "count")), "all but solutions")


def split_variant(problem: str, params: dict, label: str,
                  unsplit: Callable[[], SearchResult]) -> Variant:
    """Every subtree task of a split count, serially, against the unsplit kernel.

    The plan (split depth as ``split: auto`` picks it for :data:`SPLIT_TASKS`
    tasks) is made once; a run times each task's :func:`~btlab.experiments.split.subtrees.run_task`
    call (the compiled subtree entry point) and sums those times, then combines
    the results.
    """
    from btlab.experiments.split.subtrees import Combined, auto_depth, combine, plan_split

    params = {**params, "mode": "count", "engine": "compiled"}
    depth = auto_depth(problem, params, SPLIT_TASKS)
    plan = plan_split(problem, params, depth)

    def run() -> tuple[SearchResult, float, int]:
        from btlab.experiments.split.subtrees import run_task

        results: list[SearchResult | None] = []
        seconds = 0.0
        for i in range(len(plan.tasks)):
            t0 = time.perf_counter()
            results.append(run_task(plan, i))
            seconds += time.perf_counter() - t0
        out = combine(plan, results)
        assert isinstance(out, Combined)  # a count needs every task, all given
        return out.result, seconds, sum(r.nodes for r in results if r is not None)

    return Variant(f"split {label}: {len(plan.tasks)} subtree tasks (depth {depth}) in turn",
                   f"unsplit {label}", run, _whole(unsplit), "counters")


def variants(quick: bool) -> list[Variant]:
    """Every case of the section (smaller searches with ``quick``)."""
    from btlab.experiments.compiled import solve_knights_compiled, solve_queens_compiled

    n = 10 if quick else 14
    rows, cols = (5, 5) if quick else (5, 6)
    return [
        *knights_variants(quick),
        queens_unique(n),
        split_variant("n_queens", {"n": n, "strategy": "bitmask"}, f"N-Queens n={n} count",
                      lambda: solve_queens_compiled(n, "count")),
        split_variant("knights_tour", {"rows": rows, "cols": cols, "start": (0, 0),
                                       "strategy": "iterative"},
                      f"knight's tour {rows}x{cols} from (0, 0) none, count (whole tree)",
                      lambda: solve_knights_compiled(rows, cols, (0, 0), mode="count")),
    ]


def check(v: Variant, got: SearchResult, base: SearchResult) -> str:
    """``""`` when the counters are as ``v.same`` says, else what differs."""
    if v.same == "placements":
        if got.nodes != base.nodes:
            return f"placements {got.nodes:,} against {base.nodes:,}"
        return ""
    if v.same == "all but solutions":
        a, b = got.counters(), base.counters()
        a.pop("solutions")
        b.pop("solutions")
        if a != b or got.extra.get("all_solutions") != base.solutions:
            return (f"{a} all_solutions {got.extra.get('all_solutions')} against {b} "
                    f"{base.solutions}")
        return ""
    if got.counters() != base.counters():
        return f"{got.counters()} against {base.counters()}"
    return ""


@dataclass
class Measured:
    """A variant's outcome: its counters' check, then its best time per placement and the
    baseline's."""

    variant: Variant
    differs: str
    result: SearchResult
    base_result: SearchResult
    ns: float = 0.0
    base_ns: float = 0.0
    rounds: int = 0

    @property
    def ratio(self) -> float:
        return self.ns / self.base_ns


def measure(v: Variant, max_rounds: int) -> Measured:
    """Check the counters of ``v``'s two sides; when they agree, time both, alternating."""
    got, seconds, placements = v.run()
    base, base_seconds, base_placements = v.base()
    m = Measured(v, check(v, got, base), got, base)
    if m.differs:
        return m
    (best, base_best), m.rounds = best_of_alternating(
        [lambda: v.run()[1], lambda: v.base()[1]], [seconds, base_seconds], max_rounds)
    m.ns = best / placements * 1e9
    m.base_ns = base_best / base_placements * 1e9
    return m


def describe(m: Measured) -> tuple[str, str, str]:
    """The row's figures of a checked and timed variant: (measured, compared with, ratio)."""
    per = m.result.checks / m.result.nodes
    base_per = m.base_result.checks / m.base_result.nodes
    why = ""
    if "pohl" in m.variant.name and per > base_per * 1.05:
        why = (f"; pohl looks one square further: {per / base_per:.2f}x the checks, "
               f"{m.ratio * base_per / per:.2f}x the time per check")
    return (f"{m.ns:.2f} ns/placement, {per:.2f} checks/placement",
            f"{m.variant.base_name} {m.base_ns:.2f} ns/placement, {base_per:.2f} "
            f"checks/placement, same {m.variant.same}{why}",
            f"{m.ratio:.2f}x ({m.rounds} rounds)")
