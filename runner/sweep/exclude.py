"""How ``exclude`` values compare with the values of a combination, for
:func:`btlab.sweep.matrix.blocks`: a list that is one value of its parameter is that
value (not alternatives), and a value matches the same search however it is
written (:func:`same_search`)."""

from __future__ import annotations

from typing import Annotated, Any, Callable, Mapping

from pydantic import TypeAdapter, ValidationError

from btlab.config.model import SweepConfig
from btlab.config.seeds import SEED
from btlab.config.trial_keys import NEW_KEYS, TRIAL_KEYS, resolve, values_equal

__all__ = ["exclude_values", "same_search"]


def same_search(config: SweepConfig) -> Callable[[Mapping[str, Any], str, Any, Any], bool]:
    """``(combination, key, a, b) -> bool``: True when values ``a`` and ``b`` of ``key``
    give the combination the same canonical columns (``board: 5`` and ``[5, 5]``, the
    default ``move_order`` written out), so that ``exclude`` drops the same search
    however it is written. Two names are compared as written: ``tie_break: roth``
    and ``pohl`` are two values even where ``heuristic: none`` reads neither. A
    ``budget``, ``restarts`` or ``probes`` value matches the same resolved value
    (:func:`btlab.config.trial_keys.resolve`): ``{policy: fixed, unit: 5, max: 3}`` and the
    same with ``on: nodes`` written out, ``factor: 2`` and ``2.0``, ``{nodes: 5}`` and
    ``{nodes: 5, seconds: null}`` when no top-level budget sets seconds."""
    problem = config.problem

    def columns(params: Mapping[str, Any]) -> Any:
        plain = {k: v for k, v in params.items() if k not in TRIAL_KEYS}  # no parameters
        return problem.to_columns(problem.params.model_validate(plain).model_dump())

    def equal(params: Mapping[str, Any], key: str, a: Any, b: Any) -> bool:
        if key == SEED:
            return bool(a == b)  # seeds are compared as numbers: no two name one search
        if key in NEW_KEYS:
            if values_equal(key, a, b):
                return True
            try:
                return bool(resolve(config, {key: a})[key] == resolve(config, {key: b})[key])
            except Exception:  # noqa: BLE001 -- a value that does not validate matches none
                return False
        if isinstance(a, str) and isinstance(b, str):
            return a == b  # two names are two values (tie_break: roth is not pohl)
        try:
            return bool(columns({**params, key: a}) == columns({**params, key: b}))
        except Exception:  # noqa: BLE001 -- a value of another shape is not the same search
            return False
    return equal


def exclude_values(config: SweepConfig) -> list[dict[str, Any]]:
    """The ``exclude`` entries with every list that is one value of its parameter
    (``board: [5, 6]``, ``start: [0, 1]``) made a list of that one alternative, so that
    it drops that value only, never ``5`` and ``6`` as alternatives; other lists
    (``n: [13, 14]``) stay alternatives."""
    fields = config.problem.params.model_fields
    out = []
    for entry in config.model.exclude:
        fixed = dict(entry)
        for key, value in entry.items():
            if isinstance(value, list) and key in fields:
                info = fields[key]
                ann: Any = (Annotated[(info.annotation, *info.metadata)] if info.metadata
                            else info.annotation)
                try:
                    TypeAdapter(ann).validate_python(value)
                except ValidationError:
                    continue
                fixed[key] = [value]
        out.append(fixed)
    return out
