"""The cluster the way Ray users start one (the ``ray`` CLI), against btlab's local runs.

The cluster tests start real nodes with ``ray start`` in subprocesses
(:mod:`tests.helpers.ray_cli`: own temp dir, own ports on 127.0.0.1, own HOME),
and stop exactly those processes, never ``ray stop``.
"""

from __future__ import annotations

import os
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers.ray_cli import RAY, ray_cli_cluster, user_env

from btlab.cli.main import main
from btlab.execution.ray_auth import ray_has_token_auth
from btlab.store.folder import part_files

ROOT = Path(__file__).resolve().parent.parent
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
needs_token_auth = pytest.mark.skipif(not ray_has_token_auth(),
                                      reason="this Ray has no token authentication (< 2.52)")


TINY = textwrap.dedent("""\
    name: tiny
    problem: knights_tour
    fixed: {board: [5, 5], heuristic: warnsdorff}
    matrix:
      start: [[0, 0], [0, 1], [2, 2], [4, 4]]
""")


def head_turns_token_auth_on() -> bool:
    """Whether `ray start --head` turns token authentication on by itself when it finds a
    token (Ray >= 2.59, PR #64755)."""
    from ray._private.authentication import authentication_token_setup

    return hasattr(authentication_token_setup, "maybe_enable_token_auth_if_token_available")


def btlab(*args, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "btlab", *map(str, args)], capture_output=True,
                          text=True, env=env, timeout=600, cwd=ROOT)


def _user(home: Path, **extra: str) -> dict[str, str]:
    """A user's shell with ``HOME=home`` that runs this checkout's btlab as ``python -m btlab``."""
    home.mkdir(exist_ok=True)
    return user_env(home, PYTHONPATH=str(ROOT), **extra)


@needs_token_auth
@pytest.mark.slow  # 27 s of real cluster; tests/test_ray_auth.py covers the logic by default
def test_head_with_token_auth_gets_this_machines_token_or_one_clear_refusal(tmp_path):
    """A head started with `ray start --head` where ~/.ray/auth_token exists (Ray's own
    ray.init() leaves one) runs with token authentication. `btlab run --address` from that
    account sends the token (as `ray start --head` used it); from an account without it, or
    with another token, exit 2 with one message and its fix, not ray.init's retries."""
    config = tmp_path / "tiny.yaml"
    config.write_text(TINY)
    owner = _user(tmp_path / "owner")
    (tmp_path / "owner" / ".ray").mkdir()
    (tmp_path / "owner" / ".ray" / "auth_token").write_text(secrets.token_hex(32))
    with ray_cli_cluster() as cluster:
        if head_turns_token_auth_on():
            cluster.start_node(owner, head=True)
            assert "Token authentication is enabled" in cluster.logs[0].read_text()
        else:  # Ray 2.52 to 2.58: token authentication only when asked for
            cluster.start_node({**owner, "RAY_AUTH_MODE": "token"}, head=True)

        stranger = btlab("run", config, "--address", cluster.address, "--out", tmp_path / "s",
                         "--quiet", env=_user(tmp_path / "stranger"))
        assert stranger.returncode == 2, stranger.stderr[-3000:]
        assert "requires an authentication token, and this machine has none" in stranger.stderr
        assert "fix: copy the head's ~/.ray/auth_token" in stranger.stderr
        assert stranger.stderr.count("InvalidAuthToken") == 1  # Ray's reason, once
        assert len(stranger.stderr.strip().splitlines()) == 4

        wrong = btlab("run", config, "--address", cluster.address, "--out", tmp_path / "w",
                      "--quiet", env=_user(tmp_path / "stranger", RAY_AUTH_MODE="token",
                                           RAY_AUTH_TOKEN=secrets.token_hex(32)))
        assert wrong.returncode == 2, wrong.stderr[-3000:]
        assert ("refused this machine's authentication token (from $RAY_AUTH_TOKEN)"
                in wrong.stderr)
        assert len(wrong.stderr.strip().splitlines()) == 3

        ok = btlab("run", config, "--address", cluster.address, "--out", tmp_path / "ok",
                   "--quiet", env=owner)
        assert ok.returncode == 0, ok.stderr[-3000:]
        assert len(pd.read_parquet(tmp_path / "ok")) == 4


def test_quick_start_then_cluster_md_on_two_nodes_matches_local_run(tmp_path):
    """The user's sequence on one machine, in one HOME: an embedded `btlab run` (the quick
    start), then docs/cluster.md's commands as typed: `ray start --head --port=P`,
    `ray start --address=127.0.0.1:P` (a second node), `btlab run --address`; both nodes run
    trials and `btlab compare` with the local run finds them identical.

    The embedded run writes nothing to ~/.ray: on Ray >= 2.59 a bare ray.init() writes
    ~/.ray/auth_token, after which `ray start --head` wants tokens that `ray start
    --address` does not send (the join failed with InvalidAuthToken)."""
    config = tmp_path / "sweep.yaml"
    config.write_text(SWEEP)
    env = _user(tmp_path / "home")
    local = btlab("run", config, "--out", tmp_path / "local", "--quiet", env=env)  # embedded Ray
    assert local.returncode == 0, local.stderr[-3000:]
    assert not (tmp_path / "home" / ".ray").exists()
    assert "Token authentication is" not in local.stderr  # Ray's warning: the mode is explicit
    with ray_cli_cluster() as cluster:
        cluster.start_node(env, head=True)
        cluster.start_node(env, head=False)
        cluster.wait_for_nodes(env, 2)
        on_cluster = btlab("run", config, "--address", cluster.address, "--out",
                           tmp_path / "cluster", "--batch-size", "2", "--quiet", env=env)
        assert on_cluster.returncode == 0, on_cluster.stderr[-3000:]
    _assert_two_nodes_and_identical(tmp_path / "local", tmp_path / "cluster", env)


@pytest.mark.slow
@needs_token_auth
def test_token_auth_cluster_as_documented(tmp_path):
    """docs/cluster.md's "Token authentication" commands: `ray get-auth-token --generate`,
    `RAY_AUTH_MODE=token ray start --head`, `RAY_AUTH_MODE=token ray start --address`, then a
    plain `btlab run --address`. A plain `ray start --address` is refused (Ray's own rule:
    a joining node sends a token only with RAY_AUTH_MODE=token)."""
    config = tmp_path / "sweep.yaml"
    config.write_text(SWEEP)
    env = _user(tmp_path / "home")
    token_env = {**env, "RAY_AUTH_MODE": "token"}
    generated = subprocess.run([RAY, "get-auth-token", "--generate"], env=env,
                               capture_output=True, text=True, timeout=120)
    assert generated.returncode == 0, generated.stderr
    assert (tmp_path / "home" / ".ray" / "auth_token").read_text() == generated.stdout
    local = btlab("run", config, "--backend", "serial", "--out", tmp_path / "local", "--quiet",
                  env=env)
    assert local.returncode == 0, local.stderr[-3000:]
    with ray_cli_cluster() as cluster:
        cluster.start_node(token_env, head=True)
        plain = cluster.start_failing_node(env)
        assert plain.returncode != 0 and "InvalidAuthToken" in plain.stdout + plain.stderr
        cluster.start_node(token_env, head=False)
        cluster.wait_for_nodes(token_env, 2)
        on_cluster = btlab("run", config, "--address", cluster.address, "--out",
                           tmp_path / "cluster", "--batch-size", "2", "--quiet", env=env)
        assert on_cluster.returncode == 0, on_cluster.stderr[-3000:]
    _assert_two_nodes_and_identical(tmp_path / "local", tmp_path / "cluster", env)


def _assert_two_nodes_and_identical(local: Path, cluster: Path, env: dict[str, str]) -> None:
    rows = pd.read_parquet(cluster)
    assert len(rows) == 25 * 3
    assert rows["node_id"].nunique() == 2, "trials should run on both nodes"
    compared = btlab("compare", local, cluster, env=env)
    assert compared.returncode == 0, compared.stdout
    assert "IDENTICAL" in compared.stdout and "compared 75 trials" in compared.stdout
    by_node = btlab("show", cluster, "--by", "node", env=env)
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
    assert f"1 trial(s) only in {a}:\n  {dropped}  rows=" in out  # its parameters follow


def test_out_uri_writes_there_and_resumes_from_there(tmp_path, monkeypatch, capsys):
    """--out file:///...: parts land under the URI, nothing on the driver's own disk
    besides; a rerun resumes from what the URI holds."""
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "sweep.yaml"
    config.write_text(SWEEP)
    shared = tmp_path / "shared" / "sweep"
    uri = shared.as_uri()
    assert main(["run", str(config), "--backend", "serial", "--out", uri, "--quiet"]) == 0
    assert part_files(shared) and not [p for p in shared.iterdir() if p.name.endswith(".tmp")]
    first = pd.read_parquet(shared)
    assert len(first) == 75
    assert not (tmp_path / "results").exists()  # nothing staged on the driver's disk
    capsys.readouterr()
    assert main(["run", str(config), "--backend", "serial", "--out", uri, "--quiet"]) == 0
    assert f"75 already in {uri}, 0 to run" in capsys.readouterr().out
    assert len(pd.read_parquet(shared)) == 75
    assert main(["show", uri]) == 0
    assert main(["compare", uri, str(shared)]) == 0


@pytest.mark.slow  # a real two-node cluster, about 40 s
def test_the_one_machine_recipe_runs_as_written(tmp_path):
    """docs/cluster.md's one-machine recipe, run by bash as written but for its port (a free
    one), its --temp-dir (a temporary one) and a small budget: beside any other Ray on the
    machine it starts two nodes, `ray status` reaches them, btlab says it joined them, and
    `kill` of the two `ray start --block` PIDs stops every process of that cluster."""
    from helpers.ray_cli import _pids_naming, free_ports

    text = (ROOT / "docs" / "cluster.md").read_text()
    start = text.index("```bash\nray start --head --port=6379 --num-cpus=1")
    recipe = text[start + len("```bash\n"):text.index("```", start + 8)]
    port = free_ports(1)[0]
    scratch = Path(tempfile.mkdtemp(prefix="btr-", dir="/tmp"))  # short: Ray's socket paths
    temp_dir = scratch / "r"
    script = (recipe.replace("6379", str(port)).replace("/tmp/btlab-ray", str(temp_dir))
              .replace("btlab run configs/warnsdorff_64_starts.yaml",
                       f"{shlex.quote(sys.executable)} -m btlab run "
                       "configs/warnsdorff_64_starts.yaml 'fixed.board=[5,5]' budget.nodes=300"))
    assert script.count(str(port)) == recipe.count("6379") >= 5
    shutil.copytree(ROOT / "configs", tmp_path / "configs")
    env = _user(tmp_path / "home")
    env["PYTHONPATH"] = os.environ.get("PYTHONPATH") or str(ROOT)
    proc = subprocess.Popen(["bash", "-e", "-c", script], cwd=tmp_path, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=400)
        assert proc.returncode == 0, out[-4000:]
        assert f"joined the Ray cluster at 127.0.0.1:{port} (2 nodes, 2 CPUs)" in out, out
        assert "Active:" in out and out.count(" node_") == 2  # ray status, by its address
        rows = pd.read_parquet(tmp_path / "results" / "cluster")
        assert len(rows) == 75 and rows["node_id"].nunique() == 2
        deadline = time.monotonic() + 60
        while _pids_naming(str(temp_dir)) and time.monotonic() < deadline:
            time.sleep(1)  # the nodes drain, then exit
        assert not _pids_naming(str(temp_dir)), "the recipe left processes of its cluster"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        for pid in _pids_naming(str(temp_dir)):  # a failed run: end its cluster, nothing else
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        shutil.rmtree(scratch, ignore_errors=True)


class _FakeRay:
    """What `_joined` asks of Ray: the nodes, the cluster's CPUs, the runtime context."""

    def __init__(self, alive: list[bool], cpus: float, gcs: str):
        self._alive, self._cpus, self._gcs = alive, cpus, gcs

    def nodes(self):
        return [{"Alive": a} for a in self._alive]

    def cluster_resources(self):
        return {"CPU": self._cpus}

    def get_runtime_context(self):
        return type("Context", (), {"gcs_address": self._gcs})()


@pytest.mark.parametrize("given, alive, cpus, said", [
    ("127.0.0.1:6379", [True, True], 2.0, "joined the Ray cluster at 127.0.0.1:6379 (2 nodes, "
     "2 CPUs)"),
    ("auto", [True, False, True, True], 48.0, "joined the Ray cluster at 10.0.0.5:6379 (3 "
     "nodes, 48 CPUs)"),
    ("10.0.0.5:6379", [True], 1.0, "joined the Ray cluster at 10.0.0.5:6379 (1 node, 1 CPU)"),
])
def test_the_driver_says_which_cluster_it_joined(given, alive, cpus, said):
    from btlab.execution.ray_backend import _joined

    assert _joined(_FakeRay(alive, cpus, "10.0.0.5:6379"), given) == said
