"""README.md's strategy tables are the registries' (btlab.views.docs_tables)."""

from __future__ import annotations

import pytest

from btlab.experiments.knights import solve as knights
from btlab.experiments.queens import solve as queens
from btlab.views import docs_tables

FIX = "python -m btlab.views.docs_tables --write"


def test_readme_strategy_tables_are_current():
    readme = docs_tables.README.read_text()
    try:
        current = docs_tables.between_markers(readme)
    except ValueError as exc:
        pytest.fail(f"README.md: {exc}; fix: add the markers, then run {FIX}")
    assert current == docs_tables.render(), (
        "README.md's strategy tables differ from the strategy registries; "
        f"fix: run {FIX} and commit README.md")


def test_every_strategy_has_a_row_in_registry_order():
    text = docs_tables.render()
    registries = [registry for _, registry, _ in docs_tables.PROBLEMS]
    assert registries == [knights.STRATEGIES, queens.STRATEGIES]
    for _, registry, unit in docs_tables.PROBLEMS:
        table = docs_tables.strategy_table(registry, unit)
        rows = [line.split(" | ")[0].removeprefix("| ") for line in table.splitlines()[2:]]
        assert rows == [f"`{name}`" for name in registry]
        assert table in text


def test_rows_show_the_entries_fields():
    table = docs_tables.strategy_table(queens.STRATEGIES, "n")
    bitmask = next(line for line in table.splitlines() if line.startswith("| `bitmask` |"))
    assert bitmask.startswith("| `bitmask` | python, compiled | 100,000 | yes | "
                              "`rows`: recursive, iterative, amb, bitmask | ")
    construction = next(line for line in table.splitlines()
                        if line.startswith("| `construction` |"))
    assert " | no | own tree | " in construction


def test_replace_between_markers_round_trips_and_refuses_missing_markers():
    text = f"intro\n{docs_tables.START}\nold\n{docs_tables.END}\noutro\n"
    new = docs_tables.replace_between_markers(text, "| a |\n")
    assert new == f"intro\n{docs_tables.START}\n\n| a |\n\n{docs_tables.END}\noutro\n"
    assert docs_tables.between_markers(new) == "| a |\n"
    with pytest.raises(ValueError, match="strategies:start"):
        docs_tables.between_markers("no markers here")
    with pytest.raises(ValueError):
        docs_tables.between_markers(f"{docs_tables.END}\n{docs_tables.START}\n")
