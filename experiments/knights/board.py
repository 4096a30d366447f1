"""The knight's-tour board: its size, the move order, and each square's neighbours.

The bottom layer of the knight's-tour modules: :mod:`btlab.experiments.knights.ordering`
(the ordering of candidates), :mod:`btlab.experiments.knights.user_rules` (heuristic
plug-ins) and the searches import it; it imports none of them. Squares are
numbered ``row * cols + col``, 0-based, row 0 at the top. Every public name
here is also importable from :mod:`btlab.experiments.knights.ordering` and
:mod:`btlab.experiments.knights.solve`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

#: Squares of a board's tables built between two readings of the clock.
CLOCK_SQUARES = 1024

#: The default move order as (d_row, d_col): clockwise from "two left, one up".
DEFAULT_MOVE_ORDER: tuple[tuple[int, int], ...] = (
    (-1, -2), (-2, -1), (-2, +1), (-1, +2), (+1, +2), (+2, +1), (+2, -1), (+1, -2),
)


def validate_move_order(move_order: Sequence[Sequence[int]]) -> tuple[tuple[int, int], ...]:
    """Return ``move_order`` as a tuple of pairs after checking it.

    Args:
        move_order: the 8 knight moves as (d_row, d_col) pairs, each exactly once.

    Raises:
        ValueError: not a permutation of the 8 knight moves.
    """
    moves = tuple((int(dr), int(dc)) for dr, dc in move_order)
    if sorted(moves) != sorted(DEFAULT_MOVE_ORDER):
        raise ValueError(
            f"move order must list each of the 8 knight moves {list(DEFAULT_MOVE_ORDER)} "
            f"exactly once, got {[list(m) for m in moves]}"
        )
    return moves


@dataclass(frozen=True)
class KnightBoard:
    """Geometry of an m x n board for a given move order.

    Attributes:
        rows, cols: board size, both >= 1.
        move_order: the 8 moves as (d_row, d_col), in the order they are tried.
    """

    rows: int
    cols: int
    move_order: tuple[tuple[int, int], ...] = DEFAULT_MOVE_ORDER

    def __post_init__(self) -> None:
        if self.rows < 1 or self.cols < 1:
            raise ValueError(f"board must be at least 1 x 1, got {self.rows} x {self.cols}")

    @property
    def size(self) -> int:
        """Number of squares, ``rows * cols``."""
        return self.rows * self.cols

    def square(self, row: int, col: int) -> int:
        """Index ``row * cols + col`` of a square. Raises ValueError off the board."""
        if not (0 <= row < self.rows and 0 <= col < self.cols):
            raise ValueError(
                f"square ({row}, {col}) is off the {self.rows} x {self.cols} board "
                f"(rows 0..{self.rows - 1}, cols 0..{self.cols - 1})"
            )
        return row * self.cols + col

    @cached_property
    def neighbours(self) -> tuple[tuple[int, ...], ...]:
        """For each square, the on-board squares a knight's move away, in move order."""
        table = self._neighbour_rows(lambda: False)
        assert table is not None
        return table

    def _neighbour_rows(self, out_of_time: Callable[[], bool]
                        ) -> tuple[tuple[int, ...], ...] | None:
        rows, cols = self.rows, self.cols
        table = []
        unchecked = 0  # squares since the clock was last read
        for r in range(rows):
            for c in range(cols):
                if not unchecked:
                    if out_of_time():
                        return None
                    unchecked = CLOCK_SQUARES
                unchecked -= 1
                table.append(tuple(
                    (r + dr) * cols + (c + dc)
                    for dr, dc in self.move_order
                    if 0 <= r + dr < rows and 0 <= c + dc < cols
                ))
        return tuple(table)

    def build_tables(self, out_of_time: Callable[[], bool], degrees: bool = True) -> bool:
        """Build :attr:`neighbours` now (and, with ``degrees``, :attr:`static_degree` and
        :attr:`centre_distance2`, which the ordering heuristics use), reading
        ``out_of_time()`` about every :data:`CLOCK_SQUARES` squares: a big board's
        tables take seconds (16 rows of a 2000 x 2000 board, 0.1 to 0.7 s by the
        machine's load, were too many between two readings).

        Returns:
            False when time ran out first, True otherwise.
        """
        if "neighbours" not in self.__dict__:
            table = self._neighbour_rows(out_of_time)
            if table is None:
                return False
            self.__dict__["neighbours"] = table  # where cached_property keeps it
        if degrees:
            rows, cols = self.rows, self.cols
            nbrs = self.__dict__["neighbours"]
            static: list[int] = []
            dist2: list[int] = []
            unchecked = 0
            for r in range(rows):
                dr2 = (2 * r - (rows - 1)) ** 2
                for c0 in range(0, cols, CLOCK_SQUARES):
                    unchecked -= min(CLOCK_SQUARES, cols - c0)
                    if unchecked < 0:
                        if out_of_time():
                            return False
                        unchecked = CLOCK_SQUARES
                    c1 = min(c0 + CLOCK_SQUARES, cols)
                    static.extend(map(len, nbrs[r * cols + c0:r * cols + c1]))
                    dist2.extend(dr2 + (2 * c - (cols - 1)) ** 2 for c in range(c0, c1))
            self.__dict__.setdefault("static_degree", tuple(static))
            self.__dict__.setdefault("centre_distance2", tuple(dist2))
        return not out_of_time()

    @cached_property
    def coords(self) -> tuple[tuple[int, int], ...]:
        """For each square index, its ``(row, col)``."""
        return tuple((r, c) for r in range(self.rows) for c in range(self.cols))

    @cached_property
    def static_degree(self) -> tuple[int, ...]:
        """For each square, its number of knight's-move neighbours on the empty board."""
        return tuple(len(n) for n in self.neighbours)

    @cached_property
    def centre_distance2(self) -> tuple[int, ...]:
        """For each square, 4 x its squared Euclidean distance to the board centre (exact ints)."""
        rows, cols = self.rows, self.cols
        return tuple(
            (2 * r - (rows - 1)) ** 2 + (2 * c - (cols - 1)) ** 2
            for r in range(rows) for c in range(cols)
        )

