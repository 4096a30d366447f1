"""The knight's-tour board and the ordering of a placement's candidates.

The layer under the searches of :mod:`experiments.knights` and
:mod:`experiments.knights_amb` (both import it; it imports neither). Squares
are numbered ``row * cols + col``, 0-based, row 0 at the top.

At each placement the onward squares (unvisited squares a knight's move
away) are listed in the trial's move order and ordered by a *heuristic*; the
heuristic only orders children, the search still backtracks when it gets
stuck:

* ``none``: the move order, by default :data:`DEFAULT_MOVE_ORDER`.
* ``warnsdorff``: fewest unvisited onward squares first (H. C. Warnsdorff,
  *Des Rösselsprunges einfachste und allgemeinste Lösung*, Schmalkalden, 1823).
* ``static_degree``: fewest onward squares on the empty board, ignoring what is
  visited -- a common mistake that looks like Warnsdorff's rule.
* a *plug-in*: any Python callable ``rule(board, square, candidates)`` that
  returns the candidates in the order to try them (:class:`PluginOrderer`).

Ties between candidates of equal degree go by a *tie-break* (built-in
heuristics only; a plug-in orders its candidates itself):

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

``checks`` (metrics contract, ``docs/metrics.md``) counts every onward
square looked at: listing a placement's candidates costs the number of
on-board knight's-move neighbours of its square; ``warnsdorff`` adds, for each
candidate, the neighbours of that candidate (also when it is the only one);
``pohl`` with ``warnsdorff`` adds the neighbours it tests one level further; a
plug-in adds, for each :meth:`BoardView.onward` call, the neighbours of the
square asked about.
"""

from __future__ import annotations

import functools
import operator
import random
import types
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

#: The default move order as (d_row, d_col): clockwise from "two left, one up".
DEFAULT_MOVE_ORDER: tuple[tuple[int, int], ...] = (
    (-1, -2), (-2, -1), (-2, +1), (-1, +2), (+1, +2), (+2, +1), (+2, -1), (+1, -2),
)

#: The built-in heuristics (a plug-in is a callable instead, see :class:`PluginOrderer`).
HEURISTICS = ("none", "warnsdorff", "static_degree")
#: The tie-breaks of the built-in heuristics.
TIE_BREAKS = ("move_order", "random", "pohl", "roth")

#: An ordering function: (square, visited) -> (candidates in the order to try, checks made).
#: Every orderer :func:`make_orderer` returns also has a bool attribute ``stateful``:
#: True when its order may depend on earlier calls (the ``random`` tie-break, plug-ins).
Orderer = Callable[[int, bytearray], "tuple[list[int], int]"]

#: A heuristic plug-in: ``rule(board, square, candidates) -> candidates reordered``
#: (see :class:`PluginOrderer`).
HeuristicRule = Callable[["BoardView", "tuple[int, int]", "list[tuple[int, int]]"],
                         "Iterable[Sequence[int]]"]


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
    def coords(self) -> tuple[tuple[int, int], ...]:
        """For each square index, its ``(row, col)``."""
        return tuple((r, c) for r in range(self.rows) for c in range(self.cols))

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


# --------------------------------------------------------------------------- plug-ins


class HeuristicError(ValueError):
    """A heuristic plug-in returned something that is not a reordering of its candidates.

    The message names the rule (``module:qualname``), the square ``(row, col)``
    it ordered, what it returned (its ``repr``, cut to about 200 characters),
    what is wrong with it and the candidates it was given.
    """


#: Longest ``repr`` of a wrong return value quoted in a :class:`HeuristicError`.
_REPR_MAX = 200


def _unwrap(rule: Callable[..., object]) -> Callable[..., object]:
    """The function behind ``functools.partial`` objects and bound methods."""
    while isinstance(rule, functools.partial):
        rule = rule.func
    return getattr(rule, "__func__", rule)


def rule_name(rule: Callable[..., object]) -> str:
    """``module:qualname`` of a heuristic plug-in, as error messages name it.

    ``functools.partial`` objects and bound methods are named after the
    function they call; a callable object after its class.
    """
    fn = _unwrap(rule)
    qualname = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    module = getattr(fn, "__module__", None) or type(fn).__module__
    return f"{module}:{qualname}"


def _code_uses_rng(code: types.CodeType) -> bool:
    if "rng" in code.co_names:
        return True
    for const in code.co_consts:
        if const == "rng" or (isinstance(const, types.CodeType) and _code_uses_rng(const)):
            return True
    return False


def rule_uses_rng(rule: Callable[..., object]) -> bool:
    """Whether a heuristic plug-in may read ``board.rng``, judged from its bytecode.

    True when the name ``rng`` is among the names the rule's code uses
    (``co_names``: attribute and global names), or the string ``"rng"`` among
    its constants (``getattr(board, "rng")``), in its own code object or any
    nested one (lambdas, comprehensions, inner functions), or in a function it
    wraps (``functools.wraps``, ``functools.partial``, bound methods, the
    ``__call__`` of a callable object). A rule whose code cannot be inspected
    (a built-in) counts as using it. Helpers the rule calls are not followed:
    :attr:`PluginOrderer.uses_rng` tells, after a search, whether the rng was
    actually read.

    Args:
        rule: the plug-in callable.

    Returns:
        True if the rule may use ``board.rng`` (so a split search must refuse
        it), False if its code never names it.
    """
    fn: Callable[..., object] | None = _unwrap(rule)
    codes: list[types.CodeType] = []
    seen: set[int] = set()
    while fn is not None and id(fn) not in seen:
        seen.add(id(fn))
        code = getattr(fn, "__code__", None)
        if code is None:  # a callable object: its class's __call__
            code = getattr(_unwrap(type(fn).__call__), "__code__", None)
        if code is None:
            return True
        codes.append(code)
        wrapped = getattr(fn, "__wrapped__", None)
        fn = _unwrap(wrapped) if wrapped is not None else None
    return any(_code_uses_rng(code) for code in codes)


class BoardView:
    """The read-only board a heuristic plug-in sees (one per :class:`PluginOrderer`).

    Squares are ``(row, col)`` pairs, 0-based. The square the knight stands on
    is already visited when the rule is called.

    Attributes:
        rows, cols: board size (read-only).
    """

    __slots__ = ("_checks", "_cols", "_nbrs", "_rng", "_rows", "_seed", "_visited")

    def __init__(self, board: KnightBoard, seed: int):
        self._rows = board.rows
        self._cols = board.cols
        self._nbrs = board.neighbours
        self._visited = bytearray(board.size)  # replaced by the search's at each call
        self._checks = 0                       # onward squares tested in the current call
        self._seed = seed
        self._rng: random.Random | None = None

    @property
    def rows(self) -> int:
        """Number of rows."""
        return self._rows

    @property
    def cols(self) -> int:
        """Number of columns."""
        return self._cols

    def _index(self, row: int, col: int) -> int:
        if not (0 <= row < self._rows and 0 <= col < self._cols):
            raise ValueError(
                f"square ({row}, {col}) is off the {self._rows} x {self._cols} board "
                f"(rows 0..{self._rows - 1}, cols 0..{self._cols - 1})")
        return row * self._cols + col

    def visited(self, row: int, col: int) -> bool:
        """Whether square ``(row, col)`` is on the knight's path so far (free: no checks).

        Raises:
            ValueError: the square is off the board.
        """
        return bool(self._visited[self._index(row, col)])

    def onward(self, row: int, col: int) -> int:
        """The number of unvisited squares a knight's move from ``(row, col)``.

        Costs as many ``checks`` as the square has on-board knight's-move
        neighbours (what ``warnsdorff`` pays per candidate).

        Raises:
            ValueError: the square is off the board.
        """
        around = self._nbrs[self._index(row, col)]
        self._checks += len(around)
        visited = self._visited
        count = 0
        for x in around:
            if not visited[x]:
                count += 1
        return count

    @property
    def rng(self) -> random.Random:
        """A :class:`random.Random` seeded with the trial's seed, one stream per search.

        Reading it marks the orderer as using randomness
        (:attr:`PluginOrderer.uses_rng`), which a split search refuses.
        """
        rng = self._rng
        if rng is None:
            rng = self._rng = random.Random(self._seed)
        return rng


def _as_pair(item: object) -> tuple[int, int] | None:
    """``item`` as a ``(row, col)`` tuple if it is a tuple or list of 2 ints, else None."""
    if not isinstance(item, (tuple, list)) or len(item) != 2:
        return None
    if isinstance(item[0], bool) or isinstance(item[1], bool):
        return None
    try:
        return operator.index(item[0]), operator.index(item[1])
    except TypeError:
        return None


class PluginOrderer:
    """An :data:`Orderer` that asks a user rule for the order of the candidates.

    At every placement with at least one candidate the rule is called as
    ``rule(board, square, candidates)``: ``board`` the :class:`BoardView`
    (the same object at every call), ``square`` the knight's ``(row, col)``,
    ``candidates`` the unvisited on-board squares a knight's move away as
    ``(row, col)`` tuples in the move order (a fresh list each call). It
    returns the candidates in the order to try them: any iterable of tuples
    or lists of 2 ints that is a permutation of ``candidates``. A placement
    without candidates does not call the rule.

    Calling the orderer returns ``(candidates as square indices, checks)``;
    ``checks`` is the number of the square's on-board neighbours plus the
    squares tested by the rule's :meth:`BoardView.onward` calls.

    Attributes:
        rule: the plug-in callable.
        name: its ``module:qualname``.
        board: the :class:`BoardView` passed to the rule.
        stateful: always True: the order may depend on earlier calls (through
            ``board.rng`` or state of the rule's own), so the ``amb`` strategy
            replays recorded orders instead of asking again.

    Raises (when called):
        HeuristicError: the rule returned something that is not a reordering
            of its candidates.
        Whatever the rule raises, unchanged.
    """

    __slots__ = ("_coords", "_nbrs", "board", "name", "rule")

    stateful = True
    rule_uses_rng = staticmethod(rule_uses_rng)

    def __init__(self, board: KnightBoard, rule: HeuristicRule, seed: int = 0):
        self.rule = rule
        self.name = rule_name(rule)
        self.board = BoardView(board, seed)
        self._nbrs = board.neighbours
        self._coords = board.coords

    @property
    def uses_rng(self) -> bool:
        """Whether the rule has read ``board.rng`` so far."""
        return self.board._rng is not None

    def __call__(self, sq: int, visited: bytearray) -> tuple[list[int], int]:
        around = self._nbrs[sq]
        cands = [c for c in around if not visited[c]]
        if not cands:
            return cands, len(around)
        view = self.board
        view._visited = visited
        view._checks = 0
        coords = self._coords
        result = self.rule(view, coords[sq], [coords[c] for c in cands])
        left = {coords[c]: c for c in cands}
        ordered = []
        try:
            items = iter(result)
        except TypeError:
            raise self._error(sq, cands, result, "not an iterable of squares") from None
        for item in items:
            key: tuple[int, int] | None
            if (type(item) is tuple and len(item) == 2
                    and type(item[0]) is int and type(item[1]) is int):
                key = item
            else:
                key = _as_pair(item)
                if key is None:
                    raise self._error(sq, cands, result,
                                      f"item {item!r} is not a (row, col) pair of ints")
            c = left.pop(key, None)
            if c is None:
                given = {coords[x] for x in cands}
                why = "repeats" if key in given else "is not one of the candidates"
                raise self._error(sq, cands, result, f"{key} {why}")
            ordered.append(c)
        if left:
            raise self._error(sq, cands, result, f"misses {', '.join(map(str, left))}")
        return ordered, len(around) + view._checks

    def _error(self, sq: int, cands: list[int], result: object, why: str) -> HeuristicError:
        shown = repr(result)
        if len(shown) > _REPR_MAX:
            shown = shown[:_REPR_MAX - 3] + "..."
        row, col = self._coords[sq]
        return HeuristicError(
            f"heuristic plug-in {self.name} at square ({row}, {col}) returned {shown}: {why}; "
            f"it must return a reordering of its candidates "
            f"{[self._coords[c] for c in cands]}")


def make_orderer(board: KnightBoard, heuristic: str | HeuristicRule,
                 tie_break: str = "move_order", seed: int = 0) -> Orderer:
    """Build the child-ordering function for a heuristic and tie-break.

    Args:
        board: the board geometry.
        heuristic: one of :data:`HEURISTICS`, or a plug-in: a callable
            ``rule(board, square, candidates) -> candidates reordered``
            (:class:`PluginOrderer`).
        tie_break: one of :data:`TIE_BREAKS`; has no effect with ``none``;
            must be ``move_order`` with a plug-in.
        seed: seed of the ``random`` tie-break, and of a plug-in's ``board.rng``.

    Returns:
        A function ``(square, visited) -> (candidates, checks)``: the unvisited
        onward squares of ``square`` (indices) in the order to try them, and
        the number of squares looked at to list and order them. ``visited``
        is the search's ``bytearray`` of ``rows * cols`` flags, ``square``
        already set. The function has a bool attribute ``stateful`` (True:
        its order may depend on earlier calls); a plug-in's is a
        :class:`PluginOrderer`.

    Raises:
        ValueError: unknown heuristic or tie-break, or a tie-break other than
            ``move_order`` with a plug-in.
    """
    if callable(heuristic):
        if tie_break != "move_order":
            raise ValueError(
                f"tie-break {tie_break!r} is not used with a heuristic plug-in "
                f"({rule_name(heuristic)}), which orders its candidates itself; "
                "use tie_break 'move_order'")
        return PluginOrderer(board, heuristic, seed)
    if heuristic not in HEURISTICS:
        raise ValueError(f"unknown heuristic {heuristic!r}; expected one of {HEURISTICS} "
                         "or a callable plug-in")
    if tie_break not in TIE_BREAKS:
        raise ValueError(f"unknown tie-break {tie_break!r}; expected one of {TIE_BREAKS}")
    nbrs = board.neighbours

    if heuristic == "none":
        def order_none(sq: int, visited: bytearray) -> tuple[list[int], int]:
            around = nbrs[sq]
            return [c for c in around if not visited[c]], len(around)
        order_none.stateful = False  # type: ignore[attr-defined]
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
