"""Execution: a trial to its row, here or on Ray (backends, one trial, interrupts, split trials).

Modules:

- ``backends``: Backends run trials and yield their rows as they finish.
- ``batching``: How trials are batched into Ray tasks, and when a running task counts as hung.
- ``execute``: Run one trial, wherever it runs: solve, time, verify, and make its row.
- ``kernels``: The driver compiles or loads a sweep's compiled kernels before its first trial.
- ``interrupts``: Signals are never trial errors: Ctrl-C and SIGTERM end the run, whatever a
  trial makes of them.
- ``ray_auth``: Ray's token authentication, as btlab meets it (Ray 2.52 and later; a no-op
  before).
- ``ray_backend``: The Ray backend: batches of trials as Ray tasks, rows streamed back as they
  finish.
- ``result_check``: every trial's result held to the metrics contract (types, ranges,
  invariants) before its row is made.
- ``split_run``: Split trials: one search run as many ordered subtree tasks, combined into one
  row.
- ``split_state``: A split trial in progress: its plan, subtree results, budgets, waste and
  checkpoint.
"""
