"""Censored trials, in one place: which statuses are censored, and which statistics they bound.

A trial stopped by a budget (``node_limit``, ``time_limit``, ``backtrack_limit``), or
a trial with restarts that used up its ``max`` attempts (``restart_limit``), is
*censored*:
its counters are lower bounds of the full search's. A statistic over a group
that holds censored values is itself a lower bound where a censored value
could still move it. ``btlab show`` (:mod:`btlab.views.tables`), ``btlab report``
and :func:`btlab.analysis.summary` all mark bounds with :func:`bound_flags`.
"""

from __future__ import annotations

import math

import pandas as pd

#: Statuses of trials stopped by a budget: their counters are lower bounds.
CENSORED = ("node_limit", "time_limit", "backtrack_limit", "restart_limit")
#: The statuses tables always show, in their order.
STATUSES = ("solved", "exhausted", "node_limit", "time_limit", "error")
#: Statuses tables show only when a row has one (before ``error``): only trials with a
#: backtrack budget (``budget.backtracks``), or with restarts, can end so.
OCCASIONAL_STATUSES = ("backtrack_limit", "restart_limit")


def status_order(present) -> list[str]:
    """The statuses a table shows, in order: :data:`STATUSES`, with those of
    :data:`OCCASIONAL_STATUSES` found in ``present`` (an iterable of status strings)
    before ``error``, then any other status found, sorted."""
    seen = set(present)
    occasional = [s for s in OCCASIONAL_STATUSES if s in seen]
    known = [*STATUSES[:-1], *occasional, STATUSES[-1]]
    return [*known, *sorted(s for s in seen if isinstance(s, str) and s not in known)]


def censored_status(status: str | None) -> bool | None:
    """The ``censored`` value of a row with this ``status``: True for a budget stop, False
    for any other status, None for no status. Every row btlab writes gets it this way
    (:meth:`btlab.store.folder.ResultStore.add`)."""
    return None if status is None else status in CENSORED


def is_censored(status: pd.Series) -> pd.Series:
    """Boolean Series: the status is a budget stop (the trial's values are lower bounds)."""
    return status.astype("object").isin(CENSORED)


def censored_column(df: pd.DataFrame) -> pd.Series:
    """The ``censored`` flags of rows as a pandas ``boolean`` Series, aligned with ``df``.

    A row's stored ``censored`` value where it has one; else (rows written by
    schema version 1 and not rewritten since, whose ``censored`` is absent) the value
    :func:`censored_status` gives for its ``status``; ``<NA>`` where neither is known.
    """
    status = df["status"].astype("object")
    derived = pd.Series([censored_status(s) if isinstance(s, str) else None for s in status],
                        index=df.index, dtype="boolean")
    if "censored" not in df.columns:
        return derived
    return df["censored"].astype("boolean").fillna(derived)


def bound_flags(values: pd.Series, censored: pd.Series) -> dict[str, bool]:
    """Which statistics of ``values`` are lower bounds because of censored values.

    Args:
        values: one metric per trial (NaN for trials left out, e.g. errors).
        censored: boolean, aligned with ``values``: the trial stopped at a budget.

    Returns:
        ``{"min", "median", "mean", "max", "total"}`` -> bool. ``total``,
        ``mean`` and ``max`` are bounds as soon as one value is censored;
        ``median`` when a censored value is at or below the upper middle value
        (raising it could move the median); ``min`` when a censored value is
        the minimum.
    """
    v = values.astype("float64")
    cens = v[censored.to_numpy(dtype=bool)].dropna()
    if not len(cens):  # nothing censored, nothing a bound (and no sort of every value)
        return dict.fromkeys(("min", "median", "mean", "max", "total"), False)
    ordered = v.dropna().sort_values()
    upper_middle = ordered.iloc[len(ordered) // 2] if len(ordered) else math.nan
    low = ordered.iloc[0] if len(ordered) else math.nan
    anyc = bool(len(cens))
    return {"min": bool((cens <= low).any()), "median": bool((cens <= upper_middle).any()),
            "mean": anyc, "max": anyc, "total": anyc}
