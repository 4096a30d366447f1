"""What the compiled kernels share: their return codes and the loop that drives them.

A kernel runs at most a fixed number of placements per call and returns
:data:`PAUSED` when it stops for that reason, with its whole state in the
arrays it was given; the Python loop then reads the clock (nopython code has
no clock) and calls it again. Any other code is final.
"""

from __future__ import annotations

from typing import Callable

from ..core import Budget, Status

#: Kernel return codes.
PAUSED, SOLVED, EXHAUSTED, NODE_LIMIT = 0, 1, 2, 3
STATUS = {SOLVED: Status.SOLVED, EXHAUSTED: Status.EXHAUSTED, NODE_LIMIT: Status.NODE_LIMIT}


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
