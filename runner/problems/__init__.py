"""Problems as the runner sees them: the spec, the registry, plug-ins, one package per problem.

Each problem is one package here owning everything about it
(:class:`btlab.problems.spec.ProblemSpec`): :mod:`btlab.problems.knights_tour`,
:mod:`btlab.problems.n_queens`. A new built-in problem is one package plus
one line in :data:`btlab.problems.registry.PROBLEMS`; a user's problem needs no line at
all: a config names it as ``problem: "my_pkg.module:PROBLEM"`` (``docs/extending.md``).

The registry's names (``PROBLEMS``, ``get_problem``, ``KNIGHTS_TOUR``, ``N_QUEENS``) are
also importable from here, loaded on first use (PEP 562): importing one module of this room
(:mod:`btlab.problems.plugins`, as ``btlab --help`` does) loads no problem, and so none of
pydantic, pandas and pyarrow.

Modules:

- ``censoring``: censored trials in one place: which statuses are censored, which statistics
  they bound.
- ``first_import``: a plug-in module's first import, tried in a child process while a
  config is checked: one that ends or takes over the process is refused.
- ``knights_tour/``: the knight's tour: parameters, columns, solve, checks, split; its views.
- ``n_queens/``: N-Queens: parameters, columns, solve, checks, split; its views.
- ``plugins``: user plug-ins named in a config as ``"module:attribute"``: import, hash, ship.
- ``registry``: the built-in problems by name, and :func:`get_problem` for plug-ins too.
- ``spec``: :class:`ProblemSpec`: everything the runner needs to know about one problem.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from btlab.problems.registry import KNIGHTS_TOUR, N_QUEENS, PROBLEMS, get_problem

__all__ = ["KNIGHTS_TOUR", "N_QUEENS", "PROBLEMS", "get_problem"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from btlab.problems import registry  # CLI start-up: btlab --help loads no problem
        return getattr(registry, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
