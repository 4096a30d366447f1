"""The ``estimator`` trial key of ``mode: estimate``: from a config to the trial, its id, its
row's ``estimator`` column and the tables; the problems' ``estimators``; the refusals.

The methods' algorithms are tested where they are written (experiments/estimate.py's tests);
here each reaches its row exactly, and a plug-in problem's estimate function reports the
estimator it was given.
"""

from __future__ import annotations

import importlib
import shutil
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest
from rich.console import Console

from btlab import analysis
from btlab.analysis.search_keys import search_columns
from btlab.config.model import parse_config
from btlab.errors import ConfigError
from btlab.experiments.estimate import estimate_knights, estimate_queens
from btlab.experiments.estimators import DEFAULT, Estimator
from btlab.problems import get_problem
from btlab.sweep.expand import count_trials, expand
from btlab.sweep.trial import Trial
from btlab.views.estimate_table import print_estimates
from btlab.views.failures import FailureLog
from btlab.views.findings import _estimates
from btlab.views.tables import group_columns
from tests.helpers.cli import run_main, write
from tests.test_trial_ids import DATA, PINNED

QUEENS = "name: q\nproblem: n_queens\nprobes: 100\nseed: 3\nfixed: {n: 6, mode: estimate}\n"
KNIGHTS = ("name: k\nproblem: knights_tour\nprobes: 100\nseed: 3\n"
           "fixed: {board: 5, mode: estimate, heuristic: warnsdorff}\n")


def ids(text: str) -> list[str]:
    return [t.trial_id for t in expand(parse_config(text, "t.yaml"))]


# --------------------------------------------------------------------------- ids


@pytest.mark.parametrize("written", [
    "", "estimator: knuth\n", "estimator: null\n", "estimator: {method: knuth}\n",
    "matrix: {estimator: [knuth]}\n", "matrix: {estimator: [knuth, null, {method: knuth}]}\n",
    "include: [{estimator: knuth}]\n",
], ids=["omitted", "top", "null", "mapping", "matrix", "matrix-forms", "include"])
@pytest.mark.parametrize("head", [QUEENS, KNIGHTS], ids=["queens", "knights"])
def test_knuth_written_or_left_out_keeps_the_ids(head, written):
    config = parse_config(head + written, "t.yaml")
    trials = expand(config)
    assert len(trials) == 1 == count_trials(config)
    (t,) = trials
    assert t.estimator == DEFAULT and t.estimator.label() == "knuth"
    # the id of the same trial made without the key (as before it existed)
    bare = Trial(t.problem, t.columns, t.budget_nodes, t.budget_seconds, t.seed, t.repeat,
                 probes=t.probes)
    assert bare.estimator is None and (t.trial_id, t.solver_seed) == (bare.trial_id,
                                                                      bare.solver_seed)


def test_the_pinned_ids_are_unchanged_with_estimator_knuth_written():
    """tests/data/ids/queens.yaml holds an estimate trial (n = 8, probes): writing
    ``estimator: knuth`` gives exactly the ids btlab 0.1 wrote."""
    text = (DATA / "queens.yaml").read_text()
    assert [t.trial_id for t in expand(parse_config(text))] == [i for i, _ in PINNED["queens"]]
    written = text.replace("probes: 20}", "probes: 20, estimator: knuth}")
    assert written != text and ids(written) == [i for i, _ in PINNED["queens"]]
    estimates = [t for t in expand(parse_config(text)) if t.columns["mode"] == "estimate"]
    assert estimates and all(t.estimator == DEFAULT for t in estimates)


def test_two_estimators_are_two_trials_with_two_ids():
    text = QUEENS + "matrix:\n  estimator: [knuth, {method: importance, beta: 0.5}]\n"
    trials = expand(parse_config(text))
    assert [t.estimator.label() for t in trials] == ["knuth", "importance beta=0.5"]
    assert len({t.trial_id for t in trials}) == 2 == count_trials(parse_config(text))
    # the same solver seed: both estimators draw from the same stream
    assert trials[0].solver_seed == trials[1].solver_seed
    # forms of one estimator are one trial: the method alone takes the default beta
    forms = QUEENS + ("matrix:\n  estimator: [importance, {method: importance, beta: 0.5},"
                      " {beta: 0.5, method: importance}]\n")
    assert ids(forms) == [trials[1].trial_id] and count_trials(parse_config(forms)) == 1


def test_no_rounding_in_the_id():
    text = QUEENS + ("matrix:\n  estimator: [{method: importance, beta: 1.5}, "
                     "{method: importance, beta: 1.5000001}, {method: importance, beta: 1}]\n")
    trials = expand(parse_config(text))
    assert [t.estimator.label() for t in trials] == [
        "importance beta=1.5", "importance beta=1.5000001", "importance beta=1.0"]
    assert len({t.trial_id for t in trials}) == 3
    assert ids(QUEENS + "estimator: {method: importance, beta: 1}\n") == [trials[2].trial_id]
    perm = ids(QUEENS + "matrix:\n  estimator: [{method: perm, population: 100}, "
               "{method: perm, population: 101}, perm]\n")
    assert len(perm) == 2  # population 100 is the default: perm alone is the first


def test_exclude_drops_an_estimator_written_in_another_form():
    text = QUEENS + ("matrix:\n  estimator: [knuth, {method: importance, beta: 0.5}, "
                     "{method: perm, population: 10}]\n"
                     "exclude: [{estimator: importance}, {estimator: [{population: 10, "
                     "method: perm}]}]\n")
    assert [t.estimator.label() for t in expand(parse_config(text))] == ["knuth"]


def test_overrides_set_and_sweep_the_estimator(tmp_path, capsys):
    path = write(tmp_path / "q.yaml", QUEENS)
    want = ids(QUEENS + "estimator: {method: importance, beta: 2}\n")
    config = parse_config(QUEENS, "q.yaml", ["+estimator.method=importance",
                                             "+estimator.beta=2"])
    assert [t.trial_id for t in expand(config)] == want
    swept = parse_config(QUEENS, "q.yaml", ["+matrix.estimator=knuth,{method: perm}"])
    assert [t.estimator.label() for t in expand(swept)] == ["knuth",
                                                             "perm population=100 beta=0.5"]
    assert run_main("validate", path, "+estimator=knuth") == 0
    assert "estimator='knuth'" in capsys.readouterr().out
    assert run_main("validate", path, "+estimator=knuth,importance") == 2
    assert "write instead +matrix.estimator=knuth,importance" in " ".join(
        capsys.readouterr().err.split())


# --------------------------------------------------------------------------- the column


def test_the_estimator_column_holds_the_label_of_every_estimate_row(tmp_path, capsys):
    path = write(tmp_path / "q.yaml", """\
        name: q
        problem: n_queens
        seed: 3
        fixed: {n: 6}
        matrix: {mode: [count]}
        include:
          - {mode: estimate, probes: 50}
          - {mode: estimate, probes: 50, estimator: {method: importance, beta: 0}}
        """)
    code = run_main("run", path, "--out", tmp_path / "out", "--backend", "serial")
    shown = " ".join(capsys.readouterr().out.split())
    df = pd.read_parquet(tmp_path / "out").sort_values(["mode", "probes"])
    assert code == (1 if df["status"].eq("error").any() else 0)  # exit 1: an error row
    got = {(m, e if isinstance(e, str) else None): s
           for m, e, s in zip(df["mode"], df["estimator"], df["status"])}
    assert set(got) == {("count", None), ("estimate", "knuth"),
                        ("estimate", "importance beta=0.0")}
    assert got[("count", None)] == "exhausted" and got[("estimate", "knuth")] == "exhausted"
    knuth = df[df["estimator"] == "knuth"].iloc[0]
    assert abs(knuth["estimate"] - 149) < 4 * knuth["estimate_se"]  # n = 6: 149 placements
    assert got[("estimate", "importance beta=0.0")] == "exhausted"
    # the table of estimates names the estimator when the rows have more than one
    assert "estimates of the count-mode tree" in shown and "importance beta=0.0" in shown
    assert list(analysis.load(tmp_path / "out")["estimator"].fillna("-")) == [
        e if isinstance(e, str) else "-" for e in pd.read_parquet(tmp_path / "out")[
            "estimator"]]


@pytest.mark.parametrize("problem, fixed, call, truth", [
    ("knights_tour", "{board: 5, start: [0, 0], mode: estimate, heuristic: warnsdorff}",
     lambda est, seed: estimate_knights(5, 5, (0, 0), closed=False, probes=1500, seed=seed,
                                        estimator=est),
     (None, 304)),  # OEIS A165134: 304 directed open tours from a corner of 5 x 5
    ("n_queens", "{n: 8, mode: estimate}",
     lambda est, seed: estimate_queens(8, unique=False, probes=1500, seed=seed, estimator=est),
     (2056, 92)),  # Knuth: 2,056 placements; A000170: 92 solutions
])
def test_each_estimator_reaches_its_row(tmp_path, problem, fixed, call, truth):
    """The row of each estimator holds exactly what the problem's estimator gives for the
    trial's solver seed, and it estimates the known counts (within 4 standard errors)."""
    path = write(tmp_path / "e.yaml", f"""\
        name: e
        problem: {problem}
        probes: 1500
        seed: 5
        fixed: {fixed}
        matrix:
          estimator: [knuth, {{method: importance, beta: 0.5}}, {{method: perm, population: 20}}]
        """)
    assert run_main("run", path, "--out", tmp_path / "out", "--backend", "serial",
                    "--quiet") == 0
    rows = pd.read_parquet(tmp_path / "out").set_index("estimator")
    trials = expand(parse_config(path.read_text()))
    assert list(rows.index) == [t.estimator.label() for t in trials]
    nodes, solutions = truth
    for t in trials:
        row, want = rows.loc[t.estimator.label()], call(t.estimator, t.solver_seed)
        assert (row["estimate"], row["estimate_se"], row["solutions_estimate"],
                row["solutions_estimate_se"], row["nodes"], row["status"]) == (
            want.estimate, want.estimate_se, want.solutions_estimate,
            want.solutions_estimate_se, want.nodes, "exhausted")
        if t.estimator.method != "knuth":  # knuth's 5 x 5 solutions: a few probes carry them
            assert abs(row["solutions_estimate"] - solutions) < 4 * row["solutions_estimate_se"]
        if nodes is not None:
            assert abs(row["estimate"] - nodes) < 4 * row["estimate_se"]


def test_a_folder_written_before_the_column_reads_knuth_for_its_estimates(tmp_path):
    folder = tmp_path / "queens"
    shutil.copytree(DATA / "queens", folder)
    raw = pd.read_parquet(folder)
    assert "estimator" not in raw.columns and raw["probes"].notna().any()
    df = analysis.load(folder)
    assert list(df["estimator"]) == ["knuth" if m == "estimate" else None
                                     for m in df["mode"].astype("object")]
    # a run into it rewrites the part with the column (the same values on disk)
    assert run_main("run", DATA / "queens.yaml", "--out", folder, "--backend", "serial",
                    "--quiet") == 0
    disk = pd.read_parquet(folder)
    assert list(disk["estimator"]) == ["knuth" if m == "estimate" else None
                                       for m in disk["mode"]]


def _rows(estimators: list[str | None]) -> pd.DataFrame:
    n = len(estimators)
    return pd.DataFrame({
        "trial_id": [f"t{i}" for i in range(n)], "problem": "n_queens", "n": 8,
        "strategy": "recursive", "mode": "estimate", "unique": False, "method": "none",
        "engine": "python", "seed": 1, "repeat": 0, "probes": 100, "estimator": estimators,
        "status": "exhausted", "nodes": 800, "backtracks": 0, "estimate": [2000.0 + i
                                                                         for i in range(n)],
        "estimate_se": 10.0, "solutions_estimate": 90.0, "solutions_estimate_se": 5.0,
        "wall_ns": 1000})


def test_two_estimators_are_two_groups_and_two_sums():
    spec = get_problem("n_queens")
    rows = _rows(["knuth", "importance beta=0.5"])
    assert "estimator" in search_columns(rows)
    assert "estimator" in group_columns(rows, spec)
    assert "estimator" not in group_columns(_rows(["knuth", "knuth"]), spec)
    sentences = _estimates(rows, spec)
    assert len(sentences) == 2
    assert sentences[0].startswith("Knuth's estimate: ")
    assert "count-mode tree of 2,000 ± 10 (95 % interval 1,980 to 2,020) placements (100 " \
           "probes" in sentences[0]
    assert sentences[1].startswith("The estimate (importance beta=0.5): ")
    assert "count-mode tree of 2,001 ± 10" in sentences[1]
    # rows of a part written before the column (null) are Knuth's: one sum
    assert len(_estimates(_rows(["knuth", None]), spec)) == 1


def test_a_failure_line_names_an_estimator_other_than_knuth():
    log = FailureLog(["n"], lambda line: None)
    row = {"trial_id": "t1", "n": 6, "estimator": "importance beta=0.5", "seed": 1,
           "repeat": 0}
    assert log.describe(row) == "trial t1 (n=6, estimator='importance beta=0.5', seed=1, " \
                                "repeat=0)"
    assert log.describe({**row, "estimator": "knuth"}) == "trial t1 (n=6, seed=1, repeat=0)"
    assert log.describe({**row, "estimator": None}) == "trial t1 (n=6, seed=1, repeat=0)"


@pytest.mark.parametrize("labels, column", [
    (["knuth", "knuth"], False), (["knuth", None], False),
    (["importance beta=0.5"], True), (["knuth", "perm population=100 beta=0.5"], True)])
def test_the_estimate_table_shows_the_estimator_when_it_tells_rows_apart(labels, column):
    console = Console(record=True, width=250)
    print_estimates(_rows(labels), get_problem("n_queens"), console)
    text = console.export_text()
    assert ("estimator" in text) is column
    assert ("Knuth's estimates" in text) is not column
    if column:
        assert all(label in text for label in labels if label)


@pytest.mark.parametrize("problem, fixed", [
    ("knights_tour", "{board: 5, mode: estimate, engine: compiled, heuristic: warnsdorff, "
                     "strategy: iterative}"),
    ("n_queens", "{n: 6, mode: estimate, engine: compiled, strategy: bitmask}")])
def test_the_problem_names_the_kernel_of_its_estimator(problem, fixed):
    text = (f"name: w\nproblem: {problem}\nprobes: 10\nfixed: {fixed}\n"
            "matrix: {estimator: [knuth, {method: importance, beta: 1}, perm]}\n")
    spec = get_problem(problem)
    short = "knights" if problem == "knights_tour" else "queens"
    kinds = [spec.kernels(t.problem_columns()) for t in expand(parse_config(text))]
    assert kinds == [(f"estimate:{short}",), (f"estimate:{short}:weighted",),
                     (f"estimate:{short}:weighted",)]
    assert spec.estimators == ("knuth", "importance", "perm")


# --------------------------------------------------------------------------- a plug-in

PLUGIN = '''
"""A problem whose estimator reports the estimator it was given (a test double)."""
from typing import Literal

import pyarrow as pa

from btlab.experiments.core import SearchResult, Status
from btlab.problems.spec import ParamError, Params, ProblemSpec, trial_estimator


class P(Params):
    size: int = 3
    mode: Literal["first", "count", "estimate"] = "first"


def to_columns(p):
    return {"size": p["size"], "mode": p.get("mode", "first")}


def solve(c, max_nodes, max_seconds, seed, max_backtracks=None):
    return SearchResult(Status.SOLVED, c["size"], 0, 0, 0, 1, c["size"])


def estimate(c, probes, max_nodes, max_seconds, seed):
    CALLS.append(dict(c))
    est = trial_estimator(c)
    beta = est["beta"] if est.method != "knuth" else -1.0
    return SearchResult(Status.EXHAUSTED, probes, 0, 0, 0, 0, 1, estimate=100.0 + beta,
                        estimate_se=1.0)


def check(c):
    CHECKED.append(dict(c))
    if c.get("estimator", "").startswith("importance") and trial_estimator(c)["beta"] > 1:
        raise ParamError("estimator.beta", "beta at most 1 (this proposal's range)",
                         f"beta: {trial_estimator(c)['beta']}", "set beta: 1")


def verify(c, solution):
    return None


CALLS, CHECKED = [], []
KNUTH_ONLY = ProblemSpec(name="fake_est:KNUTH_ONLY", title="Fake", params=P,
                         columns=pa.schema([("size", pa.int32()), ("mode", pa.string())]),
                         to_columns=to_columns, solve=solve, verify=verify, estimate=estimate)
WEIGHTED = ProblemSpec(name="fake_est:WEIGHTED", title="Fake", params=P,
                       columns=KNUTH_ONLY.columns, to_columns=to_columns, solve=solve,
                       verify=verify, estimate=estimate, check=check,
                       estimators=("knuth", "importance"))
'''


@pytest.fixture
def fake(tmp_path, monkeypatch):
    (tmp_path / "fake_est.py").write_text(PLUGIN)
    (tmp_path / "my_rule.py").write_text("def rule(board, square, candidates):\n"
                                         "    return sorted(candidates)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("fake_est", "my_rule"):
        sys.modules.pop(name, None)
    yield importlib.import_module("fake_est")
    for name in ("fake_est", "my_rule"):
        sys.modules.pop(name, None)


def test_a_plug_in_sees_the_estimator_in_its_estimate_and_check(tmp_path, fake):
    path = write(tmp_path / "p.yaml", """\
        name: p
        problem: "fake_est:WEIGHTED"
        probes: 7
        fixed: {mode: estimate}
        matrix:
          estimator: [knuth, {method: importance, beta: 0.25}]
        """)
    assert run_main("run", path, "--out", tmp_path / "out", "--backend", "serial",
                    "--quiet") == 0
    assert [c.get("estimator") for c in fake.CALLS] == ["knuth", "importance beta=0.25"]
    assert {c.get("estimator") for c in fake.CHECKED} == {"knuth", "importance beta=0.25"}
    df = pd.read_parquet(tmp_path / "out").sort_values("estimate")
    assert list(df["estimator"]) == ["knuth", "importance beta=0.25"]
    assert list(df["estimate"]) == [99.0, 100.25] and list(df["probes"]) == [7, 7]
    # a plug-in's own refusal of a key inside the estimator is located there
    bad = path.read_text().replace("beta: 0.25", "beta: 2")
    with pytest.raises(ConfigError) as info:
        expand(parse_config(bad, "p.yaml"))
    assert str(info.value).startswith("p.yaml:6:43: error at matrix.estimator[1].beta")
    assert "fix: set beta: 1" in " ".join(str(info.value).split())


# --------------------------------------------------------------------------- refusals


def _refused(tmp_path, capsys, text: str, where: str, fragments: list[str]) -> None:
    """``text`` is refused (exit 2) by ``btlab validate`` at ``where`` (file:line:col:
    error at key), with the fragments in the message."""
    path = write(tmp_path / "t.yaml", text)
    assert run_main("validate", path) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"{path}:{where}" in err, err
    for fragment in fragments:
        assert fragment in err, err


def _fixed(tmp_path, capsys, text: str) -> None:
    """``text`` (the fix applied) validates."""
    path = write(tmp_path / "t.yaml", text)
    code = run_main("validate", path)
    assert code == 0, capsys.readouterr().err


@pytest.mark.parametrize("bad, where, fragments, fixed", [
    (QUEENS + "estimator: {method: stratified}\n", "6:13: error at estimator.method",
     ["expected: one of knuth, importance, perm", "found: str 'stratified'",
      "fix: write method: importance (or knuth, perm)"],
     QUEENS + "estimator: {method: importance}\n"),
    (QUEENS + "estimator: stratified\n", "6:1: error at estimator",
     ["one of knuth, importance, perm", "write estimator: knuth, or a mapping such as"],
     QUEENS + "estimator: knuth\n"),
    (QUEENS + "estimator: {method: importance, beta: -0.5}\n",
     "6:33: error at estimator.beta",
     ["a number from 0.0 to 100.0", "found: float -0.5", "fix: write e.g. beta: 0.5"],
     QUEENS + "estimator: {method: importance, beta: 0.5}\n"),
    (QUEENS + "estimator: {method: importance, beta: true}\n",
     "6:33: error at estimator.beta", ["found: bool True"],
     QUEENS + "estimator: {method: importance, beta: 1}\n"),
    (QUEENS + "matrix:\n  estimator: [knuth, {method: perm, population: 1}]\n",
     "7:37: error at matrix.estimator[1].population",
     ["a whole number from 2 to 4096", "found: int 1", "fix: write e.g. population: 100"],
     QUEENS + "matrix:\n  estimator: [knuth, {method: perm, population: 100}]\n"),
    (QUEENS + "estimator: {method: knuth, beta: 1}\n", "6:28: error at estimator.beta",
     ["a parameter of knuth (no parameters)", "fix: drop beta"],
     QUEENS + "estimator: {method: knuth}\n"),
    (QUEENS + "matrix:\n  estimator: importance\n", "7:3: error at matrix.estimator",
     ["a list of estimator values"], QUEENS + "matrix:\n  estimator: [\"importance\"]\n"),
], ids=["method", "method-name", "beta", "beta-bool", "population", "knuth-beta",
        "matrix-not-list"])
def test_a_bad_estimator_is_refused_with_a_fix_that_works(tmp_path, capsys, bad, where,
                                                         fragments, fixed):
    with pytest.raises(ConfigError):
        parse_config(bad, "t.yaml")
    _refused(tmp_path, capsys, bad, where, fragments)
    _fixed(tmp_path, capsys, fixed)


def test_an_estimator_without_mode_estimate_is_refused(tmp_path, capsys):
    count = "name: q\nproblem: n_queens\nfixed: {n: 6, mode: count}\nestimator: knuth\n"
    _refused(tmp_path, capsys, count, "4:1: error at estimator",
             ["estimator only with mode: estimate", "found: estimator: knuth with mode: count",
              "fix: drop estimator, or set mode: estimate and add probes: 1000 at the top "
              "level"])
    _fixed(tmp_path, capsys, count.replace("estimator: knuth\n", ""))
    _fixed(tmp_path, capsys, count.replace("mode: count", "mode: estimate")
           + "probes: 1000\n")
    # swept modes: the count trials refuse it, at the key where it is written
    swept = ("name: q\nproblem: n_queens\nprobes: 10\nfixed: {n: 6}\n"
             "matrix:\n  mode: [estimate, count]\n  estimator: [{method: perm}]\n")
    _refused(tmp_path, capsys, swept, "7:15: error at matrix.estimator[0]",
             ["with mode: count", "fix: drop estimator, or set mode: estimate"])


@pytest.mark.parametrize("heuristic", ["none", "static_degree"])
@pytest.mark.parametrize("method", ["importance", "perm"])
def test_knights_importance_needs_warnsdorff_or_beta_0(tmp_path, capsys, heuristic, method):
    text = ("name: k\nproblem: knights_tour\nprobes: 100\n"
            f"fixed: {{board: 5, mode: estimate, heuristic: {heuristic}}}\n"
            f"estimator: {{method: {method}, beta: 0.5}}\n")
    _refused(tmp_path, capsys, text, f"5:{33 if method == 'importance' else 27}: error at "
             "estimator.beta",
             [f"found: beta: 0.5 with heuristic: {heuristic}",
              "fix: set heuristic: warnsdorff (the proposal), or beta: 0 (uniform)"])
    _fixed(tmp_path, capsys, text.replace(f"heuristic: {heuristic}", "heuristic: warnsdorff"))
    _fixed(tmp_path, capsys, text.replace("beta: 0.5", "beta: 0"))
    # with the default beta (0.5) the key is named though not written
    bare = text.replace(", beta: 0.5", "")
    _refused(tmp_path, capsys, bare, "5:1: error at estimator.beta", ["found: beta: 0.5"])


def test_knights_importance_refuses_a_plug_in_heuristic(tmp_path, capsys, fake):
    text = ("name: k\nproblem: knights_tour\nprobes: 100\n"
            "fixed: {board: 5, mode: estimate, heuristic: 'my_rule:rule'}\n"
            "estimator: {method: importance, beta: 0}\n")
    _refused(tmp_path, capsys, text, "4:35: error at fixed.heuristic",
             ["a plug-in rule gives no proposal",
              "fix: set heuristic: warnsdorff (the proposal), or estimator: knuth"])
    _fixed(tmp_path, capsys, text.replace("'my_rule:rule'", "warnsdorff"))
    _fixed(tmp_path, capsys, text.replace("{method: importance, beta: 0}", "knuth"))
    _fixed(tmp_path, capsys, text.replace("estimator: {method: importance, beta: 0}\n", ""))


def test_a_plug_in_without_the_method_refuses_it(tmp_path, capsys, fake):
    text = ('name: p\nproblem: "fake_est:KNUTH_ONLY"\nprobes: 5\nfixed: {mode: estimate}\n'
            "estimator: {method: importance, beta: 0.5}\n")
    _refused(tmp_path, capsys, text, "5:13: error at estimator.method",
             ["an estimator method that problem fake_est:KNUTH_ONLY runs: knuth",
              "found: method: importance (estimator: importance beta=0.5)",
              "fix: write estimator: knuth (or drop estimator: knuth is the default)"])
    _fixed(tmp_path, capsys, text.replace("{method: importance, beta: 0.5}", "knuth"))
    _fixed(tmp_path, capsys, text.replace("estimator: {method: importance, beta: 0.5}\n", ""))
    weighted = text.replace("KNUTH_ONLY", "WEIGHTED")
    _fixed(tmp_path, capsys, weighted)
    _refused(tmp_path, capsys, weighted.replace("importance", "perm"),
             "5:13: error at estimator.method", ["runs: knuth, importance"])


def test_the_estimator_round_trips_through_its_label():
    for value in ("knuth", {"method": "importance", "beta": 1.5000001},
                  {"method": "perm", "population": 7, "beta": 0}):
        est = Estimator.from_value(value)
        assert Estimator.from_label(est.label()) == est


def test_the_docs_config_example_is_what_the_tests_expand():
    """docs/config.md's estimator example: three trials, ids differing, knuth's as before."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "config.md").read_text()
    block = textwrap.dedent(text.split("```yaml\n", 1)[1].split("```", 1)[0])
    trials = expand(parse_config(block))
    assert [t.estimator.label() for t in trials] == [
        "knuth", "importance beta=1.0", "perm population=200 beta=1.0"]
    assert len({t.trial_id for t in trials}) == 3
    without = block.replace("matrix:\n  estimator: [", "# [")
    assert without != block and ids(without) == [trials[0].trial_id]
