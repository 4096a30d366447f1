"""Progress as plain lines, for output that is not a terminal (nohup, tmux logs, ``> file``).

A terminal gets rich's progress bar; a log file would get nothing from it
until the run ends. :class:`LogProgress` prints instead, every
``interval`` seconds (like tqdm's ``mininterval``), from a thread of its
own so that a line comes even while a long trial runs::

    progress: 120/192 trials (62%), 3.4 trials/s, ETA 21 s, 0 errors

and the same line once more at the end. The interval is 10 s unless the
environment variable ``BTLAB_PROGRESS_INTERVAL`` gives another (seconds,
> 0; the tests use a fraction of a second).

Whatever btlab prints goes through a :class:`ShownConsole`: user text in it (a
folder name, an override, a stored value, a plug-in's error) is shown with its
control characters escaped (:func:`btlab.errors.shown`).
"""

from __future__ import annotations

import math
import os
import threading
import time
from typing import Any, Callable

from rich.console import Console

from btlab.errors import BtlabError, shown

#: Environment variable: seconds between two progress lines in a log.
INTERVAL_ENV = "BTLAB_PROGRESS_INTERVAL"
DEFAULT_INTERVAL = 10.0


def log_interval() -> float:
    """Seconds between two progress lines: ``$BTLAB_PROGRESS_INTERVAL`` or 10.

    Raises:
        BtlabError: the variable is set to something other than a number > 0.
    """
    text = os.environ.get(INTERVAL_ENV, "").strip()
    if not text:
        return DEFAULT_INTERVAL
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise BtlabError(f"{INTERVAL_ENV}={text!r}: expected a number of seconds > 0\n"
                         f"  fix: e.g. {INTERVAL_ENV}=30, or unset it for the default "
                         f"({DEFAULT_INTERVAL:g} s)")
    return value


def format_duration(seconds: float) -> str:
    """``21 s``, ``3 min 05 s``, ``2 h 07 min``."""
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


class LogProgress:
    """Prints a progress line every ``interval`` seconds while a run goes on.

    Args:
        total: trials to run.
        write: prints one line (and flushes).
        interval: seconds between two lines.
        clock: the time source (monotonic seconds).

    Call :meth:`update` as trials finish and :meth:`subtrees` for a split
    trial's subtrees; :meth:`start` starts the printing thread, :meth:`stop`
    ends it and prints the last line.
    """

    def __init__(self, total: int, write: Callable[[str], None], interval: float,
                 clock: Callable[[], float] = time.monotonic):
        self.total = total
        self.write = write
        self.interval = interval
        self.clock = clock
        self.done = 0
        self.errors = 0
        self.split: tuple[int, int] | None = None
        self.t0 = clock()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def update(self, done: int, errors: int) -> None:
        with self._lock:
            self.done, self.errors = done, errors

    def subtrees(self, done: int, of: int) -> None:
        with self._lock:
            self.split = (done, of)

    def line(self) -> str:
        """The progress line as of now."""
        with self._lock:
            done, errors, split = self.done, self.errors, self.split
        elapsed = max(self.clock() - self.t0, 1e-9)
        rate = done / elapsed
        pct = 100 * done // self.total if self.total else 100
        if done >= self.total:
            eta = "done"
        elif done:
            eta = "ETA " + format_duration((self.total - done) / rate)
        else:
            eta = "ETA unknown"
        text = (f"progress: {done:,}/{self.total:,} trials ({pct}%), {rate:,.1f} trials/s, "
                f"{eta}, {errors:,} error{'s' if errors != 1 else ''}")
        if split is not None:
            text += f"; subtrees of the split trial: {split[0]:,}/{split[1]:,}"
        return text + f" ({format_duration(elapsed)} elapsed)"

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.write(self.line())

    def start(self) -> None:
        self.t0 = self.clock()
        self._thread = threading.Thread(target=self._loop, name="btlab-progress", daemon=True)
        self._thread.start()

    def stop(self, final: bool = True) -> None:
        """End the thread; print the last line unless ``final`` is False."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if final:
            self.write(self.line())


class ShownConsole(Console):
    """A rich Console whose ``print`` shows every str it is given with its control characters
    escaped (:func:`btlab.errors.shown`, newlines kept): a folder name, an override or a
    stored value holding ESC or CR is printed as text and cannot colour, clear or rewrite
    the terminal. Rich markup (``[red]...[/red]``) is untouched; Tables are escaped cell by
    cell (:func:`btlab.views.tables.literal`)."""

    def print(self, *objects: Any, **kwargs: Any) -> None:
        super().print(*(shown(o, lines=True) if isinstance(o, str) else o for o in objects),
                      **kwargs)
