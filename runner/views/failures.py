"""Failing trials, told as they happen and summed up when the run ends.

``btlab run`` hands every row with status ``error`` to :class:`FailureLog`.
The first row of each distinct message (the first line of its error) is printed
at once (above the progress bar, or between the plain progress lines of a log)
with the trial's id, its parameters and that line (the first :data:`LIVE`
distinct messages of a run; the others are counted)::

    failed: trial 3fa2c1d0e9b84a17 (n=15, strategy=functional, mode=count, repeat=0):
      MemoryError: out of memory (the trial's data was freed; the run goes on)

Identical messages are folded: a plug-in that fails every trial prints one line
as it happens, and at the end one line per distinct message with its count and
the first trial that gave it (at most :data:`LISTED` messages; the others are
counted), and where every message is (``btlab show``, the ``error`` column).

With a failure limit (``--max-failures N``, Ray Tune's ``max_failures``) the log
also gates the trials: :meth:`FailureLog.until` stops handing them out once N rows
of this run have status ``error``, and the summary prints the first error in full.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator, Sequence, TypeVar

from btlab.errors import shown
from btlab.experiments.estimators import KNUTH

#: Distinct messages listed at the end of a run; the others are counted.
LISTED = 20

#: Distinct messages printed as they happen; after these, one line says that the others
#: are only counted (by the progress line, and at the end), so that a sweep whose
#: trials fail in many ways does not bury its progress under a line per trial.
LIVE = 50

T = TypeVar("T")


#: Characters of a failure's first line that are printed; the rest is cut with ``...``.
LINE_CHARS = 300



def first_line(error: Any) -> str:
    """The first non-empty line of an error message (``-`` when there is none), safe to print.

    At most :data:`LINE_CHARS` characters (a longer one ends in ``... (N characters)``);
    control characters (NUL, ESC, ...) are shown escaped (``\\x00``), so that a message
    cannot clear or garble the terminal. Only the start of the message is scanned.
    """
    text = str(error or "")[:100_000]
    for line in text.splitlines():
        line = line.strip()
        if not shown(line).replace("\\x00", "").strip():
            continue
        line = shown(line)
        if len(line) > LINE_CHARS:
            line = f"{line[:LINE_CHARS]}... ({len(line):,} characters)"
        return line
    return "-"


#: Distinct messages a run keeps (each with its count); the others are counted together,
#: so that the driver's memory stays flat however many trials fail in how many ways.
KEPT = 1000


def _escaped(text: str) -> list[str]:
    """The lines of ``text``, control characters shown escaped (as :func:`first_line`)."""
    return [shown(line.rstrip()) for line in text.splitlines() if line.strip()]


class FailureLog:
    """Prints the first failing trial of each distinct message as it comes, counts them all.

    Args:
        parameters: the parameter columns that tell trials apart (the problem's
            columns), printed ``name=value`` in this order.
        write: prints one line, literally (no markup).
        limit: the most rows with status ``error`` this run may give before it stops
            starting trials (:meth:`until`); None: no limit.

    Attributes:
        count: rows with status ``error`` seen.
        stopped: :meth:`until` stopped handing out trials at the limit.
        not_started: trials the run did not start because of the limit (set by the
            runner, for the summary).
    """

    def __init__(self, parameters: Sequence[str], write: Callable[[str], None],
                 limit: int | None = None):
        self.parameters = list(parameters)
        self.write = write
        self.limit = limit
        self.count = 0
        self.stopped = False
        self.not_started = 0
        #: first line of a message -> [rows with it, the first of them described]
        self.messages: dict[str, list[Any]] = {}
        self.unkept = 0  # rows whose message was not kept (over KEPT distinct ones)
        self.first: tuple[str, str] | None = None  # (trial described, its error in full)

    def describe(self, row: dict[str, Any]) -> str:
        """``trial ID (name=value, ..., repeat=R)`` of a row (with its estimator, when it is not
        ``knuth``)."""
        values = [f"{name}={shown(row[name])}" for name in self.parameters if name in row]
        estimator = row.get("estimator")
        if isinstance(estimator, str) and estimator != KNUTH:  # tells two estimates apart
            values.append(f"estimator='{shown(estimator)}'")
        for name in ("seed", "repeat"):
            if row.get(name) is not None:
                values.append(f"{name}={row[name]}")
        return f"trial {shown(row.get('trial_id'))} ({', '.join(values)})"

    def seen(self, row: dict[str, Any]) -> bool:
        """Take one row; count it when its status is ``error``, and print it when its message
        is new. True if it was an error row."""
        if row.get("status") != "error":
            return False
        self.count += 1
        line = first_line(row.get("error"))
        if self.first is None:
            self.first = (self.describe(row), str(row.get("error") or "-")[:100_000])
        entry = self.messages.get(line)
        if entry is not None:
            entry[0] += 1
            return True
        if len(self.messages) >= KEPT:
            self.unkept += 1
            return True
        self.messages[line] = [1, self.describe(row)]
        if len(self.messages) <= LIVE:
            self.write(f"failed: {self.messages[line][1]}: {line}")
        if len(self.messages) == LIVE:
            self.write(f"failed: {LIVE} different messages so far; further ones are counted "
                       "(the progress line) and summed up when the run ends, not printed one "
                       "by one")
        return True

    def until(self, trials: Iterable[T]) -> Iterator[T]:
        """``trials``, handed out while this run has given fewer than ``limit`` error rows;
        then none (and :attr:`stopped` is set). All of them without a limit."""
        for trial in trials:
            if self.limit is not None and self.count >= self.limit:
                self.stopped = True
                return
            yield trial

    def summary(self, folder: Any) -> list[str]:
        """The lines summing up this run's failures (none when there were none): with the
        limit reached, the first error in full, then one line per distinct message."""
        if not self.count:
            return []
        lines: list[str] = []
        counts = {line: entry[0] for line, entry in self.messages.items()}
        if self.stopped and self.first is not None:
            lines.append(f"stopped after {self.count:,} failed trial(s) (max_failures "
                         f"{self.limit:,}): {self.not_started:,} trial(s) not started; the "
                         "finished rows are kept, run the same command to resume")
            lines.append(f"the first error, in full ({self.first[0]}):")
            lines += [f"  {line}" for line in _escaped(self.first[1])]
            first = first_line(self.first[1])
            if first in counts:
                counts[first] -= 1
            counts = {line: n for line, n in counts.items() if n}
            same = first if first in counts else None
            rest = self.count - 1
            if not rest:
                return lines + self._where(folder)
            lines.append(f"and {rest:,} more failed trial(s):")
        else:
            same = None
            lines.append(f"the trials that failed in this run ({self.count:,}):")
        listed = list(counts.items())[:LISTED]
        for line, n in listed:
            described = self.messages[line][1]
            if line == same:  # the first error's message, printed in full above
                lines.append(f"  {n:,} trial(s): the same message as the first")
                continue
            lines.append(f"  {described}: {line}" if n == 1 else
                         f"  {n:,} trials: {line} (the first: {described})")
        more = sum(counts.values()) - sum(n for _, n in listed) + self.unkept
        if more:
            kinds = len(counts) - len(listed)
            lines.append(f"  ... and {more:,} more" + (f" with {kinds:,} other message(s)"
                                                      if kinds and not self.unkept else ""))
        return lines + self._where(folder)

    @staticmethod
    def _where(folder: Any) -> list[str]:
        folder = shown(folder)
        return [f"  (every message in full: the error column of {folder}; "
                f"`btlab show {folder}` counts them)"]
