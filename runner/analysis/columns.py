"""The rows of btlab results as a pandas DataFrame: what each column is, and common steps.

The layer under :mod:`btlab.analysis` and :mod:`btlab.analysis.pairing` (both import
it; it imports neither): which columns are counters, timings and parameters
(:func:`parameter_columns`), which identify a trial (:func:`trial_keys`),
folding the repeats of a trial into one row (:func:`aggregate_repeats`),
selecting rows by ``column=value`` (:func:`select`), the columns a view declares it
reads (:func:`reads`, :func:`columns_read`); writing a value as
text with its bound mark (:func:`format_value`, :func:`format_seconds`) lives in
:mod:`btlab.analysis.formatting` and is re-exported here. Every public name here is
also importable from :mod:`btlab.analysis`.

Repeats. A config's ``repeats`` runs each trial several times for timing; the
counters must not change between repeats. :func:`aggregate_repeats` keeps the
counters and status of the first repeat and the median timings
(``wall_ns``, ``cpu_ns``) over the repeats.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence, TypeVar

import pandas as pd

from btlab.analysis.formatting import format_seconds, format_value
from btlab.problems import plugins
from btlab.problems.registry import PROBLEMS, get_problem
from btlab.problems.spec import ProblemSpec
from btlab.store import schema

#: Counters of the metrics contract (``docs/metrics.md``; identical across repeats of a trial).
COUNTERS = schema.names(schema.COUNTER)
#: Timings in nanoseconds (they vary across repeats; folded by the median).
TIMINGS = schema.names(schema.TIMING)
#: Parameter columns of each known problem, in the order of the Parquet schema.
PARAMETERS: dict[str, tuple[str, ...]] = {
    name: tuple(problem.columns.names) for name, problem in PROBLEMS.items()}
#: Columns that are never parameters: every column of :data:`btlab.store.schema.COLUMNS`
#: (ids, budget, metrics, solution, provenance, and ``source`` and ``repeats`` of a
#: DataFrame) and the built-in problems' extra counters.
NOT_PARAMETERS = frozenset({
    *schema.names(where=(schema.ROW, schema.IF_EXTRA, schema.FRAME)),
    *{c for problem in PROBLEMS.values() for c in problem.extra_columns},
})
#: The trial columns that are groups of the headline tables when they vary.
GROUP_TRIAL_COLUMNS = tuple(c.name for c in schema.COLUMNS if c.grouped)
#: Columns besides the parameters that tell two trials apart (not the repeat).
_TRIAL_KEYS = schema.names(schema.SCOPE, schema.TRIAL_KEY, where=(schema.ROW, schema.FRAME))


__all__ = ["COUNTERS", "NOT_PARAMETERS", "PARAMETERS", "TIMINGS", "aggregate_repeats",
           "as_list", "format_seconds", "format_value", "parameter_columns",
           "require_columns", "select", "trial_keys"]

# --------------------------------------------------------------------------- columns

_View = TypeVar("_View", bound=Callable[..., Any])


@dataclass(frozen=True)
class SpecColumns:
    """Columns a view reads that its problem's spec names, in a :func:`reads` declaration.

    Attributes:
        what: what they are, in words.
        of: ``spec -> column names``.
    """

    what: str
    of: Callable[[ProblemSpec], Sequence[str]]


#: In :func:`reads`: every parameter column of the problem (its sizes and positions too).
SPEC_PARAMETERS = SpecColumns("the parameters", lambda spec: spec.columns.names)
#: In :func:`reads`: the columns the spec compares and their metrics (``spec.comparisons``).
SPEC_COMPARED = SpecColumns("the compared columns and their metrics", lambda spec: [
    name for c in spec.comparisons for name in (c.column, *c.metrics)])


def reads(*columns: str | SpecColumns | Callable[..., Any]) -> Callable[[_View], _View]:
    """Declare the columns of its rows a view function reads (a decorator).

    Each item is a column name, a :class:`SpecColumns` (columns the problem's spec
    names, such as :data:`SPEC_PARAMETERS`) or another view function, whose own
    declaration is read in (the functions it calls). The end of ``btlab run`` reads
    from the results only what its tables declare (:func:`columns_read`,
    :func:`btlab.views.headline.tables_columns`); a column a view reads without
    declaring it is missing from its rows there (``btlab show`` loads every column).
    """
    def declare(view: _View) -> _View:
        view.__btlab_reads__ = columns  # type: ignore[attr-defined]
        return view
    return declare


def columns_read(view: Callable[..., Any], spec: ProblemSpec) -> list[str] | None:
    """The columns ``view`` declared with :func:`reads` for ``spec``'s rows, each once, in
    the order declared (the functions it names in their place); None when it, or a function
    it names, declared nothing (it may read any column)."""
    out: dict[str, None] = {}
    seen: set[int] = set()

    def walk(fn: Callable[..., Any]) -> bool:
        if id(fn) in seen:
            return True
        seen.add(id(fn))
        declared = getattr(fn, "__btlab_reads__", None)
        if declared is None:
            return False
        for item in declared:
            if isinstance(item, str):
                out[item] = None
            elif isinstance(item, SpecColumns):
                out.update(dict.fromkeys(item.of(spec)))
            elif not walk(item):
                return False
        return True

    return list(out) if walk(view) else None


def varying(df: pd.DataFrame, columns: Sequence[str]) -> list[str]:
    """The columns among ``columns`` that take more than one value in ``df``."""
    return [c for c in columns if c in df.columns and df[c].nunique(dropna=False) > 1]


@reads(SPEC_PARAMETERS, *GROUP_TRIAL_COLUMNS)
def group_columns(df: pd.DataFrame, spec: ProblemSpec) -> list[str]:
    """The groups of the headline tables (and of ``btlab compare --timings``): the
    parameters that vary, sizes first, never the position columns (start square), then the
    trial keys that vary (:data:`GROUP_TRIAL_COLUMNS`)."""
    sizes = varying(df, spec.size_columns)
    rest = [c for c in spec.columns.names
            if c not in spec.position_columns and c not in spec.size_columns]
    return ([*spec.size_columns] if sizes else []) + varying(df, rest) + varying(
        df, list(GROUP_TRIAL_COLUMNS))


def parameter_columns(df: pd.DataFrame) -> list[str]:
    """The parameter columns of ``df`` (one per trial parameter), in schema order.

    Known problems (:data:`PARAMETERS`) use their list; for another problem,
    every column that is not an id, budget, metric, solution or provenance
    column (:data:`NOT_PARAMETERS`) counts as a parameter.
    """
    problems = (list(pd.unique(df["problem"].dropna().astype(str)))
                if "problem" in df.columns else [])
    known = {p: _parameters_of(p) for p in problems}
    if problems and all(v is not None for v in known.values()):
        names = [c for p in problems for c in known[p] or ()]
    else:
        names = [c for c in df.columns if c not in NOT_PARAMETERS]
        names += [c for p in PARAMETERS.values() for c in p]
    return [c for c in dict.fromkeys(names) if c in df.columns]


def _parameters_of(problem: str) -> tuple[str, ...] | None:
    """A problem's parameter columns: built-in, or a plug-in's that imports here; else None."""
    if problem in PARAMETERS:
        return PARAMETERS[problem]
    if not plugins.is_ref(problem):
        return None
    try:
        return tuple(get_problem(problem).columns.names)
    except plugins.PluginError:
        return None



def trial_keys(df: pd.DataFrame) -> list[str]:
    """Columns that identify a trial up to its repeat: parameters, source, budget, seed."""
    return parameter_columns(df) + [c for c in _TRIAL_KEYS if c in df.columns]


def aggregate_repeats(df: pd.DataFrame) -> pd.DataFrame:
    """Fold the repeats of each trial into one row.

    Returns:
        A DataFrame with one row per trial (rows of ``df`` grouped by
        :func:`trial_keys`): every column from the first repeat, except the
        timings (``wall_ns``, ``cpu_ns``, float64 ns), which are the median
        over the repeats, and a new ``repeats`` column (how many were folded).
        ``df`` without a ``repeat`` column is returned unchanged.

    Warns:
        RuntimeWarning: a trial's counters or status differ between its
            repeats (they must not; the first repeat is kept).
    """
    if "repeat" not in df.columns or df.empty:
        return df
    keys = trial_keys(df)
    labels = df.index
    df = df.reset_index(drop=True).sort_values("repeat", kind="stable")  # positions as labels
    groups = df.groupby(keys, observed=True, dropna=False, sort=False)
    checked = [c for c in ("status", *COUNTERS) if c in df.columns]
    if checked and len(df) > groups.ngroups:
        differs = groups[checked].nunique(dropna=False).gt(1)
        if differs.any(axis=None):
            bad = differs.any(axis=1)
            cols = list(differs.columns[differs.any(axis=0)])
            warnings.warn(f"{int(bad.sum())} trial(s) report different {', '.join(cols)} "
                          "across repeats (the metrics contract says they must not); "
                          "keeping the first repeat's values", RuntimeWarning, stacklevel=2)
    out = groups.head(1).copy()
    timings = [c for c in TIMINGS if c in df.columns]
    if timings:
        med = groups[timings].transform("median")
        out[timings] = med.loc[out.index].astype("float64")
    out["repeats"] = groups["repeat"].transform("size").loc[out.index].astype("int64")
    out = out.sort_index()
    out.index = labels[out.index.to_numpy()]
    return out


# --------------------------------------------------------------------------- rows


def select(df: pd.DataFrame, filters: Mapping[str, Any]) -> pd.DataFrame:
    """The rows of ``df`` matching every ``column=value`` (or ``column=[values]``) filter.

    Raises:
        ValueError: a filter names a column not in ``df``, or no row matches
            (the message lists the values present).
    """
    mask = pd.Series(True, index=df.index)
    for col, want in filters.items():
        if col not in df.columns:
            raise ValueError(f"filter {col}={want!r}: no column {col!r}; columns: "
                             f"{', '.join(map(str, df.columns))}")
        wants = list(want) if isinstance(want, (list, tuple, set, frozenset)) else [want]
        mask &= df[col].astype("object").isin(wants)
        if not mask.any():
            present = ", ".join(repr(v) for v in pd.unique(df[col].astype("object").dropna()))
            raise ValueError(f"filter {col}={want!r} matches no trial"
                             + (f" (with {dict(list(filters.items()))})" if len(filters) > 1
                                else "") + f"; {col} takes the values {present}")
    return df.loc[mask]


# --------------------------------------------------------------------------- helpers


def as_list(value: Sequence[str] | str | None) -> list[str]:
    """``None`` -> ``[]``, one column name -> ``[name]``, several -> a list of them."""
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def require_columns(df: pd.DataFrame, columns: Iterable[str], where: str) -> None:
    """Raise ValueError naming ``where`` and the missing columns unless ``df`` has them all."""
    missing = [c for c in dict.fromkeys(columns) if c not in df.columns]
    if missing:
        raise ValueError(f"{where}: no column {', '.join(map(repr, missing))} in the results; "
                         f"columns: {', '.join(map(str, df.columns))}")
