"""N-Queens: place n queens on an n x n board so that no two attack each other.

A placement is written as the tuple of the queens' columns by row,
``cols[row]``, 0-based, row 0 at the top. Every searching strategy puts one
queen per row, row by row, trying columns 0..n-1 in order, so the first
solution found is the lexicographically smallest one.

Strategies (:data:`STRATEGIES`):

* ``brute_force``: generates every one of the n^n placements with one queen
  per row and checks each only when it is complete.
* ``recursive``: backtracking, a Python function calling itself (boards above
  :data:`DEEP_BOARD` rows run in a big-stack thread, see
  :func:`btlab.experiments.knights.solve.run_deep`).
* ``iterative``: the same backtracking with an explicit stack.
* ``amb``: the same backtracking written with McCarthy's Amb operator
  (:class:`btlab.experiments.amb.Amb`): one choice point per row, ``require(safe)``
  right after each choice, choice points served by re-execution.
* ``functional``: generate-and-filter, column by column in the functional
  programming literature's words (one queen per row here): the consistent
  placements of k queens are built from all those of k - 1 by extending each
  with every column and keeping the safe ones (N. Wirth, "Program development
  by stepwise refinement", CACM 14(4), 1971; R. Bird and P. Wadler,
  *Introduction to Functional Programming*, 1988).
* ``bitmask``: the same backtracking with the attacked columns and diagonals
  held as bit masks (M. Richards, "Backtracking algorithms in MCPL using bit
  patterns and recursion", Cambridge, 1997), an explicit stack, and in
  ``count`` mode the mirror symmetry of the first row.
* ``construction``: no search; an explicit formula for every n (``formula``)
  or the self-similar product for n = 5^k (``product``), see
  :func:`construct_queens`.

Counters (metrics contract, :mod:`btlab.experiments.core`). A *check* is a square
tested for attack. ``recursive``, ``iterative``, ``amb`` and ``bitmask`` walk
the same tree in the same order and report equal counters, under any node
budget too (a time limit stops each wherever its clock runs out):

* ``nodes``: queens left on the board after their safety test; for n = 8
  there are 2,056 of them in ``count`` mode (2,057 tree nodes with the empty
  root: D. E. Knuth, *The Art of Computer Programming*, section 7.2.2,
  "Backtrack programming"; OEIS A319235).
* ``checks``: one per column tried: every placement short of n queens, and the
  empty board, try the n columns of the next row, so an exhausted count makes
  ``n * (1 + nodes - solutions)`` checks (15,720 for n = 8). A search stopped
  in a row has tested the columns up to and including the current one.
* ``backtracks``: queens taken back whose subtree held no reported solution.
* ``dead_ends``: queens short of a complete placement with no safe square in
  the next row.
* ``solutions``, ``max_depth``: solutions reported, most queens on the board.

``brute_force`` walks the tree of all placements (every assignment is a
placement, ``nodes`` = sum of n^k for k = 1..n in ``count`` mode); a complete
placement is checked row by row, each queen's square tested against the
queens above it, stopping at the first attacked one: every row tested is one
check. A complete placement that fails is a dead end (and a backtrack);
shorter placements always have a continuation and are never dead ends.
``functional`` counts as recursion does (same ``nodes``, ``checks``,
``backtracks``, ``dead_ends`` in ``count`` mode), see
:func:`btlab.experiments.queens.enumerate.search_functional`. ``construction``
makes n placements and n checks (its O(n) verification tests each queen's
square once).

With ``unique=True`` (``count`` mode) ``solutions`` counts solutions up to the
8 symmetries of the square (OEIS A002562): a solution is counted when it is
the lexicographically smallest of its 8 images; ``extra["all_solutions"]``
keeps the plain count and the other counters are those of the full walk.

Modules: this one holds the registry and :func:`solve_queens` (and re-exports
the public names of the others); :mod:`btlab.experiments.queens.backtrack`
(``recursive``, ``iterative``, ``amb``, :func:`search_subtree`),
:mod:`btlab.experiments.queens.bitmask` (``bitmask``),
:mod:`btlab.experiments.queens.enumerate` (``brute_force``, ``functional``),
:mod:`btlab.experiments.queens.construct` (``construction``,
:func:`construct_queens`), :mod:`btlab.experiments.queens.symmetry` (what they share:
:func:`is_canonical`, :data:`DEEP_BOARD`).
"""

from __future__ import annotations

import operator
from collections.abc import Callable

from btlab.experiments.core import Budget, Mode, SearchResult
from btlab.experiments.knights.solve import run_deep
from btlab.experiments.queens.backtrack import (
    search_amb,
    search_iterative,
    search_recursive,
    search_subtree,
)
from btlab.experiments.queens.bitmask import search_bitmask
from btlab.experiments.queens.construct import (
    CONSTRUCTIONS,
    PRODUCT_SEED,
    construct_queens,
    solve_construction,
)
from btlab.experiments.queens.enumerate import search_brute_force, search_functional
from btlab.experiments.queens.symmetry import DEEP_BOARD, is_canonical
from btlab.experiments.registry import WITH_BACKTRACKS, Strategy, strategies

__all__ = ["CONSTRUCTIONS", "DEEP_BOARD", "PRODUCT_SEED", "STRATEGIES", "construct_queens",
           "is_canonical", "search_subtree", "solve_queens"]


def _deep(search: Callable[[int, bool, bool, Budget], SearchResult]
          ) -> Callable[[int, bool, bool, Budget], SearchResult]:
    """A strategy that recurses once per row, run in a big-stack thread for large n."""
    def solve(n: int, first: bool, unique: bool, budget: Budget) -> SearchResult:
        if n > DEEP_BOARD:
            return run_deep(lambda: search(n, first, unique, budget), n)
        return search(n, first, unique, budget)
    solve.__doc__ = search.__doc__
    return solve


#: The N-Queens strategies. Each ``solve`` takes ``(n, first, unique, budget)``
#: (plus the keyword options its entry lists) and returns a
#: :class:`~btlab.experiments.core.SearchResult`. ``recursive``, ``iterative``,
#: ``amb`` and ``bitmask`` walk the same row-by-row tree (tree ``rows``).
STRATEGIES = strategies(
    "N-Queens strategy",
    Strategy("brute_force", _deep(search_brute_force),
             "every one of the n^n placements, each checked only when complete",
             engines=("python",), max_size=64, tree="brute"),
    Strategy("recursive", _deep(search_recursive),
             "row-by-row backtracking, a Python function calling itself",
             source="N. Wirth, Algorithms + Data Structures = Programs, 1976, sec. 3.5",
             max_size=10_000, splittable=True, tree="rows",
             budgets=WITH_BACKTRACKS),
    Strategy("iterative", search_iterative,
             "the same search with an explicit stack",
             max_size=100_000, splittable=True, tree="rows",
             budgets=WITH_BACKTRACKS),
    Strategy("amb", search_amb,
             "McCarthy's Amb operator by re-execution, require() right after each choice",
             source="J. McCarthy, \"A basis for a mathematical theory of computation\", 1963",
             max_size=1_000, splittable=True, tree="rows"),
    Strategy("functional", search_functional,
             "generate-and-filter column by column: all consistent placements of k columns "
             "from those of k-1",
             max_size=1_000, tree="functional"),
    Strategy("bitmask", search_bitmask,
             "row-by-row backtracking on three bit masks; the compiled engine runs this one",
             source="M. Richards, \"Backtracking algorithms in MCPL using bit patterns and "
             "recursion\", 1997",
             engines=("python", "compiled"), max_size=100_000, splittable=True, tree="rows",
             budgets=WITH_BACKTRACKS),
    Strategy("construction", solve_construction,
             "no search: an explicit formula for every n >= 4, or the product that grows a "
             "5-queens solution into 5^k queens; always verified",
             source="E. J. Hoffman, J. C. Loessi, R. C. Moore, \"Constructions for the "
             "solution of the m queens problem\", Math. Magazine 42(2), 1969",
             max_size=10_000_000, options=("method",), modes=("first",)),
)



def solve_queens(
    n: int,
    *,
    mode: str | Mode = Mode.FIRST,
    strategy: str = "recursive",
    unique: bool = False,
    method: str | None = None,
    max_nodes: int | None = None,
    max_seconds: float | None = None,
    max_backtracks: int | None = None,
) -> SearchResult:
    """Solve the N-Queens problem on an n x n board.

    Args:
        n: board size, >= 1.
        mode: ``first`` (stop at the first solution) or ``count`` (all).
        strategy: one of :data:`STRATEGIES` (see the module docstring).
        unique: in ``count`` mode, count solutions up to the 8 symmetries of
            the square (OEIS A002562); ``extra["all_solutions"]`` keeps the
            plain count (OEIS A000170). Any searching strategy.
        method: the ``construction`` to use, ``formula`` (the default, any
            n >= 4) or ``product`` (n = 5^k); only with that strategy.
        max_nodes: node budget (placements), or None.
        max_seconds: time budget (wall seconds), or None.
        max_backtracks: backtrack budget (0: greedy), or None; only the strategies
            whose entry's ``budgets`` hold ``backtracks``.

    Returns:
        A :class:`SearchResult`; its ``solution`` is the first solution found
        as the queen's column for each row, or None. ``construction`` on n = 2
        or 3 returns ``exhausted`` with no solution (none exists); on n = 1 it
        returns the single queen.

    Raises:
        ValueError: n < 1, an unknown mode, strategy or method, ``method``
            with another strategy, ``count`` mode or ``unique`` with
            ``construction``, ``unique`` in ``first`` mode, ``product`` for an
            n that is not a power of 5, a bad budget, or a backtrack budget
            with another strategy.
    """
    n = operator.index(n)
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    mode = Mode(mode)
    entry = STRATEGIES.get_or_raise(strategy)
    if method is not None and "method" not in entry.options:
        raise ValueError(f"method={method!r} applies to the construction strategy only, "
                         f"not to {strategy!r}")
    if unique and mode is not Mode.COUNT:
        raise ValueError("unique counting needs mode='count'")
    if max_backtracks is not None and "backtracks" not in entry.budgets:
        able = [s for s, e in STRATEGIES.items() if "backtracks" in e.budgets]
        raise ValueError(f"the {strategy} strategy has no backtrack budget: use one of "
                         f"{', '.join(able)}")
    budget = Budget(max_nodes, max_seconds, max_backtracks)
    budget.start()  # setup counts too (a construction's n queens, a deep-search thread)
    options = {"method": method} if "method" in entry.options else {}
    return entry.solve(n, mode is Mode.FIRST, unique, budget, **options)
