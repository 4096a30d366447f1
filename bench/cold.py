"""Cold start: one compiled trial with an empty kernel cache against the same trial warm.

``python -m bench.cold [--quick]`` (and the "cold start" rows of ``python -m bench``)
runs, for each kind of compiled trial (:data:`TRIALS`), a whole ``btlab run
--backend serial`` of that one trial, as a new user would: each cold run with a
fresh, empty ``BTLAB_CACHE_DIR`` (numba compiles the trial's kernels), each warm
run with the cache the cold runs left (numba loads them), alternating cold and
warm. The figure is the median of the rounds on each side and their ratio;
the target is at most 2x (the trial compiles its own loop alone,
:mod:`btlab.experiments.compiled.knights.loops`). How the cold wall divides:
the seconds ``btlab run`` reports for "compiling kernels" (median of the cold
runs; a warm run loads the same kernels in a fraction of a second), the rest
being Python's start, imports, the run and its tables, as in a warm run.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: The target: a cold run at most this many times its warm wall time.
TARGET = 2.0

_KNIGHTS = ("problem: knights_tour\nfixed: {{board: [8, 8], start: [0, 0], strategy: iterative, "
            "engine: compiled, mode: {mode}, heuristic: {heuristic}, tie_break: {tie}}}\n"
            "budget: {{nodes: 1000}}\n")

#: ``(label, config text)`` of each one-trial sweep timed.
TRIALS = [
    ("8x8 none, move_order, first", _KNIGHTS.format(mode="first", heuristic="none",
                                                     tie="move_order")),
    ("8x8 none, random, first", _KNIGHTS.format(mode="first", heuristic="none", tie="random")),
    *[(f"8x8 warnsdorff, {tie}, first", _KNIGHTS.format(mode="first", heuristic="warnsdorff",
                                                        tie=tie))
      for tie in ("move_order", "random", "pohl", "roth")],
    ("N-Queens bitmask n=8, count", "problem: n_queens\nfixed: {n: 8, strategy: bitmask, "
                                    "engine: compiled, mode: count}\n"),
    ("8x8 estimate (Knuth probes)", "problem: knights_tour\nfixed: {board: [8, 8], "
                                    "start: [0, 0], strategy: iterative, engine: compiled, "
                                    "mode: estimate, "
                                    "probes: 100}\n"),
]


@dataclass
class ColdStart:
    """Medians of the cold and warm wall times of one trial's ``btlab run``."""

    label: str
    cold_s: float
    warm_s: float
    rounds: int
    #: seconds the cold runs reported compiling kernels (median)
    compile_s: float = 0.0

    @property
    def ratio(self) -> float:
        return self.cold_s / self.warm_s


#: What ``btlab run`` prints when it compiled: the seconds it took.
_COMPILED = re.compile(r"compiling kernels \(first run on this machine; the result is cached\): "
                       r"([0-9.]+) s")


def _run(config: Path, out: Path, cache: Path) -> tuple[float, float]:
    """One ``btlab run``: its wall seconds, and the seconds it reported compiling (0 if none)."""
    env = {**os.environ, "BTLAB_CACHE_DIR": str(cache)}
    env.pop("NUMBA_CACHE_DIR", None)
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "btlab", "run", str(config), "--backend",
                           "serial", "--out", str(out), "--fresh", "--yes", "--quiet"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    seconds = time.perf_counter() - t0
    if done.returncode != 0:
        raise RuntimeError(f"btlab run {config.name} failed:\n{done.stderr[-2000:]}")
    said = _COMPILED.search(done.stdout + done.stderr)
    return seconds, float(said.group(1)) if said else 0.0


def measure(label: str, text: str, rounds: int = 3) -> ColdStart:
    """Alternate ``rounds`` cold runs (each with a new empty cache) and warm runs."""
    with tempfile.TemporaryDirectory(prefix="btlab-cold-") as tmp:
        folder = Path(tmp)
        config = folder / "one.yaml"
        config.write_text(f"name: cold\n{text}", encoding="utf-8")
        cold, warm, compiling = [], [], []
        for i in range(rounds):
            cache = folder / f"cache{i}"
            seconds, compiled = _run(config, folder / "out", cache)
            cold.append(seconds)
            compiling.append(compiled)
            warm.append(_run(config, folder / "out", cache)[0])
        return ColdStart(label, statistics.median(cold), statistics.median(warm), rounds,
                         statistics.median(compiling))


def measure_all(quick: bool) -> list[ColdStart]:
    trials = TRIALS[:1] + TRIALS[2:3] + TRIALS[-2:] if quick else TRIALS
    return [measure(label, text, 1 if quick else 3) for label, text in trials]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.cold", description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="4 trials, 1 round each")
    args = p.parse_args(argv)
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    for m in measure_all(args.quick):
        print(f"{m.label:34} cold {m.cold_s:5.2f} s  warm {m.warm_s:5.2f} s  "
              f"{m.ratio:.2f}x  (median of {m.rounds}; compiling {m.compile_s:.1f} s of the "
              f"cold run)")
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
