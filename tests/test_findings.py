"""Count results shown, and the finding first: in ``btlab run``, ``btlab show`` and the report.

The 6 x 6 count sweep of issue 25 (all 36 starts, ``mode: count``, 200,000
placements, heuristics none / warnsdorff / static_degree) holds 120 / 26,599 /
25,816 tours; its tables lead with them, marked ``>=`` (every trial censored).
The finding paragraph is checked on that sweep and on small hand-made rows
(first mode, all finished, partly censored, errors, estimates, a sibling
config for the larger budget).
"""

from __future__ import annotations

import contextlib
import io
import re
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from btlab.cli.main import main
from btlab.problems.registry import get_problem
from btlab.views.findings import finding, rerun_command, what_was_run
from btlab.views.report.page import render_report

COUNT6 = textwrap.dedent("""\
    name: count6
    problem: knights_tour
    description: All knight's tours of 8 x 8 from each of the 64 start squares, counted.
    fixed:
      board: [6, 6]
      strategy: recursive
      mode: count
      tie_break: move_order
    matrix:
      heuristic: [none, warnsdorff, static_degree]
      start: all
    budget:
      nodes: 200_000
""")

KNIGHTS = get_problem("knights_tour")


@pytest.fixture(scope="module")
def count6(tmp_path_factory) -> tuple[Path, Path, str]:
    """The 6 x 6 count sweep, run once (about 15 s serial): (config, folder, run's output)."""
    root = tmp_path_factory.mktemp("count6")
    cfg = root / "count6.yaml"
    cfg.write_text(COUNT6)
    out = root / "results"
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["run", str(cfg), "--backend", "serial", "--out", str(out),
                     "--quiet"]) == 0
    return cfg, out, buf.getvalue()


def _row(table: str, first: str) -> list[str]:
    """The cells of the printed table row whose first cell is ``first``."""
    for line in table.splitlines():
        cells = [c.strip() for c in re.split(r"[│┃]", line)[1:-1]]
        if cells and cells[0] == first:
            return cells
    raise AssertionError(f"no row {first!r} in\n{table}")


def test_count_run_leads_with_its_solutions(count6):
    _, _, text = count6
    words = " ".join(text.split())
    assert ("Knight's tour: trials by status, one row per heuristic; count mode: solutions "
            "found (>= a lower bound where censored), 'whole tree searched' a finished count "
            "(status exhausted)") in words
    first = text.index("Knight's tour: trials by status")
    header = _row(text[first:], "heuristic")
    assert header[:3] == ["heuristic", "starts", "solutions"]
    assert "solved" not in header and "0-backtrack starts" not in header
    assert "whole tree searched" in header
    solutions = {h: _row(text[first:], h)[2] for h in ("none", "warnsdorff", "static_degree")}
    assert solutions == {"none": ">=120", "warnsdorff": ">=26,599",
                         "static_degree": ">=25,816"}
    # nothing of the count tables comes before the solutions
    assert first < text.index("work (placements)")
    # the per-start grid gives solutions, censored cells marked
    grid = text[text.index("solutions by start square (heuristic=warnsdorff)"):]
    assert _row(grid, "1")[1] == ">=1,247"  # the most tours from one start, (1, 0)
    # the run ends with the finding
    last = text.rstrip().rsplit("\n\n", 1)[-1]
    assert text.rstrip().splitlines()[-1] and "Finding:" in text
    paragraph = " ".join(text[text.index("Finding:"):].split())
    assert text.index("Finding:") > text.index("next: btlab show")
    assert "Heuristic warnsdorff counts >=26,599 tours (most from (1, 0): >=1,247)" in paragraph
    assert "Heuristic static_degree counts >=25,816 tours" in paragraph
    assert "Plain move order (heuristic none) counts >=120 tours" in paragraph
    assert ("No count finished within 200,000 placements (all 108 trials censored), so every "
            "count is a lower bound.") in paragraph
    assert "budget.nodes=200_000_000" in paragraph
    assert last


def test_count_show_begins_with_the_finding(count6, capsys):
    _, out, _ = count6
    assert main(["show", str(out)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("Finding: Heuristic warnsdorff counts >=26,599 tours")
    assert ">=26,599" in _row(text, "warnsdorff")


def test_count_report_findings_contents_subtitle(count6, tmp_path):
    cfg, out, _ = count6
    html = render_report(out)
    heads = re.findall(r'<a id="([^"]+)"></a><h2>(.*?)</h2>', html)
    assert heads[0] == ("findings", "Findings")
    toc = html[html.index('<nav class="toc">'):html.index("</nav>")]
    assert [a for a in re.findall(r'href="#([^"]+)"', toc)] == [slug for slug, _ in heads]
    assert html.index('<nav class="toc">') < html.index('<h2>Headline</h2>')
    assert "Heuristic warnsdorff counts &gt;=26,599 tours" in html
    assert "<th class=\"\">solutions</th>" in html and "&gt;=26,599</td>" in html
    # the file says 8 x 8 and 64 starts; without overrides the rows' own account follows
    lead = html[html.index('<p class="lead">'):html.index("</p>", html.index('class="lead"'))]
    assert "36 starts" in lead and "rows 6, cols 6" in lead and "mode count" in lead
    # after an override the file's description is left out of the subtitle
    other = tmp_path / "five"
    assert main(["run", str(cfg), "fixed.board=[5,5]", "budget.nodes=2000",
                 "matrix.heuristic=[warnsdorff]", "--backend", "serial", "--out", str(other),
                 "--quiet"]) == 0
    lead = render_report(other)
    lead = lead[lead.index('<p class="lead">'):lead.index("</p>", lead.index('class="lead"'))]
    assert "8 x 8" not in lead and "64 start squares" not in lead
    assert "25 starts" in lead and "rows 5, cols 5" in lead
    assert "overrides: fixed.board=[5,5] budget.nodes=2000 matrix.heuristic=[warnsdorff]" in lead


# --------------------------------------------------------------------------- hand-made rows


def _rows(groups: dict[str, list[tuple[str, int, int]]], mode: str = "first",
          budget: int = 1_000_000) -> pd.DataFrame:
    """Rows of an 8 x 8 sweep: heuristic -> [(status, backtracks, solutions), ...], one
    start each (start i at (i // 8, i % 8))."""
    out = []
    for heuristic, trials in groups.items():
        for i, (status, backtracks, solutions) in enumerate(trials):
            out.append({"problem": "knights_tour", "rows": 8, "cols": 8,
                        "start_row": i // 8, "start_col": i % 8, "heuristic": heuristic,
                        "tie_break": "move_order", "strategy": "recursive", "mode": mode,
                        "budget_nodes": budget, "budget_seconds": None, "repeat": 0,
                        "status": status, "nodes": backtracks + 64,
                        "backtracks": backtracks, "solutions": solutions,
                        "wall_ns": 1000, "cpu_ns": 1000, "error": None})
    return pd.DataFrame(out)


def test_finding_of_the_main_job_shape(tmp_path):
    """The main job's finding: Warnsdorff everywhere, backtracking only from (3, 5); plain
    move order censored everywhere, so its cost and the saving are lower bounds."""
    warnsdorff = [("solved", 0, 1)] * 64
    warnsdorff[29] = ("solved", 46, 1)  # (3, 5)
    df = _rows({"none": [("node_limit", 999_950, 0)] * 64, "warnsdorff": warnsdorff})
    config = {"name": "warnsdorff-64-starts", "problem": "knights_tour",
              "fixed": {"board": [8, 8], "strategy": "recursive", "mode": "first",
                        "tie_break": "move_order"},
              "matrix": {"heuristic": ["none", "warnsdorff"], "start": "all"},
              "budget": {"nodes": 1_000_000}}
    (tmp_path / "main.yaml").write_text("name: warnsdorff-64-starts\n")
    (tmp_path / "plain.yaml").write_text(textwrap.dedent("""\
        name: plain
        problem: knights_tour
        fixed: {board: [8, 8], strategy: iterative, engine: compiled, mode: first,
                heuristic: none, tie_break: move_order}
        matrix: {start: all}
        budget: {nodes: 1_000_000_000}
    """))
    (tmp_path / "other.yaml").write_text(textwrap.dedent("""\
        name: other
        problem: knights_tour
        fixed: {board: [8, 8], mode: first, heuristic: none, tie_break: random}
        matrix: {start: all}
        budget: {nodes: 10_000_000}
    """))
    text = finding(df, KNIGHTS, config=config, source=tmp_path / "main.yaml")
    assert text.startswith("Finding: Heuristic warnsdorff finds a tour from all 64 starts and "
                           "backtracks only from (3, 5), 46 times.")
    assert ("Plain move order (heuristic none) finishes nowhere within 10^6 placements (64 of "
            "64 starts censored), so its cost, >=63,996,800 backtracks, is a lower bound."
            ) in text
    assert ("So the saving is a lower bound too: heuristic warnsdorff needs 46 backtracks in "
            "all where plain move order needs >=63,996,800, at least 1,391,235 times fewer."
            ) in text
    # the config beside it that runs the same searches at 10^9 (tie_break random does not)
    assert text.endswith(f"To run plain move order with a larger budget: btlab run "
                         f"{tmp_path / 'plain.yaml'}.")
    # no such config: the same file with overrides
    (tmp_path / "plain.yaml").unlink()
    text = finding(df, KNIGHTS, config=config, source=tmp_path / "main.yaml")
    assert text.endswith(f"btlab run {tmp_path / 'main.yaml'} 'matrix.heuristic=[none]' "
                         "budget.nodes=1_000_000_000 --out results/warnsdorff-64-starts-none-1e9.")


def test_finding_exact_partly_censored_and_errors():
    df = _rows({"none": [("solved", 10, 1), ("solved", 0, 1), ("exhausted", 5, 0),
                         ("node_limit", 1000, 0)],
                "warnsdorff": [("solved", 0, 1)] * 3 + [("error", 0, 0)]}, budget=2000)
    df.loc[df["status"] == "error", ["nodes", "backtracks", "solutions"]] = None
    df.loc[df["status"] == "error", "error"] = "ValueError: boom\n  traceback"
    text = finding(df, KNIGHTS)
    assert ("Heuristic warnsdorff finds a tour from all 3 starts without a single backtrack."
            ) in text
    assert ("Plain move order (heuristic none) finds a tour from 2 of 4 starts and backtracks "
            "only from (0, 0), 10 times and (0, 2), 5 times; 1 start has no tour (the whole "
            "tree searched); 1, "
            "from (0, 3), stopped at 2,000 placements, so its >=1,015 backtracks in all are a "
            "lower bound.") in text
    # an exact treatment against a censored baseline: the saving is a lower bound
    assert ("So the saving is a lower bound too: heuristic warnsdorff needs 0 backtracks in all "
            "where plain move order needs >=1,015, no backtrack at all.") in text
    assert text.endswith("1 of 8 trials failed (first error: ValueError: boom).")


def test_finding_of_exact_counts_and_estimates():
    df = _rows({"warnsdorff": [("exhausted", 100, 7), ("exhausted", 50, 3)]}, mode="count")
    assert finding(df, KNIGHTS) == (
        "Finding: The sweep counts 10 tours from its 2 starts, every count exact (the whole "
        "tree searched); most from (0, 0): 7.")
    est = _rows({"none": [("solved", 0, 0), ("solved", 0, 0)]}, mode="estimate")
    est = est.assign(probes=100, estimate=[1e6, 3e6], estimate_se=[3e5, 4e5],
                     solutions_estimate=[10.0, 30.0], solutions_estimate_se=[3.0, 4.0])
    text = finding(est, KNIGHTS)
    # the sums of the trials' estimates, the root of their summed squared standard errors
    # (sqrt(3^2 + 4^2) = 5) and the 95 % interval, sum +- 1.96 standard errors
    assert text.startswith(
        "Finding: Knuth's estimate, summed over 2 starts: 40 ± 5 (95 % interval 30.20 to "
        "49.80) tours in the count-mode tree of 4,000,000 ± 500,000 (95 % interval "
        "3,020,000 to 4,980,000) placements (200 probes, their own cost ")


def test_rerun_command_and_what_was_run():
    config = {"name": "q", "matrix": {"strategy": ["a", "b"]}}
    assert rerun_command(config, None, {"strategy": "a"}, 2000, KNIGHTS) == (
        "btlab run CONFIG 'matrix.strategy=[a]' budget.nodes=2_000_000 --out results/q-a-2e6")
    df = _rows({"none": [("solved", 0, 1)] * 3, "warnsdorff": [("solved", 0, 1)] * 3})
    said = what_was_run(df, KNIGHTS, ["budget.nodes=10"])
    assert said.startswith("Knight's tour, 6 trials: 3 starts (start_row x start_col); "
                           "heuristic none, warnsdorff; fixed: rows 8, cols 8")
    assert said.endswith("budget 10^6 placements; overrides: budget.nodes=10.")


def test_all_censored_heatmaps_are_sentences(count6):
    """Every start of every heuristic stopped at 200,000 placements: no heatmap of 36
    identical hatched cells, one sentence each instead."""
    _, out, _ = count6
    html = render_report(out)
    plots = html[html.index("<h3>Backtracks by start square</h3>"):]
    plots = plots[:plots.index("<h3>", 10)]
    assert 'class="heatmap"' not in plots
    said = re.findall(r"6 x 6, heuristic = (\w+): every one of its 36 start squares stopped "
                      r"at the budget, with &gt;=([\d,]+) to &gt;=([\d,]+) backtracks", plots)
    assert said == [("none", "199,587", "199,981"), ("warnsdorff", "188,557", "197,501"),
                    ("static_degree", "191,302", "196,890")]
    # the per-start table gives each start's solutions
    every = html[html.index("<h2>Every start</h2>"):]
    assert '<th data-col="3">solutions</th>' in every
    assert 'data-v="1247">&gt;=1,247</td>' in every


def test_survival_titles_and_log_axes_read_cleanly():
    from btlab.views import plots

    df = _rows({"none": [("node_limit", 999_950, 0)] * 3 + [("solved", 10, 1)] * 3,
                "warnsdorff": [("solved", 0, 1)] * 5 + [("solved", 46, 1)]})
    fig = plots.survival_curves(df, by="heuristic")
    ax = fig.axes[0]
    assert ax.get_xlabel() == "nodes (placements, log scale)"
    lines = ax.get_title().splitlines()
    assert len(lines) == 2 and not lines[1].startswith("|")
    assert lines[1].startswith("ticks mark censored trials (stopped at a budget)")
    assert plots.cactus(df, by="heuristic").axes[0].get_xlabel() == (
        "budget: nodes (placements, log scale)")
    assert plots.survival_curves(df, metric="backtracks").axes[0].get_xlabel() == (
        "backtracks (log scale)")


def test_estimate_finding_sums_starts_averages_seeds_and_keeps_boards_apart():
    # two boards, two starts each, two seeds each: per board the sum over the starts of
    # each start's mean over its seeds, with the standard error of that mean
    rows = []
    for rows_, base in ((5, 100.0), (6, 1000.0)):
        for start in (0, 1):
            for seed, value in ((1, base), (2, base + 20.0)):
                rows.append({"problem": "knights_tour", "rows": rows_, "cols": rows_,
                             "start_row": start, "start_col": 0, "mode": "estimate",
                             "status": "exhausted", "probes": 10, "seed": seed,
                             "estimate": value * 10, "estimate_se": 6.0,
                             "solutions_estimate": value, "solutions_estimate_se": 6.0,
                             "nodes": 1, "backtracks": 0, "solutions": 0, "wall_ns": 1})
    from btlab.views.findings import _estimates
    sentences = _estimates(pd.DataFrame(rows), KNIGHTS)
    assert len(sentences) == 2
    # 5 x 5: 2 x mean(100, 120) = 220, se = sqrt(2 x (36 + 36) / 4) = 6
    assert sentences[0].startswith("Knuth's estimate with rows=5, cols=5, summed over 2 "
                                   "starts (each the mean of 2 runs): 220 ± 6 ")
    assert sentences[1].startswith("Knuth's estimate with rows=6, cols=6, summed over 2 "
                                   "starts (each the mean of 2 runs): 2,020 ± 6 ")
