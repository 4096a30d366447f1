"""The N-Queens :class:`~btlab.experiments.split.base.Splitter` (see :mod:`.subtrees`).

Depths count queens: the queen of row 0 is depth 1, the empty board depth 0.
The split follows the ``recursive`` order and counters, which every strategy
whose registry entry (:data:`btlab.experiments.queens.solve.STRATEGIES`) is
``splittable`` shares; subtree tasks run
:func:`btlab.experiments.queens.solve.search_subtree` or its compiled twin.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from btlab.experiments.core import Budget, Mode, SearchResult
from btlab.experiments.loading import interrupts_held
from btlab.experiments.queens.solve import STRATEGIES, is_canonical, search_subtree
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


@dataclass(frozen=True)
class QueensSplitter(Splitter):
    """Splits the N-Queens search of :func:`btlab.experiments.queens.solve.solve_queens`.

    Parameters (:meth:`normalise`): ``n``, ``mode``, ``unique``, ``strategy``
    (one whose registry entry is ``splittable``), ``engine``; missing keys take
    the solver's defaults.
    """

    name: str = "n_queens"

    def normalise(self, params: Mapping[str, Any]) -> dict[str, Any]:
        p = {"n": int(params["n"]), "mode": Mode(params.get("mode", "first")).value,
             "unique": bool(params.get("unique", False)),
             "strategy": params.get("strategy", "recursive"),
             "engine": check_engine(params)}
        entry = STRATEGIES.get(p["strategy"])
        if entry is None or not entry.splittable:
            splittable = [name for name, e in STRATEGIES.items() if e.splittable]
            what = "walks another tree" if entry is not None else "is unknown"
            raise SplitError(f"N-Queens strategy {p['strategy']!r} {what}; a split search "
                             f"reproduces {', '.join(splittable)} only")
        if p["n"] < 1:
            raise SplitError(f"n must be at least 1, got {p['n']}")
        if p["unique"] and p["mode"] != "count":
            raise SplitError("unique counting needs mode='count'")
        return p

    def plan(self, p: Mapping[str, Any], depth: int,
             max_nodes: int | None) -> tuple[list[tuple], list[tuple[int, ...]]]:
        n = p["n"]
        last = n - 1
        unique = p["unique"]
        events: list[tuple] = []
        tasks: list[tuple[int, ...]] = []
        if depth == 0:
            return [(TASK, 0, 0)], [()]
        col_used = [False] * n
        diag = [False] * (2 * n - 1)
        anti = [False] * (2 * n - 1)
        placement: list[int] = []

        def expand(row: int) -> int:
            """Row ``row``'s columns, below the queen at depth ``row`` (or the empty board)."""
            placed = False
            for col in range(n):
                if col_used[col] or diag[row + col] or anti[row - col + last]:
                    continue
                placed = True
                d = row + 1
                if d == depth:
                    events.append((TASK, len(tasks), col + 1))
                    tasks.append((*placement, col))
                    continue
                top[0] += 1
                if top[0] > cap:
                    events.append((ENTER, 1, d, col + 1, 0, 0, None, 0))
                    raise Truncated
                placement.append(col)
                if row == last:
                    canon = int(unique and is_canonical(placement))
                    events.append((ENTER, 1, d, col + 1, 0, 0, tuple(placement), canon))
                    if p["mode"] == "first":
                        raise Truncated  # the replay stops at this solution
                    events.append((EXIT, 1, 0, 0))
                else:
                    events.append((ENTER, 1, d, col + 1, 0, 0, None, 0))
                    col_used[col] = diag[row + col] = anti[row - col + last] = True
                    child_dead = expand(row + 1)
                    col_used[col] = diag[row + col] = anti[row - col + last] = False
                    events.append((EXIT, 1, n, child_dead))
                placement.pop()
            return int(not placed)

        top = [0]
        cap = max_nodes if max_nodes is not None else NO_CAP
        events.append((ENTER, 0, 0, 0, 0, 0, None, 0))
        try:
            expand(0)
        except Truncated:
            return events, tasks
        events.append((EXIT, 0, n, 0))
        return events, tasks

    def run_subtree(self, p: Mapping[str, Any], path: Sequence[int], max_nodes: int | None,
                    max_seconds: float | None) -> SearchResult:
        if p.get("engine", "python") == "compiled":
            # Imported here so that importing btlab.experiments.split.subtrees does not load
            # numba; whole, even if the task is cancelled meanwhile (btlab.experiments.loading).
            with interrupts_held():
                # heavy: numba loads on import
                from btlab.experiments.compiled import queens_subtree_compiled

            return queens_subtree_compiled(p["n"], path, p["mode"], p["unique"], max_nodes,
                                           max_seconds)
        return search_subtree(p["n"], path, first=p["mode"] == "first", unique=p["unique"],
                              budget=Budget(max_nodes, max_seconds))


#: The N-Queens splitter (``SPLITTERS["n_queens"]``).
QUEENS = QueensSplitter()
