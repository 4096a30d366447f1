"""Split trials: one search run as many ordered subtree tasks, combined into one row.

A config with ``split: {depth: D}`` (or ``split: auto``) runs every trial as a
split search (:mod:`experiments.split`): the driver walks the tree above the
split depth, the subtrees below it run as Ray tasks, and the driver combines
their results in order into exactly the counters, status and solution of the
unsplit search. The row has the same columns as an unsplit trial's (and the
same ``trial_id``: the split does not enter it), plus ``split_depth``,
``split_tasks`` and ``wasted_nodes`` (placements made in tasks whose results
were not needed: tasks after the deciding one in ``first`` mode or after a
budget stop, and the first run of a task re-run with the budget left; tasks
cancelled while running are not counted).

``wall_ns`` is the wall time of the whole split trial (plan, tasks, combine);
``cpu_ns`` is the driver's CPU time only.

``split: auto`` takes the smallest depth with at least
:data:`TASKS_PER_WORKER` tasks per worker (depth at most
:data:`AUTO_MAX_DEPTH`). Long subtrees are not split again: a trial whose
work sits in a few subtrees gets little speed-up; give a deeper depth.

Progress is not saved inside a trial: a driver killed during a split trial
runs the whole trial again on resume (finished trials are skipped as usual).
"""

from __future__ import annotations

import time
from typing import Any, Callable, Mapping

from experiments.core import SearchResult, Status
from experiments.split import (Combined, NeedRerun, SplitError, auto_depth, combine,
                               plan_split, run_subtree)

from .config import Trial
from .problems import ParamError, parse_move_order

#: ``split: auto`` asks for at least this many subtree tasks per worker.
TASKS_PER_WORKER = 16
#: The deepest split ``auto`` considers.
AUTO_MAX_DEPTH = 12
#: Tasks in flight per worker.
WINDOW_PER_WORKER = 4


def split_params(problem: str, columns: Mapping[str, Any], seed: int = 0) -> dict[str, Any]:
    """The :func:`experiments.split.plan_split` parameters of a trial's columns."""
    if problem == "knights_tour":
        return {"rows": columns["rows"], "cols": columns["cols"],
                "start": (columns["start_row"], columns["start_col"]),
                "heuristic": columns["heuristic"], "tie_break": columns["tie_break"],
                "move_order": parse_move_order(columns["move_order"]),
                "closed": columns["closed"], "mode": columns["mode"],
                "strategy": columns["strategy"], "seed": seed}
    return {"n": columns["n"], "mode": columns["mode"], "unique": columns["unique"],
            "strategy": columns["strategy"]}


def check_split(problem: str, columns: Mapping[str, Any]) -> None:
    """Refuse a trial that cannot be split exactly.

    Raises:
        ParamError: the ``random`` tie-break with a heuristic, or an N-Queens
            strategy that walks another tree than ``recursive``.
    """
    if problem == "knights_tour":
        if columns["heuristic"] != "none" and columns["tie_break"] == "random":
            raise ParamError("split", "no split with tie_break: random (its stream of draws "
                             "follows the call order, which a split changes)",
                             "tie_break: random", "drop split, or use another tie_break")
    elif columns["strategy"] not in ("recursive", "iterative", "amb", "bitmask"):
        raise ParamError("split", "strategy recursive, iterative, amb or bitmask with split",
                         f"strategy: {columns['strategy']}", "drop split for this strategy")


def resolve_depth(trial: Trial, params: Mapping[str, Any], workers: int) -> int:
    """The split depth of ``trial``: its own, or ``auto``'s for ``workers`` workers."""
    if trial.split == "auto":
        return auto_depth(trial.problem, params, TASKS_PER_WORKER * max(1, workers),
                          AUTO_MAX_DEPTH)
    return int(trial.split)  # type: ignore[arg-type]


def _with_extra(result: SearchResult, **extra: int) -> SearchResult:
    return SearchResult(result.status, result.nodes, result.backtracks, result.dead_ends,
                        result.checks, result.solutions, result.max_depth, result.solution,
                        {**result.extra, **extra})


def serial_solver(trial: Trial) -> Callable[..., SearchResult]:
    """A solve call for :func:`runner.execute.run_trial` running the split in this process."""
    def solve(columns, max_nodes, max_seconds, seed) -> SearchResult:
        params = split_params(trial.problem, columns, seed)
        depth = resolve_depth(trial, params, 1)
        plan = plan_split(trial.problem, params, depth, max_nodes)
        deadline = None if max_seconds is None else time.perf_counter() + max_seconds
        results: list[SearchResult | None] = [None] * len(plan.tasks)
        wasted = 0
        calls = 0
        while True:
            out = combine(plan, results, max_nodes)
            if isinstance(out, Combined):
                wasted += sum(r.nodes for r in results[out.last_task + 1:] if r is not None)
                return _with_extra(out.result, split_depth=depth, split_tasks=len(plan.tasks),
                                   wasted_nodes=wasted)
            nodes = out.max_nodes if isinstance(out, NeedRerun) else max_nodes
            if isinstance(out, NeedRerun):
                wasted += results[out.index].nodes  # type: ignore[union-attr]
            seconds = None if deadline is None else deadline - time.perf_counter()
            if seconds is not None and seconds <= 0:
                results[out.index] = SearchResult(Status.TIME_LIMIT, 0, 0, 0, 0, 0, 0)
                continue
            if isinstance(out, NeedRerun):
                results[out.index] = run_subtree(plan.problem, plan.params,
                                                 plan.tasks[out.index], nodes, seconds)
                continue
            batch = 1 << min(calls, 30)  # a growing batch: O(log tasks) replays
            calls += 1
            for i in range(out.index, min(out.index + batch, len(results))):
                if results[i] is None:
                    results[i] = run_subtree(plan.problem, plan.params, plan.tasks[i],
                                             nodes, seconds)
    return solve


def ray_solver(trial: Trial, ray: Any, remote: Any, workers: int) -> Callable[..., SearchResult]:
    """A solve call running the split's subtree tasks as Ray tasks.

    Tasks are submitted in order, at most ``WINDOW_PER_WORKER * workers`` in
    flight, collected with ``ray.wait``; the driver combines after each
    arrival. As soon as the combination is complete (in ``first`` mode: the
    deciding task and every earlier one are done) the tasks still running are
    cancelled. A task that crosses the node budget is run again with the
    budget left. The time budget is one deadline for the trial: when it
    passes, unfinished tasks are cancelled and counted as stopped with no
    work (status ``time_limit``, counters not exact).

    Args:
        trial: the trial (``trial.split`` set).
        ray: the ``ray`` module, initialised.
        remote: ``ray.remote(run_subtree)`` (options set by the caller).
        workers: the workers of the cluster (for the window and ``auto``).
    """
    def solve(columns, max_nodes, max_seconds, seed) -> SearchResult:
        params = split_params(trial.problem, columns, seed)
        depth = resolve_depth(trial, params, workers)
        plan = plan_split(trial.problem, params, depth, max_nodes)
        n_tasks = len(plan.tasks)
        deadline = None if max_seconds is None else time.perf_counter() + max_seconds
        results: list[SearchResult | None] = [None] * n_tasks
        pending: dict[Any, int] = {}
        rerunning: set[int] = set()
        window = WINDOW_PER_WORKER * max(1, workers)
        next_task = 0
        wasted = 0
        frontier = combined_at = 0  # first task without a result; its value at the last replay
        urgent = True                # an arrival that may decide (a solution, a budget stop)
        out = None
        try:
            while True:
                while frontier < n_tasks and results[frontier] is not None:
                    frontier += 1
                # The replay is linear in the events: run it when it can decide,
                # or when the frontier has grown by half, so O(log tasks) times.
                if (out is None or urgent or not pending or frontier == n_tasks
                        or frontier - combined_at >= max(1, combined_at // 2)):
                    out = combine(plan, results, max_nodes)
                    combined_at, urgent = frontier, False
                if isinstance(out, Combined):
                    wasted += sum(r.nodes for r in results[out.last_task + 1:] if r is not None)
                    return _with_extra(out.result, split_depth=depth, split_tasks=n_tasks,
                                       wasted_nodes=wasted)
                seconds = None if deadline is None else deadline - time.perf_counter()
                if seconds is not None and seconds <= 0:
                    for i in range(n_tasks):
                        if results[i] is None:
                            results[i] = SearchResult(Status.TIME_LIMIT, 0, 0, 0, 0, 0, 0)
                    if isinstance(out, NeedRerun):
                        results[out.index] = SearchResult(Status.TIME_LIMIT, 0, 0, 0, 0, 0, 0)
                    continue
                if isinstance(out, NeedRerun) and out.index not in rerunning:
                    # The budget ends inside this task: nothing after it is needed.
                    for ref, i in list(pending.items()):
                        if i > out.index:
                            ray.cancel(ref, force=False)
                            del pending[ref]
                    next_task = n_tasks
                    rerunning.add(out.index)
                    wasted += results[out.index].nodes  # type: ignore[union-attr]
                    results[out.index] = None
                    pending[remote.remote(plan.problem, plan.params, plan.tasks[out.index],
                                          out.max_nodes, seconds)] = out.index
                while next_task < n_tasks and len(pending) < window:
                    pending[remote.remote(plan.problem, plan.params, plan.tasks[next_task],
                                          max_nodes, seconds)] = next_task
                    next_task += 1
                ready, _ = ray.wait(list(pending), num_returns=1, timeout=seconds)
                for ref in ready:
                    i = pending.pop(ref)
                    results[i] = r = ray.get(ref)
                    urgent |= r.solutions > 0 or r.status is not Status.EXHAUSTED
        finally:
            for ref in pending:
                ray.cancel(ref, force=False)
    return solve


def run_split_trials(trials, ray: Any, workers: int, node_id: str | None = None):
    """Run split trials one after the other on Ray; yield one row each."""
    from .execute import run_trial

    remote = ray.remote(num_cpus=1, max_retries=3)(run_subtree)
    for trial in trials:
        yield run_trial(trial, node_id, solve=ray_solver(trial, ray, remote, workers))


__all__ = ["SplitError", "check_split", "ray_solver", "resolve_depth", "run_split_trials",
           "serial_solver", "split_params"]
