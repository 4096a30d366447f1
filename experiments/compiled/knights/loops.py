"""Which loop runs a knight's-tour search: the registry, chosen in Python before numba compiles.

Each search runs one loop of its own (:data:`LOOPS`, first entry that fits
wins). The choice is made here, in Python, from the search's shape
(:class:`Shape`: at most 64 squares or more, heuristic, tie-break, mode, and
whether it keeps a byte per square of unvisited neighbours), and only then is
that loop called: numba compiles (or loads from its disk cache) a function
when it is first called, with the functions it calls, so a process compiles
the loops of its own trials and no other. (One ``@njit`` dispatcher holding
every loop, as :func:`.kernel.knights_run` does, compiles all of them at its
first call: some 13 s on a cold cache for one trial.)

A new loop joins with one entry: its name, its function, the arrays it takes
(names of :func:`.kernel.run_knights`'s bundle), when it runs, and a small
search that runs it (:attr:`Loop.sample`, used to compile it ahead of a trial's
clock; a test checks that each sample picks its own entry).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from btlab.experiments.compiled.knights.fast import MASK_SQUARES, run64_plain, run64_warnsdorff
from btlab.experiments.compiled.knights.first import run64_first, runwide_first
from btlab.experiments.compiled.knights.general import run_general
from btlab.experiments.compiled.knights.random64 import run64_random
from btlab.experiments.compiled.knights.shuffle64 import run64_shuffled
from btlab.experiments.compiled.knights.ties64 import run64_keyed
from btlab.experiments.compiled.knights.wide import runwide_plain, runwide_warnsdorff
from btlab.experiments.compiled.knights.widekeyed import runwide_keyed


@dataclass(frozen=True)
class Shape:
    """What decides a search's loop.

    ``small``: the visited set fits a 64-bit mask (at most 64 squares);
    ``tie``: the tie-break as the loops see it (with heuristic ``none`` every
    tie-break but ``random`` is ``move_order``); ``cells``: a byte per square
    of unvisited neighbours is kept (more than 64 squares, a heuristic, ties
    not random).
    """

    small: bool
    heuristic: str
    tie: str
    first: bool
    cells: bool


def shape(size: int, heuristic: str, tie_break: str, first: bool) -> Shape:
    """The :class:`Shape` of a search on a board of ``size`` squares."""
    tie = "move_order" if heuristic == "none" and tie_break != "random" else tie_break
    small = size <= MASK_SQUARES
    return Shape(small, heuristic, tie, first,
                 not small and heuristic != "none" and tie != "random")


@dataclass(frozen=True)
class Loop:
    """One entry of :data:`LOOPS`.

    Attributes:
        name: the loop's name (``warm_up("knights:<name>")``).
        kernel: the ``@njit`` function.
        takes: its arguments, names of :func:`.kernel.run_knights`'s arrays
            (``nbr count dist2 nbr8 nmask params state rng visited deg path
            frames found tour``; the scratch arrays ``key keyd keyt``, the tables
            ``table wide``).
        when: whether it runs a search of this :class:`Shape`.
        sample: ``(rows, cols, heuristic, tie_break, first)``, a search it runs.
        pauses: the loop was written to pause (return to Python) at least every
            :data:`._driver.CHUNK_EVERY` placements; every loop now does, since
            :func:`._driver.pause_mask` sets a pause deadline or not, so that
            Ctrl-C and SIGTERM are seen within a second.
    """

    name: str
    kernel: Any
    takes: tuple[str, ...]
    when: Callable[[Shape], bool]
    sample: tuple[int, int, str, str, bool]
    pauses: bool = False


def _args(text: str) -> tuple[str, ...]:
    return tuple(text.split())


#: The loops, first match wins; the last takes every search.
LOOPS: tuple[Loop, ...] = (
    Loop("run64_first", run64_first, _args("table params state path found tour"),
         lambda s: s.small and s.heuristic == "none" and s.tie == "move_order" and s.first,
         (3, 4, "none", "move_order", True), pauses=True),
    Loop("run64_plain", run64_plain,
         _args("nbr8 count nmask params state path frames found tour"),
         lambda s: s.small and s.heuristic == "none" and s.tie == "move_order",
         (3, 4, "none", "move_order", False)),
    Loop("run64_warnsdorff", run64_warnsdorff,
         _args("nbr8 count nmask params state path frames found tour keyd"),
         lambda s: s.small and s.heuristic == "warnsdorff" and s.tie == "move_order",
         (3, 4, "warnsdorff", "move_order", False)),
    Loop("run64_shuffled", run64_shuffled,
         _args("nbr8 count nmask params state rng path frames found tour"),
         lambda s: s.small and s.heuristic == "none" and s.tie == "random",
         (3, 4, "none", "random", False)),
    Loop("run64_random", run64_random,
         _args("nbr8 count nmask params state rng path frames found tour keyd keyt"),
         lambda s: s.small and s.tie == "random", (3, 4, "warnsdorff", "random", False)),
    Loop("run64_keyed", run64_keyed,
         _args("nbr8 count nmask dist2 params state path frames found tour key keyd"),
         lambda s: s.small, (3, 4, "warnsdorff", "pohl", False)),
    Loop("runwide_first", runwide_first, _args("wide params state visited path found tour"),
         lambda s: s.heuristic == "none" and s.tie == "move_order" and s.first,
         (9, 9, "none", "move_order", True), pauses=True),
    Loop("runwide_plain", runwide_plain,
         _args("nbr count params state visited path frames found tour"),
         lambda s: s.heuristic == "none" and s.tie == "move_order",
         (9, 9, "none", "move_order", False)),
    Loop("runwide_warnsdorff", runwide_warnsdorff,
         _args("nbr count params state deg path frames found tour"),
         lambda s: s.heuristic == "warnsdorff" and s.tie == "move_order" and s.cells,
         (9, 9, "warnsdorff", "move_order", False)),
    Loop("runwide_keyed", runwide_keyed,
         _args("nbr count dist2 params state deg path frames found tour"),
         lambda s: s.tie != "random" and s.cells, (9, 9, "static_degree", "roth", False)),
)


#: The general loop: every search no entry of :data:`LOOPS` takes.
GENERAL = Loop("run_general", run_general,
               _args("nbr count dist2 params state rng visited path frames found tour"),
               lambda s: True, (9, 9, "warnsdorff", "random", False))

_BY_NAME: dict[str, Loop] = {loop.name: loop for loop in (*LOOPS, GENERAL)}


def loops() -> dict[str, Loop]:
    """Every loop by name, :data:`LOOPS` and the general one (last)."""
    return _BY_NAME


def choose(s: Shape) -> Loop:
    """The loop that runs a search of shape ``s``: the first entry whose ``when`` holds."""
    for loop in loops().values():
        if loop.when(s):
            return loop
    raise AssertionError("the general loop takes every search")  # pragma: no cover
