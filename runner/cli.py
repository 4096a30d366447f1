"""The ``btlab`` command line.

``btlab run CONFIG``       run a sweep (Ray by default), resume what is missing
``btlab show RESULTS_DIR`` print the headline tables again from Parquet
``btlab validate CONFIG``  check a config, print the trial count and samples
``btlab compare A B``      compare two results folders trial by trial
``btlab report RESULTS_DIR -o report.html``  one self-contained HTML report

Exit status: 0 all trials ran, 1 some trials failed (status ``error``),
2 bad input (nothing was run or written), 130 interrupted (rows already
finished are on disk; run again to resume).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                           TimeElapsedColumn, TimeRemainingColumn)

from .errors import BtlabError


def _console() -> Console:
    width = shutil.get_terminal_size((160, 40)).columns
    return Console(width=max(width, 100) if not sys.stdout.isatty() else None,
                   highlight=False)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="btlab", description="Batch experiments on backtracking search (knight's tour, "
        "N-Queens): YAML sweeps -> Ray -> Parquet.")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = sub.add_parser("run", help="run a sweep; rerunning resumes what is missing")
    run.add_argument("config", help="the sweep's YAML file, e.g. configs/warnsdorff_64_starts.yaml")
    run.add_argument("--out", help="results folder (default: results/<name>)")
    run.add_argument("--backend", choices=["ray", "serial"], default="ray",
                     help="ray (default: embedded local Ray, or a cluster with --address) "
                     "or serial (in this process, for debugging)")
    run.add_argument("--address", help="join this Ray cluster (HOST:PORT or auto; "
                     "default: $RAY_ADDRESS, else an embedded local Ray)")
    run.add_argument("--workers", type=int, help="worker processes of the local Ray "
                     "(default: one per core)")
    run.add_argument("--batch-size", type=int, help="trials per Ray task (default: automatic)")
    run.add_argument("--fresh", action="store_true",
                     help="delete this sweep's earlier results and start over")
    run.add_argument("--yes", action="store_true",
                     help="run a sweep larger than the trial cap (1,000,000)")
    run.add_argument("--quiet", action="store_true", help="no progress bar")

    show = sub.add_parser("show", help="print the headline tables of a results folder")
    show.add_argument("results", help="a results folder, e.g. results/warnsdorff-64-starts")
    show.add_argument("--by", choices=["node"], help="node: how the trials spread over the "
                      "machines (Ray node, host) instead of the headline tables")

    cmp = sub.add_parser("compare", help="compare two results folders trial by trial "
                         "(deterministic columns only); exit 0 when identical, 1 otherwise")
    cmp.add_argument("results_a")
    cmp.add_argument("results_b")

    val = sub.add_parser("validate", help="check a config without running it")
    val.add_argument("config")

    rep = sub.add_parser("report", help="write a self-contained HTML report of a results folder")
    rep.add_argument("results", help="a results folder, e.g. results/warnsdorff-64-starts")
    rep.add_argument("-o", "--output", default="report.html",
                     help="the HTML file to write (default: report.html)")
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``btlab`` console script; returns the exit status."""
    args = _parser().parse_args(argv)
    console = _console()
    try:
        if args.command == "run":
            return cmd_run(args, console)
        if args.command == "show":
            return cmd_show(args, console)
        if args.command == "validate":
            return cmd_validate(args, console)
        if args.command == "compare":
            return cmd_compare(args, console)
        if args.command == "report":
            return cmd_report(args, console)
    except BtlabError as exc:
        Console(stderr=True, highlight=False).print(f"[bold red]btlab:[/bold red] {exc}",
                                                    markup=True, soft_wrap=True)
        return exc.exit_code
    return 2


def cmd_validate(args, console: Console) -> int:
    from .config import count_trials, iter_trials, load_config

    config = load_config(args.config)
    total = 0
    samples = []
    for trial in iter_trials(config):
        total += 1
        if len(samples) < 5:
            samples.append(trial)
    console.print(f"{args.config}: OK -- problem {config.problem.name}, {total:,} trials "
                  f"(matrix size {count_trials(config):,})")
    for t in samples:
        console.print(f"  {t.trial_id}  " + "  ".join(f"{k}={v}" for k, v in t.columns.items())
                      + f"  repeat={t.repeat}")
    return 0


def cmd_run(args, console: Console) -> int:
    from .backends import make_backend
    from .config import DEFAULT_TRIAL_CAP, count_trials, iter_trials, load_config
    from .errors import ConfigError
    from .execute import METRIC_COLUMNS
    from .store import ResultStore, load_rows, remove_stale_temporaries
    from .summary import print_headline

    config = load_config(args.config)
    planned = count_trials(config)
    if planned > DEFAULT_TRIAL_CAP and not args.yes:
        raise ConfigError(args.config, None, None, ("matrix",),
                          f"at most {DEFAULT_TRIAL_CAP:,} trials", f"{planned:,} trials",
                          "shrink the sweep, or pass --yes to run it anyway")
    if args.workers is not None and args.workers < 1:
        raise ConfigError("--workers", None, None, ("workers",), "a positive number",
                          str(args.workers), "pass --workers 1 or more")
    folder = Path(args.out) if args.out else Path("results") / config.name
    store = ResultStore(folder, config)
    done = set() if args.fresh else store.existing_ids()
    # Trials are streamed, never held in a list, so that the driver's memory stays
    # flat however many trials a sweep has: one pass counts them and checks every
    # one before anything is written, a second feeds the backend. The ids of this
    # config's trials are kept only when the folder held rows before (to tell
    # rows of trials no longer in the config apart).
    total = already = 0
    wanted: set[str] | None = set() if done else None
    for trial in iter_trials(config):
        total += 1
        already += trial.trial_id in done
        if wanted is not None:
            wanted.add(trial.trial_id)
    remove_stale_temporaries(folder)
    if args.fresh:
        gone = store.clear()
        if gone:
            console.print(f"--fresh: deleted {gone} earlier part file(s) in {folder}")
    to_run = total - already
    todo = (t for t in iter_trials(config) if t.trial_id not in done)
    console.print(f"btlab {config.name}: {total:,} trials, {already:,} "
                  f"already in {folder}, {to_run:,} to run "
                  f"({args.backend} backend, run {store.run_id})")
    failed = 0
    interrupted = False
    if to_run:
        t0 = time.monotonic()
        backend = make_backend(args.backend, address=args.address, workers=args.workers,
                               batch_size=args.batch_size)
        console.print(f"started {args.backend} with {backend.workers} worker(s) in "
                      f"{time.monotonic() - t0:.1f} s")
        progress = Progress(TextColumn("[progress.description]{task.description}"), BarColumn(),
                            MofNCompleteColumn(), TextColumn("{task.fields[rate]}"),
                            TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                            console=console, disable=args.quiet)
        t1 = time.monotonic()
        try:
            with progress:
                task = progress.add_task("trials", total=to_run, rate="")
                for i, row in enumerate(backend.run(todo, total=to_run), 1):
                    store.add(row)
                    failed += row["status"] == "error"
                    rate = i / max(time.monotonic() - t1, 1e-9)
                    progress.update(task, advance=1, rate=f"{rate:,.1f} trials/s")
        except KeyboardInterrupt:
            interrupted = True
        finally:
            store.close()
            backend.close()
        elapsed = time.monotonic() - t1
        console.print(f"{store.rows_written:,} rows written to {folder} in {elapsed:.1f} s")
    # the headline's columns only: the tours and the provenance stay on disk
    df = load_rows(folder, columns=["trial_id", "problem", *config.problem.columns.names,
                                    "budget_nodes", "budget_seconds", "seed", "repeat",
                                    *METRIC_COLUMNS, "error"])
    current = df if wanted is None else df[df["trial_id"].isin(wanted)]
    print_headline(current, console)
    stale = len(df) - len(current)
    if stale:
        console.print(f"{stale:,} row(s) in {folder} are from trials no longer in the config "
                      "(kept on disk; `btlab show` includes them)")
    if interrupted:
        console.print("interrupted: finished rows are on disk; run the same command to resume")
        return 130
    if failed:
        console.print(f"[red]{failed} trial(s) ended with status error[/red]")
        return 1
    return 0


def cmd_show(args, console: Console) -> int:
    from .store import config_of, load_rows
    from .summary import print_headline

    folder = Path(args.results)
    df = load_rows(folder)
    cfg = config_of(folder)
    console.print(f"{folder}: {len(df):,} trials of {cfg.get('name', '?')} "
                  f"({df['run_id'].nunique()} run(s))")
    if args.by == "node":
        from .summary import print_by_node
        print_by_node(df, console)
        return 0
    print_headline(df, console)
    return 1 if (df["status"] == "error").any() else 0


def cmd_compare(args, console: Console) -> int:
    from .compare import compare_folders, describe

    result = compare_folders(args.results_a, args.results_b)
    console.print(describe(result, args.results_a, args.results_b), markup=False)
    return 0 if result.identical else 1


def cmd_report(args, console: Console) -> int:
    from .report import write_report

    out = write_report(args.results, args.output)
    console.print(f"wrote {out} ({out.stat().st_size / 1024:,.0f} KiB): one self-contained HTML "
                  "file, open it in any browser")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
