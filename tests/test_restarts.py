"""Restarts (runner/config/restarts.py): the policies, attempt seeds, exact counters, refusals."""

from __future__ import annotations

import pandas as pd
import pytest

from btlab.config.model import parse_config
from btlab.config.restarts import Restarts, attempt_seed, luby, run_restarts
from btlab.errors import ConfigError
from btlab.execution.execute import run_trial
from btlab.problems import get_problem
from btlab.sweep.expand import expand
from btlab.sweep.trial import Trial
from tests.helpers.cli import run_main, write

KNIGHTS = get_problem("knights_tour")


def columns(**params):
    return KNIGHTS.to_columns(KNIGHTS.params.model_validate(params).model_dump())


# --------------------------------------------------------------------------- policies


def test_luby_sequence_values():
    assert [luby(i) for i in range(1, 32)] == [
        1, 1, 2, 1, 1, 2, 4, 1, 1, 2, 1, 1, 2, 4, 8,
        1, 1, 2, 1, 1, 2, 4, 1, 1, 2, 1, 1, 2, 4, 8, 16]
    with pytest.raises(ValueError):
        luby(0)


def test_cutoffs_of_each_policy():
    assert [Restarts("luby", 3, "nodes").cutoff(k) for k in range(7)] == [3, 3, 6, 3, 3, 6, 12]
    assert [Restarts("fixed", 0, "backtracks").cutoff(k) for k in range(3)] == [0, 0, 0]
    assert [Restarts("geometric", 3, "nodes", factor=2).cutoff(k) for k in range(4)] == [
        3, 6, 12, 24]
    assert [Restarts("geometric", 10, "nodes", factor=1.5).cutoff(k) for k in range(4)] == [
        10, 15, 22, 33]
    assert Restarts("geometric", 10, "nodes", factor=2).cutoff(500) == 1 << 62


def test_attempt_seeds_are_splitmix64_outputs():
    # SplitMix64 seeded with 0: first outputs 0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4
    assert attempt_seed(0, 0) == 0xE220A8397B1DCDAF >> 1
    assert attempt_seed(0, 1) == 0x6E789E6AA1B965F4 >> 1
    assert all(0 <= attempt_seed((1 << 64) - 1, k) < 1 << 63 for k in range(10))


def test_labels_are_canonical():
    assert Restarts("luby", 1, "backtracks", 1000).label() == "luby unit=1 on=backtracks max=1000"
    assert Restarts("geometric", 5, "nodes", None, 2).label() == (
        "geometric unit=5 on=nodes factor=2")


# --------------------------------------------------------------------------- exactness


def by_hand(cols, policy, seed):
    """The attempts run one by one through the spec's solve with the same seeds and
    cut-offs: (summed counters, attempts, abandoned, status, the last result)."""
    total = dict(nodes=0, backtracks=0, dead_ends=0, checks=0)
    depth = abandoned = 0
    cut_status = "node_limit" if policy.on == "nodes" else "backtrack_limit"
    for k in range(policy.max):
        cut = policy.cutoff(k)
        if policy.on == "nodes":
            result = KNIGHTS.solve(cols, cut, None, attempt_seed(seed, k))
        else:
            result = KNIGHTS.solve(cols, None, None, attempt_seed(seed, k), max_backtracks=cut)
        for name in total:
            total[name] += getattr(result, name)
        depth = max(depth, result.max_depth)
        if result.status.value != cut_status:
            return total, depth, k + 1, abandoned, result.status.value, result
        abandoned += result.nodes - result.backtracks
    return total, depth, policy.max, abandoned, "restart_limit", None


#: (board, start, heuristic, policy, seed, status, attempts): cases that end solved after
#: several attempts and cases that use up max, for every heuristic and both kinds of cut-off.
CASES = [
    (6, [0, 0], "none", Restarts("luby", 10, "backtracks", 400), 3, "solved", 282),
    (6, [0, 0], "none", Restarts("luby", 100, "nodes", 200), 2, "solved", 154),
    (6, [0, 0], "none", Restarts("luby", 10, "backtracks", 50), 3, "restart_limit", 50),
    (8, [0, 0], "none", Restarts("luby", 50, "backtracks", 300), 19, "solved", 63),
    (8, [0, 0], "none", Restarts("geometric", 100, "nodes", 9, 2), 5, "restart_limit", 9),
    (8, [0, 0], "warnsdorff", Restarts("fixed", 0, "backtracks", 50), 27, "solved", 2),
    (8, [0, 0], "warnsdorff", Restarts("luby", 64, "nodes", 50), 27, "solved", 2),
    (6, [2, 2], "warnsdorff", Restarts("fixed", 0, "backtracks", 50), 8, "solved", 2),
    (6, [2, 2], "warnsdorff", Restarts("luby", 36, "nodes", 50), 8, "solved", 2),
]


@pytest.mark.parametrize("n, start, heuristic, policy, seed, status, attempts", CASES)
def test_restart_trial_is_the_sum_of_its_attempts(n, start, heuristic, policy, seed, status,
                                                   attempts):
    cols = columns(board=[n, n], start=start, heuristic=heuristic, tie_break="random")
    run = run_restarts(KNIGHTS.solve, cols, policy, seed, None, None)
    total, depth, tried, abandoned, ended, last = by_hand(cols, policy, seed)
    r = run.result
    assert (ended, tried) == (status, attempts)
    assert {k: getattr(r, k) for k in total} == total
    assert (r.max_depth, run.attempts, run.abandoned, r.status.value) == (
        depth, attempts, abandoned, status)
    if status == "solved":
        assert r.nodes - r.backtracks - run.abandoned == n * n
        assert run.success_seed == attempt_seed(seed, attempts - 1)
        assert r.solution == last.solution and r.solutions == 1
        KNIGHTS.verify(cols, r.solution)
        # the successful attempt alone, rerun from its seed, finds the same tour
        assert KNIGHTS.solve(cols, None, None, run.success_seed).solution == r.solution
    else:
        assert run.success_seed is None and r.solution is None


@pytest.mark.parametrize("heuristic, policy", [
    ("none", Restarts("luby", 20, "backtracks", 300)),
    ("warnsdorff", Restarts("fixed", 0, "backtracks", 40)),
    ("none", Restarts("luby", 300, "nodes", 300)),
])
def test_compiled_engine_gives_the_python_counters(heuristic, policy):
    rows = []
    for engine, strategy in (("python", "recursive"), ("compiled", "iterative")):
        cols = columns(board=[7, 7], heuristic=heuristic, tie_break="random", engine=engine,
                       strategy=strategy)
        rows.append(run_trial(Trial("knights_tour", cols, None, None, 11, 0, restarts=policy)))
    keys = ("status", "nodes", "backtracks", "dead_ends", "checks", "solutions", "max_depth",
            "abandoned", "attempts", "success_seed", "solution")
    assert {k: rows[0][k] for k in keys} == {k: rows[1][k] for k in keys}
    assert rows[0]["attempts"] > 1


def test_trial_budgets_are_per_trial():
    cols = columns(board=[8, 8], heuristic="none", tie_break="random")
    policy = Restarts("fixed", 1000, "nodes")
    run = run_restarts(KNIGHTS.solve, cols, policy, 3, 4500, None)
    assert (run.result.status.value, run.result.nodes, run.attempts) == ("node_limit", 4500, 5)
    assert run.abandoned == sum(  # the four cut-offs, not the trial's own stop
        1000 - KNIGHTS.solve(cols, 1000, None, attempt_seed(3, k)).backtracks for k in range(4))
    bt = run_restarts(KNIGHTS.solve, cols, Restarts("fixed", 7, "backtracks"), 3, None, None,
                      max_backtracks=30)
    assert (bt.result.status.value, bt.result.backtracks, bt.attempts) == (
        "backtrack_limit", 30, 5)
    timed = run_restarts(KNIGHTS.solve, cols, Restarts("fixed", 5, "backtracks"), 3, None, 0.05)
    assert timed.result.status.value == "time_limit"


# --------------------------------------------------------------------------- configs


CONFIG = """\
    name: restarts-sweep
    problem: knights_tour
    fixed: {board: [6, 6], heuristic: warnsdorff, tie_break: random}
    matrix:
      seed: 1..3
      budget: [{backtracks: 0}, {nodes: 100_000}]
      restarts: [null, {policy: luby, unit: 1, on: backtracks, max: 200}]
    exclude:
      - {budget: {backtracks: 0}, restarts: {policy: luby, unit: 1, on: backtracks, max: 200}}
    budget: {seconds: 60}
    """


def test_seed_sweep_with_restarts_runs_and_writes_the_columns(tmp_path, capsys):
    path = write(tmp_path / "r.yaml", CONFIG)
    assert run_main("run", path, "--out", tmp_path / "out", "--backend", "serial",
                    "--quiet") == 0
    # the run's tables tell the trials apart by their budget and restarts
    out = " ".join(capsys.readouterr().out.split())
    assert "trials by status, one row per budget_nodes, budget_backtracks, restarts" in out
    df = pd.read_parquet(tmp_path / "out").sort_values(["seed", "trial_id"])
    assert len(df) == 9  # 3 seeds x (2 budgets x 2 restarts - 1 excluded)
    assert df["budget_seconds"].eq(60.0).all()
    with_restarts = df[df["restarts"].notna()]
    assert set(with_restarts["restarts"]) == {"luby unit=1 on=backtracks max=200"}
    assert with_restarts["budget_nodes"].eq(100_000).all()
    assert with_restarts["budget_backtracks"].isna().all()
    assert with_restarts["attempts"].ge(1).all()
    solved = with_restarts[with_restarts["status"] == "solved"]
    assert len(solved) == 3
    assert (solved["nodes"] - solved["backtracks"] - solved["abandoned"]).eq(36).all()
    assert solved["success_seed"].notna().all()
    plain = df[df["restarts"].isna()]
    assert plain[["abandoned", "attempts", "success_seed"]].isna().all().all()
    assert set(plain["budget_backtracks"].dropna()) == {0}
    assert run_main("show", tmp_path / "out") == 0


@pytest.mark.slow
def test_report_reads_restart_rows(tmp_path):
    path = write(tmp_path / "r.yaml", CONFIG)
    assert run_main("run", path, "--out", tmp_path / "out", "--backend", "serial",
                    "--quiet") == 0
    assert run_main("report", tmp_path / "out", "-o", tmp_path / "r.html") == 0
    assert "luby unit=1 on=backtracks max=200" in (tmp_path / "r.html").read_text()


def test_matrix_budget_merges_over_the_top_level_budget():
    config = parse_config("""\
name: m
problem: knights_tour
fixed: {board: 5}
matrix:
  budget: [{backtracks: 0}, {nodes: 10, seconds: null}, {}]
budget: {nodes: 1000, seconds: 60}
""")
    got = [(t.budget_nodes, t.budget_backtracks, t.budget_seconds) for t in expand(config)]
    assert got == [(1000, 0, 60.0), (10, None, None), (1000, None, 60.0)]
    plain = parse_config("name: m\nproblem: knights_tour\nfixed: {board: 5}\n"
                         "budget: {nodes: 1000, seconds: 60}\n")
    # a matrix budget equal to the top-level one is the same trial
    assert expand(config)[2].trial_id == expand(plain)[0].trial_id


def test_ids_of_configs_without_the_new_keys_are_unchanged():
    """Trial ids written before budget, restarts and probes became trial keys."""
    config = parse_config("""\
name: ids
problem: knights_tour
fixed: {board: [5, 5], heuristic: warnsdorff, tie_break: random}
matrix: {seed: [1, 2]}
budget: {nodes: 1000, seconds: 10}
""")
    assert [t.trial_id for t in expand(config)] == ["96f3f276fe3cf49d", "0e470aff3926657d"]
    queens = parse_config("name: q\nproblem: n_queens\nfixed: {n: 8, mode: count}\n")
    assert [t.trial_id for t in expand(queens)] == ["3caabafbcdc0aa1b"]


def test_restarts_and_probes_are_part_of_the_id_only_when_set():
    base = "name: i\nproblem: knights_tour\nfixed: {board: 5, tie_break: random}\n"
    plain = expand(parse_config(base))[0]
    top = expand(parse_config(base + "restarts: {policy: fixed, unit: 5, max: 3}\n"))[0]
    fixed = expand(parse_config(base.replace("tie_break: random", "tie_break: random, "
                                             "restarts: {policy: fixed, unit: 5, max: 3}")))[0]
    assert top.trial_id == fixed.trial_id != plain.trial_id
    assert top.solver_seed == plain.solver_seed
    null = expand(parse_config(base + "matrix: {restarts: [null]}\n"))[0]
    assert null.trial_id == plain.trial_id


K = "name: t\nproblem: knights_tour\n"
RANDOM = "fixed: {board: 6, tie_break: random}\n"
LUBY = "restarts: {policy: luby, unit: 1, on: backtracks, max: 100}\n"


@pytest.mark.parametrize("text, fragments", [
    ("name: t\nproblem: n_queens\nfixed: {n: 8}\n" + LUBY,
     ["restarts on a trial whose search draws from its seed"]),
    (K + "fixed: {board: 6}\n" + LUBY,
     ["draws nothing from its seed", "set tie_break: random"]),
    (K + "fixed: {board: 6, tie_break: random, mode: count}\n" + LUBY,
     ["error at fixed.mode", "mode: first with restarts"]),
    (K + RANDOM + LUBY + "split: {depth: 2}\n", ["no restarts in a split search"]),
    (K + "fixed: {board: 6, tie_break: random, strategy: amb}\n" + LUBY,
     ["error at fixed.strategy", "honours a backtrack cut-off"]),
    (K + RANDOM + "restarts: {policy: luby, unit: 1}\n",
     ["restarts with max (the most attempts) or a trial budget", "could run for ever"]),
    (K + RANDOM + "restarts: {policy: luby, unit: 0, on: nodes, max: 5}\n",
     ["unit must be at least 1 with on: nodes"]),
    (K + RANDOM + "restarts: {policy: fixed, unit: 2, max: 5, factor: 3}\n",
     ["factor is for policy: geometric only"]),
    (K + RANDOM + "restarts: {policy: lubby, unit: 2, max: 5}\n",
     ["error at restarts.policy", "did you mean 'luby'?"]),
    (K + RANDOM + "restarts: {policy: luby, unit: 2, max: 5, limit: 3}\n",
     ["error at restarts.limit", "unknown key 'limit'"]),
    (K + RANDOM + "matrix: {restarts: [{policy: luby, unit: -1, max: 3}]}\n",
     ["error at matrix.restarts[0].unit", "at least 0"]),
    (K + RANDOM + "matrix: {budget: [{nodes: 0}]}\n", ["error at matrix.budget[0].nodes"]),
    (K + RANDOM + "matrix: {budget: {nodes: 5}}\n",
     ["error at matrix.budget", "a list of budget values"]),
    (K + RANDOM + "matrix: {budget: [{node: 5}]}\n",
     ["error at matrix.budget[0].node", "did you mean 'nodes'?"]),
    (K + "fixed: {board: 6, budget: 7}\n", ["error at fixed.budget", "a budget mapping"]),
    (K + RANDOM + "exclude: [{budget: {nodes: 5}}]\n",
     ["error at exclude[0].budget", "which is in neither"]),
    (K + "fixed: {board: 6, tie_break: random, restarts: {policy: fixed, unit: 1, max: 2}}\n"
     "matrix: {budget: [{backtracks: 0}]}\nsplit: {depth: 1}\n",
     ["error at matrix.budget[0].backtracks", "no backtrack budget in a split search"]),
    (K + RANDOM + "probes: 10\n", ["error at probes", "probes only with mode: estimate"]),
    (K + "fixed: {board: 6, mode: estimate}\n", ["error at fixed.mode", "probes: K",
                                                  "add probes: 1000"]),
    (K + RANDOM + "matrix: {probes: [0]}\n", ["error at matrix.probes[0]", "at least 1"]),
])
def test_refusals_name_the_key(tmp_path, capsys, text, fragments):
    with pytest.raises(ConfigError) as info:
        expand(parse_config(text, "t.yaml"))
    message = " ".join(str(info.value).split())
    for fragment in fragments:
        assert fragment in message, message
    # the same at the command line: exit status 2, the message on stderr
    path = tmp_path / "t.yaml"
    path.write_text(text)
    assert run_main("validate", path) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert all(fragment in err for fragment in fragments), err


def test_bad_overrides_exit_2(tmp_path, capsys):
    path = write(tmp_path / "r.yaml", CONFIG)
    assert run_main("validate", path, "+restarts={policy: lubyy, unit: 1, max: 5}") == 2
    assert "did you mean 'luby'?" in capsys.readouterr().err
    assert run_main("validate", path, "matrix.budget=[{nodes: -1}]") == 2
    assert "matrix.budget[0].nodes" in capsys.readouterr().err
    assert run_main("validate", path, "+restarts={policy: luby, unit: 1, max: 10}") == 0


def test_a_restart_trial_is_backtrack_free_only_on_its_first_attempt():
    from btlab.views.tables import status_and_work

    df = pd.DataFrame({"g": ["a"] * 4, "status": ["solved"] * 4, "nodes": [36, 80, 36, 36],
                       "backtracks": [0, 0, 0, 0], "abandoned": [None, 44, 0, None],
                       "solutions": 1})
    counts, _, _ = status_and_work(df, ["g"], "T", zero="0-backtrack starts")
    assert [str(c) for c in counts.columns[-1]._cells] == ["3"]
