"""Validation errors as messages: what was expected, what was found, how to fix it.

:func:`from_pydantic` turns a pydantic validation error of the config's top level
into a :class:`~btlab.errors.ConfigError`; :func:`param_error` does it for a
parameter value, choosing among the errors of a union type (``board``:
``[rows, cols]`` or one number) the one about the value as written;
:func:`describe` shows a value, :func:`did_you_mean` suggests a name.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from typing import Any

from btlab.errors import ConfigError, format_key_path

KeyPath = tuple  # tuple[str | int, ...]


def did_you_mean(word: Any, choices: list[str]) -> str:
    close = difflib.get_close_matches(str(word), choices, n=1, cutoff=0.6)
    return f"did you mean {close[0]!r}?" if close else ""


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
        fix = did_you_mean(err.get("input"), choices) or (
            f"set {format_key_path(loc)} to one of the values listed, e.g. {choices[0]}")
    elif kind == "missing":
        expected = f"the key {loc[-1]!r}"
        found = "no such key"
        fix = _MISSING_FIXES.get(loc, f"add {loc[-1]}: (see docs/config.md for its values)")
    elif kind in ("plugin_error", "bad_value"):  # a validator's own expected/found/fix
        expected, found, fix = (err["ctx"]["expected"], err["ctx"]["found"],
                                err["ctx"]["fix"])
    elif kind == "model_type":  # a nested section (budget) that is not a mapping
        expected = "a mapping, e.g. {nodes: 1_000_000, seconds: 60}" if loc == ("budget",) \
            else "a mapping of key: value"
        fix = _TYPE_FIXES["dict_type"]
        value = err.get("input")
        example = _SECTION_EXAMPLES.get(loc[:1])
        if len(loc) == 1 and example:
            if loc == ("budget",) and isinstance(value, int) and not isinstance(value, bool):
                example = f"{{nodes: {value}}}"
            fix = (f"write {loc[0]}: {example} in the file, or {loc[0]}='{example}' as an "
                   "override")
    elif kind in _BOUNDS and "ctx" in err:
        word, _ = _BOUNDS[kind]
        limit = next(iter(err["ctx"].values()))
        expected = f"a number {word} {_number(limit)}"
        fix = _bound_fix(kind, loc, limit)
        if kind.startswith("less"):
            expected += _BOUND_REASONS.get(tuple(k for k in loc if isinstance(k, str)), "")
        found = describe(err.get("input"))
    elif kind in ("list_type", "dict_type") and loc[:1] in (("include",), ("exclude",)) \
            and len(loc) <= 2:
        # include: {board: 5} (one mapping, not a list of them), or include: [5]
        expected = (f"{loc[0]}: a list of mappings of parameter: value, e.g. "
                    f"{loc[0]}: [{{heuristic: warnsdorff, tie_break: roth}}]")
        value = err.get("input")
        fix = (f"put the mapping in a list: {loc[0]}: [{json.dumps(value, default=str)}]"
               if isinstance(value, dict) else "write each entry as {parameter: value, ...}")
    elif kind == "string_pattern_mismatch" and loc == ("name",):
        expected = ("a name of letters, digits, '.', '_' and '-', starting with a letter or "
                    "digit (it names the results folder results/<name>, so no '/' or '..')")
        fix = "rename it, e.g. name: my-sweep"
    else:
        expected = err["msg"].replace("Input should be", "a value that is").replace(
            "Value error, ", "")
        fix = _TYPE_FIXES.get(kind, "change the value as expected")
        text = err.get("input")
        if kind in _NUMBER_ERRORS and isinstance(text, str) and _looks_numeric(text):
            # YAML 1.1 reads 1e9 and 1e-3 (no decimal point) as text
            fix = (_exponent_fix(text, integer=kind.startswith("int"))
                   if "e" in text.lower() else f"a number in quotes is text: write {text} "
                   "without quotes")
        elif kind in ("int_type", "int_from_float") and isinstance(text, float) \
                and math.isfinite(text):  # 1.5e+6 (YAML's float) where a count goes
            fix = (f"write it as a whole number: {int(text):_}" if text.is_integer() else
                   f"write a whole number, e.g. {round(text):_}")
    return cfg_error(loc, expected, found, fix)


_NUMBER_ERRORS = frozenset({"int_type", "int_parsing", "float_type", "float_parsing"})


def _exponent_fix(text: str, integer: bool) -> str:
    """The fix of a number in e-notation that YAML 1.1 reads as text (``1e9``, ``1.0e3``):
    YAML's float needs a decimal point and a signed exponent (``1.0e+9``)."""
    mantissa, _, exponent = text.strip().lower().partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    sign = mantissa[0] if mantissa[0] in "+-" else ""
    if mantissa[len(sign)] == ".":  # YAML 1.1 reads .5e+3 as a float, but not -.5e+3
        mantissa = f"{sign}0{mantissa[len(sign):]}"
    if not exponent.startswith(("+", "-")):
        exponent = "+" + exponent
    as_float = f"{mantissa}e{exponent}"
    if integer:
        value = float(as_float)
        if not math.isfinite(value):  # 1e400: more digits than a float holds
            return (f"YAML reads {text} as text: write the whole number in full, in digits "
                    "(no exponent)")
        whole = f"{int(value):_}" if value.is_integer() else f"{round(value):_}"
        return f"YAML reads {text} as text: write the whole number in full, {whole}"
    return (f"YAML reads {text} as text (its floats need a decimal point and a signed "
            f"exponent): write {as_float}")


def _looks_numeric(text: str) -> bool:
    """A decimal number written as text: ``60``, ``1e9``, ``1e-3``, ``1_000``."""
    return re.fullmatch(r"[+-]?(\d[\d_]*(\.\d*)?|\.\d+)([eE][+-]?\d+)?", text.strip()) is not None


#: pydantic error types that say the value has the wrong shape for one type of a
#: union (a number where a list is expected, an item missing from a pair), as opposed
#: to a value of the right shape that is out of range or not allowed.
_SHAPE_ERRORS = frozenset({"tuple_type", "list_type", "int_type", "float_type", "bool_type",
                           "string_type", "dict_type", "missing", "too_long", "too_short",
                           "int_from_float", "int_parsing", "float_parsing", "bool_parsing"})


def _is_branch(part: Any) -> bool:
    """True for the name pydantic gives one type of a union in an error's location."""
    return isinstance(part, str) and any(c in part for c in "[-")


def param_error(cfg_error, errors: list[dict], value: Any, path: KeyPath, names: list[str],
                shape: str = "", example: str = "") -> ConfigError:
    """The ConfigError for a parameter value that pydantic refused.

    Of the errors (one or more per type of a union such as ``[rows, cols] or
    n``), the one about a value of the right shape wins (``board: 0`` is below
    1, ``board: [0, 5]`` has an item below 1); when the value fits no shape at
    all (``board: []``, ``board: 'x'``), the message gives the shapes the
    parameter takes (``shape``, the field's description) and an example.

    Args:
        cfg_error: ``(path, expected, found, fix) -> ConfigError``.
        errors: ``ValidationError.errors()`` of the value.
        value: the value as written.
        path: key path of the value.
        names: the problem's parameters (for "did you mean").
        shape, example: the field's description and one example, or "".
    """
    def rank(err: dict) -> int:
        kind = err["type"]
        if kind == "literal_error" and not isinstance(err.get("input"), str):
            return 1  # a number where a name is expected: a shape error
        if kind in ("missing", "too_long", "too_short"):
            return 1  # a list of the wrong length
        # a wrong type inside a list of the right length is about that item
        return 1 if kind in _SHAPE_ERRORS and not inner(err)["loc"] else 0

    def inner(err: dict) -> dict:
        loc = tuple(err["loc"])
        return {**err, "loc": loc[1:] if loc and _is_branch(loc[0]) else loc}

    best = min(errors, key=rank)
    union = any(_is_branch(e["loc"][0]) for e in errors if e["loc"])
    key = next((k for k in reversed(path) if isinstance(k, str)), "")
    if (union and shape and best["type"] == "literal_error"
            and any(rank(e) for e in errors)):
        # a name where the parameter also takes a list (move_order: '1,2', start: al):
        # say both shapes, not only the names
        listed = best["ctx"]["expected"].replace(" or ", ", ").split(",")
        close = did_you_mean(value, [c.strip().strip("'") for c in listed])
        return cfg_error(path, shape, describe(value),
                         close or (f"write e.g. {key}: {example}" if example
                                   else "see docs/config.md"))
    if rank(best) == 0 or not (union or shape):
        return from_pydantic(cfg_error, inner(best), path, names)
    found = describe(value)
    if isinstance(value, list):
        found = ("an empty list" if not value else
                 f"{found} (a list of {len(value)} item{'s' if len(value) != 1 else ''})")
    return cfg_error(path, shape or "a value of the type listed in docs/config.md", found,
                     f"write e.g. {key}: {example}" if example
                     else "see docs/config.md")


def add_param_fix(params: Any, name: str, where: str = "under fixed") -> str:
    """The fix of a required parameter left out: ``add board: [8, 8] under fixed``, with
    the parameter's first documented example (``params``: the problem's pydantic model)."""
    info = getattr(params, "model_fields", {}).get(name)
    examples = (info.examples or []) if info is not None else []
    if examples:
        return f"add {name}: {examples[0]} {where}"
    return f"add {name} {where} (its values: docs/config.md)"


def _bound_fix(kind: str, loc: KeyPath, limit: Any) -> str:
    """The fix of a number out of bounds: the key set to the nearest allowed value."""
    key = format_key_path(loc)
    if kind == "greater_than" and isinstance(limit, int):
        kind, limit = "greater_than_equal", limit + 1
    elif kind == "less_than" and isinstance(limit, int):
        kind, limit = "less_than_equal", limit - 1
    if isinstance(limit, float) and limit.is_integer():
        limit = int(limit)
    shown = f"{limit:_}" if isinstance(limit, int) else f"{limit:g}"
    side = {"greater_than": "above", "less_than": "below"}.get(kind)
    if side:
        return f"set {key} to a number {side} {shown}"
    return f"set {key} to {shown} or {'more' if kind.startswith('greater') else 'less'}"


#: An example value of each top-level section that takes a mapping.
_SECTION_EXAMPLES: dict[KeyPath, str] = {
    ("budget",): "{nodes: 1_000_000}",
    ("restarts",): "{policy: luby, unit: 10_000, on: nodes}",
}


#: The fix of a required key left out, by key path.
_MISSING_FIXES: dict[KeyPath, str] = {
    ("name",): "add name: my-sweep (a plain folder name: the results go to results/my-sweep)",
    ("problem",): "add problem: knights_tour (or n_queens, or a plug-in 'module:PROBLEM')",
}


def _number(x: Any) -> str:
    if isinstance(x, float) and x.is_integer():
        x = int(x)
    text = f"{x:,}" if isinstance(x, int) else f"{x:g}"
    return text + _WIDTHS.get(x, "")


#: Limits that are the range of a Parquet integer column.
_WIDTHS = {(1 << 31) - 1: " (stored in a 32-bit integer column)",
           (1 << 63) - 1: " (stored in a 64-bit integer column)",
           -(1 << 63): " (stored in a 64-bit integer column)"}


#: Wording and fix of a number out of bounds, by pydantic error type.
_BOUNDS = {"greater_than": ("greater than", "use a larger value"),
           "greater_than_equal": ("of at least", "use a larger value"),
           "less_than": ("less than", "use a smaller value"),
           "less_than_equal": ("of at most", "use a smaller value")}

#: Why a top-level number is bounded, by key path.
_BOUND_REASONS = {
    ("repeats",): " (repeats are numbered in a 32-bit integer column)",
    ("budget", "nodes"): " (placements; 2^62 is already no limit: leave nodes out for none)",
    ("budget", "seconds"): " (the runner's timers take at most 1,000,000 s, 11.6 days: "
                           "leave seconds out for no time limit)",
}


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
