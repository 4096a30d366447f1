"""Faults, with real processes: time limits and hangs, killed drivers, dead workers,
failing trials, bad input and safety.

Tests that need Ray here start their own in a ``python -m btlab`` subprocess
(so that they can inject faults through the environment, kill the driver or
its workers); the others run the CLI in this process with the serial backend.
Faults are injected with the test hook ``BTLAB_TEST_FAULT`` (see
:mod:`btlab.execution.execute`): ``hang:<trial-id prefix>``, ``raise:...``, ``crash:...``.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from helpers.cli import run_main, write
from helpers.sync import fault_env, release, wait_for

from btlab.analysis import load
from btlab.config.model import load_config
from btlab.errors import BackendError
from btlab.execution.backends import HANG_FACTOR, HANG_GRACE_SECONDS
from btlab.store.folder import ResultStore, part_files, work_dir
from btlab.sweep.expand import expand

ROOT = Path(__file__).resolve().parent.parent
COUNTERS = ["status", "nodes", "backtracks", "dead_ends", "checks", "solutions", "max_depth"]


# --------------------------------------------------------------------------- helpers


class Btlab:
    """``python -m btlab ARGS`` as a real process, in a session of its own.

    Output goes to files (a pipe would be held open by Ray processes that outlive
    a killed driver). While it runs, the pids of its descendants are collected, so
    that whatever is left of them (Ray agents outlive a SIGKILLed driver) is killed
    by pid at the end. On a timeout the driver is sent SIGABRT first, so that
    ``PYTHONFAULTHANDLER`` prints where it was stuck.
    """

    def __init__(self, *args, env: dict | None = None, cwd=None):
        self._out = tempfile.TemporaryFile("w+")
        self._err = tempfile.TemporaryFile("w+")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "btlab", *map(str, args)],
            env={**os.environ, "RAY_ADDRESS": "", "PYTHONFAULTHANDLER": "1", **(env or {})},
            cwd=cwd, stdout=self._out, stderr=self._err, start_new_session=True)
        self.pid = self.proc.pid
        self.seen: set[int] = set()

    def poll(self) -> int | None:
        self.seen.update(descendants(self.pid))
        return self.proc.poll()

    def wait(self, timeout: float = 120) -> "Btlab":
        deadline = time.monotonic() + timeout
        try:
            while self.poll() is None:
                if time.monotonic() > deadline:
                    os.kill(self.pid, signal.SIGABRT)
                    time.sleep(2)
                    raise AssertionError(f"btlab still running after {timeout} s:\n"
                                         + self.stdout + self.stderr)
                time.sleep(0.1)
        finally:
            self.cleanup()
        return self

    def cleanup(self) -> None:
        if self.proc.poll() is None:
            self.seen.update(descendants(self.pid))
            self.proc.kill()
            self.proc.wait()
        kill_leftovers(self.seen)

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    @property
    def stdout(self) -> str:
        self._out.seek(0)
        return self._out.read()

    @property
    def stderr(self) -> str:
        self._err.seek(0)
        return self._err.read()


def btlab(*args, env: dict | None = None, timeout: float = 120, cwd=None) -> Btlab:
    """Run ``python -m btlab ARGS`` to the end (see :class:`Btlab`)."""
    return Btlab(*args, env=env, cwd=cwd).wait(timeout)


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (from /proc; no psutil needed)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry))
    out, stack = [], [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            out.append(child)
            stack.append(child)
    return out


def title(pid: int) -> str:
    """A process's title (Ray renames its workers ``ray::<task>`` / ``ray::IDLE``)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
    except OSError:
        return ""


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def kill_leftovers(pids) -> None:
    """Kill, by pid, processes of ours still alive (Ray agents outlive a SIGKILLed driver)."""
    for pid in pids:
        if alive(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def ids_of(config_path: Path) -> list[str]:
    return [t.trial_id for t in expand(load_config(config_path))]


def assert_same_counters(df: pd.DataFrame, ref: pd.DataFrame, skip=()) -> None:
    a = df[~df["trial_id"].isin(skip)].set_index("trial_id").sort_index()
    b = ref[~ref["trial_id"].isin(skip)].set_index("trial_id").sort_index()
    assert list(a.index) == list(b.index)
    for col in COUNTERS:
        assert a[col].tolist() == b[col].tolist(), col


# --------------------------------------------------------------------------- 1. time limits


TIMED = """\
    name: timed
    problem: knights_tour
    fixed: {board: [8, 8], strategy: recursive, mode: first}
    matrix:
      heuristic: [none, warnsdorff]
      start: [[0, 0], [0, 1], [0, 2]]
    budget: {seconds: 0.5}
    seed: 1
"""


def test_time_limit_is_cooperative_and_a_hung_trial_is_killed(tmp_path):
    """Plain backtracking on 8 x 8 stops itself at 0.5 s; a trial that hangs (the test hook
    sleeps without reading the clock) is killed after 0.5 x 1.1 + 5 s (twice: once to notice,
    once more to pin it down), recorded as time_limit with null counters, and the trials
    after it in the same Ray task still run."""
    cfg = write(tmp_path / "timed.yaml", TIMED)
    ids = ids_of(cfg)
    hung = ids[4]  # warnsdorff from (0, 1): the fifth of the one task's six trials
    out = tmp_path / "out"
    t0 = time.monotonic()
    proc = btlab("run", cfg, "--out", out, "--workers", "1", "--batch-size", "6", "--quiet",
                 env={"BTLAB_TEST_FAULT": f"hang:{hung}"})
    took = time.monotonic() - t0
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 trial(s) hung past the time limit and were killed" in proc.stdout

    df = pd.read_parquet(out).set_index("trial_id")
    assert sorted(df.index) == sorted(ids)
    # cooperative: within 10 % + 0.5 s of the budget, with the counters reached
    plain = df[df["heuristic"] == "none"]
    assert (plain["status"] == "time_limit").all()
    # the recursive search reads its clock every 1,024 placements, before the next one
    assert (plain["nodes"] > 0).all() and (plain["nodes"] % 1024 == 0).all()
    assert plain["backtracks"].notna().all()
    assert (plain["wall_ns"] <= (0.5 * 1.1 + 0.5) * 1e9).all(), plain["wall_ns"]
    # the hung trial: killed, recorded, counters unknown
    row = df.loc[hung]
    assert row["status"] == "time_limit"
    assert pd.isna(row["nodes"]) and pd.isna(row["wall_ns"])
    assert "killed by the runner" in row["error"]
    limit = 0.5 * HANG_FACTOR + HANG_GRACE_SECONDS
    seconds = float(re.search(r"no result ([\d.]+) s", row["error"]).group(1))
    assert limit <= seconds <= limit + 2
    # its worker was killed; the trial after it ran in a new worker; the rows reported
    # before the hang was noticed were kept (ids[3] was not reported yet: it ran again, in
    # the precise task that pinned the hang down)
    assert not alive(int(row["pid"]))
    assert df.loc[ids[5], "status"] == "solved" and df.loc[ids[5], "pid"] != row["pid"]
    first = df.loc[ids[0], "pid"]
    assert (df.loc[ids[:3], "pid"] == first).all() and first != row["pid"]
    assert df.loc[ids[3], "pid"] == row["pid"]
    assert took < 60


# --------------------------------------------------------------------------- 2. resume


SLOWISH = """\
    name: slowish
    problem: knights_tour
    fixed: {board: [8, 8], strategy: iterative, mode: first}
    matrix:
      heuristic: [none, static_degree, warnsdorff]
      start: all
    budget: {nodes: 100000}
    seed: 5
"""
# (its last trial blocks (test hook) until the driver is killed, and a part is written
# every 5 rows: the kill comes after a part and before the last row, on any machine)


@pytest.mark.parametrize("backend", ["serial", pytest.param("ray", marks=pytest.mark.slow)])
def test_killed_driver_loses_nothing_and_a_rerun_runs_only_the_missing_trials(
        backend, tmp_path, capsys):
    """SIGKILL `btlab run` once it has written a part; a reader sees only whole parts; the
    rerun deletes the stale temporaries, runs only the missing trials, and the dataset then
    equals an uninterrupted run's."""
    cfg = write(tmp_path / "slowish.yaml", SLOWISH)
    ids = ids_of(cfg)
    out = tmp_path / "out"
    hook = tmp_path / "hook"
    proc = Btlab("run", cfg, "--out", out, "--backend", backend, "--workers", "2", "--quiet",
                 env=fault_env(hook, f"block:{ids[-1]}", "flush_rows:5"))
    try:
        wait_for(hook / f"started-{ids[-1]}", proc, 60, also=lambda: bool(part_files(out)))
        os.kill(proc.pid, signal.SIGKILL)
        proc.proc.wait(timeout=10)
    finally:
        proc.cleanup()
    assert proc.returncode == -signal.SIGKILL
    # what a reader sees now: whole parts only, each trial at most once, fewer than all
    partial = pd.read_parquet(out)
    assert 0 < len(partial) < len(ids) and partial["trial_id"].is_unique
    # a torn write of a killed run is a hidden temporary: readers skip it, a rerun deletes it
    torn = out / ".part-20260101T000000-dead00-00000.parquet.1234abcd.tmp"
    torn.write_bytes(b"PAR1 half a file")
    assert len(pd.read_parquet(out)) == len(partial)

    capsys.readouterr()
    assert run_main("run", cfg, "--out", out, "--backend", "serial", "--quiet") == 0
    text = capsys.readouterr().out
    # ours, and on Ray perhaps one of the killed run's own (killed while writing a part)
    assert re.search(r"deleted [12] temporary file\(s\) a killed run left", text), text
    assert f"{len(partial)} already in" in text and f"{len(ids) - len(partial)} to run" in text
    assert not torn.exists() and not list(out.glob(".*.tmp"))

    df = pd.read_parquet(out)
    assert sorted(df["trial_id"]) == sorted(ids)                 # every trial exactly once
    assert df["run_id"].nunique() == 2                           # nothing redone
    ref_dir = tmp_path / "reference"
    assert run_main("run", cfg, "--out", ref_dir, "--backend", "serial", "--quiet") == 0
    assert_same_counters(df, pd.read_parquet(ref_dir))


def test_changed_config_runs_only_new_trials_and_show_counts_the_others(tmp_path, capsys):
    base = """\
        name: grow
        problem: knights_tour
        fixed: {board: [5, 5]}
        matrix: {heuristic: %s, start: all}
        budget: {nodes: 2000}
    """
    out = tmp_path / "out"
    one = write(tmp_path / "one.yaml", base % "[warnsdorff]")
    two = write(tmp_path / "two.yaml", base % "[warnsdorff, none]")
    only_none = write(tmp_path / "three.yaml", base % "[none]")
    assert run_main("run", one, "--out", out, "--backend", "serial", "--quiet") == 0
    capsys.readouterr()
    assert run_main("run", two, "--out", out, "--backend", "serial", "--quiet") == 0
    assert "50 trials, 25 already in" in capsys.readouterr().out
    assert run_main("run", only_none, "--out", out, "--backend", "serial", "--quiet") == 0
    text = capsys.readouterr().out
    assert "0 to run" in text and "no longer in the config" in text
    assert "moved 25 row(s) of trials no longer in the config out of" in " ".join(text.split())
    assert len(pd.read_parquet(out)) == 25                       # the answer to three.yaml
    assert len(load(out, superseded=True)) == 50                # nothing deleted
    assert run_main("show", out) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "25 superseded row(s) (trials no longer in the config last run) are kept" in text
    assert "warnsdorff" not in text.split("prune` deletes them)", 1)[1]
    assert run_main("show", out, "--all") == 0
    assert "warnsdorff" in capsys.readouterr().out
    # only asked for does --fresh start over
    assert run_main("run", only_none, "--out", out, "--backend", "serial", "--quiet",
                    "--fresh") == 0
    assert len(pd.read_parquet(out)) == 25
    assert not (out.parent / ".out.btlab" / "superseded").exists()  # --fresh deleted them


def test_a_second_run_into_the_same_folder_is_refused_while_one_runs(tmp_path, capsys):
    cfg = write(tmp_path / "c.yaml", "name: c\nproblem: knights_tour\nfixed: {board: 5}\n")
    out = tmp_path / "out"
    holder = ResultStore(out, load_config(cfg))
    holder.lock()
    try:
        assert run_main("run", cfg, "--out", out, "--backend", "serial") == 2
        assert f"another btlab run (pid {os.getpid()}) is writing here" in capsys.readouterr().err
    finally:
        holder.close()
    assert run_main("run", cfg, "--out", out, "--backend", "serial", "--quiet") == 0


# --------------------------------------------------------------------------- 3. dead workers


WORKERS = """\
    name: workers
    problem: knights_tour
    fixed: {board: [8, 8], strategy: iterative, mode: first, heuristic: none}
    matrix:
      start: [[0, 0], [0, 1], [0, 2], [0, 3], [1, 0], [1, 1], [1, 2], [1, 3],
              [2, 0], [2, 1], [2, 2], [2, 3], [3, 0], [3, 1], [3, 2], [3, 3]]
    budget: {nodes: 150000}
    seed: 3
"""


def test_a_killed_worker_is_retried_and_every_trial_is_written_once(tmp_path):
    """SIGKILL a Ray worker while it runs a task: its trial is run again and the run
    completes with each trial once, counters equal to a serial run. A trial that kills its
    worker every time (test hook `crash`) is given up after the retries, as an error row."""
    cfg = write(tmp_path / "w.yaml", WORKERS)
    ids = ids_of(cfg)
    crashing = ids[-1]
    out = tmp_path / "out"
    hook = tmp_path / "hook"
    blocked = ids[1]  # blocks (test hook) in its worker until that worker is killed
    proc = Btlab("run", cfg, "--out", out, "--workers", "2", "--batch-size", "3", "--quiet",
                 env=fault_env(hook, f"crash:{crashing}", f"block:{blocked}"))
    try:
        killed = wait_for(hook / f"started-{blocked}", proc, 90)
        proc.poll()  # its descendants, the worker among them, are noted for the cleanup
        assert title(killed).startswith("ray::"), title(killed)
        os.kill(killed, signal.SIGKILL)
        release(hook)  # its rerun, in another worker, goes on
        proc.wait(120)
    finally:
        proc.cleanup()
    output = proc.stdout + proc.stderr
    assert proc.returncode == 1, output   # the crashing trial is an error
    assert "time(s) a worker died; the trials it had not reported were run again" in output
    assert "1 trial(s) given up after their worker died at every retry" in output

    df = pd.read_parquet(out)
    assert sorted(df["trial_id"]) == sorted(ids)                 # each trial exactly once
    lost = df.set_index("trial_id").loc[crashing]
    assert lost["status"] == "error" and "worker died 4 times" in lost["error"]
    assert (df[df["trial_id"] != crashing]["status"] != "error").all()
    # the killed worker's task (3 trials) kept only the rows it reported before it died
    assert (df["pid"] == killed).sum() < 3
    assert df.set_index("trial_id").loc[blocked, "pid"] != killed
    ref = tmp_path / "reference"
    assert run_main("run", cfg, "--out", ref, "--backend", "serial", "--quiet") == 0
    assert_same_counters(df, pd.read_parquet(ref), skip=[crashing])


# --------------------------------------------------------------------------- 4. failing trials


def test_a_failing_trial_becomes_an_error_row_and_exit_status_1(tmp_path):
    cfg = write(tmp_path / "f.yaml", """\
        name: failing
        problem: knights_tour
        fixed: {board: [5, 5], heuristic: warnsdorff}
        matrix: {start: all}
        budget: {nodes: 2000}
    """)
    ids = ids_of(cfg)
    out = tmp_path / "out"
    proc = btlab("run", cfg, "--out", out, "--backend", "serial", "--quiet",
                 env={"BTLAB_TEST_FAULT": f"raise:{ids[3]},raise:{ids[7]}"})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "2 trial(s) ended with status error" in proc.stdout
    assert "RuntimeError: fault injected by BTLAB_TEST_FAULT" in proc.stdout
    df = pd.read_parquet(out).set_index("trial_id")
    assert len(df) == 25                                          # the run went on
    failed = df[df["status"] == "error"]
    assert sorted(failed.index) == sorted([ids[3], ids[7]])
    assert failed["error"].str.startswith("RuntimeError: fault injected").all()
    assert failed["nodes"].isna().all()
    assert proc_show_exit(out) == 1


def proc_show_exit(out: Path) -> int:
    return btlab("show", out).returncode


# --------------------------------------------------------------------------- 5. bad input


GOOD = """\
name: good
problem: knights_tour
fixed: {board: [5, 5], strategy: recursive}
matrix:
  heuristic: [none, warnsdorff]
budget: {nodes: 1000, seconds: 10}
"""


def _sub(old: str, new: str) -> str:
    assert old in GOOD
    return GOOD.replace(old, new)


BAD_CONFIGS = [
    pytest.param("fixed: {board: [5, 5]\nmatrix: [\n", ["bad.yaml:", "YAML syntax error"],
                 id="malformed-yaml"),
    pytest.param(GOOD + "repeat: 2\n", ["bad.yaml:7:1", "unknown key 'repeat'",
                                        "did you mean 'repeats'"], id="unknown-key"),
    pytest.param(GOOD + "repeats: two\n", ["bad.yaml:7:1", "repeats", "valid integer",
                                           "whole number"], id="wrong-type"),
    pytest.param(_sub("budget: {nodes: 1000, seconds: 10}", "budget: [1000]"),
                 ["bad.yaml:6:", "budget", "found:    [1000]"], id="wrong-type-section"),
    pytest.param(_sub("problem: knights_tour", "problem: knight_tour"),
                 ["bad.yaml:2:1", "did you mean 'knights_tour'"], id="unknown-problem"),
    pytest.param(_sub("strategy: recursive", "strategy: recursve"),
                 ["bad.yaml:3:", "fixed.strategy", "did you mean 'recursive'"],
                 id="unknown-strategy"),
    pytest.param(_sub("[none, warnsdorff]", "[none, warnsdorf]"),
                 ["bad.yaml:5:", "matrix.heuristic[1]", "did you mean 'warnsdorff'"],
                 id="unknown-heuristic"),
    pytest.param(GOOD.replace("strategy: recursive", "strategy: recursive, tie_break: pohll"),
                 ["fixed.tie_break", "did you mean 'pohl'"], id="unknown-tie-break"),
    pytest.param(_sub("board: [5, 5]", "board: [0, 5]"),
                 ["bad.yaml:3:", "fixed.board", "a number of at least 1"], id="board-0"),
    pytest.param(_sub("board: [5, 5]", "board: [600, 600]"),
                 ["fixed.board", "at most 250,000 squares", "360,000", "strategy: iterative"],
                 id="board-too-large"),
    pytest.param(_sub("board: [5, 5]", "board: [5, 5], start: [5, 0]"),
                 ["fixed.start", "row 0..4", "[5, 0]"], id="start-off-board"),
    pytest.param("name: q\nproblem: n_queens\nfixed: {n: 0, strategy: bitmask}\n",
                 ["bad.yaml:3:", "fixed.n", "a number of at least 1"], id="queens-n-0"),
    pytest.param(_sub("[none, warnsdorff]", "[]"), ["matrix.heuristic", "non-empty list"],
                 id="empty-matrix-list"),
    pytest.param(_sub("strategy: recursive", "strategy: recursive, heuristic: none"),
                 ["bad.yaml:5:", "both in fixed and in matrix"], id="fixed-and-swept"),
    pytest.param(_sub("nodes: 1000", "nodes: 0"), ["bad.yaml:6:", "budget.nodes",
                                                    "greater than 0"], id="budget-nodes-0"),
    pytest.param(_sub("seconds: 10", "seconds: 0"), ["budget.seconds", "greater than 0"],
                 id="budget-seconds-0"),
    pytest.param(_sub("seconds: 10", "seconds: -1"), ["budget.seconds", "greater than 0"],
                 id="budget-seconds-negative"),
    pytest.param(GOOD + "repeats: 100_000_000\n",
                 ["bad.yaml:7:1", "error at repeats", "at most 1,000,000 trials",
                  "200,000,000 trials", "--yes"],
                 id="over-the-cap"),
    pytest.param(_sub("name: good", "name: ../../etc"),
                 ["bad.yaml:1:1", "error at name", "no '/' or '..'"], id="name-escapes"),
    pytest.param(GOOD + "seed: !!python/object/apply:os.system [echo pwned]\n",
                 ["bad.yaml:7:", "python/object", "yaml.safe_load"], id="python-tag"),
]


@pytest.mark.parametrize("text, fragments", BAD_CONFIGS)
def test_bad_config_exits_2_with_position_and_writes_nothing(text, fragments, tmp_path,
                                                             monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.yaml").write_text(text)
    assert run_main("run", "bad.yaml", "--backend", "serial") == 2
    err = capsys.readouterr().err
    for fragment in fragments:
        assert fragment in err, err
    assert "Traceback" not in err
    assert sorted(os.listdir(tmp_path)) == ["bad.yaml"]            # no results/ folder
    # validate refuses it the same way (a sweep over the cap is valid: run needs --yes)
    if "--yes" not in fragments:
        assert run_main("validate", "bad.yaml") == 2
        assert fragments[0] in capsys.readouterr().err


def test_a_huge_sweep_is_refused_at_once(tmp_path, monkeypatch, capsys):
    """10^8 trials from the matrix lists: refused by arithmetic, without walking them."""
    monkeypatch.chdir(tmp_path)
    starts = ", ".join(f"[0, {j}]" for j in range(100))   # distinct values: a value
    boards = ", ".join(f"[{100 + k}, 100]" for k in range(100))  # listed twice counts once
    write(tmp_path / "huge.yaml", f"""\
        name: huge
        problem: knights_tour
        matrix:
          board: [{boards}]
          start: [{starts}]
          heuristic: [none, warnsdorff, static_degree]
          tie_break: [move_order, random, pohl, roth]
          strategy: [recursive, iterative]
          mode: [first, count]
          closed: [true, false]
        repeats: 200
    """)
    t0 = time.monotonic()
    assert run_main("run", "huge.yaml") == 2
    assert time.monotonic() - t0 < 3
    assert "192,000,000 trials" in capsys.readouterr().err
    t0 = time.monotonic()
    assert run_main("validate", "huge.yaml") == 0
    assert time.monotonic() - t0 < 3
    assert "over the cap of 1,000,000" in capsys.readouterr().out
    assert sorted(os.listdir(tmp_path)) == ["huge.yaml"]


def _other_config_results(tmp_path: Path) -> Path:
    other = write(tmp_path / "other.yaml", GOOD.replace("name: good", "name: other"))
    assert run_main("run", other, "--out", tmp_path / "taken", "--backend", "serial",
                    "--quiet") == 0
    return tmp_path / "taken"


def _old_schema_results(tmp_path: Path) -> Path:
    folder = _other_config_results(tmp_path)
    part = part_files(folder)[0]
    table = pq.read_table(part)
    meta = dict(table.schema.metadata)
    meta[b"btlab.schema_version"] = b"0"
    meta[b"btlab.config_name"] = b"good"
    pq.write_table(table.replace_schema_metadata(meta), part)
    return folder


def _unwritable(tmp_path: Path) -> Path:
    if os.geteuid() == 0:  # root writes through permission bits: use a read-only file system
        return Path("/sys/btlab-test-out")
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    return ro / "out"


def _a_file(tmp_path: Path) -> Path:
    (tmp_path / "afile").write_text("not a folder")
    return tmp_path / "afile"


BAD_RUNS = [
    pytest.param(["--workers", "0"], None, ["--workers", "expected a whole number >= 1, found 0"],
                 id="workers-0"),
    pytest.param(["--batch-size", "0"], None, ["--batch-size", "found 0"], id="batch-size-0"),
    pytest.param(["--workers", "two"], None, ["found 'two'"], id="workers-not-a-number"),
    pytest.param(["--out", "{file}"], _a_file, ["the output path is a file"], id="out-is-a-file"),
    pytest.param(["--out", "{file}/sub"], _a_file, ["is a file, not a folder"],
                 id="out-below-a-file"),
    pytest.param(["--out", "{file}"], _unwritable, ["not writable"], id="out-not-writable"),
    pytest.param(["--out", "{file}"], _other_config_results,
                 ["holds results of config 'other'", "--fresh"], id="another-config"),
    pytest.param(["--out", "{file}"], _old_schema_results,
                 ["schema version 0", "this btlab writes version 2"], id="another-schema"),
]


@pytest.mark.parametrize("extra, make, fragments", BAD_RUNS)
def test_bad_command_line_exits_2_and_writes_nothing(extra, make, fragments, tmp_path,
                                                     monkeypatch, capsys):
    cfg = write(tmp_path / "good.yaml", GOOD)
    target = make(tmp_path) if make else None
    before = _snapshot(target)
    args = [a.replace("{file}", str(target)) for a in extra]
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    assert run_main("run", cfg, "--backend", "serial", *args) == 2
    err = capsys.readouterr().err
    for fragment in fragments:
        assert fragment in err, err
    assert not (tmp_path / "results").exists()
    assert _snapshot(target) == before


def test_fresh_takes_over_a_folder_of_another_config_only_when_asked(tmp_path, capsys):
    taken = _other_config_results(tmp_path)
    good = write(tmp_path / "good.yaml", GOOD)
    assert run_main("run", good, "--out", taken, "--backend", "serial", "--quiet") == 2
    assert run_main("run", good, "--out", taken, "--backend", "serial", "--quiet",
                    "--fresh") == 0
    assert "--fresh: deleted 1 earlier part file(s)" in capsys.readouterr().out
    assert set(pd.read_parquet(taken)["trial_id"]) == set(ids_of(good))


def _snapshot(path: Path | None):
    if path is None or not path.exists():
        return None
    if path.is_file():
        return path.read_bytes()
    return sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in path.iterdir())


@pytest.mark.parametrize("config_arg, fragment", [
    pytest.param("missing.yaml", "missing.yaml: error at (top level)", id="missing-file"),
    pytest.param(".", "found:    a folder", id="a-directory"),
])
def test_unreadable_config_exits_2(config_arg, fragment, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert run_main("run", config_arg) == 2
    assert fragment in capsys.readouterr().err
    assert os.listdir(tmp_path) == []


def test_real_process_exit_status_2_for_bad_input(tmp_path):
    """The same refusals from a real `python -m btlab` process: exit status 2, one message."""
    bad = write(tmp_path / "bad.yaml", GOOD + "seed: !!python/object/apply:os.system [echo x]\n")
    proc = btlab("run", bad, cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"btlab: {bad}:7:") and "safe_load" in proc.stderr
    assert "x\n" not in proc.stdout
    good = write(tmp_path / "good.yaml", GOOD)
    proc = btlab("run", good, "--workers", "0", cwd=tmp_path)
    assert proc.returncode == 2 and "--workers: expected a whole number >= 1" in proc.stderr
    proc = btlab("run", good, "--address", "127.0.0.1:1", cwd=tmp_path, timeout=60)
    assert proc.returncode == 2
    assert "could not reach a Ray cluster at 127.0.0.1:1" in proc.stderr
    assert sorted(os.listdir(tmp_path)) == ["bad.yaml", "good.yaml"]


def test_validate_prints_the_count_and_samples_and_runs_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "good.yaml", GOOD)
    assert run_main("validate", "good.yaml") == 0
    out = capsys.readouterr().out
    assert "good.yaml: OK -- problem knights_tour, 2 trials" in out
    assert "heuristic=none" in out and "heuristic=warnsdorff" in out
    assert os.listdir(tmp_path) == ["good.yaml"]


# --------------------------------------------------------------------------- 6. safety


def test_ray_dashboard_is_off_unless_asked_for_and_never_joins_a_foreign_cluster(monkeypatch):
    import ray

    from btlab.execution.backends import RayBackend

    calls = []

    class Context:
        dashboard_url = "127.0.0.1:8265"

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", lambda **kw: calls.append(kw) or Context())
    monkeypatch.setattr(ray, "cluster_resources", lambda: {"CPU": 2.0})
    monkeypatch.setattr(ray, "shutdown", lambda: None)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    # no Ray starts here: leave the session's RAY_AUTH_* environment alone
    monkeypatch.setattr("btlab.execution.ray_backend.private_token_for_local_ray", lambda: None)
    RayBackend(workers=2)
    assert calls[0]["include_dashboard"] is False
    import importlib.util

    if importlib.util.find_spec("aiohttp") is None:  # minimal Ray: a clear refusal
        with pytest.raises(BackendError, match=re.escape("pip install 'ray[default]'")):
            RayBackend(workers=2, dashboard=True)
        monkeypatch.setattr(importlib.util, "find_spec", lambda name: object())
    RayBackend(workers=2, dashboard=True)
    assert calls[-1]["include_dashboard"] is True
    # "local": a new embedded Ray even if `ray start` left /tmp/ray/ray_current_cluster
    assert calls[0]["address"] == "local" and calls[0]["num_cpus"] == 2


def test_no_eval_exec_or_unsafe_yaml_in_the_code():
    pattern = re.compile(r"\b(eval|exec)\(|yaml\.(load|unsafe_load|full_load)\(|"
                         r"yaml\.(Loader|UnsafeLoader|FullLoader)\b|pickle\.loads?\(")
    # numba's kernel cache is pickle by numba's own design (numba unpickles it itself);
    # btlab's checked cache unpickles only files whose seal matches, in that one module
    allowed = {"experiments/compiled/_cache.py": "pickle"}
    offenders = []
    for package in ("runner", "experiments"):
        for path in (ROOT / package).rglob("*.py"):
            rel = str(path.relative_to(ROOT))
            for n, line in enumerate(path.read_text().splitlines(), 1):
                found = pattern.search(line)
                if found and not found.group(0).startswith(allowed.get(rel, "-")):
                    offenders.append(f"{rel}:{n}: {line.strip()}")
    assert offenders == []


def test_results_stay_under_the_named_folder(tmp_path, monkeypatch):
    """A run writes only its results folder (part files, nothing else), and leaves nothing
    beside it (its work folder, with the lock, is removed at the end)."""
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "good.yaml", GOOD)
    assert run_main("run", "good.yaml", "--backend", "serial", "--quiet") == 0
    assert sorted(os.listdir(tmp_path)) == ["good.yaml", "results"]
    assert os.listdir(tmp_path / "results") == ["good"]
    names = os.listdir(tmp_path / "results" / "good")
    assert names and all(n.startswith("part-") and n.endswith(".parquet") for n in names)
    meta = json.loads(pq.read_schema(part_files(tmp_path / "results" / "good")[0])
                      .metadata[b"btlab.config"])
    assert meta["name"] == "good"


def test_killed_driver_resumes_a_split_trial_without_redoing_finished_subtrees(tmp_path,
                                                                              capsys):
    """SIGKILL `btlab run` in the middle of one split trial (15-Queens count, ~1,700
    subtrees on Ray); the rerun reads the finished subtrees back from the checkpoint and
    the row has exactly the unsplit counters."""
    cfg = write(tmp_path / "split.yaml", """\
        name: queens-split-kill
        problem: n_queens
        fixed: {n: 15, mode: count, strategy: bitmask, engine: compiled}
        split: {depth: 3}
    """)
    (trial_id,) = ids_of(cfg)
    out = tmp_path / "out"
    checkpoint = work_dir(out) / "split" / f"{trial_id}.jsonl"
    proc = Btlab("run", cfg, "--out", out, "--workers", "2", "--quiet")
    try:
        deadline = time.monotonic() + 90
        lines = 0
        while lines < 150 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.02)
            lines = checkpoint.read_bytes().count(b"\n") if checkpoint.exists() else 0
        assert lines >= 150, "no subtrees saved" + proc.stdout + proc.stderr
        os.kill(proc.pid, signal.SIGKILL)
        proc.proc.wait(timeout=10)
    finally:
        proc.cleanup()
    assert proc.returncode == -signal.SIGKILL
    assert not part_files(out)                      # the trial was not finished
    saved = checkpoint.read_bytes().count(b"\n") - 1  # less the header line
    capsys.readouterr()
    assert run_main("run", cfg, "--out", out, "--backend", "serial", "--quiet") == 0
    (row,) = pd.read_parquet(out).to_dict("records")
    assert row["split_resumed"] >= saved >= 149       # every saved subtree was reused
    assert row["split_resumed"] < row["split_tasks"]
    assert row["solutions"] == 2_279_184              # OEIS A000170(15)
    assert row["nodes"] == 171_129_071 and row["status"] == "exhausted"
    assert not checkpoint.exists()
