"""Trial keys: ``budget``, ``restarts`` and ``probes`` where parameters are written.

Like ``seed`` (:mod:`btlab.config.seeds`), each is a top-level key, the default of
every trial, and may also be written in ``fixed`` (one value), ``matrix`` (a
list of values, each its own trial), ``include`` entries (one value) and
``exclude`` entries (a value or a list of alternatives, matched as written):

* ``budget``: a mapping of ``nodes``, ``backtracks``, ``seconds``, merged over
  the top-level ``budget``: the keys a combination's budget names replace
  the top-level ones (``null`` removes that limit), the others are kept. So
  with ``budget: {seconds: 60}`` on top, ``matrix: {budget: [{backtracks:
  0}, {nodes: 10_000_000}]}`` gives two trials, each with the 60 s limit.
* ``restarts``: a mapping (:class:`btlab.config.restarts.RestartsModel`), or
  ``null`` for no restarts (``restarts: [null, {policy: luby, unit: 1}]``
  compares both in one sweep).
* ``probes``: a whole number >= 1 (``mode: estimate``), or ``null``.
* ``estimator``: ``knuth`` (a method name), a mapping ``{method: importance,
  beta: 0.5}`` (:class:`btlab.experiments.estimators.Estimator`), or ``null``
  (``knuth`` in ``mode: estimate``); ``estimator: [knuth, {method: importance}]``
  in ``matrix`` compares both.

A trial's budget goes to the columns ``budget_nodes``, ``budget_seconds``,
``budget_backtracks``; its restarts to ``restarts`` (the policy's canonical
text), its probes to ``probes``, its estimator to ``estimator`` (the canonical
label, :meth:`~btlab.experiments.estimators.Estimator.label`). Each is part of the
trial id as before (``restarts`` and ``probes`` only when set, ``estimator`` only
when its method is not ``knuth``), wherever it was written.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from typing import Annotated, Any, Mapping

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError

from btlab.config.messages import describe, from_pydantic
from btlab.config.restarts import Restarts, RestartsModel
from btlab.config.seeds import SEED
from btlab.config.sweep_config import MAX_PROBES, BudgetModel, SweepConfig
from btlab.experiments.estimators import Estimator, EstimatorError

__all__ = ["BUDGET", "ESTIMATOR", "NEW_KEYS", "PROBES", "RESTARTS", "TRIAL_KEYS",
           "check_trial_keys", "estimator_of", "resolve", "restarts_of", "values_equal"]

BUDGET, RESTARTS, PROBES, ESTIMATOR = "budget", "restarts", "probes", "estimator"
#: The trial keys besides the seed.
NEW_KEYS = (BUDGET, RESTARTS, PROBES, ESTIMATOR)
#: Every key that may be written where parameters are without being a parameter.
TRIAL_KEYS = (SEED, *NEW_KEYS)

class _Probes(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    probes: Annotated[StrictInt, Field(ge=1, le=MAX_PROBES)]


_EXAMPLES = {BUDGET: "budget: {nodes: 1_000_000}",
             RESTARTS: "restarts: {policy: luby, unit: 1, on: backtracks, max: 1000}",
             PROBES: "probes: 1000", ESTIMATOR: "estimator: {method: importance, beta: 0.5}"}


def _check_value(config: SweepConfig, key: str, value: Any, path: tuple) -> None:
    """Check one value of a trial key written at ``path``.

    Raises:
        ConfigError: a value that is not a budget mapping, a restarts mapping (or
            null), a whole number of probes >= 1 (or null), or an estimator
            (:meth:`Estimator.from_value`, or null): at the key inside it that is wrong
            (``estimator.beta``), with the fix of :class:`EstimatorError`.
    """
    if key == ESTIMATOR:
        try:
            Estimator.from_value(value)
        except EstimatorError as exc:
            inner = (exc.key,) if exc.key and isinstance(value, Mapping) else ()
            raise config.error(path + inner, exc.expected, exc.found, exc.fix) from None
        return
    if key == BUDGET:
        if not isinstance(value, dict):
            raise config.error(path, "a budget mapping, merged over the top-level budget, "
                               "e.g. {backtracks: 0}", describe(value),
                               f"write e.g. {_EXAMPLES[BUDGET]}")
        model: type[BaseModel] = BudgetModel
    elif value is None:
        return
    elif key == RESTARTS:
        if not isinstance(value, dict):
            raise config.error(path, "a restarts mapping, or null for no restarts",
                               describe(value), f"write e.g. {_EXAMPLES[RESTARTS]}")
        model = RestartsModel
    else:
        model, value = _Probes, {PROBES: value}
    try:
        model.model_validate(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        if key == PROBES:  # the value itself, not a key inside it
            first = {**first, "loc": ()}
        raise from_pydantic(config.error, first, path, list(model.model_fields)) from None


def check_trial_keys(config: SweepConfig) -> None:
    """Check every ``budget``, ``restarts``, ``probes`` and ``estimator`` written among the
    parameters, and the top-level ``estimator`` (pydantic checks the other top-level ones).

    Raises:
        ConfigError: a bad value (see :func:`_check_value`), a matrix value that is
            not a non-empty list, a key in both ``fixed`` and ``matrix`` (checked
            with the parameters), or in ``exclude`` while in neither.
    """
    m = config.model
    if m.estimator is not None:
        _check_value(config, ESTIMATOR, m.estimator, (ESTIMATOR,))
    for key in NEW_KEYS:
        if key in m.fixed:
            _check_value(config, key, m.fixed[key], ("fixed", key))
        for i, entry in enumerate(m.include):
            if key in entry:
                _check_value(config, key, entry[key], ("include", i, key))
        for i, entry in enumerate(m.exclude):
            if key not in entry:
                continue
            if key not in m.matrix and key not in m.fixed:
                raise config.error(("exclude", i, key), "a key of matrix or fixed (exclude "
                                   "drops combinations of the matrix, before include)",
                                   f"{key!r}, which is in neither",
                                   f"drop {key} from the entry, or add it to matrix")
            value = entry[key]
            alts = value if isinstance(value, list) else [value]
            for j, alt in enumerate(alts):
                _check_value(config, key, alt, ("exclude", i, key) + (
                    (j,) if isinstance(value, list) else ()))
        if key not in m.matrix:
            continue
        values = m.matrix[key]
        if not isinstance(values, list):
            raise config.error(("matrix", key), f"a list of {key} values, each its own trial",
                               describe(values), f"write {key}: [{json.dumps(values)}], or "
                               f"move it to fixed or the top level")
        if not values:
            raise config.error(("matrix", key), "a non-empty list of values", "an empty list",
                               f"give at least one value, or delete matrix.{key}")
        for i, value in enumerate(values):
            _check_value(config, key, value, ("matrix", key, i))


def values_equal(key: str, a: Any, b: Any) -> bool:
    """Whether two written values of a trial key are the same (``exclude`` matching):
    mappings compare by their keys and values, whatever the order."""
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True,
                                                                     default=str)


_CACHE: dict[str, dict[str, Any]] = {}


def resolve(config: SweepConfig, params: dict[str, Any]) -> dict[str, Any]:
    """The trial keys of one combination, resolved and canonical (plain JSON values).

    Pops ``budget``, ``restarts``, ``probes`` and ``estimator`` from ``params`` (checked
    values, :func:`check_trial_keys`) and returns ``{"budget": {"nodes", "seconds",
    "backtracks"}, "restarts": policy fields or None, "probes": int or None,
    "estimator": label or None}``: the combination's budget merged over the top-level
    one, its restarts, probes and estimator (its canonical label,
    :meth:`~btlab.experiments.estimators.Estimator.label`) or the top-level ones.
    """
    m = config.model
    written = {k: params.pop(k) for k in NEW_KEYS if k in params}
    text = json.dumps([written, m.budget.model_dump(),
                       m.restarts.model_dump() if m.restarts is not None else None,
                       m.probes, m.estimator], sort_keys=True, default=str)
    hit = _CACHE.get(text)
    if hit is not None:
        return {k: (dict(v) if isinstance(v, dict) else v) for k, v in hit.items()}
    budget = m.budget.model_dump()
    if BUDGET in written:
        mine = BudgetModel.model_validate(written[BUDGET])
        budget.update({k: getattr(mine, k) for k in mine.model_fields_set})
    restarts_model = written[RESTARTS] if RESTARTS in written else m.restarts
    if isinstance(restarts_model, dict):
        restarts_model = RestartsModel.model_validate(restarts_model)
    restarts = (dataclasses.asdict(restarts_model.policy_of())
                if restarts_model is not None else None)
    probes = written[PROBES] if PROBES in written else m.probes
    estimator = written[ESTIMATOR] if ESTIMATOR in written else m.estimator
    out = {BUDGET: {"nodes": budget["nodes"], "seconds": budget["seconds"],
                    "backtracks": budget["backtracks"]}, RESTARTS: restarts, PROBES: probes,
           ESTIMATOR: None if estimator is None else Estimator.from_value(estimator).label()}
    if len(_CACHE) > 4096:
        _CACHE.clear()
    _CACHE[text] = out
    return {k: (dict(v) if isinstance(v, dict) else v) for k, v in out.items()}


def restarts_of(resolved: dict[str, Any]) -> Restarts | None:
    """The :class:`~btlab.config.restarts.Restarts` of :func:`resolve`'s ``restarts``, or None."""
    value = resolved.get(RESTARTS)
    return None if value is None else Restarts(**value)


def estimator_of(resolved: Mapping[str, Any]) -> Estimator | None:
    """The :class:`~btlab.experiments.estimators.Estimator` of :func:`resolve`'s
    ``estimator`` label, or None."""
    label = resolved.get(ESTIMATOR)
    return None if label is None else _from_label(label)


@functools.lru_cache(maxsize=256)
def _from_label(label: str) -> Estimator:
    return Estimator.from_label(label)
