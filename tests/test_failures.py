"""Failing trials seen as they happen and contained: error messages printed at once and
listed at the end, MemoryError and other exceptions as error rows, signals never stored as
a trial's error (Ctrl-C on the compiled engine included), on both backends.

Real processes: the CLI runs as ``python -m btlab`` in a session of its own
(tests/test_faults.py's :class:`Btlab`), faults come through ``BTLAB_TEST_FAULT``.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from helpers.sync import fault_env, release, wait_for
from test_faults import Btlab, btlab, ids_of, write

from btlab.execution.execute import error_message, run_trial
from btlab.execution.interrupts import catching_signals, is_interrupt, signals_seen
from btlab.problems import get_problem
from btlab.sweep.trial import Trial
from btlab.views.failures import LISTED, FailureLog

ROOT = Path(__file__).resolve().parent.parent


def _trial(n: int = 6) -> Trial:
    from btlab.config.model import parse_config
    from btlab.sweep.expand import expand

    text = f"name: t\nproblem: n_queens\nfixed: {{n: {n}, mode: count}}\n"
    return expand(parse_config(text, "<t>"))[0]


def _raising(exc: BaseException):
    def solve(columns, max_nodes, max_seconds, seed):
        raise exc
    return solve


# --------------------------------------------------------------------------- in process


@pytest.mark.parametrize("exc, first", [
    (RuntimeError("boom"), "RuntimeError: boom"),
    (RecursionError("maximum recursion depth exceeded"),
     "RecursionError: maximum recursion depth exceeded"),
    (MemoryError(), "MemoryError: out of memory"),
    (SystemExit(3), "SystemExit: the trial called sys.exit(3)"),
    (GeneratorExit(), "GeneratorExit: "),
])
def test_every_exception_of_a_trial_becomes_an_error_row(exc, first):
    row = run_trial(_trial(), solve=_raising(exc))
    assert row["status"] == "error"
    assert row["error"].startswith(first), row["error"]
    assert row["nodes"] is None and row["solution"] is None


def test_a_ray_worker_told_to_exit_exits():
    with pytest.raises(SystemExit):
        run_trial(_trial(), node_id="node-1", solve=_raising(SystemExit(0)))


def _numba_style_interrupt() -> SystemError:
    """What numba's dispatcher makes of a Ctrl-C: SystemError, twice, around the interrupt."""
    try:
        try:
            try:
                raise KeyboardInterrupt
            except KeyboardInterrupt as ki:
                raise SystemError("<function _numba_unpickle> returned a result with an "
                                  "exception set") from ki
        except SystemError as inner:
            raise SystemError("CPUDispatcher(<function build_geometry>) returned a result "
                              "with an exception set") from inner
    except SystemError as outer:
        return outer


def test_an_interrupt_wrapped_by_numba_is_an_interrupt_not_an_error():
    exc = _numba_style_interrupt()
    assert is_interrupt(exc)
    assert not is_interrupt(SystemError("returned a result with an exception set"))
    with pytest.raises(KeyboardInterrupt):
        run_trial(_trial(), solve=_raising(exc))
    with pytest.raises(KeyboardInterrupt):
        run_trial(_trial(), solve=_raising(KeyboardInterrupt()))


def test_a_signal_a_solver_swallowed_still_stops_the_trial():
    def swallowing(columns, max_nodes, max_seconds, seed):
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1)
        except Exception:  # noqa: BLE001 - what a careless solver does
            pass
        except KeyboardInterrupt:
            pass
        return get_problem("n_queens").solve(columns, max_nodes, max_seconds, seed)

    before = signals_seen()
    with catching_signals():
        with pytest.raises(KeyboardInterrupt):
            run_trial(_trial(), solve=swallowing)
    assert signals_seen() == before + 1


def test_memory_error_frees_the_frames_before_formatting():

    def hungry(columns, max_nodes, max_seconds, seed):
        big = bytearray(64 << 20)  # noqa: F841 - held by this frame when the error comes
        raise MemoryError

    try:
        hungry(None, None, None, 0)
    except MemoryError as exc:
        frame = exc.__traceback__.tb_next.tb_frame
        assert "big" in frame.f_locals
        text = error_message(exc)
        assert "big" not in frame.f_locals  # the 64 MiB went before the message was made
    assert text.startswith("MemoryError: out of memory")
    assert "in hungry" in text


def test_failure_log_lists_the_first_ones_and_counts_the_rest():
    lines: list[str] = []
    log = FailureLog(["n", "strategy"], lines.append)
    for i in range(LISTED + 5):
        log.seen({"trial_id": f"t{i}", "n": i, "strategy": "recursive", "seed": 0,
                  "repeat": 0, "status": "error", "error": f"\nValueError: bad {i}\nmore"})
    assert not log.seen({"trial_id": "ok", "status": "solved"})
    assert len(lines) == LISTED + 5
    assert lines[0] == "failed: trial t0 (n=0, strategy=recursive, seed=0, repeat=0): " \
                       "ValueError: bad 0"
    summary = log.summary("results/x")
    assert len(summary) == 1 + LISTED + 2
    assert summary[-2] == "  ... and 5 more with 5 other message(s)"
    assert "btlab show results/x" in summary[-1]


# --------------------------------------------------------------------------- real runs


KNIGHTS_5X5 = """\
    name: failing
    problem: knights_tour
    fixed: {board: [5, 5], heuristic: warnsdorff}
    matrix: {start: all}
    budget: {nodes: 2000}
"""


def _assert_printed_as_they_happened(out: str, ids: list[str]) -> None:
    lines = out.splitlines()
    written = next(i for i, line in enumerate(lines) if "rows written to" in line)
    for trial_id in ids:
        at = [i for i, line in enumerate(lines) if line.startswith(f"failed: trial {trial_id}")]
        assert at and at[0] < written, out          # printed during the run, not after it
        assert any(f"  trial {trial_id} (" in line for line in lines[written:]), out  # listed
    assert "start_row=" in out and "start_col=" in out


@pytest.mark.parametrize("backend", ["serial", pytest.param("ray", marks=pytest.mark.slow)])
def test_each_failing_trial_is_printed_as_it_happens_and_listed_at_the_end(tmp_path, backend):
    cfg = write(tmp_path / "f.yaml", KNIGHTS_5X5)
    ids = ids_of(cfg)
    failing = [ids[3], ids[7], ids[20]]
    faults = f"raise:{ids[3]},memory:{ids[7]},exit:{ids[20]}"
    out = tmp_path / "out"
    proc = btlab("run", cfg, "--out", out, "--backend", backend, "--workers", 2,
                 env={"BTLAB_TEST_FAULT": faults, "BTLAB_PROGRESS_INTERVAL": "0.2"},
                 timeout=240)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    _assert_printed_as_they_happened(proc.stdout, failing)
    assert "3 trial(s) ended with status error" in proc.stdout
    df = pd.read_parquet(out).set_index("trial_id")
    assert len(df) == 25                                          # the sweep went on
    failed = df[df["status"] == "error"]
    assert sorted(failed.index) == sorted(failing)
    assert failed.loc[ids[3], "error"].startswith("RuntimeError: fault injected")
    assert failed.loc[ids[7], "error"].startswith("MemoryError: out of memory")
    if backend == "serial":
        assert failed.loc[ids[20], "error"].startswith("SystemExit: the trial called sys.exit")
    else:  # a Ray worker that exits: its trial is rerun, then given up
        assert "worker died" in failed.loc[ids[20], "error"]


def test_more_failures_than_listed_are_counted_with_where_to_find_them(tmp_path):
    cfg = write(tmp_path / "f.yaml", KNIGHTS_5X5)
    ids = ids_of(cfg)
    out = tmp_path / "out"
    proc = btlab("run", cfg, "--out", out, "--backend", "serial", "--quiet",
                 env={"BTLAB_TEST_FAULT": ",".join(f"raise:{i}" for i in ids)})
    assert proc.returncode == 1
    # one message, 25 times: printed once as it happens, and once with its count at the end
    assert proc.stdout.count("failed: trial ") == 1
    # + the headline's first error, + the finding's ("All 25 trials failed (first error: ...)")
    assert proc.stdout.count("RuntimeError: fault injected") == 2 + 1 + 1
    assert "Finding: All 25 trials failed (first error: RuntimeError: fault injected" in (
        " ".join(proc.stdout.split()))
    assert (f"  25 trials: RuntimeError: fault injected by BTLAB_TEST_FAULT (test hook) "
            f"(the first: trial {ids[0]} (") in proc.stdout
    assert f"btlab show {out}" in proc.stdout


def _limited(kib: int):
    def preexec() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (kib * 1024, kib * 1024))
    return preexec


@pytest.mark.slow
def test_memory_error_under_ulimit_is_an_error_row_and_the_sweep_goes_on(tmp_path):
    """The field case: functional count for n = 8, 13, 15, 9 under ulimit -v 3000000."""
    cfg = write(tmp_path / "q.yaml", """\
        name: functional
        problem: n_queens
        fixed: {strategy: functional, mode: count}
        matrix: {n: [8, 13, 15, 9]}
    """)
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "btlab", "run", cfg, "--out", out,
                           "--backend", "serial", "--quiet"], cwd=ROOT, capture_output=True,
                          text=True, timeout=900, preexec_fn=_limited(3_000_000))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    df = pd.read_parquet(out).set_index("n")
    assert sorted(df.index) == [8, 9, 13, 15]
    assert df.loc[15, "status"] == "error"
    assert df.loc[15, "error"].startswith("MemoryError")
    assert df.loc[[8, 9, 13], "solutions"].tolist() == [92, 352, 73_712]
    assert "failed: trial " in proc.stdout


# --------------------------------------------------------------------------- signals


COMPILED_2000 = """\
    name: interrupted
    problem: knights_tour
    fixed: {board: [2000, 2000], heuristic: warnsdorff, strategy: iterative, engine: compiled}
    budget: {nodes: 1000}
    repeats: 200
"""


def _interrupt_run(tmp_path: Path, backend: str, signum: int, after: int,
                   group: bool = False) -> tuple[Btlab, pd.DataFrame | None]:
    """Start a run of :data:`COMPILED_2000`, send ``signum`` once trial number ``after``
    has started (to the driver, or to its whole process group as a terminal's Ctrl-C
    does), while the compiled kernels run. The last trial blocks (test hook) until the
    signal: the run cannot end first, however fast the machine."""
    cfg = write(tmp_path / "c.yaml", COMPILED_2000)
    ids = ids_of(cfg)
    hook = tmp_path / "hook"
    out = tmp_path / "out"
    proc = Btlab("run", cfg, "--out", out, "--backend", backend, "--workers", 2,
                 env=fault_env(hook, f"mark:{ids[after]}", f"block:{ids[-1]}"))
    wait_for(hook / f"started-{ids[after]}", proc, 180)
    if group:
        os.killpg(proc.pid, signum)
    else:
        os.kill(proc.pid, signum)
    proc.wait(180)
    rows = pd.read_parquet(out) if out.exists() and any(out.glob("part-*")) else None
    return proc, rows


def _assert_interrupted_cleanly(proc: Btlab, rows: pd.DataFrame | None) -> None:
    assert proc.returncode == 130, proc.stdout + proc.stderr
    assert "failed: trial" not in proc.stdout
    if rows is not None:
        assert (rows["status"] == "node_limit").all(), rows["error"].dropna().tolist()
        assert rows["error"].isna().all()
        assert len(rows) < 200


def test_ctrl_c_on_the_compiled_engine_is_never_a_trial_error(tmp_path):
    proc, rows = _interrupt_run(tmp_path, "serial", signal.SIGINT, 20)
    _assert_interrupted_cleanly(proc, rows)


@pytest.mark.slow
@pytest.mark.parametrize("attempt", range(5))
def test_ctrl_c_on_the_compiled_engine_five_times(tmp_path, attempt):
    proc, rows = _interrupt_run(tmp_path, "serial", signal.SIGINT, 10 + 30 * attempt)
    _assert_interrupted_cleanly(proc, rows)


@pytest.mark.slow
def test_sigterm_on_the_compiled_engine_is_never_a_trial_error(tmp_path):
    proc, rows = _interrupt_run(tmp_path, "serial", signal.SIGTERM, 20)
    _assert_interrupted_cleanly(proc, rows)


@pytest.mark.slow
def test_ctrl_c_to_the_process_group_on_ray_leaves_no_error_row(tmp_path):
    """A terminal's Ctrl-C reaches the driver and every Ray worker of its group."""
    proc, rows = _interrupt_run(tmp_path, "ray", signal.SIGINT, 20, group=True)
    _assert_interrupted_cleanly(proc, rows)


# --------------------------------------------------------------------------- signals at the end


STAGE_SWEEP = """\
    name: ending
    problem: n_queens
    fixed: {strategy: recursive, mode: count}
    matrix: {n: [5, 6]}
    repeats: 3
"""

_SIGNALS = [signal.SIGHUP, signal.SIGINT, signal.SIGTERM]


def _signal_at(tmp_path: Path, backend: str, stage: str, signum: int) -> Btlab:
    """Run :data:`STAGE_SWEEP`, paused (test hook ``pause_at``) at ``stage`` of its end;
    send ``signum`` there, then let it go on."""
    cfg = write(tmp_path / "c.yaml", STAGE_SWEEP)
    hook = tmp_path / "hook"
    proc = Btlab("run", cfg, "--out", tmp_path / "out", "--backend", backend, "--workers", 1,
                 env=fault_env(hook, f"pause_at:{stage}"))
    try:
        wait_for(hook / f"at-{stage}", proc, 120)
        os.kill(proc.pid, signum)
        release(hook)
        proc.wait(120)
    finally:
        proc.cleanup()
    return proc


@pytest.mark.parametrize("signum", _SIGNALS, ids=lambda s: signal.Signals(s).name)
@pytest.mark.parametrize("stage", ["last_rows", "shutdown", "tables", "exit"])
def test_a_signal_at_any_stage_of_a_runs_end_is_handled(tmp_path, stage, signum):
    """Writing the last rows, shutting the backend down, printing the tables: a signal
    exits 130 with every row on disk (the rows and the shutdown are finished first); once
    the exit status is decided, it is the status, the signal ignored. Never death by it."""
    proc = _signal_at(tmp_path, "serial", stage, signum)
    output = proc.stdout + proc.stderr
    assert proc.returncode == (0 if stage == "exit" else 130), output
    assert "Traceback" not in output
    rows = pd.read_parquet(tmp_path / "out")
    assert len(rows) == 6 and rows["trial_id"].is_unique and rows["error"].isna().all()
    if stage in ("last_rows", "shutdown"):
        assert "interrupted: finished rows are on disk" in proc.stdout


@pytest.mark.parametrize("stage", ["shutdown", "ray_shutdown",
                                   pytest.param("tables", marks=pytest.mark.slow)])
def test_a_sigterm_while_ray_shuts_down_or_after_is_handled(tmp_path, stage):
    """On Ray too: ray.init installs a SIGTERM handler of its own (sys.exit), and
    ray.shutdown sets SIGTERM's to SIG_DFL behind Python's back (ray_shutdown: paused
    just after it); the run's handlers stay installed across it and the tables."""
    proc = _signal_at(tmp_path, "ray", stage, signal.SIGTERM)
    assert proc.returncode == 130, proc.stdout + proc.stderr
    assert len(pd.read_parquet(tmp_path / "out")) == 6
