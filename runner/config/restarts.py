"""Restarts: run a randomized trial as a sequence of attempts under a cut-off policy.

``restarts: {policy: luby | fixed | geometric, unit: N, on: nodes | backtracks,
max: M}`` (``geometric`` also takes ``factor``, default 2) makes a trial a
sequence of attempts (Luby, Sinclair & Zuckerman, "Optimal speedup of Las
Vegas algorithms", Information Processing Letters 47, 1993; Gomes, Selman &
Kautz, "Boosting combinatorial search through randomization", AAAI 1998).
Attempt k (0-based) runs the problem's own solve call with

* the seed :func:`attempt_seed` ``(solver_seed, k)``: output k of SplitMix64
  seeded with the trial's solver seed, shifted right one bit (63 bits, so it
  fits the int64 column ``success_seed``);
* the cut-off :meth:`Restarts.cutoff` ``(k)`` as its ``max_nodes`` (``on:
  nodes``) or ``max_backtracks`` (``on: backtracks``): ``luby`` gives ``unit``
  times the Luby sequence 1, 1, 2, 1, 1, 2, 4, 1, 1, 2, 1, 1, 2, 4, 8, ...;
  ``fixed`` gives ``unit`` every time; ``geometric`` gives
  ``floor(unit * factor^k)``. Each is at most 2^62.

The trial's own budgets are per trial: an attempt's node (backtrack) limit is
the smaller of its cut-off and what is left of ``budget.nodes``
(``budget.backtracks``), and it gets what is left of ``budget.seconds``.
The row sums ``nodes``, ``backtracks``, ``dead_ends`` and ``checks`` over the
attempts, keeps the largest ``max_depth`` and the successful attempt's
``solutions`` and ``solution``; ``abandoned`` sums the placements still on the
path when the policy cut an attempt off (``nodes - backtracks`` of that
attempt), so ``nodes - backtracks - abandoned`` is the length of the solution
path of a solved trial. Status: ``solved``; ``exhausted`` when an attempt
searched its whole tree (no solution exists: the tree of a random order holds
every solution); ``node_limit``, ``backtrack_limit`` or ``time_limit`` when
the trial's budget stopped it; ``restart_limit`` (censored) when ``max``
attempts were cut off.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Annotated, Any, Callable, Literal, Mapping, Optional, Union

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictInt, model_validator
from pydantic_core import PydanticCustomError

from btlab.config.messages import describe
from btlab.experiments.core import SearchResult, Status

__all__ = ["MAX_CUTOFF", "RESTART_LIMIT", "Restarts", "RestartsModel", "RestartRun",
           "attempt_seed", "factor_text", "luby", "run_restarts"]

#: The status of a trial whose ``max`` attempts were all cut off (censored).
RESTART_LIMIT = Status.RESTART_LIMIT.value
#: The largest cut-off (the solvers' own cap on counters).
MAX_CUTOFF = 1 << 62
_MASK = (1 << 64) - 1
_GAMMA = 0x9E3779B97F4A7C15


#: The largest ``factor`` of ``geometric``.
MAX_FACTOR = 1000


def _factor(value: Any) -> Any:
    """``factor`` as written: a finite number > 1 and at most :data:`MAX_FACTOR` (an int,
    or a float; a float that is a whole number becomes that int, so ``2`` and ``2.0``
    are one policy), or None.

    Raises:
        PydanticCustomError: anything else (type ``bad_value``: expected, found, fix).
    """
    if value is None:
        return None
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if number and math.isfinite(value) and 1 < value <= MAX_FACTOR:
        return int(value) if isinstance(value, float) and value.is_integer() else value
    raise PydanticCustomError("bad_value", "{expected}", {
        "expected": f"a number greater than 1 and at most {MAX_FACTOR:,} (each cut-off is "
                    "factor times the one before; a whole number or a decimal)",
        "found": describe(value),
        "fix": "write e.g. factor: 2 or factor: 1.5 (no quotes)"})


class RestartsModel(BaseModel):
    """The ``restarts`` mapping of a config: ``policy``, ``unit``, ``on``, ``max``, ``factor``.

    ``unit``: a whole number >= 1 with ``on: nodes`` (a node budget of 0 runs
    nothing), >= 0 with ``on: backtracks`` (0: every attempt is greedy).
    ``max``: the most attempts (>= 1), or none. ``factor`` (``geometric`` only):
    a number > 1 and at most 1,000, default 2 (a float that is a whole number is read
    as that int: ``2.0`` is ``2``).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    policy: Literal["luby", "fixed", "geometric"]
    unit: Annotated[StrictInt, Field(ge=0, le=MAX_CUTOFF)]
    on: Literal["nodes", "backtracks"] = "nodes"
    max: Optional[Annotated[StrictInt, Field(ge=1, le=MAX_CUTOFF)]] = None
    factor: Annotated[Optional[Union[int, float]], BeforeValidator(_factor)] = None

    @model_validator(mode="after")
    def _consistent(self) -> "RestartsModel":
        if self.on == "nodes" and self.unit < 1:
            raise ValueError("unit must be at least 1 with on: nodes (an attempt of 0 "
                             "placements runs nothing); unit: 0 is allowed with on: backtracks")
        if self.factor is not None and self.policy != "geometric":
            raise ValueError(f"factor is for policy: geometric only, not policy: {self.policy}")
        return self

    def policy_of(self) -> "Restarts":
        """The frozen policy a trial carries."""
        factor = (self.factor if self.factor is not None else 2) \
            if self.policy == "geometric" else None
        return Restarts(self.policy, self.unit, self.on, self.max, factor)


def luby(i: int) -> int:
    """Term ``i`` (1-based) of the Luby sequence 1, 1, 2, 1, 1, 2, 4, 1, 1, 2, ...

    ``t(i) = 2^(k-1)`` when ``i = 2^k - 1``, else ``t(i - 2^(k-1) + 1)`` for the k
    with ``2^(k-1) <= i < 2^k - 1``.

    Raises:
        ValueError: ``i < 1``.
    """
    if i < 1:
        raise ValueError(f"the Luby sequence starts at term 1, got {i}")
    while True:
        k = i.bit_length()
        if i == (1 << k) - 1:
            return 1 << (k - 1)
        i -= (1 << (k - 1)) - 1


def attempt_seed(seed: int, k: int) -> int:
    """The seed of attempt ``k`` (0-based) of a trial whose solver seed is ``seed``.

    Output k of SplitMix64 (Steele, Lea & Flood 2014) seeded with ``seed``:
    ``z = seed + (k + 1) * 0x9E3779B97F4A7C15 mod 2^64``, then
    ``z = (z ^ z >> 30) * 0xBF58476D1CE4E5B9``, ``z = (z ^ z >> 27) * 0x94D049BB133111EB``
    (mod 2^64), ``z ^ z >> 31``; shifted right one bit (0 .. 2^63 - 1).
    """
    z = (seed + (k + 1) * _GAMMA) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return (z ^ (z >> 31)) >> 1


def factor_text(factor: float | int) -> str:
    """``factor`` as text that reads back as exactly that number: ``%g`` (six digits,
    the form labels have always had: ``1.5``) when that gives the number back, else
    Python's shortest round-trip form (``1.5000001``). Labels, and so trial ids, are
    made from it: nothing is rounded."""
    if not isinstance(factor, float):
        return str(factor)
    short = f"{factor:g}"
    return short if float(short) == factor else repr(factor)


@dataclass(frozen=True)
class Restarts:
    """A trial's restart policy (see the module docstring).

    Attributes:
        policy: ``luby``, ``fixed`` or ``geometric``.
        unit: the cut-off unit (placements or backtracks).
        on: ``nodes`` or ``backtracks``: what the cut-off limits.
        max: the most attempts, or None.
        factor: the ratio of ``geometric`` (None for the others).
    """

    policy: str
    unit: int
    on: str
    max: int | None = None
    factor: float | int | None = None

    def cutoff(self, k: int) -> int:
        """The cut-off of attempt ``k`` (0-based), at most :data:`MAX_CUTOFF`."""
        if self.policy == "fixed":
            return self.unit
        if self.policy == "luby":
            return min(self.unit * luby(k + 1), MAX_CUTOFF)
        factor = self.factor if self.factor is not None else 2
        if isinstance(factor, int):
            return min(self.unit * factor ** min(k, 64), MAX_CUTOFF)
        try:
            return min(math.floor(self.unit * factor ** k), MAX_CUTOFF)
        except OverflowError:
            return MAX_CUTOFF

    def label(self) -> str:
        """The canonical text of the policy: the ``restarts`` column and part of the trial
        id, e.g. ``luby unit=1 on=backtracks max=1000`` (``factor=`` for geometric;
        ``max=`` only when set). Exact: ``factor`` is written with every digit it has
        (:func:`factor_text`), so two policies never share a label."""
        parts = [self.policy, f"unit={self.unit}", f"on={self.on}"]
        if self.factor is not None:
            parts.append(f"factor={factor_text(self.factor)}")
        if self.max is not None:
            parts.append(f"max={self.max}")
        return " ".join(parts)


@dataclass(frozen=True)
class RestartRun:
    """What :func:`run_restarts` returns: the trial's result and the restart columns.

    Attributes:
        result: the trial's counters, status and solution (see the module docstring).
        attempts: attempts run (>= 1).
        abandoned: placements left on the path at the policy's cut-offs, summed.
        success_seed: the seed of the attempt that found the solution, or None.
    """

    result: SearchResult
    attempts: int
    abandoned: int
    success_seed: int | None


def _left(limit: int | None, used: int) -> int | None:
    return None if limit is None else limit - used


def run_restarts(solve: Callable[..., SearchResult], columns: Mapping[str, Any],
                 restarts: Restarts, seed: int, max_nodes: int | None,
                 max_seconds: float | None, max_backtracks: int | None = None) -> RestartRun:
    """Run one trial as attempts under ``restarts`` (see the module docstring).

    Args:
        solve: the problem's solve call ``(columns, max_nodes, max_seconds, seed,
            max_backtracks=...) -> SearchResult`` (``max_backtracks`` is passed only
            when an attempt has a backtrack limit).
        columns: the trial's parameter columns.
        restarts: the policy.
        seed: the trial's solver seed (attempt seeds derive from it).
        max_nodes, max_seconds, max_backtracks: the trial's budgets (None: none).

    Returns:
        A :class:`RestartRun`.
    """
    deadline = None if max_seconds is None else time.perf_counter() + max_seconds
    nodes = backtracks = dead_ends = checks = depth = abandoned = 0
    extra: dict[str, int] = {}
    k = 0
    status: str | None = None
    last: SearchResult | None = None
    while status is None:
        if restarts.max is not None and k >= restarts.max:
            status = RESTART_LIMIT
            break
        cut = restarts.cutoff(k)
        node_left, bt_left = _left(max_nodes, nodes), _left(max_backtracks, backtracks)
        attempt_nodes, attempt_bts = node_left, bt_left
        if restarts.on == "nodes":
            attempt_nodes = cut if node_left is None else min(cut, node_left)
        else:
            attempt_bts = cut if bt_left is None else min(cut, bt_left)
        seconds = None
        if deadline is not None:
            seconds = deadline - time.perf_counter()
            if seconds <= 0:
                status = Status.TIME_LIMIT.value
                break
        if attempt_nodes is not None and attempt_nodes <= 0:
            status = Status.NODE_LIMIT.value
            break
        seed_k = attempt_seed(seed, k)
        more = {} if attempt_bts is None else {"max_backtracks": attempt_bts}
        last = solve(columns, attempt_nodes, seconds, seed_k, **more)
        k += 1
        nodes += last.nodes
        backtracks += last.backtracks
        dead_ends += last.dead_ends
        checks += last.checks
        depth = max(depth, last.max_depth)
        for name, value in last.extra.items():
            if isinstance(value, int) and not isinstance(value, bool):
                extra[name] = extra.get(name, 0) + value
        st = last.status
        if st in (Status.SOLVED, Status.EXHAUSTED, Status.TIME_LIMIT, Status.ERROR):
            status = st.value
        elif st == Status.NODE_LIMIT and (restarts.on != "nodes" or (
                max_nodes is not None and nodes >= max_nodes)):
            status = st.value  # the trial's node budget, not the cut-off
        elif st == Status.BACKTRACK_LIMIT and (restarts.on != "backtracks" or (
                max_backtracks is not None and backtracks >= max_backtracks)):
            status = st.value
        elif st in (Status.NODE_LIMIT, Status.BACKTRACK_LIMIT):
            abandoned += last.nodes - last.backtracks  # cut off: its path is abandoned
        else:
            status = st.value
    solved = last is not None and status == Status.SOLVED.value
    result = SearchResult(
        status=Status(status), nodes=nodes, backtracks=backtracks, dead_ends=dead_ends,
        checks=checks, solutions=last.solutions if solved and last is not None else 0,
        max_depth=depth, solution=last.solution if solved and last is not None else None,
        extra=extra)
    return RestartRun(result, k, abandoned, attempt_seed(seed, k - 1) if solved else None)
