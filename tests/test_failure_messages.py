"""Failing trials whose failure is itself hostile: a plug-in that raises KeyboardInterrupt
or calls ``os._exit``, an exception whose ``str()`` raises, a 10 MB message, control
characters in a message, a sweep whose every trial fails.

Each is contained: the trial gets an error row with a readable message, the run goes on,
what is printed stays short and safe for a terminal.
"""

from __future__ import annotations

import os
import signal
import sys

import pandas as pd
import pytest
from test_faults import btlab, write

from btlab.execution.execute import MESSAGE_CHARS, ProcessExitCalled, error_message, run_trial
from btlab.execution.interrupts import catching_signals, counting_signals
from btlab.sweep.trial import Trial
from btlab.views.failures import LINE_CHARS, LISTED, LIVE, FailureLog, first_line


def _trial(n: int = 6) -> Trial:
    from btlab.config.model import parse_config
    from btlab.sweep.expand import expand

    text = f"name: t\nproblem: n_queens\nfixed: {{n: {n}, mode: count}}\n"
    return expand(parse_config(text, "<t>"))[0]


def _solve(action):
    def solve(columns, max_nodes, max_seconds, seed):
        return action()
    return solve


class _StrRaises(Exception):
    def __str__(self):
        raise ValueError("no")


class _StrInterrupts(Exception):
    def __str__(self):
        raise KeyboardInterrupt


def _raise(exc):
    def action():
        raise exc
    return action


# --------------------------------------------------------------------------- in process


def test_a_keyboard_interrupt_the_trial_raises_itself_is_its_error_in_the_serial_run():
    with catching_signals():
        assert counting_signals()
        row = run_trial(_trial(), solve=_solve(_raise(KeyboardInterrupt())))
    assert row["status"] == "error"
    assert row["error"].startswith("KeyboardInterrupt")
    assert not counting_signals()


def test_without_the_run_s_handlers_a_keyboard_interrupt_still_stops():
    # a Ray worker: no handler of ours counts signals, so any interrupt is taken as one
    with pytest.raises(KeyboardInterrupt):
        run_trial(_trial(), solve=_solve(_raise(KeyboardInterrupt())))


def test_a_real_signal_swallowed_by_the_trial_still_stops_the_run():
    def action():
        try:
            os.kill(os.getpid(), signal.SIGINT)
        except KeyboardInterrupt:
            pass
        raise RuntimeError("went on")
    with catching_signals(), pytest.raises(KeyboardInterrupt):
        run_trial(_trial(), solve=_solve(action))


def test_a_signal_while_the_message_is_made_still_stops_the_run():
    class Slow(Exception):
        def __str__(self):
            os.kill(os.getpid(), signal.SIGINT)  # the handler raises KeyboardInterrupt here
            return "unreached"
    with catching_signals(), pytest.raises(KeyboardInterrupt):
        run_trial(_trial(), solve=_solve(_raise(Slow())))


@pytest.mark.parametrize("exc, expected", [
    (_StrRaises("x"), "_StrRaises: (its message could not be made: str() raised ValueError)"),
    (_StrInterrupts("x"),
     "_StrInterrupts: (its message could not be made: str() raised KeyboardInterrupt)"),
])
def test_an_exception_whose_str_raises_gives_an_error_row(exc, expected):
    with catching_signals():
        row = run_trial(_trial(), solve=_solve(_raise(exc)))
    assert row["status"] == "error"
    assert row["error"].splitlines()[0] == expected


def test_a_huge_message_is_cut_and_says_so():
    message = error_message(RuntimeError("A" * 10_000_000))
    lines = message.splitlines()
    assert lines[0] == "RuntimeError: " + "A" * MESSAGE_CHARS
    assert lines[1] == "... (message cut: 10,000,000 characters in all)"
    assert lines[2] == "Traceback (most recent call last):"
    assert len(message) < MESSAGE_CHARS + 1000


def test_os_exit_in_a_serial_trial_is_its_error_and_the_process_lives():
    row = run_trial(_trial(), solve=_solve(lambda: os._exit(0)))
    assert row["status"] == "error"
    assert row["error"].startswith(
        "ProcessExitCalled: the trial called os._exit(0); a trial cannot end the run")
    assert os._exit is not None and os._exit.__name__ == "_exit"  # the real one is back


def test_os_exit_in_a_child_the_trial_forks_still_ends_the_child():
    def action():
        pid = os.fork()
        if pid == 0:
            os._exit(7)
        _, status = os.waitpid(pid, 0)
        raise RuntimeError(f"child exit {os.waitstatus_to_exitcode(status)}")
    row = run_trial(_trial(), solve=_solve(action))
    assert row["error"].startswith("RuntimeError: child exit 7")


def test_process_exit_called_is_not_an_exception_a_solver_swallows():
    assert not issubclass(ProcessExitCalled, Exception)


@pytest.mark.parametrize("error, line", [
    ("RuntimeError: \x00", "RuntimeError: \\x00"),
    ("\n\nRuntimeError: [/bold] \x1b[2J\r", "RuntimeError: [/bold] \\x1b[2J"),
    ("", "-"),
    (None, "-"),
])
def test_first_line_is_safe_to_print(error, line):
    assert first_line(error) == line


def test_first_line_is_cut():
    line = first_line("E: " + "A" * 5000)
    assert line == "E: " + "A" * (LINE_CHARS - 3) + "... (5,003 characters)"


def test_a_sweep_whose_every_trial_fails_prints_a_bounded_number_of_lines():
    lines: list[str] = []
    log = FailureLog(["n"], lines.append)
    for i in range(1000):
        log.seen({"trial_id": f"{i:016x}", "n": i, "status": "error", "error": "E: x"})
    assert log.count == 1000
    assert lines == ["failed: trial 0000000000000000 (n=0): E: x"]  # identical: folded
    assert log.summary("results/x")[:2] == [
        "the trials that failed in this run (1,000):",
        "  1,000 trials: E: x (the first: trial 0000000000000000 (n=0))"]
    lines.clear()
    log = FailureLog(["n"], lines.append)
    for i in range(1000):  # 1,000 different messages
        log.seen({"trial_id": f"{i:016x}", "n": i, "status": "error", "error": f"E: {i}"})
    assert len(lines) == LIVE + 1
    assert lines[LIVE].startswith(f"failed: {LIVE} different messages so far; further ones "
                                  "are counted")
    summary = log.summary("results/x")
    assert len(summary) == LISTED + 3
    more = 1000 - LISTED
    assert summary[-2] == f"  ... and {more:,} more with {more:,} other message(s)"


# --------------------------------------------------------------------------- the CLI


PLUGIN = '''
import os, sys
class Hostile(Exception):
    def __str__(self):
        raise ValueError("no")
def hard_exit(board, square, candidates):
    os._exit(0)
def interrupt(board, square, candidates):
    raise KeyboardInterrupt
def bad_str(board, square, candidates):
    raise Hostile()
def control(board, square, candidates):
    raise RuntimeError("\\x1b[2J" + "B" * 2_000_000)
'''


@pytest.mark.parametrize("rule, first", [
    ("hard_exit", "ProcessExitCalled: the trial called os._exit(0); a trial cannot end the run"),
    ("interrupt", "KeyboardInterrupt: "),
    ("bad_str", "Hostile: (its message could not be made: str() raised ValueError)"),
    ("control", "RuntimeError: \x1b[2JBBB"),
])
def test_hostile_plug_ins_give_error_rows_in_a_serial_run(tmp_path, rule, first):
    write(tmp_path / "hostile.py", PLUGIN)
    cfg = write(tmp_path / "c.yaml", f"""
name: hostile
problem: knights_tour
fixed: {{board: [5, 5], strategy: recursive, mode: first, heuristic: "hostile:{rule}"}}
matrix: {{start: [[0, 0], [1, 1]]}}
budget: {{nodes: 1000, seconds: 10}}
""")
    out = tmp_path / "out"
    run = btlab("run", cfg, "--backend", "serial", "--out", out, cwd=tmp_path,
                env={"PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])})
    assert run.returncode == 1, run.stderr
    df = pd.read_parquet(out)
    assert len(df) == 2
    assert (df["status"] == "error").all()
    assert all(e.startswith(first) for e in df["error"]), df["error"].str[:80].tolist()
    assert all(len(e) <= MESSAGE_CHARS + 2000 for e in df["error"])
    assert run.stdout.count("failed: trial") == 1  # one message twice: folded
    assert "  2 trials: " in run.stdout
    assert "\x1b" not in run.stdout
    assert len(run.stdout) < 20_000
    assert "Traceback" not in run.stderr


# --------------------------------------------------------------------------- SIGHUP


def test_a_hangup_stops_the_run_as_ctrl_c_does():
    from btlab.execution.interrupts import signals_seen

    before = signals_seen()
    with catching_signals(), pytest.raises(KeyboardInterrupt, match="SIGHUP"):
        os.kill(os.getpid(), signal.SIGHUP)
        signal.sigtimedwait([], 0.1)  # let the handler run
    assert signals_seen() == before + 1


def test_a_hangup_ignored_under_nohup_stays_ignored():
    old = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with catching_signals():
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
            assert counting_signals()
            os.kill(os.getpid(), signal.SIGHUP)  # nothing happens
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, old)


def test_a_hangup_during_a_serial_run_keeps_the_finished_rows(tmp_path):
    from helpers.sync import fault_env, wait_for
    from test_faults import Btlab, ids_of

    cfg = write(tmp_path / "c.yaml", """
name: hup
problem: n_queens
fixed: {strategy: recursive, mode: count}
matrix: {n: [6, 7, 8]}
repeats: 20
""")
    ids = ids_of(cfg)
    hook = tmp_path / "hook"
    out = tmp_path / "out"
    # the 31st trial blocks (test hook) until the hangup: the run is in a trial, not its end
    run = Btlab("run", cfg, "--backend", "serial", "--out", out,
                env=fault_env(hook, f"block:{ids[30]}"))
    wait_for(hook / f"started-{ids[30]}", run, 60)
    os.kill(run.pid, signal.SIGHUP)
    run.wait(60)
    assert run.returncode == 130, (run.stdout, run.stderr)
    assert "interrupted: finished rows are on disk" in run.stdout
    df = pd.read_parquet(out)
    assert sorted(df["trial_id"]) == sorted(ids[:30]) and (df["status"] == "exhausted").all()
    assert df["trial_id"].is_unique


def test_a_trial_that_ignores_ctrl_c_does_not_disable_it_for_the_run():
    def action():
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # as a library's import might
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        raise RuntimeError("took the signals")
    with catching_signals():
        row = run_trial(_trial(), solve=_solve(action))
        assert row["error"].startswith("RuntimeError: took the signals")
        assert counting_signals()  # the run's handlers are back
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
            signal.sigtimedwait([], 0.1)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


# ---------------------------------------------------- a split trial planned in the driver


@pytest.mark.parametrize("rule, first", [
    ("hard_exit", "ProcessExitCalled: the trial called os._exit(0); a trial cannot end the run"),
    ("interrupt", "KeyboardInterrupt: "),
    ("leave", "SystemExit: the trial called sys.exit(0); a trial cannot end the run"),
    ("bad_str", "Hostile: (its message could not be made: str() raised ValueError)"),
])
def test_a_split_trial_whose_plan_runs_a_hostile_plug_in_gets_an_error_row(
        tmp_path, monkeypatch, rule, first):
    # on Ray the driver plans a split trial, running the plug-in in its own process:
    # os._exit ended the driver with status 0, sys.exit too, KeyboardInterrupt stopped the run
    from btlab.config.model import parse_config
    from btlab.execution.split_run import _Job
    from btlab.sweep.expand import expand

    write(tmp_path / "hostile.py", PLUGIN + "\ndef leave(board, square, candidates):\n"
          "    sys.exit(0)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    text = f"""
name: split-hostile
problem: knights_tour
split: {{depth: 2}}
fixed: {{board: [5, 5], start: [0, 0], mode: count, heuristic: "hostile:{rule}"}}
budget: {{seconds: 10}}
"""
    trial = expand(parse_config(text, "<t>"))[0]
    with catching_signals():
        job = _Job(trial, 1, None, None)
        row = job.row("node-1")
    assert row["status"] == "error"
    assert row["error"].startswith(first), row["error"][:100]
    assert row["node_id"] == "node-1"
