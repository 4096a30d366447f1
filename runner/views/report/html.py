"""Pieces of the self-contained HTML report: escaped text, tables, embedded figures.

Every figure is an ``<img>`` whose ``src`` is a base64 ``data:`` URI, so a
report needs no other file. Used by :mod:`btlab.views.report.page` and by the problems'
report sections (:attr:`btlab.problems.spec.ProblemSpec.report`).
"""

from __future__ import annotations

import base64
import html
import io
import re
import warnings
from typing import Any, Callable

import pandas as pd
from matplotlib.figure import Figure

from btlab.errors import shown
from btlab.views import plots

#: At most this many heatmaps and drawn solutions go into one report.
MAX_PLOTS_PER_KIND = 12


def escape(value: Any) -> str:
    """``value`` as HTML text, its control characters escaped (:func:`btlab.errors.shown`:
    a report printed with ``-o -`` shows them as text too)."""
    return html.escape(shown(value, lines=True))


def table(frame: pd.DataFrame, index: bool = True) -> str:
    """A DataFrame as an HTML table; cells starting ``>=``, ``<=`` or ``unknown`` shaded."""
    text = shown(frame.to_html(classes="data", border=0, index=index, na_rep="-", escape=True),
                 lines=True)
    text = text.replace('<table border="0" class="dataframe data">', '<table class="data">')
    return re.sub(r"<td>(&gt;=|&lt;=|unknown)", r'<td class="bound">\1', text)


def figure(make: Callable[[], Figure | tuple[Figure, str]], caption: str, fmt: str = "png",
           kind: str = "wide") -> str:
    """One ``<figure>`` with the plot embedded as a data URI, or a note why it is missing.

    ``make`` returns the Figure, or (Figure, a sentence appended to the caption).
    ``kind`` sets the display width: ``heatmap`` (two a row), ``wide`` or ``board``.
    A plot that cannot be drawn for these rows (ValueError, KeyError: no trial
    to plot, a missing column) becomes a note; so does any other exception, as
    a note naming it a bug with a :class:`RuntimeWarning`, so that one plot
    never costs the whole report.
    """
    try:
        fig = make()
    except (ValueError, KeyError) as exc:
        return skipped(caption.split(".")[0], exc)
    except Exception as exc:  # noqa: BLE001 - one plot must not cost the whole report
        warnings.warn(shown(f"report figure {caption.split('.')[0]!r}: {type(exc).__name__}: "
                            f"{exc}", lines=True),
                      RuntimeWarning, stacklevel=2)
        return skipped(caption.split(".")[0] + " (a btlab bug, please report it)",
                       RuntimeError(f"{type(exc).__name__}: {exc}"))
    if isinstance(fig, tuple):
        fig, more = fig
        caption = f"{caption} {more}".strip() if more else caption
    uri = figure_data_uri(fig, fmt)
    return (f'<figure class="{kind}"><img src="{uri}" alt="{escape(caption)}">'
            f"<figcaption>{escape(caption)}</figcaption></figure>")


def figure_data_uri(fig: Figure, fmt: str = "png") -> str:
    """``data:image/png;base64,...`` (or ``image/svg+xml``) of a Figure."""
    buf = io.BytesIO()
    meta = {"Software": None} if fmt == "png" else {"Date": None}
    fig.savefig(buf, format=fmt, dpi=plots.DPI, bbox_inches="tight", metadata=meta)
    mime = "image/png" if fmt == "png" else "image/svg+xml"
    return f"data:{mime};base64,{base64.b64encode(buf.getvalue()).decode('ascii')}"


def figures(items: list[str]) -> str:
    """Figures side by side (they wrap)."""
    return '<div class="figures">' + "\n".join(items) + "</div>"


def skipped(what: str, exc: Exception) -> str:
    """A note that ``what`` is not shown, and why."""
    return f'<p class="note">{escape(what)}: not shown ({escape(str(exc).splitlines()[0])}).</p>'
