"""Config text -> data with the position of every key, and validation errors as messages.

:func:`parse_yaml` reads YAML with ``yaml.SafeLoader`` only (tags that build
Python objects are refused) and records the line and column of every key and
value, so that :class:`~runner.errors.ConfigError` can name them;
:func:`from_pydantic` turns a pydantic validation error into a
:class:`~runner.errors.ConfigError` with what was expected, what was found and
a fix.
"""

from __future__ import annotations

import difflib
import json
from typing import Any

import yaml

from .errors import ConfigError

Position = tuple[int, int]
KeyPath = tuple  # tuple[str | int, ...]


def did_you_mean(word: Any, choices: list[str]) -> str:
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


def parse_yaml(text: str, source: str) -> tuple[Any, dict]:
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


def describe(value: Any) -> str:
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


def from_pydantic(cfg_error, err: Any, prefix: KeyPath, allowed_keys: list[str]) -> ConfigError:
    """Turn the first pydantic error into a ConfigError with a fix."""
    loc = prefix + tuple(err["loc"])
    kind = err["type"]
    found = describe(err.get("input"))
    fix = ""
    if kind == "extra_forbidden":
        key = loc[-1]
        expected = "one of the keys " + ", ".join(allowed_keys)
        found = f"unknown key {key!r}"
        fix = did_you_mean(key, allowed_keys) or "remove it"
    elif kind == "literal_error":
        expected = f"one of {err['ctx']['expected']}"
        listed = err["ctx"]["expected"].replace(" or ", ", ").split(",")
        choices = [c.strip().strip("'") for c in listed]
        fix = did_you_mean(err.get("input"), choices) or "use one of the values listed"
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
