"""Every error btlab raises on purpose, in one place.

* :func:`shown` -- user text made safe to echo (control characters escaped).
* :class:`BtlabError` -- the base; the CLI prints its message and exits with
  its ``exit_code`` (2: bad input, nothing was run or written).
* :class:`ConfigError` -- a bad config: carries the file, the line and column,
  the key path, what was expected, what was found and how to fix it.
* :class:`ResultsError` -- an output folder that cannot be used, or a results
  folder that cannot be read (a damaged part file, rows of another config).
* :class:`StoreWriteError` -- results could not be written (disk full, quota,
  I/O error, read-only file system): exit status 3, rows written before are intact.
* :class:`BackendError` -- Ray could not be started or joined.
* :class:`TrialError` -- one trial failed; carries the trial id.
* :class:`OutputPathError` -- an output file path btlab will not write to (exit 2).
* :class:`WriteError` -- an output file could not be written: disk full, I/O error
  (exit 3; nothing left behind).
* an :class:`ImportError` naming the new module for an import of a module by its
  btlab 0.1 name (:func:`new_name`, :func:`refuse_old_name`; see "Old module names" below).

Old module names. btlab 0.1 installed two top-level packages, ``runner`` and
``experiments``; from 0.2 on there is one import name, ``btlab`` (``runner/``
installs as ``btlab``, ``experiments/`` as ``btlab.experiments``). A plug-in
written against an old path gets an error naming the new one:

* wherever btlab runs, :func:`new_name` turns an old module name into the new one
  (the plug-in loader, :mod:`btlab.problems.plugins`, says it in its error);
* in a checkout's root, where the folders ``runner/`` and ``experiments/`` are on
  ``sys.path`` under their own names, their ``__init__.py`` calls :func:`refuse_old_name`:
  no module of the folder is ever imported a second time under the old name, and
  ``import runner.spec`` raises :class:`ImportError` naming ``btlab.problems.spec``.

This module imports nothing of btlab, so every room (``btlab.experiments`` too) may use it.
"""

from __future__ import annotations

import importlib.abc
import sys
from dataclasses import dataclass
from typing import Any


class BtlabError(Exception):
    """Base of btlab's own errors. ``exit_code`` is what the CLI exits with."""

    exit_code = 2


#: Characters never written raw to a terminal: the C0 controls (NUL, BEL, BS, ESC, CR,
#: ...), DEL, the C1 controls (U+0080-U+009F, U+009B is an escape of its own) and the
#: bidirectional overrides and isolates (U+202A-U+202E, U+2066-U+2069), which reorder
#: the text shown after them.
_UNSHOWN = {c: f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"
            for c in (*range(0x20), *range(0x7f, 0xa0), *range(0x202a, 0x202f),
                      *range(0x2066, 0x206a))}
_UNSHOWN_LINES = {c: e for c, e in _UNSHOWN.items() if c != 0x0a}


def shown(text: object, lines: bool = False) -> str:
    """``text`` safe to echo to a terminal: every control character written escaped.

    The one function every echo of user text goes through (config values, keys,
    override texts, file and folder names, plug-in names, a part's metadata, a
    plug-in's error messages): ESC, NUL, CR, DEL, the C1 controls and the
    bidirectional controls are shown as ``\\x1b``, ``\\x00``, ``\\u202e``, so that
    no text can colour, clear, rewrite or reorder what the terminal shows. Printable
    text, backslashes included, is unchanged (``shown(shown(t)) == shown(t)``).

    Args:
        text: what to show (``str()`` of it).
        lines: keep newlines (a message of several lines); by default a newline is
            escaped too (``\\x0a``), so that one line of text stays one line.
    """
    return str(text).translate(_UNSHOWN_LINES if lines else _UNSHOWN)


def format_key_path(path: tuple[str | int, ...]) -> str:
    """Render a key path like ``('matrix', 'heuristic', 2)`` as ``matrix.heuristic[2]``
    (control characters of a key escaped, :func:`shown`)."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + shown(part)
    return out or "(top level)"


@dataclass
class ConfigError(BtlabError):
    """A config that cannot be run.

    Attributes:
        file: path of the YAML file (or ``<string>``).
        line, column: 1-based position of the offending key or value, or None.
        key_path: the keys from the top of the file down to the problem.
        expected: what would have been accepted.
        found: what the file holds there.
        fix: how to put it right.
        where: set when a command-line override put the value there: the override,
            e.g. ``override 2 (budget.nodes=abc)``, named instead of a line.
    """

    file: str
    line: int | None
    column: int | None
    key_path: tuple[str | int, ...]
    expected: str
    found: str
    fix: str = ""
    where: str = ""

    def __post_init__(self) -> None:
        super().__init__(str(self))

    def __str__(self) -> str:
        # every part may echo user text (an override, a file name, a key): shown escaped
        where = shown(self.file)
        if self.where:
            where += f", {shown(self.where)}"
        elif self.line is not None:
            where += f":{self.line}:{self.column}"
        msg = (f"{where}: error at {format_key_path(self.key_path)}\n"
               f"  expected: {shown(self.expected, lines=True)}\n"
               f"  found:    {shown(self.found, lines=True)}")
        if self.fix:
            msg += f"\n  fix:      {shown(self.fix, lines=True)}"
        return msg


class ResultsError(BtlabError):
    """An output folder that cannot be written to, or holds incompatible or damaged results."""


class StoreWriteError(ResultsError):
    """Writing results failed part-way (no space left, quota, I/O error, read-only file system).

    Exit status 3: the part files written before are whole and intact; the rows
    that were not written belong to trials a rerun of the same command runs again.
    """

    exit_code = 3


class BackendError(BtlabError):
    """Ray could not be started or joined (a bad ``--address``, a broken install)."""


class TrialError(BtlabError):
    """A trial failed while running.

    Attributes:
        trial_id: the failing trial's id.
    """

    exit_code = 1

    def __init__(self, trial_id: str, message: str):
        super().__init__(f"trial {trial_id}: {message}")
        self.trial_id = trial_id


class OutputPathError(BtlabError):
    """An output file path that btlab will not write: a directory, a FIFO, a device, a
    socket, a symbolic link, or a place that cannot be created or is not writable
    (exit status 2: nothing was written)."""


class WriteError(BtlabError):
    """An output file that could not be written: disk full, quota, an I/O error.

    ``exit_code`` 3. Nothing is left behind: the temporary is removed and the
    file that was there before, if any, is unchanged.
    """

    exit_code = 3


# ------------------------------------------------------------------ old module names
#: Old module name -> new module name, for every module that moved.
OLD_NAMES: dict[str, str] = {
    "experiments.amb": "btlab.experiments.amb",
    "experiments.checker": "btlab.experiments.checker",
    "experiments.checker_fast": "btlab.experiments.checker_fast",
    "experiments.compiled": "btlab.experiments.compiled",
    "experiments.compiled._cache": "btlab.experiments.compiled._cache",
    "experiments.compiled._driver": "btlab.experiments.compiled._driver",
    "experiments.compiled.estimate_kernel": "btlab.experiments.compiled.estimate_kernel",
    "experiments.compiled.knights_fast": "btlab.experiments.compiled.knights.fast",
    "experiments.compiled.knights_kernel": "btlab.experiments.compiled.knights.kernel",
    "experiments.compiled.knights_random64": "btlab.experiments.compiled.knights.random64",
    "experiments.compiled.knights_shuffle64": "btlab.experiments.compiled.knights.shuffle64",
    "experiments.compiled.knights_tables": "btlab.experiments.compiled.knights.tables",
    "experiments.compiled.knights_ties64": "btlab.experiments.compiled.knights.ties64",
    "experiments.compiled.knights_wide": "btlab.experiments.compiled.knights.wide",
    "experiments.compiled.knights_widekeyed": "btlab.experiments.compiled.knights.widekeyed",
    "experiments.compiled.queens_kernel": "btlab.experiments.compiled.queens_kernel",
    "experiments.core": "btlab.experiments.core",
    "experiments.estimate": "btlab.experiments.estimate",
    "experiments.knights": "btlab.experiments.knights.solve",
    "experiments.knights_amb": "btlab.experiments.knights.amb",
    "experiments.knights_board": "btlab.experiments.knights.ordering",
    "experiments.knights_geometry": "btlab.experiments.knights.board",
    "experiments.knights_plugin": "btlab.experiments.knights.user_rules",
    "experiments.queens": "btlab.experiments.queens.solve",
    "experiments.queens_base": "btlab.experiments.queens.symmetry",
    "experiments.queens_bitmask": "btlab.experiments.queens.bitmask",
    "experiments.queens_construct": "btlab.experiments.queens.construct",
    "experiments.queens_enumerate": "btlab.experiments.queens.enumerate",
    "experiments.queens_search": "btlab.experiments.queens.backtrack",
    "experiments.registry": "btlab.experiments.registry",
    "experiments.split": "btlab.experiments.split.subtrees",
    "experiments.split_base": "btlab.experiments.split.base",
    "experiments.split_knights": "btlab.experiments.split.knights",
    "experiments.split_queens": "btlab.experiments.split.queens",
    "runner.__main__": "btlab.__main__",
    "runner.analysis": "btlab.analysis",
    "runner.backends": "btlab.execution.backends",
    "runner.batching": "btlab.execution.batching",
    "runner.board_plots": "btlab.views.plots.boards",
    "runner.budgets": "btlab.config.budgets",
    "runner.censoring": "btlab.problems.censoring",
    "runner.checkpoints": "btlab.store.checkpoints",
    "runner.cli": "btlab.cli.main",
    "runner.compare": "btlab.analysis.folder_diff",
    "runner.config": "btlab.config.model",
    "runner.config_order": "btlab.analysis.config_order",
    "runner.docs_tables": "btlab.views.docs_tables",
    "runner.errors": "btlab.errors",
    "runner.estimate_table": "btlab.views.estimate_table",
    "runner.exclude_values": "btlab.sweep.exclude",
    "runner.execute": "btlab.execution.execute",
    "runner.failures": "btlab.views.failures",
    "runner.figures": "btlab.views.plots.figure_files",
    "runner.frames": "btlab.analysis.columns",
    "runner.headline_rows": "btlab.views.headline_rows",
    "runner.html": "btlab.views.report.html",
    "runner.interrupts": "btlab.execution.interrupts",
    "runner.matrix": "btlab.sweep.matrix",
    "runner.outfile": "btlab.views.outfile",
    "runner.overrides": "btlab.config.overrides",
    "runner.pair_keys": "btlab.analysis.search_keys",
    "runner.pairing": "btlab.analysis.pairing",
    "runner.plots": "btlab.views.plots",
    "runner.plugins": "btlab.problems.plugins",
    "runner.problems": "btlab.problems",
    "runner.problems.knights_tour": "btlab.problems.knights_tour",
    "runner.problems.knights_tour.views": "btlab.problems.knights_tour.views",
    "runner.problems.n_queens": "btlab.problems.n_queens",
    "runner.problems.n_queens.views": "btlab.problems.n_queens.views",
    "runner.progress": "btlab.views.progress",
    "runner.provenance": "btlab.store.provenance",
    "runner.rate_plots": "btlab.views.plots.rates",
    "runner.rates": "btlab.analysis.rates",
    "runner.ray_auth": "btlab.execution.ray_auth",
    "runner.ray_backend": "btlab.execution.ray_backend",
    "runner.report": "btlab.views.report.page",
    "runner.report_cases": "btlab.views.report.cases",
    "runner.report_folders": "btlab.views.report.folders",
    "runner.report_pairs": "btlab.views.report.pairs",
    "runner.report_survival": "btlab.views.report.survival",
    "runner.restarts": "btlab.config.restarts",
    "runner.run_command": "btlab.api.run",
    "runner.schema": "btlab.store.schema",
    "runner.seeds": "btlab.config.seeds",
    "runner.selection": "btlab.analysis.counted_rows",
    "runner.spec": "btlab.problems.spec",
    "runner.split_runner": "btlab.execution.split_run",
    "runner.split_state": "btlab.execution.split_state",
    "runner.store": "btlab.store.folder",
    "runner.store_check": "btlab.store.check",
    "runner.store_fix": "btlab.store.repair",
    "runner.store_io": "btlab.store.writes",
    "runner.store_lock": "btlab.store.lock",
    "runner.store_read": "btlab.store.read",
    "runner.summary": "btlab.views.headline",
    "runner.survival": "btlab.analysis.kaplan_meier",
    "runner.survival_plots": "btlab.views.plots.survival",
    "runner.sweep": "btlab.sweep.expand",
    "runner.tables": "btlab.views.tables",
    "runner.trend_plots": "btlab.views.plots.trends",
    "runner.trial": "btlab.sweep.trial",
    "runner.trial_ids": "btlab.sweep.trial_ids",
    "runner.trial_keys": "btlab.config.trial_keys",
    "runner.value_messages": "btlab.config.messages",
    "runner.yaml_source": "btlab.config.yaml_positions",
}


_TOPS = {"runner": "btlab", "experiments": "btlab.experiments"}


def new_name(old: str) -> str | None:
    """The new name of module ``old`` (``runner.spec`` -> ``btlab.problems.spec``), or None.

    A name below a moved module keeps its tail (``runner.spec.ProblemSpec`` ->
    ``btlab.problems.spec.ProblemSpec``); ``runner`` and ``experiments`` themselves
    map to ``btlab`` and ``btlab.experiments``.
    """
    parts = old.split(".")
    for i in range(len(parts), 0, -1):
        head = ".".join(parts[:i])
        new = OLD_NAMES.get(head) or _TOPS.get(head)
        if new is not None:
            return ".".join([new, *parts[i:]])
    return None


def message(old: str) -> str:
    """The error text for an import of the old module ``old``."""
    new = new_name(old) or ("btlab" if old.split(".")[0] == "runner" else "btlab.experiments")
    return (f"{old} is btlab's old module name: since btlab 0.2 it is {new}\n"
            f"  fix: import {new} (the map of btlab's modules: docs/architecture.md)")


class _OldNames(importlib.abc.MetaPathFinder):
    """Refuses every ``runner.*`` / ``experiments.*`` import with the new name."""

    def __init__(self, top: str) -> None:
        self.top = top

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        if fullname.startswith(self.top + "."):
            # ImportError, not ModuleNotFoundError: ``from runner import x`` would turn
            # the latter into a bare "cannot import name 'x'"
            raise ImportError(message(fullname), name=fullname)
        return None


def refuse_old_name(module: Any) -> None:
    """Make ``module`` (a checkout folder imported as ``runner`` or ``experiments``) a stub.

    Its ``__path__`` empties, so none of the folder's modules load under the old
    name; importing a submodule raises :class:`ImportError` naming its new
    name, and an attribute of the stub raises :class:`AttributeError` likewise.
    """
    top = module.__name__
    module.__path__ = []
    if not any(isinstance(f, _OldNames) and f.top == top for f in sys.meta_path):
        sys.meta_path.insert(0, _OldNames(top))

    def __getattr__(name: str) -> Any:
        raise AttributeError(message(f"{top}.{name}"))

    module.__getattr__ = __getattr__
