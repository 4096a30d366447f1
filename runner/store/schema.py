"""The layout of a btlab results row: its columns and types, its schema version, provenance.

:func:`row_schema` gives the Arrow schema of a problem's rows (ids, the
problem's parameters, budget, the metrics contract of ``docs/metrics.md``,
solution, error, the problem's extra counters, provenance);
:data:`SCHEMA_VERSION` is bumped on any incompatible change of it.
:func:`software_provenance` gives the provenance values a run writes into
every row (btlab, git, Python and Ray versions). :mod:`btlab.store.folder`, which
writes the rows, imports this module and re-exports its public names.
"""

from __future__ import annotations

import platform
from importlib import metadata

import pyarrow as pa

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
    trials instead of skipping them as nulls. Returns an array of ``len(table)`` values.
    """
    if name == "censored" and "status" in table.column_names:
        return pa.array([censored_status(s) for s in table.column("status").to_pylist()],
                        pa.bool_())
    return None


def is_newer(version: str | None) -> bool:
    """True when ``version`` is a schema version after this btlab's (written by a newer one)."""
    return version is not None and version.isdigit() and int(version) > SCHEMA_VERSION

#: Provenance columns, last in every row: what ran the trial, where and when.
_PROVENANCE = [
    ("btlab_version", pa.string()), ("git_commit", pa.string()), ("git_dirty", pa.bool_()),
    ("python_version", pa.string()), ("ray_version", pa.string()),
    ("host", pa.string()), ("node_id", pa.string()), ("pid", pa.int64()),
    ("started_at", pa.timestamp("us", tz="UTC")),
    # the plug-ins a trial ran, as JSON {"module:attr": source hash}; null: built-ins only
    ("plugins", pa.string()),
]


def row_schema(problem: ProblemSpec) -> pa.Schema:
    """The Arrow schema of a results row for ``problem``.

    Columns: ``trial_id``, ``run_id``, ``problem``, the problem's parameter
    columns, ``budget_nodes`` (placements), ``budget_seconds`` (s),
    ``budget_backtracks`` (null: no backtrack budget), ``restarts`` (the restart
    policy's canonical text, :mod:`btlab.config.restarts`; null: none), ``probes`` (``mode:
    estimate``; null otherwise), ``seed``, ``repeat``, the metrics contract
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
    fields = [("trial_id", pa.string()), ("run_id", pa.string()), ("problem", pa.string())]
    fields += list(zip(problem.columns.names, problem.columns.types))
    fields += [("budget_nodes", pa.int64()), ("budget_seconds", pa.float64()),
               ("budget_backtracks", pa.int64()), ("restarts", pa.string()),
               ("probes", pa.int64()), ("seed", pa.int64()), ("repeat", pa.int32()),
               ("status", pa.string()), ("censored", pa.bool_()),
               ("nodes", pa.int64()), ("backtracks", pa.int64()),
               ("dead_ends", pa.int64()), ("checks", pa.int64()), ("solutions", pa.int64()),
               ("max_depth", pa.int64()), ("wall_ns", pa.int64()), ("cpu_ns", pa.int64()),
               ("abandoned", pa.int64()), ("attempts", pa.int64()),
               ("success_seed", pa.int64()), ("estimate", pa.float64()),
               ("estimate_se", pa.float64()), ("solutions_estimate", pa.float64()),
               ("solutions_estimate_se", pa.float64()),
               ("solution", pa.list_(pa.int32())), ("error", pa.string())]
    fields += [(name, pa.int64()) for name in problem.extra_columns]
    fields += _PROVENANCE
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
