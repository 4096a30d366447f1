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
from typing import Any, Iterator, Protocol, Sequence

from .config import Trial
from .execute import METRIC_COLUMNS, run_batch, run_trial

Row = dict[str, Any]


class Backend(Protocol):
    """What the runner needs of a backend."""

    workers: int

    def run(self, trials: Sequence[Trial]) -> Iterator[Row]:
        """Run every trial once; yield each row as soon as it is known (any order)."""

    def close(self) -> None:
        """Release what the backend holds (a Ray instance it started)."""


class SerialBackend:
    """Runs trials one after the other in this process (``--backend serial``)."""

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


class RayBackend:
    """Runs batches of trials as Ray tasks and streams rows back with ``ray.wait``.

    Args:
        address: a Ray cluster address (``HOST:PORT`` or ``auto``); None starts an
            embedded local Ray, or joins ``RAY_ADDRESS`` when that is set.
        workers: CPUs of the embedded local Ray (default: all cores); ignored
            on a cluster, where every CPU of the cluster is used.
        batch_size: trials per task (default: :func:`batch_size_for`).
        max_retries: times a task whose worker died is run again.

    If Ray is already initialised in this process (a test session), that
    instance is used and left running.
    """

    def __init__(self, address: str | None = None, workers: int | None = None,
                 batch_size: int | None = None, max_retries: int = 3):
        import ray

        self._ray = ray
        self._owns_ray = False
        if not ray.is_initialized():
            kwargs: dict[str, Any] = dict(include_dashboard=False, logging_level=logging.WARNING,
                                          log_to_driver=True)
            if address is None and not os.environ.get("RAY_ADDRESS"):
                kwargs["num_cpus"] = workers or os.cpu_count() or 1
            else:
                kwargs["address"] = address
                kwargs["runtime_env"] = _code_runtime_env()
            ray.init(**kwargs)
            self._owns_ray = True
        self.workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.batch_size = batch_size
        self._task = ray.remote(num_cpus=1, max_retries=max_retries)(_ray_batch)

    def run(self, trials: Sequence[Trial]) -> Iterator[Row]:
        ray = self._ray
        split = [t for t in trials if t.split is not None]
        if split:  # split trials: one at a time, their subtrees spread over the workers
            from .split_runner import run_split_trials
            trials = [t for t in trials if t.split is None]
            yield from run_split_trials(split, ray, self.workers)
            if not trials:
                return
        size = self.batch_size or batch_size_for(len(trials), self.workers)
        batches = (trials[i:i + size] for i in range(0, len(trials), size))
        window = 2 * self.workers + 2  # tasks in flight: keeps workers busy, memory flat
        pending: dict[Any, Sequence[Trial]] = {}

        def submit() -> None:
            while len(pending) < window:
                batch = next(batches, None)
                if batch is None:
                    return
                pending[self._task.remote(batch)] = batch

        submit()
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                batch = pending.pop(ref)
                try:
                    rows = ray.get(ref)
                except ray.exceptions.RayError as exc:
                    rows = [_lost_row(t, exc) for t in batch]
                submit()
                yield from rows

    def close(self) -> None:
        if self._owns_ray:
            self._ray.shutdown()
            self._owns_ray = False


def _ray_batch(trials: Sequence[Trial]) -> list[Row]:
    import ray

    return run_batch(trials, ray.get_runtime_context().get_node_id())


def _lost_row(trial: Trial, exc: Exception) -> Row:
    """The row of a trial whose task failed for good (its worker died every retry)."""
    out: Row = {"trial_id": trial.trial_id, **trial.columns,
                "budget_nodes": trial.budget_nodes, "budget_seconds": trial.budget_seconds,
                "seed": trial.seed, "repeat": trial.repeat}
    out.update({c: None for c in METRIC_COLUMNS})
    out.update(status="error", solution=None,
               error=f"task lost after retries: {type(exc).__name__}: {str(exc)[:500]}")
    return out


def _code_runtime_env() -> dict[str, Any]:
    """Ship btlab's own packages to cluster workers (``py_modules``) unless they have them."""
    import experiments
    import runner

    return {"py_modules": [os.path.dirname(experiments.__file__),
                           os.path.dirname(runner.__file__)]}


def make_backend(name: str, address: str | None = None, workers: int | None = None,
                 batch_size: int | None = None) -> Backend:
    """The backend called ``name`` (``ray`` or ``serial``)."""
    if name == "serial":
        return SerialBackend()
    if name == "ray":
        return RayBackend(address=address, workers=workers, batch_size=batch_size)
    raise ValueError(f"unknown backend {name!r}; expected 'ray' or 'serial'")
