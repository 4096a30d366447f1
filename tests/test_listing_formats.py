"""``btlab ls``, ``--format table|csv|json``, ``compare`` naming trials and ``--timings``, and
the report's per-start CSV: every output parsed back and checked against the Parquet rows.

Two small sweeps, run once (serial, a few seconds): the knight's tour on 5 x 5 from all 25
starts under three heuristics, 2,000 placements, 2 repeats (150 rows), and N-Queens
counting n = 4..6 under two strategies.
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from helpers.cli import run_main

from btlab import analysis
from btlab.analysis.folder_diff import compare, timing_ratios
from btlab.analysis.sweeps import list_sweeps
from btlab.views.tables import cell_value

ROOT = Path(__file__).resolve().parents[1]
KNIGHTS = ["run", str(ROOT / "configs" / "warnsdorff_64_starts.yaml"), "fixed.board=[5,5]",
           "budget.nodes=2000", "repeats=2", "--backend", "serial", "--quiet"]
QUEENS = ["run", str(ROOT / "configs" / "queens_algorithms.yaml"), "matrix.n=[4,5,6]",
          "matrix.strategy=[recursive,bitmask]", "~exclude", "--backend", "serial", "--quiet"]


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    """``results/`` holding ``w5`` (knight's tour) and ``q`` (N-Queens)."""
    base = tmp_path_factory.mktemp("listing")
    results = base / "results"
    assert run_main(*KNIGHTS, "--out", results / "w5") == 0
    assert run_main(*QUEENS, "--out", results / "q") == 0
    return results


def _out(capsys) -> str:
    return capsys.readouterr().out


def _rows(folder: Path) -> pd.DataFrame:
    return analysis.load(folder)


# --------------------------------------------------------------------------- btlab ls


def test_list_sweeps_reads_each_folder(root):
    # hidden names are no sweeps: a work folder, a staging folder, a _name
    (root / ".staging").mkdir(exist_ok=True)
    shutil.copytree(root / "w5", root / "_old", dirs_exist_ok=True)
    sweeps = list_sweeps(root)
    assert list(sweeps["name"]) == ["q", "w5"]
    w5 = sweeps.set_index("name").loc["w5"]
    rows = _rows(root / "w5")
    first = rows[rows["repeat"] == 0]
    assert (w5["problem"], w5["config"]) == ("knights_tour", "warnsdorff-64-starts")
    assert (w5["trials"], w5["rows"], w5["runs"]) == (75, 150, 1)
    for status, n in first["status"].astype(str).value_counts().items():
        assert w5[status] == n
    assert w5["solved"] + w5["node_limit"] == 75
    q = sweeps.set_index("name").loc["q"]
    assert (q["problem"], q["trials"], q["exhausted"], q["error"]) == ("n_queens", 6, 6, 0)
    assert sweeps["last_run"].dt.tz is not None
    shutil.rmtree(root / "_old")


def test_show_results_root_lists_the_sweeps(root, capsys, monkeypatch):
    # issue 25, item 4: `btlab show results` used to say to move another sweep's part files
    # out of the way (a fix that fails); it lists the sweeps, exit 0, as `btlab ls` does
    monkeypatch.chdir(root.parent)
    (root / "report.html").write_text("<html></html>")  # a report beside the sweeps
    assert run_main("show", "results") == 0
    shown = _out(capsys)
    assert run_main("ls") == 0
    listed = _out(capsys)
    assert shown == listed
    assert "mv " not in shown and "fix:" not in shown
    assert "w5" in shown and "knights_tour" in shown and "n_queens" in shown
    (root / "report.html").unlink()


def test_ls_json_and_csv_parse_back(root, capsys):
    assert run_main("ls", root, "--format", "json") == 0
    data = json.loads(_out(capsys))
    assert list(data) == [f"sweeps under {root}"]
    by_name = {r["name"]: r for r in data[f"sweeps under {root}"]}
    assert by_name["w5"]["trials"] == 75 and by_name["w5"]["rows"] == 150
    assert by_name["q"]["exhausted"] == 6
    assert by_name["w5"]["last_run"].endswith("+00:00")
    assert run_main("ls", root, "--format", "csv") == 0
    frame = pd.read_csv(io.StringIO(_out(capsys)))
    assert list(frame["name"]) == ["q", "w5"]
    assert frame.set_index("name").loc["w5", "node_limit"] == by_name["w5"]["node_limit"]


def test_ls_of_a_results_folder_gives_a_fix_that_works(root, capsys):
    assert run_main("ls", root / "w5") == 2
    err = capsys.readouterr().err
    assert "a results folder itself" in err
    fix = err.split("fix: ")[1].split()
    assert fix[:2] == ["btlab", "show"]
    assert run_main(*fix[1:]) == 0


def test_ls_of_a_missing_root(tmp_path, capsys):
    assert run_main("ls", tmp_path / "nothing") == 2
    assert "no such folder" in capsys.readouterr().err
    assert run_main("ls", tmp_path) == 0
    assert "no results folder in it" in _out(capsys)
    assert run_main("ls", "s3://bucket/results") == 2
    assert "fix: btlab show s3://bucket/results" in capsys.readouterr().err


def test_ls_names_an_unreadable_sweep(root, tmp_path, capsys):
    bad = tmp_path / "results"
    shutil.copytree(root / "w5", bad / "w5")
    (bad / "broken").mkdir()
    (bad / "broken" / "part-x.parquet").write_bytes(b"not parquet")
    sweeps = list_sweeps(bad)
    broken = sweeps.set_index("name").loc["broken"]
    assert "part-x.parquet" in broken["note"] and pd.isna(broken["trials"])
    assert sweeps.set_index("name").loc["w5", "trials"] == 75
    assert run_main("ls", bad) == 0
    assert "part-x.parquet" in _out(capsys)


# --------------------------------------------------------------------------- show --format


def test_show_json_is_every_headline_table(root, capsys):
    assert run_main("show", root / "w5", "--format", "json") == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)  # stdout holds the object only; the lines go to stderr
    assert "150 trials" in captured.err
    titles = list(data)
    assert titles[0].startswith("Knight's tour: trials by status")
    assert any(t.startswith("backtracks by start square (heuristic=warnsdorff)") for t in titles)
    rows = _rows(root / "w5")
    first = rows[rows["repeat"] == 0]
    counts = {r["heuristic"]: r for r in data[titles[0]]}
    for heuristic, sub in first.groupby("heuristic", observed=True):
        assert counts[heuristic]["starts"] == 25
        assert counts[heuristic]["solved"] == int((sub["status"] == "solved").sum())
    work = {r["heuristic"]: r for r in data[titles[1]]}
    none = first[first["heuristic"] == "none"]
    # censored trials make the total a lower bound: marked, without thousands separators
    assert work["none"]["nodes total"] == f">={int(none['nodes'].sum())}"


def test_show_csv_picks_a_table(root, capsys):
    assert run_main("show", root / "w5", "--format", "csv", "--table", "work") == 0
    frame = pd.read_csv(io.StringIO(_out(capsys)))
    assert list(frame.columns[:2]) == ["heuristic", "nodes total"]
    assert list(frame["heuristic"]) == ["none", "warnsdorff", "static_degree"]
    rows = _rows(root / "w5")
    warnsdorff = rows[(rows["repeat"] == 0) & (rows["heuristic"] == "warnsdorff")]
    assert str(frame.set_index("heuristic").loc["warnsdorff", "backtracks total"]) == (
        f">={int(warnsdorff['backtracks'].sum())}")
    # default: the first table; a grid by number
    assert run_main("show", root / "w5", "--format", "csv") == 0
    assert _out(capsys).startswith("heuristic,starts,solved,")
    assert run_main("show", root / "w5", "--format", "csv", "--table", "4") == 0
    grid = pd.read_csv(io.StringIO(_out(capsys)))
    assert grid.shape == (5, 6) and list(grid["row\\col"]) == [0, 1, 2, 3, 4]


def test_show_csv_unknown_table_fix_works(root, capsys):
    assert run_main("show", root / "w5", "--format", "csv", "--table", "tours") == 2
    err = capsys.readouterr().err
    assert "matches none" in err and "2. Knight's tour: work" in err
    fix = err.split("fix: ")[1].split()[:2]
    assert fix == ["--table", "1"]
    assert run_main("show", root / "w5", "--format", "csv", *fix) == 0
    # a word in several titles is ambiguous
    assert run_main("show", root / "w5", "--format", "csv", "--table", "backtracks") == 2
    assert "matches 3 of them" in capsys.readouterr().err  # the three grids


def test_show_queens_count_json(root, capsys):
    assert run_main("show", root / "q", "--format", "json") == 0
    data = json.loads(_out(capsys))
    (title, table), = list(data.items())[:1]
    solutions = {(r["n"], r["strategy"]): r for r in table} if "n" in table[0] else None
    assert solutions is not None, table[0]
    rows = _rows(root / "q")
    for rec in rows.itertuples():
        row = solutions[(rec.n, rec.strategy)]
        assert row["solutions"] == rec.solutions  # 2, 10, 4: OEIS A000170
    assert sorted({r["solutions"] for r in table}) == [2, 4, 10]


def test_cell_values():
    assert cell_value("1,234", True) == 1234
    assert cell_value("0.25", True) == 0.25
    assert cell_value(">=1,984", True) == ">=1984"
    assert cell_value("-", True) is None
    assert cell_value("1,234", False) == "1,234"  # a text column keeps its text
    assert cell_value("1.2 s", True) == "1.2 s"


# --------------------------------------------------------------------------- compare


def _copy_with(src: Path, dst: Path, *, cpu_factor: tuple[int, int] = (1, 1), drop: int = 0,
               nodes_plus: int = 0) -> Path:
    """A copy of a results folder, its parts rewritten: ``cpu_ns`` times a fraction, the last
    ``drop`` rows of the first part left out, ``nodes`` of its first row changed."""
    dst.mkdir(parents=True)
    for i, part in enumerate(sorted(src.glob("*.parquet"))):
        t = pq.read_table(part)
        cpu = pc.divide(pc.multiply(t["cpu_ns"], cpu_factor[0]), cpu_factor[1])
        t = t.set_column(t.schema.get_field_index("cpu_ns"), "cpu_ns", cpu)
        if i == 0 and drop:
            t = t.slice(0, t.num_rows - drop)
        if i == 0 and nodes_plus:
            nodes = t["nodes"].to_pylist()
            nodes[0] += nodes_plus
            t = t.set_column(t.schema.get_field_index("nodes"), "nodes",
                             pa.array(nodes, t["nodes"].type))
        pq.write_table(t, dst / part.name)
    return dst


def test_compare_names_missing_trials_by_parameters(root, tmp_path, capsys):
    b = _copy_with(root / "w5", tmp_path / "b", drop=2)
    assert run_main("compare", root / "w5", b) == 1
    out = _out(capsys)
    assert "2 trial(s) only in" in out
    result = compare(root / "w5", b)
    missing = result.only_a
    assert len(missing) == 2
    rows = _rows(root / "w5").set_index("trial_id")
    for tid in missing:
        rec = rows.loc[tid]
        line = next(ln for ln in out.splitlines() if tid in ln)
        # as `btlab validate` prints a trial: its parameters, budget, seed and repeat
        assert (f"start_row={rec['start_row']}  start_col={rec['start_col']}  "
                f"heuristic={rec['heuristic']}") in line
        assert "budget_nodes=2000" in line and f"repeat={rec['repeat']}" in line
    # the same words as validate: the samples it prints appear in that form
    assert run_main("validate", *KNIGHTS[1:5]) == 0
    sample = _out(capsys).splitlines()[1].split("  ", 2)[2].split("  budget_nodes")[0]
    assert sample.startswith("rows=5  cols=5  start_row=0  start_col=0  heuristic=none")
    assert run_main("compare", root / "w5", b, "--format", "json") == 1
    data = json.loads(_out(capsys))
    assert [r["trial_id"] for r in data["only in A"]] == missing
    assert data["only in A"][0]["parameters"].startswith("rows=5  cols=5  start_row=")
    assert data["summary"][0]["identical"] is False and data["summary"][0]["only_in_a"] == 2


def test_compare_timings_catches_a_slower_copy(root, tmp_path, capsys):
    slow = _copy_with(root / "w5", tmp_path / "slow", cpu_factor=(3, 2))  # cpu_ns x 1.5
    assert run_main("compare", root / "w5", slow) == 0  # counters alone: identical
    capsys.readouterr()
    assert run_main("compare", root / "w5", slow, "--timings") == 1
    out = _out(capsys)
    for heuristic in ("none", "warnsdorff", "static_degree"):
        line = next(ln for ln in out.splitlines() if f"heuristic={heuristic}:" in ln)
        assert line.strip().startswith(f"heuristic={heuristic}: 1.50x (1.50..1.50 over 2 "
                                       "repeats)") and line.endswith("SLOWER")
    assert out.rstrip().endswith("IDENTICAL\nSLOWER")
    # within a threshold of 2: exit 0
    assert run_main("compare", root / "w5", slow, "--timings", "--threshold", "2") == 0
    assert "TIMINGS WITHIN 2x" in _out(capsys)
    # the library: the same numbers
    a, b = _rows(root / "w5"), _rows(slow)
    t = timing_ratios(a, b, threshold=1.1)
    assert list(t["heuristic"]) == ["none", "warnsdorff", "static_degree"]
    assert t["trials"].tolist() == [25, 25, 25] and t["repeats"].tolist() == [2, 2, 2]
    assert t["ratio"].round(4).tolist() == [1.5, 1.5, 1.5]
    assert t["slower"].all()
    none = a[a["heuristic"] == "none"]
    assert t.loc[0, "a_ms"] == pytest.approx(none["cpu_ns"].median() / 1e6)
    # JSON and CSV of the timings
    assert run_main("compare", root / "w5", slow, "--timings", "--format", "csv",
                    "--table", "timings") == 1
    frame = pd.read_csv(io.StringIO(_out(capsys)))
    assert frame["ratio"].round(4).tolist() == [1.5, 1.5, 1.5] and frame["slower"].all()


def test_compare_timings_faster_copy_passes_and_counters_fail(root, tmp_path, capsys):
    fast = _copy_with(root / "w5", tmp_path / "fast", cpu_factor=(1, 2))
    assert run_main("compare", root / "w5", fast, "--timings") == 0
    assert "0.50x" in _out(capsys)
    changed = _copy_with(root / "w5", tmp_path / "changed", nodes_plus=1)
    assert run_main("compare", root / "w5", changed, "--timings") == 1
    out = _out(capsys)
    assert "1 trial(s) differ:" in out and "nodes:" in out and "SLOWER" not in out
    assert run_main("compare", root / "w5", fast, "--timings", "--threshold", "0") == 2
    assert "fix: --threshold 1.1" in capsys.readouterr().err


# --------------------------------------------------------------------------- report


def test_report_writes_the_per_start_table_as_csv(root, tmp_path, capsys, monkeypatch):
    from btlab.views.report import page

    # the HTML's plots take half a minute on a loaded machine, and other tests draw them:
    # here the page is a stub, the CSV and the "wrote" line are the real ones
    monkeypatch.setattr(page, "render_report", lambda results, all_rows=False: "<html>")
    out = tmp_path / "r.html"
    assert run_main("report", root / "w5", "-o", out) == 0
    assert out.read_text() == "<html>"
    said = _out(capsys)
    csv_path = tmp_path / "r.csv"
    assert f"and {csv_path}: the per-start table" in said
    frame = pd.read_csv(csv_path)
    assert len(frame) == 75
    assert list(frame.columns[:5]) == ["heuristic", "rows", "cols", "start_row", "start_col"]
    rows = _rows(root / "w5")
    first = rows[rows["repeat"] == 0].set_index(["heuristic", "start_row", "start_col"])
    for rec in frame.itertuples():
        want = first.loc[(rec.heuristic, rec.start_row, rec.start_col)]
        assert (rec.status, rec.nodes, rec.backtracks) == (
            want["status"], want["nodes"], want["backtracks"])
        assert rec.censored == (want["status"] == "node_limit")
    # a second report into the same name replaces both; a report with no case to list
    # writes no CSV and names none
    monkeypatch.setattr(page.report_cases, "per_start_frame", lambda df, spec: None)
    other = tmp_path / "other.html"
    assert run_main("report", root / "w5", "-o", other) == 0
    assert not (tmp_path / "other.csv").exists() and ".csv" not in _out(capsys)


# --------------------------------------------------------------------------- docs/analysis.md


def _run_block_commands(text: str, capsys) -> list[tuple[list[str], int, str]]:
    """Each ``btlab ...`` line of a shell block through the CLI (``> FILE`` writes its
    standard output there): (argv, exit status, standard output)."""
    import shlex

    done = []
    for line in text.splitlines():
        words = shlex.split(line, comments=True)
        if not words:
            continue
        assert words[0] == "btlab", line
        target = None
        if ">" in words:
            at = words.index(">")
            words, target = words[:at], words[at + 1]
        capsys.readouterr()
        status = run_main(*words[1:])
        out = capsys.readouterr().out
        if target:
            Path(target).write_text(out)
        done.append((words, status, out))
    return done


def _table_cells(text: str) -> list[list[str]]:
    """The body rows of a printed rich table, cell by cell."""
    return [[c.strip() for c in line.strip("│").split("│")] for line in text.splitlines()
            if line.startswith("│")]


def test_analysis_md_listing_blocks(tmp_path, monkeypatch, capsys):
    import contextlib
    import re

    from test_docs import block

    shutil.copytree(ROOT / "configs", tmp_path / "configs")
    monkeypatch.chdir(tmp_path)
    md = "docs/analysis.md"
    run = block(md, "btlab run configs/warnsdorff_64_starts.yaml 'fixed.board=[5,5]' "
                    "budget.nodes=2000 repeats=2 --out results/w5 ")
    (_, ran, _), (_, ls_status, listed), (_, show_status, shown) = _run_block_commands(
        run.text, capsys)
    assert (ran, ls_status, show_status) == (0, 0, 0) and listed == shown
    doc_rows = _table_cells(block(md, "sweeps under results").text)
    got_rows = _table_cells(listed)
    assert len(doc_rows) == len(got_rows) == 1
    last_run = 4  # the time of the run: the only cell that differs
    assert [c for i, c in enumerate(got_rows[0]) if i != last_run] == [
        c for i, c in enumerate(doc_rows[0]) if i != last_run]

    formats = _run_block_commands(block(md, "btlab show results/w5 --format json > w5.json")
                                  .text, capsys)
    assert [s for _, s, _ in formats] == [0, 0, 0]
    assert pd.read_csv(io.StringIO(formats[2][2]))["trials"].tolist() == [75]
    code = block(md, "import json").text
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, f"{md}:python", "exec"), {})
    assert printed.getvalue() == block(md, "[\"Knight's tour: trials by status").text

    again = _run_block_commands(block(md, "btlab run configs/warnsdorff_64_starts.yaml "
                                          "'fixed.board=[5,5]' budget.nodes=2000 repeats=2 "
                                          "--out results/w5-again").text, capsys)
    (_, ran, _), (_, status, out) = again
    assert ran == 0
    lines = [ln for ln in out.splitlines() if re.match(r"  heuristic=\w+: \d+\.\d\dx", ln)]
    assert len(lines) == 3 and "IDENTICAL" in out
    assert status == (1 if "SLOWER" in out else 0)

    # the documented timing lines: a copy of w5-again with cpu_ns x 1.5
    slow = _copy_with(Path("results/w5-again"), tmp_path / "slow", cpu_factor=(3, 2))
    capsys.readouterr()
    assert run_main("compare", "results/w5-again", slow, "--timings") == 1
    out = capsys.readouterr().out
    got = out[out.index("timings:"):]
    doc = block(md, "timings: median cpu_ns ratio B/A").text

    def no_ms(text: str) -> str:
        return re.sub(r"[\d.,]+ ms", "N ms", text)

    assert no_ms(got) == no_ms(doc)
