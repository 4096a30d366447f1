"""What pairs two trials: the parameters that define the search, and the best row per search.

Two trials walk the same search tree when they agree on the parameters that
define it (board, start square, move order, heuristic, tie-break, mode, ...
for the knight's tour; n, mode, ... for N-Queens): their counters then agree
up to a budget, however they were run (strategy of the same tree, engine,
budget, repeat, results folder). Each problem names those parameters in its
spec (:attr:`btlab.problems.spec.ProblemSpec.pair_on`); a ``strategy`` among them
pairs by the tree its registry entry names
(:attr:`btlab.experiments.registry.Strategy.tree`: N-Queens' ``brute_force`` walks
another tree than ``recursive``, the knight's-tour strategies all walk one).

:func:`search_columns` gives the pairing columns of a frame,
:func:`with_keys` adds the ``tree`` and ``search_seed`` columns they may name
(a search that draws random numbers, a knight's tour with ``tie_break:
random``, is also defined by its seed: :attr:`~btlab.problems.spec.ProblemSpec.seeded`), and
:func:`most_informative` keeps one row per search where a side holds several
(the main job's plain move order at 10^6 placements and a compiled run of it
at 10^9 from another folder): a finished row, else the largest bound.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from btlab.analysis.columns import aggregate_repeats, parameter_columns
from btlab.problems import plugins
from btlab.problems.censoring import is_censored
from btlab.problems.registry import get_problem
from btlab.problems.spec import ProblemSpec

__all__ = ["SEARCH_KEYS", "SEED", "TREE", "WALK", "most_informative", "one_per_search",
           "search_columns", "with_keys"]

#: The column :func:`with_keys` adds: the tree a trial's strategy walks.
TREE = "tree"
#: The column :func:`with_keys` adds: the seed of a search that draws from it, else None.
SEED = "search_seed"
#: Parameters that say how a search is walked, not which: never paired on by default.
WALK = ("strategy", "engine")
#: Trial keys that define the search whatever the problem: a trial with restarts walks
#: other trees than one without (or with another policy), a ``mode: estimate`` trial's
#: probes and its estimator are its search. Budgets do not: they only cut a search short.
SEARCH_KEYS = ("restarts", "probes", "estimator")


def _specs(df: pd.DataFrame) -> list[ProblemSpec | None]:
    names = (list(pd.unique(df["problem"].dropna().astype(str)))
             if "problem" in df.columns else [])
    out: list[ProblemSpec | None] = []
    for name in names:
        try:
            out.append(get_problem(name))
        except (ValueError, plugins.PluginError):
            out.append(None)
    return out


def search_columns(df: pd.DataFrame, exclude: Sequence[str] = ()) -> list[str]:
    """The columns of ``df`` that pair trials on the search they walk.

    Args:
        df: trial rows (from :func:`btlab.analysis.load`, or built).
        exclude: columns left out (the columns that select the sides of a
            comparison); excluding ``strategy`` also excludes ``tree``.

    Returns:
        Column names in the spec's order: ``problem`` (when present), then each
        problem's :attr:`~btlab.problems.spec.ProblemSpec.pair_on` columns present in
        ``df``, with ``strategy`` replaced by :data:`TREE`, then
        :data:`SEARCH_KEYS` (``restarts``, ``probes``, ``estimator``) when ``df`` has them, then
        :data:`SEED` when a problem's searches may draw from the seed (add both
        with :func:`with_keys`). A problem without ``pair_on``, or one whose spec
        does not load: every parameter column but ``strategy`` and ``engine``.
    """
    names: list[str] = ["problem"] if "problem" in df.columns else []
    specs = _specs(df) or [None]
    for spec in specs:
        listed = spec.pair_on if spec is not None and spec.pair_on is not None else None
        if listed is None:
            names += [c for c in parameter_columns(df) if c not in WALK]
        else:
            names += [TREE if c == "strategy" else c for c in listed]
    names += [c for c in SEARCH_KEYS if c in df.columns]
    if any(spec is not None and spec.seeded is not None for spec in specs):
        names.append(SEED)
    skip = set(exclude) | ({TREE} if "strategy" in exclude else set())
    present = (set(df.columns) | ({TREE} if "strategy" in df.columns else set())
               | ({SEED} if "seed" in df.columns else set()))
    return [c for c in dict.fromkeys(names) if c in present and c not in skip]


def with_keys(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with the derived pairing columns :data:`TREE` and :data:`SEED`.

    :data:`TREE`, when ``df`` has ``strategy``: the tree each row's strategy
    walks, its registry entry's ``tree`` (or the strategy's own name when the
    entry names none, or the problem has no registry or does not know it).
    :data:`SEED`, when ``df`` has ``seed``: the seed where the problem's
    :attr:`~btlab.problems.spec.ProblemSpec.seeded` says the search draws from it,
    else None. A column already there is kept.
    """
    specs: dict[Any, ProblemSpec | None] = {}
    problems = (df["problem"].astype("object") if "problem" in df.columns
                else pd.Series(None, index=df.index, dtype="object"))
    for name in pd.unique(problems.dropna()):
        try:
            specs[name] = get_problem(str(name))
        except (ValueError, plugins.PluginError):
            specs[name] = None
    if "seed" in df.columns and SEED not in df.columns:
        params = [c for c in dict.fromkeys(
            n for spec in specs.values() if spec is not None for n in spec.columns.names)
            if c in df.columns]
        cache: dict[tuple[Any, ...], bool] = {}
        seeds = []
        values = zip(problems, df["seed"], *(df[c].astype("object") for c in params))
        for problem, seed, *row in values:
            key = (problem, *row)
            if key not in cache:
                spec = specs.get(problem)
                cache[key] = bool(spec is not None and spec.seeded is not None
                                  and spec.seeded(dict(zip(params, row))))
            seeds.append(int(seed) if cache[key] and pd.notna(seed) else None)
        df = df.assign(**{SEED: pd.Series(seeds, index=df.index, dtype="object")})
    if "strategy" not in df.columns or TREE in df.columns:
        return df
    registries = {k: (v.strategies if v is not None else None) for k, v in specs.items()}
    trees = []
    for problem, strategy in zip(problems, df["strategy"].astype("object")):
        reg = registries.get(problem)
        entry = reg.get(strategy) if reg is not None and isinstance(strategy, str) else None
        trees.append(entry.tree if entry is not None and entry.tree else strategy)
    return df.assign(**{TREE: pd.Series(trees, index=df.index, dtype="object")})


def most_informative(rows: pd.DataFrame, on: Sequence[str], metric: str) -> pd.DataFrame:
    """One row per ``on`` key: a finished trial's, else the censored one with the largest value.

    A finished (exact) row tells the value; of several censored rows the one
    that ran furthest gives the largest lower bound (a 10^9 budget's over a
    10^6 one's); a failed row only when nothing else is there. Rows keep
    their order of first appearance of their key.

    Args:
        rows: trial rows with ``status`` and ``metric``, repeats folded.
        on: the key columns.
        metric: the value a censored row is ranked by.

    Returns:
        ``rows`` with one row per key (same columns, original index labels),
        in the order in which the keys first appear in ``rows``.
    """
    if not on or rows.empty:
        return rows
    status = rows["status"].astype("object")
    rank = np.where(status.isin(["solved", "exhausted"]), 0,
                    np.where(is_censored(status), 1, 2))
    value = rows[metric].to_numpy(dtype="float64", na_value=np.nan)
    first = rows.groupby(list(on), observed=True, dropna=False, sort=False).ngroup().to_numpy()
    order = np.lexsort((np.arange(len(rows)), np.nan_to_num(-value, nan=np.inf), rank, first))
    keep = order[~pd.Series(first[order]).duplicated().to_numpy()]
    # groups are numbered in order of first appearance: the kept rows in that order
    return rows.iloc[keep[np.argsort(first[keep], kind="stable")]]


def one_per_search(df: pd.DataFrame, metric: str = "nodes") -> pd.DataFrame:
    """The rows of ``df`` with repeats folded and one row per search: the most informative.

    Every trial that walks one search (the same :func:`search_columns` values,
    whatever strategy of that tree, engine, budget or results folder) counts
    once, as :func:`most_informative` picks it: the way to count trials for a
    distribution of a counter (a plain move order run at 10^6 and one at 10^9
    from another folder are one trial, the 10^9 one). Adds :data:`TREE` when
    ``df`` has ``strategy``, :data:`SEED` when it has ``seed`` (:func:`with_keys`).
    """
    rows = with_keys(aggregate_repeats(df))
    return most_informative(rows, search_columns(rows), metric)
