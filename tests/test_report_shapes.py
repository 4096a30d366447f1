"""Every shape of results folder reports, and show, report and compare count the same rows.

Each case runs a tiny real config through the serial backend (the CLI, in
this process), then ``btlab show`` and ``btlab report``: both must finish, and
both must state the trial count and the counts by status the Parquet rows
hold. Then a config edited and run again into its folder: show, report and
compare count the trials of the config last run and name the older rows in
one sentence; ``--all`` counts them all.
"""

from __future__ import annotations

import html
import re
import textwrap
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest

from btlab.analysis import load
from btlab.analysis.counted_rows import superseded_sentence
from btlab.cli.main import main

PLUGIN_DIR = Path(__file__).resolve().parent / "plugins"
#: Makes every trial raise (trial ids are 16 hex digits; the test hook matches prefixes).
ALL_RAISE = ",".join(f"raise:{d}" for d in "0123456789abcdef")
STATUSES = ("solved", "exhausted", "node_limit", "time_limit", "error")

# (id, config body, BTLAB_TEST_FAULT, expected {status: count})
SHAPES = [
    # no trial solved, only the start swept: 16 exhausted trials (4 x 4 has no tour)
    ("kt-all-exhausted-start-only", """
        problem: knights_tour
        fixed: {board: [4, 4]}
        matrix: {start: all}
     """, None, {"exhausted": 16}),
    ("kt-all-node-limit", """
        problem: knights_tour
        fixed: {board: [5, 5], heuristic: none}
        matrix: {start: all}
        budget: {nodes: 10}
     """, None, {"node_limit": 25}),
    ("kt-all-time-limit", """
        problem: knights_tour
        fixed: {board: [8, 8], heuristic: none}
        matrix: {start: [[0, 0], [0, 1]]}
        budget: {seconds: 0.01}
     """, None, {"time_limit": 2}),
    ("kt-all-error", """
        problem: knights_tour
        fixed: {board: [5, 5]}
        matrix: {start: [[0, 0], [2, 2], [1, 2]]}
     """, ALL_RAISE, {"error": 3}),
    ("kt-one-trial", """
        problem: knights_tour
        fixed: {board: [5, 5], start: [0, 0], heuristic: warnsdorff}
     """, None, {"solved": 1}),
    ("kt-one-trial-error", """
        problem: knights_tour
        fixed: {board: [5, 5], start: [0, 0]}
     """, ALL_RAISE, {"error": 1}),
    ("kt-no-start-column-varied", """
        problem: knights_tour
        fixed: {board: [5, 5], start: [0, 0]}
        matrix: {heuristic: [none, warnsdorff], strategy: [recursive, iterative]}
        budget: {nodes: 50}
     """, None, {"solved": 2, "node_limit": 2}),
    ("kt-one-start-repeats", """
        problem: knights_tour
        fixed: {board: [5, 5], start: [0, 0], heuristic: warnsdorff}
        repeats: 3
     """, None, {"solved": 3}),
    ("kt-count-mode-two-boards", """
        problem: knights_tour
        fixed: {mode: count, heuristic: warnsdorff}
        matrix: {board: [[3, 4], [4, 4]], start: [[0, 0], [0, 1]]}
     """, None, {"exhausted": 4}),
    ("kt-mixed-statuses", """
        problem: knights_tour
        fixed: {board: [5, 5], heuristic: none}
        matrix: {start: [[0, 0], [0, 1], [1, 1], [2, 2]]}
        budget: {nodes: 300}
     """, None, None),
    ("kt-one-square-board", """
        problem: knights_tour
        fixed: {board: [1, 1]}
        matrix: {start: all}
     """, None, {"solved": 1}),
    ("kt-boards-with-and-without-tours", """
        problem: knights_tour
        fixed: {heuristic: warnsdorff}
        matrix: {board: [[3, 3], [4, 4], [5, 5]], start: [[0, 0]]}
        budget: {nodes: 2000}
     """, None, {"exhausted": 1, "node_limit": 1, "solved": 1}),
    ("kt-closed-count-amb", """
        problem: knights_tour
        fixed: {board: [3, 4], closed: true, mode: count, strategy: amb}
        matrix: {start: [[0, 0], [1, 1]]}
     """, None, {"exhausted": 2}),
    ("nq-construction-and-amb", """
        problem: n_queens
        fixed: {mode: first}
        matrix: {n: [4, 8], strategy: [construction, amb]}
     """, None, {"solved": 4}),
    # a placement of 200,000 queens: drawn in blocks (square by square it needs terabytes)
    ("nq-construction-large-n", """
        problem: n_queens
        fixed: {strategy: construction}
        matrix: {n: [8, 1000, 200000]}
     """, None, {"solved": 3}),
    ("nq-count", """
        problem: n_queens
        fixed: {mode: count}
        matrix: {n: [4, 5, 6]}
     """, None, {"exhausted": 3}),
    ("nq-first-strategies", """
        problem: n_queens
        fixed: {mode: first}
        matrix: {n: [4, 5, 6], strategy: [recursive, iterative]}
     """, None, {"solved": 6}),
    ("nq-all-exhausted-first", """
        problem: n_queens
        fixed: {mode: first}
        matrix: {n: [2, 3]}
     """, None, {"exhausted": 2}),
    ("nq-all-node-limit", """
        problem: n_queens
        fixed: {mode: count}
        matrix: {n: [9, 10]}
        budget: {nodes: 50}
     """, None, {"node_limit": 2}),
    ("nq-one-trial", """
        problem: n_queens
        fixed: {n: 6, mode: count}
     """, None, {"exhausted": 1}),
    ("nq-all-error", """
        problem: n_queens
        matrix: {n: [5, 6]}
     """, ALL_RAISE, {"error": 2}),
    ("plugin-grid-path", """
        problem: "grid_path:PROBLEM"
        fixed: {mode: count, board: [3, 3]}
        matrix: {start: all}
     """, None, {"exhausted": 9}),
    ("plugin-grid-path-all-error", """
        problem: "grid_path:PROBLEM"
        fixed: {board: [3, 3], start: [0, 0]}
     """, ALL_RAISE, {"error": 1}),
]


class _Tables(HTMLParser):
    """The tables of an HTML page as lists of rows of cell texts."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def html_tables(text: str) -> list[list[list[str]]]:
    parser = _Tables()
    parser.feed(text)
    return parser.tables


def summary_counts(report: str) -> dict[str, int]:
    """The counts by status of the report's summary table, summed over its groups."""
    tables = html_tables(report.split("<h3>Summary by group</h3>", 1)[1])
    head, *rows = tables[0]
    assert "all" in head and "error" in head, head
    return {name: sum(int(r[head.index(name)].replace(",", "")) for r in rows)
            for name in ("all", *STATUSES)}


def rich_tables(text: str) -> list[list[list[str]]]:
    """The tables rich drew in ``text``: per table, the header cells then each row's cells."""
    tables: list[list[list[str]]] = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("┏"):
            tables.append([])
        elif line.startswith(("┃", "│")) and tables:
            sep = line[0]
            tables[-1].append([c.strip() for c in line.strip(sep).split(sep)])
    return tables


def flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def run_shape(tmp_path: Path, monkeypatch, body: str, fault: str | None) -> Path:
    monkeypatch.syspath_prepend(str(PLUGIN_DIR))
    if fault:
        monkeypatch.setenv("BTLAB_TEST_FAULT", fault)
    cfg = tmp_path / "shape.yaml"
    cfg.write_text("name: shape\n" + textwrap.dedent(body).strip() + "\n")
    out = tmp_path / "out"
    code = main(["run", str(cfg), "--backend", "serial", "--out", str(out), "--quiet"])
    assert code == (1 if fault else 0)
    monkeypatch.delenv("BTLAB_TEST_FAULT", raising=False)
    return out


@pytest.mark.parametrize("body, fault, expected", [s[1:] for s in SHAPES],
                         ids=[s[0] for s in SHAPES])
def test_every_folder_shape_shows_and_reports(tmp_path, monkeypatch, capsys, body, fault,
                                             expected):
    out = run_shape(tmp_path, monkeypatch, body, fault)
    rows = pd.read_parquet(out)
    counts = rows["status"].value_counts().to_dict()
    if expected is not None:
        assert counts == expected
    else:  # mixed: at least two kinds
        assert len(counts) >= 2, counts
    errors = counts.get("error", 0)
    capsys.readouterr()

    assert main(["show", str(out)]) == (1 if errors else 0)
    raw = capsys.readouterr().out
    shown = flat(raw)
    assert f"{out}: {len(rows):,} trials of shape (1 run(s))" in shown
    if errors:
        assert f"{errors} trial(s) failed; first error:" in shown
        assert "fault injected by BTLAB_TEST_FAULT" in shown
    table = rich_tables(raw)[0]   # the headline's first table: counts by status
    head, body = table[0], table[1:]
    if "status" in head:          # N-Queens: one line per trial
        assert pd.Series([r[head.index("status")] for r in body]).value_counts().to_dict() \
            == counts
    else:                         # trials by status, one line per group
        if "whole tree searched" in head:  # count mode: solutions, then finished counts
            assert head.index("solutions") == head.index("whole tree searched") - 1
            assert "solved" not in head
            head = [{"solutions": "solved", "whole tree searched": "exhausted"}.get(h, h)
                    for h in head]
            body = [[*r[:head.index("solved")], "0", *r[head.index("solved") + 1:]]
                    for r in body]   # a count trial is never solved (first mode's status)
        total = {name: sum(int(r[head.index(name)].replace(",", "")) for r in body)
                 for name in ("solved", "exhausted", "censored", "errors")}
        first = sum(int(r[head.index("solved") - 1]) for r in body)   # trials / starts
        n_trials = len(rows) // (int(rows["repeat"].max()) + 1)
        assert first == n_trials
        assert total == {"solved": counts.get("solved", 0) // (len(rows) // n_trials),
                         "exhausted": counts.get("exhausted", 0),
                         "censored": counts.get("node_limit", 0) + counts.get("time_limit", 0),
                         "errors": errors}

    report = tmp_path / "r.html"
    assert main(["report", str(out), "-o", str(report)]) == 0
    text = report.read_text()
    assert f"{len(rows):,} trials of <b>{html.escape(rows['problem'].iloc[0])}</b>" in text
    got = summary_counts(text)
    folded = rows.drop_duplicates([c for c in rows.columns if c not in (
        "trial_id", "repeat", "wall_ns", "cpu_ns", "run_id", "pid", "started_at",
        "node_id", "host", "compile_ns", "error", "solution")])
    n_folded = len(folded) if "repeat" in rows and rows["repeat"].max() > 0 else len(rows)
    assert got["all"] == n_folded
    for status in STATUSES:
        want = counts.get(status, 0) * n_folded // len(rows)
        assert got[status] == want, (status, got)
    assert "a btlab bug" not in text
    if errors:
        assert f"<h2>Failed trials ({errors:,})</h2>" in text
    else:
        assert "Failed trials" not in text


EDITED = textwrap.dedent("""\
    name: edited
    problem: knights_tour
    fixed: {board: [5, 5], heuristic: none}
    matrix:
      start: [[0, 0], [0, 1], [1, 1]]
      strategy: [recursive, iterative]
    budget: {nodes: 100}
""")


@pytest.fixture(scope="module")
def edited_folder(tmp_path_factory):
    """A folder run with budget.nodes 100, then with the config edited to 1,000,000: 6 rows
    in the folder, the 6 of the earlier config superseded, kept beside it."""
    base = tmp_path_factory.mktemp("edited")
    cfg = base / "edited.yaml"
    cfg.write_text(EDITED)
    out = base / "edited"
    run = ["run", str(cfg), "--backend", "serial", "--out", str(out), "--quiet"]
    assert main(run) == 0
    cfg.write_text(EDITED.replace("nodes: 100}", "nodes: 1_000_000}"))
    assert main(run) == 0
    assert len(pd.read_parquet(out)) == 6
    assert len(load(out, superseded=True)) == 12
    return out


def aside_sentence(out: Path, included: bool) -> str:
    """What show, report and compare say of the 6 superseded rows beside ``out``."""
    return superseded_sentence(6, str(out.parent / f".{out.name}.btlab" / "superseded"),
                               included)


def test_show_and_report_count_the_rows_of_the_config_last_run(edited_folder, tmp_path,
                                                               capsys):
    out = edited_folder
    rows = pd.read_parquet(out)
    current = rows[rows["budget_nodes"] == 1_000_000]
    sentence = aside_sentence(out, included=False)
    assert main(["show", str(out)]) == 0
    shown = flat(capsys.readouterr().out)
    assert f"{out}: 6 trials of edited (1 run(s))" in shown
    assert sentence in shown
    assert "budget_nodes" not in shown   # one budget: no group by it

    report = tmp_path / "edited.html"
    assert main(["report", str(out), "-o", str(report)]) == 0
    text = report.read_text()
    assert "6 trials of <b>knights_tour</b>" in text and "1 run(s)" in text
    assert html.escape(sentence) in text
    assert summary_counts(text) == {"all": 6, "solved": int((current["status"] == "solved").sum()),
                                    "exhausted": 0,
                                    "node_limit": int((current["status"] == "node_limit").sum()),
                                    "time_limit": 0, "error": 0}
    assert "differ in budget_nodes" not in text
    assert "<h3>strategy: iterative against recursive</h3>" in text
    assert "Backtracks by start square on 5 x 5, strategy = iterative" in text
    nodes = f"{int(current.loc[current['strategy'] == 'recursive', 'nodes'].sum()):,}"
    assert nodes in text   # the headline's total is the current budget's alone

    # --all: every row, the same sentence saying they are in
    assert main(["show", str(out), "--all"]) == 0
    shown = flat(capsys.readouterr().out)
    assert f"{out}: 12 trials of edited (2 run(s))" in shown
    assert aside_sentence(out, included=True) in shown
    assert main(["report", str(out), "-o", str(report), "--all"]) == 0
    text = report.read_text()
    assert "12 trials of <b>knights_tour</b>" in text
    assert html.escape(aside_sentence(out, included=True)) in text
    assert summary_counts(text)["all"] == 12


def test_compare_counts_the_rows_show_counts(edited_folder, tmp_path, capsys):
    cfg = tmp_path / "again.yaml"
    cfg.write_text(EDITED.replace("nodes: 100}", "nodes: 1_000_000}"))
    other = tmp_path / "again"
    assert main(["run", str(cfg), "--backend", "serial", "--out", str(other), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["compare", str(edited_folder), str(other)]) == 0
    text = capsys.readouterr().out
    assert f"compared 6 trials present in both {edited_folder} and {other}" in flat(text)
    assert f"{edited_folder}: {aside_sentence(edited_folder, included=False)}" in flat(text)
    assert text.rstrip().endswith("IDENTICAL")
    assert main(["compare", str(edited_folder), str(other), "--all"]) == 1
    text = flat(capsys.readouterr().out)
    assert f"6 trial(s) only in {edited_folder}" in text
    assert aside_sentence(edited_folder, included=True) in text


def rewrite_parts(folder: Path, change) -> None:
    """Rewrite each part file of ``folder`` with ``change(DataFrame) -> DataFrame``, keeping
    its schema and btlab metadata."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    for part in sorted(folder.glob("part-*.parquet")):
        table = pq.read_table(part)
        df = change(table.to_pandas())
        pq.write_table(pa.Table.from_pandas(df, schema=table.schema, preserve_index=False), part)


def test_rows_killed_by_the_runner_show_and_report(tmp_path, monkeypatch, capsys):
    """Trials the Ray backend killed (hung past their time limit) have status time_limit and
    null counters: the tables print '-' for what is unknown, and nothing warns."""
    out = run_shape(tmp_path, monkeypatch, SHAPES[0][1], None)
    counters = ["nodes", "backtracks", "dead_ends", "checks", "solutions", "max_depth"]

    def killed(df):
        df = df.copy()
        first = df.index    # all: no value known at all
        df.loc[first, counters] = None
        df.loc[first, "status"] = "time_limit"
        df.loc[first, "error"] = "killed by the runner: no report for 6.1 s"
        return df

    rewrite_parts(out, killed)
    capsys.readouterr()
    with _no_warnings():
        assert main(["show", str(out)]) == 0
        report = tmp_path / "r.html"
        assert main(["report", str(out), "-o", str(report)]) == 0
    shown = capsys.readouterr().out
    tables = rich_tables(shown)
    assert tables[0][1:] == [["16", "0", "0", "16", "0", "0"]]
    assert tables[1][1:] == [["-"] * 6]    # work: nothing known
    counts = summary_counts(report.read_text())
    assert counts["time_limit"] == 16 and counts["all"] == 16


def test_a_folder_of_no_rows_shows_and_reports(tmp_path, monkeypatch, capsys):
    """A folder whose only part holds no row (as a part recording a config does)."""
    out = run_shape(tmp_path, monkeypatch, SHAPES[4][1], None)
    rewrite_parts(out, lambda df: df.iloc[0:0])
    capsys.readouterr()
    assert main(["show", str(out)]) == 0
    shown = flat(capsys.readouterr().out)
    assert f"{out}: 0 trials of shape" in shown and "no rows" in shown
    assert "1 trial(s) of the config last run are not in the folder yet" in shown
    report = tmp_path / "r.html"
    assert main(["report", str(out), "-o", str(report)]) == 0
    text = report.read_text()
    assert "0 trials of <b>knights_tour</b>" in text and "No trial to show." in text
    assert "1 trial(s) of the config last run are not in the folder yet" in text


class _no_warnings:
    """Fail on any warning raised inside the block."""

    def __enter__(self):
        import warnings

        self._catch = warnings.catch_warnings()
        self._catch.__enter__()
        warnings.simplefilter("error")

    def __exit__(self, *exc):
        self._catch.__exit__(*exc)
        return False


def test_show_report_and_compare_agree_on_a_uri(edited_folder, tmp_path, capsys):
    """`--out file:///...` folders: report reads them as show and compare do."""
    uri = edited_folder.resolve().as_uri()
    assert main(["show", uri]) == 0
    shown = flat(capsys.readouterr().out)
    assert f"{uri}: 6 trials of edited (1 run(s))" in shown
    report = tmp_path / "uri.html"
    assert main(["report", uri, "-o", str(report)]) == 0
    text = report.read_text()
    assert f"6 trials of <b>knights_tour</b> from <code>{uri}</code>" in text
    assert "6 superseded row(s) (trials no longer in the config last run) are kept beside the " \
        f"folder in {edited_folder.resolve().parent}/.edited.btlab/superseded: not counted" \
        in html.unescape(text)
    assert summary_counts(text)["all"] == 6
    assert main(["compare", uri, str(edited_folder)]) == 0
    assert capsys.readouterr().out.rstrip().endswith("IDENTICAL")


def test_a_whole_sweep_is_counted_without_expanding_its_config(tmp_path, monkeypatch,
                                                               edited_folder):
    """A folder holding exactly one config's trials needs no expansion (a million-trial sweep
    takes about a minute to expand); an edited folder is expanded, with the same answer."""
    from btlab.analysis import counted_rows
    from btlab.analysis.counted_rows import current_trial_ids, select_rows
    from btlab.store.folder import load_rows

    out = run_shape(tmp_path, monkeypatch, SHAPES[1][1], None)   # 25 node_limit trials
    df = load_rows(out)
    expanded = current_trial_ids(out)            # no rows given: expanded
    assert expanded == set(df["trial_id"]) and len(expanded) == 25

    def refuse(config, **kwargs):
        raise AssertionError("expanded")

    monkeypatch.setattr(counted_rows, "iter_trials", refuse)
    chosen = select_rows(out, df)
    assert len(chosen.rows) == 25 and chosen.older == 0 and chosen.notes == []
    edited = load_rows(edited_folder)   # the folder holds one config's trials: not expanded
    assert len(select_rows(edited_folder, edited).rows) == 6
    with pytest.raises(AssertionError, match="expanded"):   # two configs' rows: expanded
        select_rows(edited_folder, load_rows(edited_folder, superseded=True), all_rows=True)
    with pytest.raises(AssertionError, match="expanded"):   # a trial missing: expanded
        select_rows(out, df.iloc[1:])
