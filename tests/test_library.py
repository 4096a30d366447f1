"""The library under the CLI: ``btlab.run``, ``validate``, ``report`` and ``compare``.

``btlab run`` and ``btlab.run`` share one code path (:func:`btlab.api.run.sweep`):
a config run both ways gives the same deterministic columns (every column but
the ones ``btlab compare`` ignores, :data:`btlab.analysis.folder_diff.IGNORED`).
Also here: the blocks of ``docs/library.md`` (``tests/test_docs.py`` names the
tests that run them).
"""

from __future__ import annotations

import collections.abc
import contextlib
import io
import itertools
import os
import re
import signal
import subprocess
import sys
import threading
import tracemalloc
from pathlib import Path

import pandas as pd
import pytest
import yaml
from helpers.cli import run_main, write
from helpers.sync import fault_env, wait_for

import btlab
from btlab.analysis.folder_diff import IGNORED
from btlab.store.folder import load_rows, part_files

ROOT = Path(__file__).resolve().parent.parent

SMALL = """\
    name: lib-small
    problem: knights_tour
    fixed: {board: [5, 5], strategy: recursive, mode: first}
    matrix:
      heuristic: [none, warnsdorff]
      start: all
    budget: {nodes: 2000}
    seed: 7
"""
SMALL_TRIALS = 50  # 25 starts x 2 heuristics


def deterministic(df: pd.DataFrame) -> pd.DataFrame:
    """The columns two runs of one config must agree on, in a comparable form."""
    keep = [c for c in df.columns if c not in IGNORED]
    out = df[keep].reset_index(drop=True)
    for col in out.columns:  # Parquet lists (tours) as tuples, nulls as None
        out[col] = [tuple(v) if hasattr(v, "tolist") else v for v in out[col].astype(object)]
    return out


@pytest.fixture
def small(tmp_path: Path) -> Path:
    return write(tmp_path / "small.yaml", SMALL)


def test_cli_and_library_give_the_same_rows(small, tmp_path):
    assert run_main("run", small, "--backend", "serial", "--out", tmp_path / "cli",
                    "--quiet") == 0
    df = btlab.run(small, backend="serial", out=tmp_path / "lib")
    assert len(df) == SMALL_TRIALS
    cli = btlab.load(tmp_path / "cli")
    assert list(df.columns) == list(cli.columns)
    assert dict(df.dtypes) == dict(cli.dtypes)  # btlab.load's dtypes
    pd.testing.assert_frame_equal(deterministic(df), deterministic(cli))
    # the order and the dtypes of btlab.load on the library's own folder
    pd.testing.assert_frame_equal(df, btlab.load(tmp_path / "lib"))
    assert {"status", "nodes", "backtracks", "heuristic", "start_row"} <= set(
        deterministic(df).columns)
    assert btlab.compare(tmp_path / "cli", tmp_path / "lib").identical


def test_a_mapping_config_runs_as_its_file(small, tmp_path):
    mapping = yaml.safe_load(small.read_text())
    mapping["fixed"]["board"] = (5, 5)  # a tuple is a YAML list
    df = btlab.run(mapping, "seed=7", backend="serial", out=tmp_path / "map")
    from_file = btlab.run(small, backend="serial", out=tmp_path / "file")
    pd.testing.assert_frame_equal(deterministic(df), deterministic(from_file))
    assert len(df) == SMALL_TRIALS
    trials = list(btlab.validate(mapping, "matrix.heuristic=[warnsdorff]"))
    assert len(trials) == 25 and {t.columns["heuristic"] for t in trials} == {"warnsdorff"}


def test_a_bad_key_raises_config_error_with_the_message_the_cli_prints(small, tmp_path,
                                                                        capsys):
    bad = write(tmp_path / "bad.yaml", SMALL.replace("budget: {nodes: 2000}",
                                                     "budget: {nodez: 2000}"))
    assert run_main("run", bad, "--backend", "serial", "--out", tmp_path / "a") == 2
    printed = capsys.readouterr().err
    with pytest.raises(btlab.ConfigError) as caught:
        btlab.run(bad, backend="serial", out=tmp_path / "b")
    assert printed == f"btlab: {caught.value}\n"
    assert f"{bad}:7:10:" in printed and "budget.nodez" in printed  # file, line, key path
    with pytest.raises(btlab.ConfigError) as caught:
        btlab.validate(bad)
    assert printed == f"btlab: {caught.value}\n"
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_a_mapping_error_names_the_key_path_and_no_line(small, tmp_path):
    mapping = yaml.safe_load(small.read_text())
    mapping["budget"] = {"nodez": 2000}
    with pytest.raises(btlab.ConfigError) as caught:
        btlab.run(mapping, backend="serial", out=tmp_path / "m")
    err = caught.value
    assert (err.file, err.line, err.column) == ("<mapping>", None, None)
    assert err.key_path == ("budget", "nodez")
    assert str(err).startswith("<mapping>: error at budget.nodez\n")
    mapping = yaml.safe_load(small.read_text())
    mapping["matrix"]["heuristic"] = ["none", "warnsdorf"]
    with pytest.raises(btlab.ConfigError) as caught:
        btlab.validate(mapping)
    assert caught.value.key_path[:2] == ("matrix", "heuristic") and caught.value.line is None
    assert "warnsdorff" in str(caught.value)  # did you mean
    # an override names itself, as on the command line
    with pytest.raises(btlab.ConfigError) as caught:
        btlab.validate(yaml.safe_load(small.read_text()), "budget.nodes=abc")
    assert "override 1 (budget.nodes=abc)" in str(caught.value)
    # a value no YAML file can hold
    mapping = yaml.safe_load(small.read_text())
    mapping["seed"] = Path("7")
    with pytest.raises(btlab.ConfigError) as caught:
        btlab.validate(mapping)
    assert caught.value.key_path == ("seed",) and "pathlib" in str(caught.value)
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("options, key", [({"workers": 0}, "workers"),
                                          ({"batch_size": 1.5}, "batch_size"),
                                          ({"backend": "dask"}, "backend")])
def test_bad_options_raise_config_error_and_write_nothing(small, tmp_path, options, key):
    with pytest.raises(btlab.ConfigError) as caught:
        btlab.run(small, out=tmp_path / "o", **{"backend": "serial", **options})
    assert caught.value.key_path == (key,)
    assert not (tmp_path / "o").exists()


def test_over_the_cap_needs_yes(tmp_path):
    big = write(tmp_path / "big.yaml", SMALL.replace("seed: 7", "repeats: 40001"))
    with pytest.raises(btlab.ConfigError, match="--yes"):
        btlab.run(big, backend="serial", out=tmp_path / "big")
    assert not (tmp_path / "big").exists()


def test_a_rerun_with_another_budget_returns_only_the_configs_trials(small, tmp_path):
    out = tmp_path / "same"
    first = btlab.run(small, backend="serial", out=out)
    second = btlab.run(small, "budget.nodes=500", backend="serial", out=out)
    assert len(first) == len(second) == SMALL_TRIALS
    assert set(first["budget_nodes"]) == {2000} and set(second["budget_nodes"]) == {500}
    assert len(load_rows(out)) == SMALL_TRIALS  # the folder is the answer to the last config
    assert len(load_rows(out, superseded=True)) == 2 * SMALL_TRIALS  # the first's kept beside
    assert not set(first["trial_id"]) & set(second["trial_id"])
    # a rerun of the same config runs nothing and returns the same rows
    again = btlab.run(small, "budget.nodes=500", backend="serial", out=out)
    pd.testing.assert_frame_equal(again, second)


def test_trial_errors_are_rows(small, tmp_path, monkeypatch):
    ids = [t.trial_id for t in btlab.validate(small)]
    monkeypatch.setenv("BTLAB_TEST_FAULT", f"raise:{ids[3]}")
    df = btlab.run(small, backend="serial", out=tmp_path / "e")
    assert len(df) == SMALL_TRIALS
    failed = df[df["status"] == "error"]
    assert list(failed["trial_id"]) == [ids[3]]
    assert "fault injected by BTLAB_TEST_FAULT" in failed["error"].iloc[0]


def test_validate_streams_its_trials(tmp_path):
    """192,000,000 trials: ``next()`` gives the first ones without making the others."""
    starts = ", ".join(f"[0, {j}]" for j in range(100))
    boards = ", ".join(f"[{100 + k}, 100]" for k in range(100))
    huge = write(tmp_path / "huge.yaml", f"""\
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
    tracemalloc.start()
    try:
        trials = btlab.validate(huge)
        assert isinstance(trials, collections.abc.Iterator) and iter(trials) is trials
        first = next(trials)
        rest = list(itertools.islice(trials, 999))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert isinstance(first, btlab.Trial) and len(rest) == 999
    assert first.columns["rows"] == 100 and (first.columns["start_row"],
                                             first.columns["start_col"]) == (0, 0)
    assert trials.config.name == "huge"
    assert peak < 50 * 2**20, f"{peak / 2**20:.0f} MiB for 1,000 trials"


def test_ray_already_started_is_used_and_left_running(small, tmp_path, ray_session):
    ray = ray_session
    assert ray.is_initialized()
    df = btlab.run(small, backend="ray", out=tmp_path / "ray")
    assert ray.is_initialized()
    serial = btlab.run(small, backend="serial", out=tmp_path / "serial")
    pd.testing.assert_frame_equal(deterministic(df), deterministic(serial))
    assert set(df["ray_version"].dropna()) == {ray.__version__}


def test_ctrl_c_raises_keyboard_interrupt_after_the_finished_rows_are_on_disk(small, tmp_path,
                                                                             monkeypatch):
    """The 4th trial blocks; SIGINT then: the three rows before it are written."""
    ids = [t.trial_id for t in btlab.validate(small)]
    hook = tmp_path / "hook"
    for key, value in fault_env(hook, f"block:{ids[3]}").items():
        monkeypatch.setenv(key, value)
    before = signal.getsignal(signal.SIGINT)

    def interrupt() -> None:
        wait_for(hook / f"started-{ids[3]}", timeout=120)
        os.kill(os.getpid(), signal.SIGINT)

    sender = threading.Thread(target=interrupt, daemon=True)
    sender.start()
    out = tmp_path / "stopped"
    with pytest.raises(KeyboardInterrupt, match="finished rows"):
        btlab.run(small, backend="serial", out=out)
    sender.join()
    assert signal.getsignal(signal.SIGINT) is before  # the caller's handler is back
    rows = load_rows(out)
    assert sorted(rows["trial_id"]) == sorted(ids[:3])
    assert set(rows["status"]) <= {"solved", "node_limit", "exhausted"}
    # a rerun resumes: the other trials run, the three are not run again
    monkeypatch.delenv("BTLAB_TEST_FAULT")
    df = btlab.run(small, backend="serial", out=out)
    assert len(df) == SMALL_TRIALS
    assert len(load_rows(out)) == SMALL_TRIALS and len(part_files(out)) == 2


def test_report_and_compare_are_library_functions(small, tmp_path):
    btlab.run(small, backend="serial", out=tmp_path / "a")
    btlab.run(small, "seed=8", backend="serial", out=tmp_path / "b")
    # out=None: the HTML text (the file written: test_library_md_blocks); one render, for
    # a report takes seconds of plotting
    text = btlab.report([tmp_path / "a", tmp_path / "b"], None)
    assert isinstance(text, str) and text.startswith("<!DOCTYPE html>") and "lib-small" in text
    assert not list(tmp_path.glob("*.html"))
    same = btlab.compare(tmp_path / "a", tmp_path / "a")
    assert same.identical and same.compared == SMALL_TRIALS
    other = btlab.compare(tmp_path / "a", tmp_path / "b")  # another seed: other trial ids
    assert not other.identical and len(other.only_a) == SMALL_TRIALS


def test_every_public_name_is_documented():
    assert sorted(btlab.__all__) == btlab.__all__
    for name in btlab.__all__:
        value = getattr(btlab, name)
        assert (value.__doc__ or "").strip(), name
    for name in ("run", "validate", "report", "compare", "load"):
        doc = getattr(btlab, name).__doc__
        assert "Returns:" in doc and "Raises:" in doc, name


def test_the_quiet_run_prints_nothing_and_a_loud_one_the_tables(small, tmp_path):
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        btlab.run(small, backend="serial", out=tmp_path / "q")
    assert sink.getvalue() == ""
    with contextlib.redirect_stdout(sink):
        btlab.run(small, backend="serial", out=tmp_path / "q", quiet=False)
    assert "trials by status" in sink.getvalue()
    assert "btlab lib-small:" not in sink.getvalue()  # the CLI's own lines stay the CLI's


@pytest.mark.slow
def test_the_issues_check_192_rows_as_btlab_run(tmp_path):
    """``python -c "import btlab; print(len(btlab.run(...)))"`` prints 192, the rows of
    ``btlab run`` (about a minute of serial trials on 2 shared cores)."""
    code = ("import btlab; print(len(btlab.run('configs/warnsdorff_64_starts.yaml', "
            f"backend='serial', out={str(tmp_path / 'lib')!r})))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "192\n"
    cli = subprocess.run([sys.executable, "-m", "btlab", "run", "configs/warnsdorff_64_starts.yaml",
                          "--backend", "serial", "--out", str(tmp_path / "cli"), "--quiet"],
                         cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert cli.returncode == 0, cli.stderr
    pd.testing.assert_frame_equal(deterministic(btlab.load(tmp_path / "lib")),
                                  deterministic(btlab.load(tmp_path / "cli")))


# --------------------------------------------------------------------------- docs/library.md


def library_md_python() -> list[str]:
    text = (ROOT / "docs" / "library.md").read_text(encoding="utf-8")
    return re.findall(r"^```python\n(.*?)^```$", text, flags=re.S | re.M)


def test_library_md_blocks(tmp_path, monkeypatch, ray_session):
    """docs/library.md's Python blocks, in order, in one namespace, in a folder holding a
    copy of configs/ (the serial and the Ray runs with a small node budget)."""
    blocks = library_md_python()
    assert len(blocks) >= 3
    work = tmp_path / "work"
    work.mkdir()
    (work / "configs").mkdir()
    for cfg in (ROOT / "configs").glob("*.yaml"):
        (work / "configs" / cfg.name).write_text(cfg.read_text().replace(
            "nodes: 1_000_000", "nodes: 3_000"))
    monkeypatch.chdir(work)
    namespace: dict = {}
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink):
        for code in blocks:
            exec(compile(code, "docs/library.md", "exec"), namespace)  # noqa: S102
    printed = sink.getvalue().splitlines()
    assert printed[0] == "192"  # the serial run
    assert re.fullmatch(r"[0-9a-f]{16} warnsdorff 36", printed[1])  # validate, streamed
    assert "True 192" in printed  # the notebook's Ray, still running, and its rows
    assert re.search(r"^True 192 \d+$", "\n".join(printed), re.M)  # serial = Ray
    assert "384 ['lib', 'warnsdorff-64-starts']" in printed
    assert "<mapping> None ('budget', 'nodez')" in printed
    assert namespace["df"].shape[0] == 192 and namespace["small"].shape[0] == 72
    assert (work / "report.html").read_text().startswith("<!DOCTYPE html>")


@pytest.mark.parametrize("argv", [["--help"], ["run", "--help"], ["validate", "--help"]])
def test_cli_help_imports_nothing_heavy(argv):
    """The CLI imports the library when a command runs, so ``btlab --help`` stays light."""
    heavy = ["ray", "numba", "pandas", "pyarrow", "matplotlib", "lifelines", "scipy",
             "pydantic"]
    code = ("import contextlib, io, sys\nfrom btlab.cli.main import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    try:\n        main({argv!r})\n    except SystemExit:\n        pass\n"
            f"print([m for m in {heavy!r} if m in sys.modules])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "[]\n"
