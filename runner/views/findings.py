"""The finding: a short paragraph, generated from the rows, that answers the sweep's question.

``btlab run`` ends with it, ``btlab show`` and the report (its "Findings"
section) begin with it. :func:`finding` computes it from the rows the headline
tables use -- one row per trial key (:func:`btlab.views.headline_rows.headline_rows`
at the end of a run, so the driver's memory stays flat however many trials) or
every row (repeats are folded as the tables fold them) -- for any problem and
any mode:

- per group of the parameters that vary (the tables' groups, sizes folded in:
  :func:`btlab.views.tables.group_columns`), ``first`` mode: from how many
  starts (or trials) a solution was found, where it backtracked, what stopped
  at a budget; ``count`` mode: the solutions counted and whether each count is
  exact (its whole tree searched) or a lower bound; ``estimate`` mode: Knuth's
  estimates summed over the trials;
- the saving against the spec's baseline
  (:attr:`btlab.problems.spec.ProblemSpec.comparisons`) when one column varies,
  exact or a bound as the censoring makes it, and left unsaid when the rows
  cannot decide it;
- for a group cut short by a node budget, the command that runs it with a
  larger one: a config beside the sweep's file that runs those trials with a
  larger ``budget.nodes`` if there is one, else the same file with overrides;
- the failed trials, with the first line of the first message.

Counts and totals are printed as the tables print them (``>=`` before a lower
bound, :func:`btlab.problems.censoring.bound_flags`).
"""

from __future__ import annotations

import math
import shlex
from pathlib import Path
from typing import Any, Mapping, Sequence

import pandas as pd
import yaml

from btlab.analysis.formatting import fmt_estimate, fmt_int
from btlab.experiments.estimators import KNUTH
from btlab.problems import plugins
from btlab.problems.censoring import CENSORED, bound_flags
from btlab.problems.registry import get_problem
from btlab.problems.spec import ComparedColumn, ProblemSpec
from btlab.views.estimate_table import estimators, is_estimate
from btlab.views.tables import (
    COUNT_MODE,
    SPEC_COMPARED,
    SPEC_PARAMETERS,
    group_columns,
    group_label,
    one_per_trial,
    reads,
)

#: What a solution of a problem is called in the finding (other problems: "solution").
SOLUTION_NOUNS = {"knights_tour": "tour"}
#: Groups told one by one; more are summed up in one sentence.
MAX_GROUPS = 6
#: Start squares (positions) named one by one.
MAX_NAMED = 3
#: How much larger the budget :func:`rerun_command` suggests is.
BUDGET_FACTOR = 1000


# what the finding reads, its helpers below included: the groups, sizes and positions, the
# compared metrics, the budgets that stopped trials, the counters, the estimates
@reads(is_estimate, group_columns, SPEC_PARAMETERS, SPEC_COMPARED, "status", "error", "mode",
       "budget_nodes", "budget_seconds", "budget_backtracks", "nodes", "backtracks",
       "solutions", "wall_ns", "cpu_ns", "probes", "probes_done", "estimator", "estimate",
       "estimate_se", "solutions_estimate", "solutions_estimate_se")
def finding(df: pd.DataFrame, spec: ProblemSpec, *, config: Mapping[str, Any] | None = None,
            source: str | Path | None = None,
            errors: tuple[int, str | None] | None = None) -> str:
    """The finding paragraph of the rows of one problem's sweep.

    Args:
        df: the rows (one per trial, or one per trial key as
            :func:`btlab.views.headline_rows.headline_rows` gives them); repeats are folded.
        spec: the problem.
        config: the config last run, as stored (``name``, ``budget``, ...); used for
            the rerun command.
        source: the config file, when known (``btlab run``); else a config of the same
            name under ``configs/`` is looked for.
        errors: (trials that failed, first line of the first message) when ``df`` holds
            one row per trial key; None: counted in ``df``.

    Returns:
        One paragraph of plain text (no markup), starting ``Finding:``; "" when ``df``
        is empty.
    """
    if df.empty:
        return ""
    df = one_per_trial(df, spec)
    sentences: list[str] = []
    estimates = is_estimate(df)
    ran = ~estimates & (df["status"] != "error")
    searched = df if ran.all() else df[ran]  # no copy of a whole frame
    if not searched.empty:
        sentences += _searched(searched, spec, config, source)
    if estimates.any():
        sentences += _estimates(df[estimates], spec)
    if errors is None:
        failed = df[df["status"].astype("object") == "error"]
        first = None
        if len(failed) and "error" in failed.columns:
            text = failed["error"].dropna()
            first = str(text.iloc[0]).strip().splitlines()[0] if len(text) else None
        errors = (len(failed), first)
    if errors[0]:
        what = (f"all {len(df):,} trials failed" if errors[0] >= len(df)
                else f"{errors[0]:,} of {len(df):,} trials failed")
        sentences.append(_cap(what) + (f" (first error: {errors[1]})" if errors[1] else "")
                         + ".")
    return "Finding: " + " ".join(sentences) if sentences else ""


def folder_finding(df: pd.DataFrame, *, config: Mapping[str, Any] | None = None,
                   source: str | Path | None = None,
                   errors: tuple[int, str | None] | None = None) -> str:
    """:func:`finding` for rows of the problem their ``problem`` column names; "" for no
    rows, or a plug-in problem that no longer imports (the tables say so)."""
    if df.empty:
        return ""
    try:
        spec = get_problem(str(df["problem"].iloc[0]))
    except (ValueError, plugins.PluginError):
        return ""
    return finding(df, spec, config=config, source=source, errors=errors)


# --------------------------------------------------------------------------- searches


def _searched(df: pd.DataFrame, spec: ProblemSpec, config: Mapping[str, Any] | None,
              source: str | Path | None) -> list[str]:
    """The sentences on the trials that searched (first and count mode), per group: the
    spec's baseline group last, so that the saving follows it."""
    groups = [c for c in group_columns(df, spec) if c not in spec.size_columns]
    grouped: list[tuple[tuple, pd.DataFrame]] = (
        [(k if isinstance(k, tuple) else (k,), g)
         for k, g in df.groupby(groups, sort=False, dropna=False, observed=True)]
        if groups else [((), df)])
    compared = _compared(spec, groups)
    if compared is not None:
        baseline = compared.baseline
        grouped.sort(key=lambda item: bool(item[0][0] == baseline))  # stable
    names = _Names(groups, compared)
    counting = [_all_count(sub) for _, sub in grouped]
    # count mode, every trial stopped by one budget: said once, after the counts
    shared = (all(counting) and len(grouped) > 1
              and all(sub["status"].astype("object").isin(CENSORED).all() for _, sub in grouped)
              and len({_budget(sub) for _, sub in grouped}) == 1)
    out: list[str] = []
    for (key, sub), count in list(zip(grouped, counting))[:MAX_GROUPS]:
        name = names(key)
        if count:
            out.append(_count_sentence(sub, spec, name, shared))
        else:
            out.append(_first_sentence(sub, spec, name, _metric(spec, compared, sub)))
    if len(grouped) > MAX_GROUPS:
        out.append(f"({len(grouped) - MAX_GROUPS:,} more groups in the tables.)")
    if shared:
        out.append(f"No count finished within {_budget(df)} (all {len(df):,} trials "
                   "censored), so every count is a lower bound.")
    if compared is not None and len(grouped) <= MAX_GROUPS:
        out += _saving(grouped, groups, compared, spec, names)
    hint = _rerun(grouped, groups, names, config, source, spec)
    if hint:
        out.append(hint)
    return out


class _Names:
    """Names of groups: a compared value's label with its column the first time
    (``plain move order (heuristic none)``), the label alone after."""

    def __init__(self, groups: Sequence[str], compared: ComparedColumn | None) -> None:
        self.groups, self.compared = list(groups), compared
        self.seen: set[tuple] = set()

    def __call__(self, key: tuple) -> str:
        if not self.groups:
            return "the sweep"
        if self.compared is None:
            return ", ".join(f"{g}={group_label(k)}" for g, k in zip(self.groups, key))
        value = key[0]
        label = self.compared.labels.get(str(value))
        plain = f"{self.compared.column} {group_label(value)}"
        if label and key not in self.seen:
            self.seen.add(key)
            return f"{label} ({plain})"
        return label or plain


def _all_count(sub: pd.DataFrame) -> bool:
    """Every row of ``sub`` is a ``count``-mode trial."""
    return "mode" in sub.columns and bool((sub["mode"].astype("object") == COUNT_MODE).all())


def _first_sentence(sub: pd.DataFrame, spec: ProblemSpec, name: str, metric: str) -> str:
    """What a group of ``first``-mode trials found, and what its censoring leaves open."""
    noun = SOLUTION_NOUNS.get(spec.name, "solution")
    status = sub["status"].astype("object")
    n, solved = len(sub), int((status == "solved").sum())
    none_exists = int((status == "exhausted").sum())
    censored = status.isin(CENSORED)
    cut = int(censored.sum())
    unit = _unit(spec, n)
    total, bound = _total(sub, metric)
    if solved == n:
        text = (f"{name} finds a {noun} from all {n:,} {unit}" if spec.position_columns
                else f"{name} solves all {n:,} {unit}")
    elif solved:
        text = (f"{name} finds a {noun} from {solved:,} of {n:,} {unit}" if spec.position_columns
                else f"{name} solves {solved:,} of {n:,} {unit}")
    elif cut == n:
        text = (f"{name} finishes nowhere within {_budget(sub)} ({cut:,} of {n:,} {unit} "
                f"censored), so its cost, {fmt_int(total, bound)} {metric}, is a lower bound")
        return _cap(text) + _sizes(sub, spec) + "."
    else:
        text = f"{name} finds no {noun} from any of its {n:,} {unit}"
    done = sub[~censored] if cut else sub
    if metric == "backtracks" and solved and "backtracks" in sub.columns:
        text += _where_backtracked(done, spec)
    elif solved:
        exact, _ = _total(done, metric)
        text += f", {fmt_int(exact)} {metric} in all" + (" for those" if cut else "")
    if none_exists:
        verb = "has" if none_exists == 1 else "have"
        text += (f"; {none_exists:,} {_unit(spec, none_exists)} {verb} no {noun} (the whole "
                 "tree searched)")
    if cut:
        named = _named(sub[censored], spec)
        text += (f"; {cut:,}{', ' + named + ',' if named else ''} stopped at {_budget(sub)}, "
                 f"so its {fmt_int(total, bound)} {metric} in all are a lower bound")
    return _cap(text) + _sizes(sub, spec) + "."


def _where_backtracked(done: pd.DataFrame, spec: ProblemSpec) -> str:
    """``, backtracking only from (3, 5), 46 times`` and the like, for finished trials."""
    hard = done[done["backtracks"].fillna(0) > 0]
    if hard.empty:
        return " without a single backtrack"
    if not spec.position_columns or any(c not in done.columns for c in spec.position_columns):
        return f", {fmt_int(done['backtracks'].sum())} backtracks in all"
    hard = hard.sort_values("backtracks", ascending=False, kind="stable")
    if len(hard) <= MAX_NAMED:
        places = [f"{_position(r, spec)}, {fmt_int(r['backtracks'])} time"
                  + ("" if r["backtracks"] == 1 else "s") for _, r in hard.iterrows()]
        return " and backtracks only from " + _and(places)
    worst = hard.iloc[0]
    return (f", backtracking from {len(hard):,} of them (most from {_position(worst, spec)}: "
            f"{fmt_int(worst['backtracks'])})")


def _count_sentence(sub: pd.DataFrame, spec: ProblemSpec, name: str, shared: bool) -> str:
    """What a group of ``count``-mode trials counted, exact or a lower bound (``shared``:
    the censoring of every group is told once, after them)."""
    noun = SOLUTION_NOUNS.get(spec.name, "solution")
    status = sub["status"].astype("object")
    n = len(sub)
    censored = status.isin(CENSORED)
    cut = int(censored.sum())
    whole = int((status == "exhausted").sum())
    total, bound = _total(sub, "solutions")
    unit = _unit(spec, n)
    found = f"{fmt_int(total, bound)} {noun}s" if not pd.isna(total) else f"no {noun}"
    if shared:
        text = f"{name} counts {found}"
    elif cut == 0:
        text = (f"{name} counts {found} from its {n:,} {unit}, every count exact (the whole "
                "tree searched)")
    elif whole == 0:
        text = (f"{name} counts {found} but finishes no count within {_budget(sub)} ("
                f"{cut:,} of {n:,} {unit} censored), so every count is a lower bound")
    else:
        text = (f"{name} counts {found}: {whole:,} of {n:,} {unit} searched whole, {cut:,} "
                f"stopped at {_budget(sub)}, so the total is a lower bound")
    if spec.position_columns and n > 1 and all(c in sub.columns for c in spec.position_columns):
        values = sub["solutions"].astype("float64")
        if values.notna().any() and values.max() > 0:
            best = sub.loc[values.idxmax()]
            most = (f"most from {_position(best, spec)}: "
                    f"{fmt_int(best['solutions'], best['status'] in CENSORED)}")
            text += f" ({most})" if shared else f"; {most}"
    return _cap(text) + _sizes(sub, spec) + "."


def _saving(grouped: list, groups: list[str], compared: ComparedColumn, spec: ProblemSpec,
            names: _Names) -> list[str]:
    """How the cheapest group compares with the baseline group, where the rows decide it."""
    col = groups.index(compared.column)
    by_key = {key[col]: (key, sub) for key, sub in grouped}
    if compared.baseline not in by_key or len(by_key) < 2:
        return []
    base_key, base = by_key[compared.baseline]
    if _all_count(base):
        return _most_found(grouped, names)
    if all(m.endswith("_ns") for m in compared.metrics):
        return _time_ratio(by_key, compared, names)
    metric = _metric(spec, compared, base)
    b_total, b_bound = _total(base, metric)
    others = []
    for value, (key, sub) in by_key.items():
        total, bound = _total(sub, metric)
        if value != compared.baseline and not bound and not pd.isna(total):
            others.append((total, key))
    if not others or pd.isna(b_total):
        return []
    total, key = min(others, key=lambda item: item[0])
    name, base_name = _cap(names(key)), names(base_key)
    if total == b_total and not b_bound:
        return [f"{name} and {base_name} make the same {fmt_int(total)} {metric}."]
    if total > b_total and not b_bound:
        return [f"{name} needs {fmt_int(total)} {metric} where {base_name} needs "
                f"{fmt_int(b_total)}: no saving."]
    factor = (f"no {metric[:-1]} at all" if total == 0 else
              f"{'at least ' if b_bound else ''}{b_total / total:,.0f} times fewer")
    lead = "So the saving is a lower bound too: " if b_bound else ""
    return [f"{lead}{name if not lead else names(key)} needs {fmt_int(total)} {metric} in all "
            f"where {base_name} needs {fmt_int(b_total, b_bound)}, {factor}."]


def _time_ratio(by_key: dict, compared: ComparedColumn, names: _Names) -> list[str]:
    """A comparison on timings (the same search run another way): each value's total wall
    time against the baseline's, when no trial of either was censored (a censored trial's
    time is a lower bound) and both ran the same trials."""
    base_key, base = by_key[compared.baseline]
    if base["status"].astype("object").isin(CENSORED).any():
        return []
    out = []
    for value, (key, sub) in by_key.items():
        if value == compared.baseline or sub["status"].astype("object").isin(CENSORED).any():
            continue
        if len(sub) != len(base) or "wall_ns" not in sub.columns:
            continue
        ratio = sub["wall_ns"].astype("float64").sum() / base["wall_ns"].astype("float64").sum()
        if math.isfinite(ratio):
            out.append(f"{names(key)} takes {ratio:.2g} times the wall time of "
                       f"{names(base_key)}")
    return [_cap("; ".join(out[:3])) + " (medians over repeats, summed)."] if out else []


def _most_found(grouped: list, names: _Names) -> list[str]:
    """Count mode: which group counted the most solutions."""
    totals = [(_total(sub, "solutions"), key) for key, sub in grouped]
    totals = [t for t in totals if not pd.isna(t[0][0])]
    if len(totals) < 2:
        return []
    (best, bound), key = max(totals, key=lambda item: item[0][0])
    if all(t[0][0] == best for t in totals):
        return []  # one count for every group: no group found more
    within = " within the budget" if any(b for (_, b), _ in totals) else ""
    return [f"The most{within}: {fmt_int(best, bound)}, with {names(key)}."]


# --------------------------------------------------------------------------- reruns


def _rerun(grouped: list, groups: list[str], names: _Names,
           config: Mapping[str, Any] | None, source: str | Path | None,
           spec: ProblemSpec) -> str:
    """The command that runs, with a larger budget, the groups every trial of which one
    node budget stopped (the whole sweep when that is every group), or ""."""
    stopped = [(key, sub) for key, sub in grouped
               if (sub["status"].astype("object") == "node_limit").all()
               and "budget_nodes" in sub.columns and sub["budget_nodes"].notna().all()
               and sub["budget_nodes"].nunique() == 1]
    if not stopped or config is None:
        return ""
    where = Path(source) if source is not None else _config_named(config.get("name"))
    if len(stopped) == len(grouped) and len(grouped) > 1:
        budgets = {int(sub["budget_nodes"].iloc[0]) for _, sub in stopped}
        if len(budgets) == 1:
            command = rerun_command(config, where, {}, budgets.pop(), spec)
            return f"To run the sweep with a larger budget: {command}."
    commands = []
    for key, sub in stopped[:2]:
        budget = int(sub["budget_nodes"].iloc[0])
        command = rerun_command(config, where, dict(zip(groups, key)), budget, spec)
        commands.append(f"to run {names(key) if groups else 'it'} with a larger budget: "
                        f"{command}")
    return _cap("; ".join(commands)) + "."


def rerun_command(config: Mapping[str, Any], source: Path | None, values: Mapping[str, Any],
                  budget: int, spec: ProblemSpec) -> str:
    """A ``btlab run`` command for the trials ``values`` of ``config`` with a budget larger
    than ``budget`` placements.

    A config beside ``source`` (same problem, mode and fixed size, ``values`` among its
    parameters, a larger ``budget.nodes``) if there is one; else ``source`` (or
    ``CONFIG``) with overrides: the group's values as one-value matrix lists,
    :data:`BUDGET_FACTOR` times the budget, and an ``--out`` of its own.
    """
    sibling = (_sibling_config(config, source, values, budget, spec) if source is not None
               else None)
    if sibling is not None:
        return f"btlab run {shlex.quote(str(sibling))}"
    matrix = config.get("matrix") or {}
    args = [shlex.quote(str(source)) if source is not None else "CONFIG"]
    tags = []
    for key, value in values.items():
        if isinstance(matrix, Mapping) and key in matrix:
            args.append(shlex.quote(f"matrix.{key}=[{group_label(value)}]"))
            tags.append(group_label(value))
    larger = budget * BUDGET_FACTOR
    args.append(f"budget.nodes={larger:_}")
    name = "-".join([str(config.get("name") or "sweep"), *tags, _short(larger)])
    args.append(f"--out {shlex.quote('results/' + name)}")
    return "btlab run " + " ".join(args)


def _sibling_config(config: Mapping[str, Any], source: Path, values: Mapping[str, Any],
                    budget: int, spec: ProblemSpec) -> Path | None:
    """A YAML config in ``source``'s folder that runs the same searches as the trials
    ``values`` of ``config`` with a larger node budget, or None.

    The same searches: the same problem, and every ``fixed`` or ``matrix`` key the
    same in both, the group's own ``values`` included (a one-value ``fixed`` key
    matches them), except the keys that change only how a search runs (the spec's
    comparisons on timings alone: ``strategy``, ``engine``).
    """
    how = {c.column for c in spec.comparisons if all(m.endswith("_ns") for m in c.metrics)}
    mine = {**(config.get("matrix") or {}), **(config.get("fixed") or {}),
            **{k: v for k, v in values.items()}}
    try:
        candidates = sorted(source.parent.glob("*.yaml")) if source.is_file() else []
    except OSError:
        return None
    for path in candidates:
        if path.resolve() == source.resolve():
            continue
        try:
            other = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError, UnicodeDecodeError):
            continue
        if not isinstance(other, dict) or other.get("problem") != config.get("problem"):
            continue
        o_fixed, o_matrix = other.get("fixed") or {}, other.get("matrix") or {}
        o_budget = (other.get("budget") or {}).get("nodes")
        if (not isinstance(o_fixed, dict) or not isinstance(o_matrix, dict)
                or not isinstance(o_budget, int) or o_budget <= budget):
            continue
        theirs = {**o_matrix, **o_fixed}
        keys = (set(mine) | set(theirs)) - how - {"seed"}
        if all(theirs.get(k) == mine.get(k) or [mine.get(k)] == theirs.get(k)
               for k in keys):
            return path
    return None


def _config_named(name: object) -> Path | None:
    """The config file under ``configs/`` (of the working folder) whose ``name`` is ``name``."""
    folder = Path("configs")
    if not name or not folder.is_dir():
        return None
    for path in sorted(folder.glob("*.yaml")):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if f"name: {name}\n" in text:
            return path
    return None


# --------------------------------------------------------------------------- estimates


def _estimates(df: pd.DataFrame, spec: ProblemSpec) -> list[str]:
    """The estimates of the count-mode tree: one sentence per estimator and group (the
    parameters that vary but the position, as the headline tables group them: a sum over
    two boards, or two estimators, would add different trees)."""
    ok = df[df["status"].astype("object") != "error"]
    if ok.empty or "estimate" not in ok.columns:
        return []
    labels = pd.Series(estimators(ok), index=ok.index)
    keys = [c for c in group_columns(ok, spec) if c != "estimator"]
    out = []
    for label in dict.fromkeys(labels):
        rows = ok[labels == label]
        groups = rows.groupby(keys, observed=True, sort=False) if keys else [((), rows)]
        for values, group in groups:
            values = values if isinstance(values, tuple) else (values,)
            where = ", ".join(f"{k}={group_label(v)}" for k, v in zip(keys, values))
            out.append(_estimate_sentence(group, spec, label, where))
    return out


def _estimate_sentence(ok: pd.DataFrame, spec: ProblemSpec, label: str,
                       where: str = "") -> str:
    """The sentence of the estimate trials ``ok`` of one estimator ``label`` and one group
    (``where``, e.g. ``rows=9, cols=9``): the sum over the positions (start squares) of
    each position's estimate -- the mean of its runs when seeds or repeats give it several,
    with the standard error of that mean -- with its standard error (the root of the summed
    squared standard errors: the runs draw from independent seeds) and the 95 % interval,
    sum ± 1.96 standard errors (docs/metrics.md, "Estimators"); then the probes' own cost."""
    noun = SOLUTION_NOUNS.get(spec.name, "solution")
    positions = [c for c in spec.position_columns if c in ok.columns]
    by = ok.groupby(positions, observed=True, sort=False) if positions else None
    runs = int(by.size().max()) if by is not None else len(ok)
    places = by.ngroups if by is not None else 1

    def summed(value: str, se: str) -> tuple[float, float]:
        v = ok[value].astype("float64")
        e2 = ok[se].astype("float64").fillna(0) ** 2
        if by is None:
            k = max(len(ok), 1)
            return v.sum() / k, math.sqrt(e2.sum()) / k
        k = by[value].transform("size").astype("float64")
        return float((v / k).sum()), math.sqrt(float((e2 / k ** 2).sum()))

    whose = "Knuth's estimate" if label == KNUTH else f"The estimate ({label})"
    what = f" with {where}" if where else ""
    if positions:
        text = f"{whose}{what}, " + (f"summed over {places:,} starts" if places > 1
                                     else "from 1 start")
        each = "each " if places > 1 else ""
        text += f" ({each}the mean of {runs} runs): " if runs > 1 else ": "
    else:
        text = f"{whose}{what}" + (f", the mean of {runs} runs: " if runs > 1 else ": ")
    if "solutions_estimate" in ok.columns and ok["solutions_estimate"].notna().any():
        sols, sols_se = summed("solutions_estimate", "solutions_estimate_se")
        text += f"{_with_interval(sols, sols_se)} {noun}s in the count-mode tree of "
    nodes, nodes_se = summed("estimate", "estimate_se")
    text += f"{_with_interval(nodes, nodes_se)} placements"
    probes = ok["probes"]
    if "probes_done" in ok.columns:   # the probes finished (a budget may stop them)
        probes = ok["probes_done"].astype("Float64").fillna(ok["probes"].astype("Float64"))
    cost = f"{fmt_int(int(probes.sum()))} probes, their own cost " \
           f"{fmt_int(ok['nodes'].sum())} placements"
    if "cpu_ns" in ok.columns and ok["cpu_ns"].notna().any():
        cost += f" in {ok['cpu_ns'].astype('float64').sum() / 1e9:,.1f} CPU seconds"
    return f"{text} ({cost})."


def _with_interval(value: float, se: float) -> str:
    """``value ± se (95 % interval a to b)`` with 4 significant digits; the interval only
    with a finite, non-zero standard error (a lower end below 0 is told as 0: neither
    estimate is ever negative)."""
    shown = fmt_estimate(_round(value), _round(se))
    if not math.isfinite(se) or se == 0 or not math.isfinite(value):
        return shown
    low, high = max(value - 1.96 * se, 0.0), value + 1.96 * se
    return f"{shown} (95 % interval {fmt_estimate(_round(low), None)} to " \
           f"{fmt_estimate(_round(high), None)})"


def _round(x: float) -> float:
    """``x`` to 4 significant digits (a whole number from 1,000 up: 6,699,942.7 is
    6,700,000), so the sentence does not print digits the standard error makes noise."""
    if not math.isfinite(x) or x == 0:
        return x
    digits = 3 - math.floor(math.log10(abs(x)))
    return float(round(x, digits))


# --------------------------------------------------------------------------- words


def _compared(spec: ProblemSpec, groups: Sequence[str]) -> ComparedColumn | None:
    """The spec's comparison of the one column that varies, or None."""
    if len(groups) != 1:
        return None
    return next((c for c in spec.comparisons if c.column == groups[0]), None)


def _metric(spec: ProblemSpec, compared: ComparedColumn | None, df: pd.DataFrame) -> str:
    """The cost a group is told by: the compared column's first counter, else backtracks
    when the problem has positions, else nodes."""
    names = ([*compared.metrics] if compared is not None else []) + ["backtracks", "nodes"]
    for m in names:
        if m in df.columns and not m.endswith("_ns") and (m != "backtracks"
                                                          or spec.position_columns
                                                          or compared is not None):
            return m
    return "nodes"


def _total(df: pd.DataFrame, metric: str) -> tuple[float, bool]:
    """The total of ``metric`` over ``df``, and whether censored trials make it a lower
    bound (NaN when no value is known)."""
    if metric not in df.columns:
        return math.nan, False
    values = df[metric].astype("float64")
    flags = bound_flags(values, df["status"].astype("object").isin(CENSORED))
    total = values.sum(min_count=1)
    return float(total), bool(flags["total"])


def _unit(spec: ProblemSpec, n: int) -> str:
    """What one trial is to the reader: a start (a problem with positions) or a trial."""
    word = "start" if spec.position_columns else "trial"
    return word if n == 1 else word + "s"


def _position(row: pd.Series, spec: ProblemSpec) -> str:
    """A row's position, ``(3, 5)``."""
    return "(" + ", ".join(group_label(row[c]) for c in spec.position_columns) + ")"


def _named(rows: pd.DataFrame, spec: ProblemSpec) -> str:
    """``from (0, 4)`` when a few positions are meant, else ""."""
    if (not spec.position_columns or len(rows) > MAX_NAMED
            or any(c not in rows.columns for c in spec.position_columns)):
        return ""
    return "from " + _and([_position(r, spec) for _, r in rows.iterrows()])


def _sizes(sub: pd.DataFrame, spec: ProblemSpec) -> str:
    """`` (n = 4 to 12)`` when the group spans several sizes, else ""."""
    cols = [c for c in spec.size_columns if c in sub.columns]
    if not cols or all(sub[c].nunique(dropna=False) == 1 for c in cols):
        return ""  # one size (told without a copy of the size columns)
    sizes = sub[cols].drop_duplicates()
    if len(sizes) < 2:
        return ""
    if len(cols) == 1:
        col = cols[0]
        return f" ({col} = {group_label(sizes[col].min())} to {group_label(sizes[col].max())})"
    return f" (on {len(sizes):,} sizes)"


def _budget(sub: pd.DataFrame) -> str:
    """The budget that stopped the group's censored trials, in words."""
    status = sub["status"].astype("object")
    parts = []
    if (status == "node_limit").any() and "budget_nodes" in sub.columns:
        nodes = sub.loc[status == "node_limit", "budget_nodes"].dropna().unique()
        if len(nodes) == 1:
            parts.append(f"{_power(int(nodes[0]))} placements")
        elif len(nodes):
            parts.append(f"{_power(int(min(nodes)))} to {_power(int(max(nodes)))} placements")
    if (status == "time_limit").any() and "budget_seconds" in sub.columns:
        secs = sub.loc[status == "time_limit", "budget_seconds"].dropna().unique()
        parts.append(f"{max(secs):g} s" if len(secs) else "the time limit")
    if (status == "backtrack_limit").any() and "budget_backtracks" in sub.columns:
        bts = sub.loc[status == "backtrack_limit", "budget_backtracks"].dropna().unique()
        parts.append(f"{_power(int(max(bts)))} backtracks" if len(bts) else "the backtrack "
                     "budget")
    if (status == "restart_limit").any():
        parts.append("its restarts")
    return " or ".join(parts) or "the budget"


def _power(n: int) -> str:
    """``10^6`` for a power of ten from 1,000 on, else ``200,000``."""
    if n >= 1000 and 10 ** round(math.log10(n)) == n:
        return f"10^{round(math.log10(n))}"
    return f"{n:,}"


def _short(n: int) -> str:
    """``1e9``, ``2e8``, ``1500`` (a folder name's tag for a budget)."""
    digits = str(n).rstrip("0")
    zeros = len(str(n)) - len(digits)
    return f"{digits}e{zeros}" if zeros >= 3 else str(n)


def _and(items: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _cap(text: str) -> str:
    """``text`` with its first letter upper case."""
    return text[:1].upper() + text[1:]


# --------------------------------------------------------------------------- what was run


def what_was_run(df: pd.DataFrame, spec: ProblemSpec, overrides: Sequence[str] = ()) -> str:
    """What the rows say was run, in one line (the report's subtitle): the trials, what
    varied, what was fixed, the budget and the command-line overrides -- from the rows,
    so overrides are told as they took effect (a config file's ``description`` is not).
    """
    if df.empty:
        return "no trial"
    df = one_per_trial(df, spec)
    params = [c for c in spec.columns.names if c in df.columns]
    varied, fixed = [], []
    positions = [c for c in spec.position_columns if c in df.columns]
    for c in params:
        if c in positions:
            continue
        values = [group_label(v) for v in df[c].drop_duplicates()]
        if len(values) > 1:
            shown = ", ".join(values) if len(values) <= MAX_GROUPS else f"{len(values):,} values"
            varied.append(f"{c} {shown}")
        else:
            fixed.append(f"{c} {values[0]}")
    if positions:
        count = len(df[positions].drop_duplicates())
        varied.insert(0, f"{count:,} start{'s' if count != 1 else ''} "
                         f"({' x '.join(positions)})")
    text = f"{spec.title}, {len(df):,} trial{'s' if len(df) != 1 else ''}"
    if varied:
        text += ": " + "; ".join(varied)
    if fixed:
        text += "; fixed: " + ", ".join(fixed)
    budget: list[str] = []
    for col, unit in (("budget_nodes", "placements"), ("budget_backtracks", "backtracks"),
                      ("budget_seconds", "s")):
        if col in df.columns and df[col].notna().any():
            values = sorted(df[col].dropna().unique())
            told = [f"{v:g}" if unit == "s" else _power(int(v)) for v in values]
            budget.append((told[0] if len(told) == 1 else f"{told[0]} to {told[-1]}")
                          + f" {unit}")
    if budget:
        text += "; budget " + " or ".join(budget)
    if overrides:
        text += "; overrides: " + " ".join(overrides)
    return text + "."
