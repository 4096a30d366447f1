"""Registries of strategies and heuristics: one entry per name, looked up with a clear error.

A strategy is one function plus one :class:`Strategy` entry in its problem's
registry (:data:`btlab.experiments.knights.solve.STRATEGIES`,
:data:`btlab.experiments.queens.solve.STRATEGIES`). Everything else -- the values a
config may use, the size caps, which engines run it, which budgets it honours,
whether ``split`` can cut it, which strategies must report equal counters, the
README's strategy table -- is derived from the entries (see ``docs/extending.md``).
The knight's-tour heuristics and tie-breaks are registries of the same kind
(:data:`btlab.experiments.knights.ordering.HEURISTICS`,
:data:`btlab.experiments.knights.ordering.TIE_BREAKS`).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, Callable, Generic, Iterator, Mapping, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Strategy:
    """One way of walking a problem's search tree.

    Attributes:
        name: the ``strategy`` value in configs and Parquet.
        solve: the search function; its signature is the problem's (see the
            problem module's ``STRATEGIES`` docstring).
        summary: one line for the README's strategy table.
        source: where the algorithm comes from (paper, book, OEIS entry), or
            ``""`` for a plain textbook method.
        engines: engines that run it: ``python`` (the reference) and/or
            ``compiled`` (a numba kernel with the same counters).
        max_size: the largest problem the strategy accepts (knight's tour:
            squares; N-Queens: n), or None for no cap. Caps keep a typo from
            asking for ten million Python frames.
        splittable: ``split`` may cut it into subtree tasks whose combined
            counters equal its own (:mod:`btlab.experiments.split.subtrees`).
        tree: strategies with the same ``tree`` walk the same tree in the same
            order and MUST report equal ``nodes``, ``backtracks``,
            ``dead_ends`` and ``solutions`` (``docs/metrics.md``; the
            contract suite checks it);
            ``None``: a tree of its own.
        options: names of extra parameters the strategy takes (e.g.
            ``("method",)`` for the N-Queens construction); the runner refuses
            them with any other strategy.
        modes: the modes it supports (``first``, ``count``).
        budgets: the trial budgets it honours: ``nodes`` and ``seconds`` (every
            strategy), and ``backtracks`` (``budget.backtracks``) for a depth-first
            search that counts its backtracks one at a time in tree order; a config
            giving a budget its strategy does not honour is refused.
    """

    name: str
    solve: Callable[..., Any]
    summary: str
    source: str = ""
    engines: tuple[str, ...] = ("python",)
    max_size: int | None = None
    splittable: bool = False
    tree: str | None = None
    options: tuple[str, ...] = ()
    modes: tuple[str, ...] = ("first", "count")
    budgets: tuple[str, ...] = ("nodes", "seconds")


class Registry(Generic[T], Mapping[str, T]):
    """A read-only name -> entry mapping whose lookups fail with the valid names.

    ``registry[name]`` raises :class:`KeyError`; :meth:`get_or_raise` raises
    :class:`ValueError` with the valid names and a close match.
    """

    def __init__(self, kind: str, entries: Mapping[str, T]):
        self.kind = kind
        self._entries = dict(entries)

    def __getitem__(self, name: str) -> T:
        return self._entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {list(self._entries)})"

    def get_or_raise(self, name: str) -> T:
        """The entry called ``name``.

        Raises:
            ValueError: no such entry; the message lists the valid names.
        """
        try:
            return self._entries[name]
        except (KeyError, TypeError):
            close = difflib.get_close_matches(str(name), list(self._entries), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ValueError(f"unknown {self.kind} {name!r}; expected one of "
                             f"{', '.join(self._entries)}{hint}") from None


#: Budgets of the strategies that also honour a backtrack budget.
WITH_BACKTRACKS = ("nodes", "seconds", "backtracks")


def named(kind: str, *entries: T) -> Registry[T]:
    """A registry from entries that carry their ``name``, in the order given (the order
    of tables and error messages).

    Raises:
        ValueError: two entries share a name.
    """
    names = [e.name for e in entries]  # type: ignore[attr-defined]
    if len(set(names)) != len(names):
        raise ValueError(f"duplicate {kind} names in {names}")
    return Registry(kind, dict(zip(names, entries)))


def strategies(kind: str, *entries: Strategy) -> Registry[Strategy]:
    """A strategy registry from its entries, in the order given (the order of tables)."""
    return named(kind, *entries)
