"""What the split modules share: the event list, :class:`SplitError`, the
:class:`Splitter` interface.

:mod:`btlab.experiments.split.subtrees` plans, runs and combines split searches for any
problem through its :class:`Splitter`; the per-problem splitters
(:mod:`btlab.experiments.split.knights`, :mod:`btlab.experiments.split.queens`) import
only this module from the split machinery, so nothing imports in a cycle.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from btlab.experiments.core import SearchResult

#: Engines that run subtree tasks: the pure-Python reference and the numba
#: kernels (:mod:`btlab.experiments.compiled`), with identical counters.
ENGINES = ("python", "compiled")

#: A node budget that no search reaches (no budget).
NO_CAP = 1 << 62

# Event kinds. Events are plain tuples (cheap to build and to keep):
#   (ENTER, node, depth, stop_checks, entry_checks, entry_dead, solution, canonical)
#   (EXIT, node, exit_checks, exit_dead)
#   (TASK, index, stop_checks)
# ``node`` is 1 for a placement, 0 for a root that is not one (the empty
# N-Queens board). ``entry_checks``/``exit_checks`` and
# ``entry_dead``/``exit_dead``: checks and dead ends the sequential search
# counts when it enters/leaves the placement. ``solution``: the complete
# placement it is, or None; ``canonical``: 1 if that solution counts up to
# symmetry. ``stop_checks``: checks the sequential search adds for this
# placement's parent frame when it stops at or below the placement
# (N-Queens: the parent's row has tested columns 0..col, so col + 1; knight's
# tour: 0, its checks are all made on entry).
ENTER, EXIT, TASK = 0, 1, 2


class SplitError(ValueError):
    """A search that cannot be split exactly (bad depth, unsupported option)."""


class Truncated(Exception):
    """A planner's top walk has passed the node budget: the replay stops before its end."""


def check_engine(params: Mapping[str, Any]) -> str:
    """The ``engine`` of ``params`` (default ``python``).

    Raises:
        SplitError: not one of :data:`ENGINES`.
    """
    engine = params.get("engine", "python")
    if engine not in ENGINES:
        raise SplitError(f"unknown engine {engine!r}; expected one of {ENGINES}")
    return engine


@dataclass(frozen=True)
class Splitter(ABC):
    """How one problem's search is cut into subtree tasks (one per problem).

    :mod:`btlab.experiments.split.subtrees` does the rest (budgets, the replay, the serial
    reference). Subclass it, as a frozen dataclass defined at module level
    (plans carry it to other processes by pickling), to split a new problem;
    pass the object wherever a problem name is accepted, or add it to
    :data:`btlab.experiments.split.subtrees.SPLITTERS`.

    Attributes:
        name: the problem's name (:attr:`btlab.experiments.split.subtrees.SplitPlan.problem`).
    """

    name: str

    @abstractmethod
    def normalise(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """The search parameters with defaults filled in and checked.

        The result must hold ``mode`` (``first`` or ``count``) and may hold
        ``unique`` (count solutions up to symmetry: task results then report
        the plain count in ``extra["all_solutions"]``); it must be picklable.

        Raises:
            SplitError: the search cannot be split exactly.
            ValueError: bad parameters.
        """

    @abstractmethod
    def plan(self, p: Mapping[str, Any], depth: int,
             max_nodes: int | None) -> tuple[list[tuple], list[tuple[int, ...]]]:
        """Walk the tree above ``depth`` as the sequential search does.

        Args:
            p: parameters from :meth:`normalise`.
            depth: the split depth, >= 0.
            max_nodes: the node budget, or None; the walk may stop (raise and
                catch :class:`Truncated`) after top placement ``max_nodes + 1``.

        Returns:
            The events in depth-first pre-order (see the event kinds above)
            and each task's placement path, in order.
        """

    @abstractmethod
    def run_subtree(self, p: Mapping[str, Any], path: Sequence[int], max_nodes: int | None,
                    max_seconds: float | None) -> SearchResult:
        """What the sequential search adds to its counters in the subtree at ``path``.

        Args:
            p: parameters from :meth:`normalise` (including ``engine``).
            path: a task's placement path from :meth:`plan`.
            max_nodes: node budget of the subtree (>= 1), or None.
            max_seconds: time budget of the subtree, or None.
        """
