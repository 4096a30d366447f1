"""Signals are never trial errors: Ctrl-C and SIGTERM end the run, whatever a trial makes of them.

A signal arrives while some code runs. Python code sees it as
``KeyboardInterrupt``; the compiled engine's numba dispatcher, interrupted
while it returns, turns it into ``SystemError: ... returned a result with an
exception set`` (the ``KeyboardInterrupt`` is at the end of its
``__cause__`` chain); a solver's own ``except Exception`` could swallow it.
So that none of these is stored as the trial's error:

* :func:`catching_signals` installs SIGINT and SIGTERM handlers for the run
  that count the signal (:func:`signals_seen`) before raising
  ``KeyboardInterrupt``;
* :func:`btlab.execution.execute.run_trial` compares the count before and after the
  trial and, where no handler of ours counts (a Ray worker), looks for a
  ``KeyboardInterrupt`` in the exception's chain (:func:`is_interrupt`);
  either way it raises ``KeyboardInterrupt`` and the trial gives no row. The
  run then writes the rows it has and exits 130. Where the handlers count
  (the serial backend), a ``KeyboardInterrupt`` that no signal preceded is
  one the trial's code raised itself: the trial's error, and the run goes on.

In a Ray worker no handler of ours is installed (Ray's own handle SIGTERM and
task cancellation); :func:`is_interrupt` alone applies there, and the
driver reruns the trials of a worker whose task ended that way.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from typing import Iterator

#: The signals a run treats as "stop now, keep the finished rows": Ctrl-C, ``kill``, and
#: the hangup of a closed terminal or a dropped ssh session (unless ignored, as under
#: ``nohup``: then it stays ignored).
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

_seen = 0


def signals_seen() -> int:
    """How many SIGINT / SIGTERM this process has received through :func:`catching_signals`."""
    return _seen


def _handler(signum, frame) -> None:
    global _seen
    _seen += 1
    raise KeyboardInterrupt(signal.Signals(signum).name)


@contextlib.contextmanager
def catching_signals() -> Iterator[None]:
    """Within the block, SIGINT, SIGTERM and SIGHUP are counted, then raise ``KeyboardInterrupt``.

    Outside the main thread (where Python cannot install handlers) nothing is
    installed; a signal the process ignores (SIGHUP under ``nohup``) stays ignored.
    The previous handlers come back when the block ends.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.signal(s, _handler) for s in STOP_SIGNALS
                if signal.getsignal(s) is not signal.SIG_IGN}
    _installed.append(tuple(previous))
    try:
        yield
    finally:
        _installed.pop()
        for s, old in previous.items():
            signal.signal(s, old)


#: The signals each active :func:`catching_signals` block handles, innermost last.
_installed: list[tuple[signal.Signals, ...]] = []


def reinstall() -> list[str]:
    """Put the run's handlers back where a trial's code replaced them; return the signals' names.

    A plug-in (or a library it imports) may install handlers of its own, or
    ignore SIGINT: Ctrl-C would then no longer stop the run. Called after
    every trial of the serial backend; does nothing outside a
    :func:`catching_signals` block or off the main thread.
    """
    if not _installed or threading.current_thread() is not threading.main_thread():
        return []
    fixed = []
    for s in _installed[-1]:
        if signal.getsignal(s) is not _handler:
            signal.signal(s, _handler)
            fixed.append(signal.Signals(s).name)
    return fixed


def counting_signals() -> bool:
    """True while :func:`catching_signals` has its handlers installed in this process.

    Then every SIGINT / SIGTERM is counted, so a ``KeyboardInterrupt`` that no
    counted signal preceded was raised by the trial's own code (a plug-in that
    raises it, a ``__str__`` that does): that is the trial's error, not a stop.
    """
    return all(signal.getsignal(s) is _handler for s in (signal.SIGINT, signal.SIGTERM))


def is_interrupt(exc: BaseException) -> bool:
    """True when ``exc`` is, or was caused by, a ``KeyboardInterrupt`` (a signal).

    Follows ``__cause__`` and ``__context__`` (at most 100 links, cycles
    stopped), as numba wraps the interrupt in ``SystemError`` twice.
    """
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen and len(seen) < 100:
        if isinstance(link, KeyboardInterrupt):
            return True
        seen.add(id(link))
        link = link.__cause__ or link.__context__
    return False
