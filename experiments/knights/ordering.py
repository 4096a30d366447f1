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

from btlab.experiments.knights.board import DEFAULT_MOVE_ORDER, KnightBoard, validate_move_order
from btlab.experiments.knights.user_rules import (
    BoardView,
    HeuristicError,
    HeuristicRule,
    PluginOrderer,
    rule_name,
    rule_uses_rng,
)

# Public names: the ordering of this module and, re-exported, the board of
# btlab.experiments.knights.board and the plug-in machinery of btlab.experiments.knights.user_rules.
__all__ = [
    "DEFAULT_MOVE_ORDER", "HEURISTICS", "TIE_BREAKS", "BoardView", "HeuristicError",
    "HeuristicRule", "KnightBoard", "Orderer", "PluginOrderer", "SplitMix64", "make_orderer",
    "rule_name", "rule_uses_rng", "shuffle", "validate_move_order",
]

#: The built-in heuristics (a plug-in is a callable instead, see :class:`PluginOrderer`).
HEURISTICS = ("none", "warnsdorff", "static_degree")
#: The tie-breaks of the built-in heuristics.
TIE_BREAKS = ("move_order", "random", "pohl", "roth")

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


def make_orderer(board: KnightBoard, heuristic: str | HeuristicRule,
                 tie_break: str = "move_order", seed: int = 0) -> Orderer:
    """Build the child-ordering function for a heuristic and tie-break.

    Args:
        board: the board geometry.
        heuristic: one of :data:`HEURISTICS`, or a plug-in: a callable
            ``rule(board, square, candidates) -> candidates reordered``
            (:class:`PluginOrderer`).
        tie_break: one of :data:`TIE_BREAKS`; with ``none`` only ``random``
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

    static = board.static_degree
    dist2 = board.centre_distance2
    rng = SplitMix64(seed)

    if heuristic == "none" and tie_break == "random":
        def order_shuffled(sq: int, visited: bytearray) -> tuple[list[int], int]:
            around = nbrs[sq]
            return shuffle([c for c in around if not visited[c]], rng), len(around)
        order_shuffled.stateful = True  # type: ignore[attr-defined]
        return order_shuffled

    if heuristic == "none":
        def order_none(sq: int, visited: bytearray) -> tuple[list[int], int]:
            around = nbrs[sq]
            return [c for c in around if not visited[c]], len(around)
        order_none.stateful = False  # type: ignore[attr-defined]
        return order_none

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
