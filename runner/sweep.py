"""Sweep expansion: a validated config -> its trials, GitHub-Actions-style matrix semantics.

:func:`expand` is a pure function of the config; :func:`iter_trials` walks the
same trials lazily (a sweep of millions never sits in memory). Every distinct
combination is checked (the problem spec's strategy caps and checks, split
support, plug-in hashes) as it is produced.
"""

from __future__ import annotations

import itertools
import json
import math
from typing import Any, Iterator, Mapping

from . import plugins
from .config import DEFAULT_TRIAL_CAP, SweepConfig
from .spec import ParamError
from .trial import Trial

__all__ = ["check_trial_cap", "count_trials", "expand", "iter_trials", "product_size"]


def _combinations(config: SweepConfig) -> Iterator[tuple[dict, dict]]:
    """Yield (parameters, sources) for every trial before ``all`` is expanded.

    GitHub Actions semantics: the product of the matrix lists; ``exclude``
    drops every combination that matches all of an entry's keys (an entry's
    value may also be a list of alternatives, ``n: [13, 14]``); an
    ``include`` entry extends each combination whose matrix values it does not
    contradict, and is added as a combination of its own when it extends none.

    A generator: the product is walked lazily, so counting or expanding a
    large sweep never holds more than one product combination (plus the few
    combinations ``include`` adds) in memory.
    """
    m = config.model
    keys = list(m.matrix)
    lists = [m.matrix[k] if isinstance(m.matrix[k], list) else [m.matrix[k]] for k in keys]
    fixed_src: dict[str, tuple] = {k: ("fixed", k) for k in m.fixed}
    matched = [False] * len(m.include)

    def extend(params: dict, src: dict, j: int, entry: dict) -> bool:
        if not all(params.get(k) == v for k, v in entry.items() if k in m.matrix):
            return False
        for k, v in entry.items():
            if k not in m.matrix:
                params[k] = v
                src[k] = ("include", j, k)
        return True

    for idx in itertools.product(*(range(len(v)) for v in lists)):
        params = dict(m.fixed)
        src = dict(fixed_src)
        for k, v, i in zip(keys, lists, idx):
            params[k] = v[i]
            src[k] = ("matrix", k, i) if isinstance(m.matrix[k], list) else ("matrix", k)
        for j, entry in enumerate(m.include):
            matched[j] = extend(params, src, j, entry) or matched[j]
        yield params, src
    # include entries that extended no product combination become combinations of
    # their own; a later entry may extend those, as it would any combination
    added: list[tuple[dict, dict]] = []
    for j, entry in enumerate(m.include):
        for params, src in added:
            matched[j] = extend(params, src, j, entry) or matched[j]
        if not matched[j]:
            added.append(({**m.fixed, **entry},
                          {**fixed_src, **{k: ("include", j, k) for k in entry}}))
    yield from added


def _excluded(config: SweepConfig, params: Mapping[str, Any]) -> bool:
    """True when every key of some ``exclude`` entry matches: equal to its value, or to one
    of its values when it is a list of alternatives (``n: [13, 14]``)."""
    for entry in config.model.exclude:
        if all(_same(params.get(k), v) or (isinstance(v, list) and
                                            any(_same(params.get(k), x) for x in v))
               for k, v in entry.items()):
            return True
    return False


def _same(a: Any, b: Any) -> bool:
    norm = lambda x: json.dumps(x, default=list)  # noqa: E731 - lists and tuples compare equal
    return norm(a) == norm(b)


def iter_trials(config: SweepConfig) -> Iterator[Trial]:
    """Yield the trials of a config in sweep order, checking each distinct one.

    Raises:
        ConfigError: a combination that cannot be run (a start off the board,
            a board too large for the strategy), naming the key it came from.
    """
    m = config.model
    problem = config.problem
    budget = m.budget
    seen: set = set()
    hashes: dict[str, str] = {}
    for params, src in _combinations(config):
        key, variants = None, [None]
        for name, values_of in problem.expand_all.items():
            if params.get(name) == "all":
                key, variants = name, values_of(params)
                break
        for value in variants:
            p = params if key is None else {**params, key: value}
            if _excluded(config, p):
                continue
            columns = problem.to_columns(problem.params.model_validate(p).model_dump())
            frozen = json.dumps(columns, sort_keys=True)
            if frozen in seen:
                continue
            seen.add(frozen)
            try:
                problem.check_strategy(columns)
                problem.check(columns)
            except ParamError as exc:
                raise config.error(src.get(exc.param, ("fixed",)), exc.expected, exc.found,
                                   exc.fix) from None
            split = None
            if m.split is not None:
                split = m.split if isinstance(m.split, str) else m.split["depth"]
                if problem.split is None:
                    raise config.error(("split",), f"no split: problem {problem.name} "
                                       "defines no split support", f"split: {m.split}",
                                       "drop split")
                try:
                    problem.split.check(columns)
                except ParamError as exc:
                    raise config.error(("split",), exc.expected, exc.found, exc.fix) from None
            used = dict(problem.plugins(columns)) if problem.plugins else {}
            if plugins.is_ref(problem.name):
                used["problem"] = problem.name
            for param, ref in used.items():
                if ref not in hashes:
                    try:
                        hashes[ref] = plugins.source_hash(ref)
                    except plugins.PluginError as exc:
                        raise config.error(src.get(param, ("problem",)), exc.expected,
                                           exc.found, exc.fix) from None
            trial_plugins = {ref: hashes[ref] for ref in used.values()}
            for r in range(m.repeats):
                yield Trial(problem.name, columns, budget.nodes, budget.seconds, m.seed, r,
                            split=split, plugins=trial_plugins)


def expand(config: SweepConfig) -> list[Trial]:
    """All trials of a config, in sweep order (a pure function of the config).

    Returns:
        One :class:`Trial` per parameter combination and repeat; duplicates
        (the same canonical parameters reached twice) appear once.

    Raises:
        ConfigError: see :func:`iter_trials`.
    """
    return list(iter_trials(config))


def product_size(config: SweepConfig) -> int:
    """Combinations of the matrix lists, times repeats, before ``all``, ``exclude`` and
    ``include``: plain arithmetic, instant however large the sweep. Every ``all``
    stands for at least one value, so this is a lower bound of :func:`count_trials`
    when there is no ``exclude``."""
    lists = [len(v) if isinstance(v, list) else 1 for v in config.model.matrix.values()]
    return math.prod(lists) * config.model.repeats


def count_trials(config: SweepConfig, limit: int | None = None) -> int:
    """Number of trials :func:`expand` would give, without building them (an upper bound
    when ``exclude`` or duplicates remove some).

    Args:
        limit: stop counting once the count passes ``limit`` and return what was
            counted so far (more than ``limit``): enough to refuse a sweep over a
            cap without walking all of it.
    """
    repeats = config.model.repeats
    total = 0
    for params, _ in _combinations(config):
        n = 1
        for key, values_of in config.problem.expand_all.items():
            if params.get(key) == "all":
                n = len(values_of(params))
        total += n * repeats
        if limit is not None and total > limit:
            break
    return total


def check_trial_cap(config: SweepConfig, cap: int = DEFAULT_TRIAL_CAP) -> int:
    """Refuse a sweep of more than ``cap`` trials (the CLI's ``--yes`` skips this check).

    The product of the matrix lists is checked first, by arithmetic, so a sweep
    of 10^8 trials is refused at once without walking it; otherwise the
    combinations are counted up to the cap.

    Returns:
        The number of trials (an upper bound, see :func:`count_trials`).

    Raises:
        ConfigError: at ``matrix``, when there are more than ``cap`` trials.
    """
    quick = product_size(config) if not config.model.exclude else 0
    planned = quick if quick > cap else count_trials(config, limit=cap)
    if planned > cap:
        # blame repeats when they alone take the sweep over the cap
        where = ("repeats",) if planned // config.model.repeats <= cap else ("matrix",)
        found = (f"{planned:,} trials (the matrix lists multiplied, times repeats)"
                 if planned == quick else f"more than {cap:,} trials")
        raise config.error(
            where, f"at most {cap:,} trials per run", found,
            "shrink the sweep (fewer values, or split it into several configs), "
            "or pass --yes to run it anyway")
    return planned
