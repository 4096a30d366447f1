"""A failure limit (``--max-failures N``, ``btlab.run(max_failures=N)``, the config's
``max_failures:``; Ray Tune's name), and identical error messages folded into one line.

The sweep: a heuristic plug-in that raises in every trial (tests/plugins/always_fails.py),
over the 25 starts of a 5 x 5 board.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

import btlab
from btlab.cli.main import main
from btlab.config.model import load_config
from btlab.errors import ConfigError
from btlab.sweep.expand import expand

PLUGIN_DIR = Path(__file__).resolve().parent / "plugins"
if str(PLUGIN_DIR) not in sys.path:  # the plug-in, as "always_fails:broken"
    sys.path.insert(0, str(PLUGIN_DIR))

FAILING = textwrap.dedent("""\
    name: failing
    problem: knights_tour
    fixed: {board: [5, 5], heuristic: "always_fails:broken"}
    matrix: {start: all}
    budget: {nodes: 2000}
""")
MESSAGE = "RuntimeError: this heuristic is broken: it raises at the first choice"


@pytest.fixture
def failing(tmp_path):
    path = tmp_path / "failing.yaml"
    path.write_text(FAILING)
    return path


def run(capsys, *argv) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["run", *map(str, argv)])
    return code, capsys.readouterr().out


def test_without_a_limit_one_message_is_one_line(failing, tmp_path, capsys):
    """Every trial fails with one message: one line as it happens, one line with its
    count at the end (it was 25 lines of ~400 characters, then 20 of them again)."""
    code, out = run(capsys, failing, "--backend", "serial", "--out", tmp_path / "o", "--quiet")
    assert code == 1
    assert out.count("failed: trial ") == 1
    assert "the trials that failed in this run (25):" in out
    [summed] = [line for line in out.splitlines() if line.startswith("  25 trials: ")]
    assert MESSAGE in summed and "(the first: trial " in summed
    assert len(pd.read_parquet(tmp_path / "o")) == 25


def _check_stopped(out: str, folder: Path, limit: int, at_most: int) -> pd.DataFrame:
    df = pd.read_parquet(folder)
    assert limit <= len(df) <= at_most, out       # every finished row kept, no more started
    assert (df["status"] == "error").all()
    assert f"stopped after {len(df)} failed trial(s) (max_failures {limit}): " \
           f"{25 - len(df)} trial(s) not started" in out
    lines = out.splitlines()
    at = lines.index(next(line for line in lines if line.startswith("the first error, in full")))
    assert lines[at + 1].startswith(f"  {MESSAGE}")
    assert any("Traceback (most recent call last):" in line for line in lines[at:])  # in full
    assert f"  {len(df) - 1} trial(s): the same message as the first" in lines
    return df


def test_max_failures_stops_starting_trials_and_a_rerun_resumes(failing, tmp_path, capsys):
    out_dir = tmp_path / "o"
    code, out = run(capsys, failing, "--backend", "serial", "--out", out_dir,
                    "--max-failures", 3, "--quiet")
    assert code == 1
    _check_stopped(out, out_dir, 3, 3)  # serial: exactly 3
    assert "3 trial(s) ended with status error" in out
    # a rerun resumes: it retries the 3 error rows and runs the 22 others, up to the limit
    code, out = run(capsys, failing, "--backend", "serial", "--out", out_dir,
                    "--max-failures", 10, "--quiet")
    assert code == 1
    assert "25 trials, 0 already in" in out and "3 trial(s) whose rows have status error" in out
    assert len(pd.read_parquet(out_dir)) == 10
    code, out = run(capsys, failing, "--backend", "serial", "--out", out_dir, "--quiet")
    assert code == 1 and "stopped after" not in out
    assert len(pd.read_parquet(out_dir)) == 25


def test_the_config_key_and_the_option_which_wins(failing, tmp_path, capsys):
    """max_failures: in the config is the default; the option wins; no trial id changes."""
    keyed = tmp_path / "keyed.yaml"
    keyed.write_text(FAILING + "max_failures: 2\n")
    assert ([t.trial_id for t in expand(load_config(keyed))]
            == [t.trial_id for t in expand(load_config(failing))])
    code, out = run(capsys, keyed, "--backend", "serial", "--out", tmp_path / "a", "--quiet")
    assert code == 1 and len(pd.read_parquet(tmp_path / "a")) == 2
    code, out = run(capsys, keyed, "--backend", "serial", "--out", tmp_path / "b", "--quiet",
                    "--max-failures", 4)
    assert code == 1 and len(pd.read_parquet(tmp_path / "b")) == 4
    code, out = run(capsys, keyed, "max_failures=5", "--backend", "serial", "--out",
                    tmp_path / "c", "--quiet")
    assert code == 1 and len(pd.read_parquet(tmp_path / "c")) == 5


def test_the_library_keyword(failing, tmp_path):
    df = btlab.run(failing, backend="serial", out=tmp_path / "o", max_failures=4)
    assert len(df) == 4 and (df["status"] == "error").all()
    with pytest.raises(ConfigError) as info:
        btlab.run(failing, backend="serial", out=tmp_path / "p", max_failures=0)
    assert info.value.key_path == ("max_failures",)
    assert not (tmp_path / "p").exists()


@pytest.mark.parametrize("bad", ["max_failures: 0", "max_failures: many", "max_failures: true"])
def test_a_bad_config_key_is_refused(tmp_path, bad):
    path = tmp_path / "bad.yaml"
    path.write_text(FAILING + bad + "\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert info.value.key_path[:1] == ("max_failures",) and info.value.line == 6


def test_max_failures_on_ray(failing, tmp_path, capsys, ray_session):
    """On Ray: tasks already submitted finish (their rows kept), no new one starts. With
    one trial per task, 2 workers keep 2 x 2 + 2 = 6 tasks in flight."""
    out_dir = tmp_path / "o"
    code, out = run(capsys, failing, "--out", out_dir, "--batch-size", 1, "--max-failures", 3,
                    "--quiet")
    assert code == 1
    first = _check_stopped(out, out_dir, 3, 3 + 6)
    code, out = run(capsys, failing, "--out", out_dir, "--batch-size", 1, "--quiet")
    assert code == 1
    assert f"{len(first)} trial(s) whose rows have status error" in out
    assert len(pd.read_parquet(out_dir)) == 25
