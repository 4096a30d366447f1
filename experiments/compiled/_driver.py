"""What the compiled kernels share: their return codes and the loop that drives them.

A kernel runs at most a fixed number of placements per call and returns
:data:`PAUSED` when it stops for that reason, with its whole state in the
arrays it was given; the Python loop then reads the clock (nopython code has
no clock) and calls it again. Any other code is final.

Every kernel pauses, deadline or not: Python runs a signal's handler only
between two bytecodes, so a search that stayed in one nopython call could not
be stopped by Ctrl-C or SIGTERM short of SIGKILL. Between two calls
:func:`drive` lets a pending signal through (the run's handler raises
``KeyboardInterrupt`` there) and otherwise resumes from the arrays, the
counters exactly those of one call.
"""

from __future__ import annotations

from typing import Callable

from btlab.experiments.core import Budget, Status

#: Placements per kernel call under a time limit (a power of two, a multiple
#: of ``Budget.CLOCK_EVERY``): the clock is read between two chunks.
PAUSE_EVERY = 1 << 17

#: Placements (or, for the Knuth probes, placements before the next probe) per
#: kernel call of an untimed search: Ctrl-C, SIGTERM and a cancelled Ray task --
#: a KeyboardInterrupt, which Python delivers only between two kernel calls --
#: stop it within milliseconds (a call costs microseconds, a chunk about 10 ms).
CHUNK_EVERY = 1 << 20

#: Kernel return codes.
PAUSED, SOLVED, EXHAUSTED, NODE_LIMIT, BACKTRACK_LIMIT = 0, 1, 2, 3, 4
STATUS = {SOLVED: Status.SOLVED, EXHAUSTED: Status.EXHAUSTED, NODE_LIMIT: Status.NODE_LIMIT,
          BACKTRACK_LIMIT: Status.BACKTRACK_LIMIT}


def pause_mask(timed: bool, chunked: bool = False) -> int:
    """The kernels' pause mask: a pause every ``2^17`` placements under a time
    limit (the clock is read then), else every :data:`CHUNK_EVERY` (a pending
    signal is let through then), whether or not the search is ``chunked`` (a
    subtree task; kept for the callers that say so). Never -1 (no pause): an
    untimed search must stop at Ctrl-C too."""
    return PAUSE_EVERY - 1 if timed else CHUNK_EVERY - 1


def pause_every(timed: bool) -> int:
    """Placements per call of the Knuth probes before they pause between two probes:
    :data:`PAUSE_EVERY` under a time limit, else :data:`CHUNK_EVERY`."""
    return PAUSE_EVERY if timed else CHUNK_EVERY


def drive(kernel: Callable[..., int], args: tuple, budget: Budget) -> Status:
    """Start ``budget``'s clock and call ``kernel(*args)`` until it returns a final code.

    Between two calls a pending SIGINT or SIGTERM reaches Python, whose handler
    (:func:`btlab.execution.interrupts.catching_signals` in a run) raises
    ``KeyboardInterrupt`` out of this loop; with no signal the next call resumes
    from the state arrays.

    Returns:
        The final status; :attr:`Status.TIME_LIMIT` when the time budget ran out
        between two calls (the state arrays then hold the counters so far).
    """
    budget.start()
    while True:
        code = kernel(*args)
        if code != PAUSED:
            return STATUS[code]
        if budget.out_of_time():
            return Status.TIME_LIMIT
