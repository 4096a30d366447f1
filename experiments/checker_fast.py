"""The checkers of :mod:`btlab.experiments.checker`, vectorised with numpy for big answers.

A ten-million-queen placement or a four-million-square tour takes seconds to
check square by square in Python, which a trial's time budget would not
cover; these take a fraction of that. They only say yes fast: an answer they
cannot pass (wrong shape, not integers, any broken rule) goes to the exact
checker, which raises :class:`~btlab.experiments.checker.InvalidSolution` with its
message naming the first broken rule.
"""

from __future__ import annotations

import array
from typing import Iterator, Sequence

import numpy as np

from btlab.experiments.checker import check_queens, check_tour

#: Below this many squares or queens the plain checkers are as fast.
FAST_FROM = 4096


def _ints(values: Sequence[int] | np.ndarray) -> np.ndarray | None:
    """``values`` as an int64 array, or None when they are not all integers (a float, an
    int beyond 64 bits: the exact checker decides)."""
    if isinstance(values, np.ndarray):
        return values.astype(np.int64, copy=False) if values.dtype.kind in "iu" else None
    try:
        return np.frombuffer(array.array("q", values), dtype=np.int64)
    except (TypeError, ValueError, OverflowError):
        return None


def _plain(values: object) -> bool:
    """A list, tuple, range, array.array or one-dimensional numpy array: what the fast
    path takes (anything else, e.g. a dict or set, goes to the exact checker)."""
    if isinstance(values, np.ndarray):
        return values.ndim == 1
    return isinstance(values, (list, tuple, range, array.array))


def _distinct(values: np.ndarray, size: int) -> bool:
    return bool(np.bincount(values, minlength=size).max(initial=0) <= 1)


def queens_pass(n: int, cols: Sequence[int] | np.ndarray) -> bool:
    """True when ``cols`` is certainly a valid n-queens placement."""
    if len(cols) != n:
        return False
    arr = _ints(cols)
    if arr is None or (n and (arr.min() < 0 or arr.max() >= n)):
        return False
    rows = np.arange(n, dtype=np.int64)
    return (_distinct(arr, n) and _distinct(rows + arr, 2 * n)
            and _distinct(rows - arr + n, 2 * n))


def check_queens_fast(n: int, cols: Sequence[int] | np.ndarray) -> None:
    """:func:`btlab.experiments.checker.check_queens`, fast on big boards (same errors)."""
    if isinstance(cols, Iterator):
        cols = list(cols)
    if not isinstance(n, int) or n < FAST_FROM or not _plain(cols) or not queens_pass(n, cols):
        check_queens(n, cols)  # type: ignore[arg-type]  # an array is checked too


def tour_pass(rows: int, cols: int, start: tuple[int, int], tour: Sequence[int],
              closed: bool = False) -> bool:
    """True when ``tour`` is certainly a valid knight's tour of the board."""
    size = rows * cols
    if len(tour) != size or not size:
        return False
    arr = _ints(tour)
    if arr is None or arr.min() < 0 or arr.max() >= size or not _distinct(arr, size):
        return False
    if int(arr[0]) != start[0] * cols + start[1]:
        return False
    if closed and size > 1:
        arr = np.append(arr, arr[0])
    r, c = np.divmod(arr, cols)
    dr, dc = np.diff(r), np.diff(c)
    return bool(np.all(dr * dr + dc * dc == 5))


def check_tour_fast(rows: int, cols: int, start: tuple[int, int], tour: Sequence[int],
                    closed: bool = False) -> None:
    """:func:`btlab.experiments.checker.check_tour`, fast on big boards (same errors)."""
    if isinstance(tour, Iterator):  # a generator: read it once, for both checkers
        tour = list(tour)
    if (not isinstance(rows, int) or not isinstance(cols, int) or rows * cols < FAST_FROM
            or not _plain(tour) or not tour_pass(rows, cols, start, tour, closed)):
        check_tour(rows, cols, start, tour, closed)
