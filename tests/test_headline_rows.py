"""The end-of-run headline read in constant memory per trial key (btlab.views.headline_rows),
the run's compact set of trial ids (btlab.sweep.trial_ids), and the memory bench on a tiny size."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from btlab.config.model import parse_config
from btlab.execution.execute import METRIC_COLUMNS, run_trial
from btlab.store.folder import ResultStore, load_rows
from btlab.sweep.expand import expand
from btlab.sweep.trial_ids import TrialIds
from btlab.views.headline_rows import BATCH_ROWS, headline_rows
from btlab.views.tables import TRIAL_COLUMNS, one_per_trial

ROOT = Path(__file__).resolve().parent.parent

CONFIG = """\
name: lean
problem: n_queens
fixed: {strategy: recursive, mode: count}
matrix: {n: [4, 5, 6]}
repeats: 4
"""


def _columns(config) -> list[str]:
    return ["trial_id", "problem", *config.problem.columns.names, "budget_nodes",
            "budget_seconds", "seed", "repeat", *METRIC_COLUMNS, "error"]


def test_headline_rows_match_the_full_load_with_retries_stale_rows_and_errors(tmp_path):
    config = parse_config(CONFIG, "<lean>")
    trials = expand(config)
    rows = [run_trial(t) for t in trials]
    rows[1].update(status="error", error="RuntimeError: first try\n  more", nodes=None)
    stale = dict(rows[0], trial_id="0123456789abcdef")
    store = ResultStore(tmp_path / "out", config, flush_rows=5)
    store.lock()
    for row in [*rows, stale]:
        store.add(dict(row))
    store.flush()
    store.add(dict(rows[2], wall_ns=10**12))   # trial 2 written again: its last row counts
    store.add(dict(rows[7], status="error", error="ValueError: later\nx", nodes=None))
    store.close()
    wanted = TrialIds(t.trial_id for t in trials)
    keys = [*config.problem.columns.names, *TRIAL_COLUMNS]
    found = headline_rows(tmp_path / "out", _columns(config), wanted, keys)
    assert found.trials == len(trials) == 12
    assert found.stale == 1
    assert found.errors == 2
    assert found.first_error == "RuntimeError: first try"
    # what the full load gives, reduced as every headline reduces it
    full = load_rows(tmp_path / "out", columns=_columns(config))
    full = full[full["trial_id"].isin(set(wanted))].drop(columns="trial_id")
    from btlab.problems import get_problem
    expect = one_per_trial(full, get_problem("n_queens")).sort_values("n").reset_index(drop=True)
    got = found.frame.sort_values("n").reset_index(drop=True)
    assert len(got) == 3
    for column in ("n", "status", "nodes", "solutions", "checks", "wall_ns", "cpu_ns"):
        assert got[column].tolist() == expect[column].tolist(), column


def test_headline_rows_reads_many_batches(tmp_path):
    repeats = BATCH_ROWS // 3 + 50
    config = parse_config(CONFIG.replace("repeats: 4", f"repeats: {repeats}"), "<lean>")
    trials = expand(config)
    store = ResultStore(tmp_path / "out", config, flush_rows=len(trials) + 1)
    store.lock()
    for t in trials:
        store.add({"trial_id": t.trial_id, **t.columns, "budget_nodes": None,
                   "budget_seconds": None, "seed": t.seed, "repeat": t.repeat,
                   "status": "exhausted", "nodes": t.columns["n"], "backtracks": 0,
                   "dead_ends": 0, "checks": 0, "solutions": 1, "max_depth": 1,
                   "wall_ns": t.repeat, "cpu_ns": 1, "solution": None, "error": None})
    store.close()
    found = headline_rows(tmp_path / "out", _columns(config),
                          TrialIds(t.trial_id for t in trials),
                          [*config.problem.columns.names, *TRIAL_COLUMNS])
    assert found.trials == 3 * repeats > BATCH_ROWS
    assert found.frame["wall_ns"].tolist() == [(repeats - 1) / 2] * 3  # the median repeat


def test_trial_ids_hold_eight_bytes_a_trial_and_act_as_a_set():
    ids = [f"{i * 7919:016x}" for i in range(1000)]
    held = TrialIds(ids + ids[:10])
    assert len(held) == 1000
    assert ids[5] in held and f"{3:016x}" not in held and "nope" not in held
    assert held._codes.nbytes == 8000
    assert set(held) == set(ids)
    assert held & {ids[1], "x"} == {ids[1]}
    assert held - set(ids[2:]) == {ids[0], ids[1]}
    rest = held.without({ids[0]})
    assert ids[0] not in rest and ids[1] in rest
    assert held.contains_many([ids[3], None, "zz", f"{1:016x}"]).tolist() == [
        True, False, False, False]
    with pytest.raises(ValueError):
        TrialIds(["not-an-id"])


def test_the_memory_bench_runs_on_a_tiny_size():
    done = subprocess.run([sys.executable, "-m", "bench.memory", "--trials", "60", "300",
                           "--backend", "serial", "--workload", "queens"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("serial"))
    assert "60 -> 300" in line and "MiB" in line
    ratios = [float(w[:-1]) for w in line.split() if w.endswith("x") and w[:-1][:1].isdigit()]
    assert len(ratios) == 2 and all(0.5 < r < 2 for r in ratios)


def test_run_prints_the_headline_of_the_config_trials_only(tmp_path, capsys):
    from btlab.cli.main import main

    cfg = tmp_path / "lean.yaml"
    cfg.write_text(CONFIG)
    assert main(["run", str(cfg), "--out", str(tmp_path / "o"), "--backend", "serial",
                 "--quiet"]) == 0
    cfg.write_text(CONFIG.replace("[4, 5, 6]", "[4, 5]"))
    assert main(["run", str(cfg), "--out", str(tmp_path / "o"), "--backend", "serial",
                 "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "moved 4 row(s) of trials no longer in the config" in out  # the n = 6 trials, kept
    table = out.rsplit("btlab lean", 1)[1]
    assert "│ recursive │ 5 │" in table and "│ recursive │ 6 │" not in table
    assert len(pd.read_parquet(tmp_path / "o")) == 8  # beside the folder, not in it
    assert len(load_rows(tmp_path / "o", superseded=True)) == 12
