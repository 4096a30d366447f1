"""What a problem is to the runner: one :class:`ProblemSpec` owns everything about it.

A spec holds a problem's parameter model (pydantic: types, allowed values,
defaults), how parameters become Parquet columns, its strategy registry, the
solve call, the checker, how it splits (optional), and its headline tables,
report section and comparisons (optional: generic ones are used when a spec
defines none). The runner -- ``run``, ``validate``, ``show``, ``report``,
``compare``, split and the compiled dispatch -- reads specs and nothing else.

Built-in specs live in :mod:`btlab.problems`; a user's own problem is a
``ProblemSpec`` in any importable module, named in a config as
``problem: "my_pkg.module:PROBLEM"`` (``docs/extending.md`` walks through one).
The metrics every solve call must report are defined in ``docs/metrics.md``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Protocol, Sequence

import pandas as pd
import pyarrow as pa
from pydantic import BaseModel, ConfigDict
from rich.console import Console

from btlab.experiments.core import SearchResult
from btlab.experiments.estimators import KNUTH, Estimator
from btlab.experiments.registry import Registry, Strategy
from btlab.problems import plugins


class ParamError(ValueError):
    """A trial parameter that is well typed but cannot be run.

    Attributes:
        param: the parameter at fault (a config key).
        expected, found, fix: as in :class:`btlab.errors.ConfigError`.
    """

    def __init__(self, param: str, expected: str, found: str, fix: str = ""):
        super().__init__(f"{param}: expected {expected}, found {found}")
        self.param, self.expected, self.found, self.fix = param, expected, found, fix


class Params(BaseModel):
    """Base of every problem's parameter model: unknown keys are refused, values frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True)


#: ``solve(columns, max_nodes, max_seconds, seed) -> SearchResult``.
SolveFn = Callable[[Mapping[str, Any], "int | None", "float | None", int], SearchResult]
#: ``estimate(columns, probes, max_nodes, max_seconds, seed) -> SearchResult``.
EstimateFn = Callable[[Mapping[str, Any], int, "int | None", "float | None", int], SearchResult]


def trial_estimator(columns: Mapping[str, Any]) -> Estimator:
    """The estimator of a ``mode: estimate`` trial, from the label its problem's functions
    find under ``"estimator"`` in its columns (:attr:`ProblemSpec.estimators`): ``knuth``
    when there is none.

    Raises:
        btlab.experiments.estimators.EstimatorError: a label no estimator has.
    """
    return _estimator(columns.get("estimator") or KNUTH)


@functools.lru_cache(maxsize=256)
def _estimator(label: str) -> Estimator:
    return Estimator.from_label(label)


@dataclass(frozen=True)
class ComparedColumn:
    """A column whose values the report compares when it varies: every pair of its values, on
    ``metrics``, ``baseline`` the first side of every pair it is in.

    A column of the problem's :attr:`ProblemSpec.pair_on` (or ``strategy`` where
    strategies walk different trees) changes the search: its values are
    compared on the counters, trials paired on the search (see
    :func:`btlab.analysis.search_keys.search_columns`). Any other column (``strategy``
    of one tree, ``engine``) changes how the same search is run: its values
    are compared on timings, trials paired on every parameter. ``labels``
    names values in sentences (``{"none": "plain move order"}``).
    """

    column: str
    baseline: str
    metrics: tuple[str, ...]
    labels: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Oracle:
    """A known result the contract suite checks for every strategy that can run it.

    Attributes:
        params: trial parameters (as in a config's ``fixed``), without ``strategy``
            and ``engine``: the suite runs every registered pair.
        expected: counter -> exact value (``solutions``, ``nodes``, ``checks``, ...).
            Counters of strategies that walk another tree (the strategy's
            ``tree`` differs from ``tree``) are checked for ``solutions`` only.
        source: where the value comes from (OEIS number, paper, hand count).
        tree: the :attr:`btlab.experiments.registry.Strategy.tree` the full
            ``expected`` counters belong to.
    """

    params: Mapping[str, Any]
    expected: Mapping[str, int]
    source: str
    tree: str | None = None


class SplitSupport(Protocol):
    """How a problem's trials split into subtree tasks (:mod:`btlab.experiments.split.subtrees`).

    ``splitter``: the problem's name in :data:`btlab.experiments.split.subtrees.SPLITTERS`, or
    a splitter object of the user's own. ``params(columns, seed)`` gives the
    splitter's parameters of a trial; ``check(columns)`` raises
    :class:`ParamError` for a trial that cannot be split exactly;
    ``warm_up(params)`` loads what a subtree task needs (compiled kernels)
    before its clock starts.
    """

    @property
    def splitter(self) -> Any: ...

    def params(self, columns: Mapping[str, Any], seed: int) -> dict[str, Any]: ...

    def check(self, columns: Mapping[str, Any]) -> None: ...

    def warm_up(self, params: Mapping[str, Any]) -> None: ...


def _no_check(columns: Mapping[str, Any]) -> None:
    return None


@dataclass(frozen=True)
class ProblemSpec:
    """How the runner drives one problem.

    Attributes:
        name: the config's ``problem`` value (a plug-in's is its ``module:ATTR``).
        title: the problem's name in tables (``Knight's tour``).
        params: the pydantic model of a trial's parameters (subclass :class:`Params`).
        columns: parameter columns written to Parquet, as a pyarrow schema; the
            columns are a trial's canonical parameters.
        to_columns: validated parameters (``params(...).model_dump()``) ->
            column values (the keys of ``columns``).
        solve: ``(columns, max_nodes, max_seconds, seed) -> SearchResult``;
            counters as ``docs/metrics.md`` defines them.
        verify: ``(columns, solution) -> None``; raises ``ValueError`` on a
            wrong solution (every reported solution is verified).
        strategies: the problem's strategy registry, or None when it has no
            ``strategy`` parameter. Caps (``max_size`` against
            :attr:`size`), engines and split support are read from it.
        size: ``columns -> int``, the problem size the strategies' ``max_size`` caps.
        size_param, size_unit: the config key the size comes from (``board``,
            ``n``) and its unit (``squares``, or ``""``), for messages.
        check: ``columns -> None``; raises :class:`ParamError` for parameters
            that are well typed but cannot run together.
        extra_columns: strategy-specific nullable int64 counters it may report.
        expand_all: for each parameter that accepts ``all`` in a matrix, a
            function ``parameters -> the values all stands for``: a sequence, a
            list or a lazy one (the knight's-tour squares: ``len`` and ``index``
            are arithmetic, so a sweep is counted without listing them).
        prepare: ``columns -> extra column values``, called before a trial's
            clock starts (compiling kernels; ``compile_ns``), or None.
        kernels: ``columns -> the compiled kernels the trial runs`` (names
            :func:`btlab.experiments.compiled.warm_up` takes), or None: the driver
            compiles or loads a sweep's kernels before its first trial.
        split: how its trials split (:class:`SplitSupport`), or None: a config
            with ``split`` is refused.
        headline: ``(rows, console) -> None`` printing the headline tables of
            ``btlab run`` / ``show``, or its ``"module:function"`` name (loaded
            when first used, so that the spec does not import the plotting
            and table code); None: the generic tables.
        report: ``rows -> HTML`` of the report's problem section (plots), or
            its ``"module:function"`` name; None: the generic plots.
        solution_figure: ``results row -> matplotlib Figure`` drawing the row's
            ``solution``, or ``-> (Figure, a sentence for its caption)`` (the
            report draws each group's hardest finished case with it,
            :mod:`btlab.views.report.cases`), or its ``"module:function"`` name;
            None: no drawing.
        comparisons: what the report compares when a column varies.
        pair_on: the parameter columns that define the search: trials that
            agree on them walk the same tree, so their counters agree up to a
            budget, whatever the strategy of that tree, engine, budget, repeat
            or results folder (:func:`btlab.analysis.search_keys.search_columns`). A
            ``strategy`` listed here pairs by its registry entry's ``tree``
            (:attr:`btlab.experiments.registry.Strategy.tree`), not by its name.
            None: every parameter column but ``strategy`` and ``engine``.
        seeded: ``columns -> bool``: the trial's search draws from its seed
            (knight's tour: ``tie_break: random``), so it pairs only with
            trials of the same ``seed``; None: no search of the problem draws.
        position_columns: columns that place a trial inside one problem
            instance (knight's start square): never a group of the tables.
        size_columns: columns that give the problem's size (board, n): groups
            of the tables only when they vary.
        oracles: known values the contract suite checks.
        plugins: ``columns -> {param: "module:attr"}``, the plug-ins a trial
            names (their source hash goes into the trial id), or None.
        source: where the problem is described.
        estimate: ``(columns, probes, max_nodes, max_seconds, seed) -> SearchResult``,
            the tree-size estimator of ``mode: estimate`` (``probes`` random
            probes; the result's ``estimate`` and ``estimate_se`` are the
            estimated ``count``-mode placements and its standard error, its
            counters the probes' own cost), or None: ``mode: estimate`` is
            refused for the problem.
        estimate_trees: the registry ``tree`` values whose ``count``-mode
            placements ``estimate`` estimates; ``mode: estimate`` is refused for
            a strategy of another tree (N-Queens ``brute_force`` walks n^n
            placements, not the row-by-row tree). None: every strategy that
            runs ``mode: count``.
        estimators: the estimator methods ``estimate`` runs
            (:data:`btlab.experiments.estimators.METHODS` names: ``knuth``,
            ``importance``, ``perm``); a trial whose ``estimator`` names another
            method is refused at validation. ``estimate``, the problem's ``check``,
            ``kernels`` and ``prepare`` see a ``mode: estimate`` trial's estimator as
            its label (:meth:`btlab.experiments.estimators.Estimator.label`) under
            ``"estimator"`` in the columns they get (absent in the other modes).
    """

    name: str
    title: str
    params: type[Params]
    columns: pa.Schema
    to_columns: Callable[[Mapping[str, Any]], dict[str, Any]]
    solve: SolveFn
    verify: Callable[[Mapping[str, Any], tuple[int, ...]], None]
    strategies: Registry[Strategy] | None = None
    size: Callable[[Mapping[str, Any]], int] | None = None
    size_param: str = ""
    size_unit: str = ""
    check: Callable[[Mapping[str, Any]], None] = _no_check
    extra_columns: tuple[str, ...] = ()
    expand_all: Mapping[str, Callable[[Mapping[str, Any]], Sequence[Any]]] = field(
        default_factory=dict)
    prepare: Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = None
    kernels: Callable[[Mapping[str, Any]], tuple[str, ...]] | None = None
    split: SplitSupport | None = None
    headline: str | Callable[[pd.DataFrame, Console], None] | None = None
    report: str | Callable[[pd.DataFrame], str] | None = None
    solution_figure: str | Callable[[Any], Any] | None = None
    comparisons: tuple[ComparedColumn, ...] = ()
    pair_on: tuple[str, ...] | None = None
    seeded: Callable[[Mapping[str, Any]], bool] | None = None
    position_columns: tuple[str, ...] = ()
    size_columns: tuple[str, ...] = ()
    oracles: tuple[Oracle, ...] = ()
    plugins: Callable[[Mapping[str, Any]], Mapping[str, str]] | None = None
    source: str = ""
    estimate: EstimateFn | None = None
    estimate_trees: tuple[str, ...] | None = None
    estimators: tuple[str, ...] = (KNUTH,)

    def hook(self, name: str) -> Callable[..., Any] | None:
        """The ``headline``, ``report`` or ``solution_figure`` function, loaded if given by
        name; None if unset.

        Raises:
            btlab.problems.plugins.PluginError: a name that does not import.
        """
        value = getattr(self, name)
        return plugins.load(value) if isinstance(value, str) else value

    def check_strategy(self, columns: Mapping[str, Any]) -> None:
        """Refuse a strategy / engine / size / option combination its registry entry excludes.

        Raises:
            ParamError: an engine the strategy has no kernel for, a problem
                larger than its cap, a mode it does not run, or an option
                (e.g. ``method``) it does not take.
        """
        if self.strategies is None or "strategy" not in columns:
            return
        name = columns["strategy"]
        entry = self.strategies[name]
        engine = columns.get("engine", "python")
        if engine not in entry.engines:
            able = [s for s, e in self.strategies.items() if engine in e.engines]
            raise ParamError(
                "strategy", f"a strategy that engine {engine!r} runs: {', '.join(able)}",
                f"strategy: {name}",
                f"set strategy: {able[0]}, or engine: python" if able else "use engine: python")
        if entry.max_size is not None and self.size is not None:
            size = self.size(columns)
            if size > entry.max_size:
                bigger = [s for s, e in self.strategies.items()
                          if e.max_size is None or e.max_size >= size]
                unit = f" {self.size_unit}" if self.size_unit else ""
                what = self.size_param or "size"
                raise ParamError(
                    self.size_param or "strategy",
                    f"at most {entry.max_size:,}{unit} for strategy {name!r}",
                    f"{what} = {size:,}{unit}",
                    f"use a smaller {what}" + (f", or strategy: {bigger[0]}" if bigger else ""))
        mode = columns.get("mode")
        if mode == "estimate":
            # the problem's estimator estimates the count-mode tree of the strategies it
            # names: another strategy's estimate would be of a tree it does not walk
            able = [s for s, e in self.strategies.items() if "count" in e.modes
                    and (self.estimate_trees is None or e.tree in self.estimate_trees)]
            if name not in able:
                raise ParamError("strategy", "mode: estimate with a strategy whose count-mode "
                                 f"tree the estimator estimates: {', '.join(able)}",
                                 f"strategy: {name} with mode: estimate ("
                                 + ("it has no count mode)" if "count" not in entry.modes
                                    else f"it walks another tree: {entry.summary})"),
                                 f"set strategy: {able[0]}" if able else "set mode: first")
            return
        if mode is not None and mode not in entry.modes:
            raise ParamError("mode", f"mode {' or '.join(entry.modes)} with strategy {name!r}",
                             f"mode: {mode}", f"set mode: {entry.modes[0]}")
