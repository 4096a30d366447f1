"""A split trial in progress: its plan, subtree results, budgets, waste and checkpoint.

:class:`SplitState` is shared by the serial reference (:func:`serial_solver`,
the ``serial`` backend) and the Ray scheduler (:mod:`btlab.execution.split_run`).
What a problem's trials split into comes from its spec
(:attr:`btlab.problems.spec.ProblemSpec.split`); a problem without split support is
refused (:func:`support`).
"""

from __future__ import annotations

import time
from typing import Any, Callable, Mapping, Optional

from btlab.execution.execute import subtree_hook
from btlab.experiments.core import SearchResult
from btlab.experiments.split.subtrees import (
    NOT_REACHED,
    OUT_OF_TIME,
    Combined,
    NeedRerun,
    SplitError,
    TaskResults,
    auto_depth,
    plan_split,
    run_serial,
    run_subtree,
)
from btlab.problems.registry import get_problem
from btlab.problems.spec import SplitSupport
from btlab.store.checkpoints import Checkpoints
from btlab.sweep.trial import Trial

#: ``split: auto`` asks for at least this many subtree tasks per worker.
TASKS_PER_WORKER = 16
#: The deepest split ``auto`` considers.
AUTO_MAX_DEPTH = 12

#: ``progress(done, total, placements, seconds)``: subtree tasks finished (or
#: known not to be needed) out of ``total`` planned, and the placements they
#: made in ``seconds`` of this run (placements per second over the cluster);
#: summed over the split trials started so far (several run side by side).
ProgressFn = Callable[[int, int, int, float], None]


def support(problem: str) -> SplitSupport:
    """The split support of a problem's spec.

    Raises:
        SplitError: the problem defines none.
    """
    spec = get_problem(problem)
    if spec.split is None:
        raise SplitError(f"problem {problem} defines no split support")
    return spec.split


def split_params(problem: str, columns: Mapping[str, Any], seed: int = 0) -> dict[str, Any]:
    """The :func:`btlab.experiments.split.subtrees.plan_split` parameters of a trial's columns."""
    return support(problem).params(columns, seed)


def resolve_depth(trial: Trial, params: Mapping[str, Any], workers: int) -> int:
    """The split depth of ``trial``: its own, or ``auto``'s for ``workers`` workers."""
    if trial.split == "auto":
        return auto_depth(support(trial.problem).splitter, params,
                          TASKS_PER_WORKER * max(1, workers), AUTO_MAX_DEPTH)
    return int(trial.split)  # type: ignore[arg-type]


def _with_extra(result: SearchResult, **extra: int) -> SearchResult:
    return SearchResult(result.status, result.nodes, result.backtracks, result.dead_ends,
                        result.checks, result.solutions, result.max_depth, result.solution,
                        {**result.extra, **extra})


class SplitState(TaskResults):
    """One split trial in progress: the plan, the results so far (a
    :class:`~btlab.experiments.split.subtrees.TaskResults`), and what the runner adds:
    the checkpoint, the progress, the work wasted."""

    def __init__(self, trial: Trial, columns, max_nodes, seed, workers: int,
                 checkpoints: Optional[Checkpoints], progress: Optional[ProgressFn]):
        params = split_params(trial.problem, columns, seed)
        self.depth = resolve_depth(trial, params, workers)
        self.splitter = support(trial.problem).splitter
        plan = plan_split(self.splitter, params, self.depth, max_nodes)
        super().__init__(plan, max_nodes)
        self.wasted = 0
        self.placements = 0     # placements made by tasks in this run
        self.t0 = time.perf_counter()
        self.progress = progress
        self.checkpoint = None
        self.resumed = 0        # results read back from the checkpoint
        if checkpoints is not None:
            self.checkpoint = checkpoints.open(trial.trial_id, plan, max_nodes)
            for i, r in self.checkpoint.loaded.items():
                self.results[i] = r
            self.done = self.resumed = len(self.checkpoint.loaded)
        self._advance()
        self._report()

    def _report(self) -> None:
        if self.progress is not None:
            self.progress(self.done, self.n, self.placements, time.perf_counter() - self.t0)

    def run(self, index: int, max_nodes: int | None, seconds: float | None) -> SearchResult:
        return run_subtree(self.splitter, self.plan.params, self.plan.tasks[index], max_nodes,
                           seconds)

    def arrive(self, index: int, result: SearchResult) -> None:
        super().arrive(index, result)
        self.placements += result.nodes
        if self.checkpoint is not None and result is not NOT_REACHED:
            self.checkpoint.save(index, result)
        self._report()

    def rerun(self, out: NeedRerun) -> None:
        """Forget task ``out.index``'s result (its work is wasted) before running it again
        with the budget left."""
        self.wasted += self.results[out.index].nodes  # type: ignore[union-attr]
        super().rerun(out)

    def finish(self, out: Combined) -> SearchResult:
        self.wasted += sum(r.nodes for r in self.results[out.last_task + 1:] if r is not None)
        self.done = self.n  # the tasks not run are not needed: the progress shows them done
        self._report()
        self.close()
        return _with_extra(out.result, split_depth=self.depth, split_tasks=self.n,
                           wasted_nodes=self.wasted, split_resumed=self.resumed)

    def close(self) -> None:
        if self.checkpoint is not None:
            self.checkpoint.close()


def serial_solver(trial: Trial, checkpoints: Optional[Checkpoints] = None,
                  progress: Optional[ProgressFn] = None) -> Callable[..., SearchResult]:
    """A solve call for :func:`btlab.execution.execute.run_trial` running the split in this process.

    The loop is the serial reference's (:func:`btlab.experiments.split.subtrees.run_serial`):
    tasks run in order, each only when needed, under the cap of
    :meth:`SplitState.budget`; each result is saved to ``checkpoints`` when given.
    """
    def solve(columns, max_nodes, max_seconds, seed) -> SearchResult:
        st = SplitState(trial, columns, max_nodes, seed, 1, checkpoints, progress)
        deadline = None if max_seconds is None else time.perf_counter() + max_seconds
        try:
            return run_serial(st, deadline)
        finally:
            st.close()
    return solve


def subtree_task(problem: str, params: Mapping[str, Any], path, max_nodes: int | None,
                 deadline: float | None) -> SearchResult:
    """A subtree task as Ray runs it: :func:`~btlab.experiments.split.subtrees.run_subtree` until
    ``deadline``.

    ``deadline`` is wall-clock time (``time.time()``, seconds since the epoch)
    or None: the trial's time budget is one deadline, whenever and wherever the
    task starts. The compiled kernels are loaded first, so that a worker's
    first task does not spend its time budget loading them, and whole: a
    ``ray.cancel`` meanwhile stops the task once they are loaded, never leaving
    them half imported for the worker's next task (:mod:`btlab.experiments.loading`).
    """
    split = support(problem)
    subtree_hook("loading")
    split.warm_up(params)
    subtree_hook("loaded")
    if deadline is None:
        return run_subtree(split.splitter, params, path, max_nodes, None)
    seconds = deadline - time.time()
    if seconds <= 0:
        return OUT_OF_TIME
    return run_subtree(split.splitter, params, path, max_nodes, seconds)
