"""Sweep configs: YAML -> validated :class:`SweepConfig` (its trials: :mod:`btlab.sweep.expand`).

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
:class:`~btlab.errors.ConfigError` naming the file, line and column, the key
path, what was expected, what was found and how to fix it. YAML is read with
``yaml.safe_load`` semantics only (libyaml's ``CSafeLoader``, or
``yaml.SafeLoader`` without libyaml): tags that build Python objects are
refused. Only regular files of at most 256 KiB are read, and a document may
expand to at most 200,000 values nested 64 deep (:mod:`btlab.config.yaml_positions`).
Every number is bounded by what it becomes (see :data:`MAX_BUDGET_SECONDS`).
"""

from __future__ import annotations

import errno
import json
import os
import re
import shlex
import stat
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import TypeAdapter, ValidationError

from btlab.config.messages import (
    add_param_fix,
    describe,
    did_you_mean,
    from_pydantic,
    param_error,
)
from btlab.config.overrides import apply_overrides
from btlab.config.restarts import RestartsModel
from btlab.config.seeds import check_seeds, seed_hint
from btlab.config.sweep_config import (
    MAX_BUDGET_NODES,
    MAX_BUDGET_SECONDS,
    BudgetModel,
    SweepConfig,
    SweepModel,
    located_error,
)
from btlab.config.trial_keys import TRIAL_KEYS, check_trial_keys
from btlab.config.yaml_positions import MAX_CONFIG_BYTES, KeyPath, parse_yaml
from btlab.errors import ConfigError
from btlab.problems import plugins
from btlab.problems.registry import PROBLEMS, get_problem
from btlab.problems.spec import ProblemSpec

__all__ = ["DEFAULT_TRIAL_CAP", "MAX_BUDGET_NODES", "MAX_BUDGET_SECONDS", "BudgetModel",
           "SweepConfig", "SweepModel", "config_yaml", "load_config",
           "parse_config"]

#: A sweep larger than this needs ``--yes``.
DEFAULT_TRIAL_CAP = 1_000_000


def load_config(path: str | Path, overrides: list[str] | tuple[str, ...] = ()) -> SweepConfig:
    """Read and validate a config file, changed by command-line ``overrides`` (``key=value``).

    Only a regular file (or a symlink to one) of at most
    :data:`~btlab.config.yaml_positions.MAX_CONFIG_BYTES` is read: a FIFO, a device or a
    folder is refused without reading from it (the file is opened non-blocking
    and checked with ``fstat``, so a FIFO with no writer never blocks).

    Raises:
        ConfigError: unreadable file, not a regular file, too large, malformed
            YAML or any invalid value.
    """
    path = Path(path)
    return parse_config(read_config_text(path), str(path), overrides)


def config_yaml(config: SweepConfig) -> str:
    """The whole config as YAML text: every top-level key, after the overrides, with its
    default where the file gave none (``btlab validate --print``, Hydra's ``--cfg job``).

    Read back (:func:`parse_config`, or ``btlab run`` on a file holding it) it is the
    same config: the same trials, the same trial ids. Keys keep the order of
    :class:`SweepModel`, a mapping's keys (``matrix``) the order they were written in.
    """
    return yaml.safe_dump(config.model.model_dump(mode="json"), sort_keys=False,
                          default_flow_style=None, allow_unicode=True, width=100)


def read_config_text(path: Path) -> str:
    """The text of the config file ``path`` (see :func:`load_config` for what is refused)."""
    def bad(expected: str, found: str, fix: str) -> ConfigError:
        return ConfigError(str(path), None, None, (), expected, found, fix)

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        if exc.errno == errno.EISDIR:  # some systems refuse to open a folder at all
            raise bad("a YAML config file", "a folder", "give the path of a config file, "
                      "e.g. configs/warnsdorff_64_starts.yaml") from None
        raise bad("a readable YAML file", exc.strerror or str(exc), "check the path") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = ("a folder" if stat.S_ISDIR(mode) else "a FIFO (named pipe)"
                    if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode)
                    or stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode)
                    else "not a regular file")
            raise bad("a regular file holding a YAML config", kind,
                      "give the path of a config file, e.g. configs/warnsdorff_64_starts.yaml"
                      if stat.S_ISDIR(mode) else
                      "save the config to a file and give its path")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            raw = handle.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise bad("a readable YAML file", exc.strerror or str(exc), "check the path") from None
    finally:
        os.close(fd)
    if len(raw) > MAX_CONFIG_BYTES:
        raise bad(f"a config of at most {MAX_CONFIG_BYTES:,} bytes (256 KiB)",
                  "a larger file", "give the path of a sweep config")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise bad("a UTF-8 text file", "binary data", "give the path of a YAML config") from None


def parse_config(text: str, source: str = "<string>",
                 overrides: list[str] | tuple[str, ...] = ()) -> SweepConfig:
    """Validate config text; ``source`` names it in messages. See :func:`load_config`."""
    data, positions = parse_yaml(text, source)

    def err(path, expected, found, fix=""):
        probe = tuple(path)
        while probe and probe not in positions:
            probe = probe[:-1]
        return located_error(source, positions, probe, path, expected, found, fix)

    if not isinstance(data, dict):
        raise err((), "a mapping with name, problem, fixed, matrix, ...", describe(data),
                  "see configs/ for examples")
    if overrides:
        data, positions = apply_overrides(data, positions, overrides, source, _param_names)
    try:
        model = SweepModel.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        sub = first["loc"][:1]
        allowed = list(BudgetModel.model_fields if sub == ("budget",)
                       else RestartsModel.model_fields if sub == ("restarts",)
                       else SweepModel.model_fields)
        raise seed_hint(from_pydantic(err, first, (), allowed), first) from None
    try:
        problem = get_problem(model.problem)
    except plugins.PluginError as exc:
        raise err(("problem",), exc.expected, exc.found, exc.fix) from None
    except ValueError:
        raise err(("problem",), f"one of {', '.join(PROBLEMS)}, or a plug-in "
                  "'module:PROBLEM' (docs/extending.md)", repr(model.problem),
                  did_you_mean(model.problem, list(PROBLEMS)) or "pick a listed problem"
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
                      f"unknown key {wrong[0]!r} in {describe(split)}" if wrong
                      else describe(split),
                      (did_you_mean(wrong[0], ["depth"]) if wrong else "")
                      or ("split takes depth only: write split: {depth: 4} or split: auto"
                          if wrong else "write split: {depth: 4} or split: auto"))
    config = SweepConfig(model, problem, source, positions, text, tuple(overrides))
    _check_params(config)
    return config


# --------------------------------------------------------------------------- parameters


def _param_names(problem: Any) -> list[str]:
    """The parameter names of the problem named ``problem`` (for overrides' fixes)."""
    return list(get_problem(problem).params.model_fields) if isinstance(problem, str) else []


def _adapters(problem: ProblemSpec) -> dict[str, TypeAdapter]:
    fields = problem.params.model_fields
    out: dict[str, TypeAdapter] = {}
    for name, info in fields.items():
        ann: Any = (Annotated[(info.annotation, *info.metadata)] if info.metadata
                    else info.annotation)
        out[name] = TypeAdapter(ann)
    return out


def _check_value(config: SweepConfig, adapters, key: str, value: Any, key_path: KeyPath,
                 path: KeyPath) -> None:
    """Check one parameter value; ``key_path`` locates the key, ``path`` the value."""
    names = list(adapters)
    if key in TRIAL_KEYS:  # checked by check_seeds and check_trial_keys
        return
    if key not in adapters:
        raise config.error(key_path, f"a parameter of {config.problem.name}: {', '.join(names)}",
                           f"unknown parameter {key!r}",
                           f"{key} is a top-level key, not a parameter: write {key}: "
                           f"{json.dumps(value, default=str)} at the top level, one value per "
                           "config" if key in SweepModel.model_fields
                           else did_you_mean(key, names) or "remove it")
    try:
        adapters[key].validate_python(value)
    except ValidationError as exc:
        info = config.problem.params.model_fields[key]
        examples = info.examples or []
        raise param_error(config.error, [dict(e) for e in exc.errors()], value, path, names,
                          info.description or "", str(examples[0]) if examples else ""
                          ) from None


def _fits(adapter: TypeAdapter, value: Any) -> bool:
    """True when ``value`` is a valid value of the parameter."""
    try:
        adapter.validate_python(value)
    except ValidationError:
        return False
    return True


def _flow(value: Any) -> str:
    """A value written as YAML flow, e.g. ``[0, 0]`` or ``[first, count]``."""
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    return json.dumps(value) if not isinstance(value, str) else value


def _override_at(config: SweepConfig, path: KeyPath) -> str:
    """The override that set ``path``, as typed (``matrix.heuristic=none``), or ""."""
    pos = config.positions.get(tuple(path))
    if isinstance(pos, str) and pos.startswith("override ") and pos.endswith(")"):
        return pos.partition(" (")[2][:-1]
    return ""


def _check_params(config: SweepConfig) -> None:
    m = config.model
    adapters = _adapters(config.problem)
    expandable = config.problem.expand_all
    check_seeds(config)
    check_trial_keys(config)
    for key, value in m.fixed.items():
        try:
            _check_value(config, adapters, key, value, ("fixed", key), ("fixed", key))
        except ConfigError as exc:
            if key in adapters and isinstance(value, list) and value and all(_fits(adapters[key], v)
                                                         for v in value):
                raise replace(exc, fix=f"fixed takes one value; to sweep these, move {key} "
                              f"under matrix: {key}: {_flow(value)}") from None
            raise
    for key, values in m.matrix.items():
        if key in m.fixed:
            raise config.error(("matrix", key), "each parameter either fixed or swept",
                               f"{key!r} both in fixed and in matrix",
                               f"delete fixed.{key} or matrix.{key}")
        if (values == "all" and key in expandable) or key in TRIAL_KEYS:
            continue
        if not isinstance(values, list):
            hint = " (or all)" if key in expandable else ""
            found = describe(values)
            fix = (f"write {key}: [{json.dumps(values, default=str)}]" if key in adapters
                   else (did_you_mean(key, list(adapters)) or "remove it"))
            typed = _override_at(config, ("matrix", key))
            if typed and key in adapters and values != "all" and not isinstance(values, dict):
                op, raw = typed.partition("matrix.")[0], typed.partition("=")[2].strip()
                fix = "write instead " + shlex.quote(f"{op}matrix.{key}=[{raw}]")
            if values == "all" and key in adapters:
                takes = "takes" if len(expandable) == 1 else "take"
                found = (f"all, which only {' and '.join(expandable)} {takes}" if expandable
                         else "all, which no parameter of this problem takes")
                fix = f"list the values: {key}: [...]"
            raise config.error(("matrix", key), f"a list of values{hint}", found, fix)
        if not values:
            raise config.error(("matrix", key), "a non-empty list of values", "an empty list",
                               f"give at least one value, or delete matrix.{key}")
        for i, value in enumerate(values):
            if value == "all" and key in expandable:
                raise config.error(("matrix", key, i), f"values of {key} in the list (all "
                                   "stands for every value, and is written alone)",
                                   f"all inside the list {describe(values)}",
                                   f"write {key}: all" if len(values) == 1 else
                                   f"write {key}: all alone, or list the values")
            try:
                _check_value(config, adapters, key, value, ("matrix", key), ("matrix", key, i))
            except ConfigError as exc:
                if key in adapters and _fits(adapters[key], values):  # start: [0, 0], one square
                    raise replace(exc, fix=f"matrix.{key} lists values: for the one value "
                                  f"{_flow(values)} write {key}: [{_flow(values)}], or move "
                                  f"it to fixed") from None
                raise
    for section in ("exclude", "include"):
        for i, entry in enumerate(getattr(m, section)):
            if not entry:
                raise config.error((section, i), "a mapping of parameter: value", "an empty entry",
                                   "delete it")
            for key, value in entry.items():
                path = (section, i, key)
                if section == "exclude" and key in adapters and key not in m.matrix \
                        and key not in m.fixed:
                    raise config.error(path, "a key of matrix or fixed (exclude drops "
                                       "combinations of the matrix, before include)",
                                       f"{key!r}, which is in neither",
                                       f"drop {key} from the entry, or add it to matrix")
                if section == "exclude" and value == "all" and key in expandable:
                    raise config.error(path, f"a value of {key} (all stands for every value: "
                                       "to drop them all, exclude on the other keys alone)",
                                       "all", f"write {key}: [...] with the values to drop")
                if section == "exclude" and isinstance(value, list) and value and key in adapters:
                    try:  # a list that is not one value is a list of alternatives
                        adapters[key].validate_python(value)
                    except ValidationError:
                        for j, alt in enumerate(value):
                            if alt == "all" and key in expandable:
                                raise config.error(path + (j,), f"a value of {key} (all "
                                                   "stands for every value: to drop them "
                                                   "all, exclude on the other keys alone)",
                                                   "all", f"write {key}: [...] with the "
                                                   "values to drop") from None
                            _check_value(config, adapters, key, alt, path, path + (j,))
                        continue
                _check_value(config, adapters, key, value, path, path)
    for name, info in config.problem.params.model_fields.items():
        if info.is_required() and name not in m.fixed and name not in m.matrix and not (
                m.include and all(name in e for e in m.include)):
            # at fixed.<name>: located at fixed in the file, or at the override that deleted it
            deleted = re.fullmatch(r"override \d+ \((~.*)\)",
                                   str(config.positions.get(("fixed", name), "")))
            raise config.error(("fixed", name), f"the parameter {name!r} in fixed or matrix",
                               "no such key", f"drop the override {deleted[1]}" if deleted
                               else add_param_fix(config.problem.params, name))
