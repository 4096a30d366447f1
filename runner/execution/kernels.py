"""The driver compiles or loads a sweep's compiled kernels before its first trial.

A trial's problem names the kernels it runs (:attr:`btlab.problems.spec.ProblemSpec.kernels`:
the one knight's-tour loop of its search, the N-Queens kernel, the probes of an
estimate). :func:`load_kernels` compiles them, or loads them from numba's disk
cache (:mod:`btlab.experiments.compiled._cache`), in the driver before the first
trial starts, so that the progress bar's clock, rate and ETA start with the trials
and local Ray workers find them in the cache; only when something is compiled
(a first run on this machine, or after an upgrade) does it say so, with the time
it took. Each worker still loads the kernels of its own trials before their
clocks start (``compile_ns``); on a cluster, where a node has no cache yet, its
compile time is there.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Iterable

from btlab.experiments.loading import interrupts_held

#: What the driver prints when it compiled kernels (with the seconds it took).
COMPILING = "compiling kernels (first run on this machine; the result is cached)"


def load_kernels(kinds: Iterable[str], tell: Callable[..., Any]) -> float:
    """Compile or load the kernels ``kinds`` (:func:`btlab.experiments.compiled.warm_up`
    names) in this process; ``tell`` the time it took when anything was compiled.

    Returns:
        Seconds spent (0.0 for no kinds).
    """
    kinds = sorted(set(kinds))
    if not kinds:
        return 0.0
    t0 = time.perf_counter()
    with interrupts_held():  # whole, even if cancelled (btlab.experiments.loading)
        # heavy: numba loads on import
        from btlab.experiments.compiled import compiled_count, warm_up
    before = compiled_count()
    for kind in kinds:
        warm_up(kind)
    seconds = time.perf_counter() - t0
    if compiled_count() > before:
        tell(f"{COMPILING}: {seconds:.1f} s ({len(kinds)} kernel(s): {', '.join(kinds)})",
             markup=False)
    return seconds
