"""The problems a sweep can run: their parameters, columns, solver and checker.

Each problem is a :class:`Problem`: a pydantic model of its trial parameters
(types, allowed values, defaults), how the parameters become Parquet columns,
the solver call and the checker. The runner knows nothing else about a
problem, so adding one means adding one class here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Callable, Literal, Mapping, Union

import pyarrow as pa
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictBool, StrictInt

from experiments.checker import check_queens, check_tour
from experiments.core import SearchResult
from experiments.knights import DEFAULT_MOVE_ORDER, solve_knights_tour, validate_move_order
from experiments.queens import solve_queens

PositiveInt = Annotated[StrictInt, Field(ge=1)]
NonNegativeInt = Annotated[StrictInt, Field(ge=0)]


class ParamError(ValueError):
    """A trial parameter that is well typed but cannot be run.

    Attributes:
        param: the parameter at fault (a config key).
        expected, found, fix: as in :class:`runner.errors.ConfigError`.
    """

    def __init__(self, param: str, expected: str, found: str, fix: str = ""):
        super().__init__(f"{param}: expected {expected}, found {found}")
        self.param, self.expected, self.found, self.fix = param, expected, found, fix


class Params(BaseModel):
    """Base of every problem's parameter model: unknown keys are refused."""

    model_config = ConfigDict(extra="forbid", frozen=True)


# --------------------------------------------------------------------------- knight's tour

#: The largest board (in squares) each knight's-tour strategy accepts: the
#: recursive strategy keeps one Python frame per placement, Amb re-executes the
#: whole path at every choice (quadratic), the iterative one only needs memory.
KNIGHT_MAX_SQUARES = {"recursive": 250_000, "iterative": 4_000_000, "amb": 64}


def _eight_moves(value: tuple) -> tuple:
    return validate_move_order(value)


MoveOrder = Annotated[tuple[tuple[StrictInt, StrictInt], ...], AfterValidator(_eight_moves)]


class KnightsParams(Params):
    """Parameters of a knight's-tour trial (see :mod:`experiments.knights`).

    ``board`` is ``[rows, cols]`` (or one int for a square board); ``start`` is
    ``[row, col]``, 0-based from the top left, or ``all`` (every square, in a
    matrix). ``move_order`` lists the 8 moves as ``[d_row, d_col]``.
    ``engine``: ``python`` (the reference) or ``compiled`` (the numba kernel of
    :mod:`experiments.compiled`: same tree, same counters, iterative strategy).
    """

    board: Union[tuple[PositiveInt, PositiveInt], PositiveInt]
    start: Union[tuple[NonNegativeInt, NonNegativeInt], Literal["all"]] = (0, 0)
    heuristic: Literal["none", "warnsdorff", "static_degree"] = "none"
    tie_break: Literal["move_order", "random", "pohl", "roth"] = "move_order"
    strategy: Literal["recursive", "iterative", "amb"] = "recursive"
    mode: Literal["first", "count"] = "first"
    move_order: Union[MoveOrder, Literal["default"]] = "default"
    closed: StrictBool = False
    engine: Literal["python", "compiled"] = "python"


@dataclass(frozen=True)
class Problem:
    """How the runner drives one problem.

    Attributes:
        name: the config's ``problem`` value.
        params: the pydantic model of a trial's parameters.
        columns: parameter columns written to Parquet, as a pyarrow schema.
        extra_columns: strategy-specific nullable int64 counters.
        to_columns: validated parameters -> column values (the keys of
            ``columns``); the columns are a trial's canonical parameters.
        solve: (columns, max_nodes, max_seconds, seed) -> SearchResult.
        verify: (columns, solution) -> None, raising on a wrong solution.
        check: (columns) -> None, raising :class:`ParamError`.
        expand_all: for each parameter that accepts ``all``, a function
            (parameters) -> the values ``all`` stands for.
        prepare: (columns) -> extra column values, or None; called before a
            trial's clock starts (compiling or loading kernels), so that its
            cost is reported apart (``compile_ns``) and never in ``wall_ns``.
    """

    name: str
    params: type[Params]
    columns: pa.Schema
    extra_columns: tuple[str, ...]
    to_columns: Callable[[Mapping[str, Any]], dict[str, Any]]
    solve: Callable[[Mapping[str, Any], int | None, float | None, int], SearchResult]
    verify: Callable[[Mapping[str, Any], tuple[int, ...]], None]
    check: Callable[[Mapping[str, Any]], None]
    expand_all: Mapping[str, Callable[[Mapping[str, Any]], list[Any]]]
    prepare: Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = None


def _knights_columns(p: Mapping[str, Any]) -> dict[str, Any]:
    board = p["board"]
    rows, cols = (board, board) if isinstance(board, int) else board
    start = p.get("start", (0, 0))
    order = p.get("move_order", "default")
    return {
        "rows": rows, "cols": cols,
        "start_row": start[0], "start_col": start[1],
        "heuristic": p.get("heuristic", "none"),
        "tie_break": p.get("tie_break", "move_order"),
        "strategy": p.get("strategy", "recursive"),
        "mode": p.get("mode", "first"),
        "move_order": order if order == "default" else " ".join(f"{a},{b}" for a, b in order),
        "closed": bool(p.get("closed", False)),
        "engine": p.get("engine", "python"),
    }


def parse_move_order(text: str) -> tuple[tuple[int, int], ...]:
    """The ``move_order`` column back as (d_row, d_col) pairs (``default`` = DESIGN's order)."""
    if text == "default":
        return DEFAULT_MOVE_ORDER
    return tuple(tuple(int(v) for v in pair.split(",")) for pair in text.split())  # type: ignore[misc]


def _knights_solve(c: Mapping[str, Any], max_nodes: int | None, max_seconds: float | None,
                   seed: int) -> SearchResult:
    if c["engine"] == "compiled":
        from experiments.compiled import solve_knights_compiled
        return solve_knights_compiled(
            c["rows"], c["cols"], (c["start_row"], c["start_col"]),
            mode=c["mode"], heuristic=c["heuristic"], tie_break=c["tie_break"],
            move_order=parse_move_order(c["move_order"]), closed=c["closed"],
            max_nodes=max_nodes, max_seconds=max_seconds, seed=seed)
    return solve_knights_tour(
        c["rows"], c["cols"], (c["start_row"], c["start_col"]),
        mode=c["mode"], strategy=c["strategy"], heuristic=c["heuristic"],
        tie_break=c["tie_break"], move_order=parse_move_order(c["move_order"]),
        closed=c["closed"], max_nodes=max_nodes, max_seconds=max_seconds, seed=seed)


def _knights_verify(c: Mapping[str, Any], solution: tuple[int, ...]) -> None:
    check_tour(c["rows"], c["cols"], (c["start_row"], c["start_col"]), solution, c["closed"])


def _knights_prepare(c: Mapping[str, Any]) -> Mapping[str, Any]:
    if c["engine"] != "compiled":
        return {}
    from experiments.compiled import warm_up
    return {"compile_ns": warm_up("knights")}


def _knights_check(c: Mapping[str, Any]) -> None:
    rows, cols, strategy = c["rows"], c["cols"], c["strategy"]
    if c["engine"] == "compiled" and strategy != "iterative":
        raise ParamError(
            "strategy", "strategy 'iterative' with engine 'compiled' (the compiled kernel "
            "walks the tree with an explicit stack)", repr(strategy),
            "set strategy: iterative, or engine: python")
    cap = KNIGHT_MAX_SQUARES[strategy]
    if rows * cols > cap:
        raise ParamError(
            "board", f"at most {cap:,} squares for strategy {strategy!r}",
            f"{rows} x {cols} = {rows * cols:,} squares",
            "use a smaller board" + ("" if strategy == "iterative" else ", or strategy: iterative"))
    r, col = c["start_row"], c["start_col"]
    if not (r < rows and col < cols):
        raise ParamError(
            "start", f"a square on the {rows} x {cols} board: row 0..{rows - 1}, col 0..{cols - 1}",
            f"[{r}, {col}]", "pick a square on the board, or start: all")


KNIGHTS = Problem(
    name="knights_tour",
    params=KnightsParams,
    columns=pa.schema([
        ("rows", pa.int32()), ("cols", pa.int32()),
        ("start_row", pa.int32()), ("start_col", pa.int32()),
        ("heuristic", pa.string()), ("tie_break", pa.string()),
        ("strategy", pa.string()), ("mode", pa.string()),
        ("move_order", pa.string()), ("closed", pa.bool_()), ("engine", pa.string()),
    ]),
    extra_columns=("amb_restarts", "amb_replayed", "compile_ns", "split_depth", "split_tasks",
                   "wasted_nodes", "split_resumed"),
    to_columns=_knights_columns,
    solve=_knights_solve,
    verify=_knights_verify,
    check=_knights_check,
    expand_all={"start": lambda p: knight_squares(p)},
    prepare=_knights_prepare,
)


# --------------------------------------------------------------------------- N-Queens

#: The largest n each N-Queens strategy accepts. Search strategies stop at
#: their budgets long before; the caps keep a typo (n: 10000000) from asking a
#: recursive search for ten million frames.
QUEENS_MAX_N = {"brute_force": 64, "recursive": 10_000, "iterative": 100_000, "amb": 1_000,
                "functional": 1_000, "bitmask": 100_000, "construction": 10_000_000}


class QueensParams(Params):
    """Parameters of an N-Queens trial (see :mod:`experiments.queens`).

    ``unique`` (``count`` mode) counts solutions up to the 8 symmetries of the
    square; ``method`` chooses the ``construction``: ``formula`` (any n >= 4)
    or ``product`` (n = 5^k). ``engine: compiled`` runs the numba bit-mask
    kernel (:func:`experiments.compiled.solve_queens_compiled`, strategy
    ``bitmask``), with the same counters as the Python strategies.
    """

    n: PositiveInt
    strategy: Literal["brute_force", "recursive", "iterative", "amb", "functional", "bitmask",
                      "construction"] = "recursive"
    mode: Literal["first", "count"] = "first"
    unique: StrictBool = False
    method: Literal["formula", "product", "none"] = "none"
    engine: Literal["python", "compiled"] = "python"


def _queens_columns(p: Mapping[str, Any]) -> dict[str, Any]:
    strategy = p.get("strategy", "recursive")
    method = p.get("method", "none")
    if strategy == "construction" and method == "none":
        method = "formula"
    return {"n": p["n"], "strategy": strategy, "mode": p.get("mode", "first"),
            "unique": bool(p.get("unique", False)), "method": method,
            "engine": p.get("engine", "python")}


def _queens_solve(c: Mapping[str, Any], max_nodes: int | None, max_seconds: float | None,
                  seed: int) -> SearchResult:
    if c["engine"] == "compiled":
        from experiments.compiled import solve_queens_compiled
        return solve_queens_compiled(c["n"], mode=c["mode"], unique=c["unique"],
                                     max_nodes=max_nodes, max_seconds=max_seconds)
    return solve_queens(c["n"], mode=c["mode"], strategy=c["strategy"], unique=c["unique"],
                        method=None if c["method"] == "none" else c["method"],
                        max_nodes=max_nodes, max_seconds=max_seconds)


def _queens_verify(c: Mapping[str, Any], solution: tuple[int, ...]) -> None:
    check_queens(c["n"], solution)


def _queens_prepare(c: Mapping[str, Any]) -> Mapping[str, Any]:
    if c["engine"] != "compiled":
        return {}
    from experiments.compiled import warm_up
    return {"compile_ns": warm_up("queens")}


def _queens_check(c: Mapping[str, Any]) -> None:
    n, strategy, mode = c["n"], c["strategy"], c["mode"]
    if c["engine"] == "compiled" and strategy != "bitmask":
        raise ParamError("strategy", "strategy 'bitmask' with engine 'compiled' (the compiled "
                         "kernel is the bit-mask search)", repr(strategy),
                         "set strategy: bitmask, or engine: python")
    if c["engine"] == "compiled" and n > 64:
        raise ParamError("n", "at most 64 with engine 'compiled' (64-bit masks)", f"n = {n}",
                         "use engine: python")
    cap = QUEENS_MAX_N[strategy]
    if n > cap:
        raise ParamError("n", f"at most {cap:,} for strategy {strategy!r}", f"n = {n:,}",
                         "use a smaller n or another strategy")
    if c["unique"] and mode != "count":
        raise ParamError("unique", "unique: true only with mode: count", f"mode: {mode}",
                         "set mode: count, or drop unique")
    if strategy == "construction":
        if mode != "first":
            raise ParamError("mode", "mode: first with strategy: construction (it builds one "
                             "solution)", f"mode: {mode}", "set mode: first")
        if c["unique"]:
            raise ParamError("unique", "a searching strategy for unique counting",
                             "strategy: construction", "drop unique")
        if c["method"] == "product":
            k = n
            while k % 5 == 0:
                k //= 5
            if k != 1:
                raise ParamError("n", "n = 5^k (5, 25, 125, ...) for method: product", f"n = {n}",
                                 "use n: 5, 25, 125, ... or method: formula")
    elif c["method"] != "none":
        raise ParamError("method", "method only with strategy: construction",
                         f"method: {c['method']} with strategy: {strategy}", "drop method")


QUEENS = Problem(
    name="n_queens",
    params=QueensParams,
    columns=pa.schema([
        ("n", pa.int32()), ("strategy", pa.string()), ("mode", pa.string()),
        ("unique", pa.bool_()), ("method", pa.string()), ("engine", pa.string()),
    ]),
    extra_columns=("amb_restarts", "amb_replayed", "all_solutions", "walked_nodes", "candidates",
                   "max_frontier", "compile_ns", "split_depth", "split_tasks", "wasted_nodes",
                   "split_resumed"),
    to_columns=_queens_columns,
    solve=_queens_solve,
    verify=_queens_verify,
    check=_queens_check,
    expand_all={},
    prepare=_queens_prepare,
)

PROBLEMS: dict[str, Problem] = {KNIGHTS.name: KNIGHTS, QUEENS.name: QUEENS}


def knight_squares(params: Mapping[str, Any]) -> list[tuple[int, int]]:
    """Every square of the trial's board, row by row: what ``start: all`` means."""
    board = params["board"]
    rows, cols = (board, board) if isinstance(board, int) else board
    return [(r, c) for r in range(rows) for c in range(cols)]
