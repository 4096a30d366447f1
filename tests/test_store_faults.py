"""Results folders under attack: foreign and damaged parts, full disks, shared URIs, retries.

* A folder holds one config's rows: a part of another config anywhere among its
  parts is refused by ``run``, ``show``, ``report`` and ``compare`` (exit 2, the file
  named); a truncated or corrupt part gives exit 2 naming the file and the way out,
  never a pyarrow traceback, and following that way out resumes.
* Writing that fails (no space left, quota, I/O error, read-only) gives one message
  and exit 3, keeps every part written before, leaves no temporary and no folder
  the run made; a real full tmpfs too (skipped where mounting is not permitted).
* One run per destination: a ``file://`` URI is locked at its real path whatever the
  working directory; an object store (pyarrow's mock filesystem) gets a lease; resume
  counts only what is at the destination.
* A rerun retries trials whose rows are errors, and the new row replaces the error
  row for every reader; ``--no-retry-errors`` keeps it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest
from helpers.cli import run_main, write

from btlab.config.model import load_config
from btlab.store import location as store_location
from btlab.store import lock as store_lock
from btlab.store.folder import ResultStore, part_files, work_dir
from btlab.sweep.expand import expand

ROOT = Path(__file__).resolve().parent.parent

SWEEP = """\
    name: s
    problem: knights_tour
    fixed: {board: 5, strategy: iterative, heuristic: none}
    matrix: {start: [[0, 0], [0, 1], [0, 2], [1, 1], [1, 2], [2, 2]]}
    budget: {nodes: 500}
    repeats: 2
"""
OTHER = SWEEP.replace("name: s", "name: other").replace("board: 5", "board: 6")




def btlab(*args, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """``python -m btlab ARGS`` as a real process (serial backend runs need no Ray)."""
    return subprocess.run([sys.executable, "-m", "btlab", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "RAY_ADDRESS": "",
                               **(env or {})})


def run_serial(cfg: Path, out, *extra) -> int:
    return run_main("run", cfg, "--out", out, "--backend", "serial", "--quiet", *extra)


def ids_of(cfg: Path) -> list[str]:
    return [t.trial_id for t in expand(load_config(cfg))]


@pytest.fixture
def small_parts(monkeypatch):
    """Runs in this process write a part every 2 rows, and only then (no flush on time: on
    a busy machine a slow first trial would otherwise flush a part of 1 row)."""
    monkeypatch.setitem(ResultStore.__init__.__kwdefaults__, "flush_rows", 2)
    monkeypatch.setitem(ResultStore.__init__.__kwdefaults__, "flush_seconds", 3600.0)


def two_run_folder(tmp_path: Path) -> tuple[Path, Path]:
    """Folder ``a`` of config s written by two runs (6 + 6 trials, 2 part files)."""
    cfg = write(tmp_path / "s.yaml", SWEEP)
    out = tmp_path / "a"
    half = "matrix.start=[[0,0],[0,1],[0,2]]"
    assert run_main("run", cfg, half, "--out", out, "--backend", "serial", "--quiet") == 0
    assert run_serial(cfg, out) == 0
    assert len(part_files(out)) == 2
    return cfg, out


# --------------------------------------------------------------------------- one config


def test_a_part_of_another_config_between_the_parts_is_refused_everywhere(tmp_path, capsys):
    cfg, out = two_run_folder(tmp_path)
    other = tmp_path / "other"
    assert run_serial(write(tmp_path / "o.yaml", OTHER), other) == 0
    first, last = part_files(out)
    # named to sort between this folder's first and last parts
    foreign = out / (first.name[:-len(".parquet")] + "z.parquet")
    foreign.write_bytes(part_files(other)[0].read_bytes())
    assert first.name < foreign.name < last.name
    capsys.readouterr()
    for args in (["run", cfg, "--out", out, "--backend", "serial", "--quiet"],
                 ["show", out], ["report", out, "-o", tmp_path / "r.html"],
                 ["compare", out, other]):
        assert run_main(*args) == 2, args
        err = capsys.readouterr().err
        assert str(foreign) in err and "config 'other'" in err, (args, err)
        assert "Traceback" not in err
    assert not (tmp_path / "r.html").exists()
    # a Parquet file btlab did not write is foreign too, whatever its name
    foreign.unlink()
    pq.write_table(pa.table({"x": [1, 2]}), out / "extra.parquet")
    assert run_main("show", out) == 2
    assert f"{out / 'extra.parquet'}: no btlab metadata" in capsys.readouterr().err
    (out / "extra.parquet").unlink()
    assert run_main("show", out) == 0
    assert "12 trials of s" in capsys.readouterr().out


def _truncate(part: Path) -> None:
    data = part.read_bytes()
    part.write_bytes(data[: len(data) // 2])


def test_a_truncated_part_is_named_with_a_way_out_and_the_way_out_resumes(tmp_path, capsys):
    cfg, out = two_run_folder(tmp_path)
    victim = part_files(out)[0]
    lost = len(pd.read_parquet(victim))
    _truncate(victim)
    capsys.readouterr()
    aside = out.parent / f".{out.name}.aside"  # hidden: readers of the parent skip it
    for args in (["run", cfg, "--out", out, "--backend", "serial", "--quiet"],
                 ["show", out], ["report", out, "-o", tmp_path / "r.html"],
                 ["compare", out, out]):
        assert run_main(*args) == 2, args
        err = capsys.readouterr().err
        assert f"{victim}: damaged part file" in err, (args, err)
        assert f"mkdir -p {aside} && mv {victim} {aside}/" in err
        assert "Traceback" not in err and "pyarrow" not in err.split("fix:")[1]
    # the way out, as printed: move it aside, run the same command
    aside.mkdir()
    victim.rename(aside / victim.name)
    assert run_serial(cfg, out) == 0
    assert f"{12 - lost} already in {out}, {lost} to run" in capsys.readouterr().out
    df = pd.read_parquet(out)
    assert len(df) == 12 and df["trial_id"].is_unique


def test_a_damaged_data_page_behind_a_good_footer_is_named(tmp_path, capsys):
    cfg, out = two_run_folder(tmp_path)
    victim = part_files(out)[1]
    data = bytearray(victim.read_bytes())
    footer = pq.read_metadata(victim)
    start = footer.row_group(0).column(0).data_page_offset
    data[start:start + 64] = bytes(64)  # the first column's first page, zeroed
    victim.write_bytes(bytes(data))
    assert pq.read_metadata(victim).num_rows == footer.num_rows  # the footer still reads
    capsys.readouterr()
    assert run_main("show", out) == 2
    assert f"{victim}: damaged part file" in capsys.readouterr().err
    assert run_serial(cfg, out) == 2
    assert f"{victim}: damaged part file" in capsys.readouterr().err


# --------------------------------------------------------------------------- write failures


@pytest.mark.parametrize("kind, reason", [
    ("enospc", "no space left on device"), ("edquot", "disk quota exceeded"),
    ("eio", "input/output error"), ("erofs", "read-only file system")])
def test_a_write_failing_mid_run_keeps_what_was_written_and_exits_3(
        kind, reason, tmp_path, capsys, monkeypatch, small_parts):
    cfg = write(tmp_path / "s.yaml", SWEEP)
    out = tmp_path / "res"
    monkeypatch.setenv("BTLAB_TEST_FAULT", f"{kind}:2")  # the third part fails
    capsys.readouterr()
    assert run_serial(cfg, out) == 3
    err = capsys.readouterr().err
    assert f"{reason} writing {out}/part-" in err
    assert "the 4 row(s) this run wrote before" in err and "are intact" in err
    assert "run the same command to resume" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 2  # one message: what, and the fix
    assert sorted(p.name for p in tmp_path.iterdir()) == ["res", "s.yaml"]  # no work folder
    assert all(p.name.startswith("part-") for p in out.iterdir())  # no temporaries
    assert len(pd.read_parquet(out)) == 4
    monkeypatch.delenv("BTLAB_TEST_FAULT")
    assert run_serial(cfg, out) == 0
    assert "4 already in" in capsys.readouterr().out
    df = pd.read_parquet(out)
    assert len(df) == 12 and df["trial_id"].is_unique


def test_a_full_disk_at_the_start_leaves_nothing_behind(tmp_path, capsys, monkeypatch):
    cfg = write(tmp_path / "s.yaml", SWEEP)
    out = tmp_path / "new" / "res"
    for stage in ("lock", "0"):
        monkeypatch.setenv("BTLAB_TEST_FAULT", f"enospc:{stage}")
        capsys.readouterr()
        assert run_serial(cfg, out) == 3
        err = capsys.readouterr().err
        assert err.startswith("btlab: no space left on device") and "Traceback" not in err
        assert sorted(os.listdir(tmp_path)) == ["s.yaml"], stage  # no folder, no lock


def test_the_exit_status_of_a_failed_write_from_a_real_process(tmp_path):
    cfg = write(tmp_path / "s.yaml", SWEEP)
    proc = btlab("run", cfg, "--backend", "serial", "--quiet", cwd=tmp_path,
                 env={"BTLAB_TEST_FAULT": "eio:0"})
    assert proc.returncode == 3, proc.stderr
    assert proc.stderr.startswith("btlab: input/output error writing results/s/part-")
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 2
    assert sorted(os.listdir(tmp_path)) == ["s.yaml"]


@pytest.fixture
def tmpfs(tmp_path):
    """A 256 KiB tmpfs mounted at tmp_path/disk (skipped where mounting is not permitted)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    try:
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(disk)],
                       check=True, capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True, timeout=30)


def _fill(disk: Path, leave: int = 0) -> None:
    with open(disk / ".fill", "wb", buffering=0) as fh:
        try:
            while True:
                fh.write(b"\0" * 4096)
        except OSError:
            pass
    if leave:
        with open(disk / ".fill", "r+b") as fh:
            fh.truncate(max(0, os.path.getsize(disk / ".fill") - leave))


def test_a_real_disk_already_full(tmpfs, tmp_path, capsys):
    cfg = write(tmp_path / "s.yaml", SWEEP)
    _fill(tmpfs)
    capsys.readouterr()
    for out in (tmpfs / "res", tmpfs):  # a new folder on it, and the mount point itself
        assert run_serial(cfg, out) == 3
        err = capsys.readouterr().err
        assert err.startswith("btlab: no space left on device") and "Traceback" not in err
        assert os.listdir(tmpfs) == [".fill"]  # hidden: readers of the mount point skip it
        assert not work_dir(out).exists()


def test_a_real_disk_filling_up_mid_run(tmpfs, tmp_path, capsys, small_parts):
    cfg = write(tmp_path / "s.yaml", SWEEP.replace("repeats: 2", "repeats: 4"))
    _fill(tmpfs, leave=40_000)  # room for a few parts of 2 rows (about 12 KB each)
    out = tmpfs / "res"
    capsys.readouterr()
    assert run_serial(cfg, out) == 3
    err = capsys.readouterr().err
    assert f"no space left on device writing {out}/part-" in err and "Traceback" not in err
    written = len(pd.read_parquet(out))
    assert 0 < written < 24 and f"the {written} row(s) this run wrote before" in err
    assert sorted(os.listdir(tmpfs)) == [".fill", "res"]
    assert all(p.name.startswith("part-") for p in out.iterdir())
    (tmpfs / ".fill").unlink()
    assert run_serial(cfg, out) == 0
    assert f"{written} already in {out}" in capsys.readouterr().out
    assert len(pd.read_parquet(out)) == 24


# --------------------------------------------------------------------------- URIs


def test_runs_into_one_file_uri_from_two_working_directories_exclude_each_other(tmp_path):
    shared = tmp_path / "shared" / "res"
    uri = shared.as_uri()
    cfg = write(tmp_path / "s.yaml", SWEEP.replace("budget: {nodes: 500}",
                                                  "budget: {nodes: 200000}"))
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
    procs = [subprocess.Popen(
        [sys.executable, "-m", "btlab", "run", str(cfg), "--out", uri, "--backend", "serial",
         "--quiet"], cwd=tmp_path / d, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env={**os.environ, "PYTHONPATH": str(ROOT), "RAY_ADDRESS": ""})
        for d in ("a", "b")]
    results = [(p.wait(timeout=300), p.stdout.read(), p.stderr.read()) for p in procs]
    codes = sorted(r[0] for r in results)
    assert codes in ([0, 0], [0, 2]), results
    if codes == [0, 2]:
        assert any("another btlab run (pid" in r[2] and "is writing here" in r[2]
                   for r in results)
    df = pd.read_parquet(shared)
    assert len(df) == 12 and df["trial_id"].is_unique
    assert sorted(os.listdir(shared.parent)) == ["res"]  # the lock went with its run


def test_a_path_and_a_uri_of_one_folder_share_its_lock(tmp_path, capsys, monkeypatch):
    cfg = write(tmp_path / "s.yaml", SWEEP)
    shared = tmp_path / "shared"
    holder = ResultStore(shared, load_config(cfg))
    holder.lock()
    try:
        (tmp_path / "cwd").mkdir()
        monkeypatch.chdir(tmp_path / "cwd")
        for out in (shared.as_uri(), "../shared", str(shared) + "/"):
            assert run_serial(cfg, out) == 2
            assert f"another btlab run (pid {os.getpid()}) is writing here" in \
                capsys.readouterr().err
    finally:
        holder.close()
    assert run_serial(cfg, shared.as_uri()) == 0


def test_resume_from_a_uri_counts_only_what_reached_it(tmp_path, capsys, monkeypatch,
                                                       small_parts):
    monkeypatch.chdir(tmp_path)
    cfg = write(tmp_path / "s.yaml", SWEEP)
    shared = tmp_path / "shared" / "res"
    uri = shared.as_uri()
    monkeypatch.setenv("BTLAB_TEST_FAULT", "enospc:1")
    assert run_serial(cfg, uri) == 3
    there = len(pd.read_parquet(shared))
    assert there == 2
    monkeypatch.delenv("BTLAB_TEST_FAULT")
    capsys.readouterr()
    assert run_serial(cfg, uri) == 0
    assert f"2 already in {uri}, 10 to run" in capsys.readouterr().out
    assert sorted(os.listdir(tmp_path)) == ["s.yaml", "shared"]  # nothing staged locally


@pytest.fixture
def mock_store(monkeypatch):
    """``mock://`` URIs open one shared in-memory pyarrow filesystem (an object store
    without file locks), and the lease settles at once."""
    fs = pafs._MockFileSystem()
    real = store_location.remote_fs

    def remote_fs(uri: str):
        if uri.startswith("mock://"):
            return fs, uri[len("mock://"):]
        return real(uri)

    monkeypatch.setattr(store_location, "remote_fs", remote_fs)
    monkeypatch.setattr(store_lock, "SETTLE_SECONDS", 0.0)
    return fs


def test_an_object_store_gets_a_lease(mock_store, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cfg = write(tmp_path / "s.yaml", SWEEP)
    uri = "mock://bucket/btlab/res"
    assert run_serial(cfg, uri) == 0
    infos = mock_store.get_file_info(pafs.FileSelector("bucket", recursive=True))
    files = sorted(i.path for i in infos if i.type == pafs.FileType.File)
    assert files and all(f.startswith("bucket/btlab/res/part-") for f in files)  # lease gone
    # a live lease of another run refuses; an expired one is taken over
    holder = ResultStore(uri, load_config(cfg))
    holder.lock()
    try:
        capsys.readouterr()
        assert run_serial(cfg, uri) == 2
        err = capsys.readouterr().err
        assert f"another btlab run (pid {os.getpid()}) holds its lease until" in err
        assert "mock://bucket/btlab/res.btlab/lease.json" in err
    finally:
        holder._lease._stop.set()  # dies without releasing: the lease stays, then expires
    monkeypatch.setattr(store_lock, "LEASE_SECONDS", 0.0)
    holder._lease.renew()
    time.sleep(0.01)
    assert run_serial(cfg, uri) == 0
    assert "12 already in mock://bucket/btlab/res, 0 to run" in capsys.readouterr().out
    assert run_main("show", uri) == 0


def test_a_run_whose_lease_was_taken_stops_at_its_next_write(mock_store, tmp_path, capsys,
                                                             monkeypatch):
    monkeypatch.chdir(tmp_path)
    cfg = write(tmp_path / "s.yaml", SWEEP)
    store = ResultStore("mock://bucket/res", load_config(cfg), flush_rows=1)
    store.lock()
    other = store_lock.Lease(store.loc)
    other._write()  # another run overwrote the lease (the race window)
    with pytest.raises(Exception) as info:
        store.add({"trial_id": "x", "status": "solved"})
    store.close()
    assert info.value.exit_code == 3 and "took the lease" in str(info.value)
    assert not store.has_parts()


# --------------------------------------------------------------------------- retrying errors


def test_a_rerun_retries_error_rows_and_the_new_row_replaces_them(tmp_path, capsys,
                                                                  monkeypatch):
    cfg = write(tmp_path / "s.yaml", SWEEP)
    out = tmp_path / "res"
    victim = ids_of(cfg)[3]
    monkeypatch.setenv("BTLAB_TEST_FAULT", f"raise:{victim}")
    assert run_serial(cfg, out) == 1
    df = pd.read_parquet(out)
    assert len(df) == 12 and (df["status"] == "error").sum() == 1
    monkeypatch.delenv("BTLAB_TEST_FAULT")
    # asked not to, a rerun keeps the error row and runs nothing
    capsys.readouterr()
    # exit 1 as `btlab show` gives: the folder holds an error row of this config's trials
    assert run_serial(cfg, out, "--no-retry-errors") == 1
    text = capsys.readouterr().out
    assert "12 already in" in text and "1 trial(s) of this config have status error" in text
    assert (pd.read_parquet(out)["status"] == "error").sum() == 1
    # by default it retries: one row per trial for every reader, none an error
    assert run_serial(cfg, out) == 0
    text = capsys.readouterr().out
    assert "1 trial(s) whose rows have status error run again" in text
    assert "11 already in" in text and "1 to run" in text
    df = pd.read_parquet(out)
    assert len(df) == 12 and df["trial_id"].is_unique
    assert set(df["status"]) <= {"solved", "node_limit", "exhausted"}
    assert df.loc[df["trial_id"] == victim, "error"].isna().all()
    # node_limit rows are results: never run again
    assert (df["status"] == "node_limit").any()
    assert run_serial(cfg, out) == 0
    assert "12 already in" in capsys.readouterr().out


def test_a_crash_between_removing_an_error_row_and_rewriting_it_loses_no_trial(
        tmp_path, capsys, monkeypatch):
    cfg = write(tmp_path / "s.yaml", SWEEP)
    out = tmp_path / "res"
    victim = ids_of(cfg)[0]
    monkeypatch.setenv("BTLAB_TEST_FAULT", f"raise:{victim}")
    assert run_serial(cfg, out) == 1
    # the retry's own part cannot be written: the error row is gone, no row is doubled
    monkeypatch.setenv("BTLAB_TEST_FAULT", "enospc:0")
    assert run_serial(cfg, out) == 3
    df = pd.read_parquet(out)
    assert len(df) == 11 and victim not in set(df["trial_id"])
    monkeypatch.delenv("BTLAB_TEST_FAULT")
    capsys.readouterr()
    assert run_serial(cfg, out) == 0
    assert "11 already in" in capsys.readouterr().out
    df = pd.read_parquet(out)
    assert len(df) == 12 and df["trial_id"].is_unique and (df["status"] != "error").all()


def test_a_failed_rewrite_of_an_error_row_changes_nothing(tmp_path, capsys, monkeypatch):
    cfg = write(tmp_path / "s.yaml", SWEEP)
    out = tmp_path / "res"
    victim = ids_of(cfg)[0]
    monkeypatch.setenv("BTLAB_TEST_FAULT", f"raise:{victim}")
    assert run_serial(cfg, out) == 1
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    monkeypatch.setenv("BTLAB_TEST_FAULT", "enospc:rewrite")
    capsys.readouterr()
    assert run_serial(cfg, out) == 3
    assert f"no space left on device writing {out}/part-" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert sorted(os.listdir(tmp_path)) == ["res", "s.yaml"]


def test_a_failed_write_on_the_ray_backend_exits_3_with_one_message(
        tmp_path, ray_session, capsys, monkeypatch, small_parts):
    cfg = write(tmp_path / "s.yaml", SWEEP)
    out = tmp_path / "res"
    monkeypatch.setenv("BTLAB_TEST_FAULT", "enospc:1")
    capsys.readouterr()
    assert run_main("run", cfg, "--out", out, "--quiet", "--workers", "2") == 3
    err = capsys.readouterr().err
    assert err.startswith(f"btlab: no space left on device writing {out}/part-")
    assert "the 2 row(s) this run wrote before" in err and "Traceback" not in err
    assert len(pd.read_parquet(out)) == 2
    assert sorted(os.listdir(tmp_path)) == ["res", "s.yaml"]


def test_a_folder_reached_through_a_symlink_has_one_lock(tmp_path, capsys):
    cfg = write(tmp_path / "s.yaml", SWEEP)
    real = tmp_path / "real"
    holder = ResultStore(real, load_config(cfg))
    holder.lock()
    try:
        (tmp_path / "link").symlink_to(real)
        assert run_serial(cfg, tmp_path / "link") == 2
        assert "is writing here" in capsys.readouterr().err
    finally:
        holder.close()
    assert run_serial(cfg, tmp_path / "link") == 0
    assert len(pd.read_parquet(real)) == 12
    assert sorted(os.listdir(tmp_path)) == ["link", "real", "s.yaml"]


def test_a_checkpoint_that_cannot_be_written_stops_saving_and_the_trial_goes_on(tmp_path):
    from btlab.experiments.core import SearchResult, Status
    from btlab.experiments.split.subtrees import plan_split
    from btlab.store.checkpoints import TrialCheckpoint

    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    plan = plan_split("n_queens", {"n": 6, "mode": "count"}, 3)
    checkpoint = TrialCheckpoint(blocker / "t.jsonl", plan, None)  # below a file: unwritable
    result = SearchResult(Status.EXHAUSTED, 5, 4, 1, 9, 0, 3)
    checkpoint.save(0, result)
    checkpoint.save(1, result)
    assert isinstance(checkpoint.failed, OSError)
    checkpoint.close()
    good = TrialCheckpoint(tmp_path / "t.jsonl", plan, None)
    good.save(0, result)
    good.close()
    assert good.failed is None and TrialCheckpoint(tmp_path / "t.jsonl", plan, None).loaded
