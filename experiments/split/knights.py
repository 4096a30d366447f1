"""The knight's tour :class:`~btlab.experiments.split.base.Splitter` (see :mod:`.subtrees`).

Depths count placements: the start square is depth 1, so split depths 0 and
1 both make the whole search one task. Subtree tasks run
:func:`btlab.experiments.knights.solve.search_subtree` (``iterative`` when the trial's
strategy is, else ``recursive``: same counters) or its compiled twin.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from btlab.experiments.core import Budget, Mode, SearchResult
from btlab.experiments.knights.solve import (
    DEFAULT_MOVE_ORDER,
    STRATEGIES,
    KnightBoard,
    make_orderer,
    rule_name,
    rule_uses_rng,
    search_subtree,
    validate_move_order,
)
from btlab.experiments.loading import interrupts_held
from btlab.experiments.split.base import (
    ENTER,
    EXIT,
    NO_CAP,
    TASK,
    SplitError,
    Splitter,
    Truncated,
    check_engine,
)


def _board(p: Mapping[str, Any]) -> KnightBoard:
    return KnightBoard(p["rows"], p["cols"], tuple(p["move_order"]))


def _refuse_rng_rule(rule: Any) -> None:
    raise SplitError(
        f"heuristic plug-in {rule_name(rule)} uses board.rng, one pseudo-random stream "
        "drawn in the order the search calls the rule, and a split search calls it in "
        "another order, so its counters would differ; do not split it")


def _check_rng_unused(order: Any) -> None:
    """Refuse a plug-in that read ``board.rng`` although its code does not name it."""
    if getattr(order, "uses_rng", False):
        _refuse_rng_rule(order.rule)


@dataclass(frozen=True)
class KnightsSplitter(Splitter):
    """Splits the knight's tour of :func:`btlab.experiments.knights.solve.solve_knights_tour`.

    Parameters (:meth:`normalise`): ``rows``, ``cols``, ``start`` (row,
    col), ``heuristic``, ``tie_break``, ``move_order``, ``closed``, ``mode``,
    ``strategy`` (one whose registry entry is ``splittable``), ``engine``,
    ``seed``; missing keys take the solver's defaults. The ``random``
    tie-break is refused, with a heuristic or with ``none`` (a random move
    order at every placement): it draws from one SplitMix64 stream in call
    order, which splitting changes; so is a heuristic plug-in
    that uses ``board.rng`` (judged by
    :func:`~btlab.experiments.knights.user_rules.rule_uses_rng` before planning; one that
    reads it anyway is refused when the walk or task that read it ends), and a
    plug-in with the compiled engine.
    """

    name: str = "knights_tour"

    def normalise(self, params: Mapping[str, Any]) -> dict[str, Any]:
        p = {"rows": int(params["rows"]), "cols": int(params["cols"]),
             "start": tuple(int(v) for v in params.get("start", (0, 0))),
             "heuristic": params.get("heuristic", "none"),
             "tie_break": params.get("tie_break", "move_order"),
             "move_order": validate_move_order(params.get("move_order", DEFAULT_MOVE_ORDER)),
             "closed": bool(params.get("closed", False)),
             "mode": Mode(params.get("mode", "first")).value,
             "strategy": params.get("strategy", "recursive"),
             "engine": check_engine(params),
             "seed": int(params.get("seed", 0))}
        entry = STRATEGIES.get(p["strategy"])
        if entry is None or not entry.splittable:
            splittable = [name for name, e in STRATEGIES.items() if e.splittable]
            raise SplitError(f"knight's tour strategy {p['strategy']!r} cannot be split; "
                             f"expected one of {', '.join(splittable)}")
        if callable(p["heuristic"]):
            if p["engine"] == "compiled":
                raise SplitError(f"the compiled engine runs the built-in heuristics only, not "
                                 f"the plug-in {rule_name(p['heuristic'])}; use engine python")
            if rule_uses_rng(p["heuristic"]):
                _refuse_rng_rule(p["heuristic"])
        elif p["tie_break"] == "random":
            raise SplitError(
                "the random tie-break (with heuristic none, a random move order at every "
                "placement) draws from one SplitMix64 stream in the order the search "
                "calls it, and a split search calls it in another order, so its counters would "
                "differ; use tie_break move_order, pohl or roth, or do not split")
        return p

    def plan(self, p: Mapping[str, Any], depth: int,
             max_nodes: int | None) -> tuple[list[tuple], list[tuple[int, ...]]]:
        board = _board(p)
        start = board.square(*p["start"])
        size = board.size
        nbrs = board.neighbours
        closed = p["closed"]
        order = make_orderer(board, p["heuristic"], p["tie_break"], p["seed"])
        cut = max(depth, 1)
        visited = bytearray(size)
        path: list[int] = []
        events: list[tuple] = []
        tasks: list[tuple[int, ...]] = []

        def visit(sq: int, d: int) -> None:
            if d == cut:
                events.append((TASK, len(tasks), 0))
                tasks.append((*path, sq))
                return
            top[0] += 1
            if top[0] > cap:
                events.append((ENTER, 1, d, 0, 0, 0, None, 0))
                raise Truncated
            visited[sq] = 1
            path.append(sq)
            if d == size:
                ok = not closed or start in nbrs[sq]
                events.append((ENTER, 1, d, 0, 0, int(not ok), tuple(path) if ok else None, 0))
                if ok and p["mode"] == "first":
                    raise Truncated  # the replay stops at this tour
            else:
                cands, looked = order(sq, visited)
                events.append((ENTER, 1, d, 0, looked, int(not cands), None, 0))
                for nxt in cands:
                    visit(nxt, d + 1)
            events.append((EXIT, 1, 0, 0))
            visited[sq] = 0
            path.pop()

        top = [0]
        cap = max_nodes if max_nodes is not None else NO_CAP
        try:
            visit(start, 1)
        except Truncated:
            pass
        _check_rng_unused(order)
        return events, tasks

    def run_subtree(self, p: Mapping[str, Any], path: Sequence[int], max_nodes: int | None,
                    max_seconds: float | None) -> SearchResult:
        if p.get("engine", "python") == "compiled":
            # Imported here so that importing btlab.experiments.split.subtrees does not load
            # numba; whole, even if the task is cancelled meanwhile (btlab.experiments.loading).
            with interrupts_held():
                # heavy: numba loads on import
                from btlab.experiments.compiled import knights_subtree_compiled

            return knights_subtree_compiled(
                p["rows"], p["cols"], path, mode=p["mode"], heuristic=p["heuristic"],
                tie_break=p["tie_break"], move_order=p["move_order"], closed=p["closed"],
                max_nodes=max_nodes, max_seconds=max_seconds, seed=p["seed"])
        board = _board(p)
        order = make_orderer(board, p["heuristic"], p["tie_break"], p["seed"])
        strategy = "iterative" if p["strategy"] == "iterative" else "recursive"
        result = search_subtree(board, order, path, p["mode"] == "first", p["closed"],
                                Budget(max_nodes, max_seconds), strategy)
        _check_rng_unused(order)
        return result


#: The knight's tour splitter (``SPLITTERS["knights_tour"]``).
KNIGHTS = KnightsSplitter()
