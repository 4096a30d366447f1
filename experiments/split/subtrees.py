"""One search split into ordered subtree tasks, combined into exactly the sequential counters.

Some single trials are too big for one core (plain backtracking from most
8 x 8 squares makes billions of placements before its first tour; counting
N-Queens for n = 18..20). This module cuts the depth-first search tree at a
*split depth* D and turns the trial into independent *subtree tasks* whose
results combine, in order, into a :class:`~btlab.experiments.core.SearchResult`
equal, counter for counter, to the sequential search's.

Depths count placements: the knight's start square is depth 1, the queen of
row 0 is depth 1 (the empty board is depth 0).

1. :func:`plan_split` walks the part of the tree *above* the cut (placements
   at depth < D) exactly as the sequential ``recursive`` solver does -- same
   ordering function, same counting -- and records an ordered event list in
   depth-first pre-order: ``ENTER`` a top placement, ``TASK`` (a subtree
   rooted at a placement at depth D, given by its path from the root),
   ``EXIT`` a top placement. D = 0 makes the whole search one task (for the
   knight's tour the same as D = 1: the start square is the only depth-1
   placement); a D deeper than the tree puts all the work in the top part and
   makes no task.
2. :func:`run_task` runs one task: what the sequential ``visit`` of that
   placement adds to the counters (:func:`btlab.experiments.knights.solve.search_subtree`,
   :func:`btlab.experiments.queens.solve.search_subtree`, or their compiled twins in
   :mod:`btlab.experiments.compiled` with ``engine: compiled``). Tasks are
   independent; run them anywhere, in any order. A task may be given a node
   budget below the search's (:meth:`SplitPlan.task_budget`: the budget less
   what is known to come before it) without changing the result.
3. :func:`combine` replays the event list in order with the task results
   substituted:

   * ``count`` mode: the sums of the task counters and the top part's; a top
     placement is a backtrack when its subtree (tasks and top leaves) held no
     solution.
   * ``first`` mode: the first task in order with a solution decides; the
     counters are those of the top events before it, every earlier task in
     full, and that task's up to its first solution; top placements on the path
     to it are not backtracks; nothing after it is made. Tasks after it are
     wasted work (see the runner's ``wasted_nodes``).
   * node budget B: the replay keeps the running node count; when a task
     would take it past B, :func:`combine` asks for that task again with the
     remaining budget (:class:`NeedRerun`), and its stopped result ends the
     replay: status ``node_limit`` and exactly the counters of the sequential
     search stopped at B (placements on the current path are not
     backtracks). A budget met in the top part stops there.
   * time budget: not exact. A task that reports ``time_limit`` ends the replay
     with the counters so far and status ``time_limit``.

:func:`solve_split` is the serial reference: plan, run every needed task in
this process, combine (re-running a budget-crossing task), by the one serial loop
:func:`run_serial` over a :class:`TaskResults`, which the runner's serial backend runs too.

Each problem brings a :class:`Splitter` (:mod:`btlab.experiments.split.base`):
how to normalise its parameters, walk the top part and run one subtree.
:data:`SPLITTERS` holds those of ``knights_tour``
(:mod:`btlab.experiments.split.knights`) and ``n_queens``
(:mod:`btlab.experiments.split.queens`); every function here takes a problem name
or a splitter object. Restrictions (:class:`SplitError`): only strategies
whose registry entry is ``splittable`` (the others walk other trees); the
knight's tour ``random`` tie-break draws from one SplitMix64 stream in call
order, which splitting changes, so it is refused (with ``none`` too, where
it shuffles every placement's candidates).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from btlab.experiments.core import SearchResult, Status
from btlab.experiments.registry import Registry
from btlab.experiments.split.base import ENGINES, ENTER, EXIT, NO_CAP, TASK, SplitError, Splitter
from btlab.experiments.split.knights import KNIGHTS
from btlab.experiments.split.queens import QUEENS

__all__ = ["ENGINES", "ENTER", "EXIT", "NOT_REACHED", "OUT_OF_TIME", "SPLITTERS", "TASK",
           "Combined", "NeedRerun", "NeedTask", "Outcome", "SplitError", "SplitPlan", "Splitter",
           "TaskResults", "auto_depth", "combine", "get_splitter", "plan_split", "run_serial",
           "run_subtree", "run_task", "solve_split"]

#: The splitter of each problem, by name.
SPLITTERS: Registry[Splitter] = Registry("problem", {s.name: s for s in (KNIGHTS, QUEENS)})


def get_splitter(problem: str | Splitter) -> Splitter:
    """The :class:`Splitter` of ``problem``: a name in :data:`SPLITTERS`, or a splitter itself.

    Raises:
        SplitError: an unknown name (the message lists the valid ones).
    """
    if isinstance(problem, Splitter):
        return problem
    try:
        return SPLITTERS.get_or_raise(problem)
    except ValueError as e:
        raise SplitError(str(e)) from None


@dataclass(frozen=True)
class SplitPlan:
    """The top part of a split search and its subtree tasks.

    Attributes:
        problem: the problem's name (``knights_tour``, ``n_queens``, or a
            splitter's own).
        params: the search parameters, normalised (see :func:`plan_split`).
        depth: the split depth D (>= 0).
        first: ``first`` mode (else ``count``).
        events: the event list in depth-first pre-order (module docstring).
        tasks: for each subtree task, in order, its placement path from the
            root: knight's tour, square indices of depths 1..D; N-Queens,
            columns of rows 0..D-1 (empty for D = 0: the whole search).
        top_before: for each task, the placements the top part makes before
            the search enters it (a lower bound of the nodes before the
            task: add the nodes of the tasks before it for the exact count).
        splitter: the :class:`Splitter` that made the plan (None: look
            ``problem`` up in :data:`SPLITTERS`).
    """

    problem: str
    params: Mapping[str, Any]
    depth: int
    first: bool
    events: tuple[tuple, ...]
    tasks: tuple[tuple[int, ...], ...]
    top_before: tuple[int, ...] = ()
    splitter: Splitter | None = None

    def task_budget(self, index: int, max_nodes: int | None, done_before: int = 0) -> int | None:
        """The node budget to give task ``index`` without changing the combined result.

        A task starts after ``top_before[index]`` top placements and the nodes
        of every task before it, ``done_before`` of which are known; the
        search's budget ``max_nodes`` less those is all the task can use. A
        task that runs out of it is re-run with the exact budget left when
        :func:`combine` asks (:class:`NeedRerun`), so the cap never changes a
        result; it bounds the work of tasks far beyond the budget.

        Returns:
            The cap (0: the task cannot be reached within the budget), or None
            without a node budget.
        """
        if max_nodes is None:
            return None
        return max(0, max_nodes - self.top_before[index] - done_before)


@dataclass(frozen=True)
class NeedTask:
    """:func:`combine` needs the result of task ``index`` before it can go on."""

    index: int


@dataclass(frozen=True)
class NeedRerun:
    """Task ``index`` would take the search past its node budget: run it again
    with ``max_nodes`` (the budget left when it starts) and combine again."""

    index: int
    max_nodes: int


@dataclass(frozen=True)
class Combined:
    """The combined result.

    Attributes:
        result: equal to the sequential search's (counters, status, solution).
        last_task: index of the last task whose result was used (-1: none).
            In ``first`` mode, or when a budget stopped the search, the tasks
            after it were not needed (their work is wasted).
    """

    result: SearchResult
    last_task: int


Outcome = Combined | NeedTask | NeedRerun


# --------------------------------------------------------------------------- planning


def plan_split(problem: str | Splitter, params: Mapping[str, Any], depth: int,
               max_nodes: int | None = None) -> SplitPlan:
    """Walk the tree above the split depth and list the subtree tasks, in order.

    Args:
        problem: a name in :data:`SPLITTERS` (``knights_tour``, ``n_queens``)
            or a :class:`Splitter`.
        params: the search parameters (see the splitter:
            :class:`~btlab.experiments.split.knights.KnightsSplitter`,
            :class:`~btlab.experiments.split.queens.QueensSplitter`). Missing keys
            take the solvers' defaults.
        depth: the split depth D >= 0 (module docstring).
        max_nodes: the search's node budget, or None. The walk stops after the
            top placement number ``max_nodes + 1`` (a replay under that budget
            stops there), so a deep split of a huge tree stays bounded; the
            plan is then only valid for budgets up to ``max_nodes``.

    Returns:
        A :class:`SplitPlan`. The walk costs what the sequential search
        spends above depth D (for D deeper than the tree, the whole search).

    Raises:
        SplitError: unknown problem, negative depth, the ``random`` tie-break
            (any heuristic), a strategy whose registry entry is not
            ``splittable`` (it walks another tree).
        ValueError: bad parameters (as the solvers raise them).
    """
    if depth < 0:
        raise SplitError(f"split depth must be >= 0, got {depth}")
    splitter = get_splitter(problem)
    p = splitter.normalise(params)
    events, tasks = splitter.plan(p, depth, max_nodes)
    top_before = []
    top = 0
    for ev in events:
        if ev[0] == ENTER:
            top += ev[1]
        elif ev[0] == TASK:
            top_before.append(top)
    return SplitPlan(splitter.name, p, depth, p["mode"] == "first", tuple(events), tuple(tasks),
                     tuple(top_before), splitter)


# --------------------------------------------------------------------------- tasks


def run_subtree(problem: str | Splitter, params: Mapping[str, Any], path: Sequence[int],
                max_nodes: int | None = None, max_seconds: float | None = None) -> SearchResult:
    """Run one subtree task given by its path (what :func:`run_task` does; picklable inputs).

    Args:
        problem, params: as in :attr:`SplitPlan.problem` (or
            :attr:`SplitPlan.splitter`) and :attr:`SplitPlan.params`.
        path: the task's placement path (:attr:`SplitPlan.tasks`).
        max_nodes: node budget of the subtree (0: stop before its root), or None.
        max_seconds: time budget of the subtree, or None.

    ``params["engine"]`` picks the pure-Python reference
    (:func:`btlab.experiments.knights.solve.search_subtree`,
    :func:`btlab.experiments.queens.solve.search_subtree`) or the numba kernels
    (:func:`btlab.experiments.compiled.knights_subtree_compiled`,
    :func:`btlab.experiments.compiled.queens_subtree_compiled`); their counters are equal.

    Returns:
        The subtree's :class:`SearchResult` (see the ``search_subtree`` functions).

    Raises:
        SplitError: an unknown problem.
    """
    splitter = get_splitter(problem)
    if max_nodes == 0:
        return SearchResult(Status.NODE_LIMIT, 0, 0, 0, 0, 0, 0)
    return splitter.run_subtree(params, path, max_nodes, max_seconds)


def run_task(plan: SplitPlan, index: int, max_nodes: int | None = None,
             max_seconds: float | None = None) -> SearchResult:
    """Run subtree task ``index`` of ``plan`` (see :func:`run_subtree`).

    Raises:
        IndexError: no such task.
    """
    return run_subtree(plan.splitter or plan.problem, plan.params, plan.tasks[index],
                       max_nodes, max_seconds)


# --------------------------------------------------------------------------- combining


def _plain(r: SearchResult) -> int:
    """Solutions found in a task's subtree (all of them, also when counting up to symmetry)."""
    return r.extra.get("all_solutions", r.solutions)


def combine(plan: SplitPlan, results: Sequence[SearchResult | None],
            max_nodes: int | None = None) -> Outcome:
    """Replay the plan in order with the task results substituted.

    Args:
        plan: the plan.
        results: one entry per task, in task order: its result, or None when
            not known (yet). A task that ran under a node budget and stopped
            (``node_limit``) is used only if its budget was the one left when
            it starts in the replay (its node count equals that remainder).
        max_nodes: the whole search's node budget, or None.

    Returns:
        :class:`Combined` -- the sequential search's result; or
        :class:`NeedTask` -- the replay reached a task whose result is None;
        or :class:`NeedRerun` -- a task would cross the node budget: run it
        again with the budget left and call again with that result.

    Raises:
        ValueError: ``results`` does not have one entry per task.
    """
    if len(results) != len(plan.tasks):
        raise ValueError(f"expected {len(plan.tasks)} task results, got {len(results)}")
    first = plan.first
    unique = plan.params.get("unique", False)
    cap = max_nodes if max_nodes is not None else NO_CAP
    nodes = backtracks = dead_ends = checks = solutions = canonical = max_depth = 0
    solution: tuple[int, ...] | None = None
    found: list[int] = []       # solutions found so far below each open top frame
    stop_stack: list[int] = []  # stop checks of each open top frame
    open_stop = 0               # their sum
    last_task = -1

    def finish(status: Status, extra_checks: int = 0) -> Combined:
        reported = canonical if unique else solutions
        extra = {"all_solutions": solutions} if unique else {}
        return Combined(SearchResult(status, nodes, backtracks, dead_ends,
                                     checks + extra_checks, reported, max_depth, solution,
                                     extra), last_task)

    for ev in plan.events:
        kind = ev[0]
        if kind == ENTER:
            _, node, depth, stop, entry_checks, entry_dead, sol, canon = ev
            if node:
                if nodes >= cap:
                    return finish(Status.NODE_LIMIT, open_stop + stop)
                nodes += 1
                max_depth = max(max_depth, depth)
            checks += entry_checks
            dead_ends += entry_dead
            here = 0
            if sol is not None:
                solutions += 1
                canonical += canon
                if solution is None:
                    solution = sol
                if first:
                    return finish(Status.SOLVED, open_stop + stop)
                here = 1
            found.append(here)
            stop_stack.append(stop)
            open_stop += stop
        elif kind == EXIT:
            _, node, exit_checks, exit_dead = ev
            below = found.pop()
            open_stop -= stop_stack.pop()
            checks += exit_checks
            dead_ends += exit_dead
            if node and not below:
                backtracks += 1
            if found:
                found[-1] += below
        else:
            _, i, stop = ev
            left = cap - nodes
            r = results[i]
            if left == 0:
                r = SearchResult(Status.NODE_LIMIT, 0, 0, 0, 0, 0, 0)
            elif r is None:
                return NeedTask(i)
            elif r.nodes > left or (r.status is Status.NODE_LIMIT and r.nodes != left):
                return NeedRerun(i, left)
            last_task = i
            nodes += r.nodes
            backtracks += r.backtracks
            dead_ends += r.dead_ends
            checks += r.checks
            solutions += _plain(r)
            canonical += r.solutions if unique else 0
            max_depth = max(max_depth, r.max_depth)
            if solution is None and r.solution is not None:
                solution = r.solution
            if r.status in (Status.NODE_LIMIT, Status.TIME_LIMIT, Status.SOLVED):
                return finish(r.status, open_stop + stop)
            if found:
                found[-1] += _plain(r)
    return finish(Status.EXHAUSTED)


#: The result of a task the node budget cannot reach, and of one the time budget left unrun.
NOT_REACHED = SearchResult(Status.NODE_LIMIT, 0, 0, 0, 0, 0, 0)
OUT_OF_TIME = SearchResult(Status.TIME_LIMIT, 0, 0, 0, 0, 0, 0)


class TaskResults:
    """The task results of one split search so far, filled in as the tasks finish.

    The one serial loop (:func:`run_serial`, behind :func:`solve_split` and the runner's
    serial backend) and the runner's Ray scheduler read and fill it through these
    methods; the runner's ``SplitState`` (:mod:`btlab.execution.split_state`) extends it
    with a checkpoint, progress and the work wasted.

    Attributes:
        plan, max_nodes: the plan and the whole search's node budget (None: none).
        n: the number of tasks.
        results: one entry per task: its result, or None while unknown.
        frontier: the first task without a result.
        done_before: the nodes of the tasks before the frontier.
        done: the tasks with a result.
    """

    def __init__(self, plan: SplitPlan, max_nodes: int | None):
        self.plan = plan
        self.max_nodes = max_nodes
        self.n = len(plan.tasks)
        self.results: list[SearchResult | None] = [None] * self.n
        self.frontier = 0
        self.done_before = 0
        self.done = 0

    def _advance(self) -> None:
        results = self.results
        while self.frontier < self.n and results[self.frontier] is not None:
            self.done_before += results[self.frontier].nodes  # type: ignore[union-attr]
            self.frontier += 1

    def budget(self, index: int) -> int | None:
        """The node cap of task ``index`` now (:meth:`SplitPlan.task_budget`; 0: not
        reachable within the budget)."""
        return self.plan.task_budget(index, self.max_nodes,
                                     self.done_before if index >= self.frontier else 0)

    def run(self, index: int, max_nodes: int | None, seconds: float | None) -> SearchResult:
        """Run task ``index`` here (:func:`run_task`)."""
        return run_task(self.plan, index, max_nodes, seconds)

    def skip_unreachable(self, index: int) -> bool:
        """Mark task ``index`` as not needed when the node budget runs out before it."""
        if self.max_nodes is not None and self.budget(index) == 0:
            self.results[index] = NOT_REACHED
            self.done += 1
            self._advance()
            return True
        return False

    def arrive(self, index: int, result: SearchResult) -> None:
        """Task ``index`` finished with ``result``."""
        if self.results[index] is None:
            self.done += 1
        self.results[index] = result
        self._advance()

    def rerun(self, out: NeedRerun) -> None:
        """Forget task ``out.index``'s result before running it again with the budget left."""
        self.results[out.index] = None
        self.done -= 1
        if out.index < self.frontier:
            self.frontier = out.index
            self.done_before = sum(r.nodes for r in self.results[:out.index]
                                   if r is not None)

    def time_out(self, out: Any = None) -> None:
        """The time budget is spent: every missing result (and the result of a task
        awaiting its re-run, ``out``) counts as stopped with no work."""
        for i in range(self.n):
            if self.results[i] is None:
                self.results[i] = OUT_OF_TIME
        if isinstance(out, NeedRerun):
            self.results[out.index] = OUT_OF_TIME
        self._advance()

    def finish(self, out: Combined) -> SearchResult:
        """The search's result, once :func:`combine` has it."""
        return out.result


def run_serial(tasks: TaskResults, deadline: float | None = None) -> SearchResult:
    """Run the tasks the replay needs, in order, in this process, and combine them.

    Tasks run in growing batches from the one :func:`combine` needs, so that the
    replay (linear in the events) runs O(log tasks) times, not once per task; each
    under :meth:`TaskResults.budget` (the budget it can use at most), and a task
    crossing the node budget is run again with the budget left. The serial reference
    (:func:`solve_split`) and the runner's serial backend both run this loop.

    Args:
        tasks: the plan's results so far (a resumed run brings some).
        deadline: ``time.perf_counter()`` at which the time budget is spent, or None.

    Returns:
        :meth:`TaskResults.finish` of the combined result.
    """
    plan = tasks.plan
    calls = 0
    while True:
        out = combine(plan, tasks.results, tasks.max_nodes)
        if isinstance(out, Combined):
            return tasks.finish(out)
        seconds = None if deadline is None else deadline - time.perf_counter()
        if seconds is not None and seconds <= 0:
            tasks.time_out(out)
            continue
        if isinstance(out, NeedRerun):
            tasks.rerun(out)
            tasks.arrive(out.index, tasks.run(out.index, out.max_nodes, seconds))
            continue
        batch = 1 << min(calls, 30)
        calls += 1
        # the replay has used every task before the one it needs: all are known
        for i in range(out.index, min(out.index + batch, tasks.n)):
            if tasks.results[i] is None and not tasks.skip_unreachable(i):
                tasks.arrive(i, tasks.run(i, tasks.budget(i), seconds))


def solve_split(problem: str | Splitter, params: Mapping[str, Any], depth: int, *,
                max_nodes: int | None = None, max_seconds: float | None = None) -> SearchResult:
    """The serial reference: plan, run the needed tasks in order here, combine
    (:func:`run_serial`).

    The time budget is one deadline for the whole call, planning included.

    Args:
        problem, params, depth: as :func:`plan_split`.
        max_nodes, max_seconds: the whole search's budgets, or None.

    Returns:
        The sequential search's :class:`SearchResult` (exact but for a time limit).

    Raises:
        SplitError, ValueError: as :func:`plan_split`.
    """
    deadline = None if max_seconds is None else time.perf_counter() + max_seconds
    plan = plan_split(problem, params, depth, max_nodes)
    return run_serial(TaskResults(plan, max_nodes), deadline)


def auto_depth(problem: str | Splitter, params: Mapping[str, Any], min_tasks: int,
               max_depth: int = 12) -> int:
    """The smallest split depth with at least ``min_tasks`` subtree tasks (at most ``max_depth``).

    Subtrees are not re-split: a few long subtrees still bound the speed-up,
    so ask for many more tasks than workers (the runner asks for 16 per worker).

    Raises:
        SplitError, ValueError: as :func:`plan_split`.
    """
    problem = get_splitter(problem)
    best = 1
    best_tasks = -1
    for d in range(1, max_depth + 1):
        plan = plan_split(problem, params, d)
        if len(plan.tasks) > best_tasks:
            best, best_tasks = d, len(plan.tasks)
        if len(plan.tasks) >= min_tasks:
            return d
        if not plan.tasks:
            break
    return best
