"""The library under the CLI: ``btlab.run`` and ``btlab.validate``, one code path with ``btlab
run``.

Modules:

- ``run``: ``btlab.run``, ``btlab.validate`` and the sweep they share with ``btlab run``:
  check the whole config, stream its trials to a backend, write their rows.
"""
