"""How trials are batched into Ray tasks, and when a running task counts as hung.

A Ray task costs about as much overhead as 10 ms of work, so trials travel in
batches sized to take about :data:`TASK_SECONDS` each, from the wall time of
the trials already back (:func:`adaptive_batch_size`); a batch running well
past its trials' time budgets is taken for hung (:func:`hang_limit`).
"""

from __future__ import annotations

import math

#: The most trials a Ray task may be given (``--batch-size``): a task holds its trials
#: and their rows in memory, and more than a million of them is no batch.
MAX_BATCH_SIZE = 1_000_000
#: The most worker processes of the embedded local Ray (``--workers``).
MAX_WORKERS = 4096
#: What :data:`MAX_BATCH_SIZE` and :data:`MAX_WORKERS` bound, for messages.
OPTION_MAXIMA = {"workers": MAX_WORKERS, "batch_size": MAX_BATCH_SIZE}


def batch_size_for(n_trials: int, workers: int) -> int:
    """Trials per Ray task: about 8 tasks per worker, at most 64 trials a task.

    A Ray task costs about a millisecond of overhead, as much as a short trial
    (an 8 x 8 Warnsdorff tour is under a millisecond), so short trials must
    travel in batches; several tasks per worker keep the load balanced when
    trial times differ by orders of magnitude (plain backtracking).
    """
    return max(1, min(64, math.ceil(n_trials / (8 * max(1, workers)))))


#: Seconds of work a Ray task aims at once the trials' times are known.
TASK_SECONDS = 0.1
#: What a trial costs beyond its solve call (running it, its row, the transport), seconds.
TRIAL_OVERHEAD_SECONDS = 50e-6


def adaptive_batch_size(per_trial_seconds: float, left: int, workers: int) -> int:
    """Trials per task once trial times are known: about :data:`TASK_SECONDS` of work.

    Short trials (tens of microseconds with the compiled engine) then travel by
    the thousand, so that the per-task cost of Ray is paid rarely; long ones
    (seconds) one by one. A task never takes more than half a worker's fair
    share of the ``left`` trials, so the last tasks still spread over the workers.
    """
    cost = per_trial_seconds + TRIAL_OVERHEAD_SECONDS
    share = max(1, math.ceil(left / (2 * max(1, workers))))
    return max(1, min(share, int(TASK_SECONDS / cost)))


#: A trial with a time budget of ``s`` seconds that has not returned ``HANG_FACTOR * s +
#: HANG_GRACE_SECONDS`` after it started is taken for hung and its worker is killed.
HANG_FACTOR = 1.1
HANG_GRACE_SECONDS = 5.0
#: A task sends the rows it has finished at most this often (seconds); see RayBackend.
REPORT_EVERY = 0.2


def hang_limit(budget_seconds: float | None) -> float | None:
    """Seconds after which a trial with this time budget is killed (None: never)."""
    if budget_seconds is None:
        return None
    return budget_seconds * HANG_FACTOR + HANG_GRACE_SECONDS
