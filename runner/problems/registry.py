"""The problem registry: built-in specs by name, and user problems named ``"module:ATTR"``.

A new built-in problem is one package in :mod:`btlab.problems` plus one line in
:data:`PROBLEMS`; a user's problem needs no line at all: a config names it as
``problem: "my_pkg.module:PROBLEM"`` (``docs/extending.md``).
"""

from __future__ import annotations

import dataclasses

from btlab.experiments.registry import Registry
from btlab.problems import plugins
from btlab.problems.knights_tour import PROBLEM as KNIGHTS_TOUR
from btlab.problems.n_queens import PROBLEM as N_QUEENS
from btlab.problems.spec import ProblemSpec

#: The built-in problems, by name.
PROBLEMS: Registry[ProblemSpec] = Registry("problem", {p.name: p for p in (KNIGHTS_TOUR,
                                                                          N_QUEENS)})


def get_problem(name: str) -> ProblemSpec:
    """The spec of a built-in problem, or of a plug-in named ``"module:ATTR"``.

    A plug-in's spec is returned with its ``name`` set to the reference, which
    is what goes into the Parquet rows and what workers look up.

    Raises:
        ValueError: an unknown built-in name (the message lists the valid ones).
        btlab.problems.plugins.PluginError: a plug-in that does not import or is not a
            :class:`ProblemSpec`.
    """
    if not plugins.is_ref(name):
        return PROBLEMS.get_or_raise(name)
    spec = plugins.load(name)
    if not isinstance(spec, ProblemSpec):
        raise plugins.PluginError("a btlab.problems.spec.ProblemSpec",
                                  f"{name} = {type(spec).__name__}",
                                  "point problem at the module's ProblemSpec object")
    return spec if spec.name == name else dataclasses.replace(spec, name=name)


__all__ = ["KNIGHTS_TOUR", "N_QUEENS", "PROBLEMS", "get_problem"]
