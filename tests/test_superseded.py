"""A results folder holds exactly the answer to the config last run (issue 25, item 1).

A rerun whose config no longer contains a trial moves its rows beside the folder
(``<parent>/.<name>.btlab/superseded/``), before any trial starts: pandas, Polars and
DuckDB given the folder read the trials of the config last run only; a later run asking
for those trials again takes them back (resumed, never rerun); ``--all`` and
``load(superseded=True)`` read them; ``--fresh`` and ``btlab prune`` delete them, saying
how many; a crash between the two writes of a move leaves every row readable once.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import duckdb
import pandas as pd
import polars as pl
import pyarrow.parquet as pq
import pytest
from helpers.cli import run_main, write

import btlab
from btlab.store.folder import part_files, work_dir
from btlab.store.location import locate, superseded_location

#: The issue's example: a 5 x 5 Warnsdorff sweep of all 25 starts.
STALE = """\
    name: stale
    problem: knights_tour
    fixed: {board: 5, strategy: iterative, heuristic: warnsdorff}
    matrix: {start: all}
    budget: {nodes: 1000}
"""

#: Two heuristics in one part file: dropping one leaves a part holding both kinds.
TWO = """\
    name: two
    problem: knights_tour
    fixed: {board: 5, strategy: iterative}
    matrix: {heuristic: [warnsdorff, none], start: all}
    budget: {nodes: 300}
"""


def run(cfg: Path, out: Path | str, *extra: str) -> int:
    return run_main("run", cfg, *extra, "--out", out, "--backend", "serial", "--quiet")


def flat(text: str) -> str:
    """Printed text with its line wrapping undone."""
    return " ".join(text.split())


def aside(out: Path) -> Path:
    return work_dir(out) / "superseded"


def readers(folder: Path) -> dict[str, pd.DataFrame]:
    """The folder as pandas, Polars and DuckDB (a ``*.parquet`` and a ``**`` glob) read it."""
    return {
        "pandas": pd.read_parquet(folder),
        "polars": pl.read_parquet(folder).to_pandas(),
        "duckdb glob": duckdb.sql(f"select * from read_parquet('{folder}/*.parquet', "
                                  "union_by_name = true)").df(),
        "duckdb **": duckdb.sql(f"select * from read_parquet('{folder}/**/*.parquet', "
                                "union_by_name = true)").df(),
    }


def budgets(out: Path) -> dict[str, set[int]]:
    return {name: set(df["budget_nodes"]) for name, df in readers(out).items()}


def test_a_budget_edit_leaves_every_reader_25_rows_and_going_back_runs_nothing(
        tmp_path, capsys):
    cfg = write(tmp_path / "stale.yaml", STALE)
    out = tmp_path / "results" / "stale"
    assert run(cfg, out) == 0
    assert run(cfg, out, "budget.nodes=2000") == 0
    said = flat(capsys.readouterr().out)
    assert "moved 25 row(s) of trials no longer in the config out of" in said
    assert "25 trials, 0 already in" in said
    for name, df in readers(out).items():
        assert len(df) == 25 and df["trial_id"].is_unique, name
    assert budgets(out) == {name: {2000} for name in readers(out)}
    assert sorted(p.name[:5] for p in out.iterdir()) == ["part-"] * len(list(out.iterdir()))
    assert pq.read_table(aside(out)).num_rows == 25  # kept, beside the folder
    # back to 1000: nothing runs, the 25 rows come back
    assert run(cfg, out) == 0
    said = flat(capsys.readouterr().out)
    assert "25 trials, 25 already in" in said and "0 to run" in said
    assert "took back 25 row(s) of this config's trials" in said
    assert "started serial" not in said  # no trial ran
    for name, df in readers(out).items():
        assert len(df) == 25 and set(df["budget_nodes"]) == {1000}, name
    assert set(pq.read_table(aside(out)).column("budget_nodes").to_pylist()) == {2000}
    assert len(btlab.load(out)) == 25
    both = btlab.load(out, superseded=True)
    assert len(both) == 50 and both["trial_id"].is_unique
    assert sorted(both["budget_nodes"].value_counts().to_dict().items()) == [(1000, 25),
                                                                             (2000, 25)]


RULE = '''\
"""A knight's-tour rule for btlab."""
# version 1


def fewest_onward(board, square, candidates):
    """Warnsdorff's rule: fewest unvisited onward squares first."""
    return sorted(candidates, key=lambda s: board.onward(*s))
'''


@pytest.fixture
def rule_module(tmp_path, monkeypatch):
    name = "stale_rules"
    path = tmp_path / f"{name}.py"
    path.write_text(RULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop(name, None)
    yield path
    sys.modules.pop(name, None)


def test_an_edited_plugin_comment_reruns_its_trials_and_the_folder_holds_one_row_each(
        tmp_path, rule_module, capsys):
    cfg = write(tmp_path / "rule.yaml", """\
        name: rule
        problem: knights_tour
        fixed: {board: 5, strategy: iterative}
        matrix: {heuristic: [warnsdorff, "stale_rules:fewest_onward"], start: all}
        budget: {nodes: 1000}
    """)
    out = tmp_path / "results" / "rule"
    assert run(cfg, out) == 0
    rule_module.write_text(RULE.replace("# version 1", "# version 2: a comment edited"))
    assert run(cfg, out) == 0
    said = flat(capsys.readouterr().out)
    assert "50 trials, 25 already in" in said and "25 to run" in said
    assert "moved 25 row(s)" in said
    for df in (pd.read_parquet(out), btlab.load(out)):
        assert len(df) == 50 and df["trial_id"].is_unique
        assert df.groupby("heuristic", observed=True).size().to_dict() == {
            "warnsdorff": 25, "stale_rules:fewest_onward": 25}
    # show counts from what the run stored: editing the plug-in again changes nothing it shows
    rule_module.write_text(RULE.replace("# version 1", "# version 3, never run"))
    assert run_main("show", out) == 0
    shown = flat(capsys.readouterr().out)
    assert f"{out}: 50 trials of rule" in shown
    assert "not in the folder yet" not in shown and "older row(s)" not in shown
    assert "25 superseded row(s)" in shown and "not counted" in shown
    meta = pq.read_schema(part_files(out)[-1]).metadata
    assert list(json.loads(meta[b"btlab.plugins"])) == ["stale_rules:fewest_onward"]


def test_a_crash_between_the_two_writes_of_a_move_leaves_every_row_once(
        tmp_path, monkeypatch, capsys):
    cfg = write(tmp_path / "two.yaml", TWO)
    out = tmp_path / "results" / "two"
    assert run(cfg, out) == 0
    (part,) = part_files(out)
    assert pq.read_metadata(part).num_rows == 50  # both heuristics in one part
    monkeypatch.setenv("BTLAB_TEST_FAULT", "enospc:supersede")  # the rewrite of that part fails
    assert run(cfg, out, "matrix.heuristic=[warnsdorff]") == 3
    capsys.readouterr()
    # the superseded rows are written beside, the part still holds them: both places
    assert pq.read_table(aside(out)).num_rows == 25
    assert pq.read_metadata(part).num_rows == 50
    for df in (btlab.load(out), btlab.load(out, superseded=True)):
        assert len(df) == 50 and df["trial_id"].is_unique
    monkeypatch.delenv("BTLAB_TEST_FAULT")
    assert run(cfg, out, "matrix.heuristic=[warnsdorff]") == 0
    said = flat(capsys.readouterr().out)
    assert "deleted 25 superseded copy(ies) of row(s) also in" in said
    assert "moved 25 row(s)" in said and "0 to run" in said
    df = btlab.load(out)
    assert len(df) == 25 and set(df["heuristic"]) == {"warnsdorff"}
    kept = pq.read_table(aside(out)).to_pandas()
    assert len(kept) == 25 and kept["trial_id"].is_unique and set(kept["heuristic"]) == {"none"}
    assert len(pd.read_parquet(out)) == 25


def test_a_file_uri_destination_keeps_its_superseded_rows_beside_it(tmp_path, capsys):
    cfg = write(tmp_path / "stale.yaml", STALE)
    folder = tmp_path / "shared" / "stale"
    uri = f"file://{folder}"
    assert run(cfg, uri) == 0
    assert run(cfg, uri, "budget.nodes=2000") == 0
    assert f"to {work_dir(folder) / 'superseded'}" in flat(capsys.readouterr().out)
    assert superseded_location(locate(uri)).local == aside(folder)
    for name, df in readers(folder).items():
        assert len(df) == 25 and set(df["budget_nodes"]) == {2000}, name
    assert len(btlab.load(uri, superseded=True)) == 50
    assert run(cfg, uri) == 0
    assert "took back 25 row(s)" in flat(capsys.readouterr().out)
    assert set(btlab.load(uri)["budget_nodes"]) == {1000}
    assert run_main("prune", uri) == 0
    assert "deleted 25 superseded row(s) in 2 file(s)" in flat(capsys.readouterr().out)
    assert not aside(folder).exists()


def test_prune_deletes_only_the_superseded_rows_and_says_what_it_frees(tmp_path, capsys):
    cfg = write(tmp_path / "two.yaml", TWO)
    out = tmp_path / "results" / "two"
    assert run(cfg, out) == 0
    assert run(cfg, out, "matrix.heuristic=[warnsdorff]") == 0
    capsys.readouterr()
    size = sum(p.stat().st_size for p in aside(out).iterdir())
    assert run_main("prune", out) == 0
    assert flat(capsys.readouterr().out) == (
        f"{out}: deleted 25 superseded row(s) in 1 file(s), freeing {size:,} bytes "
        f"({aside(out)})")
    assert len(pd.read_parquet(out)) == 25 and not work_dir(out).exists()
    assert run_main("prune", out) == 0
    assert flat(capsys.readouterr().out) == f"{out}: no superseded rows to delete"
    # not btlab results: exit 2, a clear error
    other = tmp_path / "other"
    other.mkdir()
    pd.DataFrame({"x": [1]}).to_parquet(other / "data.parquet")
    assert run_main("prune", other) == 2
    err = flat(capsys.readouterr().err)
    assert "not a btlab results folder (1 Parquet file(s), none written by btlab)" in err
    assert "fix: give the folder `btlab run` wrote" in err
    assert run_main("prune", tmp_path / "missing") == 2
    assert "not a btlab results folder (no such folder)" in flat(capsys.readouterr().err)


def test_fresh_deletes_the_parts_and_the_superseded_rows_saying_how_many(tmp_path, capsys):
    cfg = write(tmp_path / "stale.yaml", STALE)
    out = tmp_path / "results" / "stale"
    assert run(cfg, out) == 0
    assert run(cfg, out, "budget.nodes=2000") == 0
    parts = len(part_files(out))
    capsys.readouterr()
    assert run(cfg, out, "--fresh") == 0
    said = flat(capsys.readouterr().out)
    assert (f"--fresh: deleted {parts} earlier part file(s) in {out} and 25 superseded row(s) "
            "(1 file(s)) kept beside it") in said
    assert "25 to run" in said and "took back" not in said
    assert not aside(out).exists() and len(pd.read_parquet(out)) == 25


def test_all_on_show_compare_and_report_reads_the_superseded_rows(tmp_path, capsys):
    cfg = write(tmp_path / "two.yaml", TWO)
    a, b = tmp_path / "a", tmp_path / "b"
    for out in (a, b):
        assert run(cfg, out) == 0
        assert run(cfg, out, "matrix.heuristic=[warnsdorff]") == 0
    capsys.readouterr()
    assert run_main("show", a) == 0
    shown = flat(capsys.readouterr().out)
    assert f"{a}: 25 trials of two" in shown
    assert "25 superseded row(s)" in shown and "not counted (--all includes them" in shown
    assert run_main("show", a, "--all") == 0
    shown = flat(capsys.readouterr().out)
    assert f"{a}: 50 trials of two" in shown and "included (--all)" in shown
    assert "older row(s)" not in shown
    assert run_main("compare", a, b) == 0
    assert "compared 25 trials" in flat(capsys.readouterr().out)
    assert run_main("compare", a, b, "--all") == 0
    assert "compared 50 trials" in flat(capsys.readouterr().out)
    html = btlab.report(a, None, all_rows=True)
    assert "included (--all)" in html
    assert "not counted (--all includes them" in btlab.report(a, None)


def test_an_object_store_prefix_keeps_its_superseded_rows_beside_it_and_a_bucket_root_inside(
        tmp_path, monkeypatch):
    """A remote destination (pyarrow's in-memory mock filesystem standing for an object
    store, under a made-up ``mock://`` scheme): the rows go beside the prefix
    (``<prefix>.btlab/superseded/``, next to the lease), or, at a bucket root, to the hidden
    ``.btlab-superseded/`` inside it; the lease's release leaves them there."""
    import pyarrow.fs as pafs
    from pyarrow._fs import _MockFileSystem

    import btlab.analysis
    import btlab.store.location
    import btlab.store.read
    import btlab.store.superseded
    from btlab.api.run import sweep
    from btlab.store.location import Location
    from btlab.store.read import load_rows
    from btlab.store.superseded import prune

    fs = _MockFileSystem()
    real = btlab.store.location.locate

    def locate_mock(where):
        text = str(where)
        if text.startswith("mock://"):
            return Location(text, fs, text[len("mock://"):].rstrip("/"), None)
        return real(where)

    for module in (btlab.store.location, btlab.store.read, btlab.store.folder,
                   btlab.store.superseded, btlab.analysis):
        monkeypatch.setattr(module, "locate", locate_mock)
    cfg = write(tmp_path / "stale.yaml", STALE)

    def files() -> list[str]:
        return sorted(i.path for i in fs.get_file_info(pafs.FileSelector("", recursive=True))
                      if i.type == pafs.FileType.File)

    for out, beside in (("mock://bucket/x", "bucket/x.btlab/superseded/"),
                        ("mock://root", "root/.btlab-superseded/")):
        for nodes in (1000, 2000, 1000):
            sweep(cfg, f"budget.nodes={nodes}", backend="serial", out=out, progress=False,
                  tables=False)
        base = out[len("mock://"):]
        rows = load_rows(out)
        assert len(rows) == 25 and set(rows["budget_nodes"]) == {1000}
        assert len(load_rows(out, superseded=True)) == 50
        kept = [f for f in files() if f.startswith(beside)]
        assert kept and all(f.startswith((f"{base}/part-", beside)) for f in files()
                            if f.startswith(base))
        freed = prune(out)
        assert (freed.rows, freed.files) == (25, len(kept))
        assert not [f for f in files() if f.startswith(beside)]


def test_an_edited_plugin_leaves_show_report_and_compare_of_finished_folders_unchanged(
        tmp_path, rule_module, capsys):
    """Issue 26, kind 6: the config last run's trial ids come from the stored config and the
    plug-in hashes stored with it, never from the plug-in file as it is now."""
    cfg = write(tmp_path / "rule.yaml", """\
        name: rule
        problem: knights_tour
        fixed: {board: 5, strategy: iterative}
        matrix: {heuristic: [warnsdorff, "stale_rules:fewest_onward"], start: all}
        budget: {nodes: 1000}
    """)
    one, two = tmp_path / "results" / "one", tmp_path / "results" / "two"
    assert run(cfg, one) == 0 and run(cfg, two) == 0
    capsys.readouterr()

    def outputs() -> dict[str, tuple[int, str]]:
        said = {}
        for name, args in {"show": ("show", one), "report": ("report", one, "-o", "-"),
                           "report of two": ("report", one, two, "-o", "-"),
                           "compare": ("compare", one, two)}.items():
            status = run_main(*args)
            # matplotlib names the clip paths of an SVG at random, and a report says the
            # minute it was made: the rest of the page is compared as it is
            text = re.sub(r"data:image/svg\+xml;base64,[^\"]*", "SVG", capsys.readouterr().out)
            said[name] = (status, re.sub(r"report made [^;]* UTC", "report made", text))
        return said

    before = outputs()
    # the plug-in edited (its code, not only a comment) and imported again
    rule_module.write_text(RULE.replace("# version 1", "# version 2").replace(
        "key=lambda s: board.onward(*s))", "key=lambda s: -board.onward(*s))"))
    sys.modules.pop("stale_rules", None)
    after = outputs()
    assert after == before
    status, show = after["show"]
    assert status == 0 and f"{one}: 50 trials of rule" in flat(show)
    assert "older row(s)" not in show and "not in the folder yet" not in show
    page = {name: " ".join(re.sub(r"<[^>]*>", " ", after[name][1]).split())
            for name in ("report", "report of two")}
    assert after["report"][0] == after["report of two"][0] == 0
    assert "50 trials of knights_tour" in page["report"]
    # the two-folder report reads both folders' rows together: none dropped
    assert "100 trials of knights_tour from 2 results folders" in page["report of two"]
    assert page["report of two"].count("config rule , 50 trials") == 2
    status, compared = after["compare"]
    assert status == 0 and "compared 50 trials present in both" in flat(compared)
    assert "IDENTICAL" in compared
    for folder in (one, two):
        assert set(btlab.load(folder)["heuristic"]) == {"warnsdorff",
                                                         "stale_rules:fewest_onward"}
        assert len(btlab.load(folder)) == 50
