"""The contract suite of btlab problems, for the author of a ``ProblemSpec`` (needs pytest).

In the style of Hydra's shared launcher suites (``hydra.test_utils``): the
tests are written once, in :class:`ProblemContract`, and a problem's author
runs them on a problem with one subclass in a test module of their own::

    from btlab.testing import ProblemContract

    class TestMyProblem(ProblemContract):
        problem = "my_problem:PROBLEM"      # or the ProblemSpec itself

or with one call, ``btlab.testing.check("my_problem:PROBLEM")`` (it runs
pytest on that subclass and returns pytest's exit status). The suite is
parametrised over the problem's registry -- each strategy of
``spec.strategies`` and each engine the strategy lists, on each of
``spec.oracles`` -- so a new strategy or oracle is tested the moment it is
registered. For each of them:

* ``test_oracle``: the oracle's known values (all listed counters when the
  oracle's ``tree`` is the strategy's, else ``solutions``) and the status;
* ``test_metrics_contract_invariants``: ``0 <= dead_ends <= backtracks <=
  nodes``, a search without solutions undoes every placement, a first-mode
  depth-first search undoes all but the path to its solution, ``max_depth``
  is the solution's length, every solution passes ``spec.verify``, count
  mode's solution is the one first mode stops at;
* ``test_node_budget_stops_exactly``: a node budget ``B`` smaller than the
  search stops at exactly ``nodes == B`` (status ``node_limit``); ``B`` equal
  to the search's size is not a limit;
* ``test_same_tree_same_counters``: strategies and engines of one ``tree``
  report equal counters, stopped by node budgets too;
* ``test_split_equals_unsplit``: split searches, at several depths and through
  the runner's serial split, equal the unsplit one;
  ``test_problem_without_split_support_refuses_split`` otherwise;
* ``test_config_round_trip``: an oracle written as a config validates, expands
  to one trial with the spec's columns (they fit ``spec.columns``) and the same
  id on every parse, and runs into a row with those columns and the counters of
  ``spec.solve``.

A complete oracle search is capped at :attr:`ProblemContract.budget`
placements per engine in the default run; larger ones run in the ``slow`` tier
(``pytest -m slow``, up to :attr:`ProblemContract.slow_budget`; without ``-m slow``
its tests are skipped). Importing
``btlab`` never imports this module; it needs the ``test`` extra
(``pip install 'btlab[test]'``).
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
import textwrap
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import pyarrow as pa
import pytest

from btlab.cli.main import main
from btlab.config.model import parse_config
from btlab.errors import ConfigError
from btlab.execution.execute import run_trial
from btlab.execution.split_run import serial_solver
from btlab.experiments.core import SearchResult, Status
from btlab.experiments.registry import Strategy
from btlab.experiments.split.subtrees import solve_split
from btlab.problems import get_problem
from btlab.problems.spec import ProblemSpec
from btlab.sweep.expand import expand
from btlab.sweep.trial import Trial

__all__ = ["COUNTERS", "ProblemContract", "check", "pytest_configure"]

#: The counters of a row (the metrics contract, docs/metrics.md).
COUNTERS = ("status", "nodes", "backtracks", "dead_ends", "checks", "solutions", "max_depth")


def pytest_configure(config: Any) -> None:
    """Register the ``slow`` marker (once; also as a plug-in, ``-p btlab.testing``)."""
    if not any(line.startswith("slow:") for line in config.getini("markers")):
        config.addinivalue_line("markers", "slow: long-running tests, run with -m slow")


def short(name: str) -> str:
    """A problem's name for test ids (``grid_path:PROBLEM`` -> ``grid_path``)."""
    return name.partition(":")[0]


def params_id(params: Mapping[str, Any]) -> str:
    """Parameters for a test id: ``board5x5-start0x0-modecount``."""
    def text(v: Any) -> str:
        return "x".join(map(str, v)) if isinstance(v, (list, tuple)) else str(v)
    return "-".join(f"{k}{text(v)}" for k, v in params.items())


def registry(spec: ProblemSpec) -> Mapping[str, Strategy]:
    """The spec's strategies (none when it has no registry: the per-strategy tests skip)."""
    return spec.strategies if spec.strategies is not None else {}


def engines(spec: ProblemSpec, strategy: str) -> tuple[str, ...]:
    """The engines the suite runs ``strategy`` on (``python`` when the spec has no ``engine``)."""
    entry = registry(spec)[strategy]
    return entry.engines if "engine" in spec.params.model_fields else ("python",)


def columns(spec: ProblemSpec, params: Mapping[str, Any], strategy: str,
            engine: str) -> dict[str, Any]:
    """A trial's columns: ``params`` with the strategy and engine, validated by the spec."""
    return spec.to_columns(spec.params.model_validate(
        with_walk(spec, params, strategy, engine)).model_dump())


def with_walk(spec: ProblemSpec, params: Mapping[str, Any], strategy: str,
              engine: str) -> dict[str, Any]:
    """``params`` with ``strategy`` and ``engine`` added where the spec has those parameters."""
    p = dict(params)
    if "strategy" in spec.params.model_fields:
        p["strategy"] = strategy
    if "engine" in spec.params.model_fields:
        p["engine"] = engine
    return p


def excluded(spec: ProblemSpec, strategy: str, cols: Mapping[str, Any],
             params: Mapping[str, Any]) -> str | None:
    """Why the registry entry excludes these parameters (its modes, options, max_size), or None."""
    entry = registry(spec)[strategy]
    mode = cols.get("mode")
    if mode is not None and mode not in entry.modes:
        return f"strategy {strategy} runs mode {', '.join(entry.modes)} only"
    others = {o for e in registry(spec).values() for o in e.options}
    for key in params:
        if key in others and key not in entry.options:
            return f"option {key} is not one of strategy {strategy}'s"
    if entry.max_size is not None and spec.size is not None and spec.size(cols) > entry.max_size:
        return f"larger than strategy {strategy}'s max_size {entry.max_size}"
    return None


def counters(r: SearchResult) -> dict[str, Any]:
    """The counters of a result, with its solution."""
    return {**r.counters(), "solution": r.solution}


#: Searches the tests share: (problem, columns as JSON, max_nodes, seed) -> result.
_RESULTS: dict[tuple[str, str, int | None, int], SearchResult] = {}
#: Problems whose ``prepare`` ran (compiled kernels loaded before any clock starts).
_PREPARED: set[tuple[str, str]] = set()


def solve(spec: ProblemSpec, cols: Mapping[str, Any], max_nodes: int | None,
          seed: int) -> SearchResult:
    """``spec.solve`` on these columns, without a time budget (cached: the tests share runs)."""
    frozen = json.dumps(cols, sort_keys=True, default=list)
    key = (spec.name, frozen, max_nodes, seed)
    if key not in _RESULTS:
        if spec.prepare is not None and (spec.name, frozen) not in _PREPARED:
            spec.prepare(dict(cols))
            _PREPARED.add((spec.name, frozen))
        _RESULTS[key] = spec.solve(dict(cols), max_nodes, None, seed)
    return _RESULTS[key]


def _skip_case(reason: str) -> list[Any]:
    return [pytest.param(None, id="none", marks=pytest.mark.skip(reason=reason))]


class ProblemContract:
    """The contract suite; subclass it with ``problem`` set to run it on a problem.

    Attributes:
        problem: the problem: a :class:`~btlab.problems.spec.ProblemSpec`, or its
            name as a config writes it (``knights_tour``, ``"my_problem:PROBLEM"``). A
            plug-in spec must be importable by its ``name`` (``"module:ATTR"``,
            from the working directory or ``PYTHONPATH``), since configs and
            workers find it by that name.
        budget: placements a complete oracle search may make in the default tier,
            per engine (larger oracles run in the ``slow`` tier).
        slow_budget: ... and in the ``slow`` tier (larger ones are skipped).
        prefix_budgets: node budgets at which the same-tree and split comparisons
            stop (prefixes of big trees).
        split_depths: split depths compared with the unsplit search: the whole
            search as one task, shallow, deeper, deeper than any oracle's tree.
        seed: the trials' seed.
    """

    problem: ClassVar[ProblemSpec | str]
    budget: ClassVar[Mapping[str, int]] = {"python": 30_000, "compiled": 100_000_000}
    slow_budget: ClassVar[int] = 30_000_000
    prefix_budgets: ClassVar[tuple[int, ...]] = (777, 5_000)
    split_depths: ClassVar[tuple[int, ...]] = (0, 1, 3, 64)
    seed: ClassVar[int] = 2026

    # ------------------------------------------------------------------ the cases

    @classmethod
    def spec(cls) -> ProblemSpec:
        """The problem's spec (a name is looked up as a config's ``problem`` is)."""
        problem = getattr(cls, "problem", None)
        if problem is None:
            raise TypeError(f"{cls.__name__}: set problem = <a ProblemSpec or its name>")
        return get_problem(problem) if isinstance(problem, str) else problem

    @classmethod
    def runs(cls) -> Iterator[tuple[str, str, int]]:
        """(strategy, engine, oracle index) for every registered pair and oracle."""
        spec = cls.spec()
        for strategy in registry(spec):
            for engine in engines(spec, strategy):
                for i in range(len(spec.oracles)):
                    yield strategy, engine, i

    @classmethod
    def oracle_cases(cls) -> list[Any]:
        spec = cls.spec()
        return [pytest.param(case, id=f"{short(spec.name)}-{case[0]}-{case[1]}-"
                             f"{params_id(spec.oracles[case[2]].params)}")
                for case in cls.runs()] or _skip_case(f"{spec.name} has no oracles or strategies")

    @classmethod
    def tree_cases(cls) -> list[Any]:
        """(tree, oracle index) for each tree walked by at least two strategy-engine pairs."""
        spec = cls.spec()
        cases = []
        for tree in sorted({e.tree for e in registry(spec).values() if e.tree is not None}):
            members = [(s, g) for s, e in registry(spec).items() if e.tree == tree
                       for g in engines(spec, s)]
            if len(members) < 2:
                continue
            cases += [pytest.param((tree, i), id=f"same_tree-{short(spec.name)}-tree={tree}-"
                                   f"{params_id(o.params)}")
                      for i, o in enumerate(spec.oracles)]
        return cases or _skip_case(f"no tree of {spec.name} is walked by two strategies")

    @classmethod
    def split_cases(cls) -> list[Any]:
        spec = cls.spec()
        if spec.split is None:
            return _skip_case(f"problem {spec.name} defines no split support")
        cases = [p for p in cls.oracle_cases()
                 if p.values[0] is not None and registry(spec)[p.values[0][0]].splittable]
        return cases or _skip_case(f"no strategy of {spec.name} is splittable")

    def pytest_generate_tests(self, metafunc: Any) -> None:
        """Parametrise each test over the problem's registry (pytest calls this per test)."""
        cls = type(self)
        names = metafunc.fixturenames
        if "oracle" in names:
            split = metafunc.function.__name__ == "test_split_equals_unsplit"
            metafunc.parametrize("oracle", cls.split_cases() if split else cls.oracle_cases())
        if "tree_case" in names:
            metafunc.parametrize("tree_case", cls.tree_cases())
        if "tier" in names:
            # the slow tier runs when asked for (-m slow); the marker needs no registration
            pytest_configure(metafunc.config)
            slow = [pytest.mark.slow]
            if "slow" not in (metafunc.config.option.markexpr or ""):
                slow.append(pytest.mark.skip(reason="the slow tier: run with -m slow"))
            metafunc.parametrize("tier", [pytest.param("default", id="default"),
                                          pytest.param("slow", id="slow", marks=slow)])
        if "prefix_budget" in names:
            metafunc.parametrize("prefix_budget", cls.prefix_budgets,
                                 ids=[str(b) for b in cls.prefix_budgets])

    # ------------------------------------------------------------------ helpers

    def solve(self, cols: Mapping[str, Any], max_nodes: int | None,
              seed: int | None = None) -> SearchResult:
        """``spec.solve`` (shared by the tests)."""
        return solve(self.spec(), cols, max_nodes, self.seed if seed is None else seed)

    def oracle_columns(self, strategy: str, engine: str, index: int) -> dict[str, Any]:
        """The oracle's columns for this strategy and engine; skips what its entry excludes.
        The spec's own checks must accept every combination the entry does not exclude."""
        spec = self.spec()
        oracle = spec.oracles[index]
        cols = columns(spec, oracle.params, strategy, engine)
        why = excluded(spec, strategy, cols, oracle.params)
        if why:
            pytest.skip(why)
        spec.check_strategy(cols)
        spec.check(cols)
        return cols

    def complete(self, strategy: str, engine: str, index: int,
                 tier: str = "default") -> tuple[dict[str, Any], SearchResult]:
        """The oracle's columns and its complete search, or a skip when it is larger than the
        tier allows (the default tier's :attr:`budget`; ``slow``: up to :attr:`slow_budget`)."""
        cols = self.oracle_columns(strategy, engine, index)
        cap = self.budget[engine]
        small = self.solve(cols, cap)
        if tier == "default":
            if small.status is Status.NODE_LIMIT:
                pytest.skip(f"more than {cap:,} placements: runs with -m slow")
            return cols, small
        if small.status is not Status.NODE_LIMIT:
            pytest.skip("runs in the default tier")
        big = self.solve(cols, self.slow_budget)
        if big.status is Status.NODE_LIMIT:
            pytest.skip(f"more than {self.slow_budget:,} placements")
        return cols, big

    # ------------------------------------------------------------------ oracles

    def test_oracle(self, oracle, tier):
        strategy, engine, index = oracle
        spec = self.spec()
        known = spec.oracles[index]
        cols, r = self.complete(strategy, engine, index, tier)
        tree = registry(spec)[strategy].tree
        keys = list(known.expected) if known.tree is not None and known.tree == tree \
            else ["solutions"]
        got = {k: getattr(r, k) for k in keys}
        expected = {k: known.expected[k] for k in keys}
        assert got == expected, f"{known.source}: expected {expected}, got {got}"
        if cols.get("mode") == "count":
            assert r.status is Status.EXHAUSTED
        else:
            assert r.status is (Status.SOLVED if known.expected["solutions"]
                                else Status.EXHAUSTED)

    def test_metrics_contract_invariants(self, oracle, tier):
        strategy, engine, index = oracle
        spec = self.spec()
        cols, r = self.complete(strategy, engine, index, tier)
        got = counters(r)   # in every message: the plain asserts of an installed module
        first = cols.get("mode") == "first"
        if r.solution is None:
            assert r.solutions == 0, got
        else:
            spec.verify(cols, r.solution)                  # raises on a wrong solution
            assert r.max_depth == len(r.solution), got     # nothing is deeper than a solution
        if r.solutions == 0:
            # every placement was undone with nothing below it
            assert r.backtracks == r.nodes, f"no solution, so backtracks == nodes: {got}"
            assert r.status is Status.EXHAUSTED, got
        if first and r.solutions:
            assert r.solutions == 1 and r.status is Status.SOLVED, got
            if "max_frontier" in r.extra:
                # breadth-first (it reports its frontier): the frontier placements are still
                # waiting to be extended at the stop, so they are not backtracks either
                assert r.nodes - r.backtracks > len(r.solution), got
            else:
                # depth-first: what is not undone is the path to the solution
                assert r.nodes - r.backtracks == len(r.solution), \
                    f"first mode: nodes - backtracks == the solution's length: {got}"
        # a dead end is a placement undone with nothing below it, so a backtrack
        assert 0 <= r.dead_ends <= r.backtracks <= r.nodes, \
            f"0 <= dead_ends <= backtracks <= nodes: {got}"
        assert 0 <= r.checks and 0 <= r.max_depth <= r.nodes, got
        if not first and r.solution is not None:
            # count mode's solution is the first one found: the one first mode stops at
            first_cols = {**cols, "mode": "first"}
            try:
                spec.check_strategy(first_cols)
                spec.check(first_cols)
            except ValueError:
                return   # unique counting has no first mode
            if "first" in registry(spec)[strategy].modes:
                f = self.solve(first_cols, self.slow_budget)
                assert f.status is Status.SOLVED
                assert f.solution == r.solution

    def test_node_budget_stops_exactly(self, oracle):
        strategy, engine, index = oracle
        spec = self.spec()
        cols, full = self.complete(strategy, engine, index)
        # a search that finishes in exactly max_nodes placements ends normally
        assert counters(self.solve(cols, full.nodes)) == counters(full)
        if full.nodes < 2:
            pytest.skip("a one-placement tree has no smaller budget")
        walks_a_tree = registry(spec)[strategy].tree is not None
        for budget in sorted({1, full.nodes // 2, full.nodes - 1}):
            r = self.solve(cols, budget)
            assert r.status is Status.NODE_LIMIT, budget
            if walks_a_tree:
                assert r.nodes == budget
            else:   # no tree (a construction in one step): stopped before it, nothing made
                assert r.nodes == 0
            assert r.solutions <= full.solutions
        if walks_a_tree and cols.get("mode") == "first" and full.solutions:
            # stopped just before the placement that completes the solution: everything else
            # is as in the full search
            r = self.solve(cols, full.nodes - 1)
            assert (r.backtracks, r.dead_ends, r.checks, r.solutions) == \
                (full.backtracks, full.dead_ends, full.checks, 0)

    # ------------------------------------------------------------------ same tree

    def test_same_tree_same_counters(self, tree_case, prefix_budget):
        tree, index = tree_case
        spec = self.spec()
        oracle = spec.oracles[index]
        results = {}
        for strategy, entry in registry(spec).items():
            if entry.tree != tree:
                continue
            for engine in engines(spec, strategy):
                cols = columns(spec, oracle.params, strategy, engine)
                if excluded(spec, strategy, cols, oracle.params):
                    continue
                results[(strategy, engine)] = counters(self.solve(cols, prefix_budget))
        if len(results) < 2:
            pytest.skip("fewer than two strategies of this tree run this oracle")
        (first_key, expected), *rest = results.items()
        for key, got in rest:
            assert got == expected, f"{key} differs from {first_key}"

    # ------------------------------------------------------------------ split

    def test_split_equals_unsplit(self, oracle):
        strategy, engine, index = oracle
        spec = self.spec()
        assert spec.split is not None
        cols = self.oracle_columns(strategy, engine, index)
        spec.split.check(cols)   # a splittable strategy's trials must be accepted
        whole = self.solve(cols, 20_000)
        budgets = [*self.prefix_budgets] + ([None] if whole.status is not Status.NODE_LIMIT
                                            else [])
        for budget in budgets:
            trial = Trial(spec.name, cols, budget, None, self.seed, 0, split=3)
            unsplit = counters(self.solve(cols, budget, trial.solver_seed))
            params = spec.split.params(cols, trial.solver_seed)
            for depth in self.split_depths:
                got = counters(solve_split(spec.split.splitter, params, depth,
                                           max_nodes=budget))
                assert got == unsplit, (budget, depth)
            # the runner's serial split: a trial with split set, through run_trial
            for split in (3, "auto"):
                t = dataclasses.replace(trial, split=split)
                row = run_trial(t, solve=serial_solver(t))
                assert row["error"] is None
                assert {k: row[k] for k in COUNTERS} == {k: unsplit[k] for k in COUNTERS}, split
                assert (tuple(row["solution"]) if row["solution"] is not None else None) == \
                    unsplit["solution"]

    def test_problem_without_split_support_refuses_split(self, tmp_path, monkeypatch, capsys):
        spec = self.spec()
        if spec.split is not None:
            pytest.skip(f"problem {spec.name} has split support")
        if not spec.oracles:
            pytest.skip(f"{spec.name} has no oracles")
        oracle = spec.oracles[0]
        text = textwrap.dedent(f"""\
            name: no-split
            problem: "{spec.name}"
            fixed: {json.dumps(dict(oracle.params))}
            split: {{depth: 2}}
        """)
        with pytest.raises(ConfigError) as info:
            expand(parse_config(text, "no-split.yaml"))   # refused when the trials are made
        err = info.value
        assert (err.key_path, err.line, err.column) == (("split",), 4, 1)
        assert err.expected == f"no split: problem {spec.name} defines no split support"
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

    # ------------------------------------------------------------------ config round trip

    def test_config_round_trip(self, oracle):
        strategy, engine, index = oracle
        spec = self.spec()
        known = spec.oracles[index]
        cols = self.oracle_columns(strategy, engine, index)
        params = with_walk(spec, known.params, strategy, engine)
        # validated parameters validate again to themselves
        dumped = spec.params.model_validate(params).model_dump()
        assert spec.params.model_validate(dumped).model_dump() == dumped
        # the columns are the spec's Parquet columns, and their values fit the types
        assert list(cols) == spec.columns.names
        table = pa.Table.from_pylist([cols], schema=spec.columns)
        assert table.to_pylist() == [{k: list(v) if isinstance(v, tuple) else v
                                      for k, v in cols.items()}]
        # written as a config: one trial with these columns, the same id on every parse
        budget = 50
        text = (f"name: round-trip\nproblem: {json.dumps(spec.name)}\n"
                f"fixed: {json.dumps(params)}\nbudget: {{nodes: {budget}}}\nseed: {self.seed}\n")
        trials = expand(parse_config(text, "round-trip.yaml"))
        assert len(trials) == 1
        trial = trials[0]
        assert (trial.problem, dict(trial.columns)) == (spec.name, cols)
        assert (trial.budget_nodes, trial.seed, trial.repeat) == (budget, self.seed, 0)
        again = expand(parse_config(text, "elsewhere/round-trip.yaml"))[0]
        assert (again.trial_id, again.solver_seed) == (trial.trial_id, trial.solver_seed)
        assert len(trial.trial_id) == 16
        # ... and runs into a row with the columns and the counters of spec.solve
        row = run_trial(trial)
        assert row["error"] is None, row["error"]
        assert row["trial_id"] == trial.trial_id
        assert {k: row[k] for k in cols} == cols
        r = self.solve(cols, budget, trial.solver_seed)
        assert {k: row[k] for k in COUNTERS} == {k: counters(r)[k] for k in COUNTERS}


def check(problem: ProblemSpec | str, *pytest_args: str, slow: bool = False) -> int:
    """Run the contract suite on ``problem`` with pytest; return pytest's exit status (0: held).

    Args:
        problem: a :class:`~btlab.problems.spec.ProblemSpec` or its name, as
            :attr:`ProblemContract.problem` (a plug-in must be importable by its name).
        pytest_args: more pytest arguments (``-q``, ``-x``, ``-k oracle``...).
        slow: run the ``slow`` tier too (oracles over the default budget).
    """
    name = problem.name if isinstance(problem, ProblemSpec) else problem
    with tempfile.TemporaryDirectory(prefix="btlab-contract-") as folder:
        module = Path(folder) / f"test_contract_{short(name).replace('.', '_')}.py"
        module.write_text(textwrap.dedent(f"""\
            from btlab.testing import ProblemContract


            class TestContract(ProblemContract):
                problem = {name!r}
        """))
        marks = [] if slow else ["-m", "not slow"]
        return int(pytest.main([str(module), "-p", "no:cacheprovider", "--rootdir", folder,
                                *marks, *pytest_args]))
