"""Sweep expansion: a validated config -> its trials, GitHub-Actions-style matrix semantics.

:func:`expand` is a pure function of the config; :func:`iter_trials` walks the
same trials lazily (a sweep of millions never sits in memory). Every distinct
combination is checked (the problem spec's strategy caps and checks, split
support, plug-in hashes) as it is produced. The matrix rules (GitHub
Actions': exclude first, then include) are :mod:`btlab.sweep.matrix`'s;
:func:`count_trials` counts the same trials by arithmetic.
"""

from __future__ import annotations

import json
import math
from typing import Any, Iterator, Mapping, Sequence

import pyarrow as pa
from pydantic import ValidationError

from btlab.config.budgets import check_estimator, check_trial_budget
from btlab.config.messages import add_param_fix, describe
from btlab.config.model import DEFAULT_TRIAL_CAP, SweepConfig
from btlab.config.seeds import (
    SEED,
    named_seeds,
    seed_count,
    seed_values,
    seedless,
    swept_seeds,
    with_seeds,
)
from btlab.config.trial_keys import (
    BUDGET,
    ESTIMATOR,
    NEW_KEYS,
    PROBES,
    TRIAL_KEYS,
    estimator_of,
    resolve,
    restarts_of,
)
from btlab.config.yaml_positions import KeyPath
from btlab.experiments.estimators import KNUTH
from btlab.problems import plugins
from btlab.problems.spec import ParamError
from btlab.sweep.exclude import exclude_values, same_search
from btlab.sweep.matrix import Block, ExpansionError, blocks, find
from btlab.sweep.trial import Trial

__all__ = ["EXACT_COUNT_BLOCKS", "check_blocks", "check_trial_cap", "count_trials", "expand",
           "iter_trials", "plan_size", "product_size"]


#: A sweep of at most this many blocks (the matrix lists multiplied, an ``all``
#: counted once) is counted exactly by :func:`plan_size` whatever its size: a
#: block is counted by arithmetic, in about 0.1 ms.
EXACT_COUNT_BLOCKS = 10_000


def _blocks(config: SweepConfig) -> Iterator[Block]:
    """The blocks of a config's sweep (:func:`btlab.sweep.matrix.blocks`), or a ConfigError."""
    m = config.model
    matrix = dict(m.matrix)
    if SEED in matrix:  # seed: A..B stands for the list of its seeds
        matrix[SEED] = seed_values(matrix[SEED])
    try:
        yield from blocks(m.fixed, matrix, exclude_values(config), m.include,
                          config.problem.expand_all, same_search(config))
    except ExpansionError as exc:
        if exc.extends:
            raise config.error(("include", exc.entry, exc.key), f"one value of {exc.key} in an "
                               "include entry that extends combinations of the matrix (all "
                               "stands for every value, which only matrix or fixed can sweep)",
                               f"{exc.key}: all", f"sweep it in matrix ({exc.key}: all), or "
                               f"give one value, e.g. {exc.key}: [0, 0]") from None
        if exc.entry is not None:
            raise config.error(("include", exc.entry), f"{exc.key}: all with the parameters "
                               "it depends on, in this include entry or in fixed (the entry "
                               "extends no matrix combination, so it is a trial of its own)",
                               f"no {exc.missing}", add_param_fix(config.problem.params,
                                                                   exc.missing.strip(chr(39)),
                                                                   "to the entry")) from None
        where = ("matrix", exc.key) if exc.key in m.matrix else ("fixed", exc.key)
        raise config.error(where, f"{exc.key}: all with the parameters it depends on "
                           "in fixed or matrix", f"no {exc.missing} there",
                           add_param_fix(config.problem.params, exc.missing.strip(chr(39)),
                                         "under fixed or matrix")) from None


def _columns(config: SweepConfig, block: Block, params: dict) -> dict[str, Any]:
    """Canonical columns of one combination; a combination an include entry made on its
    own may lack a required parameter (a ConfigError at that entry). A seed written
    among the parameters (:mod:`btlab.config.seeds`) is returned under ``seed``; the trial's
    budget, restarts, probes and estimator, resolved (:func:`btlab.config.trial_keys.resolve`),
    under ``budget``, ``restarts``, ``probes`` and ``estimator`` (``knuth`` in ``mode:
    estimate`` when none is written, so that knuth written or left out is one trial)."""
    problem = config.problem
    params = dict(params)
    seed = params.pop(SEED, None)
    keys = resolve(config, params)
    try:
        columns = problem.to_columns(problem.params.model_validate(params).model_dump())
        _spec_columns(config, columns)
        columns.update(keys)
        if columns.get("mode") == "estimate" and columns[ESTIMATOR] is None:
            columns[ESTIMATOR] = KNUTH
        return columns if seed is None else {**columns, SEED: seed}
    except ValidationError as exc:
        err = exc.errors()[0]
        name = err["loc"][0] if err["loc"] else "?"
        if block.added is not None:
            raise config.error(("include", block.added), f"the parameter {name!r} in this "
                               "include entry or in fixed (the entry extends no matrix "
                               "combination, so it is a trial of its own)",
                               f"{describe(params)}: {err['msg']}",
                               add_param_fix(problem.params, str(name), "to the entry, or make "
                                             "it match a combination")) from None
        raise config.error(("fixed", name), f"the parameter {name!r} in fixed or matrix, or in "
                           "an include entry that extends every combination",
                           f"the combination {describe(params)} without it",
                           add_param_fix(problem.params, str(name))) from None


def _spec_columns(config: SweepConfig, columns: dict[str, Any]) -> None:
    """Refuse what ``to_columns`` returned unless its keys are the spec's ``columns``: a
    key beside them would land on a column btlab writes itself (``trial_id``)."""
    names = config.problem.columns.names
    if list(columns) != list(names) and set(columns) != set(names):
        extra = [k for k in columns if k not in names]
        missing = [k for k in names if k not in columns]
        raise config.error(("problem",), f"{config.problem.name}'s to_columns to return "
                           f"its columns: {', '.join(names)}",
                           f"{'the key ' + repr(extra[0]) if extra else 'no ' + repr(missing[0])}"
                           f" in {sorted(columns)}", "make to_columns return exactly the "
                           "names of the spec's columns schema")


def _int_ranges(schema: pa.Schema) -> dict[str, tuple[int, int, str]]:
    """Integer column -> (lowest, highest, type) it can hold."""
    out = {}
    for f in schema:
        if pa.types.is_integer(f.type):
            bits = f.type.bit_width
            lo, hi = ((-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if pa.types.is_signed_integer(
                f.type) else (0, (1 << bits) - 1))
            out[f.name] = (lo, hi, str(f.type))
    return out


def _check_ranges(config: SweepConfig, ranges: dict, columns: dict, src: dict) -> None:
    """Refuse a parameter column value its Parquet column cannot hold (a plug-in
    problem's unbounded parameter; the built-in ones bound theirs in their models)."""
    for name, (lo, hi, kind) in ranges.items():
        value = columns.get(name)
        if isinstance(value, int) and not lo <= value <= hi:
            raise config.error(src.get(name, ("fixed",)),
                               f"a value from {lo:,} to {hi:,} (column {name} is {kind})",
                               f"{name} = {value:,}", "use a smaller value")


def iter_trials(config: SweepConfig,
                plugin_hashes: Mapping[str, str] | None = None) -> Iterator[Trial]:
    """Yield the trials of a config in sweep order, checking each distinct one.

    ``plugin_hashes``: plug-in source hashes to use instead of hashing the plug-in
    files as they are now (the hashes a run stored with its config, so that the
    trial ids are that run's).

    Raises:
        ConfigError: a combination that cannot be run (a start off the board,
            a board too large for the strategy), naming the key it came from.
    """
    m = config.model
    problem = config.problem
    seen: set = set()
    hashes: dict[str, str] = dict(plugin_hashes or {})
    ranges = _int_ranges(problem.columns)
    first = _FirstOfSeed(config)
    for block in _blocks(config):
        for p, src in block.combinations(m.include):
            columns = _columns(config, block, p)
            ordinary = first.ordinary(block, p, columns, src)
            if ordinary is not None:
                if not ordinary:
                    continue
            else:
                frozen = json.dumps(columns, sort_keys=True)
                if frozen in seen:
                    continue
                seen.add(frozen)
            split, trial_plugins = _check_one(config, columns, src, ranges, hashes)
            seed = columns.pop(SEED, m.seed)
            keys = {k: columns.pop(k) for k in NEW_KEYS}
            budget, restarts = keys[BUDGET], restarts_of(keys)
            for r in range(m.repeats):
                yield Trial(problem.name, columns, budget["nodes"], budget["seconds"], seed, r,
                            split=split, plugins=trial_plugins,
                            budget_backtracks=budget["backtracks"], restarts=restarts,
                            probes=keys[PROBES], estimator=estimator_of(keys))


class _FirstOfSeed:
    """Which combinations of a swept seed are the first of their trial, in memory that
    does not grow with the seeds (a set of every combination seen would hold one entry
    per seed: 1..200000 is 200,000 entries).

    An *ordinary* seed of ``matrix.seed`` (one that no ``exclude`` or ``include`` entry
    names, nor the top level: :func:`btlab.config.seeds.named_seeds`) gives the same
    combinations as every other ordinary seed, in the same order, but for the seed. So a
    combination of an ordinary seed repeats an earlier one of the same seed exactly
    when another place in the sweep (its parameters as written, the seed apart) gave
    the same trial first: one entry per trial of one seed, whatever the range.
    """

    def __init__(self, config: SweepConfig):
        m = config.model
        self.named = named_seeds(config) if SEED in m.matrix else None
        self.first: dict[str, str] = {}  # seedless columns -> the place that made them first

    def ordinary(self, block: Block, params: dict, columns: dict, src: dict) -> bool | None:
        """None: not a combination of an ordinary seed (a set of those seen decides);
        else whether it is the first of its trial."""
        seed = columns.get(SEED)
        if (self.named is None or block.added is not None or seed is None
                or seed in self.named or src.get(SEED, ("",))[0] != "matrix"):
            return None
        rest = _json({k: v for k, v in columns.items() if k != SEED})
        place = _json({k: v for k, v in params.items() if k != SEED})  # as written
        return self.first.setdefault(rest, place) == place


def _check_one(config: SweepConfig, columns: dict, src: dict, ranges: dict,
               hashes: dict[str, str]) -> tuple[Any, dict[str, str]]:
    """Check one combination's canonical ``columns`` (``src``: where each value is
    written); ``hashes`` caches plug-in source hashes. Returns (split, plug-ins).

    Raises:
        ConfigError: a combination that cannot be run, naming the key it came from.
    """
    m = config.model
    problem = config.problem
    keys = {k: columns[k] for k in NEW_KEYS}
    columns = {k: v for k, v in columns.items() if k not in TRIAL_KEYS}
    _check_ranges(config, ranges, columns, src)
    label = keys[ESTIMATOR]
    check_estimator(config, columns, src, label, keys[PROBES])
    try:
        problem.check_strategy(columns)
        problem.check(columns if label is None else {**columns, ESTIMATOR: label})
    except ParamError as exc:
        raise config.error(_param_path(src, exc.param), exc.expected, exc.found,
                           exc.fix) from None
    check_trial_budget(config, columns, src, keys[BUDGET], restarts_of(keys), keys[PROBES])
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
    return split, trial_plugins


def _param_path(src: Mapping[str, KeyPath], param: str) -> KeyPath:
    """Where the key a :class:`ParamError` names is written: a parameter, or a key inside
    the ``estimator`` (``estimator.beta``: the estimator's place, then ``beta``)."""
    head, _, tail = param.partition(".")
    if head == ESTIMATOR:
        return tuple(src.get(ESTIMATOR, (ESTIMATOR,))) + ((tail,) if tail else ())
    return src.get(param, ("fixed",))


def check_blocks(config: SweepConfig, limit: int = EXACT_COUNT_BLOCKS) -> bool:
    """Check a sweep too large to walk, one combination per block: the first value
    of each ``all`` (every value of one board is a square of it) and each value an
    include entry extends, as :func:`iter_trials` checks them. A board too large
    for its strategy, or ``n`` over 64 on the compiled engine, is found however far
    into the sweep it sits.

    Returns:
        True when every block was checked; False when there are more than
        ``limit`` blocks (the first ``limit`` were).

    Raises:
        ConfigError: see :func:`iter_trials`.
    """
    if swept_seeds(config) is not None:  # a seed makes no trial unrunnable: check one
        config = seedless(config)
    else:  # seeds named in entries: those, and two others, stand for every seed
        config = _few_seeds(config) or config
    include = config.model.include
    hashes: dict[str, str] = {}
    ranges = _int_ranges(config.problem.columns)
    for n, block in enumerate(b for b in _blocks(config) if len(b)):
        if n == limit:
            return False
        first = next(i for i in range(len(block.values)) if i not in block.dropped)
        for i in sorted({first, *block.var_ext}):
            params, src = block.at(i, include)
            _check_one(config, _columns(config, block, params), src, ranges, hashes)
    return True


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
    """The matrix lists multiplied (each value written twice counted once), times
    repeats, with each ``all`` counted as one value: plain arithmetic, instant
    however large the sweep. Without ``exclude`` this is a lower bound of
    :func:`count_trials` (an ``all`` stands for at least one value, an ``include``
    entry adds or extends), unless values written differently name the same search
    (``board: 5`` and ``[5, 5]``, see the problem's ``to_columns``)."""
    lists = [len({json.dumps(x, sort_keys=True, default=list) for x in v})
             if isinstance(v, list) else 1 for k, v in config.model.matrix.items()
             if k != SEED]
    if SEED in config.model.matrix:  # a range counts its seeds by arithmetic
        lists.append(seed_count(seed_values(config.model.matrix[SEED]) or ()))
    return math.prod(lists) * config.model.repeats


def _json(columns: dict[str, Any]) -> str:
    return json.dumps(columns, sort_keys=True, default=str)


class _Group:
    """Keyed blocks (:class:`btlab.sweep.matrix.Block`) whose plain combinations are the same
    trials: the same canonical parameters apart from the ``all`` one, and the same
    ``all`` values. Their union is counted without listing it: a value is a trial
    unless every block dropped it (or extended it into another trial), plus the
    distinct extended trials.

    Attributes:
        block: the first block of the group (to compute its combinations).
        n: how many values ``all`` stands for.
        missing: indices not plain in any block so far (None: no block yet).
        extended: (index, canonical columns) of the trials include entries made of
            single values.
    """

    def __init__(self, block: Block):
        self.block, self.n = block, len(block.values)
        self.missing: set[int] | None = None
        self.extended: set[tuple[int, str]] = set()

    def __len__(self) -> int:
        if self.missing is None:
            return 0
        return self.n - len(self.missing) + len(self.extended)

    def add(self, config: SweepConfig, block: Block) -> None:
        gone = set(block.dropped)
        for i in block.var_ext:
            extended = _json(_value_columns(config, block, i, True))
            if extended == _json(_value_columns(config, block, i, False)):
                continue  # the entry changed nothing the trial is made of
            gone.add(i)
            self.extended.add((i, extended))
        self.missing = gone if self.missing is None else self.missing & gone

    def holds(self, config: SweepConfig, key: str, value: Any, columns: str) -> bool:
        """True when the single combination of these ``columns`` is one of the group's."""
        i = find(self.block.values, value)
        if i is None:
            return False
        if (i, columns) in self.extended:
            return True
        return (i not in (self.missing or ())
                and _json(_value_columns(config, self.block, i, False)) == columns)


def _value_columns(config: SweepConfig, block: Block, i: int, extended: bool) -> dict:
    """Canonical columns of value ``i`` of a keyed block, with the include entries that
    extend every value, and (``extended``) those that extend this value only."""
    entries = sorted(block.ext + (block.var_ext.get(i, []) if extended else []))
    params, _ = block.at(i, config.model.include, entries)
    return _columns(config, block, params)


def count_trials(config: SweepConfig, limit: int | None = None) -> int:
    """Number of trials :func:`expand` gives, counted without making them.

    A block of combinations (:class:`btlab.sweep.matrix.Block`: the values of an
    ``all``, what ``exclude`` dropped, what ``include`` extended) is counted by
    arithmetic; blocks and combinations that are the same trials (``board: 5``
    and ``board: [5, 5]``, a value listed twice, parameters that name the same
    search, see the problem's ``to_columns``) are counted once. The count equals
    ``len(expand(config))``; it costs one parameter validation per block (and per
    value an include entry names), not one per trial.

    Args:
        limit: stop once the count passes ``limit`` and return what was counted so
            far (more than ``limit``): enough to refuse a sweep over a cap.
    """
    return _count(config, limit)[0]


def _count(config: SweepConfig, limit: int | None) -> tuple[int, bool]:
    """(count, complete): complete is False when counting stopped past ``limit``."""
    problem = config.problem
    groups: dict[str, _Group] = {}
    singles: dict[str, dict] = {}
    walk = (b for b in _blocks(config) if len(b))
    total, stopped = 0, False
    for block in walk:
        if block.key is None:
            params, _ = next(block.combinations(config.model.include))
            columns = _json(_columns(config, block, params))
            if columns not in singles:
                singles[columns] = params
                total += 1
        else:
            base = (_json(_value_columns(config, block, 0, False))
                    + f"|{block.key}|{len(block.values)}")
            group = groups.get(base)
            if group is None:
                group = groups[base] = _Group(block)
            before = len(group)
            group.add(config, block)
            total += len(group) - before
        if limit is not None and total * config.model.repeats > limit:
            stopped = True
            break
    # a single combination that is one value of a block (an include entry repeating
    # one start of start: all) is one trial, counted once
    for columns, params in singles.items():
        for group in groups.values():
            key = group.block.key
            assert key is not None
            value = params.get(key, problem.params.model_fields[key].default)
            if group.holds(config, key, value, columns):
                total -= 1
                break
    complete = not stopped or next(walk, None) is None
    return total * config.model.repeats, complete


def plan_size(config: SweepConfig, cap: int = DEFAULT_TRIAL_CAP) -> tuple[int, str]:
    """How many trials a sweep has, for ``btlab validate`` and the cap check.

    A sweep of at most :data:`EXACT_COUNT_BLOCKS` blocks is counted exactly
    (``start: all`` on two 2000 x 2000 boards: 8,000,000); a larger one up to the
    cap only.

    Returns:
        (n, how): ``how`` is ``"exact"`` (n trials), ``"at least"`` (the
        sweep has at least n > cap trials: the matrix lists alone multiply to n,
        so it was not walked) or ``"more than"`` (counting stopped at n > cap).
    """
    seeds = swept_seeds(config)
    # each seed is the same sweep again: count it once, multiply (not with include: an
    # entry that extends no combination is one trial of its own, not one per seed)
    if seeds is not None and not config.model.include:
        per_seed = seed_count(seeds)
        n, how = plan_size(seedless(config), max(cap // per_seed, 1))
        return n * per_seed, how
    by_seed = _plan_by_seed(config, cap)
    if by_seed is not None:
        return by_seed
    blocks = product_size(config) // config.model.repeats
    if blocks <= EXACT_COUNT_BLOCKS:  # cheap to count whole, however large the sweep
        return _count(config, None)[0], "exact"
    quick = product_size(config) if not config.model.exclude else 0
    if quick > cap:
        return quick, "at least"
    n, complete = _count(config, cap)
    return n, "exact" if complete else "more than"


def _ordinary_seeds(seeds: Sequence[int], named: set[int], k: int) -> list[int]:
    """The first ``k`` seeds of ``seeds`` not in ``named`` (fewer when there are none)."""
    out: list[int] = []
    for seed in seeds:  # at most len(named) + k steps: named seeds are the only ones skipped
        if len(out) == k:
            break
        if seed not in named and seed not in out:
            out.append(seed)
    return out


def _few_seeds(config: SweepConfig) -> SweepConfig | None:
    """``config`` with ``matrix.seed`` cut to its named seeds and two others (the seeds
    :func:`_plan_by_seed` counts with); None when it has no such cut."""
    seeds = seed_values(config.model.matrix[SEED]) if SEED in config.model.matrix else None
    if seeds is None:
        return None
    named = {s for s in named_seeds(config) if s in seeds}
    if seed_count(seeds) - len(named) <= 2:
        return None
    return with_seeds(config, sorted(named) + _ordinary_seeds(seeds, named, 2))


def _plan_by_seed(config: SweepConfig, cap: int) -> tuple[int, str] | None:
    """:func:`plan_size` of a sweep whose ``matrix.seed`` is also named in ``exclude`` or
    ``include``, by arithmetic: a seed that no entry names (nor the top level) is an
    *ordinary* seed, and every ordinary seed gives the same trials but for the seed
    (an entry that names a seed matches no other; one that names none matches every
    seed alike). So the sweep of the named seeds plus one ordinary seed (A trials)
    and plus two (B) tell what each further ordinary seed adds (B - A), and the count
    is A + (ordinary - 1) * (B - A), however long the range. None when there are at
    most two ordinary seeds (the sweep is then counted as it is).
    """
    if SEED not in config.model.matrix:
        return None
    seeds = seed_values(config.model.matrix[SEED])
    if seeds is None:
        return None
    named = {s for s in named_seeds(config) if s in seeds}  # a range tests `in` by arithmetic
    ordinary = seed_count(seeds) - len(named)
    if ordinary <= 2:
        return None
    first, second = _ordinary_seeds(seeds, named, 2)
    small = sorted(named)
    a, a_how = plan_size(with_seeds(config, small + [first]), cap)
    if a_how != "exact":
        return a, a_how
    b, b_how = plan_size(with_seeds(config, small + [first, second]), cap)
    if b_how != "exact":
        return b, b_how
    return a + (ordinary - 1) * (b - a), "exact"


def check_trial_cap(config: SweepConfig, cap: int = DEFAULT_TRIAL_CAP) -> int:
    """Refuse a sweep of more than ``cap`` trials (the CLI's ``--yes`` skips this check).

    The product of the matrix lists is checked first, by arithmetic, so a sweep
    of 10^8 trials is refused at once without walking it; otherwise the trials
    are counted (:func:`count_trials`, ``all`` by arithmetic) up to the cap.

    Returns:
        The number of trials (exact: the sweep is within the cap).

    Raises:
        ConfigError: at ``matrix`` (or ``repeats``), when there are more than
            ``cap`` trials.
    """
    planned, how = plan_size(config, cap)
    if planned > cap:
        # blame repeats when they alone take the sweep over the cap
        where = ("repeats",) if planned // config.model.repeats <= cap else ("matrix",)
        found = {"at least": f"{planned:,} trials (the matrix lists multiplied, times repeats)",
                 "exact": f"{planned:,} trials",
                 "more than": f"more than {cap:,} trials"}[how]
        raise config.error(
            where, f"at most {cap:,} trials per run", found,
            "shrink the sweep (fewer values, or split it into several configs), "
            "or pass --yes to run it anyway")
    return planned
