"""The contract suite applied to btlab's own problems, and the repository's plug-in tests.

The suite itself is shipped: :class:`btlab.testing.ProblemContract` (the
author of a plug-in problem runs it on theirs, docs/extending.md). Here it runs
on every problem of :data:`btlab.problems.PROBLEMS` and on the problems
registered only here (:data:`PLUGIN_PROBLEMS`, modules in ``tests/plugins``),
one subclass each, made from the registries -- never from a hand-written list,
so a new problem, strategy or engine is tested the moment it is registered:

* every oracle of the spec each strategy can run gives its expected values
  (all listed counters when the oracle's ``tree`` is the strategy's, else the
  solutions), and the toy's oracles are checked by a brute force of their own;
* metrics-contract invariants with exact values;
* a node budget B stops at exactly ``nodes == B``;
* strategies of one ``tree`` report equal counters, under node budgets too;
* a split search equals the unsplit one; a problem without split support
  refuses ``split:``;
* an oracle written as a config makes one trial with the spec's columns and
  a stable id, and runs into its row (config round trip);
* every shipped config validates and a sample trial of each runs;
* the toy problem and a plug-in heuristic written outside the repository go
  through the CLI end to end (serial and Ray), following docs/extending.md,
  whose code blocks are extracted and run here.

Oracle runs are capped at ``ProblemContract.budget`` placements in the default
run; the ones that need more run with ``-m slow``.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parent.parent
PLUGIN_DIR = Path(__file__).resolve().parent / "plugins"
if str(PLUGIN_DIR) not in sys.path:   # the toy problem's module, as "grid_path:PROBLEM"
    sys.path.insert(0, str(PLUGIN_DIR))

from helpers.site import btlab_site, site_env

import btlab
from btlab.cli.main import main
from btlab.config.model import load_config
from btlab.execution.execute import run_trial
from btlab.execution.split_run import serial_solver
from btlab.experiments.core import SearchResult, Status
from btlab.problems import PROBLEMS, get_problem, plugins
from btlab.problems.spec import Oracle, ProblemSpec
from btlab.sweep.expand import count_trials, expand, iter_trials
from btlab.sweep.trial import Trial
from btlab.testing import COUNTERS, ProblemContract, columns, params_id, short

#: Problems registered only in the tests: plug-in references to modules in tests/plugins.
PLUGIN_PROBLEMS = ("grid_path:PROBLEM",)
SPECS: dict[str, ProblemSpec] = {**{name: PROBLEMS[name] for name in PROBLEMS},
                                 **{ref: get_problem(ref) for ref in PLUGIN_PROBLEMS}}
DOC = ROOT / "docs" / "extending.md"
PYTHON = sys.executable


# --------------------------------------------------------------------------- the suite


def contract_class(name: str) -> type[ProblemContract]:
    """``class TestKnightsTour(ProblemContract): problem = "knights_tour"``, for any name."""
    title = "".join(w.capitalize() for w in re.split(r"[^A-Za-z0-9]+", short(name)) if w)
    return type(f"Test{title}", (ProblemContract,), {"problem": name, "__module__": __name__})


#: One subclass of the shipped suite per problem: TestKnightsTour, TestNQueens, TestGridPath.
CONTRACTS = {name: contract_class(name) for name in SPECS}
globals().update({cls.__name__: cls for cls in CONTRACTS.values()})


def test_every_problem_has_its_contract_class():
    assert sorted(cls.__name__ for cls in CONTRACTS.values()) == \
        ["TestGridPath", "TestKnightsTour", "TestNQueens"]
    assert [globals()[cls.__name__].problem for cls in CONTRACTS.values()] == list(SPECS)
    for name, cls in CONTRACTS.items():
        assert cls.spec().name == name and cls.spec().oracles == SPECS[name].oracles


def test_import_btlab_never_imports_the_suite():
    """btlab.testing needs pytest (the ``test`` extra): ``import btlab`` and its public names
    load neither; importing it by name does."""
    code = ("import sys, btlab; btlab.ProblemSpec; btlab.load; btlab.Trial; "
            "print('btlab.testing' in sys.modules, 'pytest' in sys.modules); "
            "import btlab.testing; print(btlab.testing.ProblemContract.__name__)")
    out = subprocess.run([PYTHON, "-c", code], cwd=ROOT, env={**os.environ, "RAY_ADDRESS": ""},
                         text=True, capture_output=True, timeout=120, check=True).stdout
    assert out.split() == ["False", "False", "ProblemContract"]


# --------------------------------------------------------------------------- the toy's oracles


GRID_MOVES = ((-1, 0), (0, 1), (1, 0), (0, -1))   # up, right, down, left: the toy's order


def brute_grid(rows: int, cols: int, start: tuple[int, int], mode: str) -> dict[str, Any]:
    """The toy's counters by enumerating every simple path from ``start`` breadth first, with
    its key (the move indices taken): the depth-first search makes the placements in the
    lexicographic order of the keys (a prefix before its extensions)."""
    size = rows * cols

    def on(r: int, c: int) -> bool:
        return 0 <= r < rows and 0 <= c < cols

    paths: list[tuple[tuple[int, ...], tuple[tuple[int, int], ...]]] = []
    level = [((), (start,))]
    while level:
        paths += level
        level = [(key + (m,), cells + ((r + dr, c + dc),))
                 for key, cells in level for r, c in [cells[-1]]
                 for m, (dr, dc) in enumerate(GRID_MOVES)
                 if on(r + dr, c + dc) and (r + dr, c + dc) not in cells]
    full = sorted(p for p in paths if len(p[1]) == size)
    if mode == "first" and full:
        made = [p for p in paths if p[0] <= full[0][0]]
        solved = full[:1]
    else:
        made, solved = paths, full
    on_solution_paths = {key[:i] for key, _ in solved for i in range(len(key) + 1)}

    def degree(cell: tuple[int, int]) -> int:
        return sum(on(cell[0] + dr, cell[1] + dc) for dr, dc in GRID_MOVES)

    def stuck(cells: tuple[tuple[int, int], ...]) -> bool:
        r, c = cells[-1]
        return all(not on(r + dr, c + dc) or (r + dr, c + dc) in cells for dr, dc in GRID_MOVES)

    short_ones = [cells for _, cells in made if len(cells) < size]
    return {"nodes": len(made), "backtracks": len(made) - len(on_solution_paths),
            "dead_ends": sum(stuck(c) for c in short_ones),
            "checks": sum(degree(c[-1]) for c in short_ones),
            "solutions": len(solved), "max_depth": max(len(c) for _, c in made),
            "solution": tuple(r * cols + c for r, c in full[0][1]) if full else None}


def hamiltonian_paths(rows: int, cols: int, start: tuple[int, int]) -> int:
    """Directed Hamiltonian paths from ``start``, another way: every ordering of the cells
    for up to 9 cells, else dynamic programming over (visited set, last cell)."""
    size = rows * cols
    cells = [(r, c) for r in range(rows) for c in range(cols)]

    def adjacent(a, b):
        return abs(a[0] - b[0]) + abs(a[1] - b[1]) == 1

    if size <= 9:
        rest = [x for x in cells if x != start]
        return sum(all(adjacent(a, b) for a, b in zip((start, *p), p))
                   for p in itertools.permutations(rest))
    index = {x: i for i, x in enumerate(cells)}
    ways = [{} for _ in range(1 << size)]
    ways[1 << index[start]][index[start]] = 1
    for mask in range(1 << size):
        for last, n in ways[mask].items():
            for x in cells:
                i = index[x]
                if not mask >> i & 1 and adjacent(cells[last], x):
                    ways[mask | 1 << i][i] = ways[mask | 1 << i].get(i, 0) + n
    return sum(ways[(1 << size) - 1].values())


TOY_ORACLES = [pytest.param(ref, i, id=f"{short(ref)}-{params_id(o.params)}")
               for ref in PLUGIN_PROBLEMS for i, o in enumerate(SPECS[ref].oracles)]


@pytest.mark.parametrize("name, index", TOY_ORACLES)
def test_toy_oracles_hold_by_brute_force(name, index):
    oracle: Oracle = SPECS[name].oracles[index]
    board = oracle.params["board"]
    rows, cols = (board, board) if isinstance(board, int) else board
    start = tuple(oracle.params["start"])
    brute = brute_grid(rows, cols, start, oracle.params["mode"])
    assert {k: brute[k] for k in oracle.expected} == dict(oracle.expected)
    if oracle.params["mode"] == "count":
        assert brute["solutions"] == hamiltonian_paths(rows, cols, start)


def test_toy_solver_equals_brute_force_everywhere():
    spec = SPECS[PLUGIN_PROBLEMS[0]]
    for (rows, cols), mode in itertools.product([(1, 1), (1, 5), (2, 3), (3, 2), (3, 4), (4, 4)],
                                                ["first", "count"]):
        for start in itertools.product(range(rows), range(cols)):
            c = columns(spec, {"board": [rows, cols], "start": list(start), "mode": mode},
                        "recursive", "python")
            r = spec.solve(c, None, None, 0)
            brute = brute_grid(rows, cols, start, mode)
            assert {**{k: getattr(r, k) for k in brute if k != "solution"},
                    "solution": r.solution} == brute, (rows, cols, start, mode)


def test_toy_time_budget_and_checker():
    spec = SPECS[PLUGIN_PROBLEMS[0]]
    cols = columns(spec, {"board": [7, 7], "mode": "count"}, "recursive", "python")
    r = spec.solve(cols, None, 0.05, 0)
    assert r.status is Status.TIME_LIMIT
    # the clock is read before every 1024th placement: a time stop comes at a multiple
    assert r.nodes > 0 and r.nodes % 1024 == 0
    # the checker refuses what is not a Hamiltonian path from the start cell
    cols = columns(spec, {"board": [2, 2]}, "recursive", "python")
    spec.verify(cols, (0, 1, 3, 2))
    for wrong, why in [((0, 1, 2, 3), "not neighbours"), ((1, 0, 2, 3), "starts at cell 1"),
                       ((0, 1, 3), "not every cell"), ((0, 1, 3, 3), "not every cell")]:
        with pytest.raises(ValueError, match=why):
            spec.verify(cols, wrong)
    # ... and a solver reporting a wrong one makes the trial an error row
    trial = Trial(PLUGIN_PROBLEMS[0], cols, None, None, 0, 0)
    bad = SearchResult(Status.SOLVED, 4, 0, 0, 6, 1, 4, (0, 1, 2, 3))
    row = run_trial(trial, solve=lambda *args: bad)
    assert row["status"] == "error"
    assert row["error"] == ("solver returned an invalid solution: cells 1 and 2 are not "
                            "neighbours")


# --------------------------------------------------------------------------- shipped configs


@pytest.mark.parametrize("path", sorted(ROOT.glob("configs/*.yaml")), ids=lambda p: p.stem)
def test_shipped_config_validates_and_a_sample_runs(path):
    config = load_config(path)
    total = count_trials(config)
    first = next(iter_trials(config))
    assert total >= 1
    if not config.model.exclude:
        assert total == sum(1 for _ in iter_trials(config))
    trial = dataclasses.replace(first, budget_nodes=2_000, budget_seconds=5)
    row = run_trial(trial, solve=serial_solver(trial) if trial.split is not None else None)
    assert row["error"] is None, row["error"]
    assert row["status"] in {"solved", "exhausted", "node_limit"}
    assert 1 <= row["nodes"] <= 2_000
    assert row["trial_id"] == trial.trial_id != first.trial_id


# --------------------------------------------------------------------------- README


README_CASES = [pytest.param(name, s, id=f"readme-{name}-{s}")
                for name in PROBLEMS for s in PROBLEMS[name].strategies]


@pytest.mark.parametrize("name, strategy", README_CASES)
def test_readme_names_every_strategy(name, strategy):
    # the README's tables are generated from the registries (tests/test_docs_tables.py)
    assert f"`{strategy}`" in (ROOT / "README.md").read_text(encoding="utf-8")


# --------------------------------------------------------------------------- docs/extending.md


def doc_blocks() -> dict[str, str]:
    """The code blocks of docs/extending.md marked ``<!-- file: NAME -->`` or
    ``<!-- example: NAME -->``, by name."""
    text = DOC.read_text(encoding="utf-8")
    blocks = re.findall(r"<!-- (?:file|example): (\S+) -->\n```[a-z]*\n(.*?)```", text, re.DOTALL)
    names = [n for n, _ in blocks]
    assert len(names) == len(set(names))
    return dict(blocks)


@pytest.fixture
def fresh_module():
    """Forget the given plug-in modules before and after the test (in-process imports cache
    them by name, and each test writes its own)."""
    names: list[str] = []

    def forget(*more: str) -> None:
        names.extend(more)
        for n in names:
            sys.modules.pop(n, None)

    yield forget
    for n in names:
        sys.modules.pop(n, None)


def test_doc_problem_block_is_the_toy_module():
    assert doc_blocks()["grid_path.py"] == (PLUGIN_DIR / "grid_path.py").read_text()


def test_doc_toy_problem_through_the_cli_serial_and_ray(tmp_path, monkeypatch, capsys,
                                                        ray_session):
    """docs/extending.md section 3: validate, run (serial and Ray), show, report, compare."""
    cfg = tmp_path / "grid_paths.yaml"
    cfg.write_text(doc_blocks()["grid_paths.yaml"])
    monkeypatch.chdir(tmp_path)      # grid_path itself comes from tests/plugins (sys.path)
    assert main(["validate", cfg.name]) == 0
    out = capsys.readouterr().out
    assert "grid_paths.yaml: OK -- problem grid_path:PROBLEM, 25 trials" in out
    assert main(["run", cfg.name, "--backend", "serial", "--out", "serial", "--quiet"]) == 0
    assert main(["run", cfg.name, "--out", "ray", "--quiet", "--batch-size", "4"]) == 0
    out = capsys.readouterr().out
    assert "25 trials, 0 already in ray, 25 to run (ray backend" in out
    serial, ray = pd.read_parquet("serial"), pd.read_parquet("ray")
    assert len(serial) == len(ray) == 25
    assert ray["node_id"].notna().all() and serial["node_id"].isna().all()
    assert (ray["status"] == "exhausted").all() and ray["error"].isna().all()
    # OEIS A096969: directed Hamiltonian paths of the 3 x 3 and 4 x 4 grids
    assert ray.groupby("rows")["solutions"].sum().to_dict() == {3: 40, 4: 552}
    corner = ray[(ray["rows"] == 3) & (ray["start_row"] == 0) & (ray["start_col"] == 0)]
    assert corner[["nodes", "backtracks", "dead_ends", "checks", "solutions",
                   "max_depth"]].iloc[0].to_dict() == {
        "nodes": 79, "backtracks": 32, "dead_ends": 12, "checks": 190, "solutions": 8,
        "max_depth": 9}
    hashes = {json.loads(p)["grid_path:PROBLEM"] for p in ray["plugins"]}
    assert hashes == {plugins.source_hash("grid_path:PROBLEM")}
    assert set(ray["trial_id"]) == {t.trial_id for t in expand(load_config(cfg))}
    # a rerun finds every trial done
    assert main(["run", cfg.name, "--out", "ray", "--quiet"]) == 0
    assert "25 trials, 25 already in ray, 0 to run" in capsys.readouterr().out

    assert main(["show", "ray"]) == 0
    out = capsys.readouterr().out
    assert "ray: 25 trials of grid-paths (1 run(s))" in out
    assert "Grid Hamiltonian path: trials by status, one row per rows, cols" in out
    # count mode: rows, cols, trials, solutions, whole tree searched, censored, errors
    assert re.search(r"│\s*3\s*│\s*3\s*│\s*9\s*│\s*40\s*│\s*9\s*│\s*0\s*│\s*0\s*│", out)
    assert re.search(r"│\s*4\s*│\s*4\s*│\s*16\s*│\s*552\s*│\s*16\s*│\s*0\s*│\s*0\s*│",
                     out)
    assert out.startswith("Finding: The sweep counts 592 solutions from its 25 starts, every "
                          "count exact (the whole tree searched)")
    nodes_4x4 = int(ray.loc[ray["rows"] == 4, "nodes"].sum())
    assert f"{nodes_4x4:,}" in out

    assert main(["report", "ray", "-o", "grid.html"]) == 0
    html = (tmp_path / "grid.html").read_text()
    assert "<title>btlab report: grid-paths</title>" in html
    assert "25 trials of <b>grid_path:PROBLEM</b>" in html
    assert "Grid Hamiltonian path: trials by status" in html
    assert "data:image/png;base64," in html           # the generic plot

    assert main(["compare", "serial", "ray"]) == 0
    out = capsys.readouterr().out
    assert "compared 25 trials present in both serial and ray" in out
    assert out.rstrip().endswith("IDENTICAL")


def test_doc_plugin_heuristic_on_ray_all_64_starts(tmp_path, monkeypatch, capsys, ray_session,
                                                   fresh_module):
    """docs/extending.md section 1, outside the repository: my_rules.py and the config in a
    folder of their own, run from there on Ray (the workers get the module shipped)."""
    blocks = doc_blocks()
    fresh_module("my_rules")
    (tmp_path / "my_rules.py").write_text(blocks["my_rules.py"])
    cfg = tmp_path / "my_rules_64_starts.yaml"
    cfg.write_text(blocks["my_rules_64_starts.yaml"])
    monkeypatch.chdir(tmp_path)
    assert main(["validate", cfg.name]) == 0
    assert "my_rules_64_starts.yaml: OK -- problem knights_tour, 192 trials" in \
        capsys.readouterr().out
    assert main(["run", cfg.name, "--quiet"]) == 0
    df = pd.read_parquet(tmp_path / "results" / "my-rules-64-starts")
    assert len(df) == 192 and df["node_id"].notna().all() and df["error"].isna().all()
    by = {h: g.set_index(["start_row", "start_col"]).sort_index()
          for h, g in df.groupby("heuristic")}
    builtin, plugin = by["warnsdorff"], by["my_rules:warnsdorff_stable"]
    assert len(builtin) == len(plugin) == 64
    cols = ["status", "nodes", "backtracks", "dead_ends", "checks", "solutions", "max_depth"]
    pd.testing.assert_frame_equal(plugin[cols], builtin[cols])
    assert [list(s) for s in plugin["solution"]] == [list(s) for s in builtin["solution"]]
    # what the doc says about them
    assert (plugin["status"] == "solved").all()
    assert (plugin["backtracks"] == 0).sum() == 63
    assert plugin.loc[(3, 5), "backtracks"] == 46
    corner = by["my_rules:corner_first"]["status"].value_counts().to_dict()
    assert corner == {"solved": 39, "node_limit": 25}
    # provenance: the source hash of the module, null for the built-in
    digest = plugins.source_hash("my_rules:warnsdorff_stable")
    assert {json.loads(p)["my_rules:warnsdorff_stable"] for p in plugin["plugins"]} == {digest}
    assert builtin["plugins"].isna().all()


def _outcomes(stdout: str) -> dict[str, int]:
    """pytest's summary line as counts: ``25 passed, 3 skipped`` -> {"passed": 25, ...}."""
    return {word: int(n) for n, word in re.findall(r"(\d+) (passed|failed|skipped|deselected)",
                                                   stdout.strip().splitlines()[-1])}


def test_doc_contract_suite_on_a_plugin_problem(tmp_path):
    """docs/extending.md section 4, in a folder of its own: the subclass under pytest and the
    one call; then the same two on a copy of the problem that miscounts, which fail."""
    blocks = doc_blocks()
    (tmp_path / "grid_path.py").write_text(blocks["grid_path.py"])
    (tmp_path / "test_grid_path_contract.py").write_text(blocks["test_grid_path_contract.py"])
    (tmp_path / "check_grid_path.py").write_text(blocks["check_grid_path.py"])
    command, _, said = blocks["contract-pytest"].strip().partition("#")
    assert command.split() == ["pytest", "test_grid_path_contract.py"]
    env = {**os.environ, "RAY_ADDRESS": ""}

    def pytest_run(*extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([PYTHON, "-m", "pytest", "test_grid_path_contract.py", "-p",
                               "no:cacheprovider", *extra], cwd=tmp_path, env=env, text=True,
                              capture_output=True, timeout=300, check=False)

    def check_run() -> subprocess.CompletedProcess:
        return subprocess.run([PYTHON, "check_grid_path.py"], cwd=tmp_path, env=env, text=True,
                              capture_output=True, timeout=300, check=False)

    run = pytest_run()
    assert run.returncode == 0, run.stdout[-3000:]
    assert _outcomes(run.stdout) == {"passed": 25, "skipped": 15}
    assert "25 passed, 15 skipped" in said
    assert "warning" not in run.stdout.splitlines()[-1]   # the slow marker needs no setup
    slow = pytest_run("-m", "slow")
    assert slow.returncode == 0 and _outcomes(slow.stdout) == {"skipped": 12, "deselected": 28}
    one = check_run()
    assert one.returncode == 0, one.stdout[-3000:]
    assert _outcomes(one.stdout) == {"passed": 25, "skipped": 3, "deselected": 12}
    # a problem that miscounts (one backtrack too many per dead end) fails both
    module = tmp_path / "grid_path.py"
    text = module.read_text()
    wrong = text.replace("                dead_ends += 1\n",
                         "                dead_ends += 1\n                backtracks += 1\n", 1)
    assert wrong != text
    module.write_text(wrong)
    run = pytest_run("-rf")
    assert run.returncode == 1
    failed = set(re.findall(r"^FAILED \S+::TestGridPath::(\w+\[\S+\])", run.stdout, re.M))
    assert failed == {
        "test_oracle[grid_path-recursive-python-board3x3-start0x0-modecount-default]",
        "test_oracle[grid_path-recursive-python-board3x3-start0x1-modecount-default]",
        "test_metrics_contract_invariants[grid_path-recursive-python-board3x3-start0x1-"
        "modecount-default]",
        "test_metrics_contract_invariants[grid_path-recursive-python-board4x4-start0x0-"
        "modecount-default]",
        # its row is an error: more backtracks than placements breaks the run's checks
        "test_config_round_trip[grid_path-recursive-python-board3x3-start0x1-modecount]",
    }
    assert "no solution, so backtracks == nodes: {'status': 'exhausted', 'nodes': 69, " \
        "'backtracks': 91, 'dead_ends': 22," in run.stdout
    assert check_run().returncode == 1


def _btlab(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    # the btlab under test first (a site of this checkout, when the run names one)
    path = os.pathsep.join(p for p in (os.environ.get("PYTHONPATH", ""), str(ROOT)) if p)
    env = {**os.environ, "PYTHONPATH": path, "RAY_ADDRESS": ""}
    return subprocess.run([PYTHON, "-m", "btlab", *args], cwd=cwd, env=env, text=True,
                          capture_output=True, timeout=300, check=False)


def test_editing_a_plugin_changes_the_trial_ids(tmp_path):
    (tmp_path / "my_rules.py").write_text(doc_blocks()["my_rules.py"])
    (tmp_path / "edit.yaml").write_text(textwrap.dedent("""\
        name: edit
        problem: knights_tour
        fixed: {board: [5, 5], heuristic: "my_rules:warnsdorff_stable"}
        matrix:
          start: [[0, 0], [2, 2]]
    """))
    first = _btlab(["run", "edit.yaml", "--backend", "serial", "--quiet"], tmp_path)
    assert first.returncode == 0, first.stderr
    assert "2 trials, 0 already in results/edit, 2 to run" in first.stdout
    again = _btlab(["run", "edit.yaml", "--backend", "serial", "--quiet"], tmp_path)
    assert "2 trials, 2 already in results/edit, 0 to run" in again.stdout
    with open(tmp_path / "my_rules.py", "a") as f:
        f.write("\n# an edit\n")
    edited = _btlab(["run", "edit.yaml", "--backend", "serial", "--quiet"], tmp_path)
    assert edited.returncode == 0, edited.stderr
    assert "2 trials, 0 already in results/edit, 2 to run" in edited.stdout
    assert "moved 2 row(s) of trials no longer in the config out of results/edit" in \
        " ".join(edited.stdout.split())
    assert len(pd.read_parquet(tmp_path / "results" / "edit")) == 2   # the answer to the edit
    df = btlab.load(tmp_path / "results" / "edit", superseded=True)
    assert len(df) == 4 and df["trial_id"].nunique() == 4
    hashes = df["plugins"].map(lambda p: json.loads(p)["my_rules:warnsdorff_stable"])
    assert hashes.nunique() == 2
    # the edit (a comment) changed the ids, not the search
    cols = ["start_row", "start_col", "nodes", "backtracks", "checks", "solutions"]
    old, new = (g[cols].sort_values(cols).values.tolist() for _, g in df.groupby(hashes))
    assert old == new


PLUGIN_REFUSALS = [
    # (id, extra fixed lines, split, key in the message, line:col, expected text)
    ("not-importable", ['heuristic: "no_such_module:rule"'], None, "fixed.heuristic", "5:3",
     "an importable module 'no_such_module'"),
    ("no-such-rule", ['heuristic: "{mod}:no_such_rule"'], None, "fixed.heuristic", "5:3",
     "'no_such_rule' defined in module {mod}"),
    ("compiled", ['heuristic: "{mod}:warnsdorff_stable"', "strategy: iterative",
                  "engine: compiled"], None, "fixed.engine", "7:3",
     "engine: python with a plug-in heuristic"),
    ("tie-break", ['heuristic: "{mod}:warnsdorff_stable"', "tie_break: roth"], None,
     "fixed.tie_break", "6:3", "tie_break: move_order (the default) with a plug-in heuristic"),
    ("split-rng", ['heuristic: "{mod}:warnsdorff_random"'], "split: {{depth: 3}}", "split",
     "6:1", "no split with a plug-in rule that draws from board.rng"),
]


@pytest.mark.parametrize("extra, split, key, where, expected",
                         [pytest.param(*case[1:], id=case[0]) for case in PLUGIN_REFUSALS])
def test_plugin_refusals_exit_2(extra, split, key, where, expected, tmp_path, monkeypatch,
                                capsys, fresh_module):
    mod = f"rules_{tmp_path.name.replace('-', '_')}"
    fresh_module(mod)
    (tmp_path / f"{mod}.py").write_text(doc_blocks()["my_rules.py"])
    lines = ["name: refused", "problem: knights_tour", "fixed:", "  board: [5, 5]",
             *(f"  {x.format(mod=mod)}" for x in extra)]
    if split:
        lines.append(split.format())
    cfg = tmp_path / "refused.yaml"
    cfg.write_text("\n".join(lines) + "\n")
    monkeypatch.chdir(tmp_path)
    for command in (["validate", str(cfg)], ["run", str(cfg), "--backend", "serial"]):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"btlab: {cfg}:{where}: error at {key}\n"), err
        assert expected.format(mod=mod) in err
    assert not (tmp_path / "results").exists()


OLD_IMPORTS = [
    # (id, the plug-in module's text, config key, line:col, old name, new name)
    ("heuristic-experiments.core", "from experiments.core import Status\n\n\n"
     "def rule(board, square, candidates):\n    return candidates\n", "fixed.heuristic", "5:3",
     "experiments.core", "btlab.experiments.core"),
    ("problem-runner.spec", "from runner.spec import ProblemSpec\n\nPROBLEM = None\n",
     "problem", "2:1", "runner.spec", "btlab.problems.spec"),
    ("problem-import-runner", "import runner\n\nPROBLEM = runner.spec.ProblemSpec\n",
     "problem", "2:1", "runner.spec", "btlab.problems.spec"),
]


@pytest.mark.parametrize("where", ["checkout-root", "elsewhere"])
@pytest.mark.parametrize("text, key, at, old, new",
                         [pytest.param(*case[1:], id=case[0]) for case in OLD_IMPORTS])
def test_plugin_importing_an_old_name_exits_2_naming_the_new(text, key, at, old, new, where,
                                                             tmp_path):
    """A plug-in written against btlab 0.1's names: from the checkout's root the folders
    ``runner/`` and ``experiments/`` are stubs that refuse them; elsewhere there is no such
    package, and the plug-in loader names the new module all the same."""
    plugin_dir = tmp_path / "plugins"
    plugin_dir.mkdir()
    (plugin_dir / "old_plugin.py").write_text(text)
    ref = "old_plugin:rule" if key == "fixed.heuristic" else "old_plugin:PROBLEM"
    lines = ["name: old-names", f'problem: "{ref}"' if key == "problem" else
             "problem: knights_tour", "fixed:", "  board: [5, 5]"]
    if key == "fixed.heuristic":
        lines.append(f'  heuristic: "{ref}"')
    cfg = tmp_path / "old.yaml"
    cfg.write_text("\n".join(lines) + "\n")
    cwd = ROOT if where == "checkout-root" else tmp_path
    assert (cwd / "runner" / "__init__.py").exists() == (where == "checkout-root")
    path = os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), str(plugin_dir)) if p)
    env = {**os.environ, "PYTHONPATH": path, "RAY_ADDRESS": ""}
    commands = [["validate", str(cfg)]]
    if key == "fixed.heuristic":   # run refuses it the same way (once: 4 s a command)
        commands.append(["run", str(cfg), "--backend", "serial", "--out", str(tmp_path / "out")])
    for command in commands:
        r = subprocess.run([PYTHON, "-m", "btlab", *command], cwd=cwd, env=env, text=True,
                           capture_output=True, timeout=120, check=False)
        assert r.returncode == 2, r.stderr
        assert r.stderr.splitlines() == [
            f"btlab: {cfg}:{at}: error at {key}",
            "  expected: module 'old_plugin' to import btlab by its names since btlab 0.2",
            f"  found:    it imports {old}, btlab 0.1's name of {new}",
            f"  fix:      import {new} in old_plugin (the map of btlab's modules: "
            "docs/architecture.md)"]
    assert not (tmp_path / "out").exists()


def test_old_name_stubs_of_the_loader_do_not_linger(tmp_path, monkeypatch, fresh_module):
    """Away from a checkout the loader's stand-ins for ``runner`` / ``experiments`` last as
    long as the plug-in's import: a package of the user's by that name imports afterwards."""
    fresh_module("old_here", "runner", "experiments", "runner.helpers")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(ROOT))])
    (tmp_path / "old_here.py").write_text("import experiments.knights_plugin\n")
    meta_path = list(sys.meta_path)
    with pytest.raises(plugins.PluginError) as info:
        plugins.load("old_here:rule")
    assert info.value.found == ("it imports experiments.knights_plugin, btlab 0.1's name of "
                                "btlab.experiments.knights.user_rules")
    assert sys.meta_path == meta_path and "experiments" not in sys.modules
    # the config names btlab's old module itself
    with pytest.raises(plugins.PluginError) as info:
        plugins.load("runner.problems.knights_tour:PROBLEM")
    assert (info.value.found, info.value.fix) == (
        "runner.problems.knights_tour, btlab 0.1's name of btlab.problems.knights_tour",
        "write btlab.problems.knights_tour:PROBLEM")
    # a name below runner that btlab 0.1 never had is simply not found
    with pytest.raises(plugins.PluginError) as info:
        plugins.load("runner.helpers:rule")
    assert info.value.found == "no module named 'runner.helpers'"
    # ... and a package of the user's called runner is the one imported now
    (tmp_path / "runner").mkdir()
    (tmp_path / "runner" / "__init__.py").write_text("")
    (tmp_path / "runner" / "helpers.py").write_text("def rule(board, square, c):\n    return c\n")
    assert plugins.load("runner.helpers:rule").__module__ == "runner.helpers"
    assert sys.meta_path == meta_path


def test_plugin_returning_a_wrong_list_is_an_error_row(tmp_path, monkeypatch, capsys,
                                                       fresh_module):
    mod = "rules_wrong_list"
    fresh_module(mod)
    (tmp_path / f"{mod}.py").write_text(textwrap.dedent("""\
        def drops_one(board, square, candidates):
            return candidates[:-1] if square == (2, 1) else candidates
    """))
    (tmp_path / "wrong.yaml").write_text(textwrap.dedent(f"""\
        name: wrong
        problem: knights_tour
        fixed: {{board: [5, 5]}}
        matrix:
          heuristic: [warnsdorff, "{mod}:drops_one"]
          start: [[0, 0], [1, 2]]
    """))
    monkeypatch.chdir(tmp_path)
    assert main(["run", "wrong.yaml", "--backend", "serial", "--quiet"]) == 1
    out = capsys.readouterr().out
    assert "2 trial(s) ended with status error" in out
    df = pd.read_parquet(tmp_path / "results" / "wrong").set_index(
        ["heuristic", "start_row", "start_col"]).sort_index()
    assert len(df) == 4
    assert df.loc["warnsdorff", "error"].isna().all()
    assert set(df.loc["warnsdorff", "status"]) == {"solved", "exhausted"}
    bad = df.loc[f"{mod}:drops_one"]
    assert (bad["status"] == "error").all() and bad["nodes"].isna().all()
    assert bad.loc[(0, 0), "error"].startswith(
        f"HeuristicError: heuristic plug-in {mod}:drops_one at square (2, 1) returned "
        "[(1, 3), (4, 2)]: misses (4, 0); it must return a reordering of its candidates "
        "[(1, 3), (4, 2), (4, 0)]")
    assert bad.loc[(1, 2), "error"].startswith(
        f"HeuristicError: heuristic plug-in {mod}:drops_one at square (2, 1) returned")


@pytest.mark.slow  # 50 s: the copy's edited experiments/knights/solve.py recompiles every kernel
def test_doc_strategy_is_one_function_and_one_entry(tmp_path):
    """docs/extending.md section 2, applied to a copy of the repository: the function, the
    entry, and the README's regenerated table, give a strategy that configs accept and that
    the contract suite (run in the copy) holds to the tree of ``recursive``."""
    blocks = doc_blocks()
    copy = tmp_path / "btlab"
    for part in ("experiments", "runner", "tests", "configs", "docs"):
        shutil.copytree(ROOT / part, copy / part,
                        ignore=shutil.ignore_patterns("results", ".pytest_cache"))
    for name in ("README.md", "pyproject.toml"):
        shutil.copy2(ROOT / name, copy / name)
    knights = copy / "experiments" / "knights" / "solve.py"
    text = knights.read_text()
    marker = "#: The knight's-tour strategies."
    assert text.count(marker) == 1
    text = text.replace(marker, blocks["strategy-function"] + "\n\n" + marker).rstrip()
    assert text.endswith("),\n)")   # the registry closes the module
    knights.write_text(text[:-1] + blocks["strategy-entry"] + ")\n")
    env = site_env(btlab_site(copy, tmp_path / "site"))
    command = blocks["strategy-readme"].strip()
    assert command == "python -m btlab.views.docs_tables --write"
    regen = subprocess.run([PYTHON, "-m", "btlab.views.docs_tables", "--write"], cwd=copy, env=env,
                           text=True, capture_output=True, timeout=120, check=False)
    assert regen.returncode == 0, regen.stderr
    assert "| `iterators` | python |" in (copy / "README.md").read_text()

    (tmp_path / "it.yaml").write_text(textwrap.dedent("""\
        name: iterators
        problem: knights_tour
        fixed: {board: [5, 5], mode: count}
        matrix:
          strategy: [recursive, iterators]
          heuristic: [none, warnsdorff]
          start: [[0, 0], [1, 2]]
        budget: {nodes: 3000}
    """))
    run = subprocess.run([PYTHON, "-m", "btlab", "run", "it.yaml", "--backend", "serial",
                          "--quiet"], cwd=tmp_path, env=env, text=True, capture_output=True,
                         timeout=300, check=False)
    assert run.returncode == 0, run.stderr
    df = pd.read_parquet(tmp_path / "results" / "iterators")
    keys = ["heuristic", "start_row", "start_col"]
    a = df[df["strategy"] == "recursive"].set_index(keys).sort_index()
    b = df[df["strategy"] == "iterators"].set_index(keys).sort_index()
    assert len(a) == len(b) == 4
    pd.testing.assert_frame_equal(a[list(COUNTERS)], b[list(COUNTERS)])
    # a board over its cap is refused (derived from max_size)
    (tmp_path / "big.yaml").write_text("name: big\nproblem: knights_tour\n"
                                       "fixed: {board: [2001, 2000], strategy: iterators}\n")
    big = subprocess.run([PYTHON, "-m", "btlab", "validate", "big.yaml"], cwd=tmp_path,
                         env=env, text=True, capture_output=True, timeout=300, check=False)
    assert big.returncode == 2
    assert "at most 4,000,000 squares for strategy 'iterators'" in big.stderr
    # the contract suite, in the copy, picks the strategy up from the registry
    def suite() -> dict[str, list[str]]:
        run = subprocess.run(
            [PYTHON, "-m", "pytest", "-v", "-p", "no:cacheprovider", "tests/test_contract.py",
             "-k", "iterators or (same_tree and knights_tour)"],
            cwd=copy, env=env, text=True, capture_output=True, timeout=600, check=False)
        outcomes: dict[str, list[str]] = {}
        for m in re.finditer(r"^tests/test_contract.py::(?:Test\w+::)?(\w+)\[(\S+)\] "
                             r"(PASSED|FAILED|SKIPPED)",
                             run.stdout, re.MULTILINE):
            outcomes.setdefault(m.group(3), []).append(f"{m.group(1)}[{m.group(2)}]")
        return outcomes

    outcomes = suite()
    assert "FAILED" not in outcomes, outcomes["FAILED"]
    for test in ("test_oracle", "test_metrics_contract_invariants",
                 "test_node_budget_stops_exactly", "test_split_equals_unsplit",
                 "test_readme_names_every_strategy"):
        assert any(t.startswith(f"{test}[") and "iterators" in t
                   for t in outcomes["PASSED"]), test
    assert sum(t.startswith("test_same_tree_same_counters[") for t in outcomes["PASSED"]) == 8
    # and it would catch a strategy that miscounts: one backtrack too many per dead end
    text = knights.read_text()
    wrong = text.replace("            if not cands:\n                dead_ends += 1\n",
                         "            if not cands:\n                dead_ends += 1\n"
                         "                backtracks += 1\n", 1)
    assert wrong != text
    knights.write_text(wrong)
    failed = suite()["FAILED"]
    assert any(t.startswith("test_same_tree_same_counters[") for t in failed)
    assert any(t.startswith("test_metrics_contract_invariants[") for t in failed)
