"""Checkpoints of split trials: finished subtree results saved as they arrive, for resume.

Every finished subtree result of a split trial is appended, as it arrives, to
``split/<trial_id>.jsonl`` in the results folder's hidden work folder
(``<parent>/.<name>.btlab/``, :func:`btlab.store.read.work_dir`: outside the
results folder, which holds Parquet files only) (one JSON line per task,
flushed at once; a line cut short by a kill is ignored). A driver killed
during a split trial resumes it without re-running the subtrees already
finished, as long as the plan is the same (same parameters, depth and budget;
a header line holds its fingerprint, :func:`plan_fingerprint`). The file is
deleted once the trial's row is on disk. Results stopped by a time budget are
not saved (they depend on the clock).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, BinaryIO, Container

from btlab.experiments.core import SearchResult, Status
from btlab.experiments.split.subtrees import SplitPlan
from btlab.store.location import work_dir

#: Name of the checkpoint folder inside a results folder's work folder.
CHECKPOINT_DIR = "split"
#: Where older btlab versions kept it: inside the results folder (moved out by a run).
LEGACY_CHECKPOINT_DIR = ".split"


def plan_fingerprint(plan: SplitPlan, max_nodes: int | None) -> str:
    """A digest of everything a saved subtree result depends on (hex, 32 chars)."""
    text = json.dumps([plan.problem, sorted((k, repr(v)) for k, v in plan.params.items()),
                       plan.depth, max_nodes, plan.tasks], separators=(",", ":"))
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def _encode(index: int, r: SearchResult) -> str:
    return json.dumps({"i": index, "status": r.status.value, "nodes": r.nodes,
                       "backtracks": r.backtracks, "dead_ends": r.dead_ends,
                       "checks": r.checks, "solutions": r.solutions, "max_depth": r.max_depth,
                       "solution": list(r.solution) if r.solution is not None else None,
                       "all_solutions": r.extra.get("all_solutions")},
                      separators=(",", ":")) + "\n"


def _decode(line: dict[str, Any]) -> tuple[int, SearchResult]:
    extra = {} if line["all_solutions"] is None else {"all_solutions": line["all_solutions"]}
    sol = line["solution"]
    return line["i"], SearchResult(Status(line["status"]), line["nodes"], line["backtracks"],
                                   line["dead_ends"], line["checks"], line["solutions"],
                                   line["max_depth"], tuple(sol) if sol is not None else None,
                                   extra)


def _read_checkpoint(data: bytes) -> tuple[dict | None, dict[int, SearchResult], int]:
    """Parse a checkpoint file: (header or None, results by task, bytes of whole lines).

    Reading stops at the first line that is not whole (cut short by a kill)."""
    header: dict | None = None
    results: dict[int, SearchResult] = {}
    good = 0
    lines = data.split(b"\n")
    for k, raw in enumerate(lines[:-1]):  # the part after the last newline is cut short
        try:
            line = json.loads(raw)
            if k == 0:
                header = line
            else:
                i, r = _decode(line)
                results[i] = r
        except (ValueError, KeyError, TypeError, AttributeError):
            break
        good += len(raw) + 1
    return header, results, good


class TrialCheckpoint:
    """The saved subtree results of one split trial: an append-only JSON-lines file.

    The first line is ``{"plan": <fingerprint>, "tasks": <count>}``; each
    further line one finished task's result (a later line for the same task
    wins: a re-run under the budget left). Lines are flushed as written, so a
    killed driver loses at most the line it was writing, which the next read
    drops (and cuts off before appending).

    Args:
        path: the file (its folder is created on the first write).
        plan, max_nodes: the plan and the search's node budget; results
            saved for another plan are discarded.
    """

    def __init__(self, path: Path, plan: SplitPlan, max_nodes: int | None):
        self.path = path
        self.fingerprint = plan_fingerprint(plan, max_nodes)
        self.n_tasks = len(plan.tasks)
        self._file: BinaryIO | None = None
        self.loaded: dict[int, SearchResult] = {}
        self._good_bytes = 0
        #: the error that stopped saving (None while saving works)
        self.failed: OSError | None = None
        self._read()

    def _read(self) -> None:
        try:
            data = self.path.read_bytes()
        except OSError:  # none yet (or unreadable: the trial starts over)
            return
        header, results, good = _read_checkpoint(data)
        if header is None or header.get("plan") != self.fingerprint:
            return  # another plan: start over
        self.loaded = {i: r for i, r in results.items() if 0 <= i < self.n_tasks}
        self._good_bytes = good

    def save(self, index: int, result: SearchResult) -> None:
        """Append task ``index``'s result (not one stopped by the clock).

        A checkpoint only saves work for a resume: when it cannot be written (no
        space left, an I/O error), saving stops for this trial and the trial goes
        on; the row's own write then reports a disk that is still full.
        """
        if result.status is Status.TIME_LIMIT or self.failed is not None:
            return
        try:
            self._append(index, result)
        except OSError as exc:
            self.failed = exc
            try:
                self.close()
            except OSError:
                self._file = None

    def _append(self, index: int, result: SearchResult) -> None:
        if self._file is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if self._good_bytes:
                fh: BinaryIO = open(self.path, "r+b")
                fh.truncate(self._good_bytes)
                fh.seek(self._good_bytes)
            else:
                fh = open(self.path, "wb")
                fh.write(json.dumps({"plan": self.fingerprint,
                                     "tasks": self.n_tasks}).encode() + b"\n")
            self._file = fh
        self._file.write(_encode(index, result).encode())
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


class Checkpoints:
    """The checkpoint folder of a results folder (``split`` in its work folder).

    Args:
        folder: the local results folder; or, with ``directory=True``, the
            checkpoint folder itself (a run into a remote URI keeps its
            checkpoints in a local staging folder).
    """

    def __init__(self, folder: str | Path, *, directory: bool = False):
        self.folder = Path(folder) if directory else work_dir(Path(folder)) / CHECKPOINT_DIR

    def path(self, trial_id: str) -> Path:
        return self.folder / f"{trial_id}.jsonl"

    def open(self, trial_id: str, plan: SplitPlan, max_nodes: int | None) -> TrialCheckpoint:
        return TrialCheckpoint(self.path(trial_id), plan, max_nodes)

    def discard(self, trial_id: str) -> None:
        """Delete a trial's checkpoint (its row is on disk)."""
        try:
            self.path(trial_id).unlink()
        except FileNotFoundError:
            pass
        try:
            self.folder.rmdir()  # only when empty
        except OSError:
            pass

    def partial(self) -> list[tuple[str, int, int]]:
        """``(trial_id, subtrees saved, subtrees planned)`` of each checkpoint here."""
        found = []
        for f in sorted(self.folder.glob("*.jsonl")) if self.folder.is_dir() else []:
            header, results, _ = _read_checkpoint(f.read_bytes())
            if isinstance(header, dict) and isinstance(header.get("tasks"), int):
                found.append((f.stem, len(results), header["tasks"]))
        return found

    def prune(self, keep: Container[str] | None = None) -> int:
        """Delete every checkpoint whose trial is not in ``keep`` (None: all); returns how many."""
        if not self.folder.is_dir():
            return 0
        gone = 0
        for f in self.folder.glob("*.jsonl"):
            if keep is None or f.stem not in keep:
                f.unlink()
                gone += 1
        try:
            self.folder.rmdir()
        except OSError:
            pass
        return gone
