"""Success rates: the share of trials that found a solution within their budget.

A greedy search (``budget: {backtracks: 0}``) or any budgeted first-mode search
either finds its solution or stops; over many seeds of a randomized search the
share that finds it estimates the probability that one run does. :func:`solved_share`
gives that share per group with a binomial confidence interval (Wilson's score
interval: Wilson, "Probable inference, the law of succession, and statistical
inference", JASA 22, 1927; computed by :func:`scipy.stats.binomtest`), and
:func:`btlab.views.plots.rates.solved_share_vs_size` draws it against the board size.

Which rows count. Repeats are folded first (:func:`btlab.analysis.columns.aggregate_repeats`).
A trial is a success when its status is ``solved``; ``error`` rows are left
out of the share (no outcome) and counted in the ``errors`` column; every other
status (a budget's ``node_limit``, ``time_limit``, ``backtrack_limit``, or
``exhausted``: no solution exists) is a failure.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
from scipy.stats import binomtest

from btlab.analysis.columns import aggregate_repeats, as_list, require_columns

__all__ = ["solved_share"]


def solved_share(df: pd.DataFrame, by: Sequence[str] | str | None = None,
                 alpha: float = 0.05) -> pd.DataFrame:
    """The share of trials that ended ``solved``, per group, with a Wilson interval.

    Args:
        df: trial rows (e.g. from :func:`btlab.analysis.load`) with a ``status``
            column (and the ``by`` columns; ``repeat`` when present).
        by: group column(s); None: one row over all trials.
        alpha: 1 - the confidence level of the interval (0.05: 95 %).

    Returns:
        One row per group in order of first appearance (sorted by the ``by``
        values when they are numbers), columns: the ``by`` keys, ``trials``
        (int64: trials with an outcome, errors excluded), ``solved`` (int64),
        ``share`` (float64, solved / trials; NaN when ``trials`` is 0),
        ``ci_low``, ``ci_high`` (float64 in [0, 1]: Wilson's score interval;
        NaN when ``trials`` is 0) and ``errors`` (int64: rows with status
        ``error``, left out).

    Raises:
        ValueError: a missing ``status`` or group column, an empty ``df``, or an
            ``alpha`` outside (0, 1).
    """
    by = as_list(by)
    require_columns(df, ["status", *by], "solved_share")
    if df.empty:
        raise ValueError("solved_share: no trials (the selection is empty)\n"
                         "  fix: select rows that exist")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise ValueError(f"solved_share: alpha must be a number in (0, 1) (1 - the "
                         f"confidence level); found {alpha!r}\n  fix: alpha=0.05 for 95 %")
    rows = aggregate_repeats(df)
    status = rows["status"].astype("object")
    rows = rows.assign(_ok=(status == "solved").to_numpy(),
                       _err=(status == "error").to_numpy())
    groups = ([((), rows)] if not by else
              [(k if isinstance(k, tuple) else (k,), g) for k, g in
               rows.groupby(by, observed=True, sort=False, dropna=False)])
    records = []
    for key, g in groups:
        errors = int(g["_err"].sum())
        trials = len(g) - errors
        solved = int(g["_ok"].sum())
        share = lo = hi = float("nan")
        if trials:
            share = solved / trials
            ci = binomtest(solved, trials).proportion_ci(1 - alpha, method="wilson")
            lo, hi = float(ci.low), float(ci.high)
        records.append({**dict(zip(by, key)), "trials": trials, "solved": solved,
                        "share": share, "ci_low": lo, "ci_high": hi, "errors": errors})
    out = pd.DataFrame.from_records(records, columns=[*by, "trials", "solved", "share",
                                                      "ci_low", "ci_high", "errors"])
    numeric = [c for c in by if pd.api.types.is_numeric_dtype(out[c])]
    if numeric and len(numeric) == len(by):
        out = out.sort_values(by, kind="stable", ignore_index=True)
    for col in ("trials", "solved", "errors"):
        out[col] = out[col].astype(np.int64)
    return out
