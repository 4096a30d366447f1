"""The report's survival view of search cost: curves, cactus plot, quantiles, log-rank tests.

:func:`survival_section` shows the distribution of placements (``nodes``)
per group the way the field compares backtracking heuristics and cut-offs
(run-time distributions, Hoos & Stutzle, *Stochastic Local Search*, 2004,
ch. 4; heavy tails, Gomes, Selman, Crato & Kautz, J. Automated Reasoning
24, 2000): Kaplan-Meier survival curves on log-log axes with censored
trials ticked, a cactus plot (trials finished against budget), a table of
quantiles ("not reached" where censoring hides one) and the log-rank test of
every pair of groups that differ in one treatment. All numbers come from
:mod:`btlab.analysis.kaplan_meier` (lifelines), the plots from :mod:`btlab.views.plots.survival`.

Groups are the varying columns of the problem's comparisons that change the
search (knight's tour: ``heuristic``, ...; N-Queens: the tree a ``strategy``
walks), and each search counts once (:func:`btlab.analysis.search_keys.one_per_search`):
a plain move order start run at 10^6 placements in one folder and at 10^9
in another is one trial, the 10^9 one.
"""

from __future__ import annotations

import functools
import itertools
import math
from typing import Any

import pandas as pd

from btlab.analysis.columns import TIMINGS, aggregate_repeats, format_value
from btlab.analysis.kaplan_meier import logrank, quantiles
from btlab.analysis.search_keys import SEARCH_KEYS, TREE, one_per_search, search_columns, with_keys
from btlab.problems.censoring import CENSORED
from btlab.problems.spec import ProblemSpec
from btlab.views.plots.survival import cactus, group_label, survival_curves
from btlab.views.report.html import escape as _e
from btlab.views.report.html import figure, figures, skipped
from btlab.views.report.html import table as _table

__all__ = ["group_columns", "survival_section"]

_CI = ("95 % pointwise confidence bands: lifelines' exponential Greenwood formula "
       "(Greenwood's variance on the log(-log S) scale)")


def group_columns(df: pd.DataFrame, spec: ProblemSpec | None, metric: str = "nodes") -> list[str]:
    """The columns the survival view groups by: the spec's comparison columns that vary,
    then the other varying columns of its :attr:`~btlab.problems.spec.ProblemSpec.pair_on` that
    are neither a case (start square) nor a size (``mode``, ``closed``, ...: a
    first-solution search and a count of every solution are two distributions), then
    its size columns that vary (one distribution per board size or n).

    For a counter (``nodes``, ...), only those that change the search, with
    ``strategy`` as the :data:`btlab.analysis.search_keys.TREE` it walks (the rows are
    then one per search: :func:`btlab.analysis.search_keys.one_per_search`); for a
    timing, every varying comparison column (strategy, engine too).
    """
    rows = with_keys(df)
    searchable = set(search_columns(rows))
    counter = metric not in TIMINGS and not metric.endswith("_ns")
    cols = []
    for c in (spec.comparisons if spec is not None else ()):
        col = c.column
        if counter:
            if col == "strategy" and TREE in searchable:
                col = TREE
            elif col not in searchable:
                continue
        if col in rows.columns and rows[col].nunique(dropna=True) > 1:
            cols.append(col)
    sizes = spec.size_columns if spec is not None else ()
    # the other parameters that define the search (mode, closed, ...): a first-solution
    # search and a count of every solution are two distributions, never one curve
    cases = set(spec.position_columns if spec is not None else ()) | set(sizes)
    defining = [TREE if c == "strategy" else c for c in
                (spec.pair_on or () if spec is not None else ())]
    cols += [c for c in defining if c not in cases and c not in cols
             and not (c == TREE and "strategy" in cols)
             and c in rows.columns and rows[c].nunique(dropna=True) > 1
             and (counter or c != TREE)]
    cols += [c for c in sizes if c in rows.columns and rows[c].nunique(dropna=True) > 1]
    # restarts (null: none) and probes define the search: with and without are two curves
    cols += [c for c in SEARCH_KEYS if c in rows.columns and rows[c].notna().any()
             and rows[c].nunique(dropna=False) > 1]
    return list(dict.fromkeys(cols))


def survival_section(df: pd.DataFrame, spec: ProblemSpec | None,
                     metric: str = "nodes") -> str:
    """The report's "Distribution of search cost" section as HTML ("" without the metric).

    Args:
        df: the report's trial rows (one or several results folders).
        spec: the problem's spec (its ``comparisons`` give the groups), or None.
        metric: the cost (placements, ``nodes``, by default).

    Returns:
        HTML: the survival curves and the cactus plot side by side, captions
        naming the confidence-band method; the quantile table (median and 90th
        percentile with intervals, "not reached" where censoring hides them);
        the log-rank tests. A part that cannot be made becomes a note. "" when
        no group holds two trials (no distribution to show).
    """
    if df.empty or metric not in df.columns or "status" not in df.columns:
        return ""
    by = group_columns(df, spec, metric)
    unset = {c: df[c].astype("object").where(df[c].notna(), "none")
             for c in SEARCH_KEYS if c in by}
    df = df.assign(**unset)  # a trial without restarts is the group "none", not dropped
    aside = ""
    if metric not in TIMINGS and not metric.endswith("_ns"):
        whole = df
        df = one_per_search(df, metric)
        aside = _set_aside(whole, df, by)
    largest = df.groupby(by, observed=True).size().max() if by else len(df)
    if largest < 2:
        return ""  # a curve of one trial per group (a sweep over n, say) shows no distribution
    what = "placements" if metric == "nodes" else metric
    empty = _nothing_to_estimate(df, what)
    if empty:
        return f'<h2>Distribution of search cost</h2><p class="note">{_e(empty)}</p>'
    parts = ["<h2>Distribution of search cost</h2>",
             f'<p class="note">How many {what} a trial needs to finish, per group, with '
             "censoring taken into account: a trial stopped at its budget says only that its "
             "cost is larger (Kaplan-Meier estimate; repeats folded; errors, and searches "
             "that finished without a solution in first mode, left out). On log-log axes a "
             "straight tail is a heavy (power-law) tail.</p>"]
    figs = [figure(functools.partial(survival_curves, df, by=by, metric=metric),
                   f"Survival curves: the share of trials not finished within x {what}. "
                   f"Ticks: censored trials (stopped at a budget); shaded: {_CI}. A curve "
                   "that drops to 0 (every trial finished) runs off the bottom.", "png"),
            figure(functools.partial(cactus, df, by=by, metric=metric),
                   f"Cactus plot: trials finished within a budget of x {what}, per group.",
                   "png")]
    if aside:
        parts.append(f'<p class="note">{_e(aside)}</p>')
    parts.append(figures(figs))
    try:
        parts.append(_quantile_table(df, by, metric))
    except ValueError as exc:
        parts.append(skipped("quantiles", exc))
    parts.append(_logrank_table(df, by, metric))
    return "\n".join(p for p in parts if p)


def _set_aside(whole: pd.DataFrame, kept: pd.DataFrame, by: list[str]) -> str:
    """The sentence naming the runs :func:`one_per_search` set aside, per group, budget and
    folder ("none at 1,000,000 placements (main): 64 runs set aside ..."), else ""."""
    runs = [c for c in ("budget_nodes", "source") if c in whole.columns and c not in by]
    keys = [*by, *runs]
    if not runs:
        return ""
    before = with_keys(aggregate_repeats(whole)).groupby(keys, observed=True,
                                                         dropna=False).size()
    after = kept.groupby(keys, observed=True, dropna=False).size()
    gone = before.sub(after.reindex(before.index, fill_value=0)).loc[lambda s: s > 0]
    if gone.empty:
        return ""
    items = []
    for key, count in gone.items():
        values = dict(zip(keys, key if isinstance(key, tuple) else (key,)))
        budget = values.get("budget_nodes")
        at = (f" at {int(budget):,} placements" if budget is not None and not pd.isna(budget)
              else " without a placement budget")
        source = f" ({values['source']})" if "source" in values else ""
        items.append(f"{group_label(by, tuple(values[c] for c in by))}{at}{source}: "
                     f"{int(count):,}")
    return ("Each search counts once, by its most informative run (finished, else the one "
            "that ran furthest); runs of the same searches set aside: " + "; ".join(items)
            + ".")


def _nothing_to_estimate(df: pd.DataFrame, what: str) -> str:
    """The sentence of rows of which no trial enters a curve (every one failed, or
    finished without a solution in first mode), else ""."""
    status = df["status"].astype("object")
    count = (df["mode"].astype("object") == "count") if "mode" in df.columns \
        else pd.Series(False, index=df.index)
    kept = status.isin(["solved", *CENSORED]) | (count & (status == "exhausted"))
    if kept.any():
        return ""
    failed = int((~status.isin(["solved", "exhausted", *CENSORED])).sum())
    exhausted = len(df) - failed
    why = ", ".join(x for x in (f"{failed:,} failed" if failed else "",
                                f"{exhausted:,} finished without a solution (first mode)"
                                if exhausted else "") if x)
    return (f"No trial finished or stopped at a budget ({why}): there is no distribution of "
            f"{what} to show.")


def _quantile_table(df: pd.DataFrame, by: list[str], metric: str) -> str:
    table = quantiles(df, by=by, metric=metric, q=(0.5, 0.9))
    rows = []
    keys = [tuple(r) for r in table[by].itertuples(index=False)] if by else [()] * len(table)
    seen: dict[tuple[Any, ...], dict[str, str]] = {}
    for key, (_, r) in zip(keys, table.iterrows()):
        row = seen.setdefault(key, {"group": group_label(by, key)})
        name = "median" if r["q"] == 0.5 else f"{100 * r['q']:.0f}th percentile"
        row[name] = _fmt(r["value"], metric) if r["reached"] else "not reached"
        row[f"{name} 95 % CI"] = f"{_fmt(r['ci_low'], metric)} - {_fmt(r['ci_high'], metric)}"
    rows = list(seen.values())
    return ("<h3>Quantiles</h3><p class=\"note\">Read off the Kaplan-Meier curve: the "
            "q-quantile is the smallest cost x with S(x) &lt;= 1 - q; <i>not reached</i> where "
            "too many trials were censored to place it; the interval reads the same off the "
            "confidence bands (Brookmeyer &amp; Crowley 1982); <i>not reached</i> for a bound "
            "the band never crosses. The median here is an observed cost (the smallest "
            "with S(x) &lt;= 0.5); the summary tables' median of an even number of finished "
            "trials is the mean of the middle two, so the two can differ a little.</p>"
            + _table(pd.DataFrame(rows), index=False))


def _fmt(value: float, metric: str) -> str:
    return "not reached" if value is None or math.isnan(value) else format_value(metric, value)


def _logrank_table(df: pd.DataFrame, by: list[str], metric: str) -> str:
    """One row per pair of groups that differ in one group column and where a test can say
    something (a finished trial on a side)."""
    if not by:
        return ""
    groups = [tuple(k) if isinstance(k, tuple) else (k,) for k, _ in
              df.groupby(by, observed=True, sort=False)]
    rows = []
    for a, b in itertools.combinations(groups, 2):
        if sum(x != y for x, y in zip(a, b)) != 1:
            continue
        try:
            res = logrank(df, dict(zip(by, a)), dict(zip(by, b)), metric=metric)
        except ValueError:
            continue
        if res.events_a + res.events_b == 0:
            continue
        rows.append({"group a": group_label(by, a), "finished a": f"{res.events_a} of "
                     f"{res.trials_a}", "group b": group_label(by, b),
                     "finished b": f"{res.events_b} of {res.trials_b}",
                     "chi-square (1 d.f.)": f"{res.statistic:.3g}",
                     "p-value": f"{res.p_value:.3g}"})
    if not rows:
        return ""
    return ("<h3>Log-rank tests</h3><p class=\"note\">Whether two groups share one "
            f"distribution of {_e(metric)} (Mantel 1966), censoring taken into account; "
            "each pair of groups that differ in one column. A small p-value says the "
            "distributions differ, not by how much.</p>" + _table(pd.DataFrame(rows),
                                                                 index=False))
