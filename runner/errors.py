"""Every error btlab raises on purpose, in one place.

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
"""

from __future__ import annotations

from dataclasses import dataclass


class BtlabError(Exception):
    """Base of btlab's own errors. ``exit_code`` is what the CLI exits with."""

    exit_code = 2


def format_key_path(path: tuple[str | int, ...]) -> str:
    """Render a key path like ``('matrix', 'heuristic', 2)`` as ``matrix.heuristic[2]``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
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
        where = self.file
        if self.where:
            where += f", {self.where}"
        elif self.line is not None:
            where += f":{self.line}:{self.column}"
        msg = (f"{where}: error at {format_key_path(self.key_path)}\n"
               f"  expected: {self.expected}\n"
               f"  found:    {self.found}")
        if self.fix:
            msg += f"\n  fix:      {self.fix}"
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
