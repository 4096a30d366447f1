"""Heuristic plug-ins of the knight's tour: a user rule orders a placement's candidates.

A plug-in is any Python callable ``rule(board, square, candidates)`` that
returns the candidates in the order to try them (:data:`HeuristicRule`).
:class:`PluginOrderer` turns it into an orderer of the searches, checks what
the rule returns (:class:`HeuristicError` otherwise) and counts the squares
the rule looks at through its read-only :class:`BoardView`;
:func:`rule_uses_rng` tells from a rule's bytecode whether it may draw from
``board.rng`` (which a split search refuses); :func:`rule_name` names a rule
in messages.

:func:`btlab.experiments.knights.ordering.make_orderer` dispatches a callable heuristic
here (knights_board imports this module, not the reverse); every public name
here is also importable from :mod:`btlab.experiments.knights.ordering` and
:mod:`btlab.experiments.knights.solve`.

``checks`` (metrics contract, ``docs/metrics.md``): listing a placement's
candidates costs the number of on-board knight's-move neighbours of its
square, and each :meth:`BoardView.onward` call adds the neighbours of the
square asked about.
"""

from __future__ import annotations

import functools
import operator
import random
import types
from collections.abc import Callable, Iterable, Sequence

from btlab.experiments.knights.board import KnightBoard

#: A heuristic plug-in: ``rule(board, square, candidates) -> candidates reordered``
#: (see :class:`PluginOrderer`).
HeuristicRule = Callable[["BoardView", "tuple[int, int]", "list[tuple[int, int]]"],
                         "Iterable[Sequence[int]]"]


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

    The view holds nothing of the search's: its squares are a ``bytearray`` of
    its own, which the orderer keeps equal to the search's as the search goes
    (one square set, and those the search has undone cleared, per call: no copy
    of the board per call), so a rule that writes into whatever it can reach
    from the view changes what the view tells it, never the search. Its
    counters (the squares :meth:`onward` looked at, whether :attr:`rng` was
    read) live in closures, not attributes, and no attribute of the view can be
    set or deleted.

    Attributes:
        rows, cols: board size (read-only).
        visited: ``visited(row, col) -> bool``: whether square ``(row, col)`` is on
            the knight's path so far (free: no checks). Raises ``ValueError`` for a
            square off the board.
        onward: ``onward(row, col) -> int``: the number of unvisited squares a
            knight's move from ``(row, col)``; costs as many ``checks`` as the
            square has on-board knight's-move neighbours (what ``warnsdorff`` pays
            per candidate). Raises ``ValueError`` for a square off the board.
    """

    __slots__ = ("_rng_of", "cols", "onward", "rows", "visited")

    rows: int
    cols: int
    visited: Callable[[int, int], bool]
    onward: Callable[[int, int], int]
    _rng_of: Callable[[], random.Random]

    def __init__(self, rows: int, cols: int, visited: Callable[[int, int], bool],
                 onward: Callable[[int, int], int], rng_of: Callable[[], random.Random]):
        for name, value in (("rows", rows), ("cols", cols), ("visited", visited),
                            ("onward", onward), ("_rng_of", rng_of)):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"the board view is read-only: {name} cannot be set")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"the board view is read-only: {name} cannot be deleted")

    @property
    def rng(self) -> random.Random:
        """A :class:`random.Random` seeded with the trial's seed, one stream per search.

        Reading it marks the orderer as using randomness
        (:attr:`PluginOrderer.uses_rng`), which a split search refuses.
        """
        return self._rng_of()


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


def _view_functions(board: KnightBoard, squares: bytearray, seed: int
                    ) -> tuple[BoardView, Callable[[], int], Callable[[], bool]]:
    """A :class:`BoardView` reading ``squares``; ``spent()``, the checks its ``onward``
    has cost so far; ``drew()``, whether its ``rng`` was read. The counts live in the
    closures' cells, which nothing the rule is handed holds as an attribute (the view
    holds no object of the orderer's or the search's)."""
    rows, cols, nbrs = board.rows, board.cols, board.neighbours  # a tuple of tuples
    checks = 0
    rng: random.Random | None = None

    def index(row: int, col: int) -> int:
        if not (0 <= row < rows and 0 <= col < cols):
            raise ValueError(
                f"square ({row}, {col}) is off the {rows} x {cols} board "
                f"(rows 0..{rows - 1}, cols 0..{cols - 1})")
        return row * cols + col

    def visited(row: int, col: int) -> bool:
        return bool(squares[index(row, col)])

    def onward(row: int, col: int) -> int:
        nonlocal checks
        around = nbrs[index(row, col)]
        checks += len(around)
        count = 0
        for x in around:
            if not squares[x]:
                count += 1
        return count

    def rng_of() -> random.Random:
        nonlocal rng
        if rng is None:
            rng = random.Random(seed)
        return rng

    def spent() -> int:
        return checks

    def drew() -> bool:
        return rng is not None

    return BoardView(rows, cols, visited, onward, rng_of), spent, drew


class PluginOrderer:
    """An orderer (:data:`~btlab.experiments.knights.ordering.Orderer`) asking a user rule.

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

    __slots__ = ("_coords", "_drew", "_nbrs", "_path", "_source", "_spent", "_squares",
                 "board", "name", "rule")

    stateful = True
    rule_uses_rng = staticmethod(rule_uses_rng)

    def __init__(self, board: KnightBoard, rule: HeuristicRule, seed: int = 0):
        self.rule = rule
        self.name = rule_name(rule)
        self._nbrs = board.neighbours
        self._coords = board.coords
        self._squares = bytearray(board.size)     # the view's copy of the search's squares
        self._source: bytearray | None = None     # the search's array it copies
        self._path: list[int] = []                # the squares set in it, in path order
        self.board, self._spent, self._drew = _view_functions(board, self._squares, seed)

    @property
    def uses_rng(self) -> bool:
        """Whether the rule has read ``board.rng`` so far."""
        return self._drew()

    def _follow(self, sq: int, visited: bytearray) -> None:
        """Make the view's squares those of the search's ``visited`` (``sq`` just set).

        The searches call the orderer depth first: between two calls the search
        undoes placements of the path and makes one, ``sq``, a knight's move from
        the deepest square left (every square above it was a call). So the path
        of earlier calls is cut back to the squares still visited and ``sq``
        added: constant work a call on average. A call that does not follow on
        (another array, the first call, a subtree's root with its prefix set, an
        unexpected parent) copies the whole board once.
        """
        path, mine = self._path, self._squares
        if visited is self._source:
            while path and (path[-1] == sq or not visited[path[-1]]):
                mine[path.pop()] = 0
            if path and path[-1] in self._nbrs[sq] and visited[sq]:
                path.append(sq)
                mine[sq] = 1
                return
        mine[:] = visited
        path.clear()
        path.append(sq)
        self._source = visited

    def __call__(self, sq: int, visited: bytearray) -> tuple[list[int], int]:
        around = self._nbrs[sq]
        cands = [c for c in around if not visited[c]]
        if not cands:
            return cands, len(around)
        self._follow(sq, visited)
        spent = self._spent
        before = spent()
        coords = self._coords
        result = self.rule(self.board, coords[sq], [coords[c] for c in cands])
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
        return ordered, len(around) + spent() - before

    def _error(self, sq: int, cands: list[int], result: object, why: str) -> HeuristicError:
        shown = repr(result)
        if len(shown) > _REPR_MAX:
            shown = shown[:_REPR_MAX - 3] + "..."
        row, col = self._coords[sq]
        return HeuristicError(
            f"heuristic plug-in {self.name} at square ({row}, {col}) returned {shown}: {why}; "
            f"it must return a reordering of its candidates "
            f"{[self._coords[c] for c in cands]}")
