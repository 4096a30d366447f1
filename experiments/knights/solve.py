"""Knight's tour by backtracking: the search strategies and their entry point.

A knight's tour on an m x n board (``rows`` x ``cols``) visits every square
exactly once by knight's moves. An *open tour* may end anywhere; a *closed
tour* ends a knight's move from its start. Squares are numbered
``row * cols + col``, 0-based, row 0 at the top.

The search is depth-first backtracking. At each placement the onward squares
are listed (unvisited squares a knight's move away) and ordered by a
*heuristic* (``none``, ``warnsdorff``, ``static_degree`` or a plug-in
callable; the registry :data:`HEURISTICS`) with a *tie-break* (``move_order``,
``random``, ``pohl``, ``roth``; :data:`TIE_BREAKS`); the heuristic only orders
children, the search still backtracks when it gets stuck. The ordering lives in
:mod:`btlab.experiments.knights.ordering`
(see there for the heuristics and tie-breaks), the board in
:mod:`btlab.experiments.knights.board` and the plug-ins in
:mod:`btlab.experiments.knights.user_rules`; this module re-exports them.

Strategies walk the same tree in the same order and return equal counters:
``recursive`` (a Python function calling itself; deep boards run in a thread
with a large stack and a raised recursion limit, see :func:`run_deep`),
``iterative`` (an explicit stack, no recursion limit) and ``amb`` (McCarthy's
Amb operator, by re-execution, for small boards; see
:mod:`btlab.experiments.knights.amb`).

Counting (metrics contract, ``docs/metrics.md``): the start square is
placement 1; ``checks`` counts every onward square looked at, both when the
candidates of a placement are listed and when a heuristic counts a
candidate's unvisited onward squares (``warnsdorff``, a plug-in's
``board.onward``) or sums their degrees (``pohl``). Every placement lists all
its candidates before trying the first.
"""

from __future__ import annotations

import functools
import sys
import threading
from collections.abc import Callable, Sequence

from btlab.experiments.core import Budget, Mode, SearchResult, Status, StopSearch
from btlab.experiments.knights.amb import search_amb
from btlab.experiments.knights.ordering import (
    DEFAULT_MOVE_ORDER,
    HEURISTICS,
    TIE_BREAKS,
    BoardView,
    HeuristicError,
    HeuristicRule,
    KnightBoard,
    Orderer,
    PluginOrderer,
    SplitMix64,
    make_orderer,
    order_clock_mask,
    rule_name,
    rule_uses_rng,
    validate_move_order,
)
from btlab.experiments.registry import WITH_BACKTRACKS, Strategy, strategies

# Public names: this module's searches and, re-exported, the board and ordering
# layer of btlab.experiments.knights.ordering, which re-exports btlab.experiments.knights.board
# and btlab.experiments.knights.user_rules (importing them from here keeps working).
__all__ = [
    "DEEP_BOARD", "DEEP_STACK_BYTES", "DEFAULT_MOVE_ORDER", "HEURISTICS", "STRATEGIES",
    "TIE_BREAKS", "BoardView", "HeuristicError", "HeuristicRule", "KnightBoard", "Orderer",
    "PluginOrderer", "SplitMix64", "make_orderer", "rule_name", "rule_uses_rng", "run_deep",
    "search_subtree", "solve_knights_tour", "validate_move_order",
]


def _search_recursive(board: KnightBoard, start: int, order: Orderer, first: bool,
                      closed: bool, budget: Budget, prefix: Sequence[int] = ()) -> SearchResult:
    size = board.size
    nbrs = board.neighbours
    visited = bytearray(size)
    path: list[int] = list(prefix)
    for sq in prefix:
        visited[sq] = 1
    origin = prefix[0] if prefix else start  # the tour's first square (closed tours)
    cap = budget.node_cap
    bcap = budget.backtrack_cap
    clock_mask = order_clock_mask(order)
    nodes = backtracks = dead_ends = checks = solutions = max_depth = 0
    found_path: tuple[int, ...] | None = None

    def visit(sq: int, depth: int) -> int:
        """Place the knight on ``sq`` (the depth-th placement); return solutions below."""
        nonlocal nodes, backtracks, dead_ends, checks, solutions, max_depth, found_path
        if nodes >= cap:
            raise StopSearch(Status.NODE_LIMIT)
        if not (nodes & clock_mask) and budget.out_of_time():
            raise StopSearch(Status.TIME_LIMIT)
        nodes += 1
        visited[sq] = 1
        path.append(sq)
        if depth > max_depth:  # noqa: PLR1730 - faster than max() per placement
            max_depth = depth
        found = 0
        if depth == size:
            if not closed or origin in nbrs[sq]:
                solutions += 1
                if found_path is None:
                    found_path = tuple(path)
                if first:
                    raise StopSearch(Status.SOLVED)
                found = 1
            else:
                dead_ends += 1
        else:
            cands, looked = order(sq, visited)
            checks += looked
            if cands:
                for nxt in cands:
                    found += visit(nxt, depth + 1)
            else:
                dead_ends += 1
        visited[sq] = 0
        path.pop()
        if not found:
            if backtracks >= bcap:
                raise StopSearch(Status.BACKTRACK_LIMIT)
            backtracks += 1
        return found

    budget.start()
    try:
        visit(start, len(prefix) + 1)
        status = Status.EXHAUSTED
    except StopSearch as stop:
        status = stop.status
    return SearchResult(status, nodes, backtracks, dead_ends, checks, solutions,
                        max_depth, found_path)


def _search_iterative(board: KnightBoard, start: int, order: Orderer, first: bool,
                      closed: bool, budget: Budget, prefix: Sequence[int] = ()) -> SearchResult:
    size = board.size
    nbrs = board.neighbours
    visited = bytearray(size)
    path: list[int] = list(prefix)
    for sq in prefix:
        visited[sq] = 1
    origin = prefix[0] if prefix else start  # the tour's first square (closed tours)
    cap = budget.node_cap
    bcap = budget.backtrack_cap
    clock_mask = order_clock_mask(order)
    nodes = backtracks = dead_ends = checks = solutions = max_depth = 0
    found_path: tuple[int, ...] | None = None
    # One frame per placement on the path, parallel to ``path``: the ordered
    # candidates, the index of the next one to try, solutions found below.
    cand_stack: list[list[int]] = []
    next_stack: list[int] = []
    found_stack: list[int] = []
    status = Status.EXHAUSTED
    budget.start()

    sq = start  # the square to place next
    while True:
        # -- place sq, as visit() does on entry --
        if nodes >= cap:
            status = Status.NODE_LIMIT
            break
        if not (nodes & clock_mask) and budget.out_of_time():
            status = Status.TIME_LIMIT
            break
        nodes += 1
        visited[sq] = 1
        path.append(sq)
        depth = len(path)
        if depth > max_depth:  # noqa: PLR1730 - faster than max() per placement
            max_depth = depth
        leaf_found = -1  # -1: sq has children to try; else solutions found at the leaf
        if depth == size:
            if not closed or origin in nbrs[sq]:
                solutions += 1
                if found_path is None:
                    found_path = tuple(path)
                if first:
                    status = Status.SOLVED
                    break
                leaf_found = 1
            else:
                dead_ends += 1
                leaf_found = 0
        else:
            cands, looked = order(sq, visited)
            checks += looked
            if cands:
                cand_stack.append(cands)
                next_stack.append(0)
                found_stack.append(0)
            else:
                dead_ends += 1
                leaf_found = 0
        if leaf_found >= 0:
            # -- undo the leaf, as visit() does on return --
            visited[sq] = 0
            path.pop()
            if not leaf_found:
                if backtracks >= bcap:
                    status = Status.BACKTRACK_LIMIT
                    break
                backtracks += 1
            if not found_stack:
                break  # the start square itself was a leaf
            found_stack[-1] += leaf_found
        # -- find the next child to place, undoing exhausted frames --
        while cand_stack:
            cands = cand_stack[-1]
            i = next_stack[-1]
            if i < len(cands):
                next_stack[-1] = i + 1
                sq = cands[i]
                break
            cand_stack.pop()
            next_stack.pop()
            found = found_stack.pop()
            done = path.pop()
            visited[done] = 0
            if not found:
                if backtracks >= bcap:
                    status = Status.BACKTRACK_LIMIT
                    break
                backtracks += 1
            if found_stack:
                found_stack[-1] += found
        else:
            break  # the whole tree is walked
        if status is Status.BACKTRACK_LIMIT:
            break
    return SearchResult(status, nodes, backtracks, dead_ends, checks, solutions,
                        max_depth, found_path)


#: Boards above this many squares run the recursive strategy in a big-stack thread.
DEEP_BOARD = 400
#: Stack size of that thread, in bytes.
DEEP_STACK_BYTES = 512 * 1024 * 1024


def run_deep(fn: Callable[[], SearchResult], depth: int) -> SearchResult:
    """Run ``fn`` in a thread with a large stack and a recursion limit above ``depth``.

    CPython limits recursion with ``sys.getrecursionlimit()`` (1000 by default),
    and a C stack overflow kills the process, so a recursive search ``depth``
    placements deep raises the limit to ``depth + 1000`` for its duration and
    runs in a fresh thread whose stack is :data:`DEEP_STACK_BYTES` (512 MiB of
    address space, committed only as used). The limit is process-wide and is
    restored afterwards.

    Raises:
        Whatever ``fn`` raises, re-raised in the calling thread.
    """
    box: dict[str, object] = {}

    def target() -> None:
        try:
            box["result"] = fn()
        except BaseException as exc:  # noqa: BLE001 - re-raised below, in the caller's thread
            box["error"] = exc

    old_limit = sys.getrecursionlimit()
    old_stack = threading.stack_size()
    sys.setrecursionlimit(max(old_limit, depth + 1000))
    try:
        threading.stack_size(DEEP_STACK_BYTES)
        # a daemon: a Ctrl-C while joining ends the run without waiting for the search
        worker = threading.Thread(target=target, name="btlab-deep-search", daemon=True)
        worker.start()
    finally:
        threading.stack_size(old_stack)
    try:
        worker.join()
    finally:
        sys.setrecursionlimit(old_limit)
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["result"]  # type: ignore[return-value]


def search_subtree(board: KnightBoard, order: Orderer, path: Sequence[int], first: bool,
                   closed: bool, budget: Budget, strategy: str = "recursive") -> SearchResult:
    """Search the subtree of one placement, exactly as the whole search would.

    ``path`` is the placement path from the start square down to the subtree's
    root: ``path[:-1]`` are already on the board (the prefix), ``path[-1]`` is
    the placement that roots the subtree, at depth ``d = len(path)``. The
    result is what the sequential ``visit(path[-1], d)`` adds to the counters
    of the whole search: ``nodes`` counts the root placement and everything
    below it, ``backtracks`` includes the root when its subtree holds no
    reported solution, ``checks`` and ``dead_ends`` those of the subtree,
    ``max_depth`` the deepest placement count (>= ``d`` unless stopped before
    the root), ``solution`` the first full tour found below (length
    ``rows * cols``, starting with the prefix). A node budget counts the
    subtree's placements only; a budget stop leaves the placements on the
    current path out of ``backtracks``. With ``path`` of length 1 this is the
    whole search from ``path[0]``. Used by :mod:`btlab.experiments.split.subtrees`.

    Args:
        board, order: as for the whole search (:func:`make_orderer`); an
            orderer whose result depends on earlier calls (the ``random``
            tie-break, a plug-in reading ``board.rng``) does not give the
            sequential order here.
        path: square indices, length >= 1, distinct, each a knight's move from
            the one before.
        first, closed: stop at the first tour; only closed tours count.
        budget: node and time limits of this subtree alone.
        strategy: ``recursive`` or ``iterative`` (the same counters).

    Raises:
        ValueError: an empty path or an unknown strategy.
    """
    if not path:
        raise ValueError("a subtree needs a path of at least one placement")
    prefix = tuple(path[:-1])
    root = path[-1]
    if strategy == "iterative":
        return _search_iterative(board, root, order, first, closed, budget, prefix)
    if strategy != "recursive":
        raise ValueError(f"subtree strategy must be 'recursive' or 'iterative', got {strategy!r}")
    call = functools.partial(_search_recursive, board, root, order, first, closed, budget,
                             prefix)
    return run_deep(call, board.size) if board.size > DEEP_BOARD else call()


def solve_knights_tour(
    rows: int,
    cols: int,
    start: tuple[int, int] = (0, 0),
    *,
    mode: str | Mode = Mode.FIRST,
    strategy: str = "recursive",
    heuristic: str | HeuristicRule = "none",
    tie_break: str = "move_order",
    move_order: Sequence[Sequence[int]] = DEFAULT_MOVE_ORDER,
    closed: bool = False,
    max_nodes: int | None = None,
    max_seconds: float | None = None,
    seed: int = 0,
    max_backtracks: int | None = None,
) -> SearchResult:
    """Search for knight's tours by backtracking.

    Args:
        rows, cols: board size (rows x cols), each >= 1.
        start: the start square (row, col), 0-based.
        mode: ``first`` (stop at the first tour) or ``count`` (all tours from start).
        strategy: ``recursive``, ``iterative`` or ``amb`` (in
            :mod:`btlab.experiments.knights.amb`; small boards only).
        heuristic: a name in :data:`HEURISTICS` (``none``, ``warnsdorff``,
            ``static_degree``), or a plug-in
            callable ``rule(board, square, candidates)`` returning the
            candidates in the order to try them (see
            :class:`~btlab.experiments.knights.user_rules.PluginOrderer`).
        tie_break: ``move_order``, ``random``, ``pohl`` or ``roth``
            (``move_order`` with a plug-in). With ``none``, ``random`` is a
            random move order: every placement's candidates shuffled by
            Fisher-Yates (:func:`btlab.experiments.knights.ordering.shuffle`).
        move_order: the 8 knight moves (d_row, d_col) in the order to try them.
        closed: look for closed tours (ending a knight's move from the start).
        max_nodes: node budget (placements), or None.
        max_seconds: time budget (wall seconds), or None.
        seed: seed of the ``random`` tie-break and of a plug-in's ``board.rng``.
        max_backtracks: backtrack budget (0: greedy), or None; the strategies whose
            entry's ``budgets`` hold ``backtracks`` honour it (``recursive`` and
            ``iterative``, python and compiled).

    Returns:
        A :class:`SearchResult`; its ``solution`` is the first tour found as
        square indices ``row * cols + col`` in visiting order (length
        ``rows * cols``), or None.

    Raises:
        ValueError: a bad board, start square, mode, strategy, heuristic,
            tie-break, move order or budget.
        HeuristicError: a plug-in returned something that is not a
            reordering of its candidates (a ``ValueError``).
        Whatever a plug-in raises, unchanged.
    """
    board = KnightBoard(rows, cols, validate_move_order(move_order))
    start_sq = board.square(*start)
    mode = Mode(mode)
    entry = STRATEGIES.get_or_raise(strategy)
    if max_backtracks is not None and "backtracks" not in entry.budgets:
        able = [s for s, e in STRATEGIES.items() if "backtracks" in e.budgets]
        raise ValueError(f"the {strategy} strategy has no backtrack budget: use one of "
                         f"{', '.join(able)}")
    budget = Budget(max_nodes, max_seconds, max_backtracks)
    budget.start()  # the board's tables count: building them for 4M squares takes seconds
    if not board.build_tables(budget.out_of_time, degrees=heuristic != "none"):
        return SearchResult(Status.TIME_LIMIT, 0, 0, 0, 0, 0, 0)
    order = make_orderer(board, heuristic, tie_break, seed)
    return entry.solve(board, start_sq, order, mode is Mode.FIRST, closed, budget)


def _recursive(board: KnightBoard, start: int, order: Orderer, first: bool, closed: bool,
               budget: Budget) -> SearchResult:
    call = functools.partial(_search_recursive, board, start, order, first, closed, budget)
    return run_deep(call, board.size) if board.size > DEEP_BOARD else call()


def _amb(board: KnightBoard, start: int, order: Orderer, first: bool, closed: bool,
         budget: Budget) -> SearchResult:
    return search_amb(board, start, order, first, closed, budget,
                      getattr(order, "stateful", False))


#: The knight's-tour strategies. Each ``solve`` takes ``(board, start, order,
#: first, closed, budget)``: a :class:`KnightBoard`, the start square index, an
#: :data:`Orderer` (:func:`make_orderer`), stop at the first tour, closed tours
#: only, a :class:`~btlab.experiments.core.Budget` (not started) -- and returns a
#: :class:`~btlab.experiments.core.SearchResult`. All three walk the same tree.
STRATEGIES = strategies(
    "knight's tour strategy",
    Strategy("recursive", _recursive, "depth-first backtracking, a Python function calling "
             "itself (big boards in a big-stack thread)",
             engines=("python",), max_size=250_000, splittable=True, tree="dfs",
             budgets=WITH_BACKTRACKS),
    Strategy("iterative", _search_iterative, "the same search with an explicit stack (no "
             "recursion limit); the compiled engine runs this one",
             engines=("python", "compiled"), max_size=4_000_000, splittable=True, tree="dfs",
             budgets=WITH_BACKTRACKS),
    Strategy("amb", _amb, "McCarthy's Amb operator by re-execution: a choice point per "
             "placement (quadratic, small boards)",
             source="J. McCarthy, \"A basis for a mathematical theory of computation\", 1963",
             engines=("python",), max_size=64, splittable=True, tree="dfs"),
)

