"""``mode: estimate`` as the runner routes it (a problem's ``estimate`` call), ``probes`` as a
trial key, and pairing on ``restarts`` and ``probes``."""

from __future__ import annotations

import textwrap

import pandas as pd
import pytest

from btlab.analysis.search_keys import one_per_search, search_columns
from btlab.config.model import parse_config
from btlab.errors import ConfigError
from btlab.experiments.estimate import knuth_knights, knuth_queens
from btlab.problems import get_problem
from btlab.sweep.expand import expand
from btlab.views.report.survival import group_columns as survival_groups
from tests.helpers.cli import run_main, write

FAKE = '''
"""A problem whose estimator reports what it was given (a test double)."""
from typing import Literal

import pyarrow as pa

from btlab.experiments.core import SearchResult, Status
from btlab.problems.spec import Params, ProblemSpec


class P(Params):
    size: int = 3
    mode: Literal["first", "count", "estimate"] = "first"


def to_columns(p):
    return {"size": p["size"], "mode": p.get("mode", "first")}


def solve(c, max_nodes, max_seconds, seed, max_backtracks=None):
    return SearchResult(Status.SOLVED, c["size"], 0, 0, 0, 1, c["size"])


def estimate(c, probes, max_nodes, max_seconds, seed):
    CALLS.append((dict(c), probes, max_nodes, max_seconds, seed))
    return SearchResult(Status.EXHAUSTED, probes * c["size"], probes * (c["size"] - 1), probes,
                        0, 0, c["size"], estimate=probes + 0.5, estimate_se=0.25)


def verify(c, solution):
    return None


CALLS = []
PROBLEM = ProblemSpec(name="fake_estimate:PROBLEM", title="Fake", params=P,
                      columns=pa.schema([("size", pa.int32()), ("mode", pa.string())]),
                      to_columns=to_columns, solve=solve, verify=verify, estimate=estimate)
NO_ESTIMATE = ProblemSpec(name="fake_estimate:NO_ESTIMATE", title="Fake", params=P,
                          columns=PROBLEM.columns, to_columns=to_columns, solve=solve,
                          verify=verify)
'''


@pytest.fixture
def fake(tmp_path, monkeypatch):
    (tmp_path / "fake_estimate.py").write_text(FAKE)
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib
    import sys
    sys.modules.pop("fake_estimate", None)
    module = importlib.import_module("fake_estimate")
    yield module
    sys.modules.pop("fake_estimate", None)


def test_mode_estimate_runs_the_problems_estimator(tmp_path, fake):
    path = write(tmp_path / "e.yaml", """\
        name: est
        problem: "fake_estimate:PROBLEM"
        fixed: {size: 4}
        matrix:
          mode: [estimate, first]
          probes: [10, 30]
        exclude: [{mode: first, probes: 30}]
        budget: {nodes: 5000, seconds: 30}
        """)
    # probes with mode first is refused: the matrix gives it to both modes
    assert run_main("validate", path) == 2
    path.write_text(path.read_text().replace("exclude: [{mode: first, probes: 30}]",
                                             "exclude: [{mode: first}]\n"
                                             "include: [{mode: first, size: 4}]"))
    assert run_main("run", path, "--out", tmp_path / "out", "--backend", "serial",
                    "--quiet") == 0
    df = pd.read_parquet(tmp_path / "out").sort_values(["mode", "probes"])
    est = df[df["mode"] == "estimate"]
    assert est["probes"].tolist() == [10, 30]
    assert est["estimate"].tolist() == [10.5, 30.5]
    assert est["estimate_se"].tolist() == [0.25, 0.25]
    assert est["nodes"].tolist() == [40, 120] and est["status"].eq("exhausted").all()
    first = df[df["mode"] == "first"]
    assert first["probes"].isna().all() and first["estimate"].isna().all()
    assert [(c[1], c[2], c[3]) for c in fake.CALLS] == [(10, 5000, 30.0), (30, 5000, 30.0)]
    trials = {t.probes: t for t in expand(parse_config(path.read_text()))}
    assert [c[4] for c in fake.CALLS] == [trials[10].solver_seed, trials[30].solver_seed]
    assert run_main("show", tmp_path / "out") == 0


@pytest.mark.slow
def test_report_reads_estimate_rows(tmp_path, fake):
    path = write(tmp_path / "e.yaml", """\
        name: est
        problem: "fake_estimate:PROBLEM"
        matrix: {size: [3, 4], mode: [estimate]}
        probes: 10
        """)
    assert run_main("run", path, "--out", tmp_path / "out", "--backend", "serial",
                    "--quiet") == 0
    assert run_main("report", tmp_path / "out", "-o", tmp_path / "r.html") == 0
    assert (tmp_path / "r.html").stat().st_size > 1000


@pytest.mark.parametrize("text, fragments", [
    ('problem: "fake_estimate:NO_ESTIMATE"\nfixed: {mode: estimate}\nprobes: 5\n',
     ["error at fixed.mode", "no tree-size estimator"]),
    ('problem: "fake_estimate:PROBLEM"\nfixed: {mode: estimate}\n',
     ["error at fixed.mode", "probes: K", "add probes: 1000"]),
    ('problem: "fake_estimate:PROBLEM"\nfixed: {mode: estimate}\nprobes: 0\n',
     ["error at probes", "at least 1"]),
    ('problem: "fake_estimate:PROBLEM"\nfixed: {mode: estimate, probes: true}\n',
     ["error at fixed.probes"]),
    ('problem: "fake_estimate:PROBLEM"\nmatrix: {mode: [first], probes: [3]}\n',
     ["error at matrix.probes[0]", "probes only with mode: estimate"]),
    ('problem: "fake_estimate:PROBLEM"\nfixed: {mode: estimate}\nprobes: 5\n'
     'split: {depth: 1}\n', ["no split with mode: estimate"]),
])
def test_estimate_refusals(fake, text, fragments):
    with pytest.raises(ConfigError) as info:
        expand(parse_config("name: e\n" + text, "e.yaml"))
    message = " ".join(str(info.value).split())
    for fragment in fragments:
        assert fragment in message, message


@pytest.mark.parametrize("problem, fixed, call", [
    ("n_queens", "{n: 8, mode: estimate, strategy: bitmask}",
     lambda c, probes, seed: knuth_queens(8, unique=False, probes=probes, seed=seed)),
    ("knights_tour", "{board: 5, mode: estimate, strategy: iterative, start: [0, 1]}",
     lambda c, probes, seed: knuth_knights(5, 5, (0, 1), closed=False, probes=probes,
                                           seed=seed)),
])
def test_built_in_estimates_run_on_both_engines(tmp_path, capsys, problem, fixed, call):
    path = write(tmp_path / "e.yaml", f"""\
        name: e
        problem: {problem}
        fixed: {fixed}
        matrix: {{engine: [python, compiled]}}
        probes: 2000
        seed: 11
        """)
    assert run_main("run", path, "--out", tmp_path / "out", "--backend", "serial") == 0
    shown = capsys.readouterr().out
    assert "Knuth's estimates of the count-mode tree" in " ".join(shown.split())
    df = pd.read_parquet(tmp_path / "out")
    assert sorted(df["engine"]) == ["compiled", "python"] and df["status"].eq("exhausted").all()
    trial = next(iter(expand(parse_config(path.read_text()))))
    want = call(trial.columns, 2000, trial.solver_seed)
    for _, row in df.iterrows():  # the same probes on both engines: the same floats
        assert (row["estimate"], row["estimate_se"], row["nodes"], row["checks"]) == (
            want.estimate, want.estimate_se, want.nodes, want.checks)
        assert (row["solutions_estimate"], row["solutions_estimate_se"]) == (
            want.solutions_estimate, want.solutions_estimate_se)
        assert row["backtracks"] == 0 and row["probes"] == 2000
    if problem == "n_queens":  # 2,056 placements and 92 solutions, within 3 standard errors
        assert abs(want.estimate - 2056) < 3 * want.estimate_se
        assert abs(want.solutions_estimate - 92) < 3 * want.solutions_estimate_se


def test_restarts_define_the_search_and_budgets_do_not():
    rows = pd.DataFrame({
        "problem": "knights_tour", "rows": 6, "cols": 6, "start_row": 0, "start_col": 0,
        "heuristic": "none", "tie_break": "random", "strategy": "recursive", "mode": "first",
        "move_order": "default", "closed": False, "engine": "python", "seed": 1,
        "repeat": 0, "status": ["solved", "solved", "node_limit"],
        "nodes": [500, 900, 100], "backtracks": [400, 800, 99],
        "budget_nodes": [None, None, 100], "probes": None,
        "restarts": ["luby unit=1 on=backtracks", None, None]})
    on = search_columns(rows)
    assert "restarts" in on and "probes" in on and "budget_nodes" not in on
    kept = one_per_search(rows)
    # the restart trial is its own search; the two plain ones (budgets 100 and none) one
    assert sorted(kept["nodes"].tolist()) == [500, 900]
    # the report's survival curves: with and without restarts are two groups
    assert "restarts" in survival_groups(rows, get_problem("knights_tour"))
    assert "restarts" not in survival_groups(rows.assign(restarts=None),
                                             get_problem("knights_tour"))


def test_budget_in_include_and_exclude_entries():
    text = textwrap.dedent("""\
        name: b
        problem: knights_tour
        fixed: {board: 5}
        matrix:
          heuristic: [none, warnsdorff]
          budget: [{nodes: 100}, {nodes: 200}]
        exclude: [{heuristic: none, budget: {nodes: 200}}]
        include: [{heuristic: warnsdorff, budget: {nodes: 300}, start: [1, 2]}]
        budget: {seconds: 5}
        """)
    got = sorted((t.columns["heuristic"], t.budget_nodes, t.budget_seconds)
                 for t in expand(parse_config(text)))
    assert got == [("none", 100, 5.0), ("warnsdorff", 100, 5.0), ("warnsdorff", 200, 5.0),
                   ("warnsdorff", 300, 5.0)]
