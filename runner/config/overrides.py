"""Command-line overrides of a config, the way Hydra users write them.

``btlab run CONFIG key=value ...`` (and ``btlab validate``) changes the config
read from the file before it is checked:

* ``key=value`` changes a key the file has; ``key`` is a dotted path
  (``fixed.board``, ``matrix.heuristic``, ``budget.nodes``; a number indexes
  a list: ``include.0.heuristic``); a key the file lacks is an error (Hydra's
  rule: a typo must not add a key silently);
* ``+key=value`` adds a key the file lacks (an error if it has it);
  ``++key=value`` sets it either way;
* ``~key`` deletes a key (``~key=value``: only if it holds that value).

Values are YAML flow values read with the safe loader, within the bounds of a
config file (:func:`btlab.config.yaml_positions.load_value`): ``[6,6]``,
``[none,warnsdorff]``, ``10_000_000``, ``true``, ``null``, ``'a b'``; an
empty value is the empty string.

Every key an override touches gets, as its position, the override itself
(``override 2 (budget.nodes=abc)``), so that a validation error names it.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

import yaml

from btlab.config.messages import describe
from btlab.config.yaml_positions import MAX_DEPTH, KeyPath, load_value
from btlab.errors import ConfigError

__all__ = ["Override", "apply_overrides", "parse_override"]

_MISSING = object()


@dataclass(frozen=True)
class Override:
    """One parsed override.

    Attributes:
        text: as typed.
        index: 1-based position among the overrides.
        op: ``set`` (``key=value``), ``add`` (``+``), ``force`` (``++``), ``delete`` (``~``).
        path: the dotted key split into keys.
        value: the parsed value (``set``, ``add``, ``force``; for ``delete``, the
            value it must hold, or None when no value was given).
        has_value: whether a value was given (``delete``).
    """

    text: str
    index: int
    op: str
    path: KeyPath
    value: Any
    has_value: bool

    @property
    def where(self) -> str:
        """The override as a position in messages: ``override 2 (budget.nodes=abc)``."""
        return f"override {self.index} ({self.text})"


def parse_override(text: str, index: int, source: str) -> Override:
    """Parse ``key=value``, ``+key=value``, ``++key=value``, ``~key`` or ``~key=value``.

    Raises:
        ConfigError: not of that form, or a value that is not a YAML flow value.
    """
    where = f"override {index} ({text})"

    def bad(expected: str, found: str, fix: str, path: KeyPath = ()) -> ConfigError:
        return ConfigError(source, None, None, path, expected, found, fix, where=where)

    op, rest = "set", text
    if text.startswith("++"):
        op, rest = "force", text[2:]
    elif text.startswith("+"):
        op, rest = "add", text[1:]
    elif text.startswith("~"):
        op, rest = "delete", text[1:]
    key, eq, raw = rest.partition("=")
    if not eq and op != "delete":
        raise bad("key=value (or +key=value to add a key, ~key to delete one)",
                  repr(text), f"write {rest.strip() or 'KEY'}=VALUE, e.g. seed=7")
    parts = key.strip().split(".")
    if not key.strip() or any(not p.strip() for p in parts):
        raise bad("a dotted key such as fixed.board or budget.nodes before '='",
                  f"the key {key!r}", "write e.g. fixed.board=[6,6]")
    if len(parts) > MAX_DEPTH:
        raise bad(f"a dotted key of at most {MAX_DEPTH} parts", f"{len(parts):,} parts",
                  "write e.g. fixed.board=[6,6]")
    path: KeyPath = tuple(int(p) if p.strip().isdigit() else p.strip() for p in parts)
    value: Any = None
    if eq:
        try:
            value = load_value(raw, source) if raw.strip() else ""
        except ConfigError as exc:  # an alias bomb or deep nesting in the value
            raise bad(exc.expected, exc.found, exc.fix, path) from None
        except ValueError as exc:  # e.g. an integer of more digits than Python converts
            raise bad("a YAML flow value, e.g. 7, [6,6], [none,warnsdorff] or 'text'",
                      f"{raw[:40]!r}...: {str(exc).split(';')[0]}", "write a shorter value",
                      path) from None
        except yaml.constructor.ConstructorError as exc:
            raise bad("plain YAML data: a mapping, list, string, number or boolean",
                      f"{raw!r}: {getattr(exc, 'problem', None) or exc}",
                      "remove the tag: btlab reads values with yaml.safe_load and never builds "
                      "Python objects", path) from None
        except yaml.YAMLError as exc:
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise bad("a YAML flow value, e.g. 7, [6,6], [none,warnsdorff] or 'text'",
                      f"{raw!r}: {problem}",
                      "close the brackets or quotes; quote the whole override for the shell, "
                      f"e.g. '{key}=[6,6]'", path) from None
    return Override(text, index, op, path, value, bool(eq))


def _show(path: KeyPath) -> str:
    return ".".join(str(p) for p in path)


def _fmt(value: Any) -> str:
    return json.dumps(value, default=str, separators=(",", ":"))


def _child(node: Any, key: Any) -> Any:
    if isinstance(node, dict):
        return node.get(key, _MISSING)
    if isinstance(node, list) and isinstance(key, int):
        return node[key] if 0 <= key < len(node) else _MISSING
    return _MISSING


def apply_overrides(data: dict, positions: dict, texts: list[str] | tuple[str, ...],
                    source: str) -> tuple[dict, dict]:
    """Apply the overrides ``texts``, in order, to parsed config ``data``.

    Args:
        data: the YAML mapping as read (not modified: a changed copy is returned).
        positions: key path -> (line, column) of ``data`` (not modified either).
        texts: the overrides as typed.
        source: the config file, for messages.

    Returns:
        (changed data, positions): every key an override set or deleted is
        located at the override (a string such as ``override 1 (seed=7)``).

    Raises:
        ConfigError: a malformed override, a plain override of a missing key,
            an added key that exists, a path through a value that is not a
            mapping (or a list, for a number).
    """
    data = copy.deepcopy(data)
    positions = dict(positions)
    for index, text in enumerate(texts, 1):
        ov = parse_override(text, index, source)

        def bad(expected: str, found: str, fix: str, ov: Override = ov) -> ConfigError:
            return ConfigError(source, None, None, ov.path, expected, found, fix, where=ov.where)

        node: Any = data
        for depth, key in enumerate(ov.path[:-1]):
            nxt = _child(node, key)
            if nxt is _MISSING and ov.op in ("add", "force") and isinstance(node, dict):
                nxt = node[key] = {}  # Hydra: +a.b=1 makes a when it is absent
                positions[ov.path[:depth + 1]] = ov.where
            if nxt is _MISSING:
                head = _show(ov.path[:depth + 1])
                raise bad(f"a key {head} in {source}", f"no key {head}",
                          f"use +{ov.text} to add it" if ov.op == "set"
                          else "check the key path")
            if not isinstance(nxt, (dict, list)):
                head = _show(ov.path[:depth + 1])
                raise bad(f"{head} to be a mapping, to hold {_show(ov.path)}",
                          f"{head} is {describe(nxt)}",
                          f"set {head} itself, e.g. {head}=...")
            node = nxt
        last = ov.path[-1]
        current = _child(node, last)
        if isinstance(node, list) and not isinstance(last, int):
            raise bad(f"a number to index the list {_show(ov.path[:-1])}",
                      f"the key {last!r}", f"e.g. {_show(ov.path[:-1])}.0")
        full = _show(ov.path)
        if ov.op == "set" and current is _MISSING:
            raise bad(f"a key that is in {source}: key=value changes a key, +key=value adds one",
                      f"no key {full}", f"use +{ov.text} to add it")
        if ov.op == "add" and current is not _MISSING:
            raise bad(f"a key that is not in {source}: +key=value adds a key",
                      f"{full} is already there ({_fmt(current)})",
                      f"use {ov.text[1:]} to change it")
        if ov.op == "delete":
            if current is _MISSING:
                raise bad(f"a key that is in {source} (~key deletes one)", f"no key {full}",
                          "check the key path, or drop the override")
            if ov.has_value and current != ov.value:
                raise bad(f"{full} holding {_fmt(ov.value)} (~key=value deletes only then)",
                          f"{full} holds {_fmt(current)}", f"write ~{full} to delete it anyway")
            del node[last]
        elif isinstance(node, list):
            if current is _MISSING:
                raise bad(f"an index below {len(node)} in {_show(ov.path[:-1])}",
                          f"index {last}", "index an existing item")
            node[last] = ov.value
        else:
            node[last] = ov.value
        _relocate(positions, ov.path, ov.where)
        if ov.op == "delete" and isinstance(node, list):
            # the items after a deleted one moved up: their positions no longer fit
            _relocate(positions, ov.path[:-1], ov.where)
    return data, positions


def _relocate(positions: dict, path: KeyPath, where: str) -> None:
    """Locate ``path`` and everything under it at the override ``where``."""
    n = len(path)
    for p in [p for p in positions if p[:n] == path]:
        del positions[p]
    positions[path] = where
