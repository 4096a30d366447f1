"""btlab's searches: pure Python solvers (and compiled kernels), no Ray, no I/O.

Public entry points:

* :func:`experiments.knights.solve_knights_tour` -- knight's tours.
* :func:`experiments.queens.solve_queens` -- N-Queens (and
  :func:`experiments.queens.construct_queens`, solutions without search).
* :class:`experiments.amb.Amb` -- McCarthy's Amb operator, by re-execution.
* :mod:`experiments.checker` -- verifies tours and queens placements.
* :mod:`experiments.core` -- the result contract shared by every solver.
* :mod:`experiments.compiled` -- numba kernels of the same searches (imported on
  demand: importing :mod:`experiments` does not load numba).
"""

from .core import Budget, Mode, SearchResult, Status

__all__ = ["Budget", "Mode", "SearchResult", "Status"]
