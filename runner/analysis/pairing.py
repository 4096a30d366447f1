"""Paired comparison of btlab results: a metric between two selections, trial by trial.

:func:`compare` matches each baseline trial with the treatment trial that
agrees on every other parameter (Warnsdorff's rule against plain move order
on each start square, say) and derives the ratio and the reduction with
their bounds; :func:`timing_spread` shows how a timing varies over the
repeats of each trial. Both are also importable from :mod:`btlab.analysis`
(``analysis.compare``, ``analysis.timing_spread``)::

    cmp = analysis.compare(df, baseline={"heuristic": "none"},
                           treatment={"heuristic": "warnsdorff"}, metric="backtracks")
    print(cmp)                                                   # totals, bounds marked

Censored trials (status ``node_limit`` / ``time_limit``) report lower
bounds; a derived number is never silently mixed with exact ones: each has a
bound column (:data:`BOUNDS`), and the totals keep exact pairs apart.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from btlab.analysis.columns import (
    TIMINGS,
    aggregate_repeats,
    as_list,
    format_value,
    parameter_columns,
    require_columns,
    select,
    trial_keys,
)
from btlab.analysis.search_keys import SEED, most_informative, search_columns, with_keys
from btlab.problems.censoring import is_censored

#: Values of the bound columns of :func:`compare`.
BOUNDS = ("exact", ">=", "<=", "unknown")


# --------------------------------------------------------------------------- compare


@dataclass(frozen=True, eq=False)
class Comparison:
    """The result of :func:`compare`.

    Attributes:
        trials: one row per matched trial (see :func:`compare`).
        totals: one row per kind of match plus ``all`` (see :func:`compare`).
        metric: the compared metric.
        baseline, treatment: the selections compared.
        on: the matching columns.
        unmatched: trials of each side with no partner on the other side
            (``{"baseline": n, "treatment": m}``); they are in neither table.
        collapsed: trials of each side left out because another trial of the
            same search told more (pairing on the search only; see
            :func:`compare`): ``{"baseline": n, "treatment": m}``.
    """

    trials: pd.DataFrame
    totals: pd.DataFrame
    metric: str
    baseline: dict[str, Any]
    treatment: dict[str, Any]
    on: list[str]
    unmatched: dict[str, int] = field(default_factory=dict)
    collapsed: dict[str, int] = field(default_factory=dict)

    def formatted(self, which: str = "totals") -> pd.DataFrame:
        """``totals`` or ``trials`` as text, bounds written ``>=N`` / ``<=N`` / ``unknown``."""
        frame = self.totals if which == "totals" else self.trials
        out = frame.copy().astype(object)
        for col in ("baseline", "treatment"):
            bound = frame[f"{col}_bound"] if f"{col}_bound" in frame.columns else \
                np.where(is_censored(frame[f"{col}_status"]), ">=", "exact")
            out[col] = [format_value(self.metric, v, b) for v, b in zip(frame[col], bound)]
        out["ratio"] = [format_value("ratio", v, b)
                        for v, b in zip(frame["ratio"], frame["ratio_bound"])]
        out["reduction"] = [format_value(self.metric, v, b)
                            for v, b in zip(frame["reduction"], frame["reduction_bound"])]
        if which == "totals":
            out["trials"] = frame["trials"].map(lambda x: f"{int(x):,}")
        return out.drop(columns=[c for c in out.columns if c.endswith("_bound")])

    def __str__(self) -> str:
        varying = [c for c in self.on if self.trials[c].nunique(dropna=False) > 1]
        fixed = len(self.on) - len(varying)
        matched = ", ".join(varying) or "(no varying column)"
        if fixed:
            matched += f" (+{fixed} constant column{'s' if fixed > 1 else ''})"
        head = (f"{self.metric}: treatment {_sel(self.treatment)} against baseline "
                f"{_sel(self.baseline)}, matched on {matched}; "
                "ratio = treatment / baseline, reduction = baseline - treatment")
        lost = {k: v for k, v in self.unmatched.items() if v}
        tail = ("\nunmatched trials (left out): " + ", ".join(f"{k} {v}" for k, v in lost.items())
                if lost else "")
        return head + "\n" + self.formatted("totals").to_string() + tail

    def _repr_html_(self) -> str:  # pragma: no cover - notebooks
        return f"<p>{html.escape(str(self).splitlines()[0])}</p>" + \
            self.formatted("totals").to_html()


def _sel(selection: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in selection.items())


def compare(df: pd.DataFrame, baseline: Mapping[str, Any] | None = None,
            treatment: Mapping[str, Any] | None = None, metric: str = "backtracks",
            on: Sequence[str] | str | None = None) -> Comparison:
    """Compare a metric between two selections of trials, matched trial by trial.

    Typical use: Warnsdorff's rule against plain move order on every start
    square, ``compare(df, {"heuristic": "none"}, {"heuristic": "warnsdorff"})``;
    Amb against recursion on every n, ``compare(df, {"strategy": "recursive"},
    {"strategy": "amb"}, metric="wall_ns")``.

    Each side is the rows matching its ``column: value`` pairs, repeats folded
    (:func:`aggregate_repeats`: timings are the median over repeats). A
    baseline trial and a treatment trial are matched when they agree on every
    ``on`` column.

    Pairing. A counter (``nodes``, ``backtracks``, ...) is a property of the
    search tree, so by default trials pair on what defines the search
    (``on="search"``: :func:`btlab.analysis.search_keys.search_columns`: problem,
    board, start, mode, heuristic, tie-break, move order, ...; strategy by
    the tree it walks), not on how it was run (strategy of that tree,
    engine, budget, repeat, results folder): a compiled run of plain move
    order at 10^9 placements pairs with a recursive Warnsdorff run at 10^6.
    Where a side holds several trials of one search, the most informative is
    kept (:func:`btlab.analysis.search_keys.most_informative`: a finished trial, else
    the largest bound; a side censored at the smaller budget stays a bound)
    and the others are counted in ``collapsed``. A search that draws random
    numbers (a random tie-break) is one search per seed, matched on its seed
    when both sides draw. A timing (``wall_ns``,
    ``cpu_ns``) depends on how the search was run, so by default trials pair
    on every parameter column (``on="all"``) and several trials per side
    with the same values are an error.

    Bounds. A censored trial (status ``node_limit`` / ``time_limit``) shows
    a value ``v`` whose true value (had the search run to the end) is
    ``>= v``; an exact trial shows its true value. With b the baseline value
    and t the treatment value:

    ==================  ===================  =================  =================
    baseline            treatment            ratio = t / b      reduction = b - t
    ==================  ===================  =================  =================
    exact               exact                exact              exact
    censored (b >=)     exact                ``<=`` (upper)     ``>=`` (lower)
    exact               censored (t >=)      ``>=`` (lower)     ``<=`` (upper)
    censored            censored             unknown (NaN)      unknown (NaN)
    ==================  ===================  =================  =================

    A trial with status ``error`` on either side has no value: ``unknown``.
    One refinement: an exact treatment value of 0 over a censored baseline
    (> 0) gives a ratio of exactly 0.
    The ratio's and the reduction's bounds always point opposite ways, so
    each has its own column. A ratio of ``x/0`` is ``inf`` (``0/0``: NaN).

    Args:
        df: rows as :func:`btlab.analysis.load` returns them.
        baseline, treatment: ``{column: value}`` (or ``{column: [values]}``)
            selecting each side; default ``{"heuristic": "none"}`` and
            ``{"heuristic": "warnsdorff"}``.
        metric: the numeric column to compare (``backtracks``, ``nodes``,
            ``wall_ns``, ...).
        on: matching columns, or ``"search"`` / ``"all"`` (above); columns
            that select a side are never matched on. Default: ``"search"``
            for counters, ``"all"`` for timings.

    Returns:
        A :class:`Comparison`. Its ``trials`` has one row per matched pair:
        the ``on`` columns, ``baseline_status``, ``treatment_status``,
        ``baseline`` and ``treatment`` (the metric, float64), ``ratio``,
        ``ratio_bound``, ``reduction``, ``reduction_bound`` (bound columns:
        categoricals over ``exact, >=, <=, unknown``) and ``kind`` (``exact``,
        ``baseline censored``, ``treatment censored``, ``both censored``,
        ``error``), and ``baseline_source`` / ``treatment_source`` (the
        results folder of each paired trial) when ``df`` has a ``source``
        column. Its ``totals`` has one row per kind present, then
        ``all`` (every pair with values on both sides): ``trials``, the sums
        ``baseline`` and ``treatment`` with ``baseline_bound`` and
        ``treatment_bound`` (``>=`` when a censored value is summed), and the
        ``ratio`` and ``reduction`` of the sums with their bounds from the
        table above. So the exact part is never mixed with bounds: read the
        ``exact`` row for exact figures, the others for bounds.

    Raises:
        ValueError: a column is missing, a side selects no trial, a trial is
            on both sides, or ``on`` leaves several trials per side with the
            same ``on`` values (explicit or ``"all"`` columns; the message
            names the columns that differ).
    """
    baseline = dict(baseline if baseline is not None else {"heuristic": "none"})
    treatment = dict(treatment if treatment is not None else {"heuristic": "warnsdorff"})
    if not baseline or not treatment:
        raise ValueError("compare: baseline and treatment each need at least one "
                         "column=value pair, e.g. baseline={'heuristic': 'none'}")
    require_columns(df, [metric, "status", *baseline, *treatment], "compare")
    if not pd.api.types.is_numeric_dtype(df[metric]):
        raise ValueError(f"compare: metric {metric!r} is not numeric ({df[metric].dtype})")
    keys = list(dict.fromkeys([*baseline, *treatment]))
    if on is None:
        on = "all" if metric in TIMINGS or metric.endswith("_ns") else "search"
    by_search = on == "search"
    if by_search:
        df = with_keys(df)
        on = search_columns(df, exclude=keys)
    elif on == "all":
        on = [c for c in parameter_columns(df) if c not in keys]
    on = as_list(on)
    require_columns(df, on, "compare")
    overlap = set(on) & set(keys)
    if overlap:
        raise ValueError(f"compare: {sorted(overlap)} cannot both select a side and be matched on")
    selected = {}
    for name, sel in (("baseline", baseline), ("treatment", treatment)):
        try:
            selected[name] = select(df, sel)
        except ValueError as exc:
            raise ValueError(f"compare: {name} {sel}: {exc}") from None
    both = selected["baseline"].index.intersection(selected["treatment"].index)
    if len(both):
        raise ValueError(f"compare: {len(both)} row(s) match both baseline {baseline} and "
                         f"treatment {treatment}\n  fix: make the selections disjoint")
    folded = {name: aggregate_repeats(rows) for name, rows in selected.items()}
    collapsed = {"baseline": 0, "treatment": 0}
    if by_search and on:
        # a search that draws is one search per seed: collapse per seed; match on the seed
        # only when both sides draw (a random tie-break against move order pairs by start)
        for name, rows in folded.items():
            kept = most_informative(rows, on, metric)
            collapsed[name] = len(rows) - len(kept)
            folded[name] = kept
        if SEED in on and not all(r[SEED].notna().any() for r in folded.values()):
            on = [c for c in on if c != SEED]
    sides = {}
    for name, sel in (("baseline", baseline), ("treatment", treatment)):
        rows = folded[name]
        dup = rows.duplicated(on, keep=False) if on else pd.Series(len(rows) > 1, rows.index)
        if dup.any():
            vary = [c for c in trial_keys(rows) if c not in on
                    and rows.loc[dup, c].astype("object").nunique(dropna=False) > 1]
            raise ValueError(f"compare: the {name} {sel} has {int(dup.sum())} trials sharing "
                             f"their {', '.join(on) or 'on'} values; they differ in "
                             f"{', '.join(vary) or 'nothing the on columns see'}\n  fix: add "
                             f"{' / '.join(vary) or 'a column'} to on=[...] or to the "
                             f"{name} selection")
        sides[name] = rows
    parts = []
    for name, rows in sides.items():
        part = rows[on].copy()
        part[f"{name}_status"] = rows["status"].astype("object")
        part[name] = rows[metric].to_numpy(dtype="float64", na_value=np.nan)
        if "source" in rows.columns:
            part[f"{name}_source"] = rows["source"].astype("object").to_numpy()
        parts.append(part.reset_index(drop=True))
    if on:
        merged = parts[0].merge(parts[1], on=on, how="outer", indicator=True, sort=False)
        unmatched = {"baseline": int((merged["_merge"] == "left_only").sum()),
                     "treatment": int((merged["_merge"] == "right_only").sum())}
        trials = merged.loc[merged["_merge"] == "both"].drop(columns="_merge")
    else:
        trials = pd.concat(parts, axis=1)
        unmatched = {"baseline": 0, "treatment": 0}
    trials = trials.reset_index(drop=True)
    for c in on:
        if isinstance(df[c].dtype, pd.CategoricalDtype):
            trials[c] = pd.Categorical(trials[c].astype("object"),
                                       categories=df[c].cat.categories)
    b_cens = is_censored(trials["baseline_status"]).to_numpy()
    t_cens = is_censored(trials["treatment_status"]).to_numpy()
    missing = (trials["baseline"].isna() | trials["treatment"].isna()).to_numpy()
    trials = pd.concat([trials, _derive(trials["baseline"].to_numpy(),
                                        trials["treatment"].to_numpy(),
                                        b_cens, t_cens, missing)], axis=1)
    kind = np.select([missing, b_cens & t_cens, b_cens, t_cens],
                     ["error", "both censored", "baseline censored", "treatment censored"],
                     "exact")
    trials["kind"] = pd.Categorical(kind, categories=list(_KINDS))
    return Comparison(trials=trials, totals=_totals(trials), metric=metric, baseline=baseline,
                      treatment=treatment, on=on, unmatched=unmatched, collapsed=collapsed)



_KINDS = ("exact", "baseline censored", "treatment censored", "both censored", "error")


def _derive(b: np.ndarray, t: np.ndarray, b_lower: np.ndarray, t_lower: np.ndarray,
            missing: np.ndarray) -> pd.DataFrame:
    """Ratio t/b and reduction b-t with their bounds, given which sides are lower bounds."""
    b = np.asarray(b, dtype="float64")
    t = np.asarray(t, dtype="float64")
    unknown = missing | (b_lower & t_lower)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(unknown, np.nan, t / b)
    reduction = np.where(unknown, np.nan, b - t)
    # an exact 0 over a positive lower bound is exactly 0, whatever the true baseline
    zero = ~unknown & ~t_lower & (t == 0) & (b > 0)
    ratio_bound = np.select([unknown, zero, b_lower, t_lower],
                            ["unknown", "exact", "<=", ">="], "exact")
    reduction_bound = np.select([unknown, b_lower, t_lower], ["unknown", ">=", "<="], "exact")
    return pd.DataFrame({
        "ratio": ratio,
        "ratio_bound": pd.Categorical(ratio_bound, categories=list(BOUNDS)),
        "reduction": reduction,
        "reduction_bound": pd.Categorical(reduction_bound, categories=list(BOUNDS)),
    })


def _totals(trials: pd.DataFrame) -> pd.DataFrame:
    rows = []
    labels = []
    for kind in _KINDS:
        part = trials[trials["kind"] == kind]
        if len(part):
            labels.append(kind)
            rows.append(part)
    valid = trials[trials["kind"] != "error"]
    labels.append("all")
    rows.append(valid)
    b_sum = np.array([p["baseline"].sum(min_count=1) if k != "error" else np.nan
                      for k, p in zip(labels, rows)])
    t_sum = np.array([p["treatment"].sum(min_count=1) if k != "error" else np.nan
                      for k, p in zip(labels, rows)])
    b_lower = np.array([bool(is_censored(p["baseline_status"]).any()) for p in rows])
    t_lower = np.array([bool(is_censored(p["treatment_status"]).any()) for p in rows])
    missing = np.array([k == "error" or len(p) == 0 for k, p in zip(labels, rows)])
    out = pd.DataFrame({"trials": [len(p) for p in rows], "baseline": b_sum,
                        "baseline_bound": np.where(b_lower, ">=", "exact"),
                        "treatment": t_sum,
                        "treatment_bound": np.where(t_lower, ">=", "exact")},
                       index=pd.Index(labels, name="kind"))
    derived = _derive(b_sum, t_sum, b_lower, t_lower, missing)
    derived.index = out.index
    out = pd.concat([out, derived], axis=1)
    for col in ("baseline_bound", "treatment_bound"):
        out[col] = pd.Categorical(out[col], categories=list(BOUNDS))
    return out



# --------------------------------------------------------------------------- timings


def timing_spread(df: pd.DataFrame, metric: str = "wall_ns") -> pd.DataFrame:
    """How a timing spreads over the repeats of each trial.

    Args:
        df: rows as :func:`btlab.analysis.load` returns them (with a ``repeat`` column).
        metric: ``wall_ns`` or ``cpu_ns``.

    Returns:
        One row per trial, in the order of ``df``'s rows (config order for
        :func:`~btlab.analysis.load`'s), (index: :func:`trial_keys` that vary, or
        ``trial_id`` of the first repeat when none varies) with columns
        ``repeats``, ``min``, ``median``, ``max`` (ns), ``spread`` =
        (max - min) / median and ``cv`` = standard deviation / mean
        (sample, ddof=1; NaN for a single repeat). Trials that failed are
        left out.

    Raises:
        ValueError: ``metric`` or ``repeat`` is not in ``df``.
    """
    require_columns(df, [metric, "repeat", "status"], "timing_spread")
    ok = df[df["status"].astype("object") != "error"]
    keys = [c for c in trial_keys(ok) if ok[c].nunique(dropna=False) > 1] or ["trial_id"]
    if keys == ["trial_id"]:
        ok = ok.assign(trial_id=ok.groupby(trial_keys(ok), observed=True, dropna=False)
                       ["trial_id"].transform("first"))
    g = ok.groupby(keys, observed=True, dropna=False, sort=False)[metric]  # row (config) order
    out = g.agg(repeats="size", min="min", median="median", max="max", mean="mean", std="std")
    out["spread"] = (out["max"] - out["min"]) / out["median"]
    out["cv"] = out["std"] / out["mean"]
    return out.drop(columns=["mean", "std"])

