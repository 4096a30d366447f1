"""Failing trials, told as they happen and listed again when the run ends.

``btlab run`` hands every row with status ``error`` to :class:`FailureLog`:
one line is printed at once (above the progress bar, or between the plain
progress lines of a log) with the trial's id, its parameters and the first
line of its error (the first :data:`LIVE` failures of a run; the others are
counted)::

    trial 3fa2c1d0e9b84a17 failed (n=15, strategy=functional, mode=count, repeat=0):
      MemoryError: out of memory (the trial's data was freed; the run goes on)

and at the end of the run the failures are listed again, at most
:data:`LISTED` of them with the count of the others and where they are
(``btlab show``, the ``error`` column).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

#: Failures listed at the end of a run; the others are counted.
LISTED = 20

#: Failures printed as they happen; after these, one line says that the others are
#: only counted (by the progress line, and at the end), so that a sweep whose every
#: trial fails does not bury its progress under a line per trial.
LIVE = 50


#: Characters of a failure's first line that are printed; the rest is cut with ``...``.
LINE_CHARS = 300

_CONTROL = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7f)}


def first_line(error: Any) -> str:
    """The first non-empty line of an error message (``-`` when there is none), safe to print.

    At most :data:`LINE_CHARS` characters (a longer one ends in ``... (N characters)``);
    control characters (NUL, ESC, ...) are shown escaped (``\\x00``), so that a message
    cannot clear or garble the terminal. Only the start of the message is scanned.
    """
    text = str(error or "")[:100_000]
    for line in text.splitlines():
        line = line.strip()
        if not line.translate(_CONTROL).replace("\\x00", "").strip():
            continue
        line = line.translate(_CONTROL)
        if len(line) > LINE_CHARS:
            line = f"{line[:LINE_CHARS]}... ({len(line):,} characters)"
        return line
    return "-"


class FailureLog:
    """Prints each failing trial as it comes and keeps the first :data:`LISTED` for the end.

    Args:
        parameters: the parameter columns that tell trials apart (the problem's
            columns), printed ``name=value`` in this order.
        write: prints one line, literally (no markup).
    """

    def __init__(self, parameters: Sequence[str], write: Callable[[str], None]):
        self.parameters = list(parameters)
        self.write = write
        self.count = 0
        self.listed: list[str] = []

    def describe(self, row: dict[str, Any]) -> str:
        """``trial ID (name=value, ..., repeat=R)`` of a row."""
        values = [f"{name}={row[name]}" for name in self.parameters if name in row]
        for name in ("seed", "repeat"):
            if row.get(name) is not None:
                values.append(f"{name}={row[name]}")
        return f"trial {row.get('trial_id')} ({', '.join(values)})"

    def seen(self, row: dict[str, Any]) -> bool:
        """Take one row; print and keep it when its status is ``error``. True if it was one."""
        if row.get("status") != "error":
            return False
        self.count += 1
        if self.count > LIVE and len(self.listed) >= LISTED:
            return True
        line = f"{self.describe(row)}: {first_line(row.get('error'))}"
        if self.count <= LIVE:
            self.write(f"failed: {line}")
        if self.count == LIVE:
            self.write(f"failed: {LIVE} trials so far; further failures are counted (the "
                       "progress line) and listed when the run ends, not printed one by one")
        if len(self.listed) < LISTED:
            self.listed.append(line)
        return True

    def summary(self, folder: Any) -> list[str]:
        """The lines listing this run's failures (none when there were none)."""
        if not self.count:
            return []
        lines = ["the trials that failed in this run:"]
        lines += [f"  {line}" for line in self.listed]
        more = self.count - len(self.listed)
        if more:
            lines.append(f"  ... and {more:,} more")
        lines.append(f"  (every message in full: the error column of {folder}; "
                     f"`btlab show {folder}` counts them)")
        return lines
