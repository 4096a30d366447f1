"""The ordering of a knight's-tour placement's candidates: heuristics and tie-breaks.

The layer under the searches of :mod:`btlab.experiments.knights.solve` and
:mod:`btlab.experiments.knights.amb` (both import it; it imports neither). Squares
are numbered ``row * cols + col``, 0-based, row 0 at the top. The board
(:class:`KnightBoard`, the move order) lives in
:mod:`btlab.experiments.knights.board` and the plug-in machinery
(:class:`PluginOrderer`, :class:`BoardView`, :class:`HeuristicError`,
:func:`rule_uses_rng`, :func:`rule_name`) in :mod:`btlab.experiments.knights.user_rules`,
to which :func:`make_orderer` dispatches a callable heuristic; both are
re-exported here.

At each placement the onward squares (unvisited squares a knight's move
away) are listed in the trial's move order and ordered by a *heuristic*; the
heuristic only orders children, the search still backtracks when it gets
stuck:

* ``none``: the move order, by default :data:`DEFAULT_MOVE_ORDER`; with the
  ``random`` tie-break, a random order at every placement (below).
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

Each built-in heuristic is one orderer function plus one :class:`Heuristic` entry in
:data:`HEURISTICS` (its name, orderer, engines, kernel code and source), each tie-break
one key function plus one :class:`TieBreak` entry in :data:`TIE_BREAKS`; the config's
choices, the compiled kernel's codes and the refusal of ``engine: compiled`` for a
heuristic without a kernel are all read from them.

With ``none`` every candidate is tied, so only ``random`` changes anything
(``pohl`` and ``roth`` are no-ops): at each placement the n unvisited onward
squares, listed in move order, are shuffled by Fisher-Yates with the trial's
SplitMix64 stream before the search tries them: for i = n - 1 down to 1,
j = ``next() mod (i + 1)``, swap positions i and j (:func:`shuffle`). That
is n - 1 draws per placement with n >= 2 candidates and none otherwise; every
order is equally likely up to the modulo's bias, below 2^-60.

``checks`` (metrics contract, ``docs/metrics.md``) counts every onward
square looked at: listing a placement's candidates costs the number of
on-board knight's-move neighbours of its square; ``warnsdorff`` adds, for each
candidate, the neighbours of that candidate (also when it is the only one);
``pohl`` with ``warnsdorff`` adds the neighbours it tests one level further; a
plug-in adds, for each :meth:`BoardView.onward` call, the neighbours of the
square asked about.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from btlab.experiments.core import Budget
from btlab.experiments.knights.board import DEFAULT_MOVE_ORDER, KnightBoard, validate_move_order
from btlab.experiments.knights.user_rules import (
    BoardView,
    HeuristicError,
    HeuristicRule,
    PluginOrderer,
    rule_name,
    rule_uses_rng,
)
from btlab.experiments.registry import Registry, named

# Public names: the ordering of this module and, re-exported, the board of
# btlab.experiments.knights.board and the plug-in machinery of btlab.experiments.knights.user_rules.
__all__ = [
    "DEFAULT_MOVE_ORDER", "HEURISTICS", "TIE_BREAKS", "BoardView", "Heuristic", "HeuristicError",
    "HeuristicRule", "KnightBoard", "MakeOrderer", "Orderer", "PluginOrderer", "SplitMix64",
    "TieBreak", "TieKey", "make_orderer", "order_clock_mask", "rule_name", "rule_uses_rng",
    "shuffle", "validate_move_order",
]

#: An ordering function: (square, visited) -> (candidates in the order to try, checks made).
#: Every orderer :func:`make_orderer` returns also has a bool attribute ``stateful``:
#: True when its order may depend on earlier calls (the ``random`` tie-break, plug-ins).
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


def shuffle(cands: list[int], rng: SplitMix64) -> list[int]:
    """Shuffle ``cands`` in place by Fisher-Yates and return it: for i = n - 1 down
    to 1, j = ``rng.next() mod (i + 1)``, swap positions i and j (n - 1 draws; none
    for n < 2). The compiled kernel draws and swaps the same way."""
    for i in range(len(cands) - 1, 0, -1):
        j = rng.next() % (i + 1)
        cands[i], cands[j] = cands[j], cands[i]
    return cands



# --------------------------------------------------------------------------- the registries

#: Builds a placement's orderer: ``(board, tie_break, rng) -> Orderer``; ``rng`` is the
#: trial's SplitMix64 stream (the ``random`` tie-break draws from it).
MakeOrderer = Callable[[KnightBoard, "TieBreak", SplitMix64], Orderer]
#: A tie-break's key of one candidate: ``(board, candidate, visited, rng, dynamic) ->
#: (key, checks made)``, smaller keys first; ``dynamic``: the heuristic counts unvisited
#: onward squares (``warnsdorff``), else degrees on the empty board.
TieKey = Callable[[KnightBoard, int, bytearray, SplitMix64, bool], "tuple[int, int]"]


@dataclass(frozen=True)
class Heuristic:
    """A built-in knight's-tour heuristic: one function plus this entry in :data:`HEURISTICS`.

    Attributes:
        name: the ``heuristic`` value in configs and Parquet.
        orderer: builds the placement orderer (:data:`MakeOrderer`); the Python engine
            calls it through :func:`make_orderer`.
        summary: one line: what it puts first.
        source: where the rule comes from (paper, book), or ``""``.
        engines: the engines that run it: ``python`` (the reference) and, when the
            numba kernel has a loop for it, ``compiled``. ``engine: compiled`` with a
            heuristic whose entry lacks ``compiled`` is refused when the config is
            validated.
        kernel: the code the compiled kernel's loops branch on
            (:mod:`btlab.experiments.compiled.knights.kernel`), or None: no kernel.
            Set exactly when ``engines`` holds ``compiled``.
    """

    name: str
    orderer: MakeOrderer
    summary: str
    source: str = ""
    engines: tuple[str, ...] = ("python",)
    kernel: int | None = None

    def __post_init__(self) -> None:
        if ("compiled" in self.engines) != (self.kernel is not None):
            raise ValueError(f"heuristic {self.name!r}: a kernel code exactly when its "
                             f"engines hold compiled (engines {self.engines}, kernel "
                             f"{self.kernel})")


@dataclass(frozen=True)
class TieBreak:
    """A tie-break of the built-in heuristics: one key function plus this entry in
    :data:`TIE_BREAKS`.

    Attributes:
        name: the ``tie_break`` value in configs and Parquet.
        key: the candidate's key among those of equal degree (:data:`TieKey`), or None:
            every tie stays in move order.
        summary: one line: what it puts first.
        source: where it comes from, or ``""``.
        random: it draws from the trial's SplitMix64 stream: with ``heuristic: none``
            it shuffles every placement's candidates (:func:`shuffle`), the other
            tie-breaks leave ``none`` in move order; a split cannot cut it.
        kernel: the code the compiled kernel's loops branch on (every tie-break has one).
    """

    name: str
    key: TieKey | None
    summary: str
    kernel: int
    source: str = ""
    random: bool = False


def _plain(board: KnightBoard, tie: TieBreak, rng: SplitMix64) -> Orderer:
    """``none``: the candidates in move order; shuffled at every placement with a random
    tie-break (every candidate ties)."""
    nbrs = board.neighbours

    if tie.random:
        def order_shuffled(sq: int, visited: bytearray) -> tuple[list[int], int]:
            around = nbrs[sq]
            return shuffle([c for c in around if not visited[c]], rng), len(around)
        order_shuffled.stateful = True  # type: ignore[attr-defined]
        return order_shuffled

    def order_none(sq: int, visited: bytearray) -> tuple[list[int], int]:
        around = nbrs[sq]
        return [c for c in around if not visited[c]], len(around)
    order_none.stateful = False  # type: ignore[attr-defined]
    return order_none


def _by_degree(board: KnightBoard, tie: TieBreak, rng: SplitMix64,
               dynamic: bool) -> Orderer:
    """Fewest onward squares first: unvisited ones (``dynamic``, Warnsdorff's rule) or all
    of them on the empty board (``static_degree``); ties by ``tie``'s key, then move order."""
    nbrs = board.neighbours
    static = board.static_degree
    key = tie.key

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
            if key is None:
                keys.append((deg, 0, i, c))
            else:
                t, looked = key(board, c, visited, rng, dynamic)
                checks += looked
                keys.append((deg, t, i, c))
        keys.sort()
        return [k[3] for k in keys], checks

    order_degree.stateful = tie.random  # type: ignore[attr-defined]
    return order_degree


def _warnsdorff(board: KnightBoard, tie: TieBreak, rng: SplitMix64) -> Orderer:
    """``warnsdorff``: fewest unvisited onward squares first."""
    return _by_degree(board, tie, rng, dynamic=True)


def _static_degree(board: KnightBoard, tie: TieBreak, rng: SplitMix64) -> Orderer:
    """``static_degree``: fewest onward squares on the empty board first."""
    return _by_degree(board, tie, rng, dynamic=False)


def _random_key(board: KnightBoard, c: int, visited: bytearray, rng: SplitMix64,
                dynamic: bool) -> tuple[int, int]:
    """``random``: the next value of the trial's SplitMix64 stream."""
    return rng.next(), 0


def _pohl_key(board: KnightBoard, c: int, visited: bytearray, rng: SplitMix64,
              dynamic: bool) -> tuple[int, int]:
    """``pohl``: the sum of the candidate's own onward degrees, as if the knight stood on it:
    unvisited ones counted one level further (``dynamic``), else the empty board's."""
    nbrs = board.neighbours
    tie = checks = 0
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
        static = board.static_degree
        for x in nbrs[c]:
            tie += static[x]
    return tie, checks


def _roth_key(board: KnightBoard, c: int, visited: bytearray, rng: SplitMix64,
              dynamic: bool) -> tuple[int, int]:
    """``roth``: farthest from the board centre first."""
    return -board.centre_distance2[c], 0


#: The built-in heuristics, by name (a plug-in is a callable instead, see
#: :class:`PluginOrderer`). Adding one: an orderer function and one entry here; a
#: compiled kernel adds its loop and code (:mod:`btlab.experiments.compiled.knights`).
HEURISTICS: Registry[Heuristic] = named(
    "heuristic",
    Heuristic("none", _plain, "the move order (with the random tie-break, shuffled at every "
              "placement)", engines=("python", "compiled"), kernel=0),
    Heuristic("warnsdorff", _warnsdorff, "fewest unvisited onward squares first",
              source="H. C. Warnsdorff, Des Rösselsprunges einfachste und allgemeinste "
              "Lösung, Schmalkalden, 1823", engines=("python", "compiled"), kernel=1),
    Heuristic("static_degree", _static_degree, "fewest onward squares on the empty board "
              "first (ignores what is visited)", engines=("python", "compiled"), kernel=2),
)

#: The tie-breaks of the built-in heuristics, by name.
TIE_BREAKS: Registry[TieBreak] = named(
    "tie-break",
    TieBreak("move_order", None, "the order of the moves (stable)", kernel=0),
    TieBreak("random", _random_key, "a seeded SplitMix64 draw per tied candidate, smallest "
             "first", kernel=1, random=True,
             source="G. Steele, D. Lea, C. Flood, \"Fast splittable pseudorandom number "
             "generators\", OOPSLA 2014"),
    TieBreak("pohl", _pohl_key, "smaller sum of the candidate's own onward degrees first",
             kernel=2, source="I. Pohl, \"A method for finding Hamilton paths and knight's "
             "tours\", CACM 10(7), 1967"),
    TieBreak("roth", _roth_key, "farthest from the board centre first", kernel=3,
             source="A. Roth, as described by D. Squirrel and P. Cull, \"A Warnsdorff-rule "
             "algorithm for knight's tours on square chessboards\", 1996"),
)


def make_orderer(board: KnightBoard, heuristic: str | HeuristicRule,
                 tie_break: str = "move_order", seed: int = 0) -> Orderer:
    """Build the child-ordering function for a heuristic and tie-break.

    Args:
        board: the board geometry.
        heuristic: a name in :data:`HEURISTICS`, or a plug-in: a callable
            ``rule(board, square, candidates) -> candidates reordered``
            (:class:`PluginOrderer`).
        tie_break: a name in :data:`TIE_BREAKS`; with ``none`` only ``random``
            has an effect, a Fisher-Yates shuffle of the candidates at every
            placement (:func:`shuffle`); must be ``move_order`` with a plug-in.
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
        ValueError: unknown heuristic or tie-break (the message lists the valid
            names), or a tie-break other than ``move_order`` with a plug-in.
    """
    if callable(heuristic):
        if tie_break != "move_order":
            raise ValueError(
                f"tie-break {tie_break!r} is not used with a heuristic plug-in "
                f"({rule_name(heuristic)}), which orders its candidates itself; "
                "use tie_break 'move_order'")
        return PluginOrderer(board, heuristic, seed)
    entry = HEURISTICS.get_or_raise(heuristic)
    tie = TIE_BREAKS.get_or_raise(tie_break)
    return entry.orderer(board, tie, SplitMix64(seed))


def order_clock_mask(order: Orderer) -> int:
    """The clock mask (:meth:`Budget.clock_mask`) of a search ordered by ``order``: every
    placement reads the clock when a plug-in orders the candidates (a rule may take
    seconds a call), else every :attr:`Budget.CLOCK_EVERY`. Every strategy reads it
    alike (``recursive``, ``iterative``, ``amb``: ``docs/metrics.md``)."""
    return Budget.clock_mask(Budget.CLOCK_WORK if isinstance(order, PluginOrderer) else 1)
