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

At a run's end the handlers stay: :func:`holding_signals` holds a signal that
arrives while the last rows are written or Ray shuts down (they are finished,
then the run exits 130), nested blocks leave the outer block's handlers in
place (not a library's, such as the SIGTERM handler ``ray.init`` installs),
and once :func:`settle` says the run's exit status is decided a signal is
ignored (``catching_signals(for_good=True)`` keeps that until the process
exits), so that no signal at a run's end kills the process.

In a Ray worker no handler of ours is installed (Ray's own handle SIGTERM and
task cancellation); :func:`is_interrupt` alone applies there, and the
driver reruns the trials of a worker whose task ended that way.
"""

from __future__ import annotations

import contextlib
import ctypes
import signal
import sys
import threading
from typing import Any, Iterator

#: The signals a run treats as "stop now, keep the finished rows": Ctrl-C, ``kill``, and
#: the hangup of a closed terminal or a dropped ssh session (unless ignored, as under
#: ``nohup``: then it stays ignored).
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

_seen = 0


def signals_seen() -> int:
    """How many SIGINT / SIGTERM this process has received through :func:`catching_signals`."""
    return _seen


#: Set by :func:`settle`: the run's exit status is decided, a signal no longer changes it.
_settled = False
#: The signals held by the innermost active :func:`holding_signals` block (None: none active).
_holding: list[str] | None = None


def _handler(signum, frame) -> None:
    global _seen
    _seen += 1
    name = signal.Signals(signum).name
    if _settled:
        return  # the exit status is decided: the signal is ignored
    if _holding is not None and not _holding:
        _holding.append(name)  # held: the block finishes, then the run stops
        return
    raise KeyboardInterrupt(name)


@contextlib.contextmanager
def catching_signals(for_good: bool = False) -> Iterator[None]:
    """Within the block, SIGINT, SIGTERM and SIGHUP are counted, then raise ``KeyboardInterrupt``.

    Outside the main thread (where Python cannot install handlers) nothing is
    installed; a signal the process ignores (SIGHUP under ``nohup``) stays ignored.
    When the block ends, the handlers of an enclosing block stay installed (a
    library may have replaced them meanwhile: ``ray.init`` does SIGTERM's);
    with no enclosing block the previous handlers come back, unless
    ``for_good``: then ours stay, ignoring every signal (the process is ending
    with the status it has, :func:`settle`).
    """
    global _settled
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.signal(s, _handler) for s in STOP_SIGNALS
                if signal.getsignal(s) is not signal.SIG_IGN}
    _installed.append(tuple(previous))
    settled = _settled
    try:
        yield
    finally:
        _installed.pop()
        if for_good:
            _settled = True
            for s in previous:
                signal.signal(s, _handler)
        else:
            _settled = settled
            if _installed:  # unconditionally: Ray's C++ core resets handlers Python still lists
                for s in _installed[-1]:
                    signal.signal(s, _handler)
            else:
                for s, old in previous.items():
                    signal.signal(s, old)


@contextlib.contextmanager
def guarding_handlers() -> Iterator[None]:
    """Within the block, handlers that C code resets behind Python's back are put back at once.

    ``ray.shutdown`` does: Ray's core worker sets SIGTERM (and others) to SIG_DFL
    a few milliseconds in, then Ray spends a second stopping its processes, and
    a signal then would kill the driver. Python still lists its own handler, so
    a watcher thread compares the C-level ``sigaction`` with the one the block
    began with (every millisecond) and restores it; when the block ends, the
    handlers are installed again. Linux only (elsewhere, and outside a
    :func:`catching_signals` block, it does nothing but the reinstall).
    """
    if not _installed or threading.current_thread() is not threading.main_thread():
        yield
        return
    libc: Any = ctypes.CDLL(None, use_errno=True) if sys.platform == "linux" else None
    width = ctypes.sizeof(ctypes.c_void_p)  # the handler: the first member of struct sigaction
    saved: dict[int, ctypes.Array] = {}
    for s in _installed[-1] if libc is not None else ():
        buf = ctypes.create_string_buffer(256)  # more than any struct sigaction
        if libc.sigaction(int(s), None, buf) == 0:
            saved[int(s)] = buf
    stop = threading.Event()

    def watch() -> None:
        now = ctypes.create_string_buffer(256)
        while not stop.wait(0.001):
            for s, buf in saved.items():
                if libc.sigaction(s, None, now) == 0 and now.raw[:width] != buf.raw[:width]:
                    libc.sigaction(s, buf, None)

    watcher = threading.Thread(target=watch, name="btlab-signal-guard", daemon=True)
    if saved:
        watcher.start()
    try:
        yield
    finally:
        stop.set()
        if saved:
            watcher.join()
        for s in _installed[-1]:
            signal.signal(s, _handler)


def settle() -> None:
    """The run's exit status is decided: from now on a stop signal is counted and ignored.

    Lasts until the :func:`catching_signals` block ends (with ``for_good``, until the
    process exits).
    """
    global _settled
    if _installed:
        _settled = True


@contextlib.contextmanager
def holding_signals() -> Iterator[list[str]]:
    """Within the block, the first stop signal is held, not raised; a second one raises.

    For what must not be cut short by one Ctrl-C: writing a run's last rows,
    shutting Ray down. Yields the list of the held signal's name (empty: none
    came); the caller stops the run when the block ends. Only where
    :func:`catching_signals` handlers are installed; nested blocks share the
    outer block's list.
    """
    global _holding
    outer = _holding
    held: list[str] = outer if outer is not None else []
    _holding = held
    try:
        yield held
    finally:
        _holding = outer


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
