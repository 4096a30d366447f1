"""Plug-ins that try to end, take over or corrupt the run they serve (issue 26, kinds 1-5).

1. A plug-in module that ends or takes over the process at import is refused at
   the key that names it, exit status 2, in ``validate`` and ``run``: its first
   import runs in a child process (:mod:`btlab.problems.first_import`).
2. A problem plug-in's result that breaks the metrics contract (types, ranges,
   invariants) is that trial's error row naming the field; the other rows of its
   batch are written (serial and Ray).
3. A problem's columns named like btlab's (the names of ``schema.COLUMNS``) are
   refused at validation, naming the column.
4. Every knight's-tour strategy reads the clock at every placement a plug-in orders.
5. The board view a heuristic plug-in gets holds nothing of the search's.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
import types
from pathlib import Path

import pandas as pd
import pytest
from helpers.cli import run_main

from btlab.errors import ConfigError
from btlab.experiments.core import SearchResult, Status
from btlab.experiments.knights.solve import KnightBoard, make_orderer, solve_knights_tour
from btlab.problems import PROBLEMS, first_import
from btlab.store import schema
from btlab.store.schema import ColumnClash, check_problem_columns

PLUGIN_DIR = Path(__file__).resolve().parent / "plugins"
ROOT = Path(__file__).resolve().parent.parent
STRATEGIES = ["recursive", "iterative", "amb"]


# ------------------------------------------------------------------ 1. ends at import

#: Top levels of a heuristic module that end or take over the process, and what the
#: message says.
ENDINGS = [
    pytest.param("sys.exit(0)", "it called sys.exit(0) while importing", id="sys-exit-0"),
    pytest.param("sys.exit(3)", "it called sys.exit(3) while importing", id="sys-exit-3"),
    pytest.param("raise SystemExit('bye')", "sys.exit('bye')", id="system-exit-text"),
    pytest.param("os._exit(0)", "it called os._exit(0) while importing", id="os-exit-0"),
    pytest.param("import posix; posix._exit(0)", "ended the process with exit status 0",
                 id="posix-exit"),
    pytest.param("os.kill(os.getpid(), signal.SIGKILL)", "killed the process with SIGKILL",
                 id="sigkill-self"),
    pytest.param("os.kill(os.getpid(), signal.SIGTERM)", "killed the process with SIGTERM",
                 id="sigterm-self"),
    pytest.param("raise KeyboardInterrupt", "it raised KeyboardInterrupt while importing",
                 id="keyboard-interrupt"),
    pytest.param("signal.signal(signal.SIGINT, signal.SIG_IGN)", "changed the SIGINT handler",
                 id="ignores-ctrl-c"),
    pytest.param("atexit.register(os._exit, 0)", "exit handlers (atexit) its import "
                 "registered ended the process with exit status 0", id="atexit-exit-0"),
    pytest.param("threading.Thread(target=lambda: (time.sleep(30), os._exit(0)), "
                 "daemon=True, name='killer').start()",
                 "started thread(s) still running: killer", id="thread-exits-later"),
    pytest.param("sys.stdout = open(os.devnull, 'w')", "changed sys.stdout", id="stdout"),
    pytest.param("os.close(1)", "changed file descriptor 1", id="closes-stdout"),
]
_made = iter(range(10 ** 6))


def hostile_module(folder: Path, body: str) -> str:
    """A heuristic module (a fresh name each time) whose top level runs ``body``."""
    name = f"ends_{os.getpid()}_{next(_made)}"
    (folder / f"{name}.py").write_text(
        "import atexit, os, signal, sys, threading, time\n"
        f"{body}\n\n\ndef rule(board, square, candidates):\n    return candidates\n")
    return name


def knights_config(folder: Path, heuristic: str) -> Path:
    path = folder / "c.yaml"
    path.write_text(textwrap.dedent(f"""\
        name: hostile
        problem: knights_tour
        fixed: {{board: [5, 5], strategy: recursive, mode: first}}
        matrix:
          heuristic: [warnsdorff, "{heuristic}"]
        """))
    return path


@pytest.mark.parametrize("command", ["validate", "run"])
@pytest.mark.parametrize("body, found", ENDINGS)
def test_plugin_that_ends_the_process_at_import_is_refused(tmp_path, monkeypatch, capsys,
                                                           body, found, command):
    monkeypatch.chdir(tmp_path)
    name = hostile_module(tmp_path, body)
    cfg = knights_config(tmp_path, f"{name}:rule")
    extra = ["--backend", "serial", "--out", "out"] if command == "run" else []
    assert run_main(command, cfg.name, *extra) == 2
    err = capsys.readouterr().err
    assert "c.yaml:5:" in err and "error at matrix.heuristic[1]" in err
    assert found in err
    assert f"module '{name}' to import" in err and "\n  fix:      " in err
    assert name not in sys.modules            # never imported in this process
    assert not (tmp_path / "out").exists()    # nothing written
    assert run_main("validate", cfg.name) == 2  # the same, every time


def test_refused_in_a_spawned_child_too(tmp_path, monkeypatch, capsys):
    """A process that runs several threads (a notebook, Ray) spawns the child instead."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(first_import, "START", "spawn")
    for body, found in [("os._exit(0)", "it called os._exit(0)"),
                        ("import posix; posix._exit(5)", "exit status 5")]:
        cfg = knights_config(tmp_path, f"{hostile_module(tmp_path, body)}:rule")
        assert run_main("validate", cfg.name) == 2
        assert found in capsys.readouterr().err
    good = tmp_path / "fine_rule.py"
    good.write_text("def rule(board, square, candidates):\n    return candidates\n")
    assert run_main("validate", knights_config(tmp_path, "fine_rule:rule").name) == 0


def test_problem_plugin_that_exits_is_refused_at_problem(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "exits_problem.py").write_text("import os\nos._exit(0)\nPROBLEM = None\n")
    cfg = tmp_path / "p.yaml"
    cfg.write_text('name: p\nproblem: "exits_problem:PROBLEM"\nmatrix: {k: [1]}\n')
    assert run_main("validate", cfg.name) == 2
    err = capsys.readouterr().err
    assert "p.yaml:2:1: error at problem" in err and "os._exit(0)" in err


def test_a_clean_plugin_imports_once_in_this_process(tmp_path, monkeypatch, capsys):
    """The child's import leaves nothing behind: the module's top level runs once here."""
    monkeypatch.chdir(tmp_path)
    name = hostile_module(tmp_path, "import builtins\n"
                          "builtins.BTLAB_TEST_IMPORTS = getattr(builtins, "
                          "'BTLAB_TEST_IMPORTS', 0) + 1")
    import builtins
    before = getattr(builtins, "BTLAB_TEST_IMPORTS", 0)
    assert run_main("validate", knights_config(tmp_path, f"{name}:rule").name) == 0
    assert builtins.BTLAB_TEST_IMPORTS == before + 1   # the child's import was the child's
    assert "OK -- problem knights_tour, 2 trials" in capsys.readouterr().out


def test_btlab_run_in_its_own_process_exits_2(tmp_path):
    """The issue's example end to end: ``os._exit(0)`` at import made ``btlab run`` exit 0."""
    name = hostile_module(tmp_path, "os._exit(0)")
    cfg = knights_config(tmp_path, f"{name}:rule")
    r = subprocess.run([sys.executable, "-m", "btlab", "run", cfg.name, "--backend", "serial"],
                       cwd=tmp_path, env={**os.environ, "RAY_ADDRESS": ""},
                       capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "error at matrix.heuristic[1]" in r.stderr and "os._exit(0)" in r.stderr


# ------------------------------------------------------------------ 2. bad result values


def hostile_config(folder: Path, spec: str) -> Path:
    path = folder / f"{spec.lower()}.yaml"
    path.write_text(f'name: {spec.lower()}\nproblem: "hostile_problems:{spec}"\n'
                    "matrix: {k: [0, 1, 2, 3, 4, 5, 6, 7, 8]}\n")
    return path


@pytest.fixture
def in_plugins(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(PLUGIN_DIR))
    return tmp_path


BAD_RESULTS = [
    pytest.param("BIG", "nodes is 1180591620717411303424, more than int64 holds", id="2**70"),
    pytest.param("MANY", "nodes is 'many' (str), not an integer", id="many"),
    pytest.param("NAN", "nodes is nan (float), not an integer", id="nan"),
    pytest.param("FLOAT", "checks is 3.0 (float), not an integer", id="float"),
    pytest.param("BOOL", "solutions is True (bool), not an integer", id="bool"),
    pytest.param("NEGATIVE", "dead_ends is -1, less than 0", id="negative"),
    pytest.param("MORE_BACKTRACKS", "backtracks is 1,000,000, more than nodes (5)",
                 id="backtracks>nodes"),
    pytest.param("SOLVED_NONE", "solutions is 0 in a solved trial", id="solved-no-solution"),
    pytest.param("STATUS_TEXT", "status is 'solved', not one a solver reports", id="status-str"),
    pytest.param("STATUS_ERROR", "status is <Status.ERROR: 'error'>, not one a solver",
                 id="status-error"),
    pytest.param("ESTIMATE_NAN", "estimate is nan outside mode: estimate", id="estimate"),
    pytest.param("SOLUTION_BIG", "solution is item 1 is 1099511627776, more than int32",
                 id="solution-int32"),
    pytest.param("NOT_A_RESULT", "the result is {'nodes': 5} (dict), not a", id="dict"),
    pytest.param("BAD_EXTRA", "bonus is 1180591620717411303424, more than int64", id="extra"),
    pytest.param("NAN_EXTRA", "bonus is nan (float), not an integer", id="extra-nan"),
]


@pytest.mark.parametrize("spec, why", BAD_RESULTS)
def test_bad_result_is_its_trials_error_row_and_the_batch_is_kept(in_plugins, capsys,
                                                                  spec, why):
    cfg = hostile_config(in_plugins, spec)
    assert run_main("run", cfg.name, "--backend", "serial", "--out", "out", "--quiet") == 1
    df = pd.read_parquet(in_plugins / "out")
    assert len(df) == 9 and sorted(df["k"]) == list(range(9))
    bad, rest = df[df["k"] == 4].iloc[0], df[df["k"] != 4]
    assert bad["status"] == "error" and pd.isna(bad["nodes"])
    assert bad["error"].startswith("ResultError: the solve call's result breaks the metrics "
                                   "contract (docs/metrics.md): ")
    assert why in bad["error"]
    assert (rest["status"] == "exhausted").all() and rest["error"].isna().all()
    assert (rest["nodes"] == rest["k"] + 1).all()


def test_bad_result_on_ray_keeps_the_other_rows(in_plugins, ray_session):
    cfg = hostile_config(in_plugins, "BIG")
    assert run_main("run", cfg.name, "--out", "out", "--quiet", "--batch-size", "9") == 1
    df = pd.read_parquet(in_plugins / "out")
    assert len(df) == 9 and df["node_id"].notna().all()
    assert df.set_index("k")["status"].to_dict() == {
        k: "error" if k == 4 else "exhausted" for k in range(9)}
    assert "nodes is 1180591620717411303424" in df[df["k"] == 4]["error"].iloc[0]


def test_every_builtin_strategy_keeps_the_contract_checks(in_plugins):
    """The checks refuse nothing btlab's own solvers return (a sample of each problem)."""
    cfg = in_plugins / "b.yaml"
    cfg.write_text("name: b\nproblem: n_queens\nfixed: {n: 6, mode: count}\n"
                   "matrix: {strategy: [recursive, iterative, amb, bitmask, brute_force, "
                   "functional]}\n")
    assert run_main("run", cfg.name, "--backend", "serial", "--out", "q", "--quiet") == 0
    assert (pd.read_parquet(in_plugins / "q")["solutions"] == 4).all()


# ------------------------------------------------------------------ 3. column clashes


CLASHES = [
    pytest.param("STATUS_COLUMN", "'status' in the spec's columns, a column btlab writes",
                 id="status"),
    pytest.param("TRIAL_ID_COLUMN", "'trial_id' in the spec's columns", id="trial_id"),
    pytest.param("SOURCE_COLUMN", "'source' in the spec's columns", id="source-frame"),
    pytest.param("NODES_EXTRA", "'nodes' in the spec's extra_columns", id="extra-nodes"),
    pytest.param("TWICE", "found:    'k' twice", id="twice"),
    pytest.param("HIDDEN_KEY", "the key 'trial_id' in ['k', 'trial_id']", id="to_columns-key"),
]


@pytest.mark.parametrize("command", ["validate", "run"])
@pytest.mark.parametrize("spec, found", CLASHES)
def test_columns_that_clash_with_btlabs_are_refused(in_plugins, capsys, spec, found, command):
    cfg = hostile_config(in_plugins, spec)
    extra = ["--backend", "serial", "--out", "out"] if command == "run" else []
    assert run_main(command, cfg.name, *extra) == 2
    err = capsys.readouterr().err
    assert f"{cfg.name}:2:1: error at problem" in err and found in err
    assert not (in_plugins / "out").exists()


def test_reserved_names_are_the_column_table():
    every = {c.name for c in schema.COLUMNS if c.name != "*"}
    for name in every:
        fake = types.SimpleNamespace(columns=schema.pa.schema([(name, schema.pa.int32())]),
                                     extra_columns=(), name="m:P")
        with pytest.raises(ColumnClash, match=repr(name)):
            check_problem_columns(fake)  # type: ignore[arg-type]
    for name in PROBLEMS:
        check_problem_columns(PROBLEMS[name])  # btlab's own problems clash with nothing
    sys.path.insert(0, str(PLUGIN_DIR))
    try:
        from hostile_problems import COMPILE_NS
        check_problem_columns(COMPILE_NS)   # a column btlab fills in when a problem lists it
    finally:
        sys.path.remove(str(PLUGIN_DIR))


def test_column_clash_through_the_library_names_the_column(in_plugins):
    import btlab
    with pytest.raises(ConfigError) as info:
        btlab.validate({"name": "x", "problem": "hostile_problems:NODES_EXTRA",
                        "matrix": {"k": [1]}})
    assert info.value.key_path == ("problem",) and "'nodes'" in info.value.found


# ------------------------------------------------------------------ 4. the clock


def sleepy(seconds: float):
    def rule(board, square, candidates):
        time.sleep(seconds)
        return candidates
    return rule


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_every_strategy_reads_the_clock_at_each_plugin_placement(strategy):
    """budget 0.2 s, a rule of 0.4 s a call: one call's overrun, not 64 checks' worth (amb)."""
    t0 = time.perf_counter()
    res = solve_knights_tour(5, 5, (0, 0), heuristic=sleepy(0.4), strategy=strategy,
                             max_seconds=0.2)
    took = time.perf_counter() - t0
    assert res.status is Status.TIME_LIMIT
    assert res.nodes == 1 and took < 1.5   # placed, the rule asked once, then the clock


def test_amb_reads_the_clock_in_a_run(in_plugins, capsys):
    name = f"sleepy_rule_{os.getpid()}"
    (in_plugins / f"{name}.py").write_text(
        "import time\n\ndef rule(board, square, candidates):\n"
        "    time.sleep(0.3)\n    return candidates\n")
    cfg = in_plugins / "slow.yaml"
    cfg.write_text('name: slow\nproblem: knights_tour\nfixed: {board: [5, 5], mode: count, '
                   f'heuristic: "{name}:rule"}}\n'
                   'matrix: {strategy: [recursive, iterative, amb]}\nbudget: {seconds: 0.1}\n')
    t0 = time.perf_counter()
    assert run_main("run", cfg.name, "--backend", "serial", "--out", "out", "--quiet") == 0
    assert time.perf_counter() - t0 < 10
    df = pd.read_parquet(in_plugins / "out")
    assert (df["status"] == "time_limit").all() and (df["nodes"] == 1).all()
    assert (df["wall_ns"] < 1.5e9).all()
    sys.modules.pop(name, None)


# ------------------------------------------------------------------ 5. the board view


def _reachable(root, depth=8):
    """What a rule can reach from ``root`` by attributes (private ones too), closures'
    cells, bound methods' owners, ``__dict__``, ``__wrapped__`` and items of containers --
    short of modules, classes, code and globals."""
    seen, out, todo = set(), [], [(root, 0)]
    while todo:
        obj, d = todo.pop()
        if (id(obj) in seen or d > depth or obj is None
                or isinstance(obj, (types.ModuleType, type, types.CodeType, str, int))):
            continue
        seen.add(id(obj))
        out.append(obj)
        nxt = []
        if isinstance(obj, (list, tuple, set, frozenset)):
            nxt += list(obj)
        elif isinstance(obj, dict):
            nxt += list(obj.values())
        for name in dir(obj):
            if name.startswith("__") and name not in ("__self__", "__dict__", "__wrapped__",
                                                      "__func__"):
                continue
            try:
                nxt.append(getattr(obj, name))
            except Exception:  # noqa: BLE001
                continue
        for cell in getattr(obj, "__closure__", None) or ():
            try:
                nxt.append(cell.cell_contents)
            except ValueError:
                continue
        todo += [(x, d + 1) for x in nxt]
    return out


def vandal(found):
    """Fills every bytearray and empties every list, set and dict it can reach from the
    view, then returns the candidates in move order."""
    reach: list = []

    def rule(board, square, candidates):
        if not reach:  # explored once, written at every call
            reach.extend(x for x in _reachable(board)
                         if isinstance(x, (bytearray, list, set, dict)))
        for obj in reach:
            if isinstance(obj, bytearray):
                obj[:] = b"\x01" * len(obj)
                found["bytearrays"] += 1
            elif isinstance(obj, (list, set, dict)) and obj is not candidates:
                obj.clear()
                found["containers"] += 1
        return candidates
    return rule


@pytest.mark.parametrize("strategy, budget", [
    pytest.param("recursive", None, marks=pytest.mark.slow, id="recursive-304"),
    pytest.param("iterative", None, marks=pytest.mark.slow, id="iterative-304"),
    pytest.param("recursive", 60_000, id="recursive"),
    pytest.param("iterative", 60_000, id="iterative"),
    pytest.param("amb", 20_000, id="amb"),   # amb is quadratic: a prefix of the tree
])
def test_a_rule_cannot_change_the_search_it_serves(strategy, budget):
    """5 x 5 from (0, 0), count: 304 tours (OEIS A165134) whatever the rule writes (the
    whole tree in the slow tier, 30-40 s each; a prefix by default: the counters of a
    node budget equal the plain search's)."""
    found = {"bytearrays": 0, "containers": 0}
    res = solve_knights_tour(5, 5, (0, 0), mode="count", strategy=strategy,
                             heuristic=vandal(found), max_nodes=budget)
    plain = solve_knights_tour(5, 5, (0, 0), mode="count", strategy="recursive",
                               max_nodes=budget)
    assert res.counters() == plain.counters()
    assert res.solutions == (304 if budget is None else plain.solutions)
    assert found["bytearrays"] > 0          # it reached the view's own squares, and wrote


def test_the_view_cannot_be_changed_and_holds_no_search_state():
    board = KnightBoard(5, 5)
    order = make_orderer(board, lambda b, s, c: c)
    view = order.board
    for name in ("rows", "visited", "onward", "rng", "anything"):
        with pytest.raises(AttributeError, match="read-only"):
            setattr(view, name, 1)
    with pytest.raises(AttributeError, match="read-only"):
        del view.onward
    visited = bytearray(board.size)
    visited[0] = 1
    order(0, visited)
    reach = _reachable(view)
    assert not any(x is visited for x in reach)          # not the search's array
    assert not any(x is order for x in reach)            # nor the orderer


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_view_follows_the_search(strategy):
    """At every call the view's squares are the search's: the candidates (listed from the
    search's own array) are the square's neighbours the view calls unvisited, and the
    view has the square and a path to it visited."""
    board = KnightBoard(5, 5)
    calls = []

    def check(view, square, candidates):
        row, col = square
        free = {board.coords[n] for n in board.neighbours[board.square(row, col)]
                if not view.visited(*board.coords[n])}
        on = sum(view.visited(r, c) for r in range(5) for c in range(5))
        calls.append((set(candidates) == free, view.visited(row, col), on))
        return candidates

    budget = 5_000 if strategy == "amb" else 100_000
    res = solve_knights_tour(5, 5, (0, 0), mode="count", heuristic=check, strategy=strategy,
                             max_nodes=budget)
    assert res.nodes == budget and len(calls) > budget // 4
    assert all(same and here for same, here, _ in calls)
    assert max(on for *_, on in calls) == 24 and calls[0][2] == 1


def test_check_value_table_matches_row_types():
    assert schema.unfit(schema.pa.int64(), 2 ** 63) is not None
    assert schema.unfit(schema.pa.int64(), 2 ** 63 - 1) is None
    assert schema.unfit(schema.pa.float64(), float("inf")) is None
    assert schema.unfit(schema.pa.list_(schema.pa.int32()), (1, 2)) is None
    assert "not a list" in schema.unfit(schema.pa.list_(schema.pa.int32()), "12")
    assert SearchResult(Status.EXHAUSTED, 1, 1, 1, 0, 0, 1).counters()["nodes"] == 1
