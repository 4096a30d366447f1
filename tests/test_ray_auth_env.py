"""Ray token settings from the environment are checked before Ray reads them, and the
embedded Ray leaves nothing in ~/.ray whatever they say (issue 26, kind 13).

HOME is a tmp folder in every test: the real ~/.ray is never touched."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from btlab.cli.main import main
from btlab.execution import ray_auth
from btlab.execution.ray_auth import AUTH_MODE, AUTH_TOKEN, AUTH_TOKEN_PATH

pytestmark = pytest.mark.skipif(not ray_auth.ray_has_token_auth(),
                                reason="this Ray has no token authentication (< 2.52)")

CONFIG = """\
name: auth
problem: knights_tour
fixed: {board: 5, heuristic: warnsdorff}
budget: {nodes: 30}
matrix: {seed: 1..3}
"""


@pytest.fixture
def clean(monkeypatch, tmp_path):
    for name in (AUTH_MODE, AUTH_TOKEN, AUTH_TOKEN_PATH):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    (tmp_path / "s.yaml").write_text(CONFIG)
    return tmp_path


def _token_path(tmp_path: Path, kind: str) -> str:
    path = tmp_path / f"token-{kind}"
    if kind == "folder":
        path.mkdir()
    elif kind == "empty":
        path.write_text("\n")
    elif kind == "fifo":
        os.mkfifo(path)  # in the test's tmp folder; never opened (it would block)
    elif kind == "newline":
        path.write_text("abc\ndef\n")
    elif kind == "non-ascii":
        path.write_bytes("abcé".encode())
    return str(path)


@pytest.mark.parametrize("name, value, says", [
    (AUTH_TOKEN, "abc\ndef", "RAY_AUTH_TOKEN: not a Ray authentication token (character 4 "
     "is '\\n'"),
    (AUTH_TOKEN, "abcé", "character 4 is 'é', which is not printable ASCII"),
    (AUTH_TOKEN, "abc def", "character 4 is ' '"),
    (AUTH_MODE, "tokn", "RAY_AUTH_MODE='tokn': expected one of token, disabled"),
])
def test_bad_token_and_mode_variables(clean, monkeypatch, capsys, name, value, says):
    monkeypatch.setenv(name, value)
    out = clean / "out"
    assert main(["run", str(clean / "s.yaml"), "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert says in err and "fix:" in err and name in err
    assert not out.exists()  # refused before anything was written
    assert not (clean / "home" / ".ray").exists()


@pytest.mark.parametrize("kind, says", [
    ("missing", "no such file"),
    ("folder", "a folder, not a file"),
    ("empty", "its token is empty"),
    ("fifo", "a FIFO (named pipe)"),
    ("newline", "not a token: character 4 is '\\n'"),
    ("non-ascii", "holds bytes that are not ASCII"),
])
def test_bad_token_files(clean, monkeypatch, capsys, kind, says):
    path = _token_path(clean, kind)
    monkeypatch.setenv(AUTH_TOKEN_PATH, path)
    assert main(["run", str(clean / "s.yaml"), "--out", str(clean / "out"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"{AUTH_TOKEN_PATH}={path!r}: {says}" in err
    assert "fix: point RAY_AUTH_TOKEN_PATH at a file" in err
    assert "refused this machine's authentication token" not in err


def test_good_settings_pass(clean, monkeypatch):
    (clean / "tok").write_text("a" * 64 + "\n")
    monkeypatch.setenv(AUTH_TOKEN_PATH, str(clean / "tok"))
    monkeypatch.setenv(AUTH_MODE, "TOKEN")
    ray_auth.check_auth_env()
    monkeypatch.setenv(AUTH_TOKEN, "b" * 64)
    monkeypatch.setenv(AUTH_TOKEN_PATH, str(clean / "missing"))  # unread: a token is set
    ray_auth.check_auth_env()


def test_mode_token_without_a_token_gets_the_private_one(clean, monkeypatch):
    monkeypatch.setattr(ray_auth, "_reload", lambda: None)
    monkeypatch.setenv(AUTH_MODE, "token")
    undo = ray_auth.private_token_for_local_ray()
    assert undo is not None and len(os.environ[AUTH_TOKEN]) == 64
    undo()
    assert AUTH_TOKEN not in os.environ and os.environ[AUTH_MODE] == "token"
    monkeypatch.setenv(AUTH_MODE, "disabled")
    assert ray_auth.private_token_for_local_ray() is None


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["token", "disabled", ""])
def test_the_embedded_run_leaves_nothing_in_dot_ray(clean, mode):
    env = {k: v for k, v in os.environ.items()
           if k not in (AUTH_MODE, AUTH_TOKEN, AUTH_TOKEN_PATH, "RAY_ADDRESS")}
    env.update(HOME=str(clean / "home"), PYTHONPATH=os.pathsep.join(sys.path))
    if mode:
        env[AUTH_MODE] = mode
    done = subprocess.run([sys.executable, "-m", "btlab", "run", str(clean / "s.yaml"),
                           "--out", str(clean / "out"), "--workers", "1", "--quiet"],
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "3 rows written" in done.stdout
    assert not (clean / "home" / ".ray").exists()
