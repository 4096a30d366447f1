"""Progress lines when output is not a terminal (nohup, tmux logs, ``> file``)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from helpers.sync import fault_env, release

from btlab.cli.main import main
from btlab.errors import BtlabError
from btlab.views.progress import INTERVAL_ENV, LogProgress, format_duration, log_interval

ROOT = Path(__file__).resolve().parent.parent
LINE = re.compile(r"^progress: (\d+)/(\d+) trials \((\d+)%\), ([\d.,]+) trials/s, "
                  r"(ETA [^,]+|done), (\d+) errors? \((.+) elapsed\)$")


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_line_gives_done_total_rate_eta_and_errors():
    clock = Clock()
    lines: list[str] = []
    log = LogProgress(192, lines.append, 10.0, clock=clock)
    assert log.line() == ("progress: 0/192 trials (0%), 0.0 trials/s, ETA unknown, 0 errors "
                          "(0 s elapsed)")
    clock.now += 40
    log.update(120, 1)
    # 120 in 40 s: 3 trials/s; 72 left: 24 s
    assert log.line() == ("progress: 120/192 trials (62%), 3.0 trials/s, ETA 24 s, 1 error "
                          "(40 s elapsed)")
    log.subtrees(12, 306)
    clock.now += 24
    log.update(192, 3)
    assert log.line() == ("progress: 192/192 trials (100%), 3.0 trials/s, done, 3 errors; "
                          "subtrees of the split trial: 12/306 (1 min 04 s elapsed)")


def test_durations():
    assert [format_duration(s) for s in (0.4, 21, 59.6, 185, 3599, 7620)] == [
        "0 s", "21 s", "1 min 00 s", "3 min 05 s", "59 min 59 s", "2 h 07 min"]


def test_the_thread_prints_at_the_interval_and_once_at_the_end():
    lines: list[str] = []
    log = LogProgress(10, lines.append, 0.05)
    log.update(4, 0)
    log.start()
    deadline = time.monotonic() + 30
    while len(lines) < 3 and time.monotonic() < deadline:  # three lines from the thread
        time.sleep(0.01)
    log.update(10, 0)
    log.stop()
    assert len(lines) >= 4, lines
    assert lines[0].startswith("progress: 4/10 trials (40%)")
    assert lines[-1].startswith("progress: 10/10 trials (100%)")
    assert log._thread is None and not any(  # stopped: the thread is joined
        t.name == "btlab-progress" and t.is_alive() for t in threading.enumerate())


def test_the_interval_comes_from_the_environment(monkeypatch):
    monkeypatch.delenv(INTERVAL_ENV, raising=False)
    assert log_interval() == 10.0
    monkeypatch.setenv(INTERVAL_ENV, "0.25")
    assert log_interval() == 0.25
    for bad in ("0", "-1", "soon", "nan", "inf"):
        monkeypatch.setenv(INTERVAL_ENV, bad)
        with pytest.raises(BtlabError, match=f"{INTERVAL_ENV}='{bad}': expected a number of "
                           "seconds > 0"):
            log_interval()


def test_a_bad_interval_exits_2_before_anything_is_written(tmp_path, monkeypatch, capsys):
    config = tmp_path / "c.yaml"
    config.write_text("name: c\nproblem: knights_tour\nfixed: {board: [5, 5]}\n")
    monkeypatch.setenv(INTERVAL_ENV, "soon")
    assert main(["run", str(config), "--backend", "serial", "--out", str(tmp_path / "o")]) == 2
    assert not (tmp_path / "o").exists()
    assert "expected a number of seconds > 0" in capsys.readouterr().err


#: 8 trials of plain backtracking on 6 x 6, 150,000 placements each (none finds a tour
#: within the budget from these starts but (0, 1)), about 0.15 s each in pure Python
SLOW = textwrap.dedent("""\
    name: slow
    problem: knights_tour
    fixed: {board: [6, 6], strategy: iterative, mode: first}
    matrix:
      start: [[0, 0], [0, 1], [0, 2], [1, 1], [1, 2], [2, 2], [0, 3], [1, 3]]
    budget: {nodes: 150_000}
    seed: 1
""")


def test_a_run_logged_to_a_file_shows_progress_while_it_runs(tmp_path):
    config = tmp_path / "slow.yaml"
    config.write_text(SLOW)
    log = tmp_path / "run.log"
    env = {k: v for k, v in os.environ.items() if k != "FORCE_COLOR"}
    env.update({INTERVAL_ENV: "0.2", "PYTHONPATH": str(ROOT), "RAY_ADDRESS": "",
                # a fault in one trial: the lines count it; the one before blocks until
                # the test has seen a line (test hook), so that one comes while the run goes on
                **fault_env(tmp_path / "hook", "raise:" + _trial_id(config, [1, 3]),
                            "block:" + _trial_id(config, [1, 2]))})
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "btlab", "run", str(config),
                                 "--backend", "serial", "--out", str(tmp_path / "out")],
                                stdout=out, stderr=subprocess.STDOUT, env=env, cwd=tmp_path)
    try:
        seen_while_running: list[str] = []
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            lines = [x for x in log.read_text().splitlines() if x.startswith("progress:")]
            if lines and proc.poll() is None:
                seen_while_running = lines
                break
            time.sleep(0.05)
        release(tmp_path / "hook")
        assert proc.wait(timeout=120) == 1  # one trial raised
    finally:
        if proc.poll() is None:
            proc.kill()
    text = log.read_text()
    assert seen_while_running, f"no progress line before the run ended:\n{text}"
    first = LINE.match(seen_while_running[0])
    assert first, seen_while_running[0]
    assert int(first[2]) == 8 and int(first[1]) < 8  # written before the last trial ended
    lines = [x for x in text.splitlines() if x.startswith("progress:")]
    assert len(lines) >= 2
    parsed = [LINE.match(x) for x in lines]
    assert all(parsed), lines
    done = [int(m[1]) for m in parsed]
    assert done == sorted(done)
    for m in parsed:
        assert int(m[2]) == 8 and int(m[3]) == 100 * int(m[1]) // 8
    last = parsed[-1]
    assert (last[1], last[3], last[5], last[6]) == ("8", "100", "done", "1")
    # no escape codes and no bar ("trials ━━━━ 8/8 ...") in the log
    assert "\x1b[" not in text
    assert not [x for x in text.splitlines() if x.startswith("trials")]
    assert "8 rows written to" in text


def _trial_id(config: Path, start: list[int]) -> str:
    from btlab.config.model import load_config
    from btlab.sweep.expand import iter_trials

    ids = [t.trial_id for t in iter_trials(load_config(config))
           if [t.columns["start_row"], t.columns["start_col"]] == start]
    assert len(ids) == 1
    return ids[0]


def test_quiet_prints_no_progress_lines(tmp_path, monkeypatch, capsys):
    config = tmp_path / "slow.yaml"
    config.write_text(SLOW.replace("150_000", "2_000"))
    monkeypatch.setenv(INTERVAL_ENV, "0.01")
    assert main(["run", str(config), "--backend", "serial", "--out", str(tmp_path / "q"),
                 "--quiet"]) == 0
    assert "progress:" not in capsys.readouterr().out
    assert main(["run", str(config), "--backend", "serial", "--out", str(tmp_path / "l")]) == 0
    out = capsys.readouterr().out
    # capsys is no terminal: the last line at least, with all 8 trials
    assert "progress: 8/8 trials (100%)" in out
