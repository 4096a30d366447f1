"""Config text -> data with the position of every key and value.

:func:`parse_yaml` reads YAML with the safe loader only (tags that build
Python objects are refused) and records the line and column of every key and
value, so that :class:`~btlab.errors.ConfigError` can name them. (Validation
errors become messages in :mod:`btlab.config.messages`, whose names are
re-exported here.)

A config is small data, so :func:`parse_yaml` bounds what a file may expand
to before anything is built from it: at most :data:`MAX_NODES` nodes with
every alias followed (an alias bomb of a few hundred bytes would otherwise
expand to billions), nested at most :data:`MAX_DEPTH` deep. The file itself is
bounded by :data:`MAX_CONFIG_BYTES` (:func:`btlab.config.model.load_config`).
"""

from __future__ import annotations

from typing import Any

import yaml

from btlab.config.messages import describe, did_you_mean, from_pydantic, param_error
from btlab.errors import ConfigError

__all__ = ["MAX_CONFIG_BYTES", "MAX_DEPTH", "MAX_NODES", "KeyPath", "Position", "describe",
           "did_you_mean", "from_pydantic", "load_value", "param_error", "parse_yaml"]

Position = tuple[int, int]
KeyPath = tuple  # tuple[str | int, ...]

#: The largest config file read, in bytes (256 KiB; configs are a few hundred bytes,
#: and reading 256 KiB of flow lists already takes about a second).
MAX_CONFIG_BYTES = 1 << 18
#: libyaml's loader when PyYAML was built with it (about 5x faster), else PyYAML's own:
#: both are the safe loader, which builds no Python object from a tag.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
#: The most YAML nodes (mappings, lists, scalars, keys included) a config may expand
#: to, counting an aliased node once per alias that refers to it (about what 256 KiB
#: of plain flow lists holds).
MAX_NODES = 200_000
#: The deepest nesting of mappings and lists in a config (a config needs about 6).
MAX_DEPTH = 64


def _expanded_size(root: yaml.Node, source: str) -> None:
    """Refuse a node graph that expands to more than :data:`MAX_NODES` nodes or nests
    deeper than :data:`MAX_DEPTH`, in time linear in the number of distinct nodes.

    An alias is a second reference to a node already composed, so a graph of
    a few dozen nodes can stand for billions (``a: &a [x, x]``, ``b: &b [*a,
    *a]``, ...): each node's expanded size and depth are computed once, from
    its children's, without walking the expansion.

    Raises:
        ConfigError: too many nodes or too deep, located at the node where the
            bound was passed.
    """
    size: dict[int, int] = {}
    depth: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    on_path: set[int] = set()
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            kids = _children(node)
            size[key] = 1 + sum(size[id(k)] for k in kids)
            depth[key] = 1 + max((depth[id(k)] for k in kids), default=0)
            problem = ""
            if size[key] > MAX_NODES:
                problem = (f"a document that expands to more than {MAX_NODES:,} values "
                           "(aliases counted each time they are used)")
            elif depth[key] > MAX_DEPTH:
                problem = f"mappings and lists nested more than {MAX_DEPTH} deep"
            if problem:
                mark = node.start_mark
                raise ConfigError(
                    source, mark.line + 1, mark.column + 1, (),
                    f"a config of at most {MAX_NODES:,} values, nested at most {MAX_DEPTH} "
                    "deep", problem,
                    "write the values out plainly; a config needs no deep anchors and "
                    "aliases (&a / *a)") from None
            continue
        if key in size:
            continue
        if key in on_path:  # a recursive alias (&a [*a]) is infinitely large
            mark = node.start_mark
            raise ConfigError(source, mark.line + 1, mark.column + 1, (),
                              "plain YAML data", "a node that contains itself (a recursive "
                              "alias)", "remove the alias that refers to its own anchor")
        on_path.add(key)
        stack.append((node, True))
        stack.extend((k, False) for k in _children(node) if id(k) not in size)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _positions(node: yaml.Node, path: KeyPath, out: dict, source: str) -> None:
    """Record the position of every key and value below ``node``; refuse duplicate keys."""
    out.setdefault(path, (node.start_mark.line + 1, node.start_mark.column + 1))
    if isinstance(node, yaml.MappingNode):
        seen: set = set()
        for key_node, value_node in node.value:
            _check_key(key_node, path, source)
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
    if isinstance(node, yaml.ScalarNode) and node.tag in (_INT_TAG, _FLOAT_TAG, _STR_TAG):
        _check_number(node, path, source)
    if node.tag in _OBJECT_TAGS:
        mark = node.start_mark
        raise ConfigError(source, mark.line + 1, mark.column + 1, path,
                          "plain YAML data: mappings, lists, strings, numbers, booleans",
                          f"a value tagged {_OBJECT_TAGS[node.tag]}",
                          "remove the tag and write the value plainly")


#: Tags of the safe loader that build something no config value is (bytes, sets,
#: ordered pairs): refused where they stand, not turned into text or lists.
_OBJECT_TAGS = {"tag:yaml.org,2002:binary": "!!binary (bytes)",
                "tag:yaml.org,2002:set": "!!set",
                "tag:yaml.org,2002:omap": "!!omap",
                "tag:yaml.org,2002:pairs": "!!pairs"}
_STR_TAG, _MERGE_TAG = "tag:yaml.org,2002:str", "tag:yaml.org,2002:merge"
_INT_TAG, _FLOAT_TAG = "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"


def _check_number(node: yaml.ScalarNode, path: KeyPath, source: str) -> None:
    """Refuse the two YAML 1.1 number forms that silently change a value: a leading
    zero (``017`` is octal 15) and colons (``1:20`` is base 60, 80). Decimal, ``0x``
    and ``0b`` numbers and underscores (``1_000``) are read as written."""
    text = node.value.replace("_", "").lstrip("+-")
    if node.tag == _STR_TAG:  # ``09``: not octal, so YAML 1.1 makes it text (plain style:
        # None from PyYAML, "" from libyaml; quoted text is left alone)
        if node.style or not (len(text) > 1 and text.isdigit() and text[0] == "0"):
            return
        found, fix = (f"{node.value} (YAML 1.1 reads a number with a leading zero and a digit "
                      "8 or 9 as text)", f"write {node.value[:1].strip('0123456789_')}"
                      f"{text.lstrip('0') or '0'} for a number, or quote it ('{node.value}') "
                      "if it is text")
    elif ":" in text:
        found, fix = (f"{node.value} (YAML 1.1 reads it as a base-60 number)",
                      "write the number in decimal, or quote it if it is text")
    elif node.tag == _INT_TAG and len(text) > 1 and text[0] == "0" and text[1].isdigit():
        found, fix = (f"{node.value} (YAML 1.1 reads a leading zero as octal: "
                      f"{int(text, 8) if set(text) <= set('01234567') else '?'})",
                      f"write {node.value[:1].strip('0123456789_')}{text.lstrip('0') or '0'} "
                      f"for decimal, or quote it ('{node.value}') if it is text")
    else:
        return
    mark = node.start_mark
    raise ConfigError(source, mark.line + 1, mark.column + 1, path,
                      "a number written in decimal (or 0x..., 0b...)", found, fix)


def _check_key(key_node: yaml.Node, path: KeyPath, source: str) -> None:
    """Refuse a key that is not a name: a list or mapping (``? [a, b]``), or a scalar
    YAML reads as a number, boolean, null or date (``1:``, ``true:``, ``~:``). The plain
    key ``on`` (``restarts: {on: nodes}``), a boolean to YAML 1.1, is read as the name
    ``on``: the node is retagged as text."""
    if isinstance(key_node, yaml.ScalarNode) and key_node.tag in (_STR_TAG, _MERGE_TAG):
        return
    if (isinstance(key_node, yaml.ScalarNode) and key_node.tag.endswith(":bool")
            and not key_node.style and key_node.value == "on"):
        key_node.tag = _STR_TAG
        return
    mark = key_node.start_mark
    if isinstance(key_node, yaml.ScalarNode):
        kind = {"int": "a number", "float": "a number", "bool": "a boolean",
                "null": "null", "timestamp": "a date"}.get(key_node.tag.rsplit(":", 1)[-1],
                                                           f"a {key_node.tag} value")
        found = f"the key {key_node.value!r}, which YAML reads as {kind}"
        fix = ("use a key named in docs/config.md; quote it if it must "
               "be text")
    else:
        found = ("a list used as a key" if isinstance(key_node, yaml.SequenceNode)
                 else "a mapping used as a key")
        fix = "write key: value with a plain name as the key"
    raise ConfigError(source, mark.line + 1, mark.column + 1, path,
                      "keys that are names (text), e.g. board:", found, fix)


def _single_node(loader: Any, source: str, fix: str) -> Any:
    """The loader's one document as a node graph (None for an empty one).

    Raises:
        ConfigError: nesting deeper than the parser's recursion can follow.
    """
    try:
        return loader.get_single_node()
    except RecursionError:
        raise ConfigError(source, None, None, (), f"mappings and lists nested at most "
                          f"{MAX_DEPTH} deep", "nesting too deep to read", fix) from None


def load_value(text: str, source: str) -> Any:
    """One YAML value (a command-line override's) read like a config: the safe loader,
    within :data:`MAX_NODES` and :data:`MAX_DEPTH` (a value of a few hundred
    characters can hold an alias bomb too).

    Raises:
        ConfigError: over the bounds, a key that is not a name, a key given twice or
            a value tagged !!binary or !!set (expected, found and fix to be re-used).
        yaml.YAMLError: malformed YAML, or a tag that builds a Python object.
    """
    loader = yaml.SafeLoader(text)  # PyYAML's own: a value is short, its messages stable
    try:
        node = _single_node(loader, source, "write the value out plainly")
        if node is None:
            return None
        _expanded_size(node, source)
        _positions(node, (), {}, source)  # keys that are names, no bytes or sets
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _tab_indented(text: str, mark: Any) -> int:
    """The 1-based number of the line of a YAML error ``mark`` when a tab indents it, else 0."""
    lines = text.splitlines()
    if mark is None or not 0 <= mark.line < len(lines):
        return 0
    here: str = lines[mark.line]
    return mark.line + 1 if "\t" in here[:len(here) - len(here.lstrip())] else 0


def parse_yaml(text: str, source: str) -> tuple[Any, dict]:
    """YAML text -> (data, key path -> (line, column) of every key and value).

    Raises:
        ConfigError: malformed YAML, a tag that builds a Python object, a key given
            twice, a number too long to read, or a document over the bounds above.
    """
    if len(text) > MAX_CONFIG_BYTES:
        raise ConfigError(source, None, None, (), f"a config of at most {MAX_CONFIG_BYTES:,} "
                          "bytes", f"{len(text):,} characters", "give the path of a sweep config")
    loader = _LOADER(text)
    positions: dict = {}
    try:
        node = _single_node(loader, source, "write the values out plainly")
        if node is None:
            raise ConfigError(source, 1, 1, (), "a mapping with name, problem, fixed, matrix, ...",
                              "an empty file", "see configs/ for examples")
        _expanded_size(node, source)
        _positions(node, (), positions, source)
        data = loader.construct_document(node)
    except yaml.constructor.ConstructorError as exc:
        mark = exc.problem_mark or exc.context_mark
        tag = getattr(exc, "problem", "") or str(exc)
        where = (mark.line + 1, mark.column + 1) if mark else None
        # the key whose value holds the tag: the last key that starts before it
        path = max((p for p, pos in positions.items() if where and pos <= where),
                   key=lambda p: (positions[p], len(p)), default=()) if where else ()
        if "for merging" in tag:  # <<: *a where a is not a mapping
            raise ConfigError(
                source, where[0] if where else None, where[1] if where else None, path,
                "a mapping (or a list of mappings) after the merge key <<:",
                tag.strip(), "merge a mapping: <<: *name, where &name marks a mapping"
            ) from None
        raise ConfigError(
            source, where[0] if where else None, where[1] if where else None, path,
            "plain YAML data: mappings, lists, strings, numbers, booleans",
            tag.strip(),
            "remove the tag: btlab reads configs with yaml.safe_load and never builds "
            "Python objects") from None
    except ValueError as exc:  # e.g. an integer of more digits than Python converts
        raise ConfigError(source, None, None, (), "plain YAML data: mappings, lists, "
                          "strings, numbers, booleans",
                          "an integer too long to read (more than 4,300 digits)"
                          if "digits" in str(exc) else f"a value that cannot be read: {exc}",
                          "write a number that fits the key (see docs/config.md)"
                          ) from None
    except yaml.reader.ReaderError as exc:  # a control character (NUL, ...) in the text
        at = max(0, min(exc.position, len(text)))
        line = text.count("\n", 0, at) + 1
        column = at - (text.rfind("\n", 0, at) + 1) + 1
        char = exc.character if isinstance(exc.character, str) else chr(exc.character)
        raise ConfigError(source, line, column, (), "YAML text (no control characters)",
                          f"the control character U+{ord(char):04X}"
                          + (" (a NUL byte)" if char == "\0" else ""),
                          "remove it: the file holds binary data, or was saved by a tool "
                          "that wrote it") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        if "nesting depth" in problem:  # libyaml's own bound (1,000 levels)
            raise ConfigError(source, mark.line + 1 if mark else None,
                              mark.column + 1 if mark else None, (),
                              f"mappings and lists nested at most {MAX_DEPTH} deep",
                              "nesting too deep to read", "write the values out plainly"
                              ) from None
        tab_line = _tab_indented(text, mark)
        if tab_line:  # YAML indents with spaces only
            raise ConfigError(
                source, tab_line, 1, (), "well-formed YAML, indented with spaces",
                f"a tab in the indentation of line {tab_line} ({problem})",
                f"indent line {tab_line} with spaces instead of the tab") from None
        raise ConfigError(
            source, mark.line + 1 if mark else None, mark.column + 1 if mark else None, (),
            "well-formed YAML", f"a YAML syntax error: {problem}",
            "fix the syntax near that position (indentation, a missing ':' or quote)") from None
    finally:
        loader.dispose()
    return data, positions
