"""The registries the runner derives from: heuristics and tie-breaks, strategy budgets, the
row columns with their roles; and the one repeat folding, formatter set and serial split
loop (issue 24, item 3).

Each derived list is pinned here to the hand-kept list it replaced, so that the refactor
keeps the same rows, tables and messages.
"""

from __future__ import annotations

import dataclasses
import warnings

import pandas as pd
import pyarrow as pa
import pytest

from btlab.analysis import columns as analysis_columns
from btlab.analysis import folder_diff, formatting
from btlab.config.model import parse_config
from btlab.errors import ConfigError
from btlab.execution import execute, ray_backend, split_state
from btlab.experiments.compiled.knights import kernel
from btlab.experiments.knights import ordering
from btlab.experiments.knights import solve as knights_solve
from btlab.experiments.knights.ordering import HEURISTICS, TIE_BREAKS, Heuristic
from btlab.experiments.knights.solve import solve_knights_tour
from btlab.experiments.queens import solve as queens_solve
from btlab.experiments.queens.solve import solve_queens
from btlab.experiments.split import subtrees
from btlab.problems.registry import PROBLEMS, get_problem
from btlab.store import schema
from btlab.sweep.expand import expand
from btlab.views import estimate_table, tables
from tests.helpers.cli import run_main, write

# --------------------------------------------------------------------------- heuristics


def _reverse(board, tie, rng):
    """A toy heuristic: the candidates in reverse move order (one function...)."""
    nbrs = board.neighbours

    def order(sq, visited):
        around = nbrs[sq]
        return [c for c in reversed(around) if not visited[c]], len(around)
    order.stateful = False
    return order


@pytest.fixture
def toy_heuristic(monkeypatch):
    """... plus one registry entry: ``reverse``, Python only (no kernel)."""
    entry = Heuristic("reverse", _reverse, "reverse move order", source="a test")
    monkeypatch.setitem(HEURISTICS._entries, "reverse", entry)
    return entry


def test_the_builtin_heuristics_and_tie_breaks_are_their_registries():
    assert list(HEURISTICS) == ["none", "warnsdorff", "static_degree"]
    assert list(TIE_BREAKS) == ["move_order", "random", "pohl", "roth"]
    # the kernel codes the compiled loops branch on (they were _HEURISTIC_CODE, _TIE_CODE)
    assert {h: e.kernel for h, e in HEURISTICS.items()} == {
        "none": 0, "warnsdorff": 1, "static_degree": 2}
    assert {t: e.kernel for t, e in TIE_BREAKS.items()} == {
        "move_order": 0, "random": 1, "pohl": 2, "roth": 3}
    assert all(e.engines == ("python", "compiled") for e in HEURISTICS.values())
    assert HEURISTICS["warnsdorff"].source.startswith("H. C. Warnsdorff")
    assert [t for t, e in TIE_BREAKS.items() if e.random] == ["random"]
    # what re-exports them is the registry itself, not a copy
    assert knights_solve.HEURISTICS is HEURISTICS and knights_solve.TIE_BREAKS is TIE_BREAKS
    assert kernel.compiled_heuristics() == ["none", "warnsdorff", "static_degree"]


def test_a_kernel_code_goes_with_the_compiled_engine():
    with pytest.raises(ValueError, match="a kernel code exactly when"):
        Heuristic("x", _reverse, "x", engines=("python", "compiled"))
    with pytest.raises(ValueError, match="a kernel code exactly when"):
        Heuristic("x", _reverse, "x", kernel=7)
    with pytest.raises(ValueError, match="unknown heuristic 'warnsdorf'.*did you mean "
                       "'warnsdorff'"):
        solve_knights_tour(5, 5, heuristic="warnsdorf")
    with pytest.raises(ValueError, match="unknown tie-break 'rot'.*expected one of "
                       "move_order, random, pohl, roth"):
        solve_knights_tour(5, 5, heuristic="warnsdorff", tie_break="rot")


def test_a_new_heuristic_is_one_function_and_one_entry(toy_heuristic, tmp_path):
    # the reference search runs it: count mode walks the whole tree in any order, so the
    # counts are those of the move order; first mode follows the reversed order
    plain = solve_knights_tour(3, 4, mode="count").counters()
    rev = solve_knights_tour(3, 4, mode="count", heuristic="reverse").counters()
    assert rev["solutions"] == plain["solutions"] == 2
    assert rev["nodes"] == plain["nodes"] and rev["checks"] == plain["checks"]
    first = solve_knights_tour(5, 5, heuristic="reverse")
    assert first.status.value == "solved" and first.solution[-1] != solve_knights_tour(
        5, 5).solution[-1]
    # the config accepts it, the compiled engine's kernel list does not hold it
    assert "reverse" not in kernel.compiled_heuristics()
    with pytest.raises(ValueError, match="heuristic 'reverse' has no compiled kernel; "
                       "expected one of none, warnsdorff, static_degree"):
        kernel.check_arguments(3, 4, (0, 0), "first", "reverse", "move_order",
                               ordering.DEFAULT_MOVE_ORDER)
    cfg = write(tmp_path / "toy.yaml", """\
        name: toy
        problem: knights_tour
        fixed: {board: [3, 4], mode: count, heuristic: reverse}
    """)
    out = tmp_path / "r"
    assert run_main("run", cfg, "--out", out, "--backend", "serial", "--quiet") == 0
    row = pd.read_parquet(out).iloc[0]
    assert (row["heuristic"], row["solutions"], row["nodes"]) == (
        "reverse", 2, plain["nodes"])


def test_compiled_with_a_heuristic_without_a_kernel_is_refused_at_validation(
        toy_heuristic, tmp_path, capsys):
    cfg = write(tmp_path / "c.yaml", """\
        name: toy-compiled
        problem: knights_tour
        fixed: {board: [5, 5], strategy: iterative,
                engine: compiled, heuristic: reverse}
    """)
    assert run_main("validate", cfg) == 2
    err = capsys.readouterr().err
    assert f"{cfg}:4:" in err and "error at fixed.heuristic" in err
    assert ("expected: a heuristic that has a compiled kernel (engine: compiled): none, "
            "warnsdorff, static_degree") in err
    assert "found:    heuristic: reverse with engine: compiled" in err
    assert "fix:      set engine: python, or pick one of none, warnsdorff, static_degree" in err
    with pytest.raises(ConfigError, match="fixed.heuristic"):
        expand(parse_config(cfg.read_text(), str(cfg)))
    ok = write(tmp_path / "p.yaml", cfg.read_text().replace("compiled", "python"))
    assert run_main("validate", ok) == 0


# --------------------------------------------------------------------------- budgets

SMALL = {"knights_tour": "board: [5, 5]", "n_queens": "n: 6"}
SOLVE = {
    "knights_tour": lambda s, b: solve_knights_tour(5, 5, strategy=s, max_backtracks=b),
    "n_queens": lambda s, b: solve_queens(6, strategy=s, max_backtracks=b),
}
EVERY_STRATEGY = [pytest.param(p, s, id=f"{p}-{s}") for p in ("knights_tour", "n_queens")
                  for s in PROBLEMS[p].strategies]


def test_the_strategies_that_honour_a_backtrack_budget():
    honour = {p: [s for s, e in PROBLEMS[p].strategies.items() if "backtracks" in e.budgets]
              for p in ("knights_tour", "n_queens")}
    # the table runner/budgets.py kept (and the copies in knights.py and queens.py)
    assert honour == {"knights_tour": ["recursive", "iterative"],
                      "n_queens": ["recursive", "iterative", "bitmask"]}
    assert all({"nodes", "seconds"} <= set(e.budgets) for p in honour
               for e in PROBLEMS[p].strategies.values())


@pytest.mark.parametrize("problem, strategy", EVERY_STRATEGY)
def test_strategy_budgets_drive_the_backtrack_budget_refusal(problem, strategy):
    entry = PROBLEMS[problem].strategies[strategy]
    mode = "first" if "count" not in entry.modes else "count"
    text = (f"name: b\nproblem: {problem}\nfixed: {{{SMALL[problem]}, strategy: {strategy}, "
            f"mode: {mode}}}\nbudget: {{backtracks: 1}}\n")
    if "backtracks" in entry.budgets:
        trials = expand(parse_config(text, "b.yaml"))
        assert [t.budget_backtracks for t in trials] == [1]
        assert SOLVE[problem](strategy, 1).status.value in ("backtrack_limit", "solved",
                                                             "exhausted")
    else:
        with pytest.raises(ConfigError) as info:
            expand(parse_config(text, "b.yaml"))
        able = ", ".join(s for s, e in PROBLEMS[problem].strategies.items()
                         if "backtracks" in e.budgets)
        assert "fixed.strategy" in str(info.value)
        assert f"a strategy that honours budget.backtracks: {able}" in str(info.value)
        with pytest.raises(ValueError, match=f"the {strategy} strategy has no backtrack "
                           f"budget: use one of {able}"):
            SOLVE[problem](strategy, 1)


def test_a_strategy_entry_that_gains_the_budget_is_accepted(monkeypatch):
    registry = knights_solve.STRATEGIES
    entry = registry["amb"]
    monkeypatch.setitem(registry._entries, "amb", dataclasses.replace(
        entry, budgets=("nodes", "seconds", "backtracks")))
    text = "name: b\nproblem: knights_tour\nfixed: {board: 5, strategy: amb}\n" \
           "budget: {backtracks: 2}\n"
    assert [t.budget_backtracks for t in expand(parse_config(text, "b.yaml"))] == [2]
    assert queens_solve.STRATEGIES["functional"].budgets == ("nodes", "seconds")


# --------------------------------------------------------------------------- row columns

#: The row schema as row_schema() spelled it out before the table (tests/data/v1 too).
_OLD_HEAD = [("trial_id", pa.string()), ("run_id", pa.string()), ("problem", pa.string())]
_OLD_BODY = [
    ("budget_nodes", pa.int64()), ("budget_seconds", pa.float64()),
    ("budget_backtracks", pa.int64()), ("restarts", pa.string()),
    ("probes", pa.int64()), ("estimator", pa.string()), ("seed", pa.int64()),
    ("repeat", pa.int32()),
    ("status", pa.string()), ("censored", pa.bool_()),
    ("nodes", pa.int64()), ("backtracks", pa.int64()),
    ("dead_ends", pa.int64()), ("checks", pa.int64()), ("solutions", pa.int64()),
    ("max_depth", pa.int64()), ("wall_ns", pa.int64()), ("cpu_ns", pa.int64()),
    ("abandoned", pa.int64()), ("attempts", pa.int64()),
    ("success_seed", pa.int64()), ("estimate", pa.float64()),
    ("estimate_se", pa.float64()), ("solutions_estimate", pa.float64()),
    ("solutions_estimate_se", pa.float64()),
    ("solution", pa.list_(pa.int32())), ("error", pa.string())]
_OLD_PROVENANCE = [
    ("btlab_version", pa.string()), ("git_commit", pa.string()), ("git_dirty", pa.bool_()),
    ("python_version", pa.string()), ("ray_version", pa.string()),
    ("host", pa.string()), ("node_id", pa.string()), ("pid", pa.int64()),
    ("started_at", pa.timestamp("us", tz="UTC")), ("plugins", pa.string())]


def _old_schema(problem) -> pa.Schema:
    return pa.schema([*_OLD_HEAD, *zip(problem.columns.names, problem.columns.types),
                      *_OLD_BODY, *((n, pa.int64()) for n in problem.extra_columns),
                      *_OLD_PROVENANCE])


def _roles(problem) -> dict[str, list[str]]:
    """Every column of the problem's rows -> the roles the table gives it."""
    out: dict[str, list[str]] = {}
    for c in schema.COLUMNS:
        if c.role == schema.PARAMETER:
            names = problem.columns.names
        elif c.name == "*":
            names = [n for n in problem.extra_columns if n not in schema.names(
                where=(schema.IF_EXTRA,))]
        else:
            names = [c.name]
        for name in names:
            out.setdefault(name, []).append(c.role)
    return out


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_every_row_column_has_one_role_and_the_schema_is_unchanged(name):
    problem = get_problem(name)
    got = schema.row_schema(problem)
    assert got.equals(_old_schema(problem))
    roles = _roles(problem)
    for column in got.names:
        assert len(roles.get(column, [])) == 1, (column, roles.get(column))
        assert roles[column][0] in schema.ROLES
    assert len(set(c.name for c in schema.COLUMNS if c.name != "*")) == len(
        [c for c in schema.COLUMNS if c.name != "*"])


def test_the_derived_column_lists_equal_the_lists_they_replaced():
    assert execute.METRIC_COLUMNS == ("status", "nodes", "backtracks", "dead_ends", "checks",
                                      "solutions", "max_depth", "wall_ns", "cpu_ns")
    assert execute.RESTART_COLUMNS == ("abandoned", "attempts", "success_seed")
    assert execute.ESTIMATE_COLUMNS == ("estimate", "estimate_se", "solutions_estimate",
                                        "solutions_estimate_se")
    assert analysis_columns.COUNTERS == ("nodes", "backtracks", "dead_ends", "checks",
                                         "solutions", "max_depth")
    assert analysis_columns.TIMINGS == ("wall_ns", "cpu_ns")
    assert analysis_columns._TRIAL_KEYS == (
        "source", "problem", "budget_nodes", "budget_seconds", "budget_backtracks",
        "restarts", "probes", "estimator", "seed")
    extras = {c for problem in PROBLEMS.values() for c in problem.extra_columns}
    assert analysis_columns.NOT_PARAMETERS == frozenset({
        "trial_id", "run_id", "problem", "source", "budget_nodes", "budget_seconds", "seed",
        "budget_backtracks", "restarts", "probes", "estimator", "censored", "abandoned",
        "attempts",
        "success_seed", "estimate", "estimate_se", "solutions_estimate",
        "solutions_estimate_se", "repeat", "repeats", "status", "nodes", "backtracks",
        "dead_ends", "checks", "solutions", "max_depth", "wall_ns", "cpu_ns", "solution",
        "error", *extras, "compile_ns", "candidates", "btlab_version", "git_commit",
        "python_version", "ray_version", "host", "node_id", "pid", "started_at", "plugins",
        "git_dirty"})
    assert tables.TRIAL_COLUMNS == ("budget_nodes", "budget_seconds", "budget_backtracks",
                                    "restarts", "probes", "estimator", "seed")
    assert tables.GROUP_TRIAL_COLUMNS == ("budget_nodes", "budget_seconds",
                                          "budget_backtracks", "restarts", "probes",
                                          "estimator")
    assert folder_diff.IGNORED == frozenset({
        "run_id", "wall_ns", "cpu_ns", "btlab_version", "git_commit", "git_dirty",
        "python_version", "ray_version", "host", "node_id", "pid", "started_at",
        "compile_ns", "error", "split_depth", "split_tasks", "wasted_nodes", "split_resumed"})
    for name in PROBLEMS:
        problem = get_problem(name)
        assert schema.headline_columns(problem) == [
            "trial_id", "problem", *problem.columns.names, *tables.TRIAL_COLUMNS, "repeat",
            *execute.METRIC_COLUMNS, "abandoned", *execute.ESTIMATE_COLUMNS, "error"]


def _trial(text: str):
    return expand(parse_config(text, "t.yaml"))[0]


def test_the_rows_made_from_a_trial_follow_the_table():
    t = _trial("name: t\nproblem: n_queens\nfixed: {n: 6, mode: count}\n"
               "budget: {nodes: 100000, backtracks: 5000}\nrepeats: 2\n")
    known = {"trial_id": t.trial_id, **t.columns, "budget_nodes": 100000,
             "budget_seconds": None, "budget_backtracks": 5000, "restarts": None,
             "probes": None, "estimator": None, "seed": t.seed, "repeat": 0}
    assert schema.trial_values(t) == known
    assert list(schema.trial_values(t))[:1 + len(t.columns)] == ["trial_id", *t.columns]
    row = execute.run_trial(t)
    assert {k: row[k] for k in known} == known
    assert row["status"] == "exhausted" and row["solutions"] == 4
    names = schema.row_schema(get_problem("n_queens")).names
    # the columns the store adds (run id, problem, censored, software provenance) and
    # those of restarts are all that a row lacks
    assert set(names) - set(row) == {
        "run_id", "problem", "censored", "abandoned", "attempts", "success_seed",
        "btlab_version", "git_commit", "git_dirty", "python_version", "ray_version"}
    assert set(row) <= set(names)
    lost = ray_backend._lost_row(t, "error", "worker died")
    assert lost == {**known, **dict.fromkeys(execute.METRIC_COLUMNS), "status": "error",
                    "solution": None, "error": "worker died"}
    failed = execute.run_trial(t, solve=lambda *a, **k: 1 / 0)
    assert failed["status"] == "error" and "ZeroDivisionError" in failed["error"]
    assert all(failed[c] is None for c in analysis_columns.COUNTERS)
    assert failed["wall_ns"] >= 0 and failed["solution"] is None


def test_restart_rows_take_their_columns_from_the_table():
    t = _trial("name: r\nproblem: knights_tour\nfixed: {board: 5, heuristic: warnsdorff, "
               "tie_break: random}\nrestarts: {policy: luby, unit: 8, max: 50}\n")
    row = execute.run_trial(t)
    assert set(execute.RESTART_COLUMNS) <= set(row)
    assert row["attempts"] >= 1 and row["restarts"] == t.restarts.label()


# --------------------------------------------------------------------------- one of each


def _repeated() -> pd.DataFrame:
    rows = []
    for n in (4, 5):
        for r in range(3):
            rows.append({"problem": "n_queens", "n": n, "strategy": "recursive",
                         "mode": "count", "unique": False, "engine": "python",
                         "method": None, "budget_nodes": None, "budget_seconds": None,
                         "budget_backtracks": None, "restarts": None, "probes": None,
                         "seed": 1, "repeat": r, "status": "exhausted", "nodes": 10 * n,
                         "backtracks": n, "dead_ends": 1, "checks": 3, "solutions": n - 2,
                         "max_depth": n, "wall_ns": 100 * (r + 1), "cpu_ns": 10 * (r + 1)})
    return pd.DataFrame(rows)


def test_one_per_trial_is_the_warning_fold():
    df = _repeated()
    spec = get_problem("n_queens")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        one = tables.one_per_trial(df, spec)
    folded = analysis_columns.aggregate_repeats(df)
    assert one["n"].tolist() == [4, 5] and one["wall_ns"].tolist() == [200.0, 200.0]
    pd.testing.assert_frame_equal(one, folded.drop(columns="repeats").reset_index(drop=True))
    broken = df.copy()
    broken.loc[4, "nodes"] = 999   # n = 5, repeat 1
    with pytest.warns(RuntimeWarning, match="1 trial.*different nodes across repeats"):
        one = tables.one_per_trial(broken, spec)
    assert one["nodes"].tolist() == [40, 50]   # the first repeat's


def test_one_set_of_formatters():
    assert tables.fmt_int is formatting.fmt_int and tables.fmt_ns is formatting.fmt_ns
    assert analysis_columns.format_value is formatting.format_value
    assert analysis_columns.format_seconds is formatting.format_seconds
    assert estimate_table.fmt_estimate is formatting.fmt_estimate
    assert formatting.fmt_int(1234567.4, True) == ">=1,234,567"
    assert formatting.format_value("nodes", 1234, ">=") == ">=1,234"
    assert formatting.format_value("wall_ns", 12_300_000) == "12.3 ms"
    assert formatting.fmt_ns(2_500_000_000) == "2.50 s"
    assert formatting.fmt_estimate(12345.0, 6.5) == "12,345 ± 6.50"


def test_the_reference_and_the_serial_backend_share_one_split_loop(monkeypatch):
    assert issubclass(split_state.SplitState, subtrees.TaskResults)
    calls = []
    real = subtrees.run_serial

    def counting(tasks, deadline=None):
        calls.append(type(tasks).__name__)
        return real(tasks, deadline)

    monkeypatch.setattr(subtrees, "run_serial", counting)
    monkeypatch.setattr(split_state, "run_serial", counting)
    params = {"n": 7, "mode": "count", "strategy": "recursive"}
    ref = subtrees.solve_split("n_queens", params, 2, max_nodes=300)
    t = _trial("name: s\nproblem: n_queens\nfixed: {n: 7, mode: count}\n"
               "budget: {nodes: 300}\nsplit: {depth: 2}\n")
    row = execute.run_trial(t, solve=split_state.serial_solver(t))
    assert calls == ["TaskResults", "SplitState"]
    whole = solve_queens(7, mode="count", max_nodes=300).counters()
    assert ref.counters() == whole
    assert {k: row[k] for k in whole} == whole
    assert row["split_depth"] == 2 and row["split_tasks"] == len(
        subtrees.plan_split("n_queens", params, 2, 300).tasks)
