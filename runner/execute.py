"""Run one trial, wherever it runs: solve, time, verify, and make its row.

This module is imported by every backend (serial, Ray workers) and knows
nothing of Ray or files. A trial that raises becomes a row with status
``error`` and the message; a solution that fails the checker does too.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import time
import traceback
from datetime import datetime, timezone
from typing import Any, Iterable, Mapping

from experiments.core import Status

from .problems import get_problem
from .trial import Trial

#: Metric columns every row carries (the metrics contract, ``docs/metrics.md``), in order.
METRIC_COLUMNS = ("status", "nodes", "backtracks", "dead_ends", "checks", "solutions",
                  "max_depth", "wall_ns", "cpu_ns")

_HOST = socket.gethostname()

#: Test hook, not for users: ``BTLAB_TEST_FAULT=KIND:PREFIX[,KIND:PREFIX...]`` makes every
#: trial whose id starts with PREFIX misbehave: ``raise`` raises, ``hang`` sleeps forever
#: without checking its clock (as a solver stuck in C code would), ``crash`` kills its own
#: process (as a segfault would). Read when each trial starts, so that Ray workers, which
#: inherit the driver's environment, see it too.
TEST_FAULT_ENV = "BTLAB_TEST_FAULT"


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


def run_trial(trial: Trial, node_id: str | None = None, solve=None) -> dict[str, Any]:
    """Run one trial and return its row (without the run-level provenance).

    Args:
        trial: the trial.
        node_id: the Ray node id of the worker, when run by Ray.
        solve: the solve call ``(columns, max_nodes, max_seconds, seed) ->
            SearchResult``; default: the problem's. A split trial
            (``trial.split`` set) is run by its backend with the split's
            solve call (:func:`runner.split_runner.serial_solver`).

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
        "trial_id": trial.trial_id,
        **trial.columns,
        "budget_nodes": trial.budget_nodes,
        "budget_seconds": trial.budget_seconds,
        "seed": trial.seed,
        "repeat": trial.repeat,
        "host": _HOST,
        "node_id": node_id,
        "pid": os.getpid(),
        "started_at": datetime.now(timezone.utc),
        "plugins": json.dumps(dict(trial.plugins), sort_keys=True) if trial.plugins else None,
    }
    prepared: Mapping[str, Any] = {}
    extra_columns: tuple[str, ...] = ()
    cpu0 = time.process_time_ns()
    wall0 = time.perf_counter_ns()
    try:
        problem = get_problem(trial.problem)
        extra_columns = problem.extra_columns
        if problem.prepare is not None:
            prepared = problem.prepare(trial.columns)
            cpu0 = time.process_time_ns()
            wall0 = time.perf_counter_ns()
        _inject_test_fault(trial.trial_id)
        if solve is None:
            if trial.split is not None:
                raise ValueError("a split trial runs through its backend's split solver")
            solve = problem.solve
        result = solve(trial.columns, trial.budget_nodes, trial.budget_seconds,
                       trial.solver_seed)
        wall = time.perf_counter_ns() - wall0
        cpu = time.process_time_ns() - cpu0
        error = None
        if result.solution is not None:
            try:
                problem.verify(trial.columns, result.solution)
            except ValueError as exc:
                error = f"solver returned an invalid solution: {exc}"
        row.update(result.counters())
        row.update(wall_ns=wall, cpu_ns=cpu,
                   solution=list(result.solution) if result.solution is not None else None,
                   error=error)
        for name in problem.extra_columns:
            row[name] = prepared[name] if name in prepared else result.extra.get(name)
        if error is not None:
            row["status"] = Status.ERROR.value
    except Exception as exc:  # a failing trial must not stop the run
        wall = time.perf_counter_ns() - wall0
        cpu = time.process_time_ns() - cpu0
        row.update(status=Status.ERROR.value, nodes=None, backtracks=None, dead_ends=None,
                   checks=None, solutions=None, max_depth=None, wall_ns=wall, cpu_ns=cpu,
                   solution=None,
                   error=f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=-3)}")
        for name in extra_columns:
            row[name] = prepared.get(name)
    return row


def run_batch(trials: Iterable[Trial], node_id: str | None = None) -> list[dict[str, Any]]:
    """Run several trials one after the other (one Ray task runs one batch)."""
    return [run_trial(t, node_id) for t in trials]
