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

Comma sweeps (Hydra's ``key=a,b``): a comma at the top level of a value (outside
``[]``, ``{}`` and quotes) makes a list, each piece a YAML value, so
``matrix.heuristic=none,warnsdorff`` is ``matrix.heuristic=[none,warnsdorff]`` and
``matrix.start=[0,0],[7,7]`` two squares. Only ``matrix.KEY`` (and an ``exclude``
entry's ``exclude.N.KEY``, a list of alternatives) takes such a list: in ``fixed.*``,
the trial keys (``seed``, ``budget.*``, ``restarts``, ``probes``, ``estimator``) and a
parameter written at the top level it is refused, with the overrides that move it to
``matrix``; the free-text keys ``name`` and ``description`` keep their commas.

Every fix an override's error suggests is overrides that work when typed instead
(``tests/test_override_fixes.py`` applies each one).

Every key an override touches gets, as its position, the override itself
(``override 2 (budget.nodes=abc)``), so that a validation error names it.
"""

from __future__ import annotations

import copy
import json
import shlex
from dataclasses import dataclass
from typing import Any, Callable

import yaml

from btlab.config.messages import describe, did_you_mean
from btlab.config.sweep_config import SweepModel
from btlab.config.trial_keys import TRIAL_KEYS
from btlab.config.yaml_positions import MAX_DEPTH, KeyPath, load_value
from btlab.errors import ConfigError

__all__ = ["FREE_TEXT_KEYS", "Override", "apply_overrides", "parse_override",
           "split_commas"]

#: Top-level keys whose values are text: a comma in them is a comma, never a list.
FREE_TEXT_KEYS = ("name", "description")

#: The parameter names of a problem (``problem:`` as written), [] when it is unknown.
ParamNames = Callable[[Any], list[str]]

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
        pieces: the value's pieces when it held commas at its top level (a comma
            sweep; ``value`` is then the list of them, read each), else ().
    """

    text: str
    index: int
    op: str
    path: KeyPath
    value: Any
    has_value: bool
    pieces: tuple[str, ...] = ()

    @property
    def raw(self) -> str:
        """The value as typed (after the first ``=``)."""
        return self.text.partition("=")[2]

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
                  repr(text), f"give the key a value: {rest.strip() or 'KEY'}=VALUE, e.g. "
                  "++seed=7 (++ sets a key whether or not the file has it)")
    parts = key.strip().split(".")
    if not key.strip() or any(not p.strip() for p in parts):
        raise bad("a dotted key such as fixed.board or budget.nodes before '='",
                  f"the key {key!r}", "write e.g. fixed.board=[6,6]")
    if len(parts) > MAX_DEPTH:
        raise bad(f"a dotted key of at most {MAX_DEPTH} parts", f"{len(parts):,} parts",
                  "write e.g. fixed.board=[6,6]")
    path: KeyPath = tuple(int(p) if p.strip().isdigit() else p.strip() for p in parts)
    value: Any = None
    pieces = split_commas(raw) if eq and path[0] not in FREE_TEXT_KEYS else None
    if pieces is not None:
        empty = [i for i, piece in enumerate(pieces) if not piece.strip()]
        if empty:
            kept = ",".join(piece.strip() for piece in pieces if piece.strip())
            typed = text.partition("=")[0]
            if kept and "," not in kept and path[0] == "matrix":
                kept = f"[{kept}]"  # one value left: matrix.KEY lists it
            raise bad("values separated by single commas (a comma sweep: a,b,c)",
                      f"an empty value between commas in {raw!r}",
                      f"write {shlex.quote(f'{typed}={kept}')}" if kept else "give a value",
                      path)
        return Override(text, index, op, path, [_value(p.strip(), key, source, bad, path)
                                                for p in pieces], True, tuple(pieces))
    if eq:  # the key as typed (+key, ++key): a fix to write instead says it the same way
        value = _value(raw, text.partition("=")[0], source, bad, path)
    return Override(text, index, op, path, value, bool(eq))


def split_commas(raw: str) -> list[str] | None:
    """``raw`` cut at its top-level commas (outside ``[]``, ``{}`` and quotes), or None
    when it has none: ``none,warnsdorff`` -> ``['none', 'warnsdorff']``, ``[0,0],[7,7]``
    -> ``['[0,0]', '[7,7]']``; ``[none,warnsdorff]``, ``'a,b'`` -> None.

    A quote opens a quoted text where YAML's does: at the start of a value (after
    ``[``, ``{``, ``,``, ``:`` or nothing, spaces aside); elsewhere (``it's``) it is a
    character of a plain value."""
    pieces: list[str] = []
    depth, quote, start, i, before = 0, "", 0, 0, ""
    while i < len(raw):
        c = raw[i]
        if quote:
            if quote == '"' and c == "\\":
                i += 1  # an escaped character inside double quotes
            elif c == quote and quote == "'" and raw[i + 1:i + 2] == "'":
                i += 1  # '' is a quote inside single quotes
            elif c == quote:
                quote = ""
        elif c in "'\"" and before in ("", "[", "{", ",", ":"):
            quote = c
        elif c in "[{":
            depth += 1
        elif c in "]}":
            depth = max(0, depth - 1)
        elif c == "," and depth == 0:
            pieces.append(raw[start:i])
            start = i + 1
        if not c.isspace():
            before = "," if (c == "," and not quote) else c
        i += 1
    return [*pieces, raw[start:]] if pieces else None


def _closers(raw: str) -> str:
    """The brackets and quote ``raw`` leaves open, closed in order (``[[0,0`` -> ``]]``)."""
    stack: list[str] = []
    quote, before = "", ""
    for i, c in enumerate(raw):
        if quote:
            if c == quote and not (quote == '"' and raw[i - 1:i] == "\\"):
                quote = ""
        elif c in "'\"" and before in ("", "[", "{", ",", ":"):
            quote = c
        elif c in "[{":
            stack.append("]" if c == "[" else "}")
        elif c in "]}" and stack and stack[-1] == c:
            stack.pop()
        if not c.isspace():
            before = c
    return quote + "".join(reversed(stack))


def _value(raw: str, key: str, source: str, bad: Callable[..., ConfigError],
           path: KeyPath) -> Any:
    """One override value (``raw``, of the key as typed ``key``) read as YAML.

    Raises:
        ConfigError: a value that is not a YAML flow value, over the bounds, or tagged.
    """
    try:
        return load_value(raw, source) if raw.strip() else ""
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
        if isinstance(exc, yaml.reader.ReaderError):  # a control character (ESC, NUL, ...)
            raise bad("a YAML flow value, e.g. 7, [6,6], [none,warnsdorff] or 'text' (no "
                      "control characters)", f"{raw!r}: {problem}", _printable_fix(raw, key),
                      path) from None
        closed = raw + _closers(raw)
        try:  # closing what is open after a comma or colon would guess a value: not done
            works = (closed != raw and not raw.rstrip().endswith((",", ":"))
                     and load_value(closed, source) is not None)
        except (ConfigError, ValueError, yaml.YAMLError):
            works = False
        fix = (f"close them: {shlex.quote(f'{key}={closed}')}" if works else
               "close the brackets or quotes; quote the whole override for the shell, "
               f"e.g. '{key}=[6,6]'")
        raise bad("a YAML flow value, e.g. 7, [6,6], [none,warnsdorff] or 'text'",
                  f"{raw!r}: {problem}", fix, path) from None


def _printable_fix(raw: str, key: str) -> str:
    """The fix of an override value holding control characters: the value without them,
    as it is if it reads as YAML, else as a quoted string."""
    kept = yaml.reader.Reader.NON_PRINTABLE.sub("", raw)
    for value in (kept, json.dumps(kept)):
        try:
            load_value(value, "<override>")
        except (ConfigError, ValueError, yaml.YAMLError):
            continue
        return f"remove the control characters: write {shlex.quote(f'{key}={value}')}"
    return "remove the control characters (ESC, NUL, ...) from the value"


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
                    source: str, param_names: ParamNames | None = None) -> tuple[dict, dict]:
    """Apply the overrides ``texts``, in order, to parsed config ``data``.

    Args:
        data: the YAML mapping as read (not modified: a changed copy is returned).
        positions: key path -> (line, column) of ``data`` (not modified either).
        texts: the overrides as typed.
        source: the config file, for messages.
        param_names: the parameter names of a problem as written (``problem:``), for
            the fixes of a parameter written where it is not one (``board=6``: the fix is
            ``fixed.board=6``); None: none known.

    Returns:
        (changed data, positions): every key an override set or deleted is
        located at the override (a string such as ``override 1 (seed=7)``).

    Raises:
        ConfigError: a malformed override, a plain override of a missing key,
            an added key that exists, a path through a value that is not a
            mapping (or a list, for a number), a comma sweep (``a,b``) outside ``matrix``.
    """
    data = copy.deepcopy(data)
    positions = dict(positions)
    for index, text in enumerate(texts, 1):
        ov = parse_override(text, index, source)

        def bad(expected: str, found: str, fix: str, ov: Override = ov) -> ConfigError:
            return ConfigError(source, None, None, ov.path, expected, found, fix, where=ov.where)

        params = _names(param_names, data)
        if ov.pieces and ov.op != "delete" and not _takes_a_list(ov.path):
            raise bad("one value: a comma makes a list of values (a sweep) only in matrix.KEY",
                      f"{len(ov.pieces)} values separated by commas: {ov.raw}",
                      _comma_fix(ov, data, params))
        if (ov.op in ("add", "force") and len(ov.path) == 1 and ov.path[0] in params
                and ov.path[0] not in SweepModel.model_fields):
            raise bad("a top-level key of a config (a parameter goes under fixed or matrix)",
                      f"the parameter {ov.path[0]!r} at the top level",
                      _param_fix(ov, ov.path[0], data, params))
        node: Any = data
        for depth, key in enumerate(ov.path[:-1]):
            nxt = _child(node, key)
            if nxt is _MISSING and ov.op in ("add", "force") and isinstance(node, dict):
                nxt = node[key] = {}  # Hydra: +a.b=1 makes a when it is absent
                positions[ov.path[:depth + 1]] = ov.where
            if nxt is _MISSING:
                head = _show(ov.path[:depth + 1])
                raise bad(f"a key {head} in {source}", f"no key {head}",
                          _missing_fix(ov, depth, node, data, params) if ov.op == "set"
                          else "check the key path")
            if not isinstance(nxt, (dict, list)):
                head = _show(ov.path[:depth + 1])
                raise bad(f"{head} to be a mapping, to hold {_show(ov.path)}",
                          f"{head} is {describe(nxt)}",
                          f"set {head} itself, e.g. {_typed(f'{head}={ov.raw.strip()}')}")
            node = nxt
        last = ov.path[-1]
        current = _child(node, last)
        if isinstance(node, list) and not isinstance(last, int):
            raise bad(f"a number to index the list {_show(ov.path[:-1])}",
                      f"the key {last!r}",
                      f"index it, e.g. {_typed(f'{_show(ov.path[:-1])}.0={ov.raw.strip()}')}")
        full = _show(ov.path)
        if ov.op == "set" and current is _MISSING:
            raise bad(f"a key that is in {source}: key=value changes a key, +key=value adds one",
                      f"no key {full}", _missing_fix(ov, len(ov.path) - 1, node, data, params))
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
                          f"index {last}", "index an existing item, e.g. " + _typed(
                              f"{_show(ov.path[:-1])}.{len(node) - 1}={ov.raw.strip()}")
                          if node else "the list is empty: set the whole list")
            node[last] = ov.value
        else:
            node[last] = ov.value
        _relocate(positions, ov.path, ov.where)
        if ov.op == "delete" and isinstance(node, list):
            # the items after a deleted one moved up: their positions no longer fit
            _relocate(positions, ov.path[:-1], ov.where)
    return data, positions


def _names(param_names: ParamNames | None, data: dict) -> list[str]:
    """The parameter names of the problem ``data`` names ([] when unknown)."""
    if param_names is None or not isinstance(data, dict):
        return []
    try:
        return list(param_names(data.get("problem")))
    except Exception:  # noqa: BLE001 - an unknown or broken problem: its own error comes later
        return []


def _takes_a_list(path: KeyPath) -> bool:
    """Whether a comma sweep may be written at ``path``: ``matrix.KEY``, or an exclude
    entry's ``exclude.N.KEY`` (a list of alternatives)."""
    return ((path[0] == "matrix" and len(path) == 2)
            or (path[0] == "exclude" and len(path) == 3 and isinstance(path[1], int)))


def _section(data: dict, name: str) -> dict:
    value = data.get(name) if isinstance(data, dict) else None
    return value if isinstance(value, dict) else {}


def _typed(*overrides: str) -> str:
    """Overrides as the shell takes them."""
    return " ".join(shlex.quote(o) for o in overrides)


def _sweep_overrides(key: str, values: str, data: dict) -> list[str]:
    """The overrides that sweep ``key`` over ``values`` (``a,b``): ``matrix.KEY`` set or
    added, after deleting ``fixed.KEY`` (a key is fixed or swept, not both)."""
    out = [f"~fixed.{key}"] if key in _section(data, "fixed") else []
    plus = "" if key in _section(data, "matrix") else "+"
    return [*out, f"{plus}matrix.{key}={values}"]


def _comma_fix(ov: Override, data: dict, params: list[str]) -> str:
    """The fix of a comma sweep written outside ``matrix``: the overrides that move it
    there (a parameter or a trial key), else one value."""
    path, pieces = ov.path, [p.strip() for p in ov.pieces]
    sweepable = set(params) | set(TRIAL_KEYS)
    key, values = None, ",".join(pieces)
    inner = path[1:] if path[0] == "fixed" else path
    if len(inner) == 1 and inner[0] in sweepable and (path[0] == "fixed" or inner[0] in params
                                                      or inner[0] in TRIAL_KEYS):
        key = inner[0]
    elif len(inner) == 2 and inner[0] in ("budget", "restarts") and isinstance(inner[1], str):
        key = inner[0]  # budget.nodes=1000,2000: one budget per trial, merged over the top
        values = ",".join(f"{{{inner[1]}: {p}}}" for p in pieces)
    if key is None:
        typed = ov.text.partition("=")[0]
        return f"give it one value, e.g. {_typed(f'{typed}={pieces[0]}')}"
    return ("to sweep it, move it to matrix: write instead "
            + _typed(*_sweep_overrides(key, values, data)))


def _param_fix(ov: Override, key: str, data: dict, params: list[str]) -> str:
    """Where the parameter ``key`` written at the top level goes: ``fixed.KEY=V`` (or
    ``+fixed.KEY=V``), or ``matrix.KEY=[V]`` when the file sweeps it."""
    problem = data.get("problem") if isinstance(data, dict) else None
    raw = ov.raw.strip()
    if key in _section(data, "fixed"):
        new = [f"fixed.{key}={raw}"]
    elif key in _section(data, "matrix"):
        listed = raw if raw == "all" or raw.startswith("[") else f"[{raw}]"
        new = [f"matrix.{key}={listed}"]
    else:
        new = [f"+fixed.{key}={raw}"]
    return (f"{key} is a parameter of {problem}: set it under fixed (or sweep it under "
            f"matrix), write instead {_typed(*new)}")


def _missing_fix(ov: Override, depth: int, node: Any, data: dict, params: list[str]) -> str:
    """The fix of ``key=value`` whose key ``ov.path[:depth + 1]`` the config lacks: the
    override to write instead, when one is known to be right."""
    path, raw = ov.path, ov.raw.strip()
    key = path[depth]
    rest = ".".join(str(p) for p in path[depth + 1:])
    top = list(SweepModel.model_fields)
    if isinstance(node, list) and isinstance(key, int):  # past the end of a list
        head = _show(path[:depth])
        return (f"index an existing item, e.g. {_typed(f'{head}.{len(node) - 1}={raw}')} (or "
                f"set the whole list: {head}=[...])" if node else
                f"the list is empty: set the whole list ({head}=[...])")
    if depth == 0 and not (key in ("fixed", "matrix") and len(path) == 2):
        if key in top:
            return f"use {_typed('+' + ov.text)} to add it"
        if key in params and len(path) == 1:
            return _param_fix(ov, str(key), data, params)
        close = did_you_mean(key, top + params)
        name = close.split("'")[1] if close else ""
        if name in params and len(path) == 1:
            return f"{close} " + _param_fix(ov, name, data, params)
        if name:
            plus = "" if name in data and rest else "+" if name not in data else ""
            return f"{close} write {_typed(plus + '.'.join([name, rest]).rstrip('.') + '=' + raw)}"
        return (f"a config's top-level keys are {', '.join(top)}; the parameters of "
                f"{data.get('problem')} ({', '.join(params) or '?'}) go under fixed or matrix")
    section = path[0]
    if section in ("fixed", "matrix") and len(path) == 2:
        other = "matrix" if section == "fixed" else "fixed"
        known = [*params, *TRIAL_KEYS]
        name = str(path[1])
        if params and name not in known:
            close = did_you_mean(name, known)
            if not close:
                return (f"the parameters of {data.get('problem')} are {', '.join(params)} "
                        f"(and the trial keys {', '.join(TRIAL_KEYS)})")
            name = close.split("'")[1]
            if name in _section(data, section):
                return f"{close} write {_typed(f'{section}.{name}={raw}')}"
        listed = raw
        if section == "matrix" and not ov.pieces and raw != "all" and not raw.startswith("["):
            listed = f"[{raw}]"  # matrix.KEY lists values
        new = ([f"~{other}.{name}"] if name in _section(data, other) else []) + [
            f"+{section}.{name}={listed}"]
        return (f"use {_typed(*new)} to add it" if new == [f"+{ov.text}"]
                else f"write instead {_typed(*new)}")
    return f"use {_typed('+' + ov.text)} to add it"


def _relocate(positions: dict, path: KeyPath, where: str) -> None:
    """Locate ``path`` and everything under it at the override ``where``."""
    n = len(path)
    for p in [p for p in positions if p[:n] == path]:
        del positions[p]
    positions[path] = where
