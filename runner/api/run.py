"""``btlab run``: check the whole config, stream its trials to a backend, write their rows.

Everything that can be wrong with the input is checked before anything is
written; trials are streamed, never held in a list; a Ctrl-C or SIGTERM keeps
the finished rows (exit 130) and is never stored as a trial's error
(:mod:`btlab.execution.interrupts`); each trial that ends with status ``error`` is
printed as it happens and listed at the end (:mod:`btlab.views.failures`), and
gives exit 1; results that cannot be written (disk full, ...) exit 3
(:class:`btlab.errors.StoreWriteError`).
"""

from __future__ import annotations

import shlex
import time
from pathlib import Path

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

from btlab.execution.interrupts import catching_signals, holding_signals
from btlab.problems import plugins


def cmd_run(args, console: Console) -> int:
    # CLI start-up: `btlab --help` imports no pandas, pyarrow or pydantic
    from btlab.analysis.config_order import in_config_order
    from btlab.config.model import load_config
    from btlab.execution.execute import ESTIMATE_COLUMNS, METRIC_COLUMNS, pause_at
    from btlab.store.folder import ResultStore
    from btlab.sweep.expand import check_trial_cap, iter_trials
    from btlab.sweep.trial_ids import TrialIds
    from btlab.views.failures import FailureLog
    from btlab.views.headline import print_headline
    from btlab.views.headline_rows import headline_rows
    from btlab.views.progress import log_interval
    from btlab.views.tables import TRIAL_COLUMNS

    # everything that can be wrong with the input is checked before anything is written
    config = load_config(args.config, args.overrides)
    # not a terminal (nohup, a log file): plain progress lines instead of the bar
    log_every = None if args.quiet or console.is_terminal else log_interval()
    if not args.yes:
        check_trial_cap(config)
    # Trials are streamed, never held in a list, so that the driver's memory stays
    # flat however many trials a sweep has: this pass checks every one before
    # anything is written, a second one (below) feeds the backend.
    refs: set[str] = set()  # plug-ins the trials run, shipped to Ray workers

    def ids():
        for t in iter_trials(config):
            refs.update(t.plugins)
            yield t.trial_id

    wanted = TrialIds(ids())  # 8 bytes a trial, held for the whole run
    store = ResultStore(args.out or Path("results") / config.name, config, fresh=args.fresh)
    folder = store.location  # a path or a URI: where the rows are, and all that counts
    shown = escape(str(folder))  # printed literally: a folder name may hold [brackets]
    stale_tmp = store.lock()
    try:
        if stale_tmp:
            console.print(f"deleted {stale_tmp} temporary file(s) a killed run left in {shown}")
        checkpoints = store.checkpoints()
        if args.fresh:
            gone = store.clear()
            checkpoints.prune()
            if gone:
                console.print(f"--fresh: deleted {gone} earlier part file(s) in {shown}")
        done, retried = store.resume(wanted, retry_errors=not args.no_retry_errors)
        if retried:
            console.print(f"{retried:,} trial(s) whose rows have status error run again (their "
                          "error rows are removed; --no-retry-errors keeps them)")
        checkpoints.prune(keep=wanted.without(done))
        already = len(wanted & done)
        to_run = len(wanted) - already
        todo = (t for t in iter_trials(config) if t.trial_id not in done)
        if not to_run:
            store.record_config()
        console.print(f"btlab {escape(config.name)}: {len(wanted):,} trials, "
                      f"{already:,} already in {shown}, {to_run:,} to run "
                      f"({args.backend} backend, run {store.run_id})")
        if config.overrides:
            console.print("overrides: " + " ".join(config.overrides), markup=False)
        for trial_id, saved, total in checkpoints.partial():
            console.print(f"split trial {trial_id}: {saved:,} of {total:,} subtrees saved by "
                          "an interrupted run (reused unless its split or budget changed)")
        failed, interrupted, backend, elapsed = 0, False, None, 0.0
        failures = FailureLog(config.problem.columns.names, lambda line: console.print(
            line, markup=False, highlight=False, soft_wrap=True, style="red"))
        if to_run:
            failed, interrupted, backend, elapsed = _run_trials(
                args, console, store, todo, to_run,
                checkpoints if config.model.split is not None else None,
                plugins.ship_paths(sorted(refs)), log_every, failures)
    finally:
        with holding_signals() as held:  # the lock (or lease) is released, then exit 130
            store.close()
    interrupted = interrupted or bool(held)
    if backend is not None:
        console.print(f"{store.rows_written:,} rows written to {shown} in {elapsed:.1f} s")
        for count, what in ((getattr(backend, "killed", 0),
                             "trial(s) hung past the time limit and were killed (status "
                             "time_limit, message in the error column)"),
                            (getattr(backend, "deaths", 0),
                             "time(s) a worker died; the trials it had not reported were run "
                             "again"),
                            (getattr(backend, "lost", 0),
                             "trial(s) given up after their worker died at every retry (status "
                             "error)")):
            if count:
                console.print(f"[yellow]{count} {what}[/yellow]")
    # the headline's columns only: the tours and the provenance stay on disk
    columns = ["trial_id", "problem", *config.problem.columns.names, *TRIAL_COLUMNS,
               "repeat", *METRIC_COLUMNS, "abandoned", *ESTIMATE_COLUMNS, "error"]
    kept_errors = 0  # error rows of this config's trials on disk (kept: --no-retry-errors)
    if store.has_parts():
        # part by part, one row per trial key: the driver's memory stays flat with the trials
        found = headline_rows(store.loc, columns, wanted,
                              [*config.problem.columns.names, *TRIAL_COLUMNS])
        pause_at("tables")
        print_headline(in_config_order(found.frame, config), console,
                       errors=(found.errors, found.first_error))
        stale = found.stale
        kept_errors = found.errors
        if stale:
            console.print(f"{stale:,} older row(s) in this folder are from trials no longer in "
                          "the config last run: kept on disk, left out of these tables "
                          "(`btlab show --all` includes them)", markup=False)
    if interrupted:
        console.print("interrupted: finished rows are on disk; run the same command to resume")
        return 130
    if store.has_parts():
        for line in _closing_lines(config, str(folder)):
            console.print(line, markup=False, highlight=False, soft_wrap=True)
    for line in failures.summary(folder):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    if failed:
        console.print(f"[red]{failed} trial(s) ended with status error[/red] "
                      "(the message is in the error column)")
        return 1
    if kept_errors:
        # nothing failed in this run, but the folder holds error rows of the config's
        # trials (kept by --no-retry-errors): the same exit status `btlab show` gives
        console.print(f"[red]{kept_errors} trial(s) of this config have status error[/red] "
                      "(kept by --no-retry-errors; a rerun without it runs them again)")
        return 1
    return 0


def _closing_lines(config, folder: str) -> list[str]:
    """What the tables' ``>=`` means for this config's budget, and what to run next."""
    budget = config.model.budget
    limits = [f"{budget.nodes:,} placements" if budget.nodes else "",
              f"{budget.backtracks:,} backtracks" if budget.backtracks is not None else "",
              f"{budget.seconds:g} s" if budget.seconds else ""]
    limit = " or ".join(x for x in limits if x)
    m = config.model
    written = [m.fixed, m.matrix, *m.include]
    if any("budget" in e for e in written):  # each trial's own: its budget_* columns
        limit = "each trial's budget: columns budget_nodes, budget_backtracks, budget_seconds"
    if m.restarts is not None or any("restarts" in e for e in written):
        limit = (f"{limit}, or max restarts (status restart_limit)" if limit
                 else "max restarts (status restart_limit)")
    quoted = shlex.quote(folder)
    lines = [f"censored trials: stopped at the budget ({limit}) before finishing; their "
             "counters are lower bounds, written >=N"] if limit else []
    return lines + [f"next: btlab show {quoted} (these tables again); btlab report {quoted} "
                    "-o report.html (survival curves, pairwise comparisons, every start)"]


def _run_trials(args, console: Console, store, todo, total: int, checkpoints=None,
                py_modules: list[str] | None = None,
                log_every: float | None = None,
                failures=None) -> tuple[int, bool, object, float]:
    """Start the backend and run ``todo`` (a stream of ``total`` trials) into ``store``.

    ``checkpoints`` (split sweeps): where finished subtrees are saved; a split
    trial's row is written to disk as soon as it arrives, then its checkpoint
    is deleted, and a second bar shows the subtrees of the running trial.
    ``py_modules``: plug-in modules the Ray workers need.
    ``log_every``: print a plain progress line every this many seconds instead of
    the bar (output that is not a terminal; :mod:`btlab.views.progress`).
    ``failures``: a :class:`btlab.views.failures.FailureLog` told of every row (it
    prints the failing ones as they come).

    Returns:
        (trials with status error, interrupted?, the backend, seconds spent running)
    """
    # CLI start-up: `btlab --help` imports no numpy or searches
    from btlab.execution.backends import make_backend
    from btlab.execution.execute import pause_at

    t0 = time.monotonic()
    try:
        backend = make_backend(args.backend, address=args.address, workers=args.workers,
                               batch_size=args.batch_size, dashboard=args.dashboard,
                               py_modules=py_modules or ())
    except KeyboardInterrupt:
        console.print(f"interrupted while starting {args.backend}: no trial ran")
        return 0, True, None, 0.0
    console.print(f"started {args.backend} with {backend.workers} worker(s) in "
                  f"{time.monotonic() - t0:.1f} s")
    dashboard_url = getattr(backend, "dashboard_url", None)
    if dashboard_url:
        console.print(f"Ray dashboard: http://{dashboard_url}")
        token = getattr(backend, "dashboard_token", None)  # the embedded Ray's own token
        if token:
            console.print(f"  its login token (valid for this run): {token}")
    progress = Progress(TextColumn("[progress.description]{task.description}"), BarColumn(),
                        MofNCompleteColumn(), TextColumn("{task.fields[rate]}"),
                        TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                        console=console, disable=args.quiet or log_every is not None)
    log = None
    if log_every is not None:
        from btlab.views.progress import LogProgress  # CLI start-up: as above

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
        with progress:
            task = progress.add_task("trials", total=total, rate="")
            if checkpoints is not None:
                sub = progress.add_task("subtrees", total=None, rate="")

                def on_subtrees(done: int, of: int, placements: int, seconds: float) -> None:
                    rate = placements / max(seconds, 1e-9)
                    progress.update(sub, completed=done, total=of,
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
                if failures is not None:
                    failures.seen(row)
                rate = i / max(time.monotonic() - t1, 1e-9)
                progress.update(task, advance=1, rate=f"{rate:,.1f} trials/s")
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
