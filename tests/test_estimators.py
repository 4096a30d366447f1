"""The weighted estimators of ``mode: estimate``: ``importance`` and ``perm``.

Both are unbiased for the count-mode tree size and solution count (docs/metrics.md,
"Estimators"); the tests check that against exact counts: the 5 x 5 knight's tour
from every start (1,728 directed open tours; 304 from a corner, 64 from the
centre), 6 x 6 (6,637,920 over the 36 starts, OEIS A165134), N-Queens n = 8 .. 14
(OEIS A000170, and the tree sizes count mode walks), as the mean over seeds within
3 standard errors. The python engine is the reference: both engines return equal
estimates for a seed. The slow coverage test runs each estimator at the probes of
its shipped config (configs/open_tours_6x6_estimate.yaml) 200 times.
"""

from __future__ import annotations

import math
import statistics
from pathlib import Path

import pandas as pd
import pytest
import yaml
from test_estimate import EXACT_5X5, z_score

from btlab.experiments.core import Status
from btlab.experiments.estimate import (
    choose,
    estimate_knights,
    estimate_queens,
    heaviest,
    knights_weights,
    knuth_knights,
    queens_weights,
)
from btlab.experiments.estimators import DEFAULT, METHODS, Estimator, EstimatorError
from btlab.experiments.knights.ordering import SplitMix64

ROOT = Path(__file__).resolve().parent.parent
IMPORTANCE = Estimator.from_value({"method": "importance", "beta": 0.4})
PERM = Estimator.from_value({"method": "perm", "population": 20, "beta": 0.4})
WEIGHTED = [IMPORTANCE, PERM]
IDS = ["importance", "perm"]

# OEIS A000170 (solutions) with the count-mode tree size (nodes) and the solutions up
# to symmetry, as `btlab run` of mode: count gives them (strategy bitmask)
QUEENS = {8: (2_056, 92, 12), 9: (8_393, 352, 46), 10: (35_538, 724, 92),
          11: (166_925, 2_680, 341), 12: (856_188, 14_200, 1_787),
          13: (4_674_889, 73_712, 9_233), 14: (27_358_552, 365_596, 45_752)}
TOURS_6X6 = 6_637_920        # directed open tours of 6 x 6 over all starts (A165134)
TOURS_5X5 = 1_728            # the same on 5 x 5: 304 from a corner, 64 from the centre


# ---------------------------------------------------------------- the registry and labels

def test_labels_are_exact_and_read_back():
    cases = {"knuth": "knuth", None: "knuth",
             "importance": "importance beta=0.5",
             "perm": "perm population=100 beta=0.5"}
    for value, label in cases.items():
        assert Estimator.from_value(value).label() == label
    a = Estimator.from_value({"method": "importance", "beta": 1.5})
    b = Estimator.from_value({"method": "importance", "beta": 1.5000001})
    assert (a.label(), b.label()) == ("importance beta=1.5", "importance beta=1.5000001")
    assert Estimator.from_value({"method": "importance", "beta": 1}).label() == \
        "importance beta=1.0"
    for est in [a, b, PERM, DEFAULT, Estimator.from_value({"method": "importance",
                                                            "beta": 1e-7})]:
        assert Estimator.from_label(est.label()) == est
    assert set(METHODS) == {"knuth", "importance", "perm"}


@pytest.mark.parametrize("value, key, found", [
    ({"method": "gwtw"}, "method", "str 'gwtw'"),
    ({"beta": 1.0}, "method", "no method"),
    ({"method": "perm", "population": 1}, "population", "int 1"),
    ({"method": "perm", "population": 2.5}, "population", "float 2.5"),
    ({"method": "importance", "beta": float("inf")}, "beta", "float inf"),
    ({"method": "importance", "beta": -0.1}, "beta", "float -0.1"),
    ({"method": "importance", "beta": True}, "beta", "bool True"),
    ({"method": "importance", "alpha": 1}, "alpha", "'alpha'"),
    ({"method": "knuth", "beta": 1}, "beta", "'beta'"),
    (["importance"], "", "list ['importance']"),
])
def test_bad_values_name_their_key(value, key, found):
    with pytest.raises(EstimatorError) as info:
        Estimator.from_value(value)
    assert (info.value.key, info.value.found) == (key, found)
    assert info.value.fix


# ---------------------------------------------------------------- the draws

def test_choose_draws_in_proportion_to_the_weights():
    rng = SplitMix64(5)
    ws = [1.0, 3.0, 0.5, 0.0001]
    counts = [0] * 4
    for _ in range(40_000):
        counts[choose(rng, ws, sum(ws))] += 1
    for c, w in zip(counts, ws):
        expected = 40_000 * w / sum(ws)
        assert abs(c - expected) < 4 * math.sqrt(expected) + 2


def test_heaviest_takes_the_largest_live_weight_lowest_index_first():
    assert heaviest([0.5, 2.0, 2.0, 9.0], [True, True, True, False]) == 1


def test_proposal_tables():
    assert knights_weights(0.0) == [1.0] * 9
    assert knights_weights(1.0)[2] == math.exp(-2.0)
    assert queens_weights(0.5, 4) == [math.exp(0.5 * f) for f in range(5)]


# ---------------------------------------------------------------- hand-checked values

@pytest.mark.parametrize("engine", ["python", "compiled"])
def test_importance_with_beta_0_agrees_with_knuths_estimator_in_mean(engine):
    # 3 x 4 from (0, 0): every probe of a uniform proposal has the weight Knuth's has
    # (the product of the branching factors), so the two estimates agree in mean
    est = Estimator.from_value({"method": "importance", "beta": 0.0})
    a = estimate_knights(3, 4, (0, 0), closed=False, probes=20_000, seed=3, estimator=est,
                         engine=engine)
    b = knuth_knights(3, 4, (0, 0), closed=False, probes=20_000, seed=3, engine=engine)
    assert abs(a.estimate - b.estimate) < 3 * math.hypot(a.estimate_se, b.estimate_se)
    assert abs(a.solutions_estimate - b.solutions_estimate) < \
        3 * math.hypot(a.solutions_estimate_se, b.solutions_estimate_se) + 1e-9


@pytest.mark.parametrize("est", WEIGHTED, ids=IDS)
@pytest.mark.parametrize("engine", ["python", "compiled"])
def test_a_forced_board_is_exact(est, engine):
    # N-Queens n = 1, 2: every probe is exact (n = 2: two children of equal weight, each
    # a dead end)
    for n, nodes, sols in ((1, 1, 1), (2, 2, 0)):
        e = estimate_queens(n, unique=False, probes=50, seed=1, estimator=est, engine=engine)
        assert (e.estimate, e.solutions_estimate, e.status) == (nodes, sols, Status.EXHAUSTED)
        assert e.estimate_se == 0.0
    e = estimate_knights(1, 1, (0, 0), closed=False, probes=3, seed=1, estimator=est,
                         engine=engine)
    assert (e.estimate, e.solutions_estimate) == (1.0, 1.0)


# ---------------------------------------------------------------- engines, budgets

@pytest.mark.parametrize("est", WEIGHTED + [Estimator.from_value(
    {"method": "perm", "population": 3, "beta": 0.0})], ids=IDS + ["perm-uniform"])
@pytest.mark.parametrize("seed", [0, 7, -5, 2**70 + 3])
def test_python_and_compiled_engines_are_equal(est, seed):
    for closed in (False, True):
        args = dict(closed=closed, probes=60, seed=seed, estimator=est)
        assert estimate_knights(5, 6, (1, 2), **args) == \
            estimate_knights(5, 6, (1, 2), **args, engine="compiled")
    for unique in (False, True):
        args = dict(unique=unique, probes=60, seed=seed, estimator=est)
        assert estimate_queens(9, **args) == estimate_queens(9, **args, engine="compiled")


@pytest.mark.parametrize("est", WEIGHTED, ids=IDS)
@pytest.mark.parametrize("engine", ["python", "compiled"])
def test_node_budget_stops_the_probes_and_leaves_the_unfinished_one_out(est, engine):
    e = estimate_knights(5, 5, (0, 0), closed=False, probes=10**6, seed=2, estimator=est,
                         max_nodes=5_000, engine=engine)
    assert e.status is Status.NODE_LIMIT and e.nodes == 5_000
    assert 0 < e.probes < 10**6
    full = estimate_knights(5, 5, (0, 0), closed=False, probes=e.probes, seed=2,
                            estimator=est, engine=engine)
    assert (full.estimate, full.solutions_estimate) == (e.estimate, e.solutions_estimate)
    q = estimate_queens(10, unique=False, probes=10**6, seed=2, estimator=est,
                        max_nodes=777, engine=engine)
    assert q.status is Status.NODE_LIMIT and q.nodes == 777


@pytest.mark.parametrize("est", WEIGHTED, ids=IDS)
def test_time_budget_stops_the_probes(est):
    e = estimate_knights(8, 8, (0, 0), closed=False, probes=2**40, seed=1, estimator=est,
                         max_seconds=0.3, engine="compiled")
    assert e.status is Status.TIME_LIMIT and e.probes > 10


def test_perm_counts_every_walker():
    est = Estimator.from_value({"method": "perm", "population": 7, "beta": 0.3})
    e = estimate_queens(8, unique=False, probes=10, seed=4, estimator=est)
    # each probe places 7 walkers on every row they reach: at least 7 * 1 per probe
    assert e.nodes >= 70 and e.max_depth == 8
    assert e.checks >= 8 * 7 * 10 * 1


# ---------------------------------------------------------------- unbiasedness

def knights_runs(rows, cols, start, est, probes, seeds):
    return [estimate_knights(rows, cols, start, closed=False, probes=probes, seed=s,
                             estimator=est, engine="compiled") for s in seeds]


@pytest.mark.parametrize("est", WEIGHTED, ids=IDS)
def test_5x5_from_every_start_unbiased(est):
    probes = 2_000 if est is IMPORTANCE else 100
    tours, trees = [], []
    for seed in range(30):
        runs = [knights_runs(5, 5, (r, c), est, probes, [seed * 25 + r * 5 + c])[0]
                for r in range(5) for c in range(5)]
        tours.append(sum(e.solutions_estimate for e in runs))
        trees.append(sum(e.estimate for e in runs))
    assert abs(z_score(tours, TOURS_5X5)) < 3
    assert abs(z_score(trees, sum(EXACT_5X5))) < 3
    corner = knights_runs(5, 5, (0, 0), est, probes, range(30))
    centre = knights_runs(5, 5, (2, 2), est, probes, range(30))
    assert abs(z_score([e.solutions_estimate for e in corner], 304)) < 3
    assert abs(z_score([e.solutions_estimate for e in centre], 64)) < 3
    assert abs(z_score([e.estimate for e in corner], EXACT_5X5[0])) < 3
    # the minority colour has no tour: no walker ever fills the board
    assert all(e.solutions_estimate == 0.0 and e.max_depth < 25
               for e in knights_runs(5, 5, (0, 1), est, probes, range(3)))


@pytest.mark.parametrize("est", WEIGHTED, ids=IDS)
def test_6x6_total_unbiased(est):
    probes = 1_000 if est is IMPORTANCE else 50
    totals = []
    for seed in range(20):
        totals.append(sum(knights_runs(6, 6, divmod(s, 6), est, probes, [seed * 36 + s])[0]
                          .solutions_estimate for s in range(36)))
    assert abs(z_score(totals, TOURS_6X6)) < 3


@pytest.mark.parametrize("est", WEIGHTED, ids=IDS)
@pytest.mark.parametrize("n", sorted(QUEENS))
def test_queens_unbiased(est, n):
    nodes, solutions, unique = QUEENS[n]
    probes = 300 if est is IMPORTANCE else 15
    runs = [estimate_queens(n, unique=False, probes=probes, seed=s, estimator=est,
                            engine="compiled") for s in range(40)]
    assert abs(z_score([e.estimate for e in runs], nodes)) < 3
    assert abs(z_score([e.solutions_estimate for e in runs], solutions)) < 3
    sym = [estimate_queens(n, unique=True, probes=probes, seed=s, estimator=est,
                           engine="compiled").solutions_estimate for s in range(40)]
    assert abs(z_score(sym, unique)) < 3


@pytest.mark.slow
@pytest.mark.parametrize("est", WEIGHTED, ids=IDS)
def test_python_engine_unbiased_on_5x5_corner(est):
    probes = 300 if est is IMPORTANCE else 15
    runs = [estimate_knights(5, 5, (0, 0), closed=False, probes=probes, seed=s, estimator=est)
            for s in range(40)]
    assert abs(z_score([e.solutions_estimate for e in runs], 304)) < 3
    assert abs(z_score([e.estimate for e in runs], EXACT_5X5[0])) < 3


# ---------------------------------------------------------------- coverage

def shipped_6x6() -> list[tuple[Estimator, int]]:
    """Each estimator of configs/open_tours_6x6_estimate.yaml with its probes per start."""
    cfg = yaml.safe_load((ROOT / "configs" / "open_tours_6x6_estimate.yaml").read_text())
    out = []
    for entry in cfg["include"]:
        out.append((Estimator.from_value(entry["estimator"]), int(entry["probes"])))
    return out


def test_the_shipped_6x6_config_names_each_weighted_estimator():
    assert sorted(e.method for e, _ in shipped_6x6()) == ["importance", "perm"]


@pytest.mark.slow
@pytest.mark.parametrize("index", [0, 1])
def test_95_percent_interval_of_the_6x6_total_covers_the_count(index):
    """200 seeded runs of the 36-start total at the shipped probes: the reported 95 %
    interval (total +- 1.96 x the root of the summed squared standard errors) covers
    6,637,920 in at least 90 % of them. A standard error that understates the spread
    fails here."""
    est, probes = shipped_6x6()[index]
    covered = 0
    for run in range(200):
        total = var = 0.0
        for s in range(36):
            e = estimate_knights(6, 6, divmod(s, 6), closed=False, probes=probes,
                                 seed=run * 36 + s + 1, estimator=est, engine="compiled")
            total += e.solutions_estimate
            var += e.solutions_estimate_se ** 2
        covered += abs(total - TOURS_6X6) <= 1.96 * math.sqrt(var)
    assert covered >= 180, f"{est.label()}: {covered} of 200 intervals cover the count"


def test_standard_errors_are_the_probes_spread():
    # the reported standard error of one run agrees with the spread of 30 runs
    runs = knights_runs(6, 6, (0, 0), IMPORTANCE, 2_000, range(30))
    spread = statistics.stdev(e.solutions_estimate for e in runs)
    reported = statistics.fmean(e.solutions_estimate_se for e in runs)
    assert 0.6 < reported / spread < 1.5


# ---------------------------------------------------------------- the shipped configs

A165134_8X8 = 19_591_828_170_979_904   # directed open tours of 8 x 8


def test_the_8x8_config_is_64_importance_trials(capsys):
    cfg = yaml.safe_load((ROOT / "configs" / "open_tours_8x8_estimate.yaml").read_text())
    assert Estimator.from_value(cfg["estimator"]).label() == "importance beta=0.4"
    assert cfg["matrix"] == {"start": "all"} and cfg["fixed"]["board"] == [8, 8]


@pytest.mark.slow
def test_the_8x8_config_answers_within_5_percent(tmp_path):
    """`btlab run configs/open_tours_8x8_estimate.yaml` at its committed seed: the sum over
    the 64 starts within 5 % of A165134, its 95 % interval covering it, in at most 600
    CPU seconds (the rows' cpu_ns)."""
    import btlab

    df = btlab.run(str(ROOT / "configs" / "open_tours_8x8_estimate.yaml"),
                   out=tmp_path / "r", backend="serial")
    assert len(df) == 64 and set(df["status"]) == {"exhausted"}
    total = df["solutions_estimate"].sum()
    se = math.sqrt((df["solutions_estimate_se"] ** 2).sum())
    assert abs(total / A165134_8X8 - 1) < 0.05, total
    assert abs(total - A165134_8X8) <= 1.96 * se
    assert df["cpu_ns"].sum() / 1e9 <= 600


def test_the_study_tables_and_figure(tmp_path):
    """bench/estimators.py on a small frame of the study's shape: the sums, the table and
    the figure."""
    from bench.estimators import TOURS_8X8, draw, table, totals

    rows = []
    for est in ("knuth", "importance beta=0.4", "perm population=100 beta=0.4"):
        for seconds in (0.1, 1.0):
            for seed in (1, 2):
                for start in range(2):
                    rows.append({"estimator": est, "budget_seconds": seconds, "seed": seed,
                                 "start_row": start, "solutions_estimate": TOURS_8X8 / 2,
                                 "solutions_estimate_se": TOURS_8X8 * 0.01 / seconds,
                                 "estimate": 1e23, "estimate_se": 1e21, "nodes": 10,
                                 "cpu_ns": int(seconds * 1e9)})
    t = totals(pd.DataFrame(rows))
    assert len(t) == 12 and (t["error"].abs() < 1e-12).all() and t["covers"].all()
    assert t["cpu"].tolist()[:2] == [0.2, 0.2]
    text = table(t)
    # two starts of relative SE 0.01 / seconds each: sqrt(2) x 10 % at 0.1 s
    assert text.count("\n") == 7 and "| knuth | 0.2 | 0.0% | 14.1% | 2 of 2 |" in text
    draw(t, tmp_path / "f.png")
    assert (tmp_path / "f.png").stat().st_size > 10_000
