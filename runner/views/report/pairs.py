"""The report's pairwise comparisons: every pair of groups that differ in one treatment.

:func:`pairs_section` compares, for each column of the problem's
:attr:`btlab.problems.spec.ProblemSpec.comparisons` that varies (knight's tour:
``heuristic``, ``tie_break``, ``move_order``; N-Queens: ``strategy``), every
pair of its values -- all three of ``none``, ``warnsdorff`` and
``static_degree``, not only each against ``none`` -- with the other
treatment columns held equal. A pair that changes the search (a column of
:attr:`~btlab.problems.spec.ProblemSpec.pair_on`; a ``strategy`` of another tree)
is compared on the counters with trials paired on the search
(:func:`btlab.analysis.compare` with ``on="search"``: a 10^9 compiled run
pairs with a 10^6 recursive one, the larger budget's row kept); a pair that
only changes how a search is run (``strategy`` of one tree, ``engine``) on
timings, paired on every parameter.

Comparisons with exact pairs (both sides finished) come first, most exact
pairs first, each as a totals table (exact and bounded parts apart) and, for
the knight's tour, a per-start heatmap of the reduction (exact where both
finished, hatched with the bound shown elsewhere). A comparison whose
baseline is censored on every paired trial says all there is in one
sentence ("plain move order (none): no start finished within 1,000,000
placements; warnsdorff: all 64 within 110").
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from btlab.analysis.columns import TIMINGS, format_value, parameter_columns
from btlab.analysis.pairing import Comparison, compare
from btlab.analysis.search_keys import TREE, search_columns, with_keys
from btlab.problems.censoring import is_censored
from btlab.problems.spec import ProblemSpec
from btlab.views import plots
from btlab.views.report.html import MAX_PLOTS_PER_KIND, figure, figures, skipped
from btlab.views.report.html import escape as _e
from btlab.views.report.html import table as _table

__all__ = ["Pair", "pairs_section", "plan_pairs", "sentence"]


@dataclass(frozen=True)
class Pair:
    """One comparison of the report: ``column`` = ``baseline`` against ``treatment``.

    Attributes:
        column: the treatment column.
        baseline, treatment: its two values (the baseline is the spec's
            baseline value when in the pair, else the side that finished less
            often; :func:`plan_pairs` orders them).
        context: the other treatment columns' values, held equal on both sides.
        search: True when the pair changes the search (counters compared,
            trials paired on the search), False when it changes how the
            search is run (timings, paired on every parameter).
        metrics: the metrics compared.
        labels: names of values in sentences (from the spec).
    """

    column: str
    baseline: Any
    treatment: Any
    context: dict[str, Any] = field(default_factory=dict)
    search: bool = True
    metrics: tuple[str, ...] = ("nodes",)
    labels: dict[str, str] = field(default_factory=dict)

    def side(self, which: str) -> dict[str, Any]:
        """The ``{column: value}`` selection of ``baseline`` or ``treatment``."""
        return {**self.context, self.column: getattr(self, which)}

    def name(self, value: Any) -> str:
        """A value as sentences name it: ``plain move order (none)``, or the value."""
        text = self.labels.get(str(value))
        return f"{text} ({value})" if text else str(value)

    def where(self) -> str:
        return ", ".join(f"{k} = {v}" for k, v in self.context.items())


def _values(df: pd.DataFrame, column: str) -> list[Any]:
    return list(pd.unique(df[column].astype("object").dropna()))


def plan_pairs(df: pd.DataFrame, spec: ProblemSpec) -> list[Pair]:
    """The comparisons :func:`pairs_section` makes, in the spec's column order.

    For each spec comparison column with two or more values in ``df``: every
    pair of values (in order of first appearance, the spec's baseline value
    first), within each combination of the other varying treatment columns
    (for a pair that changes the search, the other columns that change it)
    where both sides have trials.
    """
    rows = with_keys(df)
    searchable = set(search_columns(rows))
    entries = [c for c in spec.comparisons if c.column in rows.columns
               and rows[c.column].nunique(dropna=True) > 1]
    pairs: list[Pair] = []
    for entry in entries:
        values = _values(rows, entry.column)
        if entry.baseline in values:
            values.remove(entry.baseline)
            values.insert(0, entry.baseline)
        for a, b in itertools.combinations(values, 2):
            search = _changes_search(rows, entry.column, a, b, searchable)
            others = [e.column for e in entries if e.column != entry.column
                      and (not search or _changes_search(rows, e.column, None, None,
                                                         searchable))]
            sides = rows[rows[entry.column].astype("object").isin([a, b])]
            contexts = ([dict(zip(others, k if isinstance(k, tuple) else (k,)))
                         for k, g in sides.groupby(others, observed=True, sort=False)
                         if g[entry.column].astype("object").nunique() == 2]
                        if others else [{}])
            metrics = entry.metrics if search else (
                tuple(m for m in entry.metrics if m in TIMINGS) or ("wall_ns",))
            for ctx in contexts:
                pairs.append(Pair(entry.column, a, b, ctx, search,
                                  tuple(m for m in metrics if m in rows.columns),
                                  dict(entry.labels)))
    return pairs


def _changes_search(rows: pd.DataFrame, column: str, a: Any, b: Any,
                    searchable: set[str]) -> bool:
    """Whether values ``a`` and ``b`` of ``column`` define different searches (``a`` and
    ``b`` None: whether any two of its values do). A ``strategy`` does when the trees
    its registry entries name differ."""
    if column == "strategy":
        if TREE not in searchable:
            return False
        if a is None:
            return bool(rows[TREE].nunique(dropna=True) > 1)
        trees = dict(zip(rows["strategy"].astype("object"), rows[TREE]))
        return bool(trees.get(a) != trees.get(b))
    return column in searchable


def _oriented(df: pd.DataFrame, pair: Pair, metric: str, spec_baseline: Any) -> tuple[Pair,
                                                                                     Comparison]:
    """Compare, and swap the sides when the spec does not fix the baseline and the
    treatment finished less often (or, as often, cost more on the exact pairs)."""
    on = _on(pair, metric, df)
    cmp = compare(df, pair.side("baseline"), pair.side("treatment"), metric=metric, on=on)
    if spec_baseline in (pair.baseline, pair.treatment):
        return pair, cmp
    t = cmp.trials
    b_cens = int(is_censored(t["baseline_status"]).sum())
    t_cens = int(is_censored(t["treatment_status"]).sum())
    exact = t[t["kind"] == "exact"]
    if t_cens > b_cens or (t_cens == b_cens and exact["treatment"].sum() > exact["baseline"].sum()):
        swapped = Pair(pair.column, pair.treatment, pair.baseline, pair.context, pair.search,
                       pair.metrics, pair.labels)
        return swapped, compare(df, swapped.side("baseline"), swapped.side("treatment"),
                                metric=metric, on=on)
    return pair, cmp


def _on(pair: Pair, metric: str, df: pd.DataFrame | None = None) -> str | list[str]:
    """How a pair's trials match for ``metric``: on the search for a counter of a pair that
    changes the search; on every parameter for a timing, or a pair that changes the run.

    A timing is a property of one run: when several results folders (``df``'s ``source``)
    hold a trial with the same parameters on one side (one sweep run into two folders, at
    two budgets, say), trials pair on every parameter and the folder, so that each folder's
    times are compared with its own.
    """
    timing = metric in TIMINGS or metric.endswith("_ns")
    if pair.search and not timing:
        return "search"
    if df is None or "source" not in df.columns:
        return "all"
    keys = set(pair.side("baseline")) | set(pair.side("treatment"))
    on = [c for c in parameter_columns(df) if c not in keys]
    for which in ("baseline", "treatment"):
        rows = df[_mask(df, pair.side(which))]
        fold = [*on, "repeat"] if "repeat" in rows.columns else on
        if rows.duplicated(subset=fold).any():
            return [*on, "source"]
    return "all"


def _mask(rows: pd.DataFrame, side: dict[str, Any]) -> pd.Series:
    """The rows of ``rows`` with every ``column: value`` of ``side``."""
    mask = pd.Series(True, index=rows.index)
    for column, value in side.items():
        mask &= rows[column].astype("object") == value
    return mask


def sentence(pair: Pair, cmp: Comparison, unit: str = "start") -> str:
    """The one sentence of a comparison whose baseline is censored on every paired trial.

    ``cmp`` compares placements (or another counter): ``"plain move order
    (none): no start finished within 1,000,000 placements; warnsdorff: all 64
    within 110"``. The baseline's number is the fewest placements a paired
    baseline trial made before its budget stopped it; the treatment's the
    most any of its finished trials needed (or how many finished, and within
    what, when some did not: censored or failed).
    """
    t = cmp.trials
    what = "placements" if cmp.metric == "nodes" else cmp.metric
    n = len(t)
    within = format_value(cmp.metric, t["baseline"].min())
    status = t["treatment_status"].astype("object")
    done = t[status.isin(["solved", "exhausted"])]
    cut = int(is_censored(status).sum())
    failed = n - len(done) - cut
    rest = (f"the other {cut:,} censored too" if not failed else
            f"{cut:,} censored, {failed:,} failed" if cut else f"the other {failed:,} failed")
    if len(done) == n:
        tail = f"all {n:,} within {format_value(cmp.metric, done['treatment'].max())}"
    elif len(done):
        tail = (f"{len(done):,} of {n:,} within "
                f"{format_value(cmp.metric, done['treatment'].max())}, {rest}")
    else:
        tail = ("none finished either" if not failed
                else f"none finished ({cut:,} censored, {failed:,} failed)")
    where = f" ({pair.where()})" if pair.context else ""
    return (f"{pair.name(pair.baseline)}{where}: no {unit} finished within {within} {what}; "
            f"{pair.name(pair.treatment)}: {tail}")


def _folder_sentences(df: pd.DataFrame, pair: Pair, unit: str) -> list[str]:
    """The sentences of the folders in which ``pair``'s baseline never finished.

    When several results folders hold runs of one search (the main job's plain
    move order at 10^6 placements, a plain-DFS folder at 10^9), the comparison
    keeps the most informative run of each; a folder whose own baseline runs
    are censored everywhere still says so, in one sentence naming the folder.
    """
    if "source" not in df.columns:
        return []
    out = []
    for source in _values(df, "source"):
        rows = df[df["source"].astype("object") == source]
        if not (_holds(rows, pair.side("baseline")) and _holds(rows, pair.side("treatment"))):
            continue
        cmp = compare(rows, pair.side("baseline"), pair.side("treatment"), metric="nodes",
                      on="search")
        if _all_censored(cmp):
            text = sentence(pair, cmp, unit)
            head, _, tail = text.partition(": ")
            out.append(f"{head}, in folder {source} alone: {tail}")
    return out


def _holds(rows: pd.DataFrame, side: dict[str, Any]) -> bool:
    """True when some row of ``rows`` has every ``column: value`` of ``side``."""
    return bool(_mask(rows, side).any())


def _all_censored(cmp: Comparison) -> bool:
    t = cmp.trials
    return bool(len(t)) and bool(is_censored(t["baseline_status"]).all())


def pairs_section(df: pd.DataFrame, spec: ProblemSpec | None) -> str:
    """The report's "Pairwise comparisons" section as HTML ("" when nothing varies).

    Args:
        df: the report's trial rows (one or several results folders).
        spec: the problem's spec (its ``comparisons``, ``pair_on`` and
            ``position_columns``); None: no section.

    Returns:
        HTML: a note on how trials pair, the comparisons with exact pairs
        (most first: a totals table per metric, then the per-start reduction
        heatmap), other bounded comparisons, then one sentence per comparison
        whose baseline is censored everywhere (also within one results folder
        whose baseline runs another folder's more informative runs replace:
        :func:`_folder_sentences`), then the timing comparisons of
        how the search was run. A comparison that cannot be made becomes a note.
    """
    if spec is None or df.empty or "status" not in df.columns:
        return ""
    pairs = plan_pairs(df, spec)
    if not pairs:
        return ""
    unit = "start" if "start_row" in spec.position_columns else "trial"
    detailed: list[tuple[int, str]] = []
    sentences: list[str] = []
    timing: list[tuple[int, str]] = []
    notes: list[str] = []
    heatmaps = 0
    for pair in pairs:
        metric = pair.metrics[0] if pair.metrics else "nodes"
        try:
            pair, first = _oriented(df, pair, metric, _spec_baseline(spec, pair.column))
            if not len(first.trials):
                notes.append(f"{_title(pair)}: no trial pairs with one on the other side")
                continue
            if pair.search and _all_censored(first):
                nodes = (compare(df, pair.side("baseline"), pair.side("treatment"),
                                 metric="nodes", on="search") if "nodes" in df.columns
                         else first)
                sentences.append(sentence(pair, nodes, unit))
                continue
            cmps = [first] + [compare(df, pair.side("baseline"), pair.side("treatment"),
                                      metric=m, on=_on(pair, m, df))
                              for m in pair.metrics[1:]]
            if pair.search and any(first.collapsed.values()):
                sentences += _folder_sentences(df, pair, unit)
        except ValueError as exc:
            notes.append(skipped(_title(pair), exc))
            continue
        html = _detail(pair, cmps, heatmaps < MAX_PLOTS_PER_KIND and pair.search)
        heatmaps += "<figure" in html
        exact = int((first.trials["kind"] == "exact").sum())
        (detailed if pair.search else timing).append((exact, html))
    detailed.sort(key=lambda item: -item[0])
    parts = ["<h2>Pairwise comparisons</h2>", _NOTE]
    if sentences:
        parts.append("<h3>Where the baseline never finished</h3><ul>"
                     + "".join(f"<li>{_e(s)}</li>" for s in sentences) + "</ul>")
    parts += [h for _, h in detailed]
    if timing:
        parts.append("<h3>How the search was run</h3><p class=\"note\">Pairs that walk the same "
                     "tree (equal counters), compared on time, trials paired on every "
                     "parameter (and on the results folder where two folders ran the same "
                     "trial: a time is compared with one of its own run).</p>")
        parts += [h for _, h in timing]
    parts += [n if n.startswith("<p") else f'<p class="note">{_e(n)}.</p>' for n in notes]
    return "\n".join(parts)


_NOTE = ('<p class="note">Every pair of groups that differ in one treatment, the others held '
         'equal. Trials pair on what defines the search (board, start, mode, move order, '
         'heuristic, tie-break, ...; a strategy by the tree it walks), not on how it was run '
         '(strategy of that tree, engine, budget, repeat, results folder); where one side ran '
         'a search more than once, the finished run is kept, else the one that ran furthest, '
         'so a side censored at a smaller budget stays a bound. <b>ratio</b> = treatment / '
         'baseline, <b>reduction</b> = baseline &minus; treatment; <code>&gt;=</code> / '
         '<code>&lt;=</code> mark bounds, <i>exact</i> rows sum only pairs where both sides '
         'finished.</p>')


def _spec_baseline(spec: ProblemSpec, column: str) -> Any:
    return next((c.baseline for c in spec.comparisons if c.column == column), None)


def _title(pair: Pair) -> str:
    where = f" ({pair.where()})" if pair.context else ""
    return f"{pair.column}: {pair.name(pair.treatment)} against {pair.name(pair.baseline)}{where}"


def _detail(pair: Pair, cmps: list[Comparison], heatmap: bool) -> str:
    first = cmps[0]
    kinds = first.trials["kind"].value_counts(sort=False)  # exact first: category order
    counts = ", ".join(f"{int(v):,} {k}" for k, v in kinds.items() if v)
    parts = [f"<h3>{_e(_title(pair))}</h3>",
             f'<p class="note">{len(first.trials):,} paired trials: {_e(counts)}.'
             + _lost(first) + "</p>"]
    tables = []
    for cmp in cmps:
        title = plots.label(cmp.metric).replace(" (s)", "")
        tables.append(f"<div><b>{_e(title)}</b>"
                      + _table(cmp.formatted("totals").reset_index(), index=False) + "</div>")
    parts.append('<div class="figures">' + "\n".join(tables) + "</div>")
    t = first.trials
    if heatmap and {"rows", "cols", "start_row", "start_col"} <= set(t.columns) and \
            t[["rows", "cols"]].drop_duplicates().shape[0] == 1 and \
            np.isfinite(t["reduction"].to_numpy(dtype="float64")).any():
        label = plots.label(first.metric).replace(" (s)", "")
        caption = (f"Reduction of {label} by start square ({pair.baseline} minus "
                   f"{pair.treatment}): exact where both finished; hatched cells are bounds "
                   "(>= where the baseline stopped at its budget, <= where the treatment did, "
                   "? where both did).")
        parts.append(figures([figure(functools.partial(
            plots.heatmap, t, "reduction",
            title=f"{label}: {pair.baseline} - {pair.treatment}"), caption, "png",
            "heatmap")]))
    return "\n".join(parts)


def _lost(cmp: Comparison) -> str:
    text = ""
    lost = {k: v for k, v in cmp.unmatched.items() if v}
    if lost:
        text += " Unmatched, left out: " + ", ".join(f"{k} {v:,}" for k, v in lost.items()) + "."
    kept = {k: v for k, v in cmp.collapsed.items() if v}
    if kept:
        text += (" Set aside for runs of the same searches that finished or ran further "
                 "(another budget or folder): "
                 + ", ".join(f"{v:,} {k} run(s)" for k, v in kept.items()) + ".")
    return _e(text)
