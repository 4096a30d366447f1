"""Ctrl-C while the embedded Ray starts: exit 130, no crash, no process left behind
(issue 26, kind 11).

Each run has a Ray temp folder of its own (RAY_TMPDIR), so the processes its Ray
started are found by PID, from the folder in their command lines; nothing else on
the machine is looked at or stopped (never `ray stop`)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pytest

pytest.importorskip("ray")

CONFIG = """\
name: start
problem: knights_tour
fixed: {board: 5, heuristic: warnsdorff}
budget: {nodes: 30}
matrix: {seed: 1..50}
"""


def _started_by(folder: str) -> list[int]:
    """PIDs of the processes whose command line names ``folder``."""
    pids = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                if folder.encode() in fh.read():
                    pids.append(int(name))
        except OSError:
            continue
    return pids


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("delay", [0.0, 0.8, 1.6, 2.6])
def test_ctrl_c_while_ray_starts(tmp_path, delay):
    ray_tmp = tempfile.mkdtemp(prefix="btr", dir="/tmp")  # short: Ray's socket paths
    try:
        (tmp_path / "s.yaml").write_text(CONFIG)
        (tmp_path / "home").mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}
        env.update(RAY_TMPDIR=ray_tmp, HOME=str(tmp_path / "home"), RAY_ADDRESS="",
                   PYTHONUNBUFFERED="1", PYTHONPATH=os.pathsep.join(sys.path))
        proc = subprocess.Popen(
            [sys.executable, "-m", "btlab", "run", str(tmp_path / "s.yaml"), "--out",
             str(tmp_path / "out"), "--workers", "1"], env=env, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        assert proc.stdout is not None
        lines = []
        for line in proc.stdout:  # the line printed just before Ray starts
            lines.append(line)
            if "to run (ray backend" in line:
                break
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        rest, _ = proc.communicate(timeout=120)
        out = "".join(lines) + rest
        assert proc.returncode == 130, out[-3000:]
        assert "Traceback" not in out and "Segmentation" not in out
        assert "interrupted" in out
        deadline = time.monotonic() + 10  # Ray's processes notice their parent is gone
        while _started_by(ray_tmp) and time.monotonic() < deadline:
            time.sleep(0.2)
        left = _started_by(ray_tmp)
        for pid in left:  # only the ones this test's run started
            os.kill(pid, signal.SIGKILL)
        assert not left, f"left running: {left}"
    finally:
        shutil.rmtree(ray_tmp, ignore_errors=True)
