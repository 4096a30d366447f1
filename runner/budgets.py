"""Which trials may carry a backtrack budget (``budget: {backtracks: B}``).

A backtrack budget stops a search when its backtracks reach B (status
``backtrack_limit``, censored); B = 0 is greedy: the first dead end stops it.
The solvers that honour it are the depth-first searches whose backtracks are
counted one at a time in tree order: the knight's tour's ``recursive`` and
``iterative`` strategies (and the compiled engine), and N-Queens'
``recursive``, ``iterative`` and ``bitmask`` (and the compiled engine). A
split search cannot honour one: its subtree tasks run in parallel.
"""

from __future__ import annotations

from typing import Any, Mapping

from .config import SweepConfig
from .yaml_source import KeyPath

__all__ = ["BACKTRACK_STRATEGIES", "check_backtrack_budget"]

#: problem -> the strategies that honour a backtrack budget.
BACKTRACK_STRATEGIES: dict[str, tuple[str, ...]] = {
    "knights_tour": ("recursive", "iterative"),
    "n_queens": ("recursive", "iterative", "bitmask"),
}


def check_backtrack_budget(config: SweepConfig, columns: Mapping[str, Any],
                           src: Mapping[str, KeyPath]) -> None:
    """Refuse a backtrack budget on a trial that cannot honour it.

    Args:
        config: the validated config (its ``budget.backtracks`` may be None: nothing to check).
        columns: one trial's canonical parameter columns.
        src: parameter -> where its value is written (for the message).

    Raises:
        ConfigError: a backtrack budget with ``split``, with a problem other than
            those of :data:`BACKTRACK_STRATEGIES`, or with a strategy they do not list.
    """
    m = config.model
    b = m.budget.backtracks
    if b is None:
        return
    where: KeyPath = ("budget", "backtracks")
    if m.split is not None:
        raise config.error(where, "no backtrack budget in a split search (its subtree tasks "
                           "run in parallel and cannot share one)",
                           f"budget.backtracks: {b} with split", "drop split, or use "
                           "budget.nodes instead of budget.backtracks")
    allowed = BACKTRACK_STRATEGIES.get(config.problem.name)
    if allowed is None:
        raise config.error(where, "a backtrack budget only for the problems "
                           f"{', '.join(BACKTRACK_STRATEGIES)}",
                           f"budget.backtracks with problem {config.problem.name}",
                           "drop budget.backtracks, or use budget.nodes")
    strategy = columns.get("strategy")
    if columns.get("engine") != "compiled" and strategy not in allowed:
        raise config.error(src.get("strategy", where),
                           f"a strategy that honours budget.backtracks: {', '.join(allowed)}",
                           f"strategy: {strategy}", "drop budget.backtracks, or pick one of "
                           f"{', '.join(allowed)}")
