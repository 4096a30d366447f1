"""The one solver contract shared by every problem and strategy.

Every solver in :mod:`experiments` takes plain typed arguments and returns a
:class:`SearchResult`: a frozen dataclass whose counters follow the btlab
metrics contract (``docs/metrics.md``, which defines each counter per problem
and strategy, the statuses and censoring, and gives known values):

* ``nodes``: placements made (a knight entering a square, the start square
  being placement 1; a queen left on a square after its safety test).
* ``backtracks``: placements undone whose subtree held no reported solution,
  so ``nodes - backtracks`` is the number of placements on paths to reported
  solutions. Placements still on the board when a budget stops the search are
  not undone and so are not backtracks.
* ``dead_ends``: placements with no legal continuation that are not solutions.
* ``checks``: candidate squares tested (knight's tour: onward squares looked
  at, heuristic look-ups included; N-Queens: squares tested for attack).
* ``solutions``: solutions reported (1 in ``first`` mode when found).
* ``max_depth``: deepest placement count reached.

Counters are returned in the result, never stored on a problem object.
"""

from __future__ import annotations

import enum
import time
from dataclasses import dataclass, field
from typing import Mapping


class Status(str, enum.Enum):
    """How a search ended.

    ``SOLVED``: a solution was found (``first`` mode) -- in ``count`` mode a
    complete enumeration is ``EXHAUSTED`` whatever the count.
    ``EXHAUSTED``: the whole space was searched (all counted, or none exists).
    ``NODE_LIMIT`` / ``TIME_LIMIT`` / ``BACKTRACK_LIMIT``: a budget stopped the
    search; the counters are those reached so far and are lower bounds of the
    full search. ``RESTART_LIMIT``: a trial with restarts used up its ``max``
    attempts (set by the runner's restart loop, never by a solver; censored too).
    ``ERROR``: the trial raised (set by the runner, never by a solver).
    See ``docs/metrics.md``, "Status and censoring".
    """

    SOLVED = "solved"
    EXHAUSTED = "exhausted"
    NODE_LIMIT = "node_limit"
    TIME_LIMIT = "time_limit"
    BACKTRACK_LIMIT = "backtrack_limit"
    RESTART_LIMIT = "restart_limit"
    ERROR = "error"

    def __str__(self) -> str:  # so f-strings print "solved", not "Status.SOLVED"
        return self.value


class Mode(str, enum.Enum):
    """``FIRST`` stops at the first solution; ``COUNT`` enumerates them all."""

    FIRST = "first"
    COUNT = "count"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class SearchResult:
    """What a solver returns: the metrics-contract counters and the solution.

    The counters are defined in ``docs/metrics.md``.

    Attributes:
        status: how the search ended (:class:`Status`).
        nodes: placements made.
        backtracks: placements undone whose subtree held no reported solution.
        dead_ends: placements with no legal continuation that are not solutions.
        checks: candidate squares tested.
        solutions: solutions reported.
        max_depth: deepest placement count reached.
        solution: the first solution found, or ``None`` when there is none.
            Knight's tour: square indices ``row * cols + col`` in visiting
            order. N-Queens: the queen's column for each row.
        extra: strategy-specific counters (for example ``amb_restarts``),
            written as extra nullable columns by the runner.
        estimate: ``mode: estimate`` only: the estimated size of the ``count``-mode
            tree in placements (Knuth 1975), else None.
        estimate_se: its standard error, else None.
        solutions_estimate, solutions_estimate_se: ``mode: estimate`` only: the
            same probes' estimate of the ``count``-mode ``solutions`` and its
            standard error, else None.
    """

    status: Status
    nodes: int
    backtracks: int
    dead_ends: int
    checks: int
    solutions: int
    max_depth: int
    solution: tuple[int, ...] | None = None
    extra: Mapping[str, int] = field(default_factory=dict)
    estimate: float | None = None
    estimate_se: float | None = None
    solutions_estimate: float | None = None
    solutions_estimate_se: float | None = None

    def counters(self) -> dict[str, int | str]:
        """The deterministic part of the result as a plain dict (status + counters)."""
        return {
            "status": self.status.value,
            "nodes": self.nodes,
            "backtracks": self.backtracks,
            "dead_ends": self.dead_ends,
            "checks": self.checks,
            "solutions": self.solutions,
            "max_depth": self.max_depth,
        }


class Budget:
    """Node and time limits for one search, checked cooperatively.

    Args:
        max_nodes: the most placements the search may make, or ``None`` for no
            limit. A search that needs placement ``max_nodes + 1`` stops with
            :attr:`Status.NODE_LIMIT`; one that finishes in exactly
            ``max_nodes`` placements ends normally.
        max_seconds: wall-clock seconds the search may run, or ``None``. The
            clock is read every :attr:`CLOCK_EVERY` placements, so a search
            stops within a few milliseconds of the limit.
        max_backtracks: the most backtracks the search may make, or ``None``. A
            search that needs backtrack ``max_backtracks + 1`` stops with
            :attr:`Status.BACKTRACK_LIMIT` (``backtracks == max_backtracks``);
            0 is allowed (greedy: the first dead end stops the search).

    Raises:
        ValueError: a limit that is not positive.
    """

    #: placements between two reads of the clock (a power of two).
    CLOCK_EVERY = 1024
    #: a time budget longer than this (about 31,700 years) runs as this one.
    NO_DEADLINE_SECONDS = 1e12
    #: candidates looked at between two reads of the clock, at most (see :meth:`clock_mask`).
    CLOCK_WORK = 16_384

    @classmethod
    def clock_mask(cls, work_per_node: int = 1) -> int:
        """The mask ``m`` of a search that reads the clock when ``nodes & m == 0``.

        Every :attr:`CLOCK_EVERY` placements, or fewer when each placement looks
        at many candidates (``work_per_node``: n for an n-queens row, so that
        16 rows of 10,000 columns do not pass unclocked), keeping about
        :attr:`CLOCK_WORK` candidates between two reads; 0 (every placement)
        for a placement of unknown cost, such as one that calls a plug-in
        (``work_per_node`` = :attr:`CLOCK_WORK`). A power of two minus one.
        """
        every = cls.CLOCK_EVERY
        while every > 1 and every * work_per_node > cls.CLOCK_WORK:
            every >>= 1
        return every - 1

    __slots__ = ("max_nodes", "max_seconds", "max_backtracks", "deadline_ns", "node_cap",
                 "backtrack_cap")

    def __init__(self, max_nodes: int | None = None, max_seconds: float | None = None,
                 max_backtracks: int | None = None):
        if max_nodes is not None and max_nodes <= 0:
            raise ValueError(f"max_nodes must be positive, got {max_nodes}")
        if max_seconds is not None and max_seconds <= 0:
            raise ValueError(f"max_seconds must be positive, got {max_seconds}")
        if max_backtracks is not None and max_backtracks < 0:
            raise ValueError(f"max_backtracks must be 0 or more, got {max_backtracks}")
        self.max_backtracks = max_backtracks
        self.backtrack_cap = max_backtracks if max_backtracks is not None else 1 << 62
        self.max_nodes = max_nodes
        self.max_seconds = max_seconds
        # Search loops compare the node count to node_cap: a huge number stands
        # in for "no limit" so that the hot loop has a single integer compare.
        self.node_cap = max_nodes if max_nodes is not None else 1 << 62
        self.deadline_ns: int | None = None

    def start(self) -> None:
        """Start the clock, unless it runs already.

        A solver's entry point starts it before any setup (tables of a big
        board, a construction), so that the time budget covers the whole solve
        call; the search itself calls it again, which then changes nothing.
        """
        if self.max_seconds is not None and self.deadline_ns is None:
            # a budget of centuries is no budget: 1e300 s would overflow the nanoseconds
            seconds = min(self.max_seconds, self.NO_DEADLINE_SECONDS)
            self.deadline_ns = time.perf_counter_ns() + int(seconds * 1e9)

    def out_of_time(self, margin_ns: int = 0) -> bool:
        """True once the time limit has passed (always False without one), or will have
        passed within ``margin_ns`` nanoseconds (what a search needs to wrap up)."""
        return (self.deadline_ns is not None
                and time.perf_counter_ns() + margin_ns >= self.deadline_ns)


class StopSearch(Exception):
    """Raised inside a search to unwind it at once; carries the final status."""

    def __init__(self, status: Status):
        super().__init__(status.value)
        self.status = status


#: Knuth's estimator (btlab.experiments.estimate.Moments and the compiled kernel's copy), scaled
#: Welford: values above SCALE_LIMIT (in the current scale) lower the scale by
#: SCALE_STEP powers of two; K squared deviations of values at most 2^480 sum below
#: 2^1024 for every K <= 2^40 (the probes cap), so M2 never overflows while the mean
#: is finite. Powers of two multiply exactly, so both engines keep equal floats.
SCALE_LIMIT = 2.0 ** 480
SCALE_STEP = 256
SCALE_DOWN = 2.0 ** -SCALE_STEP
SCALE_DOWN2 = 2.0 ** (-2 * SCALE_STEP)
SCALE_UP = 2.0 ** SCALE_STEP
