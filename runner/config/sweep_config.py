"""What a validated config is: :class:`SweepModel` (the file's keys and their bounds, the
budget's :class:`BudgetModel`) and :class:`SweepConfig` (the model, its problem, where each key
was written, errors at a key).

The types alone, under the modules that check a config's keys (:mod:`btlab.config.seeds`,
:mod:`btlab.config.trial_keys`) and the one that reads it (:mod:`btlab.config.model`, which
re-exports them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Mapping, Optional

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt

from btlab.config.restarts import RestartsModel
from btlab.config.yaml_positions import KeyPath, Position
from btlab.errors import ConfigError
from btlab.problems.spec import ProblemSpec

__all__ = ["INT32_MAX", "INT64_MAX", "INT64_MIN", "MAX_BUDGET_NODES", "MAX_BUDGET_SECONDS",
           "MAX_PROBES", "BudgetModel", "SweepConfig", "SweepModel", "located_error"]

#: Bounds of the numbers a config holds, from what each becomes: ``seed`` is an
#: int64 column, ``repeat`` an int32 column.
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
INT32_MAX = (1 << 31) - 1

#: ``budget.nodes`` is an int64 column and the solvers' node cap (2^62 stands for "no
#: limit" in their loops); ``budget.seconds`` a float64 column and the timers of every
#: backend (the Ray backend cancels a task after budget x 1.1 + 5 s, and the smallest
#: ``threading.TIMEOUT_MAX`` of the supported platforms is 4,294,967 s).
MAX_BUDGET_NODES = 1 << 62
MAX_BUDGET_SECONDS = 1_000_000.0
#: The most probes of one ``mode: estimate`` trial.
MAX_PROBES = 1 << 40


class BudgetModel(BaseModel):
    """``budget``: ``nodes`` (placements, 1..2^62), ``backtracks`` (0..2^62; 0 is greedy:
    the first dead end stops it; :mod:`btlab.config.budgets`) and ``seconds`` (wall time, > 0
    and at most :data:`MAX_BUDGET_SECONDS`, finite), each optional. Booleans and strings are
    refused (``seconds: true`` is not a 1-second budget); ``seconds: 60`` is 60.0."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    nodes: Optional[Annotated[StrictInt, Field(gt=0, le=MAX_BUDGET_NODES)]] = None
    backtracks: Optional[Annotated[StrictInt, Field(ge=0, le=MAX_BUDGET_NODES)]] = None
    seconds: Optional[Annotated[StrictFloat, Field(gt=0, le=MAX_BUDGET_SECONDS,
                                                   allow_inf_nan=False)]] = None


#: A whole number: YAML integers only (not true/false, not 3.0, not "3").
Int64 = Annotated[StrictInt, Field(ge=INT64_MIN, le=INT64_MAX)]


class SweepModel(BaseModel):
    """The top level of a config file."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$", max_length=100)]
    problem: str
    description: str = ""
    fixed: dict[str, Any] = {}
    matrix: dict[str, Any] = {}
    exclude: list[dict[str, Any]] = []
    include: list[dict[str, Any]] = []
    budget: BudgetModel = BudgetModel()
    #: restart policy of every trial (:mod:`btlab.config.restarts`), or none.
    restarts: Optional[RestartsModel] = None
    #: random probes of every ``mode: estimate`` trial, or none.
    probes: Optional[Annotated[StrictInt, Field(ge=1, le=MAX_PROBES)]] = None
    #: the estimator of every ``mode: estimate`` trial (``knuth``, or a mapping such as
    #: ``{method: importance, beta: 0.5}``; :mod:`btlab.experiments.estimators`), or none
    #: (``knuth``); checked by :func:`btlab.config.trial_keys.check_trial_keys`.
    estimator: Any = None
    repeats: Annotated[StrictInt, Field(ge=1, le=INT32_MAX)] = 1
    seed: Int64 = 0
    #: ``{depth: D}`` or ``auto``: split every trial into ordered subtree tasks
    #: (:mod:`btlab.experiments.split.subtrees`); the counters are those of the unsplit search.
    split: Any = None
    #: stop starting trials after this many rows of a run have status error (Ray Tune's
    #: ``max_failures``; ``btlab run --max-failures`` wins over it): a run's control, not
    #: a trial key, so no trial id changes with it.
    max_failures: Optional[Annotated[StrictInt, Field(ge=1, le=INT64_MAX)]] = None


@dataclass(frozen=True)
class SweepConfig:
    """A validated config.

    Attributes:
        model: the validated top-level values.
        problem: the problem spec.
        source: the file it came from (for messages).
        positions: key path -> (line, column), 1-based, of every key and value; a
            string for keys a command-line override set (the override, e.g.
            ``override 1 (seed=7)``).
        text: the YAML text as read (before any override).
        overrides: the command-line overrides applied, as typed
            (:mod:`btlab.config.overrides`); stored in every part's metadata.
    """

    model: SweepModel
    problem: ProblemSpec
    source: str
    positions: Mapping[KeyPath, Position | str]
    text: str
    overrides: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.model.name

    def error(self, path: KeyPath, expected: str, found: str, fix: str = "") -> ConfigError:
        """A :class:`ConfigError` at ``path`` (or the nearest enclosing key that has a position)."""
        probe = tuple(path)
        while probe and probe not in self.positions:
            probe = probe[:-1]
        return located_error(self.source, self.positions, probe, path, expected, found, fix)

    def expanded(self) -> dict[str, Any]:
        """The config as plain data (what goes into the Parquet metadata): every key, the
        defaults included (``max_failures`` only when set: it is no part of the answer;
        ``estimator`` only when set, so that a folder written before the key existed holds
        the config it is run with again)."""
        unset = {k for k in ("max_failures", "estimator") if getattr(self.model, k) is None}
        return self.model.model_dump(mode="json", exclude=unset or None)


def located_error(source: str, positions: Mapping[KeyPath, Position | str], probe: KeyPath,
                  path: KeyPath, expected: str, found: str, fix: str) -> ConfigError:
    """A ConfigError at ``path``, located where ``probe`` is (a line, or an override)."""
    pos = positions.get(probe, (None, None))
    if isinstance(pos, str):
        return ConfigError(source, None, None, tuple(path), expected, found, fix, where=pos)
    return ConfigError(source, pos[0], pos[1], tuple(path), expected, found, fix)
