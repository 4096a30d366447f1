"""Shared fixtures: one Ray instance for the whole test session."""

from __future__ import annotations

import os
import signal

import pytest


def pytest_configure(config):
    """Ctrl-C and a hangup as a terminal gives them, whatever shell started the suite.

    A non-interactive shell starts a background job (`cmd &`) with SIGINT
    ignored, ``nohup`` SIGHUP, and btlab leaves an ignored signal ignored (as
    ``nohup`` asks): the tests that send them to a run would then test nothing
    and fail.
    """
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if signal.getsignal(signal.SIGHUP) is signal.SIG_IGN:
        signal.signal(signal.SIGHUP, signal.SIG_DFL)


@pytest.fixture(scope="session")
def ray_session():
    """An embedded local Ray with 2 CPUs, started once per session and shut down at the end.

    btlab's Ray backend sees that Ray is initialised and uses this instance
    instead of starting its own.
    """
    ray = pytest.importorskip("ray")
    from btlab.execution.ray_auth import private_token_for_local_ray

    os.environ.setdefault("RAY_ADDRESS", "")
    # as btlab's own embedded Ray: token auth with a token in the environment, so that
    # Ray >= 2.59 writes no ~/.ray/auth_token into the real HOME
    undo = private_token_for_local_ray()
    # address="local": a new instance even when another Ray on this machine was
    # started with `ray start` (ray.init() alone would join that one)
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False,
             configure_logging=False)
    yield ray
    ray.shutdown()
    if undo is not None:
        undo()
