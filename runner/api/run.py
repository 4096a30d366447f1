"""``btlab.run`` and ``btlab.validate``: one code path with ``btlab run`` and ``btlab validate``.

:func:`sweep` is the run itself -- check the whole config, stream its trials to
a backend, write their rows -- and both faces call it: ``btlab run``
(:mod:`btlab.cli.main`) prints what it tells and turns the outcome into an exit
status; :func:`run` stays silent (``quiet=True``) and returns the config's rows
as a DataFrame.

Everything that can be wrong with the input is checked before anything is
written; trials are streamed, never held in a list; a Ctrl-C or SIGTERM keeps
the finished rows and is never stored as a trial's error
(:mod:`btlab.execution.interrupts`); each trial that ends with status ``error``
is a row (told as it happens through ``say``, :mod:`btlab.views.failures`);
results that cannot be written raise :class:`btlab.errors.StoreWriteError`.
"""

from __future__ import annotations

import dataclasses
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

import pandas as pd
import yaml
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from btlab.analysis import load
from btlab.config.model import SweepConfig, load_config, parse_config
from btlab.errors import ConfigError
from btlab.execution.backends import Backend, make_backend
from btlab.execution.batching import OPTION_MAXIMA
from btlab.execution.execute import pause_at
from btlab.execution.interrupts import catching_signals, holding_signals
from btlab.execution.kernels import load_kernels
from btlab.execution.ray_auth import check_auth_env
from btlab.execution.split_run import Checkpoints
from btlab.problems import plugins
from btlab.problems.first_import import probing
from btlab.store.folder import ResultStore
from btlab.store.schema import ColumnClash, check_problem_columns
from btlab.store.superseded import Pruned, Tidied
from btlab.sweep.expand import check_trial_cap, iter_trials
from btlab.sweep.trial import Trial
from btlab.sweep.trial_ids import TrialIds
from btlab.views.failures import FailureLog
from btlab.views.findings import folder_finding
from btlab.views.headline import print_headline, tables_columns
from btlab.views.headline_rows import headline_rows
from btlab.views.progress import LogProgress, ShownConsole, log_interval
from btlab.views.tables import TRIAL_COLUMNS, headline_columns

__all__ = ["BACKENDS", "MAPPING_SOURCE", "RunOutcome", "TrialStream", "read_config", "run",
           "sweep", "validate"]

#: The backends :func:`run` takes (``btlab run --backend``).
BACKENDS = ("ray", "serial")

#: The "file" a config given as a mapping is named by in messages (``ConfigError.file``).
MAPPING_SOURCE = "<mapping>"

#: Where a config comes from: a YAML file's path, or a mapping with the YAML's keys.
ConfigSource = str | os.PathLike | Mapping[str, Any]

#: What :func:`sweep` tells as it goes (``Console.print``'s signature); None: nothing.
Say = Callable[..., None]


def _silent(*args: Any, **kwargs: Any) -> None:
    """A ``say`` that tells nothing (:func:`run`)."""


# --------------------------------------------------------------------------- configs


def read_config(config: ConfigSource, overrides: tuple[str, ...] | list[str] = ()) -> SweepConfig:
    """A validated config from a YAML file or a mapping, changed by ``overrides``.

    Args:
        config: the path of a YAML config file, or a mapping with the YAML's keys
            (``{"name": ..., "problem": ..., "fixed": {...}, "matrix": {...}}``),
            whose values are what YAML holds: mappings, lists (tuples are taken as
            lists), strings, numbers, ``True``/``False`` and ``None``.
        overrides: ``key=value``, ``+key=value``, ``~key``, as on the command line.

    Returns:
        The config, checked as ``btlab validate`` checks it.

    Raises:
        ConfigError: an unreadable file, malformed YAML, a value that is not YAML
            (a mapping's), or any invalid value. For a file the message names its
            path, line and column; for a mapping, ``file`` is :data:`MAPPING_SOURCE`
            and ``line`` and ``column`` are None (the key path locates it); a value an
            override set is named by the override either way.
        TypeError: ``config`` is neither a path nor a mapping, or an override is not
            a string.
    """
    bad = [o for o in overrides if not isinstance(o, str)]
    if bad:
        raise TypeError(f"overrides are strings such as 'budget.nodes=1000', found {bad[0]!r}")
    with probing():  # a plug-in's first import runs in a child first (ends, hijacks)
        if isinstance(config, Mapping):
            return _own_columns(_mapping_config(config, tuple(overrides)))
        if isinstance(config, (str, os.PathLike)):
            return _own_columns(load_config(Path(config), tuple(overrides)))
    raise TypeError("config: expected the path of a YAML file or a mapping with its keys, "
                    f"found {type(config).__name__}")


def _own_columns(config: SweepConfig) -> SweepConfig:
    """``config``, once its problem's columns clash with none btlab writes
    (:func:`btlab.store.schema.check_problem_columns`: a ConfigError at ``problem``)."""
    try:
        check_problem_columns(config.problem)
    except ColumnClash as exc:
        raise config.error(("problem",), exc.expected, exc.found, exc.fix) from None
    return config


def _mapping_config(data: Mapping[str, Any], overrides: tuple[str, ...]) -> SweepConfig:
    """A mapping config, validated exactly as a file holding it in YAML.

    The mapping is written as YAML and read back by the file's own parser; every
    position in it is then dropped, as the lines of that text are nobody's.
    """
    text = yaml.safe_dump(_yaml_value(data, ()), sort_keys=False, allow_unicode=True)
    try:
        config = parse_config(text, MAPPING_SOURCE, overrides)
    except ConfigError as exc:
        raise _unlocated(exc) from None
    positions = {k: v if isinstance(v, str) else "" for k, v in config.positions.items()}
    return dataclasses.replace(config, positions=positions)


def _unlocated(exc: ConfigError) -> ConfigError:
    """``exc`` without the line and column of the YAML text a mapping was written as."""
    if exc.where or exc.line is None:
        return exc
    return dataclasses.replace(exc, line=None, column=None)


def _yaml_value(value: Any, path: tuple[str | int, ...]) -> Any:
    """``value`` as plain YAML data (tuples as lists).

    Raises:
        ConfigError: at ``path``, a value YAML cannot hold (a numpy number, a Path, ...).
    """
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if not isinstance(key, (str, int, float, bool)) and key is not None:
                raise _not_yaml(path, key, "key")
            out[key] = _yaml_value(item, (*path, key if isinstance(key, (str, int)) else str(key)))
        return out
    if isinstance(value, (list, tuple)):
        return [_yaml_value(item, (*path, i)) for i, item in enumerate(value)]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise _not_yaml(path, value, "value")


def _not_yaml(path: tuple[str | int, ...], value: Any, what: str) -> ConfigError:
    kind = type(value)
    shown = repr(value)
    shown = shown if len(shown) <= 40 else shown[:37] + "..."
    return ConfigError(MAPPING_SOURCE, None, None, path,
                       f"a {what} a YAML file can hold: a mapping, list, string, number, "
                       "true/false or null",
                       f"{shown} ({kind.__module__}.{kind.__qualname__})",
                       "convert it, e.g. int(x) for a numpy integer, str(p) for a path")


def _option_error(key: str, expected: str, found: Any) -> ConfigError:
    """A bad keyword argument of :func:`run`, told as a config error at that keyword."""
    try:
        shown = repr(found)
    except ValueError:  # an int of more than 4,300 digits has no repr
        shown = f"a whole number of about {int(found.bit_length() * 0.30103):,} digits"
    return ConfigError("btlab.run()", None, None, (key,), expected, shown)


def _check_options(backend: str, workers: int | None, batch_size: int | None,
                   max_failures: int | None = None) -> None:
    """The options argparse checks for ``btlab run``, checked for :func:`run`.

    Raises:
        ConfigError: an unknown backend, or ``workers`` / ``batch_size`` /
            ``max_failures`` not a whole number >= 1.
    """
    if backend not in BACKENDS:
        raise _option_error("backend", " or ".join(repr(b) for b in BACKENDS), backend)
    if backend == "ray":  # before anything is written, and before Ray reads them
        check_auth_env()
    maxima = {**OPTION_MAXIMA, "max_failures": 2**63 - 1}  # max_failures: an int64, as the key
    for key, value in (("workers", workers), ("batch_size", batch_size),
                       ("max_failures", max_failures)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or not 1 <= value <= maxima[key]):
            raise _option_error(key, f"a whole number from 1 to {maxima[key]:,}, or "
                                "None (automatic)", value)


class TrialStream(Iterator[Trial]):
    """The trials of a validated config, made one at a time as they are asked for.

    Attributes:
        config: the validated config (:class:`btlab.config.model.SweepConfig`).
    """

    def __init__(self, config: SweepConfig):
        self.config = config
        self._trials = iter_trials(config)

    def __iter__(self) -> TrialStream:
        return self

    def __next__(self) -> Trial:
        return next(self._trials)


def validate(config: ConfigSource, *overrides: str) -> TrialStream:
    """Check a config (with overrides) without running it; its trials, streamed.

    The config is read and checked when ``validate`` is called; its trials are then
    made one at a time (a sweep of a million trials is never a list in memory), in
    the order ``btlab run`` runs them, each checked as it is made.

    Args:
        config: the path of a YAML config file, or a mapping with its keys (see
            :func:`read_config`, which says what ``file`` and ``line`` mean for one).
        *overrides: ``key=value``, ``+key=value``, ``~key``, as on the command line.

    Returns:
        An iterator of :class:`btlab.Trial` (its ``config`` attribute: the validated
        config).

    Raises:
        ConfigError: the config is invalid (at the call), or a trial is (a start off
            the board...: while iterating, when that trial is reached).
        TypeError: see :func:`read_config`.
    """
    return TrialStream(read_config(config, overrides))


# --------------------------------------------------------------------------- runs


@dataclass
class RunOutcome:
    """What :func:`sweep` did.

    Attributes:
        config: the validated config.
        folder: the results folder (a path, or a URI as given).
        wanted: the ids of the config's trials.
        interrupted: a stop signal (Ctrl-C, SIGTERM) ended the run; the finished
            rows are on disk.
        failed: trials of this run whose row has status ``error``.
        kept_errors: error rows of the config's trials in the folder, counted by the
            tables (0 when no table was made).
        has_parts: the folder holds rows.
        failures: the failing rows this run saw (:class:`btlab.views.failures.FailureLog`).
        finding: the paragraph that answers the sweep's question from the folder's rows
            (:func:`btlab.views.findings.finding`; "" when no table was made).
    """

    config: SweepConfig
    folder: str | Path
    wanted: TrialIds
    interrupted: bool
    failed: int
    kept_errors: int
    has_parts: bool
    failures: FailureLog
    finding: str = ""

    def rows(self) -> pd.DataFrame:
        """The rows of the config's trials in the folder, as :func:`btlab.load` reads them.

        Returns:
            A DataFrame of shape (trials of the config, columns): ``btlab.load``'s
            dtypes and order, rows of other configs left out, index 0..n-1.

        Raises:
            ResultsError: the folder cannot be read.
        """
        if not self.has_parts:
            return pd.DataFrame()
        df = load(self.folder)
        mine = self.wanted.contains_many(df["trial_id"].tolist())
        return df[mine].reset_index(drop=True)


def sweep(config: ConfigSource, *overrides: str, backend: str = "ray",
          address: str | None = None, out: str | os.PathLike | None = None,
          fresh: bool = False, workers: int | None = None, batch_size: int | None = None,
          retry_errors: bool = True, dashboard: bool = False, yes: bool = False,
          console: Console | None = None, say: Say | None = None, progress: bool = True,
          tables: bool = True, max_failures: int | None = None) -> RunOutcome:
    """Run a sweep: what ``btlab run`` and :func:`run` do, without the printing.

    The arguments before ``console`` are :func:`run`'s. ``console``: where the
    progress (a bar on a terminal or in Jupyter, else a plain line every
    ``$BTLAB_PROGRESS_INTERVAL`` s; none unless ``progress``) and, with ``tables``,
    the headline tables go. ``say``: told every other line ``btlab run`` prints, with
    ``Console.print``'s arguments (None: nothing is told). Stop signals are caught
    by the caller (:func:`btlab.execution.interrupts.catching_signals`): one that
    comes within the trial loop or while the last rows are written ends the run
    with ``interrupted`` set; one that comes before or after raises
    ``KeyboardInterrupt``.

    Holding the folder's lock and before the first trial starts, the rows of trials the
    config no longer contains are moved out of the folder, beside it, and superseded rows
    of its trials taken back (:mod:`btlab.store.superseded`): the folder then holds the
    answer to this config only, for every reader.

    Raises:
        ConfigError: bad input (nothing was run or written).
        ResultsError: the folder holds other results or cannot be written
            (:class:`btlab.errors.StoreWriteError`: part-way, the rows before intact).
        BackendError: Ray could not be started or joined.
    """
    console = console if console is not None else ShownConsole(highlight=False)
    tell = say if say is not None else _silent
    # everything that can be wrong with the input is checked before anything is written
    cfg = read_config(config, overrides)
    _check_options(backend, workers, batch_size, max_failures)
    if max_failures is None:  # the option wins over the config's key
        max_failures = cfg.model.max_failures
    # not a terminal (nohup, a log file): plain progress lines instead of the bar
    log_every = (None if not progress or console.is_terminal or console.is_jupyter
                 else log_interval())
    if not yes:
        check_trial_cap(cfg)
    # Trials are streamed, never held in a list, so that the driver's memory stays
    # flat however many trials a sweep has: this pass checks every one before
    # anything is written, a second one (below) feeds the backend.
    refs: set[str] = set()  # plug-ins the trials run, shipped to Ray workers
    hashes: dict[str, str] = {}  # their source hashes, stored with the config
    kinds: set[str] = set()  # the compiled kernels they run (btlab.execution.kernels)
    kernels_of = cfg.problem.kernels

    def ids():
        for t in iter_trials(cfg):
            refs.update(t.plugins)
            hashes.update(t.plugins)
            if kernels_of is not None:
                kinds.update(kernels_of(t.problem_columns()))
            yield t.trial_id

    wanted = TrialIds(ids())  # 8 bytes a trial, held for the whole run
    where = (Path("results") / cfg.name if not out  # --out "": the default, as before
             else out if isinstance(out, (str, Path)) else Path(out))
    store = ResultStore(where, cfg, fresh=fresh, plugins=hashes)
    folder = store.location  # a path or a URI: where the rows are, and all that counts
    shown = escape(str(folder))  # printed literally: a folder name may hold [brackets]
    failures = FailureLog(cfg.problem.columns.names, lambda line: tell(
        line, markup=False, highlight=False, soft_wrap=True, style="red"), limit=max_failures)
    stale_tmp = store.lock()
    try:
        if stale_tmp:
            tell(f"deleted {stale_tmp} temporary file(s) a killed run left in {shown}")
        checkpoints = store.checkpoints()
        if fresh:
            gone = store.clear()
            pruned = store.clear_superseded()
            checkpoints.prune()
            if gone or pruned.files:
                tell(_fresh_line(gone, pruned, shown))
        tidied = store.supersede(wanted)  # before any trial: the folder is this config's
        for line in _tidied_lines(tidied, shown):
            tell(line)
        done, retried = store.resume(wanted, retry_errors=retry_errors)
        if retried:
            tell(f"{retried:,} trial(s) whose rows have status error run again (their "
                 "error rows are removed; --no-retry-errors keeps them)")
        checkpoints.prune(keep=wanted.without(done))
        already = len(wanted & done)
        to_run = len(wanted) - already
        todo = failures.until(t for t in iter_trials(cfg) if t.trial_id not in done)
        if not to_run or tidied.moved:
            store.record_config()  # the folder's newest part names the config it answers
        tell(f"btlab {escape(cfg.name)}: {len(wanted):,} trials, "
             f"{already:,} already in {shown}, {to_run:,} to run "
             f"({backend} backend, run {store.run_id})")
        if cfg.overrides:
            tell("overrides: " + " ".join(cfg.overrides), markup=False)
        for trial_id, saved, total in checkpoints.partial():
            tell(f"split trial {trial_id}: {saved:,} of {total:,} subtrees saved by "
                 "an interrupted run (reused unless its split or budget changed)")
        failed, interrupted, ran, elapsed = 0, False, None, 0.0
        if to_run:
            load_kernels(kinds, tell)  # before the first trial and the progress clock
            failed, interrupted, ran, elapsed = _run_trials(
                backend, dict(address=address, workers=workers, batch_size=batch_size,
                              dashboard=dashboard, py_modules=plugins.ship_paths(sorted(refs))),
                console, tell, store, todo, to_run,
                checkpoints if cfg.model.split is not None else None,
                progress, log_every, failures)
    finally:
        with holding_signals() as held:  # the lock (or lease) is released, then exit 130
            store.close()
    interrupted = interrupted or bool(held)
    if failures.stopped:
        failures.not_started = max(0, to_run - store.rows_written)
    if ran is not None:
        tell(f"{store.rows_written:,} rows written to {shown} in {elapsed:.1f} s")
        for count, what in ((getattr(ran, "killed", 0),
                             "trial(s) hung past the time limit and were killed (status "
                             "time_limit, message in the error column)"),
                            (getattr(ran, "deaths", 0),
                             "time(s) a worker died; the trials it had not reported were run "
                             "again"),
                            (getattr(ran, "lost", 0),
                             "trial(s) given up after their worker died at every retry (status "
                             "error)")):
            if count:
                tell(f"[yellow]{count} {what}[/yellow]")
    has_parts = store.has_parts()
    kept_errors = 0  # error rows of this config's trials on disk (kept: --no-retry-errors)
    found = ""
    if tables and has_parts:
        kept_errors, found = _print_tables(cfg, store, wanted, console, config)
    return RunOutcome(cfg, folder, wanted, interrupted, failed, kept_errors, has_parts,
                      failures, found)


def _fresh_line(parts: int, pruned: Pruned, shown: str) -> str:
    """What ``--fresh`` deleted: the folder's part files and the superseded rows beside it."""
    return (f"--fresh: deleted {parts:,} earlier part file(s) in {shown} and "
            f"{pruned.rows:,} superseded row(s) ({pruned.files:,} file(s)) kept beside it")


def _tidied_lines(tidied: Tidied, shown: str) -> list[str]:
    """What the supersede step did (:func:`btlab.store.superseded.supersede`), in words."""
    where = escape(tidied.where)
    lines = []
    if tidied.moved:
        lines.append(f"moved {tidied.moved:,} row(s) of trials no longer in the config out of "
                     f"{shown} to {where} (kept: a run asking for them again takes them back; "
                     "`btlab show --all` includes them, `btlab prune` deletes them)")
    if tidied.taken_back:
        lines.append(f"took back {tidied.taken_back:,} row(s) of this config's trials from "
                     f"{where} (resumed, not run again)")
    if tidied.dropped:
        lines.append(f"deleted {tidied.dropped:,} superseded copy(ies) of row(s) also in "
                     f"{shown} (left by an interrupted run)")
    return lines


def _print_tables(cfg: SweepConfig, store: ResultStore, wanted: TrialIds,
                  console: Console, source: ConfigSource) -> tuple[int, str]:
    """The headline tables of the config's trials in the folder; returns their error rows
    and the finding (:func:`btlab.views.findings.finding`, from the same rows)."""
    # the columns the tables declare they read (a plug-in's headline that declares none:
    # every headline column); the tours and the provenance stay on disk
    names = cfg.problem.columns.names
    declared = tables_columns(cfg.problem)
    columns = headline_columns(cfg.problem) if declared is None else declared
    # part by part, one compact row per trial key, in config order as read (no copy to sort)
    found = headline_rows(store.loc, columns, wanted, [*names, *TRIAL_COLUMNS], config=cfg,
                          share=declared is not None)
    pause_at("tables")
    rows = found.frame
    print_headline(rows, console, errors=(found.errors, found.first_error))
    if found.stale:
        console.print(f"{found.stale:,} older row(s) in this folder are from trials no longer "
                      "in the config last run: kept on disk, left out of these tables "
                      "(`btlab show --all` includes them)", markup=False)
    path = Path(source) if isinstance(source, (str, os.PathLike)) else None
    return found.errors, folder_finding(rows, config=cfg.expanded(), source=path,
                                        errors=(found.errors, found.first_error))


def _run_trials(backend_name: str, options: dict[str, Any], console: Console, tell: Say,
                store: ResultStore, todo: Iterator[Trial], total: int,
                checkpoints: Checkpoints | None, progress: bool, log_every: float | None,
                failures: FailureLog) -> tuple[int, bool, Backend | None, float]:
    """Start the backend and run ``todo`` (a stream of ``total`` trials) into ``store``.

    ``options``: :func:`btlab.execution.backends.make_backend`'s keywords.
    ``checkpoints`` (split sweeps): where finished subtrees are saved; a split
    trial's row is written to disk as soon as it arrives, then its checkpoint
    is deleted, and a second bar shows the subtrees of the running trial.
    ``log_every``: print a plain progress line every this many seconds instead of
    the bar (output that is not a terminal; :mod:`btlab.views.progress`).
    ``failures`` is told of every row (it tells the failing ones as they come).

    Returns:
        (trials with status error, interrupted?, the backend, seconds spent running)
    """
    t0 = time.monotonic()
    try:
        backend = make_backend(backend_name, **options)
    except KeyboardInterrupt:
        tell(f"interrupted while starting {backend_name}: no trial ran")
        return 0, True, None, 0.0
    joined = getattr(backend, "joined", None)  # a cluster: its address, nodes and CPUs
    tell(f"{joined} in {time.monotonic() - t0:.1f} s" if joined else
         f"started {backend_name} with {backend.workers} worker(s) in "
         f"{time.monotonic() - t0:.1f} s")
    dashboard_url = getattr(backend, "dashboard_url", None)
    if dashboard_url:
        tell(f"Ray dashboard: http://{dashboard_url}")
        token = getattr(backend, "dashboard_token", None)  # the embedded Ray's own token
        if token:
            tell(f"  its login token (valid for this run): {token}")
    bar = Progress(TextColumn("[progress.description]{task.description}"), BarColumn(),
                   MofNCompleteColumn(), TextColumn("{task.fields[rate]}"),
                   TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                   console=console, disable=not progress or log_every is not None)
    log = None
    if log_every is not None:
        def write(line: str) -> None:
            console.print(line, markup=False, highlight=False, soft_wrap=True)
            console.file.flush()

        log = LogProgress(total, write, log_every)
    failed, interrupted = 0, False
    t1 = time.monotonic()
    signals = catching_signals()  # SIGTERM as Ctrl-C; neither is ever a trial's error
    signals.__enter__()
    if log is not None:
        log.start()
    try:
        with bar:
            task = bar.add_task("trials", total=total, rate="")
            if checkpoints is not None:
                sub = bar.add_task("subtrees", total=None, rate="")

                def on_subtrees(done: int, of: int, placements: int, seconds: float) -> None:
                    rate = placements / max(seconds, 1e-9)
                    bar.update(sub, completed=done, total=of,
                               rate=f"{rate:,.0f} placements/s")
                    if log is not None:
                        log.subtrees(done, of)

                backend.split_checkpoints = checkpoints
                backend.split_progress = on_subtrees
            for i, row in enumerate(backend.run(todo, total=total), 1):
                store.add(row)
                if checkpoints is not None:
                    store.flush()  # the row is on disk: its subtrees are no longer needed
                    checkpoints.discard(row["trial_id"])
                failed += row["status"] == "error"
                failures.seen(row)
                rate = i / max(time.monotonic() - t1, 1e-9)
                bar.update(task, advance=1, rate=f"{rate:,.1f} trials/s")
                if log is not None:
                    log.update(i, failed)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if log is not None:
            log.stop()
        # a signal now is held: the last rows are written and Ray shut down, then exit 130
        try:
            with holding_signals() as held:
                try:
                    pause_at("last_rows")
                    store.flush()
                finally:
                    pause_at("shutdown")
                    backend.close()
            interrupted = interrupted or bool(held)
        except KeyboardInterrupt:  # a second signal while they are done
            interrupted = True
        finally:
            signals.__exit__(None, None, None)
    return failed, interrupted, backend, time.monotonic() - t1


def run(config: ConfigSource, *overrides: str, backend: str = "ray",
        address: str | None = None, out: str | os.PathLike | None = None, fresh: bool = False,
        workers: int | None = None, batch_size: int | None = None, retry_errors: bool = True,
        dashboard: bool = False, quiet: bool = True, yes: bool = False,
        max_failures: int | None = None) -> pd.DataFrame:
    """Run a sweep, resuming what its results folder lacks; the rows of its trials.

    The same run as ``btlab run`` (one code path, :func:`sweep`): each keyword is
    the option of the same name, ``retry_errors=False`` is ``--no-retry-errors``.

    Args:
        config: the path of a YAML config file, or a mapping with the YAML's keys
            (see :func:`read_config`: for a mapping, an error's ``file`` is
            ``"<mapping>"`` and its ``line`` is None; the key path locates it).
        *overrides: ``key=value``, ``+key=value``, ``~key``, as on the command line
            (``"budget.nodes=10_000"``, ``"fixed.board=[6,6]"``).
        backend: ``"ray"`` (a Ray already started in this process, e.g. by a
            notebook, is used and left running; else ``address``, ``$RAY_ADDRESS``, or
            an embedded local Ray, shut down at the end) or ``"serial"`` (in this
            process, one trial after the other).
        address: a Ray cluster to join (``HOST:PORT`` or ``"auto"``).
        out: the results folder (default ``results/<name>`` under the working
            folder), or a filesystem URI (``s3://bucket/prefix``, ``file:///dir``).
        fresh: delete the folder's earlier results of this config first.
        workers: worker processes of the embedded local Ray (default: one per core).
        batch_size: trials per Ray task (default: automatic).
        retry_errors: run trials whose rows have status ``error`` again (False: keep
            those rows).
        dashboard: start the Ray dashboard with the embedded local Ray.
        quiet: print nothing (the default); False: a progress bar (which works in
            Jupyter; plain progress lines when output is neither a terminal nor a
            notebook) and, at the end, the headline tables ``btlab run`` prints.
        yes: run a sweep larger than the trial cap (1,000,000 trials).
        max_failures: stop starting trials once this many rows of this run have status
            ``error`` (``--max-failures``; default: the config's ``max_failures:``, else
            no limit); the rows of the trials that finished are kept and returned, and a
            rerun runs the others.

    Returns:
        A DataFrame of shape (trials of the config, columns), one row per trial:
        the Parquet columns (``docs/metrics.md``; counters in placements, checks
        and so on, ``wall_ns`` / ``cpu_ns`` in nanoseconds) with :func:`btlab.load`'s
        dtypes, in its order (config order), index 0..n-1. Rows of other configs
        in the same folder (an earlier budget, a removed matrix value) are on disk
        but not returned. A trial that failed is a row with status ``error`` and
        its message in ``error``, never an exception. An empty frame when the
        config has no trial.

    Raises:
        ConfigError: bad input (an invalid config or override, a bad keyword value,
            more trials than the cap without ``yes``); nothing was run or written.
            ``str(error)`` is what ``btlab run`` prints after ``btlab:``.
        ResultsError: the folder holds other results, is locked by another run, or
            cannot be written (:class:`btlab.errors.StoreWriteError`: part-way, the
            rows written before are intact; a rerun resumes).
        BackendError: Ray could not be started or joined.
        KeyboardInterrupt: Ctrl-C or SIGTERM: raised once the finished rows are on
            disk (a rerun resumes from them) and an embedded Ray is shut down.
        TypeError: ``config`` is neither a path nor a mapping, or an override is
            not a string.
    """
    # Ctrl-C and SIGTERM stop the run, never a trial's error; outside this block the
    # caller's handlers (a notebook's) are back
    with catching_signals():
        outcome = sweep(config, *overrides, backend=backend, address=address, out=out,
                        fresh=fresh, workers=workers, batch_size=batch_size,
                        retry_errors=retry_errors, dashboard=dashboard, yes=yes,
                        console=ShownConsole(highlight=False), progress=not quiet,
                        tables=not quiet, max_failures=max_failures)
    if outcome.interrupted:
        raise KeyboardInterrupt(f"interrupted: finished rows are in {outcome.folder}; run "
                                "again to resume")
    if outcome.finding:
        ShownConsole(highlight=False).print(outcome.finding, markup=False)
    return outcome.rows()
