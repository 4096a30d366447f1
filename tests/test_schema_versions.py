"""Schema versions and the ``censored`` column: folders written by schema version 1 read,
resumed and combined; ``censored`` in every row; dtypes and config order of ``load``/``show``.

``tests/data/v1`` holds folders written by btlab with schema version 1 (before the
``censored`` column): ``knights`` (5 x 5, none and warnsdorff, 4 starts, 2,000
placements) and ``queens`` (count mode, recursive and amb, n = 4, 5; the n = 5
trials were run first, so arrival order is not config order).
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pandas as pd
import pyarrow.dataset as pads
import pyarrow.parquet as pq
import pytest
from helpers.cli import run_main, write

from btlab import analysis
from btlab.problems.censoring import CENSORED
from btlab.store.folder import part_files
from btlab.store.schema import SCHEMA_VERSION
from btlab.views.report.page import render_report

DATA = Path(__file__).parent / "data" / "v1"
KNIGHTS, QUEENS = DATA / "knights", DATA / "queens"

#: (start_row, start_col) -> status of the v1 knights fixture, per heuristic, config order.
KNIGHTS_ROWS = [("none", 0, 0, "solved"), ("none", 0, 1, "node_limit"),
                ("none", 2, 2, "node_limit"), ("none", 1, 2, "node_limit"),
                ("warnsdorff", 0, 0, "solved"), ("warnsdorff", 0, 1, "node_limit"),
                ("warnsdorff", 2, 2, "solved"), ("warnsdorff", 1, 2, "node_limit")]
INT_COLUMNS = ("nodes", "backtracks", "dead_ends", "checks", "solutions", "max_depth",
               "wall_ns", "cpu_ns", "budget_nodes", "seed", "repeat", "pid")


def _copy(src: Path, tmp_path: Path) -> Path:
    dst = tmp_path / src.name
    shutil.copytree(src, dst)
    return dst


def _versions(folder: Path) -> list[str]:
    return [pq.read_schema(p).metadata[b"btlab.schema_version"].decode()
            for p in part_files(folder)]


def _status_rule(df: pd.DataFrame) -> list[bool]:
    return [s in CENSORED for s in df["status"].astype(str)]


def test_the_fixture_is_schema_version_1_without_censored():
    assert SCHEMA_VERSION == 2
    for folder, parts in ((KNIGHTS, 1), (QUEENS, 2)):
        assert _versions(folder) == ["1"] * parts
        assert all("censored" not in pq.read_schema(p).names for p in part_files(folder))


def test_v1_folders_read_by_every_reader(tmp_path, capsys):
    """show, compare, report, analysis.load, pandas and pyarrow all read a v1 folder;
    load derives censored from status; the plain readers see no censored column."""
    assert run_main("show", KNIGHTS) == 0
    out = capsys.readouterr().out
    assert f"{KNIGHTS}: 8 trials of knights-v1 (1 run(s))" in out
    assert run_main("compare", KNIGHTS, QUEENS) in (0, 1)
    html = render_report(KNIGHTS)
    assert "knights-v1" in html and "&gt;=1,984" in html
    df = analysis.load(KNIGHTS)
    got = [(h, r, c, s) for h, r, c, s in zip(df["heuristic"], df["start_row"],
                                              df["start_col"], df["status"])]
    assert got == KNIGHTS_ROWS  # config order
    assert list(df.columns[df.columns.get_loc("status"):][:2]) == ["status", "censored"]
    assert str(df["censored"].dtype) == "boolean"
    assert df["censored"].tolist() == [s == "node_limit" for *_, s in KNIGHTS_ROWS]
    plain = pd.read_parquet(KNIGHTS, dtype_backend="numpy_nullable")
    assert "censored" not in plain.columns and str(plain["nodes"].dtype) == "Int64"
    assert pads.dataset(KNIGHTS).to_table().num_rows == 8


def test_v1_folder_resumed_keeps_its_part_version_and_gets_censored_from_status(tmp_path,
                                                                               capsys):
    """A run of the same config with one more start into a v1 folder: the v1 part is
    rewritten with censored computed from its status (never null: a plain reader's
    ``censored.sum()`` counts its budget stops) and keeps version 1 in its metadata; the
    new part is version 2 with censored written."""
    folder = _copy(KNIGHTS, tmp_path)
    before = pq.read_table(part_files(folder)[0])
    assert run_main("run", DATA / "knights.yaml", "--out", folder, "--backend", "serial",
                    "--quiet", "matrix.start=[[0,0],[0,1],[2,2],[1,2],[3,3]]") == 0
    old, new = part_files(folder)
    assert _versions(folder) == ["1", "2"]
    old_table = pq.read_table(old)
    assert old_table.column("censored").to_pylist() == [
        s == "node_limit" for *_, s in KNIGHTS_ROWS]
    # columns added within version 2 are null: those trials had no backtrack budget,
    # restarts or estimate (probes_done: the extra counter of estimate rows)
    added = ["budget_backtracks", "restarts", "probes", "estimator", "abandoned", "attempts",
             "success_seed", "estimate", "estimate_se", "solutions_estimate",
             "solutions_estimate_se", "probes_done"]
    for name in added:
        assert old_table.column(name).null_count == len(KNIGHTS_ROWS), name
    assert old_table.drop(["censored", *added]).equals(before)
    new_table = pq.read_table(new)
    assert new_table.schema.names.index("censored") == new_table.schema.names.index("status") + 1
    assert new_table.column("censored").to_pylist() == [
        s in CENSORED for s in new_table.column("status").to_pylist()]
    assert sorted(new_table.column("status").to_pylist()) == ["node_limit", "solved"]
    plain = pd.read_parquet(folder, dtype_backend="numpy_nullable")
    assert str(plain["censored"].dtype) == "boolean"
    assert plain["censored"].notna().all()
    # the README's plain pandas lines, on the resumed folder: every budget stop counted,
    # every finished trial of the v1 part kept
    assert plain.groupby("heuristic")["censored"].sum().to_dict() == {
        "none": 4, "warnsdorff": 2}  # (3, 3): none node_limit, warnsdorff solved
    assert len(plain[~plain["censored"]]) == 10 - 6
    assert pd.read_parquet(folder)["censored"].dtype == bool
    df = analysis.load(folder)
    assert df["censored"].notna().all() and df["censored"].tolist() == _status_rule(df)
    # config order: the (3, 3) start last within each heuristic, not last overall
    assert [(h, r, c) for h, r, c in zip(df["heuristic"], df["start_row"], df["start_col"])
            ][4:6] == [("none", 3, 3), ("warnsdorff", 0, 0)]
    assert run_main("show", folder) == 0
    assert f"{folder}: 10 trials of knights-v1 (2 run(s))" in capsys.readouterr().out


def test_v1_and_v2_folders_combined_with_nullable_dtypes(tmp_path):
    """load of a v1 knight's-tour folder and a v2 N-Queens folder: folder order first,
    each in config order; every integer column Int64 and every flag boolean, with <NA>
    where a problem has no such parameter."""
    v2 = tmp_path / "queens2"
    assert run_main("run", DATA / "queens.yaml", "--out", v2, "--backend", "serial",
                    "--quiet") == 0
    assert _versions(v2) == ["2"]
    df = analysis.load([KNIGHTS, v2])
    assert df.columns[0] == "source" and list(df["source"].cat.categories) == [
        "knights", "queens2"]
    assert df["source"].tolist() == ["knights"] * 8 + ["queens2"] * 4
    for col in ("rows", "cols", "start_row", "start_col", "n", *INT_COLUMNS):
        assert str(df[col].dtype) == "Int64", col
    for col in ("closed", "unique", "censored", "git_dirty"):
        assert str(df[col].dtype) == "boolean", col
    assert df["n"].isna().tolist() == [True] * 8 + [False] * 4
    assert df["rows"].isna().tolist() == [False] * 8 + [True] * 4
    # v2 config keeps its matrix key order (strategy, then n): rec 4, rec 5, amb 4, amb 5
    assert list(zip(df["strategy"].astype(str)[8:], df["n"][8:])) == [
        ("recursive", 4), ("recursive", 5), ("amb", 4), ("amb", 5)]
    assert df["censored"].tolist() == _status_rule(df)
    assert df.loc[8:, "solutions"].tolist() == [2, 10, 2, 10]


def test_load_dtypes_of_one_problem():
    """One N-Queens folder: the exact dtypes of every integer and flag column."""
    df = analysis.load(QUEENS)
    dtypes = {c: str(t) for c, t in df.dtypes.items()}
    for col in ("n", *INT_COLUMNS, "amb_restarts", "walked_nodes"):
        assert dtypes[col] == "Int64", col
    assert dtypes["unique"] == dtypes["censored"] == "boolean"
    assert dtypes["status"] == dtypes["strategy"] == "category"
    assert dtypes["budget_seconds"] == "float64"


def test_v1_queens_load_in_config_order_not_arrival_order():
    """The v1 queens folder: n = 5 arrived first; version 1 stored its config with keys
    sorted (n before strategy), so config order is n = 4 rec, amb, then n = 5."""
    arrival = pd.read_parquet(QUEENS)
    assert list(zip(arrival["n"], arrival["strategy"])) == [
        (5, "recursive"), (5, "amb"), (4, "recursive"), (4, "amb")]
    df = analysis.load(QUEENS)
    assert list(zip(df["n"], df["strategy"].astype(str))) == [
        (4, "recursive"), (4, "amb"), (5, "recursive"), (5, "amb")]


SIZES = """\
    name: sizes
    problem: knights_tour
    fixed: {start: [0, 0], heuristic: none, mode: first}
    matrix:
      board: [5, 6]
      strategy: [recursive, iterative]
    budget: {nodes: 3000}
"""


def _table_rows(out: str, title: str) -> list[list[str]]:
    """The body rows of the rich table printed after the line holding ``title``."""
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if title in line)
    rows = []
    for line in lines[at + 1:]:
        if line.startswith("└"):
            break
        if line.startswith("│"):
            rows.append([c.strip() for c in line.strip("│").split("│")])
    return rows


def test_show_and_load_group_rows_in_config_order(tmp_path, capsys):
    """Iterative trials run first, then the whole config: show's groups, run's closing
    tables, the report and load follow the config (5 rec, 5 it, 6 rec, 6 it)."""
    cfg = write(tmp_path / "sizes.yaml", SIZES)
    out = tmp_path / "r"
    assert run_main("run", cfg, "--out", out, "--backend", "serial", "--quiet",
                    "matrix.strategy=[iterative]") == 0
    capsys.readouterr()
    time.sleep(1.1)  # part names sort by run to the second: the first run's part reads first
    assert run_main("run", cfg, "--out", out, "--backend", "serial", "--quiet") == 0
    ran = capsys.readouterr().out
    arrival = pd.read_parquet(out)
    assert list(zip(arrival["rows"], arrival["strategy"])) == [
        (5, "iterative"), (6, "iterative"), (5, "recursive"), (6, "recursive")]
    want = [["5", "5", "recursive"], ["5", "5", "iterative"], ["6", "6", "recursive"],
            ["6", "6", "iterative"]]
    assert run_main("show", out) == 0
    shown = capsys.readouterr().out
    for text in (ran, shown):
        rows = _table_rows(text, "trials by status, one row per rows, cols, strategy")
        assert [r[:3] for r in rows] == want, text
    df = analysis.load(out)
    assert [[str(r), str(c), str(s)] for r, c, s in zip(df["rows"], df["cols"],
                                                        df["strategy"])] == want
    html = render_report(out)
    at = [html.index(f"<td>{r}</td>\n      <td>{c}</td>\n      <td>{s}</td>")
          if f"<td>{r}</td>\n      <td>{c}</td>\n      <td>{s}</td>" in html else -1
          for r, c, s in want]
    assert -1 not in at and at == sorted(at), at


def test_rows_of_trials_no_longer_in_the_config_come_last(tmp_path):
    cfg = write(tmp_path / "sizes.yaml", SIZES)
    out = tmp_path / "r"
    assert run_main("run", cfg, "--out", out, "--backend", "serial", "--quiet") == 0
    assert run_main("run", cfg, "--out", out, "--backend", "serial", "--quiet",
                    "matrix.board=[6]") == 0
    # the 5 x 5 rows were moved beside the folder (superseded): read with them, they come last
    df = analysis.load(out, superseded=True)
    assert [(int(r), str(s)) for r, s in zip(df["rows"], df["strategy"])] == [
        (6, "recursive"), (6, "iterative"), (5, "recursive"), (5, "iterative")]
    df = analysis.load(out)
    assert [(int(r), str(s)) for r, s in zip(df["rows"], df["strategy"])] == [
        (6, "recursive"), (6, "iterative")]


# --------------------------------------------------------------------------- censored


CENSORING = """\
    name: cens
    problem: knights_tour
    fixed: {board: [5, 5], heuristic: none, mode: first}
    matrix:
      start: [[0, 0], [0, 1], [2, 2]]
    budget: {nodes: 2000}
"""


def _check_censored(out: Path, statuses: set[str]) -> None:
    for part in part_files(out):
        table = pq.read_table(part)
        assert table.column("censored").null_count == 0
        assert table.column("censored").to_pylist() == [
            s in CENSORED for s in table.column("status").to_pylist()]
    df = pd.read_parquet(out)
    assert set(df["status"]) == statuses
    assert df["censored"].tolist() == _status_rule(df)


def test_censored_written_by_the_serial_backend_with_errors(tmp_path, monkeypatch):
    """Serial: solved and node_limit rows, and an error row (a trial made to raise),
    whose censored is False."""
    cfg = write(tmp_path / "c.yaml", CENSORING)
    out = tmp_path / "r"
    assert run_main("run", cfg, "--out", out, "--backend", "serial", "--quiet") == 0
    _check_censored(out, {"solved", "node_limit"})
    victim = pd.read_parquet(out)["trial_id"].iloc[0]
    out2 = tmp_path / "r2"
    monkeypatch.setenv("BTLAB_TEST_FAULT", f"raise:{victim}")
    assert run_main("run", cfg, "--out", out2, "--backend", "serial", "--quiet") == 1
    _check_censored(out2, {"error", "node_limit"})


def test_censored_written_by_a_split_trial(tmp_path):
    cfg = write(tmp_path / "c.yaml", CENSORING + "    split: {depth: 2}\n")
    out = tmp_path / "r"
    assert run_main("run", cfg, "--out", out, "--backend", "serial", "--quiet") == 0
    _check_censored(out, {"solved", "node_limit"})
    assert pd.read_parquet(out)["split_depth"].eq(2).all()


def test_censored_written_by_the_ray_backend(tmp_path, ray_session):
    cfg = write(tmp_path / "c.yaml", CENSORING)
    out = tmp_path / "r"
    assert run_main("run", cfg, "--out", out, "--quiet") == 0
    _check_censored(out, {"solved", "node_limit"})
    assert pd.read_parquet(out)["node_id"].notna().all()  # ran on Ray
    out2 = tmp_path / "r2"
    cfg2 = write(tmp_path / "c2.yaml", CENSORING + "    split: {depth: 2}\n")
    assert run_main("run", cfg2, "--out", out2, "--quiet") == 0
    _check_censored(out2, {"solved", "node_limit"})


@pytest.mark.parametrize("meta_version", [b"1", b"2"])
def test_one_folder_family_for_versions_1_and_2(tmp_path, meta_version, capsys):
    """A part stamped version 1 or 2 beside parts of the other is of the same config."""
    folder = _copy(KNIGHTS, tmp_path)
    part = part_files(folder)[0]
    twin = part.with_name(part.name.replace(".parquet", "z.parquet"))
    table = pq.read_table(part)
    pq.write_table(table.replace_schema_metadata(
        {**table.schema.metadata, b"btlab.schema_version": meta_version}), twin)
    assert run_main("show", folder) == 0
    assert len(analysis.load(folder)) == 8  # one trial id, twice: the newest row


def test_a_config_over_the_expansion_limit_keeps_read_order(monkeypatch):
    """Over EXPAND_LIMIT trials the config is not expanded: rows stay in read order."""
    from btlab.analysis import config_order

    config_order._positions_of.cache_clear()
    monkeypatch.setattr(config_order, "EXPAND_LIMIT", 3)
    try:
        df = analysis.load(QUEENS)
        assert list(zip(df["n"], df["strategy"].astype(str))) == [
            (5, "recursive"), (5, "amb"), (4, "recursive"), (4, "amb")]
    finally:
        config_order._positions_of.cache_clear()


# --------------------------------------------------------------------------- summary


def test_summary_groups_in_config_order_as_show_lists_them(tmp_path):
    """A v2 N-Queens folder (matrix strategy, then n): analysis.summary's default groups
    (by n and strategy, the columns' order) come in config order, rec 4, rec 5, amb 4,
    amb 5, as in btlab show, not sorted by n; so do timing_spread's trials and the
    report's summary table."""
    out = tmp_path / "q"
    assert run_main("run", DATA / "queens.yaml", "--out", out, "--backend", "serial",
                    "--quiet") == 0
    df = analysis.load(out)
    want = [(4, "recursive"), (5, "recursive"), (4, "amb"), (5, "amb")]
    for marks in (True, False):
        s = analysis.summary(df, metrics=["nodes"], marks=marks)
        assert s.index.names == ["n", "strategy"]
        assert [(int(n), str(st)) for n, st in s.index] == want
    s = analysis.summary(df, by=["n", "strategy"], metrics=["nodes"])
    assert s[("nodes", "max")].tolist() == ["16", "53", "16", "53"]
    spread = analysis.timing_spread(df)
    assert [(int(n), str(st)) for n, st in spread.index] == want
    assert spread["repeats"].tolist() == [1, 1, 1, 1]
    html = render_report(out)
    at = [html.index(f"<td>{n}</td>\n      <td>{st}</td>") for n, st in want]
    assert at == sorted(at), at


def test_summary_of_knights_and_queens_folders_together():
    """load of a knight's-tour and an N-Queens folder holds <NA> in the parameters one
    problem lacks; summary groups them like any value (it raised KeyError)."""
    df = analysis.load([KNIGHTS, QUEENS])
    s = analysis.summary(df, by=["heuristic", "n"], metrics=["nodes"])
    assert [(str(h), str(n)) for h, n in s.index] == [
        ("none", "<NA>"), ("warnsdorff", "<NA>"), ("nan", "4"), ("nan", "5")]
    assert s[("trials", "all")].tolist() == ["4", "4", "2", "2"]
    assert s[("trials", "node_limit")].tolist() == ["3", "2", "0", "0"]
    assert s[("nodes", "max")].tolist() == [">=2,000", ">=2,000", "16", "53"]
    plain = analysis.summary(df, metrics=["nodes"], marks=False)  # default by: every column
    assert plain[("trials", "all")].tolist() == [4, 4, 1, 1, 1, 1]  # n and strategy vary
    assert plain[("nodes", "max")].tolist() == [2000, 2000, 16, 16, 53, 53]


def test_load_reads_a_folder_named_twice_once(tmp_path):
    """One folder given as a path, its absolute path, a file:// URI, a symlink and through
    a glob: its rows once, under the first name (they were counted five times)."""
    folder = _copy(QUEENS, tmp_path)
    (tmp_path / "link").symlink_to(folder)
    df = analysis.load([folder, folder.resolve(), f"file://{folder.resolve()}",
                        tmp_path / "link", str(tmp_path / "que*")])
    assert len(df) == 4 and "source" not in df.columns
    both = analysis.load([tmp_path / "link", KNIGHTS, folder])
    assert both["source"].tolist() == ["link"] * 4 + ["knights"] * 8


def _stamped(part: Path, dst: Path, **meta: bytes) -> None:
    table = pq.read_table(part)
    pq.write_table(table.replace_schema_metadata({**table.schema.metadata, **{
        f"btlab.{k}".encode(): v for k, v in meta.items()}}), dst)


@pytest.mark.parametrize("foreign", ["another config", "a newer btlab"])
def test_fresh_deletes_nothing_when_a_part_is_of_another_config_or_newer(tmp_path, capsys,
                                                                         foreign):
    """--fresh into a folder holding, among its own parts, a part-*.parquet of another
    config or of schema version 3 refuses it (exit 2) and deletes nothing (it deleted
    every part-*.parquet file); only parts of this config (versions 1 and 2) go."""
    folder = _copy(QUEENS, tmp_path)
    stray = folder / "part-29990101T000000-abcdef-00000.parquet"
    if foreign == "another config":
        shutil.copy(part_files(KNIGHTS)[0], stray)
        said = f"{stray}: config 'knights-v1' (knights_tour, schema version 1)"
    else:
        _stamped(part_files(QUEENS)[0], stray, schema_version=b"3")
        said = f"{stray}: written by a newer btlab (schema version 3)"
    before = sorted(p.name for p in folder.iterdir())
    capsys.readouterr()
    assert run_main("run", DATA / "queens.yaml", "--out", folder, "--backend", "serial",
                    "--quiet", "--fresh") == 2
    assert said in capsys.readouterr().err
    assert sorted(p.name for p in folder.iterdir()) == before
    stray.unlink()
    (folder / "part-0.parquet").write_text("damaged\n")  # unreadable: --fresh deletes it
    assert run_main("run", DATA / "queens.yaml", "--out", folder, "--backend", "serial",
                    "--quiet", "--fresh") == 0
    assert _versions(folder) == ["2"] and len(pd.read_parquet(folder)) == 4
