"""Ray's token authentication, as btlab meets it (Ray 2.52 and later; a no-op before).

What Ray 2.60 does (``ray/_private/authentication/authentication_token_setup.py``,
``ray/_private/worker.py``, ``ray/scripts/scripts.py``; Ray PR #64755, in Ray
since 2.59), with ``RAY_AUTH_MODE`` unset:

* ``ray.init()`` starting a new local Ray turns token authentication on and,
  when it finds no token (``RAY_AUTH_TOKEN``, the file at ``RAY_AUTH_TOKEN_PATH``,
  ``~/.ray/auth_token``, in that order), **writes a new one to
  ``~/.ray/auth_token``**, where it stays.
* ``ray start --head`` turns token authentication on when it finds a token
  (so: whenever an earlier ``ray.init()`` left that file), else leaves it off.
* ``ray start --address=...`` and ``ray.init(address=HOST:PORT)`` never turn it
  on by themselves: they send no token, and a head that wants one refuses them
  with ``AuthenticationError: ... InvalidAuthToken``.

So one embedded ``ray.init()`` (the quick start's ``btlab run``) used to break
every later ``ray start --head`` / ``ray start --address`` pair on the
account. btlab therefore:

* starts its embedded local Ray with token authentication on and a fresh
  token of its own in the environment of that Ray's processes only
  (:func:`private_token_for_local_ray`): nothing is written to ``~/.ray``,
  and Ray's "token authentication is enabled" warning is not printed;
* checks a cluster address before ``ray.init`` (:func:`check_cluster_auth`):
  a head that wants a token gets the one this machine has (as ``ray start --head``
  would use it) when ``RAY_AUTH_MODE`` is unset, and a refusal is one message
  with its fix instead of twenty lines of ``InvalidAuthToken`` retries.

An explicit ``RAY_AUTH_MODE`` (``token`` or ``disabled``) is always left as the
user set it (``token`` without a token gets the embedded Ray's own, in its
environment only). Every ``RAY_AUTH_*`` setting is checked before Ray reads it
(:func:`check_auth_env`): a bad token made Ray abort the process.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import secrets
import stat
import sys
import tempfile
from pathlib import Path
from typing import Callable

from btlab.errors import BackendError

AUTH_MODE = "RAY_AUTH_MODE"
AUTH_TOKEN = "RAY_AUTH_TOKEN"
AUTH_TOKEN_PATH = "RAY_AUTH_TOKEN_PATH"
DOC = 'docs/cluster.md, "Token authentication"'

Undo = Callable[[], None]


def ray_has_token_auth() -> bool:
    """Whether the installed Ray knows token authentication (Ray 2.52 and later)."""
    try:
        return importlib.util.find_spec("ray._private.authentication") is not None
    except (ImportError, ValueError):
        return False


#: The values of ``RAY_AUTH_MODE`` Ray knows.
AUTH_MODES = ("token", "disabled")
#: The largest token file read (a token is 64 hex digits; Ray's own are).
MAX_TOKEN_BYTES = 64 * 1024
_FIX_TOKEN = ("a token is printable ASCII without spaces, e.g. the 64 hex digits of "
              "`python -c 'import secrets; print(secrets.token_hex(32))'`")


def _token_problem(text: str) -> str | None:
    """What is wrong with a token (surrounding whitespace apart), or None: empty, or a
    character that is not printable ASCII (gRPC metadata takes nothing else: Ray
    aborts the process, exit 134, on a newline or a non-ASCII letter)."""
    token = text.strip()
    if not token:
        return "empty"
    for i, ch in enumerate(token):
        if not 0x21 <= ord(ch) <= 0x7E:
            return (f"character {i + 1} is {ch!r}, which is not printable ASCII "
                    "(a space, a newline, a control byte or a non-ASCII letter)")
    return None


def check_auth_env() -> None:
    """Check every Ray setting of the environment btlab reads or passes on, before Ray
    reads it: ``RAY_AUTH_MODE`` (``token`` or ``disabled``), ``RAY_AUTH_TOKEN``
    (printable ASCII) and ``RAY_AUTH_TOKEN_PATH`` (a regular, readable file holding such
    a token; never opened when it is a FIFO, a folder or a device).

    Raises:
        BackendError: the first bad setting, naming the variable, with its fix (exit 2).
    """
    mode = os.environ.get(AUTH_MODE)
    if mode and mode.strip().lower() not in AUTH_MODES:
        raise BackendError(f"{AUTH_MODE}={_shown(mode)}: expected one of "
                           f"{', '.join(AUTH_MODES)} (or unset)\n  fix: unset {AUTH_MODE} "
                           f"(btlab then picks), or set {AUTH_MODE}=token or disabled; "
                           f"see {DOC}")
    token = os.environ.get(AUTH_TOKEN)
    if token is not None and token != "":
        problem = _token_problem(token)
        if problem:
            raise BackendError(f"{AUTH_TOKEN}: not a Ray authentication token ({problem})\n"
                               f"  fix: set {AUTH_TOKEN} to the cluster's token, or unset it; "
                               f"{_FIX_TOKEN}; see {DOC}")
    path = os.environ.get(AUTH_TOKEN_PATH)
    if path and not (token and token.strip()):  # Ray reads the file only without a token
        problem = _token_file_problem(path)
        if problem:
            raise BackendError(f"{AUTH_TOKEN_PATH}={_shown(path)}: {problem}\n  fix: point "
                               f"{AUTH_TOKEN_PATH} at a file holding the cluster's token, "
                               f"or unset it; {_FIX_TOKEN}; see {DOC}")


def _shown(text: str) -> str:
    """``text`` for a message: escaped (no control byte reaches the terminal), cut short."""
    shown = repr(text)
    return shown if len(shown) <= 120 else shown[:100] + "...'"


def _token_file_problem(path: str) -> str | None:
    """What is wrong with the token file at ``path``, or None."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return "no such file"
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    if stat.S_ISDIR(st.st_mode):
        return "a folder, not a file"
    if not stat.S_ISREG(st.st_mode):
        kind = "a FIFO (named pipe)" if stat.S_ISFIFO(st.st_mode) else "not a regular file"
        return f"{kind}: a token is read from a plain file"
    if st.st_size > MAX_TOKEN_BYTES:
        return f"{st.st_size:,} bytes, not a token (at most {MAX_TOKEN_BYTES:,} bytes)"
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_TOKEN_BYTES + 1)
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        return "holds bytes that are not ASCII, not a token"
    problem = _token_problem(text)
    return None if problem is None else f"its token is {problem}" if problem == "empty" \
        else f"not a token: {problem}"


def private_token_for_local_ray() -> Undo | None:
    """Set up this process's environment so that a new local ``ray.init()`` writes no token file.

    Sets ``RAY_AUTH_MODE=token`` and, unless the user gave a token
    (``RAY_AUTH_TOKEN`` or ``RAY_AUTH_TOKEN_PATH``), ``RAY_AUTH_TOKEN`` to a fresh
    random token: Ray's processes started by ``ray.init()`` inherit both, and
    Ray, having a token, does not generate and save one in ``~/.ray/auth_token``.
    The embedded Ray keeps token authentication (its ports are on the node's
    address, not only on loopback). Nothing is done when ``RAY_AUTH_MODE`` is
    set (the user chose) or Ray has no token authentication.

    ``RAY_AUTH_MODE=token`` set by the user without a token gets the fresh token too
    (Ray would write one to ``~/.ray/auth_token``); ``disabled`` is left as it is.

    Returns:
        a function that puts the environment back (call it after
        ``ray.shutdown()``), or None when nothing was changed.
    """
    mode = (os.environ.get(AUTH_MODE) or "").strip().lower()
    if not ray_has_token_auth() or mode == "disabled":
        return None
    changes = {} if mode else {AUTH_MODE: "token"}
    if not os.environ.get(AUTH_TOKEN) and not os.environ.get(AUTH_TOKEN_PATH):
        changes[AUTH_TOKEN] = secrets.token_hex(32)
    return _set_env(changes) if changes else None


def check_cluster_auth(address: str) -> Undo | None:
    """Check, before ``ray.init(address=...)``, that the cluster at ``address`` lets us in.

    Connects to the head's GCS once (``ray.init`` would retry for about 20 s,
    printing a line per try, then say only "Failed to connect"). When the head
    wants a token and ``RAY_AUTH_MODE`` is unset, the token this machine has
    (``RAY_AUTH_TOKEN``, ``RAY_AUTH_TOKEN_PATH`` or ``~/.ray/auth_token``, the one
    ``ray start --head`` here would use) is tried, by setting
    ``RAY_AUTH_MODE=token`` for this process.

    Returns:
        a function that puts the environment back (after ``ray.shutdown()``),
        or None when nothing was changed.

    Raises:
        BackendError: the head refused this driver: its message says why and
            how to fix it.
    """
    if address in ("auto", "local") or "://" in address or not ray_has_token_auth():
        return None
    refused = _probe(address)
    if refused is None:
        return None
    if os.environ.get(AUTH_MODE) or token_source() is None:
        raise BackendError(auth_message(address, refused))
    undo = _set_env({AUTH_MODE: "token"})
    refused = _probe(address)
    if refused is None:
        return undo
    undo()
    raise BackendError(auth_message(address, refused))


def is_auth_error(exc: BaseException) -> bool:
    """Whether ``exc`` (from ``ray.init``) is Ray refusing or lacking an authentication token."""
    import ray.exceptions  # heavy: ray takes seconds to import

    cls = getattr(ray.exceptions, "AuthenticationError", None)
    return (cls is not None and isinstance(exc, cls)) or "InvalidAuthToken" in str(exc)


def token_source() -> str | None:
    """Where Ray would read this process's token from, as it looks for one; None: nowhere."""
    if os.environ.get(AUTH_TOKEN):
        return f"${AUTH_TOKEN}"
    if os.environ.get(AUTH_TOKEN_PATH):
        return os.environ[AUTH_TOKEN_PATH]
    default = Path.home() / ".ray" / "auth_token"
    return str(default) if default.is_file() else None


def auth_message(where: str, detail: str) -> str:
    """The one message for a driver that a cluster's head refused, or that has no token."""
    mode = (os.environ.get(AUTH_MODE) or "").lower()
    source = token_source()
    copy = "copy the head's ~/.ray/auth_token to ~/.ray/auth_token here (or set RAY_AUTH_TOKEN)"
    if mode == "disabled":
        what = (f"the Ray cluster at {where} requires an authentication token, and "
                "RAY_AUTH_MODE=disabled here sends none")
        fix = f"unset RAY_AUTH_MODE (btlab then sends this machine's token) and {copy}"
    elif source is None:
        what = (f"the Ray cluster at {where} requires an authentication token, and this machine "
                "has none\n  (its head runs with token authentication; since Ray 2.59 `ray start "
                "--head` turns it on when it finds ~/.ray/auth_token, which ray.init() writes)")
        fix = (f"{copy}; or run the cluster without tokens: `RAY_AUTH_MODE=disabled ray start "
               "...` on every node")
    else:
        what = (f"the Ray cluster at {where} refused this machine's authentication token "
                f"(from {source}): it is not that cluster's token")
        fix = copy
    first = detail.strip().splitlines()[0].split(". ")[0] if detail.strip() else ""
    return f"{what}\n  ray: {first[:160]}\n  fix: {fix}; see {DOC}"


def _probe(address: str) -> str | None:
    """Connect to the GCS at ``address`` once; the error text when it refused us, else None.

    Any other failure is left to ``ray.init`` to report. Ray's C++ client logs
    each refusal on standard error; that output is swallowed here.
    """
    raylet = importlib.import_module("ray._raylet")  # untyped: the compiled core
    with _quiet_stderr():
        try:
            raylet.GcsClient(address=address)
        except Exception as exc:  # noqa: BLE001 - only an authentication refusal matters here
            return str(exc) if is_auth_error(exc) else None
    return None


def _set_env(changes: dict[str, str]) -> Undo:
    """Set ``changes`` in ``os.environ`` and make Ray read them again; returns the undo."""
    before = {k: os.environ.get(k) for k in changes}
    os.environ.update(changes)
    _reload()

    def undo() -> None:
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        _reload()

    return undo


def _reload() -> None:
    """Make Ray re-read ``RAY_AUTH_MODE`` and the token (it caches both once read)."""
    raylet = importlib.import_module("ray._raylet")  # untyped: the compiled core
    if hasattr(raylet, "Config"):
        raylet.Config.initialize("")  # as Ray's own _enable_token_auth does
    loader = getattr(raylet, "AuthenticationTokenLoader", None)
    if loader is not None and hasattr(loader.instance(), "reset_cache"):
        loader.instance().reset_cache()


class _quiet_stderr:
    """Send file descriptor 2 (where Ray's C++ code logs) to a scratch file for a while."""

    def __enter__(self) -> None:
        sys.stderr.flush()
        self._scratch = tempfile.TemporaryFile()
        self._saved = os.dup(2)
        os.dup2(self._scratch.fileno(), 2)

    def __exit__(self, *exc: object) -> None:
        sys.stderr.flush()
        os.dup2(self._saved, 2)
        os.close(self._saved)
        self._scratch.close()
