"""btlab.execution.ray_auth without starting Ray: the environment it sets, the messages it gives.

The clusters themselves are in tests/test_cluster.py.
"""

from __future__ import annotations

import os

import pytest

from btlab.execution import ray_auth
from btlab.execution.ray_auth import (
    AUTH_MODE,
    AUTH_TOKEN,
    AUTH_TOKEN_PATH,
    auth_message,
    check_cluster_auth,
    private_token_for_local_ray,
)

pytestmark = pytest.mark.skipif(not ray_auth.ray_has_token_auth(),
                                reason="this Ray has no token authentication (< 2.52)")


@pytest.fixture
def clean(monkeypatch, tmp_path):
    """No RAY_AUTH_* variables, an empty HOME, and Ray's config left alone (a Ray of the
    test session may be running in this process: re-reading its config would change it)."""
    for name in (AUTH_MODE, AUTH_TOKEN, AUTH_TOKEN_PATH):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(ray_auth, "_reload", lambda: None)
    return tmp_path


def test_local_ray_gets_a_token_in_its_environment_and_it_is_taken_back(clean):
    undo = private_token_for_local_ray()
    assert undo is not None
    assert os.environ[AUTH_MODE] == "token"
    token = os.environ[AUTH_TOKEN]
    assert len(token) == 64 and int(token, 16) >= 0
    assert private_token_for_local_ray() is None  # the mode is set now: left alone
    undo()
    assert AUTH_MODE not in os.environ and AUTH_TOKEN not in os.environ
    assert not (clean / ".ray").exists()


def test_a_users_token_or_mode_is_kept(clean, monkeypatch):
    monkeypatch.setenv(AUTH_TOKEN_PATH, str(clean / "mine"))
    undo = private_token_for_local_ray()
    assert os.environ[AUTH_MODE] == "token" and AUTH_TOKEN not in os.environ
    undo()
    monkeypatch.setenv(AUTH_MODE, "disabled")
    assert private_token_for_local_ray() is None
    assert os.environ[AUTH_MODE] == "disabled"


def test_refusal_messages_name_the_cause_and_the_fix(clean, monkeypatch):
    ray_said = ("RPC error: InvalidAuthToken: Authentication token is missing or incorrect. "
                "Note: RAY_AUTH_MODE is currently 'disabled' (not 'token'). Ensure ...")
    none = auth_message("10.0.0.5:6379", ray_said)
    assert none.splitlines()[0] == ("the Ray cluster at 10.0.0.5:6379 requires an "
                                    "authentication token, and this machine has none")
    assert ("  ray: RPC error: InvalidAuthToken: Authentication token is missing or incorrect"
            in none.splitlines())
    assert "fix: copy the head's ~/.ray/auth_token" in none and "RAY_AUTH_MODE=disabled" in none
    assert 'docs/cluster.md, "Token authentication"' in none

    (clean / ".ray").mkdir()
    (clean / ".ray" / "auth_token").write_text("x" * 64)
    wrong = auth_message("10.0.0.5:6379", ray_said)
    assert f"refused this machine's authentication token (from {clean}/.ray/auth_token)" in wrong
    assert len(wrong.splitlines()) == 3

    monkeypatch.setenv(AUTH_MODE, "disabled")
    off = auth_message("10.0.0.5:6379", ray_said)
    assert "RAY_AUTH_MODE=disabled here sends none" in off and "unset RAY_AUTH_MODE" in off


def test_only_host_port_addresses_are_probed(clean, monkeypatch):
    monkeypatch.setattr(ray_auth, "_probe", lambda address: pytest.fail(f"probed {address}"))
    for address in ("auto", "local", "ray://10.0.0.5:10001"):
        assert check_cluster_auth(address) is None


def test_a_refused_driver_tries_this_machines_token_once(clean, monkeypatch):
    (clean / ".ray").mkdir()
    (clean / ".ray" / "auth_token").write_text("x" * 64)
    modes = []

    def probe(address):
        modes.append(os.environ.get(AUTH_MODE))
        return None if os.environ.get(AUTH_MODE) == "token" else "InvalidAuthToken"

    monkeypatch.setattr(ray_auth, "_probe", probe)
    undo = check_cluster_auth("10.0.0.5:6379")
    assert modes == [None, "token"] and os.environ[AUTH_MODE] == "token"
    undo()
    assert AUTH_MODE not in os.environ

    monkeypatch.setattr(ray_auth, "_probe", lambda address: "InvalidAuthToken")
    with pytest.raises(ray_auth.BackendError, match="refused this machine's authentication"):
        check_cluster_auth("10.0.0.5:6379")
    assert AUTH_MODE not in os.environ  # put back after the failed try
