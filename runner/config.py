"""Sweep configs: YAML -> validated :class:`SweepConfig` -> trials (:func:`expand`).

A config names a problem, the parameters every trial shares (``fixed``), the
parameters to sweep (``matrix``: the product of every list, GitHub-Actions
style, with ``exclude`` and ``include``), budgets, repeats and a seed::

    name: warnsdorff-64-starts
    problem: knights_tour
    fixed: {board: [8, 8], strategy: recursive, mode: first}
    matrix:
      heuristic: [none, warnsdorff]
      start: all
    budget: {nodes: 1_000_000, seconds: 60}
    repeats: 1
    seed: 2026

Everything is checked before anything runs. A bad config raises
:class:`~runner.errors.ConfigError` naming the file, line and column, the key
path, what was expected, what was found and how to fix it. YAML is read with
``yaml.safe_load`` semantics only (``yaml.SafeLoader``): tags that build
Python objects are refused.
"""

from __future__ import annotations

import difflib
import itertools
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Iterator, Mapping, Optional

import yaml
from pydantic import (BaseModel, ConfigDict, Field, StrictInt, TypeAdapter,
                      ValidationError)

from . import plugins
from .errors import ConfigError
from .problems import PROBLEMS, get_problem
from .spec import ParamError, ProblemSpec
from .trial import Trial

__all__ = ["DEFAULT_TRIAL_CAP", "SweepConfig", "Trial", "check_trial_cap", "count_trials",
           "expand", "iter_trials", "load_config", "parse_config", "product_size"]

#: A sweep larger than this needs ``--yes``.
DEFAULT_TRIAL_CAP = 1_000_000

Position = tuple[int, int]
KeyPath = tuple  # tuple[str | int, ...]

PositiveNumber = Annotated[float, Field(gt=0, allow_inf_nan=False)]


class BudgetModel(BaseModel):
    """``budget``: ``nodes`` (placements, > 0) and ``seconds`` (wall time, > 0), each optional."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    nodes: Optional[Annotated[StrictInt, Field(gt=0)]] = None
    seconds: Optional[PositiveNumber] = None


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
    repeats: Annotated[StrictInt, Field(ge=1)] = 1
    seed: StrictInt = 0
    #: ``{depth: D}`` or ``auto``: split every trial into ordered subtree tasks
    #: (:mod:`experiments.split`); the counters are those of the unsplit search.
    split: Any = None


@dataclass(frozen=True)
class SweepConfig:
    """A validated config.

    Attributes:
        model: the validated top-level values.
        problem: the problem spec.
        source: the file it came from (for messages).
        positions: key path -> (line, column), 1-based, of every key and value.
        text: the YAML text as read.
    """

    model: SweepModel
    problem: ProblemSpec
    source: str
    positions: Mapping[KeyPath, Position]
    text: str

    @property
    def name(self) -> str:
        return self.model.name

    def error(self, path: KeyPath, expected: str, found: str, fix: str = "") -> ConfigError:
        """A :class:`ConfigError` at ``path`` (or the nearest enclosing key that has a position)."""
        probe = tuple(path)
        while probe and probe not in self.positions:
            probe = probe[:-1]
        line, col = self.positions.get(probe, (None, None))
        return ConfigError(self.source, line, col, tuple(path), expected, found, fix)

    def expanded(self) -> dict[str, Any]:
        """The config as plain data (what goes into the Parquet metadata)."""
        return self.model.model_dump(mode="json")


# --------------------------------------------------------------------------- loading


def _did_you_mean(word: Any, choices: list[str]) -> str:
    close = difflib.get_close_matches(str(word), choices, n=1, cutoff=0.6)
    return f"did you mean {close[0]!r}?" if close else ""


def _positions(node: yaml.Node, path: KeyPath, out: dict, source: str) -> None:
    """Record the position of every key and value below ``node``; refuse duplicate keys."""
    out.setdefault(path, (node.start_mark.line + 1, node.start_mark.column + 1))
    if isinstance(node, yaml.MappingNode):
        seen: set = set()
        for key_node, value_node in node.value:
            key = key_node.value
            if key in seen:
                raise ConfigError(source, key_node.start_mark.line + 1,
                                  key_node.start_mark.column + 1, path + (key,),
                                  "each key once per mapping", f"{key!r} given twice",
                                  "delete one of the two")
            seen.add(key)
            out[path + (key,)] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            _positions(value_node, path + (key,), out, source)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _positions(item, path + (i,), out, source)


def _parse_yaml(text: str, source: str) -> tuple[Any, dict]:
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            raise ConfigError(source, 1, 1, (), "a mapping with name, problem, fixed, matrix, ...",
                              "an empty file", "see configs/ for examples")
        positions: dict = {}
        _positions(node, (), positions, source)
        data = loader.construct_document(node)
    except yaml.constructor.ConstructorError as exc:
        mark = exc.problem_mark or exc.context_mark
        tag = getattr(exc, "problem", "") or str(exc)
        where = (mark.line + 1, mark.column + 1) if mark else None
        # the key whose value holds the tag: the last key that starts before it
        path = max((p for p, pos in positions.items() if where and pos <= where),
                   key=lambda p: (positions[p], len(p)), default=()) if where else ()
        raise ConfigError(
            source, where[0] if where else None, where[1] if where else None, path,
            "plain YAML data: mappings, lists, strings, numbers, booleans",
            tag.strip(),
            "remove the tag: btlab reads configs with yaml.safe_load and never builds "
            "Python objects") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(
            source, mark.line + 1 if mark else None, mark.column + 1 if mark else None, (),
            "well-formed YAML", f"a YAML syntax error: {problem}",
            "fix the syntax near that position (indentation, a missing ':' or quote)") from None
    finally:
        loader.dispose()
    return data, positions


def _describe(value: Any) -> str:
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, bool):
        return f"{str(value).lower()} (a boolean)"
    if value is None:
        return "nothing (null)"
    if isinstance(value, (dict, list)):
        text = json.dumps(value, default=str)
        return (text[:60] + "...") if len(text) > 60 else text
    return f"{value!r} ({type(value).__name__})"


def _from_pydantic(cfg_error, err: dict, prefix: KeyPath, allowed_keys: list[str]) -> ConfigError:
    """Turn the first pydantic error into a ConfigError with a fix."""
    loc = prefix + tuple(err["loc"])
    kind = err["type"]
    found = _describe(err.get("input"))
    fix = ""
    if kind == "extra_forbidden":
        key = loc[-1]
        expected = "one of the keys " + ", ".join(allowed_keys)
        found = f"unknown key {key!r}"
        fix = _did_you_mean(key, allowed_keys) or "remove it"
    elif kind == "literal_error":
        expected = f"one of {err['ctx']['expected']}"
        choices = [c.strip().strip("'") for c in err["ctx"]["expected"].replace(" or ", ", ").split(",")]
        fix = _did_you_mean(err.get("input"), choices) or "use one of the values listed"
    elif kind == "missing":
        expected = f"the key {loc[-1]!r}"
        found = "no such key"
        fix = f"add {loc[-1]}: ..."
    elif kind == "plugin_error":
        expected, found, fix = (err["ctx"]["expected"], err["ctx"]["found"],
                                err["ctx"]["fix"])
    elif kind == "string_pattern_mismatch" and loc == ("name",):
        expected = ("a name of letters, digits, '.', '_' and '-', starting with a letter or "
                    "digit (it names the results folder results/<name>, so no '/' or '..')")
        fix = "rename it, e.g. name: my-sweep"
    else:
        expected = err["msg"].replace("Input should be", "a value that is").replace(
            "Value error, ", "")
        fix = _TYPE_FIXES.get(kind, "change the value as expected")
    return cfg_error(loc, expected, found, fix)


#: How to fix a value of the wrong type, by pydantic error type.
_TYPE_FIXES = {
    "int_type": "write a whole number without quotes, e.g. 3",
    "int_parsing": "write a whole number without quotes, e.g. 3",
    "int_from_float": "write a whole number, e.g. 3",
    "float_type": "write a number without quotes, e.g. 60",
    "float_parsing": "write a number without quotes, e.g. 60",
    "finite_number": "write a finite number, e.g. 60",
    "bool_type": "write true or false",
    "bool_parsing": "write true or false",
    "string_type": "write text, e.g. in quotes",
    "dict_type": "write a mapping: one 'key: value' per line, indented under the key",
    "list_type": "write a list, e.g. [a, b]",
    "tuple_type": "write a list, e.g. [8, 8]",
    "too_long": "remove the extra items",
    "too_short": "add the missing items",
    "greater_than": "use a larger value",
    "greater_than_equal": "use a larger value",
    "less_than_equal": "use a smaller value",
}


def load_config(path: str | Path) -> SweepConfig:
    """Read and validate a config file.

    Raises:
        ConfigError: unreadable file, malformed YAML or any invalid value.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(str(path), None, None, (), "a readable YAML file",
                          exc.strerror or str(exc), "check the path") from None
    except UnicodeDecodeError:
        raise ConfigError(str(path), None, None, (), "a UTF-8 text file", "binary data",
                          "give the path of a YAML config") from None
    return parse_config(text, str(path))


def parse_config(text: str, source: str = "<string>") -> SweepConfig:
    """Validate config text; ``source`` names it in messages. See :func:`load_config`."""
    data, positions = _parse_yaml(text, source)

    def err(path, expected, found, fix=""):
        probe = tuple(path)
        while probe and probe not in positions:
            probe = probe[:-1]
        line, col = positions.get(probe, (None, None))
        return ConfigError(source, line, col, tuple(path), expected, found, fix)

    if not isinstance(data, dict):
        raise err((), "a mapping with name, problem, fixed, matrix, ...", _describe(data),
                  "see configs/ for examples")
    try:
        model = SweepModel.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        sub = first["loc"][:1]
        allowed = list(BudgetModel.model_fields) if sub == ("budget",) else list(SweepModel.model_fields)
        raise _from_pydantic(err, first, (), allowed) from None
    try:
        problem = get_problem(model.problem)
    except plugins.PluginError as exc:
        raise err(("problem",), exc.expected, exc.found, exc.fix) from None
    except ValueError:
        raise err(("problem",), f"one of {', '.join(PROBLEMS)}, or a plug-in "
                  "'module:PROBLEM' (docs/extending.md)", repr(model.problem),
                  _did_you_mean(model.problem, list(PROBLEMS)) or "pick a listed problem"
                  ) from None
    split = model.split
    if split is not None and split != "auto":
        ok = (isinstance(split, dict) and set(split) == {"depth"}
              and isinstance(split["depth"], int) and not isinstance(split["depth"], bool)
              and 0 <= split["depth"] <= 1000)
        if not ok:
            wrong = [k for k in split if k != "depth"] if isinstance(split, dict) else []
            raise err(("split",) + ((wrong[0],) if wrong else ()),
                      "split: auto, or split: {depth: D} with an integer D in 0..1000",
                      f"unknown key {wrong[0]!r} in {_describe(split)}" if wrong
                      else _describe(split),
                      (_did_you_mean(wrong[0], ["depth"]) if wrong else "")
                      or ("split takes depth only: write split: {depth: 4} or split: auto"
                          if wrong else "write split: {depth: 4} or split: auto"))
    config = SweepConfig(model, problem, source, positions, text)
    _check_params(config)
    return config


# --------------------------------------------------------------------------- parameters


def _adapters(problem: ProblemSpec) -> dict[str, TypeAdapter]:
    fields = problem.params.model_fields
    out = {}
    for name, info in fields.items():
        ann = Annotated[(info.annotation, *info.metadata)] if info.metadata else info.annotation
        out[name] = TypeAdapter(ann)
    return out


def _check_value(config: SweepConfig, adapters, key: str, value: Any, key_path: KeyPath,
                 path: KeyPath) -> None:
    """Check one parameter value; ``key_path`` locates the key, ``path`` the value."""
    names = list(adapters)
    if key not in adapters:
        raise config.error(key_path, f"a parameter of {config.problem.name}: {', '.join(names)}",
                           f"unknown parameter {key!r}",
                           _did_you_mean(key, names) or "remove it")
    try:
        adapters[key].validate_python(value)
    except ValidationError as exc:
        e = exc.errors()[0]
        raise _from_pydantic(config.error, {**e, "loc": ()}, path, names) from None


def _check_params(config: SweepConfig) -> None:
    m = config.model
    adapters = _adapters(config.problem)
    expandable = config.problem.expand_all
    for key, value in m.fixed.items():
        _check_value(config, adapters, key, value, ("fixed", key), ("fixed", key))
    for key, values in m.matrix.items():
        if key in m.fixed:
            raise config.error(("matrix", key), "each parameter either fixed or swept",
                               f"{key!r} both in fixed and in matrix",
                               f"delete fixed.{key} or matrix.{key}")
        if values == "all" and key in expandable:
            continue
        if not isinstance(values, list):
            hint = " (or all)" if key in expandable else ""
            raise config.error(("matrix", key), f"a list of values{hint}", _describe(values),
                               f"write {key}: [{json.dumps(values, default=str)}]"
                               if key in adapters else
                               (_did_you_mean(key, list(adapters)) or "remove it"))
        if not values:
            raise config.error(("matrix", key), "a non-empty list of values", "an empty list",
                               f"give at least one value, or delete matrix.{key}")
        for i, value in enumerate(values):
            _check_value(config, adapters, key, value, ("matrix", key), ("matrix", key, i))
    for section in ("exclude", "include"):
        for i, entry in enumerate(getattr(m, section)):
            if not entry:
                raise config.error((section, i), "a mapping of parameter: value", "an empty entry",
                                   "delete it")
            for key, value in entry.items():
                path = (section, i, key)
                if section == "exclude" and isinstance(value, list) and value and key in adapters:
                    try:  # a list that is not one value is a list of alternatives
                        adapters[key].validate_python(value)
                    except ValidationError:
                        for j, alt in enumerate(value):
                            _check_value(config, adapters, key, alt, path, path + (j,))
                        continue
                _check_value(config, adapters, key, value, path, path)
    for name, info in config.problem.params.model_fields.items():
        if info.is_required() and name not in m.fixed and name not in m.matrix and not (
                m.include and all(name in e for e in m.include)):
            raise config.error(("fixed",), f"the parameter {name!r} in fixed or matrix",
                               "no such key", f"add {name}: ... under fixed")


# --------------------------------------------------------------------------- expansion


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
    fixed_src = {k: ("fixed", k) for k in m.fixed}
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
