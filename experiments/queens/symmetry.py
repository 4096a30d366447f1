"""N-Queens helpers shared by the strategy modules: the symmetry test, unique counting.

See :mod:`btlab.experiments.queens.solve` for the placements, strategies and counters.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

#: Boards above this many rows run the recursive strategies in a big-stack thread.
DEEP_BOARD = 400


def is_canonical(cols: Sequence[int]) -> bool:
    """True when a placement is the lexicographically smallest of its 8 images.

    The images are those under the symmetries of the square (the dihedral
    group D4: rotations by 0, 90, 180, 270 degrees and the four reflections),
    each written as columns by row. Counting the canonical solutions counts
    each class of solutions once (OEIS A002562).

    Args:
        cols: a placement of n >= 1 queens with distinct columns 0..n-1
            (a permutation, as every N-Queens solution is).

    Returns:
        Whether ``cols`` is not larger than any of its images.
    """
    s = list(cols)
    top = len(s) - 1
    head = s[0]
    inv0, inv_top = s.index(0), s.index(top)   # rows of the queens in columns 0 and n-1
    # First entries of the 7 other images; most placements lose on one of them.
    heads = (top - head, s[-1], top - s[-1], inv0, top - inv0, inv_top, top - inv_top)
    if min(heads) < head:
        return False
    inv = [0] * len(s)
    for r, c in enumerate(s):
        inv[c] = r
    images: tuple[Callable[[], list[int]], ...] = (
        lambda: [top - c for c in s],              # mirror left-right
        lambda: s[::-1],                           # mirror top-bottom
        lambda: [top - c for c in reversed(s)],    # rotate 180
        lambda: inv,                               # transpose
        lambda: [top - r for r in inv],            # rotate 90 clockwise
        lambda: inv[::-1],                         # rotate 90 anticlockwise
        lambda: [top - r for r in reversed(inv)],  # anti-transpose
    )
    return all(s <= make() for h, make in zip(heads, images) if h == head)


def unique_extra(unique: bool, solutions: int, canonical: int) -> tuple[int, dict[str, int]]:
    """The reported solution count and extra columns for ``unique`` counting."""
    if unique:
        return canonical, {"all_solutions": solutions}
    return solutions, {}
