"""N-Queens without search: the ``construction`` strategy and :func:`construct_queens`."""

from __future__ import annotations

import time

import numpy as np

from btlab.experiments.checker import check_queens
from btlab.experiments.checker_fast import check_queens_fast
from btlab.experiments.core import Budget, SearchResult, Status

CONSTRUCTIONS = ("formula", "product")

#: The 5-queens solution grown by the ``product`` construction: a queen in the
#: corner (0, 0), and toroidal (column = 2 * row mod 5: no two queens share a
#: diagonal even when the board wraps around), which the product needs.
PRODUCT_SEED: tuple[int, ...] = (0, 2, 4, 1, 3)


def _formula(n: int) -> list[int]:
    """Bernhardsson's explicit solution, 0-based columns by row, for n = 1 and n >= 4.

    With m = n for even n and m = n - 1 for odd n, and 1-based rows and
    columns (B. Bernhardsson, "Explicit solutions to the N-queens problem for
    all N", ACM SIGART Bulletin 2(2), 1991, p. 7; the same families as E. J.
    Hoffman, J. C. Loessi and R. C. Moore, "Constructions for the solution of
    the m queens problem", Mathematics Magazine 42(2), 1969):

    * m mod 6 != 2: row i holds column 2i and row m/2 + i column 2i - 1,
      for i = 1..m/2;
    * m mod 6 == 2: row i holds column 1 + (2(i-1) + m/2 - 1) mod m and row
      m + 1 - i column m - (2(i-1) + m/2 - 1) mod m, for i = 1..m/2;
    * odd n: the m-queens solution leaves the main diagonal free, and row n
      takes column n.
    """
    return _formula_array(n).tolist()


def _formula_array(n: int) -> np.ndarray:
    """:func:`_formula` as an int64 array, built in vectorised steps (10^7 queens: 0.1 s)."""
    m = n - (n & 1)
    h = m // 2
    i = np.arange(h, dtype=np.int64)
    if m % 6 != 2:
        cols = np.concatenate([2 * i + 1, 2 * i])
    else:
        top = (2 * i + h - 1) % m
        cols = np.concatenate([top, m - 1 - top[::-1]])
    if n & 1:
        cols = np.append(cols, n - 1)
    return cols


def _is_power_of_5(n: int) -> bool:
    """True for n = 5^k, k >= 0."""
    while n % 5 == 0:
        n //= 5
    return n == 1


def _product(n: int) -> list[int]:
    """The self-similar solution for n = 5^k, grown from :data:`PRODUCT_SEED`.

    Queen (r, c) of the 5-queens seed and queen (r', c') of the 5^k solution
    give queen (r * 5^k + r', c * 5^k + c') of the 5^(k+1) solution: a copy of
    the 5^k solution in each block the seed marks. If both factors are
    *toroidal* (no two queens on a common diagonal of the board wrapped into a
    torus), so is the product: two of its queens on a common wrapped diagonal
    would, modulo 5^k, put two queens of the inner factor on one, so they lie
    in the same place of two blocks, and then, divided by 5^k, the blocks
    would share a wrapped diagonal of the seed. A toroidal solution is a
    solution, the seed (column 2r mod 5) is toroidal, so every power is, by
    induction. The seed's queen in the corner (0, 0) puts the 5^k solution in
    the top-left block of the 5^(k+1) one. (Toroidal, "doubly periodic",
    solutions: G. Pólya, "Über die 'doppelt-periodischen' Lösungen des
    n-Damen-Problems", in W. Ahrens, *Mathematische Unterhaltungen und
    Spiele* II, 1918.)

    Raises:
        ValueError: n is not a power of 5.
    """
    return _product_array(n).tolist()


def _product_array(n: int) -> np.ndarray:
    """:func:`_product` as an int64 array, one vectorised step per power of 5."""
    seed = np.asarray(PRODUCT_SEED, dtype=np.int64)
    size = 1
    cols = np.zeros(1, dtype=np.int64)
    while size < n:
        cols = (seed[:, None] * size + cols[None, :]).ravel()
        size *= 5
    if size != n:
        raise ValueError(f"the product construction needs n = 5^k, got n = {n}")
    return cols


def construct_queens(n: int, method: str = "formula") -> list[int]:
    """One N-Queens solution, built without search in O(n) time and verified.

    Args:
        n: board size: n = 1 or n >= 4 for ``formula``; a power of 5 (1, 5,
            25, ...) for ``product``.
        method: ``formula`` (Bernhardsson 1991, see :func:`_formula`) or
            ``product`` (the self-similar 5^k solution, see :func:`_product`;
            the 5^k solution is the top-left block of the 5^(k+1) one).

    Returns:
        The queen's column for each row, length n, checked by
        :func:`btlab.experiments.checker.check_queens` before it is returned.

    Raises:
        ValueError: unknown method, n < 1, n = 2 or 3 (no solution exists), or
            (``product``) n not a power of 5.
        btlab.experiments.checker.InvalidSolution: the construction is wrong (a bug).
    """
    if method not in CONSTRUCTIONS:
        raise ValueError(f"unknown construction {method!r}; expected one of {CONSTRUCTIONS}")
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    if n in (2, 3):
        raise ValueError(f"no solution exists for n = {n}")
    cols = _formula(n) if method == "formula" else _product(n)
    check_queens(n, cols)
    return cols


#: Nanoseconds per queen that building a placement takes (40 to 120 ns, by the load of
#: the machine): a budget that cannot cover it stops before building (ten million queens
#: take up to a second, read by no clock).
_BUILD_NS = 100
#: Nanoseconds per queen that verifying a built placement, turning it into a tuple and
#: the runner's check take together (100 to 250 ns, by the load of the machine).
_FINISH_NS = 150
#: ... and, on a machine slowed down by other work, about 12 times what building took.
_FINISH_PER_BUILD = 12


def _construct(n: int, method: str, budget: Budget) -> SearchResult:
    """The ``construction`` strategy: n placements, n checks, no backtracking.

    The placement is built in one step, so a node budget below n stops it
    before its first queen (``node_limit``, all counters 0). Building and
    verifying are vectorised (ten million queens in well under a second).
    The clock is read before building: a budget that cannot cover building
    (:data:`_BUILD_NS` per queen) gives ``time_limit`` with no placement made.
    It is read again after building: when what is left of the time budget
    cannot cover verifying and handing over the placement (and the runner's
    own check; :data:`_FINISH_NS` per queen, or :data:`_FINISH_PER_BUILD` times
    the build when the machine is slow), the result is ``time_limit``
    with the n placements made and no solution. A placement
    built and verified is ``solved``, whatever the clock says then: the
    status tells what was found.
    """
    budget.start()
    if n in (2, 3):
        return SearchResult(Status.EXHAUSTED, 0, 0, 0, 0, 0, 0)
    if budget.node_cap < n:
        return SearchResult(Status.NODE_LIMIT, 0, 0, 0, 0, 0, 0)
    if budget.out_of_time(n * _BUILD_NS):  # building cannot be stopped half way
        return SearchResult(Status.TIME_LIMIT, 0, 0, 0, 0, 0, 0)
    built_at = time.perf_counter_ns()
    cols = _formula_array(n) if method == "formula" else _product_array(n)
    # what is left to do, by the machine's speed right now (a loaded machine is slower)
    finish_ns = max(n * _FINISH_NS, _FINISH_PER_BUILD * (time.perf_counter_ns() - built_at))
    if budget.out_of_time(finish_ns):
        return SearchResult(Status.TIME_LIMIT, n, 0, 0, 0, 0, n)
    check_queens_fast(n, cols)
    return SearchResult(Status.SOLVED, n, 0, 0, n, 1, n, tuple(cols.tolist()))


def solve_construction(n: int, first: bool, unique: bool, budget: Budget,
                       method: str | None = None) -> SearchResult:
    """The ``construction`` strategy's entry: check the options, then :func:`_construct`."""
    if not first:
        raise ValueError("the construction strategy builds one solution; use mode='first'")
    if unique:
        raise ValueError("unique counting needs a searching strategy, not construction")
    method = "formula" if method is None else method
    if method not in CONSTRUCTIONS:
        raise ValueError(f"unknown construction {method!r}; expected one of {CONSTRUCTIONS}")
    if method == "product" and not _is_power_of_5(n):
        raise ValueError(f"the product construction needs n = 5^k, got n = {n}")
    return _construct(n, method, budget)
