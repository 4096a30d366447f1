"""Config: YAML text to a validated :class:`~btlab.config.model.SweepConfig`.

Modules:

- ``budgets``: Which trials may carry a backtrack budget (``budget: {backtracks: B}``), restarts
- ``messages``: Validation errors as messages: what was expected, what was found, how to fix it.
- ``model``: Sweep configs: YAML -> validated :class:`SweepConfig` (trials:
  :func:`btlab.sweep.expand.expand`).
- ``overrides``: Command-line overrides of a config, the way Hydra users write them.
- ``restarts``: Restarts: run a randomized trial as a sequence of attempts under a cut-off
  policy.
- ``seeds``: The seed as a sweep key: ``seed`` in ``matrix``, ``fixed``, ``include`` and
  ``exclude``.
- ``sweep_config``: What a validated config is: :class:`SweepModel` (keys, bounds, budget) and
  :class:`SweepConfig` (the model, its problem, key positions, errors at a key).
- ``trial_keys``: Trial keys: ``budget``, ``restarts`` and ``probes`` where parameters are
  written.
- ``yaml_positions``: Config text -> data with the position of every key and value.
"""
