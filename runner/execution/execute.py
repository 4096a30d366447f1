"""Run one trial, wherever it runs: solve, time, verify, and make its row.

This module is imported by every backend (serial, Ray workers) and knows
nothing of Ray or files. A trial that raises becomes a row with status
``error`` and the message (:func:`error_message`); a solution that fails the
checker does too, and so does a result that breaks the metrics contract
(:mod:`btlab.execution.result_check`), before its row joins a batch. That holds
for every exception a trial can raise --
``MemoryError`` (its data is freed before the message is formatted),
``RecursionError``, ``GeneratorExit``, and ``SystemExit`` from code that
calls ``sys.exit`` -- except a signal: ``KeyboardInterrupt``, or anything a
Ctrl-C or SIGTERM turned into another exception (:mod:`btlab.execution.interrupts`),
propagates and the trial gives no row. In a Ray worker, ``SystemExit``
propagates too (Ray's own SIGTERM handler raises it to stop the worker; the
driver reruns that worker's trials).
"""

from __future__ import annotations

import contextlib
import gc
import importlib.abc
import json
import os
import resource
import signal
import socket
import sys
import time
import traceback
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from btlab.config.restarts import run_restarts
from btlab.execution.interrupts import counting_signals, is_interrupt, reinstall, signals_seen
from btlab.execution.result_check import checked_values
from btlab.experiments.core import Status
from btlab.experiments.loading import interrupt_pending
from btlab.problems.registry import get_problem
from btlab.store import schema
from btlab.sweep.trial import Trial

#: Metric columns every row carries (the metrics contract, ``docs/metrics.md``), in order:
#: the status, the counters and the timings of :data:`btlab.store.schema.COLUMNS`.
METRIC_COLUMNS = schema.names(schema.STATUS, schema.COUNTER, schema.TIMING)
#: The counters, null in the row of a trial that raised.
_COUNTERS = schema.names(schema.COUNTER)
#: Result columns of trials with restarts (:mod:`btlab.config.restarts`) and of ``mode:
#: estimate``; null in the other rows.
RESTART_COLUMNS = schema.names(schema.RESTART)
ESTIMATE_COLUMNS = schema.names(schema.ESTIMATE)

_HOST = socket.gethostname()

#: Test hook, not for users: ``BTLAB_TEST_FAULT=KIND:PREFIX[,KIND:PREFIX...]`` makes every
#: trial whose id starts with PREFIX misbehave: ``raise`` raises, ``hang`` sleeps forever
#: without checking its clock (as a solver stuck in C code would), ``crash`` kills its own
#: process (as a segfault would), ``memory`` allocates until nothing is left and raises
#: ``MemoryError`` (under an address-space limit of its own, 256 MiB above what the
#: process has, lifted again once the trial's row is made), ``exit`` calls
#: ``sys.exit(3)`` as a misbehaving plug-in could. Read when each trial starts, so that
#: Ray workers, which inherit the driver's environment, see it too.
#: So that tests wait for the run, never the clock, in the folder ``$BTLAB_TEST_FAULT_DIR``:
#: ``mark`` writes ``started-<trial id>`` (holding the pid) when the trial starts, ``block``
#: does too, then waits until a file ``release`` is there; ``pause_at:STAGE`` makes the run
#: itself write ``at-STAGE`` and wait likewise at a stage of its end (:func:`pause_at`).
TEST_FAULT_ENV = "BTLAB_TEST_FAULT"
TEST_FAULT_DIR_ENV = "BTLAB_TEST_FAULT_DIR"
#: In a subtree task (:func:`btlab.execution.split_state.subtree_task`), ``kernels:loaded``
#: writes ``kernels-<pid>`` once the task has its kernels loaded, before its search;
#: ``kernels:block_import:MODULE`` makes the task's import of MODULE (when this process has
#: not imported it yet: a fresh worker) write ``importing-<pid>`` and wait for ``release``
#: there, in the middle of loading the kernels, writing ``interrupted-<pid>`` once an
#: interrupt (``ray.cancel``) has reached it (:func:`subtree_hook`).
#: The stages of :func:`pause_at`: before the last rows are written, before the backend
#: shuts down, just after ``ray.shutdown`` (the Ray backend), before the closing tables
#: are printed, and once the exit status is decided.
PAUSE_STAGES = ("last_rows", "shutdown", "ray_shutdown", "tables", "exit")

#: Limits to restore once the trial that set them has its row (the ``memory`` fault).
_restore_limits: list[tuple[int, int]] = []


def _inject_test_fault(trial_id: str) -> None:
    spec = os.environ.get(TEST_FAULT_ENV)
    if not spec:
        return
    for item in spec.split(","):
        kind, _, prefix = item.strip().partition(":")
        if not prefix or not trial_id.startswith(prefix):
            continue
        if kind == "raise":
            raise RuntimeError(f"fault injected by {TEST_FAULT_ENV} (test hook)")
        if kind == "hang":
            while True:
                time.sleep(3600)
        if kind == "crash":
            os.kill(os.getpid(), signal.SIGKILL)
        if kind == "exit":
            raise SystemExit(3)
        if kind == "memory":
            _exhaust_memory()
        if kind in ("mark", "block"):
            _announce(f"started-{trial_id}", wait=kind == "block")


def pause_at(stage: str) -> None:
    """Test hook: with ``BTLAB_TEST_FAULT=pause_at:STAGE`` write ``at-STAGE``, wait for ``release``.

    A signal arrives during the wait as it would during the stage's own work.
    """
    spec = os.environ.get(TEST_FAULT_ENV)
    if spec and f"pause_at:{stage}" in (item.strip() for item in spec.split(",")):
        _announce(f"at-{stage}", wait=True)


def subtree_hook(stage: str) -> None:
    """Test hook of subtree tasks at ``stage``: ``loading`` (before the kernels load) or
    ``loaded`` (after); see ``kernels:`` at :data:`TEST_FAULT_ENV`."""
    spec = os.environ.get(TEST_FAULT_ENV)
    if not spec:
        return
    for item in spec.split(","):
        kind, _, what = item.strip().partition(":")
        if kind != "kernels":
            continue
        if stage == "loaded" and what == "loaded":
            _announce(f"kernels-{os.getpid()}", wait=False)
        module = what.partition("block_import:")[2]
        if stage == "loading" and module and module not in sys.modules:
            sys.meta_path.insert(0, _BlockedImport(module))


class _BlockedImport(importlib.abc.MetaPathFinder):
    """Holds the first import of one module until ``release`` (:func:`subtree_hook`)."""

    def __init__(self, module: str):
        self.module = module

    def find_spec(self, name, path=None, target=None):
        if name != self.module:
            return None
        sys.meta_path.remove(self)
        pid = os.getpid()
        folder = Path(os.environ.get(TEST_FAULT_DIR_ENV) or ".")
        _announce(f"importing-{pid}", wait=False)
        told = False
        try:
            while not (folder / "release").exists():
                if interrupt_pending() and not told:  # held until the kernels are loaded
                    _announce(f"interrupted-{pid}", wait=False)
                    told = True
                time.sleep(0.01)
        except KeyboardInterrupt:  # not held: it cuts the import short
            _announce(f"interrupted-{pid}", wait=False)
            raise
        return None  # the import goes on as usual


def _announce(name: str, wait: bool) -> None:
    """Write ``name`` (this pid) in ``$BTLAB_TEST_FAULT_DIR``; then, if ``wait``, wait for
    ``release`` there."""
    folder = Path(os.environ.get(TEST_FAULT_DIR_ENV) or ".")
    tmp = folder / f".{name}.{os.getpid()}.tmp"
    tmp.write_text(str(os.getpid()))
    tmp.replace(folder / name)  # whole, or not there
    while wait and not (folder / "release").exists():
        time.sleep(0.01)


def _exhaust_memory() -> None:
    """Allocate until ``MemoryError`` under a limit just above this process's address space."""
    with open("/proc/self/status") as fh:
        vm_kib = next(int(line.split()[1]) for line in fh if line.startswith("VmSize:"))
    limits = resource.getrlimit(resource.RLIMIT_AS)
    _restore_limits.append(limits)
    cap = (vm_kib << 10) + (256 << 20)
    if limits[1] != resource.RLIM_INFINITY:
        cap = min(cap, limits[1])
    resource.setrlimit(resource.RLIMIT_AS, (cap, limits[1]))
    hog: list[object] = []
    chunk = 8 << 20
    while chunk:  # to the brim: then even formatting an error needs the hog freed
        try:
            hog.append(bytearray(chunk))
        except MemoryError:
            chunk //= 2
    try:
        while True:  # and the small-object arenas
            hog.append((None,))
    except MemoryError:
        pass
    raise MemoryError  # the frame holds the hog, as a solver's would


class ProcessExitCalled(BaseException):
    """A trial called ``os._exit`` in the run's own process (the serial backend).

    A ``BaseException``, as ``SystemExit`` is, so that a solver's ``except
    Exception`` does not swallow it; :func:`run_trial` makes it the trial's error.
    """

    def __init__(self, code: Any):
        super().__init__(f"the trial called os._exit({code!r}); a trial cannot end the run")


@contextlib.contextmanager
def exit_guarded(active: bool) -> Iterator[None]:
    """Within the block, ``os._exit`` called in this process raises :class:`ProcessExitCalled`.

    ``os._exit`` ends a process at once, skipping every handler: in the serial
    backend that would end the run with no message and the exit status the
    trial chose (``os._exit(0)``: 0, as if all went well). A child the trial
    forks exits as usual. Not active in a Ray worker, whose death the driver
    handles (the trial runs again, then gets an error row).
    """
    if not active:
        yield
        return
    real, pid = os._exit, os.getpid()

    def guarded(code: int) -> None:
        if os.getpid() != pid:
            real(code)
        raise ProcessExitCalled(code)

    os._exit = guarded  # type: ignore[assignment]
    try:
        yield
    finally:
        os._exit = real


def run_trial(trial: Trial, node_id: str | None = None, solve=None) -> dict[str, Any]:
    """Run one trial and return its row (without the run-level provenance).

    Args:
        trial: the trial.
        node_id: the Ray node id of the worker, when run by Ray.
        solve: the solve call ``(columns, max_nodes, max_seconds, seed) ->
            SearchResult``; default: the problem's. A split trial
            (``trial.split`` set) is run by its backend with the split's
            solve call (:func:`btlab.execution.split_run.serial_solver`).

    Returns:
        A dict: ``trial_id``, the parameter columns, budget, seed, repeat, the
        metric columns, ``solution`` (list of ints or None), ``error`` (message
        or None), the problem's extra counters, and where it ran (``host``,
        ``node_id``, ``pid``, ``started_at``). ``wall_ns`` and ``cpu_ns`` are
        measured around the solve call only (``cpu_ns``: process CPU time),
        after the problem's ``prepare`` step (compiling or loading kernels),
        whose cost goes to its own extra column (``compile_ns``).
    """
    row: dict[str, Any] = {
        **schema.trial_values(trial),
        "host": _HOST,
        "node_id": node_id,
        "pid": os.getpid(),
        "started_at": datetime.now(timezone.utc),
        "plugins": json.dumps(dict(trial.plugins), sort_keys=True) if trial.plugins else None,
    }
    prepared: Mapping[str, Any] = {}
    extra_columns: tuple[str, ...] = ()
    signals = signals_seen()
    cpu0 = time.process_time_ns()
    wall0 = time.perf_counter_ns()
    try:
        problem = get_problem(trial.problem)
        extra_columns = problem.extra_columns
        if problem.prepare is not None:
            prepared = problem.prepare(trial.problem_columns())
            cpu0 = time.process_time_ns()
            wall0 = time.perf_counter_ns()
        _inject_test_fault(trial.trial_id)
        if solve is None:
            if trial.split is not None:
                raise ValueError("a split trial runs through its backend's split solver")
            solve = problem.solve
        restarted: dict[str, Any] = {}
        with exit_guarded(node_id is None):
            if trial.restarts is not None:
                run = run_restarts(solve, trial.columns, trial.restarts, trial.solver_seed,
                                   trial.budget_nodes, trial.budget_seconds,
                                   trial.budget_backtracks)
                result = run.result
                restarted = {name: getattr(run, name) for name in RESTART_COLUMNS}
            elif trial.columns.get("mode") == "estimate" and trial.split is None:
                if problem.estimate is None or trial.probes is None:
                    lack = "no estimator" if problem.estimate is None else "no probes"
                    raise ValueError(f"mode: estimate needs probes and an estimator; "
                                     f"problem {problem.name} has {lack}")
                result = problem.estimate(trial.problem_columns(), trial.probes,
                                          trial.budget_nodes,
                                          trial.budget_seconds, trial.solver_seed)
            else:
                more = ({} if trial.budget_backtracks is None
                        else {"max_backtracks": trial.budget_backtracks})
                result = solve(trial.columns, trial.budget_nodes, trial.budget_seconds,
                               trial.solver_seed, **more)
        wall = time.perf_counter_ns() - wall0
        cpu = time.process_time_ns() - cpu0
        if signals_seen() != signals:  # a solver swallowed the signal: its result is suspect
            raise KeyboardInterrupt
        # types, ranges, invariants: a result that breaks the contract is this trial's error
        values = checked_values(result, problem, trial.columns.get("mode") == "estimate",
                                restarted)
        error = None
        if result.solution is not None:
            try:
                problem.verify(trial.columns, result.solution)
            except ValueError as exc:
                error = f"solver returned an invalid solution: {exc}"
        for name in problem.extra_columns:
            values[name] = prepared[name] if name in prepared else values.get(name)
        row.update(values)
        row.update(wall_ns=wall, cpu_ns=cpu, error=error)
        if error is not None:
            row["status"] = Status.ERROR.value
    except BaseException as exc:  # noqa: BLE001 - a failing trial must not stop the run
        wall = time.perf_counter_ns() - wall0
        cpu = time.process_time_ns() - cpu0
        # a signal is never the trial's error: the run stops, the trial gives no row
        if signals_seen() != signals or (not counting_signals() and is_interrupt(exc)):
            raise KeyboardInterrupt from None  # e.g. numba's SystemError around a Ctrl-C
        if isinstance(exc, SystemExit) and node_id is not None:
            raise  # a Ray worker told to exit (Ray's SIGTERM handler): the driver reruns
        message = error_message(exc)
        del exc
        if signals_seen() != signals:  # one arrived while the message was made
            raise KeyboardInterrupt from None
        row.update(dict.fromkeys(_COUNTERS))
        row.update(status=Status.ERROR.value, wall_ns=wall, cpu_ns=cpu, solution=None,
                   error=message)
        for name in extra_columns:
            row[name] = prepared.get(name)
    finally:
        while _restore_limits:
            resource.setrlimit(resource.RLIMIT_AS, _restore_limits.pop())
        reinstall()  # a plug-in that ignored Ctrl-C (or took it over) has not disabled it
    return row


def error_message(exc: BaseException) -> str:
    """The ``error`` column of a trial that raised ``exc``: ``Type: message`` and the
    last three frames of its traceback.

    The frames' local variables are dropped first (the traceback keeps only
    file, line and function), so that what a failing solver held -- the
    partial placements that ran out of memory -- is freed before anything is
    formatted; after a ``MemoryError`` a garbage collection runs too. If even
    then formatting fails for want of memory, the message is the type alone.
    A trial that called ``sys.exit`` is named as such: it cannot end the run.
    """
    traceback.clear_frames(exc.__traceback__)
    link = exc.__context__ or exc.__cause__
    if link is not None:
        traceback.clear_frames(link.__traceback__)
    if isinstance(exc, MemoryError):
        gc.collect()
    name = _type_name(exc)
    try:
        if isinstance(exc, SystemExit):
            text = f"the trial called sys.exit({_safe_repr(exc.code)}); a trial cannot end the run"
        else:
            text = _safe_str(exc)
        if isinstance(exc, MemoryError) and not text:
            text = "out of memory (the trial's data was freed; the run goes on)"
        try:
            if len(text) > MESSAGE_CHARS:  # the frames only: the message is not repeated
                text = (f"{text[:MESSAGE_CHARS]}\n... (message cut: {len(text):,} "
                        "characters in all)")
                tail = "Traceback (most recent call last):\n" + "".join(
                    traceback.format_tb(exc.__traceback__, limit=-3))
            else:
                tail = "".join(traceback.format_exception(exc, limit=-3))
        except Exception as fmt:  # noqa: BLE001 - str() of the exception raised again
            tail = f"(no traceback: formatting it raised {_type_name(fmt)})"
        return f"{name}: {text}\n{tail}"
    except MemoryError:
        return f"{name} (no more detail: out of memory while formatting it)"


#: Characters of an exception's message kept in a trial's ``error``; the rest is cut,
#: and the cut is said (a 10 MB message would be stored, and shipped, for each trial).
MESSAGE_CHARS = 20_000


def _type_name(exc: BaseException) -> str:
    try:
        return str(type(exc).__name__)
    except Exception:  # noqa: BLE001 - a metaclass with a hostile __name__
        return "Exception"


def _safe_str(exc: BaseException) -> str:
    """``str(exc)``; when that raises (a hostile ``__str__``), what it raised instead.

    A ``KeyboardInterrupt`` from ``__str__`` counts as failing too: a signal is
    told apart by :func:`btlab.execution.interrupts.signals_seen`, not by its type.
    """
    try:
        return str(exc)
    except MemoryError:
        raise
    except BaseException as inner:  # noqa: BLE001 - the message must be made
        return f"(its message could not be made: str() raised {_type_name(inner)})"


def _safe_repr(value: Any) -> str:
    try:
        return repr(value)
    except MemoryError:
        raise
    except BaseException:  # noqa: BLE001
        return "..."


def run_batch(trials: Iterable[Trial], node_id: str | None = None) -> list[dict[str, Any]]:
    """Run several trials one after the other (one Ray task runs one batch)."""
    return [run_trial(t, node_id) for t in trials]
