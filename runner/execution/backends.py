"""Backends run trials and yield their rows as they finish.

Every backend has one method, ``run(trials) -> Iterator[row]``, and
``close()``. :class:`RayBackend` (the default) fans batches of trials out to
Ray worker processes; :class:`SerialBackend` runs them in this process, for
debugging. Ray is imported only inside :class:`RayBackend`.
"""
from typing import Any, Iterable, Iterator, Protocol, Sequence

from btlab.execution.batching import (
    HANG_FACTOR,
    HANG_GRACE_SECONDS,
    REPORT_EVERY,
    TASK_SECONDS,
    TRIAL_OVERHEAD_SECONDS,
    adaptive_batch_size,
    batch_size_for,
    hang_limit,
)
from btlab.execution.execute import run_trial
from btlab.execution.ray_backend import RayBackend
from btlab.execution.split_run import Checkpoints, ProgressFn, serial_solver
from btlab.sweep.trial import Trial

__all__ = ["HANG_FACTOR", "HANG_GRACE_SECONDS", "REPORT_EVERY", "TASK_SECONDS",
           "TRIAL_OVERHEAD_SECONDS", "Backend", "RayBackend", "SerialBackend",
           "adaptive_batch_size", "batch_size_for", "hang_limit", "make_backend"]

Row = dict[str, Any]


class Backend(Protocol):
    """What the runner needs of a backend."""

    workers: int
    #: where split trials save finished subtrees, and their progress callback
    #: (see :mod:`btlab.execution.split_run`); set by the caller, None: off
    split_checkpoints: Checkpoints | None
    split_progress: ProgressFn | None

    def run(self, trials: Iterable[Trial], total: int | None = None) -> Iterator[Row]:
        """Run every trial once; yield each row as soon as it is known (any order).

        ``trials`` may be a stream (a generator): it is read as tasks are
        submitted, never held whole, so the driver's memory stays flat with
        the number of trials in flight. ``total`` is their number when
        ``trials`` has no ``len``."""

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
    #: where split trials save finished subtrees (:class:`btlab.execution.split_run.Checkpoints`)
    split_checkpoints: Checkpoints | None = None
    #: called as subtrees of a split trial finish (:data:`btlab.execution.split_run.ProgressFn`)
    split_progress: ProgressFn | None = None

    def run(self, trials: Iterable[Trial], total: int | None = None) -> Iterator[Row]:
        for trial in trials:
            if trial.split is not None:
                yield run_trial(trial, solve=serial_solver(trial, self.split_checkpoints,
                                                           self.split_progress))
            else:
                yield run_trial(trial)

    def close(self) -> None:
        pass


def make_backend(name: str, address: str | None = None, workers: int | None = None,
                 batch_size: int | None = None, dashboard: bool = False,
                 py_modules: Sequence[str] = ()) -> Backend:
    """The backend called ``name`` (``ray`` or ``serial``).

    ``py_modules``: local paths of plug-in modules the Ray workers must import
    (:func:`btlab.problems.plugins.ship_paths`); the serial backend imports them itself.
    """
    if name == "serial":
        return SerialBackend()
    if name == "ray":
        return RayBackend(address=address, workers=workers, batch_size=batch_size,
                          dashboard=dashboard, py_modules=py_modules)
    raise ValueError(f"unknown backend {name!r}; expected 'ray' or 'serial'")
