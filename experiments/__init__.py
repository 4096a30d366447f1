"""btlab's searches: pure Python solvers (and compiled kernels), no Ray, no I/O.

Public entry points:

* :func:`btlab.experiments.knights.solve.solve_knights_tour` -- knight's tours.
* :func:`btlab.experiments.queens.solve.solve_queens` -- N-Queens (and
  :func:`btlab.experiments.queens.solve.construct_queens`, solutions without search).
* :class:`btlab.experiments.amb.Amb` -- McCarthy's Amb operator, by re-execution.
* :mod:`btlab.experiments.checker` -- verifies tours and queens placements.
* :mod:`btlab.experiments.core` -- the result contract shared by every solver.
* :mod:`btlab.experiments.compiled` -- numba kernels of the same searches (imported on
  demand: importing :mod:`experiments` does not load numba).
"""

from btlab.experiments.core import Budget, Mode, SearchResult, Status

__all__ = ["Budget", "Mode", "SearchResult", "Status"]
