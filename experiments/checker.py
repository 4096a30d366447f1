"""Checkers that verify answers from first principles, never against a stored answer.

Many tours and placements are right, so btlab never compares a solution with
one remembered answer: it checks the rules. The runner calls these on every
solved row before it is written, and the tests call them on every answer.
"""

from __future__ import annotations

import operator
from typing import AbstractSet, Any, Mapping, Sequence


class InvalidSolution(ValueError):
    """A tour or a placement breaks a rule; the message says which and where."""


def _integers(values: Any, what: str, item: str) -> list[int]:
    """``values`` as a list of Python ints, or InvalidSolution naming the first item that
    is not an integer (a float, a string, a boolean, a list, None). Integer types other
    than ``int`` (numpy's) are accepted, as ``operator.index`` takes them."""
    ndim = getattr(values, "ndim", 1)
    if (isinstance(values, (str, bytes, bytearray, Mapping, AbstractSet))
            or not hasattr(values, "__iter__") or ndim != 1):
        shown = " ".join(repr(values).split())
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        shape = (f"a {ndim}-dimensional array" if ndim != 1 else
                 "unordered" if isinstance(values, (Mapping, AbstractSet)) else "")
        raise InvalidSolution(f"{what} is {shown} ({type(values).__name__}"
                              f"{', ' + shape if shape else ''}), not a sequence of integers")
    kind = getattr(getattr(values, "dtype", None), "kind", None)
    if kind in ("i", "u"):  # a numpy array of integers
        return values.tolist()
    if isinstance(values, (list, tuple)) and all(type(x) is int for x in values):
        return list(values)  # the common case, checked at C speed
    out = []
    for i, x in enumerate(values):
        if type(x).__name__ in ("bool", "bool_"):  # an integer to Python, never a square
            raise InvalidSolution(f"{item} {i}: {x!r} is a boolean, not an integer")
        try:
            out.append(operator.index(x))
        except TypeError:
            raise InvalidSolution(f"{item} {i}: {x!r} ({type(x).__name__}) is not an "
                                  "integer") from None
    return out


def _board(value: Any, what: str) -> int:
    """A board side as a Python int >= 0, or InvalidSolution (a float, a boolean)."""
    if type(value).__name__ in ("bool", "bool_"):
        raise InvalidSolution(f"{what} is {value!r}, a boolean, not a board size")
    try:
        side = operator.index(value)
    except TypeError:
        raise InvalidSolution(f"{what} is {value!r} ({type(value).__name__}), not a whole "
                              "number") from None
    if side < 0:
        raise InvalidSolution(f"{what} is {side}, below 0")
    return side


def check_tour(rows: int, cols: int, start: tuple[int, int], tour: Sequence[int],
               closed: bool = False) -> None:
    """Verify a knight's tour.

    Args:
        rows, cols: board size.
        start: the start square (row, col) the tour must begin on.
        tour: square indices ``row * cols + col`` in visiting order.
        closed: also require the last square to be a knight's move from the first.

    Raises:
        InvalidSolution: not a sequence of integers (a float, string, boolean or
            list among the squares; a mapping, a set, an array of 0 or 2 dimensions),
            a board side or start that is not whole numbers, wrong length, a square off the board or
            visited twice, a step that is not a knight's move, the wrong start,
            or (closed) an end that does not reach the start.
    """
    rows, cols = _board(rows, "rows"), _board(cols, "cols")
    square = tuple(_integers(start, "the start", "coordinate"))
    if len(square) != 2:
        raise InvalidSolution(f"the start {square} is not a square (row, col)")
    start = (square[0], square[1])
    tour = _integers(tour, "the tour", "step")
    size = rows * cols
    if len(tour) != size:
        raise InvalidSolution(f"tour has {len(tour)} squares, a {rows} x {cols} board has {size}")
    seen = bytearray(size)
    for i, sq in enumerate(tour):
        if not 0 <= sq < size:
            raise InvalidSolution(f"step {i}: square {sq} is off the {rows} x {cols} board")
        if seen[sq]:
            raise InvalidSolution(
                f"step {i}: square {sq} ({sq // cols}, {sq % cols}) visited twice")
        seen[sq] = 1
    first_sq = start[0] * cols + start[1]
    if size and tour[0] != first_sq:
        raise InvalidSolution(f"tour starts on square {tour[0]}, not on the start {tuple(start)}")
    steps = list(zip(tour, tour[1:]))
    if closed and size > 1:
        steps.append((tour[-1], tour[0]))
    for i, (a, b) in enumerate(steps):
        dr, dc = a // cols - b // cols, a % cols - b % cols
        if dr * dr + dc * dc != 5:  # (+-1, +-2) or (+-2, +-1): a knight's move
            raise InvalidSolution(
                f"step {i + 1}: ({a // cols}, {a % cols}) -> ({b // cols}, {b % cols}) "
                "is not a knight's move")


def check_queens(n: int, cols: Sequence[int]) -> None:
    """Verify an N-Queens placement in O(n) time.

    Args:
        n: board size.
        cols: the queen's column in each row, ``cols[row]``.

    Raises:
        InvalidSolution: not a sequence of integers (a float, string, boolean or
            list among the columns), wrong length, a column off the board, or two
            queens sharing a column or a diagonal.
    """
    n = _board(n, "n")
    cols = _integers(cols, "the placement", "row")
    if len(cols) != n:
        raise InvalidSolution(f"placement has {len(cols)} queens, an {n} x {n} board needs {n}")
    used_col = bytearray(n)
    used_diag = bytearray(2 * n)   # row + col
    used_anti = bytearray(2 * n)   # row - col + n
    for row, col in enumerate(cols):
        if not 0 <= col < n:
            raise InvalidSolution(f"row {row}: column {col} is off the {n} x {n} board")
        if used_col[col]:
            raise InvalidSolution(f"row {row}: column {col} already holds a queen")
        if used_diag[row + col] or used_anti[row - col + n]:
            raise InvalidSolution(f"row {row}: the queen on column {col} shares a diagonal")
        used_col[col] = used_diag[row + col] = used_anti[row - col + n] = 1
