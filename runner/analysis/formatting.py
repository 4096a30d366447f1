"""Values as text, one set of formatters for the tables, the report and the analysis.

Counts with thousands separators (:func:`fmt_int`, ``>=`` before a lower bound),
any metric with its bound mark (:func:`format_value`: counters ``1,234``, timings
``12.3 ms``, ratios 3 digits), durations (:func:`format_seconds` in 3 significant
digits, :func:`fmt_ns` as the headline tables print nanoseconds) and estimates
with their standard error (:func:`fmt_estimate`). A missing value is ``-``.
:mod:`btlab.analysis.columns` and :mod:`btlab.views.tables` re-export the ones they
always offered.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

__all__ = ["fmt_estimate", "fmt_int", "fmt_ns", "format_seconds", "format_value"]



def format_value(metric: str, value: Any, bound: bool | str = False) -> str:
    """Text of one value: counters ``1,234``, timings ``12.3 ms``, ratios 3 digits.

    ``bound`` is False / ``"exact"`` (no mark), True / ``">="``, ``"<="`` or
    ``"unknown"`` (written ``unknown``: no value is shown).
    """
    if bound == "unknown":
        return "unknown"
    mark = ">=" if bound is True else ("" if bound in (False, "exact", None) else str(bound))
    if value is None or (isinstance(value, float) and math.isnan(value)) or pd.isna(value):
        return "-"
    if metric.endswith("_ns"):
        return mark + format_seconds(float(value) / 1e9)
    v = float(value)
    if not math.isfinite(v):
        return mark + str(v)
    if metric == "ratio" or (not v.is_integer() and abs(v) < 1000):
        return mark + f"{v:.3g}"
    return mark + f"{v:,.0f}"


def format_seconds(seconds: float) -> str:
    """``1.23 s``, ``45.6 ms``, ``789 us`` or ``12 ns`` (3 significant digits)."""
    s = abs(seconds)
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if s >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds * 1e9:.3g} ns"


def fmt_int(value: float | int, bound: bool = False) -> str:
    """An integer with thousands separators, prefixed ``>=`` when it is a lower bound."""
    if pd.isna(value):
        return "-"
    return (">=" if bound else "") + f"{int(round(value)):,}"


def fmt_ns(ns: float) -> str:
    """A duration in nanoseconds as a short human string (us, ms, s)."""
    if pd.isna(ns):
        return "-"
    if ns < 1e6:
        return f"{ns / 1e3:,.0f} us"
    if ns < 1e9:
        return f"{ns / 1e6:,.1f} ms"
    return f"{ns / 1e9:,.2f} s"


def fmt_estimate(value: Any, se: Any) -> str:
    """``value ± se`` with 4 significant digits (``-`` for none; ``inf`` kept)."""
    if value is None or pd.isna(value):
        return "-"
    text = _num(float(value))
    if se is None or pd.isna(se):
        return text
    return f"{text} ± {_num(float(se))}"


def _num(x: float) -> str:
    if math.isinf(x):
        return "inf"
    if x == int(x) and abs(x) < 1e7:
        return f"{int(x):,}"
    return f"{x:.4g}" if abs(x) >= 1e7 or abs(x) < 1e-3 else f"{x:,.2f}"
