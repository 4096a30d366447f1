"""A Ray cluster started the way a user starts one: the ``ray`` CLI, one ``ray start`` per node.

Each node is ``ray start ... --block`` in a subprocess of its own session
(process group), so that stopping the cluster ends exactly the processes the
test started: SIGTERM to each ``ray start`` (it stops its node's processes),
then SIGKILL to whatever is left in those process groups or still names the
cluster's own temp dir. Never ``ray stop``, which ends every Ray on the machine.

Every node gets its own ports (picked free on 127.0.0.1) and the cluster its
own ``--temp-dir``, so that it can run beside other Ray instances, and the
nodes bind to 127.0.0.1.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

RAY = str(Path(sys.executable).parent / "ray")
#: variables of the test's own process that a user's shell would not have
_NOT_INHERITED = ("RAY_ADDRESS", "RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH",
                  "PYTEST_CURRENT_TEST")


def user_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a user's shell with ``HOME=home``: none of Ray's variables of the
    test session (its embedded Ray's token), the ``ray`` CLI of this Python on PATH."""
    env = {k: v for k, v in os.environ.items() if k not in _NOT_INHERITED}
    env["HOME"] = str(home)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.update(extra)
    return env


def free_ports(n: int, avoid: frozenset[int] = frozenset()) -> list[int]:
    """``n`` distinct ports free on 127.0.0.1 right now (bound together, then released), none
    of them in ``avoid`` (ports already handed out but released: the OS may offer them again,
    and two Ray components on one port make ``ray start`` fail)."""
    socks = []
    try:
        while len([s for s in socks if s.getsockname()[1] not in avoid]) < n:
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [p for p in (s.getsockname()[1] for s in socks) if p not in avoid][:n]
    finally:
        for s in socks:
            s.close()


def _node_ports(head: bool, used: set[int]) -> list[str]:
    """A node's port flags: ports free now and not in ``used`` (every port the cluster
    handed out so far), which they join."""
    names = ["--node-manager-port", "--object-manager-port", "--metrics-export-port",
             "--dashboard-agent-listen-port", "--dashboard-agent-grpc-port",
             "--runtime-env-agent-port"]
    if head:
        names += ["--dashboard-port"]
    ports = free_ports(len(names), frozenset(used))
    used.update(ports)
    # worker processes bind to ports the OS picks (as ray.cluster_utils does)
    return [*(f"{n}={p}" for n, p in zip(names, ports)),
            "--min-worker-port=0", "--max-worker-port=0"]


class Cluster:
    """The nodes started so far: the ``ray start --block`` processes and their logs."""

    def __init__(self, temp_dir: Path, port: int):
        self.temp_dir = temp_dir
        self.port = port
        self.address = f"127.0.0.1:{port}"
        self.used = {port}  # every port handed out: none is given twice
        self.procs: list[subprocess.Popen] = []
        self.logs: list[Path] = []

    def start_node(self, env: dict[str, str], head: bool, timeout: float = 120) -> None:
        """``ray start --head --port=P`` or ``ray start --address=127.0.0.1:P``, 1 CPU, as a
        user types it, plus the ports and loopback that sharing one machine needs; returns
        once the node says it started. Raises AssertionError with the node's log if not."""
        if head:
            args = ["--head", f"--port={self.port}", f"--temp-dir={self.temp_dir}",
                    "--include-dashboard=false"]
        else:
            args = [f"--address={self.address}"]
        cmd = [RAY, "start", *args, "--num-cpus=1", "--node-ip-address=127.0.0.1",
               "--disable-usage-stats", *_node_ports(head, self.used), "--block"]
        log = self.temp_dir.parent / f"node{len(self.procs)}.log"
        with open(log, "wb") as out:
            proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
        self.procs.append(proc)
        self.logs.append(log)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = log.read_text(errors="replace")
            if "Ray runtime started" in text:
                return
            if proc.poll() is not None:
                raise AssertionError(f"`ray start {' '.join(args)}` exited {proc.returncode}:\n"
                                     f"{text[-4000:]}")
            time.sleep(0.25)
        raise AssertionError(f"`ray start {' '.join(args)}` did not start in {timeout:.0f} s:\n"
                             f"{log.read_text(errors='replace')[-4000:]}")

    def start_failing_node(self, env: dict[str, str], timeout: float = 120
                           ) -> subprocess.CompletedProcess:
        """``ray start --address=...`` expected to fail: run to its end (no ``--block``)."""
        cmd = [RAY, "start", f"--address={self.address}", "--num-cpus=1",
               "--node-ip-address=127.0.0.1", "--disable-usage-stats",
               *_node_ports(False, self.used)]
        return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout,
                              start_new_session=True)

    def wait_for_nodes(self, env: dict[str, str], n: int, timeout: float = 60) -> None:
        """Until ``ray status`` counts ``n`` nodes alive."""
        deadline = time.monotonic() + timeout
        out = ""
        while time.monotonic() < deadline:
            done = subprocess.run([RAY, "status", f"--address={self.address}"], env=env,
                                  capture_output=True, text=True, timeout=60)
            out = done.stdout + done.stderr
            active = out.split("Active:", 1)[-1].split("Pending:", 1)[0]
            if "Active:" in out and active.count("node_") >= n:
                return
            time.sleep(1)
        raise AssertionError(f"{n} nodes not alive after {timeout:.0f} s:\n{out[-3000:]}")

    def stop(self) -> None:
        """Stop exactly the processes this cluster started."""
        for proc in reversed(self.procs):  # workers first, then the head
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
        for proc in self.procs:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # its own session: only its processes
            except (ProcessLookupError, PermissionError):
                pass
            if proc.poll() is None:
                proc.wait(timeout=10)
        for pid in _pids_naming(str(self.temp_dir)):
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def _pids_naming(text: str) -> list[int]:
    """Processes whose command line contains ``text`` (the cluster's own temp dir)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if text.encode() in cmdline:
            pids.append(int(entry.name))
    return pids


@contextmanager
def ray_cli_cluster() -> Iterator[Cluster]:
    """An empty cluster (no node yet) with its own short temp dir; stopped on exit."""
    scratch = Path(tempfile.mkdtemp(prefix="btc-", dir="/tmp"))  # short: socket paths
    cluster = Cluster(scratch / "r", free_ports(1)[0])
    try:
        yield cluster
    finally:
        cluster.stop()
    left = _pids_naming(str(cluster.temp_dir))
    assert not left, f"processes of the cluster outlived it: {left}"
    shutil.rmtree(scratch, ignore_errors=True)  # kept, with the nodes' logs, when a test failed
