"""Pairing on the search, the report's pairwise comparisons and survival view, their plots.

Built DataFrames only (no runs): the knight's tour and N-Queens rows as
:func:`btlab.analysis.load` returns them, with the columns these functions read.
"""

from __future__ import annotations

import re

import pandas as pd
import pytest

from btlab import analysis
from btlab.analysis.search_keys import SEED, TREE, one_per_search, search_columns, with_keys
from btlab.problems import KNIGHTS_TOUR, N_QUEENS
from btlab.views import plots
from btlab.views.plots.survival import CENSOR_MARK
from btlab.views.report.pairs import pairs_section, plan_pairs
from btlab.views.report.survival import group_columns, survival_section


def knights(heuristic: str, results: list[tuple[str, int]], *, budget: int = 1_000,
            strategy: str = "recursive", engine: str = "python", source: str = "main",
            cols: int = 8) -> pd.DataFrame:
    """One row per start square (0, 0), (0, 1), ... on an 8 x ``cols`` board:
    ``results`` gives each start's (status, nodes); backtracks = nodes - 64."""
    n = len(results)
    return pd.DataFrame({
        "source": source, "problem": "knights_tour", "rows": 8, "cols": cols,
        "start_row": [i // cols for i in range(n)], "start_col": [i % cols for i in range(n)],
        "heuristic": heuristic, "tie_break": "move_order", "strategy": strategy,
        "mode": "first", "move_order": "default", "closed": False, "engine": engine,
        "budget_nodes": budget, "seed": 2026, "repeat": 0,
        "status": [s for s, _ in results], "nodes": [v for _, v in results],
        "backtracks": [max(v - 64, 0) for _, v in results],
        "wall_ns": [1000 * v for _, v in results],
    })


def queens(strategy: str, nodes: list[int], engine: str = "python") -> pd.DataFrame:
    return pd.DataFrame({
        "problem": "n_queens", "n": list(range(4, 4 + len(nodes))), "strategy": strategy,
        "mode": "first", "unique": False, "method": "none", "engine": engine,
        "budget_nodes": 10**6, "seed": 1, "repeat": 0, "status": "solved", "nodes": nodes,
        "backtracks": nodes, "wall_ns": [10 * v for v in nodes],
    })


SOLVED = "solved"
CUT = "node_limit"


@pytest.fixture
def main_job() -> pd.DataFrame:
    """The main job in small: plain move order censored from every start, Warnsdorff
    finished everywhere, static_degree finished on 5 of 6 starts."""
    return pd.concat([
        knights("none", [(CUT, 1_000)] * 6),
        knights("warnsdorff", [(SOLVED, 64), (SOLVED, 64), (SOLVED, 110), (SOLVED, 64),
                               (SOLVED, 70), (SOLVED, 64)]),
        knights("static_degree", [(SOLVED, 300), (SOLVED, 64), (CUT, 1_000), (SOLVED, 900),
                                  (SOLVED, 70), (SOLVED, 128)]),
    ], ignore_index=True)


# --------------------------------------------------------------------------- pairing keys


def test_pairing_keys_per_problem():
    k = with_keys(knights("none", [(SOLVED, 64)] * 2))
    assert search_columns(k) == ["problem", "rows", "cols", "start_row", "start_col",
                                 "heuristic", "tie_break", "mode", "move_order", "closed", TREE,
                                 SEED]
    assert "engine" not in search_columns(k) and "budget_nodes" not in search_columns(k)
    assert search_columns(k, exclude=["heuristic"])[-7:] == [
        "start_col", "tie_break", "mode", "move_order", "closed", TREE, SEED]
    q = with_keys(pd.concat([queens(s, [1, 2]) for s in
                             ("brute_force", "recursive", "iterative", "construction")]))
    # N-Queens draws only in mode estimate (random probes): the seed key is None otherwise
    assert search_columns(q) == ["problem", "n", TREE, "mode", "unique", "method", SEED]
    assert search_columns(q, exclude=["strategy"]) == ["problem", "n", "mode", "unique", "method",
                                                       SEED]
    assert q[SEED].isna().all()
    assert dict(zip(q["strategy"], q[TREE])) == {
        "brute_force": "brute", "recursive": "rows", "iterative": "rows",
        "construction": "construction"}
    # every knight's-tour strategy walks one tree: a run of another strategy on another
    # engine is the same search
    both = pd.concat([knights("none", [(CUT, 1_000)]),
                      knights("none", [(SOLVED, 5_000)], strategy="iterative", engine="compiled",
                              budget=10**9, source="plain")])
    assert one_per_search(both)["nodes"].tolist() == [5_000]


def test_a_search_that_draws_pairs_on_its_seed():
    """A random tie-break is a search of its seed: seeds 1 and 2 are two searches; the
    move-order tie-break is one search whatever the config's seed."""
    def runs(tie_break, seed, nodes):
        return knights("warnsdorff", [(SOLVED, nodes)]).assign(tie_break=tie_break, seed=seed)

    df = pd.concat([runs("random", 1, 70), runs("random", 2, 90),
                    runs("move_order", 1, 64), runs("move_order", 2, 64)], ignore_index=True)
    keyed = with_keys(df)
    assert keyed[SEED].tolist() == [1, 2, None, None]
    assert one_per_search(df)["nodes"].tolist() == [70, 90, 64]
    # both sides draw: matched seed by seed; one side draws: matched by start alone
    static = pd.concat([runs("random", 1, 300), runs("random", 2, 500)]).assign(
        heuristic="static_degree")
    both = pd.concat([df.iloc[:2], static], ignore_index=True)
    cmp = analysis.compare(both, {"heuristic": "static_degree"}, {"heuristic": "warnsdorff"})
    assert SEED in cmp.on and cmp.trials["reduction"].tolist() == [300 - 70, 500 - 90]
    one = analysis.compare(df.iloc[1:3], {"tie_break": "move_order"}, {"tie_break": "random"})
    assert SEED not in one.on and one.trials["reduction"].tolist() == [64 - 90]
    assert not N_QUEENS.seeded({"mode": "count"}) and N_QUEENS.seeded({"mode": "estimate"})
    assert with_keys(queens("recursive", [1]))[SEED].isna().all()


def test_queens_strategies_pair_by_tree():
    df = pd.concat([queens("brute_force", [256, 3125, 46656]), queens("recursive", [16, 15, 31]),
                    queens("iterative", [16, 15, 31])], ignore_index=True)
    pairs = {(p.baseline, p.treatment): p.search for p in plan_pairs(df, N_QUEENS)}
    assert pairs == {("recursive", "brute_force"): True, ("recursive", "iterative"): False,
                     ("brute_force", "iterative"): True}
    cmp = analysis.compare(df, {"strategy": "brute_force"}, {"strategy": "recursive"},
                           metric="nodes")
    assert cmp.trials["reduction"].tolist() == [240, 3110, 46625]
    assert TREE not in cmp.on and "engine" not in cmp.on


def test_most_informative_row_across_two_budgets():
    """The main job's plain move order at 10^3 and a compiled run of it at 10^9 from another
    folder: per start the finished row, else the larger bound; a start only the small
    budget ran stays that bound."""
    df = pd.concat([
        knights("none", [(CUT, 1_000), (CUT, 1_000), (CUT, 1_000)]),
        knights("none", [(SOLVED, 5_000), (CUT, 10**9)], strategy="iterative",
                engine="compiled", budget=10**9, source="plain"),
        knights("warnsdorff", [(SOLVED, 64), (SOLVED, 64), (SOLVED, 70)]),
    ], ignore_index=True)
    cmp = analysis.compare(df, {"heuristic": "none"}, {"heuristic": "warnsdorff"},
                           metric="nodes")
    t = cmp.trials.set_index("start_col")
    assert t["baseline"].tolist() == [5_000, 10**9, 1_000]
    assert t["baseline_source"].tolist() == ["plain", "plain", "main"]
    assert t["kind"].astype(str).tolist() == ["exact", "baseline censored", "baseline censored"]
    assert t["reduction_bound"].astype(str).tolist() == ["exact", ">=", ">="]
    assert cmp.collapsed == {"baseline": 2, "treatment": 0}
    assert cmp.unmatched == {"baseline": 0, "treatment": 0}
    # pairing on every parameter (the old way, and timings' default) keeps them apart
    apart = analysis.compare(df, {"heuristic": "none"}, {"heuristic": "warnsdorff"},
                             metric="nodes", on="all")
    assert len(apart.trials) == 3 and apart.unmatched["baseline"] == 2
    assert apart.trials["baseline"].tolist() == [1_000, 1_000, 1_000]


# --------------------------------------------------------------------------- report section


def test_three_heuristic_pairs(main_job):
    pairs = plan_pairs(main_job, KNIGHTS_TOUR)
    assert [(p.column, p.baseline, p.treatment, p.search) for p in pairs] == [
        ("heuristic", "none", "warnsdorff", True), ("heuristic", "none", "static_degree", True),
        ("heuristic", "warnsdorff", "static_degree", True)]
    assert all(p.metrics == ("backtracks", "nodes") and not p.context for p in pairs)


def test_all_censored_baseline_is_one_sentence(main_job):
    text = pairs_section(main_job, KNIGHTS_TOUR)
    assert ("<li>plain move order (none): no start finished within 1,000 placements; "
            "warnsdorff: all 6 within 110</li>") in text
    assert ("<li>plain move order (none): no start finished within 1,000 placements; "
            "static_degree: 5 of 6 within 900, the other 1 censored too</li>") in text
    # neither gets a table or a heatmap; the informative pair does
    assert "against plain move order" not in text
    assert text.count("<h3>heuristic:") == 1


def test_a_folder_whose_baseline_never_finished_keeps_its_sentence(main_job):
    """Main job (plain move order censored at 10^3 everywhere) plus a folder of plain move
    order at 10^9 that finishes 2 of 6 starts: the comparison pairs Warnsdorff with the
    10^9 runs (a table, not a sentence), and the main job's own all-censored comparison is
    still said in one sentence naming its folder."""
    deep = knights("none", [(SOLVED, 5_000), (CUT, 10**9), (CUT, 10**9), (SOLVED, 70_000),
                            (CUT, 10**9), (CUT, 10**9)],
                   strategy="iterative", engine="compiled", budget=10**9, source="plain")
    text = pairs_section(pd.concat([main_job, deep], ignore_index=True), KNIGHTS_TOUR)
    assert ("<li>plain move order (none), in folder main alone: no start finished within 1,000 "
            "placements; warnsdorff: all 6 within 110</li>") in text
    assert ("<li>plain move order (none), in folder main alone: no start finished within 1,000 "
            "placements; static_degree: 5 of 6 within 900, the other 1 censored too</li>") in text
    assert "<h3>heuristic: warnsdorff against plain move order (none)</h3>" in text
    assert "6 paired trials: 2 exact, 4 baseline censored. Set aside for runs of the same " \
        "searches that finished or ran further (another budget or folder): 6 baseline " \
        "run(s)." in text
    # the plain folder alone holds no Warnsdorff rows: no sentence for it
    assert ", in folder plain alone:" not in text


def test_static_degree_against_warnsdorff_exact_pairs(main_job):
    text = pairs_section(main_job, KNIGHTS_TOUR)
    assert "<h3>heuristic: warnsdorff against static_degree</h3>" in text
    assert "6 paired trials: 5 exact, 1 baseline censored." in text
    cmp = analysis.compare(main_job, {"heuristic": "static_degree"},
                           {"heuristic": "warnsdorff"}, metric="backtracks")
    assert cmp.totals.loc["exact", "trials"] == 5
    # exact backtracks: static_degree 236 + 0 + 836 + 6 + 64, warnsdorff 0 + 0 + 0 + 6 + 0
    assert (cmp.totals.loc["exact", "baseline"], cmp.totals.loc["exact", "treatment"]) == \
        (1_142, 6)
    cells = re.findall(r"<td>exact</td>\s*<td>(\d+)</td>\s*<td>([\d,]+)</td>", text)
    assert cells[0] == ("5", "1,142")
    assert text.count('<figure class="heatmap">') == 1  # the reduction heatmap


def test_exact_comparisons_come_first():
    df = pd.concat([
        knights("none", [(SOLVED, 900), (CUT, 1_000)]),
        knights("warnsdorff", [(SOLVED, 64), (SOLVED, 64)]),
        knights("static_degree", [(SOLVED, 100), (SOLVED, 64)]),
    ], ignore_index=True)
    text = pairs_section(df, KNIGHTS_TOUR)
    heads = re.findall(r"<h3>heuristic: (.*?)</h3>", text)
    assert heads[0] == "warnsdorff against static_degree"  # 2 exact pairs, the others 1
    assert set(heads[1:]) == {"warnsdorff against plain move order (none)",
                              "static_degree against plain move order (none)"}


# --------------------------------------------------------------------------- plots


def test_survival_curves_lines_and_censor_marks(main_job):
    fig = plots.survival_curves(main_job, by="heuristic")
    ax = fig.axes[0]
    curves = [line for line in ax.lines if not line.get_label().startswith("_")]
    marks = [line for line in ax.lines if line.get_gid() == CENSOR_MARK]
    assert [c.get_label() for c in curves] == ["none (n = 6)", "warnsdorff (n = 6)",
                                               "static_degree (n = 6)"]
    # none: 6 censored at one value; static_degree: 1; warnsdorff: none
    assert [len(m.get_xdata()) for m in marks] == [1, 1]
    assert [m.get_xdata()[0] for m in marks] == [1_000, 1_000]
    assert ax.get_xscale() == ax.get_yscale() == "log"
    # static_degree's curve ends at 1/6 (5 of 6 finished: the censored one stays)
    static = curves[2]
    assert static.get_ydata()[-1] == pytest.approx(1 / 6)


def test_cactus_lines(main_job):
    fig = plots.cactus(main_job, by="heuristic")
    lines = fig.axes[0].lines
    assert [line.get_label() for line in lines] == [
        "none: 0 of 6 finished", "warnsdorff: 6 of 6 finished", "static_degree: 5 of 6 finished"]
    assert [line.get_ydata()[-1] for line in lines] == [0, 6, 5]
    assert lines[1].get_xdata()[-1] == 110  # the last Warnsdorff start finished at 110
    pct = plots.cactus(main_job, by="heuristic", percent=True).axes[0].lines
    assert pct[2].get_ydata()[-1] == pytest.approx(500 / 6)


def test_survival_section(main_job):
    assert group_columns(main_job, KNIGHTS_TOUR) == ["heuristic"]
    text = survival_section(main_job, KNIGHTS_TOUR)
    assert text.count("<img") == 2
    assert "exponential Greenwood" in text and "log(-log S)" in text
    assert "<td>none</td>\n      <td>not reached</td>" in text
    assert text.count("<td>warnsdorff</td>") == 1 + 2  # quantile row, 2 tests
    lr = re.search(r"<h3>Log-rank tests</h3>.*", text, re.S).group(0)
    assert lr.count("<tr>") == 3  # the three heuristic pairs (the header row is styled)


def test_pairs_differ_in_one_treatment_the_others_held():
    """Plain move order has only the move-order tie-break; Warnsdorff has two: heuristic
    pairs within one tie-break, tie-break pairs within one heuristic."""
    random = knights("warnsdorff", [(SOLVED, 64), (SOLVED, 80)]).assign(tie_break="random")
    df = pd.concat([knights("none", [(CUT, 1_000)] * 2),
                    knights("warnsdorff", [(SOLVED, 64), (SOLVED, 70)]), random],
                   ignore_index=True)
    pairs = [(p.column, p.baseline, p.treatment, p.context)
             for p in plan_pairs(df, KNIGHTS_TOUR)]
    assert pairs == [("heuristic", "none", "warnsdorff", {"tie_break": "move_order"}),
                     ("tie_break", "move_order", "random", {"heuristic": "warnsdorff"})]
    text = pairs_section(df, KNIGHTS_TOUR)
    assert ("plain move order (none) (tie_break = move_order): no start finished within "
            "1,000 placements; warnsdorff: all 2 within 70") in text
    assert "<h3>tie_break: random against move_order (heuristic = warnsdorff)</h3>" in text


def test_nullable_counters_categories_and_censored_column(main_job):
    """The columns as analysis.load gives them: Int64 counters, categoricals, ``censored``."""
    df = main_job.copy()
    for col in ("nodes", "backtracks", "wall_ns", "budget_nodes", "rows", "cols",
                "start_row", "start_col"):
        df[col] = df[col].astype("Int64")
    df.insert(df.columns.get_loc("status") + 1, "censored", df["status"] == CUT)
    df["heuristic"] = pd.Categorical(df["heuristic"],
                                     categories=["none", "warnsdorff", "static_degree"])
    df["status"] = df["status"].astype("category")
    text = pairs_section(df, KNIGHTS_TOUR)
    assert "warnsdorff: all 6 within 110" in text and "6 paired trials: 5 exact" in text
    assert survival_section(df, KNIGHTS_TOUR).count("<img") == 2


def test_sentence_counts_censored_and_failed_treatment_trials():
    df = pd.concat([knights("none", [(CUT, 1_000)] * 4),
                    knights("warnsdorff", [(SOLVED, 64), (SOLVED, 90), (CUT, 1_000),
                                           ("error", 0)])], ignore_index=True)
    text = pairs_section(df, KNIGHTS_TOUR)
    assert ("plain move order (none): no start finished within 1,000 placements; "
            "warnsdorff: 2 of 4 within 90, 1 censored, 1 failed") in text


def test_reduction_heatmap_writes_bounds_and_unknown_cells():
    df = pd.concat([knights("none", [(SOLVED, 900), (CUT, 1_000), (CUT, 1_000)]),
                    knights("static_degree", [(SOLVED, 100), (SOLVED, 64), (CUT, 1_000)])],
                   ignore_index=True)
    cmp = analysis.compare(df, {"heuristic": "none"}, {"heuristic": "static_degree"})
    fig = plots.heatmap(cmp.trials, "reduction")
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert texts == ["800", "≥936", "?"]  # exact, baseline censored, both censored


def test_queens_trees_compared_on_counters_and_time():
    df = pd.concat([queens("brute_force", [256, 3125, 46656]), queens("recursive", [16, 15, 31]),
                    queens("iterative", [16, 15, 31])], ignore_index=True)
    text = pairs_section(df, N_QUEENS)
    heads = re.findall(r"<h3>(.*?)</h3>", text)
    assert heads == ["strategy: brute_force against recursive",
                     "strategy: iterative against brute_force", "How the search was run",
                     "strategy: iterative against recursive"]
    same_tree = text.split("How the search was run")[1]
    assert "<b>wall time</b>" in same_tree and "nodes (placements)" not in same_tree


def test_one_per_search_keeps_the_order_of_first_appearance():
    """The main job's groups first: plain move order's 10^9 rows come from a later folder,
    but the group stays where the main job put it (config order)."""
    df = pd.concat([knights("none", [(CUT, 1_000)] * 2),
                    knights("warnsdorff", [(SOLVED, 64)] * 2),
                    knights("none", [(SOLVED, 5_000), (CUT, 10**9)], budget=10**9,
                            source="plain")], ignore_index=True)
    rows = one_per_search(df)
    assert rows["heuristic"].tolist() == ["none", "none", "warnsdorff", "warnsdorff"]
    assert rows["nodes"].tolist() == [5_000, 10**9, 64, 64]
    fig = plots.survival_curves(rows, by="heuristic")
    assert fig.axes[0].lines[0].get_label() == "none (n = 2)"


def test_timings_of_one_sweep_in_two_folders_pair_within_each_folder():
    """The same N-Queens sweep run into two folders (another budget, say): the timing
    comparisons pair each folder's trials with its own, not "not shown"; folders that do
    not repeat a trial still pair across folders."""
    a = pd.concat([queens("recursive", [16, 15, 31]), queens("iterative", [16, 15, 31])],
                  ignore_index=True).assign(source="a")
    b = a.assign(source="b", budget_nodes=10**7,
                 wall_ns=lambda d: d["wall_ns"] * 2)
    text = pairs_section(pd.concat([a, b], ignore_index=True), N_QUEENS)
    assert "not shown" not in text
    assert "strategy: iterative against recursive" in text
    assert "6 paired trials: 6 exact." in text  # 3 n values in each of the 2 folders
    assert "and on the results folder where two folders ran the same trial" in text
    # one folder of recursive rows, another of iterative rows: paired across the folders
    across = pd.concat([queens("recursive", [16, 15, 31]).assign(source="a"),
                        queens("iterative", [16, 15, 31]).assign(source="b")],
                       ignore_index=True)
    text = pairs_section(across, N_QUEENS)
    assert "not shown" not in text and "3 paired trials: 3 exact." in text


def test_survival_section_of_trials_that_all_failed_is_one_sentence():
    """Every trial an error (a plug-in rule that raises): no curve, no plot notes, one
    sentence with the counts."""
    df = knights("warnsdorff", [("error", 0)] * 3 + [("exhausted", 50)])
    text = survival_section(df, KNIGHTS_TOUR)
    assert "<img" not in text and "not shown" not in text
    assert ("No trial finished or stopped at a budget (3 failed, 1 finished without a "
            "solution (first mode)): there is no distribution of placements to show.") in text
    counted = survival_section(df.assign(mode="count"), KNIGHTS_TOUR)
    assert "No trial finished" not in counted and counted.count("<img") == 2


def test_survival_groups_keep_first_and_count_mode_apart():
    """Placements to the first tour and to every tour are two distributions: a sweep over
    mode gets a curve per (heuristic, mode), not one curve mixing them."""
    first = pd.concat([knights("none", [(CUT, 1_000)] * 3),
                       knights("warnsdorff", [(SOLVED, 64)] * 3)], ignore_index=True)
    count = first.assign(mode="count", status="exhausted", nodes=5_000)
    df = pd.concat([first, count], ignore_index=True)
    assert group_columns(df, KNIGHTS_TOUR) == ["heuristic", "mode"]
    assert group_columns(first, KNIGHTS_TOUR) == ["heuristic"]
    text = survival_section(df, KNIGHTS_TOUR)
    q = re.search(r"<h3>Quantiles</h3>.*?</table>", text, re.S).group(0)
    assert "<td>warnsdorff / first</td>\n      <td>64</td>" in q
    assert "<td>warnsdorff / count</td>\n      <td>5,000</td>" in q
    assert "<td>none / first</td>\n      <td>not reached</td>" in q


def test_survival_and_cactus_legends_sit_below_the_axes(main_job):
    """A legend inside the axes covered the curves of several groups (a drop to 0 at the
    left, the tail at the bottom): it is the figure's, below the plot, one entry per group."""
    for make in (plots.survival_curves, plots.cactus):
        fig = make(main_job, by="heuristic")
        ax = fig.axes[0]
        assert ax.get_legend() is None and len(fig.legends) == 1
        texts = [t.get_text() for t in fig.legends[0].get_texts()]
        assert len(texts) == 3 and texts[0].startswith("none")
        fig.canvas.draw()
        box = fig.legends[0].get_window_extent()
        assert box.y1 <= ax.get_window_extent().y0  # wholly below the axes


def test_survival_section_names_the_runs_it_sets_aside(main_job):
    """Plain move order at 10^3 (folder main) and at 10^9 (folder plain): its curve counts
    each start once, by the 10^9 run, and the section says which runs were set aside."""
    deep = knights("none", [(SOLVED, 5_000)] + [(CUT, 10**9)] * 5, strategy="iterative",
                   engine="compiled", budget=10**9, source="plain")
    text = survival_section(pd.concat([main_job, deep], ignore_index=True), KNIGHTS_TOUR)
    assert ("runs of the same searches set aside: none at 1,000 placements (main): 6."
            in text)
    assert "set aside" not in survival_section(main_job, KNIGHTS_TOUR)
