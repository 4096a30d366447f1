"""The README's strategy tables, rendered from the strategy registries.

One markdown table per built-in problem (:data:`btlab.problems.PROBLEMS`), from
its spec's strategy registry (:data:`btlab.experiments.knights.solve.STRATEGIES`,
:data:`btlab.experiments.queens.solve.STRATEGIES`): name, engines, size cap, whether
``split`` can cut it, its same-tree group (strategies in one group report equal
counters, ``docs/metrics.md``), summary and source. README.md holds the output
between the markers :data:`START` and :data:`END`; ``tests/test_docs_tables.py``
fails when it is out of date.

Usage::

    python -m btlab.views.docs_tables           # print the tables
    python -m btlab.views.docs_tables --write   # replace them in README.md
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from btlab.errors import BtlabError
from btlab.experiments.registry import Registry, Strategy
from btlab.problems.registry import PROBLEMS as BUILTIN
from btlab.views.outfile import atomic_write_text

START = "<!-- strategies:start -->"
END = "<!-- strategies:end -->"
#: The README the tables go into: the one in the folder it is run from (a checkout's root).
README = Path("README.md")

#: (title, registry, what a strategy's ``max_size`` counts) per problem, in README order.
PROBLEMS: tuple[tuple[str, Registry[Strategy], str], ...] = tuple(
    (f"{spec.title} (`problem: {name}`)", spec.strategies, spec.size_unit or spec.size_param)
    for name, spec in BUILTIN.items() if spec.strategies is not None)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _group(entry: Strategy, registry: Registry[Strategy]) -> str:
    if entry.tree is None:
        return "own tree"
    members = [name for name, e in registry.items() if e.tree == entry.tree]
    if len(members) == 1:
        return f"`{entry.tree}`"
    return f"`{entry.tree}`: " + ", ".join(members)


def strategy_table(registry: Registry[Strategy], size_unit: str) -> str:
    """One markdown table: a row per strategy of ``registry``, in registry order."""
    lines = [f"| strategy | engines | max size ({size_unit}) | splittable | same-tree group "
             "| summary | source |",
             "|---|---|---:|---|---|---|---|"]
    for name, e in registry.items():
        size = "none" if e.max_size is None else f"{e.max_size:,}"
        lines.append("| " + " | ".join([
            f"`{name}`",
            ", ".join(e.engines),
            size,
            "yes" if e.splittable else "no",
            _group(e, registry),
            _cell(e.summary),
            _cell(e.source) or "-",
        ]) + " |")
    return "\n".join(lines)


def render() -> str:
    """The text that goes between :data:`START` and :data:`END` in README.md."""
    parts = []
    for title, registry, unit in PROBLEMS:
        parts.append(f"{title}:\n\n{strategy_table(registry, unit)}")
    return "\n\n".join(parts) + "\n"


def between_markers(text: str) -> str:
    """The part of ``text`` between :data:`START` and :data:`END` (without the marker lines).

    Raises:
        ValueError: the markers are missing, repeated or out of order.
    """
    if text.count(START) != 1 or text.count(END) != 1 or text.index(START) > text.index(END):
        raise ValueError(f"expected one {START} line before one {END} line")
    inner = text.split(START, 1)[1].split(END, 1)[0]
    return inner.strip("\n") + "\n"


def replace_between_markers(text: str, tables: str) -> str:
    """``text`` with the part between the markers replaced by ``tables``."""
    between_markers(text)  # checks the markers
    head, rest = text.split(START, 1)
    tail = rest.split(END, 1)[1]
    return f"{head}{START}\n\n{tables}\n{END}{tail}"


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    tables = render()
    if args == ["--write"]:
        try:
            atomic_write_text(README, replace_between_markers(README.read_text(), tables),
                              "the strategy tables")
        except BtlabError as exc:
            print(f"docs_tables: {exc}", file=sys.stderr)
            return exc.exit_code
        print(f"wrote the strategy tables into {README}")
        return 0
    if args:
        print("usage: python -m btlab.views.docs_tables [--write]", file=sys.stderr)
        return 2
    sys.stdout.write(tables)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
