"""Synchronising a test with a running ``btlab run``, never with the clock.

The test hook ``BTLAB_TEST_FAULT`` (:mod:`btlab.execution.execute`) makes a trial
announce that it started (``mark:<trial id>``, ``block:<trial id>``: a file
``started-<trial id>`` holding its pid, in ``$BTLAB_TEST_FAULT_DIR``) and,
for ``block``, wait until the test writes ``release``; ``pause_at:<stage>``
does the same at a stage of the run's end (``at-<stage>``); ``kernels:...``
does it in subtree tasks (``kernels-<pid>``, ``importing-<pid>``,
``interrupted-<pid>``). A test waits for the file, acts (a signal, a kill,
a ``ray.cancel``), then releases.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable


def fault_env(folder: Path, *faults: str) -> dict[str, str]:
    """The environment of a run with these faults, announcing in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    return {"BTLAB_TEST_FAULT": ",".join(faults), "BTLAB_TEST_FAULT_DIR": str(folder)}


def wait_for(path: Path, proc=None, timeout: float = 120,
             also: Callable[[], bool] = lambda: True) -> int:
    """Wait until the run writes ``path`` (and ``also()`` holds); return the pid it holds.

    ``proc`` (a :class:`test_faults.Btlab` or a ``Popen``): fail at once, with its
    output, if it ends first. ``timeout`` only bounds a broken run.
    """
    deadline = time.monotonic() + timeout
    while not (path.exists() and also()):
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"the run ended before {path.name}: "
                                 + getattr(proc, "stdout", "") + getattr(proc, "stderr", ""))
        if time.monotonic() > deadline:
            raise AssertionError(f"no {path.name} after {timeout} s")
        time.sleep(0.01)
    return int(path.read_text())


def release(folder: Path) -> None:
    """Let every blocked trial and paused stage go on."""
    (folder / "release").touch()


def wait_for_pids(folder: Path, prefix: str, count: int = 1, timeout: float = 120) -> list[int]:
    """Wait until ``count`` files ``<prefix><pid>`` are in ``folder``; return their pids, sorted.

    For announcements named by the announcing process (``kernels-<pid>``).
    ``timeout`` only bounds a broken run.
    """
    deadline = time.monotonic() + timeout
    while True:
        pids = sorted(int(f.name[len(prefix):]) for f in folder.glob(f"{prefix}*")
                      if f.name[len(prefix):].isdigit())
        if len(pids) >= count:
            return pids
        if time.monotonic() > deadline:
            raise AssertionError(f"{len(pids)} of {count} {prefix}<pid> files after {timeout} s")
        time.sleep(0.01)
