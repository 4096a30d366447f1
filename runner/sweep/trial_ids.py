"""A set of trial ids in 8 bytes each: what ``btlab run`` holds for every trial of its config.

A trial id is 16 hex digits (:class:`btlab.sweep.trial.Trial`); a Python set of
them costs about 100 bytes a trial, a sorted ``uint64`` array 8. The run keeps
the ids of every trial of its config for the whole run (to tell its rows
from older ones), so that is the difference between flat and growing memory
at a million trials.
"""

from __future__ import annotations

import array
from typing import Container, Iterable, Iterator

import numpy as np


def _code(trial_id: str) -> int | None:
    """The id as a 64-bit number, or None when it is not 16 hex digits."""
    if len(trial_id) != 16:
        return None
    try:
        return int(trial_id, 16)
    except ValueError:
        return None


class TrialIds:
    """An immutable set of 16-hex-digit trial ids, stored as a sorted ``uint64`` array.

    Supports ``in``, ``len``, iteration (as strings), ``ids & other`` and
    ``ids - other`` with any collection of strings (both give Python sets of
    strings), and :meth:`contains_many` for a batch of ids.

    Raises:
        ValueError: an id that is not 16 hex digits.
    """

    def __init__(self, ids: Iterable[str]):
        codes = array.array("Q")
        for trial_id in ids:
            code = _code(trial_id)
            if code is None:
                raise ValueError(f"not a trial id (16 hex digits): {trial_id!r}")
            codes.append(code)
        self._codes = np.unique(np.frombuffer(codes, dtype=np.uint64)) if codes else \
            np.empty(0, dtype=np.uint64)

    def __len__(self) -> int:
        return len(self._codes)

    def __contains__(self, trial_id: object) -> bool:
        code = _code(trial_id) if isinstance(trial_id, str) else None
        if code is None or not len(self._codes):
            return False
        at = int(np.searchsorted(self._codes, np.uint64(code)))
        return at < len(self._codes) and int(self._codes[at]) == code

    def __iter__(self) -> Iterator[str]:
        return (f"{int(code):016x}" for code in self._codes)

    def contains_many(self, trial_ids: list) -> np.ndarray:
        """A boolean array: which of ``trial_ids`` (strings or None) are in the set."""
        codes = [_code(t) if isinstance(t, str) else None for t in trial_ids]
        valid = np.array([c is not None for c in codes], dtype=bool)
        values = np.array([c if c is not None else 0 for c in codes], dtype=np.uint64)
        if not len(self._codes):
            return np.zeros(len(codes), dtype=bool)
        at = np.minimum(np.searchsorted(self._codes, values), len(self._codes) - 1)
        return valid & (self._codes[at] == values)

    def without(self, other: Container[str]) -> Container[str]:
        """The ids in this set and not in ``other``, as a container (``in`` only, no copy)."""
        return _Difference(self, other)

    def __and__(self, other: Iterable[str]) -> set[str]:
        return {t for t in other if t in self}

    def __sub__(self, other: Iterable[str]) -> set[str]:
        others = other if isinstance(other, (set, frozenset)) else set(other)
        return {t for t in self if t not in others}


class _Difference:
    """``a - b`` for ``in`` tests, without building it."""

    def __init__(self, a: Container[str], b: Container[str]):
        self.a, self.b = a, b

    def __contains__(self, trial_id: object) -> bool:
        return trial_id in self.a and trial_id not in self.b
