"""The Ray backend: batches of trials as Ray tasks, rows streamed back as they finish.

Ray is imported only here, inside :class:`RayBackend` (``import btlab`` does
not load Ray), and in :mod:`btlab.execution.ray_auth` (Ray's token authentication: the
embedded Ray leaves no ``~/.ray/auth_token``, a cluster that wants a token gets
one or a clear refusal). See :class:`RayBackend` for retries, hung trials and
plug-in modules shipped to the workers.
"""

from __future__ import annotations

import atexit
import functools
import importlib.util
import inspect
import itertools
import logging
import os
import shutil
import socket
import tempfile
import time
from collections import deque
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

import btlab
import btlab.experiments
from btlab.errors import BackendError
from btlab.execution.batching import (
    HANG_FACTOR,
    HANG_GRACE_SECONDS,
    REPORT_EVERY,
    adaptive_batch_size,
    batch_size_for,
    hang_limit,
)
from btlab.execution.execute import METRIC_COLUMNS, pause_at, run_trial
from btlab.execution.interrupts import guarding_handlers, holding_signals
from btlab.execution.ray_auth import (
    AUTH_TOKEN,
    auth_message,
    check_auth_env,
    check_cluster_auth,
    is_auth_error,
    private_token_for_local_ray,
)
from btlab.execution.split_run import Checkpoints, ProgressFn, run_split_trials
from btlab.store.schema import trial_values
from btlab.sweep.trial import Trial

Row = dict[str, Any]
class _Task:
    """The driver's view of one Ray task: its trials and how far it has got.

    ``report_every`` is the task's reporting interval: :data:`REPORT_EVERY`, or 0
    for a *precise* task, which reports each row before it starts the next
    trial, so that the running trial is always ``trials[done]``.
    """

    __slots__ = ("trials", "report_every", "done", "started", "last", "limit", "pid",
                 "node_id", "host")

    def __init__(self, trials: Sequence[Trial], report_every: float):
        self.trials = list(trials)
        self.report_every = report_every
        self.done = 0          # rows received
        self.started = False   # the worker has said it started
        self.last = 0.0        # time.monotonic() when its last message was read
        limits = [hang_limit(t.budget_seconds) for t in self.trials]
        #: the largest hang limit of its trials (None: one has no time budget)
        self.limit: float | None = None
        if all(limit is not None for limit in limits):
            self.limit = max(limit for limit in limits if limit is not None)
        self.pid = self.node_id = self.host = None

    @property
    def precise(self) -> bool:
        return self.report_every == 0

    def deadline(self) -> float | None:
        """When the running trial is sure to have run past its hang limit (monotonic)."""
        if not self.started or self.done >= len(self.trials) or self.limit is None:
            return None
        # the running trial started at most report_every after the last message was sent
        return self.last + self.report_every + self.limit


class RayBackend:
    """Runs batches of trials as Ray tasks and streams their rows back as they finish.

    Each task is a Ray *streaming generator*: it first yields a "started"
    message (its pid and node), then the rows it has finished, in order,
    before starting a trial once :data:`REPORT_EVERY` seconds have passed since
    it last reported (and at its end). So the driver holds the rows of
    every trial finished before the last report, and knows that the running
    trial started at most ``REPORT_EVERY`` after it. Reporting in chunks
    rather than row by row keeps the overhead of short trials low (a Ray
    object per row costs about as much as a short trial).

    * **Hangs.** A trial with a time budget stops itself at the budget
      (solvers read the clock every 1024 placements). When a task has sent
      nothing for longer than :func:`hang_limit` (budget x 1.1 + 5 s) plus
      ``REPORT_EVERY``, the trial it runs -- a solver stuck in C code, an
      infinite loop that never reads the clock -- is taken for hung and the
      task is cancelled with ``ray.cancel(force=True)``, which kills the worker
      process. Which trial hung is known only to within the rows not yet
      reported, so the task's unreported trials are submitted again as a
      *precise* task that reports every row before starting the next trial:
      the hang recurs there, and that trial alone gets a row with status
      ``time_limit``, null counters and an ``error`` saying it was killed; the
      trials after it go on in a new task. A hang thus costs twice its limit.
      Trials without a time budget are never killed.
    * **Dead workers.** A worker that dies (killed, out of memory, a crash)
      fails its task; the driver, not Ray, retries. As for a hang, the
      unreported trials are first submitted again as a precise task; when a
      precise task's worker dies, the trial it was running is run again, up to
      ``max_retries`` times, then gets a row with status ``error``; the trials
      after it go to a new task. A task that dies before it starts counts as a
      failure of each of its trials. Rows are never run twice once received,
      nor written twice.

    Args:
        address: a Ray cluster address (``HOST:PORT`` or ``auto``); None starts an
            embedded local Ray, or joins ``RAY_ADDRESS`` when that is set.
        workers: CPUs of the embedded local Ray (default: all cores); ignored
            on a cluster, where every CPU of the cluster is used.
        batch_size: trials per task (default: :func:`batch_size_for` for the
            first tasks, then :func:`adaptive_batch_size` from the wall times of
            the trials already run).
        max_retries: times a trial whose worker died is run again.
        dashboard: start the Ray dashboard with the embedded local Ray (off by default).

    Raises:
        BackendError: Ray could not be started or joined.

    If Ray is already initialised in this process (a test session), that
    instance is used and left running.
    """

    def __init__(self, address: str | None = None, workers: int | None = None,
                 batch_size: int | None = None, max_retries: int = 3, dashboard: bool = False,
                 py_modules: Sequence[str] = ()):
        check_auth_env()  # before Ray reads them: a bad token made Ray abort the process
        import ray  # heavy: ray takes seconds to import

        self._ray = ray
        self._owns_ray = False
        self.dashboard_url: str | None = None
        #: the token of the embedded local Ray's dashboard (``--dashboard``), None: none
        self.dashboard_token: str | None = None
        self._undo_auth: Any = None
        #: "joined the Ray cluster at ADDRESS (N nodes, C CPUs)" when this backend joined
        #: a cluster (``address``, ``RAY_ADDRESS``), else None (an embedded local Ray)
        self.joined: str | None = None
        if not ray.is_initialized():
            kwargs: dict[str, Any] = dict(include_dashboard=dashboard,
                                          logging_level=logging.WARNING, log_to_driver=True)
            address = address or os.environ.get("RAY_ADDRESS") or None
            if dashboard and importlib.util.find_spec("aiohttp") is None:
                raise BackendError("--dashboard: the Ray dashboard needs the full Ray install\n"
                                   "  fix: pip install 'ray[default]', or run without --dashboard")
            if address is None:
                # "local": always a new embedded instance, never a cluster that another
                # `ray start` on this machine recorded in /tmp/ray/ray_current_cluster
                kwargs["address"] = "local"
                kwargs["num_cpus"] = workers or os.cpu_count() or 1
                given = os.environ.get(AUTH_TOKEN)
                self._undo_auth = private_token_for_local_ray()
                if dashboard and os.environ.get(AUTH_TOKEN) != given:  # ours, not the user's
                    self.dashboard_token = os.environ.get(AUTH_TOKEN)
            else:
                # passed on as given, so that RAY_ADDRESS and --address behave alike
                kwargs["address"] = address
                kwargs["runtime_env"] = _code_runtime_env()
                _check_reachable(address)
                self._undo_auth = check_cluster_auth(address)
            try:
                context = self._start(kwargs)
            except Exception as exc:  # noqa: BLE001 - ray.init raises many kinds; all mean "no Ray"
                self._restore_auth()
                where = address or "an embedded local Ray"
                if is_auth_error(exc):
                    raise BackendError(auth_message(where, str(exc))) from None
                raise BackendError(f"could not start or join Ray ({where}): {exc}\n"
                                   "  fix: check --address / RAY_ADDRESS, or use "
                                   "--backend serial") from None
            self.dashboard_url = getattr(context, "dashboard_url", None) or None
            self._owns_ray = True
            if kwargs["address"] != "local":
                self.joined = _joined(ray, kwargs["address"])
        self.workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.batch_size = batch_size
        self.max_retries = max_retries
        #: where split trials save finished subtrees, and their progress callback
        #: (see :mod:`btlab.execution.split_run`); set by the caller, None: off
        self.split_checkpoints: Checkpoints | None = None
        self.split_progress: ProgressFn | None = None
        #: what went wrong and was handled, for the run's summary
        self.killed = 0        # trials killed past their hang limit
        self.deaths = 0        # tasks whose worker died (their unreported trials ran again)
        self.lost = 0          # trials given up after max_retries worker deaths
        # max_retries=0: the driver retries (see above); Ray would rerun the whole
        # task, finished trials included.
        #: the runtime_env of every task: plug-in modules
        #: (:func:`btlab.problems.plugins.ship_paths`)
        #: beside what the job already ships, or None when there are none
        self.task_env = _task_runtime_env(ray, py_modules)
        task = ray.remote(num_cpus=1, max_retries=0)(_ray_batch)
        self._task = task.options(runtime_env=self.task_env) if self.task_env else task

    def run(self, trials: Iterable[Trial], total: int | None = None) -> Iterator[Row]:
        ray = self._ray
        if total is None:
            total = len(trials)  # type: ignore[arg-type]
        stream = iter(trials)
        head = next(stream, None)
        if head is None:
            return
        if head.split is not None:
            # `split` is a config-level key: every trial of the sweep is split. One
            # trial at a time, its subtrees spread over the workers.
            yield from run_split_trials([head, *stream], ray, self.workers,
                                        checkpoints=self.split_checkpoints,
                                        progress=self.split_progress,
                                        runtime_env=self.task_env)
            return
        stream = itertools.chain([head], stream)
        first_size = self.batch_size or batch_size_for(total, self.workers)
        sent = timed = 0      # trials submitted; trials whose wall time came back
        work_ns = 0           # their wall time in all

        def next_batch() -> list[Trial]:
            nonlocal sent
            size = first_size
            if not self.batch_size and timed:
                size = adaptive_batch_size(work_ns / timed / 1e9, total - sent, self.workers)
            batch = list(itertools.islice(stream, size))
            sent += len(batch)
            return batch
        again: deque[tuple[list[Trial], float]] = deque()  # resubmissions go first
        deaths: dict[str, int] = {}  # trial id -> deaths of a precise task's worker running it
        window = 2 * self.workers + 2  # tasks in flight: keeps workers busy, memory flat
        pending: dict[Any, _Task] = {}

        def submit() -> None:
            while len(pending) < window:
                if again:
                    batch, every = again.popleft()
                else:
                    batch, every = next_batch(), REPORT_EVERY
                    if not batch:
                        return
                if batch:
                    pending[self._task.remote(batch, every)] = _Task(batch, every)

        def worker_died(task: _Task, exc: Exception) -> Iterator[Row]:
            self.deaths += 1
            rest = task.trials[task.done:]
            if task.started and not task.precise:  # which trial? find out in a precise task
                again.appendleft((rest, 0.0))
                return
            blamed = rest if not task.started else rest[:1]
            retry = []
            for trial in blamed:
                deaths[trial.trial_id] = deaths.get(trial.trial_id, 0) + 1
                if deaths[trial.trial_id] > self.max_retries:
                    self.lost += 1
                    yield _lost_row(trial, "error", (
                        f"worker died {deaths[trial.trial_id]} times running this trial; "
                        f"last: {type(exc).__name__}: {str(exc)[:300]}"), task)
                else:
                    retry.append(trial)
            if retry:
                again.appendleft((retry, task.report_every))
            if rest[len(blamed):]:
                again.append((rest[len(blamed):], REPORT_EVERY))

        def hung(gen, task: _Task, now: float) -> Iterator[Row]:
            ray.cancel(gen, force=True)  # kills the worker process
            del pending[gen]
            rest = task.trials[task.done:]
            if not task.precise:  # which trial? find out in a precise task
                again.appendleft((rest, 0.0))
                return
            trial = rest[0]
            self.killed += 1
            yield _lost_row(trial, "time_limit", (
                f"killed by the runner: no result {now - task.last:.1f} s after the trial "
                f"started (time budget {trial.budget_seconds:g} s; limit budget x "
                f"{HANG_FACTOR:g} + {HANG_GRACE_SECONDS:g} s); the solver did not stop at its "
                "time limit"), task, started=task.last)
            if rest[1:]:
                again.appendleft((rest[1:], REPORT_EVERY))

        submit()
        try:
            while pending:
                deadlines = [d for t in pending.values() if (d := t.deadline()) is not None]
                # at most an hour: Ray takes the timeout in C milliseconds, and a huge
                # budget's hang limit (1e300 s) overflows them; the loop waits again
                timeout = (min(3600.0, max(0.0, min(deadlines) - time.monotonic()) + 0.01)
                           if deadlines else None)
                ready, _ = ray.wait(list(pending), num_returns=1, timeout=timeout)
                for gen in ready:
                    task = pending[gen]
                    try:
                        item = ray.get(next(gen))
                    except StopIteration:
                        del pending[gen]
                        if task.done < len(task.trials):  # cannot happen; never drop a trial
                            again.append((task.trials[task.done:], REPORT_EVERY))
                        continue
                    except ray.exceptions.RayError as exc:
                        del pending[gen]
                        yield from worker_died(task, exc)
                        continue
                    task.last = time.monotonic()
                    if isinstance(item, tuple):  # ("started", pid, node_id, host)
                        task.started = True
                        _, task.pid, task.node_id, task.host = item
                        continue
                    task.done += len(item)
                    for row in item:
                        if row.get("wall_ns") is not None:
                            timed += 1
                            work_ns += row["wall_ns"]
                    yield from item
                now = time.monotonic()
                for gen, task in list(pending.items()):
                    deadline = task.deadline()
                    if deadline is None or now <= deadline:
                        continue
                    if ray.wait([gen], timeout=0)[0]:
                        continue  # it did report: read that first
                    yield from hung(gen, task, now)
                submit()
        finally:
            for gen in pending:  # interrupted: stop what still runs
                try:
                    ray.cancel(gen, force=True)
                except Exception:  # noqa: BLE001 - best effort while unwinding
                    pass

    def _start(self, kwargs: dict[str, Any]) -> Any:
        """``ray.init(**kwargs)``, which a stop signal must not cut short.

        Ray starts its processes (GCS, raylet, dashboard agent, runtime-env agent)
        from within ``ray.init``; a ``KeyboardInterrupt`` raised in the middle left
        them running and the driver's half-made core worker crashed the process at
        exit (status 139). So a stop signal that comes while Ray starts is held
        (:func:`btlab.execution.interrupts.holding_signals`; ``ray.init`` resets
        handlers, which :func:`~btlab.execution.interrupts.guarding_handlers` puts
        back), Ray is shut down as soon as it is up, and ``KeyboardInterrupt`` is
        raised then: the run exits 130 and leaves no process behind. A second
        signal, or an error, during the start also shuts down whatever started.

        Raises:
            KeyboardInterrupt: a stop signal came while Ray started.
        """
        ray = self._ray
        with holding_signals() as held:
            try:
                with guarding_handlers():
                    context = ray.init(**kwargs)
            except BaseException:
                self._shutdown_quietly()
                raise
            if held:
                self._shutdown_quietly()
                raise KeyboardInterrupt(held[0])
        return context

    def _shutdown_quietly(self) -> None:
        """Shut down the Ray this backend was starting, holding further signals."""
        with holding_signals(), guarding_handlers():
            try:
                self._ray.shutdown()
            except Exception:  # noqa: BLE001 - best effort: the start failed already
                pass

    def close(self) -> None:
        if self._owns_ray:
            with guarding_handlers():  # ray.shutdown resets them to SIG_DFL at its start
                self._ray.shutdown()
                pause_at("ray_shutdown")
            self._owns_ray = False
        self._restore_auth()

    def _restore_auth(self) -> None:
        if self._undo_auth is not None:
            self._undo_auth()
            self._undo_auth = None


def _ray_batch(trials: Sequence[Trial], report_every: float) -> Iterator[Any]:
    """A Ray task (a streaming generator) running ``trials`` in order.

    Yields ``("started", pid, node_id, host)`` first, then lists of rows: the
    rows finished so far, before starting a trial once ``report_every`` seconds
    have passed since the last report (0: before every trial), and at the end.
    """
    import ray  # heavy: ray takes seconds to import

    node_id = ray.get_runtime_context().get_node_id()
    yield ("started", os.getpid(), node_id, socket.gethostname())
    rows: list[Row] = []
    last = time.monotonic()
    for trial in trials:
        if rows and time.monotonic() - last >= report_every:
            yield rows
            rows = []
            last = time.monotonic()
        rows.append(run_trial(trial, node_id))
    if rows:
        yield rows


def _lost_row(trial: Trial, status: str, message: str, task: _Task | None = None,
              started: float | None = None) -> Row:
    """The row of a trial that gave no result: its worker was killed or kept dying.

    Counters and timings are null: nothing was measured. ``pid``, ``host`` and
    ``node_id`` are those of the task's worker when known; ``started_at`` is
    when the driver saw the trial start (``started``, a ``time.monotonic()``).
    """
    out: Row = trial_values(trial)
    out.update({c: None for c in METRIC_COLUMNS})
    out.update(status=status, solution=None, error=message)
    if task is not None and task.started:
        out.update(pid=task.pid, node_id=task.node_id, host=task.host)
    if started is not None:
        out["started_at"] = datetime.now(timezone.utc) - timedelta(
            seconds=time.monotonic() - started)
    return out


def _joined(ray: Any, given: str) -> str:
    """``joined the Ray cluster at ADDRESS (N nodes, C CPUs)``: the address as given (``auto``
    resolved to the cluster's own), its nodes alive and its CPUs, as Ray reports them now."""
    address = given
    if given == "auto":
        try:
            address = ray.get_runtime_context().gcs_address or given
        except Exception:  # noqa: BLE001 - an older Ray without it: the address as given
            pass
    nodes = sum(1 for node in ray.nodes() if node.get("Alive"))
    cpus = ray.cluster_resources().get("CPU", 0)
    return (f"joined the Ray cluster at {address} ({nodes} node{'s' * (nodes != 1)}, "
            f"{cpus:g} CPU{'s' * (cpus != 1)})")


def _check_reachable(address: str) -> None:
    """Fail fast on a ``HOST:PORT`` nobody listens on (``ray.init`` retries for minutes).

    Raises:
        BackendError: the address is not ``HOST:PORT``, or nothing answers there.
    """
    if address in ("auto", "local") or "://" in address:
        return
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise BackendError(f"--address {address!r}: expected HOST:PORT (e.g. 10.0.0.5:6379), "
                           "auto, or ray://HOST:PORT")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=5).close()
    except OSError as exc:
        raise BackendError(f"could not reach a Ray cluster at {address}: "
                           f"{exc.strerror or exc}\n"
                           "  fix: check --address / RAY_ADDRESS (`ray status` on the head node "
                           "prints it), or leave it out for an embedded local Ray") from None


def _code_runtime_env() -> dict[str, Any]:
    """Ship btlab, one package ``btlab``, to cluster workers (``py_modules``).

    Installed from a wheel, ``btlab/`` holds ``btlab/experiments/`` and ships as
    it is. Run from a checkout (an editable install), the package is the
    repository's ``runner/`` with ``experiments/`` mapped into it: it ships as a
    copy laid out as the wheel's (:func:`_package_copy`). ``__pycache__`` stays
    behind: a worker's copy, at another path, never reads the driver's compiled
    kernels; it caches its own (:mod:`btlab.experiments.compiled._cache`).
    """
    return {"py_modules": [str(_shipped_package())], "excludes": ["__pycache__"]}


def _shipped_package() -> Path:
    """The folder named ``btlab`` that holds all of btlab, ``experiments`` inside it."""
    package = Path(btlab.__file__).resolve().parent
    searches = Path(btlab.experiments.__file__).resolve().parent
    if package.name == "btlab" and searches == package / "experiments":
        return package
    return _package_copy(package, searches)


@functools.lru_cache(maxsize=None)
def _package_copy(package: Path, searches: Path) -> Path:
    """A copy of ``package`` as a folder ``btlab`` with ``searches`` as its ``experiments``.

    Made once per process in a temporary folder, removed when the process exits.
    """
    root = Path(tempfile.mkdtemp(prefix="btlab-ship-"))
    atexit.register(shutil.rmtree, root, True)
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    copy = root / "btlab"
    shutil.copytree(package, copy, ignore=skip)
    shutil.copytree(searches, copy / "experiments", ignore=skip)
    return copy


def _task_runtime_env(ray: Any, py_modules: Sequence[str]) -> dict[str, Any] | None:
    """The job's ``py_modules`` plus the plug-ins', as one task runtime_env (None: no plug-ins).

    A task's ``py_modules`` replaces the job's, so the job's (btlab's own
    packages, on a cluster) are repeated. Ray takes local paths in
    ``py_modules`` at the job level only (``ray.init``), and Ray may have been
    started before the plug-ins were known (a test session, a notebook), so
    each plug-in's file or package folder is uploaded here the way
    ``ray.init`` uploads the job's, and the task names it by the content-hash
    URI it gets (``gcs://_ray_pkg_<hash>.zip``): an edited plug-in is a new
    package, never a worker's stale copy.

    Raises:
        BackendError: a plug-in could not be uploaded to the cluster.
    """
    if not py_modules:
        return None

    # heavy: ray takes seconds to import
    from ray._private.runtime_env.py_modules import upload_py_modules_if_needed

    job = dict(ray.get_runtime_context().runtime_env or {})
    kwargs: dict[str, Any] = {}
    if "include_gitignore" in inspect.signature(upload_py_modules_if_needed).parameters:
        kwargs["include_gitignore"] = False  # a plug-in is shipped whole, as hashed
    try:
        with tempfile.TemporaryDirectory(prefix="btlab-plugins-") as scratch:
            uploaded = upload_py_modules_if_needed({"py_modules": list(py_modules)},
                                                   scratch_dir=scratch, **kwargs)
    except Exception as exc:  # noqa: BLE001 - Ray raises several kinds; all mean "not shipped"
        raise BackendError(f"could not ship the plug-ins {', '.join(py_modules)} to the Ray "
                           f"workers: {exc}\n  fix: run with --backend serial, or install "
                           "the plug-in on every node") from None
    return {"py_modules": [*job.get("py_modules", []), *uploaded["py_modules"]]}
