"""The knight's tour's headline tables and report section.

Named by :data:`btlab.problems.knights_tour.PROBLEM` (``headline``,
``report``) and loaded when first used.
"""

from __future__ import annotations

import functools

import pandas as pd
from matplotlib.figure import Figure
from rich.console import Console
from rich.table import Table
from rich.text import Text

from btlab.problems.censoring import CENSORED
from btlab.problems.knights_tour import PROBLEM
from btlab.views import plots
from btlab.views.plots.boards import (
    TOUR_ENDS,
    TOUR_FULL_MAX_SIDE,
    TOUR_FULL_MAX_SQUARES,
    tour_downsampled,
)
from btlab.views.report.html import MAX_PLOTS_PER_KIND, escape, figure, figures
from btlab.views.tables import (
    add_row,
    fmt_int,
    group_columns,
    group_label,
    is_count,
    literal,
    one_per_trial,
    reads,
    status_and_work,
)

#: Start grids are printed cell by cell up to this many columns ...
GRID_MAX_COLS = 16
#: ... and this many squares; larger boards get a few summary lines instead.
GRID_MAX_SQUARES = 256
#: The columns a start grid reads (:func:`start_grid_text`, :func:`start_grid_summary`): the
#: board, the start square, the status and the metric shown (backtracks or solutions).
GRID_COLUMNS = ("rows", "cols", "start_row", "start_col", "status", "backtracks", "solutions")

@reads(group_columns, status_and_work, *GRID_COLUMNS)
def headline(df: pd.DataFrame, console: Console) -> None:
    """Print the knight's-tour headline: a table per group, then a start-square grid each
    (backtracks; solutions in ``count`` mode)."""
    df = one_per_trial(df, PROBLEM)
    groups = group_columns(df, PROBLEM)
    counts, work, grouped = status_and_work(df, groups, PROBLEM.title, trials="starts",
                                            zero="0-backtrack starts")
    console.print(counts)
    console.print(work)
    for key, sub in grouped:
        if sub["rows"].nunique(dropna=False) != 1 or sub["cols"].nunique(dropna=False) != 1:
            continue  # one board per grid (told without a copy of the two columns)
        label = ", ".join(f"{g}={group_label(k)}" for g, k in zip(groups, key)) or "all trials"
        metric = "solutions" if is_count(sub) else "backtracks"  # count mode: its result
        console.print(start_grid_text(sub, metric, title=f"{metric} by start square ({label})"))


def grid_fits(rows: int, cols: int) -> bool:
    """Whether a rows x cols start grid is printed cell by cell (else summarised)."""
    return cols <= GRID_MAX_COLS and rows * cols <= GRID_MAX_SQUARES


@reads(*GRID_COLUMNS)
def start_grid_text(df: pd.DataFrame, metric: str, title: str = "") -> Table | Text:
    """A rows x cols table of ``metric`` by start square, or a summary of a big board.

    Censored cells are shown as ``>=N``, errors as ``err``. A board wider than
    :data:`GRID_MAX_COLS` columns or larger than :data:`GRID_MAX_SQUARES`
    squares gets :func:`start_grid_summary` instead (a million-square grid
    is not readable and prints megabytes).
    """
    rows, cols = int(df["rows"].iloc[0]), int(df["cols"].iloc[0])
    if not grid_fits(rows, cols):
        return start_grid_summary(df, metric, title)
    cells = [["" for _ in range(cols)] for _ in range(rows)]
    # the four columns read, not every column (iterating a categorical lists it whole)
    for rec in df[["start_row", "start_col", "status", metric]].itertuples(index=False):
        r, c = int(rec.start_row), int(rec.start_col)
        if rec.status == "error":
            cells[r][c] = "err"
        else:
            cells[r][c] = fmt_int(getattr(rec, metric), rec.status in CENSORED)
    grid = Table(title=literal(title), title_justify="left", show_lines=False)
    grid.add_column("row\\col", justify="right", style="dim")
    for c in range(cols):
        grid.add_column(str(c), justify="right")
    for r in range(rows):
        add_row(grid, str(r), *cells[r])
    return grid


@reads(*GRID_COLUMNS)
def start_grid_summary(df: pd.DataFrame, metric: str, title: str = "") -> Text:
    """A few lines about ``metric`` by start square, for boards too big to print as a grid.

    The starts run out of the board's squares, min / median / max of the
    metric (``>=`` when a censored trial makes it a lower bound), the worst
    start square and the number of errors.
    """
    rows, cols = int(df["rows"].iloc[0]), int(df["cols"].iloc[0])
    status = df["status"].astype("object")
    ok = df[status != "error"]
    starts = df[["start_row", "start_col"]].drop_duplicates().shape[0]
    lines = [title] if title else []
    lines.append(f"  {rows:,} x {cols:,} board: grid not printed (over {GRID_MAX_COLS} columns "
                 f"or {GRID_MAX_SQUARES} squares); {starts:,} of {rows * cols:,} start squares run")
    if len(ok):
        values = ok[metric].astype("float64")
        censored = ok["status"].astype("object").isin(CENSORED)
        lo, hi = values.min(), values.max()
        median = values.median()
        # a censored value is a lower bound: it bounds the max, and the min or
        # median when it is at or below them (it could still move them up)
        lo_bound = bool(censored[values == lo].any())
        med_bound = bool(censored[values <= median].any())
        hi_bound = bool(censored.any())
        worst = ok.loc[values.idxmax()]
        lines.append(f"  {metric}: min {fmt_int(lo, lo_bound)}, median "
                     f"{fmt_int(median, med_bound)}, max {fmt_int(hi, hi_bound)}; worst start "
                     f"({int(worst['start_row'])}, {int(worst['start_col'])}): "
                     f"{fmt_int(worst[metric], worst['status'] in CENSORED)}")
    errors = int((status == "error").sum())
    if errors:
        lines.append(f"  {errors:,} start(s) failed (err)")
    return Text("\n".join(lines))


def _tour_note(rows: int, cols: int) -> str:
    """The caption's note on a tour drawn downsampled (big boards), or nothing."""
    if not tour_downsampled(rows, cols):
        return ""
    return (f" Downsampled: the {rows:,} x {cols:,} board has more than "
            f"{TOUR_FULL_MAX_SQUARES:,} squares or {TOUR_FULL_MAX_SIDE} rows or columns, so "
            "the squares are shown in blocks coloured by the mean move number at which the "
            f"tour visits them, and only the first and last {TOUR_ENDS} moves are drawn as "
            "a path.")


def solution_figure(row) -> tuple[Figure, str]:
    """The tour of a results row drawn (:func:`btlab.views.plots.knight_tour`), and the caption's
    note when the board is drawn downsampled ("" otherwise)."""
    return plots.knight_tour(row), _tour_note(int(row["rows"]), int(row["cols"])).strip()


def _all_censored(sub: pd.DataFrame, rows: int, cols: int, labels: list[str],
                  key: tuple) -> str:
    """The sentence that stands for a heatmap whose every start stopped at a budget (all
    its cells hatched lower bounds), or "" when some start finished or failed."""
    status = sub["status"].astype("object")
    if sub.empty or not status.isin(CENSORED).all():
        return ""
    values = sub["backtracks"].astype("float64")
    spread = (f">={fmt_int(values.min())}" if values.min() == values.max()
              else f">={fmt_int(values.min())} to >={fmt_int(values.max())}")
    what = ", ".join(f"{k} = {v}" for k, v in zip(labels, key)) or "all trials"
    return (f"{rows} x {cols}, {what}: every one of its {len(sub):,} start squares stopped "
            f"at the budget, with {spread} backtracks (lower bounds), so its heatmap, "
            f"{len(sub):,} hatched cells, is not drawn.")


def report(df: pd.DataFrame) -> str:
    """The report's plots: backtracks by start square, work and time (HTML). The tours of the
    hardest start squares are drawn by :mod:`btlab.views.report.cases` (:func:`solution_figure`)."""
    parts = ["<h2>Plots</h2>"]
    labels = [c for c in ("heuristic", "tie_break", "strategy", "mode", "move_order", "closed",
                          "engine", "source") if c in df.columns
              and df[c].nunique(dropna=False) > 1]
    boards = df[["rows", "cols"]].drop_duplicates().sort_values(["rows", "cols"])
    heatmaps: list[str] = []
    notes: list[str] = []
    for rows, cols in boards.itertuples(index=False):
        board = df[(df["rows"] == rows) & (df["cols"] == cols)]
        if len(board[["start_row", "start_col"]].drop_duplicates()) < 2:
            continue
        ok = board[board["status"].astype("object") != "error"]["backtracks"].dropna()
        vmax = float(ok.max()) if len(ok) else None
        block = plots.heatmap_block(int(rows), int(cols))
        shrunk = (f" Downsampled: the board has more than {plots.HEATMAP_MAX_SIDE} rows or "
                  f"columns, so each cell is the largest of a {block} x {block} block of start "
                  "squares (hatched if any of them is a lower bound)." if block > 1 else "")
        groups = board.groupby(labels, observed=True, sort=True) if labels else [((), board)]
        for key, sub in groups:
            if len(heatmaps) >= MAX_PLOTS_PER_KIND:
                break
            key = key if isinstance(key, tuple) else (key,)
            filters = {"rows": int(rows), "cols": int(cols), **dict(zip(labels, key))}
            said = _all_censored(sub, int(rows), int(cols), labels, key)
            if said:  # every cell hatched at the budget: a sentence says as much
                notes.append(said)
                continue
            heatmaps.append(figure(
                functools.partial(plots.heatmap, df, "backtracks", vmax=vmax, **filters),
                f"Backtracks by start square on {rows} x {cols}, "
                + (", ".join(f"{k} = {v}" for k, v in zip(labels, key)) or "all trials")
                + ". Log colour scale shared by this board's heatmaps; hatched cells stopped at "
                "a budget (lower bounds)." + shrunk, "png", "heatmap"))
    if heatmaps or notes:
        parts.append("<h3>Backtracks by start square</h3>")
        parts.extend(f'<p class="note">{escape(n)}</p>' for n in notes)
    if heatmaps:
        parts.append(figures(heatmaps))
    scaling = []
    if len(boards) > 2:
        by = next((c for c in ("heuristic", "strategy", "tie_break") if c in labels), None)
        scaling.append(figure(lambda: plots.metric_vs_size(df, "backtracks", by=by),
                              "Backtracks against board size, median over start squares "
                              "(band: min to max; open triangles: lower bounds).", "svg"))
        scaling.append(figure(lambda: plots.metric_vs_size(df, "wall_ns", by=by),
                              "Wall time against board size.", "svg"))
    scaling.append(figure(lambda: plots.time_vs_nodes(df),
                          "Wall time against nodes, one point per trial (repeats: median "
                          "time). The dashed line is the median speed; points above it are "
                          "slower per node.", "png"))
    parts.append("<h3>Work and time</h3>")
    parts.append(figures(scaling))
    return "\n".join(parts)
