"""Stored values are printed as they are: ``[/bold]`` or ``[red]x[/red]`` is text, not markup.

rich reads ``[...]`` in a printed str, a table cell or a table title as
markup: a stray closing tag raises ``MarkupError``, a tag silently styles
and vanishes. ``btlab show``, ``report`` and ``compare`` and the tables
``btlab run`` prints at its end must show such values literally, wherever
they sit: an error message, a parameter value, a folder name.
"""

from __future__ import annotations

import io
import re
import textwrap
from pathlib import Path

import pandas as pd
import pytest
from rich.console import Console

from btlab import analysis
from btlab.cli.main import main
from btlab.views.headline import print_by_node, print_headline
from btlab.views.report.page import _Collector, rich_table_html

PLUGIN_DIR = Path(__file__).resolve().parent / "plugins"
MESSAGE = "[/bold] bad [red]x[/red] rule"
LOUD = f'''\
def loud(board, square, candidates):
    raise ValueError({MESSAGE!r} + "\\nsecond line")
'''


def flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


@pytest.fixture(scope="module")
def loud_folder(tmp_path_factory) -> Path:
    """A knight's-tour folder named ``res[red]x`` whose 2 trials of a plug-in heuristic failed
    with a message full of markup."""
    base = tmp_path_factory.mktemp("literal")
    (base / "loud_rules.py").write_text(LOUD)
    (base / "loud.yaml").write_text(textwrap.dedent("""\
        name: loud
        problem: knights_tour
        fixed: {board: [5, 5]}
        matrix:
          heuristic: [warnsdorff, "loud_rules:loud"]
          start: [[0, 0], [2, 2]]
    """))
    mp = pytest.MonkeyPatch()
    mp.chdir(base)
    mp.syspath_prepend(str(base))
    try:
        assert main(["run", "loud.yaml", "--backend", "serial", "--out", "res", "--quiet"]) == 1
    finally:
        mp.undo()
    folder = base / "res[red]x"
    (base / "res").rename(folder)
    return folder


def test_show_prints_a_markup_error_message_and_folder_name_literally(loud_folder, capsys):
    capsys.readouterr()
    assert main(["show", str(loud_folder)]) == 1          # 2 error rows
    out = capsys.readouterr().out
    assert f"{loud_folder}: 4 trials of loud (1 run(s))" in out
    assert f"2 trial(s) failed; first error:\nValueError: {MESSAGE}\n" in out
    assert "│ loud_rules:loud │      2 │      0 │         0 │        0 │      2 │" in out


def test_report_prints_them_literally(loud_folder, tmp_path, capsys):
    out = tmp_path / "r[red].html"
    assert main(["report", str(loud_folder), "-o", str(out)]) == 0
    text = out.read_text()
    assert f"<code>{loud_folder}</code>" in text
    assert "<h2>Failed trials (2)</h2>" in text
    assert text.count(f"<td>ValueError: {MESSAGE}</td>") == 2
    assert f"wrote {out} (" in capsys.readouterr().out


def test_compare_prints_them_literally(loud_folder, tmp_path, capsys):
    capsys.readouterr()
    assert main(["compare", str(loud_folder), str(loud_folder)]) == 0   # error rows: equal
    out = flat(capsys.readouterr().out)
    assert f"compared 4 trials present in both {loud_folder} and {loud_folder}" in out
    assert out.rstrip().endswith("IDENTICAL")


def rows_with_markup(folder: Path, column: str) -> pd.DataFrame:
    """The rows of ``folder`` with ``column``'s values replaced by markup-like text."""
    df = analysis.load(folder)
    values = list(pd.unique(df[column].astype("object")))
    names = dict(zip(values, ["[/bold]", "[red]x[/red]", "[bold]", "[/]"]))
    return df.assign(**{column: df[column].astype("object").map(names)})


@pytest.fixture(scope="module")
def queens_folder(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("literal_q")
    (base / "q.yaml").write_text(textwrap.dedent("""\
        name: q
        problem: n_queens
        fixed: {mode: count}
        matrix: {n: [4, 5], strategy: [recursive, iterative]}
    """))
    assert main(["run", str(base / "q.yaml"), "--backend", "serial", "--out",
                 str(base / "q"), "--quiet"]) == 0
    return base / "q"


@pytest.fixture(scope="module")
def grid_folder(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("literal_g")
    (base / "g.yaml").write_text(textwrap.dedent("""\
        name: g
        problem: "grid_path:PROBLEM"
        fixed: {mode: count, start: [0, 0]}
        matrix: {board: [[2, 2], [2, 3]]}
    """))
    mp = pytest.MonkeyPatch()
    mp.syspath_prepend(str(PLUGIN_DIR))
    try:
        assert main(["run", str(base / "g.yaml"), "--backend", "serial", "--out",
                     str(base / "g"), "--quiet"]) == 0
    finally:
        mp.undo()
    return base / "g"


@pytest.mark.parametrize("which, column", [("knights", "heuristic"), ("queens", "strategy"),
                                           ("grid", "mode")])
def test_headline_tables_take_values_literally_on_a_markup_console(
        which, column, loud_folder, queens_folder, grid_folder, monkeypatch):
    """The end-of-run tables: ``btlab run`` prints them on a console that reads markup."""
    monkeypatch.syspath_prepend(str(PLUGIN_DIR))
    folder = {"knights": loud_folder, "queens": queens_folder, "grid": grid_folder}[which]
    df = rows_with_markup(folder, column)
    if which == "grid":   # one mode: make it vary so that it is a group column
        df.loc[df.index[0], "mode"] = "[red]x[/red]"
    buf = io.StringIO()
    console = Console(file=buf, width=200, markup=True, highlight=False)
    print_headline(df, console)
    text = buf.getvalue()
    assert "[/bold]" in text and "[red]x[/red]" in text
    # the report's HTML tables take the same cells literally
    collector = _Collector()
    print_headline(df, collector)
    html = "".join(rich_table_html(t) for t in collector.items if hasattr(t, "columns"))
    assert "[/bold]" in html and "[red]x[/red]" in html
    df = df.assign(host="[/bold]host", node_id=None)
    buf.truncate(0)
    print_by_node(df, console)
    assert "[/bold]host" in buf.getvalue()


def test_plots_draw_values_literally(queens_folder):
    """A ``$`` in a value starts no mathtext (``$\\frac$`` would fail to draw)."""
    from btlab.views import plots
    from btlab.views.report.html import figure_data_uri

    df = analysis.load(queens_folder)
    names = {"recursive": r"[/bold] $\frac$", "iterative": "[red]x[/red] $1"}
    df["strategy"] = df["strategy"].astype("object").map(names)
    for fig in (plots.time_vs_nodes(df, by="strategy"),
                plots.metric_vs_size(df, "nodes", by="strategy"),
                plots.time_vs_nodes(df, strategy=r"[/bold] $\frac$")):
        assert figure_data_uri(fig, "png").startswith("data:image/png;base64,")
        texts = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
        texts.append(fig.axes[0].get_title())
        assert any(r"\$\frac\$" in t for t in texts), texts


def test_run_prints_a_folder_name_with_markup_literally(tmp_path, capsys, monkeypatch):
    """``btlab run --out 'res/x[/bold]y'`` names its folder as given, failures and all."""
    (tmp_path / "loud_rules.py").write_text(LOUD)
    (tmp_path / "loud.yaml").write_text(textwrap.dedent("""\
        name: loud
        problem: knights_tour
        fixed: {board: [5, 5]}
        matrix:
          heuristic: [warnsdorff, "loud_rules:loud"]
    """))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    out = "res/x[/bold]y[dim]z"
    assert main(["run", "loud.yaml", "--backend", "serial", "--out", out]) == 1
    text = flat(capsys.readouterr().out)
    assert f"2 trials, 0 already in {out}, 2 to run" in text
    assert f"rows written to {out}" in text
    assert "[/bold] bad [red]x[/red] rule" in text  # the failure line, as stored
    assert (tmp_path / out).is_dir()
