"""Compiled search kernels (numba): the same trees as the pure-Python solvers, at C speed.

* :func:`solve_knights_compiled` -- the knight's tour of
  :func:`btlab.experiments.knights.solve.solve_knights_tour`, with identical counters.
* :func:`solve_queens_compiled` -- N-Queens by row-by-row backtracking on bit masks.
* :func:`knights_subtree_compiled`, :func:`queens_subtree_compiled` -- one
  subtree of those searches, below a given path, counted as the pure-Python
  ``search_subtree`` functions count it (the subtree tasks of
  :mod:`btlab.experiments.split.subtrees`).
* :mod:`.estimate_kernel` -- the Knuth probes of :mod:`btlab.experiments.estimate`
  (its ``engine="compiled"``); :mod:`.estimators_kernel` -- its weighted probes
  (``importance``, ``perm``).
* :func:`warm_up` -- compile or load the kernels before a timed call: a family, or
  the one loop a search runs (:func:`knights_kind`), chosen in Python before numba
  compiles anything (:mod:`.knights.loops`), so that a process compiles only the
  loops of its own searches.

Kernels are compiled once per process, on first use, and cached on disk
(numba ``cache=True``; see :mod:`btlab.experiments.compiled._cache` for where), so a
new worker process loads them in milliseconds instead of compiling them for
seconds. The cache folder is named by a hash of every source the kernels use
and btlab's version: an edited dependency (``_driver.py``'s return codes, a
module a kernel imports) is compiled afresh, never loaded stale. A damaged or
unwritable cache is a warning and a recompile, never a failed trial
(:func:`._cache.guard_caches`). Compile (or
cache-load) time is never part of a search's time: the solvers warm the
kernels up before starting their clock and report the time it took in
``extra["compile_ns"]`` (nonzero only on the first call of a kind in a
process).

Modules:

- ``_cache``: where numba keeps the compiled kernels between processes, keyed on their sources.
- ``_driver``: what the kernels share: their return codes and the loop that drives them.
- ``_steps``: the steps the knight's-tour loops share (layout, entry, budgets, exit),
  inlined into each.
- ``estimate_kernel``: Knuth's probes of :mod:`btlab.experiments.estimate`, in numba.
- ``estimators_kernel``: the weighted probes (importance, go-with-the-winners), in numba.
- ``knights/``: the knight's-tour loops, one per board size class and candidate order.
- ``queens_kernel``: N-Queens by row-by-row backtracking on bit masks, in numba.
"""

from __future__ import annotations

import functools
import operator
import sys
import threading
import time
from typing import Callable, Sequence

from btlab.experiments.compiled._cache import configure as _configure_cache
from btlab.experiments.compiled._cache import guard_caches as _guard_caches

CACHE_DIR = _configure_cache()

from btlab.experiments.compiled import estimate_kernel, estimators_kernel, queens_kernel  # noqa: E402
from btlab.experiments.compiled.knights import kernel as knights_kernel  # noqa: E402
from btlab.experiments.compiled.knights import loops as knights_loops  # noqa: E402
from btlab.experiments.core import Budget, Mode, SearchResult  # noqa: E402
from btlab.experiments.knights.solve import DEFAULT_MOVE_ORDER  # noqa: E402
from btlab.experiments.loading import interrupts_held  # noqa: E402

# every kernel's disk cache checked: a damaged or unwritable cache is a recompile, told once
_guard_caches([module for name, module in list(sys.modules.items())
               if name == __name__ or name.startswith(__name__ + ".")])

__all__ = ["CACHE_DIR", "KINDS", "compiled_count", "knights_kind", "knights_subtree_compiled",
           "queens_subtree_compiled", "solve_knights_compiled", "solve_queens_compiled",
           "warm_up", "warm_up_kinds"]

#: The kernel families :func:`warm_up` knows (each one: every kernel of the family).
KINDS = ("knights", "queens", "estimate")

_WARM: dict[str, bool] = {}
_WARM_LOCK = threading.Lock()
_WARMERS: dict[str, Callable[[], None]] = {
    "knights": knights_kernel.warm_up, "queens": queens_kernel.warm_up,
    "estimate": estimate_kernel.warm_up, "estimate:knights": estimate_kernel.warm_up_knights,
    "estimate:queens": estimate_kernel.warm_up_queens,
    "estimate:knights:weighted": estimators_kernel.warm_up_knights,
    "estimate:queens:weighted": estimators_kernel.warm_up_queens,
    **{f"knights:{name}": functools.partial(knights_kernel.warm_loop, name)
       for name in knights_loops.loops()}}


def knights_kind(size: int, heuristic: str, tie_break: str, first: bool) -> str:
    """The :func:`warm_up` kind of the one loop a knight's-tour search runs
    (``knights:<loop>``, :mod:`btlab.experiments.compiled.knights.loops`)."""
    return "knights:" + knights_loops.choose(
        knights_loops.shape(size, heuristic, tie_break, first)).name


def warm_up_kinds() -> tuple[str, ...]:
    """Every kind :func:`warm_up` takes: the families, then one per loop or probe kernel."""
    return tuple(_WARMERS)


def compiled_count() -> int:
    """How many kernel signatures this process has compiled so far (numba's cache
    misses; a kernel loaded from the disk cache is a hit): tells a compile from a load."""
    kernels = [loop.kernel for loop in knights_loops.loops().values()]
    kernels += [knights_kernel.knights_run, knights_kernel.build_geometry,
                queens_kernel.queens_run, estimate_kernel.knights_probes,
                estimate_kernel.queens_probes, estimators_kernel.knights_weighted,
                estimators_kernel.queens_weighted]
    return sum(sum(k.stats.cache_misses.values()) for k in kernels)


def warm_up(kind: str) -> int:
    """Compile, or load from the disk cache, the kernels of ``kind`` in this process.

    Args:
        kind: ``knights``, ``queens`` or ``estimate`` (the Knuth probes of
            :mod:`btlab.experiments.estimate`): every kernel of the family; or
            one loop or probe kernel alone, so that a process compiles only what
            its searches run: ``knights:<loop>`` (:func:`knights_kind`),
            ``estimate:knights``, ``estimate:queens`` (:func:`warm_up_kinds`).

    A ``KeyboardInterrupt`` (Ctrl-C, a non-forced ``ray.cancel``) that arrives
    meanwhile is held until the kernels are ready (compiling imports more of
    numba, which an interrupt would leave half imported:
    :mod:`btlab.experiments.loading`).

    Returns:
        Nanoseconds spent compiling or loading (wall clock); 0 when the
        kernels were already warm in this process.

    Raises:
        ValueError: an unknown kind.
    """
    if kind not in _WARMERS:
        raise ValueError(f"unknown kernel kind {kind!r}; expected one of {warm_up_kinds()}")
    if _WARM.get(kind):
        return 0
    with _WARM_LOCK:
        if _WARM.get(kind):
            return 0
        t0 = time.perf_counter_ns()
        with interrupts_held():  # compiling imports more of numba: never cut in half
            _WARMERS[kind]()
            _WARM[kind] = True
        return time.perf_counter_ns() - t0


def solve_knights_compiled(
    rows: int,
    cols: int,
    start: tuple[int, int] = (0, 0),
    *,
    mode: str | Mode = Mode.FIRST,
    heuristic: str = "none",
    tie_break: str = "move_order",
    move_order: Sequence[Sequence[int]] = DEFAULT_MOVE_ORDER,
    closed: bool = False,
    max_nodes: int | None = None,
    max_seconds: float | None = None,
    seed: int = 0,
    max_backtracks: int | None = None,
) -> SearchResult:
    """Search for knight's tours with the compiled kernel (iterative depth-first search).

    Same arguments, tree, order and counters as
    :func:`btlab.experiments.knights.solve.solve_knights_tour` (whose ``recursive`` and
    ``iterative`` strategies it equals, counter for counter, under a node
    budget or none); see :mod:`btlab.experiments.compiled.knights.kernel`.

    Args:
        rows, cols: board size (rows x cols), each >= 1.
        start: the start square (row, col), 0-based.
        mode: ``first`` or ``count``.
        heuristic: ``none``, ``warnsdorff`` or ``static_degree``.
        tie_break: ``move_order``, ``random``, ``pohl`` or ``roth``; with
            ``none``, ``random`` shuffles every placement's candidates by
            Fisher-Yates, drawing what the reference draws.
        move_order: the 8 knight moves (d_row, d_col) in the order to try them.
        closed: look for closed tours.
        max_nodes: node budget (placements), or None.
        max_seconds: time budget (wall seconds), or None; read between chunks
            of :data:`knights_kernel.PAUSE_EVERY` placements.
        seed: seed of the ``random`` tie-break (SplitMix64, as the reference).
        max_backtracks: backtrack budget (0: greedy), or None.

    Returns:
        A :class:`SearchResult`; ``solution`` is the first tour as square
        indices ``row * cols + col`` (length ``rows * cols``) or None;
        ``extra["compile_ns"]``: time this call spent compiling or loading
        the kernels, outside the search.

    Raises:
        ValueError: a bad board, start square, mode, heuristic, tie-break,
            move order or budget.
    """
    start_sq, moves, first = knights_kernel.check_arguments(
        rows, cols, start, mode, heuristic, tie_break, move_order)
    budget = Budget(max_nodes, max_seconds, max_backtracks)
    # this search's loop alone (compiling every loop would take seconds more)
    compile_ns = warm_up(knights_kind(rows * cols, heuristic, tie_break, first))
    budget.start()  # after loading the kernels (compile_ns), before the board's tables
    return knights_kernel.run_knights(rows, cols, start_sq, moves, heuristic, tie_break,
                                      first, bool(closed), budget, seed,
                                      {"compile_ns": compile_ns})


def solve_queens_compiled(
    n: int,
    mode: str | Mode = Mode.FIRST,
    unique: bool = False,
    max_nodes: int | None = None,
    max_seconds: float | None = None,
    max_backtracks: int | None = None,
) -> SearchResult:
    """N-Queens by row-by-row backtracking on bit masks, compiled.

    Args:
        n: board size, 1 <= n <= 64.
        mode: ``first`` (stop at the first solution) or ``count`` (all).
        unique: in ``count`` mode, count solutions up to the 8 symmetries of
            the square (OEIS A002562); ``extra["all_solutions"]`` keeps the
            plain count (OEIS A000170).
        max_nodes: node budget (queens placed), or None.
        max_seconds: time budget (wall seconds), or None.
        max_backtracks: backtrack budget (0: greedy), or None.

    Returns:
        A :class:`SearchResult`: counters as in
        :mod:`btlab.experiments.compiled.queens_kernel` (n = 8, ``count``: 92
        solutions, 2,056 nodes, 15,720 checks); ``solution`` is the first
        solution found, the queen's column for each row, or None;
        ``extra["compile_ns"]`` as for :func:`solve_knights_compiled`.

    Raises:
        ValueError: n outside 1..64, an unknown mode, ``unique`` outside
            ``count`` mode, or a bad budget.
    """
    n = operator.index(n)
    if not 1 <= n <= queens_kernel.MAX_N:
        raise ValueError(f"n must be between 1 and {queens_kernel.MAX_N} for the compiled "
                         f"N-Queens kernel, got {n}")
    first = Mode(mode) is Mode.FIRST
    if unique and first:
        raise ValueError("unique counting needs mode='count'")
    budget = Budget(max_nodes, max_seconds, max_backtracks)
    compile_ns = warm_up("queens")
    budget.start()  # after loading the kernels (compile_ns)
    return queens_kernel.run_queens(n, first, bool(unique), budget, {"compile_ns": compile_ns})


def knights_subtree_compiled(
    rows: int,
    cols: int,
    path: Sequence[int],
    *,
    mode: str | Mode = Mode.FIRST,
    heuristic: str = "none",
    tie_break: str = "move_order",
    move_order: Sequence[Sequence[int]] = DEFAULT_MOVE_ORDER,
    closed: bool = False,
    max_nodes: int | None = None,
    max_seconds: float | None = None,
    seed: int = 0,
) -> SearchResult:
    """The subtree of one placement of the knight's-tour search, compiled.

    Counts exactly as :func:`btlab.experiments.knights.solve.search_subtree`: ``path`` runs
    from the start square down to the subtree's root (``path[-1]``, at depth
    ``len(path)``); the result is what placing the root adds to the counters
    of the whole search (the root and everything below it; the root is a
    backtrack when its subtree holds no reported tour). A node budget counts
    the subtree's placements only. ``path`` of length 1 is the whole search
    (:func:`solve_knights_compiled`).

    Args:
        rows, cols: board size, each >= 1.
        path: square indices ``row * cols + col``, length 1..rows*cols,
            distinct, each a knight's move (of ``move_order``) from the one before.
        mode, heuristic, tie_break, move_order, closed, max_nodes, max_seconds,
        seed: as :func:`solve_knights_compiled` (the ``random`` tie-break's
            stream starts afresh at ``seed`` in the subtree, so it does not
            reproduce the whole search's draws).

    The kernel runs in chunks of :data:`._driver.CHUNK_EVERY` placements,
    returning to Python between two, so that a cancelled Ray task (a
    KeyboardInterrupt) stops within milliseconds.

    Returns:
        A :class:`SearchResult`; ``solution``, the first tour found below,
        starts with ``path``.

    Raises:
        ValueError: a bad board, path, mode, heuristic, tie-break, move order
            or budget.
    """
    path = tuple(operator.index(sq) for sq in path)
    if not path:
        raise ValueError("a subtree needs a path of at least one placement")
    size = rows * cols if rows >= 1 and cols >= 1 else 0
    if any(not 0 <= sq < size for sq in path):
        raise ValueError(f"every square of the path must be in 0..{size - 1} on a {rows} x "
                         f"{cols} board, got {list(path)}")
    start = divmod(path[-1], cols)
    root_sq, moves, first = knights_kernel.check_arguments(
        rows, cols, start, mode, heuristic, tie_break, move_order)
    if len(set(path)) != len(path):
        raise ValueError(f"the path visits a square twice: {list(path)}")
    steps = {tuple(m) for m in moves}
    for a, b in zip(path, path[1:]):
        (ra, ca), (rb, cb) = divmod(a, cols), divmod(b, cols)
        if (rb - ra, cb - ca) not in steps:
            raise ValueError(f"squares {a} and {b} of the path are not a knight's move apart")
    budget = Budget(max_nodes, max_seconds)
    compile_ns = warm_up(knights_kind(rows * cols, heuristic, tie_break, first))
    return knights_kernel.run_knights(rows, cols, root_sq, moves, heuristic, tie_break, first,
                                      bool(closed), budget, seed, {"compile_ns": compile_ns},
                                      prefix=path[:-1], chunked=True)


def queens_subtree_compiled(
    n: int,
    prefix: Sequence[int],
    mode: str | Mode = Mode.FIRST,
    unique: bool = False,
    max_nodes: int | None = None,
    max_seconds: float | None = None,
) -> SearchResult:
    """The subtree of one queen of the bit-mask N-Queens search, compiled.

    Counts exactly as :func:`btlab.experiments.queens.solve.search_subtree`: ``prefix``
    holds the columns of rows 0..d-1; the queens of rows 0..d-2 are on the
    board and ``prefix[-1]`` roots the subtree. ``nodes`` counts the root and
    every queen below it, ``checks`` the squares tested in rows d.., the root
    is a backtrack when its subtree holds no solution and a dead end when row
    d has no safe square. An empty prefix is the whole search
    (:func:`solve_queens_compiled`).

    Args:
        n: board size, 1 <= n <= 64.
        prefix: 0..n columns, each in 0..n-1, a safe partial placement.
        mode, unique, max_nodes, max_seconds: as :func:`solve_queens_compiled`
            (the node budget counts the subtree's queens).

    Runs in chunks as :func:`knights_subtree_compiled` does (cancellable).

    Returns:
        A :class:`SearchResult`; ``solution`` is the first complete placement below.

    Raises:
        ValueError: n outside 1..64, a prefix longer than n, off the board or
            not safe, an unknown mode, ``unique`` outside ``count`` mode, a bad budget.
    """
    n = operator.index(n)
    if not 1 <= n <= queens_kernel.MAX_N:
        raise ValueError(f"n must be between 1 and {queens_kernel.MAX_N} for the compiled "
                         f"N-Queens kernel, got {n}")
    prefix = tuple(operator.index(c) for c in prefix)
    if len(prefix) > n or any(not 0 <= c < n for c in prefix):
        raise ValueError(f"prefix must hold at most {n} columns in 0..{n - 1}, got {list(prefix)}")
    first = Mode(mode) is Mode.FIRST
    if unique and first:
        raise ValueError("unique counting needs mode='count'")
    budget = Budget(max_nodes, max_seconds)
    compile_ns = warm_up("queens")
    return queens_kernel.run_queens(n, first, bool(unique), budget, {"compile_ns": compile_ns},
                                    prefix=prefix, chunked=True)
