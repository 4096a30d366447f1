"""The checkers given answers of every odd shape: each is a tour (or placement) or
an InvalidSolution naming what is wrong, never a TypeError; the fast checkers say
the same as the exact ones."""

from __future__ import annotations

import numpy as np
import pytest

from btlab.experiments.checker import InvalidSolution, check_queens, check_tour
from btlab.experiments.checker_fast import check_queens_fast, check_tour_fast
from btlab.experiments.knights.solve import solve_knights_tour

TOUR = list(solve_knights_tour(5, 5, (0, 0), heuristic="warnsdorff").solution)
BIG = list(solve_knights_tour(70, 70, (0, 0), heuristic="warnsdorff",
                              strategy="iterative").solution)
CHECKERS = [check_tour, check_tour_fast]


@pytest.mark.parametrize("check", CHECKERS)
@pytest.mark.parametrize("rows, tour", [
    (5, lambda: (x for x in TOUR)), (5, lambda: np.array(TOUR)), (5, lambda: tuple(TOUR)),
    (5, lambda: np.array(TOUR, dtype=np.uint16)), (70, lambda: (x for x in BIG)),
    (70, lambda: np.array(BIG)),
], ids=["generator", "array", "tuple", "uint16", "big-generator", "big-array"])
def test_a_tour_in_any_sequence_passes(check, rows, tour):
    check(rows, rows, (0, 0), tour())


@pytest.mark.parametrize("check", CHECKERS)
@pytest.mark.parametrize("rows, start, tour, fragment", [
    (5, (0, 0), {i: x for i, x in enumerate(TOUR)}, "(dict, unordered), not a sequence"),
    (5, (0, 0), set(TOUR), "(set, unordered), not a sequence"),
    (5, (0, 0), np.array(5), "a 0-dimensional array"),
    (5, (0, 0), np.array(TOUR).reshape(5, 5), "a 2-dimensional array"),
    (70, (0, 0), np.array(BIG).reshape(70, 70), "a 2-dimensional array"),
    (5.0, (0, 0), TOUR, "rows is 5.0 (float), not a whole number"),
    (True, (0, 0), TOUR, "rows is True, a boolean"),
    (5, (0,), TOUR, "the start (0,) is not a square"),
    (5, None, TOUR, "the start is None"),
    (5, (0.0, 0), TOUR, "coordinate 0: 0.0 (float) is not an integer"),
    (5, (True, False), TOUR, "coordinate 0: True is a boolean"),
    (70, (0, 0), [float(x) for x in BIG], "step 0: 0.0 (float) is not an integer"),
], ids=["dict", "set", "0-d", "2-d", "big-2-d", "float-rows", "bool-rows", "short-start",
        "no-start", "float-start", "bool-start", "big-floats"])
def test_odd_inputs_are_invalid_solutions(check, rows, start, tour, fragment):
    with pytest.raises(InvalidSolution) as info:
        check(rows, rows if isinstance(rows, int) and not isinstance(rows, bool) else 5,
              start, tour)
    assert fragment in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("check", [check_queens, check_queens_fast])
def test_queens_odd_inputs(check):
    check(4, (x for x in [1, 3, 0, 2]))
    check(4, np.array([1, 3, 0, 2], dtype=np.int8))
    for n, cols, fragment in [(8.0, [0] * 8, "n is 8.0 (float)"),
                              (4, {1, 3, 0, 2}, "(set, unordered)"),
                              (4, np.array([[1, 3], [0, 2]]), "a 2-dimensional array"),
                              (4, np.array(3), "a 0-dimensional array"),
                              (-4, [], "n is -4, below 0")]:
        with pytest.raises(InvalidSolution) as info:
            check(n, cols)
        assert fragment in str(info.value), str(info.value)
