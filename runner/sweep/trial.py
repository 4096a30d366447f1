"""One trial: a problem, its canonical parameters, budget, seed and repeat, and its id."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Mapping

from btlab.config.restarts import Restarts
from btlab.experiments.estimators import KNUTH, Estimator

#: Parameters that choose how a tree is walked, not which tree.
WALK_PARAMETERS = frozenset({"strategy", "engine"})


def digest(obj: Any) -> str:
    """blake2b (32 hex digits) of ``obj`` as canonical JSON (sorted keys, tuples as lists)."""
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=list)
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


@dataclass(frozen=True)
class Trial:
    """One search to run: a problem, its canonical parameters, budget, seed, repeat.

    Attributes:
        problem: the problem name (``knights_tour``, ``n_queens``, or a
            plug-in's ``module:ATTR``).
        columns: the canonical parameters, one Parquet column each.
        budget_nodes, budget_seconds: the budgets (None: no limit).
        budget_backtracks: the backtrack budget (None: no limit; 0 allowed);
            part of the trial id only when set, so trials without it keep
            their ids.
        seed: the trial's seed: the config's top-level ``seed``, or the one
            ``matrix``, ``fixed`` or ``include`` gives it (:mod:`btlab.config.seeds`).
        repeat: 0-based repeat index (timing repeats; counters must not change).
        split: split depth (an int), ``"auto"``, or None (not split). Not part
            of the trial id: a split trial reports exactly the counters of the
            unsplit one.
        plugins: ``{"module:attr": source hash}`` of the plug-ins the trial
            runs (:mod:`btlab.problems.plugins`); part of the trial id when not empty,
            so an edited plug-in never passes for trials already finished.
            Trials that use only built-ins have the same ids as before
            plug-ins existed.
        restarts: the restart policy (:mod:`btlab.config.restarts`), or None; part of the
            trial id (as its :meth:`~btlab.config.restarts.Restarts.label`) only when set.
        probes: the random probes of ``mode: estimate``, or None; part of the
            trial id only when set.
        estimator: the estimator of ``mode: estimate``
            (:mod:`btlab.experiments.estimators`; ``knuth`` when the config names
            none), None in the other modes; part of the trial id (as its
            :meth:`~btlab.experiments.estimators.Estimator.label`) only when its method
            is not ``knuth``, so ``knuth`` written or left out keeps the ids of the
            trials made before the key existed.
        trial_id: stable hash of all of the above but ``split`` (16 hex digits).
        solver_seed: seed handed to the solver (the ``random`` tie-break): a
            hash of the trial's seed and the parameters that shape the search
            tree -- not ``strategy`` or ``engine``, nor the budget or repeat --
            so it is the same on every repeat, machine, strategy and engine.
    """

    problem: str
    columns: Mapping[str, Any]
    budget_nodes: int | None
    budget_seconds: float | None
    seed: int
    repeat: int
    trial_id: str = field(default="", compare=False)
    solver_seed: int = field(default=0, compare=False)
    split: int | str | None = field(default=None, compare=False)
    plugins: Mapping[str, str] = field(default_factory=dict, compare=False)
    budget_backtracks: int | None = None
    restarts: Restarts | None = None
    probes: int | None = None
    estimator: Estimator | None = None

    def __post_init__(self) -> None:
        key: dict[str, Any] = {"problem": self.problem, "params": dict(self.columns),
                               "budget_nodes": self.budget_nodes,
                               "budget_seconds": self.budget_seconds, "seed": self.seed}
        if self.budget_backtracks is not None:
            key["budget_backtracks"] = self.budget_backtracks
        if self.restarts is not None:
            key["restarts"] = self.restarts.label()
        if self.probes is not None:
            key["probes"] = self.probes
        if self.estimator is not None and self.estimator.method != KNUTH:
            key["estimator"] = self.estimator.label()
        if self.plugins:
            key["plugins"] = dict(self.plugins)
        tree = {k: v for k, v in self.columns.items() if k not in WALK_PARAMETERS}
        tree_digest = digest({"problem": self.problem, "params": tree, "seed": self.seed})
        object.__setattr__(self, "solver_seed", int(tree_digest[:16], 16))
        object.__setattr__(self, "trial_id", digest({**key, "repeat": self.repeat})[:16])

    def problem_columns(self) -> Mapping[str, Any]:
        """What the problem's functions (``check``, ``kernels``, ``prepare``,
        ``estimate``) get of this trial: its parameter columns and, in ``mode:
        estimate``, its estimator's label under ``"estimator"``."""
        if self.estimator is None:
            return self.columns
        return {**self.columns, "estimator": self.estimator.label()}
