"""The ``btlab`` command line.

``btlab run CONFIG [KEY=VALUE ...]``  run a sweep (Ray by default), resume what is
                           missing; KEY=VALUE overrides a config key (runner/config/overrides.py)
``btlab show RESULTS_DIR`` print the headline tables again from Parquet
``btlab ls [ROOT]``         list the sweeps under a results root (default results/)
``btlab validate CONFIG [KEY=VALUE ...]``  check a config, print the trial count and samples
``btlab --version``        btlab's version and the git commit of its code
``btlab compare A B``      compare two results folders trial by trial (``--timings``: and
                           their CPU time per group)
``show``, ``compare``, ``ls``: ``--format table|csv|json`` (``--table NAME`` picks the CSV's)
``btlab report RESULTS_DIR [RESULTS_DIR ...] -o report.html``  one self-contained HTML
                           report (several folders of one problem: read together)

Exit status: 0 all trials ran, 1 some trials failed (status ``error``),
2 bad input (nothing was run or written), 3 results could not be written
(no space left, quota, I/O error, read-only file system: the rows written
before are intact; run again to resume; or an output file of ``report -o``
could not be written, nothing left behind), 130 interrupted (rows already
finished are on disk; run again to resume).
"""

from __future__ import annotations

import argparse
import errno
import itertools
import json
import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import NoReturn

from rich.console import Console
from rich.markup import escape

from btlab.errors import BtlabError, WriteError, shown
from btlab.execution.batching import OPTION_MAXIMA
from btlab.execution.interrupts import catching_signals, settle
from btlab.views.progress import ShownConsole


def _console(markup: bool = True) -> Console:
    """The console commands print to; ``markup=False`` for those that print stored values
    (show, report, compare), so that a value such as ``[/bold]`` is printed as it is."""
    width = shutil.get_terminal_size((160, 40)).columns
    return ShownConsole(width=max(width, 100) if not sys.stdout.isatty() else None,
                   highlight=False, markup=markup)


_OVERRIDES_HELP = (
    "change the config: key=value changes a key of the file (dotted: fixed.board=[6,6], "
    "matrix.heuristic=[none,warnsdorff], budget.nodes=10_000_000, seed=7), +key=value adds "
    "a key the file lacks, ~key deletes one; values are YAML (quote them for the shell)")

_EPILOG = """\
overrides (run, validate), as in Hydra:
  btlab run configs/warnsdorff_64_starts.yaml 'fixed.board=[6,6]' budget.nodes=10_000
  btlab validate configs/warnsdorff_64_starts.yaml +fixed.closed=true ~budget.seconds
A run with overrides is an edited config: rows of trials it no longer has are moved
out of the results folder, kept beside it (btlab show --all includes them, btlab prune
deletes them), so that the folder holds the answer to the config last run.

When output is not a terminal (nohup, a log file), btlab run prints a plain progress
line every 10 s ($BTLAB_PROGRESS_INTERVAL seconds) instead of the bar.
"""


class _VersionAction(argparse.Action):
    """--version: ``btlab <version> (git <commit>...)``, computed only when asked."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                 help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        from btlab.store.provenance import version_line  # CLI start-up: only when asked

        print(version_line(), flush=True)
        parser.exit(0)


class _Parser(argparse.ArgumentParser):
    """argparse's parser, its usage errors (``unrecognized arguments: ...``) echoing the
    arguments with their control characters escaped (:func:`btlab.errors.shown`)."""

    def error(self, message: str) -> NoReturn:
        super().error(shown(message, lines=True))


def _parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="btlab", description="Batch experiments on backtracking search (knight's tour, "
        "N-Queens): YAML sweeps -> Ray -> Parquet.", epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action=_VersionAction,
                   help="print btlab's version and the git commit of its code, and exit")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = sub.add_parser("run", help="run a sweep; rerunning resumes what is missing",
                         epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    run.add_argument("config", help="the sweep's YAML file, e.g. configs/warnsdorff_64_starts.yaml")
    run.add_argument("overrides", nargs="*", metavar="KEY=VALUE", help=_OVERRIDES_HELP)
    run.add_argument("--out", help="results folder (default: results/<name>), or a filesystem "
                     "URI for shared storage (s3://bucket/prefix, file:///shared/dir, ...: "
                     "anything pyarrow.fs opens)")
    run.add_argument("--backend", choices=["ray", "serial"], default="ray",
                     help="ray (default: embedded local Ray, or a cluster with --address) "
                     "or serial (in this process, for debugging)")
    run.add_argument("--address", help="join this Ray cluster (HOST:PORT or auto; "
                     "default: $RAY_ADDRESS, else an embedded local Ray)")
    run.add_argument("--workers", type=_bounded("workers"),
                     help="worker processes of the local Ray (default: one per core)")
    run.add_argument("--batch-size", type=_bounded("batch_size"),
                     help="trials per Ray task (default: automatic)")
    run.add_argument("--fresh", action="store_true",
                     help="delete this sweep's earlier results (and its superseded rows) "
                     "and start over")
    run.add_argument("--no-retry-errors", action="store_true",
                     help="keep the rows of trials that ended with status error: a rerun "
                     "does not run them again (by default it does, and the new row replaces "
                     "the error row; time_limit, node_limit, backtrack_limit and restart_limit "
                     "rows are results, never re-run)")
    run.add_argument("--max-failures", type=_positive_int, metavar="N",
                     help="stop starting trials after N trials of this run ended with status "
                     "error (the finished rows are kept; a rerun resumes); default: the "
                     "config's max_failures, else no limit")
    run.add_argument("--yes", action="store_true",
                     help="run a sweep larger than the trial cap (1,000,000)")
    run.add_argument("--quiet", action="store_true",
                     help="no progress bar (and no progress lines when output is not a "
                     "terminal)")
    run.add_argument("--dashboard", action="store_true",
                     help="start the Ray dashboard with the embedded local Ray (off by default)")

    show = sub.add_parser("show", help="print the headline tables of a results folder")
    show.add_argument("results", help="a results folder, e.g. results/warnsdorff-64-starts")
    show.add_argument("--all", action="store_true",
                      help="include rows of trials that are no longer in the config last run")
    show.add_argument("--by", choices=["node"], help="node: how the trials spread over the "
                      "machines (Ray node, host) instead of the headline tables")
    _format_options(show)

    cmp = sub.add_parser("compare", help="compare two results folders trial by trial "
                         "(deterministic columns only); exit 0 when identical, 1 otherwise")
    cmp.add_argument("results_a")
    cmp.add_argument("results_b")
    cmp.add_argument("--all", action="store_true",
                     help="include rows of trials that are no longer in the config last run "
                     "into each folder")
    _compare_options(cmp)
    _format_options(cmp)

    ls = sub.add_parser("ls", help="list the sweeps under a results root: name, problem, "
                        "trials, last run, trials by status")
    ls.add_argument("root", nargs="?", default="results",
                    help="a folder of results folders (default: results)")
    _format_options(ls)

    val = sub.add_parser("validate", help="check a config (with overrides) without running it; "
                         "print its trial count", epilog=_EPILOG,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    val.add_argument("config")
    val.add_argument("overrides", nargs="*", metavar="KEY=VALUE", help=_OVERRIDES_HELP)
    val.add_argument("--print", action="store_true", dest="print_config",
                     help="write the whole config, after the overrides and with every default, "
                     "to stdout as YAML, and only that (the trial count goes to stderr); "
                     "btlab run takes it as it is")

    rep = sub.add_parser("report", help="write a self-contained HTML report of one or several "
                         "results folders (of one problem)")
    rep.add_argument("results", nargs="+",
                     help="results folders, e.g. results/warnsdorff-64-starts; several are "
                     "read together (a column source names each row's folder)")
    rep.add_argument("-o", "--output", default="report.html",
                     help="the HTML file to write (default: report.html): a new file or a "
                     "regular file to replace, never a directory, pipe, device or symbolic "
                     "link; - prints the report")
    rep.add_argument("--all", action="store_true",
                     help="include rows of trials that are no longer in the config last run "
                     "into each folder")

    prune = sub.add_parser("prune", help="delete the superseded rows kept beside a results "
                           "folder (trials no longer in the config last run); print what it "
                           "frees")
    prune.add_argument("results", help="a results folder, e.g. results/warnsdorff-64-starts")
    return p


def _positive_int(text: str) -> int:
    """argparse type of --workers and --batch-size: a whole number >= 1 (bounded by
    :func:`_bounded`)."""
    shown = text if len(text) <= 40 else f"{text[:20]}...{text[-10:]} ({len(text)} characters)"
    try:
        value = int(text) if len(text) <= 40 else None
    except ValueError:
        value = None
    if value is None:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, found {shown!r}")
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, found {value}")
    return value


def _bounded(key: str):
    """argparse type of an option whose value is a whole number from 1 to its maximum
    (:data:`btlab.execution.batching.OPTION_MAXIMA`)."""
    top = OPTION_MAXIMA[key]

    def check(text: str) -> int:
        digits = text.strip().lstrip("+")
        if len(digits) > 40 and digits.isdigit():  # too long to read as a number at all
            value = None
        else:
            value = _positive_int(text)
            if value <= top:
                return value
        shown = f"{value:,}" if value is not None else f"a number of {len(digits):,} digits"
        raise argparse.ArgumentTypeError(
            f"expected a whole number from 1 to {top:,}, found {shown}\n"
            f"  fix: give at most {top}, or leave the option out (automatic)")
    return check


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``btlab`` console script; returns the exit status."""
    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    # overrides after an option (`run CONFIG --quiet seed=7`) are left over by argparse,
    # whose positional list ends at the first option
    if extra and getattr(args, "overrides", None) is not None and not any(
            a.startswith("-") for a in extra):
        args.overrides = [*args.overrides, *extra]
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    console = _console(markup=args.command not in ("show", "compare", "report", "prune", "ls"))
    if args.command == "run":
        # a stop signal at any moment of the run, its end included (writing the last rows,
        # shutting Ray down, printing the tables), exits 130; once the status is decided,
        # it is ignored. As the program (argv None) the handlers stay until the process exits.
        with catching_signals(for_good=argv is None):
            return _main_run(args, console)
    try:
        if args.command == "show":
            return cmd_show(args, console)
        if args.command == "validate":
            return cmd_validate(args, console)
        if args.command == "compare":
            return cmd_compare(args, console)
        if args.command == "report":
            return cmd_report(args, console)
        if args.command == "prune":
            return cmd_prune(args, console)
        if args.command == "ls":
            return cmd_ls(args, console)
    except BtlabError as exc:
        _error(exc)
        return exc.exit_code
    except KeyboardInterrupt:
        _interrupted()
        return 130
    return 2


def _main_run(args, console: Console) -> int:
    """``btlab run`` within :func:`main`'s signal handlers: its exit status, whenever a
    signal comes."""
    try:
        # CLI start-up: it imports numpy and the searches (a signal there is a stop too)
        from btlab.execution.execute import pause_at

        status = cmd_run(args, console)
        settle()  # decided: a signal from now on is ignored
        pause_at("exit")
        return status
    except BtlabError as exc:
        settle()
        _error(exc)
        return exc.exit_code
    except KeyboardInterrupt:  # outside the trial loop (which handles its own): start, end
        settle()
        _interrupted()
        return 130


def _error(exc: BtlabError) -> None:
    ShownConsole(stderr=True, highlight=False).print(
        f"[bold red]btlab:[/bold red] {escape(shown(exc, lines=True))}", markup=True,
        soft_wrap=True)


def _interrupted() -> None:
    ShownConsole(stderr=True, highlight=False).print(
        "btlab: interrupted; rows already finished are on disk (run again to resume)")


def cmd_run(args, console: Console) -> int:
    """``btlab run``: :func:`btlab.api.run.sweep`, told on ``console``; the exit status."""
    from btlab.api.run import sweep  # CLI start-up: `btlab --help` imports no pandas

    outcome = sweep(args.config, *args.overrides, backend=args.backend, address=args.address,
                    out=args.out, fresh=args.fresh, workers=args.workers,
                    batch_size=args.batch_size, retry_errors=not args.no_retry_errors,
                    dashboard=args.dashboard, yes=args.yes, console=console,
                    say=console.print, progress=not args.quiet, tables=True,
                    max_failures=args.max_failures)
    if outcome.interrupted:
        console.print("interrupted: finished rows are on disk; run the same command to resume")
        return 130
    folder = str(outcome.folder)
    if outcome.has_parts:
        for line in _closing_lines(outcome.config, folder):
            console.print(line, markup=False, highlight=False, soft_wrap=True)
    for line in outcome.failures.summary(outcome.folder):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    if outcome.finding:  # the run ends with what it found
        console.print(outcome.finding, markup=False, highlight=False)
    if outcome.failed:
        console.print(f"[red]{outcome.failed} trial(s) ended with status error[/red] "
                      "(the message is in the error column)")
        return 1
    if outcome.kept_errors:
        # nothing failed in this run, but the folder holds error rows of the config's
        # trials (kept by --no-retry-errors): the same exit status `btlab show` gives
        console.print(f"[red]{outcome.kept_errors} trial(s) of this config have status "
                      "error[/red] (kept by --no-retry-errors; a rerun without it runs them "
                      "again)")
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


def cmd_validate(args, console: Console) -> int:
    """``btlab validate``: :func:`btlab.api.run.validate`, its count and five samples printed."""
    # CLI start-up: `btlab --help` imports no pandas or pydantic
    from btlab.api.run import validate
    from btlab.config.model import DEFAULT_TRIAL_CAP
    from btlab.sweep.expand import EXACT_COUNT_BLOCKS, check_blocks, plan_size

    trials = validate(args.config, *args.overrides)
    config = trials.config
    label = escape(" ".join([args.config, *args.overrides]))  # [6,6] is no rich markup
    if args.print_config:
        return _print_config(trials, label)
    planned, how = plan_size(config, DEFAULT_TRIAL_CAP)
    if planned > DEFAULT_TRIAL_CAP:
        # too large to walk: check one trial of each block, count by arithmetic
        samples = list(itertools.islice(trials, 5))
        whole = check_blocks(config)
        size = f"{planned:,}" if how == "exact" else f"{how} {planned:,}"
        console.print(f"{label}: OK -- problem {config.problem.name}, {size} trials: over "
                      f"the cap of {DEFAULT_TRIAL_CAP:,}, `btlab run` needs --yes ("
                      + ("one trial of each combination of the matrix lists was checked)"
                         if whole else f"one trial of each of the first {EXACT_COUNT_BLOCKS:,} "
                         "combinations of the matrix lists was checked)"))
    else:
        total = 0
        samples = []
        for trial in trials:
            total += 1
            if len(samples) < 5:
                samples.append(trial)
        console.print(f"{label}: OK -- problem {config.problem.name}, {total:,} trials")
    for t in samples:
        keys = {"budget_nodes": t.budget_nodes, "budget_backtracks": t.budget_backtracks,
                "budget_seconds": t.budget_seconds,
                "restarts": f"'{t.restarts.label()}'" if t.restarts is not None else None,
                "probes": t.probes,
                "estimator": f"'{t.estimator.label()}'" if t.estimator is not None else None}
        console.print(f"  {t.trial_id}  " + "  ".join(f"{k}={v}" for k, v in t.columns.items())
                      + "".join(f"  {k}={v}" for k, v in keys.items() if v is not None)
                      + f"  seed={t.seed}  repeat={t.repeat}", markup=False)
    return 0


def _print_config(trials, label: str) -> int:
    """``validate --print``: :func:`btlab.config.model.config_yaml` on stdout, the trial
    count on stderr (every trial checked, as ``validate`` checks them)."""
    from btlab.config.model import DEFAULT_TRIAL_CAP, config_yaml  # CLI start-up: as above
    from btlab.sweep.expand import plan_size  # CLI start-up: as above

    planned, how = plan_size(trials.config, DEFAULT_TRIAL_CAP)
    if planned > DEFAULT_TRIAL_CAP:
        size = f"{planned:,}" if how == "exact" else f"{how} {planned:,}"
    else:
        size = f"{sum(1 for _ in trials):,}"
    text = config_yaml(trials.config)
    sys.stdout.write(text)
    sys.stdout.flush()
    ShownConsole(stderr=True, highlight=False).print(
        f"{label}: OK -- problem {escape(trials.config.problem.name)}, {size} trials",
        soft_wrap=True)
    return 0


def cmd_show(args, console: Console) -> int:
    # CLI start-up: `btlab --help` imports no pandas or pyarrow
    from btlab.analysis.config_order import in_config_order
    from btlab.analysis.counted_rows import select_rows
    from btlab.analysis.sweeps import is_results_root  # CLI start-up: as above
    from btlab.store.folder import load_rows, newest_meta, part_files
    from btlab.views.headline import headline_tables, print_headline

    if is_results_root(args.results):  # `btlab show results`: the sweeps under it
        args.root = args.results
        return cmd_ls(args, console)
    console = _side_console(args, console)  # --format csv|json: stdout holds the data only
    folder = args.results if "://" in args.results else Path(args.results)
    partial = []
    if isinstance(folder, Path):
        from btlab.execution.split_run import Checkpoints  # CLI start-up: as above

        partial = Checkpoints(folder).partial()
    for trial_id, saved, total in partial:
        console.print(f"split trial {trial_id} cut short: {saved:,} of {total:,} subtrees "
                      "saved, kept by the next run", markup=False)
    if partial and not part_files(folder):
        console.print(f"{folder}: no finished trial yet; run the same command to resume",
                      markup=False)
        return 0
    df = in_config_order(load_rows(folder, superseded=args.all), folder)
    meta = newest_meta(folder)
    cfg = json.loads(meta.get("btlab.config", "{}"))
    # --by node: every row (where trials ran, whichever config they belong to)
    notes: list[str] = []
    if args.by != "node":
        chosen = select_rows(folder, df, all_rows=args.all)
        df, notes = chosen.rows, chosen.notes
        _show_finding(df, cfg, console)
    console.print(f"{folder}: {len(df):,} trials of {cfg.get('name', '?')} "
                  f"({df['run_id'].nunique()} run(s))", markup=False)
    overrides = json.loads(meta.get("btlab.overrides", "[]"))
    if overrides:
        console.print("overrides of the config last run: " + " ".join(overrides), markup=False)
    if args.by == "node":
        from btlab.views.headline import print_by_node  # CLI start-up: as above
        if args.format != "table":
            return _print_tables(headline_tables(df, by_node=True), args)
        print_by_node(df, console)
        return 0
    for note in notes:
        console.print(note, markup=False)
    if args.format != "table":
        _print_tables(headline_tables(df), args)
    else:
        print_headline(df, console)
    return 1 if (df["status"] == "error").any() else 0


def _show_finding(df, cfg: dict, console: Console) -> None:
    """``btlab show`` begins with the finding (:func:`btlab.views.findings.folder_finding`)."""
    from btlab.views.findings import folder_finding  # CLI start-up: it imports pandas

    text = folder_finding(df, config=cfg)
    if text:
        console.print(text, markup=False, highlight=False)


def cmd_compare(args, console: Console) -> int:
    """``btlab compare``: :func:`btlab.analysis.folder_diff.compare`, described; 0: identical."""
    # CLI start-up: `btlab --help` imports no pandas
    from btlab.analysis.folder_diff import compare, describe

    result = compare(args.results_a, args.results_b, all_rows=args.all, timings=args.timings,
                     threshold=args.threshold)
    if args.format != "table":
        from btlab.views.tables import compare_tables  # CLI start-up: as above

        _print_tables(compare_tables(result), args)
    else:
        console.print(describe(result, args.results_a, args.results_b), markup=False,
                      soft_wrap=True)  # a trial's line whole: its parameters as validate's
    return 0 if result.passed else 1


def cmd_report(args, console: Console) -> int:
    """``btlab report``: :func:`btlab.views.report.page.report`, written or printed (``-o -``)."""
    # CLI start-up: `btlab --help` imports no pandas or matplotlib
    from btlab.views.report.page import report

    if args.output == "-":
        return _print_report(report(args.results, None, all_rows=args.all))
    out = report(args.results, args.output, all_rows=args.all)
    console.print(f"wrote {out} ({out.stat().st_size / 1024:,.0f} KiB): one self-contained HTML "
                  "file, open it in any browser" + _cases_csv_note(out), markup=False,
                  soft_wrap=True)
    return 0


def cmd_prune(args, console: Console) -> int:
    """``btlab prune``: :func:`btlab.store.superseded.prune`, what it freed told; 0."""
    # CLI start-up: `btlab --help` imports no pyarrow
    from btlab.store.superseded import prune

    freed = prune(args.results)
    if not freed.files:
        console.print(f"{args.results}: no superseded rows to delete", markup=False)
    else:
        console.print(f"{args.results}: deleted {freed.rows:,} superseded row(s) in "
                      f"{freed.files:,} file(s), freeing {freed.bytes:,} bytes "
                      f"({freed.where})", markup=False)
    return 0


def _cases_csv_note(out: Path) -> str:
    """``; and report.csv (...)`` when the report wrote its per-start table beside it."""
    from btlab.views.report.page import cases_csv_path  # CLI start-up: as cmd_report

    csv = cases_csv_path(out)
    # written after the HTML, or not this time (a report without cases): then older
    if not csv.exists() or csv.stat().st_mtime_ns < out.stat().st_mtime_ns:
        return ""
    return f"; and {csv}: the per-start table (one row per group and start) as CSV"


def _print_report(text: str) -> int:
    """``report -o -``: the HTML on standard output (a closed pipe ends it quietly).

    Raises:
        WriteError: standard output is a full disk or failed (exit 3).
    """
    try:
        sys.stdout.write(shown(text, lines=True))  # a stored ESC is text on the terminal too
        sys.stdout.flush()
    except OSError as exc:
        if exc.errno == errno.EPIPE:  # `btlab report ... -o - | head`: the reader is gone
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0
        raise WriteError(f"standard output: could not write the report: {exc.strerror}\n"
                         "  fix: free space on that disk, or give -o a file") from None
    return 0


def _format_options(parser: argparse.ArgumentParser) -> None:
    """--format and --table of show, compare and ls."""
    parser.add_argument("--format", choices=["table", "csv", "json"], default="table",
                        help="table (default: as printed for reading), json (every table as "
                        "one object {title: [row objects]}) or csv (one table, see --table); "
                        "numbers as numbers, lower bounds as text >=N, - as empty")
    parser.add_argument("--table", metavar="NAME", help="with --format csv: the table to "
                        "write, by its title (or a word only it contains) or number from 1 "
                        "(default: the first)")


def _compare_options(parser: argparse.ArgumentParser) -> None:
    """--timings and --threshold of compare."""
    parser.add_argument("--timings", action="store_true",
                        help="also compare CPU time: per group of the headline tables, the "
                        "median cpu_ns ratio B/A with its spread over the repeats; exit 1 "
                        "when a group is slower than --threshold or a counter differs")
    parser.add_argument("--threshold", type=float, default=1.1, metavar="RATIO",
                        help="with --timings: the ratio B/A above which a group is slower "
                        "(default 1.1: 10 %% more CPU time)")


def _side_console(args, console: Console) -> Console:
    """Where the lines around the tables go: ``console``, or standard error when standard
    output holds ``--format csv|json`` data."""
    if getattr(args, "format", "table") == "table":
        return console
    return ShownConsole(stderr=True, highlight=False, markup=False, soft_wrap=True)


def _print_tables(tables, args) -> int:
    """``--format csv|json``: the tables written to standard output; 0."""
    from btlab.views.tables import format_tables  # CLI start-up: `btlab --help` imports no pandas

    sys.stdout.write(format_tables(tables, args.format, args.table))
    sys.stdout.flush()
    return 0


def cmd_ls(args, console: Console) -> int:
    """``btlab ls``: :func:`btlab.analysis.sweeps.list_sweeps`, printed; 0."""
    # CLI start-up: `btlab --help` imports no pandas
    from btlab.analysis.sweeps import list_sweeps
    from btlab.views.tables import sweeps_table

    sweeps = list_sweeps(args.root)
    title = f"sweeps under {args.root}"
    if args.format != "table":
        return _print_tables([(title, sweeps)], args)
    if sweeps.empty:
        console.print(f"{args.root}: no results folder in it (btlab run writes "
                      "results/<name>)", markup=False)
        return 0
    console.print(sweeps_table(sweeps, title))
    for name, note in zip(sweeps["name"], sweeps["note"]):
        if isinstance(note, str):
            console.print(f"{name}: {note}", markup=False, soft_wrap=True)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
