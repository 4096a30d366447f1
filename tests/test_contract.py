"""The contract suite: every problem, strategy and engine the registries hold, held to one contract.

In the style of Hydra's shared launcher test suites: the tests are written
once and parametrised over the registries -- :data:`btlab.problems.PROBLEMS`
plus the problems registered only here (:data:`PLUGIN_PROBLEMS`, modules in
``tests/plugins``), each spec's ``strategies`` and each strategy's
``engines`` -- never over hand-written lists, so a new problem, strategy or
engine is tested the moment it is registered (``docs/extending.md``):

* every oracle of the spec each strategy can run gives its expected values
  (all listed counters when the oracle's ``tree`` is the strategy's, else the
  solutions), and the toy's oracles are checked by a brute force of their own;
* metrics-contract invariants with exact values;
* a node budget B stops at exactly ``nodes == B``;
* strategies of one ``tree`` report equal counters, under node budgets too;
* a split search equals the unsplit one; a problem without split support
  refuses ``split:``;
* every shipped config validates and a sample trial of each runs;
* the toy problem and a plug-in heuristic written outside the repository go
  through the CLI end to end (serial and Ray), following docs/extending.md,
  whose code blocks are extracted and run here.

Oracle runs are capped at :data:`BUDGET` placements in the default run; the
ones that need more run with ``-m slow``.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parent.parent
PLUGIN_DIR = Path(__file__).resolve().parent / "plugins"
if str(PLUGIN_DIR) not in sys.path:   # the toy problem's module, as "grid_path:PROBLEM"
    sys.path.insert(0, str(PLUGIN_DIR))

from helpers.site import btlab_site, site_env

from btlab.cli.main import main
from btlab.config.model import load_config, parse_config
from btlab.errors import ConfigError
from btlab.execution.execute import run_trial
from btlab.execution.split_run import serial_solver
from btlab.experiments.core import SearchResult, Status
from btlab.experiments.split.subtrees import solve_split
from btlab.problems import PROBLEMS, get_problem, plugins
from btlab.problems.spec import Oracle, ProblemSpec
from btlab.sweep.expand import count_trials, expand, iter_trials
from btlab.sweep.trial import Trial

#: Problems registered only in the tests: plug-in references to modules in tests/plugins.
PLUGIN_PROBLEMS = ("grid_path:PROBLEM",)
SPECS: dict[str, ProblemSpec] = {**{name: PROBLEMS[name] for name in PROBLEMS},
                                 **{ref: get_problem(ref) for ref in PLUGIN_PROBLEMS}}
COUNTERS = ("status", "nodes", "backtracks", "dead_ends", "checks", "solutions", "max_depth")
#: Placements one oracle run may make in the default run, per engine.
BUDGET = {"python": 30_000, "compiled": 100_000_000}
#: ... and with -m slow.
SLOW_BUDGET = 30_000_000
#: Node budget of the same-tree and split comparisons (prefixes of big trees).
PREFIX_BUDGETS = (777, 5_000)
SEED = 2026
DOC = ROOT / "docs" / "extending.md"
PYTHON = sys.executable


# --------------------------------------------------------------------------- cases


def short(name: str) -> str:
    return name.partition(":")[0]


def engines(spec: ProblemSpec, strategy: str) -> tuple[str, ...]:
    entry = spec.strategies[strategy]
    return entry.engines if "engine" in spec.params.model_fields else ("python",)


def params_id(params: Mapping[str, Any]) -> str:
    def text(v: Any) -> str:
        return "x".join(map(str, v)) if isinstance(v, (list, tuple)) else str(v)
    return "-".join(f"{k}{text(v)}" for k, v in params.items())


#: (problem, strategy, engine) for every registered triple.
RUNS = [(name, strategy, engine) for name, spec in SPECS.items()
        for strategy in spec.strategies for engine in engines(spec, strategy)]

ORACLE_CASES = [pytest.param(name, strategy, engine, i,
                             id=f"{short(name)}-{strategy}-{engine}-{params_id(o.params)}")
                for name, strategy, engine in RUNS
                for i, o in enumerate(SPECS[name].oracles)]

TIERS = [pytest.param("default", id="default"),
         pytest.param("slow", id="slow", marks=pytest.mark.slow)]


def columns(spec: ProblemSpec, params: Mapping[str, Any], strategy: str,
            engine: str) -> dict[str, Any]:
    """A trial's columns: ``params`` with the strategy and engine, validated by the spec."""
    p = dict(params)
    if "strategy" in spec.params.model_fields:
        p["strategy"] = strategy
    if "engine" in spec.params.model_fields:
        p["engine"] = engine
    return spec.to_columns(spec.params.model_validate(p).model_dump())


def excluded(spec: ProblemSpec, strategy: str, cols: Mapping[str, Any],
             params: Mapping[str, Any]) -> str | None:
    """Why the registry entry excludes these parameters (its modes, options, max_size), or None."""
    entry = spec.strategies[strategy]
    mode = cols.get("mode")
    if mode is not None and mode not in entry.modes:
        return f"strategy {strategy} runs mode {', '.join(entry.modes)} only"
    others = {o for e in spec.strategies.values() for o in e.options}
    for key in params:
        if key in others and key not in entry.options:
            return f"option {key} is not one of strategy {strategy}'s"
    if entry.max_size is not None and spec.size is not None and spec.size(cols) > entry.max_size:
        return f"larger than strategy {strategy}'s max_size {entry.max_size}"
    return None


def oracle_columns(name: str, strategy: str, engine: str, index: int) -> dict[str, Any]:
    """The oracle's columns for this strategy and engine; skips what its entry excludes. The
    spec's own checks must accept every combination the entry does not exclude."""
    spec = SPECS[name]
    oracle = spec.oracles[index]
    cols = columns(spec, oracle.params, strategy, engine)
    why = excluded(spec, strategy, cols, oracle.params)
    if why:
        pytest.skip(why)
    spec.check_strategy(cols)
    spec.check(cols)
    return cols


@functools.cache
def _solve(name: str, frozen: str, max_nodes: int | None, seed: int = SEED) -> SearchResult:
    spec = SPECS[name]
    cols = json.loads(frozen)
    if spec.prepare is not None:
        spec.prepare(cols)   # compiled kernels: load them (numba warm-up) before solving
    return spec.solve(cols, max_nodes, None, seed)


def solve(name: str, cols: Mapping[str, Any], max_nodes: int | None) -> SearchResult:
    """``spec.solve`` on these columns (cached: the tests share the runs)."""
    return _solve(name, json.dumps(cols, sort_keys=True), max_nodes)


def complete(name: str, strategy: str, engine: str, index: int,
             tier: str = "default") -> tuple[dict[str, Any], SearchResult]:
    """The oracle's columns and the complete search, or a skip when it is larger than the tier
    allows (the default tier's budget; with -m slow, the rest up to :data:`SLOW_BUDGET`)."""
    cols = oracle_columns(name, strategy, engine, index)
    small = solve(name, cols, BUDGET[engine])
    if tier == "default":
        if small.status is Status.NODE_LIMIT:
            pytest.skip(f"more than {BUDGET[engine]:,} placements: runs with -m slow")
        return cols, small
    if small.status is not Status.NODE_LIMIT:
        pytest.skip("runs in the default tier")
    big = solve(name, cols, SLOW_BUDGET)
    if big.status is Status.NODE_LIMIT:
        pytest.skip(f"more than {SLOW_BUDGET:,} placements")
    return cols, big


def counters(r: SearchResult) -> dict[str, Any]:
    return {**r.counters(), "solution": r.solution}


# --------------------------------------------------------------------------- oracles


@pytest.mark.parametrize("tier", TIERS)
@pytest.mark.parametrize("name, strategy, engine, index", ORACLE_CASES)
def test_oracle(name, strategy, engine, index, tier):
    spec = SPECS[name]
    oracle = spec.oracles[index]
    cols, r = complete(name, strategy, engine, index, tier)
    tree = spec.strategies[strategy].tree
    keys = list(oracle.expected) if oracle.tree is not None and oracle.tree == tree \
        else ["solutions"]
    got = {k: getattr(r, k) for k in keys}
    assert got == {k: oracle.expected[k] for k in keys}, oracle.source
    if cols.get("mode") == "count":
        assert r.status is Status.EXHAUSTED
    else:
        assert r.status is (Status.SOLVED if oracle.expected["solutions"] else Status.EXHAUSTED)


@pytest.mark.parametrize("tier", TIERS)
@pytest.mark.parametrize("name, strategy, engine, index", ORACLE_CASES)
def test_metrics_contract_invariants(name, strategy, engine, index, tier):
    spec = SPECS[name]
    cols, r = complete(name, strategy, engine, index, tier)
    first = cols.get("mode") == "first"
    if r.solution is None:
        assert r.solutions == 0
    else:
        spec.verify(cols, r.solution)                  # raises on a wrong solution
        assert r.max_depth == len(r.solution)          # nothing is deeper than a solution
    if r.solutions == 0:
        # every placement was undone with nothing below it
        assert r.backtracks == r.nodes
        assert r.status is Status.EXHAUSTED
    if first and r.solutions:
        assert r.solutions == 1 and r.status is Status.SOLVED
        if "max_frontier" in r.extra:
            # breadth-first (it reports its frontier): the frontier placements are still
            # waiting to be extended at the stop, so they are not backtracks either
            assert r.nodes - r.backtracks > len(r.solution)
        else:
            # depth-first: what is not undone is the path to the solution
            assert r.nodes - r.backtracks == len(r.solution)
    # a dead end is a placement undone with nothing below it, so a backtrack
    assert 0 <= r.dead_ends <= r.backtracks <= r.nodes
    if not first and r.solution is not None:
        # count mode's solution is the first one found: the one first mode stops at
        first_cols = {**cols, "mode": "first"}
        try:
            spec.check_strategy(first_cols)
            spec.check(first_cols)
        except ValueError:
            return   # unique counting has no first mode
        if "first" in spec.strategies[strategy].modes:
            f = solve(name, first_cols, SLOW_BUDGET)
            assert f.status is Status.SOLVED
            assert f.solution == r.solution


@pytest.mark.parametrize("name, strategy, engine, index", ORACLE_CASES)
def test_node_budget_stops_exactly(name, strategy, engine, index):
    spec = SPECS[name]
    cols, full = complete(name, strategy, engine, index)
    # a search that finishes in exactly max_nodes placements ends normally
    assert counters(solve(name, cols, full.nodes)) == counters(full)
    if full.nodes < 2:
        pytest.skip("a one-placement tree has no smaller budget")
    walks_a_tree = spec.strategies[strategy].tree is not None
    for budget in sorted({1, full.nodes // 2, full.nodes - 1}):
        r = solve(name, cols, budget)
        assert r.status is Status.NODE_LIMIT, budget
        if walks_a_tree:
            assert r.nodes == budget
        else:   # no tree (a construction in one step): stopped before it, nothing made
            assert r.nodes == 0
        assert r.solutions <= full.solutions
    if walks_a_tree and cols.get("mode") == "first" and full.solutions:
        # stopped just before the placement that completes the solution: everything else
        # is as in the full search
        r = solve(name, cols, full.nodes - 1)
        assert (r.backtracks, r.dead_ends, r.checks, r.solutions) == \
            (full.backtracks, full.dead_ends, full.checks, 0)


# --------------------------------------------------------------------------- same tree


def _tree_cases() -> list:
    cases = []
    for name, spec in SPECS.items():
        trees = {e.tree for e in spec.strategies.values() if e.tree is not None}
        for tree in sorted(trees):
            members = [(s, g) for s, e in spec.strategies.items() if e.tree == tree
                       for g in engines(spec, s)]
            if len(members) < 2:
                continue
            for i, o in enumerate(spec.oracles):
                cases.append(pytest.param(name, tree, i, id=f"same_tree-{short(name)}-"
                                          f"tree={tree}-{params_id(o.params)}"))
    return cases


@pytest.mark.parametrize("budget", PREFIX_BUDGETS)
@pytest.mark.parametrize("name, tree, index", _tree_cases())
def test_same_tree_same_counters(name, tree, index, budget):
    spec = SPECS[name]
    oracle = spec.oracles[index]
    results = {}
    for strategy, entry in spec.strategies.items():
        if entry.tree != tree:
            continue
        for engine in engines(spec, strategy):
            cols = columns(spec, oracle.params, strategy, engine)
            if excluded(spec, strategy, cols, oracle.params):
                continue
            results[(strategy, engine)] = counters(solve(name, cols, budget))
    if len(results) < 2:
        pytest.skip("fewer than two strategies of this tree run this oracle")
    (first_key, expected), *rest = results.items()
    for key, got in rest:
        assert got == expected, f"{key} differs from {first_key}"


# --------------------------------------------------------------------------- split


SPLIT_CASES = [p for p in ORACLE_CASES
               if SPECS[p.values[0]].split is not None
               and SPECS[p.values[0]].strategies[p.values[1]].splittable]
#: Split depths: the whole search as one task, shallow, deeper, deeper than any oracle's tree.
SPLIT_DEPTHS = (0, 1, 3, 64)


@pytest.mark.parametrize("name, strategy, engine, index", SPLIT_CASES)
def test_split_equals_unsplit(name, strategy, engine, index):
    spec = SPECS[name]
    cols = oracle_columns(name, strategy, engine, index)
    spec.split.check(cols)   # a splittable strategy's trials must be accepted
    whole = solve(name, cols, 20_000)
    budgets = [*PREFIX_BUDGETS] + ([None] if whole.status is not Status.NODE_LIMIT else [])
    for budget in budgets:
        trial = Trial(name, cols, budget, None, SEED, 0, split=3)
        unsplit = counters(_solve(name, json.dumps(cols, sort_keys=True), budget,
                                  trial.solver_seed))
        params = spec.split.params(cols, trial.solver_seed)
        for depth in SPLIT_DEPTHS:
            got = counters(solve_split(spec.split.splitter, params, depth, max_nodes=budget))
            assert got == unsplit, (budget, depth)
        # the runner's serial split: a trial with split set, through run_trial
        for split in (3, "auto"):
            t = dataclasses.replace(trial, split=split)
            row = run_trial(t, solve=serial_solver(t))
            assert row["error"] is None
            assert {k: row[k] for k in COUNTERS} == {k: unsplit[k] for k in COUNTERS}, split
            assert (tuple(row["solution"]) if row["solution"] is not None else None) == \
                unsplit["solution"]


@pytest.mark.parametrize("name", [n for n, s in SPECS.items() if s.split is None])
def test_problem_without_split_support_refuses_split(name, tmp_path, monkeypatch, capsys):
    spec = SPECS[name]
    oracle = spec.oracles[0]
    text = textwrap.dedent(f"""\
        name: no-split
        problem: "{name}"
        fixed: {json.dumps(dict(oracle.params))}
        split: {{depth: 2}}
    """)
    with pytest.raises(ConfigError) as info:
        expand(parse_config(text, "no-split.yaml"))   # refused when the trials are made
    err = info.value
    assert (err.key_path, err.line, err.column) == (("split",), 4, 1)
    assert err.expected == f"no split: problem {name} defines no split support"
    assert err.fix == "drop split"
    cfg = tmp_path / "no-split.yaml"
    cfg.write_text(text)
    monkeypatch.chdir(tmp_path)
    assert main(["validate", str(cfg)]) == 2
    assert main(["run", str(cfg), "--backend", "serial", "--quiet"]) == 2
    stderr = capsys.readouterr().err
    assert stderr.count(f"{cfg}:4:1: error at split") == 2
    assert "defines no split support" in stderr
    assert not (tmp_path / "results").exists()   # nothing was written


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
    # rows, cols, trials, solved, exhausted, censored, errors
    assert re.search(r"│\s*3\s*│\s*3\s*│\s*9\s*│\s*0\s*│\s*9\s*│\s*0\s*│\s*0\s*│", out)
    assert re.search(r"│\s*4\s*│\s*4\s*│\s*16\s*│\s*0\s*│\s*16\s*│\s*0\s*│\s*0\s*│", out)
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


def _btlab(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RAY_ADDRESS": ""}
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
    assert "2 older row(s) in this folder are from trials no longer in the config" in edited.stdout
    df = pd.read_parquet(tmp_path / "results" / "edit")
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
        for m in re.finditer(r"^tests/test_contract.py::(\w+)\[(\S+)\] (PASSED|FAILED|SKIPPED)",
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
