"""Survival analysis of search cost: Kaplan-Meier curves, quantiles, log-rank tests.

The cost of a trial (placements, ``nodes``; or a time in ns) is a run-time
distribution, and a trial that stopped at its budget only says "more than
this": its cost is right-censored. The estimators here are made for that:

- :func:`survival`: the Kaplan-Meier estimate of P(cost > x) per group, with
  confidence bands (Kaplan & Meier, "Nonparametric estimation from incomplete
  observations", JASA 53, 1958; variance by Greenwood, "The natural duration
  of cancer", 1926);
- :func:`quantiles`: cost quantiles read off that curve, with intervals, and
  "not reached" where censoring hides them;
- :func:`logrank`: the log-rank test of two groups (Mantel, "Evaluation of
  survival data and two new rank order statistics arising in its
  consideration", Cancer Chemotherapy Reports 50, 1966).

All three use lifelines (``KaplanMeierFitter``, ``logrank_test``).

Which rows count. Repeats are folded first (:func:`btlab.analysis.columns.aggregate_repeats`:
counters from the first repeat, as they are equal by contract; timings the
median over the repeats). The event is a finished search: ``solved`` in first
mode, ``exhausted`` in count mode (rows without a ``mode`` column count as
first mode). ``node_limit`` and
``time_limit`` rows are right-censored at their metric value. In first mode an
``exhausted`` trial (the search finished and no solution exists) is neither an
event nor censored and is left out of the curve; ``error`` rows are left out
too, and so are censored rows without a value of the metric (a trial the
runner killed past its time limit has no counters). All are counted in
``result.attrs["left_out"]``: a dict ``{group key tuple: {"exhausted": k,
"error": m, "censored_no_value": c}}``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np
import pandas as pd

from btlab.analysis.columns import aggregate_repeats, as_list, require_columns, select
from btlab.problems.censoring import CENSORED

if TYPE_CHECKING:
    from lifelines import KaplanMeierFitter

__all__ = ["LogRank", "logrank", "quantiles", "survival"]

#: Column that flags the event (finished search) of a prepared row.
_EVENT = "_event"


def _prepare(df: pd.DataFrame, by: Sequence[str], metric: str,
             where: str) -> tuple[pd.DataFrame, dict[tuple[Any, ...], dict[str, int]]]:
    """Fold repeats, flag events, drop left-out rows; return (rows, left-out counts per group).

    Raises:
        ValueError: a missing metric, group or ``status`` column, or no rows.
    """
    require_columns(df, [metric, "status", *by], where)
    if df.empty:
        raise ValueError(f"{where}: no trials to analyse (the selection is empty)\n"
                         "  fix: select rows that exist (df[\"heuristic\"].unique() lists "
                         "the values a column takes)")
    if not pd.api.types.is_numeric_dtype(df[metric]) or pd.api.types.is_bool_dtype(df[metric]):
        raise ValueError(f"{where}: metric {metric!r} is not a cost\n  expected: a numeric "
                         f"column (nodes, backtracks, wall_ns, ...)\n  found:    "
                         f"{df[metric].dtype}\n  fix:      metric=\"nodes\"")
    rows = aggregate_repeats(df)
    status = rows["status"].astype("object")
    count_mode = (rows["mode"].astype("object") == "count") if "mode" in rows.columns \
        else pd.Series(False, index=rows.index)
    event = np.where(count_mode, status == "exhausted", status == "solved")
    exhausted_first = (~count_mode) & (status == "exhausted")
    error = ~(status.isin(["solved", "exhausted", *CENSORED]))
    # a trial the runner killed past its time limit is censored with no counters: it
    # cannot be placed on the cost axis, so it is left out and counted, like an error
    unknown = status.isin(CENSORED) & rows[metric].isna()
    keep = ~(exhausted_first | error | unknown)
    keys = _group_keys(rows, by)
    left_out: dict[tuple[Any, ...], dict[str, int]] = {}
    for key, ex, er, un in zip(keys, exhausted_first, error, unknown):
        counts = left_out.setdefault(key, {"exhausted": 0, "error": 0, "censored_no_value": 0})
        counts["exhausted"] += int(ex)
        counts["error"] += int(er)
        counts["censored_no_value"] += int(un)
    out = rows.loc[keep].copy()
    if out.empty:
        raise ValueError(f"{where}: no finished or censored trial (all {len(rows)} are "
                         "exhausted in first mode or errors)")
    out[_EVENT] = event[keep.to_numpy()]
    if out[metric].isna().any():
        raise ValueError(f"{where}: metric {metric!r} is missing in "
                         f"{int(out[metric].isna().sum())} finished or censored trial(s)\n"
                         f"  fix: leave them out (df[df[{metric!r}].notna()]) or choose "
                         "a metric every trial reports (nodes)")
    if (out[metric] < 0).any():
        raise ValueError(f"{where}: metric {metric!r} is negative in "
                         f"{int((out[metric] < 0).sum())} trial(s)\n  expected: a cost >= 0 "
                         "(placements, backtracks, ns)\n  fix: leave those rows out")
    return out, left_out


def _alpha(alpha: Any, where: str) -> float:
    """``alpha`` as a float in (0, 1).

    Raises:
        ValueError: anything else (what was found, and the usual value).
    """
    try:
        value = float(alpha)
    except (TypeError, ValueError):
        value = float("nan")
    if isinstance(alpha, bool) or not 0 < value < 1:
        raise ValueError(f"{where}: alpha must be a number in (0, 1) (1 - the confidence "
                         f"level); found {alpha!r}\n  fix: alpha=0.05 for 95 % bands")
    return value


def _levels(q: Any) -> list[float]:
    """``q`` (one level or several) as a list of floats in (0, 1).

    Raises:
        ValueError: an empty ``q``, or a level that is not a number in (0, 1).
    """
    items = [q] if isinstance(q, (int, float, str)) else list(q) if q is not None else []
    out = []
    for v in items:
        try:
            value = float(v) if not isinstance(v, (bool, str)) else float("nan")
        except (TypeError, ValueError):
            value = float("nan")
        if not 0 < value < 1:
            break
        out.append(value)
    if not items or len(out) != len(items):
        raise ValueError(f"quantiles: q must be numbers in (0, 1); found {q!r}\n"
                         "  fix: q=(0.5, 0.9) for the median and the 90th percentile")
    return out


def _group_keys(rows: pd.DataFrame, by: Sequence[str]) -> list[tuple[Any, ...]]:
    if not by:
        return [()] * len(rows)
    return list(zip(*(rows[c].astype("object") for c in by)))


def _groups(rows: pd.DataFrame, by: Sequence[str]) -> list[tuple[tuple[Any, ...], pd.DataFrame]]:
    if not by:
        return [((), rows)]
    return [(k if isinstance(k, tuple) else (k,), g)
            for k, g in rows.groupby(list(by), observed=True, sort=False, dropna=False)]


def _fit(group: pd.DataFrame, metric: str, alpha: float) -> KaplanMeierFitter:
    # heavy: lifelines takes 1.4 s to import: only when a curve is made
    from lifelines import KaplanMeierFitter

    kmf = KaplanMeierFitter(alpha=alpha)
    kmf.fit(group[metric].astype("float64").to_numpy(),
            event_observed=group[_EVENT].astype(bool).to_numpy())
    return kmf


def survival(df: pd.DataFrame, by: Sequence[str] | str | None = None, metric: str = "nodes",
             alpha: float = 0.05) -> pd.DataFrame:
    """Kaplan-Meier estimate of P(cost > x) per group, with confidence bands.

    Args:
        df: trial rows (e.g. from :func:`btlab.analysis.load`), with ``status``
            and ``metric`` columns (and ``mode``, ``repeat`` when present).
        by: group column(s); None for one curve over all rows.
        metric: the cost: a counter (``nodes``: placements) or a timing
            (``wall_ns``, ``cpu_ns``: ns).
        alpha: 1 - confidence level of the bands (0.05: 95 % bands).

    Returns:
        A DataFrame, one row per group and distinct ``x`` (lifelines' timeline:
        0 and every observed metric value, events and censorings), columns:
        the ``by`` keys, ``x`` (metric value, float64), ``survival`` (the
        Kaplan-Meier estimate of P(cost > x), right-continuous step),
        ``ci_low``/``ci_high`` (pointwise bands: lifelines' exponential
        Greenwood formula, i.e. Greenwood's variance on the log(-log S)
        scale; 1.0 where S = 1), ``at_risk`` (trials with cost >= x),
        ``events`` (trials finished at exactly x), ``censored`` (trials stopped
        at their budget at exactly x). ``attrs["left_out"]`` counts the rows
        left out per group key tuple: ``{"exhausted": k, "error": m,
        "censored_no_value": c}`` (c: censored trials without a value of the
        metric, such as a trial killed past its time limit)
        (exhausted in first mode: no solution exists).

    Raises:
        ValueError: a missing metric, group or ``status`` column; an empty
            ``df``; a metric that is not numeric, or missing or negative in a
            kept row; an ``alpha`` outside (0, 1).
    """
    by = as_list(by)
    alpha = _alpha(alpha, "survival")
    rows, left_out = _prepare(df, by, metric, "survival")
    parts = []
    for key, group in _groups(rows, by):
        kmf = _fit(group, metric, alpha)
        sf = kmf.survival_function_.iloc[:, 0]
        ci = kmf.confidence_interval_survival_function_
        table = kmf.event_table
        part = pd.DataFrame({
            "x": sf.index.to_numpy(dtype="float64"),
            "survival": sf.to_numpy(dtype="float64"),
            "ci_low": ci.iloc[:, 0].to_numpy(dtype="float64"),
            "ci_high": ci.iloc[:, 1].to_numpy(dtype="float64"),
            "at_risk": table["at_risk"].reindex(sf.index).to_numpy(dtype="int64"),
            "events": table["observed"].reindex(sf.index).to_numpy(dtype="int64"),
            "censored": table["censored"].reindex(sf.index).to_numpy(dtype="int64"),
        })
        for col, value in reversed(list(zip(by, key))):
            part.insert(0, col, value)
        parts.append(part)
    out = pd.concat(parts, ignore_index=True)
    out.attrs["left_out"] = left_out
    return out


def quantiles(df: pd.DataFrame, by: Sequence[str] | str | None = None, metric: str = "nodes",
              q: Sequence[float] | float = (0.5, 0.9), alpha: float = 0.05) -> pd.DataFrame:
    """Quantiles of the cost per group, from the Kaplan-Meier curve, with intervals.

    The q-quantile is the smallest x with S(x) <= 1 - q (lifelines'
    ``qth_survival_times``); its interval is the same reading of the lower and
    upper confidence bands of :func:`survival` (the interval of Brookmeyer &
    Crowley, "A confidence interval for the median survival time",
    Biometrics 38, 1982, on lifelines' exponential Greenwood bands).

    Returns:
        One row per group and q: the ``by`` keys, ``q``, ``value`` (float64,
        metric units: placements for ``nodes``, ns for times), ``ci_low``,
        ``ci_high`` and ``reached`` (bool). Where censoring hides the quantile
        (the curve never drops to 1 - q) ``value`` is NaN and ``reached`` is
        False; an unreached bound is NaN (``ci_high`` often is).

    Raises:
        ValueError: as :func:`survival`; a q that is not a number in (0, 1) (one
            number is one level).
    """
    by = as_list(by)
    qs = _levels(q)
    alpha = _alpha(alpha, "quantiles")
    rows, _ = _prepare(df, by, metric, "quantiles")
    records = []
    for key, group in _groups(rows, by):
        kmf = _fit(group, metric, alpha)
        sf = kmf.survival_function_.iloc[:, 0]
        ci = kmf.confidence_interval_survival_function_
        for p in qs:
            value = _first_below(sf, 1 - p)
            records.append({**dict(zip(by, key)), "q": p, "value": value,
                            # the upper band drops later: it bounds the quantile from above
                            "ci_low": _first_below(ci.iloc[:, 0], 1 - p),
                            "ci_high": _first_below(ci.iloc[:, 1], 1 - p),
                            "reached": not np.isnan(value)})
    return pd.DataFrame.from_records(records)


def _first_below(curve: pd.Series, level: float) -> float:
    """The smallest x with curve(x) <= level (a small tolerance for float sums), else NaN."""
    hit = curve.to_numpy(dtype="float64") <= level + 1e-12
    return float(curve.index[np.argmax(hit)]) if hit.any() else float("nan")


@dataclass(frozen=True)
class LogRank:
    """Result of :func:`logrank`: the test statistic (chi-square, 1 d.f.) and its p-value,
    with the trials and events (finished searches) on each side."""

    statistic: float
    p_value: float
    trials_a: int
    events_a: int
    trials_b: int
    events_b: int


def _exclusive(df: pd.DataFrame, a: Mapping[str, Any], b: Mapping[str, Any]) -> str:
    """Filters like ``a`` and ``b`` with no trial in common, for the message: ``b`` given the
    values of ``a``'s first column that ``a`` leaves out (or the usual example)."""
    for col, want in {**b, **a}.items():
        wants = list(want) if isinstance(want, (list, tuple, set, frozenset)) else [want]
        taken = set(wants) if col in a else set()
        others = [v.item() if hasattr(v, "item") else v
                  for v in pd.unique(df[col].astype("object").dropna()) if v not in taken]
        if col in a and others:
            other = others[0] if len(others) == 1 else others
            return f"a={dict(a)!r}, b={ {**b, col: other}!r}"
    return "a={'heuristic': 'none'}, b={'heuristic': 'warnsdorff'}"


def logrank(df: pd.DataFrame, a: Mapping[str, Any], b: Mapping[str, Any],
            metric: str = "nodes") -> LogRank:
    """Log-rank test (Mantel 1966) that groups ``a`` and ``b`` share one cost distribution.

    Args:
        a, b: ``column -> value`` (or list of values) filters selecting each side.
        metric: the cost column (placements for ``nodes``, ns for times).

    Returns:
        A :class:`LogRank`; rows are counted as in :func:`survival`.

    Raises:
        ValueError: a filter names a missing column or matches no trial; a
            trial on both sides; no finished trial on either side (no event:
            the test says nothing); a missing metric or ``status`` column.
    """
    rows_a, rows_b = select(df, a), select(df, b)
    both = rows_a.index.intersection(rows_b.index)
    if len(both):
        raise ValueError(f"logrank: {len(both)} trial(s) are on both sides (a {dict(a)}, "
                         f"b {dict(b)})\n  expected: two groups with no trial in common\n"
                         f"  fix: make the filters exclusive, e.g. {_exclusive(df, a, b)}")
    side_a, _ = _prepare(rows_a, [], metric, f"logrank side a {dict(a)}")
    side_b, _ = _prepare(rows_b, [], metric, f"logrank side b {dict(b)}")
    if not side_a[_EVENT].any() and not side_b[_EVENT].any():
        raise ValueError(f"logrank: no trial finished on either side (a {dict(a)}: "
                         f"{len(side_a)} censored, b {dict(b)}: {len(side_b)} censored): "
                         "the test has no event to compare\n  fix: compare groups where "
                         "some trial finished, or rerun with a larger budget")
    from lifelines.statistics import logrank_test  # heavy: lifelines takes 1.4 s to import

    res = logrank_test(side_a[metric].astype("float64"), side_b[metric].astype("float64"),
                       event_observed_A=side_a[_EVENT].astype(bool),
                       event_observed_B=side_b[_EVENT].astype(bool))
    return LogRank(statistic=float(res.test_statistic), p_value=float(res.p_value),
                   trials_a=len(side_a), events_a=int(side_a[_EVENT].sum()),
                   trials_b=len(side_b), events_b=int(side_b[_EVENT].sum()))
