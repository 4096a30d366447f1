"""What the compiled kernels share: their return codes and the loop that drives them.

A kernel runs at most a fixed number of placements per call and returns
:data:`PAUSED` when it stops for that reason, with its whole state in the
arrays it was given; the Python loop then reads the clock (nopython code has
no clock) and calls it again. Any other code is final.
"""

from __future__ import annotations

from typing import Callable

from btlab.experiments.core import Budget, Status

#: Placements per kernel call under a time limit (a power of two, a multiple
#: of ``Budget.CLOCK_EVERY``): the clock is read between two chunks.
PAUSE_EVERY = 1 << 17

#: Placements per kernel call of an untimed search run in chunks (``chunked``:
#: the subtree tasks of a split search, so that a cancelled Ray task -- a
#: KeyboardInterrupt, which Python delivers only between two kernel calls --
#: stops within milliseconds; a call costs microseconds, a chunk about 10 ms).
CHUNK_EVERY = 1 << 20

#: Kernel return codes.
PAUSED, SOLVED, EXHAUSTED, NODE_LIMIT, BACKTRACK_LIMIT = 0, 1, 2, 3, 4
STATUS = {SOLVED: Status.SOLVED, EXHAUSTED: Status.EXHAUSTED, NODE_LIMIT: Status.NODE_LIMIT,
          BACKTRACK_LIMIT: Status.BACKTRACK_LIMIT}


def pause_mask(timed: bool, chunked: bool) -> int:
    """The kernels' pause mask: a pause every ``2^17`` placements under a time
    limit (the clock is read then), every :data:`CHUNK_EVERY` when ``chunked``,
    else never (-1)."""
    if timed:
        return PAUSE_EVERY - 1
    return CHUNK_EVERY - 1 if chunked else -1


def drive(kernel: Callable[..., int], args: tuple, budget: Budget) -> Status:
    """Start ``budget``'s clock and call ``kernel(*args)`` until it returns a final code.

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
