"""Compiled weighted probes: ``importance`` and ``perm`` of :mod:`btlab.experiments.estimate`.

One kernel per problem runs both methods: a probe is a population of walkers
(1 for ``importance``, ``population`` for ``perm``) that step down the tree
together; each walker draws its child from the proposal weights the Python
side tabulated once (:func:`btlab.experiments.estimate.knights_weights`,
:func:`~btlab.experiments.estimate.queens_weights`) and keeps its own weight,
and after each step each dead walker takes a copy and half the weight of the
heaviest living one (:func:`btlab.experiments.estimate.heaviest`). The
kernels draw the same SplitMix64 numbers, do the same float operations in the
same order and count the same counters as the python engine
(:func:`btlab.experiments.estimate._knights_weighted`,
:func:`~btlab.experiments.estimate._queens_weighted`), so both engines return
equal :class:`~btlab.experiments.estimate.Estimate` values for a seed under a
node budget or none. Sources: D. E. Knuth, Math. Comp. 29 (1975) 121-136
(importance sampling, section 5); P. Grassberger, "Pruned-enriched Rosenbluth
method", Phys. Rev. E 56 (1997) 3682 (enrichment).

Time budget and signals: the kernels pause between two probes once
:data:`._driver.PAUSE_EVERY` placements (untimed: :data:`._driver.CHUNK_EVERY`)
have passed since the call began (:func:`._driver.drive` reads the clock and
lets Ctrl-C and SIGTERM through then); a probe is at most ``population``
times the board's squares (or n) placements.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from btlab.experiments.compiled._driver import EXHAUSTED as _EXHAUSTED
from btlab.experiments.compiled._driver import NODE_LIMIT as _NODE_LIMIT
from btlab.experiments.compiled._driver import PAUSED as _PAUSED
from btlab.experiments.compiled._driver import drive
from btlab.experiments.compiled.estimate_kernel import (
    M_MEAN,
    M_SMEAN,
    N_MOMENTS,
    N_STATE,
    ProbeResult,
    _params,
    _result,
    _store,
    _welford,
)
from btlab.experiments.compiled.knights import kernel as knights_kernel
from btlab.experiments.compiled.queens_kernel import _is_canonical
from btlab.experiments.core import Budget, Status
from btlab.experiments.knights.board import DEFAULT_MOVE_ORDER

__all__ = ["run_knights_weighted", "run_queens_weighted", "warm_up_knights", "warm_up_queens"]

# The int64 parameter array is estimate_kernel's: start, closed, unique, probes, cap,
# pause, n.
_P_START, _P_CLOSED, _P_UNIQUE, _P_PROBES, _P_CAP, _P_PAUSE, _P_N = range(7)
_S_NODES, _S_CHECKS, _S_MAX_DEPTH, _S_PROBES = range(4)

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_U30, _U27, _U31, _U11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)
_ONE = np.uint64(1)
_ZERO = np.uint64(0)
_UNIT = 2.0 ** -53


@njit(cache=True, nogil=True, inline="always")
def _uniform(rng):
    """Advance the SplitMix64 state ``rng[0]``; return its output's top 53 bits times
    2^-53 (as :func:`btlab.experiments.estimate.choose` makes it)."""
    z = rng[0] + _GOLDEN
    rng[0] = z
    z = (z ^ (z >> _U30)) * _MIX1
    z = (z ^ (z >> _U27)) * _MIX2
    z = z ^ (z >> _U31)
    return np.float64(z >> _U11) * _UNIT


@njit(cache=True, nogil=True)
def _choose(rng, ws, d, total):
    """:func:`btlab.experiments.estimate.choose` over ``ws[:d]``."""
    u = _uniform(rng) * total
    j = 0
    acc = ws[0]
    while j < d - 1 and u >= acc:
        j += 1
        acc += ws[j]
    return j


@njit(cache=True, nogil=True)
def _heaviest(weight, alive):
    """:func:`btlab.experiments.estimate.heaviest`."""
    best = -1
    top = -1.0
    for k in range(weight.shape[0]):
        if alive[k] and weight[k] > top:
            top = weight[k]
            best = k
    return best


@njit(cache=True, nogil=True)
def knights_weighted(nbr, count, params, state, moments, rng, weights, vis, deg, cur, weight,
                     alive):
    """Run (or resume) weighted knight's-tour probes; return a status code.

    Args:
        nbr, count: the board's neighbour table and counts
            (:func:`.knights_kernel.build_geometry`).
        params, state, moments, rng: as
            :func:`btlab.experiments.compiled.estimate_kernel.knights_probes`.
        weights: float64 (9,): the proposal weight of onward degree 0 .. 8.
        vis: uint8 (population, size), deg: int8 (population, size): each walker's
            visited squares and unvisited onward degrees; cur: int64 (population,):
            its square; weight: float64 (population,): its weight; alive: bool_
            (population,).

    Returns:
        0 paused between two probes, 2 all probes done, 3 node limit.
    """
    size = nbr.shape[0]
    pop = weight.shape[0]
    share = 1.0   # weights in units of 1 / population: exact for a forced walk
    start = params[_P_START]
    closed = params[_P_CLOSED] != 0
    todo = params[_P_PROBES]
    cap = params[_P_CAP]
    pause = params[_P_PAUSE]
    nodes = state[_S_NODES]
    checks = state[_S_CHECKS]
    max_depth = state[_S_MAX_DEPTH]
    done = state[_S_PROBES]
    entry_nodes = nodes
    cands = np.empty(8, np.int64)
    ws = np.empty(8, np.float64)
    code = _EXHAUSTED
    while done < todo:
        if pause >= 0 and nodes - entry_nodes >= pause:
            code = _PAUSED
            break
        stopped = False
        for w in range(pop):   # -- place the start square, once per walker --
            if nodes >= cap:
                stopped = True
                break
            nodes += 1
            for sq in range(size):
                vis[w, sq] = 0
                deg[w, sq] = count[sq]
            vis[w, start] = 1
            for k in range(count[start]):
                deg[w, nbr[start, k]] -= 1
            cur[w] = start
            weight[w] = share
            alive[w] = True
        if stopped:
            code = _NODE_LIMIT
            break
        if max_depth < 1:
            max_depth = 1
        total = 1.0
        solutions = 1.0 if size == 1 and not closed else 0.0
        for depth in range(2, size + 1):
            level = 0.0
            for w in range(pop):
                sq = cur[w]
                around = count[sq]
                checks += around
                d = 0
                s = 0.0
                for k in range(around):
                    c = nbr[sq, k]
                    if vis[w, c] == 0:
                        cands[d] = c
                        ws[d] = weights[deg[w, c]]
                        d += 1
                if d == 0:
                    alive[w] = False
                    continue
                for k in range(d):
                    s += ws[k]
                j = _choose(rng, ws, d, s) if d > 1 else 0
                nxt = cands[j]
                if nodes >= cap:
                    stopped = True
                    break
                nodes += 1
                weight[w] *= s / ws[j]
                level += weight[w]
                vis[w, nxt] = 1
                for k in range(count[nxt]):
                    deg[w, nbr[nxt, k]] -= 1
                cur[w] = nxt
            if stopped:
                break
            if level == 0.0:
                break
            if depth > max_depth:
                max_depth = depth
            total += level / pop
            if depth == size:
                if not closed:
                    solutions = level / pop
                else:
                    for w in range(pop):
                        ends = False
                        last = cur[w]
                        for k in range(count[last]):
                            if nbr[last, k] == start:
                                ends = True
                        solutions += weight[w] if alive[w] and ends else 0.0
                    solutions /= pop
                break
            for w in range(pop):   # -- the heaviest walkers split into the dead --
                if not alive[w]:
                    k = _heaviest(weight, alive)
                    weight[k] *= 0.5
                    weight[w] = weight[k]
                    alive[w] = True
                    vis[w, :] = vis[k, :]
                    deg[w, :] = deg[k, :]
                    cur[w] = cur[k]
        if stopped:
            code = _NODE_LIMIT
            break
        done += 1
        _welford(moments, M_MEAN, done, total)
        _welford(moments, M_SMEAN, done, solutions)
    _store(state, rng, nodes, checks, max_depth, done, rng[0])
    return code


@njit(cache=True, nogil=True)
def queens_weighted(params, state, moments, rng, weights, att, place, weight, alive, scratch):
    """Run (or resume) weighted N-Queens probes; return a status code.

    Args:
        params, state, moments, rng: as
            :func:`btlab.experiments.compiled.estimate_kernel.queens_probes`.
        weights: float64 (n + 1,): the proposal weight of f = 0 .. n safe squares
            left in the next row.
        att: uint64 (population, 3): each walker's attacked columns, left and right
            diagonals of its next row; place: int64 (population, n): its queens'
            columns; weight, alive: as :func:`knights_weighted`; scratch: int64
            (2, n), the symmetry test's work space.

    Returns:
        0 paused between two probes, 2 all probes done, 3 node limit.
    """
    n = params[_P_N]
    pop = weight.shape[0]
    share = 1.0   # weights in units of 1 / population: exact for a forced walk
    unique = params[_P_UNIQUE] != 0
    todo = params[_P_PROBES]
    cap = params[_P_CAP]
    pause = params[_P_PAUSE]
    full = (~_ZERO) >> np.uint64(64 - n)
    nodes = state[_S_NODES]
    checks = state[_S_CHECKS]
    max_depth = state[_S_MAX_DEPTH]
    done = state[_S_PROBES]
    entry_nodes = nodes
    bits = np.empty(64, np.uint64)
    ws = np.empty(64, np.float64)
    code = _EXHAUSTED
    while done < todo:
        if pause >= 0 and nodes - entry_nodes >= pause:
            code = _PAUSED
            break
        for w in range(pop):
            att[w, 0] = _ZERO
            att[w, 1] = _ZERO
            att[w, 2] = _ZERO
            weight[w] = share
            alive[w] = True
        total = 0.0
        solutions = 0.0
        stopped = False
        for row in range(n):
            level = 0.0
            for w in range(pop):
                checks += n
                cols = att[w, 0]
                left = att[w, 1]
                right = att[w, 2]
                free = full & ~(cols | left | right)
                if free == _ZERO:
                    alive[w] = False
                    continue
                d = 0
                f = free
                while f != _ZERO:
                    bit = f & (~f + _ONE)
                    f &= f - _ONE
                    bits[d] = bit
                    after = _ZERO
                    if row + 1 < n:
                        after = full & ~((cols | bit) | (((left | bit) << _ONE) & full)
                                         | ((right | bit) >> _ONE))
                    k = 0
                    while after != _ZERO:
                        after &= after - _ONE
                        k += 1
                    ws[d] = weights[k]
                    d += 1
                s = 0.0
                for k in range(d):
                    s += ws[k]
                j = _choose(rng, ws, d, s) if d > 1 else 0
                bit = bits[j]
                if nodes >= cap:
                    stopped = True
                    break
                nodes += 1
                weight[w] *= s / ws[j]
                level += weight[w]
                att[w, 0] = cols | bit
                att[w, 1] = ((left | bit) << _ONE) & full
                att[w, 2] = (right | bit) >> _ONE
                col = 0
                b = bit
                while b != _ONE:
                    b >>= _ONE
                    col += 1
                place[w, row] = col
            if stopped:
                break
            if level == 0.0:
                break
            if row + 1 > max_depth:
                max_depth = row + 1
            total += level / pop
            if row + 1 == n:
                if not unique:
                    solutions = level / pop
                else:
                    for w in range(pop):
                        ok = alive[w] and _is_canonical(place[w], n, scratch[0], scratch[1])
                        solutions += weight[w] if ok else 0.0
                    solutions /= pop
                break
            for w in range(pop):
                if not alive[w]:
                    k = _heaviest(weight, alive)
                    weight[k] *= 0.5
                    weight[w] = weight[k]
                    alive[w] = True
                    att[w, :] = att[k, :]
                    place[w, :] = place[k, :]
        if stopped:
            code = _NODE_LIMIT
            break
        done += 1
        _welford(moments, M_MEAN, done, total)
        _welford(moments, M_SMEAN, done, solutions)
    _store(state, rng, nodes, checks, max_depth, done, rng[0])
    return code


def run_knights_weighted(rows: int, cols: int, start_sq: int, closed: bool, probes: int,
                         seed: int, budget: Budget, weights: list[float],
                         population: int) -> ProbeResult:
    """Run ``probes`` weighted knight's-tour probes of ``population`` walkers each;
    arguments already checked (:func:`btlab.experiments.estimate.estimate_knights`).

    Returns:
        ``(status, probes finished, nodes, checks, max_depth, moments)``.
    """
    budget.start()
    tables = knights_kernel.geometry(rows, cols, DEFAULT_MOVE_ORDER, budget.out_of_time)
    state = np.zeros(N_STATE, np.int64)
    moments = np.zeros(N_MOMENTS, np.float64)
    if tables is None:
        return _result(Status.TIME_LIMIT, state, moments)
    nbr, count, _, _ = tables
    size = rows * cols
    rng = np.array([seed & 0xFFFFFFFFFFFFFFFF], dtype=np.uint64)
    args = (nbr, count, _params(budget, probes, start_sq, closed), state, moments, rng,
            np.array(weights, np.float64), np.zeros((population, size), np.uint8),
            np.zeros((population, size), np.int8), np.zeros(population, np.int64),
            np.zeros(population, np.float64), np.zeros(population, np.bool_))
    return _result(drive(knights_weighted, args, budget), state, moments)


def run_queens_weighted(n: int, unique: bool, probes: int, seed: int, budget: Budget,
                        weights: list[float], population: int) -> ProbeResult:
    """Run ``probes`` weighted N-Queens probes of ``population`` walkers each
    (1 <= n <= 64); arguments already checked.

    Returns:
        As :func:`run_knights_weighted`.
    """
    budget.start()
    state = np.zeros(N_STATE, np.int64)
    moments = np.zeros(N_MOMENTS, np.float64)
    rng = np.array([seed & 0xFFFFFFFFFFFFFFFF], dtype=np.uint64)
    args = (_params(budget, probes, unique=unique, n=n), state, moments, rng,
            np.array(weights, np.float64), np.zeros((population, 3), np.uint64),
            np.zeros((population, n), np.int64), np.zeros(population, np.float64),
            np.zeros(population, np.bool_), np.zeros((2, n), np.int64))
    return _result(drive(queens_weighted, args, budget), state, moments)


def warm_up_knights() -> None:
    """Compile (or load from the disk cache) the weighted knight's-tour kernel."""
    budget = Budget(None, 10.0)
    run_knights_weighted(3, 4, 0, True, 2, 1, budget, [1.0] * 9, 2)


def warm_up_queens() -> None:
    """Compile (or load from the disk cache) the weighted N-Queens kernel."""
    budget = Budget(None, 10.0)
    run_queens_weighted(6, True, 2, 1, budget, [1.0] * 7, 2)
