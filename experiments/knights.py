"""Knight's tour by backtracking: boards, move orders, heuristics, strategies.

A knight's tour on an m x n board (``rows`` x ``cols``) visits every square
exactly once by knight's moves. An *open tour* may end anywhere; a *closed
tour* ends a knight's move from its start. Squares are numbered
``row * cols + col``, 0-based, row 0 at the top.

The search is depth-first backtracking. At each placement the onward squares
are listed (unvisited squares a knight's move away) and ordered by a
*heuristic*; the heuristic only orders children, the search still backtracks
when it gets stuck:

* ``none``: the move order, by default :data:`DEFAULT_MOVE_ORDER`.
* ``warnsdorff``: fewest unvisited onward squares first (H. C. Warnsdorff,
  *Des Rösselsprunges einfachste und allgemeinste Lösung*, Schmalkalden, 1823).
* ``static_degree``: fewest onward squares on the empty board, ignoring what is
  visited -- a common mistake that looks like Warnsdorff's rule.

Ties between candidates of equal degree go by a *tie-break*:

* ``move_order``: stable, the order of the moves (the default).
* ``random``: a seeded pseudo-random order: each tied candidate gets the next
  value of a SplitMix64 stream (:class:`SplitMix64`), smallest first.
* ``pohl``: smaller sum of the candidate's own onward degrees first, the degrees
  taken as if the knight stood on the candidate (after I. Pohl, "A method for
  finding Hamilton paths and knight's tours", CACM 10(7), 1967).
* ``roth``: farthest from the board centre first, Euclidean distance (after
  A. Roth's tie-break, as described by Squirrel and Cull, "A Warnsdorff-rule
  algorithm for knight's tours on square chessboards", 1996).

Whatever is still tied after a tie-break goes by move order.

Strategies walk the same tree in the same order and return equal counters:
``recursive`` (a Python function calling itself; deep boards run in a thread
with a large stack and a raised recursion limit, see :func:`run_deep`),
``iterative`` (an explicit stack, no recursion limit) and ``amb`` (McCarthy's
Amb operator, by re-execution, for small boards; see
:mod:`experiments.knights_amb`).

Counting (metrics contract, :mod:`experiments.core`): the start square is
placement 1; ``checks`` counts every onward square looked at, both when the
candidates of a placement are listed and when a heuristic counts a
candidate's unvisited onward squares (``warnsdorff``) or sums their degrees
(``pohl``). Every placement lists all its candidates before trying the first.
"""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass
from functools import cached_property
from typing import Callable, Sequence

from .core import Budget, Mode, SearchResult, Status, StopSearch
from .registry import Strategy, strategies

#: The default move order as (d_row, d_col): clockwise from "two left, one up".
DEFAULT_MOVE_ORDER: tuple[tuple[int, int], ...] = (
    (-1, -2), (-2, -1), (-2, +1), (-1, +2), (+1, +2), (+2, +1), (+2, -1), (+1, -2),
)

HEURISTICS = ("none", "warnsdorff", "static_degree")
TIE_BREAKS = ("move_order", "random", "pohl", "roth")

#: An ordering function: (square, visited) -> (candidates in the order to try, checks made).
Orderer = Callable[[int, bytearray], "tuple[list[int], int]"]


class SplitMix64:
    """The SplitMix64 generator (G. Steele, D. Lea, C. Flood, "Fast splittable
    pseudorandom number generators", OOPSLA 2014), 64-bit outputs.

    Chosen over :mod:`random` because its few integer operations are easy to
    reproduce exactly in a compiled kernel, so both engines draw the same ties.
    """

    __slots__ = ("state",)
    MASK = (1 << 64) - 1

    def __init__(self, seed: int):
        self.state = seed & self.MASK

    def next(self) -> int:
        """Return the next 64-bit unsigned value."""
        self.state = z = (self.state + 0x9E3779B97F4A7C15) & self.MASK
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & self.MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & self.MASK
        return z ^ (z >> 31)


def validate_move_order(move_order: Sequence[Sequence[int]]) -> tuple[tuple[int, int], ...]:
    """Return ``move_order`` as a tuple of pairs after checking it.

    Args:
        move_order: the 8 knight moves as (d_row, d_col) pairs, each exactly once.

    Raises:
        ValueError: not a permutation of the 8 knight moves.
    """
    moves = tuple((int(dr), int(dc)) for dr, dc in move_order)
    if sorted(moves) != sorted(DEFAULT_MOVE_ORDER):
        raise ValueError(
            f"move order must list each of the 8 knight moves {list(DEFAULT_MOVE_ORDER)} "
            f"exactly once, got {[list(m) for m in moves]}"
        )
    return moves


@dataclass(frozen=True)
class KnightBoard:
    """Geometry of an m x n board for a given move order.

    Attributes:
        rows, cols: board size, both >= 1.
        move_order: the 8 moves as (d_row, d_col), in the order they are tried.
    """

    rows: int
    cols: int
    move_order: tuple[tuple[int, int], ...] = DEFAULT_MOVE_ORDER

    def __post_init__(self) -> None:
        if self.rows < 1 or self.cols < 1:
            raise ValueError(f"board must be at least 1 x 1, got {self.rows} x {self.cols}")

    @property
    def size(self) -> int:
        """Number of squares, ``rows * cols``."""
        return self.rows * self.cols

    def square(self, row: int, col: int) -> int:
        """Index ``row * cols + col`` of a square. Raises ValueError off the board."""
        if not (0 <= row < self.rows and 0 <= col < self.cols):
            raise ValueError(
                f"square ({row}, {col}) is off the {self.rows} x {self.cols} board "
                f"(rows 0..{self.rows - 1}, cols 0..{self.cols - 1})"
            )
        return row * self.cols + col

    @cached_property
    def neighbours(self) -> tuple[tuple[int, ...], ...]:
        """For each square, the on-board squares a knight's move away, in move order."""
        rows, cols = self.rows, self.cols
        table = []
        for r in range(rows):
            for c in range(cols):
                table.append(tuple(
                    (r + dr) * cols + (c + dc)
                    for dr, dc in self.move_order
                    if 0 <= r + dr < rows and 0 <= c + dc < cols
                ))
        return tuple(table)

    @cached_property
    def static_degree(self) -> tuple[int, ...]:
        """For each square, its number of knight's-move neighbours on the empty board."""
        return tuple(len(n) for n in self.neighbours)

    @cached_property
    def centre_distance2(self) -> tuple[int, ...]:
        """For each square, 4 x its squared Euclidean distance to the board centre (exact ints)."""
        rows, cols = self.rows, self.cols
        return tuple(
            (2 * r - (rows - 1)) ** 2 + (2 * c - (cols - 1)) ** 2
            for r in range(rows) for c in range(cols)
        )


def make_orderer(board: KnightBoard, heuristic: str, tie_break: str = "move_order",
                 seed: int = 0) -> Orderer:
    """Build the child-ordering function for a heuristic and tie-break.

    Args:
        board: the board geometry.
        heuristic: one of :data:`HEURISTICS`.
        tie_break: one of :data:`TIE_BREAKS`; has no effect with ``none``.
        seed: seed of the ``random`` tie-break.

    Returns:
        A function ``(square, visited) -> (candidates, checks)``: the unvisited
        onward squares of ``square`` in the order to try them, and the number of
        squares looked at to list and order them.

    Raises:
        ValueError: unknown heuristic or tie-break.
    """
    if heuristic not in HEURISTICS:
        raise ValueError(f"unknown heuristic {heuristic!r}; expected one of {HEURISTICS}")
    if tie_break not in TIE_BREAKS:
        raise ValueError(f"unknown tie-break {tie_break!r}; expected one of {TIE_BREAKS}")
    nbrs = board.neighbours

    if heuristic == "none":
        def order_none(sq: int, visited: bytearray) -> tuple[list[int], int]:
            around = nbrs[sq]
            return [c for c in around if not visited[c]], len(around)
        return order_none

    static = board.static_degree
    dist2 = board.centre_distance2
    rng = SplitMix64(seed)
    dynamic = heuristic == "warnsdorff"

    def order_degree(sq: int, visited: bytearray) -> tuple[list[int], int]:
        around = nbrs[sq]
        checks = len(around)
        cands = [c for c in around if not visited[c]]
        if len(cands) < 2:
            # Nothing to order; Warnsdorff would still look at the lone
            # candidate's onward squares, and counts them.
            if dynamic and cands:
                checks += len(nbrs[cands[0]])
            return cands, checks
        keys = []
        for i, c in enumerate(cands):
            if dynamic:
                onward = nbrs[c]
                checks += len(onward)
                deg = 0
                for x in onward:
                    if not visited[x]:
                        deg += 1
            else:
                deg = static[c]
            if tie_break == "move_order":
                tie = 0
            elif tie_break == "random":
                tie = rng.next()
            elif tie_break == "roth":
                tie = -dist2[c]
            else:  # pohl: sum of the onward degrees as if the knight stood on c
                tie = 0
                if dynamic:
                    visited[c] = 1
                    for x in nbrs[c]:
                        if not visited[x]:
                            onward_x = nbrs[x]
                            checks += len(onward_x)
                            for y in onward_x:
                                if not visited[y]:
                                    tie += 1
                    visited[c] = 0
                else:
                    for x in nbrs[c]:
                        tie += static[x]
            keys.append((deg, tie, i, c))
        keys.sort()
        return [k[3] for k in keys], checks

    order_degree.stateful = tie_break == "random"  # type: ignore[attr-defined]
    return order_degree


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
    clock_mask = Budget.CLOCK_EVERY - 1
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
        if depth > max_depth:
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
    clock_mask = Budget.CLOCK_EVERY - 1
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
        if depth > max_depth:
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
                backtracks += 1
            if found_stack:
                found_stack[-1] += found
        else:
            break  # the whole tree is walked
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
        except BaseException as exc:  # re-raised below, in the caller's thread
            box["error"] = exc

    old_limit = sys.getrecursionlimit()
    old_stack = threading.stack_size()
    sys.setrecursionlimit(max(old_limit, depth + 1000))
    try:
        threading.stack_size(DEEP_STACK_BYTES)
        worker = threading.Thread(target=target, name="btlab-deep-search")
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
    whole search from ``path[0]``. Used by :mod:`experiments.split`.

    Args:
        board, order: as for the whole search (:func:`make_orderer`); an
            orderer whose result depends on earlier calls (the ``random``
            tie-break) does not give the sequential order here.
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
    call = lambda: _search_recursive(board, root, order, first, closed, budget, prefix)  # noqa: E731
    return run_deep(call, board.size) if board.size > DEEP_BOARD else call()


def solve_knights_tour(
    rows: int,
    cols: int,
    start: tuple[int, int] = (0, 0),
    *,
    mode: str | Mode = Mode.FIRST,
    strategy: str = "recursive",
    heuristic: str = "none",
    tie_break: str = "move_order",
    move_order: Sequence[Sequence[int]] = DEFAULT_MOVE_ORDER,
    closed: bool = False,
    max_nodes: int | None = None,
    max_seconds: float | None = None,
    seed: int = 0,
) -> SearchResult:
    """Search for knight's tours by backtracking.

    Args:
        rows, cols: board size (rows x cols), each >= 1.
        start: the start square (row, col), 0-based.
        mode: ``first`` (stop at the first tour) or ``count`` (all tours from start).
        strategy: ``recursive``, ``iterative`` or ``amb`` (in
            :mod:`experiments.knights_amb`; small boards only).
        heuristic: ``none``, ``warnsdorff`` or ``static_degree``.
        tie_break: ``move_order``, ``random``, ``pohl`` or ``roth``.
        move_order: the 8 knight moves (d_row, d_col) in the order to try them.
        closed: look for closed tours (ending a knight's move from the start).
        max_nodes: node budget (placements), or None.
        max_seconds: time budget (wall seconds), or None.
        seed: seed of the ``random`` tie-break.

    Returns:
        A :class:`SearchResult`; its ``solution`` is the first tour found as
        square indices ``row * cols + col`` in visiting order (length
        ``rows * cols``), or None.

    Raises:
        ValueError: a bad board, start square, mode, strategy, heuristic,
            tie-break, move order or budget.
    """
    board = KnightBoard(rows, cols, validate_move_order(move_order))
    start_sq = board.square(*start)
    mode = Mode(mode)
    entry = STRATEGIES.get_or_raise(strategy)
    order = make_orderer(board, heuristic, tie_break, seed)
    budget = Budget(max_nodes, max_seconds)
    return entry.solve(board, start_sq, order, mode is Mode.FIRST, closed, budget)


def _recursive(board: KnightBoard, start: int, order: Orderer, first: bool, closed: bool,
               budget: Budget) -> SearchResult:
    call = lambda: _search_recursive(board, start, order, first, closed, budget)  # noqa: E731
    return run_deep(call, board.size) if board.size > DEEP_BOARD else call()


def _amb(board: KnightBoard, start: int, order: Orderer, first: bool, closed: bool,
         budget: Budget) -> SearchResult:
    from .knights_amb import search_amb  # imported here: it imports this module
    return search_amb(board, start, order, first, closed, budget,
                      getattr(order, "stateful", False))


#: The knight's-tour strategies. Each ``solve`` takes ``(board, start, order,
#: first, closed, budget)``: a :class:`KnightBoard`, the start square index, an
#: :data:`Orderer` (:func:`make_orderer`), stop at the first tour, closed tours
#: only, a :class:`~experiments.core.Budget` (not started) -- and returns a
#: :class:`~experiments.core.SearchResult`. All three walk the same tree.
STRATEGIES = strategies(
    "knight's tour strategy",
    Strategy("recursive", _recursive, "depth-first backtracking, a Python function calling "
             "itself (big boards in a big-stack thread)",
             engines=("python",), max_size=250_000, splittable=True, tree="dfs"),
    Strategy("iterative", _search_iterative, "the same search with an explicit stack (no "
             "recursion limit); the compiled engine runs this one",
             engines=("python", "compiled"), max_size=4_000_000, splittable=True, tree="dfs"),
    Strategy("amb", _amb, "McCarthy's Amb operator by re-execution: a choice point per "
             "placement (quadratic, small boards)",
             source="J. McCarthy, \"A basis for a mathematical theory of computation\", 1963",
             engines=("python",), max_size=64, splittable=True, tree="dfs"),
)


def rule_uses_rng(rule) -> bool:  # placeholder until plug-in rules land
    return "rng" in getattr(getattr(rule, "__code__", None), "co_names", ())
