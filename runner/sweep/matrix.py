"""GitHub Actions matrix semantics over a config's ``fixed``, ``matrix``, ``exclude``, ``include``.

The rules are GitHub's (docs.github.com, "Using a matrix for your jobs"):

1. The original combinations are the product of the ``matrix`` lists, in key
   order; a ``fixed`` parameter is a matrix list of one value, so it is an
   original value too. ``all`` (e.g. ``start: all``) is a list whose values
   depend on the combination (every square of its board); it is expanded as
   part of the product.
2. ``exclude`` is applied first, to the original combinations only: a
   combination is dropped when it matches every key of an entry (a partial
   match suffices; an entry's value may also be a list of alternatives,
   ``n: [13, 14]``).
3. ``include`` is applied to what is left, entry by entry: an entry's pairs are
   added to every combination whose original values it does not overwrite
   (values an earlier entry added may be overwritten); an entry that can be
   added to no original combination becomes a combination of its own, made of
   the fixed parameters and the entry, which later entries do not extend.

Combinations are produced in *blocks* (:class:`Block`): one per product
combination of the lists other than ``all``, holding the values of its
``all`` parameter lazily, the ones excluded and the include entries that
extend each. A block's size is plain arithmetic, so a sweep of 4,000,000 starts
is counted without being walked.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping, Sequence

__all__ = ["Block", "ExpansionError", "blocks", "combinations", "find", "same"]

#: ``parameters -> the values all stands for`` (a sequence; may be lazy).
ExpandAll = Mapping[str, Callable[[Mapping[str, Any]], Sequence[Any]]]


class ExpansionError(ValueError):
    """``all`` could not be expanded: the parameters it depends on are missing, or
    (``extends``) it is in an include entry that extends original combinations.

    Attributes:
        key: the parameter that is ``all``; missing: what its expansion lacked;
        entry: the include entry that made the combination, or None (an original one);
        extends: the entry extends combinations (all would multiply them).
    """

    def __init__(self, key: str, missing: str, entry: int | None = None,
                 extends: bool = False):
        super().__init__(f"{key}: all in include entry {entry}, which extends a combination"
                         if extends else f"{key}: all needs {missing}")
        self.key, self.missing, self.entry, self.extends = key, missing, entry, extends


def same(a: Any, b: Any) -> bool:
    """Equal as written (lists and tuples compare equal; 1 and true do not)."""
    norm = lambda x: json.dumps(x, default=list)  # noqa: E731
    return a is b or norm(a) == norm(b)


#: ``(combination, key, a, b) -> bool``: values ``a`` and ``b`` of ``key`` make the same
#: search in that combination (``board: 5`` and ``board: [5, 5]``).
Equal = Callable[[Mapping[str, Any], str, Any, Any], bool]


def _matches(value: Any, wanted: Any, equal: Callable[[Any, Any], bool] = same) -> bool:
    """An exclude value: equal, or equal to one of its alternatives when it is a list."""
    return equal(value, wanted) or (isinstance(wanted, list)
                                    and any(equal(value, x) for x in wanted))


def find(values: Sequence[Any], wanted: Any) -> int | None:
    """Index of ``wanted`` (a list also as a tuple) in ``values``, or None."""
    for candidate in (wanted, tuple(wanted)) if isinstance(wanted, list) else (wanted,):
        try:
            i = values.index(candidate)
        except (ValueError, TypeError):
            continue
        if same(values[i], wanted):
            return i
    return None


@dataclass
class Block:
    """Combinations that differ only in the value of one ``all`` parameter.

    Attributes:
        params: the combination's parameters (``params[key]`` is ``"all"``).
        src: parameter -> where its value is written (a key path), for messages.
        key: the ``all`` parameter, or None: a block of one combination.
        values: the values ``key`` takes (lazy), or ``(None,)``.
        dropped: indices of ``values`` an ``exclude`` entry dropped.
        ext: include entries that extend every value, by index in ``include``.
        var_ext: value index -> include entries that extend that value only
            (entries that name ``key``).
        added: index of the include entry this block was made of (a combination
            of its own), or None for an original combination.
    """

    params: dict
    src: dict
    key: str | None = None
    values: Sequence[Any] = (None,)
    dropped: set[int] = field(default_factory=set)
    ext: list[int] = field(default_factory=list)
    var_ext: dict[int, list[int]] = field(default_factory=dict)
    added: int | None = None

    def __len__(self) -> int:
        return len(self.values) - len(self.dropped)

    def combinations(self, include: Sequence[Mapping[str, Any]]
                     ) -> Iterator[tuple[dict, dict]]:
        """(parameters, sources) of every combination of the block, in order."""
        for i in range(len(self.values)):
            if i not in self.dropped:
                yield self.at(i, include)

    def at(self, i: int, include: Sequence[Mapping[str, Any]],
           entries: list[int] | None = None) -> tuple[dict, dict]:
        """(parameters, sources) of value ``i``, extended by the include ``entries``
        (by default those that extend it: :attr:`ext` and its :attr:`var_ext`)."""
        params, src = dict(self.params), dict(self.src)
        if self.key is not None:
            params[self.key] = self.values[i]
        if entries is None:
            entries = self.ext if i not in self.var_ext else sorted(self.ext + self.var_ext[i])
        for j in entries:
            for k, v in include[j].items():
                if k != self.key:
                    params[k] = v
                    src[k] = ("include", j, k)
        return params, src


def _expand(key: str, fn: Callable, params: Mapping[str, Any]) -> Sequence[Any]:
    try:
        return fn(params)
    except (KeyError, TypeError, ValueError) as exc:
        missing = repr(exc.args[0]) if isinstance(exc, KeyError) else str(exc)
        raise ExpansionError(key, missing) from None


def blocks(fixed: Mapping[str, Any], matrix: Mapping[str, Any],
           exclude: Sequence[Mapping[str, Any]], include: Sequence[Mapping[str, Any]],
           expand_all: ExpandAll, equal: Equal | None = None) -> Iterator[Block]:
    """The blocks of a sweep: the original combinations (exclude applied, include
    extensions attached) in product order, then one block per include entry that
    extended none.

    Args:
        fixed: parameters every original combination shares.
        matrix: parameter -> list of values, or ``"all"`` for a parameter of
            ``expand_all``.
        exclude, include: the entries, as written.
        expand_all: parameter -> function giving the values ``all`` stands for.
        equal: when two values of a key are the same for ``exclude`` (default:
            equal as written, :func:`same`); the runner passes "the same search".

    Raises:
        ExpansionError: ``all`` whose values cannot be computed from the
            combination (e.g. ``start: all`` without a board).
    """
    is_all = lambda k, v: v == "all" and k in expand_all  # noqa: E731
    listed = [k for k in matrix if not is_all(k, matrix[k])]
    all_key = next((k for k, v in {**fixed, **matrix}.items() if is_all(k, v)), None)
    original = set(fixed) | set(matrix)
    fixed_src: dict[str, tuple] = {k: ("fixed", k) for k in fixed}
    matched = [False] * len(include)
    # a value written twice in a list is one combination: walk the distinct ones, so
    # that a list of repeated values cannot multiply the walk (src keeps the first)
    firsts = [_distinct(matrix[k]) for k in listed]
    # a range (the seed range) stays lazy: 1..10^12 never sits in memory
    lists = [matrix[k] if isinstance(matrix[k], range) else [matrix[k][i] for i in idx]
             for k, idx in zip(listed, firsts)]
    # GitHub: a matrix of no keys has no original combination; include makes them all
    product = (_product([_size(v) for v in lists])
               if original or not include else iter(()))
    for idx in product:
        params, src = dict(fixed), dict(fixed_src)
        for k, values, first, i in zip(listed, lists, firsts, idx):
            params[k] = values[i]
            src[k] = ("matrix", k, first[i])
        block = Block(params, src)
        if all_key is not None:
            block.key = all_key
            block.values = _expand(all_key, expand_all[all_key], params)
            if all_key in matrix:
                src[all_key] = ("matrix", all_key)
        if not _exclude(block, exclude, equal):
            continue
        for j, entry in enumerate(include):
            if not all(same(params[k], v) for k, v in entry.items()
                       if k in original and k != block.key):
                continue
            spread = next((k for k, v in entry.items() if is_all(k, v) and k != block.key),
                          None)
            if spread is not None:  # all would have to multiply a combination it extends
                raise ExpansionError(spread, "", j, extends=True)
            if block.key is not None and block.key in entry:
                at = find(block.values, entry[block.key])
                if at is None or at in block.dropped:
                    continue
                block.var_ext.setdefault(at, []).append(j)
            else:
                block.ext.append(j)
            matched[j] = True
        yield block
    for j, entry in enumerate(include):
        if matched[j]:
            continue
        params = {**fixed, **entry}
        src = {**fixed_src, **{k: ("include", j, k) for k in entry}}
        block = Block(params, src, added=j)
        key = next((k for k, v in params.items() if is_all(k, v)), None)
        if key is not None:
            try:
                block.key, block.values = key, _expand(key, expand_all[key], params)
            except ExpansionError as exc:
                raise ExpansionError(exc.key, exc.missing, j) from None
        yield block


def _size(values: Sequence[Any]) -> int:
    """How many values a list or range holds (a range by arithmetic, whatever its size)."""
    return max(0, values.stop - values.start) if isinstance(values, range) else len(values)


def _product(sizes: Sequence[int]) -> Iterator[tuple[int, ...]]:
    """The index tuples of ``itertools.product(*(range(n) for n in sizes))``, in its
    order, made one at a time: itertools.product would first copy each range into a
    tuple (a seed range of 10^12 would fill the memory)."""
    if any(n <= 0 for n in sizes):
        return
    idx = [0] * len(sizes)
    while True:
        yield tuple(idx)
        for j in reversed(range(len(sizes))):
            idx[j] += 1
            if idx[j] < sizes[j]:
                break
            idx[j] = 0
        else:
            return


def _distinct(values: Sequence[Any]) -> Sequence[int]:
    """Indices of the first occurrence of each distinct value (as :func:`same` compares);
    a range (the seed range, distinct by construction) gives a range, lazily."""
    if isinstance(values, range):
        return range(_size(values))
    seen: set[str] = set()
    out = []
    for i, v in enumerate(values):
        key = json.dumps(v, default=list)
        if key not in seen:
            seen.add(key)
            out.append(i)
    return out


def _exclude(block: Block, exclude: Sequence[Mapping[str, Any]],
             equal: Equal | None = None) -> bool:
    """Apply ``exclude`` to an original block; False when nothing of it is left."""
    def eq(key: str) -> Callable[[Any, Any], bool]:
        if equal is None:
            return same
        return lambda a, b: same(a, b) or equal(block.params, key, a, b)

    for entry in exclude:
        if not all(_matches(block.params.get(k), v, eq(k)) for k, v in entry.items()
                   if k != block.key):
            continue
        if block.key is None or block.key not in entry:
            return False
        wanted = entry[block.key]
        for alt in [wanted] + (list(wanted) if isinstance(wanted, list) else []):
            i = find(block.values, alt)
            if i is not None:
                block.dropped.add(i)
    return len(block) > 0


def combinations(matrix: Mapping[str, Sequence[Any]], exclude: Sequence[Mapping[str, Any]] = (),
                 include: Sequence[Mapping[str, Any]] = (),
                 fixed: Mapping[str, Any] | None = None) -> list[dict]:
    """GitHub's matrix expansion of plain lists, as a list of combinations (for tests
    and for reading): ``combinations({"os": [...], "node": [...]}, exclude, include)``."""
    out: list[dict] = []
    for block in blocks(fixed or {}, matrix, exclude, include, {}):
        out.extend(params for params, _ in block.combinations(include))
    return out
