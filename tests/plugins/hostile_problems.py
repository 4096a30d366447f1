"""Problem plug-ins that misbehave, one spec each, for tests/test_hostile_plugins.py.

Every spec has one parameter ``k`` (0..100) and a solve call that returns a
well-formed result except for ``k = 4``, whose result breaks the metrics
contract in the way the spec's name says; the column specs clash with names
btlab writes itself. Self-contained (no import of another test module), so that
Ray ships it to the workers alone.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Annotated, Any, Callable

import pyarrow as pa
from pydantic import Field, StrictInt

from btlab.experiments.core import SearchResult, Status
from btlab.problems.spec import Params, ProblemSpec

#: The trial whose result is bad.
BAD_K = 4


class KParams(Params):
    k: Annotated[StrictInt, Field(ge=0, le=100)] = 0


def good(k: int, extra: Mapping[str, Any] | None = None) -> SearchResult:
    """A result that keeps the contract: k + 1 placements, all undone, no solution."""
    return SearchResult(Status.EXHAUSTED, k + 1, k + 1, 1, 2 * k, 0, 1,
                        extra=dict(extra or {}))


def _spec(name: str, bad: Callable[[int], Any], **changes: Any) -> ProblemSpec:
    def solve(c: Mapping[str, Any], max_nodes: int | None, max_seconds: float | None,
              seed: int) -> Any:
        k = c["k"]
        return bad(k) if k == BAD_K else good(k, {"bonus": k} if "bonus" in
                                                  changes.get("extra_columns", ()) else None)

    fields: dict[str, Any] = dict(
        name=f"hostile_problems:{name}", title="Hostile", params=KParams,
        columns=pa.schema([("k", pa.int32())]), to_columns=lambda p: {"k": p["k"]},
        solve=solve, verify=lambda c, s: None)
    fields.update(changes)
    return ProblemSpec(**fields)


def _with(**values: Any) -> Callable[[int], SearchResult]:
    return lambda k: dataclasses.replace(good(k), **values)


#: Results of k = 4 that break the contract.
BIG = _spec("BIG", _with(nodes=2 ** 70))
MANY = _spec("MANY", _with(nodes="many"))
NAN = _spec("NAN", _with(nodes=float("nan")))
FLOAT = _spec("FLOAT", _with(checks=3.0))
BOOL = _spec("BOOL", _with(solutions=True))
NEGATIVE = _spec("NEGATIVE", _with(dead_ends=-1))
MORE_BACKTRACKS = _spec("MORE_BACKTRACKS", _with(backtracks=10 ** 6))
SOLVED_NONE = _spec("SOLVED_NONE", _with(status=Status.SOLVED))
STATUS_TEXT = _spec("STATUS_TEXT", _with(status="solved"))
STATUS_ERROR = _spec("STATUS_ERROR", _with(status=Status.ERROR))
ESTIMATE_NAN = _spec("ESTIMATE_NAN", _with(estimate=float("nan")))
SOLUTION_BIG = _spec("SOLUTION_BIG", _with(solutions=1, solution=(0, 2 ** 40)))
NOT_A_RESULT = _spec("NOT_A_RESULT", lambda k: {"nodes": 5})
BAD_EXTRA = _spec("BAD_EXTRA", lambda k: good(k, {"bonus": 2 ** 70}), extra_columns=("bonus",))
NAN_EXTRA = _spec("NAN_EXTRA", lambda k: good(k, {"bonus": float("nan")}),
                  extra_columns=("bonus",))

#: Columns that clash with btlab's.
STATUS_COLUMN = _spec("STATUS_COLUMN", good,
                      columns=pa.schema([("k", pa.int32()), ("status", pa.string())]),
                      to_columns=lambda p: {"k": p["k"], "status": "bogus"})
TRIAL_ID_COLUMN = _spec("TRIAL_ID_COLUMN", good,
                        columns=pa.schema([("k", pa.int32()), ("trial_id", pa.string())]),
                        to_columns=lambda p: {"k": p["k"], "trial_id": "x"})
SOURCE_COLUMN = _spec("SOURCE_COLUMN", good,
                      columns=pa.schema([("k", pa.int32()), ("source", pa.string())]),
                      to_columns=lambda p: {"k": p["k"], "source": "x"})
NODES_EXTRA = _spec("NODES_EXTRA", good, extra_columns=("nodes",))
TWICE = _spec("TWICE", good, extra_columns=("k",))
HIDDEN_KEY = _spec("HIDDEN_KEY", good, to_columns=lambda p: {"k": p["k"], "trial_id": "x"})
#: btlab fills compile_ns in for the problems that list it: allowed.
COMPILE_NS = _spec("COMPILE_NS", good, extra_columns=("compile_ns",))
