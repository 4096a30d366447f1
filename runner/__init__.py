"""btlab's runner: config -> trials -> backend (Ray or serial) -> Parquet -> tables.

Modules: :mod:`runner.spec` (what a problem is to the runner) and
:mod:`runner.problems` (the problem registry, one package per problem),
:mod:`runner.config` (YAML, validation; :mod:`runner.yaml_source` for positions
and messages; :mod:`runner.overrides` for ``key=value`` on the command line),
:mod:`runner.sweep` (:func:`~runner.sweep.expand`: config ->
trials), :mod:`runner.trial`, :mod:`runner.plugins` (``"module:attr"``
plug-ins), :mod:`runner.backends` (Ray and serial; :mod:`runner.ray_auth`, Ray's
token authentication), :mod:`runner.execute` (one
trial), :mod:`runner.split_runner` / :mod:`runner.split_state` /
:mod:`runner.checkpoints` (split trials), :mod:`runner.store` (crash-safe
Parquet writes; :mod:`runner.schema` the row layout, :mod:`runner.store_read`
reading parts of a folder or URI), :mod:`runner.summary` and
:mod:`runner.tables` (headline tables), :mod:`runner.censoring` (the ``censored``
rule), :mod:`runner.config_order` (rows in config order for every table),
:mod:`runner.analysis` (pandas: load, summary, start_grid; with
:mod:`runner.frames` the column roles and repeat folding and
:mod:`runner.pairing` compare), :mod:`runner.plots` (matplotlib figures; with
:mod:`runner.board_plots` tours and placements and :mod:`runner.figures`
saving), :mod:`runner.report` and :mod:`runner.html` (the HTML report),
:mod:`runner.cli` (the ``btlab`` command; :mod:`runner.run_command` ``btlab run``;
:mod:`runner.progress` for progress lines in logs), :mod:`runner.provenance`
(version, git commit), :mod:`runner.errors`.
"""
