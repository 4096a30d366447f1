"""Backends run trials and yield their rows as they finish.

Every backend has one method, ``run(trials) -> Iterator[row]``, and
``close()``. :class:`RayBackend` (the default) fans batches of trials out to
Ray worker processes; :class:`SerialBackend` runs them in this process, for
debugging. Ray is imported only inside :class:`RayBackend`.
"""

from __future__ import annotations

import logging
import math
import os
import socket
import time
from collections import deque
from datetime import datetime, timedelta, timezone
from typing import Any, Iterator, Protocol, Sequence

from .config import Trial
from .errors import BackendError
from .execute import METRIC_COLUMNS, run_trial

Row = dict[str, Any]


class Backend(Protocol):
    """What the runner needs of a backend."""

    workers: int

    def run(self, trials: Sequence[Trial]) -> Iterator[Row]:
        """Run every trial once; yield each row as soon as it is known (any order)."""

    def close(self) -> None:
        """Release what the backend holds (a Ray instance it started)."""


class SerialBackend:
    """Runs trials one after the other in this process (``--backend serial``), for debugging.

    Time limits are cooperative only: a solver stops itself at its time budget
    (it reads the clock every 1024 placements), but a trial that hangs -- stuck
    in C code, or in a loop that never reads the clock -- hangs the run, since
    nothing can kill it without killing this process. The Ray backend kills
    hung trials (see :class:`RayBackend`).
    """

    workers = 1

    def run(self, trials: Sequence[Trial]) -> Iterator[Row]:
        for trial in trials:
            yield run_trial(trial)

    def close(self) -> None:
        pass


def batch_size_for(n_trials: int, workers: int) -> int:
    """Trials per Ray task: about 8 tasks per worker, at most 64 trials a task.

    A Ray task costs about a millisecond of overhead, as much as a short trial
    (an 8 x 8 Warnsdorff tour is under a millisecond), so short trials must
    travel in batches; several tasks per worker keep the load balanced when
    trial times differ by orders of magnitude (plain backtracking).
    """
    return max(1, min(64, math.ceil(n_trials / (8 * max(1, workers)))))


#: A trial with a time budget of ``s`` seconds that has not returned ``HANG_FACTOR * s +
#: HANG_GRACE_SECONDS`` after it started is taken for hung and its worker is killed.
HANG_FACTOR = 1.1
HANG_GRACE_SECONDS = 5.0


def hang_limit(budget_seconds: float | None) -> float | None:
    """Seconds after which a trial with this time budget is killed (None: never)."""
    if budget_seconds is None:
        return None
    return budget_seconds * HANG_FACTOR + HANG_GRACE_SECONDS


class _Task:
    """The driver's view of one Ray task: its trials and how far it has got."""

    __slots__ = ("trials", "done", "started", "last", "pid", "node_id", "host")

    def __init__(self, trials: Sequence[Trial]):
        self.trials = list(trials)
        self.done = 0          # rows received: trials[done] is the one running now
        self.started = False   # the worker has said it started
        self.last = 0.0        # time.monotonic() of the last message from the worker
        self.pid = self.node_id = self.host = None


class RayBackend:
    """Runs batches of trials as Ray tasks and streams rows back as each trial ends.

    Each task is a Ray *streaming generator*: it first yields a "started"
    message (its pid and node), then one row per trial, as soon as the trial
    ends. So the driver always knows which trial of a task is running and
    since when, and never loses the rows a task finished before something
    went wrong:

    * **Hangs.** A trial with a time budget stops itself at the budget
      (solvers read the clock every 1024 placements). One that has not
      returned :func:`hang_limit` seconds (budget x 1.1 + 5 s) after it started
      -- a solver stuck in C code, an infinite loop that never reads the
      clock -- is taken for hung: its task is cancelled with
      ``ray.cancel(force=True)``, which kills the worker process; the trial
      gets a row with status ``time_limit``, null counters and an ``error``
      saying it was killed; the trials of the task that had not run yet are
      submitted again as a new task. Trials without a time budget are never
      killed.
    * **Dead workers.** A worker that dies (killed, out of memory, a crash)
      fails its task; the driver, not Ray, retries: the trial that was running
      is run again, up to ``max_retries`` times, then gets a row with status
      ``error``; the trials after it go to a new task. Finished rows are never
      run or written twice. (A task that dies before it starts counts as a
      failure of each of its trials.)

    Args:
        address: a Ray cluster address (``HOST:PORT`` or ``auto``); None starts an
            embedded local Ray, or joins ``RAY_ADDRESS`` when that is set.
        workers: CPUs of the embedded local Ray (default: all cores); ignored
            on a cluster, where every CPU of the cluster is used.
        batch_size: trials per task (default: :func:`batch_size_for`).
        max_retries: times a trial whose worker died is run again.
        dashboard: start the Ray dashboard with the embedded local Ray (off by default).

    Raises:
        BackendError: Ray could not be started or joined.

    If Ray is already initialised in this process (a test session), that
    instance is used and left running.
    """

    def __init__(self, address: str | None = None, workers: int | None = None,
                 batch_size: int | None = None, max_retries: int = 3, dashboard: bool = False):
        import ray

        self._ray = ray
        self._owns_ray = False
        self.dashboard_url: str | None = None
        if not ray.is_initialized():
            kwargs: dict[str, Any] = dict(include_dashboard=dashboard,
                                          logging_level=logging.WARNING, log_to_driver=True)
            if address is None and not os.environ.get("RAY_ADDRESS"):
                # "local": always a new embedded instance, never a cluster that another
                # `ray start` on this machine recorded in /tmp/ray/ray_current_cluster
                kwargs["address"] = "local"
                kwargs["num_cpus"] = workers or os.cpu_count() or 1
            else:
                kwargs["address"] = address
                kwargs["runtime_env"] = _code_runtime_env()
            try:
                context = ray.init(**kwargs)
            except (ConnectionError, ValueError, RuntimeError, TimeoutError) as exc:
                where = address or os.environ.get("RAY_ADDRESS") or "an embedded local Ray"
                raise BackendError(f"could not start or join Ray ({where}): {exc}\n"
                                   "  fix: check --address / RAY_ADDRESS, or use "
                                   "--backend serial") from None
            self.dashboard_url = getattr(context, "dashboard_url", None) or None
            self._owns_ray = True
        self.workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.batch_size = batch_size
        self.max_retries = max_retries
        #: what went wrong and was handled, for the run's summary
        self.killed = 0        # trials killed past their hang limit
        self.retried = 0       # trials run again because their worker died
        self.lost = 0          # trials given up after max_retries worker deaths
        # max_retries=0: the driver retries (see above); Ray would rerun the whole
        # task, finished trials included.
        self._task = ray.remote(num_cpus=1, max_retries=0)(_ray_batch)

    def run(self, trials: Sequence[Trial]) -> Iterator[Row]:
        ray = self._ray
        size = self.batch_size or batch_size_for(len(trials), self.workers)
        batches = (trials[i:i + size] for i in range(0, len(trials), size))
        again: deque[list[Trial]] = deque()   # trials to resubmit, before new batches
        deaths: dict[str, int] = {}            # trial id -> worker deaths while it ran
        window = 2 * self.workers + 2  # tasks in flight: keeps workers busy, memory flat
        pending: dict[Any, _Task] = {}

        def submit() -> None:
            while len(pending) < window:
                batch = again.popleft() if again else next(batches, None)
                if batch is None:
                    return
                if batch:
                    pending[self._task.remote(batch)] = _Task(batch)

        def worker_died(task: _Task, exc: Exception) -> Iterator[Row]:
            """Retry the running trial (or, before the task started, all of them)."""
            blamed = task.trials[task.done:] if not task.started else [task.trials[task.done]]
            rest = task.trials[task.done + len(blamed):]
            retry = []
            for trial in blamed:
                deaths[trial.trial_id] = deaths.get(trial.trial_id, 0) + 1
                if deaths[trial.trial_id] > self.max_retries:
                    self.lost += 1
                    yield _lost_row(trial, "error", (
                        f"worker died {deaths[trial.trial_id]} times running this trial; "
                        f"last: {type(exc).__name__}: {str(exc)[:300]}"), task)
                else:
                    self.retried += 1
                    retry.append(trial)
            if retry + rest:
                again.appendleft(retry + rest)

        submit()
        try:
            while pending:
                now = time.monotonic()
                deadlines = [t.last + lim for t in pending.values()
                             if t.started and t.done < len(t.trials)
                             and (lim := hang_limit(t.trials[t.done].budget_seconds)) is not None]
                timeout = max(0.0, min(deadlines) - now) + 0.01 if deadlines else None
                ready, _ = ray.wait(list(pending), num_returns=1, timeout=timeout)
                for gen in ready:
                    task = pending[gen]
                    try:
                        item = ray.get(next(gen))
                    except StopIteration:
                        del pending[gen]
                        if task.done < len(task.trials):  # cannot happen; never drop a trial
                            again.append(task.trials[task.done:])
                        continue
                    except ray.exceptions.RayError as exc:
                        del pending[gen]
                        yield from worker_died(task, exc)
                        continue
                    task.last = time.monotonic()
                    if isinstance(item, tuple):  # ("started", pid, node_id, host)
                        task.started = True
                        _, task.pid, task.node_id, task.host = item
                        continue
                    task.done += 1
                    yield item
                now = time.monotonic()
                for gen, task in list(pending.items()):
                    if not task.started or task.done >= len(task.trials):
                        continue
                    trial = task.trials[task.done]
                    limit = hang_limit(trial.budget_seconds)
                    if limit is None or now - task.last <= limit:
                        continue
                    if ray.wait([gen], timeout=0)[0]:
                        continue  # it did report: read that first
                    ray.cancel(gen, force=True)  # kills the worker process
                    del pending[gen]
                    self.killed += 1
                    yield _lost_row(trial, "time_limit", (
                        f"killed by the runner: no result {now - task.last:.1f} s after the "
                        f"trial started (time budget {trial.budget_seconds:g} s; limit "
                        f"budget x {HANG_FACTOR:g} + {HANG_GRACE_SECONDS:g} s); the solver did "
                        "not stop at its time limit"), task, started=task.last)
                    if task.done + 1 < len(task.trials):
                        again.appendleft(task.trials[task.done + 1:])
                submit()
        finally:
            for gen in pending:  # interrupted: stop what still runs
                try:
                    ray.cancel(gen, force=True)
                except Exception:  # noqa: BLE001 - best effort while unwinding
                    pass

    def close(self) -> None:
        if self._owns_ray:
            self._ray.shutdown()
            self._owns_ray = False


def _ray_batch(trials: Sequence[Trial]) -> Iterator[Any]:
    """A Ray task (a streaming generator): says it started, then yields each trial's row."""
    import ray

    node_id = ray.get_runtime_context().get_node_id()
    yield ("started", os.getpid(), node_id, socket.gethostname())
    for trial in trials:
        yield run_trial(trial, node_id)


def _lost_row(trial: Trial, status: str, message: str, task: _Task | None = None,
              started: float | None = None) -> Row:
    """The row of a trial that gave no result: its worker was killed or kept dying.

    Counters and timings are null: nothing was measured. ``pid``, ``host`` and
    ``node_id`` are those of the task's worker when known; ``started_at`` is
    when the driver saw the trial start (``started``, a ``time.monotonic()``).
    """
    out: Row = {"trial_id": trial.trial_id, **trial.columns,
                "budget_nodes": trial.budget_nodes, "budget_seconds": trial.budget_seconds,
                "seed": trial.seed, "repeat": trial.repeat}
    out.update({c: None for c in METRIC_COLUMNS})
    out.update(status=status, solution=None, error=message)
    if task is not None and task.started:
        out.update(pid=task.pid, node_id=task.node_id, host=task.host)
    if started is not None:
        out["started_at"] = datetime.now(timezone.utc) - timedelta(
            seconds=time.monotonic() - started)
    return out


def _code_runtime_env() -> dict[str, Any]:
    """Ship btlab's own packages to cluster workers (``py_modules``) unless they have them."""
    import experiments
    import runner

    return {"py_modules": [os.path.dirname(experiments.__file__),
                           os.path.dirname(runner.__file__)]}


def make_backend(name: str, address: str | None = None, workers: int | None = None,
                 batch_size: int | None = None, dashboard: bool = False) -> Backend:
    """The backend called ``name`` (``ray`` or ``serial``)."""
    if name == "serial":
        return SerialBackend()
    if name == "ray":
        return RayBackend(address=address, workers=workers, batch_size=batch_size,
                          dashboard=dashboard)
    raise ValueError(f"unknown backend {name!r}; expected 'ray' or 'serial'")
