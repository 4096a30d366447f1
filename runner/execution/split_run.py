"""Split trials: one search run as many ordered subtree tasks, combined into one row.

A config with ``split: {depth: D}`` (or ``split: auto``) runs every trial as a
split search (:mod:`btlab.experiments.split.subtrees`): the driver walks the tree above the
split depth, the subtrees below it run as Ray tasks (on the trial's engine:
``compiled`` runs them in the numba kernels), and the driver combines their
results in order into exactly the counters, status and solution of the
unsplit search. The row has the same columns as an unsplit trial's (and the
same ``trial_id``: the split does not enter it), plus ``split_depth``,
``split_tasks``, ``wasted_nodes`` (placements made in tasks whose results
were not needed: tasks after the deciding one in ``first`` mode or after a
budget stop, and the first run of a task re-run with the budget left; tasks
cancelled while running are not counted) and ``split_resumed`` (subtree
results read back from the checkpoint of an interrupted run).

``wall_ns`` is the wall time of the whole split trial (plan, tasks, combine);
``cpu_ns`` is the driver's CPU time only.

**Scheduling.** Tasks are submitted in order, at most
:data:`WINDOW_PER_WORKER` per worker in flight, so that in ``first`` mode
little work is done past the deciding task; the tasks still running when the
combination is complete are cancelled. Under a node budget a task gets only
what can be left for it (:meth:`btlab.experiments.split.subtrees.SplitPlan.task_budget`: the
budget less the top placements before it and the nodes of the finished tasks
before it), and a task that cannot be reached within the budget is not run.

**Resume.** Every finished subtree result is appended, as it arrives, to a
checkpoint file ``.split/<trial_id>.jsonl`` in the results folder (one JSON
line per task, flushed at once; a line cut short by a kill is ignored). A
driver killed during a split trial resumes it without re-running the
subtrees already finished, as long as the plan is the same (same
parameters, depth and budget; a header line holds its fingerprint). The file
is deleted once the trial's row is on disk. Results stopped by a time budget
are not saved (they depend on the clock).

**Depth.** ``split: auto`` takes the smallest depth with at least
:data:`TASKS_PER_WORKER` tasks per worker (depth at most
:data:`AUTO_MAX_DEPTH`). A subtree still running after a time slice is not
split again: its result must be the exact counters of its whole subtree, and
a worker cannot hand over the unexplored rest of a subtree it is walking
without the driver re-planning that subtree and replacing one result by a
combination of many. Rather, ask for many more tasks than workers (deeper
``depth``), which costs the driver only the walk above the cut; a trial
whose work sits in a few subtrees gets little speed-up.
"""

from __future__ import annotations

import itertools
import time
from typing import Any, Optional

from btlab.execution.execute import exit_guarded, run_trial
from btlab.execution.interrupts import counting_signals, is_interrupt, signals_seen
from btlab.execution.split_state import (
    AUTO_MAX_DEPTH,
    TASKS_PER_WORKER,
    ProgressFn,
    SplitError,
    SplitState,
    resolve_depth,
    serial_solver,
    split_params,
    subtree_task,
    support,
)
from btlab.experiments.core import SearchResult, Status
from btlab.experiments.split.subtrees import Combined, NeedRerun, combine
from btlab.store.checkpoints import CHECKPOINT_DIR, Checkpoints, TrialCheckpoint, plan_fingerprint
from btlab.sweep.trial import Trial

#: Tasks in flight per worker.
WINDOW_PER_WORKER = 4
#: Seconds a split trial past its time budget waits for the tasks in flight,
#: which stop themselves at the same deadline, to report the work they did.
TIME_GRACE = 2.0


class _Job:
    """One split trial on Ray: its :class:`SplitState`, what is in flight, its row when done."""

    def __init__(self, trial: Trial, workers: int, checkpoints: Optional[Checkpoints],
                 progress: Optional[ProgressFn]):
        self.trial = trial
        self.wall0 = time.perf_counter_ns()
        cpu0 = time.process_time_ns()
        self.deadline = (None if trial.budget_seconds is None
                         else time.perf_counter() + trial.budget_seconds)
        self.wall_deadline = (None if trial.budget_seconds is None  # for the tasks
                              else time.time() + trial.budget_seconds)
        self.inflight: dict[int, Any] = {}  # task index -> Ray ref
        self.next_task = 0                  # the next task to submit as speculation
        self.rerunning: set[int] = set()
        self.out: Any = None
        self.replayed_at = -1               # the frontier at the last replay
        self.urgent = False                 # a decisive result arrived since
        self.result: SearchResult | None = None
        self.error: BaseException | None = None
        self.st: SplitState | None = None
        signals = signals_seen()
        try:  # planning runs the trial's code (a plug-in) in the driver: contain it as
            # run_trial does -- os._exit, sys.exit, its own KeyboardInterrupt are its error
            with exit_guarded(True):
                self.st = SplitState(trial, trial.columns, trial.budget_nodes,
                                      trial.solver_seed, workers, checkpoints, progress)
        except BaseException as exc:  # noqa: BLE001 - becomes the trial's error row
            if signals_seen() != signals or (not counting_signals() and is_interrupt(exc)):
                raise KeyboardInterrupt from None  # a signal: the run stops
            self.error = exc
        # count mode without a node budget: every task is needed, none is speculation
        self.all_needed = (self.st is not None and not self.st.plan.first
                           and trial.budget_nodes is None)
        self.cpu_ns = time.process_time_ns() - cpu0

    @property
    def finished(self) -> bool:
        return self.result is not None or self.error is not None

    def replay(self, force: bool = False) -> None:
        """Combine again when that may complete the trial.

        The combination walks the results in order up to the first missing
        one, so it can change only when that frontier moves; and it can end
        there only at a decisive result (a solution, a stop), at the end of
        the tasks, or at the node budget. Otherwise the frontier task is the
        one it needs, without walking the events again.
        """
        st = self.st
        if self.finished or st is None:
            return
        if not force:
            if st.frontier <= self.replayed_at:
                return
            if not (self.urgent or st.frontier == st.n
                    or (st.max_nodes is not None and st.budget(st.frontier) == 0)):
                return
        cpu0 = time.process_time_ns()
        self.out = out = combine(st.plan, st.results, st.max_nodes)
        self.replayed_at = st.frontier
        self.urgent = False
        if isinstance(out, Combined):
            self.result = st.finish(out)
        self.cpu_ns += time.process_time_ns() - cpu0

    def seconds_left(self) -> float | None:
        return None if self.deadline is None else self.deadline - time.perf_counter()

    def time_out(self) -> None:
        """The trial's time budget is spent: what is missing counts as stopped with no work."""
        self.st.time_out(self.out)  # type: ignore[union-attr]
        self.replay(force=True)

    def expired(self) -> bool:
        left = self.seconds_left()
        return left is not None and left <= 0

    def needed(self) -> tuple[int, int | None] | None:
        """A task certainly needed and not in flight: (index, node cap), or None."""
        st, out = self.st, self.out
        if self.finished or st is None or self.expired():
            return None
        if isinstance(out, NeedRerun):
            if out.index in self.rerunning:
                return None
            # The budget ends inside this task: nothing after it is needed.
            self.rerunning.add(out.index)
            st.rerun(out)
            self.next_task = st.n
            self.replayed_at = -1  # its new result moves the frontier again
            return out.index, out.max_nodes
        if self.all_needed:
            return self._next_unsubmitted()
        i = st.frontier
        if i < st.n and i not in self.inflight and st.results[i] is None:
            if st.skip_unreachable(i):
                return None
            return i, st.budget(i)
        return None

    def speculative(self) -> tuple[int, int | None] | None:
        """The next task after the frontier not yet run (it may turn out not needed)."""
        if (self.finished or self.st is None or isinstance(self.out, NeedRerun)
                or self.expired()):
            return None
        return self._next_unsubmitted()

    def _next_unsubmitted(self) -> tuple[int, int | None] | None:
        st = self.st
        while self.next_task < st.n:  # type: ignore[union-attr]
            i = self.next_task
            self.next_task += 1
            if st.results[i] is None and i not in self.inflight:  # type: ignore[union-attr]
                if st.skip_unreachable(i):  # type: ignore[union-attr]
                    continue
                return i, st.budget(i)  # type: ignore[union-attr]
        return None

    def row(self, node_id: str | None) -> dict[str, Any]:
        """The trial's row (:func:`btlab.execution.execute.run_trial` checks the solution)."""
        if self.st is not None:
            self.st.close()
        result, error = self.result, self.error

        def solve(*_):
            if error is not None:
                raise error
            return result

        # as in the driver's own process (node_id None): a planning error that is a
        # SystemExit becomes the row's error instead of ending the driver
        row = run_trial(self.trial, None, solve=solve)
        row["node_id"] = node_id
        row["wall_ns"] = time.perf_counter_ns() - self.wall0
        row["cpu_ns"] = self.cpu_ns
        return row


def run_split_trials(trials, ray: Any, workers: int, node_id: str | None = None,
                     checkpoints: Optional[Checkpoints] = None,
                     progress: Optional[ProgressFn] = None,
                     runtime_env: Optional[dict[str, Any]] = None):
    """Run split trials on Ray, their subtree tasks spread over the workers; yield one row each.

    Scheduling, in order of priority, while fewer than
    ``WINDOW_PER_WORKER * workers`` tasks are in flight:

    1. a task certainly needed by a trial already started, oldest trial
       first: the first task without a result (the combination needs it) or
       a task re-run with the budget left; in ``count`` mode without a node
       budget, every task;
    2. the first task of the next trial (a trial is planned when it starts);
    3. only while a worker would otherwise be idle: the next task after the
       first one without a result of the oldest trial (speculation: in
       ``first`` mode or under a node budget it may turn out not needed, and
       its work is then wasted).

    So a sweep of many ``first``-mode trials keeps every worker on work that
    counts, and a single trial still uses them all. When a trial's
    combination is complete its tasks still running are cancelled and its
    row is yielded (``wall_ns``: from its start to its end, sharing the
    workers with the trials running beside it; ``cpu_ns``: the driver's CPU
    time on its plan and combinations). A subtree task that fails (an
    exception in the search) fails its trial: status ``error``, the message
    in ``error``. The time budget is one deadline per trial; when it passes
    the trial's unfinished tasks count as stopped with no work (status
    ``time_limit``, counters not exact); the tasks in flight, which stop
    themselves at the same deadline, are waited for up to :data:`TIME_GRACE`
    seconds so that their work is counted.

    Args:
        trials: the split trials (an iterable; read as trials start).
        ray: the ``ray`` module, initialised.
        workers: CPUs of the cluster (the window and ``split: auto``).
        node_id: the driver's Ray node, for the rows.
        checkpoints: where finished subtree results are saved and read back
            (resume), or None.
        progress: called after each finished task (:data:`ProgressFn`), with
            the sums over the trials started so far.
    """
    remote = ray.remote(num_cpus=1, max_retries=3)(subtree_task)
    if runtime_env:  # plug-in modules for the workers (btlab.execution.backends._task_runtime_env)
        remote = remote.options(runtime_env=runtime_env)
    window = WINDOW_PER_WORKER * max(1, workers)
    t0 = time.perf_counter()
    seen: dict[int, tuple[int, int, int]] = {}  # per trial started: done, total, placements
    keys = itertools.count()

    def report(key: int, done: int, total: int, placements: int, _seconds: float) -> None:
        """Sum over the trials started in this run (several run at once)."""
        seen[key] = (done, total, placements)
        if progress is not None:
            progress(sum(v[0] for v in seen.values()), sum(v[1] for v in seen.values()),
                     sum(v[2] for v in seen.values()), time.perf_counter() - t0)

    stream = iter(trials)
    more = True
    jobs: list[_Job] = []
    pending: dict[Any, tuple[_Job, int]] = {}

    def submit(job: _Job, task: tuple[int, int | None]) -> None:
        i, cap = task
        plan = job.st.plan  # type: ignore[union-attr]
        ref = remote.remote(job.trial.problem, plan.params, plan.tasks[i], cap, job.wall_deadline)
        pending[ref] = (job, i)
        job.inflight[i] = ref

    def drop(job: _Job) -> None:
        for ref in job.inflight.values():
            ray.cancel(ref, force=False)
            pending.pop(ref, None)
        job.inflight.clear()

    try:
        while True:
            for job in list(jobs):
                job.replay()
                if job.finished:
                    drop(job)
                    jobs.remove(job)
                    yield job.row(node_id)
            while len(pending) < window:
                task = None
                for job in jobs:
                    task = job.needed()
                    if task is not None:
                        submit(job, task)
                        if task[0] in job.rerunning:  # nothing after it is needed
                            for k in [k for k in job.inflight if k > task[0]]:
                                ray.cancel(job.inflight[k], force=False)
                                pending.pop(job.inflight.pop(k), None)
                        break
                if task is not None:
                    continue
                if more and len(jobs) < window:
                    trial = next(stream, None)
                    if trial is None:
                        more = False
                        continue
                    key = next(keys)
                    job = _Job(trial, workers, checkpoints,
                               lambda *a, key=key: report(key, *a))
                    jobs.append(job)
                    job.replay(force=True)
                    if job.finished:
                        break  # yield its row first
                    continue
                if len(pending) < workers:
                    for job in jobs:
                        task = job.speculative()
                        if task is not None:
                            submit(job, task)
                            break
                if task is None:
                    break
            if not jobs and not more:
                return
            if any(job.finished for job in jobs):
                continue
            if not pending:
                if any(j.st is not None and j.st.frontier > j.replayed_at for j in jobs):
                    for job in jobs:
                        job.replay(force=True)
                    continue
                raise RuntimeError("split runner: no task in flight and no trial can go on")
            # wake at a trial's deadline, and again when its grace runs out
            lefts = [left if left > 0 else left + TIME_GRACE
                     for left in (job.seconds_left() for job in jobs) if left is not None]
            # at most an hour (Ray's C milliseconds overflow for a 1e300 s budget)
            timeout = min(3600.0, max(0.0, min(lefts))) if lefts else None
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=timeout)
            for ref in ready:
                job, i = pending.pop(ref)
                job.inflight.pop(i, None)
                try:
                    r = ray.get(ref)
                except Exception as exc:  # noqa: BLE001 - the subtree's search failed
                    job.error = exc
                    continue
                job.st.arrive(i, r)  # type: ignore[union-attr]
                job.urgent |= bool(r.solutions) or r.status is not Status.EXHAUSTED
            for job in jobs:
                left = job.seconds_left()
                # past the deadline the tasks in flight stop themselves (they were given
                # the same deadline) and report their work: wait for them a little
                if (left is not None and not job.finished
                        and (left <= -TIME_GRACE or (left <= 0 and not job.inflight))):
                    job.time_out()
    finally:
        for ref in pending:
            ray.cancel(ref, force=False)
        for job in jobs:
            if job.st is not None:
                job.st.close()


__all__ = ["AUTO_MAX_DEPTH", "TASKS_PER_WORKER", "ProgressFn", "CHECKPOINT_DIR", "Checkpoints",
           "SplitError", "TrialCheckpoint",
           "plan_fingerprint", "resolve_depth", "run_split_trials", "serial_solver",
           "split_params", "subtree_task", "support"]
