"""btlab's searches: pure Python solvers (and compiled kernels), no Ray, no I/O.

Public entry points:

* :func:`experiments.knights.solve_knights_tour` -- knight's tours.
* :mod:`experiments.checker` -- verifies tours and queens placements.
* :mod:`experiments.core` -- the result contract shared by every solver.
"""

from .core import Budget, Mode, SearchResult, Status

__all__ = ["Budget", "Mode", "SearchResult", "Status"]
