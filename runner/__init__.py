"""btlab's runner: config -> trials -> backend (Ray or serial) -> Parquet -> tables.

Modules: :mod:`runner.config` (YAML, validation, :func:`~runner.config.expand`),
:mod:`runner.backends` (Ray and serial), :mod:`runner.execute` (one trial),
:mod:`runner.store` (crash-safe Parquet), :mod:`runner.summary` (headline
tables), :mod:`runner.analysis` (pandas: load, summary, start_grid, compare),
:mod:`runner.plots` (matplotlib figures), :mod:`runner.report` (the HTML
report), :mod:`runner.cli` (the ``btlab`` command), :mod:`runner.errors`.
"""
