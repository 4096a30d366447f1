"""Censored trials, in one place: which statuses are censored, and which statistics they bound.

A trial stopped by a budget (``node_limit``, ``time_limit``) is *censored*:
its counters are lower bounds of the full search's. A statistic over a group
that holds censored values is itself a lower bound where a censored value
could still move it. ``btlab show`` (:mod:`runner.tables`), ``btlab report``
and :func:`runner.analysis.summary` all mark bounds with :func:`bound_flags`.
"""

from __future__ import annotations

import math

import pandas as pd

#: Statuses of trials stopped by a budget: their counters are lower bounds.
CENSORED = ("node_limit", "time_limit")
#: Every status, in the order tables show them.
STATUSES = ("solved", "exhausted", "node_limit", "time_limit", "error")


def is_censored(status: pd.Series) -> pd.Series:
    """Boolean Series: the status is a budget stop (the trial's values are lower bounds)."""
    return status.astype("object").isin(CENSORED)


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
    ordered = v.dropna().sort_values()
    upper_middle = ordered.iloc[len(ordered) // 2] if len(ordered) else math.nan
    low = ordered.iloc[0] if len(ordered) else math.nan
    anyc = bool(len(cens))
    return {"min": bool((cens <= low).any()), "median": bool((cens <= upper_middle).any()),
            "mean": anyc, "max": anyc, "total": anyc}
