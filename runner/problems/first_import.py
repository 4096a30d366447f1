"""A plug-in module's first import, tried in a child process before btlab's own.

Naming a plug-in runs its module's code (``docs/extending.md``). A module may end
the process while it is imported -- ``sys.exit(0)``, ``os._exit(0)``, a signal
to itself, a crash in C code -- or take over how it ends and what it reports:
exit handlers (``atexit``) that change the exit status, its own Ctrl-C or
SIGTERM handler, replaced or closed output streams, threads that outlive the
import and can end the process at any time. ``os._exit`` and a signal cannot be
caught in the process they end, so while a config is checked
(:func:`probing`, around :func:`btlab.api.run.read_config`: ``btlab validate``,
``btlab run``, :func:`btlab.run`), the first import of each plug-in module is
tried in a child process first (:func:`first_import`): forked when this
process runs one Python thread (cheap: the child has btlab loaded), else a
fresh interpreter with this one's ``sys.path`` and working directory. The
child imports the module as btlab would, reports on a file of its own, runs
the exit handlers the import registered, and exits; only when it reports a
clean import (and a clean exit) does btlab import the module itself. Anything
else is the plug-in's error (:class:`btlab.problems.plugins.PluginError`), which
the config check gives at the key that names the plug-in, exit status 2.

A module already imported (by a notebook, or earlier in the process) is not
tried again; neither is one imported while no config is checked (a Ray worker
running trials: its module passed when the config was checked).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator

#: Seconds a module's first import may take in the child before it is refused.
IMPORT_SECONDS = 120.0
#: How the child is made: ``"auto"`` (fork with one Python thread, else spawn),
#: ``"fork"`` or ``"spawn"`` (tests set it).
START = "auto"

_real_exit = os._exit
_probing = 0

#: Run in a spawned child: ``python -c CHILD SYS_PATH REF REPORT``.
CHILD = ("import json, sys\n"
         "sys.path[:] = json.loads(sys.argv[1])\n"
         "from btlab.problems import plugins\n"
         "from btlab.problems.first_import import child\n"
         "child(lambda: plugins.import_plugin(sys.argv[2], in_child=True), sys.argv[3])\n")

Fail = Callable[[str, str, str], BaseException]


@contextlib.contextmanager
def probing() -> Iterator[None]:
    """Within the block, a plug-in module's first import is tried in a child first."""
    global _probing
    _probing += 1
    try:
        yield
    finally:
        _probing -= 1


def _state() -> dict[str, Any]:
    """What of the process a plug-in's import must leave as it was."""
    out: dict[str, Any] = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        out[f"the {sig.name} handler"] = signal.getsignal(sig)
    for name in ("stdin", "stdout", "stderr", "excepthook"):
        out[f"sys.{name}"] = getattr(sys, name)
    out["the trace function (sys.settrace)"] = sys.gettrace()
    out["the profile function (sys.setprofile)"] = sys.getprofile()
    for fd in (0, 1, 2):
        try:
            st = os.fstat(fd)
            out[f"file descriptor {fd}"] = (st.st_dev, st.st_ino)
        except OSError:
            out[f"file descriptor {fd}"] = None
    out["threads"] = {t.ident for t in threading.enumerate()}
    return out


def _changes(before: dict[str, Any]) -> list[str]:
    now = _state()
    changed = []
    for key, old in before.items():
        if key == "threads":
            new = [t.name for t in threading.enumerate() if t.ident not in old and t.is_alive()]
            if new:
                changed.append(f"started thread(s) still running: {', '.join(new)}")
        elif now[key] is not old and now[key] != old:
            changed.append(f"changed {key}")
    return changed


def child(run: Callable[[], object], report: str) -> None:
    """The child's side: run the import, write what happened to ``report`` (JSON lines),
    run the exit handlers, exit. Never returns."""
    def tell(**what: Any) -> None:
        with open(report, "a") as out:
            out.write(json.dumps(what) + "\n")

    before = _state()
    try:
        run()
    except BaseException as exc:  # noqa: BLE001 - the plug-in's, reported to the parent
        fields = [getattr(exc, name, None) for name in ("expected", "found", "fix")]
        if all(isinstance(f, str) for f in fields):
            tell(error=fields)
        else:
            tell(raised=f"{type(exc).__name__}: {exc}")
        _real_exit(0)
    tell(imported=True, changed=_changes(before))
    atexit._run_exitfuncs()
    tell(exited=True)
    _real_exit(0)


def _tail(path: Path) -> str:
    """The last line of what the child printed (for a message), or ''."""
    try:
        lines = path.read_bytes()[-2000:].decode("utf-8", "replace").strip().splitlines()
    except OSError:
        return ""
    return lines[-1].strip()[:200] if lines else ""


def _forked(run: Callable[[], object], report: str, output: int) -> int:
    pid = os.fork()
    if pid == 0:  # the child
        try:
            os.dup2(output, 1)
            os.dup2(output, 2)
            for sig in (signal.SIGINT, signal.SIGTERM):  # a Ctrl-C ends it
                signal.signal(sig, signal.SIG_DFL)
            atexit._clear()  # btlab's handlers are the parent's
            child(run, report)
        finally:
            _real_exit(70)
    return pid


def _wait_pid(pid: int, deadline: float) -> int | None:
    """The wait status of child ``pid``, or None at the deadline (it is killed)."""
    pause = 0.001
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def _run_child(name: str, ref: str, run: Callable[[], object], folder: Path) -> int | None:
    """Run the child; its wait status (``os.waitpid``'s), or None when it timed out."""
    report, output = folder / "report", folder / "output"
    deadline = time.monotonic() + IMPORT_SECONDS
    fork = START == "fork" or (START == "auto" and hasattr(os, "fork")
                               and threading.active_count() == 1)
    with open(output, "wb") as out:
        if fork:
            sys.stdout.flush()
            sys.stderr.flush()
            pid = _forked(run, str(report), out.fileno())
            try:
                return _wait_pid(pid, deadline)
            except BaseException:  # a Ctrl-C in the parent: the child goes too
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                raise
        proc = subprocess.Popen([sys.executable, "-c", CHILD, json.dumps(sys.path), ref,
                                 str(report)], stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT)
        try:
            code = proc.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            return None
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        return (-code) & 0x7F if code < 0 else code << 8  # as os.waitpid gives it


def _ended(status: int) -> str:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            named = signal.Signals(sig).name
        except ValueError:
            named = f"signal {sig}"
        return f"killed the process with {named}"
    return f"ended the process with exit status {os.WEXITSTATUS(status)}"


def first_import(name: str, ref: str, run: Callable[[], object], fail: Fail) -> None:
    """Try the first import of plug-in module ``name`` (of ``ref``) in a child process.

    Does nothing unless a config is being checked (:func:`probing`) and ``name`` is
    not imported yet. ``run`` imports it as btlab does (in the forked child; a
    spawned one calls :func:`btlab.problems.plugins.import_plugin` on ``ref``).

    Raises:
        what ``fail(expected, found, fix)`` makes: the import raised (the child's
        error, as the import in this process would give it), ended or killed the
        process, changed its state, took longer than :data:`IMPORT_SECONDS`, or its
        exit handlers ended the process.
    """
    if not _probing or name in sys.modules:
        return
    expected = f"module {name!r} to import cleanly, without ending or taking over the process"
    fix = (f"remove what does that from the top level of {name} (a plug-in module should "
           "define its functions when imported; run code inside them)")
    with tempfile.TemporaryDirectory(prefix="btlab-import-") as tmp:
        folder = Path(tmp)
        status = _run_child(name, ref, run, folder)
        try:
            lines = [json.loads(line) for line in
                     (folder / "report").read_text().splitlines() if line.strip()]
        except (OSError, ValueError):
            lines = []
        said = _tail(folder / "output")
    told = {key: value for line in lines for key, value in line.items()}
    last = f" (its last output: {said!r})" if said else ""
    if "error" in told:
        raise fail(*told["error"])
    if "raised" in told:
        raise fail(expected, f"{told['raised']} while importing it", fix)
    if status is None:
        raise fail(expected, f"importing it took more than {IMPORT_SECONDS:g} s (tried in a "
                   "child process)", fix + "; or make the import faster")
    if "imported" not in told:
        raise fail(expected, f"importing it {_ended(status)}{last} (tried in a child "
                   "process: btlab's own was not ended)", fix)
    if told["changed"]:
        raise fail(f"module {name!r} to import without changing the process btlab runs in",
                   f"importing it {'; '.join(told['changed'])}",
                   "do that inside the plug-in's functions, when they are called, not when "
                   "the module is imported")
    if "exited" not in told or os.WIFSIGNALED(status) or os.WEXITSTATUS(status):
        raise fail(expected, f"the exit handlers (atexit) its import registered "
                   f"{_ended(status)}{last}", f"remove the atexit handler from {name}")
