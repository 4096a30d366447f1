"""The knight's tour as the runner sees it: parameters, columns, solve, checks, split.

Searches: :mod:`btlab.experiments.knights.solve` (the Python reference, strategies in
:data:`btlab.experiments.knights.solve.STRATEGIES`) and :mod:`btlab.experiments.compiled` (the
numba kernel, ``engine: compiled``). Headline tables and report plots:
:mod:`btlab.problems.knights_tour.views`. Counters: ``docs/metrics.md``.

``heuristic`` takes a built-in name (``none``, ``warnsdorff``,
``static_degree``) or a plug-in ``"module:function"``: a rule
``rule(board, square, candidates) -> sequence`` (``docs/extending.md``).

Modules:

- ``views``: its headline tables, report section and tour drawings (in the ``views`` room).
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Mapping, Sequence, Union

import pyarrow as pa
from pydantic import AfterValidator, Field, StrictBool, StrictInt
from pydantic_core import PydanticCustomError

from btlab.experiments.checker_fast import check_tour_fast
from btlab.experiments.core import SearchResult
from btlab.experiments.estimate import as_result, estimate_knights, warm_kind
from btlab.experiments.estimators import KNUTH
from btlab.experiments.knights.solve import (
    DEFAULT_MOVE_ORDER,
    HEURISTICS,
    STRATEGIES,
    TIE_BREAKS,
    rule_uses_rng,
    solve_knights_tour,
    validate_move_order,
)
from btlab.experiments.loading import interrupts_held
from btlab.problems import plugins
from btlab.problems.spec import (
    ComparedColumn,
    Oracle,
    ParamError,
    Params,
    ProblemSpec,
    trial_estimator,
)

#: Board sizes and squares are int32 columns; the strategies' caps (max_size) are
#: far smaller, and are checked when the trials are made.
INT32_MAX = (1 << 31) - 1
PositiveInt = Annotated[StrictInt, Field(ge=1, le=INT32_MAX)]
NonNegativeInt = Annotated[StrictInt, Field(ge=0, le=INT32_MAX)]

_HEURISTIC_CHOICES = ", ".join(f"'{h}'" for h in HEURISTICS) + " or a plug-in 'module:function'"


def _heuristic(value: Any) -> Any:
    """A built-in heuristic's name, or a plug-in rule that imports and takes 3 arguments."""
    if not isinstance(value, str):
        raise PydanticCustomError("string_type", "Input should be a valid string")
    if value in HEURISTICS:
        return value
    if not plugins.is_ref(value):
        raise PydanticCustomError("literal_error", "Input should be {expected}",
                                  {"expected": _HEURISTIC_CHOICES})
    try:
        rule = plugins.load(value)
    except plugins.PluginError as exc:
        raise PydanticCustomError("plugin_error", "{expected}",
                                  {"expected": exc.expected, "found": exc.found,
                                   "fix": exc.fix}) from None
    module, _, attr = value.partition(":")
    fix = (f"define it in {module} as def {attr.rsplit('.', 1)[-1]}(board, square, candidates): "
           "return sorted(candidates)")
    if not callable(rule):
        raise PydanticCustomError(
            "plugin_error", "{expected}",
            {"expected": "a heuristic rule callable as rule(board, square, candidates)",
             "found": f"{value} = {rule!r} ({type(rule).__name__}, not callable)", "fix": fix})
    try:
        signature = inspect.signature(rule)
    except ValueError:  # a builtin without a signature: let it run
        return value
    try:
        signature.bind(None, (0, 0), [])
    except TypeError as exc:
        raise PydanticCustomError(
            "plugin_error", "{expected}",
            {"expected": "a heuristic rule callable as rule(board, square, candidates)",
             "found": f"{value}{signature}: {exc}", "fix": fix}) from None
    return value


def _eight_moves(value: tuple) -> tuple:
    return validate_move_order(value)


MoveOrder = Annotated[tuple[tuple[StrictInt, StrictInt], ...], AfterValidator(_eight_moves)]


class KnightsParams(Params):
    """Parameters of a knight's-tour trial.

    ``board`` is ``[rows, cols]`` (or one int for a square board); ``start`` is
    ``[row, col]``, 0-based from the top left, or ``all`` (every square, in a
    matrix). ``heuristic``: a built-in name or a plug-in ``"module:function"``.
    ``move_order`` lists the 8 moves as ``[d_row, d_col]``. ``engine``:
    ``python`` (the reference) or ``compiled`` (the numba kernel: same tree,
    same counters, strategy ``iterative``).
    """

    board: Union[tuple[PositiveInt, PositiveInt], PositiveInt] = Field(
        description="[rows, cols], two whole numbers >= 1, or one whole number >= 1 for a "
        "square board", examples=["[8, 8]", "8"])
    start: Union[tuple[NonNegativeInt, NonNegativeInt], Literal["all"]] = Field(
        (0, 0), description="[row, col], two whole numbers >= 0 (0-based, row 0 at the "
        "top), or all (every square, in matrix)", examples=["[0, 0]", "all"])
    heuristic: Annotated[str, AfterValidator(_heuristic)] = Field(
        "none", description=f"a heuristic: {_HEURISTIC_CHOICES}", examples=["warnsdorff"])
    tie_break: Literal[tuple(TIE_BREAKS)] = "move_order"  # type: ignore[valid-type]
    strategy: Literal[tuple(STRATEGIES)] = "recursive"  # type: ignore[valid-type]
    mode: Literal["first", "count", "estimate"] = "first"
    move_order: Union[MoveOrder, Literal["default"]] = Field(
        "default", description="default, or the 8 knight moves as [d_row, d_col] pairs, each "
        "once", examples=["[[-1, -2], [-2, -1], [-2, 1], [-1, 2], [1, 2], [2, 1], [2, -1], "
                          "[1, -2]]", "default"])
    closed: StrictBool = False
    engine: Literal["python", "compiled"] = "python"


def to_columns(p: Mapping[str, Any]) -> dict[str, Any]:
    """Validated parameters -> the Parquet parameter columns: a trial's canonical
    parameters, from which its id is computed.

    Parameters written differently that make the same search get the same
    columns, so one trial id: ``board: 8`` is ``[8, 8]``; a ``move_order`` that
    lists the default order is ``default``; ``tie_break`` ``pohl`` or ``roth``
    is ``move_order`` with ``heuristic: none`` (every candidate ties, and both
    leave the move order as it is, in both engines; ``random`` shuffles it at
    every placement and stays ``random``). Nothing else is merged: the
    seed, for instance, stays part of the id even where no random draw reads it.
    """
    board = p["board"]
    rows, cols = (board, board) if isinstance(board, int) else board
    start = p.get("start", (0, 0))
    order = p.get("move_order", "default")
    if order != "default" and tuple(tuple(m) for m in order) == DEFAULT_MOVE_ORDER:
        order = "default"
    heuristic = p.get("heuristic", "none")
    return {
        "rows": rows, "cols": cols,
        "start_row": start[0], "start_col": start[1],
        "heuristic": heuristic,
        "tie_break": _tie_break_column(heuristic, p.get("tie_break", "move_order")),
        "strategy": p.get("strategy", "recursive"),
        "mode": p.get("mode", "first"),
        "move_order": order if order == "default" else " ".join(f"{a},{b}" for a, b in order),
        "closed": bool(p.get("closed", False)),
        "engine": p.get("engine", "python"),
    }


def _tie_break_column(heuristic: Any, tie_break: str) -> str:
    """The ``tie_break`` column: ``move_order`` for a tie-break that has no effect with
    ``heuristic: none`` (``pohl``, ``roth``)."""
    if heuristic == "none" and tie_break != "random":
        return "move_order"
    return tie_break


def parse_move_order(text: str) -> tuple[tuple[int, int], ...]:
    """The ``move_order`` column back as (d_row, d_col) pairs (``default``: the default order)."""
    if text == "default":
        return DEFAULT_MOVE_ORDER
    return tuple((int(a), int(b)) for a, b in (pair.split(",") for pair in text.split()))


def heuristic_of(c: Mapping[str, Any]) -> Any:
    """The ``heuristic`` column as :func:`btlab.experiments.knights.solve.make_orderer` takes it: a
    built-in name, or the plug-in rule itself."""
    h = c["heuristic"]
    return plugins.load(h) if plugins.is_ref(h) else h


def solve(c: Mapping[str, Any], max_nodes: int | None, max_seconds: float | None,
          seed: int, max_backtracks: int | None = None) -> SearchResult:
    """Run one knight's-tour trial on its engine (see the module docstring); ``max_backtracks``:
    the backtrack budget (``budget.backtracks``), or None."""
    if c["engine"] == "compiled":
        with interrupts_held():  # whole, even if cancelled (btlab.experiments.loading)
            # heavy: numba loads on import
            from btlab.experiments.compiled import solve_knights_compiled
        return solve_knights_compiled(
            c["rows"], c["cols"], (c["start_row"], c["start_col"]),
            mode=c["mode"], heuristic=c["heuristic"], tie_break=c["tie_break"],
            move_order=parse_move_order(c["move_order"]), closed=c["closed"],
            max_nodes=max_nodes, max_seconds=max_seconds, seed=seed,
            max_backtracks=max_backtracks)
    return solve_knights_tour(
        c["rows"], c["cols"], (c["start_row"], c["start_col"]),
        mode=c["mode"], strategy=c["strategy"], heuristic=heuristic_of(c),
        tie_break=c["tie_break"], move_order=parse_move_order(c["move_order"]),
        closed=c["closed"], max_nodes=max_nodes, max_seconds=max_seconds, seed=seed,
        max_backtracks=max_backtracks)


def estimate(c: Mapping[str, Any], probes: int, max_nodes: int | None,
             max_seconds: float | None, seed: int) -> SearchResult:
    """The estimate of the trial's ``count``-mode placements and solutions from ``probes``
    random probes by its estimator (the label ``c["estimator"]``, ``knuth`` when absent;
    :func:`btlab.experiments.estimate.estimate_knights`), on the trial's engine. The
    proposal of ``importance`` and ``perm`` is Warnsdorff's: a child's weight is
    exp(-beta x its unvisited onward degree) (``beta: 0``, uniform, is the one
    allowed with ``heuristic: none``; :func:`check`)."""
    return as_result(estimate_knights(
        c["rows"], c["cols"], (c["start_row"], c["start_col"]), closed=c["closed"],
        probes=probes, seed=seed, estimator=trial_estimator(c), max_nodes=max_nodes,
        max_seconds=max_seconds, engine=c["engine"]))


def verify(c: Mapping[str, Any], solution: tuple[int, ...]) -> None:
    """Raise :class:`btlab.experiments.checker.InvalidSolution` unless ``solution`` is a tour."""
    check_tour_fast(c["rows"], c["cols"], (c["start_row"], c["start_col"]), solution, c["closed"])


def kernels(c: Mapping[str, Any]) -> tuple[str, ...]:
    """The compiled kernels a trial runs, as :func:`btlab.experiments.compiled.warm_up`
    kinds: the one loop of its search, or the probes of ``mode: estimate``; none on the
    Python engine."""
    if c.get("engine") != "compiled":
        return ()
    if c["mode"] == "estimate":
        return (warm_kind("knights", trial_estimator(c)),)
    return (_loop_kind(c["rows"] * c["cols"], c["heuristic"], c["tie_break"],
                       c["mode"] == "first"),)


@functools.lru_cache(maxsize=256)
def _loop_kind(size: int, heuristic: str, tie_break: str, first: bool) -> str:
    with interrupts_held():  # whole, even if cancelled (btlab.experiments.loading)
        # heavy: numba loads on import
        from btlab.experiments.compiled import knights_kind
    return knights_kind(size, heuristic, tie_break, first)


def prepare(c: Mapping[str, Any]) -> Mapping[str, Any]:
    """Load the trial's compiled kernels, and only those, before the clock starts
    (``compile_ns``)."""
    kinds = kernels(c)
    if not kinds:
        return {}
    with interrupts_held():  # whole, even if cancelled (btlab.experiments.loading)
        # heavy: numba loads on import
        from btlab.experiments.compiled import warm_up
    return {"compile_ns": sum(warm_up(kind) for kind in kinds)}


def check(c: Mapping[str, Any]) -> None:
    """Refuse parameters that cannot run together (start off the board, plug-in options,
    ``engine: compiled`` with a heuristic that has no kernel, an estimator without its
    proposal: :func:`check_estimator`)."""
    check_estimator(c)
    rows, cols = c["rows"], c["cols"]
    if plugins.is_ref(c["heuristic"]):
        if c["engine"] == "compiled":
            raise ParamError("engine", "engine: python with a plug-in heuristic (the compiled "
                             "kernel cannot call Python code)", "engine: compiled",
                             "set engine: python")
        if c["tie_break"] != "move_order":
            raise ParamError("tie_break", "tie_break: move_order (the default) with a plug-in "
                             "heuristic (the rule orders the candidates completely)",
                             f"tie_break: {c['tie_break']}",
                             "drop tie_break; break ties inside the rule")
    elif c["engine"] == "compiled" and "compiled" not in HEURISTICS[c["heuristic"]].engines:
        able = [h for h, e in HEURISTICS.items() if "compiled" in e.engines]
        raise ParamError("heuristic", "a heuristic that has a compiled kernel (engine: "
                         f"compiled): {', '.join(able)}",
                         f"heuristic: {c['heuristic']} with engine: compiled",
                         f"set engine: python, or pick one of {', '.join(able)}")
    r, col = c["start_row"], c["start_col"]
    if not (r < rows and col < cols):
        raise ParamError(
            "start", f"a square on the {rows} x {cols} board: row 0..{rows - 1}, col 0..{cols - 1}",
            f"[{r}, {col}]", "pick a square on the board, or start: all")


def check_estimator(c: Mapping[str, Any]) -> None:
    """Refuse an ``importance`` or ``perm`` estimator whose proposal the trial's heuristic
    does not give: the proposal is Warnsdorff's (``heuristic: warnsdorff``: weights
    exp(-beta x unvisited onward degree)); any other built-in heuristic gives none, so
    only ``beta: 0`` (uniform children) runs with it; a plug-in rule gives none at all.

    Raises:
        ParamError: at ``heuristic`` (a plug-in rule) or ``estimator.beta``.
    """
    label = c.get("estimator")
    if c.get("mode") != "estimate" or not label:
        return
    est = trial_estimator(c)
    if est.method == KNUTH:
        return
    heuristic = c["heuristic"]
    if plugins.is_ref(heuristic):
        raise ParamError("heuristic", f"a built-in heuristic with estimator {est.method} "
                         "(its proposal comes from the heuristic: warnsdorff, or none with "
                         "beta: 0); a plug-in rule gives no proposal",
                         f"heuristic: {heuristic} with estimator: {label}",
                         "set heuristic: warnsdorff (the proposal), or estimator: knuth")
    if heuristic != "warnsdorff" and est["beta"] != 0:
        raise ParamError("estimator.beta", f"beta: 0 (uniform children) with heuristic: "
                         f"{heuristic}, which gives {est.method} no proposal; or heuristic: "
                         "warnsdorff, whose proposal weights a child exp(-beta x its "
                         "unvisited onward degree)",
                         f"beta: {est['beta']} with heuristic: {heuristic}",
                         "set heuristic: warnsdorff (the proposal), or beta: 0 (uniform)")


class Squares(Sequence):
    """Every square ``(row, col)`` of a ``rows x cols`` board, row by row, computed on
    demand: ``len``, indexing, ``in`` and ``index`` are arithmetic, so ``start: all``
    on a 2000 x 2000 board is counted without listing 4,000,000 squares."""

    def __init__(self, rows: int, cols: int):
        self.rows, self.cols = rows, cols

    def __len__(self) -> int:
        return self.rows * self.cols

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        return divmod(i, self.cols)

    def index(self, value: Any, start: int = 0, stop: Any = None) -> int:
        if (isinstance(value, (tuple, list)) and len(value) == 2
                and all(type(v) is int for v in value)
                and 0 <= value[0] < self.rows and 0 <= value[1] < self.cols):
            i = value[0] * self.cols + value[1]
            if start <= i and (stop is None or i < stop):
                return i
        raise ValueError(f"{value!r} is not a square of the {self.rows} x {self.cols} board")

    def __contains__(self, value: object) -> bool:
        try:
            self.index(value)
        except ValueError:
            return False
        return True


def squares(params: Mapping[str, Any]) -> Squares:
    """Every square of the trial's board, row by row: what ``start: all`` means.

    Raises:
        KeyError: no ``board`` in ``params``.
    """
    board = params["board"]
    rows, cols = (board, board) if isinstance(board, int) else board
    return Squares(rows, cols)


def plugin_refs(c: Mapping[str, Any]) -> dict[str, str]:
    """The plug-ins a trial names: ``{"heuristic": "module:function"}`` or nothing."""
    return {"heuristic": c["heuristic"]} if plugins.is_ref(c["heuristic"]) else {}


@dataclass(frozen=True)
class KnightsSplit:
    """Split support (:class:`btlab.problems.spec.SplitSupport`) of the knight's tour."""

    splitter: str = "knights_tour"

    def params(self, c: Mapping[str, Any], seed: int) -> dict[str, Any]:
        return {"rows": c["rows"], "cols": c["cols"], "start": (c["start_row"], c["start_col"]),
                "heuristic": heuristic_of(c), "tie_break": c["tie_break"],
                "move_order": parse_move_order(c["move_order"]), "closed": c["closed"],
                "mode": c["mode"], "strategy": c["strategy"],
                "engine": c.get("engine", "python"), "seed": seed}

    def check(self, c: Mapping[str, Any]) -> None:
        if not STRATEGIES[c["strategy"]].splittable:
            able = [s for s, e in STRATEGIES.items() if e.splittable]
            raise ParamError("split", f"a strategy split can cut: {', '.join(able)}",
                             f"strategy: {c['strategy']}", "drop split for this strategy")
        if c["tie_break"] == "random":
            raise ParamError("split", "no split with tie_break: random (its stream of draws "
                             "follows the call order, which a split changes)",
                             "tie_break: random", "drop split, or use another tie_break")
        if plugins.is_ref(c["heuristic"]) and rule_uses_rng(plugins.load(c["heuristic"])):
            raise ParamError("split", "no split with a plug-in rule that draws from board.rng "
                             "(its draws follow the call order, which a split changes)",
                             f"heuristic: {c['heuristic']}", "drop split for this rule")

    def warm_up(self, params: Mapping[str, Any]) -> None:
        prepare(params)  # the split's parameters carry the trial's engine


def seeded(c: Mapping[str, Any]) -> bool:
    """Whether a trial's search draws from its seed: a random tie-break (with ``none``, a
    random move order at every placement), ``mode: estimate`` (random probes), or a
    plug-in rule that draws from ``board.rng`` (a rule that does not import: assumed to)."""
    heuristic = c.get("heuristic")
    if not isinstance(heuristic, str):
        return False
    if c.get("tie_break") == "random" or c.get("mode") == "estimate":
        return True
    if heuristic == "none":
        return False
    if not plugins.is_ref(heuristic):
        return False
    try:
        return bool(rule_uses_rng(plugins.load(heuristic)))
    except plugins.PluginError:
        return True


PROBLEM = ProblemSpec(
    name="knights_tour",
    title="Knight's tour",
    params=KnightsParams,
    columns=pa.schema([
        ("rows", pa.int32()), ("cols", pa.int32()),
        ("start_row", pa.int32()), ("start_col", pa.int32()),
        ("heuristic", pa.string()), ("tie_break", pa.string()),
        ("strategy", pa.string()), ("mode", pa.string()),
        ("move_order", pa.string()), ("closed", pa.bool_()), ("engine", pa.string()),
    ]),
    to_columns=to_columns,
    solve=solve,
    estimate=estimate,
    estimators=(KNUTH, "importance", "perm"),
    verify=verify,
    strategies=STRATEGIES,
    size=lambda c: c["rows"] * c["cols"],
    size_param="board",
    size_unit="squares",
    check=check,
    extra_columns=("amb_restarts", "amb_replayed", "compile_ns", "split_depth", "split_tasks",
                   "wasted_nodes", "split_resumed", "probes_done"),
    expand_all={"start": squares},
    prepare=prepare,
    kernels=kernels,
    split=KnightsSplit(),
    headline="btlab.problems.knights_tour.views:headline",
    report="btlab.problems.knights_tour.views:report",
    solution_figure="btlab.problems.knights_tour.views:solution_figure",
    comparisons=(ComparedColumn("heuristic", "none", ("backtracks", "nodes"),
                            {"none": "plain move order"}),
                 ComparedColumn("tie_break", "move_order", ("backtracks", "nodes")),
                 ComparedColumn("move_order", "default", ("backtracks", "nodes")),
                 ComparedColumn("strategy", "recursive", ("wall_ns",)),
                 ComparedColumn("engine", "python", ("wall_ns",))),
    # every strategy walks the same tree ("dfs"): a start pairs across them and engines
    pair_on=("rows", "cols", "start_row", "start_col", "heuristic", "tie_break", "mode",
             "move_order", "closed", "strategy"),
    seeded=seeded,
    position_columns=("start_row", "start_col"),
    size_columns=("rows", "cols"),
    oracles=(
        Oracle({"board": [5, 5], "start": [0, 0], "mode": "count"}, {"solutions": 304},
               "OEIS A165134: 1,728 directed open tours on 5 x 5, 304 from a corner"),
        Oracle({"board": [5, 5], "start": [2, 2], "mode": "count"}, {"solutions": 64},
               "OEIS A165134: 64 directed open tours from the centre of 5 x 5"),
        Oracle({"board": [4, 4], "start": [0, 0], "mode": "count"}, {"solutions": 0},
               "no open tour exists on 4 x 4 (Schwenk 1991)"),
        Oracle({"board": [3, 4], "start": [0, 0], "mode": "count"}, {"solutions": 2},
               "3 x 4 has 16 directed open tours (OEIS A165134), 2 from each corner"),
    ),
    plugins=plugin_refs,
    source="H. C. Warnsdorff, Des Rösselsprunges einfachste und allgemeinste Lösung, 1823",
)
