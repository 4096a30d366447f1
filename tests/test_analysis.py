"""btlab.analysis, btlab.views.plots and `btlab report` on small results sets with censored trials.

The synthetic knight's-tour set (:func:`write_synthetic`) is written through
btlab.store.folder, one folder per heuristic, on a 2 x 3 board (not square, so a
transposed grid shows), 3 repeats per trial. Its backtracks, by start square:

    start   none (baseline)        warnsdorff (treatment)
    (0,0)   10   solved            2    solved            exact:        ratio 0.2, reduction 8
    (0,1)   >=95 node_limit        1    solved            baseline cens: ratio <=1/95, red. >=94
    (0,2)   4    solved            >=90 node_limit        treatm. cens: ratio >=22.5, red. <=-86
    (1,0)   >=97 node_limit        >=93 node_limit        both censored: unknown
    (1,1)   0    solved            0    solved            exact:        ratio 0/0 = NaN, red. 0
    (1,2)   -    error             3    solved            error:        unknown
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
import shutil
import subprocess
import textwrap
import xml.etree.ElementTree as ET
from datetime import datetime, timezone
from html.parser import HTMLParser
from io import BytesIO
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from matplotlib.figure import Figure
from PIL import Image

from btlab import analysis
from btlab.cli.main import main
from btlab.config.model import load_config, parse_config
from btlab.errors import ResultsError
from btlab.store.folder import ResultStore
from btlab.sweep.expand import expand
from btlab.views import plots
from btlab.views.report.page import render_report

# start -> (status, nodes, backtracks) per heuristic; None = error
TABLE = {
    "none": {(0, 0): ("solved", 16, 10), (0, 1): ("node_limit", 100, 95),
             (0, 2): ("solved", 10, 4), (1, 0): ("node_limit", 100, 97),
             (1, 1): ("solved", 6, 0), (1, 2): ("error", None, None)},
    "warnsdorff": {(0, 0): ("solved", 8, 2), (0, 1): ("solved", 7, 1),
                   (0, 2): ("node_limit", 100, 90), (1, 0): ("node_limit", 100, 93),
                   (1, 1): ("solved", 6, 0), (1, 2): ("solved", 9, 3)},
}
#: wall_ns of the repeats: base * factor; the median is base * 3
FACTORS = (1, 3, 10)


def wall_base(heuristic: str, r: int, c: int) -> int:
    return 1_000 * (1 + r * 3 + c) * (1 if heuristic == "none" else 2)


def synthetic_config(heuristic: str):
    return parse_config(textwrap.dedent(f"""\
        name: syn-{heuristic}
        problem: knights_tour
        fixed: {{board: [2, 3], strategy: recursive, mode: first, heuristic: {heuristic}}}
        matrix: {{start: all}}
        budget: {{nodes: 100}}
        repeats: 3
        seed: 7
    """))


def write_synthetic(root: Path) -> dict[str, Path]:
    folders = {}
    for heuristic, starts in TABLE.items():
        folder = root / f"syn-{heuristic}"
        store = ResultStore(folder, synthetic_config(heuristic), flush_rows=10)
        for (r, c), (status, nodes, backtracks) in starts.items():
            for repeat, factor in enumerate(FACTORS):
                ok = status != "error"
                store.add({
                    "trial_id": f"{heuristic}-{r}{c}-{repeat}", "rows": 2, "cols": 3,
                    "start_row": r, "start_col": c, "heuristic": heuristic,
                    "tie_break": "move_order", "strategy": "recursive", "mode": "first",
                    "move_order": "default", "closed": False, "engine": "python",
                    "budget_nodes": 100, "budget_seconds": None, "seed": 7, "repeat": repeat,
                    "status": status, "nodes": nodes, "backtracks": backtracks,
                    "dead_ends": backtracks, "checks": None if not ok else 4 * nodes,
                    "solutions": None if not ok else int(status == "solved"),
                    "max_depth": None if not ok else 6,
                    "wall_ns": wall_base(heuristic, r, c) * factor, "cpu_ns": 500,
                    "solution": [r * 3 + c, *[s for s in range(6) if s != r * 3 + c]]
                    if status == "solved" else None,
                    "error": "ValueError: synthetic\nTraceback" if not ok else None,
                    "host": "testhost", "node_id": None, "pid": 1,
                    "started_at": datetime(2026, 1, 1, tzinfo=timezone.utc),
                })
        store.close()
        folders[heuristic] = folder
    return folders


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory) -> dict[str, Path]:
    return write_synthetic(tmp_path_factory.mktemp("results"))


@pytest.fixture(scope="module")
def df(synthetic) -> pd.DataFrame:
    return analysis.load([synthetic["none"], synthetic["warnsdorff"]])


# --------------------------------------------------------------------------- load


def test_load_several_folders_adds_source_and_categoricals(df, synthetic):
    assert len(df) == 2 * 6 * 3
    assert list(df["source"].cat.categories) == ["syn-none", "syn-warnsdorff"]
    assert df.columns[0] == "source"
    assert df.groupby("source", observed=True).size().to_dict() == {"syn-none": 18,
                                                                    "syn-warnsdorff": 18}
    for col in ("heuristic", "strategy", "mode", "tie_break", "problem", "status"):
        assert isinstance(df[col].dtype, pd.CategoricalDtype), col
    assert str(df["start_row"].dtype) == "Int64" and str(df["closed"].dtype) == "boolean"
    assert list(df["status"].cat.categories) == list(analysis.STATUSES)


def test_load_glob_equals_list_and_single_folder_has_no_source(df, synthetic):
    root = synthetic["none"].parent
    (root / "not-results").mkdir(exist_ok=True)          # a folder without parts is skipped
    globbed = analysis.load(str(root / "syn-*"))
    pd.testing.assert_frame_equal(globbed, df)
    assert len(analysis.load(str(root / "*"))) == len(df)
    single = analysis.load(synthetic["none"])
    assert "source" not in single.columns and len(single) == 18
    with pytest.raises(ResultsError, match="matches no folder"):
        analysis.load(str(root / "nothing-*"))
    with pytest.raises(ResultsError, match="no btlab results"):
        analysis.load(root / "not-results")


def test_aggregate_repeats_median_timing_and_warning(df):
    folded = analysis.aggregate_repeats(df)
    assert len(folded) == 12 and (folded["repeats"] == 3).all()
    one = folded[(folded["heuristic"] == "none") & (folded["start_row"] == 0)
                 & (folded["start_col"] == 2)].iloc[0]
    assert one["wall_ns"] == 3 * wall_base("none", 0, 2)
    broken = df.copy()
    broken.loc[broken.index[broken["repeat"] == 1][0], "nodes"] = 12345
    with pytest.warns(RuntimeWarning, match="different nodes across repeats"):
        analysis.aggregate_repeats(broken)


# --------------------------------------------------------------------------- summary


def test_summary_values_and_bound_marks(df):
    s = analysis.summary(df, by="heuristic", metrics=["backtracks", "wall_ns"], marks=False)
    assert s.shape == (2, 6 + 8)
    none, wd = s.loc["none"], s.loc["warnsdorff"]
    assert none[("trials", "all")] == 6 and none[("trials", "solved")] == 3
    assert none[("trials", "node_limit")] == 2 and none[("trials", "error")] == 1
    assert wd[("trials", "solved")] == 4 and wd[("trials", "error")] == 0
    # none: backtracks of the 5 trials that ran: 10, >=95, 4, >=97, 0
    assert none["backtracks"].tolist() == [0, 10, pytest.approx(41.2), 97]
    # warnsdorff: 2, 1, >=90, >=93, 0, 3 -> median (2 + 3) / 2
    assert wd["backtracks"].tolist() == [0, 2.5, pytest.approx(31.5), 93]
    # timings: the median over the 3 repeats, then statistics over the trials
    assert none[("wall_ns", "min")] == 3 * wall_base("none", 0, 0)
    marked = analysis.summary(df, by="heuristic", metrics=["backtracks"])  # marks by default
    assert marked.loc["none", "backtracks"].tolist() == ["0", "10", ">=41.2", ">=97"]
    assert marked.loc["warnsdorff", "backtracks"].tolist() == ["0", "2.5", ">=31.5", ">=93"]
    assert marked.loc["none", ("trials", "all")] == "6"


def test_summary_even_median_above_a_censored_value_is_a_bound():
    # values 1 (exact) and 3 (censored): median 2, but a larger 3 moves it
    frame = pd.DataFrame({"problem": "x", "k": ["a", "a"], "status": ["solved", "node_limit"],
                          "nodes": [1, 3]})
    marked = analysis.summary(frame, by="k", metrics=["nodes"], marks=True)
    assert marked.loc["a", "nodes"].tolist() == ["1", ">=2", ">=2", ">=3"]


def test_summary_default_groups_are_varying_parameters(df):
    s = analysis.summary(df)
    assert s.index.names == ["heuristic"]  # source varies with heuristic; start is no group
    assert analysis.summary(df[df["heuristic"] == "none"]).index.tolist() == ["all"]


# --------------------------------------------------------------------------- start_grid


def test_start_grid_shape_values_and_timings(df):
    grid = analysis.start_grid(df, "backtracks", heuristic="none")
    assert grid.shape == (2, 3) and grid.index.name == "row" and grid.columns.name == "col"
    assert grid.index.tolist() == [0, 1] and grid.columns.tolist() == [0, 1, 2]
    expected = [[10, 95, 4], [97, 0, np.nan]]
    np.testing.assert_array_equal(grid.to_numpy(), np.array(expected, dtype=float))
    wall = analysis.start_grid(df, "wall_ns", heuristic="warnsdorff")
    assert wall.loc[1, 2] == 3 * wall_base("warnsdorff", 1, 2)
    status = analysis.start_grid(df, "status", heuristic="none")
    assert status.loc[0, 1] == "node_limit" and status.loc[1, 2] == "error"


def test_start_grid_errors(df):
    with pytest.raises(ValueError, match="differ in heuristic"):
        analysis.start_grid(df, "backtracks")
    bigger = df.assign(rows=df["rows"] + 1)
    with pytest.raises(ValueError, match="2 boards .*2 x 3, 3 x 3"):
        analysis.start_grid(pd.concat([df, bigger]), "backtracks", heuristic="none")
    with pytest.raises(ValueError, match="heuristic takes the values"):
        analysis.start_grid(df, "backtracks", heuristic="roth")
    with pytest.raises(ValueError, match="no column 'heuristc'"):
        analysis.start_grid(df, "backtracks", heuristc="none")
    with pytest.raises(ValueError, match="no column 'backtrack'"):
        analysis.start_grid(df, "backtrack", heuristic="none")


# --------------------------------------------------------------------------- compare


def test_compare_per_trial_bounds_by_hand(df):
    cmp = analysis.compare(df, baseline={"heuristic": "none"},
                           treatment={"heuristic": "warnsdorff"}, metric="backtracks")
    assert "start_row" in cmp.on and "heuristic" not in cmp.on
    t = cmp.trials.set_index(["start_row", "start_col"]).sort_index()
    assert len(t) == 6 and cmp.unmatched == {"baseline": 0, "treatment": 0}

    def row(r, c):
        x = t.loc[(r, c)]
        return (x["ratio"], str(x["ratio_bound"]), x["reduction"], str(x["reduction_bound"]),
                x["kind"])

    assert row(0, 0) == (pytest.approx(0.2), "exact", 8, "exact", "exact")
    assert row(0, 1) == (pytest.approx(1 / 95), "<=", 94, ">=", "baseline censored")
    assert row(0, 2) == (pytest.approx(22.5), ">=", -86, "<=", "treatment censored")
    r10 = row(1, 0)
    assert math.isnan(r10[0]) and math.isnan(r10[2]) and r10[1:4:2] == ("unknown", "unknown")
    assert r10[4] == "both censored"
    r11 = row(1, 1)
    assert math.isnan(r11[0]) and r11[1:] == ("exact", 0, "exact", "exact")  # 0 / 0
    r12 = row(1, 2)
    assert r12[1] == r12[3] == "unknown" and r12[4] == "error"
    # the bounds hold for every possible true value: ratio <= shown where marked <=
    assert t.loc[(0, 1), "baseline"] == 95 and t.loc[(0, 1), "baseline_status"] == "node_limit"


def test_compare_totals_split_exact_and_bounded(df):
    cmp = analysis.compare(df, {"heuristic": "none"}, {"heuristic": "warnsdorff"})
    tot = cmp.totals
    assert tot.index.tolist() == ["exact", "baseline censored", "treatment censored",
                                  "both censored", "error", "all"]
    assert tot["trials"].tolist() == [2, 1, 1, 1, 1, 5]
    exact = tot.loc["exact"]
    assert (exact["baseline"], exact["treatment"], exact["ratio"], exact["reduction"]) == \
        (10, 2, pytest.approx(0.2), 8)
    assert (str(exact["ratio_bound"]), str(exact["baseline_bound"])) == ("exact", "exact")
    bc = tot.loc["baseline censored"]
    assert (bc["baseline"], str(bc["baseline_bound"]), str(bc["ratio_bound"]),
            str(bc["reduction_bound"]), bc["reduction"]) == (95, ">=", "<=", ">=", 94)
    tc = tot.loc["treatment censored"]
    assert (str(tc["ratio_bound"]), tc["ratio"], str(tc["reduction_bound"])) == \
        (">=", 22.5, "<=")
    assert math.isnan(tot.loc["error", "baseline"])
    everything = tot.loc["all"]
    assert (everything["baseline"], everything["treatment"]) == (206, 186)
    assert str(everything["ratio_bound"]) == "unknown" and math.isnan(everything["ratio"])
    text = str(cmp)
    assert ">=95" in text and "<=0.0105" in text and ">=22.5" in text and "<=-86" in text
    assert "unknown" in text and "ratio = treatment / baseline" in text
    # the exact part alone, the way a reader takes it
    assert cmp.formatted().loc["exact", "ratio"] == "0.2"


def test_compare_on_timings_uses_median_over_repeats(df):
    cmp = analysis.compare(df, {"heuristic": "none"}, {"heuristic": "warnsdorff"},
                           metric="wall_ns", on=["start_row", "start_col"])
    t = cmp.trials.set_index(["start_row", "start_col"])
    assert t.loc[(0, 0), "baseline"] == 3_000 and t.loc[(0, 0), "treatment"] == 6_000
    assert t.loc[(0, 0), "ratio"] == 2.0


def test_compare_zero_over_censored_is_exact_and_errors():
    frame = pd.DataFrame({"problem": "knights_tour", "rows": 8, "cols": 8, "start_row": 0,
                          "start_col": [0, 0], "heuristic": ["none", "warnsdorff"],
                          "status": ["node_limit", "solved"], "backtracks": [999, 0]})
    cmp = analysis.compare(frame, {"heuristic": "none"}, {"heuristic": "warnsdorff"})
    row = cmp.trials.iloc[0]
    assert (row["ratio"], str(row["ratio_bound"]), row["reduction"],
            str(row["reduction_bound"])) == (0.0, "exact", 999, ">=")
    with pytest.raises(ValueError, match="both baseline"):
        analysis.compare(frame, {"heuristic": "none"}, {"rows": 8})
    with pytest.raises(ValueError, match="heuristic takes the values"):
        analysis.compare(frame, {"heuristic": "none"}, {"heuristic": "roth"})
    twice = pd.concat([frame, frame.assign(cols=9)])
    with pytest.raises(ValueError, match="differ in cols"):
        analysis.compare(twice, {"heuristic": "none"}, {"heuristic": "warnsdorff"},
                         on=["start_row", "start_col"])


def test_timing_spread(df):
    spread = analysis.timing_spread(df)
    assert spread.index.names == ["start_row", "start_col", "heuristic", "source"]
    one = spread.reset_index().query("heuristic == 'none' and start_row == 0 and start_col == 0")
    assert len(one) == 1
    one = one.iloc[0]
    base = wall_base("none", 0, 0)
    assert (one["repeats"], one["min"], one["median"], one["max"]) == (3, base, 3 * base,
                                                                       10 * base)
    assert one["spread"] == pytest.approx(9 / 3)
    assert one["cv"] == pytest.approx(np.std([1, 3, 10], ddof=1) / np.mean([1, 3, 10]))
    assert len(spread) == 11  # the failed trial is left out


def test_docs_config_validates():
    trials = expand(load_config("configs/recursion_vs_iteration_by_size.yaml"))
    assert len(trials) == 4 * 2 * 5
    assert {t.columns["rows"] for t in trials} == {5, 6, 7, 8}


# --------------------------------------------------------------------------- plots


def assert_image(path: Path, min_size=(300, 250)) -> None:
    with Image.open(path) as im:
        im.verify()
    with Image.open(path) as im:
        assert im.format == "PNG" and im.size[0] >= min_size[0] and im.size[1] >= min_size[1]
        pixels = np.asarray(im.convert("L"), dtype=float)
    assert pixels.var() > 0, f"{path} is blank"


def assert_svg(path: Path) -> None:
    root = ET.parse(path).getroot()
    assert root.tag.endswith("svg") and len(list(root.iter())) > 20


@pytest.mark.parametrize("name, make", [
    ("heatmap", lambda d: plots.heatmap(d, "backtracks", heuristic="none")),
    ("heatmap_timing", lambda d: plots.heatmap(d, "wall_ns", heuristic="warnsdorff")),
    ("heatmap_reduction", lambda d: plots.heatmap(
        analysis.compare(d, {"heuristic": "none"}, {"heuristic": "warnsdorff"}).trials,
        "reduction")),
    ("time_vs_nodes", lambda d: plots.time_vs_nodes(d)),
    ("metric_vs_size", lambda d: plots.metric_vs_size(
        pd.concat([d, d.assign(rows=3, cols=3), d.assign(rows=4, cols=4)]), "nodes",
        by="heuristic")),
    ("knight_tour", lambda d: plots.knight_tour(solution=[0, 7, 14, 11, 2, 9, 12, 5, 10, 3,
                                                          8, 15, 6, 13, 4, 1], rows=4, cols=4)),
    ("queens", lambda d: plots.queens(solution=[1, 3, 0, 2])),
], ids=lambda x: x if isinstance(x, str) else "")
def test_plots_written_and_reopened(df, tmp_path, name, make):
    fig = make(df)
    assert isinstance(fig, Figure)
    png, svg = tmp_path / f"{name}.png", tmp_path / f"{name}.svg"
    assert plots.save(fig, [png, svg]) == [png, svg]
    assert_image(png)
    assert_svg(svg)


def test_heatmap_marks_censored_cells(df):
    fig = plots.heatmap(df, "backtracks", heuristic="none")
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert sorted(texts) == sorted(["10", "≥95", "4", "≥97", "0", "err"])
    hatched = [p for p in fig.axes[0].patches if p.get_hatch()]
    assert len(hatched) == 2
    assert "censored" in " ".join(t.get_text() for t in fig.legends[0].get_texts())


def test_plot_save_refuses_other_formats(tmp_path):
    with pytest.raises(ValueError, match=".png or .svg"):
        plots.save(plots.queens(solution=[1, 3, 0, 2]), tmp_path / "q.pdf")


# --------------------------------------------------------------------------- report


class _Images(HTMLParser):
    def __init__(self):
        super().__init__()
        self.images, self.tags, self.links, self.scripts = [], [], [], []
        self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.scripts.append(data)

    def handle_endtag(self, tag):
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self._in_script = tag == "script"
        attrs = dict(attrs)
        self.tags.append(tag)
        if tag == "img":
            self.images.append(attrs.get("src", ""))
        for key in ("href", "src"):
            if key in attrs and tag != "img":
                self.links.append(attrs[key])


def check_report(text: str) -> _Images:
    parser = _Images()
    parser.feed(text)
    parser.close()
    assert parser.images, "no images"
    # one inline script (the sortable table), nothing fetched: no src, link, URL or import;
    # the only links are the contents' links to sections of the page itself
    assert "link" not in parser.tags
    assert all(re.fullmatch(r"#[a-z0-9-]+", link) for link in parser.links), parser.links
    for script in parser.scripts:
        assert "://" not in script and "import" not in script and "fetch(" not in script
    for src in parser.images:
        head, _, payload = src.partition(",")
        assert head in ("data:image/png;base64", "data:image/svg+xml;base64"), head[:40]
        try:
            data = base64.b64decode(payload, validate=True)
        except binascii.Error as exc:  # pragma: no cover - the assertion message
            raise AssertionError(f"bad base64: {exc}") from None
        if head.startswith("data:image/png"):
            with Image.open(BytesIO(data)) as im:
                im.verify()
                assert im.format == "PNG"
        else:
            assert ET.fromstring(data).tag.endswith("svg")
    return parser


SMALL = textwrap.dedent("""\
    name: tiny-knights
    problem: knights_tour
    description: a small sweep for the report test
    fixed: {board: [5, 5], strategy: recursive, mode: first}
    matrix:
      heuristic: [none, warnsdorff]
      start: all
    budget: {nodes: 300}
    seed: 1
""")


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("tiny")
    cfg = root / "tiny.yaml"
    cfg.write_text(SMALL)
    out = root / "results"
    assert main(["run", str(cfg), "--backend", "serial", "--out", str(out), "--quiet"]) == 0
    return out


@pytest.fixture(scope="module")
def tiny_report(tiny_run, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report") / "report.html"
    assert main(["report", str(tiny_run), "-o", str(out)]) == 0
    return out


def test_report_is_self_contained_html(tiny_report, tiny_run):
    text = tiny_report.read_text(encoding="utf-8")
    parser = check_report(text)
    # survival curves, cactus plot, the reduction heatmap of warnsdorff against none,
    # 2 heatmaps, time vs nodes, 2 hardest-start tours
    assert len(parser.images) == 2 + 1 + 2 + 1 + 2
    for needle in ("btlab report: tiny-knights", "a small sweep for the report test",
                   "Knight&#x27;s tour: trials by status", "backtracks by start square",
                   "Distribution of search cost", "Pairwise comparisons",
                   "heuristic: warnsdorff against plain move order (none)",
                   "baseline censored", "Provenance",
                   "schema version", "git commit", "node_limit", "&gt;="):
        assert needle in text, needle
    df = analysis.load(tiny_run)
    assert df["run_id"].iloc[0] in text


def test_report_of_synthetic_set_lists_errors(synthetic):
    text = render_report(synthetic["none"])
    check_report(text)
    assert "Failed trials (3)" in text and "ValueError: synthetic" in text


def write_queens(folder: Path) -> None:
    """N-Queens rows the way btlab.store.folder writes them (n, strategy, mode, unique)."""
    def first_solution(n):
        cols: list[int] = []

        def place(row):
            if row == n:
                return True
            for c in range(n):
                if all(c != q and abs(c - q) != row - r for r, q in enumerate(cols)):
                    cols.append(c)
                    if place(row + 1):
                        return True
                    cols.pop()
            return False
        return list(cols) if place(0) else None

    rows = []
    for n in range(4, 9):
        for strategy, factor in (("recursive", 1), ("amb", 7)):
            sol = first_solution(n)
            censored = strategy == "amb" and n == 8
            rows.append({"trial_id": f"{strategy}-{n}", "run_id": "r1", "problem": "n_queens",
                         "n": n, "strategy": strategy, "mode": "first", "unique": False,
                         "budget_nodes": 100_000, "budget_seconds": None, "seed": 0,
                         "repeat": 0, "status": "node_limit" if censored else "solved",
                         "nodes": 3 ** n, "backtracks": 3 ** n - n, "dead_ends": 1, "checks": 1,
                         "solutions": 0 if censored else 1, "max_depth": n,
                         "wall_ns": factor * 1000 * 3 ** n, "cpu_ns": 1,
                         "solution": None if censored else sol, "error": None,
                         "host": "h", "node_id": None, "pid": 1, "git_commit": None,
                         "btlab_version": "0.1.0", "python_version": "3.11",
                         "ray_version": None,
                         "started_at": datetime(2026, 1, 1, tzinfo=timezone.utc)})
    table = pa.Table.from_pylist(rows)
    meta = {"btlab.schema_version": "1", "btlab.config_name": "queens-amb",
            "btlab.problem": "n_queens",
            "btlab.config": json.dumps({"name": "queens-amb", "problem": "n_queens",
                                        "matrix": {"n": [4, 5, 6, 7, 8],
                                                   "strategy": ["recursive", "amb"]}})}
    folder.mkdir(parents=True)
    pq.write_table(table.replace_schema_metadata(meta), folder / "part-r1-00000.parquet")


def test_queens_results_compare_and_report(tmp_path):
    folder = tmp_path / "queens"
    write_queens(folder)
    df = analysis.load(folder)
    assert list(df["strategy"].cat.categories) == ["recursive", "amb"]
    cmp = analysis.compare(df, {"strategy": "recursive"}, {"strategy": "amb"}, metric="wall_ns")
    assert cmp.on == ["n", "mode", "unique"]
    t = cmp.trials.set_index("n")
    assert t.loc[5, "ratio"] == 7 and str(t.loc[8, "ratio_bound"]) == ">="
    assert plots.metric_vs_size(df, "wall_ns").axes[0].get_xlabel().startswith("n")
    text = render_report(folder)
    parser = check_report(text)
    # nodes and time against n, time vs nodes, the placement of each strategy's hardest n
    assert len(parser.images) == 5
    assert "<h3>strategy: amb against recursive</h3>" in text  # one tree: compared on time
    assert "Distribution of search cost" not in text  # one trial per n: no distribution


@pytest.fixture(scope="module")
def two_folder_report(tiny_run, tmp_path_factory) -> Path:
    """The tiny sweep and a second folder (heuristic none at 2,000 placements) in one report."""
    root = tmp_path_factory.mktemp("tiny2")
    cfg = root / "tiny2.yaml"
    cfg.write_text(SMALL.replace("name: tiny-knights", "name: tiny-none-2000")
                   .replace("heuristic: [none, warnsdorff]", "heuristic: [none]")
                   .replace("nodes: 300", "nodes: 2000"))
    second = root / "none-2000"
    assert main(["run", str(cfg), "--backend", "serial", "--out", str(second), "--quiet"]) == 0
    out = root / "two.html"
    assert main(["report", str(tiny_run), str(second), "-o", str(out)]) == 0
    return out


CHROMIUM = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
            "--no-first-run", "--disable-background-networking", "--disable-component-update",
            "--disable-sync"]


@pytest.mark.skipif(shutil.which("chromium") is None,
                    reason="chromium not installed (Debian: apt-get install chromium)")
def test_report_renders_in_headless_chromium(two_folder_report, tmp_path):
    text = two_folder_report.read_text(encoding="utf-8")
    check_report(text)
    assert "<h3>results</h3>" in text and "<h3>none-2000</h3>" in text
    shot = tmp_path / "shot.png"
    cmd = [*CHROMIUM, f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1280,2400",
           f"--screenshot={shot}", two_folder_report.resolve().as_uri()]
    subprocess.run(cmd, capture_output=True, timeout=120, check=False)
    assert shot.exists(), "chromium wrote no screenshot"
    assert_image(shot, min_size=(1000, 1000))
    with Image.open(shot) as im:
        grey = np.asarray(im.convert("L"), dtype=float)
    assert (grey < 128).mean() > 0.005  # text and plots, not a white page
    # the per-start table sorted by the browser on load (#sort=-3): column 3 is the first
    # group's (heuristic none, 300 placements) backtracks, descending
    cmd = [*CHROMIUM, f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom",
           two_folder_report.resolve().as_uri() + "#sort=-3"]
    dom = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False).stdout
    table = dom.split('<table class="data sortable">', 1)[1].split("</table>", 1)[0]
    starts = re.findall(r'<tr><td class="text" data-v="\d+">(\([0-9, ]+\))</td>', table)
    backtracks = [int(v) for v in re.findall(r'<tr><td[^>]*>[^<]*</td><td[^>]*>[^<]*</td>'
                                            r'<td[^>]*>[^<]*</td><td[^>]*data-v="(\d+)"', table)]
    assert len(starts) == 25 and starts != sorted(starts)
    assert backtracks == sorted(backtracks, reverse=True) and backtracks[0] == 290
    assert starts[0] == "(2, 1)"  # >=290 backtracks of heuristic none at 300 placements
    assert 'data-dir="desc"' in table
    # no table sticks out of the text column: each table's visible box (clipped by a
    # scrolling container) measured by the browser, against the body's content box
    widths = _table_widths(two_folder_report, tmp_path)
    assert len(widths["tables"]) >= 8
    outside = [(round(left), round(right), caption) for left, right, caption in widths["tables"]
               if left < -1 or right < -1]
    assert not outside, f"tables past the margins (px left, px right): {outside}"
    # the first section is the finding, then the contents, linking every section
    heads = re.findall(r'<a id="([^"]+)"></a><h2>', text)
    assert heads[0] == "findings" and len(heads) >= 6
    toc = text[text.index('<nav class="toc">'):text.index("</nav>")]
    assert re.findall(r'href="#([^"]+)"', toc) == heads


#: Measures every ``table.data`` once the page has loaded, into ``<pre id="widths">``.
_MEASURE = """<script>
window.addEventListener('load', function () {
  var body = document.body, cs = getComputedStyle(body), r = body.getBoundingClientRect();
  var left = r.left + parseFloat(cs.paddingLeft), right = r.right - parseFloat(cs.paddingRight);
  var out = [];
  document.querySelectorAll('table.data').forEach(function (t) {
    var b = t.getBoundingClientRect(), l = b.left, rr = b.right, p = t.parentElement;
    while (p && p !== body) {
      var s = getComputedStyle(p);
      if (s.overflowX === 'auto' || s.overflowX === 'scroll' || s.overflowX === 'hidden') {
        var pb = p.getBoundingClientRect(); l = Math.max(l, pb.left); rr = Math.min(rr, pb.right);
      }
      p = p.parentElement;
    }
    out.push([l - left, right - rr, t.caption ? t.caption.textContent.slice(0, 60) : '']);
  });
  var pre = document.createElement('pre'); pre.id = 'widths';
  pre.textContent = JSON.stringify({left: left, right: right, tables: out});
  body.appendChild(pre);
});
</script>"""


def _table_widths(report: Path, tmp_path: Path) -> dict:
    """How far each table of ``report`` stays inside the text column in headless Chromium
    (1280 px wide): {"tables": [[px inside on the left, px inside on the right, caption]]}."""
    import html as html_module

    page = tmp_path / "measured.html"
    page.write_text(report.read_text(encoding="utf-8").replace("</body>", _MEASURE + "</body>"),
                    encoding="utf-8")
    cmd = [*CHROMIUM, f"--user-data-dir={tmp_path / 'profile-w'}", "--window-size=1280,2400",
           "--dump-dom", page.resolve().as_uri()]
    dom = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False).stdout
    found = re.search(r'<pre id="widths">(.*?)</pre>', dom, re.S)
    assert found, "the measuring script left no result"
    return json.loads(html_module.unescape(found.group(1)))
