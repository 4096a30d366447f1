"""The layout of a btlab results row: its columns and types, its schema version, provenance.

:data:`COLUMNS` is the one table of a row's columns and their roles; :func:`row_schema`
gives the Arrow schema of a problem's rows from it (ids, the problem's parameters,
budget, the metrics contract of ``docs/metrics.md``, solution, error, the problem's
extra counters, provenance);
:data:`SCHEMA_VERSION` is bumped on any incompatible change of it.
:func:`software_provenance` gives the provenance values a run writes into
every row (btlab, git, Python and Ray versions). :mod:`btlab.store.folder`, which
writes the rows, imports this module and re-exports its public names.
"""

from __future__ import annotations

import math
import platform
from dataclasses import dataclass
from importlib import metadata
from operator import attrgetter
from typing import Any, Callable

import pyarrow as pa

from btlab.experiments.estimators import KNUTH
from btlab.problems.censoring import censored_status
from btlab.problems.spec import ProblemSpec
from btlab.store.provenance import code_state, version

#: Version of the row layout; bumped when columns are added or changed. The history,
#: column by column, is in ``docs/metrics.md`` ("Schema versions").
SCHEMA_VERSION = 2
#: Versions whose parts this btlab reads, resumes and combines with its own: each adds
#: nullable columns to the one before, so an older part reads with nulls in them.
READ_VERSIONS = ("1", "2")


def version_family(version: str | None) -> str | None:
    """The family of a part's ``btlab.schema_version``: ``"1-2"`` for every version in
    :data:`READ_VERSIONS` (one family: a folder may hold parts of several of them), else
    the version as stored (None: no version)."""
    return f"{READ_VERSIONS[0]}-{READ_VERSIONS[-1]}" if version in READ_VERSIONS else version


def derived_column(name: str, table: pa.Table) -> pa.Array | None:
    """The values of column ``name`` for the rows of ``table`` (an older part that lacks
    it), when the column is a function of columns the part has; None when it is not (the
    column then reads as nulls: its values were never measured).

    ``censored`` is: a row's ``status`` says whether the trial stopped at a budget
    (:func:`btlab.problems.censoring.censored_status`), so a part of version 1 rewritten by this
    btlab gets the same ``censored`` as a row written now, and the plain readers
    (``df.groupby(...)["censored"].sum()``, ``df[~df["censored"]]``) count its censored
    trials instead of skipping them as nulls. ``estimator`` is too: a part written before
    the column ran Knuth's estimator in every ``mode: estimate`` row (the rows with
    ``probes``), so those read ``knuth``, the others null. Returns an array of
    ``len(table)`` values.
    """
    if name == "censored" and "status" in table.column_names:
        return pa.array([censored_status(s) for s in table.column("status").to_pylist()],
                        pa.bool_())
    if name == "estimator" and "probes" in table.column_names:
        return pa.array([None if p is None else KNUTH
                         for p in table.column("probes").to_pylist()], pa.string())
    return None


def is_newer(version: str | None) -> bool:
    """True when ``version`` is a schema version after this btlab's (written by a newer one)."""
    return version is not None and version.isdigit() and int(version) > SCHEMA_VERSION

# --------------------------------------------------------------------------- the row columns

#: Column roles. Each column of a row has exactly one.
SCOPE = "scope"            # what the trial belongs to: its problem (and, in a frame, folder)
ID = "id"                  # the trial's and the run's ids
PARAMETER = "parameter"    # the problem's parameter columns (ProblemSpec.columns)
TRIAL_KEY = "trial key"    # besides the parameters, what tells two trials apart
REPEAT = "repeat"          # which repeat of the trial (and, folded, how many)
STATUS = "status"          # how the search ended
DERIVED = "derived"        # a function of other columns, set when the row is written
COUNTER = "counter"        # the metrics contract's counters (docs/metrics.md)
TIMING = "timing"          # nanoseconds measured (they vary between repeats)
RESTART = "restart"        # trials with restarts; null in the others
ESTIMATE = "estimate"      # mode: estimate; null in the others
RESULT = "result"          # the solution found, the error message
EXTRA = "extra"            # the problem's extra counters (ProblemSpec.extra_columns)
PROVENANCE = "provenance"  # what ran the trial, where and when
ROLES = (SCOPE, ID, PARAMETER, TRIAL_KEY, REPEAT, STATUS, DERIVED, COUNTER, TIMING, RESTART,
         ESTIMATE, RESULT, EXTRA, PROVENANCE)

#: Where a column is: in every row, in the rows of the problems whose ``extra_columns``
#: name it, or only in a DataFrame (added by the loaders or by folding repeats).
ROW, IF_EXTRA, FRAME = "row", "extra", "frame"


def _restarts_label(trial: Any) -> str | None:
    return trial.restarts.label() if trial.restarts is not None else None


def _estimator_label(trial: Any) -> str | None:
    return trial.estimator.label() if trial.estimator is not None else None


@dataclass(frozen=True)
class Column:
    """One entry of :data:`COLUMNS`, the table of a results row's columns.

    Attributes:
        name: the column's name (``"*"`` for the two slots where a problem's own
            columns go: its parameters and its extra counters).
        type: the Arrow type on disk (None: a slot, or a column not on disk).
        role: one of :data:`ROLES`.
        where: :data:`ROW` (every row), :data:`IF_EXTRA` (a column btlab fills in the
            rows of problems whose ``extra_columns`` name it) or :data:`FRAME` (only
            in a DataFrame: ``source`` from the loaders, ``repeats`` from folding).
        compared: ``btlab compare`` compares it (a deterministic value); timings,
            provenance and how a split ran are not.
        headline: the end-of-run headline reads it (``btlab run``).
        grouped: a trial key the headline tables group by when it varies.
        of_trial: its value in the row of a :class:`btlab.sweep.trial.Trial`, known
            before the trial runs (:func:`trial_values`); None: set otherwise.
    """

    name: str
    type: pa.DataType | None
    role: str
    where: str = ROW
    compared: bool = True
    headline: bool = False
    grouped: bool = False
    of_trial: Callable[[Any], Any] | None = None


def _key(name: str, kind: pa.DataType, grouped: bool = True) -> Column:
    return Column(name, kind, TRIAL_KEY, headline=True, grouped=grouped,
                  of_trial=attrgetter(name))


#: The columns of a results row, in their order on disk, with their roles: the one table
#: the row's layout is derived from -- :func:`row_schema`, the row a trial makes
#: (:mod:`btlab.execution.execute`) and the row of a trial whose worker was lost, the
#: column roles of :mod:`btlab.analysis.columns`, the trial keys of the headline tables
#: (:mod:`btlab.views.tables`), the headline's columns (:func:`headline_columns`) and
#: the columns ``btlab compare`` ignores (:mod:`btlab.analysis.folder_diff`).
#:
#: Adding a result column is one entry here plus its line in ``docs/metrics.md`` (the
#: column table there); a column added to every row is a new schema version
#: (:data:`SCHEMA_VERSION`, "Schema versions" in ``docs/metrics.md``).
COLUMNS: tuple[Column, ...] = (
    Column("source", None, SCOPE, where=FRAME),
    Column("trial_id", pa.string(), ID, headline=True, of_trial=attrgetter("trial_id")),
    Column("run_id", pa.string(), ID, compared=False),
    Column("problem", pa.string(), SCOPE, headline=True),
    Column("*", None, PARAMETER, headline=True),
    _key("budget_nodes", pa.int64()),
    _key("budget_seconds", pa.float64()),
    _key("budget_backtracks", pa.int64()),
    Column("restarts", pa.string(), TRIAL_KEY, headline=True, grouped=True,
           of_trial=_restarts_label),
    _key("probes", pa.int64()),
    Column("estimator", pa.string(), TRIAL_KEY, headline=True, grouped=True,
           of_trial=_estimator_label),
    _key("seed", pa.int64(), grouped=False),
    Column("repeat", pa.int32(), REPEAT, headline=True, of_trial=attrgetter("repeat")),
    Column("repeats", None, REPEAT, where=FRAME),
    Column("status", pa.string(), STATUS, headline=True),
    Column("censored", pa.bool_(), DERIVED),
    *(Column(name, pa.int64(), COUNTER, headline=True) for name in (
        "nodes", "backtracks", "dead_ends", "checks", "solutions", "max_depth")),
    Column("wall_ns", pa.int64(), TIMING, compared=False, headline=True),
    Column("cpu_ns", pa.int64(), TIMING, compared=False, headline=True),
    Column("abandoned", pa.int64(), RESTART, headline=True),
    Column("attempts", pa.int64(), RESTART),
    Column("success_seed", pa.int64(), RESTART),
    *(Column(name, pa.float64(), ESTIMATE, headline=True) for name in (
        "estimate", "estimate_se", "solutions_estimate", "solutions_estimate_se")),
    Column("solution", pa.list_(pa.int32()), RESULT),
    Column("error", pa.string(), RESULT, compared=False, headline=True),
    Column("*", None, EXTRA),
    Column("compile_ns", pa.int64(), TIMING, where=IF_EXTRA, compared=False),
    *(Column(name, pa.int64(), EXTRA, where=IF_EXTRA, compared=False) for name in (
        # how a split trial was run, not what it found (wasted_nodes depends on scheduling)
        "split_depth", "split_tasks", "wasted_nodes", "split_resumed")),
    *(Column(name, kind, PROVENANCE, compared=False) for name, kind in (
        ("btlab_version", pa.string()), ("git_commit", pa.string()), ("git_dirty", pa.bool_()),
        ("python_version", pa.string()), ("ray_version", pa.string()),
        ("host", pa.string()), ("node_id", pa.string()), ("pid", pa.int64()),
        ("started_at", pa.timestamp("us", tz="UTC")))),
    # the plug-ins a trial ran, as JSON {"module:attr": source hash}; null: built-ins only
    Column("plugins", pa.string(), PROVENANCE),
)


def names(*roles: str, where: tuple[str, ...] = (ROW,)) -> tuple[str, ...]:
    """The names of the :data:`COLUMNS` of the given roles (all roles: none given) that are
    ``where`` (default: every row), in table order; never the slots."""
    return tuple(c.name for c in COLUMNS if c.name != "*" and c.where in where
                 and (not roles or c.role in roles))


def trial_values(trial: Any) -> dict[str, Any]:
    """The values of a trial's row known before it runs: ``trial_id``, the parameter
    columns, the trial keys and ``repeat`` (the columns of :data:`COLUMNS` with an
    ``of_trial``, and ``trial.columns``)."""
    out: dict[str, Any] = {}
    for c in COLUMNS:
        if c.role == PARAMETER:
            out.update(trial.columns)
        elif c.of_trial is not None:
            out[c.name] = c.of_trial(trial)
    return out


def headline_columns(problem: ProblemSpec) -> list[str]:
    """The columns the end-of-run headline reads, in row order (:attr:`Column.headline`)."""
    out: list[str] = []
    for c in COLUMNS:
        if c.headline and c.where == ROW:
            out += problem.columns.names if c.role == PARAMETER else [c.name]
    return out


def row_schema(problem: ProblemSpec) -> pa.Schema:
    """The Arrow schema of a results row for ``problem``: the :data:`COLUMNS` of every row,
    with the problem's parameter columns and its extra counters (int64) in their slots.

    Columns: ``trial_id``, ``run_id``, ``problem``, the problem's parameter
    columns, ``budget_nodes`` (placements), ``budget_seconds`` (s),
    ``budget_backtracks`` (null: no backtrack budget), ``restarts`` (the restart
    policy's canonical text, :mod:`btlab.config.restarts`; null: none), ``probes`` and
    ``estimator`` (``mode: estimate``: the probes, the estimator's canonical label,
    :mod:`btlab.experiments.estimators`; null otherwise), ``seed``, ``repeat``, the metrics contract
    (``status``, ``censored`` (True: the trial stopped at a budget, its counters are
    lower bounds; :mod:`btlab.problems.censoring`), ``nodes``, ``backtracks``,
    ``dead_ends``, ``checks``, ``solutions``, ``max_depth``, ``wall_ns`` and
    ``cpu_ns`` in nanoseconds), ``abandoned``, ``attempts``, ``success_seed``
    (trials with restarts; null otherwise), ``estimate``, ``estimate_se``,
    ``solutions_estimate`` and ``solutions_estimate_se`` (``mode: estimate``; null
    otherwise), ``solution`` (list of int32), ``error``, the
    problem's extra counters, and provenance. The counters are defined in
    ``docs/metrics.md``.
    """
    fields: list[tuple[str, pa.DataType]] = []
    for c in COLUMNS:
        if c.role == PARAMETER:
            fields += list(zip(problem.columns.names, problem.columns.types))
        elif c.role == EXTRA and c.name == "*":
            fields += [(name, pa.int64()) for name in problem.extra_columns]
        elif c.where == ROW:
            fields.append((c.name, c.type))
    return pa.schema(fields)


def btlab_version() -> str:
    """btlab's version (:func:`btlab.store.provenance.version`: a source tree's own, else the
    installed distribution's)."""
    return version()


def _ray_version() -> str | None:
    try:
        return metadata.version("ray")
    except metadata.PackageNotFoundError:
        return None


def software_provenance() -> dict[str, str | bool | None]:
    """The provenance columns that are the same for every row of a run.

    ``btlab_version``, ``git_commit`` and ``git_dirty`` (of the code that runs:
    its clone, else the commit recorded when it was built, see
    :mod:`btlab.store.provenance`; None when unknown), ``python_version`` and
    ``ray_version`` (None without Ray).
    """
    commit, dirty = code_state()
    return {"btlab_version": btlab_version(), "git_commit": commit, "git_dirty": dirty,
            "python_version": platform.python_version(), "ray_version": _ray_version()}


# --------------------------------------------------------------------------- checks of values


def _int_range(kind: pa.DataType) -> tuple[int, int]:
    bits = kind.bit_width
    if pa.types.is_signed_integer(kind):
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return 0, (1 << bits) - 1


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def unfit(kind: pa.DataType, value: Any) -> str | None:
    """Why ``value`` cannot be a non-null value of a column of Arrow type ``kind``, as a
    phrase (``"1180591620717411303424, more than int64 holds (at most
    9,223,372,036,854,775,807)"``); None when it can. Integers must be ``int`` (not
    ``bool``, not a float) within the type's range; floats a real number, not NaN;
    strings ``str``; lists each of their items as their type says."""
    if pa.types.is_integer(kind):
        if isinstance(value, bool) or not isinstance(value, int):
            return f"{_shown(value)} ({type(value).__name__}), not an integer"
        lo, hi = _int_range(kind)
        if not lo <= value <= hi:
            return (f"{_shown(value)}, {'more' if value > hi else 'less'} than {kind} holds "
                    f"({lo:,} to {hi:,})")
        return None
    if pa.types.is_floating(kind):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"{_shown(value)} ({type(value).__name__}), not a number"
        if isinstance(value, float) and math.isnan(value):
            return "NaN, not a number"
        if isinstance(value, int) and abs(value) > 2 ** 1023:
            return f"{_shown(value)}, more than {kind} holds"
        return None
    if pa.types.is_string(kind):
        return None if isinstance(value, str) else \
            f"{_shown(value)} ({type(value).__name__}), not a string"
    if pa.types.is_boolean(kind):
        return None if isinstance(value, bool) else \
            f"{_shown(value)} ({type(value).__name__}), not True or False"
    if pa.types.is_list(kind):
        if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
            return f"{_shown(value)} ({type(value).__name__}), not a list"
        inner = kind.value_type
        if pa.types.is_integer(inner) and set(map(type, value)) <= {int}:
            lo, hi = _int_range(inner)  # C-speed: a tour of 4,000,000 squares is checked fast
            if not value or (lo <= min(value) and max(value) <= hi):
                return None
        for i, item in enumerate(value):
            why = unfit(kind.value_type, item)
            if why is not None:
                return f"item {i} is {why}"
        return None
    return None  # a type no result value has (timestamps: btlab's own)


class ColumnClash(ValueError):
    """A problem's column named like a column btlab writes (:func:`check_problem_columns`).

    Attributes:
        expected, found, fix: as in :class:`btlab.errors.ConfigError`.
    """

    def __init__(self, expected: str, found: str, fix: str):
        super().__init__(f"expected {expected}, found {found}; fix: {fix}")
        self.expected, self.found, self.fix = expected, found, fix


def check_problem_columns(problem: ProblemSpec) -> None:
    """Refuse a problem whose own columns clash with btlab's.

    The reserved names are :data:`COLUMNS` itself, every entry (the columns of
    every row, those btlab fills in when a problem lists them, and those only a
    DataFrame has): a parameter column may take none of them, and an extra
    counter none but the ones btlab fills in for the problems that list them
    (``compile_ns``, ``split_depth``, ...). No name may be both a parameter and
    an extra counter, or be given twice.

    Raises:
        ColumnClash: naming the first column at fault.
    """
    every = names(where=(ROW, IF_EXTRA, FRAME))
    listed = names(where=(IF_EXTRA,))
    params, extras = list(problem.columns.names), list(problem.extra_columns)
    seen: set[str] = set()
    for where, name in [("columns", n) for n in params] + [("extra_columns", n)
                                                          for n in extras]:
        if not isinstance(name, str) or not name or name == "*":
            raise ColumnClash("column names that are non-empty strings",
                              f"{name!r} in the spec's {where}", f"name the column in {where}")
        if name in seen:
            raise ColumnClash("each column named once among the spec's columns and "
                              "extra_columns", f"{name!r} twice",
                              f"rename one of the two {name!r} columns")
        seen.add(name)
        if name in every and not (where == "extra_columns" and name in listed):
            allowed = (f"; of btlab's, extra_columns may list only {', '.join(listed)}"
                       if where == "extra_columns" else "")
            raise ColumnClash(
                f"{where} whose names are not btlab's own (btlab writes {', '.join(every)} "
                f"in every results row or frame{allowed})",
                f"{name!r} in the spec's {where}, a column btlab writes itself",
                f"rename the column {name!r} in the spec's {where}"
                + (" and in what its to_columns returns" if where == "columns" else "")
                + f" (e.g. to {'my_' + name!r})")
