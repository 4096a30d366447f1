"""config -> run (serial and Ray) -> Parquet -> pandas, end to end through the CLI."""

from __future__ import annotations

import textwrap

import pandas as pd
import pyarrow.parquet as pq
import pytest

from btlab.cli.main import main
from btlab.config.model import load_config
from btlab.experiments.checker import check_tour
from btlab.store.folder import SCHEMA_VERSION, part_files
from btlab.sweep.expand import expand

COUNTERS = ["status", "nodes", "backtracks", "dead_ends", "checks", "solutions", "max_depth"]

SMALL = textwrap.dedent("""\
    name: small-sweep
    problem: knights_tour
    fixed: {board: [5, 5], strategy: recursive, mode: first}
    matrix:
      heuristic: [none, warnsdorff, static_degree]
      start: all
    budget: {nodes: 20000}
    seed: 1
""")


@pytest.fixture
def small_config(tmp_path):
    path = tmp_path / "small.yaml"
    path.write_text(SMALL)
    return path


def run_cli(*args) -> int:
    return main([str(a) for a in args])


def test_serial_and_ray_give_the_same_rows(small_config, tmp_path, ray_session, capsys):
    serial_dir, ray_dir = tmp_path / "serial", tmp_path / "ray"
    assert run_cli("run", small_config, "--backend", "serial", "--out", serial_dir, "--quiet") == 0
    assert run_cli("run", small_config, "--out", ray_dir, "--quiet", "--batch-size", "4") == 0
    out = capsys.readouterr().out
    assert "backtracks by start square" in out

    trials = expand(load_config(small_config))
    a, b = pd.read_parquet(serial_dir), pd.read_parquet(ray_dir)
    assert len(a) == len(b) == len(trials) == 75
    assert a["trial_id"].is_unique and b["trial_id"].is_unique
    assert set(a["trial_id"]) == {t.trial_id for t in trials}
    merged = a.merge(b, on="trial_id", suffixes=("_s", "_r"))
    for col in COUNTERS:
        assert (merged[f"{col}_s"] == merged[f"{col}_r"]).all(), col
    # every solved row carries a verified tour and obeys nodes - backtracks = 25
    solved = b[b["status"] == "solved"]
    # A 25-square tour alternates colours 13/12, so it starts on one of the 13 squares
    # with row + col even. Both degree heuristics find one from all 13 within the budget;
    # plain move order from 5 of them. The other 44 trials stop at the budget.
    assert ((solved["start_row"] + solved["start_col"]) % 2 == 0).all()
    assert solved.groupby("heuristic", observed=True).size().to_dict() == {
        "none": 5, "static_degree": 13, "warnsdorff": 13}
    for rec in solved.itertuples():
        check_tour(5, 5, (rec.start_row, rec.start_col), list(rec.solution))
        assert rec.nodes - rec.backtracks == 25
    # budgeted rows stop exactly at the budget
    censored = b[b["status"] == "node_limit"]
    assert len(censored) == 75 - 31
    assert (censored["nodes"] == 20000).all()
    # provenance: the Ray rows name a Ray node, the serial rows do not
    assert b["node_id"].notna().all() and a["node_id"].isna().all()
    assert (b["run_id"].nunique(), b["problem"].iloc[0]) == (1, "knights_tour")
    assert b["wall_ns"].gt(0).all() and b["cpu_ns"].ge(0).all()


def test_parquet_metadata_and_atomic_parts(small_config, tmp_path):
    out = tmp_path / "r"
    assert run_cli("run", small_config, "--backend", "serial", "--out", out, "--quiet") == 0
    parts = part_files(out)
    assert parts and not [p for p in out.iterdir() if p.name.endswith(".tmp")]
    meta = pq.read_schema(parts[0]).metadata
    assert meta[b"btlab.schema_version"] == str(SCHEMA_VERSION).encode()
    assert meta[b"btlab.config_name"] == b"small-sweep"
    assert b'"heuristic"' in meta[b"btlab.config"]


def test_rerun_resumes_and_runs_nothing(small_config, tmp_path, capsys):
    out = tmp_path / "r"
    assert run_cli("run", small_config, "--backend", "serial", "--out", out, "--quiet") == 0
    first = pd.read_parquet(out)
    capsys.readouterr()
    assert run_cli("run", small_config, "--backend", "serial", "--out", out, "--quiet") == 0
    assert "75 already in" in capsys.readouterr().out
    again = pd.read_parquet(out)
    assert len(again) == 75 and again["run_id"].nunique() == 1
    pd.testing.assert_frame_equal(first, again)


def test_fresh_starts_over(small_config, tmp_path):
    out = tmp_path / "r"
    assert run_cli("run", small_config, "--backend", "serial", "--out", out, "--quiet") == 0
    assert run_cli("run", small_config, "--backend", "serial", "--out", out, "--quiet",
                   "--fresh") == 0
    df = pd.read_parquet(out)
    assert len(df) == 75 and df["run_id"].nunique() == 1


def test_show_prints_the_table_again(small_config, tmp_path, capsys):
    out = tmp_path / "r"
    run_cli("run", small_config, "--backend", "serial", "--out", out, "--quiet")
    capsys.readouterr()
    assert run_cli("show", out) == 0
    text = capsys.readouterr().out
    assert "75 trials of small-sweep" in text
    for heuristic in ("none", "warnsdorff", "static_degree"):
        assert heuristic in text
    assert ">=" in text  # censored plain-backtracking starts are written as bounds


def test_bad_config_exits_2_and_writes_nothing(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text(SMALL.replace("warnsdorff,", "warnsdorf,"))
    out = tmp_path / "r"
    assert run_cli("run", bad, "--backend", "serial", "--out", out) == 2
    err = capsys.readouterr().err
    assert "bad.yaml:5:" in err and "did you mean 'warnsdorff'" in err
    assert not out.exists()


def test_results_of_another_config_are_refused(small_config, tmp_path, capsys):
    out = tmp_path / "r"
    run_cli("run", small_config, "--backend", "serial", "--out", out, "--quiet")
    other = tmp_path / "other.yaml"
    other.write_text(SMALL.replace("name: small-sweep", "name: other"))
    assert run_cli("run", other, "--backend", "serial", "--out", out) == 2
    assert "holds results of config 'small-sweep'" in capsys.readouterr().err


def test_validate_prints_count_and_samples(small_config, capsys):
    assert run_cli("validate", small_config) == 0
    out = capsys.readouterr().out
    assert "75 trials" in out and "heuristic=none" in out


def test_main_job_config_has_192_trials():
    assert len(expand(load_config("configs/warnsdorff_64_starts.yaml"))) == 192


def test_run_ends_with_what_censored_means_and_what_to_run_next(tmp_path, capsys):
    from helpers.cli import run_main, write

    cfg = write(tmp_path / "c.yaml", """\
        name: closing
        problem: knights_tour
        fixed: {board: 5, strategy: iterative, heuristic: none}
        matrix: {start: [[0, 0], [0, 1]]}
        budget: {nodes: 1_500, seconds: 30}
    """)
    out = tmp_path / "my results"
    assert run_main("run", cfg, "--out", out, "--backend", "serial", "--quiet") == 0
    lines = capsys.readouterr().out.splitlines()
    # the run ends with the finding, after what censored means and what to run next
    at = next(i for i, line in enumerate(lines) if line.startswith("Finding: "))
    assert " ".join(" ".join(lines[at:]).split()).startswith(
        "Finding: The sweep finds a tour from 1 of 2 starts and backtracks only from (0, 0), "
        "263 times; 1, from (0, 1), stopped at 1,500 placements, so its >=1,746")
    lines = lines[:at]
    assert lines[-2] == ("censored trials: stopped at the budget (1,500 placements or 30 s) "
                         "before finishing; their counters are lower bounds, written >=N")
    assert lines[-1] == (f"next: btlab show '{out}' (these tables again); btlab report "
                         f"'{out}' -o report.html (survival curves, pairwise comparisons, "
                         "every start)")
