"""btlab's searches: pure Python solvers (and compiled kernels), no Ray, no I/O.

Installed as ``btlab.experiments``. Public entry points:

* :func:`btlab.experiments.knights.solve.solve_knights_tour` -- knight's tours.
* :func:`btlab.experiments.queens.solve.solve_queens` -- N-Queens (and
  :func:`btlab.experiments.queens.solve.construct_queens`, solutions without search).
* :class:`btlab.experiments.amb.Amb` -- McCarthy's Amb operator, by re-execution.
* :mod:`btlab.experiments.checker` -- verifies tours and queens placements.
* :mod:`btlab.experiments.core` -- the result contract shared by every solver.
* :mod:`btlab.experiments.compiled` -- numba kernels of the same searches (imported on
  demand: importing :mod:`btlab.experiments` does not load numba).

Importing this package does not import the runner (``btlab/__init__.py`` loads
its names lazily), so a Ray worker or a kernel pulls in the searches alone.

Modules:

- ``amb``: McCarthy's Amb operator, by re-execution, and the counters of a tree it walks.
- ``checker``: checkers that verify answers from first principles.
- ``checker_fast``: the checkers, vectorised with numpy for big answers.
- ``compiled/``: compiled search kernels (numba): the same trees, at C speed.
- ``core``: the one solver contract shared by every problem and strategy.
- ``estimate``: random-probe estimates of a tree's size and solutions (Knuth, importance, perm).
- ``estimators``: the estimator registry: each method, its parameters and canonical label.
- ``knights/``: the knight's tour: board, move order, heuristics, strategies.
- ``loading``: the compiled kernels load whole: an interrupt during their import waits.
- ``queens/``: N-Queens: strategies, enumeration, bit masks, constructions.
- ``registry``: registries of strategies and heuristics.
- ``split/``: one search as ordered subtree tasks, combined into the sequential counters.
"""

if __name__ != "btlab.experiments":  # the checkout's experiments/ folder, under its old name
    import sys

    from btlab.errors import refuse_old_name

    refuse_old_name(sys.modules[__name__])
else:
    from btlab.experiments.core import Budget, Mode, SearchResult, Status

    __all__ = ["Budget", "Mode", "SearchResult", "Status"]
