"""The seed as a sweep key: ``seed`` in ``matrix``, ``fixed``, ``include`` and ``exclude``.

The top-level ``seed:`` is the default of every trial. ``seed`` may also be
written where parameters are: ``fixed: {seed: 7}`` (one value), ``include``
entries (one value), ``exclude`` entries (a value or a list of alternatives)
and ``matrix``, as a list (``seed: [1, 2, 3]``) or as the range shorthand
``seed: 1..1000`` (both ends included, like ``start: all`` a value that stands
for a list). Each seed is its own trial: the seed is part of the trial id and
of the solver's seed, and goes to the ``seed`` column. A trial whose seed is
2026 has the same id whether 2026 came from the top level or from ``matrix``.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Mapping, Sequence

from btlab.config.messages import describe
from btlab.config.sweep_config import INT64_MAX, INT64_MIN, SweepConfig
from btlab.errors import ConfigError

__all__ = ["SEED", "check_seeds", "named_seeds", "seed_count", "seed_values", "seed_hint",
           "seedless", "swept_seeds", "with_seeds"]

#: The key that names the seed where parameters are written.
SEED = "seed"

_RANGE = re.compile(r"^\s*(-?\d+)\s*\.\.\s*(-?\d+)\s*$")
#: More digits than any int64 has (19), with room for leading zeros.
_MAX_DIGITS = 40


def seed_values(value: Any) -> Sequence[int] | None:
    """The seeds a matrix value stands for: a list as written, a range ``"A..B"``
    as ``range(A, B + 1)`` (lazy, any length); None for anything else."""
    if isinstance(value, list):
        return value
    if isinstance(value, str):
        m = _RANGE.match(value)
        if m and all(len(g) <= _MAX_DIGITS + 1 for g in m.groups()):  # else check_seeds refuses
            return range(int(m.group(1)), int(m.group(2)) + 1)
    return None


def swept_seeds(config: SweepConfig) -> Sequence[int] | None:
    """The seeds ``matrix.seed`` sweeps when it alone names the seed (not in
    ``exclude`` or ``include``): the trials are then the seedless sweep's times
    these, which :func:`btlab.sweep.expand.plan_size` counts by arithmetic. None otherwise."""
    m = config.model
    if SEED not in m.matrix or any(SEED in e for e in (*m.exclude, *m.include)):
        return None
    return seed_values(m.matrix[SEED])


def named_seeds(config: SweepConfig) -> set[int]:
    """The seeds that ``exclude`` and ``include`` entries name (an exclude entry's
    alternatives too), and the top-level seed: the seeds a sweep may treat unlike
    any other. Every other seed of ``matrix.seed`` gives the same trials but for the
    seed, which is what lets a range be counted by arithmetic
    (:func:`btlab.sweep.expand.plan_size`)."""
    m = config.model
    out: set[int] = {m.seed} if _is_int(m.seed) else set()
    for entry in (*m.exclude, *m.include):
        value = entry.get(SEED)
        for alt in value if isinstance(value, list) else [value]:
            if isinstance(alt, int) and not isinstance(alt, bool):
                out.add(alt)
    return out


def with_seeds(config: SweepConfig, seeds: list[int]) -> SweepConfig:
    """``config`` with ``matrix.seed`` the list ``seeds`` (a few seeds of its range)."""
    matrix = {**config.model.matrix, SEED: list(seeds)}
    return dataclasses.replace(config, model=config.model.model_copy(update={"matrix": matrix}))


def seed_count(seeds: Sequence[int]) -> int:
    """How many distinct seeds ``seeds`` holds (a range by arithmetic)."""
    if isinstance(seeds, range):  # by arithmetic: len() of a range over 2^63 overflows
        return max(0, seeds.stop - seeds.start)
    return len(set(seeds))


def seedless(config: SweepConfig) -> SweepConfig:
    """``config`` without ``matrix.seed``: the sweep of one seed (the top-level one).
    Used where every seed gives the same trials but for the seed: counting and checking."""
    model = config.model.model_copy(update={"matrix": {
        k: v for k, v in config.model.matrix.items() if k != SEED}})
    return dataclasses.replace(config, model=model)


def seed_hint(error: ConfigError, first: Mapping[str, Any]) -> ConfigError:
    """``error`` (the top level's first pydantic error ``first``) with a fix that points
    to ``matrix`` when the top-level ``seed`` holds a list or a range."""
    value = first.get("input")
    if tuple(first.get("loc", ())) != (SEED,) or not (
            isinstance(value, list) or (isinstance(value, str) and _RANGE.match(value))):
        return error
    shown = describe(value) if isinstance(value, list) else value
    return dataclasses.replace(error, fix=f"the top-level seed is one seed, the default of "
                               f"every trial; to sweep seeds write matrix: {{seed: {shown}}}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_one(config: SweepConfig, path: tuple, value: Any, fix: str) -> None:
    if not _is_int(value):
        raise config.error(path, "a whole number (seed)", describe(value), fix)
    if not INT64_MIN <= value <= INT64_MAX:
        raise config.error(path, f"a seed from {INT64_MIN:,} to {INT64_MAX:,} (column seed "
                           "is int64)", f"seed = {value:,}", "use a smaller seed")


def check_seeds(config: SweepConfig) -> None:
    """Check every ``seed`` written among the parameters.

    Raises:
        ConfigError: a seed that is not a whole number in int64, a range that is
            not ``A..B`` with whole numbers A <= B in int64, a list or range in
            ``fixed`` or ``include``, an empty list, ``seed`` in both ``fixed``
            and ``matrix``, or in ``exclude`` while in neither.
    """
    m = config.model
    one = "write one whole number, e.g. seed: 7 (sweep seeds under matrix: seed: 1..100)"
    if SEED in m.fixed:
        _check_one(config, ("fixed", SEED), m.fixed[SEED], one)
    for i, entry in enumerate(m.include):
        if SEED in entry:
            _check_one(config, ("include", i, SEED), entry[SEED], one)
    for i, entry in enumerate(m.exclude):
        if SEED in entry:
            if SEED not in m.matrix and SEED not in m.fixed:
                raise config.error(("exclude", i, SEED), "a key of matrix or fixed (exclude "
                                   "drops combinations of the matrix, before include)",
                                   "'seed', which is in neither",
                                   "drop seed from the entry, or add it to matrix")
            value = entry[SEED]
            for j, alt in enumerate(value if isinstance(value, list) else [value]):
                _check_one(config, ("exclude", i, SEED) + ((j,) if isinstance(value, list)
                                                           else ()), alt, one)
    if SEED not in m.matrix:
        return
    value = m.matrix[SEED]
    path = ("matrix", SEED)
    fix = "list whole numbers, seed: [1, 2, 3], or write a range, seed: 1..1000"
    if isinstance(value, str):
        found = _RANGE.match(value)
        if not found:
            raise config.error(path, "a list of seeds, or a range A..B of whole numbers "
                               "(both ends included)", describe(value), fix)
        ends = "use ends from -2^63 to 2^63 - 1, e.g. seed: 1..1000"
        for text in found.groups():  # checked as text first: int() refuses 4,300+ digits
            if len(text.lstrip("-")) > _MAX_DIGITS:
                raise config.error(path, f"a seed from {INT64_MIN:,} to {INT64_MAX:,} at each "
                                   "end of the range (column seed is int64)",
                                   f"an end of {len(text.lstrip('-')):,} digits", ends)
        lo, hi = int(found.group(1)), int(found.group(2))
        for end in (lo, hi):
            _check_one(config, path, end, ends)
        if lo > hi:
            raise config.error(path, "a range A..B with A <= B (both ends included)",
                               f"{value} (A > B)", f"write seed: {hi}..{lo}")
        return
    if not isinstance(value, list):
        raise config.error(path, "a list of seeds, or a range A..B", describe(value), fix)
    if not value:
        raise config.error(path, "a non-empty list of seeds", "an empty list",
                           "give at least one seed, or delete matrix.seed")
    for i, seed in enumerate(value):
        _check_one(config, path + (i,), seed, fix)
