"""Hamiltonian paths on a grid graph: a whole problem for btlab in one module.

A path visits every cell of a ``rows x cols`` grid exactly once, moving one
cell up, right, down or left at each step, from a given start cell. Cells
are numbered ``row * cols + col``. A config names the problem as
``problem: "grid_path:PROBLEM"`` (run btlab from the folder that holds this
file, or put that folder on PYTHONPATH).

Counters (the metrics contract, ``docs/metrics.md`` of btlab): a *placement* is
entering a cell, the start being placement 1; *checks* are the neighbour
cells on the grid looked at to list a placement's candidates (a full path
lists none); a *dead end* is a placement short of a full path with no
unvisited neighbour.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Annotated, Any, Literal

import pyarrow as pa
from pydantic import Field, StrictInt

from btlab.experiments.core import Budget, Mode, SearchResult, Status, StopSearch
from btlab.experiments.registry import Strategy, strategies
from btlab.problems.spec import Oracle, ParamError, Params, ProblemSpec

PositiveInt = Annotated[StrictInt, Field(ge=1)]
NonNegativeInt = Annotated[StrictInt, Field(ge=0)]

#: The neighbour order, as (d_row, d_col): up, right, down, left.
MOVES = ((-1, 0), (0, 1), (1, 0), (0, -1))


def neighbours(rows: int, cols: int) -> list[tuple[int, ...]]:
    """For each cell, its neighbour cells on the grid in :data:`MOVES` order."""
    return [tuple((r + dr) * cols + c + dc for dr, dc in MOVES
                  if 0 <= r + dr < rows and 0 <= c + dc < cols)
            for r in range(rows) for c in range(cols)]


def search_recursive(rows: int, cols: int, start: int, first: bool,
                     budget: Budget) -> SearchResult:
    """Plain depth-first search from cell ``start``; neighbours tried in MOVES order."""
    size = rows * cols
    nbrs = neighbours(rows, cols)
    visited = bytearray(size)
    path: list[int] = []
    clock_mask = Budget.CLOCK_EVERY - 1
    nodes = backtracks = dead_ends = checks = solutions = max_depth = 0
    found_path: tuple[int, ...] | None = None

    def visit(cell: int, depth: int) -> int:
        """Enter ``cell`` (placement number ``depth``); return the solutions below it."""
        nonlocal nodes, backtracks, dead_ends, checks, solutions, max_depth, found_path
        if nodes >= budget.node_cap:
            raise StopSearch(Status.NODE_LIMIT)
        if not (nodes & clock_mask) and budget.out_of_time():
            raise StopSearch(Status.TIME_LIMIT)
        nodes += 1
        visited[cell] = 1
        path.append(cell)
        max_depth = max(max_depth, depth)
        found = 0
        if depth == size:
            solutions += 1
            if found_path is None:
                found_path = tuple(path)
            if first:
                raise StopSearch(Status.SOLVED)
            found = 1
        else:
            around = nbrs[cell]
            checks += len(around)
            candidates = [n for n in around if not visited[n]]
            if not candidates:
                dead_ends += 1
            for n in candidates:
                found += visit(n, depth + 1)
        visited[cell] = 0
        path.pop()
        if not found:
            backtracks += 1
        return found

    budget.start()
    try:
        visit(start, 1)
        status = Status.EXHAUSTED
    except StopSearch as stop:
        status = stop.status
    return SearchResult(status, nodes, backtracks, dead_ends, checks, solutions, max_depth,
                        found_path)


#: The strategies: ``solve(rows, cols, start, first, budget) -> SearchResult``.
STRATEGIES = strategies(
    "grid path strategy",
    Strategy("recursive", search_recursive,
             "plain depth-first search, neighbours up, right, down, left",
             max_size=400, tree="dfs"),   # one Python frame per cell: keep it small
)


class GridParams(Params):
    """``board``: ``[rows, cols]`` or one int; ``start``: ``[row, col]`` or ``all``."""

    board: tuple[PositiveInt, PositiveInt] | PositiveInt
    start: tuple[NonNegativeInt, NonNegativeInt] | Literal["all"] = (0, 0)
    strategy: Literal[tuple(STRATEGIES)] = "recursive"  # type: ignore[valid-type]
    mode: Literal["first", "count"] = "first"


def _board(p: Mapping[str, Any]) -> tuple[int, int]:
    board = p["board"]
    return (board, board) if isinstance(board, int) else tuple(board)  # type: ignore[return-value]


def to_columns(p: Mapping[str, Any]) -> dict[str, Any]:
    rows, cols = _board(p)
    start = p.get("start", (0, 0))
    return {"rows": rows, "cols": cols, "start_row": start[0], "start_col": start[1],
            "strategy": p.get("strategy", "recursive"), "mode": p.get("mode", "first")}


def solve(c: Mapping[str, Any], max_nodes: int | None, max_seconds: float | None,
          seed: int) -> SearchResult:
    entry = STRATEGIES[c["strategy"]]
    start = c["start_row"] * c["cols"] + c["start_col"]
    return entry.solve(c["rows"], c["cols"], start, Mode(c["mode"]) is Mode.FIRST,
                       Budget(max_nodes, max_seconds))


def verify(c: Mapping[str, Any], solution: tuple[int, ...]) -> None:
    """Raise ValueError unless ``solution`` is a Hamiltonian path from the start cell."""
    rows, cols = c["rows"], c["cols"]
    start = c["start_row"] * cols + c["start_col"]
    if sorted(solution) != list(range(rows * cols)):
        raise ValueError(f"not every cell exactly once: {list(solution)}")
    if solution[0] != start:
        raise ValueError(f"path starts at cell {solution[0]}, not at {start}")
    nbrs = neighbours(rows, cols)
    for a, b in itertools.pairwise(solution):
        if b not in nbrs[a]:
            raise ValueError(f"cells {a} and {b} are not neighbours")


def check(c: Mapping[str, Any]) -> None:
    if not (c["start_row"] < c["rows"] and c["start_col"] < c["cols"]):
        raise ParamError("start", f"a cell of the {c['rows']} x {c['cols']} grid",
                         f"[{c['start_row']}, {c['start_col']}]", "pick a cell on the grid")


def cells(p: Mapping[str, Any]) -> list[tuple[int, int]]:
    """What ``start: all`` stands for: every cell, row by row."""
    rows, cols = _board(p)
    return [(r, c) for r in range(rows) for c in range(cols)]


PROBLEM = ProblemSpec(
    name="grid_path:PROBLEM",
    title="Grid Hamiltonian path",
    params=GridParams,
    columns=pa.schema([("rows", pa.int32()), ("cols", pa.int32()),
                       ("start_row", pa.int32()), ("start_col", pa.int32()),
                       ("strategy", pa.string()), ("mode", pa.string())]),
    to_columns=to_columns,
    solve=solve,
    verify=verify,
    strategies=STRATEGIES,
    size=lambda c: c["rows"] * c["cols"],
    size_param="board",
    size_unit="cells",
    check=check,
    expand_all={"start": cells},
    position_columns=("start_row", "start_col"),
    size_columns=("rows", "cols"),
    oracles=(
        Oracle({"board": [2, 2], "start": [0, 0], "mode": "count"},
               {"solutions": 2, "nodes": 7, "backtracks": 0, "dead_ends": 0, "checks": 10,
                "max_depth": 4},
               "hand count: the two ways round the square", tree="dfs"),
        Oracle({"board": [3, 3], "start": [0, 0], "mode": "count"},
               {"solutions": 8, "nodes": 79, "backtracks": 32, "dead_ends": 12,
                "checks": 190, "max_depth": 9},
               "OEIS A096969: 40 directed paths on 3 x 3, 8 from each corner and the centre",
               tree="dfs"),
        Oracle({"board": [3, 3], "start": [1, 1], "mode": "count"}, {"solutions": 8},
               "OEIS A096969: 8 directed paths from the centre of 3 x 3"),
        Oracle({"board": [3, 3], "start": [0, 1], "mode": "count"},
               {"solutions": 0, "nodes": 69, "backtracks": 69},
               "colouring: a path on 3 x 3 starts on the majority colour", tree="dfs"),
        Oracle({"board": [4, 4], "start": [0, 0], "mode": "count"}, {"solutions": 52},
               "OEIS A096969: 552 directed paths on 4 x 4 = 4 x 52 (corners) + 4 x 36 + 8 x 25"),
        Oracle({"board": [3, 3], "start": [0, 0], "mode": "first"},
               {"solutions": 1, "nodes": 9, "backtracks": 0},
               "the spiral, found without a backtrack", tree="dfs"),
    ),
    source="grid graph Hamiltonian paths; OEIS A096969",
)
