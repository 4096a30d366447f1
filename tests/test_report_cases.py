"""`btlab report A B`: several folders in one report; the hardest and censored cases, their
solutions drawn; the per-start table, sortable in the browser.

The synthetic knight's-tour folders (``test_analysis.write_synthetic``: 2 x 3 board, 3
repeats, median wall time = base x 3) hold, by start square (backtracks, placements):

    start   none                     warnsdorff
    (0,0)   10, 16 solved  3 us      2, 8 solved
    (0,1)   >=95 node_limit          1, 7 solved
    (0,2)   4, 10 solved             >=90 node_limit
    (1,0)   >=97 node_limit          >=93 node_limit
    (1,1)   0, 6 solved              0, 6 solved
    (1,2)   error                    3, 9 solved  36 us

so none's hardest finished start is (0, 0) (10 backtracks, 16 placements, 3 us) and
warnsdorff's (1, 2) (3, 9, 36 us); the censored starts: none (0, 1), (1, 0); warnsdorff
(0, 2), (1, 0).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest
from test_analysis import check_report, write_queens, write_synthetic
from test_report_shapes import html_tables

from btlab import analysis
from btlab.cli.main import main
from btlab.problems import get_problem
from btlab.views.report.cases import SORT_SCRIPT, cases_section, hardest_cases, per_start_section
from btlab.views.report.page import render_report

KNIGHTS = get_problem("knights_tour")
QUEENS = get_problem("n_queens")


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory) -> dict[str, Path]:
    return write_synthetic(tmp_path_factory.mktemp("results"))


@pytest.fixture(scope="module")
def two(synthetic) -> str:
    return render_report([synthetic["none"], synthetic["warnsdorff"]])


def section(text: str, heading: str) -> str:
    """The HTML from the ``<h2>heading`` to the next ``<h2>``."""
    start = text.index(f"<h2>{heading}")
    end = text.find("<h2>", start + 4)
    return text[start:end if end > 0 else None]


def test_two_folders_in_one_report(two, synthetic):
    parser = check_report(two)
    assert "<title>btlab report: syn-none + syn-warnsdorff</title>" in two
    ran = section(two, "What was run")
    for name in ("syn-none", "syn-warnsdorff"):
        assert f"<b>{name}</b> (<code>{synthetic[name[4:]]}</code>): config <b>{name}</b>, " \
               "18 trials, 1 run(s)" in ran
        assert f"<h2>Provenance of {name}</h2>" in two and f"<h2>Config of {name}</h2>" in two
    headline = section(two, "Headline")
    # the tables btlab show prints, once per folder: 6 starts, none: 3 solved, 2 censored, 1 error
    per_folder = headline.split("<h3>")
    assert per_folder[1].startswith("syn-none</h3>")
    assert per_folder[2].startswith("syn-warnsdorff</h3>")
    counts = html_tables(per_folder[1])[0]
    assert counts[0][:5] == ["starts", "solved", "exhausted", "censored", "errors"]
    assert counts[1][:5] == ["6", "3", "0", "2", "1"]
    assert html_tables(per_folder[2])[0][1][:5] == ["6", "4", "0", "2", "0"]
    assert "<script>" in two and 'src="' not in two.split("<script>")[1].split("</script>")[0]
    assert len(parser.images) >= 2


def test_hardest_and_censored_starts_named_with_their_values(synthetic):
    df = analysis.load([synthetic["none"], synthetic["warnsdorff"]])
    table = hardest_cases(df, KNIGHTS).set_index("heuristic")
    assert table.loc["none", "hardest"] == "(0, 0)"
    assert (table.loc["none", "backtracks"], table.loc["none", "placements"]) == (10, 16)
    assert table.loc["none", "time"] == 3_000  # median of 1, 3, 10 x 1000 ns
    assert table.loc["none", "censored_cases"] == ["(0, 1)", "(1, 0)"]
    assert table.loc["none", "errors"] == 1 and table.loc["none", "finished"] == 3
    assert table.loc["warnsdorff", "hardest"] == "(1, 2)"
    assert (table.loc["warnsdorff", "backtracks"], table.loc["warnsdorff", "time"]) == (3, 36_000)
    assert table.loc["warnsdorff", "censored_cases"] == ["(0, 2)", "(1, 0)"]
    html = cases_section(df, KNIGHTS)
    head, *rows = html_tables(html)[0]
    assert head == ["heuristic", "trials", "finished", "hardest finished start", "placements",
                    "backtracks", "time", "censored starts", "errors"]
    assert rows == [["none", "6", "3", "(0, 0)", "16", "10", "3 us", "2: (0, 1), (1, 0)", "1"],
                    ["warnsdorff", "6", "4", "(1, 2)", "9", "3", "36 us", "2: (0, 2), (1, 0)",
                     "0"]]


def test_tours_drawn_from_the_hardest_start(two):
    captions = re.findall(r"<figcaption>(The hardest finished start[^<]*)</figcaption>", two)
    assert captions == [
        "The hardest finished start for heuristic = none: (0, 0), 10 backtracks, 16 "
        "placements, 3 us.",
        "The hardest finished start for heuristic = warnsdorff: (1, 2), 3 backtracks, 9 "
        "placements, 36 us."]
    assert "Example tour" not in two and "the first solved start square" not in two


def test_per_start_table_one_row_per_start(synthetic, two):
    df = analysis.load([synthetic["none"], synthetic["warnsdorff"]])
    html = per_start_section(df, KNIGHTS)
    assert html.count('<table class="data sortable">') == 1
    top, sub, *rows = html_tables(html)[0]
    assert top == ["start", "heuristic = none", "heuristic = warnsdorff"]
    assert sub == ["status", "placements", "backtracks", "time"] * 2
    assert [r[0] for r in rows] == ["(0, 0)", "(0, 1)", "(0, 2)", "(1, 0)", "(1, 1)", "(1, 2)"]
    assert rows[1] == ["(0, 1)", "node_limit", ">=100", ">=95", ">=6 us", "solved", "7", "1",
                       "12 us"]
    assert rows[5][:5] == ["(1, 2)", "error", "-", "-", "18 us"]
    # every sortable header names its column; numbers carry their value for sorting
    assert re.findall(r'data-col="(\d+)"', html) == [str(i) for i in range(9)]
    assert '<td class="bound" data-v="95">&gt;=95</td>' in html
    assert section(two, "Every start").count("<tr>") == 2 + 6


def test_several_boards_get_one_table_each(tmp_path):
    cfg = tmp_path / "b.yaml"
    cfg.write_text(textwrap.dedent("""\
        name: boards
        problem: knights_tour
        fixed: {strategy: recursive, mode: first, heuristic: warnsdorff}
        matrix: {board: [[5, 5], [3, 4]], start: all}
        budget: {nodes: 200}
    """))
    out = tmp_path / "res"
    assert main(["run", str(cfg), "--backend", "serial", "--out", str(out), "--quiet"]) == 0
    html = per_start_section(analysis.load(out), KNIGHTS)
    assert "<h3>3 x 4 (rows, cols)</h3>" in html and "<h3>5 x 5 (rows, cols)</h3>" in html
    tables = html_tables(html)
    assert [len(t) - 2 for t in tables] == [12, 25]


def test_same_parameters_in_two_folders_grouped_by_source(tmp_path):
    folders = write_synthetic(tmp_path / "a")
    copy = tmp_path / "b" / "syn-none"
    shutil.copytree(folders["none"], copy)
    df = analysis.load([folders["none"], copy])
    table = hardest_cases(df, KNIGHTS)
    assert list(table["source"].astype(str)) == [str(folders["none"]), str(copy)]
    assert list(table["hardest"]) == ["(0, 0)", "(0, 0)"]


def test_queens_hardest_n_and_placement(tmp_path):
    folder = tmp_path / "queens"
    write_queens(folder)  # n 4..8, recursive and amb; amb censored at n = 8; nodes 3**n
    df = analysis.load(folder)
    table = hardest_cases(df, QUEENS).set_index("strategy")
    assert table.loc["recursive", "hardest"] == "8"
    assert table.loc["recursive", "backtracks"] == 3 ** 8 - 8
    assert table.loc["amb", "hardest"] == "7" and table.loc["amb", "censored_cases"] == ["8"]
    text = render_report(folder)
    check_report(text)
    captions = re.findall(r"<figcaption>(The hardest finished n[^:]*: n = \d+, [\d,]+ back)",
                          text)
    assert captions == ["The hardest finished n for strategy = recursive: n = 8, 6,553 back",
                        "The hardest finished n for strategy = amb: n = 7, 2,180 back"]
    top, sub, *rows = html_tables(section(text, "Every n"))[0]
    assert top == ["n", "strategy = recursive", "strategy = amb"]
    assert [r[0] for r in rows] == ["4", "5", "6", "7", "8"]
    assert rows[-1][5:7] == ["node_limit", f">={3 ** 8:,}"]


def test_report_of_two_folders_refuses_output_inside_either(synthetic, tmp_path, capsys):
    for folder in (synthetic["none"], synthetic["warnsdorff"]):
        out = folder / "report.html"
        assert main(["report", str(synthetic["none"]), str(synthetic["warnsdorff"]),
                     "-o", str(out)]) == 2
        assert not out.exists()
        err = capsys.readouterr().err
        assert "inside the results folder" in err and str(folder) in err
    out = tmp_path / "both.html"
    assert main(["report", str(synthetic["none"]), str(synthetic["warnsdorff"]),
                 "-o", str(out)]) == 0
    assert "syn-none + syn-warnsdorff" in out.read_text(encoding="utf-8")


def test_report_of_a_missing_folder_names_it(synthetic, tmp_path, capsys):
    missing = tmp_path / "nowhere"
    assert main(["report", str(synthetic["none"]), str(missing), "-o",
                 str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert str(missing) in err and not (tmp_path / "r.html").exists()


def test_report_of_different_problems_refused(synthetic, tmp_path, capsys):
    queens = tmp_path / "queens"
    write_queens(queens)
    out = tmp_path / "mixed.html"
    assert main(["report", str(synthetic["none"]), str(queens), "-o", str(out)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "different problems" in err
    assert "syn-none: knights_tour, queens: n_queens" in err
    assert f"btlab report {queens} -o queens.html" in err
    assert not out.exists()


CHROMIUM = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
            "--no-first-run", "--disable-background-networking", "--disable-component-update",
            "--disable-sync"]


def dump_dom(page: str, tmp_path: Path) -> str:
    cmd = [*CHROMIUM, f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", page]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                          check=False).stdout


@pytest.mark.skipif(shutil.which("chromium") is None,
                    reason="chromium not installed (Debian: apt-get install chromium)")
def test_sort_script_orders_numbers_bounds_and_blanks(tmp_path):
    page = tmp_path / "t.html"
    page.write_text(
        '<table class="data sortable"><thead><tr><th data-col="0">k</th>'
        '<th data-col="1">v</th></tr></thead><tbody>'
        '<tr><td>a</td><td data-v="120">120</td></tr>'
        '<tr><td>b</td><td>-</td></tr>'
        '<tr><td>c</td><td class="bound">&gt;=1,000</td></tr>'
        '<tr><td>d</td><td>9</td></tr>'
        f"</tbody></table><script>{SORT_SCRIPT}</script>", encoding="utf-8")
    order = {}
    for frag in ("#sort=1", "#sort=-1"):
        dom = dump_dom(page.resolve().as_uri() + frag, tmp_path)
        order[frag] = re.findall(r"<tr><td>(\w)</td>", dom)
    assert order["#sort=1"] == ["d", "a", "c", "b"]  # 9 < 120 < >=1,000; blanks last
    assert order["#sort=-1"] == ["c", "a", "d", "b"]


def test_a_glob_reports_every_folder_it_matches(synthetic, two):
    text = render_report(str(synthetic["none"].parent / "syn-*"))
    assert "<title>btlab report: syn-none + syn-warnsdorff</title>" in text
    assert section(text, "What was run").count("<li>") == 2
    for heading in ("Hardest and censored starts", "Every start"):
        assert html_tables(section(text, heading)) == html_tables(section(two, heading))


def test_one_drawing_per_distinct_solution(tmp_path):
    """Groups that find the same solution from the same start (one sweep in two folders;
    strategies of one tree; both engines) share one drawing, its caption naming them all."""
    folders = write_synthetic(tmp_path / "a")
    copy = tmp_path / "b" / "syn-none"
    shutil.copytree(folders["none"], copy)
    df = analysis.load([folders["none"], copy])
    text = cases_section(df, KNIGHTS)
    assert text.count("<figure") == 1
    captions = re.findall(r"<figcaption>(.*?)</figcaption>", text)
    assert captions == [f"The hardest finished start for source = {folders['none']}: (0, 0), "
                        f"10 backtracks, 16 placements, 3 us; the same start and solution "
                        f"for source = {copy}."]
    both = analysis.load([folders["none"], folders["warnsdorff"]])
    assert cases_section(both, KNIGHTS).count("<figure") == 2  # two solutions: two drawings
