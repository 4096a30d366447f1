"""btlab's benchmarks: ``python -m bench [--quick]`` prints one table of figures measured
side by side in one run, and asserts nothing about time.

* Kernels: time of the compiled kernels (knight's tour with heuristic ``none``
  and ``warnsdorff``, boards of at most 64 squares and one larger, N-Queens on
  bit masks) against their C twins (:mod:`bench.twins`: ``bench/dfs.c``, the
  fastest straightforward C for the same searches and counters, compiled with
  ``gcc -O2 -march=native`` into a temporary folder at bench time; counters
  checked equal before any time is compared), and nodes per second against the
  pure-Python strategies.
* First mode (:mod:`bench.first`): the first-mode plain rows (8 x 8 to the tour,
  9 x 9 under a cap, target at most 1.0x their first-mode twins) also time the
  twin against dfs.c's count-mode loop and the kernel against its own count-mode
  loop on the same search.
* Cold start (:mod:`bench.cold`, ``--only cold``): a whole ``btlab run --backend
  serial`` of one compiled trial of each kind with an empty kernel cache against a
  warm one, median of 3, target at most 2x.
* Variants (:mod:`bench.variants`, ``--only variants``): the other orders, the
  ``unique`` count and the split subtree kernels against their own move-order
  speed on the same tree, in nanoseconds per placement, target at most 1.2x:
  knight's tour tie-breaks ``random``, ``pohl``, ``roth`` under ``warnsdorff``,
  ``none`` with ``random``, ``static_degree`` (8 x 8 and 9 x 9, count mode, one
  node cap); N-Queens ``unique`` against the plain count; every subtree task of a
  split count run in turn against the unsplit kernel (N-Queens n = 14, the whole
  5 x 6 knight's tour count tree). Counters checked first (equal placements;
  equal counters for ``unique`` but the solutions, and for the split).
* Runner: throughput on short trials (8 x 8 Warnsdorff, all 64 starts, repeats)
  through the Ray backend, a plain ``multiprocessing.Pool`` with chunking calling
  the same :func:`btlab.execution.execute.run_batch`, and the serial backend; 1 Ray worker
  against 2 on CPU-bound trials; peak driver memory of ``btlab run`` at 10,000 and
  100,000 trials, serial and Ray, 8 x 8 tours and N-Queens n = 4..6 (:mod:`bench.memory`,
  also `python -m bench.memory`).
* Split (:mod:`bench.split`): one trial split into ordered subtree tasks, 1
  and 2 workers against the unsplit kernel: speed-up on an N-Queens count,
  wasted placements on a first-mode knight's tour.

Each Ray measurement runs in a fresh child process (:mod:`bench._child`) with an
embedded Ray of its own, so that worker counts and peak memory are those of a
real run.
"""
