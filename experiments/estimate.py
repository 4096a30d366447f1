"""Knuth's random-probe estimate of a count-mode search tree's size, before running it.

D. E. Knuth, "Estimating the efficiency of backtrack programs", Mathematics of
Computation 29 (1975), 121-136. A *probe* walks from the root of the
backtrack tree to a leaf, choosing at every node one of its children
uniformly at random. If the nodes on the probe's path have d_1, d_2, ...
children (d_1 at the root), the probe's estimate of the number of nodes below
the root is::

    X = d_1 + d_1 d_2 + d_1 d_2 d_3 + ...   (up to the leaf, where d = 0)

and E[X] is exactly that number (each product is 1 / the probability of
reaching the node it stands for). The mean of K independent probes estimates
the tree's size without bias; its standard error is the probes' sample
standard deviation over sqrt(K).

What is estimated is the ``nodes`` counter of the same trial in ``count``
mode (``docs/metrics.md``), the placements of the whole enumeration:

* knight's tour: the start square is placement 1, so X = 1 + d_1 + d_1 d_2 +
  ...; a node's children are its unvisited onward squares (a full board has
  none). ``closed`` decides only which full boards are tours, not the tree.
* N-Queens: the root is the empty board (not a placement); a node's children
  are the safe squares of the next row. ``unique`` decides only which
  solutions are counted, not the tree (count mode walks every placement).

In count mode the tree does not depend on the move order, the heuristic or
the tie-break (they order children, never drop one), so the estimate does
not take them. The same probes also estimate the count-mode ``solutions``
(Knuth's estimator applied to the cost "1 at a solution"): a probe ending on
a solution contributes the product of the branching factors above it, any
other probe 0.

Random draws: one SplitMix64 stream seeded with ``seed``
(:class:`btlab.experiments.knights.ordering.SplitMix64`, the stream of the random move
order) runs through all probes; a node with d >= 2 children takes the child
of index ``next() mod d`` in the order the search lists them (knight's tour:
the default move order; N-Queens: columns ascending), a node with one child
draws nothing. The compiled engine
(:mod:`btlab.experiments.compiled.estimate_kernel`) draws the same numbers and does
the same float arithmetic, so both engines return equal :class:`Estimate`
values for a seed (under a time budget they may stop at different points).
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass

from btlab.experiments.core import (
    SCALE_DOWN,
    SCALE_DOWN2,
    SCALE_LIMIT,
    SCALE_STEP,
    SCALE_UP,
    Budget,
    SearchResult,
    Status,
)
from btlab.experiments.estimators import DEFAULT, KNUTH, Estimator
from btlab.experiments.knights.ordering import KnightBoard, SplitMix64
from btlab.experiments.loading import interrupts_held
from btlab.experiments.queens.symmetry import is_canonical

__all__ = ["ENGINES", "Estimate", "Moments", "as_result", "estimate_knights", "estimate_queens",
           "knuth_knights", "knuth_queens", "warm_kind"]

#: The engines of the estimator.
ENGINES = ("python", "compiled")


@dataclass(frozen=True)
class Estimate:
    """Knuth's estimate of a count-mode tree, from ``probes`` random probes.

    Attributes:
        status: :attr:`Status.EXHAUSTED` when every probe asked for ran,
            :attr:`Status.NODE_LIMIT` / :attr:`Status.TIME_LIMIT` when a budget
            stopped them (the estimates are then over the probes finished).
        estimate: mean over the finished probes of their estimates of the
            count-mode ``nodes`` (placements), or None when none finished.
            ``inf`` when a probe's products overflow float64 (above ~1.8e308).
        estimate_se: the standard error of ``estimate``: the probes' sample
            standard deviation (divisor probes - 1) over sqrt(probes); None with
            fewer than 2 finished probes.
        probes: probes finished.
        nodes: placements the probes made (an unfinished probe's included).
        checks: candidates the probes tested (knight's tour: onward squares
            looked at, the on-board neighbours of each square a probe left;
            N-Queens: n squares per row a probe listed, the empty board's
            row 0 included), as the count-mode search counts them.
        max_depth: the most placements on one probe's path.
        solutions_estimate: the same probes' estimate of the count-mode
            ``solutions`` (with ``closed``, closed tours; with ``unique``,
            solutions up to symmetry), or None when no probe finished.
        solutions_estimate_se: its standard error, as ``estimate_se``.
    """

    status: Status
    estimate: float | None
    estimate_se: float | None
    probes: int
    nodes: int
    checks: int
    max_depth: int
    solutions_estimate: float | None = None
    solutions_estimate_se: float | None = None


def as_result(est: Estimate) -> SearchResult:
    """``est`` as the row of a ``mode: estimate`` trial: the probes' own cost as the
    counters (``nodes``, ``checks``, ``max_depth``; a probe never backtracks, so
    ``backtracks``, ``dead_ends`` and ``solutions`` are 0), the estimates, and the
    probes finished as the extra counter ``probes_done`` (fewer than ``probes`` when a
    budget stopped them)."""
    return SearchResult(est.status, est.nodes, 0, 0, est.checks, 0, est.max_depth,
                        extra={"probes_done": est.probes},
                        estimate=est.estimate, estimate_se=est.estimate_se,
                        solutions_estimate=est.solutions_estimate,
                        solutions_estimate_se=est.solutions_estimate_se)


class Moments:
    """Running mean and sum of squared deviations (B. P. Welford, Technometrics 4, 1962).

    Numerically stable for the wide-ranging values of Knuth's estimator; the
    compiled kernel updates its copy with the same operations in the same
    order, so both engines end with the same floats. The moments are kept in
    units of 2^shift (``shift`` a multiple of :data:`SCALE_STEP`, 0 until a value
    passes :data:`SCALE_LIMIT`), so that a tree above 10^154 placements has a
    finite standard error beside its finite mean.
    """

    __slots__ = ("count", "mean", "m2", "shift")

    def __init__(self) -> None:
        self.count = 0
        self.mean = 0.0
        self.m2 = 0.0
        self.shift = 0.0

    def add(self, x: float) -> None:
        """Add one value; an infinite one (an overflowing probe) makes the mean and M2
        infinite for good (rather than the NaN of inf - inf)."""
        self.count += 1
        if x == math.inf or self.mean == math.inf:
            self.mean = self.m2 = math.inf
            return
        for _ in range(int(self.shift) // SCALE_STEP):
            x *= SCALE_DOWN
        while x > SCALE_LIMIT:
            x *= SCALE_DOWN
            self.mean *= SCALE_DOWN
            self.m2 *= SCALE_DOWN2
            self.shift += SCALE_STEP
        delta = x - self.mean
        self.mean += delta / self.count
        self.m2 += delta * (x - self.mean)

    def summary(self) -> tuple[float | None, float | None]:
        """``(mean, standard error of the mean)``; None where there are too few values."""
        return summarise(self.count, self.mean, self.m2, self.shift)


def summarise(count: int, mean: float, m2: float,
              shift: float = 0.0) -> tuple[float | None, float | None]:
    """``(mean, sample std / sqrt(count))`` from Welford's moments in units of 2^shift.

    The mean is None for ``count == 0``, the standard error for ``count < 2``;
    an infinite mean (an overflowing probe) has an infinite standard error.
    """
    steps = int(shift) // SCALE_STEP
    if count == 0:
        return None, None
    for _ in range(steps):
        mean *= SCALE_UP
    if count < 2:
        return mean, None
    if math.isinf(mean):
        return mean, math.inf
    se = math.sqrt(max(m2, 0.0) / (count - 1) / count)
    for _ in range(steps):
        se *= SCALE_UP
    return mean, se


def make_estimate(status: Status, probes: int, nodes: int, checks: int, max_depth: int,
                  moments: tuple[float, float, float, float, float, float]) -> Estimate:
    """Build an :class:`Estimate` from counters and the Welford moments
    ``(mean, m2, shift, solutions mean, solutions m2, solutions shift)`` over ``probes``
    finished probes (:class:`Moments`)."""
    mean, se = summarise(probes, moments[0], moments[1], moments[2])
    smean, sse = summarise(probes, moments[3], moments[4], moments[5])
    return Estimate(status, mean, se, probes, nodes, checks, max_depth, smean, sse)


def check_common(probes: int, seed: int, engine: str) -> tuple[int, int]:
    """Validate the arguments both problems share; return ``(probes, seed)`` as ints.

    Raises:
        ValueError: probes not an integer >= 1, seed not an integer, an unknown engine.
    """
    probes = _integer("probes", probes, "an integer >= 1")
    if probes < 1:
        raise ValueError(f"probes must be an integer >= 1, got {probes}")
    seed = _integer("seed", seed, "an integer")
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}; expected one of {ENGINES}")
    return probes, seed


def _integer(name: str, value: object, expected: str) -> int:
    """``value`` as an int; ValueError naming ``name`` for a bool, float or other non-integer."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be {expected}, got {value!r}")
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise ValueError(f"{name} must be {expected}, got {value!r}") from None


def knuth_knights(rows: int, cols: int, start: tuple[int, int], *, closed: bool, probes: int,
                  seed: int, max_nodes: int | None = None, max_seconds: float | None = None,
                  engine: str = "python") -> Estimate:
    """Estimate the count-mode ``nodes`` of a knight's-tour trial by ``probes`` random probes.

    Args:
        rows, cols: board size, each >= 1.
        start: the start square (row, col), 0-based.
        closed: closed tours only (changes ``solutions_estimate``, not the tree).
        probes: probes to run, >= 1 (each walks at most ``rows * cols`` placements).
        seed: seed of the SplitMix64 stream that chooses the children.
        max_nodes: budget of placements over all probes, or None: a probe that
            needs placement ``max_nodes + 1`` stops (unfinished, left out of the
            estimate) with :attr:`Status.NODE_LIMIT`.
        max_seconds: wall-clock budget, or None (:attr:`Status.TIME_LIMIT`).
        engine: ``python`` or ``compiled`` (numba; equal results for a seed).

    Returns:
        An :class:`Estimate` (see there for units); ``checks`` counts the
        on-board neighbours of every square a probe left, as count mode does.

    Raises:
        ValueError: a bad board, start square, probes, seed, budget or engine.

    Source: D. E. Knuth, Math. Comp. 29 (1975) 121-136.
    """
    probes, seed = check_common(probes, seed, engine)
    board = KnightBoard(rows, cols)
    start_sq = board.square(*start)
    budget = Budget(max_nodes, max_seconds)
    if engine == "compiled":
        with interrupts_held():  # whole, even if cancelled (btlab.experiments.loading)
            # heavy: numba loads on import
            from btlab.experiments.compiled import warm_up
            from btlab.experiments.compiled.estimate_kernel import run_knights_probes
        warm_up("estimate:knights")  # before the clock starts: compiling is not probing
        return make_estimate(*run_knights_probes(rows, cols, start_sq, bool(closed), probes,
                                                 seed, budget))
    budget.start()
    if not board.build_tables(budget.out_of_time, degrees=False):
        return make_estimate(Status.TIME_LIMIT, 0, 0, 0, 0, (0.0,) * 6)
    return _knights_probes(board, start_sq, bool(closed), probes, seed, budget)


def _knights_probes(board: KnightBoard, start: int, closed: bool, probes: int, seed: int,
                    budget: Budget) -> Estimate:
    nbrs = board.neighbours
    size = board.size
    visited = bytearray(size)
    path: list[int] = []
    rng = SplitMix64(seed)
    cap = budget.node_cap
    clock_mask = Budget.clock_mask(1)
    tree, sols = Moments(), Moments()
    nodes = checks = max_depth = 0
    status = Status.EXHAUSTED
    origin_nbrs = set(nbrs[start])
    for _ in range(probes):
        for sq in path:
            visited[sq] = 0
        path.clear()
        sq = start
        product = 1.0   # product of the branching factors above sq
        total = 0.0     # the probe's estimate so far
        while True:
            # -- place sq --
            if nodes >= cap:
                status = Status.NODE_LIMIT
                break
            if not (nodes & clock_mask) and budget.out_of_time():
                status = Status.TIME_LIMIT
                break
            nodes += 1
            visited[sq] = 1
            path.append(sq)
            total += product
            if len(path) == size:
                solution = not closed or sq in origin_nbrs
                break
            around = nbrs[sq]
            checks += len(around)
            cands = [c for c in around if not visited[c]]
            d = len(cands)
            if d == 0:
                solution = False
                break
            product *= d
            sq = cands[rng.next() % d] if d > 1 else cands[0]
        max_depth = max(max_depth, len(path))
        if status is not Status.EXHAUSTED:
            break
        tree.add(total)
        sols.add(product if solution else 0.0)
    return make_estimate(status, tree.count, nodes, checks, max_depth,
                         (tree.mean, tree.m2, tree.shift, sols.mean, sols.m2, sols.shift))


def knuth_queens(n: int, *, unique: bool, probes: int, seed: int, max_nodes: int | None = None,
                 max_seconds: float | None = None, engine: str = "python") -> Estimate:
    """Estimate the count-mode ``nodes`` of an N-Queens trial by ``probes`` random probes.

    The tree is the row-by-row tree of the ``recursive``, ``iterative``,
    ``amb`` and ``bitmask`` strategies (``count`` mode: 2,056 placements for
    n = 8, 856,188 for n = 12).

    Args:
        n: board size, >= 1 (at most 64 with the compiled engine).
        unique: count solutions up to the 8 symmetries of the square (changes
            ``solutions_estimate`` only: count mode walks the whole tree anyway).
        probes: probes to run, >= 1 (each places at most n queens).
        seed: seed of the SplitMix64 stream that chooses the children.
        max_nodes, max_seconds, engine: as :func:`knuth_knights`.

    Returns:
        An :class:`Estimate`; ``checks`` counts n squares per row listed (the
        empty board's row 0 included), as count mode does.

    Raises:
        ValueError: n < 1 (or > 64 compiled), bad probes, seed, budget or engine.

    Source: D. E. Knuth, Math. Comp. 29 (1975) 121-136.
    """
    probes, seed = check_common(probes, seed, engine)
    n = operator.index(n)
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    budget = Budget(max_nodes, max_seconds)
    if engine == "compiled":
        with interrupts_held():  # whole, even if cancelled (btlab.experiments.loading)
            # heavy: numba loads on import
            from btlab.experiments.compiled import warm_up
            from btlab.experiments.compiled.estimate_kernel import MAX_N, run_queens_probes
        if n > MAX_N:
            raise ValueError(f"n must be between 1 and {MAX_N} for the compiled engine, "
                             f"got {n}")
        warm_up("estimate:queens")
        return make_estimate(*run_queens_probes(n, bool(unique), probes, seed, budget))
    budget.start()
    return _queens_probes(n, bool(unique), probes, seed, budget)


def _queens_probes(n: int, unique: bool, probes: int, seed: int, budget: Budget) -> Estimate:
    full = (1 << n) - 1
    rng = SplitMix64(seed)
    cap = budget.node_cap
    clock_mask = Budget.clock_mask(n)
    tree, sols = Moments(), Moments()
    nodes = checks = max_depth = 0
    status = Status.EXHAUSTED
    placement = [0] * n
    for _ in range(probes):
        cols = left = right = 0   # attacked columns and diagonals of the row to fill
        product = 1.0
        total = 0.0
        row = 0
        solution = False
        while True:
            # -- list the safe squares of row `row`: the children of the node above --
            checks += n
            free = full & ~(cols | left | right)
            d = free.bit_count()
            if d == 0:
                break
            product *= d
            j = rng.next() % d if d > 1 else 0
            for _skip in range(j):  # drop the j lowest safe columns
                free &= free - 1
            bit = free & -free
            # -- place the queen --
            if nodes >= cap:
                status = Status.NODE_LIMIT
                break
            if not (nodes & clock_mask) and budget.out_of_time():
                status = Status.TIME_LIMIT
                break
            nodes += 1
            total += product
            placement[row] = bit.bit_length() - 1
            row += 1
            if row == n:
                solution = not unique or is_canonical(placement)
                break
            cols |= bit
            left = ((left | bit) << 1) & full
            right = (right | bit) >> 1
        max_depth = max(max_depth, row)
        if status is not Status.EXHAUSTED:
            break
        tree.add(total)
        sols.add(product if solution else 0.0)
    return make_estimate(status, tree.count, nodes, checks, max_depth,
                         (tree.mean, tree.m2, tree.shift, sols.mean, sols.m2, sols.shift))



def estimate_knights(rows: int, cols: int, start: tuple[int, int], *, closed: bool,
                     probes: int, seed: int, estimator: Estimator = DEFAULT,
                     max_nodes: int | None = None, max_seconds: float | None = None,
                     engine: str = "python") -> Estimate:
    """Estimate the count-mode ``nodes`` and ``solutions`` of a knight's-tour trial.

    ``knuth`` is :func:`knuth_knights`. ``importance`` and ``perm``
    (:mod:`btlab.experiments.estimators`) draw a child with probability proportional
    to ``exp(-beta * d)``, where d is the child's unvisited onward degree (Warnsdorff's
    count; ``beta = 0`` draws uniformly), and weight each walker by the inverse of the
    probabilities it drew (see "Weighted probes" in this module's docs).

    Args:
        rows, cols, start, closed, seed, max_nodes, max_seconds, engine: as
            :func:`knuth_knights`.
        probes: probes to run, >= 1: with ``perm``, a probe is one population of
            ``population`` walkers, and its estimate one value of the mean.
        estimator: the method and its parameters.

    Returns:
        An :class:`Estimate`; ``nodes`` counts every walker's placements.

    Raises:
        ValueError: a bad board, start square, probes, seed, budget or engine.
    """
    if estimator.method == KNUTH:
        return knuth_knights(rows, cols, start, closed=closed, probes=probes, seed=seed,
                             max_nodes=max_nodes, max_seconds=max_seconds, engine=engine)
    probes, seed = check_common(probes, seed, engine)
    board = KnightBoard(rows, cols)
    start_sq = board.square(*start)
    budget = Budget(max_nodes, max_seconds)
    weights = knights_weights(float(estimator["beta"]))
    population = population_of(estimator)
    if engine == "compiled":
        with interrupts_held():  # whole, even if cancelled (btlab.experiments.loading)
            # heavy: numba loads on import
            from btlab.experiments.compiled import warm_up
            from btlab.experiments.compiled.estimators_kernel import run_knights_weighted
        warm_up(warm_kind("knights", estimator))
        return make_estimate(*run_knights_weighted(rows, cols, start_sq, bool(closed), probes,
                                                   seed, budget, weights, population))
    budget.start()
    if not board.build_tables(budget.out_of_time, degrees=False):
        return make_estimate(Status.TIME_LIMIT, 0, 0, 0, 0, (0.0,) * 6)
    return _knights_weighted(board, start_sq, bool(closed), probes, seed, budget, weights,
                             population)


def estimate_queens(n: int, *, unique: bool, probes: int, seed: int,
                    estimator: Estimator = DEFAULT, max_nodes: int | None = None,
                    max_seconds: float | None = None, engine: str = "python") -> Estimate:
    """Estimate the count-mode ``nodes`` and ``solutions`` of an N-Queens trial.

    ``knuth`` is :func:`knuth_queens`. ``importance`` and ``perm`` draw the queen of
    a row with probability proportional to ``exp(beta * f)``, where f is the number of
    safe squares the placement leaves in the next row (0 in the last row).

    Args:
        n, unique, seed, max_nodes, max_seconds, engine: as :func:`knuth_queens`.
        probes, estimator: as :func:`estimate_knights`.

    Returns:
        An :class:`Estimate`.

    Raises:
        ValueError: n < 1 (or > 64 compiled), bad probes, seed, budget or engine.
    """
    if estimator.method == KNUTH:
        return knuth_queens(n, unique=unique, probes=probes, seed=seed, max_nodes=max_nodes,
                            max_seconds=max_seconds, engine=engine)
    probes, seed = check_common(probes, seed, engine)
    n = operator.index(n)
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    budget = Budget(max_nodes, max_seconds)
    weights = queens_weights(float(estimator["beta"]), n)
    population = population_of(estimator)
    if engine == "compiled":
        with interrupts_held():  # whole, even if cancelled (btlab.experiments.loading)
            # heavy: numba loads on import
            from btlab.experiments.compiled import warm_up
            from btlab.experiments.compiled.estimate_kernel import MAX_N
            from btlab.experiments.compiled.estimators_kernel import run_queens_weighted
        if n > MAX_N:
            raise ValueError(f"n must be between 1 and {MAX_N} for the compiled engine, "
                             f"got {n}")
        warm_up(warm_kind("queens", estimator))
        return make_estimate(*run_queens_weighted(n, bool(unique), probes, seed, budget,
                                                  weights, population))
    budget.start()
    return _queens_weighted(n, bool(unique), probes, seed, budget, weights, population)


def knights_weights(beta: float) -> list[float]:
    """The proposal weights of the knight's tour: ``exp(-beta * d)`` for onward degree
    d = 0 .. 8, computed once here (both engines use this table)."""
    return [math.exp(-beta * d) for d in range(9)]


def queens_weights(beta: float, n: int) -> list[float]:
    """The proposal weights of N-Queens: ``exp(beta * f)`` for f = 0 .. n safe squares
    left in the next row, computed once here (both engines use this table)."""
    return [math.exp(beta * f) for f in range(n + 1)]


def population_of(estimator: Estimator) -> int:
    """The walkers of one probe: ``population`` for ``perm``, 1 for ``importance``."""
    return int(estimator["population"]) if estimator.method == "perm" else 1


#: 2^-53: a SplitMix64 output's top 53 bits times this is uniform on [0, 1).
UNIT = 2.0 ** -53


def choose(rng: SplitMix64, ws: list[float], total: float) -> int:
    """The index drawn with probability ``ws[j] / total`` from one SplitMix64 output:
    ``u = (next() >> 11) * 2^-53 * total``, the first j whose running sum of ``ws`` passes
    u (the last index if rounding leaves u beyond them). The compiled kernels draw alike."""
    u = (rng.next() >> 11) * UNIT * total
    j = 0
    acc = ws[0]
    last = len(ws) - 1
    while j < last and u >= acc:
        j += 1
        acc += ws[j]
    return j


def heaviest(weights: list[float], alive: list[bool]) -> int:
    """The index of the largest weight among the live walkers (the lowest index of equal
    ones): the walker that splits into a dead one's place (``perm``)."""
    best = -1
    top = -1.0
    for k, w in enumerate(weights):
        if alive[k] and w > top:
            top = w
            best = k
    return best


def enrich(weight: list[float], alive: list[bool]) -> list[tuple[int, int]]:
    """Split the heaviest living walker into each dead one's place, in index order: for
    each dead walker i, the walker k of :func:`heaviest` halves its weight, i takes the
    other half and comes alive. Returns the ``(i, k)`` pairs, for the caller to copy
    walker k's state into walker i (``perm``; the compiled kernels do the same)."""
    pairs = []
    for i, ok in enumerate(alive):
        if not ok:
            k = heaviest(weight, alive)
            weight[k] *= 0.5
            weight[i] = weight[k]
            alive[i] = True
            pairs.append((i, k))
    return pairs


def _knights_weighted(board: KnightBoard, start: int, closed: bool, probes: int, seed: int,
                      budget: Budget, weights: list[float], population: int) -> Estimate:
    """The python engine of ``importance`` (population 1) and ``perm`` on the knight's tour."""
    nbrs = board.neighbours
    size = board.size
    rng = SplitMix64(seed)
    cap = budget.node_cap
    clock_mask = Budget.clock_mask(1)
    tree, sols = Moments(), Moments()
    nodes = checks = max_depth = 0
    status = Status.EXHAUSTED
    origin = set(nbrs[start])
    base = [len(nbrs[sq]) for sq in range(size)]
    for sq in nbrs[start]:
        base[sq] -= 1
    share = 1.0   # weights in units of 1 / population: exact for a forced walk
    for _ in range(probes):
        # a walker: its visited squares, unvisited onward degrees, square; and its weight
        walkers: list[tuple[bytearray, list[int], int]] = []
        for _w in range(population):   # -- place the start square, once per walker --
            if nodes >= cap:
                status = Status.NODE_LIMIT
                break
            if not (nodes & clock_mask) and budget.out_of_time():
                status = Status.TIME_LIMIT
                break
            nodes += 1
            visited = bytearray(size)
            visited[start] = 1
            walkers.append((visited, base.copy(), start))
        if status is not Status.EXHAUSTED:
            break
        weight = [share] * population
        alive = [True] * population
        max_depth = max(max_depth, 1)
        total = 1.0    # the probe's estimate of the tree so far
        solutions = 1.0 if size == 1 and not closed else 0.0
        for depth in range(2, size + 1):
            level = 0.0    # the estimate of the nodes at this depth
            for i, (visited, deg, cur) in enumerate(walkers):
                around = nbrs[cur]
                checks += len(around)
                cands = [c for c in around if not visited[c]]
                if not cands:
                    alive[i] = False
                    continue
                ws = [weights[deg[c]] for c in cands]
                s = 0.0
                for w in ws:
                    s += w
                j = choose(rng, ws, s) if len(cands) > 1 else 0
                sq = cands[j]
                if nodes >= cap:
                    status = Status.NODE_LIMIT
                    break
                if not (nodes & clock_mask) and budget.out_of_time():
                    status = Status.TIME_LIMIT
                    break
                nodes += 1
                weight[i] *= s / ws[j]
                level += weight[i]
                visited[sq] = 1
                for c in nbrs[sq]:
                    deg[c] -= 1
                walkers[i] = (visited, deg, sq)
            if status is not Status.EXHAUSTED:
                break
            if level == 0.0:
                break
            max_depth = max(max_depth, depth)
            total += level / population
            if depth == size:
                if not closed:
                    solutions = level / population
                else:
                    for i, (_v, _d, cur) in enumerate(walkers):
                        solutions += weight[i] if alive[i] and cur in origin else 0.0
                    solutions /= population
                break
            for i, k in enrich(weight, alive):
                visited, deg, cur = walkers[k]
                walkers[i] = (visited.copy(), deg.copy(), cur)
        if status is not Status.EXHAUSTED:
            break
        tree.add(total)
        sols.add(solutions)
    return make_estimate(status, tree.count, nodes, checks, max_depth,
                         (tree.mean, tree.m2, tree.shift, sols.mean, sols.m2, sols.shift))


def _queens_weighted(n: int, unique: bool, probes: int, seed: int, budget: Budget,
                     weights: list[float], population: int) -> Estimate:
    """The python engine of ``importance`` (population 1) and ``perm`` on N-Queens."""
    full = (1 << n) - 1
    rng = SplitMix64(seed)
    cap = budget.node_cap
    clock_mask = Budget.clock_mask(n)
    tree, sols = Moments(), Moments()
    nodes = checks = max_depth = 0
    status = Status.EXHAUSTED
    share = 1.0   # weights in units of 1 / population: exact for a forced walk
    for _ in range(probes):
        # a walker: attacked columns, left and right diagonals of its next row, queens
        walkers: list[tuple[int, int, int, list[int]]] = [(0, 0, 0, [])] * population
        weight = [share] * population
        alive = [True] * population
        total = 0.0
        solutions = 0.0
        for row in range(n):
            level = 0.0
            for i, (cols, left, right, placement) in enumerate(walkers):
                checks += n
                free = full & ~(cols | left | right)
                if not free:
                    alive[i] = False
                    continue
                bits = []
                f = free
                while f:
                    bits.append(f & -f)
                    f &= f - 1
                ws = []
                for bit in bits:
                    after = full & ~((cols | bit) | (((left | bit) << 1) & full)
                                     | ((right | bit) >> 1)) if row + 1 < n else 0
                    ws.append(weights[after.bit_count()])
                s = 0.0
                for w in ws:
                    s += w
                j = choose(rng, ws, s) if len(bits) > 1 else 0
                bit = bits[j]
                if nodes >= cap:
                    status = Status.NODE_LIMIT
                    break
                if not (nodes & clock_mask) and budget.out_of_time():
                    status = Status.TIME_LIMIT
                    break
                nodes += 1
                weight[i] *= s / ws[j]
                level += weight[i]
                walkers[i] = (cols | bit, ((left | bit) << 1) & full, (right | bit) >> 1,
                              [*placement, bit.bit_length() - 1])
            if status is not Status.EXHAUSTED:
                break
            if level == 0.0:
                break
            max_depth = max(max_depth, row + 1)
            total += level / population
            if row + 1 == n:
                if not unique:
                    solutions = level / population
                else:
                    for i, walker in enumerate(walkers):
                        ok = alive[i] and is_canonical(walker[3])
                        solutions += weight[i] if ok else 0.0
                    solutions /= population
                break
            for i, k in enrich(weight, alive):
                walkers[i] = walkers[k]   # a tuple of ints and a list never changed in place
        if status is not Status.EXHAUSTED:
            break
        tree.add(total)
        sols.add(solutions)
    return make_estimate(status, tree.count, nodes, checks, max_depth,
                         (tree.mean, tree.m2, tree.shift, sols.mean, sols.m2, sols.shift))


def warm_kind(problem: str, estimator: Estimator) -> str:
    """The warm-up key (:func:`btlab.experiments.compiled.warm_up`) of the compiled kernel
    that runs ``estimator`` on ``problem`` (``knights`` or ``queens``)."""
    if estimator.method == KNUTH:
        return f"estimate:{problem}"
    return f"estimate:{problem}:weighted"
