"""Compiled Knuth probes: the estimator of :mod:`btlab.experiments.estimate` in numba.

The kernels run the probes of :func:`btlab.experiments.estimate.knuth_knights` and
:func:`btlab.experiments.estimate.knuth_queens` with the same SplitMix64 stream, the
same draws (``next() mod d`` at a node with d >= 2 children, none with one),
the same float operations in the same order (the product of the branching
factors, the probe's running sum, B. P. Welford's update of the mean and the
sum of squared deviations) and the same counters, so both engines return
equal :class:`~btlab.experiments.estimate.Estimate` values for a seed under a node
budget or none. Source: D. E. Knuth, "Estimating the efficiency of backtrack
programs", Math. Comp. 29 (1975) 121-136.

Time budget: the kernels keep their state in arrays and return
:data:`._driver.PAUSED` between two probes once :data:`._driver.PAUSE_EVERY`
placements have passed since the call began; the Python driver reads the
clock then (a probe is at most ``rows * cols`` placements, or n queens).
Without a time limit they pause every :data:`._driver.CHUNK_EVERY` placements,
so that Ctrl-C and SIGTERM stop even ``probes: 2**40`` within milliseconds; the
probes resume from the arrays, their results unchanged.
Under a time limit the counters are those reached when the clock was read
and need not equal the python engine's.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from btlab.experiments.compiled._driver import EXHAUSTED as _EXHAUSTED
from btlab.experiments.compiled._driver import NODE_LIMIT as _NODE_LIMIT
from btlab.experiments.compiled._driver import PAUSE_EVERY, drive, pause_every  # noqa: F401 - PAUSE_EVERY: documented here
from btlab.experiments.compiled._driver import PAUSED as _PAUSED
from btlab.experiments.compiled.knights import kernel as knights_kernel
from btlab.experiments.compiled.queens_kernel import _is_canonical
from btlab.experiments.core import SCALE_DOWN, SCALE_DOWN2, SCALE_LIMIT, SCALE_STEP, Budget, Status
from btlab.experiments.knights.board import DEFAULT_MOVE_ORDER

__all__ = ["MAX_N", "run_knights_probes", "run_queens_probes", "warm_up"]

#: Largest n of the N-Queens probes: the masks are uint64.
MAX_N = 64

# Indices into the int64 parameter array.
P_START, P_CLOSED, P_UNIQUE, P_PROBES, P_CAP, P_PAUSE, P_N = range(7)
N_PARAMS = 7
# Indices into the int64 state array.
S_NODES, S_CHECKS, S_MAX_DEPTH, S_PROBES = range(4)
N_STATE = 4
# Indices into the float64 moments array (Welford: mean, sum of squared deviations and
# the power of two they are in units of; btlab.experiments.estimate.Moments).
M_MEAN, M_M2, M_SHIFT, M_SMEAN, M_SM2, M_SSHIFT = range(6)
N_MOMENTS = 6

_U64_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_U64_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_U64_MIX2 = np.uint64(0x94D049BB133111EB)
_U30, _U27, _U31 = np.uint64(30), np.uint64(27), np.uint64(31)
_ONE = np.uint64(1)
_ZERO = np.uint64(0)


@njit(cache=True, nogil=True)
def _welford(moments, k, count, x):
    """Add ``x``, the ``count``-th value, to the mean ``moments[k]`` and its M2
    ``moments[k + 1]``, both in units of 2^``moments[k + 2]`` (the operations of
    :class:`btlab.experiments.estimate.Moments`, an infinite value making both infinite)."""
    mean = moments[k]
    if x == np.inf or mean == np.inf:
        moments[k] = np.inf
        moments[k + 1] = np.inf
        return
    for _ in range(int(moments[k + 2]) // SCALE_STEP):
        x *= SCALE_DOWN
    while x > SCALE_LIMIT:
        x *= SCALE_DOWN
        mean *= SCALE_DOWN
        moments[k + 1] *= SCALE_DOWN2
        moments[k + 2] += SCALE_STEP
    delta = x - mean
    mean += delta / count
    moments[k] = mean
    moments[k + 1] += delta * (x - mean)


@njit(cache=True, nogil=True)
def _store(state, rng, nodes, checks, max_depth, done, rng_state):
    """Write a probe loop's counters, probes done and SplitMix64 state back (in place)."""
    state[S_NODES] = nodes
    state[S_CHECKS] = checks
    state[S_MAX_DEPTH] = max_depth
    state[S_PROBES] = done
    rng[0] = rng_state


@njit(cache=True, nogil=True)
def knights_probes(nbr, count, params, state, moments, rng, visited, path):
    """Run (or resume) knight's-tour probes; return a status code.

    Args:
        nbr, count: the board's neighbour table (uint32 (size, 8), default move
            order) and neighbour counts (int32 (size,)), as
            :func:`.knights_kernel.build_geometry` fills them.
        params: int64 (N_PARAMS,): start square, closed, -, probes to run, node
            cap, placements per call before pausing between two probes (-1: never; the
            runners always set one), -.
        state: int64 (N_STATE,): nodes, checks, max_depth, probes finished.
        moments: float64 (N_MOMENTS,): Welford's moments of the tree-size and
            the solutions estimates.
        rng: uint64 (1,): the SplitMix64 state.
        visited: uint8 (size,), all 0 between probes; path: uint32 (size,).

    Returns:
        0 paused between two probes, 2 all probes done, 3 node limit.
    """
    size = nbr.shape[0]
    start = params[P_START]
    closed = params[P_CLOSED] != 0
    todo = params[P_PROBES]
    cap = params[P_CAP]
    pause = params[P_PAUSE]
    nodes = state[S_NODES]
    checks = state[S_CHECKS]
    max_depth = state[S_MAX_DEPTH]
    done = state[S_PROBES]
    rng_state = rng[0]
    entry_nodes = nodes
    cands = np.empty(8, np.uint32)
    code = _EXHAUSTED
    while done < todo:
        if pause >= 0 and nodes - entry_nodes >= pause:
            code = _PAUSED
            break
        sq = np.uint64(start)
        depth = 0
        product = 1.0
        total = 0.0
        solution = False
        stopped = False
        while True:
            if nodes >= cap:
                stopped = True
                break
            nodes += 1
            visited[sq] = 1
            path[np.uint64(depth)] = sq
            depth += 1
            total += product
            if depth == size:
                solution = True
                if closed:
                    solution = False
                    for k in range(count[sq]):
                        if nbr[sq, k] == start:
                            solution = True
                break
            around = count[sq]
            checks += around
            d = 0
            for k in range(around):
                c = nbr[sq, k]
                if visited[c] == 0:
                    cands[d] = c
                    d += 1
            if d == 0:
                break
            product *= d
            if d > 1:
                z = rng_state + _U64_GOLDEN
                rng_state = z
                z = (z ^ (z >> _U30)) * _U64_MIX1
                z = (z ^ (z >> _U27)) * _U64_MIX2
                z = z ^ (z >> _U31)
                sq = np.uint64(cands[np.int64(z % np.uint64(d))])
            else:
                sq = np.uint64(cands[0])
        if depth > max_depth:
            max_depth = depth
        for k in range(depth):
            visited[path[np.uint64(k)]] = 0
        if stopped:
            code = _NODE_LIMIT
            break
        done += 1
        _welford(moments, M_MEAN, done, total)
        _welford(moments, M_SMEAN, done, product if solution else 0.0)
    _store(state, rng, nodes, checks, max_depth, done, rng_state)
    return code


@njit(cache=True, nogil=True)
def queens_probes(params, state, moments, rng, place, scratch):
    """Run (or resume) N-Queens probes; return a status code.

    Args:
        params: int64 (N_PARAMS,): -, -, unique, probes to run, node cap,
            placements per call before pausing (as :func:`knights_probes`), n (1..64).
        state, moments, rng: as :func:`knights_probes`.
        place: int64 (n,): the queens' columns of the current probe.
        scratch: int64 (2, n): work space of the symmetry test.

    Returns:
        0 paused between two probes, 2 all probes done, 3 node limit.
    """
    n = params[P_N]
    unique = params[P_UNIQUE] != 0
    todo = params[P_PROBES]
    cap = params[P_CAP]
    pause = params[P_PAUSE]
    full = (~_ZERO) >> np.uint64(64 - n)
    nodes = state[S_NODES]
    checks = state[S_CHECKS]
    max_depth = state[S_MAX_DEPTH]
    done = state[S_PROBES]
    rng_state = rng[0]
    entry_nodes = nodes
    code = _EXHAUSTED
    while done < todo:
        if pause >= 0 and nodes - entry_nodes >= pause:
            code = _PAUSED
            break
        cols = _ZERO
        left = _ZERO
        right = _ZERO
        product = 1.0
        total = 0.0
        row = 0
        solution = False
        stopped = False
        while True:
            checks += n
            free = full & ~(cols | left | right)
            d = 0
            f = free
            while f != _ZERO:
                f &= f - _ONE
                d += 1
            if d == 0:
                break
            product *= d
            if d > 1:
                z = rng_state + _U64_GOLDEN
                rng_state = z
                z = (z ^ (z >> _U30)) * _U64_MIX1
                z = (z ^ (z >> _U27)) * _U64_MIX2
                z = z ^ (z >> _U31)
                j = np.int64(z % np.uint64(d))
                for _ in range(j):
                    free &= free - _ONE
            bit = free & (~free + _ONE)
            if nodes >= cap:
                stopped = True
                break
            nodes += 1
            total += product
            col = 0
            b = bit
            while b != _ONE:
                b >>= _ONE
                col += 1
            place[np.uint64(row)] = col
            row += 1
            if row == n:
                solution = True
                if unique:
                    solution = _is_canonical(place, n, scratch[0], scratch[1])
                break
            cols |= bit
            left = ((left | bit) << _ONE) & full
            right = (right | bit) >> _ONE
        if row > max_depth:
            max_depth = row
        if stopped:
            code = _NODE_LIMIT
            break
        done += 1
        _welford(moments, M_MEAN, done, total)
        _welford(moments, M_SMEAN, done, product if solution else 0.0)
    _store(state, rng, nodes, checks, max_depth, done, rng_state)
    return code


#: What the runners return: ``(status, probes, nodes, checks, max_depth, moments)``,
#: the arguments of :func:`btlab.experiments.estimate.make_estimate`.
ProbeResult = tuple[Status, int, int, int, int,
                    tuple[float, float, float, float, float, float]]


def _result(status: Status, state: np.ndarray, moments: np.ndarray) -> ProbeResult:
    m = [float(v) for v in moments]
    return (status, int(state[S_PROBES]), int(state[S_NODES]), int(state[S_CHECKS]),
            int(state[S_MAX_DEPTH]), (m[M_MEAN], m[M_M2], m[M_SHIFT], m[M_SMEAN], m[M_SM2],
                                      m[M_SSHIFT]))


def _params(budget: Budget, probes: int, start: int = 0, closed: bool = False,
            unique: bool = False, n: int = 0) -> np.ndarray:
    pause = pause_every(budget.max_seconds is not None)  # untimed too: signals get through
    return np.array([start, int(closed), int(unique), probes, budget.node_cap, pause, n],
                    dtype=np.int64)


def run_knights_probes(rows: int, cols: int, start_sq: int, closed: bool, probes: int,
                       seed: int, budget: Budget) -> ProbeResult:
    """Run ``probes`` knight's-tour probes from ``start_sq``; arguments already checked.

    Starts ``budget``'s clock unless it runs already, before the board's
    tables; the caller loads the kernels first
    (:func:`btlab.experiments.compiled.warm_up`, kind ``estimate``).

    Returns:
        ``(status, probes finished, nodes, checks, max_depth, moments)``.
    """
    budget.start()
    tables = knights_kernel.geometry(rows, cols, DEFAULT_MOVE_ORDER, budget.out_of_time)
    state = np.zeros(N_STATE, np.int64)
    moments = np.zeros(N_MOMENTS, np.float64)
    if tables is None:  # the board's tables took the whole time budget
        return _result(Status.TIME_LIMIT, state, moments)
    nbr, count, _, _ = tables
    size = rows * cols
    rng = np.array([seed & 0xFFFFFFFFFFFFFFFF], dtype=np.uint64)
    args = (nbr, count, _params(budget, probes, start_sq, closed), state, moments, rng,
            np.zeros(size, np.uint8), np.zeros(size, np.uint32))
    return _result(drive(knights_probes, args, budget), state, moments)


def run_queens_probes(n: int, unique: bool, probes: int, seed: int,
                      budget: Budget) -> ProbeResult:
    """Run ``probes`` N-Queens probes (1 <= n <= :data:`MAX_N`); arguments already checked.

    Returns:
        As :func:`run_knights_probes`.
    """
    budget.start()
    state = np.zeros(N_STATE, np.int64)
    moments = np.zeros(N_MOMENTS, np.float64)
    rng = np.array([seed & 0xFFFFFFFFFFFFFFFF], dtype=np.uint64)
    args = (_params(budget, probes, unique=unique, n=n), state, moments, rng,
            np.zeros(n, np.int64), np.zeros((2, n), np.int64))
    return _result(drive(queens_probes, args, budget), state, moments)


def warm_up() -> None:
    """Compile (or load from the disk cache) the probe kernels."""
    warm_up_knights()
    warm_up_queens()


def warm_up_knights() -> None:
    """Compile (or load from the disk cache) the knight's-tour probe kernel alone."""
    budget = Budget(None, 10.0)
    tables = knights_kernel.geometry(3, 4, DEFAULT_MOVE_ORDER)
    assert tables is not None
    state = np.zeros(N_STATE, np.int64)
    moments = np.zeros(N_MOMENTS, np.float64)
    rng = np.array([1], dtype=np.uint64)
    knights_probes(tables[0], tables[1], _params(budget, 2, 0, True), state, moments, rng,
                   np.zeros(12, np.uint8), np.zeros(12, np.uint32))


def warm_up_queens() -> None:
    """Compile (or load from the disk cache) the N-Queens probe kernel alone."""
    budget = Budget(None, 10.0)
    rng = np.array([1], dtype=np.uint64)
    queens_probes(_params(budget, 2, unique=True, n=6), np.zeros(N_STATE, np.int64),
                  np.zeros(N_MOMENTS, np.float64), rng, np.zeros(6, np.int64),
                  np.zeros((2, 6), np.int64))
