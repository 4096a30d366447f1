"""Loading the compiled kernels whole: an interrupt during their import waits for its end.

Importing :mod:`btlab.experiments.compiled` the first time in a process
imports numpy, llvmlite and numba (a second or more), and warming a kernel up
(:func:`btlab.experiments.compiled.warm_up`) imports hundreds of numba's
modules more. A ``KeyboardInterrupt`` raised in the middle of that -- Ctrl-C
in a notebook, or ``ray.cancel(ref, force=False)``, which Ray delivers to a
running task as ``_thread.interrupt_main()``, a simulated SIGINT in the
worker's main thread -- leaves those packages half imported in
``sys.modules``: the modules imported so far stay, the one being imported is
dropped, and importing it again gives a module missing its submodules
(``AttributeError: module 'numba' has no attribute 'core'``) or a C extension
that refuses a second load (numpy: ``cannot load module more than once per
process``). The process survives the interrupt (a Ray worker takes its next
task) and every later compiled search in it fails. Dropping the half-imported
modules does not help (numpy's cannot load again).

So the import and the warm-up run inside :func:`interrupts_held`: a SIGINT
that arrives within the block is held and delivered, to the handler that was
installed before, when the block ends -- after the import is complete,
including the import system's own bookkeeping (the block is entered by the
code that imports, never inside the module being imported). A cancelled task
then stops once its kernels are loaded (a cache load: milliseconds; the import:
about a second; a first compile on a cold cache: up to a minute).

Every import of :mod:`btlab.experiments.compiled` inside a function of btlab
sits in such a block (``tests/test_structure.py`` holds it).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from types import FrameType
from typing import Iterator

__all__ = ["interrupt_pending", "interrupts_held"]

#: One entry per active :func:`interrupts_held` block, innermost last: the SIGINTs it holds.
_held: list[list[int]] = []


def interrupt_pending() -> bool:
    """True when a SIGINT arrived in an active :func:`interrupts_held` block (it is held)."""
    return any(_held)


@contextlib.contextmanager
def interrupts_held() -> Iterator[None]:
    """Within the block, SIGINT (a ``KeyboardInterrupt``) is held; it is delivered when the
    block ends.

    The handler installed before the block gets the held signal then, as if it
    had just arrived (Python's default raises ``KeyboardInterrupt``; a run's
    own handler counts it); with the default action the signal is raised
    again, and an ignored one stays ignored. It is delivered too when the block
    ends with an exception. Off the main thread (no interrupt reaches Python
    there) or when SIGINT's handler is not Python's to swap, nothing is held.
    Nested blocks hand a held signal to the enclosing block.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []

    def hold(signum: int, _frame: FrameType | None) -> None:
        held.append(signum)

    previous = signal.getsignal(signal.SIGINT)
    if previous is None:  # installed from C: it could not be put back
        yield
        return
    signal.signal(signal.SIGINT, hold)
    _held.append(held)
    try:
        yield
    finally:
        _held.pop()
        signal.signal(signal.SIGINT, previous)
        if held:
            if callable(previous):
                previous(signal.SIGINT, None)
            elif previous == signal.SIG_DFL:
                signal.raise_signal(signal.SIGINT)
