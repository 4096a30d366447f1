"""The estimators of ``mode: estimate``: which method, with which parameters.

A trial's ``estimator`` key names how its random probes estimate the size of
the ``count``-mode tree and its number of solutions
(:mod:`btlab.experiments.estimate` runs them):

* ``knuth`` (the default): Knuth's (1975) probes, each child drawn uniformly.
* ``importance``: probes whose child is drawn with non-uniform probabilities
  from a proposal, each probe weighted by the inverse of its probabilities
  (Knuth 1975, section 5; the sequential importance sampling of Rosenbluth &
  Rosenbluth 1955). Parameter ``beta`` >= 0, the proposal's strength.
* ``perm``: a population of ``population`` walkers steps down the tree
  together, each drawing as ``importance`` does and keeping its own weight;
  after each step, each walker that died is replaced by a copy of the
  heaviest living walker, whose weight the two then share (the enrichment of
  the pruned-enriched Rosenbluth method, P. Grassberger, Phys. Rev. E 56, 1997;
  a "go with the winners" strategy, D. Aldous and U. Vazirani, FOCS 1994), so
  the work of a shared path prefix is shared. Parameters ``population`` >= 2
  and ``beta`` (its proposal, as ``importance``'s).

:data:`METHODS` is the registry: one :class:`Method` entry per estimator,
with its parameters (:class:`Param`). A problem says which methods its
estimate function runs (:attr:`btlab.problems.spec.ProblemSpec.estimators`).
:class:`Estimator` is one method with its parameter values, written in the
``estimator`` column and in trial ids as its :meth:`Estimator.label`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

__all__ = ["DEFAULT", "KNUTH", "METHODS", "Estimator", "EstimatorError", "Method", "Param",
           "number_text"]

KNUTH = "knuth"


class EstimatorError(ValueError):
    """A bad ``estimator`` value: ``key`` (the parameter, or ``"method"``, or ``""`` for
    the whole value), what was ``expected``, what was ``found`` and a ``fix``."""

    def __init__(self, key: str, expected: str, found: str, fix: str) -> None:
        super().__init__(f"estimator{'.' + key if key else ''}: expected {expected}, "
                         f"found {found}")
        self.key, self.expected, self.found, self.fix = key, expected, found, fix


@dataclass(frozen=True)
class Param:
    """One parameter of an estimator method.

    Attributes:
        name: its key in the ``estimator`` mapping.
        kind: ``int`` or ``float`` (a float parameter takes an int too: ``beta: 1``
            is ``beta: 1.0``).
        default: its value when left out.
        low, high: the inclusive range of its values.
        doc: one line for the docs and for error messages.
    """

    name: str
    kind: type
    default: int | float
    low: int | float
    high: int | float
    doc: str

    def check(self, value: Any) -> int | float:
        """``value`` as this parameter's type.

        Raises:
            EstimatorError: a bool, a non-number, a float for an int parameter, NaN,
                infinity, or a value out of range.
        """
        expected = (f"{'a whole number' if self.kind is int else 'a number'} from "
                    f"{number_text(self.low)} to {number_text(self.high)} ({self.doc})")
        fix = f"write e.g. {self.name}: {number_text(self.default)}"
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if ok and self.kind is int and not isinstance(value, int):
            ok = False
        if ok and isinstance(value, float) and not math.isfinite(value):
            ok = False
        if ok and not self.low <= value <= self.high:
            ok = False
        if not ok:
            raise EstimatorError(self.name, expected, _found(value), fix)
        return float(value) if self.kind is float else int(value)


@dataclass(frozen=True)
class Method:
    """One estimator method of the registry :data:`METHODS`.

    Attributes:
        name: the ``method`` value (``knuth``, ``importance``, ``perm``).
        params: its parameters, in the order of its label.
        summary: one line on what it does, with its source.
    """

    name: str
    params: tuple[Param, ...]
    summary: str


_BETA = Param("beta", float, 0.5, 0.0, 100.0,
              "the proposal's strength: 0 draws children uniformly")

#: The estimator methods, by name.
METHODS: dict[str, Method] = {
    KNUTH: Method(KNUTH, (), "uniform random probes (D. E. Knuth, Math. Comp. 29, 1975)"),
    "importance": Method("importance", (_BETA,),
                         "probes drawn from a heuristic proposal, weighted by its inverse "
                         "probabilities (Knuth 1975, section 5; M. N. Rosenbluth and "
                         "A. W. Rosenbluth, J. Chem. Phys. 23, 1955)"),
    "perm": Method("perm", (Param("population", int, 100, 2, 4096,
                                  "walkers stepping down the tree together"), _BETA),
                   "a population of weighted walkers, the dead replaced by halves of the "
                   "heaviest (P. Grassberger, Phys. Rev. E 56, 1997)"),
}


@dataclass(frozen=True)
class Estimator:
    """An estimator method with its parameter values.

    Attributes:
        method: a key of :data:`METHODS`.
        values: the parameter values, one per :attr:`Method.params`, in that order.
    """

    method: str = KNUTH
    values: tuple[int | float, ...] = ()

    def __getitem__(self, name: str) -> int | float:
        """The value of parameter ``name``. Raises KeyError for a parameter the method lacks."""
        for param, value in zip(METHODS[self.method].params, self.values):
            if param.name == name:
                return value
        raise KeyError(name)

    def label(self) -> str:
        """The canonical text: the ``estimator`` column and, for a method other than
        ``knuth``, part of the trial id. ``knuth``, ``importance beta=0.5``,
        ``perm population=100 beta=0.5``: every parameter, defaults included, each
        number with every digit it has (:func:`number_text`), so two estimators never
        share a label and :meth:`from_label` gives this one back."""
        params = METHODS[self.method].params
        return " ".join([self.method, *(f"{p.name}={number_text(v)}"
                                        for p, v in zip(params, self.values))])

    @classmethod
    def from_label(cls, text: str) -> "Estimator":
        """The estimator whose :meth:`label` is ``text``.

        Raises:
            EstimatorError: text that no label reads as.
        """
        method, *rest = text.split(" ")
        pairs: dict[str, Any] = {"method": method}
        for item in rest:
            name, sep, value = item.partition("=")
            if not sep:
                raise EstimatorError("", "an estimator label such as 'importance beta=0.5'",
                                     repr(text), "write the estimator as a mapping")
            pairs[name] = float(value) if any(ch in value for ch in ".einf") else int(value)
        return cls.from_value(pairs)

    @classmethod
    def from_value(cls, value: Any) -> "Estimator":
        """The estimator a config writes: ``knuth`` (a method name without parameters),
        or a mapping ``{method: NAME, PARAM: VALUE, ...}`` (left-out parameters take
        their defaults), or None (``knuth``).

        Raises:
            EstimatorError: an unknown method, an unknown or bad parameter, or a value
                of another type; ``key`` names the offending key.
        """
        names = ", ".join(METHODS)
        if value is None:
            return DEFAULT
        if isinstance(value, str):
            if value in METHODS:
                return cls(value, tuple(p.default for p in METHODS[value].params))
            raise EstimatorError("method", f"one of {names}", repr(value),
                                 "write estimator: knuth, or a mapping such as "
                                 "{method: importance, beta: 0.5}")
        if not isinstance(value, Mapping):
            raise EstimatorError("", f"a method name ({names}) or a mapping such as "
                                 "{method: importance, beta: 0.5}", _found(value),
                                 "write estimator: {method: importance, beta: 0.5}")
        method = value.get("method")
        if method not in METHODS:
            raise EstimatorError("method", f"one of {names}",
                                 "no method" if "method" not in value else _found(method),
                                 "write method: importance (or knuth, perm)")
        params = METHODS[method].params
        known = {p.name for p in params}
        for key in value:
            if key != "method" and key not in known:
                allowed = ", ".join(sorted(known)) or "no parameters"
                raise EstimatorError(str(key), f"a parameter of {method} ({allowed})",
                                     repr(key), f"drop {key}")
        return cls(method, tuple(p.check(value[p.name]) if p.name in value else p.default
                                 for p in params))


#: The estimator of a trial that does not name one.
DEFAULT = Estimator(KNUTH, ())


def number_text(value: int | float) -> str:
    """``value`` as text that reads back as exactly that number: ``%g`` when that gives
    it back (``0.5``, ``100``), else Python's shortest round-trip form
    (``0.50000001``); a float keeps a decimal point (``1.0``)."""
    if not isinstance(value, float):
        return str(value)
    short = f"{value:g}"
    if float(short) != value:
        short = repr(value)
    return short if any(ch in short for ch in ".e") else short + ".0"


def _found(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text[:60]}{'...' if len(text) > 60 else ''}"
