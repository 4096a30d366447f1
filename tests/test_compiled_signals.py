"""Ctrl-C and SIGTERM reach every compiled loop within a second, deadline or not.

Python runs a signal's handler only between two bytecodes, so a compiled search
must come back from nopython code now and then. Every kernel pauses every
``CHUNK_EVERY`` placements (the probes of an estimate: between two probes past
that many) with no time limit too, and resumes from its arrays with the counters
unchanged (the exactness suites run through those pauses, and so does
:func:`test_an_untimed_search_pauses_and_its_counters_are_unchanged` here).

The runs here are real ``btlab run --backend serial`` processes: an untimed
compiled estimate of ``probes: 2**40`` and an untimed compiled count of 8 x 8,
each after a quick trial; the signal is sent once the long trial has started
(test hook ``mark:``) and its kernel has had time to enter its loop.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pandas as pd
import pytest
from helpers.cli import write
from helpers.sync import fault_env, wait_for
from test_faults import Btlab, ids_of

pytest.importorskip("numba")

from btlab.experiments.compiled import (  # noqa: E402
    estimate_kernel,  # noqa: E402
    solve_knights_compiled,
    solve_queens_compiled,
    warm_up,
)
from btlab.experiments.compiled._driver import CHUNK_EVERY, PAUSE_EVERY, pause_mask  # noqa: E402
from btlab.experiments.compiled.knights import kernel as knights_kernel  # noqa: E402
from btlab.experiments.core import Budget  # noqa: E402

ESTIMATE = """\
    name: untimed-estimate
    problem: knights_tour
    fixed: {board: [8, 8], mode: estimate, engine: compiled, strategy: iterative}
    matrix: {probes: [100, 1099511627776]}
"""

COUNT = """\
    name: untimed-count
    problem: knights_tour
    fixed: {strategy: iterative, mode: count, engine: compiled}
    matrix: {board: [[5, 5], [8, 8]]}
"""


def test_every_pause_mask_pauses():
    assert pause_mask(True) == PAUSE_EVERY - 1
    assert pause_mask(False) == pause_mask(False, True) == CHUNK_EVERY - 1
    params = estimate_kernel._params(Budget(None, None), 10)
    assert params[estimate_kernel.P_PAUSE] == CHUNK_EVERY


def _calls(module, run):
    """How many kernel calls ``run()`` makes through ``module.drive``, and its result."""
    calls = []
    drive = module.drive

    def counting(kernel, args, budget):
        def once(*a):
            calls.append(1)
            return kernel(*a)
        return drive(once, args, budget)

    module.drive = counting
    try:
        result = run()
    finally:
        module.drive = drive
    return len(calls), result


def test_an_untimed_search_pauses_and_its_counters_are_unchanged(monkeypatch):
    # Warnsdorff's count loop (run64_warnsdorff), no deadline: a call per CHUNK_EVERY
    cap = 2 * CHUNK_EVERY + 7
    solve_knights_compiled(6, 6, (0, 0), mode="count", heuristic="warnsdorff", max_nodes=9)
    calls, result = _calls(knights_kernel, lambda: solve_knights_compiled(
        6, 6, (0, 0), mode="count", heuristic="warnsdorff", max_nodes=cap))
    assert (calls, result.nodes, result.status.value) == (3, cap, "node_limit")
    # the same search in one call (the old behaviour: no pause) counts the same
    monkeypatch.setattr(knights_kernel, "pause_mask", lambda timed, chunked=False: -1)
    once = _calls(knights_kernel, lambda: solve_knights_compiled(
        6, 6, (0, 0), mode="count", heuristic="warnsdorff", max_nodes=cap))
    assert once[0] == 1
    assert once[1].counters() == result.counters()


def test_untimed_queens_and_probes_pause_too():
    from btlab.experiments.compiled import queens_kernel

    warm_up("queens")
    warm_up("estimate:queens")
    calls, result = _calls(queens_kernel, lambda: solve_queens_compiled(
        14, "count", max_nodes=CHUNK_EVERY + 1))
    assert (calls, result.nodes) == (2, CHUNK_EVERY + 1)
    calls, probes = _calls(estimate_kernel, lambda: estimate_kernel.run_queens_probes(
        8, False, 600_000, 1, Budget(None, None)))
    assert probes[1] == 600_000
    # a pause between two probes once CHUNK_EVERY placements passed (a probe: <= 8)
    assert probes[2] // (CHUNK_EVERY + 8) + 1 <= calls <= probes[2] // CHUNK_EVERY + 1
    assert calls >= 3


def _interrupted(tmp_path: Path, text: str, signum: int) -> tuple[Btlab, float, pd.DataFrame]:
    """Run ``text``, signal the driver 1.5 s after its second (long) trial started;
    return the process, the seconds from the signal to its end, and its rows."""
    cfg = write(tmp_path / "c.yaml", text)
    quick, long = ids_of(cfg)
    hook, out = tmp_path / "hook", tmp_path / "out"
    proc = Btlab("run", cfg, "--out", out, "--backend", "serial",
                 env=fault_env(hook, f"mark:{long}"))
    wait_for(hook / f"started-{long}", proc, 300)
    time.sleep(1.5)  # the kernel is loaded (a warm cache) and in its loop
    assert proc.poll() is None, proc.stdout + proc.stderr
    sent = time.monotonic()
    os.kill(proc.pid, signum)
    while proc.poll() is None and time.monotonic() - sent < 60:
        time.sleep(0.02)
    took = time.monotonic() - sent
    proc.wait(30)
    rows = pd.read_parquet(out)
    assert rows["trial_id"].tolist() == [quick], (proc.stdout, proc.stderr)
    return proc, took, rows


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["sigint", "sigterm"])
def test_an_untimed_compiled_estimate_stops_at_a_signal(tmp_path, signum):
    proc, took, rows = _interrupted(tmp_path, ESTIMATE, signum)
    assert proc.returncode == 130, proc.stdout + proc.stderr
    assert took < 5, took
    assert rows["status"].tolist() == ["exhausted"]
    assert rows["probes"].tolist() == [100]
    assert rows["error"].isna().all()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["sigint", "sigterm"])
def test_an_untimed_compiled_count_stops_at_a_signal(tmp_path, signum):
    proc, took, rows = _interrupted(tmp_path, COUNT, signum)
    assert proc.returncode == 130, proc.stdout + proc.stderr
    assert took < 5, took
    assert rows["solutions"].tolist() == [304]  # open tours of 5 x 5 from a corner
    assert rows["status"].tolist() == ["exhausted"]
    assert rows["error"].isna().all()
