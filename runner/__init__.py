"""btlab's runner: config -> trials -> backend (Ray or serial) -> Parquet -> tables.

Modules: :mod:`btlab.problems.spec` (what a problem is to the runner) and
:mod:`btlab.problems` (the problem registry, one package per problem),
:mod:`btlab.config.model` (YAML, validation; :mod:`btlab.config.yaml_positions` for positions
and messages; :mod:`btlab.config.overrides` for ``key=value`` on the command line),
:mod:`btlab.sweep.expand` (:func:`~btlab.sweep.expand.expand`: config ->
trials), :mod:`btlab.sweep.trial`, :mod:`btlab.problems.plugins` (``"module:attr"``
plug-ins), :mod:`btlab.execution.backends` (Ray and serial; :mod:`btlab.execution.ray_auth`, Ray's
token authentication), :mod:`btlab.execution.execute` (one
trial), :mod:`btlab.execution.split_run` / :mod:`btlab.execution.split_state` /
:mod:`btlab.store.checkpoints` (split trials), :mod:`btlab.store.folder` (crash-safe
Parquet writes; :mod:`btlab.store.schema` the row layout, :mod:`btlab.store.read`
reading parts of a folder or URI), :mod:`btlab.views.headline` and
:mod:`btlab.views.tables` (headline tables), :mod:`btlab.problems.censoring` (the ``censored``
rule), :mod:`btlab.analysis.config_order` (rows in config order for every table),
:mod:`btlab.analysis` (pandas: load, summary, start_grid; with
:mod:`btlab.analysis.columns` the column roles and repeat folding and
:mod:`btlab.analysis.pairing` compare), :mod:`btlab.views.plots` (matplotlib figures; with
:mod:`btlab.views.plots.boards` tours and placements and :mod:`btlab.views.plots.save`
saving), :mod:`btlab.views.report.page` and :mod:`btlab.views.report.html` (the HTML report),
:mod:`btlab.cli.main` (the ``btlab`` command; :mod:`btlab.api.run` ``btlab run``;
:mod:`btlab.views.progress` for progress lines in logs), :mod:`btlab.store.provenance`
(version, git commit), :mod:`btlab.errors`.
"""
