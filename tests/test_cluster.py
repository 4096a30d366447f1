"""The same sweep on a two-node Ray cluster and locally gives identical rows."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from runner.cli import main
from runner.store import part_files

HERE = Path(__file__).parent
SWEEP = textwrap.dedent("""\
    name: cluster-sweep
    problem: knights_tour
    fixed: {board: [5, 5]}
    matrix:
      heuristic: [none, warnsdorff]
      tie_break: [move_order, random]
      start: all
    exclude: [{heuristic: none, tie_break: random}]
    budget: {nodes: 30000}
    seed: 11
""")


@pytest.fixture
def two_node_cluster():
    """A real two-node Ray cluster (one CPU per node) in a subprocess; stopped after the test,
    also when it fails."""
    proc = subprocess.Popen([sys.executable, str(HERE / "helpers" / "two_node_cluster.py")],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        address = proc.stdout.readline().strip()
        assert address, "the cluster did not start"
        yield address
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()


def btlab(*args, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "runner", *map(str, args)], capture_output=True,
                          text=True, env=env, timeout=600)


def test_two_node_cluster_matches_local_run(two_node_cluster, tmp_path):
    config = tmp_path / "sweep.yaml"
    config.write_text(SWEEP)
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    on_cluster = btlab("run", config, "--address", two_node_cluster, "--out", tmp_path / "cluster",
                       "--batch-size", "2", "--quiet", env=env)
    assert on_cluster.returncode == 0, on_cluster.stderr[-3000:]
    local = btlab("run", config, "--backend", "serial", "--out", tmp_path / "local", "--quiet",
                  env=env)
    assert local.returncode == 0, local.stderr[-3000:]

    rows = pd.read_parquet(tmp_path / "cluster")
    assert len(rows) == 25 * 3
    assert rows["node_id"].nunique() == 2, "trials should run on both nodes"

    compared = btlab("compare", tmp_path / "local", tmp_path / "cluster", env=env)
    assert compared.returncode == 0, compared.stdout
    assert "IDENTICAL" in compared.stdout and "compared 75 trials" in compared.stdout

    by_node = btlab("show", tmp_path / "cluster", "--by", "node", env=env)
    assert by_node.returncode == 0
    for node_id in rows["node_id"].unique():
        assert node_id[:16] in by_node.stdout


def _run_small(tmp_path, name):
    config = tmp_path / "sweep.yaml"
    config.write_text(SWEEP)
    out = tmp_path / name
    assert main(["run", str(config), "--backend", "serial", "--out", str(out), "--quiet"]) == 0
    return out


def test_compare_names_the_trial_that_differs(tmp_path, capsys):
    a = _run_small(tmp_path, "a")
    b = tmp_path / "b"
    b.mkdir()
    for part in part_files(a):
        table = pq.read_table(part)
        df = table.to_pandas()
        victim = df["trial_id"].iloc[0]
        df.loc[0, "backtracks"] += 1
        pq.write_table(pa.Table.from_pandas(df, schema=table.schema, preserve_index=False),
                       b / part.name)
        break
    for part in part_files(a)[1:]:
        (b / part.name).write_bytes(part.read_bytes())
    capsys.readouterr()
    assert main(["compare", str(a), str(b)]) == 1
    out = capsys.readouterr().out
    assert victim in out and "backtracks" in out and "DIFFERENT" in out


def test_compare_reports_missing_trials(tmp_path, capsys):
    a = _run_small(tmp_path, "a")
    b = tmp_path / "b"
    b.mkdir()
    parts = part_files(a)
    kept = pd.concat([pd.read_parquet(p) for p in parts])
    dropped = kept["trial_id"].iloc[-1]
    table = pq.read_table(parts[0])
    pq.write_table(pa.Table.from_pandas(kept.iloc[:-1], schema=table.schema, preserve_index=False),
                   b / parts[0].name)
    capsys.readouterr()
    assert main(["compare", str(a), str(b)]) == 1
    out = capsys.readouterr().out
    assert f"1 trial(s) only in {a}: {dropped}" in out


def test_out_uri_writes_there_and_resumes_from_there(tmp_path, monkeypatch, capsys):
    """--out file:///...: parts land under the URI; a driver on a machine without the
    local staging folder resumes from what the URI holds."""
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "sweep.yaml"
    config.write_text(SWEEP)
    shared = tmp_path / "shared" / "sweep"
    uri = shared.as_uri()
    assert main(["run", str(config), "--backend", "serial", "--out", uri, "--quiet"]) == 0
    assert part_files(shared) and not [p for p in shared.iterdir() if p.name.endswith(".tmp")]
    first = pd.read_parquet(shared)
    assert len(first) == 75
    import shutil
    shutil.rmtree(tmp_path / "results")  # the driver's own disk is gone
    capsys.readouterr()
    assert main(["run", str(config), "--backend", "serial", "--out", uri, "--quiet"]) == 0
    assert f"75 already in {uri}, 0 to run" in capsys.readouterr().out
    assert len(pd.read_parquet(shared)) == 75
    assert main(["show", uri]) == 0
    assert main(["compare", uri, str(shared)]) == 0
