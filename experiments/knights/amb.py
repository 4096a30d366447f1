"""Knight's tour written with McCarthy's Amb operator (the ``amb`` strategy).

The searched function walks a tour from the start square: at each square it
lists and orders the onward squares with the heuristic's orderer, exactly as
:func:`btlab.experiments.knights.solve._search_recursive` does, and chooses the next
square with ``amb(candidates)`` -- an empty list fails the branch; for a
closed tour ``require(last square reaches the start)`` is checked right after
the last choice. :class:`btlab.experiments.amb.Amb` serves the choice points by
re-executing the function from the start, so every restart walks the tour so
far again (and lists its candidates again, which is the operator's cost).

Counters equal ``recursive``'s for every heuristic and tie-break: a placement
is counted only when it is fresh (not a replay, see
:attr:`btlab.experiments.amb.Amb.replaying`), and its candidates' checks only when
they are listed for the first time, through an
:class:`btlab.experiments.amb.TreeLedger`. The ``random`` tie-break draws from one
pseudo-random stream, which a replay must not advance (it would reorder the
candidates under the recorded choices); a heuristic plug-in may do the same
(``board.rng``) or keep state of its own. With a *stateful* orderer (its
``stateful`` attribute), a replay reuses the order recorded when the
placement was fresh instead of asking the orderer again, so the orderer is
called exactly when, and as often as, the recursive search calls it.
Extra counters: ``amb_restarts`` (re-executions) and ``amb_replayed``
(choices replayed).

Each restart costs time in proportion to the tour so far, so the strategy is
meant for small boards (up to about 6 x 6).
"""

from __future__ import annotations

from btlab.experiments.amb import Amb, TreeLedger
from btlab.experiments.core import Budget, SearchResult, Status, StopSearch
from btlab.experiments.knights.ordering import KnightBoard, Orderer, order_clock_mask


def search_amb(board: KnightBoard, start: int, order: Orderer, first: bool, closed: bool,
               budget: Budget, replay_recorded_order: bool = False) -> SearchResult:
    """Search knight's tours from ``start`` with the Amb operator.

    Args:
        board: the board geometry.
        start: the start square index ``row * cols + col``.
        order: the candidate orderer (:func:`btlab.experiments.knights.ordering.make_orderer`).
        first: stop at the first tour (else count them all).
        closed: only tours ending a knight's move from the start count.
        budget: node and time budget (not started yet).
        replay_recorded_order: on replay, reuse each placement's candidate
            order recorded when it was fresh instead of calling ``order``
            again; needed when ``order`` has state (``order.stateful``: the
            ``random`` tie-break, heuristic plug-ins).

    Returns:
        A :class:`SearchResult` with the same counters as the recursive
        strategy and ``extra`` = ``amb_restarts``, ``amb_replayed``.
    """
    size = board.size
    nbrs = board.neighbours
    ledger = TreeLedger(size, budget, order_clock_mask(order))  # as recursive reads it
    recorded: list[list[int]] = [[] for _ in range(size + 1)]  # by depth of the placement

    def tour(amb: Amb) -> tuple[int, ...]:
        visited = bytearray(size)
        visited[start] = 1
        path = [start]
        if not amb.replaying:
            ledger.place(1)
        sq = start
        depth = 1
        while depth < size:
            if amb.replaying:
                if replay_recorded_order:
                    cands = recorded[depth]
                else:
                    cands, _ = order(sq, visited)
            else:
                cands, looked = order(sq, visited)
                ledger.add_checks(looked)
                recorded[depth] = cands
            sq = amb.amb(cands)
            if not amb.replaying:
                ledger.retreat(depth)
                ledger.place(depth + 1)
            visited[sq] = 1
            path.append(sq)
            depth += 1
        amb.require(not closed or start in nbrs[sq])
        return tuple(path)

    amb = Amb()
    found_path: tuple[int, ...] | None = None
    budget.start()
    runs = amb.run_all(tour)
    try:
        for path in runs:
            ledger.solution()
            if found_path is None:
                found_path = path
            if first:
                status = Status.SOLVED
                break
        else:
            ledger.retreat(0)
            status = Status.EXHAUSTED
    except StopSearch as stop:
        status = stop.status
    finally:
        runs.close()
    return SearchResult(status, ledger.nodes, ledger.backtracks, ledger.dead_ends,
                        ledger.checks, ledger.solutions, ledger.max_depth, found_path,
                        {"amb_restarts": amb.restarts, "amb_replayed": amb.replayed})
