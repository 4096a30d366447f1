"""btlab's searches: pure Python solvers (and compiled kernels), no Ray, no I/O.

Public entry points:

* :func:`experiments.knights.solve_knights_tour` -- knight's tours.
* :mod:`experiments.checker` -- verifies tours and queens placements.
* :mod:`experiments.core` -- the result contract shared by every solver.
* :mod:`experiments.compiled` -- numba kernels of the same searches (imported on
  demand: importing :mod:`experiments` does not load numba).
"""

from .core import Budget, Mode, SearchResult, Status

__all__ = ["Budget", "Mode", "SearchResult", "Status"]
