"""Which trials may carry a backtrack budget (``budget: {backtracks: B}``), restarts
(:mod:`btlab.config.restarts`) and ``mode: estimate`` with ``probes`` and ``estimator``.

A backtrack budget stops a search when its backtracks reach B (status
``backtrack_limit``, censored); B = 0 is greedy: the first dead end stops it.
The strategies that honour it say so in their registry entry
(:attr:`btlab.experiments.registry.Strategy.budgets` holds ``backtracks``): the
depth-first searches whose backtracks are counted one at a time in tree order
(the knight's tour's ``recursive`` and ``iterative``, N-Queens' ``recursive``,
``iterative`` and ``bitmask``; the compiled engines run such a strategy). A
split search cannot honour one: its subtree tasks run in parallel. Restarts
need a search that draws from its seed, ``mode: first``, no split, a strategy
that honours the cut-off, and ``max`` or a trial budget.
"""

from __future__ import annotations

from typing import Any, Mapping

from btlab.config.model import SweepConfig
from btlab.config.restarts import Restarts
from btlab.config.trial_keys import BUDGET, ESTIMATOR, PROBES, RESTARTS
from btlab.config.yaml_positions import KeyPath
from btlab.experiments.estimators import KNUTH

__all__ = ["check_backtrack_budget", "check_estimator", "check_restarts", "check_trial_budget",
           "honouring"]


def check_trial_budget(config: SweepConfig, columns: Mapping[str, Any],
                       src: Mapping[str, KeyPath], budget: Mapping[str, Any],
                       restarts: Restarts | None, probes: int | None) -> None:
    """Refuse a trial whose budget, restarts or probes it cannot honour.

    Args:
        config: the validated config.
        columns: one trial's canonical parameter columns.
        src: parameter (or trial key) -> where its value is written.
        budget: the trial's budget (``nodes``, ``seconds``, ``backtracks``).
        restarts: the trial's restart policy, or None.
        probes: the trial's probes, or None.

    Raises:
        ConfigError: see :func:`check_backtrack_budget`, :func:`check_restarts` and
            :func:`check_estimate`.
    """
    check_backtrack_budget(config, columns, src, budget.get("backtracks"))
    check_restarts(config, columns, src, budget, restarts)
    check_estimate(config, columns, src, probes, budget)


def honouring(config: SweepConfig, budget: str) -> tuple[str, ...]:
    """The strategies of the config's problem whose registry entry honours ``budget``
    (:attr:`btlab.experiments.registry.Strategy.budgets`), in registry order."""
    return tuple(name for name, entry in (config.problem.strategies or {}).items()
                 if budget in entry.budgets)


def _able(config: SweepConfig, columns: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The strategies of ``columns``' problem that honour a backtrack limit, or None when
    the trial's strategy does."""
    allowed = honouring(config, "backtracks")
    return None if columns.get("strategy") in allowed else allowed


def check_backtrack_budget(config: SweepConfig, columns: Mapping[str, Any],
                           src: Mapping[str, KeyPath], b: int | None = None) -> None:
    """Refuse a backtrack budget on a trial that cannot honour it.

    Args:
        config: the validated config.
        columns: one trial's canonical parameter columns.
        src: parameter -> where its value is written (for the message).
        b: the trial's backtrack budget (None: nothing to check).

    Raises:
        ConfigError: a backtrack budget with ``split``, with a problem none of whose
            strategies honours one, or with a strategy whose entry does not.
    """
    m = config.model
    if b is None:
        return
    where: KeyPath = (src[BUDGET] + ("backtracks",) if BUDGET in src
                      else ("budget", "backtracks"))
    if m.split is not None:
        raise config.error(where, "no backtrack budget in a split search (its subtree tasks "
                           "run in parallel and cannot share one)",
                           f"budget.backtracks: {b} with split", "drop split, or use "
                           "budget.nodes instead of budget.backtracks")
    allowed = honouring(config, "backtracks")
    if not allowed:
        raise config.error(where, "a backtrack budget only for a problem with a strategy "
                           "that honours one", f"budget.backtracks with problem "
                           f"{config.problem.name} (no strategy of it honours one)",
                           "drop budget.backtracks, or use budget.nodes")
    strategy = columns.get("strategy")
    if _able(config, columns) is not None:
        raise config.error(src.get("strategy", where),
                           f"a strategy that honours budget.backtracks: {', '.join(allowed)}",
                           f"strategy: {strategy}", "drop budget.backtracks, or pick one of "
                           f"{', '.join(allowed)}")


def check_restarts(config: SweepConfig, columns: Mapping[str, Any],
                   src: Mapping[str, KeyPath], budget: Mapping[str, Any],
                   restarts: Restarts | None) -> None:
    """Refuse restarts on a trial that cannot run them.

    Raises:
        ConfigError: restarts with a ``mode`` other than ``first``, with ``split``, on a
            trial whose search draws nothing from its seed (every attempt would walk
            the same tree), ``on: backtracks`` with a strategy that cannot honour a
            backtrack cut-off, or with neither ``max`` nor any trial budget, or with
            only a backtrack budget that the cut-off attempts may never spend
            (``unit: 0`` on backtracks; ``fixed`` node cut-offs no longer than a
            solution path): the trial could run for ever.
    """
    if restarts is None:
        return
    where = src.get(RESTARTS, (RESTARTS,))
    found = f"restarts: {restarts.label()}"
    mode = columns.get("mode")
    if mode is not None and mode != "first":
        raise config.error(src.get("mode", where), "mode: first with restarts (an attempt "
                           "stops at its first solution)", f"mode: {mode} with {found}",
                           "drop restarts, or set mode: first")
    if config.model.split is not None:
        raise config.error(where, "no restarts in a split search (its subtree tasks run "
                           "in parallel)", f"{found} with split", "drop split or restarts")
    seeded = config.problem.seeded
    if seeded is None or not seeded(columns):
        fix = ("set tie_break: random (with heuristic: none, a random move order at every "
               "placement)" if "tie_break" in columns else "drop restarts")
        raise config.error(where, "restarts on a trial whose search draws from its seed "
                           "(else every attempt walks the same tree)",
                           f"{found} on a trial that draws nothing from its seed "
                           f"({_describe(columns)})", fix)
    if restarts.on == "backtracks":
        allowed = _able(config, columns)
        if allowed is not None:
            strategy = columns.get("strategy")
            raise config.error(src.get("strategy", where), "a strategy that honours a "
                               f"backtrack cut-off: {', '.join(allowed) or 'none'}",
                               f"strategy: {strategy} with {found}",
                               f"set restarts.on: nodes, or pick one of {', '.join(allowed)}"
                               if allowed else "set restarts.on: nodes")
    if restarts.max is None and all(budget.get(k) is None for k in
                                    ("nodes", "seconds", "backtracks")):
        raise config.error(where, "restarts with max (the most attempts) or a trial budget "
                           "(budget.nodes, budget.backtracks or budget.seconds)",
                           f"{found} and no budget: the trial could run for ever",
                           "add max: 1000 to restarts, or a budget, e.g. budget: "
                           "{nodes: 10_000_000}")
    if restarts.max is None and budget.get("nodes") is None and budget.get("seconds") is None:
        why = _unspent_backtracks(config, columns, restarts)
        if why:
            raise config.error(where, "restarts with max, budget.nodes or budget.seconds "
                               "when budget.backtracks alone cannot stop the attempts",
                               f"{found} with only budget.backtracks: {why}, so the trial "
                               "could run for ever", "add max: 1000 to restarts, or a "
                               "budget.nodes or budget.seconds")


def _unspent_backtracks(config: SweepConfig, columns: Mapping[str, Any],
                        restarts: Restarts) -> str:
    """Why attempts cut off by ``restarts`` may never spend a backtrack ("" when each
    attempt the policy cuts off spends at least one): a cut-off of 0 backtracks
    (``unit: 0``), or ``fixed`` node cut-offs no longer than a solution path (an
    attempt may stop on its path before its first dead end)."""
    if restarts.on == "backtracks":
        return "each attempt is cut off at 0 backtracks" if restarts.unit == 0 else ""
    if restarts.policy != "fixed":
        return ""  # luby and geometric cut-offs grow past any path
    size = config.problem.size(columns) if config.problem.size is not None else None
    if size is not None and restarts.unit > size:
        return ""  # an attempt of more placements than a path holds has backtracked
    return (f"an attempt cut off at {restarts.unit:,} placements may not have backtracked "
            "yet")


def _describe(columns: Mapping[str, Any]) -> str:
    shown = [f"{k}: {columns[k]}" for k in ("heuristic", "tie_break") if k in columns]
    return ", ".join(shown) or "no random draw"


def check_estimate(config: SweepConfig, columns: Mapping[str, Any],
                   src: Mapping[str, KeyPath], probes: int | None,
                   budget: Mapping[str, Any] | None = None) -> None:
    """Refuse ``mode: estimate`` and ``probes`` where they cannot run.

    Args:
        budget: the trial's budget (``nodes``, ``seconds``, ``backtracks``), or None.

    Raises:
        ConfigError: ``mode: estimate`` for a problem without an estimator
            (:attr:`btlab.problems.spec.ProblemSpec.estimate`), without ``probes``, with
            ``split``, or with ``budget.backtracks`` (a probe never backtracks, so
            the budget would never stop the probes); ``probes`` with another mode.
    """
    mode = columns.get("mode")
    where = src.get("mode", ("fixed", "mode"))
    if mode != "estimate":
        if probes is not None:
            raise config.error(src.get(PROBES, (PROBES,)), "probes only with mode: estimate "
                               "(the random probes of the tree-size estimate)",
                               f"probes: {probes} with mode: {mode}",
                               "drop probes, or set mode: estimate")
        return
    if config.problem.estimate is None:
        raise config.error(where, f"a mode that problem {config.problem.name} runs: it has "
                           "no tree-size estimator", "mode: estimate",
                           "set mode: first or count")
    if probes is None:
        raise config.error(where, "probes: K (the random probes, K >= 1) with mode: estimate",
                           "mode: estimate without probes", "add probes: 1000 at the top "
                           "level (or in fixed or matrix)")
    if config.model.split is not None:
        raise config.error(("split",), "no split with mode: estimate (the probes are one "
                           "task)", "split with mode: estimate", "drop split")
    b = (budget or {}).get("backtracks")
    if b is not None:
        where = (src[BUDGET] + ("backtracks",) if BUDGET in src else ("budget", "backtracks"))
        raise config.error(where, "no backtrack budget with mode: estimate (a probe never "
                           "backtracks: the budget would never stop the probes)",
                           f"budget.backtracks: {b} with mode: estimate",
                           "use budget.nodes or budget.seconds to bound the probes")


def check_estimator(config: SweepConfig, columns: Mapping[str, Any],
                    src: Mapping[str, KeyPath], label: str | None,
                    probes: int | None = None) -> None:
    """Refuse an ``estimator`` where it cannot run (before the problem's own ``check``,
    which sees the estimator's label under ``"estimator"`` in ``mode: estimate``).

    Args:
        columns: one trial's canonical parameter columns.
        src: parameter (or trial key) -> where its value is written.
        label: the trial's estimator label (:func:`btlab.config.trial_keys.resolve`;
            ``knuth`` in ``mode: estimate`` when the config names none), or None.
        probes: the trial's probes, or None (for the fix of an estimator in another mode).

    Raises:
        ConfigError: an estimator with a mode other than ``estimate``; in ``mode:
            estimate``, a method the problem's estimate function does not run
            (:attr:`btlab.problems.spec.ProblemSpec.estimators`), naming
            ``estimator.method`` and listing the methods it has.
    """
    where = src.get(ESTIMATOR, (ESTIMATOR,))
    mode = columns.get("mode")
    if mode != "estimate":
        if label is not None:
            raise config.error(where, "estimator only with mode: estimate (how the random "
                               "probes of the tree-size estimate are drawn)",
                               f"estimator: {label} with mode: {mode}",
                               "drop estimator, or set mode: estimate" + (
                                   "" if probes is not None else " and add probes: 1000 at "
                                   "the top level"))
        return
    problem = config.problem
    if problem.estimate is None or label is None:
        return  # check_estimate refuses the mode itself
    method = label.split(" ", 1)[0]
    if method not in problem.estimators:
        able = problem.estimators
        fix = (f"write estimator: {able[0]}" + (" (or drop estimator: knuth is the default)"
                                                 if able[0] == KNUTH else "")
               if able else "drop mode: estimate")
        raise config.error(where + ("method",), "an estimator method that problem "
                           f"{problem.name} runs: {', '.join(able) or 'none'}",
                           f"method: {method} (estimator: {label})", fix)
