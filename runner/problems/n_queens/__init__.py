"""N-Queens as the runner sees it: parameters, columns, solve, checks, split.

Searches: :mod:`btlab.experiments.queens.solve` (strategies in
:data:`btlab.experiments.queens.solve.STRATEGIES`) and :mod:`btlab.experiments.compiled` (the
numba bit-mask kernel, ``engine: compiled``). Headline tables and report
plots: :mod:`btlab.problems.n_queens.views`. Counters: ``docs/metrics.md``.

Modules:

- ``views``: its headline table, report section and board drawings (in the ``views`` room).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal, Mapping

import pyarrow as pa
from pydantic import Field, StrictBool, StrictInt

from btlab.experiments.checker_fast import check_queens_fast
from btlab.experiments.core import SearchResult
from btlab.experiments.estimate import as_result, estimate_queens, warm_kind
from btlab.experiments.estimators import KNUTH
from btlab.experiments.loading import interrupts_held
from btlab.experiments.queens.solve import CONSTRUCTIONS, STRATEGIES, solve_queens
from btlab.problems.spec import (
    ComparedColumn,
    Oracle,
    ParamError,
    Params,
    ProblemSpec,
    trial_estimator,
)

#: n is an int32 column; the strategies' caps (max_size) are far smaller.
PositiveInt = Annotated[StrictInt, Field(ge=1, le=(1 << 31) - 1)]

#: Queens on a compiled 64-bit mask board.
COMPILED_MAX_N = 64


class QueensParams(Params):
    """Parameters of an N-Queens trial.

    ``unique`` (``count`` mode) counts solutions up to the 8 symmetries of the
    square; ``method`` chooses the ``construction``: ``formula`` (any n >= 4)
    or ``product`` (n = 5^k). ``engine: compiled`` runs the numba bit-mask
    kernel (strategy ``bitmask``), with the same counters as the Python strategies.
    """

    n: PositiveInt
    strategy: Literal[tuple(STRATEGIES)] = "recursive"  # type: ignore[valid-type]
    mode: Literal["first", "count", "estimate"] = "first"
    unique: StrictBool = False
    method: Literal[(*CONSTRUCTIONS, "none")] = "none"  # type: ignore[valid-type]
    engine: Literal["python", "compiled"] = "python"


def to_columns(p: Mapping[str, Any]) -> dict[str, Any]:
    """Validated parameters -> the Parquet parameter columns."""
    strategy = p.get("strategy", "recursive")
    method = p.get("method", "none")
    if "method" in STRATEGIES[strategy].options and method == "none":
        method = CONSTRUCTIONS[0]
    return {"n": p["n"], "strategy": strategy, "mode": p.get("mode", "first"),
            "unique": bool(p.get("unique", False)), "method": method,
            "engine": p.get("engine", "python")}


def solve(c: Mapping[str, Any], max_nodes: int | None, max_seconds: float | None,
          seed: int, max_backtracks: int | None = None) -> SearchResult:
    """Run one N-Queens trial on its engine; ``max_backtracks``: the backtrack budget, or
    None."""
    if c["engine"] == "compiled":
        with interrupts_held():  # whole, even if cancelled (btlab.experiments.loading)
            # heavy: numba loads on import
            from btlab.experiments.compiled import solve_queens_compiled
        return solve_queens_compiled(c["n"], mode=c["mode"], unique=c["unique"],
                                     max_nodes=max_nodes, max_seconds=max_seconds,
                                     max_backtracks=max_backtracks)
    return solve_queens(c["n"], mode=c["mode"], strategy=c["strategy"], unique=c["unique"],
                        method=None if c["method"] == "none" else c["method"],
                        max_nodes=max_nodes, max_seconds=max_seconds,
                        max_backtracks=max_backtracks)


def estimate(c: Mapping[str, Any], probes: int, max_nodes: int | None,
             max_seconds: float | None, seed: int) -> SearchResult:
    """The estimate of the trial's ``count``-mode placements and solutions from ``probes``
    random probes by its estimator (the label ``c["estimator"]``, ``knuth`` when absent;
    :func:`btlab.experiments.estimate.estimate_queens`), on the trial's engine. The
    proposal of ``importance`` and ``perm`` weights a queen exp(beta x the free squares
    its placement leaves in the next row)."""
    return as_result(estimate_queens(c["n"], unique=c["unique"], probes=probes, seed=seed,
                                     estimator=trial_estimator(c), max_nodes=max_nodes,
                                     max_seconds=max_seconds, engine=c["engine"]))


def seeded(c: Mapping[str, Any]) -> bool:
    """Whether a trial draws from its seed: only ``mode: estimate`` (random probes)."""
    return c.get("mode") == "estimate"


def verify(c: Mapping[str, Any], solution: tuple[int, ...]) -> None:
    """Raise :class:`btlab.experiments.checker.InvalidSolution` unless no two queens attack."""
    check_queens_fast(c["n"], solution)


def kernels(c: Mapping[str, Any]) -> tuple[str, ...]:
    """The compiled kernels a trial runs (:func:`btlab.experiments.compiled.warm_up`
    kinds); none on the Python engine."""
    if c.get("engine") != "compiled":
        return ()
    return (warm_kind("queens", trial_estimator(c)) if c["mode"] == "estimate" else "queens",)


def prepare(c: Mapping[str, Any]) -> Mapping[str, Any]:
    """Load the trial's compiled kernels, and only those, before the clock starts
    (``compile_ns``)."""
    kinds = kernels(c)
    if not kinds:
        return {}
    with interrupts_held():  # whole, even if cancelled (btlab.experiments.loading)
        # heavy: numba loads on import
        from btlab.experiments.compiled import warm_up
    return {"compile_ns": sum(warm_up(kind) for kind in kinds)}


def check(c: Mapping[str, Any]) -> None:
    """Refuse parameters that cannot run together."""
    n, strategy, mode = c["n"], c["strategy"], c["mode"]
    if c["engine"] == "compiled" and n > COMPILED_MAX_N:
        raise ParamError("n", f"at most {COMPILED_MAX_N} with engine 'compiled' (64-bit masks)",
                         f"n = {n}", "use engine: python")
    if c["unique"] and mode not in ("count", "estimate"):
        # estimate: the probes' solutions_estimate counts solutions up to symmetry
        raise ParamError("unique", "unique: true only with mode: count or estimate",
                         f"mode: {mode}", "set mode: count, or drop unique")
    entry = STRATEGIES[strategy]
    if "method" in entry.options:
        if c["unique"]:
            raise ParamError("unique", "a searching strategy for unique counting",
                             f"strategy: {strategy}", "drop unique")
        if c["method"] == "product":
            k = n
            while k % 5 == 0:
                k //= 5
            if k != 1:
                raise ParamError("n", "n = 5^k (5, 25, 125, ...) for method: product", f"n = {n}",
                                 "use n: 5, 25, 125, ... or method: formula")
    elif c["method"] != "none":
        able = [s for s, e in STRATEGIES.items() if "method" in e.options]
        raise ParamError("method", f"method only with strategy: {' or '.join(able)}",
                         f"method: {c['method']} with strategy: {strategy}", "drop method")


@dataclass(frozen=True)
class QueensSplit:
    """Split support (:class:`btlab.problems.spec.SplitSupport`) of N-Queens."""

    splitter: str = "n_queens"

    def params(self, c: Mapping[str, Any], seed: int) -> dict[str, Any]:
        return {"n": c["n"], "mode": c["mode"], "unique": c["unique"],
                "strategy": c["strategy"], "engine": c.get("engine", "python")}

    def check(self, c: Mapping[str, Any]) -> None:
        if not STRATEGIES[c["strategy"]].splittable:
            able = [s for s, e in STRATEGIES.items() if e.splittable]
            raise ParamError("split", f"strategy {', '.join(able)} with split (the ones that "
                             "walk the row-by-row tree)", f"strategy: {c['strategy']}",
                             "drop split for this strategy")

    def warm_up(self, params: Mapping[str, Any]) -> None:
        prepare(params)  # the split's parameters carry the trial's engine


_A000170 = (1, 0, 0, 2, 10, 4, 40, 92, 352, 724)

PROBLEM = ProblemSpec(
    name="n_queens",
    title="N-Queens",
    params=QueensParams,
    columns=pa.schema([
        ("n", pa.int32()), ("strategy", pa.string()), ("mode", pa.string()),
        ("unique", pa.bool_()), ("method", pa.string()), ("engine", pa.string()),
    ]),
    to_columns=to_columns,
    solve=solve,
    estimate=estimate,
    estimators=(KNUTH, "importance", "perm"),
    estimate_trees=("rows", "functional"),  # functional: the same level sizes, transposed
    verify=verify,
    strategies=STRATEGIES,
    size=lambda c: c["n"],
    size_param="n",
    size_unit="",
    check=check,
    extra_columns=("amb_restarts", "amb_replayed", "all_solutions", "walked_nodes", "candidates",
                   "max_frontier", "compile_ns", "split_depth", "split_tasks", "wasted_nodes",
                   "split_resumed", "probes_done"),
    prepare=prepare,
    kernels=kernels,
    split=QueensSplit(),
    headline="btlab.problems.n_queens.views:headline",
    report="btlab.problems.n_queens.views:report",
    solution_figure="btlab.problems.n_queens.views:solution_figure",
    comparisons=(ComparedColumn("strategy", "recursive", ("nodes", "wall_ns")),
                 ComparedColumn("engine", "python", ("wall_ns",))),
    # brute_force, the row-by-row strategies and functional walk different trees
    # (their registry entries' tree): strategy pairs by tree
    pair_on=("n", "strategy", "mode", "unique", "method"),
    seeded=seeded,
    size_columns=("n",),
    oracles=(
        *(Oracle({"n": n, "mode": "count"}, {"solutions": count},
                 f"OEIS A000170: {count} solutions for n = {n}")
          for n, count in enumerate(_A000170, 1)),
        Oracle({"n": 8, "mode": "count"},
               {"solutions": 92, "nodes": 2056, "checks": 15720},
               "Knuth, TAOCP 7.2.2; OEIS A319235: 2,057 tree nodes with the empty root",
               tree="rows"),
        Oracle({"n": 8, "mode": "count", "unique": True}, {"solutions": 12},
               "OEIS A002562: 12 solutions up to symmetry for n = 8"),
        Oracle({"n": 8, "mode": "first"}, {"solutions": 1}, "a solution exists for n = 8"),
    ),
    source="OEIS A000170",
)
