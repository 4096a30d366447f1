"""Every trial's result is checked against the metrics contract before its row is made.

A solve call -- a built-in strategy's, a kernel's or a plug-in problem's -- returns a
:class:`btlab.experiments.core.SearchResult`. Before its values go into the trial's row,
and so before the row joins a batch of rows written together, :func:`checked_values`
holds them to the metrics contract (``docs/metrics.md``):

* types and ranges from the one table of row columns, :data:`btlab.store.schema.COLUMNS`
  (through :func:`btlab.store.schema.row_schema` and :func:`btlab.store.schema.unfit`):
  counters are ``int`` (not ``bool``, not a float) within int64, the estimates real
  numbers (not NaN), the solution a list of int32, the problem's extra counters int64;
* values: the counters are 0 or more, ``status`` is a :class:`btlab.experiments.core.Status`
  a solver may report (not ``error``, and ``restart_limit`` only from the restart loop),
  the estimates are set in ``mode: estimate`` only, finite and not negative;
* invariants that hold for every strategy, whatever stopped it: ``backtracks``,
  ``dead_ends``, ``max_depth`` and ``solutions`` are at most ``nodes``; a ``solved``
  trial has a solution counted; a solution is returned only when one is counted.

A result that breaks one raises :class:`ResultError` naming the field, which
:func:`btlab.execution.execute.run_trial` makes that trial's error row: the other
rows of its batch are written as usual.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pyarrow as pa

from btlab.experiments.core import SearchResult, Status
from btlab.problems.spec import ProblemSpec
from btlab.store import schema

#: The counters of the metrics contract, in row order.
COUNTERS = schema.names(schema.COUNTER)
#: The columns of ``mode: estimate`` (null in the rows of other modes).
ESTIMATES = schema.names(schema.ESTIMATE)
#: Statuses only btlab sets: ``error`` (the runner) and ``restart_limit`` (the restart loop).
_RUNNER_STATUSES = (Status.ERROR, Status.RESTART_LIMIT)

_types_cache: dict[str, tuple[ProblemSpec, dict[str, pa.DataType]]] = {}


class ResultError(ValueError):
    """A solve call's result that breaks the metrics contract: the trial's error.

    The message names the field, what it holds and what the contract expects.
    """

    def __init__(self, field: str, why: str):
        super().__init__(f"the solve call's result breaks the metrics contract "
                         f"(docs/metrics.md): {field} is {why}")
        self.field = field


def _types(problem: ProblemSpec) -> dict[str, pa.DataType]:
    """Column name -> Arrow type of ``problem``'s rows (built once per problem)."""
    hit = _types_cache.get(problem.name)
    if hit is None or hit[0] is not problem:
        hit = (problem, {f.name: f.type for f in schema.row_schema(problem)})
        _types_cache[problem.name] = hit
    return hit[1]


def _shown(value: Any) -> str:
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a hostile __repr__
        text = f"a {type(value).__name__}"
    return text if len(text) <= 80 else text[:77] + "..."


def _fit(types: Mapping[str, pa.DataType], name: str, value: Any) -> None:
    why = schema.unfit(types[name], value)
    if why is not None:
        raise ResultError(name, why)


def checked_values(result: Any, problem: ProblemSpec, estimate_mode: bool,
                   restarted: Mapping[str, Any]) -> dict[str, Any]:
    """The row values a trial's ``result`` gives, once they keep the metrics contract.

    Args:
        result: what the solve call (or the restart loop, or the estimator) returned.
        problem: the trial's problem (its extra counters, its column types).
        estimate_mode: the trial is ``mode: estimate`` (its estimates may be set).
        restarted: the restart columns of a trial with restarts (``{}``: none).

    Returns:
        ``status``, the counters, the estimate columns, ``solution`` (a list, or None),
        the restart columns, and the problem's extra counters the result gives (a
        name it leaves out is absent).

    Raises:
        ResultError: the first field that breaks the contract.
    """
    if not isinstance(result, SearchResult):
        raise ResultError("the result", f"{_shown(result)} ({type(result).__name__}), not "
                          "a btlab.experiments.core.SearchResult")
    types = _types(problem)
    status = result.status
    if not isinstance(status, Status) or status in _RUNNER_STATUSES and not (
            status is Status.RESTART_LIMIT and restarted):
        able = ", ".join(f"Status.{s.name}" for s in Status if s not in _RUNNER_STATUSES)
        raise ResultError("status", f"{_shown(status)}, not one a solver reports: {able} "
                          "(btlab.experiments.core.Status)")
    values: dict[str, Any] = {"status": status.value}
    for name in COUNTERS:
        value = getattr(result, name)
        _fit(types, name, value)
        if value < 0:
            raise ResultError(name, f"{value:,}, less than 0")
        values[name] = value
    nodes = values["nodes"]
    for name in ("backtracks", "dead_ends", "max_depth", "solutions"):
        if values[name] > nodes:
            raise ResultError(name, f"{values[name]:,}, more than nodes ({nodes:,}): "
                              f"{name} are placements, at most the placements made")
    if status is Status.SOLVED and not values["solutions"]:
        raise ResultError("solutions", "0 in a solved trial (status solved: a solution "
                          "was found and counted)")
    for name in ESTIMATES:
        value = getattr(result, name)
        if value is not None:
            if not estimate_mode:
                raise ResultError(name, f"{_shown(value)} outside mode: estimate (it is "
                                  "null in the rows of other modes)")
            _fit(types, name, value)
            if math.isinf(value) or value < 0:
                raise ResultError(name, f"{value}, not a finite number of at least 0")
        values[name] = value
    solution = result.solution
    if solution is not None:
        _fit(types, "solution", solution)
        if not values["solutions"]:
            raise ResultError("solution", "set while solutions is 0 (a solution is "
                              "returned only when one is counted)")
    values["solution"] = None if solution is None else list(solution)
    for name, value in restarted.items():
        if value is not None:
            _fit(types, name, value)
        values[name] = value
    extra = result.extra
    if not isinstance(extra, Mapping):
        raise ResultError("extra", f"{_shown(extra)} ({type(extra).__name__}), not a "
                          "mapping of extra counters")
    for name in problem.extra_columns:
        if name in extra:
            value = extra[name]
            if value is not None:
                _fit(types, name, value)
            values[name] = value
    return values
