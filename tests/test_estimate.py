"""Knuth's random-probe estimate of the count-mode tree (btlab.experiments.estimate).

D. E. Knuth, "Estimating the efficiency of backtrack programs", Math. Comp. 29 (1975).
A probe's estimate is 1 + d1 + d1 d2 + ... (knight's tour: the start square is
placement 1) or d1 + d1 d2 + ... (N-Queens: the empty root is no placement);
its mean over probes is unbiased for the count-mode ``nodes``.
"""

from __future__ import annotations

import math
import statistics
import time

import pytest

from btlab.experiments.checker import check_tour
from btlab.experiments.core import Status
from btlab.experiments.estimate import Estimate, knuth_knights, knuth_queens
from btlab.experiments.knights.solve import DEFAULT_MOVE_ORDER, SplitMix64, solve_knights_tour
from btlab.experiments.queens.solve import is_canonical, solve_queens

# count-mode nodes of the 5 x 5 knight's tour from each start, row by row (the exact
# search, compiled or python: 5 x 5 from a corner walks 1,735,079 placements)
EXACT_5X5 = (
    1_735_079, 1_829_421, 1_453_989, 1_829_421, 1_735_079,
    1_829_421, 1_465_477, 1_028_893, 1_465_477, 1_829_421,
    1_453_989, 1_028_893, 641_577, 1_028_893, 1_453_989,
    1_829_421, 1_465_477, 1_028_893, 1_465_477, 1_829_421,
    1_735_079, 1_829_421, 1_453_989, 1_829_421, 1_735_079,
)
# open tours from each start (only squares of the majority colour have any)
TOURS_5X5 = {(0, 0): 304, (0, 2): 56, (1, 1): 56, (2, 2): 64}
QUEENS = {8: (2_056, 92, 12), 12: (856_188, 14_200, 1_787)}  # nodes, solutions, unique


def z_score(values: list[float], exact: float) -> float:
    """(mean - exact) / standard error of the mean, over one estimate per seed."""
    se = statistics.stdev(values) / math.sqrt(len(values))
    return (statistics.fmean(values) - exact) / se


# ---------------------------------------------------------------- a reference probe walk

def reference_knights(rows: int, cols: int, start: tuple[int, int], closed: bool,
                      probes: int, seed: int) -> list[tuple[float, float, list[int]]]:
    """Each probe's (tree estimate, solutions estimate, path), walked here from the
    definition: children in the default move order, child ``next() mod d`` when d >= 2."""
    rng = SplitMix64(seed)
    out = []
    for _ in range(probes):
        r, c = start
        path = [r * cols + c]
        product, total, solution = 1.0, 1.0, False
        while True:
            if len(path) == rows * cols:
                first = divmod(path[0], cols)
                solution = not closed or any(
                    (r + dr, c + dc) == first for dr, dc in DEFAULT_MOVE_ORDER)
                break
            children = [(r + dr, c + dc) for dr, dc in DEFAULT_MOVE_ORDER
                        if 0 <= r + dr < rows and 0 <= c + dc < cols
                        and (r + dr) * cols + c + dc not in path]
            if not children:
                break
            product *= len(children)
            total += product
            r, c = children[rng.next() % len(children)] if len(children) > 1 else children[0]
            path.append(r * cols + c)
        out.append((total, product if solution else 0.0, path))
    return out


def test_every_probe_value_matches_a_walk_from_the_definition():
    probes = reference_knights(5, 5, (0, 0), False, 300, 11)
    got = knuth_knights(5, 5, (0, 0), closed=False, probes=300, seed=11)
    values = [p[0] for p in probes]
    assert got.status is Status.EXHAUSTED and got.probes == 300
    assert got.estimate == pytest.approx(statistics.fmean(values), rel=1e-12)
    assert got.estimate_se == pytest.approx(statistics.stdev(values) / math.sqrt(300),
                                            rel=1e-9)
    assert got.nodes == sum(len(p[2]) for p in probes)
    assert got.max_depth == max(len(p[2]) for p in probes)
    assert got.solutions_estimate == pytest.approx(statistics.fmean(p[1] for p in probes))


@pytest.mark.parametrize("engine", ["python", "compiled"])
def test_closed_tours_count_only_probes_that_close(engine):
    # 3 x 10 from a corner: seed 4882's single probe is a closed tour, seed 64's an open one
    for seed, closes in ((4882, True), (64, False)):
        (total, sols, path), = reference_knights(3, 10, (0, 0), True, 1, seed)
        check_tour(3, 10, (0, 0), path)  # a complete tour ...
        if closes:
            check_tour(3, 10, (0, 0), path, closed=True)
        opened = knuth_knights(3, 10, (0, 0), closed=False, probes=1, seed=seed,
                               engine=engine)
        shut = knuth_knights(3, 10, (0, 0), closed=True, probes=1, seed=seed, engine=engine)
        assert opened.estimate == shut.estimate == total  # closed changes no tree
        assert opened.solutions_estimate > 0
        assert shut.solutions_estimate == (opened.solutions_estimate if closes else 0.0)
        assert sols == shut.solutions_estimate


# ---------------------------------------------------------------- trees worked by hand

@pytest.mark.parametrize("engine", ["python", "compiled"])
def test_3x3_every_probe_is_exact(engine):
    # the 3 x 3 knight graph is an 8-cycle and an isolated centre: from a corner every
    # probe goes round one way, d = 2 then 1, 1, ..., so X = 1 + 2 * 7 = 15 and the 8th
    # square is a dead end; from the centre X = 1 (no onward square)
    assert solve_knights_tour(3, 3, (0, 0), mode="count").nodes == 15
    corner = knuth_knights(3, 3, (0, 0), closed=False, probes=50, seed=3, engine=engine)
    assert corner == Estimate(Status.EXHAUSTED, 15.0, 0.0, 50, 400, 800, 8, 0.0, 0.0)
    centre = knuth_knights(3, 3, (1, 1), closed=False, probes=4, seed=3, engine=engine)
    assert centre == Estimate(Status.EXHAUSTED, 1.0, 0.0, 4, 4, 0, 1, 0.0, 0.0)
    for closed, tours in ((False, 1.0), (True, 0.0)):  # 1 x 1: the start square is a tour
        one = knuth_knights(1, 1, (0, 0), closed=closed, probes=1, seed=0, engine=engine)
        assert one == Estimate(Status.EXHAUSTED, 1.0, None, 1, 1, 0, 1, tours, None)


# 4-queens by hand: row 0 has 4 safe squares; column 0 leaves {2, 3} in row 1 (2: dead
# in row 2; 3: one square in row 2, dead in row 3), column 1 leaves {3} then {0} then {2}
# (the solution 1 3 0 2); columns 2 and 3 mirror 1 and 0. So X = 4 + 8 = 12, 4 + 8 + 8 = 20
# or 4 + 4 + 4 + 4 = 16; E[X] = 12/4 + 20/4 + 16/2 = 16, the count-mode nodes.
HAND_4 = {(0, 0): 12.0, (0, 1): 20.0, (3, 0): 20.0, (3, 1): 12.0, 1: 16.0, 2: 16.0}


@pytest.mark.parametrize("engine", ["python", "compiled"])
def test_4_queens_worked_by_hand(engine):
    assert solve_queens(4, mode="count").nodes == 16
    expectation = sum(v * (1 / 8 if isinstance(k, tuple) else 1 / 4) for k, v in HAND_4.items())
    assert expectation == 16.0
    rng = SplitMix64(2024)
    values, sols, canonical, nodes = [], [], [], 0
    for _ in range(200):
        first = rng.next() % 4
        key = (first, rng.next() % 2) if first in (0, 3) else first
        values.append(HAND_4[key])
        sols.append(4.0 if first in (1, 2) else 0.0)
        canonical.append(4.0 if first == 1 else 0.0)
        nodes += {12.0: 2, 20.0: 3, 16.0: 4}[HAND_4[key]]
    got = knuth_queens(4, unique=False, probes=200, seed=2024, engine=engine)
    assert got.estimate == pytest.approx(statistics.fmean(values), rel=1e-12)
    assert got.estimate_se == pytest.approx(statistics.stdev(values) / math.sqrt(200),
                                            rel=1e-9)
    assert got.solutions_estimate == pytest.approx(statistics.fmean(sols), rel=1e-12)
    # every row listed tests 4 squares: the root's row and each placement's next row
    # but a full board's; a dead end's row is listed and empty
    assert (got.nodes, got.checks) == (nodes, 4 * (200 + nodes - sols.count(4.0)))
    unique = knuth_queens(4, unique=True, probes=200, seed=2024, engine=engine)
    # of the two solutions 1 3 0 2 and 2 0 3 1 (mirror images) the first is canonical
    assert is_canonical((1, 3, 0, 2)) and not is_canonical((2, 0, 3, 1))
    assert unique.estimate == got.estimate
    assert unique.solutions_estimate == pytest.approx(statistics.fmean(canonical), rel=1e-12)


# ---------------------------------------------------------------- unbiasedness

SEEDS = range(100)
PROBES = 1_000


@pytest.mark.parametrize("start", [(r, c) for r in range(5) for c in range(5)])
def test_knights_5x5_unbiased_from_each_start(start, engine="compiled"):
    runs = [knuth_knights(5, 5, start, closed=False, probes=PROBES, seed=s, engine=engine)
            for s in SEEDS]
    exact = EXACT_5X5[start[0] * 5 + start[1]]
    assert abs(z_score([e.estimate for e in runs], exact)) < 3
    tours = TOURS_5X5.get((min(start[0], 4 - start[0]), min(start[1], 4 - start[1])))
    tours = tours or TOURS_5X5.get((min(start[1], 4 - start[1]), min(start[0], 4 - start[0])))
    if tours:
        assert abs(z_score([e.solutions_estimate for e in runs], tours)) < 3
    else:  # the minority colour: no probe ever fills the board
        assert all(e.solutions_estimate == 0.0 and e.max_depth < 25 for e in runs)


@pytest.mark.parametrize("n", [8, 12])
def test_queens_unbiased(n, engine="compiled"):
    nodes, solutions, unique = QUEENS[n]
    runs = [knuth_queens(n, unique=True, probes=PROBES, seed=s, engine=engine) for s in SEEDS]
    assert abs(z_score([e.estimate for e in runs], nodes)) < 3
    assert abs(z_score([e.solutions_estimate for e in runs], unique)) < 3
    plain = [knuth_queens(n, unique=False, probes=PROBES, seed=s, engine=engine).solutions_estimate
             for s in SEEDS]
    assert abs(z_score(plain, solutions)) < 3
    # and the estimate is sharp: 100,000 probes put it within 1 % of the tree
    assert abs(statistics.fmean(e.estimate for e in runs) / nodes - 1) < 0.01


@pytest.mark.slow
@pytest.mark.parametrize("start", [(r, c) for r in range(5) for c in range(5)])
def test_knights_5x5_unbiased_python_engine(start):
    test_knights_5x5_unbiased_from_each_start(start, engine="python")


@pytest.mark.slow
@pytest.mark.parametrize("n", [8, 12])
def test_queens_unbiased_python_engine(n):
    test_queens_unbiased(n, engine="python")


# ---------------------------------------------------------------- engines, budgets

@pytest.mark.parametrize("seed", [0, 1, 99, -5, 2**70 + 3])
def test_python_and_compiled_engines_are_equal(seed):
    for rows, cols, start, closed in ((5, 5, (0, 0), False), (5, 5, (2, 1), True),
                                      (3, 4, (0, 0), False), (8, 8, (3, 4), False),
                                      (3, 10, (0, 0), True), (1, 1, (0, 0), False)):
        args = (rows, cols, start)
        assert (knuth_knights(*args, closed=closed, probes=150, seed=seed)
                == knuth_knights(*args, closed=closed, probes=150, seed=seed,
                                 engine="compiled")), (rows, cols, start)
    for n in (1, 2, 4, 8, 13, 64):
        for unique in (False, True):
            assert (knuth_queens(n, unique=unique, probes=150, seed=seed)
                    == knuth_queens(n, unique=unique, probes=150, seed=seed, engine="compiled"))


@pytest.mark.parametrize("engine", ["python", "compiled"])
def test_node_budget_stops_the_probes(engine):
    whole = knuth_knights(6, 6, (0, 0), closed=False, probes=400, seed=8, engine=engine)
    assert whole.status is Status.EXHAUSTED
    cut = knuth_knights(6, 6, (0, 0), closed=False, probes=400, seed=8, max_nodes=1_000,
                        engine=engine)
    assert cut.status is Status.NODE_LIMIT and cut.nodes == 1_000
    assert 0 < cut.probes < 400
    # the estimate is that of the probes finished: the same seed with that many probes
    done = knuth_knights(6, 6, (0, 0), closed=False, probes=cut.probes, seed=8, engine=engine)
    assert (cut.estimate, cut.estimate_se, cut.solutions_estimate) == (
        done.estimate, done.estimate_se, done.solutions_estimate)
    assert done.nodes < cut.nodes  # the unfinished probe's placements count
    # a budget the probes need exactly is no stop
    exact = knuth_knights(6, 6, (0, 0), closed=False, probes=400, seed=8,
                          max_nodes=whole.nodes, engine=engine)
    assert exact == whole
    # too small for one probe: no estimate
    none = knuth_queens(8, unique=False, probes=10, seed=1, max_nodes=3, engine=engine)
    assert (none.status, none.probes, none.nodes, none.estimate, none.estimate_se) == (
        Status.NODE_LIMIT, 0, 3, None, None)
    one = knuth_queens(8, unique=False, probes=10, seed=1, max_nodes=9, engine=engine)
    assert one.probes == 1 and one.estimate is not None and one.estimate_se is None


@pytest.mark.parametrize("engine", ["python", "compiled"])
def test_time_budget_stops_the_probes(engine):
    knuth_knights(8, 8, (0, 0), closed=False, probes=1, seed=0, engine=engine)  # warm
    t0 = time.perf_counter()
    got = knuth_knights(8, 8, (0, 0), closed=False, probes=10**12, seed=0, max_seconds=0.2,
                        engine=engine)
    assert time.perf_counter() - t0 < 1.5
    assert got.status is Status.TIME_LIMIT and got.probes > 10 and got.estimate > 1e15


def test_a_tree_beyond_float64_gives_an_infinite_estimate():
    for engine in ("python", "compiled"):
        got = knuth_knights(100, 100, (0, 0), closed=False, probes=3, seed=1, engine=engine)
        assert got.estimate == math.inf and got.estimate_se == math.inf


def test_count_mode_tree_ignores_the_heuristic():
    # why the estimate takes no heuristic: ordering children never drops one
    counts = {solve_knights_tour(3, 4, (0, 0), mode="count", heuristic=h, tie_break=t).nodes
              for h in ("none", "warnsdorff", "static_degree") for t in ("move_order", "random")}
    assert len(counts) == 1


@pytest.mark.parametrize(("call", "message"), [
    (lambda: knuth_queens(8, unique=False, probes=0, seed=0),
     "probes must be an integer >= 1, got 0"),
    (lambda: knuth_queens(8, unique=False, probes=-3, seed=0), "probes must be"),
    (lambda: knuth_queens(8, unique=False, probes=2.5, seed=0), "probes must be .* got 2.5"),
    (lambda: knuth_queens(8, unique=False, probes=True, seed=0), "probes must be .* got True"),
    (lambda: knuth_queens(8, unique=False, probes="10", seed=0), "probes must be"),
    (lambda: knuth_queens(8, unique=False, probes=5, seed=1.5), "seed must be an integer"),
    (lambda: knuth_queens(8, unique=False, probes=5, seed=0, engine="gpu"), "unknown engine"),
    (lambda: knuth_queens(0, unique=False, probes=5, seed=0), "n must be at least 1"),
    (lambda: knuth_queens(65, unique=False, probes=5, seed=0, engine="compiled"),
     "n must be between 1 and 64 for the compiled engine, got 65"),
    (lambda: knuth_queens(8, unique=False, probes=5, seed=0, max_nodes=0), "max_nodes must be"),
    (lambda: knuth_knights(0, 5, (0, 0), closed=False, probes=5, seed=0), "at least 1 x 1"),
    (lambda: knuth_knights(5, 5, (5, 0), closed=False, probes=5, seed=0), "off the 5 x 5"),
    (lambda: knuth_knights(5, 5, (0, 0), closed=False, probes=5, seed=0, max_seconds=-1),
     "max_seconds must be positive"),
    (lambda: knuth_knights(5, 5, (0, 0), closed=False, probes=0, seed=0, engine="compiled"),
     "probes must be"),
])
def test_bad_arguments_raise_value_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()
