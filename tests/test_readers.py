"""A results folder is readable by every Parquet reader given its path, whatever btlab does.

pandas, pyarrow (``pq.read_table`` and ``pyarrow.dataset``), DuckDB (a glob and the
folder form) and Polars read the folder: after a run, while a run holds it and is
writing a part, beside the checkpoints of an interrupted split trial, and after a
rerun has brought parts written by an older btlab (without a column added since)
to the current columns, so that readers taking the first part's schema lose none.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq
import pytest
from helpers.cli import write

import btlab.store.writes
from btlab.cli.main import main
from btlab.config.model import load_config
from btlab.store.folder import ResultStore, part_files, work_dir

SWEEP = """\
    name: readers
    problem: knights_tour
    fixed: {board: 5, strategy: iterative, heuristic: none}
    matrix: {start: [[0, 0], [0, 1], [0, 2], [1, 1], [1, 2], [2, 2]]}
    budget: {nodes: 500}
"""

#: SWEEP's starts and two more: a rerun that adds trials and supersedes none.
MORE_STARTS = "[[0,0],[0,1],[0,2],[1,1],[1,2],[2,2],[3,3],[4,4]]"


def run_serial(cfg: Path, out: Path, *extra) -> int:
    return main(["run", str(cfg), *extra, "--out", str(out), "--backend", "serial", "--quiet"])


READERS = {
    "pandas": lambda f: pd.read_parquet(f),
    "pyarrow": lambda f: pq.read_table(f).to_pandas(),
    "pyarrow.dataset": lambda f: pads.dataset(f, format="parquet").to_table().to_pandas(),
    "duckdb glob": lambda f: duckdb.sql(
        f"select * from read_parquet('{f}/*.parquet', union_by_name = true)").df(),
    "duckdb folder": lambda f: duckdb.sql(f"select * from read_parquet('{f}')").df(),
    "polars": lambda f: pl.read_parquet(f).to_pandas(),
    "polars glob": lambda f: pl.read_parquet(f"{f}/*.parquet").to_pandas(),
    "duckdb **": lambda f: duckdb.sql(
        f"select * from read_parquet('{f}/**/*.parquet', union_by_name = true)").df(),
}


def read_all(folder: Path) -> dict[str, pd.DataFrame]:
    return {name: read(str(folder)) for name, read in READERS.items()}


def assert_every_reader(folder: Path, rows: int, columns: set[str]) -> None:
    for name, df in read_all(folder).items():
        assert len(df) == rows, name
        assert columns <= set(df.columns), (name, columns - set(df.columns))
        assert df["trial_id"].is_unique, name


@pytest.fixture
def folder(tmp_path) -> tuple[Path, Path]:
    cfg = write(tmp_path / "r.yaml", SWEEP)
    out = tmp_path / "res"
    assert run_serial(cfg, out) == 0
    return cfg, out


def test_every_reader_reads_a_folder_a_run_wrote(folder):
    cfg, out = folder
    assert sorted(p.name[:5] for p in out.iterdir()) == ["part-"]  # nothing else in it
    assert_every_reader(out, 6, {"trial_id", "status", "nodes", "split_resumed"})


def test_every_reader_reads_the_folder_while_a_run_writes_a_part(folder, monkeypatch):
    """Mid-write (the temporary half done, the lock held), the folder holds parts only."""
    cfg, out = folder
    seen: list[dict[str, int]] = []
    real = pq.write_table

    def write_table(table, where, **kwargs):
        real(table, where, **kwargs)
        tmp = Path(where.name)
        assert tmp.exists() and tmp.parent == work_dir(out)  # the temporary, beside
        assert (work_dir(out) / "lock").exists()
        seen.append({name: len(df) for name, df in read_all(out).items()})

    monkeypatch.setattr(btlab.store.writes.pq, "write_table", write_table)
    assert run_serial(cfg, out, f"matrix.start={MORE_STARTS}") == 0
    assert seen == [{name: 6 for name in READERS}]
    assert not work_dir(out).exists()


def test_no_reader_sees_the_rows_a_rerun_superseded(folder):
    """A rerun with starts dropped and a budget changed: every reader, given the folder (the
    path, a ``*.parquet`` or a ``**`` glob), reads the trials of that config only; the
    superseded rows are beside the folder, which holds part files only."""
    cfg, out = folder
    assert run_serial(cfg, out, "matrix.start=[[0,0],[0,1],[4,4]]") == 0  # 4 dropped, 1 new
    assert_every_reader(out, 3, {"trial_id", "start_row"})
    for name, df in read_all(out).items():
        starts = set(zip(df["start_row"], df["start_col"]))
        assert starts == {(0, 0), (0, 1), (4, 4)}, name
    assert sorted(p.name[:5] for p in out.iterdir()) == ["part-"] * len(list(out.iterdir()))
    kept = work_dir(out) / "superseded"
    assert pq.read_table(kept).num_rows == 4
    assert run_serial(cfg, out, "budget.nodes=600") == 0  # every trial superseded
    for name, df in read_all(out).items():
        assert len(df) == 6 and set(df["budget_nodes"]) == {600}, name
    assert pq.read_table(kept).num_rows == 4 + 3


def test_every_reader_reads_the_folder_beside_an_interrupted_split_trial(folder):
    cfg, out = folder
    store = ResultStore(out, load_config(cfg))
    store.lock()
    try:
        checkpoints = store.checkpoints()
        checkpoints.folder.mkdir(parents=True)
        (checkpoints.folder / "0123456789abcdef.jsonl").write_text('{"plan": "x", "tasks": 4}\n')
        assert_every_reader(out, 6, {"trial_id"})
    finally:
        store.close()
    assert (work_dir(out) / "split").is_dir()  # kept for the next run, outside the folder


def _as_older_btlab(part: Path, drop: str = "split_resumed", add: str | None = None) -> None:
    """Rewrite ``part`` as a btlab without column ``drop`` (and with ``add``) wrote it."""
    table = pq.read_table(part)
    meta = table.schema.metadata
    table = table.drop_columns([drop])
    if add:
        table = table.append_column(add, pa.array(["old"] * len(table)))
    pq.write_table(table.replace_schema_metadata(meta), part)


def test_a_column_added_by_a_newer_btlab_reaches_every_reader(folder, capsys):
    cfg, out = folder
    (old,) = part_files(out)
    _as_older_btlab(old, add="retired")
    written_at = pq.read_schema(old).metadata[b"btlab.written_at"]
    # a newer btlab adds rows: its part has split_resumed, the old one not
    assert run_serial(cfg, out, f"matrix.start={MORE_STARTS}") == 0
    assert len(part_files(out)) == 2
    df = pd.read_parquet(out)
    assert {"split_resumed", "retired"} <= set(df.columns) and len(df) == 8
    assert df["retired"].tolist().count("old") == 6  # nulls in the new rows
    assert_every_reader(out, 8, {"split_resumed", "retired"})
    # the old part kept its own metadata (config, run, write time)
    assert pq.read_schema(old).metadata[b"btlab.written_at"] == written_at
    assert main(["show", str(out), "--all"]) == 0


def test_a_rerun_with_nothing_to_run_also_brings_old_parts_to_every_column(folder, capsys):
    cfg, out = folder
    (old,) = part_files(out)
    _as_older_btlab(old)
    assert "split_resumed" not in pd.read_parquet(out).columns  # a plain reader lost it
    assert run_serial(cfg, out) == 0
    assert "6 already in" in capsys.readouterr().out
    assert "split_resumed" in pd.read_parquet(out).columns
    assert_every_reader(out, 6, {"split_resumed"})


def test_a_folder_of_an_older_btlab_is_tidied_by_the_next_run(folder, capsys):
    """An older btlab kept its lock file and split checkpoints inside the folder, which
    Polars cannot read; the next run moves them out (refusing while an old run holds it)."""
    import fcntl
    import os

    cfg, out = folder
    (out / ".btlab.lock").write_text("123\n")
    (out / ".split").mkdir()
    (out / ".split" / "0123456789abcdef.jsonl").write_text('{"plan": "x", "tasks": 4}\n')
    with pytest.raises(Exception, match="directory contained paths with different"):
        pl.read_parquet(str(out))
    fd = os.open(out / ".btlab.lock", os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)  # an older btlab still writing
    try:
        assert run_serial(cfg, out) == 2
        assert "an older btlab run is writing here" in capsys.readouterr().err
    finally:
        os.close(fd)
    assert run_serial(cfg, out) == 0
    assert sorted(p.name[:5] for p in out.iterdir()) == ["part-"]
    assert_every_reader(out, 6, {"trial_id"})
